"""``tvm.target``: ``xrelay.target.Target("llvm -mcpu=...")`` (see ``xrelay.backend.target``)."""

from xrelay.backend.target import Target, TargetError

__all__ = ["Target", "TargetError"]
