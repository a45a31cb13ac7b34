"""Converters of the operators decoders upsample with: ``TRANSPOSE_CONV``, ``RESIZE_BILINEAR``,
``RESIZE_NEAREST_NEIGHBOR`` and ``DEPTH_TO_SPACE`` (segmentation heads, super-resolution,
autoencoders).

* ``TRANSPOSE_CONV``: ``nn.conv2d_transpose`` on ``NHWC`` data, TFLite's ``OHWI`` filter
  transposed to ``IOHW``; the bias (an optional fourth input) and the fused activation follow.
  TFLite pads as the convolution it is the gradient of would pad an image of the output's size
  (SAME: half the total before, the rest after); the output is the full transposed convolution
  cut to ``output_shape`` from that offset (``output_padding`` where the shape asks for more
  rows than the full result has). Quantized: ``qnn.conv2d_transpose`` gives the int32
  accumulator of ``(x - zx) * (w - zw)``, rescaled per output channel as the convolutions are
  (``ops._quantized_conv``).
* ``RESIZE_BILINEAR``, float: ``image.resize2d`` (``linear``; ``align_corners``,
  ``half_pixel`` or ``asymmetric`` as TFLite's two flags say). int8: TFLite's kernel works in
  10-bit fixed point (the scale ``in / out`` rounded to 1/1024, the four products summed in
  integers, rounded half away from zero by 2**20); the rows and columns it reads and their
  weights are computed at import and the interpolation is integer relay ops (``take``,
  ``multiply``, ``add``, a truncating ``divide``), two passes (rows then columns: the same
  integers, as products distribute). uint8: TFLite's reference kernel interpolates in float32
  and truncates ``value + 0.5``; the same float32 operations in the same order.
* ``RESIZE_NEAREST_NEIGHBOR``: a ``take`` of the rows and one of the columns TFLite's kernel
  reads, computed at import in float32 as the kernel computes them (a copy: every dtype).
* ``DEPTH_TO_SPACE`` (a pixel shuffle: super-resolution's last layer) and its inverse
  ``SPACE_TO_DEPTH``: ``reshape``, ``transpose``, ``reshape`` (TensorFlow's order: the block's
  row, then its column, then the channel).

Quantized resizes and shuffles keep their input's scale and zero point (TFLite's kernels move
integers); an output quantized otherwise is refused.
"""

from __future__ import annotations

import numpy as np

from xrelay.frontends.graph_builder import Value
from xrelay.frontends.tflite.importer import Importer, Op, converter
from xrelay.frontends.tflite.ops import (
    _act,
    _float_act,
    _moved,
    _qp,
    _quantized,
    _quantized_conv,
    _scale,
    _zp,
)

# ============================================================================================
# TRANSPOSE_CONV
# ============================================================================================


def _transpose_padding(op: Op, size: int, in_size: int, k: int, stride: int) -> tuple[int, int, int]:
    """(before, after, output_padding) along one axis for ``nn.conv2d_transpose``: TFLite's
    offset into the full result and what remains of it after ``size`` rows."""
    total = 0
    if op.options.Padding() == 0:  # SAME; VALID's total is never positive
        total = max((-(-size // stride) - 1) * stride + k - size, 0)
    before = total // 2
    after = (in_size - 1) * stride + k - size - before
    return before, max(after, 0), max(-after, 0)


@converter("TRANSPOSE_CONV")
def _transpose_conv(im, op):
    shape_t, wt, xt, bt = op.inputs[0], op.inputs[1], op.inputs[2], op.input(3)
    o = op.options
    x = im.get(xt)
    n, h, w, c = im.b.shape(x)
    shape = im.get(shape_t, as_param=False)
    if not isinstance(shape, np.ndarray) or shape.size != 4:
        raise op.fail("the output shape must be 4 values known at import")
    _, oh, ow, oc = (int(d) for d in shape.reshape(-1))
    wdata = im.const_of(op, 1, "filter")
    co, kh, kw, ci = wdata.shape
    if ci != c or co != oc:
        raise op.fail(f"filter {list(wdata.shape)} (OHWI) does not take {c} channels to {oc}")
    strides = [o.StrideH(), o.StrideW()]
    top, bottom, extra_h = _transpose_padding(op, oh, h, kh, strides[0])
    left, right, extra_w = _transpose_padding(op, ow, w, kw, strides[1])
    attrs = dict(
        strides=strides, padding=[top, left, bottom, right], output_padding=[extra_h, extra_w], channels=co,
        kernel_size=[kh, kw], data_layout="NHWC", kernel_layout="IOHW",
    )  # fmt: skip
    kernel = im.b.param(wt.name, np.ascontiguousarray(wdata.transpose(3, 0, 1, 2)))  # OHWI -> IOHW
    if _quantized(xt):
        wq = _qp(op, wt)
        kzp = np.unique(wq.zero_point)
        # TFLite's int8 kernel ignores the filter's zero point; its uint8 kernel subtracts one
        if kzp.size != 1 or (xt.dtype == "int8" and kzp[0] != 0):
            raise op.fail("a quantized filter needs one zero point (0 for int8)")
        return [_quantized_conv(im, op, "qnn.conv2d_transpose", (xt, wt, bt), x, kernel, int(kzp[0]), co, attrs)]
    if wt.dtype != "float32":
        raise op.fail(f"a {wt.dtype} filter with a {xt.dtype} input (dynamic-range quantization) is not supported")
    y = im.b.emit1("nn.conv2d_transpose", [x, kernel], **attrs)
    if bt is not None:
        y = im.b.emit1("nn.bias_add", [y, im.get(bt)], axis=3)
    return [_float_act(im, op, y, _act(op))]


# ============================================================================================
# Resizes
# ============================================================================================


def _resize_input(im: Importer, op: Op) -> tuple[Value, list[int], bool, bool]:
    """The data, the output's [height, width] and the two coordinate flags."""
    xt = op.inputs[0]
    x = im.get(xt)
    if im.b.rank(x) != 4:
        raise op.fail(f"expects a 4-d NHWC input, got shape {list(im.b.shape(x))}")
    size = im.get(op.inputs[1], as_param=False)
    if not isinstance(size, np.ndarray) or size.size != 2 or np.any(size <= 0):
        raise op.fail("the output size must be two positive values known at import")
    o = op.options
    align = bool(o.AlignCorners()) if o is not None else False
    half = bool(o.HalfPixelCenters()) if o is not None else False
    if _quantized(xt):
        out = op.outputs[0]
        if (_scale(op, out), _zp(op, out)) != (_scale(op, xt), _zp(op, xt)):
            raise op.fail("the output is quantized unlike the input (TFLite's kernel moves the integers)")
    return x, [int(v) for v in size.reshape(-1)], align, half


def _scale32(in_size: int, out_size: int, align: bool) -> np.float32:
    """The kernels' float scale from output to input coordinates."""
    if align and out_size > 1:
        return np.float32(in_size - 1) / np.float32(out_size - 1)
    return np.float32(in_size) / np.float32(out_size)


def _nearest_axis(in_size: int, out_size: int, align: bool, half: bool) -> np.ndarray:
    """The input index TFLite's nearest-neighbour kernel reads for each output index."""
    c = (np.arange(out_size, dtype=np.float32) + np.float32(0.5 if half else 0.0)) * _scale32(in_size, out_size, align)
    idx = np.sign(c) * np.floor(np.abs(c) + np.float32(0.5)) if align else np.floor(c)  # TfLiteRound: half away
    idx = np.minimum(idx.astype(np.int64), in_size - 1)
    return np.maximum(idx, 0) if half else idx


def _take_axis(im: Importer, x: Value, idx: np.ndarray, axis: int) -> Value:
    if idx.size == im.b.shape(x)[axis] and np.array_equal(idx, np.arange(idx.size)):
        return x
    return im.b.emit1("take", [x, idx.astype(np.int32)], axis=axis)


@converter("RESIZE_NEAREST_NEIGHBOR")
def _resize_nearest(im, op):
    x, (oh, ow), align, half = _resize_input(im, op)
    _, h, w, _ = im.b.shape(x)
    rows = _take_axis(im, x, _nearest_axis(h, oh, align, half), 1)
    return [_take_axis(im, rows, _nearest_axis(w, ow, align, half), 2)]


def _fixed_point_axis(in_size: int, out_size: int, align: bool, half: bool):
    """TFLite's integer bilinear kernel along one axis: the lower and upper input index of
    each output index and their weights (summing to 1024)."""
    if align and out_size > 1:
        scale = (1024 * (in_size - 1) + (out_size - 1) // 2) // (out_size - 1)
    else:
        scale = (1024 * in_size + out_size // 2) // out_size
    v = np.arange(out_size, dtype=np.int64) * scale
    if half:
        v = v + scale // 2 - 512
    lower = np.maximum(_trunc_div(v, 1024), 0)
    upper = np.minimum(_trunc_div(v + 1023, 1024), in_size - 1)
    frac = v - 1024 * lower  # negative before the first pixel: both indices are 0 there
    # the clamp keeps the read inside the image where rounding the scale up overshoots it
    return np.minimum(lower, in_size - 1), upper, 1024 - frac, frac


def _trunc_div(v: np.ndarray, d: int) -> np.ndarray:
    """C's integer division (toward zero)."""
    return np.where(v >= 0, v // d, -((-v) // d))


def _float_axis(in_size: int, out_size: int, align: bool, half: bool):
    """TFLite's float bilinear kernel along one axis: lower and upper index, the float32
    weights ``1 - d`` and ``d`` (``d`` the coordinate minus the lower index)."""
    scale = _scale32(in_size, out_size, align)
    v = np.arange(out_size, dtype=np.float32)
    c = (v + np.float32(0.5)) * scale - np.float32(0.5) if half else v * scale
    lower = np.maximum(np.floor(c).astype(np.int64), 0)
    upper = np.minimum(np.ceil(c).astype(np.int64), in_size - 1)
    d = (c - lower.astype(np.float32)).astype(np.float32)
    return lower, upper, (np.float32(1) - d).astype(np.float32), d


def _along(w: np.ndarray, axis: int, dtype) -> np.ndarray:
    """Per-index weights shaped to broadcast along ``axis`` of NHWC data."""
    shape = [1, 1, 1, 1]
    shape[axis] = w.size
    return w.astype(dtype).reshape(shape)


@converter("RESIZE_BILINEAR")
def _resize_bilinear(im, op):
    x, (oh, ow), align, half = _resize_input(im, op)
    xt = op.inputs[0]
    if align and half:
        raise op.fail("align_corners and half_pixel_centers together (TFLite refuses them)")
    _, h, w, _ = im.b.shape(x)
    if not _quantized(xt):
        if xt.dtype != "float32":
            raise op.fail(f"a {xt.dtype} input is not supported (float32 and int8/uint8 are)")
        mode = "align_corners" if align else "half_pixel" if half else "asymmetric"
        return [im.b.emit1("image.resize2d", [x], size=[oh, ow], layout="NHWC", method="linear",
                           coordinate_transformation_mode=mode)]  # fmt: skip
    if xt.dtype == "int8":
        return [_bilinear_fixed_point(im, x, (h, w), (oh, ow), align, half)]
    if xt.dtype == "uint8":
        return [_bilinear_float_rounded(im, x, (h, w), (oh, ow), align, half)]
    raise op.fail(f"a quantized {xt.dtype} input is not supported (int8 and uint8 are)")


def _bilinear_fixed_point(im: Importer, x: Value, in_hw, out_hw, align: bool, half: bool) -> Value:
    """TFLite's int8 kernel: ``sum(v * wy * wx)`` over the four neighbours (weights in 1/1024)
    rounded half away from zero by ``2**20``. int32 holds it: |v| <= 128 and each axis's two
    weights' magnitudes sum to at most 2048."""
    b = im.b
    v = b.cast(x, "int32")
    for axis, (n_in, n_out) in ((1, (in_hw[0], out_hw[0])), (2, (in_hw[1], out_hw[1]))):
        lo, hi, w_lo, w_hi = _fixed_point_axis(n_in, n_out, align, half)
        v = b.emit1("add", [
            b.emit1("multiply", [_take_axis(im, v, lo, axis), _along(w_lo, axis, np.int32)]),
            b.emit1("multiply", [_take_axis(im, v, hi, axis), _along(w_hi, axis, np.int32)]),
        ])  # fmt: skip
    half_unit = b.emit1("where", [b.emit1("greater", [v, np.int32(0)]), np.int32(1 << 19), np.int32(-(1 << 19))])
    y = b.emit1("divide", [b.emit1("add", [v, half_unit]), np.int32(1 << 20)])
    return b.cast(y, "int8")


def _bilinear_float_rounded(im: Importer, x: Value, in_hw, out_hw, align: bool, half: bool) -> Value:
    """TFLite's reference uint8 kernel: in float32, ``v00 * (1 - dy) * (1 - dx) + v10 * dy *
    (1 - dx) + v01 * (1 - dy) * dx + v11 * dy * dx + 0.5``, left to right, truncated."""
    b = im.b
    xf = b.cast(x, "float32")
    ylo, yhi, wy_lo, wy_hi = _float_axis(in_hw[0], out_hw[0], align, half)
    xlo, xhi, wx_lo, wx_hi = _float_axis(in_hw[1], out_hw[1], align, half)
    rows = {0: _take_axis(im, xf, ylo, 1), 1: _take_axis(im, xf, yhi, 1)}
    wy = {0: _along(wy_lo, 1, np.float32), 1: _along(wy_hi, 1, np.float32)}
    wx = {0: _along(wx_lo, 2, np.float32), 1: _along(wx_hi, 2, np.float32)}
    total = None
    for j, i in ((0, 0), (0, 1), (1, 0), (1, 1)):  # the kernel's order: (y0,x0) (y1,x0) (y0,x1) (y1,x1)
        corner = _take_axis(im, rows[i], xhi if j else xlo, 2)
        term = b.emit1("multiply", [b.emit1("multiply", [corner, wy[i]]), wx[j]])
        total = term if total is None else b.emit1("add", [total, term])
    return b.cast(b.emit1("add", [total, np.float32(0.5)]), "uint8")


# ============================================================================================
# Pixel shuffles
# ============================================================================================


@converter("DEPTH_TO_SPACE")
def _depth_to_space(im, op):
    x, _ = _moved(im, op)
    bs = int(op.options.BlockSize())
    n, h, w, c = im.b.shape(x)
    if c % (bs * bs):
        raise op.fail(f"{c} channels do not split into {bs}x{bs} blocks")
    t = im.b.reshape(x, [n, h, w, bs, bs, c // (bs * bs)])
    t = im.b.emit1("transpose", [t], axes=[0, 1, 3, 2, 4, 5])
    return [im.b.reshape(t, [n, h * bs, w * bs, c // (bs * bs)])]


@converter("SPACE_TO_DEPTH")
def _space_to_depth(im, op):
    x, _ = _moved(im, op)
    bs = int(op.options.BlockSize())
    n, h, w, c = im.b.shape(x)
    if h % bs or w % bs:
        raise op.fail(f"a {h}x{w} image does not split into {bs}x{bs} blocks")
    t = im.b.reshape(x, [n, h // bs, bs, w // bs, bs, c])
    t = im.b.emit1("transpose", [t], axes=[0, 1, 3, 2, 4, 5])
    return [im.b.reshape(t, [n, h // bs, w // bs, bs * bs * c])]
