"""``qnn-canonicalize-ops``: lower every qnn op to integer relay ops (Relay's QnnCanonicalize).

Relay's ``qnn.transform.CanonicalizeOps`` (``FTVMQnnCanonicalize``, ``src/relay/qnn/op/*.cc``),
op by op:

* ``qnn.conv2d`` / ``qnn.dense`` / ``qnn.batch_matmul``: the integer product of the raw tensors
  minus the zero-point terms, ``term1 - term2 - term3 + term4`` with
  ``term2 = kzp * sum(data)`` (a channel sum pooled over the window for convolutions),
  ``term3 = izp * sum(weight)``, ``term4 = izp * kzp * K``; terms with a zero point of 0 are
  left out. Grouped (non-depthwise) convolutions, depthwise ones with a channel multiplier,
  dilated ones with a kernel zero point, and per-channel kernel zero points take Relay's
  fallback: zero points subtracted from both operands in int32 before ``nn.conv2d``.
* ``qnn.requantize``: ``compute_dtype`` int64 (the default) is a fixed-point multiply —
  ``fixed_point_multiply`` / ``fixed_point_multiply_per_axis`` for UPWARD rounding (the
  default), an int64 multiply, rounding add and ``right_shift`` for TONEAREST — then the output
  zero point, clip and cast; float32/float64 multiply in floating point and round
  (``floor(x + 0.5)`` / ``round``).
* ``qnn.quantize``: ``cast(clip(round(x / s) + zp))``; ``qnn.dequantize``:
  ``(cast(x, int32) - zp) * s``.
* ``qnn.add`` / ``qnn.subtract``: both sides requantized to the output's parameters in int32
  (or just cast when they match), combined, the output zero point removed/added, clipped;
  ``qnn.mul``: ``(a - zpa) * (b - zpb)`` requantized from ``sa * sb``.
* ``qnn.concatenate``: inputs whose parameters differ from the output's are requantized;
  ``qnn.avg_pool2d``: requantized (or cast) to int32, ``nn.avg_pool2d``, clipped and cast;
  ``qnn.conv2d_transpose``: zero points subtracted in int32, ``nn.conv2d_transpose``.

Scales and zero points must be constants, as Relay requires (``GetScalarFromConstant``).
Where Relay builds small constant subexpressions (``reshape(zp, [-1])`` expanded to the axis,
``MakeConstantScalar``), the constants are made directly, already folded. The simulated
quantize ops have no canonical form in Relay (they are computed directly) and stay.

```mlir
%y = qnn.requantize %x, %s1, %z1, %s2, %z2 : (tensor<4xi32>, tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<4xi8>
// becomes (s1 / s2 = 0.25, zero points 0)
%0 = relay.fixed_point_multiply %x {multiplier = 1073741824, shift = -1} : (tensor<4xi32>) -> tensor<4xi32>
%1 = relay.clip %0 {a_min = -128.0, a_max = 127.0} : (tensor<4xi32>) -> tensor<4xi32>
%y = relay.cast %1 {dtype = "int8"} : (tensor<4xi32>) -> tensor<4xi8>
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

from xrelay.dialects.qnn import QNN_OPS, resolve_requantize
from xrelay.dialects.relay import ConstantOp, RelayOp, RelayTypeError, shape_of
from xrelay.kernels import KERNELS
from xrelay.kernels.qnn import fixed_point_multiplier_shift, per_channel_multipliers, split_shift
from xrelay.transforms._relay_rewrite import OpBuilder, constant_value, tensor_dtype


def static_value(value: SSAValue, depth: int = 8) -> np.ndarray | None:
    """The value of a constant, or of relay ops on constants (``multiply(zp, zp)``), else None."""
    array = constant_value(value)
    if array is not None or depth == 0:
        return array
    owner = value.owner
    if not isinstance(owner, RelayOp) or owner.STATEFUL or len(owner.results) != 1:
        return None
    args = [static_value(o, depth - 1) for o in owner.operands]
    if any(a is None for a in args):
        return None

    kernel = KERNELS.get(owner.RELAY_NAME)
    if kernel is None:
        return None
    with np.errstate(all="ignore"):
        return np.asarray(kernel(*args, **owner.attrs))


def _const(op: RelayOp, value: SSAValue, what: str) -> np.ndarray:
    array = static_value(value)
    if array is None:
        raise RelayTypeError(f"{op.name}: {what} must be a constant to lower the op (as in Relay)")
    return array


def _is_scalar(a: np.ndarray) -> bool:
    """Relay's IsConstScalar: a rank-0 constant."""
    return a.ndim == 0


def _equal_scalar(a: np.ndarray, value: float) -> bool:
    """Relay's IsEqualScalar: a one-element constant equal to ``value``."""
    return a.size == 1 and float(a.reshape(())) == value


def _qrange(dtype: str) -> tuple[int, int]:
    info = np.iinfo(np.dtype(dtype))
    return int(info.min), int(info.max)


def _axis(axis: int, rank: int) -> int:
    return (rank + axis if rank > 0 else 0) if axis < 0 else axis


class Lowering:
    """Build the integer relay ops that replace one qnn op."""

    def __init__(self, rewriter: PatternRewriter, op: RelayOp):
        self.op = op
        self.b = OpBuilder(rewriter, op)

    def __call__(self, name: str, operands: list[SSAValue], **attrs) -> SSAValue:
        return self.b(name, operands, **attrs)

    def scalar(self, value: float, dtype: str) -> SSAValue:
        return self.b.scalar(value, dtype)

    def along(self, values: np.ndarray, axis: int, rank: int, dtype: str) -> SSAValue:
        """A per-channel constant shaped to broadcast along ``axis`` (ExpandBiasToMatchAxis)."""
        values = np.asarray(values).reshape(-1)
        shape = [1] * rank
        if rank:
            shape[axis] = values.size
        return self.b.const(values.reshape(shape) if rank else values.reshape(()), dtype)

    def cast(self, x: SSAValue, dtype: str) -> SSAValue:
        return x if tensor_dtype(x) == dtype else self("cast", [x], dtype=dtype)

    def clip_cast(self, x: SSAValue, dtype: str) -> SSAValue:
        """Relay's ConvertDtype: clip to the dtype's range, then cast."""
        lo, hi = _qrange(dtype)
        return self.cast(self("clip", [x], a_min=float(lo), a_max=float(hi)), dtype)

    # ---- requantize ---------------------------------------------------------------------

    def requantize(
        self,
        x: SSAValue,
        in_scale: np.ndarray,
        in_zp: np.ndarray,
        out_scale: np.ndarray,
        out_zp: np.ndarray,
        out_dtype: str,
        axis: int = -1,
        rounding: str = "None",
        compute_dtype: str = "None",
    ) -> SSAValue:
        rounding, compute_dtype = resolve_requantize(rounding, compute_dtype)
        out_s = float(np.asarray(out_scale, np.float32).reshape(()))
        if out_s == 0.0:
            raise RelayTypeError(f"{self.op.name}: the output scale is 0")
        rank = len(shape_of(x.type))
        ax = _axis(axis, rank)
        in_scale = np.asarray(in_scale, np.float32)
        zp_out = int(np.asarray(out_zp).reshape(()))
        if compute_dtype == "int64":
            t = self.cast(x, "int32")
            if not _equal_scalar(in_zp, 0):
                t = self("subtract", [t, self.along(in_zp, ax, rank, "int32")])
            if _is_scalar(in_scale):
                if float(in_scale) != out_s:
                    t = self._fixed_point(t, float(in_scale) / out_s, rounding)
            else:
                t = self._fixed_point_per_channel(t, in_scale, out_s, ax, rank, rounding)
            if zp_out != 0:
                t = self("add", [self.scalar(zp_out, "int32"), t])
        else:
            ft = compute_dtype
            t = self.cast(x, ft)
            if not _equal_scalar(in_zp, 0):
                t = self("subtract", [t, self.along(np.asarray(in_zp, ft), ax, rank, ft)])
            if _is_scalar(in_scale):
                if float(in_scale) != out_s:
                    t = self("multiply", [self.scalar(float(in_scale) / out_s, ft), t])
            else:
                mult = np.array([float(s) / out_s for s in in_scale.reshape(-1)])
                t = self("multiply", [t, self.along(mult, ax, rank, ft)])
            if zp_out != 0:
                t = self("add", [t, self.scalar(zp_out, ft)])
            if rounding == "UPWARD":
                t = self("floor", [self("add", [t, self.scalar(0.5, ft)])])
            else:
                t = self("round", [t])
            t = self.cast(t, "int32")
        if out_dtype == "int32":
            return t
        return self.clip_cast(t, out_dtype)

    def _fixed_point(self, t: SSAValue, multiplier: float, rounding: str) -> SSAValue:
        m, shift = fixed_point_multiplier_shift(multiplier)
        if rounding == "UPWARD":
            return self("fixed_point_multiply", [t], multiplier=m, shift=shift)
        left, right = split_shift(shift)
        return self._to_nearest(t, m, left, right, None, 0)

    def _fixed_point_per_channel(self, t, scales, out_s, ax, rank, rounding) -> SSAValue:
        ms, ls, rs = per_channel_multipliers(scales, out_s)
        if rounding == "UPWARD":
            return self(
                "fixed_point_multiply_per_axis",
                [t, self.b.const(ms, "int32"), self.b.const(ls, "int32"), self.b.const(rs, "int32")],
                is_lshift_required=bool(ls.any()),
                is_rshift_required=bool(rs.any()),
                axes=[ax],
            )
        return self._to_nearest(t, ms, ls, rs, ax, rank)

    def _to_nearest(self, t, m, left, right, ax, rank) -> SSAValue:
        """FixedPointMultiply(PerChannel)ToNearest: int64 product, ±half, arithmetic shift."""

        def c(v):
            v = np.asarray(v, np.int64)
            return self.scalar(int(v), "int64") if ax is None else self.along(v, ax, rank, "int64")

        t = self.cast(t, "int64")
        if np.any(np.asarray(left) != 0):
            t = self("left_shift", [t, c(left)])
        t = self("multiply", [t, c(m)])
        total = np.asarray(right, np.int64) + 31
        pos = np.left_shift(np.int64(1), total - 1)
        rounder = self("where", [self("greater_equal", [t, self.scalar(0, "int64")]), c(pos), c(pos - 1)])
        t = self("add", [t, rounder])
        t = self("right_shift", [t, c(total)])
        return self.cast(t, "int32")

    def requantize_or_upcast(self, x, s, zp, out_s, out_zp, axis=-1) -> SSAValue:
        """Relay's RequantizeOrUpcast: requantize to int32 unless the parameters already match."""
        same = s.size == 1 and zp.size == 1 and _equal_scalar(out_s, float(s.reshape(())))
        if same and _equal_scalar(out_zp, float(zp.reshape(()))):
            return self.cast(x, "int32")
        return self.requantize(x, s, zp, out_s, out_zp, "int32", axis)


# ============================================================================================
# Per-op lowerings
# ============================================================================================


def _params(op: RelayOp, first: int, names: tuple[str, ...]) -> list[np.ndarray]:
    return [_const(op, op.operands[first + i], n) for i, n in enumerate(names)]


def _param_value(lo: Lowering, value: SSAValue, ax: int, rank: int, dtype: str) -> SSAValue:
    """A scale or zero point in ``dtype``, shaped along ``ax``: constants are made directly,
    run-time values (Relay allows them in quantize/dequantize) are cast and expanded."""
    array = constant_value(value)
    if array is not None:
        array = array.astype(np.dtype(dtype))
        return lo.along(array, ax, rank, dtype) if array.ndim else lo.b.const(array, dtype)
    v = lo.cast(value, dtype)
    pad = rank - ax - 1
    if len(shape_of(value.type)) == 1 and pad > 0:
        v = lo("expand_dims", [v], axis=1, num_newaxis=pad)
    return v


def lower_quantize(lo: Lowering, op: RelayOp) -> SSAValue:
    x = op.operands[0]
    a = op.attrs
    rank = len(shape_of(x.type))
    ax = _axis(a["axis"], rank)
    s = _param_value(lo, op.operands[1], ax, rank, "float32")
    z = _param_value(lo, op.operands[2], ax, rank, "float32")
    v = lo("add", [lo("round", [lo("divide", [x, s])]), z])
    dmin, dmax = _qrange(a["out_dtype"])
    v = lo("clip", [v], a_min=float(dmin), a_max=float(dmax))
    return lo.cast(v, a["out_dtype"])


def lower_dequantize(lo: Lowering, op: RelayOp) -> SSAValue:
    x = op.operands[0]
    a = op.attrs
    rank = len(shape_of(x.type))
    ax = _axis(a["axis"], rank)
    s = _param_value(lo, op.operands[1], ax, rank, "float32")
    z = _param_value(lo, op.operands[2], ax, rank, "int32")
    v = lo("multiply", [lo.cast(lo("subtract", [lo.cast(x, "int32"), z]), "float32"), s])
    if a["out_dtype"] == "float32":
        return v
    fmax = float(np.finfo(np.dtype(a["out_dtype"])).max)
    return lo.cast(lo("clip", [v], a_min=-fmax, a_max=fmax), a["out_dtype"])


def lower_requantize(lo: Lowering, op: RelayOp) -> SSAValue:
    s_in, zp_in, s_out, zp_out = _params(
        op, 1, ("input_scale", "input_zero_point", "output_scale", "output_zero_point")
    )
    a = op.attrs
    return lo.requantize(
        op.operands[0], s_in, zp_in, s_out, zp_out, a["out_dtype"], a["axis"], a["rounding"],
        a["compute_dtype"],
    )  # fmt: skip


def _conv_attrs(a: dict, **over) -> dict:
    keys = ("strides", "padding", "dilation", "groups", "channels", "kernel_size",
            "data_layout", "kernel_layout", "out_layout", "out_dtype")  # fmt: skip
    out = {k: a[k] for k in keys}
    out.update(over)
    return out


def _conv_fallback(lo: Lowering, op: RelayOp, izp: np.ndarray, kzp: np.ndarray, name: str) -> SSAValue:
    """Relay's Conv2DFallBack: subtract the zero points in int32 (or wider), then convolve."""
    a = op.attrs
    up = "int64" if a["out_dtype"] == "int64" else "int32"
    data, weight = op.operands[0], op.operands[1]
    d = lo.cast(data, up)
    if not _equal_scalar(izp, 0):
        d = lo("subtract", [d, lo.scalar(int(izp.reshape(())), up)])
    w = lo.cast(weight, up)
    if not (kzp.size == 1 and _equal_scalar(kzp, 0)):
        kl = a["kernel_layout"]
        o_axis = kl.index("O")
        if kzp.ndim and kzp.size > 1:
            k = lo.along(kzp.astype(up), o_axis, 4, up)
        else:
            k = lo.scalar(int(kzp.reshape(-1)[0]), up)
        w = lo("subtract", [w, k])
    attrs = _conv_attrs(a)
    if name == "nn.conv2d_transpose":
        attrs["output_padding"] = a["output_padding"]
    return lo(name, [d, w], **attrs)


def lower_conv2d(lo: Lowering, op: RelayOp) -> SSAValue:
    a = op.attrs
    data, weight = op.operands[0], op.operands[1]
    izp, kzp = _params(op, 2, ("input_zero_point", "kernel_zero_point"))
    dl, kl = a["data_layout"], a["kernel_layout"]
    if dl not in ("NCHW", "NHWC") or kl not in ("OIHW", "HWIO", "HWOI", "OHWI"):
        raise RelayTypeError(
            f"{op.name}: only NCHW/NHWC data and OIHW/HWIO/HWOI/OHWI kernels lower (as in Relay), "
            f"got {dl}/{kl}"
        )
    ds, ws = shape_of(data.type), shape_of(weight.type)
    kh, kw = ws[kl.index("H")], ws[kl.index("W")]
    out_channels = ws[kl.index("O")]
    in_channels = ds[dl.index("C")]
    groups = a["groups"]
    depthwise = a["channels"] is not None and a["channels"] == groups and groups != 1
    multiplier = ws[kl.index("I")] if depthwise else 1
    if not (_is_scalar(izp) and _is_scalar(kzp)):
        return _conv_fallback(lo, op, izp, kzp, "nn.conv2d")
    izp_i, kzp_i = int(izp), int(kzp)
    supported = (kzp_i == 0 or tuple(a["dilation"]) == (1, 1)) and (groups == 1 or depthwise)
    if not supported or (depthwise and (multiplier != 1 or kl == "OHWI")):
        return _conv_fallback(lo, op, izp, kzp, "nn.conv2d")
    c_axis = dl.index("C")
    # pad with the input zero point, so the padded values contribute nothing
    padded = data
    if any(a["padding"]):
        pt, pl, pb, pr = a["padding"]
        pw = [[0, 0]] * 4
        pw[dl.index("H")], pw[dl.index("W")] = [pt, pb], [pl, pr]
        padded = lo("nn.pad", [data, lo.scalar(izp_i, tensor_dtype(data))], pad_width=pw)
    term1 = lo("nn.conv2d", [padded, weight], **_conv_attrs(a, padding=(0, 0, 0, 0)))
    if izp_i == 0 and kzp_i == 0:
        return term1

    def pool(x: SSAValue) -> SSAValue:
        # the window sum as an average of values scaled by the window size (exact)
        if kh * kw != 1:
            x = lo("multiply", [x, lo.scalar(kh * kw, "int32")])
        elif tuple(a["strides"]) == (1, 1):
            return x
        return lo(
            "nn.avg_pool2d", [x], pool_size=a["kernel_size"] or (kh, kw), strides=a["strides"],
            dilation=a["dilation"], padding=(0, 0), layout=dl, ceil_mode=False, count_include_pad=False,
        )  # fmt: skip

    term2 = None
    if kzp_i != 0:
        t2 = lo.cast(padded, "int32")
        if not depthwise:
            t2 = lo("sum", [t2], axis=[c_axis], keepdims=True)
        t2 = pool(t2)
        term2 = t2 if kzp_i == 1 else lo("multiply", [lo.scalar(kzp_i, "int32"), t2])
    term3 = None
    if izp_i != 0:
        hw = [kl.index("H"), kl.index("W")]
        axes = hw if depthwise else sorted([*hw, kl.index("I")])
        t3 = lo("sum", [lo.cast(weight, "int32")], axis=axes, keepdims=False)
        n_out = out_channels * multiplier if depthwise else out_channels
        shape = [1, 1, 1, 1]
        shape[c_axis] = n_out
        t3 = lo("reshape", [t3], newshape=shape)
        term3 = t3 if izp_i == 1 else lo("multiply", [lo.scalar(izp_i, "int32"), t3])
    if izp_i == 0:
        return lo("subtract", [term1, term2])
    if kzp_i == 0:
        return lo("subtract", [term1, term3])
    k = kh * kw if depthwise else in_channels * kh * kw
    up = "int64" if a["out_dtype"] == "int64" and not depthwise else "int32"
    term4 = lo.scalar(izp_i * kzp_i * k, up)
    return lo("add", [lo("subtract", [term1, term2]), lo("subtract", [term4, term3])])


def lower_conv2d_transpose(lo: Lowering, op: RelayOp) -> SSAValue:
    izp, kzp = _params(op, 2, ("input_zero_point", "kernel_zero_point"))
    return _conv_fallback(lo, op, izp, kzp, "nn.conv2d_transpose")


def _matmul_terms(lo, op, term1, x, y, izp, kzp, x_sum_axis, y_sum_axis, k, y_expand):
    if not (_is_scalar(izp) and _is_scalar(kzp)):
        izp_v, kzp_v = lo.b.const(izp.astype(np.int32), "int32"), lo.b.const(kzp.astype(np.int32), "int32")
        t2 = lo("multiply", [kzp_v, lo("sum", [lo.cast(x, "int32")], axis=[x_sum_axis], keepdims=True)])
        t3 = lo("multiply", [izp_v, y_expand(lo("sum", [lo.cast(y, "int32")], axis=[y_sum_axis]))])
        t4 = lo("multiply", [lo("multiply", [izp_v, kzp_v]), lo.scalar(k, "int32")])
        return lo("add", [lo("subtract", [term1, t2]), lo("subtract", [t4, t3])])
    izp_i, kzp_i = int(izp), int(kzp)
    if izp_i == 0 and kzp_i == 0:
        return term1
    t2 = t3 = None
    if kzp_i != 0:
        s = lo("sum", [lo.cast(x, "int32")], axis=[x_sum_axis], keepdims=True)
        t2 = lo("multiply", [lo.scalar(kzp_i, "int32"), s])
    if izp_i != 0:
        s = y_expand(lo("sum", [lo.cast(y, "int32")], axis=[y_sum_axis]))
        t3 = lo("multiply", [lo.scalar(izp_i, "int32"), s])
    if izp_i == 0:
        return lo("subtract", [term1, t2])
    if kzp_i == 0:
        return lo("subtract", [term1, t3])
    t4 = lo.scalar(izp_i * kzp_i * k, "int32")
    return lo("add", [lo("subtract", [term1, t2]), lo("subtract", [t4, t3])])


def lower_dense(lo: Lowering, op: RelayOp) -> SSAValue:
    x, w = op.operands[0], op.operands[1]
    izp, kzp = _params(op, 2, ("input_zero_point", "kernel_zero_point"))
    a = op.attrs
    term1 = lo("nn.dense", [x, w], units=a["units"], out_dtype=a["out_dtype"])
    rank = len(shape_of(x.type))
    k = shape_of(x.type)[-1]
    return _matmul_terms(lo, op, term1, x, w, izp, kzp, rank - 1, 1, k, lambda v: v)


def lower_batch_matmul(lo: Lowering, op: RelayOp) -> SSAValue:
    x, y = op.operands[0], op.operands[1]
    izp, kzp = _params(op, 2, ("x_zero_point", "y_zero_point"))
    a = op.attrs
    term1 = lo(
        "nn.batch_matmul", [x, y], out_dtype=a["out_dtype"], transpose_a=False, transpose_b=True
    )
    k = shape_of(x.type)[2]
    return _matmul_terms(
        lo, op, term1, x, y, izp, kzp, 2, 2, k, lambda v: lo("expand_dims", [v], axis=1)
    )


def _binary_params(op: RelayOp):
    return _params(
        op, 2, ("lhs_scale", "lhs_zero_point", "rhs_scale", "rhs_zero_point", "output_scale",
                "output_zero_point"),
    )  # fmt: skip


def _lower_add_sub(lo: Lowering, op: RelayOp, combine: str, undo: str) -> SSAValue:
    lhs, rhs = op.operands[0], op.operands[1]
    s_l, zp_l, s_r, zp_r, s_o, zp_o = _binary_params(op)
    a = op.attrs
    rank = len(shape_of(lhs.type))
    l_ax = a["lhs_axis"] if rank > 1 else 0
    r_ax = a["rhs_axis"] if len(shape_of(rhs.type)) > 1 else 0
    left = lo.requantize_or_upcast(lhs, s_l, zp_l, s_o, zp_o, l_ax)
    right = lo.requantize_or_upcast(rhs, s_r, zp_r, s_o, zp_o, r_ax)
    out = lo(combine, [left, right])
    if not _equal_scalar(zp_o, 0):
        out = lo(undo, [out, lo.b.const(zp_o.astype(np.int32), "int32")])
    return lo.clip_cast(out, tensor_dtype(lhs))


def lower_add(lo: Lowering, op: RelayOp) -> SSAValue:
    return _lower_add_sub(lo, op, "add", "subtract")


def lower_subtract(lo: Lowering, op: RelayOp) -> SSAValue:
    return _lower_add_sub(lo, op, "subtract", "add")


def lower_mul(lo: Lowering, op: RelayOp) -> SSAValue:
    lhs, rhs = op.operands[0], op.operands[1]
    s_l, zp_l, s_r, zp_r, s_o, zp_o = _binary_params(op)
    a = op.attrs
    dtype = tensor_dtype(lhs)
    rank = len(shape_of(lhs.type))
    if _is_scalar(s_l) and _is_scalar(s_r):
        ls, rs = lo.cast(lhs, "int32"), lo.cast(rhs, "int32")
        if not _equal_scalar(zp_l, 0):
            ls = lo("subtract", [ls, lo.b.const(zp_l.astype(np.int32), "int32")])
        if not _equal_scalar(zp_r, 0):
            rs = lo("subtract", [rs, lo.b.const(zp_r.astype(np.int32), "int32")])
        new_scale = np.float32(s_l) * np.float32(s_r)
        return lo.requantize(lo("multiply", [ls, rs]), new_scale, np.int32(0), s_o, zp_o, dtype)
    if a["lhs_axis"] != a["rhs_axis"]:
        raise RelayTypeError(f"{op.name}: per-channel lhs_axis and rhs_axis must be the same (as in Relay)")
    ax = _axis(a["lhs_axis"], rank)
    ls, rs = lo.cast(lhs, "int32"), lo.cast(rhs, "int32")
    if not _equal_scalar(zp_l, 0):
        ls = lo("subtract", [ls, lo.along(zp_l, ax, rank, "int32")])
    if not _equal_scalar(zp_r, 0):
        rs = lo("subtract", [rs, lo.along(zp_r, ax, rank, "int32")])
    sl, sr = np.asarray(s_l, np.float32).reshape(-1), np.asarray(s_r, np.float32).reshape(-1)
    n = max(sl.size, sr.size)
    scales = np.array([float(sl[i % sl.size]) * float(sr[i % sr.size]) for i in range(n)], np.float32)
    return lo.requantize(lo("multiply", [ls, rs]), scales, np.int32(0), s_o, zp_o, dtype, a["lhs_axis"])


def lower_concatenate(lo: Lowering, op: RelayOp) -> SSAValue:
    tensors, scales, zps, s_o, zp_o = type(op).split_operands(list(op.operands))
    out_s, out_zp = _const(op, s_o, "output_scale"), _const(op, zp_o, "output_zero_point")
    parts = []
    for i, (t, s, zp) in enumerate(zip(tensors, scales, zps)):
        sv, zv = _const(op, s, f"input_scales[{i}]"), _const(op, zp, f"input_zero_points[{i}]")
        if _equal_scalar(sv, float(out_s)) and _equal_scalar(zv, float(out_zp)):
            parts.append(t)
        else:
            parts.append(lo.requantize(t, sv, zv, out_s, out_zp, tensor_dtype(t)))
    return lo("concatenate", parts, axis=op.attrs["axis"])


def lower_avg_pool2d(lo: Lowering, op: RelayOp) -> SSAValue:
    x = op.operands[0]
    s_in, zp_in, s_o, zp_o = _params(
        op, 1, ("input_scale", "input_zero_point", "output_scale", "output_zero_point")
    )
    a = op.attrs
    v = lo.requantize_or_upcast(x, s_in, zp_in, s_o, zp_o)
    v = lo("nn.avg_pool2d", [v], **a)
    return lo.clip_cast(v, tensor_dtype(x))


LOWERINGS = {
    "qnn.quantize": lower_quantize,
    "qnn.dequantize": lower_dequantize,
    "qnn.requantize": lower_requantize,
    "qnn.conv2d": lower_conv2d,
    "qnn.conv2d_transpose": lower_conv2d_transpose,
    "qnn.dense": lower_dense,
    "qnn.batch_matmul": lower_batch_matmul,
    "qnn.add": lower_add,
    "qnn.subtract": lower_subtract,
    "qnn.mul": lower_mul,
    "qnn.concatenate": lower_concatenate,
    "qnn.avg_pool2d": lower_avg_pool2d,
}
"""Relay name -> lowering; the simulated ops have none (Relay computes them directly)."""


class LowerQnnOp(RewritePattern):
    """Replace one qnn op by the integer relay ops of its Relay canonicalization."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if type(op) not in _CLASSES:
            return
        assert isinstance(op, RelayOp)
        lowered = LOWERINGS[op.RELAY_NAME](Lowering(rewriter, op), op)
        if lowered.type != op.results[0].type:
            raise RelayTypeError(
                f"{op.name}: lowering gave {lowered.type}, the op has {op.results[0].type}"
            )
        if op.results[0].name_hint and lowered.owner is not None:
            lowered.name_hint = op.results[0].name_hint
        params = [o.owner for o in op.operands[1:]]
        rewriter.replace(op, [], [lowered])
        for owner in params:  # scales and zero points now unused
            if isinstance(owner, ConstantOp) and owner.parent is not None and not owner.result.uses:
                rewriter.erase(owner)


_CLASSES = frozenset(QNN_OPS[name] for name in LOWERINGS)


def canonicalize_qnn(module: ModuleOp) -> None:
    PatternRewriteWalker(
        GreedyRewritePatternApplier([LowerQnnOp()], dce_enabled=False), apply_recursively=False
    ).rewrite_module(module)


@dataclass(frozen=True)
class QnnCanonicalizeOpsPass(ModulePass):
    """Lower qnn ops to integer relay ops (Relay's ``qnn.transform.CanonicalizeOps``)."""

    name = "qnn-canonicalize-ops"
    relay_name: ClassVar[str] = "QnnCanonicalize"
    opt_level: ClassVar[int] = 1
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        canonicalize_qnn(op)
