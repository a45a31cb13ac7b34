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


def quantize_multiplier(m: float) -> tuple[int, int]:
    """TFLite's ``QuantizeMultiplier``: ``m = M * 2**(shift - 31)`` with ``M`` a Q31 int."""
    if m == 0.0:
        return 0, 0
    q, shift = math.frexp(m)
    q_fixed = int(math.floor(abs(q) * (1 << 31) + 0.5)) * (1 if q >= 0 else -1)  # std::round
    if abs(q_fixed) == 1 << 31:
        q_fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    if shift > 30:
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
    ab = b.emit1("multiply", [a, multiplier])
    # SaturatingRoundingDoublingHighMul: (ab + nudge) / 2**31, truncating
    nudge = b.emit1("where", [b.emit1("greater_equal", [ab, np.int64(0)]), np.int64(1 << 30), np.int64(1 - (1 << 30))])
    r = b.emit1("divide", [b.emit1("add", [ab, nudge]), np.int64(1 << 31)])
    if right.any():  # RoundingDivideByPOT: round half away from zero
        mask = ((np.int64(1) << right) - 1).astype(np.int64)
        rem = b.emit1("bitwise_and", [r, mask])
        threshold = b.emit1("add", [mask >> 1, b.cast(b.emit1("less", [r, np.int64(0)]), "int64")])
        r = b.emit1("add", [b.emit1("right_shift", [r, right]), b.cast(b.emit1("greater", [rem, threshold]), "int64")])
    return b.cast(r, "int32")


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
