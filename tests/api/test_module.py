"""IRModule: lowering expressions to the relay dialect, rebuilding them, text round trips."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, i64
from xdsl.dialects.func import CallOp, FuncOp

import xrelay
from xrelay import relay
from xrelay.dialects.relay import ConstantOp, RelayTypeError, tensor_type


def _funcs(mod: relay.IRModule) -> dict[str, FuncOp]:
    return {op.sym_name.data: op for op in mod.module.ops if isinstance(op, FuncOp)}


def _primitive(expr):
    return relay.Function(relay.analysis.free_vars(expr), expr).with_attr("Primitive", 1)


def _pool_fn(shape):
    x = relay.var("x", shape=shape, dtype="int8")
    return _primitive(relay.nn.max_pool2d(x, pool_size=(2, 2), layout="NHWC"))


def test_seed_000_chain_of_primitive_functions():
    ifm = relay.var("input", shape=(1, 8, 8, 2), dtype="int8")
    x = relay.Call(_pool_fn((1, 8, 8, 2)), [ifm])
    y = relay.Call(_pool_fn((1, 7, 7, 2)), [x])
    z = relay.Call(_pool_fn((1, 6, 6, 2)), [y])
    mod = xrelay.IRModule.from_expr(z)
    funcs = _funcs(mod)
    assert list(funcs) == ["fused_nn_max_pool2d", "fused_nn_max_pool2d_1", "fused_nn_max_pool2d_2", "main"]
    for name in list(funcs)[:3]:
        assert funcs[name].sym_visibility.data == "private"
        assert funcs[name].attributes["relay.primitive"] == IntegerAttr(1, i64)
    text = mod.mlir_text()
    assert "func.call @fused_nn_max_pool2d_1(%0)" in text
    assert 'relay.nn.max_pool2d %x {pool_size = [2, 2], layout = "NHWC"}' in text
    # rebuilt main: calls of function literals carrying their attrs
    main = mod["main"]
    assert [p.name_hint for p in main.params] == ["input"]
    assert isinstance(main.body.op, relay.Function)
    assert "Primitive" in main.body.op.attrs
    assert main.checked_type.ret_type == tensor_type((1, 5, 5, 2), "int8")


def test_function_attributes_map_to_discardable_attrs_and_back():
    ifm = relay.var("input", shape=(1, 2, 2, 4), dtype="int8")
    mod = xrelay.IRModule.from_expr(relay.Call(_pool_fn((1, 2, 2, 4)), [ifm]))
    funcs = _funcs(mod)
    # what an annotating pass writes
    funcs["fused_nn_max_pool2d"].attributes["relay.used_memory"] = ArrayAttr([IntegerAttr(32, i64)])
    funcs["main"].attributes["relay.io_used_memory"] = IntegerAttr(32, i64)
    main = mod["main"]
    assert main.attrs["io_used_memory"] == 32
    inner = main.body.op
    assert [int(v) for v in inner.attrs["used_memory"]] == [32]
    # and back again, keeping the private function's name
    mod["main"] = main
    funcs = _funcs(mod)
    assert list(funcs) == ["fused_nn_max_pool2d", "main"]
    assert funcs["fused_nn_max_pool2d"].attributes["relay.used_memory"] == ArrayAttr([IntegerAttr(32, i64)])
    assert "relay.io_used_memory = 32 : i64" in mod.mlir_text()


def test_function_called_twice_is_outlined_once():
    p = relay.var("p", shape=(4,))
    f = _primitive(relay.exp(p))
    a = relay.var("a", shape=(4,))
    out = relay.add(f(a), f(relay.nn.relu(a)))
    mod = xrelay.IRModule.from_expr(out)
    funcs = _funcs(mod)
    assert list(funcs) == ["fused_exp", "main"]
    calls = [op for op in funcs["main"].walk() if isinstance(op, CallOp)]
    assert [c.callee.root_reference.data for c in calls] == ["fused_exp", "fused_exp"]


def test_two_equal_literals_are_two_functions():
    a = relay.var("a", shape=(4,))
    out = relay.add(_primitive(relay.exp(relay.var("p", shape=(4,))))(a), _primitive(relay.exp(relay.var("q", shape=(4,))))(a))
    assert list(_funcs(xrelay.IRModule.from_expr(out))) == ["fused_exp", "fused_exp_1", "main"]


def test_captured_values_become_extra_parameters():
    a = relay.var("a", shape=(4,))
    b = relay.var("b", shape=(4,))
    p = relay.var("p", shape=(4,))
    inner = relay.Function([p], relay.multiply(p, b))  # captures b
    mod = xrelay.IRModule.from_expr(relay.Function([a, b], relay.Call(inner, [a])))
    funcs = _funcs(mod)
    fn = funcs["fn_multiply"]
    assert [arg.name_hint for arg in fn.body.block.args] == ["p", "b"]
    (call,) = [op for op in funcs["main"].walk() if isinstance(op, CallOp)]
    main_args = funcs["main"].body.block.args
    assert list(call.arguments) == [main_args[0], main_args[1]]
    # the rebuilt literal has the captured value as a parameter of its own
    rebuilt = mod["main"].body.op
    assert [v.name_hint for v in rebuilt.params] == ["p", "b"]


def test_shared_subexpressions_emitted_once_in_topological_order():
    x = relay.var("x", shape=(2, 2))
    s = relay.exp(x)
    out = relay.add(relay.log(s), relay.sqrt(s))
    mod = xrelay.IRModule.from_expr(out)
    names = [op.name for op in _funcs(mod)["main"].body.block.ops]
    assert names == ["relay.exp", "relay.log", "relay.sqrt", "relay.add", "func.return"]


def test_tuple_results_and_tuple_get_item():
    x = relay.var("x", shape=(1, 4, 2, 2))
    ps = [relay.var(n, shape=(4,)) for n in ("g", "b", "m", "v")]
    bn = relay.nn.batch_norm(x, *ps)
    mod = xrelay.IRModule.from_expr(relay.Tuple([bn[0], bn[2]]))
    main = _funcs(mod)["main"]
    bn_op = next(op for op in main.body.block.ops if op.name == "relay.nn.batch_norm")
    ret = main.body.block.last_op
    assert list(ret.operands) == [bn_op.results[0], bn_op.results[2]]
    assert len(main.function_type.outputs) == 2
    rebuilt = mod["main"]
    assert isinstance(rebuilt.body, relay.Tuple)
    assert [f.index for f in rebuilt.body.fields] == [0, 2]


def test_split_feeds_concatenate_as_variadic_operands():
    x = relay.var("x", shape=(2, 6))
    parts = relay.split(x, 3, axis=1)
    out = relay.concatenate(parts, axis=1)
    text = xrelay.IRModule.from_expr(out).mlir_text()
    assert "%0, %1, %2 = relay.split %x {indices_or_sections = 3, axis = 1}" in text
    assert "relay.concatenate %0, %1, %2 {axis = 1}" in text


def test_global_vars_calls_and_sorted_listing():
    mod = xrelay.IRModule()
    x = relay.var("x", shape=(1, 10))
    mod["fn1"] = relay.Function([x], x)
    y = relay.var("y", shape=(1, 10))
    mod["fn2"] = relay.Function([y], y)
    z = relay.var("z", shape=(1, 10))
    mod["main"] = relay.Function([z], relay.add(z, relay.GlobalVar("fn1")(z)))
    assert [g.name_hint for g in mod.get_global_vars()] == ["fn1", "fn2", "main"]
    assert "func.call @fn1(%z)" in mod.mlir_text()
    main = mod["main"]
    gv_call = main.body.args[1]
    assert isinstance(gv_call.op, relay.GlobalVar) and gv_call.op.name_hint == "fn1"
    assert set(g.name_hint for g in mod.functions) == {"fn1", "fn2", "main"}
    g = mod.get_global_var("fn2")
    assert g.checked_type.ret_type == tensor_type((1, 10), "float32")
    with pytest.raises(RelayTypeError, match="@nope is not defined"):
        mod["other"] = relay.Function([z], relay.GlobalVar("nope")(z))
    with pytest.raises(KeyError, match="no function @missing"):
        mod["missing"]


def test_global_var_keys_get_typed():
    mod = xrelay.IRModule()
    g1 = relay.GlobalVar("g1")
    x1 = relay.var("x1", shape=(1, 10))
    mod[g1] = relay.Function([x1], x1).with_attr("Inline", 1)
    p0 = relay.var("p0", shape=(1, 10))
    body = relay.add(g1(p0), p0)
    assert body.checked_type == tensor_type((1, 10), "float32")  # typed eagerly via g1
    mod["main"] = relay.Function([p0], body)
    assert "relay.inline = 1 : i64" in mod.mlir_text()


def test_lowering_errors_are_clear():
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    with pytest.raises(RelayTypeError, match="free variable %y"):
        xrelay.IRModule.from_expr(relay.Function([x], relay.add(x, y)))
    f = relay.Function([x], x)
    # a function literal in a tuple is a value: a closure (docs/design.md, decision 9)
    mod = xrelay.IRModule.from_expr(relay.Function([y], relay.Tuple([y, f])))
    assert "adt.closure" in mod.mlir_text()
    with pytest.raises(RelayTypeError, match="is used as a value, not called"):
        xrelay.IRModule.from_expr(relay.Function([y], relay.Tuple([y, relay.op.get("exp")])))
    with pytest.raises(TypeError, match="only functions"):
        xrelay.IRModule()["main"] = relay.add(x, x)


def test_replacing_main_drops_unused_private_functions():
    a = relay.var("a", shape=(4,))
    mod = xrelay.IRModule.from_expr(_primitive(relay.exp(relay.var("p", shape=(4,))))(a))
    assert "fused_exp" in _funcs(mod)
    b = relay.var("b", shape=(4,))
    mod["main"] = relay.Function([b], relay.log(b))
    assert list(_funcs(mod)) == ["main"]


def test_text_round_trip_and_clone():
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    y = relay.nn.conv2d(x, w, padding=(1, 1)) + relay.const(np.arange(4, dtype="float32").reshape(4, 1, 1))
    mod = xrelay.IRModule.from_expr(y)
    text = mod.mlir_text()
    again = xrelay.IRModule.from_text(text)
    assert again.mlir_text() == text
    clone = mod.clone()
    clone["main"] = relay.Function([x], relay.nn.relu(x))
    assert mod.mlir_text() == text
    assert clone.module is not mod.module


def test_str_of_expressions_prints_relay_text():
    # str(expr) is Relay's PrettyPrint: no version line, untyped until InferType
    x = relay.var("x", shape=(2,))
    f = relay.Function([x], relay.exp(x))
    assert str(f) == "fn (%x: Tensor[(2), float32]) {\n  exp(%x)\n}"
    assert str(relay.exp(x)) == "free_var %x: Tensor[(2), float32];\nexp(%x)"
    assert relay.exp(x).astext() == '#[version = "0.0.5"]\nfree_var %x: Tensor[(2), float32];\nexp(%x)'
    mod = relay.transform.InferType()(xrelay.IRModule.from_expr(f))
    t = "Tensor[(2), float32]"
    assert str(mod["main"]) == f"fn (%x: {t} /* ty={t} */) -> {t} {{\n  exp(%x) /* ty={t} */\n}} /* ty=fn ({t}) -> {t} */"
    assert str(mod) == f"def @main(%x: {t} /* ty={t} */) -> {t} {{\n  exp(%x) /* ty={t} */\n}}\n"


def test_bind_params_by_name_makes_named_constants():
    x = relay.var("x", shape=(1, 3))
    w = relay.var("w", shape=(2, 3))
    b = relay.var("b", shape=(2,))
    f = relay.Function([x, w, b], relay.nn.bias_add(relay.nn.dense(x, w), b))
    wv = np.arange(6, dtype=np.float64).reshape(2, 3)
    bound = relay.build_module.bind_params_by_name(f, {"w": wv, "unused": np.zeros(1)})
    assert [p.name_hint for p in bound.params] == ["x", "b"]
    consts = [n for n in relay.analysis.post_order(bound) if isinstance(n, relay.Constant)]
    assert [c.name for c in consts] == ["w"]
    assert consts[0].data.dtype == np.float32 and np.array_equal(consts[0].data, wv)
    mod = xrelay.IRModule.from_expr(bound)
    (cop,) = [op for op in mod.module.walk() if isinstance(op, ConstantOp)]
    assert cop.param_name.data == "w"
    assert relay.bind_params_by_name is not None
    with pytest.raises(RelayTypeError, match="shape"):
        relay.bind_params_by_name(f, {"b": np.zeros(3)})


def test_elided_printing_and_save_load(tmp_path):
    x = relay.var("x", shape=(1, 64))
    w = relay.var("w", shape=(32, 64))
    f = relay.bind_params_by_name(relay.Function([x, w], relay.nn.dense(x, w)), {"w": np.ones((32, 64), "float32")})
    mod = xrelay.IRModule.from_expr(f)
    assert "dense_resource<__elided__>" in mod.mlir_text(elide_large_constants=100)
    assert "dense_resource" not in mod.mlir_text()
    stored = mod.save(tmp_path / "m.mlir", tmp_path / "m.npz")
    assert list(stored) == ["w"]
    assert "relay.constant @w : tensor<32x64xf32>" in (tmp_path / "m.mlir").read_text()
    loaded = xrelay.IRModule.load(tmp_path / "m.mlir", tmp_path / "m.npz")
    assert loaded.mlir_text() == mod.mlir_text()


def test_from_module_op_wraps_without_copy():
    m = ModuleOp([])
    assert relay.IRModule.from_module_op(m).module is m
