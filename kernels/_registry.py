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
import sys
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from xrelay.dialects.dyn import DYN_OPS
from xrelay.dialects.qnn import QNN_OPS
from xrelay.dialects.relay import RELAY_OPS, RelayOp, numpy_dtype
from xrelay.dialects.relay.dtypes import NARROW_COMPUTE


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
            kernel = fn if name in _OWN_DTYPES else _through_wide(fn, name)
            KERNELS[name] = functools.partial(kernel, **defaults) if defaults else kernel
        return fn

    return wrap


def narrow_wide(dt: object) -> np.dtype | None:
    """The numpy dtype kernels compute ml_dtypes' dtype ``dt`` (bfloat16, float8, float4,
    int4, int2) in, None for any other; kernels never see the narrow ones (``_through_wide``)."""
    if "ml_dtypes" not in sys.modules:  # no ml_dtypes dtype exists before it is imported
        return None
    return _narrow_table().get(dt)  # type: ignore[call-overload]


@functools.cache
def _narrow_table() -> dict[np.dtype, np.dtype]:
    return {numpy_dtype(name): numpy_dtype(wide) for name, wide in NARROW_COMPUTE.items()}


_DTYPE_ATTRS = ("dtype", "out_dtype")
_OWN_DTYPES = ("cast", "cast_like", "reinterpret")
"""Kernels that take every dtype as it is (they convert or view, not compute)."""


def _narrow(x: Any) -> np.dtype | None:
    dt = getattr(x, "dtype", None)
    return dt if narrow_wide(dt) is not None else None


def _through_wide(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``fn`` computing the narrow dtypes (``NARROW_COMPUTE``) in float32 / int8 / uint8,
    rounding back at the edges.

    numpy cannot compute in bfloat16, float8, int4, ..., so such inputs are widened (exactly),
    a narrow dtype attribute becomes its wide one, the kernel runs, and wide results that stand
    for narrow values (the op's dtype attribute says so, or it has none and the first narrow
    input has that dtype widened) are converted back as ml_dtypes converts:
    floats to nearest even (NaN/inf where the type has them), integers wrap. Other calls go
    straight to ``fn``. ``cast``, ``cast_like`` and ``reinterpret`` take every dtype as it is.
    """

    @functools.wraps(fn)
    def kernel(*inputs: Any, out: Any = None, **attrs: Any) -> Any:
        narrow_attr = [
            numpy_dtype(attrs[k]) for k in _DTYPE_ATTRS if attrs.get(k) in NARROW_COMPUTE
        ]
        if not (
            narrow_attr
            or any(_narrow(x) is not None for x in inputs)
            or (out is not None and any(_narrow(o) is not None for o in _outs(out)))
        ):
            return fn(*inputs, out=out, **attrs)
        wide = [x.astype(narrow_wide(x.dtype)) if _narrow(x) is not None else x for x in inputs]
        given = [attrs.get(k) for k in _DTYPE_ATTRS if attrs.get(k) not in (None, "")]
        for k in _DTYPE_ATTRS:
            if attrs.get(k) in NARROW_COMPUTE:
                attrs[k] = NARROW_COMPUTE[attrs[k]]
        result = fn(*wide, **attrs)
        if narrow_attr:
            target = narrow_attr[0]
        else:
            src = next((x for x in inputs if _narrow(x) is not None), None)
            target = None if given or _narrow(src) is None else src.dtype
        multi = isinstance(result, tuple | list)
        results = [
            _round(r, target) if target is not None and getattr(r, "dtype", None) == narrow_wide(target) else r
            for r in (result if multi else [result])
        ]
        if out is None:
            return tuple(results) if multi else results[0]
        for o, r in zip(_outs(out), results, strict=True):
            np.copyto(o, r, casting="unsafe")
        return out

    return kernel


def _round(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``x`` (float32 / int8 / uint8) as the narrow ``dtype``, as ml_dtypes converts."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(x).astype(dtype)


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


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """``np.broadcast_shapes`` in plain Python: numpy's makes an empty array per shape on
    every call, and the arena executor's runs allocate no array (``runtime.allocations``)."""
    ndim = max((len(s) for s in shapes), default=0)
    result = [1] * ndim
    for s in shapes:
        for i, d in enumerate(s, ndim - len(s)):
            r = result[i]
            if d != r and d != 1:
                if r != 1:
                    raise ValueError(f"shapes {', '.join(map(str, shapes))} do not broadcast")
                result[i] = d
    return tuple(result)


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
