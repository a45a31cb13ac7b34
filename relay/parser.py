"""Relay's text format (0.0.5) parsed into xrelay: ``parse``, ``fromtext``, ``parse_expr``.

``parse(text)`` reads what ``IRModule.astext()`` (``xrelay.relay.text_printer``) and TVM print:
``def @f(%x: Tensor[(1, 10), float32], Primitive=1) -> ... { ... }``, op calls with keyword
attributes, ``%0 = ...;`` graph bindings, ``let %x = ...;``, ``if (...) {...} else {...}``,
function literals ``fn (...) {...}``, tuples and ``%t.0``, scalar literals (``1f``, ``2i64``,
``True``), ``meta[relay.Constant][i]`` from the ``#[metadata]`` section or from
``init_meta_table``, devices as Relay writes them (``%x {virtual_device=meta[VirtualDevice][0]}``
parameters, a function's ``virtual_device=...``, ``on_device``/``device_copy`` attributes, from
``init_meta_table={"VirtualDevice": [...]}`` or ``VirtualDevice(device_type=1, ...)`` as the
printer writes them), comments (``//`` and nested ``/* */``) and ``free_var``. The result is
built through the Python API (``xrelay.relay.expr``), so it is typed exactly as an expression
built by hand: ill-typed text is an error at the call that is ill-typed, and parameters
without a type get one from their uses (``xrelay.relay.type_solver``).

Errors are ``RelayTextError``: ``<source>:<line>:<column>: <message>`` with the line and a
caret, naming the token expected. The lexer is one left-to-right pass with no backtracking, so
its time is linear in the text whatever the input.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.utils.exceptions import DiagnosticException

from xrelay.dialects.dyn import DYN_OPS
from xrelay.dialects.qnn import QNN_OPS
from xrelay.dialects.relay import RELAY_OPS, RelayTypeError, numpy_dtype
from xrelay.dialects.relay.devices import (
    UNCONSTRAINED,
    DeviceError,
    as_virtual_device,
    kind_by_code,
    virtual_device,
)
from xrelay.dialects.relay.dtypes import DTYPES
from xrelay.error import TVMError
from xrelay.relay import module as relay_module
from xrelay.relay.analysis import post_order
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
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    RefCreate,
    RefRead,
    RefType,
    RefWrite,
    TensorType,
    Tuple,
    TupleGetItem,
    TupleType,
    TypeData,
    TypeVar,
    Var,
    _type_pattern,
)
from xrelay.relay.module import IRModule, lower_function
from xrelay.relay.op import _tuple_fields, on_device
from xrelay.relay.text_metadata import MetadataError, read_metadata
from xrelay.transforms.infra import mark_types_inferred

__all__ = ["RelayTextError", "fromtext", "parse", "parse_expr"]


class RelayTextError(DiagnosticException, ValueError, TVMError):
    """Bad Relay text; the message starts with ``source:line:column``."""


# --------------------------------------------------------------------------------------------
# Lexer
# --------------------------------------------------------------------------------------------

_PUNCT = set("()[]{},;:=.?#*")
_IDENT_START = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_IDENT_CHARS = _IDENT_START | set("0123456789/")
_DIGITS = set("0123456789")


class Token:
    __slots__ = ("kind", "pos", "text", "value")

    def __init__(self, kind: str, text: str, pos: int, value: Any = None):
        self.kind, self.text, self.pos, self.value = kind, text, pos, value

    def __repr__(self) -> str:
        return f"Token({self.kind}, {self.text!r})"


def _describe(tok: Token) -> str:
    if tok.kind == "eof":
        return "the end of the text"
    return f"'{tok.text}'"


class Source:
    """The text and its line starts (for line:column)."""

    def __init__(self, text: str, name: str):
        self.text, self.name = text, name
        self.line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    def error(self, pos: int, msg: str) -> RelayTextError:
        line = bisect.bisect_right(self.line_starts, pos) - 1
        start = self.line_starts[line]
        end = self.text.find("\n", start)
        snippet = self.text[start : end if end >= 0 else len(self.text)]
        col = pos - start
        if len(snippet) > 200:  # keep the excerpt readable on minified input
            lo = max(0, col - 100)
            snippet, col = snippet[lo : lo + 200], col - lo
        return RelayTextError(f"{self.name}:{line + 1}:{pos - start + 1}: {msg}\n{snippet}\n{' ' * col}^")


def tokenize(src: Source) -> list[Token]:
    """The tokens of ``src.text``; ``#[metadata]`` ends the tokens (its JSON is kept whole)."""
    text, n = src.text, len(src.text)
    toks: list[Token] = []
    i = 0
    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
            continue
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
            continue
        if c == "/" and i + 1 < n and text[i + 1] == "*":
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            if depth:
                raise src.error(i, "unterminated comment: expected '*/'")
            i = j
            continue
        if c == "#" and text.startswith("#[metadata]", i):
            toks.append(Token("metadata", "#[metadata]", i, text[i + len("#[metadata]") :]))
            i = n
            break
        if c in "%@":
            j = i + 1
            while j < n:
                if text[j] in _IDENT_CHARS:
                    j += 1
                elif text[j] == "." and c == "%":
                    # '.' continues a name when the part after it is not only digits (%x.0 is
                    # field 0 of %x; %features.0_weight is one name)
                    k = j + 1
                    while k < n and text[k] in _DIGITS:
                        k += 1
                    if k < n and text[k] in _IDENT_START:
                        j = k + 1
                    else:
                        break
                else:
                    break
            name = text[i + 1 : j]
            if not name:
                raise src.error(i, f"expected a name after '{c}'")
            kind = "global" if c == "@" else ("graph" if name.isdigit() else "local")
            toks.append(Token(kind, text[i:j], i, name))
            i = j
            continue
        if c in "in" and (m := _special_float(text, i)) is not None:  # inf, inff, nanf16, ...
            toks.append(m)
            i += len(m.text)
            continue
        if c in _IDENT_START:
            j = i + 1
            while j < n and (text[j] in _IDENT_CHARS or (text[j] == "." and j + 1 < n and text[j + 1] in _IDENT_START)):
                j += 1
            toks.append(Token("ident", text[i:j], i, text[i:j]))
            i = j
            continue
        if c in _DIGITS or (c == "-" and i + 1 < n and text[i + 1] in _DIGITS):
            i = _lex_number(src, i, toks)
            continue
        if c == '"':
            i = _lex_string(src, i, toks)
            continue
        if c == "-" and text.startswith("->", i):
            toks.append(Token("punct", "->", i))
            i += 2
            continue
        two = text[i : i + 2]
        if two in ("==", "!=", "<=", ">="):
            toks.append(Token("punct", two, i))
            i += 2
            continue
        if c in "+-/<>":  # infix operators (a '/' that starts no comment) and unary minus
            toks.append(Token("punct", c, i))
            i += 1
            continue
        if c in _PUNCT:
            toks.append(Token("punct", c, i))
            i += 1
            continue
        raise src.error(i, f"unexpected character {c!r}")
    toks.append(Token("eof", "", n))
    return toks


def _special_float(text: str, i: int) -> Token | None:
    """``inf`` / ``nan`` with an optional float suffix (``-inff`` is how an attribute of -inf
    prints), or None."""
    for word, value in (("inf", math.inf), ("nan", math.nan)):
        if text.startswith(word, i):
            j = i + 3
            dtype = None
            for suffix, dt in (("f16", "float16"), ("f32", "float32"), ("f64", "float64"), ("f", "float32")):
                if text.startswith(suffix, j):
                    j, dtype = j + len(suffix), dt
                    break
            if j < len(text) and text[j] in _IDENT_CHARS:
                return None  # an identifier that starts like it (info, nano, ...)
            return Token("number", text[i:j], i, (value, dtype, True))
    return None


def _lex_number(src: Source, i: int, toks: list[Token]) -> int:
    text, n = src.text, len(src.text)
    start = i
    if text[i] == "-":
        i += 1
    while i < n and text[i] in _DIGITS:
        i += 1
    is_float = False
    if i + 1 < n and text[i] == "." and text[i + 1] in _DIGITS:
        is_float = True
        i += 1
        while i < n and text[i] in _DIGITS:
            i += 1
    if i < n and text[i] in "eE":
        j = i + 1
        if j < n and text[j] in "+-":
            j += 1
        if j < n and text[j] in _DIGITS:
            is_float = True
            i = j
            while i < n and text[i] in _DIGITS:
                i += 1
    body = text[start:i]
    dtype = None
    if i < n and text[i] in "fi":  # width suffix: 1f, 1f16, 2i64, ...
        j = i + 1
        while j < n and text[j] in _DIGITS:
            j += 1
        suffix = text[i:j]
        if j < n and text[j] in _IDENT_CHARS:
            raise src.error(i, f"bad number suffix '{text[i:j + 1]}...'")
        bits = suffix[1:] or "32"
        dtype = {"f": "float", "i": "int"}[suffix[0]] + bits
        if dtype not in ("float16", "float32", "float64", "int16", "int32", "int64"):
            raise src.error(i, f"bad number suffix '{suffix}' (expected f, f16, f64, i16, i32 or i64)")
        if dtype.startswith("int") and is_float:
            raise src.error(start, f"'{body}{suffix}': an integer suffix on a float")
        i = j
    try:
        value: Any = float(body) if is_float or (dtype or "").startswith("float") else int(body)
    except ValueError:
        raise src.error(start, f"bad number '{body}'") from None
    toks.append(Token("number", text[start:i], start, (value, dtype, is_float)))
    return i


_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "r": "\r"}


def _lex_string(src: Source, i: int, toks: list[Token]) -> int:
    text, n = src.text, len(src.text)
    start, i = i, i + 1
    out: list[str] = []
    while True:
        if i >= n or text[i] == "\n":
            raise src.error(start, "unterminated string: expected '\"'")
        c = text[i]
        if c == '"':
            break
        if c == "\\":
            if i + 1 >= n or text[i + 1] not in _ESCAPES:
                raise src.error(i, "bad escape in a string")
            out.append(_ESCAPES[text[i + 1]])
            i += 2
            continue
        out.append(c)
        i += 1
    toks.append(Token("string", text[start : i + 1], start, "".join(out)))
    return i + 1


# --------------------------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------------------------

_BINOPS = {
    "*": (4, "multiply"), "/": (4, "divide"), "+": (3, "add"), "-": (3, "subtract"),
    "<": (2, "less"), ">": (2, "greater"), "<=": (2, "less_equal"), ">=": (2, "greater_equal"),
    "==": (1, "equal"), "!=": (1, "not_equal"),
}  # fmt: skip
"""Relay's infix operators: precedence and op."""

_REF_EXPRS = {"ref": (RefCreate, 1), "ref_read": (RefRead, 1), "ref_write": (RefWrite, 2)}
"""Relay's reference expressions: keyword -> (expression class, number of arguments)."""

_DTYPE_ALIASES = {"int": "int32", "uint": "uint32", "float": "float32"}

_DTYPES = frozenset(DTYPES)


class _Parser:
    def __init__(self, text: str, source_name: str, meta_table: Mapping[str, Sequence[Any]] | None):
        self.src = Source(text, source_name)
        self.extern_types: set[str] = set()  # names declared by ``extern type``
        self.toks = tokenize(self.src)
        self.i = 0
        self.scopes: list[dict[str, Expr]] = [{}]
        self.globals: dict[str, GlobalVar] = {}
        self.meta_refs: list[tuple[int, int, Constant]] = []  # (pos, index, placeholder)
        self.meta_table: dict[str, list[Any]] = {k: list(v) for k, v in (meta_table or {}).items()}
        self.free_vars: list[Var] = []
        self.meta_memo: dict[tuple[str, int], Constant] = {}
        self.depth = 0
        self.pending_recursive: Var | None = None  # a let-bound literal's own name (recursion)
        self.types: dict[str, GlobalTypeVar] = {}  # type definitions (``type List[A] {...}``)
        self.type_datas: list[TypeData] = []  # the ones this text defines, in order
        self.type_arity: dict[str, int] = {}
        self.ctors: dict[str, Constructor] = {}
        self.type_params: list[dict[str, Any]] = []  # type variables in scope
        if self.toks[-2:-1] and self.toks[-2].kind == "metadata":
            tok = self.toks.pop(-2)
            try:
                for k, v in read_metadata(tok.value).items():
                    self.meta_table.setdefault(k, v)
            except MetadataError as e:
                raise self.src.error(tok.pos, str(e)) from None

    # ---- tokens ---------------------------------------------------------------------------

    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> Token:
        t = self.toks[self.i]
        if t.kind != "eof":
            self.i += 1
        return t

    def error(self, msg: str, tok: Token | None = None) -> RelayTextError:
        return self.src.error((tok or self.tok).pos, msg)

    def expected(self, what: str) -> RelayTextError:
        return self.error(f"expected {what}, found {_describe(self.tok)}")

    def at(self, text: str) -> bool:
        return self.tok.kind in ("punct", "ident") and self.tok.text == text

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.i += 1
            return True
        return False

    def _types_until(self, close: str) -> list[Any]:
        """One or more comma-separated types up to ``close`` (the opening bracket is read)."""
        types = [self.type_()]
        while not self.accept(close):
            self.expect(",")
            types.append(self.type_())
        return types

    def expect(self, text: str) -> Token:
        if not self.at(text):
            raise self.expected(f"'{text}'")
        return self.next()

    # ---- scopes ---------------------------------------------------------------------------

    def lookup(self, tok: Token) -> Expr:
        for scope in reversed(self.scopes):
            e = scope.get(tok.text)
            if e is not None:
                return e
        raise self.error(f"undefined variable {tok.text}", tok)

    def local_name(self) -> Token:
        """A variable being bound: ``%name``, also ``%name.7`` (xrelay keeps such names, e.g.
        ONNX inputs, where a trailing ``_7`` would be dropped by xDSL)."""
        t = self.next()
        nxt, num = self.tok, self.peek()
        if (
            nxt.text == "."
            and nxt.pos == t.pos + len(t.text)
            and num.kind == "number"
            and num.pos == nxt.pos + 1
            and num.text.isdigit()
        ):
            self.i += 2
            name = f"{t.value}.{num.text}"
            return Token("local", "%" + name, t.pos, name)
        return t

    def bind(self, tok: Token, e: Expr) -> None:
        self.scopes[-1][tok.text] = e

    # ---- module ---------------------------------------------------------------------------

    def header(self) -> None:
        if self.at("#"):
            start = self.tok
            self.next()
            self.expect("[")
            if not self.accept("version"):
                raise self.expected("'version' in '#[version = \"0.0.5\"]'")
            self.expect("=")
            if self.tok.kind != "string":
                raise self.expected('a version string ("0.0.5")')
            version = self.next().value
            if version != "0.0.5":
                raise self.error(f"unsupported text format version {version!r} (expected \"0.0.5\")", start)
            self.expect("]")

    def module(self) -> list[tuple[str, Function, int]]:
        self.header()
        defs: list[tuple[str, Function, int]] = []
        # every global is known before any body is read (bodies may call later defs), every
        # type name before any type is read (a definition may use itself or a later one)
        for k, t in enumerate(self.toks):
            if t.kind == "ident" and t.text == "def" and self.toks[k + 1].kind == "global":
                self.globals.setdefault(self.toks[k + 1].value, GlobalVar(self.toks[k + 1].value))
            if t.kind == "ident" and t.text == "type" and self.toks[k + 1].kind == "ident" and (k == 0 or self.toks[k - 1].text != "extern"):
                name = self.toks[k + 1].text
                self.types[name] = GlobalTypeVar(name)
                arity = 0
                if self.toks[k + 2].text == "[":
                    j = k + 3
                    while self.toks[j].text != "]" and self.toks[j].kind != "eof":
                        arity += self.toks[j].kind == "ident"
                        j += 1
                self.type_arity[name] = arity
        seen: set[str] = set()
        while self.tok.kind != "eof":
            if self.at("extern"):
                # ``extern type Name``: an opaque type declared by the text (core.rly's Storage)
                self.next()
                if not self.accept("type"):
                    raise self.expected("'type' after 'extern'")
                if self.tok.kind != "ident":
                    raise self.expected("the name of the external type")
                if self.tok.text == "Storage" or self.peek(1).text != "[":
                    self.extern_types.add(self.next().text)
                    continue
                # ``extern type T[A]``: Relay's TypeData with parameters and no constructors
                at, name = self.tok, self.next().text
                if name in self.types or any(td.header.name_hint == name for td in self.type_datas):
                    raise self.error(f"type {name} is defined twice", at)
                header = self.types[name] = GlobalTypeVar(name)
                tvars = self.type_var_list()
                self.type_arity[name] = len(tvars)
                self.type_params.pop()
                self.type_datas.append(TypeData(header, tvars, []))
                continue
            if self.at("type"):
                self.type_def()
                continue
            if not self.at("def"):
                raise self.expected("'def', 'type' or the end of the text")
            self.next()
            gtok = self.tok
            if gtok.kind != "global":
                raise self.expected("a global name (@name)")
            self.next()
            if gtok.value in seen:
                raise self.error(f"@{gtok.value} is defined twice", gtok)
            seen.add(gtok.value)
            fn = self.function_rest(gtok)
            defs.append((gtok.value, fn, gtok.pos))
        return defs

    def type_var_list(self) -> list[Any]:
        """``[A, B]``: type parameters, brought into scope."""
        self.expect("[")
        tvars: list[Any] = []
        while True:
            if self.tok.kind != "ident":
                raise self.expected("a type parameter name")
            tvars.append(TypeVar(self.next().text))
            if self.accept("]"):
                break
            self.expect(",")
        self.type_params.append({v.var_name.data: v for v in tvars})
        return tvars

    def type_def(self) -> None:
        """``type Name[A] { Ctor(A, Name[A]), Other, }``: a type definition."""
        at = self.next()
        if self.tok.kind != "ident":
            raise self.expected("the name of the type")
        name = self.next().text
        if any(td.header.name_hint == name for td in self.type_datas):
            raise self.error(f"type {name} is defined twice", at)
        header = self.types[name]
        tvars = self.type_var_list() if self.at("[") else []
        if not tvars:
            self.type_params.append({})
        self.expect("{")
        ctors: list[Constructor] = []
        while not self.accept("}"):
            ctok = self.tok
            if ctok.kind != "ident":
                raise self.expected("a constructor name")
            self.next()
            if ctok.text in self.ctors or any(c.name_hint == ctok.text for c in ctors):
                raise self.error(f"constructor {ctok.text} is defined twice", ctok)
            fields: list[Any] = []
            if self.accept("("):
                fields = self._types_until(")")
            ctors.append(Constructor(ctok.text, fields, header))
            if not self.accept(","):
                self.expect("}")
                break
        self.type_params.pop()
        td = TypeData(header, tvars, ctors)
        for c in ctors:
            self.ctors[c.name_hint] = c
        self.type_datas.append(td)

    def know_module_types(self, mod: Any) -> None:
        """The type definitions and constructors of ``mod`` (``parse(init_module=...)``)."""
        for gtv, td in mod.type_definitions.items():
            self.types[gtv.name_hint] = gtv
            self.type_arity[gtv.name_hint] = len(td.type_vars)
            for c in td.constructors:
                self.ctors[c.name_hint] = c

    def pattern(self, bound: list[tuple[Token, Var]]) -> Pattern:
        """``_``, ``%x``, ``Ctor``, ``Ctor(p, ...)`` or ``(p, ...)``."""
        t = self.tok
        if t.kind == "ident" and t.text == "_":
            self.next()
            return PatternWildcard()
        if t.kind == "local":
            vtok = self.local_name()
            ty = self.type_() if self.accept(":") else None
            v = Var(vtok.value, ty)
            bound.append((vtok, v))
            return PatternVar(v)
        if t.kind == "ident" and t.text in self.ctors:
            self.next()
            subs: list[Pattern] = []
            if self.accept("("):
                if not self.accept(")"):
                    while True:
                        subs.append(self.pattern(bound))
                        if self.accept(")"):
                            break
                        self.expect(",")
            try:
                return PatternConstructor(self.ctors[t.text], subs)
            except RelayTypeError as e:
                raise self.error(str(e), t) from None
        if self.accept("("):
            subs = []
            if not self.accept(")"):
                while True:
                    subs.append(self.pattern(bound))
                    if self.accept(")"):
                        break
                    self.expect(",")
            return PatternTuple(subs)
        raise self.expected("a pattern (_, %var, a constructor or a tuple)")

    def match(self) -> Expr:
        """``match (e) { pattern => e, ... }`` (``match?``: not promised complete)."""
        at = self.next()
        complete = not self.accept("?")
        data = self.expr()
        self.expect("{")
        clauses: list[Clause] = []
        while not self.accept("}"):
            bound: list[tuple[Token, Var]] = []
            ptok = self.tok
            pat = self.pattern(bound)
            try:
                _type_pattern(pat, data._type)  # the clause's variables are typed before it is read
            except RelayTypeError as e:
                raise self.error(str(e), ptok) from None
            self.expect("=")
            if not self.at(">"):
                raise self.expected("'=>'")
            self.next()
            self.scopes.append({})
            for vtok, v in bound:
                self.bind(vtok, v)
            rhs = self.block() if self.at("{") else self.expr()
            self.scopes.pop()
            clauses.append(Clause(pat, rhs))
            if not self.accept(","):
                self.expect("}")
                break
        try:
            return Match(data, clauses, complete)
        except RelayTypeError as e:
            raise self.error(str(e), at) from None

    # ---- functions ------------------------------------------------------------------------

    def function_rest(self, at: Token) -> Function:
        """``[type params](params, attrs) -> ret { body }`` after ``def @name`` or ``fn``."""
        tparams = self.type_var_list() if self.at("[") else None
        try:
            return self._function_rest(at, tparams)
        finally:
            if tparams is not None:
                self.type_params.pop()

    def _function_rest(self, at: Token, tparams: list[Any] | None) -> Function:
        self.expect("(")
        self.scopes.append({})
        params: list[Var] = []
        attrs: dict[str, Any] = {}
        param_devices: dict[int, Any] = {}
        if not self.accept(")"):
            while True:
                if self.tok.kind == "local":
                    if attrs:
                        raise self.error("function parameters come before its attributes")
                    ptok = self.local_name()
                    if self.accept("{"):  # %x {virtual_device=...}: a parameter's device
                        key = self.next()
                        if key.text != "virtual_device":
                            raise self.error(f"unknown parameter attribute '{key.text}' (known: virtual_device)", key)
                        self.expect("=")
                        param_devices[len(params)] = self.virtual_device()
                        self.expect("}")
                    ty = self.type_() if self.accept(":") else None
                    v = Var(ptok.value, ty)
                    self.bind(ptok, v)
                    params.append(v)
                elif self.tok.kind == "ident" and self.peek().text == "=":
                    key = self.next().text
                    self.next()
                    attrs[key] = self.attr_value()
                else:
                    raise self.expected("a parameter (%name) or an attribute (key=value)")
                if self.accept(")"):
                    break
                self.expect(",")
        ret = self.type_() if self.accept("->") else None
        recursive, self.pending_recursive = self.pending_recursive, None
        if ret is not None and all(p._type is not None for p in params):
            # the signature is known before the body: recursive calls are typed
            if at.kind == "global":
                self.globals[at.value]._type = FuncType([p._type for p in params], ret)
            elif recursive is not None:
                recursive._type = FuncType([p._type for p in params], ret)
        body = self.block()
        self.scopes.pop()
        if param_devices or "virtual_device" in attrs:  # as plan-devices records them

            attrs["param_virtual_devices"] = [param_devices.get(i, UNCONSTRAINED) for i in range(len(params))]
            attrs["result_virtual_device"] = attrs.pop("virtual_device", UNCONSTRAINED)
        try:
            return Function(params, body, ret_type=ret, type_params=tparams, attrs=attrs)
        except RelayTypeError as e:
            raise self.error(str(e), at) from None

    def block(self) -> Expr:
        self.expect("{")
        self.scopes.append({})
        e = self.sequence()
        self.scopes.pop()
        self.expect("}")
        return e

    def sequence(self) -> Expr:
        """Bindings then an expression: ``%0 = e; let %x = e; free_var %y: T; ... e``."""
        lets: list[tuple[Var, Expr, Token]] = []
        while True:
            if self.at("let"):
                at = self.next()
                if self.tok.kind != "local":
                    raise self.expected("a variable (%name) after 'let'")
                vtok = self.local_name()
                ty = self.type_() if self.accept(":") else None
                self.expect("=")
                recursive = None
                if ty is None and self.at("fn"):
                    # Relay's rule: a let-bound function sees its own name (recursion); the
                    # variable is typed by the literal's signature once its header is read
                    recursive = Var(vtok.value)
                    self.scopes.append({vtok.text: recursive})
                    self.pending_recursive = recursive
                try:
                    value = self.expr()
                finally:
                    if recursive is not None:
                        self.scopes.pop()
                        self.pending_recursive = None
                self.expect(";")
                if recursive is not None and any(n is recursive for n in post_order(value)):
                    recursive._type = value._type
                    self.bind(vtok, recursive)  # let %f = fn (...) { ... %f(...) ... }
                    lets.append((recursive, value, at))
                    continue
                var = Var(vtok.value, ty)
                if var._type is None:  # typed now, so the calls that use it are typed as built
                    var._type = value._type
                if isinstance(value, Function) and ty is None:
                    self.bind(vtok, value)  # a let-bound function: calls go to the literal
                else:
                    self.bind(vtok, var)
                    lets.append((var, value, at))
                continue
            if self.tok.kind == "graph" and self.peek().text == "=":
                gtok = self.next()
                self.next()
                value = self.expr()
                self.expect(";")
                self.bind(gtok, value)
                continue
            if self.at("free_var"):
                self.next()
                if self.tok.kind != "local":
                    raise self.expected("a variable (%name) after 'free_var'")
                vtok = self.local_name()
                ty = self.type_() if self.accept(":") else None
                v = Var(vtok.value, ty)
                self.bind(vtok, v)
                self.free_vars.append(v)
                self.accept(";")
                continue
            at = self.tok
            e = self.expr()
            nxt = self.peek()
            if self.at(";") and not (nxt.text in ("}", ")") or nxt.kind == "eof"):
                self.next()  # 'e1; e2' evaluates e1 for nothing: let %_ = e1; e2
                lets.append((Var("_"), e, at))
                continue
            self.accept(";")
            body = e
            break
        for var, value, at in reversed(lets):
            try:
                body = Let(var, value, body)
            except RelayTypeError as e:
                raise self.error(str(e), at) from None
        return body

    # ---- expressions ----------------------------------------------------------------------

    def expr(self, min_prec: int = 1) -> Expr:
        """An expression with infix operators, by precedence climbing (``*`` ``/`` bind
        tighter than ``+`` ``-``, then comparisons, then ``==`` ``!=``; all left-associative)."""
        self.depth += 1
        if self.depth > 200:  # bound the recursion on hostile nesting
            raise self.error("expressions nested more than 200 deep")
        try:
            lhs = self.unary()
            while True:
                t = self.tok
                if t.kind == "number" and t.text.startswith("-"):
                    # '3-2' lexes as 3 and -2: it is a subtraction of 2
                    self.toks[self.i : self.i + 1] = [
                        Token("punct", "-", t.pos),
                        Token("number", t.text[1:], t.pos + 1, (-t.value[0], t.value[1], t.value[2])),
                    ]
                    t = self.tok
                entry = _BINOPS.get(t.text) if t.kind == "punct" else None
                if entry is None or entry[0] < min_prec:
                    return lhs
                self.next()
                rhs = self.expr(entry[0] + 1)
                try:
                    lhs = Call(Op.get(entry[1]), [lhs, rhs])
                except (RelayTypeError, TypeError, ValueError) as e:
                    raise self.error(str(e), t) from None
        finally:
            self.depth -= 1

    def unary(self) -> Expr:
        """``-e``: a literal is negated in place (``--10`` is 10, as Relay), else ``negative``."""
        if self.at("-"):
            t = self.next()
            self.depth += 1
            if self.depth > 200:
                raise self.error("expressions nested more than 200 deep")
            try:
                e = self.unary()
            finally:
                self.depth -= 1
            if isinstance(e, Constant) and e.data.ndim == 0 and e.name is None:
                return Constant(-e.data, dtype=e.dtype)
            try:
                return Call(Op.get("negative"), [e])
            except (RelayTypeError, TypeError, ValueError) as err:
                raise self.error(str(err), t) from None
        return self.postfix()

    def postfix(self) -> Expr:
        """A primary expression followed by calls ``(...)`` and tuple fields ``.i``."""
        self.depth += 1
        if self.depth > 200:
            raise self.error("expressions nested more than 200 deep")
        try:
            e = self.primary()
            while True:
                if self.at("("):
                    e = self.call(e)
                elif self.at(".") and self.peek().kind == "number":
                    self.next()
                    itok = self.next()
                    idx, dtype, is_float = itok.value
                    if is_float or dtype is not None or idx < 0:
                        raise self.error("expected a tuple index (a non-negative integer)", itok)
                    try:
                        e = TupleGetItem(e, idx)
                    except RelayTypeError as err:
                        raise self.error(str(err), itok) from None
                else:
                    return e
        finally:
            self.depth -= 1

    def primary(self) -> Expr:
        t = self.tok
        if t.kind == "local" and self.peek().text == "." and self.peek(2).kind == "number":
            # %x.7 is the variable named "x.7" when one is in scope, else field 7 of %x
            dotted = "%" + t.value + "." + self.peek(2).text
            if any(dotted in scope for scope in self.scopes):
                self.i += 3
                return self.lookup(Token("local", dotted, t.pos))
        if t.kind in ("local", "graph"):
            self.next()
            return self.lookup(t)
        if t.kind == "global":
            self.next()
            gv = self.globals.get(t.value)
            if gv is None:
                raise self.error(f"undefined global function @{t.value}", t)
            return gv
        if t.kind == "number":
            self.next()
            return self.literal(t)
        if t.kind == "ident":
            if t.text in ("True", "False"):
                self.next()
                return Constant(np.array(t.text == "True"), dtype="bool")
            if t.text == "fn":
                self.next()
                return self.function_rest(t)
            if t.text == "if":
                return self.if_()
            if t.text == "let":
                self.scopes.append({})
                e = self.sequence()
                self.scopes.pop()
                return e
            if t.text == "meta":
                return self.meta()
            if t.text == "match":
                return self.match()
            if t.text in self.ctors:
                self.next()
                ctor = self.ctors[t.text]
                if not self.at("("):  # a constructor named without arguments: its value (Nil)
                    try:
                        return Call(ctor, [])
                    except RelayTypeError as e:
                        raise self.error(str(e), t) from None
                return ctor
            if t.text in _REF_EXPRS and self.peek().text == "(":
                return self.ref_expr()
            if t.text in RELAY_OPS or t.text in QNN_OPS or t.text in DYN_OPS:
                self.next()
                return Op.get(t.text)
            raise self.error(f"unknown operator '{t.text}'", t)
        if self.at("("):
            return self.paren()
        raise self.expected("an expression")

    def ref_expr(self) -> Expr:
        """``ref(e)``, ``ref_read(e)``, ``ref_write(e, e)`` (Relay's RefCreate/Read/Write)."""
        at = self.next()
        cls, arity = _REF_EXPRS[at.text]
        self.expect("(")
        args = [self.expr()]
        while len(args) < arity:
            self.expect(",")
            args.append(self.expr())
        self.expect(")")
        try:
            return cls(*args)
        except (RelayTypeError, TypeError) as e:
            raise self.error(str(e), at) from None

    def paren(self) -> Expr:
        at = self.next()
        if self.accept(")"):
            return Tuple([])
        if self.at("let"):
            self.scopes.append({})
            e = self.sequence()
            self.scopes.pop()
            self.expect(")")
            return e
        first = self.expr()
        if self.accept(")"):
            return first
        fields = [first]
        while self.accept(","):
            if self.at(")"):
                break
            fields.append(self.expr())
        self.expect(")")
        try:
            return Tuple(fields)
        except RelayTypeError as e:
            raise self.error(str(e), at) from None

    def if_(self) -> Expr:
        at = self.next()
        self.expect("(")
        cond = self.expr()
        self.expect(")")
        then = self.block()
        if not self.accept("else"):
            raise self.expected("'else'")
        other = self.block()
        try:
            return If(cond, then, other)
        except RelayTypeError as e:
            raise self.error(str(e), at) from None

    def call(self, callee: Expr) -> Expr:
        at = self.next()
        args: list[Expr] = []
        attrs: dict[str, Any] = {}
        if not self.accept(")"):
            while True:
                if self.tok.kind == "ident" and self.peek().text == "=" and self.peek(2).text != "=":
                    key = self.next()
                    self.next()
                    if key.text in attrs:
                        raise self.error(f"attribute '{key.text}' given twice", key)
                    attrs[key.text] = self.attr_value()
                else:
                    if attrs:
                        raise self.error("arguments come before the attributes")
                    args.append(self.expr())
                if self.accept(")"):
                    break
                if not self.at(","):
                    raise self.expected("',' or ')'")
                self.next()
        try:
            if isinstance(callee, Op) and callee.name == "on_device" and len(args) == 1:

                if _tuple_fields(args[0]) is not None:  # a tuple: annotated field by field

                    device = attrs.pop("virtual_device", UNCONSTRAINED)
                    return on_device(args[0], device, **attrs).astuple()
            if isinstance(callee, Op):
                return Call(callee, args, attrs)
            if attrs:
                raise RelayTypeError("only operator calls take attributes")
            return Call(callee, args)
        except (RelayTypeError, TypeError, ValueError) as e:
            raise self.error(str(e), at) from None

    def literal(self, t: Token) -> Constant:
        value, dtype, is_float = t.value
        if dtype is None:
            dtype = "float32" if is_float else "int32"
        if dtype == "int32" and t.value[1] is None and not -(2**31) <= value < 2**31:
            dtype = "int64"  # an unsuffixed integer too large for int32 is int64, as Relay
        if dtype.startswith("int"):
            info = np.iinfo(numpy_dtype(dtype))
            if not info.min <= value <= info.max:
                raise self.error(f"{value} does not fit in {dtype}", t)
        elif math.isfinite(value) and abs(value) > float(np.finfo(numpy_dtype(dtype)).max):
            raise self.error(f"{value} does not fit in {dtype}", t)
        arr = np.array(value, dtype=numpy_dtype(dtype))
        return Constant(arr, dtype=dtype)

    def meta_ref(self) -> tuple[Token, str, Token, int]:
        """``meta[kind][index]``: the tokens of ``meta`` and the index, the kind and index."""
        at = self.next()
        self.expect("[")
        if self.tok.kind != "ident":
            raise self.expected("a metadata kind (relay.Constant)")
        kind = self.next().text
        self.expect("]")
        self.expect("[")
        itok = self.tok
        if itok.kind != "number" or itok.value[1] is not None or itok.value[2] or itok.value[0] < 0:
            raise self.expected("a metadata index")
        self.next()
        self.expect("]")
        return at, kind, itok, itok.value[0]

    def virtual_device(self) -> Any:
        """A device attribute: ``meta[VirtualDevice][i]`` from the meta table (TVM's tests pass
        ``{"VirtualDevice": [...]}``) or ``VirtualDevice(device_type=1, virtual_device_id=0,
        target='llvm', memory_scope='sram')`` as the printer writes it."""

        at = self.tok
        if at.text == "meta":
            at, kind, itok, idx = self.meta_ref()
            table = self.meta_table.get(kind)
            if kind != "VirtualDevice" or table is None or idx >= len(table):
                raise self.error(f"meta[{kind}][{idx}] is not a VirtualDevice of the meta table", at)
            try:
                return as_virtual_device(table[idx])
            except DeviceError as e:
                raise self.error(str(e), at) from None
        self.next()
        self.expect("(")
        fields: dict[str, Any] = {}
        while not self.accept(")"):
            key = self.next()
            self.expect("=")
            fields[key.text] = self.attr_value()
            if not self.at(")"):
                self.expect(",")
        try:
            code = fields.get("device_type", 0)
            kind = kind_by_code(code).name if isinstance(code, int) and code else (code or "")
            return virtual_device(kind, int(fields.get("virtual_device_id", -1)),
                                  str(fields.get("target", "")), str(fields.get("memory_scope", "")))
        except (DeviceError, TypeError, ValueError) as e:
            raise self.error(f"bad VirtualDevice: {e}", at) from None

    def meta(self) -> Expr:
        at, kind, itok, idx = self.meta_ref()
        if kind != "relay.Constant":
            raise self.error(f"meta[{kind}] is not supported (only relay.Constant entries)", at)
        table = self.meta_table.get(kind)
        if table is None:
            raise self.error(
                "meta[relay.Constant] is used but the text has no metadata section and no "
                "init_meta_table was given",
                at,
            )
        if idx >= len(table):
            raise self.error(f"meta[{kind}][{idx}] is out of range (the table has {len(table)})", itok)
        c = self.meta_memo.get((kind, idx))
        if c is None:  # one node per entry: its uses share it, as in Relay
            c = self.meta_memo[(kind, idx)] = _as_constant(table[idx])
        return c

    def _enter(self) -> None:
        self.depth += 1
        if self.depth > 200:  # bound the recursion on hostile nesting
            raise self.error("expressions nested more than 200 deep")

    def attr_value(self) -> Any:
        self._enter()
        try:
            return self._attr_value()
        finally:
            self.depth -= 1

    def _attr_value(self) -> Any:
        t = self.tok
        if self.accept("["):
            items: list[Any] = []
            if self.accept("]"):
                return items
            while True:
                items.append(self.attr_value())
                if self.accept("]"):
                    return items
                if not self.at(","):
                    raise self.expected("',' or ']'")
                self.next()
        sign = 1
        if self.at("-") and self.peek().kind == "number":  # -inff
            self.next()
            sign, t = -1, self.tok
        if t.kind == "number":
            self.next()
            value, dtype, is_float = t.value
            value = sign * value
            return float(value) if is_float or (dtype or "").startswith("float") else int(value)
        if t.kind == "string":
            self.next()
            return t.value
        if t.kind == "ident" and t.text in ("True", "False", "None"):
            self.next()
            return {"True": True, "False": False, "None": None}[t.text]
        if t.kind == "ident" and t.text in ("meta", "VirtualDevice"):
            return self.virtual_device()
        raise self.expected("an attribute value (number, string, True/False or a list)")

    # ---- types ----------------------------------------------------------------------------

    def type_(self) -> Any:
        self._enter()
        try:
            return self._type()
        finally:
            self.depth -= 1

    def _type(self) -> Any:
        t = self.tok
        if t.kind == "ident" and t.text == "Tensor":
            self.next()
            self.expect("[")
            self.expect("(")
            dims: list[int | None] = []
            if not self.accept(")"):
                while True:
                    if self.accept("?"):
                        dims.append(None)
                    elif self.tok.kind == "number" and self.tok.value[1] in (None, "int64", "int32") and not self.tok.value[2]:
                        d = self.next().value[0]
                        if d < 0:
                            raise self.error("a dimension cannot be negative", t)
                        dims.append(d)
                    else:
                        raise self.expected("a dimension (an integer or ?)")
                    if self.accept(")"):
                        break
                    self.expect(",")
            self.expect(",")
            dtok = self.tok
            if dtok.kind != "ident" or dtok.text not in _DTYPES:
                raise self.expected("a dtype (float32, int8, ...)")
            self.next()
            self.expect("]")
            return TensorType(dims, dtok.text)
        if t.kind == "ident" and (t.text in _DTYPES or t.text in _DTYPE_ALIASES):
            self.next()
            return TensorType((), _DTYPE_ALIASES.get(t.text, t.text))
        if self.accept("("):
            fields = []
            if not self.accept(")"):
                while True:
                    fields.append(self.type_())
                    if self.accept(")"):
                        break
                    self.expect(",")
                    if self.accept(")"):
                        break
            return TupleType(fields)
        if t.kind == "ident" and t.text == "fn":
            self.next()
            self.expect("(")
            args = []
            if not self.accept(")"):
                args = self._types_until(")")
            self.expect("->")
            return FuncType(args, self.type_())
        if t.kind == "ident" and t.text == "ref" and self.peek().text == "(":
            # ``ref(T)``: how Relay prints a reference type (its own parser has no syntax for it)
            self.next()
            self.expect("(")
            held = self.type_()
            self.expect(")")
            try:
                return RefType(held)
            except RelayTypeError as e:
                raise self.error(str(e), t) from None
        if t.kind == "ident" and t.text in ("_", "?"):
            self.next()
            return None
        if t.kind == "ident":
            for scope in reversed(self.type_params):
                if t.text in scope:
                    self.next()
                    return scope[t.text]
        if t.kind == "ident" and t.text in self.types:
            self.next()
            args: list[Any] = []
            if self.accept("["):
                args = self._types_until("]")
            want = self.type_arity.get(t.text, len(args))
            if len(args) != want:
                raise self.error(f"type {t.text} takes {want} type argument(s), got {len(args)}", t)
            return self.types[t.text](*args)
        raise self.expected(
            "a type (Tensor[(...), dtype], a dtype, a tuple type, fn (...) -> ..., ref(...), a "
            "type definition's name or a type parameter)"
        )


def _as_constant(entry: Any) -> Constant:
    if isinstance(entry, Constant):
        return entry
    if isinstance(entry, tuple) and len(entry) == 3:
        arr, dtype, name = entry
        return Constant(arr, name, dtype=dtype)
    if isinstance(entry, np.ndarray):
        return Constant(entry)
    raise RelayTypeError(f"metadata entry {entry!r} is not a constant")


# --------------------------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------------------------


def parse(
    source: str,
    source_name: str = "from_string",
    init_module: Any = None,
    init_meta_table: Mapping[str, Sequence[Any]] | None = None,
) -> Any:
    """An ``IRModule`` from Relay text (``tvm.parser.parse``).

    ``init_meta_table`` supplies ``meta[relay.Constant][i]`` when the text has no metadata
    section: ``{"relay.Constant": [relay.const(...), ...]}`` (numpy arrays also do).
    """

    if not isinstance(source, str):
        raise TypeError(f"parse expects the text as a str, got {type(source).__name__}")
    p = _Parser(source, source_name, init_meta_table)
    if init_module is not None:  # its functions can be called from the text
        for gv in init_module.get_global_vars():
            p.globals[gv.name_hint] = gv
        p.know_module_types(init_module)
    defs = p.module()
    if p.free_vars:
        raise p.src.error(0, f"free variable %{p.free_vars[0].name_hint} in a module")

    mod = init_module if init_module is not None else IRModule()
    mod.extern_types |= p.extern_types
    for td in p.type_datas:
        try:
            mod[td.header] = td
        except (RelayTypeError, ValueError) as e:
            raise p.src.error(0, f"type {td.header.name_hint}: {e}") from None
    order, recursive = _callees_first(defs)
    for name, fn, pos in order:
        try:
            if name in recursive:  # calls of functions not lowered yet, by their signature
                for f in lower_function(fn, name, mod.module, allow_external=True):
                    mod.module.body.block.add_op(f)
            else:
                mod[name] = fn
        except (RelayTypeError, TypeError, ValueError) as e:
            msg = str(e) if str(e).startswith(f"in @{name}:") else f"in @{name}: {e}"
            raise p.src.error(pos, msg) from None
    if recursive:
        try:
            mod.verify()
        except Exception as e:  # noqa: BLE001 - a bad recursive signature, reported at the def
            raise p.src.error(defs[0][2], f"recursive functions: {e}") from None
    mark_types_inferred(mod.module)  # Relay's parser ends with InferType
    return mod


def fromtext(source: str, source_name: str = "from_string") -> Any:
    """``relay.fromtext``: the same as ``parse``."""
    return parse(source, source_name)


def parse_expr(source: str, source_name: str = "from_string") -> Expr:
    """One expression (``tvm.parser.parse_expr``); ``free_var`` declarations may precede it."""
    p = _Parser(source, source_name, None)
    p.header()
    e = p.sequence()
    if p.tok.kind != "eof":
        raise p.expected("the end of the expression")
    return e


def _callees_first(defs: list[tuple[str, Function, int]]) -> tuple[list[tuple[str, Function, int]], set[str]]:
    """Definitions ordered so that a function comes after those it calls, and the names of
    those on a call cycle (recursion; they keep their text order)."""

    by_name = {name: d for d in defs for name in [d[0]]}
    deps = {
        name: [n.name_hint for n in post_order(fn) if isinstance(n, GlobalVar) and n.name_hint in by_name]
        for name, fn, _ in defs
    }
    out: list[tuple[str, Function, int]] = []
    recursive: set[str] = set()
    state: dict[str, int] = {}
    for root, _, _ in defs:
        stack = [(root, False)]
        while stack:
            name, done = stack.pop()
            if done:
                if state.get(name) != 2:
                    state[name] = 2
                    out.append(by_name[name])
                continue
            if state.get(name):
                continue
            state[name] = 1
            stack.append((name, True))
            for d in reversed(deps[name]):
                if state.get(d) == 1:
                    recursive.update((name, d))
                elif not state.get(d):
                    stack.append((d, False))
    return out, recursive


relay_module.parse_into = parse  # IRModule.import_from_std reads the standard files with it
