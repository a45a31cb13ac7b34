"""``canonicalize-ops``: rewrite ops into simpler ones (Relay's CanonicalizeOps).

The one rule, as in Relay: ``nn.bias_add`` becomes a broadcasting ``add``, with the bias given
trailing unit axes so that it lines up with ``axis``. No ``expand_dims`` when the axis is last.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from xrelay.dialects.relay import RELAY_OPS
from xrelay.transforms._relay_rewrite import OpBuilder, rank_of

BiasAddOp = RELAY_OPS["nn.bias_add"]


class BiasAddToAdd(RewritePattern):
    """``bias_add(x, b, axis)`` -> ``add(x, expand_dims(b, axis=1, num_newaxis=ndim-axis-1))``.

    ```mlir
    %y = relay.nn.bias_add %x, %b : (tensor<1x4x8x8xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
    // becomes
    %e = relay.expand_dims %b {axis = 1, num_newaxis = 2} : (tensor<4xf32>) -> tensor<4x1x1xf32>
    %y = relay.add %x, %e : (tensor<1x4x8x8xf32>, tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32>
    ```
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BiasAddOp, rewriter: PatternRewriter) -> None:  # type: ignore[valid-type]
        x, bias = op.operands
        ndim = rank_of(x)
        axis = op.attrs["axis"]
        axis = axis + ndim if axis < 0 else axis
        b = OpBuilder(rewriter, op)
        pad = ndim - axis - 1
        if pad > 0:
            bias = b("expand_dims", [bias], axis=1, num_newaxis=pad)
        rewriter.replace(op, [], [b("add", [x, bias])])


@dataclass(frozen=True)
class CanonicalizeOpsPass(ModulePass):
    """Rewrite ``nn.bias_add`` into ``expand_dims`` + ``add``."""

    name = "canonicalize-ops"
    relay_name: ClassVar[str] = "CanonicalizeOps"
    opt_level: ClassVar[int] = 3
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([BiasAddToAdd()], dce_enabled=False),
            apply_recursively=False,
        ).rewrite_module(op)
