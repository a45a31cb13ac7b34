"""``relay.qnn.op``: Relay's quantized operators with tvm.relay.qnn.op's signatures and defaults.

Scales and zero points are expressions (``relay.const(0.5, "float32")``, ``relay.const(0,
"int32")``); a Python number is accepted too and becomes a float32 scale or int32 zero point.
The attributes, their defaults (``DEFAULT``) and their checks are the ``qnn`` dialect's.

>>> from xrelay import relay
>>> x = relay.var("x", shape=(1, 4), dtype="int32")
>>> y = relay.qnn.op.requantize(x, relay.const(0.5), relay.const(0), relay.const(0.25), relay.const(0))
>>> y.checked_type
TensorType([1, 4], int8)
"""

from __future__ import annotations

from typing import Any

from xrelay.dialects.qnn import SQNN_DTYPE_TO_CODE, requantize_config
from xrelay.relay.expr import Call, Expr, Tuple, TupleWrapper, const
from xrelay.relay.op import DEFAULT, dialect_defaults, make_call, reshape

__all__ = [
    "SQNN_DTYPE_TO_CODE",
    "add",
    "avg_pool2d",
    "batch_matmul",
    "concatenate",
    "conv2d",
    "conv2d_transpose",
    "dense",
    "dequantize",
    "mul",
    "quantize",
    "requantize",
    "requantize_config",
    "simulated_dequantize",
    "simulated_quantize",
    "subtract",
]


def _scale(v: Any) -> Expr:
    return v if isinstance(v, Expr) else const(float(v), "float32")


def _zp(v: Any) -> Expr:
    return v if isinstance(v, Expr) else const(int(v), "int32")


def _call(name: str, args: list[Any], **attrs: Any) -> Call:
    return make_call("qnn." + name, args, **attrs)


@dialect_defaults("qnn.requantize")
def requantize(
    data, input_scale, input_zero_point, output_scale, output_zero_point, axis=DEFAULT,
    rounding=DEFAULT, compute_dtype=DEFAULT, out_dtype=DEFAULT,
) -> Call:  # fmt: skip
    """``out_zp + in_scale / out_scale * (data - in_zp)`` (rounding "UPWARD"/"TONEAREST")."""
    return _call(
        "requantize",
        [data, _scale(input_scale), _zp(input_zero_point), _scale(output_scale), _zp(output_zero_point)],
        axis=axis, rounding=rounding, compute_dtype=compute_dtype, out_dtype=out_dtype,
    )  # fmt: skip


@dialect_defaults("qnn.quantize")
def quantize(data, output_scale, output_zero_point, axis=DEFAULT, out_dtype=DEFAULT) -> Call:
    """Float to ``out_dtype``: ``clip(round(data / scale) + zero_point)``."""
    return _call(
        "quantize", [data, _scale(output_scale), _zp(output_zero_point)], axis=axis, out_dtype=out_dtype
    )


@dialect_defaults("qnn.dequantize")
def dequantize(data, input_scale, input_zero_point, axis=DEFAULT, out_dtype=DEFAULT) -> Call:
    """Integer to float: ``scale * (data - zero_point)``."""
    return _call(
        "dequantize", [data, _scale(input_scale), _zp(input_zero_point)], axis=axis, out_dtype=out_dtype
    )


def _dtype_code(dtype: Any) -> Expr:
    if isinstance(dtype, str):
        if dtype not in SQNN_DTYPE_TO_CODE:
            raise ValueError(f"unknown simulated dtype '{dtype}'; known: {', '.join(SQNN_DTYPE_TO_CODE)}")
        return const(SQNN_DTYPE_TO_CODE[dtype], "int32")
    return dtype


@dialect_defaults("qnn.simulated_quantize")
def simulated_quantize(data, output_scale, output_zero_point, axis=DEFAULT, out_dtype="int8") -> Call:
    """Quantize and keep the float type; ``out_dtype`` a name or an int32 code expression."""
    return _call(
        "simulated_quantize",
        [data, _dtype_code(out_dtype), reshape(_scale(output_scale), [-1]),
         reshape(_zp(output_zero_point), [-1])],
        axis=axis,
    )  # fmt: skip


@dialect_defaults("qnn.simulated_dequantize")
def simulated_dequantize(data, input_scale, input_zero_point, axis=DEFAULT, in_dtype="int8") -> Call:
    """Dequantize values held in a float tensor; ``in_dtype`` a name or an int32 code expression."""
    return _call(
        "simulated_dequantize",
        [data, _dtype_code(in_dtype), reshape(_scale(input_scale), [-1]),
         reshape(_zp(input_zero_point), [-1])],
        axis=axis,
    )  # fmt: skip


def _fields(v: Any) -> list[Expr]:
    if isinstance(v, TupleWrapper):
        return [v[i] for i in range(len(v))]
    if isinstance(v, Tuple):
        return list(v.fields)
    return list(v)


def concatenate(data, input_scales, input_zero_points, output_scale, output_zero_point, axis) -> Call:
    """Requantize each input to the output's parameters and concatenate along ``axis``."""
    tensors = _fields(data)
    scales = [_scale(s) for s in _fields(input_scales)]
    zps = [_zp(z) for z in _fields(input_zero_points)]
    if not (len(tensors) == len(scales) == len(zps)):
        raise ValueError(
            f"qnn.concatenate: {len(tensors)} tensors, {len(scales)} scales and {len(zps)} zero points"
        )
    return _call(
        "concatenate", [*tensors, *scales, *zps, _scale(output_scale), _zp(output_zero_point)], axis=axis
    )


@dialect_defaults("qnn.conv2d")
def conv2d(
    data, kernel, input_zero_point, kernel_zero_point, input_scale, kernel_scale, kernel_size,
    channels, strides=DEFAULT, padding=DEFAULT, dilation=DEFAULT, groups=DEFAULT, data_layout=DEFAULT,
    kernel_layout=DEFAULT, out_layout=DEFAULT, out_dtype=DEFAULT,
) -> Call:  # fmt: skip
    """Quantized 2-D convolution (int32 result with scale ``input_scale * kernel_scale``)."""
    return _call(
        "conv2d",
        [data, kernel, _zp(input_zero_point), _zp(kernel_zero_point), _scale(input_scale),
         _scale(kernel_scale)],
        strides=strides, padding=padding, dilation=dilation, groups=groups, channels=channels,
        kernel_size=kernel_size, data_layout=data_layout, kernel_layout=kernel_layout,
        out_layout=out_layout, out_dtype=out_dtype,
    )  # fmt: skip


@dialect_defaults("qnn.conv2d_transpose")
def conv2d_transpose(
    data, weight, input_zero_point, kernel_zero_point, input_scale, kernel_scale, strides=DEFAULT,
    padding=DEFAULT, dilation=DEFAULT, groups=DEFAULT, channels=DEFAULT, kernel_size=DEFAULT,
    data_layout=DEFAULT, kernel_layout=DEFAULT, out_layout=DEFAULT, output_padding=DEFAULT,
    out_dtype=DEFAULT,
) -> Call:  # fmt: skip
    """Quantized transposed 2-D convolution."""
    return _call(
        "conv2d_transpose",
        [data, weight, _zp(input_zero_point), _zp(kernel_zero_point), _scale(input_scale),
         _scale(kernel_scale)],
        strides=strides, padding=padding, dilation=dilation, groups=groups, channels=channels,
        kernel_size=kernel_size, data_layout=data_layout, kernel_layout=kernel_layout,
        out_layout=out_layout, output_padding=output_padding, out_dtype=out_dtype,
    )  # fmt: skip


@dialect_defaults("qnn.dense")
def dense(
    data, weight, input_zero_point, kernel_zero_point, input_scale, kernel_scale, units,
    out_dtype=DEFAULT,
) -> Call:  # fmt: skip
    """Quantized dense ``(data - izp) @ (weight - kzp).T``."""
    return _call(
        "dense",
        [data, weight, _zp(input_zero_point), _zp(kernel_zero_point), _scale(input_scale),
         _scale(kernel_scale)],
        units=units, out_dtype=out_dtype,
    )  # fmt: skip


@dialect_defaults("qnn.batch_matmul")
def batch_matmul(x, y, x_zero_point, y_zero_point, x_scale, y_scale, out_dtype=DEFAULT) -> Call:
    """Quantized ``batch_matmul(x, y)`` with y transposed (Relay's only form)."""
    return _call(
        "batch_matmul",
        [x, y, _zp(x_zero_point), _zp(y_zero_point), _scale(x_scale), _scale(y_scale)],
        out_dtype=out_dtype, transpose_a=False, transpose_b=True,
    )  # fmt: skip


def _binary(name: str):
    def fn(
        lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point, output_scale,
        output_zero_point, lhs_axis=DEFAULT, rhs_axis=DEFAULT,
    ) -> Call:  # fmt: skip
        return _call(
            name,
            [lhs, rhs, _scale(lhs_scale), _zp(lhs_zero_point), _scale(rhs_scale),
             _zp(rhs_zero_point), _scale(output_scale), _zp(output_zero_point)],
            lhs_axis=lhs_axis, rhs_axis=rhs_axis,
        )  # fmt: skip

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Quantized ``{name}``: operands requantized to the output's parameters."
    return dialect_defaults("qnn." + name)(fn)


add = _binary("add")
subtract = _binary("subtract")
mul = _binary("mul")


@dialect_defaults("qnn.avg_pool2d")
def avg_pool2d(
    data, input_scale, input_zero_point, output_scale, output_zero_point, pool_size, strides,
    padding, dilation, ceil_mode=DEFAULT, count_include_pad=True, layout="NHWC", out_layout=DEFAULT,
) -> Call:  # fmt: skip
    """Quantized 2-D average pooling (Relay's Python defaults: NHWC, count_include_pad)."""
    return _call(
        "avg_pool2d",
        [data, _scale(input_scale), _zp(input_zero_point), _scale(output_scale),
         _zp(output_zero_point)],
        pool_size=pool_size, strides=strides, padding=padding, dilation=dilation,
        ceil_mode=ceil_mode, count_include_pad=count_include_pad, layout=layout,
        out_layout=out_layout,
    )  # fmt: skip
