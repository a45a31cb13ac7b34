"""Relay dtypes and their builtin MLIR element types.

Relay names dtypes with strings (``"float32"``, ``"int8"``, ``"bool"``); xrelay stores tensors as
builtin ``tensor<...>`` types (docs/design.md, decision 1): float16/32/64 -> f16/f32/f64, bfloat16 ->
bf16, intN -> iN (signless means signed, as in Relay), uintN -> uiN, bool -> i1.
"""

from __future__ import annotations

from collections.abc import Sequence

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
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

DTYPES: tuple[str, ...] = tuple(_DTYPE_TO_ELEM)
"""Every dtype xrelay knows, by its Relay name."""

_NUMPY = {
    "float16": np.float16,
    "bfloat16": ml_dtypes.bfloat16,  # numpy has no bfloat16; ml_dtypes' (what onnx uses too)
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
    try:
        return np.dtype(_NUMPY[dtype])
    except KeyError:
        raise ValueError(f"dtype '{dtype}' has no numpy equivalent") from None


def dtype_from_numpy(dt: np.dtype | type) -> str:
    dt = np.dtype(dt)
    for name, np_type in _NUMPY.items():
        if np.dtype(np_type) == dt:
            return name
    raise ValueError(f"numpy dtype {dt} has no Relay dtype")


def dtype_bits(dtype: str) -> int:
    if dtype == "bool":
        return 8  # Relay stores bool as one byte (DataType::Bool() has 1 bit but 8-bit storage)
    return int("".join(c for c in dtype if c.isdigit()))


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
    """Relay's size: prod(shape) * ceil(bits * lanes / 8); requires a static shape."""
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


def memory_bytes() -> int:
    """This machine's physical memory in bytes: no tensor larger than that can be allocated."""
    import os

    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):  # not POSIX: assume a large machine
        return 1 << 40


def too_large(what: str, nbytes: int) -> str | None:
    """The message refusing ``what`` (which needs ``nbytes``) when it cannot fit in memory, so
    callers refuse before allocating instead of dying of ``MemoryError``; None if it fits."""
    limit = memory_bytes()
    if nbytes <= limit:
        return None
    return (
        f"{what} needs {nbytes} bytes ({nbytes / 2**30:.1f} GiB), more than this machine's "
        f"memory ({limit / 2**30:.1f} GiB)"
    )
