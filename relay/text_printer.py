"""Relay's text format (version 0.0.5) printed from xrelay's IR.

``astext(module)`` prints a ``ModuleOp`` of ``func.func`` + relay ops as Relay prints an
``IRModule``::

    #[version = "0.0.5"]
    def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) -> Tensor[(1, 4, 8, 8), float32] {
      %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]) /* ty=Tensor[(1, 4, 8, 8), float32] */;
      nn.relu(%0) /* ty=Tensor[(1, 4, 8, 8), float32] */
    }

The rules are Relay's (``relay_text_printer.cc``):

* Each public ``func.func`` is a ``def @name(params, attrs) -> ret { body }``; Relay function
  attributes (``relay.primitive`` ...) print by their Relay names (``Primitive=1``).
* Every op call is bound to a temporary ``%N`` except the last expression of a body when it
  is used only there, which is printed in place. Attributes equal to their default are not
  printed, as Relay's ``VisitNonDefaultAttrs``; ``/* ty=... */`` follows every call.
* A multi-result op is a tuple: ``%1 = nn.batch_norm(...); %2 = %1.0;`` (a field is bound when
  first used); variadic operands (``concatenate``) are a tuple ``%3 = (%1, %2);``.
* Scalars of int16/32/64, float16/32/64 and bool print inline (``1f``, ``2i64``, ``True``); other
  constants are ``meta[relay.Constant][i]`` with the table after ``#[metadata]``
  (``xrelay.relay.text_metadata``). A scalar used twice prints twice, as Relay's (the parser
  makes two nodes of it, as Relay's; CSE makes them one again).
* A private function (an outlined function literal, e.g. a fused ``Primitive`` function) prints
  as a function literal bound to a temporary at its first call in each ``def``, then called
  through it: ``%0 = fn (%p0: ..., Primitive=1) -> ... { ... }; %1 = %0(%x);``.
* A value with a name of its own (an op result whose SSA name hint is set, as a Relay ``let``
  leaves it) prints as ``let %name = ...;``: this is how let-bindings survive SSA. After
  ``to-a-normal-form`` (the module's ``relay.a_normal_form`` mark) every call is let-bound,
  unnamed ones as ``%x``, ``%x1``, ... and the body ends in a variable, as Relay's ANF prints;
  ``to-graph-normal-form`` drops the names and the mark, so the text is graph bindings again.
* ADTs (the adt dialect): a type definition prints as ``type List[A] { Cons(A, List[A]), Nil, }``
  before the defs, a constructor call as ``Cons(%x, %l)`` (``Nil`` with no fields), a match as
  ``match (%l) { Cons(%h, _) => ..., }`` (``match?`` when partial), a call of a function with
  type parameters as any call, and such a function as ``def @hd[A](%xs: List[A]) -> A``.
* References (the ref dialect) print as Relay's ``ref(%v)``, ``ref_read(%r)`` and
  ``ref_write(%r, %v)``, each let-bound where it stands (an effect happens in order); their
  type prints ``ref(T)``.

Names are made unique the way Relay does (``%x``, ``%x1``, ...) within each ``def`` and each
function literal (a printed literal is closed, so its parameters keep their own names);
parameters are allocated first, so ``main`` keeps its input names.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.dialects.scf import IfOp, YieldOp
from xdsl.dialects.tensor import ExtractOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.irdl import VarOperandDef

from xrelay.dialects.adt import (
    AdtCallOp,
    ApplyOp,
    ClosureOp,
    ConstructOp,
    MatchOp,
    PatternAttr,
    TypeDefOp,
    TypeVarType,
    ValueType,
)
from xrelay.dialects.adt import YieldOp as AdtYieldOp
from xrelay.dialects.adt import type_vars as adt_type_vars
from xrelay.dialects.ref import REF_OPS, RefCreateOp, RefReadOp, RefType, RefWriteOp
from xrelay.dialects.relay import ConstantOp, RelayOp, dtype_of, shape_of
from xrelay.dialects.relay.ops import StorageType
from xrelay.dialects.relay.strings import is_string_tensor
from xrelay.error import TVMError
from xrelay.relay.function_attrs import func_attrs_from_ir
from xrelay.relay.text_metadata import write_metadata
from xrelay.transforms.infra import types_inferred
from xrelay.transforms.to_a_normal_form import A_NORMAL_FORM_ATTR

__all__ = ["RelayTextPrintError", "astext", "format_attr", "format_type", "is_let_bound", "pretty_print"]

VERSION = "0.0.5"

_REF_SYNTAX = {RefCreateOp: "ref", RefReadOp: "ref_read", RefWriteOp: "ref_write"}

_SIMPLE_SCALARS = {"int16", "int32", "int64", "float16", "float32", "float64", "bool"}


def is_let_bound(op: Operation, anf: bool) -> bool:
    """Whether ``op`` is a Relay ``let`` binding: a relay op, call or If whose result has a name
    of its own (as a ``let`` leaves it), or any of them in a module in A-normal form (``anf``:
    its ``relay.a_normal_form`` mark); a constant with a name of its own (``let %a = 100;``).
    An If's condition never is."""
    if isinstance(op, ConstantOp):
        return op.result.name_hint is not None
    if isinstance(op, ExtractOp):
        return False
    if isinstance(op, REF_OPS) or (isinstance(op, RelayOp) and not op.results):
        return True  # an effect (ref_write, memory.kill): printed where it happens, in order
    if not isinstance(op, RelayOp | CallOp | IfOp | MatchOp | ConstructOp | AdtCallOp | ApplyOp | ClosureOp) or not op.results:
        return False
    return anf or any(r.name_hint for r in op.results)


class RelayTextPrintError(ValueError, TVMError):
    """The module holds something Relay's text format cannot show (a non-relay op)."""


# --------------------------------------------------------------------------------------------
# Types and attribute values
# --------------------------------------------------------------------------------------------


def format_type(t: Attribute | Sequence[Attribute]) -> str:
    """``Tensor[(1, 10), float32]`` (a scalar is its dtype; ``?`` for dynamic dims); a list of
    types prints as a tuple type."""
    if isinstance(t, list | tuple):
        inner = ", ".join(format_type(x) for x in t)
        return f"({inner},)" if len(t) == 1 else f"({inner})"
    if is_string_tensor(t):
        raise RelayTextPrintError(f"{t} has no Relay text form (Relay has no string dtype; design decision 11)")
    if isinstance(t, TensorType):
        shape = shape_of(t)
        dtype = dtype_of(t)
        if not shape:
            return dtype
        dims = ", ".join("?" if d is None else str(d) for d in shape)
        return f"Tensor[({dims}), {dtype}]"
    if isinstance(t, RefType):
        return f"ref({format_type(t.value)})"
    if isinstance(t, TypeVarType):
        return t.var_name.data
    if isinstance(t, ValueType):
        if not t.args.data:
            return t.def_name
        return f"{t.def_name}[{', '.join(format_type(a) for a in t.args.data)}]"
    if isinstance(t, FunctionType):
        outs = list(t.outputs.data)
        ret = format_type(outs[0] if len(outs) == 1 else outs)
        return f"fn ({', '.join(format_type(a) for a in t.inputs.data)}) -> {ret}"
    if isinstance(t, StorageType):
        return "Storage[]"  # core.rly's type Storage, applied to no arguments (a TypeCall)
    raise RelayTextPrintError(f"type {t} has no Relay text form")


def _float_text(v: float) -> str:
    if math.isfinite(v) and v == int(v) and abs(v) < 1e16:
        return str(int(v))
    return repr(float(v))


def format_attr(value: Any) -> str:
    """An attribute value as Relay prints it: ``1``, ``1e-05f``, ``True``, ``"NCHW"``, ``[1, 1]``."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float):
        return _float_text(value) + "f"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(value, list | tuple):
        return "[" + ", ".join(format_attr(v) for v in value) + "]"
    if value is None:
        return "None"
    if hasattr(value, "relay_text"):  # an attribute that knows its Relay form (VirtualDevice)
        return value.relay_text()
    raise RelayTextPrintError(f"attribute value {value!r} has no Relay text form")


def _scalar_literal(arr: np.ndarray, dtype: str) -> str | None:
    """Relay's inline literal for a simple scalar constant, else None (a meta constant)."""
    if arr.ndim != 0 or dtype not in _SIMPLE_SCALARS:
        return None
    v = arr.item()
    if dtype == "bool":
        return "True" if v else "False"
    if dtype.startswith("int"):
        return {"int16": f"{v}i16", "int32": f"{v}", "int64": f"{v}i64"}[dtype]
    if not math.isfinite(v):
        return None
    if dtype == "float32":
        text = str(np.float32(v))  # shortest text that reads back to the same float32
    elif dtype == "float16":
        text = str(np.float16(v))
    else:
        text = repr(float(v))
    if text.endswith(".0"):
        text = text[:-2]
    return text + {"float16": "f16", "float32": "f", "float64": "f64"}[dtype]


def op_attr_items(op: RelayOp) -> list[str]:
    """``key=value`` for each attribute Relay prints (``RelayOp.relay_text_attrs``)."""
    return [f"{name}={format_attr(value)}" for name, value in op.relay_text_attrs()]


# --------------------------------------------------------------------------------------------
# The printer
# --------------------------------------------------------------------------------------------


_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_/.")


def _relay_name(name: str) -> str:
    """A name the parser reads back as one variable: other characters become ``_``; a part
    after a dot is not empty (a part of only digits is read as a name only at its binding
    site or when that name is in scope, so ``%x.0`` stays field 0 of ``%x`` otherwise)."""
    cleaned = "".join(c if c in _NAME_CHARS else "_" for c in name)
    parts = cleaned.split(".")
    for k in range(1, len(parts)):
        if not parts[k]:
            parts[k] = "_"
    return ".".join(parts)


class _Names:
    """Relay's GetUniqueName: ``x``, then ``x1``, ``x2``, ... (one allocator per printed text,
    as Relay's printer never resets it: a literal's parameters and later defs share it)."""

    def __init__(self) -> None:
        self.taken: dict[str, int] = {}

    def unique(self, prefix: str) -> str:
        prefix = _relay_name(prefix)
        if not prefix or not prefix[0].isalpha():
            prefix = "v" + prefix
        name = prefix
        if name in self.taken:
            n = self.taken[prefix]
            while True:
                n += 1
                name = f"{prefix}{n}"
                if name not in self.taken:
                    break
            self.taken[prefix] = n
        self.taken[name] = 0
        return name


def _indented(doc: str, by: str = "  ") -> str:
    return by + doc.replace("\n", "\n" + by)


# A node of the Relay expression graph the printer walks (Relay's printer memoises per node):
# ("op", op) a call (a multi-result op is a call returning a tuple), ("tgi", op, i) its field
# i, ("tup", op) the tuple of an op's variadic operands, ("ret", op) the tuple a function
# returns, ("fn", name) a private function printed as a literal, ("const", op), ("if", op).
_Node = tuple


class _DefPrinter:
    """Prints one ``def`` (and the function literals of the private functions it calls) as
    Relay's ``RelayTextPrinter``: a post-order walk from the body's result that visits a
    call's callee before its arguments, binds a node to a temporary when a consumer prints it
    (so arguments are numbered before the function literal they are passed to, and a
    literal's own body before both), and inlines the body's last expression."""

    def __init__(self, printer: _Printer, typed: bool):
        self.p = printer
        self.names = printer.names
        self.typed = typed
        self.annotate = printer.annotate and typed
        self.memo: dict[_Node, str] = {}  # node -> its text (VisitLeaf), then its temporary
        self.bound: set[_Node] = set()  # nodes bound to a temporary
        self.annotated: set[_Node] = set()  # nodes whose /* ty=... */ was printed
        self.refs: dict[SSAValue, str] = {}  # parameters and let-bound values
        self.tuple_refs: dict[Operation, str] = {}  # let-bound multi-result ops
        self.named_tuples: set[Operation] = set()  # multi-result ops let-bound under one name
        self.lines: list[str] = []  # the current scope's bindings
        self.fn_refs: dict[str, str] = {}

    def temp(self) -> str:
        t = f"%{self.p.counter}"
        self.p.counter += 1
        return t

    # ---- functions and scopes ------------------------------------------------------------

    def param(self, arg: SSAValue, i: int) -> str:
        name = "%" + self.names.unique(arg.name_hint or f"p{i}")
        self.refs[arg] = name
        text = f"{name}: {format_type(arg.type)}"
        if self.annotate:
            text += f" /* ty={format_type(arg.type)} */"
        return text

    def func(self, fop: FuncOp, prefix: str, n_params: int | None = None) -> str:
        """``prefix(params, attrs) -> ret { body }`` (the return type only when typed); only the
        first ``n_params`` parameters when given (a closure's captured ones are bound)."""
        block = fop.body.block
        params = [self.param(arg, i) for i, arg in enumerate(list(block.args)[:n_params])]
        params += [f"{k}={format_attr(v)}" for k, v in func_attrs_from_ir(fop).items()]
        tvars: list[str] = []
        for t in (*fop.function_type.inputs.data, *fop.function_type.outputs.data):
            tvars += [v for v in adt_type_vars(t) if v not in tvars]
        if tvars:
            prefix += f"[{', '.join(tvars)}]"
        head = f"{prefix}({', '.join(params)}) "
        if self.typed:
            outs = list(fop.function_type.outputs.data)
            head += f"-> {format_type(outs[0] if len(outs) == 1 else outs)} "
        return head + "{\n" + _indented(self.scope(block)) + "\n}"

    def scope(self, block: Block) -> str:
        """A body: its let bindings in order, the temporaries its result needs, the result."""
        outer, self.lines = self.lines, []
        ops = list(block.ops)
        ret = ops[-1] if ops and isinstance(ops[-1], ReturnOp | YieldOp | AdtYieldOp) else None
        if ret is None:
            raise RelayTextPrintError("a function body without func.return")
        for op in ops[:-1]:
            if self._let_bound(op):
                self._let(op)
        final = self.print(self._ret_node(ret, ops), try_inline=True)
        lines, self.lines = self.lines, outer
        return "\n".join([*lines, final])

    def _let_bound(self, op: Operation) -> bool:
        return is_let_bound(op, self.p.anf)

    def _let(self, op: Operation) -> None:
        results = list(op.results)
        if not results:  # ref_write: its value is (), bound to a name nothing uses
            doc = self.print(("op", op), try_inline=True)
            self.lines.append(f"let %{self.names.unique('x')} = {doc};")
            return
        whole = results[0].name_hint
        if len(results) > 1 and not all(r.name_hint == whole for r in results):
            whole = None  # only the fields have names (let-bound where first used)
        elif len(results) > 1:
            self.named_tuples.add(op)
        if len(results) == 1 or whole or self.p.anf:
            if self.p.anf and not isinstance(op, IfOp | MatchOp):  # fields are let-bound before their use
                for child in self._children(("op", op)):
                    if isinstance(child, tuple) and child[0] == "tgi":
                        self.print(child)
            name = "%" + self.names.unique(whole or "x")
            kind = "if" if isinstance(op, IfOp | MatchOp) else "const" if isinstance(op, ConstantOp) else "op"
            doc = self.print((kind, op), try_inline=True)
            self.lines.append(f"let {name} = {doc};")
            if len(results) == 1:
                self.refs[results[0]] = name
            else:
                self.tuple_refs[op] = name
        # else: fields with names of their own are let-bound where they are first used

    def _ret_node(self, ret: Operation, ops: list[Operation]) -> _Node | SSAValue:
        operands = list(ret.operands)
        if len(operands) == 1:
            return operands[0]
        prev = ops[-2] if len(ops) > 1 else None
        if prev is not None and len(prev.results) > 1 and operands == list(prev.results):
            return ("if", prev) if isinstance(prev, IfOp) else ("op", prev)  # a tuple returned whole
        return ("ret", ret)

    # ---- the expression graph ------------------------------------------------------------

    def node(self, v: SSAValue) -> _Node | str:
        """The node computing ``v``, or its name when it is a parameter or let-bound."""
        r = self.refs.get(v)
        if r is not None:
            return r
        owner = v.owner
        if isinstance(owner, ExtractOp) and not owner.indices:  # the bool scalar an If tests
            return self.node(owner.tensor)
        if isinstance(owner, ConstantOp):
            return ("const", owner)
        if isinstance(owner, Operation) and len(owner.results) != 1:
            return ("tgi", owner, v.index)
        if isinstance(owner, IfOp | MatchOp):
            return ("if", owner)
        if isinstance(owner, Operation):
            return ("op", owner)
        raise RelayTextPrintError(f"value {v} is used before it is defined")

    def _args(self, op: Operation) -> list[_Node | str]:
        args: list[_Node | str] = [self.node(o) for o in op.operands]
        if isinstance(op, RelayOp):
            defs = type(op).get_irdl_definition().operands
            if any(isinstance(d, VarOperandDef) for _, d in defs):
                var_at = next(i for i, (_, d) in enumerate(defs) if isinstance(d, VarOperandDef))
                k = len(args) - (len(defs) - 1)
                args = [*args[:var_at], ("tup", op), *args[var_at + k :]]
        return args

    def _children(self, node: _Node) -> list[_Node | str]:
        kind = node[0]
        if kind == "op":
            op = node[1]
            args = self._args(op)
            if isinstance(op, CallOp):
                name = op.callee.root_reference.data
                if self._private(name):
                    return [("fn", name), *args]
            return args
        if kind == "tgi":
            owner = node[1]
            if owner in self.tuple_refs:
                return []
            return [("if", owner) if isinstance(owner, IfOp) else ("op", owner)]
        if kind == "tup":
            op = node[1]
            defs = type(op).get_irdl_definition().operands
            var_at = next(i for i, (_, d) in enumerate(defs) if isinstance(d, VarOperandDef))
            k = len(op.operands) - (len(defs) - 1)
            return [self.node(o) for o in list(op.operands)[var_at : var_at + k]]
        if kind == "ret":
            return [self.node(o) for o in node[1].operands]
        return []  # fn, const, if: leaves (an If prints its condition and branches itself)

    def _private(self, name: str) -> bool:
        fop = self.p.symbols.get(name)
        if fop is None:
            raise RelayTextPrintError(f"call of undefined function @{name}")
        return fop.sym_visibility is not None and fop.sym_visibility.data == "private"

    def _expand(self, root: _Node) -> None:
        """Relay's ExpandDataflow: visit every unvisited node below ``root`` in post order, a
        call's callee first, then its arguments left to right."""
        stack: list[list[Any]] = [[root, False]]
        while stack:
            top = stack[-1]
            if top[0] in self.memo:
                stack.pop()
            elif top[1]:
                stack.pop()
                self.memo[top[0]] = self._leaf(top[0])
            else:
                top[1] = True
                for c in reversed(self._children(top[0])):
                    if isinstance(c, tuple) and c[0] == "fn" and c[1] in self.fn_refs:
                        continue  # already bound (a recursive function's own name)
                    if not isinstance(c, str) and c not in self.memo:
                        stack.append([c, False])

    def _leaf(self, node: _Node) -> str:
        """A node's own text (Relay's VisitExpr_), its operands printed (bound) first."""
        kind = node[0]
        if kind == "op":
            op = node[1]
            args = [self.print(a) for a in self._args(op)]
            if isinstance(op, RelayOp):
                return f"{op.RELAY_NAME}({', '.join(args + op_attr_items(op))})"
            if isinstance(op, CallOp):
                name = op.callee.root_reference.data
                callee = self.print(("fn", name)) if self._private(name) else "@" + name
                return f"{callee}({', '.join(args)})"
            if isinstance(op, REF_OPS):
                return f"{_REF_SYNTAX[type(op)]}({', '.join(args)})"
            if isinstance(op, ConstructOp):
                return f"{op.ctor_name}({', '.join(args)})" if args else op.ctor_name
            if isinstance(op, AdtCallOp):
                return f"@{op.callee.root_reference.data}({', '.join(args)})"
            if isinstance(op, ApplyOp):
                return f"{args[0]}({', '.join(args[1:])})"
            if isinstance(op, ClosureOp):
                name = op.callee.root_reference.data
                if not self._private(name):
                    return "@" + name
                # a literal: its captured parameters print as the values it captured
                fop = self.p.symbols[name]
                own = len(fop.body.block.args) - len(args)
                for arg, text in zip(list(fop.body.block.args)[own:], args):
                    self.refs[arg] = text
                return self.func(fop, "fn ", own)
            raise RelayTextPrintError(
                f"'{op.name}' has no Relay text form (only relay ops, relay.constant, "
                "func.call and func.return do)"
            )
        if kind == "tgi":
            owner = node[1]
            base = self.tuple_refs.get(owner)
            if base is None:
                base = self.print(("if", owner) if isinstance(owner, IfOp) else ("op", owner))
            return f"{base}.{node[2]}"
        if kind in ("tup", "ret"):
            fields = [self.print(c) for c in self._children(node)]
            return "(" + ", ".join(fields) + ("," if len(fields) == 1 else "") + ")"
        if kind == "fn":
            fop = self.p.symbols[node[1]]
            if _calls_itself(fop):
                # Relay's recursive local function: ``let %f = fn (...) { ... %f(...) };``
                name = "%" + self.names.unique(node[1])
                self.fn_refs[node[1]] = name
                self.lines.append(f"let {name} = {self.func(fop, 'fn ')};")
                return name
            return self.func(fop, "fn ")
        if kind == "const":
            return self.p.constant(node[1])
        if kind == "if":
            return self._match(node[1]) if isinstance(node[1], MatchOp) else self._if(node[1])
        raise AssertionError(node)

    def _outside_values(self, op: Operation) -> None:
        # values the clauses use from outside are bound before (as for an If's branches)
        for region in op.regions:
            for inner in region.walk():
                for o in inner.operands:
                    if not _defined_in(o, op):
                        n = self.node(o)
                        if not isinstance(n, str):
                            self.print(n)

    def _pattern(self, p: Attribute, args: list[str]) -> str:
        from xdsl.dialects.builtin import ArrayAttr, StringAttr, SymbolRefAttr

        if isinstance(p, PatternAttr):
            p = p.tree
        if isinstance(p, StringAttr):
            return args.pop(0) if p.data == "var" else "_"
        assert isinstance(p, ArrayAttr)
        items = p.data
        if items and isinstance(items[0], SymbolRefAttr):
            name = items[0].root_reference.data
            subs = [self._pattern(q, args) for q in items[1:]]
            return f"{name}({', '.join(subs)})" if subs else name
        return "(" + ", ".join(self._pattern(q, args) for q in items) + ")"

    def _match(self, op: MatchOp) -> str:
        data = self.print(self.node(op.data))
        self._outside_values(op)
        clauses = []
        for attr, region in zip(op.patterns.data, op.clauses):
            names = []
            for i, a in enumerate(region.block.args):
                name = "%" + self.names.unique(a.name_hint or f"p{i}")
                self.refs[a] = name
                names.append(name)
            pat = self._pattern(attr, names)
            outer_fns = dict(self.fn_refs)
            body = self.scope(region.block)
            self.fn_refs = outer_fns
            rhs = body if "\n" not in body else "{\n" + _indented(body) + "\n}"
            clauses.append(f"{pat} => {rhs},")
        head = "match?" if op.partial is not None else "match"
        return f"{head} ({data}) {{\n" + _indented("\n".join(clauses)) + "\n}"

    def _if(self, op: IfOp) -> str:
        # values the branches use from outside are bound before the If (xrelay computes a
        # value both branches use before it; Relay would hold it in each branch)
        for region in (op.true_region, op.false_region):
            for inner in region.walk():
                for o in inner.operands:
                    if o.owner is not None and not _inside(o, op):
                        n = self.node(o)
                        if not isinstance(n, str):
                            self.print(n)
        cond = self.print(self.node(op.cond))
        branches = []
        for region in (op.true_region, op.false_region):
            outer_fns = dict(self.fn_refs)  # a literal bound in a branch stays there
            branches.append(self.scope(region.block))
            self.fn_refs = outer_fns
        return f"if ({cond}) {{\n{_indented(branches[0])}\n}} else {{\n{_indented(branches[1])}\n}}"

    def _type_of(self, node: _Node) -> str | None:
        kind = node[0]
        if kind == "fn":
            fop = self.p.symbols[node[1]]
            ins = list(fop.function_type.inputs.data)
            outs = list(fop.function_type.outputs.data)
            fn_ty = f"fn ({', '.join(format_type(t) for t in ins)}) -> "
            return fn_ty + format_type(outs[0] if len(outs) == 1 else outs)
        if kind == "if" or (kind == "op" and isinstance(node[1], REF_OPS)):
            return None  # Relay annotates calls, constants, tuples, fields and functions only
        if kind == "tgi":
            return format_type(node[1].results[node[2]].type)
        if kind == "tup":
            return format_type([c.type for c in _group(node[1])])
        if kind == "ret":
            return format_type([o.type for o in node[1].operands])
        if kind == "const":
            return format_type(node[1].result.type)
        types = [r.type for r in node[1].results]
        return format_type(types[0] if len(types) == 1 else types)

    def print(self, target: _Node | SSAValue | str, try_inline: bool = False) -> str:
        """Relay's PrintExpr: the node's text inline (a constant; the last expression of a
        body), else the temporary it is bound to, binding it on first use."""
        if isinstance(target, SSAValue):
            target = self.node(target)
        if isinstance(target, str):
            return target
        if target in self.bound:
            return self.memo[target]
        if target[0] == "fn" and target[1] in self.fn_refs:
            return self.fn_refs[target[1]]
        if target not in self.memo:
            self._expand(target)
        if target[0] == "fn" and target[1] in self.fn_refs:  # let-bound while expanded
            return self.fn_refs[target[1]]
        doc = self.memo[target]
        if self.annotate and target not in self.annotated:
            self.annotated.add(target)
            ty = self._type_of(target)
            if ty is not None:
                doc += f" /* ty={ty} */"
        if target[0] == "const" or (try_inline and target[0] != "fn"):
            self.memo[target] = doc
            return doc
        if target[0] == "tgi":
            v = target[1].results[target[2]]
            own = v.name_hint if target[1] not in self.named_tuples else None  # not the tuple's name
            if own or self.p.anf:  # a let-bound field keeps its name
                name = "%" + self.names.unique(own or "x")
                self.lines.append(f"let {name} = {doc};")
                self.memo[target] = name
                self.bound.add(target)
                return name
        t = self.temp()
        self.lines.append(f"{t} = {doc};")
        self.memo[target] = t
        self.bound.add(target)
        if target[0] == "fn":
            self.fn_refs[target[1]] = t
        return t


def _calls_itself(fop: FuncOp) -> bool:
    name = fop.sym_name.data
    return any(isinstance(op, CallOp) and op.callee.root_reference.data == name for op in fop.walk())


def _group(op: RelayOp) -> list[SSAValue]:
    defs = type(op).get_irdl_definition().operands
    var_at = next(i for i, (_, d) in enumerate(defs) if isinstance(d, VarOperandDef))
    k = len(op.operands) - (len(defs) - 1)
    return list(op.operands)[var_at : var_at + k]


def _defined_in(v: SSAValue, op: Operation) -> bool:
    """Whether ``v`` (a result or a block argument) is defined in ``op``'s regions."""
    block = v.owner if isinstance(v.owner, Block) else v.owner.parent_block()
    while block is not None:
        parent = block.parent_op()
        if parent is op:
            return True
        block = parent.parent_block() if parent is not None else None
    return False


def _inside(v: SSAValue, op: Operation) -> bool:
    """Whether ``v`` is defined inside ``op``'s regions."""
    owner = v.owner
    parent = owner.parent_op() if isinstance(owner, Operation) else owner.parent_block().parent_op() if owner.parent_block() else None
    while parent is not None:
        if parent is op:
            return True
        parent = parent.parent_op()
    return False


class _Printer:
    """One printed text: the name allocator and the temporary counter are shared by every
    def in it, as Relay's printer (it never resets them)."""

    def __init__(self, module: ModuleOp, show_meta_data: bool, annotate: bool):
        self.module = module
        self.show_meta_data = show_meta_data
        self.annotate = annotate
        self.symbols = {op.sym_name.data: op for op in module.ops if isinstance(op, FuncOp)}
        self.meta: list[tuple[np.ndarray, str, str | None]] = []
        self.meta_index: dict[int, int] = {}
        self.anf = A_NORMAL_FORM_ATTR in module.attributes  # to-a-normal-form ran
        self.names = _Names()
        self.counter = 0

    def constant(self, op: ConstantOp) -> str:
        t = op.result.type
        dtype = dtype_of(t)
        arr = op.numpy()
        lit = _scalar_literal(arr, dtype)
        if lit is None or op.param_name is not None:
            i = self.meta_index.get(id(op))
            if i is None:
                i = self.meta_index[id(op)] = len(self.meta)
                name = op.param_name.data if op.param_name is not None else None
                self.meta.append((arr, dtype, name))
            lit = f"meta[relay.Constant][{i}]"
        return lit

    def public(self) -> list[FuncOp]:
        """The defs, sorted by name as Relay prints them."""
        return sorted(
            (f for f in self.symbols.values() if f.sym_visibility is None or f.sym_visibility.data != "private"),
            key=lambda f: f.sym_name.data,
        )

    def type_defs(self) -> list[str]:
        """``type List[A] { Cons(A, List[A]), Nil, }`` for each ``adt.type_def``."""
        out = []
        for op in self.module.ops:
            if isinstance(op, TypeDefOp):
                head = op.sym_name.data + (f"[{', '.join(op.params)}]" if op.params else "")
                ctors = [
                    c + (f"({', '.join(format_type(f) for f in fields)})" if fields else "") + ","
                    for c, fields in op.constructors
                ]
                out.append(f"type {head} {{\n" + _indented("\n".join(ctors)) + "\n}")
        return out

    def defs(self) -> str:
        texts = self.type_defs()
        texts += [_DefPrinter(self, types_inferred(f)).func(f, f"def @{f.sym_name.data}") for f in self.public()]
        return "\n\n".join(texts) + "\n" if texts else ""

    def expr(self, fop: FuncOp, is_function: bool, typed: bool) -> str:
        """A function printed as Relay prints an expression: ``fn (...) {...}`` (with its own
        type after it when typed), or its body after ``free_var`` declarations of its
        parameters (the expression's free variables)."""
        printer = _DefPrinter(self, typed)
        if is_function:
            text = printer.func(fop, "fn ")
            if printer.annotate:
                ins = [format_type(a.type) for a in fop.body.block.args]
                outs = list(fop.function_type.outputs.data)
                text += f" /* ty=fn ({', '.join(ins)}) -> {format_type(outs[0] if len(outs) == 1 else outs)} */"
            return text
        lines = []
        for i, arg in enumerate(fop.body.block.args):
            name = "%" + self.names.unique(arg.name_hint or f"p{i}")
            printer.refs[arg] = name
            lines.append(f"free_var {name}: {format_type(arg.type)};")
        return "\n".join([*lines, printer.scope(fop.body.block)])

    def finish(self, text: str, header: bool, warn: bool = True) -> str:
        out = (f'#[version = "{VERSION}"]\n' if header else "") + text
        if self.meta:
            if not out.endswith("\n"):
                out += "\n"
            if self.show_meta_data:
                out += "#[metadata]\n" + write_metadata(self.meta) + "\n"
            elif warn:
                out += "/* meta data omitted. you can use show_meta_data=True to include meta data */\n"
        return out


def astext(module: ModuleOp, show_meta_data: bool = True, annotate_types: bool = True) -> str:
    """The module in Relay's text format (see the module docstring), as ``IRModule.astext``.

    ``show_meta_data=False`` leaves the metadata section out (the text then names constants it
    does not hold, as Relay's); ``annotate_types=False`` drops the ``/* ty=... */`` comments.
    """
    p = _Printer(module, show_meta_data, annotate_types)
    return p.finish(p.defs(), header=True)


def pretty_print(module: ModuleOp) -> str:
    """What ``str(mod)`` / ``print(mod)`` show in Relay (its ``PrettyPrint``): the text without
    the version line and without the metadata section."""
    p = _Printer(module, False, True)
    return p.finish(p.defs(), header=False, warn=False)


def expr_astext(
    module: ModuleOp,
    is_function: bool,
    show_meta_data: bool = True,
    annotate_types: bool = False,
    header: bool = True,
    typed: bool | None = None,
) -> str:
    """An expression's text as Relay prints ``expr.astext()`` (``header=False``,
    ``show_meta_data=False``: ``str(expr)``): ``module``'s ``@main`` holds it (its
    parameters are the expression's free variables, unless it is a function). An expression
    built in Python has no types (no ``/* ty=... */``, no return type) until InferType."""
    p = _Printer(module, show_meta_data, annotate_types)
    fop = p.symbols["main"]
    text = p.expr(fop, is_function, annotate_types if typed is None else typed)
    return p.finish(text, header=header, warn=header).rstrip("\n")
