"""``defuse-ops``: Relay's DefuseOps, the inverse of fuse-ops.

Every ``func.call`` of a primitive function (``relay.primitive`` non-zero) or of a function
literal (a private function: Relay's DefuseOps inlines every call of a literal; one that
calls itself, a recursive let-bound function, stays: Relay calls it through its variable) in a
non-primitive function is replaced by a copy of the callee's body, its parameters bound to the
call's arguments; then every such function that nothing calls any more is deleted::

    func.func private @fused_add_nn_relu(%p0: tensor<4xf32>, %p1: tensor<4xf32>) -> tensor<4xf32>
        attributes {relay.primitive = 1 : i64} {
      %a = relay.add %p0, %p1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %r = relay.nn.relu %a : (tensor<4xf32>) -> tensor<4xf32>
      func.return %r : tensor<4xf32>
    }
    func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
      %r = func.call @fused_add_nn_relu(%x, %y) : (...) -> tensor<4xf32>
      func.return %r : tensor<4xf32>
    }

becomes::

    func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
      %a = relay.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %r = relay.nn.relu %a : (tensor<4xf32>) -> tensor<4xf32>
      func.return %r : tensor<4xf32>
    }

So ``defuse-ops(fuse-ops(m))`` is ``m`` as a dataflow graph: the same ops with the same
attributes, operands and types (fuse-ops keeps the ops' SSA name hints, so the text reads the
same too). The op order is the same whenever each fused group was contiguous in ``m``; when
groups interleave, the inlined copy of a group sits where its call was. Ops that fuse-ops
deleted because the result did not depend on them stay deleted.

A call of a primitive function declared without a body is an error naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from xrelay.error import TVMError
from xrelay.transforms.fuse_ops import is_primitive

__all__ = ["DefuseOpsError", "DefuseOpsPass", "defuse_ops"]


class DefuseOpsError(DiagnosticException, TVMError):
    """A primitive call cannot be inlined; the message names it."""


def defuse_ops(module: ModuleOp) -> int:
    """Inline every call of a primitive function or of a function literal (a private
    function) in ``module``'s non-primitive functions, delete those left uncalled; return the
    number of calls inlined."""
    funcs = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    primitives = {name: fn for name, fn in funcs.items() if is_primitive(fn)}
    # Relay's DefuseOps inlines every call of a function *literal*, primitive or not; a
    # literal is a private function here
    literals = {
        name: fn
        for name, fn in funcs.items()
        if name not in primitives and fn.sym_visibility is not None and fn.sym_visibility.data == "private"
        and not fn.is_declaration
        # a recursive let-bound literal is called through its variable in Relay, not as a
        # literal: it stays (inlining it would never end)
        and not any(isinstance(op, func.CallOp) and op.callee.root_reference.data == name for op in fn.walk())
    }  # fmt: skip
    inlined = 0
    changed = True
    while changed:  # a literal's body may hold further calls to inline
        changed = False
        for fn in funcs.values():
            if fn.sym_name.data in primitives or fn.is_declaration or fn.parent is None:
                continue
            for call in [op for op in fn.walk() if isinstance(op, func.CallOp)]:
                name = call.callee.root_reference.data
                callee = primitives.get(name) or (literals.get(name) if name != fn.sym_name.data else None)
                if callee is None:
                    continue
                _inline(call, callee)
                inlined += 1
                changed = True
    called = {
        op.callee.root_reference.data for op in module.walk() if isinstance(op, func.CallOp)
    }
    for name, fn in {**primitives, **literals}.items():
        if name not in called:
            module.body.block.erase_op(fn)
    return inlined


def _inline(call: func.CallOp, callee: func.FuncOp) -> None:
    if callee.is_declaration:
        raise DefuseOpsError(
            f"defuse-ops: cannot inline the call of @{callee.sym_name.data}: it has no body"
        )
    body = callee.body.block
    if len(body.args) != len(call.arguments):
        raise DefuseOpsError(
            f"defuse-ops: the call of @{callee.sym_name.data} passes {len(call.arguments)} "
            f"argument(s) but the function takes {len(body.args)}"
        )
    mapping: dict[SSAValue, SSAValue] = dict(zip(body.args, call.arguments, strict=True))
    block = call.parent_block()
    assert block is not None
    results: list[SSAValue] = []
    for op in body.ops:
        if isinstance(op, func.ReturnOp):
            results = [mapping.get(v, v) for v in op.operands]
            break
        new_op = op.clone(value_mapper=mapping)
        block.insert_op_before(new_op, call)
    if len(results) != len(call.results):
        raise DefuseOpsError(
            f"defuse-ops: @{callee.sym_name.data} returns {len(results)} value(s) but the call "
            f"has {len(call.results)} result(s)"
        )
    for old, new in zip(call.results, results, strict=True):
        if old.name_hint is not None and new.name_hint is None:
            new.name_hint = old.name_hint
        old.replace_all_uses_with(new)
    block.erase_op(call)


@dataclass(frozen=True)
class DefuseOpsPass(ModulePass):
    """Inline primitive functions back into their callers (Relay's ``DefuseOps``)."""

    name = "defuse-ops"
    relay_name: ClassVar[str] = "DefuseOps"
    opt_level: ClassVar[int] = 3
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        defuse_ops(op)
