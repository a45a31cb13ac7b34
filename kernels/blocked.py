"""Blocked layouts (``NCHW8c`` data, ``OIHW8i8o`` kernels) for the kernels that take layouts.

``alter-op-layout`` gives convolutions and pools layouts whose channel axis is split into
blocks (TVM's x86 ``NCHW{c}c`` / ``OIHW{i}i{o}o``). These kernels read such operands by
unblocking them to their primal layouts (``NCHW``, ``OIHW``), compute there with the plain
kernel, and block the result as the op's output layout says. Plain layouts go straight through.

>>> import numpy as np
>>> from xrelay.kernels import KERNELS, layout_transform_array
>>> x = np.ones((1, 8, 4, 4), "float32"); w = np.ones((8, 8, 1, 1), "float32")
>>> xb = layout_transform_array(x, "NCHW", "NCHW4c"); wb = layout_transform_array(w, "OIHW", "OIHW4i4o")
>>> KERNELS["nn.conv2d"](xb, wb, data_layout="NCHW4c", kernel_layout="OIHW4i4o").shape
(1, 2, 4, 4, 4)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._registry import KERNELS
from .transform import layout_transform_array


def primal_layout(layout: str) -> str:
    """``NCHW8c`` -> ``NCHW``; ``OIHW8i8o`` -> ``OIHW``."""
    return "".join(c for c in layout if c.isupper())


def _with_blocked_layouts(name: str, layout_keys: tuple[str, ...], out_key: str) -> None:
    plain = KERNELS[name]
    bound = dict(getattr(plain, "keywords", None) or {})

    def kernel(*inputs: np.ndarray, out: Any = None, **attrs: Any) -> Any:
        given = {**bound, **attrs}
        layouts = [given[k] for k in layout_keys]
        out_layout = given[out_key] or layouts[0]
        if all(lay.isupper() for lay in (*layouts, out_layout)):
            return plain(*inputs, out=out, **attrs)
        primal = [primal_layout(lay) for lay in layouts]
        args = [
            layout_transform_array(x, lay, p) if i < len(layouts) else x
            for i, (x, lay, p) in enumerate(zip(inputs, layouts + [""] * len(inputs), primal + [""] * len(inputs)))
        ]
        attrs = dict(attrs, **dict(zip(layout_keys, primal, strict=True)), **{out_key: ""})
        res = layout_transform_array(plain(*args, **attrs), primal[0], out_layout)
        if out is None:
            return np.ascontiguousarray(res)
        if out.shape != res.shape:
            raise ValueError(f"{name}: output buffer {out.shape} does not fit the result {res.shape}")
        out[...] = res
        return out

    kernel.__doc__ = plain.__doc__
    KERNELS[name] = kernel


for _name in ("nn.conv2d", "nn.conv2d_transpose"):
    _with_blocked_layouts(_name, ("data_layout", "kernel_layout"), "out_layout")
for _name in (
    "nn.max_pool2d",
    "nn.avg_pool2d",
    "nn.global_max_pool2d",
    "nn.global_avg_pool2d",
    "nn.adaptive_avg_pool2d",
):
    if _name in KERNELS:
        _with_blocked_layouts(_name, ("layout",), "out_layout")
