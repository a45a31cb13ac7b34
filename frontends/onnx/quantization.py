"""ONNX's ``onnx/defs/quantization`` operators, and the quantization helpers the quantized
operators of other families (``QLinearConv`` in ``nn``, ``QLinearMatMul`` in ``math``) share.

As Relay's ONNX frontend imports them (qnn ops):

* ``QuantizeLinear`` / ``DequantizeLinear`` become ``qnn.quantize`` / ``qnn.dequantize``
  (opset 13's ``axis``, default 1, per-channel when the scale is a vector; a missing zero point
  is uint8 0). QDQ models (``onnxruntime.quantization.quantize_static``'s default format) keep
  their float ops between the pairs, as Relay's frontend leaves them. float8, float4, int4/int2
  and block-wise scales are written out as ONNX's reference computes them.
* ``DynamicQuantizeLinear``: uint8 with a scale and zero point from the data's range.
* ``QLinearAdd`` (onnxruntime's contrib operator, which exporters also write in the default
  domain; ONNX has no schema for it): dequantize both, add, quantize (Relay's choice, and
  onnxruntime's arithmetic).

Scales and zero points must be constants (initializers), as Relay requires.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from xrelay.dialects.qnn import QNN_OPS
from xrelay.dialects.relay import numpy_dtype
from xrelay.dialects.relay.dtypes import dtype_bits, dtype_from_numpy
from xrelay.frontends.onnx.compose import onnx_cast, round_half_even
from xrelay.frontends.onnx.importer import (
    Importer,
    Node,
    Value,
    relay_dtype,
)
from xrelay.frontends.onnx.registry import converter


@converter("DynamicQuantizeLinear")
def _dynamic_quantize_linear(im, node):
    """uint8 with a scale and zero point from the data's range (extended to 0), as Relay's
    frontend; ONNX rounds halves to even, as the ``Round`` converter does."""
    x = node.inputs[0]
    if im.dtype_of(x) != "float32":
        raise node.fail(f"the input must be float32, got {im.dtype_of(x)}")

    zero = im.scalar(0.0, x)
    lo = im.emit1("minimum", [zero, im.emit1("min", [x])])
    hi = im.emit1("maximum", [zero, im.emit1("max", [x])])
    scale = im.emit1("divide", [im.emit1("subtract", [hi, lo]), im.scalar(255.0, x)])
    zp = im.emit1("clip", [round_half_even(im, im.emit1("negative", [im.emit1("divide", [lo, scale])]))], a_min=0.0, a_max=255.0)
    q = im.emit1("add", [round_half_even(im, im.emit1("divide", [x, scale])), zp])
    y = im.emit1("cast", [im.emit1("clip", [q], a_min=0.0, a_max=255.0)], dtype="uint8")
    return [y, scale, im.emit1("cast", [zp], dtype="uint8")]


def qnn_emit(im: Importer, name: str, vals: list[Value], **attrs: Any) -> Value:
    op = QNN_OPS[name].make([im.ssa(v) for v in vals], **attrs)
    im.block.add_op(op)
    return Value(value=op.results[0])


def quant_param(im: Importer, node: Node, i: int, what: str, dtype: str) -> np.ndarray:
    v = node.input(i)
    if v is None:
        return np.zeros((), np.uint8 if dtype == "zp" else np.float32)
    return im.static(v, node, what)


def scale_and_zero_point(im: Importer, node: Node, i: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Inputs ``i`` and ``i + 1``, ``<name>_scale`` and ``<name>_zero_point`` (constants)."""
    return quant_param(im, node, i, f"{name}_scale", "scale"), quant_param(im, node, i + 1, f"{name}_zero_point", "zp")


def scale_of(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, np.float32)
    return a.reshape(()) if a.size == 1 else a.reshape(-1)


def zero_point_of(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    return (a.reshape(()) if a.size == 1 else a.reshape(-1)).astype(np.int32)


def zero_point_dtype(node: Node, i: int, im: Importer) -> str:
    """The quantized type: the zero point's, else ``output_dtype`` (opset 21), else uint8."""
    v = node.input(i)
    if v is not None:
        return im.dtype_of(v)
    if node.attrs.get("output_dtype"):
        return relay_dtype(int(node.attrs["output_dtype"]), f"{node.op_type} node '{node.name}'")
    return "uint8"


def _axis(node: Node, rank: int, default: int = 1) -> int:
    axis = node.attrs.get("axis", default) if node.opset >= 13 else 0
    return 0 if rank <= 1 else axis


@converter("QuantizeLinear")
def _quantize_linear(im, node):
    x = node.inputs[0]
    out_dtype = zero_point_dtype(node, 2, im)
    if out_dtype in _NARROW or node.attrs.get("block_size", 0) or "precision" in node.attrs:
        return [_quantize_onnx(im, node, out_dtype)]
    s = scale_of(quant_param(im, node, 1, "y_scale", "scale"))
    zp = quant_param(im, node, 2, "y_zero_point", "zp")
    if im.dtype_of(x) != "float32":
        x = im.cast_like(x, "float32")
    return [
        qnn_emit(im, "qnn.quantize", [x, im.const(s), im.const(zero_point_of(zp))], axis=_axis(node, im.rank(x)), out_dtype=out_dtype)
    ]


@converter("DequantizeLinear")
def _dequantize_linear(im, node):
    x = node.inputs[0]
    if im.dtype_of(x) in _NARROW or node.attrs.get("block_size", 0) or "output_dtype" in node.attrs:
        return [_dequantize_onnx(im, node)]
    s = scale_of(quant_param(im, node, 1, "x_scale", "scale"))
    zp = quant_param(im, node, 2, "x_zero_point", "zp")
    return [qnn_emit(im, "qnn.dequantize", [x, im.const(s), im.const(zero_point_of(zp))], axis=_axis(node, im.rank(x)))]


# ---- the narrow types and blocked scales: ONNX's arithmetic in Relay's elementwise ops ------------
# qnn.quantize/dequantize take int8..int32 and a scalar or per-axis scale (Relay's); float8,
# float4, int4/int2 and block-wise scales are written out as ONNX's reference computes them.

_NARROW = (
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float4_e2m1fn",
    "int4", "uint4", "int2", "uint2",
)  # fmt: skip


def _broadcast_param(im: Importer, node: Node, v: Value, rank: int, shape: tuple) -> Value:
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


def _promote(im: Importer, a: Value, b: Value) -> tuple[Value, Value]:
    """``a`` and ``b`` in numpy's common type of the two (ONNX's reference computes so)."""
    common = dtype_from_numpy(np.result_type(numpy_dtype(im.dtype_of(a)), numpy_dtype(im.dtype_of(b))))
    return im.cast_like(a, common), im.cast_like(b, common)


def _quantize_onnx(im: Importer, node: Node, out_dtype: str) -> Value:
    """ONNX's QuantizeLinear: integers ``clip(rint(x / scale) + zero_point)``; float8
    ``x / scale`` cast as ``saturate`` says (the zero point is 0); float4 ``x / scale +
    zero_point`` cast (float4 has no inf/NaN: it saturates)."""
    x, scale, zp = node.inputs[0], node.inputs[1], node.input(2)
    rank, shape = im.rank(x), im.shape_of(x)
    scale = _broadcast_param(im, node, scale, rank, shape)
    if "precision" in node.attrs:
        p = relay_dtype(int(node.attrs["precision"]), f"QuantizeLinear node '{node.name}'")
        x, scale = im.cast_like(x, p), im.cast_like(scale, p)
    x, scale = _promote(im, x, scale)
    v = im.emit1("divide", [x, scale])
    if out_dtype.startswith(("int", "uint")):
        if im.dtype_of(v) not in ("float32", "float64"):
            v = im.cast_like(v, "float32")
        v = round_half_even(im, v)
        if zp is not None:
            v = im.emit1("add", [v, im.cast_like(_broadcast_param(im, node, zp, rank, shape), im.dtype_of(v))])
        lo, hi = _int_range(out_dtype)
        return im.cast_like(im.emit1("clip", [v], a_min=float(lo), a_max=float(hi)), out_dtype)
    if out_dtype == "float4_e2m1fn" and zp is not None:
        v = im.emit1("add", [v, im.cast_like(_broadcast_param(im, node, zp, rank, shape), im.dtype_of(v))])
    return onnx_cast(im, node, v, out_dtype)


def _int_range(dtype: str) -> tuple[int, int]:
    bits = dtype_bits(dtype)
    return (0, 2**bits - 1) if dtype.startswith("u") else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


def _dequantize_onnx(im: Importer, node: Node) -> Value:
    """ONNX's DequantizeLinear: ``(float32(x) - float32(zero_point)) * scale`` (float8 and
    float4 have no zero point to subtract), in the scale's type or ``output_dtype``."""
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
        out = relay_dtype(int(node.attrs["output_dtype"]), f"DequantizeLinear node '{node.name}'")
    dx, scale = _promote(im, dx, scale)
    return im.cast_like(im.emit1("multiply", [dx, scale]), out)


def requantize(im, acc: Value, in_scale: np.ndarray, y_scale, y_zp, out_dtype: str) -> Value:
    return qnn_emit(
        im, "qnn.requantize", [acc, im.const(scale_of(in_scale)), im.const(np.int32(0)), im.const(scale_of(y_scale)),
                               im.const(zero_point_of(y_zp))],
        axis=1, out_dtype=out_dtype,
    )  # fmt: skip


@converter("QLinearAdd")
def _qlinear_add(im, node):
    # Relay's converter: onnxruntime adds in float32 too (mlas qladd), so dequantize-add-quantize
    a, b = node.inputs[0], node.inputs[3]
    fa = qnn_emit(im, "qnn.dequantize", [a, im.const(scale_of(quant_param(im, node, 1, "A_scale", "scale"))),
                                       im.const(zero_point_of(quant_param(im, node, 2, "A_zero_point", "zp")))])  # fmt: skip
    fb = qnn_emit(im, "qnn.dequantize", [b, im.const(scale_of(quant_param(im, node, 4, "B_scale", "scale"))),
                                       im.const(zero_point_of(quant_param(im, node, 5, "B_zero_point", "zp")))])  # fmt: skip
    y = im.emit1("add", [fa, fb])
    y_s, y_zp = scale_and_zero_point(im, node, 6, "C")
    return [qnn_emit(im, "qnn.quantize", [y, im.const(scale_of(y_s)), im.const(zero_point_of(y_zp))], out_dtype=zero_point_dtype(node, 7, im))]
