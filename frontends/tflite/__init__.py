"""TFLite importer: flatbuffers (``.tflite``) to the relay dialect, float and quantized
(``from_tflite``, Relay's signature). The ``tflite`` package is imported when a model is
imported, not with this package."""

from xrelay.frontends.tflite.importer import CONVERTERS, TFLiteImport, TFLiteImportError
from xrelay.frontends.tflite.model import from_tflite, import_tflite, load_model

__all__ = ["CONVERTERS", "TFLiteImport", "TFLiteImportError", "from_tflite", "import_tflite", "load_model"]
