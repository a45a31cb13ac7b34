"""Relay function attributes as ``func.func`` discardable attributes, and back.

Relay's keys named in the dialect's ``FUNC_ATTRS`` take their IR names (``Primitive`` ->
``relay.primitive = 1 : i64``); any other key gets a ``relay.`` prefix. Values are integers,
floats, strings and lists of them (a bool becomes an integer, as in Relay).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, FloatAttr, IntegerAttr, StringAttr, f64, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute

from xrelay.dialects.relay import FUNC_ATTRS

__all__ = ["func_attrs_from_ir", "func_attrs_to_ir"]

_ATTR_TO_IR = dict(FUNC_ATTRS)
_IR_TO_ATTR = {v: k for k, v in FUNC_ATTRS.items()}


def _attr_value_to_ir(key: str, v: Any) -> Attribute:
    if isinstance(v, bool):
        return IntegerAttr(int(v), i64)
    if isinstance(v, int | np.integer):
        return IntegerAttr(int(v), i64)
    if isinstance(v, float):
        return FloatAttr(v, f64)
    if isinstance(v, str):
        return StringAttr(v)
    if isinstance(v, list | tuple):
        return ArrayAttr([_attr_value_to_ir(key, x) for x in v])
    if isinstance(v, Attribute):
        return v
    raise TypeError(f"function attribute {key}={v!r}: unsupported value type {type(v).__name__}")


def _attr_value_from_ir(a: Attribute) -> Any:
    if isinstance(a, IntegerAttr):
        return a.value.data
    if isinstance(a, FloatAttr):
        return a.value.data
    if isinstance(a, StringAttr):
        return a.data
    if isinstance(a, ArrayAttr):
        return [_attr_value_from_ir(x) for x in a.data]
    return a


def func_attrs_to_ir(attrs: Mapping[str, Any]) -> dict[str, Attribute]:
    """Relay function attributes as ``func.func`` discardable attributes."""
    return {
        _ATTR_TO_IR.get(k, "relay." + k): _attr_value_to_ir(k, v) for k, v in attrs.items()
    }


def func_attrs_from_ir(fop: FuncOp) -> dict[str, Any]:
    """The Relay function attributes of ``fop`` (its ``relay.`` discardable attributes)."""
    out: dict[str, Any] = {}
    for k, v in fop.attributes.items():
        if k in _IR_TO_ATTR:
            out[_IR_TO_ATTR[k]] = _attr_value_from_ir(v)
        elif k.startswith("relay."):
            out[k[len("relay.") :]] = _attr_value_from_ir(v)
    return out
