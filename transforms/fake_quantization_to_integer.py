"""``fake-quantization-to-integer``: float ops between dequantize and quantize become integer ops.

Relay's ``FakeQuantizationToInteger`` (``src/relay/transforms/fake_quantization_to_integer.cc``):
a QDQ model (``qnn.dequantize`` -> float op -> ``qnn.quantize``, as ONNX QDQ imports give)
computes in integers. Each float value that is exactly ``dequantize(q, scale, zero_point)`` of
an integer value is tracked through the ops below, and a ``qnn.quantize`` of such a value becomes
``qnn.requantize`` of the integer one; the float ops then die.

* ``nn.conv2d`` / ``nn.dense`` / ``nn.matmul`` (constant B) / ``nn.batch_matmul`` of dequantized
  operands: ``qnn.conv2d`` / ``qnn.dense`` / ``qnn.batch_matmul`` — int32 results with scale
  ``s_x * s_w`` (per output channel for per-channel weights) and zero point 0;
* ``add`` / ``nn.bias_add`` of such a result and a float constant: the constant quantized to int32
  with the result's scale (as onnxruntime quantizes biases);
* ``add`` of two dequantized values quantized by one ``qnn.quantize``: ``qnn.add``;
* ``nn.relu`` (``maximum(q, zp)``), ``nn.max_pool2d`` (positive scales), ``nn.global_avg_pool2d``
  (the int32 sum, scale ``s / (H*W)``, zero point ``zp * H*W``), and the layout ops ``reshape``,
  ``nn.batch_flatten``, ``transpose``, ``squeeze``, ``expand_dims`` and ``take`` (its data) on
  per-tensor values.

Everything else stays float (Relay leaves ops without a rule too). The requantize uses the
current ``requantize_config`` (UPWARD, int64 by default).

``onnxruntime=true`` writes the integer program with onnxruntime's arithmetic instead of Relay's
(what its fused QDQ kernels -- QLinearConv, QGemm, QLinearMatMul, QLinearGlobalAveragePool,
QLinearAdd -- compute, checked bit for bit against onnxruntime 1.31 on x86-64): the int32
accumulator times a float32 multiplier, rounded half to even, then the zero point
(``ort_requantize``), and QLinearAdd's float32 multiply-adds (``ort_add``, broadcasting as
QLinearAdd does: a bias vector added to a quantized MatMul). The float ops onnxruntime keeps
between quantized values run its kernels' arithmetic too: reductions in its order
(``qnn.dequantize_sum``, ``cumsum``), LayerNormalization (``qnn.ort_layer_norm``) and GELU in
each form exporters write (``qnn.ort_gelu``). Relay's own ops
cannot say this: ``qnn.requantize`` rounds half up (int64) or half away from zero (float,
Relay's ``round``) and adds the output zero point before rounding, and ``qnn.add`` rounds twice,
so these are plain relay ops after the ``qnn.conv2d``/``qnn.dense``.

```mlir
%x = qnn.dequantize %q, %sx, %zx : (tensor<1x3x8x8xui8>, tensor<f32>, tensor<i32>) -> tensor<1x3x8x8xf32>
%w = qnn.dequantize %wq, %sw, %zw {axis = 0} : (tensor<4x3x3x3xi8>, tensor<4xf32>, tensor<i32>) -> tensor<4x3x3x3xf32>
%c = relay.nn.conv2d %x, %w {...} : (...) -> tensor<1x4x6x6xf32>
%y = qnn.quantize %c, %sy, %zy {out_dtype = "uint8"} : (...) -> tensor<1x4x6x6xui8>
// becomes
%acc = qnn.conv2d %q, %wq, %zx, %zw, %sx, %sw {...} : (...) -> tensor<1x4x6x6xi32>
%y = qnn.requantize %acc, %s_acc, %zero, %sy, %zy {axis = 1, out_dtype = "uint8"} : (...) -> tensor<1x4x6x6xui8>
```
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from xrelay.dialects.qnn import QNN_OPS
from xrelay.dialects.relay import RELAY_OPS, ConstantOp, OpPattern, RelayOp, shape_of
from xrelay.dialects.relay.ops import reduce_axes
from xrelay.transforms._relay_rewrite import constant_value, tensor_dtype
from xrelay.transforms.dead_code_elimination import DeadCodeEliminationPass


@dataclass
class Affine:
    """A float value that equals ``(q - zp) * scale``; ``axis`` is where vector parameters lie."""

    q: SSAValue
    scale: np.ndarray
    zp: np.ndarray
    axis: int | None = None
    pool: tuple[np.ndarray, int] | None = None
    """For an integer average (a sum of ``n`` values of scale ``s``): ``(s, n)``. onnxruntime's
    multiplier is then ``s / (s_out * n)``, not ``(s / n) / s_out``."""
    product: bool = False
    """An elementwise product of two 8-bit values (``rule_multiply``): onnxruntime's QLinearMul
    requantizes it with the zero point added before rounding (``ort_requantize``)."""

    @property
    def per_tensor(self) -> bool:
        return self.scale.size == 1 and self.zp.size == 1


class _Builder:
    def __init__(self, anchor: Operation):
        self.anchor = anchor

    def op(self, name: str, operands: list[SSAValue], **attrs) -> SSAValue:
        cls = QNN_OPS[name] if name.startswith("qnn.") else RELAY_OPS[name]
        new = cls.make(operands, **attrs)
        Rewriter.insert_op(new, InsertPoint.before(self.anchor))
        return new.results[0]

    def const(self, array: np.ndarray, dtype: str) -> SSAValue:
        new = ConstantOp.from_numpy(np.asarray(array).astype(np.dtype(dtype)), None, dtype)
        Rewriter.insert_op(new, InsertPoint.before(self.anchor))
        return new.result


def _is_scalar_const(v: SSAValue | None, value: float) -> bool:
    c = constant_value(v) if v is not None else None
    return c is not None and c.size == 1 and c.dtype == np.float32 and float(c.reshape(())) == np.float32(value)


def _only_use(v: SSAValue) -> RelayOp | None:
    """The one op that uses ``v`` (once), or None."""
    uses = list(v.uses)
    if len(uses) != 1 or not isinstance(uses[0].operation, RelayOp):
        return None
    return uses[0].operation


def _other(op: RelayOp, v: SSAValue, const: float | None = None) -> SSAValue | None:
    """The binary ``op``'s operand that is not ``v`` (with ``const``: ``op`` is ``v`` times
    that scalar constant, in either order; the constant operand is returned)."""
    a, b = op.operands
    other = b if a is v else a if b is v else None
    if const is not None and (other is None or not _is_scalar_const(other, const)):
        return None
    return other


def _gelu_input(t: SSAValue) -> SSAValue | None:
    """``x`` when ``t`` is ``x * (1 / sqrt 2)`` or ``x / sqrt 2`` (float32 constants, as
    onnxruntime's GeluFusion accepts them) used only by the erf."""
    op = t.owner
    if not isinstance(op, RelayOp) or len(list(t.uses)) != 1 or op.RELAY_NAME not in ("multiply", "divide"):
        return None
    a, b = op.operands
    if op.RELAY_NAME == "divide":
        return a if _is_scalar_const(b, float(np.float32(np.sqrt(2.0)))) else None
    inv = float(np.float32(1 / np.sqrt(2.0)))
    return a if _is_scalar_const(b, inv) else b if _is_scalar_const(a, inv) else None


def _scalar(a: np.ndarray) -> np.ndarray:
    return a.reshape(()) if a.size == 1 else a.reshape(-1)


ROUND_EVEN = 12582912.0
"""1.5 * 2**23: ``(x + ROUND_EVEN) - ROUND_EVEN`` is ``x`` rounded half to even in float32 (the
sum's last bit is the unit, and IEEE addition rounds to nearest even) for |x| < 2**22; beyond
that only values far outside every 8/16-bit range change, and they clip alike."""


def _round_even(b: _Builder, f: SSAValue) -> SSAValue:
    return b.op("subtract", [b.op("add", [f, b.const(np.float32(ROUND_EVEN), "float32")]), b.const(np.float32(ROUND_EVEN), "float32")])


def _along(a: np.ndarray, axis: int | None, rank: int) -> np.ndarray:
    a = np.asarray(a)
    if a.size == 1:
        return a.reshape(())
    shape = [1] * rank
    shape[axis if axis is not None else rank - 1] = a.size
    return a.reshape(shape)


def _clip_cast(b: _Builder, i: SSAValue, out_dtype: str) -> SSAValue:
    info = np.iinfo(np.dtype(out_dtype))
    return b.op("cast", [b.op("clip", [i], a_min=float(info.min), a_max=float(info.max))], dtype=out_dtype)


def _to_quantized(b: _Builder, f: SSAValue, zp: np.ndarray, out_dtype: str) -> SSAValue:
    """float32 ``f`` to ``out_dtype`` as MLAS finishes a requantize: clamped to
    ``[min - zp, max - zp]`` in float32 (so values beyond int32 saturate), rounded half to even,
    converted, the zero point added."""
    info = np.iinfo(np.dtype(out_dtype))
    z = int(np.asarray(zp).reshape(()))
    f = b.op("clip", [f], a_min=float(info.min - z), a_max=float(info.max - z))
    i = b.op("cast", [_round_even(b, f)], dtype="int32")
    if z:
        i = b.op("add", [i, b.const(np.int32(z), "int32")])
    return b.op("cast", [i], dtype=out_dtype)


def _concatenation(v: SSAValue) -> RelayOp | None:
    """The ``concatenate`` that makes ``v`` when its only use is one quantize."""
    op = v.owner
    if not isinstance(op, RelayOp) or op.RELAY_NAME != "concatenate" or len(list(v.uses)) != 1:
        return None
    if any(tensor_dtype(u) != "float32" for u in op.operands):
        return None
    return op


def _requantize_is_identity(a: Affine, s: np.ndarray, zp: np.ndarray, out_dtype: str) -> bool:
    """Whether quantizing ``a``'s dequantized values with ``(s, zp)`` gives back its bytes:
    onnxruntime's arithmetic (float32 ``(q - zp_a) * s_a``, divided by ``s``, clipped, rounded
    half to even, ``zp`` added) computed on all 256 bytes."""
    dt = np.dtype(out_dtype)
    q = np.arange(256, dtype=np.uint8).view(dt)
    with np.errstate(all="ignore"):
        f = (q.astype(np.int32) - np.int32(a.zp)).astype(np.float32) * np.float32(a.scale)
        f = f / np.float32(np.asarray(s).reshape(()))
        z = int(np.asarray(zp).reshape(()))
        info = np.iinfo(dt)
        f = np.clip(f, np.float32(info.min - z), np.float32(info.max - z))
        if not np.isfinite(f).all():
            return False
        back = np.rint(f).astype(np.int32) + z
    return bool(np.array_equal(back, q.astype(np.int32)))


def ort_multiplier(a: Affine, out_scale: np.ndarray) -> np.ndarray:
    """onnxruntime's float32 requantize multiplier for the int32 value ``a`` (zero point 0):
    ``s_in / s_out`` (QLinearConv, QGemm, QLinearMatMul: ``s_in = s_x * s_w`` in float32), or
    ``s / (s_out * n)`` for an average of ``n`` values (QLinearGlobalAveragePool)."""
    s_out = np.float32(np.asarray(out_scale, np.float32).reshape(()))
    if a.pool is not None:
        s, n = a.pool
        return (np.asarray(s, np.float32) / np.float32(s_out * np.float32(n))).astype(np.float32)
    return (np.asarray(a.scale, np.float32) / s_out).astype(np.float32)


def ort_requantize(b: _Builder, a: Affine, out_scale: np.ndarray, out_zp: np.ndarray, out_dtype: str) -> SSAValue:
    """``a`` quantized to ``(out_scale, out_zp)`` as onnxruntime computes it.

    An int32 accumulator (MLAS's requantize): ``nearbyint(clamp(float32(acc) * M)) + zp``.
    Any other value (a DequantizeLinear followed by a QuantizeLinear):
    ``nearbyint(clamp(float32(q - zp_in) * s_in / s_out)) + zp``. ``nearbyint`` rounds half to
    even (``_round_even``); the clamp is to the output range minus the zero point."""
    rank = len(shape_of(a.q.type))
    f = b.op("cast", [a.q], dtype="float32")
    if a.product:
        # MLAS's QLinearMul: float32(p) * (s_a * s_b / s_out) + zp, rounded half to even, then
        # saturated (the zero point is added in float32 before the rounding; clamping to the
        # integer bounds before rounding saturates alike)
        z = int(np.asarray(out_zp).reshape(()))
        f = b.op("multiply", [f, b.const(ort_multiplier(a, out_scale), "float32")])
        if z:
            f = b.op("add", [f, b.const(np.float32(z), "float32")])
        info = np.iinfo(np.dtype(out_dtype))
        f = b.op("clip", [f], a_min=float(info.min), a_max=float(info.max))
        return b.op("cast", [b.op("cast", [_round_even(b, f)], dtype="int32")], dtype=out_dtype)
    if tensor_dtype(a.q) == "int32" and not np.any(a.zp != 0):
        f = b.op("multiply", [f, b.const(_along(ort_multiplier(a, out_scale), a.axis, rank), "float32")])
    else:
        if np.any(a.zp != 0):
            f = b.op("subtract", [f, b.const(_along(a.zp.astype(np.float32), a.axis, rank), "float32")])
        f = b.op("multiply", [f, b.const(_along(a.scale.astype(np.float32), a.axis, rank), "float32")])
        f = b.op("divide", [f, b.const(np.asarray(out_scale, np.float32).reshape(()), "float32")])
    return _to_quantized(b, f, out_zp, out_dtype)


def _fma32(x: np.ndarray, m: np.ndarray, c: np.ndarray) -> np.float32:
    return np.float32(np.float64(x) * np.float64(m) + np.float64(c))


def ort_add(b: _Builder, x: Affine, y: Affine, out_scale: np.ndarray, out_zp: np.ndarray, out_dtype: str) -> SSAValue:
    """QLinearAdd as onnxruntime's x86-64 kernel computes it (MLAS, AVX2 with FMA):
    ``nearbyint(fma(a, rA, fma(b, rB, zp_c - fma(zp_a, rA, rB * zp_b))))`` in float32 with
    ``rA = s_a / s_c``, ``rB = s_b / s_c``. Each fused multiply-add is a float64 multiply-add
    rounded to float32 (exact here: an 8-bit value times a float32 needs 32 bits), so relay's
    float64 ops give the same bits."""
    sc = np.float32(np.asarray(out_scale, np.float32).reshape(()))
    ra, rb = np.float32(np.float32(x.scale) / sc), np.float32(np.float32(y.scale) / sc)
    za, zb = np.float32(int(x.zp)), np.float32(int(y.zp))
    fixed = np.float32(np.float32(int(np.asarray(out_zp).reshape(()))) - _fma32(za, ra, np.float32(rb * zb)))

    def fma(q: SSAValue, m: np.float32, c: SSAValue) -> SSAValue:
        prod = b.op("multiply", [b.op("cast", [q], dtype="float64"), b.const(np.float64(m), "float64")])
        return b.op("cast", [b.op("add", [prod, c])], dtype="float32")

    t = fma(y.q, rb, b.const(np.float64(fixed), "float64"))
    t = fma(x.q, ra, b.op("cast", [t], dtype="float64"))
    return _clip_cast(b, b.op("cast", [_round_even(b, t)], dtype="int32"), out_dtype)


def ort_softmax(b: _Builder, x: Affine, axis: int, out_scale: np.ndarray, out_zp: np.ndarray) -> SSAValue:
    """QLinearSoftmax (uint8 in and out) as onnxruntime computes it: ``qnn.ort_softmax`` (a
    256-entry float32 table of ``exp((i - 255 + shift) * s_x)`` indexed by ``q - max(q) + 255``,
    the row summed first to last, ``nearbyint(t * floor(1 / s_y) / sum) + zp``)."""
    s_y = np.float32(np.asarray(out_scale, np.float32).reshape(()))
    zp = np.int32(int(np.asarray(out_zp).reshape(())))
    params = [b.const(np.float32(x.scale), "float32"), b.const(s_y, "float32"), b.const(zp, "int32")]
    return b.op("qnn.ort_softmax", [x.q, *params], axis=axis)


EIGEN_LANES = 4
"""float32 lanes of onnxruntime's Eigen packets on x86-64 (SSE: 16 bytes)."""


def eigen_sum_layout(rows: int, n: int) -> tuple[np.ndarray, int, int]:
    """Where each element of each row goes when Eigen (onnxruntime's CPU ReduceSum/ReduceMean
    over trailing axes: ``ConstEigenVectorArrayMap(row).sum()``) sums a row of ``n`` float32
    values, the rows stored one after another from a 16-byte aligned address.

    Eigen's vectorised reduction (``redux_impl``, linear vectorised traversal) skips the ``h``
    head elements before the first aligned address, sums the aligned 4-lane packets into two
    accumulators (even and odd packets, in order), adds them, adds a last odd packet, adds the
    lanes as ``(l0 + l2) + (l1 + l3)``, then adds the head and the tail elements one by one
    (no packet at all: all elements one by one). ``h`` is ``-(r * n) mod 4`` for row ``r``, so
    rows differ when ``n % 4 != 0``.

    Returns ``(index, pairs, rest)``: ``index`` (``rows`` x ``pairs * 8 + 4 + rest``) holds
    for each row the flat element index of ``pairs`` packet pairs, the odd packet, and the
    ``rest`` head-then-tail elements; ``rows * n`` (a zero appended to the data) fills what a
    row lacks -- adding +0.0 changes no sum."""
    lanes = EIGEN_LANES
    layouts = []
    for r in range(rows):
        base = r * n
        h = min((-base) % lanes, n)
        packed = (n - h) // lanes * lanes
        paired = (n - h) // (2 * lanes) * (2 * lanes)
        if packed == lanes:
            paired = 0  # one packet: it is the first accumulator, there is no second
        pairs = list(range(base + h, base + h + paired))
        if packed == lanes:
            pairs = list(range(base + h, base + h + lanes)) + [-1] * lanes
        odd = list(range(base + h + paired, base + h + packed)) if packed > lanes and packed > paired else []
        rest = list(range(base, base + h)) + list(range(base + h + packed, base + n))
        layouts.append((pairs, odd, rest))
    width_pairs = max(len(p) for p, _, _ in layouts) // (2 * lanes)
    width_rest = max(len(t) for _, _, t in layouts)
    zero = rows * n
    index = np.full((rows, width_pairs * 2 * lanes + lanes + width_rest), zero, np.int32)
    for r, (pairs, odd, rest) in enumerate(layouts):
        index[r, : len(pairs)] = [zero if i < 0 else i for i in pairs]
        o = width_pairs * 2 * lanes
        index[r, o : o + len(odd)] = odd
        index[r, o + lanes : o + lanes + len(rest)] = rest
    return index, width_pairs, width_rest


def fast_reduce_kind(shape: list[int], axes: tuple[int, ...]) -> tuple[str, int, int] | None:
    """onnxruntime's fast reduction kind for a reduction of ``shape`` over ``axes`` (size-1
    axes dropped, neighbours merged): ``("KR", rows, n)`` when the reduced axes are the trailing
    ones (rows of ``n`` contiguous values, each summed by Eigen: ``eigen_sum_layout``), or
    ``("RK", n, cols)`` when they are the leading ones (``n`` rows of ``cols`` added one after
    another, element by element: a sequential sum per column). None otherwise (onnxruntime
    sums those in other orders), or when nothing is reduced."""
    big = [(i in axes, d) for i, d in enumerate(shape) if d != 1]
    if any(d == 0 for d in shape) or not any(r for r, _ in big):
        return None
    flags = [r for r, _ in big]
    n = int(np.prod([d for r, d in big if r], dtype=np.int64))
    kept = int(np.prod([d for r, d in big if not r], dtype=np.int64))
    first = flags.index(True)
    if all(flags[first:]) and not any(flags[:first]):
        return "KR", kept, n
    last = len(flags) - 1 - flags[::-1].index(True)
    if all(flags[: last + 1]) and not any(flags[last + 1 :]):
        return "RK", n, kept
    return None


def ort_reduce_sum(b: _Builder, x: SSAValue, rows: int, n: int) -> SSAValue:
    """The ``rows`` x 1 float32 sums of the contiguous rows of ``n`` of ``x``, added in
    onnxruntime's order (``eigen_sum_layout``), as relay ops: the elements gathered to that
    layout (a plain slice when every row starts aligned), each accumulator's packets summed by
    ``cumsum`` (sequential by definition), the lanes, then the head and tail by ``cumsum``."""
    lanes = EIGEN_LANES
    i32 = lambda v: [int(t) for t in v]  # noqa: E731
    flat = b.op("reshape", [x], newshape=[rows * n])

    def cols(v: SSAValue, lo: int, hi: int) -> SSAValue:
        return b.op("strided_slice", [v], begin=i32([0, lo]), end=i32([rows, hi]), strides=[1, 1])

    if n % lanes == 0:
        pairs = n // (2 * lanes)
        # every row starts aligned: the layout is the rows themselves (no odd packet when
        # n % 8 == 0, no head or tail)
        table = b.op("reshape", [flat], newshape=[rows, n])
        odd = n % (2 * lanes) != 0 and n > lanes
        if n == lanes:
            packets = table
        else:
            acc = cols(table, 0, pairs * 2 * lanes)
            acc = b.op("reshape", [acc], newshape=[rows, pairs, 2 * lanes])
            acc = b.op("cumsum", [acc], axis=1)
            acc = b.op("reshape", [b.op("strided_slice", [acc], begin=[0, pairs - 1, 0], end=i32([rows, pairs, 2 * lanes]), strides=[1, 1, 1])], newshape=[rows, 2 * lanes])
            packets = b.op("add", [cols(acc, 0, lanes), cols(acc, lanes, 2 * lanes)])
            if odd:
                packets = b.op("add", [packets, cols(table, pairs * 2 * lanes, n)])
        tail = None
    else:
        index, pairs, rest = eigen_sum_layout(rows, n)
        padded = b.op("concatenate", [flat, b.const(np.zeros(1, np.float32), "float32")], axis=0)
        table = b.op("take", [padded, b.const(index, "int32")], axis=0)
        o = pairs * 2 * lanes
        if pairs:
            acc = b.op("reshape", [cols(table, 0, o)], newshape=[rows, pairs, 2 * lanes])
            acc = b.op("cumsum", [acc], axis=1)
            acc = b.op("reshape", [b.op("strided_slice", [acc], begin=[0, pairs - 1, 0], end=i32([rows, pairs, 2 * lanes]), strides=[1, 1, 1])], newshape=[rows, 2 * lanes])
            packets = b.op("add", [b.op("add", [cols(acc, 0, lanes), cols(acc, lanes, 2 * lanes)]), cols(table, o, o + lanes)])
        else:
            packets = None
        tail = cols(table, o + lanes, o + lanes + rest) if rest else None
    if packets is None:
        total = b.const(np.zeros((rows, 1), np.float32), "float32")
    else:
        lane = [cols(packets, k, k + 1) for k in range(lanes)]
        total = b.op("add", [b.op("add", [lane[0], lane[2]]), b.op("add", [lane[1], lane[3]])])
    if tail is not None:
        run = b.op("cumsum", [b.op("concatenate", [total, tail], axis=1)], axis=1)
        total = cols(run, rest, rest + 1)
    return total


def ort_sequential_sum(b: _Builder, x: SSAValue, shape: list[int], axis: int) -> SSAValue:
    """``x`` viewed as ``shape`` (two axes) summed along ``axis``, each sum added first to last
    (onnxruntime's ReduceSum over leading axes, row after row): ``cumsum``'s last slice."""
    run = b.op("cumsum", [b.op("reshape", [x], newshape=[int(d) for d in shape])], axis=axis)
    begin = [0, 0]
    begin[axis] = shape[axis] - 1
    return b.op("strided_slice", [run], begin=begin, end=[int(d) for d in shape], strides=[1, 1])


_LAYOUT_FREE = (OpPattern.ELEMWISE, OpPattern.BROADCAST)


def _through(v: SSAValue, forward: bool, limit: int = 512) -> bool:
    """Whether a convolution is reached from ``v`` through quantize, dequantize and
    elementwise ops only (``forward``: along the uses; else along the operands), looking at up
    to ``limit`` ops."""
    seen: set[int] = set()
    todo = [v]
    while todo and len(seen) < limit:
        value = todo.pop()
        if forward:
            ops = [u.operation for u in value.uses]
        else:
            ops = [value.owner] if isinstance(value.owner, RelayOp) else []
        for op in ops:
            if not isinstance(op, RelayOp) or id(op) in seen:
                continue
            seen.add(id(op))
            if op.RELAY_NAME in ("nn.conv2d", "qnn.conv2d"):
                return True
            if op.RELAY_NAME in ("qnn.quantize", "qnn.dequantize") or op.PATTERN in _LAYOUT_FREE:
                todo.extend(op.results if forward else [o for o in op.operands if not isinstance(o.owner, ConstantOp)])
    return False


def ort_channels_last(op: RelayOp, axes: tuple[int, ...]) -> bool:
    """Whether onnxruntime runs the NCHW reduction ``op`` channels-last: its NhwcTransformer
    runs quantized convolutions in NHWC and its transpose optimizer carries that layout through
    the quantize, dequantize and elementwise ops around them, so a keepdims reduction over H
    and W fed by a convolution and feeding one (a squeeze-and-excitation mean) runs on NHWC
    data; one that leaves the convolutions (a final pooling before a flatten) is transposed
    back to NCHW first."""
    x = op.operands[0]
    if len(shape_of(x.type)) != 4 or set(axes) != {2, 3} or not op.attrs["keepdims"]:
        return False
    return _through(x, forward=False) and _through(op.results[0], forward=True)


class FakeQuantizationToInteger:
    """One forward walk over a function: track affine values, rewrite what a rule covers."""

    def __init__(self, integer_add: bool = True, onnxruntime: bool = False) -> None:
        self.integer_add = integer_add or onnxruntime
        self.onnxruntime = onnxruntime
        self.aff: dict[SSAValue, Affine] = {}
        self.adds: dict[SSAValue, tuple[Affine, Affine]] = {}
        self.softmaxes: dict[SSAValue, tuple[Affine, int]] = {}
        self.changed = False

    def run(self, fn: func.FuncOp) -> None:
        for op in list(fn.walk()):
            if isinstance(op, RelayOp) and op.parent is not None:
                self.visit(op)

    def visit(self, op: RelayOp) -> None:
        name = op.RELAY_NAME
        rule = getattr(self, "rule_" + name.replace(".", "_"), None)
        if rule is None:
            return
        if name in ("qnn.dequantize", "qnn.quantize") or any(o in self.aff for o in op.operands):
            rule(op)
        elif self.onnxruntime and name in ("sum", "mean", "nn.layer_norm", "erf"):
            rule(op)

    def get(self, v: SSAValue) -> Affine | None:
        return self.aff.get(v)

    # ---- sources and sinks --------------------------------------------------------------

    def rule_qnn_dequantize(self, op: RelayOp) -> None:
        s, zp = constant_value(op.operands[1]), constant_value(op.operands[2])
        if s is None or zp is None or op.attrs["out_dtype"] != "float32":
            return
        rank = len(shape_of(op.operands[0].type))
        axis = op.attrs["axis"] % rank if rank else None
        self.aff[op.results[0]] = Affine(op.operands[0], _scalar(s.astype(np.float32)), _scalar(zp.astype(np.int32)), axis)

    def rule_qnn_quantize(self, op: RelayOp) -> None:
        v = op.operands[0]
        s, zp = constant_value(op.operands[1]), constant_value(op.operands[2])
        if s is None or zp is None or s.size != 1 or zp.size != 1:
            return
        out_dtype = op.attrs["out_dtype"]
        b = _Builder(op)
        a = self.get(v)
        if a is not None:
            if a.per_tensor and float(a.scale) == float(s) and int(a.zp) == int(zp) and tensor_dtype(a.q) == out_dtype:
                new = a.q
            elif self.onnxruntime:
                new = ort_requantize(b, a, s, zp, out_dtype)
            else:
                new = b.op(
                    "qnn.requantize",
                    [a.q, b.const(a.scale, "float32"), b.const(a.zp, "int32"), b.const(s.reshape(()), "float32"),
                     b.const(zp.reshape(()), "int32")],
                    axis=a.axis if a.axis is not None else -1, out_dtype=out_dtype,
                )  # fmt: skip
        elif v in self.softmaxes and out_dtype == "uint8":  # QLinearSoftmax: uint8 in and out
            x, axis = self.softmaxes[v]
            new = ort_softmax(b, x, axis, s, zp)
        elif self.onnxruntime and _concatenation(v) is not None and out_dtype in ("int8", "uint8"):
            new = self._ort_concatenate(b, _concatenation(v), s, zp, out_dtype)
        elif not self.onnxruntime and _concatenation(v) is not None:
            # Relay's rule: qnn.concatenate of the integer inputs (each requantized to the output)
            cat = _concatenation(v)
            parts = [self.get(u) for u in cat.operands]
            if any(a is None or not a.per_tensor or a.pool is not None or a.product or tensor_dtype(a.q) != out_dtype
                   for a in parts):  # fmt: skip
                return
            new = b.op(
                "qnn.concatenate",
                [*(a.q for a in parts), *(b.const(a.scale, "float32") for a in parts),
                 *(b.const(a.zp, "int32") for a in parts), b.const(s.reshape(()), "float32"),
                 b.const(zp.reshape(()), "int32")],
                **cat.attrs,
            )  # fmt: skip
        elif self.onnxruntime and v not in self.adds:
            # QuantizeLinear of a float value: nearbyint(x / s) + zp (Relay's rounds half away)
            if s.size != 1 or tensor_dtype(v) != "float32":
                return
            new = _to_quantized(b, b.op("divide", [v, b.const(s.reshape(()), "float32")]), zp, out_dtype)
        elif v in self.adds:
            x, y = self.adds[v]
            if not (tensor_dtype(x.q) == tensor_dtype(y.q) == out_dtype and x.per_tensor and y.per_tensor):
                return
            if self.onnxruntime:
                new = ort_add(b, x, y, s, zp, out_dtype)
                op.results[0].replace_all_uses_with(new)
                self.changed = True
                return
            new = b.op(
                "qnn.add",
                [x.q, y.q, b.const(x.scale, "float32"), b.const(x.zp, "int32"), b.const(y.scale, "float32"),
                 b.const(y.zp, "int32"), b.const(s.reshape(()), "float32"), b.const(zp.reshape(()), "int32")],
            )  # fmt: skip
        else:
            return
        op.results[0].replace_all_uses_with(new)
        self.changed = True

    def _ort_concatenate(self, b: _Builder, cat: RelayOp, s: np.ndarray, zp: np.ndarray, out_dtype: str) -> SSAValue:
        """QuantizeLinear of a Concat (onnxruntime's QLinearConcat when every input is
        dequantized): the quantize is elementwise, so it is each input's quantize, and the
        concatenation joins 8-bit values. An 8-bit input with the output's parameters is
        joined as it is (``_requantize_is_identity``); any other input is quantized on its
        own -- from its dequantized bytes that is a function of one byte, a 256-entry table at
        run time -- with the same float ops as before (the same bits)."""
        parts = []
        for u in cat.operands:
            a = self.get(u)
            exact = a is not None and a.per_tensor and a.pool is None and not a.product
            if exact and tensor_dtype(a.q) == out_dtype and _requantize_is_identity(a, s, zp, out_dtype):
                parts.append(a.q)
                continue
            if exact and not (isinstance(u.owner, RelayOp) and u.owner.RELAY_NAME == "qnn.dequantize"):
                # the float input of a max pool, relu or layout op of a dequantized value equals
                # the dequantized integer result (exactly: they are monotone or move values)
                u = b.op("qnn.dequantize", [a.q, b.const(a.scale, "float32"), b.const(a.zp, "int32")])
            parts.append(_to_quantized(b, b.op("divide", [u, b.const(s.reshape(()), "float32")]), zp, out_dtype))
        return b.op("concatenate", parts, **cat.attrs)

    # ---- products -----------------------------------------------------------------------

    def _weights(self, w: Affine, o_axis: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Kernel scale and zero point, per output channel along ``o_axis`` or per tensor."""
        if w.per_tensor:
            return w.scale, w.zp
        if w.axis != o_axis or not np.all(w.zp == w.zp.reshape(-1)[0]):
            return None
        return w.scale, w.zp.reshape(-1)[:1].reshape(())

    def rule_nn_conv2d(self, op: RelayOp) -> None:
        x, w = self.get(op.operands[0]), self.get(op.operands[1])
        a = op.attrs
        if x is None or w is None or not x.per_tensor or a["out_dtype"] not in ("", "float32"):
            return
        if a["data_layout"] != "NCHW" or a["kernel_layout"] != "OIHW" or a["out_layout"] not in ("", "NCHW"):
            return
        wk = self._weights(w, 0)
        if wk is None or tensor_dtype(x.q) not in ("int8", "uint8") or tensor_dtype(w.q) not in ("int8", "uint8"):
            return
        ws, wz = wk
        groups, o = a["groups"], shape_of(op.operands[1].type)[0]
        if groups != 1 and not (a["channels"] == groups == shape_of(op.operands[0].type)[1] and o == groups):
            return
        b = _Builder(op)
        attrs = {k: a[k] for k in ("strides", "padding", "dilation", "groups", "kernel_size", "data_layout", "kernel_layout")}
        attrs["channels"] = o
        acc = b.op(
            "qnn.conv2d",
            [x.q, w.q, b.const(x.zp, "int32"), b.const(wz, "int32"), b.const(x.scale, "float32"), b.const(ws, "float32")],
            out_dtype="int32", **attrs,
        )  # fmt: skip
        scale = (np.float32(x.scale) * ws).astype(np.float32)
        self.aff[op.results[0]] = Affine(acc, _scalar(scale), np.zeros((), np.int32), 1)

    def _dense(self, op: RelayOp, x: Affine, w: Affine, wq: SSAValue, w_axis: int, units: int) -> None:
        wk = self._weights(w, w_axis)
        if wk is None or not x.per_tensor or tensor_dtype(x.q) not in ("int8", "uint8", "int16", "uint16"):
            return
        if tensor_dtype(w.q) not in ("int8", "uint8"):
            return
        ws, wz = wk
        b = _Builder(op)
        acc = b.op(
            "qnn.dense",
            [x.q, wq, b.const(x.zp, "int32"), b.const(wz, "int32"), b.const(x.scale, "float32"), b.const(ws, "float32")],
            units=units, out_dtype="int32",
        )  # fmt: skip
        scale = (np.float32(x.scale) * ws).astype(np.float32)
        rank = len(shape_of(op.results[0].type))
        self.aff[op.results[0]] = Affine(acc, _scalar(scale), np.zeros((), np.int32), rank - 1)

    def rule_nn_dense(self, op: RelayOp) -> None:
        x, w = self.get(op.operands[0]), self.get(op.operands[1])
        if x is None or w is None or op.attrs["out_dtype"] not in ("", "float32"):
            return
        self._dense(op, x, w, w.q, 0, shape_of(op.operands[1].type)[0])

    def rule_nn_matmul(self, op: RelayOp) -> None:
        x, w = self.get(op.operands[0]), self.get(op.operands[1])
        a = op.attrs
        if x is None or w is None or a["transpose_a"] or a["out_dtype"] not in ("", "float32"):
            return
        if a["transpose_b"]:
            self._dense(op, x, w, w.q, 0, shape_of(op.operands[1].type)[0])
            return
        b = _Builder(op)
        wt = b.op("transpose", [w.q], axes=[1, 0])
        self._dense(op, x, w, wt, 1, shape_of(op.operands[1].type)[1])

    def rule_nn_batch_matmul(self, op: RelayOp) -> None:
        x, y = self.get(op.operands[0]), self.get(op.operands[1])
        a = op.attrs
        if x is None or y is None or not (x.per_tensor and y.per_tensor) or a["transpose_a"]:
            return
        if tensor_dtype(x.q) not in ("int8", "uint8") or tensor_dtype(y.q) not in ("int8", "uint8"):
            return
        if a["out_dtype"] not in ("", "float32"):
            return
        b = _Builder(op)
        yq = y.q if a["transpose_b"] else b.op("transpose", [y.q], axes=[0, 2, 1])
        acc = b.op(
            "qnn.batch_matmul",
            [x.q, yq, b.const(x.zp, "int32"), b.const(y.zp, "int32"), b.const(x.scale, "float32"), b.const(y.scale, "float32")],
        )  # fmt: skip
        self.aff[op.results[0]] = Affine(acc, np.float32(x.scale) * np.float32(y.scale), np.zeros((), np.int32), None)

    # ---- adds -----------------------------------------------------------------------------

    def _add_constant(self, op: RelayOp, v: Affine, c: np.ndarray, c_axis: int | None) -> None:
        """``v + c`` for an int32 accumulator ``v`` (zero point 0) and a float constant ``c``
        (``c_axis``: a bias vector along that axis): ``c`` quantized with ``v``'s scale."""
        out_shape = shape_of(op.results[0].type)
        rank = len(out_shape)
        if tensor_dtype(v.q) != "int32" or np.any(v.zp != 0) or out_shape != shape_of(v.q.type):
            return
        if c_axis is not None:
            shape = [1] * rank
            shape[c_axis] = c.size
            c = c.reshape(shape)
        if c.ndim > rank:
            return
        c = c.reshape((1,) * (rank - c.ndim) + c.shape)
        scale = v.scale
        if scale.ndim:
            if v.axis is None:
                return
            shape = [1] * rank
            shape[v.axis] = scale.size
            scale = scale.reshape(shape)
        with np.errstate(all="ignore"):
            cq = np.round(c.astype(np.float64) / scale.astype(np.float64))
        if not np.all(np.isfinite(cq)) or np.abs(cq).max(initial=0) >= 2**31:
            return
        b = _Builder(op)
        new = b.op("add", [v.q, b.const(cq.astype(np.int32), "int32")])
        if shape_of(new.type) != out_shape:
            return
        self.aff[op.results[0]] = Affine(new, v.scale, v.zp, v.axis)

    def _float_constant(self, v: SSAValue) -> np.ndarray | None:
        """A float constant, or a dequantized constant (an int32 bias), as float64."""
        c = constant_value(v)
        if c is not None:
            return c.astype(np.float64) if c.dtype.kind == "f" else None
        a = self.get(v)
        q = None if a is None else constant_value(a.q)
        if q is None:
            return None
        shape = [1] * q.ndim
        if a.scale.ndim and a.axis is not None:
            shape[a.axis] = a.scale.size
        s = a.scale.astype(np.float64).reshape(shape if a.scale.ndim else ())
        z = a.zp.astype(np.float64).reshape(shape if a.zp.ndim else ())
        return (q.astype(np.float64) - z) * s

    def rule_nn_bias_add(self, op: RelayOp) -> None:
        v, c = self.get(op.operands[0]), self._float_constant(op.operands[1])
        if v is not None and c is not None:
            rank = len(shape_of(op.results[0].type))
            self._add_constant(op, v, c, op.attrs["axis"] % rank)

    def rule_add(self, op: RelayOp) -> None:
        lhs, rhs = op.operands
        for v, other in ((lhs, rhs), (rhs, lhs)):
            a, c = self.get(v), self._float_constant(other)
            if a is not None and c is not None and tensor_dtype(a.q) == "int32":
                self._add_constant(op, a, c, None)
                if op.results[0] in self.aff:
                    return
        x, y = self.get(lhs), self.get(rhs)
        if x is not None and y is not None and self.integer_add:
            # onnxruntime's QLinearAdd broadcasts (a bias vector added to a quantized MatMul
            # result: BERT's projections); its float32 multiply-adds are elementwise, so the
            # relay ops of ort_add broadcast the same way
            same = shape_of(lhs.type) == shape_of(rhs.type) == shape_of(op.results[0].type)
            if same or (self.onnxruntime and x.per_tensor and y.per_tensor):
                self.adds[op.results[0]] = (x, y)

    def rule_multiply(self, op: RelayOp) -> None:
        """``(a - za) * (b - zb)`` in int32 with scale ``sa * sb`` (Relay's qnn.mul lowering;
        onnxruntime's QLinearMul multiplies the same exact product by one float32 scale and
        adds the zero point before rounding: ``Affine.product``)."""
        x, y = self.get(op.operands[0]), self.get(op.operands[1])
        if x is None or y is None or not (x.per_tensor and y.per_tensor):
            return
        if tensor_dtype(x.q) not in ("int8", "uint8") or tensor_dtype(y.q) not in ("int8", "uint8"):
            return
        b = _Builder(op)

        def centred(a: Affine) -> SSAValue:
            v = b.op("cast", [a.q], dtype="int32")
            return b.op("subtract", [v, b.const(a.zp, "int32")]) if int(a.zp) else v

        prod = b.op("multiply", [centred(x), centred(y)])
        if shape_of(prod.type) != shape_of(op.results[0].type):
            return
        scale = np.float32(np.float32(x.scale) * np.float32(y.scale))
        self.aff[op.results[0]] = Affine(prod, scale, np.zeros((), np.int32), None, product=True)

    def rule_nn_softmax(self, op: RelayOp) -> None:
        """onnxruntime only: a uint8 softmax whose result is quantized (QLinearSoftmax)."""
        v = self.get(op.operands[0])
        if not self.onnxruntime or v is None or not v.per_tensor or tensor_dtype(v.q) != "uint8":
            return
        rank = len(shape_of(op.operands[0].type))
        self.softmaxes[op.results[0]] = (v, op.attrs["axis"] % rank)

    # ---- float reductions -----------------------------------------------------------------

    def rule_sum(self, op: RelayOp) -> None:
        """onnxruntime only: a float32 sum or mean (ReduceSum, ReduceMean: float in
        onnxruntime, no QDQ kernel) added in onnxruntime's order: over the trailing axes of
        the layout onnxruntime runs it in (``ort_channels_last``) as Eigen does
        (``ort_reduce_sum``), over the leading ones column by column (``ort_sequential_sum``);
        a mean then divides by the count in float32, as its kernel does. Other axes keep the
        op (onnxruntime sums those in other orders)."""
        x = op.operands[0]
        if not self.onnxruntime or tensor_dtype(x) != "float32" or tensor_dtype(op.results[0]) != "float32":
            return
        shape = shape_of(x.type)
        if any(d is None for d in shape):
            return
        try:
            axes = reduce_axes(len(shape), op.attrs["axis"], bool(op.attrs["exclude"]))
        except ValueError:
            return
        b = _Builder(op)
        channels_last = ort_channels_last(op, axes)
        kind = None if channels_last else fast_reduce_kind(list(shape), axes)
        if not channels_last and kind is None:
            return
        total = self._dequantized_sum(b, x, list(shape), axes, channels_last, kind)
        if total is not None:
            pass
        elif channels_last:
            # each channel's H x W positions added in order, as on NHWC data: along the rows
            # of the NCHW tensor (no transpose needed)
            n_, c, h, w = shape
            total = ort_sequential_sum(b, x, [n_ * c, h * w], 1)
        elif kind[0] == "KR":
            total = ort_reduce_sum(b, x, *kind[1:])
        else:
            total = ort_sequential_sum(b, x, list(kind[1:]), 0)
        if op.RELAY_NAME == "mean":
            n = int(np.prod([shape[a] for a in axes], dtype=np.int64))
            total = b.op("divide", [total, b.const(np.float32(n), "float32")])
        new = b.op("reshape", [total], newshape=[int(d) for d in shape_of(op.results[0].type)])
        op.results[0].replace_all_uses_with(new)
        self.changed = True

    @staticmethod
    def _dequantized_sum(
        b: _Builder, x: SSAValue, shape: list[int], axes: tuple[int, ...], channels_last: bool, kind,
    ) -> SSAValue | None:  # fmt: skip
        """The sum as one ``qnn.dequantize_sum`` of the 8-bit value when ``x`` is its per-tensor
        ``qnn.dequantize`` (what a QDQ model's float reductions read): the float tensor is
        never made, the order is an attribute (``sequential`` for the channels-last rows and
        the leading axes, ``eigen`` for the trailing ones). None for other ``x``."""
        deq = x.owner
        if (
            not isinstance(deq, RelayOp) or deq.RELAY_NAME != "qnn.dequantize"
            or tensor_dtype(deq.operands[0]) not in ("int8", "uint8") or deq.attrs["out_dtype"] != "float32"
            or any(constant_value(v) is None or constant_value(v).size != 1 for v in deq.operands[1:])
        ):  # fmt: skip
            return None
        q = deq.operands[0]
        block = sorted(axes)
        if channels_last:
            order, rows_first = "sequential", False
        else:
            order, rows_first = ("eigen", False) if kind[0] == "KR" else ("sequential", True)
            consecutive = block == list(range(block[0], block[-1] + 1))
            if not consecutive or (block[-1] != len(shape) - 1 if not rows_first else block[0] != 0):
                # size-1 axes between: the 2-D view fast_reduce_kind merged
                view = [kind[1], kind[2]]
                q = b.op("reshape", [q], newshape=view)
                block = [0] if rows_first else [1]
        scale = b.const(np.asarray(constant_value(deq.operands[1]), np.float32).reshape(()), "float32")
        zp = b.const(np.asarray(constant_value(deq.operands[2]), np.int32).reshape(()), "int32")
        return b.op("qnn.dequantize_sum", [q, scale, zp], axes=[int(a) for a in block], order=order)

    rule_mean = rule_sum

    def rule_nn_layer_norm(self, op: RelayOp) -> None:
        """onnxruntime only: a float32 layer norm over the last axis (its LayerNormalization,
        float between a DequantizeLinear and a QuantizeLinear in a QDQ model) as its x86-64
        kernel computes it: ``qnn.ort_layer_norm``. Rows whose length is a multiple of 8
        (measured bit for bit; other lengths keep ``nn.layer_norm``)."""
        x = op.operands[0]
        shape = shape_of(x.type)
        a = op.attrs
        if (
            not self.onnxruntime or tensor_dtype(x) != "float32" or not shape or shape[-1] is None
            or shape[-1] < 8 or shape[-1] % 8 or a["axis"] not in (-1, len(shape) - 1) or not a["center"] or not a["scale"]
        ):  # fmt: skip
            return
        b = _Builder(op)
        new = b.op("qnn.ort_layer_norm", [x, op.operands[1], op.operands[2]], epsilon=float(a["epsilon"]))
        op.results[0].replace_all_uses_with(new)
        self.changed = True

    def rule_erf(self, op: RelayOp) -> None:
        """onnxruntime only: GELU written with ``erf`` -- ``0.5 x (1 + erf(x / sqrt 2))`` in any
        association (``(x * 0.5) * (erf + 1)``: ONNX's Gelu as imported; ``(x * (1 + erf)) *
        0.5``: exporters' decomposed form, which onnxruntime's GeluFusion makes one Gelu),
        ``x / sqrt 2`` as a division or a multiplication by ``1 / sqrt 2``, each intermediate
        used once -- becomes ``qnn.ort_gelu(x)``, onnxruntime's float32 GELU kernel."""
        if not self.onnxruntime or tensor_dtype(op.operands[0]) != "float32":
            return
        x = _gelu_input(op.operands[0])
        one = _only_use(op.results[0])
        if x is None or one is None or one.RELAY_NAME != "add" or not _is_scalar_const(_other(one, op.results[0]), 1.0):
            return
        m1 = _only_use(one.results[0])
        if m1 is None or m1.RELAY_NAME != "multiply":
            return
        o1 = _other(m1, one.results[0])
        if o1 is x:  # (x * (1 + erf)) * 0.5
            last = _only_use(m1.results[0])
            if last is None or last.RELAY_NAME != "multiply" or not _is_scalar_const(_other(last, m1.results[0]), 0.5):
                return
        else:  # (x * 0.5) * (1 + erf)
            half = o1.owner if isinstance(o1.owner, RelayOp) else None
            if half is None or half.RELAY_NAME != "multiply" or len(list(o1.uses)) != 1 or _other(half, x, 0.5) is None:
                return
            last = m1
        new = _Builder(last).op("qnn.ort_gelu", [x])
        last.results[0].replace_all_uses_with(new)
        self.changed = True

    # ---- value-preserving ops --------------------------------------------------------------

    def rule_nn_relu(self, op: RelayOp) -> None:
        v = self.get(op.operands[0])
        if v is None or not v.zp.size == 1:
            return
        b = _Builder(op)
        new = b.op("maximum", [v.q, b.const(v.zp, tensor_dtype(v.q))])
        self.aff[op.results[0]] = Affine(new, v.scale, v.zp, v.axis)

    def rule_nn_max_pool2d(self, op: RelayOp) -> None:
        v = self.get(op.operands[0])
        if v is None or np.any(v.scale <= 0) or (not v.per_tensor and v.axis != 1) or op.attrs["layout"] != "NCHW":
            return
        new = _Builder(op).op("nn.max_pool2d", [v.q], **op.attrs)
        self.aff[op.results[0]] = Affine(new, v.scale, v.zp, v.axis)

    def rule_nn_global_avg_pool2d(self, op: RelayOp) -> None:
        v = self.get(op.operands[0])
        if v is None or op.attrs["layout"] != "NCHW" or (not v.per_tensor and v.axis != 1):
            return
        h, w = shape_of(op.operands[0].type)[2:]
        b = _Builder(op)
        total = b.op("sum", [b.op("cast", [v.q], dtype="int32")], axis=[2, 3], keepdims=True)
        n = h * w
        if not self.onnxruntime:
            self.aff[op.results[0]] = Affine(total, (v.scale / np.float32(n)).astype(np.float32), v.zp * n, v.axis)
            return
        # onnxruntime: the int32 sum minus n zero points, requantized with s / (s_out * n)
        total = b.op("subtract", [total, b.const(_along(v.zp * n, v.axis, 4), "int32")])
        zero = np.zeros((), np.int32)
        self.aff[op.results[0]] = Affine(total, (v.scale / np.float32(n)).astype(np.float32), zero, v.axis, (v.scale, n))

    def _layout(self, op: RelayOp) -> None:
        v = self.get(op.operands[0])
        if v is None or not v.per_tensor or len(op.operands) != 1:
            return
        new = _Builder(op).op(op.RELAY_NAME, [v.q], **op.attrs)
        self.aff[op.results[0]] = Affine(new, v.scale, v.zp, None)

    rule_reshape = rule_nn_batch_flatten = rule_transpose = rule_squeeze = rule_expand_dims = _layout

    def rule_take(self, op: RelayOp) -> None:
        """A gather of a per-tensor dequantized value (an embedding table: onnxruntime gathers
        its bytes, dropping the DequantizeLinear/QuantizeLinear pair) gathers the 8-bit values;
        gathered from the whole dequantized table it dequantized every row each run."""
        v = self.get(op.operands[0])
        if v is None or not v.per_tensor or op.operands[1] in self.aff:
            return
        new = _Builder(op).op("take", [v.q, op.operands[1]], **op.attrs)
        self.aff[op.results[0]] = Affine(new, v.scale, v.zp, None)


@dataclass(frozen=True)
class FakeQuantizationToIntegerPass(ModulePass):
    """Rewrite dequantize -> float ops -> quantize into integer qnn/relay ops (Relay's FQ2I)."""

    name = "fake-quantization-to-integer"
    relay_name: ClassVar[str] = "FakeQuantizationToInteger"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    integer_add: bool = True
    """Relay's rule turns ``quantize(add(dequantize a, dequantize b))`` into ``qnn.add`` (each
    side requantized to the output, then added: two roundings). ``false`` keeps that add in
    float, one rounding, as onnxruntime's QLinearAdd computes it; it still fuses into one
    function on int8 buffers."""

    onnxruntime: bool = False
    """Write onnxruntime's arithmetic (``ort_requantize``, ``ort_add``) instead of Relay's
    ``qnn.requantize`` / ``qnn.add``, so the program gives onnxruntime's bits."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        changed = False
        for fn in list(op.ops):
            if isinstance(fn, func.FuncOp) and fn.body.blocks:
                walk = FakeQuantizationToInteger(self.integer_add, self.onnxruntime)
                walk.run(fn)
                changed |= walk.changed
        if changed:
            DeadCodeEliminationPass().apply(ctx, op)
