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

Names are made unique the way Relay does (``%x``, ``%x1``, ...) within each ``def`` and each
function literal (a printed literal is closed, so its parameters keep their own names);
parameters are allocated first, so ``main`` keeps its input names.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.dialects.scf import IfOp, YieldOp
from xdsl.dialects.tensor import ExtractOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.irdl import VarOperandDef

from xrelay.dialects.relay import ConstantOp, RelayOp, dtype_of, shape_of
from xrelay.error import TVMError
from xrelay.relay.function_attrs import func_attrs_from_ir
from xrelay.relay.text_metadata import write_metadata
from xrelay.transforms.to_a_normal_form import A_NORMAL_FORM_ATTR

__all__ = ["RelayTextPrintError", "astext", "format_attr", "format_type"]

VERSION = "0.0.5"

_SIMPLE_SCALARS = {"int16", "int32", "int64", "float16", "float32", "float64", "bool"}


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
    if isinstance(t, TensorType):
        shape = shape_of(t)
        dtype = dtype_of(t)
        if not shape:
            return dtype
        dims = ", ".join("?" if d is None else str(d) for d in shape)
        return f"Tensor[({dims}), {dtype}]"
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
    """``key=value`` for each attribute of ``op`` that differs from its default."""
    return [f"{name}={format_attr(value)}" for name, value in op.non_default_attrs()]


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
    """Relay's GetUniqueName: ``x``, then ``x1``, ``x2``, ... (one allocator per def)."""

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


class _DefPrinter:
    """Prints one ``def`` (and the function literals of the private functions it calls)."""

    def __init__(self, printer: _Printer):
        self.p = printer
        self.names = _Names()
        self.counter = 0
        self.fn_refs: dict[str, str] = {}  # private callee -> temp holding its literal

    def temp(self) -> str:
        t = f"%{self.counter}"
        self.counter += 1
        return t

    def func(self, fop: FuncOp, prefix: str, indent: str) -> list[str]:
        """``prefix(params, attrs) -> ret {`` + body lines + ``}`` (the last line unterminated)."""
        block = fop.body.block
        refs: dict[SSAValue, str] = {}
        params = []
        for i, arg in enumerate(block.args):
            name = "%" + self.names.unique(arg.name_hint or f"p{i}")
            refs[arg] = name
            params.append(f"{name}: {format_type(arg.type)}")
        params += [f"{k}={format_attr(v)}" for k, v in func_attrs_from_ir(fop).items()]
        outs = list(fop.function_type.outputs.data)
        ret = format_type(outs[0] if len(outs) == 1 else outs)
        lines = [f"{prefix}({', '.join(params)}) -> {ret} {{"]
        lines += self.body(block, refs, indent + "  ")
        lines.append(indent + "}")
        return lines

    def body(
        self,
        block: Block,
        refs: dict[SSAValue, str],
        indent: str,
        fields: dict[tuple[int, int], str] | None = None,
        tuples: dict[int, str] | None = None,
    ) -> list[str]:
        """The lines of a scope: a function body or an If branch (which sees the values and
        tuple fields of the scopes around it)."""
        lines: list[str] = []
        fields = {} if fields is None else dict(fields)  # (id(op), index) -> bound tuple field
        named_tuples: set[int] = set()  # multi-result ops let-bound as a whole
        tuples = {} if tuples is None else dict(tuples)  # id(multi-result op) -> its tuple temp
        ops = list(block.ops)
        ret = ops[-1] if ops and isinstance(ops[-1], ReturnOp | YieldOp) else None
        typed = self.p.annotate

        def ty(types: Sequence[Attribute]) -> str:
            if not typed:
                return ""
            return f" /* ty={format_type(types[0] if len(types) == 1 else list(types))} */"

        def ref(v: SSAValue, final: bool = False) -> str:
            r = refs.get(v)
            if r is not None:
                return r
            owner = v.owner
            if isinstance(owner, Operation) and id(owner) in tuples:
                key = (id(owner), v.index)
                r = fields.get(key)
                if r is not None:
                    return r
                text = f"{tuples[id(owner)]}.{v.index}"
                own = v.name_hint if id(owner) not in named_tuples else None
                if own or self.p.anf:  # a let-bound field keeps its name
                    r = "%" + self.names.unique(own or "x")
                    lines.append(f"{indent}let {r} = {text}{ty([v.type])};")
                    fields[key] = r
                    return r
                if final:
                    return text
                r = self.temp()
                lines.append(f"{indent}{r} = {text}{ty([v.type])};")
                fields[key] = r
                return r
            raise RelayTextPrintError(f"value {v} is used before it is defined")

        for op in ops:
            if op is ret:
                break
            if isinstance(op, ConstantOp):
                refs[op.result] = self.p.constant(op)
                continue
            if isinstance(op, ExtractOp) and not op.indices:  # the bool scalar an If tests
                refs[op.result] = ref(op.tensor)
                continue
            if isinstance(op, IfOp):
                cond = ref(op.cond)
                branches = []
                for r in (op.true_region, op.false_region):
                    outer_fns = dict(self.fn_refs)  # a literal bound in a branch stays there
                    branches.append(self.body(r.block, dict(refs), indent + "  ", fields, tuples))
                    self.fn_refs = outer_fns
                results = list(op.results)
                final = (
                    ret is not None
                    and op.next_op is ret
                    and list(ret.operands) == results
                    and all(r.has_one_use() and r.name_hint is None for r in results)
                )
                head = f"if ({cond}) {{"
                if final:
                    lines.append(indent + head)
                else:
                    t = self.temp() if len(results) != 1 or not results[0].name_hint else None
                    if t is None:
                        t = "%" + self.names.unique(results[0].name_hint)
                        lines.append(f"{indent}let {t} = {head}")
                    else:
                        lines.append(f"{indent}{t} = {head}")
                lines += branches[0]
                lines.append(indent + "} else {")
                lines += branches[1]
                tail = indent + "}"
                if final:
                    lines.append(tail)
                    return lines
                lines.append(tail + ty([r.type for r in results]) + ";")
                if len(results) == 1:
                    refs[results[0]] = t
                else:
                    tuples[id(op)] = t
                continue
            if isinstance(op, RelayOp):
                args = [ref(o) for o in op.operands]
                defs = type(op).get_irdl_definition().operands
                if any(isinstance(d, VarOperandDef) for _, d in defs):
                    args = self._tuple_operands(op, args, indent, lines)
                callee = op.RELAY_NAME
                args += op_attr_items(op)
            elif isinstance(op, CallOp):
                name = op.callee.root_reference.data
                fop = self.p.symbols.get(name)
                if fop is None:
                    raise RelayTextPrintError(f"call of undefined function @{name}")
                if fop.sym_visibility is not None and fop.sym_visibility.data == "private":
                    callee = self.fn_refs.get(name)
                    if callee is None:
                        callee = self.fn_refs[name] = self.temp()
                        outer, self.names = self.names, _Names()  # a literal is closed: own names
                        fn_lines = self.func(fop, f"{callee} = fn ", indent)
                        self.names = outer
                        fn_lines[0] = indent + fn_lines[0]
                        ins = list(fop.function_type.inputs.data)
                        outs = list(fop.function_type.outputs.data)
                        fn_ty = f"fn ({', '.join(format_type(t) for t in ins)}) -> " + format_type(
                            outs[0] if len(outs) == 1 else outs
                        )
                        fn_lines[-1] += (f" /* ty={fn_ty} */" if typed else "") + ";"
                        lines += fn_lines
                else:
                    callee = "@" + name
                args = [ref(o) for o in op.operands]
            else:
                raise RelayTextPrintError(
                    f"'{op.name}' has no Relay text form (only relay ops, relay.constant, "
                    "func.call and func.return do)"
                )
            text = f"{callee}({', '.join(args)})"
            results = list(op.results)
            if len(results) != 1:
                # a let of the whole tuple names every result alike; else fields may be named
                whole = results[0].name_hint
                if whole and all(r.name_hint == whole for r in results):
                    named_tuples.add(id(op))
                if whole and id(op) in named_tuples or self.p.anf:
                    t = "%" + self.names.unique(whole if id(op) in named_tuples else "x")
                    lines.append(f"{indent}let {t} = {text}{ty([r.type for r in results])};")
                else:
                    t = self.temp()
                    lines.append(f"{indent}{t} = {text}{ty([r.type for r in results])};")
                tuples[id(op)] = t
                continue
            r = results[0]
            if (
                ret is not None
                and op.next_op is ret
                and len(ret.operands) == 1
                and ret.operands[0] is r
                and r.has_one_use()
                and r.name_hint is None
                and not self.p.anf
            ):
                lines.append(f"{indent}{text}{ty([r.type])}")
                return lines
            refs[r] = self._bind(op, text, indent, lines, ty([r.type]))
        if ret is None:
            raise RelayTextPrintError("a function body without func.return")
        if len(ret.operands) > 1 and list(ret.operands) == list(ops[-2].results if len(ops) > 1 else []) and id(ops[-2]) in tuples:
            lines.append(indent + tuples[id(ops[-2])])  # a multi-result value returned whole
            return lines
        outs = [ref(o, final=len(ret.operands) == 1) for o in ret.operands]
        if len(outs) == 1:
            lines.append(indent + outs[0])
        else:
            inner = ", ".join(outs)
            lines.append(f"{indent}({inner}{',' if len(outs) == 1 else ''})")
        return lines

    def _bind(self, op: Operation, text: str, indent: str, lines: list[str], ty: str) -> str:
        hint = op.results[0].name_hint if op.results else None
        if not hint and self.p.anf:
            hint = "x"  # A-normal form: every value let-bound, as Relay's ToANormalForm names them
        if hint:
            name = "%" + self.names.unique(hint)
            lines.append(f"{indent}let {name} = {text}{ty};")
            return name
        t = self.temp()
        lines.append(f"{indent}{t} = {text}{ty};")
        return t

    def _tuple_operands(self, op: RelayOp, args: list[str], indent: str, lines: list[str]) -> list[str]:
        # Relay passes variadic operands as one tuple value, bound like any other expression
        defs = type(op).get_irdl_definition().operands
        var_at = next(i for i, (_, d) in enumerate(defs) if isinstance(d, VarOperandDef))
        k = len(args) - (len(defs) - 1)
        group = args[var_at : var_at + k]
        types = [o.type for o in list(op.operands)[var_at : var_at + k]]
        t = self.temp()
        inner = ", ".join(group) + ("," if len(group) == 1 else "")
        ty = f" /* ty={format_type(types)} */" if self.p.annotate else ""
        lines.append(f"{indent}{t} = ({inner}){ty};")
        return [*args[:var_at], t, *args[var_at + k :]]


class _Printer:
    def __init__(self, module: ModuleOp, show_meta_data: bool, annotate: bool):
        self.module = module
        self.show_meta_data = show_meta_data
        self.annotate = annotate
        self.symbols = {op.sym_name.data: op for op in module.ops if isinstance(op, FuncOp)}
        self.meta: list[tuple[np.ndarray, str, str | None]] = []
        self.meta_index: dict[int, int] = {}
        self.anf = A_NORMAL_FORM_ATTR in module.attributes  # to-a-normal-form ran

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
        if self.annotate:
            lit += f" /* ty={format_type(t)} */"
        return lit

    def text(self, expr_of: str | None = None, is_function: bool = False) -> str:
        out = [f'#[version = "{VERSION}"]']
        for fop in self.symbols.values():
            if fop.sym_visibility is not None and fop.sym_visibility.data == "private":
                continue
            if expr_of is None:
                out += _DefPrinter(self).func(fop, f"def @{fop.sym_name.data}", "")
            elif fop.sym_name.data == expr_of:
                out += self._expr(fop, is_function)
        return self._finish(out)

    def _expr(self, fop: FuncOp, is_function: bool) -> list[str]:
        """A function printed as Relay prints an expression: ``fn (...) {...}``, or its body
        with its parameters declared ``free_var`` (the expression's free variables)."""
        printer = _DefPrinter(self)
        if is_function:
            return printer.func(fop, "fn ", "")
        refs: dict[SSAValue, str] = {}
        lines = []
        for i, arg in enumerate(fop.body.block.args):
            name = "%" + printer.names.unique(arg.name_hint or f"p{i}")
            refs[arg] = name
            lines.append(f"free_var {name}: {format_type(arg.type)};")
        return lines + printer.body(fop.body.block, refs, "")

    def _finish(self, out: list[str]) -> str:
        if self.meta:
            if self.show_meta_data:
                out.append("#[metadata]")
                out.append(write_metadata(self.meta))
            else:
                out.append("/* meta data omitted. you can use show_meta_data=True to include meta data */")
        return "\n".join(out) + "\n"


def astext(module: ModuleOp, show_meta_data: bool = True, annotate_types: bool = True) -> str:
    """The module in Relay's text format (see the module docstring).

    ``show_meta_data=False`` leaves the metadata section out (the text then names constants it
    does not hold, as Relay's); ``annotate_types=False`` drops the ``/* ty=... */`` comments.
    """
    return _Printer(module, show_meta_data, annotate_types).text()


def expr_astext(
    module: ModuleOp, is_function: bool, show_meta_data: bool = True, annotate_types: bool = False
) -> str:
    """An expression's text as Relay prints ``expr.astext()``: ``module``'s ``@main`` holds it
    (its parameters are the expression's free variables, unless it is a function). Types are
    not annotated by default: a Relay expression has none until InferType runs."""
    return _Printer(module, show_meta_data, annotate_types).text("main", is_function).rstrip("\n")
