"""1-D convolutions (Whisper's stem, wav2vec2's feature encoder and positional convolution)
run as oneDNN convolutions with their bias and epilogue as post-ops, inside the planned arena,
within 1e-4 of onnxruntime. The pattern table always grouped them (``dnnl.conv1d_*``); the
reader took only 2-D convolutions, so each such function fell back to the native kernels'
reference convolution with output-sized temporaries outside the arena."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay.frontends.onnx import from_onnx
from xrelay.testing.onnx_models import GraphBuilder, run_onnxruntime

RNG = np.random.default_rng(0)


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
    mod, params = from_onnx(model)
    m = xrelay.build(mod, params, opt_level=3)
    m.set_input(**x)
    m.run()
    out = m.get_output(0).numpy()
    ref = run_onnxruntime(model, x)[0]
    assert out.shape == ref.shape and np.all(np.isfinite(out)) and float(np.std(ref)) > 0.05
    assert float(np.max(np.abs(out - ref))) <= 1e-4 * max(1.0, float(np.max(np.abs(ref))))
    steps = _steps(m)
    planned = [p for b, p in steps if b == "dnnl" and p is not None]
    assert len(planned) == 1 and [s.family for s in planned[0].steps] in (["conv"], ["depthwise"], ["conv", "other"]), planned
    assert all(b != "native" for b, _ in steps[1:])  # (the first step copies the input in)
    report = m.executor.outside_arena()
    assert (report.held_bytes, report.run_bytes) == (0, 0), report.steps
