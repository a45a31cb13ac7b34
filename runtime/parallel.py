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

**Busy cores.** Whether splitting pays depends on the machine's load, which changes while a
model runs: with a core taken by another process, two threads of ours share the remaining
time slices and the caller often waits for a preempted worker. So every job keeps the
running mean of its time in each way it can run (serially, the caller alone; in parallel
with a coarse cut; with a fine cut, where a preempted worker holds back less), runs the
fastest, and tries another way every ``EXPLORE_EVERY``-th run to notice the load change. On a quiet machine the jobs stay parallel; with a busy core they drift to serial
and the executor runs about as fast as on one thread instead of collapsing.

**Waking.** Waking a thread that sleeps on a lock costs tens of microseconds on a virtual
machine, as much as a small layer's chunk. So between the jobs of a run an idle worker
waits for the next one by spinning in C (``native.spin_wait``, without the GIL) for up to
``WorkerPool.SPIN_SECONDS``, and the caller waits for the last chunk the same way;
``WorkerPool.park`` (called at the end of ``Executor.run``) sends the workers to sleep at
once, so no core is taken between runs. Without the native library they only sleep.

**Native jobs.** A chunk that is a Python callable waits for the GIL twice (to start, and to
report its end): about 10 us a job on this machine, as long as many int8 layers take, so
most of MobileNetV2's steps ran serially even with two threads. ``WorkerPool.run_native``
runs a job of C parts instead (a C function ``fn(job, part, slot)`` and a cut): the caller
posts it in C (``xrelay_native_run``) and the workers spinning in ``spin_wait`` take its parts
there, from one counter, without entering Python; a worker that is asleep is woken for the
next ones, and one that comes late joins the job in flight. ``slot`` is the thread's own
index in the job (its scratch buffers). The int8 convolutions run this way
(``fast_int8.native_thunk``).

The pool is shared per thread count (``WorkerPool.shared``). A pool runs one job at a time;
a job submitted while it is busy (another thread's executor, or a chunk that itself asks
for parallelism) runs serially in the caller instead of waiting.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

__all__ = [
    "Job",
    "PartsChoice",
    "RunChooser",
    "WorkerPool",
    "blas_single_thread",
    "default_threads",
    "idle_cpu_seconds",
    "serial_jobs",
]

_LOCAL = threading.local()


@contextlib.contextmanager
def serial_jobs() -> Iterator[None]:
    """Inside the block, every pool job this thread submits runs serially in it (the
    executor's one-thread runs, ``RunChooser``)."""
    before = getattr(_LOCAL, "serial", False)
    _LOCAL.serial = True
    try:
        yield
    finally:
        _LOCAL.serial = before


class RunChooser:
    """Chooses, run by run, whether a model runs on all its threads (mode 0) or on one
    (mode 1), by the running mean of each mode's measured run time.

    **Why per run and not only per step.** oneDNN's primitives run on OpenMP teams whose
    work is cut statically between the threads and joined by a barrier: when another
    process holds a core, a barrier waits for whichever thread the scheduler preempted,
    while the thread that got there first spins on (GNU OpenMP spins up to 300,000 pauses,
    milliseconds, before it sleeps). On this 2-core machine EfficientNet-B0 with two threads
    took 150-290 ms beside other work where one thread took 40-70 ms (onnxruntime 27-60 ms
    in the same minutes). Making every wait passive (``OMP_WAIT_POLICY=passive``) rescues
    the loaded case (42-77 ms) but makes every one of the model's ~100 parallel regions
    wake a sleeping thread, tens of microseconds each on a virtual machine: a quiet
    machine would pay milliseconds per run. So both are kept, spinning teams of all the
    threads and a one-thread program (the oneDNN primitives made for one thread, the
    native pool's jobs serial), and each run takes the one that measured faster.

    A mode's first run is not measured (page faults, first touches), nor is a run in which
    the pool's jobs were still measuring their ways (``WorkerPool.first_ways``: a job's
    first runs try each of its cuts and its serial way once, the slower ones included, and
    only the all-threads program runs jobs in parallel). Counting those runs made the
    all-threads program's first estimates the cost of its own exploration: Swin-T, with 89
    pool steps, ran its one-thread program (1.5x slower) through most of an 18-run zoo
    benchmark when a passing load added to them. The one-thread program runs first (its
    first run and one measured run, right after the all-threads program's first run: the
    runs a caller warms up with), then the all-threads program until it is measured
    ``FIRST`` times; then the faster mode runs. A mode's estimate is the least of its last
    ``WINDOW`` times: one run slowed by something passing (a page fault, another process's
    burst) must not send a model to the slower mode (with one sample each, MobileNetV3 ran
    its one-thread program, 2x slower, through a whole 18-run benchmark), while a load that
    stays shows in every run of the window.

    **When the other mode is measured again.** Only when it may have become the faster one:
    right after a run that took longer than the other mode's estimate (a busy core slowed
    the team of all threads past the one-thread time; for the team's preferred program,
    ``SLOW_RUNS`` such runs in a row: one is something passing, and each cost a one-thread
    run, 1.8x slower, in 3-5 of the zoo's 19 ResNet-18 runs on a shared machine), and, while one thread runs, after 2,
    4, 8, then every ``EXPLORE_EVERY`` runs (a load that stays costs an all-threads run ever
    more rarely), or as soon as the other cores were seen idle while one thread ran (below).
    An all-threads run that stays under the one-thread estimate says the one-thread program
    cannot win, so a quiet machine never runs it again (but once after the team's runs take
    ``STALE`` times its least, ``SLOW_RUNS`` in a row: a load came since the one-thread
    estimate was measured, which may be too high): re-measuring it every 16th run
    anyway put ResNet-50's one-thread program (1.7x slower) into 3 or 4 of a benchmark's
    15 timed rounds (the first choices' alternation and the exploration), which moved its
    median ratio to onnxruntime between 0.88 and 1.01 from run to run.

    **A load that left.** It does not show in one-thread times, so the schedule alone kept
    a load that passed during the first estimates for most of a benchmark: a core busy for
    the first second of the zoo's ResNet-18 rounds made the all-threads runs 54 ms (11 ms
    idle, one thread 20 ms) at its first measurements and at the re-measurements 2 and 4
    runs later, and the next one came 8 one-thread runs later, after the benchmark's end
    (13 of 19 runs on one thread; the same happened unprovoked in a full zoo run, ResNet-18
    and SqueezeNet at 1.04 and 1.20x onnxruntime instead of 0.62 and 0.73). So the executor
    passes each one-thread run's ``idle``, the seconds the process's other CPUs were idle
    during it (``idle_cpu_seconds``), and the chooser adds them up over stretches of
    ``free_after`` seconds of one-thread time: a stretch in which ``spare`` cores (the
    all-threads program's threads beside the one) were idle at least ``FREE_SHARE`` of the
    time measures the all-threads program at once. One that then still measures slower
    (the idle time lied: a container's ``/proc/stat`` counts the host's CPUs) doubles
    ``free_after`` (up to ``FREE_MOST``), so a false signal costs about as often as the
    schedule; one faster resets it.

    **A load the signal saw.** Under a load that stays the other cores are busy and the
    signal never says free. When a team run (a first estimate or a re-measurement) is
    slower than the one-thread estimate right after one-thread runs that saw the other
    cores busy, the signal has been right about this load: the team takes no second first
    estimate and is re-measured only every ``EXPLORE_EVERY`` runs (the 2, 4, 8 steps are
    for a chooser without a signal), since the signal brings it back as soon as the load
    leaves. With one competing busy process the zoo's ``--busy`` rounds ran the team
    (ConvNeXt-Tiny 122-165 ms, one thread 87-94 ms) in 3 of their 15 timed rounds, its first
    estimates and the re-measurements 2 and 4 runs later; now in none. Where the signal
    lies the other way (a container's ``/proc/stat`` counting a busy host), a load that left
    is noticed up to ``EXPLORE_EVERY`` runs late instead of 2-8; without the signal (no
    ``/proc/stat``) the schedule above runs unchanged. The verdict before a team run is that
    of the latest ``FREE_SECONDS`` of one-thread time, also from before the team runs in
    between, back to the last time the team won: a model of 3-10 ms a run has only two
    one-thread runs between its first estimates and the first re-measurement, too short for
    two ticks, so judged on those alone the signal confirmed a load on it only at the second
    re-measurement (6-10 ms a run) or the third (3.5 ms), and the schedule ran the
    collapsed team (SqueezeNet 27 ms beside another process, one thread 9.5 ms) at runs 8
    and 13 of the zoo's 19; now the load is confirmed at run 8 (run 13 for 3.5 ms). Two
    team runs in a row more than ``COLLAPSE`` times the one-thread estimate confirm it by
    themselves, since the part workers' CPU time makes a busy core look half free to the
    signal.

    **What the one-thread episodes on a quiet machine were.** Several zoo runs on a machine
    thought idle ran small models on one thread for 7-14 of their 19 runs. Traced on a
    2-core Xeon (``docs/guide/threads.md``), none came from the estimates themselves: with
    each run right after an onnxruntime run the team stays 1.6-1.9x faster than one thread
    (waking OpenMP's sleeping thread costs 0.3-0.7 ms of it) and 40 fresh choosers of 19 runs
    each ran one thread 2 times (the first choices), 3 in 3 of them. Each episode had another
    process on the other core (the idle signal 0.0, the team 5-16x its quiet time): the
    spinning team collapses even beside a process that takes a quarter of a core in 1 ms
    bursts, so one thread was the faster program there."""

    EXPLORE_EVERY = 16
    FIRST = 2
    WINDOW = 3
    SLOW_RUNS = 2
    STALE = 2.0
    """How many times its least time the team's runs take, ``SLOW_RUNS`` in a row, to say a
    load came since the one-thread program was last measured, which is then measured once
    more (``stale``). The rule ``slow`` measures it only when the team runs slower than the
    one-thread estimate, and an estimate measured while something passed stays too high: in
    a zoo ``--busy`` run ViT-B/16's team ran 17 of 19 runs at 654 ms (its least 314; one
    thread took 447-579 ms in the next run's trace) after its one-thread program's one
    measured run came out slower than that. Not less: a core the host runs at half speed
    makes the team as slow as one thread, 1.5-1.9x its least, and at 1.5 the zoo's quiet
    runs measured one thread once more in 6 of 19 models (SqueezeNet 4 times)."""
    FREE_SECONDS = 0.02
    """One-thread time over which the idle time of the other cores is judged: idle time is
    counted in 10 ms ticks, so two ticks' worth (a fully idle core shows 1-3 of them, a busy
    one none). 50 ms kept MnasNet (9 ms a one-thread run) on one thread 4 runs past the load's
    end, the schedule's re-measurement came first, and the median of its 15 zoo rounds was
    its one-thread time, 1.55x onnxruntime."""
    FREE_SHARE = 0.5
    FREE_MOST = 0.8
    COLLAPSE = 2.0
    """How many times the one-thread estimate two team runs in a row take to confirm a load
    by themselves (where the idle signal exists: it brings the team back when the load
    leaves). One such run is something passing: alternated in one process with OpenVINO,
    whose threads spin on after its runs, U-Net's second team estimate took 35.5 ms against
    2.3-2.8 (one thread 4.3), and taken alone as a load it kept the model on one thread.
    On a free machine the team takes 0.5-0.65x the one-thread time; beside a busy process
    small models' teams took 5-9x (ShuffleNetV2 27.6 ms, one thread 3.0-3.6), while the
    idle signal, which counts the part workers' CPU time as the other cores' idle time, read
    that core as half free or more: a worker woken for a short step runs on it at once (it
    slept; the scheduler owes it time), so the signal confirmed no load and the schedule
    re-measured the collapsed team 2 and 4 runs later."""

    def __init__(self, spare: int = 1) -> None:
        self.samples: list[list[float]] = [[], []]
        self.runs = 0
        self.stats = [0, 0]
        self.spare = spare
        """Cores the all-threads program takes beside the one-thread program's."""
        self.trace: list[tuple[int, int, float, bool, str, float | None]] | None = (
            [] if os.environ.get("XRELAY_CHOOSER_TRACE", "") not in ("", "0") else None
        )
        """With ``XRELAY_CHOOSER_TRACE=1``: (run, mode, seconds, settled, why chosen, idle)
        of every run (``benchmarks/zoo.py`` prints it)."""
        self.reasons: dict[str, int] = {}
        """How often each rule chose the mode (``first``, ``best``, ``slow``, ``again``,
        ``free``, ``stale``)."""
        self._why = ""
        self._slow = 0  # runs in a row slower than the other mode's estimate
        self._explore: int | None = None
        self._gap = 2  # one-thread runs before the all-threads program is measured again
        self._since = 0
        self.free_after = self.FREE_SECONDS
        self._one = [0.0, 0.0]  # one-thread seconds and other cores' idle seconds, this stretch
        self._last: bool | None = None  # the last judged stretch's verdict (``_verdict``)
        self._confirmed = False  # the last team run was slower under a load the signal saw
        self._signal = False  # the one-thread runs since the team last won had idle times
        self._collapses = 0  # team runs in a row over COLLAPSE times the one-thread estimate
        self._team_least = -1.0  # the team's least settled time
        self._stale = 0  # team runs in a row over STALE times that
        self._restaled = False  # the one-thread program was measured again for this load
        # (seconds, idle) of the latest one-thread runs whose idle is known, newest last: the
        # load's verdict before a team run (``_recent_busy``), across the team runs between
        self._recent: list[tuple[float, float]] = []

    @property
    def mean(self) -> list[float]:
        """Each mode's estimate in seconds (the least of its last ``WINDOW`` times; -1 while
        never measured)."""
        return [min(s) if s else -1.0 for s in self.samples]

    def choose(self) -> int:
        """The mode of the next run."""
        mode, self._why = self._choose()
        self.reasons[self._why] = self.reasons.get(self._why, 0) + 1
        return mode

    def _choose(self) -> tuple[int, str]:
        self.runs += 1
        if self.stats[0] == 0:
            return 0, "first"
        if not self.samples[1]:
            return 1, "first"
        if len(self.samples[0]) < self.FIRST and not self._confirmed:
            return 0, "first"
        if self._explore is not None:
            mode, self._explore = self._explore, None
            self._since = self._since + 1 if mode else 0  # one-thread runs since the last team run
            return mode, "slow"
        mean = self.mean
        if mean[0] <= mean[1] and self._stale >= self.SLOW_RUNS and not self._restaled:
            # a load came since the one-thread estimate was measured: measure it once more
            self._restaled, self._stale = True, 0
            return 1, "stale"
        if mean[0] <= mean[1]:
            self._gap, self._since, self.free_after = 2, 0, self.FREE_SECONDS
            self._recent.clear()  # the team won: a later load is judged on its own runs
            self._signal = False
            return 0, "best"
        if self._free():
            self._since = 0
            return 0, "free"
        self._since += 1
        if self._since <= self._gap:
            return 1, "best"
        self._gap, self._since = min(2 * self._gap, self.EXPLORE_EVERY), 0
        return 0, "again"

    def _free(self) -> bool:
        """Whether the other cores were idle through the last stretch of one-thread runs
        (then a new stretch starts)."""
        if self._one[0] < self.free_after:
            return False
        free = self._verdict()
        self._one = [0.0, 0.0]
        return bool(free)

    def _verdict(self) -> bool | None:
        """The idle signal of the one-thread runs since the last judgement: True, the other
        cores were idle; False, busy; None, not known (no ``idle``, or under ``free_after``
        seconds of one-thread time)."""
        seconds, idle = self._one
        if seconds < self.free_after:
            return self._last
        self._last = idle >= self.FREE_SHARE * self.spare * seconds
        return self._last

    def _recent_busy(self) -> bool:
        """Whether the latest ``FREE_SECONDS`` of one-thread time saw the other cores busy
        (False while the one-thread runs since the team last won are shorter, or their idle
        is not known)."""
        seconds = idle = 0.0
        for s, i in reversed(self._recent):
            seconds, idle = seconds + s, idle + i
            if seconds >= self.FREE_SECONDS:
                return idle < self.FREE_SHARE * self.spare * seconds
        return False

    def record(self, mode: int, seconds: float, settled: bool = True, idle: float | None = None) -> None:
        """The time the run chosen last took in ``mode``; ``settled`` False: the program was
        still measuring its own ways in that run (the time is not the mode's). ``idle``:
        seconds the other CPUs were idle during a one-thread run (None: not known)."""
        if self.trace is not None:
            self.trace.append((self.runs, mode, seconds, settled, self._why, idle))
        self.stats[mode] += 1
        loaded = False
        if mode == 0:
            # the other cores were busy in the one-thread runs before this team run
            loaded = self._verdict() is False or self._recent_busy()
            self._one, self._last = [0.0, 0.0], None
        else:
            self._signal = idle is not None
            if idle is not None:
                self._one[0] += seconds
                self._one[1] += idle
                self._recent.append((seconds, idle))
                # only the latest FREE_SECONDS are judged
                while sum(s for s, _ in self._recent[1:]) >= self.FREE_SECONDS:
                    del self._recent[0]
        if self.stats[mode] == 1 or not settled:
            return
        if mode == 0:
            if self._team_least < 0 or seconds < self._team_least:
                self._team_least = seconds
            self._stale = self._stale + 1 if seconds > self.STALE * self._team_least else 0
            if seconds <= self.STALE * self._team_least:
                self._restaled = False  # (quiet again: a later load is measured again)
        other = self.mean[1 - mode]
        slow = other >= 0 and seconds > other and len(self.samples[0]) >= self.FIRST
        # a team run the chooser preferred: one slow run is noise, SLOW_RUNS in a row a load
        self._slow = self._slow + 1 if slow else 0
        if mode == 0:
            # The team slower than one thread while the idle signal said the other cores were
            # busy: the signal is right about this load, so the team needs no second first
            # estimate and no re-measurement before EXPLORE_EVERY runs (``free`` still
            # brings it back as soon as the cores idle). A team COLLAPSE times slower than
            # one thread is a load whatever the signal says, and its earlier times (a lucky
            # run while the other process was off its core) no longer estimate it.
            collapsed = self._signal and other >= 0 and seconds > self.COLLAPSE * other
            self._collapses = self._collapses + 1 if collapsed else 0
            collapsed = self._collapses >= 2  # (one such run is something passing)
            self._confirmed = (loaded or collapsed) and other >= 0 and seconds > other
            if self._confirmed:
                self._gap = self.EXPLORE_EVERY
            if collapsed:  # (the window holds these runs alone, as a full window)
                self.samples[0][:] = [seconds] * (self.WINDOW - 1)
        if slow and (mode == 1 or self._why != "best" or self._slow >= self.SLOW_RUNS):
            self._explore = 1 - mode  # slower than the other mode's estimate: measure it at once
            if self._why == "free":  # the idle cores did not make the team faster: trust less
                self.free_after = min(2 * self.free_after, self.FREE_MOST)
        window = self.samples[mode]
        window.append(seconds)
        del window[: -self.WINDOW]



class PartsChoice:
    """Whether the one-thread program runs its cut steps in parts (way 1) or uncut (way 0),
    run by run: each way's estimate is the least of its last ``WINDOW`` times, the faster
    way runs, and the other runs every ``EXPLORE_EVERY``-th run to be measured again.

    Why both: with the other core free, a worker that takes parts makes the one-thread
    program about as fast as oneDNN's team; with another process on that core, the worker
    gets it only in the scheduler's time slices (4 ms at 250 Hz), and a worker preempted
    while it holds a part makes the caller wait for it (until the caller moves it to its
    own CPU, ``wait_parts`` in the shim), so parts cost some models more than they bring
    (docs/guide/threads.md has the figures). Both ways give the same bits."""

    WINDOW = 3
    EXPLORE_EVERY = 8

    def __init__(self) -> None:
        self.samples: list[list[float]] = [[], []]
        self.runs = 0
        self.stats = [0, 0]
        """Runs of each way."""

    def choose(self) -> int:
        """The way of the next one-thread run."""
        self.runs += 1
        # uncut first: the run chooser's first one-thread estimates are then the one-thread
        # program's own time (parts beside a busy core measured slower in some models, and
        # an estimate too high kept the collapsing team running)
        for way in (0, 1):
            if not self.samples[way]:  # (its first run, a warm-up, and one measured)
                return way
        best = min((0, 1), key=lambda w: min(self.samples[w]))
        return 1 - best if self.runs % self.EXPLORE_EVERY == 0 else best

    def record(self, way: int, seconds: float) -> None:
        """The time of the run chosen last, in ``way``."""
        self.stats[way] += 1
        if self.stats[way] > 1:
            self.samples[way] = [*self.samples[way], seconds][-self.WINDOW :]

_STAT: dict[str, Any] = {}


def idle_cpu_seconds() -> float | None:
    """Seconds the CPUs this process may run on have been idle since boot (their idle and
    iowait in ``/proc/stat``, counted in clock ticks), or None where that cannot be read.
    About 10 us: the file stays open and is read into a buffer kept for it (a run allocates
    no more than the CPU lines)."""
    try:
        if "fd" not in _STAT:
            _STAT["buffer"] = bytearray(1 << 16)
            _STAT["tick"] = os.sysconf("SC_CLK_TCK")
            _STAT["fd"] = os.open("/proc/stat", os.O_RDONLY)
        mine = os.sched_getaffinity(0)
        buffer = _STAT["buffer"]
        n = os.preadv(_STAT["fd"], [buffer], 0)
    except (OSError, AttributeError, ValueError, KeyError):
        _STAT["fd"] = -1  # (later calls fail at once)
        return None
    end = buffer.find(b"\nintr", 0, n)
    ticks = 0
    for line in bytes(buffer[: n if end < 0 else end]).split(b"\n")[1:]:
        if not line.startswith(b"cpu"):
            break
        fields = line.split()
        try:
            if int(fields[0][3:]) in mine:
                ticks += int(fields[4]) + int(fields[5])
        except (ValueError, IndexError):
            return None
    return ticks / _STAT["tick"]


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
    """Chunks (zero-argument callables) run together by a pool, in one of several fixed
    cuts: ``tasks`` (coarse: about one chunk per thread) and optionally ``fine`` (several per
    thread: a preempted thread then holds back less work), plus ``serial``, what one thread
    runs instead (the uncut kernel; None runs ``tasks`` in order). Every cut gives the same
    results. Built once at compile time; running it allocates only the pool's bookkeeping.
    Raw locks (not ``threading.Event``/``Semaphore``, which are Python code) signal the end.
    """

    __slots__ = (
        "tasks", "serial", "cuts", "_state", "_finished", "_error", "_runs", "_mean", "_phase",
        "_ends",
    )  # fmt: skip

    _created = itertools.count()

    def __init__(
        self,
        tasks: Sequence[Callable[[], Any]],
        serial: Callable[[], Any] | None = None,
        fine: Sequence[Callable[[], Any]] | None = None,
    ):
        self.tasks = tuple(tasks)
        self.serial = serial
        self.cuts: list[tuple[Callable[[], Any], ...]] = [self.tasks]
        if fine is not None and len(fine) > len(self.tasks):
            self.cuts.append(tuple(fine))
        self._runs = 0
        # Jobs explore in different runs (not all in the same one: no slow runs every so often).
        self._phase = next(Job._created)
        # Running mean seconds per mode (0: serial, k: cut k - 1); -1 while never measured.
        self._mean = [-1.0] * (1 + len(self.cuts))
        # (claim counter, done counter, chunks) of the current run, swapped as one object so
        # a late worker never mixes one run's counter with another run's chunks.
        self._state: tuple[Iterator[int], Iterator[int], tuple] = (iter(()), iter(()), ())
        # Held while chunks are outstanding; the thread finishing the last one releases it.
        self._finished = threading.Lock()
        self._finished.acquire()
        # Bumped with that release: the caller spins on it (without the GIL) before it
        # sleeps on the lock, as a wake-up from sleep costs tens of microseconds.
        self._ends = ctypes.c_int64(0)
        self._error: BaseException | None = None

    def __len__(self) -> int:
        return len(self.tasks)

    def _reset(self, mode: int = 1) -> None:
        self._error = None
        # itertools.count's next() is atomic under the GIL: each index is claimed once.
        self._state = (itertools.count(), itertools.count(1), self.cuts[mode - 1])

    def _work(self) -> None:
        claim, done, tasks = self._state
        n = len(tasks)
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
                if next(done) == n:
                    self._ends.value += 1
                    self._finished.release()

    def run_serial(self) -> None:
        """Run the job in the calling thread: ``serial``, or every chunk in order."""
        if self.serial is not None:
            self.serial()
            return
        for t in self.tasks:
            t()


class WorkerPool:
    """``threads - 1`` daemon worker threads that help the calling thread run a ``Job``.

    ``adaptive`` (default) picks serial or parallel per job by measured time (module
    docstring); ``stats`` counts the jobs run each way.
    """

    EXPLORE_EVERY = 8
    """Every this many runs of a job, it runs the way that measured slower (to re-measure)."""
    SMOOTHING = 0.3
    """Weight of the newest time in a job's running means."""

    _shared: dict[int, WorkerPool] = {}
    _shared_lock = threading.Lock()

    SPIN_SECONDS = 0.0005
    """How long an idle worker waits for the next job spinning (without the GIL) before it
    sleeps: jobs of one model run follow each other closely, and waking a sleeping thread
    costs about 100 us on a virtual machine, more than a small layer takes."""

    SETTLE_SECONDS = 6e-6
    """After the awaited change, spin this long more before taking the GIL: the thread that
    made it gives the GIL up within microseconds, and a thread that finds it taken sleeps."""

    def __init__(self, threads: int, *, adaptive: bool = True, spin: bool = True):
        if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
            raise ValueError(f"threads must be a positive integer, got {threads!r}")
        self.threads = threads
        self.adaptive = adaptive
        # Bumped for every job posted; spinning workers watch it (native spin_wait).
        self._seq = ctypes.c_int64(0)
        self._spin = _spin_wait() if spin and threads > 1 else None
        self._native = _native_run() if self._spin is not None else None
        self._chain = _native_chain() if self._native is not None else None
        # Workers spin (and so take native jobs' parts) after a wake-up without a job too:
        # set by ``_wake``, cleared by ``park``. ``_serving``: the caller believes they do.
        self._serve = False
        self._serving = False
        self._wait_ns = int(self.SPIN_SECONDS * 1e9)
        self._settle_ns = int(self.SETTLE_SECONDS * 1e9)
        self.stats = {"parallel": 0, "serial": 0, "native": 0, "native_shared": 0}
        """Jobs run each way; ``native``: native jobs (``run_native``), ``native_shared``:
        those of which a worker ran parts."""
        self.first_ways = 0
        """Job runs so far that ran a way of their job never measured before (``_choose``):
        a model run that added to it was a warm-up run of its jobs (``RunChooser``)."""
        self._busy = threading.Lock()
        self._job: Job | None = None
        # Per worker: a raw lock it blocks on until released, and whether a release is
        # pending (so a release is never doubled, which would raise).
        self._go = [threading.Lock() for _ in range(threads - 1)]
        self._armed = [False] * (threads - 1)
        for go in self._go:
            go.acquire()
        self._workers = [
            threading.Thread(target=self._loop, args=(i,), name=f"xrelay-worker-{i}", daemon=True)
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

    def _loop(self, index: int) -> None:
        go = self._go[index]
        spin = self._spin
        seq = self._seq
        address = ctypes.addressof(seq)
        budget = int(self.SPIN_SECONDS * 1e9)
        settle = int(self.SETTLE_SECONDS * 1e9)
        spin_next = False
        while True:
            seen = seq.value
            if not (spin_next and spin is not None and spin(address, seen, budget, settle)):
                go.acquire()
                self._armed[index] = False
            # (A release that arrives after a spinning wake-up wakes it once more later: it
            # then finds the job's chunks claimed, as any late worker does.)
            job = self._job
            # Spin for the next job only after one or a wake-up for native jobs (not after
            # ``park``).
            spin_next = job is not None or self._serve
            if job is not None:
                # A worker that wakes late finds every chunk claimed and goes back to sleep.
                job._work()

    def _choose(self, job: Job) -> int:
        """How to run ``job`` this time: 0 serially, ``k`` in parallel with cut ``k - 1``."""
        if not self.adaptive:
            return 1
        job._runs += 1
        mean = job._mean
        for mode in (*range(1, len(mean)), 0):  # measure every way once, coarse cut first
            if mean[mode] < 0:
                self.first_ways += 1
                return mode
        best = min(range(len(mean)), key=mean.__getitem__)
        turn = job._runs + job._phase
        if turn % self.EXPLORE_EVERY == 0:
            others = [m for m in range(len(mean)) if m != best]
            return others[(turn // self.EXPLORE_EVERY) % len(others)]
        return best

    def _record(self, job: Job, mode: int, seconds: float) -> None:
        old = job._mean[mode]
        job._mean[mode] = seconds if old < 0 else old + self.SMOOTHING * (seconds - old)

    def park(self) -> None:
        """Send spinning workers to sleep now (the end of a model run: no job follows soon,
        and a spinning thread would take a core from whatever the process does next)."""
        if self._spin is not None:
            self._job = None
            self._serve = self._serving = False
            self._seq.value += 1

    @property
    def native(self) -> bool:
        """Whether ``run_native`` runs native jobs on the threads (else serially)."""
        return self._native is not None and self.threads > 1

    def _wake(self) -> None:
        """Wake the sleeping workers to spin, taking native jobs' parts (``run_native``)."""
        self._serve = self._serving = True
        for i in range(len(self._workers)):
            if not self._armed[i]:
                self._armed[i] = True
                self._go[i].release()

    def run_native(self, fn: int, job: int, parts: int, slots: int, serial: Callable[[], Any]) -> None:
        """Run a native job: the C function at address ``fn``, ``void fn(const void *job,
        int64_t part, int64_t slot)``, for every part of ``parts``, on the calling thread and
        the workers spinning in C (``xrelay_native_run``): no chunk takes the GIL, so a
        worker starts its part within a spin of the post (a Python job's chunks wait for the
        GIL, about 10 us a job). ``slot`` is the running thread's index below ``slots`` (its
        buffers). ``serial`` (the uncut kernel) runs instead in one-thread runs
        (``serial_jobs``), with one thread or without the native library. Sleeping workers
        are woken first; a post that found none waiting runs on the caller alone and wakes
        them for the next one. Always all threads' way: the cut is fine enough that a
        worker without a core leaves its parts to the caller."""
        if self._native is None or parts <= 1 or getattr(_LOCAL, "serial", False):
            serial()
            return
        if not self._serving:
            self._wake()
        self.stats["native"] += 1
        shared = self._native(fn, job, parts, slots)
        if shared < 0:
            self._serving = False
        elif shared:
            self.stats["native_shared"] += 1

    def run_native_chain(self, jobs: int, count: int, each: Sequence[Callable[[], Any]]) -> None:
        """Run ``count`` native jobs in turn in one C call (``xrelay_native_chain``; ``jobs``:
        the address of their (fn, job, parts, slots) int64 quads), each as ``run_native``
        runs it, without coming back to Python between them. ``each``: the jobs' own thunks,
        run one by one instead in one-thread runs (``serial_jobs``) or without the native
        library."""
        if self._chain is None or self.threads < 2 or getattr(_LOCAL, "serial", False):
            for t in each:
                t()
            return
        if not self._serving:
            self._wake()
        self.stats["native"] += count
        shared = self._chain(jobs, count)
        if shared < 0:
            self._serving = False
        else:
            self.stats["native_shared"] += shared

    def run(self, job: Job) -> None:
        """Run every chunk of ``job``; re-raise the first exception a chunk raised."""
        if self.threads == 1 or len(job.tasks) <= 1 or getattr(_LOCAL, "serial", False):
            job.run_serial()
            return
        clock = time.perf_counter
        start = clock()
        mode = self._choose(job)
        if mode == 0 or not self._busy.acquire(blocking=False):
            self.stats["serial"] += 1
            job.run_serial()
            if self.adaptive:
                self._record(job, 0, clock() - start)
            return
        try:
            self.stats["parallel"] += 1
            job._reset(mode)
            ends = job._ends.value
            self._job = job
            self._seq.value += 1
            for i in range(min(len(self._workers), len(job.cuts[mode - 1]) - 1)):
                if not self._armed[i]:
                    self._armed[i] = True
                    self._go[i].release()
            job._work()
            # Wait only for chunks a worker has claimed; unclaimed ones were done above.
            if self._spin is not None and job._ends.value == ends:
                self._spin(ctypes.addressof(job._ends), ends, self._wait_ns, self._settle_ns)
            job._finished.acquire()
            self._job = None
        finally:
            self._busy.release()
        if self.adaptive:
            self._record(job, mode, clock() - start)
        if job._error is not None:
            raise job._error


def _native_run() -> Callable[[int, int, int, int], int] | None:
    try:
        from xrelay.runtime.native.library import native_run

        return native_run()
    except Exception:  # pragma: no cover - no compiler: no native jobs
        return None


def _native_chain() -> Callable[[int, int], int] | None:
    try:
        from xrelay.runtime.native.library import native_chain

        return native_chain()
    except Exception:  # pragma: no cover - no compiler: no native jobs
        return None


def _spin_wait() -> Callable[[int, int, int], int] | None:
    try:
        from xrelay.runtime.native.library import spin_wait

        return spin_wait()
    except Exception:  # pragma: no cover - no compiler: workers only sleep
        return None


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
