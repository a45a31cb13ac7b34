"""The native engine at compile time: the scratch its kernels need (``scratch``). What runs
its steps is ``xrelay.runtime.native``."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from xrelay.backend.native.scratch import state_int8_scratch, state_native_scratch
from xrelay.runtime.native.fast_int8 import vnni_library

__all__ = ["state_scratch"]


def state_scratch(module: ModuleOp, threads: int | None = None) -> None:
    """The float kernels' scratch and Winograd choices, then the int8 convolution kernels'
    scratch (their planned workspace) when they compile."""
    state_native_scratch(module)
    if vnni_library() is not None:
        state_int8_scratch(module)
