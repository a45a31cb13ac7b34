"""Activations as exporters write them become oneDNN eltwise post-ops of their convolution or
matmul (``canonicalize-arith`` + the dnnl pattern table + the reader), within 1e-4 of
onnxruntime; a composite oneDNN refuses runs on the fast native kernels; a module runs its
one-thread program (``RunChooser``) with the same results."""

from __future__ import annotations

import math

import numpy as np
import pytest

import xrelay
from xrelay.frontends.onnx import from_onnx
from xrelay.testing.onnx_models import GraphBuilder, run_onnxruntime

RNG = np.random.default_rng(0)


def _silu(g, x, order):
    s = g.node("Sigmoid", [x])
    return g.node("Mul", [x, s] if order == "xs" else [s, x])


def _gelu_erf(g, x, form):
    half, one = g.const(np.float32(0.5)), g.const(np.float32(1.0))
    if form == "divide":  # torch: x * (erf(x / sqrt 2) + 1) * 0.5, 0.5 on the left
        erf = g.node("Erf", [g.node("Div", [x, g.const(np.float32(math.sqrt(2.0)))])])
        return g.node("Mul", [half, g.node("Mul", [x, g.node("Add", [erf, one])])])
    if form == "multiply":  # (x * 0.5) * (1 + erf(x * 0.7071))
        erf = g.node("Erf", [g.node("Mul", [g.const(np.float32(1 / math.sqrt(2.0))), x])])
        return g.node("Mul", [g.node("Mul", [x, half]), g.node("Add", [one, erf])])
    return g.node("Gelu", [x])  # the ONNX op (opset 20), as the importer writes it


def _gelu_tanh(g, x, cube):
    # GPT-2's NewGELU: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
    if cube == "pow":
        c = g.node("Pow", [x, g.const(np.float32(3.0))])
    else:
        c = g.node("Mul", [x, g.node("Mul", [x, x])])
    inner = g.node("Add", [x, g.node("Mul", [g.const(np.float32(0.044715)), c])])
    t = g.node("Tanh", [g.node("Mul", [g.const(np.float32(math.sqrt(2 / math.pi))), inner])])
    return g.node("Mul", [g.node("Mul", [g.const(np.float32(0.5)), x]), g.node("Add", [g.const(np.float32(1.0)), t])])


def _relu6_plus3(g, x, clamps):
    """relu6(x + 3), as one Clip or as torch's decomposition writes it (a clamp_min, then a
    clamp_max)."""
    zero, six = g.const(np.float32(0.0)), g.const(np.float32(6.0))
    a = g.node("Add", [x, g.const(np.float32(3.0))])
    if clamps:
        return g.node("Clip", [g.node("Clip", [a, zero, ""]), "", six])
    return g.node("Clip", [a, zero, six])


def _hardswish_relu6(g, x, clamps):
    # x * relu6(x + 3) / 6 (torch's decomposition of hardswish, Keras' hard_swish)
    return g.node("Div", [g.node("Mul", [x, _relu6_plus3(g, x, clamps)]), g.const(np.float32(6.0))])


def _hardsigmoid_relu6(g, x):
    # relu6(x + 3) * (1/6), the scale on the left
    return g.node("Mul", [g.const(np.float32(1 / 6)), _relu6_plus3(g, x, False)])


ACTIVATIONS = {
    "silu_xs": (lambda g, x: _silu(g, x, "xs"), "swish"),
    "silu_sx": (lambda g, x: _silu(g, x, "sx"), "swish"),
    "hardswish": (lambda g, x: g.node("HardSwish", [x]), "hardswish"),
    # (after a bias its scale folds into the convolution and its shift into the bias)
    "hardsigmoid": (lambda g, x: g.node("HardSigmoid", [x], alpha=1 / 6, beta=0.5), "clip"),
    # the same written with relu6 (canonicalize-arith's MergeClips and ScaleIntoClip)
    "hardswish_relu6": (lambda g, x: _hardswish_relu6(g, x, False), "hardswish"),
    "hardswish_clamps": (lambda g, x: _hardswish_relu6(g, x, True), "hardswish"),
    "hardsigmoid_relu6": (_hardsigmoid_relu6, "hardsigmoid"),
    "gelu_divide": (lambda g, x: _gelu_erf(g, x, "divide"), "gelu"),
    "gelu_multiply": (lambda g, x: _gelu_erf(g, x, "multiply"), "gelu"),
    "gelu_tanh_pow": (lambda g, x: _gelu_tanh(g, x, "pow"), "gelu_tanh"),
    "gelu_tanh_mul": (lambda g, x: _gelu_tanh(g, x, "mul"), "gelu_tanh"),
    # CSPDarknet's and TResNet's (oneDNN's relu with the slope as alpha)
    "leaky_relu": (lambda g, x: g.node("LeakyRelu", [x], alpha=0.1), "leaky_relu"),
}


def _run(model, inputs, **kw):
    mod, params = from_onnx(model)
    m = xrelay.build(mod, params, opt_level=3, **kw)
    m.set_input(**inputs)
    m.run()
    return m, m.get_output(0).numpy()


def _composites(m):
    return [c.dnnl_plan.steps[0].name for (_, _, c), b in zip(m.executor.steps, m.executor.step_backends)
            if b == "dnnl" and hasattr(c, "dnnl_plan") and c.dnnl_plan.steps[0].name.startswith("dnnl.")]  # fmt: skip


def _close(out, ref):
    assert np.all(np.isfinite(out)) and float(np.std(ref)) > 0.1
    assert float(np.max(np.abs(out - ref))) <= 1e-4 * max(1.0, float(np.max(np.abs(ref))))


@pytest.mark.parametrize("act", list(ACTIVATIONS))
def test_conv_activation_is_one_onednn_step(act):
    make, name = ACTIVATIONS[act]
    g = GraphBuilder(1)
    y = make(g, g.conv("data", 8, 16, 3, bias=True))
    model = g.model({"data": ([1, 8, 12, 12], np.float32)}, [y], act)
    x = {"data": RNG.standard_normal((1, 8, 12, 12)).astype("float32")}
    m, out = _run(model, x)
    assert [c.split("(")[0] for c in _composites(m)] == [f"dnnl.conv2d_bias_{name}"]
    assert "native" not in m.executor.step_backends[1:]  # (the first step copies the input in)
    _close(out, run_onnxruntime(model, x)[0])


@pytest.mark.parametrize("act", ["gelu_divide", "gelu_multiply", "gelu_onnx", "gelu_tanh_pow", "silu_sx"])
def test_dense_activation_is_one_onednn_step(act):
    make, name = ACTIVATIONS.get(act, (lambda g, x: _gelu_erf(g, x, "op"), "gelu"))
    g = GraphBuilder(2)
    w = g.init("w", (RNG.standard_normal((32, 48)) * 0.3).astype("float32"))
    b = g.init("b", (RNG.standard_normal(48) * 0.1).astype("float32"))
    y = make(g, g.node("Add", [g.node("MatMul", ["data", w]), b]))
    model = g.model({"data": ([4, 32], np.float32)}, [y], act, opset=20)
    x = {"data": RNG.standard_normal((4, 32)).astype("float32")}
    m, out = _run(model, x)
    assert [c.split("(")[0] for c in _composites(m)] == [f"dnnl.dense_bias_{name}"]
    _close(out, run_onnxruntime(model, x)[0])


def test_refused_composite_runs_on_the_fast_native_kernels():
    """A GELU-shaped epilogue with constants oneDNN's GELU does not have is grouped by the
    pattern (its constants are wildcards) and refused by the reader: the function runs on
    the native kernels with the composite's ops inlined (the convolution with its bias
    fused where it can), not call by call through the reference interpreter."""
    g = GraphBuilder(3)
    y = g.conv("data", 8, 16, 3, bias=True)
    e = g.node("Erf", [g.node("Mul", [y, g.const(np.float32(0.3))])])
    y = g.node("Mul", [g.node("Mul", [y, g.node("Add", [e, g.const(np.float32(1.0))])]), g.const(np.float32(0.5))])
    model = g.model({"data": ([1, 8, 16, 16], np.float32)}, [y], "refused")
    x = {"data": RNG.standard_normal((1, 8, 16, 16)).astype("float32")}
    m, out = _run(model, x)
    ex = m.executor
    (step,) = [c for (name, _, c), b in zip(ex.steps, ex.step_backends) if b == "native" and "dnnl_main" in name]
    labels = [label for label, _, _ in step.thunks]
    assert not any(label.startswith("call @") for label in labels), labels
    assert labels[0].startswith("nn.conv2d"), labels
    _close(out, run_onnxruntime(model, x)[0])


def test_one_thread_program_gives_the_same_results():
    """The executor's one-thread program (oneDNN primitives made for one thread, the pool's
    jobs serial) computes what its all-threads program computes."""
    g = GraphBuilder(4)
    y = _silu(g, g.bn(g.conv("data", 8, 16, 3), 16), "xs")
    y = g.node("MaxPool", [y], kernel_shape=[2, 2], strides=[2, 2])
    y = g.node("HardSwish", [g.conv(y, 16, 16, 3, group=16, bias=True)])
    y = g.node("Add", [g.conv(y, 16, 16, 1, bias=True), y])
    model = g.model({"data": ([1, 8, 16, 16], np.float32)}, [y], "one")
    x = {"data": RNG.standard_normal((1, 8, 16, 16)).astype("float32")}
    m, out = _run(model, x, threads=2)
    ex = m.executor
    # (the input copy runs inside the oneDNN run in both programs)
    assert ex._thunks_one is not None and len(ex._thunks_one) == len(ex._thunks)
    modes = []
    for _ in range(4):
        mode = ex.chooser.runs  # the chooser's next choice is recorded below
        ex.run()
        modes.append(mode)
        np.testing.assert_allclose(m.get_output(0).numpy(), out, rtol=1e-5, atol=1e-5)
    assert ex.chooser.stats[0] >= 1 and ex.chooser.stats[1] >= 1  # both programs ran
    _close(out, run_onnxruntime(model, x)[0])


def test_gpt2_conv1d_then_reshape_then_tanh_gelu_is_one_onednn_step():
    """GPT-2's MLP: Conv1D is ``addmm`` on the flattened rows, viewed back to (batch, seq,
    features), then NewGELU with ``Pow(x, 3)``; the view between the matmul and its
    activation is the same bytes, so the composite takes it."""
    g = GraphBuilder(5)
    w = g.init("w", (RNG.standard_normal((32, 48)) * 0.3).astype("float32"))
    b = g.init("b", (RNG.standard_normal(48) * 0.1).astype("float32"))
    rows = g.node("Reshape", ["data", g.const(np.array([-1, 32], np.int64))])
    y = g.node("Reshape", [g.node("Gemm", [rows, w, b]), g.const(np.array([1, 8, 48], np.int64))])
    y = _gelu_tanh(g, y, "pow")
    model = g.model({"data": ([1, 8, 32], np.float32)}, [y], "conv1d")
    x = {"data": RNG.standard_normal((1, 8, 32)).astype("float32")}
    m, out = _run(model, x)
    assert [c.split("(")[0] for c in _composites(m)] == ["dnnl.dense_bias_gelu_tanh"]
    _close(out, run_onnxruntime(model, x)[0])


def test_gpt2_conv1d_then_reshape_then_residual_is_one_onednn_step():
    """GPT-2's projections back to the residual stream: ``addmm`` on the flattened rows,
    viewed back to (batch, seq, features), then the residual add: the add is the matmul's
    sum post-op (it was a native step of its own)."""
    g = GraphBuilder(8)
    w = g.init("w", (RNG.standard_normal((32, 32)) * 0.3).astype("float32"))
    b = g.init("b", (RNG.standard_normal(32) * 0.1).astype("float32"))
    h = g.node("Tanh", ["data"])  # the residual stream, computed (not the model's input)
    rows = g.node("Reshape", [h, g.const(np.array([-1, 32], np.int64))])
    y = g.node("Reshape", [g.node("Gemm", [rows, w, b]), g.const(np.array([1, 8, 32], np.int64))])
    y = g.node("Add", [y, h])
    model = g.model({"data": ([1, 8, 32], np.float32)}, [y], "conv1d_residual")
    x = {"data": RNG.standard_normal((1, 8, 32)).astype("float32")}
    m, out = _run(model, x)
    assert [c.split("(")[0] for c in _composites(m)] == ["dnnl.dense_bias_sum"]
    native = [o for (_, o, _), bk in zip(m.executor.steps, m.executor.step_backends) if bk == "native"]
    assert native == ["copy", "tanh"]  # the input copied in, the residual stream's tanh
    _close(out, run_onnxruntime(model, x)[0])


def test_squeeze_excitation_mean_is_a_onednn_global_pool():
    """torch exports the squeeze of a squeeze-and-excitation block (``adaptive_avg_pool2d(x,
    1)``) as ``ReduceMean`` over H and W with keepdims: it runs as oneDNN's global average
    pool on the channels-last tensor, the block's convolutions with their SiLU and sigmoid
    epilogues as oneDNN steps."""
    g = GraphBuilder(6)
    y = _silu(g, g.conv("data", 8, 32, 3, bias=True), "xs")
    s = g.node("ReduceMean", [y, g.const(np.array([2, 3], np.int64))], keepdims=1)
    s = g.node("Sigmoid", [g.conv(_silu(g, g.conv(s, 32, 8, 1, bias=True), "xs"), 8, 32, 1, bias=True)])
    y = g.conv(g.node("Mul", [y, s]), 32, 16, 1, bias=True)
    model = g.model({"data": ([1, 8, 14, 14], np.float32)}, [y], "se", opset=18)
    x = {"data": RNG.standard_normal((1, 8, 14, 14)).astype("float32")}
    m, out = _run(model, x)
    ops = [o for (_, o, _), b in zip(m.executor.steps, m.executor.step_backends) if b == "dnnl"]
    assert "nn.global_avg_pool2d" in ops, ops
    # the scale between two oneDNN steps stays a oneDNN binary (nothing native to fuse with)
    assert "multiply" in ops and "native" not in m.executor.step_backends[1:], ops
    assert [c.split("(")[0] for c in _composites(m)] == [
        "dnnl.conv2d_bias_swish", "dnnl.conv2d_bias_swish", "dnnl.conv2d_bias_sigmoid", "dnnl.conv2d_bias",
    ]  # fmt: skip
    _close(out, run_onnxruntime(model, x)[0])


def test_spatial_mean_without_keepdims_is_a_onednn_global_pool():
    """MnasNet's head, ``x.mean([2, 3])`` then a Linear: the pool and the matmul on oneDNN."""
    g = GraphBuilder(7)
    y = g.node("Relu", [g.conv("data", 8, 32, 3, bias=True)])
    y = g.gemm(g.node("ReduceMean", [y, g.const(np.array([2, 3], np.int64))], keepdims=0), 32, 10)
    model = g.model({"data": ([1, 8, 14, 14], np.float32)}, [y], "head", opset=18)
    x = {"data": RNG.standard_normal((1, 8, 14, 14)).astype("float32")}
    m, out = _run(model, x)
    ex = m.executor
    assert "native" not in ex.step_backends[1:], [o for (_, o, _) in ex.steps]
    assert "nn.global_avg_pool2d" in [o for (_, o, _) in ex.steps]
    _close(out, run_onnxruntime(model, x)[0])


def test_convnext_block_permutes_cancel_the_layout_transforms():
    """ConvNeXt's block permutes to channels-last itself around its layer norm and MLP; after
    ConvertLayout the transform back to NCHW and the model's own transpose cancel (no
    transpose step is left between the depthwise convolution and the layer norm), the MLP
    is a dense with its GELU."""
    g = GraphBuilder(8)
    y = g.conv("data", 16, 16, 7, group=16, bias=True)
    y = g.node("Transpose", [y], perm=[0, 2, 3, 1])
    gamma = g.init("ln_g", RNG.uniform(0.8, 1.2, 16).astype("float32"))
    beta = g.init("ln_b", (RNG.standard_normal(16) * 0.1).astype("float32"))
    y = g.node("LayerNormalization", [y, gamma, beta], axis=-1, epsilon=1e-6)
    w1 = g.init("w1", (RNG.standard_normal((16, 64)) * 0.2).astype("float32"))
    b1 = g.init("b1", (RNG.standard_normal(64) * 0.1).astype("float32"))
    y = g.node("Gelu", [g.node("Add", [g.node("MatMul", [y, w1]), b1])])
    w2 = g.init("w2", (RNG.standard_normal((64, 16)) * 0.2).astype("float32"))
    y = g.node("MatMul", [y, w2])
    y = g.node("Add", [g.node("Transpose", [y], perm=[0, 3, 1, 2]), "data"])
    model = g.model({"data": ([1, 16, 14, 14], np.float32)}, [y], "convnext", opset=20)
    x = {"data": RNG.standard_normal((1, 16, 14, 14)).astype("float32")}
    m, out = _run(model, x)
    ops = [o for (_, o, _) in m.executor.steps]
    conv = next(i for i, o in enumerate(ops) if o.startswith("dnnl.conv2d_bias"))
    assert ops[conv + 1] == "nn.layer_norm", ops
    assert "dnnl.dense_bias_gelu" in [c.split("(")[0] for c in _composites(m)]
    _close(out, run_onnxruntime(model, x)[0])
