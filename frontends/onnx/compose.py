"""Compositions of Relay ops that converters of several families share (each defined once).

``onnx_cast`` is ONNX's ``Cast`` (``tensor``), also the last step of ``QuantizeLinear``
(``quantization``); ``round_half_even`` is ONNX's ``Round`` (``math``), also the rounding of
``QuantizeLinear`` and ``DynamicQuantizeLinear``; ``string_op`` adds an op on tensors of strings
(``text``'s operators and ``Equal`` of strings, ``logical``).
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
from xdsl.utils.exceptions import VerifyException

from xrelay.dialects.relay import numpy_dtype
from xrelay.frontends.onnx.importer import Importer, Node, Value


def string_op(im: Importer, node: Node, cls: type, inputs: list[Any], *args: Any) -> list[Value]:
    """Op ``cls`` (dialects/relay/strings.py) on run-time tensors of strings ``inputs``."""
    for v in inputs:
        if not im.is_string(v):
            raise node.fail("its inputs must be tensors of strings; one is not")
    try:
        op = cls(*[im.ssa(v) for v in inputs], *args)
    except VerifyException as e:
        raise node.fail(str(e)) from None
    im.block.add_op(op)
    return [Value(value=r) for r in op.results]


def round_half_even(im: Importer, x: Value) -> Value:
    """``x`` rounded to the nearest integer, halves to even (Relay's ``round`` rounds them away
    from zero)."""
    fl = im.apply("floor", x)
    frac = im.apply("subtract", x, fl)
    up = im.apply("add", fl, im.scalar(1.0, x))
    odd = im.apply("not_equal", im.apply("floor_mod", fl, im.scalar(2.0, x)), im.scalar(0.0, x))
    half = im.apply("where", odd, up, fl)
    nearest = im.apply("where", im.apply("greater", frac, im.scalar(0.5, x)), up, fl)
    return im.apply("where", im.apply("equal", frac, im.scalar(0.5, x)), half, nearest)


_SATURATING = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz")
"""The float8 types whose ONNX casts saturate (``saturate``, default 1)."""


def onnx_cast(im: Importer, node: Node, x: Value, dtype: str) -> Value:
    """ONNX's ``Cast`` of ``x`` to ``dtype`` with ``node``'s ``saturate`` and ``round_mode``.

    Relay's ``cast`` rounds to nearest even and overflows to inf/NaN; ONNX's saturating float8
    cast clips to the largest finite value first (infinities too, NaN stays NaN), and its cast
    to float8_e8m0fnu keeps a float32's exponent field, rounded as ``round_mode`` says.
    """
    saturate = bool(node.attrs.get("saturate", 1))
    if dtype == "float8_e8m0fnu":
        return _to_e8m0(im, node, x, saturate, node.attrs.get("round_mode", "up"))
    if saturate and dtype in _SATURATING and im.dtype_of(x) != dtype:
        if im.dtype_of(x) not in ("float16", "float32", "float64"):
            x = im.cast_like(x, "float32")  # exact here, so the clip itself cannot round
        big = float(ml_dtypes.finfo(numpy_dtype(dtype)).max)
        x = im.emit1("clip", [x], a_min=-big, a_max=big)
    return im.cast_like(x, dtype)


def _to_e8m0(im: Importer, node: Node, x: Value, saturate: bool, round_mode: str) -> Value:
    """ONNX's cast to float8_e8m0fnu (onnx.numpy_helper.to_float8e8m0) on a float32's bits:
    the exponent field, one more when ``round_mode`` rounds up (``up``: any fraction;
    ``nearest``: the first fraction bit and any other bit or a nonzero exponent), NaN/inf
    become NaN (0xFF) and, saturating, 2**127 does not round up to NaN."""
    if round_mode not in ("up", "down", "nearest"):
        raise node.fail(f"round_mode {round_mode!r} is not one of up, down, nearest")

    def u32(v: int) -> Value:
        return im.const(np.uint32(v))

    def test(bits: Value, mask: int) -> Value:
        return im.emit1("not_equal", [im.emit1("bitwise_and", [bits, u32(mask)]), u32(0)])

    bits = im.emit1("reinterpret", [im.cast_like(x, "float32")], dtype="uint32")
    exp = im.emit1("bitwise_and", [im.emit1("right_shift", [bits, u32(23)]), u32(0xFF)])
    normal = im.emit1("not_equal", [exp, u32(0xFF)])
    if round_mode == "up":
        up = im.emit1("logical_and", [test(bits, 0x7FFFFF), normal])
    elif round_mode == "nearest":
        rest = im.emit1("logical_or", [test(bits, 0x3FFFFF), im.emit1("not_equal", [exp, u32(0)])])
        up = im.emit1("logical_and", [im.emit1("logical_and", [test(bits, 0x400000), rest]), normal])
    else:
        up = None
    if up is not None and saturate:
        up = im.emit1("logical_and", [up, im.emit1("not_equal", [exp, u32(0xFE)])])
    if up is not None:
        exp = im.emit1("add", [exp, im.cast_like(up, "uint32")])
    return im.emit1("reinterpret", [im.cast_like(exp, "uint8")], dtype="float8_e8m0fnu")
