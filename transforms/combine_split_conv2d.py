"""``combine-split-conv2d``: convolutions of the channel pieces of one tensor, concatenated in
order, become one grouped convolution.

MixNet's MixConv splits the channels into pieces, convolves each depthwise with its own
kernel size (3x3, 5x5, 7x7, ...) and concatenates the results; its grouped 1x1 convolutions
are written the same way (split, one ``groups = 1`` convolution per piece, concatenate).
Each form ran as a split copy, one step per piece, a concatenation copy, and the batch norm
and activation after the concatenation as a step of their own (they cannot fuse into
several producers). A grouped convolution is the same computation in one op: its group ``j``
reads input channels ``[j I, (j+1) I)`` and writes output channels ``[j P, (j+1) P)``. So
when every piece's convolution has the same input channels per group ``I`` and output
channels per group ``P`` (and the same strides, dilation, layouts and out dtype), the pieces'
weights stacked along ``O`` are one convolution's weight with ``groups = sum g_i``:

```mlir
%s:2 = relay.split %x {indices_or_sections = [8], axis = 1} : (tensor<1x16x8x8xf32>) -> (tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>)
%a = relay.nn.conv2d %s#0, %w0 {padding = [1, 1, 1, 1], groups = 8, channels = 8, kernel_size = [3, 3]} : (tensor<1x8x8x8xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x8x8xf32>
%b = relay.nn.conv2d %s#1, %w1 {padding = [2, 2, 2, 2], groups = 8, channels = 8, kernel_size = [5, 5]} : (tensor<1x8x8x8xf32>, tensor<8x1x5x5xf32>) -> tensor<1x8x8x8xf32>
%y = relay.concatenate %a, %b {axis = 1} : (tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) -> tensor<1x16x8x8xf32>
// becomes
%0 = relay.nn.pad %w0, %zero {pad_width = [[0, 0], [0, 0], [1, 1], [1, 1]]} : (tensor<8x1x3x3xf32>, tensor<f32>) -> tensor<8x1x5x5xf32>
%1 = relay.concatenate %0, %w1 {axis = 0} : (tensor<8x1x5x5xf32>, tensor<8x1x5x5xf32>) -> tensor<16x1x5x5xf32>
%y = relay.nn.conv2d %x, %1 {padding = [2, 2, 2, 2], groups = 16, channels = 16, kernel_size = [5, 5]} : (tensor<1x16x8x8xf32>, tensor<16x1x5x5xf32>) -> tensor<1x16x8x8xf32>
```

``fold-constant`` then folds the weight (the pad and the concatenation of constants), and
the batch norm after the concatenation folds into the one convolution like any other's.

**The pieces.** The convolutions' data are the results of one ``split`` along the channel
axis, all of them in order, or ``strided_slice``s of one tensor along the channel axis (step
1) that tile it in order (the form of exporters that write ``Slice``). Each concatenated
value is a convolution used only there, optionally through its own ``nn.bias_add`` (the
biases are concatenated, zeros for a piece without one).

**Different kernel sizes.** A smaller kernel is zero-padded to the largest (``KH x KW``) at
the offset that keeps its window: with dilation ``D``, a piece padded ``t`` above is padded
``d`` taps above where ``t + d D`` is the largest kernel's top padding (``0 <= d <= KH -
kh``; centred odd kernels with "same" padding always have one, and so do TensorFlow's
asymmetric stride-2 paddings), and the same for the columns. The zeros cost multiply-adds:
the combined convolution does ``sum O_i I KH KW`` of them instead of ``sum O_i I kh_i kw_i``.
It is done when that is at most ``max-padded-ratio`` (default 4) times as many and each group
reads one channel (depthwise: a step bound by memory traffic more than by multiply-adds); a
convolution whose groups read several channels keeps its pieces when their kernel sizes
differ. The bound is measured against the pieces as the build runs them (a split copy, a
step per piece, a concatenation step with the batch norm and SiLU after it): oneDNN, 2
threads, Emerald Rapids, load 1.2-2.7, pieces / combined, ms:

| channels, size, stride | kernels        | padded ratio | pieces | combined |
|------------------------|----------------|--------------|--------|----------|
| 144, 112, 2            | 3, 5, 7        | 1.77         | 9.27   | 4.36     |
| 120, 56, 1             | 3, 5, 7, 9     | 1.98         | 4.98   | 1.19     |
| 720, 28, 1             | 3, 5, 7, 9, 11 | 2.12         | 8.65   | 3.43     |
| 240, 56, 1             | 1, 3, 5, 7, 9  | 2.45         | 18.1   | 6.15     |
| 240, 56, 1             | 1, 1, 9        | 2.93         | 8.31   | 1.92     |
| 96, 112, 1             | 1, 1, 1, 9     | 3.86         | 13.3   | 2.70     |

(Each piece with its batch norm and SiLU fused and no concatenation at all, a bound for
any way of keeping the pieces, took 2.43 and 2.93 ms in the 3rd and 4th rows: with the
pieces' epilogues fused and their outputs written in place, a large padded ratio would be
worth keeping apart.)

Anything else is left as it is: pieces out of order or not covering the tensor, a
convolution with another user, pieces whose channels per group differ (a group cannot be
split unevenly), ``Relay``'s ``(C, M, kh, kw)`` depthwise weight form, blocked layouts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter

from xrelay.dialects.relay import RelayOp, shape_of
from xrelay.dialects.relay.ops import Conv2DOp, depthwise_multiplier, strided_slice_bounds
from xrelay.transforms._relay_rewrite import (
    OpBuilder,
    RelayOpPattern,
    rewrite_to_fixpoint,
    tensor_dtype,
)

__all__ = ["CombineSplitConv2DPass", "SplitConvToGroupedConv", "combine_split_conv2d"]

_SAME_ATTRS = ("strides", "dilation", "data_layout", "kernel_layout", "out_layout", "out_dtype")


def _branch(v: SSAValue) -> tuple[Conv2DOp, SSAValue | None] | None:
    """The convolution behind a concatenated value, and its bias (``nn.bias_add`` on the
    channel axis), when each is used only on the way to the concatenation."""
    op = v.owner
    bias = None
    if isinstance(op, RelayOp) and op.RELAY_NAME == "nn.bias_add":
        if v.get_user_of_unique_use() is None:
            return None
        conv = op.operands[0].owner
        if not isinstance(conv, Conv2DOp):
            return None
        rank = len(shape_of(v.type))
        if op.attrs["axis"] % rank != conv.attrs["data_layout"].index("C"):
            return None
        bias, v = op.operands[1], op.operands[0]
        op = conv
    if not isinstance(op, Conv2DOp) or v.get_user_of_unique_use() is None:
        return None
    return op, bias


def _pieces(values: list[SSAValue], axis: int) -> SSAValue | None:
    """The tensor whose channel pieces ``values`` are, in order and covering it: the results
    of one ``split`` along ``axis``, or ``strided_slice``s of one tensor along ``axis``."""
    owners = {v.owner for v in values}
    if len(owners) == 1:
        split = owners.pop()
        if not (isinstance(split, RelayOp) and split.RELAY_NAME == "split"):
            return None
        x = split.operands[0]
        if split.attrs["axis"] % len(shape_of(x.type)) != axis or list(values) != list(
            split.results
        ):
            return None
        return x
    x, at = None, 0
    for v in values:
        s = v.owner
        if not (isinstance(s, RelayOp) and s.RELAY_NAME == "strided_slice"):
            return None
        if x is None:
            x = s.operands[0]
        shape = list(shape_of(x.type))
        a = s.attrs
        bounds = None
        if s.operands[0] == x:
            bounds = strided_slice_bounds(
                shape, a["begin"], a["end"], a["strides"], a["axes"], a["slice_mode"]
            )
        if bounds is None:
            return None
        if any(bounds[k] != (0, d, 1) for k, d in enumerate(shape) if k != axis):
            return None
        lo, hi, step = bounds[axis]
        if lo != at or step != 1 or hi <= lo:
            return None
        at = hi
    if x is None or at != shape_of(x.type)[axis]:
        return None
    return x


def _offsets(
    pads: list[tuple[int, int]], kernels: list[int], dilation: int
) -> tuple[list[int], tuple[int, int]] | None:
    """For one spatial axis: the taps of zeros above each piece's kernel that make it the
    largest kernel read with that kernel's padding, and that padding; None when one cannot
    be. Output ``o`` of a piece reads rows ``o s - t + j D`` (``j < k``); framed by ``d``
    zero taps above and read with the top padding ``t + d D``, the same rows. The padding
    below only decides how many outputs there are, which the concatenation made equal."""
    size = max(kernels)
    top, bottom = next(p for p, k in zip(pads, kernels) if k == size)
    offsets = []
    for (t, _), k in zip(pads, kernels):
        d, rest = divmod(top - t, dilation)
        if rest or not 0 <= d <= size - k:
            return None
        offsets.append(d)
    return offsets, (top, bottom)


class SplitConvToGroupedConv(RelayOpPattern):
    """``concatenate`` of convolutions of a tensor's channel pieces becomes one grouped
    convolution of the tensor (see the module docstring)."""

    ROOT = "concatenate"

    def __init__(self, max_padded_ratio: float = 4.0):
        self.max_padded_ratio = max_padded_ratio

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        if len(op.operands) < 2:
            return
        branches = [_branch(v) for v in op.operands]
        if any(b is None for b in branches):
            return
        convs = [b[0] for b in branches]  # type: ignore[index]
        if len(set(convs)) != len(convs):
            return
        first = convs[0].attrs
        data_layout, kernel_layout = first["data_layout"], first["kernel_layout"]
        if sorted(data_layout) != sorted("NCHW") or sorted(kernel_layout) != sorted("OIHW"):
            return  # blocked layouts
        if first["out_layout"] not in ("", data_layout):
            return
        if any(c.attrs[k] != first[k] for c in convs for k in _SAME_ATTRS):
            return
        axis = data_layout.index("C")
        if op.attrs["axis"] % 4 != axis:
            return
        x = _pieces([c.operands[0] for c in convs], axis)
        if x is None:
            return
        o_, i_, h_, w_ = (kernel_layout.index(a) for a in "OIHW")
        weights = [list(shape_of(c.operands[1].type)) for c in convs]
        groups = [c.attrs["groups"] for c in convs]
        cins = [shape_of(c.operands[0].type)[axis] for c in convs]
        if any(
            depthwise_multiplier(
                cin, (w[o_], w[i_]), g, c.attrs["channels"], c.attrs["kernel_size"]
            )
            is not None
            for cin, w, g, c in zip(cins, weights, groups, convs)
        ):
            return  # Relay's (C, M, kh, kw) weight: its rows are not per output channel
        per_group_in = {w[i_] for w in weights}
        per_group_out = {w[o_] // g for w, g in zip(weights, groups)}
        if len(per_group_in) != 1 or len(per_group_out) != 1:
            return
        (channels_in,) = per_group_in
        pads = [c.attrs["padding"] for c in convs]
        dh, dw = first["dilation"]
        rows = _offsets([(p[0], p[2]) for p in pads], [w[h_] for w in weights], dh)
        cols = _offsets([(p[1], p[3]) for p in pads], [w[w_] for w in weights], dw)
        if rows is None or cols is None:
            return
        kh, kw = max(w[h_] for w in weights), max(w[w_] for w in weights)
        macs = sum(w[o_] * w[h_] * w[w_] for w in weights)
        padded = sum(w[o_] for w in weights) * kh * kw
        if padded > macs * (self.max_padded_ratio if channels_in == 1 else 1):
            return

        b = OpBuilder(rewriter, op)
        dtype = tensor_dtype(convs[0].operands[1])
        zero = None
        parts = []
        for c, w, top, left in zip(convs, weights, rows[0], cols[0]):
            weight = c.operands[1]
            if (w[h_], w[w_]) != (kh, kw):
                zero = zero if zero is not None else b.scalar(0.0, dtype)
                width = [[0, 0] for _ in range(4)]
                width[h_] = [top, kh - w[h_] - top]
                width[w_] = [left, kw - w[w_] - left]
                weight = b("nn.pad", [weight, zero], pad_width=width)
            parts.append(weight)
        weight = b("concatenate", parts, axis=o_)
        attrs = {k: first[k] for k in _SAME_ATTRS}
        (top, bottom), (left, right) = rows[1], cols[1]
        out = b("nn.conv2d", [x, weight], padding=[top, left, bottom, right], groups=sum(groups),
                channels=sum(w[o_] for w in weights), kernel_size=[kh, kw], **attrs)  # fmt: skip
        if any(bias is not None for _, bias in branches):  # type: ignore[misc]
            bias_dtype = next(tensor_dtype(bias) for _, bias in branches if bias is not None)  # type: ignore[misc]
            biases = [
                bias if bias is not None else b.const(np.zeros(w[o_]), bias_dtype)
                for (_, bias), w in zip(branches, weights)  # type: ignore[misc]
            ]
            out = b("nn.bias_add", [out, b("concatenate", biases, axis=0)], axis=axis)
        rewriter.replace(op, [], [out])


def combine_split_conv2d(module: ModuleOp, max_padded_ratio: float = 4.0) -> int:
    """Apply ``SplitConvToGroupedConv`` until nothing changes; returns the number of rewrites."""
    return rewrite_to_fixpoint(module, [SplitConvToGroupedConv(max_padded_ratio)])


@dataclass(frozen=True)
class CombineSplitConv2DPass(ModulePass):
    """Convolutions of a tensor's channel pieces, concatenated, become one grouped
    convolution (see the module docstring)."""

    name = "combine-split-conv2d"
    opt_level: ClassVar[int] = 2

    max_padded_ratio: float = 4.0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        combine_split_conv2d(op, self.max_padded_ratio)
