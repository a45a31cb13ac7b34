"""Relay's dataflow pattern language on SSA values (``tvm.relay.dataflow_pattern``).

Patterns are built as in Relay and matched against an SSA value::

    conv = is_op("nn.conv2d")(wildcard(), is_constant())
    pat = is_op("nn.bias_add")(conv, wildcard()).optional(is_op("nn.relu"))
    pat.match(value)      # True when value is relu(bias_add(conv2d(_, const), _)) or without relu

Matching follows Relay's ``DFPatternMatcher``: a pattern node bound to a value keeps that value
(a wildcard used twice must match the same value twice), ``add`` and ``multiply`` also match
with their two operands swapped, ``|`` tries the left pattern first, ``has_attr`` compares an
op's Relay attributes (lists and tuples alike). A call pattern matches the result of a relay op
with as many operands as the pattern has arguments; ``is_tuple_get_item(p, i)`` matches result
``i`` of an op that ``p`` matches. ``a + b``, ``a - b``, ``a * b``, ``a / b`` build calls of
``add``, ``subtract``, ``multiply``, ``divide`` as in Relay.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from xrelay.dialects.relay import ConstantOp, RelayOp

__all__ = [
    "AltPattern",
    "AttrPattern",
    "CallPattern",
    "ConstantPattern",
    "DFPattern",
    "Match",
    "OpPattern",
    "TupleGetItemPattern",
    "VarPattern",
    "WildcardPattern",
    "is_constant",
    "is_op",
    "is_tuple_get_item",
    "is_var",
    "root_ops",
    "wildcard",
]

_COMMUTATIVE = frozenset({"add", "multiply"})


class DFPattern:
    """Base of every pattern node."""

    def __call__(self, *args: DFPattern) -> CallPattern:
        return CallPattern(self, list(args))

    def __or__(self, other: DFPattern) -> AltPattern:
        return AltPattern(self, other)

    def __add__(self, other: DFPattern) -> CallPattern:
        return is_op("add")(self, other)

    def __sub__(self, other: DFPattern) -> CallPattern:
        return is_op("subtract")(self, other)

    def __mul__(self, other: DFPattern) -> CallPattern:
        return is_op("multiply")(self, other)

    def __truediv__(self, other: DFPattern) -> CallPattern:
        return is_op("divide")(self, other)

    def has_attr(self, attrs: Mapping[str, Any]) -> AttrPattern:
        return AttrPattern(self, dict(attrs))

    def optional(self, option_constructor: Any) -> AltPattern:
        """Relay's ``optional``: ``self | option_constructor(self)``."""
        return self | option_constructor(self)

    def match(self, value: SSAValue) -> bool:
        return Match().match(self, value)


class WildcardPattern(DFPattern):
    """Matches any value."""


class ConstantPattern(DFPattern):
    """Matches the result of a ``relay.constant``."""


class VarPattern(DFPattern):
    """Matches a function parameter (named ``name`` when given)."""

    def __init__(self, name: str = ""):
        self.name = name


class OpPattern(DFPattern):
    """An operator by its Relay name; call it with argument patterns."""

    def __init__(self, name: str):
        self.name = name


class CallPattern(DFPattern):
    def __init__(self, op: DFPattern, args: Sequence[DFPattern] | None):
        self.op = op
        self.args = None if args is None else list(args)


class AltPattern(DFPattern):
    def __init__(self, left: DFPattern, right: DFPattern):
        self.left = left
        self.right = right


class AttrPattern(DFPattern):
    def __init__(self, pattern: DFPattern, attrs: dict[str, Any]):
        self.pattern = pattern
        self.attrs = attrs


class TupleGetItemPattern(DFPattern):
    def __init__(self, tuple_pattern: DFPattern, index: int):
        self.tuple = tuple_pattern
        self.index = index


def wildcard() -> WildcardPattern:
    return WildcardPattern()


def is_constant() -> ConstantPattern:
    return ConstantPattern()


def is_var(name: str = "") -> VarPattern:
    return VarPattern(name)


def is_op(name: str) -> OpPattern:
    return OpPattern(name)


def is_tuple_get_item(tuple_pattern: DFPattern, index: int) -> TupleGetItemPattern:
    return TupleGetItemPattern(tuple_pattern, index)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def root_ops(pattern: DFPattern) -> frozenset[str] | None:
    """The Relay op names whose results can match ``pattern`` (``Match.match``), or None
    when the pattern may match other values too (a wildcard); a caller trying the pattern
    at every op of a block skips the others without starting a match::

        root_ops(is_op("nn.relu")(is_op("add")(wildcard(), wildcard())))  # {"nn.relu"}
        root_ops(is_op("add")(wildcard(), wildcard()) | wildcard())        # None
    """
    if isinstance(pattern, CallPattern):
        return _callee_ops(pattern.op)
    if isinstance(pattern, TupleGetItemPattern):
        if not isinstance(pattern.tuple, CallPattern):
            return frozenset()
        return _callee_ops(pattern.tuple.op)
    if isinstance(pattern, AttrPattern):
        if isinstance(pattern.pattern, OpPattern | AltPattern):
            return frozenset()  # (a callee's pattern: it matches no value)
        return root_ops(pattern.pattern)
    if isinstance(pattern, AltPattern):
        left, right = root_ops(pattern.left), root_ops(pattern.right)
        return None if left is None or right is None else left | right
    return None


def _callee_ops(pattern: DFPattern) -> frozenset[str] | None:
    """The op names ``Match._op_matches`` can accept for ``pattern``."""
    if isinstance(pattern, OpPattern):
        return frozenset((pattern.name,))
    if isinstance(pattern, AltPattern):
        left, right = _callee_ops(pattern.left), _callee_ops(pattern.right)
        return None if left is None or right is None else left | right
    if isinstance(pattern, AttrPattern):
        return _callee_ops(pattern.pattern)
    return frozenset()


class Match:
    """One matching attempt: ``memo`` binds pattern nodes to the values they matched."""

    def __init__(self) -> None:
        self.memo: dict[DFPattern, SSAValue | Operation] = {}
        self.chosen: dict[AltPattern, DFPattern] = {}  # the branch each alternative matched by

    def match(self, pattern: DFPattern, value: SSAValue) -> bool:
        bound = self.memo.get(pattern)
        if bound is not None:
            return bound is value
        saved = dict(self.memo)
        if self._match(pattern, value):
            self.memo[pattern] = value
            return True
        self.memo = saved
        return False

    def _match(self, pattern: DFPattern, value: SSAValue) -> bool:
        if isinstance(pattern, WildcardPattern):
            return True
        if isinstance(pattern, ConstantPattern):
            return isinstance(value.owner, ConstantOp)
        if isinstance(pattern, VarPattern):
            return isinstance(value, BlockArgument) and (
                not pattern.name or value.name_hint == pattern.name
            )
        if isinstance(pattern, AltPattern):
            for branch in (pattern.left, pattern.right):
                if self.match(branch, value):
                    self.chosen[pattern] = branch
                    return True
            return False
        if isinstance(pattern, AttrPattern):
            if isinstance(pattern.pattern, OpPattern | AltPattern):
                return False  # an op with attributes is used as a callee, not as a value
            if not self.match(pattern.pattern, value):
                return False
            return self._attrs_match(value.owner, pattern.attrs)
        if isinstance(pattern, TupleGetItemPattern):
            if not isinstance(value, OpResult) or value.index != pattern.index:
                return False
            return self._match_call(pattern.tuple, value, any_result=True)
        if isinstance(pattern, CallPattern):
            return self._match_call(pattern, value, any_result=False)
        return False

    @staticmethod
    def _attrs_match(op: Any, attrs: Mapping[str, Any]) -> bool:
        if not isinstance(op, RelayOp):
            return False
        have = op.attrs
        return all(k in have and _same(have[k], v) for k, v in attrs.items())

    def _op_matches(self, pattern: DFPattern, op: RelayOp) -> bool:
        if isinstance(pattern, OpPattern):
            return op.RELAY_NAME == pattern.name
        if isinstance(pattern, AltPattern):
            return self._op_matches(pattern.left, op) or self._op_matches(pattern.right, op)
        if isinstance(pattern, AttrPattern):
            return self._op_matches(pattern.pattern, op) and self._attrs_match(op, pattern.attrs)
        return False

    def _match_call(self, pattern: DFPattern, value: SSAValue, *, any_result: bool) -> bool:
        if not isinstance(pattern, CallPattern):
            return False
        op = value.owner
        if not isinstance(op, RelayOp) or not isinstance(value, OpResult):
            return False
        if not any_result and len(op.results) != 1:
            return False
        bound = self.memo.get(pattern)
        if bound is not None:
            return bound is op
        if not self._op_matches(pattern.op, op):
            return False
        operands = list(op.operands)
        if pattern.args is None:
            self.memo[pattern] = op
            return True
        if len(operands) != len(pattern.args):
            return False
        saved = dict(self.memo)
        orders = [operands]
        if op.RELAY_NAME in _COMMUTATIVE and len(operands) == 2:
            orders.append(operands[::-1])
        for order in orders:
            if all(self.match(p, v) for p, v in zip(pattern.args, order, strict=True)):
                self.memo[pattern] = op
                return True
            self.memo = dict(saved)
        return False
