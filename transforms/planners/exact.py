"""
Exact offset planning (``optimal``): a MiniMalloc-style branch and bound.

The decision problem "do all buffers fit below height H?" is solved by a depth-first
search over *canonical* solutions: buffers are placed one at a time, each at the lowest
aligned offset above everything already placed in the time sections it covers (its
"floor"), in non-decreasing order of offset (ties in a fixed buffer order). Any feasible
problem has such a solution (take one minimising the sum of offsets and sort it), so the
search is complete. Pruning, all sound for that minimal solution:

* cross-section inference: in every time section, the bytes of the unplaced buffers must
  fit between the section's effective floor and H, where the effective floor is the
  highest of the placed floor, the last placed offset (offsets never decrease) and the
  lowest offset any unplaced buffer of that section can still take;
* an unplaced buffer that no longer fits below H ends the branch;
* dominance: a buffer may not be placed at or above the top an unplaced buffer would have
  at its current offset (that buffer could be moved below it: never minimal);
* decomposition: the schedule is cut where no buffer crosses, and every part is solved on
  its own.

Candidates are tried lowest offset first, then longer-lived, then larger buffers. The
search itself is a resumable, explicit-stack loop compiled with numba; Python drives it in
slices of nodes so that a wall-clock limit can be kept. Optimisation is a search over H:
the max-live lower bound first (a hit proves optimality), then bisection between the
largest height proven infeasible (or the lower bound) and the best plan found, which
starts from the best greedy plan.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from numba import njit

RUNNING, FOUND, EXHAUSTED = 0, 1, 2
# Kernel options: 1 = split parts keep the monotonic floor, 2 = dynamic decomposition.
FLAGS = 3


@njit(cache=True, nogil=True)
def _undo(b, w, sa, sb, floor, rem, placed, save, saveptr, d):
    p = saveptr[d]
    for s in range(sa[b], sb[b]):
        floor[s] = save[p]
        p += 1
        rem[s] += w[b]
    placed[b] = 0


@njit(cache=True, nogil=True)
def _search(  # noqa: C901 - one tight loop on purpose
    w, al, sa, sb, rank, height, n_sections,
    floor, rem, placed, off, chosen, cand, cand_off, ncand, ci, save, saveptr,
    tmp_off, sec_min, scratch, g_lo, g_hi, g_ol, g_rl, jump_at, pend, npend,
    ctl, max_nodes, flags,
):  # fmt: skip
    """Run the DFS for at most ``max_nodes`` expansions; the state lives in the arrays.

    Node ``d`` (``d`` buffers placed) works on one *group*: the unplaced buffers within
    sections ``[g_lo[d], g_hi[d])``, placed in canonical order after offset ``g_ol[d]``
    (rank ``g_rl[d]`` for ties). Groups split where no unplaced buffer crosses a section
    boundary; the other parts wait in ``pend[d]`` with the depth that split them, and a
    part that fails makes that splitting node fail (its siblings cannot help it).
    ``ctl`` = [depth, need_expand, nodes_total]; returns RUNNING, FOUND or EXHAUSTED.
    """
    n = w.shape[0]
    d = ctl[0]
    need = ctl[1]
    nodes = 0
    big = np.int64(1) << np.int64(62)
    while True:
        if need == 1:
            if d == n:
                ctl[0] = d
                ctl[1] = 0
                ctl[2] += nodes
                return FOUND
            if nodes >= max_nodes:
                ctl[0] = d
                ctl[1] = 1
                ctl[2] += nodes
                return RUNNING
            nodes += 1
            need = 0
            ncand[d] = 0
            ci[d] = 0
            lo = g_lo[d]
            hi = g_hi[d]
            # Done with the current group: take the next waiting one.
            while True:
                cnt = 0
                for c in range(n):
                    if placed[c] == 0 and sa[c] >= lo and sb[c] <= hi:
                        cnt += 1
                        break
                if cnt > 0 or npend[d] == 0:
                    break
                k = npend[d] - 1
                lo = pend[d, k, 0]
                hi = pend[d, k, 1]
                g_ol[d] = pend[d, k, 2]
                g_rl[d] = pend[d, k, 3]
                jump_at[d] = pend[d, k, 4]
                npend[d] = k
            o_last = g_ol[d]
            r_last = g_rl[d]
            # Split the group where no unplaced buffer crosses a section boundary.
            for s in range(lo, hi + 1):
                scratch[s] = 0
            for c in range(n):
                if placed[c] == 0 and sa[c] >= lo and sb[c] <= hi:
                    scratch[sa[c] + 1] += 1
                    scratch[sb[c]] -= 1
            # Sections covered by some unplaced buffer have rem > 0.
            seg0 = -1
            nseg = 0
            first_lo = -1
            first_hi = -1
            run = 0
            s = lo
            while s <= hi:
                if s > lo:
                    run += scratch[s]
                covered = s < hi and rem[s] > 0
                starts = covered and (s == lo or (run == 0 and flags & 2 != 0) or seg0 < 0)
                if seg0 >= 0 and (not covered or starts):
                    # Close the segment [seg0, s).
                    if nseg == 0:
                        first_lo = seg0
                        first_hi = s
                    else:
                        k = npend[d]
                        pend[d, k, 0] = seg0
                        pend[d, k, 1] = s
                        pend[d, k, 2] = o_last if flags & 1 else 0
                        pend[d, k, 3] = r_last if flags & 1 else -1
                        pend[d, k, 4] = d
                        npend[d] = k + 1
                    nseg += 1
                    seg0 = -1
                if covered and seg0 < 0:
                    seg0 = s
                s += 1
            if nseg > 1 and not flags & 1:
                o_last = 0
                r_last = -1
                g_ol[d] = 0
                g_rl[d] = -1
            lo = first_lo
            hi = first_hi
            g_lo[d] = lo
            g_hi[d] = hi
            ok = True
            # Canonical offset of every unplaced buffer; the two lowest tops.
            min1 = big
            min1_i = -1
            min2 = big
            for s in range(lo, hi):
                sec_min[s] = big
            for c in range(n):
                if placed[c] == 1 or sa[c] < lo or sb[c] > hi:
                    continue
                mf = 0
                for s in range(sa[c], sb[c]):
                    if floor[s] > mf:
                        mf = floor[s]
                a = al[c]
                o = ((mf + a - 1) // a) * a
                if o + w[c] > height:
                    ok = False
                    break
                tmp_off[c] = o
                top = o + w[c]
                if top < min1:
                    min2 = min1
                    min1 = top
                    min1_i = c
                elif top < min2:
                    min2 = top
                for s in range(sa[c], sb[c]):
                    if o < sec_min[s]:
                        sec_min[s] = o
            if ok:
                # Cross-section inference.
                for s in range(lo, hi):
                    if rem[s] == 0:
                        continue
                    eff = floor[s]
                    if o_last > eff:
                        eff = o_last
                    if sec_min[s] > eff:
                        eff = sec_min[s]
                    if rem[s] > height - eff:
                        ok = False
                        break
            if ok:
                k = 0
                for c in range(n):
                    if placed[c] == 1 or sa[c] < lo or sb[c] > hi:
                        continue
                    o = tmp_off[c]
                    if o < o_last or (o == o_last and rank[c] < r_last):
                        continue
                    dom = min2 if c == min1_i else min1
                    if o >= dom:
                        continue
                    # Insertion sort by (offset, rank).
                    j = k
                    while j > 0:
                        p = cand[d, j - 1]
                        po = cand_off[d, j - 1]
                        if po < o or (po == o and rank[p] < rank[c]):
                            break
                        cand[d, j] = p
                        cand_off[d, j] = po
                        j -= 1
                    cand[d, j] = c
                    cand_off[d, j] = o
                    k += 1
                ncand[d] = k
        if ci[d] < ncand[d]:
            b = cand[d, ci[d]]
            o = cand_off[d, ci[d]]
            ci[d] += 1
            p = saveptr[d]
            top = o + w[b]
            for s in range(sa[b], sb[b]):
                save[p] = floor[s]
                p += 1
                floor[s] = top
                rem[s] -= w[b]
            saveptr[d + 1] = p
            # Hatless: nothing unplaced shares a section with b, so any other choice
            # here would only leave b higher: no alternatives after this one.
            hat = False
            for s in range(sa[b], sb[b]):
                if rem[s] > 0:
                    hat = True
                    break
            if not hat:
                ci[d] = ncand[d]
            placed[b] = 1
            off[b] = o
            chosen[d] = b
            # The child continues this group after b.
            g_lo[d + 1] = g_lo[d]
            g_hi[d + 1] = g_hi[d]
            g_ol[d + 1] = o
            g_rl[d + 1] = rank[b]
            jump_at[d + 1] = -1
            k = npend[d]
            for j in range(k):
                for f in range(5):
                    pend[d + 1, j, f] = pend[d, j, f]
            npend[d + 1] = k
            d += 1
            need = 1
        else:
            t = jump_at[d]
            if t >= 0 and t < d:
                # A waiting part failed: fail the node that split it off.
                while d > t:
                    d -= 1
                    _undo(chosen[d], w, sa, sb, floor, rem, placed, save, saveptr, d)
                ci[d] = ncand[d]
                continue
            if d == 0:
                ctl[0] = 0
                ctl[1] = 0
                ctl[2] += nodes
                return EXHAUSTED
            d -= 1
            _undo(chosen[d], w, sa, sb, floor, rem, placed, save, saveptr, d)


@dataclass
class Item:
    """One buffer of a single-pool exact problem (footprint already aligned)."""

    key: int
    size: int
    align: int
    start: int
    end: int


class _Component:
    """Search state of one independent part of the schedule at a fixed height."""

    def __init__(self, items: Sequence[Item], height: int, heuristic: str = "WAT"):
        self.items = list(items)
        points = sorted({it.start for it in items} | {it.end + 1 for it in items})
        index = {t: i for i, t in enumerate(points)}
        n = len(items)
        self.n_sections = max(len(points) - 1, 0)
        self.w = np.array([it.size for it in items], dtype=np.int64)
        self.al = np.array([it.align for it in items], dtype=np.int64)
        self.sa = np.array([index[it.start] for it in items], dtype=np.int64)
        self.sb = np.array([index[it.end + 1] for it in items], dtype=np.int64)
        order = sorted(range(n), key=preorder_key(items, self.sa, self.sb, heuristic))
        self.rank = np.empty(n, dtype=np.int64)
        for r, i in enumerate(order):
            self.rank[i] = r
        self.height = height
        S = self.n_sections
        self.floor = np.zeros(S, dtype=np.int64)
        self.rem = np.zeros(S, dtype=np.int64)
        for i in range(n):
            self.rem[self.sa[i] : self.sb[i]] += self.w[i]
        self.placed = np.zeros(n, dtype=np.int64)
        self.off = np.zeros(n, dtype=np.int64)
        self.chosen = np.zeros(n + 1, dtype=np.int64)
        self.cand = np.zeros((n + 1, max(n, 1)), dtype=np.int64)
        self.cand_off = np.zeros((n + 1, max(n, 1)), dtype=np.int64)
        self.ncand = np.zeros(n + 1, dtype=np.int64)
        self.ci = np.zeros(n + 1, dtype=np.int64)
        self.save = np.zeros(int((self.sb - self.sa).sum()) + 1, dtype=np.int64)
        self.saveptr = np.zeros(n + 2, dtype=np.int64)
        self.tmp_off = np.zeros(n, dtype=np.int64)
        self.sec_min = np.zeros(S, dtype=np.int64)
        self.scratch = np.zeros(S + 2, dtype=np.int64)
        self.g_lo = np.zeros(n + 1, dtype=np.int64)
        self.g_hi = np.zeros(n + 1, dtype=np.int64)
        self.g_hi[0] = S
        self.g_ol = np.zeros(n + 1, dtype=np.int64)
        self.g_rl = np.full(n + 1, -1, dtype=np.int64)
        self.jump_at = np.full(n + 1, -1, dtype=np.int64)
        self.pend = np.zeros((n + 1, S + 1, 5), dtype=np.int64)
        self.npend = np.zeros(n + 1, dtype=np.int64)
        self.ctl = np.array([0, 1, 0], dtype=np.int64)
        self.status = RUNNING

    @property
    def nodes(self) -> int:
        return int(self.ctl[2])

    def step(self, max_nodes: int, jit: bool) -> int:
        fn = _search if jit else _search.py_func
        self.status = fn(
            self.w, self.al, self.sa, self.sb, self.rank, self.height, self.n_sections,
            self.floor, self.rem, self.placed, self.off, self.chosen, self.cand,
            self.cand_off, self.ncand, self.ci, self.save, self.saveptr, self.tmp_off,
            self.sec_min, self.scratch, self.g_lo, self.g_hi, self.g_ol, self.g_rl,
            self.jump_at, self.pend, self.npend, self.ctl, max_nodes, FLAGS,
        )  # fmt: skip
        return self.status

    def offsets(self) -> dict[int, int]:
        return {it.key: int(self.off[i]) for i, it in enumerate(self.items)}


HEURISTICS = ("WAT", "TAW", "TWA")
"""Static buffer orders tried in turn (as MiniMalloc does), each letter a descending key:
W = lifetime width (steps), A = area (bytes x steps), T = the largest total of bytes live
in any section the buffer covers, Z = size."""


def preorder_key(items: Sequence[Item], sa, sb, heuristic: str):
    """Sort key of buffer indices for a static order given by ``heuristic`` letters."""
    n_sections = int(max(sb, default=0))
    totals = np.zeros(n_sections + 1, dtype=np.int64)
    for i, it in enumerate(items):
        totals[sa[i] : sb[i]] += it.size
    feats = {
        "W": [it.end - it.start + 1 for it in items],
        "A": [it.size * (it.end - it.start + 1) for it in items],
        "T": [int(totals[sa[i] : sb[i]].max()) for i in range(len(items))],
        "Z": [it.size for it in items],
    }
    return lambda i: tuple(-feats[c][i] for c in heuristic) + (items[i].key,)


_compiled = False


def ensure_compiled() -> None:
    """Compile (or load from numba's disk cache) the search kernel once per process, so
    that the one-off compile time is not charged to a search's time limit."""
    global _compiled
    if not _compiled:
        _Component([Item(0, 1, 1, 0, 0)], 1).step(10, True)
        _compiled = True


def _workers() -> int:
    """Threads for the parallel searches: the usable cores, at most one per heuristic."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, len(HEURISTICS)))


def split_components(items: Sequence[Item]) -> list[list[Item]]:
    """Cut the schedule where no buffer crosses: the parts never conflict."""
    parts: list[list[Item]] = []
    reach = None
    for it in sorted(items, key=lambda it: (it.start, it.end)):
        if reach is None or it.start > reach:
            parts.append([])
            reach = it.end
        parts[-1].append(it)
        reach = max(reach, it.end)
    return parts


@dataclass
class DecisionResult:
    status: int  # FOUND, EXHAUSTED or RUNNING (= out of time)
    offsets: dict[int, int]
    nodes: int


def decide(
    items: Sequence[Item], height: int, deadline: float, jit: bool | None = None
) -> DecisionResult:
    """Do ``items`` fit below ``height``? Searches each component until ``deadline``
    (a ``time.perf_counter()`` value)."""
    items = [it for it in items if it.size > 0]
    if jit is None:
        # Small problems run faster uncompiled than the first (cached) JIT load.
        jit = len(items) > 24
    offsets: dict[int, int] = {}
    nodes = 0
    # Hardest (largest) parts first so that an infeasible one stops the search early.
    parts = sorted(split_components(items), key=lambda p: -len(p))
    for part in parts:
        # Interleave one resumable search per static order with doubling node slices:
        # the first to finish decides (each search alone is complete).
        # The compiled kernel releases the GIL, so the searches share the cores.
        comps = [_Component(part, height, h) for h in HEURISTICS]
        chunk = max(len(part), 16)
        status = RUNNING
        winner = comps[0]
        while status == RUNNING:
            if jit and _workers() > 1:
                with ThreadPoolExecutor(_workers()) as pool:
                    statuses = list(pool.map(lambda c, k=chunk: c.step(k, True), comps))
            else:
                statuses = []
                for comp in comps:
                    statuses.append(comp.step(chunk, jit))
                    if statuses[-1] != RUNNING:
                        break
            for comp, st in zip(comps, statuses):
                if st != RUNNING:
                    status, winner = st, comp
                    break
            if status == RUNNING and time.perf_counter() > deadline:
                return DecisionResult(RUNNING, {}, nodes + sum(c.nodes for c in comps))
            chunk = min(chunk * 2, 100_000)
        nodes += sum(c.nodes for c in comps)
        if status == EXHAUSTED:
            return DecisionResult(EXHAUSTED, {}, nodes)
        offsets.update(winner.offsets())
    return DecisionResult(FOUND, offsets, nodes)


@dataclass
class OptimalResult:
    offsets: dict[int, int] | None  # None: nothing found below the capacity
    height: int
    optimal: bool
    stats: dict[str, object]


def minimise(
    items: Sequence[Item],
    lower: int,
    upper: int | None,
    upper_offsets: dict[int, int] | None,
    capacity: int | None,
    time_limit: float,
    jit: bool | None = None,
) -> OptimalResult:
    """Smallest height found within ``time_limit`` seconds for ``items``.

    ``upper``/``upper_offsets`` is a known feasible plan (e.g. greedy) or ``None``;
    ``capacity`` bounds the height (a pool size) or is ``None``. Heights are searched in
    multiples of the gcd of all sizes and alignments, which every canonical height is.
    """
    nonzero = [it for it in items if it.size > 0]
    if jit or (jit is None and len(nonzero) > 24):
        ensure_compiled()
    start = time.perf_counter()
    deadline = start + time_limit
    stats: dict[str, object] = {"probes": []}
    if not nonzero:
        return OptimalResult({it.key: 0 for it in items}, 0, True, stats)
    g = 0
    for it in nonzero:
        g = math.gcd(g, it.size)
        if it.align > 1:
            g = math.gcd(g, it.align)
    best_h = upper if upper is not None else None
    best = upper_offsets
    if capacity is not None and (best_h is None or best_h > capacity):
        best_h, best = None, None
    # Infeasible heights are < lo; the answer lies in [lo, hi].
    lo = -(-lower // g) * g
    hi = best_h if best_h is not None else (capacity // g) * g
    proven_lo = True  # every height below lo is proven infeasible
    first = True
    while lo <= hi and (best_h is None or lo < best_h):
        now = time.perf_counter()
        remaining = deadline - now
        if remaining <= 0:
            break
        if first:
            # The lower bound is often the optimum (zero fragmentation): most time here.
            probe = lo
            budget = remaining * 2 / 3
        else:
            probe = lo + ((hi - lo) // (2 * g)) * g
            budget = remaining / 2 if hi - lo > 4 * g else remaining
        if best_h is None and not first and probe < hi:
            probe = hi  # nothing feasible yet: try the capacity itself
            budget = remaining
        first = False
        res = decide(nonzero, probe, now + budget, jit)
        stats["probes"].append((probe, ("running", "found", "exhausted")[res.status], res.nodes))
        if res.status == FOUND:
            h = max((res.offsets[it.key] + it.size for it in nonzero), default=0)
            best_h, best = h, res.offsets
            hi = h - g
        elif res.status == EXHAUSTED:
            lo = probe + g
        else:
            proven_lo = False
            lo = probe + g
    if best is None:
        return OptimalResult(None, 0, False, stats)
    offsets = {it.key: best.get(it.key, 0) for it in items}
    optimal = proven_lo and lo >= best_h
    stats["seconds"] = time.perf_counter() - start
    return OptimalResult(offsets, best_h, optimal, stats)
