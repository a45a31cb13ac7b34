"""``relay.analysis``: free variables and graph traversal of Python Relay expressions.

Traversals are iterative, so deep networks (ResNet-152 is a chain of ~1,500 calls) do not
hit Python's recursion limit. Shared nodes are visited once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from enum import IntEnum
from typing import Any

from xrelay.dialects import module_op
from xrelay.dialects.relay import RelayOp
from xrelay.relay.expr import (
    Call,
    Constant,
    Constructor,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    Match,
    Op,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    TupleWrapper,
    Var,
    pattern_variables,
)

__all__ = [
    "Feature",
    "all_vars",
    "bound_vars",
    "children",
    "detect_feature",
    "free_vars",
    "list_op_freqs",
    "post_order",
    "post_order_visit",
]


def children(expr: Expr) -> tuple[Expr, ...]:
    """The direct sub-expressions of ``expr``, in Relay's visiting order."""
    if isinstance(expr, Call):
        return (expr.op, *expr.args)
    if isinstance(expr, Tuple):
        return expr.fields
    if isinstance(expr, TupleGetItem):
        return (expr.tuple_value,)
    if isinstance(expr, Function):
        return (*expr.params, expr.body)
    if isinstance(expr, Let):  # the value first: it is evaluated before the variable is bound
        return (expr.value, expr.var, expr.body)
    if isinstance(expr, If):
        return (expr.cond, expr.true_branch, expr.false_branch)
    if isinstance(expr, RefCreate):
        return (expr.value,)
    if isinstance(expr, RefRead):
        return (expr.ref,)
    if isinstance(expr, RefWrite):
        return (expr.ref, expr.value)
    if isinstance(expr, Match):  # the pattern variables are bound in their clause
        return (expr.data, *(v for c in expr.clauses for v in (*pattern_variables(c.lhs), c.rhs)))
    return ()


def post_order(expr: Expr, into_functions: bool = True) -> Iterator[Expr]:
    """Every node reachable from ``expr`` once, children before parents, left to right."""
    if isinstance(expr, TupleWrapper):
        expr = expr.astuple()
    seen: set[int] = set()
    stack: list[tuple[Expr, bool]] = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            yield node
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        kids = children(node) if into_functions or not isinstance(node, Function) else ()
        for kid in reversed(kids):
            if id(kid) not in seen:
                stack.append((kid, False))


def post_order_visit(expr: Expr, fvisit: Callable[[Expr], object]) -> None:
    """Call ``fvisit`` on every node of ``expr`` in post-order (each node once), like Relay."""
    for node in post_order(expr):
        fvisit(node)


def _free_vars(expr: Expr, memo: dict[int, list[Var]]) -> list[Var]:
    """Free vars of ``expr`` in order of first appearance; function literals are memoised."""
    out: list[Var] = []
    seen: set[int] = set()
    # depth-first, left to right, recording vars when first met (pre-order for leaves)
    stack: list[Expr] = [expr.body] if isinstance(expr, Function) else [expr]
    bound = {id(p) for p in expr.params} if isinstance(expr, Function) else set()
    visited: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        if isinstance(node, Var):
            if id(node) not in bound and id(node) not in seen:
                seen.add(id(node))
                out.append(node)
            continue
        if isinstance(node, Function):
            inner = memo.get(id(node))
            if inner is None:
                inner = memo[id(node)] = _free_vars(node, memo)
            for v in inner:
                if id(v) not in bound and id(v) not in seen:
                    seen.add(id(v))
                    out.append(v)
            continue
        if isinstance(node, Let):
            bound.add(id(node.var))
        if isinstance(node, Match):
            bound.update(id(v) for c in node.clauses for v in pattern_variables(c.lhs))
        stack.extend(reversed(children(node)))
    return out


def free_vars(expr: Expr) -> list[Var]:
    """The free variables of ``expr`` in order of first appearance (depth-first, args left to
    right), as Relay's ``free_vars``; a function's own parameters are bound."""
    if isinstance(expr, TupleWrapper):
        expr = expr.astuple()
    return _free_vars(expr, {})


def bound_vars(expr: Expr) -> list[Var]:
    """Variables bound by function literals inside ``expr`` (parameters), in post-order."""
    out: list[Var] = []
    for node in post_order(expr):
        if isinstance(node, Function):
            out.extend(p for p in node.params if p not in out)
    return out


def all_vars(expr: Expr) -> list[Var]:
    """Every variable in ``expr``, free or bound, in post-order."""
    return [n for n in post_order(expr) if isinstance(n, Var)]


def list_op_freqs(mod: Any) -> dict[str, int]:
    """Relay's ``list_op_freqs``: how many calls of each op the module has (all functions), by
    Relay name (``{"nn.conv2d": 3, ...}``)."""
    from collections import Counter


    return dict(Counter(op.RELAY_NAME for op in module_op(mod).walk() if isinstance(op, RelayOp)))


class Feature(IntEnum):
    """The language features a program may contain (Relay's ``relay.analysis.Feature``).
    """

    fVar = 0
    fGlobalVar = 1
    fConstant = 2
    fTuple = 3
    fTupleGetItem = 4
    fFunction = 5
    fOp = 6
    fCall = 7
    fLet = 8
    fIf = 9
    fRefCreate = 10
    fRefRead = 11
    fRefWrite = 12
    fConstructor = 13
    fMatch = 14
    fGraph = 15
    """A non-atomic sub-expression is shared: the program is a graph, not a tree."""
    fLetRec = 16
    """A let binds a function that refers to its own variable."""


_FEATURE_OF: tuple[tuple[type, Feature], ...] = (
    (Var, Feature.fVar),
    (GlobalVar, Feature.fGlobalVar),
    (Constant, Feature.fConstant),
    (Tuple, Feature.fTuple),
    (TupleGetItem, Feature.fTupleGetItem),
    (Function, Feature.fFunction),
    (Op, Feature.fOp),
    (Call, Feature.fCall),
    (Let, Feature.fLet),
    (If, Feature.fIf),
    (RefCreate, Feature.fRefCreate),
    (RefRead, Feature.fRefRead),
    (RefWrite, Feature.fRefWrite),
    (Constructor, Feature.fConstructor),
    (Match, Feature.fMatch),
)
_ATOMIC = (Var, GlobalVar, Constant, Op, Constructor)


def _features(expr: Expr, out: set[Feature]) -> None:
    if isinstance(expr, TupleWrapper):
        expr = expr.astuple()
    seen: set[int] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        anf = getattr(node, "_a_normal_form", False)
        if id(node) in seen:
            # as Relay: reaching a non-atomic node twice means it is shared; in A-normal form
            # it is a let-bound variable used twice
            if not isinstance(node, _ATOMIC):
                out.add(Feature.fVar if anf else Feature.fGraph)
            continue
        seen.add(id(node))
        if anf:  # a call of a module in A-normal form: Relay's form binds it with a let
            out.update((Feature.fLet, Feature.fVar))
        for cls, feature in _FEATURE_OF:
            if isinstance(node, cls):
                out.add(feature)
                break
        if isinstance(node, Let) and isinstance(node.value, Function):
            if any(v is node.var for v in free_vars(node.value)):
                out.add(Feature.fLetRec)
        stack.extend(reversed(children(node)))


def detect_feature(a: Any, b: Any = None) -> set[Feature]:
    """The ``Feature`` set of an expression or of every function of an ``IRModule`` (with
    ``b``, the union of both), as Relay's ``relay.analysis.detect_feature``."""
    out: set[Feature] = set()
    for item in (a, b):
        if item is None:
            continue
        if isinstance(item, Expr):
            _features(item, out)
        elif hasattr(item, "functions"):
            for fn in item.functions.values():
                _features(fn, out)
        else:
            raise TypeError(f"detect_feature expects an Expr or an IRModule, not {type(item).__name__}")
    return out
