"""``combine-parallel-conv2d``: Relay's CombineParallelConv2D (horizontal fusion).

Convolutions reading the same data with the same strides, padding, dilation, layouts, out
dtype and kernel size (``groups == 1``) become one convolution over the concatenation of their
weights (along the kernel layout's ``O``); following elementwise/broadcast ops that agree in
every branch are applied once to the combined output, their other operands concatenated along
the channel axis; each branch then takes its channels back with a ``strided_slice`` in
``size`` mode. With ``min-num-branches=2``:

```mlir
%0 = relay.nn.conv2d %x, %w1 : (tensor<1x4x16x16xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x16x16xf32>
%1 = relay.nn.conv2d %x, %w2 : (tensor<1x4x16x16xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x16x16xf32>
// becomes
%w = relay.concatenate %w1, %w2 : (tensor<4x4x1x1xf32>, tensor<4x4x1x1xf32>) -> tensor<8x4x1x1xf32>
%y = relay.nn.conv2d %x, %w {channels = 8} : (tensor<1x4x16x16xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x16x16xf32>
%0 = relay.strided_slice %y {begin = [0, 0], end = [-1, 4], strides = [1, 1], slice_mode = "size"} : ...
%1 = relay.strided_slice %y {begin = [0, 4], end = [-1, 4], strides = [1, 1], slice_mode = "size"} : ...
```

Relay registers the pass as ``CombineParallelConv2d`` (opt level 4); the factory is
``CombineParallelConv2D(min_num_branches=3)``.
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

_SAME_ATTRS = ("strides", "padding", "dilation", "groups", "data_layout", "kernel_layout", "out_dtype", "out_layout")


def _out_channels(conv: Operation) -> int:
    """The weight's ``O`` extent (Relay's GetConv2DSuperChannelsDim)."""
    layout = conv.attrs["kernel_layout"]  # type: ignore[attr-defined]
    return shape(conv.operands[1])[layout.index("O")]  # type: ignore[return-value]


class ParallelConv2DCombiner(ParallelOpCombiner):
    op_name = "nn.conv2d"

    def is_supported_op(self, op: RelayOp) -> bool:
        return op.attrs["groups"] == 1

    def can_ops_be_combined(self, a: RelayOp, b: RelayOp) -> bool:
        attrs_a, attrs_b = a.attrs, b.attrs
        if any(attrs_a[k] != attrs_b[k] for k in _SAME_ATTRS):
            return False
        layout = attrs_a["kernel_layout"]
        if sorted(layout) != sorted("OIHW"):
            return False  # blocked kernel layouts have no plain H and W to compare
        ha, hb = shape(a.operands[1]), shape(b.operands[1])
        h, w = layout.index("H"), layout.index("W")
        return ha[h] == hb[h] and ha[w] == hb[w]

    def make_combined_op(self, b: Builder, group: Group) -> SSAValue:
        root = group[0][0]
        attrs = dict(root.attrs)  # type: ignore[attr-defined]
        weights = [branch[0].operands[1] for branch in group]
        weight = b("concatenate", weights, axis=attrs["kernel_layout"].index("O"))
        attrs["channels"] = sum(_out_channels(branch[0]) for branch in group)
        layout = attrs["out_layout"] or attrs["data_layout"]
        self.channel_pos = layout.index("C")
        return b("nn.conv2d", [root.operands[0], weight], **attrs)

    def _arg_channel_pos(self, call: Operation, index: int) -> int:
        return self.channel_pos - len(shape(call.results[0])) + len(shape(call.operands[index]))

    def is_arg_compatible(self, a: Operation, b: Operation, index: int) -> bool:
        ta, tb = a.operands[index], b.operands[index]
        if element(ta) != element(tb) or len(shape(ta)) != len(shape(tb)):
            return False
        pos = self._arg_channel_pos(a, index)
        # the channel axis must be present in the operand and not broadcast
        if pos < 0:
            return False
        sa, sb = shape(ta), shape(tb)
        if sa[pos] != shape(a.results[0])[self.channel_pos] or sb[pos] != shape(b.results[0])[self.channel_pos]:
            return False
        return all(sa[k] == sb[k] for k in range(len(sa)) if k != pos)

    def join_operand(self, b: Builder, group: Group, depth: int, index: int, parent_index: int) -> SSAValue:
        parts = [branch[depth].operands[index] for branch in group]
        return b("concatenate", parts, axis=self._arg_channel_pos(group[0][depth], index))

    def update_group_output(self, b: Builder, data: SSAValue, group: Group, depth: int) -> list[SSAValue]:
        return slices(b, data, self.channel_pos, [_out_channels(branch[0]) for branch in group])


@dataclass(frozen=True)
class CombineParallelConv2DPass(ModulePass):
    """Combine parallel ``nn.conv2d`` ops on the same data (at least ``min_num_branches``)."""

    name = "combine-parallel-conv2d"
    relay_name: ClassVar[str] = "CombineParallelConv2d"
    opt_level: ClassVar[int] = 4
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    min_num_branches: int = 3

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        ParallelConv2DCombiner(self.min_num_branches).run(op)
