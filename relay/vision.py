"""``relay.vision``: vision operators with tvm.relay.vision's signatures (``roi_align``,
``roi_pool``, ``all_class_non_max_suppression``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from xrelay.relay.expr import Call, Expr, TupleWrapper, const
from xrelay.relay.op import DEFAULT, dialect_defaults, make_call

__all__ = ["all_class_non_max_suppression", "roi_align", "roi_pool"]


@dialect_defaults("vision.roi_align")
def roi_align(
    data: Expr,
    rois: Expr,
    pooled_size: Any,
    spatial_scale: float,
    sample_ratio: int = DEFAULT,
    layout: str = DEFAULT,
    mode: str = DEFAULT,
    *,
    min_roi_size: float = DEFAULT,
) -> Call:
    """Bilinear-sampled pooling over the regions ``rois`` (``[batch_index, x1, y1, x2, y2]`` rows).
    ``mode="max_corner"`` and ``min_roi_size`` are xrelay's (ONNX's max mode and region size)."""
    if isinstance(pooled_size, int):
        pooled_size = [pooled_size, pooled_size]
    return make_call(
        "vision.roi_align",
        [data, rois],
        pooled_size=list(pooled_size),
        spatial_scale=float(spatial_scale),
        sample_ratio=sample_ratio,
        layout=layout,
        mode=mode.decode() if isinstance(mode, bytes) else mode,
        min_roi_size=min_roi_size,
    )


@dialect_defaults("vision.all_class_non_max_suppression")
def all_class_non_max_suppression(
    boxes: Expr,
    scores: Expr,
    max_output_boxes_per_class: Any = -1,
    iou_threshold: Any = 0.5,
    score_threshold: Any = 0.0,
    output_format: str = DEFAULT,
) -> TupleWrapper:
    """Non-maximum suppression per batch and class: a ``TupleWrapper`` of the zero-padded
    ``(batch, class, box)`` int64 rows and their count (``output_format="onnx"``, the only one);
    ``max_output_boxes_per_class`` < 0 keeps every box. Scalars may be numbers or expressions."""
    dtype = getattr(getattr(boxes, "checked_type", None), "dtype", "float32")
    args = [boxes, scores]
    for v, dt in ((max_output_boxes_per_class, "int64"), (iou_threshold, dtype), (score_threshold, dtype)):
        args.append(v if isinstance(v, Expr) else const(np.array(v, dt)))
    call = make_call("vision.all_class_non_max_suppression", args, output_format=output_format)
    return TupleWrapper(call, 2)


@dialect_defaults("vision.roi_pool")
def roi_pool(data: Expr, rois: Expr, pooled_size: Any, spatial_scale: float, layout: str = DEFAULT) -> Call:
    """Max pooling over a ``pooled_size`` grid on each region of ``rois`` (``[batch_index, x1, y1, x2, y2]`` rows)."""
    if isinstance(pooled_size, int):
        pooled_size = [pooled_size, pooled_size]
    return make_call(
        "vision.roi_pool", [data, rois], pooled_size=list(pooled_size), spatial_scale=float(spatial_scale), layout=layout
    )
