"""Spinning waits of the worker pool: the native spin_wait, jobs run by spinning workers,
and ``park`` sending them back to sleep."""

from __future__ import annotations

import ctypes
import threading

import numpy as np

from xrelay.runtime.native import library as native
from xrelay.runtime.parallel import Job, WorkerPool


def test_spin_wait_sees_a_change_and_times_out():
    spin = native.spin_wait()
    assert spin is not None
    seq = ctypes.c_int64(5)
    address = ctypes.addressof(seq)
    assert spin(address, 4, 10_000_000, 0) == 1  # already different
    assert spin(address, 5, 200_000, 1000) == 0  # 0.2 ms, nothing changes
    timer = threading.Timer(0.01, lambda: setattr(seq, "value", 6))
    timer.start()
    assert spin(address, 5, 5_000_000_000, 1000) == 1  # released by the change, not the timeout
    timer.join()


def _job(out: np.ndarray, threads_seen: set) -> Job:
    def chunk(i: int):
        def run() -> None:
            threads_seen.add(threading.get_ident())
            out[i] = np.arange(1000, dtype=np.float64).sum() + i

        return run

    return Job([chunk(i) for i in range(len(out))])


def test_spinning_pool_runs_every_chunk_and_parks():
    pool = WorkerPool(2, adaptive=False)
    assert pool._spin is not None
    out = np.zeros(8)
    seen: set = set()
    job = _job(out, seen)
    for _ in range(200):
        out[:] = 0
        pool.run(job)
        assert np.array_equal(out, 499500.0 + np.arange(8))
    pool.park()
    # After park the worker sleeps on its lock; the next job wakes it as before.
    out[:] = 0
    pool.run(job)
    assert np.array_equal(out, 499500.0 + np.arange(8))
    assert pool.stats["parallel"] == 201
    assert threading.get_ident() in seen


def test_pool_without_spinning_gives_the_same_results():
    pool = WorkerPool(2, adaptive=False, spin=False)
    assert pool._spin is None
    out = np.zeros(5)
    pool.run(_job(out, set()))
    pool.park()  # nothing to do
    assert np.array_equal(out, 499500.0 + np.arange(5))
