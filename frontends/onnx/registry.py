"""The ONNX converter table: each ONNX operator type maps to the one converter that imports it,
for all its opset versions and input ranks.

A family module (one per ``onnx/defs/<family>`` folder of the ONNX repository: ``math``,
``nn``, ``tensor``, ...) registers its converters with the ``converter`` decorator; a second
registration of an operator raises, so no module replaces or wraps another's converter and
the table does not depend on the order the modules are imported in. ``converters()`` imports
the modules listed in ``FAMILIES`` (the registry boundary: the only imports of the family
modules) and returns the table, read-only. Where a new converter goes: docs/guide/onnx.md.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xrelay.frontends.onnx.importer import Importer, Node

Converter = Callable[["Importer", "Node"], list[Any]]
"""``converter(im, node) -> outputs``: the node's outputs (``Value``, ``SequenceValue`` or
``OptionalValue``) in order; fewer than the node has when its trailing outputs are unused."""

FAMILIES = (
    "controlflow",
    "generator",
    "logical",
    "math",
    "nn",
    "object_detection",
    "optional",
    "quantization",
    "reduction",
    "rnn",
    "sequence",
    "tensor",
    "text",
    "training",
)
"""The family modules of this package, named after ONNX's ``onnx/defs/<family>`` folders."""

_TABLE: dict[str, Converter] = {}
_STRUCTURED: set[str] = set()


class DuplicateConverterError(ValueError):
    """A second converter registered for an ONNX operator."""


def converter(*op_types: str, structured: bool = False) -> Callable[[Converter], Converter]:
    """Register the decorated function as the converter of ``op_types``: ONNX operator types
    of the default domain (``"Relu"``), or of another domain prefixed with it
    (``"ai.onnx.preview.training.Adam"``). ``structured``: it takes sequences and optionals as inputs (other
    converters are refused those before they run)."""

    def register(fn: Converter) -> Converter:
        for op_type in op_types:  # all refused before any is registered
            have = _TABLE.get(op_type)
            if have is not None:
                raise DuplicateConverterError(
                    f"ONNX operator {op_type} already has a converter "
                    f"({have.__module__}.{have.__qualname__}); {fn.__module__}.{fn.__qualname__} "
                    "would replace it: extend that one converter instead"
                )
        if len(set(op_types)) != len(op_types):
            raise DuplicateConverterError(f"an operator is named twice in {op_types}")
        for op_type in op_types:
            _TABLE[op_type] = fn
        if structured:
            _STRUCTURED.update(op_types)
        return fn

    return register


def converters() -> Mapping[str, Converter]:
    """Every converter: ONNX operator type -> function (each family module imported first)."""
    for family in FAMILIES:
        importlib.import_module(f"{__package__}.{family}")
    return MappingProxyType(_TABLE)


def structured_ops() -> frozenset[str]:
    """The operators whose converters take sequences and optionals as inputs."""
    converters()
    return frozenset(_STRUCTURED)
