"""Fast kernels for channels-last programs (``NHWC`` data, ``HWIO`` kernels): what
``convert-layout{desired-layouts="nn.conv2d=NHWC,default"}`` produces.

Channels last suits im2col: every tap of a convolution is a run of ``C`` contiguous values, so
the column matrix ``(out_h * out_w, kh * kw * C)`` is built from ``kh * kw`` strided block
copies into the planned workspace, and the ``HWIO`` kernel already is the
``(kh * kw * C, O)`` matrix: one BLAS product per chunk of output rows writes the ``NHWC``
output in place. A 1x1 stride-1 convolution multiplies the input itself. The epilogue (bias,
residual add, relu, clip) runs on each chunk of rows right after its product, and max pooling
takes the maximum over the valid part of each tap. Results are computed with the same
products as the reference ``NHWC`` kernel (``kernels.nn``), chunked like the ``NCHW`` path.
"""

from __future__ import annotations

import functools

import numpy as np

from xrelay.runtime.fast_kernels import (
    _MIN_CHUNK_MNK,
    FINE_CHUNKS_PER_THREAD,
    NHWC_MAKERS,
    Thunk,
    _chunks,
    _epilogue_thunks,
    _float_same,
    _matmul_ranges,
    _ranges,
    _sequence,
    _split,
    _valid_range,
    pool_geometry,
)


def conv2d_nhwc(op, vals, out, ws, opts):
    """``nn.conv2d`` NHWC/HWIO, groups 1, float: thunks or None (reference kernel)."""
    x, w = vals
    a = op.attrs
    if a["data_layout"] != "NHWC" or a["kernel_layout"] != "HWIO":
        return None
    if (a["out_layout"] or "NHWC") != "NHWC" or a["out_dtype"] not in ("", None, str(x.dtype)):
        return None
    if not _float_same(x, w, out) or x.ndim != 4 or w.ndim != 4 or a["groups"] != 1:
        return None
    if not (out.flags.c_contiguous and x.flags.c_contiguous):
        return None
    via = _channels_first(op, x, w, out, a, ws, opts)
    if via is not None:
        return via
    n, h, wd, c = x.shape
    kh, kw, _, o = w.shape
    _, oh, ow, _ = out.shape
    sh, sw = a["strides"]
    dh, dw = a["dilation"]
    pt, pl, _, _ = a["padding"]
    k, p = kh * kw * c, oh * ow
    wmat = np.ascontiguousarray(w.reshape(k, o))
    pointwise = kh == kw == 1 and sh == sw == 1 and not any(a["padding"])
    cols = None
    if not pointwise:
        need = k * p * x.dtype.itemsize
        if ws is None or ws.nbytes < need:
            return None
        cols = ws[:need].view(x.dtype).reshape(p, k)
        opts.columns.append(cols)
    taps = _taps(h, wd, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl)
    parts = min(_chunks(opts), o * k * p // _MIN_CHUNK_MNK) or 1
    thunks: list[tuple[str, Thunk]] = []
    for b in range(n):
        out2 = out[b].reshape(p, o)
        src = x[b].reshape(p, c) if pointwise else cols

        def rows(y0: int, y1: int, b: int = b, out2=out2, src=src) -> Thunk:
            p0, p1 = y0 * ow, y1 * ow
            steps: list[Thunk] = []
            if cols is not None:
                steps += _gather(x[b], cols.reshape(oh, ow, kh, kw, c), taps, y0, y1)
            steps.append(functools.partial(np.matmul, src[p0:p1], wmat, out=out2[p0:p1]))
            steps += _epilogue_thunks(opts.epilogue, out, (b, slice(y0, y1)))
            return _sequence(steps)

        ranges = _matmul_ranges(oh, parts, 1, ow * o * k)
        fine = _matmul_ranges(oh, _chunks(opts, FINE_CHUNKS_PER_THREAD), 1, ow * o * k)
        thunks.append(("conv" if opts.epilogue else "matmul", _split(opts, rows, ranges, oh, fine)))
    return thunks


class _AsChannelsFirst:
    """The op as the NCHW fast path sees it (only its attributes are read)."""

    def __init__(self, op):
        self.attrs = dict(op.attrs, data_layout="NCHW", kernel_layout="OIHW", out_layout="")


def _channels_first(op, x, w, out, a, ws, opts):
    """The NCHW fast convolution on a channels-first copy of the input (compile-time
    scratch), its result copied back to channels last by row chunks with the epilogue.

    Used where channels first is faster: a 3x3 stride-1 layer the NCHW path runs as Winograd,
    and inputs of few channels, whose channels-last taps are too short to copy quickly.
    None when this is neither (or the NCHW path declines).
    """
    from xrelay.runtime.fast_kernels import _fast_conv2d, _Options, _winograd_tile

    n, h, wd, c = x.shape
    _, oh, ow, o = out.shape
    fixed = opts.fixed[1:2] == (True,)
    w_oihw = np.ascontiguousarray(w.transpose(3, 2, 0, 1)) if fixed else np.empty((o, c, *w.shape[:2]), w.dtype)
    xt = np.empty((n, c, h, wd), x.dtype)
    ot = np.empty((n, o, oh, ow), out.dtype)
    if c >= 16 and not _winograd_tile(xt, w_oihw, ot, a, ws, opts):
        return None
    inner = _Options(opts.use_numba, opts.pool, [], opts.columns, opts.winograd)
    inner.fixed = opts.fixed
    body = _fast_conv2d(_AsChannelsFirst(op), [xt, w_oihw], ot, ws, inner)
    if body is None:
        return None
    opts.scratch += [xt, ot] if fixed else [xt, ot, w_oihw]
    parts = _chunks(opts)
    thunks: list[tuple[str, Thunk]] = []
    if not fixed:  # the weights may change between runs: transposed on every run
        thunks.append(("copy", functools.partial(np.copyto, w_oihw, w.transpose(3, 2, 0, 1))))
    for b in range(n):

        def to_channels_first(y0: int, y1: int, b: int = b) -> Thunk:
            return functools.partial(np.copyto, xt[b, :, y0:y1], x[b, y0:y1].transpose(2, 0, 1))

        thunks.append(("copy", _split(opts, to_channels_first, _ranges(h, parts), h)))
    thunks += body
    for b in range(n):

        def finish(y0: int, y1: int, b: int = b) -> Thunk:
            # back to channels last, then the epilogue on those rows while they are in cache
            steps = [functools.partial(np.copyto, out[b, y0:y1], ot[b, :, y0:y1].transpose(1, 2, 0))]
            steps += _epilogue_thunks(opts.epilogue, out, (b, slice(y0, y1)))
            return _sequence(steps)

        thunks.append(("conv", _split(opts, finish, _ranges(oh, parts), oh)))
    return thunks


def _taps(h, wd, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl):
    """Per tap (i, j): the valid output rows/columns and the input position of the first."""
    out = []
    for i in range(kh):
        r0, r1 = _valid_range(oh, h, i * dh, sh, pt)
        for j in range(kw):
            c0, c1 = _valid_range(ow, wd, j * dw, sw, pl)
            out.append((i, j, r0, r1, c0, c1, r0 * sh + i * dh - pt, c0 * sw + j * dw - pl, sh, sw))
    return out


def _gather(xb: np.ndarray, cols5: np.ndarray, taps, y0: int, y1: int) -> list[Thunk]:
    """im2col of output rows ``y0:y1``: each tap's valid block copied, the border zeroed."""

    def run() -> None:
        for i, j, r0, r1, c0, c1, yi, xi, sh, sw in taps:
            dst = cols5[y0:y1, :, i, j, :]
            a, b = max(r0, y0), min(r1, y1)
            if a >= b or c0 >= c1:
                dst[...] = 0
                continue
            if a > y0:
                dst[: a - y0] = 0
            if b < y1:
                dst[b - y0 :] = 0
            if c0 > 0:
                dst[a - y0 : b - y0, :c0] = 0
            if c1 < cols5.shape[1]:
                dst[a - y0 : b - y0, c1:] = 0
            ys = yi + (a - r0) * sh
            src = xb[ys : ys + (b - a - 1) * sh + 1 : sh, xi : xi + (c1 - c0 - 1) * sw + 1 : sw]
            dst[a - y0 : b - y0, c0:c1] = src

    return [run]


def max_pool_nhwc(op, vals, out, ws, opts):
    """``nn.max_pool2d`` NHWC, float: the maximum over the valid part of every tap."""
    (x,) = vals
    geometry = pool_geometry(op, x, out, "NHWC")
    if geometry is None:
        return None
    kh, kw, sh, sw, dh, dw, pt, pl = geometry
    h, wd = x.shape[1:3]
    oh, ow = out.shape[1:3]
    thunks: list[tuple[str, Thunk]] = [("pool", functools.partial(out.fill, -np.inf))]
    for _i, _j, r0, r1, c0, c1, y0, x0, _, _ in _taps(h, wd, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl):
        if r0 >= r1 or c0 >= c1:
            continue
        src = x[:, y0 : y0 + (r1 - r0 - 1) * sh + 1 : sh, x0 : x0 + (c1 - c0 - 1) * sw + 1 : sw]
        dst = out[:, r0:r1, c0:c1]
        thunks.append(("pool", functools.partial(np.maximum, dst, src, out=dst)))
    return thunks


def global_avg_pool_nhwc(op, vals, out, ws, opts):
    (x,) = vals
    a = op.attrs
    if a["layout"] != "NHWC" or (a["out_layout"] or "NHWC") != "NHWC":
        return None
    if not _float_same(x, out) or x.ndim != 4:
        return None
    return [("pool", functools.partial(np.mean, x, axis=(1, 2), keepdims=True, dtype=x.dtype, out=out))]


NHWC_MAKERS.update(
    conv2d_nhwc=conv2d_nhwc, max_pool_nhwc=max_pool_nhwc, global_avg_pool_nhwc=global_avg_pool_nhwc
)
