"""``backward-fold-scale-axis``: fold an output scale back into conv2d/dense weights.

Relay's BackwardFoldScaleAxis (src/relay/transforms/fold_scale_axis.cc) on SSA. The pattern is

    conv2d | dense  ->  [add | subtract | bias_add with a per-channel operand]  ->  [relu | leaky_relu]
                    ->  multiply(y, scale)       # scale: constant, per output channel

and it becomes a conv2d/dense with ``weight * scale`` (the added per-channel operands scaled
too), so that fold-constant turns the product into new weights. This is how the batch norm
after a convolution disappears.

Two phases, both linear in the number of ops:

1. *Analysis* in program order gives each value a message when it could absorb a per-channel
   scale: a conv2d/dense result (along its output channel axis), a relu/leaky_relu of such a
   value (then only a positive scale may pass), an add/subtract of two such values (same axis)
   or of one such value and an operand broadcasting along that axis only, a bias_add along that
   axis. As in Relay, only a value with exactly one use gets a message, so the rewritten chain
   is never shared.
2. *Rewrite* of each ``multiply(y, s)`` (either operand order) where ``y`` has a message, ``s``
   is a constant broadcasting along the message's axis only, the product has ``y``'s type, and
   ``s > 0`` if a relu lies on the way: the chain under ``y`` is rebuilt with the scale pushed
   into the weights, and the multiply disappears.

As in Relay, the scale reaches each weight as an expression: ``squeeze`` drops the scale's
unit axes (MatchBroadcastToLeftAxes) and ``expand_dims`` gives it the weight's trailing unit
axes (ExpandBiasToMatchAxis), so before fold-constant the IR reads as Relay's does:

    %s = squeeze(%scale, axis=[1, 2])                  // (O, 1, 1) -> (O)
    %e = expand_dims(%s, axis=1, num_newaxis=3)        // (O) -> (O, 1, 1, 1)
    nn.conv2d(%x, multiply(%w, %e), ...)

A scale that is one value per channel (a 1 on the channel axis) or spans blocked channel axes
is materialised as a constant in the weight's broadcast shape instead. Any conv2d ``groups`` is
accepted (scaling output channel o only touches ``weight[o]``); only float tensors are folded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from xrelay.dialects.relay import ConstantOp, RelayOp
from xrelay.transforms._scale_axis import (
    Message,
    broadcasts_along,
    channel_vector,
    const_before,
    conv_info,
    conv_output_scale,
    is_dense,
    is_float,
    make_before,
    static_shape,
    vector_for,
)

_ACTIVATIONS = ("nn.relu", "nn.leaky_relu")
_ADD_SUB = ("add", "subtract")


def _message_of(op: Operation, msg: dict[SSAValue, Message]) -> Message | None:
    """What ``op``'s (single) result could absorb, from its operands' messages."""
    if not isinstance(op, RelayOp) or len(op.results) != 1 or not is_float(op.results[0]):
        return None
    name = op.RELAY_NAME
    if name == "nn.conv2d":
        info = conv_info(op)
        return None if info is None else Message(info.out_axes, False)
    if name == "nn.dense":
        if not is_dense(op):
            return None
        return Message((len(static_shape(op.results[0]) or ()) - 1,), False)
    if name in _ACTIVATIONS:
        m = msg.get(op.operands[0])
        return None if m is None else Message(m.axes, True)
    if name in _ADD_SUB:
        a, b = op.operands
        ma, mb = msg.get(a), msg.get(b)
        res = op.results[0]
        if ma is not None and mb is not None:
            if ma.axes == mb.axes and a.type == res.type and b.type == res.type:
                return Message(ma.axes, ma.require_positive or mb.require_positive)
            return None
        if ma is not None and a.type == res.type and broadcasts_along(b, a, ma.axes):
            return ma
        if mb is not None and b.type == res.type and broadcasts_along(a, b, mb.axes):
            return mb
        return None
    if name == "nn.bias_add":
        m = msg.get(op.operands[0])
        rank = len(static_shape(op.results[0]) or ())
        axis = op.attrs["axis"]
        if m is not None and rank and ((axis + rank if axis < 0 else axis),) == m.axes:
            return m
        return None
    return None


def analyse(ops: list[Operation]) -> dict[SSAValue, Message]:
    """Messages of every value that could absorb a per-channel output scale."""
    msg: dict[SSAValue, Message] = {}
    for op in ops:
        m = _message_of(op, msg)
        if m is not None and op.results[0].has_one_use():
            msg[op.results[0]] = m
    return msg


class _Folder:
    def __init__(self, ops: list[Operation], msg: dict[SSAValue, Message]):
        self.position = {op: i for i, op in enumerate(ops)}
        self.msg = msg
        self.dead: list[Operation] = []

    def chain(self, root: SSAValue) -> list[RelayOp]:
        """The ops under ``root`` that absorb the scale (those whose values have messages)."""
        nodes: list[RelayOp] = []
        stack = [root]
        while stack:
            v = stack.pop()
            op = v.owner
            assert isinstance(op, RelayOp)
            nodes.append(op)
            if op.RELAY_NAME in _ACTIVATIONS or op.RELAY_NAME == "nn.bias_add":
                stack.append(op.operands[0])
            elif op.RELAY_NAME in _ADD_SUB:
                stack.extend(o for o in op.operands if o in self.msg)
        nodes.sort(key=lambda o: self.position[o])
        return nodes

    def squeezed_scale(self, scale: SSAValue, y: SSAValue, first: Operation) -> SSAValue | None:
        """Relay's channel vector ``squeeze(scale)``, built before ``first``; None when the
        scale has one value for all channels or spans blocked channel axes."""
        axes, ys, ss = self.msg[y].axes, static_shape(y), static_shape(scale)
        assert ys is not None and ss is not None and isinstance(scale.owner, ConstantOp)
        lead = len(ys) - len(ss)
        if len(axes) != 1 or axes[0] < lead or ss[axes[0] - lead] != ys[axes[0]]:
            return None
        # A copy of the constant: the original may be defined after the chain it now feeds.
        c = const_before(np.asarray(scale.owner.numpy()), scale, first)
        unit = [i for i in range(len(ss)) if i + lead != axes[0]]
        return make_before("squeeze", [c], first, axis=unit) if unit else c

    def fold(self, mul: RelayOp, y: SSAValue, vec: np.ndarray) -> None:
        axes = self.msg[y].axes
        shape = static_shape(y)
        assert shape is not None
        chain = self.chain(y)
        scale = mul.operands[1] if mul.operands[0] is y else mul.operands[0]
        sq = self.squeezed_scale(scale, y, chain[0])

        def scale_for(v: SSAValue, axis: int | None, fallback: np.ndarray, op: Operation) -> SSAValue:
            """``sq`` with ``v``'s trailing unit axes (ExpandBiasToMatchAxis) when ``v``
            carries the channels whole along ``axis``; else ``fallback`` as a constant."""
            vs = static_shape(v)
            assert vs is not None
            if sq is None or axis is None or not 0 <= axis < len(vs) or vs[axis] != shape[axes[0]]:
                return const_before(fallback, v, op)
            pad = len(vs) - axis - 1
            return make_before("expand_dims", [sq], op, axis=1, num_newaxis=pad) if pad else sq

        new: dict[SSAValue, SSAValue] = {}
        for op in chain:
            name = op.RELAY_NAME
            attrs = op.attrs
            if name == "nn.conv2d":
                info = conv_info(op)
                assert info is not None
                x, w = op.operands
                ko = info.kernel_o[0] if len(info.kernel_o) == 1 else None
                s = scale_for(w, ko, conv_output_scale(info, static_shape(w), vec), op)  # type: ignore[arg-type]
                out = make_before(name, [x, make_before("multiply", [w, s], op)], op, **attrs)
            elif name == "nn.dense":
                x, w = op.operands
                s = scale_for(w, 0, vec.reshape(-1, 1), op)
                out = make_before(name, [x, make_before("multiply", [w, s], op)], op, **attrs)
            elif name in _ACTIVATIONS:
                out = make_before(name, [new[op.operands[0]]], op, **attrs)
            elif name == "nn.bias_add":
                b = op.operands[1]
                s = scale_for(b, 0, vec, op)
                out = make_before(name, [new[op.operands[0]], make_before("multiply", [b, s], op)], op, **attrs)
            else:  # add / subtract
                operands = []
                for o in op.operands:
                    if o in new:
                        operands.append(new[o])
                    else:
                        rank = len(static_shape(o) or ())
                        axis = axes[0] - (len(shape) - rank) if len(axes) == 1 else None
                        s = scale_for(o, axis, vector_for(o, shape, axes, vec), op)
                        operands.append(make_before("multiply", [o, s], op))
                out = make_before(name, operands, op)
            new[op.results[0]] = out
            self.dead.append(op)
        while sq is not None and not sq.uses:  # every use fell back to a constant
            owner = sq.owner
            assert isinstance(owner, Operation)
            sq = owner.operands[0] if owner.operands else None
            Rewriter.erase_op(owner)
        mul.results[0].replace_all_uses_with(new[y])
        scale_owner = mul.operands[1].owner if mul.operands[0] is y else mul.operands[0].owner
        Rewriter.erase_op(mul)
        if isinstance(scale_owner, ConstantOp) and not scale_owner.result.uses:
            Rewriter.erase_op(scale_owner)


def fold_function(fn: func.FuncOp) -> int:
    """Fold every qualifying output scale in ``fn``; return how many multiplies went."""
    ops = list(fn.body.walk())
    msg = analyse(ops)
    folder = _Folder(ops, msg)
    folded = 0
    for op in ops:
        if not (isinstance(op, RelayOp) and op.RELAY_NAME == "multiply"):
            continue
        for y, s in (op.operands, op.operands[::-1]):
            m = msg.get(y)
            if m is None or y.type != op.results[0].type:
                continue
            vec = channel_vector(s, y, m.axes)
            if vec is None or (m.require_positive and not np.all(vec > 0)):
                continue
            folder.fold(op, y, vec)
            folded += 1
            break
    for op in reversed(folder.dead):
        if not any(r.uses for r in op.results):
            Rewriter.erase_op(op)
    return folded


@dataclass(frozen=True)
class BackwardFoldScaleAxisPass(ModulePass):
    """Fold per-channel output scales back into conv2d/dense weights."""

    name = "backward-fold-scale-axis"
    relay_name: ClassVar[str] = "BackwardFoldScaleAxis"
    opt_level: ClassVar[int] = 3
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in list(op.ops):
            if isinstance(fn, func.FuncOp) and not fn.is_declaration:
                fold_function(fn)
