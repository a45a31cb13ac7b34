"""Layer helpers for the built-in workloads, as ``tvm.relay.testing.layers``.

Relay's helpers create untyped parameter variables and leave their shapes to type
inference. xrelay types expressions eagerly, so these helpers compute each parameter's
shape from the input's type and the layer's attributes (channels, kernel size, layout) and
create typed variables named ``<name>_weight``, ``<name>_gamma``, ...
"""

from __future__ import annotations

from typing import Any

from xrelay import relay
from xrelay.dialects.relay import dtype_of, shape_of

__all__ = ["batch_norm_infer", "conv2d", "conv_kernel_layout", "dense_add_bias"]


def _dtype(data: relay.Expr) -> str:
    return dtype_of(data.checked_type)


def conv_kernel_layout(data_layout: str, is_depthwise: bool = False) -> str:
    """The kernel layout the workloads use with ``data_layout`` (OIHW for NCHW, HWIO/HWOI
    for NHWC)."""
    table = {("NCHW", False): "OIHW", ("NCHW", True): "OIHW", ("NHWC", False): "HWIO", ("NHWC", True): "HWOI"}
    try:
        return table[(data_layout, is_depthwise)]
    except KeyError:
        raise ValueError(f"unsupported data layout '{data_layout}' (NCHW or NHWC)") from None


def batch_norm_infer(
    data: relay.Expr,
    gamma: relay.Expr | None = None,
    beta: relay.Expr | None = None,
    moving_mean: relay.Expr | None = None,
    moving_var: relay.Expr | None = None,
    **kwargs: Any,
) -> relay.Expr:
    """``nn.batch_norm(...)[0]`` with parameters ``<name>_gamma/_beta/_moving_mean/_moving_var``
    of shape (C,) for the channel ``axis`` (keyword ``name`` required)."""
    name = kwargs.pop("name")
    axis = kwargs.get("axis", 1)
    shape = shape_of(data.checked_type)
    c = shape[axis]
    dtype = _dtype(data)

    def param(suffix: str, given: relay.Expr | None) -> relay.Expr:
        return given if given is not None else relay.var(f"{name}_{suffix}", shape=(c,), dtype=dtype)

    return relay.nn.batch_norm(
        data,
        param("gamma", gamma),
        param("beta", beta),
        param("moving_mean", moving_mean),
        param("moving_var", moving_var),
        **kwargs,
    )[0]


def conv2d(data: relay.Expr, weight: relay.Expr | None = None, **kwargs: Any) -> relay.Expr:
    """``nn.conv2d`` with a weight ``<name>_weight`` shaped from channels, kernel_size,
    groups and kernel_layout (keyword ``name`` required unless ``weight`` is given)."""
    name = kwargs.pop("name", None)
    if weight is None:
        if name is None:
            raise ValueError("conv2d needs a name for its weight")
        data_layout = kwargs.get("data_layout", "NCHW")
        kernel_layout = kwargs.get("kernel_layout", "OIHW")
        ds = shape_of(data.checked_type)
        cin = ds[data_layout.index("C")]
        groups = kwargs.get("groups", 1)
        kh, kw = kwargs["kernel_size"]
        dims = {"O": kwargs["channels"], "I": cin // groups, "H": kh, "W": kw}
        wshape = tuple(dims[c] for c in kernel_layout)
        weight = relay.var(f"{name}_weight", shape=wshape, dtype=_dtype(data))
    return relay.nn.conv2d(data, weight, **kwargs)


def dense_add_bias(
    data: relay.Expr,
    weight: relay.Expr | None = None,
    bias: relay.Expr | None = None,
    units: int | None = None,
    **kwargs: Any,
) -> relay.Expr:
    """``nn.dense`` + ``nn.bias_add(axis=-1)`` with ``<name>_weight`` (units, in) and
    ``<name>_bias`` (units,)."""
    name = kwargs.pop("name")
    dtype = _dtype(data)
    in_dim = shape_of(data.checked_type)[-1]
    if weight is None:
        weight = relay.var(f"{name}_weight", shape=(units, in_dim), dtype=dtype)
    if bias is None:
        bias = relay.var(f"{name}_bias", shape=(units,), dtype=dtype)
    out = relay.nn.dense(data, weight, units, **kwargs)
    return relay.nn.bias_add(out, bias, axis=-1)
