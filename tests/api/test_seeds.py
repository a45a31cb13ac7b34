"""The Relay Python of the seed documents, with only the imports changed.

Seed 000 (AnnotateUsedMemory tests), 001 (pass instrument tutorial) and 002 (Relay
transforms notes) build modules through the API; the passes they then run come from other
parts of xrelay, so only the construction and what it prints are checked here.
"""

from __future__ import annotations

import xrelay as tvm  # the seeds say tvm.IRModule
from xrelay import relay
from xrelay.relay.build_module import bind_params_by_name
from xrelay.relay.expr_functor import ExprVisitor
from xrelay.testing import resnet


def _create_primitive_function(expr):
    func = relay.Function(relay.analysis.free_vars(expr), expr)
    func = func.with_attr("Primitive", 1)
    return func


def test_seed_000_constructions():
    def get_inner_func():
        x = relay.var("x", shape=(1, 2, 2, 4), dtype="int8")
        x = relay.nn.max_pool2d(x)
        x = _create_primitive_function(x)
        return x

    ifm = relay.var("input", shape=(1, 2, 2, 4), dtype="int8")
    call = relay.Call(get_inner_func(), [ifm])
    mod = tvm.IRModule.from_expr(call)
    assert "relay.nn.max_pool2d %x {pool_size = [1, 1]}" in str(mod)

    def get_cast_func():
        x = relay.var("x", shape=(1, 2, 2, 2), dtype="int16")
        x = relay.cast(x, dtype="uint32")
        return _create_primitive_function(x)

    ifm = relay.var("input", shape=(1, 2, 2, 2), dtype="int16")
    mod = tvm.IRModule.from_expr(relay.Call(get_cast_func(), [ifm]))
    assert "-> tensor<1x2x2x2xui32>" in str(mod)

    def get_reshape_func():
        x = relay.var("x", shape=(1, 4, 5, 6), dtype="int8")
        x = relay.reshape(x, newshape=(1, 4, 30))
        return _create_primitive_function(x)

    ifm = relay.var("input", shape=(1, 4, 5, 6), dtype="int8")
    x = relay.Call(get_reshape_func(), [ifm])
    y = relay.Call(get_reshape_func(), [ifm])
    z = relay.concatenate([x, y], axis=0)
    mod = tvm.IRModule.from_expr(z)
    assert mod["main"].checked_type.ret_type == relay.TensorType((2, 4, 30), "int8")

    # the seed's checker walks functions with an ExprVisitor and reads attrs
    class PrimitiveCounter(ExprVisitor):
        def __init__(self):
            super().__init__()
            self.primitive = 0

        def visit_function(self, fn):
            if "Primitive" in fn.attrs:
                self.primitive += 1
            super().visit_function(fn)

    counter = PrimitiveCounter()
    counter.visit(mod["main"].body)
    assert counter.primitive == 2


def test_seed_001_resnet_and_call_node_counting():
    relay_mod, relay_params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 224, 224))
    text = str(relay_mod["main"])
    assert text.count("relay.nn.conv2d") == 21

    def count_nodes(mod):
        ret = {}

        def visit(node):
            if isinstance(node, relay.expr.Call):
                if hasattr(node.op, "name"):
                    op_name = node.op.name
                else:
                    return
                ret[op_name] = ret.get(op_name, 0) + 1

        relay.analysis.post_order_visit(mod["main"], visit)
        return ret

    counts = count_nodes(relay_mod)
    assert counts["nn.conv2d"] == 21 and counts["nn.batch_norm"] == 19 and counts["add"] == 8
    relay_mod = relay.transform.InferType()(relay_mod)
    relay_mod["main"] = bind_params_by_name(relay_mod["main"], relay_params)
    assert [p.name_hint for p in relay_mod["main"].params] == ["data"]
    assert count_nodes(relay_mod) == counts


def test_seed_002_constructions():
    mod = tvm.IRModule()
    x = relay.var("x", shape=(1, 1000))
    mod["fn1"] = relay.Function([x], x)
    y = relay.var("y", shape=(1, 1000))
    mod["fn2"] = relay.Function([y], y)
    z = relay.var("z", shape=(1, 1000))
    mod["main"] = relay.Function([z], relay.add(z, relay.GlobalVar("fn1")(z)))
    assert repr(mod.get_global_vars()) == "[GlobalVar(fn1), GlobalVar(fn2), GlobalVar(main)]"

    mod = tvm.IRModule()
    x = relay.var("x", shape=(1, 10))
    alpha, gamma, mean, var = (
        relay.var("x", shape=(10,)),
        relay.var("y", shape=(10,)),
        relay.var("a", shape=(10,)),
        relay.var("b", shape=(10,)),
    )
    bn, _, _ = relay.nn.batch_norm(x, alpha, gamma, mean, var)
    mod["main"] = relay.Function([x, alpha, gamma, mean, var], relay.nn.dropout(bn))
    text = str(mod)
    assert "relay.nn.batch_norm" in text and "relay.nn.dropout" in text

    x = relay.var("x", shape=(1, 10))
    y = relay.var("y", shape=(1, 10))
    add = relay.add(x, y)
    sqrt = relay.sqrt(add)
    _sqrt = relay.annotation.on_device(sqrt, "cuda")
    log = relay.log(add)
    subtract = relay.subtract(_sqrt, log)
    exp = relay.exp(subtract)
    _exp = relay.annotation.on_device(exp, "cuda")
    func = relay.Function([x, y], _exp)
    mod = tvm.IRModule.from_expr(func)
    assert str(mod).count('relay.on_device') == 2

    x = relay.var("x", shape=(1, 4, 16, 16))
    w1 = relay.var("w1", shape=(4, 4, 1, 1))
    w2 = relay.var("w2", shape=(4, 4, 1, 1))
    y = relay.Tuple((relay.nn.conv2d(x, w1), relay.nn.conv2d(x, w2), relay.nn.max_pool2d(x)))
    mod = tvm.IRModule.from_expr(relay.Function([x, w1, w2], y))
    assert len(mod["main"].checked_type.ret_type.fields) == 3


def test_relay_testing_import_paths():
    from xrelay.relay.testing import mlp as relay_mlp
    from xrelay.relay.testing import resnet as relay_resnet

    assert relay_resnet is resnet
    assert relay.testing.mlp is relay_mlp
    import xrelay.testing

    assert relay.testing.check_semantics is xrelay.testing.check_semantics  # lazy re-export
    import pytest

    with pytest.raises(AttributeError):
        relay.testing.no_such_helper  # noqa: B018
