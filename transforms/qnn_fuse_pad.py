"""``qnn-fuse-pad``: the zero-point pad of a lowered qnn.conv2d joins the convolution's function.

xrelay's rule (Relay has none): ``qnn-canonicalize-ops`` pads a qnn.conv2d's input with the
input zero point through an explicit ``nn.pad`` (Relay's ``Conv2DPadInput``), because the
lowered ``nn.conv2d`` pads with 0. ``fold-explicit-padding`` cannot fold it back, and Relay's
FuseOps never fuses an injective producer into a convolution, so after ``fuse-ops`` the pad is a
primitive function of its own whose padded result is an arena buffer live beside its input --
the peak of an int8 MobileNetV2. This pass, run after ``fuse-ops``, moves such a pad into the
function of the convolution that reads it: the arena runtime's int8 convolution then reads
through the pad (taps outside the image read the pad value) and the padded tensor is never made.
The program's meaning does not change: the pad still runs, inside the convolution's function.

A call of a primitive function whose body is one constant-mode ``nn.pad`` of 8-bit integer
data, whose result is used once, by a call of a primitive function (called only there) whose
corresponding parameter is used once, as an ``nn.conv2d``'s data, is merged::

    func.func private @fused_nn_pad(%p0: tensor<1x8x6x6xui8>, %p1: tensor<ui8>) -> tensor<1x8x8x8xui8> ... {
      %0 = relay.nn.pad %p0, %p1 {pad_width = [[0, 0], [0, 0], [1, 1], [1, 1]]} : ...
      func.return %0 : tensor<1x8x8x8xui8>
    }
    func.func private @fused_nn_conv2d_add(%p0: tensor<1x8x8x8xui8>, %p1: tensor<8x8x3x3xi8>, ...) ... {
      %0 = relay.nn.conv2d %p0, %p1 {...} : ...
      ...
    }
    %1 = func.call @fused_nn_pad(%x, %zp) : ...
    %2 = func.call @fused_nn_conv2d_add(%1, %w, ...) : ...

becomes::

    func.func private @fused_nn_pad_nn_conv2d_add(%p0: tensor<1x8x6x6xui8>, %p1: tensor<ui8>, %p2: tensor<8x8x3x3xi8>, ...) ... {
      %0 = relay.nn.pad %p0, %p1 {pad_width = [[0, 0], [0, 0], [1, 1], [1, 1]]} : ...
      %1 = relay.nn.conv2d %0, %p2 {...} : ...
      ...
    }
    %2 = func.call @fused_nn_pad_nn_conv2d_add(%x, %zp, %w, ...) : ...

The pad's parameters take the place of the padded one; the function is renamed after its ops
(as ``fuse-ops`` names them) and the pad's function is removed when nothing else calls it.
``xrelay.build`` runs the pass after ``fuse-ops``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from xrelay.dialects.relay import ConstantOp, RelayOp
from xrelay.transforms._relay_rewrite import tensor_dtype
from xrelay.transforms.fuse_ops import _Namer, is_primitive


def _lone_pad(fn: func.FuncOp) -> RelayOp | None:
    """The ``nn.pad`` of ``fn`` when its body is constants, one constant-mode pad of 8-bit
    integer data (a parameter) and the return of its result."""
    ops = [op for op in fn.body.block.ops if not isinstance(op, ConstantOp)]
    if len(ops) != 2 or not isinstance(ops[1], func.ReturnOp):
        return None
    pad = ops[0]
    if getattr(pad, "RELAY_NAME", None) != "nn.pad" or tuple(ops[1].arguments) != tuple(pad.results):
        return None
    assert isinstance(pad, RelayOp)
    if pad.attrs["pad_mode"] != "constant" or tensor_dtype(pad.operands[0]) not in ("int8", "uint8"):
        return None
    return pad if pad.operands[0].owner is fn.body.block else None


def fused_name(fn: func.FuncOp) -> str:
    """``fuse-ops``' name of a group: ``fused_`` and the relay op names in order."""
    names = [op.RELAY_NAME for op in fn.body.block.ops if isinstance(op, RelayOp) and not isinstance(op, ConstantOp)]
    return "fused_" + "_".join(n.replace(".", "_") for n in names)


def _merge(module: ModuleOp, table: dict[str, func.FuncOp], calls: dict[str, list[func.CallOp]],
           namer: _Namer, first: func.CallOp, second: func.CallOp, index: int) -> None:  # fmt: skip
    """Move the pad ``first`` calls into the function ``second`` calls (its argument ``index``)."""
    pad_fn = table[first.callee.root_reference.data]
    conv_fn = table[second.callee.root_reference.data]
    block = conv_fn.body.block
    old_arg = block.args[index]
    # the pad's parameters take the padded parameter's place
    new_args = [block.insert_arg(a.type, index + i) for i, a in enumerate(pad_fn.body.block.args)]
    mapping = dict(zip(pad_fn.body.block.args, new_args))
    first_op = block.first_op
    for op in pad_fn.body.block.ops:
        if isinstance(op, func.ReturnOp):
            break
        clone = op.clone()
        for i, v in enumerate(clone.operands):
            clone.operands[i] = mapping.get(v, v)
        for r_old, r_new in zip(op.results, clone.results):
            mapping[r_old] = r_new
        block.insert_op_before(clone, first_op)
    padded = mapping[next(op for op in pad_fn.body.block.ops if isinstance(op, RelayOp) and not isinstance(op, ConstantOp)).results[0]]
    old_arg.replace_all_uses_with(padded)
    block.erase_arg(old_arg)
    padded.name_hint = None
    for i, a in enumerate(block.args):  # p0, p1, ... as fuse-ops names them
        a.name_hint = f"p{i}"
    inputs = [a.type for a in block.args]
    conv_fn.function_type = FunctionType.from_lists(inputs, list(conv_fn.function_type.outputs.data))
    old_name = conv_fn.sym_name.data
    new_name = namer(fused_name(conv_fn))
    conv_fn.sym_name = StringAttr(new_name)
    args = [*second.arguments[:index], *first.arguments, *second.arguments[index + 1 :]]
    call = func.CallOp(SymbolRefAttr(new_name), args, [r.type for r in second.results])
    second.parent_block().insert_op_before(call, second)
    for old, new in zip(second.results, call.results):
        old.replace_all_uses_with(new)
    second.detach()
    second.erase()
    first.detach()
    first.erase()
    table.pop(old_name)
    table[new_name] = conv_fn
    calls.pop(old_name, None)
    calls[new_name] = [call]
    pad_name = pad_fn.sym_name.data
    calls[pad_name] = [c for c in calls[pad_name] if c is not first]
    if not calls[pad_name]:
        pad_fn.detach()
        pad_fn.erase()
        table.pop(pad_name)


def qnn_fuse_pad(module: ModuleOp) -> int:
    """Merge every such pad into its convolution's function; returns how many were merged."""
    table = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    calls: dict[str, list[func.CallOp]] = {}
    for op in module.walk():
        if isinstance(op, func.CallOp):
            calls.setdefault(op.callee.root_reference.data, []).append(op)
    namer = _Namer(table)
    merged = 0
    for first in [c for cs in calls.values() for c in cs]:
        callee = table.get(first.callee.root_reference.data)
        if callee is None or not is_primitive(callee) or _lone_pad(callee) is None:
            continue
        if len(first.results) != 1 or first.results[0].uses.get_length() != 1:
            continue
        use = next(iter(first.results[0].uses))
        second: Operation = use.operation
        if not isinstance(second, func.CallOp):
            continue
        target = table.get(second.callee.root_reference.data)
        if target is None or not is_primitive(target) or len(calls.get(target.sym_name.data, ())) != 1:
            continue
        arg = target.body.block.args[use.index]
        if arg.uses.get_length() != 1:
            continue
        inner = next(iter(arg.uses))
        if getattr(inner.operation, "RELAY_NAME", None) != "nn.conv2d" or inner.index != 0:
            continue
        _merge(module, table, calls, namer, first, second, use.index)
        merged += 1
    return merged


@dataclass(frozen=True)
class QnnFusePadPass(ModulePass):
    """After fuse-ops: zero-point pads join their convolution's primitive function."""

    name = "qnn-fuse-pad"
    relay_name: ClassVar[str] = "QnnFusePad"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        qnn_fuse_pad(op)
