"""What a run calls outside the kernels (``Executor.run_program``): C calls made from C
(``native.library.c_call``), jobs of them on the pool without the GIL, chains of native jobs
and single calls (``native.steps.join_steps``); the same bits as the calls one by one."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import xrelay
from xrelay.runtime.native import fast_int8, library
from xrelay.runtime.native.steps import chain_link, join_steps
from xrelay.testing import onnx_models as om
from xrelay.testing import quantized_models as qm

needs_c = pytest.mark.skipif(
    library.call_part() is None or fast_int8.vnni_library() is None or not library._calls_from_c(),
    reason="calls from C need the native libraries on Linux x86-64/aarch64",
)


def _quantize_args(x: np.ndarray, out: np.ndarray, scale: float, padv: int) -> tuple:
    # xr_quantize_float(x, out, planes, h, w, scale, lo, hi, zp, top, bottom, left, right, padv):
    # 11 integer-class arguments (5 of them on the stack) and 3 floats between them
    planes, h, w = x.shape
    return (x.ctypes.data, out.ctypes.data, planes, h, w, scale, 0.0, 255.0, 128, 1, 2, 3, 1, padv)


@needs_c
def test_a_call_made_from_c_gives_the_ctypes_calls_bits():
    lib = fast_int8.vnni_library()
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((3, 5, 6)) * 40).astype(np.float32)
    direct, from_c, other = (np.zeros((3, 8, 10), np.uint8) for _ in range(3))
    lib.xr_quantize_float(*_quantize_args(x, direct, 0.37, 9))
    call = library.c_call(lib.xr_quantize_float, *_quantize_args(x, from_c, 0.37, 9), keep=(x, from_c))
    assert len(call.c_call) == 1 + 24 + 8
    link = chain_link(call)
    assert link is not None and link[0] is None and link[3] == 1  # one part, on the calling thread
    quads = np.array([link[1:]], np.int64)
    assert library.native_chain()(quads.ctypes.data, 1) == 0
    assert np.array_equal(from_c, direct)
    # the floats and the stack's integers reached their parameters: other values, other bytes
    assert len(np.unique(direct)) > 20 and (direct[:, 0, :] == 9).all() and (direct[:, :, -1] == 9).all()
    other_call = library.c_call(lib.xr_quantize_float, *_quantize_args(x, other, 0.11, 4), keep=(x, other))
    quads = np.array([chain_link(other_call)[1:]], np.int64)
    library.native_chain()(quads.ctypes.data, 1)
    lib.xr_quantize_float(*_quantize_args(x, direct, 0.11, 4))
    assert np.array_equal(other, direct) and not np.array_equal(other, from_c)


def test_calls_that_cannot_be_made_from_c_stay_python_calls():
    lib = fast_int8.vnni_library()
    assert lib is not None, "the int8 library did not build"
    x = np.zeros(4, np.float32)
    # a wrong argument count, a value of another type, a Python callable: no row
    assert not hasattr(library.c_call(lib.xr_quantize_float, x.ctypes.data), "c_call")
    assert not hasattr(library.c_call(lib.xr_cumsum_f32, x.ctypes.data, b"x", 1, 1, 1, 0), "c_call")
    assert not hasattr(library.c_call(np.copyto, x, x), "c_call")
    proto = ctypes.CFUNCTYPE(None, ctypes.c_int8)
    assert library._call_row(proto(lambda v: None), (1,)) is None  # (a byte: not a word)


def _tiny_int8_mobilenet(per_channel: bool):
    from xrelay.frontends.onnx import from_onnx
    from xrelay.transforms.fake_quantization_to_integer import FakeQuantizationToIntegerPass

    f32 = om.mobilenet_v2(image=40, num_classes=10, width=0.5)
    q = qm.quantize(f32, qm.calibration_inputs(f32, 2), per_channel=per_channel)
    mod, params = from_onnx(q, freeze_params=True)
    FakeQuantizationToIntegerPass(onnxruntime=True).apply(None, mod.module)
    return f32, q, xrelay.build(mod, params, opt_level=3, threads=2)


@needs_c
@pytest.mark.parametrize("per_channel", [False, True])
def test_an_int8_model_runs_as_a_few_c_calls_with_onnxruntimes_bits(per_channel):
    # A MobileNetV2 quantized by onnxruntime: every step's chunks are C calls, so run's
    # program is a global pool's numpy ops and the rest in a few
    # chains (no pool job of Python chunks, whose chunks each wait for the GIL); the outputs
    # are onnxruntime's and those of the steps' thunks called one by one
    f32, q, m = _tiny_int8_mobilenet(per_channel)
    ex = m.executor
    prog = ex.run_program()
    plain = [t for _, _, c in ex.steps for _, _, t in c.thunks]
    pool_jobs = [t for t in ex._thunks if getattr(getattr(t, "func", None), "__name__", "") == "run"]
    assert not pool_jobs
    assert prog.python <= 3 and prog.chains <= 3 and prog.chained >= 40, prog
    copies = [c for name, _, c in ex.steps if name == "memory.copy"]
    assert copies and all(hasattr(t, "c_call") for c in copies for _, _, t in c.thunks)  # (in the chain)
    assert prog.thunks == prog.python + prog.chains and prog.dnnl_runs == 0 and prog.engine_switches == 0
    assert len(plain) >= prog.chained > 10 * prog.thunks // 2
    outs = []
    ex.chooser.choose = lambda: 0  # (every run on both threads)
    for i, feed in enumerate(qm.calibration_inputs(f32, 3, seed=4)):
        ref = om.run_onnxruntime(q, feed)[0]
        m.set_input(**feed)
        m.run()
        out = m.get_output(0).numpy()
        assert np.all(np.isfinite(out)) and np.array_equal(out, ref), (i, np.abs(out - ref).max())
        outs.append(out)
    assert not all(np.array_equal(outs[0], o) for o in outs[1:])  # (the output follows the input)
    ex._thunks = plain
    m.run()
    assert np.array_equal(m.get_output(0).numpy(), outs[-1])


@needs_c
def test_a_job_of_c_calls_runs_on_the_pool_and_in_chains():
    # split_job's chunks that are C calls become one native job (its parts taken by the
    # pool's threads in C); consecutive jobs and single calls join one chain
    from xrelay.runtime.compiled import CompiledFunction
    from xrelay.runtime.native.fast_kernels import Options, even_ranges, split_job
    from xrelay.runtime.parallel import WorkerPool

    lib = fast_int8.vnni_library()
    pool = WorkerPool(2)
    rng = np.random.default_rng(8)
    x = (rng.standard_normal((16, 5, 6)) * 40).astype(np.float32)
    outs = [np.zeros((16, 8, 10), np.uint8) for _ in range(3)]

    def maker(out):
        def make(p0: int, p1: int):
            return library.c_call(lib.xr_quantize_float, *_quantize_args(x[p0:p1], out[p0:p1], 0.2, 1), keep=(x, out))

        return make

    opts = Options(True, pool)
    jobs = [split_job(opts, maker(o), even_ranges(16, 4), 16) for o in outs[:2]]
    assert all(j.native_job[3] == 4 for j in jobs)  # four parts each, run from C
    single = maker(outs[2])(0, 16)
    steps = [CompiledFunction("a", [("q", "elementwise", jobs[0])]),
             CompiledFunction("b", [("q", "elementwise", single), ("q", "elementwise", jobs[1])])]  # fmt: skip
    (chain,) = join_steps(steps, pool.park, one=False)
    assert chain.chained == 3
    before = dict(pool.stats)
    chain()
    pool.park()
    assert pool.stats["native"] - before["native"] == 3
    ref = np.zeros_like(outs[0])
    lib.xr_quantize_float(*_quantize_args(x, ref, 0.2, 1))
    assert all(np.array_equal(o, ref) for o in outs)
    assert len(join_steps(steps, pool.park, one=True)) == 3  # the one-thread program: one by one


@needs_c
def test_an_input_copy_is_memmove_calls_in_parts_on_the_pool():
    from xrelay.runtime.executor import COPY_PART_BYTES, _copy_thunk
    from xrelay.runtime.parallel import WorkerPool

    pool = WorkerPool(2)
    src = np.random.default_rng(2).standard_normal((3, 224, 225)).astype(np.float32)
    dst = np.zeros_like(src)
    copy = _copy_thunk(dst, src, pool)
    assert copy.native_job[3] == 8 and src.nbytes > 8 * COPY_PART_BYTES  # four parts a thread
    copy()
    pool.park()
    assert np.array_equal(dst, src)
    small = np.zeros(100, np.float32)
    assert hasattr(_copy_thunk(small, np.ones(100, np.float32), pool), "c_call")  # one call
    strided = np.zeros((4, 8), np.float32)[:, ::2]
    assert not hasattr(_copy_thunk(strided, np.ones((4, 4), np.float32), pool), "c_call")  # numpy's


def test_a_native_c_step_runs_inside_the_onednn_run_with_the_same_bits():
    # a native step whose thunks are all C calls (here an elementwise loop between two
    # oneDNN convolutions) next to oneDNN steps joins their C call: its parts run on
    # oneDNN's OpenMP team (xr_dnnl_native), no Python and no hand-over to the native pool's
    # threads between them
    from xrelay import relay
    from xrelay.runtime.dnnl.library import dnnl_library
    from xrelay.runtime.interpreter import run

    assert dnnl_library() is not None, "oneDNN (onednn-cpu-gomp, pinned) did not load"
    assert library.call_part() is not None and library._calls_from_c(), "calls from C unavailable"
    rng = np.random.default_rng(0)

    def conv(v):
        w = relay.const(rng.standard_normal((8, 8, 3, 3)).astype(np.float32))
        return relay.nn.relu(relay.nn.conv2d(v, w, padding=(1, 1), channels=8, kernel_size=(3, 3)))

    x = relay.var("x", shape=(1, 8, 16, 16))
    h = conv(x)
    mod = xrelay.IRModule.from_expr(relay.Function([x], conv(relay.add(relay.tanh(h), relay.sigmoid(relay.negative(h))))))
    m = xrelay.build(mod, None, opt_level=3, threads=2)
    ex = m.executor
    loops = [c for (_, _, c), b in zip(ex.steps, ex.step_backends) if b == "native" and c.thunks]
    assert len(loops) == 1 and all(chain_link(t) is not None for _, _, t in loops[0].thunks)
    assert "as one loop" in loops[0].thunks[0][0]
    prog = ex.run_program()
    assert not any(t is loops[0].thunks[0][2] for t in ex._thunks)  # not a thunk of its own
    assert len(ex._thunks) == 1 and hasattr(ex._thunks[0], "joined")
    assert [b for b, _ in ex.program] == ["dnnl"] * len(ex.program)
    assert prog.engine_switches == 0 and ex.run_program(one=True).engine_switches == 2, prog
    ex.chooser.choose = lambda: 0  # (every run on both threads)
    outs = []
    for _ in range(2):
        v = rng.standard_normal((1, 8, 16, 16)).astype(np.float32)
        m.set_input(x=v)
        m.run()
        outs.append(m.get_output(0).numpy())
        (want,) = run(mod, {"x": v})
        assert np.all(np.isfinite(outs[-1])) and np.abs(outs[-1] - want).max() <= 1e-5 * np.abs(want).max()
    assert not np.array_equal(outs[0], outs[1])
    for _, _, c in ex.steps:  # the steps one by one: the same bits
        c()
    assert np.array_equal(m.get_output(0).numpy(), outs[-1])
