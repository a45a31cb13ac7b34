"""A batched matmul over a batch of one (SegFormer's one-head attention: (1, 1, 3136, 32) x
(1, 1, 32, 49)) is described to oneDNN with dense strides on its unit batch dims: a zero
stride reads as a broadcast and oneDNN chose its reference matmul (``ref:any``, 140 ms
instead of well under one for SegFormer's shape)."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay.frontends.onnx import from_onnx
from xrelay.testing.onnx_models import GraphBuilder, run_onnxruntime

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("heads", [1, 2])
def test_unit_batch_matmul_is_not_onednn_reference_code(heads):
    g = GraphBuilder(1)
    q = g.node("Transpose", [g.node("Reshape", ["q", g.const(np.array([1, 64, heads, 32], np.int64))])], perm=[0, 2, 1, 3])
    k = g.node("Transpose", [g.node("Reshape", ["k", g.const(np.array([1, 16, heads, 32], np.int64))])], perm=[0, 2, 3, 1])
    s = g.node("Softmax", [g.node("MatMul", [q, k])], axis=-1)
    model = g.model({"q": ([1, 64, 32 * heads], np.float32), "k": ([1, 16, 32 * heads], np.float32)}, [s], "attn")
    x = {"q": RNG.standard_normal((1, 64, 32 * heads)).astype("float32"),
         "k": RNG.standard_normal((1, 16, 32 * heads)).astype("float32")}  # fmt: skip
    mod, params = from_onnx(model)
    m = xrelay.build(mod, params, opt_level=3)
    m.set_input(**x)
    m.run()
    out, ref = m.get_output(0).numpy(), run_onnxruntime(model, x)[0]
    assert out.shape == ref.shape and float(np.max(np.abs(out - ref))) <= 1e-5
    ex = m.executor
    impls = [(s.name, s.impl) for (_, _, c), b in zip(ex.steps, ex.step_backends) if b == "dnnl" and hasattr(c, "dnnl_plan")
             for s in c.dnnl_plan.steps if s.name.startswith("nn.batch_matmul")]  # fmt: skip
    assert impls and not any(impl.startswith("ref") for _, impl in impls), impls
