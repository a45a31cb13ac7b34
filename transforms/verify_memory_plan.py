"""``verify-memory-plan``: check a planned memory-dialect module independently of its planner.

The problem is recomputed from the IR (``liveness``: sizes, alignments, lifetimes, pool
constraints), the plan is read back from the IR (``pool``/``offset`` of every storage, ``size``
of every ``memory.pool``), and ``planners.verify_plan`` checks that every arena storage is
placed in a pool it may use, aligned, within the pool's capacity and planned size, and that no
two storages live at a common step share a byte. The pass also checks that each storage's
printed ``lifetime`` is the one liveness computes, and that external storage is not placed.
It changes nothing; on failure it reports the first violation.

```mlir
memory.pool @global {alignment = 16, size = 1024}
%a = memory.alloc_storage {size = 1024, ..., lifetime = [0, 1], pool = "global", offset = 0}
%b = memory.alloc_storage {size = 1024, ..., lifetime = [1, 2], pool = "global", offset = 0}
// error: buffers 'a' (steps 0..1, bytes [0, 1024)) and 'b' (steps 1..2, ...) ... overlap
```
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from xrelay.runtime.liveness import VerifyMemoryPlanError, verify_memory_plan

__all__ = ["VerifyMemoryPlanError", "VerifyMemoryPlanPass", "verify_memory_plan"]


@dataclass(frozen=True)
class VerifyMemoryPlanPass(ModulePass):
    """Check the memory plan written in the module (see the module docstring)."""

    name = "verify-memory-plan"
    relay_name: ClassVar[str] = "VerifyMemoryPlan"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        verify_memory_plan(op)
