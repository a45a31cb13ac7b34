"""The oneDNN backend: partitioned functions run as oneDNN primitives, within 1e-4 of the
native kernels, in the planned arena; without the library everything runs natively."""

from __future__ import annotations

import logging
import math
import os
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.backend.build import BuildError
from xrelay.dialects.relay.constant import ConstantOp, file_mapping_of
from xrelay.runtime.dnnl import primitives
from xrelay.runtime.dnnl.library import dnnl_library
from xrelay.runtime.npz import resident_bytes
from xrelay.testing import platform

RNG = np.random.default_rng(0)


def _const(*shape):
    return relay.const(RNG.standard_normal(shape).astype("float32") * 0.3)


def _mod(body, *vars_):
    return relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function(list(vars_), body)))


def _both(mod, inputs):
    """Outputs and step backends with oneDNN and with the native kernels alone."""
    results = {}
    for backends in (("dnnl", "native"), ("native",)):
        m = xrelay.build(mod, None, backends=backends)
        m.set_input(**inputs)
        m.run()
        results[backends[0]] = (m.get_output(0).numpy(), m.executor.step_backends, m)
    return results


_REORDERS = ("layout_transform", "cast", "reshape", "nn.batch_flatten", "transpose")


def _check(mod, inputs, dnnl_steps, rtol=1e-4, atol=1e-4, scaled=False):
    """``dnnl_steps`` counts the oneDNN steps that are not reorders (the layout transforms at
    the edges of an NHWC region are reorders too). ``scaled``: ``atol`` is relative to the
    largest magnitude of the native output (Winograd's rounding grows with the sums)."""
    r = _both(mod, inputs)
    out, backends, m = r["dnnl"]
    ref = r["native"][0]
    np.testing.assert_allclose(out, ref, rtol=rtol, atol=atol * float(np.max(np.abs(ref))) if scaled else atol)
    ops = [o for (_, o, _), b in zip(m.executor.steps, backends) if b == "dnnl" and o not in _REORDERS]
    assert len(ops) == dnnl_steps, backends
    assert "dnnl" not in r["native"][1]
    return m


@pytest.fixture
def fastest():
    """Builds inside keep every step's fastest way (``choose-scratch``'s priority ``speed``):
    the tests using it are about the Winograd kernel, whose temporaries a one-convolution
    model's plan would otherwise trade for the direct convolution's smaller scratch (see
    ``test_choose_scratch_takes_the_smaller_way_where_the_scratch_is_the_peak``)."""
    with xrelay.transform.PassContext(config={"relay.ChooseScratch.priority": "speed"}):
        yield


def _work(m):
    """The oneDNN steps that are not reorders: (ops, compiled function)."""
    return [(o, c) for (_, o, c), b in zip(m.executor.steps, m.executor.step_backends) if b == "dnnl" and o not in _REORDERS]


def _conv(x, w, **kw):
    return relay.nn.conv2d(x, w, **kw)


@pytest.mark.parametrize(
    "shape,wshape,kw,epilogue",
    [
        ((1, 8, 12, 12), (16, 8, 3, 3), {"padding": (1, 1)}, "relu"),
        ((1, 8, 12, 12), (16, 8, 3, 3), {"strides": (2, 2), "padding": (1, 0, 2, 1)}, "clip"),
        ((1, 8, 13, 13), (8, 8, 3, 3), {"dilation": (2, 2), "padding": (2, 2)}, "sigmoid"),
        ((1, 16, 10, 10), (16, 1, 3, 3), {"groups": 16, "padding": (1, 1)}, "clip"),  # depthwise
        ((1, 8, 10, 10), (12, 4, 3, 3), {"groups": 2, "padding": (1, 1)}, "tanh"),  # grouped
        ((1, 8, 9, 9), (16, 8, 1, 1), {}, None),
    ],
)
def test_conv2d_bias_epilogue(shape, wshape, kw, epilogue):
    x = relay.var("x", shape=shape)
    y = _conv(x, _const(*wshape), channels=wshape[0], kernel_size=wshape[2:], **kw)
    y = relay.add(y, _const(wshape[0], 1, 1))
    if epilogue == "relu":
        y = relay.nn.relu(y)
    elif epilogue == "clip":
        y = relay.clip(y, 0.0, 6.0)
    elif epilogue == "sigmoid":
        y = relay.sigmoid(y)
    elif epilogue == "tanh":
        y = relay.tanh(y)
    m = _check(_mod(y, x), {"x": RNG.standard_normal(shape).astype("float32")}, 1)
    ((_, c),) = _work(m)
    assert len(c.dnnl_plan.steps) == 1 and c.dnnl_plan.steps[0].name.startswith("dnnl.conv2d_bias")


def test_residual_sum_reads_the_arena_and_the_arena_equals_the_plan():
    x = relay.var("x", shape=(1, 16, 8, 8))
    h = relay.nn.relu(relay.add(_conv(x, _const(16, 16, 3, 3), padding=(1, 1), channels=16, kernel_size=(3, 3)), _const(16, 1, 1)))
    y = relay.nn.relu(relay.add(relay.add(_conv(h, _const(16, 16, 3, 3), padding=(1, 1), channels=16, kernel_size=(3, 3)), _const(16, 1, 1)), h))
    m = _check(_mod(y, x), {"x": RNG.standard_normal((1, 16, 8, 8)).astype("float32")}, 2)
    names = [o for o, _ in _work(m)]
    assert names == [
        "dnnl.conv2d_bias_relu(nn.conv2d+add+nn.relu)",
        "dnnl.conv2d_bias_sum_relu(nn.conv2d+add+add+nn.relu)",
    ]
    pools = [op for op in m.program.ops if op.name == "memory.pool"]
    assert m.arena_bytes == sum(p.size.value.data for p in pools)
    # oneDNN's scratch is planned: each dnnl step that needs it has a workspace storage
    assert "tvmgen_default_dnnl_main_0_ws" in str(m.program)


def test_run_allocates_nothing():
    x = relay.var("x", shape=(1, 8, 16, 16))
    y = relay.nn.relu(relay.add(_conv(x, _const(16, 8, 3, 3), padding=(1, 1), channels=16, kernel_size=(3, 3)), _const(16, 1, 1)))
    y = relay.nn.max_pool2d(y, pool_size=(2, 2), strides=(2, 2))
    m = xrelay.build(_mod(y, x), None)
    m.set_input("x", RNG.standard_normal((1, 8, 16, 16)).astype("float32"))
    m.run()
    tracemalloc.start()
    try:
        m.executor.run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4096, peak
    assert len(_work(m)) == 2


def test_dense_gelu_softmax_layer_norm_pools():
    x = relay.var("x", shape=(4, 32))
    d = relay.add(relay.nn.dense(x, _const(24, 32)), _const(24))
    # Relay's gelu pattern: x * (erf(x / sqrt(2)) + 1) * 0.5
    g = relay.multiply(relay.multiply(d, relay.add(relay.erf(relay.divide(d, relay.const(np.float32(np.sqrt(2))))), relay.const(np.float32(1.0)))), relay.const(np.float32(0.5)))
    s = relay.nn.softmax(g, axis=-1)
    m = _check(_mod(s, x), {"x": RNG.standard_normal((4, 32)).astype("float32")}, 2)
    ops = [o for o, _ in _work(m)]
    # (canonicalize-arith makes the division by sqrt(2) a product by its reciprocal first)
    assert ops == ["dnnl.dense_bias_gelu(nn.dense+add+multiply+erf+add+multiply+multiply)", "nn.softmax"]
    # the profile counts the dense with its GELU pass as a matmul, the step of most products
    (dense, softmax) = [c for _, c in _work(m)]
    assert len({s.family for s in dense.dnnl_plan.steps}) == 2
    assert [f for _, f, _ in dense.thunks] == ["matmul"] and [f for _, f, _ in softmax.thunks] == ["other"]

    p = relay.var("p", shape=(1, 8, 11, 11))
    a = relay.nn.avg_pool2d(relay.nn.max_pool2d(p, pool_size=(3, 3), strides=(2, 2), padding=(1, 1)), pool_size=(2, 2), strides=(1, 1), padding=(1, 1), count_include_pad=False)
    out = relay.nn.global_avg_pool2d(a)
    _check(_mod(out, p), {"p": RNG.standard_normal((1, 8, 11, 11)).astype("float32")}, 3)


def test_layer_norm_primitive():
    """nn.layer_norm as one oneDNN primitive (xrelay.build's SimplifyInference decomposes
    it before partitioning, as Relay's does, so the partitioned function is made here)."""
    from xdsl.dialects import func

    from xrelay.backend.engines import resolve_pass
    from xrelay.dialects import make_context, module_op
    from xrelay.runtime.dnnl.primitives import plan_function
    from xrelay.transforms.annotate_target import AnnotateTargetPass
    from xrelay.transforms.partition_graph import PartitionGraphPass

    x = relay.var("x", shape=(3, 16))
    gamma, beta = RNG.standard_normal(16).astype("float32"), RNG.standard_normal(16).astype("float32")
    y = relay.nn.layer_norm(x, relay.const(gamma), relay.const(beta), epsilon=1e-5)
    module = module_op(_mod(y, x)).clone()
    resolve_pass(AnnotateTargetPass(("dnnl",))).apply(make_context(), module)  # the engine's ops
    PartitionGraphPass().apply(make_context(), module)
    (fn,) = [f for f in module.ops if isinstance(f, func.FuncOp) and "relay.compiler" in f.attributes]
    plan = plan_function(fn, module)
    assert [s.name for s in plan.steps] == ["nn.layer_norm"]
    xv = RNG.standard_normal((3, 16)).astype("float32")
    out = np.empty_like(xv)
    ws = np.empty(max(plan.workspace_bytes, 1), np.uint8)
    plan.bind([xv], [out], ws, 2)()
    mean, var = xv.mean(-1, keepdims=True), xv.var(-1, keepdims=True)
    np.testing.assert_allclose(out, (xv - mean) / np.sqrt(var + 1e-5) * gamma + beta, rtol=1e-4, atol=1e-5)


def test_plan_reads_the_called_composites_from_the_module():
    """``plan_function(fn, module)`` finds the composite functions ``fn`` calls among the
    module's functions (indexed once, on the first call it meets), and refuses a call of a
    function the module does not have."""
    from xdsl.dialects import func

    from xrelay.backend.dnnl.patterns import pattern_table
    from xrelay.backend.engines import resolve_pass
    from xrelay.dialects import make_context, module_op
    from xrelay.runtime.dnnl.primitives import DnnlUnsupported, plan_function
    from xrelay.transforms.annotate_target import AnnotateTargetPass
    from xrelay.transforms.merge_composite import MergeCompositePass
    from xrelay.transforms.partition_graph import PartitionGraphPass

    x = relay.var("x", shape=(1, 8, 10, 10))
    y = relay.nn.relu(_conv(x, _const(8, 8, 3, 3), padding=(1, 1), channels=8, kernel_size=(3, 3)))
    module = module_op(_mod(y, x)).clone()
    MergeCompositePass(pattern_table()).apply(make_context(), module)
    resolve_pass(AnnotateTargetPass(("dnnl",))).apply(make_context(), module)
    PartitionGraphPass().apply(make_context(), module)
    (fn,) = [f for f in module.ops if isinstance(f, func.FuncOp) and "relay.compiler" in f.attributes]
    (call,) = [o for o in fn.body.block.ops if isinstance(o, func.CallOp)]
    plan = plan_function(fn, module)
    assert [s.name for s in plan.steps] == ["dnnl.conv2d_relu(nn.conv2d+nn.relu)"]
    (composite,) = [f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name == call.callee.root_reference]
    composite.detach()
    with pytest.raises(DnnlUnsupported, match="not a composite"):
        plan_function(fn, module)


def test_batch_matmul():
    a = relay.var("a", shape=(2, 5, 8))
    b = relay.var("b", shape=(2, 6, 8))
    _check(_mod(relay.nn.batch_matmul(a, b), a, b), {"a": RNG.standard_normal((2, 5, 8)).astype("float32"), "b": RNG.standard_normal((2, 6, 8)).astype("float32")}, 1)


def test_user_partitioned_module_runs_each_region_on_onednn():
    """partition_for_dnnl's merged regions (several composites per function, temporaries in
    the step's planned workspace) run as one oneDNN step each."""
    from xrelay.relay.contrib.dnnl import partition_for_dnnl

    x = relay.var("x", shape=(1, 8, 10, 10))
    h = relay.nn.relu(relay.add(_conv(x, _const(8, 8, 3, 3), padding=(1, 1), channels=8, kernel_size=(3, 3)), _const(8, 1, 1)))
    y = relay.nn.relu(relay.add(_conv(h, _const(8, 8, 3, 3), padding=(1, 1), channels=8, kernel_size=(3, 3)), _const(8, 1, 1)))
    mod = _mod(y, x)
    expect = xrelay.build(mod, None, backends=("native",))
    xv = RNG.standard_normal((1, 8, 10, 10)).astype("float32")
    expect.set_input("x", xv)
    expect.run()
    part = partition_for_dnnl(mod.clone())
    m = xrelay.build(part, None, backends=("dnnl",))
    m.set_input("x", xv)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), expect.get_output(0).numpy(), rtol=1e-4, atol=1e-4)
    assert m.executor.step_backends.count("dnnl") == 1
    (plan,) = [c.dnnl_plan for _, _, c in m.executor.steps if hasattr(c, "dnnl_plan")]
    assert len(plan.steps) == 2 and plan.temp_bytes == 8 * 10 * 10 * 4
    # the same module on the native kernels alone
    n = xrelay.build(part, None, backends=("native",))
    n.set_input("x", xv)
    n.run()
    np.testing.assert_allclose(n.get_output(0).numpy(), expect.get_output(0).numpy(), rtol=1e-5, atol=1e-5)


def test_profile_names_the_backend_of_each_step():
    x = relay.var("x", shape=(1, 4, 8, 8))
    y = relay.nn.relu(relay.add(_conv(x, _const(4, 4, 3, 3), padding=(1, 1), channels=4, kernel_size=(3, 3)), _const(4, 1, 1)))
    m = xrelay.build(_mod(y, x), None)
    m.set_input("x", np.ones((1, 4, 8, 8), "float32"))
    table = m.profile()
    assert "Backend" in table.splitlines()[0]
    row = next(line for line in table.splitlines() if "tvmgen_default_dnnl_main_0" in line)
    assert " dnnl " in row and "dnnl.conv2d_bias_relu(nn.conv2d+add+nn.relu)" in row
    assert any(" native " in line for line in table.splitlines())


def test_backends_argument_is_checked():
    x = relay.var("x", shape=(2, 2))
    with pytest.raises(BuildError, match="unknown backend"):
        xrelay.build(_mod(relay.nn.relu(x), x), None, backends=("cudnn",))
    with pytest.raises(BuildError, match="unknown backend"):
        xrelay.build(_mod(relay.nn.relu(x), x), None, backends=())


def export_and_load(m, xv, tmp_path):
    """``m`` run on ``xv``, exported to ``tmp_path`` and loaded back; the loaded module, run on
    ``xv`` with the same outputs and oneDNN steps, and the export's paths."""
    m.set_input("x", xv)
    m.run()
    paths = [str(tmp_path / n) for n in ("graph.json", "lib.mlir", "params.npz")]
    m.export(*paths)
    loaded = xrelay.runtime.load(*paths)
    loaded.set_input("x", xv)
    loaded.run()
    assert "dnnl" in loaded.executor.step_backends
    np.testing.assert_array_equal(loaded.get_output(0).numpy(), m.get_output(0).numpy())
    return loaded, paths


def test_export_and_load_run_on_onednn(tmp_path):
    x = relay.var("x", shape=(1, 8, 10, 10))
    y = relay.nn.relu(relay.add(_conv(x, _const(8, 8, 3, 3), padding=(1, 1), channels=8, kernel_size=(3, 3)), _const(8, 1, 1)))
    export_and_load(xrelay.build(_mod(y, x), None), RNG.standard_normal((1, 8, 10, 10)).astype("float32"), tmp_path)


def test_loaded_weights_are_not_held_twice(tmp_path):
    """A loaded export's constants view the mapped params file (``runtime.npz.map_npz``) and
    their pages go back to disk once oneDNN has its reordered copies (``release_pages``,
    then the whole file: ``release_files``)."""
    x = relay.var("x", shape=(1, 128, 16, 16))
    y = x
    for k in (3, 1, 3):  # Winograd, direct, Winograd
        w = (RNG.standard_normal((128, 128, k, k)) / np.sqrt(128 * k * k)).astype("float32")
        y = relay.nn.relu(_conv(y, relay.const(w), padding=(k // 2, k // 2), channels=128, kernel_size=(k, k)))
    xv = RNG.standard_normal((1, 128, 16, 16)).astype("float32")
    loaded, paths = export_and_load(xrelay.build(_mod(y, x), None), xv, tmp_path)
    weights = [op for op in loaded.program.walk() if isinstance(op, ConstantOp) and op.num_elements >= 128 * 128]
    assert len(weights) == 3
    # every weight views the params file, not a copy of it ...
    assert all(file_mapping_of(op.numpy()) is not None for op in weights)
    # ... and after loading and running, none of the file is resident: the oneDNN steps read
    # only their reordered copies, and the pages a read maps around it (up to 16 of the page
    # cache's, its neighbours' too, after they were handed back: 31 of the 304 pages here)
    # go back once the executor is built (``npz.release_files``)
    weight_bytes = sum(op.numpy().nbytes for op in weights)
    assert weight_bytes > 1_000_000
    assert resident_bytes(paths[2]) == 0
    # the constants are still the params (read back from the file on demand)
    params = dict(np.load(paths[2]))
    for name, value in loaded.get_params().items():
        np.testing.assert_array_equal(value, params[name])


def test_big_loaded_weights_are_reordered_in_parts(tmp_path, monkeypatch):
    """A weight of the mapped params file larger than two parts goes to oneDNN's format in
    parts along its outermost dimension, each part's file pages handed back after it
    (``primitives._reorder``): the file pages resident during its reorders stay within a few
    parts, not the whole weight beside its reordered copy. The outputs are those of the
    built module, bit for bit (a 1x1 convolution of 1024 to 2048 channels and a classifier of
    1000 outputs, whose last part is not whole blocks: 8 MB each)."""
    from xrelay.runtime.dnnl import primitives

    x = relay.var("x", shape=(1, 1024, 4, 4))
    w = (RNG.standard_normal((2048, 1024, 1, 1)) / 32).astype("float32")
    y = relay.nn.relu(_conv(x, relay.const(w), channels=2048, kernel_size=(1, 1)))
    y = relay.reshape(relay.nn.global_avg_pool2d(y), (1, 2048))
    y = relay.nn.dense(y, relay.const((RNG.standard_normal((1000, 2048)) / 45).astype("float32")))
    m = xrelay.build(_mod(y, x), None)
    resident: list[int] = []
    run = primitives._reorder_run

    def spy(lib, stored, src, dst, out):
        run(lib, stored, src, dst, out)
        if file_mapping_of(stored) is not None:
            resident.append(resident_bytes(tmp_path / "params.npz"))

    monkeypatch.setattr(primitives, "_reorder_run", spy)
    export_and_load(m, RNG.standard_normal((1, 1024, 4, 4)).astype("float32"), tmp_path)
    # 8 parts each (1 MB: 128 of the rows of 8 KB)
    assert len(resident) == 16
    # a part's pages, and what the kernel maps around a fault (a page cache folio, up to 2
    # MB here), never the weight's 8 MB (without the parts: all of it, after its one reorder)
    assert max(resident) <= 4 * primitives.REORDER_PART_BYTES


def test_winograd_on_onednn_same_bits_for_any_thread_count(fastest):
    """The transforms cut their work items by thread and oneDNN's matmul reduces in a fixed
    order: one, two or three threads give the same bits."""
    x = relay.var("x", shape=(1, 24, 18, 18))
    y = relay.nn.relu(_conv(x, _const(24, 24, 3, 3), padding=(1, 1), channels=24, kernel_size=(3, 3)))
    xv = RNG.standard_normal((1, 24, 18, 18)).astype("float32")
    outs = []
    for threads in (1, 2, 3):
        m = xrelay.build(_mod(y, x), None, threads=threads)
        assert _impls(m)[0][0] == "winograd_f4_input"
        m.set_input("x", xv)
        m.run()
        outs.append(m.get_output(0).numpy())
    np.testing.assert_array_equal(outs[1], outs[0])
    np.testing.assert_array_equal(outs[2], outs[0])


def test_export_without_winograd_loads_direct_on_onednn(tmp_path, monkeypatch, fastest):
    """A module built with ``XRELAY_DNNL_WINOGRAD=never`` has no workspace for Winograd's
    temporaries; loaded with the default rule its convolution still runs on oneDNN, direct
    (not on the native kernels), with the same outputs."""
    x = relay.var("x", shape=(1, 16, 16, 16))
    y = relay.nn.relu(relay.add(_conv(x, _const(16, 16, 3, 3), padding=(1, 1), channels=16, kernel_size=(3, 3)), _const(16, 1, 1)))
    xv = RNG.standard_normal((1, 16, 16, 16)).astype("float32")
    monkeypatch.setenv("XRELAY_DNNL_WINOGRAD", "never")
    m = xrelay.build(_mod(y, x), None)
    m.set_input("x", xv)
    m.run()
    paths = [str(tmp_path / n) for n in ("graph.json", "lib.mlir", "params.npz")]
    m.export(*paths)
    monkeypatch.delenv("XRELAY_DNNL_WINOGRAD")
    assert _impls(xrelay.build(_mod(y, x), None))[0][0] == "winograd_f4_input"  # the default
    loaded = xrelay.runtime.load(*paths)
    loaded.set_input("x", xv)
    loaded.run()
    (impls,) = _impls(loaded)
    assert len(impls) == 1 and "winograd" not in impls[0]
    np.testing.assert_array_equal(loaded.get_output(0).numpy(), m.get_output(0).numpy())


_FALLBACK = """
import warnings, numpy as np, xrelay
from xrelay import relay
x = relay.var("x", shape=(1, 4, 6, 6))
w = relay.const(np.ones((4, 4, 3, 3), "float32"))
y = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1), channels=4, kernel_size=(3, 3)))
mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function([x], y)))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    m1 = xrelay.build(mod, None)
    m2 = xrelay.build(mod, None, backends=("dnnl", "native"))
m1.set_input("x", np.ones((1, 4, 6, 6), "float32")); m1.run()
msgs = [str(w.message) for w in caught if "oneDNN" in str(w.message)]
print(len(msgs), msgs[0] if msgs else "")
print(sorted(set(m1.executor.step_backends + m2.executor.step_backends)))
print(float(m1.get_output(0).numpy()[0, 0, 2, 2]))
"""


def test_without_the_library_it_warns_once_and_runs_natively():
    env = dict(os.environ, XRELAY_DNNL_LIB="/nonexistent/libdnnl.so.3")
    out = subprocess.run([sys.executable, "-c", _FALLBACK], env=env, capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0].startswith("1 xrelay: the oneDNN backend is unavailable (cannot load /nonexistent/libdnnl.so.3")
    assert out[0].endswith("using the native kernels")
    assert out[1] == "['native']"
    assert out[2] == "36.0"  # 4 channels x 9 taps of ones


def test_consecutive_onednn_steps_run_in_one_call_with_the_same_bits():
    x = relay.var("x", shape=(1, 8, 12, 12))
    h = relay.nn.relu(relay.add(_conv(x, _const(8, 8, 3, 3), padding=(1, 1), channels=8, kernel_size=(3, 3)), _const(8, 1, 1)))
    h = relay.nn.max_pool2d(h, pool_size=(2, 2), strides=(2, 2))
    y = relay.clip(relay.add(_conv(h, _const(8, 8, 3, 3), padding=(1, 1), channels=8, kernel_size=(3, 3)), _const(8, 1, 1)), 0.0, 6.0)
    m = xrelay.build(_mod(y, x), None)
    ex = m.executor
    assert len(_work(m)) == 3
    # the input copy (it copies nothing: the first step reads the input's buffer), then the
    # layout transform in, three oneDNN steps and the transform out (reorders) as one thunk
    assert ex.step_backends == ["native"] + ["dnnl"] * 5 and ex.steps[0][2].thunks == []
    assert len(ex._thunks) == 1 and [b for b, _ in ex.program] == ["dnnl"] * 5
    m.set_input("x", RNG.standard_normal((1, 8, 12, 12)).astype("float32"))
    m.run()
    joined = m.get_output(0).numpy().copy()
    one_by_one = ex.step_outputs()[-1][0]
    np.testing.assert_array_equal(joined, one_by_one)


def _impls(m):
    """The implementation of every oneDNN step's primitives and transforms, by step."""
    return [c.dnnl_plan.impls for o, c in _work(m)]


def test_winograd_choice_by_rule(monkeypatch, fastest):
    """``XRELAY_DNNL_WINOGRAD``: by default (``dnnl``) a 3x3 stride-1 convolution runs on the
    oneDNN backend as Winograd F(4x4, 3x3) (the shim's transforms around a oneDNN matmul) and
    the strided one as oneDNN's direct convolution; with ``never`` both run direct; with ``f4``
    the 3x3 stride-1 one (outputs of at least 28x28) goes back to the native Winograd kernel."""
    from xrelay.backend.dnnl.partition import winograd_choice
    from xrelay.runtime.dnnl.primitives import winograd_in_dnnl

    x = relay.var("x", shape=(1, 16, 28, 28))
    h = relay.nn.relu(relay.add(_conv(x, _const(16, 16, 3, 3), padding=(1, 1), channels=16, kernel_size=(3, 3)), _const(16, 1, 1)))
    y = relay.nn.relu(relay.add(_conv(h, _const(16, 16, 3, 3), strides=(2, 2), padding=(1, 1), channels=16, kernel_size=(3, 3)), _const(16, 1, 1)))
    inputs = {"x": RNG.standard_normal((1, 16, 28, 28)).astype("float32")}
    m = _check(_mod(y, x), inputs, 2)
    wino = ["winograd_f4_input", "brg:avx512_core", "winograd_f4_output"]
    impls = _impls(m)
    assert [i[0] for i in impls] == ["winograd_f4_input", impls[1][0]] and impls[1][0].startswith(("brgconv", "jit"))
    assert impls[0][::2] == wino[::2] and len(impls[0]) == 3
    assert winograd_in_dnnl(64, 64, 56, 56) and winograd_in_dnnl(256, 256, 14, 14)
    assert not winograd_in_dnnl(512, 512, 7, 7) and not winograd_in_dnnl(8, 64, 56, 56)
    assert not winograd_choice((3, 3), (1, 1), (1, 1), 1, 64, 64, 56, 56)  # not native
    monkeypatch.setenv("XRELAY_WINOGRAD", "0")  # Winograd off everywhere
    assert not winograd_in_dnnl(64, 64, 56, 56)
    monkeypatch.delenv("XRELAY_WINOGRAD")

    monkeypatch.setenv("XRELAY_DNNL_WINOGRAD", "never")
    m = _check(_mod(y, x), inputs, 2)
    assert all(len(i) == 1 and "winograd" not in i[0] for i in _impls(m))
    assert not winograd_in_dnnl(64, 64, 56, 56)

    monkeypatch.setenv("XRELAY_DNNL_WINOGRAD", "f4")
    m = _check(_mod(y, x), inputs, 1)
    ops = [(b, o) for (_, o, _), b in zip(m.executor.steps, m.executor.step_backends) if "conv2d" in o]
    assert ops == [("native", "nn.conv2d+add+nn.relu"), ("dnnl", "dnnl.conv2d_bias_relu(nn.conv2d+add+nn.relu)")]
    (native,) = [c for (_, o, c), b in zip(m.executor.steps, m.executor.step_backends) if b == "native" and "conv2d" in o]
    assert len(native.winograd) == 1  # its transformed weights: it runs as Winograd
    assert winograd_choice((3, 3), (1, 1), (1, 1), 1, 64, 64, 56, 56)
    assert not winograd_choice((3, 3), (1, 1), (1, 1), 1, 256, 256, 14, 14)  # F(2x2): oneDNN
    assert not winograd_choice((3, 3), (2, 2), (1, 1), 1, 64, 64, 56, 56)
    assert not winograd_choice((1, 1), (1, 1), (1, 1), 1, 64, 64, 56, 56)
    assert not winograd_in_dnnl(64, 64, 56, 56)
    monkeypatch.setenv("XRELAY_DNNL_WINOGRAD", "always")
    assert winograd_choice((3, 3), (1, 1), (1, 1), 1, 256, 256, 14, 14)


@pytest.mark.parametrize(
    "n, c, o, hw, padding, epilogue",
    [
        (1, 16, 24, 14, (1, 1), "bias_relu"),  # one tile column short of 4 x 4 tiles
        (2, 24, 16, 17, (1, 1), "bias"),  # a batch; 17 = 4 * 4 + 1: a last tile of one row
        (1, 16, 16, 16, (2, 0, 0, 2), "none"),  # asymmetric padding, a bare conv2d
        (1, 80, 72, 15, (0, 1, 2, 1), "relu"),  # channels past one 64-channel block
        (1, 16, 16, 14, (1, 1), "bias_sum_relu"),  # a ResNet basic block's second conv
        (2, 72, 72, 15, (1, 1), "bias_sum"),  # the residual post-op without ReLU
    ],
)
def test_winograd_on_onednn_matches_the_native_kernels(n, c, o, hw, padding, epilogue, fastest):
    """The Winograd steps (input transform, oneDNN matmul, output transform with the bias and
    ReLU, and a residual: the sum post-op) agree with the native direct convolution within 1e-4 of the output's largest
    magnitude for batches, odd sizes (tiles
    cut at the image's edge), asymmetric padding and channels past one block of 64; the
    transformed tiles and products are workspace temporaries, so the arena is the plan's."""
    x = relay.var("x", shape=(n, c, hw, hw))
    y = _conv(x, _const(o, c, 3, 3), padding=padding, channels=o, kernel_size=(3, 3))
    if epilogue.startswith("bias"):
        y = relay.add(y, _const(o, 1, 1))
    if "sum" in epilogue:
        y = relay.add(y, x)  # the residual: read from the arena by the output transform
    if epilogue.endswith("relu"):
        y = relay.nn.relu(y)
    inputs = {"x": RNG.standard_normal((n, c, hw, hw)).astype("float32")}
    m = _check(_mod(y, x), inputs, 1, rtol=0, scaled=True)
    (impls,) = _impls(m)
    assert impls[0] == "winograd_f4_input" and impls[-1] == "winograd_f4_output", impls
    assert ("sum" in epilogue) == ("sum" in _work(m)[0][0])  # the residual fused, not a native add
    (plan,) = [c.dnnl_plan for _, c in _work(m)]
    pt, pl, pb, pr = padding if len(padding) == 4 else padding * 2
    oh = hw + pt + pb - 2
    tiles = n * (-(-oh // 4)) * (-(-(hw + pl + pr - 2) // 4))
    assert plan.temp_bytes >= 36 * tiles * (c + o) * 4  # both temporaries planned
    assert m.arena_bytes == sum(op.size.value.data for op in m.program.ops if op.name == "memory.pool")
    # every other way the function can run (in bands of tile rows, direct) gives the same
    # outputs: the bands the same arithmetic per tile, direct within the Winograd tolerance
    out = m.get_output(0).numpy()
    ways = _every_way(m, inputs)
    labels = [label for label, _, _ in ways]
    assert labels[0] == "winograd" and labels[-1] == "direct" and any(w.startswith("winograd-rows=") for w in labels)
    th = -(-oh // 4)
    for label, got, impls in ways:
        if label == "direct":
            assert len(impls) == 1 and "winograd" not in impls[0]
            np.testing.assert_allclose(got, out, rtol=0, atol=1e-4 * float(np.max(np.abs(out))))
            continue
        bands = n * -(-th // int(label.split("=")[1])) if "=" in label else 1  # whole: every image at once
        assert len(impls) == 3 * bands, (label, impls)  # three steps per band
        # (the same sums with AVX-512's brgemm; AVX2's jit GEMM orders them by the band's rows)
        close = 1e-6 if platform.avx512() else 1e-5
        np.testing.assert_allclose(got, out, rtol=0, atol=close * float(np.max(np.abs(out))))


def _every_way(m, inputs):
    """``(label, output, impls)`` of the built module run each way its oneDNN function offers
    (``relay.scratch_options``; the workspace planned for the fastest, the largest)."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import StringAttr

    from xrelay.dialects.memory import SCRATCH_CHOICE_ATTR, scratch_options
    from xrelay.runtime.graph_executor import GraphModule

    (name,) = [f.sym_name.data for f in m.program.ops if isinstance(f, func.FuncOp) and scratch_options(f)]
    labels = [label for label, _ in scratch_options(next(f for f in m.program.ops if getattr(f, "sym_name", None) and f.sym_name.data == name))]
    out = []
    for label in labels:
        program = m.program.clone()
        fn = next(f for f in program.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name)
        fn.attributes[SCRATCH_CHOICE_ATTR] = StringAttr(label)
        g = GraphModule(program)
        g.set_input(**inputs)
        g.run()
        (impls,) = _impls(g)
        out.append((label, g.get_output(0).numpy(), impls))
    return out


def _choice_model():
    """x (1x16x56x56, 0.2 MB) -> a 1x1 convolution to 128 channels (1.6 MB) -> a 2x2 max pool
    (0.4 MB; with its input 2.0 MB live, the peak without scratch) -> a 3x3 convolution
    128 -> 128 at 28x28, Winograd: its two temporaries (1.8 MB at once) beside its input and
    output (0.8 MB) would be the peak; in bands of 4 tile rows (two bands, 1.0 MB) they stay
    under the pool's step."""
    x = relay.var("x", shape=(1, 16, 56, 56))
    h = relay.nn.relu(relay.add(_conv(x, _const(128, 16, 1, 1), channels=128, kernel_size=(1, 1)), _const(128, 1, 1)))
    p = relay.nn.max_pool2d(h, pool_size=(2, 2), strides=(2, 2))
    y = relay.nn.relu(relay.add(_conv(p, _const(128, 128, 3, 3), padding=(1, 1), channels=128, kernel_size=(3, 3)), _const(128, 1, 1)))
    return _mod(y, x), {"x": RNG.standard_normal((1, 16, 56, 56)).astype("float32")}


def _built(mod, inputs, **config):
    from xdsl.dialects import func

    from xrelay.dialects.memory import scratch_choice, scratch_options

    with xrelay.transform.PassContext(config={f"relay.ChooseScratch.{k}": v for k, v in config.items()}):
        m = xrelay.build(mod, None)
    m.set_input(**inputs)
    m.run()
    (fn,) = [f for f in m.program.ops if isinstance(f, func.FuncOp) and scratch_options(f)]
    return m, scratch_choice(fn)


def test_choose_scratch_takes_the_smaller_way_where_the_scratch_is_the_peak():
    """``choose-scratch`` (``xrelay.build``'s default, priority ``balanced``): the Winograd
    convolution whose temporaries would set the plan's peak runs in bands of output rows --
    the fastest way that keeps the peak at the lowest reachable (the pool's step) -- and the
    arena shrinks by what the bands save; the outputs are the native kernels' (the reference)
    and the fastest way's. ``speed`` keeps whole Winograd, ``memory`` takes the direct
    convolution, a budget as large as the fastest way's peak keeps it."""
    from xrelay.transforms.choose_scratch import ChooseScratchError

    mod, inputs = _choice_model()
    fast, fast_way = _built(mod, inputs, priority="speed")
    m, way = _built(mod, inputs)
    assert (fast_way, way) == ("winograd", "winograd-rows=4")
    (plan,) = [c.dnnl_plan for o, c in _work(m) if "Winograd" in o]
    assert plan.impls == ["winograd_f4_input", plan.impls[1], "winograd_f4_output"] * 2  # two bands
    (whole,) = [c.dnnl_plan for o, c in _work(fast) if "Winograd" in o]
    pooled = 28 * 28 * 128 * 4
    assert fast.arena_bytes == 2 * pooled + whole.workspace_bytes  # the convolution's step, whole
    assert m.arena_bytes == 4 * pooled + pooled  # the pool's step: the peak without scratch
    assert 2 * pooled + plan.workspace_bytes <= m.arena_bytes < 2 * pooled + whole.workspace_bytes
    ref = xrelay.build(mod, None, backends=("native",))
    ref.set_input(**inputs)
    ref.run()
    out, want = m.get_output(0).numpy(), ref.get_output(0).numpy()
    assert np.isfinite(out).all() and np.std(out) > 0
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-4 * float(np.max(np.abs(want))))
    # (1e-5 where oneDNN's matmul is its jit GEMM, AVX2: it orders a band's sums by its rows)
    close = 1e-6 if platform.avx512() else 1e-5
    np.testing.assert_allclose(out, fast.get_output(0).numpy(), rtol=0, atol=close * float(np.max(np.abs(want))))
    small, small_way = _built(mod, inputs, priority="memory")
    assert small_way == "direct" and small.arena_bytes == m.arena_bytes  # no lower than the pool's step
    assert _built(mod, inputs, budget=fast.arena_bytes)[1] == "winograd"
    with pytest.raises(ChooseScratchError, match="unknown priority 'fast'"):
        _built(mod, inputs, priority="fast")


def test_chained_residual_fuses_into_the_later_projection():
    """MobileNetV2's first residual of a stage adds two projections; the earlier one also feeds
    the next block, so the sum becomes a post-op of the later one (no native add step)."""
    x = relay.var("x", shape=(1, 8, 10, 10))
    a = relay.add(_conv(x, _const(16, 8, 1, 1), channels=16, kernel_size=(1, 1)), _const(16, 1, 1))
    h = relay.clip(relay.add(_conv(a, _const(16, 16, 1, 1), channels=16, kernel_size=(1, 1)), _const(16, 1, 1)), 0.0, 6.0)
    b = relay.add(_conv(h, _const(16, 16, 1, 1), channels=16, kernel_size=(1, 1)), _const(16, 1, 1))
    y = relay.add(a, b)
    m = _check(_mod(y, x), {"x": RNG.standard_normal((1, 8, 10, 10)).astype("float32")}, 3)
    assert _work(m)[-1][0] == "dnnl.conv2d_bias_sum(nn.conv2d+add+add)"
    native = [o for (_, o, _), bk in zip(m.executor.steps, m.executor.step_backends) if bk == "native"]
    assert native == ["copy"]  # the input; the layout transforms at the edges are reorders


def test_decomposed_layer_norm_is_one_onednn_step():
    """SimplifyInference's arithmetic for nn.layer_norm is rewritten back into nn.layer_norm
    (Relay's LayerNormRewrite) and runs as one oneDNN primitive."""
    x = relay.var("x", shape=(4, 32))
    d = relay.add(relay.nn.dense(x, _const(32, 32)), _const(32))
    y = relay.nn.layer_norm(d, _const(32), _const(32), epsilon=1e-12)
    m = _check(_mod(y, x), {"x": RNG.standard_normal((4, 32)).astype("float32")}, 2)
    assert [o for o, _ in _work(m)] == ["dnnl.dense_bias(nn.dense+add)", "nn.layer_norm"]
    assert "native" not in [b for b, (_, o, _) in zip(m.executor.step_backends, m.executor.steps) if o != "copy"]


def test_3d_convolutions_are_channels_last_onednn_steps():
    """A 3-D convolution (video models: R3D, R(2+1)D) with its bias, ReLU and residual is a
    oneDNN convolution with post-ops on channels-last NDHWC data (ConvertLayout's NDHWC /
    DHWIO; oneDNN's brgconv kernels, where NCDHW has only im2col + GEMM and, with the sum
    post-op, its reference code), nothing allocated outside the arena."""
    x = relay.var("x", shape=(1, 16, 4, 10, 10))
    kw = dict(padding=(1, 1, 1), channels=16, kernel_size=(3, 3, 3))
    a = relay.nn.relu(relay.add(relay.nn.conv3d(x, _const(16, 16, 3, 3, 3), **kw), _const(16, 1, 1, 1)))
    b = relay.add(relay.nn.conv3d(a, _const(16, 16, 3, 3, 3), **kw), _const(16, 1, 1, 1))
    y = relay.nn.relu(relay.add(b, x))
    m = _check(_mod(y, x), {"x": RNG.standard_normal((1, 16, 4, 10, 10)).astype("float32")}, 2)
    work = _work(m)
    assert [o for o, _ in work] == ["dnnl.conv3d_bias_relu(nn.conv3d+add+nn.relu)",
                                    "dnnl.conv3d_bias_sum_relu(nn.conv3d+add+add+nn.relu)"]  # fmt: skip
    # oneDNN's brgconv kernels for this CPU's ISA (brgconv:avx512_core, brgconv:avx2, ...)
    impls = [c.dnnl_plan.impls for _, c in work]
    assert impls[0] == impls[1] and len(impls[0]) == 1 and impls[0][0].startswith("brgconv:"), impls
    report = m.executor.outside_arena()
    assert (report.held_bytes, report.run_bytes) == (0, 0), report.steps


@pytest.mark.parametrize(
    "shape,wshape,kw,bias",
    [
        # a decoder's upsampling: stride 2, the output padding, a bias
        ((1, 8, 7, 7), (8, 6, 3, 3), {"strides": (2, 2), "padding": (1, 1, 1, 1), "output_padding": (1, 1)}, True),
        # grouped, dilated, padded unevenly
        ((1, 8, 7, 9), (8, 3, 3, 2), {"strides": (2, 1), "padding": (0, 1, 2, 0), "dilation": (2, 1), "groups": 4}, False),
        # ONNX Col2Im of 3x3 blocks (VOLO's fold): one group per channel, one-hot taps
        ((1, 36, 5, 5), "col2im", {"strides": (2, 2), "padding": (1, 1, 1, 1), "output_padding": (1, 1), "groups": 4}, False),
    ],
)
def test_transposed_convolutions_are_onednn_deconvolutions(shape, wshape, kw, bias):
    """``nn.conv2d_transpose`` (any groups, strides, dilation, padding, output padding) is
    oneDNN's deconvolution, its bias a post-op (``dnnl.deconv2d_bias``), with the values of
    the native kernels and nothing outside the arena (the native kernel's columns and canvas
    were run temporaries)."""
    if wshape == "col2im":  # the converter's kernel: channel c's tap t reads column c * 9 + t
        w = np.zeros((36, 1, 3, 3), np.float32)
        for col in range(36):
            w[col, 0, (col % 9) // 3, col % 3] = 1.0
        weight, wshape = relay.const(w), w.shape
    else:
        weight = _const(*wshape)
    groups = kw.get("groups", 1)
    channels = wshape[1] * groups
    x = relay.var("x", shape=shape)
    y = relay.nn.conv2d_transpose(x, weight, channels=channels, kernel_size=wshape[2:], **kw)
    if bias:
        y = relay.add(y, _const(channels, 1, 1))
    m = _check(_mod(y, x), {"x": RNG.standard_normal(shape).astype("float32")}, 1)
    work = _work(m)
    assert [o for o, _ in work] == ["dnnl.deconv2d_bias(nn.conv2d_transpose+add)" if bias else "nn.conv2d_transpose"]
    assert all("conv" in i for i in work[0][1].dnnl_plan.impls), work[0][1].dnnl_plan.impls
    report = m.executor.outside_arena()
    assert (report.held_bytes, report.run_bytes) == (0, 0), report.steps


def _written_layer_norm(d, form):
    """``d`` normalised over its last axis as a model writes it by hand: ``rsqrt``, the
    commuting ops' operands swapped (the scale's, the shift's, epsilon's)."""
    mean = relay.mean(d, axis=[-1], keepdims=True)
    centred = relay.subtract(d, mean)
    var = relay.mean(relay.multiply(centred, centred), axis=[-1], keepdims=True)
    if form == "rsqrt":
        y = relay.multiply(relay.rsqrt(relay.add(relay.const(1e-6), var)), centred)
    else:
        y = relay.divide(centred, relay.sqrt(relay.add(var, relay.const(1e-6))))
    return relay.add(_const(32), relay.multiply(_const(1, 32), y))


@pytest.mark.parametrize("form", ["no shift", "no scale", "neither", "rsqrt", "swapped"])
def test_every_written_form_of_layer_norm_is_one_onednn_step(form):
    """A norm without bias (MetaFormer's LayerNormNoBias, ``center=false``), without scale,
    without both, and the arithmetic written with ``rsqrt`` or with the commuting operands
    swapped: one oneDNN layer norm each, with its flags."""
    x = relay.var("x", shape=(4, 32))
    d = relay.add(relay.nn.dense(x, _const(32, 32)), _const(32))
    if form in ("rsqrt", "swapped"):
        y = _written_layer_norm(d, form)
    else:
        y = relay.nn.layer_norm(d, _const(32) + relay.const(1.0), _const(32), epsilon=1e-6,
                                center=form == "no scale", scale=form == "no shift")  # fmt: skip
    m = _check(_mod(y, x), {"x": RNG.standard_normal((4, 32)).astype("float32")}, 2, rtol=1e-5, atol=1e-5)
    assert [o for o, _ in _work(m)] == ["dnnl.dense_bias(nn.dense+add)", "nn.layer_norm"]
    assert "native" not in [b for b, (_, o, _) in zip(m.executor.step_backends, m.executor.steps) if o != "copy"]


def test_attention_heads_transposes_are_onednn_reorders():
    """reshape -> transpose -> reshape between two oneDNN steps (attention heads) where no
    batched matmul reads it is one reorder reading the permuted strides: no native step
    between the oneDNN steps."""
    x = relay.var("x", shape=(8, 32))
    q = relay.add(relay.nn.dense(x, _const(32, 32)), _const(32))
    t = relay.reshape(relay.transpose(relay.reshape(q, (1, 8, 4, 8)), (0, 2, 1, 3)), (32, 8))
    y = relay.add(relay.nn.dense(t, _const(16, 8)), _const(16))
    m = _check(_mod(y, x), {"x": RNG.standard_normal((8, 32)).astype("float32")}, 2)
    steps = [(b, o) for (_, o, _), b in zip(m.executor.steps, m.executor.step_backends)]
    assert steps.count(("dnnl", "transpose")) == 1
    assert [b for b, _ in steps] == ["native"] + ["dnnl"] * 3  # the input copy, then oneDNN


def test_attention_heads_are_strides_of_the_batched_matmul():
    """The heads' reshape -> transpose -> reshape before a batched matmul (Q, K^T) and after
    it (the context joined back) are the matmul's operand and result strides
    (``fold_views``): no copy between the dense steps and the matmul."""
    x = relay.var("x", shape=(8, 32))

    def heads(v):
        return relay.reshape(relay.transpose(relay.reshape(v, (1, 8, 4, 8)), (0, 2, 1, 3)), (4, 8, 8))

    q = relay.add(relay.nn.dense(x, _const(32, 32)), _const(32))
    k = relay.add(relay.nn.dense(x, _const(32, 32)), _const(32))
    v = relay.add(relay.nn.dense(x, _const(32, 32)), _const(32))
    kt = relay.reshape(relay.transpose(relay.reshape(k, (1, 8, 4, 8)), (0, 2, 3, 1)), (4, 8, 8))
    s = relay.nn.batch_matmul(heads(q), kt, transpose_b=False)
    ctx = relay.nn.batch_matmul(s, heads(v), transpose_b=False)
    y = relay.reshape(relay.transpose(relay.reshape(ctx, (1, 4, 8, 8)), (0, 2, 1, 3)), (8, 32))
    y = relay.add(relay.nn.dense(y, _const(32, 32)), _const(32))
    m = _check(_mod(y, x), {"x": RNG.standard_normal((8, 32)).astype("float32")}, 6)
    steps = [(b, o) for (_, o, _), b in zip(m.executor.steps, m.executor.step_backends)]
    assert [b for b, _ in steps] == ["native"] + ["dnnl"] * 6, steps  # the input copy, then oneDNN
    assert [o for _, o in steps[1:]].count("nn.batch_matmul") == 2


def test_primitives_are_made_for_the_executors_threads(tmp_path):
    """A oneDNN primitive keeps the OpenMP thread count current when its descriptor was made
    (its work split and scratchpad size): building after another module ran with one thread
    must still make the primitives for this module's threads, so an export loaded elsewhere
    finds the scratch the build stated and runs every step on oneDNN."""

    x = relay.var("x", shape=(128, 256))
    one = xrelay.build(_mod(relay.nn.dense(x, _const(64, 256)), x), None, threads=1)
    one.set_input("x", np.ones((128, 256), "float32"))
    one.run()  # OpenMP at one thread in this thread
    y = relay.add(relay.nn.dense(x, _const(768, 256)), _const(768))
    m = xrelay.build(_mod(y, x), None, threads=2)
    assert dnnl_library().xr_dnnl_threads() == 2  # the primitives were made for 2 threads
    paths = [str(tmp_path / n) for n in ("graph.json", "lib.mlir", "params.npz")]
    m.export(*paths)
    loaded = xrelay.runtime.load(*paths, threads=2)
    assert [o for o, _ in _work(loaded)] == ["dnnl.dense_bias(nn.dense+add)"]
    xv = RNG.standard_normal((128, 256)).astype("float32")
    for mod in (m, loaded):
        mod.set_input("x", xv)
        mod.run()
    np.testing.assert_array_equal(loaded.get_output(0).numpy(), m.get_output(0).numpy())


@pytest.mark.parametrize(
    "op, hw, attrs",
    [
        ("MaxPool", 56, dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)),  # GoogLeNet's stem
        ("MaxPool", 13, dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], ceil_mode=1)),
        ("MaxPool", 10, dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)),  # no overhang
        ("MaxPool", 12, dict(kernel_shape=[2, 3], strides=[3, 2], pads=[1, 0, 0, 1], ceil_mode=1)),
        ("AveragePool", 12, dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)),
        ("AveragePool", 11, dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)),
    ],
)
def test_ceil_mode_pools_run_on_onednn_as_onnxruntime_does(op, hw, attrs):
    """oneDNN has no ceil mode: a ceil-mode pool is its floor-mode pool with the last window's
    overhang added to the bottom/right padding (``kernels.nn.ceil_mode_padding``), so it runs
    on oneDNN (GoogLeNet's and SqueezeNet's pools ran on the slower native kernel) with
    onnxruntime's results; an average pool that counts padding keeps the native kernel (the
    overhang is not counted, explicit padding would be)."""
    ort = pytest.importorskip("onnxruntime")
    from xrelay.frontends.onnx import from_onnx
    from xrelay.testing.onnx_models import GraphBuilder

    g = GraphBuilder(0)
    y = g.relu(g.conv("x", 3, 16, 3, stride=1, pad=1, name="c"))
    y = g.node(op, [y], **attrs)
    model = g.model({"x": ([1, 3, hw, hw], np.float32)}, [y], "pools")
    x = RNG.standard_normal((1, 3, hw, hw)).astype("float32")
    mod, params = from_onnx(model)
    m = xrelay.build(mod, params, backends=("dnnl", "native"))
    m.set_input(x=x)
    m.run()
    out = m.get_output(0).numpy()
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (ref,) = sess.run(None, {"x": x})
    assert np.all(np.isfinite(out)) and out.shape == ref.shape and np.std(ref) > 0.1
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    pools = [b for (_, o, _), b in zip(m.executor.steps, m.executor.step_backends) if "pool" in o]
    assert pools == ["dnnl"], m.executor.steps


def test_ceil_mode_average_counting_padding_stays_native():
    p = relay.var("p", shape=(1, 4, 12, 12))
    counting = relay.nn.avg_pool2d(p, pool_size=(3, 3), strides=(2, 2), ceil_mode=True, count_include_pad=True)
    r = _both(_mod(counting, p), {"p": RNG.standard_normal((1, 4, 12, 12)).astype("float32")})
    m = r["dnnl"][2]
    assert [b for (_, o, _), b in zip(m.executor.steps, m.executor.step_backends) if "pool" in o] == ["native"]
    np.testing.assert_array_equal(r["dnnl"][0], r["native"][0])


def _conv64(x, w, pad):
    """A float64 direct convolution of one ``C x H x W`` image, stride 1: the reference."""
    x = np.pad(x, ((0, 0), (pad, pad), (pad, pad)))
    cols = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(1, 2))
    return np.einsum("chwij,ocij->ohw", cols, w)


def test_winograd_error_budget_keeps_large_maps_exact():
    """The whole model's error budget (``WINOGRAD_F4_MAX_AREA``): a 3x3 convolution on a map
    larger than 128 x 128 (a network's first, smoothest maps, whose errors the most layers
    amplify) runs direct on oneDNN and as F(2x2, 3x3) on the native kernels; the same
    network's 64 x 64 convolution runs as F(4x4, 3x3) on both. Each result is within 1e-5 of
    a float64 direct convolution of the same float32 weights."""
    from xrelay.backend.native.scratch import winograd_tile
    from xrelay.runtime.dnnl.primitives import winograd_in_dnnl
    from xrelay.runtime.native.workspace import WINOGRAD_F4_MAX_AREA

    assert WINOGRAD_F4_MAX_AREA == 128 * 128
    assert winograd_in_dnnl(32, 32, 128, 128) and not winograd_in_dnnl(32, 32, 129, 128)
    assert winograd_tile((3, 3), (1, 1), (1, 1), 1, 32, 32, 128, 128) == 4
    assert winograd_tile((3, 3), (1, 1), (1, 1), 1, 32, 32, 147, 147) == 2
    assert winograd_tile((3, 3), (1, 1), (1, 1), 1, 32, 32, 200, 100) == 2  # by area
    # a smooth image-like input (low frequencies and a little noise), two 16-channel layers
    rng = np.random.default_rng(3)
    yy, xx = np.mgrid[0:130, 0:130] / 130
    image = np.stack([np.sin(2 * np.pi * (k + 1) * (xx + 0.7 * yy) + k) for k in range(16)])
    image = (image + 0.05 * rng.standard_normal(image.shape)).astype("float32")
    w1 = (rng.standard_normal((16, 16, 3, 3)) / 12).astype("float32")
    w2 = (rng.standard_normal((16, 16, 3, 3)) / 12).astype("float32")
    b1 = rng.standard_normal((16, 1, 1)).astype("float32")
    x = relay.var("x", shape=(1, 16, 130, 130))
    h = relay.nn.relu(relay.add(_conv(x, relay.const(w1), padding=(1, 1), channels=16, kernel_size=(3, 3)), relay.const(b1)))
    h = relay.nn.max_pool2d(h, pool_size=(2, 2), strides=(2, 2))  # 65 x 65
    y = _conv(h, relay.const(w2), channels=16, kernel_size=(3, 3))  # 63 x 63
    a = np.maximum(_conv64(image.astype(np.float64), w1.astype(np.float64), 1) + b1, 0)
    a = a[:, :130, :130].reshape(16, 65, 2, 65, 2).max(axis=(2, 4))
    ref = _conv64(a, w2.astype(np.float64), 0)
    r = _both(_mod(y, x), {"x": image[None]})
    for out, _, _ in r.values():
        assert np.all(np.isfinite(out))
        assert np.max(np.abs(out[0] - ref)) <= 1e-5 * np.max(np.abs(ref))
    impls = _impls(r["dnnl"][2])
    assert impls[0][0].startswith(("brgconv", "jit")), impls  # 130 x 130: direct
    assert impls[-1][0] == "winograd_f4_input", impls  # 63 x 63: F(4x4, 3x3)
    m = r["native"][2]
    tiles = [u.shape[0] for _, o, c in m.executor.steps if "conv2d" in o for u in c.winograd]
    assert tiles == [16, 36]  # F(2x2, 3x3)'s 4 x 4 transformed weights, then F(4x4)'s 6 x 6


def test_library_found_from_the_wheels_record_as_importlib_metadata_finds_it(tmp_path, monkeypatch):
    """``library_path`` reads the oneDNN wheel's RECORD itself (``importlib.metadata`` would
    import ``email`` and ``csv`` into every process that loads a model): the same file as
    ``importlib.metadata`` locates, and a RECORD on ``sys.path`` is read as listed."""
    from importlib import metadata

    from xrelay.runtime.dnnl.library import _recorded_library, library_path

    files = [f for f in metadata.distribution("onednn-cpu-gomp").files or () if f.name == "libdnnl.so.3"]
    want = str(files[0].locate().resolve())
    assert _recorded_library() == want == library_path()
    site = tmp_path / "site"
    (site / "onednn_cpu_gomp-9.dist-info").mkdir(parents=True)
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libdnnl.so.3").write_bytes(b"")
    (site / "onednn_cpu_gomp-9.dist-info" / "RECORD").write_text("x.py,,1\n../lib/libdnnl.so.3,sha256=abc,0\n")
    monkeypatch.setattr("sys.path", [str(site)])
    assert _recorded_library() == str((tmp_path / "lib" / "libdnnl.so.3").resolve())


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("size, chain", [(6, "shift_relu"), (40, "shift_relu"), (40, "scale_clip")])
def test_concatenation_between_onednn_steps_runs_on_its_threads(size, chain, threads):
    """A concatenation of two oneDNN results read by a oneDNN step, with the elementwise
    chain on its result (DenseNet's batch-norm shift and ReLU; a scale, a shift and a clip:
    four kernel ops), is a oneDNN step (offload_concatenations, the shim's
    concat_epi on its OpenMP threads; 40x40 is past the size it joins the team at). Max
    pools and the chain are exact: the output equals numpy's bits."""
    x = relay.var("x", shape=(1, 4, size, size))
    y = relay.var("y", shape=(1, 2, size, size))
    p = relay.nn.max_pool2d(x, pool_size=(1, 1))
    q = relay.nn.max_pool2d(y, pool_size=(1, 1))
    shift = RNG.standard_normal((1, 6, 1, 1)).astype("float32")
    scale = RNG.standard_normal((1, 6, 1, 1)).astype("float32")
    c = relay.concatenate([p, q], axis=1)
    if chain == "shift_relu":
        e = relay.nn.relu(relay.add(c, relay.const(shift)))
    else:
        e = relay.clip(relay.add(relay.const(shift), relay.multiply(c, relay.const(scale))), -0.5, 1.0)
    body = relay.nn.max_pool2d(e, pool_size=(2, 2), strides=(2, 2))
    feeds = {"x": RNG.standard_normal((1, 4, size, size)).astype("float32"),
             "y": RNG.standard_normal((1, 2, size, size)).astype("float32")}  # fmt: skip
    joined = np.concatenate([feeds["x"], feeds["y"]], axis=1)
    if chain == "shift_relu":
        ref = np.maximum(joined + shift, np.float32(0))
    else:
        ref = np.minimum(np.maximum(shift + joined * scale, np.float32(-0.5)), np.float32(1.0))
    ref = ref.reshape(1, 6, size // 2, 2, size // 2, 2).max(axis=(3, 5))
    m = xrelay.build(_mod(body, x, y), None, threads=threads)
    m.set_input(**feeds)
    m.run()
    out = m.get_output(0).numpy()
    assert np.std(out) > 0.1
    np.testing.assert_array_equal(out, ref)
    labels = [(ops, b) for (_, ops, _), b in zip(m.executor.steps, m.executor.step_backends) if "concatenate" in ops]
    expected = "concatenate+add+nn.relu" if chain == "shift_relu" else "concatenate+multiply+add+clip"
    assert labels == [(expected, "dnnl")], [(o, b) for (_, o, _), b in zip(m.executor.steps, m.executor.step_backends)]


@pytest.mark.parametrize(("width", "apart"), [(256, True), (8, False)])
@pytest.mark.parametrize("act", ["relu", "gelu"])
def test_gemm_convolution_runs_its_activation_after_it(width, act, apart):
    """A 1-D convolution over NCW data, which oneDNN runs as im2col + GEMM (``gemm:jit``),
    with a bias and an activation: the activation is an eltwise primitive after it, in place
    over its output, from ``GEMM_CONV_ELTWISE_APART`` output elements on (the GEMM
    convolution's eltwise post-ops took 2-6x its time); below, a post-op. Either way the
    native kernels' results."""
    from xrelay.runtime.dnnl.primitives import GEMM_CONV_ELTWISE_APART, FunctionPlan

    x = relay.var("x", shape=(1, 16, width))
    y = relay.add(
        relay.nn.conv1d(x, _const(32, 16, 3), padding=(1, 1), channels=32, kernel_size=(3,)),
        _const(32, 1),
    )
    if act == "relu":
        y = relay.nn.relu(y)
    else:  # GELU as exporters write it: x * (erf(x / sqrt 2) + 1) * 0.5
        y = relay.multiply(
            relay.multiply(
                y,
                relay.add(
                    relay.erf(relay.multiply(y, relay.const(np.float32(0.70710677)))),
                    relay.const(np.float32(1.0)),
                ),
            ),
            relay.const(np.float32(0.5)),
        )
    xv = {"x": RNG.standard_normal((1, 16, width)).astype("float32")}
    r = _both(_mod(y, x), xv)
    out, backends, m = r["dnnl"]
    np.testing.assert_allclose(out, r["native"][0], rtol=1e-4, atol=1e-5)
    assert np.all(np.isfinite(out)) and float(np.std(out)) > 0.1
    (plan,) = [
        c.dnnl_plan
        for _, _, c in m.executor.steps
        if isinstance(getattr(c, "dnnl_plan", None), FunctionPlan)
    ]
    assert "gemm" in plan.steps[0].impl and plan.steps[0].family == "conv", plan.impls
    assert (32 * width >= GEMM_CONV_ELTWISE_APART) == apart
    assert [s.family for s in plan.steps] == (["conv", "elementwise"] if apart else ["conv"]), (
        plan.impls
    )
    if apart:
        (conv, elt) = plan.steps
        assert (
            elt.args[0][1] is elt.args[1][1] is next(v for k, v in conv.args if k == 17)
        )  # in place, its output


def test_the_build_logs_nothing_for_ops_it_keeps_channels_first(caplog):
    """The build's own channels-last conversion leaves ops it has no layout for (a transposed
    convolution, a resize) as they are without the warning a user's ``ConvertLayout`` gives
    for them: a default build of such a model logs nothing."""
    x = relay.var("x", shape=(1, 4, 8, 8))
    y = relay.nn.relu(relay.nn.conv2d(x, _const(8, 4, 3, 3), padding=(1, 1)))
    y = relay.nn.conv2d_transpose(y, _const(8, 4, 2, 2), channels=4, kernel_size=(2, 2), strides=(2, 2))
    y = relay.image.resize2d(y, size=(8, 8))
    with caplog.at_level(logging.DEBUG):
        _check(_mod(relay.nn.conv2d(y, _const(4, 4, 3, 3), padding=(1, 1)), x), {"x": RNG.standard_normal((1, 4, 8, 8)).astype("float32")}, 3)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


@pytest.mark.parametrize("group", [1, 2])
def test_onnx_decoder_upsampling_is_one_channels_last_deconvolution(group):
    """A U-Net decoder step from ONNX (ConvTranspose with a bias, stride 2, then the skip
    concatenation and a convolution): the transposed convolution runs channels-last with the
    convolutions (no layout transform around it: each cost a reorder of the whole map) and
    its bias is the deconvolution's post-op (the importer gives it ``channels``, as Relay's
    does); onnxruntime's values, nothing outside the arena."""
    from xrelay.testing.onnx_models import GraphBuilder, build_and_run

    g = GraphBuilder(4)
    skip = g.conv("data", 4, 8, 3, bias=True)
    down = g.node("MaxPool", [skip], kernel_shape=[2, 2], strides=[2, 2])
    mid = g.conv(down, 8, 16, 3, bias=True)
    w = g.init("up_w", (RNG.standard_normal((16, 8 // group, 2, 2)) * 0.3).astype("float32"))
    b = g.init("up_b", (RNG.standard_normal(8) * 0.2).astype("float32"))
    up = g.node("ConvTranspose", [mid, w, b], kernel_shape=[2, 2], strides=[2, 2], group=group)
    out = g.conv(g.node("Concat", [up, skip], axis=1), 16, 4, 3, bias=True)
    model = g.model({"data": ([1, 4, 16, 16], np.float32)}, [out], "decoder", opset=17)
    feeds = {"data": RNG.standard_normal((1, 4, 16, 16)).astype("float32")}
    m, got, ref = build_and_run(model, feeds)
    assert np.isfinite(got).all() and float(np.std(ref)) > 0.1
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * float(np.abs(ref).max()))
    ops = [o for _, o, _ in m.executor.steps]
    assert "dnnl.deconv2d_bias(nn.conv2d_transpose+add)" in ops, ops
    assert ops.count("layout_transform") == 2, ops  # the edges only
    report = m.executor.outside_arena()
    assert (report.held_bytes, report.run_bytes) == (0, 0), report.steps


@pytest.mark.parametrize(
    "pool, kw",
    [
        ("max", dict(pool_size=(2, 2, 2), strides=(2, 2, 2))),  # a 3-D U-Net's downsampling
        ("max", dict(pool_size=(1, 3, 3), strides=(1, 2, 2), padding=(0, 1, 1, 0, 1, 1))),  # video stems
        ("avg", dict(pool_size=(2, 3, 3), strides=(1, 2, 2), padding=(1, 1, 1, 0, 1, 1), count_include_pad=False)),
        ("avg", dict(pool_size=(2, 2, 2), strides=(2, 2, 2), padding=(1, 0, 0, 1, 0, 0), count_include_pad=True)),
    ],
)
def test_3d_pools_between_3d_convolutions_are_onednn_pools(pool, kw):
    """A 3-D max or average pool between channels-last 3-D convolutions is oneDNN's pooling
    on the NDHWC data (its reader refused 3-D pools, and the native reference pool ran in
    the function's place with temporaries outside the arena: 5.5 ms and 262 KB in a small
    3-D U-Net); the reference values, nothing outside the arena."""
    x = relay.var("x", shape=(1, 8, 6, 10, 10))
    kw3 = dict(padding=(1, 1, 1), channels=8, kernel_size=(3, 3, 3))
    a = relay.nn.relu(relay.add(relay.nn.conv3d(x, _const(8, 8, 3, 3, 3), **kw3), _const(8, 1, 1, 1)))
    p = (relay.nn.max_pool3d if pool == "max" else relay.nn.avg_pool3d)(a, **kw)
    y = relay.add(relay.nn.conv3d(p, _const(8, 8, 3, 3, 3), **kw3), _const(8, 1, 1, 1))
    m = _check(_mod(y, x), {"x": RNG.standard_normal((1, 8, 6, 10, 10)).astype("float32")}, 3)
    assert [o for o, _ in _work(m)][1] == f"nn.{pool}_pool3d"
    report = m.executor.outside_arena()
    assert (report.held_bytes, report.run_bytes) == (0, 0), report.steps


def test_a_1d_models_transposed_convolution_keeps_its_layout():
    """A 1-D model's decoder (Conv1d, then ConvTranspose1d, imported as a 2-D transposed
    convolution of height 1): with no 2-D convolution to join (``FOLLOWERS``) it is not
    converted to channels-last, so no layout transform runs around it; onnxruntime's
    values."""
    from xrelay.testing.onnx_models import GraphBuilder, build_and_run

    g = GraphBuilder(5)
    w = g.init("enc_w", (RNG.standard_normal((8, 1, 4)) * 0.3).astype("float32"))
    enc = g.node("Relu", [g.node("Conv", ["data", w], strides=[2])])
    u = g.init("dec_w", (RNG.standard_normal((8, 1, 4)) * 0.3).astype("float32"))
    out = g.node("ConvTranspose", [enc, u], strides=[2])
    model = g.model({"data": ([2, 1, 64], np.float32)}, [out], "decoder_1d", opset=17)
    feeds = {"data": RNG.standard_normal((2, 1, 64)).astype("float32")}
    m, got, ref = build_and_run(model, feeds)
    assert np.isfinite(got).all() and float(np.std(ref)) > 0.1
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)
    ops = [o for _, o, _ in m.executor.steps]
    assert "nn.conv2d_transpose" in ops and "layout_transform" not in ops, ops


def test_a_generator_of_transposed_convolutions_goes_channels_last():
    """DCGAN's generator has transposed convolutions only: more than one of them is a region
    of their own (``FOLLOWERS``), converted to channels-last with a layout transform at its
    edges only (a 1-D model's single one keeps NCHW, above); onnxruntime's values."""
    from xrelay.testing.onnx_models import GraphBuilder, build_and_run

    g = GraphBuilder(6)
    x = "data"
    for k, (cin, cout) in enumerate(((16, 8), (8, 4), (4, 3))):
        w = g.init(f"w{k}", (RNG.standard_normal((cin, cout, 4, 4)) * 0.2).astype("float32"))
        x = g.node("ConvTranspose", [x, w], kernel_shape=[4, 4], strides=[2, 2], pads=[1, 1, 1, 1])
        x = g.node("Relu", [x]) if k < 2 else g.node("Tanh", [x])
    model = g.model({"data": ([1, 16, 4, 4], np.float32)}, [x], "generator", opset=17)
    feeds = {"data": RNG.standard_normal((1, 16, 4, 4)).astype("float32")}
    m, got, ref = build_and_run(model, feeds)
    assert np.isfinite(got).all() and float(np.std(ref)) > 0.05
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)
    ops = [o for _, o, _ in m.executor.steps]
    assert ops.count("layout_transform") == 2 and sum("conv2d_transpose" in o for o in ops) == 3, ops


@pytest.mark.parametrize("relu", [False, True])
def test_post_ops_that_leave_onednn_on_its_reference_code_run_apart(monkeypatch, relu):
    """A convolution whose post-ops oneDNN runs only with its reference code (3.2 on AVX2:
    FastViT's depthwise convolution with a bias and a residual add) runs as the convolution
    alone and each post-op a primitive of its own in place over the output; before, the
    whole function left oneDNN and ran in numpy, allocating outside the arena. Forced here
    (``_post_ops_on_reference``) so the split runs on any CPU."""
    monkeypatch.setattr(primitives, "_post_ops_on_reference", lambda impl: True)
    x = relay.var("x", shape=(1, 16, 12, 12))
    y = relay.add(_conv(x, _const(16, 1, 3, 3), padding=(1, 1), groups=16, channels=16, kernel_size=(3, 3)),
                  _const(16, 1, 1))  # fmt: skip
    y = relay.add(y, x)
    y = relay.nn.relu(y) if relu else y
    m = _check(_mod(y, x), {"x": RNG.standard_normal((1, 16, 12, 12)).astype("float32")}, 1)
    ((_, c),) = _work(m)
    impls = c.dnnl_plan.impls
    # the convolution, the residual add, and the ReLU, each its own oneDNN kernel
    assert len(impls) == 2 + relu and not any(i.startswith("ref") for i in impls), impls
    assert [s.family for s in c.dnnl_plan.steps] == ["depthwise", "elementwise"] + ["elementwise"] * relu
    report = m.executor.outside_arena()
    assert (report.held_bytes, report.run_bytes) == (0, 0), report.steps


@pytest.mark.parametrize("rows", [False, True])
def test_dense_weights_stay_in_their_rows_for_onednns_jit_gemm(monkeypatch, rows):
    """Where oneDNN's float32 matmul is its jit GEMM (no brgemm kernel: oneDNN 3.2 on AVX2), a
    dense step reads its weight in its own (N, K) rows, not in the format "any" picks (1.8x
    slower for BERT's 768 -> 3072 on an AMD EPYC Zen 3). Forced both ways here
    (``_dense_rows_faster``) so both run on any CPU."""
    monkeypatch.setattr(primitives, "_dense_rows_faster", lambda impl: rows)
    monkeypatch.setenv("XRELAY_DNNL_PACKED_DENSE", "0")  # (oneDNN's matmul, not the shim's kernel)
    k, n = 96, 200
    x = relay.var("x", shape=(8, k))
    y = relay.nn.relu(relay.nn.bias_add(relay.nn.dense(x, _const(n, k)), _const(n)))
    m = _check(_mod(y, x), {"x": RNG.standard_normal((8, k)).astype("float32")}, 1, rtol=1e-5, atol=1e-5)
    ((_, c),) = _work(m)
    ((_, _, _, chosen),) = [w for s in c.dnnl_plan.steps for w in s.weights]
    own_rows = primitives._md(chosen.lib, [k, n], [1, k], "dense weight")
    # "any": brgemm's blocked format with AVX-512, the K x N rows with AVX2's jit GEMM
    assert (chosen == own_rows) == rows


def _gelu(y):
    return relay.multiply(relay.multiply(y, relay.const(0.5)), relay.add(relay.erf(relay.multiply(y, relay.const(0.70710677))), relay.const(1.0)))


def _erf(v):
    return np.vectorize(math.erf)(v)


@pytest.mark.parametrize(
    "m,k,n,bias,post",
    [
        (1, 768, 1000, True, None),  # a classifier: one row, a last panel of 8 columns
        (7, 1, 17, True, None),  # one product per output
        (13, 257, 33, False, None),  # a tile of one row, one product past the k block
        (128, 300, 96, True, "gelu"),
        (97, 512, 40, True, "residual"),  # the bias, then a residual, as BERT's projections
        (250, 70, 16, True, "relu"),  # two blocks of rows (240 is the most of one)
        (20, 64, 48, True, "gate"),  # SwiGLU: silu(x W_g + b) * (x W_u), two dense steps
    ],
)
def test_packed_dense_kernel(monkeypatch, m, k, n, bias, post):
    """A float32 dense step where oneDNN has only its jit GEMM (oneDNN 3.2 without AVX-512)
    runs on the shim's packed-weight kernel (``packed_gemm.h``): 6 x 16 register tiles over
    the weight packed in panels of 16 columns, the data's rows packed by six in the plan's
    workspace, the bias in the kernel and the other post-ops in place after it. Forced here
    (``_dense_on_packed``) so it runs on any CPU with AVX2; the outputs are checked against
    float64 sums, the tails of rows, columns and products included."""
    monkeypatch.setattr(primitives, "_dense_on_packed", lambda impl: True)
    lib = dnnl_library()
    assert lib.xr_dnnl_gemm_built() == int({"avx2", "fma"} <= platform.cpu_flags())
    x = relay.var("x", shape=(m, k))
    w = RNG.standard_normal((n, k)).astype("float32") * 0.3
    b = RNG.standard_normal(n).astype("float32")
    r = RNG.standard_normal((m, n)).astype("float32")
    y = relay.nn.dense(x, relay.const(w))
    if bias:
        y = relay.nn.bias_add(y, relay.const(b))
    if post == "gelu":
        y = _gelu(y)
    elif post == "residual":
        res = relay.var("res", shape=(m, n))
        y = relay.add(y, res)
    elif post == "relu":
        y = relay.nn.relu(y)
    elif post == "gate":
        wu = RNG.standard_normal((n, k)).astype("float32") * 0.3
        y = relay.multiply(relay.multiply(y, relay.sigmoid(y)), relay.nn.dense(x, relay.const(wu)))
    args = [x] + ([res] if post == "residual" else [])
    mod = _mod(y, *args)
    data = RNG.standard_normal((m, k)).astype("float32")
    want = data.astype(np.float64) @ w.T.astype(np.float64) + (b if bias else 0.0)
    if post == "gelu":
        want = 0.5 * want * (1.0 + _erf(want / math.sqrt(2.0)))
    elif post == "residual":
        want = want + r
    elif post == "relu":
        want = np.maximum(want, 0.0)
    elif post == "gate":
        want = want / (1.0 + np.exp(-want)) * (data.astype(np.float64) @ wu.T.astype(np.float64))
    mm = xrelay.build(mod, None, opt_level=3, backends=("dnnl", "native"))
    mm.set_input(x=data, **({"res": r} if post == "residual" else {}))
    mm.run()
    out = mm.get_output(0).numpy()
    assert np.all(np.isfinite(out)) and np.std(out) > 0.1
    scale = np.sqrt(k) * 0.3 * 4 + 1
    np.testing.assert_allclose(out, want, rtol=0, atol=3e-6 * scale)
    impls = [s.impl for _, c in _work(mm) for s in c.dnnl_plan.steps]
    assert impls[0].startswith("packed_gemm") == bool(lib.xr_dnnl_gemm_built()), impls
    report = mm.executor.outside_arena()  # (the packed rows are in the plan's workspace)
    assert (report.held_bytes, report.run_bytes) == (0, 0), report.steps


def test_packed_dense_bits_do_not_depend_on_the_threads(monkeypatch):
    """Each output of the packed kernel sums its products in one order (the bias, then each
    block of 256 products in k order) whichever thread takes its panels: one, two and three
    threads give the same bits, and the kernel's answer differs from oneDNN's GEMM only by
    float32 rounding."""
    monkeypatch.setattr(primitives, "_dense_on_packed", lambda impl: True)
    x = relay.var("x", shape=(70, 600))
    y = relay.nn.bias_add(relay.nn.dense(x, _const(300, 600)), _const(300))
    data = {"x": RNG.standard_normal((70, 600)).astype("float32")}
    outs = []
    for threads in (1, 2, 3):
        m = xrelay.build(_mod(y, x), None, threads=threads)
        m.set_input(**data)
        m.run()
        outs.append(m.get_output(0).numpy())
        ((_, c),) = _work(m)
        if dnnl_library().xr_dnnl_gemm_built():
            assert [s.impl for s in c.dnnl_plan.steps] == ["packed_gemm:avx2"]
    assert np.array_equal(outs[0], outs[1]) and np.array_equal(outs[0], outs[2])
    monkeypatch.setenv("XRELAY_DNNL_PACKED_DENSE", "0")
    m = xrelay.build(_mod(y, x), None, threads=2)
    m.set_input(**data)
    m.run()
    ((_, c),) = _work(m)
    assert all(not s.impl.startswith("packed") for s in c.dnnl_plan.steps)
    np.testing.assert_allclose(outs[0], m.get_output(0).numpy(), rtol=1e-5, atol=1e-5)


def _gemm_call(lib, x, packed, tail, bias, res, out, ops, block=0):
    """The shim's packed kernel (``block`` products a block, 0: its choice) run once through
    ``xr_dnnl_run`` over numpy buffers."""
    import ctypes

    m, k = x.shape
    n = out.shape[1]
    codes = [1 if op == "add" else 2 for op, *_ in ops]
    lo = [v[0] if v else 0.0 for _, *v in ops]
    hi = [v[1] if v else 0.0 for _, *v in ops]
    kernel = lib.xr_dnnl_gemm(m, n, k, 0, block, len(ops), (ctypes.c_int32 * 4)(*codes), (ctypes.c_float * 4)(*lo), (ctypes.c_float * 4)(*hi))
    assert kernel
    scratch = np.zeros(lib.xr_dnnl_gemm_packed_bytes(kernel) // 4, np.float32)
    args = [(1, x), (64, scratch), (17, out)] + [(key, a) for key, a in ((33, packed), (34, tail), (41, bias), (2, res)) if a is not None]
    mds = [primitives._md(lib, [a.size], [1], "an operand") for _, a in args]
    mems = [lib.xr_dnnl_memory(md.handle, a.ctypes.data) for md, (_, a) in zip(mds, args)]
    try:
        status = lib.xr_dnnl_run(1, (ctypes.c_void_p * 1)(kernel), (ctypes.c_int32 * 1)(-len(args)),
                                 (ctypes.c_int32 * len(args))(*[key for key, _ in args]),
                                 (ctypes.c_void_p * len(mems))(*mems), None)  # fmt: skip
    finally:
        for mem in mems:
            lib.xr_dnnl_memory_free(mem)
        lib.xr_dnnl_gemm_free(kernel)
    return status


@pytest.mark.parametrize("m", [1, 6, 23])
@pytest.mark.parametrize("in_place", [False, True])
def test_packed_dense_epilogue_and_a_residual_in_the_output(in_place, m):
    """The packed kernel's epilogue (a residual add then a clip, in order) after each output's
    last product; a residual that is the output buffer itself (the arena's in-place sum) is
    read before any block of products writes over it: k = 600 is three blocks of 256 (one
    block of all 600 for one tile of rows, m <= 6)."""
    lib = dnnl_library()
    if not lib.xr_dnnl_gemm_built():
        assert not lib.xr_dnnl_gemm(8, 8, 8, 0, 0, 0, None, None, None)  # (none without AVX2)
        return
    k, n = 600, 40
    x = RNG.standard_normal((m, k)).astype("float32")
    w = (RNG.standard_normal((n, k)) * 0.2).astype("float32")
    b = RNG.standard_normal(n).astype("float32")
    r = RNG.standard_normal((m, n)).astype("float32") * 4
    packed = np.ascontiguousarray(w[:32].reshape(2, 16, k).transpose(0, 2, 1))
    tail = np.zeros((k, 16), np.float32)
    tail[:, :8] = w[32:].T
    out = r.copy() if in_place else np.full((m, n), np.nan, np.float32)
    res = out if in_place else r
    status = _gemm_call(lib, x, packed, tail, b, res, out, [("add",), ("clip", -1.5, 2.0)])
    assert status == 0
    want = np.clip(x.astype(np.float64) @ w.T.astype(np.float64) + b + r, -1.5, 2.0)
    assert np.all(np.isfinite(out)) and 0.1 < np.mean(np.abs(out) == 2.0) < 0.9
    np.testing.assert_allclose(out, want, rtol=0, atol=2e-5)


@pytest.mark.parametrize("m", [1, 2])
def test_one_or_two_rows_take_several_panels_at_once_with_the_tiles_bits(m):
    """A step of one or two rows runs several whole panels at a time (its products in more
    chains, gemm_wide_tile), a step of one row block takes each thread's own share of the
    panels first: each output is still the one-panel tile's sum, in its order. So one or two
    rows give the bits of the same rows in a six-row step of one block (the one-panel tile),
    on one thread and on two, for 9 whole panels and a tail of 5 columns (groups of 4, 2 and
    1 panels, and the tail panel), with a bias."""
    lib = dnnl_library()
    if not lib.xr_dnnl_gemm_built():
        return
    k, n = 300, 16 * 9 + 5
    x = RNG.standard_normal((6, k)).astype("float32")
    w = (RNG.standard_normal((n, k)) * 0.2).astype("float32")
    b = RNG.standard_normal(n).astype("float32")
    packed = np.ascontiguousarray(w[:144].reshape(9, 16, k).transpose(0, 2, 1))
    tail = np.zeros((k, 16), np.float32)
    tail[:, :5] = w[144:].T
    six = np.full((6, n), np.nan, np.float32)
    assert _gemm_call(lib, x, packed, tail, b, None, six, [], k) == 0
    np.testing.assert_allclose(six, x.astype(np.float64) @ w.T.astype(np.float64) + b, rtol=0, atol=2e-5)
    before = lib.xr_dnnl_threads()
    try:
        for threads in (1, 2):
            lib.xr_dnnl_set_threads(threads)
            out = np.full((m, n), np.nan, np.float32)
            assert _gemm_call(lib, np.ascontiguousarray(x[:m]), packed, tail, b, None, out, []) == 0
            np.testing.assert_array_equal(out, six[:m])
    finally:
        lib.xr_dnnl_set_threads(before)


def test_one_tile_of_rows_sums_all_products_as_one_block():
    """A kernel of one tile of rows (m <= 6) takes all k products as one block (each panel
    one stream from memory), one of more tiles blocks of 256, a kernel told its block that
    block: six rows given the block of 256 give the bits of those rows in a step of twelve,
    and differ from their own kernel's (one block of 600) only by float32 rounding."""
    lib = dnnl_library()
    if not lib.xr_dnnl_gemm_built():
        return
    blocks = {}
    for m, block in ((1, 0), (6, 0), (7, 0), (6, 256), (7, 600)):
        kernel = lib.xr_dnnl_gemm(m, 40, 600, 0, block, 0, None, None, None)
        blocks[m, block] = lib.xr_dnnl_gemm_block(kernel)
        lib.xr_dnnl_gemm_free(kernel)
    assert blocks == {(1, 0): 600, (6, 0): 600, (7, 0): 256, (6, 256): 256, (7, 600): 600}
    assert not lib.xr_dnnl_gemm(6, 40, 600, 0, -1, 0, None, None, None)
    k, n = 600, 32
    x = RNG.standard_normal((12, k)).astype("float32")
    w = (RNG.standard_normal((n, k)) * 0.2).astype("float32")
    packed = np.ascontiguousarray(w.reshape(2, 16, k).transpose(0, 2, 1))
    outs = {}
    for rows, block in (((0, 12), 0), ((0, 6), 256), ((6, 12), 256), ((0, 6), 0), ((6, 12), 0)):
        out = np.full((rows[1] - rows[0], n), np.nan, np.float32)
        assert _gemm_call(lib, np.ascontiguousarray(x[rows[0] : rows[1]]), packed, None, None, None, out, [], block) == 0
        outs[rows, block] = out
    whole = outs[(0, 12), 0]
    np.testing.assert_allclose(whole, x.astype(np.float64) @ w.T.astype(np.float64), rtol=0, atol=2e-5)
    np.testing.assert_array_equal(np.concatenate([outs[(0, 6), 256], outs[(6, 12), 256]]), whole)
    alone = np.concatenate([outs[(0, 6), 0], outs[(6, 12), 0]])
    np.testing.assert_allclose(alone, whole, rtol=0, atol=2e-5)
    assert not np.array_equal(alone, whole)
