"""Tensors of strings: the element type ``!relay.string`` and ONNX's string operators
(docs/design.md, decision 11).

A tensor of strings is a builtin tensor whose element type is ``!relay.string``
(``tensor<3x!relay.string>``): shapes, dynamic dimensions and the verifier's shape checks are the
ones every tensor has. ``!relay.string`` is not a Relay dtype (``dtype_of`` refuses it), so the
relay ops, their type relations and every pass that sizes a buffer refuse a string tensor by
its type; the string operators are ops of their own:

```mlir
%k = relay.string.constant {value = ["a", "b"]} : tensor<2x!relay.string>
%e = relay.string.equal %a, %b : (tensor<2x!relay.string>, tensor<!relay.string>) -> tensor<2xi1>
%c = relay.string.concat %a, %b : (tensor<2x!relay.string>, tensor<!relay.string>) -> tensor<2x!relay.string>
%m = relay.string.regex_full_match %a {pattern = "[a-z]+"} : (tensor<2x!relay.string>) -> tensor<2xi1>
%s, %n = relay.string.split %a {delimiter = " ", maxsplit = -1 : i64} : (tensor<2x!relay.string>) -> (tensor<2x?x!relay.string>, tensor<2xi64>)
%y = relay.string.normalize %a {case_change_action = "LOWER", is_case_sensitive = false, stopwords = ["a"]} : (tensor<2x!relay.string>) -> tensor<?x!relay.string>
```

Run time values are numpy arrays of Python ``str`` objects (dtype ``object``). Only the reference
interpreter runs these ops: a string has no fixed size, so the arena's planner cannot place one;
fuse-ops and lower-to-memory (so ``xrelay.build``) refuse them by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    BoolAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    attr_def,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

__all__ = [
    "STRING_OPS",
    "StringConcatOp",
    "StringConstantOp",
    "StringEqualOp",
    "StringNormalizeOp",
    "StringRegexFullMatchOp",
    "StringSplitOp",
    "StringType",
    "broadcast_shape",
    "is_string_tensor",
    "string_tensor",
]


@irdl_attr_definition
class StringType(ParametrizedAttribute, TypeAttribute):
    """The element type of a tensor of strings (ONNX's ``STRING``): ``!relay.string``."""

    name = "relay.string"


def string_tensor(shape: Sequence[int | None]) -> TensorType:
    """``tensor<shape x !relay.string>`` (None for a dynamic dimension)."""
    return TensorType(StringType(), [DYNAMIC_INDEX if d is None else d for d in shape])


def is_string_tensor(t: Attribute) -> bool:
    return isinstance(t, TensorType) and isinstance(t.element_type, StringType)


def broadcast_shape(a: Sequence[int], b: Sequence[int]) -> list[int] | None:
    """numpy's broadcast of two shapes (``DYNAMIC_INDEX`` for dynamic dims); None if they clash."""
    out = []
    for k in range(max(len(a), len(b))):
        x = a[len(a) - 1 - k] if k < len(a) else 1
        y = b[len(b) - 1 - k] if k < len(b) else 1
        if x == 1 or x == y:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif DYNAMIC_INDEX in (x, y):
            out.append(max(x, y))
        else:
            return None
    return out[::-1]


def _check_strings(op: IRDLOperation, *values: Attribute) -> None:
    for t in values:
        if not is_string_tensor(t):
            raise VerifyException(f"{op.name}: expected a tensor of !relay.string, got {t}")


def _check_result(op: IRDLOperation, got: Attribute, elem: Attribute, shape: Sequence[int]) -> None:
    want = TensorType(elem, list(shape))
    if got != want:
        raise VerifyException(f"{op.name}: its result is {got}, expected {want}")


class _Binary(IRDLOperation):
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    res = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"
    RESULT_ELEMENT: ClassVar[Attribute | None] = None

    def __init__(self, lhs, rhs):
        shape = broadcast_shape(lhs.type.get_shape(), rhs.type.get_shape())
        if shape is None:
            raise VerifyException(f"{self.name}: shapes {lhs.type} and {rhs.type} do not broadcast")
        elem = StringType() if self.RESULT_ELEMENT is None else self.RESULT_ELEMENT
        super().__init__(operands=[lhs, rhs], result_types=[TensorType(elem, shape)])

    def verify_(self) -> None:
        _check_strings(self, self.lhs.type, self.rhs.type)
        shape = broadcast_shape(self.lhs.type.get_shape(), self.rhs.type.get_shape())
        if shape is None:
            raise VerifyException(f"{self.name}: shapes {self.lhs.type} and {self.rhs.type} do not broadcast")
        _check_result(self, self.res.type, StringType() if self.RESULT_ELEMENT is None else self.RESULT_ELEMENT, shape)


@irdl_op_definition
class StringEqualOp(_Binary):
    """Elementwise equality of two string tensors, broadcast as numpy does (ONNX's ``Equal``).

    ```mlir
    %e = relay.string.equal %a, %b : (tensor<2x!relay.string>, tensor<!relay.string>) -> tensor<2xi1>
    ```
    """

    name = "relay.string.equal"
    RESULT_ELEMENT: ClassVar[Attribute | None] = i1


@irdl_op_definition
class StringConcatOp(_Binary):
    """Elementwise concatenation, broadcast (ONNX's ``StringConcat``).

    ```mlir
    %c = relay.string.concat %a, %b : (tensor<2x!relay.string>, tensor<2x!relay.string>) -> tensor<2x!relay.string>
    ```
    """

    name = "relay.string.concat"
    RESULT_ELEMENT: ClassVar[Attribute | None] = None


class _Unary(IRDLOperation):
    x = operand_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"


@irdl_op_definition
class StringRegexFullMatchOp(_Unary):
    """Whether each string matches ``pattern`` entirely (ONNX's ``RegexFullMatch``; Python's
    ``re.fullmatch``, which agrees with RE2 on the syntax both have).

    ```mlir
    %m = relay.string.regex_full_match %a {pattern = "[a-z]+"} : (tensor<2x!relay.string>) -> tensor<2xi1>
    ```
    """

    name = "relay.string.regex_full_match"
    res = result_def(TensorType)
    pattern = attr_def(StringAttr)

    def __init__(self, x, pattern: str):
        super().__init__(
            operands=[x], result_types=[TensorType(i1, x.type.get_shape())], attributes={"pattern": StringAttr(pattern)}
        )

    def verify_(self) -> None:
        _check_strings(self, self.x.type)
        _check_result(self, self.res.type, i1, self.x.type.get_shape())


@irdl_op_definition
class StringSplitOp(_Unary):
    """Each string split at ``delimiter`` (runs of whitespace without one), at most ``maxsplit``
    times: the pieces padded with ``""`` to the longest split (a last dimension known at run
    time) and the number of pieces of each (ONNX's ``StringSplit``).

    ```mlir
    %s, %n = relay.string.split %a {delimiter = "-", maxsplit = 1 : i64} : (tensor<2x!relay.string>) -> (tensor<2x?x!relay.string>, tensor<2xi64>)
    ```
    """

    name = "relay.string.split"
    pieces = result_def(TensorType)
    counts = result_def(TensorType)
    delimiter = opt_attr_def(StringAttr)
    maxsplit = opt_attr_def(IntegerAttr)

    def __init__(self, x, delimiter: str | None, maxsplit: int | None):
        attrs: dict[str, Attribute] = {}
        if delimiter is not None:
            attrs["delimiter"] = StringAttr(delimiter)
        if maxsplit is not None:
            attrs["maxsplit"] = IntegerAttr(maxsplit, i64)
        shape = list(x.type.get_shape())
        super().__init__(
            operands=[x],
            result_types=[TensorType(StringType(), [*shape, DYNAMIC_INDEX]), TensorType(i64, shape)],
            attributes=attrs,
        )

    def verify_(self) -> None:
        _check_strings(self, self.x.type)
        shape = list(self.x.type.get_shape())
        _check_result(self, self.pieces.type, StringType(), [*shape, DYNAMIC_INDEX])
        _check_result(self, self.counts.type, i64, shape)


@irdl_op_definition
class StringNormalizeOp(_Unary):
    """ONNX's ``StringNormalizer`` on a ``[C]`` or ``[1, C]`` tensor: the strings in
    ``stopwords`` removed (compared ignoring case unless ``is_case_sensitive``), then case
    changed (``LOWER``, ``UPPER`` or ``NONE``); an input left empty gives one ``""``. The kept
    count is known at run time only.

    ```mlir
    %y = relay.string.normalize %a {case_change_action = "UPPER", is_case_sensitive = true, stopwords = ["monday"]} : (tensor<4x!relay.string>) -> tensor<?x!relay.string>
    ```
    """

    name = "relay.string.normalize"
    res = result_def(TensorType)
    case_change_action = attr_def(StringAttr)
    is_case_sensitive = attr_def(BoolAttr)
    stopwords = attr_def(ArrayAttr[StringAttr])

    ACTIONS: ClassVar[tuple[str, ...]] = ("LOWER", "UPPER", "NONE")

    def __init__(self, x, case_change_action: str, is_case_sensitive: bool, stopwords: Sequence[str]):
        shape = x.type.get_shape()
        out = [DYNAMIC_INDEX] if len(shape) == 1 else [1, DYNAMIC_INDEX]
        super().__init__(
            operands=[x],
            result_types=[TensorType(StringType(), out)],
            attributes={
                "case_change_action": StringAttr(case_change_action),
                "is_case_sensitive": BoolAttr(is_case_sensitive, i1),
                "stopwords": ArrayAttr([StringAttr(w) for w in stopwords]),
            },
        )

    def verify_(self) -> None:
        _check_strings(self, self.x.type)
        shape = self.x.type.get_shape()
        if not (len(shape) == 1 or (len(shape) == 2 and shape[0] == 1)):
            raise VerifyException(f"{self.name}: the input must be [C] or [1, C], got {self.x.type}")
        if self.case_change_action.data not in self.ACTIONS:
            raise VerifyException(
                f"{self.name}: case_change_action must be one of {', '.join(self.ACTIONS)}, "
                f"got {self.case_change_action.data!r}"
            )
        _check_result(self, self.res.type, StringType(), [DYNAMIC_INDEX] if len(shape) == 1 else [1, DYNAMIC_INDEX])


@irdl_op_definition
class StringConstantOp(IRDLOperation):
    """A constant tensor of strings (an ONNX ``STRING`` initializer or ``Constant``), its
    elements in row-major order.

    ```mlir
    %c = relay.string.constant {value = ["a", "b"]} : tensor<2x!relay.string>
    ```
    """

    name = "relay.string.constant"
    value = attr_def(ArrayAttr[StringAttr])
    res = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "attr-dict `:` type($res)"

    def __init__(self, items: Sequence[str], shape: Sequence[int]):
        super().__init__(
            result_types=[string_tensor(shape)], attributes={"value": ArrayAttr([StringAttr(x) for x in items])}
        )

    def verify_(self) -> None:
        _check_strings(self, self.res.type)
        shape = self.res.type.get_shape()
        if DYNAMIC_INDEX in shape:
            raise VerifyException(f"{self.name}: a constant has a static shape, got {self.res.type}")
        n = 1
        for d in shape:
            n *= d
        if len(self.value.data) != n:
            raise VerifyException(f"{self.name}: {len(self.value.data)} strings for {self.res.type}")


STRING_OPS = (StringConstantOp, StringEqualOp, StringConcatOp, StringRegexFullMatchOp, StringSplitOp, StringNormalizeOp)
"""The ops on tensors of strings (only the reference interpreter runs them)."""
