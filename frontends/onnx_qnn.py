"""ONNX's quantized operators, imported as Relay's ONNX frontend imports them (qnn ops).

* ``QuantizeLinear`` / ``DequantizeLinear`` become ``qnn.quantize`` / ``qnn.dequantize``
  (opset 13's ``axis``, default 1, per-channel when the scale is a vector; a missing zero point
  is uint8 0). QDQ models (``onnxruntime.quantization.quantize_static``'s default format) keep
  their float ops between the pairs, as Relay's frontend leaves them.
* ``QLinearConv``: ``qnn.conv2d`` (+ int32 bias) and ``qnn.requantize`` from
  ``x_scale * w_scale`` to ``y_scale`` (per output channel with per-channel weights).
* ``QLinearMatMul``: ``qnn.dense`` + ``qnn.requantize`` for a constant 2-D B; otherwise
  dequantize, ``MatMul``, quantize, as Relay does.
* ``QLinearAdd``: dequantize both, add, quantize (Relay's choice, and onnxruntime's arithmetic).
* ``ConvInteger`` / ``MatMulInteger``: int32 results of the zero-point-shifted operands
  (``qnn.conv2d`` with unit scales; int32 ``nn.matmul`` / ``nn.batch_matmul``).

Scales and zero points must be constants (initializers), as Relay requires.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from xrelay.dialects.qnn import QNN_OPS
from xrelay.frontends.onnx import _CONVERTERS, _Importer, _matmul, _Node, _op, _spatial_pads, _Val


def _emit(im: _Importer, name: str, vals: list[_Val], **attrs: Any) -> _Val:
    op = QNN_OPS[name].make([im.ssa(v) for v in vals], **attrs)
    im.block.add_op(op)
    return _Val(value=op.results[0])


def _param(im: _Importer, node: _Node, i: int, what: str, dtype: str) -> np.ndarray:
    v = node.input(i)
    if v is None:
        return np.zeros((), np.uint8 if dtype == "zp" else np.float32)
    return im.static(v, node, what)


def _scale(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, np.float32)
    return a.reshape(()) if a.size == 1 else a.reshape(-1)


def _zp(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    return (a.reshape(()) if a.size == 1 else a.reshape(-1)).astype(np.int32)


def _zp_dtype(node: _Node, i: int, im: _Importer) -> str:
    """The quantized type: the zero point's, else ``output_dtype`` (opset 21), else uint8."""
    v = node.input(i)
    if v is not None:
        return im.dtype_of(v)
    if node.attrs.get("output_dtype"):
        from xrelay.frontends.onnx import _relay_dtype

        return _relay_dtype(int(node.attrs["output_dtype"]), f"{node.op_type} node '{node.name}'")
    return "uint8"


def _axis(node: _Node, rank: int, default: int = 1) -> int:
    axis = node.attrs.get("axis", default) if node.opset >= 13 else 0
    return 0 if rank <= 1 else axis


@_op("QuantizeLinear")
def _quantize_linear(im, node):
    x = node.inputs[0]
    out_dtype = _zp_dtype(node, 2, im)
    if out_dtype in _NARROW or node.attrs.get("block_size", 0) or "precision" in node.attrs:
        return [_quantize_onnx(im, node, out_dtype)]
    s = _scale(_param(im, node, 1, "y_scale", "scale"))
    zp = _param(im, node, 2, "y_zero_point", "zp")
    if im.dtype_of(x) != "float32":
        x = im.cast_like(x, "float32")
    return [
        _emit(im, "qnn.quantize", [x, im.const(s), im.const(_zp(zp))], axis=_axis(node, im.rank(x)), out_dtype=out_dtype)
    ]


@_op("DequantizeLinear")
def _dequantize_linear(im, node):
    x = node.inputs[0]
    if im.dtype_of(x) in _NARROW or node.attrs.get("block_size", 0) or "output_dtype" in node.attrs:
        return [_dequantize_onnx(im, node)]
    s = _scale(_param(im, node, 1, "x_scale", "scale"))
    zp = _param(im, node, 2, "x_zero_point", "zp")
    return [_emit(im, "qnn.dequantize", [x, im.const(s), im.const(_zp(zp))], axis=_axis(node, im.rank(x)))]


# ---- the narrow types and blocked scales: ONNX's arithmetic in Relay's elementwise ops ------------
# qnn.quantize/dequantize take int8..int32 and a scalar or per-axis scale (Relay's); float8,
# float4, int4/int2 and block-wise scales are written out as ONNX's reference computes them.

_NARROW = (
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float4_e2m1fn",
    "int4", "uint4", "int2", "uint2",
)  # fmt: skip


def _broadcast_param(im: _Importer, node: _Node, v: _Val, rank: int, shape: tuple) -> _Val:
    """A scale or zero point shaped to broadcast against the data: a scalar as is, a vector
    along ``axis``, a blocked one (``block_size``) repeated along ``axis`` and cut to size."""
    ps = im.shape_of(v)
    if len(ps) == 0:
        return v
    if math.prod(d or 0 for d in ps) == 1:
        return im.reshape(v, [])
    axis = _axis(node, rank)
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank:
        raise node.fail(f"axis {node.attrs.get('axis', 1)} is out of range for rank {rank}")
    block = int(node.attrs.get("block_size", 0))
    if not block:
        if len(ps) != 1:
            raise node.fail(f"a scale or zero point of shape {list(ps)} needs block_size")
        return im.reshape(v, [ps[0] if i == axis else 1 for i in range(rank)])
    if len(ps) != rank:
        raise node.fail(f"a blocked scale or zero point must have the data's rank {rank}, got {list(ps)}")
    v = im.emit1("repeat", [v], repeats=block, axis=axis)
    if shape[axis] is None or ps[axis] * block < shape[axis]:
        raise node.fail(f"block_size {block} x {ps[axis]} blocks do not cover axis {axis} of {list(shape)}")
    if ps[axis] * block > shape[axis]:
        end = [d if i != axis else shape[axis] for i, d in enumerate(im.shape_of(v))]
        v = im.emit1("strided_slice", [v], begin=[0] * rank, end=end, strides=[1] * rank)
    return v


def _promote(im: _Importer, a: _Val, b: _Val) -> tuple[_Val, _Val]:
    """``a`` and ``b`` in numpy's common type of the two (ONNX's reference computes so)."""
    from xrelay.dialects.relay.dtypes import dtype_from_numpy, numpy_dtype

    common = dtype_from_numpy(np.result_type(numpy_dtype(im.dtype_of(a)), numpy_dtype(im.dtype_of(b))))
    return im.cast_like(a, common), im.cast_like(b, common)


def _quantize_onnx(im: _Importer, node: _Node, out_dtype: str) -> _Val:
    """ONNX's QuantizeLinear: integers ``clip(rint(x / scale) + zero_point)``; float8
    ``x / scale`` cast as ``saturate`` says (the zero point is 0); float4 ``x / scale +
    zero_point`` cast (float4 has no inf/NaN: it saturates)."""
    from xrelay.frontends.onnx import _relay_dtype, onnx_cast
    from xrelay.frontends.onnx_ops2 import _round_even

    x, scale, zp = node.inputs[0], node.inputs[1], node.input(2)
    rank, shape = im.rank(x), im.shape_of(x)
    scale = _broadcast_param(im, node, scale, rank, shape)
    if "precision" in node.attrs:
        p = _relay_dtype(int(node.attrs["precision"]), f"QuantizeLinear node '{node.name}'")
        x, scale = im.cast_like(x, p), im.cast_like(scale, p)
    x, scale = _promote(im, x, scale)
    v = im.emit1("divide", [x, scale])
    if out_dtype.startswith(("int", "uint")):
        if im.dtype_of(v) not in ("float32", "float64"):
            v = im.cast_like(v, "float32")
        v = _round_even(im, _Node("Round", node.name, [v], {}, 1, node.opset))[0]
        if zp is not None:
            v = im.emit1("add", [v, im.cast_like(_broadcast_param(im, node, zp, rank, shape), im.dtype_of(v))])
        lo, hi = _int_range(out_dtype)
        return im.cast_like(im.emit1("clip", [v], a_min=float(lo), a_max=float(hi)), out_dtype)
    if out_dtype == "float4_e2m1fn" and zp is not None:
        v = im.emit1("add", [v, im.cast_like(_broadcast_param(im, node, zp, rank, shape), im.dtype_of(v))])
    return onnx_cast(im, node, v, out_dtype)


def _int_range(dtype: str) -> tuple[int, int]:
    from xrelay.dialects.relay.dtypes import dtype_bits

    bits = dtype_bits(dtype)
    return (0, 2**bits - 1) if dtype.startswith("u") else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


def _dequantize_onnx(im: _Importer, node: _Node) -> _Val:
    """ONNX's DequantizeLinear: ``(float32(x) - float32(zero_point)) * scale`` (float8 and
    float4 have no zero point to subtract), in the scale's type or ``output_dtype``."""
    from xrelay.frontends.onnx import _relay_dtype

    x, scale, zp = node.inputs[0], node.inputs[1], node.input(2)
    rank, shape = im.rank(x), im.shape_of(x)
    dx = im.cast_like(x, "float32")
    if zp is not None and im.dtype_of(x).startswith("float8") and zp.known:
        if np.asarray(zp.const).view(np.uint8).any():  # ONNX's reference refuses it too
            raise node.fail("a float8 zero point must be 0")
    if zp is not None and im.dtype_of(x).startswith(("int", "uint")):
        dx = im.emit1("subtract", [dx, im.cast_like(_broadcast_param(im, node, zp, rank, shape), "float32")])
    scale = _broadcast_param(im, node, scale, rank, shape)
    out = im.dtype_of(scale)
    if "output_dtype" in node.attrs and node.attrs["output_dtype"]:
        out = _relay_dtype(int(node.attrs["output_dtype"]), f"DequantizeLinear node '{node.name}'")
    dx, scale = _promote(im, dx, scale)
    return im.cast_like(im.emit1("multiply", [dx, scale]), out)


def _requantize(im, acc: _Val, in_scale: np.ndarray, y_scale, y_zp, out_dtype: str) -> _Val:
    return _emit(
        im, "qnn.requantize", [acc, im.const(_scale(in_scale)), im.const(np.int32(0)), im.const(_scale(y_scale)),
                               im.const(_zp(y_zp))],
        axis=1, out_dtype=out_dtype,
    )  # fmt: skip


def _qconv(im: _Importer, node: _Node, x, w, x_zp, w_zp, x_s, w_s) -> _Val:
    ws = im.shape_of(w)
    kernel = list(node.attrs.get("kernel_shape", ws[2:]))
    strides = list(node.attrs.get("strides", [1, 1]))
    dil = list(node.attrs.get("dilations", [1, 1]))
    pads = _spatial_pads(node, im.shape_of(x)[2:], kernel, strides, dil)
    return _emit(
        im, "qnn.conv2d", [x, w, im.const(_zp(x_zp)), im.const(_zp(w_zp)), im.const(_scale(x_s)), im.const(_scale(w_s))],
        strides=strides, padding=pads, dilation=dil, groups=node.attrs.get("group", 1), channels=ws[0],
        kernel_size=kernel,
    )  # fmt: skip


@_op("QLinearConv")
def _qlinear_conv(im, node):
    x, w = node.inputs[0], node.inputs[3]
    x_s, x_zp = _param(im, node, 1, "x_scale", "scale"), _param(im, node, 2, "x_zero_point", "zp")
    w_s, w_zp = _param(im, node, 4, "w_scale", "scale"), _param(im, node, 5, "w_zero_point", "zp")
    y_s, y_zp = _param(im, node, 6, "y_scale", "scale"), _param(im, node, 7, "y_zero_point", "zp")
    if im.rank(x) != 4:
        raise node.fail(f"only 2-D (NCHW) inputs are supported, got rank {im.rank(x)}")
    acc = _qconv(im, node, x, w, x_zp, w_zp, x_s, w_s)
    b = node.input(8)
    if b is not None:
        acc = im.emit1("nn.bias_add", [acc, im.cast_like(b, "int32")], axis=1)
    in_scale = np.asarray(x_s, np.float32).reshape(()) * _scale(w_s)
    return [_requantize(im, acc, in_scale, y_s, y_zp, _zp_dtype(node, 7, im))]


@_op("ConvInteger")
def _conv_integer(im, node):
    x, w = node.inputs[0], node.inputs[1]
    x_zp = _param(im, node, 2, "x_zero_point", "zp")
    w_zp = _param(im, node, 3, "w_zero_point", "zp")
    if im.rank(x) != 4:
        raise node.fail(f"only 2-D (NCHW) inputs are supported, got rank {im.rank(x)}")
    return [_qconv(im, node, x, w, x_zp, w_zp, np.float32(1.0), np.float32(1.0))]


@_op("QLinearMatMul")
def _qlinear_matmul(im, node):
    a, b = node.inputs[0], node.inputs[3]
    a_s, a_zp = _param(im, node, 1, "a_scale", "scale"), _param(im, node, 2, "a_zero_point", "zp")
    b_s, b_zp = _param(im, node, 4, "b_scale", "scale"), _param(im, node, 5, "b_zero_point", "zp")
    y_s, y_zp = _param(im, node, 6, "y_scale", "scale"), _param(im, node, 7, "y_zero_point", "zp")
    out_dtype = _zp_dtype(node, 7, im)
    sa, sb = im.shape_of(a), im.shape_of(b)
    if b.known and len(sb) == 2 and len(sa) >= 2 and None not in sa:
        wt = im.const(np.ascontiguousarray(b.const.T))
        a2 = im.reshape(a, [int(np.prod(sa[:-1])), sa[-1]])
        acc = _emit(
            im, "qnn.dense", [a2, wt, im.const(_zp(a_zp)), im.const(_zp(b_zp)), im.const(_scale(a_s)), im.const(_scale(b_s))],
            units=sb[1],
        )  # fmt: skip
        in_scale = np.asarray(a_s, np.float32).reshape(()) * _scale(b_s)
        y = _requantize(im, acc, in_scale, y_s, y_zp, out_dtype)
        return [im.reshape(y, [*sa[:-1], sb[1]])]
    # Relay's general form: dequantize, float MatMul, quantize
    fa = _emit(im, "qnn.dequantize", [a, im.const(_scale(a_s)), im.const(_zp(a_zp))], axis=0)
    fb = _emit(im, "qnn.dequantize", [b, im.const(_scale(b_s)), im.const(_zp(b_zp))], axis=max(im.rank(b) - 1, 0))
    (y,) = _matmul(im, _Node("MatMul", node.name, [fa, fb], {}, 1, node.opset))
    return [_emit(im, "qnn.quantize", [y, im.const(_scale(y_s)), im.const(_zp(y_zp))], out_dtype=out_dtype)]


@_op("MatMulInteger")
def _matmul_integer(im, node):
    a, b = node.inputs[0], node.inputs[1]
    a_zp, b_zp = _param(im, node, 2, "a_zero_point", "zp"), _param(im, node, 3, "b_zero_point", "zp")
    a32 = im.emit1("subtract", [im.cast_like(a, "int32"), im.const(_zp(a_zp))])
    zb = _zp(b_zp)
    b32 = im.emit1("subtract", [im.cast_like(b, "int32"), im.const(zb)])
    (y,) = _matmul(im, _Node("MatMul", node.name, [a32, b32], {}, 1, node.opset))
    return [y]


@_op("QLinearAdd")
def _qlinear_add(im, node):
    # Relay's converter: onnxruntime adds in float32 too (mlas qladd), so dequantize-add-quantize
    a, b = node.inputs[0], node.inputs[3]
    fa = _emit(im, "qnn.dequantize", [a, im.const(_scale(_param(im, node, 1, "A_scale", "scale"))),
                                       im.const(_zp(_param(im, node, 2, "A_zero_point", "zp")))])  # fmt: skip
    fb = _emit(im, "qnn.dequantize", [b, im.const(_scale(_param(im, node, 4, "B_scale", "scale"))),
                                       im.const(_zp(_param(im, node, 5, "B_zero_point", "zp")))])  # fmt: skip
    y = im.emit1("add", [fa, fb])
    y_s, y_zp = _param(im, node, 6, "C_scale", "scale"), _param(im, node, 7, "C_zero_point", "zp")
    return [_emit(im, "qnn.quantize", [y, im.const(_scale(y_s)), im.const(_zp(y_zp))], out_dtype=_zp_dtype(node, 7, im))]


QNN_CONVERTERS = sorted(
    k for k in _CONVERTERS if k.startswith(("QLinear", "Quantize", "Dequantize")) or k.endswith("Integer")
)
"""The quantized ONNX operators this module adds."""

