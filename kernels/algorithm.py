"""Kernels of ``cumsum``, ``cumprod``, ``scatter_elements``, ``scatter_nd``, ``einsum``,
``reinterpret``, ``reverse_sequence``, ``image.grid_sample`` and ``dft`` (dialects/relay/algorithm.py).

Indices may be negative (counted from the end, as ONNX allows); an index outside the axis
raises IndexError naming the op.
"""

from __future__ import annotations

import numpy as np

from xrelay.dialects.relay import numpy_dtype

from ._registry import compute_dtype, emit, emit_many, norm_axis, register, to_numpy_dtype

# ---- scans -------------------------------------------------------------------------------------


def _scan(x: np.ndarray, out, axis, dtype, exclusive: bool, op: str, ufunc: np.ufunc) -> np.ndarray:
    dt = x.dtype if dtype in (None, "") else to_numpy_dtype(dtype)
    if axis is None:
        x, axis = x.reshape(-1), 0
    axis = norm_axis(axis, x.ndim, op)
    res = ufunc.accumulate(x.astype(dt, copy=False), axis=axis, dtype=dt)
    if exclusive and x.shape[axis]:
        # shift by one along the axis, starting from the identity (0 for sum, 1 for product)
        first = np.full_like(np.take(res, [0], axis=axis), ufunc.identity)
        res = np.concatenate([first, np.delete(res, -1, axis=axis)], axis=axis)
    return emit(res, out, op)


@register("cumsum")
def cumsum(x: np.ndarray, *, out: np.ndarray | None = None, axis: int | None, dtype: str | None, exclusive: bool) -> np.ndarray:
    """Relay ``cumsum``: the running sum along ``axis`` (flattened when None), in ``dtype``."""
    return _scan(x, out, axis, dtype, exclusive, "cumsum", np.add)


@register("cumprod")
def cumprod(x: np.ndarray, *, out: np.ndarray | None = None, axis: int | None, dtype: str | None, exclusive: bool) -> np.ndarray:
    """Relay ``cumprod``: the running product along ``axis`` (flattened when None), in ``dtype``."""
    return _scan(x, out, axis, dtype, exclusive, "cumprod", np.multiply)


# ---- scatters ----------------------------------------------------------------------------------


def _norm_index(idx: np.ndarray, size, op: str) -> np.ndarray:
    idx = idx.astype(np.int64)
    if np.any(idx < -size) or np.any(idx >= size):
        raise IndexError(f"{op}: an index is out of range for an axis of size {size}")
    return np.where(idx < 0, idx + size, idx)


_UFUNCS = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


def _scatter(res: np.ndarray, where: tuple, updates: np.ndarray, mode: str, op: str) -> np.ndarray:
    if mode == "update":
        res[where] = updates  # duplicates: the last one wins
    elif mode == "mean":  # the mean of the present value and every value written there
        acc = res.astype(np.float64)
        count = np.ones(res.shape, np.int64)
        np.add.at(acc, where, updates)
        np.add.at(count, where, 1)
        mean = acc / count
        res[...] = np.floor(mean) if res.dtype.kind in "iu" else mean
    elif mode in _UFUNCS:
        _UFUNCS[mode].at(res, where, updates)
    else:
        raise ValueError(f"{op}: unknown reduction '{mode}'")
    return res


@register("scatter_elements")
def scatter_elements(
    data: np.ndarray,
    indices: np.ndarray,
    updates: np.ndarray,
    *,
    out: np.ndarray | None = None,
    axis: int,
    reduction: str,
) -> np.ndarray:
    """Relay ``scatter_elements``: ``out[.., indices[i..], ..] (reduction)= updates[i..]``."""
    op = "scatter_elements"
    if indices.shape != updates.shape or indices.ndim != data.ndim:
        raise ValueError(f"{op}: indices {indices.shape} and updates {updates.shape} must match in rank {data.ndim}")
    ax = norm_axis(axis, data.ndim, op)
    grid = list(np.indices(indices.shape, sparse=True))
    grid[ax] = _norm_index(indices, data.shape[ax], op)
    res = data.copy()
    return emit(_scatter(res, tuple(grid), updates.astype(data.dtype), reduction, op), out, op)


@register("scatter_nd")
def scatter_nd(
    data: np.ndarray,
    indices: np.ndarray,
    updates: np.ndarray,
    *,
    out: np.ndarray | None = None,
    mode: str,
) -> np.ndarray:
    """Relay ``scatter_nd``: index tuples along ``indices``' first axis, as ``gather_nd``."""
    op = "scatter_nd"
    m = indices.shape[0]
    if m > data.ndim:
        raise ValueError(f"{op}: index depth {m} exceeds the rank of {data.shape}")
    y = indices.shape[1:]
    if updates.shape != (*y, *data.shape[m:]):
        raise ValueError(f"{op}: updates {updates.shape} do not match indices {indices.shape} into {data.shape}")
    flat = indices.reshape(m, -1)
    where = tuple(_norm_index(flat[k], data.shape[k], op) for k in range(m))
    res = data.copy()
    upd = updates.reshape(flat.shape[1], *data.shape[m:]).astype(data.dtype)
    return emit(_scatter(res, where, upd, mode, op), out, op)


# ---- einsum, reinterpret, reverse_sequence ----------------------------------------------------


@register("einsum")
def einsum(*xs: np.ndarray, out: np.ndarray | None = None, equation: str) -> np.ndarray:
    """Relay ``einsum``: numpy's ``einsum`` (float16 accumulates in float32)."""
    dt = xs[0].dtype
    cdt = compute_dtype(dt)
    res = np.einsum(equation, *(x.astype(cdt, copy=False) for x in xs))
    return emit(np.asarray(res).astype(dt, copy=False), out, "einsum")


@register("reinterpret")
def reinterpret(x: np.ndarray, *, out: np.ndarray | None = None, dtype: str) -> np.ndarray:
    """Relay ``reinterpret``: the same bytes read as ``dtype`` (same element width)."""
    dt = numpy_dtype(dtype)
    if dt.itemsize != x.dtype.itemsize:
        raise ValueError(f"reinterpret: {x.dtype} and {dt} differ in width")
    return emit(x.view(dt), out, "reinterpret")  # same width: any layout can be viewed


@register("reverse_sequence")
def reverse_sequence(
    x: np.ndarray, lengths: np.ndarray, *, out: np.ndarray | None = None, seq_axis: int, batch_axis: int
) -> np.ndarray:
    """Relay ``reverse_sequence``: the first ``lengths[b]`` steps of batch entry ``b`` reversed."""
    op = "reverse_sequence"
    seq, batch = norm_axis(seq_axis, x.ndim, op), norm_axis(batch_axis, x.ndim, op)
    if lengths.shape != (x.shape[batch],):
        raise ValueError(f"{op}: lengths {lengths.shape} do not match the batch axis of {x.shape}")
    t = x.shape[seq]
    shape_l = [1] * x.ndim
    shape_l[batch] = x.shape[batch]
    shape_t = [1] * x.ndim
    shape_t[seq] = t
    n = np.clip(lengths.astype(np.int64), 0, t).reshape(shape_l)
    steps = np.arange(t).reshape(shape_t)
    src = np.where(steps < n, n - 1 - steps, steps)
    return emit(np.take_along_axis(x, np.broadcast_to(src, x.shape), axis=seq), out, op)


# ---- grid_sample -------------------------------------------------------------------------------


def _reflect(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Reflect ``x`` by the borders until inside [lo, hi] (PyTorch's and ONNX's rule)."""
    span = hi - lo
    if span <= 0:
        return np.full_like(x, lo)
    below, above = x < lo, x > hi
    dx = np.where(below, lo - x, x - hi)
    n = np.floor(dx / span)
    r = dx - n * span
    even = n % 2 == 0
    return np.where(below, np.where(even, lo + r, hi - r), np.where(above, np.where(even, hi - r, lo + r), x))


def _cubic_weights(t: np.ndarray) -> list[np.ndarray]:
    a = -0.75  # Keys' cubic convolution, as PyTorch and ONNX
    def near(d):
        return ((a + 2) * d - (a + 3)) * d * d + 1
    def far(d):
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


@register("image.grid_sample")
def grid_sample(
    data: np.ndarray,
    grid: np.ndarray,
    *,
    out: np.ndarray | None = None,
    method: str,
    layout: str,
    padding_mode: str,
    align_corners: bool,
) -> np.ndarray:
    """Relay ``image.grid_sample`` (NCHW/NCDHW; ``grid`` coordinates x, y(, z) along axis 1)."""
    op = "image.grid_sample"
    nsp = data.ndim - 2
    if layout not in ("NCHW", "NCDHW") or len(layout) != data.ndim or grid.shape[1] != nsp:
        raise ValueError(f"{op}: data {data.shape} / grid {grid.shape} do not fit layout {layout}")
    dt = data.dtype
    cdt = compute_dtype(dt)
    sizes = data.shape[2:]
    # grid's coordinate k addresses spatial axis nsp-1-k (x is the last axis)
    coords = []
    for i, size in enumerate(sizes):
        g = grid[:, nsp - 1 - i].astype(cdt)
        x = (g + 1) / 2 * (size - 1) if align_corners else ((g + 1) * size - 1) / 2
        if method == "nearest":
            x = np.rint(x)
        lo, hi = (0.0, size - 1.0) if align_corners else (-0.5, size - 0.5)
        # bicubic pads each of its taps instead (fetch), as PyTorch and TOPI
        if padding_mode == "border" and method != "bicubic":
            x = np.where((x < lo) | (x > hi), np.clip(x, 0, size - 1), x)
        elif padding_mode == "reflection" and method != "bicubic":
            x = _reflect(x, lo, hi)
        coords.append((x, lo, hi))
    n_idx = np.arange(data.shape[0]).reshape(-1, *([1] * nsp))
    moved = np.moveaxis(data, 1, -1).astype(cdt)  # (N, spatial..., C)

    def fetch(idx: list[np.ndarray]) -> np.ndarray:
        valid = np.ones(idx[0].shape, bool)
        fixed = []
        for (_, lo, hi), i, size in zip(coords, idx, sizes):
            if padding_mode == "zeros":
                valid &= (i >= 0) & (i < size)
                i = np.clip(i, 0, size - 1)
            elif padding_mode == "border":
                i = np.clip(i, 0, size - 1)
            else:
                i = np.clip(_reflect(i.astype(cdt), lo, hi).astype(np.int64), 0, size - 1)
            fixed.append(i)
        return moved[(n_idx, *fixed)] * valid[..., None]

    if method == "nearest":
        res = fetch([x.astype(np.int64) for x, _, _ in coords])
    elif method in ("bilinear", "bicubic"):
        taps = []
        for x, _, _ in coords:
            x0 = np.floor(x)
            t = x - x0
            x0 = x0.astype(np.int64)
            if method == "bilinear":
                taps.append([(x0, 1 - t), (x0 + 1, t)])
            else:
                taps.append([(x0 + k - 1, w) for k, w in enumerate(_cubic_weights(t))])
        res = 0
        for combo in np.ndindex(*(len(t) for t in taps)):
            idx = [taps[d][k][0] for d, k in enumerate(combo)]
            w = 1
            for d, k in enumerate(combo):
                w = w * taps[d][k][1]
            res = res + fetch(idx) * w[..., None]
    else:
        raise ValueError(f"{op}: unknown method '{method}'")
    return emit(np.moveaxis(np.asarray(res), -1, 1).astype(dt), out, op)


@register("dft")
def dft(re: np.ndarray, im: np.ndarray, *, out=None, inverse: bool) -> tuple[np.ndarray, np.ndarray]:
    """Relay ``dft`` along the last axis (the inverse divides by the length, as TOPI's)."""
    if re.shape != im.shape:
        raise ValueError(f"dft: re {re.shape} and im {im.shape} differ in shape")
    # numpy transforms complex64 in single precision: float32 signals stay float32, as ONNX's
    cdt = np.complex128 if re.dtype == np.float64 else np.complex64
    signal = re.astype(cdt) + 1j * im.astype(cdt)
    res = np.fft.ifft(signal, axis=-1) if inverse else np.fft.fft(signal, axis=-1)
    return emit_many([res.real.astype(re.dtype), res.imag.astype(re.dtype)], out, "dft")


@register("topk")
def topk(
    x: np.ndarray, *, out=None, k: int, axis: int, ret_type: str, is_ascend: bool, dtype: str
) -> tuple[np.ndarray, ...]:
    """Relay ``topk``: sorted, equal elements in index order (a stable sort of the key)."""
    ax = norm_axis(axis, x.ndim, "topk")
    key = x if is_ascend else (~x if x.dtype.kind == "u" else -x.astype(np.float64) if x.dtype.kind == "i" else -x)
    order = np.argsort(key, axis=ax, kind="stable")
    if k >= 1:
        order = np.take(order, np.arange(k), axis=ax)
    values = np.take_along_axis(x, order, axis=ax)
    indices = order.astype(to_numpy_dtype(dtype))
    res = {"both": [values, indices], "values": [values], "indices": [indices]}[ret_type]
    return emit_many(res, out, "topk")


@register("one_hot")
def one_hot(
    indices: np.ndarray, on: np.ndarray, off: np.ndarray, *, out=None, depth: int, axis: int, dtype: str
) -> np.ndarray:
    """Relay ``one_hot``: ``on`` where the new axis' position equals the index, else ``off``."""
    ax = indices.ndim if axis == -1 else axis
    positions = np.arange(depth).reshape([depth] + [1] * (indices.ndim - ax))
    hit = np.expand_dims(indices, ax) == positions
    return emit(np.where(hit, on, off).astype(to_numpy_dtype(dtype)), out, "one_hot")


@register("vision.roi_align")
def roi_align(
    data: np.ndarray,
    rois: np.ndarray,
    *,
    out=None,
    pooled_size,
    spatial_scale: float,
    sample_ratio: int,
    layout: str,
    mode: str,
    min_roi_size: float,
) -> np.ndarray:
    """Relay ``vision.roi_align`` (TOPI's: regions at least 1x1, samples outside [-1, size] are 0,
    ``max`` is the largest bilinear sample); ``max_corner`` takes at each sample the largest of
    its four weighted corner terms (ONNX's max), ``min_roi_size`` the regions' least size."""
    op = "vision.roi_align"
    x = data if layout == "NCHW" else np.moveaxis(data, 3, 1)
    n, c, h, w = x.shape
    ph, pw = pooled_size
    cdt = compute_dtype(x.dtype)
    res = np.zeros((rois.shape[0], c, ph, pw), cdt)
    for r, roi in enumerate(rois.astype(np.float64)):
        b = int(roi[0])
        if not 0 <= b < n:
            raise IndexError(f"{op}: roi {r} names batch {b} of {n}")
        x1, y1, x2, y2 = roi[1:] * spatial_scale
        rh, rw = max(y2 - y1, min_roi_size), max(x2 - x1, min_roi_size)
        bh, bw = rh / ph, rw / pw
        gh = sample_ratio if sample_ratio > 0 else int(np.ceil(rh / ph))
        gw = sample_ratio if sample_ratio > 0 else int(np.ceil(rw / pw))
        # sample positions (ph, gh) and (pw, gw)
        ys = y1 + np.arange(ph)[:, None] * bh + (np.arange(gh)[None, :] + 0.5) * bh / gh
        xs = x1 + np.arange(pw)[:, None] * bw + (np.arange(gw)[None, :] + 0.5) * bw / gw
        y, xx = ys[:, :, None, None], xs[None, None, :, :]  # (ph, gh, pw, gw)
        outside = (y < -1.0) | (xx < -1.0) | (y > h) | (xx > w)
        y, xx = np.clip(y, 0, h - 1), np.clip(xx, 0, w - 1)
        y0, x0 = np.floor(y).astype(np.int64), np.floor(xx).astype(np.int64)
        y1_, x1_ = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
        ly, lx = y - y0, xx - x0
        img = x[b].astype(cdt)  # (c, h, w); img[:, yi, xi] is (c, ph, gh, pw, gw)
        terms = (
            img[:, y0, x0] * (1 - ly) * (1 - lx),
            img[:, y0, x1_] * (1 - ly) * lx,
            img[:, y1_, x0] * ly * (1 - lx),
            img[:, y1_, x1_] * ly * lx,
        )
        val = np.maximum.reduce(terms) if mode == "max_corner" else terms[0] + terms[1] + terms[2] + terms[3]
        val = np.where(outside, 0.0, val)
        res[r] = val.mean(axis=(2, 4)) if mode == "avg" else val.max(axis=(2, 4))
    if layout == "NHWC":
        res = np.moveaxis(res, 1, 3)
    return emit(res.astype(data.dtype), out, op)


@register("argwhere")
def argwhere(condition: np.ndarray, *, out=None) -> np.ndarray:
    """Relay ``argwhere``: the coordinates of the nonzero elements, row-major, int32."""
    return emit(np.argwhere(condition).astype(np.int32), out, "argwhere")


@register("unique")
def unique(data: np.ndarray, *, out=None, sorted: bool, return_counts: bool) -> tuple[np.ndarray, ...]:
    """Relay ``unique`` on 1-D data: results padded with zeros to the input's length."""
    n = data.shape[0]
    values, first, inverse, counts = np.unique(data, return_index=True, return_inverse=True, return_counts=True)
    if not sorted:  # in order of first occurrence
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        values, first, counts, inverse = values[order], first[order], counts[order], rank[inverse.reshape(-1)]

    def padded(a: np.ndarray, dtype) -> np.ndarray:
        res = np.zeros(n, dtype)
        res[: a.size] = a
        return res

    res = [padded(values, data.dtype), padded(first, np.int32), inverse.reshape(-1).astype(np.int32)]
    res.append(np.array([values.size], np.int32))
    if return_counts:
        res.append(padded(counts, np.int32))
    return emit_many(res, out, "unique")


def _iou_over(boxes: np.ndarray, i: int, rest: np.ndarray, threshold: float) -> np.ndarray:
    """Which boxes of ``rest`` overlap box ``i`` by an IoU above ``threshold`` (corners in
    either order; empty boxes overlap nothing)."""
    lo, hi = np.minimum(boxes[:, :2], boxes[:, 2:]), np.maximum(boxes[:, :2], boxes[:, 2:])
    inter = np.clip(np.minimum(hi[i], hi[rest]) - np.maximum(lo[i], lo[rest]), 0, None).prod(axis=1)
    area = (hi - lo).prod(axis=1)
    union = area[i] + area[rest] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        over = inter / union > threshold
    return over & (inter > 0) & (area[i] > 0) & (area[rest] > 0)


@register("vision.all_class_non_max_suppression")
def all_class_non_max_suppression(
    boxes: np.ndarray,
    scores: np.ndarray,
    max_output_boxes_per_class: np.ndarray,
    iou_threshold: np.ndarray,
    score_threshold: np.ndarray,
    *,
    out=None,
    output_format: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Relay ``vision.all_class_non_max_suppression`` (ONNX format): ``(batch, class, box)``
    rows, zero-padded, and their count."""
    batch, num_classes, num_boxes = scores.shape
    limit = int(np.asarray(max_output_boxes_per_class).reshape(-1)[0])
    limit = num_boxes if limit < 0 else limit  # Relay's -1: no limit
    iou = float(np.asarray(iou_threshold).reshape(-1)[0])
    floor = float(np.asarray(score_threshold).reshape(-1)[0])
    rows = []
    for b in range(batch):
        corners = boxes[b].astype(np.float64)
        for c in range(num_classes):
            s = scores[b, c]
            cand = np.flatnonzero(s > floor)
            cand = cand[np.argsort(-s[cand].astype(np.float64), kind="stable")]
            kept = 0
            while cand.size and kept < limit:
                best, cand = cand[0], cand[1:]
                rows.append((b, c, best))
                kept += 1
                cand = cand[~_iou_over(corners, best, cand, iou)]
    selected = np.zeros((batch * num_classes * num_boxes, 3), np.int64)
    if rows:
        selected[: len(rows)] = rows
    return emit_many([selected, np.array([len(rows)], np.int64)], out, "vision.all_class_non_max_suppression")
def _round_half_away(v: float) -> int:
    return int(np.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)


@register("vision.roi_pool")
def roi_pool(
    data: np.ndarray, rois: np.ndarray, *, out=None, pooled_size, spatial_scale: float, layout: str
) -> np.ndarray:
    """Relay ``vision.roi_pool`` (TOPI's: corners rounded half away from zero, regions at least
    1x1, cell edges ``floor(p * bin + 1e-5)`` and ``ceil((p + 1) * bin - 1e-5)``, empty cells 0)."""
    op = "vision.roi_pool"
    x = data if layout == "NCHW" else np.moveaxis(data, 3, 1)
    n, c, h, w = x.shape
    ph, pw = pooled_size
    res = np.zeros((rois.shape[0], c, ph, pw), data.dtype)
    eps = 1e-5
    for r, roi in enumerate(rois.astype(np.float64)):
        b = int(roi[0])
        if not 0 <= b < n:
            raise IndexError(f"{op}: roi {r} names batch {b} of {n}")
        x1, y1, x2, y2 = (_round_half_away(float(v) * spatial_scale) for v in roi[1:])
        bh, bw = max(y2 - y1 + 1, 1) / ph, max(x2 - x1 + 1, 1) / pw
        for i in range(ph):
            hs = min(max(int(np.floor(i * bh + eps)) + y1, 0), h)
            he = min(max(int(np.ceil((i + 1) * bh - eps)) + y1, 0), h)
            for j in range(pw):
                ws = min(max(int(np.floor(j * bw + eps)) + x1, 0), w)
                we = min(max(int(np.ceil((j + 1) * bw - eps)) + x1, 0), w)
                if hs < he and ws < we:
                    res[r, :, i, j] = x[b, :, hs:he, ws:we].max(axis=(1, 2))
    if layout == "NHWC":
        res = np.moveaxis(res, 1, 3)
    return emit(np.ascontiguousarray(res), out, op)
