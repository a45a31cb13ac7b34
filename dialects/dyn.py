"""The dyn dialect: Relay's dynamic operators (``dyn.*``), whose shape arguments are tensors.

Relay's static ops take a new shape, slice bounds, repetitions or pads as attributes. When
those are only known at run time (an ONNX graph input, ``shape_of`` of a dynamic tensor),
Relay uses the ``dyn`` variant, which takes them as operands and types its result with ``?``
dimensions (Relay's ``Any``) where the value decides the size. ``dynamic-to-static``
(Relay's ``DynamicToStatic``) turns a dyn op back into its static op once those operands fold
to constants; the reference interpreter runs the dyn form directly.

    %y = dyn.reshape %x, %shape : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>

Each op names the static op it becomes (``STATIC``), which operands carry values the static op
takes as attributes (``VALUE_OPERANDS``), and how (``static_attrs``): the kernels (which run
the static kernel on the values) and ``dynamic-to-static`` both read it from here. The ops are
``RelayOp`` subclasses (same syntax, ``attrs``, ``make`` and ``infer_types``) registered in
``DYN_OPS`` by Relay name (``"dyn.reshape"``), not in ``RELAY_OPS``. Relay's
``dyn.sparse_to_dense`` and ``dyn.nn.upsampling3d`` are not here: their static ops are not in
the relay dialect yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Dialect
from xdsl.irdl import operand_def, result_def, traits_def, var_result_def
from xdsl.traits import Pure

from xrelay.dialects.relay import RELAY_OPS
from xrelay.dialects.relay.base import (
    Bool,
    Float,
    Int,
    OpPattern,
    RelayOp,
    RelayTypeError,
    Str,
    fail,
    new_tensor,
    relay_op,
)
from xrelay.dialects.relay.dtypes import DTYPES, MAX_RANK, dtype_of, shape_of
from xrelay.dialects.relay.spatial import _hw

DYN_OPS: dict[str, type[DynOp]] = {}
"""Every dyn op class by its Relay name (``"dyn.reshape"``)."""


def dyn_op(name: str, pattern: OpPattern, *, reshape_only: bool = False):
    """Register a dyn op (its Relay name carries the ``dyn.`` prefix, as the op's name does)."""
    return relay_op(name, pattern, reshape_only=reshape_only, dialect="dyn", registry=DYN_OPS)


class DynOp(RelayOp):
    """A dyn op: the static op it becomes and how its value operands become attributes."""

    STATIC: ClassVar[str] = ""
    """The relay op this becomes when its value operands are known (``"reshape"``)."""

    VALUE_OPERANDS: ClassVar[tuple[int, ...]] = ()
    """Operands whose values become the static op's attributes; the others stay operands."""

    @classmethod
    def static_attrs(cls, attrs: dict[str, Any], values: Sequence[np.ndarray]) -> dict[str, Any]:
        """The static op's attributes from this op's attributes and the values of
        ``VALUE_OPERANDS`` (in that order); ValueError when a value has the wrong form."""
        raise NotImplementedError

    @classmethod
    def static_operands(cls, operands: Sequence[Any]) -> list[Any]:
        """The operands the static op keeps, in order."""
        return [v for i, v in enumerate(operands) if i not in cls.VALUE_OPERANDS]


def _int_vector(cls, t: TensorType, what: str) -> int:
    """The length of a 1-D integer operand of static length (Relay needs a static rank)."""
    s = shape_of(t)
    if len(s) != 1 or s[0] is None:
        raise fail(cls, f"{what} must be a 1-D tensor of static length, got {t}")
    if not dtype_of(t.element_type).startswith(("int", "uint")):
        raise fail(cls, f"{what} must hold integers, got {t}")
    return s[0]


def _scalar(cls, t: TensorType, what: str) -> None:
    if shape_of(t) != ():
        raise fail(cls, f"{what} must be a scalar (rank 0), got {t}")


def _ints(value: np.ndarray, what: str, ndim: int = 1) -> list:
    a = np.asarray(value)
    if a.ndim != ndim:
        raise ValueError(f"{what} must be {ndim}-D, got shape {list(a.shape)}")
    if a.dtype.kind not in "iu":
        raise ValueError(f"{what} must hold integers, got {a.dtype}")
    return a.astype(np.int64).tolist()


def _dt(t: TensorType) -> str:
    return dtype_of(t.element_type)


@dyn_op("dyn.reshape", OpPattern.INJECTIVE, reshape_only=True)
class DynReshapeOp(DynOp):
    """Reshape to the shape held by ``newshape`` (0 copies, -1 infers, -3 merges two axes).

    ```mlir
    %y = dyn.reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
    ```
    """

    data = operand_def(TensorType)
    newshape = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    allowzero = Bool(False)
    STATIC: ClassVar[str] = "reshape"
    VALUE_OPERANDS: ClassVar[tuple[int, ...]] = (1,)

    @classmethod
    def infer_types(cls, in_types, attrs):
        rank = _int_vector(cls, in_types[1], "newshape")
        return [new_tensor([None] * rank, _dt(in_types[0]))]

    @classmethod
    def static_attrs(cls, attrs, values):
        shape = _ints(values[0], "newshape")
        if any(d in (-2, -4) for d in shape):
            raise ValueError("dyn.reshape does not allow -2 or -4 (they make the rank dynamic)")
        return {"newshape": shape, "allowzero": attrs["allowzero"]}


@dyn_op("dyn.broadcast_to", OpPattern.BROADCAST)
class DynBroadcastToOp(DynOp):
    """Broadcast to the shape held by ``shape``.

    ```mlir
    %y = dyn.broadcast_to %x, %s : (tensor<1x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
    ```
    """

    data = operand_def(TensorType)
    shape = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    STATIC: ClassVar[str] = "broadcast_to"
    VALUE_OPERANDS: ClassVar[tuple[int, ...]] = (1,)

    @classmethod
    def infer_types(cls, in_types, attrs):
        rank = _int_vector(cls, in_types[1], "shape")
        return [new_tensor([None] * rank, _dt(in_types[0]))]

    @classmethod
    def static_attrs(cls, attrs, values):
        return {"shape": _ints(values[0], "shape")}


@dyn_op("dyn.tile", OpPattern.INJECTIVE)
class DynTileOp(DynOp):
    """Repeat the tensor ``reps`` times per axis (``reps`` a 1-D tensor).

    ```mlir
    %y = dyn.tile %x, %r : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
    ```
    """

    data = operand_def(TensorType)
    reps = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    STATIC: ClassVar[str] = "tile"
    VALUE_OPERANDS: ClassVar[tuple[int, ...]] = (1,)

    @classmethod
    def infer_types(cls, in_types, attrs):
        n = _int_vector(cls, in_types[1], "reps")
        rank = max(len(shape_of(in_types[0])), n)
        return [new_tensor([None] * rank, _dt(in_types[0]))]

    @classmethod
    def static_attrs(cls, attrs, values):
        reps = _ints(values[0], "reps")
        if any(r < 0 for r in reps):
            raise ValueError(f"reps must be non-negative, got {reps}")
        return {"reps": reps}


@dyn_op("dyn.strided_slice", OpPattern.INJECTIVE)
class DynStridedSliceOp(DynOp):
    """Slice the first ``len(begin)`` axes by run-time ``begin``/``end``/``strides`` (the rest
    whole), with strided_slice's clamping; ``slice_mode`` end|size.

    ```mlir
    %y = dyn.strided_slice %x, %b, %e, %s : (tensor<4x5xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x5xf32>
    ```
    """

    data = operand_def(TensorType)
    begin = operand_def(TensorType)
    end = operand_def(TensorType)
    strides = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    slice_mode = Str("end")
    STATIC: ClassVar[str] = "strided_slice"
    VALUE_OPERANDS: ClassVar[tuple[int, ...]] = (1, 2, 3)

    @classmethod
    def infer_types(cls, in_types, attrs):
        ds = shape_of(in_types[0])
        n = _int_vector(cls, in_types[1], "begin")
        for t, what in ((in_types[2], "end"), (in_types[3], "strides")):
            if _int_vector(cls, t, what) != n:
                raise fail(cls, f"begin, end and strides must have the same length, got {in_types[1:]}")
        if n > len(ds):
            raise fail(cls, f"{n} sliced axes for {in_types[0]} of rank {len(ds)}")
        if attrs["slice_mode"] not in ("end", "size"):
            raise fail(cls, f"slice_mode must be 'end' or 'size', got '{attrs['slice_mode']}'")
        return [new_tensor([None] * n + list(ds[n:]), _dt(in_types[0]))]

    @classmethod
    def static_attrs(cls, attrs, values):
        begin, end, strides = (_ints(v, w) for v, w in zip(values, ("begin", "end", "strides")))
        if any(s == 0 for s in strides):
            raise ValueError("strides must be non-zero")
        return {"begin": begin, "end": end, "strides": strides, "slice_mode": attrs["slice_mode"]}


@dyn_op("dyn.expand_dims", OpPattern.INJECTIVE)
class DynExpandDimsOp(DynOp):
    """Insert ``num_newaxis`` size-1 axes at the scalar ``axis``.

    ```mlir
    %y = dyn.expand_dims %x, %a {num_newaxis = 1} : (tensor<2x3xf32>, tensor<i64>) -> tensor<?x?x?xf32>
    ```
    """

    data = operand_def(TensorType)
    axis = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    num_newaxis = Int(1)
    STATIC: ClassVar[str] = "expand_dims"
    VALUE_OPERANDS: ClassVar[tuple[int, ...]] = (1,)

    @classmethod
    def infer_types(cls, in_types, attrs):
        _scalar(cls, in_types[1], "axis")
        if attrs["num_newaxis"] < 0:
            raise fail(cls, f"num_newaxis must be >= 0, got {attrs['num_newaxis']}")
        rank = len(shape_of(in_types[0])) + attrs["num_newaxis"]
        if rank > MAX_RANK:  # before the list is built (2**31 entries would need 17 GB)
            raise fail(cls, f"num_newaxis {attrs['num_newaxis']} gives rank {rank}, more than the {MAX_RANK} dimensions a tensor can have")
        return [new_tensor([None] * rank, _dt(in_types[0]))]

    @classmethod
    def static_attrs(cls, attrs, values):
        return {"axis": _ints(values[0], "axis", ndim=0), "num_newaxis": attrs["num_newaxis"]}


@dyn_op("dyn.squeeze", OpPattern.INJECTIVE, reshape_only=True)
class DynSqueezeOp(DynOp):
    """Remove the size-1 axes listed in the 1-D tensor ``axes``.

    ```mlir
    %y = dyn.squeeze %x, %a : (tensor<1x3x1xf32>, tensor<2xi64>) -> tensor<?xf32>
    ```
    """

    data = operand_def(TensorType)
    axes = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    STATIC: ClassVar[str] = "squeeze"
    VALUE_OPERANDS: ClassVar[tuple[int, ...]] = (1,)

    @classmethod
    def infer_types(cls, in_types, attrs):
        n = _int_vector(cls, in_types[1], "axes")
        rank = len(shape_of(in_types[0]))
        if n > rank:
            raise fail(cls, f"{n} axes to squeeze from {in_types[0]}")
        return [new_tensor([None] * (rank - n), _dt(in_types[0]))]

    @classmethod
    def static_attrs(cls, attrs, values):
        return {"axis": _ints(values[0], "axes")}


class _DynInitOp(DynOp):
    shape = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    dtype = Str()
    VALUE_OPERANDS: ClassVar[tuple[int, ...]] = (0,)

    @classmethod
    def infer_types(cls, in_types, attrs):
        rank = _int_vector(cls, in_types[0], "shape")
        if attrs["dtype"] not in DTYPES:
            raise fail(cls, f"unknown dtype '{attrs['dtype']}'")
        return [new_tensor([None] * rank, attrs["dtype"])]

    @classmethod
    def static_attrs(cls, attrs, values):
        shape = _ints(values[0], "shape")
        if any(d < 0 for d in shape):
            raise ValueError(f"shape must be non-negative, got {shape}")
        return {"shape": shape, "dtype": attrs["dtype"]}


@dyn_op("dyn.zeros", OpPattern.OPAQUE)
class DynZerosOp(_DynInitOp):
    """A tensor of zeros of the shape held by ``shape`` (Relay gives it no fusion pattern).

    ```mlir
    %y = dyn.zeros %s {dtype = "float32"} : (tensor<2xi64>) -> tensor<?x?xf32>
    ```
    """

    STATIC: ClassVar[str] = "zeros"


@dyn_op("dyn.ones", OpPattern.OPAQUE)
class DynOnesOp(_DynInitOp):
    """A tensor of ones of the shape held by ``shape``.

    ```mlir
    %y = dyn.ones %s {dtype = "int32"} : (tensor<2xi64>) -> tensor<?x?xi32>
    ```
    """

    STATIC: ClassVar[str] = "ones"


@dyn_op("dyn.full", OpPattern.ELEMWISE)
class DynFullOp(DynOp):
    """A tensor of the shape held by ``shape`` filled with the scalar ``fill_value``
    (``dtype`` "" is the fill value's).

    ```mlir
    %y = dyn.full %v, %s : (tensor<f32>, tensor<2xi64>) -> tensor<?x?xf32>
    ```
    """

    fill_value = operand_def(TensorType)
    shape = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    dtype = Str("")
    STATIC: ClassVar[str] = "full"
    VALUE_OPERANDS: ClassVar[tuple[int, ...]] = (1,)

    @classmethod
    def infer_types(cls, in_types, attrs):
        _scalar(cls, in_types[0], "fill_value")
        rank = _int_vector(cls, in_types[1], "shape")
        dtype = attrs["dtype"] or _dt(in_types[0])
        if dtype not in DTYPES:
            raise fail(cls, f"unknown dtype '{dtype}'")
        return [new_tensor([None] * rank, dtype)]

    @classmethod
    def static_attrs(cls, attrs, values):
        shape = _ints(values[0], "shape")
        if any(d < 0 for d in shape):
            raise ValueError(f"shape must be non-negative, got {shape}")
        return {"shape": shape, "dtype": attrs["dtype"]}


@dyn_op("dyn.nn.pad", OpPattern.INJECTIVE)
class DynPadOp(DynOp):
    """Pad by the run-time ``pad_width`` (a ``[rank, 2]`` integer tensor of (before, after))
    with the scalar ``pad_value``; ``pad_mode`` constant|edge|reflect.

    ```mlir
    %y = dyn.nn.pad %x, %w, %v : (tensor<2x3xf32>, tensor<2x2xi64>, tensor<f32>) -> tensor<?x?xf32>
    ```
    """

    data = operand_def(TensorType)
    pad_width = operand_def(TensorType)
    pad_value = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    pad_mode = Str("constant")
    STATIC: ClassVar[str] = "nn.pad"
    VALUE_OPERANDS: ClassVar[tuple[int, ...]] = (1,)

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, width, value = in_types
        rank = len(shape_of(data))
        ws = shape_of(width)
        if len(ws) != 2 or ws[1] not in (2, None) or ws[0] not in (rank, None):
            raise fail(cls, f"pad_width must be a [{rank}, 2] tensor, got {width}")
        if not _dt(width).startswith(("int", "uint")):
            raise fail(cls, f"pad_width must hold integers, got {width}")
        _scalar(cls, value, "pad_value")
        if _dt(value) != _dt(data):
            raise fail(cls, f"pad_value {value} differs in dtype from the data {data}")
        if attrs["pad_mode"] not in ("constant", "edge", "reflect"):
            raise fail(cls, f"unknown pad_mode '{attrs['pad_mode']}'")
        return [new_tensor([None] * rank, _dt(data))]

    @classmethod
    def static_attrs(cls, attrs, values):
        return {"pad_width": _ints(values[0], "pad_width", ndim=2), "pad_mode": attrs["pad_mode"]}


_NCHW_ONLY = "only the NCHW layout is supported by the dyn image ops"


@dyn_op("dyn.nn.upsampling", OpPattern.INJECTIVE)
class DynUpSamplingOp(DynOp):
    """Upsample H and W by the run-time scalars ``scale_h``, ``scale_w``.

    ```mlir
    %y = dyn.nn.upsampling %x, %sh, %sw : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<f32>) -> tensor<1x2x?x?xf32>
    ```
    """

    data = operand_def(TensorType)
    scale_h = operand_def(TensorType)
    scale_w = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    layout = Str("NCHW")
    method = Str("nearest_neighbor")
    align_corners = Bool(False)
    STATIC: ClassVar[str] = "nn.upsampling"
    VALUE_OPERANDS: ClassVar[tuple[int, ...]] = (1, 2)

    @classmethod
    def infer_types(cls, in_types, attrs):
        data = in_types[0]
        _scalar(cls, in_types[1], "scale_h")
        _scalar(cls, in_types[2], "scale_w")
        # any layout the static op takes (NCHW, NHWC, a blocked NCHW16c): H and W unknown

        h, w = _hw(cls, attrs["layout"], data)
        ds = list(shape_of(data))
        ds[h] = ds[w] = None
        return [new_tensor(ds, _dt(data))]

    @classmethod
    def static_attrs(cls, attrs, values):
        sh, sw = (float(np.asarray(v).reshape(())) for v in values)
        return {"scale_h": sh, "scale_w": sw, **{k: attrs[k] for k in ("layout", "method", "align_corners")}}


@dyn_op("dyn.image.resize2d", OpPattern.INJECTIVE)
class DynResize2DOp(DynOp):
    """Resize H and W to the run-time ``size`` (2 values) with the run-time ``roi`` (4 values,
    used by tf_crop_and_resize); the attributes are ``image.resize2d``'s.

    ```mlir
    %y = dyn.image.resize2d %x, %size, %roi : (tensor<1x2x4x4xf32>, tensor<2xi64>, tensor<4xf32>) -> tensor<1x2x?x?xf32>
    ```
    """

    data = operand_def(TensorType)
    size = operand_def(TensorType)
    roi = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    layout = Str("NCHW")
    method = Str("linear")
    coordinate_transformation_mode = Str("half_pixel")
    rounding_method = Str("")
    cubic_alpha = Float(-0.5)
    cubic_exclude = Int(0)
    extrapolation_value = Float(0.0)
    out_dtype = Str("")
    STATIC: ClassVar[str] = "image.resize2d"
    VALUE_OPERANDS: ClassVar[tuple[int, ...]] = (1, 2)
    _PASSED: ClassVar[tuple[str, ...]] = (
        "layout", "method", "coordinate_transformation_mode", "rounding_method", "cubic_alpha",
        "cubic_exclude", "extrapolation_value", "out_dtype",
    )  # fmt: skip

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, size, roi = in_types
        if shape_of(size) not in ((2,), (None,)):
            raise fail(cls, f"size must hold 2 values, got {size}")
        if shape_of(roi) not in ((4,), (None,)):
            raise fail(cls, f"roi must hold 4 values, got {roi}")
        ds = list(shape_of(data))
        if len(ds) != 4 or attrs["layout"] != "NCHW":
            raise fail(cls, f"{_NCHW_ONLY}; got layout {attrs['layout']} and {data}")
        # the static op checks the method names: build one to report them here too
        static = RELAY_OPS["image.resize2d"]
        try:
            static.infer_types([data], static.complete_attrs({"size": [1, 1], **{k: attrs[k] for k in cls._PASSED}}, [data]))
        except RelayTypeError as e:
            raise fail(cls, str(e).removeprefix(f"{static.name}: ")) from None
        return [new_tensor(ds[:2] + [None, None], attrs["out_dtype"] or _dt(data))]

    @classmethod
    def static_attrs(cls, attrs, values):
        size = np.asarray(values[0])
        if size.shape != (2,):
            raise ValueError(f"size must hold 2 values, got shape {list(size.shape)}")
        roi = np.asarray(values[1], dtype=np.float64).reshape(-1).tolist()
        return {"size": [int(s) for s in size], "roi": roi, **{k: attrs[k] for k in cls._PASSED}}


@dyn_op("dyn.topk", OpPattern.OPAQUE)
class DynTopKOp(DynOp):
    """``topk`` with a run-time ``k`` (a scalar or a 1-element tensor): the ``axis`` dimension
    of the results is ``?``.

    ```mlir
    %v, %i = dyn.topk %x, %k : (tensor<3x4xf32>, tensor<i64>) -> (tensor<3x?xf32>, tensor<3x?xi32>)
    ```
    """

    data = operand_def(TensorType)
    k = operand_def(TensorType)
    outputs = var_result_def(TensorType)
    traits = traits_def(Pure())
    axis = Int(-1)
    ret_type = Str("both")
    is_ascend = Bool(False)
    dtype = Str("int32")
    STATIC: ClassVar[str] = "topk"
    VALUE_OPERANDS: ClassVar[tuple[int, ...]] = (1,)
    _PASSED: ClassVar[tuple[str, ...]] = ("axis", "ret_type", "is_ascend", "dtype")

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, k = in_types
        if shape_of(k) not in ((), (1,)):
            raise fail(cls, f"k must be a scalar or a tensor of shape (1,), got {k}")
        static = RELAY_OPS["topk"]
        try:  # the static relation with k < 1 (the whole axis) checks axis, ret_type, dtype
            types = static.infer_types([data], static.complete_attrs({"k": 0, **{a: attrs[a] for a in cls._PASSED}}, [data]))
        except RelayTypeError as e:
            raise fail(cls, str(e).removeprefix(f"{static.name}: ")) from None
        rank = len(shape_of(data))
        axis = attrs["axis"] + rank if attrs["axis"] < 0 else attrs["axis"]
        return [new_tensor([None if i == axis else d for i, d in enumerate(shape_of(t))], _dt(t)) for t in types]

    @classmethod
    def static_attrs(cls, attrs, values):
        return {"k": _ints(np.asarray(values[0]).reshape(()), "k", ndim=0), **{a: attrs[a] for a in cls._PASSED}}


@dyn_op("dyn.one_hot", OpPattern.OUT_ELEMWISE_FUSABLE)
class DynOneHotOp(DynOp):
    """``one_hot`` with a run-time ``depth`` (a scalar): the new axis is ``?``.

    ```mlir
    %y = dyn.one_hot %i, %on, %off, %d {dtype = "float32"} : (tensor<4xi64>, tensor<f32>, tensor<f32>, tensor<i64>) -> tensor<4x?xf32>
    ```
    """

    indices = operand_def(TensorType)
    on_value = operand_def(TensorType)
    off_value = operand_def(TensorType)
    depth = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    axis = Int(-1)
    dtype = Str()
    STATIC: ClassVar[str] = "one_hot"
    VALUE_OPERANDS: ClassVar[tuple[int, ...]] = (3,)

    @classmethod
    def infer_types(cls, in_types, attrs):
        indices, on, off, depth = in_types
        _scalar(cls, depth, "depth")
        static = RELAY_OPS["one_hot"]
        try:  # the static relation with depth 0 checks indices, values, dtype and axis
            (t,) = static.infer_types([indices, on, off], static.complete_attrs({"depth": 0, "axis": attrs["axis"], "dtype": attrs["dtype"]}, [indices, on, off]))
        except RelayTypeError as e:
            raise fail(cls, str(e).removeprefix(f"{static.name}: ")) from None
        rank = len(shape_of(indices))
        axis = rank if attrs["axis"] == -1 else attrs["axis"]
        return [new_tensor([None if i == axis else d for i, d in enumerate(shape_of(t))], attrs["dtype"])]

    @classmethod
    def static_attrs(cls, attrs, values):
        depth = _ints(np.asarray(values[0]).astype(np.int64) if np.asarray(values[0]).dtype.kind == "f" else values[0], "depth", ndim=0)
        return {"depth": depth, "axis": attrs["axis"], "dtype": attrs["dtype"]}


Dyn = Dialect("dyn", list(DYN_OPS.values()), [])

__all__ = ["DYN_OPS", "Dyn", "DynOp", "dyn_op"]
