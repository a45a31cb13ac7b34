"""``qnn-legalize``: target-specific rewrites of qnn ops before canonicalization (Relay's QnnLegalize).

Relay's ``qnn.transform.Legalize`` runs the ``FTVMQnnLegalize`` rules of the target. Generic
targets have none (the pass changes nothing). With ``fast-int8=true`` it applies Relay's rule
for Intel CPUs with integer dot products (VNNI / AVX-512: ``helper_change_dtypes_to_uint8_int8``
in ``relay/qnn/op/legalizations.py``): ``qnn.conv2d`` and ``qnn.dense`` get uint8 data and int8
weights, shifting an int8 input by +128 (and its zero point with it) and a uint8 weight by -128.
The result is the same, since ``(q + 128) - (zp + 128) = q - zp``.

```mlir
%y = qnn.dense %x, %w, %zx, %zw, %sx, %sw : (tensor<1x8xi8>, tensor<4x8xi8>, ...) -> tensor<1x4xi32>
// becomes, with fast-int8=true (zx = 3)
%c = relay.cast %x {dtype = "int32"} ...
%a = relay.add %c, %k128 ...
%u = relay.cast %a {dtype = "uint8"} : (tensor<1x8xi32>) -> tensor<1x8xui8>
%y = qnn.dense %u, %w, %zx131, %zw, %sx, %sw : (tensor<1x8xui8>, tensor<4x8xi8>, ...) -> tensor<1x4xi32>
```
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint

from xrelay.dialects.qnn import QNN_OPS
from xrelay.dialects.relay import RelayOp
from xrelay.transforms._relay_rewrite import OpBuilder, constant_value, tensor_dtype

_VNNI_OPS = frozenset({QNN_OPS["qnn.conv2d"], QNN_OPS["qnn.dense"]})


def _shift(b: OpBuilder, x: SSAValue, zp: SSAValue, shift: int, dtype: str) -> tuple[SSAValue, SSAValue]:
    """Relay's ``_shift``: ``cast(cast(x, int32) + shift, dtype)`` and ``zp + shift``."""
    moved = b("cast", [b("add", [b("cast", [x], dtype="int32"), b.scalar(shift, "int32")])], dtype=dtype)
    value = constant_value(zp)
    if value is not None:
        return moved, b.const(value.astype(np.int32) + shift, "int32")
    return moved, b("add", [zp, b.scalar(shift, "int32")])


class ToUint8Int8(RewritePattern):
    """VNNI's operand types: uint8 data, int8 weights (Relay's x86 rule)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if type(op) not in _VNNI_OPS:
            return
        assert isinstance(op, RelayOp)
        data, weight, izp, kzp, s_in, s_k = op.operands
        dtypes = (tensor_dtype(data), tensor_dtype(weight))
        if dtypes == ("uint8", "int8") or not set(dtypes) <= {"uint8", "int8"}:
            return  # already VNNI's types, or int16 operands (Relay leaves those)
        b = OpBuilder(rewriter, op)
        if tensor_dtype(data) == "int8":
            data, izp = _shift(b, data, izp, 128, "uint8")
        if tensor_dtype(weight) == "uint8":
            weight, kzp = _shift(b, weight, kzp, -128, "int8")
        new = type(op).make([data, weight, izp, kzp, s_in, s_k], **op.attrs)
        rewriter.insert(new, InsertPoint.before(op))
        rewriter.replace(op, [], [new.results[0]])


@dataclass(frozen=True)
class QnnLegalizePass(ModulePass):
    """Target rewrites of qnn ops (``fast-int8``: uint8 x int8 for VNNI, as Relay on x86)."""

    name = "qnn-legalize"
    relay_name: ClassVar[str] = "QnnLegalize"
    opt_level: ClassVar[int] = 1
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    fast_int8: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.fast_int8:
            return
        PatternRewriteWalker(
            GreedyRewritePatternApplier([ToUint8Int8()], dce_enabled=False), apply_recursively=False
        ).rewrite_module(op)
