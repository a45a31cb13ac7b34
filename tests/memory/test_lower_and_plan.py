"""Lowering and planning keep the program's meaning: the memory interpreter, running each
planned program on ONE arena per pool (poisoned on kill and before workspaces), gives exactly
the reference interpreter's results on the relay program, for every planning algorithm."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr

from xrelay.dialects import make_context
from xrelay.dialects.memory import AllocStorageOp, InvokeOp, PoolOp
from xrelay.runtime.interpreter import random_inputs, run
from xrelay.runtime.liveness import buffer_lifetimes, memory_report, storage_buffers
from xrelay.runtime.memory_interpreter import is_planned, run_memory
from xrelay.testing.random_graphs import random_dag
from xrelay.transforms.lower_to_memory import LowerToMemoryPass
from xrelay.transforms.plan_memory import PlanMemoryError, PlanMemoryPass
from xrelay.transforms.planners import ALGORITHMS, lower_bound
from xrelay.transforms.verify_memory_plan import (
    VerifyMemoryPlanError,
    VerifyMemoryPlanPass,
    verify_memory_plan,
)

CTX = make_context()


def lowered(m: ModuleOp, **options) -> ModuleOp:
    m = m.clone()
    LowerToMemoryPass(**options).apply(CTX, m)
    m.verify()
    return m


def planned(m: ModuleOp, algorithm: str = "greedy-by-size", **options) -> ModuleOp:
    m = m.clone()
    PlanMemoryPass(algorithm=algorithm, time_limit=2.0, **options).apply(CTX, m)
    m.verify()
    verify_memory_plan(m)  # the checker as an oracle (its own tests run it as a pass)
    return m


def shared_pairs(m: ModuleOp) -> int:
    """How many pairs of storages share at least one byte (at different times)."""
    placed = [(op.placement, op.nbytes) for op, _ in storage_buffers(m)]
    count = 0
    for i, ((pa, oa), sa) in enumerate(placed):
        for (pb, ob), sb in placed[i + 1 :]:
            if pa == pb and oa < ob + sb and ob < oa + sa:
                count += 1
    return count


def assert_same(ref: list[np.ndarray], out: list[np.ndarray]) -> None:
    assert len(ref) == len(out)
    for r, o in zip(ref, out):
        assert r.dtype == o.dtype and r.shape == o.shape
        np.testing.assert_array_equal(r, o)


@pytest.mark.parametrize("name", ["resnet18", "mobilenet", "mlp"])
def test_models_all_algorithms(workloads, fused, name):
    relay_mod = workloads[name]
    inputs = random_inputs(relay_mod)
    ref = run(relay_mod, inputs)
    low = lowered(fused(relay_mod))
    assert_same(ref, run_memory(low, inputs))  # unplanned: each buffer its own array
    bound = lower_bound(buffer_lifetimes(low))
    sizes = {}
    for algorithm in ALGORITHMS:
        if algorithm in ("optimal", "hill-climb") and name != "mlp":
            continue  # searched plans are covered on the small models below
        p = planned(low, algorithm)
        assert is_planned(p)
        assert_same(ref, run_memory(p, inputs))
        (pool,) = [op for op in p.ops if isinstance(op, PoolOp)]
        sizes[algorithm] = pool.size.value.data
        assert sizes[algorithm] >= bound
    # Reuse is real: buffers share bytes, and the greedy plan reaches the lower bound.
    assert shared_pairs(planned(low)) > 0
    assert sizes["greedy-by-size"] == bound
    assert sizes["naive"] > bound


@pytest.mark.parametrize("seed", range(6))
def test_random_dags_fused_and_unfused(fused, seed):
    m = random_dag(seed, num_ops=25)
    inputs = random_inputs(m)
    ref = run(m, inputs)
    for source in (m, fused(m)):
        for options in ({}, {"inputs_in_arena": False, "outputs_in_arena": False}):
            low = lowered(source, **options)
            # the run below is of the lowered program: it has a step per op (or fused function)
            assert any(isinstance(op, InvokeOp) for op in low.walk())
            for algorithm in ("greedy-by-size", "greedy-by-conflicts", "storage-ids", "optimal"):
                p = planned(low, algorithm)
                assert_same(ref, run_memory(p, inputs))


def test_unfused_model_one_step_per_op(workloads):
    relay_mod = workloads["mlp"]
    n_ops = sum(
        1 for op in relay_mod.walk() if op.name.startswith("relay.") and op.name != "relay.constant"
    )
    low = lowered(relay_mod)
    invokes = [op for op in low.walk() if isinstance(op, InvokeOp)]
    aliases = [op for op in low.walk() if op.name == "memory.alias"]
    assert len(invokes) + len(aliases) == n_ops
    inputs = random_inputs(relay_mod)
    assert_same(run(relay_mod, inputs), run_memory(planned(low), inputs))


def test_overlapping_plan_is_caught(workloads, fused):
    """Moving one live buffer onto another is rejected by the verifier and changes results."""
    relay_mod = workloads["mlp"]
    inputs = random_inputs(relay_mod)
    p = planned(lowered(fused(relay_mod)))
    pairs = storage_buffers(p)
    victim = None
    for (a_op, a), (b_op, b) in zip(pairs, pairs[1:]):
        if a.conflicts(b) and a.kind == "intermediate" and b.kind != "input":
            victim = (a_op, b_op)
            break
    assert victim is not None
    a_op, b_op = victim
    b_op.set_placement(*a_op.placement)
    with pytest.raises(Exception, match="live at the same time and overlap"):
        VerifyMemoryPlanPass().apply(CTX, p)  # through the pass, as relay-opt runs it
    out = run_memory(p, inputs)
    assert not all(np.array_equal(r, o) for r, o in zip(run(relay_mod, inputs), out))


@pytest.mark.parametrize("fault", ["misaligned", "outside the pool", "wrong lifetime"])
def test_verifier_rejects_each_kind_of_bad_plan(workloads, fused, fault):
    """Each rule of verify-memory-plan, broken on one storage of a valid plan, is reported."""
    p = planned(lowered(fused(workloads["mlp"])))
    arena = [(op, b) for op, b in storage_buffers(p) if op.placement is not None]
    op, b = arena[-1]
    pool, offset = op.placement
    if fault == "misaligned":
        op.set_placement(pool, offset + 1)
        match = "align"
    elif fault == "outside the pool":
        op.set_placement(pool, 1 << 40)
        match = "pool"
    else:
        op.set_lifetime(b.start, b.end + 5)
        match = "says lifetime"
    with pytest.raises(VerifyMemoryPlanError, match=match):
        VerifyMemoryPlanPass().apply(CTX, p)


def test_no_fit_leaves_module_unchanged(workloads, fused):
    low = lowered(fused(workloads["mlp"]))
    before = str(low)
    with pytest.raises(PlanMemoryError, match="fits in no pool"):
        PlanMemoryPass(pools=("tiny:64:16",)).apply(CTX, low)
    assert str(low) == before


def test_pools_and_pins(workloads, fused):
    low = lowered(fused(workloads["mlp"]))
    # Pin the outputs to dram; the rest goes to a bounded sram first.
    for op in low.walk():
        if isinstance(op, AllocStorageOp) and op.storage_kind == "output":
            op.pools = ArrayAttr([StringAttr("dram")])
    p = planned(low, "greedy-hierarchy", pools=("sram:4096:16", "dram:0:64"))
    outputs = [op for op in p.walk() if isinstance(op, AllocStorageOp) and op.storage_kind == "output"]
    assert outputs and all(op.placement[0] == "dram" for op in outputs)
    sizes = {op.pool_name: op.size.value.data for op in p.ops if isinstance(op, PoolOp)}
    assert sizes["sram"] <= 4096
    inputs = random_inputs(workloads["mlp"])
    assert_same(run(workloads["mlp"], inputs), run_memory(p, inputs))


def test_report(workloads, fused):
    p = planned(lowered(fused(workloads["resnet18"])))
    text = memory_report(p)
    bound = lower_bound(buffer_lifetimes(p))
    assert "global" in text and f"{bound} bytes" in text and "ratio to lower bound 1.0000" in text
