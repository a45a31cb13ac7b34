"""Model importers: ONNX to the relay dialect (``from_onnx``)."""

from xrelay.frontends.onnx import (
    SUPPORTED_OPS,
    OnnxImport,
    OnnxImportError,
    from_onnx,
    import_onnx,
)

__all__ = ["SUPPORTED_OPS", "OnnxImport", "OnnxImportError", "from_onnx", "import_onnx"]
