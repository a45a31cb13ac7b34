"""The qnn dialect: Relay's quantized operators (``qnn.*``) with scales and zero points as operands.

Ops are named ``qnn.<name>`` as in Relay (``qnn.conv2d``); attributes are properties with Relay's
names and defaults, shared with the relay op they quantize where Relay shares them
(``qnn.conv2d`` has ``nn.conv2d``'s attributes). Scales are ``f32`` and zero points ``i32``
tensors, either scalars (per-tensor) or vectors along ``axis`` (per-channel), checked as Relay's
type relations check them. The syntax is the relay dialect's::

    %y = qnn.requantize %x, %in_scale, %in_zp, %out_scale, %out_zp {rounding = "TONEAREST"}
           : (tensor<1x16xi32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x16xi8>

Every op but ``qnn.simulated_quantize`` / ``qnn.simulated_dequantize`` is lowered to integer
relay ops by ``qnn-canonicalize-ops`` (Relay's ``qnn.transform.CanonicalizeOps``); the reference
kernels in ``xrelay.kernels.qnn`` give each op its meaning directly, so the lowering can be
checked against them. The ops are ``RelayOp`` subclasses (same machinery, same ``attrs``,
``make`` and ``infer_types``) registered in ``QNN_OPS`` by Relay name, not in ``RELAY_OPS``.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Dialect
from xdsl.irdl import operand_def, result_def, traits_def, var_operand_def
from xdsl.traits import Pure

from xrelay.dialects.relay.base import (
    Bool,
    Float,
    Int,
    Ints,
    OpPattern,
    RelayOp,
    Str,
    broadcast_shapes,
    fail,
    new_tensor,
    relay_op,
)
from xrelay.dialects.relay.dtypes import dtype_of, shape_of
from xrelay.dialects.relay.layout import (
    Layout,
    LayoutInference,
    binary_broadcast_layout,
    concatenate_layout,
    conv_layout,
    convert_conv2d,
    convert_conv2d_transpose,
    convert_pool,
    pool_layout,
    register_convert_layout,
    register_infer_layout,
)
from xrelay.dialects.relay.ops import (
    AvgPool2DOp,
    BatchMatmulOp,
    ConcatenateOp,
    Conv2DOp,
    Conv2DTransposeOp,
    DenseOp,
    UnaryOp,
    _ConvBase,
    _JoinOp,
    depthwise_multiplier,
)

QNN_OPS: dict[str, type[RelayOp]] = {}
"""Every qnn op class by its Relay name (``"qnn.conv2d"``)."""

QUANTIZED_DTYPES = ("int8", "uint8", "int16", "uint16", "int32")

SQNN_DTYPE_TO_CODE = {"disable": 0, "int8": 1, "uint8": 2, "int32": 3}
"""Relay's codes for the dtype operand of the simulated ops (``topi.nn.qnn``)."""


def qnn_op(name: str, pattern: OpPattern = OpPattern.OPAQUE):
    """Register a qnn op; Relay gives most qnn ops no pattern (opaque), conv2d/dense kOutEWiseFusable."""
    return relay_op(name, pattern, dialect="qnn", registry=QNN_OPS)


def _dt(t: TensorType) -> str:
    return dtype_of(t.element_type)


def _check_dtype(cls, t: TensorType, allowed: Sequence[str], what: str) -> None:
    if _dt(t) not in allowed:
        raise fail(cls, f"{what} must be one of [{', '.join(allowed)}], got {t}")


def _check_out_dtype(cls, dtype: str, allowed: Sequence[str]) -> None:
    if dtype not in allowed:
        raise fail(cls, f"out_dtype must be one of [{', '.join(allowed)}], got '{dtype}'")


def check_scalar(cls, t: TensorType, dtype: str, what: str) -> None:
    """A per-tensor parameter: a 0-d tensor of ``dtype`` (Relay's IsScalarType)."""
    if shape_of(t) != () or _dt(t) != dtype:
        raise fail(cls, f"{what} must be a scalar tensor<{_short(dtype)}>, got {t}")


def check_param(cls, t: TensorType, dtype: str, n: int | None, what: str) -> None:
    """A scale or zero point: a scalar, or a vector of ``n`` values (Relay's AssignType); one
    value in a 1-element vector counts as a scalar, as in Relay's quantize/dequantize."""
    s = shape_of(t)
    if _dt(t) != dtype or not (
        s == () or (len(s) == 1 and (n is None or s[0] is None or s[0] in (n, 1)))
    ):
        want = f"a scalar or a vector of {n} values" if n is not None else "a scalar or a vector"
        raise fail(cls, f"{what} must be {want} of {dtype}, got {t}")


def channel_axis(cls, axis: int, rank: int, name: str = "axis") -> int:
    """Relay's axis rule for quantization parameters: negative counts from the end, rank 0 is 0."""
    a = (rank + axis if rank > 0 else 0) if axis < 0 else axis
    if not 0 <= a < max(rank, 1):
        raise fail(cls, f"{name} {axis} is out of range for rank {rank}")
    return a


def _short(dtype: str) -> str:
    return {"float32": "f32", "int32": "i32"}.get(dtype, dtype)


# ============================================================================================
# quantize, dequantize, requantize
# ============================================================================================


@qnn_op("qnn.quantize")
class QuantizeOp(RelayOp):
    """Float to integer: ``clip(round(data / scale) + zero_point)`` cast to ``out_dtype``.

    Scale and zero point are scalars or vectors along ``axis`` (per-channel).

    ```mlir
    %q = qnn.quantize %x, %scale, %zp {out_dtype = "uint8"}
           : (tensor<1x8xf32>, tensor<f32>, tensor<i32>) -> tensor<1x8xui8>
    ```
    """

    data = operand_def(TensorType)
    output_scale = operand_def(TensorType)
    output_zero_point = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    axis = Int(-1)
    out_dtype = Str("int8")

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, scale, zp = in_types
        _check_dtype(cls, data, ("float32",), "data")
        ds = shape_of(data)
        axis = channel_axis(cls, attrs["axis"], len(ds))
        n = ds[axis] if ds else 1
        check_param(cls, scale, "float32", n, "output_scale")
        check_param(cls, zp, "int32", n, "output_zero_point")
        _check_out_dtype(cls, attrs["out_dtype"], QUANTIZED_DTYPES)
        return [new_tensor(ds, attrs["out_dtype"])]


@qnn_op("qnn.dequantize")
class DequantizeOp(RelayOp):
    """Integer to float: ``scale * (data - zero_point)``.

    ```mlir
    %x = qnn.dequantize %q, %scale, %zp : (tensor<1x8xui8>, tensor<f32>, tensor<i32>) -> tensor<1x8xf32>
    ```
    """

    data = operand_def(TensorType)
    input_scale = operand_def(TensorType)
    input_zero_point = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    axis = Int(-1)
    out_dtype = Str("float32")

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, scale, zp = in_types
        _check_dtype(cls, data, QUANTIZED_DTYPES, "data")
        ds = shape_of(data)
        axis = channel_axis(cls, attrs["axis"], len(ds))
        n = ds[axis] if ds else 1
        check_param(cls, scale, "float32", n, "input_scale")
        check_param(cls, zp, "int32", n, "input_zero_point")
        _check_out_dtype(cls, attrs["out_dtype"], ("float16", "float32"))
        return [new_tensor(ds, attrs["out_dtype"])]


SUM_ORDERS = ("sequential", "eigen")
"""The orders ``qnn.dequantize_sum`` adds in (see the op)."""


def sum_block(cls, rank: int, axes: Sequence[int], order: str) -> tuple[int, int, bool]:
    """``qnn.dequantize_sum``'s axes checked: ``(first, last, trailing)`` of the block of
    consecutive axes it reduces, which must start the shape or end it (``eigen``: end it)."""
    if order not in SUM_ORDERS:
        raise fail(cls, f"order must be one of {', '.join(SUM_ORDERS)}, got '{order}'")
    norm = sorted({a + rank if a < 0 else a for a in axes})
    if not norm or norm[0] < 0 or norm[-1] >= rank or norm != list(range(norm[0], norm[-1] + 1)):
        raise fail(cls, f"axes {list(axes)} must be consecutive axes of a rank-{rank} tensor")
    trailing = norm[-1] == rank - 1
    if not trailing and norm[0] != 0:
        raise fail(cls, f"axes {list(axes)} must start or end the shape")
    if order == "eigen" and not trailing:
        raise fail(cls, f"the eigen order sums rows: axes {list(axes)} must end the shape")
    return norm[0], norm[-1], trailing


@qnn_op("qnn.dequantize_sum", OpPattern.COMM_REDUCE)
class DequantizeSumOp(RelayOp):
    """A per-tensor ``qnn.dequantize`` summed over ``axes`` (kept as size 1) in float32, added
    in a stated ``order``: the float sum of a reduction is its order, and onnxruntime's
    ReduceMean/ReduceSum of dequantized values has one (``fake-quantization-to-integer
    {onnxruntime=true}`` writes it). The axes are a block that starts or ends the shape; each
    value is ``float32(data - zero_point) * scale``.

    * ``sequential``: first to last (``((v0 + v1) + v2) + ...``), each position of the
      other axes on its own;
    * ``eigen`` (axes ending the shape): each row of ``n`` values as Eigen's vectorised
      ``sum()`` adds 4-float packets on x86-64 with the rows stored one after another from a
      16-byte aligned address: row ``r``'s ``h = min(-(r * n) mod 4, n)`` head values are
      skipped, its whole packets go to two accumulators (even and odd packets, in order; one
      packet alone is the first), which are added, then a last odd packet; the lanes are added
      as ``(l0 + l2) + (l1 + l3)``, then the head and the tail values one by one. A row with
      no whole packet is added first to last.

    ```mlir
    %y = qnn.dequantize_sum %q, %scale, %zp {axes = [2, 3], order = "eigen"}
           : (tensor<1x8x7x7xui8>, tensor<f32>, tensor<i32>) -> tensor<1x8x1x1xf32>
    ```
    """

    data = operand_def(TensorType)
    input_scale = operand_def(TensorType)
    input_zero_point = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    axes = Ints()
    order = Str("sequential")

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, scale, zp = in_types
        _check_dtype(cls, data, ("int8", "uint8"), "data")
        check_scalar(cls, scale, "float32", "input_scale")
        check_scalar(cls, zp, "int32", "input_zero_point")
        ds = list(shape_of(data))
        first, last, _ = sum_block(cls, len(ds), attrs["axes"] or [], attrs["order"])
        return [new_tensor([1 if first <= i <= last else d for i, d in enumerate(ds)], "float32")]


@qnn_op("qnn.ort_layer_norm", OpPattern.OPAQUE)
class OrtLayerNormOp(RelayOp):
    """A float32 layer normalisation over the last axis (``n >= 8`` values a row) computed
    as onnxruntime's x86-64 CPU kernel does (its LayerNormalization, measured bit for bit on
    onnxruntime 1.31 with AVX-512): the row's mean in float64 rounded to float32 (``m``),
    the centred values ``c = float32(x - m)``, their squares summed by fused multiply-adds
    in eight float32 lanes (value ``i`` to lane ``i mod 8`` for the whole blocks of eight,
    lanes folded as halves: ``(l0..3 + l4..7)``, then ``(0,1) + (2,3)``, then ``0 + 1``),
    the last ``n mod 8`` squares fused-multiply-added after the fold; ``inv = 1 /
    sqrt(sum / n + epsilon)`` in float32 (a division, not a reciprocal estimate), and
    ``y = fma(c * inv, gamma, beta)``. ``fake-quantization-to-integer{onnxruntime=true}``
    writes it for an ``nn.layer_norm`` between quantized values.

    ```mlir
    %y = qnn.ort_layer_norm %x, %gamma, %beta {epsilon = 1e-12}
           : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    ```
    """

    data = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    epsilon = Float(1e-5)

    @classmethod
    def infer_types(cls, in_types, attrs):
        data = in_types[0]
        _check_dtype(cls, data, ("float32",), "data")
        ds = shape_of(data)
        if not ds or ds[-1] is None or ds[-1] < 8:
            raise fail(cls, f"rows of at least 8 values (onnxruntime's vector kernel), got shape {list(ds)}")
        for t, what in zip(in_types[1:], ("gamma", "beta")):
            _check_dtype(cls, t, ("float32",), what)
            if list(shape_of(t)) != [ds[-1]]:
                raise fail(cls, f"{what} must have shape [{ds[-1]}], got {list(shape_of(t))}")
        return [data]


@qnn_op("qnn.ort_gelu", OpPattern.ELEMWISE)
class OrtGeluOp(UnaryOp):
    """float32 GELU ``0.5 x (1 + erf(x / sqrt 2))`` as onnxruntime's x86-64 CPU kernel with
    AVX-512 computes it (its Gelu, com.microsoft Gelu and the GeluFusion of the erf form,
    measured bit for bit on onnxruntime 1.31): ``t = float32(x * 0.70710677)``; ``|t|``
    capped at 3.925; up to 0.921875 the odd polynomial ``fma(p(t^2), |t|, |t|)``, above it
    ``1 - exp(-q(|t|))`` with MLAS's exp (round to an integer power of two, two-part ln 2,
    degree-6 polynomial, scaled), every step a float32 fused multiply-add; the sign put
    back; ``y = (0.5 x) * (erf + 1)``. Blocks of 16 values run that way; onnxruntime
    computes a last partial block of 16 (within each 4096-value chunk) with the C library's
    ``erff`` instead, which this op does too.

    ```mlir
    %y = qnn.ort_gelu %x : (tensor<1x128x3072xf32>) -> tensor<1x128x3072xf32>
    ```
    """

    @classmethod
    def infer_types(cls, in_types, attrs):
        _check_dtype(cls, in_types[0], ("float32",), "data")
        return super().infer_types(in_types, attrs)


@qnn_op("qnn.ort_softmax", OpPattern.OPAQUE)
class OrtSoftmaxOp(RelayOp):
    """A uint8 softmax along ``axis`` as onnxruntime's QLinearSoftmax computes it (its CPU
    kernel, measured bit for bit on onnxruntime 1.31): a table of 256 float32 values
    ``float32(exp((i - 255 + shift) * s_x))`` with ``shift = max(0, ln(FLT_MAX / D) - 5) / s_x``
    (in double; ``D`` the axis' length), each row's values looked up at ``q - max(row) + 255``,
    their float32 sum added first to last, and each output
    ``min(255, nearbyint(t * floor(1 / s_y) / sum) + zp_y)`` in float32 (rounding half to even).
    The input's zero point cancels (softmax does not depend on a shift). ``fake-quantization-
    to-integer{onnxruntime=true}`` writes it for a uint8 softmax whose result is quantized to
    uint8.

    ```mlir
    %y = qnn.ort_softmax %q, %s_x, %s_y, %zp_y {axis = -1}
           : (tensor<1x12x128x128xui8>, tensor<f32>, tensor<f32>, tensor<i32>) -> tensor<1x12x128x128xui8>
    ```
    """

    data = operand_def(TensorType)
    input_scale = operand_def(TensorType)
    output_scale = operand_def(TensorType)
    output_zero_point = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    axis = Int(-1)

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, s_x, s_y, zp = in_types
        _check_dtype(cls, data, ("uint8",), "data")
        check_scalar(cls, s_x, "float32", "input_scale")
        check_scalar(cls, s_y, "float32", "output_scale")
        check_scalar(cls, zp, "int32", "output_zero_point")
        rank = len(shape_of(data))
        if not -rank <= attrs["axis"] < rank:
            raise fail(cls, f"axis {attrs['axis']} is out of range for rank {rank}")
        return [data]


ROUNDINGS = ("None", "UPWARD", "TONEAREST")
COMPUTE_DTYPES = ("None", "int64", "float32", "float64")

_REQUANTIZE_CONFIG: contextvars.ContextVar[tuple[str, str]] = contextvars.ContextVar(
    "requantize_config", default=("UPWARD", "int64")
)


@contextlib.contextmanager
def requantize_config(rounding: str | None = None, compute_dtype: str | None = None):
    """Relay's ``qnn.requantize_config``: the rounding and compute dtype that requantize ops
    with "None" get when they are lowered (or run) inside the ``with`` block.

    The defaults are UPWARD and int64 (Relay's without a target).
    """
    cur = _REQUANTIZE_CONFIG.get()
    if rounding is not None and rounding not in ROUNDINGS[1:]:
        raise ValueError(f"requantize_config: rounding must be UPWARD or TONEAREST, got {rounding!r}")
    if compute_dtype is not None and compute_dtype not in COMPUTE_DTYPES[1:]:
        raise ValueError(f"requantize_config: unknown compute_dtype {compute_dtype!r}")
    token = _REQUANTIZE_CONFIG.set((rounding or cur[0], compute_dtype or cur[1]))
    try:
        yield
    finally:
        _REQUANTIZE_CONFIG.reset(token)


def resolve_requantize(rounding: str, compute_dtype: str) -> tuple[str, str]:
    """An op's rounding and compute dtype, "None" replaced by the current ``requantize_config``."""
    cur = _REQUANTIZE_CONFIG.get()
    return (cur[0] if rounding == "None" else rounding, cur[1] if compute_dtype == "None" else compute_dtype)


@qnn_op("qnn.requantize")
class RequantizeOp(RelayOp):
    """One quantized tensor to another: ``out_zp + in_scale / out_scale * (data - in_zp)``.

    The input scale and zero point may be per-channel along ``axis``; the output's are scalars.
    ``rounding`` ("UPWARD", "TONEAREST") and ``compute_dtype`` ("int64", "float32",
    "float64") default to "None": the lowering then uses Relay's defaults (UPWARD, int64).

    ```mlir
    %y = qnn.requantize %acc, %s_in, %zp_in, %s_out, %zp_out {out_dtype = "uint8"}
           : (tensor<1x16xi32>, tensor<16xf32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x16xui8>
    ```
    """

    data = operand_def(TensorType)
    input_scale = operand_def(TensorType)
    input_zero_point = operand_def(TensorType)
    output_scale = operand_def(TensorType)
    output_zero_point = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    axis = Int(-1)
    rounding = Str("None")
    compute_dtype = Str("None")
    out_dtype = Str("int8")

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, s_in, zp_in, s_out, zp_out = in_types
        _check_dtype(cls, data, ("int8", "uint8", "int16", "int32", "int64"), "data")
        ds = shape_of(data)
        axis = channel_axis(cls, attrs["axis"], len(ds))
        n = ds[axis] if ds else 1
        check_param(cls, s_in, "float32", n, "input_scale")
        check_param(cls, zp_in, "int32", n, "input_zero_point")
        check_scalar(cls, s_out, "float32", "output_scale")
        check_scalar(cls, zp_out, "int32", "output_zero_point")
        if attrs["rounding"] not in ROUNDINGS:
            raise fail(cls, f"rounding must be one of {', '.join(ROUNDINGS)}, got '{attrs['rounding']}'")
        if attrs["compute_dtype"] not in COMPUTE_DTYPES:
            raise fail(
                cls,
                f"compute_dtype must be one of {', '.join(COMPUTE_DTYPES)}, got '{attrs['compute_dtype']}'",
            )
        _check_out_dtype(cls, attrs["out_dtype"], ("int8", "uint8", "int16", "int32"))
        return [new_tensor(ds, attrs["out_dtype"])]


# ============================================================================================
# Convolutions, dense, batch_matmul
# ============================================================================================


def _check_conv_quant(
    cls, in_types, attrs, o_len: int | None, allowed_weight: Sequence[str], one_value_vectors: bool = False,
    zp_len: int | None = -1,
):  # fmt: skip
    data, weight, zp_in, zp_k, s_in, s_k = in_types
    _check_dtype(cls, data, ("int8", "uint8", "int16"), "data")
    _check_dtype(cls, weight, allowed_weight, "weight")
    _check_out_dtype(cls, attrs["out_dtype"], ("int16", "int32", "int64"))
    if one_value_vectors:  # Relay's conv2d_transpose takes a scalar or a vector of one value
        check_param(cls, zp_in, "int32", 1, "input_zero_point")
        check_param(cls, s_in, "float32", 1, "input_scale")
    else:
        check_scalar(cls, zp_in, "int32", "input_zero_point")
        check_scalar(cls, s_in, "float32", "input_scale")
    check_param(cls, zp_k, "int32", o_len if zp_len == -1 else zp_len, "kernel_zero_point")
    check_param(cls, s_k, "float32", o_len, "kernel_scale")


class _QnnConvBase(_ConvBase):
    # all six operands in Relay's order (IRDL puts a subclass's own fields first)
    data = operand_def(TensorType)
    weight = operand_def(TensorType)
    input_zero_point = operand_def(TensorType)
    kernel_zero_point = operand_def(TensorType)
    input_scale = operand_def(TensorType)
    kernel_scale = operand_def(TensorType)
    out_dtype = Str("int32")


@qnn_op("qnn.conv2d", OpPattern.OUT_ELEMWISE_FUSABLE)
class QnnConv2DOp(_QnnConvBase):
    """Quantized 2-D convolution: ``conv2d(data - input_zp, weight - kernel_zp)`` in ``out_dtype``.

    Operands: data, weight, input_zero_point, kernel_zero_point, input_scale, kernel_scale
    (Relay's order). The result's scale is ``input_scale * kernel_scale`` and its zero point 0;
    ``qnn.requantize`` brings it back to 8 bits. The kernel's scale and zero point may be
    per output channel.

    ```mlir
    %y = qnn.conv2d %x, %w, %zp_x, %zp_w, %s_x, %s_w {padding = [1, 1, 1, 1], channels = 8, kernel_size = [3, 3]}
           : (tensor<1x4x8x8xui8>, tensor<8x4x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<8xf32>)
           -> tensor<1x8x8x8xi32>
    ```
    """

    @classmethod
    def infer_types(cls, in_types, attrs):
        out = Conv2DOp.infer_types.__func__(cls, in_types[:2], attrs)
        ws = shape_of(in_types[1])
        o = ws[attrs["kernel_layout"].index("O")] if "O" in attrs["kernel_layout"] else None
        zp_len = -1
        if attrs["groups"] != 1 and attrs["channels"] is not None:
            cin = shape_of(in_types[0])[attrs["data_layout"].index("C")]
            w_oi = (o, ws[attrs["kernel_layout"].index("I")])
            if depthwise_multiplier(cin, w_oi, attrs["groups"], attrs["channels"], attrs["kernel_size"]):
                zp_len = o  # subtracted along the weight's O axis (C), as Relay's legalization does
            o = attrs["channels"]
        _check_conv_quant(cls, in_types, attrs, o, ("int8", "uint8", "int16"), zp_len=zp_len)
        return out


@qnn_op("qnn.conv2d_transpose")
class QnnConv2DTransposeOp(_QnnConvBase):
    """Quantized transposed 2-D convolution (weight IOHW by default), ``out_dtype`` int32.

    ```mlir
    %y = qnn.conv2d_transpose %x, %w, %zp_x, %zp_w, %s_x, %s_w {strides = [2, 2]}
           : (tensor<1x8x4x4xi8>, tensor<8x4x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>)
           -> tensor<1x4x9x9xi32>
    ```
    """

    output_padding = Ints((0, 0))
    kernel_layout = Str("IOHW")
    PAIRS = ("strides", "dilation", "output_padding")

    @classmethod
    def infer_types(cls, in_types, attrs):
        out = Conv2DTransposeOp.infer_types.__func__(cls, in_types[:2], attrs)
        c = shape_of(out[0])[attrs["data_layout"].index("C")]
        _check_conv_quant(cls, in_types, attrs, c, ("int8", "uint8"), one_value_vectors=True)
        return out


@qnn_op("qnn.dense", OpPattern.OUT_ELEMWISE_FUSABLE)
class QnnDenseOp(RelayOp):
    """Quantized dense: ``(data - input_zp) @ (weight - kernel_zp).T`` in ``out_dtype``.

    ```mlir
    %y = qnn.dense %x, %w, %zp_x, %zp_w, %s_x, %s_w {units = 10}
           : (tensor<1x64xi8>, tensor<10x64xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<10xf32>)
           -> tensor<1x10xi32>
    ```
    """

    data = operand_def(TensorType)
    weight = operand_def(TensorType)
    input_zero_point = operand_def(TensorType)
    kernel_zero_point = operand_def(TensorType)
    input_scale = operand_def(TensorType)
    kernel_scale = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    units = Int(None)
    out_dtype = Str("int32")

    @classmethod
    def infer_types(cls, in_types, attrs):
        out = DenseOp.infer_types.__func__(cls, in_types[:2], attrs)
        data, weight, zp_in, zp_k, s_in, s_k = in_types
        _check_dtype(cls, data, ("int8", "uint8", "int16", "uint16"), "data")
        _check_dtype(cls, weight, ("int8", "uint8"), "weight")
        _check_out_dtype(cls, attrs["out_dtype"], ("int32", "int64"))
        check_scalar(cls, zp_in, "int32", "input_zero_point")
        check_scalar(cls, s_in, "float32", "input_scale")
        units = shape_of(weight)[0]
        check_param(cls, zp_k, "int32", units, "kernel_zero_point")
        check_param(cls, s_k, "float32", units, "kernel_scale")
        return out


@qnn_op("qnn.batch_matmul")
class QnnBatchMatmulOp(RelayOp):
    """Quantized batch matmul ``(x - x_zp) @ (y - y_zp)^T`` (Relay supports only transpose_b).

    ```mlir
    %z = qnn.batch_matmul %x, %y, %zp_x, %zp_y, %s_x, %s_y
           : (tensor<2x4x8xi8>, tensor<2x3x8xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>)
           -> tensor<2x4x3xi32>
    ```
    """

    tensor_a = operand_def(TensorType)
    tensor_b = operand_def(TensorType)
    x_zero_point = operand_def(TensorType)
    y_zero_point = operand_def(TensorType)
    x_scale = operand_def(TensorType)
    y_scale = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    out_dtype = Str("int32")
    transpose_a = Bool(False)
    transpose_b = Bool(True)

    @classmethod
    def infer_types(cls, in_types, attrs):
        if attrs["transpose_a"] or not attrs["transpose_b"]:
            raise fail(cls, "only transpose_a = false, transpose_b = true is supported (as in Relay)")
        out = BatchMatmulOp.infer_types.__func__(cls, in_types[:2], attrs)
        x, y, zp_x, zp_y, s_x, s_y = in_types
        _check_dtype(cls, x, ("int8", "uint8"), "x")
        _check_dtype(cls, y, ("int8", "uint8"), "y")
        _check_out_dtype(cls, attrs["out_dtype"], ("int32",))
        check_scalar(cls, zp_x, "int32", "x_zero_point")
        check_scalar(cls, zp_y, "int32", "y_zero_point")
        check_scalar(cls, s_x, "float32", "x_scale")
        check_scalar(cls, s_y, "float32", "y_scale")
        return out


# ============================================================================================
# Binary ops
# ============================================================================================


class _QnnBinaryOp(RelayOp):
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    lhs_scale = operand_def(TensorType)
    lhs_zero_point = operand_def(TensorType)
    rhs_scale = operand_def(TensorType)
    rhs_zero_point = operand_def(TensorType)
    output_scale = operand_def(TensorType)
    output_zero_point = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    lhs_axis = Int(-1)
    rhs_axis = Int(-1)

    @classmethod
    def infer_types(cls, in_types, attrs):
        lhs, rhs, s_l, zp_l, s_r, zp_r, s_o, zp_o = in_types
        for t, s, zp, key, side in ((lhs, s_l, zp_l, "lhs_axis", "lhs"), (rhs, s_r, zp_r, "rhs_axis", "rhs")):
            sh = shape_of(t)
            n = None
            if shape_of(s) != () or shape_of(zp) != ():
                rank = len(sh)
                a = channel_axis(cls, attrs[key], rank, key) if rank > 1 else 0
                n = sh[a] if sh else 1
            check_param(cls, s, "float32", n, f"{side}_scale")
            check_param(cls, zp, "int32", n, f"{side}_zero_point")
        check_scalar(cls, s_o, "float32", "output_scale")
        check_scalar(cls, zp_o, "int32", "output_zero_point")
        if _dt(lhs) != _dt(rhs):
            raise fail(cls, f"lhs and rhs dtypes differ: {lhs}, {rhs}")
        return [new_tensor(broadcast_shapes(cls, [lhs, rhs]), _dt(lhs))]


@qnn_op("qnn.add", OpPattern.BROADCAST)
class QnnAddOp(_QnnBinaryOp):
    """Quantized add: both sides requantized to the output's parameters, added, clipped.

    ```mlir
    %z = qnn.add %a, %b, %sa, %zpa, %sb, %zpb, %so, %zpo
           : (tensor<1x8xui8>, tensor<1x8xui8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>)
           -> tensor<1x8xui8>
    ```
    """


@qnn_op("qnn.subtract", OpPattern.BROADCAST)
class QnnSubtractOp(_QnnBinaryOp):
    """Quantized subtract (as ``qnn.add`` with a subtraction).

    ```mlir
    %z = qnn.subtract %a, %b, %sa, %zpa, %sb, %zpb, %so, %zpo
           : (tensor<1x8xi8>, tensor<1x8xi8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>)
           -> tensor<1x8xi8>
    ```
    """


@qnn_op("qnn.mul", OpPattern.BROADCAST)
class QnnMulOp(_QnnBinaryOp):
    """Quantized multiply: ``(a - zpa) * (b - zpb)`` requantized from ``sa * sb`` to the output.

    ```mlir
    %z = qnn.mul %a, %b, %sa, %zpa, %sb, %zpb, %so, %zpo
           : (tensor<1x8xui8>, tensor<1x8xui8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>)
           -> tensor<1x8xui8>
    ```
    """


# ============================================================================================
# concatenate, avg_pool2d
# ============================================================================================


@qnn_op("qnn.concatenate")
class QnnConcatenateOp(_JoinOp):
    """Quantized concatenate: each input requantized to the output's parameters, then joined.

    Relay passes three tuples; here the variadic operands are the N tensors, then their N
    scales, then their N zero points, then the output scale and zero point.

    ```mlir
    %y = qnn.concatenate %a, %b, %sa, %sb, %zpa, %zpb, %so, %zpo {axis = 1}
           : (tensor<1x2xi8>, tensor<1x3xi8>, tensor<f32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<i32>)
           -> tensor<1x5xi8>
    ```
    """

    data = var_operand_def(TensorType)
    output_scale = operand_def(TensorType)
    output_zero_point = operand_def(TensorType)

    @classmethod
    def infer_types(cls, in_types, attrs):
        *rest, s_o, zp_o = in_types
        if not rest or len(rest) % 3:
            raise fail(cls, f"expects N tensors, N scales and N zero points, got {len(rest)} operands")
        n = len(rest) // 3
        tensors, scales, zps = rest[:n], rest[n : 2 * n], rest[2 * n :]
        for i, (s, zp) in enumerate(zip(scales, zps)):
            check_scalar(cls, s, "float32", f"input_scales[{i}]")
            check_scalar(cls, zp, "int32", f"input_zero_points[{i}]")
        check_scalar(cls, s_o, "float32", "output_scale")
        check_scalar(cls, zp_o, "int32", "output_zero_point")
        return ConcatenateOp.infer_types.__func__(cls, tensors, attrs)

    @classmethod
    def split_operands(cls, operands: Sequence):
        """(tensors, scales, zero points, output scale, output zero point)."""
        *rest, s_o, zp_o = operands
        n = len(rest) // 3
        return list(rest[:n]), list(rest[n : 2 * n]), list(rest[2 * n :]), s_o, zp_o


@qnn_op("qnn.avg_pool2d", OpPattern.OUT_ELEMWISE_FUSABLE)
class QnnAvgPool2DOp(RelayOp):
    """Quantized 2-D average pooling; input and output share the dtype (int8, uint8).

    ```mlir
    %y = qnn.avg_pool2d %x, %s, %zp, %so, %zpo {pool_size = [2, 2], strides = [2, 2], layout = "NHWC"}
           : (tensor<1x8x8x4xi8>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x4x4x4xi8>
    ```
    """

    data = operand_def(TensorType)
    input_scale = operand_def(TensorType)
    input_zero_point = operand_def(TensorType)
    output_scale = operand_def(TensorType)
    output_zero_point = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    pool_size = Ints()
    strides = Ints((1, 1))
    dilation = Ints((1, 1))
    padding = Ints((0, 0, 0, 0))
    layout = Str("NCHW")
    out_layout = Str("")
    ceil_mode = Bool(False)
    count_include_pad = Bool(False)

    @classmethod
    def normalize_attrs(cls, attrs, in_types):
        return AvgPool2DOp.normalize_attrs.__func__(cls, attrs, in_types)

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, s_in, zp_in, s_o, zp_o = in_types
        _check_dtype(cls, data, ("int8", "uint8"), "data")
        for t, dtype, what in (
            (s_in, "float32", "input_scale"),
            (zp_in, "int32", "input_zero_point"),
            (s_o, "float32", "output_scale"),
            (zp_o, "int32", "output_zero_point"),
        ):
            check_scalar(cls, t, dtype, what)
        return AvgPool2DOp.infer_types.__func__(cls, in_types[:1], attrs)


# ============================================================================================
# Simulated quantization (float in, float out; the dtype is a runtime operand)
# ============================================================================================


class _SimulatedOp(RelayOp):
    data = operand_def(TensorType)
    dtype_code = operand_def(TensorType)
    scale = operand_def(TensorType)
    zero_point = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    axis = Int(-1)

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, code, scale, zp = in_types
        if shape_of(code) != () or _dt(code) != "int32":
            raise fail(cls, f"the dtype operand must be a scalar tensor<i32> (a code of SQNN_DTYPE_TO_CODE), got {code}")
        for t, what in ((scale, "scale"), (zp, "zero_point")):
            if len(shape_of(t)) > 1:
                raise fail(cls, f"{what} must be a scalar or a vector, got {t}")
        return [data]


@qnn_op("qnn.simulated_quantize", OpPattern.ELEMWISE)
class SimulatedQuantizeOp(_SimulatedOp):
    """Quantize and keep the float type: ``clip(round(x / scale) + zp)`` to the coded dtype's range.

    Operands: data, the dtype code (0 disable, 1 int8, 2 uint8, 3 int32), scale, zero point
    (scalars or vectors along ``axis``; the Python API reshapes them to 1-D as Relay does).

    ```mlir
    %y = qnn.simulated_quantize %x, %code, %s, %zp : (tensor<4x8xf32>, tensor<i32>, tensor<1xf32>, tensor<1xi32>) -> tensor<4x8xf32>
    ```
    """


@qnn_op("qnn.simulated_dequantize", OpPattern.ELEMWISE)
class SimulatedDequantizeOp(_SimulatedOp):
    """Dequantize values held in a float tensor: ``(x - zp) * scale`` unless the code is 0.

    ```mlir
    %y = qnn.simulated_dequantize %x, %code, %s, %zp : (tensor<4x8xf32>, tensor<i32>, tensor<1xf32>, tensor<1xi32>) -> tensor<4x8xf32>
    ```
    """


# ============================================================================================
# Layout rules (Relay's FInferCorrectLayout / FTVMConvertOpLayout for qnn ops): the float op's
# rule for the tensors; every scale and zero point counts as a channel vector ``C``
# ============================================================================================

_C = Layout("C")


def _with_params(rule, n_tensors: int, n_params: int, tensor_types=None):
    def infer(attrs, new, old, types):
        out = rule(attrs, new[:n_tensors] if new is not None else None, old[:n_tensors], types[:n_tensors])
        if out is None:
            return None
        return LayoutInference(list(out.inputs) + [_C] * n_params, out.outputs, out.attrs)

    return infer


register_infer_layout("qnn.conv2d", "qnn.conv2d_transpose")(_with_params(conv_layout, 2, 4))
register_infer_layout("qnn.add", "qnn.subtract", "qnn.mul")(_with_params(binary_broadcast_layout, 2, 6))
register_infer_layout("qnn.avg_pool2d")(_with_params(pool_layout, 1, 4))


@register_infer_layout("qnn.concatenate")
def _qnn_concatenate_layout(attrs, new, old, types):
    n = (len(old) - 2) // 3
    return _with_params(concatenate_layout, n, 2 * n + 2)(attrs, new, old, types)


@register_infer_layout("qnn.requantize")
def _requantize_layout(attrs, new, old, types):
    """``axis`` follows its dimension; a blocked sub-axis is kept only with per-tensor
    parameters (RequantizeInferCorrectLayout)."""
    if new is not None and old[0] is not None:
        rank = len(shape_of(types[0]))
        axis = rank - 1 if attrs["axis"] == -1 else attrs["axis"]
        dim = old[0][axis]
        per_tensor = shape_of(types[1]) == () and shape_of(types[2]) == ()
        kept = [(a, f) for a, f in new[0].axes if a.isupper() or per_tensor]
        attrs["axis"] = next((i for i, (a, _) in enumerate(kept) if a == dim), attrs["axis"])
        ret = Layout("".join(a if a.isupper() else f"{f}{a}" for a, f in kept))
    else:
        ret = old[0]
    return LayoutInference([ret] + [_C] * 4, [ret], attrs)


def _renamed(convert, name: str):
    def rename(attrs, types, desired):
        return name, convert(attrs, types, desired)[1]

    return rename


register_convert_layout("qnn.conv2d")(_renamed(convert_conv2d, "qnn.conv2d"))
register_convert_layout("qnn.conv2d_transpose")(_renamed(convert_conv2d_transpose, "qnn.conv2d_transpose"))
register_convert_layout("qnn.avg_pool2d")(_renamed(convert_pool, "qnn.avg_pool2d"))


Qnn = Dialect("qnn", list(QNN_OPS.values()), [])

__all__ = [
    "QNN_OPS", "SQNN_DTYPE_TO_CODE", "Qnn", "check_param", "check_scalar", "qnn_op", "requantize_config",
    "resolve_requantize",
]  # fmt: skip
