"""Op forms exported models use that the zoo's 19 did not, run by oneDNN inside the planned
arena, within 1e-4 of onnxruntime:

* 1-D convolutions (Whisper's stem, wav2vec2's feature encoder and positional convolution) as
  oneDNN convolutions with their bias and epilogue as post-ops. The pattern table always
  grouped them (``dnnl.conv1d_*``); the reader took only 2-D convolutions, so each such
  function fell back to the native kernels' reference convolution with output-sized
  temporaries outside the arena;
* ``nn.instance_norm`` (ONNX InstanceNormalization, and GroupNorm as torch exports it: reshape
  to ``(N, groups, -1)``, InstanceNormalization with unit scale and zero shift, reshape back,
  per-channel multiply and add) as oneDNN's layer normalisation of its rows plus, when its
  scale or shift is not neutral, one in-place binary step (the reference kernel's temporaries
  were outside the arena: PoolFormer, MobileViTv2)."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay.frontends.onnx import from_onnx
from xrelay.testing.onnx_models import GraphBuilder, run_onnxruntime

pytestmark = pytest.mark.usefixtures("onednn_matmul")  # (the oneDNN steps these read)
RNG = np.random.default_rng(0)


def _build(model, x, spread=0.1):
    """The built module after one run, checked against onnxruntime and for nothing outside
    the arena."""
    mod, params = from_onnx(model)
    m = xrelay.build(mod, params, opt_level=3)
    m.set_input(**x)
    m.run()
    out = m.get_output(0).numpy()
    ref = run_onnxruntime(model, x)[0]
    assert out.shape == ref.shape and np.all(np.isfinite(out)) and float(np.std(ref)) > spread
    assert float(np.max(np.abs(out - ref))) <= 1e-4 * max(1.0, float(np.max(np.abs(ref))))
    report = m.executor.outside_arena()
    assert (report.held_bytes, report.run_bytes) == (0, 0), report.steps
    return m


def _conv1d(g, x, cin, cout, k, stride=1, pad=0, group=1, dilation=1, bias=True):
    w = g.init(g.name("w"), (RNG.standard_normal((cout, cin // group, k)) / np.sqrt(cin // group * k)).astype("float32"))
    ins = [x, w]
    if bias:
        ins.append(g.init(g.name("b"), (RNG.standard_normal(cout) * 0.1).astype("float32")))
    return g.node("Conv", ins, kernel_shape=[k], strides=[stride], pads=[pad, pad], group=group,
                  dilations=[dilation])  # fmt: skip


def _steps(m):
    ex = m.executor
    return [(b, getattr(c, "dnnl_plan", None)) for (_, _, c), b in zip(ex.steps, ex.step_backends)]


@pytest.mark.parametrize(
    "case",
    [
        # Whisper: conv(k3, pad 1) + GELU, then the same with stride 2
        dict(cin=16, cout=24, k=3, stride=1, pad=1, act="Gelu"),
        dict(cin=16, cout=24, k=3, stride=2, pad=1, act="Gelu"),
        # wav2vec2's feature encoder: wide stride, no bias
        dict(cin=8, cout=16, k=10, stride=5, pad=0, act="Gelu", bias=False),
        # wav2vec2's positional convolution: grouped, even kernel, padded
        dict(cin=32, cout=32, k=16, stride=1, pad=8, group=4, act="Gelu"),
        dict(cin=16, cout=16, k=5, stride=1, pad=4, dilation=2, act="Relu"),
    ],
)
def test_conv1d_with_bias_and_activation_is_a_onednn_step(case):
    case = dict(case)
    act = case.pop("act")
    g = GraphBuilder(1)
    y = g.node(act, [_conv1d(g, "data", **case)])
    model = g.model({"data": ([1, case["cin"], 40], np.float32)}, [y], "conv1d", opset=20)
    x = {"data": RNG.standard_normal((1, case["cin"], 40)).astype("float32")}
    m = _build(model, x, spread=0.05)
    steps = _steps(m)
    planned = [p for b, p in steps if b == "dnnl" and p is not None]
    assert len(planned) == 1 and [s.family for s in planned[0].steps] in (["conv"], ["depthwise"], ["conv", "other"]), planned
    assert all(b != "native" for b, _ in steps[1:])  # (the first step copies the input in)


def _dnnl_step_names(m):
    ex = m.executor
    return [s.name for (_, _, c), b in zip(ex.steps, ex.step_backends) if b == "dnnl" and hasattr(c, "dnnl_plan")
            for s in c.dnnl_plan.steps]  # fmt: skip


@pytest.mark.parametrize("neutral", [False, True])
@pytest.mark.parametrize("shape", [(2, 6, 5, 7), (1, 4, 30)])
def test_instance_norm_is_a_onednn_layer_norm_of_rows(shape, neutral):
    g = GraphBuilder(1)
    c = shape[1]
    scale = np.ones(c, np.float32) if neutral else (RNG.uniform(0.5, 1.5, c)).astype("float32")
    bias = np.zeros(c, np.float32) if neutral else (RNG.standard_normal(c) * 0.3).astype("float32")
    y = g.node("InstanceNormalization", [g.node("Tanh", ["data"]), g.init("s", scale), g.init("b", bias)], epsilon=1e-5)
    model = g.model({"data": (list(shape), np.float32)}, [y], "instance_norm", opset=20)
    x = {"data": (RNG.standard_normal(shape) * 2 + 0.5).astype("float32")}
    m = _build(model, x)
    names = _dnnl_step_names(m)
    assert names.count("nn.instance_norm") == 1, names
    assert names.count("nn.instance_norm affine") == (0 if neutral else 1), names


def test_group_norm_as_torch_exports_it_runs_on_onednn():
    """PoolFormer's GroupNorm(1, C) after a convolution: the convolution runs channels-last,
    the norm over the channels-first rows."""
    g = GraphBuilder(2)
    y = g.conv("data", 4, 8, 3, bias=True)
    r = g.node("Reshape", [y, g.const(np.array([1, 2, -1], np.int64))])
    r = g.node("InstanceNormalization", [r, g.const(np.ones(2, np.float32)), g.const(np.zeros(2, np.float32))],
               epsilon=1e-5)  # fmt: skip
    r = g.node("Reshape", [r, g.const(np.array([1, 8, 10, 10], np.int64))])
    gamma = g.init("gamma", RNG.uniform(0.5, 1.5, (8, 1, 1)).astype("float32"))
    beta = g.init("beta", (RNG.standard_normal((8, 1, 1)) * 0.3).astype("float32"))
    y = g.node("Add", [g.node("Mul", [r, gamma]), beta])
    model = g.model({"data": ([1, 4, 10, 10], np.float32)}, [y], "group_norm", opset=20)
    x = {"data": RNG.standard_normal((1, 4, 10, 10)).astype("float32")}
    m = _build(model, x)
    assert "nn.instance_norm" in _dnnl_step_names(m)


@pytest.mark.parametrize("bias", [False, True])
def test_linear_on_flattened_rows_is_one_dense(bias):
    """torch.export's Linear on a (batch, tokens, features) input: the rows flattened, a 2-D
    matmul (plus bias), the rows viewed back; a SiLU-gated MLP after it (Llama's). Each
    product is one ``nn.dense`` on the 3-D input (``dense_without_flattening``), so the gate,
    its activation and the product with the up projection are one oneDNN step: no reshape
    and no native step is left."""
    g = GraphBuilder(5)

    def linear(x, n):
        w = g.init(g.name("w"), (RNG.standard_normal((16, n)) * 0.3).astype("float32"))
        y = g.node("MatMul", [g.node("Reshape", [x, g.const(np.array([8, 16], np.int64))]), w])
        if bias:
            y = g.node("Add", [y, g.init(g.name("b"), (RNG.standard_normal(n) * 0.1).astype("float32"))])
        return g.node("Reshape", [y, g.const(np.array([1, 8, n], np.int64))])

    gate = linear("data", 24)
    y = g.node("Mul", [g.node("Mul", [gate, g.node("Sigmoid", [gate])]), linear("data", 24)])
    model = g.model({"data": ([1, 8, 16], np.float32)}, [y], "gated_mlp", opset=17)
    m = _build(model, {"data": RNG.standard_normal((1, 8, 16)).astype("float32")})
    ex = m.executor
    native = [ops for (_, ops, _), b in zip(ex.steps, ex.step_backends) if b == "native" and ops != "copy"]
    assert native == [], native
    names = _dnnl_step_names(m)
    assert len(names) == 2 and not any("reshape" in n for n in names), names
