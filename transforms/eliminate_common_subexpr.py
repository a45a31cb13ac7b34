"""``eliminate-common-subexpr``: merge identical computations (Relay's EliminateCommonSubexpr).

Two ops are merged when they have the same name, operands, properties (Relay attributes) and
result types; this is xDSL's ``cse``, which applies because relay ops are ``Pure``. Equal
constants (same data, same name) merge too, which covers Relay's "equal scalar constants" rule.
Stateful ops (``nn.dropout``) carry no ``Pure`` trait and are never merged, as Relay skips
``TOpIsStateful`` ops. Multi-result ops (batch_norm, split) are merged as a whole, which is
what Relay's TupleGetItem rule amounts to on SSA.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination


@dataclass(frozen=True)
class EliminateCommonSubexprPass(ModulePass):
    """Common subexpression elimination through xDSL's ``cse``."""

    name = "eliminate-common-subexpr"
    relay_name: ClassVar[str] = "EliminateCommonSubexpr"
    opt_level: ClassVar[int] = 3
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        CommonSubexpressionElimination().apply(ctx, op)
