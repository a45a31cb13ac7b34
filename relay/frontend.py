"""``xrelay.relay.frontend``: the model importers at ``tvm.relay.frontend``'s path, so
``relay.frontend.from_onnx(model, shape)``, ``from_pytorch(script_module, input_infos)`` and
``from_tflite(model, shape_dict, dtype_dict)`` port unchanged (``xrelay.frontends`` holds them);
``from_exported_program`` takes a ``torch.export`` program."""

from __future__ import annotations

from xrelay.frontends.onnx import from_onnx
from xrelay.frontends.tflite import from_tflite
from xrelay.frontends.torch import from_exported_program, from_pytorch

__all__ = ["from_exported_program", "from_onnx", "from_pytorch", "from_tflite"]
