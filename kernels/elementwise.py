"""Elementwise kernels: unary math, binary broadcasting arithmetic, comparisons, casts.

Integer arithmetic wraps modulo 2**bits like numpy (and C) without warnings. Integer ``divide``
truncates toward zero like TVM's ``truncdiv``; division by zero gives 0 there (undefined in TVM).
Float-only ops (``exp``, ``log``, ``tanh``...) reject integer inputs with a ValueError.
float16 transcendental functions are evaluated in float32 and rounded back once.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from xrelay.dialects.relay.dtypes import dtype_bits, numpy_dtype

from ._registry import (
    broadcast_shape,
    check_float,
    check_out,
    compute_dtype,
    emit,
    narrow_wide,
    norm_axis,
    prepare_out,
    register,
    to_numpy_dtype,
    truncdiv,
)


def _ufunc_into(uf: np.ufunc, op: str, *xs: np.ndarray, out: np.ndarray | None) -> np.ndarray:
    """Apply a numpy ufunc straight into ``out`` when the dtypes line up (no temporary)."""
    with np.errstate(all="ignore"):
        if out is not None:
            res_dtype = uf.resolve_dtypes(tuple(x.dtype for x in xs) + (None,))[-1]
            if res_dtype == out.dtype:
                check_out(out, broadcast_shape(*(x.shape for x in xs)), res_dtype, op)
                uf(*xs, out=out)
                return out
        return emit(uf(*xs), out, op)


# ---------------------------------------------------------------------------------------------
# Unary
# ---------------------------------------------------------------------------------------------


def _float_unary(name: str, fn: Callable[[np.ndarray], np.ndarray]):
    """A float-only unary op; float16 goes through float32."""

    @register(name)
    def kernel(x: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
        check_float(name, x)
        with np.errstate(all="ignore"):
            if x.dtype == np.float16:
                return emit(fn(x.astype(np.float32)), out, name, np.float16)
            if out is not None and out.dtype == x.dtype and out.shape == x.shape:
                out[...] = fn(x)
                return out
            return emit(fn(x), out, name, x.dtype)

    kernel.__name__ = name.replace(".", "_")
    kernel.__doc__ = f"Relay ``{name}`` (floating-point inputs only)."
    return kernel


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # exp(-|x|) never overflows; fold the sign back in.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(x.dtype, copy=False)


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return np.reciprocal(np.sqrt(x))


_ERF: Any = None


def _erf(x: np.ndarray) -> np.ndarray:
    """Elementwise erf through a numba ufunc over ``math.erf`` (compiled on first use)."""
    global _ERF
    if _ERF is None:
        try:
            import numba

            _ERF = numba.vectorize(["float32(float32)", "float64(float64)"], cache=False)(
                lambda v: math.erf(v)
            )
        except Exception:  # pragma: no cover - numba is a declared dependency
            _ERF = np.vectorize(math.erf, otypes=[np.float64])
    return np.asarray(_ERF(x), dtype=x.dtype)


_float_unary("exp", np.exp)
_float_unary("log", np.log)
_float_unary("sqrt", np.sqrt)
_float_unary("rsqrt", _rsqrt)
_float_unary("tanh", np.tanh)
_float_unary("sigmoid", _sigmoid)
_float_unary("erf", _erf)
_float_unary("sin", np.sin)
_float_unary("cos", np.cos)
_float_unary("tan", np.tan)
_float_unary("atan", np.arctan)
_float_unary("log2", np.log2)
_float_unary("log10", np.log10)


def _rounding(name: str, fn: Callable[[np.ndarray], np.ndarray]):
    """floor/ceil/trunc/round: the identity on integers and bool."""

    @register(name)
    def kernel(x: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
        if x.dtype.kind != "f":
            return emit(x, out, name)
        with np.errstate(all="ignore"):
            return emit(fn(x), out, name, x.dtype)

    kernel.__name__ = name
    kernel.__doc__ = f"Relay ``{name}``; integers pass through unchanged."
    return kernel


def _round_half_away(x: np.ndarray) -> np.ndarray:
    """TVM ``round`` is C ``round``: halves go away from zero (numpy's rounds to even)."""
    t = np.trunc(x)
    frac = x - t  # exact in binary floating point
    return t + np.where(np.abs(frac) >= 0.5, np.sign(x), 0).astype(x.dtype)


_rounding("floor", np.floor)
_rounding("ceil", np.ceil)
_rounding("trunc", np.trunc)
_rounding("round", _round_half_away)


@register("abs")
def abs_(x: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """Relay ``abs``; abs(INT_MIN) wraps to INT_MIN; unsigned and bool are unchanged."""
    if x.dtype.kind in "ub":
        return emit(x, out, "abs")
    return _ufunc_into(np.abs, "abs", x, out=out)


@register("negative")
def negative(x: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """Relay ``negative``; unsigned values wrap modulo 2**bits."""
    if x.dtype == np.bool_:
        raise ValueError("negative is not defined on bool tensors")
    return _ufunc_into(np.negative, "negative", x, out=out)


@register("sign")
def sign(x: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """Relay ``sign``: -1, 0 or 1 in the input dtype."""
    if x.dtype == np.bool_:
        return emit(x, out, "sign")
    return _ufunc_into(np.sign, "sign", x, out=out)


@register("nn.relu")
def relu(x: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """Relay ``nn.relu``: max(x, 0); NaN stays NaN."""
    if x.dtype.kind == "u" or x.dtype == np.bool_:
        return emit(x, out, "nn.relu")
    zero = np.zeros((), dtype=x.dtype)
    # np.maximum propagates NaN, as TVM's max(x, 0) select does for NaN inputs on CPU.
    return _ufunc_into(np.maximum, "nn.relu", x, zero, out=out)


@register("nn.leaky_relu")
def leaky_relu(x: np.ndarray, *, out: np.ndarray | None = None, alpha: float) -> np.ndarray:
    """Relay ``nn.leaky_relu``: x if x > 0 else alpha * x (float inputs)."""
    check_float("nn.leaky_relu", x)
    a = np.asarray(alpha, dtype=compute_dtype(x.dtype))
    xc = x.astype(a.dtype, copy=False)
    return emit(np.where(xc > 0, xc, xc * a), out, "nn.leaky_relu", x.dtype)


@register("nn.prelu")
def prelu(
    x: np.ndarray, alpha: np.ndarray, *, out: np.ndarray | None = None, axis: int
) -> np.ndarray:
    """Relay ``nn.prelu``: x if x > 0 else alpha[c] * x, where c indexes ``axis``."""
    ax = norm_axis(axis, x.ndim, "nn.prelu")
    if alpha.ndim != 1 or alpha.shape[0] != x.shape[ax]:
        raise ValueError(f"nn.prelu: alpha must have shape ({x.shape[ax]},), got {alpha.shape}")
    shape = [1] * x.ndim
    shape[ax] = -1
    a = alpha.reshape(shape)
    return emit(np.where(x > 0, x, x * a), out, "nn.prelu", x.dtype)


@register("clip")
def clip(
    x: np.ndarray, *, out: np.ndarray | None = None, a_min: float, a_max: float
) -> np.ndarray:
    """Relay ``clip(x, a_min, a_max)``.

    For integer inputs the bounds become ceil(a_min) and floor(a_max), saturated to the dtype's
    range, so huge float bounds (like +-3.4e38) work on int8. NaN inputs stay NaN.
    """
    if x.dtype.kind in "iu":
        info = np.iinfo(x.dtype)
        lo = info.min if a_min <= info.min else min(math.ceil(a_min), info.max)
        hi = info.max if a_max >= info.max else max(math.floor(a_max), info.min)
    elif x.dtype.kind == "f":
        lo, hi = a_min, a_max
    else:
        raise ValueError(f"clip is not defined on {x.dtype} tensors")
    lo_a = np.asarray(lo, dtype=x.dtype)
    hi_a = np.asarray(hi, dtype=x.dtype)
    res = prepare_out(out, x.shape, x.dtype, "clip")
    with np.errstate(all="ignore"):
        np.minimum(np.maximum(x, lo_a), hi_a, out=res)
    return res


@register("cast")
def cast(x: np.ndarray, *, out: np.ndarray | None = None, dtype: str) -> np.ndarray:
    """Relay ``cast(x, dtype)`` between any pair of supported dtypes.

    float -> int truncates toward zero like a C cast; values outside the target range wrap
    modulo 2**bits (via int64; int4/int2 too); NaN and infinities give unspecified values (as
    in C). Anything -> bool is ``x != 0``; bool -> number gives 0/1. To the narrow floats
    (bfloat16, float8, float4) a value rounds to nearest even, as ml_dtypes converts: too large
    a value becomes infinity where the type has one, else NaN (float8_e4m3fn, the FNUZ types;
    float4_e2m1fn, which has neither, saturates); ONNX's saturating casts clip first.
    """
    dt = numpy_dtype(dtype)
    wide = narrow_wide(x.dtype)
    if wide is not None:  # exact: every narrow value is a float32 / int8 / uint8 value
        x = x.astype(wide)
    target = narrow_wide(dt)
    if target is None:
        target = dt
    with np.errstate(all="ignore"):
        if x.dtype.kind == "f" and target.kind in "iu" and target.itemsize < 8:
            # Through int64 so out-of-range values wrap deterministically instead of
            # hitting the platform's undefined float->small-int conversion.
            res = _wrap(np.trunc(x).astype(np.int64), dtype).astype(dt)
        elif target.kind in "iu" and dt != target:  # int -> int4/int2
            res = _wrap(x.astype(np.int64), dtype).astype(dt)
        elif dt == np.bool_:
            res = x != 0
        elif dt != target and x.dtype.kind != "f":  # int/bool -> a narrow float
            res = x.astype(np.float64).astype(dt)
        else:
            res = x.astype(dt)
    return emit(res, out, "cast", dt)


def _wrap(v: np.ndarray, dtype: str) -> np.ndarray:
    """int64 ``v`` wrapped modulo 2**bits into ``dtype``'s range (as an int64 array)."""
    bits = dtype_bits(dtype)
    if bits >= 64:
        return v
    if dtype.startswith("uint"):
        return v & ((1 << bits) - 1)
    half = 1 << (bits - 1)
    return ((v + half) & ((1 << bits) - 1)) - half


def _identity(name: str, extra_ok: bool = False):
    @register(name)
    def kernel(x: np.ndarray, *, out: np.ndarray | None = None, **attrs: Any) -> np.ndarray:
        if attrs and not extra_ok:
            raise TypeError(f"{name} takes no attributes, got {sorted(attrs)}")
        return emit(x, out, name)

    kernel.__name__ = name.replace(".", "_")
    kernel.__doc__ = f"Relay ``{name}``: copies its input to the output."
    return kernel


_identity("copy")
_identity("on_device", extra_ok=True)
_identity("device_copy", extra_ok=True)
_identity("annotation.stop_fusion", extra_ok=True)
_identity("annotation.compiler_begin", extra_ok=True)
_identity("annotation.compiler_end", extra_ok=True)


@register("zeros_like")
def zeros_like(x: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """Relay ``zeros_like``."""
    res = prepare_out(out, x.shape, x.dtype, "zeros_like")
    res.fill(0)  # (res[...] = 0 would make the 0 an array first: memory outside the arena)
    return res


@register("ones_like")
def ones_like(x: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """Relay ``ones_like``."""
    res = prepare_out(out, x.shape, x.dtype, "ones_like")
    res.fill(1)
    return res


@register("full_like")
def full_like(
    x: np.ndarray, fill_value: np.ndarray, *, out: np.ndarray | None = None
) -> np.ndarray:
    """Relay ``full_like(x, fill_value)``; fill_value is a 0-d tensor."""
    res = prepare_out(out, x.shape, x.dtype, "full_like")
    np.copyto(res, np.asarray(fill_value), casting="unsafe")
    return res


@register("zeros")
def zeros(*, out: np.ndarray | None = None, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Relay ``zeros(shape, dtype)``."""
    res = prepare_out(out, tuple(shape), to_numpy_dtype(dtype), "zeros")
    res.fill(0)
    return res


@register("ones")
def ones(*, out: np.ndarray | None = None, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Relay ``ones(shape, dtype)``."""
    res = prepare_out(out, tuple(shape), to_numpy_dtype(dtype), "ones")
    res.fill(1)
    return res


@register("full")
def full(
    fill_value: np.ndarray,
    *,
    out: np.ndarray | None = None,
    shape: tuple[int, ...],
    dtype: str,
) -> np.ndarray:
    """Relay ``full(fill_value, shape, dtype)``; fill_value is a 0-d tensor ("" dtype: its own)."""
    res = prepare_out(out, tuple(shape), to_numpy_dtype(dtype or np.asarray(fill_value).dtype), "full")
    np.copyto(res, np.asarray(fill_value), casting="unsafe")
    return res


# ---------------------------------------------------------------------------------------------
# Binary (numpy broadcasting; both operands share a dtype in well-typed Relay)
# ---------------------------------------------------------------------------------------------


def _same_dtype(op: str, a: np.ndarray, b: np.ndarray) -> None:
    if a.dtype != b.dtype:
        raise ValueError(f"{op}: operand dtypes differ ({a.dtype} vs {b.dtype})")


def _binary(name: str, uf: np.ufunc, *, bool_ok: bool = True):
    @register(name)
    def kernel(a: np.ndarray, b: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
        _same_dtype(name, a, b)
        if not bool_ok and a.dtype == np.bool_:
            raise ValueError(f"{name} is not defined on bool tensors")
        return _ufunc_into(uf, name, a, b, out=out)

    kernel.__name__ = name
    kernel.__doc__ = f"Relay ``{name}`` with numpy broadcasting; integers wrap."
    return kernel


_binary("add", np.add)
_binary("subtract", np.subtract, bool_ok=False)
_binary("multiply", np.multiply)
_binary("maximum", np.maximum)
_binary("minimum", np.minimum)
_binary("logical_and", np.logical_and)
_binary("logical_or", np.logical_or)
_binary("logical_xor", np.logical_xor)
_binary("bitwise_and", np.bitwise_and)
_binary("bitwise_or", np.bitwise_or)
_binary("bitwise_xor", np.bitwise_xor)


@register("logical_not")
def logical_not(x: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """Relay ``logical_not`` (bool result)."""
    return _ufunc_into(np.logical_not, "logical_not", x, out=out)


def _cmp(name: str, uf: np.ufunc):
    @register(name)
    def kernel(a: np.ndarray, b: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
        _same_dtype(name, a, b)
        return _ufunc_into(uf, name, a, b, out=out)

    kernel.__name__ = name
    kernel.__doc__ = f"Relay ``{name}``: broadcasting comparison with a bool result."
    return kernel


_cmp("equal", np.equal)
_cmp("not_equal", np.not_equal)
_cmp("less", np.less)
_cmp("less_equal", np.less_equal)
_cmp("greater", np.greater)
_cmp("greater_equal", np.greater_equal)


@register("divide")
def divide(a: np.ndarray, b: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """Relay ``divide``: true division on floats, truncating division on integers.

    Integer division by zero gives 0 (TVM leaves it undefined); INT_MIN / -1 wraps.
    """
    _same_dtype("divide", a, b)
    if a.dtype.kind == "f":
        return _ufunc_into(np.divide, "divide", a, b, out=out)
    if a.dtype == np.bool_:
        raise ValueError("divide is not defined on bool tensors")
    return emit(truncdiv(a, b), out, "divide", a.dtype)


@register("floor_divide")
def floor_divide(a: np.ndarray, b: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """Relay ``floor_divide``: floor(a / b); integer division by zero gives 0."""
    _same_dtype("floor_divide", a, b)
    if a.dtype.kind == "f":
        with np.errstate(all="ignore"):
            return emit(np.floor(a / b), out, "floor_divide", a.dtype)
    return _ufunc_into(np.floor_divide, "floor_divide", a, b, out=out)


@register("floor_mod")
def floor_mod(a: np.ndarray, b: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """Relay ``floor_mod``: the remainder has the sign of the divisor."""
    _same_dtype("floor_mod", a, b)
    return _ufunc_into(np.remainder, "floor_mod", a, b, out=out)


@register("mod")
def mod(a: np.ndarray, b: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """Relay ``mod`` (truncmod): the remainder has the sign of the dividend."""
    _same_dtype("mod", a, b)
    return _ufunc_into(np.fmod, "mod", a, b, out=out)


@register("power")
def power(a: np.ndarray, b: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """Relay ``power`` with broadcasting.

    Integer results wrap. A negative integer exponent gives the truncated real result:
    1 for base 1, +-1 for base -1, and 0 otherwise (0 also for base 0).
    """
    _same_dtype("power", a, b)
    if a.dtype.kind == "f":
        with np.errstate(all="ignore"):
            if a.dtype == np.float16:
                res = np.power(a.astype(np.float32), b.astype(np.float32))
                return emit(res, out, "power", np.float16)
            return _ufunc_into(np.power, "power", a, b, out=out)
    if a.dtype == np.bool_:
        raise ValueError("power is not defined on bool tensors")
    a_b, b_b = np.broadcast_arrays(a, b)
    neg = b_b < 0 if a.dtype.kind == "i" else np.zeros(b_b.shape, dtype=bool)
    with np.errstate(all="ignore"):
        res = np.power(a_b, np.where(neg, 0, b_b).astype(b.dtype))
    if neg.any():
        one = np.ones((), dtype=a.dtype)
        odd = (b_b % 2) != 0
        neg_val = np.where(a_b == 1, one, np.where(a_b == -1, np.where(odd, -one, one), 0))
        res = np.where(neg, neg_val.astype(a.dtype), res)
    return emit(res, out, "power", a.dtype)


@register("where")
def where(
    cond: np.ndarray, x: np.ndarray, y: np.ndarray, *, out: np.ndarray | None = None
) -> np.ndarray:
    """Relay ``where(cond, x, y)`` with three-way broadcasting; non-bool cond means != 0."""
    _same_dtype("where", x, y)
    return emit(np.where(cond.astype(bool, copy=False), x, y), out, "where", x.dtype)
