"""Kernels of ``repeat``, ``gather_nd``, ``contrib_reverse_reshape``, ``cast_like``,
``collapse_sum_like``/``collapse_sum_to``, ``argsort`` and ``slice_like`` (``ndarray_size`` is in ``transform.py``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._registry import check_out, emit, norm_axis, register, to_numpy_dtype
from .elementwise import cast
from .transform import infer_reshape


@register("repeat")
def repeat(x: np.ndarray, *, out: np.ndarray | None = None, repeats: int, axis: int) -> np.ndarray:
    """Relay ``repeat``: every element ``repeats`` times along ``axis``."""
    if repeats < 1:
        raise ValueError(f"repeat: repeats must be at least 1, got {repeats}")
    a = norm_axis(axis, x.ndim, "repeat")
    if out is not None and out.flags.c_contiguous and out.dtype == x.dtype:
        # into the destination seen with the copies on an axis of their own: a broadcast
        # copy, no temporary of the result's size
        shape = (*x.shape[: a + 1], repeats, *x.shape[a + 1 :])
        check_out(out, (*x.shape[:a], x.shape[a] * repeats, *x.shape[a + 1 :]), x.dtype, "repeat")
        np.copyto(out.reshape(shape), np.expand_dims(x, a + 1))
        return out
    return emit(np.repeat(x, repeats, axis=a), out, "repeat")


@register("gather_nd")
def gather_nd(
    x: np.ndarray,
    indices: np.ndarray,
    *,
    out: np.ndarray | None = None,
    batch_dims: int,
    index_rank: int | None,
) -> np.ndarray:
    """Relay ``gather_nd``: index tuples along ``indices``' first axis; the first
    ``batch_dims`` axes of ``x`` pair with ``indices``' axes 1..batch_dims. Negative indices
    count from the end (as ONNX's GatherND); out-of-range ones raise IndexError."""
    op = "gather_nd"
    if indices.dtype.kind not in "iu":
        raise ValueError(f"{op}: indices must be integers, got {indices.dtype}")
    m = indices.shape[0]
    b = batch_dims
    if b + m > x.ndim:
        raise ValueError(f"{op}: batch_dims {b} + index depth {m} exceed the rank of {x.shape}")
    batch = x.shape[:b]
    if indices.shape[1 : 1 + b] != batch:
        raise ValueError(f"{op}: batch axes of indices {indices.shape} and data {x.shape} differ")
    y_shape = indices.shape[1 + b :]
    idx = indices.reshape(m, int(np.prod(batch, dtype=np.int64)), -1).astype(np.int64)
    dims = np.array(x.shape[b : b + m], dtype=np.int64).reshape(m, 1, 1)
    if np.any(idx < -dims) or np.any(idx >= dims):
        raise IndexError(f"{op}: an index is out of range for data {x.shape}")
    idx = np.where(idx < 0, idx + dims, idx)
    flat = x.reshape(int(np.prod(batch, dtype=np.int64)), *x.shape[b:])
    bidx = np.arange(flat.shape[0]).reshape(-1, 1)
    res = flat[(bidx, *idx)]  # (batch, Y, rest)
    return emit(res.reshape(*batch, *y_shape, *x.shape[b + m :]), out, op)


@register("contrib_reverse_reshape")
def reverse_reshape(
    x: np.ndarray, *, out: np.ndarray | None = None, newshape: Sequence[int], allowzero: bool
) -> np.ndarray:
    """Relay ``reverse_reshape``: reshape with the special values read right to left."""
    shape = infer_reshape(x.shape[::-1], list(newshape)[::-1], allowzero)[::-1]
    return emit(x.reshape(shape), out, "contrib_reverse_reshape")


@register("cast_like")
def cast_like(x: np.ndarray, like: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """Relay ``cast_like``: ``cast`` to ``like``'s dtype."""
    return cast(x, out=out, dtype=like.dtype.name)


def _collapse(x: np.ndarray, shape: Sequence[int], op: str) -> np.ndarray:
    lead = x.ndim - len(shape)
    if lead < 0:
        raise ValueError(f"{op}: cannot collapse {x.shape} to the larger rank of {tuple(shape)}")
    res = x.sum(axis=tuple(range(lead))) if lead else x
    axes = tuple(i for i, (d, t) in enumerate(zip(res.shape, shape)) if t == 1 and d != 1)
    if axes:
        res = res.sum(axis=axes, keepdims=True)
    if res.shape != tuple(shape):
        raise ValueError(f"{op}: cannot collapse {x.shape} to {tuple(shape)}")
    return res.astype(x.dtype)


@register("collapse_sum_like")
def collapse_sum_like(x: np.ndarray, like: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """Relay ``collapse_sum_like``: sum ``x`` over the axes ``like`` was broadcast along."""
    return emit(_collapse(x, like.shape, "collapse_sum_like"), out, "collapse_sum_like")


@register("collapse_sum_to")
def collapse_sum_to(
    x: np.ndarray, shape_tensor: np.ndarray, *, out: np.ndarray | None = None, shape: Sequence[int]
) -> np.ndarray:
    """Relay ``collapse_sum_to``: sum ``x`` down to ``shape``."""
    return emit(_collapse(x, shape, "collapse_sum_to"), out, "collapse_sum_to")


@register("argsort")
def argsort(
    x: np.ndarray, *, out: np.ndarray | None = None, axis: int, is_ascend: bool, dtype: str
) -> np.ndarray:
    """Relay ``argsort`` (stable; descending order keeps equal elements in index order)."""
    ax = norm_axis(axis, x.ndim, "argsort")
    res = np.argsort(x if is_ascend else -x if x.dtype.kind != "u" else ~x, axis=ax, kind="stable")
    return emit(res.astype(to_numpy_dtype(dtype)), out, "argsort")


@register("slice_like")
def slice_like(x: np.ndarray, like: np.ndarray, *, out=None, axes) -> np.ndarray:
    """Relay ``slice_like``: ``x[:like.shape[a]]`` along each axis ``a`` of ``axes`` (all
    shared axes when None)."""
    axes = range(min(x.ndim, like.ndim)) if axes is None else [a % x.ndim for a in axes]
    index = [slice(None)] * x.ndim
    for a in axes:
        index[a] = slice(0, like.shape[a])
    return emit(np.ascontiguousarray(x[tuple(index)]), out, "slice_like")
