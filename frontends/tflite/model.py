"""The entry points of the TFLite importer: ``from_tflite`` (Relay's signature),
``import_tflite`` and ``load_model``; see ``xrelay.frontends.tflite.importer`` for what an
import gives."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from xrelay.frontends.tflite import ops, upsampling  # noqa: F401 - the converters register themselves
from xrelay.frontends.tflite.importer import Importer, TFLiteImport, TFLiteImportError

# ============================================================================================
# Entry points
# ============================================================================================


def load_model(model: Any) -> Any:
    """A ``tflite.Model`` from a model, bytes or a path, with one clear error for bad files."""
    import tflite

    if isinstance(model, tflite.Model):
        return model
    if isinstance(model, str | os.PathLike):
        path = os.fspath(model)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise TFLiteImportError(f"cannot read {path}: {e.strerror}") from None
        where = path
    elif isinstance(model, bytes | bytearray | memoryview):
        data, where = bytes(model), "the model bytes"
    else:
        raise TFLiteImportError(f"expected a tflite.Model, bytes or a path, got {type(model).__name__}")
    # a flatbuffer starts with the root table's offset, then the file identifier "TFL3"
    if len(data) < 8 or data[4:8] != b"TFL3":
        raise TFLiteImportError(f"{where} is not a TFLite flatbuffer (no 'TFL3' identifier)")
    try:
        m = tflite.Model.GetRootAsModel(data, 0)
        m.SubgraphsLength(), m.BuffersLength(), m.OperatorCodesLength()
    except Exception as e:
        raise TFLiteImportError(f"{where} is not a readable TFLite flatbuffer: {e}") from None
    return m


def import_tflite(
    model: Any, shape_dict: Mapping | None = None, dtype_dict: Mapping | None = None, freeze_params: bool = False
) -> TFLiteImport:
    m = load_model(model)
    try:
        return Importer(m, shape_dict, dtype_dict, freeze_params).run()
    except TFLiteImportError:
        raise
    except (IndexError, ValueError, TypeError, AttributeError, UnicodeDecodeError) as e:
        # flatbuffers reads offsets without checking them: a corrupt file fails here
        raise TFLiteImportError(f"the model is corrupt or not supported: {type(e).__name__}: {e}") from None


def from_tflite(
    model: Any, shape_dict: Mapping | None = None, dtype_dict: Mapping | None = None, freeze_params: bool = False
) -> tuple[Any, dict[str, np.ndarray]]:
    """Convert a TFLite model to Relay: ``(mod, params)`` (see the module docstring).

    ``shape_dict``/``dtype_dict`` map input tensor names to shapes/dtypes overriding the
    model's. Raises ``TFLiteImportError`` (a ``ValueError``).
    """
    from xrelay.relay import IRModule

    result = import_tflite(model, shape_dict, dtype_dict, freeze_params)
    return IRModule.from_module_op(result.module), result.params
