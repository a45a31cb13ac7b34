"""``relay.Let`` and ``relay.ScopeBuilder``: a let binding is an SSA value with the variable's
name; the text prints it as ``let``; Relay's ScopeBuilder errors."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay import relay


def test_let_becomes_a_named_ssa_value_and_prints_as_let():
    x = relay.var("x", shape=(3,))
    t = relay.var("t")
    body = relay.Let(t, relay.add(x, relay.const(1.0)), relay.multiply(t, t))
    assert t.checked_type == relay.TensorType((3,), "float32")
    mod = xrelay.IRModule.from_expr(relay.Function([x], body))
    ops = list(mod.module.ops.first.body.block.ops)
    assert [op.name for op in ops] == ["relay.constant", "relay.add", "relay.multiply", "func.return"]
    assert ops[1].results[0].name_hint == "t"
    assert "let %t = add(%x, 1f);\n  multiply(%t, %t)" in mod.astext()  # untyped until InferType
    typed = relay.transform.InferType()(mod).astext()
    assert "let %t = add(%x, 1f /* ty=float32 */) /* ty=Tensor[(3), float32] */;\n  multiply(%t, %t)" in typed
    (out,) = xrelay.run(mod, {"x": np.array([0, 1, 2], "float32")})
    assert np.array_equal(out, [1, 4, 9])


def test_let_type_annotation_is_checked():
    x = relay.var("x", shape=(3,))
    with pytest.raises(relay.RelayTypeError, match="annotated"):
        relay.Let(relay.var("t", shape=(4,)), x, x)


def test_let_bound_function_is_called():
    x = relay.var("x", shape=(2,))
    p = relay.var("p", shape=(2,))
    f = relay.var("f")
    body = relay.Let(f, relay.Function([p], relay.nn.relu(p)), relay.Call(f, [x]))
    mod = xrelay.IRModule.from_expr(relay.Function([x], body))
    (out,) = xrelay.run(mod, {"x": np.array([-1, 2], "float32")})
    assert np.array_equal(out, [0, 2])


def test_scope_builder_lets_and_ret():
    x = relay.var("x", shape=(2,))
    sb = relay.ScopeBuilder()
    a = sb.let("a", relay.add(x, x))
    b = sb.let(("b", relay.TensorType((2,), "float32")), relay.multiply(a, a))
    sb.ret(relay.subtract(b, a))
    e = sb.get()
    assert isinstance(e, relay.Let) and e.var is a and isinstance(e.body, relay.Let) and e.body.var is b
    (out,) = xrelay.run(xrelay.IRModule.from_expr(relay.Function([x], e)), {"x": np.array([1, 2], "float32")})
    assert np.array_equal(out, [2, 12])


def test_scope_builder_if_else_builds_if():
    c = relay.var("c", "bool")
    x = relay.var("x", shape=(2,))
    sb = relay.ScopeBuilder()
    with sb.if_scope(c):
        sb.ret(relay.add(x, x))
    with sb.else_scope():
        sb.ret(x)
    e = sb.get()
    assert isinstance(e, relay.If) and e.cond is c and e.false_branch is x
    assert e.checked_type == relay.TensorType((2,), "float32")


def test_scope_builder_errors_are_relays():
    sb = relay.ScopeBuilder()
    with pytest.raises(RuntimeError, match="ret is not called in this scope"):
        sb.get()
    sb.ret(relay.const(1.0))
    with pytest.raises(RuntimeError, match="ret value is already set in this scope"):
        sb.ret(relay.const(2.0))
    with pytest.raises(RuntimeError, match="else scope must follows"):
        relay.ScopeBuilder().else_scope()
    sb = relay.ScopeBuilder()
    with sb.if_scope(relay.const(True)):
        sb.ret(relay.const(1.0))
    with pytest.raises(RuntimeError, match="Creating an If expression without else"):
        sb.get()


def test_if_branches_must_agree_and_scope_builder_if_runs():
    c = relay.var("c", "bool")
    x = relay.var("x", shape=(2,))
    with pytest.raises(relay.RelayTypeError, match="different types"):
        relay.If(c, x, relay.const(1.0))
    sb = relay.ScopeBuilder()
    t = sb.let("t", relay.add(x, x))
    with sb.if_scope(c):
        sb.ret(relay.multiply(t, t))
    with sb.else_scope():
        sb.ret(t)
    mod = xrelay.IRModule.from_expr(relay.Function([c, x], sb.get()))
    assert "let %t = add(%x, %x)" in mod.astext() and "if (%c) {" in mod.astext()
    xv = np.array([1, 2], "float32")
    assert np.array_equal(xrelay.run(mod, {"c": np.array(True), "x": xv})[0], [4, 16])
    assert np.array_equal(xrelay.run(mod, {"c": np.array(False), "x": xv})[0], [2, 4])
