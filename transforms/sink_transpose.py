"""``sink-transpose``: move a ``transpose`` below the elementwise binary op that reads it, so
it meets the next transpose or layout transform and cancels (``simplify-expr``'s
``SimplifyTranspose``/``SimplifyNoOpTranspose``).

A model that permutes to channels-last itself around some ops (ConvNeXt's blocks: the MLP on
``(N, H, W, C)``, then ``permute(0, 3, 1, 2)``, the layer scale and the residual add in
NCHW) leaves, after ``ConvertLayout`` made the convolutions NHWC, each block's layer scale
and residual add on transposed views of NHWC tensors, with a layout transform back to NHWC
after them: a native step reading two transposed tensors and a reorder per block. Sunk
below the ``multiply`` and the ``add``, the transposes compose with that layout transform to
the identity and disappear; the elementwise ops then read and write NHWC tensors in order.
Not a Relay pass (Relay's ConvertLayout handles transposes it inserted itself).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter

from xrelay.dialects.relay import ConstantOp, RelayOp, shape_of
from xrelay.transforms._relay_rewrite import OpBuilder
from xrelay.transforms.simplify_expr import (
    SimplifyNoOpTranspose,
    SimplifyTranspose,
    _axis_order,
    _dtype,
    _op,
    _RelayPattern,
    _static_shape,
    simplify,
)

__all__ = ["SinkTranspose", "SinkTransposePass", "sink_transpose"]


class SinkTranspose(_RelayPattern):
    """An elementwise binary op of two transposes by the same permutation (``transpose`` or a
    ``layout_transform`` between plain layouts), or of a transpose and a constant, becomes the transpose of the op on the untransposed operands (the
    constant permuted back, at the op's rank); each transpose must have no other user (no
    work is added) and the op must not broadcast the transposed operand::

        %a = relay.transpose %x {axes = [0, 3, 1, 2]} : (tensor<1x4x4x8xf32>) -> tensor<1x8x4x4xf32>
        %m = relay.multiply %a, %g : (tensor<1x8x4x4xf32>, tensor<8x1x1xf32>) -> tensor<1x8x4x4xf32>
        %b = relay.transpose %y {axes = [0, 3, 1, 2]} : (tensor<1x4x4x8xf32>) -> tensor<1x8x4x4xf32>
        %s = relay.add %m, %b : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
        // becomes
        %m = relay.multiply %x, %g2 : (tensor<1x4x4x8xf32>, tensor<1x1x1x8xf32>) -> tensor<1x4x4x8xf32>
        %s = relay.add %m, %y : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
        %t = relay.transpose %s {axes = [0, 3, 1, 2]} : (tensor<1x4x4x8xf32>) -> tensor<1x8x4x4xf32>
    """

    ROOTS = ("add", "subtract", "multiply", "divide", "maximum", "minimum")

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        out = _static_shape(op.results[0])
        if out is None or len(op.operands) != 2:
            return
        ndim = len(out)
        order = None
        sources = []
        for v in op.operands:
            t = _op(v, "transpose", "layout_transform")
            if t is not None and v.has_one_use() and _static_shape(v) == out:
                axes = _axis_order(t, ndim)
                if axes is None or (order is not None and axes != order):
                    return
                order = axes
                sources.append(("transpose", t.operands[0]))
            elif isinstance(v.owner, ConstantOp) and len(shape_of(v.type)) <= ndim:
                sources.append(("constant", v.owner))
            else:
                return
        if order is None or _dtype(op.operands[0]) != _dtype(op.operands[1]):
            return
        inverse = [order.index(i) for i in range(ndim)]
        b = OpBuilder(rewriter, op)
        operands = []
        for kind, src in sources:
            if kind == "transpose":
                operands.append(src)
                continue
            value = src.numpy()
            full = value.reshape((1,) * (ndim - value.ndim) + value.shape)
            operands.append(b.const(np.ascontiguousarray(np.transpose(full, inverse)), _dtype(src.results[0])))
        inner = b(op.RELAY_NAME, operands)
        rewriter.replace(op, [], [b("transpose", [inner], axes=order)])


SINK_TRANSPOSE = (SinkTranspose, SimplifyTranspose, SimplifyNoOpTranspose)
"""The rewrites, repeated to a fixpoint: sink, then compose and cancel."""


def sink_transpose(module: ModuleOp) -> None:
    """Sink every transpose below the elementwise ops it can pass (``SinkTranspose``) and
    cancel the transposes that meet."""
    simplify(module, SINK_TRANSPOSE)


@dataclass(frozen=True)
class SinkTransposePass(ModulePass):
    """Sink transposes below elementwise binary ops and cancel those that meet."""

    name = "sink-transpose"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        sink_transpose(op)

