"""ONNX's ``onnx/defs/nn`` operators: convolutions, pools, normalisations, dropout, attention.

As Relay's ONNX frontend (TVM v0.19) maps them where Relay had the op, else as compositions of
Relay ops:

* ``Conv``: ``nn.conv1d``/``nn.conv2d``/``nn.conv3d`` by rank; ``ConvTranspose``:
  ``nn.conv2d_transpose``/``nn.conv3d_transpose``, 3-D (1-D spatial) inputs as the 2-D import
  with a height of 1.
* ``MaxPool``/``AveragePool``: ``nn.*_pool2d`` and ``nn.*_pool3d`` (a ceil-mode window ONNX
  drops because it would start in the end padding is sliced off), 1-D as the 2-D pool over
  (N, C, 1, W); ``MaxPool``'s ``Indices`` (2-D): the windows gathered by a constant index table
  (``take``), ``max`` and ``argmax`` over each window, the flat index of the winner by ``take``.
  ``LpPool``: an average pool of ``|x|^p`` counting the padding, times the window size (1-D,
  2-D, 3-D). ``GlobalAveragePool``/``GlobalMaxPool``: ``nn.global_*_pool2d``, on 5-D
  ``nn.adaptive_*_pool3d`` to 1x1x1.
* ``DeformConv`` (opset 19) without ``mask``: ``nn.deformable_conv2d`` (plus ``B`` as an add) on
  the input padded by one zero row and column on each side, with the offsets shifted by one:
  ONNX samples points in (-1, 0) partially where TOPI's op gives 0, so the frame moves them
  inside; the output rows and columns the larger frame adds are sliced off.
* ``Col2Im`` (2-D and 3-D images): ``nn.conv2d_transpose``/``nn.conv3d_transpose`` of the
  columns with a one-hot kernel (col2im is im2col's adjoint, which is what a transposed
  convolution with such a kernel computes).
* ``QLinearConv``: ``qnn.conv2d`` (+ int32 bias) and ``qnn.requantize`` from
  ``x_scale * w_scale`` to ``y_scale``; ``ConvInteger``: ``qnn.conv2d`` with unit scales.
* ``BatchNormalization``: ``nn.batch_norm``; ``training_mode = 1`` normalises with the batch's
  statistics and returns the updated running mean and variance. ``LayerNormalization``:
  ``nn.layer_norm`` (several trailing axes, or the Mean/InvStdDev outputs, as arithmetic).
  ``GroupNormalization``: ``nn.group_norm`` (opset 18's per-group scale and bias repeated per
  channel); ``InstanceNormalization``: ``nn.instance_norm``; ``LpNormalization``: p = 2 is
  ``nn.l2_normalize`` (eps 0), p = 1 ``x / sum(|x|)``, both 0 where the norm is 0 (as ONNX);
  ``RMSNormalization``, ``MeanVarianceNormalization``, ``LRN`` (``nn.lrn`` for an odd size).
* ``TfIdfVectorizer`` (integer tokens): per gram length and skip distance, the windows of the
  input (strided slices, stacked) compared with the pool's n-grams, counted, and mapped to the
  output positions by a 0/1 matrix (``nn.dense``); TF, IDF and TFIDF weighting.
* ``Dropout``: the identity (and an all-true mask); in training mode a mask drawn at import
  (seeded: ONNX's reference's mask).
* ``Attention`` (opset 23), ``RotaryEmbedding``, ``Shrink``, ``Flatten``, ``MaxRoiPool``,
  ``MaxUnpool``: compositions.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from xrelay.dialects.relay import numpy_dtype
from xrelay.frontends.onnx import quantization as q
from xrelay.frontends.onnx.importer import Importer, Node, Value, relay_dtype
from xrelay.frontends.onnx.registry import converter

# ---- convolutions ------------------------------------------------------------------------------


def _spatial_pads(node: Node, in_hw, kernel, strides, dilations, transposed=False):
    """Relay's padding (all befores, then all afters: [top, left, bottom, right] in 2-D) from
    ONNX pads / auto_pad for windows of any rank."""
    # checked here, as SAME padding divides by the strides (the relay op checks them too)
    for name, values in (("strides", strides), ("dilations", dilations)):
        if any(isinstance(v, float) or v < 1 for v in values):
            raise node.fail(f"{name} must be positive integers, got {list(values)}")
    auto = node.attrs.get("auto_pad", "NOTSET")
    if auto in ("NOTSET", ""):
        n = len(kernel)
        pads = list(node.attrs.get("pads", [0] * (2 * n)))
        if len(pads) != 2 * n:
            raise node.fail(f"pads {pads} must have {2 * n} values for {n}-D")
        return pads
    if auto == "VALID":
        return [0, 0, 0, 0]
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise node.fail(f"unknown auto_pad '{auto}'")
    before, after = [], []
    for n, k, s, d in zip(in_hw, kernel, strides, dilations):
        if n is None:
            raise node.fail("auto_pad SAME needs static spatial dims")
        total = max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
        small, big = total // 2, total - total // 2
        if auto == "SAME_UPPER":
            before.append(small)
            after.append(big)
        else:
            before.append(big)
            after.append(small)
    return before + after


def _check_2d(im: Importer, node: Node, x: Value) -> None:
    if im.rank(x) != 4:
        raise node.fail(f"only 2-D (NCHW) inputs are supported, got rank {im.rank(x)}")


@converter("Conv")
def _conv(im, node):
    x, w, b = node.inputs[0], node.inputs[1], node.input(2)
    n = im.rank(x) - 2
    if n not in (1, 2, 3):
        raise node.fail(f"only 1-D, 2-D and 3-D convolutions are supported, got rank {n + 2}")
    ws = im.shape_of(w)
    kernel = list(node.attrs.get("kernel_shape", ws[2:]))
    strides = list(node.attrs.get("strides", [1] * n))
    dil = list(node.attrs.get("dilations", [1] * n))
    pads = _spatial_pads(node, im.shape_of(x)[2:], kernel, strides, dil)
    y = im.emit1(
        f"nn.conv{n}d",
        [x, w],
        strides=strides,
        padding=pads,
        dilation=dil,
        groups=node.attrs.get("group", 1),
        channels=ws[0],
        kernel_size=kernel,
    )
    if b is not None:
        y = im.emit1("nn.bias_add", [y, b], axis=1)
    return [y]


@converter("ConvTranspose")
def _conv_transpose(im, node):
    """2-D and 3-D spatial inputs: ``nn.conv2d_transpose`` / ``nn.conv3d_transpose``; 1-D
    spatial inputs as the 2-D import with a height of 1."""
    x = node.inputs[0]
    if im.rank(x) != 3:
        return _conv_transpose_nd(im, node)
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
    sub = Node(node.op_type, node.name, ins, a, node.num_outputs, node.opset)
    (y,) = _conv_transpose_nd(im, sub)
    ys = im.shape_of(y)
    return [im.reshape(y, [ys[0], ys[1], ys[3]])]


def _conv_transpose_nd(im, node):
    x, w, b = node.inputs[0], node.inputs[1], node.input(2)
    n = im.rank_in(node, x, (4, 5)) - 2
    ws = im.shape_of(w)
    xs = im.shape_of(x)
    kernel = list(node.attrs.get("kernel_shape", ws[2:]))
    strides = list(node.attrs.get("strides", [1] * n))
    dil = list(node.attrs.get("dilations", [1] * n))
    out_pad = list(node.attrs.get("output_padding", [0] * n))
    group = node.attrs.get("group", 1)
    auto = node.attrs.get("auto_pad", "NOTSET")
    grow: list[list[int]] = []
    if "output_shape" in node.attrs or auto in ("SAME_UPPER", "SAME_LOWER"):
        if "output_shape" in node.attrs:
            target = list(node.attrs["output_shape"])[-n:]
        else:
            target = [n * s for n, s in zip(xs[2:], strides)]
        before, after = [], []
        for size, k, s, d, op, t in zip(xs[2:], kernel, strides, dil, out_pad, target):
            if size is None:
                raise node.fail("output_shape / auto_pad SAME need static spatial dims")
            total = s * (size - 1) + op + (k - 1) * d + 1 - t
            # negative total padding (output_shape beyond the full output): split the same
            # way, and the negative parts become zero padding of the result (bias only there)
            # the ONNX spec (and onnxruntime): an odd pixel goes at the end only for SAME_UPPER
            if auto == "SAME_UPPER":
                before.append(total // 2)
                after.append(total - total // 2)
            else:
                before.append(total - total // 2)
                after.append(total // 2)
        pads = before + after
        grow = [[0, 0], [0, 0]] + [[max(0, -b0), max(0, -a0)] for b0, a0 in zip(before, after)]
        pads = [max(0, p) for p in pads]
    elif auto == "VALID":
        pads = [0] * (2 * n)
    else:
        pads = list(node.attrs.get("pads", [0] * (2 * n)))
    y = im.emit1(
        f"nn.conv{n}d_transpose",
        [x, w],
        strides=strides,
        padding=pads,
        dilation=dil,
        output_padding=out_pad,
        groups=group,
        # (as Relay's frontend: the bias add's checker reads it, and a decoder's bias then
        # is the deconvolution's post-op)
        channels=None if ws[1] is None else ws[1] * group,
        kernel_size=kernel,
    )
    if any(map(any, grow)):
        y = im.emit1("nn.pad", [y, im.scalar(0.0, y)], pad_width=grow)
    if b is not None:
        y = im.emit1("nn.bias_add", [y, b], axis=1)
    return [y]


@converter("DeformConv")
def _deform_conv(im, node):
    x, w, offset = node.inputs[:3]
    bias = node.inputs[3] if len(node.inputs) > 3 and node.input(3) else None
    if len(node.inputs) > 4 and node.input(4):
        raise node.fail("mask is not supported (Relay's nn.deformable_conv2d has none)")
    im.rank_in(node, x, (4,))
    xs, ws, os_ = (im.static_shape(v, node) for v in (x, w, offset))
    kernel = [int(k) for k in node.attrs.get("kernel_shape", ws[2:])]
    strides = [int(v) for v in node.attrs.get("strides", [1, 1])]
    dilations = [int(v) for v in node.attrs.get("dilations", [1, 1])]
    pads = [int(v) for v in node.attrs.get("pads", [0, 0, 0, 0])]
    groups, dgroups = int(node.attrs.get("group", 1)), int(node.attrs.get("offset_group", 1))
    # the frame one larger on each side: the padded input, offsets + 1, a larger output
    big = im.emit1("nn.pad", [x, im.scalar(0.0, x)], pad_width=[[0, 0], [0, 0], [1, 1], [1, 1]])
    oh = (xs[2] + 2 + pads[0] + pads[2] - dilations[0] * (kernel[0] - 1) - 1) // strides[0] + 1
    ow = (xs[3] + 2 + pads[1] + pads[3] - dilations[1] * (kernel[1] - 1) - 1) // strides[1] + 1
    shifted = im.emit1("add", [offset, im.scalar(1.0, offset)])
    grow = [[0, 0], [0, 0], [0, oh - os_[2]], [0, ow - os_[3]]]
    shifted = im.emit1("nn.pad", [shifted, im.scalar(0.0, offset)], pad_width=grow)
    y = im.emit1(
        "nn.deformable_conv2d", [big, shifted, w], strides=strides, padding=pads, dilation=dilations,
        deformable_groups=dgroups, groups=groups, channels=ws[0], kernel_size=kernel,
    )  # fmt: skip
    y = im.emit1("strided_slice", [y], begin=[0, 0], end=[os_[2], os_[3]], axes=[2, 3])
    if bias is not None:
        y = im.emit1("add", [y, im.reshape(bias, [ws[0], 1, 1])])
    return [y]


@converter("Col2Im")
def _col2im(im, node):
    """2-D and 3-D images: ``nn.conv{2,3}d_transpose`` of the columns with a one-hot kernel."""
    x = node.inputs[0]
    image = im.static_ints(node, 1, "image_shape")
    block = im.static_ints(node, 2, "block_shape")
    nd = len(image)
    if nd not in (2, 3) or len(block) != nd:
        raise node.fail(f"2-D and 3-D images are supported (image_shape {image}, block_shape {block})")
    n, ck, length = im.static_shape(x, node)
    k = math.prod(block)
    if ck % k:
        raise node.fail(f"input dimension 1 ({ck}) is not a multiple of the block size {k}")
    c = ck // k
    dil = list(node.attrs.get("dilations", [1] * nd))
    pads = list(node.attrs.get("pads", [0] * (2 * nd)))
    strides = list(node.attrs.get("strides", [1] * nd))
    blocks = [
        (image[i] + pads[i] + pads[i + nd] - dil[i] * (block[i] - 1) - 1) // strides[i] + 1 for i in range(nd)
    ]
    if math.prod(blocks) != length or min(blocks) < 1:
        raise node.fail(f"{length} blocks do not tile an image {image} with these blocks, pads and strides")
    # one output channel per group of k columns; kernel tap t (row-major) takes column t
    w = np.zeros((ck, 1, *block))
    for t, tap in enumerate(itertools.product(*(range(b) for b in block))):
        w[(np.arange(c) * k + t, 0, *tap)] = 1.0
    cols = im.reshape(x, [n, ck, *blocks])
    full = [(blocks[i] - 1) * strides[i] + dil[i] * (block[i] - 1) + 1 - pads[i] - pads[i + nd] for i in range(nd)]
    y = im.emit1(
        f"nn.conv{nd}d_transpose",
        [cols, im.const(w, im.dtype_of(x))],
        strides=strides,
        padding=pads,
        dilation=dil,
        output_padding=[image[i] - full[i] for i in range(nd)],
        groups=c,
        kernel_size=block,
        channels=c,
    )
    return [y]


def _qconv(im: Importer, node: Node, x, w, x_zp, w_zp, x_s, w_s) -> Value:
    ws = im.shape_of(w)
    kernel = list(node.attrs.get("kernel_shape", ws[2:]))
    strides = list(node.attrs.get("strides", [1, 1]))
    dil = list(node.attrs.get("dilations", [1, 1]))
    pads = _spatial_pads(node, im.shape_of(x)[2:], kernel, strides, dil)
    return q.qnn_emit(
        im, "qnn.conv2d", [x, w, im.const(q.zero_point_of(x_zp)), im.const(q.zero_point_of(w_zp)), im.const(q.scale_of(x_s)), im.const(q.scale_of(w_s))],
        strides=strides, padding=pads, dilation=dil, groups=node.attrs.get("group", 1), channels=ws[0],
        kernel_size=kernel,
    )  # fmt: skip


@converter("QLinearConv")
def _qlinear_conv(im, node):
    x, w = node.inputs[0], node.inputs[3]
    x_s, x_zp = q.scale_and_zero_point(im, node, 1, "x")
    w_s, w_zp = q.scale_and_zero_point(im, node, 4, "w")
    y_s, y_zp = q.scale_and_zero_point(im, node, 6, "y")
    if im.rank(x) != 4:
        raise node.fail(f"only 2-D (NCHW) inputs are supported, got rank {im.rank(x)}")
    acc = _qconv(im, node, x, w, x_zp, w_zp, x_s, w_s)
    b = node.input(8)
    if b is not None:
        acc = im.emit1("nn.bias_add", [acc, im.cast_like(b, "int32")], axis=1)
    in_scale = np.asarray(x_s, np.float32).reshape(()) * q.scale_of(w_s)
    return [q.requantize(im, acc, in_scale, y_s, y_zp, q.zero_point_dtype(node, 7, im))]


@converter("ConvInteger")
def _conv_integer(im, node):
    x, w = node.inputs[0], node.inputs[1]
    x_zp = q.quant_param(im, node, 2, "x_zero_point", "zp")
    w_zp = q.quant_param(im, node, 3, "w_zero_point", "zp")
    if im.rank(x) != 4:
        raise node.fail(f"only 2-D (NCHW) inputs are supported, got rank {im.rank(x)}")
    return [_qconv(im, node, x, w, x_zp, w_zp, np.float32(1.0), np.float32(1.0))]


# ---- pools ---------------------------------------------------------------------------------------


@converter("MaxPool")
def _max_pool(im, node):
    x = node.inputs[0]
    rank = im.rank_in(node, x, (3, 4, 5))
    if rank == 3:
        return _pool1d(im, node, lambda im, n: _pool(im, n, "nn.max_pool2d"))
    if rank == 5:
        return _pool(im, node, "nn.max_pool3d")
    if node.num_outputs > 1:
        return _max_pool_indices(im, node)
    return _pool(im, node, "nn.max_pool2d")


@converter("AveragePool")
def _avg_pool(im, node):
    x = node.inputs[0]
    rank = im.rank_in(node, x, (3, 4, 5))
    include = bool(node.attrs.get("count_include_pad", 0))
    if rank == 3:
        return _pool1d(im, node, lambda im, n: _pool(im, n, "nn.avg_pool2d", count_include_pad=include))
    if rank == 5:
        return _pool(im, node, "nn.avg_pool3d", count_include_pad=include)
    return _pool(im, node, "nn.avg_pool2d", count_include_pad=include)


@converter("LpPool")
def _lp_pool(im, node):
    rank = im.rank(node.inputs[0])
    if rank == 3:
        return _pool1d(im, node, _lp_pool_2d)
    if rank == 5:
        return _lp_pool_3d(im, node)
    return _lp_pool_2d(im, node)


@converter("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(im, node):
    avg = node.op_type == "GlobalAveragePool"
    x = node.inputs[0]
    if im.rank_in(node, x, (4, 5)) == 4:
        return im.emit("nn.global_avg_pool2d" if avg else "nn.global_max_pool2d", [x])
    name = "nn.adaptive_avg_pool3d" if avg else "nn.adaptive_max_pool3d"
    return im.emit(name, [x], output_size=[1, 1, 1])


def _pool(im: Importer, node: Node, relay_name: str, **extra) -> list[Value]:
    """``relay_name``, a 2-D or 3-D pool as ``x`` is 4-D or 5-D, with ONNX's attributes."""
    x = node.inputs[0]
    nd = im.rank(x) - 2
    if node.num_outputs > 1:
        raise node.fail("the Indices output is not supported")
    if node.attrs.get("storage_order", 0):
        raise node.fail("storage_order = 1 is not supported")
    kernel = list(node.attrs["kernel_shape"])
    strides = list(node.attrs.get("strides", [1] * nd))
    dil = list(node.attrs.get("dilations", [1] * nd))
    pads = _spatial_pads(node, im.shape_of(x)[2:], kernel, strides, dil)
    ceil = bool(node.attrs.get("ceil_mode", 0))
    attrs = dict(pool_size=kernel, strides=strides, padding=pads, ceil_mode=ceil, **extra)
    if dil != [1] * nd:
        attrs["dilation"] = dil
    y = im.emit1(relay_name, [x], **attrs)
    if ceil:
        # ONNX drops a last window that would start inside the end padding; Relay keeps it
        xs, ys = im.shape_of(x), im.shape_of(y)
        want = list(ys[2:])
        for i in range(nd):
            if xs[2 + i] is not None and (want[i] - 1) * strides[i] >= xs[2 + i] + pads[i]:
                want[i] -= 1
        if want != list(ys[2:]):
            y = im.emit1("strided_slice", [y], begin=[0] * nd, end=want, axes=list(range(2, 2 + nd)))
    return [y]


def _pool1d(im: Importer, node: Node, pool2d: Callable[[Importer, Node], list[Value]]) -> list[Value]:
    """A pool of a 3-D input: ``pool2d`` over (N, C, 1, W), the attributes widened to 2-D."""
    x = node.inputs[0]
    n, c, w = im.shape_of(x)
    a = dict(node.attrs)
    a["kernel_shape"] = [1, *a["kernel_shape"]]
    for key in ("strides", "dilations"):
        if key in a:
            a[key] = [1, *a[key]]
    if "pads" in a:
        a["pads"] = [0, a["pads"][0], 0, a["pads"][1]]
    x4 = im.emit1("expand_dims", [x], axis=2, num_newaxis=1)
    outs = pool2d(im, replace(node, inputs=[x4], attrs=a))
    return [im.emit1("squeeze", [y], axis=[2]) for y in outs]


def _max_pool_indices(im, node):
    """The Indices output (2-D): the windows gathered by a constant index table."""
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


def _lp_pool_2d(im: Importer, node: Node) -> list[Value]:
    """(sum over the window of |x|^p)^(1/p): an average pool of |x|^p counting the padding,
    times the window size (as Relay's frontend)."""

    x = node.inputs[0]
    if im.rank(x) != 4:
        raise node.fail(f"only 2-D (NCHW) inputs are supported, got rank {im.rank(x)}")
    p = float(node.attrs.get("p", 2))
    powed = im.apply("power", im.apply("abs", x), im.scalar(p, x))
    pooled = _pool(im, replace(node, inputs=[powed]), "nn.avg_pool2d", count_include_pad=True)[0]
    window = float(math.prod(node.attrs["kernel_shape"]))
    total = im.apply("multiply", pooled, im.scalar(window, x))
    return [im.apply("power", total, im.scalar(1.0 / p, x))]


def _lp_pool_3d(im, node):
    x = node.inputs[0]
    kernel = [int(k) for k in node.attrs["kernel_shape"]]
    if len(kernel) != 3:
        raise node.fail(f"kernel_shape {kernel} must have 3 values for a 3-D input")
    if node.attrs.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        raise node.fail(f"auto_pad {node.attrs['auto_pad']!r} is not supported for 3-D inputs")
    pads = [int(v) for v in node.attrs.get("pads", [0] * 6)]
    if node.attrs.get("auto_pad") == "VALID":
        pads = [0] * 6
    p = float(node.attrs.get("p", 2))
    powed = im.emit1("power", [im.emit1("abs", [x]), im.scalar(p, x)])
    pooled = im.emit1(
        "nn.avg_pool3d",
        [powed],
        pool_size=kernel,
        strides=[int(v) for v in node.attrs.get("strides", [1, 1, 1])],
        dilation=[int(v) for v in node.attrs.get("dilations", [1, 1, 1])],
        padding=pads,
        ceil_mode=bool(node.attrs.get("ceil_mode", 0)),
        count_include_pad=True,
    )
    total = im.emit1("multiply", [pooled, im.scalar(float(np.prod(kernel)), x)])
    return [im.emit1("power", [total, im.scalar(1.0 / p, x)])]


@converter("MaxRoiPool")
def _max_roi_pool(im, node):
    """``vision.roi_pool`` (rows ``[batch_index, x1, y1, x2, y2]`` as ONNX gives them), as
    Relay's frontend."""
    x, rois = node.inputs[:2]
    pooled = [int(v) for v in node.attrs["pooled_shape"]]
    return im.emit(
        "vision.roi_pool", [x, rois], pooled_size=pooled, spatial_scale=float(node.attrs.get("spatial_scale", 1.0))
    )


@converter("MaxUnpool")
def _max_unpool(im, node):
    """Zeros with ``X`` written at the flat indices ``I`` (MaxPool's Indices): a
    ``scatter_elements`` on the flattened output, as Relay's frontend scattered. The indices
    address the shape MaxPool's input had (inferred from kernel, strides and pads); a larger
    ``output_shape`` pads that result with zeros at the end of each axis, as ONNX's reference
    does."""
    x, idx = node.inputs[:2]
    xs = im.static_shape(x, node)
    kernel = list(node.attrs["kernel_shape"])
    n = len(kernel)
    strides = list(node.attrs.get("strides", [1] * n))
    pads = list(node.attrs.get("pads", [0] * (2 * n)))
    inferred = list(xs[:2]) + [
        (xs[2 + i] - 1) * strides[i] - pads[i] - pads[n + i] + kernel[i] for i in range(n)
    ]
    shape_v = im.static(node.input(2), node, "output_shape")
    out = inferred if shape_v is None else [int(v) for v in shape_v.reshape(-1)]
    if len(out) != len(xs) or out[:2] != list(xs[:2]):
        raise node.fail(f"output_shape {out} must keep the batch and channels of {list(xs)}")
    if any(o < i for o, i in zip(out, inferred)):
        raise node.fail(f"output_shape {out} is smaller than the unpooled shape {inferred}")
    total = int(np.prod(inferred))
    flat = im.const(np.zeros(total), im.dtype_of(x))
    size = int(np.prod(xs))
    scattered = im.emit1(
        "scatter_elements", [flat, im.reshape(idx, [size]), im.reshape(x, [size])], axis=0
    )
    y = im.reshape(scattered, inferred)
    if out != inferred:
        grow = [[0, o - i] for o, i in zip(out, inferred)]
        y = im.emit1("nn.pad", [y, im.scalar(0.0, y)], pad_width=grow)
    return [y]


# ---- normalisations ------------------------------------------------------------------------------


@converter("BatchNormalization")
def _batch_norm(im, node):
    if node.attrs.get("training_mode", 0):
        return _batch_norm_training(im, node)
    # the running mean and variance outputs are training mode's (convert() refuses them here)
    x, g, b, m, v = node.inputs[:5]
    outs = im.emit("nn.batch_norm", [x, g, b, m, v], axis=1, epsilon=float(node.attrs.get("epsilon", 1e-5)))
    return [outs[0]]


def _batch_norm_training(im, node):
    """``training_mode = 1``: normalise with the batch's statistics and return the updated
    running mean and variance (``running * momentum + batch * (1 - momentum)``)."""
    x, g, b, mean, var = node.inputs[:5]
    rank = im.rank(x)
    axes = [a for a in range(rank) if a != 1]
    eps = float(node.attrs.get("epsilon", 1e-5))
    momentum = float(node.attrs.get("momentum", 0.9))
    bshape = [-1 if a == 1 else 1 for a in range(rank)]
    channels = im.static_shape(x, node)[1]
    bshape = [channels if d == -1 else d for d in bshape]
    m = im.emit1("mean", [x], axis=axes, keepdims=True)
    d = im.apply("subtract", x, m)
    v = im.emit1("mean", [im.apply("multiply", d, d)], axis=axes, keepdims=True)
    inv = im.apply("rsqrt", im.apply("add", v, im.scalar(eps, v)))
    y = im.apply("add", im.apply("multiply", im.apply("multiply", d, inv), im.reshape(g, bshape)), im.reshape(b, bshape))
    m1, v1 = im.reshape(m, [channels]), im.reshape(v, [channels])

    def running(old: Value, batch: Value) -> Value:
        return im.apply("add", im.apply("multiply", old, im.scalar(momentum, old)), im.apply("multiply", batch, im.scalar(1.0 - momentum, batch)))

    return [y, running(mean, m1), running(var, v1)][: node.num_outputs]


@converter("LayerNormalization")
def _layer_norm(im, node):
    if node.num_outputs > 1:
        return _layer_norm_stats(im, node)
    x, scale, bias = node.inputs[0], node.inputs[1], node.input(2)
    rank = im.rank(x)
    axis = node.attrs.get("axis", -1)
    axis = axis + rank if axis < 0 else axis
    eps = float(node.attrs.get("epsilon", 1e-5))
    xs = im.shape_of(x)
    if axis == rank - 1 and im.shape_of(scale) == (xs[-1],) and (bias is None or im.shape_of(bias) == (xs[-1],)):
        center = bias is not None
        if bias is None:
            bias = im.const(np.zeros(xs[-1], numpy_dtype(im.dtype_of(x))))
        return im.emit("nn.layer_norm", [x, scale, bias], axis=-1, epsilon=eps, center=center)
    # normalising several trailing axes: mean / variance arithmetic
    axes = list(range(axis, rank))
    mean = im.emit1("mean", [x], axis=axes, keepdims=True)
    d = im.emit1("subtract", [x, mean])
    var = im.emit1("mean", [im.emit1("multiply", [d, d])], axis=axes, keepdims=True)
    denom = im.emit1("sqrt", [im.emit1("add", [var, im.scalar(eps, var)])])
    y = im.emit1("multiply", [im.emit1("divide", [d, denom]), scale])
    if bias is not None:
        y = im.emit1("add", [y, bias])
    return [y]


def _layer_norm_stats(im, node):
    """With the optional Mean and InvStdDev outputs (reduced axes kept as 1)."""
    x, scale, bias = node.inputs[0], node.inputs[1], node.input(2)
    rank = im.rank(x)
    axis = int(node.attrs.get("axis", -1))
    axis = axis + rank if axis < 0 else axis
    eps = float(node.attrs.get("epsilon", 1e-5))
    axes = list(range(axis, rank))
    mean = im.emit1("mean", [x], axis=axes, keepdims=True)
    d = im.apply("subtract", x, mean)
    var = im.emit1("mean", [im.apply("multiply", d, d)], axis=axes, keepdims=True)
    inv = im.apply("divide", im.scalar(1.0, var), im.apply("sqrt", im.apply("add", var, im.scalar(eps, var))))
    y = im.apply("multiply", im.apply("multiply", d, inv), scale)
    if bias is not None:
        y = im.apply("add", y, bias)
    return [y, mean, inv][: node.num_outputs]


@converter("GroupNormalization")
def _group_norm(im, node):
    x, scale, bias = node.inputs[:3]
    groups = node.attrs.get("num_groups")
    if groups is None:
        raise node.fail("num_groups is required")
    c = im.shape_of(x)[1]
    if c is None:
        raise node.fail("the channel dimension must be static")
    eps = float(node.attrs.get("epsilon", 1e-5))
    if im.shape_of(scale) == (groups,) and groups != c:
        # opset 18: one scale and bias per group, repeated over the group's channels
        scale = im.emit1("repeat", [scale], repeats=c // groups, axis=0)
        bias = im.emit1("repeat", [bias], repeats=c // groups, axis=0)
    return im.emit("nn.group_norm", [x, scale, bias], num_groups=groups, axis=1, epsilon=eps)


@converter("InstanceNormalization")
def _instance_norm(im, node):
    x, scale, bias = node.inputs[:3]
    return im.emit("nn.instance_norm", [x, scale, bias], axis=1, epsilon=float(node.attrs.get("epsilon", 1e-5)))


@converter("LpNormalization")
def _lp_norm(im, node):
    x = node.inputs[0]
    axis = node.attrs.get("axis", -1)
    p = node.attrs.get("p", 2)
    if p == 2:
        y = im.emit1("nn.l2_normalize", [x], eps=0.0, axis=[axis])
        norm = im.emit1("sum", [im.emit1("multiply", [x, x])], axis=[axis], keepdims=True)
    elif p == 1:
        norm = im.emit1("sum", [im.emit1("abs", [x])], axis=[axis], keepdims=True)
        y = im.emit1("divide", [x, norm])
    else:
        raise node.fail(f"p must be 1 or 2, got {p}")
    # ONNX gives 0 where the norm is 0 (Relay's l2_normalize with eps 0 gives 0/0 = NaN)
    zero = im.emit1("equal", [norm, im.scalar(0.0, norm)])
    return im.emit("where", [zero, im.scalar(0.0, x), y])


@converter("RMSNormalization")
def _rms_norm(im, node):
    x, scale = node.inputs[:2]
    rank = im.rank(x)
    axis = int(node.attrs.get("axis", -1))
    axis = axis + rank if axis < 0 else axis
    eps = float(node.attrs.get("epsilon", 1e-5))
    axes = list(range(axis, rank))
    ms = im.emit1("mean", [im.apply("multiply", x, x)], axis=axes, keepdims=True)
    inv = im.apply("rsqrt", im.apply("add", ms, im.scalar(eps, ms)))
    return [im.apply("multiply", im.apply("multiply", x, inv), scale)]


@converter("LRN")
def _lrn(im, node):
    """x / (bias + alpha / size * sum of x^2 over ``size`` neighbouring channels)^beta:
    ``nn.lrn`` as Relay's frontend where the size is odd (the window is centred); an even
    size (ONNX's window has one more channel after than before, TOPI's refuses it) as
    squares summed by an average pool."""
    x = node.inputs[0]
    shape = im.static_shape(x, node)
    if len(shape) != 4:
        raise node.fail(f"only 4-D inputs are supported, got rank {len(shape)}")
    n, c, h, w = shape
    size = int(node.attrs["size"])
    alpha = float(node.attrs.get("alpha", 1e-4))
    beta = float(node.attrs.get("beta", 0.75))
    bias = float(node.attrs.get("bias", 1.0))
    if size % 2 == 1:
        return im.emit("nn.lrn", [x], size=size, axis=1, alpha=alpha, beta=beta, bias=bias)
    sq = im.reshape(im.apply("multiply", x, x), [n, 1, c, h * w])
    lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
    summed = im.emit1(
        "nn.avg_pool2d", [sq], pool_size=[size, 1], strides=[1, 1], padding=[lo, 0, hi, 0], count_include_pad=True
    )
    summed = im.reshape(im.apply("multiply", summed, im.scalar(float(size), x)), [n, c, h, w])
    denom = im.apply("add", im.scalar(bias, x), im.apply("multiply", summed, im.scalar(alpha / size, x)))
    return [im.apply("divide", x, im.apply("power", denom, im.scalar(beta, x)))]


@converter("MeanVarianceNormalization")
def _mvn(im, node):
    x = node.inputs[0]
    axes = [int(a) for a in node.attrs.get("axes", [0, 2, 3])]
    mean = im.emit1("mean", [x], axis=axes, keepdims=True)
    d = im.apply("subtract", x, mean)
    var = im.emit1("mean", [im.apply("multiply", d, d)], axis=axes, keepdims=True)
    return [im.apply("divide", d, im.apply("add", im.apply("sqrt", var), im.scalar(1e-9, x)))]


# ---- dropout, flatten, shrink -------------------------------------------------------------------


@converter("Dropout")
def _dropout(im, node):
    """Inference: the identity (and an all-true mask). Training mode (``training_mode`` true,
    opset 12 on; it and ``ratio`` may be graph inputs): ``mask = U >= ratio`` with ``U``
    uniform in [0, 1) drawn at import (``Importer.random_state``: with the node's ``seed``, the
    mask of ONNX's reference), ``y = mask * x / (1 - ratio)``; a ratio of 0 keeps everything."""
    x = node.inputs[0]
    training, ratio = node.input(2), node.input(1)
    ones = None
    if node.num_outputs > 1:
        ones = im.const(np.ones(im.static_shape(x, node), dtype=np.bool_))
    off = training is None or (training.known and not bool(np.asarray(training.const).reshape(())))
    if off or (ratio is not None and ratio.known and float(np.asarray(ratio.const).reshape(())) == 0.0):
        return [x] if ones is None else [x, ones]
    shape = im.static_shape(x, node)
    r = im.reshape(im.cast_like(ratio if ratio is not None else im.const(np.float32(0.5)), "float64"), [])
    if r.known and not 0.0 <= float(r.const) < 1.0:
        raise node.fail(f"ratio must be in [0, 1), got {float(r.const)}")
    u = im.const(im.random_state(node).uniform(0.0, 1.0, shape))  # float64, as ONNX's reference
    mask = im.apply("greater_equal", u, r)
    # (mask * x) * scale, in x's type as the reference
    scale = im.apply("divide", im.scalar(1.0, x), im.apply("subtract", im.scalar(1.0, x), im.reshape(im.cast_like(r, im.dtype_of(x)), [])))
    y = im.apply("multiply", im.apply("multiply", im.cast_like(mask, im.dtype_of(x)), x), scale)
    if not training.known:  # training_mode given at run time
        t = im.reshape(training, [])
        y = im.apply("where", t, y, x)
        mask = im.apply("where", t, mask, ones) if ones is not None else mask
    return [y] if ones is None else [y, mask]


def _tfidf_grams(node: Node) -> list[tuple[int, list[int], int, int]]:
    """The pool's n-grams ONNX counts: ``(n, tokens, output index, pool position)``, for n in
    [min_gram_length, max_gram_length]; a repeated n-gram counts at its last position in the
    pool (as ONNX's reference, whose n-gram table keeps the last)."""
    a = node.attrs
    for name in ("mode", "min_gram_length", "max_gram_length", "max_skip_count", "ngram_counts", "ngram_indexes"):
        if name not in a:
            raise node.fail(f"attribute '{name}' is required")
    if "pool_strings" in a or "pool_int64s" not in a:
        raise node.fail("needs pool_int64s: string n-grams need string tensors, which xrelay does not have")
    pool = [int(v) for v in a["pool_int64s"]]
    starts = [int(v) for v in a["ngram_counts"]]
    index = [int(v) for v in a["ngram_indexes"]]
    lo, hi = int(a["min_gram_length"]), int(a["max_gram_length"])
    if not 1 <= lo <= hi:
        raise node.fail(f"needs 1 <= min_gram_length <= max_gram_length, got {lo} and {hi}")
    if int(a["max_skip_count"]) < 0:
        raise node.fail(f"max_skip_count must not be negative, got {a['max_skip_count']}")
    found: dict[tuple[int, ...], int] = {}
    gram_id = 0
    for n, start in enumerate(starts, 1):
        end = starts[n] if n < len(starts) else len(pool)
        if not 0 <= start <= end <= len(pool):
            raise node.fail(f"ngram_counts {starts} do not fit a pool of {len(pool)} items")
        for k in range((end - start) // n):
            if gram_id >= len(index):
                raise node.fail(f"ngram_indexes has {len(index)} entries, fewer than the pool's n-grams")
            if lo <= n <= hi:
                found[tuple(pool[start + k * n : start + (k + 1) * n])] = (index[gram_id], gram_id)
            gram_id += 1
    if any(i < 0 for i in index):
        raise node.fail(f"ngram_indexes must not be negative, got {index}")
    return [(len(g), list(g), out, gid) for g, (out, gid) in found.items()]


@converter("TfIdfVectorizer")
def _tfidf_vectorizer(im, node):
    """ONNX's counting: an n-gram at skip distance d is the tokens at i, i + d, ..., i + (n-1)d,
    for d = 1 .. max_skip_count + 1; unigrams are counted once (d = 1)."""
    x = node.inputs[0]
    dtype = im.dtype_of(x)
    if dtype not in ("int32", "int64"):
        raise node.fail(f"needs int32 or int64 tokens, got {dtype}")
    shape = im.static_shape(x, node)
    if len(shape) > 2:
        raise node.fail(f"input must be [C] or [B, C], got shape {list(shape)}")
    xb = im.reshape(x, [1, math.prod(shape)] if len(shape) < 2 else list(shape))
    rows, cols = im.shape_of(xb)
    grams = _tfidf_grams(node)
    index = [int(v) for v in node.attrs["ngram_indexes"]]
    size = max(index) + 1 if index else 0
    skips = int(node.attrs["max_skip_count"]) + 1
    info = np.iinfo(numpy_dtype(dtype))
    mode = node.attrs["mode"]
    if mode not in ("TF", "IDF", "TFIDF"):
        raise node.fail(f"mode must be TF, IDF or TFIDF, got {mode!r}")
    weights = node.attrs.get("weights")
    w = None if weights is None or len(weights) == 0 or mode == "TF" else np.asarray(weights, np.float32)
    if w is not None and len(w) < max(g[3] for g in grams) + 1:
        raise node.fail(f"weights has {len(w)} values, fewer than the pool's n-grams")
    y = im.const(np.zeros((rows, size), np.float32))
    for n in sorted({g[0] for g in grams}):
        of_n = [g for g in grams if g[0] == n and all(info.min <= t <= info.max for t in g[1])]
        if not of_n:
            continue
        pool = im.const(np.array([g[1] for g in of_n], dtype=numpy_dtype(dtype)))  # [G, n]
        count = None  # [rows, G]: the n-grams' counts over the skip distances
        for d in [1] if n == 1 else range(1, skips + 1):
            length = cols - (n - 1) * d  # the windows' starts
            if length <= 0:
                break
            taps = [im.emit1("strided_slice", [xb], begin=[k * d], end=[k * d + length], axes=[1]) for k in range(n)]
            windows = im.emit1("stack", [*taps], axis=2)  # [rows, L, n]
            same = im.apply("equal", im.reshape(windows, [rows, length, 1, n]), pool)  # [rows, L, G, n]
            hits = im.emit1("sum", [im.cast_like(same, "int32")], axis=[3])
            full = im.cast_like(im.apply("equal", hits, im.const(np.array(n, np.int32))), "float32")
            c = im.emit1("sum", [full], axis=[1])
            count = c if count is None else im.apply("add", count, c)
        if count is None:
            continue
        if mode == "IDF":  # presence, times the n-gram's weight
            count = im.cast_like(im.apply("greater", count, im.const(np.float32(0))), "float32")
        place = np.zeros((size, len(of_n)), np.float32)  # nn.dense weight [out, G]: where each goes
        place[[g[2] for g in of_n], range(len(of_n))] = 1.0 if w is None else w[[g[3] for g in of_n]]
        y = im.apply("add", y, im.emit1("nn.dense", [count, im.const(place)]))
    return [im.reshape(y, [size]) if len(shape) < 2 else y]


@converter("Flatten")
def _flatten(im, node):
    x = node.inputs[0]
    s = im.shape_of(x)
    axis = node.attrs.get("axis", 1)
    axis = axis + len(s) if axis < 0 else axis
    if axis == 1 and len(s) >= 2:
        return im.emit("nn.batch_flatten", [x])
    s = im.static_shape(x, node)
    return [im.reshape(x, [math.prod(s[:axis]), math.prod(s[axis:])])]


@converter("Shrink")
def _shrink(im, node):
    x = node.inputs[0]
    lambd = float(node.attrs.get("lambd", 0.5))
    bias = float(node.attrs.get("bias", 0.0))
    zero = im.scalar(0, x)
    hi = im.apply("where", im.apply("greater", x, im.scalar(lambd, x)), im.apply("subtract", x, im.scalar(bias, x)), zero)
    lo = im.apply("where", im.apply("less", x, im.scalar(-lambd, x)), im.apply("add", x, im.scalar(bias, x)), hi)
    return [lo]


# ---- attention -------------------------------------------------------------------------------------


def _bmm(im: Importer, a: Value, b: Value, transpose_b: bool) -> Value:
    """4-D ``a @ b`` (``b`` transposed when asked) through 3-D ``nn.batch_matmul``."""
    sa, sb = im.shape_of(a), im.shape_of(b)
    a3 = im.reshape(a, [sa[0] * sa[1], sa[2], sa[3]])
    b3 = im.reshape(b, [sb[0] * sb[1], sb[2], sb[3]])
    y = im.emit1("nn.batch_matmul", [a3, b3], transpose_a=False, transpose_b=transpose_b)
    return im.reshape(y, [sa[0], sa[1], sa[2], sb[2] if transpose_b else sb[3]])


def _to_heads(im: Importer, x: Value, heads: int) -> Value:
    b, s, hidden = im.shape_of(x)
    t = im.reshape(x, [b, s, heads, hidden // heads])
    return im.emit1("transpose", [t], axes=[0, 2, 1, 3])


def _bias_of_mask(im: Importer, mask: Value, dtype: str) -> Value:
    if im.dtype_of(mask) != "bool":
        return mask
    zero, ninf = np.zeros((), numpy_dtype(dtype)), np.array(-np.inf, numpy_dtype(dtype))
    return im.apply("where", mask, im.const(zero), im.const(ninf))


@converter("Attention")
def _attention(im, node):
    """ONNX's Attention: scaled dot-product attention with masks, causal and sliding windows,
    a KV cache (past -> present), grouped heads, softcap and the qk output modes."""
    q, k, v = node.inputs[:3]
    mask, past_k, past_v = node.input(3), node.input(4), node.input(5)
    nonpad = node.input(6)
    a = node.attrs
    dtype = im.dtype_of(q)
    rank = im.rank(q)
    if rank == 3:
        q = _to_heads(im, q, int(a["q_num_heads"]))
        k = _to_heads(im, k, int(a["kv_num_heads"]))
        v = _to_heads(im, v, int(a["kv_num_heads"]))
    batch, q_heads, q_len, head = im.static_shape(q, node)
    scale = a.get("scale")
    scale = 1.0 / math.sqrt(head) if scale is None else float(scale)
    root = math.sqrt(scale)  # both sides scaled by sqrt(scale), as ONNX's reference
    if past_k is not None:
        k = im.emit1("concatenate", [past_k, k], axis=2)
        v = im.emit1("concatenate", [past_v, v], axis=2)
    present_k, present_v = k, v
    past = im.static_shape(past_k, node)[2] if past_k is not None else 0
    kv_len = im.static_shape(k, node)[2]
    kv_heads = im.shape_of(k)[1]
    np_dt = numpy_dtype(dtype)
    # the additive bias: a run-time mask plus static causal / window terms
    bias = None
    if mask is not None:
        ms = im.static_shape(mask, node)
        if ms[-1] < kv_len:
            fill = np.zeros((*ms[:-1], kv_len - ms[-1]), dtype=numpy_dtype(im.dtype_of(mask)))
            fill[...] = False if im.dtype_of(mask) == "bool" else -np.inf
            mask = im.emit1("concatenate", [mask, im.const(fill)], axis=len(ms) - 1)
        bias = _bias_of_mask(im, mask, dtype)
    i = np.arange(q_len).reshape(-1, 1) + past
    j = np.arange(kv_len).reshape(1, -1)
    allowed = np.ones((q_len, kv_len), dtype=bool)
    if a.get("is_causal", 0):
        allowed &= j <= i
    left, right = int(a.get("left_window_size", -1)), int(a.get("right_window_size", -1))
    if left >= 0:
        allowed &= i - j <= left
    if right >= 0:
        allowed &= j - i <= right
    if nonpad is not None and (past_k is not None or not allowed.all()):
        # the masks combine per batch row here: ONNX's own function body for this node
        return im.expand_function(node.proto, node)
    if not allowed.all():
        static = im.const(np.where(allowed, 0, -np.inf).astype(np_dt))
        bias = static if bias is None else im.apply("add", bias, static)
    if nonpad is not None:
        lens = im.reshape(im.cast_like(nonpad, "int64"), [batch, 1, 1, 1])
        keep = im.apply("less", im.const(np.arange(kv_len, dtype=np.int64).reshape(1, 1, 1, kv_len)), lens)
        pad_bias = _bias_of_mask(im, keep, dtype)
        bias = pad_bias if bias is None else im.apply("add", bias, pad_bias)
    if kv_heads != q_heads:
        k = im.emit1("repeat", [k], repeats=q_heads // kv_heads, axis=1)
        v = im.emit1("repeat", [v], repeats=q_heads // kv_heads, axis=1)
    qs = im.apply("multiply", q, im.const(np.array(root, np_dt)))
    ks = im.apply("multiply", k, im.const(np.array(root, np_dt)))
    qk = _bmm(im, qs, ks, transpose_b=True)
    softcap = float(a.get("softcap", 0.0))
    if softcap > 0:
        c = im.const(np.array(softcap, np_dt))
        qk = im.apply("multiply", im.apply("tanh", im.apply("divide", qk, c)), c)
    with_bias = qk if bias is None else im.apply("add", qk, bias)
    mode = int(a.get("qk_matmul_output_mode", 0))
    qk_out = with_bias if mode == 2 else qk
    sm_in = with_bias
    precision = a.get("softmax_precision")
    if precision is not None:
            sm_in = im.cast_like(sm_in, relay_dtype(precision, f"Attention node '{node.name}'"))
    sm = im.emit1("nn.softmax", [sm_in], axis=-1)
    if bias is not None:  # rows masked everywhere give 0, not NaN
        dead = im.apply("equal", im.emit1("max", [bias], axis=[-1], keepdims=True), im.const(np.array(-np.inf, np_dt)))
        sm = im.apply("where", dead, im.const(np.zeros((), numpy_dtype(im.dtype_of(sm)))), sm)
    sm = im.cast_like(sm, dtype)
    if mode == 3:
        qk_out = sm
    y = _bmm(im, sm, v, transpose_b=False)
    if rank == 3:
        y = im.emit1("transpose", [y], axes=[0, 2, 1, 3])
        ys = im.shape_of(y)
        y = im.reshape(y, [ys[0], ys[1], ys[2] * ys[3]])
    return [y, present_k, present_v, im.cast_like(qk_out, dtype)][: node.num_outputs]


@converter("RotaryEmbedding")
def _rotary_embedding(im, node):
    x, cos, sin = node.inputs[:3]
    pos = node.input(3)
    shape = im.static_shape(x, node)
    if len(shape) == 4:  # (batch, heads, seq, head_size) -> (batch, seq, heads, head_size)
        x = im.emit1("transpose", [x], axes=[0, 2, 1, 3])
    elif len(shape) == 3:  # (batch, seq, hidden) -> (batch, seq, heads, head_size)
        heads = int(node.attrs.get("num_heads", 0))
        if heads <= 0 or shape[2] % heads:
            raise node.fail(f"a 3-D input needs num_heads dividing its hidden size {shape[2]}, got {heads}")
        x = im.reshape(x, [shape[0], shape[1], heads, shape[2] // heads])
    else:
        raise node.fail(f"the input must be 3-D or 4-D, got {list(shape)}")
    head = im.shape_of(x)[3]
    rot = int(node.attrs.get("rotary_embedding_dim", 0)) or head
    if rot % 2 or rot > head:
        raise node.fail(f"rotary_embedding_dim {rot} must be even and at most the head size {head}")
    if pos is not None:
        cos = im.emit1("take", [cos, pos], axis=0)
        sin = im.emit1("take", [sin, pos], axis=0)
    for c in (cos, sin):
        if im.shape_of(c)[-1] != rot // 2:
            raise node.fail(f"the caches' last axis must be rotary_embedding_dim / 2 = {rot // 2}")
    cos = im.emit1("expand_dims", [cos], axis=2)
    sin = im.emit1("expand_dims", [sin], axis=2)
    x_rot = x if rot == head else im.last_axis_slice(x, 0, rot)
    interleaved = bool(node.attrs.get("interleaved", 0))
    if interleaved:
        x1, x2 = im.last_axis_slice(x_rot, 0, rot, 2), im.last_axis_slice(x_rot, 1, rot, 2)
    else:
        x1, x2 = im.split(x_rot, 2, 3)
    real = im.emit1("subtract", [im.emit1("multiply", [cos, x1]), im.emit1("multiply", [sin, x2])])
    imag = im.emit1("add", [im.emit1("multiply", [sin, x1]), im.emit1("multiply", [cos, x2])])
    if interleaved:
        rotated = im.reshape(im.emit1("stack", [real, imag], axis=4), im.shape_of(x_rot))
    else:
        rotated = im.emit1("concatenate", [real, imag], axis=3)
    if rot != head:
        rotated = im.emit1("concatenate", [rotated, im.last_axis_slice(x, rot, head)], axis=3)
    if len(shape) == 4:
        return [im.emit1("transpose", [rotated], axes=[0, 2, 1, 3])]
    return [im.reshape(rotated, shape)]
