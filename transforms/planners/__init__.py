"""
Static memory planners: assign every buffer of a schedule a pool and an offset.

Public API: the data model (``Buffer``, ``Pool``, ``Plan``, ``PlanError``), ``plan_memory``
with the algorithms named in ``ALGORITHMS``, the bounds ``lower_bound`` and ``peak``, the
independent checker ``verify_plan``, and ``format_report``/``plot_plan`` for humans (plus
ExecuTorch's reporting forms ``memory_planning_info``, ``print_memory_planning_info`` and
``peak_memory_usages_per_memory``).
"""

from xrelay.runtime.memory_plan import (
    Buffer,
    Plan,
    PlanError,
    Pool,
    lower_bound,
    peak,
    verify_plan,
)
from xrelay.runtime.plan_report import (
    format_report,
    memory_planning_info,
    peak_memory_usages_per_memory,
    plot_plan,
    print_memory_planning_info,
)
from xrelay.transforms.planners.plan import ALGORITHMS, plan_memory

__all__ = [
    "ALGORITHMS",
    "Buffer",
    "Plan",
    "PlanError",
    "Pool",
    "format_report",
    "lower_bound",
    "memory_planning_info",
    "peak",
    "peak_memory_usages_per_memory",
    "plan_memory",
    "plot_plan",
    "print_memory_planning_info",
    "verify_plan",
]
