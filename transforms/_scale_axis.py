"""Shared pieces of backward- and forward-fold-scale-axis: per-channel scales and weight layouts.

A *message* says "this value may be multiplied by a per-channel scale along ``axis``"
(``require_positive``: only by a positive one, because a relu lies on the way). Only one
channel axis is handled: the split-channel layouts (NCHW16c) for which Relay tracks several
axes are left alone.
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
    axis: int
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


def broadcasts_along(other: SSAValue, target: SSAValue, axis: int) -> bool:
    """Whether ``other`` broadcasts against ``target`` along ``axis`` only (Relay's
    MatchBroadcastToLeftAxes): rank not larger, every dim 1 except the channel one."""
    so, st = static_shape(other), static_shape(target)
    if so is None or st is None or len(so) > len(st):
        return False
    lead = len(st) - len(so)
    for i, d in enumerate(so):
        if i + lead == axis:
            if d not in (1, st[axis]):
                return False
        elif d != 1:
            return False
    return True


def channel_vector(scale: SSAValue, target: SSAValue, axis: int) -> np.ndarray | None:
    """The per-channel vector of a constant ``scale`` broadcasting along ``axis`` of ``target``."""
    if not isinstance(scale.owner, ConstantOp) or not broadcasts_along(scale, target, axis):
        return None
    st = static_shape(target)
    assert st is not None
    return np.broadcast_to(np.asarray(scale.owner.numpy()).reshape(-1), (st[axis],)).copy()


def vector_for(value: SSAValue, target_rank: int, axis: int, vec: np.ndarray) -> np.ndarray:
    """``vec`` shaped to multiply ``value`` (which broadcasts along ``axis`` of a tensor of
    ``target_rank``) channel by channel."""
    s = static_shape(value)
    assert s is not None
    rank = max(len(s), target_rank - axis)
    shape = [1] * rank
    shape[rank - (target_rank - axis)] = vec.shape[0]
    return vec.reshape(shape)


@dataclass(frozen=True)
class ConvInfo:
    """Where the channels are in a conv2d's data, output and kernel."""

    in_axis: int
    out_axis: int
    kernel_o: int
    kernel_i: int
    groups: int


def conv_info(op: Operation) -> ConvInfo | None:
    """Channel axes of a float ``nn.conv2d`` with plain (unsplit) layouts, else None."""
    if not isinstance(op, RelayOp) or op.RELAY_NAME != "nn.conv2d":
        return None
    attrs = op.attrs
    data, kernel = attrs["data_layout"], attrs["kernel_layout"]
    out = attrs["out_layout"] or data
    if not all(s.isupper() and len(s) == 4 for s in (data, kernel, out)):
        return None
    if "C" not in data or "C" not in out or "O" not in kernel or "I" not in kernel:
        return None
    if not (is_float(op.operands[0]) and is_float(op.operands[1])):
        return None
    if static_shape(op.operands[1]) is None:
        return None
    return ConvInfo(data.index("C"), out.index("C"), kernel.index("O"), kernel.index("I"), attrs["groups"])


def conv_output_scale(info: ConvInfo, weight_shape: tuple[int, ...], vec: np.ndarray) -> np.ndarray:
    """A kernel-shaped multiplier scaling output channel o by vec[o]."""
    shape = [1] * len(weight_shape)
    shape[info.kernel_o] = weight_shape[info.kernel_o]
    return vec.reshape(shape)


def conv_input_scale(info: ConvInfo, weight_shape: tuple[int, ...], vec: np.ndarray) -> np.ndarray:
    """A kernel-shaped multiplier scaling input channel c by vec[c] (any ``groups``):
    output channel o of group g reads input channels g*I .. g*I+I-1."""
    n_out, n_in = weight_shape[info.kernel_o], weight_shape[info.kernel_i]
    if info.groups == 1:  # every output channel reads every input channel: one row suffices
        shape = [1] * len(weight_shape)
        shape[info.kernel_i] = n_in
        return vec.reshape(shape)
    group = np.arange(n_out) // (n_out // info.groups)
    oi = vec[group[:, None] * n_in + np.arange(n_in)[None, :]]
    if info.kernel_o > info.kernel_i:
        oi = oi.T
    shape = [1] * len(weight_shape)
    shape[info.kernel_o], shape[info.kernel_i] = n_out, n_in
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
