"""Python Relay expressions: eager types, errors, sugar, free variables and traversal."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.dialects.relay import RelayTypeError, shape_of, tensor_type


def test_package_root_exports_irmodule_and_relay():
    assert xrelay.IRModule is relay.IRModule
    assert xrelay.relay is relay
    assert relay.transform.InferType is not None  # lazy submodule


def test_conv2d_type_and_normalised_attrs():
    x = relay.var("x", shape=(1, 3, 224, 224))
    w = relay.var("w", shape=(64, 3, 7, 7))
    y = relay.nn.conv2d(x, w, strides=(2, 2), padding=(3, 3), channels=64, kernel_size=(7, 7))
    assert y.checked_type == tensor_type((1, 64, 112, 112), "float32")
    assert y.attrs["padding"] == (3, 3, 3, 3)
    assert y.attrs.strides == (2, 2)
    assert y.op.name == "nn.conv2d"


def test_batch_norm_tuple_wrapper():
    x = relay.var("x", shape=(1, 4, 8, 8))
    ps = [relay.var(n, shape=(4,)) for n in ("g", "b", "m", "v")]
    bn = relay.nn.batch_norm(x, *ps)
    assert len(bn) == 3
    out, mean, var = bn
    assert out.checked_type == tensor_type((1, 4, 8, 8), "float32")
    assert mean.checked_type == tensor_type((4,), "float32")
    assert isinstance(bn[2], relay.TupleGetItem) and bn[2].index == 2
    tup = bn.astuple()
    assert isinstance(tup.checked_type, relay.TupleType) and len(tup.checked_type.fields) == 3


def test_dropout_returns_first_result_and_raw_both():
    x = relay.var("x", shape=(2, 3))
    y = relay.nn.dropout(x, 0.2)
    assert isinstance(y, relay.TupleGetItem) and y.index == 0
    assert y.tuple_value.attrs["rate"] == pytest.approx(0.2)
    assert len(relay.nn.dropout_raw(x)) == 2


def test_split_concatenate_stack():
    x = relay.var("x", shape=(2, 6))
    parts = relay.split(x, 3, axis=1)
    assert len(parts) == 3
    assert parts[1].checked_type == tensor_type((2, 2), "float32")
    uneven = relay.split(x, [1, 4], axis=1)
    assert [shape_of(p.checked_type) for p in uneven] == [(2, 1), (2, 3), (2, 2)]
    cat = relay.concatenate([parts[0], parts[2]], axis=1)
    assert cat.checked_type == tensor_type((2, 4), "float32")
    st = relay.stack([x, x], axis=0)
    assert st.checked_type == tensor_type((2, 2, 6), "float32")


def test_batch_matmul_python_default_transposes_b():
    a = relay.var("a", shape=(2, 3, 4))
    b = relay.var("b", shape=(2, 5, 4))
    c = relay.nn.batch_matmul(a, b)
    assert c.attrs["transpose_b"] is True
    assert c.checked_type == tensor_type((2, 3, 5), "float32")


def test_misc_ops_types():
    x = relay.var("x", shape=(1, 8, 4, 4))
    assert relay.cast(x, "int8").checked_type == tensor_type((1, 8, 4, 4), "int8")
    assert relay.reshape(x, (1, -1)).checked_type == tensor_type((1, 128), "float32")
    assert relay.strided_slice(x, [0, 2], [1, 6]).checked_type == tensor_type((1, 4, 4, 4), "float32")
    lt = relay.layout_transform(x, "NCHW", "NHWC")
    assert lt.checked_type == tensor_type((1, 4, 4, 8), "float32")
    assert relay.shape_of(x).checked_type == tensor_type((4,), "int32")
    assert relay.take(x, relay.const([0, 2]), axis=1).checked_type == tensor_type((1, 2, 4, 4), "float32")
    assert relay.tile(x, (2, 1, 1, 1)).checked_type == tensor_type((2, 8, 4, 4), "float32")
    assert relay.broadcast_to(relay.var("s", shape=(1, 4)), (3, 4)).checked_type == tensor_type((3, 4), "float32")
    cond = relay.var("c", shape=(1, 8, 4, 4), dtype="bool")
    assert relay.where(cond, x, 0.0).checked_type == tensor_type((1, 8, 4, 4), "float32")
    assert relay.sum(x, axis=1, keepdims=True).checked_type == tensor_type((1, 1, 4, 4), "float32")
    assert relay.argmax(x, axis=[2, 3]).checked_type == tensor_type((1, 8), "int32")
    assert relay.annotation.stop_fusion(x).checked_type == x.checked_type
    assert str(relay.annotation.on_device(x, "cuda").attrs["virtual_device"]) == "#relay.virtual_device<cuda(0)>"
    assert relay.device_copy(x, "cpu", xrelay.cpu(1)).attrs["dst_virtual_device"].virtual_device_id == 1
    assert relay.nn.pad(x, ((0, 0), (0, 0), (1, 1), (2, 2))).checked_type == tensor_type((1, 8, 6, 8), "float32")
    assert relay.less(x, x).checked_type == tensor_type((1, 8, 4, 4), "bool")


def test_scalars_take_the_tensor_dtype():
    h = relay.var("h", shape=(2, 2), dtype="float16")
    y = h * 2.0
    assert y.args[1].checked_type == tensor_type((), "float16")
    assert y.checked_type == tensor_type((2, 2), "float16")
    i = relay.var("i", shape=(3,), dtype="int8")
    z = 1 - i
    assert z.op.name == "subtract"
    assert isinstance(z.args[0], relay.Constant) and z.args[0].dtype == "int8"
    assert (-i).op.name == "negative"
    assert (h / h).op.name == "divide" and (h + h).op.name == "add"


def test_const_default_dtypes():
    assert relay.const(1.5).dtype == "float32"
    assert relay.const(3).dtype == "int32"
    assert relay.const(True).dtype == "bool"
    assert relay.const(np.zeros((2, 2))).dtype == "float32"  # float64 narrows, as Relay
    assert relay.const(np.zeros(3, dtype=np.int8)).dtype == "int8"
    assert relay.const(1, "float16").checked_type == tensor_type((), "float16")


def test_dynamic_dims_and_scalar_vars():
    x = relay.var("x", shape=(relay.Any(), 4))
    assert shape_of(x.checked_type) == (None, 4)
    y = relay.nn.relu(x)
    assert "?x4xf32" in relay.IRModule.from_expr(y).mlir_text()
    n = relay.var("n", "int32")
    assert n.checked_type == tensor_type((), "int32")
    assert isinstance(n.checked_type, relay.TensorType)
    assert relay.TensorType((relay.Any(), 2), "int8") == tensor_type((None, 2), "int8")


@pytest.mark.parametrize(
    "build, words",
    [
        (lambda: relay.add(relay.var("a", shape=(2, 3)), relay.var("b", shape=(4,))), ["relay.add", "2x3", "4xf32"]),
        (
            lambda: relay.nn.conv2d(relay.var("x", shape=(1, 3, 8, 8)), relay.var("w", shape=(4, 5, 3, 3))),
            ["relay.nn.conv2d", "input channels"],
        ),
        (lambda: relay.nn.dense(relay.var("x", shape=(2, 3)), relay.var("w", shape=(4, 5))), ["relay.nn.dense"]),
        (lambda: relay.add(relay.var("a", shape=(2,)), relay.var("b", shape=(2,), dtype="int32")), ["relay.add", "dtype"]),
        (lambda: relay.op.get("nn.conv2d")(relay.var("x", shape=(1, 3, 8, 8)), relay.var("w", shape=(4, 3, 3, 3)), bogus=1), ["unknown attribute", "bogus"]),
        (lambda: relay.nn.relu(relay.nn.batch_norm(*[relay.var(n, shape=(1, 2) if n == "x" else (2,)) for n in "xgbmv"]).astuple()), ["tuple"]),
    ],
)
def test_ill_typed_expressions_raise_at_construction(build, words):
    with pytest.raises(RelayTypeError) as info:
        build()
    for w in words:
        assert w in str(info.value)


def test_tuple_get_item_out_of_range():
    t = relay.Tuple([relay.var("a", shape=(1,)), relay.var("b", shape=(2,))])
    assert relay.TupleGetItem(t, 1).checked_type == tensor_type((2,), "float32")
    with pytest.raises(RelayTypeError, match="out of range"):
        relay.TupleGetItem(t, 2)


def test_function_types_and_call_checks():
    x = relay.var("x", shape=(2, 2))
    f = relay.Function([x], relay.exp(x))
    assert f.checked_type == relay.FuncType([tensor_type((2, 2), "float32")], tensor_type((2, 2), "float32"))
    assert relay.Call(f, [relay.var("y", shape=(2, 2))]).checked_type == tensor_type((2, 2), "float32")
    with pytest.raises(RelayTypeError, match="argument 0"):
        relay.Call(f, [relay.var("z", shape=(3,))])
    with pytest.raises(RelayTypeError, match="expects 1 argument"):
        f(x, x)
    with pytest.raises(RelayTypeError, match="annotated"):
        relay.Function([x], x, ret_type=relay.TensorType((3,), "float32"))


def test_function_attrs_and_with_attr():
    x = relay.var("x", shape=(1,))
    f = relay.Function([x], x)
    g = f.with_attr("Primitive", 1).with_attr("Composite", "dnnl.relu")
    assert "Primitive" not in f.attrs
    assert g.attrs["Primitive"] == 1 and g.attrs["Composite"] == "dnnl.relu"
    assert g.params == f.params and g.body is f.body
    assert not hasattr(g, "name")  # seed 001 tells functions from ops by .name


def test_untyped_var_defers_then_fails_clearly():
    x = relay.var("x")
    y = relay.nn.relu(x)
    assert not y.type_known
    with pytest.raises(ValueError, match="not known"):
        y.checked_type  # noqa: B018
    with pytest.raises(RelayTypeError, match="cannot infer the type of %x from its uses"):
        relay.IRModule.from_expr(y)


def test_free_vars_order_of_first_appearance():
    a, b, c = (relay.var(n, shape=(2,)) for n in "abc")
    e = relay.add(relay.multiply(a, b), relay.add(c, a))
    assert relay.analysis.free_vars(e) == [a, b, c]
    e2 = relay.add(relay.add(c, a), relay.multiply(a, b))
    assert relay.analysis.free_vars(e2) == [c, a, b]
    f = relay.Function([b], e)
    assert relay.analysis.free_vars(f) == [a, c]


def test_free_vars_through_nested_function():
    a, b, p = (relay.var(n, shape=(2,)) for n in ("a", "b", "p"))
    inner = relay.Function([p], relay.add(p, b))  # captures b
    e = relay.Call(inner, [a])
    assert relay.analysis.free_vars(e) == [b, a]  # callee first, as Relay visits call.op first
    assert relay.analysis.bound_vars(e) == [p]


def test_post_order_visit_each_node_once():
    x = relay.var("x", shape=(2,))
    y = relay.add(x, x)
    z = relay.multiply(y, y)
    seen = []
    relay.analysis.post_order_visit(z, seen.append)
    # Relay visits call.op before the args, so the multiply op is the first leaf
    assert seen[0] is relay.op.get("multiply") and seen[-1] is z
    assert seen.index(x) < seen.index(y) < seen.index(z)
    calls = [n for n in seen if isinstance(n, relay.expr.Call)]
    assert [c.op.name for c in calls] == ["add", "multiply"]
    assert len(seen) == len({id(n) for n in seen})


def test_deep_chain_does_not_hit_recursion_limit():
    x = relay.var("x", shape=(2,))
    y = x
    for _ in range(3000):
        y = relay.nn.relu(y)
    assert relay.analysis.free_vars(y) == [x]
    mod = relay.IRModule.from_expr(y)
    assert len(list(mod["main"].body.args)) == 1


def test_expr_mutator_and_visitor():
    from xrelay.relay.expr_functor import ExprMutator, ExprVisitor

    x = relay.var("x", shape=(2,))
    e = relay.exp(relay.add(x, x))

    class ExpToLog(ExprMutator):
        def visit_call(self, call):
            new = super().visit_call(call)
            if new.op.name == "exp":
                return relay.log(new.args[0])
            return new

    out = ExpToLog().visit(e)
    assert out.op.name == "log" and out.args[0] is e.args[0]

    class Count(ExprVisitor):
        def __init__(self):
            super().__init__()
            self.n = 0

        def visit_call(self, call):
            self.n += 1
            super().visit_call(call)

    c = Count()
    c.visit(relay.Function([x], e))
    assert c.n == 2
