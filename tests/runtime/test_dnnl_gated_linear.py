"""A gated linear unit written as two linear layers, ``act(x W_g) * (x W_u)`` (Llama's,
Qwen's and Mistral's SwiGLU MLP; ReGLU; GLU's ``sigmoid``), is one matmul for the gate's
layer whose post-ops are its activation and a binary multiply by the other layer's output
(the ``dnnl.dense[_bias]_<act>_mul`` composites), whichever side of the product the
activation is on: no step of its own for the product."""

from __future__ import annotations

import numpy as np
import pytest

from xrelay.testing.onnx_models import GraphBuilder, engine_steps, run_like_onnxruntime

pytestmark = pytest.mark.usefixtures("onednn_matmul")  # (the oneDNN steps these read)
RNG = np.random.default_rng(0)


def _mlp(form: str, bias: bool = False, gate_shape: tuple[int, ...] = (1, 6, 32)):
    """``x`` [1, 6, 16] -> act(x W_g [+ b_g]) * (x W_u [+ b_u]) -> W_d. ``gate_shape``: the
    other factor's shape (a last axis of 1 broadcasts it: no gate)."""
    g = GraphBuilder(1)

    def linear(v, n_in, n_out):
        y = g.node(
            "MatMul", [v, g.const((RNG.standard_normal((n_in, n_out)) * 0.4).astype("float32"))]
        )
        return (
            g.node("Add", [y, g.const((RNG.standard_normal(n_out) * 0.2).astype("float32"))])
            if bias
            else y
        )

    a, b = linear("x", 16, 32), linear("x", 16, gate_shape[-1])
    if form == "silu":  # torch's SiLU: x * sigmoid(x)
        act, h = g.node("Mul", [a, g.node("Sigmoid", [a])]), None
    elif form == "silu_other_side":  # sigmoid(x) * x, and the gate first in the product
        act = g.node("Mul", [g.node("Sigmoid", [a]), a])
        h = g.node("Mul", [b, act])
    elif form == "relu":
        act, h = g.node("Relu", [a]), None
    else:  # GLU: sigmoid(x W) * (x V)
        act, h = g.node("Sigmoid", [a]), None
    h = h or g.node("Mul", [act, b])
    out = g.node("MatMul", [h, g.const((RNG.standard_normal((32, 8)) * 0.4).astype("float32"))])
    return g.model({"x": ([1, 6, 16], np.float32)}, [out], "gated", opset=20)


def _run(model):
    feeds = [{"x": (RNG.standard_normal((1, 6, 16)) * 1.5).astype("float32")} for _ in range(2)]
    return engine_steps(run_like_onnxruntime(model, feeds))


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("form", ["silu", "silu_other_side", "relu", "glu"])
def test_gate_product_is_a_post_op_of_the_activated_matmul(form, bias):
    names, native = _run(_mlp(form, bias))
    gated = [n for n in names if n.split("(")[0].endswith("_mul")]
    assert len(gated) == 1 and gated[0].endswith("+multiply)"), names
    assert gated[0].startswith("dnnl.dense_bias_" if bias else "dnnl.dense_"), gated
    assert len(names) == 3, names  # the gate's matmul, the other layer's, the down projection
    assert not native, native


def test_a_broadcast_factor_is_no_gate():
    """``act(x W_g) * (x w)`` with one column ``w``: the product broadcasts, so oneDNN's
    post-op (the destination's shape) cannot take it; the activation keeps its composite and
    the product runs on its own."""
    names, _ = _run(_mlp("silu", gate_shape=(1, 6, 1)))
    assert not any(n.split("(")[0].endswith("_mul") for n in names), names
    assert any(n.startswith("dnnl.dense_swish(") for n in names), names
