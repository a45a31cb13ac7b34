"""``canonicalize-arith``: one written form for the float arithmetic exporters write many ways.

Exporters and importers spell the same activation differently: GELU as ``x / 1.4142`` or
``x * 0.7071``, with ``0.5`` multiplied first or last, constants on either side of a
commutative op; GPT-2's tanh-GELU cubes with ``power(x, 3)`` (numpy's float32 ``power`` is
slow for negative bases). The oneDNN composite patterns (``backend``'s dnnl pattern table)
and the reader that turns a composite into post-ops are written once, for the form this pass
leaves:

* ``DivideByConstant``: ``x / c`` becomes ``x * (1/c)`` for a float constant ``c`` whose
  reciprocal is finite and non-zero everywhere;
* ``ConstantLast``: ``c + x`` and ``c * x`` become ``x + c`` and ``x * c``;
* ``ScalarFactorLast``: ``(a * s) * b`` becomes ``(a * b) * s`` for a one-element constant
  ``s`` (any operand order), so a chain of products keeps its scalar factor outermost;
* ``ScalarOutOfMatmul``: ``batch_matmul(x * s, y)`` becomes ``batch_matmul(x, y) * s`` for a
  one-element constant ``s`` and a computed ``y`` (not a weight), also through the reshapes, transposes, ``expand_dims`` and
  ``squeeze`` between the product and the matmul (either operand, also ``nn.matmul``): torch's
  scaled-dot-product attention scales both ``q`` and ``k`` by the square root of the scale
  before their matmul, and the two factors then meet after it as one, which the oneDNN matmul
  takes as a post-op instead of two passes over the operands;
* ``MergeClips``: ``clip(clip(x, a, b), c, d)`` is ``clip(x, max(a, c), min(b, d))``, and
  ``clip(relu(x), c, d)`` is ``clip(x, max(0, c), d)`` (torch decomposes ``clamp(x, 0, 6)``
  into a ``clamp_min`` and a ``clamp_max``: two clips, one pass each);
* ``ScaleIntoClip``: ``clip(y, lo, hi) * s`` for a positive scalar ``s`` that scales the
  bounds to exactly ``[0, 1]`` becomes ``clip(y * s, 0, 1)``, also when ``clip`` is a factor
  of the product ``s`` scales (``(a * clip(y, lo, hi)) * s`` becomes ``a * clip(y * s, 0, 1)``),
  and ``(z + c) * s`` inside it is ``z * s + c * s`` for a scalar ``c``: hard-sigmoid and
  hard-swish as torch decomposes them (``clip(x + 3, 0, 6) / 6``, ``x * clip(x + 3, 0, 6) / 6``)
  get the form ONNX's HardSigmoid and HardSwish have (``clip(x * 1/6 + 0.5, 0, 1)``);
* ``SmallPower``: ``power(x, p)`` for a scalar ``p`` in {1, 2, 3, 4, 0.5, -0.5, -1} becomes
  multiplies, ``sqrt``, ``rsqrt`` or a division;
* ``L2Normalize``: ``x / max(sqrt(sum(x * x, axes)), eps)`` (torch's ``F.normalize``) in float32
  or float64 becomes Relay's ``nn.l2_normalize`` with ``eps * eps``, one step instead of a reduction and a
  broadcast division;
* ``FoldAdjacentConstants``, ``simplify-expr``'s ``SimplifyAdjacentMultiplyOrAdd`` where no
  other op reads the inner result: ``(x + c1) + c2`` is ``x + (c1 + c2)`` (a bias and the
  constant a hard-sigmoid adds after it are one bias), and so for products. A shared
  ``x * c1`` stays whole: FastViT's GELU, ``(x * (1 + erf(x * 0.7071))) * 0.5`` once its
  factor is last, is read by a batch norm's scale and by a residual; folding the 0.5 into
  the scale left the activation without it, and no GELU pattern matched it (three native
  passes over the tensor instead of an eltwise post-op).

Every rewrite keeps the result type and only fires on float tensors; the values change by
float32 rounding at most (``x * (1/c)`` and ``x / c`` can differ in the last bit; a clip's
bounds scaled by ``s`` are exact, the product moved inside it is rounded once more). The
patterns run as one greedy walk repeated until nothing changes; dead ops are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from xrelay.dialects.relay import ConstantOp, RelayOp, dtype_of, numpy_dtype, shape_of
from xrelay.transforms._relay_rewrite import (
    OpBuilder,
    RelayOpPattern,
    constant_value,
    rewrite_to_fixpoint,
)
from xrelay.transforms.simplify_expr import SimplifyAdjacentMultiplyOrAdd

__all__ = [
    "PATTERNS", "CanonicalizeArithPass", "FoldAdjacentConstants", "MergeClips", "ScaleIntoClip",
    "ScalarOutOfMatmul", "canonicalize_arith",
]  # fmt: skip

_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _float(v: SSAValue) -> bool:
    return dtype_of(v.type) in _FLOATS


def _op(v: SSAValue, name: str) -> RelayOp | None:
    o = v.owner
    return o if isinstance(o, RelayOp) and o.RELAY_NAME == name else None


def _is_const(v: SSAValue) -> bool:
    return isinstance(v.owner, ConstantOp)


def _scalar(v: SSAValue) -> float | None:
    c = constant_value(v)
    if c is None or c.size != 1:
        return None
    return float(np.asarray(c, np.float64).reshape(-1)[0])


class _Pattern(RelayOpPattern):
    """Rewrites float results only (integer arithmetic has other identities)."""

    def accepts(self, op: RelayOp) -> bool:
        return _float(op.results[0])


class DivideByConstant(_Pattern):
    """``x / c`` becomes ``x * (1/c)`` (the reciprocal folded, in the constant's type)::

        %c = relay.constant dense<1.41421354> : tensor<f32>
        %y = relay.divide %x, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
        // becomes
        %r = relay.constant dense<0.707106769> : tensor<f32>
        %y = relay.multiply %x, %r : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    """

    ROOT = "divide"

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        x, d = op.operands
        c = constant_value(d)
        if c is None or _is_const(x) or c.dtype.kind != "f":
            return
        with np.errstate(divide="ignore", over="ignore"):
            r = (np.float64(1.0) / c.astype(np.float64)).astype(c.dtype)
        if not np.all(np.isfinite(r)) or np.any(r == 0):
            return  # x / 0 and x / inf keep their IEEE meaning
        b = OpBuilder(rewriter, op)
        new = b.op("multiply", [x, b.const(r, dtype_of(d.type))])
        if new.results[0].type != op.results[0].type:
            rewriter.erase(new)
            return
        rewriter.replace(op, [], [new.results[0]])


class ConstantLast(RewritePattern):
    """``c * x`` and ``c + x`` with a constant ``c`` become ``x * c`` and ``x + c``::

        %y = relay.multiply %half, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
        // becomes
        %y = relay.multiply %x, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    """

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, RelayOp) or op.RELAY_NAME not in ("add", "multiply") or not _float(op.results[0]):
            return
        c, x = op.operands
        if _is_const(c) and not _is_const(x):
            new = type(op).make([x, c])
            if new.results[0].type != op.results[0].type:
                return
            rewriter.replace(op, new)


class ScalarFactorLast(_Pattern):
    """``(a * s) * b`` becomes ``(a * b) * s`` for a one-element constant ``s`` when ``a * s``
    has no other use (in any operand order of either multiply)::

        %h = relay.multiply %x, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
        %y = relay.multiply %h, %t : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
        // becomes
        %p = relay.multiply %x, %t : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
        %y = relay.multiply %p, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    """

    ROOT = "multiply"

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        u, v = op.operands
        for inner_v, b_v in ((u, v), (v, u)):
            inner = _op(inner_v, "multiply")
            if inner is None or _is_const(b_v) or not inner_v.has_one_use():
                continue
            for a, s in (inner.operands, inner.operands[::-1]):
                if _is_const(a) or _scalar(s) is None or inner_v.type != a.type:
                    continue
                bld = OpBuilder(rewriter, op)
                ab = bld.op("multiply", [a, b_v])
                new = bld.op("multiply", [ab.results[0], s])
                if new.results[0].type != op.results[0].type:
                    rewriter.erase(new)
                    rewriter.erase(ab)
                    return
                rewriter.replace(op, [], [new.results[0]])
                return


class MergeClips(_Pattern):
    """A ``clip`` of a ``clip`` (or of ``nn.relu``, a clip to ``[0, inf]``) becomes one clip
    of the inner op's input with the tighter bounds, when the two ranges overlap::

        %a = relay.clip %x {a_min = 0.0, a_max = inf} : (tensor<4xf32>) -> tensor<4xf32>
        %y = relay.clip %a {a_min = -inf, a_max = 6.0} : (tensor<4xf32>) -> tensor<4xf32>
        // becomes
        %y = relay.clip %x {a_min = 0.0, a_max = 6.0} : (tensor<4xf32>) -> tensor<4xf32>
    """

    ROOT = "clip"

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        inner = _op(op.operands[0], "clip") or _op(op.operands[0], "nn.relu")
        if inner is None:
            return
        if inner.RELAY_NAME == "clip":
            a, b = float(inner.attrs["a_min"]), float(inner.attrs["a_max"])
        else:
            a, b = 0.0, float("inf")
        lo, hi = max(a, float(op.attrs["a_min"])), min(b, float(op.attrs["a_max"]))
        if lo > hi:
            return  # disjoint ranges: the result is one bound, not a clip of x
        x = inner.operands[0]
        if x.type != op.results[0].type:
            return
        new = OpBuilder(rewriter, op).op("clip", [x], a_min=lo, a_max=hi)
        rewriter.replace(op, [], [new.results[0]])


class ScaleIntoClip(_Pattern):
    """``clip(y, lo, hi) * s`` with a positive one-element constant ``s`` for which
    ``lo * s`` is 0 and ``hi * s`` is 1 (in the tensor's dtype) becomes ``clip(y * s, 0, 1)``;
    also ``(a * clip(y, lo, hi)) * s``, which becomes ``a * clip(y * s, 0, 1)``; a scalar
    constant ``c`` added last in ``y`` is scaled with it (``(z + c) * s`` is ``z * s + c * s``)::

        %a = relay.add %x, %three : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
        %c = relay.clip %a {a_min = 0.0, a_max = 6.0} : (tensor<4xf32>) -> tensor<4xf32>
        %p = relay.multiply %x, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
        %y = relay.multiply %p, %sixth : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
        // becomes
        %m = relay.multiply %x, %sixth : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
        %d = relay.add %m, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
        %c = relay.clip %d {a_min = 0.0, a_max = 1.0} : (tensor<4xf32>) -> tensor<4xf32>
        %y = relay.multiply %x, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>

    The clip's bounds times ``s`` are exact (rounding is monotone, so ``clip(y) * s`` and
    ``clip(y * s, lo * s, hi * s)`` are the same floats); only where the clip's range is
    exactly ``[0, 1]`` (a hard-sigmoid) is the product moved, so a ReLU6 scaled by anything
    else keeps the form its convolution's ``clip`` post-op takes.
    """

    ROOT = "multiply"

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        for w, s in (op.operands, op.operands[::-1]):
            scale = _scalar(s)
            if scale is None or not scale > 0 or not w.has_one_use():
                continue
            clip, other = _op(w, "clip"), None
            if clip is None and (inner := _op(w, "multiply")) is not None:
                for a, c in (inner.operands, inner.operands[::-1]):
                    if (cand := _op(c, "clip")) is not None and not _is_const(a):
                        clip, other = cand, a
                        break
            if clip is None or not clip.results[0].has_one_use():
                continue
            dtype = np.dtype(dtype_of(s.type))
            lo, hi = (dtype.type(clip.attrs[k]) * dtype.type(scale) for k in ("a_min", "a_max"))
            if lo != 0 or hi != 1:
                continue
            y = clip.operands[0]
            if len(shape_of(s.type)) > len(shape_of(y.type)) or s.type.element_type != y.type.element_type:
                continue  # y * s would broadcast y to more dims or change its type
            if other is None and y.type != op.results[0].type:
                continue
            self._replace(op, y, s, other, rewriter)
            return

    @staticmethod
    def _replace(
        op: RelayOp, y: SSAValue, s: SSAValue, other: SSAValue | None, rewriter: PatternRewriter
    ) -> None:
        b = OpBuilder(rewriter, op)
        scaled = None
        add = _op(y, "add")
        if add is not None and y.has_one_use():
            for z, c in (add.operands, add.operands[::-1]):
                if _scalar(c) is not None and not _is_const(z) and z.type == y.type:
                    sv = constant_value(s)
                    cs = constant_value(c).astype(sv.dtype) * sv.reshape(())
                    scaled = b("add", [b("multiply", [z, s]), b.const(cs, dtype_of(c.type))])
                    break
        if scaled is None:
            scaled = b("multiply", [y, s])
        out = b("clip", [scaled], a_min=0.0, a_max=1.0)
        if other is not None:
            out = b("multiply", [other, out])
        rewriter.replace(op, [], [out])


class SmallPower(_Pattern):
    """``power(x, p)`` with a scalar constant ``p`` in {1, 2, 3, 4, 0.5, -0.5, -1}
    becomes products, ``sqrt``, ``rsqrt`` or ``1 / x``::

        %y = relay.power %x, %three : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
        // becomes
        %s = relay.multiply %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
        %y = relay.multiply %s, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    """

    ROOT = "power"
    EXPONENTS = (1.0, 2.0, 3.0, 4.0, 0.5, -0.5, -1.0)

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        x, e = op.operands
        p = _scalar(e)
        if p not in self.EXPONENTS or x.type != op.results[0].type:
            return
        b = OpBuilder(rewriter, op)
        if p == 1.0:
            out = x
        elif p == 2.0:
            out = b("multiply", [x, x])
        elif p == 3.0:
            out = b("multiply", [b("multiply", [x, x]), x])
        elif p == 4.0:
            sq = b("multiply", [x, x])
            out = b("multiply", [sq, sq])
        elif p == 0.5:
            out = b("sqrt", [x])
        elif p == -0.5:
            out = b("rsqrt", [x])
        else:
            out = b("divide", [b.scalar(1.0, dtype_of(x.type)), x])
        rewriter.replace(op, [], [out])


class L2Normalize(_Pattern):
    """``x / max(sqrt(sum(x * x, axes, keepdims)), eps)`` becomes ``nn.l2_normalize(x)`` with
    ``eps * eps`` (Relay's op takes the maximum under the root: ``x / sqrt(max(sum, eps^2))``,
    the same value but for the last bit of a norm below ``eps``). torch's
    ``F.normalize`` (ONNX ``ReduceL2, Clip, Expand, Div``: Swin V2's cosine attention, CLIP-style
    embeddings) was two native steps, a sum of squares and a broadcast division over the
    tensor, each a pass with rows as short as the normalized axis; the bound is a ``clip`` to
    ``[eps, inf]`` or a ``maximum`` with a scalar, an ``expand`` between it and the division
    or none::

        %m = relay.multiply %x, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
        %s = relay.sum %m {axis = [-1], keepdims = true} : (tensor<2x8xf32>) -> tensor<2x1xf32>
        %n = relay.sqrt %s : (tensor<2x1xf32>) -> tensor<2x1xf32>
        %c = relay.clip %n {a_min = 1.0e-12, a_max = inf} : (tensor<2x1xf32>) -> tensor<2x1xf32>
        %y = relay.divide %x, %c : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
        // becomes
        %y = relay.nn.l2_normalize %x {eps = 1.0e-24, axis = [-1]} : (tensor<2x8xf32>) -> tensor<2x8xf32>
    """

    ROOT = "divide"

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        x, d = op.operands
        if x.type != op.results[0].type or dtype_of(x.type) not in ("float32", "float64"):
            return  # (in 16 bits each rounded step of the written form differs by an ulp)
        bound = _op(d, "broadcast_to")
        d = bound.operands[0] if bound is not None else d
        eps = None
        clip = _op(d, "clip")
        if clip is not None and float(clip.attrs["a_max"]) >= float(np.finfo(np.float32).max):
            eps, n = float(clip.attrs["a_min"]), clip.operands[0]
        elif (m := _op(d, "maximum")) is not None:
            for a, b in (m.operands, m.operands[::-1]):
                if _scalar(b) is not None:
                    eps, n = _scalar(b), a
                    break
        if eps is None or not eps > 0:
            return
        root = _op(n, "sqrt")
        total = _op(root.operands[0], "sum") if root is not None else None
        square = _op(total.operands[0], "multiply") if total is not None else None
        if square is None or list(square.operands) != [x, x]:
            return
        if not total.attrs.get("keepdims") or total.attrs.get("exclude"):
            return
        eps2 = eps * eps
        if not (np.finfo(numpy_dtype(dtype_of(x.type))).tiny <= eps2 < np.inf):
            return  # (a square that underflows would make a zero vector 0 / 0)
        axis = total.attrs.get("axis")
        new = OpBuilder(rewriter, op).op("nn.l2_normalize", [x], eps=eps2, axis=None if axis is None else list(axis))
        if new.results[0].type != op.results[0].type:
            rewriter.erase(new)
            return
        rewriter.replace(op, [], [new.results[0]])


_VIEWS = ("reshape", "transpose", "expand_dims", "squeeze")
"""Ops that only move elements: a scalar factor commutes with them exactly."""


class ScalarOutOfMatmul(_Pattern):
    """``matmul(x * s, y)`` becomes ``matmul(x, y) * s`` for a one-element constant ``s``
    (``nn.batch_matmul`` or ``nn.matmul`` of two computed operands, either one; never a
    matmul with a constant weight, whose producer's epilogue the factor may belong to, as the
    last ``0.5`` of a GELU before the next layer), when the product reaches the
    matmul through single-use reshapes/transposes/``expand_dims``/``squeeze`` (they are
    rebuilt on ``x``) and does not broadcast ``x`` (the values change by float32 rounding)::

        %qs = relay.multiply %q, %s : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
        %y = relay.nn.batch_matmul %qs, %k {transpose_b = true} : ... -> tensor<2x4x4xf32>
        // becomes
        %p = relay.nn.batch_matmul %q, %k {transpose_b = true} : ... -> tensor<2x4x4xf32>
        %y = relay.multiply %p, %s : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
    """

    ROOTS = ("nn.batch_matmul", "nn.matmul")

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, RelayOp) and op.RELAY_NAME in self.ROOTS and _float(op.results[0]):
            self.rewrite(op, rewriter)

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        if any(_is_const(o) for o in op.operands):
            return  # a weight: the factor belongs in it (and a GELU's last 0.5 in its epilogue)
        for index, operand in enumerate(op.operands):
            chain: list[RelayOp] = []  # the views between the product and the matmul, outermost first
            v = operand
            while isinstance(view := v.owner, RelayOp) and view.RELAY_NAME in _VIEWS and v.has_one_use():
                chain.append(view)
                v = view.operands[0]
            mul = _op(v, "multiply")
            if mul is None or not v.has_one_use():
                continue
            for x, s in (mul.operands, mul.operands[::-1]):
                if _is_const(x) or _scalar(s) is None or x.type != v.type:
                    continue
                if len(shape_of(s.type)) > len(shape_of(op.results[0].type)) or dtype_of(s.type) != dtype_of(op.results[0].type):
                    return  # s would broadcast the matmul's result to more dims, or change its type
                new: list[Operation] = []
                for view in reversed(chain):  # the same views, on x
                    moved = view.clone()
                    moved.operands = [x]
                    new.append(moved)
                    x = moved.results[0]
                mm = op.clone()
                mm.operands = [x if i == index else o for i, o in enumerate(op.operands)]
                scaled = type(mul).make([mm.results[0], s])
                for o in (*new, mm, scaled):
                    rewriter.insert(o, InsertPoint.before(op))
                rewriter.replace(op, [], [scaled.results[0]])
                return


class FoldAdjacentConstants(SimplifyAdjacentMultiplyOrAdd):
    """``(x * c1) * c2`` becomes ``x * (c1 * c2)`` (and so for sums) when nothing else reads
    ``x * c1``::

        %a = relay.multiply %x, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
        %y = relay.multiply %a, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
        // becomes (%a read by %y only)
        %y = relay.multiply %x, %half_s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    """

    SHARED = False


PATTERNS = (
    DivideByConstant, ConstantLast, MergeClips, ScaleIntoClip, ScalarFactorLast, ScalarOutOfMatmul,
    SmallPower, L2Normalize, FoldAdjacentConstants,
)  # fmt: skip
"""The rewrites, in the order each walk tries them (the last is ``simplify-expr``'s, for an
inner op no other op reads: a bias and a constant added after it are one bias)."""


def canonicalize_arith(module: ModuleOp, max_rounds: int = 20) -> int:
    """Apply ``PATTERNS`` until nothing changes (at most ``max_rounds`` walks); returns the
    number of rewrites."""
    return rewrite_to_fixpoint(module, [p() for p in PATTERNS], max_rounds)


@dataclass(frozen=True)
class CanonicalizeArithPass(ModulePass):
    """One written form for equivalent float arithmetic (see the module docstring)."""

    name = "canonicalize-arith"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        canonicalize_arith(op)
