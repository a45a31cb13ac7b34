"""``relay.expr_functor``: visitors and mutators over Python Relay expressions.

``ExprVisitor`` and ``ExprMutator`` dispatch on the node kind to ``visit_<kind>`` methods and
memoise shared nodes, as in Relay. They recurse like Relay's Python classes; for very deep
graphs use ``relay.analysis.post_order_visit`` or ``substitute``, which are iterative.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from xrelay.relay.analysis import children, post_order
from xrelay.relay.expr import (
    Call,
    Clause,
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
)

__all__ = ["ExprFunctor", "ExprMutator", "ExprVisitor", "substitute"]


class ExprFunctor:
    """Relay's ``ExprFunctor``: ``visit`` dispatches on the node kind to ``visit_<kind>`` and
    memoises by node; every ``visit_<kind>`` must be overridden (the base raises naming it)."""

    def __init__(self) -> None:
        self.memo_map: dict[int, tuple[Expr, Any]] = {}

    def visit(self, expr: Expr) -> Any:
        if isinstance(expr, TupleWrapper):
            expr = expr.astuple()
        if id(expr) in self.memo_map:
            return self.memo_map[id(expr)][1]
        if isinstance(expr, Function):
            res = self.visit_function(expr)
        elif isinstance(expr, Call):
            res = self.visit_call(expr)
        elif isinstance(expr, Var):
            res = self.visit_var(expr)
        elif isinstance(expr, Constant):
            res = self.visit_constant(expr)
        elif isinstance(expr, Tuple):
            res = self.visit_tuple(expr)
        elif isinstance(expr, TupleGetItem):
            res = self.visit_tuple_getitem(expr)
        elif isinstance(expr, GlobalVar):
            res = self.visit_global_var(expr)
        elif isinstance(expr, Op):
            res = self.visit_op(expr)
        elif isinstance(expr, If):
            res = self.visit_if(expr)
        elif isinstance(expr, Let):
            res = self.visit_let(expr)
        elif isinstance(expr, RefCreate):
            res = self.visit_ref_create(expr)
        elif isinstance(expr, RefRead):
            res = self.visit_ref_read(expr)
        elif isinstance(expr, RefWrite):
            res = self.visit_ref_write(expr)
        elif isinstance(expr, Constructor):
            res = self.visit_constructor(expr)
        elif isinstance(expr, Match):
            res = self.visit_match(expr)
        else:
            raise TypeError(f"unexpected node {expr!r}")
        # keep the key alive so id() stays unique while memoised
        self.memo_map[id(expr)] = (expr, res)
        return res

    def _not_overridden(self, kind: str) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not implement visit_{kind}")

    def visit_function(self, fn: Function) -> Any:
        return self._not_overridden("function")

    def visit_call(self, call: Call) -> Any:
        return self._not_overridden("call")

    def visit_var(self, var: Var) -> Any:
        return self._not_overridden("var")

    def visit_constant(self, const: Constant) -> Any:
        return self._not_overridden("constant")

    def visit_tuple(self, tup: Tuple) -> Any:
        return self._not_overridden("tuple")

    def visit_tuple_getitem(self, t: TupleGetItem) -> Any:
        return self._not_overridden("tuple_getitem")

    def visit_global_var(self, gv: GlobalVar) -> Any:
        return self._not_overridden("global_var")

    def visit_op(self, op: Op) -> Any:
        return self._not_overridden("op")

    def visit_if(self, ite: If) -> Any:
        return self._not_overridden("if")

    def visit_let(self, let: Let) -> Any:
        return self._not_overridden("let")

    def visit_ref_create(self, r: RefCreate) -> Any:
        return self._not_overridden("ref_create")

    def visit_ref_read(self, r: RefRead) -> Any:
        return self._not_overridden("ref_read")

    def visit_ref_write(self, r: RefWrite) -> Any:
        return self._not_overridden("ref_write")

    def visit_constructor(self, c: Constructor) -> Any:
        return self._not_overridden("constructor")

    def visit_match(self, m: Match) -> Any:
        return self._not_overridden("match")


class ExprVisitor(ExprFunctor):
    """Visit every node once; override ``visit_<kind>`` and call ``super()`` to descend."""

    def __init__(self) -> None:
        self.memo_map: dict[int, tuple[Expr, Any]] = {}

    def visit_function(self, fn: Function) -> None:
        for p in fn.params:
            self.visit(p)
        self.visit(fn.body)

    def visit_call(self, call: Call) -> None:
        if getattr(call, "_a_normal_form", False):
            # After ToANormalForm Relay's visitor walks a let chain, which binds a call's
            # arguments before its callee: evaluation order.
            for a in call.args:
                self.visit(a)
            self.visit(call.op)
            return
        self.visit(call.op)
        for a in call.args:
            self.visit(a)

    def visit_var(self, var: Var) -> None:
        pass

    def visit_constant(self, const: Constant) -> None:
        pass

    def visit_tuple(self, tup: Tuple) -> None:
        for f in tup.fields:
            self.visit(f)

    def visit_tuple_getitem(self, t: TupleGetItem) -> None:
        self.visit(t.tuple_value)

    def visit_global_var(self, gv: GlobalVar) -> None:
        pass

    def visit_op(self, op: Op) -> None:
        pass

    def visit_if(self, ite: If) -> None:
        self.visit(ite.cond)
        self.visit(ite.true_branch)
        self.visit(ite.false_branch)

    def visit_let(self, let: Let) -> None:
        self.visit(let.var)
        self.visit(let.value)
        self.visit(let.body)

    def visit_ref_create(self, r: RefCreate) -> None:
        self.visit(r.value)

    def visit_ref_read(self, r: RefRead) -> None:
        self.visit(r.ref)

    def visit_ref_write(self, r: RefWrite) -> None:
        self.visit(r.ref)
        self.visit(r.value)

    def visit_constructor(self, c: Constructor) -> None:
        pass

    def visit_match(self, m: Match) -> None:
        self.visit(m.data)
        for c in m.clauses:
            self.visit(c.rhs)


class ExprMutator(ExprFunctor):
    """Rebuild an expression bottom-up; a node whose children did not change is kept."""

    def __init__(self) -> None:
        self.memo_map: dict[int, tuple[Expr, Any]] = {}

    def visit_function(self, fn: Function) -> Expr:
        params = [self.visit(p) for p in fn.params]
        body = self.visit(fn.body)
        if all(a is b for a, b in zip(params, fn.params)) and body is fn.body:
            return fn
        return _new_function(fn, params, body)

    def visit_call(self, call: Call) -> Expr:
        op = self.visit(call.op)
        args = [self.visit(a) for a in call.args]
        if op is call.op and all(a is b for a, b in zip(args, call.args)):
            return call
        return _new_call(call, op, args)

    def visit_var(self, var: Var) -> Expr:
        return var

    def visit_constant(self, const: Constant) -> Expr:
        return const

    def visit_tuple(self, tup: Tuple) -> Expr:
        fields = [self.visit(f) for f in tup.fields]
        if all(a is b for a, b in zip(fields, tup.fields)):
            return tup
        return Tuple(fields)

    def visit_tuple_getitem(self, t: TupleGetItem) -> Expr:
        tv = self.visit(t.tuple_value)
        return t if tv is t.tuple_value else TupleGetItem(tv, t.index)

    def visit_global_var(self, gv: GlobalVar) -> Expr:
        return gv

    def visit_op(self, op: Op) -> Expr:
        return op

    def visit_if(self, ite: If) -> Expr:
        parts = [self.visit(ite.cond), self.visit(ite.true_branch), self.visit(ite.false_branch)]
        if all(a is b for a, b in zip(parts, (ite.cond, ite.true_branch, ite.false_branch))):
            return ite
        return If(*parts)

    def visit_let(self, let: Let) -> Expr:
        parts = [self.visit(let.var), self.visit(let.value), self.visit(let.body)]
        if all(a is b for a, b in zip(parts, (let.var, let.value, let.body))):
            return let
        return Let(*parts)

    def visit_ref_create(self, r: RefCreate) -> Expr:
        value = self.visit(r.value)
        return r if value is r.value else RefCreate(value)

    def visit_ref_read(self, r: RefRead) -> Expr:
        ref = self.visit(r.ref)
        return r if ref is r.ref else RefRead(ref)

    def visit_ref_write(self, r: RefWrite) -> Expr:
        ref, value = self.visit(r.ref), self.visit(r.value)
        return r if ref is r.ref and value is r.value else RefWrite(ref, value)

    def visit_constructor(self, c: Constructor) -> Expr:
        return c

    def visit_match(self, m: Match) -> Expr:
        data = self.visit(m.data)
        rhs = [self.visit(c.rhs) for c in m.clauses]
        if data is m.data and all(a is c.rhs for a, c in zip(rhs, m.clauses)):
            return m
        return Match(data, [Clause(c.lhs, r) for c, r in zip(m.clauses, rhs)], m.complete)


def _new_call(call: Call, op: Expr, args: list[Expr]) -> Call:
    if isinstance(op, Op):
        return Call(op, args, call._raw_attrs)
    return Call(op, args)


def _new_function(fn: Function, params: list[Var], body: Expr) -> Function:
    new = Function(params, body, attrs=dict(fn.attrs))
    new._source_name = fn._source_name
    return new


def substitute(expr: Expr, mapping: Mapping[Expr, Expr]) -> Expr:
    """``expr`` with every node in ``mapping`` replaced (iteratively; shared nodes rebuilt
    once). Function literals inside are rebuilt too; their parameters may be replaced."""
    repl: dict[int, Expr] = {id(k): v for k, v in mapping.items()}
    for node in post_order(expr):
        if id(node) in repl:
            continue
        if isinstance(node, Call):
            op = repl.get(id(node.op), node.op)
            args = [repl.get(id(a), a) for a in node.args]
            if op is not node.op or any(a is not b for a, b in zip(args, node.args)):
                repl[id(node)] = _new_call(node, op, args)
        elif isinstance(node, Tuple):
            fields = [repl.get(id(f), f) for f in node.fields]
            if any(a is not b for a, b in zip(fields, node.fields)):
                repl[id(node)] = Tuple(fields)
        elif isinstance(node, TupleGetItem):
            tv = repl.get(id(node.tuple_value), node.tuple_value)
            if tv is not node.tuple_value:
                repl[id(node)] = TupleGetItem(tv, node.index)
        elif isinstance(node, Function):
            params = [repl.get(id(p), p) for p in node.params]
            body = repl.get(id(node.body), node.body)
            if body is not node.body or any(a is not b for a, b in zip(params, node.params)):
                repl[id(node)] = _new_function(node, params, body)
        elif isinstance(node, Let):
            parts = [repl.get(id(e), e) for e in (node.var, node.value, node.body)]
            if any(a is not b for a, b in zip(parts, (node.var, node.value, node.body))):
                repl[id(node)] = Let(*parts)
        elif isinstance(node, If):
            parts = [repl.get(id(e), e) for e in (node.cond, node.true_branch, node.false_branch)]
            if any(a is not b for a, b in zip(parts, (node.cond, node.true_branch, node.false_branch))):
                repl[id(node)] = If(*parts)
        elif isinstance(node, Match):
            data = repl.get(id(node.data), node.data)
            rhs = [repl.get(id(c.rhs), c.rhs) for c in node.clauses]
            if data is not node.data or any(a is not c.rhs for a, c in zip(rhs, node.clauses)):
                repl[id(node)] = Match(data, [Clause(c.lhs, r) for c, r in zip(node.clauses, rhs)], node.complete)
        elif isinstance(node, RefCreate | RefRead | RefWrite):
            kids = children(node)
            new = [repl.get(id(k), k) for k in kids]
            if any(a is not b for a, b in zip(new, kids)):
                repl[id(node)] = type(node)(*new)
    return repl.get(id(expr), expr)
