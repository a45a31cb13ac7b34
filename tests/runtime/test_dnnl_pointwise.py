"""1x1 convolutions on the packed dense kernel (the way ``"pointwise"``,
``primitives.pointwise_eligible``): a 1x1, stride-1, unpadded float32 convolution over
channels-last data is the dense of its pixels' rows, which the packed kernel runs where
``state_scratch`` measured it faster than oneDNN's convolution (``XRELAY_DNNL_POINTWISE``:
``measure``, ``packed``, ``dnnl``). Results against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerAttr, i64

import xrelay
from xrelay.backend.dnnl import partition
from xrelay.dialects.memory import SCRATCH_ATTR, scratch_choice, scratch_options
from xrelay.frontends.onnx import from_onnx
from xrelay.runtime.dnnl import primitives
from xrelay.runtime.dnnl.library import dnnl_library
from xrelay.testing.onnx_models import (
    GraphBuilder,
    assert_like_onnxruntime,
    dnnl_plan_steps,
    run_data,
)

RNG = np.random.default_rng(23)



def _pointwise_model(cin: int, cout: int, spatial: int, tail: str):
    """A 3x3 convolution, then a 1x1 one with a bias and the epilogue ``tail``."""
    g = GraphBuilder(3)
    x = g.relu(g.conv("data", 8, cin, 3, bias=True))
    y = g.conv(x, cin, cout, 1, bias=True)
    if tail == "relu":
        y = g.relu(y)
    elif tail == "relu6":
        y = g.node("Clip", [y, g.const(np.float32(0)), g.const(np.float32(6))])
    elif tail == "residual":  # (cin == cout)
        y = g.relu(g.node("Add", [y, x]))
    elif tail == "bn_hardswish":  # a batch norm folded into the weights, then an activation apart
        y = g.node("HardSwish", [g.bn(y, cout)])
    return g.model({"data": ([1, 8, spatial, spatial], np.float32)}, [y], f"pointwise_{tail}")


def _build(model, monkeypatch, mode: str, priority: str = "speed"):
    assert dnnl_library() is not None
    monkeypatch.setenv("XRELAY_DNNL_POINTWISE", mode)
    mod, params = from_onnx(model)
    with xrelay.transform.PassContext(config={"relay.ChooseScratch.priority": priority}):
        return xrelay.build(mod, params, opt_level=3)


@pytest.mark.parametrize(
    "cin,cout,spatial,tail",
    [
        (32, 48, 9, "relu"),
        (32, 40, 7, "relu6"),  # 40 outputs: two whole panels of 16 and a tail panel
        (24, 24, 10, "residual"),
        (16, 20, 6, "bn_hardswish"),
        (16, 16, 5, "none"),
    ],
)
def test_a_pointwise_convolution_on_the_kernel_computes_onnxruntimes_results(cin, cout, spatial, tail, monkeypatch):
    model = _pointwise_model(cin, cout, spatial, tail)
    x = RNG.standard_normal((1, 8, spatial, spatial)).astype(np.float32)
    packed = _build(model, monkeypatch, "packed")
    onednn = _build(model, monkeypatch, "dnnl")
    out = run_data(packed, x)
    assert_like_onnxruntime(model, {"data": x}, out)
    assert_like_onnxruntime(model, {"data": x}, run_data(onednn, x))
    assert not np.allclose(run_data(packed, RNG.standard_normal(x.shape).astype(np.float32)), out)  # (follows the input)
    on_kernel = [s for s in dnnl_plan_steps(packed) if s.impl == "packed_gemm:avx2"]
    assert [s.family for s in on_kernel] == ["conv"]  # (the profile's family: a convolution)
    assert on_kernel[0].macs == spatial * spatial * cin * cout
    assert not any(s.impl == "packed_gemm:avx2" for s in dnnl_plan_steps(onednn))
    packed.set_input(data=x)
    assert packed.executor.outside_arena().total_bytes == 0  # (the rows packed by six: the plan's workspace)


@pytest.mark.parametrize(
    "attrs,shape,weight,types,eligible",
    [
        ({}, (1, 5, 5, 8), (1, 1, 8, 16), {"float32"}, True),
        ({"strides": (2, 2)}, (1, 5, 5, 8), (1, 1, 8, 16), {"float32"}, False),
        ({"padding": (1, 1, 1, 1)}, (1, 5, 5, 8), (1, 1, 8, 16), {"float32"}, False),
        ({}, (1, 5, 5, 8), (3, 3, 8, 16), {"float32"}, False),
        ({"data_layout": "NCHW"}, (1, 8, 5, 5), (1, 1, 8, 16), {"float32"}, False),
        ({"out_layout": "NCHW"}, (1, 5, 5, 8), (1, 1, 8, 16), {"float32"}, False),
        ({}, (1, 5, 5, 8), (1, 1, 8, 16), {"float32", "int8"}, False),
        ({"kernel_layout": "OIHW"}, (1, 5, 5, 8), (16, 8, 1, 1), {"float32"}, True),
        ({}, (1, 5, 5, 4), (1, 1, 8, 16), {"float32"}, False),  # (the kernel's I is not the data's C)
    ],
)
def test_pointwise_eligible(attrs, shape, weight, types, eligible):
    a = {"data_layout": "NHWC", "kernel_layout": "HWIO", "strides": (1, 1), "padding": (0, 0, 0, 0), "out_layout": ""}
    a.update(attrs)
    w = np.zeros(weight, np.float32)
    assert primitives.pointwise_eligible(a, shape, w, 1, types, None) is eligible
    if eligible:
        assert not primitives.pointwise_eligible(a, shape, w, 2, types, None)  # (grouped)


def _measured(monkeypatch, times):
    """``state_scratch``'s measurement replaced by ``times`` (the kernel's, oneDNN's); the
    calls it got."""
    calls = []

    def measure(fn, plans, fixed, threads, rounds=primitives.POINTWISE_ROUNDS):
        calls.append([p.impls for p in plans])
        return list(times)

    monkeypatch.setattr(partition, "measure_plans", measure)
    monkeypatch.setattr(partition, "_MEASURED", {})
    return calls


@pytest.mark.parametrize(
    "times,chosen",
    [((1.0, 2.0), True), ((0.94, 1.0), True), ((0.96, 1.0), False), ((2.0, 1.0), False)],
)
def test_measure_takes_the_kernel_where_it_is_faster_by_the_margin(times, chosen, monkeypatch):
    model = _pointwise_model(32, 48, 9, "relu")
    calls = _measured(monkeypatch, times)
    m = _build(model, monkeypatch, "measure")
    assert len(calls) == 1 and calls[0][0] == ["packed_gemm:avx2"] and calls[0][1] != ["packed_gemm:avx2"]
    assert any(s.impl == "packed_gemm:avx2" for s in dnnl_plan_steps(m)) is chosen
    x = RNG.standard_normal((1, 8, 9, 9)).astype(np.float32)
    assert_like_onnxruntime(model, {"data": x}, run_data(m, x))


def test_functions_of_the_same_shape_are_measured_once(monkeypatch):
    g = GraphBuilder(4)
    y = g.relu(g.conv("data", 8, 32, 3, bias=True))
    for _ in range(3):  # three 1x1 convolutions of one shape
        y = g.relu(g.conv(y, 32, 32, 1, bias=True))
    model = g.model({"data": ([1, 8, 9, 9], np.float32)}, [y], "pointwise_thrice")
    calls = _measured(monkeypatch, (1.0, 2.0))
    m = _build(model, monkeypatch, "measure")
    assert len(calls) == 1
    assert sum(s.impl == "packed_gemm:avx2" for s in dnnl_plan_steps(m)) == 3


def test_the_modes_dnnl_and_packed_do_not_measure(monkeypatch):
    model = _pointwise_model(32, 48, 9, "relu")
    calls = _measured(monkeypatch, (1.0, 2.0))
    assert not any(s.impl == "packed_gemm:avx2" for s in dnnl_plan_steps(_build(model, monkeypatch, "dnnl")))
    assert any(s.impl == "packed_gemm:avx2" for s in dnnl_plan_steps(_build(model, monkeypatch, "packed")))
    assert calls == []


def test_an_unknown_mode_is_refused_by_name(monkeypatch):
    monkeypatch.setenv("XRELAY_DNNL_POINTWISE", "fast")
    with pytest.raises(ValueError, match="XRELAY_DNNL_POINTWISE must be measure, packed or dnnl, not 'fast'"):
        primitives.pointwise_mode()


def test_measure_plans_times_each_way_of_a_function(monkeypatch):
    """``state_scratch``'s real measurement of a function's two ways (the kernel's first):
    both plans bound and run, a time each."""
    seen = []
    measure = primitives.measure_plans

    def recorded(fn, plans, fixed, threads, rounds=primitives.POINTWISE_ROUNDS):
        times = measure(fn, plans, fixed, threads, rounds)
        seen.append(([p.impls for p in plans], [p.pointwise_convs for p in plans], [p.bound for p in plans], times))
        return times

    monkeypatch.setattr(partition, "measure_plans", recorded)
    monkeypatch.setattr(partition, "_MEASURED", {})
    _build(_pointwise_model(32, 48, 9, "relu"), monkeypatch, "measure")
    ((impls, eligible, bound, times),) = seen
    assert impls[0] == ["packed_gemm:avx2"] and impls[1] != impls[0]
    assert eligible == [1, 1] and bound == [True, True]
    assert len(times) == 2 and all(0 < t < 1 for t in times)


def test_the_kernels_scratch_is_offered_beside_onednns_and_chosen_by_the_peak(monkeypatch):
    """The way ``"pointwise"`` needs the rows packed by six in its workspace: where that
    function sets the plan's peak, ``balanced`` keeps oneDNN's way; ``speed`` takes the
    kernel."""
    g = GraphBuilder(5)  # the 1x1 convolution first: its step holds the most
    y = g.relu(g.conv("data", 64, 64, 1, bias=True))
    model = g.model({"data": ([1, 64, 24, 24], np.float32)}, [y], "pointwise_peak")
    x = RNG.standard_normal((1, 64, 24, 24)).astype(np.float32)
    _measured(monkeypatch, (1.0, 2.0))
    fast = _build(model, monkeypatch, "measure", "speed")
    _measured(monkeypatch, (1.0, 2.0))
    small = _build(model, monkeypatch, "measure", "balanced")
    for m, way in ((fast, "pointwise"), (small, "winograd")):
        fn = next(f for f in m.executor.module.ops if getattr(f, "sym_name", None) and f.sym_name.data == _conv_function(m))
        options = scratch_options(fn)
        assert [label for label, _ in options] == ["pointwise", "winograd"]
        assert options[0][1] > options[1][1] >= 0
        assert scratch_choice(fn) == way
        assert fn.attributes[SCRATCH_ATTR].value.data == dict(options)[way]
        assert_like_onnxruntime(model, {"data": x}, run_data(m, x))
    assert any(s.impl == "packed_gemm:avx2" for s in dnnl_plan_steps(fast))
    assert not any(s.impl == "packed_gemm:avx2" for s in dnnl_plan_steps(small))
    assert small.executor.arena_bytes < fast.executor.arena_bytes


def _conv_function(m):
    """The name of the built module's function with the convolution."""
    ex = m.executor
    return next(c.name for (_, _, c), b in zip(ex.steps, ex.step_backends)
                if b == "dnnl" and any(s.family == "conv" for s in c.dnnl_plan.steps))  # fmt: skip


def test_a_faster_kernel_needing_no_more_scratch_is_the_only_way_stated(monkeypatch):
    """Where the kernel's way needs no more scratch than oneDNN's there is nothing to
    choose: it is the one way offered, and its bytes are the function's stated need."""
    from xdsl.dialects import func

    monkeypatch.setenv("XRELAY_DNNL_POINTWISE", "packed")
    fn = func.FuncOp("f", ((), ()))
    fn.attributes[SCRATCH_ATTR] = IntegerAttr(4096, i64)
    ways = []

    def need(**way):
        ways.append(way)
        return None, 1024

    partition._choose_pointwise(fn, lambda name: None, [], 2, 4096, need)
    assert ways == [{"pointwise": True}]
    assert scratch_options(fn) == [("pointwise", 1024)] and scratch_choice(fn) == "pointwise"
    assert fn.attributes[SCRATCH_ATTR].value.data == 1024
    monkeypatch.setenv("XRELAY_DNNL_POINTWISE", "dnnl")
    other = func.FuncOp("g", ((), ()))
    partition._choose_pointwise(other, lambda name: None, [], 2, 4096, need)
    assert scratch_options(other) == [] and len(ways) == 1


def test_a_strided_weight_is_reordered_from_where_it_is():
    """A 1x1 kernel stored HWIO gives its (O, C) rows as a strided view; the reorder reads
    the view through its strides (a contiguous copy described by the view's strides would
    read the wrong elements), and refuses negative strides."""
    lib = dnnl_library()
    assert lib is not None
    stored = RNG.standard_normal((24, 40)).astype(np.float32)  # (C, O)
    rows = stored.T  # (O, C), strides (1, 40)
    src = primitives._md(lib, [40, 24], primitives._elem_strides(rows), "a view", "float32")
    dst = primitives._md(lib, [40, 24], [24, 1], "rows", "float32")
    out = primitives._reorder(lib, rows, src, dst, [])
    np.testing.assert_array_equal(out.view(np.float32)[: 40 * 24].reshape(40, 24), rows)
    with pytest.raises(primitives.DnnlUnsupported, match="negative strides"):
        primitives._reorder(lib, stored[::-1], src, dst, [])


def test_a_loaded_export_reorders_the_mapped_kernel_in_parts(tmp_path, monkeypatch):
    """A loaded export's weights view its mapped params file and big ones are reordered in
    parts (``primitives._parts``): the 1x1 kernel's strided (O, C) rows (4 MB, HWIO) too,
    with the built module's bits."""
    from xrelay import relay

    monkeypatch.setenv("XRELAY_DNNL_POINTWISE", "packed")
    w = (RNG.standard_normal((1, 1, 1024, 1024)) * 0.03).astype(np.float32)
    x = relay.var("x", shape=(1, 4, 4, 1024))
    y = relay.nn.relu(relay.nn.conv2d(x, relay.const(w), channels=1024, kernel_size=(1, 1), data_layout="NHWC",
                                      kernel_layout="HWIO"))  # fmt: skip
    with xrelay.transform.PassContext(config={"relay.ChooseScratch.priority": "speed"}):
        m = xrelay.build(xrelay.IRModule.from_expr(relay.Function([x], y)), None)
    xv = RNG.standard_normal((1, 4, 4, 1024)).astype(np.float32)
    m.set_input("x", xv)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy().reshape(16, 1024), np.maximum(xv.reshape(16, 1024) @ w[0, 0], 0),
                               rtol=1e-4, atol=1e-4)  # fmt: skip
    paths = [str(tmp_path / n) for n in ("graph.json", "lib.mlir", "params.npz")]
    m.export(*paths)
    parted = []
    in_parts = primitives._reorder_parts

    def counted(lib, stored, src, dst, out, parts):
        parted.append((stored.strides, len(parts[1])))
        return in_parts(lib, stored, src, dst, out, parts)

    monkeypatch.setattr(primitives, "_reorder_parts", counted)
    loaded = xrelay.runtime.load(*paths)
    loaded.set_input("x", xv)
    loaded.run()
    assert any(s.impl == "packed_gemm:avx2" for s in dnnl_plan_steps(loaded))
    assert parted and parted[0][0] == (4, 4096) and parted[0][1] >= 2  # (the strided rows, in parts)
    np.testing.assert_array_equal(loaded.get_output(0).numpy(), m.get_output(0).numpy())
