"""The arena executor on whole models: bitwise equal to the memory-dialect interpreter on the
same planned program, close to the reference interpreter on the unoptimised module, for every
planning algorithm, and without allocating activation memory while it runs."""

from __future__ import annotations

import functools
import tracemalloc

import numpy as np
import pytest

from xrelay.backend.build import build, build_program
from xrelay.frontends.onnx import from_onnx
from xrelay.runtime.executor import Executor, run_memory_compiled
from xrelay.runtime.interpreter import random_inputs, run
from xrelay.runtime.memory_interpreter import run_memory
from xrelay.runtime.native.fast_kernels import winograd_enabled
from xrelay.testing import onnx_models
from xrelay.testing.random_graphs import random_dag
from xrelay.testing.semantics import check_reference
from xrelay.transforms.planners import ALGORITHMS


@functools.cache
def _onnx(name: str, **kwargs):
    model = getattr(onnx_models, name)(**kwargs)
    return from_onnx(model)


def _inputs(ex: Executor, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        n: rng.standard_normal(b.shape).astype(b.dtype)
        for n, b in zip(ex.input_names, ex.input_buffers)
    }


def _run(ex: Executor, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    for name, buf in zip(ex.input_names, ex.input_buffers):
        np.copyto(buf, inputs[name])
    ex.run()
    return [o.copy() for o in ex.outputs]


def _check_model(mod, params, inputs, plan: str, use_c_kernels: bool, rtol=1e-4, atol=1e-4):
    program, (buffers, _, _) = build_program(mod, params, plan=plan, time_limit=2.0)
    ex = Executor(program, use_c_kernels=use_c_kernels)
    ex.buffer_bytes = sum(b.size for b in buffers)
    outs = _run(ex, inputs)
    # Bitwise: the memory interpreter (hostile: poisoned arenas and kills) on the same program.
    if use_c_kernels:
        expect = run_memory_compiled(program, inputs)
    else:
        expect = run_memory(program, inputs)
    assert len(outs) == len(expect)
    for a, b in zip(outs, expect):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert np.array_equal(a, b, equal_nan=True)
    # Within tolerance: the reference interpreter on the unoptimised module (finite, or the
    # comparisons above and below would match NaN with NaN)
    ref = run(mod, inputs, params)
    check_reference(ref)
    for a, r in zip(outs, ref):
        np.testing.assert_allclose(a, r, rtol=rtol, atol=atol)
    # A second run on the same arenas gives the same bits (no state leaks between runs).
    for a, b in zip(_run(ex, inputs), outs):
        assert np.array_equal(a, b, equal_nan=True)
    return ex


@pytest.mark.parametrize("plan", ALGORITHMS)
def test_resnet18_every_planner(plan):
    mod, params = _onnx("resnet18", image=32, num_classes=10)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 3, 32, 32)).astype("float32")
    ex = _check_model(mod, params, {"data": x}, plan, use_c_kernels=False)
    # Buffers really share bytes: the arena is far below the sum of the buffers.
    assert plan == "naive" or ex.arena_bytes < ex.buffer_bytes / 2


@pytest.mark.parametrize("plan", ["greedy-by-size", "storage-ids", "greedy-by-conflicts"])
@pytest.mark.parametrize("use_c_kernels", [False, True])
def test_mobilenet_v2(plan, use_c_kernels):
    mod, params = _onnx("mobilenet_v2", image=32, num_classes=10, width=0.5)
    x = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype("float32")
    ex = _check_model(mod, params, {"data": x}, plan, use_c_kernels=use_c_kernels)
    kinds = {fam for _, _, c in ex.steps for _, fam, _ in c.thunks}
    assert ("depthwise" in kinds) == use_c_kernels


@pytest.mark.parametrize("plan", ["greedy-by-size", "hill-climb", "naive"])
def test_mlp(plan):
    mod, params = _onnx("mlp", batch=2)
    x = np.random.default_rng(2).standard_normal((2, 1, 28, 28)).astype("float32")
    _check_model(mod, params, {"data": x}, plan, use_c_kernels=True)


@pytest.mark.parametrize("plan", ["greedy-by-size", "storage-ids", "greedy-by-size-first-fit"])
def test_bert_layer(plan):
    mod, params = _onnx("bert_layer", seq=16, hidden=64, heads=4)
    inputs = onnx_models.bert_inputs(seq=16, hidden=64)
    _check_model(mod, params, inputs, plan, use_c_kernels=True, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("plan", ["greedy-by-size", "storage-ids", "hill-climb"])
def test_random_dags(seed, plan):
    mod = random_dag(seed, 25)
    inputs = random_inputs(mod, seed)
    _check_model(mod, None, inputs, plan, use_c_kernels=True)


def test_onnxruntime_agrees_on_resnet18():
    model = onnx_models.resnet18(image=32, num_classes=10)
    mod, params = from_onnx(model)
    x = np.random.default_rng(3).standard_normal((1, 3, 32, 32)).astype("float32")
    m = build(mod, params)
    m.run(data=x)
    (expect,) = onnx_models.run_onnxruntime(model, {"data": x})
    np.testing.assert_allclose(m.get_output(0), expect, rtol=1e-4, atol=1e-4)


def test_resnet18_run_allocates_no_activation_memory():
    mod, params = _onnx("resnet18", image=96, num_classes=10)
    program, _ = build_program(mod, params)
    ex = Executor(program)
    arenas = list(ex.arenas.values())
    assert ex.scratch_bytes == 0
    assert ex.external_bytes == 0  # outputs live in the arena too

    def in_arena(a: np.ndarray) -> bool:
        return any(np.shares_memory(a, arena) for arena in arenas)

    # Every destination of every step is a view of an arena, but the input copy's: it copies
    # nothing, its readers read the input's own buffer (the plan reuses the input's slot).
    for (name, _, compiled), dests in zip(ex.steps, ex.step_dests):
        if name == "memory.copy" and not compiled.thunks:
            assert [d is ex.input_buffers[0] for d in dests] == [True]
            continue
        assert dests and all(in_arena(d) for d in dests)
    assert all(in_arena(o) for o in ex.outputs)
    # Every fused step ran through the fast kernels (no reference-kernel temporaries).
    for name, _, compiled in ex.steps:
        if name != "memory.copy":
            assert compiled.fast_ops >= 1 or "flatten" in name, name
    np.copyto(ex.input_buffers[0], np.random.default_rng(4).standard_normal((1, 3, 96, 96)))
    ex.run()
    tracemalloc.start()
    try:
        ex.run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # What remains are numpy's fixed-size iteration buffers for strided operands (8192
    # elements per operand of a ufunc call), freed at once: independent of the model's size
    # and far below any activation of this network.
    largest = max(v.nbytes for v in ex.tensor_views.values())
    assert largest >= 64 * 48 * 48 * 4
    assert peak < 128 * 1024 < largest / 4, peak


def test_resnet18_workspace_is_the_planned_one():
    """A conv step's im2col matrix lives in its planned workspace, not in fresh memory."""
    mod, params = _onnx("resnet18", image=32, num_classes=10)
    program, _ = build_program(mod, params)
    ex = Executor(program)
    columns = [cols for _, _, c in ex.steps for cols in c.columns]
    winograd = sum(len(c.winograd) for _, _, c in ex.steps)
    # Every 3x3 and strided convolution gathers its columns (a Winograd one has its tiles
    # and products instead); 1x1 stride-1 ones need none.
    assert len(columns) == 1 + 2 * 8 + 3 + winograd
    # At 32x32, layer1's 8x8 images run as Winograd; the smaller ones do not.
    assert winograd == (4 if winograd_enabled() else 0)
    arenas = list(ex.arenas.values())
    for cols in columns:
        assert any(np.shares_memory(cols, a) for a in arenas)


def test_use_numba_is_a_deprecated_name_of_use_c_kernels():
    # the loop kernels were numba twins once; the parameter is use_c_kernels now, and the old
    # name still chooses the same thing, with a DeprecationWarning pointing at the caller
    mod, params = _onnx("mobilenet_v2", image=32, num_classes=10, width=0.5)
    program, _ = build_program(mod, params, plan="greedy-by-size", backends=("native",))
    kinds = {False: set(), True: set()}
    for value in (False, True):
        with pytest.warns(DeprecationWarning, match="use_numba is deprecated.*use_c_kernels") as seen:
            ex = Executor(program, use_numba=value)
        assert seen[0].filename == __file__
        assert ex.use_c_kernels is value
        kinds[value] = {f for _, _, c in ex.steps for _, f, _ in c.thunks}
    assert "depthwise" in kinds[True] and "depthwise" not in kinds[False]
    with pytest.warns(DeprecationWarning, match="use_numba"):
        m = build(mod, params, use_numba=False, backends=("native",))
    assert m.executor.use_c_kernels is False
    with pytest.warns(DeprecationWarning, match="use_numba"):
        run_memory_compiled(program, {"data": np.zeros((1, 3, 32, 32), "float32")}, use_numba=False)


@pytest.mark.parametrize("plan", ["storage-ids", "naive", "greedy-by-size"])
def test_no_run_copies_the_input_into_the_arena(plan):
    """With a plan that keeps the input's slot to itself (TVM's storage ids, the naive plan),
    the executor's input buffer IS that arena slot; where the plan reuses the slot after the
    input's last step (greedy-by-size, the default), the slot's readers read the input's own
    buffer, outside the arena. Either way the input copy step copies nothing, an input set
    once serves any number of runs (TVM's set_input), a new one replaces it, and the outputs
    are the reference interpreter's."""
    mod, params = _onnx("mlp")
    m = build(mod, params, opt_level=3, plan=plan)
    ex = m.executor
    (arena,) = ex.arenas.values()
    (copy,) = [c for name, _, c in ex.steps if name == "memory.copy"]
    assert np.shares_memory(ex.input_buffers[0], arena) == (plan != "greedy-by-size")
    assert copy.thunks == []
    rng = np.random.default_rng(3)
    seen = []
    for _ in range(2):
        x = rng.standard_normal(ex.input_buffers[0].shape).astype("float32")
        m.set_input(ex.input_names[0], x)
        (want,) = run(mod, {ex.input_names[0]: x}, params)
        check_reference([want])
        m.run()
        got = m.get_output(0).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        for _ in range(2):  # the input stays through runs
            m.run()
            np.testing.assert_array_equal(m.get_output(0).numpy(), got)
        np.testing.assert_array_equal(m.get_input(0), x)
        seen.append(got)
    assert not np.allclose(seen[0], seen[1])  # the outputs follow the input
