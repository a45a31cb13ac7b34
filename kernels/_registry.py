"""The kernel registry and the helpers every kernel shares.

A kernel is a plain function ``kernel(*inputs, out=None, **attrs)``. Single-result kernels write
into ``out`` (which may be a strided view into a larger arena) and return it, or allocate a fresh
array when ``out`` is None. Multi-result kernels take and return tuples.

A kernel of a relay dialect op declares the op's attributes as keyword-only parameters without
defaults: the defaults are the dialect's (``RelayOp.default_attrs``), bound by ``register``, so
``KERNELS["nn.conv2d"](x, w)`` convolves with the op's default strides, padding, layouts, ...
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import ml_dtypes
import numpy as np

from xrelay.dialects.dyn import DYN_OPS
from xrelay.dialects.qnn import QNN_OPS
from xrelay.dialects.relay import RELAY_OPS, RelayOp


class Kernel(Protocol):
    """The calling convention of every entry of ``KERNELS``."""

    def __call__(self, *inputs: np.ndarray, out: Any = None, **attrs: Any) -> Any: ...


KERNELS: dict[str, Kernel] = {}
"""Relay op name (without the dialect prefix) -> numpy kernel, the op's defaults bound."""


def register(
    *names: str, defaults_of: type[RelayOp] | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a kernel under one or more Relay op names.

    For a name the relay dialect defines, the entry is the kernel with the op's attribute
    defaults bound (``functools.partial``; keywords given at the call win). A kernel ahead of
    the dialect (no op of that name yet) may name an op whose attributes it shares with
    ``defaults_of``.
    """

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        for name in names:
            if name in KERNELS:
                raise ValueError(f"kernel {name!r} registered twice")
            op = RELAY_OPS.get(name) or DYN_OPS.get(name) or QNN_OPS.get(name, defaults_of)
            defaults = {} if op is None else op.default_attrs()
            kernel = _through_float32(fn, name)
            KERNELS[name] = functools.partial(kernel, **defaults) if defaults else kernel
        return fn

    return wrap


BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
"""bfloat16 arrays are ml_dtypes' (numpy has none); kernels never see them (``_through_float32``)."""

_DTYPE_ATTRS = ("dtype", "out_dtype")


def _through_float32(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``fn`` computing bfloat16 in float32, rounding to bfloat16 at the edges.

    numpy cannot compute in bfloat16, so bfloat16 inputs are widened to float32 (exact), a
    ``"bfloat16"`` dtype attribute becomes ``"float32"``, the kernel runs, and float32 results
    that stand for bfloat16 values (the op's dtype attribute says bfloat16, or it has none and
    the first float input, ``cast_like``'s second, was bfloat16) are rounded to bfloat16 to
    nearest even, as ONNX and ml_dtypes round. Other calls go straight to ``fn``.
    """
    like = 1 if name == "cast_like" else None

    @functools.wraps(fn)
    def kernel(*inputs: Any, out: Any = None, **attrs: Any) -> Any:
        bf16_in = any(getattr(x, "dtype", None) == BFLOAT16 for x in inputs)
        bf16_attr = any(attrs.get(k) == "bfloat16" for k in _DTYPE_ATTRS)
        bf16_out = out is not None and any(getattr(o, "dtype", None) == BFLOAT16 for o in _outs(out))
        if not (bf16_in or bf16_attr or bf16_out):
            return fn(*inputs, out=out, **attrs)
        wide = [x.astype(np.float32) if getattr(x, "dtype", None) == BFLOAT16 else x for x in inputs]
        given = [attrs.get(k) for k in _DTYPE_ATTRS if attrs.get(k) not in (None, "")]
        for k in _DTYPE_ATTRS:
            if attrs.get(k) == "bfloat16":
                attrs[k] = "float32"
        result = fn(*wide, **attrs)
        floats = [x for x in inputs if _is_float(x)]
        src = inputs[like] if like is not None and len(inputs) > like else (floats[0] if floats else None)
        narrow = bf16_attr or (
            getattr(src, "dtype", None) == BFLOAT16 and not any(d.startswith("float") for d in given)
        )
        multi = isinstance(result, tuple | list)
        results = [
            r.astype(BFLOAT16) if narrow and getattr(r, "dtype", None) == np.float32 else r
            for r in (result if multi else [result])
        ]
        if out is None:
            return tuple(results) if multi else results[0]
        for o, r in zip(_outs(out), results, strict=True):
            np.copyto(o, r, casting="unsafe")
        return out

    return kernel


def _is_float(x: Any) -> bool:
    dt = getattr(x, "dtype", None)
    return dt is not None and (dt == BFLOAT16 or dt.kind == "f")


def _outs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, tuple | list) else [out]


def has_kernel(name: str) -> bool:
    """Whether a kernel exists for Relay op ``name`` (e.g. ``"nn.conv2d"``)."""
    return name in KERNELS


def get_kernel(name: str) -> Kernel:
    """The kernel of Relay op ``name``; a KeyError that names the op when there is none."""
    try:
        return KERNELS[name]
    except KeyError:
        raise KeyError(f"no numpy kernel for relay op {name!r}") from None


# Relay dtype strings that have a numpy equivalent.
_DTYPES: dict[str, np.dtype] = {
    name: np.dtype(name)
    for name in (
        "float16",
        "float32",
        "float64",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "bool",
    )
}


def to_numpy_dtype(dtype: str | np.dtype | type) -> np.dtype:
    """Map a Relay dtype string (``"float32"``, ``"uint8"``, ``"bool"``...) to a numpy dtype.

    Raises ValueError for dtypes numpy cannot compute in (``bfloat16``, ``int4``, ...).
    """
    if isinstance(dtype, str):
        try:
            return _DTYPES[dtype]
        except KeyError:
            if dtype == "bfloat16":
                raise ValueError(
                    "dtype 'bfloat16' is not supported by the numpy kernels; "
                    "cast to float32 before this op"
                ) from None
            raise ValueError(f"unknown or unsupported relay dtype {dtype!r}") from None
    dt = np.dtype(dtype)
    if dt.name not in _DTYPES:
        raise ValueError(f"numpy dtype {dt} is not a supported relay dtype")
    return dt


def out_dtype_or(out_dtype: str | None, default: np.dtype) -> np.dtype:
    """Resolve Relay's ``out_dtype`` attribute: "" or None means the input dtype."""
    if out_dtype in ("", None):
        return default
    return to_numpy_dtype(out_dtype)


def check_float(name: str, x: np.ndarray) -> None:
    """Raise a clear error when an op that only makes sense on floats gets another dtype."""
    if x.dtype.kind != "f":
        raise ValueError(f"{name} requires a floating-point input, got {x.dtype}")


def compute_dtype(dt: np.dtype) -> np.dtype:
    """The dtype to accumulate in: float16 goes through float32 (numpy has no fast float16)."""
    return np.dtype(np.float32) if dt == np.float16 else dt


def check_out(out: np.ndarray, shape: tuple[int, ...], dtype: np.dtype, op: str) -> None:
    """Validate a destination buffer; kernels never resize or re-type it."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{op}: out must be a numpy array, got {type(out).__name__}")
    if out.shape != tuple(shape):
        raise ValueError(f"{op}: out has shape {out.shape}, the result has shape {tuple(shape)}")
    if out.dtype != dtype:
        raise ValueError(f"{op}: out has dtype {out.dtype}, the result has dtype {dtype}")


def emit(result: np.ndarray, out: np.ndarray | None, op: str, dtype: Any = None) -> np.ndarray:
    """Deliver ``result`` (cast to ``dtype`` if given) into ``out``, or as a fresh array."""
    dt = result.dtype if dtype is None else np.dtype(dtype)
    if out is None:
        # A fresh array that owns its memory, never a view of an input.
        res = np.array(result, dtype=dt, copy=True, order="C")
        return res
    check_out(out, result.shape, dt, op)
    np.copyto(out, result, casting="unsafe")
    return out


def emit_many(
    results: Sequence[np.ndarray], out: Sequence[np.ndarray] | None, op: str
) -> tuple[np.ndarray, ...]:
    """``emit`` for multi-result ops; ``out`` is None or one buffer per result."""
    if out is None:
        return tuple(emit(r, None, op) for r in results)
    if not isinstance(out, (tuple, list)):
        raise TypeError(f"{op}: out must be a tuple or list of {len(results)} arrays")
    if len(out) != len(results):
        raise ValueError(f"{op}: got {len(out)} output buffers for {len(results)} results")
    return tuple(emit(r, o, op) for r, o in zip(results, out))


def prepare_out(out: np.ndarray | None, shape: tuple[int, ...], dtype: Any, op: str) -> np.ndarray:
    """Return ``out`` after validation, or allocate an uninitialised result."""
    dt = np.dtype(dtype)
    if out is None:
        return np.empty(shape, dtype=dt)
    check_out(out, shape, dt, op)
    return out


def norm_axis(axis: int, ndim: int, op: str) -> int:
    """Normalise a possibly negative axis, with an error that names the op."""
    if not -ndim <= axis < ndim:
        raise ValueError(f"{op}: axis {axis} is out of range for a {ndim}-d tensor")
    return axis % ndim


def truncdiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer division rounding toward zero (C / TVM ``truncdiv``); x/0 gives 0."""
    with np.errstate(all="ignore"):
        q = np.floor_divide(a, b)
        if np.dtype(q.dtype).kind == "i":
            r = np.remainder(a, b)
            # floor and trunc differ when the remainder is non-zero and the signs differ.
            fix = (r != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0))
            q = q + fix.astype(q.dtype)
    return q
