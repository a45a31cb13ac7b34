"""Gated linear units computed as one linear layer and split (SwiGLU, GeGLU: ``act(a) * b``
of the two halves; EVA-02's MLP) become one dense per half (``split_gated_dense``), so each
half's activation is a oneDNN post-op instead of native passes over the split: EVA-02 Tiny
43.1 -> 26.3 ms. A split whose parts are read by views (GPT-2's q, k, v) stays one dense, and
so does one of small parts (``GATED_PART_ELEMENTS``: a recurrent step's gates)."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay.backend.dnnl.partition import GATED_PART_ELEMENTS, split_gated_dense
from xrelay.dialects import module_op
from xrelay.frontends.onnx import from_onnx
from xrelay.testing.onnx_models import GraphBuilder, build_and_run, engine_steps, run_onnxruntime

pytestmark = pytest.mark.usefixtures("onednn_matmul")  # (the oneDNN steps these read)
RNG = np.random.default_rng(0)


ROWS = GATED_PART_ELEMENTS // 64  # each half (rows, 64): the smallest part the rewrite cuts


def _glu(act: str, views: bool = False, rows: int = ROWS):
    g = GraphBuilder(1)
    w = g.const(RNG.standard_normal((16, 128)).astype("float32") * 0.3)
    b = g.const(RNG.standard_normal(128).astype("float32") * 0.1)
    y = g.node("Add", [g.node("MatMul", ["x", w]), b])
    a, gate = g.node("Split", [y, g.const(np.array([64, 64], np.int64))], axis=-1, n_out=2)
    if views:  # read by reshapes, as attention reads q, k and v
        out = g.node("Add", [g.node("Reshape", [a, g.const(np.array([1, rows, 8, 8], np.int64))]),
                             g.node("Reshape", [gate, g.const(np.array([1, rows, 8, 8], np.int64))])])  # fmt: skip
    else:
        if act == "swish":
            h = g.node("Mul", [a, g.node("Sigmoid", [a])])
        else:
            h = g.node("Relu", [a])
        out = g.node("MatMul", [g.node("Mul", [h, gate]), g.const(RNG.standard_normal((64, 8)).astype("float32"))])
    return g.model({"x": ([1, rows, 16], np.float32)}, [out], "glu")


@pytest.mark.parametrize("act", ["swish", "relu"])
def test_gated_halves_are_two_denses_with_their_activation(act):
    model = _glu(act)
    x = {"x": RNG.standard_normal((1, ROWS, 16)).astype("float32")}
    m, got, want = build_and_run(model, x)
    assert np.all(np.isfinite(got)) and float(np.std(got)) > 0.1
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    names, native = engine_steps(m)
    assert not any("split" in ops or "sigmoid" in ops or "relu" in ops for ops in native), native
    # the activated half with its activation and the gate's product as post-ops
    # (test_dnnl_gated_linear), the gate half with its bias
    assert f"dnnl.dense_bias_{act}_mul" in {n.split("(")[0] for n in names}, names
    assert "dnnl.dense_bias(nn.dense+add)" in names, names


def test_rewrite_counts_and_leaves_views_alone():
    from xrelay.backend.dnnl.partition import matmul_to_dense
    from xrelay.transforms.infra import PassContext

    for views, rows, want in ((False, ROWS, 1), (True, ROWS, 0), (False, ROWS - 1, 0), (False, 1, 0)):
        mod, params = from_onnx(_glu("swish", views=views, rows=rows), freeze_params=True)
        with PassContext(opt_level=3):
            module = module_op(xrelay.relay.transform.InferType()(mod))
        matmul_to_dense(module)
        assert split_gated_dense(module) == want
        splits = [o for o in module.walk() if getattr(o, "RELAY_NAME", "") == "split"]
        assert len(splits) == 1 - want


def test_small_parts_stay_one_dense():
    """A time step's gates at batch 1: the dense stays whole (one oneDNN call), its split and
    activation one native loop; the same values as onnxruntime."""
    model = _glu("swish", rows=1)
    x = {"x": RNG.standard_normal((1, 1, 16)).astype("float32")}
    m, got, want = build_and_run(model, x)
    assert np.all(np.isfinite(got)) and float(np.std(got)) > 0.1
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    names, _ = engine_steps(m)
    assert sum(n.startswith("dnnl.dense") or n.startswith("nn.dense") for n in names) == 2, names


def _gated_cnn(channels: int, hidden: int, conv: int, size: int):
    """MambaOut's gated CNN block, channels-last as timm exports it (opset 20's ``Gelu``):
    one linear layer split into g, i and c; c through a 7x7 depthwise convolution;
    ``gelu(g) * cat(i, c)``, the second linear layer and the residual."""
    g = GraphBuilder(channels)
    w1 = g.const((RNG.standard_normal((channels, 2 * hidden)) * 0.3).astype("float32"))
    y = g.node("Add", [g.node("MatMul", ["x", w1]), g.const((RNG.standard_normal(2 * hidden) * 0.1).astype("float32"))])
    sizes = np.array([hidden, hidden - conv, conv], np.int64)
    gate, i, c = g.node("Split", [y, g.const(sizes)], axis=-1, n_out=3)
    c = g.node("Transpose", [c], perm=[0, 3, 1, 2])
    c = g.conv(c, conv, conv, 7, group=conv, bias=True)
    c = g.node("Transpose", [c], perm=[0, 2, 3, 1])
    h = g.node("Mul", [g.node("Gelu", [gate]), g.node("Concat", [i, c], axis=-1)])
    w2 = g.const((RNG.standard_normal((hidden, channels)) * 0.3).astype("float32"))
    out = g.node("Add", [g.node("MatMul", [h, w2]), "x"])
    return g.model({"x": ([1, size, size, channels], np.float32)}, [out], "gated_cnn", opset=20)


@pytest.mark.parametrize("channels, hidden, conv, size", [(24, 40, 12, 19), (48, 128, 48, 14)])
def test_gated_cnn_splits_its_first_linear_layer(channels, hidden, conv, size):
    """MambaOut's split has one part that only its GELU reads and two that a concatenation
    and a transpose read: it becomes three denses (the GELU and the gate's product post-ops
    of the first, no split step, no native erf), the values stay those of the module before
    (reference interpreter) and the build matches onnxruntime."""
    from xrelay.backend.dnnl.partition import matmul_to_dense
    from xrelay.testing.semantics import check_semantics

    model = _gated_cnn(channels, hidden, conv, size)
    mod, params = from_onnx(model, freeze_params=True)

    def rewrite(m):
        m = module_op(m)
        matmul_to_dense(m)
        assert split_gated_dense(m) == 1
        return m

    check_semantics(rewrite, module_op(mod), rtol=1e-5, atol=1e-5)
    x = {"x": RNG.standard_normal((1, size, size, channels)).astype("float32")}
    m, got, want = build_and_run(model, x)
    other = run_onnxruntime(model, {"x": x["x"][:, ::-1].copy()})[0]
    assert np.all(np.isfinite(want)) and not np.allclose(want, other)  # depends on x
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.max(np.abs(want))))
    names, native = engine_steps(m)
    assert not any("split" in ops or "erf" in ops for ops in native), native
    assert sum(n.startswith("dnnl.dense_bias") for n in names) == 4, names  # 3 parts + fc2
    assert any(n.startswith("dnnl.dense_bias_gelu") for n in names), names
