"""``annotate-used-memory``: bytes live across each primitive call (Relay's AnnotateUsedMemory).

For every ``func.call`` in ``@main`` to a primitive function (``relay.primitive = 1``), the pass
sums the byte sizes of every tensor live across that call: its operands, its results, and every
value defined earlier (main's parameters included) that is still used later. The sum is
appended to the callee's ``relay.used_memory`` list, one entry per call site in program order,
so a function called twice gets two values. ``@main`` gets ``relay.io_used_memory``: the bytes
of all its parameters plus those of its results. Sizes are Relay's ``prod(shape) *
ceil(bits * lanes / 8)`` (``byte_size``).

Relay requires ``ToANormalForm`` before this pass so that every intermediate is a let-bound
variable whose liveness can be computed. On SSA every value already is such a variable, so
that pass has no meaning here and is not required. As in Relay's ANF, constants used in
``@main`` are values too and count while live; a call result no one uses still counts at its
own call (it is written there). The pass recomputes the lists from scratch each time it runs.

After ``plan-devices``, ``relay.on_device`` in ``@main`` is transparent, as in Relay (which
visits device-aware and ignores the annotations): its result is the tensor it annotates, so it
neither adds bytes nor ends its operand's life. As in Relay, tensors on every device are
summed into one figure (use the memory report of ``plan-memory`` for bytes per memory space).

A composite function called inside a primitive function is part of that function and gets no
annotation of its own. Calls in ``@main`` to functions that are not primitive are rejected
(Relay: "Expect top-level functions to be primitive"), and so is any dynamic shape.

```mlir
func.func private @f(%x: tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi8> attributes {relay.primitive = 1 : i64} {...}
func.func @main(%in: tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi8> {
  %0 = func.call @f(%in) : (tensor<1x2x2x4xi8>) -> tensor<1x2x2x4xi8>
  func.return %0 : tensor<1x2x2x4xi8>
}
// after: @f gets {relay.used_memory = [32 : i64]}, @main {relay.io_used_memory = 32 : i64}
```
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, TensorType, i64
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from xrelay.dialects.relay import FUNC_ATTRS, RelayOp, byte_size
from xrelay.error import TVMError


class AnnotateUsedMemoryError(DiagnosticException, TVMError):
    """The module cannot be annotated; the message names the value or call at fault."""


def _value_name(v: SSAValue) -> str:
    if v.name_hint:
        return f"%{v.name_hint}"
    if isinstance(v, BlockArgument):
        return f"argument {v.index}"
    assert isinstance(v, OpResult)
    return f"result {v.index} of {v.op.name}"


def _size(v: SSAValue) -> int:
    t = v.type
    if not isinstance(t, TensorType):
        return 0
    if not t.has_static_shape():
        raise AnnotateUsedMemoryError(
            f"AnnotateUsedMemory does not support dynamic shapes: {_value_name(v)} has type {t}"
        )
    return byte_size(t)


def _is_on_device(op: Operation) -> bool:
    return isinstance(op, RelayOp) and op.RELAY_NAME == "on_device"


def is_primitive(fn: func.FuncOp) -> bool:
    """Whether ``fn`` carries ``relay.primitive = 1``."""
    attr = fn.attributes.get(FUNC_ATTRS["Primitive"])
    return isinstance(attr, IntegerAttr) and attr.value.data == 1


def main_function(module: ModuleOp, entry: str = "main") -> func.FuncOp:
    """The entry function of ``module``; a ``DiagnosticException`` if there is none."""
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == entry:
            if not op.body.blocks:
                raise AnnotateUsedMemoryError(f"@{entry} is only declared (no body)")
            if len(op.body.blocks) != 1:
                raise AnnotateUsedMemoryError(f"@{entry} must have a single block")
            return op
    raise AnnotateUsedMemoryError(f"the module has no @{entry} function")


def used_memory(module: ModuleOp, entry: str = "main") -> tuple[dict[str, list[int]], int]:
    """Compute the annotations without writing them.

    Returns ``({callee name: [bytes per call site in program order]}, io_used_memory)``.
    Linear in the size of ``@entry``: one pass for last uses, one prefix sum over positions.
    """
    main = main_function(module, entry)
    funcs = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    block = main.body.block
    ops = list(block.ops)
    position = {op: i for i, op in enumerate(ops)}
    end = len(ops)

    # delta[i]: change of live bytes at position i (a value is live from its definition to its
    # last use, inclusive; parameters from the start, returned values to the end).
    delta = [0] * (end + 2)

    def uses(v: SSAValue):
        # on_device is transparent (Relay's IgnoreOnDevice): its result is the same tensor
        for use in v.uses:
            if _is_on_device(use.operation):
                yield from uses(use.operation.results[0])
            else:
                yield use

    def add(v: SSAValue, start: int) -> None:
        last = -1
        for use in uses(v):
            user = block.find_ancestor_op_in_block(use.operation)
            if user is None:
                continue
            returned = isinstance(user, func.ReturnOp) and user is block.last_op
            last = max(last, end if returned else position[user])
        if isinstance(v, BlockArgument) and last < 0:
            return  # an unused parameter is never live
        last = max(last, start)
        size = _size(v)
        delta[start] += size
        delta[last + 1] -= size

    for arg in block.args:
        add(arg, 0)
    for i, op in enumerate(ops):
        if _is_on_device(op):
            continue
        for r in op.results:
            add(r, i)

    per_callee: dict[str, list[int]] = {}
    live = 0
    for i, op in enumerate(ops):
        live += delta[i]
        if not isinstance(op, func.CallOp):
            continue
        name = op.callee.root_reference.data
        callee = funcs.get(name)
        if callee is None:
            raise AnnotateUsedMemoryError(
                f"@{entry} calls @{name}, which the module does not define"
            )
        if not is_primitive(callee):
            raise AnnotateUsedMemoryError(
                f"@{entry} calls @{name}, which is not primitive: expect top-level functions "
                "to be primitive (run fuse-ops first)"
            )
        per_callee.setdefault(name, []).append(live)

    io = sum(_size(a) for a in block.args)
    ret = block.last_op
    if isinstance(ret, func.ReturnOp):
        io += sum(_size(v) for v in ret.arguments)
    return per_callee, io


def annotate_used_memory(module: ModuleOp, entry: str = "main") -> None:
    """Write ``relay.used_memory`` on every primitive callee of ``@entry`` and
    ``relay.io_used_memory`` on ``@entry`` (nothing is written if an error is raised)."""
    per_callee, io = used_memory(module, entry)
    funcs = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    for name, values in per_callee.items():
        funcs[name].attributes[FUNC_ATTRS["used_memory"]] = ArrayAttr(
            [IntegerAttr(v, i64) for v in values]
        )
    funcs[entry].attributes[FUNC_ATTRS["io_used_memory"]] = IntegerAttr(io, i64)


@dataclass(frozen=True)
class AnnotateUsedMemoryPass(ModulePass):
    """Annotate primitive functions with the bytes live across each of their call sites."""

    name = "annotate-used-memory"
    relay_name: ClassVar[str] = "AnnotateUsedMemory"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    entry: str = "main"
    """The function whose calls are annotated."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        annotate_used_memory(op, self.entry)
