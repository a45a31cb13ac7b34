"""The C 3x3 depthwise kernel (padded planes, vectorised over outputs) against the generic
tap-by-tap kernel and a float64 convolution: the same bits on every path it takes (flat loop
for short rows, a loop per row for long ones, stride 1 and 2, odd padding, a channel with a
non-finite weight, channel ranges), and the convolution's values."""

from __future__ import annotations

import numpy as np
import pytest

from xrelay.runtime.native import library as native


def _special(shape, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape).astype("float32")
    flat = a.reshape(-1)
    flat[::7] = np.nan
    flat[1::11] = -0.0
    flat[2::13] = 0.0
    flat[3::17] = np.inf
    return a


def _same(a, b):
    """Equal values, zeros' signs included. (Where two NaNs meet in a sum, which one's sign
    survives is the vector unit's operand order, not specified by either compiler.)"""
    assert np.array_equal(a, b, equal_nan=True)
    real = ~np.isnan(a)
    assert np.array_equal(np.signbit(a[real]), np.signbit(b[real]))


CASES = [
    # (channels, h, w, stride, pad)  short rows (flat loop) and long rows (per row)
    (3, 7, 7, 1, 1), (3, 14, 14, 2, 1), (2, 40, 37, 1, 1), (2, 41, 44, 2, 1),
    (2, 9, 12, 1, 0), (2, 10, 9, 2, 0), (2, 6, 5, 1, 2), (2, 3, 3, 2, 2), (1, 40, 40, 2, 0),
]  # fmt: skip


@pytest.mark.parametrize("c, h, w, stride, pad", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_depthwise3x3_c_equals_generic(c, h, w, stride, pad, dtype):
    kc = native.native_kernels()
    assert kc is not None
    x = _special((c, h, w), h * w).astype(dtype)
    wt = np.random.default_rng(c + h).standard_normal((c, 1, 3, 3)).astype(dtype)
    wt[0, 0, 1, 1] = -0.0
    oh, ow = (h + 2 * pad - 3) // stride + 1, (w + 2 * pad - 3) // stride + 1
    outs = []
    for fill in (7.0, -3.0):  # twice, over different garbage: every output is written
        o = np.full((c, oh, ow), fill, dtype)
        kc["depthwise3x3"](x, wt, o, 0, c, stride, stride, pad, pad)
        outs.append(o)
    generic = np.full((c, oh, ow), -7.0, dtype)
    kc["depthwise"](x, wt, generic, 0, c, stride, stride, 1, 1, pad, pad)
    _same(outs[0], outs[1])
    # The generic kernel's NaNs may carry another sign (its vector adds pick the other
    # operand's NaN): the same values, as the existing 3x3-vs-generic contract says.
    assert np.array_equal(outs[0], generic, equal_nan=True)
    # The convolution itself (finite input) against a float64 reference.
    xf = np.nan_to_num(x, posinf=2.0)
    kc["depthwise3x3"](xf, wt, outs[0], 0, c, stride, stride, pad, pad)
    xp = np.pad(xf.astype("float64"), ((0, 0), (pad, pad), (pad, pad)))
    ref = sum(
        wt[:, 0, i, j, None, None].astype("float64")
        * xp[:, i : i + stride * (oh - 1) + 1 : stride, j : j + stride * (ow - 1) + 1 : stride]
        for i in range(3)
        for j in range(3)
    )
    np.testing.assert_allclose(outs[0], ref, rtol=1e-5, atol=1e-5)


def test_depthwise3x3_non_finite_weight_and_channel_range():
    """A channel with an infinite weight skips its padded taps like the generic kernel (inf,
    not inf * 0 = NaN, at the border); channels outside [c0, c1) are not written."""
    kc = native.native_kernels()
    x = np.random.default_rng(3).standard_normal((4, 7, 7)).astype("float32")
    wt = np.random.default_rng(4).standard_normal((4, 1, 3, 3)).astype("float32")
    wt[2, 0, 0, 0] = np.inf
    outs = []
    for kernel in (kc["depthwise3x3"], kc["depthwise"]):
        o = np.full((4, 7, 7), 9.0, "float32")
        if kernel is kc["depthwise"]:
            kernel(x, wt, o, 1, 3, 1, 1, 1, 1, 1, 1)
        else:
            kernel(x, wt, o, 1, 3, 1, 1, 1, 1)
        outs.append(o)
    assert np.array_equal(outs[0], outs[1], equal_nan=True)
    assert np.all(outs[0][[0, 3]] == 9.0)
    # The border row of channel 2 only has taps that skip the infinite one: finite values.
    assert np.isfinite(outs[0][2, 0]).all()
    assert not np.isfinite(outs[0][2, 1:, 1:]).any()


@pytest.mark.parametrize("c, h, w, stride, pad", [(5, 7, 7, 1, 1), (3, 20, 18, 2, 1)])
def test_depthwise3x3_epi_is_the_kernel_then_the_epilogue(c, h, w, stride, pad):
    """The fused kernel gives the bits of depthwise3x3 followed by the epilogue
    kernel: bias add (per channel), a residual subtract (swapped) and clip."""
    kc = native.native_kernels()
    x = _special((c, h, w), 21)
    wt = np.random.default_rng(22).standard_normal((c, 1, 3, 3)).astype("float32")
    oh, ow = (h + 2 * pad - 3) // stride + 1, (w + 2 * pad - 3) // stride + 1
    shape = (c, oh, ow)
    ops = [
        np.broadcast_to(_special((c, 1, 1), 23), shape),
        np.broadcast_to(_special(shape, 24), shape),
        np.broadcast_to(np.float32(0), shape),
        np.broadcast_to(np.float32(6), shape),
    ]
    codes, swapped = np.array([0, 1, 3, 4]), np.array([0, 1, 0, 0], np.bool_)
    expect = np.full(shape, 1.0, "float32")
    kc["depthwise3x3"](x, wt, expect, 1, c, stride, stride, pad, pad)
    kc["epilogue"](expect, *ops, codes, swapped, 1, c, 0, oh)
    got = np.full(shape, 1.0, "float32")
    kc["depthwise3x3_epi"](x, wt, got, 1, c, stride, stride, pad, pad, *ops, codes, swapped)
    _same(got, expect)
    assert np.all(got[0] == 1.0)
    assert np.nanmax(got[1:]) <= 6.0
