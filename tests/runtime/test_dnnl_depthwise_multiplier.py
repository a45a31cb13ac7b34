"""Depthwise convolutions with a channel multiplier (``backend.dnnl.partition.
depthwise_multiplier``): ``groups`` = the input's channels and k times as many outputs (FastViT's
stride-2 patch embeddings, PiT's pooling) run as the input's channels repeated k times (an
elementwise loop) and a plain depthwise convolution, on oneDNN's depthwise kernel instead of
im2col + GEMM. Results against onnxruntime; the repeat's kernels against ``np.repeat``."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.backend.dnnl import partition
from xrelay.dialects import module_op
from xrelay.frontends.onnx import from_onnx
from xrelay.kernels.shape_ops import repeat
from xrelay.runtime.dnnl import primitives
from xrelay.runtime.dnnl.library import dnnl_library
from xrelay.testing.onnx_models import GraphBuilder, run_like_onnxruntime

RNG = np.random.default_rng(17)


def _model(channels: int, k: int, taps: int, stride: int):
    """A depthwise convolution of multiplier ``k`` with a bias and a ReLU, then a 1x1 convolution."""
    g = GraphBuilder(9)
    y = g.node("Relu", [g.conv("data", channels, k * channels, taps, stride=stride, group=channels, bias=True)])
    y = g.conv(y, k * channels, 8, 1, bias=True)
    return g.model({"data": ([1, channels, 20, 20], np.float32)}, [y], "depthwise_multiplier")


def _steps(m):
    ex = m.executor
    return [s for (_, _, c), b in zip(ex.steps, ex.step_backends) if b == "dnnl" for s in c.dnnl_plan.steps]


@pytest.mark.parametrize("channels,k,taps,stride", [(8, 2, 7, 2), (6, 3, 3, 1), (16, 2, 5, 2)])
def test_a_depthwise_multiplier_runs_repeated_on_the_depthwise_kernel(channels, k, taps, stride):
    assert dnnl_library() is not None
    model = _model(channels, k, taps, stride)
    feeds = [{"data": RNG.standard_normal((1, channels, 20, 20)).astype(np.float32)} for _ in range(2)]
    m = run_like_onnxruntime(model, feeds)  # (each output like onnxruntime's, and reading its input)
    labels = [label for _, label, _ in m.executor.steps]
    assert "repeat as one loop" in [t[0] for _, _, c in m.executor.steps for t in c.thunks], labels
    depthwise = [s for s in _steps(m) if s.family == "depthwise"]
    assert len(depthwise) == 1 and not primitives._im2col(depthwise[0].impl.encode()), depthwise
    report = m.executor.outside_arena()
    assert (report.held_bytes, report.run_bytes, report.steps) == (0, 0, [])


def test_without_the_rewrite_onednn_runs_it_as_im2col(monkeypatch):
    """What the rewrite is for: the same model without it is one oneDNN grouped convolution
    on im2col + GEMM (oneDNN 3.2's depthwise kernels take a multiplier of 1 only)."""
    monkeypatch.setattr(partition, "depthwise_multiplier", lambda module: 0)
    mod, params = from_onnx(_model(8, 2, 7, 2))
    m = xrelay.build(mod, params, opt_level=3)
    (conv,) = [s for s in _steps(m) if s.family == "depthwise"]
    assert primitives._im2col(conv.impl.encode()), conv.impl
    assert not any(t[0].startswith("repeat") for _, _, c in m.executor.steps for t in c.thunks)


def test_other_grouped_convolutions_are_left_as_they_are():
    def count(groups, cin, cout):
        x = relay.var("x", shape=(1, cin, 6, 6), dtype="float32")
        w = relay.const(RNG.standard_normal((cout, cin // groups, 3, 3)).astype(np.float32))
        y = relay.nn.conv2d(x, w, padding=(1, 1, 1, 1), groups=groups, channels=cout, kernel_size=(3, 3))
        mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function([x], y)))
        return partition.depthwise_multiplier(module_op(mod))

    assert count(4, 4, 8) == 1 and count(4, 4, 12) == 1
    assert count(4, 4, 4) == 0  # depthwise already
    assert count(2, 4, 8) == 0  # two channels a group
    assert count(1, 4, 8) == 0


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_repeat_into_its_destination_without_a_temporary(axis):
    x = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    want = np.repeat(x, 3, axis=axis)
    out = np.full(want.shape, np.nan, np.float32)
    assert repeat(x, out=out, repeats=3, axis=axis) is out
    np.testing.assert_array_equal(out, want)
    strided = np.full((want.shape[0], 2 * want.shape[1], want.shape[2]), np.nan, np.float32)[:, ::2]
    np.testing.assert_array_equal(repeat(x, out=strided, repeats=3, axis=axis), want)  # (not contiguous)
    np.testing.assert_array_equal(repeat(x, repeats=3, axis=axis), want)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("axis,shape", [(3, (1, 40, 40, 24)), (1, (1, 24, 40, 40))])
def test_repeat_is_an_elementwise_loop_with_np_repeats_values(threads, axis, shape):
    x = relay.var("x", shape=shape, dtype="float32")
    y = relay.add(relay.repeat(x, 2, axis=axis), relay.const(np.float32(1.0)))
    mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function([x], y)))
    m = xrelay.build(mod, None, backends=("native",), threads=threads)
    v = RNG.standard_normal(shape).astype(np.float32)
    m.set_input(x=v)
    m.run()
    labels = [t[0] for _, _, c in m.executor.steps for t in c.thunks]
    assert "repeat, add as one loop" in labels, labels
    np.testing.assert_array_equal(m.get_output(0).numpy(), np.repeat(v, 2, axis=axis) + np.float32(1.0))
