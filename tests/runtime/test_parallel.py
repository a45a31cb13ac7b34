"""The executor's own parallelism: chunked kernels give the same bits for any thread count and
equal the memory interpreter run with the same kernels; the worker pool runs every chunk once,
reports errors, falls back to serial when busy and picks the faster way per job; the C
epilogue, max-pool and im2col kernels follow numpy's rules bit for bit."""

from __future__ import annotations

import functools
import threading
import tracemalloc
import types

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.backend.build import build_program
from xrelay.frontends.onnx import from_onnx
from xrelay.runtime.executor import Executor, ExecutorError, run_memory_compiled
from xrelay.runtime.memory_interpreter import run_memory
from xrelay.runtime.native import library as native
from xrelay.runtime.native.fast_kernels import (
    _OUT,
    CHUNKS_PER_THREAD,
    Options,
    epilogue_chunk,
    epilogue_thunks,
    even_ranges,
)
from xrelay.runtime.parallel import Job, WorkerPool, default_threads
from xrelay.testing import onnx_models, platform


@functools.cache
def _resnet(image: int):
    return build_program(*from_onnx(onnx_models.resnet18(image=image, num_classes=10)))[0]


@functools.cache
def _mobilenet():
    model = onnx_models.mobilenet_v2(image=64, num_classes=10, width=0.5)
    return build_program(*from_onnx(model))[0]


def _outputs(ex: Executor, x: np.ndarray) -> list[np.ndarray]:
    np.copyto(ex.input_buffers[0], x)
    ex.run()
    return [o.copy() for o in ex.outputs]


class _FinePool(WorkerPool):
    """Always runs a job's finest cut."""

    def _choose(self, job: Job) -> int:
        return len(job.cuts)


def _two_thread_executor_with_a_pool_job(pool: WorkerPool) -> Executor:
    ex = Executor(_resnet(32), threads=pool, use_c_kernels=True)
    assert ex._thunks_one is not None
    return ex


def _jobs(ex: Executor) -> list[Job]:
    return [
        t.args[0]
        for _, _, c in ex.steps
        for _, _, t in c.thunks
        if isinstance(t, functools.partial) and isinstance(t.args[0], Job)
    ]


def _same(a, b) -> bool:
    """Chunked against whole steps: the same bits where numpy's float32 product (OpenBLAS)
    gives a row the same bits wherever a call's rows start (AVX-512); on AVX2 CPUs it does
    not (``xrelay.testing.platform.blas_splits_exact``), so there within float32 rounding."""
    if platform.blas_splits_exact():
        return np.array_equal(a, b)
    return np.allclose(a, b, rtol=1e-5, atol=1e-5 * float(np.max(np.abs(b))))


@pytest.mark.parametrize(("use_c_kernels", "winograd"), [(True, True), (True, False), (False, False)])
def test_resnet_chunks_bitwise_for_any_thread_count(use_c_kernels, winograd, monkeypatch):
    monkeypatch.setenv("XRELAY_WINOGRAD", "1" if winograd else "0")
    program = _resnet(128)
    x = np.random.default_rng(0).standard_normal((1, 3, 128, 128)).astype("float32")
    one = Executor(program, threads=1, use_c_kernels=use_c_kernels)
    assert not _jobs(one)
    # The 3x3 stride-1 convolutions with 16 tiles or more (layer1-3's, not the first of a
    # stage, which has stride 2, nor layer4's 4x4 images) run as Winograd.
    assert sum(len(c.winograd) for _, _, c in one.steps) == (10 if winograd else 0)
    expect = _outputs(one, x)
    for threads in (2, 3):
        # A non-adaptive pool: every job really runs its chunks on the threads.
        pool = WorkerPool(threads, adaptive=False)
        ex = Executor(program, threads=pool, use_c_kernels=use_c_kernels)
        jobs = _jobs(ex)
        # Convolutions cut by output rows (big images) and by output channels (small ones);
        # Winograd ones here in three phases (no image is large enough for a cut by tile
        # rows, which test_winograd covers), each cut per thread.
        assert len(jobs) >= 10 and max(len(j) for j in jobs) == CHUNKS_PER_THREAD * threads
        before, team = pool.stats["parallel"], ex.chooser.stats[0]
        for _ in range(3):  # the all-threads program, then the one-thread one twice (RunChooser)
            got = _outputs(ex, x)
            assert all(_same(a, b) for a, b in zip(got, expect))
        team = ex.chooser.stats[0] - team
        assert team >= 1 and pool.stats["parallel"] - before == team * len(jobs)
    # The fine cuts (several chunks per thread) too.
    fine_pool = _FinePool(2)
    ex = Executor(program, threads=fine_pool, use_c_kernels=use_c_kernels)
    assert max(len(j.cuts[-1]) for j in _jobs(ex)) > 2
    got = _outputs(ex, x)
    assert all(_same(a, b) for a, b in zip(got, expect))
    assert fine_pool.stats["parallel"] >= len(_jobs(ex))
    # The memory interpreter (poisoned arenas) with the same chunked kernels.
    if use_c_kernels:
        ref = run_memory_compiled(program, {"data": x}, threads=WorkerPool(2, adaptive=False))
    else:
        ref = run_memory(program, {"data": x})  # the reference kernels themselves
    assert all(_same(a, b) for a, b in zip(ref, expect))


def test_mobilenet_depthwise_chunks_bitwise():
    program = _mobilenet()
    x = np.random.default_rng(1).standard_normal((1, 3, 64, 64)).astype("float32")
    expect = _outputs(Executor(program, threads=1), x)
    ex = Executor(program, threads=WorkerPool(2, adaptive=False))
    assert any(fam == "depthwise" for _, _, c in ex.steps for _, fam, _ in c.thunks)
    assert np.array_equal(_outputs(ex, x)[0], expect[0])
    ref = run_memory_compiled(program, {"data": x}, threads=2)
    assert np.array_equal(ref[0], expect[0])


def test_parallel_run_allocates_no_activation_memory():
    program = _resnet(128)
    ex = Executor(program, threads=WorkerPool(2, adaptive=False))
    assert ex.scratch_bytes == 0 and ex.external_bytes == 0
    np.copyto(ex.input_buffers[0], np.random.default_rng(4).standard_normal((1, 3, 128, 128)))
    ex.run()
    tracemalloc.start()
    try:
        ex.run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    largest = max(v.nbytes for v in ex.tensor_views.values())
    assert largest >= 64 * 64 * 64 * 4
    # Pool bookkeeping and numba's argument boxing only: far below any activation.
    assert peak < 32 * 1024, peak


def test_build_threads_argument():
    mod, params = from_onnx(onnx_models.resnet18(image=32, num_classes=10))
    x = np.random.default_rng(2).standard_normal((1, 3, 32, 32)).astype("float32")
    a = xrelay.build(mod, params, threads=1)
    b = xrelay.build(mod, params, threads=2)
    assert a.executor.threads == 1 and b.executor.threads == 2
    a.run(data=x)
    b.run(data=x)
    assert np.array_equal(a.get_output(0), b.get_output(0))
    b.load_params(b.save_params())  # rebinding keeps the thread count
    assert b.executor.threads == 2
    with pytest.raises(ExecutorError, match="threads must be a positive integer"):
        Executor(_resnet(32), threads=0)


def test_default_threads_honours_tvm_num_threads(monkeypatch):
    monkeypatch.setenv("TVM_NUM_THREADS", "3")
    assert default_threads() == 3
    monkeypatch.setenv("TVM_NUM_THREADS", "many")
    with pytest.raises(ValueError, match="TVM_NUM_THREADS must be a positive integer"):
        default_threads()
    monkeypatch.delenv("TVM_NUM_THREADS")
    assert default_threads() >= 1


# --------------------------------------------------------------------------------------------
# The worker pool
# --------------------------------------------------------------------------------------------


def test_pool_runs_every_chunk_once_on_several_threads():
    pool = WorkerPool(3, adaptive=False)
    seen: list[tuple[int, str]] = []
    lock = threading.Lock()
    gate = threading.Barrier(2, timeout=10)

    def chunk(i: int) -> None:
        if i < 2:
            gate.wait()  # the first two chunks only finish when two threads run them at once
        with lock:
            seen.append((i, threading.current_thread().name))

    job = Job([functools.partial(chunk, i) for i in range(7)])
    for _ in range(3):
        seen.clear()
        pool.run(job)
        assert sorted(i for i, _ in seen) == list(range(7))
        assert len({name for _, name in seen}) >= 2


def test_pool_reraises_a_chunk_error_after_all_chunks():
    pool = WorkerPool(2, adaptive=False)
    ran = []

    def bad() -> None:
        raise KeyError("chunk 1")

    job = Job([lambda: ran.append(0), bad, lambda: ran.append(2), lambda: ran.append(3)])
    with pytest.raises(KeyError, match="chunk 1"):
        pool.run(job)
    assert sorted(ran) == [0, 2, 3]
    pool.run(Job([lambda: ran.append(9)] * 2))  # the pool still works
    assert ran.count(9) == 2


def test_busy_pool_runs_a_nested_job_serially():
    pool = WorkerPool(2, adaptive=False)
    order: list[str] = []
    inner = Job(
        [lambda: order.append("a"), lambda: order.append("b")],
        serial=lambda: order.append("inner serial"),
    )
    pool.run(Job([lambda: pool.run(inner), lambda: None]))
    assert order == ["inner serial"]


def test_adaptive_choice_follows_the_measured_times():
    pool = WorkerPool(2)
    job = Job([lambda: None] * 2, fine=[lambda: None] * 8)
    assert len(job.cuts) == 2
    # Every way is measured first: the coarse cut, the fine cut, then serially.
    for mode, seconds in ((1, 5e-3), (2, 4e-3), (0, 1e-3)):
        assert pool._choose(job) == mode
        pool._record(job, mode, seconds)
    choices = [pool._choose(job) for _ in range(32)]
    # Serial is fastest: serial, except one exploring run in every EXPLORE_EVERY, which
    # tries the two parallel cuts in turn.
    explore = 32 // WorkerPool.EXPLORE_EVERY
    assert choices.count(0) == 32 - explore
    assert sorted(c for c in choices if c) == [1] * (explore // 2) + [2] * (explore // 2)
    # The machine gets quiet: the coarse cut measures fastest and wins.
    for _ in range(10):
        pool._record(job, 1, 0.2e-3)
    choices = [pool._choose(job) for _ in range(32)]
    assert choices.count(1) == 32 - explore
    # Without adaptation: always the coarse cut.
    assert WorkerPool(2, adaptive=False)._choose(job) == 1
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        WorkerPool(0)


def test_pool_runs_the_fine_cut_once_each():
    pool = WorkerPool(2)
    ran: list[str] = []
    job = Job(
        [lambda: ran.append("c0"), lambda: ran.append("c1")],
        serial=lambda: ran.append("s"),
        fine=[functools.partial(ran.append, f"f{i}") for i in range(5)],
    )
    for expect in (["c0", "c1"], [f"f{i}" for i in range(5)], ["s"]):
        ran.clear()
        pool.run(job)
        assert sorted(ran) == expect


def test_ranges_are_deterministic_and_cover():
    assert even_ranges(10, 4) == [(0, 2), (2, 5), (5, 8), (8, 10)]
    assert even_ranges(128, 4, 16) == [(0, 32), (32, 64), (64, 96), (96, 128)]
    assert even_ranges(3, 8) == [(0, 1), (1, 2), (2, 3)]
    assert even_ranges(5, 1) == [(0, 5)]


# --------------------------------------------------------------------------------------------
# numba kernels against numpy's rules
# --------------------------------------------------------------------------------------------


def _special(shape, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape).astype("float32")
    flat = a.reshape(-1)
    flat[::7] = np.nan
    flat[1::11] = -0.0
    flat[2::13] = 0.0
    flat[3::17] = np.inf
    return a


def _epilogue_both_ways(epilogue, out):
    expect = out.copy()
    with np.errstate(all="ignore"):
        for t in epilogue_thunks(epilogue, expect, ()):
            t()
    got = out.copy()
    opts = Options(use_c_kernels=True)
    # Chunks of channels and rows per image, as the pool would cut them.
    for b in range(out.shape[0]):
        for chans, rows in (((0, 3), (0, 6)), ((3, 5), (0, 2)), ((3, 5), (2, 6))):
            thunks = epilogue_chunk(epilogue, got, b, chans, rows, opts)
            assert len(thunks) == -(-len(epilogue) // 4)  # four ops per kernel call
            for t in thunks:
                t()
    assert np.array_equal(got, expect, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(expect))


_SHAPE = (2, 5, 6, 7)
_OTHERS = {
    "per-channel": _special((5, 1, 1), 1),
    "full": _special(_SHAPE, 2),
    "row": _special((1, 1, 7), 3),
    "zero": np.zeros((), "float32"),
    "minus-zero": np.asarray(-0.0, "float32"),
}


@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("other", list(_OTHERS))
@pytest.mark.parametrize("uf", [np.add, np.subtract, np.multiply, np.maximum, np.minimum])
def test_epilogue_kernel_op_is_numpy_bit_for_bit(uf, other, swap):
    value = _OTHERS[other]
    out = _special(_SHAPE, 0)
    # Ties of signed zeros with the other operand, where np.maximum's choice shows.
    out.reshape(-1)[4::9] = -0.0 if other != "minus-zero" else 0.0
    _epilogue_both_ways([(uf, value, _OUT) if swap else (uf, _OUT, value)], out)


def test_epilogue_kernel_chain_is_numpy_bit_for_bit():
    bias, res = _OTHERS["per-channel"], _OTHERS["full"]
    zero, six = np.zeros((), "float32"), np.asarray(6, "float32")
    epilogue = [
        (np.add, _OUT, bias), (np.subtract, res, _OUT), (np.multiply, _OUT, bias),
        (np.maximum, _OUT, zero), (np.minimum, _OUT, six), (np.add, _OUT, _OUT),
        (np.maximum, res, _OUT), (np.minimum, _OUT, res), (np.subtract, _OUT, bias),
    ]  # fmt: skip
    _epilogue_both_ways(epilogue, _special(_SHAPE, 4))


def _kernel_set():
    kernels = native.native_kernels()
    assert kernels is not None, "the C kernels did not build (is there a C compiler?)"
    return kernels


def test_loop_kernels_max_pool_and_im2col_match_numpy():
    k = _kernel_set()
    x = _special((3, 9, 10), 3)
    # 3x3, stride 2, padding 1, dilation 1 and 2.
    for dil in (1, 2):
        oh, ow = 5, 5
        got = np.empty((3, oh, ow), "float32")
        k["max_pool"](x, got, 0, 3, 3, 3, 2, 2, dil, dil, 1, 1)
        padded = np.full((3, 9 + 2 + 4, 10 + 2 + 4), -np.inf, "float32")
        padded[:, 1:10, 1:11] = x
        expect = np.full((3, oh, ow), -np.inf, "float32")
        for i in range(3):
            for j in range(3):
                tap = padded[:, i * dil : i * dil + 2 * oh : 2, j * dil : j * dil + 2 * ow : 2]
                np.maximum(expect, tap, out=expect)
        assert np.array_equal(got, expect, equal_nan=True)
        assert np.array_equal(np.signbit(got), np.signbit(expect))
        cols = np.full((3 * 9, oh * ow), 7.0, "float32")
        k["gather"](x, cols, 0, 3, 0, oh, oh, ow, 3, 3, 2, 2, dil, dil, 1, 1)
        zeros = np.zeros((3, 9 + 2 + 4, 10 + 2 + 4), "float32")
        zeros[:, 1:10, 1:11] = x
        expect_cols = np.stack(
            [
                zeros[c, i * dil : i * dil + 2 * oh : 2, j * dil : j * dil + 2 * ow : 2].reshape(-1)
                for c in range(3)
                for i in range(3)
                for j in range(3)
            ]
        )
        assert np.array_equal(cols, expect_cols, equal_nan=True)


def test_max_pool_kernel_equals_reference_in_a_model():
    x = relay.var("x", shape=(1, 4, 11, 11), dtype="float32")
    y = relay.nn.max_pool2d(x, pool_size=(3, 3), strides=(2, 2), padding=(1, 1), ceil_mode=True)
    mod = xrelay.IRModule.from_expr(relay.Function([x], y))
    data = _special((1, 4, 11, 11), 5)
    outs = []
    for use_c_kernels in (False, True):
        m = xrelay.build(mod, use_c_kernels=use_c_kernels)
        m.run(x=data)
        outs.append(m.get_output(0))
    assert outs[0].shape == (1, 4, 6, 6)
    assert np.array_equal(outs[0], outs[1], equal_nan=True)
    assert np.array_equal(np.signbit(outs[0]), np.signbit(outs[1]))


@pytest.mark.parametrize(
    "shape, stride, pad",
    [((3, 9, 10), 1, 1), ((3, 9, 10), 2, 1), ((2, 7, 7), 1, 0), ((2, 8, 5), 2, 0),
     ((2, 3, 3), 1, 1), ((2, 2, 2), 2, 1), ((1, 6, 11), 3, 1)],
)  # fmt: skip
def test_depthwise3x3_equals_the_generic_kernel(shape, stride, pad):
    k = _kernel_set()
    c, h, w = shape
    x = _special(shape, 6)
    wt = np.random.default_rng(7).standard_normal((c, 1, 3, 3)).astype("float32")
    oh, ow = (h + 2 * pad - 3) // stride + 1, (w + 2 * pad - 3) // stride + 1
    a = np.full((c, oh, ow), 5.0, "float32")
    b = np.full((c, oh, ow), -5.0, "float32")
    k["depthwise"](x, wt, a, 0, c, stride, stride, 1, 1, pad, pad)
    k["depthwise3x3"](x, wt, b, 0, c, stride, stride, pad, pad)
    assert np.array_equal(a, b, equal_nan=True)
    # And both are the convolution (a NaN-free input against a float64 reference).
    x = np.nan_to_num(x, posinf=3.0)
    k["depthwise3x3"](x, wt, b, 0, c, stride, stride, pad, pad)
    xp = np.pad(x.astype("float64"), ((0, 0), (pad, pad), (pad, pad)))
    ref = sum(
        wt[:, 0, i, j, None, None]
        * xp[:, i : i + stride * (oh - 1) + 1 : stride, j : j + stride * (ow - 1) + 1 : stride]
        for i in range(3)
        for j in range(3)
    )
    np.testing.assert_allclose(b, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("stride", [1, 2, 3])
def test_generic_depthwise_dilated_is_the_convolution(stride):
    """The generic depthwise kernel, 5x5 with dilation 2 and padding 2, channels [1, c): the
    float64 convolution; channel 0 is not written."""
    k = _kernel_set()
    c, h = 4, 17
    x = np.random.default_rng(8).standard_normal((c, h, h)).astype("float32")
    wt = np.random.default_rng(9).standard_normal((c, 1, 5, 5)).astype("float32")
    o = (h + 4 - 9) // stride + 1
    got = np.full((c, o, o), 3.0, "float32")
    k["depthwise"](x, wt, got, 1, c, stride, stride, 2, 2, 2, 2)
    xp = np.pad(x.astype("float64"), ((0, 0), (2, 2), (2, 2)))
    ref = sum(
        wt[:, 0, i, j, None, None]
        * xp[:, 2 * i : 2 * i + stride * (o - 1) + 1 : stride, 2 * j : 2 * j + stride * (o - 1) + 1 : stride]
        for i in range(5)
        for j in range(5)
    )
    assert np.all(got[0] == 3.0)
    np.testing.assert_allclose(got[1:], ref[1:], rtol=1e-5, atol=1e-5)


def test_strided_arrays_keep_to_numpy():
    """The C kernels refuse a non-contiguous array; the max-pool maker then builds numpy
    steps (there is no second compiled implementation), which give the reference's maxima."""
    from xrelay.kernels import KERNELS
    from xrelay.runtime.native.fast_kernels import fast_max_pool

    x = _special((1, 4, 9, 9), 13)[:, :, :, ::-1]  # not contiguous
    k = native.native_kernels()["max_pool"]
    with pytest.raises(native.NativeError, match="C-contiguous"):
        k.bind(x[0], np.empty((4, 5, 5), "float32"), 0, 4, 3, 3, 2, 2, 1, 1, 1, 1)
    attrs = {"layout": "NCHW", "out_layout": "", "pool_size": (3, 3), "strides": (2, 2),
             "dilation": (1, 1), "padding": (1, 1, 1, 1), "ceil_mode": False}  # fmt: skip
    out = np.full((1, 4, 5, 5), 7.0, "float32")
    thunks = fast_max_pool(types.SimpleNamespace(attrs=attrs), [x], out, None, Options(use_c_kernels=True))
    assert len(thunks) == 1 + 9 + 1  # fill, the nine taps with numpy, the padding floor
    for _, t in thunks:
        t()
    expect = KERNELS["nn.max_pool2d"](x, **attrs)
    assert np.array_equal(out, expect, equal_nan=True)


def test_native_kernels_can_be_disabled(monkeypatch, tmp_path):
    monkeypatch.setattr(native, "_STATE", {})
    monkeypatch.setenv("XRELAY_NATIVE", "0")
    assert native.native_kernels() is None
    # A fresh cache directory: the library is built there, then loaded from there.
    monkeypatch.setattr(native, "_STATE", {})
    monkeypatch.setenv("XRELAY_NATIVE", "1")
    monkeypatch.setenv("XRELAY_CACHE_DIR", str(tmp_path))
    assert native.native_kernels() is not None
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".so"]


def test_run_chooser_follows_the_measured_runs():
    """RunChooser: each mode's first run is not measured; the one-thread program runs (and is
    measured once) right after the all-threads program's first run, then the all-threads
    program until it is measured FIRST times; then the faster runs. On a quiet machine the
    one-thread program never runs again (an all-threads run under its estimate says it cannot
    win); SLOW_RUNS team runs in a row slower than the one-thread estimate make it measure
    that one at once, a
    load that stays moves the choice within a window of runs, and while one thread runs the
    all-threads program is re-measured after 2, 4, 8, then every EXPLORE_EVERY one-thread
    runs, and takes over again once the load has left."""
    from xrelay.runtime.parallel import RunChooser

    c = RunChooser()
    times = {0: 1.0, 1: 1.8}  # all threads faster: a quiet machine
    seen = []
    for _ in range(40):
        mode = c.choose()
        seen.append(mode)
        c.record(mode, times[mode])
    assert seen[:5] == [0, 1, 1, 0, 0], seen
    assert seen[5:].count(1) == 0, seen
    c.record(0, 1.5)  # slower than its estimate, faster than one thread's: nothing to measure
    assert c.choose() == 0
    times[0] = 9.0  # a busy core: the team of two waits at every barrier
    for _ in range(RunChooser.SLOW_RUNS):  # slower than one thread's estimate, SLOW_RUNS in a row
        mode = c.choose()
        c.record(mode, times[mode])
        assert mode == 0
    assert c.choose() == 1  # then one thread is measured at once
    c.record(1, times[1])
    seen = []
    for _ in range(56):  # one thread runs from now on, all threads re-measured now and then
        mode = c.choose()
        seen.append((c.runs, mode))
        c.record(mode, times[mode])
    teams = [runs for runs, mode in seen if mode == 0]
    gaps = [b - a - 1 for a, b in zip(teams, teams[1:])]  # one-thread runs between them
    assert gaps[-5:] == [2, 4, 8, 16, 16], seen
    times[0] = 1.0  # the load left: the next re-measurement brings the threads back
    modes = []
    for _ in range(RunChooser.EXPLORE_EVERY + 1):
        modes.append(c.choose())
        c.record(modes[-1], times[modes[-1]])
    assert modes.index(0) < RunChooser.EXPLORE_EVERY + 1 and set(modes[modes.index(0) :]) == {0}, modes
    times[0] = 9.0  # a second load: the re-measurements start again at two runs apart
    seen = []
    for _ in range(20):
        mode = c.choose()
        seen.append((c.runs, mode))
        c.record(mode, times[mode])
    teams = [runs for runs, mode in seen if mode == 0]
    assert [b - a - 1 for a, b in zip(teams, teams[1:])][-3:] == [1, 2, 4], seen


def test_run_chooser_is_not_sent_to_the_slower_mode_by_one_slow_run():
    """One run of the faster mode slowed by something passing (its first measured run here,
    3x its usual time, slower than the one-thread program) does not make the one-thread
    program run: the estimate is the least of the last WINDOW times, measured FIRST times
    before the first choice."""
    from xrelay.runtime.parallel import RunChooser

    c = RunChooser()
    seen = []
    for _ in range(40):
        mode = c.choose()
        seen.append(mode)
        c.record(mode, 3.0 if (mode == 0 and c.stats[0] == 1) else {0: 1.0, 1: 1.8}[mode])
    assert seen[:3] == [0, 1, 1] and seen[3:].count(1) == 0, seen


def test_run_chooser_leaves_out_the_runs_in_which_the_jobs_measure_their_ways():
    """The all-threads program's first runs try each pool job's cuts and serial way once
    (the slower ones too); those runs (``settled`` False) are not its estimate: here the
    first three take 2x the settled time, the one-thread program 1.5x, and the all-threads program
    runs from the first choice on (counting them sent the model to one thread)."""
    from xrelay.runtime.parallel import RunChooser

    c = RunChooser()
    seen = []
    for _ in range(40):
        mode = c.choose()
        seen.append(mode)
        exploring = mode == 0 and c.stats[0] < 3  # the first three all-threads runs
        c.record(mode, {0: 2.0 if exploring else 1.0, 1: 1.5}[mode], settled=not exploring)
    assert seen[:7] == [0, 1, 1, 0, 0, 0, 0], seen
    assert seen[7:].count(1) == 0, seen


def _recorded_runs(monkeypatch) -> list:
    """Every RunChooser.record call from now on, as (mode, settled, idle), the chooser still
    recording them."""
    from xrelay.runtime import parallel

    calls = []
    real = parallel.RunChooser.record

    def record(self, mode, seconds, settled=True, idle=None):
        calls.append((mode, settled, idle))
        real(self, mode, seconds, settled, idle)

    monkeypatch.setattr(parallel.RunChooser, "record", record)
    return calls


def test_executor_does_not_time_the_runs_in_which_its_jobs_measure_their_ways(monkeypatch):
    """Executor.run tells its RunChooser which runs had a pool job run a way it had never
    measured (``WorkerPool.first_ways`` moved): those runs are not the all-threads
    program's time."""
    from xrelay.runtime import parallel

    calls = _recorded_runs(monkeypatch)
    pool = parallel.WorkerPool(2)
    ex = _two_thread_executor_with_a_pool_job(pool)
    ways = []
    for _ in range(12):
        before = pool.first_ways
        ex.run()
        ways.append(pool.first_ways - before)
    assert any(ways[:4]) and not any(ways[6:]), ways  # the jobs explored in the first runs
    assert [s for _, s, _ in calls] == [w == 0 for w in ways], (calls, ways)
    assert len(ex.chooser.samples[0]) == min(parallel.RunChooser.WINDOW, sum(1 for (m, s, _) in calls[1:] if m == 0 and s))


def test_run_chooser_takes_the_threads_back_soon_after_a_load_at_the_start():
    """A load while the all-threads program takes its first estimates (both slower than one
    thread) sends the model to one thread; once the load has left, the all-threads program
    is measured again within two runs and runs from then on."""
    from xrelay.runtime.parallel import RunChooser

    c = RunChooser()
    seen = []
    for run in range(20):
        mode = c.choose()
        seen.append(mode)
        c.record(mode, {0: 3.0 if run < 6 else 1.0, 1: 1.8}[mode])
    assert seen[:5] == [0, 1, 1, 0, 0] and seen[5:8] == [1, 1, 0], seen
    assert set(seen[8:]) == {0}, seen


def _script(chooser, runs: int, times, idle) -> list[int]:
    """Drive ``chooser`` for ``runs`` runs with scripted times: ``times(run, mode)`` seconds,
    ``idle(run, seconds)`` the other cores' idle seconds during a one-thread run (a fake
    clock: nothing is timed)."""
    seen = []
    for run in range(runs):
        mode = chooser.choose()
        seen.append(mode)
        seconds = times(run, mode)
        chooser.record(mode, seconds, idle=idle(run, seconds) if mode == 1 else None)
    return seen


def test_run_chooser_takes_the_threads_back_when_the_other_cores_idle_after_a_slow_start():
    """A load through the first 16 runs (the all-threads program 54 ms, one thread 20 ms,
    11 ms for all threads once it left: the zoo's ResNet-18 with a busy core for its first
    second) sends the model to one thread; once the other core is seen idle through
    FREE_SECONDS of one-thread runs, the all-threads program is measured and runs from then
    on: within 4 runs of the load's end (the schedule alone waits 2, 4, then 8 one-thread
    runs, here the one-thread program still runs 5 runs after it)."""
    from xrelay.runtime.parallel import RunChooser

    load = 16

    def times(run, mode):
        return (0.054 if run < load else 0.011) if mode == 0 else 0.020

    def idle(run, seconds):
        return 0.0 if run < load else seconds  # one other core, idle once the load left

    c = RunChooser(spare=1)
    seen = _script(c, 40, times, idle)
    # the load's first estimate: the team slower while the other core was seen busy
    assert seen[3:7] == [0, 1, 1, 1], seen
    assert 1 in seen[load - 3 : load] and set(seen[load + 4 :]) == {0}, seen
    assert c.reasons.get("free", 0) == 1, c.reasons
    # Without the idle signal (no /proc/stat), only the schedule brings it back, later.
    c = RunChooser(spare=1)
    seen = _script(c, 40, times, lambda run, seconds: None)
    assert seen[load + 4] == 1 and "free" not in c.reasons, seen


def test_run_chooser_keeps_one_thread_under_a_load_that_stays():
    """A busy core from the start. Without the idle signal (no /proc/stat) the one-thread
    program runs and the all-threads program only at the schedule's re-measurements (2, 4,
    8, 16, 16 ... runs apart). With the signal showing the other core busy, the first team
    run slower than one thread confirms it: no second first estimate, and the team is
    re-measured only every EXPLORE_EVERY runs (the zoo's --busy rounds ran the team, 1.3-1.5x
    slower, in 3 of its 15 timed rounds; now in none). Where the idle signal is false (the
    cores look idle, the team stays slow: a container's /proc/stat), each re-measurement it
    causes doubles the one-thread time it waits for: the team then runs in under a tenth of
    the runs, as with the schedule."""
    from xrelay.runtime.parallel import RunChooser

    def times(run, mode):
        return 0.054 if mode == 0 else 0.020

    def gaps(seen):
        teams = [i for i, m in enumerate(seen) if m == 0]
        return [b - a - 1 for a, b in zip(teams, teams[1:])]

    c = RunChooser(spare=1)
    seen = _script(c, 80, times, lambda run, seconds: None)
    assert gaps(seen)[2:6] == [2, 4, 8, 16] and set(gaps(seen)[6:]) == {16}, (gaps(seen), seen)
    c = RunChooser(spare=1)
    seen = _script(c, 80, times, lambda run, seconds: 0.0)
    assert seen[:4] == [0, 1, 1, 0] and gaps(seen)[0] == 2, seen
    assert set(gaps(seen)[1:]) == {RunChooser.EXPLORE_EVERY}, (gaps(seen), seen)
    assert c.reasons["first"] == 4 and "free" not in c.reasons, c.reasons  # one team estimate
    c = RunChooser(spare=1)
    seen = _script(c, 400, times, lambda run, seconds: seconds)  # looks idle, is not
    assert c.free_after > RunChooser.FREE_SECONDS and c.reasons["free"] >= 3, c.reasons
    assert seen[100:].count(0) <= 300 * 0.1, seen[100:].count(0)


def test_run_chooser_measures_one_thread_again_when_a_load_makes_its_estimate_stale():
    """ViT-B/16 in a zoo ``--busy`` run: the one-thread program's one measured run came out
    slow (3.0, something passing), so when the busy process slowed the team to 2.2 (its
    least 1.0) the team stayed "faster" than that estimate and ran on, while one thread took
    1.7. After SLOW_RUNS team runs over STALE times its least, the one-thread program is
    measured once more and runs from then on; once only for that load (a team still faster
    than the fresh estimate is not made to measure it at every run); a team under STALE
    times its least (a core at half speed) makes no extra run."""
    from xrelay.runtime.parallel import RunChooser

    load = 8

    def times(run, mode):
        if mode == 1:
            return 3.0 if run < 3 else 1.7
        return 1.0 if run < load else 2.2

    c = RunChooser(spare=1)
    seen = _script(c, 30, times, lambda run, seconds: None)
    assert seen[:5] == [0, 1, 1, 0, 0] and seen[5:load].count(1) == 0, seen
    # the load's first two team runs are slow, then one thread is measured and kept
    assert seen[load : load + 3] == [0, 0, 1], seen
    # then one thread, the team re-measured now and then (its window forgets its quiet runs)
    assert c.reasons.get("stale") == 1 and seen[-15:].count(1) >= 12, (c.reasons, seen)

    # a team still faster than the fresh one-thread time: measured once for each load (runs
    # 8-19 and from 26), not at every run
    def team_wins(run, mode):
        return (2.5 if load <= run < 20 or run >= 26 else 1.0) if mode == 0 else 3.0

    c = RunChooser(spare=1)
    seen = _script(c, 40, team_wins, lambda r, s: None)
    assert seen[5:].count(1) == 2 and c.reasons.get("stale") == 2, (c.reasons, seen)
    assert seen.index(1, 5) < 20 <= 26 < seen.index(1, 20), seen

    # a core at half speed (the team 1.8x its least, as slow as one thread): no extra run
    c = RunChooser(spare=1)
    seen = _script(c, 40, lambda run, mode: (1.8 if run >= load else 1.0) if mode == 0 else 1.9, lambda r, s: None)
    assert seen[5:].count(1) == 0 and "stale" not in c.reasons, (c.reasons, seen)


def test_run_chooser_on_a_quiet_machine_never_runs_one_thread_again():
    """ResNet-50 on a quiet machine (all threads 1.0, one thread 1.7, the other cores idle):
    after the first choices the one-thread program never runs, whatever the idle signal."""
    from xrelay.runtime.parallel import RunChooser

    c = RunChooser(spare=1)
    seen = _script(c, 60, lambda run, mode: 1.0 if mode == 0 else 1.7, lambda run, seconds: seconds)
    assert seen[:5] == [0, 1, 1, 0, 0] and seen[5:].count(1) == 0, seen


def test_executor_passes_the_idle_time_of_its_one_thread_runs(monkeypatch):
    """Executor.run reads the idle CPU time (``idle_cpu_seconds``) around each one-thread
    run and passes the difference to its RunChooser; all-threads runs pass None."""
    from xrelay.runtime import executor as executor_module
    from xrelay.runtime import parallel

    clock = iter(range(0, 1000, 3))  # a fake idle counter: 3 s more at every read
    monkeypatch.setattr(executor_module, "idle_cpu_seconds", lambda: float(next(clock)))
    calls = _recorded_runs(monkeypatch)
    ex = _two_thread_executor_with_a_pool_job(parallel.WorkerPool(2))
    for _ in range(4):
        ex.run()
    assert [m for m, _, _ in calls] == [0, 1, 1, 0], calls
    assert [(m, i) for m, _, i in calls] == [(0, None), (1, 3.0), (1, 3.0), (0, None)], calls


def test_idle_cpu_seconds_reads_the_process_cpus():
    """idle_cpu_seconds: a count that never decreases, or None without /proc/stat."""
    import os

    from xrelay.runtime.parallel import idle_cpu_seconds

    a = idle_cpu_seconds()
    if not os.path.exists("/proc/stat"):
        assert a is None
        return
    b = idle_cpu_seconds()
    assert a is not None and b is not None and 0 < a <= b


def test_run_chooser_does_not_leave_the_threads_for_one_slow_run():
    """On a quiet machine with something passing now and then (every 5th all-threads run 2.5x
    its time, slower than the one-thread program: another process's burst), the one-thread
    program never runs after the first choices: one slow run of the preferred team is noise
    (with SLOW_RUNS 1 each such run cost a one-thread run, 1.8x slower: 3-5 of the zoo's 19
    ResNet-18 runs on a shared machine). A re-measured team run that is slow still sends the
    model back to one thread at once (the load-that-stays test above)."""
    from xrelay.runtime.parallel import RunChooser

    c = RunChooser(spare=1)
    seen = _script(c, 60, lambda run, mode: (2.5 if run % 5 == 0 else 1.0) if mode == 0 else 1.8, lambda r, s: 0.0)
    assert seen[:5] == [0, 1, 1, 0, 0] and seen[5:].count(1) == 0, seen


def test_run_chooser_judges_the_idle_cores_over_two_ticks():
    """A model of 9 ms a one-thread run (MnasNet; 5 ms for the team, 33 ms with a busy core)
    under a load through its first 14 runs: the other core is seen idle within about two
    10 ms ticks of one-thread time, and the team runs from 3 runs after the load's end (with
    50 ms stretches, 6 one-thread runs: in the zoo the median of its 15 rounds was then its
    one-thread time, 1.55x onnxruntime)."""
    from xrelay.runtime.parallel import RunChooser

    load = 14

    def times(run, mode):
        return (0.033 if run < load else 0.005) if mode == 0 else 0.009

    c = RunChooser(spare=1)
    seen = _script(c, 30, times, lambda run, seconds: 0.0 if run < load else seconds)
    assert 1 in seen[load - 2 : load] and set(seen[load + 3 :]) == {0}, seen



def test_run_chooser_believes_a_busy_core_on_a_small_model_at_the_first_re_measurement():
    """A model of 9.5 ms a one-thread run (SqueezeNet; its team 27 ms beside a process on the
    other core, the zoo's traces at 08:23-08:25 UTC, idle signal 0.0) under a load from the
    start. The load's verdict before a team run is the latest FREE_SECONDS of one-thread time,
    also from before the previous team runs: the two one-thread runs between the first
    estimates and the first re-measurement (19 ms) are too short for two ticks, with the two
    before them they confirm the load at that re-measurement (run 8) and the collapsed team
    next runs EXPLORE_EVERY runs later (judging only the runs since the last team run, it ran
    again at run 13, 2.8x a one-thread run, in the zoo's timed rounds). Two team runs in a
    row COLLAPSE times the one-thread estimate confirm the load by themselves: these 27 ms
    ones at its first estimates (runs 4 and 5), so run 8 is a one-thread run too; one such
    run among fast ones (a passing glitch) confirms nothing. Once the team has won again,
    those old runs no longer count: a second load the signal does not see is re-measured 1,
    2, 4, 8 runs apart (the schedule), not taken for a confirmed one."""
    from xrelay.runtime.parallel import RunChooser

    c = RunChooser(spare=1)
    seen = _script(
        c, 40, lambda run, mode: 0.027 if mode == 0 else 0.0095, lambda run, seconds: 0.0
    )
    teams = [run + 1 for run, mode in enumerate(seen) if mode == 0]
    assert teams[:4] == [1, 4, 5, 5 + RunChooser.EXPLORE_EVERY + 1], teams
    # one collapsed first estimate (35 ms) on a free machine: the team runs on
    c = RunChooser(spare=1)
    seen = _script(
        c, 40, lambda run, mode: (0.035 if run == 3 else 0.0028) if mode == 0 else 0.0045, lambda run, seconds: 0.0
    )
    assert seen[5:].count(1) == 0, seen
    # a team 1.5x one thread (not collapsed): the signal's verdict confirms it at run 8
    c = RunChooser(spare=1)
    seen = _script(
        c, 40, lambda run, mode: 0.0143 if mode == 0 else 0.0095, lambda run, seconds: 0.0
    )
    teams = [run + 1 for run, mode in enumerate(seen) if mode == 0]
    assert teams[:4] == [1, 4, 5, 8] and teams[4] == 8 + RunChooser.EXPLORE_EVERY + 1, teams

    def times(run, mode):
        return 0.027 if mode == 0 and (run < 20 or 50 <= run) else (0.005 if mode == 0 else 0.0095)

    c = RunChooser(spare=1)
    # a busy core through the first 20 runs, seen by the signal; then no signal (no
    # /proc/stat), the team back at its re-measurement, and from run 50 another load
    seen = _script(c, 90, times, lambda run, seconds: 0.0 if run < 20 else None)
    assert set(seen[40:50]) == {0}, seen
    teams = [run for run, mode in enumerate(seen) if mode == 0 and run >= 50]
    assert [b - a - 1 for a, b in zip(teams, teams[1:])][1:5] == [1, 2, 4, 8], (teams, seen)
