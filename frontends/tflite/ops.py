"""Converters of TFLite builtin operators, float and quantized.

A converter takes the importer and an ``Op`` (its tensors and parsed options) and returns the
values of the op's outputs. Tensors are channels-last (``NHWC``). An op whose input is an
8-bit quantized tensor computes as TFLite's integer kernels do (``quantized``); float ops
compute in float32. Fused activations (``RELU``, ``RELU6``, ``RELU_N1_TO_1``, ``TANH``)
follow the op: a clip in float, the quantized activation range in integers.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from xrelay.dialects.relay import numpy_dtype
from xrelay.frontends.graph_builder import Value
from xrelay.frontends.tflite.importer import Importer, Op, QParams, Tensor, converter
from xrelay.frontends.tflite.quantized import (
    QRANGE,
    activation_range,
    clamp_cast,
    hard_swish_table,
    multiply_by_quantized,
    multiply_by_quantized_numpy,
    quantize_multiplier,
    softmax_quantized,
    table_op,
)

_ACTIVATIONS = {0: "NONE", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH", 5: "SIGN_BIT"}


def _act(op: Op) -> str:
    fn = getattr(op.options, "FusedActivationFunction", None)
    return _ACTIVATIONS.get(fn(), f"#{fn()}") if fn else "NONE"


def _float_act(im: Importer, op: Op, y: Value, act: str) -> Value:
    if act == "NONE":
        return y
    if act == "RELU":
        return im.b.emit1("nn.relu", [y])
    if act == "RELU6":
        return im.b.emit1("clip", [y], a_min=0.0, a_max=6.0)
    if act == "RELU_N1_TO_1":
        return im.b.emit1("clip", [y], a_min=-1.0, a_max=1.0)
    if act == "TANH":
        return im.b.emit1("tanh", [y])
    raise op.fail(f"fused activation {act} is not supported")


def _quantized(t: Tensor | None) -> bool:
    return t is not None and t.qparams is not None and t.dtype in ("int8", "uint8", "int16")


def _qp(op: Op, t: Tensor) -> QParams:
    if t.qparams is None:
        raise op.fail(f"tensor '{t.name}' has no quantization parameters")
    return t.qparams


def _zp(op: Op, t: Tensor) -> int:
    q = _qp(op, t)
    if q.zero_point.size != 1:
        raise op.fail(f"tensor '{t.name}' must be quantized per tensor")
    return int(q.zero_point.reshape(-1)[0])


def _scale(op: Op, t: Tensor) -> float:
    q = _qp(op, t)
    if q.scale.size != 1:
        raise op.fail(f"tensor '{t.name}' must be quantized per tensor")
    return float(q.scale.reshape(-1)[0])


def _finish_quantized(
    im: Importer, op: Op, acc: Value, multipliers: np.ndarray, shifts: np.ndarray, single_rounding: bool = False
) -> Value:
    """The output stage of TFLite's integer kernels: rescale the int32 ``acc``, add the output
    zero point, clamp to the fused activation's range, narrow to the output dtype."""
    out = op.outputs[0]
    y = multiply_by_quantized(im.b, acc, multipliers, shifts, single_rounding)
    zp = _zp(op, out)
    if zp:
        y = im.b.emit1("add", [y, np.int32(zp)])
    lo, hi = activation_range(_act(op), _scale(op, out), zp, out.dtype)
    return clamp_cast(im.b, y, lo, hi, out.dtype)


def _padding(op: Op, in_hw, k_hw, strides, dilations) -> list[int]:
    """[top, left, bottom, right] for TFLite's SAME (extra padding after) or VALID."""
    if op.options.Padding() == 1:  # VALID
        return [0, 0, 0, 0]
    before, after = [], []
    for n, k, s, d in zip(in_hw, k_hw, strides, dilations):
        out = -(-n // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
        before.append(total // 2)
        after.append(total - total // 2)
    return before + after


# ============================================================================================
# Convolutions and fully connected layers
# ============================================================================================


def _conv_multipliers(op: Op, x: Tensor, w: Tensor, out: Tensor, channels: int) -> tuple[np.ndarray, np.ndarray]:
    """TFLite's ``PopulateConvolutionQuantizationParams``: per output channel,
    ``input_scale * filter_scale / output_scale`` in double precision."""
    ws = _qp(op, w).scale.astype(np.float64).reshape(-1)
    if ws.size not in (1, channels):
        raise op.fail(f"filter '{w.name}' has {ws.size} scales for {channels} output channels")
    ws = np.broadcast_to(ws, (channels,))
    in_s, out_s = float(np.float32(_scale(op, x))), float(np.float32(_scale(op, out)))
    ms, ss = zip(*(quantize_multiplier(in_s * float(s) / out_s) for s in ws))
    return np.array(ms, np.int64), np.array(ss, np.int64)


def _quantized_conv(
    im: Importer, op: Op, name: str, tensors: tuple, x: Value, kernel: Value, kernel_zp: int, channels: int, attrs: dict
) -> Value:
    """A quantized convolution ``name`` (``qnn.conv2d``, ``qnn.conv2d_transpose``) of the op's
    ``tensors`` (input, filter, bias or None): the int32 accumulator, the bias added, rescaled
    per output channel by TFLite's output stage."""
    xt, wt, bt = tensors
    acc = im.b.emit1(
        name, [x, kernel, np.int32(_zp(op, xt)), np.int32(kernel_zp), np.float32(_scale(op, xt)),
               _qp(op, wt).scale.astype(np.float32).reshape(-1)],
        out_dtype="int32", **attrs,
    )  # fmt: skip
    if bt is not None:
        acc = im.b.emit1("add", [acc, im.b.cast(im.get(bt), "int32")])
    ms, ss = _conv_multipliers(op, xt, wt, op.outputs[0], channels)
    return _finish_quantized(im, op, acc, ms, ss)


def _conv(im: Importer, op: Op, depthwise: bool) -> list[Value]:
    xt, wt, bt = op.inputs[0], op.inputs[1], op.input(2)
    o = op.options
    x = im.get(xt)
    n, h, w_, c = im.b.shape(x)
    wdata = im.const_of(op, 1, "filter")
    strides = [o.StrideH(), o.StrideW()]
    dil = [o.DilationHFactor(), o.DilationWFactor()]
    if depthwise:
        _, kh, kw, cm = wdata.shape
        kernel = wdata.reshape(kh, kw, cm, 1)  # HWOI, groups = C
        groups, channels, layout = c, cm, "HWOI"
    else:
        co, kh, kw, ci = wdata.shape
        kernel = wdata.transpose(1, 2, 3, 0)  # OHWI -> HWIO
        if c % ci:
            raise op.fail(f"input has {c} channels, the filter takes {ci} per group")
        groups, channels, layout = c // ci, co, "HWIO"
    pad = _padding(op, [h, w_], [kh, kw], strides, dil)
    attrs = dict(
        strides=strides, padding=pad, dilation=dil, groups=groups, channels=channels, kernel_size=[kh, kw],
        data_layout="NHWC", kernel_layout=layout,
    )  # fmt: skip
    wname = wt.name
    if _quantized(xt):
        wq = _qp(op, wt)
        if np.any(wq.zero_point != 0):
            raise op.fail("filters with a nonzero zero point are not supported")
        kernel_v = im.b.param(wname, np.ascontiguousarray(kernel))
        return [_quantized_conv(im, op, "qnn.conv2d", (xt, wt, bt), x, kernel_v, 0, channels, attrs)]
    y = im.b.emit1("nn.conv2d", [x, im.b.param(wname, np.ascontiguousarray(kernel))], **attrs)
    if bt is not None:
        y = im.b.emit1("nn.bias_add", [y, im.get(bt)], axis=3)
    return [_float_act(im, op, y, _act(op))]


@converter("CONV_2D")
def _conv2d(im, op):
    return _conv(im, op, depthwise=False)


@converter("DEPTHWISE_CONV_2D")
def _depthwise(im, op):
    return _conv(im, op, depthwise=True)


@converter("FULLY_CONNECTED")
def _fully_connected(im, op):
    xt, wt, bt = op.inputs[0], op.inputs[1], op.input(2)
    x = im.get(xt)
    w = im.get(wt)
    units, k = im.b.shape(w)
    xs = im.b.shape(x)
    keep = bool(op.options.KeepNumDims()) if op.options is not None else False
    x2 = im.b.reshape(x, [math.prod(xs) // k, k]) if len(xs) != 2 or xs[1] != k else x
    if _quantized(xt):
        wq = _qp(op, wt)
        if np.any(wq.zero_point != 0):
            raise op.fail("weights with a nonzero zero point are not supported")
        acc = im.b.emit1(
            "qnn.dense", [x2, w, np.int32(_zp(op, xt)), np.int32(0), np.float32(_scale(op, xt)),
                          wq.scale.astype(np.float32).reshape(-1)],
            units=units, out_dtype="int32",
        )  # fmt: skip
        if bt is not None:
            acc = im.b.emit1("add", [acc, im.b.cast(im.get(bt), "int32")])
        ms, ss = _conv_multipliers(op, xt, wt, op.outputs[0], units)
        y = _finish_quantized(im, op, acc, ms, ss, single_rounding=wq.per_channel)
    else:
        y = im.b.emit1("nn.dense", [x2, w], units=units)
        if bt is not None:
            y = im.b.emit1("nn.bias_add", [y, im.get(bt)], axis=-1)
        y = _float_act(im, op, y, _act(op))
    if keep:
        y = im.b.reshape(y, [*xs[:-1], units])
    return [y]


# ============================================================================================
# Pooling and reductions
# ============================================================================================


def _pool(im: Importer, op: Op, kind: str) -> list[Value]:
    xt = op.inputs[0]
    o = op.options
    x = im.get(xt)
    _, h, w, _ = im.b.shape(x)
    k = [o.FilterHeight(), o.FilterWidth()]
    s = [o.StrideH(), o.StrideW()]
    pad = _padding(op, [h, w], k, s, [1, 1])
    attrs: dict[str, Any] = dict(pool_size=k, strides=s, padding=pad, layout="NHWC")
    out = op.outputs[0]
    if _quantized(xt):
        lo, hi = activation_range(_act(op), _scale(op, out), _zp(op, out), out.dtype)
        if kind == "max":
            y = im.b.emit1("nn.max_pool2d", [x], **attrs)
            return [clamp_cast(im.b, im.b.cast(y, "int32"), lo, hi, out.dtype)]
        # TFLite sums the valid inputs of each window and divides by their count, rounding
        # half away from zero; the counts are known now (a window sum over ones)
        total = _window_sum(im, im.b.cast(x, "int32"), attrs)
        count = _window_sum(im, np.ones((1, h, w, im.b.shape(x)[3]), np.int32), attrs)
        return [clamp_cast(im.b, _round_div(im, total, count), lo, hi, out.dtype)]
    y = im.b.emit1(f"nn.{kind}_pool2d", [x], **attrs)
    return [_float_act(im, op, y, _act(op))]


def _window_sum(im: Importer, x32: Value, attrs: dict) -> Value:
    """Window sums of int32 ``x32`` (zero padding): a depthwise convolution with ones."""
    c = im.b.shape(x32)[3]
    k = attrs["pool_size"]
    ones = np.ones((k[0], k[1], c, 1), np.int32)
    return im.b.emit1(
        "nn.conv2d", [x32, ones], strides=attrs["strides"], padding=attrs["padding"], groups=c, channels=c,
        kernel_size=k, data_layout="NHWC", kernel_layout="HWOI",
    )  # fmt: skip


def _round_div(im: Importer, total: Value, count: Value) -> Value:
    """int32 ``total / count`` rounded half away from zero, as TFLite's integer averages."""
    half = im.b.emit1("divide", [count, np.int32(2)])
    pos = im.b.emit1("divide", [im.b.emit1("add", [total, half]), count])
    neg = im.b.emit1("divide", [im.b.emit1("subtract", [total, half]), count])
    return im.b.emit1("where", [im.b.emit1("greater", [total, np.int32(0)]), pos, neg])


@converter("AVERAGE_POOL_2D")
def _avg_pool(im, op):
    return _pool(im, op, "avg")


@converter("MAX_POOL_2D")
def _max_pool(im, op):
    return _pool(im, op, "max")


@converter("MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD")
def _reduce(im, op):
    xt = op.inputs[0]
    x = im.get(xt)
    rank = im.b.rank(x)
    axes = sorted({int(a) + rank if a < 0 else int(a) for a in im.const_of(op, 1, "axis").reshape(-1)})
    keep = bool(op.options.KeepDims()) if op.options is not None else False
    relay = {"MEAN": "mean", "SUM": "sum", "REDUCE_MAX": "max", "REDUCE_MIN": "min", "REDUCE_PROD": "prod"}[op.code]
    if not _quantized(xt):
        return [im.b.emit1(relay, [x], axis=axes, keepdims=keep)]
    out = op.outputs[0]
    if op.code in ("REDUCE_MAX", "REDUCE_MIN"):
        if (_scale(op, xt), _zp(op, xt)) != (_scale(op, out), _zp(op, out)):
            raise op.fail("a quantized max/min must keep its input's scale and zero point")
        return [im.b.emit1(relay, [x], axis=axes, keepdims=keep)]
    if op.code != "MEAN":
        raise op.fail(f"quantized {op.code} is not supported")
    # TFLite's reference integer Mean: the sum of (x - in_zp) times in_scale / out_scale in
    # fixed point, the count divided into the multiplier (shifted left by up to
    # floor(log2(count)) bits first, then divided truncating), plus out_zp. (The optimized
    # kernel the desktop interpreter picks computes the mean in float instead and can differ
    # by one; TFLite Micro runs the reference kernels.)
    n = math.prod(im.b.shape(x)[a] for a in axes)
    d = im.b.emit1("subtract", [im.b.cast(x, "int32"), np.int32(_zp(op, xt))])
    total = im.b.emit1("sum", [d], axis=axes, keepdims=keep)
    m, s = quantize_multiplier(float(np.float32(_scale(op, xt))) / float(np.float32(_scale(op, out))))
    if n > 1:
        k = min(n.bit_length() - 1, 32, 31 + s)
        m, s = (m << k) // n, s - k
    y = multiply_by_quantized(im.b, total, np.int64(m), np.int64(s))
    y = im.b.emit1("add", [y, np.int32(_zp(op, out))])
    lo, hi = QRANGE[out.dtype]
    return [clamp_cast(im.b, y, lo, hi, out.dtype)]


# ============================================================================================
# Elementwise
# ============================================================================================

_BINARY = {"ADD": "add", "SUB": "subtract", "MUL": "multiply", "DIV": "divide", "MAXIMUM": "maximum",
           "MINIMUM": "minimum", "SQUARED_DIFFERENCE": None, "POW": "power"}  # fmt: skip


@converter(*_BINARY)
def _binary(im, op):
    at, bt = op.inputs[0], op.inputs[1]
    a, b = im.get(at), im.get(bt)
    if _quantized(at):
        return [_quantized_binary(im, op, a, b)]
    if op.code == "SQUARED_DIFFERENCE":
        d = im.b.emit1("subtract", [a, b])
        return [im.b.emit1("multiply", [d, d])]
    return [_float_act(im, op, im.b.emit1(_BINARY[op.code], [a, b]), _act(op))]


def _quantized_binary(im: Importer, op: Op, a: Value, b: Value) -> Value:
    at, bt, out = op.inputs[0], op.inputs[1], op.outputs[0]
    a32 = im.b.emit1("subtract", [im.b.cast(a, "int32"), np.int32(_zp(op, at))])
    b32 = im.b.emit1("subtract", [im.b.cast(b, "int32"), np.int32(_zp(op, bt))])
    s1, s2, so = (float(np.float32(_scale(op, t))) for t in (at, bt, out))
    if op.code in ("ADD", "SUB"):
        # TFLite's Add: both inputs shifted left by 20 bits and rescaled to twice the larger
        # input scale, summed, then rescaled to the output
        left = 20
        twice_max = 2 * max(s1, s2)
        m1, sh1 = quantize_multiplier(s1 / twice_max)
        m2, sh2 = quantize_multiplier(s2 / twice_max)
        mo, sho = quantize_multiplier(twice_max / ((1 << left) * so))
        a_s = multiply_by_quantized(im.b, im.b.emit1("multiply", [a32, np.int32(1 << left)]), np.int64(m1), np.int64(sh1))
        b_s = multiply_by_quantized(im.b, im.b.emit1("multiply", [b32, np.int32(1 << left)]), np.int64(m2), np.int64(sh2))
        total = im.b.emit1("add" if op.code == "ADD" else "subtract", [a_s, b_s])
        return _finish_quantized(im, op, total, np.int64(mo), np.int64(sho))
    if op.code == "MUL":
        m, sh = quantize_multiplier(s1 * s2 / so)
        return _finish_quantized(im, op, im.b.emit1("multiply", [a32, b32]), np.int64(m), np.int64(sh))
    raise op.fail(f"quantized {op.code} is not supported")


_UNARY = {
    "LOGISTIC": lambda b, x: b.emit1("sigmoid", [x]),
    "TANH": lambda b, x: b.emit1("tanh", [x]),
    "RELU": lambda b, x: b.emit1("nn.relu", [x]),
    "RELU6": lambda b, x: b.emit1("clip", [x], a_min=0.0, a_max=6.0),
    "RELU_N1_TO_1": lambda b, x: b.emit1("clip", [x], a_min=-1.0, a_max=1.0),
    "EXP": lambda b, x: b.emit1("exp", [x]),
    "SQRT": lambda b, x: b.emit1("sqrt", [x]),
    "RSQRT": lambda b, x: b.emit1("rsqrt", [x]),
    "ABS": lambda b, x: b.emit1("abs", [x]),
    "NEG": lambda b, x: b.emit1("negative", [x]),
    "ELU": lambda b, x: b.emit1(
        "where", [b.emit1("less", [x, np.float32(0)]), b.emit1("subtract", [b.emit1("exp", [x]), np.float32(1)]), x]
    ),
    "HARD_SWISH": lambda b, x: b.emit1(
        "multiply",
        [x, b.emit1("divide", [b.emit1("clip", [b.emit1("add", [x, np.float32(3)])], a_min=0.0, a_max=6.0), np.float32(6)])],
    ),
}

def _gelu(b, x, approximate: bool):
    if approximate:  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        cube = b.emit1("multiply", [b.emit1("multiply", [x, x]), x])
        inner = b.emit1("add", [x, b.emit1("multiply", [cube, np.float32(0.044715)])])
        t = b.emit1("tanh", [b.emit1("multiply", [inner, np.float32(math.sqrt(2 / math.pi))])])
        return b.emit1("multiply", [b.emit1("multiply", [x, np.float32(0.5)]), b.emit1("add", [t, np.float32(1)])])
    e = b.emit1("erf", [b.emit1("multiply", [x, np.float32(math.sqrt(0.5))])])
    return b.emit1("multiply", [b.emit1("multiply", [x, np.float32(0.5)]), b.emit1("add", [e, np.float32(1)])])


def _gelu_numpy(v: np.ndarray, approximate: bool) -> np.ndarray:
    """TFLite's ``GeluTransform``/``GeluTransformApproximate`` in float32 (its tables: a few
    hundred values, so ``math.erfc`` element by element, rounded to float32 as ``erfcf``)."""
    v = v.astype(np.float32)
    if approximate:
        inner = np.float32(math.sqrt(2 / math.pi)) * (v + np.float32(0.044715) * v * v * v)
        return np.float32(0.5) * v * (np.float32(1) + np.tanh(inner))
    arg = v * np.float32(-math.sqrt(0.5))
    erfc = np.array([math.erfc(float(a)) for a in arg.ravel()], np.float32).reshape(arg.shape)
    return np.float32(0.5) * v * erfc


_UNARY_NUMPY = {
    "LOGISTIC": lambda v: 1.0 / (1.0 + np.exp(-v)),
    "TANH": np.tanh,
    "RELU": lambda v: np.maximum(v, 0),
    "RELU6": lambda v: np.clip(v, 0, 6),
    "RELU_N1_TO_1": lambda v: np.clip(v, -1, 1),
    "HARD_SWISH": lambda v: v * np.clip(v + 3, 0, 6) / 6,
    "ELU": lambda v: np.where(v < 0, np.expm1(v), v),
}


@converter(*_UNARY)
def _unary(im, op):
    xt = op.inputs[0]
    x = im.get(xt)
    if not _quantized(xt):
        return [_UNARY[op.code](im.b, x)]
    if op.code not in _UNARY_NUMPY:
        raise op.fail(f"quantized {op.code} is not supported")
    if op.code == "HARD_SWISH":  # TFLite computes it in int16 fixed point, not by a table
        out = op.outputs[0]
        fn = hard_swish_table(_scale(op, xt), _zp(op, xt), _scale(op, out), _zp(op, out), out.dtype)
        return [im.b.cast(table_op(im.b, x, xt.dtype, fn), out.dtype)]
    # TFLite's lookup tables: dequantize in float, apply, requantize rounding half away
    return [_float_table(im, op, x, _UNARY_NUMPY[op.code])]


@converter("SOFTMAX")
def _softmax(im, op):
    xt, out = op.inputs[0], op.outputs[0]
    x = im.get(xt)
    beta = float(op.options.Beta()) if op.options is not None else 1.0
    if _quantized(xt):
        if xt.dtype not in ("int8", "uint8") or out.dtype != xt.dtype:
            raise op.fail(f"quantized SOFTMAX from {xt.dtype} to {out.dtype} is not supported (int8 and uint8 are)")
        if out.dtype == "int8" and (_zp(op, out) != -128 or abs(_scale(op, out) - 1 / 256) > 0.001 / 256):
            raise op.fail("an int8 SOFTMAX output must have scale 1/256 and zero point -128 (as TFLite requires)")
        return [softmax_quantized(im.b, x, xt.dtype, _scale(op, xt), beta)]
    if beta != 1.0:
        x = im.b.emit1("multiply", [x, np.float32(beta)])
    return [im.b.emit1("nn.softmax", [x], axis=-1)]


@converter("QUANTIZE")
def _quantize(im, op):
    xt, out = op.inputs[0], op.outputs[0]
    x = im.get(xt)
    if _quantized(xt):  # requantize between 8-bit types
        q = _qp(op, xt)
        m, s = quantize_multiplier(float(np.float32(q.scale.reshape(-1)[0])) / float(np.float32(_scale(op, out))))
        d = im.b.emit1("subtract", [im.b.cast(x, "int32"), np.int32(_zp(op, xt))])
        y = multiply_by_quantized(im.b, d, np.int64(m), np.int64(s))
        y = im.b.emit1("add", [y, np.int32(_zp(op, out))])
        lo, hi = QRANGE[out.dtype]
        return [clamp_cast(im.b, y, lo, hi, out.dtype)]
    # float -> int: round(x / scale) + zp, rounding half away from zero as TFLite's
    # AffineQuantize does (std::round)
    q = _qp(op, out)
    if q.per_channel:
        raise op.fail("per-channel QUANTIZE of activations is not supported")
    r = im.b.emit1("multiply", [x, np.float32(1.0 / float(q.scale.reshape(-1)[0]))])
    r = im.b.emit1("multiply", [im.b.emit1("sign", [r]), im.b.emit1("floor", [im.b.emit1("add", [im.b.emit1("abs", [r]), np.float32(0.5)])])])
    y = im.b.emit1("add", [im.b.cast(r, "int32"), np.int32(_zp(op, out))])
    lo, hi = QRANGE[out.dtype]
    return [clamp_cast(im.b, y, lo, hi, out.dtype)]


@converter("DEQUANTIZE")
def _dequantize(im, op):
    xt = op.inputs[0]
    x = im.get(xt)
    if xt.dtype == "float16":
        return [im.b.cast(x, "float32")]
    q = _qp(op, xt)
    if q.per_channel:
        raise op.fail("per-channel DEQUANTIZE is not supported")
    d = im.b.emit1("subtract", [im.b.cast(x, "int32"), np.int32(_zp(op, xt))])
    return [im.b.emit1("multiply", [im.b.cast(d, "float32"), np.float32(q.scale.reshape(-1)[0])])]


# ============================================================================================
# Shapes
# ============================================================================================


@converter("RESHAPE")
def _reshape(im, op):
    xt, out = op.inputs[0], op.outputs[0]
    x = im.get(xt)
    if not out.dynamic:
        return [im.b.reshape(x, im.reshaped(op, x))]
    # an axis the converter left unknown (a product with the batch, say): the new shape is
    # the shape operand, known now because shapes are static here
    new = im.get(op.inputs[1], as_param=False) if op.input(1) is not None else None
    if not isinstance(new, np.ndarray):
        raise op.fail("the new shape is known only at run time")
    shape = [int(d) for d in new.reshape(-1)]
    if shape.count(-1) == 1:
        rest = math.prod(d for d in shape if d != -1)
        shape[shape.index(-1)] = math.prod(im.b.shape(x)) // rest if rest else 0
    return [im.b.reshape(x, shape)]


# SQUEEZE, EXPAND_DIMS, a STRIDED_SLICE's shrunk axes and UNPACK drop or add size-1 axes: the
# result's shape follows from the input's here (whatever its batch), not from the model's


@converter("SQUEEZE")
def _squeeze(im, op):
    x = im.get(op.inputs[0])
    shape = im.b.shape(x)
    dims = [int(d) for d in op.options.SqueezeDimsAsNumpy()] if op.options is not None and op.options.SqueezeDimsLength() else []
    drop = {_axis(d, len(shape)) for d in dims} if dims else {k for k, d in enumerate(shape) if d == 1}
    return [im.b.reshape(x, [d for k, d in enumerate(shape) if k not in drop])]


@converter("EXPAND_DIMS")
def _expand_dims(im, op):
    x = im.get(op.inputs[0])
    shape = list(im.b.shape(x))
    axis = int(np.asarray(im.const_of(op, 1, "axis")).reshape(()))
    axis = axis + len(shape) + 1 if axis < 0 else axis
    return [im.b.reshape(x, [*shape[:axis], 1, *shape[axis:]])]


@converter("TRANSPOSE")
def _transpose(im, op):
    perm = [int(p) for p in im.const_of(op, 1, "perm").reshape(-1)]
    return [im.b.emit1("transpose", [im.get(op.inputs[0])], axes=perm)]


@converter("CONCATENATION")
def _concat(im, op):
    out = op.outputs[0]
    axis = int(op.options.Axis())
    # shape arithmetic (a SHAPE's slice joined with constants: Keras's UpSampling2D) folds when
    # every input is known, so that the RESHAPE reading it has its shape at import
    folds = out.dtype in ("int32", "int64") and all(
        isinstance(im.vals[t.index], np.ndarray) if t.index in im.vals else t.data is not None for t in op.inputs
    )
    vals = [im.get(t, as_param=not folds) for t in op.inputs]
    if _quantized(out):
        # TFLite rescales each input to the output's parameters unless they already match
        parts = []
        for t, v in zip(op.inputs, vals):
            if (_scale(op, t), _zp(op, t)) == (_scale(op, out), _zp(op, out)):
                parts.append(v)
                continue
            m, s = quantize_multiplier(float(np.float32(_scale(op, t))) / float(np.float32(_scale(op, out))))
            d = im.b.emit1("subtract", [im.b.cast(v, "int32"), np.int32(_zp(op, t))])
            y = im.b.emit1("add", [multiply_by_quantized(im.b, d, np.int64(m), np.int64(s)), np.int32(_zp(op, out))])
            lo, hi = QRANGE[out.dtype]
            parts.append(clamp_cast(im.b, y, lo, hi, out.dtype))
        return [im.b.emit1("concatenate", parts, axis=axis)]
    return [_float_act(im, op, im.b.emit1("concatenate", vals, axis=axis), _act(op))]


@converter("PAD", "PADV2")
def _pad(im, op):
    xt = op.inputs[0]
    x = im.get(xt)
    widths = [[int(a), int(b)] for a, b in im.const_of(op, 1, "paddings").reshape(-1, 2)]
    if op.input(2) is not None:
        value = np.asarray(im.const_of(op, 2, "constant_values")).reshape(()).astype(numpy_dtype(xt.dtype))
    elif _quantized(xt):
        value = np.asarray(_zp(op, xt), numpy_dtype(xt.dtype))  # pads with the real value 0
    else:
        value = np.zeros((), numpy_dtype(xt.dtype))
    return [im.b.emit1("nn.pad", [x, value], pad_width=widths)]


@converter("MIRROR_PAD")
def _mirror_pad(im, op):
    x = im.get(op.inputs[0])
    widths = [[int(a), int(b)] for a, b in im.const_of(op, 1, "paddings").reshape(-1, 2)]
    mode = "reflect" if op.options.Mode() == 0 else "edge"
    if mode == "edge":
        raise op.fail("SYMMETRIC mirror padding is not supported")
    value = np.zeros((), numpy_dtype(op.inputs[0].dtype))
    return [im.b.emit1("nn.pad", [x, value], pad_width=widths, pad_mode=mode)]


@converter("STRIDED_SLICE")
def _strided_slice(im, op):
    x = im.get(op.inputs[0])
    o = op.options
    if o.EllipsisMask() or o.NewAxisMask():
        raise op.fail("ellipsis and new-axis masks are not supported")
    shape = im.b.shape(x)
    begin = [int(v) for v in im.const_of(op, 1, "begin")]
    end = [int(v) for v in im.const_of(op, 2, "end")]
    strides = [int(v) for v in im.const_of(op, 3, "strides")]
    for i in range(len(begin)):
        if o.BeginMask() >> i & 1:
            begin[i] = 0 if strides[i] > 0 else shape[i] - 1
        if o.EndMask() >> i & 1:
            end[i] = shape[i] if strides[i] > 0 else -shape[i] - 1
    y = im.b.emit1("strided_slice", [x], begin=begin, end=end, strides=strides)
    return [im.b.reshape(y, [d for k, d in enumerate(im.b.shape(y)) if not o.ShrinkAxisMask() >> k & 1])]


@converter("CAST")
def _cast(im, op):
    return [im.b.cast(im.get(op.inputs[0]), op.outputs[0].dtype)]


@converter("SHAPE")
def _shape(im, op):
    # shapes are static: known now, so the shape arithmetic after it folds
    shape = im.b.shape(im.get(op.inputs[0]))
    return [np.asarray(shape, numpy_dtype(op.outputs[0].dtype))]


@converter("PACK")
def _pack(im, op):
    axis = int(op.options.Axis())
    vals = [im.get(t, as_param=False) for t in op.inputs]
    rank = im.b.rank(vals[0]) + 1
    return [im.b.emit1("stack", vals, axis=axis + rank if axis < 0 else axis)]


# ============================================================================================
# Activations with options
# ============================================================================================


@converter("GELU")
def _gelu_op(im, op):
    xt = op.inputs[0]
    x = im.get(xt)
    approximate = bool(op.options.Approximate()) if op.options is not None else False
    if not _quantized(xt):
        return [_gelu(im.b, x, approximate)]
    return [_float_table(im, op, x, lambda v: _gelu_numpy(v, approximate))]


def _float_table(im: Importer, op: Op, x: Value, fn) -> Value:
    """TFLite's ``LUTPopulate``: a 256-entry table of ``fn`` applied in float32 to each
    dequantized input, requantized rounding half away from zero."""
    xt, out = op.inputs[0], op.outputs[0]
    s_in, zp_in, s_out, zp_out = _scale(op, xt), _zp(op, xt), _scale(op, out), _zp(op, out)
    lo, hi = QRANGE[out.dtype]

    def table(q: np.ndarray) -> np.ndarray:
        real = np.float32(s_in) * (q - zp_in).astype(np.float32)
        r = np.asarray(fn(real.astype(np.float32)), np.float32) * np.float32(1.0 / s_out)
        qv = (np.sign(r) * np.floor(np.abs(r) + 0.5)).astype(np.int64) + zp_out
        return np.clip(qv, lo, hi).astype(numpy_dtype(out.dtype))

    return table_op(im.b, x, xt.dtype, table)


@converter("LEAKY_RELU")
def _leaky_relu(im, op):
    xt, out = op.inputs[0], op.outputs[0]
    x = im.get(xt)
    alpha = float(op.options.Alpha())
    if not _quantized(xt):
        return [im.b.emit1("nn.leaky_relu", [x], alpha=alpha)]
    if alpha < 0:
        raise op.fail("a quantized LEAKY_RELU with a negative alpha is not supported")
    # TFLite's reference QuantizeLeakyRelu: x - zp rescaled by in_scale / out_scale (x >= 0)
    # or by alpha * in_scale / out_scale (x < 0), both in double precision, plus out_zp
    s_in, zp_in, s_out, zp_out = (float(np.float32(v)) for v in (_scale(op, xt), _zp(op, xt), _scale(op, out), _zp(op, out)))
    identity = quantize_multiplier(s_in / s_out)
    scaled = quantize_multiplier(s_in * float(np.float32(alpha)) / s_out)
    lo, hi = QRANGE[out.dtype]

    def table(q: np.ndarray) -> np.ndarray:
        d = q.astype(np.int64) - int(zp_in)
        y = np.where(d >= 0, multiply_by_quantized_numpy(d, *identity), multiply_by_quantized_numpy(d, *scaled))
        return np.clip(y + int(zp_out), lo, hi).astype(numpy_dtype(out.dtype))

    return [table_op(im.b, x, xt.dtype, table)]


@converter("PRELU")
def _prelu(im, op):
    xt = op.inputs[0]
    if _quantized(xt):
        raise op.fail("quantized PRELU is not supported")
    x, alpha = im.get(xt), im.get(op.inputs[1])
    neg = im.b.emit1("multiply", [x, alpha])
    return [im.b.emit1("where", [im.b.emit1("greater_equal", [x, np.float32(0)]), x, neg])]


# ============================================================================================
# Data movement (quantized tensors move unchanged: TFLite keeps their parameters)
# ============================================================================================


def _moved(im: Importer, op: Op, i: int = 0) -> tuple[Value, int]:
    """Data input ``i`` of a movement op and its rank; a quantized input's outputs must keep
    its scale and zero point (TFLite copies the values)."""
    xt = op.inputs[i]
    if _quantized(xt):
        for t in op.outputs:
            if (_scale(op, t), _zp(op, t)) != (_scale(op, xt), _zp(op, xt)):
                raise op.fail(f"output '{t.name}' is quantized unlike the input (TFLite copies the values)")
    x = im.get(xt)
    return x, im.b.rank(x)


def _axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


@converter("GATHER")
def _gather(im, op):
    o = op.options
    if o is not None and o.BatchDims():
        raise op.fail("GATHER with batch_dims is not supported")
    x, rank = _moved(im, op)
    indices = im.get(op.inputs[1], as_param=False)
    return [im.b.emit1("take", [x, indices], axis=_axis(int(o.Axis()) if o is not None else 0, rank))]


@converter("SPLIT")
def _split(im, op):
    x, rank = _moved(im, op, 1)
    axis = _axis(int(np.asarray(im.const_of(op, 0, "axis")).reshape(())), rank)
    return im.b.emit("split", [x], indices_or_sections=int(op.options.NumSplits()), axis=axis)


@converter("SPLIT_V")
def _split_v(im, op):
    x, rank = _moved(im, op)
    axis = _axis(int(np.asarray(im.const_of(op, 2, "axis")).reshape(())), rank)
    sizes = [int(v) for v in im.const_of(op, 1, "size_splits").reshape(-1)]
    if sizes.count(-1) == 1:  # one size is what the others leave
        sizes[sizes.index(-1)] = im.b.shape(x)[axis] - (sum(sizes) + 1)
    if len(sizes) == 1:
        return [x]
    return im.b.emit("split", [x], indices_or_sections=np.cumsum(sizes)[:-1].tolist(), axis=axis)


@converter("UNPACK")
def _unpack(im, op):
    x, rank = _moved(im, op)
    axis = _axis(int(op.options.Axis()), rank)
    n = im.b.shape(x)[axis]
    parts = im.b.emit("split", [x], indices_or_sections=n, axis=axis) if n > 1 else [x]
    return [im.b.reshape(p, [d for k, d in enumerate(im.b.shape(p)) if k != axis]) for p in parts]


@converter("TILE")
def _tile(im, op):
    x, _ = _moved(im, op)
    reps = [int(v) for v in im.const_of(op, 1, "multiples").reshape(-1)]
    return [im.b.emit1("tile", [x], reps=reps)]


# ============================================================================================
# Batched matrix products
# ============================================================================================


@converter("BATCH_MATMUL")
def _batch_matmul(im, op):
    at, bt, out = op.inputs[0], op.inputs[1], op.outputs[0]
    a, b = im.get(at), im.get(bt)
    o = op.options
    if o is not None and o.AdjX():
        a = _swap_last(im, a)
    if o is not None and o.AdjY():
        b = _swap_last(im, b)
    sa, sb = im.b.shape(a), im.b.shape(b)
    batch = list(np.broadcast_shapes(tuple(sa[:-2]), tuple(sb[:-2])))
    m, k, n = sa[-2], sa[-1], sb[-1]
    nb = math.prod(batch)
    a3 = im.b.reshape(_broadcast(im, a, [*batch, m, k]), [nb, m, k])
    b3 = im.b.reshape(_broadcast(im, b, [*batch, k, n]), [nb, k, n])
    if not _quantized(at):
        y = im.b.emit1("nn.batch_matmul", [a3, b3], transpose_b=False)
        return [im.b.reshape(y, [*batch, m, n])]
    # TFLite's reference int8 BatchMatMul: the int32 sum of (a - za)(b - zb), rescaled by
    # MultiplyByQuantizedMultiplier(sa * sb / so), plus the output's zero point
    acc = im.b.emit1(
        "nn.batch_matmul",
        [im.b.emit1("subtract", [im.b.cast(a3, "int32"), np.int32(_zp(op, at))]),
         im.b.emit1("subtract", [im.b.cast(b3, "int32"), np.int32(_zp(op, bt))])],
        transpose_b=False,
    )  # fmt: skip
    sa_, sb_, so = (float(np.float32(_scale(op, t))) for t in (at, bt, out))
    mult, shift = quantize_multiplier(sa_ * sb_ / so)
    y = _finish_quantized(im, op, acc, np.int64(mult), np.int64(shift))
    return [im.b.reshape(y, [*batch, m, n])]


def _swap_last(im: Importer, v: Value) -> Value:
    r = im.b.rank(v)
    return im.b.emit1("transpose", [v], axes=[*range(r - 2), r - 1, r - 2])


def _broadcast(im: Importer, v: Value, shape: list[int]) -> Value:
    if list(im.b.shape(v)) == shape:
        return v
    return im.b.emit1("broadcast_to", [v], shape=shape)
