"""``relay.annotation``: annotations that steer fusion and device placement."""

from __future__ import annotations

from xrelay.relay.op import on_device, stop_fusion

__all__ = ["on_device", "stop_fusion"]
