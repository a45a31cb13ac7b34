"""``sink-reshape``: move a reshape down its elementwise chain to where the tensor is narrowest.

xrelay's rule (Relay has none), run before ``fuse-ops``. Relay's FuseOps fuses the elementwise
ops after a ``batch_matmul`` or ``dense`` into its function only up to the first op that is not
elementwise: a ``reshape`` ends the function. ONNX's 4-D attention product (``MatMul`` of
``(1, heads, seq, d)`` tensors) is imported as a 3-D ``batch_matmul`` and a reshape back to
4-D, and ``fake-quantization-to-integer`` writes the product's requantize after that reshape;
the product's function then returns its int32 sums and the next function requantizes them:
a 4-byte tensor between two steps, where the requantize could have run in the product's
kernel (``fast_int8._bmm_requant``) and handed on bytes.

A reshape (``reshape``, ``squeeze``, ``expand_dims``) whose result starts a chain of
elementwise or broadcast relay ops -- each value used once, each op's other operands
rank-0 values or one-element constants of at most the reshape's input rank, no ``axis``
attribute, the result of the reshape's shape -- moves below the chain's first op whose
result has the narrowest element type of the chain, when that type is narrower than the
reshape's input: the ops up to there run on the reshape's input, and the reshape then views
their result. Reshapes keep the elements in order, and the ops are elementwise with
single-value other operands, so every value is the same bit for bit::

    %r = relay.reshape %acc {newshape = [1, 2, 3, 4]} : (tensor<2x3x4xi32>) -> tensor<1x2x3x4xi32>
    %f = relay.cast %r {dtype = "float32"} : (tensor<1x2x3x4xi32>) -> tensor<1x2x3x4xf32>
    %q = relay.cast %f {dtype = "uint8"} : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xui8>
    %d = relay.cast %q {dtype = "float64"} : (tensor<1x2x3x4xui8>) -> tensor<1x2x3x4xf64>
    // becomes
    %0 = relay.cast %acc {dtype = "float32"} : (tensor<2x3x4xi32>) -> tensor<2x3x4xf32>
    %1 = relay.cast %0 {dtype = "uint8"} : (tensor<2x3x4xf32>) -> tensor<2x3x4xui8>
    %q = relay.reshape %1 {newshape = [1, 2, 3, 4]} : (tensor<2x3x4xui8>) -> tensor<1x2x3x4xui8>
    %d = relay.cast %q {dtype = "float64"} : (tensor<1x2x3x4xui8>) -> tensor<1x2x3x4xf64>
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter

from xrelay.dialects.relay import ConstantOp, OpPattern, RelayOp, byte_size
from xrelay.transforms._relay_rewrite import OpBuilder, single_user
from xrelay.transforms.simplify_expr import _RelayPattern, _static_shape, simplify

__all__ = ["SinkReshape", "SinkReshapePass", "sink_reshape"]


class SinkReshape(_RelayPattern):
    """A reshape moved below its elementwise chain to the chain's narrowest value (see the
    module docstring)."""

    ROOTS = ("reshape", "squeeze", "expand_dims")

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        before, after = _static_shape(op.operands[0]), _static_shape(op.results[0])
        if before is None or after is None:
            return
        chain: list[RelayOp] = []
        v = op.results[0]
        while True:
            user = single_user(v)
            if not _elementwise(user, v, len(before)) or _static_shape(user.results[0]) != after:
                break
            chain.append(user)
            v = user.results[0]
        sizes = [byte_size(u.results[0].type) for u in chain]  # (all of the same element count)
        if not sizes or min(sizes) >= byte_size(op.operands[0].type):
            return
        last = sizes.index(min(sizes))
        b = OpBuilder(rewriter, chain[last])
        x, prev = op.operands[0], op.results[0]
        for u in chain[: last + 1]:
            x, prev = b(u.RELAY_NAME, [x if o is prev else o for o in u.operands], **u.attrs), u.results[0]
        rewriter.replace(chain[last], [], [b("reshape", [x], newshape=list(after))])


def _elementwise(user: object, v: object, rank: int) -> bool:
    """Whether ``user`` computes its result elementwise from ``v`` alone: an elementwise or
    broadcast relay op without an axis, whose other operands are single values that do not
    raise the rank above ``rank`` (the reshape's input's)."""
    if not isinstance(user, RelayOp) or isinstance(user, ConstantOp) or len(user.results) != 1:
        return False
    if user.PATTERN > OpPattern.BROADCAST or getattr(user, "STATEFUL", False):
        return False
    if any(k in user.ATTRS for k in ("axis", "axes")) or sum(o is v for o in user.operands) != 1:
        return False
    for o in user.operands:
        if o is v:
            continue
        shape = _static_shape(o)
        if shape is None or (shape != () and not (isinstance(o.owner, ConstantOp) and len(shape) <= rank)):
            return False
        if any(d != 1 for d in shape):
            return False
    return True


def sink_reshape(module: ModuleOp) -> None:
    """Move every reshape below its elementwise chain to the narrowest value (``SinkReshape``)."""
    simplify(module, (SinkReshape,))


@dataclass(frozen=True)
class SinkReshapePass(ModulePass):
    """Move reshapes down their elementwise chains to the narrowest value."""

    name = "sink-reshape"
    opt_level: ClassVar[int] = 1
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        sink_reshape(op)
