"""verify_plan on hand-made plans: one valid, then one invalid plan per rule."""

import pytest

from xrelay.transforms.planners import Buffer, Plan, PlanError, Pool, verify_plan

POOLS = [Pool("sram", 256, 16), Pool("dram", None, 64)]
BUFFERS = [
    Buffer("a", 100, 0, 3),
    Buffer("b", 50, 2, 5, pools=("sram",)),
    Buffer("c", 100, 4, 6, forbidden_pools=("dram",)),
    Buffer("d", 30, 0, 9),
    Buffer("e", 0, 0, 9),
]


def valid_plan() -> Plan:
    return Plan(
        "hand",
        {
            "a": ("sram", 0),
            "b": ("sram", 112),
            "c": ("sram", 0),  # reuses a's bytes: a is dead at step 4
            "d": ("dram", 0),
            "e": ("sram", 3),  # size 0: any offset, no conflicts
        },
        {"sram": 162, "dram": 30},
    )


def with_offsets(**changes) -> Plan:
    plan = valid_plan()
    plan.offsets.update(changes)
    return plan


def test_valid_plan_passes():
    verify_plan(BUFFERS, POOLS, valid_plan())


def test_overlap_names_both_buffers():
    plan = with_offsets(b=("sram", 96))  # b [96, 146) overlaps a [0, 100) at steps 2..3
    with pytest.raises(PlanError) as err:
        verify_plan(BUFFERS, POOLS, plan)
    text = str(err.value)
    assert "'a' (steps 0..3, bytes [0, 100))" in text
    assert "'b' (steps 2..5, bytes [96, 146))" in text
    assert "pool 'sram'" in text


def test_same_bytes_different_pools_or_times_are_fine():
    plan = with_offsets(d=("dram", 0))
    verify_plan(BUFFERS, POOLS, plan)
    # Lifetimes touching at one step do overlap (inclusive ends): c starts at 4, b ends at 5.
    plan = with_offsets(c=("sram", 112))
    plan.pool_sizes["sram"] = 212
    with pytest.raises(PlanError, match="'b'.*'c'|'c'.*'b'"):
        verify_plan(BUFFERS, POOLS, plan)


def test_misaligned_offset():
    with pytest.raises(PlanError, match="'d' at offset 32 in pool 'dram' is not aligned to 64"):
        verify_plan(BUFFERS, POOLS, with_offsets(d=("dram", 32)))


def test_buffer_alignment_beats_pool_alignment():
    buffers = [Buffer("x", 8, 0, 0, alignment=128)]
    plan = Plan("hand", {"x": ("dram", 64)}, {"sram": 0, "dram": 72})
    with pytest.raises(PlanError, match="not aligned to 128 bytes"):
        verify_plan(buffers, POOLS, plan)


def test_beyond_pool_size():
    plan = with_offsets(b=("sram", 224))
    plan.pool_sizes["sram"] = 274
    with pytest.raises(PlanError, match=r"'b' \[224, 274\) exceeds pool 'sram' of 256 bytes"):
        verify_plan(BUFFERS, POOLS, plan)


def test_beyond_reported_pool_size():
    plan = valid_plan()
    plan.pool_sizes["sram"] = 150
    with pytest.raises(PlanError, match="exceeds the 150 bytes the plan reports for pool 'sram'"):
        verify_plan(BUFFERS, POOLS, plan)


def test_missing_buffer():
    plan = valid_plan()
    del plan.offsets["c"]
    with pytest.raises(PlanError, match="buffer 'c' is missing from the plan"):
        verify_plan(BUFFERS, POOLS, plan)


def test_unknown_buffer_and_pool():
    plan = with_offsets(zz=("sram", 0))
    with pytest.raises(PlanError, match="unknown buffer 'zz'"):
        verify_plan(BUFFERS, POOLS, plan)
    with pytest.raises(PlanError, match="'d' is placed in unknown pool 'l3'"):
        verify_plan(BUFFERS, POOLS, with_offsets(d=("l3", 0)))


def test_pinned_pool_violated():
    plan = with_offsets(b=("dram", 64))
    plan.pool_sizes["dram"] = 114
    with pytest.raises(PlanError, match="'b' is placed in pool 'dram' but is pinned to 'sram'"):
        verify_plan(BUFFERS, POOLS, plan)


def test_forbidden_pool_violated():
    plan = with_offsets(c=("dram", 64))
    plan.pool_sizes["dram"] = 164
    with pytest.raises(PlanError, match="'c' is placed in forbidden pool 'dram'"):
        verify_plan(BUFFERS, POOLS, plan)


def test_negative_offset():
    with pytest.raises(PlanError, match="'d' has a negative offset -64"):
        verify_plan(BUFFERS, POOLS, with_offsets(d=("dram", -64)))
