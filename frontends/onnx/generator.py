"""ONNX's ``onnx/defs/generator`` operators: ``Constant``, ``ConstantOfShape``, ``Range``,
``EyeLike``.

Their values are computed at import (constants), except ``ConstantOfShape`` of a shape known only
at run time (Relay's ``dyn.full``). A constant that cannot fit in memory is refused before it is
allocated.
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
