"""``tvm.target``: ``xrelay.target.Target("llvm -mcpu=...")`` (see ``xrelay.backend.target``)."""

from xrelay.backend.target import Target, TargetError
from xrelay.dialects.relay.devices import VirtualDevice

__all__ = ["Target", "TargetError", "VirtualDevice"]
