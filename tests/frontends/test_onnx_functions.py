"""Operators the importer has no converter for but ONNX defines by a function (a body of other
operators) are imported as that body; checked against ONNX's reference (onnxruntime does not
run these opset 27 operators)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from xrelay.frontends import import_onnx
from xrelay.frontends.onnx import OnnxImportError
from xrelay.testing.onnx_backend import XrelayBackend

F = TensorProto.FLOAT


def _model(node, inputs, outputs, opset=27):
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(n, F, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, F, None) for n in outputs],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("activation", ["none", "silu"])
def test_causal_conv_with_state_is_its_function(rng, activation):
    node = helper.make_node("CausalConvWithState", ["x", "w", "", "past"], ["y", "state"], activation=activation)
    model = _model(node, [("x", [2, 3, 6]), ("w", [3, 1, 4]), ("past", [2, 3, 3])], ["y", "state"])
    feeds = {k: rng.standard_normal(s).astype(np.float32) for k, s in (("x", (2, 3, 6)), ("w", (3, 1, 4)), ("past", (2, 3, 3)))}
    want = ReferenceEvaluator(model).run(None, feeds)
    ops = [op.name for op in import_onnx(model).module.walk()]
    assert "relay.nn.conv1d" in ops or "relay.nn.conv2d" in ops or "relay.multiply" in ops
    assert ("relay.sigmoid" in ops) == (activation == "silu")  # the attribute reached the body
    for mode in ("interpreter", "built"):
        got = XrelayBackend.prepare(model, mode=mode).run(feeds)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_an_operator_without_function_is_still_listed():
    node = helper.make_node("ImageDecoder", ["x"], ["y"], name="dec")
    model = _model(node, [("x", [4])], ["y"], opset=20)
    with pytest.raises(OnnxImportError, match=r"unsupported ONNX operators \(opset 20\): ImageDecoder \(dec\)"):
        import_onnx(model)


def test_an_error_inside_a_function_names_the_body_node():
    # Bernoulli's body draws with RandomUniformLike, which needs a static shape
    node = helper.make_node("Bernoulli", ["x"], ["y"], name="b")
    model = _model(node, [("x", ["n"])], ["y"], opset=22)
    with pytest.raises(OnnxImportError, match=r"RandomUniformLike node .*: needs a static input shape, got \[None\]"):
        import_onnx(model)


def test_attention_variant_falls_back_to_its_function(rng):
    # nonpad_kv_seqlen with a causal mask: the Attention converter imports ONNX's function body
    q, k, v = (rng.standard_normal((2, 2, 3, 4)).astype(np.float32) for _ in range(3))
    lens = np.array([2, 3], np.int64)
    node = helper.make_node("Attention", ["q", "k", "v", "", "", "", "lens"], ["y"], is_causal=1)
    graph = helper.make_graph(
        [node], "g",
        [*(helper.make_tensor_value_info(n, F, [2, 2, 3, 4]) for n in "qkv"),
         helper.make_tensor_value_info("lens", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", F, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
    feeds = {"q": q, "k": k, "v": v, "lens": lens}
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    for mode in ("interpreter", "built"):
        (got,) = XrelayBackend.prepare(model, mode=mode).run(feeds)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
