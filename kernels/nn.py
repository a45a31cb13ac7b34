"""Neural-network kernels: convolutions, pools, normalisations, dense/matmul, softmax, pad.

Convolutions use im2col + ``np.matmul`` (BLAS for float32/float64). float16 is computed in
float32 and rounded once; integer convolutions compute in ``out_dtype`` (default: the input
dtype) and wrap. Layouts: data ``NCHW`` or ``NHWC`` natively, any other permutation of those
letters by transposing; kernels any permutation of ``OIHW`` (conv2d: O = all output channels,
I = input channels per group; conv2d_transpose: I = all input channels, O = output channels
per group, default ``IOHW`` like Relay).

Pools follow TVM: output = floor (or ceil, with ``ceil_mode``) of
``(H + pad_top + pad_bottom - ((k - 1) * dilation + 1)) / stride`` plus 1. ``count_include_pad``
counts window positions inside the padded input (never the ceil-mode overhang); without it only
positions inside the input count, and a window with none gives 0. Integer average pools sum in
64 bits and divide truncating toward zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from xrelay.dialects.relay.ops import AdaptiveAvgPool2DOp, depthwise_multiplier

from ._registry import (
    broadcast_shape,
    check_float,
    compute_dtype,
    emit,
    emit_many,
    norm_axis,
    out_dtype_or,
    prepare_out,
    register,
    truncdiv,
)
from .blocked import blocked_layouts

# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _pair(v: int | Sequence[int], name: str, op: str) -> tuple[int, int]:
    if isinstance(v, (int, np.integer)):
        return int(v), int(v)
    v = tuple(int(i) for i in v)
    if len(v) == 1:
        return v[0], v[0]
    if len(v) != 2:
        raise ValueError(f"{op}: {name} must have 2 values, got {v}")
    return v  # type: ignore[return-value]


def _quad(v: int | Sequence[int], op: str) -> tuple[int, int, int, int]:
    """Relay padding: 1, 2 (symmetric h, w) or 4 (top, left, bottom, right) values."""
    if isinstance(v, (int, np.integer)):
        v = (int(v),)
    v = tuple(int(i) for i in v)
    if len(v) == 1:
        v = v * 4
    elif len(v) == 2:
        v = (v[0], v[1], v[0], v[1])
    if len(v) != 4:
        raise ValueError(f"{op}: padding must have 1, 2 or 4 values, got {v}")
    if min(v) < 0:
        raise ValueError(f"{op}: negative padding {v}")
    return v  # type: ignore[return-value]


def _perm(src: str, dst: str, op: str) -> list[int]:
    """The transpose that turns layout ``src`` into ``dst`` (same letters, other order)."""
    if sorted(src) != sorted(dst) or len(set(src)) != len(src):
        raise ValueError(f"{op}: layout {src!r} is not a permutation of {dst!r}")
    return [src.index(c) for c in dst]


def _pad_hw(
    x: np.ndarray, hw: tuple[int, int], pads: tuple[int, int, int, int], value
) -> np.ndarray:
    """Pad the two spatial axes (positions ``hw``) with a constant, allocating once."""
    pt, pl, pb, pr = pads
    if not (pt or pl or pb or pr):
        return x
    h, w = hw
    shape = list(x.shape)
    shape[h] += pt + pb
    shape[w] += pl + pr
    xp = np.full(shape, value, dtype=x.dtype)
    idx = [slice(None)] * x.ndim
    idx[h] = slice(pt, pt + x.shape[h])
    idx[w] = slice(pl, pl + x.shape[w])
    xp[tuple(idx)] = x
    return xp


def _out_len(n: int, k: int, s: int, d: int, pad: int, ceil: bool, op: str) -> int:
    span = n + pad - ((k - 1) * d + 1)
    if span < 0:
        raise ValueError(f"{op}: window of {k} (dilation {d}) larger than padded input {n + pad}")
    if s <= 0 or d <= 0:
        raise ValueError(f"{op}: strides and dilation must be positive")
    return (-(-span // s) if ceil else span // s) + 1


def ceil_mode_padding(
    in_hw: Sequence[int],
    out_hw: Sequence[int],
    pool_size: Sequence[int],
    strides: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    kind: str,
    count_include_pad: bool = False,
) -> tuple[int, int, int, int] | None:
    """The explicit padding (top, left, bottom, right) whose floor-mode windows are the
    ``ceil_mode`` pool's: the bottom/right padding grows by the rows/cols the last window
    overhangs. ``None`` when no explicit padding gives the same result: a window that starts
    past the input and its declared padding (it would be all padding), or an average that
    counts padding (the overhang is not counted, explicit padding would be)."""
    pt, pl, pb, pr = padding
    grown = [pt, pl, pb, pr]
    for i, (n, o, k, s, d) in enumerate(zip(in_hw, out_hw, pool_size, strides, dilation)):
        before, after = (pt, pb) if i == 0 else (pl, pr)
        extra = max(0, (o - 1) * s + (k - 1) * d + 1 - (n + before + after))
        if extra and ((o - 1) * s >= n + before or (kind == "avg" and count_include_pad)):
            return None
        grown[2 + i] += extra
    return (grown[0], grown[1], grown[2], grown[3])


def explicit_pool_padding(op: Any) -> tuple[int, int, int, int] | None:
    """A 2-d pool op's padding for a library without a ceil mode (oneDNN): its own, or with
    ``ceil_mode`` the grown padding of ``ceil_mode_padding`` (None: none gives its windows)."""
    a = op.attrs
    if not a.get("ceil_mode"):
        return tuple(a["padding"])
    layout = a.get("layout", "NCHW")
    ins, outs = op.operands[0].type.get_shape(), op.results[0].type.get_shape()
    hw = (layout.index("H"), layout.index("W"))
    return ceil_mode_padding(
        [ins[i] for i in hw], [outs[i] for i in hw], a["pool_size"], a["strides"],
        a.get("dilation", (1, 1)), a["padding"], "max" if op.RELAY_NAME == "nn.max_pool2d" else "avg",
        bool(a.get("count_include_pad")),
    )  # fmt: skip


def _result_dtypes(a: np.ndarray, b: np.ndarray, out_dtype: str | None, op: str):
    """(result dtype, dtype to compute in) for ops with Relay's ``out_dtype``."""
    if out_dtype in ("", None) and a.dtype != b.dtype:
        raise ValueError(f"{op}: operand dtypes differ ({a.dtype}, {b.dtype}); set out_dtype")
    res = out_dtype_or(out_dtype, a.dtype)
    if res == np.bool_:
        raise ValueError(f"{op}: bool out_dtype is not supported")
    return res, compute_dtype(res)


def _emit_into(res: np.ndarray, out: np.ndarray | None, op: str, dtype) -> np.ndarray:
    with np.errstate(all="ignore"):
        return emit(res, out, op, dtype)


# ---------------------------------------------------------------------------------------------
# conv2d
# ---------------------------------------------------------------------------------------------


def _conv_nchw(x, w, strides, padding, dilation, groups, out_view=None):
    """x (N, C, H, W), w (O, C/g, KH, KW) -> (N, O, OH, OW); both in the compute dtype."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    sh, sw = strides
    dh, dw = dilation
    pt, pl, pb, pr = padding
    oh = _out_len(h, kh, sh, dh, pt + pb, False, "nn.conv2d")
    ow = _out_len(wd, kw, sw, dw, pl + pr, False, "nn.conv2d")
    og = o // groups
    if kh == kw == 1 and sh == sw == 1 and not any(padding):
        cols = x.reshape(n, groups, cg, h * wd)
    else:
        xp = _pad_hw(x, (2, 3), padding, 0)
        s_n, s_c, s_h, s_w = xp.strides
        win = as_strided(
            xp,
            (n, groups, cg, kh, kw, oh, ow),
            (s_n, s_c * cg, s_c, s_h * dh, s_w * dw, s_h * sh, s_w * sw),
            writeable=False,
        )
        cols = win.reshape(n, groups, cg * kh * kw, oh * ow)
    wmat = w.reshape(groups, og, cg * kh * kw)
    if out_view is not None:
        np.matmul(wmat, cols, out=out_view.reshape(n, groups, og, oh * ow))
        return out_view
    return np.matmul(wmat, cols).reshape(n, o, oh, ow)


def _conv_nhwc(x, w, strides, padding, dilation, groups, out_view=None):
    """x (N, H, W, C), w (KH, KW, C/g, O) -> (N, OH, OW, O); both in the compute dtype."""
    n, h, wd, c = x.shape
    kh, kw, cg, o = w.shape
    sh, sw = strides
    dh, dw = dilation
    pt, pl, pb, pr = padding
    oh = _out_len(h, kh, sh, dh, pt + pb, False, "nn.conv2d")
    ow = _out_len(wd, kw, sw, dw, pl + pr, False, "nn.conv2d")
    og = o // groups
    xp = _pad_hw(x, (1, 2), padding, 0)
    s_n, s_h, s_w, s_c = xp.strides
    win = as_strided(
        xp,
        (n, oh, ow, kh, kw, groups, cg),
        (s_n, s_h * sh, s_w * sw, s_h * dh, s_w * dw, s_c * cg, s_c),
        writeable=False,
    )
    if groups == 1:
        cols = win.reshape(n * oh * ow, kh * kw * cg)
        wmat = w.reshape(kh * kw * cg, o)
        if out_view is not None:
            np.matmul(cols, wmat, out=out_view.reshape(n * oh * ow, o))
            return out_view
        return np.matmul(cols, wmat).reshape(n, oh, ow, o)
    cols = win.transpose(5, 0, 1, 2, 3, 4, 6).reshape(groups, n * oh * ow, kh * kw * cg)
    wmat = w.reshape(kh, kw, cg, groups, og).transpose(3, 0, 1, 2, 4).reshape(groups, -1, og)
    res = np.matmul(cols, wmat)  # (g, N*OH*OW, og)
    return res.transpose(1, 0, 2).reshape(n, oh, ow, o)


@register("nn.conv2d")
@blocked_layouts(("data_layout", "kernel_layout"), "out_layout")
def conv2d(
    data: np.ndarray,
    weight: np.ndarray,
    *,
    out: np.ndarray | None = None,
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
    """Relay ``nn.conv2d`` (grouped, depthwise, dilated, asymmetric padding) via im2col + matmul."""
    op = "nn.conv2d"
    strides = _pair(strides, "strides", op)
    dilation = _pair(dilation, "dilation", op)
    pads = _quad(padding, op)
    out_layout = out_layout or data_layout
    res_dt, comp_dt = _result_dtypes(data, weight, out_dtype, op)
    if data.ndim != 4 or weight.ndim != 4:
        raise ValueError(f"{op}: expects 4-d data and weight, got {data.shape} and {weight.shape}")
    native = data_layout if data_layout in ("NCHW", "NHWC") else "NCHW"
    x = np.transpose(data, _perm(data_layout, native, op))
    w_oihw = np.transpose(weight, _perm(kernel_layout, "OIHW", op))
    o, cg, kh, kw = w_oihw.shape
    c = x.shape[native.index("C")]
    if depthwise_multiplier(c, (o, cg), groups, channels, kernel_size):
        w_oihw = w_oihw.reshape(o * cg, 1, kh, kw)  # Relay's (C, M, kh, kw) depthwise weight
        o, cg = o * cg, 1
    if groups <= 0 or c != cg * groups or o % groups:
        raise ValueError(
            f"{op}: {c} input channels, weight {w_oihw.shape} (OIHW) and groups={groups} disagree"
        )
    if channels is not None and channels != o:
        raise ValueError(f"{op}: channels={channels} but the weight has {o} output channels")
    if kernel_size is not None and tuple(kernel_size) != (kh, kw):
        raise ValueError(f"{op}: kernel_size={tuple(kernel_size)} but the weight is {kh}x{kw}")
    x = x.astype(comp_dt, copy=False)
    direct = (
        out is not None
        and out_layout == native
        and out.dtype == comp_dt
        and out.flags.c_contiguous
        and (native == "NCHW" or groups == 1)
    )
    with np.errstate(all="ignore"):
        if native == "NCHW":
            w = w_oihw.astype(comp_dt, copy=False)
            shape_fn = _conv_nchw
        else:
            w = np.transpose(w_oihw, (2, 3, 1, 0)).astype(comp_dt, copy=False)
            shape_fn = _conv_nhwc
        if direct:
            n = x.shape[0]
            hw = [x.shape[native.index(a)] for a in "HW"]
            oh = _out_len(hw[0], kh, strides[0], dilation[0], pads[0] + pads[2], False, op)
            ow = _out_len(hw[1], kw, strides[1], dilation[1], pads[1] + pads[3], False, op)
            expect = (n, o, oh, ow) if native == "NCHW" else (n, oh, ow, o)
            prepare_out(out, expect, res_dt, op)
            return shape_fn(x, w, strides, pads, dilation, groups, out_view=out)
        res = shape_fn(x, w, strides, pads, dilation, groups)
    res = np.transpose(res, _perm(native, out_layout, op))
    return _emit_into(res, out, op, res_dt)


# ---------------------------------------------------------------------------------------------
# conv2d_transpose
# ---------------------------------------------------------------------------------------------


@register("nn.conv2d_transpose")
@blocked_layouts(("data_layout", "kernel_layout"), "out_layout")
def conv2d_transpose(
    data: np.ndarray,
    weight: np.ndarray,
    *,
    out: np.ndarray | None = None,
    strides: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
    channels: int | None,
    kernel_size: Sequence[int] | None,
    data_layout: str,
    kernel_layout: str,
    out_layout: str,
    output_padding: Sequence[int],
    out_dtype: str,
) -> np.ndarray:
    """Relay ``nn.conv2d_transpose`` (the gradient of conv2d w.r.t. its input).

    Output size: ``(H - 1) * stride - pad_top - pad_bottom + (KH - 1) * dilation + 1 +
    output_padding``. The weight holds, in ``kernel_layout`` letters, I = all input channels and
    O = output channels per group.
    """
    op = "nn.conv2d_transpose"
    sh, sw = _pair(strides, "strides", op)
    dh, dw = _pair(dilation, "dilation", op)
    oph, opw = _pair(output_padding, "output_padding", op)
    pt, pl, pb, pr = _quad(padding, op)
    out_layout = out_layout or data_layout
    res_dt, comp_dt = _result_dtypes(data, weight, out_dtype, op)
    if data.ndim != 4 or weight.ndim != 4:
        raise ValueError(f"{op}: expects 4-d data and weight, got {data.shape} and {weight.shape}")
    x = np.transpose(data, _perm(data_layout, "NCHW", op)).astype(comp_dt, copy=False)
    w = np.transpose(weight, _perm(kernel_layout, "IOHW", op)).astype(comp_dt, copy=False)
    n, c, h, wd = x.shape
    ci, og, kh, kw = w.shape
    if groups <= 0 or ci != c or c % groups:
        raise ValueError(f"{op}: {c} input channels, weight {w.shape} (IOHW), groups={groups}")
    o = og * groups
    if channels is not None and channels != o:
        raise ValueError(f"{op}: channels={channels} but the weight gives {o} output channels")
    if kernel_size is not None and tuple(kernel_size) != (kh, kw):
        raise ValueError(f"{op}: kernel_size={tuple(kernel_size)} but the weight is {kh}x{kw}")
    if min(oph, opw) < 0 or min(sh, sw, dh, dw) <= 0:
        raise ValueError(f"{op}: invalid strides/dilation/output_padding")
    full_h = (h - 1) * sh + (kh - 1) * dh + 1
    full_w = (wd - 1) * sw + (kw - 1) * dw + 1
    oh = full_h - pt - pb + oph
    ow = full_w - pl - pr + opw
    if oh <= 0 or ow <= 0:
        raise ValueError(f"{op}: padding leaves an empty output ({oh}x{ow})")
    cg = c // groups
    with np.errstate(all="ignore"):
        wmat = w.reshape(groups, cg, og * kh * kw).transpose(0, 2, 1)
        cols = np.matmul(wmat, x.reshape(n, groups, cg, h * wd))
        cols = cols.reshape(n, o, kh, kw, h, wd)
        canvas = np.zeros(
            (n, o, full_h + max(0, oph - pb), full_w + max(0, opw - pr)), dtype=comp_dt
        )
        # col2im: every kernel tap scatters a strided copy of the input grid.
        for i in range(kh):
            for j in range(kw):
                canvas[
                    :,
                    :,
                    i * dh : i * dh + (h - 1) * sh + 1 : sh,
                    j * dw : j * dw + (wd - 1) * sw + 1 : sw,
                ] += cols[:, :, i, j]
    res = canvas[:, :, pt : pt + oh, pl : pl + ow]
    res = np.transpose(res, _perm("NCHW", out_layout, op))
    return _emit_into(res, out, op, res_dt)


# ---------------------------------------------------------------------------------------------
# Pools
# ---------------------------------------------------------------------------------------------


def _hw_axes(layout: str, ndim: int, op: str) -> tuple[int, int]:
    if "H" not in layout or "W" not in layout or len(layout) != ndim:
        raise ValueError(f"{op}: layout {layout!r} does not fit a {ndim}-d tensor with H and W")
    return layout.index("H"), layout.index("W")


def _window_counts(n, k, s, d, pad_before, lo, hi, out_len):
    """How many taps of each output window land in [lo, hi) (input coordinates)."""
    pos = np.arange(out_len)[:, None] * s - pad_before + np.arange(k)[None, :] * d
    return ((pos >= lo) & (pos < hi)).sum(axis=1)


def _lowest(dt: np.dtype):
    """What max pools pad with: the dtype's lowest finite value (TOPI's ``min_value``), not
    -inf, so a window wholly in padding gives it as Relay does (and an explicit ``nn.pad`` with
    that value folds into the pool without changing a result)."""
    if dt.kind == "f":
        return np.finfo(dt).min
    if dt.kind in "iu":
        return np.iinfo(dt).min
    if dt.kind == "b":
        return False
    import ml_dtypes  # bfloat16 and the 8-bit floats: numpy's finfo does not know them

    return ml_dtypes.finfo(dt).min


def _pool2d(
    x, op, pool_size, strides, dilation, padding, layout, ceil_mode, kind, count_include_pad
):
    kh, kw = _pair(pool_size, "pool_size", op)
    sh, sw = _pair(strides, "strides", op)
    dh, dw = _pair(dilation, "dilation", op)
    pt, pl, pb, pr = _quad(padding, op)
    ha, wa = _hw_axes(layout, x.ndim, op)
    h, wd = x.shape[ha], x.shape[wa]
    oh = _out_len(h, kh, sh, dh, pt + pb, ceil_mode, op)
    ow = _out_len(wd, kw, sw, dw, pl + pr, ceil_mode, op)
    # Ceil mode can need rows/cols beyond the bottom/right padding.
    eb = max(0, (oh - 1) * sh + (kh - 1) * dh + 1 - (h + pt + pb))
    er = max(0, (ow - 1) * sw + (kw - 1) * dw + 1 - (wd + pl + pr))
    if kind == "max":
        acc_dt = x.dtype
        fill = _lowest(x.dtype)
    else:
        if x.dtype == np.bool_:
            raise ValueError(f"{op} is not defined on bool tensors")
        acc_dt = np.dtype(np.float32) if x.dtype == np.float16 else x.dtype
        if x.dtype.kind == "i":
            acc_dt = np.dtype(np.int64)
        elif x.dtype.kind == "u":
            acc_dt = np.dtype(np.uint64)
        fill = 0
    xp = _pad_hw(x.astype(acc_dt, copy=False), (ha, wa), (pt, pl, pb + eb, pr + er), fill)
    acc = None
    with np.errstate(all="ignore"):
        for i in range(kh):
            for j in range(kw):
                idx = [slice(None)] * x.ndim
                idx[ha] = slice(i * dh, i * dh + (oh - 1) * sh + 1, sh)
                idx[wa] = slice(j * dw, j * dw + (ow - 1) * sw + 1, sw)
                tap = xp[tuple(idx)]
                if acc is None:
                    acc = tap.copy()
                elif kind == "max":
                    np.maximum(acc, tap, out=acc)
                else:
                    np.add(acc, tap, out=acc)
        if kind == "max":
            return acc
        if count_include_pad:
            ch = _window_counts(h, kh, sh, dh, pt, -pt, h + pb, oh)
            cw = _window_counts(wd, kw, sw, dw, pl, -pl, wd + pr, ow)
        else:
            ch = _window_counts(h, kh, sh, dh, pt, 0, h, oh)
            cw = _window_counts(wd, kw, sw, dw, pl, 0, wd, ow)
        cnt_shape = [1] * x.ndim
        cnt_shape[ha], cnt_shape[wa] = oh, ow
        cnt = np.maximum(ch[:, None] * cw[None, :], 1).reshape(cnt_shape).astype(acc_dt)
        if x.dtype.kind in "iu":
            return truncdiv(acc, cnt).astype(x.dtype)
        return (acc / cnt).astype(x.dtype)


@register("nn.max_pool2d")
@blocked_layouts(("layout",), "out_layout")
def max_pool2d(
    x: np.ndarray,
    *,
    out: np.ndarray | None = None,
    pool_size: Sequence[int],
    strides: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    layout: str,
    out_layout: str,
    ceil_mode: bool,
) -> np.ndarray:
    """Relay ``nn.max_pool2d``; padding never wins (it is the dtype's lowest value)."""
    res = _pool2d(
        x, "nn.max_pool2d", pool_size, strides, dilation, padding, layout, ceil_mode, "max", False
    )
    if out_layout and out_layout != layout:
        res = np.transpose(res, _perm(layout, out_layout, "nn.max_pool2d"))
    return emit(res, out, "nn.max_pool2d")


@register("nn.avg_pool2d")
@blocked_layouts(("layout",), "out_layout")
def avg_pool2d(
    x: np.ndarray,
    *,
    out: np.ndarray | None = None,
    pool_size: Sequence[int],
    strides: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    layout: str,
    out_layout: str,
    ceil_mode: bool,
    count_include_pad: bool,
) -> np.ndarray:
    """Relay ``nn.avg_pool2d`` (see the module docstring for the divisor rules)."""
    res = _pool2d(
        x,
        "nn.avg_pool2d",
        pool_size,
        strides,
        dilation,
        padding,
        layout,
        ceil_mode,
        "avg",
        count_include_pad,
    )
    if out_layout and out_layout != layout:
        res = np.transpose(res, _perm(layout, out_layout, "nn.avg_pool2d"))
    return emit(res, out, "nn.avg_pool2d")


def _mean_hw(x: np.ndarray, axes: tuple[int, int]) -> np.ndarray:
    if x.dtype.kind in "iu":
        wide = np.int64 if x.dtype.kind == "i" else np.uint64
        s = np.sum(x, axis=axes, keepdims=True, dtype=wide)
        cnt = max(1, x.shape[axes[0]] * x.shape[axes[1]])
        return truncdiv(s, np.asarray(cnt, dtype=wide)).astype(x.dtype)
    if x.dtype == np.bool_:
        raise ValueError("average pooling is not defined on bool tensors")
    return np.mean(x, axis=axes, keepdims=True, dtype=compute_dtype(x.dtype)).astype(x.dtype)


@register("nn.global_avg_pool2d")
@blocked_layouts(("layout",), "out_layout")
def global_avg_pool2d(
    x: np.ndarray, *, out: np.ndarray | None = None, layout: str, out_layout: str
) -> np.ndarray:
    """Relay ``nn.global_avg_pool2d``: mean over H and W, kept as size-1 dims."""
    axes = _hw_axes(layout, x.ndim, "nn.global_avg_pool2d")
    res = _mean_hw(x, axes)
    if out_layout and out_layout != layout:
        res = np.transpose(res, _perm(layout, out_layout, "nn.global_avg_pool2d"))
    return emit(res, out, "nn.global_avg_pool2d")


@register("nn.global_max_pool2d")
@blocked_layouts(("layout",), "out_layout")
def global_max_pool2d(
    x: np.ndarray, *, out: np.ndarray | None = None, layout: str, out_layout: str
) -> np.ndarray:
    """Relay ``nn.global_max_pool2d``: max over H and W, kept as size-1 dims."""
    axes = _hw_axes(layout, x.ndim, "nn.global_max_pool2d")
    res = np.max(x, axis=axes, keepdims=True)
    if out_layout and out_layout != layout:
        res = np.transpose(res, _perm(layout, out_layout, "nn.global_max_pool2d"))
    return emit(res, out, "nn.global_max_pool2d")


def _adaptive(x, output_size, layout, out_layout, op, reducer):
    ha, wa = _hw_axes(layout, x.ndim, op)
    if output_size is None or len(output_size) == 0:
        oh, ow = x.shape[ha], x.shape[wa]  # Relay's AdaptivePool2DRel: the input's size
    elif len(output_size) == 1:
        oh = ow = int(output_size[0])
    else:
        oh, ow = (int(v) if v is not None else x.shape[a] for v, a in zip(output_size, (ha, wa)))
    if oh <= 0 or ow <= 0:
        raise ValueError(f"{op}: output_size must be positive, got {output_size}")
    h, wd = x.shape[ha], x.shape[wa]
    shape = list(x.shape)
    shape[ha], shape[wa] = oh, ow
    res = np.empty(shape, dtype=x.dtype)
    # Bin i covers [floor(i * H / OH), ceil((i + 1) * H / OH)).
    for i in range(oh):
        h0, h1 = (i * h) // oh, -(-((i + 1) * h) // oh)
        for j in range(ow):
            w0, w1 = (j * wd) // ow, -(-((j + 1) * wd) // ow)
            src = [slice(None)] * x.ndim
            src[ha], src[wa] = slice(h0, h1), slice(w0, w1)
            dst = [slice(None)] * x.ndim
            dst[ha], dst[wa] = slice(i, i + 1), slice(j, j + 1)
            res[tuple(dst)] = reducer(x[tuple(src)], (ha, wa))
    if out_layout and out_layout != layout:
        res = np.transpose(res, _perm(layout, out_layout, op))
    return res


@register("nn.adaptive_avg_pool2d")
@blocked_layouts(("layout",), "out_layout")
def adaptive_avg_pool2d(
    x: np.ndarray,
    *,
    out: np.ndarray | None = None,
    output_size: Sequence[int] | None,
    layout: str,
    out_layout: str,
) -> np.ndarray:
    """Relay ``nn.adaptive_avg_pool2d``; ``output_size=None`` keeps the input's spatial size."""
    res = _adaptive(x, output_size, layout, out_layout, "nn.adaptive_avg_pool2d", _mean_hw)
    return emit(res, out, "nn.adaptive_avg_pool2d")


# no relay dialect op yet: it takes adaptive_avg_pool2d's attributes
@register("nn.adaptive_max_pool2d", defaults_of=AdaptiveAvgPool2DOp)
def adaptive_max_pool2d(
    x: np.ndarray,
    *,
    out: np.ndarray | None = None,
    output_size: Sequence[int] | None,
    layout: str,
    out_layout: str,
) -> np.ndarray:
    """Relay ``nn.adaptive_max_pool2d``; ``output_size=None`` keeps the input's spatial size."""
    res = _adaptive(
        x,
        output_size,
        layout,
        out_layout,
        "nn.adaptive_max_pool2d",
        lambda v, a: np.max(v, axis=a, keepdims=True),
    )
    return emit(res, out, "nn.adaptive_max_pool2d")


# ---------------------------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------------------------


def _along(v: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


@register("nn.batch_norm")
def batch_norm(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    moving_mean: np.ndarray,
    moving_var: np.ndarray,
    *,
    out: Sequence[np.ndarray] | None = None,
    axis: int,
    epsilon: float,
    center: bool,
    scale: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Relay ``nn.batch_norm`` in inference form.

    Returns ``((x - mean) / sqrt(var + epsilon) * gamma + beta, mean, var)``; ``scale=False``
    drops gamma, ``center=False`` drops beta; results 2 and 3 are copies of the moving stats.
    """
    op = "nn.batch_norm"
    check_float(op, x)
    ax = norm_axis(axis, x.ndim, op)
    c = x.shape[ax]
    for name, v in (
        ("gamma", gamma),
        ("beta", beta),
        ("moving_mean", moving_mean),
        ("moving_var", moving_var),
    ):
        if v.shape != (c,):
            raise ValueError(f"{op}: {name} must have shape ({c},), got {v.shape}")
    dt = compute_dtype(x.dtype)
    inv = 1.0 / np.sqrt(moving_var.astype(dt) + dt.type(epsilon))
    if scale:
        inv = inv * gamma.astype(dt)
    shift = -moving_mean.astype(dt) * inv
    if center:
        shift = shift + beta.astype(dt)
    res = x.astype(dt, copy=False) * _along(inv, ax, x.ndim) + _along(shift, ax, x.ndim)
    return emit_many((res.astype(x.dtype, copy=False), moving_mean, moving_var), out, op)


@register("nn.layer_norm")
def layer_norm(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    *,
    out: np.ndarray | None = None,
    axis: int,
    epsilon: float,
    center: bool,
    scale: bool,
) -> np.ndarray:
    """Relay ``nn.layer_norm``: normalise over ``axis``; gamma/beta have that axis's length."""
    op = "nn.layer_norm"
    check_float(op, x)
    ax = norm_axis(axis, x.ndim, op)
    dt = compute_dtype(x.dtype)
    xc = x.astype(dt, copy=False)
    mean = xc.mean(axis=ax, keepdims=True)
    d = xc - mean
    var = np.mean(d * d, axis=ax, keepdims=True)
    res = d / np.sqrt(var + dt.type(epsilon))
    if scale:
        res = res * _along(gamma.astype(dt), ax, x.ndim)
    if center:
        res = res + _along(beta.astype(dt), ax, x.ndim)
    return emit(res, out, op, x.dtype)


@register("nn.instance_norm")
def instance_norm(
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    *,
    out: np.ndarray | None = None,
    axis: int,
    epsilon: float,
    center: bool,
    scale: bool,
) -> np.ndarray:
    """Relay ``nn.instance_norm``: normalise over every axis except 0 and ``axis``."""
    op = "nn.instance_norm"
    check_float(op, x)
    ax = norm_axis(axis, x.ndim, op)
    red = tuple(a for a in range(1, x.ndim) if a != ax)
    dt = compute_dtype(x.dtype)
    xc = x.astype(dt, copy=False)
    d = xc - xc.mean(axis=red, keepdims=True)
    res = d / np.sqrt(np.mean(d * d, axis=red, keepdims=True) + dt.type(epsilon))
    if scale:
        res = res * _along(gamma.astype(dt), ax, x.ndim)
    if center:
        res = res + _along(beta.astype(dt), ax, x.ndim)
    return emit(res, out, op, x.dtype)


@register("nn.l2_normalize")
def l2_normalize(
    x: np.ndarray,
    *,
    out: np.ndarray | None = None,
    eps: float,
    axis: Sequence[int] | None,
) -> np.ndarray:
    """Relay ``nn.l2_normalize``: x / sqrt(max(sum(x^2 over axis), eps))."""
    op = "nn.l2_normalize"
    check_float(op, x)
    axes = tuple(range(x.ndim)) if not axis else tuple(norm_axis(a, x.ndim, op) for a in axis)
    dt = compute_dtype(x.dtype)
    xc = x.astype(dt, copy=False)
    with np.errstate(all="ignore"):
        res = xc / np.sqrt(np.maximum(np.sum(xc * xc, axis=axes, keepdims=True), dt.type(eps)))
    return emit(res, out, op, x.dtype)


@register("nn.lrn")
def lrn(
    x: np.ndarray, *, out: np.ndarray | None = None, size: int, axis: int, bias: float, alpha: float, beta: float
) -> np.ndarray:
    """Relay ``nn.lrn`` (TOPI's ``lrn``): squares summed over ``size`` neighbours along ``axis``
    (``size // 2`` zeros padded on each side), ``x / (bias + alpha * sum / size) ** beta``."""
    op = "nn.lrn"
    check_float(op, x)
    if x.ndim != 4 or size % 2 != 1 or axis not in (1, 3):
        raise ValueError(f"{op}: needs 4-D data, an odd size and axis 1 or 3 (got {x.shape}, size {size}, axis {axis})")
    dt = compute_dtype(x.dtype)
    xc = x.astype(dt, copy=False)
    pad = [(0, 0)] * 4
    pad[axis] = (size // 2, size // 2)
    sq = np.pad(xc * xc, pad)
    total = np.zeros_like(xc)
    n = x.shape[axis]
    for r in range(size):
        total += np.take(sq, range(r, r + n), axis=axis)
    with np.errstate(all="ignore"):
        res = xc / np.power(dt.type(bias) + dt.type(alpha) * total / dt.type(size), dt.type(beta))
    return emit(res, out, op, x.dtype)


# ---------------------------------------------------------------------------------------------
# Dense and matmul
# ---------------------------------------------------------------------------------------------


def _matmul_into(a: np.ndarray, b: np.ndarray, out, op: str, res_dt, comp_dt) -> np.ndarray:
    a = a.astype(comp_dt, copy=False)
    b = b.astype(comp_dt, copy=False)
    with np.errstate(all="ignore"):
        if out is not None and out.dtype == comp_dt and res_dt == comp_dt:
            shape = broadcast_shape(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
            if a.ndim == 1 or b.ndim == 1:
                return emit(np.matmul(a, b), out, op, res_dt)
            prepare_out(out, shape, res_dt, op)
            np.matmul(a, b, out=out)
            return out
        return emit(np.matmul(a, b), out, op, res_dt)


@register("nn.dense")
def dense(
    x: np.ndarray,
    weight: np.ndarray,
    *,
    out: np.ndarray | None = None,
    units: int | None,
    out_dtype: str,
) -> np.ndarray:
    """Relay ``nn.dense``: ``x @ weight.T`` with weight (units, in); x may have leading dims."""
    op = "nn.dense"
    if weight.ndim != 2 or x.shape[-1] != weight.shape[1]:
        raise ValueError(f"{op}: data {x.shape} and weight {weight.shape} (units, in) disagree")
    if units is not None and units != weight.shape[0]:
        raise ValueError(f"{op}: units={units} but the weight has {weight.shape[0]} rows")
    res_dt, comp_dt = _result_dtypes(x, weight, out_dtype, op)
    return _matmul_into(x, weight.T, out, op, res_dt, comp_dt)


@register("nn.matmul")
def matmul(
    a: np.ndarray,
    b: np.ndarray,
    *,
    out: np.ndarray | None = None,
    units: int | None,
    out_dtype: str,
    transpose_a: bool,
    transpose_b: bool,
) -> np.ndarray:
    """Relay ``nn.matmul``: ``op(a) @ op(b)`` where op transposes the last two axes if asked."""
    op = "nn.matmul"
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError(f"{op}: operands must be at least 2-d, got {a.shape} and {b.shape}")
    a2 = np.swapaxes(a, -1, -2) if transpose_a else a
    b2 = np.swapaxes(b, -1, -2) if transpose_b else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError(f"{op}: reduction dims differ ({a2.shape} @ {b2.shape})")
    if units is not None and units != b2.shape[-1]:
        raise ValueError(f"{op}: units={units} but the result has {b2.shape[-1]} columns")
    res_dt, comp_dt = _result_dtypes(a, b, out_dtype, op)
    return _matmul_into(a2, b2, out, op, res_dt, comp_dt)


@register("nn.batch_matmul")
def batch_matmul(
    a: np.ndarray,
    b: np.ndarray,
    *,
    out: np.ndarray | None = None,
    out_dtype: str,
    transpose_a: bool,
    transpose_b: bool,
) -> np.ndarray:
    """Relay ``nn.batch_matmul`` on 3-d tensors (a batch of 1 broadcasts); default NT form."""
    op = "nn.batch_matmul"
    if a.ndim != 3 or b.ndim != 3:
        raise ValueError(f"{op}: operands must be 3-d, got {a.shape} and {b.shape}")
    if a.shape[0] != b.shape[0] and 1 not in (a.shape[0], b.shape[0]):
        raise ValueError(f"{op}: batch sizes {a.shape[0]} and {b.shape[0]} do not broadcast")
    a2 = np.swapaxes(a, 1, 2) if transpose_a else a
    b2 = np.swapaxes(b, 1, 2) if transpose_b else b
    if a2.shape[2] != b2.shape[1]:
        raise ValueError(f"{op}: reduction dims differ ({a2.shape} @ {b2.shape})")
    res_dt, comp_dt = _result_dtypes(a, b, out_dtype, op)
    return _matmul_into(a2, b2, out, op, res_dt, comp_dt)


@register("nn.bias_add")
def bias_add(
    x: np.ndarray, bias: np.ndarray, *, out: np.ndarray | None = None, axis: int
) -> np.ndarray:
    """Relay ``nn.bias_add``: add a 1-d bias along ``axis``."""
    op = "nn.bias_add"
    ax = norm_axis(axis, x.ndim, op)
    if bias.shape != (x.shape[ax],):
        raise ValueError(f"{op}: bias must have shape ({x.shape[ax]},), got {bias.shape}")
    if bias.dtype != x.dtype:
        raise ValueError(f"{op}: bias dtype {bias.dtype} differs from data dtype {x.dtype}")
    b = _along(bias, ax, x.ndim)
    with np.errstate(all="ignore"):
        if out is not None and out.dtype == x.dtype:
            prepare_out(out, x.shape, x.dtype, op)
            np.add(x, b, out=out)
            return out
        return emit(x + b, out, op)


# ---------------------------------------------------------------------------------------------
# Softmax, dropout, pad
# ---------------------------------------------------------------------------------------------


@register("nn.softmax")
def softmax(x: np.ndarray, *, out: np.ndarray | None = None, axis: int) -> np.ndarray:
    """Relay ``nn.softmax`` (max-subtracted, so large inputs do not overflow)."""
    check_float("nn.softmax", x)
    ax = norm_axis(axis, x.ndim, "nn.softmax")
    xc = x.astype(compute_dtype(x.dtype), copy=False)
    with np.errstate(all="ignore"):
        e = np.exp(xc - np.max(xc, axis=ax, keepdims=True))
        res = e / np.sum(e, axis=ax, keepdims=True)
    return emit(res, out, "nn.softmax", x.dtype)


@register("nn.log_softmax")
def log_softmax(x: np.ndarray, *, out: np.ndarray | None = None, axis: int) -> np.ndarray:
    """Relay ``nn.log_softmax``: x - max - log(sum(exp(x - max)))."""
    check_float("nn.log_softmax", x)
    ax = norm_axis(axis, x.ndim, "nn.log_softmax")
    xc = x.astype(compute_dtype(x.dtype), copy=False)
    with np.errstate(all="ignore"):
        sh = xc - np.max(xc, axis=ax, keepdims=True)
        res = sh - np.log(np.sum(np.exp(sh), axis=ax, keepdims=True))
    return emit(res, out, "nn.log_softmax", x.dtype)


@register("nn.dropout")
def dropout(
    x: np.ndarray, *, out: Sequence[np.ndarray] | None = None, rate: float
) -> tuple[np.ndarray, np.ndarray]:
    """Relay ``nn.dropout`` at inference: (x, a mask of ones in x's dtype)."""
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"nn.dropout: rate must be in [0, 1), got {rate}")
    return emit_many((x, np.ones(x.shape, dtype=x.dtype)), out, "nn.dropout")


@register("nn.pad")
def pad(
    x: np.ndarray,
    pad_value: np.ndarray | float = 0.0,
    *,
    out: np.ndarray | None = None,
    pad_width: Sequence[Sequence[int]],
    pad_mode: str,
) -> np.ndarray:
    """Relay ``nn.pad``: ``pad_width`` is one (before, after) pair per axis.

    ``"constant"`` fills with the 0-d ``pad_value``; ``"edge"`` repeats the border;
    ``"reflect"`` mirrors without repeating the border and needs pads smaller than the axis.
    """
    op = "nn.pad"
    widths = [tuple(int(v) for v in p) for p in pad_width]
    if len(widths) != x.ndim or any(len(p) != 2 for p in widths):
        raise ValueError(f"{op}: pad_width needs one (before, after) pair per axis of {x.shape}")
    if any(v < 0 for p in widths for v in p):
        raise ValueError(f"{op}: negative pad widths {widths}")
    shape = tuple(d + b + a for d, (b, a) in zip(x.shape, widths))
    if pad_mode == "constant":
        res = prepare_out(out, shape, x.dtype, op)
        with np.errstate(all="ignore"):
            res[...] = np.asarray(pad_value).astype(x.dtype)
        res[tuple(slice(b, b + d) for d, (b, _) in zip(x.shape, widths))] = x
        return res
    if pad_mode == "edge":
        if any(d == 0 and (b or a) for d, (b, a) in zip(x.shape, widths)):
            raise ValueError(f"{op}: edge padding of an empty axis")
        return emit(np.pad(x, widths, mode="edge"), out, op)
    if pad_mode == "reflect":
        if any((b or a) and max(b, a) >= d for d, (b, a) in zip(x.shape, widths)):
            raise ValueError(
                f"{op}: reflect pads must be smaller than the axis ({widths}, {x.shape})"
            )
        return emit(np.pad(x, widths, mode="reflect"), out, op)
    raise ValueError(f"{op}: pad_mode must be constant, edge or reflect, got {pad_mode!r}")
