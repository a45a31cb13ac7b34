"""TVM v0.19's ``tests/python/relay/test_backend_interpreter.py``: ``relay.create_executor``
and ``Executor.evaluate``, run with every executor kind (``debug``/``vm``: the reference
interpreter; ``graph``/``aot``: ``xrelay.build`` and the arena runtime) where the program is
static and has no If.

Changes: imports; ``tvm.testing.assert_allclose`` is numpy's; ``check_eval`` runs each kind
it can. Not ported: ``test_tuple_value`` and ``test_function_taking_adt_ref_tuple`` (TVM's
runtime containers, ADTs and references), ``test_ref`` (references), ``test_tuple_passing``
(a tuple-typed parameter: xrelay's functions take tensors) and ``test_functional_returns``
(skipped in TVM itself).
"""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.relay.scope_builder import ScopeBuilder

STATIC = ("debug", "vm", "graph", "aot")
INTERPRETED = ("debug", "vm")


def check_eval(expr, args, expected_result, mod=None, rtol=1e-07, kinds=STATIC):
    for kind in kinds:
        func = relay.create_executor(kind, mod=mod, device=xrelay.cpu(0), target="llvm").evaluate(
            expr
        )
        result = func if args is None else func(*args)
        np.testing.assert_allclose(result.numpy(), expected_result, rtol=rtol)


def test_tuple_getitem():
    func = relay.Function([], relay.TupleGetItem(relay.Tuple([relay.const(1), relay.const(2)]), 0))
    check_eval(func, [], 1)


def test_id():
    x = relay.var("x", "float32")
    ident = relay.Function([x], x)
    one = np.array(1.0, "float32")
    check_eval(ident, [one], one)


def test_add_const():
    two = relay.add(relay.const(1), relay.const(1))
    func = relay.Function([], two)
    check_eval(func, [], 2)


def test_mul_param():
    x = relay.var("x", shape=(10, 10))
    y = relay.var("y", shape=(1, 10))
    func = relay.Function([x, y], relay.multiply(x, y))
    x_data = np.random.rand(10, 10).astype("float32")
    y_data = np.random.rand(1, 10).astype("float32")
    check_eval(func, [x_data, y_data], x_data * y_data)


def test_equal():
    i = relay.var("i", shape=[], dtype="int32")
    j = relay.var("i", shape=[], dtype="int32")
    z = relay.equal(i, j)
    func = relay.Function([i, j], z, ret_type=relay.TensorType([], "bool"))
    i_data = relay.const(0, "int32")
    j_data = relay.const(0, "int32")
    check_eval(func, [i_data, j_data], True)


def test_subtract():
    i = relay.var("i", shape=[], dtype="int32")
    sub = relay.subtract(i, relay.const(1, dtype="int32"))
    func = relay.Function([i], sub, ret_type=relay.TensorType([], "int32"))
    i_data = np.array(1, dtype="int32")
    check_eval(func, [i_data], 0)


def test_simple_loop():
    mod = xrelay.IRModule({})
    sum_up = relay.GlobalVar("sum_up")
    i = relay.var("i", shape=[], dtype="int32")
    sb = ScopeBuilder()
    with sb.if_scope(relay.equal(i, relay.const(0, dtype="int32"))):
        sb.ret(i)
    with sb.else_scope():
        one_less = relay.subtract(i, relay.const(1, dtype="int32"))
        rec_call = relay.Call(sum_up, [one_less])
        sb.ret(relay.add(rec_call, i))
    func = relay.Function([i], sb.get(), ret_type=relay.TensorType([], "int32"))
    mod[sum_up] = func
    i_data = np.array(10, dtype="int32")
    check_eval(sum_up, [i_data], sum(range(1, 11)), mod=mod, kinds=INTERPRETED)


def test_loop():
    mod = xrelay.IRModule({})
    sum_up = relay.GlobalVar("sum_up")
    i = relay.var("i", shape=[], dtype="int32")
    accum = relay.var("accum", shape=[], dtype="int32")
    sb = ScopeBuilder()
    with sb.if_scope(relay.equal(i, relay.const(0, "int32"))):
        sb.ret(accum)
    with sb.else_scope():
        one_less = relay.subtract(i, relay.const(1, "int32"))
        new_accum = relay.add(accum, i)
        sb.ret(relay.Call(sum_up, [one_less, new_accum]))
    func = relay.Function([i, accum], sb.get())
    mod[sum_up] = func
    i_data = np.array(10, dtype="int32")
    accum_data = np.array(0, dtype="int32")
    check_eval(sum_up, [i_data, accum_data], sum(range(1, 11)), mod=mod, kinds=INTERPRETED)


def test_binds():
    x = relay.var("x")
    y = relay.add(x, x)
    xx = np.ones((10, 20))
    res = relay.create_executor().evaluate(y, binds={x: xx}).numpy()
    np.testing.assert_allclose(xx + xx, res)


def test_kwargs_params():
    x = relay.var("x", shape=(1, 10))
    y = relay.var("y", shape=(1, 10))
    z = relay.var("z", shape=(1, 10))
    f = relay.Function([x, y, z], x + y + z)
    x_data = np.random.rand(1, 10).astype("float32")
    y_data = np.random.rand(1, 10).astype("float32")
    z_data = np.random.rand(1, 10).astype("float32")
    params = {"y": y_data, "z": z_data}
    res = relay.create_executor().evaluate(f)(x_data, **params)
    np.testing.assert_allclose(res.numpy(), x_data + y_data + z_data)


def test_dynamic():
    n = 3
    m = 2
    x = relay.Var("x", relay.TensorType([relay.Any(), m], "float32"))
    y = relay.Var("y", relay.TensorType([relay.Any(), m], "float32"))
    xx = x - relay.expr.const(3.0)
    yy = y * relay.expr.const(5.0)
    z = relay.op.concatenate([xx, yy], axis=0)
    mod = xrelay.IRModule()
    mod["main"] = relay.Function([x, y], z)
    x_np = np.random.uniform(size=(n, m)).astype("float32")
    y_np = np.random.uniform(size=(n, m)).astype("float32")
    expected = np.concatenate([x_np - 3.0, y_np * 5.0], axis=0)
    check_eval(None, [x_np, y_np], expected, mod, kinds=INTERPRETED)


def test_ref_global_from_expr():
    n = 3
    x = relay.Var("x", relay.TensorType([n], "float32"))
    y = relay.Var("y", relay.TensorType([n], "float32"))
    mod = xrelay.IRModule()
    mod["add"] = relay.Function([x, y], relay.add(x, y))
    x_np = np.random.uniform(size=(n,)).astype("float32")
    y_np = np.random.uniform(size=(n,)).astype("float32")
    expected = np.add(x_np, y_np)
    expr = relay.Call(mod.get_global_var("add"), [relay.const(x_np), relay.const(y_np)])
    check_eval(expr, None, expected, mod, kinds=INTERPRETED)


def test_keyword_args():
    n = 3
    x = relay.Var("x", relay.TensorType([n], "float32"))
    y = relay.Var("y", relay.TensorType([n], "float32"))
    z = relay.add(x, y)
    mod = xrelay.IRModule()
    mod["main"] = relay.Function([x, y], z)
    x_np = np.random.uniform(size=(n,)).astype("float32")
    y_np = np.random.uniform(size=(n,)).astype("float32")
    expected = np.add(x_np, y_np)
    actual = relay.create_executor(mod=mod).evaluate()(y=y_np, x=x_np)
    np.testing.assert_allclose(actual.numpy(), expected)


# Beyond TVM's file: what the executors promise besides the happy path.


@pytest.mark.parametrize("kind", STATIC)
def test_tuple_result_params_and_errors(kind):
    x, w = relay.var("x", shape=(2, 3)), relay.var("w", shape=(2, 3))
    mod = xrelay.IRModule.from_expr(relay.Function([x, w], relay.Tuple([x * w, relay.nn.relu(x)])))
    data, weight = np.random.default_rng(0).standard_normal((2, 2, 3)).astype("float32")
    run = relay.create_executor(kind, mod=mod, params={"w": weight}).evaluate()
    product, relu = run(data)
    np.testing.assert_allclose(product.numpy(), data * weight, rtol=1e-6)
    np.testing.assert_array_equal(relu.numpy(), np.maximum(data, 0))
    with pytest.raises(ValueError, match="insufficient arguments: no value for parameter x"):
        run()
    with pytest.raises(ValueError, match="duplicate argument"):
        run(data, x=data)


def test_unknown_kind_and_free_variables():
    with pytest.raises(RuntimeError, match="unknown execution strategy: interp"):
        relay.create_executor("interp")
    x = relay.var("x", shape=(2,))
    with pytest.raises(ValueError, match="free variables %x"):
        relay.create_executor().evaluate(relay.nn.relu(x))


def test_graph_kind_runs_a_global_and_refuses_an_if():
    x, y = relay.var("x", shape=(3,)), relay.var("y", shape=(3,))
    mod = xrelay.IRModule()
    mod["add"] = relay.Function([x, y], relay.add(x, y))
    f = relay.create_executor("graph", mod=mod).evaluate(mod.get_global_var("add"))
    np.testing.assert_array_equal(f(np.ones(3, "float32"), np.full(3, 2, "float32")).numpy(), [3, 3, 3])
    i = relay.var("i", shape=[], dtype="int32")
    cond = relay.If(relay.equal(i, relay.const(0, "int32")), i, relay.negative(i))
    mod = xrelay.IRModule.from_expr(relay.Function([i], cond))
    assert relay.create_executor("debug", mod=mod).evaluate()(np.int32(4)).numpy() == -4
    with pytest.raises(xrelay.TVMError, match="holds an If"):
        relay.create_executor("graph", mod=mod).evaluate()
