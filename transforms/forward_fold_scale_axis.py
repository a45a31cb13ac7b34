"""``forward-fold-scale-axis``: fold an input scale forward into the consuming conv2d/dense weights.

Relay's ForwardFoldScaleAxis (src/relay/transforms/fold_scale_axis.cc) on SSA. The pattern is

    multiply(x, scale)   # scale: constant, per channel of x
      -> [relu | leaky_relu (scale > 0)] -> [add | subtract | bias_add with a per-channel operand]
      -> conv2d | dense  (as the data operand)

``conv2d(x * s, w) == conv2d(x, w * s)`` along the kernel's input-channel axis, a positive scale
commutes with relu, and ``x * s + b == (x + b / s) * s``. So the multiply disappears, the added
operands are divided by the scale, and the weights are multiplied by it, each through Relay's
expression of the scale (``squeeze`` to the channel axes, then ``expand_dims`` or, for blocked
axes, ``reshape`` per use; fold-constant then folds both). This is how a batch norm before a convolution disappears.

Two phases, both linear in the number of ops:

1. *Analysis* in reverse program order: a conv2d/dense asks its data operand for a scale along
   the channel axis; a relu/leaky_relu passes the request on requiring a positive scale; an
   add/subtract/bias_add passes it on to one operand when the other broadcasts along that axis
   only (Relay prefers the left operand). A value gets a message only when *every* use asks
   for the same axis (Relay intersects the messages of all consumers), so a scaled value
   feeding two convolutions folds into both weights.
2. *Rewrite* in program order: a ``multiply`` whose result has a message and whose other
   operand is a per-channel constant (positive if required) becomes "x scaled by s"; each
   consumer is rebuilt on the unscaled value, and the convolutions absorb the scale.

conv2d of any ``groups`` is handled (input channel c of group g scales the weights of that
group's output channels at kernel input index c - g*I); blocked layouts (``NCHW4c`` data with
an ``OIHW2i4o`` kernel) are folded as Relay does, along both channel axes, for full and
depthwise convolutions; only float tensors are folded. Relay has no forward rule for dense; the same
algebra (scale the weight's columns) is used here.
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
    CONVS,
    Message,
    all_positive_constant,
    broadcasts_along,
    channel_vector,
    const_before,
    conv_info,
    conv_input_scale,
    is_dense,
    is_float,
    kernel_scale_expr,
    make_before,
    reshape_or_expand,
    squeeze_axes,
    static_shape,
    vector_for,
)

_ACTIVATIONS = ("nn.relu", "nn.leaky_relu")
_ADD_SUB = ("add", "subtract")


def _requests(op: Operation, msg: dict[SSAValue, Message]) -> list[tuple[SSAValue, Message]]:
    """The scales ``op`` can absorb on its operands, given the messages of its results."""
    if not isinstance(op, RelayOp) or len(op.results) != 1:
        return []
    name = op.RELAY_NAME
    if name in CONVS:
        info = conv_info(op)
        x, w = op.operands
        xs, ws = static_shape(x), static_shape(w)
        if info is None or xs is None or ws is None:
            return []
        channels = int(np.prod([xs[a] for a in info.in_axes]))
        if int(np.prod([ws[a] for a in info.kernel_i])) * info.groups != channels:
            return []
        return [(x, Message(info.in_axes, False))]
    if name == "nn.dense":
        x = op.operands[0]
        if not is_dense(op) or static_shape(x) is None:
            return []
        return [(x, Message((len(static_shape(x) or ()) - 1,), False))]
    m = msg.get(op.results[0])
    if m is None:
        return []
    if name in _ACTIVATIONS:
        return [(op.operands[0], Message(m.axes, True))]
    if name in _ADD_SUB:
        a, b = op.operands
        res = op.results[0]
        if a.type == res.type and broadcasts_along(b, a, m.axes):
            return [(a, m)]
        if b.type == res.type and broadcasts_along(a, b, m.axes):
            return [(b, m)]
        return []
    if name == "nn.bias_add":
        rank = len(static_shape(op.results[0]) or ())
        axis = op.attrs["axis"]
        if rank and ((axis + rank if axis < 0 else axis),) == m.axes:
            return [(op.operands[0], m)]
    return []


def analyse(ops: list[Operation]) -> dict[SSAValue, Message]:
    """Messages of the values every user of which can absorb a per-channel scale."""
    asked: dict[SSAValue, list[Message]] = {}
    msg: dict[SSAValue, Message] = {}
    for op in reversed(ops):
        for res in op.results:
            got = asked.get(res)
            if not got or len(got) != res.uses.get_length() or not is_float(res):
                continue
            if any(g.axes != got[0].axes for g in got):
                continue
            msg[res] = Message(got[0].axes, any(g.require_positive for g in got))
        for value, m in _requests(op, msg):
            asked.setdefault(value, []).append(m)
    return msg


def fold_function(fn: func.FuncOp) -> int:
    """Fold every qualifying input scale in ``fn``; return how many multiplies went."""
    ops = list(fn.body.walk())
    msg = analyse(ops)
    # value -> (the unscaled value, the per-channel vector, the channel axes, Relay's scale
    # expression: the multiply's operand squeezed to the channel axes, when it has that form)
    scaled: dict[SSAValue, tuple[SSAValue, np.ndarray, tuple[int, ...], SSAValue | None]] = {}

    replaced: list[Operation] = []
    folded = 0
    for op in ops:
        if not isinstance(op, RelayOp) or not op.operands:
            continue
        name = op.RELAY_NAME
        if name == "multiply":
            m = msg.get(op.results[0])
            if m is None:
                continue
            for x, s in (op.operands, op.operands[::-1]):
                if x.type != op.results[0].type:
                    continue
                vec = channel_vector(s, x, m.axes)
                if vec is None or (m.require_positive and not all_positive_constant(s)):
                    continue
                if np.any(vec == 0):
                    continue  # added operands are divided by the scale
                unit = squeeze_axes(x, s, m.axes)
                sq = None if unit is None else make_before("squeeze", [s], op, axis=unit) if unit else s
                scaled[op.results[0]] = (x, vec, m.axes, sq)
                replaced.append(op)
                folded += 1
                break
            continue
        inputs = [o for o in op.operands if o in scaled]
        if not inputs:
            continue
        src = inputs[0]
        u, vec, axes, sq = scaled[src]
        attrs = op.attrs
        if (name in CONVS or name == "nn.dense") and op.operands[0] is src and len(inputs) == 1:
            w = op.operands[1]
            ws = static_shape(w)
            assert ws is not None
            factor: SSAValue | None = None
            if name in CONVS:
                info = conv_info(op)
                assert info is not None
                if sq is not None:
                    factor = kernel_scale_expr(info, sq, ws, False, op)
                if factor is None:  # grouped (beyond Relay), or a scale Relay does not match
                    factor = const_before(conv_input_scale(info, ws, vec), w, op)
            else:
                # broadcasts along the weight's last (input) axis, as Relay multiplies
                factor = sq if sq is not None else const_before(vec, w, op)
            new_w = make_before("multiply", [w, factor], op)
            out = make_before(name, [u, new_w], op, **attrs)
            op.results[0].replace_all_uses_with(out)
            replaced.append(op)
        elif name in _ACTIVATIONS and op.results[0] in msg:
            scaled[op.results[0]] = (make_before(name, [u], op, **attrs), vec, axes, sq)
            replaced.append(op)
        elif name in (*_ADD_SUB, "nn.bias_add") and op.results[0] in msg and len(inputs) == 1:
            shape = static_shape(src)
            assert shape is not None
            operands = []
            for o in op.operands:
                if o is src:
                    operands.append(u)
                    continue
                if name != "nn.bias_add" and sq is not None:
                    div = reshape_or_expand(sq, shape, axes, op)
                else:
                    div = const_before(vec if name == "nn.bias_add" else vector_for(o, shape, axes, vec), o, op)
                operands.append(make_before("divide", [o, div], op))
            scaled[op.results[0]] = (make_before(name, operands, op, **attrs), vec, axes, sq)
            replaced.append(op)
    # the old chain (multiply, relu, add, conv) is dead now; the scale constants may be too
    for op in reversed(replaced):
        if op.parent is None or any(r.uses for r in op.results):
            continue
        owners = [o.owner for o in op.operands]
        Rewriter.erase_op(op)
        for owner in owners:
            if isinstance(owner, ConstantOp) and owner.parent is not None and not owner.result.uses:
                Rewriter.erase_op(owner)
    return folded


@dataclass(frozen=True)
class ForwardFoldScaleAxisPass(ModulePass):
    """Fold per-channel input scales forward into conv2d/dense weights."""

    name = "forward-fold-scale-axis"
    relay_name: ClassVar[str] = "ForwardFoldScaleAxis"
    opt_level: ClassVar[int] = 3
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in list(op.ops):
            if isinstance(fn, func.FuncOp) and not fn.is_declaration:
                fold_function(fn)
