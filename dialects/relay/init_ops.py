"""Relay's filled tensors and ``*_like`` ops: ``zeros``, ``ones``, ``full``, ``full_like``,
``reshape_like``, ``broadcast_to_like``, ``cast_like``, ``collapse_sum_like``,
``collapse_sum_to``, and ``argsort``. SimplifyExpr turns the ``*_like`` ops into their
explicit-shape forms where the shapes are static."""

from __future__ import annotations

import math

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import operand_def, result_def, traits_def
from xdsl.traits import Pure

from xrelay.dialects.relay import ops as _ops  # noqa: F401 - relay's own ops register first
from xrelay.dialects.relay.base import (
    Bool,
    Int,
    Ints,
    OpPattern,
    RelayOp,
    Str,
    broadcast_shapes,
    fail,
    new_tensor,
    norm_axis,
    relay_op,
)
from xrelay.dialects.relay.dtypes import DTYPES, dtype_of, shape_of


def _dtype(cls, dtype: str) -> str:
    if dtype not in DTYPES:
        raise fail(cls, f"unknown dtype '{dtype}'")
    return dtype


def _scalar(cls, t: TensorType, what: str) -> None:
    if shape_of(t) != ():
        raise fail(cls, f"{what} must be a scalar (rank 0), got {t}")


class _InitOp(RelayOp):
    result = result_def(TensorType)
    traits = traits_def(Pure())
    shape = Ints()
    dtype = Str()

    @classmethod
    def infer_types(cls, in_types, attrs):
        if any(d < 0 for d in attrs["shape"]):
            raise fail(cls, f"shape must be non-negative, got {list(attrs['shape'])}")
        return [new_tensor(attrs["shape"], _dtype(cls, attrs["dtype"]))]


@relay_op("zeros", OpPattern.ELEMWISE)
class ZerosOp(_InitOp):
    """A tensor of zeros.

    ```mlir
    %y = relay.zeros {shape = [2, 3], dtype = "float32"} : () -> tensor<2x3xf32>
    ```
    """


@relay_op("ones", OpPattern.ELEMWISE)
class OnesOp(_InitOp):
    """A tensor of ones.

    ```mlir
    %y = relay.ones {shape = [2, 3], dtype = "int32"} : () -> tensor<2x3xi32>
    ```
    """


@relay_op("full", OpPattern.ELEMWISE)
class FullOp(RelayOp):
    """A tensor filled with the scalar ``fill_value`` (``dtype`` "" is the fill value's).

    ```mlir
    %y = relay.full %v {shape = [2, 3]} : (tensor<f32>) -> tensor<2x3xf32>
    ```
    """

    fill_value = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    shape = Ints()
    dtype = Str("")

    @classmethod
    def infer_types(cls, in_types, attrs):
        _scalar(cls, in_types[0], "fill_value")
        dtype = attrs["dtype"] or dtype_of(in_types[0].element_type)
        return [new_tensor(attrs["shape"], _dtype(cls, dtype))]


@relay_op("full_like", OpPattern.ELEMWISE)
class FullLikeOp(RelayOp):
    """A tensor of ``data``'s type filled with the scalar ``fill_value``.

    ```mlir
    %y = relay.full_like %x, %v : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    ```
    """

    data = operand_def(TensorType)
    fill_value = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def infer_types(cls, in_types, attrs):
        _scalar(cls, in_types[1], "fill_value")
        return [in_types[0]]


@relay_op("reshape_like", OpPattern.INJECTIVE, reshape_only=True)
class ReshapeLikeOp(RelayOp):
    """Reshape ``data`` to the shape of ``shape_like`` (Relay's begin/end attributes: the slice
    of each shape that is replaced, and what replaces it).

    ```mlir
    %y = relay.reshape_like %x, %like : (tensor<2x6xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    ```
    """

    data = operand_def(TensorType)
    shape_like = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    lhs_begin = Int(0)
    lhs_end = Int(None)
    rhs_begin = Int(0)
    rhs_end = Int(None)

    @classmethod
    def infer_types(cls, in_types, attrs):
        ds, ls = shape_of(in_types[0]), shape_of(in_types[1])

        def span(shape, begin, end):
            b = begin + len(shape) if begin < 0 else begin
            e = len(shape) if end is None else (end + len(shape) if end < 0 else end)
            if not 0 <= b <= e <= len(shape):
                raise fail(cls, f"[{begin}, {end}) is not a range of the axes of {list(shape)}")
            return b, e

        lb, le = span(ds, attrs["lhs_begin"], attrs["lhs_end"])
        rb, re_ = span(ls, attrs["rhs_begin"], attrs["rhs_end"])
        out = list(ds[:lb]) + list(ls[rb:re_]) + list(ds[le:])
        if None not in ds and None not in out and math.prod(ds) != math.prod(out):
            raise fail(cls, f"cannot reshape {in_types[0]} to {out}")
        return [new_tensor(out, dtype_of(in_types[0].element_type))]


@relay_op("broadcast_to_like", OpPattern.BROADCAST)
class BroadcastToLikeOp(RelayOp):
    """Broadcast ``data`` to the shape of ``broadcast_type``.

    ```mlir
    %y = relay.broadcast_to_like %x, %like : (tensor<1x3xf32>, tensor<4x3xi32>) -> tensor<4x3xf32>
    ```
    """

    data = operand_def(TensorType)
    broadcast_type = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def infer_types(cls, in_types, attrs):
        target = shape_of(in_types[1])
        if tuple(broadcast_shapes(cls, in_types)) != tuple(target):
            raise fail(cls, f"cannot broadcast {in_types[0]} to {in_types[1]}")
        return [new_tensor(target, dtype_of(in_types[0].element_type))]


@relay_op("cast_like", OpPattern.ELEMWISE)
class CastLikeOp(RelayOp):
    """Convert ``data`` to the dtype of ``dtype_like``.

    ```mlir
    %y = relay.cast_like %x, %like : (tensor<2x3xf32>, tensor<4xi32>) -> tensor<2x3xi32>
    ```
    """

    data = operand_def(TensorType)
    dtype_like = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def infer_types(cls, in_types, attrs):
        return [new_tensor(shape_of(in_types[0]), dtype_of(in_types[1].element_type))]


def collapse_shape(cls, data: TensorType, target) -> list[int | None]:
    """The target shape of a collapse sum: ``data`` must broadcast to it (numpy rules reversed)."""
    ds = shape_of(data)
    if len(target) > len(ds):
        raise fail(cls, f"cannot collapse {data} to the larger rank of {list(target)}")
    for d, t in zip(ds[len(ds) - len(target) :], target):
        if t is not None and d is not None and t not in (1, d):
            raise fail(cls, f"cannot collapse {data} to {list(target)}")
    return list(target)


@relay_op("collapse_sum_like", OpPattern.COMM_REDUCE)
class CollapseSumLikeOp(RelayOp):
    """Sum ``data`` over the axes along which ``collapse_type`` was broadcast to it.

    ```mlir
    %y = relay.collapse_sum_like %x, %like : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
    ```
    """

    data = operand_def(TensorType)
    collapse_type = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def infer_types(cls, in_types, attrs):
        out = collapse_shape(cls, in_types[0], shape_of(in_types[1]))
        return [new_tensor(out, dtype_of(in_types[0].element_type))]


@relay_op("collapse_sum_to", OpPattern.COMM_REDUCE)
class CollapseSumToOp(RelayOp):
    """Sum ``data`` down to ``shape`` (the inverse of broadcasting); the second operand is the
    shape as an int tensor, as Relay passes it.

    ```mlir
    %y = relay.collapse_sum_to %x, %s {shape = [1, 3]} : (tensor<4x3xf32>, tensor<2xi32>) -> tensor<1x3xf32>
    ```
    """

    data = operand_def(TensorType)
    shape_tensor = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    shape = Ints()

    @classmethod
    def infer_types(cls, in_types, attrs):
        st = shape_of(in_types[1])
        if len(st) != 1 or st[0] not in (None, len(attrs["shape"])):
            raise fail(cls, f"the shape operand {in_types[1]} must list {len(attrs['shape'])} dims")
        out = collapse_shape(cls, in_types[0], attrs["shape"])
        return [new_tensor(out, dtype_of(in_types[0].element_type))]


@relay_op("argsort", OpPattern.OPAQUE)
class ArgsortOp(RelayOp):
    """Indices that sort ``data`` along ``axis`` (stable), as ``dtype``.

    ```mlir
    %y = relay.argsort %x {axis = 1, is_ascend = false} : (tensor<2x5xf32>) -> tensor<2x5xi32>
    ```
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    axis = Int(-1)
    is_ascend = Bool(True)
    dtype = Str("int32")

    @classmethod
    def infer_types(cls, in_types, attrs):
        ds = shape_of(in_types[0])
        norm_axis(cls, attrs["axis"], len(ds))
        return [new_tensor(ds, _dtype(cls, attrs["dtype"]))]
