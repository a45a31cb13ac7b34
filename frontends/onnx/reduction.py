"""ONNX's ``onnx/defs/reduction`` operators: ``Reduce*``, ``ArgMax``, ``ArgMin``.

As Relay's ONNX frontend maps them: ``ReduceMean`` -> ``mean`` (and sum, max, min, prod),
``ArgMax`` -> ``argmax`` then a cast to int64, ``ReduceL2`` = sqrt(sum(x*x)), ``ReduceLogSumExp``
as max + log(sum(exp(x - max))). Axes come from the attribute before the opset that made them an
input (18; 13 for ``ReduceSum``) and must be known at import. ``ReduceMax``/``ReduceMin`` over
an empty axis give -inf/+inf (the lowest/highest integer), ONNX's identity, as a constant of the
output shape.
"""

from __future__ import annotations

import math

import numpy as np

from xrelay.dialects.relay import numpy_dtype
from xrelay.frontends.onnx.importer import (
    Importer,
    Node,
    Value,
)
from xrelay.frontends.onnx.registry import converter

_REDUCE = {
    "ReduceMean": ("mean", 18),
    "ReduceSum": ("sum", 13),
    "ReduceMax": ("max", 18),
    "ReduceMin": ("min", 18),
    "ReduceProd": ("prod", 18),
}


@converter("ReduceMean", "ReduceSum", "ReduceProd")
def _reduce_static(im, node):
    relay, input_opset = _REDUCE[node.op_type]
    x = node.inputs[0]
    axes = im.axes_arg(node, input_opset)
    keep = bool(node.attrs.get("keepdims", 1))
    if not axes:
        if node.attrs.get("noop_with_empty_axes", 0):
            return [x]
        axes = None
    return im.emit(relay, [x], axis=axes, keepdims=keep)



@converter("ArgMax", "ArgMin")
def _arg(im, node):
    x = node.inputs[0]
    axis = int(node.attrs.get("axis", 0))
    y = im.emit1(
        "argmax" if node.op_type == "ArgMax" else "argmin",
        [x],
        axis=[axis],
        keepdims=bool(node.attrs.get("keepdims", 1)),
        select_last_index=bool(node.attrs.get("select_last_index", 0)),
    )
    return [im.cast_like(y, "int64")]


# ---- reductions --------------------------------------------------------------------------------


def _reduced_axes(im: Importer, node: Node, attr_opset: int) -> list[int] | None:
    return im.axes_arg(node, attr_opset)


def _reduce_on(im: Importer, node: Node, relay: str, x: Value) -> Value:
    axes = _reduced_axes(im, node, 18)
    keep = bool(node.attrs.get("keepdims", 1))
    if not axes:
        if node.attrs.get("noop_with_empty_axes", 0):
            return x
        axes = None
    return im.emit1(relay, [x], axis=axes, keepdims=keep)


@converter("ReduceL1")
def _reduce_l1(im, node):
    return [_reduce_on(im, node, "sum", im.apply("abs", node.inputs[0]))]


@converter("ReduceL2")
def _reduce_l2(im, node):
    x = node.inputs[0]
    return [im.apply("sqrt", _reduce_on(im, node, "sum", im.apply("multiply", x, x)))]


@converter("ReduceSumSquare")
def _reduce_sum_square(im, node):
    x = node.inputs[0]
    return [_reduce_on(im, node, "sum", im.apply("multiply", x, x))]


@converter("ReduceLogSum")
def _reduce_log_sum(im, node):
    return [im.apply("log", _reduce_on(im, node, "sum", node.inputs[0]))]


@converter("ReduceLogSumExp")
def _reduce_log_sum_exp(im, node):
    x = node.inputs[0]
    # max + log(sum(exp(x - max))), the max kept for broadcasting
    keep = bool(node.attrs.get("keepdims", 1))
    axes = _reduced_axes(im, node, 18)
    if not axes and node.attrs.get("noop_with_empty_axes", 0):
        return [x]
    axes = axes or None
    shape = im.static_shape(x, node)
    if any(shape[a] == 0 for a in (axes if axes is not None else range(len(shape)))):
        return [im.apply("log", im.emit1("sum", [im.apply("exp", x)], axis=axes, keepdims=keep))]
    m = im.emit1("max", [x], axis=axes, keepdims=True)
    s = im.emit1("sum", [im.apply("exp", im.apply("subtract", x, m))], axis=axes, keepdims=keep)
    m_out = m if keep else im.reshape(m, im.shape_of(s))
    return [im.apply("add", im.apply("log", s), m_out)]


@converter("ReduceMax", "ReduceMin")
def _reduce_extreme(im, node):
    """The reduction, or ONNX's identity (-inf for max, +inf for min) over an empty axis."""
    x = node.inputs[0]
    shape = im.shape_of(x)
    axes = im.axes_arg(node, _REDUCE[node.op_type][1])
    if not axes and node.attrs.get("noop_with_empty_axes", 0):
        return [x]
    red = [a % len(shape) for a in axes] if axes else list(range(len(shape)))
    if not any(shape[a] == 0 for a in red):
        return _reduce_static(im, node)
    keep = bool(node.attrs.get("keepdims", 1))
    out_shape = [1 if a in red else d for a, d in enumerate(shape) if keep or a not in red]
    if any(d is None for d in out_shape):
        raise node.fail(f"needs a static input shape, got {list(shape)}")
    dt = np.dtype(numpy_dtype(im.dtype_of(x)))
    big = math.inf if dt.kind == "f" else (np.iinfo(dt).max if dt.kind in "iu" else True)
    small = -math.inf if dt.kind == "f" else (np.iinfo(dt).min if dt.kind in "iu" else False)
    return [im.const(np.full(out_shape, small if node.op_type == "ReduceMax" else big, dtype=dt))]
