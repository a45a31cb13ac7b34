"""Seed 004: TVM's ``tvm.contrib.graph_executor`` -- the API its source defines, used in TVM's
own forms with only the imports changed.

The import change (README): ``import xrelay as tvm``, ``from xrelay import relay``,
``from xrelay.contrib import graph_executor``. One test per function or method of the seed
(``create``, ``get_device``, the ``GraphModule`` docstring example, ``run``,
``get_num_outputs``, ``get_output``, ``debug_get_output``, ``load_params``,
``share_params``, ``__getitem__``, ``benchmark``). Outputs are compared with xrelay's reference
interpreter on the unoptimised module; ``benchmark``'s printed summary is TVM's format.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import xrelay as tvm
from xrelay import relay
from xrelay.contrib import graph_executor
from xrelay.relay.testing import mlp

dev = tvm.cpu(0)


@pytest.fixture(scope="module")
def built():
    mod, params = mlp.get_workload(batch_size=1)
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    return mod, params, lib


def _data(seed, shape=(1, 1, 28, 28)):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


def _reference(mod, params, data):
    return tvm.run(mod, {"data": data}, params)[0]


def test_docstring_example(built, tmp_path):
    mod, params, lib = built
    data = _data(0)
    path = str(tmp_path / "compiled_lib.so")
    # build the library using graph executor
    # lib = relay.build(...)
    lib.export_library(path)
    # load it back as a runtime
    lib: tvm.runtime.Module = tvm.runtime.load_module(path)
    # Call the library factory function for default and create
    # a new runtime.Module, wrap with graph module.
    gmod = graph_executor.GraphModule(lib["default"](dev))
    assert isinstance(gmod, graph_executor.GraphModule) and isinstance(lib, tvm.runtime.Module)
    # use the graph module.
    gmod.set_input("data", data)
    gmod.run()
    np.testing.assert_allclose(gmod.get_output(0).numpy(), _reference(mod, params, data), rtol=1e-5, atol=1e-6)


def test_export_library_is_one_checked_file(built, tmp_path):
    _, _, lib = built
    path = tmp_path / "lib.tar"
    lib.export_library(str(path))
    assert [p.name for p in tmp_path.iterdir()] == ["lib.tar"]
    bad = tmp_path / "bad.so"
    bad.write_bytes(path.read_bytes()[:-40])
    with pytest.raises(tvm.TVMError, match="bad.so"):
        tvm.runtime.load_module(str(bad))
    with pytest.raises(tvm.TVMError, match="no such file"):
        tvm.runtime.load_module(str(tmp_path / "missing.so"))


def test_create(built):
    mod, params, lib = built
    graph, libmod, lib_params = relay.build(mod, target="llvm", params=params)
    # create(graph_json_str, libmod, device)
    gmod = graph_executor.create(graph, libmod, dev)
    gmod.set_input(**lib_params)
    data = _data(1)
    gmod.set_input("data", data)
    gmod.run()
    np.testing.assert_allclose(gmod.get_output(0).numpy(), _reference(mod, params, data), rtol=1e-5, atol=1e-6)
    # The same with the factory as libmod, and with a list of devices.
    other = graph_executor.create(lib.get_graph_json(), lib, [dev])
    other.run(data=data)
    np.testing.assert_array_equal(other.get_output(0).numpy(), gmod.get_output(0).numpy())
    with pytest.raises(tvm.TVMError, match="does not describe the library"):
        graph_executor.create(graph.replace('"data"', '"x"'), libmod, dev)
    with pytest.raises(tvm.TVMError, match="not JSON"):
        graph_executor.create("graph.json", libmod, dev)


def test_get_device(built):
    _, _, lib = built
    devices, num_rpc_dev, device_type_id = graph_executor.get_device(lib, dev)
    assert (devices, num_rpc_dev, device_type_id) == ([dev], 0, [1, 0])
    with pytest.raises(ValueError, match="dev has to be the type of Device or a list of Device"):
        graph_executor.get_device(lib, "cpu")
    # Another device type is a clear error when a module is made for it, not before.
    gpu = tvm.cuda(0)
    assert str(gpu) == "cuda(0)" and gpu.device_type == 2
    with pytest.raises(tvm.TVMError, match=r"cuda\(0\): xrelay executes on the host CPU only"):
        graph_executor.get_device(lib, gpu)
    with pytest.raises(tvm.TVMError, match=r"cuda\(0\)"):
        lib["default"](gpu)


def test_run(built):
    mod, params, lib = built
    gmod = graph_executor.GraphModule(lib["default"](dev))
    data = _data(2)
    # run(**input_dict)
    gmod.run(data=data)
    np.testing.assert_allclose(gmod.get_output(0).numpy(), _reference(mod, params, data), rtol=1e-5, atol=1e-6)


def test_get_num_outputs_and_inputs(built):
    _, _, lib = built
    gmod = graph_executor.GraphModule(lib["default"](dev))
    assert gmod.get_num_outputs() == 1
    assert gmod.get_num_inputs() == 1
    assert gmod.get_input_index("data") == 0
    assert gmod.get_input_info() == ({"data": (1, 1, 28, 28)}, {"data": "float32"})


def test_get_output(built):
    _, _, lib = built
    gmod = graph_executor.GraphModule(lib["default"](dev))
    gmod.run(data=_data(3))
    out = tvm.nd.empty((1, 10), "float32")
    # get_output(index, out): copies into out and returns it
    assert gmod.get_output(0, out) is out
    np.testing.assert_array_equal(out.numpy(), gmod.get_output(0).numpy())
    assert out.numpy().sum() == pytest.approx(1.0, rel=1e-5)  # the MLP ends in a softmax
    with pytest.raises(tvm.TVMError, match="out of range"):
        gmod.get_output(1)


def test_debug_get_output(built):
    mod, params, _ = built
    # TVM's plain GraphModule points to the debug executor; xrelay's debug module records
    # every step (build with debug=True).
    plain = tvm.build(mod, params, opt_level=3)
    plain.run(data=_data(4))
    with pytest.raises(tvm.TVMError, match="debug=True"):
        plain.debug_get_output(0, tvm.nd.empty((1, 10)))
    gmod = tvm.build(mod, params, opt_level=3, debug=True)
    gmod.run(data=_data(4))
    last = len(gmod.executor.steps) - 1
    out = tvm.nd.empty((1, 10), "float32")
    assert gmod.debug_get_output(last, out) is out
    np.testing.assert_array_equal(out.numpy(), gmod.get_output(0).numpy())
    # the first layer: dense + bias + relu (a oneDNN step, named by its global symbol as in
    # Relay's BYOC, runs it by default)
    dense = next(n for n, ops, _ in gmod.executor.steps if "dense" in n or "dense" in ops)
    assert gmod.debug_get_output(dense)[0].shape == (1, 128)


def test_load_params(built):
    _, _, lib = built
    gmod = graph_executor.GraphModule(lib["default"](dev))
    data = _data(5)
    gmod.run(data=data)
    before = gmod.get_output(0).numpy()
    params = lib.get_params()
    # load_params(params_bytes): TVM's bytes, from relay.save_param_dict
    # the bias is (1, 10) after the build's AlterOpLayout expands it like the dense result (NC)
    last = [name for name, v in params.items() if v.shape in ((10, 64), (10,), (1, 10))]
    assert len(last) == 2
    gmod.load_params(relay.save_param_dict({name: np.zeros_like(params[name]) for name in last}))
    gmod.run()
    np.testing.assert_allclose(gmod.get_output(0).numpy(), np.full((1, 10), 0.1, "float32"), rtol=1e-6)
    gmod.load_params(bytearray(relay.save_param_dict(params)))
    gmod.run()
    np.testing.assert_array_equal(gmod.get_output(0).numpy(), before)
    loaded = relay.load_param_dict(relay.save_param_dict(params))
    assert sorted(loaded) == sorted(params)
    assert all(np.array_equal(loaded[k].numpy(), params[k]) for k in params)


def test_share_params(built):
    _, _, lib = built
    parent = graph_executor.GraphModule(lib["default"](dev))
    child = graph_executor.GraphModule(lib["default"](dev))
    halved = {name: v * 0.5 for name, v in lib.get_params().items()}
    params_bytes = relay.save_param_dict(halved)
    parent.load_params(params_bytes)
    # share_params(other, params_bytes): the bytes only name the params to share.
    child.share_params(parent, params_bytes)
    data = _data(6)
    parent.run(data=data)
    child.run(data=data)
    np.testing.assert_array_equal(child.get_output(0).numpy(), parent.get_output(0).numpy())
    fresh = graph_executor.GraphModule(lib["default"](dev))
    fresh.run(data=data)
    assert not np.allclose(fresh.get_output(0).numpy(), child.get_output(0).numpy())


def test_getitem(built):
    _, _, lib = built
    gmod = graph_executor.GraphModule(lib["default"](dev))
    # __getitem__(key): the module's function
    gmod["set_input"]("data", _data(7))
    gmod["run"]()
    np.testing.assert_array_equal(gmod["get_output"](0).numpy(), gmod.get_output(0).numpy())
    assert gmod["get_num_outputs"]() == 1
    with pytest.raises(KeyError, match="no function 'nope'"):
        gmod["nope"]


def test_benchmark(built, capsys):
    _, _, lib = built
    gmod = graph_executor.GraphModule(lib["default"](dev))
    result = gmod.benchmark(dev, repeat=3, number=2, data=_data(8))
    print(result)
    assert len(result.results) == 3 and all(t > 0 for t in result.results)
    assert result.min <= result.median <= result.max
    assert result.mean == pytest.approx(sum(result.results) / 3)
    # TVM's printed summary: a title, centred column heads, centred values in ms.
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Execution time summary:"
    assert lines[1] == " mean (ms)   median (ms)    max (ms)     min (ms)     std (ms)  "
    values = [result.mean, result.median, result.max, result.min, result.std]
    assert lines[2] == " ".join(f"{v * 1000:^12.4f}" for v in values) + " " * 15
    assert re.fullmatch(r"BenchmarkResult\(min=.*, mean=.*, median=.*, max=.*, std=.*, results=\[.*\]\)", repr(result))
    np.testing.assert_array_equal(gmod.get_input("data"), _data(8))  # kwargs set as inputs
    assert len(gmod.benchmark(dev, end_to_end=True, repeat=2, number=1).results) == 2
    assert len(gmod.benchmark(dev, "run", 4, 1).results) == 4
    assert len(gmod.benchmark(dev, min_repeat_ms=1, repeat=1, limit_zero_time_iterations=100).results) == 1
    with pytest.raises(tvm.TVMError, match="only time 'run'"):
        gmod.benchmark(dev, func_name="get_output")


def test_target_forms(built):
    mod, params, _ = built
    data = _data(9)
    ref = _reference(mod, params, data)
    for target, host in (
        ("llvm -mcpu=skylake -mattr=+avx2,+fma", None),
        (tvm.target.Target("llvm", host="llvm"), None),
        ("llvm", "llvm -mcpu=core-avx2"),
        ({"cpu": "llvm"}, None),
    ):
        lib = relay.build(mod, target=target, target_host=host, params=params)
        gmod = graph_executor.GraphModule(lib["default"](dev))
        gmod.run(data=data)
        np.testing.assert_allclose(gmod.get_output(0).numpy(), ref, rtol=1e-5, atol=1e-6)
    for target, message in (
        ("cuda", "unsupported target 'cuda': no code generator for 'cuda' here; xrelay compiles for the host CPU only"),
        ("llvm -mfoo=1", "unknown option -mfoo"),
        ("llvm -mtriple=aarch64-linux-gnu", "cross-compilation is not supported"),
        ({"cuda": "cuda", "cpu": "llvm"}, "cuda"),
    ):
        with pytest.raises(tvm.TVMError, match=message):
            relay.build(mod, target=target, params=params)
    with pytest.raises(tvm.TVMError, match="no code generator for 'opencl'"):  # the host's kind
        relay.build(mod, target="llvm", target_host="opencl", params=params)
