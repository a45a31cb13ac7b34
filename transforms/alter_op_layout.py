"""``alter-op-layout``: give convolutions the x86 blocked layouts (Relay's AlterOpLayout).

TVM's x86 rule (``topi/x86/conv2d_alter_op.py`` with its fallback configuration) turns an
``NCHW``/``OIHW`` float convolution into ``NCHW{ic}c`` data, ``OIHW{ic}i{oc}o`` kernel and
``NCHW{oc}c`` output, with block sizes chosen per layer: ``oc`` is the largest divisor of the
output channels up to the SIMD width (``simd-width``, 16 float32 lanes for AVX-512), ``ic`` the
largest divisor of the input channels up to ``oc``. A depthwise convolution gets
``OIHW1i{oc}o``; other grouped convolutions keep their layout. An 8-bit convolution (what
``qnn.conv2d`` canonicalizes to) keeps ``NCHW`` data and gets an ``OHWI`` kernel: each output
channel's taps in the order of a channels-last input patch, which the C target's integer tiles
reduce as one contiguous dot product (TVM's x86 int8 rule blocks for the same instructions).

The rule per op is Relay's ``FTVMAlterOpLayout``: ``ALTER_OP_LAYOUT`` maps an op name to a
rule, the x86 one for ``nn.conv2d`` by default; ``xrelay.relay.op.register_alter_op_layout``
and ``TempOpAttr(op, "FTVMAlterOpLayout", fn)`` install Relay-style Python rules (functions of
``(attrs, inputs, tinfos, out_type)`` returning an expression) for the ported Relay tests.

The ops between convolutions follow the blocked layout through their layout rules (see
``_layout_rewrite``), so ``layout_transform`` appears only at the edges of a run of blocked ops
and where two layers use different block sizes. The kernel's transform has a constant input
when the weights are bound, and ``fold-constant`` does it at compile time.

```mlir
%y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x8x6x6xf32>, tensor<32x8x3x3xf32>) -> tensor<1x32x6x6xf32>
// alter-op-layout
%0 = relay.layout_transform %x {src_layout = "NCHW", dst_layout = "NCHW8c"} : ...
%1 = relay.layout_transform %w {src_layout = "OIHW", dst_layout = "OIHW8i16o"} : ...
%y = relay.nn.conv2d %0, %1 {padding = [1, 1, 1, 1], channels = 32, data_layout = "NCHW8c", kernel_layout = "OIHW8i16o", out_layout = "NCHW16c"} : ...
%2 = relay.layout_transform %y {src_layout = "NCHW16c", dst_layout = "NCHW"} : ...
```
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from xrelay.dialects.relay import RelayOp, dtype_of, shape_of
from xrelay.dialects.relay.layout import is_depthwise
from xrelay.transforms._layout_rewrite import LayoutRewriter


def _largest_divisor(n: int, limit: int) -> int:
    return next(b for b in range(min(limit, n), 0, -1) if n % b == 0)


def _lane_block(n: int, limit: int, lanes: int) -> int:
    """The largest divisor of ``n`` up to ``limit`` that is a multiple of ``lanes``, else the
    largest divisor up to ``limit``."""
    return next(
        (b for b in range(min(limit, n), 0, -1) if n % b == 0 and b % lanes == 0), 0
    ) or _largest_divisor(n, limit)


def x86_conv2d_layouts(
    data: TensorType,
    weight: TensorType,
    attrs: dict[str, Any],
    simd_width: int,
    grouped: bool = False,
    block_lanes: int = 1,
) -> dict[str, Any] | None:
    """The blocked attributes TVM's x86 fallback picks for this conv2d, or None to keep it;
    ``grouped``: a grouped convolution gets blocked data and result too (``OIHW`` kernel);
    ``block_lanes`` > 1: every block (input ones too) is ``_lane_block`` of its channel count
    (``AlterOpLayoutPass.block_lanes``)."""
    if attrs["data_layout"] != "NCHW" or attrs["kernel_layout"] != "OIHW" or attrs["out_layout"]:
        return None
    if dtype_of(data.element_type) in ("int8", "uint8") and dtype_of(weight.element_type) in ("int8", "uint8"):
        # 8-bit data (the integer convolutions qnn canonicalizes to): the kernel in OHWI, each
        # output channel's taps in the order of a channels-last input patch, so a dot product
        # over a patch is one contiguous reduction (TVM's x86 int8 rule blocks for the same
        # instructions: vpdpbusd / pmaddwd); grouped convolutions are left NCHW/OIHW
        return dict(attrs, kernel_layout="OHWI") if attrs["groups"] == 1 else None
    if dtype_of(data.element_type) not in ("float32", "float16", "float64"):
        return None
    ds, ws = shape_of(data), shape_of(weight)
    if None in ds or None in ws:
        return None
    in_channels, out_channels = ds[1], ws[0]
    groups = attrs["groups"]
    depthwise = is_depthwise(data, "NCHW", weight, "OIHW", groups)
    lanes = block_lanes > 1
    oc_bn = (
        _lane_block(out_channels, simd_width, block_lanes)
        if lanes
        else _largest_divisor(out_channels, simd_width)
    )
    if groups != 1 and not depthwise:
        if not grouped:
            return None  # TVM's x86 grouped convolution stays NCHW
        # blocked like its neighbours (the same rule for the block), so no layout_transform
        # pair, two more buffers live around it, surrounds it
        ic_bn = _lane_block(in_channels, simd_width, block_lanes)
        # the kernel blocked too where each group is whole blocks (the C's register tiles)
        whole = (out_channels // groups) % oc_bn == 0 and (in_channels // groups) % ic_bn == 0
        return dict(attrs, channels=out_channels, data_layout=f"NCHW{ic_bn}c", out_layout=f"NCHW{oc_bn}c",
                    kernel_layout=f"OIHW{ic_bn}i{oc_bn}o" if whole else "OIHW")  # fmt: skip
    if depthwise:
        ic_bn = oc_bn
    elif lanes:  # the block its producer's output got: no layout_transform between them
        ic_bn = _lane_block(in_channels, simd_width, block_lanes)
    else:
        ic_bn = _largest_divisor(in_channels, oc_bn)
    kernel = f"OIHW1i{oc_bn}o" if depthwise else f"OIHW{ic_bn}i{oc_bn}o"
    return dict(
        attrs,
        channels=out_channels,
        data_layout=f"NCHW{ic_bn}c",
        kernel_layout=kernel,
        out_layout=f"NCHW{oc_bn}c",
    )


AlterRule = Callable[
    [RelayOp, dict[str, Any], list[TensorType], list[SSAValue], Operation],
    tuple[str, dict[str, Any], list[SSAValue]] | None,
]
"""``(op, attrs, original input types, inputs, anchor) -> (op name, attrs, inputs)`` of the
replacement (new input values built before ``anchor``), or None to keep the op."""

def _x86_conv2d(
    op, attrs, types, args, anchor, simd_width: int = 16, grouped: bool = False, block_lanes: int = 1
):
    altered = x86_conv2d_layouts(types[0], types[1], attrs, simd_width, grouped, block_lanes)
    return None if altered is None else ("nn.conv2d", altered, args)


ALTER_OP_LAYOUT: dict[str, AlterRule] = {"nn.conv2d": _x86_conv2d}
"""Relay's FTVMAlterOpLayout by op name; changed from outside only through ``set_rule``."""


def set_rule(op_name: str, rule: AlterRule | None) -> AlterRule | None:
    """Make ``rule`` ``op_name``'s FTVMAlterOpLayout (None removes it) and return the rule it
    replaces: what Relay's ``register_alter_op_layout`` and ``TempOpAttr`` do to the op
    attribute (``xrelay.relay.op_attr``)."""
    old = ALTER_OP_LAYOUT.get(op_name)
    if rule is None:
        ALTER_OP_LAYOUT.pop(op_name, None)
    else:
        ALTER_OP_LAYOUT[op_name] = rule
    return old


@dataclass(frozen=True)
class AlterOpLayoutPass(ModulePass):
    """Blocked NCHW{c}c layouts for convolutions (TVM's x86 rule); the rest follows."""

    name = "alter-op-layout"
    relay_name: ClassVar[str] = "AlterOpLayout"
    opt_level: ClassVar[int] = 3
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    simd_width: int = 16
    x86: bool = True
    """Apply TVM's x86 conv2d rule. ``xrelay.build`` runs the pass without it: the arena
    runtime ran blocked programs slower than NCHW (README, Layouts). Python-registered rules
    apply regardless."""

    grouped: bool = False
    """With ``x86``: grouped (not depthwise) convolutions take the blocked data and result
    layouts of their neighbours instead of TVM's ``NCHW``, the kernel blocked as theirs where
    every group is whole channel blocks (else ``OIHW``). The C target (``build_c``) computes
    them as register tiles, or direct loops over blocked indices; kept ``NCHW``, each
    is surrounded by two ``layout_transform`` results live at once (RegNetY-400MF's C plan
    6,422,528 -> 4,616,192 bytes), which no kernel needs."""

    block_lanes: int = 1
    """With ``x86``, above 1: each channel count's block is its largest divisor up to
    ``simd_width`` that is a multiple of this (any divisor where none is), input blocks by the
    same rule, so a tensor's block depends only on its channel count (no ``layout_transform``
    between convolutions). The C target (``build_c``) sets its 8 lanes: at 16 lanes TVM's rule
    gives 24 channels blocks of 12 (no register tiles) and input blocks of at most the output's
    (a transform where 64 channels meet 24)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.simd_width < 1:
            raise ValueError(f"alter-op-layout: simd-width must be positive, got {self.simd_width}")
        if self.block_lanes < 1:
            raise ValueError(
                f"alter-op-layout: block-lanes must be positive, got {self.block_lanes}"
            )
        x86 = self.x86

        def new_call(
            o: RelayOp, attrs: dict[str, Any], types: list[TensorType], args: list[SSAValue]
        ) -> tuple[str, dict[str, Any], list[SSAValue]]:
            rule = ALTER_OP_LAYOUT.get(o.RELAY_NAME)
            if rule is _x86_conv2d:
                out = (
                    _x86_conv2d(
                        o, attrs, types, args, o, self.simd_width, self.grouped, self.block_lanes
                    )
                    if x86
                    else None
                )
            elif rule is not None:
                out = rule(o, attrs, types, args, o)
            else:
                out = None
            return (o.RELAY_NAME, attrs, args) if out is None else out

        LayoutRewriter(new_call).run(op)
