"""The relay dialect's ops: Relay's operators with their attributes, defaults and type relations.

Each op's docstring gives its custom syntax. Attribute names and defaults are Relay's
(docs/relay-semantics.md §5); pattern kinds and flags are Relay's TOpPattern / TOpIsStateful /
TReshapeOp / TNonComputational.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.ir import ParametrizedAttribute, TypeAttribute
from xdsl.irdl import (
    irdl_attr_definition,
    operand_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import MemoryFreeEffect, Pure

from xrelay.dialects.relay.base import (
    Bool,
    Device,
    Float,
    Int,
    IntOrInts,
    Ints,
    IntsList,
    OpPattern,
    RelayOp,
    Str,
    broadcast_shapes,
    conv_out,
    fail,
    new_tensor,
    norm_axis,
    relay_op,
    same_dtype,
)
from xrelay.dialects.relay.devices import UNCONSTRAINED
from xrelay.dialects.relay.dtypes import DTYPES, MAX_RANK, dtype_of, shape_of


def _dt(t: TensorType) -> str:
    return dtype_of(t.element_type)


# ============================================================================================
# Elementwise unary
# ============================================================================================


class UnaryOp(RelayOp):
    """An elementwise op whose result has its operand's type.

    ```mlir
    %y = relay.nn.relu %x : (tensor<1x64xf32>) -> tensor<1x64xf32>
    ```
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def infer_types(cls, in_types, attrs):
        return [in_types[0]]


@relay_op("nn.relu", OpPattern.ELEMWISE)
class ReluOp(UnaryOp):
    """max(x, 0).

    ```mlir
    %y = relay.nn.relu %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("tanh", OpPattern.ELEMWISE)
class TanhOp(UnaryOp):
    """Hyperbolic tangent.

    ```mlir
    %y = relay.tanh %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("sigmoid", OpPattern.ELEMWISE)
class SigmoidOp(UnaryOp):
    """1 / (1 + exp(-x)).

    ```mlir
    %y = relay.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("exp", OpPattern.ELEMWISE)
class ExpOp(UnaryOp):
    """e ** x.

    ```mlir
    %y = relay.exp %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("log", OpPattern.ELEMWISE)
class LogOp(UnaryOp):
    """Natural logarithm.

    ```mlir
    %y = relay.log %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("sqrt", OpPattern.ELEMWISE)
class SqrtOp(UnaryOp):
    """Square root.

    ```mlir
    %y = relay.sqrt %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("rsqrt", OpPattern.ELEMWISE)
class RsqrtOp(UnaryOp):
    """1 / sqrt(x).

    ```mlir
    %y = relay.rsqrt %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("abs", OpPattern.ELEMWISE)
class AbsOp(UnaryOp):
    """Absolute value.

    ```mlir
    %y = relay.abs %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("negative", OpPattern.ELEMWISE)
class NegativeOp(UnaryOp):
    """-x.

    ```mlir
    %y = relay.negative %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("erf", OpPattern.ELEMWISE)
class ErfOp(UnaryOp):
    """The Gauss error function.

    ```mlir
    %y = relay.erf %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("floor", OpPattern.ELEMWISE)
class FloorOp(UnaryOp):
    """Round toward -inf.

    ```mlir
    %y = relay.floor %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("ceil", OpPattern.ELEMWISE)
class CeilOp(UnaryOp):
    """Round toward +inf.

    ```mlir
    %y = relay.ceil %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("round", OpPattern.ELEMWISE)
class RoundOp(UnaryOp):
    """Round half away from zero.

    ```mlir
    %y = relay.round %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("copy", OpPattern.ELEMWISE)
class CopyOp(UnaryOp):
    """A copy of x.

    ```mlir
    %y = relay.copy %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("zeros_like", OpPattern.ELEMWISE)
class ZerosLikeOp(UnaryOp):
    """Zeros of x's type.

    ```mlir
    %y = relay.zeros_like %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("ones_like", OpPattern.ELEMWISE)
class OnesLikeOp(UnaryOp):
    """Ones of x's type.

    ```mlir
    %y = relay.ones_like %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("nn.leaky_relu", OpPattern.ELEMWISE)
class LeakyReluOp(UnaryOp):
    """x if x > 0 else alpha * x.

    ```mlir
    %y = relay.nn.leaky_relu %x {alpha = 0.1} : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    alpha = Float(0.25)


@relay_op("clip", OpPattern.ELEMWISE)
class ClipOp(UnaryOp):
    """min(max(x, a_min), a_max).

    ```mlir
    %y = relay.clip %x {a_min = 0.0, a_max = 6.0} : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    a_min = Float()
    a_max = Float()


@relay_op("cast", OpPattern.ELEMWISE)
class CastOp(RelayOp):
    """Convert to another dtype.

    ```mlir
    %y = relay.cast %x {dtype = "uint32"} : (tensor<1x2xi16>) -> tensor<1x2xui32>
    ```
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    dtype = Str()

    @classmethod
    def infer_types(cls, in_types, attrs):
        if attrs["dtype"] not in DTYPES:
            raise fail(cls, f"unknown dtype '{attrs['dtype']}'")
        return [new_tensor(shape_of(in_types[0]), attrs["dtype"])]


# ============================================================================================
# Binary, broadcasting
# ============================================================================================


class BinaryOp(RelayOp):
    """A binary op with numpy broadcasting; both operands share one dtype.

    ```mlir
    %z = relay.add %x, %y : (tensor<1x64x56x56xf32>, tensor<64x1x1xf32>) -> tensor<1x64x56x56xf32>
    ```
    """

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    RESULT_BOOL: ClassVar[bool] = False

    @classmethod
    def infer_types(cls, in_types, attrs):
        dtype = same_dtype(cls, in_types)
        shape = broadcast_shapes(cls, in_types)
        return [new_tensor(shape, "bool" if cls.RESULT_BOOL else dtype)]


class ComparisonOp(BinaryOp):
    """A broadcasting comparison: operands of one dtype, a bool result.

    ```mlir
    %z = relay.less %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    ```
    """

    RESULT_BOOL: ClassVar[bool] = True


@relay_op("add", OpPattern.BROADCAST)
class AddOp(BinaryOp):
    """x + y.

    ```mlir
    %z = relay.add %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
    """


@relay_op("subtract", OpPattern.BROADCAST)
class SubtractOp(BinaryOp):
    """x - y.

    ```mlir
    %z = relay.subtract %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
    """


@relay_op("multiply", OpPattern.BROADCAST)
class MultiplyOp(BinaryOp):
    """x * y.

    ```mlir
    %z = relay.multiply %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
    """


@relay_op("divide", OpPattern.BROADCAST)
class DivideOp(BinaryOp):
    """x / y (truncating for integers, as Relay).

    ```mlir
    %z = relay.divide %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
    """


@relay_op("power", OpPattern.BROADCAST)
class PowerOp(BinaryOp):
    """x ** y.

    ```mlir
    %z = relay.power %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
    """


@relay_op("maximum", OpPattern.BROADCAST)
class MaximumOp(BinaryOp):
    """max(x, y).

    ```mlir
    %z = relay.maximum %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
    """


@relay_op("minimum", OpPattern.BROADCAST)
class MinimumOp(BinaryOp):
    """min(x, y).

    ```mlir
    %z = relay.minimum %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
    """


@relay_op("equal", OpPattern.BROADCAST)
class EqualOp(ComparisonOp):
    """x == y (bool result).

    ```mlir
    %z = relay.equal %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    ```
    """


@relay_op("not_equal", OpPattern.BROADCAST)
class NotEqualOp(ComparisonOp):
    """x != y (bool result).

    ```mlir
    %z = relay.not_equal %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    ```
    """


@relay_op("less", OpPattern.BROADCAST)
class LessOp(ComparisonOp):
    """x < y (bool result).

    ```mlir
    %z = relay.less %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    ```
    """


@relay_op("less_equal", OpPattern.BROADCAST)
class LessEqualOp(ComparisonOp):
    """x <= y (bool result).

    ```mlir
    %z = relay.less_equal %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    ```
    """


@relay_op("greater", OpPattern.BROADCAST)
class GreaterOp(ComparisonOp):
    """x > y (bool result).

    ```mlir
    %z = relay.greater %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    ```
    """


@relay_op("greater_equal", OpPattern.BROADCAST)
class GreaterEqualOp(ComparisonOp):
    """x >= y (bool result).

    ```mlir
    %z = relay.greater_equal %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
    ```
    """


@relay_op("where", OpPattern.BROADCAST)
class WhereOp(RelayOp):
    """Select from x where cond is true, else from y; all three broadcast.

    ```mlir
    %z = relay.where %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    condition = operand_def(TensorType)
    x = operand_def(TensorType)
    y = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def infer_types(cls, in_types, attrs):
        dtype = same_dtype(cls, in_types[1:])
        return [new_tensor(broadcast_shapes(cls, in_types), dtype)]


# ============================================================================================
# Layout helpers
# ============================================================================================


def _layout_axes(cls, layout: str, letters: str) -> list[int]:
    if sorted(layout) != sorted(letters) or len(set(layout)) != len(layout):
        raise fail(cls, f"unsupported layout '{layout}' (expected a permutation of {letters})")
    return [layout.index(c) for c in letters]


def _pad4(cls, padding: int | Sequence[int]) -> tuple[int, int, int, int]:
    p = [padding] if isinstance(padding, int) else list(padding)
    if len(p) == 1:
        return (p[0],) * 4
    if len(p) == 2:
        return (p[0], p[1], p[0], p[1])
    if len(p) == 4:
        return tuple(p)
    raise fail(cls, f"padding must have 1, 2 or 4 values, got {len(p)}")


def _pair(cls, name: str, v: Any) -> tuple[int, int]:
    if isinstance(v, int):
        return (v, v)
    v = tuple(v)
    if len(v) == 1:
        return (v[0], v[0])
    if len(v) != 2:
        raise fail(cls, f"'{name}' must have 2 values, got {len(v)}")
    return v


def check_positive(cls, attrs: dict[str, Any], names: Sequence[str]) -> None:
    """Strides, dilations, window sizes and groups are integers of at least 1 (a 0 would reach
    the kernels as a division by zero, a float as a type error). Runs before normalisation, so
    a value may still be a scalar or any sequence."""
    for k in names:
        v = attrs.get(k)
        if v is None:
            continue
        values = v if isinstance(v, (list, tuple)) else (v,)
        # numbers only: other kinds get the attribute's own "expects an integer" message
        numeric = [x for x in values if isinstance(x, numbers.Real) and not isinstance(x, bool)]
        if any(not isinstance(x, numbers.Integral) or x < 1 for x in numeric):
            shown = list(v) if isinstance(v, (list, tuple)) else v
            raise fail(cls, f"{k} must be positive integers, got {shown}")


def _check_rank(cls, t: TensorType, rank: int, what: str) -> tuple:
    s = shape_of(t)
    if len(s) != rank:
        raise fail(cls, f"{what} must have rank {rank}, got {t}")
    return s


def _blocked_types(cls, in_types, attrs, in_keys: tuple[str, ...], out_key: str, unsplit: str = ""):
    """Result types for blocked layouts (``NCHW8c`` data, ``OIHW8i8o`` kernel), else None.

    The operands are read in their primal layouts (``NCHW``, ``OIHW``), the op infers there,
    and the result is blocked as ``out_key`` (default: the first layout) says. The axes in
    ``unsplit`` may not be blocked (a pool's H and W).
    """
    layouts = [attrs[k] for k in in_keys]
    out_layout = attrs[out_key] or layouts[0]
    if all(lay.isupper() for lay in (*layouts, out_layout)):
        return None
    for lay in (*layouts, out_layout):
        if any(a.lower() in lay for a in unsplit):
            raise fail(cls, f"layout '{lay}' splits {' or '.join(unsplit)}, which a pool cannot")
    primal = ["".join(c for c in lay if not c.isdigit() and c.isupper()) for lay in layouts]
    shapes = [
        layout_transform_shape(cls, shape_of(t), lay, p)
        for t, lay, p in zip(in_types, layouts, primal, strict=False)
    ]
    plain = dict(attrs, **dict(zip(in_keys, primal, strict=True)), **{out_key: ""})
    (res,) = cls.infer_types([new_tensor(s, _dt(t)) for s, t in zip(shapes, in_types, strict=False)], plain)
    return [new_tensor(layout_transform_shape(cls, shape_of(res), primal[0], out_layout), _dt(res))]


# ============================================================================================
# Convolutions and pools
# ============================================================================================


def depthwise_multiplier(cin, w_oi, groups: int, channels, kernel_size) -> int | None:
    """The channel multiplier M of a depthwise weight in Relay's (C, M, kh, kw) form, else None.

    Relay's Conv2DRel: with ``groups == C == weight's O`` and ``channels`` and ``kernel_size``
    given, the weight is (C, channels / C, kh, kw) and output channel ``c * M + m`` convolves
    input channel ``c`` with ``weight[c, m]`` -- the grouped OIHW weight reshaped to
    (C * M, 1, kh, kw). M = 1 is the ordinary depthwise weight (returned as None)."""
    o, i = w_oi
    if groups <= 1 or channels is None or kernel_size is None or cin is None or o is None or i is None:
        return None
    if cin == groups == o and i > 1 and channels == cin * i:
        return i
    return None


class _ConvBase(RelayOp):
    """Operands, attributes and normalisation shared by conv2d and conv2d_transpose."""

    data = operand_def(TensorType)
    weight = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    strides = Ints((1, 1))
    padding = Ints((0, 0, 0, 0))
    dilation = Ints((1, 1))
    groups = Int(1)
    channels = Int(None)
    kernel_size = Ints(None)
    data_layout = Str("NCHW")
    kernel_layout = Str("OIHW")
    out_layout = Str("")
    out_dtype = Str("")
    PAIRS: ClassVar[tuple[str, ...]] = ("strides", "dilation")

    @classmethod
    def normalize_attrs(cls, attrs, in_types):
        check_positive(cls, attrs, ("strides", "dilation", "groups", "kernel_size"))
        attrs["padding"] = _pad4(cls, attrs["padding"])
        for k in cls.PAIRS:
            attrs[k] = _pair(cls, k, attrs[k])
        if attrs["kernel_size"] is not None:
            attrs["kernel_size"] = _pair(cls, "kernel_size", attrs["kernel_size"])
        return attrs


@relay_op("nn.conv2d", OpPattern.OUT_ELEMWISE_FUSABLE)
class Conv2DOp(_ConvBase):
    """2-D convolution.

    ```mlir
    %y = relay.nn.conv2d %x, %w {strides = [2, 2], padding = [3, 3, 3, 3], channels = 64, kernel_size = [7, 7]}
           : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<1x64x112x112xf32>
    ```
    """

    RELAY_TEXT_ALWAYS = frozenset({"padding"})

    @classmethod
    def infer_types(cls, in_types, attrs):
        if (blocked := _blocked_types(cls, in_types, attrs, ("data_layout", "kernel_layout"), "out_layout")):
            return blocked
        data, weight = in_types
        ds = _check_rank(cls, data, 4, "data")
        ws = _check_rank(cls, weight, 4, "weight")
        n_, c_, h_, w_ = _layout_axes(cls, attrs["data_layout"], "NCHW")
        o_, i_, kh_, kw_ = _layout_axes(cls, attrs["kernel_layout"], "OIHW")
        groups = attrs["groups"]
        if groups < 1:
            raise fail(cls, f"groups must be positive, got {groups}")
        cin, cout = ds[c_], ws[o_]
        if depthwise_multiplier(cin, (ws[o_], ws[i_]), groups, attrs["channels"], attrs["kernel_size"]):
            cout = attrs["channels"]  # Relay's (C, multiplier, kh, kw) depthwise weight
        elif cin is not None and ws[i_] is not None and cin != ws[i_] * groups:
            raise fail(
                cls,
                f"data {data} has {cin} input channels but weight {weight} expects "
                f"{ws[i_]} x groups {groups} = {ws[i_] * groups}",
            )
        if cout is not None and cout % groups:
            raise fail(cls, f"output channels {cout} of weight {weight} not divisible by groups {groups}")
        if attrs["channels"] is not None and cout is not None and attrs["channels"] != cout:
            raise fail(cls, f"channels = {attrs['channels']} but weight {weight} has {cout} output channels")
        kh, kw = ws[kh_], ws[kw_]
        if attrs["kernel_size"] is not None and (kh, kw) != tuple(attrs["kernel_size"]):
            raise fail(cls, f"kernel_size = {list(attrs['kernel_size'])} but weight {weight} has {kh}x{kw}")
        pt, pl, pb, pr = attrs["padding"]
        sh, sw = attrs["strides"]
        dh, dw = attrs["dilation"]
        oh = conv_out(ds[h_], kh, pt + pb, sh, dh)
        ow = conv_out(ds[w_], kw, pl + pr, sw, dw)
        if (oh is not None and oh <= 0) or (ow is not None and ow <= 0):
            raise fail(cls, f"output spatial size {oh}x{ow} is empty for data {data} and weight {weight}")
        out = [0, 0, 0, 0]
        out[n_], out[c_], out[h_], out[w_] = ds[n_], cout, oh, ow
        out_layout = attrs["out_layout"] or attrs["data_layout"]
        if out_layout != attrs["data_layout"]:
            perm = _layout_axes(cls, out_layout, attrs["data_layout"])
            out = [out[attrs["data_layout"].index(c)] for c in out_layout]
            del perm
        return [new_tensor(out, attrs["out_dtype"] or _dt(data))]


@relay_op("nn.contrib_conv2d_winograd_without_weight_transform", OpPattern.OUT_ELEMWISE_FUSABLE)
class Conv2DWinogradOp(_ConvBase):
    """A 3x3 stride-1 convolution as Winograd F(m x m, 3x3) (m = ``tile_size``) whose weights
    were transformed at build time (TVM's op of this name; the C target's ``conv2d-winograd``
    makes it). The weight is the transformed kernel ``G g G^T`` packed as TVM's arm_cpu
    schedule packs it, ``(alpha, alpha, O / lanes, I, lanes)`` with ``alpha = m + 2``: the
    kernel's shape does not constrain the type, so ``channels`` and ``kernel_size`` must be
    given. Data and result are ``NCHW`` or channel-blocked (``NCHW8c``).

    ```mlir
    %y = relay.nn.contrib_conv2d_winograd_without_weight_transform %x, %u {tile_size = 4, padding = [1, 1, 1, 1], channels = 16, kernel_size = [3, 3], data_layout = "NCHW8c"}
           : (tensor<1x2x28x28x8xf32>, tensor<6x6x2x16x8xf32>) -> tensor<1x2x28x28x8xf32>
    ```
    """

    RELAY_TEXT_ALWAYS = frozenset({"padding"})

    tile_size = Int(4)

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, weight = in_types
        m = attrs["tile_size"]
        if m < 1:
            raise fail(cls, f"tile_size must be positive, got {m}")
        if attrs["channels"] is None or attrs["kernel_size"] is None:
            raise fail(cls, "needs channels and kernel_size (the transformed weight's shape gives neither)")
        if tuple(attrs["kernel_size"]) != (3, 3):
            raise fail(cls, f"Winograd F(m, 3x3) takes a 3x3 kernel, got kernel_size = {list(attrs['kernel_size'])}")
        for k, want in (("strides", (1, 1)), ("dilation", (1, 1))):
            if tuple(attrs[k]) != want:
                raise fail(cls, f"{k} must be [1, 1], got {list(attrs[k])}")
        if attrs["groups"] != 1:
            raise fail(cls, f"groups must be 1, got {attrs['groups']}")
        layout = attrs["data_layout"]
        out_layout = attrs["out_layout"] or layout
        if "".join(c for c in layout if c.isupper()) != "NCHW" or "".join(c for c in out_layout if c.isupper()) != "NCHW":
            raise fail(cls, f"data and result layouts must be NCHW or blocked NCHW, got '{layout}' and '{out_layout}'")
        ds = layout_transform_shape(cls, shape_of(data), layout, "NCHW")
        ws = _check_rank(cls, weight, 5, "weight")
        alpha = m + 2
        if tuple(ws[:2]) != (alpha, alpha):
            raise fail(cls, f"weight {weight} is not {alpha}x{alpha} transformed matrices (tile_size {m})")
        n_, c_, h_, w_ = ds
        if c_ is not None and ws[3] is not None and c_ != ws[3]:
            raise fail(cls, f"data {data} has {c_} input channels but weight {weight} expects {ws[3]}")
        if ws[2] is not None and ws[4] is not None and ws[2] * ws[4] != attrs["channels"]:
            raise fail(cls, f"channels = {attrs['channels']} but weight {weight} has {ws[2] * ws[4]} output channels")
        pt, pl, pb, pr = attrs["padding"]
        oh, ow = conv_out(h_, 3, pt + pb, 1, 1), conv_out(w_, 3, pl + pr, 1, 1)
        if (oh is not None and oh <= 0) or (ow is not None and ow <= 0):
            raise fail(cls, f"output spatial size {oh}x{ow} is empty for data {data}")
        out = layout_transform_shape(cls, [n_, attrs["channels"], oh, ow], "NCHW", out_layout)
        return [new_tensor(out, attrs["out_dtype"] or _dt(data))]


@relay_op("nn.conv2d_transpose", OpPattern.OUT_ELEMWISE_FUSABLE)
class Conv2DTransposeOp(_ConvBase):
    """Transposed 2-D convolution (weight IOHW by default, as Relay).

    ```mlir
    %y = relay.nn.conv2d_transpose %x, %w {strides = [2, 2]} : (tensor<1x8x4x4xf32>, tensor<8x4x3x3xf32>) -> tensor<1x4x9x9xf32>
    ```
    """

    RELAY_TEXT_ALWAYS = frozenset({"padding"})

    output_padding = Ints((0, 0))
    kernel_layout = Str("IOHW")
    PAIRS: ClassVar[tuple[str, ...]] = ("strides", "dilation", "output_padding")

    @classmethod
    def infer_types(cls, in_types, attrs):
        if (blocked := _blocked_types(cls, in_types, attrs, ("data_layout", "kernel_layout"), "out_layout")):
            return blocked
        data, weight = in_types
        ds = _check_rank(cls, data, 4, "data")
        ws = _check_rank(cls, weight, 4, "weight")
        n_, c_, h_, w_ = _layout_axes(cls, attrs["data_layout"], "NCHW")
        o_, i_, kh_, kw_ = _layout_axes(cls, attrs["kernel_layout"], "OIHW")
        groups = attrs["groups"]
        if ds[c_] is not None and ws[i_] is not None and ds[c_] != ws[i_]:
            raise fail(cls, f"data {data} has {ds[c_]} channels but weight {weight} expects {ws[i_]}")
        cout = None if ws[o_] is None else ws[o_] * groups
        if attrs["channels"] is not None and cout is not None and attrs["channels"] != cout:
            raise fail(cls, f"channels = {attrs['channels']} but weight {weight} gives {cout}")
        pt, pl, pb, pr = attrs["padding"]
        sh, sw = attrs["strides"]
        dh, dw = attrs["dilation"]
        oph, opw = attrs["output_padding"]

        def size(x, k, p, s, d, op):
            return None if x is None else (x - 1) * s - p + d * (k - 1) + op + 1

        out = [0, 0, 0, 0]
        out[n_], out[c_] = ds[n_], cout
        out[h_] = size(ds[h_], ws[kh_], pt + pb, sh, dh, oph)
        out[w_] = size(ds[w_], ws[kw_], pl + pr, sw, dw, opw)
        return [new_tensor(out, attrs["out_dtype"] or _dt(data))]


class _Pool2D(RelayOp):
    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def normalize_attrs(cls, attrs, in_types):
        check_positive(cls, attrs, ("pool_size", "strides", "dilation"))
        attrs["padding"] = _pad4(cls, attrs["padding"])
        for k in ("pool_size", "strides", "dilation"):
            attrs[k] = _pair(cls, k, attrs[k])
        return attrs

    @classmethod
    def infer_types(cls, in_types, attrs):
        if (blocked := _blocked_types(cls, in_types, attrs, ("layout",), "out_layout", "HW")):
            return blocked
        (data,) = in_types
        ds = _check_rank(cls, data, 4, "data")
        _, _, h_, w_ = _layout_axes(cls, attrs["layout"], "NCHW")
        pt, pl, pb, pr = attrs["padding"]
        (kh, kw), (sh, sw), (dh, dw) = attrs["pool_size"], attrs["strides"], attrs["dilation"]

        def size(x, k, p, s, d):
            if x is None:
                return None
            span = x + p - ((k - 1) * d + 1)
            if span < 0:
                raise fail(cls, f"pool window {kh}x{kw} larger than padded input {data}")
            return (span + (s - 1 if attrs["ceil_mode"] else 0)) // s + 1

        out = list(ds)
        out[h_] = size(ds[h_], kh, pt + pb, sh, dh)
        out[w_] = size(ds[w_], kw, pl + pr, sw, dw)
        return [new_tensor(out, _dt(data))]


@relay_op("nn.max_pool2d", OpPattern.OUT_ELEMWISE_FUSABLE)
class MaxPool2DOp(_Pool2D):
    """2-D max pooling.

    ```mlir
    %y = relay.nn.max_pool2d %x {pool_size = [3, 3], strides = [2, 2], padding = [1, 1, 1, 1]}
           : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
    ```
    """

    RELAY_TEXT_ALWAYS = frozenset({"padding"})

    pool_size = Ints()
    strides = Ints((1, 1))
    dilation = Ints((1, 1))
    padding = Ints((0, 0, 0, 0))
    layout = Str("NCHW")
    out_layout = Str("")
    ceil_mode = Bool(False)


@relay_op("nn.avg_pool2d", OpPattern.OUT_ELEMWISE_FUSABLE)
class AvgPool2DOp(_Pool2D):
    """2-D average pooling.

    ```mlir
    %y = relay.nn.avg_pool2d %x {pool_size = [2, 2], strides = [2, 2]} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
    ```
    """

    RELAY_TEXT_ALWAYS = frozenset({"padding"})

    pool_size = Ints()
    strides = Ints((1, 1))
    dilation = Ints((1, 1))
    padding = Ints((0, 0, 0, 0))
    layout = Str("NCHW")
    out_layout = Str("")
    ceil_mode = Bool(False)
    count_include_pad = Bool(False)


class _GlobalPool2D(RelayOp):
    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    layout = Str("NCHW")
    out_layout = Str("")

    @classmethod
    def infer_types(cls, in_types, attrs):
        if (blocked := _blocked_types(cls, in_types, attrs, ("layout",), "out_layout", "HW")):
            return blocked
        ds = list(_check_rank(cls, in_types[0], 4, "data"))
        _, _, h_, w_ = _layout_axes(cls, attrs["layout"], "NCHW")
        ds[h_] = ds[w_] = 1
        return [new_tensor(ds, _dt(in_types[0]))]


@relay_op("nn.global_avg_pool2d", OpPattern.OUT_ELEMWISE_FUSABLE)
class GlobalAvgPool2DOp(_GlobalPool2D):
    """Mean over the spatial axes, keeping them as size 1.

    ```mlir
    %y = relay.nn.global_avg_pool2d %x : (tensor<1x512x7x7xf32>) -> tensor<1x512x1x1xf32>
    ```
    """


@relay_op("nn.global_max_pool2d", OpPattern.OUT_ELEMWISE_FUSABLE)
class GlobalMaxPool2DOp(_GlobalPool2D):
    """Max over the spatial axes, keeping them as size 1.

    ```mlir
    %y = relay.nn.global_max_pool2d %x : (tensor<1x512x7x7xf32>) -> tensor<1x512x1x1xf32>
    ```
    """


@relay_op("nn.adaptive_avg_pool2d", OpPattern.OUT_ELEMWISE_FUSABLE)
class AdaptiveAvgPool2DOp(RelayOp):
    """Average pooling to a given output size (absent: the input size).

    ```mlir
    %y = relay.nn.adaptive_avg_pool2d %x {output_size = [1, 1]} : (tensor<1x8x7x7xf32>) -> tensor<1x8x1x1xf32>
    ```
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    output_size = Ints(None)
    layout = Str("NCHW")
    out_layout = Str("")

    @classmethod
    def normalize_attrs(cls, attrs, in_types):
        if attrs["output_size"] is not None:
            attrs["output_size"] = _pair(cls, "output_size", attrs["output_size"])
        return attrs

    @classmethod
    def infer_types(cls, in_types, attrs):
        if (blocked := _blocked_types(cls, in_types, attrs, ("layout",), "out_layout", "HW")):
            return blocked
        ds = list(_check_rank(cls, in_types[0], 4, "data"))
        _, _, h_, w_ = _layout_axes(cls, attrs["layout"], "NCHW")
        if attrs["output_size"] is not None:
            ds[h_], ds[w_] = attrs["output_size"]
        return [new_tensor(ds, _dt(in_types[0]))]


# ============================================================================================
# Normalisation, dense, softmax, ...
# ============================================================================================


def _check_vec(cls, t: TensorType, n: int | None, what: str, ref: TensorType) -> None:
    s = shape_of(t)
    if len(s) != 1 or (n is not None and s[0] is not None and s[0] != n):
        raise fail(cls, f"{what} {t} must be a vector of {n} elements to match {ref}")


@relay_op("nn.batch_norm", OpPattern.OUT_ELEMWISE_FUSABLE)
class BatchNormOp(RelayOp):
    """Batch normalisation (inference form); results: out, moving mean, moving var.

    ```mlir
    %y:3 = relay.nn.batch_norm %x, %gamma, %beta, %mean, %var {epsilon = 2.0e-05}
             : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
             -> (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>)
    ```
    """

    data = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    moving_mean = operand_def(TensorType)
    moving_var = operand_def(TensorType)
    output = result_def(TensorType)
    new_mean = result_def(TensorType)
    new_var = result_def(TensorType)
    traits = traits_def(Pure())
    axis = Int(1)
    epsilon = Float(1e-5)
    center = Bool(True)
    scale = Bool(True)

    @classmethod
    def infer_types(cls, in_types, attrs):
        data = in_types[0]
        ds = shape_of(data)
        axis = norm_axis(cls, attrs["axis"], len(ds))
        for t, what in zip(in_types[1:], ("gamma", "beta", "moving_mean", "moving_var")):
            _check_vec(cls, t, ds[axis], what, data)
        same_dtype(cls, in_types)
        vec = new_tensor((ds[axis],), _dt(data))
        return [data, vec, vec]


@relay_op("nn.layer_norm", OpPattern.OPAQUE)
class LayerNormOp(RelayOp):
    """Layer normalisation over one axis (no fusion pattern: simplify-inference removes it).

    ```mlir
    %y = relay.nn.layer_norm %x, %gamma, %beta : (tensor<1x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x8x16xf32>
    ```
    """

    data = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    axis = Int(-1)
    epsilon = Float(1e-5)
    center = Bool(True)
    scale = Bool(True)

    @classmethod
    def infer_types(cls, in_types, attrs):
        data = in_types[0]
        ds = shape_of(data)
        axis = norm_axis(cls, attrs["axis"], len(ds))
        for t, what in zip(in_types[1:], ("gamma", "beta")):
            _check_vec(cls, t, ds[axis], what, data)
        same_dtype(cls, in_types)
        return [data]


@relay_op("nn.dropout", OpPattern.OPAQUE, stateful=True)
class DropoutOp(RelayOp):
    """Dropout; results: out and mask. Stateful, so it carries effects and is never deleted.

    ```mlir
    %y:2 = relay.nn.dropout %x {rate = 0.1} : (tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>)
    ```
    """

    data = operand_def(TensorType)
    output = result_def(TensorType)
    mask = result_def(TensorType)
    rate = Float(0.5)

    @classmethod
    def infer_types(cls, in_types, attrs):
        if not 0.0 <= attrs["rate"] < 1.0:
            raise fail(cls, f"rate must be in [0, 1), got {attrs['rate']}")
        return [in_types[0], in_types[0]]


@relay_op("nn.dense", OpPattern.OUT_ELEMWISE_FUSABLE)
class DenseOp(RelayOp):
    """x @ w.T with w of shape (units, in).

    ```mlir
    %y = relay.nn.dense %x, %w {units = 10} : (tensor<1x64xf32>, tensor<10x64xf32>) -> tensor<1x10xf32>
    ```
    """

    RELAY_TEXT_ALWAYS = frozenset({"units"})

    data = operand_def(TensorType)
    weight = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    units = Int(None)
    out_dtype = Str("")

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, weight = in_types
        ds, ws = shape_of(data), shape_of(weight)
        if len(ds) < 1 or len(ws) != 2:
            raise fail(cls, f"expects data of rank >= 1 and a 2-D weight, got {data} and {weight}")
        if ds[-1] is not None and ws[1] is not None and ds[-1] != ws[1]:
            raise fail(cls, f"reduction dims differ: data {data} has {ds[-1]}, weight {weight} has {ws[1]}")
        if attrs["units"] is not None and ws[0] is not None and attrs["units"] != ws[0]:
            raise fail(cls, f"units = {attrs['units']} but weight {weight} has {ws[0]} rows")
        return [new_tensor((*ds[:-1], ws[0]), attrs["out_dtype"] or _dt(data))]


@relay_op("nn.matmul", OpPattern.OUT_ELEMWISE_FUSABLE)
class MatmulOp(RelayOp):
    """a @ b with optional transposes (Relay's nn.matmul; b is (in, units) unless transpose_b).

    ```mlir
    %y = relay.nn.matmul %a, %b : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
    ```
    """

    RELAY_TEXT_ALWAYS = frozenset({"units"})

    tensor_a = operand_def(TensorType)
    tensor_b = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    units = Int(None)
    out_dtype = Str("")
    transpose_a = Bool(False)
    transpose_b = Bool(False)

    @classmethod
    def infer_types(cls, in_types, attrs):
        a, b = in_types
        sa, sb = shape_of(a), shape_of(b)
        if len(sb) != 2 or len(sa) < 1 or (attrs["transpose_a"] and len(sa) != 2):
            raise fail(cls, f"unsupported operand ranks {a} and {b}")
        k_a = sa[-2] if attrs["transpose_a"] else sa[-1]
        k_b, n = (sb[1], sb[0]) if attrs["transpose_b"] else (sb[0], sb[1])
        if k_a is not None and k_b is not None and k_a != k_b:
            raise fail(cls, f"reduction dims differ: {a} and {b}")
        lead = (sa[1],) if attrs["transpose_a"] else sa[:-1]
        return [new_tensor((*lead, n), attrs["out_dtype"] or _dt(a))]


@relay_op("nn.batch_matmul", OpPattern.OUT_ELEMWISE_FUSABLE)
class BatchMatmulOp(RelayOp):
    """Batched a @ b on 3-D tensors (C++ default transpose_b = false; the Python API's is true).

    ```mlir
    %y = relay.nn.batch_matmul %a, %b {transpose_b = true} : (tensor<2x4x8xf32>, tensor<2x3x8xf32>) -> tensor<2x4x3xf32>
    ```
    """

    tensor_a = operand_def(TensorType)
    tensor_b = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    out_dtype = Str("")
    transpose_a = Bool(False)
    transpose_b = Bool(False)

    @classmethod
    def infer_types(cls, in_types, attrs):
        a, b = in_types
        sa = _check_rank(cls, a, 3, "tensor_a")
        sb = _check_rank(cls, b, 3, "tensor_b")
        m, k_a = (sa[2], sa[1]) if attrs["transpose_a"] else (sa[1], sa[2])
        k_b, n = (sb[2], sb[1]) if attrs["transpose_b"] else (sb[1], sb[2])
        if k_a is not None and k_b is not None and k_a != k_b:
            raise fail(cls, f"reduction dims differ: {a} and {b}")
        ba, bb = sa[0], sb[0]
        if ba is not None and bb is not None and ba != bb and 1 not in (ba, bb):
            raise fail(cls, f"batch dims differ: {a} and {b}")
        batch = None if ba is None or bb is None else max(ba, bb)
        return [new_tensor((batch, m, n), attrs["out_dtype"] or _dt(a))]


@relay_op("nn.bias_add", OpPattern.BROADCAST)
class BiasAddOp(RelayOp):
    """Add a vector along one axis.

    ```mlir
    %y = relay.nn.bias_add %x, %b {axis = -1} : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
    ```
    """

    data = operand_def(TensorType)
    bias = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    axis = Int(1)

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, bias = in_types
        ds = shape_of(data)
        axis = norm_axis(cls, attrs["axis"], len(ds))
        _check_vec(cls, bias, ds[axis], "bias", data)
        same_dtype(cls, in_types)
        return [data]


@relay_op("nn.prelu", OpPattern.BROADCAST)
class PReluOp(RelayOp):
    """x if x > 0 else alpha[c] * x, alpha a vector along axis.

    ```mlir
    %y = relay.nn.prelu %x, %alpha : (tensor<1x4x8x8xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
    ```
    """

    data = operand_def(TensorType)
    alpha = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    axis = Int(1)

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, alpha = in_types
        ds = shape_of(data)
        axis = norm_axis(cls, attrs["axis"], len(ds))
        _check_vec(cls, alpha, ds[axis], "alpha", data)
        same_dtype(cls, in_types)
        return [data]


class _Softmax(RelayOp):
    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    axis = Int(-1)

    @classmethod
    def infer_types(cls, in_types, attrs):
        norm_axis(cls, attrs["axis"], len(shape_of(in_types[0])))
        return [in_types[0]]


@relay_op("nn.softmax", OpPattern.OUT_ELEMWISE_FUSABLE)
class SoftmaxOp(_Softmax):
    """Softmax along an axis.

    ```mlir
    %y = relay.nn.softmax %x : (tensor<1x1000xf32>) -> tensor<1x1000xf32>
    ```
    """


@relay_op("nn.log_softmax", OpPattern.OUT_ELEMWISE_FUSABLE)
class LogSoftmaxOp(_Softmax):
    """Log of softmax along an axis.

    ```mlir
    %y = relay.nn.log_softmax %x {axis = 1} : (tensor<2x10xf32>) -> tensor<2x10xf32>
    ```
    """


@relay_op("nn.batch_flatten", OpPattern.INJECTIVE)
class BatchFlattenOp(RelayOp):
    """Flatten all but the first axis.

    ```mlir
    %y = relay.nn.batch_flatten %x : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>
    ```
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def infer_types(cls, in_types, attrs):
        ds = shape_of(in_types[0])
        if len(ds) < 1:
            raise fail(cls, f"needs rank >= 1, got {in_types[0]}")
        rest = ds[1:]
        flat = None if any(d is None for d in rest) else math.prod(rest)
        return [new_tensor((ds[0], flat), _dt(in_types[0]))]


@relay_op("nn.pad", OpPattern.INJECTIVE)
class PadOp(RelayOp):
    """Pad with a scalar value (a 0-d tensor operand), per axis (before, after).

    ```mlir
    %y = relay.nn.pad %x, %v {pad_width = [[0, 0], [0, 0], [1, 1], [1, 1]]}
           : (tensor<1x3x4x4xf32>, tensor<f32>) -> tensor<1x3x6x6xf32>
    ```
    """

    data = operand_def(TensorType)
    pad_value = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    pad_width = IntsList()
    pad_mode = Str("constant")

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, value = in_types
        ds = shape_of(data)
        pw = attrs["pad_width"]
        if len(pw) != len(ds) or any(len(p) != 2 for p in pw):
            raise fail(cls, f"pad_width needs one [before, after] pair per axis of {data}")
        if shape_of(value) != ():
            raise fail(cls, f"pad_value must be a scalar tensor, got {value}")
        if attrs["pad_mode"] not in ("constant", "edge", "reflect"):
            raise fail(cls, f"unknown pad_mode '{attrs['pad_mode']}'")
        same_dtype(cls, in_types)
        out = [None if d is None else d + a + b for d, (a, b) in zip(ds, pw)]
        return [new_tensor(out, _dt(data))]


# ============================================================================================
# Reductions
# ============================================================================================


def reduce_axes(rank: int, axis: int | Sequence[int] | None, exclude: bool) -> tuple[int, ...]:
    """The sorted axes a reduction reduces, as Relay's GetReduceAxes defines them.

    ``axis`` None or empty: every axis, whatever ``exclude``. Otherwise the listed axes
    (negative ones count from the end), or with ``exclude`` every axis not listed. The type
    relation and the kernels both use this; raises ValueError for an axis out of range.
    """
    if isinstance(axis, numbers.Integral):
        axis = (int(axis),)
    if not axis:
        return tuple(range(rank))
    axes = set()
    for a in axis:
        if not -rank <= a < rank:
            raise ValueError(f"axis {a} is out of range for rank {rank}")
        axes.add(a % rank)
    if exclude:
        axes = set(range(rank)) - axes
    return tuple(sorted(axes))


class ReduceOp(RelayOp):
    """A reduction over axes (all when absent; the others with exclude); keepdims keeps them as 1.

    ```mlir
    %y = relay.sum %x {axis = [1], keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
    ```
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    axis = Ints(None)
    keepdims = Bool(False)
    exclude = Bool(False)
    RESULT_DTYPE: ClassVar[str] = ""

    @classmethod
    def normalize_attrs(cls, attrs, in_types):
        if isinstance(attrs["axis"], int):
            attrs["axis"] = (attrs["axis"],)
        return attrs

    @classmethod
    def infer_types(cls, in_types, attrs):
        ds = shape_of(in_types[0])
        try:
            axes = reduce_axes(len(ds), attrs["axis"], attrs["exclude"])
        except ValueError as e:
            raise fail(cls, str(e)) from None
        if attrs["keepdims"]:
            out = [1 if i in axes else d for i, d in enumerate(ds)]
        else:
            out = [d for i, d in enumerate(ds) if i not in axes]
        return [new_tensor(out, cls.RESULT_DTYPE or _dt(in_types[0]))]


class ArgReduceOp(ReduceOp):
    """A reduction to the int32 index of the selected element (the last one on ties if asked)."""

    select_last_index = Bool(False)
    RESULT_DTYPE: ClassVar[str] = "int32"


@relay_op("sum", OpPattern.COMM_REDUCE)
class SumOp(ReduceOp):
    """Sum over axes (all when absent; the others with exclude).

    ```mlir
    %y = relay.sum %x {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xf32>
    ```
    """


@relay_op("mean", OpPattern.COMM_REDUCE)
class MeanOp(ReduceOp):
    """Mean over axes.

    ```mlir
    %y = relay.mean %x {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xf32>
    ```
    """


@relay_op("variance", OpPattern.COMM_REDUCE)
class VarianceOp(ReduceOp):
    """Mean of ``(data - mean)^2`` over axes (``unbiased``: divided by the count minus one),
    with ``mean`` given as the second operand, of the data's rank (Relay's ``variance``, which
    ``relay.variance`` and ``relay.std`` build with a keepdims ``mean``).

    ```mlir
    %v = relay.variance %x, %m {axis = [1]} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2xf32>
    ```
    """

    mean = operand_def(TensorType)
    unbiased = Bool(False)

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, mean = in_types
        if not shape_of(data):
            raise fail(cls, f"data must not be a scalar, got {data}")
        if len(shape_of(mean)) != len(shape_of(data)):
            raise fail(cls, f"mean {mean} must have the rank of data {data}")
        return super().infer_types([data], attrs)


@relay_op("max", OpPattern.COMM_REDUCE)
class MaxOp(ReduceOp):
    """Maximum over axes.

    ```mlir
    %y = relay.max %x {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xf32>
    ```
    """


@relay_op("min", OpPattern.COMM_REDUCE)
class MinOp(ReduceOp):
    """Minimum over axes.

    ```mlir
    %y = relay.min %x {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xf32>
    ```
    """


@relay_op("prod", OpPattern.COMM_REDUCE)
class ProdOp(ReduceOp):
    """Product over axes.

    ```mlir
    %y = relay.prod %x {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xf32>
    ```
    """


@relay_op("argmax", OpPattern.COMM_REDUCE)
class ArgmaxOp(ArgReduceOp):
    """Index of the maximum (int32).

    ```mlir
    %y = relay.argmax %x {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xi32>
    ```
    """


@relay_op("argmin", OpPattern.COMM_REDUCE)
class ArgminOp(ArgReduceOp):
    """Index of the minimum (int32).

    ```mlir
    %y = relay.argmin %x {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xi32>
    ```
    """


# ============================================================================================
# Shape ops
# ============================================================================================


def infer_reshape(cls, ds: Sequence[int | None], newshape: Sequence[int], allowzero: bool) -> list[int | None]:
    """Relay's reshape special values: 0 copy, -1 infer, -2 copy rest, -3 merge two, -4 split."""
    out: list[int | None] = []
    i = 0
    infer_at = None
    ns = list(newshape)
    j = 0
    while j < len(ns):
        v = ns[j]
        if v > 0 or (v == 0 and allowzero):
            out.append(v)
            i += 1
        elif v == 0:
            if i >= len(ds):
                raise fail(cls, f"newshape {ns}: 0 copies a dimension beyond rank {len(ds)}")
            out.append(ds[i])
            i += 1
        elif v == -1:
            if infer_at is not None:
                raise fail(cls, f"newshape {ns} has more than one -1")
            infer_at = len(out)
            out.append(-1)
            i += 1
        elif v == -2:
            out.extend(ds[i:])
            i = len(ds)
        elif v == -3:
            if i + 1 >= len(ds):
                raise fail(cls, f"newshape {ns}: -3 needs two input dimensions")
            a, b = ds[i], ds[i + 1]
            out.append(None if a is None or b is None else a * b)
            i += 2
        elif v == -4:
            if j + 2 >= len(ns) or i >= len(ds):
                raise fail(cls, f"newshape {ns}: -4 needs two following values")
            d = ds[i]
            a, b = ns[j + 1], ns[j + 2]
            if a == -1 and b == -1:
                raise fail(cls, f"newshape {ns}: -4 with two -1")
            if d is not None:
                if a == -1:
                    a = d // b
                elif b == -1:
                    b = d // a
                if a * b != d:
                    raise fail(cls, f"newshape {ns}: -4 split {a}x{b} does not equal {d}")
            out.extend([a, b])
            i += 1
            j += 2
        else:
            raise fail(cls, f"newshape {ns}: invalid value {v}")
        j += 1
    if infer_at is not None:
        known = [d for k, d in enumerate(out) if k != infer_at]
        if any(d is None for d in ds) or any(d is None for d in known):
            out[infer_at] = None
        else:
            total = math.prod(ds)
            rest = math.prod(known)
            if rest == 0 or total % rest:
                raise fail(cls, f"cannot reshape {list(ds)} to {ns}")
            out[infer_at] = total // rest
    if all(d is not None for d in ds) and all(d is not None for d in out):
        if math.prod(ds) != math.prod(out):
            raise fail(cls, f"cannot reshape {list(ds)} ({math.prod(ds)} elements) to {out}")
    return out


@relay_op("reshape", OpPattern.INJECTIVE, reshape_only=True)
class ReshapeOp(RelayOp):
    """Reshape with Relay's special values (0, -1, -2, -3, -4).

    ```mlir
    %y = relay.reshape %x {newshape = [0, -1]} : (tensor<1x4x5x6xf32>) -> tensor<1x120xf32>
    ```
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    newshape = Ints()
    allowzero = Bool(False)

    @classmethod
    def infer_types(cls, in_types, attrs):
        out = infer_reshape(cls, shape_of(in_types[0]), attrs["newshape"], attrs["allowzero"])
        return [new_tensor(out, _dt(in_types[0]))]


@relay_op("transpose", OpPattern.INJECTIVE)
class TransposeOp(RelayOp):
    """Permute axes (reverse when absent).

    ```mlir
    %y = relay.transpose %x {axes = [0, 2, 3, 1]} : (tensor<1x3x4x5xf32>) -> tensor<1x4x5x3xf32>
    ```
    """

    RELAY_TEXT_ALWAYS = frozenset({"axes"})

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    axes = Ints(None)

    @classmethod
    def infer_types(cls, in_types, attrs):
        ds = shape_of(in_types[0])
        axes = attrs["axes"]
        if axes is None:
            axes = list(range(len(ds)))[::-1]
        axes = [norm_axis(cls, a, len(ds)) for a in axes]
        if sorted(axes) != list(range(len(ds))):
            raise fail(cls, f"axes {list(attrs['axes'])} is not a permutation of rank {len(ds)}")
        return [new_tensor([ds[a] for a in axes], _dt(in_types[0]))]


class _JoinOp(RelayOp):
    """Ops joining a variadic list of tensors of one dtype along an axis (Relay's tuple input)."""

    data = var_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    axis = Int(0)

    @classmethod
    def joined_dtype(cls, in_types) -> str:
        if not in_types:
            raise fail(cls, "needs at least one operand")
        return same_dtype(cls, in_types)


@relay_op("concatenate", OpPattern.INJECTIVE)
class ConcatenateOp(_JoinOp):
    """Concatenate tensors along an axis (Relay's tuple input is the variadic operand list).

    ```mlir
    %y = relay.concatenate %a, %b {axis = 1} : (tensor<1x2xf32>, tensor<1x3xf32>) -> tensor<1x5xf32>
    ```
    """

    @classmethod
    def infer_types(cls, in_types, attrs):
        dtype = cls.joined_dtype(in_types)
        shapes = [shape_of(t) for t in in_types]
        rank = len(shapes[0])
        if any(len(s) != rank for s in shapes):
            raise fail(cls, "operand ranks differ: " + ", ".join(map(str, in_types)))
        axis = norm_axis(cls, attrs["axis"], rank)
        out: list[int | None] = []
        for k in range(rank):
            dims = [s[k] for s in shapes]
            if k == axis:
                out.append(None if any(d is None for d in dims) else sum(dims))
            else:
                known = {d for d in dims if d is not None}
                if len(known) > 1:
                    raise fail(cls, f"dimension {k} differs: " + ", ".join(map(str, in_types)))
                out.append(known.pop() if known else None)
        return [new_tensor(out, dtype)]


@relay_op("stack", OpPattern.INJECTIVE)
class StackOp(_JoinOp):
    """Stack tensors of one shape along a new axis.

    ```mlir
    %y = relay.stack %a, %b {axis = 0} : (tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
    """

    @classmethod
    def infer_types(cls, in_types, attrs):
        dtype = cls.joined_dtype(in_types)
        shapes = {shape_of(t) for t in in_types}
        if len(shapes) != 1:
            raise fail(cls, "operand shapes differ: " + ", ".join(map(str, in_types)))
        s = list(shapes.pop())
        axis = norm_axis(cls, attrs["axis"], len(s) + 1)
        s.insert(axis, len(in_types))
        return [new_tensor(s, dtype)]


@relay_op("split", OpPattern.INJECTIVE)
class SplitOp(RelayOp):
    """Split into equal sections (an integer) or at indices (a list); several results.

    ```mlir
    %y:2 = relay.split %x {indices_or_sections = 2, axis = 1} : (tensor<1x4xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
    ```
    """

    data = operand_def(TensorType)
    outputs = var_result_def(TensorType)
    traits = traits_def(Pure())
    indices_or_sections = IntOrInts()
    axis = Int(0)

    @classmethod
    def infer_types(cls, in_types, attrs):
        ds = shape_of(in_types[0])
        axis = norm_axis(cls, attrs["axis"], len(ds))
        ios = attrs["indices_or_sections"]
        d = ds[axis]
        if isinstance(ios, int):
            if ios <= 0:
                raise fail(cls, f"sections must be positive, got {ios}")
            if d is not None and d % ios:
                raise fail(cls, f"axis {axis} of size {d} is not divisible into {ios} sections")
            sizes = [None if d is None else d // ios] * ios
        else:
            bounds = [0, *ios, d]
            if d is not None and any(b < a for a, b in zip(bounds, bounds[1:])):
                raise fail(cls, f"indices {list(ios)} must be increasing within {d}")
            sizes = [None if b is None else b - a for a, b in zip(bounds, bounds[1:])]
        out = []
        for size in sizes:
            s = list(ds)
            s[axis] = size
            out.append(new_tensor(s, _dt(in_types[0])))
        return out


@relay_op("squeeze", OpPattern.INJECTIVE, reshape_only=True)
class SqueezeOp(RelayOp):
    """Remove size-1 axes (all of them when absent).

    ```mlir
    %y = relay.squeeze %x {axis = [2, 3]} : (tensor<1x8x1x1xf32>) -> tensor<1x8xf32>
    ```
    """

    RELAY_TEXT_ALWAYS = frozenset({"axis"})

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    axis = Ints(None)

    @classmethod
    def normalize_attrs(cls, attrs, in_types):
        if isinstance(attrs["axis"], int):
            attrs["axis"] = (attrs["axis"],)
        return attrs

    @classmethod
    def infer_types(cls, in_types, attrs):
        ds = shape_of(in_types[0])
        if attrs["axis"] is None:
            return [new_tensor([d for d in ds if d != 1], _dt(in_types[0]))]
        axes = {norm_axis(cls, a, len(ds)) for a in attrs["axis"]}
        for a in axes:
            if ds[a] is not None and ds[a] != 1:
                raise fail(cls, f"axis {a} of {in_types[0]} has size {ds[a]}, not 1")
        return [new_tensor([d for i, d in enumerate(ds) if i not in axes], _dt(in_types[0]))]


@relay_op("expand_dims", OpPattern.BROADCAST, reshape_only=True)
class ExpandDimsOp(RelayOp):
    """Insert num_newaxis size-1 axes at axis.

    ```mlir
    %y = relay.expand_dims %x {axis = 1, num_newaxis = 2} : (tensor<64xf32>) -> tensor<64x1x1xf32>
    ```
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    axis = Int()
    num_newaxis = Int(1)

    @classmethod
    def infer_types(cls, in_types, attrs):
        ds = list(shape_of(in_types[0]))
        axis = norm_axis(cls, attrs["axis"], len(ds) + 1)
        if attrs["num_newaxis"] < 0:
            raise fail(cls, f"num_newaxis must be >= 0, got {attrs['num_newaxis']}")
        # Checked before the list is built: num_newaxis = 2**31 would need 17 GB for it.
        if len(ds) + attrs["num_newaxis"] > MAX_RANK:
            raise fail(
                cls,
                f"num_newaxis {attrs['num_newaxis']} gives rank {len(ds) + attrs['num_newaxis']}, "
                f"more than the {MAX_RANK} dimensions a tensor can have",
            )
        out = ds[:axis] + [1] * attrs["num_newaxis"] + ds[axis:]
        return [new_tensor(out, _dt(in_types[0]))]


def strided_slice_bounds(
    ds: Sequence[int | None], begin, end, strides, axes, slice_mode: str
) -> list[tuple[int, int, int]] | None:
    """(begin, end, stride) per axis with Relay's clamping; None when a dim is dynamic."""
    rank = len(ds)
    axes = list(range(rank)) if axes is None else [a + rank if a < 0 else a for a in axes]
    n = len(axes)
    begin = list(begin) + [0] * (n - len(begin))
    # axes past the given begin/strides are taken whole with stride 1, as Relay does
    strides = list(strides) if strides else []
    strides = strides + [1] * (n - len(strides))
    end_given = list(end)
    out = [(0, d, 1) for d in ds]
    for k, ax in enumerate(axes):
        d = ds[ax]
        if d is None:
            return None
        s = strides[k]
        if slice_mode == "size":
            s = 1
        b = begin[k]
        if k < len(end_given):
            e = end_given[k]
        else:
            e = d if s > 0 else -(d + 1)
        if slice_mode == "size":
            e = d if e < 0 else b + e if b >= 0 else b + d + e
        if s > 0:
            b = b + d if b < 0 else b
            e = e + d if e < 0 else e
            b, e = min(max(b, 0), d), min(max(e, 0), d)
        else:
            # negative stride: indices run down from begin to just above end; -1 is "before 0"
            b = b + d if b < 0 else b
            e = e + d if e < 0 else e
            b = min(max(b, -1), d - 1)
            e = min(max(e, -1), d - 1)
        out[ax] = (b, e, s)
    return out


@relay_op("strided_slice", OpPattern.INJECTIVE)
class StridedSliceOp(RelayOp):
    """Relay's strided_slice: begin/end/strides per axis (or per listed axes), slice_mode end|size.

    ```mlir
    %y = relay.strided_slice %x {begin = [0, 1], end = [2, 3]} : (tensor<4x4xf32>) -> tensor<2x2xf32>
    ```
    """

    RELAY_TEXT_ALWAYS = frozenset({"strides", "axes"})

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    begin = Ints()
    end = Ints()
    strides = Ints(None)
    slice_mode = Str("end")
    axes = Ints(None)

    @classmethod
    def infer_types(cls, in_types, attrs):
        ds = shape_of(in_types[0])
        if attrs["slice_mode"] not in ("end", "size"):
            raise fail(cls, f"slice_mode must be 'end' or 'size', got '{attrs['slice_mode']}'")
        axes = attrs["axes"]
        n = len(ds) if axes is None else len(axes)
        if len(attrs["begin"]) > n or len(attrs["end"]) > n:
            raise fail(cls, f"begin/end longer than the {n} sliced axes of {in_types[0]}")
        if attrs["strides"] and any(s == 0 for s in attrs["strides"]):
            raise fail(cls, "strides must be non-zero")
        if axes is not None:
            for a in axes:
                norm_axis(cls, a, len(ds))
        bounds = strided_slice_bounds(
            ds, attrs["begin"], attrs["end"], attrs["strides"], axes, attrs["slice_mode"]
        )
        if bounds is None:
            sliced = set(range(len(ds)) if axes is None else [a % len(ds) for a in axes])
            out = [None if i in sliced else d for i, d in enumerate(ds)]
        else:
            out = []
            for b, e, s in bounds:
                if s > 0:
                    out.append(max(0, -(-(e - b) // s)))
                else:
                    out.append(max(0, -(-(b - e) // -s)))
        return [new_tensor(out, _dt(in_types[0]))]


_LAYOUT_TOKEN = re.compile(r"(\d*)([A-Za-z])")


def parse_layout(layout: str) -> list[tuple[str, int]]:
    """Split a layout like ``"NCHW8c"`` into ``[("N", 0), ("C", 0), ("H", 0), ("W", 0), ("c", 8)]``.

    Upper-case letters are primal axes (factor 0); a lower-case letter with its preceding
    factor is the inner part of the matching primal axis. Raises ValueError naming the flaw.
    """
    toks: list[tuple[str, int]] = []
    pos = 0
    for m in _LAYOUT_TOKEN.finditer(layout):
        if m.start() != pos:
            break
        digits, letter = m.groups()
        if letter.isupper():
            if digits:
                raise ValueError(f"layout {layout!r}: a factor must precede a lower-case axis")
            toks.append((letter, 0))
        else:
            if not digits or int(digits) <= 0:
                raise ValueError(f"layout {layout!r}: sub-axis {letter!r} needs a positive factor")
            toks.append((letter, int(digits)))
        pos = m.end()
    if pos != len(layout) or not layout:
        raise ValueError(f"invalid layout {layout!r}")
    names = [t for t, _ in toks]
    if len(set(names)) != len(names):
        raise ValueError(f"layout {layout!r} repeats an axis")
    for t, _ in toks:
        if t.islower() and t.upper() not in names:
            raise ValueError(f"layout {layout!r}: sub-axis {t!r} without primal axis {t.upper()!r}")
    return toks


def layout_transform_shape(cls, ds, src: str, dst: str) -> list[int | None]:
    try:
        s_axes, d_axes = parse_layout(src), parse_layout(dst)
    except ValueError as e:
        raise fail(cls, str(e)) from None
    if len(ds) != len(s_axes):
        raise fail(cls, f"layout '{src}' has {len(s_axes)} axes but the input has rank {len(ds)}")
    primal_s = sorted(a for a, _ in s_axes if a.isupper())
    primal_d = sorted(a for a, _ in d_axes if a.isupper())
    if primal_s != primal_d:
        raise fail(cls, f"layouts '{src}' and '{dst}' have different primal axes")
    # full size of every primal axis
    sizes: dict[str, int | None] = {}
    for (ax, _), d in zip(s_axes, ds):
        if ax.isupper():
            sizes[ax] = d if sizes.get(ax, 1) is not None else None
    for (ax, f), d in zip(s_axes, ds):
        if ax.islower():
            up = ax.upper()
            if d is not None and d != f:
                raise fail(cls, f"sub-axis {f}{ax} of '{src}' has size {d}")
            if sizes[up] is not None:
                sizes[up] = sizes[up] * f
    out: list[int | None] = []
    sub = {ax.upper(): f for ax, f in d_axes if ax.islower()}
    for ax, f in d_axes:
        if ax.islower():
            out.append(f)
        else:
            full = sizes[ax]
            if ax in sub:
                if full is not None and full % sub[ax]:
                    raise fail(cls, f"axis {ax} of size {full} is not divisible by {sub[ax]}")
                out.append(None if full is None else full // sub[ax])
            else:
                out.append(full)
    return out


@relay_op("layout_transform", OpPattern.INJECTIVE)
class LayoutTransformOp(RelayOp):
    """Change data layout, including blocked layouts such as NCHW8c.

    ```mlir
    %y = relay.layout_transform %x {src_layout = "NCHW", dst_layout = "NCHW4c"} : (tensor<1x8x2x2xf32>) -> tensor<1x2x2x2x4xf32>
    ```
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    src_layout = Str()
    dst_layout = Str()

    @classmethod
    def infer_types(cls, in_types, attrs):
        out = layout_transform_shape(cls, shape_of(in_types[0]), attrs["src_layout"], attrs["dst_layout"])
        return [new_tensor(out, _dt(in_types[0]))]


@relay_op("broadcast_to", OpPattern.BROADCAST)
class BroadcastToOp(RelayOp):
    """Broadcast to a shape.

    ```mlir
    %y = relay.broadcast_to %x {shape = [4, 3]} : (tensor<1x3xf32>) -> tensor<4x3xf32>
    ```
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    shape = Ints()

    @classmethod
    def infer_types(cls, in_types, attrs):
        target = new_tensor(attrs["shape"], _dt(in_types[0]))
        out = broadcast_shapes(cls, [in_types[0], target])
        if tuple(out) != tuple(attrs["shape"]):
            raise fail(cls, f"cannot broadcast {in_types[0]} to {list(attrs['shape'])}")
        return [target]


@relay_op("take", OpPattern.INJECTIVE)
class TakeOp(RelayOp):
    """Gather elements along an axis (flattened when absent); mode clip|wrap|fast.

    ```mlir
    %y = relay.take %x, %i {axis = 0} : (tensor<10x4xf32>, tensor<3xi32>) -> tensor<3x4xf32>
    ```
    """

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    batch_dims = Int(0)
    axis = Int(None)
    mode = Str("clip")

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, idx = in_types
        ds, is_ = shape_of(data), shape_of(idx)
        if not _dt(idx).startswith(("int", "uint")):
            raise fail(cls, f"indices must be integers, got {idx}")
        if attrs["mode"] not in ("clip", "wrap", "fast"):
            raise fail(cls, f"unknown mode '{attrs['mode']}'")
        if attrs["axis"] is None:
            return [new_tensor(is_, _dt(data))]
        axis = norm_axis(cls, attrs["axis"], len(ds))
        bd = attrs["batch_dims"]
        out = list(ds[:axis]) + list(is_[bd:]) + list(ds[axis + 1 :])
        return [new_tensor(out, _dt(data))]


@relay_op("tile", OpPattern.BROADCAST)
class TileOp(RelayOp):
    """Repeat the tensor reps times per axis.

    ```mlir
    %y = relay.tile %x {reps = [2, 1]} : (tensor<2x3xf32>) -> tensor<4x3xf32>
    ```
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    reps = Ints()

    @classmethod
    def infer_types(cls, in_types, attrs):
        ds = list(shape_of(in_types[0]))
        reps = list(attrs["reps"])
        rank = max(len(ds), len(reps))
        ds = [1] * (rank - len(ds)) + ds
        reps = [1] * (rank - len(reps)) + reps
        out = [None if d is None else d * r for d, r in zip(ds, reps)]
        return [new_tensor(out, _dt(in_types[0]))]


# ============================================================================================
# Misc: shape_of, devices, stop_fusion
# ============================================================================================


@relay_op("shape_of", OpPattern.OPAQUE)
class ShapeOfOp(RelayOp):
    """The shape of a tensor as a 1-D tensor.

    ```mlir
    %s = relay.shape_of %x : (tensor<1x3x4xf32>) -> tensor<3xi32>
    ```
    """

    RELAY_TEXT_ALWAYS = frozenset({"dtype"})

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    dtype = Str("int32")

    @classmethod
    def infer_types(cls, in_types, attrs):
        return [new_tensor((len(shape_of(in_types[0])),), attrs["dtype"])]


@relay_op("on_device", OpPattern.OPAQUE, non_computational=True)
class OnDeviceOp(RelayOp):
    """Annotate where a value lives (Relay's ``on_device``); an identity for computation.

    ``constrain_body``: the operand is computed on ``virtual_device``; ``constrain_result``: the
    result lives there (plan-devices inserts a ``device_copy`` where they differ).

    ```mlir
    %y = relay.on_device %x {virtual_device = #relay.virtual_device<cpu(0)>} : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    virtual_device = Device(UNCONSTRAINED)  # Relay's default: fully unconstrained
    constrain_result = Bool(False)
    constrain_body = Bool(True)

    @classmethod
    def infer_types(cls, in_types, attrs):
        return [in_types[0]]


@relay_op("device_copy", OpPattern.OPAQUE)
class DeviceCopyOp(RelayOp):
    """Copy a tensor from one device (or memory scope) to another; never folded.

    ```mlir
    %y = relay.device_copy %x {src_virtual_device = #relay.virtual_device<cpu(0)>, dst_virtual_device = #relay.virtual_device<cuda(0)>} : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    src_virtual_device = Device()
    dst_virtual_device = Device()

    @classmethod
    def infer_types(cls, in_types, attrs):
        return [in_types[0]]


@irdl_attr_definition
class StorageType(ParametrizedAttribute, TypeAttribute):
    """Relay's ``Storage`` (core.rly's opaque ``type Storage``): the bytes that
    ``memory.alloc_storage`` allocates at the Relay level, before xrelay's own planning (the
    memory dialect's ``!memory.storage``). ``!relay.storage``."""

    name = "relay.storage"


@relay_op("memory.alloc_storage", OpPattern.OPAQUE, non_computational=True)
class RelayAllocStorageOp(RelayOp):
    """Relay's ``memory.alloc_storage(size, shape, alignment, virtual_device=..., dtype=...)``
    (TVM's memory.cc): ``size`` and ``alignment`` int64 scalars, ``shape`` a tensor; the
    result is a ``Storage``. Not stateful (TVM's ``TOpIsStateful`` false): an unused one is dead.

    ```mlir
    %s = relay.memory.alloc_storage %size, %shape, %align {virtual_device = #relay.virtual_device<cpu(0)>} : (tensor<i64>, tensor<2xi64>, tensor<i64>) -> !relay.storage
    ```
    """

    size = operand_def(TensorType)
    shape = operand_def(TensorType)
    alignment = operand_def(TensorType)
    result = result_def(StorageType)
    traits = traits_def(Pure())  # TVM: not stateful, so dead when unused and CSE may merge it
    virtual_device = Device(UNCONSTRAINED)
    dtype = Str("float32")

    @classmethod
    def infer_types(cls, in_types, attrs):
        for t, what in ((in_types[0], "size"), (in_types[2], "alignment")):
            if shape_of(t) != () or dtype_of(t) != "int64":
                raise fail(cls, f"{what} must be an int64 scalar, got {t}")
        if attrs["dtype"] not in DTYPES:
            raise fail(cls, f"unknown dtype '{attrs['dtype']}'")
        return [StorageType()]


@relay_op("memory.kill", OpPattern.OPAQUE, stateful=True, non_computational=True)
class RelayKillOp(RelayOp):
    """Relay's ``memory.kill(%x)``: release a value (a storage or a tensor) to the allocator.
    Stateful (TVM's ``TOpIsStateful``): never deleted, folded or moved. Its result is Relay's
    ``()``, no value here (decision 3).

    ```mlir
    relay.memory.kill %s : (!relay.storage) -> ()
    ```
    """

    NON_TENSOR_OPERANDS = True
    to_free = operand_def(TensorType | StorageType)
    traits = traits_def(MemoryFreeEffect())

    @classmethod
    def infer_types(cls, in_types, attrs):
        return []


class _CompilerAnnotation(RelayOp):
    """An identity naming the external compiler of a region (Relay's ``CompilerAttrs``)."""

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    compiler = Str()

    @classmethod
    def infer_types(cls, in_types, attrs):
        return [in_types[0]]


@relay_op("annotation.compiler_begin", OpPattern.OPAQUE)
class CompilerBeginOp(_CompilerAnnotation):
    """Start of a region offloaded to an external compiler (Relay's BYOC annotation).

    annotate-target puts one on each input of a supported op; partition-graph removes it.

    ```mlir
    %y = relay.annotation.compiler_begin %x {compiler = "dnnl"} : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("annotation.compiler_end", OpPattern.OPAQUE)
class CompilerEndOp(_CompilerAnnotation):
    """End of a region offloaded to an external compiler (Relay's BYOC annotation).

    ```mlir
    %y = relay.annotation.compiler_end %x {compiler = "dnnl"} : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """


@relay_op("annotation.stop_fusion", OpPattern.OPAQUE)
class StopFusionOp(RelayOp):
    """Identity that cuts fusion groups; fuse-ops strips it.

    ```mlir
    %y = relay.annotation.stop_fusion %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def infer_types(cls, in_types, attrs):
        return [in_types[0]]
