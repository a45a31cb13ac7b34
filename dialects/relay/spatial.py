"""Relay's 1-D and 3-D convolutions and pools, ``nn.conv3d_transpose``, ``nn.deformable_conv2d``, ``nn.upsampling``,
``image.resize1d`` and ``image.resize2d``.

Attributes, defaults and padding forms are Relay's: ``nn.conv1d`` padding is ``[left, right]``,
3-D padding ``[front, top, left, back, bottom, right]`` (a single value or one per axis is
widened as Relay's Python API does). Layouts are any permutation of the canonical letters
(``NCW``/``OIW``, ``NCDHW``/``OIDHW``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import operand_def, result_def, traits_def
from xdsl.traits import Pure

from xrelay.dialects.relay import ops as _ops  # noqa: F401 - relay's own ops register first
from xrelay.dialects.relay.base import (
    Bool,
    Float,
    Floats,
    Int,
    Ints,
    OpPattern,
    RelayOp,
    Str,
    conv_out,
    fail,
    new_tensor,
    relay_op,
)
from xrelay.dialects.relay.dtypes import DTYPES, dtype_of, shape_of
from xrelay.dialects.relay.ops import (
    _blocked_types,
    _check_rank,
    _layout_axes,
    _pad4,
    _pair,
    check_positive,
    parse_layout,
)


def _axes(cls, layout: str, canonical: str) -> list[int]:
    """Positions in ``layout`` of the letters of ``canonical``."""
    if sorted(layout) != sorted(canonical) or len(set(layout)) != len(layout):
        raise fail(cls, f"unsupported layout '{layout}' (expected a permutation of {canonical})")
    return [layout.index(c) for c in canonical]


def _tuple(cls, name: str, v: Any, n: int) -> tuple[int, ...]:
    v = (v,) if isinstance(v, int) else tuple(v)
    if len(v) == 1:
        v = v * n
    if len(v) != n:
        raise fail(cls, f"'{name}' must have {n} values, got {len(v)}")
    return v


def _padding(cls, v: Any, n: int) -> tuple[int, ...]:
    """Relay's pad tuples: one value, one per axis (both sides) or before... + after..."""
    p = (v,) if isinstance(v, int) else tuple(v)
    if len(p) == 1:
        return p * (2 * n)
    if len(p) == n and n > 1:
        return p + p
    if len(p) == 2 * n:
        return p
    raise fail(cls, f"padding must have 1, {n} or {2 * n} values, got {len(p)}" if n > 1 else
               f"padding must have 1 or 2 values, got {len(p)}")  # fmt: skip


def _rank(cls, t: TensorType, rank: int, what: str) -> tuple:
    s = shape_of(t)
    if len(s) != rank:
        raise fail(cls, f"{what} must have rank {rank}, got {t}")
    return s


# ============================================================================================
# Convolutions
# ============================================================================================


class _ConvND(RelayOp):
    """Operands, attributes and inference shared by conv1d and conv3d (plain or blocked
    layouts, as conv2d's)."""

    data = operand_def(TensorType)
    weight = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    groups = Int(1)
    channels = Int(None)
    kernel_size = Ints(None)
    out_layout = Str("")
    out_dtype = Str("")
    CANONICAL: ClassVar[str] = ""
    KCANONICAL: ClassVar[str] = ""

    @classmethod
    def normalize_attrs(cls, attrs, in_types):
        n = len(cls.CANONICAL) - 2
        check_positive(cls, attrs, ("strides", "dilation", "groups", "kernel_size"))
        attrs["padding"] = _padding(cls, attrs["padding"], n)
        for k in ("strides", "dilation"):
            attrs[k] = _tuple(cls, k, attrs[k], n)
        if attrs["kernel_size"] is not None:
            attrs["kernel_size"] = _tuple(cls, "kernel_size", attrs["kernel_size"], n)
        return attrs

    @classmethod
    def infer_types(cls, in_types, attrs):
        # blocked layouts (NCDHW2c data, OIDHW2i4o kernel) infer in their primal layouts
        if (blocked := _blocked_types(cls, in_types, attrs, ("data_layout", "kernel_layout"), "out_layout")):
            return blocked
        data, weight = in_types
        n = len(cls.CANONICAL) - 2
        ds = _rank(cls, data, n + 2, "data")
        ws = _rank(cls, weight, n + 2, "weight")
        da = _axes(cls, attrs["data_layout"], cls.CANONICAL)
        ka = _axes(cls, attrs["kernel_layout"], cls.KCANONICAL)
        groups = attrs["groups"]
        if groups < 1:
            raise fail(cls, f"groups must be positive, got {groups}")
        cin, cout, wi = ds[da[1]], ws[ka[0]], ws[ka[1]]
        if cin is not None and wi is not None and cin != wi * groups:
            raise fail(cls, f"data {data} has {cin} input channels but weight {weight} expects {wi} x groups {groups}")
        if cout is not None and cout % groups:
            raise fail(cls, f"output channels {cout} of weight {weight} not divisible by groups {groups}")
        if attrs["channels"] is not None and cout is not None and attrs["channels"] != cout:
            raise fail(cls, f"channels = {attrs['channels']} but weight {weight} has {cout} output channels")
        kernel = [ws[a] for a in ka[2:]]
        if attrs["kernel_size"] is not None and tuple(kernel) != tuple(attrs["kernel_size"]):
            raise fail(cls, f"kernel_size = {list(attrs['kernel_size'])} but weight {weight} has {kernel}")
        pad = attrs["padding"]
        spatial = []
        for i in range(n):
            o = conv_out(ds[da[2 + i]], kernel[i], pad[i] + pad[i + n], attrs["strides"][i], attrs["dilation"][i])
            if o is not None and o <= 0:
                raise fail(cls, f"output size along axis {cls.CANONICAL[2 + i]} is empty for {data} and {weight}")
            spatial.append(o)
        canonical = [ds[da[0]], cout, *spatial]
        out_layout = attrs["out_layout"] or attrs["data_layout"]
        oa = _axes(cls, out_layout, cls.CANONICAL)
        out: list[int | None] = [0] * (n + 2)
        for k, a in enumerate(oa):
            out[a] = canonical[k]
        return [new_tensor(out, attrs["out_dtype"] or dtype_of(data.element_type))]


@relay_op("nn.conv1d", OpPattern.OUT_ELEMWISE_FUSABLE)
class Conv1DOp(_ConvND):
    """1-D convolution (padding ``[left, right]``).

    ```mlir
    %y = relay.nn.conv1d %x, %w {padding = [1, 1]} : (tensor<1x4x16xf32>, tensor<8x4x3xf32>) -> tensor<1x8x16xf32>
    ```
    """

    strides = Ints((1,))
    padding = Ints((0, 0))
    dilation = Ints((1,))
    data_layout = Str("NCW")
    kernel_layout = Str("OIW")
    CANONICAL: ClassVar[str] = "NCW"
    KCANONICAL: ClassVar[str] = "OIW"


@relay_op("nn.conv3d", OpPattern.OUT_ELEMWISE_FUSABLE)
class Conv3DOp(_ConvND):
    """3-D convolution (padding ``[front, top, left, back, bottom, right]``).

    ```mlir
    %y = relay.nn.conv3d %x, %w {padding = [1, 1, 1, 1, 1, 1]}
           : (tensor<1x2x4x8x8xf32>, tensor<4x2x3x3x3xf32>) -> tensor<1x4x4x8x8xf32>
    ```
    """

    RELAY_TEXT_ALWAYS = frozenset({"padding"})

    strides = Ints((1, 1, 1))
    padding = Ints((0, 0, 0, 0, 0, 0))
    dilation = Ints((1, 1, 1))
    data_layout = Str("NCDHW")
    kernel_layout = Str("OIDHW")
    CANONICAL: ClassVar[str] = "NCDHW"
    KCANONICAL: ClassVar[str] = "OIDHW"


@relay_op("nn.conv3d_transpose", OpPattern.OUT_ELEMWISE_FUSABLE)
class Conv3DTransposeOp(_ConvND):
    """Transposed 3-D convolution (the gradient of conv3d w.r.t. its input; weight IODHW, I =
    all input channels, O = output channels per group, as Relay). Output size per axis:
    ``(x - 1) * stride - pad_before - pad_after + (k - 1) * dilation + 1 + output_padding``.

    ```mlir
    %y = relay.nn.conv3d_transpose %x, %w {strides = [2, 2, 2], padding = [1, 1, 1, 1, 1, 1]}
           : (tensor<1x4x3x3x3xf32>, tensor<4x2x3x3x3xf32>) -> tensor<1x2x5x5x5xf32>
    ```
    """

    RELAY_TEXT_ALWAYS = frozenset({"padding"})

    strides = Ints((1, 1, 1))
    padding = Ints((0, 0, 0, 0, 0, 0))
    dilation = Ints((1, 1, 1))
    output_padding = Ints((0, 0, 0))
    data_layout = Str("NCDHW")
    kernel_layout = Str("IODHW")
    CANONICAL: ClassVar[str] = "NCDHW"
    KCANONICAL: ClassVar[str] = "IODHW"

    @classmethod
    def normalize_attrs(cls, attrs, in_types):
        attrs = super().normalize_attrs(attrs, in_types)
        attrs["output_padding"] = _tuple(cls, "output_padding", attrs["output_padding"], 3)
        if min(attrs["output_padding"]) < 0:
            raise fail(cls, f"output_padding must not be negative, got {list(attrs['output_padding'])}")
        return attrs

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, weight = in_types
        ds = _rank(cls, data, 5, "data")
        ws = _rank(cls, weight, 5, "weight")
        da = _axes(cls, attrs["data_layout"], "NCDHW")
        ka = _axes(cls, attrs["kernel_layout"], "IODHW")
        groups = attrs["groups"]
        cin, wi, wo = ds[da[1]], ws[ka[0]], ws[ka[1]]
        if cin is not None and wi is not None and cin != wi:
            raise fail(cls, f"data {data} has {cin} channels but weight {weight} expects {wi}")
        if cin is not None and cin % groups:
            raise fail(cls, f"{cin} input channels are not divisible by groups {groups}")
        cout = None if wo is None else wo * groups
        if attrs["channels"] is not None and cout is not None and attrs["channels"] != cout:
            raise fail(cls, f"channels = {attrs['channels']} but weight {weight} gives {cout}")
        kernel = [ws[a] for a in ka[2:]]
        if attrs["kernel_size"] is not None and tuple(kernel) != tuple(attrs["kernel_size"]):
            raise fail(cls, f"kernel_size = {list(attrs['kernel_size'])} but weight {weight} has {kernel}")
        pad = attrs["padding"]
        spatial: list[int | None] = []
        for i in range(3):
            x, k = ds[da[2 + i]], kernel[i]
            if x is None or k is None:
                spatial.append(None)
                continue
            o = (x - 1) * attrs["strides"][i] - pad[i] - pad[i + 3] + (k - 1) * attrs["dilation"][i] + 1
            o += attrs["output_padding"][i]
            if o <= 0:
                raise fail(cls, f"output size along axis {'DHW'[i]} is empty for {data} and {weight}")
            spatial.append(o)
        out_dtype = attrs["out_dtype"] or dtype_of(data.element_type)
        return [_out(cls, [ds[da[0]], cout, *spatial], attrs["out_layout"] or attrs["data_layout"], "NCDHW", out_dtype)]


# ============================================================================================
# 3-D pools
# ============================================================================================


class _Pool3D(RelayOp):
    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    pool_size = Ints()
    strides = Ints((1, 1, 1))
    dilation = Ints((1, 1, 1))
    padding = Ints((0, 0, 0, 0, 0, 0))
    layout = Str("NCDHW")
    out_layout = Str("")
    ceil_mode = Bool(False)

    @classmethod
    def normalize_attrs(cls, attrs, in_types):
        check_positive(cls, attrs, ("pool_size", "strides", "dilation"))
        attrs["padding"] = _padding(cls, attrs["padding"], 3)
        for k in ("pool_size", "strides", "dilation"):
            attrs[k] = _tuple(cls, k, attrs[k], 3)
        return attrs

    @classmethod
    def infer_types(cls, in_types, attrs):
        (data,) = in_types
        ds = _rank(cls, data, 5, "data")
        axes = _axes(cls, attrs["layout"], "NCDHW")
        pad = attrs["padding"]
        canonical = [ds[a] for a in axes]
        for i in range(3):
            x, k, s, d = canonical[2 + i], attrs["pool_size"][i], attrs["strides"][i], attrs["dilation"][i]
            if x is None:
                continue
            if s < 1 or d < 1:
                raise fail(cls, "strides and dilation must be positive")
            span = x + pad[i] + pad[i + 3] - ((k - 1) * d + 1)
            if span < 0:
                raise fail(cls, f"pool window {list(attrs['pool_size'])} larger than padded input {data}")
            canonical[2 + i] = (span + (s - 1 if attrs["ceil_mode"] else 0)) // s + 1
        return [_out(cls, canonical, attrs["out_layout"] or attrs["layout"], "NCDHW", dtype_of(data.element_type))]


def _out(cls, canonical: Sequence[int | None], layout: str, letters: str, dtype: str) -> TensorType:
    out: list[int | None] = [0] * len(letters)
    for k, a in enumerate(_axes(cls, layout, letters)):
        out[a] = canonical[k]
    return new_tensor(out, dtype)


@relay_op("nn.max_pool3d", OpPattern.OUT_ELEMWISE_FUSABLE)
class MaxPool3DOp(_Pool3D):
    """3-D max pooling.

    ```mlir
    %y = relay.nn.max_pool3d %x {pool_size = [2, 2, 2], strides = [2, 2, 2]} : (tensor<1x4x8x8x8xf32>) -> tensor<1x4x4x4x4xf32>
    ```
    """

    RELAY_TEXT_ALWAYS = frozenset({"padding"})


@relay_op("nn.avg_pool3d", OpPattern.OUT_ELEMWISE_FUSABLE)
class AvgPool3DOp(_Pool3D):
    """3-D average pooling.

    ```mlir
    %y = relay.nn.avg_pool3d %x {pool_size = [2, 2, 2], strides = [2, 2, 2]} : (tensor<1x4x8x8x8xf32>) -> tensor<1x4x4x4x4xf32>
    ```
    """

    RELAY_TEXT_ALWAYS = frozenset({"padding"})

    count_include_pad = Bool(False)


class _AdaptivePool3D(RelayOp):
    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    output_size = Ints(None)
    layout = Str("NCDHW")
    out_layout = Str("")

    @classmethod
    def normalize_attrs(cls, attrs, in_types):
        if attrs["output_size"] is not None:
            attrs["output_size"] = _tuple(cls, "output_size", attrs["output_size"], 3)
        return attrs

    @classmethod
    def infer_types(cls, in_types, attrs):
        ds = _rank(cls, in_types[0], 5, "data")
        canonical = [ds[a] for a in _axes(cls, attrs["layout"], "NCDHW")]
        if attrs["output_size"] is not None:  # absent: the input's size (Relay's AdaptivePool3DRel)
            canonical[2:] = attrs["output_size"]
        if any(d is not None and d <= 0 for d in canonical[2:]):
            raise fail(cls, f"output_size must be positive, got {list(canonical[2:])}")
        layout = attrs["out_layout"] or attrs["layout"]
        return [_out(cls, canonical, layout, "NCDHW", dtype_of(in_types[0].element_type))]


@relay_op("nn.adaptive_avg_pool3d", OpPattern.OUT_ELEMWISE_FUSABLE)
class AdaptiveAvgPool3DOp(_AdaptivePool3D):
    """Average pooling to a given output size (absent: the input's size, as in Relay).

    ```mlir
    %y = relay.nn.adaptive_avg_pool3d %x {output_size = [1, 1, 1]} : (tensor<1x8x4x7x7xf32>) -> tensor<1x8x1x1x1xf32>
    ```
    """


@relay_op("nn.adaptive_max_pool3d", OpPattern.OUT_ELEMWISE_FUSABLE)
class AdaptiveMaxPool3DOp(_AdaptivePool3D):
    """Max pooling to a given output size (absent: the input's size, as in Relay).

    ```mlir
    %y = relay.nn.adaptive_max_pool3d %x {output_size = [2, 2, 2]} : (tensor<1x8x4x8x8xf32>) -> tensor<1x8x2x2x2xf32>
    ```
    """


@relay_op("nn.deformable_conv2d", OpPattern.OUT_ELEMWISE_FUSABLE)
class DeformableConv2DOp(RelayOp):
    """2-D deformable convolution: each tap reads the data at its position plus a learned
    offset, bilinearly sampled (zero outside the image). ``offset`` holds
    ``deformable_groups * kh * kw`` (dy, dx) pairs per output position, in the data's layout.

    ```mlir
    %y = relay.nn.deformable_conv2d %x, %off, %w {kernel_size = [3, 3], channels = 4}
           : (tensor<1x2x6x6xf32>, tensor<1x18x4x4xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x4x4xf32>
    ```
    """

    RELAY_TEXT_ALWAYS = frozenset({"padding"})

    data = operand_def(TensorType)
    offset = operand_def(TensorType)
    weight = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    strides = Ints((1, 1))
    padding = Ints((0, 0, 0, 0))
    dilation = Ints((1, 1))
    deformable_groups = Int(1)
    groups = Int(1)
    channels = Int(None)
    kernel_size = Ints(None)
    data_layout = Str("NCHW")
    kernel_layout = Str("OIHW")
    out_layout = Str("")
    out_dtype = Str("")

    @classmethod
    def normalize_attrs(cls, attrs, in_types):
        check_positive(cls, attrs, ("strides", "dilation", "groups", "deformable_groups", "kernel_size"))
        attrs["padding"] = _pad4(cls, attrs["padding"])
        for k in ("strides", "dilation"):
            attrs[k] = _pair(cls, k, attrs[k])
        if attrs["kernel_size"] is not None:
            attrs["kernel_size"] = _pair(cls, "kernel_size", attrs["kernel_size"])
        return attrs

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, offset, weight = in_types
        ds = _check_rank(cls, data, 4, "data")
        ws = _check_rank(cls, weight, 4, "weight")
        n_, c_, h_, w_ = _layout_axes(cls, attrs["data_layout"], "NCHW")
        o_, i_, kh_, kw_ = _layout_axes(cls, attrs["kernel_layout"], "OIHW")
        out_layout = attrs["out_layout"] or attrs["data_layout"]
        _layout_axes(cls, out_layout, "NCHW")
        groups, dg = attrs["groups"], attrs["deformable_groups"]
        cin, cout, kh, kw = ds[c_], ws[o_], ws[kh_], ws[kw_]
        if cin is not None and ws[i_] is not None and cin != ws[i_] * groups:
            raise fail(cls, f"data {data} has {cin} input channels but weight {weight} expects {ws[i_]} x groups {groups}")
        if cin is not None and cin % dg:
            raise fail(cls, f"input channels {cin} not divisible by deformable_groups {dg}")
        if attrs["channels"] is not None and cout is not None and attrs["channels"] != cout:
            raise fail(cls, f"channels = {attrs['channels']} but weight {weight} has {cout} output channels")
        if attrs["kernel_size"] is not None and (kh, kw) != tuple(attrs["kernel_size"]):
            raise fail(cls, f"kernel_size = {list(attrs['kernel_size'])} but weight {weight} has {kh}x{kw}")
        pt, pl, pb, pr = attrs["padding"]
        (sh, sw), (dh, dw) = attrs["strides"], attrs["dilation"]
        oh, ow = conv_out(ds[h_], kh, pt + pb, sh, dh), conv_out(ds[w_], kw, pl + pr, sw, dw)
        if (oh is not None and oh <= 0) or (ow is not None and ow <= 0):
            raise fail(cls, f"output spatial size {oh}x{ow} is empty for data {data} and weight {weight}")
        nchw = {"N": ds[n_], "C": None if kh is None or kw is None else 2 * kh * kw * dg, "H": oh, "W": ow}
        want = [nchw[a] for a in attrs["data_layout"]]
        got = list(shape_of(offset))
        if len(got) != 4 or any(a is not None and b is not None and a != b for a, b in zip(got, want)):
            raise fail(cls, f"offset {offset} must have shape {want} ({attrs['data_layout']}: N, 2 * kh * kw * deformable_groups, out_h, out_w)")
        nchw.update(C=cout)
        return [new_tensor([nchw[a] for a in out_layout], attrs["out_dtype"] or dtype_of(data.element_type))]


# ============================================================================================
# Resizing
# ============================================================================================

_METHODS = ("nearest_neighbor", "linear", "cubic")
_COORDINATES = (
    "half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn",
    "tf_crop_and_resize",
)  # fmt: skip
_ROUNDING = ("", "round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil")


def _hw(cls, layout: str, t: TensorType) -> tuple[int, int]:
    """Positions of H and W; a layout may block its channels (``NCHW16c``), not H or W."""
    try:
        axes = parse_layout(layout)
    except ValueError as e:
        raise fail(cls, str(e)) from None
    if any(a.islower() for a, _ in axes):
        if "".join(sorted(a for a, _ in axes if a.isupper())) != "CHNW" or [a for a, _ in axes if a.islower()] != ["c"]:
            raise fail(cls, f"unsupported layout '{layout}' (expected NCHW with at most C blocked)")
        _rank(cls, t, len(axes), "data")
        letters = [a for a, _ in axes]
        return letters.index("H"), letters.index("W")
    _rank(cls, t, 4, "data")
    return tuple(_axes(cls, layout, "NCHW")[2:])  # type: ignore[return-value]


@relay_op("nn.upsampling", OpPattern.INJECTIVE)
class UpSamplingOp(RelayOp):
    """Upsample H and W by ``scale_h``/``scale_w`` (sizes rounded), nearest or (bi)linear/(bi)cubic.

    ```mlir
    %y = relay.nn.upsampling %x {scale_h = 2.0, scale_w = 2.0} : (tensor<1x4x8x8xf32>) -> tensor<1x4x16x16xf32>
    ```
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    scale_h = Float()
    scale_w = Float()
    layout = Str("NCHW")
    method = Str("nearest_neighbor")
    align_corners = Bool(False)

    @classmethod
    def infer_types(cls, in_types, attrs):
        (data,) = in_types
        h, w = _hw(cls, attrs["layout"], data)
        method = attrs["method"]
        if method not in ("nearest_neighbor", "bilinear", "bicubic", "linear", "cubic"):
            raise fail(cls, f"unknown method '{method}'")
        out = list(shape_of(data))
        for a, s in ((h, attrs["scale_h"]), (w, attrs["scale_w"])):
            if s <= 0:
                raise fail(cls, f"scales must be positive, got {s}")
            if out[a] is not None:
                out[a] = int(_round_half_away(out[a] * s))
        return [new_tensor(out, dtype_of(data.element_type))]


def _round_half_away(v: float) -> float:
    return float(int(abs(v) + 0.5)) * (1 if v >= 0 else -1)


@relay_op("image.resize2d", OpPattern.INJECTIVE)
class Resize2DOp(RelayOp):
    """Resize H and W to ``size`` (TOPI's resize2d: coordinate modes, rounding, cubic, roi).

    ```mlir
    %y = relay.image.resize2d %x {size = [16, 16]} : (tensor<1x4x8x8xf32>) -> tensor<1x4x16x16xf32>
    ```
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    size = Ints()
    roi = Floats((0.0, 0.0, 0.0, 0.0))
    layout = Str("NCHW")
    method = Str("linear")
    coordinate_transformation_mode = Str("half_pixel")
    rounding_method = Str("")
    cubic_alpha = Float(-0.5)
    cubic_exclude = Int(0)
    extrapolation_value = Float(0.0)
    out_dtype = Str("")

    @classmethod
    def normalize_attrs(cls, attrs, in_types):
        attrs["size"] = _tuple(cls, "size", attrs["size"], 2)
        return attrs

    @classmethod
    def infer_types(cls, in_types, attrs):
        (data,) = in_types
        return [_resized(cls, data, _hw(cls, attrs["layout"], data), attrs)]


def _resized(cls, data: TensorType, axes: Sequence[int], attrs) -> TensorType:
    """resize1d/resize2d: ``data`` with ``axes`` resized to ``size`` (the attributes checked)."""
    for name, allowed in (
        ("method", _METHODS),
        ("coordinate_transformation_mode", _COORDINATES),
        ("rounding_method", _ROUNDING),
    ):
        if attrs[name] not in allowed:
            raise fail(cls, f"{name} '{attrs[name]}' is not one of {', '.join(repr(a) for a in allowed)}")
    if len(attrs["roi"]) != 2 * len(axes):
        raise fail(cls, f"roi must have {2 * len(axes)} values, got {len(attrs['roi'])}")
    if any(s <= 0 for s in attrs["size"]):
        raise fail(cls, f"size must be positive, got {list(attrs['size'])}")
    if attrs["out_dtype"] and attrs["out_dtype"] not in DTYPES:
        raise fail(cls, f"unknown out_dtype '{attrs['out_dtype']}'")
    out = list(shape_of(data))
    for a, size in zip(axes, attrs["size"], strict=True):
        out[a] = size
    return new_tensor(out, attrs["out_dtype"] or dtype_of(data.element_type))


@relay_op("image.resize1d", OpPattern.INJECTIVE)
class Resize1DOp(RelayOp):
    """Resize W to ``size`` (TOPI's resize1d: image.resize2d's modes along one axis; ``roi``
    is ``[start_w, end_w]``; layouts ``NCW``, ``NWC`` or a blocked ``NCW16c``).

    ```mlir
    %y = relay.image.resize1d %x {size = [16]} : (tensor<1x4x8xf32>) -> tensor<1x4x16xf32>
    ```
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    size = Ints()
    roi = Floats((0.0, 0.0))
    layout = Str("NCW")
    method = Str("linear")
    coordinate_transformation_mode = Str("half_pixel")
    rounding_method = Str("")
    cubic_alpha = Float(-0.5)
    cubic_exclude = Int(0)
    extrapolation_value = Float(0.0)
    out_dtype = Str("")

    @classmethod
    def normalize_attrs(cls, attrs, in_types):
        attrs["size"] = _tuple(cls, "size", attrs["size"], 1)
        return attrs

    @classmethod
    def infer_types(cls, in_types, attrs):
        (data,) = in_types
        return [_resized(cls, data, [_w(cls, attrs["layout"], data)], attrs)]


def _w(cls, layout: str, t: TensorType) -> int:
    """Position of W in an NCW-like layout (C may be blocked: ``NCW16c``)."""
    try:
        axes = parse_layout(layout)
    except ValueError as e:
        raise fail(cls, str(e)) from None
    primal = sorted(a for a, _ in axes if a.isupper())
    if primal != ["C", "N", "W"] or any(a.islower() and a != "c" for a, _ in axes):
        raise fail(cls, f"unsupported layout '{layout}' (expected NCW with at most C blocked)")
    _rank(cls, t, len(axes), "data")
    return [a for a, _ in axes].index("W")
