"""The ref dialect: Relay's mutable references (``RefCreate``, ``RefRead``, ``RefWrite``).

A reference is a mutable cell holding one value; Relay writes ``ref(%v)``, ``ref_read(%r)`` and
``ref_write(%r, %v)`` and types a reference ``ref(T)``. References are not tensors, and every
relay pass, the memory planner and the C target rely on relay values being tensors, so they are
a dialect of their own (docs/design.md, decision 9):

    %r = ref.create %v : tensor<i32>
    %x = ref.read %r : !ref.ref<tensor<i32>>
    ref.write %r, %x : !ref.ref<tensor<i32>>

Every op has a memory effect (allocation, read, write) and none is ``Pure``, so xDSL's dce and
CSE, and fold-constant, keep them and their order. ``ref.write`` has no result: Relay's is the
empty tuple ``()``, which xrelay's flattened tuples make zero values (decision 3). The reference
interpreter runs them (a reference is a mutable box); fuse-ops leaves them between fused
functions, and lower-to-memory (so ``xrelay.build`` and the C target) refuses them naming the op.
"""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    param_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import MemoryAllocEffect, MemoryReadEffect, MemoryWriteEffect
from xdsl.utils.exceptions import VerifyException

__all__ = ["Ref", "RefCreateOp", "RefReadOp", "RefType", "RefWriteOp", "impure_functions"]


@irdl_attr_definition
class RefType(ParametrizedAttribute, TypeAttribute):
    """A mutable reference to a value of type ``value``: ``!ref.ref<tensor<i32>>`` (Relay's
    ``ref(int32)``)."""

    name = "ref.ref"
    value: Attribute = param_def(Attribute)

    def __init__(self, value: Attribute):
        super().__init__(value)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        parser.parse_punctuation("<")
        value = parser.parse_type()
        parser.parse_punctuation(">")
        return [value]

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_attribute(self.value)
        printer.print_string(">")


def _ref_operand(op: Operation, ref: SSAValue) -> RefType:
    if not isinstance(ref.type, RefType):
        raise VerifyException(f"{op.name}: the reference operand has type {ref.type}, not !ref.ref<...>")
    return ref.type


@irdl_op_definition
class RefCreateOp(IRDLOperation):
    """A new reference holding ``value`` (Relay's ``ref(%v)``).

    ```mlir
    %r = ref.create %v : tensor<i32>
    ```
    """

    name = "ref.create"
    value = operand_def()
    result = result_def(RefType)
    traits = traits_def(MemoryAllocEffect())

    def __init__(self, value: SSAValue):
        super().__init__(operands=[value], result_types=[RefType(value.type)])

    def verify_(self) -> None:
        if self.result.type != RefType(self.value.type):
            raise VerifyException(
                f"{self.name}: result {self.result.type} does not hold the value's type {self.value.type}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.value)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)

    @classmethod
    def parse(cls, parser: Parser) -> RefCreateOp:
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        return cls(parser.resolve_operand(unresolved, parser.parse_type()))


@irdl_op_definition
class RefReadOp(IRDLOperation):
    """The value a reference holds now (Relay's ``ref_read(%r)``).

    ```mlir
    %x = ref.read %r : !ref.ref<tensor<i32>>
    ```
    """

    name = "ref.read"
    ref = operand_def(RefType)
    result = result_def()
    traits = traits_def(MemoryReadEffect())

    def __init__(self, ref: SSAValue):
        super().__init__(operands=[ref], result_types=[_ref_operand(self, ref).value])

    def verify_(self) -> None:
        if self.result.type != _ref_operand(self, self.ref).value:
            raise VerifyException(
                f"{self.name}: result {self.result.type} is not the type {self.ref.type} holds"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.ref)
        printer.print_string(" : ")
        printer.print_attribute(self.ref.type)

    @classmethod
    def parse(cls, parser: Parser) -> RefReadOp:
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        ty = parser.parse_type()
        if not isinstance(ty, RefType):
            parser.raise_error(f"ref.read: expected a !ref.ref<...> type, got {ty}")
        return cls(parser.resolve_operand(unresolved, ty))


@irdl_op_definition
class RefWriteOp(IRDLOperation):
    """Store ``value`` in a reference (Relay's ``ref_write(%r, %v)``, whose value is ``()``).

    ```mlir
    ref.write %r, %v : !ref.ref<tensor<i32>>
    ```
    """

    name = "ref.write"
    ref = operand_def(RefType)
    value = operand_def()
    traits = traits_def(MemoryWriteEffect())

    def __init__(self, ref: SSAValue, value: SSAValue):
        super().__init__(operands=[ref, value])

    def verify_(self) -> None:
        held = _ref_operand(self, self.ref).value
        if self.value.type != held:
            raise VerifyException(
                f"{self.name}: writing a {self.value.type} into a reference of {held}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.ref)
        printer.print_string(", ")
        printer.print_operand(self.value)
        printer.print_string(" : ")
        printer.print_attribute(self.ref.type)

    @classmethod
    def parse(cls, parser: Parser) -> RefWriteOp:
        ref = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        ty = parser.parse_type()
        if not isinstance(ty, RefType):
            parser.raise_error(f"ref.write: expected a !ref.ref<...> type, got {ty}")
        return cls(parser.resolve_operand(ref, ty), parser.resolve_operand(value, ty.value))


REF_OPS = (RefCreateOp, RefReadOp, RefWriteOp)

Ref = Dialect("ref", list(REF_OPS), [RefType])


def impure_functions(funcs: Iterable[Operation]) -> set[str]:
    """The names of the ``func.func``s in ``funcs`` that use references or stateful relay ops
    (``STATEFUL``: TVM's ``TOpIsStateful``, ``memory.kill``, ``nn.dropout``), directly or
    through the functions they call: the impure ones (Relay's purity)."""
    calls: dict[str, set[str]] = {}
    impure: set[str] = set()
    for fop in funcs:
        name = fop.sym_name.data  # type: ignore[attr-defined]
        calls[name] = set()
        for op in fop.walk():
            if isinstance(op, REF_OPS) or getattr(op, "STATEFUL", False):
                impure.add(name)
            elif op.name == "func.call":
                calls[name].add(op.callee.root_reference.data)  # type: ignore[attr-defined]
    changed = bool(impure)
    while changed:
        changed = False
        for name, callees in calls.items():
            if name not in impure and callees & impure:
                impure.add(name)
                changed = True
    return impure
