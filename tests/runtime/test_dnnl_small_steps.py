"""Small oneDNN steps run on one thread inside the executor's program for all its threads
(``primitives.SMALL_WORK``): a squeeze-and-excitation gate's 1x1 convolutions on a 1x1 map
are a few hundred multiply-adds, less than a team of two costs to fork and join; the
convolutions around them keep the team. Results within 1e-4 of onnxruntime, the same as the
one-thread build's."""

from __future__ import annotations

import numpy as np

import xrelay
from xrelay.frontends.onnx import from_onnx
from xrelay.runtime.dnnl.library import dnnl_library
from xrelay.runtime.dnnl.primitives import SMALL_WORK, run_together
from xrelay.testing import platform
from xrelay.testing.onnx_models import GraphBuilder, run_onnxruntime

RNG = np.random.default_rng(3)


def _se_model():
    """A 3x3 convolution, a squeeze-and-excitation gate (mean, 1x1 down, ReLU, 1x1 up,
    HardSigmoid, the channel product) and a 1x1 projection, as torchvision writes them."""
    g = GraphBuilder(7)
    x = g.node("Relu", [g.conv("data", 8, 32, 3, bias=True)])
    s = g.node("GlobalAveragePool", [x])
    s = g.node("Relu", [g.conv(s, 32, 8, 1, bias=True)])
    s = g.node("HardSigmoid", [g.conv(s, 8, 32, 1, bias=True)], alpha=1 / 6, beta=0.5)
    y = g.conv(g.node("Mul", [x, s]), 32, 16, 1, bias=True)
    return g.model({"data": ([1, 8, 28, 28], np.float32)}, [y], "se")


def _build(model, x, threads):
    mod, params = from_onnx(model)
    m = xrelay.build(mod, params, opt_level=3, threads=threads)
    m.set_input(**x)
    m.run()
    return m


def test_small_steps_run_on_one_thread_among_the_teams_steps():
    assert dnnl_library() is not None
    model = _se_model()
    x = {"data": RNG.standard_normal((1, 8, 28, 28)).astype("float32")}
    m = _build(model, x, threads=2)
    ex = m.executor
    dnnl = [c for (_, _, c), b in zip(ex.steps, ex.step_backends) if b == "dnnl"]
    got = [(c.dnnl_plan.steps[0].name.split("(")[0], c.small) for c in dnnl]
    # the gate (its pool over 28x28x32 and its two 1x1 convolutions on a 1x1 map) and the
    # small layout transforms are small; the 3x3 convolution over 28x28, the channel product
    # and the projection are not
    assert got == [
        ("layout_transform", True), ("dnnl.conv2d_bias_relu", False), ("nn.global_avg_pool2d", True),
        ("dnnl.conv2d_bias_relu", True), ("dnnl.conv2d_bias_clip", True), ("multiply", False),
        ("dnnl.conv2d_bias", False), ("layout_transform", True),
    ], got  # fmt: skip
    assert dnnl[1].dnnl_plan.work == 28 * 28 * 32 * 8 * 9  # its multiply-adds
    assert dnnl[3].dnnl_plan.work == 32 + 32 * 8 + 8 + 8 <= SMALL_WORK  # what it holds
    for c in dnnl:  # a small step runs the primitives made for one thread, the others the team's
        assert c.dnnl_thunk.dnnl_run[4] == (1 if c.small else 2)
        assert (c.small and c.dnnl_thunk is c.thunk_one) or (not c.small and c.dnnl_thunk is not c.thunk_one)
    # the run's one C call passes each primitive its step's thread count
    (joined,) = [t.joined for t in ex._thunks if hasattr(t, "joined")]
    hosted = [c for b, c in ex.program if b == "dnnl" and c not in dnnl]  # (the input copy: host_native)
    expected = [n for c in hosted + dnnl for n in [c.dnnl_thunk.dnnl_run[4]] * len(c.dnnl_thunk.dnnl_run[0])]
    assert joined.dnnl_threads == expected and 1 in expected and 2 in expected
    out = m.get_output(0).numpy()
    ref = run_onnxruntime(model, x)[0]
    assert np.all(np.isfinite(out)) and float(np.std(ref)) > 0.1
    assert float(np.max(np.abs(out - ref))) <= 1e-4 * max(1.0, float(np.max(np.abs(ref))))
    one = _build(model, x, threads=1)
    assert not any(getattr(c, "small", False) for _, _, c in one.executor.steps)  # no team to leave
    np.testing.assert_allclose(out, one.get_output(0).numpy(), rtol=1e-5, atol=1e-5)
    for _ in range(3):  # again, after both programs ran (RunChooser alternates them first)
        ex.run()
        np.testing.assert_allclose(m.get_output(0).numpy(), out, rtol=1e-6, atol=1e-6)


def test_run_together_passes_each_functions_thread_count():
    """Joining a one-thread function's primitives with a team's keeps each one's count."""
    model = _se_model()
    x = {"data": RNG.standard_normal((1, 8, 28, 28)).astype("float32")}
    ex = _build(model, x, threads=2).executor
    dnnl = [c for (_, _, c), b in zip(ex.steps, ex.step_backends) if b == "dnnl"]
    raws = [c.thunk_one if i % 2 else c.dnnl_thunk for i, c in enumerate(dnnl)]
    joined = run_together(raws)
    counts = [t.dnnl_run[4] for t in raws]
    assert 1 in counts and 2 in counts
    assert joined.dnnl_threads == [n for t, n in zip(raws, counts) for _ in t.dnnl_run[0]]


def test_a_run_limits_blas_only_when_a_step_may_call_it(monkeypatch):
    """Entering and leaving ``blas_single_thread`` costs a run ~18 us with OpenBLAS loaded:
    a program whose steps are all oneDNN's (and the input copy) does not enter it; the same
    model on the native kernels (im2col and BLAS products) does."""
    from xrelay.runtime import executor as executor_module

    entered = []
    real = executor_module.blas_single_thread

    def counting():
        entered.append(1)
        return real()

    monkeypatch.setattr(executor_module, "blas_single_thread", counting)
    model = _se_model()
    x = {"data": RNG.standard_normal((1, 8, 28, 28)).astype("float32")}
    want = run_onnxruntime(model, x)[0]
    for backends, uses in ((("dnnl", "native"), False), (("native",), True)):
        mod, params = from_onnx(model)
        m = xrelay.build(mod, params, opt_level=3, threads=2, backends=backends)
        ex = m.executor
        assert set(ex.step_backends) == ({"native", "dnnl"} if not uses else {"native"})
        assert ex.uses_blas is uses
        entered.clear()
        for _ in range(4):  # both programs (RunChooser)
            m.run(**x)
            got = m.get_output(0).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        assert len(entered) == (4 if uses else 0)



def _dense_model(rows: int, k: int, n: int):
    g = GraphBuilder(9)
    w = g.init("w", RNG.standard_normal((k, n)).astype(np.float32) * 0.1)
    y = g.node("Tanh", [g.node("MatMul", ["data", w])])
    return g.model({"data": ([rows, k], np.float32)}, [y], "dense")


def test_a_few_rows_dense_is_shared_by_its_weight_not_its_products(monkeypatch):
    """``primitives.STREAMED_ROWS``: the packed dense kernel (AVX2 CPUs) counts a step of
    fewer rows as that many when it decides whether the team shares it (a recurrent time
    step's one row streams its whole weight for few products): 1 x 256 -> 768 (196,608
    multiply-adds, under ``PART_WORK``) is the team's; 1 x 64 -> 96 and 8 x 64 -> 96 stay on
    one thread. The same bits either way (the kernel sums each output in one order) and
    onnxruntime's values."""
    from xrelay.runtime.dnnl import primitives

    made = []
    real = primitives._gemm_kernel

    def spy(lib, m, n, k, threads, ops):
        made.append((m, n, k, threads))
        return real(lib, m, n, k, threads, ops)

    monkeypatch.setattr(primitives, "_gemm_kernel", spy)
    for rows, k, n, team in ((1, 256, 768, True), (1, 64, 96, False), (8, 64, 96, False)):
        assert rows * k * n < primitives.PART_WORK  # (all under it by their products)
        model = _dense_model(rows, k, n)
        x = {"data": RNG.standard_normal((rows, k)).astype("float32")}
        made.clear()
        m = _build(model, x, threads=2)
        out = m.get_output(0).numpy()
        ref = run_onnxruntime(model, x)[0]
        assert np.all(np.isfinite(out)) and float(np.std(ref)) > 0.05
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
        if platform.avx512():  # oneDNN's brgemm matmul runs them
            assert made == []
            continue
        assert set(made) == {(rows, n, k, 0 if team else 1)}, made  # (each of its plans)
        monkeypatch.setattr(primitives, "STREAMED_ROWS", 1)  # by its products: one thread
        made.clear()
        alone = _build(model, x, threads=2)
        assert set(made) == {(rows, n, k, 1)}
        assert np.array_equal(alone.get_output(0).numpy(), out)
        monkeypatch.undo()
        monkeypatch.setattr(primitives, "_gemm_kernel", spy)
