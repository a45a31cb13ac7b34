"""ONNX operators whose result shape depends on input values: ``NonZero``, ``Compress``,
``Unique``, ``NonMaxSuppression``.

As Relay's ONNX frontend (TVM v0.19) maps them:

* ``NonZero`` -> ``transpose(cast(argwhere(x), int64))``; ``Compress`` -> ``take`` of the
  ``argwhere`` of the condition (on the flattened input when ``axis`` is absent).
* ``Unique`` -> ``unique`` on the flattened input, its padded results cut to ``num_unique``
  with ``dyn.strided_slice``. Relay's ``unique`` is 1-D; ONNX's ``axis`` (unique slices)
  is evaluated at import, so the input must be known then (else ``OnnxRunTimeValueError``).
* ``NonMaxSuppression`` -> ``vision.all_class_non_max_suppression`` (centre boxes turned into
  corners first) and its rows cut to the count with ``dyn.strided_slice``.

All of them fold at import when their inputs are known. Otherwise the results have dynamic
dimensions (``?``): the reference interpreter runs them as they are; ``xrelay.build`` needs the
values, which the ONNX backend's ``"built"`` mode binds (it imports again with the graph
inputs they come from bound, as for other run-time shapes).
"""

from __future__ import annotations

import numpy as np

from xrelay.frontends.onnx import OnnxRunTimeValueError, _Importer, _Node, _op, _Val


def _nonzero_rows(im: _Importer, x: _Val) -> _Val:
    """``argwhere(x)`` as int64 (``[count, rank]``)."""
    return im.int64(im.emit1("argwhere", [x]))


def _cut(im: _Importer, x: _Val, count: _Val) -> _Val:
    """The first ``count`` (a 1-element int vector) entries of ``x`` along axis 0."""
    if count.known:
        n = int(np.asarray(count.const).reshape(-1)[0])
        return im.emit1("strided_slice", [x], begin=[0], end=[n], strides=[1], axes=[0])
    zero, one = im.const(np.array([0], np.int64)), im.const(np.array([1], np.int64))
    return im.emit1("dyn.strided_slice", [x, zero, im.int64(count), one])


@_op("NonZero")
def _nonzero(im, node):
    x = node.inputs[0]
    if im.rank(x) == 0:  # a scalar is one element of a 1-D tensor (numpy's nonzero says so)
        x = im.reshape(x, [1])
    return [im.emit1("transpose", [_nonzero_rows(im, x)], axes=[1, 0])]


@_op("Compress")
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


@_op("Unique")
def _unique(im, node):
    x = node.inputs[0]
    is_sorted = bool(node.attrs.get("sorted", 1))
    axis = node.attrs.get("axis")
    if axis is not None:
        return _unique_axis(im, node, x, axis, is_sorted)
    flat = im.reshape(x, [int(np.prod(im.static_shape(x, node)))])
    vals, first, inverse, count, counts = im.emit("unique", [flat], sorted=is_sorted, return_counts=True)
    return [
        _cut(im, vals, count),
        im.int64(_cut(im, first, count)),
        im.int64(inverse),
        im.int64(_cut(im, counts, count)),
    ]


def _unique_axis(im: _Importer, node: _Node, x: _Val, axis: int, is_sorted: bool) -> list[_Val]:
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


@_op("NonMaxSuppression")
def _nms(im, node):
    boxes, scores = node.inputs[0], node.inputs[1]
    dt = im.dtype_of(boxes)
    if node.attrs.get("center_point_box", 0):
        # (x_centre, y_centre, w, h) -> corners (y1, x1, y2, x2), as Relay's frontend
        xc, yc, w, h = (im.emit1("strided_slice", [boxes], begin=[i], end=[i + 1], axes=[2]) for i in range(4))
        half = im.const(np.array(0.5, dt))
        hw, hh = im.emit1("multiply", [w, half]), im.emit1("multiply", [h, half])
        corners = [
            im.emit1("subtract", [yc, hh]),
            im.emit1("subtract", [xc, hw]),
            im.emit1("add", [yc, hh]),
            im.emit1("add", [xc, hw]),
        ]
        boxes = im.emit1("concatenate", corners, axis=2)

    def scalar(i: int, default, dtype) -> _Val:
        v = node.input(i)
        if v is None:
            return im.const(np.array(default, dtype))
        if any(d != 1 for d in im.shape_of(v)):
            raise node.fail(f"input {i} must be a scalar, got shape {list(im.shape_of(v))}")
        return im.reshape(im.cast_like(v, np.dtype(dtype).name), [])

    max_out = scalar(2, 0, np.int64)  # ONNX's default: no boxes; negative ones too (Relay's: all)
    max_out = im.emit1("maximum", [max_out, im.const(np.array(0, np.int64))])
    iou = scalar(3, 0.0, dt)
    floor = scalar(4, -np.inf, dt)  # absent: every box is a candidate
    selected, count = im.emit("vision.all_class_non_max_suppression", [boxes, scores, max_out, iou, floor])
    return [_cut(im, selected, count)]
