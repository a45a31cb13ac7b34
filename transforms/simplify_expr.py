"""``simplify-expr``: Relay's SimplifyExpr (``simplify_expr.cc``) as xDSL rewrite patterns.

The rewrites run in Relay's order, each as one forward walk over every function (operands
before users, as Relay's post-order mutator), and the whole list repeats until nothing changes
(at most 100 rounds, Relay's bound). Each pattern's docstring shows its rewrite; every one has
a FileCheck case in ``tests/filecheck/transforms/simplify-expr.mlir``.

Relay's matching rules are kept: ``add`` and ``multiply`` match either operand order; a
"constant" is a ``relay.constant``; identities only fire when the result has the type of the
value that replaces it; ``*_like`` ops are concretised only with static shapes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import ml_dtypes
import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.transforms.dead_code_elimination import region_dce

from xrelay.dialects.relay import ConstantOp, OpPattern, RelayOp, dtype_of, numpy_dtype, shape_of
from xrelay.dialects.relay.dtypes import dtype_bits
from xrelay.dialects.relay.ops import parse_layout
from xrelay.kernels import KERNELS
from xrelay.transforms._relay_rewrite import OpBuilder, constant_value

# --------------------------------------------------------------------------------------------
# Matching helpers
# --------------------------------------------------------------------------------------------


def _op(value: SSAValue, *names: str) -> RelayOp | None:
    """The relay op defining ``value`` when it is one of ``names``."""
    owner = value.owner
    if isinstance(owner, RelayOp) and owner.RELAY_NAME in names:
        return owner
    return None


def _ttype(value: SSAValue) -> TensorType:
    t = value.type
    assert isinstance(t, TensorType)
    return t


def _static_shape(value: SSAValue) -> list[int] | None:
    s = shape_of(_ttype(value))
    return None if any(d is None for d in s) else list(s)  # type: ignore[misc]


def _dtype(value: SSAValue) -> str:
    return dtype_of(_ttype(value).element_type)


def _is_constant(value: SSAValue) -> bool:
    return isinstance(value.owner, ConstantOp)


def _commuted(op: Operation) -> list[tuple[SSAValue, SSAValue]]:
    """The operand orders Relay's patterns try: both for add/multiply, as given otherwise."""
    a, b = op.operands
    if isinstance(op, RelayOp) and op.RELAY_NAME in ("add", "multiply"):
        return [(a, b), (b, a)]
    return [(a, b)]


class _RelayPattern(RewritePattern):
    """A rewrite of relay ops named in ``ROOTS`` (empty: any relay op)."""

    ROOTS: ClassVar[tuple[str, ...]] = ()

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, RelayOp) and (not self.ROOTS or op.RELAY_NAME in self.ROOTS):
            self.rewrite(op, rewriter)

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        raise NotImplementedError


def _fold(name: str, a: np.ndarray, b: np.ndarray, dtype: str) -> np.ndarray:
    """Evaluate a binary op on constants with the kernels (Relay's FoldConstantExpr)."""
    with np.errstate(all="ignore"):
        return np.asarray(KERNELS[name](a, b)).astype(dtype)


# --------------------------------------------------------------------------------------------
# *_like concretisation
# --------------------------------------------------------------------------------------------


class ConcretizeLike(_RelayPattern):
    """``zeros_like``, ``ones_like``, ``full_like``, ``reshape_like``, ``collapse_sum_like``,
    ``broadcast_to_like`` with a static result shape become their explicit-shape forms::

        %y = relay.zeros_like %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
        // becomes
        %y = relay.zeros {shape = [2, 3], dtype = "float32"} : () -> tensor<2x3xf32>

        %y = relay.reshape_like %x, %l : (tensor<2x6xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
        // becomes
        %y = relay.reshape %x {newshape = [3, 4]} : (tensor<2x6xf32>) -> tensor<3x4xf32>
    """

    ROOTS = ("zeros_like", "ones_like", "full_like", "reshape_like", "collapse_sum_like", "broadcast_to_like")

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        shape = _static_shape(op.results[0])
        if shape is None:
            return
        dtype = _dtype(op.results[0])
        b = OpBuilder(rewriter, op)
        name, x = op.RELAY_NAME, op.operands[0]
        if name == "zeros_like":
            new = b("zeros", [], shape=shape, dtype=dtype)
        elif name == "ones_like":
            new = b("ones", [], shape=shape, dtype=dtype)
        elif name == "full_like":
            new = b("full", [op.operands[1]], shape=shape, dtype=dtype)
        elif name == "reshape_like":
            new = b("reshape", [x], newshape=shape)
        elif name == "collapse_sum_like":
            new = b("collapse_sum_to", [x, b.const(np.array(shape, "int32"), "int32")], shape=shape)
        else:
            new = b("broadcast_to", [x], shape=shape)
        rewriter.replace(op, [], [new])


class ConcretizeCastLike(_RelayPattern):
    """``cast_like`` becomes ``cast`` (whatever the shapes)::

        %y = relay.cast_like %x, %l : (tensor<2xf32>, tensor<?xi32>) -> tensor<2xi32>
        // becomes
        %y = relay.cast %x {dtype = "int32"} : (tensor<2xf32>) -> tensor<2xi32>
    """

    ROOTS = ("cast_like",)

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        b = OpBuilder(rewriter, op)
        rewriter.replace(op, [], [b("cast", [op.operands[0]], dtype=_dtype(op.results[0]))])


# --------------------------------------------------------------------------------------------
# Arithmetic
# --------------------------------------------------------------------------------------------


class SimplifyAdd(_RelayPattern):
    """``x + x`` becomes ``x * 2``::

        %y = relay.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
        // becomes
        %c = relay.constant dense<2.0> : tensor<f32>
        %y = relay.multiply %x, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    """

    ROOTS = ("add",)

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        x, y = op.operands
        if x is not y:
            return
        b = OpBuilder(rewriter, op)
        dtype = _dtype(op.results[0])
        rewriter.replace(op, [], [b("multiply", [x, b.scalar(2, dtype)])])


class SimplifyRSqrt(_RelayPattern):
    """``n / sqrt(x)`` becomes ``n * rsqrt(x)``::

        %s = relay.sqrt %x : (tensor<4xf32>) -> tensor<4xf32>
        %y = relay.divide %n, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
        // becomes
        %r = relay.rsqrt %x : (tensor<4xf32>) -> tensor<4xf32>
        %y = relay.multiply %n, %r : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    """

    ROOTS = ("divide",)

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        n, d = op.operands
        sqrt = _op(d, "sqrt")
        if sqrt is None:
            return
        b = OpBuilder(rewriter, op)
        rewriter.replace(op, [], [b("multiply", [n, b("rsqrt", [sqrt.operands[0]])])])


def _identity_operand(value: SSAValue, name: str) -> bool:
    """Whether ``value`` is a zero (for add/subtract) or a one (multiply/divide): a zeros/ones
    op of any shape, or a scalar constant of that value."""
    one = name in ("multiply", "divide")
    if _op(value, *(("ones", "ones_like") if one else ("zeros", "zeros_like"))) is not None:
        return True
    c = constant_value(value)
    return c is not None and c.ndim == 0 and bool(c == (1 if one else 0))


class EliminateIdentity(_RelayPattern):
    """``x + 0``, ``0 + x``, ``x - 0``, ``x * 1``, ``1 * x``, ``x / 1`` become ``x`` when the
    result has ``x``'s type (zeros/ones ops of any shape, or scalar constants)::

        %z = relay.zeros {shape = [4], dtype = "float32"} : () -> tensor<4xf32>
        %y = relay.add %x, %z : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
        // becomes %x
    """

    ROOTS = ("add", "multiply", "subtract", "divide")

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        for x, other in _commuted(op):
            if _identity_operand(other, op.RELAY_NAME) and x.type == op.results[0].type:
                rewriter.replace(op, [], [x])
                return


class SwitchAddMultiply(_RelayPattern):
    """``(x + c1) * c2`` becomes ``x * c2 + (c1 * c2)`` (folded), friendlier to FoldScaleAxis::

        %a = relay.add %x, %c1 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
        %y = relay.multiply %a, %c2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
        // becomes
        %m = relay.multiply %x, %c2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
        %y = relay.add %m, %c12 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    """

    ROOTS = ("multiply",)

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        for a, c2 in _commuted(op):
            add = _op(a, "add")
            if add is None or not _is_constant(c2):
                continue
            for x, c1 in _commuted(add):
                if _is_constant(c1) and not _is_constant(x):
                    b = OpBuilder(rewriter, op)
                    dtype = _dtype(op.results[0])
                    folded = b.const(_fold("multiply", constant_value(c1), constant_value(c2), dtype), dtype)
                    rewriter.replace(op, [], [b("add", [b("multiply", [x, c2]), folded])])
                    return


class SimplifyAdjacentMultiplyOrAdd(_RelayPattern):
    """``(x * c1) * c2`` becomes ``x * (c1 * c2)`` and ``(x + c1) + c2`` becomes
    ``x + (c1 + c2)``, the constants folded::

        %a = relay.multiply %x, %c1 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
        %y = relay.multiply %a, %c2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
        // becomes
        %y = relay.multiply %x, %c12 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    """

    ROOTS = ("multiply", "add")
    SHARED = True
    """Whether an inner op other ops read too is folded into this one (Relay's rewrite:
    the others keep it)."""

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        for a, c2 in _commuted(op):
            inner = _op(a, op.RELAY_NAME)
            if inner is None or not _is_constant(c2):
                continue
            if not self.SHARED and not inner.results[0].has_one_use():
                continue
            for x, c1 in _commuted(inner):
                if _is_constant(c1) and not _is_constant(x):
                    b = OpBuilder(rewriter, op)
                    dtype = _dtype(op.results[0])
                    folded = b.const(_fold(op.RELAY_NAME, constant_value(c1), constant_value(c2), dtype), dtype)
                    rewriter.replace(op, [], [b(op.RELAY_NAME, [x, folded])])
                    return


def _scalar_of(value: SSAValue | None) -> float | None:
    c = None if value is None else constant_value(value)
    if c is None:
        return None
    return float(np.asarray(c).reshape(-1)[0])


class SimplifyBinomial(_RelayPattern):
    """``a*x*x + b*x*y + c*y*y`` (any of Relay's orders; absent coefficients are 1) becomes
    ``a * ((x + p*y) * (x + q*y))`` with p, q the roots of ``a t^2 - b t + c``::

        // x*x + 2*x*y + y*y
        // becomes
        %s = relay.multiply %y, %one : ...      // p = q = 1
        %t = relay.add %x, %s : ...
        %u = relay.multiply %t, %t : ...
        %v = relay.multiply %a, %u : ...
    """

    ROOTS = ("add",)

    @staticmethod
    def _square(v: SSAValue) -> tuple[SSAValue, SSAValue | None] | None:
        """(base, coefficient) of ``c*(x*x)``, ``x*(c*x)`` or ``x*x``."""
        m = _op(v, "multiply")
        if m is None:
            return None
        p, q = m.operands
        if p is q:
            return p, None
        for outer, inner in _commuted(m):
            im = _op(inner, "multiply")
            if im is None:
                continue
            a, b = im.operands
            if _is_constant(outer) and a is b:
                return a, outer
            for u, c in _commuted(im):
                if u is outer and _is_constant(c):
                    return u, c
        return None

    @staticmethod
    def _cross(v: SSAValue, x: SSAValue, y: SSAValue) -> tuple[bool, SSAValue | None]:
        """Whether ``v`` is ``b*(x*y)``, ``x*(b*y)``, ``y*(b*x)`` or ``x*y``, and its b."""
        m = _op(v, "multiply")
        if m is None:
            return False, None
        if {m.operands[0], m.operands[1]} == {x, y} and m.operands[0] is not m.operands[1]:
            return True, None
        for outer, inner in _commuted(m):
            im = _op(inner, "multiply")
            if im is None:
                continue
            pair = set(im.operands)
            if _is_constant(outer) and pair == {x, y}:
                return True, outer
            for u, c in _commuted(im):
                if _is_constant(c) and {outer, u} == {x, y} and outer is not u:
                    return True, c
        return False, None

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        dtype = _dtype(op.results[0])
        if dtype not in ("int32", "float32", "float64"):
            return  # Relay reads the constants only for these dtypes
        for inner_v, last in _commuted(op):
            inner = _op(inner_v, "add")
            if inner is None:
                continue
            found = self._match(inner.operands[0], inner.operands[1], last)
            if found is not None:
                self._emit(op, rewriter, dtype, *found)
                return

    def _match(self, p: SSAValue, q: SSAValue, last: SSAValue):
        # Relay's alternatives in its order: (xy + x^2) + y^2, (xy + y^2) + x^2, (x^2 + y^2) + xy,
        # the inner add matched in either operand order
        for alt in range(3):
            for u, v in ((p, q), (q, p)):
                xy, xs, ys = ((u, v, last), (u, last, v), (last, u, v))[alt]
                s1, s2 = self._square(xs), self._square(ys)
                if s1 is None or s2 is None or s1[0] is s2[0]:
                    continue
                ok, bcoef = self._cross(xy, s1[0], s2[0])
                if ok:
                    return s1[0], s2[0], s1[1], bcoef, s2[1]
        return None

    def _emit(self, op, rewriter, dtype, x, y, a, bcoef, c) -> None:
        a_val, b_val, c_val = (1.0 if v is None else _scalar_of(v) for v in (a, bcoef, c))
        if c_val == 1 and a_val > 1:
            x, y, a_val, c_val = y, x, c_val, a_val
        disc = b_val * b_val - 4 * a_val * c_val
        if disc < 0:
            return
        same = disc < 10e-5
        root = math.sqrt(disc)
        b = OpBuilder(rewriter, op)
        first = b.scalar((b_val + root) / (2 * a_val), dtype)
        first_m = b("add", [x, b("multiply", [y, first])])
        if same:
            second_m = first_m
        else:
            second = b.scalar((b_val - root) / (2 * a_val), dtype)
            second_m = b("add", [x, b("multiply", [y, second])])
        prod = b("multiply", [first_m, second_m])
        rewriter.replace(op, [], [b("multiply", [b.scalar(a_val, dtype), prod])])


# --------------------------------------------------------------------------------------------
# Reshapes, transposes, casts, clips
# --------------------------------------------------------------------------------------------


class SimplifyReshape(_RelayPattern):
    """Two consecutive ``reshape``/``contrib_reverse_reshape`` become one ``reshape`` to the
    static result shape::

        %a = relay.reshape %x {newshape = [1, 16, -1]} : (tensor<1x16x4x4xf32>) -> tensor<1x16x16xf32>
        %y = relay.reshape %a {newshape = [4, 4, -1]} : (tensor<1x16x16xf32>) -> tensor<4x4x16xf32>
        // becomes
        %y = relay.reshape %x {newshape = [4, 4, 16]} : (tensor<1x16x4x4xf32>) -> tensor<4x4x16xf32>
    """

    ROOTS = ("reshape", "contrib_reverse_reshape")

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        inner = _op(op.operands[0], *self.ROOTS)
        shape = _static_shape(op.results[0])
        if inner is None or shape is None:
            return
        b = OpBuilder(rewriter, op)
        rewriter.replace(op, [], [b("reshape", [inner.operands[0]], newshape=shape)])


def _primal(layout: str) -> bool:
    return layout.isalpha() and layout.isupper()


def _axis_order(op: RelayOp, ndim: int) -> list[int] | None:
    """Relay's GetTransposeAxisOrder; None for a layout_transform that is not a permutation."""
    if op.RELAY_NAME == "transpose":
        axes = op.attrs["axes"]
        if axes is None:
            return list(range(ndim))[::-1]
        return [a + ndim if a < 0 else a for a in axes]
    src, dst = op.attrs["src_layout"], op.attrs["dst_layout"]
    if not (_primal(src) and _primal(dst)) or len(src) != ndim or sorted(src) != sorted(dst):
        return None
    return [src.index(c) for c in dst]


class SimplifyTranspose(_RelayPattern):
    """Two consecutive ``transpose``/``layout_transform`` become one ``transpose`` of the
    composed permutation (or, when one is a rank-changing layout_transform, one
    ``layout_transform``)::

        %a = relay.transpose %x {axes = [0, 2, 3, 1]} : (tensor<1x3x4x5xf32>) -> tensor<1x4x5x3xf32>
        %y = relay.layout_transform %a {src_layout = "NHWC", dst_layout = "NCHW4c"} : ...
        // becomes
        %y = relay.layout_transform %x {src_layout = "NCHW", dst_layout = "NCHW4c"} : ...
    """

    ROOTS = ("transpose", "layout_transform")

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        inner = _op(op.operands[0], *self.ROOTS)
        if inner is None:
            return
        x = inner.operands[0]
        b = OpBuilder(rewriter, op)
        folded = self._fold_rank_changing(op, inner)
        if folded is not None:
            if folded is False:
                return
            src, dst = folded
            if src == dst:
                rewriter.replace(op, [], [x])
            else:
                rewriter.replace(op, [], [b("layout_transform", [x], src_layout=src, dst_layout=dst)])
            return
        ndim = len(shape_of(_ttype(op.results[0])))
        outer_order, inner_order = _axis_order(op, ndim), _axis_order(inner, ndim)
        if outer_order is None or inner_order is None:
            return
        axes = list(range(ndim))
        for order in (inner_order, outer_order):
            axes = [axes[order[i]] for i in range(ndim)]
        rewriter.replace(op, [], [b("transpose", [x], axes=axes)])

    @staticmethod
    def _fold_rank_changing(op: RelayOp, inner: RelayOp):
        """Relay's FoldRankChangingLayoutTrans: None when neither op changes rank, False when
        it cannot fold (Relay's other arrangements index the wrong rank), else the (src, dst)
        layouts of the single layout_transform."""

        def rank_changing(o: RelayOp) -> bool:
            return o.RELAY_NAME == "layout_transform" and len(parse_layout(o.attrs["src_layout"])) != len(
                parse_layout(o.attrs["dst_layout"])
            )

        outer_rc, inner_rc = rank_changing(op), rank_changing(inner)
        if not outer_rc and not inner_rc:
            both = op.RELAY_NAME == inner.RELAY_NAME == "layout_transform"
            if both and not all(_primal(o.attrs[k]) for o in (op, inner) for k in ("src_layout", "dst_layout")):
                # blocked layouts of one rank (NCHW4c -> NCHW8c): Relay reads them as a
                # permutation; composing the two transforms is what they mean
                if op.attrs["src_layout"] != inner.attrs["dst_layout"]:
                    return False
                return inner.attrs["src_layout"], op.attrs["dst_layout"]
            return None
        if outer_rc and inner_rc:
            if op.attrs["src_layout"] != inner.attrs["dst_layout"]:
                return False
            return inner.attrs["src_layout"], op.attrs["dst_layout"]
        if outer_rc:
            src, dst, other = op.attrs["src_layout"], op.attrs["dst_layout"], inner
        else:
            src, dst, other = inner.attrs["src_layout"], inner.attrs["dst_layout"], op
        n_src, n_dst = len(parse_layout(src)), len(parse_layout(dst))
        if other.RELAY_NAME == "layout_transform" and not (
            _primal(other.attrs["src_layout"]) and _primal(other.attrs["dst_layout"])
        ):
            return False
        if n_src < n_dst:
            # a transpose (of the primal layout) then a rank-increasing layout_transform
            if not outer_rc or not _primal(src):
                return False
            axes = _axis_order(other, n_src)
            if axes is None:
                return False
            inverse = [0] * len(axes)
            for i, a in enumerate(axes):
                inverse[a] = i
            return "".join(src[i] for i in inverse), dst
        # a rank-decreasing layout_transform then a transpose
        if not inner_rc or not _primal(dst):
            return False
        axes = _axis_order(other, n_dst)
        if axes is None:
            return False
        return src, "".join(dst[i] for i in axes)


class SimplifyNoOpTranspose(_RelayPattern):
    """A ``transpose`` with the identity permutation, or a ``layout_transform`` from a layout
    to itself, becomes its input::

        %y = relay.transpose %x {axes = [0, 1, 2]} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
        // becomes %x
    """

    ROOTS = ("transpose", "layout_transform")

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        if op.RELAY_NAME == "layout_transform":
            if op.attrs["src_layout"] == op.attrs["dst_layout"]:
                rewriter.replace(op, [], [op.operands[0]])
            return
        ndim = len(shape_of(_ttype(op.results[0])))
        if _axis_order(op, ndim) == list(range(ndim)):
            rewriter.replace(op, [], [op.operands[0]])


class SimplifySameCast(_RelayPattern):
    """A ``cast``/``cast_like`` to the dtype its input already has becomes its input::

        %y = relay.cast %x {dtype = "float32"} : (tensor<4xf32>) -> tensor<4xf32>
        // becomes %x
    """

    ROOTS = ("cast", "cast_like")

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        if _dtype(op.operands[0]) == _dtype(op.results[0]):
            rewriter.replace(op, [], [op.operands[0]])


_CODE = {"int": 0, "uint": 1, "float": 2}  # Relay's kInt < kUInt < kFloat


def _code_bits(dtype: str) -> tuple[str, int]:
    if dtype.startswith(("float8_", "float4_")):  # each a type code of its own in TVM
        return dtype, dtype_bits(dtype)
    for prefix in ("bfloat", "float", "uint", "int"):
        if dtype.startswith(prefix):
            return prefix, int(dtype[len(prefix) :])
    return dtype, 1  # bool


def _widens(origin: str, cast: str) -> bool:
    """Relay's IsWidenCast: the cast loses nothing (same kind, no fewer bits; or up the
    int -> uint -> float ladder); never through bfloat16."""
    (ok, ob), (ck, cb) = _code_bits(origin), _code_bits(cast)
    if ok == ck and ob <= cb:
        return True
    if "bfloat" in (ok, ck) or ok not in _CODE or ck not in _CODE:
        return False
    return _CODE[ok] < _CODE[ck] and ob <= cb


class SimplifyConsecutiveCast(_RelayPattern):
    """``cast(cast(x, t1), t2)`` becomes ``cast(x, t2)`` when the first cast widens::

        %a = relay.cast %x {dtype = "int32"} : (tensor<4xi8>) -> tensor<4xi32>
        %y = relay.cast %a {dtype = "float32"} : (tensor<4xi32>) -> tensor<4xf32>
        // becomes
        %y = relay.cast %x {dtype = "float32"} : (tensor<4xi8>) -> tensor<4xf32>
    """

    ROOTS = ("cast", "cast_like")

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        inner = _op(op.operands[0], "cast", "cast_like")
        if inner is None:
            return
        x = inner.operands[0]
        if not _widens(_dtype(x), _dtype(inner.results[0])):
            return
        b = OpBuilder(rewriter, op)
        rewriter.replace(op, [], [b("cast", [x], dtype=_dtype(op.results[0]))])


def _dtype_range(dtype: str) -> tuple[float, float] | None:
    if dtype == "bool":
        return None
    dt = numpy_dtype(dtype)
    info = ml_dtypes.iinfo(dt) if dtype.startswith(("int", "uint")) else ml_dtypes.finfo(dt)
    return float(info.min), float(info.max)


def _range_contains(dtype: str, lo: float, hi: float) -> bool:
    """[lo, hi] covers every value of ``dtype`` (Relay's CheckDataTypeMaxMinValue mode 0)."""
    r = _dtype_range(dtype)
    return r is not None and hi >= r[1] and lo <= r[0]


def _range_within(dtype: str, lo: float, hi: float) -> bool:
    """[lo, hi] lies within ``dtype``'s range (mode 1)."""
    r = _dtype_range(dtype)
    return r is not None and hi <= r[1] and lo >= r[0]


class SimplifyClipAndConsecutiveCast(_RelayPattern):
    """In ``cast(...cast(clip(x)))``, casts to dtypes that hold the clip's whole range are
    dropped (a final cast keeps the chain's result dtype)::

        %c = relay.clip %x {a_min = 0.0, a_max = 255.0} : (tensor<4xi32>) -> tensor<4xi32>
        %a = relay.cast %c {dtype = "uint8"} : (tensor<4xi32>) -> tensor<4xui8>
        %y = relay.cast %a {dtype = "int32"} : (tensor<4xui8>) -> tensor<4xi32>
        // becomes %c
    """

    ROOTS = ("cast",)

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        chain: list[RelayOp] = []
        v: SSAValue = op.results[0]
        clip = None
        while True:
            owner = _op(v, "cast", "clip")
            if owner is None:
                return
            if owner.RELAY_NAME == "clip":
                clip = owner
                break
            chain.append(owner)
            v = owner.operands[0]
        lo, hi = clip.attrs["a_min"], clip.attrs["a_max"]
        remaining = [c for c in chain if not _range_within(_dtype(c.results[0]), lo, hi)]
        last = remaining[0].results[0] if remaining else clip.results[0]
        extra = _dtype(last) != _dtype(op.results[0])
        if len(remaining) == len(chain) and not extra:
            return  # nothing to drop
        b = OpBuilder(rewriter, op)
        res = clip.results[0]
        for c in reversed(remaining):
            res = b("cast", [res], dtype=c.attrs["dtype"])
        if extra:
            res = b("cast", [res], dtype=_dtype(op.results[0]))
        rewriter.replace(op, [], [res])


class SimplifyClip(_RelayPattern):
    """A ``clip`` whose bounds cover its dtype's whole range becomes its input (not after
    ``qnn.requantize``/``qnn.add``, as Relay)::

        %a = relay.cast %x {dtype = "uint8"} : (tensor<4xf32>) -> tensor<4xui8>
        %y = relay.clip %a {a_min = 0.0, a_max = 255.0} : (tensor<4xui8>) -> tensor<4xui8>
        // becomes %a
    """

    ROOTS = ("clip",)

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        x = op.operands[0]
        if isinstance(x.owner, Operation) and x.owner.name in ("qnn.requantize", "qnn.add"):
            return
        if _range_contains(_dtype(op.results[0]), op.attrs["a_min"], op.attrs["a_max"]):
            rewriter.replace(op, [], [x])


class FullElementwise(_RelayPattern):
    """A broadcast op with a ``full``/``full_like``/``ones``/``ones_like``/``zeros``/
    ``zeros_like`` operand takes the fill value as a scalar constant instead, when the other
    operand has the result's type::

        %o = relay.ones_like %x : (tensor<4xf32>) -> tensor<4xf32>
        %y = relay.add %x, %o : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
        // becomes
        %c = relay.constant dense<1.0> : tensor<f32>
        %y = relay.add %x, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    """

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        if op.PATTERN != OpPattern.BROADCAST or len(op.operands) != 2 or len(op.results) != 1:
            return
        for idx in (0, 1):
            full, x = op.operands[idx], op.operands[1 - idx]
            value = self._fill(full, _dtype(op.results[0]))
            if value is None or x.type != op.results[0].type:
                continue
            b = OpBuilder(rewriter, op)
            const = b.scalar(value, _dtype(op.results[0])) if not isinstance(value, SSAValue) else value
            operands = [const, x] if idx == 0 else [x, const]
            rewriter.replace(op, [], [b(op.RELAY_NAME, operands, **op.attrs)])
            return

    @staticmethod
    def _fill(v: SSAValue, dtype: str) -> Any:
        f = _op(v, "full", "full_like", "ones", "ones_like", "zeros", "zeros_like")
        if f is None:
            return None
        if f.RELAY_NAME in ("ones", "ones_like"):
            return 1
        if f.RELAY_NAME in ("zeros", "zeros_like"):
            return 0
        fill = f.operands[-1]
        c = constant_value(fill)
        if c is None or c.ndim != 0:
            return None  # Relay requires a constant scalar fill value
        return fill


class SimplifyDQArg(_RelayPattern):
    """``argmax``/``argmin``/``argsort`` of ``qnn.dequantize(x, scale, zero_point)`` works on
    ``x`` directly (dequantizing is monotonic)::

        %d = qnn.dequantize %x, %s, %z : ...
        %y = relay.argmax %d {axis = [1]} : ...
        // becomes
        %y = relay.argmax %x {axis = [1]} : ...
    """

    ROOTS = ("argmax", "argmin", "argsort")

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        dq = op.operands[0].owner
        if not (isinstance(dq, RelayOp) and dq.name == "qnn.dequantize"):
            return
        b = OpBuilder(rewriter, op)
        rewriter.replace(op, [], [b(op.RELAY_NAME, [dq.operands[0]], **op.attrs)])


# --------------------------------------------------------------------------------------------
# The pass
# --------------------------------------------------------------------------------------------

SIMPLIFY_EXPR: tuple[Callable[[], RewritePattern], ...] = (
    ConcretizeLike,
    ConcretizeCastLike,
    SimplifyAdd,
    SimplifyRSqrt,
    EliminateIdentity,
    SimplifyReshape,
    SimplifyTranspose,
    SimplifyNoOpTranspose,
    SimplifySameCast,
    SimplifyConsecutiveCast,
    FullElementwise,
    SwitchAddMultiply,
    SimplifyAdjacentMultiplyOrAdd,
    SimplifyDQArg,
    SimplifyClipAndConsecutiveCast,
    SimplifyClip,
    SimplifyBinomial,
)
"""Relay's SimplifyExpr rewrites, in its order (the three ``*_like`` groups as one pattern each)."""

def _walk_once(module: ModuleOp, pattern: RewritePattern) -> bool:
    """One forward walk of ``pattern`` over the relay ops present when it starts (ops it
    creates are not revisited in this walk, as in Relay's mutator)."""
    changed = False
    for op in [o for o in module.walk() if isinstance(o, RelayOp)]:
        if op.parent is None:  # erased by an earlier rewrite of this walk
            continue
        rewriter = PatternRewriter(op)
        pattern.match_and_rewrite(op, rewriter)
        changed |= rewriter.has_done_action
    return changed


def _drop_dead(module: ModuleOp) -> None:
    for op in module.ops:
        for region in op.regions:
            region_dce(region)


def simplify(module: ModuleOp, patterns: tuple[Callable[[], RewritePattern], ...], max_rounds: int = 100) -> None:
    """Apply ``patterns`` Relay's way: each one walk in order, the list repeated to a fixpoint.

    A pattern whose root ops do not occur in the module is skipped (its walk would change
    nothing); the set of ops present is refreshed after every change, and values nothing
    uses any more are dropped (as unreferenced Relay expressions disappear).
    """
    instances = [p() for p in patterns]

    def present() -> set[str]:
        return {op.RELAY_NAME for op in module.walk() if isinstance(op, RelayOp)}

    names = present()
    for _ in range(max_rounds):
        changed = False
        for pattern in instances:
            roots = getattr(pattern, "ROOTS", ())
            if roots and names.isdisjoint(roots):
                continue
            if _walk_once(module, pattern):
                changed = True
                _drop_dead(module)
                names = present()
        if not changed:
            return


@dataclass(frozen=True)
class SimplifyExprPass(ModulePass):
    """Relay's SimplifyExpr: merge reshapes, transposes and casts, drop identities and no-ops,
    concretise ``*_like`` ops, fold adjacent constant arithmetic."""

    name = "simplify-expr"
    relay_name: ClassVar[str] = "SimplifyExpr"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        simplify(op, SIMPLIFY_EXPR)
