"""ONNX ``DFT`` built and run (FNet's token mixing: a DFT over the hidden axis, then over the
sequence): the native ``dft`` kernel transforms with pocketFFT from and into the planned
workspace (``dft_scratch_bytes``), and the stack of one DFT's real and imaginary parts that
the next one splits is a movement function (strided copies). Nothing is allocated outside
the arena; before, each DFT allocated its complex signal and spectrum per run (FNet-base:
4.7 MB outside the arena)."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay.frontends.onnx import from_onnx
from xrelay.testing.onnx_models import GraphBuilder, run_onnxruntime

RNG = np.random.default_rng(0)


def _dft(g, x, axis, inverse=0, onesided=0, length=None):
    ins = [
        x,
        "" if length is None else g.const(np.array(length, np.int64)),
        g.const(np.array(axis, np.int64)),
    ]
    return g.node("DFT", ins, inverse=inverse, onesided=onesided)


def _truth(x, axis, inverse, onesided, length):
    """numpy's float64 DFT of the ONNX signal ``x`` (last axis: real, or real and imaginary)."""
    signal = x[..., 0].astype(np.float64) + (1j * x[..., 1] if x.shape[-1] == 2 else 0)
    fft = np.fft.ifft if inverse else np.fft.fft
    y = fft(signal, n=length, axis=axis)
    if onesided:
        y = np.take(y, np.arange(y.shape[axis] // 2 + 1), axis=axis)
    return np.stack([y.real, y.imag], axis=-1)


def _check(model, feeds, truth):
    mod, params = from_onnx(model)
    m = xrelay.build(mod, params, opt_level=3)
    outs = []
    for feed, want in zip(feeds, truth):
        m.set_input(**feed)
        m.run()
        got = m.get_output(0).numpy()
        assert np.all(np.isfinite(got))
        scale = float(np.max(np.abs(want)))
        assert float(np.max(np.abs(got - want))) <= 1e-5 * scale
        ort = run_onnxruntime(model, feed)[0]  # (single precision: further from the truth)
        assert float(np.max(np.abs(got - ort))) <= 1e-4 * scale
        outs.append(got)
    assert float(np.max(np.abs(outs[0] - outs[1]))) > 0.1 * float(np.max(np.abs(outs[0])))
    report = m.executor.outside_arena()
    assert (report.held_bytes, report.run_bytes, report.steps) == (0, 0, [])
    return m


@pytest.mark.parametrize(
    "shape, axis, inverse, onesided, length",
    [
        ((1, 64, 24, 1), 1, 0, 0, None),  # a real signal
        ((2, 12, 10, 2), 2, 1, 0, None),  # complex, inverse
        ((1, 16, 6, 1), 1, 0, 1, None),  # one-sided
        ((1, 9, 5, 2), 1, 0, 0, 12),  # zero-padded to dft_length
        ((3, 20, 2), 1, 1, 0, None),  # rank 3
    ],
)
def test_dft_runs_in_the_arena(shape, axis, inverse, onesided, length):
    g = GraphBuilder(1)
    y = _dft(g, "x", axis, inverse, onesided, length)
    model = g.model({"x": (list(shape), np.float32)}, [y], "dft", opset=20)
    xs = [RNG.standard_normal(shape).astype("float32") for _ in range(2)]
    _check(model, [{"x": x} for x in xs], [_truth(x, axis, inverse, onesided, length) for x in xs])


def test_two_axis_fourier_mixing_runs_in_the_arena():
    """FNet's mixing, ``Re(fft2(x))`` over its sequence and hidden axes, as torch exports it:
    a DFT of the real input over the hidden axis, one over the sequence, the real part."""
    g = GraphBuilder(1)
    x = g.node("Unsqueeze", ["x", g.const(np.array([-1], np.int64))])
    y = _dft(g, _dft(g, x, 2), 1)
    real = g.node("Squeeze", [g.node("Slice", [y, g.const(np.array([0], np.int64)), g.const(np.array([1], np.int64)),
                                                g.const(np.array([-1], np.int64))]), g.const(np.array([-1], np.int64))])  # fmt: skip
    model = g.model({"x": ([1, 32, 48], np.float32)}, [real], "fnet_mixing", opset=20)
    xs = [RNG.standard_normal((1, 32, 48)).astype("float32") for _ in range(2)]
    truth = [np.fft.fft2(x.astype(np.float64), axes=(1, 2)).real[..., None] for x in xs]
    m = _check(model, [{"x": x} for x in xs], [t[..., 0] for t in truth])
    labels = [
        label
        for name, _, c in m.executor.steps
        if name != "memory.copy"
        for label, _, _ in c.thunks
    ]
    assert any("stack" in label and label.endswith("as strided copies") for label in labels), labels


@pytest.mark.parametrize("inverse", [0, 1])
def test_native_dft_gives_the_reference_kernels_bits(inverse):
    """The native kernel transforms in the precision the reference kernel's ``np.fft`` does
    (forward in double precision, inverse in single for float32): the same bits."""
    from xrelay.kernels.algorithm import dft as reference

    g = GraphBuilder(1)
    y = _dft(g, "x", 2, inverse)
    model = g.model({"x": ([2, 5, 40, 2], np.float32)}, [y], "dft_bits", opset=20)
    mod, params = from_onnx(model)
    m = xrelay.build(mod, params, opt_level=3)
    x = (RNG.standard_normal((2, 5, 40, 2)) * 30).astype("float32")
    m.set_input(x=x)
    m.run()
    got = m.get_output(0).numpy()
    # the reference along the DFT's axis (moved last, as the importer does)
    sig = np.moveaxis(x, 2, -1)
    re, im = reference(np.ascontiguousarray(sig[..., 0, :]), np.ascontiguousarray(sig[..., 1, :]), inverse=bool(inverse))
    want = np.stack([np.moveaxis(re, -1, 2), np.moveaxis(im, -1, 2)], axis=-1)
    assert np.all(np.isfinite(got)) and np.abs(got).max() > 1.0
    assert np.array_equal(got, want)
