"""``relay.image``: image operators with tvm.relay.image's signatures (``resize1d``, ``resize2d``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from xrelay.relay.expr import Call, Constant, Expr
from xrelay.relay.op import DEFAULT, dialect_defaults, make_call

__all__ = ["grid_sample", "resize1d", "resize2d"]


@dialect_defaults("image.resize1d")
def resize1d(
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
    """Resize W to ``size`` (static: one integer). ``roi`` (``[start_w, end_w]``) is used by
    ``tf_crop_and_resize``; ``None`` is zeros, as in tvm.relay. (Relay's ``dyn.image.resize1d``
    for run-time sizes is not in xrelay: an ``Expr`` size is an error.)"""
    if isinstance(size, Expr) or isinstance(roi, Expr):
        from xrelay.error import UnsupportedError

        raise UnsupportedError("relay.image.resize1d: run-time sizes (dyn.image.resize1d) are not supported")
    return make_call(
        "image.resize1d", [data], size=[int(v) for v in size] if not isinstance(size, int) else [size],
        roi=DEFAULT if roi is None else [float(r) for r in roi], layout=layout, method=method,
        coordinate_transformation_mode=coordinate_transformation_mode, rounding_method=rounding_method,
        cubic_alpha=cubic_alpha, cubic_exclude=cubic_exclude, extrapolation_value=extrapolation_value,
        out_dtype=out_dtype or DEFAULT,
    )  # fmt: skip


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
    attrs = {
        "layout": layout,
        "method": method,
        "coordinate_transformation_mode": coordinate_transformation_mode,
        "rounding_method": rounding_method,
        "cubic_alpha": cubic_alpha,
        "cubic_exclude": cubic_exclude,
        "extrapolation_value": extrapolation_value,
        "out_dtype": out_dtype or DEFAULT,
    }
    if isinstance(size, Expr) or isinstance(roi, Expr):
        # tvm.relay: dyn.image.resize2d, roi a tensor (zeros when absent)
        if not isinstance(roi, Expr):
            roi = Constant(np.asarray([0.0] * 4 if roi is None else roi, dtype="float32"))
        if not isinstance(size, Expr):
            size = Constant(np.asarray(size, dtype="int64"))
        return make_call("dyn.image.resize2d", [data, size, roi], **attrs)
    return make_call(
        "image.resize2d", [data], size=size, roi=DEFAULT if roi is None else [float(r) for r in roi], **attrs
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
