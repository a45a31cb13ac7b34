"""``combine-parallel-dense``: Relay's CombineParallelDense (horizontal fusion).

Dense ops reading the same data are combined in one of two ways.

``to-batch=true`` (the default, as in Relay): dense ops with equal weight shapes and out dtype
become one ``nn.batch_matmul`` over the stacked data and weights; following elementwise or
broadcast ops that agree in every branch run once on the batch (their other operands stacked,
vectors given a leading unit axis first); the result is split along the batch axis and each
part squeezed::

```mlir
%0 = relay.nn.dense %x, %w1 : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
%1 = relay.nn.dense %x, %w2 : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
// becomes
%a = relay.stack %x, %x : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
%b = relay.stack %w1, %w2 : (tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<2x5x4xf32>
%c = relay.nn.batch_matmul %a, %b : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32>
%s:2 = relay.split %c {indices_or_sections = 2} : (tensor<2x3x5xf32>) -> (tensor<1x3x5xf32>, tensor<1x3x5xf32>)
%0 = relay.squeeze %s#0 {axis = [0]} : (tensor<1x3x5xf32>) -> tensor<3x5xf32>
%1 = relay.squeeze %s#1 {axis = [0]} : (tensor<1x3x5xf32>) -> tensor<3x5xf32>
```

``to-batch=false``: dense ops with the same input width become one dense over the
concatenated weights (``units`` the sum); following ops' other operands are concatenated along
their last axis (a last axis of 1, or a scalar, is first ``repeat``-ed to the branch's width);
each branch takes its columns back with a ``strided_slice`` in ``size`` mode.

Departure from Relay: in the batch form a scalar operand of a following op stops the
combining (Relay stacks scalars into a vector that broadcasts against the wrong axis).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from xrelay.dialects.relay import RelayOp
from xrelay.transforms._combine_parallel import (
    Builder,
    Group,
    ParallelOpCombiner,
    element,
    shape,
    slices,
)


class ParallelOpBatchCombiner(ParallelOpCombiner):
    """Relay's ParallelOpBatchCombiner: stack the ops' operands into one batched op."""

    batch_op_name: str = ""

    def can_ops_be_combined(self, a: RelayOp, b: RelayOp) -> bool:
        if len(a.operands) != len(b.operands):
            return False
        return all(
            element(x) == element(y) and shape(x) == shape(y)
            for x, y in zip(a.operands, b.operands)
        )

    def make_combined_op(self, b: Builder, group: Group) -> SSAValue:
        n = len(group[0][0].operands)
        args = [b("stack", [branch[0].operands[i] for branch in group], axis=0) for i in range(n)]
        return b(self.batch_op_name, args)

    def is_arg_compatible(self, a: Operation, b: Operation, index: int) -> bool:
        ta, tb = a.operands[index], b.operands[index]
        # a scalar stacked across branches would broadcast along the wrong axis
        return element(ta) == element(tb) and shape(ta) == shape(tb) and len(shape(ta)) > 0

    def join_operand(self, b: Builder, group: Group, depth: int, index: int, parent_index: int) -> SSAValue:
        parts = []
        for branch in group:
            arg = branch[depth].operands[index]
            if len(shape(arg)) == 1:
                arg = b("expand_dims", [arg], axis=0, num_newaxis=1)
            parts.append(arg)
        return b("stack", parts, axis=0)

    def update_group_output(self, b: Builder, data: SSAValue, group: Group, depth: int) -> list[SSAValue]:
        split = b.op("split", [data], indices_or_sections=len(group), axis=0)
        return [b("squeeze", [part], axis=[0]) for part in split.results]


class ParallelDenseToBatchCombiner(ParallelOpBatchCombiner):
    op_name = "nn.dense"
    batch_op_name = "nn.batch_matmul"

    def can_ops_be_combined(self, a: RelayOp, b: RelayOp) -> bool:
        return a.attrs["out_dtype"] == b.attrs["out_dtype"] and shape(a.operands[1]) == shape(b.operands[1])

    def make_combined_op(self, b: Builder, group: Group) -> SSAValue:
        data = b("stack", [branch[0].operands[0] for branch in group], axis=0)
        weight = b("stack", [branch[0].operands[1] for branch in group], axis=0)
        out_dtype = group[0][0].attrs["out_dtype"]  # type: ignore[attr-defined]
        return b("nn.batch_matmul", [data, weight], out_dtype=out_dtype, transpose_a=False, transpose_b=True)


class ParallelDenseToDenseCombiner(ParallelOpCombiner):
    op_name = "nn.dense"

    def can_ops_be_combined(self, a: RelayOp, b: RelayOp) -> bool:
        return a.attrs["out_dtype"] == b.attrs["out_dtype"] and shape(a.operands[1])[1] == shape(b.operands[1])[1]

    def make_combined_op(self, b: Builder, group: Group) -> SSAValue:
        root = group[0][0]
        weights = [branch[0].operands[1] for branch in group]
        units = sum(shape(w)[0] for w in weights)  # type: ignore[misc]
        weight = b("concatenate", weights, axis=0)
        return b("nn.dense", [root.operands[0], weight], units=units, out_dtype=root.attrs["out_dtype"])  # type: ignore[attr-defined]

    def is_arg_compatible(self, a: Operation, b: Operation, index: int) -> bool:
        ta, tb = a.operands[index], b.operands[index]
        sa, sb = shape(ta), shape(tb)
        if element(ta) != element(tb) or len(sa) != len(sb):
            return False
        if len(shape(a.results[0])) < len(sa) or len(shape(b.results[0])) < len(sb):
            return False  # not broadcast/elemwise
        return sa[:-1] == sb[:-1]

    def join_operand(self, b: Builder, group: Group, depth: int, index: int, parent_index: int) -> SSAValue:
        ndim = len(shape(group[0][depth].operands[index]))
        axis = ndim - 1 if ndim else 0
        parts = []
        for branch in group:
            out_dim = shape(branch[depth].operands[parent_index])[-1]
            arg = branch[depth].operands[index]
            if ndim == 0:
                arg = b("expand_dims", [arg], axis=-1, num_newaxis=1)
                repeat = True
            else:
                repeat = out_dim > 1 and shape(arg)[-1] == 1  # type: ignore[operator]
            if repeat:
                arg = b("repeat", [arg], repeats=out_dim, axis=axis)
            parts.append(arg)
        return b("concatenate", parts, axis=axis)

    def update_group_output(self, b: Builder, data: SSAValue, group: Group, depth: int) -> list[SSAValue]:
        out = []
        index = 0
        for branch in group:
            out_shape = shape(branch[depth].results[0])
            units = shape(branch[0].results[0])[1]
            # the last axis of the branch's output with the dense's width
            axis = max(k for k, d in enumerate(out_shape) if d == units)
            out += slices(b, data, axis, [units], len(out_shape), start=index)  # type: ignore[list-item]
            index += units  # type: ignore[operator]
        return out


@dataclass(frozen=True)
class CombineParallelDensePass(ModulePass):
    """Combine parallel ``nn.dense`` ops on the same data (at least ``min_num_branches``),
    into a ``batch_matmul`` (``to_batch``) or one wider ``dense``."""

    name = "combine-parallel-dense"
    relay_name: ClassVar[str] = "CombineParallelDense"
    opt_level: ClassVar[int] = 4
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    min_num_branches: int = 3
    to_batch: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.to_batch:
            ParallelDenseToBatchCombiner(self.min_num_branches).run(op)
        else:
            ParallelDenseToDenseCombiner(self.min_num_branches).run(op)
