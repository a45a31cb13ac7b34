"""An xDSL-style pass: a rewrite pattern and the ModulePass that applies it.

relay-opt model.mlir --load-pass-plugin docs/examples/negate_pass.py -p fold-double-negation
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from xrelay.dialects.relay import RELAY_OPS

NegativeOp = RELAY_OPS["negative"]


class FoldDoubleNegation(RewritePattern):
    """``negative(negative(x))`` -> ``x``.

    ```mlir
    %a = relay.negative %x : (tensor<4xf32>) -> tensor<4xf32>
    %b = relay.negative %a : (tensor<4xf32>) -> tensor<4xf32>
    // becomes: uses of %b use %x
    ```
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: NegativeOp, rewriter: PatternRewriter) -> None:
        inner = op.operands[0].owner
        if isinstance(inner, NegativeOp):
            rewriter.replace(op, [], [inner.operands[0]])


@dataclass(frozen=True)
class FoldDoubleNegationPass(ModulePass):
    name = "fold-double-negation"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FoldDoubleNegation()).rewrite_module(op)
