"""``dynamic-to-static``: dyn ops whose shape operands are constants become static ops
(Relay's DynamicToStatic).

Relay's pass folds constants and re-infers types around every dyn call it visits, then replaces
the call by the static op when the operands the static op takes as attributes are constants
(``dyn.reshape(x, constant [2, 3])`` is ``reshape(x, newshape=[2, 3])``). Here the same
happens to a fixed point over the module: ``fold-constant`` (so ``shape_of`` of a static tensor
and arithmetic on shapes become constants), ``infer-type`` (so results of replaced ops get
their static types, and with them ``shape_of`` downstream), then every dyn op whose value
operands (``DynOp.VALUE_OPERANDS``) are ``relay.constant`` is replaced by its static op
(``DynOp.static_attrs`` gives the attributes, the fact the kernels use too). A dyn op whose
values are still unknown stays as it is::

    %s = relay.constant dense<[3, 2]> : tensor<2xi64>              %y = relay.reshape %x {newshape = [3, 2]}
    %y = dyn.reshape %x, %s : (..) -> tensor<?x?xf32>      ==>          : (tensor<2x3xf32>) -> tensor<3x2xf32>

Differences from Relay, both deliberate: ``dyn.reshape`` keeps its ``allowzero`` (Relay's pass
drops it), and ``dyn.nn.pad`` needs only a constant ``pad_width`` (the static ``nn.pad`` takes
its pad value as an operand here). A constant the static op rejects (a reshape to the wrong
number of elements) is an error naming the op, where Relay's pass fails a check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from xrelay.dialects.dyn import DynOp
from xrelay.dialects.relay import RELAY_OPS, ConstantOp, RelayTypeError
from xrelay.transforms.fold_constant import fold_constants
from xrelay.transforms.infer_type import infer_types


class DynamicToStaticError(RelayTypeError):
    """A dyn op's constant shape operands are invalid for its static op."""


def to_static(op: DynOp) -> bool:
    """Replace ``op`` by its static op if its value operands are constants."""
    owners = [op.operands[i].owner for i in op.VALUE_OPERANDS]
    if not all(isinstance(o, ConstantOp) for o in owners):
        return False
    values = [o.numpy() for o in owners]  # type: ignore[union-attr]
    static_cls = RELAY_OPS[op.STATIC]
    try:
        attrs = op.static_attrs(op.attrs, values)
        new = static_cls.make(op.static_operands(list(op.operands)), **attrs)
    except (ValueError, RelayTypeError) as e:
        raise DynamicToStaticError(f"dynamic-to-static: {op.name}: {e}") from None
    for old, res in zip(op.results, new.results, strict=True):
        res.name_hint = old.name_hint
    Rewriter.replace_op(op, new)
    for o in owners:
        if o.parent is not None and not o.result.uses:  # type: ignore[union-attr]
            Rewriter.erase_op(o)  # type: ignore[arg-type]
    return True


def dynamic_to_static(module: ModuleOp) -> int:
    """Make every dyn op with constant shape operands static; return how many were replaced."""
    replaced = 0
    while True:
        fold_constants(module)
        infer_types(module)
        done = [to_static(op) for op in list(module.walk()) if isinstance(op, DynOp) and op.parent]
        if not any(done):
            return replaced
        replaced += sum(done)


@dataclass(frozen=True)
class DynamicToStaticPass(ModulePass):
    """Turn dyn ops with constant shape operands into static ops (after folding constants)."""

    name = "dynamic-to-static"
    relay_name: ClassVar[str] = "DynamicToStatic"
    opt_level: ClassVar[int] = 2
    required: ClassVar[tuple[str, ...]] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        dynamic_to_static(op)
