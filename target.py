"""``tvm.target``: ``xrelay.target.Target("llvm -mcpu=...")`` (see ``xrelay.runtime.target``)."""

from xrelay.runtime.target import Target, TargetError

__all__ = ["Target", "TargetError"]
