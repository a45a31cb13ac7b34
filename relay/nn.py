"""``relay.nn``: neural-network operators with tvm.relay.nn's signatures and Python defaults.

Multi-result ops return a ``TupleWrapper`` (``batch_norm``, ``dropout_raw``); ``dropout``
returns the first result, as in Relay. Attribute parameters default to the relay dialect's
defaults (``DEFAULT``, see ``xrelay.relay.op``); where tvm.relay's Python default differs from
the attribute's (``pool_size``, ``leaky_relu``'s ``alpha``, ``batch_matmul``'s ``transpose_b``)
the function states tvm.relay's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from xrelay.relay.expr import Call, Constant, Expr, TupleWrapper, _to_expr
from xrelay.relay.op import DEFAULT, dialect_defaults, make_call

__all__ = [
    "adaptive_avg_pool2d",
    "avg_pool2d",
    "batch_flatten",
    "batch_matmul",
    "batch_norm",
    "bias_add",
    "contrib_conv2d_nchwc",
    "conv2d",
    "conv2d_transpose",
    "deformable_conv2d",
    "dense",
    "dropout",
    "dropout_raw",
    "global_avg_pool2d",
    "global_max_pool2d",
    "layer_norm",
    "leaky_relu",
    "log_softmax",
    "matmul",
    "max_pool2d",
    "pad",
    "prelu",
    "relu",
    "softmax",
]


def _call(name: str, args: list[Any], **attrs: Any) -> Call:
    return make_call("nn." + name, args, **attrs)


@dialect_defaults("nn.conv2d")
def conv2d(
    data: Expr,
    weight: Expr,
    strides: Any = DEFAULT,
    padding: Any = DEFAULT,
    dilation: Any = DEFAULT,
    groups: int = DEFAULT,
    channels: int | None = DEFAULT,
    kernel_size: Any = DEFAULT,
    data_layout: str = DEFAULT,
    kernel_layout: str = DEFAULT,
    out_layout: str = DEFAULT,
    out_dtype: str = DEFAULT,
) -> Call:
    """2-D convolution; ``padding`` of 1, 2 or 4 values ([top, left, bottom, right])."""
    return _call(
        "conv2d",
        [data, weight],
        strides=strides,
        padding=padding,
        dilation=dilation,
        groups=groups,
        channels=channels,
        kernel_size=kernel_size,
        data_layout=data_layout,
        kernel_layout=kernel_layout,
        out_layout=out_layout,
        out_dtype=out_dtype,
    )


@dialect_defaults("nn.deformable_conv2d")
def deformable_conv2d(
    data: Expr,
    offset: Expr,
    weight: Expr,
    strides: Any = DEFAULT,
    padding: Any = DEFAULT,
    dilation: Any = DEFAULT,
    deformable_groups: int = DEFAULT,
    groups: int = DEFAULT,
    channels: int | None = DEFAULT,
    kernel_size: Any = DEFAULT,
    data_layout: str = DEFAULT,
    kernel_layout: str = DEFAULT,
    out_layout: str = DEFAULT,
    out_dtype: str = DEFAULT,
) -> Call:
    """2-D deformable convolution (``offset``: ``deformable_groups * kh * kw`` (dy, dx) pairs per
    output position, in ``data_layout``)."""
    return _call(
        "deformable_conv2d", [data, offset, weight], strides=strides, padding=padding, dilation=dilation,
        deformable_groups=deformable_groups, groups=groups, channels=channels, kernel_size=kernel_size,
        data_layout=data_layout, kernel_layout=kernel_layout, out_layout=out_layout, out_dtype=out_dtype,
    )  # fmt: skip


def contrib_conv2d_nchwc(
    data: Expr,
    kernel: Expr,
    strides: Any = (1, 1),
    padding: Any = (0, 0),
    dilation: Any = (1, 1),
    groups: int = 1,
    channels: int | None = None,
    kernel_size: Any = None,
    data_layout: str = "NCHW8c",
    kernel_layout: str = "OIHW",
    out_layout: str = "",
    out_dtype: str = "",
) -> Call:
    """Relay's ``nn.contrib_conv2d_NCHWc`` (its Python defaults): in xrelay an ``nn.conv2d``
    with blocked layouts, which the dialect infers and the kernels run."""
    return conv2d(
        data, kernel, strides, padding, dilation, groups, channels, kernel_size,
        data_layout, kernel_layout, out_layout, out_dtype,
    )  # fmt: skip


@dialect_defaults("nn.conv2d_transpose")
def conv2d_transpose(
    data: Expr,
    weight: Expr,
    strides: Any = DEFAULT,
    padding: Any = DEFAULT,
    dilation: Any = DEFAULT,
    groups: int = DEFAULT,
    channels: int | None = DEFAULT,
    kernel_size: Any = DEFAULT,
    data_layout: str = DEFAULT,
    kernel_layout: str = DEFAULT,
    out_layout: str = DEFAULT,
    output_padding: Any = DEFAULT,
    out_dtype: str = DEFAULT,
) -> Call:
    """Transposed 2-D convolution (weight IOHW by default)."""
    return _call(
        "conv2d_transpose",
        [data, weight],
        strides=strides,
        padding=padding,
        dilation=dilation,
        groups=groups,
        channels=channels,
        kernel_size=kernel_size,
        data_layout=data_layout,
        kernel_layout=kernel_layout,
        out_layout=out_layout,
        output_padding=output_padding,
        out_dtype=out_dtype,
    )


@dialect_defaults("nn.max_pool2d")
def max_pool2d(
    data: Expr,
    pool_size: Any = (1, 1),
    strides: Any = DEFAULT,
    dilation: Any = DEFAULT,
    padding: Any = DEFAULT,
    layout: str = DEFAULT,
    out_layout: str = DEFAULT,
    ceil_mode: bool = DEFAULT,
) -> Call:
    """2-D max pooling."""
    return _call(
        "max_pool2d",
        [data],
        pool_size=pool_size,
        strides=strides,
        dilation=dilation,
        padding=padding,
        layout=layout,
        out_layout=out_layout,
        ceil_mode=ceil_mode,
    )


@dialect_defaults("nn.avg_pool2d")
def avg_pool2d(
    data: Expr,
    pool_size: Any = (1, 1),
    strides: Any = DEFAULT,
    dilation: Any = DEFAULT,
    padding: Any = DEFAULT,
    layout: str = DEFAULT,
    out_layout: str = DEFAULT,
    ceil_mode: bool = DEFAULT,
    count_include_pad: bool = DEFAULT,
) -> Call:
    """2-D average pooling."""
    return _call(
        "avg_pool2d",
        [data],
        pool_size=pool_size,
        strides=strides,
        dilation=dilation,
        padding=padding,
        layout=layout,
        out_layout=out_layout,
        ceil_mode=ceil_mode,
        count_include_pad=count_include_pad,
    )


@dialect_defaults("nn.global_avg_pool2d")
def global_avg_pool2d(data: Expr, layout: str = DEFAULT, out_layout: str = DEFAULT) -> Call:
    """Average over the whole spatial extent."""
    return _call("global_avg_pool2d", [data], layout=layout, out_layout=out_layout)


@dialect_defaults("nn.global_max_pool2d")
def global_max_pool2d(data: Expr, layout: str = DEFAULT, out_layout: str = DEFAULT) -> Call:
    """Maximum over the whole spatial extent."""
    return _call("global_max_pool2d", [data], layout=layout, out_layout=out_layout)


@dialect_defaults("nn.adaptive_avg_pool2d")
def adaptive_avg_pool2d(data: Expr, output_size: Any = DEFAULT, layout: str = DEFAULT, out_layout: str = DEFAULT) -> Call:
    """Average pooling to a fixed ``output_size``."""
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    return _call(
        "adaptive_avg_pool2d", [data], output_size=output_size, layout=layout, out_layout=out_layout
    )


@dialect_defaults("nn.batch_norm")
def batch_norm(
    data: Expr,
    gamma: Expr,
    beta: Expr,
    moving_mean: Expr,
    moving_var: Expr,
    axis: int = DEFAULT,
    epsilon: float = DEFAULT,
    center: bool = DEFAULT,
    scale: bool = DEFAULT,
) -> TupleWrapper:
    """Batch normalisation: a TupleWrapper of (output, new_mean, new_var)."""
    call = _call(
        "batch_norm",
        [data, gamma, beta, moving_mean, moving_var],
        axis=axis,
        epsilon=epsilon,
        center=center,
        scale=scale,
    )
    return TupleWrapper(call, 3)


@dialect_defaults("nn.layer_norm")
def layer_norm(
    data: Expr,
    gamma: Expr,
    beta: Expr,
    axis: int = DEFAULT,
    epsilon: float = DEFAULT,
    center: bool = DEFAULT,
    scale: bool = DEFAULT,
) -> Call:
    """Layer normalisation over ``axis``."""
    return _call(
        "layer_norm", [data, gamma, beta], axis=axis, epsilon=epsilon, center=center, scale=scale
    )


@dialect_defaults("nn.dropout")
def dropout_raw(data: Expr, rate: float = DEFAULT) -> TupleWrapper:
    """Dropout: a TupleWrapper of (output, mask)."""
    return TupleWrapper(_call("dropout", [data], rate=rate), 2)


@dialect_defaults("nn.dropout")
def dropout(data: Expr, rate: float = DEFAULT) -> Expr:
    """Dropout's output (``dropout_raw(data, rate)[0]``)."""
    return dropout_raw(data, rate)[0]


@dialect_defaults("nn.dense")
def dense(data: Expr, weight: Expr, units: int | None = DEFAULT, out_dtype: str = DEFAULT) -> Call:
    """``data @ weight.T``; weight is (units, in)."""
    return _call("dense", [data, weight], units=units, out_dtype=out_dtype)


@dialect_defaults("nn.matmul")
def matmul(
    tensor_a: Expr,
    tensor_b: Expr,
    units: int | None = DEFAULT,
    out_dtype: str = DEFAULT,
    transpose_a: bool = DEFAULT,
    transpose_b: bool = DEFAULT,
) -> Call:
    """Matrix product with optional transposes."""
    return _call(
        "matmul",
        [tensor_a, tensor_b],
        units=units,
        out_dtype=out_dtype,
        transpose_a=transpose_a,
        transpose_b=transpose_b,
    )


@dialect_defaults("nn.batch_matmul")
def batch_matmul(
    tensor_a: Expr,
    tensor_b: Expr,
    out_dtype: str = DEFAULT,
    transpose_a: bool = DEFAULT,
    transpose_b: bool = True,
) -> Call:
    """Batched matrix product; note Relay's Python default ``transpose_b=True``."""
    return _call(
        "batch_matmul",
        [tensor_a, tensor_b],
        out_dtype=out_dtype,
        transpose_a=transpose_a,
        transpose_b=transpose_b,
    )


@dialect_defaults("nn.bias_add")
def bias_add(data: Expr, bias: Expr, axis: int = DEFAULT) -> Call:
    """Add a 1-D ``bias`` along ``axis``."""
    return _call("bias_add", [data, bias], axis=axis)


@dialect_defaults("nn.prelu")
def prelu(data: Expr, alpha: Expr, axis: int = DEFAULT) -> Call:
    """Parametric ReLU with per-channel ``alpha`` along ``axis``."""
    return _call("prelu", [data, alpha], axis=axis)


def relu(data: Expr) -> Call:
    """``max(data, 0)``."""
    return _call("relu", [data])


@dialect_defaults("nn.leaky_relu")
def leaky_relu(data: Expr, alpha: float = 0.01) -> Call:
    """``data if data > 0 else alpha * data`` (Python default alpha 0.01, as tvm.relay)."""
    return _call("leaky_relu", [data], alpha=alpha)


@dialect_defaults("nn.softmax")
def softmax(data: Expr, axis: int = DEFAULT) -> Call:
    """Softmax over ``axis``."""
    return _call("softmax", [data], axis=axis)


@dialect_defaults("nn.log_softmax")
def log_softmax(data: Expr, axis: int = DEFAULT) -> Call:
    """Log-softmax over ``axis``."""
    return _call("log_softmax", [data], axis=axis)


def batch_flatten(data: Expr) -> Call:
    """Flatten every axis but the first."""
    return _call("batch_flatten", [data])


@dialect_defaults("nn.pad")
def pad(data: Expr, pad_width: Any, pad_value: Any = 0.0, pad_mode: str = DEFAULT) -> Call:
    """Pad with ``pad_width`` ([before, after] per axis); a scalar ``pad_value`` takes data's dtype.
    An ``Expr`` ``pad_width`` (a ``[rank, 2]`` tensor) gives ``dyn.nn.pad``."""
    value = _to_expr(pad_value, like=data)
    if isinstance(pad_width, Expr):
        return make_call("dyn.nn.pad", [data, pad_width, value], pad_mode=pad_mode)
    return _call("pad", [data, value], pad_width=[list(p) for p in pad_width], pad_mode=pad_mode)


# ---- 1-D and 3-D convolutions and pools, upsampling, group/instance/L2 norms -----------------

__all__ += [
    "adaptive_avg_pool3d",
    "adaptive_max_pool3d",
    "avg_pool3d",
    "conv1d",
    "conv3d",
    "group_norm",
    "instance_norm",
    "l2_normalize",
    "lrn",
    "max_pool3d",
    "upsampling",
]


def _conv_nd(name: str, data: Expr, weight: Expr, **attrs: Any) -> Call:
    return _call(name, [data, weight], **attrs)


@dialect_defaults("nn.conv1d")
def conv1d(
    data: Expr,
    weight: Expr,
    strides: Any = DEFAULT,
    padding: Any = DEFAULT,
    dilation: Any = DEFAULT,
    groups: int = DEFAULT,
    channels: int | None = DEFAULT,
    kernel_size: Any = DEFAULT,
    data_layout: str = DEFAULT,
    kernel_layout: str = DEFAULT,
    out_layout: str = DEFAULT,
    out_dtype: str = DEFAULT,
) -> Call:
    """1-D convolution; ``padding`` of 1 or 2 values ([left, right])."""
    return _conv_nd(
        "conv1d", data, weight, strides=strides, padding=padding, dilation=dilation, groups=groups,
        channels=channels, kernel_size=kernel_size, data_layout=data_layout,
        kernel_layout=kernel_layout, out_layout=out_layout, out_dtype=out_dtype,
    )  # fmt: skip


@dialect_defaults("nn.conv3d")
def conv3d(
    data: Expr,
    weight: Expr,
    strides: Any = DEFAULT,
    padding: Any = DEFAULT,
    dilation: Any = DEFAULT,
    groups: int = DEFAULT,
    channels: int | None = DEFAULT,
    kernel_size: Any = DEFAULT,
    data_layout: str = DEFAULT,
    kernel_layout: str = DEFAULT,
    out_layout: str = DEFAULT,
    out_dtype: str = DEFAULT,
) -> Call:
    """3-D convolution; ``padding`` of 1, 3 or 6 values ([front, top, left, back, bottom, right])."""
    return _conv_nd(
        "conv3d", data, weight, strides=strides, padding=padding, dilation=dilation, groups=groups,
        channels=channels, kernel_size=kernel_size, data_layout=data_layout,
        kernel_layout=kernel_layout, out_layout=out_layout, out_dtype=out_dtype,
    )  # fmt: skip


@dialect_defaults("nn.conv3d_transpose")
def conv3d_transpose(
    data: Expr,
    weight: Expr,
    strides: Any = DEFAULT,
    padding: Any = DEFAULT,
    dilation: Any = DEFAULT,
    groups: int = DEFAULT,
    channels: int | None = DEFAULT,
    kernel_size: Any = DEFAULT,
    data_layout: str = DEFAULT,
    kernel_layout: str = DEFAULT,
    out_layout: str = DEFAULT,
    output_padding: Any = DEFAULT,
    out_dtype: str = DEFAULT,
) -> Call:
    """Transposed 3-D convolution (weight IODHW); ``padding`` of 1, 3 or 6 values."""
    return _conv_nd(
        "conv3d_transpose", data, weight, strides=strides, padding=padding, dilation=dilation,
        groups=groups, channels=channels, kernel_size=kernel_size, data_layout=data_layout,
        kernel_layout=kernel_layout, out_layout=out_layout, output_padding=output_padding,
        out_dtype=out_dtype,
    )  # fmt: skip


@dialect_defaults("nn.max_pool3d")
def max_pool3d(
    data: Expr,
    pool_size: Any = (1, 1, 1),
    strides: Any = DEFAULT,
    dilation: Any = DEFAULT,
    padding: Any = DEFAULT,
    layout: str = DEFAULT,
    out_layout: str = DEFAULT,
    ceil_mode: bool = DEFAULT,
) -> Call:
    """3-D max pooling (``pool_size`` defaults to 1x1x1, as in tvm.relay)."""
    return _call(
        "max_pool3d", [data], pool_size=pool_size, strides=strides, dilation=dilation,
        padding=padding, layout=layout, out_layout=out_layout, ceil_mode=ceil_mode,
    )  # fmt: skip


@dialect_defaults("nn.avg_pool3d")
def avg_pool3d(
    data: Expr,
    pool_size: Any = (1, 1, 1),
    strides: Any = DEFAULT,
    dilation: Any = DEFAULT,
    padding: Any = DEFAULT,
    layout: str = DEFAULT,
    out_layout: str = DEFAULT,
    ceil_mode: bool = DEFAULT,
    count_include_pad: bool = DEFAULT,
) -> Call:
    """3-D average pooling (``pool_size`` defaults to 1x1x1, as in tvm.relay)."""
    return _call(
        "avg_pool3d", [data], pool_size=pool_size, strides=strides, dilation=dilation,
        padding=padding, layout=layout, out_layout=out_layout, ceil_mode=ceil_mode,
        count_include_pad=count_include_pad,
    )  # fmt: skip


@dialect_defaults("nn.adaptive_avg_pool3d")
def adaptive_avg_pool3d(data: Expr, output_size: Any = DEFAULT, layout: str = DEFAULT, out_layout: str = DEFAULT) -> Call:
    """3-D average pooling to ``output_size`` (absent: the input's size)."""
    return _call("adaptive_avg_pool3d", [data], output_size=output_size, layout=layout, out_layout=out_layout)


@dialect_defaults("nn.adaptive_max_pool3d")
def adaptive_max_pool3d(data: Expr, output_size: Any = DEFAULT, layout: str = DEFAULT, out_layout: str = DEFAULT) -> Call:
    """3-D max pooling to ``output_size`` (absent: the input's size)."""
    return _call("adaptive_max_pool3d", [data], output_size=output_size, layout=layout, out_layout=out_layout)


@dialect_defaults("nn.upsampling")
def upsampling(
    data: Expr,
    scale_h: float = 1,
    scale_w: float = 1,
    layout: str = DEFAULT,
    method: str = DEFAULT,
    align_corners: bool = DEFAULT,
) -> Call:
    """Upsample H and W by ``scale_h``/``scale_w`` (``nearest_neighbor``, ``bilinear``, ``bicubic``);
    ``Expr`` scales give ``dyn.nn.upsampling``."""
    if isinstance(scale_h, Expr) or isinstance(scale_w, Expr):
        sh, sw = (s if isinstance(s, Expr) else Constant(np.float32(s)) for s in (scale_h, scale_w))
        return make_call(
            "dyn.nn.upsampling", [data, sh, sw], layout=layout, method=method, align_corners=align_corners
        )
    return _call(
        "upsampling", [data], scale_h=scale_h, scale_w=scale_w, layout=layout, method=method,
        align_corners=align_corners,
    )  # fmt: skip


@dialect_defaults("nn.group_norm")
def group_norm(
    data: Expr,
    gamma: Expr,
    beta: Expr,
    num_groups: int,
    axis: int = DEFAULT,
    epsilon: float = DEFAULT,
    center: bool = DEFAULT,
    scale: bool = DEFAULT,
) -> Call:
    """Group normalisation over ``num_groups`` groups of the channels along ``axis``."""
    return _call(
        "group_norm", [data, gamma, beta], num_groups=num_groups, axis=axis, epsilon=epsilon,
        center=center, scale=scale,
    )  # fmt: skip


@dialect_defaults("nn.instance_norm")
def instance_norm(
    data: Expr,
    gamma: Expr,
    beta: Expr,
    axis: int = DEFAULT,
    epsilon: float = DEFAULT,
    center: bool = DEFAULT,
    scale: bool = DEFAULT,
) -> Call:
    """Instance normalisation (each batch item and channel over the other axes)."""
    return _call("instance_norm", [data, gamma, beta], axis=axis, epsilon=epsilon, center=center, scale=scale)


@dialect_defaults("nn.lrn")
def lrn(
    data: Expr, size: int = DEFAULT, axis: int = DEFAULT, bias: float = DEFAULT, alpha: float = 0.00001,
    beta: float = DEFAULT,
) -> Call:
    """Local response normalisation (Relay's Python default ``alpha`` is 1e-5, where the op's
    attribute default is 1e-4)."""
    return _call("lrn", [data], size=size, axis=axis, bias=bias, alpha=alpha, beta=beta)


@dialect_defaults("nn.l2_normalize")
def l2_normalize(data: Expr, eps: float, axis: Any = DEFAULT) -> Call:
    """``data / sqrt(max(sum(data ** 2, axis), eps))``."""
    return _call("l2_normalize", [data], eps=eps, axis=axis)
