"""ONNX's ``onnx/defs/generator`` operators: ``Constant``, ``ConstantOfShape``, ``Range``,
``EyeLike``, the random ``RandomNormal``, ``RandomUniform``, ``RandomNormalLike``,
``RandomUniformLike`` and ``Multinomial`` (``Bernoulli`` is imported as ONNX's function body,
``RandomUniformLike`` then ``Greater``).

Their values are computed at import (constants), except ``ConstantOfShape`` of a shape known only
at run time (Relay's ``dyn.full``) and ``Multinomial``'s choice (its probabilities come at run
time; the uniform numbers it inverts the distribution at are drawn at import). A constant that
cannot fit in memory is refused before it is allocated.

Random draws: xrelay has no random state at run time, so every draw is made at import by
numpy's ``RandomState`` (``Importer.random_state``): with a ``seed`` the values are those of
ONNX's reference implementation (the same generator, seed and arithmetic); without one, a seed
of the importer's (distinct per node, the same at every import). Either way every run of an
import gives the same values. onnxruntime's generator is another one: its values differ.
"""

from __future__ import annotations

import math

import numpy as np

from xrelay.dialects.relay import numpy_dtype
from xrelay.dialects.relay.dtypes import dtype_from_numpy, tensor_type
from xrelay.frontends.onnx.importer import (
    Node,
    refuse_too_large,
    relay_dtype,
)
from xrelay.frontends.onnx.registry import converter


@converter("Constant")
def _constant(im, node):
    a = node.attrs
    if "value" in a:
        return [im.const(a["value"])]
    if "value_float" in a:
        return [im.const(np.float32(a["value_float"]))]
    if "value_floats" in a:
        return [im.const(np.array(a["value_floats"], dtype=np.float32))]
    if "value_int" in a:
        return [im.const(np.int64(a["value_int"]))]
    if "value_ints" in a:
        return [im.const(np.array(a["value_ints"], dtype=np.int64))]
    raise node.fail(f"unsupported value attribute(s) {', '.join(a) or 'none'}")


@converter("ConstantOfShape")
def _constant_of_shape(im, node):
    value = node.attrs.get("value", np.zeros(1, np.float32))
    if not node.inputs[0].known:  # Relay's dyn.full
        fill = im.const(np.asarray(value).reshape(()))
        return im.emit("dyn.full", [fill, im.int64(node.inputs[0])])
    shape = im.static(node.inputs[0], node, "input")
    fill = np.asarray(value).reshape(-1)[:1]
    refuse_too_large("its result", tensor_type(np.asarray(shape).tolist(), dtype_from_numpy(fill.dtype)))
    return [im.const(np.full(tuple(int(d) for d in shape), np.asarray(value).reshape(-1)[0]))]


@converter("Range")
def _range(im, node):
    start, limit, delta = (im.static(node.inputs[i], node, n) for i, n in enumerate(("start", "limit", "delta")))
    for v, n in ((start, "start"), (limit, "limit"), (delta, "delta")):
        if np.size(v) != 1:
            raise node.fail(f"'{n}' has {np.size(v)} elements, expected a scalar")
    # a one-element vector is taken as its element (ONNX's expanded AffineGrid gives those)
    start, limit, delta = (np.asarray(v).reshape(()) for v in (start, limit, delta))
    if delta == 0:
        raise node.fail("'delta' is 0")
    count = max(0, math.ceil((float(limit) - float(start)) / float(delta)))  # ONNX's formula
    refuse_too_large("its result", tensor_type([count], dtype_from_numpy(start.dtype)))
    return [im.const(np.arange(start, limit, delta, dtype=start.dtype))]


@converter("EyeLike")
def _eye_like(im, node):
    x = node.inputs[0]
    rows, cols = im.static_shape(x, node)
    dtype = numpy_dtype(_onnx_dtype(node) or im.dtype_of(x))
    return [im.const(np.eye(rows, cols, k=int(node.attrs.get("k", 0)), dtype=dtype))]


def _onnx_dtype(node: Node) -> str | None:
    to = node.attrs.get("dtype")
    return None if to is None else relay_dtype(to, f"{node.op_type} node '{node.name}'")


# ---- random values -----------------------------------------------------------------------------


def _random(im, node: Node, shape, dtype: str) -> np.ndarray:
    """``RandomNormal(Like)`` / ``RandomUniform(Like)``'s values, drawn and scaled as ONNX's
    reference does (in the output's type)."""
    shape = [int(d) for d in shape]
    refuse_too_large(f"{node.op_type}'s values", tensor_type(shape, dtype))
    if dtype not in ("float16", "bfloat16", "float32", "float64"):
        raise node.fail(f"dtype must be a floating-point type, got {dtype}")
    state, np_type = im.random_state(node), numpy_dtype(dtype)
    a = node.attrs
    if node.op_type.startswith("RandomNormal"):
        res = state.randn(*shape).astype(np_type)
        res *= float(a.get("scale", 1.0))
        res += float(a.get("mean", 0.0))
    else:
        res = state.rand(*shape).astype(np_type)
        res *= float(a.get("high", 1.0)) - float(a.get("low", 0.0))
        res += float(a.get("low", 0.0))
    return res.astype(np_type)


@converter("RandomNormal", "RandomUniform")
def _random_values(im, node):
    if "shape" not in node.attrs:
        raise node.fail("attribute 'shape' is required")
    shape = list(node.attrs["shape"])
    if any(d < 0 for d in shape):
        raise node.fail(f"shape must not be negative, got {shape}")
    return [im.const(_random(im, node, shape, _onnx_dtype(node) or "float32"))]


@converter("RandomNormalLike", "RandomUniformLike")
def _random_values_like(im, node):
    x = node.inputs[0]
    return [im.const(_random(im, node, im.static_shape(x, node), _onnx_dtype(node) or im.dtype_of(x)))]


@converter("Multinomial")
def _multinomial(im, node):
    """``sample_size`` classes per batch row, drawn from the softmax of the row: the uniform
    numbers ``U`` (batch, samples) are drawn at import; the class is the number of cumulative
    probabilities below ``U`` (inverse-CDF sampling), at run time."""
    x = node.inputs[0]
    batch, classes = im.static_shape(x, node) if im.rank(x) == 2 else (None, None)
    if batch is None:
        raise node.fail(f"input must be 2-D (batch, classes), got shape {list(im.shape_of(x))}")
    samples = int(node.attrs.get("sample_size", 1))
    if samples < 1 or classes < 1:
        raise node.fail(f"needs sample_size >= 1 and at least one class, got {samples} and {classes}")
    out = _onnx_dtype(node) or "int32"
    if out not in ("int32", "int64"):
        raise node.fail(f"dtype must be int32 or int64, got {out}")
    refuse_too_large("Multinomial's draws", tensor_type([batch, samples, classes], im.dtype_of(x)))
    u = im.random_state(node).rand(batch, samples, 1).astype(numpy_dtype(im.dtype_of(x)))
    cdf = im.emit1("cumsum", [im.emit1("nn.softmax", [x], axis=1)], axis=1)
    below = im.apply("less", im.reshape(cdf, [batch, 1, classes]), im.const(u))
    count = im.emit1("sum", [im.cast_like(below, "int32")], axis=[2])
    # a rounded cumulative sum may end below 1: a draw past it takes the last class
    last = im.apply("minimum", count, im.const(np.array(classes - 1, np.int32)))
    return [im.cast_like(last, out)]
