"""ONNX's ``onnx/defs/tensor`` operators: shapes, layout, casts, gathers and scatters, padding,
resizing, and the operators whose result shape depends on values.

As Relay's ONNX frontend (TVM v0.19) maps them where Relay had the op, else as compositions:

* ``Reshape``/``Squeeze``/``Expand``/``Slice``/``Pad``/``ConstantOfShape`` with shapes given at
  run time: Relay's ``dyn.*`` ops; otherwise the static ops with the values folded at import.
* ``Cast`` (and ``CastLike``): ``cast``, with ONNX's saturating float8 casts and its cast to
  float8_e8m0fnu (``compose.onnx_cast``).
* ``Resize`` (opset 10+) on 4-D inputs whose N and C are not resized: ``image.resize2d`` with
  the output size from ``sizes`` or ``floor(in * scales)`` (constants), ``roi`` for
  ``tf_crop_and_resize``; modes nearest/linear/cubic, ``nearest_mode`` as the rounding method.
  Where resize2d cannot give ONNX's numbers (a scale that is not ``out / in`` exactly,
  ``antialias``, the rounding TOPI ignores, other ranks or resized N/C) the import applies
  ONNX's own per-axis weights instead (``resize_by_weights``: ``take`` of the selected indices
  for nearest, a matrix product per axis otherwise). ``axes`` and ``keep_aspect_ratio_policy``
  (opset 18) are widened to every axis first. ``Upsample`` (opset 7/9): ``nn.upsampling``.
* ``GatherND``/``ScatterND``: ``gather_nd``/``scatter_nd`` after moving the index tuples to the
  first axis; ``ScatterElements``/``Scatter``: ``scatter_elements``; ``GridSample``:
  ``image.grid_sample`` with the grid's coordinates moved to axis 1; ``OneHot``: ``one_hot``
  after ONNX's negative indices are wrapped (depth known at import).
* ``NonZero``: ``transpose(cast(argwhere(x), int64))``; ``Compress``: ``take`` of the
  ``argwhere`` of the condition; ``Unique``: ``unique`` on the flattened input, its padded
  results cut to ``num_unique`` (ONNX's ``axis`` is evaluated at import). These fold when their
  inputs are known; otherwise their results have dynamic dimensions, which ``xrelay.build``
  needs bound (the ONNX backend's ``"built"`` mode imports again with them bound).
* ``CenterCropPad``: ``strided_slice`` and ``nn.pad`` per axis, the odd pixel at the end as
  ONNX; ``AffineGrid``: ``einsum`` of ``theta`` with the constant base grid;
  ``TensorScatter``: ``scatter_elements`` at ``write_indices[batch] + position`` along the axis.

Shapes, sizes and axes that have no dynamic form in Relay must be known at import (else
``OnnxRunTimeValueError``, which the ONNX backend answers by binding them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from xrelay.dialects.relay import numpy_dtype
from xrelay.frontends.onnx.compose import onnx_cast
from xrelay.frontends.onnx.importer import (
    Importer,
    Node,
    OnnxRunTimeValueError,
    Value,
    relay_dtype,
)
from xrelay.frontends.onnx.registry import converter


@converter("Identity", structured=True)
def _identity(im: Importer, node: Node) -> list[Any]:
    return [node.inputs[0]]


@converter("Where")
def _where(im, node):
    return im.emit("where", node.inputs[:3])


@converter("Cast")
def _cast(im, node):
    dtype = relay_dtype(node.attrs["to"], f"Cast node '{node.name}'")
    return [onnx_cast(im, node, node.inputs[0], dtype)]


# ---- shapes ---------------------------------------------------------------------------------


@converter("Shape")
def _shape(im, node):
    x = node.inputs[0]
    s = im.shape_of(x)
    start = node.attrs.get("start", 0)
    end = node.attrs.get("end", None)
    sel = list(s)[slice(start, end)]
    if all(d is not None for d in sel):
        return [im.const(np.array(sel, dtype=np.int64))]
    out = im.emit1("shape_of", [x], dtype="int64")
    if (start, end) != (0, None):
        r = len(s)
        b = max(0, min(r, start + r if start < 0 else start))
        e = r if end is None else max(0, min(r, end + r if end < 0 else end))
        out = im.emit1("strided_slice", [out], begin=[b], end=[e], axes=[0])
    return [out]


def _reshape_target(in_shape, shape: Sequence[int], allowzero: bool, node: Node) -> list[int | None]:
    out: list[int | None] = []
    infer = None
    for i, d in enumerate(shape):
        d = int(d)
        if d == 0 and not allowzero:
            if i >= len(in_shape):
                raise node.fail(f"shape {list(shape)}: 0 copies dimension {i} beyond rank {len(in_shape)}")
            out.append(in_shape[i])
        elif d == -1:
            if infer is not None:
                raise node.fail(f"shape {np.asarray(shape).tolist()} has more than one -1")
            infer = i
            out.append(-1)
        elif d < -1:
            raise node.fail(f"shape {list(shape)} has invalid value {d}")
        else:
            out.append(d)
    if infer is not None:
        # dims copied by 0 cancel out, so a dynamic batch copied through still lets -1 resolve
        copied = {i for i, d in enumerate(shape) if int(d) == 0 and not allowzero}
        in_rest = [d for i, d in enumerate(in_shape) if i not in copied]
        rest = [d for k, d in enumerate(out) if k != infer and k not in copied]
        if any(d is None for d in in_rest) or any(d is None for d in rest):
            out[infer] = None
        else:
            total, known = math.prod(in_rest), math.prod(rest)
            if known == 0 or total % known:
                raise node.fail(f"cannot reshape {list(in_shape)} to {list(shape)}")
            out[infer] = total // known
    return out


@converter("Reshape")
def _reshape(im, node):
    x = node.inputs[0]
    allowzero = bool(node.attrs.get("allowzero", 0))
    if node.opset < 5:
        shape = node.attrs["shape"]
    elif not node.inputs[1].known:  # Relay's dyn.reshape: ONNX's 0 and -1 mean the same there
        return im.emit("dyn.reshape", [x, im.int64(node.inputs[1])], allowzero=allowzero)
    else:
        shape = im.static(node.inputs[1], node, "shape")
    target = _reshape_target(im.shape_of(x), shape, allowzero, node)
    if allowzero and 0 in target:  # a real 0-sized dimension: Relay's 0 would copy instead
        return im.emit("reshape", [x], newshape=target, allowzero=True)
    if all(d is not None for d in target):
        return [im.reshape(x, target)]
    copied = [not allowzero and int(d) == 0 for d in shape]
    if all(d is not None or c for d, c in zip(target, copied)):
        # only copied dims are dynamic: 0 for them (Relay's 0 copies too), sizes elsewhere
        return im.emit("reshape", [x], newshape=[0 if d is None else d for d in target])
    # otherwise hand Relay ONNX's own special values (same meaning for 0 and -1)
    return im.emit("reshape", [x], newshape=[int(d) for d in shape], allowzero=allowzero)


@converter("Transpose")
def _transpose(im, node):
    perm = node.attrs.get("perm")
    return im.emit("transpose", [node.inputs[0]], axes=None if perm is None else list(perm))


@converter("Concat")
def _concat(im, node):
    vals = [v for v in node.inputs if v is not None]
    return im.emit("concatenate", vals, axis=node.attrs["axis"])


@converter("Split")
def _split_op(im, node):
    x = node.inputs[0]
    axis = node.attrs.get("axis", 0)
    s = im.shape_of(x)
    ax = axis + len(s) if axis < 0 else axis
    dim = s[ax]
    if node.opset < 13:
        sizes = node.attrs.get("split")
    else:
        sizes = im.static(node.input(1), node, "split")
    n = node.num_outputs
    if sizes is None and "num_outputs" in node.attrs:
        n = node.attrs["num_outputs"]
        if dim is None:
            raise node.fail("num_outputs needs a static split axis")
        chunk = -(-dim // n)
        sizes = [min(chunk, dim - i * chunk) for i in range(n)]
    if sizes is None:
        if n == 1:
            return [x]
        return im.emit("split", [x], indices_or_sections=n, axis=ax)
    sizes = [int(v) for v in sizes]
    if dim is not None and sum(sizes) != dim:
        raise node.fail(f"split sizes {sizes} do not add up to axis {ax} of size {dim}")
    if len(sizes) == 1:
        return [x]
    return im.emit("split", [x], indices_or_sections=list(np.cumsum(sizes)[:-1]), axis=ax)


@converter("Squeeze")
def _squeeze(im, node):
    given = node.input(1)
    if node.opset >= 13 and given is not None and not given.known:
        return im.emit("dyn.squeeze", [node.inputs[0], im.int64(given)])
    axes = im.axes_arg(node, 13)
    return im.emit("squeeze", [node.inputs[0]], axis=axes)


@converter("Unsqueeze")
def _unsqueeze(im, node):
    x = node.inputs[0]
    axes = im.axes_arg(node, 13)
    if axes is None:
        raise node.fail("axes are required")
    out_rank = im.rank(x) + len(axes)
    norm = sorted(a + out_rank if a < 0 else a for a in axes)
    if len(set(norm)) != len(norm) or any(not 0 <= a < out_rank for a in norm):
        raise node.fail(f"invalid axes {axes} for output rank {out_rank}")
    for a in norm:
        x = im.emit1("expand_dims", [x], axis=a)
    return [x]


@converter("Tile")
def _tile(im, node):
    if not node.inputs[1].known:
        return im.emit("dyn.tile", [node.inputs[0], im.int64(node.inputs[1])])
    reps = im.static(node.inputs[1], node, "repeats")
    return im.emit("tile", [node.inputs[0]], reps=[int(r) for r in reps])


_I64_MAX = np.iinfo(np.int64).max


@converter("Slice")
def _slice(im, node):
    x = node.inputs[0]
    if node.opset < 10:
        starts = node.attrs["starts"]
        ends = node.attrs["ends"]
        axes = node.attrs.get("axes")
        steps = None
    else:
        dyn = [v for v in (node.inputs[1], node.inputs[2], node.input(4)) if v is not None and not v.known]
        if dyn:
            return [_dyn_slice(im, node, x)]
        starts = im.static(node.inputs[1], node, "starts")
        ends = im.static(node.inputs[2], node, "ends")
        axes = im.static(node.input(3), node, "axes")
        steps = im.static(node.input(4), node, "steps")
    starts = [int(v) for v in np.asarray(starts).reshape(-1)]
    ends = [int(v) for v in np.asarray(ends).reshape(-1)]
    rank = im.rank(x)
    axes = list(range(len(starts))) if axes is None else [int(a) for a in np.asarray(axes).reshape(-1)]
    steps = [1] * len(starts) if steps is None else [int(v) for v in np.asarray(steps).reshape(-1)]
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise node.fail("starts, ends, axes and steps must have the same length")
    s = im.shape_of(x)
    begin, end, strides, ax_out = [], [], [], []
    for st, en, ax, step in zip(starts, ends, axes, steps):
        ax = ax + rank if ax < 0 else ax
        if not 0 <= ax < rank:
            raise node.fail(f"axis {ax} out of range for rank {rank}")
        if step == 0:
            raise node.fail("steps must be non-zero")
        d = s[ax]
        if d is None:
            raise node.fail(f"slicing the dynamic axis {ax} is not supported")
        # ONNX's clamping, resolved here so Relay gets plain in-range bounds
        st = st + d if st < 0 else st
        en = en + d if en < 0 else en
        if step > 0:
            st, en = min(max(st, 0), d), min(max(en, 0), d)
        else:
            st, en = min(max(st, 0), d - 1), min(max(en, -1), d - 1)
            if en == -1:
                en = -d - 1  # "before index 0": Relay reads a plain -1 as the last index
        begin.append(st)
        end.append(en)
        strides.append(step)
        ax_out.append(ax)
    return im.emit("strided_slice", [x], begin=begin, end=end, strides=strides, axes=ax_out)


def _dyn_slice(im: Importer, node: Node, x: Value) -> Value:
    """Slice with run-time starts/ends/steps: Relay's dyn.strided_slice over the leading axes
    up to the last sliced one (the others whole), whose clamping is ONNX's. ``axes`` must be
    known (Relay's dyn.strided_slice has no axes)."""
    rank = im.rank(x)
    starts, ends = im.int64(node.inputs[1]), im.int64(node.inputs[2])
    (n,) = im.static_shape(starts, node)
    ax = im.static(node.input(3), node, "axes")
    axes = list(range(n)) if ax is None else [int(a) + rank if a < 0 else int(a) for a in ax]
    if len(axes) != n or any(not 0 <= a < rank for a in axes) or len(set(axes)) != n:
        raise node.fail(f"axes {axes} do not fit {n} starts for rank {rank}")
    steps = node.input(4)
    steps = im.const(np.ones(n, np.int64)) if steps is None else im.int64(steps)
    k = max(axes) + 1
    whole = {"begin": 0, "end": _I64_MAX, "strides": 1}

    def full(v: Value, what: str) -> Value:
        if axes == list(range(k)):
            return v
        parts = []
        for a in range(k):
            parts.append(im.element(v, axes.index(a)) if a in axes else im.const(np.array([whole[what]], np.int64)))
        return im.emit1("concatenate", parts, axis=0)

    return im.emit1("dyn.strided_slice", [x, full(starts, "begin"), full(ends, "end"), full(steps, "strides")])


@converter("Gather")
def _gather(im, node):
    data, idx = node.inputs[0], node.inputs[1]
    axis = node.attrs.get("axis", 0)
    rank = im.rank(data)
    ax = axis + rank if axis < 0 else axis
    if idx.known:
        dim = im.shape_of(data)[ax]
        if dim is not None:
            i = np.asarray(idx.const).astype(np.int64)
            if np.any(i < -dim) or np.any(i >= dim):
                raise node.fail(f"indices {i.tolist()} out of range for axis {ax} of size {dim}")
            idx = im.const(np.where(i < 0, i + dim, i).astype(idx.const.dtype))
            return im.emit("take", [data, idx], axis=ax)
    # run-time indices may be negative: wrap them, which is ONNX's meaning for [-n, n)
    return im.emit("take", [data, idx], axis=ax, mode="wrap")


@converter("Pad")
def _pad(im, node):
    x = node.inputs[0]
    mode = node.attrs.get("mode", "constant")
    if mode not in ("constant", "edge", "reflect", "wrap"):
        raise node.fail(f"pad mode '{mode}' is not supported")
    rank = im.rank(x)
    if node.opset < 11:
        pads = list(node.attrs.get("pads", node.attrs.get("paddings", [])))
        value = im.scalar(float(node.attrs.get("value", 0.0)), x)
        axes = list(range(rank))
    else:
        v = node.input(2)
        value = im.scalar(0, x) if v is None else im.reshape(v, [])
        if not node.inputs[1].known and node.input(3) is None and mode != "wrap":
            # Relay's dyn.nn.pad: ONNX's [begins..., ends...] as Relay's [[begin, end], ...]
            pads = im.int64(node.inputs[1])
            width = im.emit1("transpose", [im.reshape(pads, [2, rank])], axes=[1, 0])
            return im.emit("dyn.nn.pad", [x, width, value], pad_mode=mode)
        pads = [int(p) for p in im.static(node.inputs[1], node, "pads")]
        ax = im.static(node.input(3), node, "axes")
        axes = list(range(rank)) if ax is None else [int(a) + rank if a < 0 else int(a) for a in ax]
    n = len(axes)
    if len(pads) != 2 * n:
        raise node.fail(f"pads {pads} must have 2 values per padded axis ({n})")
    if any(p < 0 for p in pads):
        raise node.fail(f"negative pads {pads} are not supported")
    width = [[0, 0] for _ in range(rank)]
    for k, a in enumerate(axes):
        width[a] = [pads[k], pads[k + n]]
    if mode == "wrap":  # no Relay pad mode: a take of the wrapped indices per padded axis
        xs = im.static_shape(x, node)
        for a, (before, after) in enumerate(width):
            if (before or after) and xs[a] == 0:
                raise node.fail(f"cannot wrap-pad axis {a} of size 0")
            if before or after:
                idx = (np.arange(-before, xs[a] + after) % xs[a]).astype(np.int64)
                x = im.emit1("take", [x, im.const(idx)], axis=a)
        return [x]
    return im.emit("nn.pad", [x, value], pad_width=width, pad_mode=mode)


# ---- resizing --------------------------------------------------------------------------------

_RESIZE_METHOD = {"nearest": "nearest_neighbor", "linear": "linear", "cubic": "cubic"}


def _resize_all_axes(im, node):
    x = node.inputs[0]
    xs = im.static_shape(x, node)
    mode = node.attrs.get("mode", "nearest")
    if mode not in _RESIZE_METHOD:
        raise node.fail(f"unknown mode '{mode}'")
    exact = bool(node.attrs.get("antialias", 0))  # image.resize2d has no antialiasing
    if node.attrs.get("keep_aspect_ratio_policy", "stretch") != "stretch":
        raise node.fail("only keep_aspect_ratio_policy 'stretch' is supported")
    if node.attrs.get("axes") is not None:
        raise node.fail("the axes attribute is not supported")
    if node.opset < 11:
        scales, sizes, roi = im.static(node.input(1), node, "scales"), None, None
        coord = "asymmetric"
    else:
        roi = im.static(node.input(1), node, "roi")
        scales = im.static(node.input(2), node, "scales")
        sizes = im.static(node.input(3), node, "sizes")
        coord = node.attrs.get("coordinate_transformation_mode", "half_pixel")
    if sizes is not None and sizes.size:
        out = [int(v) for v in sizes]
    elif scales is not None and scales.size:
        out = [int(math.floor(d * float(s))) for d, s in zip(xs, scales)]
        # ONNX maps coordinates with the scale itself, Relay's resize2d with the size ratio
        exact = exact or any(d * float(s) != int(d * float(s)) for d, s in zip(xs, scales))
    else:
        raise node.fail("needs constant scales or sizes")
    if len(out) != len(xs):
        raise node.fail(f"{len(out)} output sizes/scales for an input of rank {len(xs)}")
    exact = exact or len(xs) != 4
    if mode == "nearest":
        rounding = node.attrs.get("nearest_mode", "round_prefer_floor")
        whole = all(o % d == 0 and o >= d for o, d in zip(out[2:], xs[2:]))
        # TOPI divides integers for a whole-number upscale and ignores the rounding method
        exact = exact or (coord == "asymmetric" and whole and rounding in ("round_prefer_ceil", "ceil", "round"))
    if exact or out[:2] != list(xs[:2]):
        use_scales = None if sizes is not None and sizes.size else [float(v) for v in scales]
        return resize_by_weights(im, node, x, xs, out, use_scales)
    attrs = {
        "method": _RESIZE_METHOD[mode],
        "coordinate_transformation_mode": coord,
        "cubic_alpha": float(node.attrs.get("cubic_coeff_a", -0.75)),
        "cubic_exclude": int(node.attrs.get("exclude_outside", 0)),
        "extrapolation_value": float(node.attrs.get("extrapolation_value", 0.0)),
    }
    if mode == "nearest":
        attrs["rounding_method"] = node.attrs.get("nearest_mode", "round_prefer_floor")
    if coord == "tf_crop_and_resize":
        if roi is None or roi.size != 8:
            raise node.fail("tf_crop_and_resize needs an roi of 8 values")
        attrs["roi"] = [float(roi[2]), float(roi[3]), float(roi[6]), float(roi[7])]
    return im.emit("image.resize2d", [x], size=out[2:], **attrs)


@converter("Upsample")
def _upsample(im, node):
    x = node.inputs[0]
    im.rank_in(node, x, (4,))
    mode = node.attrs.get("mode", "nearest")
    if node.opset >= 9 and not node.input(1).known:  # Relay's dyn.nn.upsampling
        if mode not in ("nearest", "linear", "bilinear"):
            raise node.fail(f"unknown mode '{mode}'")
        scales = im.cast_like(node.input(1), "float32")
        sh, sw = (im.reshape(im.element(scales, i), []) for i in (2, 3))
        method = "nearest_neighbor" if mode == "nearest" else "bilinear"
        return im.emit("dyn.nn.upsampling", [x, sh, sw], method=method)
    if node.opset >= 9:
        scales = im.static(node.input(1), node, "scales")
    else:
        scales = np.asarray(node.attrs.get("scales", []), dtype=np.float32)
    if scales is None or scales.size != 4 or float(scales[0]) != 1 or float(scales[1]) != 1:
        raise node.fail(f"only H and W may be scaled, got scales {None if scales is None else scales.tolist()}")
    mode = node.attrs.get("mode", "nearest")
    if mode not in ("nearest", "linear", "bilinear"):
        raise node.fail(f"unknown mode '{mode}'")
    method = "nearest_neighbor" if mode == "nearest" else "bilinear"
    return im.emit("nn.upsampling", [x], scale_h=float(scales[2]), scale_w=float(scales[3]), method=method)


# ---- gathers, shifts, sizes --------------------------------------------------------------------


@converter("GatherND")
def _gather_nd(im, node):
    data, indices = node.inputs[0], node.inputs[1]
    r = im.rank(indices)
    moved = im.emit1("transpose", [indices], axes=[r - 1, *range(r - 1)])
    return im.emit("gather_nd", [data, moved], batch_dims=node.attrs.get("batch_dims", 0))


@converter("Size")
def _size(im, node):
    return im.emit("ndarray_size", [node.inputs[0]], dtype="int64")


@converter("CastLike")
def _cast_like(im, node):
    return [onnx_cast(im, node, node.inputs[0], im.dtype_of(node.inputs[1]))]


@converter("IsNaN")
def _isnan(im, node):
    x = node.inputs[0]
    return im.emit("not_equal", [x, x])


@converter("IsInf")
def _isinf(im, node):
    x = node.inputs[0]
    pos = bool(node.attrs.get("detect_positive", 1))
    neg = bool(node.attrs.get("detect_negative", 1))
    hits = []
    if pos:
        hits.append(im.apply("equal", x, im.scalar(math.inf, x)))
    if neg:
        hits.append(im.apply("equal", x, im.scalar(-math.inf, x)))
    if not hits:
        return [im.const(np.zeros(im.static_shape(x, node), np.bool_))]
    return [hits[0] if len(hits) == 1 else im.apply("logical_or", *hits)]


# ---- element gathers and the losses built on them -----------------------------------------------


def _wrap_index(im: Importer, idx: Value, dim: int) -> Value:
    """ONNX indices in [-dim, dim) as [0, dim)."""
    idx = im.cast_like(idx, "int64")
    neg = im.apply("less", idx, im.const(np.int64(0)))
    return im.apply("where", neg, im.apply("add", idx, im.const(np.int64(dim))), idx)


def _gather_elements(im: Importer, node: Node, data: Value, idx: Value, axis: int) -> Value:
    """``out[i0..in] = data[i0.., idx[i0..in], ..in]`` as ``gather_nd`` over index grids."""
    ishape = im.static_shape(idx, node)
    rank = len(ishape)
    dim = im.static_shape(data, node)[axis]
    grids = np.indices(ishape, dtype=np.int64)
    rows = [_wrap_index(im, idx, dim) if a == axis else im.const(grids[a]) for a in range(rank)]
    stacked = im.emit1("stack", rows, axis=0)
    return im.emit1("gather_nd", [data, stacked])


@converter("GatherElements")
def _gather_elements_op(im, node):
    data, idx = node.inputs[:2]
    rank = im.rank(data)
    axis = int(node.attrs.get("axis", 0))
    return [_gather_elements(im, node, data, idx, axis + rank if axis < 0 else axis)]


# ---- masks and rounding --------------------------------------------------------------------------


@converter("Trilu")
def _trilu(im, node):
    x = node.inputs[0]
    shape = im.static_shape(x, node)
    rows, cols = shape[-2], shape[-1]
    diag = np.arange(cols, dtype=np.int64)[None, :] - np.arange(rows, dtype=np.int64)[:, None]
    k = node.input(1)
    k = im.const(np.int64(0)) if k is None else im.reshape(im.cast_like(k, "int64"), [])
    upper = bool(node.attrs.get("upper", 1))
    mask = im.apply("greater_equal" if upper else "less_equal", im.const(diag), k)
    return [im.apply("where", mask, x, im.const(np.zeros((), numpy_dtype(im.dtype_of(x)))))]


# ---- layout shuffles and constants -----------------------------------------------------------------


@converter("DepthToSpace")
def _depth_to_space(im, node):
    x = node.inputs[0]
    n, c, h, w = im.static_shape(x, node)
    bs = int(node.attrs["blocksize"])
    if node.attrs.get("mode", "DCR") == "DCR":
        t = im.reshape(x, [n, bs, bs, c // (bs * bs), h, w])
        t = im.emit1("transpose", [t], axes=[0, 3, 4, 1, 5, 2])
    else:  # CRD
        t = im.reshape(x, [n, c // (bs * bs), bs, bs, h, w])
        t = im.emit1("transpose", [t], axes=[0, 1, 4, 2, 5, 3])
    return [im.reshape(t, [n, c // (bs * bs), h * bs, w * bs])]


@converter("SpaceToDepth")
def _space_to_depth(im, node):
    x = node.inputs[0]
    n, c, h, w = im.static_shape(x, node)
    bs = int(node.attrs["blocksize"])
    t = im.reshape(x, [n, c, h // bs, bs, w // bs, bs])
    crd = node.attrs.get("mode", "DCR") == "CRD"  # channels outermost, then the block offsets
    t = im.emit1("transpose", [t], axes=[0, 1, 3, 5, 2, 4] if crd else [0, 3, 5, 1, 2, 4])
    return [im.reshape(t, [n, c * bs * bs, h // bs, w // bs])]


_REDUCTION = {"none": "update", "add": "add", "mul": "mul", "min": "min", "max": "max"}


def _reduction(node: Node) -> str:
    r = node.attrs.get("reduction", "none")
    if r not in _REDUCTION:
        raise node.fail(f"reduction must be one of {', '.join(_REDUCTION)}, got {r!r}")
    return _REDUCTION[r]


@converter("ScatterElements", "Scatter")
def _scatter_elements(im, node):
    data, indices, updates = node.inputs[:3]
    return im.emit(
        "scatter_elements", [data, indices, updates], axis=int(node.attrs.get("axis", 0)), reduction=_reduction(node)
    )


@converter("ScatterND")
def _scatter_nd(im, node):
    data, indices, updates = node.inputs[:3]
    r = im.rank(indices)
    moved = im.emit1("transpose", [indices], axes=[r - 1, *range(r - 1)])
    return im.emit("scatter_nd", [data, moved, updates], mode=_reduction(node))


@converter("BitCast")
def _bitcast(im, node):
    to = relay_dtype(int(node.attrs["to"]), f"BitCast node '{node.name}'")
    return im.emit("reinterpret", [node.inputs[0]], dtype=to)


@converter("ReverseSequence")
def _reverse_sequence(im, node):
    x, lengths = node.inputs[:2]
    return im.emit(
        "reverse_sequence",
        [x, lengths],
        seq_axis=int(node.attrs.get("time_axis", 0)),
        batch_axis=int(node.attrs.get("batch_axis", 1)),
    )


_GRID_MODES = {"linear": "bilinear", "bilinear": "bilinear", "cubic": "bicubic", "bicubic": "bicubic", "nearest": "nearest"}


@converter("GridSample")
def _grid_sample(im, node):
    x, grid = node.inputs[:2]
    mode = node.attrs.get("mode", "linear" if node.opset >= 20 else "bilinear")
    if mode not in _GRID_MODES:
        raise node.fail(f"mode must be one of {', '.join(_GRID_MODES)}, got {mode!r}")
    n = im.rank(x) - 2
    if n not in (2, 3):
        raise node.fail(f"only 2-D and 3-D sampling is supported (Relay's), got a {n}-D input")
    moved = im.emit1("transpose", [grid], axes=[0, n + 1, *range(1, n + 1)])
    return im.emit(
        "image.grid_sample",
        [x, moved],
        method=_GRID_MODES[mode],
        layout="NCHW" if n == 2 else "NCDHW",
        padding_mode=node.attrs.get("padding_mode", "zeros"),
        align_corners=bool(node.attrs.get("align_corners", 0)),
    )


# ---- Resize's axes and keep_aspect_ratio_policy: widened to every axis for the Resize converter ----


@converter("Resize")
def _resize(im, node):
    """``axes`` (scales/sizes/roi for some axes only) and ``keep_aspect_ratio_policy`` (one
    scale for the given axes, sizes rounded from it) rewritten to the plain form of every axis."""
    axes = node.attrs.get("axes")
    policy = node.attrs.get("keep_aspect_ratio_policy", "stretch")
    if node.opset < 18 or (axes is None and policy == "stretch"):
        return _resize_all_axes(im, node)
    # run-time roi/scales/sizes: im.static names the graph inputs (the ONNX backend binds them)
    if policy not in ("stretch", "not_larger", "not_smaller"):
        raise node.fail(f"unknown keep_aspect_ratio_policy {policy!r}")
    x = node.inputs[0]
    xs = im.static_shape(x, node)
    rank = len(xs)
    axes = list(range(rank)) if axes is None else [int(a) + rank if int(a) < 0 else int(a) for a in axes]
    if sorted(set(axes)) != sorted(axes) or any(not 0 <= a < rank for a in axes):
        raise node.fail(f"axes {node.attrs.get('axes')} must be distinct axes of a rank-{rank} input")
    roi = im.static(node.input(1), node, "roi")
    scales = im.static(node.input(2), node, "scales")
    sizes = im.static(node.input(3), node, "sizes")
    inputs = list(node.inputs) + [None] * (4 - len(node.inputs))
    if roi is not None and roi.size:
        if roi.size != 2 * len(axes):
            raise node.fail(f"roi needs {2 * len(axes)} values for axes {axes}, got {roi.size}")
        full = np.array([0.0] * rank + [1.0] * rank, roi.dtype)
        for k, a in enumerate(axes):
            full[a], full[rank + a] = roi[k], roi[len(axes) + k]
        inputs[1] = im.const(full)
    if sizes is not None and sizes.size:
        if sizes.size != len(axes):
            raise node.fail(f"sizes needs {len(axes)} values for axes {axes}, got {sizes.size}")
        if policy != "stretch":
            ratios = [float(s) / xs[a] for s, a in zip(sizes, axes)]
            scale = min(ratios) if policy == "not_larger" else max(ratios)
            sizes = np.array([int(scale * xs[a] + 0.5) for a in axes], sizes.dtype)
        full = np.array(xs, sizes.dtype)
        full[axes] = sizes
        inputs[3] = im.const(full)
    elif scales is not None and scales.size:
        if scales.size != len(axes):
            raise node.fail(f"scales needs {len(axes)} values for axes {axes}, got {scales.size}")
        full = np.ones(rank, scales.dtype)
        full[axes] = scales
        inputs[2] = im.const(full)
    attrs = {k: v for k, v in node.attrs.items() if k not in ("axes", "keep_aspect_ratio_policy")}
    return _resize_all_axes(im, Node(node.op_type, node.name, inputs, attrs, node.num_outputs, node.opset))


@converter("OneHot")
def _one_hot(im, node):
    indices, depth_in, values = node.inputs[:3]
    depth = float(im.static(depth_in, node, "depth").reshape(-1)[0])
    if depth < 1:
        raise node.fail(f"depth must be at least 1, got {depth}")
    depth = int(depth)
    if im.dtype_of(indices) != "int64":  # ONNX casts (floats truncate)
        indices = im.emit1("cast", [indices], dtype="int64")
    # negative indices count from the end of the new axis
    neg = im.emit1("less", [indices, im.scalar(0, indices)])
    indices = im.emit1("where", [neg, im.emit1("add", [indices, im.scalar(depth, indices)]), indices])
    off, on = (im.reshape(v, []) for v in im.split(im.reshape(values, [2]), 2, 0))
    axis = int(node.attrs.get("axis", -1))
    rank = im.rank(indices) + 1
    axis = axis + rank if axis < -1 else axis
    return im.emit("one_hot", [indices, on, off], depth=depth, axis=axis, dtype=im.dtype_of(values))


def _nonzero_rows(im: Importer, x: Value) -> Value:
    """``argwhere(x)`` as int64 (``[count, rank]``)."""
    return im.int64(im.emit1("argwhere", [x]))


@converter("NonZero")
def _nonzero(im, node):
    x = node.inputs[0]
    if im.rank(x) == 0:  # a scalar is one element of a 1-D tensor (numpy's nonzero says so)
        x = im.reshape(x, [1])
    return [im.emit1("transpose", [_nonzero_rows(im, x)], axes=[1, 0])]


@converter("Compress")
def _compress(im, node):
    x, cond = node.inputs[0], node.inputs[1]
    if im.rank(cond) != 1:
        raise node.fail(f"the condition must be 1-D, got shape {list(im.shape_of(cond))}")
    axis = node.attrs.get("axis")
    if axis is None:
        x, axis = im.reshape(x, [int(np.prod(im.static_shape(x, node)))]), 0
    rank = im.rank(x)
    if not -rank <= axis < rank:
        raise node.fail(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    size, n = im.static_shape(x, node)[axis], im.shape_of(cond)[0]
    if n is not None and n > size:
        raise node.fail(f"the condition has {n} elements, axis {axis} only {size}")
    idx = im.reshape(_nonzero_rows(im, im.cast_like(cond, "bool")), [-1]) if not cond.known else None
    if idx is None:
        idx = im.const(np.flatnonzero(np.asarray(cond.const)).astype(np.int64))
    return [im.emit1("take", [x, idx], axis=axis)]


@converter("Unique")
def _unique(im, node):
    x = node.inputs[0]
    is_sorted = bool(node.attrs.get("sorted", 1))
    axis = node.attrs.get("axis")
    if axis is not None:
        return _unique_axis(im, node, x, axis, is_sorted)
    flat = im.reshape(x, [int(np.prod(im.static_shape(x, node)))])
    vals, first, inverse, count, counts = im.emit("unique", [flat], sorted=is_sorted, return_counts=True)
    return [
        im.take_first(vals, count),
        im.int64(im.take_first(first, count)),
        im.int64(inverse),
        im.int64(im.take_first(counts, count)),
    ]


def _unique_axis(im: Importer, node: Node, x: Value, axis: int, is_sorted: bool) -> list[Value]:
    """ONNX's Unique of slices along ``axis``, evaluated at import (Relay's unique is 1-D)."""
    if not x.known:
        raise OnnxRunTimeValueError(
            f"Unique node '{node.name}': with 'axis' its input must be known at import (Relay's "
            "unique is 1-D, so unique slices are computed at import)",
            im.graph_inputs_of(x),
        )
    a = np.asarray(x.const)
    if not -a.ndim <= axis < a.ndim:
        raise node.fail(f"axis {axis} is out of range for rank {a.ndim}")
    vals, first, inverse, counts = np.unique(a, axis=axis, return_index=True, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    if not is_sorted:
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        vals, first, counts, inverse = np.take(vals, order, axis=axis), first[order], counts[order], rank[inverse]
    return [im.const(vals), *(im.const(v.astype(np.int64)) for v in (first, inverse, counts))]


def _norm_axes(node: Node, axes, rank: int) -> list[int]:
    out = []
    for a in axes:
        if not -rank <= a < rank:
            raise node.fail(f"axis {a} is out of range for rank {rank}")
        out.append(a % rank)
    return out


@converter("CenterCropPad")
def _center_crop_pad(im, node):
    x = node.inputs[0]
    xs = im.static_shape(x, node)
    shape = im.static_ints(node, 1, "shape")
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


@converter("AffineGrid")
def _affine_grid(im, node):
    theta = node.inputs[0]
    size = im.static_ints(node, 1, "size")
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


@converter("TensorScatter")
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

MAX_WEIGHTS = 1 << 20
"""The most entries (input length x output length) of one axis' weight matrix."""

_ATTRS = ("mode", "coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside", "nearest_mode", "antialias")


def axis_weights(node: Node, length: int, out: int, scale: float | None) -> np.ndarray:
    """ONNX's ``W[out, length]`` for one axis of ``node``: by ``scale`` when given (ONNX maps
    coordinates by it), else by the sizes."""
    if length * out > MAX_WEIGHTS:
        raise node.fail(
            f"resizing an axis of {length} to {out} needs a {out} x {length} weight matrix, more than "
            f"the importer computes ({MAX_WEIGHTS:,} entries)"
        )

    attrs = {k: node.attrs[k] for k in _ATTRS if k in node.attrs}
    inputs = ["x", "", "s"] if scale is not None else ["x", "", "", "s"]
    s = np.array([scale], np.float32) if scale is not None else np.array([out], np.int64)
    graph = helper.make_graph(
        [helper.make_node("Resize", inputs, ["y"], **attrs)],
        "axis",
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [length])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [out])],
        [onnx.numpy_helper.from_array(s, "s")],
    )
    opset = max(node.opset, 18) if attrs.get("antialias") else max(node.opset, 13)
    ref = ReferenceEvaluator(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]))
    cols = []
    for j in range(length):
        e = np.zeros(length)
        e[j] = 1.0
        (y,) = ref.run(None, {"x": e})
        if y.shape != (out,):
            raise node.fail(f"ONNX's reference gives {y.shape[0]} outputs for an axis of {length} -> {out}")
        cols.append(y)
    return np.stack(cols, axis=1)


def resize_by_weights(
    im: Importer, node: Node, x: Value, in_shape: Sequence[int], out_shape: Sequence[int], scales: Sequence[float] | None
) -> list[Value]:
    """``x`` resized axis by axis with ONNX's weights (``scales`` per axis, or None when the
    node gave sizes)."""
    mode = node.attrs.get("mode", "nearest")
    if node.attrs.get("coordinate_transformation_mode") == "tf_crop_and_resize":
        raise node.fail("tf_crop_and_resize is only supported where image.resize2d gives ONNX's numbers")
    letters = "abcdefghijklmnop"
    y = x
    for axis, (d, o) in enumerate(zip(in_shape, out_shape)):
        scale = None if scales is None else float(scales[axis])
        if d == o and scale in (None, 1.0):
            continue
        w = axis_weights(node, d, o, scale)
        if mode == "nearest":
            idx = w.argmax(axis=1)
            if not np.array_equal(w, np.eye(d)[idx]):
                raise node.fail("ONNX's nearest weights are not a selection (an importer bug)")
            y = im.emit1("take", [y, im.const(idx.astype(np.int64))], axis=axis)
            continue
        src = letters[: len(in_shape)]
        dst = src[:axis] + "z" + src[axis + 1 :]
        weights = im.const(w, im.dtype_of(x))
        y = im.emit1("einsum", [y, weights], equation=f"{src},z{src[axis]}->{dst}")
    return [y]
