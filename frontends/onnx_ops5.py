"""ONNX operators Relay's frontend did not import, composed of Relay ops: ``CenterCropPad``,
``AffineGrid``, ``Col2Im``, ``STFT``, the window functions, ``MelWeightMatrix``, ``Det``,
``MaxPool``'s ``Indices``, 1-D ``ConvTranspose`` and ``TensorScatter``.

* ``CenterCropPad``: ``strided_slice`` (crop) and ``nn.pad`` (pad) per axis, the odd pixel at
  the end as ONNX; ``AffineGrid``: ``einsum`` of ``theta`` with the constant base grid.
* ``Col2Im`` (2-D images): ``nn.conv2d_transpose`` of the columns with a one-hot kernel (col2im
  is im2col's adjoint, which is what a transposed convolution with such a kernel computes).
* ``STFT``: the frames as ``strided_slice``s stacked, times the window, ``dft`` of each frame
  (real signals; the one-sided half sliced off the full transform).
* ``HannWindow``/``HammingWindow``/``BlackmanWindow`` and ``MelWeightMatrix`` are functions of
  their sizes alone and are computed at import (the sizes must be known then).
* ``Det`` of ``n x n`` matrices, n <= 4: the sum over permutations of signed products (Relay
  had no determinant; LU with pivoting has no composition from Relay ops).
* ``MaxPool`` with ``Indices`` (2-D): the windows gathered by a constant index table
  (``take``), ``max`` and ``argmax`` over each window, the flat index of the winner by ``take``.
* ``ConvTranspose`` on 3-D (1-D spatial) inputs: the 2-D import with a height of 1.
* ``TensorScatter``: ``scatter_elements`` at ``write_indices[batch] + position`` along the axis
  (``floor_mod`` the cache length when circular); the write indices may be run-time values.

Shapes, sizes and lengths given as graph inputs must be known at import (else
``OnnxRunTimeValueError``, which the ONNX backend answers by binding them).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from xrelay.frontends.onnx import _CONVERTERS, _Importer, _Node, _op, _relay_dtype

_CONV_TRANSPOSE_2D = _CONVERTERS["ConvTranspose"]
_MAX_POOL = _CONVERTERS["MaxPool"]


def _ints(im: _Importer, node: _Node, i: int, what: str) -> list[int]:
    return [int(v) for v in np.asarray(im.static(node.inputs[i], node, what)).reshape(-1)]


def _norm_axes(node: _Node, axes, rank: int) -> list[int]:
    out = []
    for a in axes:
        if not -rank <= a < rank:
            raise node.fail(f"axis {a} is out of range for rank {rank}")
        out.append(a % rank)
    return out


@_op("CenterCropPad")
def _center_crop_pad(im, node):
    x = node.inputs[0]
    xs = im.static_shape(x, node)
    shape = _ints(im, node, 1, "shape")
    axes = _norm_axes(node, node.attrs.get("axes", range(len(xs))), len(xs))
    if len(shape) != len(axes):
        raise node.fail(f"shape has {len(shape)} values for {len(axes)} axes")
    pads = [[0, 0] for _ in xs]
    for a, t in zip(axes, shape):
        d = xs[a]
        if t < 0:
            raise node.fail(f"shape value {t} is negative")
        if t < d:  # crop, the odd pixel off the end
            start = (d - t) // 2
            x = im.emit1("strided_slice", [x], begin=[start], end=[start + t], axes=[a])
        elif t > d:
            pads[a] = [(t - d) // 2, t - d - (t - d) // 2]
    if any(p != [0, 0] for p in pads):
        x = im.emit1("nn.pad", [x, im.scalar(0, x)], pad_width=pads)
    return [x]


@_op("AffineGrid")
def _affine_grid(im, node):
    theta = node.inputs[0]
    size = _ints(im, node, 1, "size")
    spatial = size[2:]
    if len(spatial) not in (2, 3):
        raise node.fail(f"size must be [N, C, H, W] or [N, C, D, H, W], got {size}")
    align = node.attrs.get("align_corners", 0)

    def line(n: int) -> np.ndarray:
        if align:
            return np.linspace(-1.0, 1.0, n) if n > 1 else np.zeros(1)
        return (np.arange(n) * 2.0 + 1.0) / n - 1.0

    # homogeneous base coordinates, x (the last axis) first: [prod(spatial), len(spatial) + 1]
    mesh = np.meshgrid(*(line(n) for n in spatial), indexing="ij")
    base = np.stack([*(m.reshape(-1) for m in reversed(mesh)), np.ones(mesh[0].size)], axis=1)
    k = len(spatial)
    ts = im.static_shape(theta, node)
    if list(ts[1:]) != [k, k + 1] or ts[0] != size[0]:
        raise node.fail(f"theta must be [{size[0]}, {k}, {k + 1}] for size {size}, got {list(ts)}")
    grid = im.emit1("einsum", [theta, im.const(base, im.dtype_of(theta))], equation="nij,pj->npi")
    return [im.reshape(grid, [size[0], *spatial, k])]


@_op("Col2Im")
def _col2im(im, node):
    x = node.inputs[0]
    image = _ints(im, node, 1, "image_shape")
    block = _ints(im, node, 2, "block_shape")
    if len(image) != 2 or len(block) != 2:
        raise node.fail(f"only 2-D images are supported (image_shape {image}, block_shape {block})")
    n, ck, length = im.static_shape(x, node)
    kh, kw = block
    k = kh * kw
    if ck % k:
        raise node.fail(f"input dimension 1 ({ck}) is not a multiple of the block size {k}")
    c = ck // k
    dil = list(node.attrs.get("dilations", [1, 1]))
    pads = list(node.attrs.get("pads", [0, 0, 0, 0]))
    strides = list(node.attrs.get("strides", [1, 1]))
    blocks = [
        (image[i] + pads[i] + pads[i + 2] - dil[i] * (block[i] - 1) - 1) // strides[i] + 1 for i in range(2)
    ]
    if blocks[0] * blocks[1] != length or min(blocks) < 1:
        raise node.fail(f"{length} blocks do not tile an image {image} with these blocks, pads and strides")
    # one output channel per group of k columns; kernel tap (i, j) takes column i * kw + j
    w = np.zeros((ck, 1, kh, kw))
    for i, j in itertools.product(range(kh), range(kw)):
        w[np.arange(c) * k + i * kw + j, 0, i, j] = 1.0
    cols = im.reshape(x, [n, ck, *blocks])
    full = [(blocks[i] - 1) * strides[i] + dil[i] * (block[i] - 1) + 1 - pads[i] - pads[i + 2] for i in range(2)]
    y = im.emit1(
        "nn.conv2d_transpose",
        [cols, im.const(w, im.dtype_of(x))],
        strides=strides,
        padding=pads,
        dilation=dil,
        output_padding=[image[i] - full[i] for i in range(2)],
        groups=c,
        kernel_size=block,
        channels=c,
    )
    return [y]


def _window(node: _Node, n: int, periodic: bool) -> np.ndarray:
    m = n if periodic else n - 1
    t = 2.0 * math.pi * np.arange(n) / max(m, 1)
    if node.op_type == "HannWindow":
        return 0.5 - 0.5 * np.cos(t)
    if node.op_type == "HammingWindow":
        return 25.0 / 46.0 - (1.0 - 25.0 / 46.0) * np.cos(t)
    return 0.42 - 0.5 * np.cos(t) + 0.08 * np.cos(2.0 * t)


@_op("HannWindow", "HammingWindow", "BlackmanWindow")
def _windows(im, node):
    (n,) = _ints(im, node, 0, "size")
    if n < 0:
        raise node.fail(f"size {n} is negative")
    dtype = _relay_dtype(node.attrs.get("output_datatype", 1), f"{node.op_type} node '{node.name}'")
    return [im.const(_window(node, n, bool(node.attrs.get("periodic", 1))), dtype)]


@_op("MelWeightMatrix")
def _mel_weight_matrix(im, node):
    n_mel, dft_len, rate = (_ints(im, node, i, w)[0] for i, w in enumerate(("num_mel_bins", "dft_length", "sample_rate")))
    lo, hi = (float(np.asarray(im.static(node.inputs[i], node, w)).reshape(-1)[0]) for i, w in ((3, "lower_edge_hertz"), (4, "upper_edge_hertz")))
    if n_mel < 1 or dft_len < 1 or rate < 1:
        raise node.fail("num_mel_bins, dft_length and sample_rate must be positive")
    bins = dft_len // 2 + 1

    def mel(f: float) -> float:
        return 2595.0 * math.log10(1.0 + f / 700.0)

    # n_mel + 2 points a step of (high - low) / (n_mel + 2) mels apart from the lower edge (as
    # ONNX's definition), as FFT bins; a triangle rising to the middle point, falling to the last
    step = (mel(hi) - mel(lo)) / (n_mel + 2)
    hz = 700.0 * (10.0 ** ((np.arange(n_mel + 2) * step + mel(lo)) / 2595.0) - 1.0)
    idx = ((dft_len + 1) * hz // rate).astype(np.int64)
    if idx.min() < 0 or idx.max() >= bins:
        raise node.fail(f"the mel bins fall outside the {bins} spectrogram bins (edges {lo:g}-{hi:g} Hz at {rate} Hz)")
    out = np.zeros((bins, n_mel))
    for i in range(n_mel):
        a, b, c = idx[i], idx[i + 1], idx[i + 2]
        if b == a:
            out[b, i] = 1.0
        else:
            out[a : b + 1, i] = (np.arange(a, b + 1) - a) / (b - a)
        if c > b:
            out[b:c, i] = (c - np.arange(b, c)) / (c - b)
    dtype = _relay_dtype(node.attrs.get("output_datatype", 1), f"MelWeightMatrix node '{node.name}'")
    return [im.const(out, dtype)]


@_op("STFT")
def _stft(im, node):
    signal, window = node.inputs[0], node.input(2)
    (step,) = _ints(im, node, 1, "frame_step")
    b, length, comps = im.static_shape(signal, node)
    if comps != 1:
        raise node.fail("only real signals ([batch, length, 1]) are supported")
    if node.input(3) is not None:
        (flen,) = _ints(im, node, 3, "frame_length")
    elif window is not None:
        flen = im.static_shape(window, node)[0]
    else:
        raise node.fail("needs a window or a frame_length")
    if step < 1 or not 1 <= flen <= length:
        raise node.fail(f"frame_step {step} / frame_length {flen} do not fit a signal of {length}")
    frames = (length - flen) // step + 1
    x = im.reshape(signal, [b, length])
    parts = [im.emit1("strided_slice", [x], begin=[f * step], end=[f * step + flen], axes=[1]) for f in range(frames)]
    fr = im.emit1("stack", parts, axis=1)  # [b, frames, flen]
    if window is not None:
        fr = im.emit1("multiply", [fr, window])
    zero = im.emit1("zeros_like", [fr])
    re, imag = im.emit("dft", [fr, zero])
    if node.attrs.get("onesided", 1):
        half = flen // 2 + 1
        re, imag = (im.emit1("strided_slice", [v], begin=[0], end=[half], axes=[2]) for v in (re, imag))
    return [im.emit1("stack", [re, imag], axis=3)]


@_op("Det")
def _det(im, node):
    x = node.inputs[0]
    xs = im.static_shape(x, node)
    if len(xs) < 2 or xs[-1] != xs[-2]:
        raise node.fail(f"expects [..., n, n] matrices, got {list(xs)}")
    n = xs[-1]
    if n > 4:
        raise node.fail(f"{n} x {n} matrices: xrelay expands determinants by permutations up to 4 x 4")
    if n == 0:
        return [im.const(np.ones(xs[:-2]), im.dtype_of(x))]
    lead = len(xs) - 2
    entry = {
        (i, j): im.emit1("strided_slice", [x], begin=[i, j], end=[i + 1, j + 1], axes=[lead, lead + 1])
        for i in range(n)
        for j in range(n)
    }
    total = None
    for perm in itertools.permutations(range(n)):
        term = entry[0, perm[0]]
        for i in range(1, n):
            term = im.emit1("multiply", [term, entry[i, perm[i]]])
        inversions = sum(perm[i] > perm[j] for i in range(n) for j in range(i + 1, n))
        if total is None:
            total = term if inversions % 2 == 0 else im.emit1("negative", [term])
        else:
            total = im.emit1("subtract" if inversions % 2 else "add", [total, term])
    return [im.reshape(total, list(xs[:-2]))]


@_op("ConvTranspose")
def _conv_transpose_1d(im, node):
    x = node.inputs[0]
    if im.rank(x) != 3:
        return _CONV_TRANSPOSE_2D(im, node)
    w = node.inputs[1]
    a = dict(node.attrs)
    for key, fill in (("kernel_shape", 1), ("strides", 1), ("dilations", 1), ("output_padding", 0)):
        if key in a:
            a[key] = [fill, *a[key]]
    if "pads" in a:
        a["pads"] = [0, a["pads"][0], 0, a["pads"][1]]
    if "output_shape" in a:
        a["output_shape"] = [1, a["output_shape"][-1]]
    xs, ws = im.static_shape(x, node), im.static_shape(w, node)
    ins = [im.reshape(x, [xs[0], xs[1], 1, xs[2]]), im.reshape(w, [ws[0], ws[1], 1, ws[2]]), *node.inputs[2:]]
    sub = _Node(node.op_type, node.name, ins, a, node.num_outputs, node.opset)
    (y,) = _CONV_TRANSPOSE_2D(im, sub)
    ys = im.shape_of(y)
    return [im.reshape(y, [ys[0], ys[1], ys[3]])]


@_op("MaxPool")
def _max_pool_indices(im, node):
    if node.num_outputs < 2 or im.rank(node.inputs[0]) != 4:
        return _MAX_POOL(im, node)
    x = node.inputs[0]
    n, c, h, w = im.static_shape(x, node)
    kernel = list(node.attrs["kernel_shape"])
    strides = list(node.attrs.get("strides", [1, 1]))
    dil = list(node.attrs.get("dilations", [1, 1]))
    pads = list(node.attrs.get("pads", [0, 0, 0, 0]))
    if node.attrs.get("auto_pad", "NOTSET") != "NOTSET" or node.attrs.get("ceil_mode", 0):
        raise node.fail("the Indices output with auto_pad or ceil_mode is not supported")
    oh, ow = ((d + pads[i] + pads[i + 2] - dil[i] * (kernel[i] - 1) - 1) // strides[i] + 1 for i, d in enumerate((h, w)))
    # flat positions in the padded image of each window's taps: [oh * ow, kh * kw]
    hp, wp = h + pads[0] + pads[2], w + pads[1] + pads[3]
    rows = (np.arange(oh) * strides[0])[:, None, None, None] + (np.arange(kernel[0]) * dil[0])[None, None, :, None]
    cols = (np.arange(ow) * strides[1])[None, :, None, None] + (np.arange(kernel[1]) * dil[1])[None, None, None, :]
    taps = (rows * wp + cols).reshape(oh * ow, kernel[0] * kernel[1])
    # the winner's index in the unpadded image (ONNX: row-major, or column-major with storage_order 1)
    r, q = taps // wp - pads[0], taps % wp - pads[1]
    flat = q * h + r if node.attrs.get("storage_order", 0) else r * w + q
    dt = im.dtype_of(x)
    fill = -np.inf if dt.startswith(("float", "bfloat")) else np.iinfo(np.dtype(dt)).min
    pad_width = [[0, 0], [0, 0], [pads[0], pads[2]], [pads[1], pads[3]]]
    padded = im.emit1("nn.pad", [x, im.scalar(fill, x)], pad_width=pad_width)
    vals = im.emit1("take", [im.reshape(padded, [n, c, hp * wp]), im.const(taps)], axis=2)  # [n, c, oh*ow, k]
    y = im.emit1("max", [vals], axis=[3])
    win = im.emit1("argmax", [vals], axis=[3])  # the first maximum, as ONNX
    # index = flat[window, winner] + (n * C + c) * H * W
    table = im.const(flat.reshape(-1).astype(np.int64))
    base = im.const((np.arange(oh * ow) * flat.shape[1]).astype(np.int64))
    picked = im.emit1("take", [table, im.emit1("add", [im.int64(win), base])], axis=0)
    offset = im.const((np.arange(n * c).reshape(n, c, 1) * h * w).astype(np.int64))
    idx = im.emit1("add", [picked, offset])
    return [im.reshape(y, [n, c, oh, ow]), im.reshape(idx, [n, c, oh, ow])]


@_op("TensorScatter")
def _tensor_scatter(im, node):
    cache, update, write = node.inputs[0], node.inputs[1], node.input(2)
    cs, us = im.static_shape(cache, node), im.static_shape(update, node)
    rank = len(cs)
    (axis,) = _norm_axes(node, [node.attrs.get("axis", -2)], rank)
    if axis == 0 or len(us) != rank or any(c != u for i, (c, u) in enumerate(zip(cs, us)) if i != axis) or us[axis] > cs[axis]:
        raise node.fail(f"update {list(us)} does not fit cache {list(cs)} along axis {axis} (axis 0 is the batch)")
    mode = node.attrs.get("mode", "linear")
    if mode not in ("linear", "circular"):
        raise node.fail(f"mode must be linear or circular, got {mode!r}")
    if write is None:
        write = im.const(np.zeros(cs[0], np.int64))
    # the cache position of each update element: write_indices[batch] + its position on the axis
    start = im.reshape(im.int64(write), [cs[0]] + [1] * (rank - 1))
    steps = im.const(np.arange(us[axis], dtype=np.int64).reshape([us[axis] if i == axis else 1 for i in range(rank)]))
    pos = im.emit1("add", [start, steps])
    if mode == "circular":
        pos = im.emit1("floor_mod", [pos, im.const(np.int64(cs[axis]))])
    pos = im.emit1("broadcast_to", [pos], shape=list(us))
    return [im.emit1("scatter_elements", [cache, pos, update], axis=axis)]
