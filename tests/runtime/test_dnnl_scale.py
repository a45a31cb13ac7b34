"""A constant per-channel scale after a biased matmul or convolution (ConvNeXt's layer
scale) is folded into the weights and the bias by the oneDNN reader: one step with the
residual add as its sum post-op, within 1e-4 of onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay.frontends.onnx import from_onnx
from xrelay.testing.onnx_models import GraphBuilder, run_onnxruntime

RNG = np.random.default_rng(11)


def _run(model, x):
    mod, params = from_onnx(model)
    m = xrelay.build(mod, params, opt_level=3)
    m.set_input(**x)
    m.run()
    ex = m.executor
    names = [ops.split("(")[0] for _, ops, _ in ex.steps]
    return m.get_output(0).numpy(), names


def _close(out, ref):
    assert np.all(np.isfinite(out)) and float(np.std(ref)) > 0.1
    assert float(np.max(np.abs(out - ref))) <= 1e-4 * max(1.0, float(np.max(np.abs(ref))))


def _convnext_block(scale_shape, bias2=True):
    """torchvision's CNBlock: 7x7 depthwise, permute to NHWC, layer norm, MLP with GELU,
    the layer scale, permute back, the residual (``bias2``: the second matmul's bias)."""
    g = GraphBuilder(12)
    c = 16
    stem = g.conv("data", c, c, 1, bias=True)  # (the block's input: a convolution's result)
    y = g.conv(stem, c, c, 7, pad=3, group=c, bias=True)
    y = g.node("Transpose", [y], perm=[0, 2, 3, 1])
    ln_w = g.init("ln_w", (1 + 0.1 * RNG.standard_normal(c)).astype("float32"))
    ln_b = g.init("ln_b", (0.1 * RNG.standard_normal(c)).astype("float32"))
    y = g.node("LayerNormalization", [y, ln_w, ln_b], axis=-1, epsilon=1e-6)
    w1 = g.init("w1", (RNG.standard_normal((c, 4 * c)) * 0.3).astype("float32"))
    b1 = g.init("b1", (RNG.standard_normal(4 * c) * 0.1).astype("float32"))
    y = g.node("Gelu", [g.node("Add", [g.node("MatMul", [y, w1]), b1])])
    w2 = g.init("w2", (RNG.standard_normal((4 * c, c)) * 0.3).astype("float32"))
    b2 = g.init("b2", (RNG.standard_normal(c) * 0.1).astype("float32"))
    y = g.node("MatMul", [y, w2])
    if bias2:
        y = g.node("Add", [y, b2])
    gamma = g.init("gamma", (0.5 + RNG.random(scale_shape)).astype("float32"))
    if len(scale_shape) == 3:  # (C, 1, 1) after the permute back, as torchvision writes it
        y = g.node("Mul", [gamma, g.node("Transpose", [y], perm=[0, 3, 1, 2])])
    else:
        y = g.node("Transpose", [g.node("Mul", [y, gamma])], perm=[0, 3, 1, 2])
    y = g.node("Add", [y, stem])
    return g.model({"data": ([1, c, 8, 8], np.float32)}, [y], "cnblock", opset=20)


@pytest.mark.parametrize("scale_shape", [(16, 1, 1), (16,), ()], ids=["nchw", "nhwc", "scalar"])
def test_layer_scale_and_residual_join_the_matmul(scale_shape):
    model = _convnext_block(scale_shape)
    x = {"data": RNG.standard_normal((1, 16, 8, 8)).astype("float32")}
    out, names = _run(model, x)
    assert "dnnl.dense_bias_scale_sum" in names, names
    assert "multiply" not in names and "add" not in names, names
    _close(out, run_onnxruntime(model, x)[0])


@pytest.mark.parametrize("scale_shape", [(16, 1, 1), (16,)], ids=["nchw", "nhwc"])
def test_layer_scale_of_a_bias_free_matmul(scale_shape):
    """The second matmul without its bias: the layer scale and the residual still join it
    (``dnnl.dense_scale_sum``), whether the scale comes before or after the permute back."""
    model = _convnext_block(scale_shape, bias2=False)
    x = {"data": RNG.standard_normal((1, 16, 8, 8)).astype("float32")}
    out, names = _run(model, x)
    assert "dnnl.dense_scale_sum" in names, names
    assert "multiply" not in names and "add" not in names, names
    _close(out, run_onnxruntime(model, x)[0])


def test_scale_after_a_reshape_that_moves_the_units_is_not_folded():
    """A matmul's (8, 32) rows viewed as (8, 4, 8), times a constant along the last axis: the
    factor varies within each unit's row, not per unit, so it stays out of the weights."""
    g = GraphBuilder(14)
    w = g.init("w", (RNG.standard_normal((32, 32)) * 0.3).astype("float32"))
    y = g.node("Reshape", [g.node("MatMul", ["data", w]), g.init("shape", np.array([8, 4, 8], np.int64))])
    y = g.node("Mul", [y, g.init("s", (0.5 + RNG.random(8)).astype("float32"))])
    y = g.node("Add", [y, g.init("r", RNG.standard_normal((8, 4, 8)).astype("float32"))])
    model = g.model({"data": ([8, 32], np.float32)}, [y], "reshaped")
    x = {"data": RNG.standard_normal((8, 32)).astype("float32")}
    out, names = _run(model, x)
    assert not any("scale" in n for n in names), names
    _close(out, run_onnxruntime(model, x)[0])


@pytest.mark.parametrize("bias", [True, False], ids=["biased", "bias-free"])
def test_scale_of_a_convolution_with_its_residual(bias):
    """A convolution (with a bias or not), a per-channel constant product and a residual add."""
    g = GraphBuilder(13)
    y = g.conv("data", 16, 16, 3, pad=1, bias=bias)
    y = g.node("Mul", [y, g.init("s", (0.5 + RNG.random((16, 1, 1))).astype("float32"))])
    y = g.node("Relu", [g.node("Add", [y, "data"])])
    model = g.model({"data": ([1, 16, 10, 10], np.float32)}, [y], "convscale")
    x = {"data": RNG.standard_normal((1, 16, 10, 10)).astype("float32")}
    out, names = _run(model, x)
    assert "multiply" not in names, names
    # (without a bias, fold-scale-axis has put the scale into the weights before partitioning)
    assert any(n.startswith("dnnl.conv2d_bias" if bias else "nn.conv2d") for n in names), names
    _close(out, run_onnxruntime(model, x)[0])


def test_a_scale_along_another_axis_stays_a_product():
    """A constant varying over the pixels is no channel scale: the product stays its own
    step, with the same results."""
    g = GraphBuilder(14)
    y = g.conv("data", 8, 8, 3, pad=1, bias=True)
    y = g.node("Mul", [y, g.init("s", (0.5 + RNG.random((1, 10, 10))).astype("float32"))])
    model = g.model({"data": ([1, 8, 10, 10], np.float32)}, [y], "pixscale")
    x = {"data": RNG.standard_normal((1, 8, 10, 10)).astype("float32")}
    out, names = _run(model, x)
    assert not any("_scale" in n for n in names) and "multiply" in names, names
    _close(out, run_onnxruntime(model, x)[0])


def test_scale_after_the_rows_are_viewed_back_folds():
    """A bias-free matmul over (8, 32) rows viewed back as (2, 4, 32), a per-unit constant
    scale and a residual: one oneDNN step (the scale folded into the weights, the add its sum
    post-op), equal to the native kernels' build."""
    from xrelay import relay

    x = relay.var("x", shape=(8, 32))
    r = relay.var("r", shape=(2, 4, 32))
    d = relay.nn.dense(x, relay.const((RNG.standard_normal((32, 32)) * 0.3).astype("float32")))
    y = relay.multiply(relay.reshape(d, (2, 4, 32)), relay.const((0.5 + RNG.random(32)).astype("float32")))
    mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function([x, r], relay.add(y, r))))
    feed = {"x": RNG.standard_normal((8, 32)).astype("float32"), "r": RNG.standard_normal((2, 4, 32)).astype("float32")}
    outs = {}
    for backends in (None, ("native",)):
        m = xrelay.build(mod, None, opt_level=3, backends=backends)
        m.set_input(**feed)
        m.run()
        outs[backends] = m.get_output(0).numpy()
        if backends is None:
            steps = [(ops, b) for (_, ops, _), b in zip(m.executor.steps, m.executor.step_backends)]
    assert ("dnnl.dense_scale_sum(nn.dense+reshape+multiply+add)", "dnnl") in steps, steps
    _close(outs[None], outs[("native",)])
