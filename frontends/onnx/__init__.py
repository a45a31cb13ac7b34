"""ONNX import: ``from_onnx`` / ``import_onnx``, like ``tvm.relay.frontend.from_onnx``.

The package: ``importer`` (the graph walk, the converter contract ``Importer``, ``Node``,
``Value``, ``SequenceValue``, ``OptionalValue``, and the entry points), ``registry`` (the
converter table and the ``converter`` decorator), ``compose`` (compositions of Relay ops that
several families share) and one module per ONNX ``onnx/defs/<family>`` folder holding that
family's converters (``math``, ``nn``, ``tensor``, ...). docs/guide/onnx.md says where a new
converter goes.
"""

from __future__ import annotations

from typing import Any

from xrelay.frontends.onnx.importer import (
    FOLD_PARAM_LIMIT,
    Importer,
    Node,
    OnnxImport,
    OnnxImportError,
    OnnxRunTimeValueError,
    OptionalValue,
    SequenceValue,
    Value,
    from_onnx,
    import_onnx,
    load_model,
)
from xrelay.frontends.onnx.registry import converter, converters

__all__ = [
    "FOLD_PARAM_LIMIT",
    "SUPPORTED_OPS",
    "Importer",
    "Node",
    "OnnxImport",
    "OnnxImportError",
    "OnnxRunTimeValueError",
    "OptionalValue",
    "SequenceValue",
    "Value",
    "converter",
    "converters",
    "from_onnx",
    "import_onnx",
    "load_model",
]


def __getattr__(name: str) -> Any:
    # the table is complete once every family module is imported, which converters() does
    # on first use (importing this package does not fix an order among the families)
    if name == "SUPPORTED_OPS":
        return converters()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
