"""The ``ai.onnx.preview.training`` optimizers (Adagrad, Momentum, Adam) against ONNX's reference
evaluator (onnxruntime's CPU build has no training operators), in the interpreter and built,
with the update count ``T`` a graph input (both branches of ``T > 0``)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from xrelay.frontends.onnx import OnnxImportError, import_onnx
from xrelay.testing.onnx_backend import XrelayBackend

DOMAIN = "ai.onnx.preview.training"
F32 = np.float32


def _model(op: str, n: int, states: int, attrs: dict, shapes):
    names = ["R", "T"] + [f"{k}{i}" for k in ["X", "G", "S", "U"][: 2 + states] for i in range(n)]
    outs = [f"{k}{i}_new" for k in ["X", "S", "U"][: 1 + states] for i in range(n)]
    node = helper.make_node(op, names, outs, domain=DOMAIN, **attrs)
    tp = helper.make_tensor_value_info
    ins = [tp("R", 1, []), tp("T", 7, [])]
    ins += [tp(nm, 1, list(shapes[int(nm[1:])])) for nm in names[2:]]
    graph = helper.make_graph([node], "g", ins, [tp(o, 1, None) for o in outs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 1)])
    return model, names


def _feeds(rng, names, shapes, t, squares):
    feeds = {"R": np.array(0.1, F32), "T": np.array(t, np.int64)}
    for nm in names[2:]:
        x = rng.standard_normal(shapes[int(nm[1:])]).astype(F32)
        feeds[nm] = np.abs(x) if nm[0] == squares else x  # accumulated squares are not negative
    return feeds


CASES = [
    ("Adagrad", 1, {"decay_factor": 0.1, "epsilon": 1e-5, "norm_coefficient": 0.01}),
    ("Adagrad", 2, {}),
    ("Momentum", 1, {"alpha": 0.9, "beta": 0.5, "mode": "standard", "norm_coefficient": 0.02}),
    ("Momentum", 2, {"alpha": 0.8, "beta": 0.3, "mode": "nesterov", "norm_coefficient": 0.0}),
    ("Adam", 1, {"alpha": 0.8, "beta": 0.95, "epsilon": 1e-4, "norm_coefficient": 0.01, "norm_coefficient_post": 0.02}),
    ("Adam", 2, {}),
]


@pytest.mark.parametrize("mode", ["interpreter", "built"])
@pytest.mark.parametrize("op, n, attrs", CASES, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_optimizer_matches_onnx_reference(op, n, attrs, mode):
    states = 2 if op == "Adam" else 1
    shapes = [(3, 4), (5,)][:n]
    model, names = _model(op, n, states, attrs, shapes)
    rep = XrelayBackend.prepare(model, mode=mode)
    rng = np.random.default_rng(1)
    for t in (0, 1, 7):  # T = 0 is the step without bias correction / with the full gradient
        feeds = _feeds(rng, names, shapes, t, {"Adagrad": "S", "Adam": "U"}.get(op))
        want = ReferenceEvaluator(model).run(None, feeds)
        got = rep.run(feeds)
        assert len(got) == len(want) == n * (1 + states)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == F32
            assert np.isfinite(g).all()
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        # the step moves X: the outputs depend on the inputs
        assert not np.allclose(got[0], feeds["X0"])


def test_optimizer_refuses_a_bad_input_count():
    model, _ = _model("Adagrad", 1, 1, {}, [(2,)])
    del model.graph.node[0].input[-1]
    with pytest.raises(OnnxImportError, match="needs R, T and 3 inputs per optimized tensor"):
        import_onnx(model)


def test_momentum_requires_its_attributes():
    model, _ = _model("Momentum", 1, 1, {"alpha": 0.9, "beta": 0.5, "mode": "standard"}, [(2,)])
    with pytest.raises(OnnxImportError, match="attribute\\(s\\) norm_coefficient are required"):
        import_onnx(model)
