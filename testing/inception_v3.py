"""Inception-v3 workload, as ``tvm.relay.testing.inception_v3`` (Szegedy et al., "Rethinking the
Inception Architecture for Computer Vision", 2015; 299x299 inputs).

Every convolution is ``Conv``: conv2d (no bias) + batch norm (epsilon 2e-5, no scale learned
beyond gamma) + relu. The stem (five convolutions, two 3x3/2 max pools), three ``A`` blocks
(1x1, 5x5, double 3x3, pool projection), a ``B`` reduction, four ``C`` blocks (factorised 7x7
as 1x7/7x1), a ``D`` reduction, two ``E`` blocks (split 1x3/3x1 towers), an 8x8 average pool,
a dense layer with bias and softmax. Parameter names follow Relay's workload
(``mixed_4_tower_1_conv_3_weight``, ``fc1_weight``, ``fc2_bias``).
"""

from __future__ import annotations

import numpy as np

from xrelay import relay
from xrelay.relay.expr import Expr
from xrelay.testing import layers
from xrelay.testing.init import Initializer, Xavier, create_workload

__all__ = ["get_net", "get_workload"]


def Conv(
    data: Expr,
    num_filter: int,
    kernel: tuple[int, int] = (1, 1),
    stride: tuple[int, int] = (1, 1),
    pad: tuple[int, int] = (0, 0),
    name: str = "",
    suffix: str = "",
) -> Expr:
    """conv2d + batch norm + relu, named ``<name><suffix>_conv1`` / ``_bn``."""
    conv = layers.conv2d(
        data, channels=num_filter, kernel_size=kernel, strides=stride, padding=pad, name=f"{name}{suffix}_conv1"
    )
    bn = layers.batch_norm_infer(conv, epsilon=2e-5, scale=False, name=f"{name}{suffix}_bn")
    return relay.nn.relu(bn)


def Pooling(data: Expr, kernel: tuple[int, int], stride: tuple[int, int], pad: tuple[int, int], pool_type: str) -> Expr:
    """A max pool, or an average pool counting the padding (as Relay's workload)."""
    if pool_type == "max":
        return relay.nn.max_pool2d(data, pool_size=kernel, strides=stride, padding=pad)
    if pool_type == "avg":
        return relay.nn.avg_pool2d(data, pool_size=kernel, strides=stride, padding=pad, count_include_pad=True)
    raise ValueError(f"invalid pooling type '{pool_type}' (max or avg)")


def _a(data: Expr, n1: int, n3r: int, n31: int, n32: int, n5r: int, n5: int, pool: str, proj: int, name: str) -> Expr:
    t1 = Conv(data, n1, name=f"{name}_conv")
    t5 = Conv(data, n5r, name=f"{name}_tower", suffix="_conv")
    t5 = Conv(t5, n5, kernel=(5, 5), pad=(2, 2), name=f"{name}_tower", suffix="_conv_1")
    t3 = Conv(data, n3r, name=f"{name}_tower_1", suffix="_conv")
    t3 = Conv(t3, n31, kernel=(3, 3), pad=(1, 1), name=f"{name}_tower_1", suffix="_conv_1")
    t3 = Conv(t3, n32, kernel=(3, 3), pad=(1, 1), name=f"{name}_tower_1", suffix="_conv_2")
    p = Conv(Pooling(data, (3, 3), (1, 1), (1, 1), pool), proj, name=f"{name}_tower_2", suffix="_conv")
    return relay.concatenate((t1, t5, t3, p), axis=1)


def _b(data: Expr, n3: int, nd3r: int, nd31: int, nd32: int, name: str) -> Expr:
    t3 = Conv(data, n3, kernel=(3, 3), stride=(2, 2), name=f"{name}_conv")
    td = Conv(data, nd3r, name=f"{name}_tower", suffix="_conv")
    td = Conv(td, nd31, kernel=(3, 3), pad=(1, 1), name=f"{name}_tower", suffix="_conv_1")
    td = Conv(td, nd32, kernel=(3, 3), stride=(2, 2), name=f"{name}_tower", suffix="_conv_2")
    p = Pooling(data, (3, 3), (2, 2), (0, 0), "max")
    return relay.concatenate((t3, td, p), axis=1)


def _c(data: Expr, n1: int, d7r: int, d71: int, d72: int, q7r: int, q71: int, q72: int, q73: int, q74: int,
       pool: str, proj: int, name: str) -> Expr:  # fmt: skip
    t1 = Conv(data, n1, name=f"{name}_conv")
    d7 = Conv(data, d7r, name=f"{name}_tower", suffix="_conv")
    d7 = Conv(d7, d71, kernel=(1, 7), pad=(0, 3), name=f"{name}_tower", suffix="_conv_1")
    d7 = Conv(d7, d72, kernel=(7, 1), pad=(3, 0), name=f"{name}_tower", suffix="_conv_2")
    q7 = Conv(data, q7r, name=f"{name}_tower_1", suffix="_conv")
    for i, (n, k, pad) in enumerate(
        ((q71, (7, 1), (3, 0)), (q72, (1, 7), (0, 3)), (q73, (7, 1), (3, 0)), (q74, (1, 7), (0, 3)))
    ):
        q7 = Conv(q7, n, kernel=k, pad=pad, name=f"{name}_tower_1", suffix=f"_conv_{i + 1}")
    p = Conv(Pooling(data, (3, 3), (1, 1), (1, 1), pool), proj, name=f"{name}_tower_2", suffix="_conv")
    return relay.concatenate((t1, d7, q7, p), axis=1)


def _d(data: Expr, n3r: int, n3: int, d7r: int, d71: int, d72: int, d73: int, pool: str, name: str) -> Expr:
    t3 = Conv(data, n3r, name=f"{name}_tower", suffix="_conv")
    t3 = Conv(t3, n3, kernel=(3, 3), stride=(2, 2), name=f"{name}_tower", suffix="_conv_1")
    d7 = Conv(data, d7r, name=f"{name}_tower_1", suffix="_conv")
    d7 = Conv(d7, d71, kernel=(1, 7), pad=(0, 3), name=f"{name}_tower_1", suffix="_conv_1")
    d7 = Conv(d7, d72, kernel=(7, 1), pad=(3, 0), name=f"{name}_tower_1", suffix="_conv_2")
    d7 = Conv(d7, d73, kernel=(3, 3), stride=(2, 2), name=f"{name}_tower_1", suffix="_conv_3")
    p = Pooling(data, (3, 3), (2, 2), (0, 0), pool)
    return relay.concatenate((t3, d7, p), axis=1)


def _e(data: Expr, n1: int, d3r: int, d31: int, d32: int, t3r: int, t3n: int, t31: int, t32: int,
       pool: str, proj: int, name: str) -> Expr:  # fmt: skip
    t1 = Conv(data, n1, name=f"{name}_conv")
    d3 = Conv(data, d3r, name=f"{name}_tower", suffix="_conv")
    d3a = Conv(d3, d31, kernel=(1, 3), pad=(0, 1), name=f"{name}_tower", suffix="_mixed_conv")
    d3b = Conv(d3, d32, kernel=(3, 1), pad=(1, 0), name=f"{name}_tower", suffix="_mixed_conv_1")
    t3 = Conv(data, t3r, name=f"{name}_tower_1", suffix="_conv")
    t3 = Conv(t3, t3n, kernel=(3, 3), pad=(1, 1), name=f"{name}_tower_1", suffix="_conv_1")
    t3a = Conv(t3, t31, kernel=(1, 3), pad=(0, 1), name=f"{name}_tower_1", suffix="_mixed_conv")
    t3b = Conv(t3, t32, kernel=(3, 1), pad=(1, 0), name=f"{name}_tower_1", suffix="_mixed_conv_1")
    p = Conv(Pooling(data, (3, 3), (1, 1), (1, 1), pool), proj, name=f"{name}_tower_2", suffix="_conv")
    return relay.concatenate((t1, d3a, d3b, t3a, t3b, p), axis=1)


def get_net(
    batch_size: int, num_classes: int, image_shape: tuple[int, int, int], dtype: str
) -> relay.Function:
    """The Inception-v3 function (``image_shape`` is CHW, 299x299 in the paper)."""
    data = relay.var("data", shape=(batch_size, *image_shape), dtype=dtype)
    x = Conv(data, 32, kernel=(3, 3), stride=(2, 2), name="conv")
    x = Conv(x, 32, kernel=(3, 3), name="conv_1")
    x = Conv(x, 64, kernel=(3, 3), pad=(1, 1), name="conv_2")
    x = Pooling(x, (3, 3), (2, 2), (0, 0), "max")
    x = Conv(x, 80, name="conv_3")
    x = Conv(x, 192, kernel=(3, 3), name="conv_4")
    x = Pooling(x, (3, 3), (2, 2), (0, 0), "max")
    x = _a(x, 64, 64, 96, 96, 48, 64, "avg", 32, "mixed")
    x = _a(x, 64, 64, 96, 96, 48, 64, "avg", 64, "mixed_1")
    x = _a(x, 64, 64, 96, 96, 48, 64, "avg", 64, "mixed_2")
    x = _b(x, 384, 64, 96, 96, "mixed_3")
    x = _c(x, 192, 128, 128, 192, 128, 128, 128, 128, 192, "avg", 192, "mixed_4")
    x = _c(x, 192, 160, 160, 192, 160, 160, 160, 160, 192, "avg", 192, "mixed_5")
    x = _c(x, 192, 160, 160, 192, 160, 160, 160, 160, 192, "avg", 192, "mixed_6")
    x = _c(x, 192, 192, 192, 192, 192, 192, 192, 192, 192, "avg", 192, "mixed_7")
    x = _d(x, 192, 320, 192, 192, 192, 192, "max", "mixed_8")
    x = _e(x, 320, 384, 384, 384, 448, 384, 384, 384, "avg", 192, "mixed_9")
    x = _e(x, 320, 384, 384, 384, 448, 384, 384, 384, "max", 192, "mixed_10")
    x = Pooling(x, (8, 8), (1, 1), (0, 0), "avg")
    flat = relay.nn.batch_flatten(x)
    weight = relay.var("fc1_weight", shape=(num_classes, 2048), dtype=dtype)
    bias = relay.var("fc2_bias", shape=(num_classes,), dtype=dtype)
    net = relay.nn.softmax(relay.nn.bias_add(relay.nn.dense(flat, weight, units=num_classes), bias, axis=-1))
    return relay.Function(relay.analysis.free_vars(net), net)


def get_workload(
    batch_size: int = 1,
    num_classes: int = 1000,
    image_shape: tuple[int, int, int] = (3, 299, 299),
    dtype: str = "float32",
    initializer: Initializer | None = None,
    seed: int = 0,
) -> tuple[relay.IRModule, dict]:
    """``(mod, params)`` for Inception-v3 with random weights (He's initializer by default,
    for the reason ``mobilenet.get_workload`` gives)."""
    net = get_net(batch_size, num_classes, image_shape, dtype)
    if initializer is None:
        initializer = Xavier(factor_type="in", magnitude=6, rng=np.random.default_rng(seed))
    return create_workload(net, initializer, seed)
