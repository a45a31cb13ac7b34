"""ResNet workloads, as ``tvm.relay.testing.resnet``.

The pre-activation ("ResNet v2") network of Relay's testing module, unit for unit and name
for name: ``bn_data`` (batch norm without scale) on the input; a stem (3x3 ``conv0`` for
inputs up to 32 pixels high, else 7x7/2 ``conv0`` + ``bn0`` + relu + 3x3/2 max pool); stages
of residual units ``stage{i}_unit{j}`` whose first unit has a 1x1 shortcut conv ``_sc`` on the
pre-activated input; and a tail ``bn1`` + relu + global average pool + flatten + ``fc1``
dense with bias + softmax. Batch norms use epsilon 2e-5.
"""

from __future__ import annotations

from xrelay import relay
from xrelay.relay.expr import Expr
from xrelay.testing import layers
from xrelay.testing.init import Initializer, create_workload

__all__ = ["get_net", "get_workload", "residual_unit", "resnet"]

_UNITS = {
    18: [2, 2, 2, 2],
    34: [3, 4, 6, 3],
    50: [3, 4, 6, 3],
    101: [3, 4, 23, 3],
    152: [3, 8, 36, 3],
    200: [3, 24, 36, 3],
    269: [3, 30, 48, 8],
}


def _bn(data: Expr, name: str, axis: int, **kwargs: object) -> Expr:
    return layers.batch_norm_infer(data, epsilon=2e-5, axis=axis, name=name, **kwargs)


def residual_unit(
    data: Expr,
    num_filter: int,
    stride: tuple[int, int],
    dim_match: bool,
    name: str,
    bottle_neck: bool = True,
    data_layout: str = "NCHW",
    kernel_layout: str = "OIHW",
) -> Expr:
    """One pre-activation residual unit; the shortcut is ``data`` when ``dim_match``."""
    axis = data_layout.index("C")

    def conv(x: Expr, channels: int, k: int, s: tuple[int, int], p: int, suffix: str) -> Expr:
        return layers.conv2d(
            x,
            channels=channels,
            kernel_size=(k, k),
            strides=s,
            padding=(p, p),
            name=name + suffix,
            data_layout=data_layout,
            kernel_layout=kernel_layout,
        )

    act1 = relay.nn.relu(_bn(data, name + "_bn1", axis))
    if bottle_neck:
        mid = int(num_filter * 0.25)
        conv1 = conv(act1, mid, 1, stride, 0, "_conv1")
        act2 = relay.nn.relu(_bn(conv1, name + "_bn2", axis))
        conv2 = conv(act2, mid, 3, (1, 1), 1, "_conv2")
        act3 = relay.nn.relu(_bn(conv2, name + "_bn3", axis))
        body = conv(act3, num_filter, 1, (1, 1), 0, "_conv3")
    else:
        conv1 = conv(act1, num_filter, 3, stride, 1, "_conv1")
        act2 = relay.nn.relu(_bn(conv1, name + "_bn2", axis))
        body = conv(act2, num_filter, 3, (1, 1), 1, "_conv2")
    shortcut = data if dim_match else conv(act1, num_filter, 1, stride, 0, "_sc")
    return relay.add(body, shortcut)


def resnet(
    units: list[int],
    num_stages: int,
    filter_list: list[int],
    num_classes: int,
    data_shape: tuple[int, ...],
    bottle_neck: bool = True,
    layout: str = "NCHW",
    dtype: str = "float32",
) -> relay.Function:
    """The ResNet function of ``units`` per stage; parameters in order of first use."""
    if len(units) != num_stages:
        raise ValueError(f"{len(units)} unit counts for {num_stages} stages")
    kernel_layout = layers.conv_kernel_layout(layout)
    axis = layout.index("C")
    height = data_shape[layout.index("H")]
    data = relay.var("data", shape=data_shape, dtype=dtype)
    data = _bn(data, "bn_data", axis, scale=False)

    def conv0(x: Expr, k: int, s: int, p: int) -> Expr:
        return layers.conv2d(
            x,
            channels=filter_list[0],
            kernel_size=(k, k),
            strides=(s, s),
            padding=(p, p),
            name="conv0",
            data_layout=layout,
            kernel_layout=kernel_layout,
        )

    if height <= 32:  # CIFAR-sized input
        body = conv0(data, 3, 1, 1)
    else:
        body = relay.nn.relu(_bn(conv0(data, 7, 2, 3), "bn0", axis))
        body = relay.nn.max_pool2d(body, pool_size=(3, 3), strides=(2, 2), padding=(1, 1), layout=layout)
    for i in range(num_stages):
        stride = (1, 1) if i == 0 else (2, 2)
        body = residual_unit(
            body, filter_list[i + 1], stride, False, f"stage{i + 1}_unit1",
            bottle_neck, layout, kernel_layout,
        )  # fmt: skip
        for j in range(units[i] - 1):
            body = residual_unit(
                body, filter_list[i + 1], (1, 1), True, f"stage{i + 1}_unit{j + 2}",
                bottle_neck, layout, kernel_layout,
            )  # fmt: skip
    relu1 = relay.nn.relu(_bn(body, "bn1", axis))
    pool1 = relay.nn.global_avg_pool2d(relu1, layout=layout)
    flat = relay.nn.batch_flatten(pool1)
    fc1 = layers.dense_add_bias(flat, units=num_classes, name="fc1")
    net = relay.nn.softmax(fc1)
    return relay.Function(relay.analysis.free_vars(net), net)


def get_net(
    batch_size: int,
    num_classes: int,
    num_layers: int = 50,
    image_shape: tuple[int, int, int] = (3, 224, 224),
    layout: str = "NCHW",
    dtype: str = "float32",
) -> relay.Function:
    """The ResNet-``num_layers`` function; inputs up to 28 pixels high get the 3-stage CIFAR
    variant (depth 6n+2 basic or 9n+2 bottleneck)."""
    if layout not in ("NCHW", "NHWC"):
        raise ValueError(f"unsupported layout '{layout}' (NCHW or NHWC)")
    # image_shape is given in `layout` without the batch axis
    data_shape = (batch_size, *image_shape)
    height = image_shape[layout.index("H") - 1]
    if height <= 28:
        num_stages = 3
        if (num_layers - 2) % 9 == 0 and num_layers >= 164:
            per_unit = [(num_layers - 2) // 9]
            filter_list = [16, 64, 128, 256]
            bottle_neck = True
        elif (num_layers - 2) % 6 == 0 and num_layers < 164:
            per_unit = [(num_layers - 2) // 6]
            filter_list = [16, 16, 32, 64]
            bottle_neck = False
        else:
            raise ValueError(f"no CIFAR ResNet with {num_layers} layers (6n+2 or 9n+2, n >= 18)")
        units = per_unit * num_stages
    else:
        num_stages = 4
        if num_layers >= 50:
            filter_list = [64, 256, 512, 1024, 2048]
            bottle_neck = True
        else:
            filter_list = [64, 64, 128, 256, 512]
            bottle_neck = False
        if num_layers not in _UNITS:
            raise ValueError(
                f"no ResNet with {num_layers} layers (choose one of {sorted(_UNITS)})"
            )
        units = _UNITS[num_layers]
    return resnet(
        units=units,
        num_stages=num_stages,
        filter_list=filter_list,
        num_classes=num_classes,
        data_shape=data_shape,
        bottle_neck=bottle_neck,
        layout=layout,
        dtype=dtype,
    )


def get_workload(
    batch_size: int = 1,
    num_classes: int = 1000,
    num_layers: int = 18,
    image_shape: tuple[int, int, int] = (3, 224, 224),
    layout: str = "NCHW",
    dtype: str = "float32",
    initializer: Initializer | None = None,
    seed: int = 0,
) -> tuple[relay.IRModule, dict]:
    """``(mod, params)`` for ResNet-``num_layers``; params are deterministic for a ``seed``."""
    net = get_net(batch_size, num_classes, num_layers, image_shape, layout, dtype)
    return create_workload(net, initializer, seed)
