"""``relay.vision``: vision operators with tvm.relay.vision's signatures (``roi_align``)."""

from __future__ import annotations

from typing import Any

from xrelay.relay.expr import Call, Expr
from xrelay.relay.op import DEFAULT, dialect_defaults, make_call

__all__ = ["roi_align"]


@dialect_defaults("vision.roi_align")
def roi_align(
    data: Expr,
    rois: Expr,
    pooled_size: Any,
    spatial_scale: float,
    sample_ratio: int = DEFAULT,
    layout: str = DEFAULT,
    mode: str = DEFAULT,
) -> Call:
    """Bilinear-sampled pooling over the regions ``rois`` (``[batch_index, x1, y1, x2, y2]`` rows)."""
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
    )
