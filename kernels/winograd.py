"""Winograd F(m x m, 3x3): its matrices, the weight transform, and the reference kernel of
``nn.contrib_conv2d_winograd_without_weight_transform``.

An (m + 2)^2 input tile d gives the m x m output block ``A^T [(G g G^T) * (B^T d B)] A`` of a
3x3 kernel g. The matrices are the ones every Winograd kernel of xrelay computes with (the
native and oneDNN engines' ``winograd4.h`` / ``winograd_core.h``, the C target), so they are
stated here, below the runtime, once.

>>> import numpy as np
>>> from xrelay.kernels import KERNELS
>>> x = np.ones((1, 8, 6, 6), "float32"); w = np.ones((8, 8, 3, 3), "float32")
>>> u = winograd_weights_packed(w, 4, 8)
>>> u.shape
(6, 6, 1, 8, 8)
>>> y = KERNELS["nn.contrib_conv2d_winograd_without_weight_transform"](
...     x, u, tile_size=4, padding=(1, 1, 1, 1), channels=8, kernel_size=(3, 3))
>>> float(y[0, 0, 2, 2]), float(y[0, 0, 0, 0])
(72.0, 32.0)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._registry import register
from .blocked import blocked_layouts

WINOGRAD_G = {
    2: np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]]),
    # points 0, 1, -1, 2, -1/2, infinity; rows halved where winograd4.h doubles B^T's rows
    4: np.array(
        [
            [1 / 2, 0, 0],
            [-1 / 6, -1 / 6, -1 / 6],
            [1 / 6, -1 / 6, 1 / 6],
            [1 / 30, 1 / 15, 2 / 15],
            [-16 / 15, 8 / 15, -4 / 15],
            [0, 0, 1 / 2],
        ]
    ),
}
"""Winograd's weight transforms ``G`` by output block size m."""
WINOGRAD_BT = {
    2: np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], np.float64),
    4: np.array([[2, 3, -4, -3, 2, 0], [0, -2, -5, -1, 2, 0], [0, 2, 1, -5, 2, 0], [0, -1, -2, 1, 2, 0],
                 [0, 2, -1, -2, 1, 0], [0, 2, 3, -4, -3, 2]], np.float64),
}  # fmt: skip
"""Winograd's input transforms ``B^T`` as the C kernels compute them (F(4x4): winograd4.h)."""
WINOGRAD_AT = {
    2: np.array([[1, 1, 1, 0], [0, 1, -1, -1]], np.float64),
    4: np.array([[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -1 / 2, 0], [0, 1, 1, 4, 1 / 4, 0], [0, 1, -1, 8, -1 / 8, 1]]),
}
"""Winograd's output transforms ``A^T``: ``y = A^T [(G g G^T) * (B^T d B)] A``."""


def winograd_weights(w_hwio: np.ndarray, tile: int, dtype: np.dtype) -> np.ndarray:
    """The transformed weights ``u[k] = (G g G^T)[k]`` of a 3x3 HWIO kernel as ``(tile + 2)**2``
    matrices of input x output channels, computed in float64 and rounded once, 32 output
    channels at a time (float64 temporaries of the whole weight would raise the peak memory
    by several times its size)."""
    gm = WINOGRAD_G[tile]
    c, o = w_hwio.shape[2:]
    count = (tile + 2) ** 2
    u = np.empty((count, c, o), dtype)
    for o0 in range(0, o, 32):
        part = np.einsum("ai,ijco,bj->abco", gm, w_hwio[..., o0 : o0 + 32].astype(np.float64), gm)
        u[..., o0 : o0 + 32] = part.reshape(count, c, -1)
    return u


def winograd_weights_packed(w_oihw: np.ndarray, tile: int, lanes: int) -> np.ndarray:
    """The transformed weights of a 3x3 OIHW kernel in the packed form
    ``nn.contrib_conv2d_winograd_without_weight_transform`` takes (TVM's arm_cpu
    ``(alpha, alpha, O / lanes, I, lanes)``): for each of the ``alpha x alpha`` matrices and each
    block of ``lanes`` output channels, every input channel's ``lanes`` weights contiguous."""
    o, i, kh, kw = w_oihw.shape
    if (kh, kw) != (3, 3) or o % lanes:
        raise ValueError(f"Winograd weights: a 3x3 kernel with output channels a multiple of {lanes}, got {w_oihw.shape}")
    alpha = tile + 2
    u = winograd_weights(np.transpose(w_oihw, (2, 3, 1, 0)), tile, w_oihw.dtype)  # (alpha^2, I, O)
    return np.ascontiguousarray(u.reshape(alpha, alpha, i, o // lanes, lanes).transpose(0, 1, 3, 2, 4))


@register("nn.contrib_conv2d_winograd_without_weight_transform")
@blocked_layouts(("data_layout",), "out_layout")
def conv2d_winograd_without_weight_transform(
    data: np.ndarray,
    weight: np.ndarray,
    *,
    out: np.ndarray | None = None,
    tile_size: int,
    strides: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
    channels: int | None,
    kernel_size: Sequence[int] | None,
    data_layout: str,
    kernel_layout: str,
    out_layout: str,
    out_dtype: str,
) -> np.ndarray:
    """A 3x3 stride-1 convolution of NCHW data with Winograd-transformed weights (packed
    ``(alpha, alpha, O / lanes, I, lanes)``): each tile's ``B^T d B``, the products with the
    weights summed over input channels, and ``A^T m A``, all in float64, rounded once to the
    result type. The value is the exact convolution of the data with the kernel the weights
    were transformed from (up to the weights' own rounding)."""
    del strides, dilation, groups, kernel_size, kernel_layout  # checked by the op's type relation
    if data_layout != "NCHW" or data.ndim != 4 or weight.ndim != 5:
        raise ValueError(f"nn.contrib_conv2d_winograd_without_weight_transform: NCHW data and a 5-d weight, got "
                         f"{data_layout} {data.shape} and {weight.shape}")  # fmt: skip
    m = tile_size
    alpha = m + 2
    n, c, h, w = data.shape
    a1, a2, ob, i, lanes = weight.shape
    o = ob * lanes
    pt, pl, pb, pr = padding
    oh, ow = h + pt + pb - 2, w + pl + pr - 2
    th, tw = -(-oh // m), -(-ow // m)
    # zero padding on every side, and past the bottom and right to whole tiles
    x = np.zeros((n, c, th * m + 2, tw * m + 2))
    x[:, :, pt : pt + h, pl : pl + w] = data
    s = x.strides
    tiles = np.lib.stride_tricks.as_strided(x, (n, c, th, tw, alpha, alpha), (*s[:2], s[2] * m, s[3] * m, *s[2:]))
    bt, at = WINOGRAD_BT[m], WINOGRAD_AT[m]
    v = np.einsum("ai,nctxij,bj->abntxc", bt, tiles, bt)
    u = weight.astype(np.float64).transpose(0, 1, 3, 2, 4).reshape(alpha, alpha, i, o)
    prod = np.matmul(v.reshape(alpha, alpha, n * th * tw, c), u)  # (alpha, alpha, tiles, O)
    y = np.einsum("ia,abtO,jb->tOij", at, prod, at).reshape(n, th, tw, o, m, m)
    y = y.transpose(0, 3, 1, 4, 2, 5).reshape(n, o, th * m, tw * m)[:, :, :oh, :ow]
    res = y.astype(out_dtype or data.dtype)
    if out is None:
        return res
    out[...] = res
    return out


__all__ = ["WINOGRAD_AT", "WINOGRAD_BT", "WINOGRAD_G", "conv2d_winograd_without_weight_transform",
           "winograd_weights", "winograd_weights_packed"]  # fmt: skip
