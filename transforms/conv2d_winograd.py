"""``conv2d-winograd``: 3x3 stride-1 float32 convolutions with constant weights become
``nn.contrib_conv2d_winograd_without_weight_transform`` with the weights transformed here.

The C target's rewrite (``build_c`` runs it after ``alter-op-layout`` and ``fold-constant``,
before ``fuse-ops``; no other build does): Winograd F(4x4, 3x3) computes a 4x4 output block
with 36 products per input and output channel where the direct convolution takes 144, so the
3x3 layers of ResNet-18 take about a third of their direct time in C. The weights ``G g G^T``
are computed once, here, in float64 and rounded once (``kernels.winograd``), packed as the
new op takes them: ``(6, 6, O / 8, I, 8)``.

A convolution is rewritten when it is float32, 3x3, stride 1, dilation 1, one group, its
kernel a constant, its data ``NCHW`` or ``NCHW{k}c``, its result ``NCHW{8j}c`` (the C's 8-lane
output transform; ``alter-op-layout`` gives the C build's convolutions these layouts), at
least ``MIN_CHANNELS`` channels each way and an output of at least ``MIN_OUT`` pixels each way
(smaller maps leave too few 4x4 tiles, and cut ones waste their products).

```mlir
%y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1], channels = 16, kernel_size = [3, 3], data_layout = "NCHW8c", kernel_layout = "OIHW8i8o"}
       : (tensor<1x2x28x28x8xf32>, tensor<2x2x3x3x8x8xf32>) -> tensor<1x2x28x28x8xf32>
// becomes (%u: the transformed weights, a constant)
%y = relay.nn.contrib_conv2d_winograd_without_weight_transform %x, %u {tile_size = 4, padding = [1, 1, 1, 1], channels = 16, kernel_size = [3, 3], data_layout = "NCHW8c"}
       : (tensor<1x2x28x28x8xf32>, tensor<6x6x2x16x8xf32>) -> tensor<1x2x28x28x8xf32>
```
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
)
from xdsl.rewriter import InsertPoint

from xrelay.dialects.relay import RELAY_OPS, ConstantOp
from xrelay.kernels import layout_transform_array
from xrelay.kernels.winograd import winograd_weights_packed
from xrelay.transforms._relay_rewrite import constant_value, tensor_dtype

TILE = 4
"""The output block: F(4x4, 3x3), the one the C target computes."""

LANES = 8
"""Output channels per packed weight row (the C's 8-lane vectors)."""

MIN_OUT = 14
"""The smallest output height and width rewritten (ResNet-18's 7x7 layers stay direct: four
tiles of which three are cut)."""

MIN_CHANNELS = 16
"""The fewest input and output channels rewritten (a layer with fewer is cheap direct)."""


def _blocks(layout: str) -> int | None:
    """The channel block of ``NCHW`` (1) or ``NCHW{k}c`` (k), else None."""
    if layout == "NCHW":
        return 1
    if layout.startswith("NCHW") and layout.endswith("c") and layout[4:-1].isdigit():
        return int(layout[4:-1])
    return None


class Conv2dToWinograd(RewritePattern):
    """``nn.conv2d`` (3x3, stride 1, constant kernel, blocked result) -> the Winograd op with
    transformed weights (see the module docstring for the before/after)."""

    def match_and_rewrite(self, op, rewriter: PatternRewriter) -> None:
        if getattr(op, "RELAY_NAME", None) != "nn.conv2d":
            return
        x, w = op.operands
        a = op.attrs
        kernel = constant_value(w)
        data_layout = a["data_layout"]
        out_layout = a["out_layout"] or data_layout
        ib, ob = _blocks(data_layout), _blocks(out_layout)
        if (kernel is None or ib is None or ob is None or ob % LANES or a["groups"] != 1
                or tuple(a["strides"]) != (1, 1) or tuple(a["dilation"]) != (1, 1)
                or any(tensor_dtype(v) != "float32" for v in (x, w, op.results[0]))
                or (a["out_dtype"] or "float32") != "float32"):  # fmt: skip
            return
        try:
            w_oihw = layout_transform_array(kernel, a["kernel_layout"], "OIHW")
        except ValueError:
            return
        o, i, kh, kw = w_oihw.shape
        oh, ow = op.results[0].type.get_shape()[2:4]
        if (kh, kw) != (3, 3) or o % LANES or min(o, i) < MIN_CHANNELS or min(oh, ow) < MIN_OUT:
            return
        u = ConstantOp.from_numpy(winograd_weights_packed(w_oihw, TILE, LANES))
        new = RELAY_OPS["nn.contrib_conv2d_winograd_without_weight_transform"].make(
            [x, u.results[0]], tile_size=TILE, padding=a["padding"], channels=o, kernel_size=(3, 3),
            data_layout=data_layout, out_layout=a["out_layout"], out_dtype=a["out_dtype"],
        )  # fmt: skip
        rewriter.insert(u, InsertPoint.before(op))
        rewriter.replace(op, new)
        if isinstance(w.owner, ConstantOp) and not w.uses:
            rewriter.erase(w.owner)


@dataclass(frozen=True)
class Conv2dWinogradPass(ModulePass):
    """Rewrite 3x3 stride-1 float32 convolutions with constant weights as Winograd F(4x4, 3x3)
    with the weights transformed at build time (the C target's build runs it)."""

    name = "conv2d-winograd"
    relay_name: ClassVar[str] = "Conv2dWinograd"
    opt_level: ClassVar[int] = 3
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([Conv2dToWinograd()], dce_enabled=False), apply_recursively=False
        ).rewrite_module(op)


__all__ = ["Conv2dToWinograd", "Conv2dWinogradPass"]
