"""ONNX's ``onnx/defs/object_detection`` operators: ``RoiAlign``, ``NonMaxSuppression``.

As Relay's ONNX frontend maps them: ``RoiAlign`` -> ``vision.roi_align``; ``NonMaxSuppression``
-> ``vision.all_class_non_max_suppression`` (centre boxes turned into corners first) and its rows
cut to the count with ``dyn.strided_slice``.
"""

from __future__ import annotations

import numpy as np

from xrelay.frontends.onnx.importer import (
    Value,
)
from xrelay.frontends.onnx.registry import converter


@converter("RoiAlign")
def _roi_align(im, node):
    """``vision.roi_align`` over rows ``[batch_index, x1, y1, x2, y2]``, as Relay's frontend;
    ``half_pixel`` (opset 16's default) shifts the regions by half a pixel and lets them be
    smaller than a pixel (``min_roi_size`` 0; ``output_half_pixel`` keeps Relay's 1); ONNX's
    ``max`` is the largest weighted corner term (``mode = max_corner``), not Relay's largest
    bilinear sample."""
    x, rois, batch = node.inputs[:3]
    scale = float(node.attrs.get("spatial_scale", 1.0))
    coord = node.attrs.get("coordinate_transformation_mode", "half_pixel" if node.opset >= 16 else "output_half_pixel")
    if coord not in ("half_pixel", "output_half_pixel"):
        raise node.fail(f"unknown coordinate_transformation_mode {coord!r}")
    mode = node.attrs.get("mode", "avg")
    if mode not in ("avg", "max"):
        raise node.fail(f"mode must be avg or max, got {mode!r}")
    if coord == "half_pixel":
        rois = im.emit1("subtract", [rois, im.scalar(0.5 / scale, rois)])
    index = im.emit1("expand_dims", [im.cast_like(batch, im.dtype_of(rois))], axis=1)
    rows = im.emit1("concatenate", [index, rois], axis=1)
    return im.emit(
        "vision.roi_align",
        [x, rows],
        pooled_size=[int(node.attrs.get("output_height", 1)), int(node.attrs.get("output_width", 1))],
        spatial_scale=scale,
        sample_ratio=int(node.attrs.get("sampling_ratio", 0)),
        mode={"avg": "avg", "max": "max_corner"}.get(mode, mode),
        min_roi_size=0.0 if coord == "half_pixel" else 1.0,
    )


@converter("NonMaxSuppression")
def _nms(im, node):
    boxes, scores = node.inputs[0], node.inputs[1]
    dt = im.dtype_of(boxes)
    if node.attrs.get("center_point_box", 0):
        # (x_centre, y_centre, w, h) -> corners (y1, x1, y2, x2), as Relay's frontend
        xc, yc, w, h = (im.emit1("strided_slice", [boxes], begin=[i], end=[i + 1], axes=[2]) for i in range(4))
        half = im.const(np.array(0.5, dt))
        hw, hh = im.emit1("multiply", [w, half]), im.emit1("multiply", [h, half])
        corners = [
            im.emit1("subtract", [yc, hh]),
            im.emit1("subtract", [xc, hw]),
            im.emit1("add", [yc, hh]),
            im.emit1("add", [xc, hw]),
        ]
        boxes = im.emit1("concatenate", corners, axis=2)

    def scalar(i: int, default, dtype) -> Value:
        v = node.input(i)
        if v is None:
            return im.const(np.array(default, dtype))
        if any(d != 1 for d in im.shape_of(v)):
            raise node.fail(f"input {i} must be a scalar, got shape {list(im.shape_of(v))}")
        return im.reshape(im.cast_like(v, np.dtype(dtype).name), [])

    max_out = scalar(2, 0, np.int64)  # ONNX's default: no boxes; negative ones too (Relay's: all)
    max_out = im.emit1("maximum", [max_out, im.const(np.array(0, np.int64))])
    iou = scalar(3, 0.0, dt)
    floor = scalar(4, -np.inf, dt)  # absent: every box is a candidate
    selected, count = im.emit("vision.all_class_non_max_suppression", [boxes, scores, max_out, iou, floor])
    return [im.take_first(selected, count)]
