"""Shared machinery of the relay dialect: attribute specs, op metadata, syntax, inference.

Every relay op is an ``IRDLOperation`` whose Relay attributes are properties. An op class declares
them with the small spec helpers below (``Int``, ``Ints``, ``Float``, ``Bool``, ``Str``, ...);
the ``@relay_op`` decorator turns the specs into ``prop_def``s, records them in ``ATTRS`` and
registers the op by its Relay name. Defaults are Relay's (docs/relay-semantics.md §5) and are never
printed.

All relay ops share one hand-written syntax, readable like Relay's text format::

    %y = relay.nn.conv2d %x, %w {strides = [2, 2], padding = [3, 3, 3, 3]}
           : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<1x64x112x112xf32>

Each op infers its result types from operand types and attributes (``infer_types``); the
verifier recomputes them and reports a mismatch naming the op, and the Python builders use the
same function so an ill-typed expression fails at once.
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    FloatAttr,
    FunctionType,
    IntegerAttr,
    StringAttr,
    TensorType,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AnyOf,
    BaseAttr,
    IRDLOperation,
    VarOperandDef,
    VarResultDef,
    opt_prop_def,
    prop_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from xrelay.dialects.relay.devices import DeviceError, VirtualDeviceAttr, as_virtual_device
from xrelay.dialects.relay.dtypes import DTYPES, Shape, dtype_of, shape_of, tensor_type
from xrelay.error import TVMError


class RelayTypeError(VerifyException, TVMError):
    """An ill-typed relay op: raised by builders, the verifier and infer-type."""


class OpPattern(enum.IntEnum):
    """Relay's fusion pattern kinds (op_attr_types.h); a smaller value is simpler."""

    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    COMM_REDUCE = 3
    OUT_ELEMWISE_FUSABLE = 4
    TUPLE = 7
    OPAQUE = 8


# --------------------------------------------------------------------------------------------
# Attribute specs
# --------------------------------------------------------------------------------------------

REQUIRED: Any = object()
"""Marks a Relay attribute without a default (always set by the Python constructor)."""


@dataclass
class AttrSpec:
    """One Relay attribute of an op: its kind, its default, and how it is stored."""

    kind: str
    default: Any = REQUIRED
    name: str = ""

    @property
    def optional(self) -> bool:
        return self.default is None

    def constraint(self):
        if self.kind == "int_or_ints":
            return AnyOf((BaseAttr(IntegerAttr), BaseAttr(DenseArrayBase)))
        return {
            "int": IntegerAttr,
            "ints": DenseArrayBase,
            "float": FloatAttr,
            "bool": IntegerAttr,
            "str": StringAttr,
            "ints_list": ArrayAttr,
            "floats": DenseArrayBase,
            "device": VirtualDeviceAttr,
        }[self.kind]

    def to_attribute(self, value: Any) -> Attribute:
        """Store a Python value (already normalised) as an xDSL attribute."""
        k = self.kind
        try:
            if k == "int":
                return IntegerAttr(_as_int(value), i64)
            if k == "ints":
                return DenseArrayBase.from_list(i64, [_as_int(v) for v in _as_seq(value)])
            if k == "float":
                return FloatAttr(float(value), f64)
            if k == "bool":
                if not isinstance(value, bool | int):
                    raise TypeError
                return IntegerAttr(1 if value else 0, i1)
            if k == "str":
                if not isinstance(value, str):
                    raise TypeError
                return StringAttr(value)
            if k == "floats":
                return DenseArrayBase.from_list(f64, [float(_as_number(v)) for v in _as_seq(value)])
            if k == "int_or_ints":
                if isinstance(value, int) and not isinstance(value, bool):
                    return IntegerAttr(value, i64)
                return DenseArrayBase.from_list(i64, [_as_int(v) for v in _as_seq(value)])
            if k == "device":
                return as_virtual_device(value)
            if k == "ints_list":
                return ArrayAttr(
                    [
                        DenseArrayBase.from_list(i64, [_as_int(v) for v in _as_seq(row)])
                        for row in _as_seq(value)
                    ]
                )
        except DeviceError as e:
            raise RelayTypeError(f"attribute '{self.name}': {e}") from None
        except (VerifyException, OverflowError):  # 10**26 in an i64, 1e400 in an f64
            raise RelayTypeError(
                f"attribute '{self.name}' = {_short(value)} does not fit its type "
                f"({_KIND_RANGE[k]})"
            ) from None
        except (TypeError, ValueError):
            pass
        raise RelayTypeError(f"attribute '{self.name}' expects {_KIND_DOC[k]}, got {value!r}")

    def from_attribute(self, attr: Attribute) -> Any:
        """The plain Python value of a stored attribute."""
        if isinstance(attr, VirtualDeviceAttr):
            return attr
        if isinstance(attr, DenseArrayBase):
            return tuple(attr.get_values())
        if isinstance(attr, IntegerAttr):
            v = attr.value.data
            if self.kind == "bool":
                return bool(v)
            return v
        if isinstance(attr, FloatAttr):
            return attr.value.data
        if isinstance(attr, StringAttr):
            return attr.data
        if isinstance(attr, ArrayAttr):
            return tuple(self.from_attribute(a) for a in attr.data)
        raise RelayTypeError(f"attribute '{self.name}' has an unexpected value {attr}")


@functools.cache
def is_multi_result(cls: type[IRDLOperation]) -> bool:
    """Whether ops of ``cls`` give other than exactly one result (the interpreters and the
    native kernels return a tuple of them)."""
    defs = cls.get_irdl_definition().results
    return len(defs) != 1 or any(isinstance(d, VarResultDef) for _, d in defs)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


_KIND_RANGE = {
    "float": "64-bit floats",
    "floats": "64-bit floats",
    **{k: "64-bit integers" for k in ("int", "ints", "int_or_ints", "ints_list")},
}

_KIND_DOC = {
    "int": "an integer",
    "ints": "a list of integers",
    "float": "a number",
    "bool": "a boolean",
    "str": "a string",
    "int_or_ints": "an integer or a list of integers",
    "ints_list": "a list of lists of integers",
    "floats": "a list of numbers",
    "device": "a device",
}


def _as_int(v: Any) -> int:
    if isinstance(v, bool):
        raise TypeError
    if isinstance(v, int):
        return v
    if hasattr(v, "__index__"):
        return int(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    raise TypeError


def _as_number(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise TypeError
    return v


def _as_seq(v: Any) -> Sequence[Any]:
    if isinstance(v, str | bytes) or not hasattr(v, "__iter__"):
        raise TypeError
    return list(v)


def Int(default: Any = REQUIRED) -> Any:  # noqa: N802 - reads like a type in op bodies
    return AttrSpec("int", default)


def Ints(default: Any = REQUIRED) -> Any:  # noqa: N802
    return AttrSpec("ints", default)


def Float(default: Any = REQUIRED) -> Any:  # noqa: N802
    return AttrSpec("float", default)


def Bool(default: Any = REQUIRED) -> Any:  # noqa: N802
    return AttrSpec("bool", default)


def Str(default: Any = REQUIRED) -> Any:  # noqa: N802
    return AttrSpec("str", default)


def IntOrInts(default: Any = REQUIRED) -> Any:  # noqa: N802
    return AttrSpec("int_or_ints", default)


def IntsList(default: Any = REQUIRED) -> Any:  # noqa: N802
    return AttrSpec("ints_list", default)


def Floats(default: Any = REQUIRED) -> Any:  # noqa: N802
    return AttrSpec("floats", default)


def Device(default: Any = REQUIRED) -> Any:  # noqa: N802
    """A ``#relay.virtual_device<...>`` (devices.py); Python values go through ``as_virtual_device``."""
    return AttrSpec("device", default)


# --------------------------------------------------------------------------------------------
# The op base class
# --------------------------------------------------------------------------------------------

RELAY_OPS: dict[str, type[RelayOp]] = {}
"""Every relay op class by its Relay name (``"nn.conv2d"``)."""


class RelayOp(IRDLOperation):
    """Base of every relay op: metadata, attribute access, syntax, inference and verification."""

    RELAY_NAME: ClassVar[str] = ""
    """The op's name in Relay (``nn.conv2d``); the xDSL name is ``relay.`` + this."""

    PATTERN: ClassVar[OpPattern] = OpPattern.OPAQUE
    """Fusion pattern kind (TOpPattern)."""

    STATEFUL: ClassVar[bool] = False
    """TOpIsStateful: never folded, CSE'd or deleted."""

    RESHAPE_ONLY: ClassVar[bool] = False
    """TReshapeOp: a group of only such ops can alias its input's storage."""

    NON_COMPUTATIONAL: ClassVar[bool] = False
    """TNonComputational: fusion visits through it (on_device)."""

    NON_TENSOR_OPERANDS: ClassVar[bool] = False
    """Whether an operand may be other than a tensor (``memory.kill`` frees a ``Storage``); the
    op's operand definitions then say which types."""

    ATTRS: ClassVar[dict[str, AttrSpec]] = {}
    """The op's Relay attributes in Relay's order."""

    RELAY_TEXT_ALWAYS: ClassVar[frozenset[str]] = frozenset()
    """Attributes Relay's text printer shows even at their default: fields without a C++
    default (``units``, printed ``units=None``) and fields whose Python API never stores the
    C++ default (conv2d's ``padding`` is normalised to 4 values, its C++ default has 2)."""

    # ---- attributes ---------------------------------------------------------------------

    @property
    def attrs(self) -> dict[str, Any]:
        """Every Relay attribute as a plain Python value, defaults filled in."""
        out: dict[str, Any] = {}
        for name, spec in self.ATTRS.items():
            attr = self.properties.get(name)
            if attr is None:
                out[name] = None if spec.default is REQUIRED else spec.default
            else:
                out[name] = spec.from_attribute(attr)
        return out

    @classmethod
    def default_attrs(cls) -> dict[str, Any]:
        """Every attribute that has a default (None for an optional one), with that default.

        The one declaration of the defaults: the Python API and the kernels read it from here.
        """
        return {name: spec.default for name, spec in cls.ATTRS.items() if spec.default is not REQUIRED}

    @classmethod
    def normalize_attrs(cls, attrs: dict[str, Any], in_types: Sequence[TensorType]) -> dict[str, Any]:
        """Bring Python-API attribute values to their canonical form (e.g. padding to 4 values)."""
        return attrs

    @classmethod
    def complete_attrs(cls, given: dict[str, Any], in_types: Sequence[TensorType]) -> dict[str, Any]:
        """Check names, fill defaults, normalise: the attrs dict every op method sees."""
        unknown = [k for k in given if k not in cls.ATTRS]
        if unknown:
            known = ", ".join(cls.ATTRS) or "none"
            raise RelayTypeError(
                f"{cls.name}: unknown attribute(s) {', '.join(unknown)}; known: {known}"
            )
        attrs: dict[str, Any] = {}
        for name, spec in cls.ATTRS.items():
            if name in given and given[name] is not None:
                attrs[name] = given[name]
            elif spec.default is REQUIRED:
                raise RelayTypeError(f"{cls.name}: attribute '{name}' is required")
            else:
                attrs[name] = spec.default
        attrs = cls.normalize_attrs(attrs, in_types)
        # round-trip through the storage form so lists become tuples, ints are checked, ...
        for name, spec in cls.ATTRS.items():
            if attrs[name] is not None:
                attrs[name] = spec.from_attribute(spec.to_attribute(attrs[name]))
        return attrs

    # ---- inference ----------------------------------------------------------------------

    @classmethod
    def infer_types(cls, in_types: Sequence[TensorType], attrs: dict[str, Any]) -> list[TensorType]:
        """Result types from operand types and (completed) attributes; raise RelayTypeError.

        Every registered op defines it (``relay_op`` refuses a class that does not).
        """
        raise RelayTypeError(f"{cls.name} has no type inference")

    @classmethod
    def operand_groups(cls, operands: Sequence[SSAValue]) -> list[Any]:
        """Split a flat operand list into the IRDL operand groups of this op."""
        defs = cls.get_irdl_definition().operands
        n_var = sum(isinstance(d, VarOperandDef) for _, d in defs)
        if n_var == 0:
            if len(operands) != len(defs):
                raise RelayTypeError(
                    f"{cls.name} takes {len(defs)} operand(s), got {len(operands)}"
                )
            return list(operands)
        n_fixed = len(defs) - n_var
        if len(operands) < n_fixed:
            raise RelayTypeError(
                f"{cls.name} takes at least {n_fixed} operand(s), got {len(operands)}"
            )
        groups: list[Any] = []
        i = 0
        for _, d in defs:
            if isinstance(d, VarOperandDef):
                k = len(operands) - n_fixed
                groups.append(list(operands[i : i + k]))
                i += k
            else:
                groups.append(operands[i])
                i += 1
        return groups

    @classmethod
    def result_groups(cls, types: Sequence[Attribute]) -> list[Any]:
        defs = cls.get_irdl_definition().results
        if any(isinstance(d, VarResultDef) for _, d in defs):
            return [list(types)]
        return list(types)

    @classmethod
    def make(cls, operands: Sequence[SSAValue], **attrs: Any) -> RelayOp:
        """Build the op from operands and Relay attributes, inferring its result types.

        Raises ``RelayTypeError`` naming the op and the types when the op is ill-typed.
        """
        in_types = [_tensor_operand(cls, i, v.type) for i, v in enumerate(operands)]
        full = cls.complete_attrs(attrs, in_types)
        result_types = cls.infer_types(in_types, full)
        return cls.build(
            operands=cls.operand_groups(operands),
            result_types=cls.result_groups(result_types),
            properties=cls.attrs_to_properties(full),
        )

    @classmethod
    def attrs_to_properties(cls, attrs: dict[str, Any]) -> dict[str, Attribute]:
        props: dict[str, Attribute] = {}
        for name, spec in cls.ATTRS.items():
            value = attrs.get(name)
            if value is None:
                continue
            props[name] = spec.to_attribute(value)
        return props

    def inferred_types(self) -> list[TensorType]:
        in_types = [_tensor_operand(type(self), i, v.type) for i, v in enumerate(self.operands)]
        try:
            # normalize_attrs checks what the attributes must be (positive strides, ...),
            # as verify_ does: infer-type may run on a module that was never verified
            type(self).normalize_attrs(dict(self.attrs), [o.type for o in self.operands])
            return type(self).infer_types(in_types, self.attrs)
        except (ValueError, ArithmeticError) as e:  # e.g. an out_dtype naming no dtype
            raise RelayTypeError(f"{self.name}: {e}") from None

    def verify_(self) -> None:
        attrs = self.attrs
        canonical = type(self).normalize_attrs(dict(attrs), [o.type for o in self.operands])
        for name, value in canonical.items():
            spec = self.ATTRS[name]
            if value is not None and not _same_value(spec.from_attribute(spec.to_attribute(value)), attrs[name]):
                raise RelayTypeError(
                    f"{self.name}: attribute '{name}' = {format_value(attrs[name])} is not in "
                    f"canonical form; expected {format_value(spec.from_attribute(spec.to_attribute(value)))}"
                )
        actual = [r.type for r in self.results]
        for i, t in enumerate(actual):
            if isinstance(t, TensorType):
                _check_element_type(type(self), f"result {i}", t)
        inferred = self.inferred_types()
        if len(inferred) != len(actual):
            raise RelayTypeError(
                f"{self.name}: expected {len(inferred)} result(s), got {len(actual)}"
            )
        for i, (want, got) in enumerate(zip(inferred, actual, strict=True)):
            if want != got:
                raise RelayTypeError(
                    f"{self.name}: result {i} has type {got} but the operands "
                    f"({', '.join(str(o.type) for o in self.operands)}) give {want}"
                )

    # ---- syntax -------------------------------------------------------------------------

    def non_default_attrs(self) -> list[tuple[str, Any]]:
        """The attributes set to something other than their default, in Relay's order (what
        both this syntax and Relay's text print, as Relay's ``VisitNonDefaultAttrs``)."""
        items = []
        for name, spec in self.ATTRS.items():
            attr = self.properties.get(name)
            if attr is None:
                continue
            value = spec.from_attribute(attr)
            if spec.default is not REQUIRED and value == _canon_default(spec):
                continue
            items.append((name, value))
        return items

    def relay_text_attrs(self) -> list[tuple[str, Any]]:
        """The attributes Relay's text format shows: the non-default ones plus
        ``RELAY_TEXT_ALWAYS`` (as ``VisitNonDefaultAttrs`` against the C++ defaults)."""
        if not self.RELAY_TEXT_ALWAYS:
            return self.non_default_attrs()
        shown = dict(self.non_default_attrs())
        values = self.attrs
        return [(n, shown[n] if n in shown else values[n]) for n in self.ATTRS if n in shown or n in self.RELAY_TEXT_ALWAYS]

    def print(self, printer: Printer) -> None:
        if self.operands:
            printer.print_string(" ")
            printer.print_list(self.operands, printer.print_operand)
        items = [f"{name} = {format_value(value)}" for name, value in self.non_default_attrs()]
        if items:
            printer.print_string(" {" + ", ".join(items) + "}")
        if self.attributes:
            printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" : ")
        printer.print_string("(")
        printer.print_list([o.type for o in self.operands], printer.print_attribute)
        printer.print_string(") -> ")
        if len(self.results) == 1:
            printer.print_attribute(self.results[0].type)
        else:
            printer.print_string("(")
            printer.print_list([r.type for r in self.results], printer.print_attribute)
            printer.print_string(")")

    @classmethod
    def parse(cls, parser: Parser) -> RelayOp:
        pos = parser.pos
        unresolved = []
        first = parser.parse_optional_unresolved_operand()
        if first is not None:
            unresolved.append(first)
            while parser.parse_optional_punctuation(","):
                unresolved.append(parser.parse_unresolved_operand())
        given: dict[str, Any] = {}
        if parser.parse_optional_punctuation("{"):
            if not parser.parse_optional_punctuation("}"):
                while True:
                    key_pos = parser.pos
                    key = parser.parse_identifier(" for a relay attribute name")
                    if key not in cls.ATTRS:
                        known = ", ".join(cls.ATTRS) or "none"
                        parser.raise_error(
                            f"{cls.name} has no attribute '{key}' (known: {known})",
                            key_pos,
                            parser.pos,
                        )
                    parser.parse_punctuation("=")
                    val_pos = parser.pos
                    value = parse_value(parser)
                    try:
                        cls.ATTRS[key].to_attribute(value)
                    except RelayTypeError as e:
                        parser.raise_error(str(e), val_pos, parser.pos)
                    given[key] = value
                    if not parser.parse_optional_punctuation(","):
                        break
                parser.parse_punctuation("}")
        extra = parser.parse_optional_attr_dict_with_keyword()
        parser.parse_punctuation(":")
        type_pos = parser.pos
        fn_type = _parse_function_type_cached(parser)
        if (bad := _bad_element_type(cls, fn_type)) is not None:
            parser.raise_error(bad, type_pos)
        operands = parser.resolve_operands(unresolved, fn_type.inputs.data, pos)
        in_types = [t for t in fn_type.inputs.data if isinstance(t, TensorType)]
        try:
            full = cls.complete_attrs(given, in_types)
        except RelayTypeError as e:
            parser.raise_error(str(e), pos, parser.pos)
        # store what was written, in canonical form (padding [1, 1] -> [1, 1, 1, 1])
        props = {name: cls.ATTRS[name].to_attribute(full[name]) for name in given}
        result_defs = cls.get_irdl_definition().results
        n_results = len(fn_type.outputs.data)
        if not any(isinstance(d, VarResultDef) for _, d in result_defs) and n_results != len(result_defs):
            parser.raise_error(
                f"{cls.name} has {len(result_defs)} result(s), but the type lists {n_results}",
                pos,
                parser.pos,
            )
        try:
            groups = cls.operand_groups(operands)
        except RelayTypeError as e:
            parser.raise_error(str(e), pos, parser.pos)
        op = cls.build(
            operands=groups,
            result_types=cls.result_groups(fn_type.outputs.data),
            properties=props,
        )
        if extra is not None:
            op.attributes.update(extra.data)
        return op


_TYPE_CACHE: dict[str, FunctionType] = {}
# Bounds on the cache: a model has tens to hundreds of distinct signatures; a long-running
# process parsing many modules (the fuzzer, a server) must not keep every one it ever saw.
_TYPE_CACHE_ENTRIES = 4096
_TYPE_CACHE_KEY_CHARS = 1024


def _parse_function_type_cached(parser: Parser) -> FunctionType:
    """Parse the ``(...) -> ...`` that ends a relay op's line, reusing earlier parses.

    Parsing is the slowest stage (xDSL re-lexes every tensor type), and a model repeats the same
    few signatures hundreds of times. The signature is the rest of the line, so the text is the
    cache key; on a hit the parser resumes after it. Lines with anything else after the type
    (comments) take the normal path.
    """
    start = parser.pos
    content = parser.lexer.input.content
    end = content.find("\n", start)
    if end < 0:
        end = len(content)
    snippet = content[start:end].rstrip()
    cached = _TYPE_CACHE.get(snippet)
    if cached is not None:
        parser._resume_from(start + len(snippet))  # noqa: SLF001 - xDSL has no public seek
        return cached
    fn_type = parser.parse_function_type()
    if "//" not in snippet and parser.pos >= start + len(snippet) and len(snippet) <= _TYPE_CACHE_KEY_CHARS:
        if len(_TYPE_CACHE) >= _TYPE_CACHE_ENTRIES:
            _TYPE_CACHE.clear()
        _TYPE_CACHE[snippet] = fn_type
    return fn_type


def _canon_default(spec: AttrSpec) -> Any:
    if spec.default is None or spec.default is REQUIRED:
        return spec.default
    return spec.from_attribute(spec.to_attribute(spec.default))


def format_value(value: Any) -> str:
    """Print a plain attribute value as the relay and memory syntaxes write it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value) and abs(value) < 1e16:
            return f"{value:.1f}"
        text = repr(value)
        if "e" in text and "." not in text:  # MLIR float literals need a '.': 2e-05 -> 2.0e-05
            mant, exp = text.split("e")
            text = f"{mant}.0e{exp}"
        return text
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, tuple | list):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, VirtualDeviceAttr):
        return str(value)
    raise TypeError(f"cannot print attribute value {value!r}")


def _same_value(a: Any, b: Any) -> bool:
    """``a == b`` for attribute values, with a NaN equal to a NaN (in lists too): a NaN
    attribute is in canonical form as written."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    return a == b


def parse_value(parser: Parser, allow_float: bool = True) -> Any:
    """Parse a plain value: integer, float, string, boolean or a (nested) list of them."""
    if parser.parse_optional_punctuation("["):
        items: list[Any] = []
        if parser.parse_optional_punctuation("]"):
            return items
        items.append(parse_value(parser, allow_float))
        while parser.parse_optional_punctuation(","):
            items.append(parse_value(parser, allow_float))
        parser.parse_punctuation("]")
        return items
    if (s := parser.parse_optional_str_literal()) is not None:
        return s
    if parser.parse_optional_characters("#relay.virtual_device") is not None:
        return VirtualDeviceAttr.new(VirtualDeviceAttr.parse_parameters(parser))
    if (b := parser.parse_optional_boolean()) is not None:
        return b
    if not allow_float:
        if (i := parser.parse_optional_integer(allow_boolean=False)) is not None:
            return i
        parser.raise_error("expected an integer, string, boolean or list")
    # '-inf' (how a negative infinity prints) is no MLIR number literal: the sign is read here
    negative = parser.parse_optional_punctuation("-") is not None
    if (n := parser.parse_optional_number()) is not None:
        return -n if negative else n
    for word, val in (("inf", math.inf), ("nan", math.nan)):
        if parser.parse_optional_keyword(word):
            return -val if negative else val
    parser.raise_error("expected an integer, float, string, boolean or list as attribute value")


def _tensor_operand(cls: type[RelayOp], index: int, t: Attribute) -> TensorType:
    if not isinstance(t, TensorType):
        if cls.NON_TENSOR_OPERANDS:
            return t  # type: ignore[return-value] - the op's operand definitions check it
        raise RelayTypeError(f"{cls.name}: operand {index} has type {t}, expected a tensor")
    _check_element_type(cls, f"operand {index}", t)
    return t


@functools.lru_cache(maxsize=4096)
def _bad_element_type(cls: type[RelayOp], fn_type: FunctionType) -> str | None:
    """At parse time, so the message has a line and column: see ``_check_element_type``."""
    typed = [("operand", fn_type.inputs.data), ("result", fn_type.outputs.data)]
    try:
        for what, types in typed:
            for i, t in enumerate(types):
                if isinstance(t, TensorType):
                    _check_element_type(cls, f"{what} {i}", t)
    except RelayTypeError as e:
        return str(e)
    return None


def _check_element_type(cls: type[RelayOp], what: str, t: TensorType) -> None:
    """Relay ops compute on Relay's dtypes only (no i7, f80, index, complex, f8)."""
    try:
        known = dtype_of(t) in DTYPES
    except ValueError:
        known = False
    if not known:
        raise RelayTypeError(
            f"{cls.name}: {what} has element type {t.element_type}, which is no Relay dtype "
            f"(known: {', '.join(DTYPES)})"
        )


_T = TypeVar("_T", bound=type[RelayOp])

_OWN_SPECS: dict[type, dict[str, AttrSpec]] = {}


def _prop_for(spec: AttrSpec) -> Any:
    if spec.default is None:
        return opt_prop_def(spec.constraint())
    if spec.default is REQUIRED:
        return prop_def(spec.constraint())
    return prop_def(spec.constraint(), default_value=spec.to_attribute(spec.default))


def relay_op(
    relay_name: str,
    pattern: OpPattern,
    *,
    stateful: bool = False,
    reshape_only: bool = False,
    non_computational: bool = False,
    dialect: str = "relay",
    registry: dict[str, type[RelayOp]] | None = None,
) -> Callable[[_T], _T]:
    """Turn a class with ``AttrSpec`` fields into a registered relay op definition.

    Ops of another dialect built on this machinery (``qnn``) pass their dialect, whose prefix
    Relay's name already carries (``qnn.conv2d``), and their own registry.
    """
    from xdsl.irdl import irdl_op_definition

    def wrap(cls: _T) -> _T:
        specs: dict[str, AttrSpec] = {}
        for klass in reversed(cls.__mro__):
            if klass not in _OWN_SPECS:
                own = {k: v for k, v in klass.__dict__.items() if isinstance(v, AttrSpec)}
                for key, value in own.items():
                    value.name = key
                    setattr(klass, key, _prop_for(value))
                _OWN_SPECS[klass] = own
            specs.update(_OWN_SPECS[klass])
        if cls.infer_types.__func__ is RelayOp.infer_types.__func__:
            raise TypeError(f"relay op {relay_name} must define infer_types")
        cls.ATTRS = specs
        cls.name = relay_name if dialect != "relay" else "relay." + relay_name
        annotations = dict(cls.__dict__.get("__annotations__", {}))
        for key in ("ATTRS", "RELAY_NAME", "PATTERN", "STATEFUL", "RESHAPE_ONLY", "NON_COMPUTATIONAL"):
            annotations[key] = ClassVar
        for key in cls.__dict__:
            if key.isupper():
                annotations[key] = ClassVar
        cls.__annotations__ = annotations
        cls.RELAY_NAME = relay_name
        cls.PATTERN = pattern
        cls.STATEFUL = stateful
        cls.RESHAPE_ONLY = reshape_only
        cls.NON_COMPUTATIONAL = non_computational
        defined = irdl_op_definition(cls)
        (RELAY_OPS if registry is None else registry)[relay_name] = defined
        return defined

    return wrap


# --------------------------------------------------------------------------------------------
# Inference helpers
# --------------------------------------------------------------------------------------------


def fail(cls: type[RelayOp] | str, msg: str) -> RelayTypeError:
    name = cls if isinstance(cls, str) else cls.name
    return RelayTypeError(f"{name}: {msg}")


def broadcast_shapes(cls: type[RelayOp], types: Sequence[TensorType]) -> Shape:
    """Numpy broadcasting of several shapes; dynamic dims broadcast to dynamic."""
    shapes = [shape_of(t) for t in types]
    rank = max(len(s) for s in shapes)
    out: list[int | None] = []
    for axis in range(rank):
        dims = [s[axis - rank + len(s)] for s in shapes if axis - rank + len(s) >= 0]
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            raise fail(
                cls,
                "operands cannot be broadcast together: " + ", ".join(str(t) for t in types),
            )
        if known:
            out.append(known.pop())
        elif any(d is None for d in dims):
            out.append(None)
        else:
            out.append(1)
    return tuple(out)


def same_dtype(cls: type[RelayOp], types: Sequence[TensorType]) -> str:
    dtypes = {dtype_of(t.element_type) for t in types}
    if len(dtypes) != 1:
        raise fail(cls, "operand dtypes differ: " + ", ".join(str(t) for t in types))
    return dtypes.pop()


def norm_axis(cls: type[RelayOp], axis: int, rank: int, what: str = "axis") -> int:
    if not -rank <= axis < rank:
        raise fail(cls, f"{what} {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def conv_out(size: int | None, k: int, pad: int, stride: int, dilation: int) -> int | None:
    if size is None:
        return None
    return (size + pad - ((k - 1) * dilation + 1)) // stride + 1


def new_tensor(shape: Sequence[int | None], dtype: str) -> TensorType:
    return tensor_type(shape, dtype)
