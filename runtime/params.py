"""``relay.save_param_dict`` / ``load_param_dict``: TVM's binary parameter format.

The bytes are TVM's (``src/runtime/file_utils.cc``, ``ndarray.h``), so files written by TVM load
here and the other way round:

* ``uint64`` list magic ``0xF7E58D4F05049CB7``, ``uint64`` reserved (0);
* the names: ``uint64`` count, then per name a ``uint64`` length and the UTF-8 bytes;
* the arrays: ``uint64`` count (equal to the names'), then per array: ``uint64`` magic
  ``0xDD5E40F096B4A13F``, ``uint64`` reserved, ``int32`` device type and ``int32`` device id,
  ``int32`` ndim, the dtype as ``uint8`` code, ``uint8`` bits, ``uint16`` lanes, ``int64``
  shape[ndim], ``int64`` byte size and the data (C order, little endian).

Everything is little endian. Loading verifies every length against what is left, so a
truncated or foreign file is one ``ParamsFormatError`` saying where it went wrong.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from typing import Any

import numpy as np

from xrelay.error import TVMError
from xrelay.runtime.data_type import DataType, DataTypeCode
from xrelay.runtime.ndarray import NDArray

__all__ = ["ParamsFormatError", "is_param_dict", "load_param_dict", "save_param_dict"]

LIST_MAGIC = 0xF7E58D4F05049CB7
ARRAY_MAGIC = 0xDD5E40F096B4A13F
_CPU = 1


class ParamsFormatError(TVMError, ValueError):
    """Bytes that are not a valid TVM parameter dict."""


_FLOAT8 = {
    DataType(name).type_code: name
    for name in ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu")
}
"""The 8-bit floats by their DLPack type code (TVM writes these codes); their numpy types are
ml_dtypes', imported only when a file holds one."""


def _dtype_fields(dtype: np.dtype) -> tuple[int, int, int]:
    if dtype == np.bool_:
        return DataTypeCode.UINT, 1, 1  # TVM stores bool as uint1 in one byte each
    t = DataType(dtype.name)
    if t.bits < 8:  # TVM packs these several to a byte; xrelay holds one element per byte
        raise ParamsFormatError(f"{dtype.name} parameters cannot be saved in TVM's format")
    return t.type_code, t.bits, t.lanes


def _numpy_dtype(code: int, bits: int, lanes: int, where: str) -> np.dtype:
    if lanes != 1:
        raise ParamsFormatError(f"{where}: vector dtype with {lanes} lanes is not supported")
    if code == DataTypeCode.UINT and bits == 1:
        return np.dtype(np.bool_)
    if bits == 8 and code in _FLOAT8:
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, _FLOAT8[code]))
    names = {DataTypeCode.INT: "int", DataTypeCode.UINT: "uint", DataTypeCode.FLOAT: "float"}
    if code not in names:
        raise ParamsFormatError(f"{where}: unsupported dtype code {code} ({bits} bits)")
    try:
        return np.dtype(f"{names[code]}{bits}")
    except TypeError:
        raise ParamsFormatError(f"{where}: unsupported dtype {names[code]}{bits}") from None


def save_param_dict(params: Mapping[str, Any]) -> bytearray:
    """The bytes of ``params`` (name -> array) in TVM's format (see the module doc)."""
    out = bytearray(struct.pack("<QQ", LIST_MAGIC, 0))
    names = list(params)
    out += struct.pack("<Q", len(names))
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"parameter names must be strings, got {name!r}")
        raw = name.encode()
        out += struct.pack("<Q", len(raw)) + raw
    out += struct.pack("<Q", len(names))
    for name in names:
        v = params[name]
        arr = np.require(v.numpy() if hasattr(v, "numpy") else np.asarray(v), requirements="C")
        code, bits, lanes = _dtype_fields(arr.dtype)
        data = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
        out += struct.pack("<QQiii", ARRAY_MAGIC, 0, _CPU, 0, arr.ndim)
        out += struct.pack("<BBH", code, bits, lanes)
        out += struct.pack(f"<{arr.ndim}q", *arr.shape)
        out += struct.pack("<q", len(data)) + data
    return out


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, n: int, what: str) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ParamsFormatError(
                f"truncated parameter data: {what} needs {n} bytes at offset {self.pos}, "
                f"{len(self.data) - self.pos} left"
            )
        b = self.data[self.pos : self.pos + n]
        self.pos += n
        return b

    def unpack(self, fmt: str, what: str) -> tuple[Any, ...]:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))


def is_param_dict(data: bytes | bytearray | memoryview) -> bool:
    """Whether ``data`` starts with TVM's parameter-list magic."""
    return len(data) >= 8 and struct.unpack_from("<Q", bytes(data[:8]))[0] == LIST_MAGIC


def load_param_dict(param_bytes: bytes | bytearray | memoryview) -> dict[str, NDArray]:
    """The arrays of TVM parameter bytes by name (each an ``NDArray``)."""
    if not isinstance(param_bytes, bytes | bytearray | memoryview):
        raise TypeError(f"load_param_dict expects bytes, got {type(param_bytes).__name__}")
    r = _Reader(bytes(param_bytes))
    magic, _ = r.unpack("<QQ", "the header")
    if magic != LIST_MAGIC:
        raise ParamsFormatError(
            f"not a TVM parameter dict: magic {magic:#018x}, expected {LIST_MAGIC:#018x}"
        )
    (n_names,) = r.unpack("<Q", "the name count")
    names = []
    for i in range(n_names):
        (length,) = r.unpack("<Q", f"the length of name {i}")
        try:
            names.append(r.take(length, f"name {i}").decode())
        except UnicodeDecodeError:
            raise ParamsFormatError(f"name {i} is not UTF-8") from None
    (n_arrays,) = r.unpack("<Q", "the array count")
    if n_arrays != n_names:
        raise ParamsFormatError(f"{n_names} names but {n_arrays} arrays")
    out: dict[str, NDArray] = {}
    for name in names:
        where = f"array '{name}'"
        magic, _, _dev_type, _dev_id, ndim = r.unpack("<QQiii", f"the header of {where}")
        if magic != ARRAY_MAGIC:
            raise ParamsFormatError(f"{where}: bad array magic {magic:#018x}")
        if not 0 <= ndim <= 32:
            raise ParamsFormatError(f"{where}: bad ndim {ndim}")
        code, bits, lanes = r.unpack("<BBH", f"the dtype of {where}")
        dtype = _numpy_dtype(code, bits, lanes, where)
        shape = r.unpack(f"<{ndim}q", f"the shape of {where}")
        if any(d < 0 for d in shape):
            raise ParamsFormatError(f"{where}: negative dimension in shape {shape}")
        (nbytes,) = r.unpack("<q", f"the byte size of {where}")
        expect = math.prod(shape) * dtype.itemsize  # Python's ints: no wrap to 0 at 2**64
        if nbytes != expect:
            raise ParamsFormatError(f"{where}: {nbytes} data bytes, but {dtype} {shape} needs {expect}")
        raw = r.take(nbytes, f"the data of {where}")
        arr = np.frombuffer(raw, dtype=dtype.newbyteorder("<")).astype(dtype).reshape(shape)
        out[name] = arr.view(NDArray)
    if r.pos != len(r.data):
        raise ParamsFormatError(f"{len(r.data) - r.pos} unexpected bytes after the last array")
    return out
