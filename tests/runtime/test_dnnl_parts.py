"""The one-thread program's convolutions and dense steps cut in parts of their output rows
(``dnnl.parts``): which steps are cut, each part's input rows and padding, the caller's
larger part of a long step, the part worker kept off the caller's CPU, and that the parts,
run by the caller and the shim's sleeping part workers, compute what the uncut one-thread
program computes, with the same bits from run to run whichever thread took which part."""

from __future__ import annotations

import contextlib
import threading
import time

import numpy as np
import pytest

import xrelay
from xrelay.frontends.onnx import from_onnx
from xrelay.runtime.dnnl import primitives
from xrelay.runtime.dnnl.library import dnnl_library
from xrelay.runtime.dnnl.parts import (
    LONG_SHARE,
    LONG_WORK,
    MAX_PARTS,
    PART_WORK,
    conv_rows,
    parts_for,
    rescue_ns,
    row_cuts,
    spin_ns,
)
from xrelay.runtime.parallel import PartsChoice, serial_jobs
from xrelay.testing import platform
from xrelay.testing.onnx_models import GraphBuilder, run_onnxruntime

RNG = np.random.default_rng(28)



def _assert_dense_parts_match(got, expected):
    """A dense step cut in rows against the whole step: the same bits where oneDNN's float32
    products are brgemm (AVX-512); on AVX2 its jit GEMM orders a product's sums by the rows of
    the call, so there within float32 rounding (``xrelay.testing.platform``)."""
    if platform.avx512():
        assert np.array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6 * float(np.max(np.abs(expected))))

def _model():
    """A stride-2 stem, a depthwise 3x3 with a hard-swish, a 1x1 with a residual, a
    dilated 3x3 and a 5x5 with asymmetric output rows (odd height), and a tiny 1x1 at the
    end that stays whole (under ``PART_WORK``)."""
    g = GraphBuilder(28)
    y = g.node("Relu", [g.conv("data", 8, 24, 3, stride=2, bias=True)])  # 29 x 29
    y = g.node("HardSwish", [g.conv(y, 24, 24, 3, group=24, bias=True)])
    y = g.node("Add", [g.conv(y, 24, 24, 1, bias=True), y])
    w = g.init(
        "dilated_w",
        (np.random.default_rng(5).standard_normal((16, 24, 3, 3)) * 0.1).astype(np.float32),
    )
    y = g.node(
        "Relu", [g.node("Conv", [y, w], kernel_shape=[3, 3], pads=[2, 2, 2, 2], dilations=[2, 2])]
    )
    y = g.node("Relu", [g.conv(y, 16, 16, 5, stride=2, bias=True)])  # 15 x 15
    y = g.node("GlobalAveragePool", [y])
    y = g.conv(y, 16, 4, 1, bias=True)
    return g.model({"data": ([1, 8, 57, 57], np.float32)}, [y], "parts")


def _dense_model():
    """Rows through three Linear layers (``[400, 64]`` data): 10M, 64M (at least
    ``LONG_WORK``: the caller's part the larger) and 10M multiply-adds, the last with a
    residual; a fourth of 205K multiply-adds stays whole."""
    g = GraphBuilder(29)
    y = g.relu(g.gemm("data", 64, 400))
    y = g.relu(g.gemm(y, 400, 400))
    y = g.node("Add", [g.gemm(y, 400, 64), "data"])
    y = g.gemm(y, 64, 8)
    return g.model({"data": ([400, 64], np.float32)}, [y], "dense_parts")


def _program(ex, one: bool):
    def run() -> None:
        with serial_jobs() if one else contextlib.nullcontext():
            for t in ex._thunks_one if one else ex._thunks:
                t()
        ex.pool.park()

    return run


def _uncut_output(whole, model, x):
    """The one-thread program's output without parts (``whole``: built with
    ``XRELAY_DNNL_PARTS=0``) for ``x``: finite, not all zero, within 1e-4 of onnxruntime."""
    whole.set_input(data=x)
    _program(whole.executor, True)()
    expected = whole.get_output(0).numpy().copy()
    assert np.isfinite(expected).all() and np.abs(expected).max() > 0
    ref = run_onnxruntime(model, {"data": x})[0]
    np.testing.assert_allclose(expected, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
    return expected


def _build(monkeypatch, parts: str):
    monkeypatch.setenv("XRELAY_DNNL_PARTS", parts)
    mod, params = from_onnx(_model())
    m = xrelay.build(mod, params, opt_level=3, threads=2)
    return m


def test_conv_rows_cover_every_output_row_with_its_own_padding():
    # 3x3 'same', stride 1: the first part pads at the top, the last at the bottom
    assert conv_rows(0, 10, 20, 3, 1, 1, 1) == (0, 11, 1, 0)
    assert conv_rows(10, 20, 20, 3, 1, 1, 1) == (9, 20, 0, 1)
    # stride 2, no padding: rows 3-4 read input rows 6-10
    assert conv_rows(3, 5, 11, 3, 2, 1, 0) == (6, 11, 0, 0)
    # dilation 2 (Relay's: one gap), padding 2
    assert conv_rows(0, 1, 8, 3, 1, 2, 2) == (0, 3, 2, 0)
    # a part inside the padding reads no input row
    assert conv_rows(0, 1, 4, 1, 1, 1, 3) is None
    # every output row of a stride-2 5x5 exactly once, each part's rows its output height
    for r0, r1 in row_cuts(15, 4):
        i0, i1, top, bottom = conv_rows(r0, r1, 29, 5, 2, 1, 1)
        assert (i1 - i0 + top + bottom - 5) // 2 + 1 == r1 - r0
    assert [r for c in row_cuts(15, 4) for r in range(*c)] == list(range(15))
    assert parts_for(2 * PART_WORK - 1, 100) < 2 and parts_for(2 * PART_WORK, 100) == 2
    assert parts_for(100 * PART_WORK, 1) < 2 and parts_for(100 * PART_WORK, 100) == MAX_PARTS


def test_long_steps_give_the_caller_the_larger_part():
    assert row_cuts(300, 2, LONG_WORK) == [(0, round(300 * LONG_SHARE)), (round(300 * LONG_SHARE), 300)]
    assert row_cuts(300, 2, LONG_WORK - 1) == [(0, 150), (150, 300)]
    assert row_cuts(3, 2, LONG_WORK) == [(0, 2), (2, 3)]  # (never an empty part)
    assert row_cuts(2, 2, LONG_WORK) == [(0, 1), (1, 2)]
    for rows in range(2, 40):
        cuts = row_cuts(rows, 2, LONG_WORK)
        assert [r for c in cuts for r in range(*c)] == list(range(rows))
        assert all(r1 > r0 for r0, r1 in cuts)


@pytest.mark.parametrize("scratch", [0, 4096, 8192, 12288, 40960])
@pytest.mark.parametrize("part", [0, 4096, 6000, 16384])
@pytest.mark.parametrize("slots", [2, 3])
def test_slot_scratchpads_are_disjoint_and_clear_of_the_temporaries(scratch, part, slots):
    """Each slot's scratchpad in the plan's own scratchpad while they fit there, the others
    after the temporaries: no two slots share a byte, none touches the temporaries, and no
    workspace is added where the plan's scratchpad holds them all."""
    align = primitives._round(1)
    temps = 3 * align
    plan = primitives.FunctionPlan("f", [], scratch_bytes=scratch, temp_bytes=temps)
    md = type("Md", (), {"size": part})()
    bases = plan._slot_bases([(0, {}, md if part else None)], slots)
    assert len(bases) == slots
    size = primitives._round(part)
    if size == 0:
        return
    spans = sorted((b, b + size) for b in bases)
    assert all(end <= start for (_, end), (start, _) in zip(spans, spans[1:]))  # disjoint
    temp_span = (primitives._round(scratch), primitives._round(scratch) + temps)
    assert all(end <= temp_span[0] or start >= temp_span[1] for start, end in spans)
    fits = primitives._round(scratch) // size
    assert sum(end <= primitives._round(scratch) for _, end in spans) == min(slots, fits)
    if fits >= slots:
        assert max(end for _, end in spans) <= plan.workspace_bytes


def test_big_convolutions_are_cut_and_small_ones_not(monkeypatch):
    """Exactly the convolutions with at least two parts' work (``parts_for``) are cut: the
    stem, the dilated 3x3 and the 5x5 here; the depthwise 3x3, the 1x1 with the residual
    and the head's 1x1 stay whole."""
    m = _build(monkeypatch, "1")
    dnnl = [c for (_, _, c), b in zip(m.executor.steps, m.executor.step_backends) if b == "dnnl"]

    def wanted(c) -> bool:
        for s in c.dnnl_plan.steps:
            dims = s.logical.get(17, ([0, 0, 0, 0], []))[0]  # (the destination's)
            work = max(s.macs, sum(int(np.prod(d)) for d, _ in s.logical.values()))
            if s.cut is not None and parts_for(work, dims[2]) >= 2:
                return True
        return False

    cut = [c for c in dnnl if getattr(c, "thunk_parts", None) is not None]
    assert len(cut) == 3 and cut == [c for c in dnnl if wanted(c)]
    off = _build(monkeypatch, "0")
    assert all(getattr(c, "thunk_parts", None) is None for _, _, c in off.executor.steps)


def test_parts_compute_what_the_whole_steps_compute(monkeypatch):
    """The program with parts against the one without (both made for one thread): the same
    bits (each part runs the uncut step's kernel over its rows), whichever way the shim runs
    them (``xr_dnnl_parts_mode``: parts, or the uncut steps), and within 1e-4 of
    onnxruntime; 30 runs each way, the same bits each time, and the workers ran parts in
    parts mode only (a worker that never takes one would leave the caller every part)."""
    x = RNG.standard_normal((1, 8, 57, 57)).astype("float32")
    expected = _uncut_output(_build(monkeypatch, "0"), _model(), x)
    m = _build(monkeypatch, "1")
    run = _program(m.executor, True)
    lib = dnnl_library()
    # a worker that sleeps at once: woken at every step, it runs soon even on a loaded
    # machine (one that spins lowers its standing with the scheduler)
    lib.xr_dnnl_parts_spin(0)
    try:
        for mode in (1, 0, 1):  # in parts, uncut, in parts again
            lib.xr_dnnl_parts_mode(mode)
            taken = lib.xr_dnnl_parts_taken()
            for _ in range(30):
                m.executor.input_buffers[0][...] = 0.0  # (a stale output cannot pass)
                _program(m.executor, False)()
                m.set_input(data=x)
                run()
                assert np.array_equal(m.get_output(0).numpy(), expected), mode
            assert (lib.xr_dnnl_parts_taken() > taken) == (mode == 1)
    finally:
        lib.xr_dnnl_parts_mode(1)
        lib.xr_dnnl_parts_spin(spin_ns())
    assert lib.xr_dnnl_part_workers() >= 1
    # another input gives another output (the parts read their input)
    m.set_input(data=x[:, :, ::-1].copy())
    run()
    assert not np.allclose(m.get_output(0).numpy(), expected)


def _dense_build(monkeypatch, parts: str, packed: bool = False, model=None):
    monkeypatch.setenv("XRELAY_DNNL_PARTS", parts)
    # oneDNN's matmul (AVX-512 CPUs run dense steps on it), or the shim's packed kernel that
    # runs them where oneDNN has only its jit GEMM (forced here: ``_dense_on_packed``)
    monkeypatch.setenv("XRELAY_DNNL_PACKED_DENSE", "1" if packed else "0")
    if packed:
        monkeypatch.setattr(primitives, "_dense_on_packed", lambda impl: True)
    mod, params = from_onnx(model or _dense_model())
    return xrelay.build(mod, params, opt_level=3, threads=2)


def test_dense_steps_are_cut_in_rows_with_the_whole_steps_bits(monkeypatch):
    """Dense steps with two parts' work are cut in parts of their rows (the long one
    unevenly), each part over its rows of the data, the output and the residual; the parts
    give the uncut program's bits in every run, and another input another output."""
    m = _dense_build(monkeypatch, "1")
    plans = [c.dnnl_plan for _, _, c in m.executor.steps if getattr(c, "dnnl_plan", None) is not None]
    dense = [s for p in plans for s in p.steps if s.cut is not None and s.cut["kind"] == "dense"]
    assert sorted(s.macs for s in dense) == [400 * 64 * 8, 400 * 64 * 400, 400 * 400 * 64, 400 * 400 * 400]
    cut = [c for _, _, c in m.executor.steps if getattr(c, "thunk_parts", None) is not None]
    assert sum(c.thunk_parts.parts for c in cut) == 3  # (not the 205K one)
    x = RNG.standard_normal((400, 64)).astype("float32")
    expected = _uncut_output(_dense_build(monkeypatch, "0"), _dense_model(), x)
    _runs_in_parts_match(m, x, expected, _assert_dense_parts_match)


def test_packed_parts_of_one_tile_sum_in_the_whole_steps_blocks(monkeypatch):
    """A dense step of two tiles (12 rows, 600 inputs, 3.7M multiply-adds) is cut in two
    parts of one tile each: each part's kernel takes the step's blocks of 256 products (a
    kernel of one tile alone takes all 600 as one block), so the parts give the uncut
    step's bits."""
    lib = dnnl_library()
    if not lib.xr_dnnl_gemm_built():
        return
    g = GraphBuilder(31)
    model = g.model({"data": ([12, 600], np.float32)}, [g.relu(g.gemm("data", 600, 512))], "dense_two_tiles")
    m = _dense_build(monkeypatch, "1", packed=True, model=model)
    cut = [c for _, _, c in m.executor.steps if getattr(c, "thunk_parts", None) is not None]
    assert [c.thunk_parts.parts for c in cut] == [1]  # (one step cut)
    (step,) = [s for c in cut for s in c.dnnl_plan.steps if s.cut is not None]
    assert step.impl == "packed_gemm:avx2" and lib.xr_dnnl_gemm_block(step.pd) == 256
    x = RNG.standard_normal((12, 600)).astype("float32")
    expected = _uncut_output(_dense_build(monkeypatch, "0", packed=True, model=model), model, x)
    _runs_in_parts_match(m, x, expected, lambda got, want: np.testing.assert_array_equal(got, want))


def _runs_in_parts_match(m, x, expected, match):
    """Twenty one-thread runs of ``m`` in parts (each after an all-thread run of zeros) give
    ``expected`` for ``x`` (``match``), the part workers take parts, and another input
    gives another output."""
    lib = dnnl_library()
    lib.xr_dnnl_parts_spin(0)
    try:
        taken = lib.xr_dnnl_parts_taken()
        run = _program(m.executor, True)
        for _ in range(20):
            m.executor.input_buffers[0][...] = 0.0
            _program(m.executor, False)()
            m.set_input(data=x)
            run()
            match(m.get_output(0).numpy(), expected)
        assert lib.xr_dnnl_parts_taken() > taken
    finally:
        lib.xr_dnnl_parts_spin(spin_ns())
    m.set_input(data=x[::-1].copy())
    run()
    assert not np.allclose(m.get_output(0).numpy(), expected)


def test_the_part_worker_keeps_off_the_callers_cpu(monkeypatch):
    """The caller held on one CPU, then on another: after steps in parts the worker may use
    every CPU of the process but the caller's (woken on the caller's CPU it would share
    that core with the caller). With one CPU it keeps that CPU."""
    import os

    allowed = os.sched_getaffinity(0)
    m = _dense_build(monkeypatch, "1")  # (steps long enough for a woken worker to take part)
    m.set_input(data=RNG.standard_normal((400, 64)).astype("float32"))
    run = _program(m.executor, True)
    lib = dnnl_library()
    lib.xr_dnnl_parts_spin(0)  # (woken, and so placed, at every step)
    lib.xr_dnnl_parts_rescue(0)  # (a rescued worker is on the caller's CPU until its next part)
    me = threading.get_native_id()

    def others() -> list[set[int]]:
        out = []
        for tid in os.listdir("/proc/self/task"):
            if int(tid) != me:
                with contextlib.suppress(OSError):
                    out.append(os.sched_getaffinity(int(tid)))
        return out

    run()  # (the worker starts here: a thread started while the caller is held inherits that)
    try:
        for cpu in sorted(allowed)[:2]:
            os.sched_setaffinity(0, {cpu})
            taken = lib.xr_dnnl_parts_taken()
            for _ in range(20):
                run()
            assert lib.xr_dnnl_parts_taken() > taken, (cpu, others())
            if len(allowed) > 1:
                assert allowed - {cpu} in others(), cpu
            else:
                assert all(a == allowed for a in others())
    finally:
        os.sched_setaffinity(0, allowed)
        lib.xr_dnnl_parts_spin(spin_ns())
        lib.xr_dnnl_parts_rescue(rescue_ns())


def test_a_waiting_caller_moves_a_held_up_worker_to_its_own_cpu(monkeypatch):
    """A worker held up inside each part it takes (``xr_dnnl_parts_hold``, as one preempted
    on a busy core is): the caller, its own parts done, moves it to the caller's CPU and
    sleeps until the parts are done (``xr_dnnl_parts_rescued`` counts those steps); every
    run keeps the uncut program's bits, and after the runs the worker keeps off the caller's
    CPU again."""
    import os

    allowed = os.sched_getaffinity(0)
    x = RNG.standard_normal((400, 64)).astype("float32")
    whole = _dense_build(monkeypatch, "0")
    whole.set_input(data=x)
    _program(whole.executor, True)()
    expected = whole.get_output(0).numpy().copy()
    m = _dense_build(monkeypatch, "1")
    m.set_input(data=x)
    run = _program(m.executor, True)
    run()  # (the worker starts with the process's CPUs)
    lib = dnnl_library()
    cpu = min(allowed)
    lib.xr_dnnl_parts_spin(0)
    os.sched_setaffinity(0, {cpu})
    try:
        rescued, taken = lib.xr_dnnl_parts_rescued(), lib.xr_dnnl_parts_taken()
        lib.xr_dnnl_parts_hold(3_000_000)
        for _ in range(10):
            run()
            _assert_dense_parts_match(m.get_output(0).numpy(), expected)
        assert lib.xr_dnnl_parts_taken() > taken
        assert lib.xr_dnnl_parts_rescued() > rescued
        lib.xr_dnnl_parts_hold(0)
        for _ in range(5):
            run()
        _assert_dense_parts_match(m.get_output(0).numpy(), expected)
        workers = [
            int(t) for t in os.listdir("/proc/self/task")
            if open(f"/proc/self/task/{t}/comm").read().strip() == "xrelay-parts"
        ]  # fmt: skip
        # a worker re-pins when it wakes for a step; moved to the caller's CPU, it may not
        # have run yet beside a caller that never waited, and a caller that moved it just as
        # it finished its part (it then sleeps moved, with no step posted after the last
        # run) leaves it there until the next step: the caller posts steps and sleeps
        # (bounded) so it can
        off_caller = allowed - {cpu} or allowed
        for _ in range(200):
            if all(os.sched_getaffinity(t) == off_caller for t in workers):
                break
            run()
            time.sleep(0.01)
        assert workers and all(os.sched_getaffinity(t) == off_caller for t in workers)
    finally:
        lib.xr_dnnl_parts_hold(0)
        os.sched_setaffinity(0, allowed)
        lib.xr_dnnl_parts_spin(spin_ns())


@pytest.mark.parametrize("threads", [3])
def test_parts_with_more_slots_than_cores(monkeypatch, threads):
    """Three threads: two workers, three scratchpad slots, still the uncut program's values."""
    monkeypatch.setenv("XRELAY_DNNL_PARTS", "1")
    x = RNG.standard_normal((1, 8, 57, 57)).astype("float32")
    mod, params = from_onnx(_model())
    m = xrelay.build(mod, params, opt_level=3, threads=threads)
    m.set_input(data=x)
    assert any(getattr(c, "thunk_parts", None) is not None for _, _, c in m.executor.steps)
    _program(m.executor, True)()
    got = m.get_output(0).numpy().copy()
    ref = run_onnxruntime(_model(), {"data": x})[0]
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
    assert dnnl_library().xr_dnnl_part_workers() >= threads - 1


def test_parts_choice_runs_the_faster_way_and_measures_the_other_again():
    choice = PartsChoice()
    times = {1: 2.0, 0: 1.0}  # parts slower (a busy core), then faster (the load left)
    ways = []
    for run in range(40):
        if run == 20:
            times = {1: 0.5, 0: 1.0}
        way = choice.choose()
        ways.append(way)
        choice.record(way, times[way])
    assert ways[:4] == [0, 0, 1, 1]  # each way's warm-up run and one measured, uncut first
    assert ways[4:20].count(0) >= 13 and 1 in ways[4:20]  # the faster, the other re-measured
    assert ways[-8:].count(1) >= 7  # after the change, within the next re-measurement
    assert choice.stats == [ways.count(0), ways.count(1)]


def test_executor_one_thread_runs_alternate_ways_with_the_same_bits(monkeypatch):
    """The executor's one-thread runs (the run chooser forced to one thread) take each way
    by ``PartsChoice``; every run gives the same bits."""
    m = _build(monkeypatch, "1")
    x = RNG.standard_normal((1, 8, 57, 57)).astype("float32")
    m.set_input(data=x)
    ex = m.executor
    assert ex.parts_choice is not None
    monkeypatch.setattr(ex.chooser, "choose", lambda: 1)
    monkeypatch.setattr(PartsChoice, "EXPLORE_EVERY", 2)  # (both ways often)
    outs = []
    for _ in range(12):
        ex.run()
        outs.append(m.get_output(0).numpy().copy())
    assert ex.parts_choice.stats[0] >= 3 and ex.parts_choice.stats[1] >= 3
    assert all(np.array_equal(o, outs[0]) for o in outs)
    assert _build(monkeypatch, "0").executor.parts_choice is None


def test_two_threads_running_parts_at_once(monkeypatch):
    """Two modules run their parts programs from two threads at once: one holds the part
    workers, the other runs its cut steps uncut on its own thread (the shim's ``busy``
    flag); both keep their bits."""
    x = RNG.standard_normal((1, 8, 57, 57)).astype("float32")
    mods = [_build(monkeypatch, "1") for _ in range(2)]
    expected = []
    for m in mods:
        m.set_input(data=x)
        _program(m.executor, True)()
        expected.append(m.get_output(0).numpy().copy())
    assert np.array_equal(expected[0], expected[1])
    bad: list[int] = []

    def loop(i: int) -> None:
        run = _program(mods[i].executor, True)
        for _ in range(40):
            run()
            if not np.array_equal(mods[i].get_output(0).numpy(), expected[i]):
                bad.append(i)

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert bad == []


def test_one_thread_runs_count_the_part_workers_time_as_idle(monkeypatch):
    """With no idle time on the other cores (a fake ``/proc/stat`` that never moves), a
    one-thread run passes the part workers' CPU time in it (a fake clock: 0.5 s a read) to
    the run chooser as idle time (the core a team would have had): a free core must not
    look busy because our own worker used it. All-threads runs pass None."""
    from xrelay.runtime import executor as executor_module

    monkeypatch.setattr(executor_module, "idle_cpu_seconds", lambda: 100.0)
    m = _build(monkeypatch, "1")
    m.set_input(data=RNG.standard_normal((1, 8, 57, 57)).astype("float32"))
    ex = m.executor
    clock = iter(range(1000))
    ex._parts_switch = (ex._parts_switch[0], lambda: 0.5 * next(clock))
    modes = iter([1, 1, 0, 1, 1])  # (parts: the third and fourth one-thread runs)
    monkeypatch.setattr(ex.chooser, "choose", lambda: next(modes))
    seen = []
    monkeypatch.setattr(
        ex.chooser, "record", lambda mode, s, settled=True, idle=None: seen.append(idle)
    )
    for _ in range(5):
        ex.run()
    assert seen == [0.5, 0.5, None, 0.5, 0.5]  # (uncut runs add the workers' few us too)


def test_packed_dense_steps_are_cut_in_whole_tiles_with_the_whole_steps_bits(monkeypatch):
    """On the packed dense kernel (AVX2) the one-thread program cuts the same three dense
    steps in parts of whole six-row tiles, each the kernel for its rows (its own packed
    rows, residual and ReLU in its epilogue): every run gives the uncut step's bits (an
    output's sum has one order in any part), and the part workers take parts."""
    lib = dnnl_library()
    if not lib.xr_dnnl_gemm_built():
        assert not lib.xr_dnnl_gemm(8, 8, 8, 0, 0, 0, None, None, None)  # (none without AVX2)
        return
    m = _dense_build(monkeypatch, "1", packed=True)
    plans = [c.dnnl_plan for _, _, c in m.executor.steps if getattr(c, "dnnl_plan", None) is not None]
    packed = [s for p in plans for s in p.steps if s.cut is not None and s.cut["kind"] == "packed"]
    assert sorted(s.macs for s in packed) == [400 * 64 * 8, 400 * 64 * 400, 400 * 400 * 64, 400 * 400 * 400]
    assert all(s.impl == "packed_gemm:avx2" for s in packed)
    cut = [c for _, _, c in m.executor.steps if getattr(c, "thunk_parts", None) is not None]
    assert sum(c.thunk_parts.parts for c in cut) == 3  # (not the 205K one)
    x = RNG.standard_normal((400, 64)).astype("float32")
    expected = _uncut_output(_dense_build(monkeypatch, "0", packed=True), _dense_model(), x)
    _runs_in_parts_match(m, x, expected, lambda got, want: np.testing.assert_array_equal(got, want))
