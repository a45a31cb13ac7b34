"""What the runtime benchmarks share: the peer runtimes, alternating rounds, peak RSS.

``benchmarks/runtime.py`` (xrelay's own workloads) and ``benchmarks/zoo.py`` (the real-model
zoo) measure the same way with these:

* ``ort_session``: onnxruntime, 2 intra-op threads (or as asked), 1 inter-op, spinning off unless asked
  (``XRELAY_BENCH_ORT_SPIN=1``): spinning pool threads would take the cores of the runtime
  that runs right after in the alternation;
* ``ov_request``: OpenVINO's CPU plugin, 2 threads, one stream, latency hint, f32 (or its
  default precision), when the ``bench`` extra is installed;
* ``alternate``: every runtime once per round, back to back, ``pairs`` rounds after
  ``warmup`` rounds, the rounds going through every order of the runtimes (``orders``); ``median_ratio``: the median over rounds of the per-round ratio, which
  cancels the machine's slow drifts (other people's jobs) better than a ratio of medians;
* ``BusyCore``: one competing process spinning on a core while a block runs;
* ``peak_rss``: each runtime in a fresh process of its own (``python peers.py --child``):
  loads the model, runs it 3 times, reports its ``VmHWM`` (peak resident set); xrelay's
  modules with their bytecode written first (``compiled``), as an installed package has it
  and as onnxruntime's and numpy's are: a source tree run with ``PYTHONDONTWRITEBYTECODE=1``
  (or edited since its last run) has the child compile them, 2 MB more peak for SqueezeNet;
* ``load``: the load average printed beside every figure;
* ``core_speeds``: each core's speed of the moment relative to the fastest, printed beside
  it: on a virtual machine a core can run at half speed for seconds while the host gives
  its time (or its physical core's other hyperthread) to someone else, with a load average
  of this machine's own work only, and a runtime that cuts its work statically between two
  threads then runs at the slow core's pace.
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping

import numpy as np

SPIN = os.environ.get("XRELAY_BENCH_ORT_SPIN", "0") == "1"


def ort_session(
    model_bytes: bytes, spin: bool = SPIN, profile_prefix: str | None = None, threads: int = 2
):
    """onnxruntime as the benchmarks run it (``threads`` intra-op threads); ``profile_prefix``:
    with its profiler on, the trace written under that prefix (``end_profiling``)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    if profile_prefix is not None:
        so.enable_profiling = True
        so.profile_file_prefix = profile_prefix
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    if not spin:
        # Spinning pool threads would steal the cores from the BLAS threads of the other
        # runtime that runs right after in the A/B alternation.
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])


class BusyCore:
    """A process spinning on one core while the block runs; with ``seconds``, only for the
    block's first ``seconds`` (a load that passes: the block starts once it spins)."""

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = seconds

    def __enter__(self) -> BusyCore:
        code = "while True: pass"
        if self.seconds is not None:
            code = f"import time\nend = time.monotonic() + {float(self.seconds)!r}\nwhile time.monotonic() < end: pass"
        self.proc = subprocess.Popen([sys.executable, "-c", code])
        time.sleep(0.2 if self.seconds is None else 0.05)  # let it get scheduled
        return self

    def __exit__(self, *exc) -> None:
        self.proc.kill()
        self.proc.wait()


def ov_request(onnx_path: str, precision: str | None = "f32"):
    """OpenVINO's CPU plugin with 2 threads, one stream (latency), at float32 (or, with
    ``precision=None``, at its default precision: bf16 on a CPU with AVX512_BF16), or None
    when the ``openvino`` package (the ``bench`` extra) is missing."""
    try:
        import openvino as ov
    except ImportError:
        return None
    core = ov.Core()
    config = {"INFERENCE_NUM_THREADS": 2, "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY"}
    if precision is not None:
        config["INFERENCE_PRECISION_HINT"] = precision
    compiled = core.compile_model(core.read_model(onnx_path), "CPU", config)
    return compiled.create_infer_request()


def other_threads_running() -> bool | None:
    """Whether a thread of this process other than the calling one is running (state ``R``
    in ``/proc/self/task/*/stat``), or None where /proc cannot tell."""
    me = str(threading.get_native_id())
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return None
    for tid in tasks:
        if tid == me:
            continue
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue  # a thread that ended meanwhile
        if state == "R":
            return True
    return False


def settle_other_threads(quiet_checks: int = 20, limit_s: float = 0.5) -> float:
    """Busy-wait (keeping this core awake) until no other thread of the process has been
    running for ``quiet_checks`` checks in a row: onnxruntime's spinning workers after a run.
    Returns the seconds waited; without /proc, waits a fixed 60 ms (the tail measured here
    is about 40 ms)."""
    start = time.perf_counter()
    quiet = 0
    while time.perf_counter() - start < limit_s and quiet < quiet_checks:
        running = other_threads_running()
        if running is None:
            while time.perf_counter() - start < 0.06:
                pass
            break
        quiet = 0 if running else quiet + 1
    return time.perf_counter() - start


def errors(out: np.ndarray, ref: np.ndarray) -> tuple[float, float]:
    """Largest absolute difference, and relative to the reference's largest magnitude."""
    err = float(np.max(np.abs(out.astype(np.float64) - ref)))
    return err, err / max(float(np.max(np.abs(ref))), 1e-30)


def child(runtime: str, paths: list[str], inputs_path: str) -> None:
    """Run in a fresh process: load the model, run it 3 times, print peak RSS (bytes)."""
    import resource  # noqa: F401  (fallback where /proc is missing)

    data = np.load(inputs_path)
    inputs = {k: data[k] for k in data.files}
    if runtime == "ort":
        with open(paths[0], "rb") as f:
            sess = ort_session(f.read())
        for _ in range(3):
            sess.run(None, inputs)
    elif runtime == "ov":
        req = ov_request(paths[0])
        for _ in range(3):
            req.infer(inputs)
    else:
        import xrelay.runtime

        m = xrelay.runtime.load(*paths)
        m.set_input(**inputs)
        for _ in range(3):
            m.run()
    # VmHWM starts afresh at exec; ru_maxrss would carry the parent's peak across fork+exec.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                peak = int(line.split()[1]) * 1024
    print(json.dumps({"maxrss": peak, "numba": "numba" in sys.modules}))


def has_openvino() -> bool:
    import importlib.util

    return importlib.util.find_spec("openvino") is not None




def alternate(
    peers: Mapping[str, Callable[[], object]], pairs: int, warmup: int
) -> dict[str, list[float]]:
    """Seconds of each peer in each of ``pairs`` rounds (after ``warmup`` rounds), every
    peer once per round, back to back, the rounds going through every order of the peers in
    turn (``orders``): a runtime whose threads keep spinning for a while after its run
    (OpenVINO's) slows whichever runs next, and in a fixed order that was always the same
    peer."""
    times: dict[str, list[float]] = {k: [] for k in peers}
    clock = time.perf_counter
    sequence = orders(list(peers))
    for i in range(warmup + pairs):
        round_times = {}
        for k in sequence[(i - warmup) % len(sequence)]:
            t = clock()
            peers[k]()
            round_times[k] = clock() - t
        if i >= warmup:
            for k, b in round_times.items():
                times[k].append(b)
    return times


def orders(names: list[str]) -> list[tuple[str, ...]]:
    """The orders of one round each, in turn: every permutation of ``names`` (2 peers: A B,
    B A; 3 peers: the 6 orders), so over a whole turn each peer runs right after each other
    one, and first, equally often.

    >>> orders(["x", "o"])
    [('x', 'o'), ('o', 'x')]
    >>> sum(o.index("x") == o.index("v") + 1 for o in orders(["x", "o", "v"]))
    2
    """
    return list(itertools.permutations(names))


def median_ratio(times: Mapping[str, list[float]], a: str, b: str) -> float | None:
    """Median over rounds of ``a``'s time divided by ``b``'s in the same round."""
    if a not in times or b not in times:
        return None
    return statistics.median([x / y for x, y in zip(times[a], times[b])])


def compiled(package_dir: str) -> None:
    """Write the bytecode of the modules under ``package_dir`` where it is missing or stale,
    as installing a package does (hidden directories, a source tree's virtual environments,
    are left out)."""
    import compileall

    for root, dirs, files in os.walk(package_dir):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        for f in files:
            if f.endswith(".py"):
                compileall.compile_file(os.path.join(root, f), quiet=2)


def peak_rss(runtime: str, paths: list[str], inputs: Mapping[str, np.ndarray], tmp: str) -> int:
    """Peak resident bytes of a fresh process that loads ``paths`` with ``runtime``
    (``ort``: an .onnx file; ``ov``: the same through OpenVINO; ``xrelay``: the exported
    ``graph.json, lib.mlir, params.npz``) and runs it 3 times on ``inputs``."""
    if runtime == "xrelay":
        import xrelay

        compiled(os.path.dirname(os.path.abspath(xrelay.__file__)))
    inputs_path = os.path.join(tmp, "inputs.npz")
    if not os.path.exists(inputs_path):
        np.savez(inputs_path, **inputs)
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", runtime, inputs_path, *paths],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"peak-RSS child for {runtime} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])["maxrss"]


def load() -> str:
    """The 1-, 5- and 15-minute load averages, as ``uptime`` prints them."""
    return "load average " + ", ".join(f"{v:.2f}" for v in os.getloadavg())


def _core_work(cpu: int) -> None:
    """A fixed amount of work for one core: elementwise products of a 16 KB array (in L1)
    and the interpreter's own work between them."""
    a = np.ones(4096, np.float32)
    for _ in range(3000):
        np.multiply(a, 1.0000001, out=a)


def core_speeds(samples: int = 5, work: Callable[[int], None] = _core_work) -> dict[int, float]:
    """Each CPU this process may run on, by its speed relative to the fastest: the calling
    thread pinned to each in turn runs ``work(cpu)`` ``samples`` times (the median time
    counts); its affinity is restored after. ``{}`` where affinity cannot be set."""
    if not hasattr(os, "sched_setaffinity"):
        return {}
    allowed = os.sched_getaffinity(0)
    seconds: dict[int, float] = {}
    try:
        for cpu in sorted(allowed):
            os.sched_setaffinity(0, {cpu})
            times = []
            for _ in range(samples):
                t = time.perf_counter()
                work(cpu)
                times.append(time.perf_counter() - t)
            seconds[cpu] = statistics.median(times)
    finally:
        os.sched_setaffinity(0, allowed)
    fastest = min(seconds.values())
    return {cpu: fastest / s for cpu, s in seconds.items()}


def cores() -> str:
    """``core_speeds`` as printed beside the load: ``cores 1.00/0.48`` (CPU 0, CPU 1, ...)."""
    speeds = core_speeds()
    return "cores " + ("/".join(f"{v:.2f}" for _, v in sorted(speeds.items())) if speeds else "-")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        runtime, inputs_path, *paths = sys.argv[2:]
        child(runtime, paths, inputs_path)
