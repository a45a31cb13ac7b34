"""``fold-explicit-padding``: fold an ``nn.pad`` into the convolution or pool that reads it.

Relay's ``FoldExplicitPadding`` (``src/relay/transforms/fold_explicit_padding.cc``): a constant
``nn.pad`` that pads only the spatial axes (``D``/``H``/``W`` of the consumer's layout) is removed
and its widths are added to the consumer's own ``padding`` when the consumer pads with the same
value --

* ``nn.conv1d`` / ``nn.conv2d`` / ``nn.conv3d``: pad value 0;
* ``qnn.conv2d``: pad value equal to the input zero point (its padding is the zero point, so the
  lowered form pads with ``nn.pad`` only where it must);
* ``nn.avg_pool2d`` / ``nn.avg_pool3d``: pad value 0, and ``count_include_pad`` true -- or false
  with no padding of its own, which then becomes true (the folded zeros were counted);
* ``nn.max_pool2d`` / ``nn.max_pool3d``: pad value the lowest value of the dtype.

Padding widths combine as Relay's attributes order them: all spatial "before" widths, then all
"after" widths. Relay folds a ``qnn.conv2d``'s pad without looking at ``pad_mode``; here an
``edge``/``reflect`` pad is never folded (folding it would change the result).

```mlir
%p = relay.nn.pad %x, %zero {pad_width = [[0, 0], [0, 0], [1, 1], [1, 1]]} : (tensor<1x3x8x8xf32>, tensor<f32>) -> tensor<1x3x10x10xf32>
%y = relay.nn.conv2d %p, %w : (tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
// becomes
%y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
```
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from xrelay.dialects.qnn import QNN_OPS
from xrelay.dialects.relay import RELAY_OPS
from xrelay.transforms._relay_rewrite import constant_value, tensor_dtype

CONVS = ("nn.conv1d", "nn.conv2d", "nn.conv3d", "qnn.conv2d")
AVG_POOLS = ("nn.avg_pool2d", "nn.avg_pool3d")
MAX_POOLS = ("nn.max_pool2d", "nn.max_pool3d")
_SPATIAL = frozenset("DHW")


def spatial_padding(pad_width: list[list[int]], layout: str) -> list[int] | None:
    """The pad's spatial widths as a consumer's ``padding`` (befores, then afters), or None when
    it pads a non-spatial axis (a convolution or pool pads only D/H/W)."""
    if len(pad_width) != len(layout):
        return None
    if any(c not in _SPATIAL and any(pw) for c, pw in zip(layout, pad_width)):
        return None
    spatial = [pw for c, pw in zip(layout, pad_width) if c in _SPATIAL]
    return [pw[0] for pw in spatial] + [pw[1] for pw in spatial]


def _full_padding(padding: list[int], n: int) -> list[int]:
    """Relay's padding forms (one value, one per spatial axis, or before+after) as 2 * n values."""
    if len(padding) == 1:
        return padding * (2 * n)
    if len(padding) == n:
        return padding * 2
    return list(padding)


def _lowest(dtype: str) -> float:
    d = np.dtype(dtype)
    return float(np.finfo(d).min) if d.kind == "f" else float(np.iinfo(d).min)


class FoldPadIntoConsumer(RewritePattern):
    """``nn.pad`` -> conv / qnn.conv2d / pool becomes the consumer with combined padding.

    ```mlir
    %p = relay.nn.pad %x, %zp8 {pad_width = [[0, 0], [0, 0], [1, 1], [1, 1]]}
    %y = qnn.conv2d %p, %w, %zp, %kzp, %s, %ks {...}        // %zp8 == %zp
    // becomes
    %y = qnn.conv2d %x, %w, %zp, %kzp, %s, %ks {padding = [1, 1, 1, 1], ...}
    ```
    """

    def match_and_rewrite(self, op, rewriter: PatternRewriter) -> None:
        name = getattr(op, "RELAY_NAME", None)
        if name not in CONVS + AVG_POOLS + MAX_POOLS:
            return
        pad = op.operands[0].owner
        if getattr(pad, "RELAY_NAME", None) != "nn.pad" or pad.attrs["pad_mode"] != "constant":
            return
        value = constant_value(pad.operands[1])
        if value is None:
            return
        value = float(value.reshape(()))
        attrs = op.attrs
        layout = attrs["data_layout"] if name in CONVS else attrs["layout"]
        widths = spatial_padding(pad.attrs["pad_width"], layout)
        if widths is None:
            return
        if name == "qnn.conv2d":
            zp = constant_value(op.operands[2])
            if zp is None or zp.size != 1 or float(zp.reshape(())) != value:
                return
        elif name in MAX_POOLS:
            if value != _lowest(tensor_dtype(op.operands[0])):
                return
        elif value != 0.0:
            return
        own = _full_padding(list(attrs["padding"]), len(widths) // 2)
        if name in AVG_POOLS and not attrs["count_include_pad"]:
            if any(own):
                return  # its divisor leaves its own padding out but would count the folded zeros
            attrs["count_include_pad"] = True
        attrs["padding"] = [a + b for a, b in zip(widths, own)]
        cls = QNN_OPS[name] if name.startswith("qnn.") else RELAY_OPS[name]
        new = cls.make([pad.operands[0], *op.operands[1:]], **attrs)
        rewriter.replace(op, new)
        if not pad.results[0].uses:
            rewriter.erase(pad)


@dataclass(frozen=True)
class FoldExplicitPaddingPass(ModulePass):
    """Fold explicit ``nn.pad`` ops into the convolutions and pools that consume them."""

    name = "fold-explicit-padding"
    relay_name: ClassVar[str] = "FoldExplicitPadding"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([FoldPadIntoConsumer()], dce_enabled=False), apply_recursively=False
        ).rewrite_module(op)


__all__ = ["FoldExplicitPaddingPass", "FoldPadIntoConsumer", "spatial_padding"]
