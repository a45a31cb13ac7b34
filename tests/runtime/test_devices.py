"""Devices end to end: plan-devices, lowering and planning per memory space, the graph JSON,
and the arena executor copying between devices.

Every device here is host memory, so a copy can be proven: the source and destination of a
``device_copy`` step are views of different arenas, and poisoning the source right after the
copy (its last use) does not change the result.
"""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.backend.build import BuildError
from xrelay.dialects import module_op
from xrelay.dialects.memory import AllocStorageOp, InvokeOp, PoolOp
from xrelay.dialects.relay.device_analysis import device_copy_of, functions_by_name
from xrelay.dialects.relay.devices import DeviceError, MemoryScope, register_device
from xrelay.runtime.graph_json import graph_json
from xrelay.runtime.memory_interpreter import run_memory

NPU = register_device("testnpu", memory_scopes={"sram": MemoryScope(64 * 1024, 16), "dram": (None, 64)})
SHAPE = (1, 4, 8, 8)


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal(SHAPE).astype("float32"), "y": rng.standard_normal(SHAPE).astype("float32")}


def _graph(annotate: bool):
    """negative on the host, exp on the NPU's SRAM, the sum back on the host."""
    x = relay.var("x", shape=SHAPE)
    y = relay.var("y", shape=SHAPE)
    n = relay.negative(x)
    if annotate:
        n = relay.annotation.on_device(n, "cpu")
    e = relay.exp(n)
    if annotate:
        e = relay.annotation.on_device(e, xrelay.VirtualDevice("testnpu", memory_scope="sram"))
    return xrelay.IRModule.from_expr(relay.Function([x, y], relay.add(e, y)))


def _build(annotate=True, **kwargs):
    target = {"cpu": "llvm", "testnpu": "llvm"} if annotate else "llvm"
    return xrelay.build(_graph(annotate), target=target, use_c_kernels=False, **kwargs)


def _copy_steps(m):
    funcs = functions_by_name(m.program)
    main = funcs["main"]
    invokes = [op for op in main.body.block.ops if isinstance(op, InvokeOp)]
    return [(k, op) for k, op in enumerate(invokes) if device_copy_of(funcs[op.callee_name]) is not None]


def _view(m, value):
    storage = value.owner.storage.owner
    assert isinstance(storage, AllocStorageOp)
    pool, offset = storage.placement
    return pool, m.executor.arenas[pool][offset : offset + storage.nbytes]


def test_outputs_match_the_single_device_build():
    m = _build()
    single = _build(annotate=False)
    ins = _inputs()
    m.run(**ins)
    single.run(**ins)
    np.testing.assert_array_equal(m.get_output(0).numpy(), single.get_output(0).numpy())
    np.testing.assert_allclose(m.get_output(0).numpy(), np.exp(-ins["x"]) + ins["y"], rtol=1e-6)


def test_each_copy_is_a_real_copy_between_arenas():
    m = _build()
    copies = _copy_steps(m)
    assert len(copies) == 2  # host -> npu sram, npu sram -> host
    for _, op in copies:
        (src_pool, src), (dst_pool, dst) = _view(m, op.inputs[0]), _view(m, op.outs[0])
        assert src_pool != dst_pool
        assert not np.shares_memory(src, dst)
    assert {_view(m, op.outs[0])[0] for _, op in copies} == {"testnpu0.sram", "cpu0"}


def test_poisoned_source_after_the_copy_does_not_reach_the_result():
    m = _build()
    ins = _inputs(1)
    m.set_input(**ins)
    (first, op), _ = _copy_steps(m)
    _, src = _view(m, op.inputs[0])
    ex = m.executor
    for k, (_, _, compiled) in enumerate(ex.steps):
        for _, _, thunk in compiled.thunks:
            thunk()
        if ex.steps[k][0] == op.callee_name:
            src.view(np.uint8)[:] = 0xFF  # NaN: the negative's result is dead after its copy
    out = ex.outputs[0]
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, np.exp(-ins["x"]) + ins["y"], rtol=1e-6)


def test_pools_per_memory_space_with_their_scope_limits():
    m = _build()
    pools = {op.pool_name: op for op in m.program.ops if isinstance(op, PoolOp)}
    assert set(pools) == {"cpu0", "testnpu0.sram"}
    sram = pools["testnpu0.sram"]
    assert sram.capacity.value.data == 64 * 1024 and sram.alignment.value.data == 16
    assert str(sram.device) == '#relay.virtual_device<testnpu(0), memory_scope = "sram">'
    assert 0 < sram.size.value.data <= 64 * 1024
    report = m.memory_report()
    assert "testnpu0.sram" in report and "cpu0" in report


def test_graph_json_has_device_index_copy_nodes_and_scopes():
    g = graph_json(_build().program)
    names = [n["name"] for n in g["nodes"]]
    assert names.count("__copy") == 1 and "__copy_1" in names
    assert all(n["attrs"]["func_name"] == "__copy" for n in g["nodes"] if n["name"].startswith("__copy"))
    devices = g["attrs"]["device_index"][1]
    scopes = g["attrs"]["storage_scope"][1]
    by_name = dict(zip(names, zip(devices, scopes)))  # one output per node here
    assert by_name["x"] == (1, "global")
    assert by_name["__copy"] == (NPU.code, "sram")
    assert by_name["__copy_1"] == (1, "global")
    sids = g["attrs"]["storage_id"][1]
    npu = {s for s, d in zip(sids, devices) if d == NPU.code}
    assert npu and npu.isdisjoint(s for s, d in zip(sids, devices) if d == 1)


def test_memory_interpreter_agrees_with_poisoned_kills():
    m = _build()
    ins = _inputs(2)
    out = run_memory(m.program, ins, poison=True)[0]
    np.testing.assert_allclose(out, np.exp(-ins["x"]) + ins["y"], rtol=1e-6)


def test_a_device_that_cannot_run_here_is_a_build_error():
    x = relay.var("x", shape=(4,))
    mod = xrelay.IRModule.from_expr(relay.Function([x], relay.annotation.on_device(relay.exp(x), "cuda")))
    with pytest.raises(BuildError, match="no way to run 'cuda'"):
        xrelay.build(mod)
    with pytest.raises(BuildError, match="cuda"):
        xrelay.build(_graph(False), target={"cpu": "llvm", "cuda": "cuda"})


def test_relay_build_with_several_targets():
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(_graph(True), target={"cpu": "llvm", "testnpu": "llvm"})
    import json

    graph = json.loads(lib.get_graph_json())
    assert [n["name"] for n in graph["nodes"]].count("__copy") == 1
    assert NPU.code in graph["attrs"]["device_index"][1]


def test_register_device_errors():
    with pytest.raises(DeviceError, match="built-in"):
        register_device("cuda")
    with pytest.raises(DeviceError, match="already registered"):
        register_device("testnpu", memory_scopes={"sram": 1})
    assert register_device("testnpu", memory_scopes={"sram": MemoryScope(64 * 1024, 16), "dram": (None, 64)}) is NPU
    with pytest.raises(DeviceError, match="no memory scope 'l3'"):
        _ = xrelay.VirtualDevice("testnpu", memory_scope="l3").memory_space
    assert module_op(_graph(True)) is not None


def test_lower_bound_sums_the_memory_spaces():
    """Buffers of different memory spaces never share bytes: the report's lower bound is the
    sum of each space's max-live bytes (here each space is planned at its bound)."""
    from xrelay.runtime.memory_plan import Buffer, Pool
    from xrelay.transforms.planners import lower_bound

    pools = [Pool("a", None, 1), Pool("b", None, 1)]
    buffers = [Buffer("x", 100, 0, 1, pools=("a",)), Buffer("y", 50, 2, 3, pools=("b",))]
    assert lower_bound(buffers, pools) == 150
    assert lower_bound([Buffer("x", 100, 0, 1), Buffer("y", 50, 2, 3)], pools) == 100
    buffers, pools, plan = _build()._plan_info
    assert plan.total_size == lower_bound(buffers, pools)


def test_device_handles_of_registered_devices():
    dev = xrelay.device("testnpu", 1)
    assert (str(dev), dev.device_type, dev.exist) == ("testnpu(1)", NPU.code, True)
    assert not xrelay.cuda(0).exist and xrelay.device(NPU.code).name == "testnpu"
    x = relay.var("x", shape=(2,))
    assert str(relay.annotation.on_device(x, dev).attrs["virtual_device"]) == "#relay.virtual_device<testnpu(1)>"


def test_export_and_load_keep_the_devices(tmp_path):
    m = _build()
    m.export(tmp_path / "graph.json", tmp_path / "lib.mlir", tmp_path / "params.npz")
    # (the kernels the module was built with: the loop kernels' exp is not numpy's to the bit)
    loaded = xrelay.runtime.load(
        tmp_path / "graph.json", tmp_path / "lib.mlir", tmp_path / "params.npz", use_c_kernels=False
    )
    assert {op.pool_name for op in loaded.program.ops if isinstance(op, PoolOp)} == {"cpu0", "testnpu0.sram"}
    ins = _inputs(3)
    m.run(**ins)
    loaded.run(**ins)
    np.testing.assert_array_equal(m.get_output(0).numpy(), loaded.get_output(0).numpy())


def test_debug_build_reports_each_copy_step():
    m = _build(debug=True)
    m.run(**_inputs(4))
    assert "fused_device_copy" in m.profile()
