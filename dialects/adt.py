"""The adt dialect: Relay's algebraic data types, ``match`` and calls of functions with type
parameters (docs/design.md, decision 9).

A type definition is a module-level symbol; its constructors' fields may use its type
parameters (``!adt.var<"A">``) and the type itself (recursion):

    adt.type_def @List<A> {Cons(!adt.var<"A">, !adt.value<@List, [!adt.var<"A">]>), Nil}

A value of ``List[int32]`` has the type ``!adt.value<@List, [tensor<i32>]>``. ``adt.construct``
builds one, ``adt.match`` takes one apart: one region per clause, the clause's pattern an
attribute, the variables the pattern binds the region's block arguments (in the pattern's
left-to-right order), each region ending in ``adt.yield`` (as ``scf.if``, decision 8):

    %l = adt.construct @List::@Cons(%h, %t) : (tensor<i32>, !adt.value<@List, [tensor<i32>]>) -> !adt.value<@List, [tensor<i32>]>
    %x = adt.match %l : !adt.value<@List, [tensor<i32>]> -> tensor<i32> {
      case @Cons(var, _) {
      ^bb0(%y: tensor<i32>):
        adt.yield %y : tensor<i32>
      }
    }

A function with type parameters is a ``func.func`` whose signature uses ``!adt.var``s; it is
called with ``adt.call``, whose types instantiate the signature (``func.call`` wants them equal):

    %h = adt.call @hd(%l) : (!adt.value<@List, [tensor<i32>]>) -> tensor<i32>

Constructors and ``adt.call`` are pure values (``adt.call`` of a function using references is
not: the rebuilt expression keeps it in order as ``func.call``s of such functions); a match is
pure when its regions are. The reference interpreter runs them (``ConstructorValue``); fuse-ops,
lower-to-memory (so ``xrelay.build``) and the C target refuse them naming the op.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import cast

from xdsl.dialects.builtin import (
    ArrayAttr,
    FunctionType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    param_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_region_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import (
    IsTerminator,
    Pure,
    RecursivelySpeculatable,
    RecursiveMemoryEffect,
    SymbolOpInterface,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException

__all__ = [
    "ADT_OPS",
    "Adt",
    "AdtCallOp",
    "ApplyOp",
    "ClosureOp",
    "ConstructOp",
    "MatchOp",
    "PatternAttr",
    "TypeDefOp",
    "TypeVarType",
    "ValueType",
    "YieldOp",
    "adt_feature",
    "instantiate",
    "pattern_vars",
    "substitute",
    "unify",
]


@irdl_attr_definition
class TypeVarType(ParametrizedAttribute, TypeAttribute):
    """A type parameter, ``!adt.var<"A">`` (Relay's ``TypeVar``); instantiated per use."""

    name = "adt.var"
    var_name: StringAttr = param_def(StringAttr)

    def __init__(self, var_name: str | StringAttr):
        super().__init__(StringAttr(var_name) if isinstance(var_name, str) else var_name)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        parser.parse_punctuation("<")
        name = parser.parse_str_literal()
        parser.parse_punctuation(">")
        return [StringAttr(name)]

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_string_literal(self.var_name.data)
        printer.print_string(">")


@irdl_attr_definition
class ValueType(ParametrizedAttribute, TypeAttribute):
    """A value of a type definition applied to type arguments,
    ``!adt.value<@List, [tensor<i32>]>`` (Relay's ``TypeCall``, ``List[int32]``)."""

    name = "adt.value"
    type_name: SymbolRefAttr = param_def(SymbolRefAttr)
    args: ArrayAttr[Attribute] = param_def(ArrayAttr[Attribute])

    def __init__(self, type_name: str | SymbolRefAttr, args: Sequence[Attribute] = ()):
        ref = SymbolRefAttr(type_name) if isinstance(type_name, str) else type_name
        super().__init__(ref, ArrayAttr(list(args)))

    @property
    def def_name(self) -> str:
        return self.type_name.root_reference.data

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        parser.parse_punctuation("<")
        ref = SymbolRefAttr(parser.parse_symbol_name())
        args: list[Attribute] = []
        if parser.parse_optional_punctuation(","):
            args = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_type)
        parser.parse_punctuation(">")
        return [ref, ArrayAttr(args)]

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_symbol_name(self.def_name)
        if self.args.data:
            printer.print_string(", [")
            printer.print_list(self.args.data, printer.print_attribute)
            printer.print_string("]")
        printer.print_string(">")


# ---- types with type variables: substitution and unification ---------------------------------


def substitute(t: Attribute, subst: dict[str, Attribute]) -> Attribute:
    """``t`` with each ``!adt.var`` bound in ``subst`` replaced."""
    if isinstance(t, TypeVarType):
        return subst.get(t.var_name.data, t)
    if isinstance(t, ValueType):
        return ValueType(t.type_name, [substitute(a, subst) for a in t.args.data])
    if isinstance(t, FunctionType):  # a function value's type (a closure)
        return FunctionType.from_lists(
            [substitute(a, subst) for a in t.inputs.data], [substitute(r, subst) for r in t.outputs.data]
        )
    from xrelay.dialects.ref import RefType  # the ref dialect knows nothing of type variables

    if isinstance(t, RefType):
        return RefType(substitute(t.value, subst))
    return t


def unify(pattern: Attribute, actual: Attribute, subst: dict[str, Attribute]) -> bool:
    """Bind the ``!adt.var``s of ``pattern`` so it becomes ``actual`` (extending ``subst``);
    False when they cannot agree. A variable in ``actual`` matches only itself."""
    if isinstance(pattern, TypeVarType):
        name = pattern.var_name.data
        bound = subst.get(name)
        if bound is None:
            subst[name] = actual
            return True
        return bound == actual
    if isinstance(pattern, ValueType):
        return (
            isinstance(actual, ValueType)
            and actual.type_name == pattern.type_name
            and len(actual.args.data) == len(pattern.args.data)
            and all(unify(p, a, subst) for p, a in zip(pattern.args.data, actual.args.data))
        )
    if isinstance(pattern, FunctionType):  # a function value's type (a closure)
        return (
            isinstance(actual, FunctionType)
            and len(pattern.inputs.data) == len(actual.inputs.data)
            and len(pattern.outputs.data) == len(actual.outputs.data)
            and all(
                unify(p, a, subst)
                for p, a in zip((*pattern.inputs.data, *pattern.outputs.data), (*actual.inputs.data, *actual.outputs.data))
            )
        )
    from xrelay.dialects.ref import RefType

    if isinstance(pattern, RefType):
        return isinstance(actual, RefType) and unify(pattern.value, actual.value, subst)
    return pattern == actual


def type_vars(t: Attribute) -> Iterator[str]:
    """The names of the ``!adt.var``s in ``t``, in order of appearance (repeats included)."""
    if isinstance(t, TypeVarType):
        yield t.var_name.data
    elif isinstance(t, ValueType):
        for a in t.args.data:
            yield from type_vars(a)
    elif isinstance(t, FunctionType):
        for a in (*t.inputs.data, *t.outputs.data):
            yield from type_vars(a)
    else:
        inner = getattr(t, "value", None)
        if isinstance(inner, Attribute) and t.name == "ref.ref":
            yield from type_vars(inner)


# ---- patterns ---------------------------------------------------------------------------------
# A pattern is a tree of attributes: ``_`` (wildcard) and ``var`` (binds the next block argument)
# are StringAttrs, a constructor pattern an ArrayAttr headed by the constructor's SymbolRefAttr,
# a tuple pattern an ArrayAttr of patterns (headed by anything else).

WILDCARD = "_"
VARIABLE = "var"


def _parse_pattern(parser: AttrParser) -> Attribute:
    if parser.parse_optional_punctuation("("):
        if parser.parse_optional_punctuation(")"):
            return ArrayAttr([])
        items = [_parse_pattern(parser)]
        while parser.parse_optional_punctuation(","):
            items.append(_parse_pattern(parser))
        parser.parse_punctuation(")")
        return ArrayAttr(items)
    sym = parser.parse_optional_symbol_name()
    if sym is not None:
        fields: list[Attribute] = []
        if parser.parse_optional_punctuation("("):
            fields = [_parse_pattern(parser)]
            while parser.parse_optional_punctuation(","):
                fields.append(_parse_pattern(parser))
            parser.parse_punctuation(")")
        return ArrayAttr([SymbolRefAttr(sym), *fields])
    word = parser.parse_optional_identifier()
    if word in (WILDCARD, VARIABLE):
        return StringAttr(word)
    parser.raise_error("expected a pattern: '_', 'var', '@Constructor(...)' or '(...)'")


def _print_pattern(printer: Printer, p: Attribute) -> None:
    if isinstance(p, StringAttr):
        printer.print_string(p.data)
        return
    items = cast(ArrayAttr[Attribute], p).data
    if items and isinstance(items[0], SymbolRefAttr):
        printer.print_symbol_name(items[0].root_reference.data)
        if len(items) > 1:
            printer.print_string("(")
            printer.print_list(items[1:], lambda q: _print_pattern(printer, q))
            printer.print_string(")")
        return
    printer.print_string("(")
    printer.print_list(items, lambda q: _print_pattern(printer, q))
    printer.print_string(")")


@irdl_attr_definition
class PatternAttr(ParametrizedAttribute):
    """One clause's pattern: ``#adt.pattern<@Cons(var, @Nil)>``, ``#adt.pattern<_>``,
    ``#adt.pattern<(var, _)>`` (Relay's wildcard, variable, constructor and tuple patterns)."""

    name = "adt.pattern"
    tree: Attribute = param_def(Attribute)

    def __init__(self, tree: Attribute):
        super().__init__(tree)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        parser.parse_punctuation("<")
        tree = _parse_pattern(parser)
        parser.parse_punctuation(">")
        return [tree]

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        _print_pattern(printer, self.tree)
        printer.print_string(">")


def pattern_vars(p: Attribute, t: Attribute, defs: dict[str, TypeDefOp], where: str) -> list[Attribute]:
    """The types of the variables pattern ``p`` binds when it matches a value of type ``t``
    (left to right); raises VerifyException when the pattern does not fit the type."""
    if isinstance(p, PatternAttr):
        p = p.tree
    if isinstance(p, StringAttr):
        if p.data == VARIABLE:
            return [t]
        if p.data == WILDCARD:
            return []
        raise VerifyException(f"{where}: unknown pattern {p.data!r}")
    items = cast(ArrayAttr[Attribute], p).data
    if items and isinstance(items[0], SymbolRefAttr):
        ctor = items[0].root_reference.data
        if not isinstance(t, ValueType):
            raise VerifyException(f"{where}: constructor pattern {ctor} on a value of type {t}")
        tdef = defs.get(t.def_name)
        if tdef is None:
            raise VerifyException(f"{where}: no type definition @{t.def_name}")
        fields = tdef.instantiated_fields(ctor, t)
        if fields is None:
            raise VerifyException(f"{where}: @{t.def_name} has no constructor {ctor}")
        if len(fields) != len(items) - 1:
            raise VerifyException(
                f"{where}: constructor {ctor} has {len(fields)} fields, the pattern {len(items) - 1}"
            )
        return [v for sub, ft in zip(items[1:], fields) for v in pattern_vars(sub, ft, defs, where)]
    raise VerifyException(f"{where}: tuple patterns need a tuple value; xrelay's ADT values are never tuples")


def _type_defs(op: Operation) -> dict[str, TypeDefOp]:
    top = op
    while top.parent_op() is not None:
        top = top.parent_op()  # type: ignore[assignment]
    defs: dict[str, TypeDefOp] = {}
    for region in top.regions:
        for block in region.blocks:
            for o in block.ops:
                if isinstance(o, TypeDefOp):
                    defs[o.sym_name.data] = o
    return defs


# ---- ops --------------------------------------------------------------------------------------


@irdl_op_definition
class TypeDefOp(IRDLOperation):
    """A type definition (Relay's ``type List[A] { Cons(A, List[A]), Nil }``): its type
    parameters and its constructors, each with its field types.

    ```mlir
    adt.type_def @List<A> {Cons(!adt.var<"A">, !adt.value<@List, [!adt.var<"A">]>), Nil}
    adt.type_def @nat {zero, succ(!adt.value<@nat>)}
    ```
    """

    name = "adt.type_def"
    sym_name = prop_def(SymbolNameConstraint())
    type_params = prop_def(ArrayAttr[StringAttr])
    constructor_names = prop_def(ArrayAttr[StringAttr])
    constructor_fields = prop_def(ArrayAttr[ArrayAttr[Attribute]])
    traits = traits_def(SymbolOpInterface())

    def __init__(self, name: str, params: Sequence[str], constructors: Sequence[tuple[str, Sequence[Attribute]]]):
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "type_params": ArrayAttr([StringAttr(p) for p in params]),
                "constructor_names": ArrayAttr([StringAttr(c) for c, _ in constructors]),
                "constructor_fields": ArrayAttr([ArrayAttr(list(f)) for _, f in constructors]),
            }
        )

    @property
    def params(self) -> list[str]:
        return [p.data for p in self.type_params.data]

    @property
    def constructors(self) -> list[tuple[str, list[Attribute]]]:
        return [
            (n.data, list(f.data))
            for n, f in zip(self.constructor_names.data, self.constructor_fields.data)
        ]

    def instantiated_fields(self, ctor: str, t: ValueType) -> list[Attribute] | None:
        """The field types of constructor ``ctor`` in a value of type ``t`` (None: no such
        constructor)."""
        subst = {p: a for p, a in zip(self.params, t.args.data)}
        for name, fields in self.constructors:
            if name == ctor:
                return [substitute(f, subst) for f in fields]
        return None

    def verify_(self) -> None:
        names = [c for c, _ in self.constructors]
        if len(set(names)) != len(names):
            raise VerifyException(f"@{self.sym_name.data}: a constructor name appears twice")
        if len(self.constructor_names.data) != len(self.constructor_fields.data):
            raise VerifyException(f"@{self.sym_name.data}: constructor names and fields differ in number")
        params = set(self.params)
        for name, fields in self.constructors:
            for f in fields:
                free = set(type_vars(f)) - params
                if free:
                    raise VerifyException(
                        f"@{self.sym_name.data}: constructor {name} uses type variable "
                        f"{sorted(free)[0]}, which is not a parameter of the type"
                    )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        if self.params:
            printer.print_string("<")
            printer.print_list(self.params, printer.print_string)
            printer.print_string(">")
        printer.print_string(" {")

        def ctor(c: tuple[str, list[Attribute]]) -> None:
            printer.print_string(c[0])
            if c[1]:
                printer.print_string("(")
                printer.print_list(c[1], printer.print_attribute)
                printer.print_string(")")

        printer.print_list(self.constructors, ctor)
        printer.print_string("}")

    @classmethod
    def parse(cls, parser: Parser) -> TypeDefOp:
        name = parser.parse_symbol_name().data
        params: list[str] = []
        if parser.parse_optional_punctuation("<"):
            params = [parser.parse_identifier()]
            while parser.parse_optional_punctuation(","):
                params.append(parser.parse_identifier())
            parser.parse_punctuation(">")

        def ctor() -> tuple[str, list[Attribute]]:
            cname = parser.parse_identifier()
            fields: list[Attribute] = []
            if parser.parse_optional_punctuation("("):
                fields = [parser.parse_type()]
                while parser.parse_optional_punctuation(","):
                    fields.append(parser.parse_type())
                parser.parse_punctuation(")")
            return cname, fields

        ctors = parser.parse_comma_separated_list(parser.Delimiter.BRACES, ctor)
        return cls(name, params, ctors)


def _lookup_def(op: Operation, name: str) -> TypeDefOp:
    found = SymbolTable.lookup_symbol(op, name)
    if not isinstance(found, TypeDefOp):
        raise VerifyException(f"{op.name}: no type definition @{name}")
    return found


@irdl_op_definition
class ConstructOp(IRDLOperation):
    """A value built by a constructor (Relay's ``Cons(%h, %t)``, ``Nil``): the constructor is
    ``@Type::@Constructor``; the result type gives the type arguments (``Nil`` has no field
    to tell them).

    ```mlir
    %n = adt.construct @List::@Nil() : () -> !adt.value<@List, [tensor<i32>]>
    %l = adt.construct @List::@Cons(%h, %n) : (tensor<i32>, !adt.value<@List, [tensor<i32>]>) -> !adt.value<@List, [tensor<i32>]>
    ```
    """

    name = "adt.construct"
    constructor = prop_def(SymbolRefAttr)
    fields = var_operand_def()
    result = result_def(ValueType)
    traits = traits_def(Pure())

    def __init__(self, type_name: str, ctor: str, fields: Sequence[SSAValue], result_type: ValueType):
        super().__init__(
            operands=[list(fields)],
            result_types=[result_type],
            properties={"constructor": SymbolRefAttr(type_name, [ctor])},
        )

    @property
    def type_name(self) -> str:
        return self.constructor.root_reference.data

    @property
    def ctor_name(self) -> str:
        return self.constructor.nested_references.data[0].data

    def verify_(self) -> None:
        if len(self.constructor.nested_references.data) != 1:
            raise VerifyException(f"{self.name}: the constructor is @Type::@Constructor, got {self.constructor}")
        t = self.result.type
        assert isinstance(t, ValueType)
        if t.def_name != self.type_name:
            raise VerifyException(f"{self.name}: a {self.type_name} constructor cannot build a {t}")
        tdef = _lookup_def(self, self.type_name)
        if len(t.args.data) != len(tdef.params):
            raise VerifyException(
                f"{self.name}: @{self.type_name} takes {len(tdef.params)} type arguments, {t} gives {len(t.args.data)}"
            )
        fields = tdef.instantiated_fields(self.ctor_name, t)
        if fields is None:
            raise VerifyException(f"{self.name}: @{self.type_name} has no constructor {self.ctor_name}")
        got = [f.type for f in self.fields]
        if got != fields:
            raise VerifyException(
                f"{self.name}: {self.ctor_name} of {t} takes ({', '.join(map(str, fields))}), "
                f"got ({', '.join(map(str, got))})"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.constructor)
        printer.print_string("(")
        printer.print_list(self.fields, printer.print_operand)
        printer.print_string(") : (")
        printer.print_list([f.type for f in self.fields], printer.print_attribute)
        printer.print_string(") -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ConstructOp:
        ref = parser.parse_attribute()
        if not isinstance(ref, SymbolRefAttr) or len(ref.nested_references.data) != 1:
            parser.raise_error("adt.construct: expected @Type::@Constructor")
        operands = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        parser.parse_punctuation("->")
        result = parser.parse_type()
        if not isinstance(result, ValueType):
            parser.raise_error(f"adt.construct: the result type must be !adt.value<...>, got {result}")
        if len(types) != len(operands):
            parser.raise_error("adt.construct: as many operand types as operands")
        fields = [parser.resolve_operand(o, t) for o, t in zip(operands, types)]
        return cls(ref.root_reference.data, ref.nested_references.data[0].data, fields, result)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The value(s) of one ``adt.match`` clause.

    ```mlir
    adt.yield %y : tensor<i32>
    ```
    """

    name = "adt.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), Pure())

    def verify_(self) -> None:
        if not isinstance(self.parent_op(), MatchOp):
            raise VerifyException(f"{self.name}: only an adt.match clause ends in adt.yield")

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[list(values)])

    def print(self, printer: Printer) -> None:
        if self.values:
            printer.print_string(" ")
            printer.print_list(self.values, printer.print_operand)
            printer.print_string(" : ")
            printer.print_list([v.type for v in self.values], printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser) -> YieldOp:
        unresolved: list[UnresolvedOperand] = []
        first = parser.parse_optional_unresolved_operand()
        if first is None:
            return cls()
        unresolved.append(first)
        while parser.parse_optional_punctuation(","):
            unresolved.append(parser.parse_unresolved_operand())
        parser.parse_punctuation(":")
        types = [parser.parse_type()]
        while parser.parse_optional_punctuation(","):
            types.append(parser.parse_type())
        if len(types) != len(unresolved):
            parser.raise_error("adt.yield: as many types as values")
        return cls(*(parser.resolve_operand(o, t) for o, t in zip(unresolved, types)))


@irdl_op_definition
class MatchOp(IRDLOperation):
    """Relay's ``match``: the first clause whose pattern fits ``data`` runs, its variables bound
    to the region's block arguments; ``partial`` marks Relay's ``match?`` (no completeness
    promise: a value no clause fits is a run-time error either way).

    ```mlir
    %x = adt.match %l : !adt.value<@List, [tensor<i32>]> -> tensor<i32> {
      case @Cons(var, _) {
      ^bb0(%h: tensor<i32>):
        adt.yield %h : tensor<i32>
      }
      case @Nil {
        adt.yield %zero : tensor<i32>
      }
    }
    ```
    """

    name = "adt.match"
    data = operand_def()
    patterns = prop_def(ArrayAttr[PatternAttr])
    partial = opt_prop_def(UnitAttr)
    clauses = var_region_def("single_block")
    res = var_result_def()
    traits = traits_def(RecursiveMemoryEffect(), RecursivelySpeculatable())

    def __init__(
        self,
        data: SSAValue,
        patterns: Sequence[PatternAttr],
        clauses: Sequence[Region],
        result_types: Sequence[Attribute],
        partial: bool = False,
    ):
        props: dict[str, Attribute] = {"patterns": ArrayAttr(list(patterns))}
        if partial:
            props["partial"] = UnitAttr()
        super().__init__(
            operands=[data], result_types=[list(result_types)], regions=[list(clauses)], properties=props
        )

    def verify_(self) -> None:
        pats = self.patterns.data
        if len(pats) != len(self.clauses):
            raise VerifyException(f"{self.name}: {len(pats)} patterns for {len(self.clauses)} clauses")
        if not pats:
            raise VerifyException(f"{self.name}: a match needs at least one clause")
        defs = _type_defs(self)
        want = [r.type for r in self.res]
        for i, (p, region) in enumerate(zip(pats, self.clauses)):
            where = f"{self.name} clause {i}"
            bound = pattern_vars(p, self.data.type, defs, where)
            got = [a.type for a in region.block.args]
            if got != bound:
                raise VerifyException(
                    f"{where}: the pattern binds ({', '.join(map(str, bound))}), the block "
                    f"takes ({', '.join(map(str, got))})"
                )
            last = region.block.last_op
            if not isinstance(last, YieldOp):
                raise VerifyException(f"{where}: the clause must end in adt.yield")
            yielded = [v.type for v in last.values]
            if yielded != want:
                raise VerifyException(
                    f"{where}: yields ({', '.join(map(str, yielded))}), the match has type "
                    f"({', '.join(map(str, want))})"
                )

    def print(self, printer: Printer) -> None:
        printer.print_string("? " if self.partial is not None else " ")
        printer.print_operand(self.data)
        printer.print_string(" : ")
        printer.print_attribute(self.data.type)
        printer.print_string(" -> (")
        printer.print_list([r.type for r in self.res], printer.print_attribute)
        printer.print_string(") {")
        with printer.indented():
            for p, region in zip(self.patterns.data, self.clauses):
                printer.print_string("\n")
                printer.print_string("case ")
                _print_pattern(printer, p.tree)
                printer.print_string(" ")
                printer.print_region(region, print_entry_block_args=bool(region.block.args))
        printer.print_string("\n}")

    @classmethod
    def parse(cls, parser: Parser) -> MatchOp:
        partial = parser.parse_optional_punctuation("?") is not None
        data = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        dtype = parser.parse_type()
        parser.parse_punctuation("->")
        results = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        parser.parse_punctuation("{")
        pats: list[PatternAttr] = []
        regions: list[Region] = []
        while parser.parse_optional_keyword("case") is not None:
            pats.append(PatternAttr(_parse_pattern(parser)))
            regions.append(parser.parse_region())
        parser.parse_punctuation("}")
        return cls(parser.resolve_operand(data, dtype), pats, regions, results, partial)


def _instantiates(want: Sequence[Attribute], got: Sequence[Attribute]) -> bool:
    """Whether ``got`` instantiates ``want``'s ``!adt.var``s one way for all."""
    subst: dict[str, Attribute] = {}
    return len(want) == len(got) and all(unify(w, g, subst) for w, g in zip(want, got))


def _print_symbol_call(printer: Printer, callee: SymbolRefAttr, operands: Sequence[SSAValue]) -> None:
    """`` @f(%a, %b) : (A, B) -> `` (what follows is the op's own)."""
    printer.print_string(" ")
    printer.print_attribute(callee)
    printer.print_string("(")
    printer.print_list(operands, printer.print_operand)
    printer.print_string(") : (")
    printer.print_list([o.type for o in operands], printer.print_attribute)
    printer.print_string(") -> ")


def _parse_symbol_call(parser: Parser, op_name: str) -> tuple[str, list[SSAValue]]:
    """``@f(%a, %b) : (A, B) ->`` (``_print_symbol_call``'s text): the callee and the resolved
    operands; what follows is the op's own."""
    callee = parser.parse_symbol_name().data
    operands = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)
    parser.parse_punctuation(":")
    types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
    parser.parse_punctuation("->")
    if len(types) != len(operands):
        parser.raise_error(f"{op_name}: as many operand types as operands")
    return callee, [parser.resolve_operand(o, t) for o, t in zip(operands, types)]


@irdl_op_definition
class AdtCallOp(IRDLOperation):
    """A call of a function with type parameters: the operand and result types instantiate
    the callee's ``!adt.var``s, one way for all (``func.call`` needs them equal).

    ```mlir
    %h = adt.call @hd(%l) : (!adt.value<@List, [tensor<i32>]>) -> tensor<i32>
    ```
    """

    name = "adt.call"
    callee = prop_def(SymbolRefAttr)
    arguments = var_operand_def()
    res = var_result_def()

    def __init__(self, callee: str, args: Sequence[SSAValue], result_types: Sequence[Attribute]):
        super().__init__(
            operands=[list(args)], result_types=[list(result_types)], properties={"callee": SymbolRefAttr(callee)}
        )

    def verify_(self) -> None:
        fop = SymbolTable.lookup_symbol(self, self.callee)
        if fop is None or fop.name != "func.func":
            raise VerifyException(f"{self.name}: no function {self.callee}")
        ft = fop.function_type  # type: ignore[attr-defined]
        want = [*ft.inputs.data, *ft.outputs.data]
        got = [*(a.type for a in self.arguments), *(r.type for r in self.res)]
        if not _instantiates(want, got):
            raise VerifyException(
                f"{self.name}: types ({', '.join(map(str, got))}) do not instantiate "
                f"{self.callee}'s ({', '.join(map(str, want))})"
            )

    def print(self, printer: Printer) -> None:
        _print_symbol_call(printer, self.callee, self.arguments)
        if len(self.res) == 1:
            printer.print_attribute(self.res[0].type)
        else:
            printer.print_string("(")
            printer.print_list([r.type for r in self.res], printer.print_attribute)
            printer.print_string(")")

    @classmethod
    def parse(cls, parser: Parser) -> AdtCallOp:
        callee, operands = _parse_symbol_call(parser, "adt.call")
        if parser.parse_optional_punctuation("(") is not None:
            results: list[Attribute] = []
            if parser.parse_optional_punctuation(")") is None:
                results = [parser.parse_type()]
                while parser.parse_optional_punctuation(","):
                    results.append(parser.parse_type())
                parser.parse_punctuation(")")
        else:
            results = [parser.parse_type()]
        return cls(callee, operands, results)


def instantiate(fop: Operation, arg_types: Sequence[Attribute]) -> list[Attribute] | None:
    """The result types of calling the function ``fop`` (whose signature may use ``!adt.var``s)
    with ``arg_types``; None when they do not fit or leave a result variable unbound."""
    ft = fop.function_type  # type: ignore[attr-defined]
    subst: dict[str, Attribute] = {}
    if len(ft.inputs.data) != len(arg_types):
        return None
    if not all(unify(w, g, subst) for w, g in zip(ft.inputs.data, arg_types)):
        return None
    if any(v not in subst for t in ft.outputs.data for v in type_vars(t)):
        return None  # a result type the arguments do not tell
    return [substitute(t, subst) for t in ft.outputs.data]


def is_polymorphic(fop: Operation) -> bool:
    """Whether a ``func.func``'s signature has type variables (it is called with ``adt.call``)."""
    ft = fop.function_type  # type: ignore[attr-defined]
    return any(True for t in (*ft.inputs.data, *ft.outputs.data) for _ in type_vars(t))



@irdl_op_definition
class ClosureOp(IRDLOperation):
    """A function as a value (Relay's ``GlobalVar`` or function literal used as a value): the
    function ``@callee`` with the values it captures, which it takes as its last parameters.
    The result's type is the signature without them, instantiating its ``!adt.var``s (a
    polymorphic global passed to ``@map`` takes the types of that use).

    ```mlir
    %f = adt.closure @add_n(%n) : (tensor<i32>) -> ((tensor<i32>) -> tensor<i32>)
    %g = adt.closure @double() : () -> ((tensor<f32>) -> tensor<f32>)
    ```
    """

    name = "adt.closure"
    callee = prop_def(SymbolRefAttr)
    captured = var_operand_def()
    result = result_def(FunctionType)
    traits = traits_def(Pure())

    def __init__(self, callee: str, captured: Sequence[SSAValue], result_type: FunctionType):
        super().__init__(
            operands=[list(captured)], result_types=[result_type], properties={"callee": SymbolRefAttr(callee)}
        )

    def verify_(self) -> None:
        fop = SymbolTable.lookup_symbol(self, self.callee)
        if fop is None or fop.name != "func.func":
            raise VerifyException(f"{self.name}: no function {self.callee}")
        ft = fop.function_type  # type: ignore[attr-defined]
        ins = list(ft.inputs.data)
        n = len(self.captured)
        if n > len(ins):
            raise VerifyException(f"{self.name}: {self.callee} takes {len(ins)} parameters, {n} are captured")
        t = self.result.type
        want = [*ins[len(ins) - n :], *ins[: len(ins) - n], *ft.outputs.data]
        got = [*(c.type for c in self.captured), *t.inputs.data, *t.outputs.data]
        if not _instantiates(want, got):
            raise VerifyException(
                f"{self.name}: {t} with captures ({', '.join(str(c.type) for c in self.captured)}) "
                f"does not instantiate {self.callee}'s signature {ft}"
            )

    def print(self, printer: Printer) -> None:
        _print_symbol_call(printer, self.callee, self.captured)
        printer.print_string("(")
        printer.print_attribute(self.result.type)
        printer.print_string(")")

    @classmethod
    def parse(cls, parser: Parser) -> ClosureOp:
        callee, operands = _parse_symbol_call(parser, "adt.closure")
        parser.parse_punctuation("(")
        result = parser.parse_type()
        parser.parse_punctuation(")")
        if not isinstance(result, FunctionType):
            parser.raise_error(f"adt.closure: the result type must be a function type, got {result}")
        return cls(callee, operands, result)


@irdl_op_definition
class ApplyOp(IRDLOperation):
    """A call of a function value (Relay's call of a variable, a parameter or any expression of
    function type): the arguments' types are the function type's inputs, the results its
    outputs. The callee is known only when it runs.

    ```mlir
    %y = adt.apply %f(%x) : ((tensor<i32>) -> tensor<i32>)
    ```
    """

    name = "adt.apply"
    fn = operand_def(FunctionType)
    arguments = var_operand_def()
    res = var_result_def()

    def __init__(self, fn: SSAValue, args: Sequence[SSAValue]):
        ft = fn.type
        assert isinstance(ft, FunctionType)
        super().__init__(operands=[fn, list(args)], result_types=[list(ft.outputs.data)])

    def verify_(self) -> None:
        ft = self.fn.type
        assert isinstance(ft, FunctionType)
        got = [a.type for a in self.arguments]
        if got != list(ft.inputs.data):
            raise VerifyException(
                f"{self.name}: a function of type {ft} applied to ({', '.join(map(str, got))})"
            )
        if [r.type for r in self.res] != list(ft.outputs.data):
            raise VerifyException(f"{self.name}: results ({', '.join(str(r.type) for r in self.res)}) are not {ft}'s")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.fn)
        printer.print_string("(")
        printer.print_list(self.arguments, printer.print_operand)
        printer.print_string(") : (")
        printer.print_attribute(self.fn.type)
        printer.print_string(")")

    @classmethod
    def parse(cls, parser: Parser) -> ApplyOp:
        fn = parser.parse_unresolved_operand()
        operands = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)
        parser.parse_punctuation(":")
        parser.parse_punctuation("(")
        ft = parser.parse_type()
        parser.parse_punctuation(")")
        if not isinstance(ft, FunctionType):
            parser.raise_error(f"adt.apply: expected a function type, got {ft}")
        if len(ft.inputs.data) != len(operands):
            parser.raise_error(f"adt.apply: {ft} takes {len(ft.inputs.data)} arguments, {len(operands)} given")
        args = [parser.resolve_operand(o, t) for o, t in zip(operands, ft.inputs.data)]
        return cls(parser.resolve_operand(fn, ft), args)


ADT_OPS = (TypeDefOp, ConstructOp, MatchOp, YieldOp, AdtCallOp, ClosureOp, ApplyOp)


def adt_feature(op: Operation) -> str:
    """What an ``adt`` op is to a user, for the passes that refuse it."""
    if isinstance(op, ClosureOp | ApplyOp):
        return "functions as values (closures)"
    return "Relay's algebraic data types"

Adt = Dialect("adt", list(ADT_OPS), [TypeVarType, ValueType, PatternAttr])
