"""Functions that only move data, as a few strided copies from their inputs to their results.

A fused function made only of ops that rearrange elements -- ``concatenate``, ``stack``,
``reshape``, ``transpose``, ``split``, ``strided_slice``, ``squeeze``, ``expand_dims``,
``layout_transform``, ``copy`` -- ran op by op, each one a full copy into a temporary:
ShuffleNet's channel shuffle (``concatenate, reshape, transpose, reshape, split``) copied its
tensor three times, Swin's cyclic shift and window partition (``strided_slice``s and
``concatenate``s rolling two axes, then ``reshape, transpose, reshape``) four times. Which
input element lands where does not depend on the values, so it is found once, when the step
is bound: the function runs on *addresses* (input ``i``'s elements numbered
``i * 2**40 + offset``) through the reference kernels, each result's addresses are cut into
runs of consecutive elements of one input, and the runs of each (result, input) pair are
grouped by length and compressed into strided patterns: consecutive runs whose starts step
by a constant in the result and in the input are one level, consecutive patterns of the
same shape whose starts step by constants one more level, and so on. Each pattern is one
``np.copyto`` between two strided views of the arena (ShuffleNet's shuffle: four copies;
Swin's shifted window partition: a pattern per wrapped and unwrapped part), every element
moved once.

A chain of elementwise ops may follow the movement (Swin's window reverse and shift back,
then the residual ``add``; attention's scale after Q's split from the fused projection):
``add``/``subtract``/``multiply``/``maximum``/``minimum``, each with the chain's value and
an argument of the function of the result's shape or of one element. Elementwise
ops commute with moving data, so each pattern runs the chain on its views: the first op
reads the moved input's view and the argument seen at the result's positions and writes the
result's view, the next ops update it in place; one pass over the result.

A function whose runs compress into too many patterns, or whose tensors are not contiguous,
is left to the op-by-op path.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

__all__ = ["ELEMENTWISE_TAIL", "MOVEMENT_OPS", "Pattern", "compile_movement", "movement_patterns", "split_movement"]

MOVEMENT_OPS = frozenset({
    "concatenate", "stack", "reshape", "transpose", "split", "strided_slice", "squeeze", "expand_dims",
    "layout_transform", "copy", "nn.batch_flatten",
})  # fmt: skip
"""Ops whose result elements are input elements, placed by the attributes and shapes alone."""

ELEMENTWISE_TAIL = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply,
    "maximum": np.maximum, "minimum": np.minimum,
}  # fmt: skip
"""Elementwise ops that may follow the movement (each with one argument of the result's
shape or of one element)."""

MAX_ELEMENTS = 1 << 20
"""Largest result (elements) analysed: the addresses are int64, 8 bytes per element plus a
few temporaries of that size while the step is bound, which a loading process's peak
memory would show."""

MAX_PATTERNS = 64
"""Most strided copies a function runs as (more: each copy's call costs more than it saves)."""

MAX_ROWS = 1 << 14
"""Most runs of constant step the compression looks at (a scattered permutation has as many
as elements: the op-by-op path is as good)."""

_SHIFT = 40


def _rows(o: np.ndarray, s: np.ndarray) -> list[tuple[int, int, tuple]] | None:
    """The runs' starts ``o`` (result) and ``s`` (input), in result order, cut greedily into
    rows whose starts step by a constant pair: ``[(o0, s0, ((count, o_step, s_step),))]``."""
    n = len(o)
    if n == 1:
        return [(int(o[0]), int(s[0]), ())]
    do, ds = np.diff(o), np.diff(s)
    change = np.flatnonzero((do[1:] != do[:-1]) | (ds[1:] != ds[:-1])) + 1
    rows: list[tuple[int, int, tuple]] = []
    i = 0
    while i < n:
        if len(rows) > MAX_ROWS:
            return None
        if i == n - 1:
            rows.append((int(o[i]), int(s[i]), ()))
            break
        k = np.searchsorted(change, i + 1)
        end = int(change[k]) if k < len(change) else n - 1  # the row's last element
        rows.append((int(o[i]), int(s[i]), ((end - i + 1, int(do[i]), int(ds[i])),)))
        i = end + 1
    return rows


def _merge(rows: list[tuple[int, int, tuple]]) -> list[tuple[int, int, tuple]]:
    """One more level: consecutive patterns of the same levels whose starts step by a
    constant pair become one pattern (greedy, in result order)."""
    out: list[tuple[int, int, tuple]] = []
    i = 0
    while i < len(rows):
        o0, s0, lv = rows[i]
        j = i + 1
        if j < len(rows) and rows[j][2] == lv:
            do, ds = rows[j][0] - o0, rows[j][1] - s0
            while j + 1 < len(rows) and rows[j + 1][2] == lv and (rows[j + 1][0] - rows[j][0], rows[j + 1][1] - rows[j][1]) == (do, ds):
                j += 1
            out.append((o0, s0, ((j - i + 1, do, ds), *lv)))
            i = j + 1
        else:
            out.append((o0, s0, lv))
            i += 1
    return out


def _patterns(o: np.ndarray, s: np.ndarray) -> list[tuple[int, int, tuple]] | None:
    rows = _rows(o, s)
    if rows is None:
        return None
    while True:
        merged = _merge(rows)
        if len(merged) == len(rows):
            return rows
        rows = merged


def _distinct(a: np.ndarray) -> np.ndarray:
    """The sorted distinct values of ``a`` (``np.unique``'s, which imports ``numpy.ma``: 0.9 MB
    of a deployed process that never uses it)."""
    s = np.sort(a, axis=None)
    return s[np.concatenate(([True], s[1:] != s[:-1]))] if s.size else s


def _grouped(o: np.ndarray, s: np.ndarray, n: np.ndarray) -> list[tuple[int, int, int, tuple]] | None:
    """Patterns ``(run length, o0, s0, levels)`` covering the runs (starts ``o``, ``s``,
    lengths ``n``) of one (result, input) pair: the fewer of two groupings, by run length,
    or every run cut into runs of the lengths' greatest common divisor (runs that happen to
    touch, such as the last row of one window and the first of the next, make one longer
    run that breaks the regular pattern of the others)."""
    ways = []
    by_length: list | None = []
    for length in _distinct(n):
        found = _patterns(o[n == length], s[n == length])
        if found is None:
            by_length = None
            break
        by_length += [(int(length), *p) for p in found]
    if by_length is not None:
        ways.append(by_length)
    g = int(np.gcd.reduce(n))
    if len(_distinct(n)) > 1 and int(n.sum()) // g <= 16 * MAX_ROWS:
        k = n // g
        base = np.repeat(np.cumsum(k) - k, k)
        step = (np.arange(int(k.sum())) - base) * g
        found = _patterns(np.repeat(o, k) + step, np.repeat(s, k) + step)
        if found is not None:
            ways.append([(g, *p) for p in found])
    return min(ways, key=len) if ways else None


def split_movement(fn: Any) -> tuple[list, list] | None:
    """``fn``'s ops as (the movement, the elementwise chain after it), or None."""
    from xdsl.dialects import func
    from xdsl.ir import BlockArgument

    from xrelay.dialects.relay import ConstantOp, RelayOp, dtype_of, shape_of

    ops = [op for op in fn.body.block.ops if not isinstance(op, func.ReturnOp | ConstantOp)]
    if any(not isinstance(op, RelayOp) for op in ops):
        return None
    k = 0
    while k < len(ops) and ops[k].RELAY_NAME in MOVEMENT_OPS:
        k += 1
    move, tail = ops[:k], ops[k:]
    if not move:
        return None
    ret = fn.body.block.last_op
    if tail:
        if len(ret.operands) != 1 or ret.operands[0] is not tail[-1].results[0]:
            return None
        # (the chain's first op reads the movement's result; a unary op has one operand)
        prev = next((v for v in tail[0].operands if v.owner in move), None)
        if prev is None:
            return None
        for op in tail:
            if op.RELAY_NAME not in ELEMENTWISE_TAIL or len(op.operands) != 2 or list(op.operands).count(prev) != 1:
                return None
            other = op.operands[1] if op.operands[0] is prev else op.operands[0]
            single = math.prod(shape_of(other.type)) == 1 and dtype_of(other.type) == dtype_of(prev.type)
            if prev.type != op.results[0].type or not (
                (isinstance(other, BlockArgument) and (other.type == prev.type or single))
                or (isinstance(other.owner, ConstantOp) and single)
            ):
                return None  # (an argument of the result's type, or one element)
            prev = op.results[0]
    return move, tail


def _addresses(fn: Any, move: list, wanted: list, shapes: Sequence[tuple[int, ...]]) -> list[np.ndarray] | None:
    """The element addresses of the values ``wanted``, from the reference kernels run on
    address inputs through the ops ``move``."""
    from xrelay.kernels import KERNELS

    body = fn.body.block
    env: dict[Any, Any] = {}
    for i, (arg, shape) in enumerate(zip(body.args, shapes)):
        env[arg] = (np.int64(i) << _SHIFT) + np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    for op in move:
        if any(v not in env for v in op.operands):
            return None  # (a constant moved: not an address)
        res = KERNELS[op.RELAY_NAME](*[env[v] for v in op.operands], **op.attrs)
        res = res if isinstance(res, tuple | list) else (res,)
        if len(res) != len(op.results):
            return None
        env.update(zip(op.results, res))
    return [np.asarray(env[v]) for v in wanted]


Pattern = tuple[int, int, int, int, int, tuple]
"""``(result, input, run length, o0, s0, levels)``: elements ``s0 + sum(k_j * s_j) + e`` of
input ``input`` go to ``o0 + sum(k_j * o_j) + e`` of result ``result`` (flat element
offsets), for ``e < run length`` and each level ``(n_j, o_j, s_j)``, ``k_j < n_j``."""


_VIEWS = frozenset({"reshape", "squeeze", "expand_dims", "nn.batch_flatten", "transpose", "layout_transform",
                    "strided_slice", "copy"})  # fmt: skip
"""Movement ops whose result is a strided view of their operand (a reshape only when it is
one), so that ``_view_patterns`` finds their patterns without addresses."""


def _view_patterns(fn: Any, move: list, wanted: list, shapes: Sequence[tuple[int, ...]]) -> list[Pattern] | None:
    """The patterns of a movement whose wanted values are made of strided views of its
    inputs, found on element strides alone. Each value is a list of pieces (input, view,
    where the piece starts in the value): each input a strided array of one-byte elements
    over no memory (its strides are element strides, its data offset the element offset),
    transposes, layout transforms, slices and reshapes that stay views are numpy's view
    operations on a piece, a concatenation places its operands' pieces side by side, a
    transpose after it permutes them too, and the last op may be a reshape that is no view
    (the destination, contiguous, is then seen in the shape before it: a GroupNorm's
    grouping of NHWC data moved back to NCHW). Each piece is one pattern. None when an op
    is another or a reshape of several pieces or not last: the address analysis then runs.
    Its per-element arrays of a large transform (an NCHW -> NHWC transform of 2 x 256 x 999
    elements, every element a run of its own) were a loading process's peak, 40 MB above
    what it held after."""
    from xrelay.dialects.relay import shape_of
    from xrelay.dialects.relay.ops import strided_slice_bounds

    body = fn.body.block
    base = np.zeros(1, np.uint8)
    origin = base.ctypes.data
    env: dict[Any, list[tuple[int, np.ndarray, tuple[int, ...]]]] = {}
    for i, (arg, shape) in enumerate(zip(body.args, shapes)):
        view = as_strided(base, shape, [math.prod(shape[k + 1 :]) for k in range(len(shape))])
        env[arg] = [(i, view, (0,) * len(shape))]
    seen_as: dict[Any, tuple[int, ...]] = {}  # a result whose destination is seen in another shape
    for op in move:
        name = op.RELAY_NAME
        if name not in _VIEWS and name != "concatenate" or any(v not in env for v in op.operands):
            return None
        shape = tuple(shape_of(op.results[0].type))
        if name == "concatenate":
            axis = int(op.attrs.get("axis", 0)) % len(shape)
            pieces, at = [], 0
            for v in op.operands:
                pieces += [(i, view, (*s[:axis], s[axis] + at, *s[axis + 1 :])) for i, view, s in env[v]]
                at += tuple(shape_of(v.type))[axis]
            env[op.results[0]] = pieces
            continue
        if len(op.operands) != 1:
            return None
        pieces = env[op.operands[0]]
        if name in ("transpose", "layout_transform"):
            if name == "transpose":
                axes = op.attrs.get("axes")
                perm = [int(x) % len(shape) for x in axes] if axes else list(range(len(shape)))[::-1]
            else:
                src, dst = op.attrs["src_layout"], op.attrs["dst_layout"]
                if sorted(src) != sorted(dst) or not src.isalpha() or not src.isupper():
                    return None  # (a blocked layout)
                perm = [src.index(ch) for ch in dst]
            pieces = [(i, view.transpose(perm), tuple(s[k] for k in perm)) for i, view, s in pieces]
        elif name == "copy":
            pass
        elif len(pieces) != 1 or any(pieces[0][2]):
            return None  # (a slice or reshape of a concatenation)
        elif name == "strided_slice":
            i, a, _ = pieces[0]
            at = op.attrs
            bounds = strided_slice_bounds(a.shape, at["begin"], at["end"], at["strides"], at["axes"], at["slice_mode"])
            if bounds is None:
                return None
            pieces = [(i, a[tuple(slice(b, None if e < 0 else e, k) for b, e, k in bounds)], (0,) * len(shape))]
        else:  # the reshapes
            i, a, _ = pieces[0]
            a = a.view()
            try:
                a.shape = shape
            except AttributeError:
                if op is not move[-1]:
                    return None
                seen_as[op.results[0]] = a.shape  # (no view: the destination in a's shape)
            pieces = [(i, a, (0,) * a.ndim)]
        if op.results[0] not in seen_as and any(view.shape != shape for _, view, _ in pieces if len(pieces) == 1):
            return None
        env[op.results[0]] = pieces
    out: list[Pattern] = []
    for r, v in enumerate(wanted):
        if v not in env:
            return None
        shape = seen_as.get(v, tuple(shape_of(v.type)))
        dst = [math.prod(shape[k + 1 :]) for k in range(len(shape))]
        for i, view, first in env[v]:
            if view.size == 0:
                continue
            dims = [(n, d, st) for n, d, st in zip(view.shape, dst, view.strides) if n != 1]
            merged: list[tuple[int, int, int]] = []
            for n, d, st in dims:  # neighbours that step as one merge
                if merged and merged[-1][1] == d * n and merged[-1][2] == st * n:
                    merged[-1] = (merged[-1][0] * n, d, st)
                else:
                    merged.append((n, d, st))
            length = 1
            if merged and merged[-1][1:] == (1, 1):
                length = merged.pop()[0]
            o0 = sum(k * d for k, d in zip(first, dst))
            out.append((r, i, length, o0, view.ctypes.data - origin, tuple(merged)))
    return out if len(out) <= MAX_PATTERNS else None


def movement_patterns(fn: Any, move: list, wanted: list, shapes: Sequence[tuple[int, ...]]) -> list[Pattern] | None:
    """The strided patterns that move ``fn``'s inputs (of ``shapes``) into the values
    ``wanted`` through the ops ``move`` (``split_movement``): every element of each wanted value
    once, or None (a constant moved, a value larger than ``MAX_ELEMENTS``, more than
    ``MAX_PATTERNS`` patterns). The analysis runs on addresses (the module docstring)."""
    from xrelay.dialects.relay import shape_of

    if sum(math.prod(shape_of(v.type)) for v in wanted) > MAX_ELEMENTS:
        return None
    if any(v in fn.body.block.args for v in wanted):
        return None
    viewed = _view_patterns(fn, move, wanted, shapes)
    if viewed is not None:
        return viewed
    addresses = _addresses(fn, move, wanted, shapes)
    if addresses is None or any(a.shape != tuple(shape_of(v.type)) for a, v in zip(addresses, wanted)):
        return None
    out: list[Pattern] = []
    for r, addr in enumerate(addresses):
        flat = _flat_patterns(addr.reshape(-1))
        peeled = _peeled_patterns(addr)
        if flat is None or (peeled is not None and len(peeled) < len(flat)):
            flat = peeled
        if flat is None or len(out) + len(flat) > MAX_PATTERNS:
            return None
        out += [(r, i, length, o0, s0, levels) for i, length, o0, s0, levels in flat]
    return out


def _flat_patterns(flat: np.ndarray) -> list[tuple[int, int, int, int, tuple]] | None:
    """``(input, run length, o0, s0, levels)`` of the addresses ``flat`` of one result,
    found over its flat element order, or None."""
    out: list[tuple[int, int, int, int, tuple]] = []
    if flat.size == 0:
        return out
    src, off = flat >> _SHIFT, flat & ((1 << _SHIFT) - 1)
    cut = np.flatnonzero((np.diff(src) != 0) | (np.diff(off) != 1)) + 1
    starts = np.concatenate(([0], cut))
    lengths = np.diff(np.concatenate((starts, [flat.size])))
    for i in _distinct(src[starts]):
        mine = src[starts] == i
        found = _grouped(starts[mine], off[starts][mine], lengths[mine])
        if found is None or len(out) + len(found) > MAX_PATTERNS:
            return None
        out += [(int(i), length, o0, s0, levels) for length, o0, s0, levels in found]
    return out


def _peeled_patterns(addr: np.ndarray) -> list[tuple[int, int, int, int, tuple]] | None:
    """``_flat_patterns`` of a result whose leading dimensions each move every element by a
    constant step of its input (a channel permutation repeated at every pixel, ShuffleNet's
    shuffle of three groups), found on the block of the other dimensions at index 0 and
    given those dimensions as outer levels; None where no leading dimension is such or the
    block has no few patterns. The flat order interleaves such a block's runs of each input
    at every pixel, which the flat compression does not untangle."""
    shape = addr.shape
    if addr.size == 0:  # (nothing to move: the flat finder's empty list says so)
        return None
    src, off = addr >> _SHIFT, addr & ((1 << _SHIFT) - 1)
    outer: list[tuple[int, int, dict]] = []  # (size, result step, {input: its step})
    k = 0
    while k < len(shape) - 1:
        n = shape[k]
        if n > 1:
            first, after = np.take(src, np.arange(n - 1), axis=k), np.take(src, np.arange(1, n), axis=k)
            if not np.array_equal(first, after):
                break
            delta = np.take(off, np.arange(1, n), axis=k) - np.take(off, np.arange(n - 1), axis=k)
            steps = {}
            for i in _distinct(first):
                d = _distinct(delta[first == i])
                if len(d) != 1:
                    break
                steps[int(i)] = int(d[0])
            else:
                outer.append((n, math.prod(shape[k + 1 :]), steps))
                k += 1
                continue
            break
        k += 1
    if not outer:
        return None
    block = _flat_patterns(addr[(0,) * k].reshape(-1))
    if block is None:
        return None
    return [
        (i, length, o0, s0, tuple((n, o_step, steps[i]) for n, o_step, steps in outer) + levels)
        for i, length, o0, s0, levels in block
    ]


def compile_movement(fn: Any, inputs: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> list | None:
    """``[(label, family, thunk)]`` computing ``outs`` from ``inputs`` as ``fn`` does, or None
    (a single op: its own kernel is as good, and ``concatenate``'s runs on the threads; an op
    that is neither a movement nor the elementwise chain after it, tensors that are not
    contiguous or too large, too many patterns)."""
    from xrelay.dialects.relay import shape_of

    parts = split_movement(fn)
    if parts is None:
        return None
    move, tail = parts
    if len(move) + len(tail) < 2 or all(op.RESHAPE_ONLY for op in move):
        return None
    arrays = [*inputs, *outs]
    if any(not isinstance(a, np.ndarray) or not a.flags.c_contiguous for a in arrays):
        return None
    if len({a.dtype for a in arrays}) != 1:
        return None
    ret = fn.body.block.last_op
    args = list(fn.body.block.args)
    if tail:
        head = tail[0].operands[0] if tail[0].operands[0].owner in move else tail[0].operands[1]
        wanted = [head]
    else:
        wanted = list(ret.operands)
    if any(tuple(shape_of(v.type)) != o.shape for v, o in zip(wanted, outs)):
        return None
    patterns = movement_patterns(fn, move, wanted, [a.shape for a in inputs])
    if patterns is None:
        return None
    chain = []  # (ufunc, the other operand's array, whether the chain's value comes first)
    prev = wanted[0] if tail else None
    for op in tail:
        other = op.operands[1] if op.operands[0] is prev else op.operands[0]
        value = inputs[args.index(other)] if other in args else np.array(other.owner.numpy(), outs[0].dtype)  # (owned: not a params file's page)
        chain.append((ELEMENTWISE_TAIL[op.RELAY_NAME], value, op.operands[0] is prev))
        prev = op.results[0]
    item = outs[0].itemsize
    copies = []
    for r, i, length, o0, s0, levels in patterns:
        thunk = _strided(outs[r], inputs, i, o0, s0, levels, length, item, chain)
        if thunk is None:
            return None
        copies.append(thunk)
    names = [op.RELAY_NAME for op in move]
    label = ", ".join(dict.fromkeys(names)) + " as strided copies"
    if tail:
        label += " + " + ", ".join(op.RELAY_NAME for op in tail)

    def run() -> None:
        for c in copies:
            c()

    return [(label, "copy", run)]


def _strided(out, inputs, i, o0, s0, levels, length, item, chain):
    """One pattern: the copy (or the elementwise chain) between its strided views."""
    shape = [n for n, _, _ in levels] + [length]
    o_steps = [d for _, d, _ in levels] + [1]
    s_steps = [d for _, _, d in levels] + [1]
    src_flat = inputs[i].reshape(-1)

    def reach(base, steps, size):
        lo = base + sum(min(0, (n - 1) * d) for n, d in zip(shape, steps))
        hi = base + sum(max(0, (n - 1) * d) for n, d in zip(shape, steps))
        return lo >= 0 and hi < size

    if not (reach(o0, o_steps, out.size) and reach(s0, s_steps, src_flat.size)):
        return None  # (cannot happen for addresses the kernels produced; checked anyway)
    dst = as_strided(out.reshape(-1)[o0:], shape, [d * item for d in o_steps], writeable=True)
    src = as_strided(src_flat[s0:], shape, [d * item for d in s_steps], writeable=False)
    if not chain:
        return functools.partial(np.copyto, dst, src)
    views = [v.reshape(()) if v.size == 1 and v.size != out.size else
             as_strided(v.reshape(-1)[o0:], shape, [d * item for d in o_steps], writeable=False)
             for _, v, _ in chain]  # fmt: skip (one element: broadcast)
    steps = []
    for n, ((f, _, first), other) in enumerate(zip(chain, views)):
        cur = src if n == 0 else dst
        a, b = (cur, other) if first else (other, cur)
        steps.append(functools.partial(f, a, b, out=dst))

    def run() -> None:
        for s in steps:
            s()

    return run
