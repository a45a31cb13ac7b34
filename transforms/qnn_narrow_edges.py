"""``qnn-narrow-edges``: a fused function passes its 8-bit value, not a wider copy of it.

xrelay's rule (Relay has none), for the arena of quantized programs after ``fuse-ops``. Relay's
FuseOps fuses every elementwise op after a convolution into the convolution's function, up to
the op of another group that uses it. In an integer program the ops that turn an 8-bit result
into the operand of another function's op -- the dequantizing side of a QLinearAdd as
``fake-quantization-to-integer{onnxruntime=true}`` writes it, ``cast(q, f64) * s + c`` -- thus
run in the producer, and the value passed between the functions, an arena buffer, is float64:
eight times the bytes of the 8-bit value it is computed from (the downsampling branch of an
int8 ResNet). This pass moves such a chain into the function that uses it, so the 8-bit value
is what the arena holds. The program's meaning does not change: the same ops run, in the next
function.

A primitive function (called once) whose one result is made by a chain of elementwise or
broadcast relay ops from an 8-bit value it computes (each op's other operands constants or
parameters of the function, each value of the chain used once, all of the 8-bit value's shape),
and whose result is read only by calls of other primitive functions (each called once, each
reading it once), returns the 8-bit value instead; the chain and its constants move to the
start of each reading function (the parameters it reads become parameters of that function,
at the end). With two readers the chain runs twice, and the wide value is never live across
both (EfficientNet-B0's depthwise convolution + SiLU, read by the squeeze-and-excitation mean
and by the multiply: a 1.8 MB int32 edge at its arena's peak)::

    func.func private @fused_nn_conv2d_cast_cast_multiply(...) -> tensor<1x8x4x4xf64> ... {
      ...
      %q = relay.cast %i {dtype = "uint8"} : (...) -> tensor<1x8x4x4xui8>
      %d = relay.cast %q {dtype = "float64"} : (...) -> tensor<1x8x4x4xf64>
      %s = relay.constant dense<0.5> : tensor<f64>
      %r = relay.multiply %d, %s : (...) -> tensor<1x8x4x4xf64>
      func.return %r : tensor<1x8x4x4xf64>
    }
    func.func private @fused_add(%p0: tensor<1x8x4x4xf64>, %p1: tensor<1x8x4x4xf64>) -> ...

becomes::

    func.func private @fused_nn_conv2d_cast(...) -> tensor<1x8x4x4xui8> ... {
      ...
      func.return %q : tensor<1x8x4x4xui8>
    }
    func.func private @fused_cast_multiply_add(%p0: tensor<1x8x4x4xui8>, %p1: tensor<1x8x4x4xf64>) -> ... {
      %0 = relay.cast %p0 {dtype = "float64"} : ...
      %1 = relay.constant dense<0.5> : tensor<f64>
      %2 = relay.multiply %0, %1 : ...
      %3 = relay.add %2, %p1 : ...
      ...

Both functions are renamed after their ops (as ``fuse-ops`` names them). ``xrelay.build`` runs
the pass after ``fuse-ops`` (and ``qnn-fuse-pad``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from xrelay.dialects.relay import ConstantOp, OpPattern, RelayOp, byte_size
from xrelay.transforms._relay_rewrite import tensor_dtype
from xrelay.transforms.fuse_ops import _Namer, is_primitive
from xrelay.transforms.qnn_fuse_pad import fused_name


def _chain(fn: func.FuncOp) -> tuple[SSAValue, list[RelayOp]] | None:
    """(the 8-bit value, the ops from it to the returned value in order) when ``fn``'s one result
    is such a chain, wider than the value."""
    ret = fn.body.block.last_op
    if not isinstance(ret, func.ReturnOp) or len(ret.arguments) != 1:
        return None
    result = v = ret.arguments[0]
    chain: list[RelayOp] = []
    while True:
        op = v.owner
        if not isinstance(op, RelayOp) or isinstance(op, ConstantOp) or len(op.results) != 1:
            return None
        if op.PATTERN > OpPattern.BROADCAST or v.uses.get_length() != 1:
            return None
        inputs = [o for o in op.operands if isinstance(o.owner, Operation) and not isinstance(o.owner, ConstantOp)]
        if len(inputs) != 1 or inputs[0].type.get_shape() != result.type.get_shape():
            return None
        chain.append(op)
        v = inputs[0]
        if tensor_dtype(v) in ("int8", "uint8"):
            break
    if not isinstance(v.owner, Operation) or byte_size(result.type) <= byte_size(v.type):
        return None
    return v, chain[::-1]


def _copy_chain(consumer: func.FuncOp, first: func.CallOp, index: int, value: SSAValue,
                chain: list[RelayOp]) -> list[SSAValue]:  # fmt: skip
    """Run ``chain`` (from the 8-bit ``value``) at the start of ``consumer``, whose argument
    ``index`` it computes; returns the producer call's arguments the chain reads, which become
    the consumer's last parameters."""
    block = consumer.body.block
    old_arg = block.args[index]
    new_arg = block.insert_arg(value.type, index)
    mapping: dict[SSAValue, SSAValue] = {value: new_arg}
    extra: list[SSAValue] = []  # the producer's arguments the chain reads, passed on
    anchor = block.first_op
    for op in chain:
        for v in op.operands:  # the chain's constants, cloned before their first use
            if v in mapping:
                continue
            if isinstance(v.owner, ConstantOp):
                c = v.owner.clone()
                block.insert_op_before(c, anchor)
                mapping[v] = c.results[0]
            elif isinstance(v, BlockArgument):
                mapping[v] = block.insert_arg(v.type, len(block.args))
                extra.append(first.arguments[v.index])
        clone = op.clone()
        for i, v in enumerate(clone.operands):
            clone.operands[i] = mapping[v]
        block.insert_op_before(clone, anchor)
        clone.results[0].name_hint = None
        mapping[op.results[0]] = clone.results[0]
    old_arg.replace_all_uses_with(mapping[chain[-1].results[0]])
    block.erase_arg(old_arg)
    mapping[chain[-1].results[0]].name_hint = None
    for i, a in enumerate(block.args):
        a.name_hint = f"p{i}"
    consumer.function_type = FunctionType.from_lists([a.type for a in block.args], list(consumer.function_type.outputs.data))
    return extra


def _move(table: dict[str, func.FuncOp], namer: _Namer, first: func.CallOp,
          readers: list[tuple[func.CallOp, int]], value: SSAValue, chain: list[RelayOp]) -> None:  # fmt: skip
    """Return ``value`` from ``first``'s callee; run ``chain`` at the start of each reader's
    callee (``(call, operand index)``: each reader computes its own copy)."""
    producer = table.pop(first.callee.root_reference.data)
    consumers = [table.pop(second.callee.root_reference.data) for second, _ in readers]
    extras = [_copy_chain(fn, first, index, value, chain) for fn, (_, index) in zip(consumers, readers)]
    # the producer returns the 8-bit value; the chain and constants nothing else uses go
    ret = producer.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    ret.operands[0] = value
    for op in reversed(chain):
        constants = [v.owner for v in op.operands if isinstance(v.owner, ConstantOp)]
        op.detach()
        op.erase()
        for c in constants:
            if not c.results[0].uses:
                c.detach()
                c.erase()
    producer.function_type = FunctionType.from_lists(list(producer.function_type.inputs.data), [value.type])
    for fn in (producer, *consumers):
        fn.sym_name = StringAttr(namer(fused_name(fn)))
        table[fn.sym_name.data] = fn
    call1 = func.CallOp(SymbolRefAttr(producer.sym_name.data), list(first.arguments), [value.type])
    first.parent_block().insert_op_before(call1, first)
    for consumer, (second, index), extra in zip(consumers, readers, extras):
        args = list(second.arguments)
        args[index] = call1.results[0]
        args += extra
        call2 = func.CallOp(SymbolRefAttr(consumer.sym_name.data), args, [r.type for r in second.results])
        second.parent_block().insert_op_before(call2, second)
        for old, new in zip(second.results, call2.results):
            old.replace_all_uses_with(new)
        second.detach()
        second.erase()
    first.detach()
    first.erase()


def _narrow_one(module: ModuleOp, namer: _Namer) -> bool:
    """Narrow the first such edge in the module; whether there was one."""
    table = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    calls = [op for op in module.walk() if isinstance(op, func.CallOp)]
    counts: dict[str, int] = {}
    for c in calls:
        counts[c.callee.root_reference.data] = counts.get(c.callee.root_reference.data, 0) + 1
    for first in calls:
        producer = table.get(first.callee.root_reference.data)
        if producer is None or not is_primitive(producer) or counts[producer.sym_name.data] != 1:
            continue
        if len(first.results) != 1 or not first.results[0].uses:
            continue
        readers = [(use.operation, use.index) for use in first.results[0].uses]
        callees = [table.get(r.callee.root_reference.data) if isinstance(r, func.CallOp) else None for r, _ in readers]
        if any(fn is None or fn is producer or not is_primitive(fn) or counts[fn.sym_name.data] != 1 for fn in callees):
            continue
        if len({id(fn) for fn in callees}) != len(callees):
            continue  # one function reading the value twice
        found = _chain(producer)
        if found is None:
            continue
        _move(table, namer, first, readers, *found)
        return True
    return False


def qnn_narrow_edges(module: ModuleOp) -> int:
    """Narrow every such edge (one at a time: each renames two functions); returns how many."""
    namer = _Namer(op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp))
    moved = 0
    while _narrow_one(module, namer):
        moved += 1
    return moved


@dataclass(frozen=True)
class QnnNarrowEdgesPass(ModulePass):
    """After fuse-ops: an 8-bit value, not a wider chain of it, passes between functions."""

    name = "qnn-narrow-edges"
    relay_name: ClassVar[str] = "QnnNarrowEdges"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        qnn_narrow_edges(op)
