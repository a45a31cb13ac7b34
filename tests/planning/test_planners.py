"""Planners: every algorithm on random problems, known answers, multi-pool behaviour."""

import random
from pathlib import Path

import pytest

from xrelay.transforms.planners import (
    ALGORITHMS,
    Buffer,
    PlanError,
    Pool,
    format_report,
    greedy,
    lower_bound,
    peak,
    plan_memory,
    verify_plan,
)
from xrelay.transforms.planners.csv_io import read_minimalloc_csv

# MiniMalloc's benchmark inputs, shipped with the repository (see its README.md there).
MINIMALLOC = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "minimalloc"
EXACT_LIMIT = 5.0


def random_problem(rng: random.Random, n: int, steps: int = 30) -> list[Buffer]:
    buffers = []
    for i in range(n):
        start = rng.randrange(steps)
        end = min(steps - 1, start + rng.randrange(8))
        size = rng.choice([0, 1, 3, 16, 40, 64, 100, 256, 1000])
        kind = rng.choice(["intermediate", "intermediate", "workspace", "input", "output"])
        buffers.append(Buffer(f"b{i}", size, start, end, rng.choice([1, 4, 32]), kind))
    return buffers


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("seed", range(6))
def test_random_problems_verify(algorithm, seed):
    rng = random.Random(seed)
    buffers = random_problem(rng, rng.randint(1, 14 if algorithm == "optimal" else 60))
    plan = plan_memory(buffers, algorithm, time_limit=EXACT_LIMIT, seed=seed)
    verify_plan(buffers, None, plan)
    assert plan.algorithm == algorithm
    assert set(plan.offsets) == {b.name for b in buffers}
    assert plan.total_size >= lower_bound(buffers)
    if algorithm == "optimal":
        assert plan.optimal is True
        greedy = plan_memory(buffers, "greedy-by-size")
        assert plan.total_size <= greedy.total_size


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_random_multi_pool_problems_verify(algorithm):
    rng = random.Random(99)
    pools = [Pool("sram", 600, 16), Pool("dram", None, 64, base_address=0x8000_0000)]
    for _ in range(4):
        buffers = random_problem(rng, 25)
        # Pin a few buffers to DRAM and forbid a few others from it.
        buffers = [
            Buffer(b.name, b.size, b.start, b.end, b.alignment, b.kind, pools=("dram",))
            if i % 7 == 0
            else b
            for i, b in enumerate(buffers)
        ]
        plan = plan_memory(buffers, algorithm, pools, time_limit=EXACT_LIMIT)
        verify_plan(buffers, pools, plan)
        assert plan.pool_sizes["sram"] <= 600
        for i, b in enumerate(buffers):
            if i % 7 == 0:
                assert plan.offsets[b.name][0] == "dram"


def test_naive_is_sum_of_footprints():
    buffers = [Buffer("a", 10, 0, 1), Buffer("b", 20, 1, 2), Buffer("c", 16, 5, 6)]
    plan = plan_memory(buffers, "naive")
    assert plan.offsets == {"a": ("global", 0), "b": ("global", 16), "c": ("global", 48)}
    assert plan.pool_sizes == {"global": 64}


def test_ping_pong_chain_reaches_lower_bound():
    # t0 -> t1 -> ... each tensor read only by the next op: two live at a time.
    sizes = [4096, 8192, 2048, 8192, 1024, 4096, 512, 256]
    buffers = [Buffer(f"t{i}", s, i, i + 1) for i, s in enumerate(sizes)]
    plan = plan_memory(buffers, "greedy-by-size")
    verify_plan(buffers, None, plan)
    assert lower_bound(buffers) == 8192 + 4096
    assert plan.total_size == lower_bound(buffers)
    assert plan_memory(buffers, "naive").total_size == sum(sizes)


def test_lower_bound_and_peak():
    buffers = [
        Buffer("a", 10, 0, 2),
        Buffer("b", 7, 2, 3, alignment=8),
        Buffer("c", 1, 3, 3),
        Buffer("z", 0, 0, 9),
    ]
    assert peak(buffers) == (17, 2)
    # Footprints with the default 16-byte pool: 16 + 16 at step 2, 16 + 16 at step 3.
    assert lower_bound(buffers) == 32
    assert lower_bound(buffers, [Pool("p", None, 1)]) == 18
    assert peak([]) == (0, 0)


def test_zero_size_buffers_sit_at_offset_zero():
    buffers = [Buffer("a", 64, 0, 5), Buffer("empty", 0, 0, 5), Buffer("b", 64, 0, 5)]
    for algorithm in ALGORITHMS:
        plan = plan_memory(buffers, algorithm, time_limit=EXACT_LIMIT)
        verify_plan(buffers, None, plan)
        assert plan.offsets["empty"] == ("global", 0)
        assert plan.pool_sizes["global"] == 128


def test_input_12_optimal_is_12():
    buffers = read_minimalloc_csv(MINIMALLOC / "input.12.csv")
    assert len(buffers) == 5
    pools = [Pool("global", None, 1)]
    plan = plan_memory(buffers, "optimal", pools, time_limit=EXACT_LIMIT)
    verify_plan(buffers, pools, plan)
    assert plan.total_size == 12
    assert plan.optimal is True
    # The MiniMalloc README example: b1 = [0,3) and b2 = [3,9) share an offset.
    assert plan.offsets["b1"] == plan.offsets["b2"]


def guillotine_problem(rng: random.Random, height: int, steps: int, pieces: int):
    """Buffers cut out of a full (steps x height) rectangle: optimum = lower bound."""
    rects = [(0, steps, 0, height)]
    while len(rects) < pieces:
        rects.sort(key=lambda r: (r[1] - r[0]) * (r[3] - r[2]))
        t0, t1, o0, o1 = rects.pop()
        if (rng.random() < 0.5 and t1 - t0 > 1) or o1 - o0 < 2:
            cut = rng.randrange(t0 + 1, t1)
            rects += [(t0, cut, o0, o1), (cut, t1, o0, o1)]
        else:
            cut = rng.randrange(o0 + 1, o1)
            rects += [(t0, t1, o0, cut), (t0, t1, cut, o1)]
    rng.shuffle(rects)
    return [Buffer(f"r{i}", o1 - o0, t0, t1 - 1) for i, (t0, t1, o0, o1) in enumerate(rects)]


def test_optimal_proves_tight_packing_greedy_misses():
    pools = [Pool("global", None, 1)]
    found_gap = False
    for seed in range(4):
        buffers = guillotine_problem(random.Random(seed), 1000, 40, 30)
        assert lower_bound(buffers, pools) == 1000
        plan = plan_memory(buffers, "optimal", pools, time_limit=EXACT_LIMIT)
        verify_plan(buffers, pools, plan)
        assert plan.total_size == 1000
        assert plan.optimal is True
        greedy = plan_memory(buffers, "greedy-by-size", pools)
        found_gap |= greedy.total_size > 1000
    assert found_gap, "the instances should be hard enough for greedy-by-size"


def test_optimal_respects_bounded_pool_greedy_cannot_fit():
    pools = [Pool("global", 1000, 1)]
    for seed in range(3):
        buffers = guillotine_problem(random.Random(seed), 1000, 40, 30)
        try:
            plan_memory(buffers, "greedy-by-size", pools)
            greedy_fits = True
        except PlanError:
            greedy_fits = False
        plan = plan_memory(buffers, "optimal", pools, time_limit=EXACT_LIMIT)
        verify_plan(buffers, pools, plan)
        assert plan.pool_sizes["global"] == 1000
        if not greedy_fits:
            return
    pytest.fail("expected one instance that greedy cannot fit in 1000 bytes")


def test_optimal_too_small_pool_is_an_error():
    buffers = [Buffer("a", 64, 0, 1), Buffer("b", 64, 1, 2)]
    with pytest.raises(PlanError, match="holds 100 bytes .* at least 128"):
        plan_memory(buffers, "optimal", [Pool("tiny", 100, 1)])


def test_storage_ids_reproduce_relay_test_plan_memory():
    # x(10,) f32 and y(1,) f32 params; exp(y) -> add(x, .) -> 5 x exp, one op per step.
    buffers = [
        Buffer("x", 40, 0, 2, kind="input"),
        Buffer("y", 4, 0, 1, kind="input"),
        Buffer("exp_y", 4, 1, 2),
        Buffer("add", 40, 2, 3),
        Buffer("exp1", 40, 3, 4),
        Buffer("exp2", 40, 4, 5),
        Buffer("exp3", 40, 5, 6),
        Buffer("exp4", 40, 6, 7),
        Buffer("exp5", 40, 7, 7, kind="output"),
    ]
    pools = [Pool("global", None, 1)]
    plan = plan_memory(buffers, "storage-ids", pools)
    verify_plan(buffers, pools, plan)
    ids = plan.storage_ids
    assert len(set(ids.values())) == 4
    assert [ids[n] for n in ("x", "y", "exp_y", "add")] == [0, 1, 2, 3]
    # Two temporaries alternate along the chain.
    assert [ids[f"exp{i}"] for i in range(1, 6)] == [2, 3, 2, 3, 2]
    # Relay's test reads each id's size from its first tensor: {40, 4, 4, 40}.
    first = {}
    for b in buffers:
        first.setdefault(ids[b.name], b.size)
    assert first == {0: 40, 1: 4, 2: 4, 3: 40}
    # The objects themselves grow to their largest tenant (Relay's max_bytes).
    assert plan.storage_sizes == {0: 40, 1: 4, 2: 40, 3: 40}
    assert plan.pool_sizes["global"] == 124


def test_storage_ids_match_range():
    # A free 4-byte token is not reused for 100 bytes (outside [100/16, 100*16]).
    buffers = [Buffer("small", 4, 0, 0), Buffer("big", 100, 1, 1), Buffer("big2", 60, 2, 2)]
    plan = plan_memory(buffers, "storage-ids", [Pool("g", None, 1)])
    assert plan.storage_ids == {"small": 0, "big": 1, "big2": 1}
    assert plan.storage_sizes == {0: 4, 1: 100}


def test_hierarchy_spills_to_second_pool():
    pools = [Pool("fast", 256, 16), Pool("slow", None, 64)]
    buffers = [
        Buffer("a", 200, 0, 3),
        Buffer("b", 100, 1, 2),  # does not fit next to a in 256 bytes
        Buffer("c", 40, 1, 2),  # fits beside a
        Buffer("d", 200, 4, 5),  # reuses a's space after it dies
    ]
    for algorithm in ("greedy-hierarchy", "position-greedy-hierarchy", "greedy-by-size"):
        plan = plan_memory(buffers, algorithm, pools)
        verify_plan(buffers, pools, plan)
        assert plan.offsets["a"] == ("fast", 0)
        assert plan.offsets["b"] == ("slow", 0)
        assert plan.offsets["c"] == ("fast", 208)
        assert plan.offsets["d"] == ("fast", 0)
        assert plan.pool_sizes == {"fast": 256, "slow": 128}


def test_fits_nowhere_names_buffer_and_free_space():
    pools = [Pool("fast", 256, 16), Pool("slow", 300, 16)]
    buffers = [Buffer("a", 200, 0, 3), Buffer("b", 100, 0, 3), Buffer("huge", 250, 2, 2)]
    with pytest.raises(PlanError) as err:
        plan_memory(buffers, "naive", pools)
    text = str(err.value)
    assert "'huge' (250 bytes, steps 2..2) fits in no pool" in text
    assert "pool 'fast' (256 bytes, alignment 16) has at most 48 contiguous free bytes" in text
    assert "pool 'slow' (300 bytes, alignment 16) has at most 188 contiguous free bytes" in text


def test_forbidden_pool_is_reported():
    pools = [Pool("fast", 64, 16), Pool("slow", None, 16)]
    buffers = [Buffer("w", 128, 0, 0, forbidden_pools=("slow",))]
    with pytest.raises(PlanError, match="fits in no pool.*not allowed in 'slow'"):
        plan_memory(buffers, "greedy-hierarchy", pools)


def test_problem_errors():
    with pytest.raises(PlanError, match="unknown planning algorithm 'best'.*greedy-by-size"):
        plan_memory([], "best")
    with pytest.raises(PlanError, match="duplicate buffer name 'a'"):
        plan_memory([Buffer("a", 1, 0, 0), Buffer("a", 1, 0, 0)])
    with pytest.raises(PlanError, match="unknown pool 'l2'"):
        plan_memory([Buffer("a", 1, 0, 0, pools=("l2",))])
    with pytest.raises(PlanError, match="empty lifetime"):
        Buffer("a", 1, 3, 2)
    with pytest.raises(PlanError, match="not a multiple of its alignment"):
        plan_memory([Buffer("a", 1, 0, 0)], pools=[Pool("p", None, 16, base_address=8)])


def test_hill_climb_is_deterministic_and_not_worse_than_its_start():
    rng = random.Random(5)
    buffers = random_problem(rng, 80)
    first = plan_memory(buffers, "hill-climb", seed=3)
    again = plan_memory(buffers, "hill-climb", seed=3)
    assert first.offsets == again.offsets
    pools = [Pool("global", None, 16)]
    start = greedy._run(
        buffers, pools, greedy._usmp_size_order(buffers), greedy._above_conflicts, "start"
    )
    assert first.total_size <= start.total_size
    assert plan_memory(buffers, "hill-climb", seed=4).total_size <= start.total_size


def test_report_tables():
    pools = [Pool("fast", 256, 16, 0x1000), Pool("slow", None, 64)]
    buffers = [Buffer("a", 200, 0, 3), Buffer("b", 100, 1, 2), Buffer("c", 40, 1, 2)]
    plan = plan_memory(buffers, "greedy-hierarchy", pools)
    text = format_report(buffers, pools, plan)
    assert "Memory Space" in text and "0x1000" in text and "unbounded" in text
    assert "Peak memory usage across all spaces | 384 bytes" in text
    assert "Step 1" in text
    # Each buffer counted with its smallest footprint over the pools: 208 + 112 + 48.
    assert "Lower bound (max live bytes)        | 368 bytes" in text
    assert "greedy-hierarchy" in text
