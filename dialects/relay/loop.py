"""``relay.loop``: a loop whose trip count and condition are known only at run time (ONNX's
``Loop``), with loop-carried values and scan outputs (docs/design.md, decision 10).

The body is one block; its arguments are the iteration number (``tensor<i64>``), the current
condition (``tensor<i1>``) and the loop-carried values; it ends in ``relay.loop_yield`` with the
next condition, the next loop-carried values (of the same types) and one element per scan
output. The loop runs while ``iteration < trip_count`` and the condition holds::

    i = 0; c = cond; v = init
    while i < trip_count and c:
        c, v, s_i = body(i, c, v)
        i += 1
    results: v, stack([s_0, s_1, ...])     # each scan output has a leading run-time dimension

```mlir
%v, %s = relay.loop %n, %c, %v0 : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
^bb0(%i: tensor<i64>, %ci: tensor<i1>, %vi: tensor<2xf32>):
  %w = relay.add %vi, %vi : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  relay.loop_yield %ci, %w, %w : tensor<i1>, tensor<2xf32>, tensor<2xf32>
}
```

The body may use values defined before the loop (ONNX's outer-scope references). Scan results
have the element's type with a leading dynamic dimension: the number of iterations is a run-time
value, so only the reference interpreter runs a ``relay.loop`` (fuse-ops and lower-to-memory,
hence ``xrelay.build``, refuse it naming the op).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType, i1, i64
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, Pure, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

__all__ = ["LoopOp", "LoopYieldOp", "loop_body", "scan_type"]

_I64 = TensorType(i64, [])
_BOOL = TensorType(i1, [])


def scan_type(elem: Attribute) -> TensorType:
    """The type of a scan output whose steps yield ``elem``: a leading run-time dimension."""
    if not isinstance(elem, TensorType):
        raise VerifyException(f"relay.loop: a scan output element must be a tensor, got {elem}")
    return TensorType(elem.element_type, [DYNAMIC_INDEX, *elem.get_shape()])


def _types(ts: Sequence[Attribute]) -> str:
    return "(" + ", ".join(map(str, ts)) + ")"


@irdl_op_definition
class LoopOp(IRDLOperation):
    """ONNX's ``Loop`` with a run-time trip count or condition (see the module docstring).

    ```mlir
    %v = relay.loop %n, %c, %v0 : (tensor<i64>, tensor<i1>, tensor<f32>) -> (tensor<f32>) {
    ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %vi: tensor<f32>):
      relay.loop_yield %ci, %vi : tensor<i1>, tensor<f32>
    }
    ```
    """

    name = "relay.loop"
    trip_count = operand_def(TensorType)
    cond = operand_def(TensorType)
    init = var_operand_def(TensorType)
    res = var_result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect())

    def __init__(
        self,
        trip_count: SSAValue,
        cond: SSAValue,
        init: Sequence[SSAValue],
        body: Region,
        scan_elems: Sequence[Attribute],
    ):
        result_types = [v.type for v in init] + [scan_type(t) for t in scan_elems]
        super().__init__(operands=[trip_count, cond, list(init)], result_types=[result_types], regions=[body])

    @property
    def n_carried(self) -> int:
        return len(self.init)

    @property
    def yield_op(self) -> LoopYieldOp:
        last = self.body.block.last_op
        assert isinstance(last, LoopYieldOp)
        return last

    def verify_(self) -> None:
        if self.trip_count.type != _I64:
            raise VerifyException(f"relay.loop: the trip count must be {_I64}, got {self.trip_count.type}")
        if self.cond.type != _BOOL:
            raise VerifyException(f"relay.loop: the condition must be {_BOOL}, got {self.cond.type}")
        carried = [v.type for v in self.init]
        want_args = [_I64, _BOOL, *carried]
        got_args = [a.type for a in self.body.block.args]
        if got_args != want_args:
            raise VerifyException(
                f"relay.loop: the body takes {_types(got_args)}, expected {_types(want_args)} "
                "(iteration number, condition, loop-carried values)"
            )
        last = self.body.block.last_op
        if not isinstance(last, LoopYieldOp):
            raise VerifyException("relay.loop: the body must end in relay.loop_yield")
        yielded = [v.type for v in last.values]
        n = len(carried)
        if len(yielded) < 1 + n or yielded[0] != _BOOL or yielded[1 : 1 + n] != carried:
            raise VerifyException(
                f"relay.loop: the body yields {_types(yielded)}; expected the condition ({_BOOL}), "
                f"the loop-carried values {_types(carried)} and the scan elements"
            )
        want = carried + [scan_type(t) for t in yielded[1 + n :]]
        got = [r.type for r in self.res]
        if got != want:
            raise VerifyException(f"relay.loop: its results are {_types(got)}, the body gives {_types(want)}")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_string(" : ")
        printer.print_string(_types([v.type for v in self.operands]))
        printer.print_string(" -> (")
        printer.print_list([r.type for r in self.res], printer.print_attribute)
        printer.print_string(") ")
        printer.print_region(self.body, print_entry_block_args=True)

    @classmethod
    def parse(cls, parser: Parser) -> LoopOp:
        operands: list[UnresolvedOperand] = parser.parse_comma_separated_list(
            parser.Delimiter.NONE, parser.parse_unresolved_operand
        )
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        parser.parse_punctuation("->")
        results = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        region = parser.parse_region()
        if len(types) != len(operands) or len(operands) < 2:
            parser.raise_error("relay.loop: a trip count, a condition and as many types as operands")
        vals = [parser.resolve_operand(o, t) for o, t in zip(operands, types)]
        op = cls.create(operands=vals, result_types=results, regions=[region])
        return op


@irdl_op_definition
class LoopYieldOp(IRDLOperation):
    """The end of a ``relay.loop`` body: the next condition, the next loop-carried values and
    this iteration's scan elements.

    ```mlir
    relay.loop_yield %c, %v, %s : tensor<i1>, tensor<2xf32>, tensor<2xf32>
    ```
    """

    name = "relay.loop_yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), Pure())
    assembly_format = "attr-dict ($values^ `:` type($values))?"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[list(values)])

    def verify_(self) -> None:
        if not isinstance(self.parent_op(), LoopOp):
            raise VerifyException("relay.loop_yield: only a relay.loop body ends in it")


def loop_body(carried: Sequence[Attribute]) -> Block:
    """An empty body block for a loop carrying values of types ``carried``."""
    return Block(arg_types=[_I64, _BOOL, *carried])

