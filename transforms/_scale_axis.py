"""Shared pieces of backward- and forward-fold-scale-axis: per-channel scales and weight layouts.

A *message* says "this value may be multiplied by a per-channel scale along ``axes``"
(``require_positive``: only by a positive one, because a relu lies on the way). ``axes`` is
one channel axis, or for a blocked layout (``NCHW16c``) the channel axis and its block axis
``(C, c)`` as in Relay; the channel of index ``(C, c)`` is ``C * block + c``, so a per-channel
vector is the scale flattened over those axes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from xrelay.dialects.relay import RELAY_OPS, ConstantOp, RelayOp, dtype_of, numpy_dtype, shape_of


@dataclass(frozen=True)
class Message:
    axes: tuple[int, ...]
    require_positive: bool


def is_float(value: SSAValue) -> bool:
    t = value.type
    return isinstance(t, TensorType) and dtype_of(t.element_type).startswith(("float", "bfloat"))


def static_shape(value: SSAValue) -> tuple[int, ...] | None:
    t = value.type
    if not isinstance(t, TensorType):
        return None
    s = shape_of(t)
    if any(d is None for d in s):
        return None
    return tuple(s)  # type: ignore[return-value]


def broadcasts_along(other: SSAValue, target: SSAValue, axes: tuple[int, ...]) -> bool:
    """Whether ``other`` broadcasts against ``target`` along ``axes`` only (Relay's
    MatchBroadcastToLeftAxes): rank not larger, every dim 1 except the channel ones. One
    channel axis may also be 1 (a scalar per channel); blocked axes must be full."""
    so, st = static_shape(other), static_shape(target)
    if so is None or st is None or len(so) > len(st):
        return False
    lead = len(st) - len(so)
    for i, d in enumerate(so):
        if i + lead in axes:
            if d != st[i + lead] and (len(axes) > 1 or d != 1):
                return False
        elif d != 1:
            return False
    return True


def channel_vector(scale: SSAValue, target: SSAValue, axes: tuple[int, ...]) -> np.ndarray | None:
    """The per-channel vector of a constant ``scale`` broadcasting along ``axes`` of ``target``."""
    if not isinstance(scale.owner, ConstantOp) or not broadcasts_along(scale, target, axes):
        return None
    st = static_shape(target)
    assert st is not None
    arr = np.asarray(scale.owner.numpy())
    arr = arr.reshape((1,) * (len(st) - arr.ndim) + arr.shape)
    full = [st[i] if i in axes else 1 for i in range(len(st))]
    return np.broadcast_to(arr, full).reshape(-1).copy()


def vector_for(value: SSAValue, target_shape: tuple[int, ...], axes: tuple[int, ...], vec: np.ndarray) -> np.ndarray:
    """``vec`` shaped to multiply ``value`` (which broadcasts along ``axes`` of a tensor of
    ``target_shape``) channel by channel: Relay's ExpandBiasToMatchAxis for one axis (the
    trailing unit axes only), ReshapeToMatchAxis (the full rank) for blocked axes."""
    s = static_shape(value)
    assert s is not None
    rank = max(len(s), len(target_shape) - axes[0]) if len(axes) == 1 else len(target_shape)
    shape = [1] * rank
    for a in axes:
        shape[rank - (len(target_shape) - a)] = target_shape[a]
    return vec.reshape(shape)


def kernel_scale(weight_shape: tuple[int, ...], axes: tuple[int, ...], vec: np.ndarray) -> np.ndarray:
    """``vec`` shaped to multiply a kernel along ``axes`` (Relay: ``(n, 1, ..)`` from the axis
    for one axis, a full-rank reshape for a blocked pair such as ``(O, o)``)."""
    if len(axes) == 1:
        return vec.reshape((weight_shape[axes[0]],) + (1,) * (len(weight_shape) - axes[0] - 1))
    return vec.reshape([weight_shape[i] if i in axes else 1 for i in range(len(weight_shape))])


CONVS = ("nn.conv2d", "nn.conv3d")


@dataclass(frozen=True)
class ConvInfo:
    """Where the channels are in a conv2d's data, output and kernel (blocked: two axes each)."""

    in_axes: tuple[int, ...]
    out_axes: tuple[int, ...]
    kernel_o: tuple[int, ...]
    kernel_i: tuple[int, ...]
    groups: int
    depthwise: bool


def _axes(layout: str, letter: str) -> tuple[int, ...] | None:
    """``(index of C,)`` or ``(index of C, index of c)`` in a layout such as ``NCHW8c``."""
    names = [ch for ch in layout if ch.isalpha()]
    if letter not in names:
        return None
    if letter.lower() in names:
        return (names.index(letter), names.index(letter.lower()))
    return (names.index(letter),)


def conv_info(op: Operation) -> ConvInfo | None:
    """Channel axes of a float ``nn.conv2d``, else None.

    Plain layouts with any ``groups``; blocked ones (``NCHW8c`` with ``OIHW2i8o``) as Relay
    takes them: data, output and kernel all blocked, and a full or depthwise convolution.
    """
    if not isinstance(op, RelayOp) or op.RELAY_NAME not in CONVS:
        return None
    attrs = op.attrs
    data, kernel = attrs["data_layout"], attrs["kernel_layout"]
    out = attrs["out_layout"] or data
    in_axes, out_axes = _axes(data, "C"), _axes(out, "C")
    ko, ki = _axes(kernel, "O"), _axes(kernel, "I")
    if in_axes is None or out_axes is None or ko is None or ki is None:
        return None
    blocked = {len(in_axes), len(out_axes), len(ko), len(ki)}
    if blocked not in ({1}, {2}):
        return None  # Relay folds simple or fully blocked layouts only
    if not (is_float(op.operands[0]) and is_float(op.operands[1])):
        return None
    xs, ws = static_shape(op.operands[0]), static_shape(op.operands[1])
    if ws is None or xs is None:
        return None
    groups = attrs["groups"]
    channels = int(np.prod([xs[a] for a in in_axes]))
    n_out = int(np.prod([ws[a] for a in ko]))
    depthwise = groups > 1 and groups == channels == n_out
    if blocked == {2} and groups != 1 and not depthwise:
        return None
    return ConvInfo(in_axes, out_axes, ko, ki, groups, depthwise)


def conv_output_scale(info: ConvInfo, weight_shape: tuple[int, ...], vec: np.ndarray) -> np.ndarray:
    """A kernel-shaped multiplier scaling output channel o by vec[o]."""
    return kernel_scale(weight_shape, info.kernel_o, vec)


def conv_input_scale(info: ConvInfo, weight_shape: tuple[int, ...], vec: np.ndarray) -> np.ndarray:
    """A kernel-shaped multiplier scaling input channel c by vec[c] (any ``groups``):
    output channel o of group g reads input channels g*I .. g*I+I-1 (depthwise: channel c is
    output channel c, as Relay scales it)."""
    if info.groups == 1:  # every output channel reads every input channel: one row suffices
        return kernel_scale(weight_shape, info.kernel_i, vec)
    if info.depthwise:
        return kernel_scale(weight_shape, info.kernel_o, vec)
    (ko,), (ki,) = info.kernel_o, info.kernel_i
    n_out, n_in = weight_shape[ko], weight_shape[ki]
    group = np.arange(n_out) // (n_out // info.groups)
    oi = vec[group[:, None] * n_in + np.arange(n_in)[None, :]]
    if ko > ki:
        oi = oi.T
    shape = [1] * len(weight_shape)
    shape[ko], shape[ki] = n_out, n_in
    return oi.reshape(shape)


def is_dense(op: Operation) -> bool:
    return (
        isinstance(op, RelayOp)
        and op.RELAY_NAME == "nn.dense"
        and is_float(op.operands[0])
        and is_float(op.operands[1])
        and static_shape(op.operands[1]) is not None
    )


def const_before(array: np.ndarray, like: SSAValue, before: Operation) -> SSAValue:
    """A constant holding ``array`` in ``like``'s dtype, inserted before ``before``."""
    t = like.type
    assert isinstance(t, TensorType)
    c = ConstantOp.from_numpy(
        np.asarray(array, dtype=numpy_dtype(t.element_type)), None, dtype_of(t.element_type)
    )
    Rewriter.insert_op(c, InsertPoint.before(before))
    return c.result


def make_before(name: str, operands: list[SSAValue], before: Operation, **attrs: Any) -> SSAValue:
    """Build relay op ``name`` (types inferred) before ``before``; return its first result."""
    new = RELAY_OPS[name].make(operands, **attrs)
    Rewriter.insert_op(new, InsertPoint.before(before))
    return new.results[0]


# ---- Relay's scale expressions ---------------------------------------------------------------
# Relay keeps the scale as an expression: the multiply's operand squeezed to its channel
# axes, then expand_dims (one channel axis) or reshape (a blocked pair) to meet each use;
# FoldScaleAxis's fold-constant folds them. The passes build the same expressions, so a
# ForwardFoldScaleAxis/BackwardFoldScaleAxis alone gives Relay's program.

_SHAPE_ONLY = ("expand_dims", "reshape", "transpose", "squeeze", "repeat")


def squeeze_axes(x: SSAValue, s: SSAValue, axes: tuple[int, ...]) -> list[int] | None:
    """Relay's MatchBroadcastToLeftAxes: ``s`` broadcasts against ``x`` with the channel
    ``axes`` full and every other axis of ``s`` 1; returns the axes of ``s`` to squeeze so
    that only the channel axes remain, or None when it does not match."""
    xs, ss = static_shape(x), static_shape(s)
    if xs is None or ss is None or len(ss) > len(xs) or not ss:
        return None
    base = len(xs) - len(ss)
    out = []
    for i in range(len(xs)):
        if i in axes:
            if i < base or ss[i - base] != xs[i]:
                return None
        elif i >= base:
            if ss[i - base] != 1:
                return None
            out.append(i - base)
    return out


def all_positive_constant(value: SSAValue) -> bool:
    """Relay's IsAllPositiveConstant: a constant (seen through shape-only ops) > 0."""
    while True:
        owner = value.owner
        if isinstance(owner, ConstantOp):
            return bool(np.all(np.asarray(owner.numpy()) > 0))
        if isinstance(owner, RelayOp) and owner.RELAY_NAME in _SHAPE_ONLY and owner.operands:
            value = owner.operands[0]
            continue
        return False


def expand_to_axes(sq: SSAValue, ndim: int, axes: tuple[int, ...], before: Operation) -> SSAValue:
    """Relay's ExpandBiasToMatchAxis: unit axes after (and between) the channel axes."""
    for i in range(len(axes), 0, -1):
        n = ndim - axes[i - 1] - 1 if i == len(axes) else axes[i] - axes[i - 1]
        if n > 0:
            sq = make_before("expand_dims", [sq], before, axis=i, num_newaxis=n)
    return sq


def reshape_to_axes(sq: SSAValue, shape: tuple[int, ...], axes: tuple[int, ...], before: Operation) -> SSAValue:
    """Relay's ReshapeToMatchAxis: ``sq`` reshaped to ``shape`` with 1 off the ``axes``."""
    newshape = [shape[i] if i in axes else 1 for i in range(len(shape))]
    return make_before("reshape", [sq], before, newshape=newshape)


def reshape_or_expand(sq: SSAValue, shape: tuple[int, ...], axes: tuple[int, ...], before: Operation) -> SSAValue:
    """Relay's ReshapeOrExpandToMatchAxis: reshape for a blocked pair, else expand_dims."""
    if len(axes) > 1:
        return reshape_to_axes(sq, shape, axes, before)
    return expand_to_axes(sq, len(shape), axes, before)


def kernel_scale_expr(info: ConvInfo, sq: SSAValue, weight_shape: tuple[int, ...], output: bool, before: Operation) -> SSAValue | None:
    """The kernel multiplier Relay builds from the channel vector ``sq`` (input channels, or
    output channels when ``output``; a depthwise kernel scales its output axis either way):
    expand_dims for a plain layout, reshape for a blocked one; None for grouped kernels
    (Relay folds only full and depthwise convolutions)."""
    if info.groups != 1 and not info.depthwise:
        return None
    axes = info.kernel_o if output or info.depthwise else info.kernel_i
    if len(axes) == 1:
        return expand_to_axes(sq, len(weight_shape), axes, before)
    return reshape_to_axes(sq, weight_shape, axes, before)
