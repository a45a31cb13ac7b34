"""Convolutions of narrow groups on the shim's kernel for AVX2 (``primitives._grouped``,
``grouped_conv.h``): where oneDNN would run its jit:avx2 direct kernel or im2col for a
channels-last float32 convolution of groups of at most 64 input channels and a multiple of
8 output channels, three taps a row and a column stride of 1 or 2, the shim's kernel runs
it. Results against onnxruntime, the epilogue, bits across thread counts, and the shapes it
refuses."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

import xrelay
from xrelay.frontends.onnx import from_onnx
from xrelay.runtime.dnnl import primitives
from xrelay.runtime.dnnl.library import dnnl_library
from xrelay.testing.onnx_models import (
    GraphBuilder,
    assert_like_onnxruntime,
    dnnl_plan_steps,
    run_data,
)

RNG = np.random.default_rng(9)
OURS = "grouped_conv:avx2"


def _model(channels, groups, hw, stride, kh, pads, out=None, dilation=1, batch=1, seed=3):
    """A grouped convolution of a (kh, 3) kernel with a bias and a ReLU, then a 1x1
    convolution (so the grouped one's output is a temporary of its function)."""
    g = GraphBuilder(seed)
    out = out or channels
    kw = 3
    w = g.init("w", RNG.standard_normal((out, channels // groups, kh, kw)).astype(np.float32) * 0.3)
    b = g.init("b", RNG.standard_normal(out).astype(np.float32) * 0.1)
    g.nodes.append(helper.make_node(
        "Conv", ["data", w, b], ["c"], kernel_shape=[kh, kw], strides=[stride, stride], pads=pads,
        group=groups, dilations=[dilation, dilation],
    ))  # fmt: skip
    y = g.node("Relu", ["c"])
    y = g.conv(y, out, 16, 1, bias=True)
    return g.model({"data": ([batch, channels, *hw], np.float32)}, [y], "grouped")


def _built(model, threads=None, grouped="1", monkeypatch=None):
    monkeypatch.setenv("XRELAY_DNNL_GROUPED", grouped)
    mod, params = from_onnx(model)
    return xrelay.build(mod, params, opt_level=3, **({} if threads is None else {"threads": threads}))


def _grouped_steps(m):
    """The step running the grouped convolution (ours or oneDNN's): the first of the
    module's oneDNN steps with products (the 1x1 convolution comes after it), in a list."""
    return [s for s in dnnl_plan_steps(m) if s.macs][:1]


@pytest.mark.parametrize(
    "channels,groups,hw,stride,kh,pads,batch",
    [
        (32, 4, (14, 14), 1, 3, [1, 1, 1, 1], 1),  # groups of 8: a tile of 8 pixels, then one of 6
        (48, 6, (15, 13), 2, 3, [1, 1, 1, 1], 1),  # stride 2, odd sizes
        (64, 4, (9, 9), 1, 3, [0, 0, 0, 0], 2),  # groups of 16 (two registers of outputs), two images
        (24, 3, (7, 7), 1, 3, [1, 1, 1, 1], 1),  # a row of 7: one tile
        (16, 2, (12, 11), 1, 5, [2, 1, 2, 1], 1),  # 5 x 3 taps
        (40, 5, (8, 17), 2, 1, [0, 1, 0, 1], 1),  # 1 x 3 taps, stride 2
        (96, 12, (10, 30), 1, 3, [1, 2, 1, 0], 1),  # more padding left than right
    ],
)
def test_narrow_groups_run_on_the_shims_kernel_with_onnxruntimes_results(
    channels, groups, hw, stride, kh, pads, batch, monkeypatch
):
    lib = dnnl_library()
    assert lib is not None
    model = _model(channels, groups, hw, stride, kh, pads, batch=batch)
    x = RNG.standard_normal((batch, channels, *hw)).astype(np.float32)
    theirs = _built(model, grouped="0", monkeypatch=monkeypatch)
    ours = _built(model, monkeypatch=monkeypatch)
    (was,) = _grouped_steps(theirs)
    (now,) = _grouped_steps(ours)
    if lib.xr_dnnl_gemm_built() and (was.impl == "jit:avx2" or primitives._im2col(was.impl.encode())):
        assert now.impl == OURS
    else:  # (another CPU's kernel: oneDNN's, as it was)
        assert now.impl == was.impl
    out = run_data(ours, x)
    assert np.all(np.isfinite(out))
    assert_like_onnxruntime(model, {"data": x}, out)
    assert_like_onnxruntime(model, {"data": x}, run_data(theirs, x))
    other = run_data(ours, RNG.standard_normal(x.shape).astype(np.float32))
    assert not np.allclose(other, out)  # (the output follows the input)


def _epilogue_model():
    """Grouped 3x3 convolutions with their epilogues: + bias + a residual, then ReLU; then
    + bias, then ReLU6 (Clip 0..6)."""
    g = GraphBuilder(4)
    w1 = g.init("w1", RNG.standard_normal((32, 8, 3, 3)).astype(np.float32) * 0.5)
    w2 = g.init("w2", RNG.standard_normal((32, 8, 3, 3)).astype(np.float32) * 0.5)
    b1 = g.init("b1", RNG.standard_normal(32).astype(np.float32))
    b2 = g.init("b2", RNG.standard_normal(32).astype(np.float32))
    lo, hi = g.init("lo", np.array(0.0, np.float32)), g.init("hi", np.array(6.0, np.float32))
    g.nodes += [
        helper.make_node("Conv", ["data", w1, b1], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=4),
        helper.make_node("Add", ["c1", "data"], ["s"]),
        helper.make_node("Relu", ["s"], ["r"]),
        helper.make_node("Conv", ["r", w2, b2], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=4),
        helper.make_node("Clip", ["c2", lo, hi], ["y"]),
    ]
    return g.model({"data": ([1, 32, 13, 13], np.float32)}, ["y"], "grouped_epilogues")


def test_residual_relu_and_relu6_run_in_the_kernels_epilogue(monkeypatch):
    lib = dnnl_library()
    if not lib.xr_dnnl_gemm_built():  # (a CPU without AVX2: oneDNN's kernel, checked above)
        return
    model = _epilogue_model()
    m = _built(model, monkeypatch=monkeypatch)
    ex = m.executor
    plans = [c.dnnl_plan for (_, _, c), b in zip(ex.steps, ex.step_backends) if b == "dnnl"]
    ours = [p for p in plans if any(s.impl == OURS for s in p.steps)]
    # each convolution one step of its function: no eltwise or binary primitive after it
    assert len(ours) == 2 and all(len(p.steps) == 1 for p in ours), [[s.impl for s in p.steps] for p in plans]
    assert any(_relay_ops(p) >= {"add", "nn.relu"} for p in ours), [_relay_ops(p) for p in ours]
    assert any("clip" in _relay_ops(p) for p in ours), [_relay_ops(p) for p in ours]
    x = RNG.standard_normal((1, 32, 13, 13)).astype(np.float32) * 3
    out = run_data(m, x)
    assert 0 < np.count_nonzero(out == 6.0) < out.size and np.count_nonzero(out == 0.0) > 0  # (both clips bite)
    assert_like_onnxruntime(model, {"data": x}, out)


def _relay_ops(plan):
    """The Relay ops a function's step was made of (its name: ``dnnl.conv2d_bias_sum(nn.conv2d+add+add)``)."""
    name = plan.steps[0].name
    return set(name[name.index("(") + 1 : -1].split("+")) if "(" in name else set()


def test_the_bits_do_not_depend_on_the_threads(monkeypatch):
    model = _model(64, 8, (28, 28), 1, 3, [1, 1, 1, 1])
    x = RNG.standard_normal((1, 64, 28, 28)).astype(np.float32)
    one, two = _built(model, 1, monkeypatch=monkeypatch), _built(model, 2, monkeypatch=monkeypatch)
    if dnnl_library().xr_dnnl_gemm_built():
        assert [s.impl for s in _grouped_steps(one)] == [s.impl for s in _grouped_steps(two)] == [OURS]
    a = run_data(one, x)
    for _ in range(3):
        assert np.array_equal(run_data(two, x), a)


@pytest.mark.parametrize(
    "what,change",
    [
        ("a group of 4 outputs", {"co": 4, "c": 32, "groups": 8, "ci": 4}),
        ("5 taps a row", {"kw": 5}),
        ("column stride 3", {"sw": 3}),
        ("a group of 65 inputs", {"ci": 65, "c": 130, "groups": 2}),
        ("padding past the taps", {"pl": 3}),
        ("an output row that reads no input", {"oh": 10}),
    ],
)
def test_the_kernel_refuses_shapes_it_does_not_run(what, change):
    lib = dnnl_library()
    if not lib.xr_dnnl_gemm_built():
        return
    shape = {"n": 1, "h": 8, "w": 8, "c": 32, "groups": 4, "ci": 8, "co": 8, "kh": 3, "kw": 3, "sh": 1, "sw": 1,
             "pt": 1, "pl": 1, "oh": 8, "ow": 8}  # fmt: skip
    ops = (np.zeros(4, np.int32), np.zeros(4, np.float32), np.zeros(4, np.float32))
    args = [a.ctypes.data for a in ops]
    good = lib.xr_dnnl_gconv(primitives._i64(list(shape.values())), 0, 0, *args)
    assert good
    lib.xr_dnnl_gconv_free(good)
    assert not lib.xr_dnnl_gconv(primitives._i64(list({**shape, **change}.values())), 0, 0, *args), what


@pytest.mark.parametrize(
    "channels,groups,out,kh,dilation",
    [(32, 8, 32, 3, 1), (32, 4, 32, 3, 2)],  # groups of 4 (widened instead); dilated
)
def test_other_grouped_convolutions_stay_on_onednn(channels, groups, out, kh, dilation, monkeypatch):
    model = _model(channels, groups, (14, 14), 1, kh, [dilation] * 4, out=out, dilation=dilation)
    m = _built(model, monkeypatch=monkeypatch)
    assert OURS not in [s.impl for s in _grouped_steps(m)]
    x = RNG.standard_normal((1, channels, 14, 14)).astype(np.float32)
    assert_like_onnxruntime(model, {"data": x}, run_data(m, x))
