"""Reference kernels for the qnn ops and the integer ops their lowering emits.

Each qnn kernel computes Relay's meaning of the op directly (zero points subtracted, products
accumulated in int32/int64, requantization as Relay's fixed-point multiply), without going
through the lowering; ``qnn-canonicalize-ops`` is checked bit for bit against these kernels.

Fixed-point arithmetic follows TVM: ``fixed_point_multiplier_shift`` is
``GetFixedPointMultiplierShift`` (frexp, Q31 significand rounded half away from zero),
``q_multiply_shift`` is TIR's ``q_multiply_shift`` legalisation (int64 product, +2**(n-1),
arithmetic shift right: rounding half up). Requantize's rounding modes: UPWARD (half up) and
TONEAREST (half away from zero); ``compute_dtype`` "int64" (default) uses the fixed-point path,
"float32"/"float64" the floating one (``floor(x + 0.5)`` / ``round`` as on an SSE4.1 target).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from xrelay.dialects.qnn import resolve_requantize

from . import nn
from ._registry import emit, has_kernel, register, to_numpy_dtype


def _qrange(dtype: str) -> tuple[int, int]:
    info = np.iinfo(to_numpy_dtype(dtype))
    return int(info.min), int(info.max)


def _along(v: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """A scalar stays a scalar; a vector is shaped to broadcast along ``axis``."""
    v = np.asarray(v)
    if v.ndim == 0 or ndim == 0:
        return v.reshape(()) if v.size == 1 else v
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


def _axis(axis: int, ndim: int) -> int:
    return (ndim + axis if ndim > 0 else 0) if axis < 0 else axis


# ---------------------------------------------------------------------------------------------
# Fixed-point multiplication
# ---------------------------------------------------------------------------------------------


def fixed_point_multiplier_shift(multiplier: float) -> tuple[int, int]:
    """(Q31 significand, exponent) with ``multiplier = significand * 2**(exponent - 31)``."""
    if multiplier == 0.0:
        return 0, 0
    significand, exponent = math.frexp(multiplier)
    q = math.floor(abs(significand) * (1 << 31) + 0.5) * (1 if significand >= 0 else -1)
    if q == 1 << 31:
        q //= 2
        exponent += 1
    return int(q), exponent


def q_multiply_shift(
    x: np.ndarray, multiplier: np.ndarray | int, left: np.ndarray | int, right: np.ndarray | int
) -> np.ndarray:
    """``(x << left) * multiplier``, rounded half up and shifted right by ``31 + right`` (int32)."""
    with np.errstate(over="ignore"):
        v = x.astype(np.int64) << np.asarray(left, np.int64)
        v = v * np.asarray(multiplier, np.int64)
        total = np.asarray(right, np.int64) + 31
        v = (v + (np.int64(1) << (total - 1))) >> total
    return v.astype(np.int32)


def q_multiply_shift_to_nearest(
    x: np.ndarray, multiplier: np.ndarray | int, left: np.ndarray | int, right: np.ndarray | int
) -> np.ndarray:
    """As ``q_multiply_shift`` but midpoints round away from zero (Relay's TONEAREST lowering)."""
    with np.errstate(over="ignore"):
        v = x.astype(np.int64) << np.asarray(left, np.int64)
        v = v * np.asarray(multiplier, np.int64)
        total = np.asarray(right, np.int64) + 31
        pos = np.int64(1) << (total - 1)
        v = (v + np.where(v >= 0, pos, pos - 1)) >> total
    return v.astype(np.int32)


def split_shift(shift: int) -> tuple[int, int]:
    """(left, right) shifts of a ``fixed_point_multiplier_shift`` exponent."""
    return (shift, 0) if shift > 0 else (0, -shift)


@register("fixed_point_multiply")
def fixed_point_multiply(
    x: np.ndarray, *, out: np.ndarray | None = None, multiplier: int, shift: int
) -> np.ndarray:
    """Relay ``fixed_point_multiply`` (TOPI ``q_multiply_shift``, incl. its power-of-two case)."""
    if multiplier == 1 << 30:
        # 0.5 * 2**shift exactly: TVM shifts in int32 instead of multiplying
        e = shift - 1
        with np.errstate(over="ignore"):
            if e > 0:
                res = (x.astype(np.int32) << np.int32(e)).astype(np.int32)
            elif e == 0:
                res = x.astype(np.int32)
            else:
                k = np.int32(-e)
                res = ((x.astype(np.int32) + (np.int32(1) << (k - 1))) >> k).astype(np.int32)
        return emit(res, out, "fixed_point_multiply")
    left, right = split_shift(shift)
    return emit(q_multiply_shift(x, multiplier, left, right), out, "fixed_point_multiply")


@register("fixed_point_multiply_per_axis")
def fixed_point_multiply_per_axis(
    x: np.ndarray,
    multiplier: np.ndarray,
    left_shift: np.ndarray,
    right_shift: np.ndarray,
    *,
    out: np.ndarray | None = None,
    is_lshift_required: bool,
    is_rshift_required: bool,
    axes: Sequence[int],
) -> np.ndarray:
    """Relay ``fixed_point_multiply_per_axis``: per-channel multiplier and shifts along ``axes``."""
    axis = _axis(axes[0], x.ndim)
    m = _along(multiplier, axis, x.ndim)
    ls = _along(left_shift, axis, x.ndim) if is_lshift_required else 0
    rs = _along(right_shift, axis, x.ndim)
    return emit(q_multiply_shift(x, m, ls, rs), out, "fixed_point_multiply_per_axis")


def _shift(name: str, fn) -> None:
    if has_kernel(name):  # the layout issue may own the shift ops
        return

    def kernel(a: np.ndarray, b: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
        if a.dtype.kind not in "iu":  # well-typed Relay (BroadcastRel), but no shift exists
            raise TypeError(f"{name} computes on integers only, got {a.dtype} operands")
        with np.errstate(all="ignore"):
            res = fn(a, b.astype(a.dtype, copy=False))
        return emit(np.asarray(res, a.dtype), out, name)

    kernel.__name__ = name
    kernel.__doc__ = f"Relay ``{name}`` (broadcasting, integers)."
    register(name)(kernel)


_shift("left_shift", np.left_shift)
_shift("right_shift", np.right_shift)


# ---------------------------------------------------------------------------------------------
# quantize, dequantize, requantize
# ---------------------------------------------------------------------------------------------


def _round_half_away(x: np.ndarray) -> np.ndarray:
    return np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5)).astype(x.dtype)


@register("qnn.quantize")
def quantize(
    data: np.ndarray,
    scale: np.ndarray,
    zero_point: np.ndarray,
    *,
    out: np.ndarray | None = None,
    axis: int,
    out_dtype: str,
) -> np.ndarray:
    """``clip(round(data / scale) + zero_point)`` in float32, cast to ``out_dtype``."""
    a = _axis(axis, data.ndim)
    s = _along(scale.astype(np.float32), a, data.ndim)
    zp = _along(zero_point, a, data.ndim).astype(np.float32)
    lo, hi = _qrange(out_dtype)
    with np.errstate(all="ignore"):
        v = _round_half_away((data / s).astype(np.float32)) + zp
        v = np.clip(v, lo, hi)
    return emit(v.astype(to_numpy_dtype(out_dtype)), out, "qnn.quantize")


@register("qnn.dequantize")
def dequantize(
    data: np.ndarray,
    scale: np.ndarray,
    zero_point: np.ndarray,
    *,
    out: np.ndarray | None = None,
    axis: int,
    out_dtype: str,
) -> np.ndarray:
    """``(data - zero_point) * scale`` in float32 (int32 subtraction)."""
    a = _axis(axis, data.ndim)
    s = _along(scale.astype(np.float32), a, data.ndim)
    zp = _along(zero_point, a, data.ndim).astype(np.int32)
    with np.errstate(all="ignore"):
        v = (data.astype(np.int32) - zp).astype(np.float32) * s
    return emit(v.astype(to_numpy_dtype(out_dtype)), out, "qnn.dequantize")


def eigen_row_sums(v: np.ndarray) -> np.ndarray:
    """The float32 sums of the rows of ``v`` (rows x n, stored one after another from an
    aligned address) in the order of Eigen's vectorised ``sum()`` with 4-float packets
    (``qnn.dequantize_sum``'s ``eigen`` order), rows of the same alignment side by side."""
    rows, n = v.shape
    out = np.zeros(rows, np.float32)
    for h0 in range(4):
        idx = np.array([r for r in range(rows) if min((-r * n) % 4, n) == h0], np.int64)
        if not idx.size:
            continue
        x = v[idx]
        h = min(h0, n)
        packed = (n - h) // 4 * 4
        if packed == 0:  # no whole packet: first to last
            acc = x[:, 0].copy()
            for i in range(1, n):
                acc += x[:, i]
            out[idx] = acc
            continue
        paired = (n - h) // 8 * 8
        p0 = x[:, h : h + 4].copy()
        if packed > 4:
            p1 = x[:, h + 4 : h + 8].copy()
            for i in range(h + 8, h + paired, 8):
                p0 += x[:, i : i + 4]
                p1 += x[:, i + 4 : i + 8]
            p0 += p1
            if packed > paired:
                p0 += x[:, h + paired : h + packed]
        acc = (p0[:, 0] + p0[:, 2]) + (p0[:, 1] + p0[:, 3])
        for i in [*range(h), *range(h + packed, n)]:
            acc += x[:, i]
        out[idx] = acc
    return out


@register("qnn.dequantize_sum")
def dequantize_sum(
    data: np.ndarray,
    scale: np.ndarray,
    zero_point: np.ndarray,
    *,
    out: np.ndarray | None = None,
    axes: Sequence[int],
    order: str,
) -> np.ndarray:
    """``(data - zero_point) * scale`` in float32, summed over ``axes`` in ``order`` (see the op)."""
    from xrelay.dialects.qnn import DequantizeSumOp, sum_block

    first, last, trailing = sum_block(DequantizeSumOp, data.ndim, axes, order)
    shape = data.shape
    outer = math.prod(shape[:first])
    n = math.prod(shape[first : last + 1])
    inner = math.prod(shape[last + 1 :])
    with np.errstate(all="ignore"):
        v = (data.astype(np.int32) - np.int32(zero_point)).astype(np.float32) * np.float32(scale)
    v = v.reshape(outer, n, inner)
    if n == 0:
        res = np.zeros((outer, inner), np.float32)
    elif order == "eigen":
        res = eigen_row_sums(v.reshape(outer, n)).reshape(outer, 1)
    else:  # np.add.accumulate adds first to last (no pairwise blocks)
        res = np.add.accumulate(v, axis=1, dtype=np.float32)[:, -1]
    keep = [1 if first <= i <= last else d for i, d in enumerate(shape)]
    del trailing
    return emit(res.reshape(keep), out, "qnn.dequantize_sum")


def requantize_array(
    data: np.ndarray,
    input_scale: np.ndarray,
    input_zero_point: np.ndarray,
    output_scale: np.ndarray,
    output_zero_point: np.ndarray,
    axis: int = -1,
    rounding: str = "UPWARD",
    compute_dtype: str = "int64",
    out_dtype: str = "int8",
) -> np.ndarray:
    """Relay's requantize: ``out_zp + in_scale / out_scale * (data - in_zp)``, clipped."""
    rounding, compute_dtype = resolve_requantize(rounding, compute_dtype)
    a = _axis(axis, data.ndim)
    in_s = np.asarray(input_scale, np.float32)
    out_s = float(np.asarray(output_scale, np.float32))
    if out_s == 0.0:
        raise ValueError("qnn.requantize: output scale is 0")
    in_zp = np.asarray(input_zero_point, np.int32).reshape(-1)
    out_zp = int(np.asarray(output_zero_point))
    with np.errstate(all="ignore"):
        if compute_dtype == "int64":
            t = data.astype(np.int32)
            if in_zp.size > 1 or in_zp[0] != 0:
                t = t - _along(in_zp, a, data.ndim)
            if in_s.ndim == 0:
                if float(in_s) != out_s:
                    m, sh = fixed_point_multiplier_shift(float(in_s) / out_s)
                    left, right = split_shift(sh)
                    if rounding == "UPWARD":
                        t = fixed_point_multiply(t, multiplier=m, shift=sh)
                    else:
                        t = q_multiply_shift_to_nearest(t, m, left, right)
            else:
                ms, ls, rs = per_channel_multipliers(in_s, out_s)
                fn = q_multiply_shift if rounding == "UPWARD" else q_multiply_shift_to_nearest
                lsv = _along(ls, a, data.ndim) if ls.any() or rounding != "UPWARD" else 0
                t = fn(t, _along(ms, a, data.ndim), lsv, _along(rs, a, data.ndim))
            if out_zp != 0:
                t = np.int32(out_zp) + t
        else:
            ft = np.dtype(compute_dtype)
            t = data.astype(ft)
            if in_zp.size > 1 or in_zp[0] != 0:
                t = t - _along(in_zp, a, data.ndim).astype(ft)
            if in_s.ndim == 0:
                if float(in_s) != out_s:
                    t = ft.type(float(in_s) / out_s) * t
            else:
                mult = np.array([float(s) / out_s for s in in_s.reshape(-1)], ft)
                t = t * _along(mult, a, data.ndim)
            if out_zp != 0:
                t = t + ft.type(out_zp)
            t = np.floor(t + ft.type(0.5)) if rounding == "UPWARD" else _round_half_away(t)
            t = t.astype(np.int32)
    if out_dtype == "int32":
        return t.astype(np.int32)
    lo, hi = _qrange(out_dtype)
    return np.clip(t, lo, hi).astype(to_numpy_dtype(out_dtype))


def per_channel_multipliers(in_scales: np.ndarray, out_scale: float):
    """int32 vectors (multiplier, left shift, right shift) for ``in_scales / out_scale``."""
    ms, ls, rs = [], [], []
    for s in np.asarray(in_scales, np.float32).reshape(-1):
        m, sh = fixed_point_multiplier_shift(float(s) / out_scale)
        left, right = split_shift(sh)
        ms.append(m)
        ls.append(left)
        rs.append(right)
    return np.array(ms, np.int32), np.array(ls, np.int32), np.array(rs, np.int32)


@register("qnn.requantize")
def requantize(
    data: np.ndarray,
    input_scale: np.ndarray,
    input_zero_point: np.ndarray,
    output_scale: np.ndarray,
    output_zero_point: np.ndarray,
    *,
    out: np.ndarray | None = None,
    axis: int,
    rounding: str,
    compute_dtype: str,
    out_dtype: str,
) -> np.ndarray:
    """Relay ``qnn.requantize`` (see ``requantize_array``)."""
    res = requantize_array(
        data, input_scale, input_zero_point, output_scale, output_zero_point,
        axis, rounding, compute_dtype, out_dtype,
    )  # fmt: skip
    return emit(res, out, "qnn.requantize")


# ---------------------------------------------------------------------------------------------
# Convolutions, dense, batch_matmul: zero points subtracted, accumulated in out_dtype
# ---------------------------------------------------------------------------------------------


def _acc_dtype(out_dtype: str) -> np.dtype:
    return np.dtype(np.int64) if out_dtype == "int64" else np.dtype(np.int32)


def _shifted_weight(weight: np.ndarray, zp: np.ndarray, layout: str, letter: str, acc) -> np.ndarray:
    zp = np.asarray(zp)
    if zp.ndim == 1 and zp.size > 1:
        zp = _along(zp, layout.index(letter), weight.ndim)
    return weight.astype(acc) - zp.astype(acc)


def _quantized_conv(name: str, conv) -> None:
    """Register ``name`` as ``conv(data - input_zp, weight - kernel_zp)`` in ``out_dtype``."""

    def kernel(
        data, weight, input_zero_point, kernel_zero_point, input_scale, kernel_scale, *,
        out=None, out_dtype: str, kernel_layout: str, **attrs,
    ) -> np.ndarray:  # fmt: skip
        acc = _acc_dtype(out_dtype)
        x = data.astype(acc) - np.asarray(input_zero_point).astype(acc)
        w = _shifted_weight(weight, kernel_zero_point, kernel_layout, "O", acc)
        res = conv(x, w, out_dtype=str(acc), kernel_layout=kernel_layout, **attrs)
        return emit(res, out, name, out_dtype)

    kernel.__name__ = name.split(".")[1]
    kernel.__doc__ = f"``{conv.__name__}(data - input_zp, weight - kernel_zp)`` accumulated in ``out_dtype``."
    register(name)(kernel)


_quantized_conv("qnn.conv2d", nn.conv2d)
_quantized_conv("qnn.conv2d_transpose", nn.conv2d_transpose)


@register("qnn.dense")
def dense(
    data, weight, input_zero_point, kernel_zero_point, input_scale, kernel_scale, *,
    out=None, units, out_dtype: str,
) -> np.ndarray:  # fmt: skip
    """``(data - input_zp) @ (weight - kernel_zp).T`` in ``out_dtype``."""
    acc = _acc_dtype(out_dtype)
    x = data.astype(acc) - np.asarray(input_zero_point).astype(acc)
    w = _shifted_weight(weight, kernel_zero_point, "OI", "O", acc)
    with np.errstate(all="ignore"):
        res = np.matmul(x, w.T)
    return emit(res, out, "qnn.dense", out_dtype)


@register("qnn.batch_matmul")
def batch_matmul(
    x, y, x_zero_point, y_zero_point, x_scale, y_scale, *,
    out=None, out_dtype: str, transpose_a: bool, transpose_b: bool,
) -> np.ndarray:  # fmt: skip
    """``(x - x_zp) @ (y - y_zp)^T`` per batch, in int32."""
    acc = _acc_dtype(out_dtype)
    a = x.astype(acc) - np.asarray(x_zero_point).astype(acc)
    b = y.astype(acc) - np.asarray(y_zero_point).astype(acc)
    with np.errstate(all="ignore"):
        res = np.matmul(a, np.swapaxes(b, -1, -2))
    return emit(res, out, "qnn.batch_matmul", out_dtype)


# ---------------------------------------------------------------------------------------------
# add, subtract, mul, concatenate, avg_pool2d
# ---------------------------------------------------------------------------------------------


def _to_int32(t, s, zp, axis, s_out, zp_out):
    """Relay's RequantizeOrUpcast: requantize to the output's parameters (int32) or just cast."""
    same = (
        np.asarray(s).size == 1 and np.asarray(zp).size == 1
        and float(np.asarray(s, np.float32).reshape(())) == float(s_out)
        and int(np.asarray(zp).reshape(())) == int(zp_out)
    )  # fmt: skip
    if same:
        return t.astype(np.int32)
    return requantize_array(t, s, zp, s_out, zp_out, axis, "None", "None", "int32")


def _binary_axis(axis: int, ndim: int) -> int:
    return 0 if ndim <= 1 else _axis(axis, ndim)


def _add_sub(name, sign, lhs, rhs, s_l, zp_l, s_r, zp_r, s_o, zp_o, lhs_axis, rhs_axis, out):
    dtype = lhs.dtype.name
    lo, hi = _qrange(dtype)
    with np.errstate(all="ignore"):
        a = _to_int32(lhs, s_l, zp_l, _binary_axis(lhs_axis, lhs.ndim), s_o, zp_o)
        b = _to_int32(rhs, s_r, zp_r, _binary_axis(rhs_axis, rhs.ndim), s_o, zp_o)
        v = a + b if sign > 0 else a - b
        v = v - np.int32(zp_o) if sign > 0 else v + np.int32(zp_o)
    return emit(np.clip(v, lo, hi).astype(lhs.dtype), out, name)


@register("qnn.add")
def add(lhs, rhs, s_l, zp_l, s_r, zp_r, s_o, zp_o, *, out=None, lhs_axis: int, rhs_axis: int):
    """Both sides requantized to the output's parameters; ``a + b - out_zp``, clipped."""
    return _add_sub("qnn.add", 1, lhs, rhs, s_l, zp_l, s_r, zp_r, s_o, zp_o, lhs_axis, rhs_axis, out)


@register("qnn.subtract")
def subtract(lhs, rhs, s_l, zp_l, s_r, zp_r, s_o, zp_o, *, out=None, lhs_axis: int, rhs_axis: int):
    """Both sides requantized to the output's parameters; ``a - b + out_zp``, clipped."""
    return _add_sub("qnn.subtract", -1, lhs, rhs, s_l, zp_l, s_r, zp_r, s_o, zp_o, lhs_axis, rhs_axis, out)


@register("qnn.mul")
def mul(lhs, rhs, s_l, zp_l, s_r, zp_r, s_o, zp_o, *, out=None, lhs_axis: int, rhs_axis: int):
    """``(a - zpa) * (b - zpb)`` in int32, requantized from ``sa * sb`` to the output."""
    la, ra = _binary_axis(lhs_axis, lhs.ndim), _binary_axis(rhs_axis, rhs.ndim)
    with np.errstate(all="ignore"):
        a = lhs.astype(np.int32) - _along(np.asarray(zp_l, np.int32), la, lhs.ndim)
        b = rhs.astype(np.int32) - _along(np.asarray(zp_r, np.int32), ra, rhs.ndim)
        prod = a * b
        s = np.asarray(s_l, np.float32) * np.asarray(s_r, np.float32)
    res = requantize_array(prod, s, np.int32(0), s_o, zp_o, la, "None", "None", lhs.dtype.name)
    return emit(res, out, "qnn.mul")


@register("qnn.concatenate")
def concatenate(*operands: np.ndarray, out=None, axis: int) -> np.ndarray:
    """Each input requantized to the output's parameters (or cast), then joined along ``axis``."""
    *rest, s_o, zp_o = operands
    n = len(rest) // 3
    tensors, scales, zps = rest[:n], rest[n : 2 * n], rest[2 * n :]
    dtype = tensors[0].dtype
    parts = []
    for t, s, zp in zip(tensors, scales, zps):
        if float(s) == float(s_o) and int(zp) == int(zp_o):
            parts.append(t)
        else:
            parts.append(requantize_array(t, s, zp, s_o, zp_o, -1, "None", "None", dtype.name))
    return emit(np.concatenate(parts, axis=axis).astype(dtype), out, "qnn.concatenate")


@register("qnn.avg_pool2d")
def avg_pool2d(data, s_in, zp_in, s_o, zp_o, *, out=None, **attrs) -> np.ndarray:
    """Requantized to the output's parameters in int32 (or cast), ``nn.avg_pool2d``, clipped."""
    x = _to_int32(data, s_in, zp_in, -1, s_o, zp_o)
    pooled = nn.avg_pool2d(x, **attrs)
    lo, hi = _qrange(data.dtype.name)
    return emit(np.clip(pooled, lo, hi).astype(data.dtype), out, "qnn.avg_pool2d")


# ---------------------------------------------------------------------------------------------
# Simulated quantization (float in, float out)
# ---------------------------------------------------------------------------------------------

_SQNN = {1: "int8", 2: "uint8", 3: "int32"}


def _sim_params(x: np.ndarray, scale: np.ndarray, zp: np.ndarray, axis: int):
    a = _axis(axis, x.ndim)
    s, z = np.asarray(scale).reshape(-1), np.asarray(zp).reshape(-1)
    idx = np.arange(x.shape[a]) if x.ndim else np.zeros(1, np.int64)
    return _along(s[idx % s.size], a, x.ndim), _along(z[idx % z.size], a, x.ndim)


@register("qnn.simulated_quantize")
def simulated_quantize(x, dtype_code, scale, zp, *, out=None, axis: int) -> np.ndarray:
    """TOPI's simulated quantize: ``clip(round(x / s) + zp)`` to the coded dtype, kept as float."""
    code = int(dtype_code)
    if code not in _SQNN:
        return emit(x, out, "qnn.simulated_quantize")
    s, z = _sim_params(x, scale, zp, axis)
    lo, hi = _qrange(_SQNN[code])
    with np.errstate(all="ignore"):
        v = _round_half_away(x / s.astype(x.dtype)) + z.astype(x.dtype)
        v = np.minimum(np.maximum(v, x.dtype.type(lo)), x.dtype.type(hi))
    return emit(v.astype(x.dtype), out, "qnn.simulated_quantize")


@register("qnn.simulated_dequantize")
def simulated_dequantize(x, dtype_code, scale, zp, *, out=None, axis: int) -> np.ndarray:
    """TOPI's simulated dequantize: ``(x - zp) * s`` unless the code is 0 (pass through)."""
    if int(dtype_code) not in _SQNN:
        return emit(x, out, "qnn.simulated_dequantize")
    s, z = _sim_params(x, scale, zp, axis)
    with np.errstate(all="ignore"):
        v = (x - z.astype(x.dtype)) * s.astype(x.dtype)
    return emit(v.astype(x.dtype), out, "qnn.simulated_dequantize")


def fma32(a, b, c) -> np.ndarray:
    """float32 ``fma(a, b, c)``: ``a * b + c`` rounded once. The float64 product of two
    float32 values is exact; the float64 sum is rounded, and rounding it again to float32
    differs from one rounding only when the float64 sum lies exactly halfway between two
    float32 values while the exact sum does not (its error, by Knuth's two-sum, decides)."""
    a64, b64, c64 = (np.asarray(v, np.float32).astype(np.float64) for v in (a, b, c))
    p = a64 * b64
    s = p + c64
    bv = s - p
    err = (p - (s - bv)) + (c64 - bv)
    with np.errstate(over="ignore", invalid="ignore"):
        r = s.astype(np.float32)
        r64 = r.astype(np.float64)
        below = np.where(s >= r64, r, np.nextafter(r, np.float32(-np.inf)))
        above = np.nextafter(below, np.float32(np.inf))
        mid = (below.astype(np.float64) + above.astype(np.float64)) * 0.5
        fix = (s == mid) & (err != 0) & np.isfinite(s)
    return np.where(fix, np.where(err > 0, above, below), r).astype(np.float32)


@register("qnn.ort_layer_norm")
def ort_layer_norm(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, *, out: np.ndarray | None = None, epsilon: float,
) -> np.ndarray:  # fmt: skip
    """onnxruntime's float32 layer normalisation over the last axis (see the op)."""
    f = np.float32
    n = x.shape[-1]
    rows = np.ascontiguousarray(x, f).reshape(-1, n)
    # the mean: float64 additions first to last (exact enough that any order rounds alike)
    mean = (np.add.accumulate(rows, axis=1, dtype=np.float64)[:, -1] / n).astype(f)
    c = rows - mean[:, None]
    whole = n - n % 8
    lanes = np.zeros((rows.shape[0], 8), f)
    for i in range(0, whole, 8):
        lanes = fma32(c[:, i : i + 8], c[:, i : i + 8], lanes)
    half = lanes[:, :4] + lanes[:, 4:]
    quarter = half[:, :2] + half[:, 2:]
    total = quarter[:, 0] + quarter[:, 1]
    for j in range(whole, n):
        total = fma32(c[:, j], c[:, j], total)
    inv = f(1) / np.sqrt(total / f(n) + f(epsilon))
    y = fma32(c * inv[:, None], np.broadcast_to(gamma.astype(f), c.shape), np.broadcast_to(beta.astype(f), c.shape))
    return emit(y.reshape(x.shape), out, "qnn.ort_layer_norm")


_ERF_SMALL = (-5.99104969e-4, 4.99339588e-3, -2.67667342e-2, 1.12818025e-1, -3.76124859e-1, 1.28379151e-1)
_ERF_BIG = (1.72948930e-5, -3.83208680e-4, 3.88393435e-3, -2.42545605e-2, 1.06777847e-1, 6.34846687e-1, 1.28717512e-1)
_EXP_POLY = (1.38319808e-3, 8.37550033e-3, 4.16689515e-2, 1.66664466e-1, 4.99999851e-1, 1.0, 1.0)
"""MLAS's erf and exp coefficients (float32), as onnxruntime's AVX-512 GELU uses them."""


def ort_erf(t: np.ndarray) -> np.ndarray:
    """MLAS's vector erf of float32 ``t`` (``qnn.ort_gelu``'s, every step an FMA)."""
    f = np.float32
    a = np.minimum(np.abs(t).astype(f), f(3.925))
    sq = a * a
    small = np.full_like(a, f(_ERF_SMALL[0]))
    for k in _ERF_SMALL[1:]:
        small = fma32(small, sq, f(k))
    small = fma32(small, a, a)
    split = a > f(0.921875)
    bi = np.where(split, a, f(0)).astype(f)
    big = np.full_like(a, f(_ERF_BIG[0]))
    for k in _ERF_BIG[1:]:
        big = fma32(big, bi, f(k))
    big = np.maximum(f(-88.3762626647949), -fma32(big, bi, bi))
    shift = f(1.25829120e7)  # 1.5 * 2^23: adding and subtracting it rounds to an integer
    r = fma32(f(1.44269504088896341), big, shift) - shift
    fx = fma32(r, f(-6.93145752e-1), big)
    fx = fma32(r, f(-1.42860677e-6), fx)
    p = np.full_like(a, f(_EXP_POLY[0]))
    for k in _EXP_POLY[1:]:
        p = fma32(p, fx, f(k))
    e = (f(1) - p * np.exp2(r).astype(f)).astype(f)
    res = np.where(split, e, small).astype(f)
    return np.where(np.signbit(t), -res, res).astype(f)


ORT_GELU_CHUNK = 4096
"""onnxruntime's Gelu runs its kernel on chunks of this many values; each chunk's last
partial block of 16 goes through the C library's ``erff``."""


@register("qnn.ort_gelu")
def ort_gelu(x: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """onnxruntime's float32 GELU (see the op)."""
    f = np.float32
    v = np.ascontiguousarray(x, f).reshape(-1)
    t = v * f(0.70710678118654752440)
    erf = ort_erf(t)
    size = v.size
    for start in range(0, size, ORT_GELU_CHUNK):
        count = min(ORT_GELU_CHUNK, size - start)
        for i in range(start + count - count % 16, start + count):
            erf[i] = f(math.erf(float(t[i])))
    y = (f(0.5) * v) * (erf + f(1))
    return emit(y.reshape(x.shape), out, "qnn.ort_gelu")


def ort_softmax_table(input_scale: float, length: int) -> np.ndarray:
    """QLinearSoftmax's 256 float32 values ``exp((i - 255 + shift) * s_x)`` for rows of
    ``length`` values, as onnxruntime builds them: ``shift = max(0, ln(FLT_MAX / D) - 5) / s_x``,
    the quotient ``FLT_MAX / D`` in float32 (a float divided by an integer), the rest in double."""
    f = np.float32
    sx = float(f(input_scale))
    quotient = float(np.finfo(f).max / f(length))
    shift = max(0.0, math.log(quotient) - 5.0) / sx
    return np.array([math.exp((i - 255 + shift) * sx) for i in range(256)]).astype(f)


@register("qnn.ort_softmax")
def ort_softmax(
    x: np.ndarray, input_scale: np.ndarray, output_scale: np.ndarray, output_zero_point: np.ndarray, *,
    out: np.ndarray | None = None, axis: int,
) -> np.ndarray:  # fmt: skip
    """onnxruntime's uint8 QLinearSoftmax along ``axis`` (see the op)."""
    f = np.float32
    rows = np.moveaxis(np.asarray(x, np.uint8), axis, -1)
    d = rows.shape[-1]
    table = ort_softmax_table(float(np.asarray(input_scale).reshape(())), d)
    ys = f(np.floor(f(1) / f(np.asarray(output_scale).reshape(()))))
    t = table[rows.astype(np.int64) - rows.max(axis=-1, keepdims=True) + 255]
    # the float32 sum added first to last (onnxruntime's loop; numpy's sum adds pairwise)
    total = np.add.accumulate(t, axis=-1, dtype=f)[..., -1:] if d else np.zeros(t.shape[:-1] + (1,), f)
    with np.errstate(over="ignore"):  # t * ys may overflow: such values clamp to 255
        v = np.minimum((t * ys) / total, f(256))
    q = np.rint(v).astype(np.int64) + int(np.asarray(output_zero_point).reshape(()))
    y = np.moveaxis(np.minimum(q, 255).astype(np.uint8), -1, axis)
    return emit(np.ascontiguousarray(y), out, "qnn.ort_softmax")
