"""TFLite's integer arithmetic, as relay ops: what makes quantized models match bit for bit.

TFLite's int8/uint8 kernels accumulate exactly (int32) and then rescale with
``MultiplyByQuantizedMultiplier(x, M, shift)``: the real multiplier is split by
``QuantizeMultiplier`` into a Q31 significand ``M`` (rounded half away from zero) and a power of
two, and applied with two roundings -- ``SaturatingRoundingDoublingHighMul`` (the high 32 bits
of ``2 * x * M``, nudged to round half away from zero) then ``RoundingDivideByPOT`` (an
arithmetic shift that rounds half away from zero). Relay's ``qnn.requantize`` rounds once
(UPWARD or TONEAREST), which differs from TFLite on a fraction of values; the importer
therefore keeps the exact integer parts as qnn ops (``qnn.conv2d``, ``qnn.dense`` give the int32
accumulator) and writes TFLite's rescaling out as integer relay ops (int64 ``multiply``,
``where``, truncating ``divide``, ``right_shift``, ``bitwise_and``). ``multiply_by_quantized``
builds it; ``quantize_multiplier`` computes ``M`` and ``shift`` on the host as TFLite does
(``frexp`` in double precision).

Elementwise ops of one int8/uint8 input (``LOGISTIC``, ``TANH``, ``HARD_SWISH``, ...) are
imported as a 256-entry table (``take``) computed at import time from the op's definition on
every possible input, as TFLite's own kernels precompute them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from xrelay.frontends.graph_builder import GraphBuilder, Value

QRANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767), "int32": (-(2**31), 2**31 - 1)}


def quantize_multiplier(m: float, max_shift: int = 30) -> tuple[int, int]:
    """TFLite's ``QuantizeMultiplier``: ``m = M * 2**(shift - 31)`` with ``M`` a Q31 int.
    ``max_shift``: the largest ``shift`` the caller's arithmetic takes (31 for SOFTMAX's
    input multiplier, which only multiplies zero at that shift)."""
    if m == 0.0:
        return 0, 0
    q, shift = math.frexp(m)
    q_fixed = int(math.floor(abs(q) * (1 << 31) + 0.5)) * (1 if q >= 0 else -1)  # std::round
    if abs(q_fixed) == 1 << 31:
        q_fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    if shift > max_shift:
        raise ValueError(f"the rescaling multiplier {m} is too large for TFLite's fixed point")
    return q_fixed, shift


def multiply_by_quantized(
    b: GraphBuilder, x: Value, multiplier: np.ndarray, shift: np.ndarray, single_rounding: bool = False
) -> Value:
    """``MultiplyByQuantizedMultiplier(x, M, shift)`` on int32 ``x``; ``multiplier`` and ``shift``
    are int arrays broadcasting against ``x`` (scalars, or vectors along its last axis).

    ``single_rounding``: ``(x * M + 2**(30 - shift)) >> (31 - shift)``, one rounding half up,
    as TFLite's per-channel fully connected kernel rescales (checked bit for bit against it;
    its convolutions round twice)."""
    multiplier = np.asarray(multiplier, np.int64)
    shift = np.asarray(shift, np.int64)
    if single_rounding:
        total = (31 - shift).astype(np.int64)
        y = b.emit1("add", [b.emit1("multiply", [b.cast(x, "int64"), multiplier]), (np.int64(1) << (total - 1)).astype(np.int64)])
        return b.cast(b.emit1("right_shift", [y, total]), "int32")
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    a = b.cast(x, "int64")
    if left.any():
        a = b.emit1("multiply", [a, (np.int64(1) << left).astype(np.int64)])
    r = _doubling_high_mul(b, a, multiplier)
    if right.any():  # RoundingDivideByPOT: round half away from zero
        mask = ((np.int64(1) << right) - 1).astype(np.int64)
        rem = b.emit1("bitwise_and", [r, mask])
        threshold = b.emit1("add", [mask >> 1, b.cast(b.emit1("less", [r, np.int64(0)]), "int64")])
        r = b.emit1("add", [b.emit1("right_shift", [r, right]), b.cast(b.emit1("greater", [rem, threshold]), "int64")])
    return b.cast(r, "int32")


def _doubling_high_mul(b: GraphBuilder, a: Value, m: Value) -> Value:
    """gemmlowp's ``SaturatingRoundingDoublingHighMul`` on int64 values holding int32s:
    ``(a * m + nudge) / 2**31``, truncating, the nudge rounding half away from zero (the one
    saturating case, both operands -2**31, does not occur where it is used)."""
    ab = b.emit1("multiply", [a, m])
    nudge = b.emit1("where", [b.emit1("greater_equal", [ab, np.int64(0)]), np.int64(1 << 30), np.int64(1 - (1 << 30))])
    return b.emit1("divide", [b.emit1("add", [ab, nudge]), np.int64(1 << 31)])


def activation_range(act: str, scale: float, zero_point: int, dtype: str) -> tuple[int, int]:
    """TFLite's ``CalculateActivationRangeQuantized``: the fused activation's bounds as
    quantized values, within the dtype's range."""
    lo, hi = QRANGE[dtype]

    def q(v: float) -> int:
        return zero_point + _round_away(v / scale)

    if act == "RELU":
        return max(lo, q(0.0)), hi
    if act == "RELU6":
        return max(lo, q(0.0)), min(hi, q(6.0))
    if act == "RELU_N1_TO_1":
        return max(lo, q(-1.0)), min(hi, q(1.0))
    if act == "NONE":
        return lo, hi
    raise ValueError(f"fused activation {act} is not supported on quantized tensors")


def _round_away(v: float) -> int:
    """``std::round``: half away from zero."""
    return int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)


def clamp_cast(b: GraphBuilder, x: Value, lo: int, hi: int, dtype: str) -> Value:
    """int32 ``x`` clamped to [lo, hi] and cast to ``dtype``."""
    x = b.emit1("maximum", [x, np.int32(lo)])
    x = b.emit1("minimum", [x, np.int32(hi)])
    return b.cast(x, dtype)


def table_op(b: GraphBuilder, x: Value, dtype: str, fn: Callable[[np.ndarray], np.ndarray]) -> Value:
    """An elementwise op on 8-bit ``x`` as a lookup: ``fn`` maps every quantized input value
    (an int32 array of the dtype's range) to its quantized output."""
    lo, hi = QRANGE[dtype]
    table = np.asarray(fn(np.arange(lo, hi + 1, dtype=np.int32)))
    index = b.cast(x, "int32")
    if lo:
        index = b.emit1("subtract", [index, np.int32(lo)])
    return b.emit1("take", [table, index], axis=0)


# ---- TFLite's int16 fixed-point helpers (gemmlowp), on numpy int arrays ------------------


def _srdhm16(a: np.ndarray, b: int) -> np.ndarray:
    """gemmlowp ``SaturatingRoundingDoublingHighMul`` on int16 values."""
    ab = a.astype(np.int64) * b
    nudge = np.where(ab >= 0, 1 << 14, 1 - (1 << 14))
    out = np.trunc((ab + nudge) / (1 << 15)).astype(np.int64)
    return np.where((a == -32768) & (b == -32768), 32767, out)


def _sdhm16(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """TFLite's ``SaturatingDoublingHighMul`` (no rounding: truncating division)."""
    ab = a.astype(np.int64) * b.astype(np.int64)
    out = np.trunc(ab / (1 << 15)).astype(np.int64)
    return np.where((a == -32768) & (b == -32768), 32767, out)


def _rdbpot(x: np.ndarray, exponent: int) -> np.ndarray:
    """gemmlowp ``RoundingDivideByPOT``: an arithmetic shift rounding half away from zero."""
    if exponent <= 0:
        return x
    mask = (1 << exponent) - 1
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + ((x & mask) > threshold)


def _sat_left_shift16(x: np.ndarray, amount: int) -> np.ndarray:
    return np.clip(x * (1 << amount), -32768, 32767)


def _int16_multiplier(m: float) -> tuple[int, int]:
    """``QuantizeMultiplier`` then ``DownScaleInt32ToInt16Multiplier``."""
    q, shift = quantize_multiplier(m)
    if q >= 2**31 - 1 - (1 << 15):
        return 32767, shift
    return (q + (1 << 15)) >> 16, shift


def hard_swish_table(in_scale: float, in_zp: int, out_scale: float, out_zp: int, dtype: str):
    """TFLite's reference int8/uint8 ``HARD_SWISH`` (its int16 fixed-point arithmetic) as a
    function of the quantized input, for ``table_op``."""
    hires = np.float32(np.float32(1.0 / 128.0) * np.float32(in_scale))
    out_m, out_e = _int16_multiplier(float(np.float32(hires / np.float32(out_scale))))
    relu_m, relu_e = _int16_multiplier(float(np.float32(hires / np.float32(3.0 / 32768.0))))
    if out_e > 0:
        raise ValueError("HARD_SWISH: the output multiplier must not be above 1")
    lo, hi = QRANGE[dtype]

    def fn(q: np.ndarray) -> np.ndarray:
        v = (q.astype(np.int64) - in_zp) * (1 << 7)  # fits int16 for 8-bit inputs
        pre_out = _srdhm16(v, out_m)
        r = v
        if relu_e > 0:
            r = _sat_left_shift16(r, relu_e - 1)
        r = _srdhm16(r, relu_m)
        if relu_e > 0:
            r = _sat_left_shift16(r, 1)
        if relu_e < 0:
            r = _rdbpot(r, -relu_e)
        r = (r + (1 << 15)) >> 1
        out = _rdbpot(_sdhm16(r, pre_out), -out_e) + out_zp
        return np.clip(out, lo, hi)

    return fn


# ---- SOFTMAX: TFLite's reference int8/uint8 kernel ----------------------------------------

_I32_MIN, _I32_MAX = -(2**31), 2**31 - 1

def _srdhm32(a: np.ndarray, b: int) -> np.ndarray:
    """gemmlowp ``SaturatingRoundingDoublingHighMul`` on int32 values held in int64 arrays."""
    a = np.asarray(a, np.int64)
    ab = a * np.int64(b)
    v = ab + np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    out = np.where(v >= 0, v >> 31, -((-v) >> 31))  # C's division truncates
    return np.where((a == _I32_MIN) & (b == _I32_MIN), _I32_MAX, out)


def _sat_left_shift32(x: np.ndarray, amount: int) -> np.ndarray:
    """gemmlowp's saturating multiply by ``2**amount`` on int32 values."""
    return np.clip(np.asarray(x, np.int64) << amount, _I32_MIN, _I32_MAX)


def _exp_near_zero(a: np.ndarray) -> np.ndarray:
    """gemmlowp ``exp_on_interval_between_negative_one_quarter_and_0_excl`` (Q0.31 in and
    out): a Taylor expansion around -1/8."""
    c, third = 1895147668, 715827883  # exp(-1/8), 1/3
    x = a + (1 << 28)
    x2 = _srdhm32(x, x)
    x3 = _srdhm32(x2, x)
    x4 = _srdhm32(x2, x2)
    t = _rdbpot(_srdhm32(_rdbpot(x4, 2) + x3, third) + x2, 1)
    return c + _srdhm32(np.full_like(x, c), x + t)


def exp_on_negative_values(a: np.ndarray, integer_bits: int) -> np.ndarray:
    """gemmlowp ``exp_on_negative_values``: ``exp(a)`` for ``a <= 0`` in Q(integer_bits),
    as Q0.31: ``exp`` of ``a`` modulo 1/4 by ``_exp_near_zero``, times ``exp(-2**k)`` for each
    bit ``k`` of the rest."""
    a = np.asarray(a, np.int64)
    frac = 31 - integer_bits
    quarter = 1 << (frac - 2)
    a_mod = (a & (quarter - 1)) - quarter
    result = _exp_near_zero(_sat_left_shift32(a_mod, integer_bits))
    remainder = a_mod - a
    multipliers = {-2: 1672461947, -1: 1302514674, 0: 790015084, 1: 290630308, 2: 39332535, 3: 720401, 4: 242}
    for k, m in multipliers.items():
        if integer_bits > k:
            result = np.where(remainder & (1 << (frac + k)) != 0, _srdhm32(result, m), result)
    if integer_bits > 5:
        result = np.where(a < -(1 << (36 - integer_bits)), 0, result)
    return np.where(a == 0, _I32_MAX, result)


def softmax_exp_table(in_scale: float, beta: float) -> np.ndarray:
    """``exp(beta * in_scale * d)`` as TFLite's reference SOFTMAX computes it (Q0.31, int64)
    for every difference ``d = x - max(x)`` from -255 to 0 (index ``d + 255``); 0 where
    ``d`` is below the kernel's ``diff_min`` (the kernel skips those terms).

    The kernel's Prepare: the multiplier ``beta * in_scale * 2**26`` (capped at 2**31 - 1)
    split by ``QuantizeMultiplier`` into ``M`` and a left shift; ``diff_min`` is
    ``-floor(31 * 2**26 / 2**shift)``. Each difference is rescaled to Q5.26 by
    ``SaturatingRoundingDoublingHighMul(d * 2**shift, M)`` and exponentiated."""
    real = min(float(beta) * float(in_scale) * float(1 << 26), float(_I32_MAX))
    if not real > 1.0:
        raise ValueError(f"beta * input scale ({float(beta) * float(in_scale):g}) is too small for TFLite's int8 SOFTMAX")
    m, shift = quantize_multiplier(real, max_shift=31)
    diff_min = -math.floor(31.0 * (1 << 26) / (1 << shift))
    d = np.arange(-255, 1, dtype=np.int64)
    scaled = _srdhm32(np.maximum(d, diff_min) << shift, m)
    return np.where(d >= diff_min, exp_on_negative_values(scaled, 5), 0)


def softmax_quantized(b: GraphBuilder, x: Value, dtype: str, in_scale: float, beta: float) -> Value:
    """TFLite's reference int8/uint8 SOFTMAX over the last axis of ``x`` (output scale 1/256,
    zero point -128 for int8 and 0 for uint8, as the kernel assumes).

    Per row: the exponentials of ``x - max`` from ``softmax_exp_table`` (a ``take``), their
    sum in Q12.19 (each rounded by 2**-12), the reciprocal of the sum by gemmlowp's
    ``one_over_one_plus_x_for_x_in_0_1`` (the sum normalised by its leading zeros, three
    Newton-Raphson steps in Q2.29), then each output
    ``RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(exp, 1/sum), 35 - clz(sum))``
    plus the dtype's minimum. Integer relay ops in int64 (holding TFLite's int32 values)."""
    lo, hi = QRANGE[dtype]
    table = softmax_exp_table(in_scale, beta)
    x32 = b.cast(x, "int32")
    diff = b.emit1("subtract", [x32, b.emit1("max", [x32], axis=[-1], keepdims=True)])
    e = b.emit1("take", [table, b.emit1("add", [diff, np.int32(255)])], axis=0)
    # the sum in Q12.19: each term RoundingDivideByPOT(e, 12), e >= 0
    terms = b.emit1("right_shift", [b.emit1("add", [e, np.int64(1 << 11)]), np.int64(12)])
    total = b.emit1("sum", [terms], axis=[-1], keepdims=True)
    # GetReciprocal: the count of leading zeros of the int32 sum normalises it to [1, 2)
    powers = np.left_shift(np.int64(1), np.arange(32, dtype=np.int64))
    clz = b.emit1("sum", [b.cast(b.emit1("less", [total, powers]), "int64")], axis=[-1], keepdims=True)
    a = b.emit1("subtract", [b.emit1("left_shift", [total, clz]), np.int64(1 << 31)])
    # one_over_one_plus_x_for_x_in_0_1(a): half of (1 + a) rounded, then Newton-Raphson for
    # 1 / half from 48/17 - 32/17 * half, in Q2.29
    half = b.emit1("right_shift", [b.emit1("add", [a, np.int64(1 << 31)]), np.int64(1)])
    r = b.emit1("add", [_doubling_high_mul(b, half, np.int64(-1010580540)), np.int64(1515870810)])
    for _ in range(3):
        err = b.emit1("subtract", [np.int64(1 << 29), _doubling_high_mul(b, half, r)])
        r = b.emit1("add", [r, _saturate32(b, b.emit1("multiply", [_doubling_high_mul(b, r, err), np.int64(4)]))])
    scale = _saturate32(b, b.emit1("multiply", [r, np.int64(2)]))
    # the output: both factors are >= 0, so both roundings are (v + half) >> n
    p = b.emit1("right_shift", [b.emit1("add", [b.emit1("multiply", [e, scale]), np.int64(1 << 30)]), np.int64(31)])
    # (12 - clz) bits of the sum over 1.0, 31 - 8 to narrow Q0.31 to 8 bits
    exponent = b.emit1("subtract", [np.int64(12 + 31 - 8), clz])
    rounding = b.emit1("left_shift", [np.int64(1), b.emit1("subtract", [exponent, np.int64(1)])])
    y = b.emit1("right_shift", [b.emit1("add", [p, rounding]), exponent])
    y = b.emit1("add", [b.cast(y, "int32"), np.int32(lo)])
    return clamp_cast(b, y, lo, hi, dtype)


def _saturate32(b: GraphBuilder, v: Value) -> Value:
    """int64 ``v`` clamped to int32's range (gemmlowp's saturating shifts)."""
    return b.emit1("minimum", [b.emit1("maximum", [v, np.int64(_I32_MIN)]), np.int64(_I32_MAX)])


def multiply_by_quantized_numpy(x: np.ndarray, multiplier: int, shift: int) -> np.ndarray:
    """``MultiplyByQuantizedMultiplier`` (two roundings) on int32 values in int64 arrays, for
    tables computed at import."""
    left, right = max(shift, 0), max(-shift, 0)
    return _rdbpot(_srdhm32(np.asarray(x, np.int64) << left, multiplier), right)
