"""dynamic-to-static: its meaning (the module before and after on random inputs), its fixed
point through shape_of chains, its errors, and xrelay.build's use of it."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.backend.build import BuildError
from xrelay.dialects.dyn import DynOp
from xrelay.relay import transform
from xrelay.testing.semantics import check_semantics
from xrelay.transforms.dynamic_to_static import DynamicToStaticError, DynamicToStaticPass


def _mod(body_fn, *params):
    return relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(list(params), body_fn(*params))))


def _dyn_ops(mod):
    return [op.name for op in mod.module.walk() if isinstance(op, DynOp)]


def _pipeline_of_dyn_ops(x, y):
    shape = relay.shape_of(y, "int64")
    a = relay.reshape(x, shape)  # 2x3x4 -> 4x6
    b = relay.tile(a, relay.const(np.array([1, 2]), "int64") * relay.const(np.array([1, 1]), "int64"))
    c = relay.strided_slice(b, begin=relay.const(np.array([1]), "int64") + relay.const(np.array([0]), "int64"), end=[3])
    w = relay.const(np.array([[1, 0], [0, 2]]), "int64") + relay.const(np.zeros((2, 2)), "int64")
    d = relay.nn.pad(c, w, 0.5)
    e = relay.broadcast_to(d, relay.shape_of(relay.zeros((2, 3, 14), "float32"), "int64"))
    return relay.squeeze(relay.expand_dims(e, relay.const(np.array(0), "int64") + relay.const(np.array(0), "int64")), relay.const(np.array([0]), "int64") * relay.const(np.array([1]), "int64"))


def test_semantics_on_random_inputs():
    x, y = relay.var("x", shape=(2, 3, 4)), relay.var("y", shape=(4, 6))
    mod = _mod(_pipeline_of_dyn_ops, x, y)
    assert len(_dyn_ops(mod)) == 7
    before, after = check_semantics(DynamicToStaticPass(), mod, trials=2)
    assert before[0].shape == (2, 3, 14)
    out = transform.DynamicToStatic()(mod)
    assert _dyn_ops(out) == []
    assert str(out["main"].checked_type.ret_type) == "tensor<2x3x14xf32>"


def test_runtime_shapes_stay_dynamic_and_still_mean_the_same():
    x = relay.var("x", shape=(2, 3))
    s = relay.var("s", shape=(2,), dtype="int64")
    mod = _mod(lambda x, s: relay.reshape(relay.reshape(x, s), relay.shape_of(x, "int64")), x, s)
    out = transform.DynamicToStatic()(mod)
    # the inner reshape stays dynamic; the outer one is static (shape_of x folds)
    assert _dyn_ops(out) == ["dyn.reshape"]
    assert str(out["main"].checked_type.ret_type) == "tensor<2x3xf32>"
    check_semantics(DynamicToStaticPass(), mod, params={"s": np.array([3, 2])})


def test_invalid_constant_is_an_error_naming_the_op():
    x = relay.var("x", shape=(2, 3))
    mod = _mod(lambda x: relay.reshape(x, relay.const(np.array([4, 4])) + relay.const(np.array([0, 0]))), x)
    with pytest.raises(DynamicToStaticError, match=r"dyn.reshape: .*cannot reshape \[2, 3\] \(6 elements\) to \[4, 4\]"):
        transform.DynamicToStatic()(mod)


def test_build_makes_dyn_ops_static_with_bound_params():
    x = relay.var("x", shape=(2, 3))
    s = relay.var("s", shape=(2,), dtype="int64")
    mod = _mod(lambda x, s: relay.nn.relu(relay.reshape(x, s)), x, s)
    m = xrelay.build(mod, {"s": np.array([3, 2])})
    data = np.arange(-3, 3, dtype="float32").reshape(2, 3)
    m.set_input("x", data)
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), np.maximum(data, 0).reshape(3, 2))


def test_build_refuses_a_shape_known_only_at_run_time():
    x = relay.var("x", shape=(2, 3))
    s = relay.var("s", shape=(2,), dtype="int64")
    mod = _mod(lambda x, s: relay.reshape(x, s + relay.const(np.array([0, 0]), "int64")), x, s)
    with pytest.raises(BuildError, match=r"dyn.reshape .*'newshape' \(.*\) known only at run time"):
        xrelay.build(mod)
