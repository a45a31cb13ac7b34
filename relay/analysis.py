"""``relay.analysis``: free variables and graph traversal of Python Relay expressions.

Traversals are iterative, so deep networks (ResNet-152 is a chain of ~1,500 calls) do not
hit Python's recursion limit. Shared nodes are visited once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from xrelay.relay.expr import Call, Expr, Function, If, Let, Tuple, TupleGetItem, TupleWrapper, Var

__all__ = ["all_vars", "bound_vars", "children", "free_vars", "list_op_freqs", "post_order", "post_order_visit"]


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

    from xrelay.dialects import module_op
    from xrelay.dialects.relay import RelayOp

    return dict(Counter(op.RELAY_NAME for op in module_op(mod).walk() if isinstance(op, RelayOp)))
