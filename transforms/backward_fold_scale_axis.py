"""``backward-fold-scale-axis``: fold an output scale back into conv2d/dense weights.

Relay's BackwardFoldScaleAxis (src/relay/transforms/fold_scale_axis.cc) on SSA. The pattern is

    conv2d | dense  ->  [add | subtract | bias_add with a per-channel operand]  ->  [relu | leaky_relu]
                    ->  multiply(y, scale)       # scale: constant, per output channel

and it becomes a conv2d/dense with ``weight * scale`` (the added per-channel operands scaled
too), so that fold-constant turns the product into new weights. This is how the batch norm
after a convolution disappears.

Two phases, both linear in the number of ops:

1. *Analysis* in program order gives each value a message when it could absorb a per-channel
   scale: a conv2d/dense result (along its output channel axis), a relu/leaky_relu of such a
   value (then only a positive scale may pass), an add/subtract of two such values (same axis)
   or of one such value and an operand broadcasting along that axis only, a bias_add along that
   axis. As in Relay, only a value with exactly one use gets a message, so the rewritten chain
   is never shared.
2. *Rewrite* of each ``multiply(y, s)`` (either operand order) where ``y`` has a message, ``s``
   broadcasts along the message's axes only (any expression, as in Relay: a reshaped constant
   too), the product has ``y``'s type, and ``s`` is a positive constant (seen through shape
   ops) if a relu lies on the way: the chain under ``y`` is rebuilt with the scale pushed
   into the weights, and the multiply disappears.

As in Relay, the scale reaches each weight as an expression: ``squeeze`` drops the scale's
unit axes (MatchBroadcastToLeftAxes) and ``expand_dims`` gives it the weight's trailing unit
axes (ExpandBiasToMatchAxis), so before fold-constant the IR reads as Relay's does:

    %s = squeeze(%scale, axis=[1, 2])                  // (O, 1, 1) -> (O)
    %e = expand_dims(%s, axis=1, num_newaxis=3)        // (O) -> (O, 1, 1, 1)
    nn.conv2d(%x, multiply(%w, %e), ...)

Blocked channel axes (``NCHW2c``) get ``reshape`` instead of ``expand_dims``
(ReshapeToMatchAxis). The ops computing the scale move before the chain when they come after
it. A constant scale that is one value per channel (a 1 on the channel axis, beyond Relay) is
materialised as a constant in the weight's broadcast shape instead. conv2d and conv3d of any
``groups`` are accepted (scaling output channel o only touches ``weight[o]``); only float
tensors are folded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from xrelay.dialects.relay import ConstantOp, RelayOp
from xrelay.transforms._scale_axis import (
    CONVS,
    Message,
    all_positive_constant,
    broadcasts_along,
    channel_vector,
    const_before,
    conv_info,
    conv_output_scale,
    expand_to_axes,
    is_dense,
    is_float,
    make_before,
    reshape_or_expand,
    reshape_to_axes,
    squeeze_axes,
    static_shape,
    vector_for,
)

_ACTIVATIONS = ("nn.relu", "nn.leaky_relu")
_ADD_SUB = ("add", "subtract")


def _message_of(op: Operation, msg: dict[SSAValue, Message]) -> Message | None:
    """What ``op``'s (single) result could absorb, from its operands' messages."""
    if not isinstance(op, RelayOp) or len(op.results) != 1 or not is_float(op.results[0]):
        return None
    name = op.RELAY_NAME
    if name in CONVS:
        info = conv_info(op)
        return None if info is None else Message(info.out_axes, False)
    if name == "nn.dense":
        if not is_dense(op):
            return None
        return Message((len(static_shape(op.results[0]) or ()) - 1,), False)
    if name in _ACTIVATIONS:
        m = msg.get(op.operands[0])
        return None if m is None else Message(m.axes, True)
    if name in _ADD_SUB:
        a, b = op.operands
        ma, mb = msg.get(a), msg.get(b)
        res = op.results[0]
        if ma is not None and mb is not None:
            if ma.axes == mb.axes and a.type == res.type and b.type == res.type:
                return Message(ma.axes, ma.require_positive or mb.require_positive)
            return None
        if ma is not None and a.type == res.type and broadcasts_along(b, a, ma.axes):
            return ma
        if mb is not None and b.type == res.type and broadcasts_along(a, b, mb.axes):
            return mb
        return None
    if name == "nn.bias_add":
        m = msg.get(op.operands[0])
        rank = len(static_shape(op.results[0]) or ())
        axis = op.attrs["axis"]
        if m is not None and rank and ((axis + rank if axis < 0 else axis),) == m.axes:
            return m
        return None
    return None


def analyse(ops: list[Operation]) -> dict[SSAValue, Message]:
    """Messages of every value that could absorb a per-channel output scale."""
    msg: dict[SSAValue, Message] = {}
    for op in ops:
        m = _message_of(op, msg)
        if m is not None and op.results[0].has_one_use():
            msg[op.results[0]] = m
    return msg


class _Order:
    """Program order of a block's ops, kept up to date as folds insert and move ops, so that
    "does ``a`` come before ``b``" costs O(1) amortised instead of a walk of the block.

    Keyed ops carry integer keys in block order (spaced ``GAP`` apart). Inserting an op leaves
    the keys of the others in the same relative order, so only new and moved ops lose theirs
    (``forget``); an op without a key gets one on demand between its nearest keyed
    neighbours, together with the unkeyed ops around it. When a gap has no room left, the
    whole block is numbered again (rare: a gap takes 32 halvings before that).
    """

    GAP = 1 << 32

    def __init__(self, block: Block):
        self.block = block
        self.key: dict[Operation, int] = {}
        self._renumber()

    def _renumber(self) -> None:
        self.key = {o: (i + 1) * self.GAP for i, o in enumerate(self.block.ops)}

    def forget(self, op: Operation) -> None:
        self.key.pop(op, None)

    def __call__(self, op: Operation) -> int:
        k = self.key.get(op)
        if k is not None:
            return k
        assert op.parent_block() is self.block
        before: list[Operation] = []
        prev = op.prev_op
        while prev is not None and prev not in self.key:
            before.append(prev)
            prev = prev.prev_op
        run = [*reversed(before), op]
        nxt = op.next_op
        while nxt is not None and nxt not in self.key:
            run.append(nxt)
            nxt = nxt.next_op
        lo = 0 if prev is None else self.key[prev]
        hi = self.key[nxt] if nxt is not None else lo + (len(run) + 1) * self.GAP
        step = (hi - lo) // (len(run) + 1)
        if step == 0:
            self._renumber()
        else:
            for i, o in enumerate(run):
                self.key[o] = lo + (i + 1) * step
        return self.key[op]


class _Folder:
    def __init__(self, ops: list[Operation], msg: dict[SSAValue, Message]):
        self.position = {op: i for i, op in enumerate(ops)}
        self.orders: dict[Block, _Order] = {}
        self.msg = msg
        self.dead: list[Operation] = []

    def chain(self, root: SSAValue) -> list[RelayOp]:
        """The ops under ``root`` that absorb the scale (those whose values have messages)."""
        nodes: list[RelayOp] = []
        stack = [root]
        while stack:
            v = stack.pop()
            op = v.owner
            assert isinstance(op, RelayOp)
            nodes.append(op)
            if op.RELAY_NAME in _ACTIVATIONS or op.RELAY_NAME == "nn.bias_add":
                stack.append(op.operands[0])
            elif op.RELAY_NAME in _ADD_SUB:
                stack.extend(o for o in op.operands if o in self.msg)
        nodes.sort(key=lambda o: self.position[o])
        return nodes

    def hoist(self, value: SSAValue, first: Operation) -> bool:
        """Make ``value`` available before ``first``: move the ops computing it (a constant,
        a reshape of one, ...) that come after ``first`` to just before it, in order. False
        when it depends on ``first`` itself (then it cannot be moved). Costs the size of
        ``value``'s computation, not of the block."""
        block = first.parent_block()
        assert block is not None
        order = self.orders.get(block) or self.orders.setdefault(block, _Order(block))
        at = order(first)
        moved: list[Operation] = []
        stack = [value]
        while stack:
            owner = stack.pop().owner
            if not isinstance(owner, Operation) or owner in moved or owner.parent_block() is not block:
                continue
            if order(owner) < at:
                continue
            if owner is first or not isinstance(owner, RelayOp | ConstantOp) or owner.regions:
                return False
            moved.append(owner)
            stack.extend(owner.operands)
        for op in sorted(moved, key=order):
            op.detach()
            block.insert_op_before(op, first)
        for op in moved:  # they now sit just before ``first``: keyed again on demand
            order.forget(op)
        return True

    def fold(self, mul: RelayOp, y: SSAValue, s: SSAValue, vec: np.ndarray | None, unit: list[int] | None) -> bool:
        """Fold ``mul = y * s`` into the chain under ``y``. With ``unit`` (the axes Relay
        squeezes off ``s``), Relay's expressions: ``squeeze(s)`` reshaped or expanded to meet
        each operand; else (a scale Relay does not match) constants made from ``vec``."""
        axes = self.msg[y].axes
        shape = static_shape(y)
        assert shape is not None
        chain = self.chain(y)
        sq: SSAValue | None = None
        if unit is not None:
            if not self.hoist(s, chain[0]):
                return False
            sq = make_before("squeeze", [s], chain[0], axis=unit) if unit else s
        elif vec is None:
            return False

        def factor(v: SSAValue, expr: Callable[[SSAValue], SSAValue], fallback: Callable[[], np.ndarray], op: Operation) -> SSAValue:
            return expr(sq) if sq is not None else const_before(fallback(), v, op)

        new: dict[SSAValue, SSAValue] = {}
        for op in chain:
            name = op.RELAY_NAME
            attrs = op.attrs
            if name in CONVS:
                info = conv_info(op)
                assert info is not None
                x, w = op.operands
                ws = static_shape(w)
                assert ws is not None
                f = factor(
                    w,
                    lambda sq, op=op, ws=ws, info=info: (
                        expand_to_axes(sq, len(ws), info.kernel_o, op)
                        if len(info.kernel_o) == 1
                        else reshape_to_axes(sq, ws, info.kernel_o, op)
                    ),
                    lambda info=info, ws=ws: conv_output_scale(info, ws, vec),  # type: ignore[arg-type]
                    op,
                )
                out = make_before(name, [x, make_before("multiply", [w, f], op)], op, **attrs)
            elif name == "nn.dense":
                x, w = op.operands
                f = factor(
                    w, lambda sq, op=op: expand_to_axes(sq, 2, (0,), op), lambda: vec.reshape(-1, 1), op  # type: ignore[union-attr]
                )
                out = make_before(name, [x, make_before("multiply", [w, f], op)], op, **attrs)
            elif name in _ACTIVATIONS:
                out = make_before(name, [new[op.operands[0]]], op, **attrs)
            elif name == "nn.bias_add":
                b = op.operands[1]
                f = factor(b, lambda sq: sq, lambda: vec, op)  # type: ignore[arg-type,return-value]
                out = make_before(name, [new[op.operands[0]], make_before("multiply", [b, f], op)], op, **attrs)
            else:  # add / subtract
                operands = []
                for o in op.operands:
                    if o in new:
                        operands.append(new[o])
                    else:
                        f = factor(
                            o,
                            lambda sq, op=op: reshape_or_expand(sq, shape, axes, op),
                            lambda o=o: vector_for(o, shape, axes, vec),  # type: ignore[arg-type]
                            op,
                        )
                        operands.append(make_before("multiply", [o, f], op))
                out = make_before(name, operands, op)
            new[op.results[0]] = out
            self.dead.append(op)
        mul.results[0].replace_all_uses_with(new[y])
        scale_owner = s.owner
        Rewriter.erase_op(mul)
        if isinstance(scale_owner, ConstantOp) and not scale_owner.result.uses:
            Rewriter.erase_op(scale_owner)
        return True


def fold_function(fn: func.FuncOp) -> int:
    """Fold every qualifying output scale in ``fn``; return how many multiplies went."""
    ops = list(fn.body.walk())
    msg = analyse(ops)
    folder = _Folder(ops, msg)
    folded = 0
    for op in ops:
        if not (isinstance(op, RelayOp) and op.RELAY_NAME == "multiply"):
            continue
        for y, s in (op.operands, op.operands[::-1]):
            m = msg.get(y)
            if m is None or y.type != op.results[0].type:
                continue
            vec = channel_vector(s, y, m.axes)
            unit = squeeze_axes(y, s, m.axes)
            if unit is None and vec is None:
                continue
            if m.require_positive and not all_positive_constant(s):
                continue
            if folder.fold(op, y, s, vec, unit):
                folded += 1
                break
    for op in reversed(folder.dead):
        if not any(r.uses for r in op.results):
            Rewriter.erase_op(op)
    return folded


@dataclass(frozen=True)
class BackwardFoldScaleAxisPass(ModulePass):
    """Fold per-channel output scales back into conv2d/dense weights."""

    name = "backward-fold-scale-axis"
    relay_name: ClassVar[str] = "BackwardFoldScaleAxis"
    opt_level: ClassVar[int] = 3
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in list(op.ops):
            if isinstance(fn, func.FuncOp) and not fn.is_declaration:
                fold_function(fn)
