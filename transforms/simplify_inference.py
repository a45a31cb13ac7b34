"""``simplify-inference``: turn inference-only ops into elementwise arithmetic (Relay's SimplifyInference).

* ``nn.batch_norm`` whose first result is used and whose moving-statistics results (1 and 2)
  are unused becomes a multiply and an add with per-channel vectors, exactly as Relay builds them
  (docs/relay-semantics.md §2.2)::

      scale = 1 / sqrt(var + eps)      # eps a scalar constant of the data's dtype
      scale = scale * gamma            # only if scale=true
      shift = (-mean) * scale
      shift = shift + beta             # only if center=true
      scale, shift = expand_dims(., axis=1, num_newaxis=ndim-axis-1)   # only if > 0
      out = x * scale + shift

  A batch_norm whose statistics results are used is left alone (Relay only rewrites
  ``TupleGetItem(bn, 0)``).
* ``nn.dropout`` whose mask is unused: its output is replaced by its input.
* ``nn.layer_norm`` becomes ``(x - mean) / sqrt(mean((x - mean)^2) + eps)``, then ``* gamma``
  (scale=true) and ``+ beta`` (center=true), with gamma and beta expanded to line up with the
  (normalised) axis; the variance is the mean of squares of the centred value (Relay builds a
  ``variance`` op from the same mean) and the normalisation is sqrt + divide as in Relay.

Negative axes are normalised first (Relay's batch_norm rewrite would mis-expand them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from xrelay.dialects.relay import RELAY_OPS
from xrelay.transforms._relay_rewrite import OpBuilder, rank_of, tensor_dtype

BatchNormOp = RELAY_OPS["nn.batch_norm"]
DropoutOp = RELAY_OPS["nn.dropout"]
LayerNormOp = RELAY_OPS["nn.layer_norm"]


def _expand_to_axis(b: OpBuilder, vec: SSAValue, ndim: int, axis: int) -> SSAValue:
    """Give a per-channel vector trailing unit axes so it broadcasts along ``axis``."""
    pad = ndim - axis - 1
    if pad > 0:
        return b("expand_dims", [vec], axis=1, num_newaxis=pad)
    return vec


class BatchNormToArithmetic(RewritePattern):
    """``nn.batch_norm`` (only result 0 used) -> ``x * scale + shift``.

    ```mlir
    %y, %m, %v = relay.nn.batch_norm %x, %g, %b, %mean, %var : (...) -> (...)
    // becomes
    %e = relay.constant dense<1.0e-05> : tensor<f32>
    %0 = relay.add %var, %e
    %1 = relay.sqrt %0
    %2 = relay.divide %one, %1
    %3 = relay.multiply %2, %g
    %4 = relay.negative %mean
    %5 = relay.multiply %4, %3
    %6 = relay.add %5, %b
    %7 = relay.multiply %x, %3     // (expand_dims of %3 and %6 first when channels are not last)
    %y = relay.add %7, %6
    ```
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BatchNormOp, rewriter: PatternRewriter) -> None:  # type: ignore[valid-type]
        out, new_mean, new_var = op.results
        if new_mean.uses or new_var.uses or not out.uses:
            return
        x, gamma, beta, mean, var = op.operands
        attrs = op.attrs
        ndim = rank_of(x)
        axis = attrs["axis"] + ndim if attrs["axis"] < 0 else attrs["axis"]
        dtype = tensor_dtype(x)
        b = OpBuilder(rewriter, op)
        eps = b.scalar(attrs["epsilon"], dtype)
        scale = b("divide", [b.scalar(1.0, dtype), b("sqrt", [b("add", [var, eps])])])
        if attrs["scale"]:
            scale = b("multiply", [scale, gamma])
        shift = b("multiply", [b("negative", [mean]), scale])
        if attrs["center"]:
            shift = b("add", [shift, beta])
        scale = _expand_to_axis(b, scale, ndim, axis)
        shift = _expand_to_axis(b, shift, ndim, axis)
        result = b("add", [b("multiply", [x, scale]), shift])
        # results 1 and 2 are unused: replace them by the stats they would copy
        rewriter.replace(op, [], [result, mean, var])


class DropoutToIdentity(RewritePattern):
    """``nn.dropout`` (mask unused) -> its input.

    ```mlir
    %y, %mask = relay.nn.dropout %x : (tensor<1x10xf32>) -> (tensor<1x10xf32>, tensor<1x10xf32>)
    // becomes: uses of %y use %x
    ```
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DropoutOp, rewriter: PatternRewriter) -> None:  # type: ignore[valid-type]
        out, mask = op.results
        if mask.uses:
            return
        x = op.operands[0]
        rewriter.replace(op, [], [x, x])


class LayerNormToArithmetic(RewritePattern):
    """``nn.layer_norm`` -> mean, centring, variance, sqrt + divide, gamma and beta.

    ```mlir
    %y = relay.nn.layer_norm %x, %g, %b : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
    // becomes
    %0 = relay.mean %x {axis = [1], keepdims = true}
    %1 = relay.subtract %x, %0
    %2 = relay.multiply %1, %1
    %3 = relay.mean %2 {axis = [1], keepdims = true}
    %4 = relay.add %3, %eps
    %5 = relay.sqrt %4
    %6 = relay.divide %1, %5
    %7 = relay.multiply %6, %g
    %y = relay.add %7, %b
    ```
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LayerNormOp, rewriter: PatternRewriter) -> None:  # type: ignore[valid-type]
        x, gamma, beta = op.operands
        attrs = op.attrs
        ndim = rank_of(x)
        axis = attrs["axis"] + ndim if attrs["axis"] < 0 else attrs["axis"]
        dtype = tensor_dtype(x)
        b = OpBuilder(rewriter, op)
        mean = b("mean", [x], axis=[axis], keepdims=True)
        centred = b("subtract", [x, mean])
        var = b("mean", [b("multiply", [centred, centred])], axis=[axis], keepdims=True)
        denom = b("sqrt", [b("add", [var, b.scalar(attrs["epsilon"], dtype)])])
        out = b("divide", [centred, denom])
        if attrs["scale"]:
            out = b("multiply", [out, _expand_to_axis(b, gamma, ndim, axis)])
        if attrs["center"]:
            out = b("add", [out, _expand_to_axis(b, beta, ndim, axis)])
        rewriter.replace(op, [], [out])


@dataclass(frozen=True)
class SimplifyInferencePass(ModulePass):
    """Rewrite batch_norm, dropout and layer_norm for inference."""

    name = "simplify-inference"
    relay_name: ClassVar[str] = "SimplifyInference"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [BatchNormToArithmetic(), DropoutToIdentity(), LayerNormToArithmetic()],
                dce_enabled=False,
            ),
            apply_recursively=False,
        ).rewrite_module(op)
