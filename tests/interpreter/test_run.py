"""The reference interpreter: values of hand-written modules, input binding, errors."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from xrelay.runtime.interpreter import (
    RelayFunctions,
    RunError,
    Runner,
    bind_inputs,
    parameter_specs,
    random_inputs,
    run,
)

from .conftest import parse

CONV_BN = """
func.func private @fused_add_relu(%a: tensor<1x4x6x6xf32>, %b: tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> attributes {relay.primitive = 1 : i64} {
  %0 = relay.add %a, %b : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %1 = relay.nn.relu %0 : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  func.return %1 : tensor<1x4x6x6xf32>
}
func.func @main(%x: tensor<1x3x6x6xf32>, %w: tensor<4x3x3x3xf32>, %g: tensor<4xf32>, %v: tensor<4xf32>) -> (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<2x4x6x6xf32>) {
  %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %b, %m, %s = relay.nn.batch_norm %y, %g, %g, %g, %v : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>)
  %r = func.call @fused_add_relu(%b, %y) : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %c = relay.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %k = relay.multiply %m, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %cat = relay.concatenate %r, %y {axis = 0} : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  func.return %r, %k, %cat : tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<2x4x6x6xf32>
}
"""


def conv_ref(x, w):
    """Direct NCHW convolution, stride 1, padding 1 (a loop reference)."""
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    n, _, h, wd = x.shape
    out = np.zeros((n, w.shape[0], h, wd), np.float64)
    for i in range(h):
        for j in range(wd):
            patch = xp[:, :, i : i + 3, j : j + 3]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return out


def conv_bn_inputs(rng):
    return {
        "x": rng.standard_normal((1, 3, 6, 6)).astype("float32"),
        "w": rng.standard_normal((4, 3, 3, 3)).astype("float32"),
        "g": rng.standard_normal(4).astype("float32"),
        "v": (rng.random(4) + 0.5).astype("float32"),
    }


def test_conv_bn_call_constant_multi_result(rng):
    mod = parse(CONV_BN)
    inp = conv_bn_inputs(rng)
    r, k, cat = run(mod, inp)
    y = conv_ref(inp["x"], inp["w"])
    g, v = inp["g"].astype(np.float64), inp["v"].astype(np.float64)
    # batch_norm(y, gamma=g, beta=g, mean=g, var=v)
    bn = (y - g[:, None, None]) / np.sqrt(v[:, None, None] + 1e-5) * g[:, None, None] + g[
        :, None, None
    ]
    expect_r = np.maximum(bn + y, 0)
    assert r.dtype == np.float32 and r.shape == (1, 4, 6, 6)
    np.testing.assert_allclose(r, expect_r, rtol=1e-4, atol=1e-4)
    # batch_norm's second result is the moving mean, passed through
    np.testing.assert_array_equal(k, inp["g"] * np.array([1, 2, 3, 4], "float32"))
    assert cat.shape == (2, 4, 6, 6)
    np.testing.assert_array_equal(cat[0], r[0])
    np.testing.assert_allclose(cat[1], y[0], rtol=1e-4, atol=1e-4)


def test_positional_inputs_match_named(rng):
    mod = parse(CONV_BN)
    inp = conv_bn_inputs(rng)
    named = run(mod, inp)
    positional = run(mod, [inp["x"], inp["w"], inp["g"], inp["v"]])
    for a, b in zip(named, positional, strict=True):
        np.testing.assert_array_equal(a, b)


def test_params_bind_by_name_and_extra_entries_are_ignored(rng):
    mod = parse(CONV_BN)
    inp = conv_bn_inputs(rng)
    params = {"w": inp.pop("w"), "g": inp.pop("g"), "not_a_parameter": np.zeros(3)}
    out = run(mod, inp, params)
    ref = run(mod, {**inp, "w": params["w"], "g": params["g"]})
    np.testing.assert_array_equal(out[0], ref[0])


def test_accepts_an_object_with_module(rng):
    class Holder:
        def __init__(self, module: ModuleOp):
            self.module = module

    mod = parse(CONV_BN)
    inp = conv_bn_inputs(rng)
    np.testing.assert_array_equal(run(Holder(mod), inp)[1], run(mod, inp)[1])


def test_split_dropout_and_several_calls_of_one_function():
    mod = parse(
        """
func.func private @twice(%a: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) attributes {relay.primitive = 1 : i64} {
  %0 = relay.add %a, %a : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %1 = relay.negative %a : (tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %0, %1 : tensor<2x2xf32>, tensor<2x2xf32>
}
func.func @main(%x: tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %a, %b, %c = relay.split %x {indices_or_sections = 3, axis = 1} : (tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
  %d, %mask = relay.nn.dropout %c : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  %p, %q = func.call @twice(%a) : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  %s, %t = func.call @twice(%b) : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  func.return %p, %t, %d, %c : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}
"""
    )
    x = np.arange(12, dtype="float32").reshape(2, 6)
    p, t, d, c = run(mod, {"x": x})
    np.testing.assert_array_equal(p, 2 * x[:, 0:2])
    np.testing.assert_array_equal(t, -x[:, 2:4])
    np.testing.assert_array_equal(d, x[:, 4:6])  # dropout is the identity at inference
    np.testing.assert_array_equal(c, x[:, 4:6])
    # outputs are distinct arrays the caller owns
    assert not np.shares_memory(d, c)
    d[0, 0] = 99.0
    assert c[0, 0] == 4.0


def test_external_constant_from_params_and_returned_constant_is_writable():
    text = """
func.func @main(%x: tensor<3xi32>) -> (tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) {
  %w = relay.constant @w : tensor<3xi32>
  %y = relay.add %x, %w : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return %y, %w, %x : tensor<3xi32>, tensor<3xi32>, tensor<3xi32>
}
"""
    w = np.array([10, 20, 30], "int32")
    mod = parse(text, params={"w": w})
    x = np.array([1, 2, 3], "int32")
    y, w_out, x_out = run(mod, {"x": x})
    np.testing.assert_array_equal(y, [11, 22, 33])
    np.testing.assert_array_equal(w_out, w)
    w_out[0] = -1  # a copy, not the constant's read-only data
    x_out[0] = -1  # a copy, not the caller's input
    assert x[0] == 1
    np.testing.assert_array_equal(run(mod, {"x": x})[1], w)


def test_bool_and_cast_dtypes_are_kept():
    mod = parse(
        """
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xi8>, tensor<4xf32>) {
  %m = relay.greater %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %c = relay.cast %x {dtype = "int8"} : (tensor<4xf32>) -> tensor<4xi8>
  %w = relay.where %m, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %m, %c, %w : tensor<4xi1>, tensor<4xi8>, tensor<4xf32>
}
"""
    )
    x = np.array([1.5, -2.0, 3.0, 0.0], "float32")
    y = np.array([0.0, 0.0, 4.0, -1.0], "float32")
    m, c, w = run(mod, {"x": x, "y": y})
    assert (m.dtype, c.dtype, w.dtype) == (np.bool_, np.int8, np.float32)
    np.testing.assert_array_equal(m, [True, False, False, True])
    np.testing.assert_array_equal(c, [1, -2, 3, 0])
    np.testing.assert_array_equal(w, np.maximum(x, y))


def test_python_lists_convert_to_the_declared_dtype():
    mod = parse(
        """
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = relay.add %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
"""
    )
    (y,) = run(mod, {"x": [1, 2.5]})
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, [2.0, 5.0])


def test_dynamic_dims_accept_any_size():
    mod = parse(
        """
func.func @main(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %y = relay.nn.relu %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}
"""
    )
    for n in (1, 5):
        x = np.linspace(-1, 1, n * 3, dtype="float32").reshape(n, 3)
        np.testing.assert_array_equal(run(mod, {"x": x})[0], np.maximum(x, 0))
    with pytest.raises(RunError, match=r"input 'x' has shape \(5, 4\), expected \('\?', 3\)"):
        run(mod, {"x": np.zeros((5, 4), "float32")})


def test_names_fall_back_to_positions_and_other_entries():
    mod = parse(
        """
func.func @main(%0: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %r = relay.subtract %0, %y : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}
func.func @other(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r = relay.negative %a : (tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}
"""
    )
    assert [n for n, _ in parameter_specs(mod)] == ["arg0", "y"]
    one, two = np.ones(2, "float32"), np.full(2, 2, "float32")
    np.testing.assert_array_equal(run(mod, {"arg0": one, "y": two})[0], [-1, -1])
    np.testing.assert_array_equal(run(mod, {"a": two}, entry="other")[0], [-2, -2])
    with pytest.raises(RunError, match=r"no function @nope; functions: @main, @other"):
        run(mod, {}, entry="nope")


def test_runner_reuses_its_plans(rng):
    mod = parse(CONV_BN)
    runner = Runner(mod)
    a = runner.run(conv_bn_inputs(rng))
    inp = conv_bn_inputs(np.random.default_rng(99))
    b = runner.run(inp)
    c = run(mod, inp)
    np.testing.assert_array_equal(b[0], c[0])
    assert not np.array_equal(a[0], b[0])


def test_random_inputs_follow_types():
    mod = parse(
        """
func.func @main(%f: tensor<50x40xf32>, %i: tensor<300xi64>, %u: tensor<300xui8>, %b: tensor<300xi1>) -> tensor<50x40xf32> {
  func.return %f : tensor<50x40xf32>
}
"""
    )
    vals = random_inputs(mod, seed=3)
    assert vals["f"].dtype == np.float32 and vals["f"].shape == (50, 40)
    assert abs(float(vals["f"].mean())) < 0.1 and 0.9 < float(vals["f"].std()) < 1.1
    assert vals["i"].dtype == np.int64 and vals["i"].min() >= -5 and vals["i"].max() <= 5
    assert vals["u"].dtype == np.uint8 and vals["u"].max() <= 10
    assert vals["b"].dtype == np.bool_ and 0 < vals["b"].sum() < 300
    again = random_inputs(mod, seed=3, skip={"i"})
    assert set(again) == {"f", "u", "b"}
    np.testing.assert_array_equal(again["f"], vals["f"])
    assert not np.array_equal(random_inputs(mod, seed=4)["f"], vals["f"])


def test_every_relay_op_class_has_an_implementation():
    from xrelay.dialects.relay import RELAY_OPS, ConstantOp

    impls = dict(RelayFunctions._impls())
    for cls in RELAY_OPS.values():
        assert cls in impls, cls.name
    assert ConstantOp in impls and func.CallOp in impls and func.ReturnOp in impls


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------

ADD = """
func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %z = relay.add %x, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %z : tensor<2x3xf32>
}
"""


def test_missing_input_names_it_and_lists_the_expected():
    x = np.zeros((2, 3), "float32")
    with pytest.raises(RunError) as info:
        run(parse(ADD), {"x": x})
    assert str(info.value) == (
        "missing input(s) y; @main takes: x: tensor<2x3xf32>, y: tensor<2x3xf32>"
    )
    assert isinstance(info.value, ValueError)


def test_unknown_input_is_an_error():
    x = np.zeros((2, 3), "float32")
    with pytest.raises(RunError, match=r"unknown input\(s\) 'z'; @main takes: x, y"):
        run(parse(ADD), {"x": x, "y": x, "z": x})


def test_wrong_dtype_and_shape_name_the_input():
    x = np.zeros((2, 3), "float32")
    with pytest.raises(
        RunError, match=r"input 'y' has dtype float64, expected float32 \(type tensor<2x3xf32>\)"
    ):
        run(parse(ADD), {"x": x, "y": x.astype("float64")})
    with pytest.raises(RunError, match=r"input 'x' has shape \(3, 2\), expected \(2, 3\)"):
        run(parse(ADD), {"x": x.T.copy(), "y": x})
    with pytest.raises(
        RunError, match=r"input 'x': expected tensor<2x3xf32> \(float32\), got a list"
    ):
        run(parse(ADD), {"x": [["a", "b", "c"]] * 2, "y": x})


def test_binding_conflicts():
    x = np.zeros((2, 3), "float32")
    with pytest.raises(RunError, match=r"parameter 'y' is given twice \(inputs and params\)"):
        run(parse(ADD), {"x": x, "y": x}, {"y": x})
    with pytest.raises(RunError, match=r"3 positional input\(s\) given, but @main takes 2"):
        run(parse(ADD), [x, x, x])
    # positional inputs first, params complete the rest
    assert len(bind_inputs(parse(ADD), [x], {"y": x})) == 2


def test_op_without_implementation_names_op_and_position():
    mod = parse(
        """
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = relay.nn.relu %x : (tensor<2xf32>) -> tensor<2xf32>
  %t = "test.op"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %t : tensor<2xf32>
}
"""
    )
    with pytest.raises(
        RunError, match=r"^@main, op #2 \(%t = test.op\): no implementation for op 'test.op'"
    ):
        run(mod, {"x": np.zeros(2, "float32")})


def test_kernel_failure_is_reraised_with_the_op_and_the_call_path(monkeypatch):
    from xrelay.kernels import KERNELS

    def broken(*args, **kwargs):
        raise FloatingPointError("boom")

    monkeypatch.setitem(KERNELS, "tanh", broken)
    mod = parse(
        """
func.func private @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %b = relay.negative %a : (tensor<2xf32>) -> tensor<2xf32>
  %c = relay.tanh %b : (tensor<2xf32>) -> tensor<2xf32>
  func.return %c : tensor<2xf32>
}
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %r = func.call @f(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}
"""
    )
    with pytest.raises(RunError) as info:
        run(mod, {"x": np.zeros(2, "float32")})
    assert str(info.value) == (
        "@f, op #2 (%c = relay.tanh): relay.tanh failed: FloatingPointError: boom\n"
        "  called from @main, op #1 (%r = func.call)"
    )
    assert isinstance(info.value.__cause__, FloatingPointError)


def test_kernel_returning_the_wrong_dtype_or_shape_is_caught(monkeypatch):
    from xrelay.kernels import KERNELS

    mod = parse(ADD)
    x = np.ones((2, 3), "float32")
    monkeypatch.setitem(KERNELS, "add", lambda a, b, out=None: (a + b).astype("float64"))
    with pytest.raises(
        RunError,
        match=r"@main, op #1 \(%z = relay.add\): kernel bug: the kernel returned a float64 array "
        r"of shape \(2, 3\) for result 0, whose type is tensor<2x3xf32>",
    ):
        run(mod, {"x": x, "y": x})
    monkeypatch.setitem(KERNELS, "add", lambda a, b, out=None: (a + b)[0])
    with pytest.raises(RunError, match=r"kernel returned a float32 array of shape \(3,\)"):
        run(mod, {"x": x, "y": x})
    monkeypatch.setitem(KERNELS, "add", lambda a, b, out=None: 3.0)
    with pytest.raises(RunError, match=r"kernel returned a float \(not a numpy array\)"):
        run(mod, {"x": x, "y": x})


def test_ill_typed_op_is_reported_as_such():
    from xdsl.parser import Parser

    from xrelay.dialects import make_context

    # declared result type disagrees with inference; parse without verifying
    mod = Parser(
        make_context(),
        """
func.func @main(%x: tensor<2xf32>) -> tensor<2xi32> {
  %y = relay.nn.relu %x : (tensor<2xf32>) -> tensor<2xi32>
  func.return %y : tensor<2xi32>
}
""",
    ).parse_module()
    with pytest.raises(
        RunError,
        match=r"op #1 \(%y = relay.nn.relu\): the op is ill-typed: it declares result type\(s\) "
        r"tensor<2xi32> but its operands give tensor<2xf32>",
    ):
        run(mod, {"x": np.zeros(2, "float32")})


def test_calls_of_declared_or_missing_functions():
    from xdsl.parser import Parser

    from xrelay.dialects import make_context

    mod = parse(
        """
func.func private @ext(tensor<2xf32>) -> tensor<2xf32>
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %r = func.call @ext(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}
"""
    )
    with pytest.raises(RunError, match=r"calls @ext, which is only declared \(no body\)"):
        run(mod, {"x": np.zeros(2, "float32")})
    missing = Parser(
        make_context(),
        """
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %r = func.call @gone(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}
""",
    ).parse_module()
    with pytest.raises(RunError, match=r"@main, op #1 \(%r = func.call\): calls @gone, which the"):
        run(missing, {"x": np.zeros(2, "float32")})


def test_not_a_module():
    with pytest.raises(TypeError, match="expected an xDSL ModuleOp"):
        run(object(), {})


def test_xrelay_run_on_a_python_api_module():
    import xrelay
    from xrelay import relay

    x = relay.var("x", shape=(2, 3), dtype="float32")
    f = relay.Function([x], relay.nn.relu(relay.add(x, relay.const(np.ones((2, 3), "float32")))))
    mod = xrelay.IRModule.from_expr(f)
    assert xrelay.run is run
    data = np.array([[-2, -1, 0], [1, 2, 3]], "float32")
    (y,) = xrelay.run(mod, {"x": data})
    np.testing.assert_array_equal(y, np.maximum(data + 1, 0))


def test_relay_op_without_kernel(monkeypatch):
    from xrelay.kernels import KERNELS

    monkeypatch.delitem(KERNELS, "add")
    x = np.zeros((2, 3), "float32")
    with pytest.raises(
        RunError, match=r"^@main, op #1 \(%z = relay.add\): no numpy kernel implements relay.add$"
    ):
        run(parse(ADD), {"x": x, "y": x})


def test_listeners_see_every_op():
    from xdsl.interpreter import OpCounter

    counter = OpCounter()
    mod = parse(CONV_BN)
    Runner(mod, listeners=[counter]).run(conv_bn_inputs(np.random.default_rng(0)))
    assert counter.ops["relay.nn.conv2d"] == 1
    assert counter.ops["relay.add"] == 1  # inside the called function
    assert counter.ops["func.call"] == 1
    assert counter.ops["func.return"] == 2


def test_runner_recovers_after_a_failed_run(monkeypatch):
    from xrelay.kernels import KERNELS

    mod = parse(CONV_BN)
    runner = Runner(mod)
    inp = conv_bn_inputs(np.random.default_rng(5))
    good = runner.run(inp)
    scopes = list(runner.interpreter.scope_names())
    relu = KERNELS["nn.relu"]
    monkeypatch.setitem(KERNELS, "nn.relu", lambda x, out=None: 1 / 0)
    with pytest.raises(RunError, match=r"@fused_add_relu, op #2 .*ZeroDivisionError"):
        Runner(mod).run(inp)  # a fresh runner plans with the broken kernel
    failing = Runner(mod)
    with pytest.raises(RunError):
        failing.run(inp)
    # the failed call's scopes (and the arrays in them) are gone
    assert list(failing.interpreter.scope_names()) == scopes
    monkeypatch.setitem(KERNELS, "nn.relu", relu)
    np.testing.assert_array_equal(Runner(mod).run(inp)[0], good[0])
