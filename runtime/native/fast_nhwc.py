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
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from xrelay.runtime.native.fast_kernels import (
    FINE_CHUNKS_PER_THREAD,
    MIN_CHUNK_MNK,
    WINOGRAD_CHUNKS,
    Options,
    Thunk,
    bind_kernel,
    chunk_count,
    epilogue_chunk,
    even_ranges,
    fast_conv2d,
    fixed_split,
    float_same,
    im2col_kernel,
    in_sequence,
    loop_kernels_available,
    matmul_ranges,
    max_pool_taps,
    mean_into,
    pool_geometry,
    split_job,
    valid_range,
    wino_matrices,
    winograd_tile_for,
    winograd_weights,
)
from xrelay.runtime.native.workspace import winograd_slice_bytes


def conv2d_nhwc(op, vals, out, ws, opts):
    """``nn.conv2d`` NHWC/HWIO, groups 1, float: thunks or None (reference kernel)."""
    x, w = vals
    a = op.attrs
    if a["data_layout"] != "NHWC" or a["kernel_layout"] != "HWIO":
        return None
    if (a["out_layout"] or "NHWC") != "NHWC" or a["out_dtype"] not in ("", None, str(x.dtype)):
        return None
    if not float_same(x, w, out) or x.ndim != 4 or w.ndim != 4 or a["groups"] != 1:
        return None
    if not (out.flags.c_contiguous and x.flags.c_contiguous):
        return None
    wino = _winograd_nhwc(x, w, out, a, ws, opts)
    if wino is not None:
        return wino
    few = _few_channels(x, w, out, a, ws, opts)
    if few is not None:
        return few
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
    parts = min(chunk_count(opts), o * k * p // MIN_CHUNK_MNK) or 1
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
            steps += _epilogue_rows(opts, out, (b, slice(y0, y1)))
            return in_sequence(steps)

        ranges = matmul_ranges(oh, parts, 1, ow * o * k)
        fine = matmul_ranges(oh, chunk_count(opts, FINE_CHUNKS_PER_THREAD), 1, ow * o * k)
        thunks.append(("conv" if opts.epilogue else "matmul", split_job(opts, rows, ranges, oh, fine)))
    return thunks


def _epilogue_rows(opts, out, index: tuple) -> list[Thunk]:
    """The epilogue on some rows of image b: ``index`` is ``(b, slice(y0, y1))`` (NHWC) or
    ``(b, slice(None), slice(y0, y1))`` (``NCHW{c}c``). The epilogue kernel walks
    ``out[b][i0:i1, j0:j1, :]`` whatever the layout, so NHWC rows are its first range and
    channel blocks' rows its second: one pass over the rows, as in the NCHW path."""
    b, *rest = index
    if len(rest) == 1:
        ranges = ((rest[0].start, rest[0].stop), (0, out.shape[2]))
    else:
        ranges = ((0, out.shape[1]), (rest[1].start, rest[1].stop))
    return epilogue_chunk(opts.epilogue, out, b, *ranges, opts)


def _winograd_nhwc(x, w, out, a, ws, opts):
    """Winograd for an NHWC/HWIO convolution: ``_winograd_channels_last`` with one block."""
    n, h, wd, c = x.shape
    o = w.shape[3]
    geometry = _ChannelsLast(
        n, c, o, (h, wd), out.shape[1:3],
        in_blocks=lambda b: [(x[b], 0, c)],
        out_blocks=lambda b: [(out[b], 0, o)],
        rows=lambda b, y0, y1: (b, slice(y0, y1)),
    )  # fmt: skip
    return _winograd_channels_last(geometry, x, lambda: w, out, a, ws, opts)


@dataclass
class _ChannelsLast:
    """A convolution's images as channels-last blocks: NHWC is one block of all channels,
    ``NCHW{c}c`` is ``C / c`` blocks of ``c`` channels (each an (h, w, c) image)."""

    n: int
    c: int
    o: int
    in_hw: tuple[int, int]
    out_hw: tuple[int, int]
    in_blocks: Callable[[int], list[tuple[np.ndarray, int, int]]]
    """image b -> [(block image (h, w, cb), first channel, channels)]"""
    out_blocks: Callable[[int], list[tuple[np.ndarray, int, int]]]
    rows: Callable[[int, int, int], tuple]
    """(image, y0, y1) -> the index of those output rows (for the epilogue)"""


def _winograd_channels_last(g: _ChannelsLast, x, hwio, out, a, ws, opts):
    """Winograd F(tile x tile, 3x3) on channels-last blocks (tile 2 or 4, where the NCHW path
    would use it): per image, the input transform (``native_nhwc.h``) of each block writes
    its columns of ``(tile + 2)**2`` matrices tiles x C in the workspace, one product per
    tile element with the weights transformed here once (``(tile + 2)**2`` matrices C x O,
    from ``hwio()``), and the output transform writes each output block, followed by the
    epilogue on its rows. No transposes.

    Cut like the NCHW Winograd: large images into ``WINOGRAD_CHUNKS`` ranges of tile rows
    (transform, product, finish per range), smaller ones in three phases (the transforms by
    tile rows, the products whole). The same bits for any thread count. None where the NCHW
    path would not use Winograd.
    """
    c, o = g.c, g.o
    oh, ow = g.out_hw
    if not x.flags.c_contiguous:
        return None
    tile = winograd_tile_for(c, o, (3, 3) if a["kernel_size"] is None else a["kernel_size"], (oh, ow), x.dtype, a, ws, opts)
    if not tile:
        return None
    w = hwio()
    if w.shape[:2] != (3, 3):
        return None
    pt, pl = a["padding"][:2]
    th, tw = -(-oh // tile), -(-ow // tile)
    nt = th * tw
    count = (tile + 2) ** 2
    k_in, k_out = ("wino_input_nhwc", "wino_output_nhwc") if tile == 2 else ("wino4_input_nhwc", "wino4_output_nhwc")
    dt = x.dtype
    u = winograd_weights(w, tile, dt)  # u[k]: C x O
    v = wino_matrices(ws, 0, count, nt, c, dt)
    m = wino_matrices(ws, count * winograd_slice_bytes(c, nt, dt.itemsize), count, nt, o, dt)
    opts.columns += [v, m]
    opts.winograd.append(u)
    by_rows = nt >= WINOGRAD_CHUNKS * 64 and th >= WINOGRAD_CHUNKS
    thunks: list[tuple[str, Thunk]] = []
    for b in range(g.n):

        def start(r0: int, r1: int, b=b) -> list[Thunk]:
            return [bind_kernel(k_in, img, v[:, :, c0 : c0 + k], 0, k, r0, r1, tw, pt, pl) for img, c0, k in g.in_blocks(b)]

        def finish(r0: int, r1: int, b=b) -> list[Thunk]:
            steps = [bind_kernel(k_out, m[:, :, o0 : o0 + k], tw, img, 0, k, r0, r1) for img, o0, k in g.out_blocks(b)]
            return steps + _epilogue_rows(opts, out, g.rows(b, tile * r0, min(oh, tile * r1)))

        if by_rows:

            def rows(r0: int, r1: int, start=start, finish=finish) -> Thunk:
                t0, t1 = r0 * tw, r1 * tw
                product = functools.partial(np.matmul, v[:, t0:t1], u, out=m[:, t0:t1])
                return in_sequence([*start(r0, r1), product, *finish(r0, r1)])

            tasks = [rows(lo, hi) for lo, hi in even_ranges(th, WINOGRAD_CHUNKS)]
            thunks.append(("conv", fixed_split(opts, tasks)))
            continue

        def first(r0: int, r1: int, start=start) -> Thunk:
            return in_sequence(start(r0, r1))

        thunks.append(("im2col", split_job(opts, first, even_ranges(th, chunk_count(opts)), th)))

        def products(k0: int, k1: int) -> Thunk:
            return functools.partial(np.matmul, v[k0:k1], u[k0:k1], out=m[k0:k1])

        fine = even_ranges(count, chunk_count(opts, FINE_CHUNKS_PER_THREAD))
        thunks.append(("matmul", split_job(opts, products, even_ranges(count, chunk_count(opts)), count, fine)))

        def last(r0: int, r1: int, finish=finish) -> Thunk:
            return in_sequence(finish(r0, r1))

        thunks.append(("conv", split_job(opts, last, even_ranges(th, chunk_count(opts)), th)))
    return thunks


def _few_channels(x, w, out, a, ws, opts):
    """An NHWC convolution of few input channels (the stem): channels-last taps of ``C < 16``
    values are too short to copy quickly, so the input is copied channels first (small: few
    channels) and the loop kernels' NCHW im2col builds the ``(C * kh * kw, out_h * out_w)``
    columns; the product ``columns^T x W`` (BLAS reads the transposed chunk in place) writes
    the NHWC output rows directly, then the epilogue on them. None without the loop kernels
    (``_channels_first`` then)."""
    n, h, wd, c = x.shape
    kh, kw, _, o = w.shape
    _, oh, ow, _ = out.shape
    if c >= 16 or not (opts.use_c_kernels and loop_kernels_available()):
        return None
    k, p = c * kh * kw, oh * ow
    need = k * p * x.dtype.itemsize
    if ws is None or ws.nbytes < need:
        return None
    cols = ws[:need].view(x.dtype).reshape(k, p)
    opts.columns.append(cols)
    fixed = opts.fixed[1:2] == (True,)
    # (C, kh, kw) rows as the NCHW im2col orders them, O columns
    view = lambda: w.transpose(2, 0, 1, 3).reshape(k, o)  # noqa: E731
    wmat = np.ascontiguousarray(view()) if fixed else np.empty((k, o), w.dtype)
    xt = np.empty((n, c, h, wd), x.dtype)
    opts.scratch += [xt] if fixed else [xt, wmat]
    geometry = (kh, kw, *a["strides"], *a["dilation"], *a["padding"][:2])
    parts = min(chunk_count(opts), o * k * p // MIN_CHUNK_MNK) or 1
    thunks: list[tuple[str, Thunk]] = []
    if not fixed:  # the weights may change between runs: rearranged on every run
        thunks.append(("copy", lambda: np.copyto(wmat, view())))
    for b in range(n):

        def to_channels_first(y0: int, y1: int, b: int = b) -> Thunk:
            return functools.partial(np.copyto, xt[b, :, y0:y1], x[b, y0:y1].transpose(2, 0, 1))

        thunks.append(("copy", split_job(opts, to_channels_first, even_ranges(h, chunk_count(opts)), h)))
        out2 = out[b].reshape(p, o)

        def rows(y0: int, y1: int, b: int = b, out2=out2) -> Thunk:
            p0, p1 = y0 * ow, y1 * ow
            steps = [
                im2col_kernel(xt[b], cols, 0, c, y0, y1, (oh, ow), geometry),
                functools.partial(np.matmul, cols[:, p0:p1].T, wmat, out=out2[p0:p1]),
            ]
            steps += _epilogue_rows(opts, out, (b, slice(y0, y1)))
            return in_sequence(steps)

        ranges = matmul_ranges(oh, parts, 1, ow * o * k)
        fine = matmul_ranges(oh, chunk_count(opts, FINE_CHUNKS_PER_THREAD), 1, ow * o * k)
        thunks.append(("conv", split_job(opts, rows, ranges, oh, fine)))
    return thunks


class _AsChannelsFirst:
    """The op as the NCHW fast path sees it (only its attributes are read)."""

    def __init__(self, op):
        self.attrs = dict(op.attrs, data_layout="NCHW", kernel_layout="OIHW", out_layout="")


def _channels_first(op, x, w, out, a, ws, opts):
    """An NHWC convolution through ``_through_nchw`` where channels first is faster: inputs
    of few channels, whose channels-last taps are too short to copy quickly. None otherwise."""
    n, h, wd, c = x.shape
    _, oh, ow, o = out.shape
    if c >= 16:
        return None
    g = _ChannelsLast(
        n, c, o, (h, wd), (oh, ow),
        in_blocks=lambda b: [(x[b], 0, c)],
        out_blocks=lambda b: [(out[b], 0, o)],
        rows=lambda b, y0, y1: (b, slice(y0, y1)),
    )  # fmt: skip
    return _through_nchw(
        op, g, lambda: w.transpose(3, 2, 0, 1), out, ws, opts,
        x_rows=lambda xt, b, y0, y1: (xt[b, :, y0:y1], x[b, y0:y1].transpose(2, 0, 1)),
        out_rows=lambda ot, b, y0, y1: (out[b, y0:y1], ot[b, :, y0:y1].transpose(1, 2, 0)),
    )  # fmt: skip


def _through_nchw(op, g: _ChannelsLast, oihw, out, ws, opts, x_rows, out_rows):
    """The NCHW fast convolution on a channels-first copy of the input (compile-time
    scratch), its result copied back by row chunks with the epilogue. ``oihw()`` views the
    weights as OIHW; ``x_rows(xt, b, y0, y1)`` / ``out_rows(ot, b, y0, y1)`` give the
    (destination, source) of copying rows to and from the channels-first arrays ``xt`` and
    ``ot``. None where the NCHW path declines."""
    n, c, o = g.n, g.c, g.o
    (h, wd), (oh, ow) = g.in_hw, g.out_hw
    fixed = opts.fixed[1:2] == (True,)
    view = oihw()
    w_oihw = np.ascontiguousarray(view) if fixed else np.empty(view.shape, view.dtype)
    xt = np.empty((n, c, h, wd), out.dtype)
    ot = np.empty((n, o, oh, ow), out.dtype)
    inner = Options(opts.use_c_kernels, opts.pool, [], opts.columns, opts.winograd)
    inner.fixed, inner.winograd_tile = opts.fixed, opts.winograd_tile
    body = fast_conv2d(_AsChannelsFirst(op), [xt, w_oihw], ot, ws, inner)
    if body is None:
        return None
    opts.scratch += [xt, ot] if fixed else [xt, ot, w_oihw]
    parts = chunk_count(opts)
    thunks: list[tuple[str, Thunk]] = []
    if not fixed:  # the weights may change between runs: rearranged on every run
        thunks.append(("copy", lambda: np.copyto(w_oihw, oihw())))
    for b in range(n):

        def to_channels_first(y0: int, y1: int, b: int = b) -> Thunk:
            return functools.partial(np.copyto, *x_rows(xt, b, y0, y1))

        thunks.append(("copy", split_job(opts, to_channels_first, even_ranges(h, parts), h)))
    thunks += body
    for b in range(n):

        def finish(y0: int, y1: int, b: int = b) -> Thunk:
            # back to channels last, then the epilogue on those rows while they are in cache
            steps = [functools.partial(np.copyto, *out_rows(ot, b, y0, y1))]
            steps += _epilogue_rows(opts, out, g.rows(b, y0, y1))
            return in_sequence(steps)

        thunks.append(("conv", split_job(opts, finish, even_ranges(oh, parts), oh)))
    return thunks


_NCHWC = re.compile(r"NCHW(\d+)c$")
_OIHWIO = re.compile(r"OIHW(\d+)i(\d+)o$")


def conv2d_blocked(op, vals, out, ws, opts):
    """``nn.conv2d`` with AlterOpLayout's blocked layouts (data ``NCHW{i}c``, kernel
    ``OIHW{i}i{o}o`` or plain ``OIHW``, output ``NCHW{o}c``; depthwise ``OIHW1i{o}o``), float:
    Winograd on the channel blocks where the NCHW path would use it
    (``_winograd_channels_last``), else the NCHW fast convolution on an unblocked copy
    (``_through_nchw``). None: the reference kernel."""
    x, w = vals
    a = op.attrs
    dm, om = _NCHWC.match(a["data_layout"]), _NCHWC.match(a["out_layout"] or a["data_layout"])
    plain_kernel = a["kernel_layout"] == "OIHW"
    km = _OIHWIO.match(a["kernel_layout"])
    if not (dm and om and (km or plain_kernel)) or a["out_dtype"] not in ("", None, str(x.dtype)):
        return None
    ic, oc = int(dm.group(1)), int(om.group(1))
    if not float_same(x, w, out) or x.ndim != 5 or w.ndim != (4 if plain_kernel else 6):
        return None
    if not (out.flags.c_contiguous and x.flags.c_contiguous):
        return None
    n, cb, h, wd, _ = x.shape
    ob, oh, ow = out.shape[1:4]
    c, o = cb * ic, ob * oc
    groups = a["groups"]
    kic, koc = (1, 1) if plain_kernel else (int(km.group(1)), int(km.group(2)))
    depthwise = groups == c == o and kic == 1 and w.shape[1] == 1
    if not plain_kernel and (koc != oc or not (depthwise or (groups == 1 and kic == ic))):
        return None
    if groups != 1 and not depthwise:
        return None
    kh, kw = w.shape[2:4]
    if plain_kernel:
        oihw = lambda: w  # noqa: E731
        hwio = lambda: w.transpose(2, 3, 1, 0)  # noqa: E731
    else:
        oihw = lambda: w.transpose(0, 5, 1, 4, 2, 3).reshape(o, c // groups, kh, kw)  # noqa: E731
        hwio = lambda: w.transpose(2, 3, 1, 4, 0, 5).reshape(kh, kw, c, o)  # noqa: E731
    g = _ChannelsLast(
        n, c, o, (h, wd), (oh, ow),
        in_blocks=lambda b: [(x[b, j], j * ic, ic) for j in range(cb)],
        out_blocks=lambda b: [(out[b, j], j * oc, oc) for j in range(ob)],
        rows=lambda b, y0, y1: (b, slice(None), slice(y0, y1)),
    )  # fmt: skip
    if not depthwise:
        wino = _winograd_channels_last(g, x, hwio, out, a, ws, opts)
        if wino is not None:
            return wino
    return _through_nchw(
        op, g, oihw, out, ws, opts,
        x_rows=lambda xt, b, y0, y1: (
            xt[b, :, y0:y1].reshape(cb, ic, y1 - y0, wd), x[b, :, y0:y1].transpose(0, 3, 1, 2)
        ),
        out_rows=lambda ot, b, y0, y1: (
            out[b, :, y0:y1], ot[b, :, y0:y1].reshape(ob, oc, y1 - y0, ow).transpose(0, 2, 3, 1)
        ),
    )  # fmt: skip


def _taps(h, wd, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl):
    """Per tap (i, j): the valid output rows/columns and the input position of the first."""
    out = []
    for i in range(kh):
        r0, r1 = valid_range(oh, h, i * dh, sh, pt)
        for j in range(kw):
            c0, c1 = valid_range(ow, wd, j * dw, sw, pl)
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
    return max_pool_taps(x, out, 1, geometry)


def global_avg_pool_nhwc(op, vals, out, ws, opts):
    (x,) = vals
    a = op.attrs
    if a["layout"] != "NHWC" or (a["out_layout"] or "NHWC") != "NHWC":
        return None
    if not float_same(x, out) or x.ndim != 4:
        return None
    return [("pool", mean_into(x, (1, 2), out))]


def max_pool_blocked(op, vals, out, ws, opts):
    """``nn.max_pool2d`` in ``NCHW{c}c``, float: the maximum over the valid part of every tap
    (H and W are axes 2 and 3, the channel block last)."""
    (x,) = vals
    a = op.attrs
    if not _NCHWC.match(a["layout"]) or (a.get("out_layout") or a["layout"]) != a["layout"]:
        return None
    if not float_same(x, out) or x.ndim != 5:
        return None
    geometry = (*a["pool_size"], *a["strides"], *a["dilation"], *a["padding"][:2])
    return max_pool_taps(x, out, 2, geometry)


def global_avg_pool_blocked(op, vals, out, ws, opts):
    (x,) = vals
    a = op.attrs
    if not _NCHWC.match(a["layout"]) or (a["out_layout"] or a["layout"]) != a["layout"]:
        return None
    if not float_same(x, out) or x.ndim != 5:
        return None
    return [("pool", functools.partial(np.mean, x, axis=(2, 3), keepdims=True, dtype=x.dtype, out=out))]
