"""``tvm.runtime.DataType``: a dtype string taken apart into type code, bits and lanes.

    >>> t = DataType("int8")
    >>> t.bits, t.lanes, t.type_code
    (8, 1, 0)
    >>> str(DataType("float32x4")), DataType("float32x4").lanes
    ('float32x4', 4)

Accepted strings are TVM's: ``int<bits>``, ``uint<bits>``, ``float<bits>``, ``bfloat16``,
``bool`` (``uint1``), ``handle``, and TVM's narrow floats ``float8_e4m3fn``, ``float8_e5m2``,
``float8_e4m3fnuz``, ``float8_e5m2fnuz``, ``float8_e8m0fnu``, ``float4_e2m1fn`` (each with
DLPack's own type code), each optionally followed by ``x<lanes>``; ``int``, ``uint`` and
``float`` alone mean 32 bits. Anything else is a ``TVMError`` naming the string.

    >>> t = DataType("float8_e4m3fn")
    >>> t.type_code, t.bits, str(t)
    (10, 8, 'float8_e4m3fn')
"""

from __future__ import annotations

import re
from typing import Any

from xrelay.error import TVMError

__all__ = ["DataType", "DataTypeCode"]


class DataTypeCode:
    """TVM's type codes (DLPack's for the first three)."""

    INT = 0
    UINT = 1
    FLOAT = 2
    HANDLE = 3
    BFLOAT = 4
    FLOAT8_E4M3FN = 10
    FLOAT8_E4M3FNUZ = 11
    FLOAT8_E5M2 = 12
    FLOAT8_E5M2FNUZ = 13
    FLOAT8_E8M0FNU = 14
    FLOAT4_E2M1FN = 17


_NARROW_FLOATS = {
    "float8_e4m3fn": (DataTypeCode.FLOAT8_E4M3FN, 8),
    "float8_e4m3fnuz": (DataTypeCode.FLOAT8_E4M3FNUZ, 8),
    "float8_e5m2": (DataTypeCode.FLOAT8_E5M2, 8),
    "float8_e5m2fnuz": (DataTypeCode.FLOAT8_E5M2FNUZ, 8),
    "float8_e8m0fnu": (DataTypeCode.FLOAT8_E8M0FNU, 8),
    "float4_e2m1fn": (DataTypeCode.FLOAT4_E2M1FN, 4),
}
_NARROW_NAME = {code: name for name, (code, _) in _NARROW_FLOATS.items()}
_NARROW_SYNTAX = re.compile(rf"^({'|'.join(_NARROW_FLOATS)})(?:x(\d+))?$")


_PREFIX = {
    "int": DataTypeCode.INT,
    "uint": DataTypeCode.UINT,
    "float": DataTypeCode.FLOAT,
    "bfloat": DataTypeCode.BFLOAT,
    "handle": DataTypeCode.HANDLE,
}
_CODE_NAME = {code: name for name, code in _PREFIX.items()}
_SYNTAX = re.compile(r"^(int|uint|float|bfloat|handle)(\d*)(?:x(\d+))?$")


class DataType:
    """A scalar or vector dtype: ``type_code``, ``bits`` and ``lanes`` (see the module doc)."""

    __slots__ = ("type_code", "bits", "lanes")

    def __init__(self, type_str: str | DataType | Any):
        if isinstance(type_str, DataType):
            self.type_code, self.bits, self.lanes = type_str.type_code, type_str.bits, type_str.lanes
            return
        if not isinstance(type_str, str):
            # numpy dtypes and classes (np.float32) by name
            name = getattr(type_str, "name", None) or getattr(type_str, "__name__", None)
            if not isinstance(name, str):
                raise TVMError(f"DataType expects a dtype string, got {type_str!r}")
            type_str = name
        s = type_str.strip()
        if s == "bool":
            self.type_code, self.bits, self.lanes = DataTypeCode.UINT, 1, 1
            return
        if s.startswith("boolx"):
            s = "uint1x" + s[len("boolx") :]
        narrow = _NARROW_SYNTAX.match(s)
        if narrow is not None:
            name, lanes = narrow.groups()
            (self.type_code, self.bits), self.lanes = _NARROW_FLOATS[name], int(lanes or 1)
            if self.lanes <= 0:
                raise TVMError(f"unknown data type {type_str!r}: lanes must be positive")
            return
        m = _SYNTAX.match(s)
        if m is None:
            raise TVMError(f"unknown data type {type_str!r} (expected e.g. int8, float32, uint1x4, bool)")
        prefix, bits, lanes = m.groups()
        code = _PREFIX[prefix]
        if code == DataTypeCode.HANDLE:
            nbits = int(bits) if bits else 64
        elif code == DataTypeCode.BFLOAT:
            nbits = int(bits) if bits else 16
            if nbits != 16:
                raise TVMError(f"unknown data type {type_str!r}: bfloat has 16 bits")
        else:
            nbits = int(bits) if bits else 32
        nlanes = int(lanes) if lanes else 1
        if nbits <= 0 or nlanes <= 0:
            raise TVMError(f"unknown data type {type_str!r}: bits and lanes must be positive")
        self.type_code, self.bits, self.lanes = code, nbits, nlanes

    def __str__(self) -> str:
        if self.type_code == DataTypeCode.UINT and self.bits == 1:
            base = "bool"
        elif self.type_code == DataTypeCode.HANDLE:
            base = "handle"
        elif self.type_code in _NARROW_NAME:
            base = _NARROW_NAME[self.type_code]
        else:
            base = f"{_CODE_NAME[self.type_code]}{self.bits}"
        return base if self.lanes == 1 else f"{base}x{self.lanes}"

    def __repr__(self) -> str:
        return f"DataType({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                other = DataType(other)
            except TVMError:
                return False
        if not isinstance(other, DataType):
            return NotImplemented
        return (self.type_code, self.bits, self.lanes) == (other.type_code, other.bits, other.lanes)

    def __hash__(self) -> int:
        return hash((self.type_code, self.bits, self.lanes))
