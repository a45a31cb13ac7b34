"""The native engine's fast kernels by op name, declared once.

``FAST`` maps a Relay op to the maker the arena executor tries before the reference kernel
(``fast_kernels.compile_function``); ``PAD_READERS`` the makers that read through a deferred
``nn.pad`` (when they decline, the pad is made and ``FAST``'s maker runs). A maker returns None
for what it does not take, so ``first`` chains the int8 kernels (``fast_int8``) with the float
ones (``fast_kernels.FLOAT_MAKERS``) and ``by_layout`` picks the NCHW, channels-last or blocked
kernel (``fast_nhwc``). No other module adds to these tables, and a key given by two of the
parts below is an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from xrelay.runtime.native import fast_int8 as i8
from xrelay.runtime.native import fast_kernels as fk
from xrelay.runtime.native import fast_nhwc as nhwc
from xrelay.runtime.native.fast_concat import fast_concatenate, fast_stack
from xrelay.runtime.native.fast_kernels import FLOAT_MAKERS, Maker, by_layout, first

__all__ = ["FAST", "LOOKUPS", "PAD_READERS"]


def _merge(*parts: Mapping[str, Maker]) -> Mapping[str, Maker]:
    table: dict[str, Maker] = {}
    for part in parts:
        for name, maker in part.items():
            if name in table:
                raise ValueError(f"the native engine's table names '{name}' twice")
            table[name] = maker
    return MappingProxyType(table)


_COMBINED: dict[str, Maker] = {
    # onnxruntime's QLinearAdd chain and float requantize (fake-quantization-to-integer
    # {onnxruntime=true}) before the float kernels
    "add": first(i8.ort_add, FLOAT_MAKERS["add"]),
    "cast": first(i8.ort_requant, i8.cast, FLOAT_MAKERS["cast"]),
    "clip": first(FLOAT_MAKERS["clip"], i8.clip),
    # float32 in C (onnxruntime's order), then numpy's accumulate into the destination
    "cumsum": first(i8.cumsum, FLOAT_MAKERS["cumsum"]),
    # the row sums of an 8-bit value's zero-point terms, from its bytes
    "sum": first(i8.byte_row_sum, FLOAT_MAKERS["sum"]),
    # onnxruntime's QuantizeLinear (fake-quantization-to-integer{onnxruntime=true})
    "divide": first(i8.ort_quantize, FLOAT_MAKERS["divide"]),
    # onnxruntime's QLinearMul (the int32 product of two 8-bit values and its requantize)
    "multiply": first(i8.ort_mul, FLOAT_MAKERS["multiply"]),
    "nn.global_avg_pool2d": by_layout(fk.fast_global_avg_pool, nhwc.global_avg_pool_nhwc, nhwc.global_avg_pool_blocked),
    # 8-bit NCHW max pools in C before the float layouts
    "nn.max_pool2d": first(i8.max_pool, by_layout(fk.fast_max_pool, nhwc.max_pool_nhwc, nhwc.max_pool_blocked)),
    # int8 x int8 -> int32, exact through float32 SGEMM, before the float layouts
    "nn.conv2d": first(i8.conv2d, by_layout(fk.fast_conv2d, nhwc.conv2d_nhwc, nhwc.conv2d_blocked)),
}  # fmt: skip

FAST: Mapping[str, Maker] = _merge(
    {name: maker for name, maker in FLOAT_MAKERS.items() if name not in _COMBINED},
    _COMBINED,
    {
        "concatenate": fast_concatenate,
        "stack": fast_stack,
        "qnn.dequantize_sum": i8.dequantize_sum,
        "qnn.ort_layer_norm": i8.ort_layer_norm,
        "qnn.ort_gelu": i8.ort_gelu,
        "qnn.ort_softmax": i8.ort_softmax,
        "nn.dense": i8.dense,
        "nn.batch_matmul": i8.batch_matmul,
        "fixed_point_multiply": i8.fixed_point_multiply,
        "fixed_point_multiply_per_axis": i8.fixed_point_multiply,
    },
)

PAD_READERS: Mapping[str, Maker] = MappingProxyType({"nn.conv2d": i8.conv2d})

LOOKUPS = (i8.lookup_regions, i8.lookup_thunk)
"""Chains computing a function of one 8-bit value, run as table lookups (``fast_int8``)."""
