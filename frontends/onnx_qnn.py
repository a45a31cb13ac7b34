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
    v = node.input(i)
    return "uint8" if v is None else im.dtype_of(v)


def _axis(node: _Node, rank: int, default: int = 1) -> int:
    axis = node.attrs.get("axis", default) if node.opset >= 13 else 0
    return 0 if rank <= 1 else axis


@_op("QuantizeLinear")
def _quantize_linear(im, node):
    x = node.inputs[0]
    s = _scale(_param(im, node, 1, "y_scale", "scale"))
    zp = _param(im, node, 2, "y_zero_point", "zp")
    out_dtype = _zp_dtype(node, 2, im)
    if im.dtype_of(x) != "float32":
        x = im.cast_like(x, "float32")
    return [
        _emit(im, "qnn.quantize", [x, im.const(s), im.const(_zp(zp))], axis=_axis(node, im.rank(x)), out_dtype=out_dtype)
    ]


@_op("DequantizeLinear")
def _dequantize_linear(im, node):
    x = node.inputs[0]
    s = _scale(_param(im, node, 1, "x_scale", "scale"))
    zp = _param(im, node, 2, "x_zero_point", "zp")
    return [_emit(im, "qnn.dequantize", [x, im.const(s), im.const(_zp(zp))], axis=_axis(node, im.rank(x)))]


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

