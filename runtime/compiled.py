"""What every engine's steps give the executor, whatever the engine: a ``CompiledFunction``
(the thunks of one primitive function bound to its arrays, each counted in one of the
profiler's ``FAMILIES``) and the ``KernelError`` a step raises when it cannot be compiled or
fails while running. The engines (``runtime/<name>/steps.py``'s ``bind_step``) build these;
``runtime/executor.py`` runs and profiles them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from xrelay.error import TVMError

__all__ = ["FAMILIES", "CompiledFunction", "KernelError", "Thunk"]

Thunk = Callable[[], Any]

FAMILIES = ("conv", "im2col", "matmul", "depthwise", "elementwise", "pool", "copy", "other")
"""Op families a thunk is counted in by the profiler. ``conv`` is a convolution whose chunks
each run im2col, matmul and the fused elementwise epilogue (they cannot be timed apart)."""


class KernelError(TVMError):
    """A step could not be compiled or failed while running; the message names the op."""


@dataclass
class CompiledFunction:
    """The thunks of one primitive function bound to its arrays."""

    name: str
    thunks: list[tuple[str, str, Thunk]] = field(default_factory=list)
    """``(op name, family, thunk)`` in execution order."""
    scratch_bytes: int = 0
    """Bytes of internal temporaries allocated at compile time (outside the arena: the
    workspace had no room for them)."""
    fast_ops: int = 0
    """How many ops run through a fast kernel (the rest use the reference kernels)."""
    columns: list[np.ndarray] = field(default_factory=list)
    """The scratch matrices of the function's convolutions, views of the planned workspace:
    an im2col matrix, or a Winograd convolution's transformed tiles and products."""
    winograd: list[np.ndarray] = field(default_factory=list)
    """The transformed weights (``(tile + 2)^2 x out_channels x in_channels``, packed at
    compile time) of the convolutions that run as Winograd."""
    derived: list[np.ndarray] = field(default_factory=list)
    """Other constants kernels derive at compile time from an op's attributes and shapes
    (a linear or cubic resize's interpolation matrices): held like the Winograd weights,
    made once, never per run."""

    def __call__(self) -> None:
        for _, _, t in self.thunks:
            t()
