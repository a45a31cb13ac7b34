"""``canonicalize-ops``: rewrite ops into simpler ones (Relay's CanonicalizeOps).

Relay's rule: ``nn.bias_add`` becomes a broadcasting ``add``, with the bias given trailing
unit axes so that it lines up with ``axis``. No ``expand_dims`` when the axis is last.

And a two-operand ``einsum`` that is a batched matrix product (every letter of the output in
an operand; letters in both operands and the output are batch axes of equal sizes, letters in
both operands only are summed, letters in one operand only are its free axes) becomes
``transpose``/``reshape`` views around one ``nn.batch_matmul``, which the matmul kernels run
(``torch.einsum`` as exported: MaxViT's attention, ``"bghid,bghjd->bghij"``); the reference
``einsum`` kernel computes with temporaries outside the planned arena.
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

from xrelay.dialects.relay import RELAY_OPS, dtype_of, shape_of
from xrelay.transforms._relay_rewrite import OpBuilder, rank_of

BiasAddOp = RELAY_OPS["nn.bias_add"]
EinsumOp = RELAY_OPS["einsum"]


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


class EinsumToBatchMatmul(RewritePattern):
    """A two-operand ``einsum`` that is a batched matrix product -> ``nn.batch_matmul`` of
    the operands seen as ``(batch, rows, summed)`` and ``(batch, columns, summed)`` (or
    ``(batch, summed, ...)``: whichever order needs no transpose, told by ``transpose_a`` /
    ``transpose_b``), then viewed and permuted to the output's letters.

    ```mlir
    %y = relay.einsum %q, %k {equation = "bhid,bhjd->bhij"} : (tensor<1x2x5x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x5x6xf32>
    // becomes
    %a = relay.reshape %q {newshape = [2, 5, 8]} : (tensor<1x2x5x8xf32>) -> tensor<2x5x8xf32>
    %b = relay.reshape %k {newshape = [2, 6, 8]} : (tensor<1x2x6x8xf32>) -> tensor<2x6x8xf32>
    %m = relay.nn.batch_matmul %a, %b {transpose_b = true} : (tensor<2x5x8xf32>, tensor<2x6x8xf32>) -> tensor<2x5x6xf32>
    %y = relay.reshape %m {newshape = [1, 2, 5, 6]} : (tensor<2x5x6xf32>) -> tensor<1x2x5x6xf32>
    ```
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: EinsumOp, rewriter: PatternRewriter) -> None:  # type: ignore[valid-type]
        if len(op.operands) != 2 or dtype_of(op.results[0].type) not in ("float16", "bfloat16", "float32", "float64"):
            return
        lhs, arrow, out = op.attrs["equation"].replace(" ", "").partition("->")
        terms = lhs.split(",")
        if not arrow or "..." in lhs or len(terms) != 2 or any(len(set(t)) != len(t) for t in (*terms, out)):
            return
        (ta, tb), (a, b) = terms, op.operands
        sa, sb = shape_of(a.type), shape_of(b.type)
        if None in sa or None in sb or len(sa) != len(ta) or len(sb) != len(tb):
            return
        size = {**dict(zip(tb, sb)), **dict(zip(ta, sa))}
        batch = [c for c in out if c in ta and c in tb]
        summed = [c for c in ta if c in tb and c not in out]
        free_a = [c for c in ta if c not in tb]
        free_b = [c for c in tb if c not in ta]
        if set(out) != set(batch + free_a + free_b) or any(sa[ta.index(c)] != sb[tb.index(c)] for c in batch + summed):
            return  # a letter summed within one operand, or batch axes that broadcast

        def prod(letters: list[str]) -> int:
            n = 1
            for c in letters:
                n *= size[c]
            return n

        build = OpBuilder(rewriter, op)

        def matrix(v, term: str, free: list[str]) -> tuple:
            """``v`` as (batch, free, summed) or (batch, summed, free), whichever is its
            order already (else transposed to the first); True for the second."""
            stored = list(range(len(term)))
            natural = [term.index(c) for c in batch + free + summed]
            swapped = natural != stored and [term.index(c) for c in batch + summed + free] == stored
            if natural != stored and not swapped:
                v = build("transpose", [v], axes=natural)
            rows, cols = (prod(summed), prod(free)) if swapped else (prod(free), prod(summed))
            if list(shape_of(v.type)) != [prod(batch), rows, cols]:
                v = build("reshape", [v], newshape=[prod(batch), rows, cols])
            return v, swapped

        x, t_a = matrix(a, ta, free_a)
        y, t_b = matrix(b, tb, free_b)
        # batch_matmul's b is (batch, columns, summed) when transposed: the opposite sense
        z = build("nn.batch_matmul", [x, y], transpose_a=t_a, transpose_b=not t_b)
        letters = batch + free_a + free_b
        if len(letters) != 3 or [prod([c]) for c in letters] != list(shape_of(z.type)):
            z = build("reshape", [z], newshape=[size[c] for c in letters])
        if letters != list(out):
            z = build("transpose", [z], axes=[letters.index(c) for c in out])
        rewriter.replace(op, [], [z])


@dataclass(frozen=True)
class CanonicalizeOpsPass(ModulePass):
    """Rewrite ``nn.bias_add`` into ``expand_dims`` + ``add``, and a two-operand ``einsum``
    that is a batched matrix product into ``nn.batch_matmul`` with views."""

    name = "canonicalize-ops"
    relay_name: ClassVar[str] = "CanonicalizeOps"
    opt_level: ClassVar[int] = 3
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([BiasAddToAdd(), EinsumToBatchMatmul()], dce_enabled=False),
            apply_recursively=False,
        ).rewrite_module(op)
