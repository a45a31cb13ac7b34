"""Grouped convolutions of narrow groups (``primitives.WIDEN_GROUPS``): where oneDNN would run
one as im2col + GEMM (3.2 without AVX-512 for fewer than 8 channels a group: ResNeXt's and
DPN's 32 groups of 4), it runs as the convolution of f times fewer, f times wider groups with
a block-diagonal kernel, on a direct kernel. Results against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view
from onnx import helper

import xrelay
from xrelay.frontends.onnx import from_onnx
from xrelay.runtime.dnnl import primitives
from xrelay.runtime.dnnl.library import dnnl_library
from xrelay.runtime.parallel import serial_jobs
from xrelay.testing import platform
from xrelay.testing.onnx_models import GraphBuilder, assert_like_onnxruntime

RNG = np.random.default_rng(11)


def _grouped_conv(x: np.ndarray, w_oi: np.ndarray, groups: int) -> np.ndarray:
    """A stride-1, unpadded convolution of ``groups`` groups in float64: x (C, *space), w (O, I, *taps)."""
    taps = w_oi.shape[2:]
    win = sliding_window_view(x.astype(np.float64), taps, axis=tuple(range(1, x.ndim)))  # (C, *out, *taps)
    ci, co = x.shape[0] // groups, w_oi.shape[0] // groups
    outs = []
    for g in range(groups):
        xg, wg = win[g * ci : (g + 1) * ci], w_oi[g * co : (g + 1) * co].astype(np.float64)
        nt = len(taps)  # (x's tap axes are its last: after the output's)
        outs.append(np.tensordot(wg, xg, axes=([1, *range(2, 2 + nt)], [0, *range(xg.ndim - nt, xg.ndim)])))
    return np.concatenate(outs)


@pytest.mark.parametrize("layout,f", [("OIHW", 2), ("HWIO", 2), ("HWIO", 4), ("OHWI", 4), ("OIW", 2), ("WIO", 4)])
def test_the_widened_kernel_computes_the_grouped_convolution(layout, f):
    groups, ci, co = 8, 3, 2
    taps = (3,) if "H" not in layout else (3, 2)
    w_oi = RNG.standard_normal((groups * co, ci, *taps)).astype(np.float32)
    canonical = "OIHW" if len(taps) == 2 else "OIW"
    order = [canonical.index(ch) for ch in layout]  # the stored axes, as w_oi's
    stored = np.ascontiguousarray(np.transpose(w_oi, order))
    wide = primitives._widened_kernel(stored, layout, groups, f)
    back = np.transpose(wide, np.argsort(order))  # (O, f * I, *taps)
    assert back.shape == (groups * co, f * ci, *taps) and wide.dtype == np.float32
    # block-diagonal: each output channel reads its own group's inputs only
    assert np.count_nonzero(back) == np.count_nonzero(w_oi)
    x = RNG.standard_normal((groups * ci, *[t + 4 for t in taps])).astype(np.float32)
    np.testing.assert_allclose(_grouped_conv(x, back, groups // f), _grouped_conv(x, w_oi, groups), rtol=0, atol=1e-12)


def _model(channels: int, groups: int, spatial: int, stride: int):
    """A grouped 3x3 convolution with a bias and a ReLU, then a 1x1 convolution."""
    g = GraphBuilder(5)
    y = g.node("Relu", [g.conv("data", channels, channels, 3, stride=stride, group=groups, bias=True)])
    y = g.conv(y, channels, 16, 1, bias=True)
    return g.model({"data": ([1, channels, spatial, spatial], np.float32)}, [y], "narrow_groups")


def _model_1d(channels: int, groups: int, length: int):
    """A grouped 1-D convolution (NCW) of 5 taps."""
    g = GraphBuilder(6)
    w = g.init("w", RNG.standard_normal((channels, channels // groups, 5)).astype(np.float32) * 0.3)
    g.nodes.append(helper.make_node("Conv", ["data", w], ["y"], kernel_shape=[5], pads=[2, 2], group=groups))
    return g.model({"data": ([1, channels, length], np.float32)}, ["y"], "narrow_groups_1d")


def _conv_steps_of(compiled):
    """The convolution steps of a compiled oneDNN function."""
    return [s for s in compiled.dnnl_plan.steps if s.family == "conv"]


def _conv_steps(m):
    """The oneDNN convolution steps of a built module (the grouped one first)."""
    ex = m.executor
    return [s for (_, _, c), b in zip(ex.steps, ex.step_backends) if b == "dnnl" for s in _conv_steps_of(c)]


def _run(model, x, monkeypatch, widen):
    monkeypatch.setattr(primitives, "WIDEN_GROUPS", widen)
    mod, params = from_onnx(model)
    m = xrelay.build(mod, params, opt_level=3)
    m.set_input(data=x)
    m.run()
    return m.get_output(0).numpy(), _conv_steps(m)



@pytest.mark.parametrize(
    "make,shape,widened",
    [
        (lambda: _model(32, 8, 14, 1), (1, 32, 14, 14), True),  # 8 groups of 4
        (lambda: _model(32, 8, 15, 2), (1, 32, 15, 15), True),  # strided
        (lambda: _model(16, 8, 12, 1), (1, 16, 12, 12), True),  # 8 groups of 2
        # NCW data: oneDNN 3.2 without AVX-512 has im2col only, at any width: kept
        (lambda: _model_1d(32, 8, 40), (1, 32, 40), False),
    ],
)
def test_narrow_groups_run_widened_where_onednn_would_run_im2col(make, shape, widened, monkeypatch):
    assert dnnl_library() is not None
    model = make()
    x = RNG.standard_normal(shape).astype(np.float32)
    plain, plain_steps = _run(model, x, monkeypatch, ())
    out, steps = _run(model, x, monkeypatch, (2, 4))
    assert_like_onnxruntime(model, {"data": x}, out)
    assert_like_onnxruntime(model, {"data": x}, plain)
    # the output follows the input
    other, _ = _run(model, RNG.standard_normal(shape).astype(np.float32), monkeypatch, (2, 4))
    assert not np.allclose(other, out)
    grouped, was = steps[0], plain_steps[0]
    how = grouped.origins.get(primitives._ARG_WEIGHTS, (None, ()))[1]
    if not platform.avx512():
        # oneDNN 3.2 without AVX-512: im2col + GEMM for fewer than 8 channels a group
        assert primitives._im2col(was.impl.encode()), was.impl
        assert (how[:1] == ("groups widened",)) == widened, (how, grouped.impl)
    if how:  # widened: onto a direct kernel
        assert not primitives._im2col(grouped.impl.encode()), grouped.impl
    else:  # a direct kernel already, or none for any width: as it was
        assert grouped.impl == was.impl


def test_widening_on_any_cpu_gives_onnxruntimes_results(monkeypatch):
    """Whatever oneDNN chooses on this CPU: where it is told the first descriptor is im2col,
    the convolution runs widened (each f tried in turn) and computes the same."""
    model = _model(32, 8, 14, 1)
    x = RNG.standard_normal((1, 32, 14, 14)).astype(np.float32)
    asked: list[bytes] = []

    def first_is_im2col(impl: bytes) -> bool:
        asked.append(impl)
        return len(asked) % 2 == 1  # (each grouped convolution: its own, then its widened one)

    monkeypatch.setattr(primitives, "_im2col", first_is_im2col)
    out, steps = _run(model, x, monkeypatch, (2, 4))
    assert steps[0].origins[primitives._ARG_WEIGHTS][1] == ("groups widened", 2)
    assert_like_onnxruntime(model, {"data": x}, out)


def test_the_one_thread_program_cuts_a_widened_convolution_in_parts(monkeypatch):
    """A busy machine's program (one thread, big convolutions cut in parts of output rows,
    ``dnnl.parts``): the widened convolution's parts read the widened kernel."""
    monkeypatch.setenv("XRELAY_DNNL_PARTS", "1")
    model = _model(32, 8, 56, 1)
    x = RNG.standard_normal((1, 32, 56, 56)).astype(np.float32)
    mod, params = from_onnx(model)
    m = xrelay.build(mod, params, opt_level=3, threads=2)
    ex = m.executor
    first = next(c for (_, _, c), b in zip(ex.steps, ex.step_backends) if b == "dnnl" and _conv_steps_of(c))
    (grouped,) = _conv_steps_of(first)
    if not platform.avx512():
        assert grouped.origins[primitives._ARG_WEIGHTS][1][0] == "groups widened"
    assert getattr(first, "thunk_parts", None) is not None
    m.set_input(data=x)
    with serial_jobs():
        for t in ex._thunks_one:
            t()
    ex.pool.park()
    assert_like_onnxruntime(model, {"data": x}, m.get_output(0).numpy())
