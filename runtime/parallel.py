"""Parallelism the executor controls: a small pool of Python threads and a BLAS thread limit.

The executor splits each large kernel (a convolution's im2col + matmul + epilogue, a
depthwise convolution, a max pool) into a *fixed* list of chunks at compile time, and runs
the chunks of one step on a ``WorkerPool``: the calling thread and ``threads - 1`` workers
take chunks from a shared counter until none is left. numpy's matmul and the numba kernels
release the GIL, so the chunks really run at the same time.

Why not let OpenBLAS (or numba's own pool) do it: their threads spin-wait between the
fine-grained pieces of one call, and when another process holds a core they collapse (a
64x576x3136 matmul measured 113 GFLOP/s on one thread, 9.6 GFLOP/s on two threads with one
core busy). Here a thread that does not get a core simply takes no chunk: the caller does
the work itself and waits only for chunks a worker has already started. So while a step
runs, ``blas_single_thread`` keeps BLAS at one thread per call.

Results do not depend on which thread runs which chunk, nor on the number of threads for a
given chunking: every chunk writes its own part of the output with the same operations.
The chunk boundaries are a function of the shapes and of ``threads`` only, so results are
bitwise stable from run to run.

**Busy cores.** When the caller, after its own chunks, waits for a worker's chunk longer
than a quarter of its own work, a worker was preempted (another process holds a core): the
pool then runs the next ``BACKOFF_JOBS`` jobs serially in the caller (one thread, no waiting)
and tries the workers again after that. With a busy core the executor thus runs about as
fast as on one thread instead of collapsing; on a quiet machine it keeps all threads.

The pool is shared per thread count (``WorkerPool.shared``). A pool runs one job at a time;
a job submitted while it is busy (another thread's executor, or a chunk that itself asks
for parallelism) runs serially in the caller instead of waiting.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

__all__ = [
    "Job",
    "WorkerPool",
    "blas_single_thread",
    "default_threads",
]


def default_threads() -> int:
    """Threads an executor uses unless told: ``TVM_NUM_THREADS`` if set, else the cores this
    process may run on."""
    env = os.environ.get("TVM_NUM_THREADS", "").strip()
    if env:
        try:
            n = int(env)
        except ValueError:
            raise ValueError(f"TVM_NUM_THREADS must be a positive integer, got {env!r}") from None
        if n < 1:
            raise ValueError(f"TVM_NUM_THREADS must be a positive integer, got {env!r}")
        return n
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class Job:
    """A fixed list of chunks (zero-argument callables) run together by a pool.

    Built once at compile time; running it allocates nothing but the pool's bookkeeping.
    """

    __slots__ = ("tasks", "_claim", "_done", "_lock", "_finished", "_error")

    def __init__(self, tasks: Sequence[Callable[[], Any]]):
        self.tasks = tuple(tasks)
        self._claim: Iterator[int] = iter(())
        self._done = 0
        self._lock = threading.Lock()
        self._finished = threading.Event()
        self._error: BaseException | None = None

    def __len__(self) -> int:
        return len(self.tasks)

    def _reset(self) -> None:
        self._done = 0
        self._error = None
        self._finished.clear()
        # itertools.count's next() is atomic under the GIL: each index is claimed once.
        self._claim = itertools.count()

    def _work(self) -> None:
        claim, tasks, n = self._claim, self.tasks, len(self.tasks)
        while True:
            i = next(claim)
            if i >= n:
                return
            try:
                tasks[i]()
            except BaseException as e:  # reported by the thread that runs the job
                if self._error is None:
                    self._error = e
            finally:
                with self._lock:
                    self._done += 1
                    if self._done == n:
                        self._finished.set()

    def run_serial(self) -> None:
        """Run every chunk in the calling thread, in order."""
        for t in self.tasks:
            t()


class WorkerPool:
    """``threads - 1`` daemon worker threads that help the calling thread run a ``Job``.

    ``adaptive`` (default) enables the busy-core back-off of the module docstring;
    ``stats`` counts jobs run in parallel, serially after a back-off, and back-offs.
    """

    BACKOFF_JOBS = 200
    """Jobs run serially after a worker was found late (several model runs)."""
    LATE_FRACTION = 0.25
    """A wait for workers longer than this fraction of the caller's own work is late."""
    LATE_SLACK = 100e-6
    """Seconds of waiting always tolerated (waking a sleeping thread takes some)."""

    _shared: dict[int, WorkerPool] = {}
    _shared_lock = threading.Lock()

    def __init__(self, threads: int, *, adaptive: bool = True):
        if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
            raise ValueError(f"threads must be a positive integer, got {threads!r}")
        self.threads = threads
        self.adaptive = adaptive
        self.stats = {"parallel": 0, "serial": 0, "backoffs": 0}
        self._serial_left = 0
        self._busy = threading.Lock()
        self._wake = threading.Semaphore(0)
        self._job: Job | None = None
        self._workers = [
            threading.Thread(target=self._loop, name=f"xrelay-worker-{i}", daemon=True)
            for i in range(threads - 1)
        ]
        for w in self._workers:
            w.start()

    @classmethod
    def shared(cls, threads: int) -> WorkerPool:
        """The process-wide pool of ``threads`` threads (created on first use)."""
        with cls._shared_lock:
            pool = cls._shared.get(threads)
            if pool is None:
                pool = cls._shared[threads] = cls(threads)
            return pool

    def _loop(self) -> None:
        while True:
            self._wake.acquire()
            job = self._job
            if job is not None:
                # A worker that wakes late finds every chunk claimed and goes back to sleep.
                job._work()

    def run(self, job: Job) -> None:
        """Run every chunk of ``job``; re-raise the first exception a chunk raised."""
        if self.threads == 1 or len(job.tasks) <= 1:
            job.run_serial()
            return
        if self._serial_left > 0 or not self._busy.acquire(blocking=False):
            self._serial_left = max(0, self._serial_left - 1)
            self.stats["serial"] += 1
            job.run_serial()
            return
        clock = time.perf_counter
        try:
            self.stats["parallel"] += 1
            job._reset()
            self._job = job
            for _ in range(min(len(self._workers), len(job.tasks) - 1)):
                self._wake.release()
            start = clock()
            job._work()
            mine = clock()
            # Wait only for chunks a worker has claimed; unclaimed ones were done above.
            job._finished.wait()
            waited = clock() - mine
            self._job = None
            if self.adaptive and waited > self.LATE_SLACK + self.LATE_FRACTION * (mine - start):
                self._serial_left = self.BACKOFF_JOBS
                self.stats["backoffs"] += 1
        finally:
            self._busy.release()
        if job._error is not None:
            raise job._error


_BLAS: dict[str, Any] = {}


def _blas_controller() -> Any:
    if "controller" not in _BLAS:
        try:
            from threadpoolctl import ThreadpoolController

            _BLAS["controller"] = ThreadpoolController().select(user_api="blas")
        except Exception:  # pragma: no cover - threadpoolctl is a declared dependency
            _BLAS["controller"] = None
    return _BLAS["controller"]


@contextlib.contextmanager
def blas_single_thread() -> Iterator[None]:
    """Limit BLAS to one thread per call inside the block (about 10 us to enter and leave).

    The limit is process-wide while the block runs (OpenBLAS has no per-thread setting).
    """
    controller = _blas_controller()
    if controller is None or not controller.lib_controllers:
        yield
        return
    with controller.limit(limits=1):
        yield
