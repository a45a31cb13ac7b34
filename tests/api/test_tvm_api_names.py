"""TVM API names TVM's tests use: relay.analysis.detect_feature, relay.backend.Executor,
IRModule.with_attr/update, Function.type_params, relay.prelude.Prelude (refused by name),
xrelay.topi.testing's references."""

import numpy as np
import pytest

import xrelay as tvm
from xrelay import relay
from xrelay.relay.analysis import Feature, detect_feature
from xrelay.relay.backend import Executor
from xrelay.relay.prelude import PreludeError
from xrelay.topi.testing import log_softmax_python, softmax_python


def test_detect_feature_graph_let_and_module():
    x = relay.var("x", shape=(2,))
    shared = relay.add(x, x)
    graph = relay.Function([x], relay.multiply(shared, shared))
    assert detect_feature(graph) == {Feature.fVar, Feature.fFunction, Feature.fOp, Feature.fCall, Feature.fGraph}
    y = relay.var("y", shape=(2,))
    tree = relay.Function([x], relay.Let(y, relay.add(x, relay.const(1.0)), y))
    assert detect_feature(tree) == {
        Feature.fVar, Feature.fFunction, Feature.fOp, Feature.fCall, Feature.fLet, Feature.fConstant,
    }  # fmt: skip
    mod = tvm.IRModule.from_expr(tree)
    assert Feature.fCall in detect_feature(mod)  # a module keeps no lets: they are SSA in the IR
    assert Feature.fGraph in detect_feature(mod, graph)
    with pytest.raises(TypeError, match="detect_feature"):
        detect_feature(3)


def test_executor_options_are_checked_and_carried_by_with_attr():
    ex = Executor("aot", {"link-params": True})
    assert ex["link-params"] is True and "unpacked-api" not in ex
    with pytest.raises(ValueError, match="no option 'link_params'"):
        Executor("aot", {"link_params": True})
    with pytest.raises(ValueError, match="not registered"):
        Executor("vulkan")
    mod = tvm.IRModule.from_expr(relay.var("x", shape=(1,)) + relay.const(1.0))
    mod2 = mod.with_attr("executor", ex)
    assert mod2.get_attr("executor") == ex and mod.get_attr("executor") is None
    assert mod2.clone().attrs == {"executor": ex}


def test_module_update_and_type_params():
    x = relay.var("x", shape=(3,))
    a = tvm.IRModule.from_expr(relay.Function([x], relay.abs(x)))
    b = tvm.IRModule()
    b["g"] = relay.Function([x], relay.negative(x))
    a.update(b)
    assert sorted(gv.name_hint for gv in a.get_global_vars()) == ["g", "main"]
    assert a["main"].type_params == () and a["g"].type_params == ()
    with pytest.raises(relay.RelayTypeError, match="type parameter .* is not a relay.TypeVar"):
        relay.Function([x], x, None, [relay.TensorType((1,), "float32")])


def test_prelude_has_the_higher_order_functions_and_refuses_the_rest_by_name():
    from xrelay.relay.prelude import Prelude, StaticTensorArrayOps

    p = Prelude(tvm.IRModule())
    assert p.get_global_var("hd").name_hint == "hd"
    assert p.get_global_var("map").name_hint == "map" and p.foldl.name_hint == "foldl"
    with pytest.raises(PreludeError, match="@zip builds or takes lists of tuples"):
        p.get_global_var("zip")
    with pytest.raises(PreludeError, match="@map_accuml builds or takes lists of tuples"):
        p.map_accuml(relay.const(1))
    with pytest.raises(PreludeError, match="tensor-array functions"):
        p.get_global_var("tensor_array", "int32")
    with pytest.raises(PreludeError, match="tensor-array functions"):
        StaticTensorArrayOps(p, "float32", (2,))


def test_topi_references_against_the_definition():
    a = np.array([[1.0, 2.0, 3.0], [1000.0, 1000.0, 990.0]], dtype="float32")
    s = softmax_python(a)
    np.testing.assert_allclose(s.sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(s[0], np.exp([1.0, 2.0, 3.0]) / np.exp([1.0, 2.0, 3.0]).sum(), rtol=1e-6)
    assert np.isfinite(s).all()
    np.testing.assert_allclose(np.exp(log_softmax_python(a)), s, rtol=1e-5)
