"""``tvm.tir``: the immediate values Relay scripts pass as attributes.

``tir.IntImm("int32", 1)`` is an ``int`` (and ``FloatImm`` a ``float``) that remembers its
dtype, so ``fn.with_attr("Inline", tvm.tir.IntImm("int32", 1))`` ports unchanged. TensorIR
itself (PrimFunc, schedules, buffers) is not part of xrelay: those names raise an error that
says so.
"""

from __future__ import annotations

from typing import Any as _AnyT

from xrelay.error import TVMError, UnsupportedError
from xrelay.runtime.data_type import DataType, DataTypeCode

__all__ = ["Any", "FloatImm", "IntImm", "StringImm", "const", "layout"]


class IntImm(int):
    """An integer constant with a dtype (``IntImm("int32", 1)``); it is the int ``value``."""

    dtype: str

    def __new__(cls, dtype: str, value: _AnyT, span: _AnyT = None) -> IntImm:
        t = DataType(dtype)
        if t.type_code not in (DataTypeCode.INT, DataTypeCode.UINT) or t.lanes != 1:
            raise TVMError(f"IntImm needs a scalar integer dtype, got {dtype!r}")
        v = int(value)
        if t.type_code == DataTypeCode.UINT:
            lo, hi = 0, (1 << t.bits) - 1
        else:
            lo, hi = -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
        if not lo <= v <= hi:
            raise TVMError(f"IntImm: {v} does not fit in {dtype}")
        obj = super().__new__(cls, v)
        obj.dtype = str(t)
        return obj

    @property
    def value(self) -> int:
        return int(self)

    def __repr__(self) -> str:
        return f"T.{self.dtype}({int(self)})" if self.dtype != "int32" else str(int(self))


class FloatImm(float):
    """A float constant with a dtype (``FloatImm("float32", 0.5)``)."""

    dtype: str

    def __new__(cls, dtype: str, value: _AnyT, span: _AnyT = None) -> FloatImm:
        t = DataType(dtype)
        if t.type_code not in (DataTypeCode.FLOAT, DataTypeCode.BFLOAT) or t.lanes != 1:
            raise TVMError(f"FloatImm needs a scalar float dtype, got {dtype!r}")
        obj = super().__new__(cls, float(value))
        obj.dtype = str(t)
        return obj

    @property
    def value(self) -> float:
        return float(self)


def const(value: _AnyT, dtype: str | None = None, span: _AnyT = None) -> IntImm | FloatImm:
    """``tvm.tir.const``: an ``IntImm`` or ``FloatImm`` of ``value`` (dtype by default int32,
    int64 when the value needs it, float32, or bool for a Python bool)."""
    if dtype is None:
        if isinstance(value, bool):
            dtype = "bool"
        elif isinstance(value, int):
            dtype = "int32" if -(1 << 31) <= value < (1 << 31) else "int64"
        elif isinstance(value, float):
            dtype = "float32"
        else:
            raise TVMError(f"tir.const: cannot tell the dtype of {value!r}; give one")
    if dtype == "bool":
        return IntImm("uint1", int(bool(value)))
    t = DataType(dtype)
    if t.type_code in (DataTypeCode.FLOAT, DataTypeCode.BFLOAT):
        return FloatImm(dtype, value)
    return IntImm(dtype, value)


def Any() -> _AnyT:  # noqa: N802 - TVM's name
    """``tvm.tir.Any()``: a dynamic dimension, the same as ``relay.Any()``."""
    from xrelay.relay.expr import Any as _Any

    return _Any()


class StringImm(str):
    """A string constant (``StringImm("x")``)."""

    @property
    def value(self) -> str:
        return str(self)


def __getattr__(name: str) -> _AnyT:
    if name.startswith("__"):
        raise AttributeError(name)
    raise UnsupportedError(
        f"tvm.tir.{name} is not available: xrelay has no TensorIR (its kernels are numpy and C "
        "on the arena runtime); only tir.IntImm, tir.FloatImm and tir.StringImm exist"
    )


def layout(name: str, dtype: str = "int32") -> _AnyT:
    """``tvm.tir.layout(name)``: a data layout (``xrelay.dialects.relay.layout.Layout``; ``""``
    is Relay's undefined layout where a layout rule returns it)."""
    from xrelay.dialects.relay.layout import Layout

    return Layout(name)
