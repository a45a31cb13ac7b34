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
* ``GatherNDToTake``: ``gather_nd`` by constant tuples of one index (``indices`` ``(1,
  Y...)``) becomes ``take`` along the first axis (torch's ``qkv[:, :, :, [-2]]``: Falcon's
  key and value);
* ``TakeToSlice``: ``take`` along an axis by a constant index that is a scalar or an
  ascending arithmetic sequence (each index in range after the op's ``mode``: ``clip``
  clamps, ``wrap`` wraps, ``fast`` counts negatives from the end) becomes a
  ``strided_slice`` of that axis, then a ``reshape`` when the index is a scalar (the axis
  disappears) or has several dims;
* ``SliceBeforeTranspose`` and ``SliceBeforeReshape``: a ``strided_slice`` of a transpose or
  of a reshape (``reshape``, ``squeeze``, ``expand_dims``, ...) whose every user is a
  ``strided_slice`` slices the view's operand instead, then views the slice: attention's
  fused Q/K/V projection, reshaped to (..., 3, heads, dim) and permuted so that Q, K and V
  are the first axis before it is sliced (torchvision's ``MultiheadAttention``, timm's and
  Swin's attention), was a copy of the whole projection in the permuted order; now each of
  Q, K and V is a slice of the projection's own rows, which a oneDNN matmul reads in place
  as strides (``fold_views``) and the native movement kernels copy once;
* ``BroadcastIntoElementwise``: a ``broadcast_to`` read by broadcasting elementwise
  binary ops (``add``, ``multiply``, ...) whose results keep their shape when they read its
  operand instead is dropped from those reads (torch's ``x * y.expand_as(x)``: ECA's and
  squeeze-and-excitation's channel gates) -- the op broadcasts the operand itself, where the
  materialised broadcast was a copy of the whole tensor and a layout ConvertLayout could not
  carry through;
* ``SimplifyReshape`` (``simplify-expr``'s): the reshapes these rewrites leave in a row
  become one, so a pattern that expects one reshape between two ops sees it (the output
  projection, its view back to (batch, seq, width) and the residual add).

Every rewrite keeps the result type and the values bit for bit. The patterns run as one
greedy walk repeated until nothing changes; dead ops are dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter

from xrelay.dialects.relay import RelayOp, shape_of
from xrelay.dialects.relay.ops import strided_slice_bounds
from xrelay.transforms._relay_rewrite import (
    OpBuilder,
    RelayOpPattern,
    constant_value,
    rewrite_to_fixpoint,
)
from xrelay.transforms.simplify_expr import SimplifyReshape

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


class GatherNDToTake(RelayOpPattern):
    """``gather_nd`` by constant index tuples of one index each (``indices`` of shape
    ``(1, Y...)``, no batch axes) is ``take`` of those indices along the first axis (negative
    ones from the end: ``take``'s ``fast`` mode), which ``TakeToSlice`` makes a slice when
    they allow. torch exports ``qkv[:, :, :, [-2]]`` (Falcon's key and value out of its fused
    projection) as a transpose and a ``GatherND``: a copy of the whole projection permuted,
    then a gather of a quarter of it; as a slice it moves before the transpose (a view)::

        %i = relay.constant dense<[[2]]> : tensor<1x1xi64>
        %y = relay.gather_nd %x, %i : (tensor<4x3xf32>, tensor<1x1xi64>) -> tensor<1x3xf32>
        // becomes
        %t = relay.constant dense<[2]> : tensor<1xi64>
        %y = relay.take %x, %t {axis = 0, mode = "fast"}
            : (tensor<4x3xf32>, tensor<1xi64>) -> tensor<1x3xf32>
    """

    ROOT = "gather_nd"

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        x, ind = op.operands
        idx = constant_value(ind)
        if idx is None or op.attrs.get("batch_dims", 0) or idx.ndim < 1 or idx.shape[0] != 1:
            return
        if idx.dtype.kind not in "iu":
            return
        b = OpBuilder(rewriter, op)
        first = b.const(np.ascontiguousarray(idx[0]), str(idx.dtype))
        taken = b.op("take", [x, first], axis=0, mode="fast")
        if taken.results[0].type != op.results[0].type:
            for new in reversed(b.new_ops):
                rewriter.erase(new)
            return
        rewriter.replace(op, [], [taken.results[0]])


def _slice_bounds(op: RelayOp) -> list[tuple[int, int, int]] | None:
    """(begin, end, step) per axis of a static ``strided_slice`` with positive steps, else
    None (a negative step's end of -1 means "before 0", which no attribute repeats)."""
    a = op.attrs
    shape = list(shape_of(op.operands[0].type))
    if not _static(shape):
        return None
    bounds = strided_slice_bounds(shape, a["begin"], a["end"], a["strides"], a["axes"], a["slice_mode"])
    if bounds is None or any(s <= 0 for _, _, s in bounds):
        return None
    return [(b, max(e, b), s) for b, e, s in bounds]


def _all_slices(v) -> bool:
    """Every user of ``v`` is a static ``strided_slice`` with positive steps: moving each
    before the view leaves the view without users."""
    users = [u.operation for u in v.uses]
    return bool(users) and all(
        isinstance(u, RelayOp) and u.RELAY_NAME == "strided_slice" and _slice_bounds(u) is not None for u in users
    )


def _slice(b: OpBuilder, x, bounds: list[tuple[int, int, int]], shape: list[int]):
    """``strided_slice`` of ``x`` (of ``shape``) by ``bounds``, listing the narrowed axes only."""
    axes = [i for i, (lo, hi, s) in enumerate(bounds) if (lo, hi, s) != (0, shape[i], 1)]
    if not axes:
        return x
    return b("strided_slice", [x], begin=[bounds[i][0] for i in axes], end=[bounds[i][1] for i in axes],
             strides=[bounds[i][2] for i in axes], axes=axes)  # fmt: skip


class SliceBeforeTranspose(RelayOpPattern):
    """A ``strided_slice`` of a ``transpose`` whose users are all slices slices the
    transpose's operand along the permuted axes, then transposes the slice (any permutation,
    any sliced axes)::

        %t = relay.transpose %x {axes = [2, 0, 1]} : (tensor<4x5x3xf32>) -> tensor<3x4x5xf32>
        %s = relay.strided_slice %t {begin = [1], end = [2], strides = [1], axes = [0]} : (tensor<3x4x5xf32>) -> tensor<1x4x5xf32>
        // becomes
        %0 = relay.strided_slice %x {begin = [1], end = [2], strides = [1], axes = [2]} : (tensor<4x5x3xf32>) -> tensor<4x5x1xf32>
        %s = relay.transpose %0 {axes = [2, 0, 1]} : (tensor<4x5x1xf32>) -> tensor<1x4x5xf32>
    """

    ROOT = "strided_slice"

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        t = op.operands[0].owner
        if not (isinstance(t, RelayOp) and t.RELAY_NAME == "transpose" and _all_slices(t.results[0])):
            return
        bounds = _slice_bounds(op)
        x = t.operands[0]
        shape = list(shape_of(x.type))
        if bounds is None or not _static(shape):
            return
        n = len(shape)
        axes = t.attrs.get("axes")
        axes = list(range(n))[::-1] if not axes else [int(a) % n for a in axes]
        inner = [(0, d, 1) for d in shape]
        for out_axis, in_axis in enumerate(axes):
            inner[in_axis] = bounds[out_axis]
        b = OpBuilder(rewriter, op)
        sliced = _slice(b, x, inner, shape)
        new = b("transpose", [sliced], axes=axes)
        if new.type != op.results[0].type:
            for o in reversed(b.new_ops):
                rewriter.erase(o)
            return
        rewriter.replace(op, [], [new])


def reshape_slice(in_shape: list[int], out_shape: list[int], bounds: list[tuple[int, int, int]]) -> list[tuple[int, int, int]] | None:
    """The bounds on ``in_shape`` that select the same elements, in the same order, as
    ``bounds`` on its reshape ``out_shape``, or None if no slice of the input does. One
    axis may be narrowed: it must lead its group (the shortest runs of input and output
    axes longer than 1 with equal products; axes of 1 belong to none), and its range,
    counted in elements of the group, must be whole rows of the input group's leading axis;
    a step other than 1 needs that axis to be the output axis itself (same inner extent)."""
    narrowed = [i for i, (lo, hi, s) in enumerate(bounds) if (lo, hi, s) != (0, out_shape[i], 1)]
    if len(narrowed) != 1:
        return None
    axis = narrowed[0]
    lo, hi, step = bounds[axis]
    if out_shape[axis] == 1 or 0 in in_shape:
        return None
    ins = [i for i, d in enumerate(in_shape) if d != 1]
    outs = [i for i, d in enumerate(out_shape) if d != 1]
    i = j = 0
    while i < len(ins) and j < len(outs):
        i2, j2 = i + 1, j + 1
        pi, po = in_shape[ins[i]], out_shape[outs[j]]
        while pi != po:
            if pi < po:
                pi *= in_shape[ins[i2]]
                i2 += 1
            else:
                po *= out_shape[outs[j2]]
                j2 += 1
        if axis in outs[j:j2]:
            if outs[j] != axis:
                return None  # an inner axis of its group: not one slice of the input
            lead = ins[i]
            inner_out = math.prod(out_shape[k] for k in outs[j + 1 : j2])
            inner_in = math.prod(in_shape[k] for k in ins[i + 1 : i2])
            if step != 1 and inner_out != inner_in:
                return None
            if (lo * inner_out) % inner_in or (hi * inner_out) % inner_in:
                return None
            new = [(0, d, 1) for d in in_shape]
            new[lead] = (lo * inner_out // inner_in, hi * inner_out // inner_in, step)
            return new
        i, j = i2, j2
    return None


class SliceBeforeReshape(RelayOpPattern):
    """A ``strided_slice`` of a reshape (``reshape``, ``squeeze``, ``expand_dims``,
    ``nn.batch_flatten``, ...) whose users are all slices slices the reshape's operand
    where the same elements lie (``reshape_slice``), then reshapes the slice::

        %r = relay.reshape %x {newshape = [4, 3, 6]} : (tensor<4x18xf32>) -> tensor<4x3x6xf32>
        %s = relay.strided_slice %r {begin = [1], end = [2], strides = [1], axes = [1]} : (tensor<4x3x6xf32>) -> tensor<4x1x6xf32>
        // becomes
        %0 = relay.strided_slice %x {begin = [6], end = [12], strides = [1], axes = [1]} : (tensor<4x18xf32>) -> tensor<4x6xf32>
        %s = relay.reshape %0 {newshape = [4, 1, 6]} : (tensor<4x6xf32>) -> tensor<4x1x6xf32>
    """

    ROOT = "strided_slice"

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        r = op.operands[0].owner
        if not (isinstance(r, RelayOp) and r.RESHAPE_ONLY and len(r.operands) == 1 and _all_slices(r.results[0])):
            return
        x = r.operands[0]
        in_shape, mid = list(shape_of(x.type)), list(shape_of(r.results[0].type))
        out = list(shape_of(op.results[0].type))
        bounds = _slice_bounds(op)
        if bounds is None or not (_static(in_shape) and _static(mid) and _static(out)) or x.type.element_type != op.results[0].type.element_type:
            return
        inner = reshape_slice(in_shape, mid, bounds)
        if inner is None:
            return
        b = OpBuilder(rewriter, op)
        new = _slice(b, x, inner, in_shape)
        if new.type != op.results[0].type:
            new = b("reshape", [new], newshape=out)
        if new.type != op.results[0].type:
            for o in reversed(b.new_ops):
                rewriter.erase(o)
            return
        rewriter.replace(op, [], [new])


_BROADCASTING = frozenset({
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "floor_divide", "floor_mod",
})  # fmt: skip
"""Elementwise binary ops that broadcast their operands by numpy's rules."""


class BroadcastIntoElementwise(RelayOpPattern):
    """A ``broadcast_to`` read by a broadcasting elementwise op whose result keeps its
    shape without it: the op reads the operand and broadcasts it itself::

        %e = relay.broadcast_to %g {shape = [1, 8, 4, 4]} : (tensor<1x8x1x1xf32>) -> tensor<1x8x4x4xf32>
        %y = relay.multiply %x, %e : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
        // becomes
        %y = relay.multiply %x, %g : (tensor<1x8x4x4xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x4x4xf32>

    Other reads (an op that does not broadcast, or whose result would shrink: both operands
    smaller than the broadcast) keep the ``broadcast_to``.
    """

    ROOT = "broadcast_to"

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        x = op.operands[0]
        if x.type.element_type != op.results[0].type.element_type:
            return
        small = tuple(shape_of(x.type))

        def reads_it_broadcast(use) -> bool:
            user = use.operation
            if not isinstance(user, RelayOp) or user.RELAY_NAME not in _BROADCASTING or len(user.operands) != 2:
                return False
            other = tuple(shape_of(user.operands[1 - use.index].type))
            out = tuple(shape_of(user.results[0].type))
            if not (_static(small) and _static(other) and _static(out)):
                return False
            try:
                return tuple(np.broadcast_shapes(small, other)) == out
            except ValueError:
                return False

        rewriter.replace_uses_with_if(op.results[0], x, reads_it_broadcast)


PATTERNS = (
    NoOpPad, UnitTransposeToReshape, GatherNDToTake, TakeToSlice, SliceBeforeTranspose,
    SliceBeforeReshape, BroadcastIntoElementwise, SimplifyReshape,
)  # fmt: skip
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
