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
from xdsl.utils.exceptions import DiagnosticException

from xrelay.error import TVMError
from xrelay.transforms.liveness import LivenessError, storage_buffers
from xrelay.transforms.plan_memory import read_plan
from xrelay.transforms.planners import PlanError, verify_plan


class VerifyMemoryPlanError(DiagnosticException, TVMError):
    """The plan in the module is invalid."""


def verify_memory_plan(module: ModuleOp, entry: str = "main") -> None:
    """Raise ``VerifyMemoryPlanError`` naming the first problem of the module's plan."""
    try:
        for op, b in storage_buffers(module, entry):
            written = op.lifetime_range
            if written is not None and written != (b.start, b.end):
                raise PlanError(
                    f"storage '{b.name}' says lifetime [{written[0]}, {written[1]}] but "
                    f"liveness gives [{b.start}, {b.end}]"
                )
        buffers, pools, plan = read_plan(module, entry)
        verify_plan(buffers, pools, plan)
    except (PlanError, LivenessError) as e:
        raise VerifyMemoryPlanError(f"verify-memory-plan: {e}") from None


@dataclass(frozen=True)
class VerifyMemoryPlanPass(ModulePass):
    """Check the memory plan written in the module (see the module docstring)."""

    name = "verify-memory-plan"
    relay_name: ClassVar[str] = "VerifyMemoryPlan"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        verify_memory_plan(op)
