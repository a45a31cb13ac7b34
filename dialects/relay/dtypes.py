"""Relay dtypes and their builtin MLIR element types.

Relay names dtypes with strings (``"float32"``, ``"int8"``, ``"bool"``); xrelay stores tensors as
builtin ``tensor<...>`` types (docs/design.md, decision 1): float16/32/64 -> f16/f32/f64, bfloat16 ->
bf16, intN -> iN (signless means signed, as in Relay), uintN -> uiN, bool -> i1.

The narrow types (TVM's names, which are also ml_dtypes'): float8_e4m3fn -> f8E4M3FN,
float8_e5m2 -> f8E5M2, float8_e4m3fnuz -> f8E4M3FNUZ, float8_e5m2fnuz -> f8E5M2FNUZ,
float8_e8m0fnu -> f8E8M0FNU, float4_e2m1fn -> f4E2M1FN, int4/int2 -> i4/i2, uint4/uint2 ->
ui4/ui2. numpy has none of them: their arrays are ml_dtypes', one byte per element (also the
sub-byte ones: ``byte_size`` is Relay's ``ceil(bits / 8)`` per element, the planned arena holds
them unpacked), and kernels compute them in float32 / int8 (``NARROW_COMPUTE``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
    bf16,
    f16,
    f32,
    f64,
)
from xdsl.ir import Attribute

_DTYPE_TO_ELEM: dict[str, Attribute] = {
    "float16": f16,
    "float32": f32,
    "float64": f64,
    "bfloat16": bf16,
    "bool": IntegerType(1),
}
for _bits in (8, 16, 32, 64):
    _DTYPE_TO_ELEM[f"int{_bits}"] = IntegerType(_bits)
    _DTYPE_TO_ELEM[f"uint{_bits}"] = IntegerType(_bits, Signedness.UNSIGNED)
_NARROW_FLOATS: dict[str, Attribute] = {
    "float8_e4m3fn": Float8E4M3FNType(),
    "float8_e5m2": Float8E5M2Type(),
    "float8_e4m3fnuz": Float8E4M3FNUZType(),
    "float8_e5m2fnuz": Float8E5M2FNUZType(),
    "float8_e8m0fnu": Float8E8M0FNUType(),
    "float4_e2m1fn": Float4E2M1FNType(),
}
_DTYPE_TO_ELEM.update(_NARROW_FLOATS)
for _bits in (2, 4):
    _DTYPE_TO_ELEM[f"int{_bits}"] = IntegerType(_bits)
    _DTYPE_TO_ELEM[f"uint{_bits}"] = IntegerType(_bits, Signedness.UNSIGNED)
_ELEM_TO_DTYPE: dict[Attribute, str] = {elem: name for name, elem in _DTYPE_TO_ELEM.items()}

DTYPES: tuple[str, ...] = tuple(_DTYPE_TO_ELEM)
"""Every dtype xrelay knows, by its Relay name."""

_NUMPY = {
    "float16": np.float16,
    "float32": np.float32,
    "float64": np.float64,
    "bool": np.bool_,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
}
_ML_DTYPES = ("bfloat16", *_NARROW_FLOATS, "int4", "uint4", "int2", "uint2")
"""The dtypes whose numpy type is ml_dtypes' (numpy has no bfloat16, float8, int4, ...; onnx
uses ml_dtypes' too). ml_dtypes is imported on the first use of one of them: it costs a
deployed float or int8 process 2.5 MB of resident memory for nothing."""


def _ml_dtype(name: str) -> type:
    import ml_dtypes

    return getattr(ml_dtypes, name)


NARROW_COMPUTE: dict[str, str] = {
    "bfloat16": "float32",
    **{name: "float32" for name in _NARROW_FLOATS},
    "int4": "int8",
    "int2": "int8",
    "uint4": "uint8",
    "uint2": "uint8",
}
"""The dtypes numpy cannot compute in (ml_dtypes' arrays) and the dtype kernels compute them in:
every value converts exactly, results round back (to nearest even, as ONNX and ml_dtypes do;
integers wrap)."""

_BITS = {"bfloat16": 16, "float4_e2m1fn": 4}


def element_type(dtype: str) -> Attribute:
    """The builtin element type of a Relay dtype string."""
    try:
        return _DTYPE_TO_ELEM[dtype]
    except KeyError:
        raise ValueError(f"unknown dtype '{dtype}'; known: {', '.join(DTYPES)}") from None


def dtype_of(elem: Attribute) -> str:
    """The Relay dtype string of a builtin element type (or of a tensor type)."""
    if isinstance(elem, TensorType):
        elem = elem.element_type
    known = _ELEM_TO_DTYPE.get(elem)
    if known is not None:
        return known
    if isinstance(elem, Float32Type):
        return "float32"
    if isinstance(elem, Float16Type):
        return "float16"
    if isinstance(elem, Float64Type):
        return "float64"
    if isinstance(elem, BFloat16Type):
        return "bfloat16"
    if isinstance(elem, IntegerType):
        width = elem.width.data
        if width == 1:
            return "bool"
        if elem.signedness.data == Signedness.UNSIGNED:
            return f"uint{width}"
        return f"int{width}"
    raise ValueError(f"type {elem} has no Relay dtype")


def numpy_dtype(dtype: str | Attribute) -> np.dtype:
    """The numpy dtype of a Relay dtype string or builtin element/tensor type."""
    if not isinstance(dtype, str):
        dtype = dtype_of(dtype)
    if dtype in _NUMPY:
        return np.dtype(_NUMPY[dtype])
    if dtype in _ML_DTYPES:
        return np.dtype(_ml_dtype(dtype))
    raise ValueError(f"dtype '{dtype}' has no numpy equivalent")


def from_stored(array: np.ndarray, dtype: str | Attribute) -> np.ndarray:
    """``array`` viewed as ``dtype`` when it holds that narrow dtype's raw bytes.

    ``.npy``/``.npz`` files cannot name ml_dtypes' types: ``np.save`` writes a bfloat16 /
    float8 / int4 array as raw void (``V2``/``V1``) elements, and ``np.load`` gives those back.
    Loaders of typed values (params, inputs) read such bytes as the type they expect; any other
    array is returned as is (and checked by the caller).
    """
    want = numpy_dtype(dtype)
    if (
        isinstance(array, np.ndarray)
        and array.dtype != want
        and array.dtype.kind == "V"
        and array.dtype.fields is None
        and array.dtype.itemsize == want.itemsize
        and dtype_from_numpy(want) in NARROW_COMPUTE
    ):
        return array.view(want)
    return array


def dtype_from_numpy(dt: np.dtype | type) -> str:
    dt = np.dtype(dt)
    for name, np_type in _NUMPY.items():
        if np.dtype(np_type) == dt:
            return name
    if "ml_dtypes" in sys.modules:  # an ml_dtypes dtype exists only once ml_dtypes is imported
        for name in _ML_DTYPES:
            if np.dtype(_ml_dtype(name)) == dt:
                return name
    raise ValueError(f"numpy dtype {dt} has no Relay dtype")


def dtype_bits(dtype: str) -> int:
    """The bits of one element (``float8_e4m3fn``: 8, ``int4``: 4; ``bool``: 8, its storage)."""
    if dtype == "bool":
        return 8  # Relay stores bool as one byte (DataType::Bool() has 1 bit but 8-bit storage)
    if dtype in _BITS:
        return _BITS[dtype]
    if dtype.startswith("float8_"):
        return 8
    return int(re.match(r"[a-z]+(\d+)", dtype).group(1))


Shape = tuple[int | None, ...]
"""A shape with ``None`` for a dynamic dimension (Relay's ``Any``)."""


def shape_of(t: Attribute) -> Shape:
    """The shape of a tensor type, ``None`` for dynamic dims."""
    if not isinstance(t, TensorType):
        raise TypeError(f"expected a tensor type, got {t}")
    return tuple(None if d == DYNAMIC_INDEX else d for d in t.get_shape())


def tensor_type(shape: Sequence[int | None], dtype: str | Attribute) -> TensorType:
    elem = element_type(dtype) if isinstance(dtype, str) else dtype
    return TensorType(elem, [DYNAMIC_INDEX if d is None else int(d) for d in shape])


def is_static(t: Attribute) -> bool:
    return isinstance(t, TensorType) and t.has_static_shape()


def byte_size(t: TensorType) -> int:
    """Relay's size: prod(shape) * ceil(bits * lanes / 8); requires a static shape.

    So an int4/int2/float4 element takes one byte, as its ml_dtypes array does."""
    if not t.has_static_shape():
        raise ValueError(f"{t} has a dynamic shape")
    n = 1
    for d in t.get_shape():
        n *= d
    dtype = dtype_of(t.element_type)
    bits = 1 if dtype == "bool" else dtype_bits(dtype)
    return n * ((bits + 7) // 8)


def format_type(t: Attribute) -> str:
    """A short human form of a type for error messages: ``tensor<1x3x224x224xf32>``."""
    return str(t)


MAX_RANK = 64
"""The most dimensions a tensor can have: numpy's limit, which every kernel runs on."""


MEMORY_LIMIT_ENV = "XRELAY_MEMORY_LIMIT"
"""An environment variable: the most bytes one tensor, constant or arena may take (an integer,
optionally with a K, M or G suffix for KiB, MiB, GiB); unset, the machine's physical memory."""


def memory_bytes() -> int:
    """This machine's physical memory in bytes: no tensor larger than that can be allocated."""
    import os

    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):  # not POSIX: assume a large machine
        return 1 << 40


def memory_limit() -> tuple[int, str]:
    """The byte limit ``too_large`` applies, and what it is (for the message)."""
    import os

    text = os.environ.get(MEMORY_LIMIT_ENV, "").strip()
    if not text:
        return memory_bytes(), "this machine's memory"
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1].upper(), 1)
    digits = text[:-1] if scale > 1 else text
    if not digits.isdigit():
        raise ValueError(f"{MEMORY_LIMIT_ENV} must be a number of bytes (e.g. 512M), got '{text}'")
    return int(digits) * scale, MEMORY_LIMIT_ENV


def format_bytes(n: int) -> str:
    """A byte count in the unit that fits it: ``3136 bytes``, ``1.0 KiB``, ``2.3 GiB``."""
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def too_large(what: str, nbytes: int, rank: int = 0) -> str | None:
    """The message refusing ``what`` (which needs ``nbytes``) when it cannot fit in memory (or
    exceeds ``XRELAY_MEMORY_LIMIT``), so callers refuse before allocating instead of dying of
    ``MemoryError``; None if it fits. A ``rank`` above ``MAX_RANK`` cannot be allocated either
    (numpy's limit)."""
    if rank > MAX_RANK:
        return f"{what} has {rank} dimensions, more than the {MAX_RANK} a tensor can have"
    limit, source = memory_limit()
    if nbytes <= limit:
        return None
    size = f"{nbytes} bytes" + (f" ({format_bytes(nbytes)})" if nbytes >= 1 << 10 else "")
    return f"{what} needs {size}, more than {source} ({format_bytes(limit)})"
