"""Integer relay ops the qnn lowering emits: fixed-point multiplies and bit shifts.

``fixed_point_multiply`` and ``fixed_point_multiply_per_axis`` are Relay's ops of those names
(TOPI ``q_multiply_shift``: ``round_half_up(x * m * 2**(shift - 31))`` computed in int64, m a
Q31 multiplier); ``qnn.requantize`` with UPWARD rounding lowers to them. ``left_shift`` and
``right_shift`` (arithmetic) serve the TONEAREST lowering. All are elementwise/broadcast.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import operand_def, result_def, traits_def
from xdsl.traits import Pure

from xrelay.dialects.relay import ops as _ops  # noqa: F401 - relay's own ops register first
from xrelay.dialects.relay.base import (
    RELAY_OPS,
    Bool,
    Int,
    Ints,
    OpPattern,
    RelayOp,
    broadcast_shapes,
    fail,
    new_tensor,
    relay_op,
    same_dtype,
)
from xrelay.dialects.relay.dtypes import dtype_of, shape_of

_INT = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


@relay_op("fixed_point_multiply", OpPattern.ELEMWISE)
class FixedPointMultiplyOp(RelayOp):
    """``x * multiplier * 2**(shift - 31)`` rounded half up, on int32 (Relay's op of this name).

    ```mlir
    %y = relay.fixed_point_multiply %x {multiplier = 1395864371, shift = -5} : (tensor<1x16xi32>) -> tensor<1x16xi32>
    ```
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    multiplier = Int()
    shift = Int()

    @classmethod
    def infer_types(cls, in_types, attrs):
        if dtype_of(in_types[0].element_type) != "int32":
            raise fail(cls, f"expects an int32 tensor, got {in_types[0]}")
        if not -(2**31) <= attrs["multiplier"] < 2**31:
            raise fail(cls, f"multiplier {attrs['multiplier']} does not fit in int32")
        return [in_types[0]]


@relay_op("fixed_point_multiply_per_axis", OpPattern.BROADCAST)
class FixedPointMultiplyPerAxisOp(RelayOp):
    """Per-channel ``fixed_point_multiply``: multiplier and shifts are int32 vectors along ``axes``.

    ```mlir
    %y = relay.fixed_point_multiply_per_axis %x, %m, %ls, %rs {is_lshift_required = false, is_rshift_required = true, axes = [1]}
           : (tensor<1x8x4x4xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>) -> tensor<1x8x4x4xi32>
    ```
    """

    data = operand_def(TensorType)
    fixed_point_multiplier = operand_def(TensorType)
    left_shift = operand_def(TensorType)
    right_shift = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    is_lshift_required = Bool()
    is_rshift_required = Bool()
    axes = Ints()

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, *params = in_types
        ds = shape_of(data)
        if dtype_of(data.element_type) != "int32":
            raise fail(cls, f"expects an int32 tensor, got {data}")
        axes = attrs["axes"]
        if len(axes) != 1 or not -len(ds) <= axes[0] < len(ds):
            raise fail(cls, f"axes must name one axis of {data}, got {list(axes)}")
        n = ds[axes[0]]
        for t, what in zip(params, ("fixed_point_multiplier", "left_shift", "right_shift")):
            s = shape_of(t)
            if dtype_of(t.element_type) != "int32" or len(s) != 1 or (
                None not in (n, s[0]) and s[0] != n
            ):
                raise fail(cls, f"{what} must be an int32 vector of {n} values, got {t}")
        return [data]


class _ShiftOp(RelayOp):
    # Typed as Relay's BroadcastRel types it: any one dtype on both sides. A float shift is
    # well-typed Relay (TVM's fusion tests build one) that no target computes: TVM fails when
    # TOPI lowers it, xrelay's kernels and the C target refuse it by name.
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def infer_types(cls, in_types, attrs):
        dtype = same_dtype(cls, in_types)
        return [new_tensor(broadcast_shapes(cls, in_types), dtype)]


# Shifts are also on the layout issue's list of missing ops; whichever module defines them
# first owns them, so the two never register one name twice.
if "left_shift" not in RELAY_OPS:

    @relay_op("left_shift", OpPattern.BROADCAST)
    class LeftShiftOp(_ShiftOp):
        """``lhs << rhs`` (broadcasting; computed for integers only).

        ```mlir
        %y = relay.left_shift %x, %s : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
        ```
        """

    @relay_op("right_shift", OpPattern.BROADCAST)
    class RightShiftOp(_ShiftOp):
        """``lhs >> rhs``, arithmetic for signed integers (broadcasting).

        ```mlir
        %y = relay.right_shift %x, %s : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
        ```
        """
