"""A multi-layer perceptron workload, as ``tvm.relay.testing.mlp``.

``batch_flatten`` -> ``fc1`` dense(128) + bias + relu -> ``fc2`` dense(64) + bias + relu ->
``fc3`` dense(num_classes) + bias -> softmax; params ``fc{1,2,3}_{weight,bias}``.
"""

from __future__ import annotations

from xrelay import relay
from xrelay.testing import layers
from xrelay.testing.init import Initializer, create_workload

__all__ = ["get_net", "get_workload"]


def get_net(
    batch_size: int,
    num_classes: int = 10,
    image_shape: tuple[int, ...] = (1, 28, 28),
    dtype: str = "float32",
) -> relay.Function:
    """The MLP function."""
    data = relay.var("data", shape=(batch_size, *image_shape), dtype=dtype)
    x = relay.nn.batch_flatten(data)
    x = relay.nn.relu(layers.dense_add_bias(x, units=128, name="fc1"))
    x = relay.nn.relu(layers.dense_add_bias(x, units=64, name="fc2"))
    x = layers.dense_add_bias(x, units=num_classes, name="fc3")
    net = relay.nn.softmax(x)
    return relay.Function(relay.analysis.free_vars(net), net)


def get_workload(
    batch_size: int,
    num_classes: int = 10,
    image_shape: tuple[int, ...] = (1, 28, 28),
    dtype: str = "float32",
    initializer: Initializer | None = None,
    seed: int = 0,
) -> tuple[relay.IRModule, dict]:
    """``(mod, params)`` for the MLP."""
    return create_workload(get_net(batch_size, num_classes, image_shape, dtype), initializer, seed)
