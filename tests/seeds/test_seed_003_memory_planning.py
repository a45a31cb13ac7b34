"""Seed 003: ExecuTorch's Cadence memory planning, ported to ``xrelay.transforms.planners``.

The seed plans ``TensorSpec``s of a ``torch.fx`` graph; xrelay plans ``Buffer``s (name, bytes,
inclusive lifetime ``[start, end]`` in schedule steps). The mapping:

=============================================================  ===================================
ExecuTorch (seed)                                              xrelay
=============================================================  ===================================
``spec.allocated_memory``, ``spec.lifetime``                   ``Buffer.size``, ``start``/``end``
``MemoryConfig.memory_sizes`` / ``memory_alignments``          ``Pool(name, size, alignment)``
``memory_names``, ``base_addrs``                               ``Pool.name``, ``Pool.base_address``
mem_id 1..N, fastest first                                     ``pools`` list order
``mem_constraints.is_mem_id_in_blocklist``                     ``Buffer.forbidden_pools``
``position_based_greedy_with_hierarchy``                       ``"position-greedy-hierarchy"``
``greedy_by_size_for_offset_calculation_with_hierarchy``       ``"greedy-hierarchy"``
``spec.mem_id``, ``spec.mem_offset``                           ``plan.offsets[name]``
returned ``bufsizes``                                          ``plan.pool_sizes``
``find_peak_memory_usage``                                     ``peak(buffers)`` (bytes, step)
``Verifier`` (lifetime and storage overlap)                    ``verify_plan``
``print_memory_planning_info``                                 ``format_report``
``MemoryError("Cannot fit ... in any memory hierarchy")``     ``PlanError`` naming the buffer
=============================================================  ===================================

The seed shows the algorithms but no worked problem; the expected offsets below are worked
out by hand from the seed's code, step by step in the comments. One difference: a pool's used
size here is the highest offset plus the buffer's size rounded up to the alignment (its
footprint), where the seed's ``bufsizes`` adds the unrounded size; the two agree when sizes
are multiples of the alignment, as in every example but ``test_alignment``.
"""

from __future__ import annotations

import pytest

from xrelay.transforms.planners import (
    ALGORITHMS,
    Buffer,
    Plan,
    PlanError,
    Pool,
    format_report,
    lower_bound,
    peak,
    plan_memory,
    verify_plan,
)

POSITION = "position-greedy-hierarchy"
GREEDY = "greedy-hierarchy"


def _specs():
    """Five tensors; sorted by size they are placed A, B, C, D, N."""
    return [
        Buffer("A", 34, 0, 1),
        Buffer("B", 32, 1, 2),
        Buffer("C", 22, 0, 1),
        Buffer("D", 21, 1, 2),
        Buffer("N", 20, 2, 2),
    ]


ONE_MEMORY = [Pool("mem1", None, alignment=1)]


def test_both_algorithms_are_offered():
    assert POSITION in ALGORITHMS and GREEDY in ALGORITHMS and "naive" in ALGORITHMS


def test_position_based_greedy_takes_the_first_free_position():
    # A -> 0. B overlaps A in time: bump past A -> 34. C overlaps A, then B: 0 -> 34 -> 66.
    # D overlaps A, B, C: 0 -> 34 -> 66 -> 88. N (steps 2..2) overlaps only B [34, 66) and
    # D [88, 109): offset 0 already overlaps nothing, so N -> 0.
    plan = plan_memory(_specs(), POSITION, ONE_MEMORY)
    assert {k: off for k, (_, off) in plan.offsets.items()} == {
        "A": 0,
        "B": 34,
        "C": 66,
        "D": 88,
        "N": 0,
    }
    assert plan.pool_sizes == {"mem1": 109}
    verify_plan(_specs(), ONE_MEMORY, plan)


def test_greedy_by_size_takes_the_smallest_gap():
    # Same first four. For N, the tensors alive with it, by offset, are B [34, 66) and
    # D [88, 109): the gap below B holds 34 bytes, the gap between B and D 22; the smallest
    # gap that holds 20 bytes wins (arxiv.org/pdf/2001.03288), so N -> 66.
    plan = plan_memory(_specs(), GREEDY, ONE_MEMORY)
    assert {k: off for k, (_, off) in plan.offsets.items()} == {
        "A": 0,
        "B": 34,
        "C": 66,
        "D": 88,
        "N": 66,
    }
    assert plan.pool_sizes == {"mem1": 109}
    verify_plan(_specs(), ONE_MEMORY, plan)


def test_naive_reuses_nothing():
    plan = plan_memory(_specs(), "naive", ONE_MEMORY)
    assert [plan.offsets[n][1] for n in "ABCDN"] == [0, 34, 66, 88, 109]
    assert plan.pool_sizes == {"mem1": 34 + 32 + 22 + 21 + 20}


def test_find_peak_memory_usage():
    # lifetime is [start, end], both ends inclusive: at step 1, A, B, C and D are alive.
    assert peak(_specs()) == (34 + 32 + 22 + 21, 1)
    # No plan can use less than the peak; both greedy plans above reach it.
    assert lower_bound(_specs(), ONE_MEMORY) == 109


def _hierarchy():
    # mem_id 1 is a small fast memory, mem_id 2 a large slow one.
    return [Pool("fast", 64, alignment=1), Pool("slow", 1000, alignment=1)]


def _hierarchy_specs():
    return [
        Buffer("A", 50, 0, 1),
        Buffer("B", 40, 1, 2),
        Buffer("C", 30, 2, 3),
        Buffer("D", 14, 0, 2),
        Buffer("E", 20, 1, 1),
    ]


@pytest.mark.parametrize("algorithm", [POSITION, GREEDY])
def test_memory_hierarchy_fastest_memory_first(algorithm):
    # A -> fast 0. B overlaps A: the next place in fast is 50, 50 + 40 > 64, so slow 0.
    # C does not overlap A: fast 0. D overlaps A (and C at step 2): fast 50, 50 + 14 = 64
    # fits exactly. E overlaps A and D in fast (up to 64): no room, so slow, above B: 40.
    plan = plan_memory(_hierarchy_specs(), algorithm, _hierarchy())
    assert plan.offsets == {
        "A": ("fast", 0),
        "B": ("slow", 0),
        "C": ("fast", 0),
        "D": ("fast", 50),
        "E": ("slow", 40),
    }
    # find_peak_memory_usages_per_memory: [64, 60]
    assert plan.pool_sizes == {"fast": 64, "slow": 60}
    verify_plan(_hierarchy_specs(), _hierarchy(), plan)


@pytest.mark.parametrize("algorithm", [POSITION, GREEDY])
def test_memory_blocklist(algorithm):
    # mem_constraints.is_mem_id_in_blocklist(spec, 1): A may not use the fast memory, so
    # it goes to slow, and B now fits in fast.
    specs = _hierarchy_specs()
    specs[0] = Buffer("A", 50, 0, 1, forbidden_pools=("fast",))
    plan = plan_memory(specs, algorithm, _hierarchy())
    assert plan.offsets["A"] == ("slow", 0)
    assert plan.offsets["B"] == ("fast", 0)
    verify_plan(specs, _hierarchy(), plan)


@pytest.mark.parametrize("algorithm", [POSITION, GREEDY])
def test_cannot_fit_in_any_memory_hierarchy(algorithm):
    pools = [Pool("fast", 16, alignment=1), Pool("slow", 32, alignment=1)]
    specs = [Buffer("small", 8, 0, 1), Buffer("huge", 40, 0, 1)]
    with pytest.raises(PlanError, match="buffer 'huge' \\(40 bytes, steps 0..1\\) fits in no pool"):
        plan_memory(specs, algorithm, pools)


@pytest.mark.parametrize("algorithm", [POSITION, GREEDY])
def test_alignment(algorithm):
    # get_aligned_offset: with 16-byte alignment B goes above A at ceil(50 / 16) * 16 = 64;
    # C (step 2) does not overlap A and takes 0.
    pools = [Pool("mem1", None, alignment=16)]
    specs = [Buffer("A", 50, 0, 1), Buffer("B", 40, 1, 2), Buffer("C", 30, 2, 2)]
    plan = plan_memory(specs, algorithm, pools)
    assert {k: off for k, (_, off) in plan.offsets.items()} == {"A": 0, "B": 64, "C": 0}
    # The seed's bufsizes would be 64 + 40 = 104; here B's 40 bytes occupy 48 (footprint).
    assert plan.pool_sizes == {"mem1": 64 + 48}
    verify_plan(specs, pools, plan)


def test_verifier_rejects_lifetime_and_storage_overlap():
    # Verifier.lifetime_overlap and Verifier.storage_overlap: B on top of A while both live.
    bad = Plan("hand-made", {n: ("mem1", 0) for n in "ABCDN"}, {"mem1": 34})
    with pytest.raises(PlanError, match="buffers 'A' .* and 'B' .* overlap in pool 'mem1'"):
        verify_plan(_specs(), ONE_MEMORY, bad)


def test_print_memory_planning_info():
    # The seed's example memory spaces, with their base addresses.
    pools = [
        Pool("MEMORY SPACE A", 65213, alignment=1, base_address=0x57BE0000),
        Pool("MEMORY SPACE B", 65521, alignment=1, base_address=0x57BF0000),
    ]
    specs = _specs() + [Buffer("big", 65213, 3, 3)]
    plan = plan_memory(specs, POSITION, pools)
    # "big" fills MEMORY SPACE A alone; the others then go wherever they fit.
    assert plan.offsets["big"] == ("MEMORY SPACE A", 0)
    report = format_report(specs, pools, plan)
    print(report)
    lines = report.splitlines()
    header = next(line for line in lines if "Memory Space" in line)
    assert [c.strip() for c in header.strip("|").split("|")][:3] == [
        "Memory Space",
        "Base Address",
        "Memory Size (Bytes)",
    ]
    row_a = next(line for line in lines if line.startswith("| MEMORY SPACE A"))
    row_b = next(line for line in lines if line.startswith("| MEMORY SPACE B"))
    cells_a = [c.strip() for c in row_a.strip("|").split("|")]
    cells_b = [c.strip() for c in row_b.strip("|").split("|")]
    assert cells_a[:4] == [
        "MEMORY SPACE A",
        "0x57be0000",
        "65213",
        str(plan.pool_sizes["MEMORY SPACE A"]),
    ]
    assert cells_b[:4] == [
        "MEMORY SPACE B",
        "0x57bf0000",
        "65521",
        str(plan.pool_sizes["MEMORY SPACE B"]),
    ]
    assert plan.pool_sizes["MEMORY SPACE A"] == 65213
    # "Peak memory usage across all spaces | <bytes> bytes | Node <n>", as schedule steps.
    peak_row = next(line for line in lines if "Peak memory usage across all spaces" in line)
    assert [c.strip() for c in peak_row.strip("|").split("|")] == [
        "Peak memory usage across all spaces",
        "65213 bytes",
        "Step 3",
    ]
    assert peak(specs) == (65213, 3)
