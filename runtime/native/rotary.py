"""The native engine's rotations of rows: ``x * a + P(x) * b`` in one pass (rotary position
embeddings).

A decoder LLM rotates its queries and keys by position: ``q * cos + rotate_half(q) * sin``,
``rotate_half(q) = concatenate(-q[..., h:], q[..., :h])`` (Llama, Mistral, Qwen, Gemma,
Falcon, GPT-NeoX, ...), or GPT-J's interleaved ``stack(-q[..., 1::2], q[..., ::2])`` viewed
back. The fused function's ops ran as seven numpy passes (two products, two slices, a
negation, a concatenation, a sum): 0.16 ms for Llama's 8 heads of 128 x 64, 0.27 ms for its
keys with the grouped-query copy, a tenth of llama_small.

Whatever the ops moving ``x`` (``strided_slice``, ``concatenate``, ``stack``, ``negative``,
``reshape``, ``transpose``, ...), they place each element of ``x``, maybe negated: ``P`` is a
signed gather, found once by running those ops' reference kernels on the numbers
``1 .. x.size`` (their signs and positions say where each element came from). When it moves
elements within the last axis only, the same way in every row, the C kernel ``rotate_rows``
computes ``x * a + s * x[p] * b`` row by row over runs of the row that read ``x`` in order
(rotate_half: two runs), ``a`` and ``b`` broadcast (``cos``/``sin`` of shape (seq, d) for every
head), ranges of rows on the executor's threads. The same operations as the reference's in
its order (a sign is exact), so the same bits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.ir import Operation, SSAValue

from xrelay.dialects.relay import RelayOp, dtype_of, shape_of
from xrelay.kernels import KERNELS

__all__ = ["Rotation", "rotations", "row_offsets"]

MOVES = frozenset({
    "strided_slice", "concatenate", "stack", "negative", "reshape", "expand_dims", "squeeze",
    "transpose", "reverse",
})  # fmt: skip
"""Ops that only place (and ``negative``: negate) the elements of their one data operand."""

_MOST_OPS = 32
"""The most moving ops a rotation's ``P`` is made of (a bound on the walk back)."""


@dataclass(eq=False)
class Rotation:
    """``root = x * a + P(x) * b``: ``P`` within rows of ``d`` elements as runs of the row
    (``starts``, one more than runs) reading ``x`` from ``src`` on with ``signs``."""

    root: RelayOp
    x: SSAValue
    a: SSAValue
    b: SSAValue
    starts: np.ndarray
    src: np.ndarray
    signs: np.ndarray
    members: set[Operation] = field(default_factory=set, repr=False)


def _single_result(op: Any) -> bool:
    return isinstance(op, RelayOp) and len(op.results) == 1


def _only_used_by(v: SSAValue, users: set[Operation]) -> bool:
    return all(u.operation in users for u in v.uses)


def _moves_of(g: SSAValue, x: SSAValue) -> list[RelayOp] | None:
    """The moving ops that compute ``g`` from ``x`` alone, or None when ``g`` needs another
    value or more than ``_MOST_OPS`` ops."""
    ops: dict[Operation, None] = {}
    todo = [g]
    while todo:
        v = todo.pop()
        if v is x:
            continue
        op = v.owner
        if not _single_result(op) or op.RELAY_NAME not in MOVES:
            return None
        if op in ops:
            continue
        ops[op] = None
        if len(ops) > _MOST_OPS:
            return None
        todo.extend(op.operands)
    return list(ops)


def _runs(x: SSAValue, x_shape: tuple[int, ...], moves: list[RelayOp], order: dict, g: SSAValue):
    """``P`` as runs of a row (starts, src, signs), or None when it moves elements across
    rows or differently in different rows."""
    n = int(np.prod(x_shape, dtype=np.int64))
    d = x_shape[-1] if x_shape else 1
    if n == 0 or d == 0 or n >= 2**52:
        return None
    values = {x: np.arange(1, n + 1, dtype=np.float64).reshape(x_shape)}
    for op in sorted(moves, key=order.__getitem__):
        args = [values.get(v) for v in op.operands]
        if any(a is None for a in args):
            return None
        values[op.results[0]] = np.asarray(KERNELS[op.RELAY_NAME](*args, **op.attrs))
    placed = values[g]
    if placed.shape != x_shape or np.any(placed == 0):
        return None
    where = np.abs(placed).astype(np.int64).reshape(-1, d) - 1
    sign = np.sign(placed).reshape(-1, d)
    perm = where[0]
    rows = np.arange(where.shape[0], dtype=np.int64)[:, None] * d
    if (
        np.any(perm < 0)
        or np.any(perm >= d)
        or np.any(where - rows != perm)
        or np.any(sign != sign[0])
    ):
        return None
    sign = sign[0]
    breaks = (
        [0] + [j for j in range(1, d) if perm[j] != perm[j - 1] + 1 or sign[j] != sign[j - 1]] + [d]
    )
    starts = np.array(breaks, np.int64)
    return starts, perm[starts[:-1]].copy(), sign[starts[:-1]].copy()


def rotations(ops: list[Operation], returned: set[SSAValue]) -> dict[Operation, Rotation]:
    """Every op of a function's ``ops`` (in order) that belongs to a rotation, mapped to it:
    an ``add`` of ``x * a`` and ``P(x) * b`` (either order of each), float, of ``x``'s shape,
    whose products and moving ops are read by the rotation only."""
    order = {op: i for i, op in enumerate(ops)}
    found: dict[Operation, Rotation] = {}
    for root in ops:
        if not _single_result(root) or root.RELAY_NAME != "add" or root in found:
            continue
        out_shape = tuple(shape_of(root.results[0].type))
        if dtype_of(root.results[0].type) not in ("float32", "float64"):
            continue
        products = [v.owner for v in root.operands]
        if (
            not all(_single_result(p) and p.RELAY_NAME == "multiply" for p in products)
            or products[0] is products[1]
        ):
            continue
        if any(
            p.results[0] in returned or not _only_used_by(p.results[0], {root}) for p in products
        ):
            continue
        rot = _rotation(root, products, out_shape, order, returned)
        if rot is not None and not any(m in found for m in rot.members):
            for m in rot.members:
                found[m] = rot
    return found


def _rotation(root, products, out_shape, order, returned) -> Rotation | None:
    for plain, moved in (products, products[::-1]):
        for k in (0, 1):
            for j in (0, 1):
                rot = _found(root, plain, moved, k, j, out_shape, order, returned)
                if rot is not None:
                    return rot
    return None


def _found(root, plain, moved, k, j, out_shape, order, returned) -> Rotation | None:
    """``root = plain + moved`` with ``moved = P(g) * b`` (``g``, ``b``: its operands ``k``,
    ``1 - k``) and ``plain = x * a`` (``x``, ``a``: its operands ``j``, ``1 - j``)."""
    g, b = moved.operands[k], moved.operands[1 - k]
    x, a = plain.operands[j], plain.operands[1 - j]
    if tuple(shape_of(x.type)) != out_shape:
        return None
    moves = _moves_of(g, x)
    if not moves:
        return None
    members = {root, plain, moved, *moves}
    if any(m.results[0] in returned or not _only_used_by(m.results[0], members) for m in moves):
        return None
    if any(dtype_of(v.type) != dtype_of(root.results[0].type) for v in (x, a, b)):
        return None
    runs = _runs(x, out_shape, moves, order, g)
    return None if runs is None else Rotation(root, x, a, b, *runs, members=members)


def row_offsets(
    operand: np.ndarray, shape: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray, int] | None:
    """``operand`` broadcast to ``shape``: the view, each row's first element's offset from
    the view's first element (int64, elements) and the step along the row; None for a
    negative or fractional stride."""
    full = np.broadcast_to(operand, shape)
    size = full.dtype.itemsize
    if any(s < 0 or s % size for s in full.strides):
        return None
    lead = shape[:-1]
    offsets = np.zeros(lead, np.int64)
    for k, s in enumerate(full.strides[:-1]):
        offsets += (np.arange(lead[k], dtype=np.int64) * (s // size)).reshape(
            [-1 if i == k else 1 for i in range(len(lead))]
        )
    return full, offsets.reshape(-1), full.strides[-1] // size
