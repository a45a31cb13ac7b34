"""``relay.image``: image operators with tvm.relay.image's signatures (``resize2d``)."""

from __future__ import annotations

from typing import Any

from xrelay.relay.expr import Call, Expr
from xrelay.relay.op import DEFAULT, dialect_defaults, make_call

__all__ = ["grid_sample", "resize2d"]


@dialect_defaults("image.resize2d")
def resize2d(
    data: Expr,
    size: Any,
    roi: Any = None,
    layout: str = DEFAULT,
    method: str = DEFAULT,
    coordinate_transformation_mode: str = DEFAULT,
    rounding_method: str = DEFAULT,
    cubic_alpha: float = DEFAULT,
    cubic_exclude: int = DEFAULT,
    extrapolation_value: float = DEFAULT,
    out_dtype: str | None = None,
) -> Call:
    """Resize H and W to ``size`` (static: a pair of integers). ``roi`` (``[start_h, start_w,
    end_h, end_w]``) is used by ``tf_crop_and_resize``; ``None`` is zeros, as in tvm.relay."""
    if isinstance(size, Expr):
        raise TypeError("image.resize2d: size must be static (a pair of integers); dynamic resize is not supported")
    if isinstance(roi, Expr):
        raise TypeError("image.resize2d: roi must be static (four numbers)")
    return make_call(
        "image.resize2d",
        [data],
        size=size,
        roi=DEFAULT if roi is None else [float(r) for r in roi],
        layout=layout,
        method=method,
        coordinate_transformation_mode=coordinate_transformation_mode,
        rounding_method=rounding_method,
        cubic_alpha=cubic_alpha,
        cubic_exclude=cubic_exclude,
        extrapolation_value=extrapolation_value,
        out_dtype=out_dtype or DEFAULT,
    )


@dialect_defaults("image.grid_sample")
def grid_sample(
    data: Expr,
    grid: Expr,
    method: str = DEFAULT,
    layout: str = DEFAULT,
    padding_mode: str = DEFAULT,
    align_corners: bool = DEFAULT,
) -> Call:
    """Sample ``data`` at ``grid``'s normalised positions (``grid`` ``(N, 2, H, W)`` for NCHW,
    ``(N, 3, D, H, W)`` for NCDHW; x first)."""
    return make_call(
        "image.grid_sample",
        [data, grid],
        method=method,
        layout=layout,
        padding_mode=padding_mode,
        align_corners=align_corners,
    )
