"""The graph-executor API (set_input/run/get_output, params, benchmark, debug), graph JSON
against TVM's examples, and the (graph, lib, params) export."""

from __future__ import annotations

import functools
import io
import json

import numpy as np
import pytest

import xrelay
from xrelay.backend.build import BuildError, build, build_program
from xrelay.relay.module import IRModule
from xrelay.runtime.executor_factory import load
from xrelay.runtime.graph_executor import BenchmarkResult, DebugModule, GraphModuleError
from xrelay.runtime.graph_json import graph_json
from xrelay.runtime.interpreter import run
from xrelay.testing import resnet
from xrelay.transforms.planners import PlanError

TWO_INPUTS = """
func.func @main(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>) -> (tensor<2x4xf32>, tensor<2x3xf32>) {
  %c = relay.constant dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32>
  %y = relay.nn.dense %x, %w : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %z = relay.add %y, %c : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  %r = relay.nn.relu %z : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %n = relay.negative %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %r, %n : tensor<2x4xf32>, tensor<2x3xf32>
}
"""


@functools.cache
def _small_resnet():
    return resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10)


@pytest.fixture
def two():
    return build(IRModule.from_text(TWO_INPUTS))


def _xw(seed=0):
    rng = np.random.default_rng(seed)
    return (
        rng.standard_normal((2, 3)).astype("float32"),
        rng.standard_normal((4, 3)).astype("float32"),
    )


def test_lazy_exports():
    assert xrelay.build is build
    assert xrelay.runtime.create.__name__ == "create"
    assert xrelay.runtime.load is load


def test_inputs_outputs_and_reference(two):
    x, w = _xw()
    assert two.get_num_inputs() == 2 and two.get_num_outputs() == 2
    assert two.get_input_index("w") == 1 and two.get_input_index("nope") == -1
    assert two.get_input_info() == (
        {"x": (2, 3), "w": (4, 3)},
        {"x": "float32", "w": "float32"},
    )
    two.set_input("x", x)
    two.set_input(1, w)
    two.run()
    ref = run(IRModule.from_text(TWO_INPUTS), {"x": x, "w": w})
    np.testing.assert_allclose(two.get_output(0), ref[0], rtol=1e-6)
    np.testing.assert_array_equal(two.get_output(1), -x)
    np.testing.assert_array_equal(two.get_input("x"), x)
    np.testing.assert_array_equal(two.get_input(1), w)
    # get_output gives a copy that the next run does not overwrite; out= fills a buffer.
    first = two.get_output(1)
    two.run(x=x * 2, w=w)
    np.testing.assert_array_equal(first, -x)
    buf = np.empty((2, 3), "float32")
    assert two.get_output(1, out=buf) is buf
    np.testing.assert_array_equal(buf, -2 * x)
    two.set_input(x=x, w=w * 0)
    two.run()
    np.testing.assert_allclose(two.get_output(0), np.maximum(np.array([[1, 2, 3, 4]] * 2), 0))


def test_input_errors_name_the_input(two):
    x, w = _xw()
    with pytest.raises(GraphModuleError, match=r"unknown input 'y' \(inputs: x, w\)"):
        two.set_input("y", x)
    with pytest.raises(GraphModuleError, match=r"input 'x': expected shape \(2, 3\).*got \(3, 2\)"):
        two.set_input("x", x.T)
    with pytest.raises(GraphModuleError, match=r"input 'w': expected dtype float32.*got float64"):
        two.set_input(w=w.astype("float64"))
    with pytest.raises(GraphModuleError, match="index 5 out of range"):
        two.set_input(5, x)
    with pytest.raises(GraphModuleError, match="output index 2 out of range"):
        two.get_output(2)
    with pytest.raises(GraphModuleError, match="out is float64"):
        two.get_output(0, out=np.empty((2, 4)))


def test_params_save_load_share():
    mod, params = _small_resnet()
    m = build(mod, params)
    x = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype("float32")
    m.run(data=x)
    y = m.get_output(0)
    np.testing.assert_allclose(y, run(mod, {"data": x}, params)[0], rtol=1e-4, atol=1e-5)
    blob = m.save_params()
    saved = np.load(io.BytesIO(blob))
    assert sorted(saved.files) == sorted(m.param_names) and len(m.param_names) > 10
    # Zeroing every param changes the result; loading the saved bytes restores it exactly.
    m.load_params({n: np.zeros_like(saved[n]) for n in saved.files})
    m.run(data=x)
    assert not np.array_equal(m.get_output(0), y)
    m.load_params(blob)
    m.run(data=x)
    np.testing.assert_array_equal(m.get_output(0), y)
    # A module of the same program shares the other's arrays.
    other = xrelay.runtime.create(m.program)
    other.load_params({n: np.zeros_like(saved[n]) for n in saved.files})
    other.share_params(m, blob)
    assert other.get_params()["p0"] is m.get_params()["p0"]
    other.run(data=x)
    np.testing.assert_array_equal(other.get_output(0), y)
    with pytest.raises(GraphModuleError, match="param 'p0': expected float32 of shape"):
        m.load_params({"p0": np.zeros(3, "float32")})


def test_benchmark_fields(two):
    x, w = _xw()
    res = two.benchmark(repeat=3, number=2, x=x, w=w)
    assert isinstance(res, BenchmarkResult) and len(res.results) == 3
    assert res.min <= res.median <= res.max and res.min <= res.mean <= res.max
    assert res.std >= 0 and "mean (ms)" in str(res)
    e2e = two.benchmark(repeat=2, number=1, end_to_end=True, min_repeat_ms=1)
    assert len(e2e.results) == 2 and e2e.number >= 1
    with pytest.raises(GraphModuleError):
        two.benchmark(repeat=0)


def test_debug_module_records_steps():
    program, _ = build_program(IRModule.from_text(TWO_INPUTS))
    dbg = DebugModule(program)
    x, w = _xw()
    dbg.run(x=x, w=w)
    steps = dbg.executor.steps
    outs = [dbg.debug_get_output(i) for i in range(len(steps))]
    last = [o for o in outs if o[0].shape == (2, 3)][-1][0]
    np.testing.assert_array_equal(last, -x)
    table = dbg.profile()
    assert "Time (ms)" in table and "Op family" in table and "nn.dense" in table


def test_memory_report_and_arena_bytes():
    mod, params = _small_resnet()
    m = build(mod, params, plan="greedy-by-conflicts")
    report = m.memory_report()
    assert "Lower bound" in report and str(m.arena_bytes) in report
    pools = [op for op in m.program.ops if op.name == "memory.pool"]
    assert m.arena_bytes == sum(p.size.value.data for p in pools)
    assert m.arena_bytes == sum(a.size for a in m.executor.arenas.values())


def test_build_errors():
    mod = IRModule.from_text(TWO_INPUTS)
    with pytest.raises(BuildError, match="unknown planning algorithm 'best'"):
        build(mod, plan="best")
    with pytest.raises(BuildError, match="unsupported target 'cuda'"):
        build(mod, target="cuda")
    with pytest.raises(PlanError):
        build(mod, pools="tiny:16")
    with pytest.raises(GraphModuleError, match="not lowered"):
        xrelay.runtime.create(mod)


DYNAMIC_BATCH = """#[version = "0.0.5"]
def @main(%x: Tensor[(?, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) {
  nn.relu(nn.conv2d(%x, %w, padding=[1, 1, 1, 1]))
}
"""


def test_dynamic_input_is_refused_with_the_shape_to_give():
    # An exported model's dynamic batch (torch's dynamic_axes, ONNX dim_param) was a TypeError
    # from the oneDNN partition's movement analysis; the C target named a fused function.
    mod = xrelay.relay.fromtext(DYNAMIC_BATCH)
    w = np.ones((4, 3, 3, 3), np.float32)
    for target in (None, "c"):
        with pytest.raises(BuildError) as e:
            build(mod, {"w": w}, target=target)
        assert "input 'x' of @main has the dynamic shape tensor<?x3x8x8xf32>" in str(e.value)
        assert "shape={'x': (1, 3, 8, 8)}" in str(e.value) and "--shape x=1,3,8,8" in str(e.value)
    # the same module with the batch given builds and runs
    m = build(xrelay.relay.fromtext(DYNAMIC_BATCH.replace("(?, 3, 8, 8)", "(2, 3, 8, 8)")), {"w": w})
    m.set_input("x", np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32))
    m.run()
    assert m.get_output(0).numpy().shape == (2, 4, 8, 8)


def test_build_with_pools_and_no_arena_inputs():
    mod, params = _small_resnet()
    m = build(mod, params, pools="fast:65536,slow:0", inputs_in_arena=False)
    assert set(m.executor.arenas) == {"fast", "slow"}
    x = np.random.default_rng(2).standard_normal((1, 3, 32, 32)).astype("float32")
    m.run(data=x)
    np.testing.assert_allclose(
        m.get_output(0), run(mod, {"data": x}, params)[0], rtol=1e-4, atol=1e-5
    )


# ------------------------------------------------------------------------------------------
# Graph JSON (docs/relay-semantics.md §8)
# ------------------------------------------------------------------------------------------


def test_graph_json_plan_memory_example():
    """TVM's test_plan_memory: two params, exp(y), add, five exps: 4 storage ids."""
    text = """
    func.func @main(%x: tensor<10xf32>, %y: tensor<1xf32>) -> tensor<10xf32> {
      %0 = relay.exp %y : (tensor<1xf32>) -> tensor<1xf32>
      %1 = relay.add %x, %0 : (tensor<10xf32>, tensor<1xf32>) -> tensor<10xf32>
      %2 = relay.exp %1 : (tensor<10xf32>) -> tensor<10xf32>
      %3 = relay.exp %2 : (tensor<10xf32>) -> tensor<10xf32>
      %4 = relay.exp %3 : (tensor<10xf32>) -> tensor<10xf32>
      %5 = relay.exp %4 : (tensor<10xf32>) -> tensor<10xf32>
      %6 = relay.exp %5 : (tensor<10xf32>) -> tensor<10xf32>
      func.return %6 : tensor<10xf32>
    }"""
    program, _ = build_program(IRModule.from_text(text), opt_level=0, plan="storage-ids")
    g = graph_json(program)
    sids = g["attrs"]["storage_id"][1]
    assert len(set(sids)) == 4
    assert sids[:2] == [0, 1]  # the params keep their own ids
    assert set(g["attrs"]["device_index"][1]) == {1}
    assert g["arg_nodes"] == [0, 1]
    assert [n["name"] for n in g["nodes"][:2]] == ["x", "y"]
    assert g["node_row_ptr"] == list(range(len(g["nodes"]) + 1))
    assert g["heads"] == [[len(g["nodes"]) - 1, 0, 0]]
    assert g["attrs"]["dltype"] == ["list_str", ["float32"] * len(g["nodes"])]
    assert g["attrs"]["shape"][1][:3] == [[10], [1], [1]]


def test_graph_json_reshape_nop_example():
    """TVM's test_reshape_nop: storage_id (0, 1, 1, 2, 3, 2), nodes 2 and 5 are __nop."""
    text = """
    func.func @main(%x: tensor<10x4xf32>) -> (tensor<2x20xf32>, tensor<10x1x4xf32>, tensor<1x40xf32>) {
      %xx = relay.abs %x : (tensor<10x4xf32>) -> tensor<10x4xf32>
      %y = relay.expand_dims %xx {axis = 1} : (tensor<10x4xf32>) -> tensor<10x1x4xf32>
      %t0 = relay.reshape %y {newshape = [1, 40]} : (tensor<10x1x4xf32>) -> tensor<1x40xf32>
      %t1 = relay.abs %y : (tensor<10x1x4xf32>) -> tensor<10x1x4xf32>
      %z0 = relay.reshape %t0 {newshape = [2, 20]} : (tensor<1x40xf32>) -> tensor<2x20xf32>
      %z1 = relay.sqrt %t1 : (tensor<10x1x4xf32>) -> tensor<10x1x4xf32>
      %z2 = relay.reshape %t1 {newshape = [1, 40]} : (tensor<10x1x4xf32>) -> tensor<1x40xf32>
      func.return %z0, %z1, %z2 : tensor<2x20xf32>, tensor<10x1x4xf32>, tensor<1x40xf32>
    }"""
    program, _ = build_program(IRModule.from_text(text), plan="storage-ids")
    g = graph_json(program)
    assert tuple(g["attrs"]["storage_id"][1]) == (0, 1, 1, 2, 3, 2)
    assert g["nodes"][2]["attrs"]["func_name"] == "__nop"
    assert g["nodes"][5]["attrs"]["func_name"] == "__nop"
    assert g["nodes"][2]["name"] == "reshape_nop"
    assert g["heads"] == [[2, 0, 0], [4, 0, 0], [5, 0, 0]]
    assert all(isinstance(v, str) for n in g["nodes"][1:] for v in n["attrs"].values())


def test_export_and_load_round_trip(tmp_path):
    mod, params = _small_resnet()
    m = build(mod, params, plan="storage-ids")
    x = np.random.default_rng(5).standard_normal((1, 3, 32, 32)).astype("float32")
    m.run(data=x)
    y = m.get_output(0)
    paths = [str(tmp_path / n) for n in ("graph.json", "lib.mlir", "params.npz")]
    m.export(*paths)
    g = json.loads(open(paths[0]).read())
    params_nodes = [g["nodes"][i]["name"] for i in g["arg_nodes"]][1:]
    assert params_nodes == [f"p{i}" for i in range(len(params_nodes))]
    assert set(params_nodes) <= set(np.load(paths[2]).files)
    assert "dense<" not in open(paths[1]).read().split("func.func @main")[1]
    loaded = xrelay.runtime.load(*paths)
    loaded.run(data=x)
    np.testing.assert_array_equal(loaded.get_output(0), y)
    assert loaded.arena_bytes == m.arena_bytes
