"""
Heuristic offset planners: the greedy algorithms of TFLite, TFLite Micro, TVM USMP,
ExecuTorch (Cadence hierarchy planners) and Relay's GraphPlanMemory shared objects.

All offset planners share one placement engine (``_Placer``): buffers are visited in an
algorithm-specific order and each is put in the first pool of its allowed pools (priority
order) where the algorithm's placement rule yields an offset that fits the pool. A buffer
that fits nowhere raises ``PlanError`` naming the buffer and every pool's free space.
"""

from __future__ import annotations

import bisect
import heapq
import math
import random
import time
from collections.abc import Callable, Sequence

from xrelay.transforms.planners.model import (
    Buffer,
    Plan,
    PlanError,
    Pool,
    align_up,
    allowed_pools,
    effective_alignment,
    footprint,
)

# A placed buffer inside a pool: (offset, top = offset + footprint, start, end).
_Entry = tuple[int, int, int, int]
# A placement rule: (conflicting entries sorted by offset, footprint, alignment) -> offset.
_Rule = Callable[[list[_Entry], int, int], int]


def _best_fit(conflicts: list[_Entry], size: int, align: int) -> int:
    """Smallest gap between lifetime-conflicting buffers that holds ``size`` bytes
    (Pisarchyk & Lee Alg. 3 / TFLite SimpleMemoryArena); else above all of them."""
    best, best_gap, prev = -1, math.inf, 0
    for off, top, _, _ in conflicts:
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
    for off, top, _, _ in conflicts:
        cand = align_up(prev, align)
        if off - cand >= size:
            return cand
        prev = max(prev, top)
    return align_up(prev, align)


def _above_conflicts(conflicts: list[_Entry], size: int, align: int) -> int:
    """Above the highest conflicting buffer, no gap filling (TVM USMP greedy)."""
    return align_up(max((top for _, top, _, _ in conflicts), default=0), align)


def _bump_past(conflicts: list[_Entry], size: int, align: int) -> int:
    """Start at 0 and jump past any conflicting buffer overlapping the candidate range
    until none does (ExecuTorch Cadence position-based greedy)."""
    offset = 0
    moved = True
    while moved:
        moved = False
        for off, top, _, _ in conflicts:
            if off < offset + size and offset < top:
                offset = align_up(top, align)
                moved = True
    return offset


class _LifetimeIndex:
    """The entries placed in one pool, found by lifetime in O(log T + k) instead of a scan.

    Steps are ranked among the buffers' first steps (``starts``, sorted, distinct). An entry
    conflicts with a lifetime ``[s, e]`` (``s`` is a first step) when it is live at ``s`` or
    starts inside ``(s, e]``; the two sets are disjoint. Live-at-``s`` is a stabbing query
    on a segment tree over the ranks, each entry stored at the O(log T) nodes covering its
    lifetime; starting-inside is a walk over the per-rank lists of the ranks in ``(s, e]``.
    """

    def __init__(self, starts: list[int], last_rank: dict[int, int]):
        self.starts = starts
        self.rank = {t: i for i, t in enumerate(starts)}
        # Every buffer's last step mapped to the rank of the last first step <= it, computed
        # once in sorted order: a dict probe per lookup instead of a bisect through a
        # million-element list (whose cache misses made per-buffer time grow with n).
        self.last_rank = last_rank
        self.size = 1 << max(0, len(starts) - 1).bit_length()
        self.tree: list[list[_Entry] | None] = [None] * (2 * self.size)
        self.by_start: list[list[_Entry] | None] = [None] * len(starts)

    def _last_rank(self, step: int) -> int:
        """The rank of the last first step ``<= step``."""
        rank = self.last_rank.get(step)
        return rank if rank is not None else bisect.bisect_right(self.starts, step) - 1

    def add(self, entry: _Entry) -> None:
        lo = self.rank[entry[2]]
        hi = self._last_rank(entry[3])
        bucket = self.by_start[lo]
        if bucket is None:
            self.by_start[lo] = [entry]
        else:
            bucket.append(entry)
        left, right = lo + self.size, hi + self.size + 1
        while left < right:
            if left & 1:
                self._push(left, entry)
                left += 1
            if right & 1:
                right -= 1
                self._push(right, entry)
            left >>= 1
            right >>= 1

    def _push(self, node: int, entry: _Entry) -> None:
        lst = self.tree[node]
        if lst is None:
            self.tree[node] = [entry]
        else:
            lst.append(entry)

    def conflicts(self, start: int, end: int) -> list[_Entry]:
        """Entries live at some step of ``[start, end]``, sorted by offset."""
        first = self.rank[start]
        found: list[_Entry] = []
        node = first + self.size
        while node:
            lst = self.tree[node]
            if lst is not None:
                found.extend(lst)
            node >>= 1
        for r in range(first + 1, self._last_rank(end) + 1):
            bucket = self.by_start[r]
            if bucket is not None:
                found.extend(bucket)
        found.sort()
        return found


def bisect_ranks(starts: list[int], steps: list[int]) -> list[int]:
    """For sorted ``steps``: the index of the last of the sorted ``starts`` that is
    ``<= step`` (-1 if none), by one merge-like walk instead of a bisect per step."""
    ranks, r, n = [], -1, len(starts)
    for step in steps:
        while r + 1 < n and starts[r + 1] <= step:
            r += 1
        ranks.append(r)
    return ranks


def _ranks(buffers: Sequence[Buffer]) -> tuple[list[int], dict[int, int]]:
    """The sorted distinct first steps and, for every last step, the rank of the last
    first step ``<= it``: what a ``_LifetimeIndex`` over ``buffers`` needs."""
    starts = sorted({b.start for b in buffers})
    ends = sorted({b.end for b in buffers})
    return starts, dict(zip(ends, bisect_ranks(starts, ends)))


class _Placer:
    """Places buffers one by one into pools and remembers what is where."""

    def __init__(self, pools: Sequence[Pool], buffers: Sequence[Buffer]):
        self.pools = list(pools)
        self.placed: dict[str, list[_Entry]] = {p.name: [] for p in pools}
        ranks = _ranks(buffers)
        self.index = {p.name: _LifetimeIndex(*ranks) for p in pools}
        self.offsets: dict[str, tuple[str, int]] = {}
        self.used: dict[str, int] = {p.name: 0 for p in pools}
        # Most buffers share their pool constraints: resolve each distinct one once.
        self._candidates: dict[tuple, list[Pool]] = {}

    def place(self, b: Buffer, rule: _Rule | None) -> None:
        """Put ``b`` into its first allowed pool where ``rule`` fits; ``rule=None`` bumps
        at the pool's current end (no reuse)."""
        key = (b.pools, b.forbidden_pools)
        candidates = self._candidates.get(key)
        if candidates is None:
            candidates = self._candidates[key] = allowed_pools(b, self.pools)
        if b.size == 0:
            self.offsets[b.name] = (candidates[0].name, 0)
            return
        for pool in candidates:
            align = b.alignment if b.alignment > pool.alignment else pool.alignment
            size = -(-b.size // align) * align  # footprint(b, pool)
            index = self.index[pool.name]
            if rule is None:
                offset = align_up(self.used[pool.name], align)
            else:
                offset = rule(index.conflicts(b.start, b.end), size, align)
            if pool.size is not None and offset + size > pool.size:
                continue
            entry = (offset, offset + size, b.start, b.end)
            self.placed[pool.name].append(entry)
            index.add(entry)
            self.offsets[b.name] = (pool.name, offset)
            self.used[pool.name] = max(self.used[pool.name], offset + size)
            return
        raise fits_nowhere_error(b, candidates, self.pools, self.placed)

    def plan(self, algorithm: str) -> Plan:
        return Plan(algorithm, dict(self.offsets), dict(self.used))


def fits_nowhere_error(
    b: Buffer,
    candidates: Sequence[Pool],
    pools: Sequence[Pool],
    placed: dict[str, list[_Entry]],
) -> PlanError:
    """The error for a buffer no allowed pool can hold, with each pool's largest free
    contiguous range over the buffer's lifetime."""
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


def _run(buffers: Sequence[Buffer], pools: Sequence[Pool], order, rule, name) -> Plan:
    placer = _Placer(pools, buffers)
    for b in order:
        placer.place(b, rule)
    return placer.plan(name)


def _by_size(buffers: Sequence[Buffer]) -> list[Buffer]:
    # Stable: equal sizes keep the input order, as in TFLite Micro's bubble sort.
    return sorted(buffers, key=lambda b: -b.size)


def conflict_counts(buffers: Sequence[Buffer]) -> list[int]:
    """Number of other non-empty buffers each buffer conflicts with (O(n log n))."""
    live = [b for b in buffers if b.size]
    starts = sorted(b.start for b in live)
    ends = sorted(b.end for b in live)
    n = len(live)
    counts = []
    for b in buffers:
        if not b.size:
            counts.append(0)
            continue
        before = bisect.bisect_left(ends, b.start)
        after = n - bisect.bisect_right(starts, b.end)
        counts.append(n - before - after - 1)
    return counts


def plan_naive(buffers, pools, **_) -> Plan:
    """No reuse: every buffer at the current end of its pool, in the given order."""
    return _run(buffers, pools, buffers, None, "naive")


def plan_greedy_by_size(buffers, pools, **_) -> Plan:
    """TFLite ArenaPlanner order (buffers live over the whole schedule first, then by
    decreasing size, ties by first step) with best-fit placement."""
    if not buffers:
        return _Placer(pools, ()).plan("greedy-by-size")
    first = min(b.start for b in buffers)
    last = max(b.end for b in buffers)
    order = sorted(
        buffers,
        key=lambda b: (not (b.start == first and b.end == last), -b.size, b.start),
    )
    return _run(buffers, pools, order, _best_fit, "greedy-by-size")


def plan_greedy_by_size_first_fit(buffers, pools, **_) -> Plan:
    """TFLite Micro GreedyMemoryPlanner: decreasing size, first fitting gap."""
    return _run(buffers, pools, _by_size(buffers), _first_fit, "greedy-by-size-first-fit")


def _usmp_size_order(buffers: Sequence[Buffer]) -> list[Buffer]:
    counts = conflict_counts(buffers)
    idx = sorted(range(len(buffers)), key=lambda i: (-buffers[i].size, -counts[i], buffers[i].name))
    return [buffers[i] for i in idx]


def plan_greedy_by_conflicts(buffers, pools, **_) -> Plan:
    """TVM USMP greedy_by_conflicts: most conflicts first (then larger), each buffer above
    its highest conflicting placed buffer."""
    counts = conflict_counts(buffers)
    idx = sorted(range(len(buffers)), key=lambda i: (-counts[i], -buffers[i].size, buffers[i].name))
    return _run(buffers, pools, [buffers[i] for i in idx], _above_conflicts, "greedy-by-conflicts")


def plan_position_greedy_hierarchy(buffers, pools, **_) -> Plan:
    """ExecuTorch Cadence PositionBasedGreedyWithHierarchy: decreasing size; in each pool
    (fastest first) bump past overlapping buffers from offset 0; first pool that fits."""
    return _run(buffers, pools, _by_size(buffers), _bump_past, "position-greedy-hierarchy")


def plan_greedy_hierarchy(buffers, pools, **_) -> Plan:
    """ExecuTorch Cadence GreedyWithHeuristic: decreasing size, best-fit gap per pool with
    the pool's alignment, first pool (fastest first) that fits."""
    return _run(buffers, pools, _by_size(buffers), _best_fit, "greedy-hierarchy")


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
    order = _usmp_size_order(buffers)
    if not order:
        return _Placer(pools, ()).plan("hill-climb")
    pos = {b.name: i for i, b in enumerate(order)}
    deadline = time.perf_counter() + time_limit if time_limit is not None else math.inf
    nonzero = [b for b in buffers if b.size]
    lifetimes = _LifetimeIndex(*_ranks(nonzero))
    for k, b in enumerate(nonzero):
        lifetimes.add((k, 0, b.start, b.end))
    neighbours_of: dict[str, list[Buffer]] = {}

    def neighbours(b: Buffer) -> list[Buffer]:
        found = neighbours_of.get(b.name)
        if found is None:
            # The index returns entries sorted by their first field, the input position:
            # the same neighbour order as the all-pairs scan this replaces.
            found = [nonzero[k] for k, _, _, _ in lifetimes.conflicts(b.start, b.end)]
            found = neighbours_of[b.name] = [c for c in found if c is not b]
        return found

    def evaluate(seq: list[Buffer]) -> tuple[int, _Placer]:
        placer = _Placer(pools, buffers)
        for b in seq:
            placer.place(b, _above_conflicts)
        return sum(placer.used.values()), placer

    current, placer = evaluate(order)
    best, best_placer = current, placer
    attempts = max(1, min(500, HILL_CLIMB_PLACEMENTS // len(order)))
    attempt = -1
    for attempt in range(attempts):
        if best <= lower or time.perf_counter() > deadline:
            break
        # The buffer defining the top of the fullest pool.
        pool_name = max(placer.used, key=placer.used.get)
        top_buffer = max(
            (b for b in nonzero if placer.offsets[b.name][0] == pool_name),
            key=lambda b: placer.offsets[b.name][1] + b.size,
            default=None,
        )
        if top_buffer is None:
            break
        first = neighbours(top_buffer)
        pool = first + [c for f in first[:4] for c in neighbours(f)]
        if not pool:
            break
        other = rng.choice(pool)
        i, j = pos[top_buffer.name], pos[other.name]
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
            pos = {b.name: k for k, b in enumerate(order)}
            if total < best:
                best, best_placer = total, cand_placer
    plan = best_placer.plan("hill-climb")
    plan.stats["attempts"] = attempt + 1
    return plan


def plan_storage_ids(buffers, pools, **_) -> Plan:
    """Relay GraphPlanMemory shared objects (storage tokens).

    Buffers are visited by first step (ties: input order). Before a buffer asks for
    storage, the tokens of buffers whose last step is earlier go back to the free list.
    A request of ``n`` bytes (footprint in the buffer's first allowed pool) takes the
    smallest free token of at least ``n`` bytes with size ``<= 16 n``, else the largest
    free token smaller than ``n`` with size ``>= n // 16`` (which then grows to ``n``),
    else a new token. Tokens are only shared between buffers with the same allowed
    pools (Relay: the same device). Inputs and constants (Relay's params) get tokens that
    are never reused; outputs are never released. The objects are then laid out back to
    back in id order, each in the first of its pools where it still fits, so the result
    is also an offset plan. Size-0 buffers get a token but offset 0.
    """
    match_range = 16
    order = sorted(range(len(buffers)), key=lambda i: (buffers[i].start, i))
    token_group: list[tuple[str, ...]] = []
    token_bytes: list[int] = []
    token_align: list[int] = []
    free: dict[tuple[str, ...], list[tuple[int, int, int]]] = {}  # (key, seq, id)
    holders: list[tuple[int, int, int]] = []  # (end, index, token)
    ids: dict[str, int] = {}
    seq = 0
    for i in order:
        b = buffers[i]
        # Release the tokens of buffers dead before this one starts.
        while holders and holders[0][0] < b.start:
            _, _, tok = heapq.heappop(holders)
            bisect.insort(free[token_group[tok]], (token_bytes[tok], seq, tok))
            seq += 1
        candidates = allowed_pools(b, pools)
        group = tuple(p.name for p in candidates)
        size = footprint(b, candidates[0])
        align = max(effective_alignment(b, p) for p in candidates)
        tok = -1
        lst = free.setdefault(group, [])
        if b.kind not in ("input", "constant"):
            lo = bisect.bisect_left(lst, (size // match_range, -1, -1))
            mid = bisect.bisect_left(lst, (size, -1, -1))
            hi = bisect.bisect_right(lst, (size * match_range, math.inf, math.inf))
            if mid < hi:
                tok = lst.pop(mid)[2]
            elif mid > lo:
                # Among equal keys the last released one, like a multimap walked backwards.
                tok = lst.pop(mid - 1)[2]
        if tok < 0:
            tok = len(token_bytes)
            token_group.append(group)
            token_bytes.append(size)
            token_align.append(align)
        else:
            token_bytes[tok] = max(token_bytes[tok], size)
            token_align[tok] = max(token_align[tok], align)
        ids[b.name] = tok
        if b.kind not in ("input", "constant", "output"):
            heapq.heappush(holders, (b.end, i, tok))
    # Lay the objects out back to back in id order, spilling to the next allowed pool.
    by_name = {p.name: p for p in pools}
    token_place: list[tuple[str, int]] = []
    used = {p.name: 0 for p in pools}
    for tok, nbytes in enumerate(token_bytes):
        for name in token_group[tok]:
            pool = by_name[name]
            nbytes_here = align_up(nbytes, max(token_align[tok], pool.alignment))
            offset = align_up(used[name], max(token_align[tok], pool.alignment))
            if pool.size is None or offset + nbytes_here <= pool.size:
                token_place.append((name, offset))
                used[name] = offset + nbytes_here
                break
        else:
            tenants = sorted(n for n, t in ids.items() if t == tok)
            free_text = ", ".join(
                f"'{n}' has {by_name[n].size - used[n]} bytes left" for n in token_group[tok]
            )
            raise PlanError(
                f"storage-ids: shared object {tok} ({nbytes} bytes, buffers "
                f"{', '.join(repr(t) for t in tenants)}) fits in no pool: {free_text}"
            )
    offsets = {
        b.name: (token_place[ids[b.name]][0], token_place[ids[b.name]][1] if b.size else 0)
        for b in buffers
    }
    plan = Plan("storage-ids", offsets, used)
    plan.storage_ids = ids
    plan.storage_sizes = dict(enumerate(token_bytes))
    return plan
