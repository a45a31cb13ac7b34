"""Relay's further elementwise ops (trigonometry, sign/trunc, logical, bitwise, modulo).

They follow Relay's definitions: ``mod`` is C's ``fmod`` (the sign of the dividend),
``floor_mod`` the sign of the divisor; ``floor_divide`` rounds toward -inf; the ``logical_*``
ops take and give bool; ``bitwise_*`` take integers or bool. The kernels are in
``xrelay.kernels.elementwise``.
"""

from __future__ import annotations

from xrelay.dialects.relay import ops as _ops  # noqa: F401 - relay's own ops register first
from xrelay.dialects.relay.base import OpPattern, fail, relay_op, same_dtype
from xrelay.dialects.relay.ops import BinaryOp, UnaryOp, _dt

_INT_OR_BOOL = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


class _FloatUnaryOp(UnaryOp):
    @classmethod
    def infer_types(cls, in_types, attrs):
        if not _dt(in_types[0]).startswith(("float", "bfloat")):
            raise fail(cls, f"expects a floating-point operand, got {in_types[0]}")
        return [in_types[0]]


@relay_op("sin", OpPattern.ELEMWISE)
class SinOp(_FloatUnaryOp):
    """Sine.

    ```mlir
    %y = relay.sin %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("cos", OpPattern.ELEMWISE)
class CosOp(_FloatUnaryOp):
    """Cosine.

    ```mlir
    %y = relay.cos %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("tan", OpPattern.ELEMWISE)
class TanOp(_FloatUnaryOp):
    """Tangent.

    ```mlir
    %y = relay.tan %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("atan", OpPattern.ELEMWISE)
class AtanOp(_FloatUnaryOp):
    """Arc tangent.

    ```mlir
    %y = relay.atan %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("sign", OpPattern.ELEMWISE)
class SignOp(UnaryOp):
    """-1, 0 or 1 by the sign of x (the identity on bool).

    ```mlir
    %y = relay.sign %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("trunc", OpPattern.ELEMWISE)
class TruncOp(UnaryOp):
    """Round toward zero (integers unchanged).

    ```mlir
    %y = relay.trunc %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


class _BoolUnaryOp(UnaryOp):
    @classmethod
    def infer_types(cls, in_types, attrs):
        if _dt(in_types[0]) != "bool":
            raise fail(cls, f"expects a bool operand, got {in_types[0]}")
        return [in_types[0]]


@relay_op("logical_not", OpPattern.ELEMWISE)
class LogicalNotOp(_BoolUnaryOp):
    """not x.

    ```mlir
    %y = relay.logical_not %x : (tensor<4xi1>) -> tensor<4xi1>
    ```
    """


class _LogicalOp(BinaryOp):
    @classmethod
    def infer_types(cls, in_types, attrs):
        if same_dtype(cls, in_types) != "bool":
            raise fail(cls, f"expects bool operands, got {in_types[0]}")
        return super().infer_types(in_types, attrs)


@relay_op("logical_and", OpPattern.BROADCAST)
class LogicalAndOp(_LogicalOp):
    """x and y.

    ```mlir
    %z = relay.logical_and %x, %y : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    ```
    """


@relay_op("logical_or", OpPattern.BROADCAST)
class LogicalOrOp(_LogicalOp):
    """x or y.

    ```mlir
    %z = relay.logical_or %x, %y : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    ```
    """


@relay_op("logical_xor", OpPattern.BROADCAST)
class LogicalXorOp(_LogicalOp):
    """x xor y.

    ```mlir
    %z = relay.logical_xor %x, %y : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    ```
    """


class _BitwiseOp(BinaryOp):
    @classmethod
    def infer_types(cls, in_types, attrs):
        if same_dtype(cls, in_types) not in _INT_OR_BOOL:
            raise fail(cls, f"expects integer or bool operands, got {in_types[0]}")
        return super().infer_types(in_types, attrs)


@relay_op("bitwise_and", OpPattern.BROADCAST)
class BitwiseAndOp(_BitwiseOp):
    """x & y.

    ```mlir
    %z = relay.bitwise_and %x, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    ```
    """


@relay_op("bitwise_or", OpPattern.BROADCAST)
class BitwiseOrOp(_BitwiseOp):
    """x | y.

    ```mlir
    %z = relay.bitwise_or %x, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    ```
    """


@relay_op("bitwise_xor", OpPattern.BROADCAST)
class BitwiseXorOp(_BitwiseOp):
    """x ^ y.

    ```mlir
    %z = relay.bitwise_xor %x, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    ```
    """


@relay_op("mod", OpPattern.BROADCAST)
class ModOp(BinaryOp):
    """The remainder of truncating division (C ``fmod``: the sign of x).

    ```mlir
    %z = relay.mod %x, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    ```
    """


@relay_op("floor_mod", OpPattern.BROADCAST)
class FloorModOp(BinaryOp):
    """The remainder of flooring division (the sign of y).

    ```mlir
    %z = relay.floor_mod %x, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    ```
    """


@relay_op("floor_divide", OpPattern.BROADCAST)
class FloorDivideOp(BinaryOp):
    """floor(x / y).

    ```mlir
    %z = relay.floor_divide %x, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    ```
    """
