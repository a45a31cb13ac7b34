"""Perfect packings (no free byte at the optimum): the generator, the CP-SAT portfolio
member, and ``optimal`` reaching and proving the optimum on them."""

import time

import pytest

from xrelay.testing.packings import perfect_packing
from xrelay.transforms.planners import Plan, Pool, exact, lower_bound, plan_memory, verify_plan
from xrelay.transforms.planners._bnb import EXHAUSTED, FOUND
from xrelay.transforms.planners.cpsat import CpSatProbe

POOLS = [Pool("global", None, alignment=1)]


def items_of(buffers):
    return [exact.Item(i, b.size, 1, b.start, b.end) for i, b in enumerate(buffers)]


@pytest.mark.parametrize("n", [1, 2, 50, 300])
def test_generator_covers_every_step_exactly(n):
    p = perfect_packing(n, seed=n)
    assert len(p.buffers) == n
    assert lower_bound(p.buffers, POOLS) == p.optimum == 1 << 20
    # The cuts' own plan is valid and has no free byte.
    plan = Plan("cuts", {b.name: ("global", p.offsets[b.name]) for b in p.buffers},
                {"global": p.optimum})  # fmt: skip
    verify_plan(p.buffers, POOLS, plan)
    steps = max(b.end for b in p.buffers) + 1
    assert sum(b.size * (b.end - b.start + 1) for b in p.buffers) == p.optimum * steps


def test_generator_is_seeded_and_takes_its_options():
    assert perfect_packing(80, seed=3) == perfect_packing(80, seed=3)
    assert perfect_packing(80, seed=3) != perfect_packing(80, seed=4)
    p = perfect_packing(40, seed=1, width=4096, steps=7, quantum=16)
    assert p.optimum == 4096 and max(b.end for b in p.buffers) == 6
    assert all(b.size % 16 == 0 for b in p.buffers)
    with pytest.raises(ValueError, match="do not fit"):
        perfect_packing(100, width=64, steps=10, quantum=64)
    with pytest.raises(ValueError, match="not a multiple"):
        perfect_packing(10, width=100, quantum=64)


def test_cpsat_probe_decides_both_ways():
    p = perfect_packing(60, seed=7)
    items = items_of(p.buffers)
    found = CpSatProbe(items, p.optimum, time.perf_counter() + 60)
    found._thread.join()
    assert found.status == FOUND
    placed = {b.name: ("global", found.offsets[i]) for i, b in enumerate(p.buffers)}
    verify_plan(p.buffers, POOLS, Plan("cp-sat", placed, {"global": p.optimum}))
    below = CpSatProbe(items, p.optimum - 64, time.perf_counter() + 60)
    below._thread.join()
    assert below.status == EXHAUSTED


def test_cpsat_probe_keeps_alignment():
    # Three buffers live together; alignment 8 forces gaps the sizes alone do not need.
    items = [exact.Item(0, 3, 8, 0, 1), exact.Item(1, 5, 8, 0, 1), exact.Item(2, 8, 8, 1, 2)]
    probe = CpSatProbe(items, 19, time.perf_counter() + 30)
    probe._thread.join()
    assert probe.status == FOUND
    assert all(o % 8 == 0 for o in probe.offsets.values())
    # At step 1 all three are live, each in its own slot of 8: the highest starts at 16
    # at the lowest, so 16 + 3 = 19 bytes is the least (the 3-byte buffer on top).
    assert max(probe.offsets[it.key] + it.size for it in items) <= 19
    tight = CpSatProbe(items, 18, time.perf_counter() + 30)
    tight._thread.join()
    assert tight.status == EXHAUSTED


@pytest.mark.parametrize("n,seed", [(50, 0), (100, 0), (200, 2), (200, 4)])
def test_optimal_reaches_and_proves_the_optimum(n, seed):
    p = perfect_packing(n, seed=seed)
    plan = plan_memory(p.buffers, "optimal", POOLS, time_limit=60)
    verify_plan(p.buffers, POOLS, plan)
    assert plan.total_size == p.optimum
    assert plan.optimal
    stats = plan.stats["global"]
    assert stats["proof_seconds"] is not None
    assert 0 <= stats["first_best_seconds"] <= stats["proof_seconds"] <= plan.seconds + 1e-6
    assert stats["best_by"] in ("bnb", "cp-sat", "greedy")


def test_portfolio_off_is_the_branch_and_bound_alone():
    p = perfect_packing(30, seed=5)
    items = items_of(p.buffers)
    # The upper plan: every buffer on top of the previous one.
    stacked, top = {}, 0
    for it in items:
        stacked[it.key], top = top, top + it.size
    res = exact.minimise(items, p.optimum, top, stacked, None, 30, portfolio=False)
    assert res.optimal and res.height == p.optimum
    assert res.stats["best_by"] == "bnb"


def test_progress_reports_best_bound_and_time():
    p = perfect_packing(40, seed=2)
    seen = []
    res = exact.minimise(items_of(p.buffers), p.optimum, 2 * p.optimum, None, None, 30,
                         progress=lambda best, bound, t: seen.append((best, bound, t)))  # fmt: skip
    assert res.optimal
    assert seen, "progress was never called"
    assert all(best is None or best >= bound or best == res.height for best, bound, _ in seen)
    assert [t for *_, t in seen] == sorted(t for *_, t in seen)
