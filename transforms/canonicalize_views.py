"""``canonicalize-views``: one written form for data movement that is a view of its operand.

Exporters write views of a tensor in forms that look like work: torchvision's Swin pads each
stage to a multiple of its window with ``F.pad`` whose widths are all zero at the usual
sizes, attention splits its fused Q/K/V projection with ``take`` (ONNX ``Gather``) of a
constant index, and ViT's ``nn.MultiheadAttention`` moves its batch axis of 1 with a
``transpose``. Each ran as a copy of the tensor. After this pass they are the ops the
rest of the build already sees as views (reshapes: no step; ``strided_slice`` and
transposes: strides that a oneDNN matmul or the native movement kernels read in place):

* ``NoOpPad``: ``nn.pad`` whose widths are all zero becomes its input (any pad mode);
* ``UnitTransposeToReshape``: a ``transpose`` that only moves axes of size 1 (the other
  axes keep their order) becomes a ``reshape``: the same elements in the same order;
* ``TakeToSlice``: ``take`` along an axis by a constant index that is a scalar or an
  ascending arithmetic sequence (each index in range after the op's ``mode``: ``clip``
  clamps, ``wrap`` wraps, ``fast`` counts negatives from the end) becomes a
  ``strided_slice`` of that axis, then a ``reshape`` when the index is a scalar (the axis
  disappears) or has several dims.

Every rewrite keeps the result type and the values bit for bit. The patterns run as one
greedy walk repeated until nothing changes; dead ops are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter

from xrelay.dialects.relay import RelayOp, shape_of
from xrelay.transforms._relay_rewrite import (
    OpBuilder,
    RelayOpPattern,
    constant_value,
    rewrite_to_fixpoint,
)

__all__ = ["PATTERNS", "CanonicalizeViewsPass", "canonicalize_views"]


def _static(shape) -> bool:
    return all(isinstance(d, int) for d in shape)


class NoOpPad(RelayOpPattern):
    """``nn.pad`` with every width zero becomes its input::

        %y = relay.nn.pad %x, %v {pad_width = [[0, 0], [0, 0]]} : (tensor<4x6xf32>, tensor<f32>) -> tensor<4x6xf32>
        // becomes %x
    """

    ROOT = "nn.pad"

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        x = op.operands[0]
        if x.type == op.results[0].type and all(a == 0 and b == 0 for a, b in op.attrs["pad_width"]):
            rewriter.replace(op, [], [x])


class UnitTransposeToReshape(RelayOpPattern):
    """A ``transpose`` that keeps the order of the axes longer than 1 becomes a ``reshape``::

        %y = relay.transpose %x {axes = [1, 0, 2]} : (tensor<1x197x768xf32>) -> tensor<197x1x768xf32>
        // becomes
        %y = relay.reshape %x {newshape = [197, 1, 768]} : (tensor<1x197x768xf32>) -> tensor<197x1x768xf32>
    """

    ROOT = "transpose"

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        x = op.operands[0]
        shape = list(shape_of(x.type))
        out = list(shape_of(op.results[0].type))
        if not _static(shape) or not _static(out):
            return
        n = len(shape)
        axes = op.attrs.get("axes")
        axes = list(range(n))[::-1] if not axes else [int(a) % n for a in axes]
        moved = [a for a in axes if shape[a] != 1]
        if moved != sorted(moved) or axes == list(range(n)):
            return  # a real permutation (or the identity, simplify-expr's)
        new = OpBuilder(rewriter, op).op("reshape", [x], newshape=out)
        if new.results[0].type != op.results[0].type:
            rewriter.erase(new)
            return
        rewriter.replace(op, [], [new.results[0]])


class TakeToSlice(RelayOpPattern):
    """``take`` along an axis by a constant scalar, or by constant indices in ascending
    arithmetic sequence, becomes ``strided_slice`` (and a ``reshape`` to the take's shape)::

        %i = relay.constant dense<1> : tensor<i64>
        %y = relay.take %x, %i {axis = 0} : (tensor<3x4x5xf32>, tensor<i64>) -> tensor<4x5xf32>
        // becomes
        %s = relay.strided_slice %x {begin = [1], end = [2], strides = [1], axes = [0]} : (tensor<3x4x5xf32>) -> tensor<1x4x5xf32>
        %y = relay.reshape %s {newshape = [4, 5]} : (tensor<1x4x5xf32>) -> tensor<4x5xf32>
    """

    ROOT = "take"

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        x, ind = op.operands
        idx = constant_value(ind)
        a = op.attrs
        shape = list(shape_of(x.type))
        if idx is None or a.get("axis") is None or a.get("batch_dims", 0) or not _static(shape):
            return
        if idx.dtype.kind not in "iu" or idx.size == 0:
            return
        axis = int(a["axis"]) % len(shape)
        n = shape[axis]
        flat = idx.reshape(-1).astype(np.int64)
        mode = a.get("mode", "clip")
        if n == 0:
            return
        if mode == "clip":
            flat = np.clip(flat, 0, n - 1)
        elif mode == "wrap":
            flat = np.mod(flat, n)
        else:  # fast: negatives count from the end; out of range keeps the op (its error)
            if np.any((flat < -n) | (flat >= n)):
                return
            flat = np.where(flat < 0, flat + n, flat)
        first = int(flat[0])
        step = int(flat[1] - flat[0]) if flat.size > 1 else 1
        if step <= 0 or not np.array_equal(flat, first + step * np.arange(flat.size)):
            return
        b = OpBuilder(rewriter, op)
        sliced = b.op("strided_slice", [x], begin=[first], end=[first + step * (flat.size - 1) + 1],
                      strides=[step], axes=[axis])  # fmt: skip
        out = list(shape_of(op.results[0].type))
        res = sliced.results[0]
        if list(shape_of(res.type)) != out:
            res = b("reshape", [res], newshape=out)
        if res.type != op.results[0].type:
            for new in reversed(b.new_ops):
                rewriter.erase(new)
            return
        rewriter.replace(op, [], [res])


PATTERNS = (NoOpPad, UnitTransposeToReshape, TakeToSlice)
"""The rewrites, in the order each walk tries them."""


def canonicalize_views(module: ModuleOp, max_rounds: int = 20) -> int:
    """Apply ``PATTERNS`` until nothing changes (at most ``max_rounds`` walks); returns the
    number of rewrites."""
    return rewrite_to_fixpoint(module, [p() for p in PATTERNS], max_rounds)


@dataclass(frozen=True)
class CanonicalizeViewsPass(ModulePass):
    """Views written as work become views (see the module docstring)."""

    name = "canonicalize-views"
    opt_level: ClassVar[int] = 1

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        canonicalize_views(op)
