"""The metadata section of Relay's text format: constants as TVM serialises them.

Relay prints a constant that is not a simple scalar as ``meta[relay.Constant][i]`` and appends
the table after ``#[metadata]`` as TVM's JSON object graph: a ``Map`` from ``"relay.Constant"``
to an ``Array`` of ``relay.Constant`` nodes whose ``data`` attribute indexes ``b64ndarrays``,
each a base64 NDArray in TVM's binary layout (magic, reserved word, device, ndim, dtype code /
bits / lanes, shape, byte count, little-endian data). This module writes that layout and reads
it back, so texts printed by TVM with constants also load here.

xrelay adds one top-level key TVM ignores, ``"xrelay.constant_names"``: the parameter name of
each constant (``relay.constant @fc1_weight``), or null, so named weights keep their names
through a round trip.
"""

from __future__ import annotations

import base64
import json
import math
import struct
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from xrelay.error import TVMError

__all__ = ["MetadataError", "decode_ndarray", "encode_ndarray", "read_metadata", "write_metadata"]

_MAGIC = 0xDD5E40F096B4A13F
_KIND_BY_CODE = {0: "int", 1: "uint", 2: "float", 4: "bfloat"}
_CODE_BY_KIND = {"i": 0, "u": 1, "f": 2, "b": 1}
_NDARRAY_DTYPES = {f"{k}{b}" for k in ("int", "uint") for b in (8, 16, 32, 64)} | {
    "float16", "float32", "float64"
}  # the float8 / int4 types postdate TVM 0.19's NDArray codes


class MetadataError(ValueError, TVMError):
    """A metadata section that cannot be read (bad JSON, bad array, unknown node)."""


def encode_ndarray(arr: np.ndarray, dtype: str) -> str:
    """``arr`` in TVM's NDArray binary layout, base64 encoded; ``dtype`` is its Relay dtype."""
    arr = np.asarray(arr, order="C")  # (ascontiguousarray would make a scalar 1-d)
    if dtype == "bool":
        code, bits = 1, 1
        data = arr.astype(np.uint8).tobytes()
    elif dtype == "bfloat16":
        code, bits = 4, 16
        data = arr.astype("<u2").tobytes()
    elif arr.dtype.kind not in _CODE_BY_KIND or dtype not in _NDARRAY_DTYPES:
        raise MetadataError(f"TVM's NDArray layout has no type code for {dtype}")
    else:
        code, bits = _CODE_BY_KIND[arr.dtype.kind], arr.dtype.itemsize * 8
        data = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
    head = struct.pack("<QQiii", _MAGIC, 0, 1, 0, arr.ndim) + struct.pack("<BBH", code, bits, 1)
    head += struct.pack(f"<{arr.ndim}q", *arr.shape) + struct.pack("<q", len(data))
    return base64.b64encode(head + data).decode("ascii")


def decode_ndarray(text: str) -> tuple[np.ndarray, str]:
    """The array and its Relay dtype from a base64 NDArray of TVM's binary layout."""
    try:
        raw = base64.b64decode(text, validate=True)
        magic, _reserved, _dev_type, _dev_id, ndim = struct.unpack_from("<QQiii", raw, 0)
        if magic != _MAGIC:
            raise MetadataError("not an NDArray (bad magic number)")
        if not 0 <= ndim <= 32:
            raise MetadataError(f"NDArray with {ndim} dimensions")
        code, bits, lanes = struct.unpack_from("<BBH", raw, 28)
        shape = struct.unpack_from(f"<{ndim}q", raw, 32)
        (nbytes,) = struct.unpack_from("<q", raw, 32 + 8 * ndim)
        data = raw[40 + 8 * ndim :]
    except (struct.error, ValueError) as e:
        raise MetadataError(f"bad NDArray in the metadata: {e}") from None
    if lanes != 1 or code not in _KIND_BY_CODE:
        raise MetadataError(f"unsupported NDArray dtype (code {code}, {bits} bits, {lanes} lanes)")
    if code == 1 and bits == 1:
        dtype, np_dtype = "bool", np.dtype(np.uint8)
    elif code == 4:
        dtype, np_dtype = "bfloat16", np.dtype("<u2")
    else:
        dtype = f"{_KIND_BY_CODE[code]}{bits}"
        try:
            np_dtype = np.dtype(f"<{'iuf'[code]}{bits // 8}")
        except TypeError:
            raise MetadataError(f"unsupported NDArray dtype {dtype}") from None
    count = math.prod(shape)  # Python's ints: [2**32, 2**32] does not wrap to 0
    if any(d < 0 for d in shape) or nbytes != count * np_dtype.itemsize or len(data) != nbytes:
        raise MetadataError(
            f"NDArray of shape {tuple(shape)} and dtype {dtype} holds {len(data)} bytes "
            f"(header says {nbytes})"
        )
    arr = np.frombuffer(data, dtype=np_dtype).reshape(shape)
    if dtype == "bool":
        arr = arr.astype(np.bool_)
    return arr.astype(arr.dtype.newbyteorder("=")), dtype


def write_metadata(constants: Sequence[tuple[np.ndarray, str, str | None]]) -> str:
    """The JSON of a metadata section holding ``constants`` (array, dtype, name)."""
    nodes: list[dict[str, Any]] = [
        {"type_key": ""},
        {"type_key": "Map", "keys": ["relay.Constant"], "data": [2]},
        {"type_key": "Array", "data": list(range(3, 3 + len(constants)))},
    ]
    arrays = []
    for i, (arr, dtype, _name) in enumerate(constants):
        nodes.append(
            {"type_key": "relay.Constant", "attrs": {"_checked_type_": "0", "data": str(i), "span": "0"}}
        )
        arrays.append(encode_ndarray(arr, dtype))
    doc = {
        "root": 1,
        "nodes": nodes,
        "b64ndarrays": arrays,
        "attrs": {"tvm_version": "0.19.0"},
        "xrelay.constant_names": [name for _, _, name in constants],
    }
    return json.dumps(doc, indent=1)


_JSON_KINDS = ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"),
               (list, "a list"), (Mapping, "an object"))  # fmt: skip


def _expect(value: Any, kind: type, what: str) -> Any:
    """``value`` if it is a ``kind`` (list, Mapping or str), else a ``MetadataError``."""
    if not isinstance(value, kind):
        wanted = dict(_JSON_KINDS)[kind]
        found = next((name for t, name in _JSON_KINDS if isinstance(value, t)), "null")
        raise MetadataError(f"{what} is {found}, expected {wanted}")
    return value


def read_metadata(text: str) -> dict[str, list[Any]]:
    """The meta table of a metadata section: kind -> list of entries.

    ``relay.Constant`` entries are ``(array, dtype, name)``; other kinds (attribute objects TVM
    also stores there) are kept as their JSON node and refused when referenced. Any value of
    the wrong JSON type (an object where a list belongs, a number where a string does) is a
    ``MetadataError`` naming it.
    """
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise MetadataError(f"the metadata section is not JSON: {e}") from None
    except RecursionError:  # json's decoder recurses per nesting level
        raise MetadataError("the metadata section's JSON is nested too deeply") from None
    if not isinstance(doc, Mapping) or "nodes" not in doc or "root" not in doc:
        raise MetadataError("the metadata section has no 'root' and 'nodes'")
    nodes = _expect(doc["nodes"], list, "the metadata's 'nodes'")
    arrays = _expect(doc.get("b64ndarrays", []), list, "the metadata's 'b64ndarrays'")
    names = _expect(doc.get("xrelay.constant_names") or [], list, "the metadata's 'xrelay.constant_names'")

    def node(i: Any) -> Mapping[str, Any]:
        if isinstance(i, str) and i.isdigit():
            i = int(i)
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(nodes):
            raise MetadataError(f"the metadata refers to node {i!r}, which does not exist")
        return _expect(nodes[i], Mapping, f"metadata node {i}")

    root = node(doc["root"])
    if root.get("type_key") != "Map":
        raise MetadataError("the metadata root is not a Map")
    keys = _expect(root.get("keys", []), list, "the metadata Map's 'keys'")
    data = _expect(root.get("data", []), list, "the metadata Map's 'data'")
    if len(keys) != len(data):
        raise MetadataError("the metadata Map has different numbers of keys and values")
    table: dict[str, list[Any]] = {}
    for key, ref in zip(keys, data):
        _expect(key, str, "a metadata Map key")
        arr_node = node(ref)
        if arr_node.get("type_key") != "Array":
            raise MetadataError(f"metadata entry {key!r} is not an Array")
        entries: list[Any] = []
        for k, item in enumerate(_expect(arr_node.get("data", []), list, f"the data of metadata entry {key!r}")):
            n = node(item)
            if key == "relay.Constant":
                if n.get("type_key") != "relay.Constant":
                    raise MetadataError(f"meta[relay.Constant][{k}] is a {n.get('type_key')}")
                attrs = _expect(n.get("attrs"), Mapping, f"the attrs of meta[relay.Constant][{k}]")
                index = attrs.get("data")
                if isinstance(index, str) and index.isdigit():
                    index = int(index)
                if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(arrays):
                    raise MetadataError(f"meta[relay.Constant][{k}] has no array")
                blob = _expect(arrays[index], str, f"b64ndarrays[{index}]")
                arr, dtype = decode_ndarray(blob)
                name = names[k] if k < len(names) and isinstance(names[k], str) else None
                entries.append((arr, dtype, name))
            else:
                entries.append(n)
        table[key] = entries
    return table
