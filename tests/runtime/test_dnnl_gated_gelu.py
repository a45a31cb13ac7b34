"""A gated GELU, ``gelu(x W1) * (x W2)`` (GeGLU: Gemma's MLP), as two linear layers.
``canonicalize-arith`` moves the GELU's ``0.5`` out of the product chain, so the composite
the dnnl pattern table takes is ``dense``, the GELU without its ``0.5`` and a product by the
other layer's output. The reader runs it as one matmul with three post-ops: the eltwise GELU,
``linear`` (twice it) and a binary multiply by the gate (Gemma, hidden 512: 30.7 -> 16.6 ms).
Before, the product by a computed tensor reached the per-channel scale folding, which
indexed the constant operand it does not have: the build failed (IndexError)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from xrelay.testing.onnx_models import GraphBuilder, engine_steps, run_like_onnxruntime

pytestmark = pytest.mark.usefixtures("onednn_matmul")  # (the oneDNN steps these read)
RNG = np.random.default_rng(0)


def _model(form: str, cube: float = 0.044715):
    """``x`` [1, 6, 16] -> gelu(x W1) * (x W2) -> W3. ``form``: ``Gelu`` (the ONNX op, tanh
    approximation), ``erf`` or ``tanh`` (torch's decompositions); ``cube``: the tanh form's
    coefficient (another one is no GELU)."""
    g = GraphBuilder(1)

    def linear(v, n_in, n_out):
        return g.node(
            "MatMul", [v, g.const((RNG.standard_normal((n_in, n_out)) * 0.4).astype("float32"))]
        )

    a, b = linear("x", 16, 32), linear("x", 16, 32)
    half = g.const(np.array(0.5, np.float32))
    one = g.const(np.array(1.0, np.float32))
    if form == "Gelu":
        act = g.node("Gelu", [a], approximate="tanh")
    elif form == "erf":
        e = g.node("Erf", [g.node("Div", [a, g.const(np.array(math.sqrt(2.0), np.float32))])])
        act = g.node("Mul", [g.node("Mul", [a, g.node("Add", [e, one])]), half])
    else:
        cubed = g.node("Mul", [g.node("Mul", [a, a]), a])
        lin = g.node("Add", [a, g.node("Mul", [cubed, g.const(np.array(cube, np.float32))])])
        t = g.node(
            "Tanh", [g.node("Mul", [lin, g.const(np.array(math.sqrt(2 / math.pi), np.float32))])]
        )
        act = g.node("Mul", [half, g.node("Mul", [a, g.node("Add", [t, one])])])
    out = linear(g.node("Mul", [act, b]), 32, 8)
    return g.model({"x": ([1, 6, 16], np.float32)}, [out], "geglu", opset=20)


def _run(model):
    feeds = [{"x": (RNG.standard_normal((1, 6, 16)) * 1.5).astype("float32")} for _ in range(2)]
    return engine_steps(run_like_onnxruntime(model, feeds))


@pytest.mark.parametrize("form", ["Gelu", "erf", "tanh"])
def test_gated_gelu_is_one_matmul_with_the_gate_as_a_post_op(form):
    names, native = _run(_model(form))
    gated = [n for n in names if n.startswith(("dnnl.dense_gelu", "dnnl.dense_bias_gelu"))]
    assert len(gated) == 1 and gated[0].endswith("+multiply)"), names  # the gate's product inside
    assert not any("tanh" in ops or "erf" in ops for ops in native), native


def test_tanh_gelu_shape_with_other_constants_builds_and_runs_natively():
    """The pattern's wildcards take any constants; with a cube coefficient that is no GELU's
    the reader finds no activation and leaves the function to the native kernels."""
    names, native = _run(_model("tanh", cube=0.3))
    assert not any(n.startswith("dnnl.dense_gelu") for n in names), names
    assert any("tanh" in ops for ops in native), native
