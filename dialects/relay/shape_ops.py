"""Relay's gathers, repeats and shape ops beyond ``ops.py``: ``repeat``, ``gather_nd``,
``ndarray_size``, ``contrib_reverse_reshape`` (``relay.reverse_reshape``) and ``slice_like``."""

from __future__ import annotations

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
    fail,
    new_tensor,
    norm_axis,
    relay_op,
)
from xrelay.dialects.relay.dtypes import DTYPES, dtype_of, shape_of
from xrelay.dialects.relay.ops import infer_reshape


@relay_op("repeat", OpPattern.BROADCAST)
class RepeatOp(RelayOp):
    """Repeat each element ``repeats`` times along ``axis`` (numpy's ``repeat``).

    ```mlir
    %y = relay.repeat %x {repeats = 3, axis = 1} : (tensor<2x1xf32>) -> tensor<2x3xf32>
    ```
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    repeats = Int()
    axis = Int()

    @classmethod
    def infer_types(cls, in_types, attrs):
        ds = list(shape_of(in_types[0]))
        if attrs["repeats"] < 1:
            raise fail(cls, f"repeats must be at least 1, got {attrs['repeats']}")
        axis = norm_axis(cls, attrs["axis"], len(ds))
        ds[axis] = None if ds[axis] is None else ds[axis] * attrs["repeats"]
        return [new_tensor(ds, dtype_of(in_types[0].element_type))]


@relay_op("gather_nd", OpPattern.INJECTIVE)
class GatherNDOp(RelayOp):
    """Gather slices of ``data`` at the index tuples of ``indices`` (index tuples along
    ``indices``' *first* axis, as in Relay; ONNX's are along the last).

    With ``data`` of shape ``(B..., X_0, ..., X_n)`` (``batch_dims`` leading batch axes) and
    ``indices`` of shape ``(M, B..., Y...)``, the result is ``(B..., Y..., X_M, ..., X_n)``.

    ```mlir
    %y = relay.gather_nd %x, %i : (tensor<3x4x5xf32>, tensor<2x6xi64>) -> tensor<6x5xf32>
    ```
    """

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    batch_dims = Int(0)
    index_rank = Int(None)

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, indices = in_types
        ds, ids = shape_of(data), shape_of(indices)
        if dtype_of(indices.element_type) not in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
            raise fail(cls, f"indices must be integers, got {indices}")
        if not ids:
            raise fail(cls, f"indices {indices} must have rank >= 1")
        b = attrs["batch_dims"]
        m = ids[0] if attrs["index_rank"] is None else attrs["index_rank"]
        if m is None:
            raise fail(cls, f"the index depth (first axis of {indices}) must be static")
        if attrs["index_rank"] is not None and ids[0] is not None and ids[0] != m:
            raise fail(cls, f"index_rank = {m} but indices {indices} have {ids[0]} along axis 0")
        if b < 0 or b + m > len(ds):
            raise fail(cls, f"batch_dims {b} + index depth {m} exceed the rank of {data}")
        if len(ids) - 1 < b:
            raise fail(cls, f"indices {indices} lack the {b} batch axes")
        for k in range(b):
            if ids[1 + k] is not None and ds[k] is not None and ids[1 + k] != ds[k]:
                raise fail(cls, f"batch axis {k}: indices {indices} and data {data} disagree")
        out = list(ids[1:]) + list(ds[b + m :])
        return [new_tensor(out, dtype_of(data.element_type))]


@relay_op("ndarray_size", OpPattern.INJECTIVE)
class NdarraySizeOp(RelayOp):
    """The number of elements of ``data``, a scalar of ``dtype``.

    ```mlir
    %n = relay.ndarray_size %x {dtype = "int64"} : (tensor<2x3xf32>) -> tensor<i64>
    ```
    """

    RELAY_TEXT_ALWAYS = frozenset({"dtype"})

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    dtype = Str("int32")

    @classmethod
    def infer_types(cls, in_types, attrs):
        if attrs["dtype"] not in DTYPES:
            raise fail(cls, f"unknown dtype '{attrs['dtype']}'")
        return [new_tensor([], attrs["dtype"])]


@relay_op("contrib_reverse_reshape", OpPattern.INJECTIVE, reshape_only=True)
class ReverseReshapeOp(RelayOp):
    """Reshape whose special values (0, -1, -2, -3) are read right to left (``relay.reverse_reshape``).

    ```mlir
    %y = relay.contrib_reverse_reshape %x {newshape = [-1, 0]} : (tensor<10x5x4xf32>) -> tensor<50x4xf32>
    ```
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    newshape = Ints()
    allowzero = Bool(False)

    @classmethod
    def infer_types(cls, in_types, attrs):
        if -4 in attrs["newshape"]:
            raise fail(cls, "-4 (split a dimension) is not supported in reverse")
        ds = shape_of(in_types[0])
        out = infer_reshape(cls, ds[::-1], attrs["newshape"][::-1], attrs["allowzero"])
        return [new_tensor(out[::-1], dtype_of(in_types[0].element_type))]


@relay_op("slice_like", OpPattern.INJECTIVE)
class SliceLikeOp(RelayOp):
    """The first ``shape_like.shape[a]`` entries of ``data`` along each axis ``a`` of ``axes``
    (all axes both tensors have when absent).

    ```mlir
    %y = relay.slice_like %x, %t {axes = [2, 3]} : (tensor<1x4x8x8xf32>, tensor<1x2x5x6xf32>) -> tensor<1x4x5x6xf32>
    ```
    """

    data = operand_def(TensorType)
    shape_like = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    axes = Ints(None)

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, like = in_types
        ds, ts = list(shape_of(data)), shape_of(like)
        if attrs["axes"] is None:
            axes = list(range(min(len(ds), len(ts))))
        else:
            if not attrs["axes"]:
                raise fail(cls, "axes cannot be empty")
            axes = [norm_axis(cls, a, len(ds)) for a in attrs["axes"]]
            for a in axes:
                if a >= len(ts):
                    raise fail(cls, f"axis {a} overflows {like} (data {data})")
        for a in axes:
            if ds[a] is not None and ts[a] is not None and ts[a] > ds[a]:
                raise fail(cls, f"end index of axis {a} exceeds the input shape: {ts[a]} vs {ds[a]}")
            ds[a] = ts[a]
        return [new_tensor(ds, dtype_of(data.element_type))]
