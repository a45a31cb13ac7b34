"""The TVM names a ported script imports (README "Porting TVM scripts"): each one's behaviour
and its errors."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay as tvm
from xrelay import relay


def test_tvm_error_is_the_base_of_xrelays_errors():
    from xdsl.utils.exceptions import VerifyException

    from xrelay.runtime.graph_executor import GraphModuleError
    from xrelay.transforms.planners import PlanError

    with pytest.raises(tvm.TVMError) as info:
        relay.add(relay.var("a", shape=(2, 3)), relay.var("b", shape=(4,)))
    assert isinstance(info.value, relay.RelayTypeError) and isinstance(info.value, VerifyException)
    assert issubclass(GraphModuleError, ValueError) and issubclass(GraphModuleError, tvm.TVMError)
    assert issubclass(PlanError, tvm.TVMError) and issubclass(tvm.TVMError, RuntimeError)
    with pytest.raises(tvm.TVMError, match="1:"):
        relay.fromtext("def @main(%x) { %x +")
    with pytest.raises(tvm.TVMError):
        relay.annotation.on_device(relay.var("v", shape=(1,)), "no_such_device")


def test_transform_namespace_is_the_pass_infrastructure():
    from xrelay.transforms import infra

    assert tvm.transform.PassContext is infra.PassContext is relay.transform.PassContext
    assert tvm.transform.Sequential is infra.Sequential
    assert tvm.ir.transform is tvm.transform
    assert tvm.ir.instrument.PassTimingInstrument is tvm.instrument.PassTimingInstrument

    @tvm.transform.module_pass(opt_level=1)
    def noop(mod, ctx):
        return mod

    assert isinstance(noop, tvm.transform.ModulePass) and isinstance(noop, tvm.transform.Pass)
    assert noop.info.name == "noop"


def test_function_pass_rewrites_each_function():
    @tvm.transform.function_pass(opt_level=1)
    def relu_everything(func, mod, ctx):
        return relay.Function(func.params, relay.nn.relu(func.body))

    x = relay.var("x", shape=(2,))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.negative(x)))
    mod = relu_everything(mod)
    assert isinstance(relu_everything, tvm.transform.FunctionPass)
    out = tvm.run(mod, {"x": np.array([1.0, -2.0], "float32")})[0]
    np.testing.assert_array_equal(out, [0.0, 2.0])

    @relay.transform.function_pass(opt_level=2, name="Scale")
    class Scale:
        def __init__(self, k):
            self.k = k

        def transform_function(self, func, mod, ctx):
            return relay.Function(func.params, relay.multiply(func.body, relay.const(self.k, "float32")))

    p = Scale(3.0)
    assert p.info.name == "Scale" and p.info.opt_level == 2
    out = tvm.run(p(mod), {"x": np.array([1.0, -2.0], "float32")})[0]
    np.testing.assert_array_equal(out, [0.0, 6.0])
    with pytest.raises(ValueError, match="opt_level"):
        relay.transform.function_pass(lambda f, m, c: f)


def test_tir_immediates():
    one = tvm.tir.IntImm("int32", 1)
    assert one == 1 and one.value == 1 and one.dtype == "int32"
    assert tvm.tir.FloatImm("float32", 0.5) == 0.5
    with pytest.raises(tvm.TVMError, match="does not fit in int8"):
        tvm.tir.IntImm("int8", 300)
    with pytest.raises(tvm.TVMError, match="scalar integer dtype"):
        tvm.tir.IntImm("float32", 1)
    with pytest.raises(tvm.TVMError, match="no TensorIR"):
        tvm.tir.PrimFunc  # noqa: B018



def test_tir_const_and_any():
    c = tvm.tir.const(10, "int64")
    assert isinstance(c, tvm.tir.IntImm) and c == 10 and c.dtype == "int64"
    assert tvm.tir.const(3).dtype == "int32" and tvm.tir.const(1 << 40).dtype == "int64"
    f = tvm.tir.const(0.5)
    assert isinstance(f, tvm.tir.FloatImm) and f.dtype == "float32"
    assert tvm.tir.const(2, "float16").dtype == "float16"
    assert tvm.tir.const(True).dtype == "bool"
    with pytest.raises(tvm.TVMError, match="dtype"):
        tvm.tir.const("x")
    x = tvm.relay.var("x", shape=(tvm.tir.Any(), tvm.tir.const(20, "int64")))
    assert str(x.type_annotation) == "tensor<?x20xf32>"


def test_te_imports_and_says_what_to_use():
    from xrelay import te

    with pytest.raises(tvm.TVMError, match=r"tvm.te.placeholder .* use relay.var"):
        te.placeholder((1, 2), name="x")
    assert not hasattr(te, "compute")


def test_data_type():
    t = tvm.runtime.DataType("float32x4")
    assert (t.type_code, t.bits, t.lanes, str(t)) == (2, 32, 4, "float32x4")
    assert str(tvm.runtime.DataType("bool")) == "bool" and tvm.runtime.DataType("uint1") == "bool"
    assert tvm.runtime.DataType(np.dtype("int16")).bits == 16
    for bad in ("int8q", "floatx", "bfloat32", "int0"):
        with pytest.raises(tvm.TVMError, match="data type"):
            tvm.runtime.DataType(bad)


def test_nd_array():
    a = tvm.nd.array(np.arange(4, dtype="float32"), tvm.cpu(0))
    assert isinstance(a.numpy(), np.ndarray) and type(a.numpy()) is np.ndarray
    np.testing.assert_array_equal(a.asnumpy(), [0, 1, 2, 3])
    assert str(a.device) == "cpu(0)"
    a.copyfrom(np.ones(4))
    np.testing.assert_array_equal(a.numpy(), np.ones(4, "float32"))
    with pytest.raises(tvm.TVMError, match=r"cuda\(0\)"):
        tvm.nd.array([1], tvm.cuda(0))
    assert isinstance(relay.const(np.ones(2, "float32")).data.numpy(), np.ndarray)


def test_devices():
    assert [str(tvm.device(n)) for n in ("cpu", "llvm", "cuda", "gpu", "cl", "cuda:1")] == [
        "cpu(0)", "cpu(0)", "cuda(0)", "cuda(0)", "opencl(0)", "cuda(1)",
    ]  # fmt: skip
    assert tvm.cpu(0).exist and not tvm.metal(0).exist
    assert tvm.vulkan(1) == tvm.device("vulkan", 1) and tvm.vulkan(1).device_type == 7
    with pytest.raises(tvm.TVMError, match="unknown device 'tpu'"):
        tvm.device("tpu")


def test_download_testdata(tmp_path, monkeypatch):
    from xrelay.contrib.download import download_testdata

    monkeypatch.setenv("XRELAY_TESTDATA_DIR", str(tmp_path))
    url = "https://example.com/models/cat.png"
    with pytest.raises(tvm.TVMError) as info:
        download_testdata(url, "cat.png", module="data")
    message = str(info.value)
    assert url in message and str(tmp_path / "data" / "cat.png") in message
    assert isinstance(info.value, FileNotFoundError)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "cat.png").write_bytes(b"png")
    assert download_testdata(url, "cat.png", module="data") == str(tmp_path / "data" / "cat.png")
    with pytest.raises(tvm.TVMError, match="stay inside the cache"):
        download_testdata(url, "../cat.png", module="data")


def test_param_dict_errors():
    good = relay.save_param_dict({"w": np.ones((2, 2), "float32")})
    assert sorted(relay.load_param_dict(good)) == ["w"]
    for bad, message in (
        (b"\x00" * 16, "not a TVM parameter dict"),
        (good[:-5], "truncated parameter data"),
        (bytes(good) + b"x", "unexpected bytes"),
    ):
        with pytest.raises(tvm.TVMError, match=message):
            relay.load_param_dict(bad)


def test_target_parsing():
    t = tvm.target.Target("llvm -mcpu=skylake -mattr=+avx2,+fma -num-cores=4")
    assert (t.kind, t.mcpu, t.mattr, t.attrs["num-cores"]) == ("llvm", "skylake", ("+avx2", "+fma"), 4)
    assert tvm.target.Target("llvm", host="llvm -mcpu=x").host.mcpu == "x"
    assert tvm.target.Target({"kind": "llvm", "mcpu": "znver3"}).mcpu == "znver3"
    assert tvm.target.Target("c").kind == "c"  # the C target (xrelay.backend.c)
    for bad, message in (
        ("opengl", "unknown kind 'opengl'"),
        ("opencl -mcpu=x", "unknown option -mcpu for kind 'opencl'"),
        ("metal -max_function_args=many", "expects an integer"),
        ("llvm -num-cores=four", "expects an integer"),
        ("llvm mcpu=x", "expected an option"),
        ("", "empty target"),
    ):
        with pytest.raises(tvm.TVMError, match=message):
            tvm.target.Target(bad)
    with pytest.raises(tvm.TVMError, match="option 'max_function_args' expects an integer"):
        tvm.target.Target({"kind": "metal", "max_function_args": 1.5})


def test_device_targets_are_descriptions():
    # every kind TVM v0.19 registers, with its options' defaults (src/target/target_kind.cc)
    assert {"cuda", "nvptx", "rocm", "opencl", "metal", "vulkan", "webgpu", "hexagon"} <= set(
        tvm.target.Target.list_kinds()
    )
    assert tvm.target.Target("opencl").max_function_args == 128
    assert tvm.target.Target("metal").max_function_args == 31
    assert tvm.target.Target("cuda").max_function_args == 0  # no limit
    cuda = tvm.target.Target("cuda -arch=sm_80", host="llvm")
    assert (cuda.max_num_threads, cuda.thread_warp_size, cuda.attrs["arch"]) == (1024, 32, "sm_80")
    assert cuda.keys == ("cuda", "gpu") and cuda.get_target_device_type() == 2 and cuda.host.kind == "llvm"
    assert tvm.target.Target("rocm").thread_warp_size == 64
    assert tvm.target.Target("vulkan").attrs["supports_float32"] is True
    assert tvm.target.Target({"kind": "metal", "max_function_args": 8}).max_function_args == 8
    assert tvm.target.Target("opencl") == tvm.target.Target("opencl -max_function_args=128")
    assert tvm.target.Target.current() is None
    with tvm.target.Target("metal") as metal:
        assert tvm.target.Target.current() is metal
        with tvm.target.Target("opencl"):
            assert tvm.target.Target.current().max_function_args == 128
        assert tvm.target.Target.current() is metal
    assert tvm.target.Target.current() is None
    # building is for the host CPU and C only
    mod = tvm.IRModule.from_expr(relay.Function([x := relay.var("x", shape=(2,))], relay.exp(x)))
    for target in ("cuda", "metal", tvm.target.Target("vulkan")):
        with pytest.raises(tvm.TVMError, match=r"no code generator for '(cuda|metal|vulkan)' here"):
            relay.build(mod, target=target)


def test_relay_testing_import_paths():
    # tvm.relay.testing's workloads, as the seeds import them
    from xrelay import testing
    from xrelay.relay.testing import mlp as relay_mlp
    from xrelay.relay.testing import resnet as relay_resnet

    assert relay_resnet is testing.resnet
    assert relay.testing.mlp is relay_mlp
    assert relay.testing.check_semantics is testing.check_semantics  # lazy re-export
    with pytest.raises(AttributeError):
        relay.testing.no_such_helper  # noqa: B018


def test_parse_under_tvms_names():
    # TVM v0.19: tvm.relay.parse / parse_expr / fromtext; older scripts: from tvm.parser import parse
    from xrelay.parser import fromtext, parse, parse_expr

    text = '#[version = "0.0.5"]\ndef @main(%x: Tensor[(2, 3), float32]) { nn.relu(%x) }'
    assert relay.parse is parse and relay.fromtext is fromtext and relay.parse_expr is parse_expr
    mod = relay.parse(text, "m.relay")
    x = relay.var("x", shape=(2, 3))
    expected = tvm.IRModule.from_expr(relay.Function([x], relay.nn.relu(x)))
    tvm.ir.assert_structural_equal(mod["main"], expected["main"])
    assert isinstance(parse_expr("1f"), relay.Constant)
