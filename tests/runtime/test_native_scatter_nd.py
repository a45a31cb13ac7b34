"""ONNX ``ScatterND`` with constant indices (torch's slice assignment ``x[..., :k] = y``
exports as one; Funnel's relative attention has 28): the native kernel puts the updates at
positions found once, into the destination, after copying the data there. Before, the
reference kernel copied the data and the updates per run (Funnel: 3.1 MB outside the
arena); reductions and computed indices keep it."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay.frontends.onnx import from_onnx
from xrelay.testing.onnx_models import GraphBuilder, run_onnxruntime

RNG = np.random.default_rng(0)


def _built(indices, shape, upd_shape, reduction="none"):
    """``ScatterND(x + 0.5, indices, u * 2)``: the data and the updates computed, as in a model."""
    g = GraphBuilder(1)
    data = g.node("Add", ["x", g.const(np.array(0.5, np.float32))])
    upd = g.node("Mul", ["u", g.const(np.array(2.0, np.float32))])
    y = g.node(
        "ScatterND", [data, g.const(np.asarray(indices, np.int64)), upd], reduction=reduction
    )
    model = g.model(
        {"x": (list(shape), np.float32), "u": (list(upd_shape), np.float32)},
        [y],
        "scatter",
        opset=18,
    )
    mod, params = from_onnx(model)
    return model, xrelay.build(mod, params, opt_level=3)


def _run(model, m, shape, upd_shape):
    outs = []
    for _ in range(2):
        feed = {
            "x": RNG.standard_normal(shape).astype("float32"),
            "u": RNG.standard_normal(upd_shape).astype("float32"),
        }
        m.set_input(**feed)
        m.run()
        got = m.get_output(0).numpy()
        assert np.all(np.isfinite(got))
        np.testing.assert_array_equal(got, run_onnxruntime(model, feed)[0])
        outs.append(got)
    assert float(np.max(np.abs(outs[0] - outs[1]))) > 0.1
    return m.executor.outside_arena()


@pytest.mark.parametrize(
    "shape, indices, upd_shape",
    [
        ((6, 4, 5), [[1], [4], [0]], (3, 4, 5)),  # whole rows of the first axis
        ((6, 4, 5), [[0, 1], [5, 3], [-1, 0]], (3, 5)),  # two-deep, a negative index
        ((3, 4, 5), [[[2, 3, 4], [0, 0, 0]]], (1, 2)),  # single elements
        (
            (2, 8, 6),
            [[[0, k] for k in range(4)], [[1, k] for k in range(4)]],
            (2, 4, 6),
        ),  # x[:, :4] = u
    ],
)
def test_scatter_nd_with_constant_indices_runs_in_the_arena(shape, indices, upd_shape):
    model, m = _built(indices, shape, upd_shape)
    report = _run(model, m, shape, upd_shape)
    assert (report.held_bytes, report.run_bytes, report.steps) == (0, 0, [])


def test_a_reduction_keeps_the_reference_kernel():
    model, m = _built([[1], [4]], (6, 3), (2, 3), reduction="add")
    report = _run(model, m, (6, 3), (2, 3))
    assert [s[2] for s in report.steps] == ["scatter_nd"]  # (its copy of the data, per run)
