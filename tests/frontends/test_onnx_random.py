"""The random operators (RandomNormal, RandomUniform, their Like forms, Bernoulli, Multinomial,
training Dropout): drawn at import by numpy's RandomState, so a seeded node gives exactly the
values of ONNX's reference evaluator; checked in the interpreter and built. onnxruntime's
generator is another one: against it only shapes and types can be compared (Multinomial), and
the distribution is checked by frequencies."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from xrelay.frontends.onnx import OnnxImportError, import_onnx
from xrelay.testing.onnx_backend import XrelayBackend
from xrelay.testing.onnx_models import make_model, run_onnxruntime

F32 = np.float32
MODES = ["interpreter", "built"]


def _run(model, feeds, mode):
    return XrelayBackend.prepare(model, mode=mode).run(feeds)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "op, attrs",
    [
        ("RandomNormal", {"shape": [3, 5], "mean": 1.5, "scale": 2.0, "seed": 3.0}),
        ("RandomNormal", {"shape": [4], "dtype": onnx.TensorProto.DOUBLE, "seed": 0.0}),
        ("RandomUniform", {"shape": [2, 3, 4], "low": -2.0, "high": 5.0, "seed": 7.0}),
        ("RandomUniform", {"shape": [6], "dtype": onnx.TensorProto.FLOAT16, "seed": 1.0}),
    ],
)
def test_seeded_values_are_onnx_references(op, attrs, mode):
    # a constant-valued graph: y = random + x, so the model has an input to run with
    x = np.zeros(attrs["shape"], dtype=onnx.helper.tensor_dtype_to_np_dtype(attrs.get("dtype", 1)))
    nodes = [helper.make_node(op, [], ["r"], **attrs), helper.make_node("Add", ["r", "x"], ["y"])]
    model = make_model(nodes, {"x": (x.shape, x.dtype)}, {"y": x.dtype})
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    got = _run(model, {"x": x}, mode)[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(got)) == got.size  # drawn values, not a fill


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", ["RandomNormalLike", "RandomUniformLike"])
def test_seeded_like_values_are_onnx_references(op, mode):
    x = np.ones((4, 3), F32)
    nodes = [helper.make_node(op, ["x"], ["r"], seed=5.0, dtype=onnx.TensorProto.DOUBLE)]
    model = make_model(nodes, {"x": (x.shape, F32)}, {"r": np.float64})
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    got = _run(model, {"x": x}, mode)[0]
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode", MODES)
def test_seeded_bernoulli_is_its_onnx_function(mode):
    """Bernoulli is imported as ONNX's function body (RandomUniformLike, Greater, Cast); ONNX's
    reference evaluator runs that body on the node test's expanded model."""
    from onnx.backend.test.case.node import function_testcase_helper

    node = helper.make_node("Bernoulli", ["p"], ["y"], seed=0.0)
    tp = helper.make_tensor_type_proto(onnx.TensorProto.FLOAT, [10])
    (body, opsets), *_ = function_testcase_helper(onnx.NodeProto.FromString(node.SerializeToString()), [tp], "seeded")[0]
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(body, "g", [vi("p", 1, [10])], [vi("y", 1, [10])])
    model = helper.make_model(graph, opset_imports=list(opsets))
    assert {n.op_type for n in model.graph.node} >= {"RandomUniformLike", "Greater"}
    p = np.random.default_rng(3).uniform(0.0, 1.0, 10).astype(F32)
    want = ReferenceEvaluator(model).run(None, {"p": p})[0]
    direct = make_model([node], {"p": ((10,), F32)}, {"y": F32}, opset=15)
    for m in (model, direct):
        got = _run(m, [p], mode)[0]
        np.testing.assert_array_equal(got, want)
    assert 0 < want.sum() < 10


def _dropout_model(n_out):
    node = helper.make_node("Dropout", ["x", "r", "t"], ["y", "m"][:n_out], seed=4)
    ins = {"x": ((3, 4, 5), F32), "r": ((), F32), "t": ((), np.bool_)}
    return make_model([node], ins, {"y": F32, "m": np.bool_} if n_out == 2 else {"y": F32}, opset=13)


@pytest.mark.parametrize("mode", MODES)
def test_training_dropout_is_onnx_references(mode):
    model = _dropout_model(2)
    rep = XrelayBackend.prepare(model, mode=mode)
    x = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(F32)
    for r, t in [(0.75, True), (0.3, True), (0.0, True), (0.5, False)]:
        feeds = {"x": x, "r": np.array(r, F32), "t": np.array(t)}
        want = ReferenceEvaluator(model).run(None, feeds)
        got = rep.run(feeds)
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
        kept = got[1].mean()
        assert (kept == 1.0) if (r == 0.0 or not t) else 0.0 < kept < 1.0


def test_unseeded_draws_differ_per_node_and_repeat_per_import():
    nodes = [
        helper.make_node("RandomUniform", [], ["a"], shape=[1000]),
        helper.make_node("RandomUniform", [], ["b"], shape=[1000]),
        helper.make_node("Add", ["a", "x"], ["ya"]),
        helper.make_node("Add", ["b", "x"], ["yb"]),
    ]
    model = make_model(nodes, {"x": ((1000,), F32)}, ["ya", "yb"])
    x = np.zeros(1000, F32)
    a, b = _run(model, [x], "interpreter")
    assert not np.array_equal(a, b)
    assert 0.0 <= a.min() and a.max() < 1.0 and abs(a.mean() - 0.5) < 0.05
    a2, b2 = _run(model, [x], "interpreter")
    np.testing.assert_array_equal(a, a2)
    np.testing.assert_array_equal(b, b2)


@pytest.mark.parametrize("mode", MODES)
def test_multinomial_frequencies_and_types(mode):
    logits = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], F32))
    node = helper.make_node("Multinomial", ["x"], ["y"], sample_size=20000, seed=2.0, dtype=onnx.TensorProto.INT64)
    model = make_model([node], {"x": ((2, 3), F32)}, {"y": np.int64})
    got = _run(model, [logits], mode)[0]
    ort = run_onnxruntime(model, {"x": logits})[0]  # another generator: its shape and type only
    assert got.shape == ort.shape == (2, 20000) and got.dtype == ort.dtype == np.int64
    for row in range(2):
        freq = np.bincount(got[row], minlength=3) / 20000
        np.testing.assert_allclose(freq, np.exp(logits[row]), atol=0.015)
    np.testing.assert_array_equal(got, _run(model, [logits], mode)[0])  # seeded: the same


def test_a_bad_seed_is_refused():
    node = helper.make_node("RandomNormal", [], ["y"], shape=[2], seed=-1.0)
    model = make_model([node], {}, ["y"], check=False)
    with pytest.raises(OnnxImportError, match=r"seed must be an integer in \[0, 2\^32\), got -1.0"):
        import_onnx(model)
