"""Model importers: ONNX to the relay dialect (``from_onnx``; the package ``frontends.onnx``)."""

from __future__ import annotations

from typing import Any

from xrelay.frontends.onnx import (
    OnnxImport,
    OnnxImportError,
    from_onnx,
    import_onnx,
)
from xrelay.frontends.onnx.registry import converters

__all__ = ["SUPPORTED_OPS", "OnnxImport", "OnnxImportError", "from_onnx", "import_onnx"]


def __getattr__(name: str) -> Any:
    if name == "SUPPORTED_OPS":  # ONNX operator type -> converter, every family imported
        return converters()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
