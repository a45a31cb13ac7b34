"""Seed 004: TVM's ``tvm.contrib.graph_executor`` API, on xrelay's ``GraphModule``.

The seed is the source of TVM's graph executor; its docstring shows the script users write::

    lib = relay.build(...)
    lib.export_library("compiled_lib.so")
    lib: tvm.runtime.Module = tvm.runtime.load_module("compiled_lib.so")
    gmod = graph_executor.GraphModule(lib["default"](dev))
    gmod.set_input("x", data)
    gmod.run()

Mapping onto xrelay (kept in the script's structure below):

* ``relay.build(mod, target, params=params)`` exists and returns a factory;
  ``xrelay.contrib.graph_executor.GraphModule(lib["default"](dev))`` works as in TVM
  (``lib["default"](dev)`` already is the module, so the wrapper hands it back) and
  ``xrelay.cpu(0)`` is the device (the host CPU). ``xrelay.build(mod, params, opt_level,
  plan=...)`` builds a ``GraphModule`` in one call.
* ``export_library``/``load_module``: ``lib.export(graph.json, lib.mlir, params.npz)`` and
  ``xrelay.runtime.load(...)``; ``graph_executor.create(graph, lib, dev)`` is
  ``xrelay.runtime.create(lib)`` where ``lib`` is the planned program.
* ``benchmark(device, func_name="run", repeat=..., number=...)`` works as written (the device
  is skipped; only ``run`` can be timed), and so does ``benchmark(repeat=..., number=...)``.
* ``load_params``/``share_params`` take the bytes of an ``.npz`` (TVM's are
  ``relay.save_param_dict`` bytes); ``GraphModule.save_params()`` writes them.

Outputs are checked against xrelay's reference interpreter on the unoptimised module.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

import xrelay
import xrelay.runtime
from xrelay import relay
from xrelay.contrib import graph_executor
from xrelay.relay.testing import mlp, resnet
from xrelay.runtime.graph_executor import GraphModuleError

dev = xrelay.cpu(0)


@pytest.fixture(scope="module")
def mlp_workload():
    mod, params = mlp.get_workload(batch_size=1)
    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    return mod, params, lib


def _data(seed, shape=(1, 1, 28, 28)):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


def _reference(mod, params, data):
    return xrelay.run(mod, {"data": data}, params)[0]


def test_docstring_example(mlp_workload, tmp_path):
    mod, params, lib = mlp_workload
    data = _data(0)
    # lib.export_library("compiled_lib.so"); lib = tvm.runtime.load_module("compiled_lib.so")
    paths = [str(tmp_path / n) for n in ("graph.json", "lib.mlir", "params.npz")]
    lib.export(*paths)
    loaded = xrelay.runtime.load(*paths)
    for gmod in (graph_executor.GraphModule(lib["default"](dev)), loaded):
        # use the graph module.
        gmod.set_input("data", data)
        gmod.run()
        np.testing.assert_allclose(
            gmod.get_output(0), _reference(mod, params, data), rtol=1e-5, atol=1e-6
        )


def test_each_factory_call_makes_a_new_module(mlp_workload):
    _, _, lib = mlp_workload
    a, b = lib["default"](dev), lib["default"](dev)
    a.set_input("data", _data(1))
    b.set_input("data", _data(2))
    a.run()
    b.run()
    assert not np.array_equal(a.get_output(0), b.get_output(0))
    with pytest.raises(KeyError, match="'default'"):
        lib["other"]


def test_create_from_graph_and_lib(mlp_workload):
    mod, params, lib = mlp_workload
    # graph_executor.create(graph_json_str, libmod, device)
    graph_json_str, libmod, lib_params = lib
    assert '"op": "tvm_op"' in graph_json_str
    gmod = xrelay.runtime.create(libmod)
    assert sorted(lib_params) == sorted(gmod.get_params())
    data = _data(3)
    gmod.set_input("data", data)
    gmod.run()
    np.testing.assert_allclose(
        gmod.get_output(0), _reference(mod, params, data), rtol=1e-5, atol=1e-6
    )


def test_run_with_input_dict(mlp_workload):
    mod, params, lib = mlp_workload
    gmod = lib["default"](dev)
    data = _data(4)
    # run(**input_dict): set the inputs, then run.
    gmod.run(data=data)
    np.testing.assert_allclose(
        gmod.get_output(0), _reference(mod, params, data), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_array_equal(gmod.get_input("data"), data)


def test_inputs_and_outputs_info(mlp_workload):
    _, _, lib = mlp_workload
    gmod = lib["default"](dev)
    # The params were bound at build time: the only graph input left is data.
    assert gmod.get_num_inputs() == 1
    assert gmod.get_num_outputs() == 1
    assert gmod.get_input_index("data") == 0
    assert gmod.get_input_index("no_such_input") == -1
    assert gmod.get_input_info() == ({"data": (1, 1, 28, 28)}, {"data": "float32"})


def test_get_output_into_out(mlp_workload):
    _, _, lib = mlp_workload
    gmod = lib["default"](dev)
    gmod.run(data=_data(5))
    out = np.empty((1, 10), dtype="float32")
    # get_output(index, out): copies into out and returns it
    assert gmod.get_output(0, out) is out
    np.testing.assert_array_equal(out, gmod.get_output(0))
    # The softmax of the MLP sums to one.
    assert out.sum() == pytest.approx(1.0, rel=1e-5)
    with pytest.raises(GraphModuleError, match="out of range"):
        gmod.get_output(1)


def test_load_params(mlp_workload):
    _, _, lib = mlp_workload
    gmod = lib["default"](dev)
    data = _data(6)
    gmod.run(data=data)
    before = gmod.get_output(0)
    params_bytes = gmod.save_params()
    params = dict(np.load(io.BytesIO(params_bytes)))
    # Zero the last layer's bias and weight: every logit is 0, the softmax uniform.
    last = [name for name, v in params.items() if v.shape in ((10, 64), (10,))]
    assert len(last) == 2
    zeroed = io.BytesIO()
    np.savez(zeroed, **{name: np.zeros_like(params[name]) for name in last})
    gmod.load_params(zeroed.getvalue())
    gmod.run()
    np.testing.assert_allclose(gmod.get_output(0), np.full((1, 10), 0.1, "float32"), rtol=1e-6)
    # Loading the saved params restores the module.
    gmod.load_params(params_bytes)
    gmod.run()
    np.testing.assert_array_equal(gmod.get_output(0), before)


def test_share_params(mlp_workload):
    _, _, lib = mlp_workload
    parent, child = lib["default"](dev), lib["default"](dev)
    params = dict(np.load(io.BytesIO(parent.save_params())))
    changed = {name: v * 0.5 for name, v in params.items()}
    buf = io.BytesIO()
    np.savez(buf, **changed)
    parent.load_params(buf.getvalue())
    # share_params(other, params_bytes): the bytes only name the params to share.
    child.share_params(parent, buf.getvalue())
    data = _data(7)
    parent.run(data=data)
    child.run(data=data)
    np.testing.assert_array_equal(child.get_output(0), parent.get_output(0))
    fresh = lib["default"](dev)
    fresh.run(data=data)
    assert not np.allclose(fresh.get_output(0), child.get_output(0))


def test_benchmark(mlp_workload):
    _, _, lib = mlp_workload
    gmod = lib["default"](dev)
    result = gmod.benchmark(dev, repeat=3, number=2, data=_data(8))
    assert len(result.results) == 3
    assert all(t > 0 for t in result.results)
    assert result.min <= result.median <= result.max
    assert result.mean == pytest.approx(sum(result.results) / 3)
    assert str(result).startswith("Execution time summary:")
    assert "mean (ms)" in str(result)
    # The kwargs were set as inputs before timing.
    np.testing.assert_array_equal(gmod.get_input("data"), _data(8))
    end_to_end = gmod.benchmark(repeat=2, number=1, end_to_end=True)
    assert len(end_to_end.results) == 2
    assert len(gmod.benchmark(dev, "run", 4, 1).results) == 4
    with pytest.raises(GraphModuleError, match="only time 'run'"):
        gmod.benchmark(dev, func_name="get_output")
    # TVM's packed-function style
    gmod["set_input"]("data", _data(9))
    gmod["run"]()
    np.testing.assert_array_equal(gmod["get_output"](0), gmod.get_output(0))
    with pytest.raises(KeyError, match="no function 'nope'"):
        gmod["nope"]


def test_set_input_errors(mlp_workload):
    _, _, lib = mlp_workload
    gmod = lib["default"](dev)
    with pytest.raises(GraphModuleError, match="unknown input 'x' \\(inputs: data\\)"):
        gmod.set_input("x", _data(0))
    with pytest.raises(GraphModuleError, match="input 'data': expected shape"):
        gmod.set_input("data", _data(0, (1, 28, 28)))
    with pytest.raises(GraphModuleError, match="input 'data': expected dtype float32"):
        gmod.set_input("data", _data(0).astype("float64"))


@pytest.mark.parametrize("plan", ["naive", "greedy-by-size"])
def test_xrelay_build_convolutional_network(plan):
    # xrelay.build(mod, params, opt_level, plan) is the one-call equivalent of relay.build
    # plus lib["default"](dev). A CIFAR-style ResNet-20 on 8x8 images keeps it fast.
    mod, params = resnet.get_workload(
        num_layers=20, batch_size=1, image_shape=(3, 8, 8), num_classes=10
    )
    gmod = xrelay.build(mod, params=params, opt_level=3, plan=plan)
    data = _data(9, (1, 3, 8, 8))
    gmod.set_input("data", data)
    gmod.run()
    np.testing.assert_allclose(
        gmod.get_output(0), _reference(mod, params, data), rtol=1e-4, atol=1e-5
    )
    naive = xrelay.build(mod, params=params, opt_level=3, plan="naive")
    assert gmod.arena_bytes <= naive.arena_bytes
    if plan == "greedy-by-size":
        assert gmod.arena_bytes < naive.arena_bytes


def test_relay_build_arguments(mlp_workload):
    mod, params, lib = mlp_workload
    from xrelay.runtime.build import BuildError

    assert repr(lib) == "<GraphExecutorFactoryModule default>"
    named = relay.build(mod, "llvm", params=params, mod_name="mlp")
    assert named["mlp"](dev).get_num_outputs() == 1
    assert relay.build(mod, "llvm", target_host="llvm", params=params)["default"](dev)
    with pytest.raises(BuildError, match="unsupported target 'cuda'"):
        relay.build(mod, "cuda", params=params)
    # The opt level is the current PassContext's, as in Relay: at 0 nothing is fused.
    with relay.transform.PassContext(opt_level=0):
        unfused = relay.build(mod, "llvm", params=params)
    assert len(unfused.get_graph_json()) > len(lib.get_graph_json())
