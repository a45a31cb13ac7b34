"""
Exact offset planning (``optimal``): a MiniMalloc-style branch and bound.

The decision problem "do all buffers fit below height H?" is solved by a depth-first
search over *canonical* solutions (``_bnb``): buffers are placed one at a time, each at
its lowest aligned offset above the already placed buffers it overlaps in time, in
non-decreasing order of offset (ties in a static buffer order). Any feasible problem has
such a solution (take one minimising the sum of offsets and sort it), so the search is
complete; the pruning (cross-section inference, dominance, hatless buffers, dynamic
decomposition) is sound for that solution. See ``_bnb`` for the details.

As MiniMalloc, ``decide`` runs one search per static order (``HEURISTICS``) side by side,
resumably and in growing node slices (in threads when there are several cores: the
compiled kernel releases the GIL); the first to finish decides, since each alone is
complete. Optimisation (``minimise``) is a search over H: the max-live lower bound first
(a hit proves optimality), then rounds of bisection between the lower bound and the best
plan found (which starts as the best greedy plan) with short probes, a probe out of time
counting as infeasible for that round only; the probe budget doubles after every round
without progress. A probe that exhausts its search
proves every lower height infeasible; the plan is optimal once the best plan meets that
bound.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from xrelay.transforms.planners._bnb import (
    DEFAULT_OPTIONS,
    EXHAUSTED,
    FOUND,
    HEURISTIC_LETTERS,
    RUNNING,
    _order_part,
    search,
)


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

    def __init__(self, items: Sequence[Item], height: int, heuristic: str = "WAT",
                 options: int = DEFAULT_OPTIONS):  # fmt: skip
        self.items = list(items)
        n = len(items)
        start = np.array([it.start for it in items], dtype=np.int64)
        stop = np.array([it.end + 1 for it in items], dtype=np.int64)
        # Sections end where buffers end: each one's live set is a clique.
        ends = np.unique(stop)
        S = len(ends)
        self.sa = np.searchsorted(ends, start, side="right").astype(np.int64)
        self.sb = (np.searchsorted(ends, stop, side="left") + 1).astype(np.int64)
        sa, sb = self.sa, self.sb
        self.w = np.array([it.size for it in items], dtype=np.int64)
        self.al = np.array([it.align for it in items], dtype=np.int64)
        self.width = stop - start
        self.area = self.w * self.width
        # Buffers overlapping in time (CSR), and the buffers of every section (CSR).
        conflict = (sa[:, None] < sb[None, :]) & (sa[None, :] < sb[:, None])
        np.fill_diagonal(conflict, False)
        self.ov_ptr = np.zeros(n + 1, dtype=np.int64)
        self.ov_ptr[1:] = np.cumsum(conflict.sum(axis=1))
        self.ov_idx = np.nonzero(conflict)[1].astype(np.int64)
        secs = np.arange(S)
        inside = (sa[None, :] <= secs[:, None]) & (secs[:, None] < sb[None, :])
        self.sec_ptr = np.zeros(S + 1, dtype=np.int64)
        self.sec_ptr[1:] = np.cumsum(inside.sum(axis=1))
        self.sec_idx = np.nonzero(inside)[1].astype(np.int64)
        self.keys = np.array([HEURISTIC_LETTERS.index(c) for c in heuristic], dtype=np.int64)
        self.height = height
        self.options = options
        self.off = np.full(n, -1, dtype=np.int64)
        self.minoff = np.zeros(n, dtype=np.int64)
        self.total = inside.astype(np.int64) @ self.w if n else np.zeros(S, dtype=np.int64)
        self.cuts = np.zeros(max(S, 1), dtype=np.int64)
        if S > 1:
            self.cuts[: S - 1] = ((sa[None, :] <= secs[:-1, None])
                                  & (sb[None, :] > secs[:-1, None] + 1)).sum(axis=1)
        self.static_order = np.zeros(max(n, 1), dtype=np.int64)
        _order_part(np.arange(n, dtype=np.int64), n, self.w, self.width, self.area, sa, sb,
                    self.total, self.keys, self.static_order)  # fmt: skip
        self.stamp_of = np.zeros(S, dtype=np.int64)
        self.wit = self.sec_idx[self.sec_ptr[:-1]].copy() if S else np.zeros(0, np.int64)
        self.tmo_idx = np.zeros(len(self.ov_idx) + 1, dtype=np.int64)
        self.tmo_old = np.zeros_like(self.tmo_idx)
        self.aff = np.zeros(S, dtype=np.int64)
        F = n + 2
        self.part = np.zeros((F, max(n, 1)), dtype=np.int64)
        self.f_root = np.full(F, -1, dtype=np.int64)
        self.f_plen = np.zeros(F, dtype=np.int64)
        self.f_lo = np.zeros(F, dtype=np.int64)
        self.f_hi = np.zeros(F, dtype=np.int64)
        self.f_mo = np.zeros(F, dtype=np.int64)
        self.f_mp = np.zeros(F, dtype=np.int64)
        self.cand = np.zeros((F, max(n, 1)), dtype=np.int64)
        self.cand_o = np.zeros((F, max(n, 1)), dtype=np.int64)
        self.f_cn = np.zeros(F, dtype=np.int64)
        self.f_ci = np.zeros(F, dtype=np.int64)
        self.f_fail = np.full(F, -1, dtype=np.int64)
        self.f_pend = np.zeros(F, dtype=np.int64)
        self.f_tmo = np.zeros(F, dtype=np.int64)
        self.f_b = np.full(F, -1, dtype=np.int64)
        self.f_hat = np.zeros(F, dtype=np.int64)
        # The whole component waits as the first part; its failure fails the search.
        self.pend = np.zeros((S + 1, 5), dtype=np.int64)
        # Parts already independent wait separately (leftmost on top).
        bounds = [0] + [k + 1 for k in range(S - 1) if self.cuts[k] == 0] + [S]
        for k, (lo, hi) in enumerate(reversed(list(zip(bounds, bounds[1:])))):
            self.pend[k] = (lo, hi, 0, 0, -1)
        self.members = np.zeros(max(n, 1), dtype=np.int64)
        self.cuts_new = np.zeros(max(S, 1), dtype=np.int64)
        self.ctl = np.zeros(6, dtype=np.int64)
        self.ctl[3] = len(bounds) - 1
        self.status = RUNNING

    @property
    def nodes(self) -> int:
        return int(self.ctl[2])

    def step(self, max_nodes: int, jit: bool) -> int:
        if self.status != RUNNING:
            return self.status
        fn = search if jit else search.py_func
        self.status = fn(
            self.w, self.al, self.sa, self.sb, self.width, self.area, self.ov_ptr,
            self.ov_idx, self.sec_ptr, self.sec_idx, self.keys, self.static_order, self.height,
            self.options,
            self.off, self.minoff, self.total, self.cuts, self.stamp_of, self.wit,
            self.tmo_idx, self.tmo_old, self.aff,
            self.part, self.f_root, self.f_plen, self.f_lo, self.f_hi, self.f_mo,
            self.f_mp, self.cand, self.cand_o, self.f_cn, self.f_ci, self.f_fail,
            self.f_pend, self.f_tmo, self.f_b, self.f_hat, self.pend,
            self.members, self.cuts_new, self.ctl, max_nodes,
        )  # fmt: skip
        return self.status

    def offsets(self) -> dict[int, int]:
        return {it.key: int(self.off[i]) for i, it in enumerate(self.items)}


HEURISTICS = ("WAT", "TAW", "TWA")
"""Static buffer orders tried side by side (as MiniMalloc does), letters as in
``_bnb.HEURISTIC_LETTERS``."""


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
    items: Sequence[Item],
    height: int,
    deadline: float,
    jit: bool | None = None,
    stop: Callable[[], bool] | None = None,
    threads: int | None = None,
) -> DecisionResult:
    """Do ``items`` fit below ``height``? Searches each component until ``deadline``
    (a ``time.perf_counter()`` value) or until ``stop()`` says another search answered
    (both end it as out of time). ``threads`` caps the threads of the side-by-side
    searches (default: one per usable core, at most one per heuristic)."""
    workers = _workers() if threads is None else max(1, min(threads, _workers()))
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
        comps = []
        for h in HEURISTICS:  # setting up a dense component of thousands takes a while
            if time.perf_counter() > deadline:
                return DecisionResult(RUNNING, {}, nodes)
            comps.append(_Component(part, height, h))
        # Small first slices: a node of a dense component can cost a millisecond; the
        # slices double below while they take under 50 ms.
        chunk = 16
        status = RUNNING
        winner = comps[0]
        while status == RUNNING:
            t0 = time.perf_counter()
            if jit and workers > 1:
                with ThreadPoolExecutor(workers) as pool:
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
            now = time.perf_counter()
            if status == RUNNING and (now > deadline or (stop is not None and stop())):
                return DecisionResult(RUNNING, {}, nodes + sum(c.nodes for c in comps))
            # Grow the slices while they are short, so that deadlines are kept closely.
            if now - t0 < 0.05:
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
    portfolio: bool = True,
    progress: Callable[[int | None, int, float], None] | None = None,
) -> OptimalResult:
    """Smallest height found within ``time_limit`` seconds for ``items``.

    ``upper``/``upper_offsets`` is a known feasible plan (e.g. greedy) or ``None``;
    ``capacity`` bounds the height (a pool size) or is ``None``. Heights are searched in
    multiples of the gcd of all sizes and alignments, which every canonical height is.

    With ``portfolio``, a CP-SAT decision search at the lower bound (``cpsat``) runs in
    the background for the whole time while the branch and bound bisects: whichever
    reaches the bound first ends the search. ``progress(best, bound, elapsed)`` is called
    after every probe and between the slices of a long one. ``stats``: ``probes`` lists every probe as (height, outcome, nodes);
    ``first_best_seconds`` is when the final height was first reached, ``proof_seconds``
    when it was proven optimal (``None`` if not), ``best_by`` which search found it.
    """
    nonzero = [it for it in items if it.size > 0]
    if jit or (jit is None and len(nonzero) > 24):
        ensure_compiled()
    start = time.perf_counter()
    deadline = start + time_limit
    probes: list[tuple[int, str, int]] = []
    stats: dict[str, object] = {"probes": probes, "best_by": "greedy", "first_best_seconds": 0.0}
    if not nonzero:
        stats.update(proof_seconds=0.0, seconds=0.0)
        return OptimalResult({it.key: 0 for it in items}, 0, True, stats)
    g = 0
    for it in nonzero:
        g = math.gcd(g, it.size)
        if it.align > 1:
            g = math.gcd(g, it.align)
    best_h, best = upper, upper_offsets
    if capacity is not None and (best_h is None or best_h > capacity):
        best_h, best = None, None
    # Every height below lo is infeasible (proven, or by the lower bound).
    lo = -(-lower // g) * g
    # Nothing known to fit: the capacity itself is the first height above the bound.
    cap = (capacity // g) * g if capacity is not None else None

    def improve(h: int, offsets: dict[int, int], by: str) -> None:
        nonlocal best_h, best
        if best_h is None or h < best_h:
            best_h, best = h, offsets
            stats["best_by"] = by
            stats["first_best_seconds"] = time.perf_counter() - start

    background = None
    if portfolio and len(nonzero) > 1 and (best_h is None or lo < best_h):
        if cap is None or lo <= cap:
            # imported here: CP-SAT (OR-Tools) is large and only the portfolio needs it
            from xrelay.transforms.planners.cpsat import CpSatProbe

            background = CpSatProbe(nonzero, lo, deadline)

    def tick() -> bool:
        """Called between search slices: report, and end the probe if CP-SAT answered."""
        if progress is not None:
            progress(best_h, lo, time.perf_counter() - start)
        return background is not None and background.status != RUNNING

    def absorb_background() -> None:
        nonlocal lo
        if background is None or background.status == RUNNING or background.height != lo:
            return
        if background.status == FOUND:
            h = max(background.offsets[it.key] + it.size for it in nonzero)
            improve(h, background.offsets, "cp-sat")
        else:
            lo = background.height + g

    def probe(h: int, budget: float) -> int:
        nonlocal lo
        # While CP-SAT runs it takes the other cores: one thread for the branch and bound.
        threads = 1 if background is not None and not background.done else None
        res = decide(
            nonzero, h, min(time.perf_counter() + budget, deadline), jit, tick, threads,
        )
        probes.append((h, ("running", "found", "exhausted")[res.status], res.nodes))
        if res.status == FOUND:
            improve(max(res.offsets[it.key] + it.size for it in nonzero), res.offsets, "bnb")
        elif res.status == EXHAUSTED:
            lo = max(lo, h + g)
        absorb_background()
        if progress is not None:
            progress(best_h, lo, time.perf_counter() - start)
        return res.status

    def target() -> int | None:
        return best_h if best_h is not None else cap

    try:
        # The lower bound is often the optimum (zero fragmentation): a generous first try.
        if (
            target() is not None
            and lo <= target() - (g if best_h is not None else 0)
            and time.perf_counter() < deadline  # the greedy seed may have used the time
        ):
            probe(lo, time_limit / 4)
        budget = max(time_limit / 100, 0.05)
        while time.perf_counter() < deadline:
            absorb_background()
            top = target()
            if top is None or lo > top or (best_h is not None and lo >= best_h):
                break
            if best_h is None:
                # Only the capacity is left to try: give it everything.
                if probe(top, deadline - time.perf_counter()) != FOUND:
                    break
                continue
            # One round: bisect between the bound and the best plan with short probes; a
            # probe out of time counts as infeasible for this round only.
            soft_lo = lo
            progress_made = False
            while time.perf_counter() < deadline and soft_lo < best_h:
                h = max(soft_lo + ((best_h - soft_lo) // (2 * g)) * g, lo)
                status = probe(h, budget)
                if status == RUNNING:
                    soft_lo = h + g
                else:
                    progress_made = True
                    soft_lo = max(soft_lo, lo)
            if not progress_made:
                budget *= 2
    finally:
        if background is not None:
            background.stop()
            absorb_background()
    elapsed = time.perf_counter() - start
    stats["seconds"] = elapsed
    if best is None:
        stats["proof_seconds"] = None
        return OptimalResult(None, 0, False, stats)
    offsets = {it.key: best.get(it.key, 0) for it in items}
    proven = lo >= best_h
    stats["proof_seconds"] = elapsed if proven else None
    return OptimalResult(offsets, best_h, proven, stats)
