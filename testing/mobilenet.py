"""MobileNet (v1) workload, as ``tvm.relay.testing.mobilenet``.

``conv_block_1`` (3x3/2 conv + bn + relu), then 13 depthwise-separable blocks
``separable_conv_block_{1..13}`` (3x3 depthwise conv + bn + relu, 1x1 pointwise conv + bn +
relu; blocks 2, 4, 6, 12 downsample), global average pool, flatten, ``fc`` dense + bias,
softmax. ``alpha`` scales the channel counts; ``is_shallow`` keeps only 8 blocks.
"""

from __future__ import annotations

import numpy as np

from xrelay import relay
from xrelay.relay.expr import Expr
from xrelay.testing import layers
from xrelay.testing.init import Initializer, Xavier, create_workload

__all__ = ["conv_block", "get_workload", "mobile_net", "separable_conv_block"]


def conv_block(
    data: Expr,
    name: str,
    channels: int,
    kernel_size: tuple[int, int] = (3, 3),
    strides: tuple[int, int] = (1, 1),
    padding: tuple[int, int] = (1, 1),
    epsilon: float = 1e-5,
    layout: str = "NCHW",
) -> Expr:
    """conv + batch norm + relu."""
    conv = layers.conv2d(
        data,
        channels=channels,
        kernel_size=kernel_size,
        strides=strides,
        padding=padding,
        data_layout=layout,
        kernel_layout=layers.conv_kernel_layout(layout),
        name=name + "_conv",
    )
    bn = layers.batch_norm_infer(conv, epsilon=epsilon, axis=layout.index("C"), name=name + "_bn")
    return relay.nn.relu(bn)


def separable_conv_block(
    data: Expr,
    name: str,
    depthwise_channels: int,
    pointwise_channels: int,
    kernel_size: tuple[int, int] = (3, 3),
    downsample: bool = False,
    padding: tuple[int, int] = (1, 1),
    epsilon: float = 1e-5,
    layout: str = "NCHW",
    dtype: str = "float32",
) -> Expr:
    """Depthwise 3x3 conv + bn + relu, then pointwise 1x1 conv + bn + relu."""
    strides = (2, 2) if downsample else (1, 1)
    axis = layout.index("C")
    kl = layers.conv_kernel_layout(layout, is_depthwise=True)
    conv1 = layers.conv2d(
        data,
        channels=depthwise_channels,
        groups=depthwise_channels,
        kernel_size=kernel_size,
        strides=strides,
        padding=padding,
        data_layout=layout,
        kernel_layout=kl,
        name=name + "_depthwise_conv1",
    )
    act1 = relay.nn.relu(layers.batch_norm_infer(conv1, epsilon=epsilon, axis=axis, name=name + "_bn1"))
    conv2 = layers.conv2d(
        act1,
        channels=pointwise_channels,
        kernel_size=(1, 1),
        strides=(1, 1),
        padding=(0, 0),
        data_layout=layout,
        kernel_layout=layers.conv_kernel_layout(layout),
        name=name + "_conv2",
    )
    return relay.nn.relu(layers.batch_norm_infer(conv2, epsilon=epsilon, axis=axis, name=name + "_bn2"))


def mobile_net(
    num_classes: int = 1000,
    data_shape: tuple[int, ...] = (1, 3, 224, 224),
    dtype: str = "float32",
    alpha: float = 1.0,
    is_shallow: bool = False,
    layout: str = "NCHW",
) -> relay.Function:
    """The MobileNet function."""

    def ch(n: int) -> int:
        return int(n * alpha)

    data = relay.var("data", shape=data_shape, dtype=dtype)
    body = conv_block(data, "conv_block_1", ch(32), strides=(2, 2), layout=layout)
    plan = [(32, 64, False), (64, 128, True), (128, 128, False), (128, 256, True),
            (256, 256, False), (256, 512, True)]  # fmt: skip
    if is_shallow:
        plan += [(512, 1024, True), (1024, 1024, True)]
    else:
        plan += [(512, 512, False)] * 5 + [(512, 1024, True), (1024, 1024, False)]
    for i, (dw, pw, down) in enumerate(plan):
        body = separable_conv_block(
            body, f"separable_conv_block_{i + 1}", ch(dw), ch(pw), downsample=down,
            layout=layout, dtype=dtype,
        )  # fmt: skip
    pool = relay.nn.global_avg_pool2d(body, layout=layout)
    flat = relay.nn.batch_flatten(pool)
    weight = relay.var("fc_weight", shape=(num_classes, ch(1024)), dtype=dtype)
    bias = relay.var("fc_bias", shape=(num_classes,), dtype=dtype)
    fc = relay.nn.bias_add(relay.nn.dense(flat, weight, units=num_classes), bias)
    net = relay.nn.softmax(fc)
    return relay.Function(relay.analysis.free_vars(net), net)


def get_workload(
    batch_size: int = 1,
    num_classes: int = 1000,
    image_shape: tuple[int, int, int] = (3, 224, 224),
    dtype: str = "float32",
    layout: str = "NCHW",
    initializer: Initializer | None = None,
    seed: int = 0,
) -> tuple[relay.IRModule, dict]:
    """``(mod, params)`` for MobileNet; ``image_shape`` is in ``layout`` without batch.

    Departure from Relay: the default initializer is ``Xavier(factor_type="in",
    magnitude=6)`` (He's), not Relay's ``Xavier()``. With Relay's fan average, a 3x3
    depthwise weight of C channels gets variance 2/(9C), the signal shrinks through the 27
    convolutions, and the softmax is exactly uniform in float32 for every input: a run of the
    workload could not tell a wrong program from a right one."""
    net = mobile_net(num_classes, (batch_size, *image_shape), dtype, layout=layout)
    if initializer is None:
        initializer = Xavier(factor_type="in", magnitude=6, rng=np.random.default_rng(seed))
    return create_workload(net, initializer, seed)
