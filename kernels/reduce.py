"""Reduction kernels: sum, mean, variance, max, min, prod, all, any, argmax, argmin.

``axis`` is a tuple of ints (negative allowed) or None for all axes; ``exclude=True`` reduces
over every axis NOT listed (the dialect's ``reduce_axes``: Relay's GetReduceAxes). ``sum`` and
``prod`` of integers accumulate in the input dtype and wrap like TVM; float16 accumulates in
float32. ``mean`` of integers is the exact sum (in 64 bits) divided with truncation toward zero. ``argmax``/``argmin`` return int32 indices into the
flattened reduced axes, the first occurrence unless ``select_last_index``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from xrelay.dialects.relay.ops import SumOp, reduce_axes

from ._registry import compute_dtype, emit, register, truncdiv


def _axes(x: np.ndarray, axis: int | Sequence[int] | None, exclude: bool, op: str) -> tuple[int, ...]:
    try:
        return reduce_axes(x.ndim, axis, exclude)
    except ValueError as e:
        raise ValueError(f"{op}: {e}") from None


def _reduction(name: str, fn: Callable[[np.ndarray, tuple[int, ...], bool], np.ndarray]):
    # all/any have no relay dialect op yet; they take the reductions' attributes
    @register(name, defaults_of=SumOp)
    def kernel(
        x: np.ndarray,
        *,
        out: np.ndarray | None = None,
        axis: int | Sequence[int] | None,
        keepdims: bool,
        exclude: bool,
    ) -> np.ndarray:
        axes = _axes(x, axis, exclude, name)
        with np.errstate(all="ignore"):
            res = fn(x, axes, keepdims)
        return emit(np.asarray(res), out, name, x.dtype)

    kernel.__name__ = name
    kernel.__doc__ = f"Relay ``{name}(x, axis, keepdims, exclude)``."
    return kernel


def _sum(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    if x.dtype == np.bool_:
        return np.any(x, axis=axes, keepdims=keepdims)
    return np.sum(x, axis=axes, keepdims=keepdims, dtype=compute_dtype(x.dtype))


def _prod(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    if x.dtype == np.bool_:
        return np.all(x, axis=axes, keepdims=keepdims)
    return np.prod(x, axis=axes, keepdims=keepdims, dtype=compute_dtype(x.dtype))


def _mean(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    if x.dtype.kind == "f":
        return np.mean(x, axis=axes, keepdims=keepdims, dtype=compute_dtype(x.dtype))
    if x.dtype == np.bool_:
        raise ValueError("mean is not defined on bool tensors")
    wide = np.int64 if x.dtype.kind == "i" else np.uint64
    s = np.sum(x, axis=axes, keepdims=keepdims, dtype=wide)
    return truncdiv(s, np.asarray(max(count, 1), dtype=wide))


def _extreme(fn: Callable[..., np.ndarray], op: str):
    def reduce(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
        if any(x.shape[a] == 0 for a in axes):
            raise ValueError(f"{op} over an empty axis has no identity")
        return fn(x, axis=axes, keepdims=keepdims)

    return reduce


_reduction("sum", _sum)
_reduction("prod", _prod)
_reduction("mean", _mean)
_reduction("max", _extreme(np.max, "max"))
_reduction("min", _extreme(np.min, "min"))
_reduction("all", lambda x, a, k: np.all(x, axis=a, keepdims=k))
_reduction("any", lambda x, a, k: np.any(x, axis=a, keepdims=k))


def _arg_reduce(name: str, fn: Callable[..., np.ndarray]):
    @register(name)
    def kernel(
        x: np.ndarray,
        *,
        out: np.ndarray | None = None,
        axis: int | Sequence[int] | None,
        keepdims: bool,
        exclude: bool,
        select_last_index: bool,
    ) -> np.ndarray:
        axes = _axes(x, axis, exclude, name)
        if any(x.shape[a] == 0 for a in axes):
            raise ValueError(f"{name} over an empty axis")
        kept = [a for a in range(x.ndim) if a not in axes]
        # Move the reduced axes last and flatten them, so several axes act as one.
        moved = np.transpose(x, kept + list(axes))
        flat = moved.reshape(moved.shape[: len(kept)] + (-1,))
        if select_last_index:
            n = flat.shape[-1]
            idx = n - 1 - fn(flat[..., ::-1], axis=-1)
        else:
            idx = fn(flat, axis=-1)
        if keepdims:
            idx = idx.reshape(tuple(1 if a in axes else x.shape[a] for a in range(x.ndim)))
        return emit(np.asarray(idx), out, name, np.int32)

    kernel.__name__ = name
    kernel.__doc__ = (
        f"Relay ``{name}``: int32 index into the flattened reduced axes; NaN counts as extreme."
    )
    return kernel


_arg_reduce("argmax", np.argmax)
_arg_reduce("argmin", np.argmin)


@register("variance")
def variance(
    x: np.ndarray, mean: np.ndarray, *, out=None, axis, keepdims: bool, exclude: bool, unbiased: bool
) -> np.ndarray:
    """Relay ``variance``: the sum of ``(x - mean)^2`` over the axes divided by their element
    count (minus one when ``unbiased``); float16 sums in float32, as TOPI."""
    axes = _axes(x, axis, exclude, "variance")
    count = int(np.prod([x.shape[a] for a in axes])) - (1 if unbiased else 0)
    dt = compute_dtype(x.dtype)
    with np.errstate(all="ignore"):
        d = x.astype(dt) - mean.astype(dt)
        res = np.sum(d * d, axis=axes, keepdims=keepdims) / dt.type(count)
    return emit(res, out, "variance", x.dtype)
