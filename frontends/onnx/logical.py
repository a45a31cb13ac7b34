"""ONNX's ``onnx/defs/logical`` operators: comparisons, boolean and bitwise logic, shifts.

As Relay's ONNX frontend (TVM v0.19) maps them: ``Equal`` -> ``equal``, ``And`` ->
``logical_and``, ``BitwiseAnd`` -> ``bitwise_and``, ``BitShift`` -> ``left_shift``/
``right_shift``, ``Not`` -> ``logical_not``; ``BitwiseNot`` is an xor with all bits set.
Before opset 7 a comparison's B lines up with A from its ``axis`` attribute on.
"""

from __future__ import annotations

import numpy as np

from xrelay.dialects.relay import numpy_dtype
from xrelay.dialects.relay.strings import StringEqualOp
from xrelay.frontends.onnx.compose import string_op
from xrelay.frontends.onnx.registry import converter

_COMPARE = {
    "Equal": "equal",
    "Less": "less",
    "LessOrEqual": "less_equal",
    "Greater": "greater",
    "GreaterOrEqual": "greater_equal",
}


@converter(*_COMPARE)
def _compare(im, node):
    if node.op_type == "Equal" and any(im.is_string(v) for v in node.inputs[:2]):
        return string_op(im, node, StringEqualOp, node.inputs[:2])
    return im.emit(_COMPARE[node.op_type], list(im.broadcast_operands(node)))


@converter("Not")
def _not(im, node):
    return im.emit("logical_not", [node.inputs[0]])


@converter("BitShift")
def _bit_shift(im, node):
    direction = node.attrs.get("direction")
    if direction not in ("LEFT", "RIGHT"):
        raise node.fail(f"direction must be LEFT or RIGHT, got {direction!r}")
    name = "left_shift" if direction == "LEFT" else "right_shift"
    return im.emit(name, [node.inputs[0], node.inputs[1]])


_LOGIC = {
    "And": "logical_and",
    "Or": "logical_or",
    "Xor": "logical_xor",
    "BitwiseAnd": "bitwise_and",
    "BitwiseOr": "bitwise_or",
    "BitwiseXor": "bitwise_xor",
}


@converter(*_LOGIC)
def _logic(im, node):
    return im.emit(_LOGIC[node.op_type], node.inputs[:2])


@converter("BitwiseNot")
def _bitwise_not(im, node):
    x = node.inputs[0]
    ones = np.array(-1).astype(numpy_dtype(im.dtype_of(x)))  # all bits set
    return im.emit("bitwise_xor", [x, im.const(ones)])
