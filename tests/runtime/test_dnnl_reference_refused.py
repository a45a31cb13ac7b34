"""oneDNN's reference implementations (``ref:any``: scalar loops over any strides) are never
run: a function whose primitive gets one runs on the native kernels. A batched matmul whose
result is written transposed (BoTNet's and HaloNet's attention, EdgeNeXt's channel attention)
got ``ref:any`` and took 470 ms instead of about one; a softmax over a middle axis of 8
elements (CoaT's factorized attention) too."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay.frontends.onnx import from_onnx
from xrelay.testing.onnx_models import GraphBuilder, dnnl_plan_steps, run_onnxruntime

RNG = np.random.default_rng(0)


def _transposed_result():
    """(4, 64, 64) x the (4, 64, 32) transpose of an image's channels, its result transposed
    back into the image: BoTNet's position-logit product."""
    g = GraphBuilder(1)
    v = g.node("Transpose", [g.node("Reshape", ["x", g.const(np.array([4, 32, 64], np.int64))])], perm=[0, 2, 1])
    y = g.node("Transpose", [g.node("MatMul", ["a", v])], perm=[0, 2, 1])
    y = g.node("Reshape", [y, g.const(np.array([1, 128, 8, 8], np.int64))])
    shapes = {"a": ([4, 64, 64], np.float32), "x": ([1, 128, 8, 8], np.float32)}
    return g.model(shapes, [y], "transposed"), shapes


def _middle_softmax():
    """A softmax over the third of four axes, 8 elements innermost (CoaT's keys)."""
    g = GraphBuilder(1)
    y = g.node("Softmax", [g.node("Mul", ["x", g.const(np.float32(2.0))])], axis=2)
    shapes = {"x": ([1, 4, 197, 8], np.float32)}
    return g.model(shapes, [y], "softmax"), shapes


@pytest.mark.parametrize("make", [_transposed_result, _middle_softmax])
def test_no_onednn_reference_implementation_runs(make):
    model, shapes = make()
    feeds = {k: RNG.standard_normal(s).astype(t) for k, (s, t) in shapes.items()}
    mod, params = from_onnx(model)
    m = xrelay.build(mod, params, opt_level=3)
    m.set_input(**feeds)
    m.run()
    out, ref = m.get_output(0).numpy(), run_onnxruntime(model, feeds)[0]
    assert np.all(np.isfinite(out)) and np.std(out) > 0
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    ex = m.executor
    impls = [s.impl for s in dnnl_plan_steps(m)]
    assert not any(i.startswith("ref") for i in impls), impls
    # the work ran on the native kernels, in the arena
    assert "native" in ex.step_backends[1:]
    report = ex.outside_arena()
    assert (report.held_bytes, report.run_bytes) == (0, 0), report.steps

