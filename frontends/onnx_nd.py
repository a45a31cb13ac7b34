"""ONNX operators imported onto the 1-D/3-D convolutions and pools, resizing, ``gather_nd``,
shifts, ``ndarray_size`` and the group/instance/L2 normalisations, as Relay's ONNX frontend
maps them.

* ``Conv`` on 3-D/5-D inputs (in ``onnx.py``): ``nn.conv1d``/``nn.conv3d``; ``MaxPool``,
  ``AveragePool`` on 5-D: ``nn.max_pool3d``/``nn.avg_pool3d`` (a ceil-mode window ONNX drops
  because it would start in the end padding is sliced off, as for 2-D); ``GlobalAveragePool``,
  ``GlobalMaxPool`` on 5-D: ``nn.adaptive_*_pool3d`` to 1x1x1. 4-D inputs keep the 2-D import.
* ``Resize`` (opset 10+) on 4-D inputs whose N and C are not resized: ``image.resize2d`` with
  the output size from ``sizes`` or ``floor(in * scales)`` (constants), ``roi`` for
  ``tf_crop_and_resize``; modes nearest/linear/cubic, ``nearest_mode`` as the rounding method.
  Where resize2d cannot give ONNX's numbers (a scale that is not ``out / in`` exactly,
  ``antialias``, the rounding TOPI ignores, other ranks or resized N/C) the import applies
  ONNX's own per-axis weights instead (``onnx_resize.py``).
* ``Upsample`` (opset 7/9): ``nn.upsampling`` (nearest_neighbor or bilinear, asymmetric).
* ``DeformConv`` (opset 19) without ``mask``: ``nn.deformable_conv2d`` (plus ``B`` as an add) on
  the input padded by one zero row and column on each side, with the offsets shifted by one:
  ONNX samples points in (-1, 0) partially where TOPI's op gives 0, so the frame moves them
  inside; the output rows and columns the larger frame adds are sliced off.
* ``GatherND``: ``gather_nd`` after moving the index tuples to the first axis.
* ``BitShift``: ``left_shift``/``right_shift``; ``Size``: ``ndarray_size`` (int64).
* ``GroupNormalization``: ``nn.group_norm`` (opset 18's per-group scale and bias repeated per
  channel); ``InstanceNormalization``: ``nn.instance_norm``; ``LpNormalization``: p = 2 is
  ``nn.l2_normalize`` (eps 0), p = 1 ``x / sum(|x|)``, both 0 where the norm is 0 (as ONNX).
"""

from __future__ import annotations

import math

import numpy as np

from xrelay.frontends.onnx import _CONVERTERS, _Importer, _Node, _op, _spatial_pads, _Val
from xrelay.frontends.onnx_resize import resize_by_weights

_MAX_POOL_2D = _CONVERTERS["MaxPool"]
_AVG_POOL_2D = _CONVERTERS["AveragePool"]
_GLOBAL_AVG_2D = _CONVERTERS["GlobalAveragePool"]
_GLOBAL_MAX_2D = _CONVERTERS["GlobalMaxPool"]


def _rank_in(im: _Importer, node: _Node, x: _Val, ranks: tuple[int, ...]) -> int:
    r = im.rank(x)
    if r not in ranks:
        raise node.fail(f"inputs of rank {', '.join(map(str, ranks))} are supported, got rank {r}")
    return r


def _pool3d(im: _Importer, node: _Node, relay_name: str, **extra) -> list[_Val]:
    x = node.inputs[0]
    if node.num_outputs > 1:
        raise node.fail("the Indices output is not supported")
    if node.attrs.get("storage_order", 0):
        raise node.fail("storage_order = 1 is not supported")
    kernel = list(node.attrs["kernel_shape"])
    strides = list(node.attrs.get("strides", [1, 1, 1]))
    dil = list(node.attrs.get("dilations", [1, 1, 1]))
    pads = _spatial_pads(node, im.shape_of(x)[2:], kernel, strides, dil)
    ceil = bool(node.attrs.get("ceil_mode", 0))
    y = im.emit1(
        relay_name, [x], pool_size=kernel, strides=strides, dilation=dil, padding=pads, ceil_mode=ceil, **extra
    )
    if ceil:
        # ONNX drops a last window that would start inside the end padding; Relay keeps it
        xs, ys = im.shape_of(x), im.shape_of(y)
        want = list(ys[2:])
        for i in range(3):
            if xs[2 + i] is not None and (want[i] - 1) * strides[i] >= xs[2 + i] + pads[i]:
                want[i] -= 1
        if want != list(ys[2:]):
            y = im.emit1("strided_slice", [y], begin=[0, 0, 0], end=want, axes=[2, 3, 4])
    return [y]


@_op("MaxPool")
def _max_pool(im, node):
    if _rank_in(im, node, node.inputs[0], (4, 5)) == 4:
        return _MAX_POOL_2D(im, node)
    return _pool3d(im, node, "nn.max_pool3d")


@_op("AveragePool")
def _avg_pool(im, node):
    if _rank_in(im, node, node.inputs[0], (4, 5)) == 4:
        return _AVG_POOL_2D(im, node)
    return _pool3d(im, node, "nn.avg_pool3d", count_include_pad=bool(node.attrs.get("count_include_pad", 0)))


@_op("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(im, node):
    avg = node.op_type == "GlobalAveragePool"
    if _rank_in(im, node, node.inputs[0], (4, 5)) == 4:
        return (_GLOBAL_AVG_2D if avg else _GLOBAL_MAX_2D)(im, node)
    name = "nn.adaptive_avg_pool3d" if avg else "nn.adaptive_max_pool3d"
    return im.emit(name, [node.inputs[0]], output_size=[1, 1, 1])


# ---- resizing --------------------------------------------------------------------------------

_RESIZE_METHOD = {"nearest": "nearest_neighbor", "linear": "linear", "cubic": "cubic"}


@_op("Resize")
def _resize(im, node):
    x = node.inputs[0]
    xs = im.static_shape(x, node)
    mode = node.attrs.get("mode", "nearest")
    if mode not in _RESIZE_METHOD:
        raise node.fail(f"unknown mode '{mode}'")
    exact = bool(node.attrs.get("antialias", 0))  # image.resize2d has no antialiasing
    if node.attrs.get("keep_aspect_ratio_policy", "stretch") != "stretch":
        raise node.fail("only keep_aspect_ratio_policy 'stretch' is supported")
    if node.attrs.get("axes") is not None:
        raise node.fail("the axes attribute is not supported")
    if node.opset < 11:
        scales, sizes, roi = im.static(node.input(1), node, "scales"), None, None
        coord = "asymmetric"
    else:
        roi = im.static(node.input(1), node, "roi")
        scales = im.static(node.input(2), node, "scales")
        sizes = im.static(node.input(3), node, "sizes")
        coord = node.attrs.get("coordinate_transformation_mode", "half_pixel")
    if sizes is not None and sizes.size:
        out = [int(v) for v in sizes]
    elif scales is not None and scales.size:
        out = [int(math.floor(d * float(s))) for d, s in zip(xs, scales)]
        # ONNX maps coordinates with the scale itself, Relay's resize2d with the size ratio
        exact = exact or any(d * float(s) != int(d * float(s)) for d, s in zip(xs, scales))
    else:
        raise node.fail("needs constant scales or sizes")
    if len(out) != len(xs):
        raise node.fail(f"{len(out)} output sizes/scales for an input of rank {len(xs)}")
    exact = exact or len(xs) != 4
    if mode == "nearest":
        rounding = node.attrs.get("nearest_mode", "round_prefer_floor")
        whole = all(o % d == 0 and o >= d for o, d in zip(out[2:], xs[2:]))
        # TOPI divides integers for a whole-number upscale and ignores the rounding method
        exact = exact or (coord == "asymmetric" and whole and rounding in ("round_prefer_ceil", "ceil", "round"))
    if exact or out[:2] != list(xs[:2]):
        use_scales = None if sizes is not None and sizes.size else [float(v) for v in scales]
        return resize_by_weights(im, node, x, xs, out, use_scales)
    attrs = {
        "method": _RESIZE_METHOD[mode],
        "coordinate_transformation_mode": coord,
        "cubic_alpha": float(node.attrs.get("cubic_coeff_a", -0.75)),
        "cubic_exclude": int(node.attrs.get("exclude_outside", 0)),
        "extrapolation_value": float(node.attrs.get("extrapolation_value", 0.0)),
    }
    if mode == "nearest":
        attrs["rounding_method"] = node.attrs.get("nearest_mode", "round_prefer_floor")
    if coord == "tf_crop_and_resize":
        if roi is None or roi.size != 8:
            raise node.fail("tf_crop_and_resize needs an roi of 8 values")
        attrs["roi"] = [float(roi[2]), float(roi[3]), float(roi[6]), float(roi[7])]
    return im.emit("image.resize2d", [x], size=out[2:], **attrs)


@_op("DeformConv")
def _deform_conv(im, node):
    x, w, offset = node.inputs[:3]
    bias = node.inputs[3] if len(node.inputs) > 3 and node.input(3) else None
    if len(node.inputs) > 4 and node.input(4):
        raise node.fail("mask is not supported (Relay's nn.deformable_conv2d has none)")
    _rank_in(im, node, x, (4,))
    xs, ws, os_ = (im.static_shape(v, node) for v in (x, w, offset))
    kernel = [int(k) for k in node.attrs.get("kernel_shape", ws[2:])]
    strides = [int(v) for v in node.attrs.get("strides", [1, 1])]
    dilations = [int(v) for v in node.attrs.get("dilations", [1, 1])]
    pads = [int(v) for v in node.attrs.get("pads", [0, 0, 0, 0])]
    groups, dgroups = int(node.attrs.get("group", 1)), int(node.attrs.get("offset_group", 1))
    # the frame one larger on each side: the padded input, offsets + 1, a larger output
    big = im.emit1("nn.pad", [x, im.scalar(0.0, x)], pad_width=[[0, 0], [0, 0], [1, 1], [1, 1]])
    oh = (xs[2] + 2 + pads[0] + pads[2] - dilations[0] * (kernel[0] - 1) - 1) // strides[0] + 1
    ow = (xs[3] + 2 + pads[1] + pads[3] - dilations[1] * (kernel[1] - 1) - 1) // strides[1] + 1
    shifted = im.emit1("add", [offset, im.scalar(1.0, offset)])
    grow = [[0, 0], [0, 0], [0, oh - os_[2]], [0, ow - os_[3]]]
    shifted = im.emit1("nn.pad", [shifted, im.scalar(0.0, offset)], pad_width=grow)
    y = im.emit1(
        "nn.deformable_conv2d", [big, shifted, w], strides=strides, padding=pads, dilation=dilations,
        deformable_groups=dgroups, groups=groups, channels=ws[0], kernel_size=kernel,
    )  # fmt: skip
    y = im.emit1("strided_slice", [y], begin=[0, 0], end=[os_[2], os_[3]], axes=[2, 3])
    if bias is not None:
        y = im.emit1("add", [y, im.reshape(bias, [ws[0], 1, 1])])
    return [y]


@_op("Upsample")
def _upsample(im, node):
    x = node.inputs[0]
    _rank_in(im, node, x, (4,))
    mode = node.attrs.get("mode", "nearest")
    if node.opset >= 9 and not node.input(1).known:  # Relay's dyn.nn.upsampling
        if mode not in ("nearest", "linear", "bilinear"):
            raise node.fail(f"unknown mode '{mode}'")
        scales = im.cast_like(node.input(1), "float32")
        sh, sw = (im.reshape(im.element(scales, i), []) for i in (2, 3))
        method = "nearest_neighbor" if mode == "nearest" else "bilinear"
        return im.emit("dyn.nn.upsampling", [x, sh, sw], method=method)
    if node.opset >= 9:
        scales = im.static(node.input(1), node, "scales")
    else:
        scales = np.asarray(node.attrs.get("scales", []), dtype=np.float32)
    if scales is None or scales.size != 4 or float(scales[0]) != 1 or float(scales[1]) != 1:
        raise node.fail(f"only H and W may be scaled, got scales {None if scales is None else scales.tolist()}")
    mode = node.attrs.get("mode", "nearest")
    if mode not in ("nearest", "linear", "bilinear"):
        raise node.fail(f"unknown mode '{mode}'")
    method = "nearest_neighbor" if mode == "nearest" else "bilinear"
    return im.emit("nn.upsampling", [x], scale_h=float(scales[2]), scale_w=float(scales[3]), method=method)


# ---- gathers, shifts, sizes --------------------------------------------------------------------


@_op("GatherND")
def _gather_nd(im, node):
    data, indices = node.inputs[0], node.inputs[1]
    r = im.rank(indices)
    moved = im.emit1("transpose", [indices], axes=[r - 1, *range(r - 1)])
    return im.emit("gather_nd", [data, moved], batch_dims=node.attrs.get("batch_dims", 0))


@_op("BitShift")
def _bit_shift(im, node):
    direction = node.attrs.get("direction")
    if direction not in ("LEFT", "RIGHT"):
        raise node.fail(f"direction must be LEFT or RIGHT, got {direction!r}")
    name = "left_shift" if direction == "LEFT" else "right_shift"
    return im.emit(name, [node.inputs[0], node.inputs[1]])


@_op("Size")
def _size(im, node):
    return im.emit("ndarray_size", [node.inputs[0]], dtype="int64")


# ---- normalisations ----------------------------------------------------------------------------


@_op("GroupNormalization")
def _group_norm(im, node):
    x, scale, bias = node.inputs[:3]
    groups = node.attrs.get("num_groups")
    if groups is None:
        raise node.fail("num_groups is required")
    c = im.shape_of(x)[1]
    if c is None:
        raise node.fail("the channel dimension must be static")
    eps = float(node.attrs.get("epsilon", 1e-5))
    if im.shape_of(scale) == (groups,) and groups != c:
        # opset 18: one scale and bias per group, repeated over the group's channels
        scale = im.emit1("repeat", [scale], repeats=c // groups, axis=0)
        bias = im.emit1("repeat", [bias], repeats=c // groups, axis=0)
    return im.emit("nn.group_norm", [x, scale, bias], num_groups=groups, axis=1, epsilon=eps)


@_op("InstanceNormalization")
def _instance_norm(im, node):
    x, scale, bias = node.inputs[:3]
    return im.emit("nn.instance_norm", [x, scale, bias], axis=1, epsilon=float(node.attrs.get("epsilon", 1e-5)))


@_op("LpNormalization")
def _lp_norm(im, node):
    x = node.inputs[0]
    axis = node.attrs.get("axis", -1)
    p = node.attrs.get("p", 2)
    if p == 2:
        y = im.emit1("nn.l2_normalize", [x], eps=0.0, axis=[axis])
        norm = im.emit1("sum", [im.emit1("multiply", [x, x])], axis=[axis], keepdims=True)
    elif p == 1:
        norm = im.emit1("sum", [im.emit1("abs", [x])], axis=[axis], keepdims=True)
        y = im.emit1("divide", [x, norm])
    else:
        raise node.fail(f"p must be 1 or 2, got {p}")
    # ONNX gives 0 where the norm is 0 (Relay's l2_normalize with eps 0 gives 0/0 = NaN)
    zero = im.emit1("equal", [norm, im.scalar(0.0, norm)])
    return im.emit("where", [zero, im.scalar(0.0, x), y])
