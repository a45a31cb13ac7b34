"""The greedy planners' lifetime index gives the same plans as the old linear scan.

``_ScanPlacer`` below is the placement engine as it was before the index (every placement
filtered all placed buffers of the pool, then inserted in offset order: quadratic); the
planners are run with it patched in as the reference and compared offset for offset.
"""

from __future__ import annotations

import bisect
import random

import pytest

from xrelay.runtime.memory_plan import align_up, allowed_pools, effective_alignment, footprint
from xrelay.transforms.planners import Buffer, PlanError, Pool, greedy, verify_plan

PLANNERS = {
    "naive": greedy.plan_naive,
    "greedy-by-size": greedy.plan_greedy_by_size,
    "greedy-by-size-first-fit": greedy.plan_greedy_by_size_first_fit,
    "greedy-by-conflicts": greedy.plan_greedy_by_conflicts,
    "position-greedy-hierarchy": greedy.plan_position_greedy_hierarchy,
    "greedy-hierarchy": greedy.plan_greedy_hierarchy,
    "hill-climb": greedy.plan_hill_climb,
}


class _ScanPlacer:
    """The reference: the pre-index placement engine (same interface as ``_Placer``)."""

    def __init__(self, pools, buffers=(), columns=None):
        self.pools = list(pools)
        self.buffers = buffers
        self.placed = {p.name: [] for p in pools}
        self.offsets = {}
        self.used_by = {p.name: 0 for p in pools}

    @property
    def used(self):
        return list(self.used_by.values())

    @property
    def pool_of(self):
        names = [p.name for p in self.pools]
        return [names.index(self.offsets[b.name][0]) for b in self.buffers]

    @property
    def offset_of(self):
        return [self.offsets[b.name][1] for b in self.buffers]

    def run(self, order, rule):
        for i in order:
            self.place(self.buffers[i], rule)

    def place(self, b, rule):
        candidates = allowed_pools(b, self.pools)
        if b.size == 0:
            self.offsets[b.name] = (candidates[0].name, 0)
            return
        for pool in candidates:
            align = effective_alignment(b, pool)
            size = footprint(b, pool)
            entries = self.placed[pool.name]
            if rule is None:
                offset = align_up(self.used_by[pool.name], align)
            else:
                conflicts = [e[:2] for e in entries if e[2] <= b.end and b.start <= e[3]]
                offset = rule(conflicts, size, align)
            if pool.size is not None and offset + size > pool.size:
                continue
            bisect.insort(entries, (offset, offset + size, b.start, b.end))
            self.offsets[b.name] = (pool.name, offset)
            self.used_by[pool.name] = max(self.used_by[pool.name], offset + size)
            return
        raise greedy.fits_nowhere_error(b, candidates, self.pools, self.placed)

    def plan(self, algorithm):
        return greedy.Plan(algorithm, dict(self.offsets), dict(self.used_by))


def _problem(rng: random.Random, n: int) -> list[Buffer]:
    """Short and long lifetimes on sparse, possibly negative steps; zero sizes; pins."""
    steps = sorted(rng.sample(range(-50, 400), 60))
    buffers = []
    for i in range(n):
        a = rng.randrange(len(steps))
        span = rng.choice([0, 0, 1, 2, 3, 5, 12, len(steps)])
        b = min(len(steps) - 1, a + span)
        size = rng.choice([0, 1, 3, 16, 40, 64, 100, 256, 1000, 4096])
        pools = rng.choice([None, None, None, ("dram",), ("sram", "dram")])
        forbidden = ("sram",) if pools is None and rng.random() < 0.1 else ()
        buffers.append(
            Buffer(f"b{i}", size, steps[a], steps[b], rng.choice([1, 4, 32]), pools=pools,
                   forbidden_pools=forbidden)
        )
    return buffers


def _both(planner, buffers, pools, monkeypatch):
    def outcome():
        try:
            plan = planner(buffers, pools, seed=3, lower=0)
            return plan.offsets, plan.pool_sizes
        except PlanError as e:
            return str(e)

    new = outcome()
    with monkeypatch.context() as m:
        m.setattr(greedy, "_Placer", _ScanPlacer)
        old = outcome()
    return new, old


def _trial(rng: random.Random, trial: int, most: int) -> tuple[list[Buffer], list[Pool]]:
    """Up to ``most`` buffers over two bounded/unbounded pools; every third trial one pool and
    no pool constraints."""
    buffers = _problem(rng, rng.randint(1, most))
    pools = [Pool("sram", rng.choice([2000, 8000, 40000]), 16), Pool("dram", None, 64)]
    if trial % 3 == 0:
        pools = [Pool("global", None, rng.choice([1, 16]))]
        buffers = [Buffer(b.name, b.size, b.start, b.end, b.alignment) for b in buffers]
    return buffers, pools


@pytest.mark.parametrize("name", PLANNERS)
def test_same_plans_as_the_linear_scan(name, monkeypatch):
    planner = PLANNERS[name]
    rng = random.Random(name)
    for trial in range(12 if name != "hill-climb" else 3):
        buffers, pools = _trial(rng, trial, 150 if name != "hill-climb" else 40)
        new, old = _both(planner, buffers, pools, monkeypatch)
        assert new == old


@pytest.mark.parametrize("path", ["numpy queries", "segment tree"])
@pytest.mark.parametrize("name", PLANNERS)
def test_other_query_paths_give_the_same_plans(name, path, monkeypatch):
    """The time-position index answers small queries in Python and large ones with numpy;
    problems it declines (too many conflicting pairs) take the segment tree. Each path,
    forced on every query, plans like the linear scan."""
    if path == "numpy queries":
        monkeypatch.setattr(greedy, "_MANY_CONFLICTS", 0)
    else:
        monkeypatch.setattr(greedy._TimeIndex, "MAX_PAIRS_PER_BUFFER", -10**9)
    rng = random.Random(name + path)
    for trial in range(6 if name != "hill-climb" else 2):
        buffers, pools = _trial(rng, trial, 120 if name != "hill-climb" else 40)
        new, old = _both(PLANNERS[name], buffers, pools, monkeypatch)
        assert new == old


def test_time_index_lists_exactly_the_conflicting_buffers():
    rng = random.Random(12)
    for n in (0, 1, 2, 57, 300):
        buffers = _problem(rng, n)
        cols = greedy._Columns(buffers, greedy.default_pools_of(buffers))
        timed = cols.time_index()
        assert timed is not None
        inputs = timed.inputs.tolist()
        for k, b in enumerate(buffers):
            t = int(timed.position[k])
            assert inputs[t] == k
            near = list(timed.back[timed.bptr[t] : timed.bptr[t + 1]]) + list(range(t + 1, timed.forward[t]))
            assert all(u < t for u in timed.back[timed.bptr[t] : timed.bptr[t + 1]])
            found = sorted(inputs[u] for u in near)
            # Conflicts by lifetime alone (size-0 buffers too: the placer skips them).
            assert found == [j for j, c in enumerate(buffers) if j != k and c.start <= b.end and b.start <= c.end]


def test_time_index_declines_offsets_beyond_int64():
    buffers = [Buffer("a", 1 << 61, 0, 1), Buffer("b", 1 << 61, 1, 2), Buffer("c", 5, 0, 2)]
    cols = greedy._Columns(buffers, greedy.default_pools())
    assert cols.time_index() is None
    plan = greedy.plan_greedy_by_size(buffers, greedy.default_pools())
    verify_plan(buffers, None, plan)
    assert plan.total_size > 1 << 62  # all three are live at step 1: stacked, past int64


def test_same_errors_when_a_bounded_pool_overflows(monkeypatch):
    buffers = [Buffer(f"b{i}", 100, i % 5, i % 5 + 3) for i in range(30)]
    for name, planner in PLANNERS.items():
        if name == "hill-climb":
            continue
        new, old = _both(planner, buffers, [Pool("only", 700, 4)], monkeypatch)
        assert isinstance(new, str) and "fits in no pool" in new, name
        assert new == old, name


def _overlaps_brute_force(buffers, plan) -> bool:
    placed = [(b, *plan.offsets[b.name]) for b in buffers if b.size]
    return any(
        pa == pb and a.conflicts(b) and oa < ob + b.size and ob < oa + a.size
        for i, (a, pa, oa) in enumerate(placed)
        for b, pb, ob in placed[i + 1 :]
    )


def test_verify_plan_sweep_agrees_with_all_pairs():
    """verify_plan's sweep (live buffers by offset) finds an overlap exactly when the
    all-pairs check does, on random valid and corrupted plans."""
    from xrelay.transforms.planners import verify_plan

    rng = random.Random(17)
    caught = 0
    for trial in range(300):
        buffers = _problem(rng, rng.randint(2, 30))
        buffers = [Buffer(b.name, b.size, b.start, b.end) for b in buffers]
        pools = [Pool("a", None, 1), Pool("b", None, 1)]
        plan = greedy.plan_greedy_by_size(buffers, pools)
        for _ in range(rng.randrange(3)):  # corrupt a few offsets
            b = rng.choice(buffers)
            plan.offsets[b.name] = (rng.choice("ab"), rng.randrange(0, 3000))
        plan.pool_sizes = {"a": 10**6, "b": 10**6}
        expected = _overlaps_brute_force(buffers, plan)
        try:
            verify_plan(buffers, pools, plan)
            assert not expected, trial
        except PlanError as e:
            assert expected and "live at the same time and overlap" in str(e), (trial, e)
            caught += 1
    assert 30 < caught < 300


def test_lifetime_index_finds_exactly_the_conflicting_buffers():
    # hill-climb's neighbour lists come from the index (they were an all-pairs scan).
    rng = random.Random(11)
    buffers = [b for b in _problem(rng, 300) if b.size]
    cols = greedy._Columns(buffers, greedy.default_pools_of(buffers))
    index = greedy._LifetimeIndex(cols.ranks)
    lo, hi = cols.lo.tolist(), cols.hi.tolist()
    for k in range(len(buffers)):
        index.add(lo[k], hi[k], k)
    for k, b in enumerate(buffers):
        found = [buffers[j] for j in index.conflicts(lo[k], hi[k])]
        assert found == [c for c in buffers if b.conflicts(c)]


def test_huge_sizes_and_steps_plan_as_the_reference(monkeypatch):
    """Sizes and steps beyond int64 take the plain-Python ordering and ranking path."""
    rng = random.Random(8)
    for trial in range(6):
        buffers = [
            Buffer(b.name, b.size * (1 << 70) if trial % 2 else b.size, b.start << 66, b.end << 66)
            for b in _problem(rng, 60)
        ]
        for name, planner in PLANNERS.items():
            new, old = _both(planner, buffers, [Pool("global", None, 16)], monkeypatch)
            assert new == old, name
    assert greedy.conflict_counts(buffers) == [
        sum(1 for c in buffers if c is not b and b.conflicts(c)) if b.size else 0 for b in buffers
    ]


def test_hill_climb_work_is_bounded_by_placements(monkeypatch):
    rng = random.Random(4)
    buffers = _problem(rng, 100)
    pools = [Pool("sram", 1 << 20, 16), Pool("dram", None, 64)]
    assert greedy.plan_hill_climb(buffers, pools, seed=1).stats["attempts"] > 10
    monkeypatch.setattr(greedy, "HILL_CLIMB_PLACEMENTS", 1000)  # 10 re-plans of 100 buffers
    assert greedy.plan_hill_climb(buffers, pools, seed=1).stats["attempts"] <= 10


def test_stable_order_is_pythons_sorted_on_both_paths():
    """numpy's lexsort (int64 columns) and the plain-Python path (huge values) give the
    order of ``sorted`` on the key tuples, ties kept in input order."""
    import numpy as np

    rng = random.Random(6)
    for _ in range(20):
        n = rng.randint(0, 200)
        a = [rng.randrange(3) for _ in range(n)]
        b = [rng.choice([0, 5, 1 << 40, -7]) for _ in range(n)]
        expected = sorted(range(n), key=lambda i: (a[i], -b[i]))
        fast = greedy._stable_order([(np.array(a, dtype=np.int64), False), (np.array(b, dtype=np.int64), True)])
        slow = greedy._stable_order([(np.array(a, dtype=object), False), (np.array(b, dtype=object), True)])
        assert fast == slow == expected


def test_order_then_names_is_sorted_with_names_last():
    import numpy as np

    rng = random.Random(9)
    for _ in range(30):
        n = rng.randint(0, 120)
        a = [rng.randrange(3) for _ in range(n)]
        b = [rng.choice([0, 5, 7]) for _ in range(n)]
        names = [f"n{rng.randrange(10**6)}_{i}" for i in range(n)]
        expected = sorted(range(n), key=lambda i: (-a[i], b[i], names[i]))
        for dtype in (np.int64, object):
            keys = [(np.array(a, dtype=dtype), True), (np.array(b, dtype=dtype), False)]
            assert greedy._order_then_names(keys, names) == expected


def test_lower_bound_is_the_plain_sweep():
    """lower_bound's bulk path (distinct pool constraints resolved once, numpy sweep) gives
    the per-buffer definition's value, also with odd alignments and values beyond int64."""
    from xrelay.runtime.memory_plan import _sweep
    from xrelay.transforms.planners import lower_bound

    def reference(buffers, pools):
        return _sweep(
            (min(footprint(b, p) for p in allowed_pools(b, pools)), b.start, b.end) for b in buffers
        )[0]

    rng = random.Random(21)
    for trial in range(60):
        buffers = _problem(rng, rng.randint(0, 80))
        pools = [Pool("sram", None, rng.choice([1, 16, 24])), Pool("dram", None, rng.choice([1, 48, 64]))]
        if trial % 4 == 0:  # one group shared by all: the sweep itself decides
            buffers = [Buffer(b.name, b.size, b.start, b.end, rng.choice([1, 3, 24])) for b in buffers]
        if trial % 5 == 0:
            buffers = [Buffer(b.name, b.size << 65, b.start << 62, b.end << 62) for b in buffers]
        assert lower_bound(buffers, pools) == reference(buffers, pools), trial


def test_hill_climb_neighbours_from_either_index_give_the_same_plans(monkeypatch):
    """hill-climb's neighbour lists come from the time index, or from the segment tree for
    problems the time index declines: the same lists, so the same search and plan."""
    rng = random.Random(30)
    for _ in range(4):
        buffers = _problem(rng, 60)
        pools = [Pool("sram", 8000, 16), Pool("dram", None, 64)]
        timed = greedy.plan_hill_climb(buffers, pools, seed=5)
        with monkeypatch.context() as m:
            m.setattr(greedy._TimeIndex, "MAX_PAIRS_PER_BUFFER", -10**9)
            tree = greedy.plan_hill_climb(buffers, pools, seed=5)
        assert timed.stats["attempts"] == tree.stats["attempts"] > 10
        assert (timed.offsets, timed.pool_sizes) == (tree.offsets, tree.pool_sizes)
