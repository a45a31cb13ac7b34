"""Variables without a type get one from their uses, as Relay's type relations give it."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.relay.parser import parse

T = relay.TensorType


def _params(mod):
    return {a.name_hint: a.type for a in mod.module.ops.last.body.block.args}


def test_conv2d_dense_bias_and_batch_norm_weights():
    x = relay.var("x", shape=(1, 3, 8, 8))
    w, b, g, d = relay.var("w"), relay.var("b"), relay.var("g", relay.IncompleteType()), relay.var("d")
    y = relay.nn.bias_add(relay.nn.conv2d(x, w, channels=4, kernel_size=(3, 3), padding=(1, 1)), b)
    y = relay.nn.batch_norm(y, g, g, g, g)[0]
    z = relay.nn.dense(relay.nn.batch_flatten(y), d, units=10)
    mod = xrelay.IRModule.from_expr(relay.Function([x, w, b, g, d], z))
    assert _params(mod) == {
        "x": T((1, 3, 8, 8)), "w": T((4, 3, 3, 3)), "b": T((4,)), "g": T((4,)), "d": T((10, 256)),
    }  # fmt: skip
    assert w.checked_type == T((4, 3, 3, 3)) and z.checked_type == T((1, 10))


def test_grouped_nhwc_conv_weight_follows_kernel_layout():
    x = relay.var("x", shape=(1, 8, 8, 6), dtype="float16")
    w = relay.var("w")
    y = relay.nn.conv2d(x, w, channels=4, kernel_size=(3, 1), groups=2, data_layout="NHWC", kernel_layout="HWIO")
    xrelay.IRModule.from_expr(relay.Function([x, w], y))
    assert w.checked_type == T((3, 1, 3, 4), "float16")


def test_identity_relations_take_the_annotated_return_type():
    r = relay.var("r")
    f = relay.Function([r], relay.exp(relay.nn.relu(r)), ret_type=T((2, 2), "float64"))
    mod = xrelay.IRModule.from_expr(f)
    assert _params(mod) == {"r": T((2, 2), "float64")}


def test_function_literal_and_let_get_argument_types():
    x = relay.var("x", shape=(3,))
    p, t = relay.var("p"), relay.var("t")
    inner = relay.Function([p], relay.sigmoid(p))
    mod = xrelay.IRModule.from_expr(relay.Function([x], relay.Let(t, relay.Call(inner, [x]), relay.add(t, t))))
    assert p.checked_type == T((3,)) and t.checked_type == T((3,))
    (out,) = xrelay.run(mod, {"x": np.zeros(3, "float32")})
    assert np.allclose(out, 1.0)


def test_broadcast_does_not_invert_so_the_variable_is_named():
    p, q = relay.var("p"), relay.var("q", shape=(2,))
    with pytest.raises(relay.RelayTypeError, match="cannot infer the type of %p from its uses"):
        xrelay.IRModule.from_expr(relay.Function([p, q], relay.add(p, q)))


def test_untyped_text_parameters():
    mod = parse(
        '#[version = "0.0.5"]\n'
        "def @main(%x: Tensor[(1, 4), float32], %w, %b) {\n"
        "  nn.bias_add(nn.dense(%x, %w, units=2), %b)\n"
        "}\n"
    )
    assert _params(mod) == {"x": T((1, 4)), "w": T((2, 4)), "b": T((2,))}
    with pytest.raises(Exception, match=r"1:5: in @main: cannot infer the type of %y"):
        parse("def @main(%y) { %y }")


def test_conv1d_conv3d_weights_and_group_norm_vectors():
    x1 = relay.var("x1", shape=(1, 4, 9))
    w1 = relay.var("w1")
    relay_fn = relay.Function([x1, w1], relay.nn.conv1d(x1, w1, channels=6, kernel_size=3, groups=2))
    xrelay.IRModule.from_expr(relay_fn)
    assert w1.checked_type == T((6, 2, 3))
    x3 = relay.var("x3", shape=(1, 2, 4, 5, 6))
    w3 = relay.var("w3")
    xrelay.IRModule.from_expr(relay.Function([x3, w3], relay.nn.conv3d(x3, w3, channels=3, kernel_size=(1, 2, 3))))
    assert w3.checked_type == T((3, 2, 1, 2, 3))
    g, b = relay.var("g"), relay.var("b")
    xrelay.IRModule.from_expr(relay.Function([x3, g, b], relay.nn.group_norm(x3, g, b, num_groups=1)))
    assert g.checked_type == T((2,)) and b.checked_type == T((2,))


def test_long_let_chains_and_many_unsolved_variables():
    n = 3000
    body = "".join(f"let %v{i} = add(%v{i - 1}, 1f);\n" if i else "let %v0 = add(%x, 1f);\n" for i in range(n))
    mod = parse(f"def @main(%x: float32) {{\n{body}%v{n - 1}\n}}")
    assert mod.mlir_text().count("relay.add") == n
    params = ", ".join(f"%p{i}" for i in range(50))
    with pytest.raises(Exception, match=r"cannot infer the type of %p0, %p1, .*, %p7 and 42 more variables from its uses"):
        parse(f"def @main({params}) {{ %p0 }}")
