"""A GELU that no convolution or matmul takes as a post-op (SegFormer's Mix-FFN: the
depthwise convolution's result transposed back to tokens, then GELU; wav2vec2's first
feature layer: GroupNorm, then GELU) is the ``dnnl.gelu`` composite, run as one oneDNN
eltwise step (``gelu_erf``; the tanh form the shim's GELU pass) instead of native steps of
its own (wav2vec2: 15.8 ms for 512 x 3199 values)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import xrelay
from xrelay.frontends.onnx import from_onnx
from xrelay.runtime.interpreter import run
from xrelay.testing.onnx_models import GraphBuilder

RNG = np.random.default_rng(0)


def _gelu(g, x, form):
    if form == "erf":  # torch's export: x * (erf(x / sqrt 2) + 1) * 0.5
        e = g.node("Erf", [g.node("Div", [x, g.const(np.array(math.sqrt(2.0), np.float32))])])
        inner = g.node("Mul", [x, g.node("Add", [e, g.const(np.array(1.0, np.float32))])])
    else:  # x * (tanh(sqrt(2 / pi) (x + 0.044715 x^3)) + 1) * 0.5
        cube = g.node("Mul", [g.node("Mul", [x, x]), x])
        lin = g.node("Add", [x, g.node("Mul", [cube, g.const(np.array(0.044715, np.float32))])])
        t = g.node("Tanh", [g.node("Mul", [lin, g.const(np.array(math.sqrt(2 / math.pi), np.float32))])])
        inner = g.node("Mul", [x, g.node("Add", [t, g.const(np.array(1.0, np.float32))])])
    return g.node("Mul", [inner, g.const(np.array(0.5, np.float32))])


def _transposed(g):
    return g.node("Transpose", ["x"], perm=[0, 2, 1]), (2, 48, 40)


def _group_norm(g):
    x = g.node("InstanceNormalization", ["x", g.const(np.ones(48, np.float32)), g.const(np.zeros(48, np.float32))])
    return x, (2, 48, 40)


def _built(model, x):
    """The model imported, its interpreter result on ``x``, and the build run on ``x``."""
    mod, params = from_onnx(model)
    expect = run(mod, x, params)[0]
    m = xrelay.build(mod, params, opt_level=3)
    m.set_input(**x)
    m.run()
    out = m.get_output(0).numpy()
    assert np.all(np.isfinite(out)) and float(np.std(out)) > 0.1
    return expect, out, m.executor


@pytest.mark.parametrize("form", ["erf", "tanh"])
@pytest.mark.parametrize("before", [_transposed, _group_norm])
def test_gelu_alone_is_one_onednn_eltwise_step(form, before):
    g = GraphBuilder(1)
    y, shape = before(g)
    model = g.model({"x": (list(shape), np.float32)}, [_gelu(g, y, form)], "gelu")
    expect, out, ex = _built(model, {"x": (RNG.standard_normal(shape) * 2).astype("float32")})
    assert float(np.max(np.abs(out - expect))) <= 1e-5
    native = [s[0] for s, b in zip(ex.steps, ex.step_backends) if b == "native" and s[0] != "memory.copy"]
    assert not native, native  # (the input's copy into the arena is the one native step)
    steps = [(s.name, s.impl) for (_, _, c), b in zip(ex.steps, ex.step_backends) if b == "dnnl"
             for s in c.dnnl_plan.steps]  # fmt: skip
    gelu = [(n, impl) for n, impl in steps if n.startswith("dnnl.gelu")]
    assert len(gelu) == 1 and not gelu[0][1].startswith("ref"), steps
    # the tanh form is the shim's pass from the input to the output (oneDNN's gelu_tanh
    # eltwise is slow on AVX2), the erf form oneDNN's eltwise
    assert (gelu[0][1] == "gelu_tanh") == (form == "tanh"), gelu


def test_gelu_tanh_alone_reads_its_input_and_keeps_it(monkeypatch):
    """The shim's GELU pass over a GELU by itself reads the transpose's output and writes its
    own: both stay right when the input is read again after it (a residual add), and with
    ``XRELAY_DNNL_SILU=postop`` oneDNN's eltwise gives the same values."""
    g = GraphBuilder(1)
    y, shape = _transposed(g)
    out = g.node("Add", [_gelu(g, y, "tanh"), y])
    model = g.model({"x": (list(shape), np.float32)}, [out], "gelu_residual")
    x = {"x": (RNG.standard_normal(shape) * 3).astype("float32")}
    expect, got, ex = _built(model, x)
    assert float(np.max(np.abs(got - expect))) <= 1e-5 * float(np.max(np.abs(expect)))
    impls = [s.impl for (_, _, c), b in zip(ex.steps, ex.step_backends) if b == "dnnl" for s in c.dnnl_plan.steps]
    assert "gelu_tanh" in impls, impls
    monkeypatch.setenv("XRELAY_DNNL_SILU", "postop")
    _, onednn, ex = _built(model, x)
    impls = [s.impl for (_, _, c), b in zip(ex.steps, ex.step_backends) if b == "dnnl" for s in c.dnnl_plan.steps]
    assert "gelu_tanh" not in impls, impls
    np.testing.assert_allclose(got, onednn, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("form", ["erf", "tanh"])
def test_gelu_read_by_a_scale_and_a_residual_keeps_its_factor(form):
    """FastViT's stem: two convolutions summed, GELU, then the result read by a batch norm
    (a per-channel scale and shift) and by a residual add. canonicalize-arith moves the
    GELU's 0.5 last; folding it into the batch norm's scale left the activation without it,
    and it ran as native steps (2.3 ms of FastViT-T8's 18). The GELU is one oneDNN step."""
    g = GraphBuilder(1)
    shape = (1, 16, 12, 12)
    a = g.conv("x", 16, 16, 3, pad=1, name="a")
    b = g.conv("x", 16, 16, 1, name="b")
    y = _gelu(g, g.node("Add", [a, b]), form)
    scale = g.const((RNG.random((1, 16, 1, 1)) + 0.5).astype("float32"))
    shift = g.const(RNG.standard_normal((1, 16, 1, 1)).astype("float32"))
    normed = g.node("Add", [g.node("Mul", [y, scale]), shift])
    out = g.conv(g.node("Add", [normed, y]), 16, 16, 1, name="c")
    model = g.model({"x": (list(shape), np.float32)}, [out], "gelu_shared")
    expect, got, ex = _built(model, {"x": RNG.standard_normal(shape).astype("float32")})
    np.testing.assert_allclose(got, expect, rtol=1e-4, atol=1e-4)
    native = [ops for (_, ops, _), b in zip(ex.steps, ex.step_backends) if b == "native" and ops != "copy"]
    assert not any("erf" in ops or "tanh" in ops for ops in native), native
