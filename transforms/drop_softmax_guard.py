"""``drop-softmax-guard``: a softmax whose rows cannot be all ``-inf`` loses its guard.

torch's attention softmax (``aten._safe_softmax``, which ``scaled_dot_product_attention`` and
``nn.MultiheadAttention`` lower to) gives zeros for a row that is all ``-inf`` (a fully masked
query) where a softmax gives NaN. Imported, that is a softmax and a guard: a reduction over
the row and a select after the softmax, two more steps per attention layer::

    %s = relay.nn.softmax %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %n = relay.not_equal %x, %minus_inf : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xi1>
    %i = relay.cast %n {dtype = "int32"} : (tensor<2x4xi1>) -> tensor<2x4xi32>
    %m = relay.max %i {axis = [1], keepdims = true} : (tensor<2x4xi32>) -> tensor<2x1xi32>
    %live = relay.cast %m {dtype = "bool"} : (tensor<2x1xi32>) -> tensor<2x1xi1>
    %y = relay.where %live, %s, %zero : (tensor<2x1xi1>, tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
    // becomes, when no element of %x can be an infinity
    %y = relay.nn.softmax %x : (tensor<2x4xf32>) -> tensor<2x4xf32>

``DropSoftmaxGuard`` reads the guard in the forms importers write it: ``any(x != -inf)`` or
``any(not(x == -inf))`` (torch's decomposition) or ``all(x == -inf)`` along the softmax's
axis, the ``any``/``all`` as ``max``/``min`` (of an integer cast or not, cast back to bool or
not), negated by ``logical_not`` with the select's branches swapped, the other branch a
constant of zeros.

The guard changes a row only when the row is all ``-inf``, so it may go when ``x`` cannot
hold ``-inf``; the pass proves that ``x`` holds no infinity (``finite_or_nan``; a NaN row is
NaN either way). Constants are read; ops whose result is never infinite (``nn.layer_norm``
with finite ``gamma`` and ``beta``, ``nn.softmax``, ``sigmoid``, ``tanh``, ``erf``, a
``clip`` to finite bounds) end the search; arithmetic and data movement (sums, products,
``nn.dense``, matmuls, convolutions, pooling, reductions, reshapes, transposes, slices,
concatenations, ``where`` of two such values) hold an infinity only where an operand does,
float arithmetic taken not to overflow (a row of scores of finite operands all below
``-3.4e38`` is what that leaves out); anything else, an input of the function above all (a
mask given at run time), may hold one and keeps the guard. So an unmasked attention after a
layer norm (ViT's) loses its guard, also with a finite constant mask added; a causal or
padding mask of ``-inf`` keeps it. The build runs this pass first, before
``simplify-inference`` writes ``nn.layer_norm`` as arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter

from xrelay.dialects.relay import RelayOp, dtype_of, shape_of
from xrelay.transforms._relay_rewrite import RelayOpPattern, constant_value, rewrite_to_fixpoint

__all__ = ["DropSoftmaxGuard", "DropSoftmaxGuardPass", "drop_softmax_guard", "finite_or_nan"]

_NEVER_INFINITE = frozenset({"nn.softmax", "sigmoid", "tanh", "erf", "cos", "sin"})
"""Ops whose float result is finite or NaN whatever their input."""

_PROPAGATE = frozenset({
    "add", "subtract", "multiply", "negative", "abs", "sqrt", "nn.relu", "nn.dense", "nn.matmul",
    "nn.batch_matmul", "nn.bias_add", "nn.conv1d", "nn.conv2d", "nn.avg_pool2d", "nn.max_pool2d",
    "nn.global_avg_pool2d", "mean", "sum", "max", "min", "reshape", "transpose", "squeeze",
    "expand_dims", "broadcast_to", "strided_slice", "split", "concatenate", "take", "where",
    "tile", "nn.pad", "nn.batch_flatten", "layout_transform", "copy",
})  # fmt: skip
"""Ops whose float result holds an infinity only where a float operand does (no overflow;
``exp``, ``divide``, ``log``, ``rsqrt``, ``power`` make one of finite operands, so they are
not here)."""


def _is_float(v: SSAValue) -> bool:
    return dtype_of(v.type).startswith(("float", "bfloat"))


def _steps(op: Operation) -> list[SSAValue] | None:
    """The operands ``op``'s result is finite-or-NaN if they are; None: it may be infinite."""
    if not isinstance(op, RelayOp):
        return None
    name = op.RELAY_NAME
    if name in _NEVER_INFINITE:
        return []
    if name == "nn.layer_norm":
        return list(op.operands[1:])  # normalised: only gamma and beta can make it infinite
    if name == "clip":
        bounded = np.isfinite(float(op.attrs["a_min"])) and np.isfinite(float(op.attrs["a_max"]))
        return [] if bounded else list(op.operands)
    if name in _PROPAGATE:
        return [v for v in op.operands if _is_float(v)]
    return None


def finite_or_nan(value: SSAValue) -> bool:
    """Whether no element of ``value`` can be ``+inf`` or ``-inf`` (see the module docstring).
    Walks the operands iteratively (a network's depth of ops)."""
    seen: set[SSAValue] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        c = constant_value(v)
        if c is not None:
            if c.dtype.kind == "f" and np.isinf(c).any():
                return False
            continue
        nxt = _steps(v.owner)
        if nxt is None:
            return False
        stack.extend(nxt)
    return True


def _op(v: SSAValue, *names: str) -> RelayOp | None:
    o = v.owner
    return o if isinstance(o, RelayOp) and o.RELAY_NAME in names else None


def _unwrap(v: SSAValue) -> tuple[SSAValue, bool]:
    """``v`` without the casts and ``logical_not``s around it, and whether they negate it."""
    negated = False
    while (o := _op(v, "cast", "logical_not")) is not None:
        negated ^= o.RELAY_NAME == "logical_not"
        v = o.operands[0]
    return v, negated


def _minus_inf_test(v: SSAValue) -> tuple[SSAValue, bool] | None:
    """``(x, equal)`` when ``v`` is ``x == -inf`` (``equal``) or ``x != -inf`` elementwise."""
    v, negated = _unwrap(v)
    o = _op(v, "equal", "not_equal")
    if o is None:
        return None
    for x, c in (o.operands, o.operands[::-1]):
        k = constant_value(c)
        if (
            k is not None
            and k.size == 1
            and k.dtype.kind == "f"
            and float(k.reshape(-1)[0]) == -np.inf
        ):
            return x, (o.RELAY_NAME == "equal") != negated
    return None


def _dead_rows(cond: SSAValue) -> tuple[SSAValue, int, bool] | None:
    """``(x, axis, dead)`` when ``cond`` is, along ``axis`` with the axis kept, whether the
    row of ``x`` is all ``-inf`` (``dead``) or has an element that is not (not ``dead``)."""
    v, negated = _unwrap(cond)
    red = _op(v, "max", "min")
    if red is None or not red.attrs.get("keepdims") or red.attrs.get("exclude"):
        return None
    axes = red.attrs.get("axis")
    test = _minus_inf_test(red.operands[0])
    if test is None or axes is None or len(axes) != 1:
        return None
    x, equal = test
    # max of (x != -inf) is "some element is live"; min of (x == -inf) is "all are -inf"
    if (red.RELAY_NAME == "max") == equal:
        return None
    axis = int(axes[0]) % len(shape_of(x.type))
    return x, axis, (red.RELAY_NAME == "min") != negated


class DropSoftmaxGuard(RelayOpPattern):
    """``where(live, softmax(x), 0)`` (or ``where(dead, 0, softmax(x))``), the guard along
    the softmax's axis, becomes ``softmax(x)`` when ``finite_or_nan(x)``::

        %y = relay.where %live, %s, %zero : (tensor<2x1xi1>, tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
        // becomes
        %s = relay.nn.softmax %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
    """

    ROOT: ClassVar[str] = "where"

    def rewrite(self, op: RelayOp, rewriter: PatternRewriter) -> None:
        guard = _dead_rows(op.operands[0])
        if guard is None:
            return
        x, axis, dead = guard
        kept, zero = (op.operands[2], op.operands[1]) if dead else (op.operands[1], op.operands[2])
        sm = _op(kept, "nn.softmax")
        z = constant_value(zero)
        if sm is None or sm.operands[0] != x or z is None or np.any(z != 0):
            return
        if (
            int(sm.attrs.get("axis", -1)) % len(shape_of(x.type)) != axis
            or kept.type != op.results[0].type
        ):
            return
        if finite_or_nan(x):
            rewriter.replace(op, [], [kept])


def drop_softmax_guard(module: ModuleOp) -> int:
    """Drop every guard ``DropSoftmaxGuard`` proves useless (and the ops only it read);
    returns the number dropped."""
    return rewrite_to_fixpoint(module, [DropSoftmaxGuard()], max_rounds=2)


@dataclass(frozen=True)
class DropSoftmaxGuardPass(ModulePass):
    """A softmax whose rows cannot be all ``-inf`` loses its guard (see the module docstring)."""

    name = "drop-softmax-guard"
    opt_level: ClassVar[int] = 1

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        drop_softmax_guard(op)
