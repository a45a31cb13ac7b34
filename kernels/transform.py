"""Shape and data-movement kernels: reshape, transpose, slicing, layouts, gathers.

Every kernel copies into its destination; with ``out=None`` the result never aliases an input.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from xrelay.dialects.relay import RelayTypeError
from xrelay.dialects.relay.ops import infer_reshape as dialect_infer_reshape
from xrelay.dialects.relay.ops import parse_layout, strided_slice_bounds

from ._registry import emit, emit_many, norm_axis, prepare_out, register, to_numpy_dtype

# ---------------------------------------------------------------------------------------------
# reshape
# ---------------------------------------------------------------------------------------------


def infer_reshape(
    shape: Sequence[int], newshape: Sequence[int], allowzero: bool = False
) -> tuple[int, ...]:
    """The result shape of Relay ``reshape(newshape)`` on a tensor of ``shape``.

    Special values: 0 copies the matching input dim (a literal 0 when ``allowzero``), -1 is
    inferred, -2 copies all remaining input dims, -3 merges the next two input dims, and
    -4 splits one input dim into the two values that follow it (one of which may be -1).
    The rules are the relay dialect's type inference (one implementation for both).
    """
    try:
        out = dialect_infer_reshape("relay.reshape", [int(d) for d in shape], [int(d) for d in newshape], allowzero)
    except RelayTypeError as e:
        raise ValueError(str(e)) from None
    return tuple(int(d) for d in out)


@register("reshape")
def reshape(
    x: np.ndarray,
    *,
    out: np.ndarray | None = None,
    newshape: Sequence[int],
    allowzero: bool,
) -> np.ndarray:
    """Relay ``reshape`` with the special values documented in :func:`infer_reshape`."""
    shape = infer_reshape(x.shape, newshape, allowzero)
    return emit(x.reshape(shape), out, "reshape")


@register("reshape_like")
def reshape_like(
    x: np.ndarray, like: np.ndarray, *, out: np.ndarray | None = None, lhs_begin: int,
    lhs_end: int | None, rhs_begin: int, rhs_end: int | None,
) -> np.ndarray:  # fmt: skip
    """Relay ``reshape_like``: ``x``'s axes [lhs_begin, lhs_end) replaced by ``like``'s
    [rhs_begin, rhs_end) (the defaults: the whole shape of ``like``)."""
    lhs = slice(lhs_begin, lhs_end)
    shape = x.shape[: lhs.indices(x.ndim)[0]] + like.shape[rhs_begin:rhs_end] + x.shape[lhs.indices(x.ndim)[1] :]
    return emit(x.reshape(shape), out, "reshape_like")


@register("nn.batch_flatten")
def batch_flatten(x: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """Relay ``nn.batch_flatten``: (d0, d1, ..., dk) -> (d0, d1 * ... * dk)."""
    if x.ndim < 1:
        raise ValueError("nn.batch_flatten needs at least a 1-d tensor")
    return emit(x.reshape(x.shape[0], -1), out, "nn.batch_flatten")


@register("transpose")
def transpose(
    x: np.ndarray, *, out: np.ndarray | None = None, axes: Sequence[int] | None
) -> np.ndarray:
    """Relay ``transpose``; ``axes=None`` reverses them; negative axes allowed."""
    if axes is not None:
        axes = tuple(norm_axis(a, x.ndim, "transpose") for a in axes)
        if sorted(axes) != list(range(x.ndim)):
            raise ValueError(f"transpose: axes {axes} are not a permutation of {x.ndim} dims")
    return emit(np.transpose(x, axes), out, "transpose")


@register("squeeze")
def squeeze(
    x: np.ndarray, *, out: np.ndarray | None = None, axis: Sequence[int] | None
) -> np.ndarray:
    """Relay ``squeeze``; ``axis=None`` drops every size-1 dim, listed axes must be size 1."""
    if axis is None:
        res = x.reshape(tuple(d for d in x.shape if d != 1))
    else:
        axes = {norm_axis(a, x.ndim, "squeeze") for a in axis}
        for a in axes:
            if x.shape[a] != 1:
                raise ValueError(f"squeeze: axis {a} has size {x.shape[a]}, not 1")
        res = x.reshape(tuple(d for i, d in enumerate(x.shape) if i not in axes))
    return emit(res, out, "squeeze")


@register("expand_dims")
def expand_dims(
    x: np.ndarray, *, out: np.ndarray | None = None, axis: int, num_newaxis: int
) -> np.ndarray:
    """Relay ``expand_dims``: insert ``num_newaxis`` size-1 dims at ``axis`` in [-ndim-1, ndim]."""
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise ValueError(f"expand_dims: axis {axis} out of range for a {x.ndim}-d tensor")
    if num_newaxis < 0:
        raise ValueError("expand_dims: num_newaxis must be >= 0")
    a = axis if axis >= 0 else axis + x.ndim + 1
    shape = x.shape[:a] + (1,) * num_newaxis + x.shape[a:]
    return emit(x.reshape(shape), out, "expand_dims")


# ---------------------------------------------------------------------------------------------
# Joining and splitting
# ---------------------------------------------------------------------------------------------


def _check_dtypes(op: str, xs: Sequence[np.ndarray]) -> None:
    if not xs:
        raise ValueError(f"{op} needs at least one tensor")
    if any(x.dtype != xs[0].dtype for x in xs):
        raise ValueError(f"{op}: all tensors must share a dtype, got {[str(x.dtype) for x in xs]}")


@register("concatenate")
def concatenate(*xs: np.ndarray, out: np.ndarray | None = None, axis: int) -> np.ndarray:
    """Relay ``concatenate``; the tensors are passed as varargs."""
    _check_dtypes("concatenate", xs)
    ax = norm_axis(axis, xs[0].ndim, "concatenate")
    shape = list(xs[0].shape)
    shape[ax] = sum(x.shape[ax] for x in xs)
    res = prepare_out(out, tuple(shape), xs[0].dtype, "concatenate")
    start = 0
    for x in xs:
        idx = [slice(None)] * res.ndim
        idx[ax] = slice(start, start + x.shape[ax])
        res[tuple(idx)] = x
        start += x.shape[ax]
    return res


@register("stack")
def stack(*xs: np.ndarray, out: np.ndarray | None = None, axis: int) -> np.ndarray:
    """Relay ``stack``: join same-shape tensors along a new axis in [-ndim-1, ndim]."""
    _check_dtypes("stack", xs)
    nd = xs[0].ndim
    if not -nd - 1 <= axis <= nd:
        raise ValueError(f"stack: axis {axis} out of range for {nd}-d tensors")
    if any(x.shape != xs[0].shape for x in xs):
        raise ValueError(f"stack: shapes differ: {[x.shape for x in xs]}")
    return emit(np.stack(xs, axis=axis), out, "stack")


@register("split")
def split(
    x: np.ndarray,
    *,
    out: Sequence[np.ndarray] | None = None,
    indices_or_sections: int | Sequence[int],
    axis: int,
) -> tuple[np.ndarray, ...]:
    """Relay ``split``: ``int`` equal sections (must divide the axis) or a tuple of split points."""
    ax = norm_axis(axis, x.ndim, "split")
    if isinstance(indices_or_sections, (int, np.integer)):
        n = int(indices_or_sections)
        if n <= 0 or x.shape[ax] % n:
            raise ValueError(f"split: {n} sections do not divide axis of size {x.shape[ax]}")
        parts = np.split(x, n, axis=ax)
    else:
        parts = np.split(x, [int(i) for i in indices_or_sections], axis=ax)
    return emit_many(parts, out, "split")


# ---------------------------------------------------------------------------------------------
# strided_slice
# ---------------------------------------------------------------------------------------------


@register("strided_slice")
def strided_slice(
    x: np.ndarray,
    *,
    out: np.ndarray | None = None,
    begin: Sequence[int],
    end: Sequence[int],
    strides: Sequence[int] | None,
    axes: Sequence[int] | None,
    slice_mode: str,
) -> np.ndarray:
    """Relay ``strided_slice``, bounds from the dialect's ``strided_slice_bounds``.

    ``begin``/``end``/``strides`` apply to ``axes`` (default: the leading axes); missing
    entries mean the whole axis and stride 1 (as Relay pads them, a single stride is not
    repeated). In ``slice_mode="size"`` ``end`` holds sizes (-1 = to the end of the axis) and
    strides are ignored.
    """
    if slice_mode not in ("end", "size"):
        raise ValueError(f"strided_slice: slice_mode must be 'end' or 'size', got {slice_mode!r}")
    if strides and any(int(s) == 0 for s in strides):
        raise ValueError("strided_slice: stride 0")
    if axes is not None:
        axes = [norm_axis(int(a), x.ndim, "strided_slice") for a in axes]
    n = x.ndim if axes is None else len(axes)
    if len(begin) > n or len(end) > n or (strides and len(strides) > n):
        raise ValueError(f"strided_slice: begin/end/strides longer than the {n} sliced axes")
    bounds = strided_slice_bounds(
        x.shape,
        [int(v) for v in begin],
        [int(v) for v in end],
        [int(v) for v in strides] if strides else None,
        axes,
        slice_mode,
    )
    assert bounds is not None  # numpy shapes are static
    index: list[slice] = []
    for b, e, s in bounds:
        count = max(0, -(-(e - b) // s)) if s > 0 else max(0, -(-(b - e) // -s))
        if count == 0:
            index.append(slice(0, 0))
        else:
            # The end index of the last element plus one step; None when it falls before 0.
            stop = b + count * s
            index.append(slice(b, stop if stop >= 0 else None, s))
    return emit(x[tuple(index)], out, "strided_slice")


# ---------------------------------------------------------------------------------------------
# layout_transform
# ---------------------------------------------------------------------------------------------

def layout_transform_array(x: np.ndarray, src_layout: str, dst_layout: str) -> np.ndarray:
    """``x`` in ``src_layout`` rearranged to ``dst_layout`` (a view where numpy allows)."""
    src = parse_layout(src_layout)
    dst = parse_layout(dst_layout)
    if len(src) != x.ndim:
        raise ValueError(
            f"layout_transform: {src_layout!r} has {len(src)} axes, tensor has {x.ndim}"
        )
    src_primal = [t for t, _ in src if t.isupper()]
    dst_primal = [t for t, _ in dst if t.isupper()]
    if sorted(src_primal) != sorted(dst_primal):
        raise ValueError(
            f"layout_transform: {src_layout!r} and {dst_layout!r} have different primal axes"
        )
    # 1. Unblock: move each sub-axis next to its primal axis, then merge the pair.
    names = [t for t, _ in src]
    order: list[int] = []
    merged: list[int] = []
    for p in src_primal:
        i = names.index(p)
        if p.lower() in names:
            j = names.index(p.lower())
            if x.shape[j] != dict(src)[p.lower()]:
                raise ValueError(
                    f"layout_transform: axis {p.lower()!r} has size {x.shape[j]}, "
                    f"layout {src_layout!r} says {dict(src)[p.lower()]}"
                )
            order += [i, j]
            merged.append(x.shape[i] * x.shape[j])
        else:
            order.append(i)
            merged.append(x.shape[i])
    prim = np.transpose(x, order).reshape(merged)
    sizes = dict(zip(src_primal, merged))
    # 2. Block: split each primal axis that has a sub-axis in dst, then permute to dst order.
    factors = {t.upper(): f for t, f in dst if t.islower()}
    split_shape: list[int] = []
    split_names: list[str] = []
    for p in src_primal:
        f = factors.get(p)
        if f:
            if sizes[p] % f:
                raise ValueError(
                    f"layout_transform: axis {p!r} of size {sizes[p]} is not divisible by {f}"
                )
            split_shape += [sizes[p] // f, f]
            split_names += [p, p.lower()]
        else:
            split_shape.append(sizes[p])
            split_names.append(p)
    blocked = prim.reshape(split_shape)
    return np.transpose(blocked, [split_names.index(t) for t, _ in dst])


@register("layout_transform")
def layout_transform(
    x: np.ndarray, *, out: np.ndarray | None = None, src_layout: str, dst_layout: str
) -> np.ndarray:
    """Relay ``layout_transform`` between permuted and blocked layouts (``NCHW8c``, ``OIHW4i8o``).

    A blocked axis must be divisible by its factor (no implicit zero padding).
    """
    return emit(layout_transform_array(x, src_layout, dst_layout), out, "layout_transform")


# ---------------------------------------------------------------------------------------------
# Broadcasting, gathers, tiling, shapes
# ---------------------------------------------------------------------------------------------


@register("broadcast_to")
def broadcast_to(
    x: np.ndarray, *, out: np.ndarray | None = None, shape: Sequence[int]
) -> np.ndarray:
    """Relay ``broadcast_to(shape)`` with numpy broadcasting rules."""
    try:
        view = np.broadcast_to(x, tuple(int(d) for d in shape))
    except ValueError:
        raise ValueError(f"broadcast_to: cannot broadcast {x.shape} to {tuple(shape)}") from None
    return emit(view, out, "broadcast_to")


@register("broadcast_to_like")
def broadcast_to_like(
    x: np.ndarray, like: np.ndarray, *, out: np.ndarray | None = None
) -> np.ndarray:
    """Relay ``broadcast_to_like``."""
    return emit(np.broadcast_to(x, like.shape), out, "broadcast_to_like")


@register("take")
def take(
    x: np.ndarray,
    indices: np.ndarray,
    *,
    out: np.ndarray | None = None,
    axis: int | None,
    batch_dims: int,
    mode: str,
) -> np.ndarray:
    """Relay ``take``: gather along ``axis`` (``None``: from the flattened tensor).

    ``mode="clip"`` clamps indices to [0, n-1] (so negatives become 0), ``"wrap"`` takes them
    modulo n, ``"fast"`` assumes they are valid (negative ones count from the end, out of range
    raises IndexError). The first ``batch_dims`` dims of ``x`` and ``indices`` are paired.
    """
    if mode not in ("clip", "wrap", "fast"):
        raise ValueError(f"take: mode must be clip, wrap or fast, got {mode!r}")
    if indices.dtype.kind not in "iu":
        raise ValueError(f"take: indices must be integers, got {indices.dtype}")
    if axis is None:
        if batch_dims:
            raise ValueError("take: batch_dims needs an axis")
        x, ax = x.reshape(-1), 0
    else:
        ax = norm_axis(axis, x.ndim, "take")
    bd = batch_dims + indices.ndim if batch_dims < 0 else batch_dims
    if bd > ax or bd > indices.ndim or x.shape[:bd] != indices.shape[:bd]:
        raise ValueError(
            f"take: batch_dims={batch_dims} does not fit x {x.shape}, indices {indices.shape}, "
            f"axis {axis}"
        )
    n = x.shape[ax]
    idx = indices.astype(np.int64)
    if mode == "clip":
        idx = np.clip(idx, 0, max(n - 1, 0))
    elif mode == "wrap":
        idx = np.mod(idx, n) if n else idx
    if bd == 0:
        res = np.take(x, idx, axis=ax)
    else:
        bshape = x.shape[:bd]
        res_shape = x.shape[:ax] + indices.shape[bd:] + x.shape[ax + 1 :]
        res = np.empty(res_shape, dtype=x.dtype)
        for b in np.ndindex(*bshape):
            res[b] = np.take(x[b], idx[b], axis=ax - bd)
    return emit(res, out, "take")


@register("tile")
def tile(x: np.ndarray, *, out: np.ndarray | None = None, reps: Sequence[int]) -> np.ndarray:
    """Relay ``tile``: shorter ``reps`` are padded with leading 1s, longer ones add leading dims."""
    return emit(np.tile(x, tuple(int(r) for r in reps)), out, "tile")


@register("shape_of")
def shape_of(x: np.ndarray, *, out: np.ndarray | None = None, dtype: str) -> np.ndarray:
    """Relay ``shape_of``: the shape as a 1-d tensor of ``dtype``."""
    return emit(np.array(x.shape, dtype=to_numpy_dtype(dtype)), out, "shape_of")


@register("ndarray_size")
def ndarray_size(
    x: np.ndarray, *, out: np.ndarray | None = None, dtype: str
) -> np.ndarray:
    """Relay ``ndarray_size``: the element count as a 0-d tensor."""
    return emit(np.array(x.size, dtype=to_numpy_dtype(dtype)), out, "ndarray_size")
