"""``combine-parallel-batch-matmul``: Relay's CombineParallelBatchMatmul (horizontal fusion).

``nn.batch_matmul`` ops reading the same data with ``transpose_a=false, transpose_b=true``
(Relay's only supported form), weights of rank 3 with equal batch, dtype and out dtype become
one batch_matmul over the weights concatenated along axis 1; following elementwise/broadcast
ops that agree in every branch run once, their other operands concatenated along the last
axis; each branch takes its columns back with a ``strided_slice`` in ``size`` mode::

```mlir
%0 = relay.nn.batch_matmul %x, %w1 {transpose_b = true} : (tensor<1x2x3xf32>, tensor<1x4x3xf32>) -> tensor<1x2x4xf32>
%1 = relay.nn.batch_matmul %x, %w2 {transpose_b = true} : (tensor<1x2x3xf32>, tensor<1x5x3xf32>) -> tensor<1x2x5xf32>
// becomes
%w = relay.concatenate %w1, %w2 {axis = 1} : (tensor<1x4x3xf32>, tensor<1x5x3xf32>) -> tensor<1x9x3xf32>
%y = relay.nn.batch_matmul %x, %w {transpose_b = true} : (tensor<1x2x3xf32>, tensor<1x9x3xf32>) -> tensor<1x2x9xf32>
%0 = relay.strided_slice %y {begin = [0, 0, 0], end = [-1, -1, 4], strides = [1, 1, 1], slice_mode = "size"} : ...
%1 = relay.strided_slice %y {begin = [0, 0, 4], end = [-1, -1, 5], strides = [1, 1, 1], slice_mode = "size"} : ...
```

Departure from Relay, which accepts any other operand of a following op: an operand is
combined only when its last axis is the branch's width and its other axes agree across
branches (otherwise the concatenation would be ill-typed or broadcast wrongly).
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


class ParallelBatchMatmulCombiner(ParallelOpCombiner):
    op_name = "nn.batch_matmul"

    def can_ops_be_combined(self, a: RelayOp, b: RelayOp) -> bool:
        attrs_a, attrs_b = a.attrs, b.attrs
        if any(attrs["transpose_a"] or not attrs["transpose_b"] for attrs in (attrs_a, attrs_b)):
            return False
        rhs_a, rhs_b = a.operands[1], b.operands[1]
        return (
            element(rhs_a) == element(rhs_b)
            and element(a.results[0]) == element(b.results[0])
            and len(shape(rhs_a)) == 3
            and len(shape(rhs_b)) == 3
            and shape(rhs_a)[0] == shape(rhs_b)[0]
            and attrs_a["out_dtype"] == attrs_b["out_dtype"]
        )

    def make_combined_op(self, b: Builder, group: Group) -> SSAValue:
        root = group[0][0]
        weight = b("concatenate", [branch[0].operands[1] for branch in group], axis=1)
        attrs = root.attrs  # type: ignore[attr-defined]
        return b(
            "nn.batch_matmul",
            [root.operands[0], weight],
            out_dtype=attrs["out_dtype"],
            transpose_a=attrs["transpose_a"],
            transpose_b=attrs["transpose_b"],
        )

    def is_arg_compatible(self, a: Operation, b: Operation, index: int) -> bool:
        sa, sb = shape(a.operands[index]), shape(b.operands[index])
        if element(a.operands[index]) != element(b.operands[index]) or len(sa) != len(sb) or not sa:
            return False
        width_a, width_b = shape(a.results[0])[-1], shape(b.results[0])[-1]
        return sa[-1] == width_a and sb[-1] == width_b and sa[:-1] == sb[:-1]

    def join_operand(self, b: Builder, group: Group, depth: int, index: int, parent_index: int) -> SSAValue:
        return b("concatenate", [branch[depth].operands[index] for branch in group], axis=-1)

    def update_group_output(self, b: Builder, data: SSAValue, group: Group, depth: int) -> list[SSAValue]:
        # with transpose_b the weight is (batch, features, k)
        return slices(b, data, 2, [shape(branch[0].operands[1])[1] for branch in group])


@dataclass(frozen=True)
class CombineParallelBatchMatmulPass(ModulePass):
    """Combine parallel ``nn.batch_matmul`` ops on the same data (at least ``min_num_branches``)."""

    name = "combine-parallel-batch-matmul"
    relay_name: ClassVar[str] = "CombineParallelBatchMatmul"
    opt_level: ClassVar[int] = 4
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    min_num_branches: int = 3

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        ParallelBatchMatmulCombiner(self.min_num_branches).run(op)
