"""A per-feature scale and shift before a matmul by a constant weight go into the matmul
(``affine_into_dense``): two layer norms of one input (Falcon's and GPT-NeoX's parallel
attention and MLP) share their normalisation after ``eliminate-common-subexpr``, so
``layer_norm_rewrite`` makes one ``nn.layer_norm`` without scale and shift and each branch's
scale and shift ran as oneDNN binary steps of their own (three a layer in falcon_small); an
RMS norm's weight before its projections too. Folded: the matmul's weight columns scaled,
the shift a bias."""

from __future__ import annotations

import numpy as np
import pytest

from xrelay.testing.onnx_models import GraphBuilder, engine_steps, run_like_onnxruntime

pytestmark = pytest.mark.usefixtures("onednn_matmul")  # (the oneDNN steps these read)
RNG = np.random.default_rng(0)


def _f32(*shape, scale=1.0, shift=0.0):
    return (RNG.standard_normal(shape) * scale + shift).astype("float32")


def _model(norm: str):
    """``x`` [1, 6, 16] -> two norms (``layer``: LayerNormalization, each its own scale and
    shift; ``rms``: x / sqrt(mean(x^2) + eps) * w) -> a matmul each (one with a bias) -> sum."""
    g = GraphBuilder(1)
    outs = []
    for k in range(2):
        if norm == "layer":
            y = g.node(
                "LayerNormalization",
                ["x", g.const(_f32(16, shift=1.0)), g.const(_f32(16))],
                axis=-1,
            )
        else:
            ms = g.node(
                "ReduceMean", [g.node("Mul", ["x", "x"]), g.const(np.array([-1], np.int64))]
            )
            r = g.node("Sqrt", [g.node("Add", [ms, g.const(np.array(1e-6, np.float32))])])
            y = g.node("Mul", [g.node("Div", ["x", r]), g.const(_f32(16, shift=1.0))])
        z = g.node("MatMul", [y, g.const(_f32(16, 8, scale=0.3))])
        if k:
            z = g.node("Add", [z, g.const(_f32(8))])
        outs.append(z)
    return g.model({"x": ([1, 6, 16], np.float32)}, [g.node("Add", outs)], "affine", opset=20)


@pytest.mark.parametrize("norm", ["layer", "rms"])
def test_affine_goes_into_the_matmuls(norm):
    feeds = [{"x": _f32(1, 6, 16, scale=2.0, shift=0.5)} for _ in range(2)]
    names, native = engine_steps(run_like_onnxruntime(_model(norm), feeds))
    lone = [n for n in names if n.split("(")[0] in ("multiply", "add")]
    assert not lone, names  # no binary step of its own
    dense = [n for n in names if n.startswith(("dnnl.dense", "nn.dense"))]
    assert len(dense) == 2, names
    if norm == "layer":
        assert sum(n.startswith("nn.layer_norm") for n in names) == 1, names
        assert all("multiply" not in ops for ops in native), native
