"""N-d spatial kernels: ``nn.conv1d``, ``nn.conv3d``, the 3-D pools, ``nn.upsampling``,
``image.resize2d`` and ``nn.group_norm`` (a normalisation over spatial axes).

Convolutions and pools work on any number of spatial axes: the data is brought to the
canonical layout (``NC`` + spatial, weights ``OI`` + spatial), windows are strided views
(``sliding_window_view``) and a convolution is one ``tensordot`` per group. Resizing follows
TOPI's ``resize2d`` (coordinate transformation modes, rounding methods, cubic with ``alpha``
and ``exclude``, ``tf_crop_and_resize`` with extrapolation), separably per axis; indices outside
the image are clamped to the border as TOPI does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from xrelay.dialects.relay.ops import parse_layout

from ._registry import check_float, compute_dtype, emit, norm_axis, register, truncdiv
from .blocked import blocked_layouts
from .nn import _along, _lowest, _out_len, _perm, _result_dtypes, _window_counts, instance_norm


def _spatial(layout: str, canonical: str, op: str) -> list[int]:
    """The permutation taking ``layout`` to ``canonical`` (both permutations of one set)."""
    return _perm(layout, canonical, op)


def _pad_spatial(x: np.ndarray, before: Sequence[int], after: Sequence[int], fill) -> np.ndarray:
    widths = [(0, 0), (0, 0)] + [(int(b), int(a)) for b, a in zip(before, after)]
    if not any(b or a for b, a in widths):
        return x
    return np.pad(x, widths, constant_values=fill)


def _windows(xp: np.ndarray, kernel: Sequence[int], strides: Sequence[int], dilation: Sequence[int], out_len: Sequence[int]):
    """(N, C, *out, *kernel) view of the windows of the padded canonical ``xp``."""
    nd = len(kernel)
    extent = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    win = sliding_window_view(xp, extent, axis=tuple(range(2, 2 + nd)))
    idx = (slice(None), slice(None))
    idx += tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(out_len, strides))
    idx += tuple(slice(None, None, d) for d in dilation)
    return win[idx]


def _conv_nd(
    op, data, weight, strides, padding, dilation, groups, channels, kernel_size,
    data_layout, kernel_layout, out_layout, out_dtype, canonical, kcanonical,
):  # fmt: skip
    nd = len(canonical) - 2
    res_dt, comp_dt = _result_dtypes(data, weight, out_dtype, op)
    if data.ndim != nd + 2 or weight.ndim != nd + 2:
        raise ValueError(f"{op}: expects {nd + 2}-d data and weight, got {data.shape} and {weight.shape}")
    x = np.transpose(data, _spatial(data_layout, canonical, op)).astype(comp_dt, copy=False)
    w = np.transpose(weight, _spatial(kernel_layout, kcanonical, op)).astype(comp_dt, copy=False)
    o, cg, kernel = w.shape[0], w.shape[1], w.shape[2:]
    c = x.shape[1]
    if groups <= 0 or c != cg * groups or o % groups:
        raise ValueError(f"{op}: {c} input channels, weight {w.shape} and groups={groups} disagree")
    if channels is not None and channels != o:
        raise ValueError(f"{op}: channels={channels} but the weight has {o} output channels")
    if kernel_size is not None and tuple(kernel_size) != tuple(kernel):
        raise ValueError(f"{op}: kernel_size={tuple(kernel_size)} but the weight is {tuple(kernel)}")
    before, after = padding[:nd], padding[nd:]
    out_len = [
        _out_len(x.shape[2 + i], kernel[i], strides[i], dilation[i], before[i] + after[i], False, op)
        for i in range(nd)
    ]
    win = _windows(_pad_spatial(x, before, after, 0), kernel, strides, dilation, out_len)
    og = o // groups
    parts = []
    axes_k = list(range(1, 2 + nd))
    with np.errstate(all="ignore"):
        for g in range(groups):
            wg = w[g * og : (g + 1) * og]  # (og, cg, *k)
            xg = win[:, g * cg : (g + 1) * cg]  # (N, cg, *out, *k)
            # contract channel and kernel axes: result (N, *out, og)
            xg = np.moveaxis(xg, 1, 1 + nd)  # (N, *out, cg, *k)
            parts.append(np.tensordot(xg, wg, axes=(list(range(1 + nd, 2 + 2 * nd)), axes_k)))
        res = np.concatenate(parts, axis=-1) if groups > 1 else parts[0]
    res = np.moveaxis(res, -1, 1)  # canonical
    return np.transpose(res, _perm(canonical, out_layout or data_layout, op)), res_dt


@register("nn.conv1d", "nn.conv3d")
@blocked_layouts(("data_layout", "kernel_layout"), "out_layout")
def conv_nd(
    data: np.ndarray, weight: np.ndarray, *, out: np.ndarray | None = None,
    strides: Sequence[int], padding: Sequence[int], dilation: Sequence[int], groups: int,
    channels: int | None, kernel_size: Sequence[int] | None, data_layout: str, kernel_layout: str,
    out_layout: str, out_dtype: str,
) -> np.ndarray:  # fmt: skip
    """Relay ``nn.conv1d`` (padding ``[left, right]``) and ``nn.conv3d`` (padding
    ``[front, top, left, back, bottom, right]``): the rank of the data picks the op. Blocked
    layouts (``NCDHW2c`` data, ``OIDHW2i4o`` kernel) compute in their primal layouts."""
    nd = data.ndim - 2
    if nd not in (1, 3):
        raise ValueError(f"nn.conv1d/nn.conv3d: expects 3-d or 5-d data, got {data.shape}")
    canonical, kcanonical = ("NCW", "OIW") if nd == 1 else ("NCDHW", "OIDHW")
    op = f"nn.conv{nd}d"
    res, dt = _conv_nd(
        op, data, weight, strides, padding, dilation, groups, channels, kernel_size,
        data_layout, kernel_layout, out_layout, out_dtype, canonical, kcanonical,
    )  # fmt: skip
    return emit(res, out, op, dt)


@register("nn.conv3d_transpose")
def conv3d_transpose(
    data: np.ndarray, weight: np.ndarray, *, out: np.ndarray | None = None,
    strides: Sequence[int], padding: Sequence[int], dilation: Sequence[int], groups: int,
    channels: int | None, kernel_size: Sequence[int] | None, data_layout: str, kernel_layout: str,
    out_layout: str, output_padding: Sequence[int], out_dtype: str,
) -> np.ndarray:  # fmt: skip
    """Relay ``nn.conv3d_transpose``: per group, the weight (IODHW) times the input gives each
    kernel tap's contribution, which lands on the output grid at ``x * stride + tap *
    dilation`` (col2im); the padding is then cut from each side, ``output_padding`` added at
    the end (zeros where no tap lands)."""
    op = "nn.conv3d_transpose"
    res_dt, comp_dt = _result_dtypes(data, weight, out_dtype, op)
    if data.ndim != 5 or weight.ndim != 5:
        raise ValueError(f"{op}: expects 5-d data and weight, got {data.shape} and {weight.shape}")
    x = np.transpose(data, _perm(data_layout, "NCDHW", op)).astype(comp_dt, copy=False)
    w = np.transpose(weight, _perm(kernel_layout, "IODHW", op)).astype(comp_dt, copy=False)
    n, c, *size = x.shape
    ci, og, *kernel = w.shape
    if groups <= 0 or ci != c or c % groups:
        raise ValueError(f"{op}: {c} input channels, weight {w.shape} (IODHW), groups={groups}")
    o = og * groups
    if channels is not None and channels != o:
        raise ValueError(f"{op}: channels={channels} but the weight gives {o} output channels")
    if kernel_size is not None and tuple(kernel_size) != tuple(kernel):
        raise ValueError(f"{op}: kernel_size={tuple(kernel_size)} but the weight is {tuple(kernel)}")
    before, after = padding[:3], padding[3:]
    full = [(size[i] - 1) * strides[i] + (kernel[i] - 1) * dilation[i] + 1 for i in range(3)]
    out_len = [full[i] - before[i] - after[i] + output_padding[i] for i in range(3)]
    if min(out_len) <= 0 or min(output_padding) < 0:
        raise ValueError(f"{op}: padding leaves an empty output ({out_len})")
    cg = c // groups
    canvas = np.zeros((n, o, *(max(full[i], before[i] + out_len[i]) for i in range(3))), comp_dt)
    with np.errstate(all="ignore"):
        wmat = w.reshape(groups, cg, og * int(np.prod(kernel))).transpose(0, 2, 1)
        cols = np.matmul(wmat, x.reshape(n, groups, cg, -1)).reshape(n, o, *kernel, *size)
        for tap in np.ndindex(*kernel):
            at = tuple(slice(t * d, t * d + (s - 1) * st + 1, st) for t, d, s, st in zip(tap, dilation, size, strides))
            canvas[(slice(None), slice(None), *at)] += cols[(slice(None), slice(None), *tap)]
    res = canvas[(slice(None), slice(None), *(slice(before[i], before[i] + out_len[i]) for i in range(3)))]
    return emit(np.transpose(res, _perm("NCDHW", out_layout or data_layout, op)), out, op, res_dt)


# ---- pools -----------------------------------------------------------------------------------


def _pool_nd(x, op, pool_size, strides, dilation, padding, layout, out_layout, ceil_mode, kind, count_include_pad):
    canonical = "NC" + "".join(c for c in layout if c not in "NC")
    nd = len(pool_size)
    xc = np.transpose(x, _perm(layout, canonical, op))
    size = xc.shape[2:]
    before, after = list(padding[:nd]), list(padding[nd:])
    out_len = [
        _out_len(size[i], pool_size[i], strides[i], dilation[i], before[i] + after[i], ceil_mode, op)
        for i in range(nd)
    ]
    # Ceil mode can need positions beyond the padding at the end.
    extra = [
        max(0, (out_len[i] - 1) * strides[i] + (pool_size[i] - 1) * dilation[i] + 1 - (size[i] + before[i] + after[i]))
        for i in range(nd)
    ]
    if kind == "max":
        acc_dt, fill = x.dtype, _lowest(x.dtype)
    else:
        if x.dtype == np.bool_:
            raise ValueError(f"{op} is not defined on bool tensors")
        acc_dt = {"i": np.dtype(np.int64), "u": np.dtype(np.uint64)}.get(x.dtype.kind, compute_dtype(x.dtype))
        fill = 0
    xp = _pad_spatial(xc.astype(acc_dt, copy=False), before, [a + e for a, e in zip(after, extra)], fill)
    win = _windows(xp, pool_size, strides, dilation, out_len)
    k_axes = tuple(range(2 + nd, 2 + 2 * nd))
    with np.errstate(all="ignore"):
        if kind == "max":
            res = win.max(axis=k_axes)
        else:
            total = win.sum(axis=k_axes, dtype=acc_dt)
            cnt = np.ones([1] * (2 + nd), dtype=np.int64)
            for i in range(nd):
                lo, hi = (-before[i], size[i] + after[i]) if count_include_pad else (0, size[i])
                counts = _window_counts(size[i], pool_size[i], strides[i], dilation[i], before[i], lo, hi, out_len[i])
                shape = [1] * (2 + nd)
                shape[2 + i] = out_len[i]
                cnt = cnt * counts.reshape(shape)
            cnt = np.maximum(cnt, 1).astype(acc_dt)
            res = truncdiv(total, cnt) if x.dtype.kind in "iu" else total / cnt
    res = res.astype(x.dtype)
    return np.transpose(res, _perm(canonical, out_layout or layout, op))


@register("nn.max_pool3d")
def max_pool3d(
    x: np.ndarray, *, out: np.ndarray | None = None, pool_size: Sequence[int], strides: Sequence[int],
    dilation: Sequence[int], padding: Sequence[int], layout: str, out_layout: str, ceil_mode: bool,
) -> np.ndarray:  # fmt: skip
    """Relay ``nn.max_pool3d``; padding is the dtype's lowest value, as TOPI pads."""
    op = "nn.max_pool3d"
    res = _pool_nd(x, op, pool_size, strides, dilation, padding, layout, out_layout, ceil_mode, "max", False)
    return emit(res, out, op)


@register("nn.avg_pool3d")
def avg_pool3d(
    x: np.ndarray, *, out: np.ndarray | None = None, pool_size: Sequence[int], strides: Sequence[int],
    dilation: Sequence[int], padding: Sequence[int], layout: str, out_layout: str, ceil_mode: bool,
    count_include_pad: bool,
) -> np.ndarray:  # fmt: skip
    """Relay ``nn.avg_pool3d``: the divisor counts the window's taps inside the input (and the
    padding when ``count_include_pad``), never the ceil-mode overhang."""
    op = "nn.avg_pool3d"
    res = _pool_nd(
        x, op, pool_size, strides, dilation, padding, layout, out_layout, ceil_mode, "avg", count_include_pad
    )
    return emit(res, out, op)


def _adaptive_nd(x, output_size, layout, out_layout, op, kind):
    canonical = "NC" + "".join(c for c in layout if c not in "NC")
    xc = np.transpose(x, _perm(layout, canonical, op))
    size = xc.shape[2:]
    nd = len(size)
    if not output_size:
        osize = list(size)
    elif len(output_size) == 1:
        osize = [int(output_size[0])] * nd
    else:
        osize = [int(v) if v is not None else s for v, s in zip(output_size, size)]
    res = np.empty(xc.shape[:2] + tuple(osize), dtype=x.dtype)
    # Bin i covers [floor(i * S / O), ceil((i + 1) * S / O)).
    for out_idx in np.ndindex(*osize):
        src = tuple(
            slice((i * s) // o, -(-((i + 1) * s) // o)) for i, s, o in zip(out_idx, size, osize)
        )
        part = xc[(slice(None), slice(None), *src)]
        axes = tuple(range(2, 2 + nd))
        if kind == "max":
            val = part.max(axis=axes)
        elif x.dtype.kind in "iu":
            wide = np.int64 if x.dtype.kind == "i" else np.uint64
            val = truncdiv(part.sum(axis=axes, dtype=wide), np.asarray(max(1, part[0, 0].size), dtype=wide))
        else:
            val = part.astype(compute_dtype(x.dtype)).mean(axis=axes)
        res[(slice(None), slice(None), *out_idx)] = val
    return np.transpose(res, _perm(canonical, out_layout or layout, op))


@register("nn.adaptive_avg_pool3d")
def adaptive_avg_pool3d(
    x: np.ndarray, *, out: np.ndarray | None = None, output_size: Sequence[int] | None, layout: str,
    out_layout: str,
) -> np.ndarray:  # fmt: skip
    """Relay ``nn.adaptive_avg_pool3d``; ``output_size=None`` keeps the input's size."""
    op = "nn.adaptive_avg_pool3d"
    return emit(_adaptive_nd(x, output_size, layout, out_layout, op, "avg"), out, op)


@register("nn.adaptive_max_pool3d")
def adaptive_max_pool3d(
    x: np.ndarray, *, out: np.ndarray | None = None, output_size: Sequence[int] | None, layout: str,
    out_layout: str,
) -> np.ndarray:  # fmt: skip
    """Relay ``nn.adaptive_max_pool3d``; ``output_size=None`` keeps the input's size."""
    op = "nn.adaptive_max_pool3d"
    return emit(_adaptive_nd(x, output_size, layout, out_layout, op, "max"), out, op)


@register("nn.deformable_conv2d")
def deformable_conv2d(
    x: np.ndarray, offset: np.ndarray, w: np.ndarray, *, out: np.ndarray | None = None,
    strides: Sequence[int], padding: Sequence[int], dilation: Sequence[int], deformable_groups: int,
    groups: int, channels: int | None, kernel_size: Sequence[int] | None, data_layout: str,
    kernel_layout: str, out_layout: str, out_dtype: str,
) -> np.ndarray:  # fmt: skip
    """Relay ``nn.deformable_conv2d`` (TOPI's): tap (ky, kx) of output (y, x) samples the data
    at ``(y * sh - pt + ky * dh + dy, x * sw - pl + kx * dw + dx)``, zero when that point is
    outside ``[0, H) x [0, W)``, else bilinear with corners outside the image counting 0."""
    op = "nn.deformable_conv2d"
    xc = np.transpose(x, [data_layout.index(a) for a in "NCHW"])
    oc = np.transpose(offset, [data_layout.index(a) for a in "NCHW"])
    wc = np.transpose(w, [kernel_layout.index(a) for a in "OIHW"])
    dt = np.dtype(np.float64)
    n, c, h, wd = xc.shape
    o, cg, kh, kw = wc.shape
    _, _, oh, ow = oc.shape
    (sh, sw), (dh, dw), (pt, pl) = strides, dilation, padding[:2]
    per_dg = c // deformable_groups
    cols = np.zeros((n, c, kh, kw, oh, ow), dt)
    base_y = (np.arange(oh) * sh - pt)[:, None]
    base_x = (np.arange(ow) * sw - pl)[None, :]
    for b in range(n):
        for g in range(deformable_groups):
            img = xc[b, g * per_dg : (g + 1) * per_dg].astype(dt)
            for ky in range(kh):
                for kx in range(kw):
                    k = g * kh * kw * 2 + (ky * kw + kx) * 2
                    py = base_y + ky * dh + oc[b, k].astype(dt)
                    px = base_x + kx * dw + oc[b, k + 1].astype(dt)
                    y0, x0 = np.floor(py).astype(np.int64), np.floor(px).astype(np.int64)
                    val = np.zeros((per_dg, oh, ow), dt)
                    for yy, wy in ((y0, 1 - (py - y0)), (y0 + 1, py - y0)):
                        for xx, wx in ((x0, 1 - (px - x0)), (x0 + 1, px - x0)):
                            ok = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < wd)
                            val += np.where(ok, wy * wx, 0.0) * img[:, np.clip(yy, 0, h - 1), np.clip(xx, 0, wd - 1)]
                    outside = (py < 0) | (px < 0) | (py >= h) | (px >= wd)
                    cols[b, g * per_dg : (g + 1) * per_dg, ky, kx] = np.where(outside, 0.0, val)
    og = o // groups
    res = np.empty((n, o, oh, ow), dt)
    for g in range(groups):
        res[:, g * og : (g + 1) * og] = np.einsum(
            "ncyxhw,ocyx->nohw", cols[:, g * cg : (g + 1) * cg], wc[g * og : (g + 1) * og].astype(dt)
        )
    res = np.transpose(res, ["NCHW".index(a) for a in (out_layout or data_layout)])
    return emit(np.ascontiguousarray(res), out, op, out_dtype or x.dtype)


# ---- resizing --------------------------------------------------------------------------------


def _source_coord(x, in_size, out_size, mode, start, end):
    """TOPI's ``get_inx``: the input coordinate of output coordinates ``x``."""
    scale = in_size / out_size
    if mode == "half_pixel":
        return (x + 0.5) * scale - 0.5
    if mode == "align_corners":
        return (in_size - 1) / (out_size - 1) * x if out_size > 1 else np.zeros_like(x)
    if mode == "asymmetric":
        return scale * x
    if mode == "pytorch_half_pixel":
        return (x + 0.5) * scale - 0.5 if out_size > 1 else np.zeros_like(x)
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) * scale
    if mode == "tf_crop_and_resize":
        if out_size > 1:
            return start * (in_size - 1) + x * (end - start) * (in_size - 1) / (out_size - 1)
        return np.full_like(x, 0.5 * (start + end) * (in_size - 1))
    raise ValueError(f"image.resize2d: unsupported coordinate_transformation_mode {mode!r}")


def _nearest(c, rounding):
    if rounding == "round":
        return np.round(c)  # TOPI rounds half away from zero
    if rounding == "round_prefer_floor":
        return np.ceil(c - 0.5)
    if rounding == "round_prefer_ceil":
        return np.floor(c + 0.5)
    if rounding == "floor":
        return np.floor(c + 1e-5)
    if rounding == "ceil":
        return np.ceil(c - 1e-5)
    raise ValueError(f"image.resize2d: unknown rounding_method {rounding!r}")


def _round_half_away(c):
    return np.sign(c) * np.floor(np.abs(c) + 0.5)


def _axis_taps(in_size, out_size, mode, start, end, method, rounding, alpha, exclude):
    """(indices (out, taps), weights (out, taps), inside (out,)) along one axis."""
    x = np.arange(out_size, dtype=np.float64)
    if method == "nearest_neighbor" and mode == "asymmetric" and out_size % in_size == 0 and out_size >= in_size:
        # TOPI divides integers when the scale is a whole number.
        c = (np.arange(out_size) // (out_size // in_size)).astype(np.float64)
    else:
        c = _source_coord(x, in_size, out_size, mode, start, end)
    inside = (c >= 0) & (c <= in_size - 1)
    if method == "nearest_neighbor":
        r = rounding or ("round" if mode == "align_corners" else "floor")
        idx = (_round_half_away(c) if r == "round" else _nearest(c, r)).astype(np.int64)[:, None]
        w = np.ones((out_size, 1))
    elif method == "linear":
        f = np.floor(c)
        t = (c - f)[:, None]
        idx = f.astype(np.int64)[:, None] + np.arange(2)[None, :]
        w = np.concatenate([1.0 - t, t], axis=1)
    elif method == "cubic":
        f = np.floor(c)
        t = c - f
        t2, t3 = t * t, t * t * t
        w = np.stack(
            [
                alpha * (t3 - 2 * t2 + t),
                (alpha + 2) * t3 - (3 + alpha) * t2 + 1,
                -(alpha + 2) * t3 + (3 + 2 * alpha) * t2 - alpha * t,
                -alpha * t3 + alpha * t2,
            ],
            axis=1,
        )
        idx = f.astype(np.int64)[:, None] + np.arange(-1, 3)[None, :]
        if exclude:
            w = np.where((idx < 0) | (idx >= in_size), 0.0, w)
            w = w / w.sum(axis=1, keepdims=True)
    else:
        raise ValueError(f"image.resize2d: unknown method {method!r}")
    return np.clip(idx, 0, in_size - 1), w, inside


def nearest_whole_factors(attrs: Any, in_shape: Sequence[int], out_shape: Sequence[int], axes: Sequence[int]) -> list[int] | None:
    """The factor of each of ``axes`` (H and W) of a nearest-neighbour resize (``attrs`` an
    ``image.resize2d``'s) whose output pixel ``o`` reads input pixel ``o // factor`` along them
    and which keeps every other axis (``nn.Upsample(scale_factor=k)`` as torch exports it: a
    broadcast of the input, for the fast kernels that copy or view instead of computing), else
    None."""
    mode = attrs.get("coordinate_transformation_mode", "half_pixel")
    if attrs.get("method") != "nearest_neighbor" or mode == "tf_crop_and_resize" or len(in_shape) != len(out_shape):
        return None
    if any(n != m for i, (n, m) in enumerate(zip(in_shape, out_shape)) if i not in axes):
        return None
    roi = list(attrs.get("roi") or [0.0] * 4)
    factors = []
    for k, ax in enumerate(axes):
        n_in, n_out = in_shape[ax], out_shape[ax]
        f = n_out // n_in if n_out % n_in == 0 else 0
        idx = nearest_source_indices(n_in, n_out, mode, roi[k], roi[k + 2], attrs.get("rounding_method", ""))
        if not f or not np.array_equal(idx, np.arange(n_out) // f):
            return None
        factors.append(f)
    return factors


def nearest_source_indices(in_size: int, out_size: int, mode: str, start: float, end: float, rounding: str) -> np.ndarray:
    """The input index each output index of a nearest-neighbour resize along one axis reads
    (``resize_nd``'s own choice; for the fast kernels that copy instead of computing)."""
    idx, _, _ = _axis_taps(in_size, out_size, mode, start, end, "nearest_neighbor", rounding, -0.5, 0)
    return idx[:, 0]


def resize_nd(
    x: np.ndarray, axes: Sequence[int], size: Sequence[int], roi: Sequence[float], method: str,
    mode: str, rounding: str, alpha: float, exclude: int, extrapolation: float, op: str,
) -> np.ndarray:  # fmt: skip
    """TOPI's resize over ``axes`` of ``x`` to ``size`` (float64 arithmetic, input dtype out)."""
    n = len(axes)
    res = x.astype(np.float64)
    mask = None
    for k, (ax, out_size) in enumerate(zip(axes, size)):
        if out_size <= 0:
            raise ValueError(f"{op}: size must be positive, got {list(size)}")
        idx, w, inside = _axis_taps(
            x.shape[ax], out_size, mode, roi[k], roi[k + n], method, rounding, alpha, exclude
        )
        taken = np.take(res, idx, axis=ax)  # axis ax -> (out, taps)
        shape = [1] * taken.ndim
        shape[ax], shape[ax + 1] = w.shape
        res = (taken * w.reshape(shape)).sum(axis=ax + 1)
        if mode == "tf_crop_and_resize":
            m_shape = [1] * x.ndim
            m_shape[ax] = out_size
            m = inside.reshape(m_shape)
            mask = m if mask is None else mask & m
    if mask is not None:
        res = np.where(mask, res, extrapolation)
    if x.dtype.kind in "iu":
        res = np.trunc(res)  # TOPI casts (truncates) to the integer dtype
    return res.astype(x.dtype)


def _hw_axes(layout: str) -> tuple[int, int]:
    """H's and W's positions, also in a layout with blocked channels (``NCHW16c``)."""
    letters = [a for a, _ in parse_layout(layout)]
    return letters.index("H"), letters.index("W")


@register("image.resize1d")
def resize1d(
    x: np.ndarray, *, out: np.ndarray | None = None, size: Sequence[int], roi: Sequence[float],
    layout: str, method: str, coordinate_transformation_mode: str, rounding_method: str,
    cubic_alpha: float, cubic_exclude: int, extrapolation_value: float, out_dtype: str,
) -> np.ndarray:  # fmt: skip
    """Relay ``image.resize1d`` (``roi`` is ``[start_w, end_w]``)."""
    op = "image.resize1d"
    axis = [a for a, _ in parse_layout(layout)].index("W")
    res = resize_nd(
        x, [axis], size, roi, method, coordinate_transformation_mode, rounding_method,
        cubic_alpha, cubic_exclude, extrapolation_value, op,
    )  # fmt: skip
    return emit(res, out, op, out_dtype or x.dtype)


@register("image.resize2d")
def resize2d(
    x: np.ndarray, *, out: np.ndarray | None = None, size: Sequence[int], roi: Sequence[float],
    layout: str, method: str, coordinate_transformation_mode: str, rounding_method: str,
    cubic_alpha: float, cubic_exclude: int, extrapolation_value: float, out_dtype: str,
) -> np.ndarray:  # fmt: skip
    """Relay ``image.resize2d`` (``roi`` is ``[start_h, start_w, end_h, end_w]``)."""
    op = "image.resize2d"
    axes = _hw_axes(layout)
    res = resize_nd(
        x, axes, size, roi, method, coordinate_transformation_mode, rounding_method,
        cubic_alpha, cubic_exclude, extrapolation_value, op,
    )  # fmt: skip
    return emit(res, out, op, out_dtype or x.dtype)


@register("nn.upsampling")
def upsampling(
    x: np.ndarray, *, out: np.ndarray | None = None, scale_h: float, scale_w: float, layout: str,
    method: str, align_corners: bool,
) -> np.ndarray:  # fmt: skip
    """Relay ``nn.upsampling``: ``resize2d`` to ``round(H * scale_h) x round(W * scale_w)``
    (``align_corners`` or ``asymmetric`` coordinates; ``bilinear``/``bicubic`` are linear/cubic)."""
    op = "nn.upsampling"
    axes = _hw_axes(layout)
    size = [int(_round_half_away(x.shape[a] * s)) for a, s in zip(axes, (scale_h, scale_w))]
    method = method[2:] if method.startswith("bi") else method
    mode = "align_corners" if align_corners else "asymmetric"
    res = resize_nd(x, axes, size, [0.0] * 4, method, mode, "", -0.5, 0, 0.0, op)
    return emit(res, out, op)


# ---- group normalisation ----------------------------------------------------------------------


@register("nn.group_norm")
def group_norm(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, *, out: np.ndarray | None = None,
    num_groups: int, axis: int, epsilon: float, center: bool, scale: bool,
) -> np.ndarray:  # fmt: skip
    """Relay ``nn.group_norm``: channels along ``axis`` split into ``num_groups`` groups, each
    normalised over its channels and every axis but the batch axis 0 (an instance norm of
    the ``(N, groups, rest)`` view), then scaled and shifted per channel."""
    op = "nn.group_norm"
    check_float(op, x)
    ax = norm_axis(axis, x.ndim, op)
    c = x.shape[ax]
    if num_groups <= 0 or c % num_groups:
        raise ValueError(f"{op}: {c} channels do not split into {num_groups} groups")
    dt = compute_dtype(x.dtype)
    xc = np.moveaxis(x.astype(dt, copy=False), ax, 1)
    unit = np.ones(num_groups, dtype=dt)
    grouped = xc.reshape(xc.shape[0], num_groups, -1)
    normed = instance_norm(grouped, unit, unit, axis=1, epsilon=epsilon, center=False, scale=False)
    res = np.moveaxis(normed.reshape(xc.shape), 1, ax)
    if scale:
        res = res * _along(gamma.astype(dt), ax, x.ndim)
    if center:
        res = res + _along(beta.astype(dt), ax, x.ndim)
    return emit(res, out, op, x.dtype)
