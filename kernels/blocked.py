"""Blocked layouts (``NCHW8c`` data, ``OIHW8i8o`` kernels) for the kernels that take layouts.

``alter-op-layout`` gives convolutions and pools layouts whose channel axis is split into
blocks (TVM's x86 ``NCHW{c}c`` / ``OIHW{i}i{o}o``). These kernels read such operands by
unblocking them to their primal layouts (``NCHW``, ``OIHW``), compute there with the plain
kernel, and block the result as the op's output layout says. Plain layouts go straight through.
The kernels that take layouts apply ``blocked_layouts`` under their ``@register``.

>>> import numpy as np
>>> from xrelay.kernels import KERNELS, layout_transform_array
>>> x = np.ones((1, 8, 4, 4), "float32"); w = np.ones((8, 8, 1, 1), "float32")
>>> xb = layout_transform_array(x, "NCHW", "NCHW4c"); wb = layout_transform_array(w, "OIHW", "OIHW4i4o")
>>> KERNELS["nn.conv2d"](xb, wb, data_layout="NCHW4c", kernel_layout="OIHW4i4o").shape
(1, 2, 4, 4, 4)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ._registry import Kernel
from .transform import layout_transform_array


def primal_layout(layout: str) -> str:
    """``NCHW8c`` -> ``NCHW``; ``OIHW8i8o`` -> ``OIHW``."""
    return "".join(c for c in layout if c.isupper())


def blocked_layouts(layout_keys: tuple[str, ...], out_key: str) -> Callable[[Kernel], Kernel]:
    """A kernel taking plain layouts made to take blocked ones too: the operands named by
    ``layout_keys`` are unblocked to their primal layouts, the plain kernel computes, and the
    result is blocked as ``out_key`` (else the first layout) says. Applied under ``@register``
    by the kernels that take layouts, so the registry holds each kernel once.

        @register("nn.max_pool2d")
        @blocked_layouts(("layout",), "out_layout")
        def max_pool2d(x, *, out=None, layout, out_layout, ...): ...
    """

    def wrap(plain: Kernel) -> Kernel:
        @functools.wraps(plain)
        def kernel(*inputs: np.ndarray, out: Any = None, **attrs: Any) -> Any:
            layouts = [attrs[k] for k in layout_keys]
            out_layout = attrs.get(out_key) or layouts[0]
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
                raise ValueError(f"{plain.__name__}: output buffer {out.shape} does not fit the result {res.shape}")
            out[...] = res
            return out

        return kernel

    return wrap
