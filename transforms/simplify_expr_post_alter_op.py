"""``simplify-expr-post-alter-op``: Relay's SimplifyExprPostAlterOp, the subset of SimplifyExpr's
rewrites Relay runs after AlterOpLayout: identities, reshapes, casts and clips (see
``simplify_expr.py`` for each rewrite's before and after)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from xrelay.transforms.simplify_expr import (
    EliminateIdentity,
    SimplifyClip,
    SimplifyClipAndConsecutiveCast,
    SimplifyConsecutiveCast,
    SimplifyReshape,
    SimplifySameCast,
    simplify,
)

POST_ALTER_OP = (
    EliminateIdentity,
    SimplifyReshape,
    SimplifySameCast,
    SimplifyConsecutiveCast,
    SimplifyClipAndConsecutiveCast,
    SimplifyClip,
)
"""The rewrites, in Relay's order."""


@dataclass(frozen=True)
class SimplifyExprPostAlterOpPass(ModulePass):
    """Relay's SimplifyExprPostAlterOp: SimplifyExpr's identity, reshape, cast and clip rewrites."""

    name = "simplify-expr-post-alter-op"
    relay_name: ClassVar[str] = "SimplifyExprPostAlterOp"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        simplify(op, POST_ALTER_OP)
