"""``IRModule``: Relay functions held as an xDSL ``ModuleOp`` of ``func.func``s.

The xDSL module (``mod.module``) is the source of truth: passes rewrite it in place, and
``mod["main"]`` rebuilds a Python ``Function`` expression from the ``func.func`` each time.

Lowering a Python expression to the relay dialect (``mod["f"] = fn``):

* The expression is a DAG: a node used several times is emitted once; ops come out in
  topological (post-) order, operands left to right.
* A called function literal is outlined into a private ``func.func`` (docs/design.md, decision 3);
  the variables it captures from the enclosing function become extra parameters after its own.
  A literal called twice is outlined once. Outlined functions are named after the ops in
  their body, in post-order: ``fused_<op>_<op>...`` for ``Primitive`` functions and
  ``fn_<op>_...`` otherwise (dots become ``_``; a name longer than 80 characters is cut and
  given a CRC-32 suffix, as fuse-ops names them), then ``_1``, ``_2``, ... to make them unique. A function rebuilt from a private ``func.func``
  keeps that function's name when it is free.
* Multi-result ops (``nn.batch_norm``, ``nn.dropout``, ``split``): ``TupleGetItem`` picks a
  result. A tuple returned from a function becomes several results; ``concatenate``/``stack``
  take the tuple's fields as variadic operands.
* Relay function attributes become discardable attributes named per ``FUNC_ATTRS``
  (``Primitive`` -> ``relay.primitive = 1 : i64``); other keys get a ``relay.`` prefix.
* Parameter names become SSA name hints: characters MLIR does not allow become ``_``, a
  leading digit gets a ``v`` prefix, and xDSL drops a trailing ``_<digits>`` (``x_1`` reads
  back as ``x``); duplicate names print as ``%x``, ``%x_1``.

Rebuilding goes the other way: a ``func.call`` of a private function becomes a call of a
function literal (rebuilt once per callee), a call of a public one a call of a ``GlobalVar``,
and each result of a multi-result op a ``TupleGetItem``.
"""

from __future__ import annotations

import io
import re
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType, i1
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.dialects.scf import IfOp, YieldOp
from xdsl.dialects.tensor import CastOp as TensorCastOp
from xdsl.dialects.tensor import ExtractOp
from xdsl.ir import Block, BlockArgument, Region, SSAValue

from xrelay.dialects import make_context
from xrelay.dialects.adt import (
    AdtCallOp,
    ApplyOp,
    ClosureOp,
    ConstructOp,
    MatchOp,
    TypeDefOp,
    ValueType,
    instantiate,
    is_polymorphic,
    pattern_vars,
    type_vars,
)
from xrelay.dialects.adt import TypeVarType as AdtTypeVar
from xrelay.dialects.adt import YieldOp as AdtYieldOp
from xrelay.dialects.ref import REF_OPS, RefCreateOp, RefReadOp, RefWriteOp, impure_functions
from xrelay.dialects.relay import (
    ConstantOp,
    RelayOp,
    RelayTypeError,
    dense_from_numpy,
    dtype_of,
    params_source,
    print_options,
)
from xrelay.dialects.verify import verify_module
from xrelay.relay import expr as expr_module
from xrelay.relay.adt_ir import (
    adt_expectations,
    pattern_attr,
    pattern_from_attr,
    register_type_data,
    type_data_of,
    type_def_op,
    type_defs,
    unbound_result,
)
from xrelay.relay.analysis import children, free_vars, post_order
from xrelay.relay.expr import (
    Call,
    Clause,
    Constant,
    Constructor,
    Expr,
    Function,
    FuncType,
    GlobalTypeVar,
    GlobalVar,
    If,
    Let,
    Match,
    Op,
    RefCreate,
    RefRead,
    RefType,
    RefWrite,
    Tuple,
    TupleGetItem,
    TupleType,
    TupleWrapper,
    TypeData,
    TypeVar,
    Var,
    _flat_tensor_types,
    _op_has_var_operands,
    _op_returns_tuple,
    ir_type,
    pattern_variables,
    py_type,
    unifies,
)
from xrelay.relay.expr_functor import substitute
from xrelay.relay.function_attrs import func_attrs_from_ir, func_attrs_to_ir
from xrelay.relay.text_printer import astext, pretty_print
from xrelay.relay.type_solver import infer_missing_types
from xrelay.runtime.npz import NpzError, read_npz
from xrelay.transforms.fuse_ops import MAX_NAME_LENGTH
from xrelay.transforms.infra import mark_types_unknown, types_inferred
from xrelay.transforms.to_a_normal_form import A_NORMAL_FORM_ATTR

__all__ = ["IRModule", "func_attrs_to_ir", "function_from_func", "lower_function"]

parse_into: Any = None
"""``xrelay.relay.parser.parse``, which reads Relay text into a module (``import_from_std``);
the parser, which builds on this module, installs it when imported (importing it from here
would be an import cycle)."""

# --------------------------------------------------------------------------------------------
# Lowering: Function -> func.func
# --------------------------------------------------------------------------------------------

_NAME_OK = re.compile(r"[A-Za-z_$.-][\w$.-]*")


def _value_name(name: str) -> str | None:
    """A valid SSA name hint from a Relay variable name (None if nothing is left)."""
    cleaned = re.sub(r"[^\w$.-]", "_", name)
    if cleaned and cleaned[0].isdigit():
        cleaned = "v" + cleaned
    return cleaned if _NAME_OK.fullmatch(cleaned or "") else None


def _symbols(module: ModuleOp) -> dict[str, FuncOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, FuncOp)}


class _Lowering:
    """Lowers Function expressions into ``func.func`` ops of one module."""

    def __init__(self, symbols: dict[str, FuncOp], allow_external: bool = False, defs: dict[str, TypeDefOp] | None = None):
        self.symbols = symbols
        self.defs = defs or {}  # the module's adt.type_defs (constructors, patterns)
        self.expected: dict[int, Any] = {}  # what a Nil's value must be (adt_expectations)
        self.allow_external = allow_external
        self.outlined: dict[int, tuple[str, list[Var]]] = {}
        self.new_funcs: list[FuncOp] = []
        self.fn_alias: dict[int, Function] = {}  # let-bound variable -> the function literal
        self.defining: tuple[str, Function] | None = None  # the global being defined (recursion)

    def unique_name(self, base: str) -> str:
        if base not in self.symbols:
            return base
        i = 1
        while f"{base}_{i}" in self.symbols:
            i += 1
        return f"{base}_{i}"

    def lower(
        self, fn: Function, name: str, private: bool, extra_params: Iterable[Var] = ()
    ) -> FuncOp:
        body = _call_into_branches(fn.body)
        if body is not fn.body:
            fn = _rebuild_function(fn, body)
        params = [*fn.params, *extra_params]
        if fn._type is None or any(p._type is None for p in params):

            infer_missing_types(fn, name)
        self.expected.update(adt_expectations(fn))
        arg_types = []
        for p in params:
            t = p._type
            if t is None:
                raise RelayTypeError(
                    f"parameter %{p.name_hint} of @{name} has no type: give relay.var a shape"
                )
            if isinstance(t, FuncType):
                t = ir_type(t)  # a function value: a closure's FunctionType
            if not isinstance(t, TensorType | RefType | ValueType | AdtTypeVar | FunctionType):
                raise RelayTypeError(
                    f"parameter %{p.name_hint} of @{name} has type {t}; only tensor, "
                    "reference, ADT and function parameters are supported"
                )
            arg_types.append(t)
        block = Block(arg_types=arg_types)
        env: dict[int, list[SSAValue]] = {}
        for p, arg in zip(params, block.args):
            arg.name_hint = _value_name(p.name_hint)
            env[id(p)] = [arg]
        self._emit_body(fn.body, block, env, name)
        results = env[id(fn.body)]
        block.add_op(ReturnOp(*results))
        fop = FuncOp(
            name,
            (arg_types, [r.type for r in results]),
            Region(block),
            visibility="private" if private else None,
        )
        fop.attributes.update(func_attrs_to_ir(fn.attrs))
        self.symbols[name] = fop
        return fop

    def _emit_body(self, body: Expr, block: Block, env: dict[int, list[SSAValue]], where: str) -> None:
        def vals(e: Expr) -> list[SSAValue]:
            v = env.get(id(e))
            if v is None:
                if isinstance(e, Var) and id(e) in self.fn_alias:
                    v = env[id(e)] = self._emit_closure(self.fn_alias[id(e)], block, vals, where)
                    return v
                if isinstance(e, Function | GlobalVar):
                    v = env[id(e)] = self._emit_closure(e, block, vals, where)
                    return v
                if isinstance(e, Op | Constructor):
                    raise RelayTypeError(f"in @{where}: {e!r} is used as a value, not called")
                raise RelayTypeError(f"in @{where}: no value for {e!r}")
            return v

        lets = {id(n.var): n for n in post_order(body, into_functions=False) if isinstance(n, Let)}
        for node in _scope_order(body):
            if id(node) in env:
                continue
            if isinstance(node, Var) and id(node) in lets:
                self._bind_let(lets[id(node)], env, vals)
                continue
            if isinstance(node, Let):
                env[id(node)] = vals(node.body)
                continue
            if isinstance(node, If):
                env[id(node)] = self._emit_if(node, block, env, vals, where)
                continue
            if isinstance(node, Match):
                env[id(node)] = self._emit_match(node, block, env, vals, where)
                continue
            if isinstance(node, Var) and id(node) in self.fn_alias:
                continue  # a let-bound function's name: only called, never a value
            if isinstance(node, Var):
                raise RelayTypeError(
                    f"in @{where}: free variable %{node.name_hint} is not a parameter "
                    "(use relay.analysis.free_vars to build the parameter list)"
                )
            if isinstance(node, Constant):
                op = ConstantOp(dense_from_numpy(node.data, node._type), node.name)
                block.add_op(op)
                env[id(node)] = [op.result]
            elif isinstance(node, Tuple):
                env[id(node)] = [v for f in node.fields for v in vals(f)]
            elif isinstance(node, TupleGetItem):
                env[id(node)] = self._get_item(node, vals)
            elif isinstance(node, Call):
                env[id(node)] = self._emit_call(node, block, env, vals, where)
            elif isinstance(node, RefCreate | RefRead | RefWrite):
                env[id(node)] = self._emit_ref(node, block, vals, where)
            # Function, Op, Constructor and GlobalVar nodes have a value (a closure) only where
            # one is used as a value, not called
        if id(body) not in env:
            vals(body)  # a body that is a function value

    @staticmethod
    def _emit_ref(node: Expr, block: Block, vals: Any, where: str) -> list[SSAValue]:
        """``ref(v)``, ``ref_read(r)``, ``ref_write(r, v)``: the ref dialect's ops (a
        ``ref_write``'s value, ``()``, is no value at all)."""
        operands = []
        for e in children(node):
            vs = vals(e)
            if len(vs) != 1:
                raise RelayTypeError(
                    f"in @{where}: {type(node).__name__} of a tuple; a reference holds one tensor "
                    "or reference"
                )
            operands.append(vs[0])
        if isinstance(node, RefCreate):
            op: Any = RefCreateOp(operands[0])
        else:
            if not isinstance(operands[0].type, RefType):
                raise RelayTypeError(
                    f"in @{where}: {type(node).__name__} of a value of type {operands[0].type}, not a reference"
                )
            if isinstance(node, RefRead):
                op = RefReadOp(operands[0])
            else:
                if operands[1].type != operands[0].type.value:
                    raise RelayTypeError(
                        f"in @{where}: RefWrite of a {operands[1].type} into a reference of {operands[0].type.value}"
                    )
                op = RefWriteOp(operands[0], operands[1])
        block.add_op(op)
        return list(op.results)

    def _emit_if(self, node: If, block: Block, env: dict[int, list[SSAValue]], vals: Any, where: str) -> list[SSAValue]:
        """``if (%c) {a} else {b}``: ``scf.if`` on the condition's element; each branch's
        expressions are emitted in its own region (values of the enclosing scope are visible)."""
        (cond,) = vals(node.cond)
        self._hoist_shared(node, block, env, where)
        flag = ExtractOp(cond, [], i1)
        block.add_op(flag)
        regions = []
        yielded: list[list[SSAValue]] = []
        for branch in (node.true_branch, node.false_branch):
            inner = Block()
            scope = dict(env)
            self._emit_body(branch, inner, scope, where)
            outs = scope[id(branch)]
            inner.add_op(YieldOp(*outs))
            regions.append(Region(inner))
            yielded.append(outs)
        types = [v.type for v in yielded[0]]
        if types != [v.type for v in yielded[1]]:
            raise RelayTypeError(
                f"in @{where}: the branches of an If have types ({', '.join(map(str, types))}) "
                f"and ({', '.join(str(v.type) for v in yielded[1])})"
            )
        op = IfOp(flag.result, types, regions[0], regions[1])
        block.add_op(op)
        return list(op.results)

    def _emit_match(self, node: Match, block: Block, env: dict[int, list[SSAValue]], vals: Any, where: str) -> list[SSAValue]:
        """``match (%d) { p => e, ... }``: ``adt.match`` with one region per clause, the
        pattern's variables its block arguments, each region's value yielded."""
        data = vals(node.data)
        if len(data) != 1:
            raise RelayTypeError(f"in @{where}: match on a tuple; xrelay matches ADT values")
        regions = []
        yielded: list[list[SSAValue]] = []
        patterns = []
        for i, clause in enumerate(node.clauses):
            attr = pattern_attr(clause.lhs)
            try:
                arg_types = pattern_vars(attr, data[0].type, self.defs, f"match clause {i}")
            except Exception as e:  # VerifyException: the pattern does not fit the data
                raise RelayTypeError(f"in @{where}: {e}") from None
            inner = Block(arg_types=arg_types)
            scope = dict(env)
            for var, arg in zip(pattern_variables(clause.lhs), inner.args):
                arg.name_hint = _value_name(var.name_hint)
                scope[id(var)] = [arg]
            self._emit_body(clause.rhs, inner, scope, where)
            outs = scope[id(clause.rhs)]
            inner.add_op(AdtYieldOp(*outs))
            regions.append(Region(inner))
            yielded.append(outs)
            patterns.append(attr)
        types = [v.type for v in yielded[0]]
        for outs in yielded[1:]:
            if [v.type for v in outs] != types:
                raise RelayTypeError(
                    f"in @{where}: the clauses of a match have types ({', '.join(map(str, types))}) "
                    f"and ({', '.join(str(v.type) for v in outs)})"
                )
        op = MatchOp(data[0], patterns, regions, types, partial=not node.complete)
        block.add_op(op)
        return list(op.results)

    def _emit_construct(self, node: Call, block: Block, operands: list[SSAValue], where: str) -> list[SSAValue]:
        ctor = node.op
        assert isinstance(ctor, Constructor)
        tname = ctor.belong_to.name_hint
        if tname not in self.defs:
            raise RelayTypeError(
                f"in @{where}: constructor {ctor.name_hint} of type {tname}, which the module does "
                "not define (add its TypeData first)"
            )
        if len(operands) != len(ctor.inputs):
            raise RelayTypeError(
                f"in @{where}: constructor {ctor.name_hint} takes {len(ctor.inputs)} field(s), got {len(operands)}"
            )
        want = node._type if node._type is not None else self.expected.get(id(node))
        t = unbound_result(ctor, [o.type for o in operands], want)
        if t is None:
            raise RelayTypeError(
                f"in @{where}: cannot tell the type arguments of {tname} for {ctor.name_hint}: "
                "annotate where its value goes (a parameter or return type)"
            )
        op = ConstructOp(tname, ctor.name_hint, operands, t)
        block.add_op(op)
        return [op.result]

    def _hoist_shared(self, node: If, block: Block, env: dict[int, list[SSAValue]], where: str) -> None:
        """Emit before the If what both branches compute (Relay's basic-block normal form puts a
        value shared by two scopes in the scope that encloses both), once instead of twice."""
        reach = [
            {id(n): n for n in _scope_order(b) if id(n) not in env and isinstance(n, Call | Tuple | TupleGetItem)}
            for b in (node.true_branch, node.false_branch)
        ]
        for key, n in reach[0].items():
            if key not in reach[1] or key in env:
                continue
            if all(id(v) in env for v in post_order(n, into_functions=False) if isinstance(v, Var)):
                self._emit_body(n, block, env, where)

    def _bind_let(self, let: Let, env: dict[int, list[SSAValue]], vals: Any) -> None:
        """``let %x = value``: %x is the value's SSA value(s), which take the name ``x``."""
        value = let.value
        if isinstance(value, Function):  # a let-bound function literal: calls go to it
            self.fn_alias[id(let.var)] = value
            return
        vs = vals(value)
        env[id(let.var)] = vs
        for v in vs:
            # a constant is let-bound when it is the value itself (``let %a = 100;``), not a
            # field of a let-bound tuple (Relay binds the tuple, which has no value of its own)
            if isinstance(v.owner, ConstantOp) and not isinstance(value, Constant):
                continue
            if not isinstance(v, BlockArgument) and v.name_hint is None:
                v.name_hint = _value_name(let.var.name_hint)

    @staticmethod
    def _get_item(node: TupleGetItem, vals: Any) -> list[SSAValue]:
        tv = node.tuple_value
        if isinstance(tv, Tuple):
            return vals(tv.fields[node.index])
        flat = vals(tv)
        t = tv._type
        if isinstance(t, TupleType):
            sizes = [len(_flat_tensor_types(f) or [None]) for f in t.fields]
        else:
            sizes = [1] * len(flat)
        start = sum(sizes[: node.index])
        return flat[start : start + sizes[node.index]]

    def _emit_call(self, node: Call, block: Block, env: Any, vals: Any, where: str) -> list[SSAValue]:
        operands = [v for a in node.args for v in vals(a)]
        callee = node.op
        if isinstance(callee, Constructor):
            return self._emit_construct(node, block, operands, where)
        if isinstance(callee, Op):
            cls = callee.op_class
            if node._full_attrs is not None and node._type is not None:
                result_types = (
                    list(node._type.fields) if isinstance(node._type, TupleType) else [node._type]
                )
                op = cls.build(
                    operands=cls.operand_groups(operands),
                    result_types=cls.result_groups(result_types),
                    properties=cls.attrs_to_properties(node._full_attrs),
                )
            else:
                op = cls.make(operands, **node._raw_attrs)
            block.add_op(op)
            return list(op.results)
        if isinstance(callee, Var) and id(callee) in self.fn_alias:
            callee = self.fn_alias[id(callee)]
        if isinstance(callee, Function):
            name, captured = self.outline(callee)
            operands += [v for c in captured for v in vals(c)]
        elif isinstance(callee, GlobalVar):
            name = callee.name_hint
            if name not in self.symbols:
                ft = callee._type
                if self.defining is not None and self.defining[0] == name:
                    # A recursive call: typed by the function's own type (its parameters
                    # and its body's type, known once the body's other paths are typed).
                    return self._emit_recursive_call(self.defining[1]._type, f"@{name}", name, operands, 0, block, where)
                if self.allow_external and isinstance(ft, FuncType):
                    outs = ft.ret_type.fields if isinstance(ft.ret_type, TupleType) else [ft.ret_type]
                    call = CallOp(name, operands, list(outs))
                    block.add_op(call)
                    return list(call.results)
                raise RelayTypeError(
                    f"in @{where}: @{name} is not defined in the module (add it first)"
                )
        else:
            # a function value (a parameter, a let-bound value, an If's or a call's result)
            fn = vals(callee)
            if len(fn) != 1 or not isinstance(fn[0].type, FunctionType):
                raise RelayTypeError(f"in @{where}: calling {callee!r}, which is not a function")
            want = list(fn[0].type.inputs.data)
            if [o.type for o in operands] != want:
                raise RelayTypeError(
                    f"in @{where}: call of a function of type {fn[0].type} with argument types "
                    f"({', '.join(str(o.type) for o in operands)})"
                )
            apply = ApplyOp(fn[0], operands)
            block.add_op(apply)
            return list(apply.res)
        fop = self.symbols[name]
        if fop is None:  # a recursive call of a literal being lowered: typed by its signature
            ncap = len(self.outlined[id(callee)][1])
            return self._emit_recursive_call(callee._type, f"%{name}", name, operands, ncap, block, where)
        want = list(fop.function_type.inputs.data)
        got = [o.type for o in operands]
        if is_polymorphic(fop) and want != got:
            outs = instantiate(fop, got)
            if outs is None:
                raise RelayTypeError(
                    f"in @{where}: call of @{name} with argument types "
                    f"({', '.join(map(str, got))}), which do not instantiate ({', '.join(map(str, want))})"
                )
            acall = AdtCallOp(name, operands, outs)
            block.add_op(acall)
            return list(acall.results)
        if len(want) == len(got) and all(map(unifies, want, got)):
            # Relay unifies a dynamic dimension (relay.Any()) with a static one; the argument
            # becomes the parameter's type through a tensor.cast.
            for i, (w, g) in enumerate(zip(want, got)):
                if w != g:
                    cast = TensorCastOp(operands[i], w)
                    block.add_op(cast)
                    operands[i] = cast.dest
            got = [o.type for o in operands]
        if want != got:
            raise RelayTypeError(
                f"in @{where}: call of @{name} with argument types "
                f"({', '.join(map(str, got))}) but it takes ({', '.join(map(str, want))})"
            )
        call = CallOp(name, operands, list(fop.function_type.outputs.data))
        block.add_op(call)
        return list(call.results)

    def _emit_closure(self, e: Function | GlobalVar, block: Block, vals: Any, where: str) -> list[SSAValue]:
        """A function literal or a global used as a value: ``adt.closure`` of the (outlined)
        function with the values the literal captures."""
        if isinstance(e, GlobalVar):
            name, captured = e.name_hint, []
            fop = self.symbols.get(name)
            if fop is None:
                raise RelayTypeError(f"in @{where}: @{name} is used as a value but is not defined in the module (add it first)")
            ft = fop.function_type
            if is_polymorphic(fop):
                raise RelayTypeError(
                    f"in @{where}: @{name} has type parameters and is used as a value; wrap it in a "
                    "function literal with the types of this use (fn (%x: T) { @" + name + "(%x) })"
                )
            ftype = FunctionType.from_lists(list(ft.inputs.data), list(ft.outputs.data))
        else:
            name, captured = self.outline(e)
            fop = self.symbols.get(name)
            if fop is None:  # the literal's own body uses it as a value (recursion)
                if not isinstance(e._type, FuncType):
                    raise RelayTypeError(f"in @{where}: a recursive function used as a value needs its signature")
                ftype = ir_type(e._type)
            else:
                ins = list(fop.function_type.inputs.data)
                ftype = FunctionType.from_lists(ins[: len(ins) - len(captured)], list(fop.function_type.outputs.data))
        cap = [v for c in captured for v in vals(c)]
        op = ClosureOp(name, cap, ftype)
        block.add_op(op)
        return [op.result]

    @staticmethod
    def _emit_recursive_call(
        ft: Any, what: str, name: str, operands: list[SSAValue], n_captured: int, block: Block, where: str
    ) -> list[SSAValue]:
        """A call of the function being lowered (``what``: a global or a let-bound literal),
        typed by its signature; ``n_captured`` trailing operands are the literal's captures."""
        if not isinstance(ft, FuncType):
            raise RelayTypeError(
                f"in @{where}: the recursive call of {what} needs its signature: give its "
                "parameters types and a return type"
            )
        want = [ir_type(t) for p in ft.arg_types for t in (p.fields if isinstance(p, TupleType) else [p])]
        got = [o.type for o in operands[: len(operands) - n_captured]]
        if want != got:
            raise RelayTypeError(
                f"in @{where}: recursive call of {what} with argument types "
                f"({', '.join(map(str, got))}) but it takes ({', '.join(map(str, want))})"
            )
        outs = ft.ret_type.fields if isinstance(ft.ret_type, TupleType) else [ft.ret_type]
        call = CallOp(name, operands, [ir_type(t) for t in outs])
        block.add_op(call)
        return list(call.results)

    def outline(self, fn: Function) -> tuple[str, list[Var]]:
        done = self.outlined.get(id(fn))
        if done is not None:
            return done
        # a let-bound literal's own name (``let %f = fn ... { %f(...) }``) is not a capture:
        # calls through it go to the function itself
        captured = [v for v in free_vars(fn) if id(v) not in self.fn_alias]
        own = [v for v in free_vars(fn) if self.fn_alias.get(id(v)) is fn]
        if fn._source_name is not None and fn._source_name not in self.symbols:
            name = fn._source_name
        elif own:  # a recursive let-bound literal is named after its variable
            name = self.unique_name(_value_name(own[0].name_hint) or _outline_base(fn))
        else:
            name = self.unique_name(_outline_base(fn))
        self.symbols[name] = None  # type: ignore[assignment]  # reserve the name (recursion)
        self.outlined[id(fn)] = (name, captured)  # a recursive call finds it while it is lowered
        fop = self.lower(fn, name, private=True, extra_params=captured)
        self.new_funcs.append(fop)
        return name, captured


def _scope_order(body: Expr) -> list[Expr]:
    """The nodes of one scope in post-order: not into function literals, and of an ``If`` only
    its condition (each branch is a scope of its own, evaluated only when taken)."""

    out: list[Expr] = []
    seen: set[int] = set()
    stack: list[tuple[Expr, bool]] = [(body, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            out.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        if isinstance(node, Function):
            kids: tuple[Expr, ...] = ()
        elif isinstance(node, If):
            kids = (node.cond,)
        elif isinstance(node, Match):
            kids = (node.data,)
        else:
            kids = children(node)
        stack.extend((k, False) for k in reversed(kids) if id(k) not in seen)
    return out


def _outline_base(fn: Function) -> str:
    ops = [
        n.op.name.replace(".", "_")
        for n in post_order(fn.body, into_functions=False)
        if isinstance(n, Call) and isinstance(n.op, Op)
    ]
    prefix = "fused" if fn.attrs.get("Primitive") else "fn"
    tail = "_".join(ops)
    name = f"{prefix}_{tail}" if tail else prefix
    if len(name) > MAX_NAME_LENGTH:  # fuse-ops' rule, so a fused function keeps its name
        name = f"{name[:MAX_NAME_LENGTH]}_{zlib.crc32(name.encode()):08x}"
    return name


def lower_function(
    fn: Function, name: str, module: ModuleOp | None = None, allow_external: bool = False
) -> list[FuncOp]:
    """Lower ``fn`` to a public ``func.func @name`` plus the private functions it outlines.

    ``module`` supplies the functions that ``GlobalVar`` calls refer to and the names already
    taken; it is not modified. With ``allow_external``, calls of typed GlobalVars missing from
    ``module`` are emitted anyway (for printing a lone function). Returns the outlined
    functions first, ``@name`` last.
    """
    symbols = _symbols(module) if module is not None else {}
    symbols.pop(name, None)
    low = _Lowering(symbols, allow_external, type_defs(module))
    low.defining = (name, fn)
    main = low.lower(fn, name, private=False)
    return [*low.new_funcs, main]


# --------------------------------------------------------------------------------------------
# Rebuilding: func.func -> Function
# --------------------------------------------------------------------------------------------


def function_from_func(
    fop: FuncOp, symbols: Mapping[str, FuncOp], cache: dict[str, Function] | None = None
) -> Function:
    """The Relay ``Function`` expression of a ``func.func`` (see the module docstring)."""
    cache = {} if cache is None else cache
    block = fop.body.block
    params = [Var(a.name_hint or f"p{i}", py_type(a.type)) for i, a in enumerate(block.args)]
    env: dict[SSAValue, Expr] = dict(zip(block.args, params))
    body = _block_expr(block, env, symbols, cache, fop.sym_name.data)
    outs = list(fop.function_type.outputs.data)
    ret = outs[0] if len(outs) == 1 else TupleType(outs)
    # the signature's return type when the body's is not known (a match of recursive calls)
    fn = Function(params, body, ret if body._type is None else None, _signature_type_params(fop), attrs=func_attrs_from_ir(fop))
    if types_inferred(fop):
        for node in post_order(fn, into_functions=False):
            node._inferred = True  # read from a typed module: printed with types, as after InferType
    return fn


def value_expressions(fop: FuncOp, symbols: Mapping[str, FuncOp]) -> dict[SSAValue, Expr]:
    """The Relay expression of every value ``fop`` computes (in its if branches too): what a
    callback written for Relay's expressions (EliminateCommonSubexpr's ``fskip``) is shown."""
    block = fop.body.block
    env: dict[SSAValue, Expr] = {a: Var(a.name_hint or f"p{i}", py_type(a.type)) for i, a in enumerate(block.args)}
    record: dict[SSAValue, Expr] = dict(env)
    _block_expr(block, env, symbols, {}, fop.sym_name.data, record)
    return record


def _block_expr(
    block: Block,
    env: dict[SSAValue, Expr],
    symbols: Mapping[str, FuncOp],
    cache: dict[str, Function],
    where: str,
    record: dict[SSAValue, Expr] | None = None,
) -> Expr:
    """The expression a block computes (what its ``func.return`` / ``scf.yield`` returns);
    ``record``, when given, collects the expression of every value defined (branches too)."""
    body: Expr | None = None
    effects: list[tuple[Var, Expr]] = []  # let-bound in order: references and impure calls
    for op in block.ops:
        if isinstance(op, REF_OPS):
            ref_args = [env[o] for o in op.operands]
            if isinstance(op, RefCreateOp):
                value: Expr = RefCreate(ref_args[0])
            elif isinstance(op, RefReadOp):
                value = RefRead(ref_args[0])
            else:
                value = RefWrite(ref_args[0], ref_args[1])
            _let_effect(effects, env, op, value)
            continue
        if isinstance(op, ConstantOp):
            env[op.result] = Constant(
                op.numpy(),
                op.param_name.data if op.param_name else None,
                dtype=dtype_of(op.result.type),
            )
        elif isinstance(op, RelayOp):
            cls = type(op)
            args = [env[o] for o in op.operands]
            if _op_has_var_operands(cls):
                args = [Tuple(args)]
            call = Call(Op.get(cls.RELAY_NAME), args, op.attrs)
            if not op.results:
                _let_effect(effects, env, op, call)  # memory.kill: an effect with no value
                continue
            _bind_results(env, op.results, call, _op_returns_tuple(cls))
        elif isinstance(op, CallOp):
            callee_name = op.callee.root_reference.data
            callee = symbols.get(callee_name)
            if callee is None:
                raise RelayTypeError(f"in @{where}: call of undefined function @{callee_name}")
            args = [env[o] for o in op.arguments]
            if callee.sym_visibility is not None and callee.sym_visibility.data == "private":
                building = cache.setdefault(_BUILDING_KEY, {})  # type: ignore[arg-type]
                fn = cache.get(callee_name)
                if fn is None and callee_name in building:
                    fn = building[callee_name]  # a private function calling itself: its let name
                elif fn is None:
                    fn = cache[callee_name] = _rebuild_private(callee, symbols, cache, building)
                call = Call(fn, args)
            else:
                gv = GlobalVar(callee_name, _func_type(callee))
                call = Call(gv, args)
            if callee_name in _impure_functions(symbols, cache) and len(op.results) <= 1:
                _let_effect(effects, env, op, call)  # its effects happen here, in order
                continue
            _bind_results(env, op.results, call, len(op.results) != 1)
        elif isinstance(op, TensorCastOp):
            # a static/dynamic cast Relay's unification leaves implicit
            env[op.dest] = env[op.source]
        elif isinstance(op, ExtractOp) and not op.indices:
            env[op.result] = env[op.tensor]  # the bool scalar an If tests
        elif isinstance(op, IfOp):
            branches = [
                _block_expr(r.block, dict(env), symbols, cache, where, record)
                for r in (op.true_region, op.false_region)
            ]
            cond = If(env[op.cond], branches[0], branches[1])
            _bind_results(env, op.results, cond, len(op.results) != 1)
        elif isinstance(op, ConstructOp):
            ctor = _constructor(op, op.type_name, op.ctor_name)
            env[op.result] = Call(ctor, [env[o] for o in op.fields])
        elif isinstance(op, AdtCallOp):
            callee_name = op.callee.root_reference.data
            callee = symbols.get(callee_name)
            if callee is None:
                raise RelayTypeError(f"in @{where}: call of undefined function @{callee_name}")
            call = Call(GlobalVar(callee_name, _func_type(callee)), [env[o] for o in op.arguments])
            _bind_results(env, op.res, call, len(op.res) != 1)
        elif isinstance(op, ClosureOp):
            env[op.result] = _closure_expr(op, [env[o] for o in op.captured], symbols, cache, where)
        elif isinstance(op, ApplyOp):
            call = Call(env[op.fn], [env[o] for o in op.arguments])
            _bind_results(env, op.res, call, len(op.res) != 1)
        elif isinstance(op, MatchOp):
            clauses = []
            for attr, region in zip(op.patterns.data, op.clauses):
                names = [Var(a.name_hint or f"p{i}", py_type(a.type)) for i, a in enumerate(region.block.args)]
                pattern = pattern_from_attr(
                    attr, lambda n, o=op: type_data_of(_type_def(o, n)), op.data.type, names
                )
                inner = dict(env)
                inner.update(zip(region.block.args, names))
                clauses.append(Clause(pattern, _block_expr(region.block, inner, symbols, cache, where, record)))
            m = Match(env[op.data], clauses, complete=op.partial is None)
            _bind_results(env, op.res, m, len(op.res) != 1)
        elif isinstance(op, ReturnOp | YieldOp | AdtYieldOp):
            rets = [env[a] for a in op.operands]
            body = rets[0] if len(rets) == 1 else Tuple(rets)
        else:
            raise RelayTypeError(
                f"in @{where}: '{op.name}' has no Relay expression form (only relay ops, "
                "relay.constant, func.call, scf.if and func.return do)"
            )
    if body is None:
        raise RelayTypeError(f"@{where} has no func.return")
    for var, value in reversed(effects):
        body = Let(var, value, body)
    if record is not None:
        record.update((r, env[r]) for op in block.ops for r in op.results if r in env)
    return body


_BUILDING_KEY = "\0building"


def _type_def(op: Any, name: str) -> TypeDefOp:
    top = op
    while top.parent_op() is not None:
        top = top.parent_op()
    found = type_defs(top).get(name)
    if found is None:
        raise RelayTypeError(f"{op.name}: no type definition @{name} in the module")
    return found


def _constructor(op: Any, type_name: str, ctor: str) -> Constructor:
    td = type_data_of(_type_def(op, type_name))
    return next(c for c in td.constructors if c.name_hint == ctor)


def _signature_type_params(fop: FuncOp) -> tuple[Any, ...]:
    """The type variables of a ``func.func``'s signature, in order of first appearance."""
    names: list[str] = []
    for t in (*fop.function_type.inputs.data, *fop.function_type.outputs.data):
        names += [n for n in type_vars(t) if n not in names]
    return tuple(TypeVar(n) for n in names)


def _closure_expr(op: ClosureOp, captured: list[Expr], symbols: Mapping[str, FuncOp], cache: dict[str, Any], where: str) -> Expr:
    """A function value: a global's ``GlobalVar``, or a private function's literal with the
    parameters that hold captured values replaced by those values (Relay's closure)."""
    name = op.callee.root_reference.data
    fop = symbols.get(name)
    if fop is None:
        raise RelayTypeError(f"in @{where}: closure of undefined function @{name}")
    if fop.sym_visibility is None or fop.sym_visibility.data != "private":
        return GlobalVar(name, _func_type(fop))
    building = cache.setdefault(_BUILDING_KEY, {})  # type: ignore[arg-type]
    if name in building:
        return building[name]  # a literal that uses itself as a value: its let name
    fn = cache.get(name)
    if fn is None:
        fn = cache[name] = _rebuild_private(fop, symbols, cache, building)
    if not captured:
        return fn
    lit = fn.value if isinstance(fn, Let) else fn
    assert isinstance(lit, Function)
    own = len(lit.params) - len(captured)
    body = substitute(lit.body, dict(zip(lit.params[own:], captured)))
    new = Function(lit.params[:own], body, lit.ret_type, None, dict(lit.attrs))
    new._source_name = name
    return new


def _rebuild_private(fop: FuncOp, symbols: Mapping[str, FuncOp], cache: dict[str, Any], building: dict[str, Var]) -> Expr:
    """The callee expression of a private function: its literal, or, when it calls itself,
    ``let %f = fn (...) { ... %f(...) }; %f`` (Relay's recursive local function)."""
    name = fop.sym_name.data
    rec = building[name] = Var(name, _func_type(fop))
    try:
        fn = function_from_func(fop, symbols, cache)
    finally:
        del building[name]
    fn._source_name = name
    if any(n is rec for n in post_order(fn.body, into_functions=False)):
        return Let(rec, fn, rec)
    return fn


def _let_effect(effects: list[tuple[Var, Expr]], env: dict[SSAValue, Expr], op: Any, value: Expr) -> None:
    """Bind ``value`` (an op with effects) to a let variable where the op stands, so the
    rebuilt expression evaluates it there even when its result is unused (Relay's form)."""
    result = op.results[0] if op.results else None
    name = result.name_hint if result is not None and result.name_hint else "x"
    var = Var(name, py_type(result.type) if result is not None else TupleType([]))
    effects.append((var, value))
    if result is not None:
        env[result] = var


_IMPURE_KEY = "\0impure"


def _impure_functions(symbols: Mapping[str, FuncOp], cache: dict[str, Any]) -> set[str]:
    """``impure_functions`` of ``symbols``, computed once per rebuild (``cache`` holds it)."""
    known = cache.get(_IMPURE_KEY)
    if known is None:
        known = cache[_IMPURE_KEY] = impure_functions(f for f in symbols.values() if f is not None)
    return known


def _bind_results(env: dict[SSAValue, Expr], results: Any, call: Expr, as_tuple: bool) -> None:
    if not as_tuple:
        env[results[0]] = call
        return
    for i, r in enumerate(results):
        env[r] = TupleGetItem(call, i)


def _func_type(fop: FuncOp) -> FuncType:
    ins = list(fop.function_type.inputs.data)
    outs = list(fop.function_type.outputs.data)
    return py_type(FunctionType.from_lists(ins, outs))


def _mark_a_normal_form(fn: Function, module: ModuleOp) -> Function:
    """``fn`` with every call marked to be visited arguments first when ``module`` is in
    A-normal form (``to-a-normal-form``): the order Relay's visitor walks a let chain in."""

    if A_NORMAL_FORM_ATTR in module.attributes:
        for node in post_order(fn):
            if isinstance(node, Call):
                node._a_normal_form = True
    return fn


# --------------------------------------------------------------------------------------------
# IRModule
# --------------------------------------------------------------------------------------------


def _push_call(callee: Expr, args: list[Expr]) -> Expr:
    # the callee chosen by an ``if`` (or named by a ``let`` body) is called in each branch
    if isinstance(callee, If):
        return If(callee.cond, _push_call(callee.true_branch, args), _push_call(callee.false_branch, args))
    if isinstance(callee, Let):
        return Let(callee.var, callee.value, _push_call(callee.body, args))
    return Call(callee, args)


def _call_into_branches(body: Expr) -> Expr:
    """Relay calls a function value chosen at run time as ``(if (%p) { @g1 } else { @g2 })()``;
    xrelay's IR has no function values, so the call moves into the branches:
    ``if (%p) { @g1() } else { @g2() }`` (the same program: the arguments are evaluated once,
    before the branch, either way)."""

    mapping = {
        node: _push_call(node.op, list(node.args))
        for node in post_order(body)
        if isinstance(node, Call) and isinstance(node.op, If | Let)
    }
    return substitute(body, mapping) if mapping else body


def _rebuild_function(fn: Function, body: Expr) -> Function:
    new = Function(list(fn.params), body, attrs=dict(fn.attrs))
    new._source_name = fn._source_name
    return new


class IRModule:
    """A module of Relay functions, as ``tvm.IRModule``; ``module`` is the xDSL ``ModuleOp``.

    ``mod["f"] = fn`` lowers a ``Function`` (replacing any function of that name and
    dropping private functions nothing calls any more); ``mod["f"]`` rebuilds it.
    """

    def __init__(self, functions: Mapping[Any, Function] | None = None, type_definitions: Any = None):
        self.module = ModuleOp([])
        self._gvars: dict[str, GlobalVar] = {}
        self._attrs: dict[str, Any] = {}
        self.extern_types: set[str] = set()  # opaque types declared (import_from_std)
        for key, td in (type_definitions or {}).items():
            self[key] = td
        for key, fn in (functions or {}).items():
            self[key] = fn

    # ---- construction ---------------------------------------------------------------------

    @staticmethod
    def from_expr(expr: Any, functions: Mapping[Any, Function] | None = None, type_defs: Any = None) -> IRModule:
        """A module whose ``main`` is ``expr`` (wrapped in a function of its free variables
        when it is not a function)."""
        if isinstance(expr, TupleWrapper):
            expr = expr.astuple()
        if not isinstance(expr, Expr):
            raise TypeError(f"expected a relay expression, got {expr!r}")
        mod = IRModule(functions, type_defs)
        if not isinstance(expr, Function):
            expr = Function(free_vars(expr), expr)
        mod["main"] = expr
        return mod

    @staticmethod
    def from_module_op(module: ModuleOp) -> IRModule:
        """Wrap an existing xDSL ``ModuleOp`` (not copied)."""
        mod = IRModule()
        mod.module = module
        return mod

    # ---- module attributes and merging ----------------------------------------------------

    @property
    def attrs(self) -> dict[str, Any]:
        """The module's attributes (``executor``, ``runtime``, ...), as Relay's ``mod.attrs``.
        They live on this Python object: a pass that returns a new module does not carry them."""
        return dict(self._attrs)

    def same_as(self, other: object) -> bool:
        """Whether ``other`` is this very module object (Relay's reference equality)."""
        return self is other

    def get_attr(self, attr_key: str) -> Any:
        """The attribute ``attr_key``, or ``None``."""
        return self._attrs.get(attr_key)

    def with_attr(self, attr_key: str, attr_value: Any) -> IRModule:
        """A copy of the module with ``attr_key`` set to ``attr_value`` (Relay's ``with_attr``)."""
        mod = self.clone()
        mod._attrs[attr_key] = attr_value
        return mod

    def update(self, other: IRModule) -> None:
        """Add every function of ``other`` to this module, replacing same-named ones (Relay's
        ``IRModule.update``)."""
        if not isinstance(other, IRModule):
            raise TypeError(f"IRModule.update expects an IRModule, not {type(other).__name__}")
        for gv, fn in other.functions.items():
            self[gv.name_hint] = fn

    def import_from_std(self, file_to_import: str) -> IRModule:
        """Add the definitions of one of Relay's standard files and return the module, as
        Relay's ``import_from_std``: ``prelude.rly`` (List, Option, Tree and the
        list functions), ``nat.rly`` (Peano numbers; needs the Prelude) and ``core.rly`` (the
        external type ``Storage``, xrelay's ``!memory.storage``, recorded in
        ``extern_types``). A file already imported is not read again."""
        std = Path(__file__).with_name("std")
        known = sorted(p.name for p in std.glob("*.rly"))
        if file_to_import not in known:
            raise ValueError(f"import_from_std: no standard file {file_to_import!r} (known: {', '.join(known)})")
        done = self._attrs.setdefault("\0imported", set())
        if file_to_import in done:
            return self
        if parse_into is None:
            raise RuntimeError("import_from_std needs xrelay.relay.parser imported")
        parse_into((std / file_to_import).read_text(), str(std / file_to_import), init_module=self)
        done.add(file_to_import)
        return self

    @staticmethod
    def from_text(text: str, params: Mapping[str, np.ndarray] | None = None) -> IRModule:
        """Parse xrelay's textual IR; ``relay.constant @name : type`` reads ``params``."""
        from xdsl.parser import Parser


        with params_source(params):
            module = Parser(make_context(), text).parse_module()
        verify_module(module)
        return IRModule.from_module_op(module)

    @staticmethod
    def load(path_mlir: str | Path, path_npz: str | Path | None = None) -> IRModule:
        """Read a module written by ``save`` (weights from the ``.npz`` file)."""
        text = Path(path_mlir).read_text()
        params = None
        if path_npz is not None:
            try:
                params = read_npz(path_npz)
            except NpzError as e:
                raise ValueError(f"cannot read the weights '{path_npz}': {e}") from None
        return IRModule.from_text(text, params)

    # ---- functions ------------------------------------------------------------------------

    def _name(self, key: Any) -> str:
        if isinstance(key, GlobalVar):
            return key.name_hint
        if isinstance(key, str):
            return key
        raise TypeError(f"module keys are names or GlobalVars, got {key!r}")

    def _public(self) -> dict[str, FuncOp]:
        return {
            name: fop
            for name, fop in _symbols(self.module).items()
            if fop.sym_visibility is None or fop.sym_visibility.data != "private"
        }

    def _add_type_def(self, key: Any, td: TypeData) -> None:
        """``mod[List] = TypeData(...)``: an ``adt.type_def`` (replacing one of that name)."""
        name = key.name_hint if isinstance(key, GlobalTypeVar) else key
        if not isinstance(name, str) or name != td.header.name_hint:
            raise ValueError(f"type definition {td.header.name_hint} added under the name {name!r}")
        op = type_def_op(td)
        old = type_defs(self.module).get(name)
        if old is not None:
            old.detach()
            old.erase()
        block = self.module.body.block
        after = [o for o in block.ops if isinstance(o, TypeDefOp)]
        first = block.first_op
        if after:  # type definitions first, in the order they were added
            block.insert_op_after(op, after[-1])
        elif first is None:
            block.add_op(op)
        else:
            block.insert_op_before(op, first)
        register_type_data(op, td)

    @property
    def type_definitions(self) -> dict[GlobalTypeVar, TypeData]:
        """Every type definition by its ``GlobalTypeVar`` (Relay's ``mod.type_definitions``)."""
        return {td.header: td for td in (type_data_of(op) for op in type_defs(self.module).values())}

    def get_global_type_var(self, name: str) -> GlobalTypeVar:
        """The ``GlobalTypeVar`` of the type definition ``name``."""
        op = type_defs(self.module).get(name)
        if op is None:
            raise ValueError(f"cannot find global type var {name} in the module")
        return type_data_of(op).header

    def get_global_type_vars(self) -> list[GlobalTypeVar]:
        return [type_data_of(op).header for op in type_defs(self.module).values()]

    def get_type(self, name: str) -> tuple[Any, ...]:
        """``(GlobalTypeVar, *constructors)`` of the type definition ``name`` (Relay's
        ``IRModule.get_type``)."""
        td = self.type_definitions.get(self.get_global_type_var(name))
        assert td is not None
        return (td.header, *td.constructors)

    def get_constructor(self, tag: int) -> Constructor:
        """Raises: xrelay's tags are per type definition (the constructor's index), not
        module-wide; use ``get_type``."""
        for td in self.type_definitions.values():
            for c in td.constructors:
                if c.tag == tag:
                    return c
        raise ValueError(f"no constructor with tag {tag}")

    def __setitem__(self, key: Any, fn: Function) -> None:
        if isinstance(fn, TypeData):
            self._add_type_def(key, fn)
            return
        if isinstance(fn, Expr) and not isinstance(fn, Function):
            raise TypeError(f"only functions can be added to a module, got {fn!r}")
        if not isinstance(fn, Function):
            raise TypeError(f"expected a relay.Function, got {fn!r}")
        name = self._name(key)
        old = _symbols(self.module).get(name)
        if old is not None:
            old.detach()
            old.erase()
            self._drop_dead_private()
        funcs = lower_function(fn, name, self.module)
        for f in funcs:
            self.module.body.block.add_op(f)
        if not fn._inferred:  # built in Python: untyped in Relay until InferType
            mark_types_unknown(funcs)
        gv = key if isinstance(key, GlobalVar) else self._gvars.get(name) or GlobalVar(name)
        gv._type = _func_type(funcs[-1])
        self._gvars[name] = gv

    def _drop_dead_private(self) -> None:
        """Erase private functions that no function calls (outlined helpers of a replaced one)."""
        while True:
            syms = _symbols(self.module)
            called = {
                op.callee.root_reference.data
                for f in syms.values()
                for op in f.walk()
                if isinstance(op, CallOp)
            }
            dead = [
                f
                for n, f in syms.items()
                if f.sym_visibility is not None and f.sym_visibility.data == "private" and n not in called
            ]
            if not dead:
                return
            for f in dead:
                f.detach()
                f.erase()

    def __getitem__(self, key: Any) -> Function:
        name = self._name(key)
        syms = _symbols(self.module)
        fop = syms.get(name)
        if fop is None:
            have = ", ".join(sorted(self._public())) or "none"
            raise KeyError(f"no function @{name} in the module (functions: {have})")
        return _mark_a_normal_form(function_from_func(fop, syms), self.module)

    def __contains__(self, key: Any) -> bool:
        return self._name(key) in _symbols(self.module)

    def __delitem__(self, key: Any) -> None:
        name = self._name(key)
        fop = _symbols(self.module).get(name)
        if fop is None:
            raise KeyError(name)
        fop.detach()
        fop.erase()
        self._drop_dead_private()

    def get_global_var(self, name: str) -> GlobalVar:
        """The GlobalVar of the public function ``name``."""
        fop = self._public().get(name)
        if fop is None:
            raise ValueError(f"cannot find global var {name} in the module")
        gv = self._gvars.get(name)
        if gv is None:
            gv = self._gvars[name] = GlobalVar(name)
        gv._type = _func_type(fop)
        return gv

    def get_global_vars(self) -> list[GlobalVar]:
        """GlobalVars of the public functions, sorted by name (as Relay prints them)."""
        return [self.get_global_var(n) for n in sorted(self._public())]

    @property
    def functions(self) -> dict[GlobalVar, Function]:
        """Every public function by its GlobalVar (private ones appear as literals inside)."""
        syms = _symbols(self.module)
        cache: dict[str, Function] = {}
        return {
            self.get_global_var(n): _mark_a_normal_form(function_from_func(syms[n], syms, cache), self.module)
            for n in sorted(self._public())
        }

    # ---- text -----------------------------------------------------------------------------

    def astext(self, show_meta_data: bool = True, annotate: Any = None) -> str:
        """The module in Relay's text format 0.0.5, as ``tvm.IRModule.astext``
        (``xrelay.relay.text_printer``); ``xrelay.parser.parse`` reads it back.
        ``annotate=False`` leaves out the ``/* ty=... */`` comments."""

        return astext(self.module, show_meta_data, annotate_types=annotate is not False)

    def mlir_text(self, elide_large_constants: int | None = None) -> str:
        """The module as xrelay's MLIR text (``relay-opt``'s output). With
        ``elide_large_constants=N``, data of constants with more than N elements is elided
        (readable, not parseable)."""
        from xdsl.printer import Printer

        out = io.StringIO()
        with print_options(elide_larger_than=elide_large_constants):
            Printer(stream=out).print_op(self.module)
        out.write("\n")
        return out.getvalue()

    def __str__(self) -> str:
        """Relay's text, as ``str(tvm.IRModule)`` (Relay's ``PrettyPrint``): ``astext()``
        without the version line and the metadata section; MLIR is ``mlir_text()``."""

        return pretty_print(self.module)

    def __repr__(self) -> str:
        names = ", ".join("@" + n for n in sorted(self._public()))
        return f"IRModule({names})"

    def show(self, **kwargs: Any) -> None:
        """Print the module as ``print(mod)`` does (Relay's text, as ``tvm.IRModule.show``);
        TVM's TVMScript styling options are accepted and ignored."""
        print(self)

    def save(self, path_mlir: str | Path, path_npz: str | Path) -> dict[str, np.ndarray]:
        """Write the text to ``path_mlir`` with the constants' data (weights) in ``path_npz``.

        Named constants and constants of 2 or more elements are stored by name; returns the
        stored arrays.
        """
        from xdsl.printer import Printer

        params: dict[str, np.ndarray] = {}
        out = io.StringIO()
        with print_options(external=params):
            Printer(stream=out).print_op(self.module)
        out.write("\n")
        Path(path_mlir).write_text(out.getvalue())
        with open(path_npz, "wb") as f:
            np.savez(f, **params)
        return params

    def clone(self) -> IRModule:
        """A deep copy (the xDSL module is cloned)."""
        mod = IRModule.from_module_op(self.module.clone())
        mod._attrs = dict(self._attrs)
        mod.extern_types = set(self.extern_types)
        return mod

    def copy(self) -> IRModule:
        return self.clone()

    def verify(self) -> None:
        """Verify the xDSL module (types, symbols)."""
        verify_module(self.module)


def _expr_as_module(e: Expr) -> IRModule:
    fn = e if isinstance(e, Function) else Function(free_vars(e), e)
    return IRModule.from_module_op(ModuleOp(lower_function(fn, "main", allow_external=True)))


# expr cannot import this module (it builds on expr): printing an expression comes through here
expr_module.as_module = _expr_as_module
