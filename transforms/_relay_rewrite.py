"""Small helpers shared by the graph passes (simplify-inference, fold-constant, fold-scale-axis, ...).

They build relay ops in front of an anchor op through a ``PatternRewriter`` (so the rewrite
walker learns about every new op), read constants, and test per-channel shapes.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from xrelay.dialects.relay import RELAY_OPS, ConstantOp, RelayOp, dtype_of, numpy_dtype, shape_of


class OpBuilder:
    """Insert relay ops before ``anchor`` with ``rewriter``: ``b("add", [x, y])`` returns the result."""

    def __init__(self, rewriter: PatternRewriter, anchor: Operation):
        self.rewriter = rewriter
        self.anchor = anchor
        self.new_ops: list[Operation] = []

    def op(self, name: str, operands: list[SSAValue], **attrs: Any) -> RelayOp:
        new = RELAY_OPS[name].make(operands, **attrs)
        self.rewriter.insert(new, InsertPoint.before(self.anchor))
        self.new_ops.append(new)
        return new

    def __call__(self, name: str, operands: list[SSAValue], **attrs: Any) -> SSAValue:
        return self.op(name, operands, **attrs).results[0]

    def const(self, array: np.ndarray, dtype: str, param_name: str | None = None) -> SSAValue:
        new = ConstantOp.from_numpy(np.asarray(array, dtype=numpy_dtype(dtype)), param_name, dtype)
        self.rewriter.insert(new, InsertPoint.before(self.anchor))
        self.new_ops.append(new)
        return new.result

    def scalar(self, value: float, dtype: str) -> SSAValue:
        """A rank-0 constant of ``dtype`` (Relay's ``MakeConstantScalar``)."""
        return self.const(np.array(value), dtype)


def constant_value(value: SSAValue) -> np.ndarray | None:
    """The array behind ``value`` when a ``relay.constant`` defines it, else None."""
    owner = value.owner
    if isinstance(owner, ConstantOp):
        return owner.numpy()
    return None


def tensor_dtype(value: SSAValue) -> str:
    t = value.type
    assert isinstance(t, TensorType)
    return dtype_of(t.element_type)


def rank_of(value: SSAValue) -> int:
    t = value.type
    assert isinstance(t, TensorType)
    return len(shape_of(t))


def single_user(value: SSAValue) -> Operation | None:
    """The only op using ``value`` (with one use), else None."""
    return value.get_user_of_unique_use()


def result_used(value: SSAValue) -> bool:
    return bool(value.uses)


def rewrite_to_fixpoint(module: Any, patterns: Any, max_rounds: int = 20) -> int:
    """Walk every relay op of ``module`` trying ``patterns`` in order (the first that rewrites
    an op wins), dropping dead ops after each walk, until a walk changes nothing (at most
    ``max_rounds`` walks); returns the number of rewrites."""
    from xdsl.transforms.dead_code_elimination import region_dce

    count = 0
    for _ in range(max_rounds):
        changed = 0
        for op in [o for o in module.walk() if isinstance(o, RelayOp)]:
            if op.parent is None:
                continue
            for pattern in patterns:
                rewriter = PatternRewriter(op)
                pattern.match_and_rewrite(op, rewriter)
                if rewriter.has_done_action:
                    changed += 1
                    break
        if not changed:
            break
        count += changed
        for top in module.ops:
            for region in top.regions:
                region_dce(region)
    return count


class RelayOpPattern(RewritePattern):
    """A pattern for the relay op named ``ROOT``: ``match_and_rewrite`` calls ``rewrite`` on
    each such op that ``accepts`` (by default every one)."""

    ROOT: ClassVar[str] = ""

    def accepts(self, op: RelayOp) -> bool:
        return True

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, RelayOp) and op.RELAY_NAME == self.ROOT and self.accepts(op):
            self.rewrite(op, rewriter)

    @abstractmethod
    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None: ...
