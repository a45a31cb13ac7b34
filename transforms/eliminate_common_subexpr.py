"""``eliminate-common-subexpr``: merge identical computations (Relay's EliminateCommonSubexpr).

Two ops are merged when they have the same name, operands, properties (Relay attributes) and
result types; this is xDSL's ``cse``, which applies because relay ops are ``Pure``. Equal
constants (same data, same name) merge too, which covers Relay's "equal scalar constants" rule.
Stateful ops (``nn.dropout``) carry no ``Pure`` trait and are never merged, as Relay skips
``TOpIsStateful`` ops. Multi-result ops (batch_norm, split) are merged as a whole, which is
what Relay's TupleGetItem rule amounts to on SSA.

``fskip`` (Relay's callback) names ops never to merge: a predicate on the op here
(``relay.transform.EliminateCommonSubexpr(fskip)`` shows it the op's Relay ``Call``
expression, as Relay does). A skipped op stays and is not a candidate for later equal ops
either, as in Relay. It is held apart during ``cse`` by a temporary attribute unique to it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

from xrelay.dialects.relay import RelayOp


@dataclass(frozen=True)
class EliminateCommonSubexprPass(ModulePass):
    """Common subexpression elimination through xDSL's ``cse``."""

    fskip: Callable[[Operation], bool] | None = None
    """Ops for which this returns true are kept as they are (Relay's ``fskip``)."""

    name = "eliminate-common-subexpr"
    relay_name: ClassVar[str] = "EliminateCommonSubexpr"
    opt_level: ClassVar[int] = 3
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        held: list[Operation] = []
        if self.fskip is not None:
            held = [o for o in op.walk() if isinstance(o, RelayOp) and o.operands and self.fskip(o)]
            for i, o in enumerate(held):
                o.attributes[_SKIP] = IntegerAttr(i, i64)
        try:
            CommonSubexpressionElimination().apply(ctx, op)
        finally:
            for o in held:
                o.attributes.pop(_SKIP, None)


_SKIP = "xrelay.cse_skip"
"""The temporary attribute, unique per skipped op, that keeps ``cse`` from merging it."""
