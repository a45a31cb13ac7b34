"""``make-static``: every shape static before the arena is planned, or an error naming what is not.

``xrelay.build``'s first decision on a module's contents, as a pass: a module with ``dyn.*``
ops runs ``dynamic-to-static`` (their shape operands computed from bound params become
constants, and the ops their static forms); a ``dyn.*`` op left is an error naming the op, its
result and the operands known only at run time (the arena needs every size before the first
run). A module without ``dyn.*`` ops is left as it is (``dynamic-to-static`` would fold its
constants too). Not a Relay pass: Relay's ``build`` leaves dynamic shapes to the VM.

```mlir
%s = relay.constant dense<[3, 2]> : tensor<2xi64>             %y = relay.reshape %x {newshape = [3, 2]}
%y = dyn.reshape %x, %s : (..) -> tensor<?x?xf32>     ==>          : (tensor<2x3xf32>) -> tensor<3x2xf32>

%y = dyn.reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>   // %s an argument
// error: make-static: dyn.reshape (result %y) has 'newshape' (argument #1) known only at run time; ...
```
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, SSAValue
from xdsl.passes import ModulePass

from xrelay.dialects.dyn import DynOp
from xrelay.dialects.relay import ConstantOp, RelayTypeError
from xrelay.transforms.dynamic_to_static import dynamic_to_static

__all__ = ["MakeStaticError", "MakeStaticPass", "make_static"]


class MakeStaticError(RelayTypeError):
    """A ``dyn.*`` op whose shape operands are known only at run time."""


def make_static(module: ModuleOp) -> None:
    """Make the module's shapes static (see the module docstring)."""
    if not any(isinstance(op, DynOp) for op in module.walk()):
        return
    dynamic_to_static(module)
    for op in module.walk():
        if isinstance(op, DynOp):
            names = [name for name, _ in type(op).get_irdl_definition().operands]
            unknown = [
                f"'{names[i]}' ({_value_name(op.operands[i])})"
                for i in op.VALUE_OPERANDS
                if not isinstance(op.operands[i].owner, ConstantOp)
            ]
            raise MakeStaticError(
                f"make-static: {op.name} (result {_value_name(op.results[0])}) has "
                f"{', '.join(unknown)} known only at run time; the arena needs static shapes: bind "
                "the values it is computed from (params=...) so dynamic-to-static can make it "
                "static, or run the module with the interpreter"
            )


def _value_name(v: SSAValue) -> str:
    if v.name_hint:
        return f"%{v.name_hint}"
    if isinstance(v, BlockArgument):
        return f"argument #{v.index}"
    return f"a value of type {v.type}"


@dataclass(frozen=True)
class MakeStaticPass(ModulePass):
    """Make every shape static, or refuse the ``dyn.*`` op that cannot be (see the module)."""

    name = "make-static"
    relay_name: ClassVar[str] = "MakeStatic"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        make_static(op)
