"""Relay's ADT expressions and the adt dialect, both ways: type definitions (``TypeData`` and
``adt.type_def``), patterns (``Pattern`` trees and ``#adt.pattern``), and the type arguments a
constructor call cannot tell from its fields (``Nil``), taken from where its value goes.
``xrelay.relay.module`` lowers and rebuilds with them (docs/design.md, decision 9)."""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute

from xrelay.dialects.adt import (
    PatternAttr,
    TypeDefOp,
    TypeVarType,
    ValueType,
    substitute,
    type_vars,
    unify,
)
from xrelay.dialects.relay import RelayTypeError
from xrelay.relay.analysis import post_order
from xrelay.relay.expr import (
    Call,
    Constructor,
    Expr,
    Function,
    FuncType,
    GlobalTypeVar,
    GlobalVar,
    If,
    Let,
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    TypeData,
    Var,
)

__all__ = [
    "adt_expectations",
    "pattern_attr",
    "pattern_from_attr",
    "type_data_of",
    "type_def_op",
    "type_defs",
]


def type_def_op(td: TypeData) -> TypeDefOp:
    """The ``adt.type_def`` of a ``TypeData``."""
    params = []
    for v in td.type_vars:
        if not isinstance(v, TypeVarType):
            raise RelayTypeError(f"type {td.header.name_hint}: type parameter {v!r} is not a relay.TypeVar")
        params.append(v.var_name.data)
    ctors = []
    for c in td.constructors:
        for t in c.inputs:
            if not isinstance(t, Attribute):
                raise RelayTypeError(
                    f"constructor {c.name_hint}: field type {t!r} is not supported (a tensor, an ADT "
                    "type or a type variable; an ADT does not hold functions or tuples in xrelay, "
                    "decision 9)"
                )
        ctors.append((c.name_hint, list(c.inputs)))
    return TypeDefOp(td.header.name_hint, params, ctors)


_TYPE_DATA: weakref.WeakKeyDictionary[TypeDefOp, TypeData] = weakref.WeakKeyDictionary()


def type_data_of(op: TypeDefOp) -> TypeData:
    """The ``TypeData`` (with its ``Constructor``s) of an ``adt.type_def``: one per op, so every
    rebuilt expression and ``mod.get_type`` share the constructor objects."""
    td = _TYPE_DATA.get(op)
    if td is None:
        header = GlobalTypeVar(op.sym_name.data)
        tvars = [TypeVarType(p) for p in op.params]
        ctors = [Constructor(n, fields, header) for n, fields in op.constructors]
        td = _TYPE_DATA[op] = TypeData(header, tvars, ctors)
    return td


def register_type_data(op: TypeDefOp, td: TypeData) -> None:
    """Make ``td`` (the user's own objects) the ``TypeData`` of ``op``."""
    _TYPE_DATA[op] = td


def type_defs(module: ModuleOp | None) -> dict[str, TypeDefOp]:
    """The ``adt.type_def``s of ``module`` by name."""
    if module is None:
        return {}
    return {op.sym_name.data: op for op in module.ops if isinstance(op, TypeDefOp)}


def pattern_attr(p: Pattern) -> PatternAttr:
    """The ``#adt.pattern`` of a pattern tree."""

    def tree(q: Pattern) -> Attribute:
        if isinstance(q, PatternWildcard):
            return StringAttr("_")
        if isinstance(q, PatternVar):
            return StringAttr("var")
        if isinstance(q, PatternConstructor):
            return ArrayAttr([SymbolRefAttr(q.constructor.name_hint), *(tree(s) for s in q.patterns)])
        if isinstance(q, PatternTuple):
            raise RelayTypeError(
                "match: tuple patterns are not supported (a tuple is several values in xrelay's IR, "
                "decision 3, and an ADT value is one)"
            )
        raise RelayTypeError(f"match: {q!r} is not a pattern")

    return PatternAttr(tree(p))


def pattern_from_attr(attr: PatternAttr, td_of: Any, data_type: Attribute, names: Iterable[Var]) -> Pattern:
    """The pattern tree of ``attr`` on a value of ``data_type``; its variables are ``names``
    (left to right); ``td_of(name)`` gives a type's ``TypeData``."""
    it = iter(names)

    def build(a: Attribute, t: Attribute) -> Pattern:
        if isinstance(a, StringAttr):
            return PatternVar(next(it)) if a.data == "var" else PatternWildcard()
        assert isinstance(a, ArrayAttr)
        head = a.data[0]
        assert isinstance(head, SymbolRefAttr) and isinstance(t, ValueType)
        td = td_of(t.def_name)
        ctor = next(c for c in td.constructors if c.name_hint == head.root_reference.data)
        subst = {v.var_name.data: x for v, x in zip(td.type_vars, t.args.data)}
        return PatternConstructor(ctor, [build(s, substitute(f, subst)) for s, f in zip(a.data[1:], ctor.inputs)])

    return build(attr.tree, data_type)


def _fields_of(c: Constructor, t: Any) -> list[Any] | None:
    if not isinstance(t, ValueType) or t.def_name != c.belong_to.name_hint:
        return None
    subst = {v.var_name.data: a for v, a in zip(c.type_vars, t.args.data)}
    return [substitute(f, subst) for f in c.inputs]


def adt_expectations(fn: Function) -> dict[int, Any]:
    """The type each constructor call and ``match`` of ``fn`` must have, from where its value
    goes (the return type, a constructor's field, a parameter, the other clauses): what
    ``Nil`` needs, whose fields do not tell its type arguments."""
    expected: dict[int, Any] = {}
    nodes = list(post_order(fn))

    def expect(node: Expr, t: Any) -> None:
        if t is not None and not isinstance(t, FuncType) and id(node) not in expected:
            expected[id(node)] = t

    for f in (n for n in nodes if isinstance(n, Function)):
        expect(f.body, f.ret_type)
    for node in reversed(nodes):  # parents before children
        want = node._type if node._type is not None else expected.get(id(node))
        if isinstance(node, Call) and isinstance(node.op, Constructor):
            fields = _fields_of(node.op, want)
            if fields is not None:
                for a, t in zip(node.args, fields):
                    expect(a, t)
        elif isinstance(node, Call) and isinstance(node.op, GlobalVar | Function):
            ft = node.op._type
            if isinstance(ft, FuncType) and len(ft.arg_types) == len(node.args):
                # a call of a function with type parameters: what its value must be binds them
                subst: dict[str, Any] = {}
                if want is not None and ft.ret_type is not None and not unify(ft.ret_type, want, subst):
                    subst = {}
                for a, t in zip(node.args, ft.arg_types):
                    if t is None:
                        continue
                    t = substitute(t, subst)
                    if not any(True for _ in type_vars(t)):
                        expect(a, t)
        elif isinstance(node, Match):
            known = want
            if known is None:
                known = next((c.rhs._type for c in node.clauses if c.rhs._type is not None), None)
            for c in node.clauses:
                expect(c.rhs, known)
        elif isinstance(node, Let):
            expect(node.body, want)
            expect(node.value, node.var._type)
        elif isinstance(node, If):
            expect(node.true_branch, want)
            expect(node.false_branch, want)
    return expected


def unbound_result(c: Constructor, arg_types: list[Attribute], want: Any) -> ValueType | None:
    """The type of ``c(args)`` from the argument types, completed by ``want`` (the expected
    type) for type parameters the fields do not bind; None when still unknown."""
    subst: dict[str, Attribute] = {}
    for f, t in zip(c.inputs, arg_types):
        if not unify(f, t, subst):
            raise RelayTypeError(f"constructor {c.name_hint}: field type {t} does not fit {f}")
    if isinstance(want, ValueType) and want.def_name == c.belong_to.name_hint:
        for v, a in zip(c.type_vars, want.args.data):
            subst.setdefault(v.var_name.data, a)
    names = [v.var_name.data for v in c.type_vars]
    if any(n not in subst for n in names):
        return None
    return ValueType(c.belong_to.name_hint, [subst[n] for n in names])
