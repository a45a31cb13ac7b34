"""The allocation counter (``runtime.allocations``) and ``Executor.outside_arena``: every array
a run allocates outside the planned arenas is counted and named by its step."""

from __future__ import annotations

import threading

import numpy as np

from xrelay.frontends.onnx import from_onnx
from xrelay.runtime.allocations import count_allocations
from xrelay.runtime.build import build_program
from xrelay.runtime.executor import Executor
from xrelay.testing import onnx_models


def test_counts_temporaries_not_in_place_work():
    a = np.ones(1000, np.float32)
    out = np.empty_like(a)
    two = np.array(2, np.float32)
    with count_allocations() as counted:
        np.add(a, a, out=out)
        np.multiply(out, two, out=out)
    assert (counted.bytes, counted.count) == (0, 0)
    with count_allocations() as counted:
        np.multiply(out, np.float32(2), out=out)  # the scalar becomes a 0-d array
    assert counted.count >= 1 and counted.bytes >= 4
    with count_allocations() as counted:
        b = a * 2 + 1  # a temporary (maybe elided into b) and b
        c = np.empty((100, 100))
    assert counted.bytes >= a.nbytes + c.nbytes
    assert counted.largest == c.nbytes
    assert counted.live == counted.peak >= a.nbytes + c.nbytes
    del b, c


def test_frees_lower_live_and_peak_keeps_the_most():
    with count_allocations() as counted:
        for _ in range(3):
            t = np.empty(4096, np.float64)
            del t
    assert counted.count == 3
    assert counted.bytes == 3 * 4096 * 8
    assert counted.live == 0
    assert counted.peak == 4096 * 8


def test_only_the_block_is_counted():
    with count_allocations() as counted:
        pass
    np.empty(10_000)
    assert counted.count == 0
    # the handler is the default again (another thread never had ours)
    seen = []
    with count_allocations() as counted:
        t = threading.Thread(target=lambda: seen.append(np.ones(100)))
        t.start()
        t.join()
    assert seen and counted.count == 0


def test_where_names_the_frames():
    with count_allocations(where=True) as counted:
        np.ones(10) + 1
    assert counted.where and all(n > 0 for n, _ in counted.where)
    assert any("test_where_names_the_frames" in w for _, w in counted.where)


def _executor(threads: int = 1) -> Executor:
    mod, params = from_onnx(onnx_models.mobilenet_v2(image=64, num_classes=10, width=0.5))
    program, _ = build_program(mod, params)
    ex = Executor(program, threads=threads)
    rng = np.random.default_rng(0)
    for buf in ex.input_buffers:
        np.copyto(buf, rng.standard_normal(buf.shape))
    return ex


def test_outside_arena_is_zero_for_a_planned_cnn():
    ex = _executor()
    report = ex.outside_arena()
    assert report.arena_bytes == ex.arena_bytes > 0
    assert (report.held_bytes, report.run_bytes, report.run_count, report.steps) == (0, 0, 0, [])
    assert report.total_bytes == 0


def test_outside_arena_names_a_step_that_allocates():
    """Breaking a step so that it makes a temporary (as a reference kernel returning a new
    array would) shows in the report with the step's index and bytes."""
    ex = _executor()
    index = next(i for i, (n, _, _) in enumerate(ex.steps) if n != "memory.copy")
    name, ops, compiled = ex.steps[index]
    dest = ex.step_dests[index][0]
    run = compiled.thunks[0][2]

    def allocating() -> None:
        run()
        np.copyto(dest, dest * 1.0)  # an output-sized temporary

    compiled.thunks[0] = (compiled.thunks[0][0], compiled.thunks[0][1], allocating)
    report = ex.outside_arena()
    assert [s[:3] for s in report.steps] == [(index, name, ops)]
    assert report.run_bytes >= dest.nbytes
    assert report.run_peak >= dest.nbytes
    assert report.total_bytes == report.run_peak


def test_outside_arena_counts_on_a_one_thread_twin():
    ex = _executor(threads=2)
    report = ex.outside_arena()
    assert report.total_bytes == 0 and report.arena_bytes == ex.arena_bytes
