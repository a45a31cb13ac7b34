"""Relay's group, instance, L2 and local response normalisations (``nn.layer_norm`` and
``nn.batch_norm`` are in ``ops.py``). Like Relay, group and instance norm and LRN have no fusion
pattern (opaque)."""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import operand_def, result_def, traits_def
from xdsl.traits import Pure

from xrelay.dialects.relay import ops as _ops  # noqa: F401 - relay's own ops register first
from xrelay.dialects.relay.base import (
    Bool,
    Float,
    Int,
    Ints,
    OpPattern,
    RelayOp,
    fail,
    norm_axis,
    relay_op,
    same_dtype,
)
from xrelay.dialects.relay.dtypes import dtype_of, shape_of
from xrelay.dialects.relay.ops import _check_vec


class _ChannelNorm(RelayOp):
    """data, per-channel gamma and beta along ``axis``."""

    data = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    axis = Int(1)
    epsilon = Float(1e-5)
    center = Bool(True)
    scale = Bool(True)

    @classmethod
    def infer_types(cls, in_types, attrs):
        data = in_types[0]
        ds = shape_of(data)
        if not dtype_of(data.element_type).startswith(("float", "bfloat")):
            raise fail(cls, f"expects a floating-point tensor, got {data}")
        axis = norm_axis(cls, attrs["axis"], len(ds))
        for t, what in zip(in_types[1:], ("gamma", "beta")):
            _check_vec(cls, t, ds[axis], what, data)
        same_dtype(cls, in_types)
        return [data]


@relay_op("nn.group_norm", OpPattern.OPAQUE)
class GroupNormOp(_ChannelNorm):
    """Group normalisation: the channels along ``axis`` in ``num_groups`` groups, each group
    normalised over its channels and all axes but the batch axis 0; then per-channel scale/shift.

    ```mlir
    %y = relay.nn.group_norm %x, %gamma, %beta {num_groups = 2}
           : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
    ```
    """

    num_groups = Int()

    @classmethod
    def infer_types(cls, in_types, attrs):
        out = super().infer_types(in_types, attrs)
        c = shape_of(in_types[0])[norm_axis(cls, attrs["axis"], len(shape_of(in_types[0])))]
        g = attrs["num_groups"]
        if g < 1 or (c is not None and c % g):
            raise fail(cls, f"{c} channels do not split into num_groups = {g} groups")
        return out


@relay_op("nn.instance_norm", OpPattern.OPAQUE)
class InstanceNormOp(_ChannelNorm):
    """Instance normalisation: each (batch, channel) normalised over the other axes.

    ```mlir
    %y = relay.nn.instance_norm %x, %gamma, %beta : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
    ```
    """


@relay_op("nn.l2_normalize", OpPattern.OUT_ELEMWISE_FUSABLE)
class L2NormalizeOp(RelayOp):
    """``x / sqrt(max(sum(x * x, axis), eps))`` (all axes when ``axis`` is absent).

    ```mlir
    %y = relay.nn.l2_normalize %x {eps = 1.0e-10, axis = [1]} : (tensor<2x8xf32>) -> tensor<2x8xf32>
    ```
    """

    RELAY_TEXT_ALWAYS = frozenset({"axis"})

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    eps = Float()
    axis = Ints(None)

    @classmethod
    def infer_types(cls, in_types, attrs):
        (data,) = in_types
        if not dtype_of(data.element_type).startswith(("float", "bfloat")):
            raise fail(cls, f"expects a floating-point tensor, got {data}")
        for a in attrs["axis"] or ():
            norm_axis(cls, a, len(shape_of(data)))
        return [data]


@relay_op("nn.lrn", OpPattern.OPAQUE)
class LRNOp(RelayOp):
    """Local response normalisation across ``axis``:
    ``x / (bias + alpha * sum(x^2 over size neighbours) / size)^beta``, the window centred
    on each position and zero-padded (TOPI's: 4-D data, odd ``size``, ``axis`` 1 or 3).

    ```mlir
    %y = relay.nn.lrn %x {size = 3, alpha = 1.0e-05} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    ```
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    size = Int(5)
    axis = Int(1)
    bias = Float(2.0)
    alpha = Float(1e-4)
    beta = Float(0.75)

    @classmethod
    def infer_types(cls, in_types, attrs):
        (data,) = in_types
        if attrs["size"] < 1:
            raise fail(cls, f"size must be positive, got {attrs['size']}")
        norm_axis(cls, attrs["axis"], len(shape_of(data)))
        return [data]
