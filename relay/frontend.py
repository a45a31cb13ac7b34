"""``xrelay.relay.frontend``: the model importers at ``tvm.relay.frontend``'s path, so
``relay.frontend.from_onnx(model, shape)`` ports unchanged (``xrelay.frontends`` holds them)."""

from __future__ import annotations

from xrelay.frontends.onnx import from_onnx

__all__ = ["from_onnx"]
