"""
Heuristic offset planners: the greedy algorithms of TFLite, TFLite Micro, TVM USMP,
ExecuTorch (Cadence hierarchy planners); Relay's GraphPlanMemory shared objects
(``storage-ids``) are ``xrelay.runtime.memory_plan.plan_storage_ids`` (the graph JSON states them).

All offset planners share one placement engine (``_Placer``): buffers are visited in an
algorithm-specific order and each is put in the first pool of its allowed pools (priority
order) where the algorithm's placement rule yields an offset that fits the pool. A buffer
that fits nowhere raises ``PlanError`` naming the buffer and every pool's free space.
"""

from __future__ import annotations

import bisect
import gc
import math
import random
import time
from collections.abc import Callable, Sequence
from itertools import repeat

import numpy as np

from xrelay.runtime.memory_plan import (
    Buffer,
    Plan,
    PlanError,
    Pool,
    align_up,
    allowed_pools,
    default_pools,
    effective_alignment,
    footprint,
)

# A placed buffer inside a pool, as the placement rules see it: (offset, top = offset +
# footprint). Entries that tie on both behave the same in every rule.
_Slot = tuple[int, int]
# A placed buffer with its lifetime, for error messages: (offset, top, start, end).
_Entry = tuple[int, int, int, int]
# A placement rule: (conflicting slots sorted by offset, footprint, alignment) -> offset.
_Rule = Callable[[list[_Slot], int, int], int]


def _best_fit(conflicts: list[_Entry], size: int, align: int) -> int:
    """Smallest gap between lifetime-conflicting buffers that holds ``size`` bytes
    (Pisarchyk & Lee Alg. 3 / TFLite SimpleMemoryArena); else above all of them."""
    best, best_gap, prev = -1, math.inf, 0
    for off, top in conflicts:
        cand = align_up(prev, align)
        gap = off - cand
        if size <= gap < best_gap:
            best, best_gap = cand, gap
            if gap == size:
                break
        prev = max(prev, top)
    return best if best >= 0 else align_up(prev, align)


def _first_fit(conflicts: list[_Entry], size: int, align: int) -> int:
    """First (lowest) gap that holds ``size`` bytes (TFLite Micro GreedyMemoryPlanner)."""
    prev = 0
    for off, top in conflicts:
        cand = align_up(prev, align)
        if off - cand >= size:
            return cand
        prev = max(prev, top)
    return align_up(prev, align)


def _above_conflicts(conflicts: list[_Entry], size: int, align: int) -> int:
    """Above the highest conflicting buffer, no gap filling (TVM USMP greedy)."""
    return align_up(max((top for _, top in conflicts), default=0), align)


def _bump_past(conflicts: list[_Entry], size: int, align: int) -> int:
    """Start at 0 and jump past any conflicting buffer overlapping the candidate range
    until none does (ExecuTorch Cadence position-based greedy)."""
    offset = 0
    moved = True
    while moved:
        moved = False
        for off, top in conflicts:
            if off < offset + size and offset < top:
                offset = align_up(top, align)
                moved = True
    return offset


class _LifetimeIndex:
    """Entries found by lifetime in O(log T + k) instead of a scan of all placed ones.

    Lifetimes are given as ranks among the buffers' distinct first steps (see ``_Columns``):
    ``lo`` is the rank of the first step, ``hi`` the rank of the last first step ``<=`` the
    last step. An entry conflicts with ``[lo, hi]`` when it is live at ``lo`` or starts
    inside ``(lo, hi]``; the two sets are disjoint. Live-at-``lo`` is a stabbing query on a
    segment tree over the ranks, each entry stored at the O(log T) nodes covering its
    lifetime; starting-inside is a walk over the per-rank lists of the ranks in ``(lo, hi]``.
    Entries are any orderable values (the placer's ``(offset, top)``, hill-climb's indices).
    """

    def __init__(self, ranks: int):
        self.size = 1 << max(0, ranks - 1).bit_length()
        self.tree: list[list | None] = [None] * (2 * self.size)
        self.by_start: list[list | None] = [None] * ranks

    def add(self, lo: int, hi: int, entry) -> None:
        bucket = self.by_start[lo]
        if bucket is None:
            self.by_start[lo] = [entry]
        else:
            bucket.append(entry)
        tree = self.tree
        left, right = lo + self.size, hi + self.size + 1
        while left < right:
            if left & 1:
                lst = tree[left]
                if lst is None:
                    tree[left] = [entry]
                else:
                    lst.append(entry)
                left += 1
            if right & 1:
                right -= 1
                lst = tree[right]
                if lst is None:
                    tree[right] = [entry]
                else:
                    lst.append(entry)
            left >>= 1
            right >>= 1

    def conflicts(self, lo: int, hi: int) -> list:
        """Entries live at some rank of ``[lo, hi]``, sorted."""
        tree = self.tree
        found: list = []
        node = lo + self.size
        while node:
            lst = tree[node]
            if lst is not None:
                found += lst
            node >>= 1
        by_start = self.by_start
        for r in range(lo + 1, hi + 1):
            bucket = by_start[r]
            if bucket is not None:
                found += bucket
        found.sort()
        return found


class _TimeIndex:
    """The conflicts of every buffer as ranges and lists of *time positions* (the buffers
    renumbered by first step, ties in input order), read next to each other in memory.

    With the buffers in that order, the ones conflicting with position ``t`` are those after
    it that start by its last step, the contiguous positions ``t + 1 .. forward[t] - 1``, and
    those before it still live at its first step, listed in ``back[bptr[t]:bptr[t + 1]]``.
    The placer keeps every pool's offsets and tops in int64 arrays by position (top 0: not
    placed there), so a query reads a few cache lines around ``t`` instead of the
    Python objects of a segment tree scattered over the heap: visiting a million buffers
    in size order (random places in time) then costs per buffer what visiting them in time
    order does. ``back`` holds one entry per conflicting pair, which bounds its use to
    problems with a bounded number of conflicts per buffer (``build``).
    """

    MAX_PAIRS_PER_BUFFER = 32
    """Above this many conflicting pairs per buffer on average, ``build`` declines (the
    pair list would cost more memory than the segment tree; the work is quadratic-ish then
    anyway, in both)."""

    def __init__(self, inputs, position, forward, bptr, back):
        self.inputs = inputs  # time position -> input index (int64 array)
        self.position = position  # input index -> time position (int64 array)
        self.forward = forward  # time position -> end of its forward range (int64 array)
        self.bptr = bptr  # time position -> start of its list in ``back`` (int64, n + 1)
        # Earlier positions still live, grouped by position: for numpy, and as a memoryview
        # for the placement loop (indexing it makes plain ints, faster than numpy scalars).
        self.back_np = back
        self.back = memoryview(back)

    @classmethod
    def build(cls, cols: _Columns) -> _TimeIndex | None:
        """The index of ``cols``, or None when offsets could leave int64 or the problem has
        too many conflicting pairs (the segment tree is used then)."""
        n = len(cols.lo)
        if cols.size.dtype == object or cols.alignment.dtype == object:
            return None
        # Every offset a rule returns is at most the highest top so far plus an
        # alignment, and every top adds a footprint: the sum of sizes plus twice the
        # alignments bounds them all (floats: the sum itself may not fit int64).
        align = np.maximum(cols.alignment, max((p.alignment for p in cols.pools), default=1))
        bound = float(cols.size.sum(dtype=np.float64)) + 2.0 * float(align.sum(dtype=np.float64))
        if bound >= 2.0**61:
            return None
        order = cols.time_order if cols.time_order is not None else np.argsort(cols.lo, kind="stable")
        position = np.empty(n, dtype=np.int64)
        position[order] = np.arange(n, dtype=np.int64)
        first = cols.lo[order]
        forward = np.searchsorted(first, cols.hi[order], side="right").astype(np.int64)
        span = forward - np.arange(n, dtype=np.int64) - 1  # conflicts after each position
        pairs = int(span.sum())
        if pairs > cls.MAX_PAIRS_PER_BUFFER * n + 4096:
            return None
        # The pairs (u, t), u < t < forward[u], grouped by t: as keys t * n + u, sorted. For
        # each u in turn the keys run (u + 1) * n + u, (u + 2) * n + u, ...: one pair-sized
        # array of steps (n within a run, a jump where the next u's run starts) summed in place.
        has = span > 0
        runs = np.flatnonzero(has)
        first = (runs + 1) * n + runs  # each run's first key
        last = first + (span[runs] - 1) * n
        keys = np.full(pairs, n, dtype=np.int64)
        starts = np.cumsum(span[runs]) - span[runs]
        keys[starts] = first - np.concatenate(([0], last[:-1]))
        np.cumsum(keys, out=keys)
        keys.sort(kind="stable")  # timsort: the keys come in short ascending runs
        keys %= n
        # Position t's list holds the u with u < t < forward[u]: +1 from u + 1, -1 from forward[u].
        live = np.bincount(runs + 1, minlength=n + 1)
        live -= np.bincount(forward[has], minlength=n + 1)
        bptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.cumsum(live[:n]), out=bptr[1:])
        return cls(order, position, forward, bptr, keys)


_INT64_SAFE = 1 << 62
"""Columns whose values all lie within +-2**62 are sorted and ranked by numpy (negating
them stays in int64); a problem with larger sizes or steps takes the plain-Python path."""


def _column(values: list[int]) -> np.ndarray:
    """``values`` as an int64 array, or an object array when some value is too large."""
    try:
        arr = np.array(values, dtype=np.int64)
    except OverflowError:
        return np.array(values, dtype=object)
    if len(arr) and (arr.max() >= _INT64_SAFE or arr.min() <= -_INT64_SAFE):
        return np.array(values, dtype=object)
    return arr


def _stable_order(keys: Sequence[tuple[np.ndarray, bool]]) -> list[int]:
    """Indices sorted stably by ``(column, descending)`` keys, most significant first."""
    n = len(keys[0][0])
    if all(col.dtype != object for col, _ in keys):
        # np.lexsort is stable and takes its keys least significant first.
        return np.lexsort(tuple(-col if desc else col for col, desc in reversed(keys))).tolist()
    cols = [col.tolist() for col, _ in keys]
    signs = [-1 if desc else 1 for _, desc in keys]
    return sorted(range(n), key=lambda i: tuple(s * c[i] for s, c in zip(signs, cols)))


def _order_then_names(keys: Sequence[tuple[np.ndarray, bool]], names: Sequence[str]) -> list[int]:
    """Like ``_stable_order`` with the (unique) buffer names as the last key: numpy sorts by
    the columns, and only runs of equal keys are sorted by name in Python."""
    if any(col.dtype == object for col, _ in keys):
        cols = [col.tolist() for col, _ in keys]
        signs = [-1 if desc else 1 for _, desc in keys]
        return sorted(
            range(len(names)), key=lambda i: (*(s * c[i] for s, c in zip(signs, cols)), names[i])
        )
    order = np.asarray(_stable_order(keys), dtype=np.int64)
    if len(order) < 2:
        return order.tolist()
    same = np.ones(len(order) - 1, dtype=bool)
    for col, _ in keys:
        ranked = col[order]
        same &= ranked[1:] == ranked[:-1]
    result = order.tolist()
    # Runs of equal keys: [start, stop) in sorted position.
    edges = np.flatnonzero(np.diff(np.concatenate(([0], same.view(np.int8), [0]))))
    for start, stop in zip(edges[0::2].tolist(), (edges[1::2] + 1).tolist()):
        result[start:stop] = sorted(result[start:stop], key=names.__getitem__)
    return result


class _Columns:
    """The buffers as columns in input order, read once: the placement loop then touches
    short arrays in visit order instead of a million objects scattered over the heap
    (whose cache misses made the time per buffer grow with n).

    ``lo``/``hi`` are the lifetimes as ranks (see ``_LifetimeIndex``), ``ranks`` their
    count, ``candidates`` every buffer's allowed pools as indices into ``pools``."""

    def __init__(self, buffers: Sequence[Buffer], pools: Sequence[Pool]):
        self.buffers = buffers
        self.pools = list(pools)
        self.size = _column([b.size for b in buffers])
        self.start = _column([b.start for b in buffers])
        self.end = _column([b.end for b in buffers])
        self.alignment = _column([b.alignment for b in buffers])
        index_of = {p.name: k for k, p in enumerate(self.pools)}
        # Most buffers share their pool constraints: resolve each distinct one once.
        resolved: dict[tuple, tuple[int, ...]] = {}
        candidates = []
        for b in buffers:
            key = (b.pools, b.forbidden_pools)
            found = resolved.get(key)
            if found is None:
                found = resolved[key] = tuple(index_of[p.name] for p in allowed_pools(b, pools))
            candidates.append(found)
        self.candidates = candidates
        # The allowed pools when all buffers share them (the usual case), else None.
        self.uniform = next(iter(resolved.values())) if len(resolved) == 1 else None
        # The buffers by first step (ties in input order): the time index's numbering.
        self.time_order: np.ndarray | None = None
        if self.start.dtype != object and self.end.dtype != object:
            # Ranks through a stable sort (fast on schedules, whose first steps mostly come
            # in order) rather than np.unique and a binary search per buffer.
            order = np.argsort(self.start, kind="stable")
            ordered = self.start[order]
            new = np.ones(len(ordered), dtype=bool)
            new[1:] = ordered[1:] != ordered[:-1]
            firsts = ordered[new]
            self.lo = np.empty(len(ordered), dtype=np.int64)
            self.lo[order] = np.cumsum(new) - 1
            self.hi = np.searchsorted(firsts, self.end, side="right") - 1
            self.time_order = order
        else:
            firsts = sorted(set(self.start.tolist()))
            rank = {t: i for i, t in enumerate(firsts)}
            self.lo = np.array([rank[t] for t in self.start.tolist()], dtype=np.int64)
            self.hi = np.array(
                [bisect.bisect_right(firsts, t) - 1 for t in self.end.tolist()], dtype=np.int64
            )
        self.ranks = len(firsts)
        self._time: _TimeIndex | None = None
        self._time_built = False

    def time_index(self) -> _TimeIndex | None:
        """The time-position index (built on first use, shared by hill-climb's attempts),
        or None where the segment tree must serve (see ``_TimeIndex.build``)."""
        if not self._time_built:
            self._time = _TimeIndex.build(self)
            self._time_built = True
        return self._time


_MANY_CONFLICTS = 512
"""Candidate conflicts above which a query is gathered and sorted by numpy."""


class _TreeSlots:
    """One pool's placed buffers in a segment tree over the steps (``_LifetimeIndex``),
    for problems the time index declines; a buffer's place is its step ranks ``lo, hi``."""

    def __init__(self, ranks: int):
        self.index = _LifetimeIndex(ranks)

    def find(self, lo: int, hi: int, _b0: int, _b1: int) -> list[_Slot]:
        """The placed ``(offset, top)`` pairs conflicting with ``[lo, hi]``, sorted."""
        return self.index.conflicts(lo, hi)

    def place(self, lo: int, hi: int, offset: int, top: int) -> None:
        self.index.add(lo, hi, (offset, top))


class _TimeSlots:
    """One pool's placed buffers as offsets and tops in int64 arrays by time position (top
    0: not placed here); a buffer's place is its position ``t``, the end of its forward range
    and the bounds of its backward list (see ``_TimeIndex``)."""

    def __init__(self, timed: _TimeIndex):
        # numpy arrays (large ones get huge pages: fewer page faults and TLB misses), read
        # and written by the loop through memoryviews, and by numpy directly for the rare
        # buffer with many conflicts (one live over the whole schedule), where Python would
        # sort a million tuples.
        self.off_np = np.zeros(len(timed.position), dtype=np.int64)
        self.top_np = np.zeros(len(timed.position), dtype=np.int64)
        self.off = memoryview(self.off_np)
        self.top = memoryview(self.top_np)
        self.back = timed.back
        self.back_np = timed.back_np

    def find(self, t: int, forward: int, b0: int, b1: int) -> list[_Slot]:
        """The placed ``(offset, top)`` pairs conflicting with position ``t``, sorted."""
        off, top_of = self.off, self.top
        if b1 - b0 + forward - t < _MANY_CONFLICTS:
            found = [(off[u], x) for u in self.back[b0:b1] if (x := top_of[u])]
            found += [(off[u], x) for u in range(t + 1, forward) if (x := top_of[u])]
            found.sort()
            return found
        back = self.back_np[b0:b1]
        tops = np.concatenate((self.top_np[back], self.top_np[t + 1 : forward]))
        offsets = np.concatenate((self.off_np[back], self.off_np[t + 1 : forward]))
        placed = tops != 0
        tops, offsets = tops[placed], offsets[placed]
        order = np.lexsort((tops, offsets))
        return list(zip(offsets[order].tolist(), tops[order].tolist()))

    def place(self, t: int, _forward: int, offset: int, top: int) -> None:
        self.off[t] = offset
        self.top[t] = top


def _int64s(values: np.ndarray) -> memoryview:
    """An int64 numpy array as a memoryview (iterating it makes plain ints, not numpy's)."""
    return memoryview(np.ascontiguousarray(values, dtype=np.int64))


class _Placer:
    """Places buffers into pools in a given order and remembers what is where.

    Each buffer goes to the first of its allowed pools where the placement rule yields an
    offset that fits; ``rule=None`` bumps at the pool's current end (no reuse)."""

    def __init__(self, pools: Sequence[Pool], buffers: Sequence[Buffer], columns=None):
        self.columns = columns if columns is not None else _Columns(buffers, pools)
        self.pools = list(pools)
        self.buffers = buffers
        self.pool_of = [0] * len(buffers)
        self.offset_of = [0] * len(buffers)
        self.used = [0] * len(self.pools)

    def run(self, order: Sequence[int], rule: _Rule | None) -> None:
        """Place ``buffers[i]`` for each ``i`` of ``order``, in that order."""
        # The loop allocates a few small lists and tuples per buffer and no cycles; with
        # the collector on, its passes over the million tracked objects of a large problem
        # cost more per buffer the larger the problem (15 % at 1M buffers).
        enabled = gc.isenabled()
        gc.disable()
        try:
            self._run(order, rule)
        finally:
            if enabled:
                gc.enable()

    def _run(self, order: Sequence[int], rule: _Rule | None) -> None:
        cols = self.columns
        idx = np.asarray(order, dtype=np.int64)
        timed = cols.time_index() if rule is not None else None
        # Everything the loop reads is gathered in visit order by numpy first and read
        # through memoryviews (the loop's ints are made as it goes, not a million at once), and its
        # results are written in visit order and scattered back at the end: the loop's only
        # random accesses are the conflict queries'. A buffer's place is two or four ints:
        # its step ranks for the segment tree, or its time position, the end of its forward
        # range and its backward list's bounds for the time index (see ``_TimeSlots``).
        if timed is not None:
            pos = timed.position[idx]
            where = (pos, timed.forward[pos], timed.bptr[pos], timed.bptr[pos + 1])
            slots = [_TimeSlots(timed) for _ in self.pools]
        else:
            zeros = np.zeros(len(order), dtype=np.int64)
            where = (cols.lo[idx], cols.hi[idx], zeros, zeros)
            slots = [_TreeSlots(cols.ranks) for _ in self.pools] if rule is not None else []
        visit = zip(
            _int64s(cols.size[idx]) if cols.size.dtype != object else cols.size[idx].tolist(),
            _int64s(cols.alignment[idx]) if cols.alignment.dtype != object else cols.alignment[idx].tolist(),
            *map(_int64s, where),
            repeat(cols.uniform) if cols.uniform is not None else [cols.candidates[i] for i in order],
        )
        pool_align = [p.alignment for p in self.pools]
        pool_cap = [p.size for p in self.pools]
        used = self.used
        pool_v: list[int] = []
        offset_v: list[int] = []
        for size, b_align, w0, w1, w2, w3, cands in visit:
            if size == 0:
                pool_v.append(cands[0])
                offset_v.append(0)
                continue
            for p in cands:
                align = b_align if b_align > pool_align[p] else pool_align[p]
                fp = -(-size // align) * align  # footprint(b, pool)
                if rule is None:
                    offset = -(-used[p] // align) * align
                else:
                    offset = rule(slots[p].find(w0, w1, w2, w3), fp, align)
                top = offset + fp
                if pool_cap[p] is not None and top > pool_cap[p]:
                    continue
                if rule is not None:
                    slots[p].place(w0, w1, offset, top)
                pool_v.append(p)
                offset_v.append(offset)
                if top > used[p]:
                    used[p] = top
                break
            else:
                raise self._fits_nowhere(order, pool_v, offset_v)
        self._scatter(idx, pool_v, offset_v)

    def _scatter(self, idx: np.ndarray, pool_v: list[int], offset_v: list[int]) -> None:
        """The results, computed in visit order, by input index."""
        pools = np.zeros(len(self.buffers), dtype=np.int64)
        pools[idx] = pool_v
        offsets = np.zeros(len(self.buffers), dtype=object)
        offsets[idx] = offset_v
        self.pool_of, self.offset_of = pools.tolist(), offsets.tolist()

    def _fits_nowhere(self, order: Sequence[int], pool_v: list[int], offset_v: list[int]) -> PlanError:
        # Only the buffers placed so far (those before it in ``order``) count.
        i = order[len(pool_v)]
        b = self.buffers[i]
        placed: dict[str, list[_Entry]] = {p.name: [] for p in self.pools}
        for j, p, off in zip(order, pool_v, offset_v):
            c = self.buffers[j]
            if c.size:
                pool = self.pools[p]
                placed[pool.name].append((off, off + footprint(c, pool), c.start, c.end))
        candidates = [self.pools[p] for p in self.columns.candidates[i]]
        return fits_nowhere_error(b, candidates, self.pools, placed)

    def plan(self, algorithm: str) -> Plan:
        names = [p.name for p in self.pools]
        pool_names = map(names.__getitem__, self.pool_of) if len(names) > 1 else repeat(names[0])
        offsets = dict(zip([b.name for b in self.buffers], zip(pool_names, self.offset_of)))
        return Plan(algorithm, offsets, dict(zip(names, self.used)))


def fits_nowhere_error(
    b: Buffer,
    candidates: Sequence[Pool],
    pools: Sequence[Pool],
    placed: dict[str, list[_Entry]],
) -> PlanError:
    """The error for a buffer no allowed pool can hold, with each pool's largest free
    contiguous range over the buffer's lifetime (``placed``: each pool's entries)."""
    parts = []
    for pool in candidates:
        conflicts = sorted(e for e in placed[pool.name] if e[2] <= b.end and b.start <= e[3])
        gaps, prev = [], 0
        for off, top, _, _ in conflicts:
            gaps.append(off - prev)
            prev = max(prev, top)
        limit = pool.size if pool.size is not None else math.inf
        gaps.append(limit - prev)
        free = max(0, max(gaps))
        parts.append(
            f"pool '{pool.name}' ({pool.size} bytes, alignment "
            f"{effective_alignment(b, pool)}) has at most {free} contiguous free bytes"
        )
    others = [p.name for p in pools if p not in candidates]
    text = (
        f"buffer '{b.name}' ({b.size} bytes, steps {b.start}..{b.end}) fits in no pool: "
        + "; ".join(parts)
    )
    if others:
        text += f"; not allowed in {', '.join(repr(n) for n in others)}"
    return PlanError(text)


def _run(buffers: Sequence[Buffer], pools: Sequence[Pool], order, rule, name, columns=None) -> Plan:
    """Plan with ``order`` (indices into ``buffers``) and placement ``rule``."""
    placer = _Placer(pools, buffers, columns)
    placer.run(order, rule)
    return placer.plan(name)


def _by_size(cols: _Columns) -> list[int]:
    # Stable: equal sizes keep the input order, as in TFLite Micro's bubble sort.
    return _stable_order([(cols.size, True)])


def conflict_counts(buffers: Sequence[Buffer], cols: _Columns | None = None) -> list[int]:
    """Number of other non-empty buffers each buffer conflicts with (O(n log n))."""
    cols = cols if cols is not None else _Columns(buffers, default_pools_of(buffers))
    live = cols.size != 0
    if cols.start.dtype != object and cols.end.dtype != object:
        starts, ends = np.sort(cols.start[live]), np.sort(cols.end[live])
        n = len(starts)
        before = np.searchsorted(ends, cols.start, side="left")
        after = n - np.searchsorted(starts, cols.end, side="right")
        return np.where(live, n - before - after - 1, 0).tolist()
    starts = sorted(cols.start[live].tolist())
    ends = sorted(cols.end[live].tolist())
    n = len(starts)
    return [
        n - bisect.bisect_left(ends, s) - (n - bisect.bisect_right(starts, e)) - 1 if z else 0
        for s, e, z in zip(cols.start.tolist(), cols.end.tolist(), live.tolist())
    ]


def default_pools_of(buffers: Sequence[Buffer]) -> list[Pool]:
    """One pool per pool name the buffers mention (or the default pool): enough to read
    the buffers into columns when only their lifetimes and sizes matter."""
    names = dict.fromkeys(n for b in buffers for n in (b.pools or ()) + b.forbidden_pools)
    return [Pool(n) for n in names] or default_pools()


def plan_naive(buffers, pools, **_) -> Plan:
    """No reuse: every buffer at the current end of its pool, in the given order."""
    return _run(buffers, pools, range(len(buffers)), None, "naive")


def plan_greedy_by_size(buffers, pools, **_) -> Plan:
    """TFLite ArenaPlanner order (buffers live over the whole schedule first, then by
    decreasing size, ties by first step) with best-fit placement."""
    cols = _Columns(buffers, pools)
    if not buffers:
        return _run(buffers, pools, [], _best_fit, "greedy-by-size", cols)
    whole = (cols.start == cols.start.min()) & (cols.end == cols.end.max())
    order = _stable_order([(~whole, False), (cols.size, True), (cols.start, False)])
    return _run(buffers, pools, order, _best_fit, "greedy-by-size", cols)


def plan_greedy_by_size_first_fit(buffers, pools, **_) -> Plan:
    """TFLite Micro GreedyMemoryPlanner: decreasing size, first fitting gap."""
    cols = _Columns(buffers, pools)
    return _run(buffers, pools, _by_size(cols), _first_fit, "greedy-by-size-first-fit", cols)


def _usmp_size_order(buffers: Sequence[Buffer], cols: _Columns | None = None) -> list[int]:
    """TVM USMP's order for hill-climb's start: larger first, then more conflicts, then
    by name (indices into ``buffers``)."""
    cols = cols if cols is not None else _Columns(buffers, default_pools_of(buffers))
    counts = np.asarray(conflict_counts(buffers, cols), dtype=cols.size.dtype)
    return _order_then_names([(cols.size, True), (counts, True)], [b.name for b in buffers])


def plan_greedy_by_conflicts(buffers, pools, **_) -> Plan:
    """TVM USMP greedy_by_conflicts: most conflicts first (then larger), each buffer above
    its highest conflicting placed buffer."""
    cols = _Columns(buffers, pools)
    counts = np.asarray(conflict_counts(buffers, cols), dtype=cols.size.dtype)
    idx = _order_then_names([(counts, True), (cols.size, True)], [b.name for b in buffers])
    return _run(buffers, pools, idx, _above_conflicts, "greedy-by-conflicts", cols)


def plan_position_greedy_hierarchy(buffers, pools, **_) -> Plan:
    """ExecuTorch Cadence PositionBasedGreedyWithHierarchy: decreasing size; in each pool
    (fastest first) bump past overlapping buffers from offset 0; first pool that fits."""
    cols = _Columns(buffers, pools)
    return _run(buffers, pools, _by_size(cols), _bump_past, "position-greedy-hierarchy", cols)


def plan_greedy_hierarchy(buffers, pools, **_) -> Plan:
    """ExecuTorch Cadence GreedyWithHeuristic: decreasing size, best-fit gap per pool with
    the pool's alignment, first pool (fastest first) that fits."""
    cols = _Columns(buffers, pools)
    return _run(buffers, pools, _by_size(cols), _best_fit, "greedy-hierarchy", cols)


HILL_CLIMB_PLACEMENTS = 5_000_000
"""Buffer placements ``hill-climb`` may spend in all (each attempt places every buffer)."""


def plan_hill_climb(
    buffers, pools, *, time_limit: float | None = None, seed: int = 0, lower: int = 0, **_
) -> Plan:
    """TVM USMP hill_climb: repeat the above-conflicts greedy on perturbed orders.

    Starts from the greedy-by-size order; each attempt swaps the buffer that sets the
    top of the fullest pool with a random conflicting neighbour (first or second level)
    earlier in the order, keeps the change if the total does not grow, otherwise with a
    probability that falls with the loss and over time. Deterministic for a given
    ``seed``; stops after 500 attempts, at ``time_limit`` seconds, or as soon as the total
    reaches ``lower`` (the lower bound).

    Each attempt re-plans every buffer (O(n log n)), so the attempts are also bounded by
    ``HILL_CLIMB_PLACEMENTS`` buffer placements in all: 500 attempts up to 10k buffers,
    fewer above (5 at 1M), which keeps the whole search O(n log n) in the problem size.
    Neighbours are found in the lifetime index, only for the buffers an attempt picks.
    """
    rng = random.Random(seed)
    cols = _Columns(buffers, pools)
    order = _usmp_size_order(buffers, cols)
    if not order:
        return _run(buffers, pools, [], _above_conflicts, "hill-climb", cols)
    pos = [0] * len(order)
    for k, i in enumerate(order):
        pos[i] = k
    deadline = time.perf_counter() + time_limit if time_limit is not None else math.inf
    nonzero = [i for i, b in enumerate(buffers) if b.size]
    timed = cols.time_index()
    if timed is None:
        lifetimes = _LifetimeIndex(cols.ranks)
        lo, hi = cols.lo.tolist(), cols.hi.tolist()
        for i in nonzero:
            lifetimes.add(lo[i], hi[i], i)
    neighbours_of: dict[int, list[int]] = {}

    def neighbours(i: int) -> list[int]:
        # Sorted by input position: the neighbour order of the all-pairs scan this replaced.
        found = neighbours_of.get(i)
        if found is None:
            if timed is None:
                found = [k for k in lifetimes.conflicts(lo[i], hi[i]) if k != i]
            else:
                t = int(timed.position[i])
                near = np.concatenate((
                    timed.inputs[timed.back_np[timed.bptr[t] : timed.bptr[t + 1]]],
                    timed.inputs[t + 1 : timed.forward[t]],
                ))
                found = np.sort(near[cols.size[near] != 0]).tolist()
            neighbours_of[i] = found
        return found

    def evaluate(seq: list[int]) -> tuple[int, _Placer]:
        placer = _Placer(pools, buffers, cols)
        placer.run(seq, _above_conflicts)
        return sum(placer.used), placer

    current, placer = evaluate(order)
    best, best_placer = current, placer
    attempts = max(1, min(500, HILL_CLIMB_PLACEMENTS // len(order)))
    attempt = -1
    for attempt in range(attempts):
        if best <= lower or time.perf_counter() > deadline:
            break
        # The buffer defining the top of the fullest pool.
        fullest = max(range(len(placer.used)), key=placer.used.__getitem__)
        top_buffer = max(
            (i for i in nonzero if placer.pool_of[i] == fullest),
            key=lambda i: placer.offset_of[i] + buffers[i].size,
            default=None,
        )
        if top_buffer is None:
            break
        first = neighbours(top_buffer)
        pool = first + [c for f in first[:4] for c in neighbours(f)]
        if not pool:
            break
        other = rng.choice(pool)
        i, j = pos[top_buffer], pos[other]
        if i == j:
            continue
        # Move the top buffer earlier by swapping it with the chosen neighbour.
        i, j = min(i, j), max(i, j)
        candidate = list(order)
        candidate[i], candidate[j] = candidate[j], candidate[i]
        try:
            total, cand_placer = evaluate(candidate)
        except PlanError:
            continue
        temperature = max(1e-9, 1.0 - attempt / attempts)
        loss = (total - current) / max(current, 1)
        if total <= current or rng.random() < math.exp(-loss * 50 / temperature):
            order, current, placer = candidate, total, cand_placer
            pos[order[i]], pos[order[j]] = i, j
            if total < best:
                best, best_placer = total, cand_placer
    plan = best_placer.plan("hill-climb")
    plan.stats["attempts"] = attempt + 1
    return plan
