"""``tvm.tir``: the immediate values Relay scripts pass as attributes.

``tir.IntImm("int32", 1)`` is an ``int`` (and ``FloatImm`` a ``float``) that remembers its
dtype, so ``fn.with_attr("Inline", tvm.tir.IntImm("int32", 1))`` ports unchanged. TensorIR
itself (PrimFunc, schedules, buffers) is not part of xrelay: those names raise an error that
says so.
"""

from __future__ import annotations

from typing import Any

from xrelay.error import TVMError, UnsupportedError
from xrelay.runtime.data_type import DataType, DataTypeCode

__all__ = ["FloatImm", "IntImm", "StringImm", "layout"]


class IntImm(int):
    """An integer constant with a dtype (``IntImm("int32", 1)``); it is the int ``value``."""

    dtype: str

    def __new__(cls, dtype: str, value: Any, span: Any = None) -> IntImm:
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

    def __new__(cls, dtype: str, value: Any, span: Any = None) -> FloatImm:
        t = DataType(dtype)
        if t.type_code not in (DataTypeCode.FLOAT, DataTypeCode.BFLOAT) or t.lanes != 1:
            raise TVMError(f"FloatImm needs a scalar float dtype, got {dtype!r}")
        obj = super().__new__(cls, float(value))
        obj.dtype = str(t)
        return obj

    @property
    def value(self) -> float:
        return float(self)


class StringImm(str):
    """A string constant (``StringImm("x")``)."""

    @property
    def value(self) -> str:
        return str(self)


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    raise UnsupportedError(
        f"tvm.tir.{name} is not available: xrelay has no TensorIR (its kernels are numpy and C "
        "on the arena runtime); only tir.IntImm, tir.FloatImm and tir.StringImm exist"
    )


def layout(name: str, dtype: str = "int32") -> Any:
    """``tvm.tir.layout(name)``: a data layout (``xrelay.dialects.relay.layout.Layout``; ``""``
    is Relay's undefined layout where a layout rule returns it)."""
    from xrelay.dialects.relay.layout import Layout

    return Layout(name)
