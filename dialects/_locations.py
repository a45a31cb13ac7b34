"""Source locations on parsed ops, and verifier errors that name them.

xDSL 0.74's parser gives every op ``UnknownLoc`` unless the text spells ``loc(...)``, so a
verifier or type-inference error could only mark the op in a reprinted module. Importing
``xrelay.dialects`` installs small hooks:

* ``Parser.parse_operation`` sets each op it parses without an explicit location to
  ``FileLineColLoc(file, line, column)`` of the op's first token (its first result name, as
  MLIR does). Line starts are indexed once per input, so this stays linear. The printer
  shows locations only with ``print_debuginfo``, so printed text does not change;
  ``clone`` keeps them, so a pass that copies an op keeps its source position.
* ``Operation.emit_error`` (what every op verifier and the dominance check go through)
  prefixes the raised error with ``file:line:column:`` of the op at fault.

``op_location(op)`` is that prefix for other diagnostics (``infer-type`` uses it).

Before parsing a module, its text's bracket nesting is checked (``MAX_NESTING``): deeper
text is a ``ParseError`` at the offending bracket, not a ``RecursionError`` somewhere in
xDSL's recursive parser, verifier or printer.

Parse errors show at most 160 columns of a long line, around the error.

Numbers in attributes (``axis = 100000000000000000000000000``, ``300 : i8``) that do not fit
their type are a ``ParseError`` at the number (xDSL raised its range error without a place),
and float values of a width xrelay has no dtype for (``1.0 : f80``, ``array<f128: 1.0>``,
``dense<1.0> : tensor<2xf80>``) are refused where they are written: xDSL 0.74 parses them but
cannot print or pack them (``NotImplementedError`` later, far from the text).

A last hook turns the raw exceptions xDSL 0.74's dense-literal parser raises on literals
that do not fit their element type (an ``AssertionError`` for ``dense<[1.0]> :
tensor<1xcomplex<f32>>``, ``TypeError``/``ValueError``/``OverflowError`` for others) into a
``ParseError`` at the literal, so generic attribute syntax gets a line and column too; a
literal whose type cannot fit in memory (a splat of ``tensor<99999999999xf32>``) is refused
before xDSL expands it into one Python value per element (``refuse_huge_dense``).
"""

from __future__ import annotations

import bisect
import re
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    AnyFloat,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    IntAttr,
    StringAttr,
)
from xdsl.ir import Operation
from xdsl.parser import AttrParser, Parser
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Span

_NEWLINE = {str: re.compile("\n"), bytes: re.compile(b"\n")}
_LOCATED = "_xrelay_located"


def op_location(op: Operation) -> str | None:
    """``file:line:column`` where ``op`` was parsed, or None (built in Python, or by a pass)."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    return None


def _line_starts(parser: Parser) -> tuple[object, list[int], StringAttr]:
    """Offsets where each line of the parser's input starts (cached on the parser)."""
    cached = parser.__dict__.get("_xrelay_lines")
    source = parser.lexer.input
    if cached is None or cached[0] is not source:
        content = source.content
        starts = [0] + [m.end() for m in _NEWLINE[type(content)].finditer(content)]
        cached = (source, starts, StringAttr(source.name))
        parser.__dict__["_xrelay_lines"] = cached
    return cached


def _parse_operation(self: Parser) -> Operation:
    span = self._current_token.span
    op = _upstream_parse_operation(self)
    if type(op.location) is not FileLineColLoc:  # an explicit loc(...) wins
        _, starts, name = _line_starts(self)
        line = bisect.bisect_right(starts, span.start)
        column = span.start - starts[line - 1] + 1
        op.location = FileLineColLoc.new([name, IntAttr(line + span.line_offset), IntAttr(column)])
    return op


def _emit_error(self: Operation, message: str, underlying_error: Exception) -> Any:
    where = op_location(self)
    args = underlying_error.args
    if (
        where
        and args
        and isinstance(args[0], str)
        and not getattr(underlying_error, _LOCATED, False)
    ):
        underlying_error.args = (f"{where}: {args[0]}",) + args[1:]
        setattr(underlying_error, _LOCATED, True)
    return _upstream_emit_error(self, message, underlying_error)


# `: tensor<DIMSxELEM>` after a dense literal; ELEM's first number is its width in bits.
_LITERAL_TYPE = re.compile(
    r"\s*:\s*(?:tensor|vector)<((?:\d+x)*)(?:[a-z]*?(\d+)|complex<[a-z]*?(\d+)>)[A-Za-z0-9]*>"
)


def refuse_huge_dense(parser: AttrParser, pos: int, what: str = "dense literal") -> None:
    """Refuse the literal ``<...> : tensor<...>`` at ``pos`` (its ``<``, or the ``dense``
    before it) when its type cannot fit in memory, before xDSL expands it (a splat becomes
    one Python value per element): a ``ParseError`` naming ``what``, the type and the bytes."""
    # imported here: the relay package imports this module
    from xrelay.dialects.relay.dtypes import too_large

    text = parser.lexer.input.content
    i = pos + len("dense") if text.startswith("dense", pos) else pos
    if not text.startswith("<", i):
        return
    depth = 0
    while i < len(text):  # the '>' closing <...>
        depth += {"<": 1, ">": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            break
    m = _LITERAL_TYPE.match(text, i)
    if m is None:
        return
    count = 1
    for d in m.group(1).split("x")[:-1]:
        count *= int(d)
    bits = int(m.group(2) or 0) or 2 * int(m.group(3) or 0)
    message = too_large(
        f"{what} of type {m.group(0).strip()[1:].strip()}", count * max(1, (bits + 7) // 8)
    )
    if message:
        parser.raise_error(message, pos, m.end())


def _parse_dense(self: AttrParser, type: Any) -> Any:
    start = self._current_token.span.start
    refuse_huge_dense(self, start)
    try:
        elem = getattr(type, "element_type", None)
        if isinstance(elem, AnyFloat) and elem.bitwidth not in FLOAT_WIDTHS:
            raise ValueError(_float_width_message(elem))
        try:
            return _float_bits(self, start, _upstream_parse_dense(self, type))
        except NotImplementedError:  # packing f80/f128 elements (the type was inside the literal)
            raise ValueError(_WIDTH_MESSAGE) from None
    except ParseError:
        raise
    except (AssertionError, TypeError, ValueError, ArithmeticError, IndexError, MemoryError) as e:
        what = f" of type {type}" if type is not None else ""
        detail = f": {e}" if str(e) else ""
        try:
            self.raise_error(
                f"malformed dense literal{what}: its elements do not fit the element type{detail}",
                start,
                self._current_token.span.start,
            )
        except ParseError as error:
            # for parsers that report the literal their own way (relay.constant)
            error.dense_literal_reason = str(e) or "it does not fit its type"  # type: ignore[attr-defined]
            raise


_LITERAL_ELEMENT = re.compile(
    r"0x[0-9a-fA-F]+|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|true|false"
)


def _float_bits(self: AttrParser, start: int, attr: Any) -> Any:
    """``attr`` with the hex elements of a float literal read as bit patterns, as MLIR reads
    them (and as xDSL prints NaN and infinities: ``dense<[1.0, 0x7fc00000]>``); xDSL 0.74
    reads such an element as the integer's value (2.14e9)."""
    elem = attr.type.element_type
    if not isinstance(elem, AnyFloat):
        return attr
    text = self.lexer.input.content[start : self._current_token.span.start]
    body = text[: text.find(">")] if text.startswith("<") else text
    if "0x" not in body or body.lstrip("<").lstrip().startswith('"'):
        return attr  # no hex element, or a hex blob (already bytes)
    values = _LITERAL_ELEMENT.findall(body)
    width = elem.compile_time_size
    data = bytearray(attr.data.data)
    count = len(data) // width
    for i, v in enumerate(values if len(values) == count else values * count):
        if v.startswith("0x"):
            bits = int(v, 16)
            if bits >> (8 * width):
                self.raise_error(
                    f"hex element {v} does not fit {elem}", start, self._current_token.span.start
                )
            data[i * width : (i + 1) * width] = bits.to_bytes(width, "little")
    return DenseIntOrFPElementsAttr(attr.type, BytesAttr(bytes(data)))


FLOAT_WIDTHS = (16, 32, 64)
"""Bit widths of the float values an attribute may hold (f16, bf16, f32, f64: Relay's float
dtypes); xDSL parses f80 and f128 values but cannot pack or print them."""


def _refuse_float_width(self: AttrParser, attr: Any, start: int) -> Any:
    """``attr``, unless it holds floats of a width outside ``FLOAT_WIDTHS``: a ``ParseError``."""
    t = getattr(attr, "type", None)
    elem = getattr(t, "element_type", t) if not isinstance(attr, DenseArrayBase) else attr.elt_type
    if isinstance(elem, AnyFloat) and elem.bitwidth not in FLOAT_WIDTHS:
        self.raise_error(_float_width_message(elem), start, _end(self, start))
    return attr


def _end(self: AttrParser, start: int) -> int:
    """The end of what was parsed since ``start`` (the current token less the blanks before
    it), so a mark does not run into the next line."""
    content = self.lexer.input.content
    i = self._current_token.span.start
    while i > start + 1 and content[i - 1 : i].isspace():
        i -= 1
    return i


def _float_width_message(elem: Any) -> str:
    return f"{elem} values are not supported (float attributes are f16, bf16, f32 or f64)"


_WIDTH_MESSAGE = "float values of this width are not supported (f16, bf16, f32 or f64)"


def _parse_int_or_float(self: AttrParser) -> Any:
    start = self._current_token.span.start
    try:
        attr = _upstream_parse_int_or_float(self)
    except VerifyException as e:  # IntegerAttr's range check: 300 : i8, 10**26 (i64)
        self.raise_error(str(e), start, _end(self, start))
    except NotImplementedError:  # a hex value of a float type xDSL cannot unpack (f80)
        self.raise_error(_WIDTH_MESSAGE, start, _end(self, start))
    return _refuse_float_width(self, attr, start)


def _parse_dense_array(self: AttrParser) -> Any:
    start = self._current_token.span.start
    try:
        attr = _upstream_parse_dense_array(self)
    except NotImplementedError:  # array<f80: ...>: packing the values
        self.raise_error(_WIDTH_MESSAGE, start, _end(self, start))
    return _refuse_float_width(self, attr, start) if attr is not None else None


MAX_NESTING = 100
"""Deepest bracket nesting (``{ ( [ <``) a module's text may have. xDSL parses, verifies,
walks and prints nested regions and literals recursively (about ten Python frames per nested
op), so deeper text would exhaust Python's stack somewhere; it is refused before parsing,
at the bracket that goes too deep. Real models nest a few levels."""

_OPEN = {"{", "(", "[", "<", b"{", b"(", b"[", b"<"}
_CLOSE = {"}", ")", "]", ">", b"}", b")", b"]", b">"}
_SKIP = {
    str: re.compile(r'//[^\n]*|"(?:[^"\\\n]|\\.)*"|->'),
    bytes: re.compile(rb'//[^\n]*|"(?:[^"\\\n]|\\.)*"|->'),
}
_BRACKETS = {
    str: re.compile(r'//[^\n]*|"(?:[^"\\\n]|\\.)*"|->|[{}()\[\]<>]'),
    bytes: re.compile(rb'//[^\n]*|"(?:[^"\\\n]|\\.)*"|->|[{}()\[\]<>]'),
}
_NOT_BRACKETS = bytes(b for b in range(256) if chr(b) not in "{}()[]<>")
_STEP = np.zeros(256, np.int8)
_STEP[[ord(c) for c in "{([<"]] = 1
_STEP[[ord(c) for c in "})]>"]] = -1


def _check_nesting(self: Parser) -> None:
    """Raise a ``ParseError`` at the first bracket nested deeper than ``MAX_NESTING``."""
    content = self.lexer.input.content
    # Fast path in C and numpy: strings, comments and arrows removed, brackets summed. Only
    # a text that might be too deep (or has a stray closing bracket) is walked in Python.
    code = _SKIP[type(content)].sub("" if isinstance(content, str) else b"", content)
    raw = code.encode("utf-8", "replace") if isinstance(code, str) else code
    brackets = raw.translate(None, _NOT_BRACKETS)
    depth = np.cumsum(_STEP[np.frombuffer(brackets, np.uint8)], dtype=np.int64)
    if not len(depth) or (depth.max() <= MAX_NESTING and depth.min() >= 0):
        return
    depth = 0
    for m in _BRACKETS[type(content)].finditer(content):
        token = m.group()
        if token in _OPEN:
            depth += 1
            if depth > MAX_NESTING:
                self.raise_error(
                    f"nesting deeper than {MAX_NESTING} levels: the input is nested too "
                    "deeply to process",
                    m.start(),
                    m.end(),
                )
        elif token in _CLOSE:
            depth = max(0, depth - 1)


def _parse_module(self: Parser, allow_implicit_module: bool = True) -> Any:
    _check_nesting(self)
    return _upstream_parse_module(self, allow_implicit_module)


_WIDTH = 160
"""Columns of source a parse error shows around its position (a one-line file can be
megabytes long; the message should still be one screen)."""


def _print_with_context(self: Span, msg: str | None = None) -> str:
    text = _upstream_print_with_context(self, msg)
    lines = text.split("\n")
    if max(map(len, lines)) <= _WIDTH:
        return text
    # [location, source, carets, message?, source, carets, ...]: crop every source and caret
    # line to the same window around the first caret, and indent the message to match.
    carets = lines[2] if len(lines) > 2 else ""
    column = len(carets) - len(carets.lstrip(" "))
    off = max(0, column - 40)
    pad = "..." if off else ""
    out = [lines[0]]
    for i, line in enumerate(lines[1:]):
        if msg is not None and i == 2:
            out.append(" " * (column - off + len(pad)) + msg)
        elif line.strip(" ^") == "":
            out.append(" " * len(pad) + line[off : off + _WIDTH])
        else:
            more = "..." if len(line) > off + _WIDTH else ""
            out.append(pad + line[off : off + _WIDTH] + more)
    return "\n".join(out)


_upstream_print_with_context = Span.print_with_context
_upstream_parse_module = Parser.parse_module
_upstream_parse_operation = Parser.parse_operation
_upstream_emit_error = Operation.emit_error
_upstream_parse_dense = AttrParser.parse_dense_int_or_fp_elements_attr
_upstream_parse_int_or_float = AttrParser.parse_optional_builtin_int_or_float_attr
_upstream_parse_dense_array = AttrParser._parse_builtin_densearray_attr  # noqa: SLF001


def install() -> None:
    """Install the hooks once (idempotent)."""
    if getattr(Parser.parse_operation, "_xrelay", False):
        return
    _parse_operation._xrelay = True  # type: ignore[attr-defined]
    Parser.parse_operation = _parse_operation  # type: ignore[method-assign]
    Parser.parse_module = _parse_module  # type: ignore[method-assign]
    Span.print_with_context = _print_with_context  # type: ignore[method-assign]
    Operation.emit_error = _emit_error  # type: ignore[method-assign]
    AttrParser.parse_dense_int_or_fp_elements_attr = _parse_dense  # type: ignore[method-assign]
    AttrParser.parse_optional_builtin_int_or_float_attr = _parse_int_or_float  # type: ignore[method-assign]
    AttrParser._parse_builtin_densearray_attr = _parse_dense_array  # type: ignore[method-assign]  # noqa: SLF001


install()
