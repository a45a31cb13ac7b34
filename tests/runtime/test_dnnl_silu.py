"""SiLU (``x * sigmoid(x)``, ``x * sigmoid(a x)``, ONNX ``Swish``) at the end of a
convolution's, depthwise convolution's or matmul's epilogue runs as the oneDNN shim's
in-place pass after the primitive (``xr_dnnl_silu``, in the same C call) instead of oneDNN's
``eltwise_swish`` post-op: the plan has the step, and the results stay within 1e-4 of
onnxruntime, also where ``exp`` overflows and underflows and on lengths that are not whole
vectors."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay.frontends.onnx import from_onnx
from xrelay.testing.onnx_models import GraphBuilder, dnnl_plan_steps, run_onnxruntime

pytestmark = pytest.mark.usefixtures("onednn_matmul")  # (the oneDNN steps these read)
RNG = np.random.default_rng(28)


def _silu(g, x, form):
    if form == "xs":
        return g.node("Mul", [x, g.node("Sigmoid", [x])])
    if form == "sx":
        return g.node("Mul", [g.node("Sigmoid", [x]), x])
    if form == "beta":  # Swish with a scale inside the sigmoid
        return g.node("Mul", [x, g.node("Sigmoid", [g.node("Mul", [x, g.const(np.float32(1.7))])])])
    return g.node("Swish", [x], alpha=0.6)  # the ONNX op (opset 24)


def _model(anchor, form, c=24, hw=13, scale=1.0):
    g = GraphBuilder(28)
    opset = 24 if form == "op" else 18
    if anchor == "dense":
        w = g.init("w", (RNG.standard_normal((c, 37)) * scale).astype("float32"))
        b = g.init("b", (RNG.standard_normal(37) * 0.1).astype("float32"))
        y = _silu(g, g.node("Add", [g.node("MatMul", ["data", w]), b]), form)
        return g.model({"data": ([5, c], np.float32)}, [y], "dense", opset=opset), [5, c]
    if anchor == "conv":
        y = g.conv("data", c, 40, 1, bias=True)
    else:  # depthwise
        y = g.conv("data", c, c, 3, group=c, bias=True)
    y = _silu(g, y, form)
    return g.model({"data": ([1, c, hw, hw], np.float32)}, [y], anchor, opset=opset), [1, c, hw, hw]


def _build(model):
    mod, params = from_onnx(model)
    return xrelay.build(mod, params, opt_level=3)


def _impls(m):
    return [s.impl for s in dnnl_plan_steps(m)]


def _check(m, model, x):
    m.set_input(data=x)
    m.run()
    out = m.get_output(0).numpy()
    ref = run_onnxruntime(model, {"data": x})[0]
    assert np.all(np.isfinite(out)) and float(np.std(ref)) > 0.1
    assert float(np.max(np.abs(out - ref))) <= 1e-4 * max(1.0, float(np.max(np.abs(ref))))
    return out, ref


@pytest.mark.parametrize("anchor", ["conv", "depthwise", "dense"])
@pytest.mark.parametrize("form", ["xs", "sx", "beta", "op"])
def test_silu_after_a_primitive_is_the_shim_pass(anchor, form, monkeypatch):
    monkeypatch.delenv("XRELAY_DNNL_SILU", raising=False)
    model, shape = _model(anchor, form)
    m = _build(model)
    steps = dnnl_plan_steps(m)
    impls = [s.impl for s in steps]
    assert impls.count("silu") == 1, impls
    at = impls.index("silu")
    before = steps[at - 1]  # right after its primitive, in the same function
    assert before.name == steps[at].name and before.name.startswith(f"dnnl.{'dense' if anchor == 'dense' else 'conv2d'}_bias_swish")
    assert before.family == {"conv": "conv", "depthwise": "depthwise", "dense": "matmul"}[anchor]
    assert not before.custom and before.impl != "silu"
    _check(m, model, RNG.standard_normal(shape).astype("float32"))


def test_postop_mode_keeps_onednns_swish(monkeypatch):
    """``XRELAY_DNNL_SILU=postop``: oneDNN's eltwise_swish post-op, one step, same results."""
    model, shape = _model("conv", "xs")
    x = RNG.standard_normal(shape).astype("float32")
    monkeypatch.setenv("XRELAY_DNNL_SILU", "postop")
    m = _build(model)
    assert "silu" not in _impls(m), _impls(m)
    assert [s.name.split("(")[0] for s in dnnl_plan_steps(m) if s.name.startswith("dnnl.")] == ["dnnl.conv2d_bias_swish"]
    a, _ = _check(m, model, x)
    monkeypatch.setenv("XRELAY_DNNL_SILU", "shim")
    b, _ = _check(_build(model), model, x)
    np.testing.assert_allclose(a, b, rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("hw", [1, 3, 29, 64])
def test_silu_pass_at_the_ends_of_exp_and_on_partial_vectors(hw, monkeypatch):
    """Outputs beyond +-90 (``exp(-x)`` overflows to inf and underflows to 0: x * sigmoid(x)
    is -0 and x there), element counts that are not multiples of 16 (1x1: 40, 3x3: 360) and
    large enough for both threads (64x64: 163840), against onnxruntime and float64."""
    monkeypatch.delenv("XRELAY_DNNL_SILU", raising=False)
    model, shape = _model("conv", "xs", hw=hw, scale=1.0)
    x = (np.random.default_rng(hw).standard_normal(shape) * 100).astype("float32")  # (its own seed: any test order)
    m = _build(model)
    assert "silu" in _impls(m)
    out, ref = _check(m, model, x)
    # before the activation: the output's x from the float64 inverse is not needed; compare
    # with float64 SiLU of onnxruntime's pre-activation (the conv alone)
    g = GraphBuilder(28)
    pre = g.model({"data": (shape, np.float32)}, [g.conv("data", 24, 40, 1, bias=True)], "pre")
    z = run_onnxruntime(pre, {"data": x})[0].astype(np.float64)
    assert z.min() < -90 and z.max() > 90  # both ends of exp were reached
    with np.errstate(over="ignore"):  # (exp(-z) is inf where z << 0: exact is -0 there)
        exact = z / (1.0 + np.exp(-z))
    assert np.max(np.abs(out - exact) / np.maximum(np.abs(exact), 1.0)) <= 1e-5


def _gelu_tanh(g, x):
    """GPT-2's GELU, written out: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))."""
    cube = g.node("Mul", [g.node("Mul", [x, x]), x])
    inner = g.node("Add", [x, g.node("Mul", [cube, g.const(np.float32(0.044715))])])
    t = g.node("Tanh", [g.node("Mul", [inner, g.const(np.float32(0.7978845608028654))])])
    return g.node("Mul", [g.node("Mul", [x, g.const(np.float32(0.5))]), g.node("Add", [t, g.const(np.float32(1.0))])])


@pytest.mark.parametrize("anchor", ["conv", "dense", "packed dense"])
def test_gelu_tanh_after_a_primitive_is_the_shim_pass(anchor, monkeypatch):
    """GELU's tanh form at the end of an epilogue is the same in-place pass as a SiLU,
    ``x / (1 + exp(-2c (x + 0.044715 x^3)))`` (oneDNN 3.2's gelu_tanh took 1.3 ms over
    GPT-2's 128 x 3072 on a Zen 3): the step right after its primitive, within 1e-4 of
    onnxruntime, and within 1e-5 of float64 with outputs at both ends of ``exp`` (|x| ~ 100)
    and element counts that are not whole vectors (13 x 37)."""
    monkeypatch.delenv("XRELAY_DNNL_SILU", raising=False)
    if anchor == "packed dense":  # (the shim's own dense kernel before it, where oneDNN has only its jit GEMM)
        monkeypatch.delenv("XRELAY_DNNL_PACKED_DENSE", raising=False)
    g = GraphBuilder(28)
    if anchor == "conv":
        pre = g.conv("data", 24, 40, 1, bias=True)
        shape = [1, 24, 9, 9]
    else:
        w = g.init("w", (RNG.standard_normal((24, 37)) * 0.5).astype("float32"))
        b = g.init("b", (RNG.standard_normal(37) * 0.1).astype("float32"))
        pre = g.node("Add", [g.node("MatMul", ["data", w]), b])
        shape = [13, 24]
    model = g.model({"data": (shape, np.float32)}, [_gelu_tanh(g, pre)], "gelu_tanh")
    m = _build(model)
    steps = dnnl_plan_steps(m)
    impls = [s.impl for s in steps]
    assert impls.count("gelu_tanh") == 1 and "silu" not in impls, impls
    at = impls.index("gelu_tanh")
    assert steps[at - 1].name == steps[at].name and ("packed" in steps[at - 1].impl) == (anchor == "packed dense")
    x = (RNG.standard_normal(shape) * 30).astype("float32")
    out, _ = _check(m, model, x)
    pre_model = g.model({"data": (shape, np.float32)}, [pre], "pre")  # (the activation's input)
    z = run_onnxruntime(pre_model, {"data": x})[0].astype(np.float64)
    assert z.min() < -60 and z.max() > 60  # (exp's overflow and underflow reached)
    exact = 0.5 * z * (1.0 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z**3)))
    assert np.max(np.abs(out - exact) / np.maximum(np.abs(exact), 1.0)) <= 1e-5
