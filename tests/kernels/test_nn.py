"""nn.* kernels against onnxruntime (Conv, ConvTranspose, MaxPool, AveragePool, Gemm, MatMul,
BatchNormalization, LayerNormalization, Softmax, Pad...) and, for what onnxruntime lacks
(NHWC/HWIO and other layouts, float16/float64/int8 convolution, integer pools, adaptive pools),
against pure-Python loop references on small shapes.

Tolerances: ``conftest.tol(dtype, accum=True)``: float16 2e-2, float32 1e-4, float64 1e-9
(relative and absolute); integers exact.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from xrelay.kernels import KERNELS

FAST = settings(max_examples=15, deadline=None)


# ---------------------------------------------------------------------------------------------
# References
# ---------------------------------------------------------------------------------------------


def conv_ref(x, w, strides, pads, dilation, groups, acc_dtype=float):
    """NCHW x OIHW convolution by explicit loops (accumulating in Python numbers)."""
    n_, c_, h_, w_ = x.shape
    o_, cg, kh, kw = w.shape
    og = o_ // groups
    sh, sw = strides
    dh, dw = dilation
    pt, pl, pb, pr = pads
    oh = (h_ + pt + pb - (kh - 1) * dh - 1) // sh + 1
    ow = (w_ + pl + pr - (kw - 1) * dw - 1) // sw + 1
    xl, wl = x.tolist(), w.tolist()
    out = np.zeros((n_, o_, oh, ow))
    if acc_dtype is int:
        out = out.astype(np.int64)
    for n, o, i, j in itertools.product(range(n_), range(o_), range(oh), range(ow)):
        g = o // og
        acc = 0
        for c, a, b in itertools.product(range(cg), range(kh), range(kw)):
            y, z = i * sh - pt + a * dh, j * sw - pl + b * dw
            if 0 <= y < h_ and 0 <= z < w_:
                acc += xl[n][g * cg + c][y][z] * wl[o][c][a][b]
        out[n, o, i, j] = acc
    return out


def pool_ref(x, kind, k, s, d, pads, ceil_mode, count_include_pad):
    """NCHW pooling by explicit loops, TVM output size and divisor rules."""
    n_, c_, h_, w_ = x.shape
    pt, pl, pb, pr = pads

    def olen(size, kk, ss, dd, p):
        span = size + p - (kk - 1) * dd - 1
        return (math.ceil(span / ss) if ceil_mode else span // ss) + 1

    oh, ow = olen(h_, k[0], s[0], d[0], pt + pb), olen(w_, k[1], s[1], d[1], pl + pr)
    out = np.zeros((n_, c_, oh, ow), dtype=x.dtype)
    for n, c, i, j in itertools.product(range(n_), range(c_), range(oh), range(ow)):
        vals, count = [], 0
        for a, b in itertools.product(range(k[0]), range(k[1])):
            y, z = i * s[0] - pt + a * d[0], j * s[1] - pl + b * d[1]
            if 0 <= y < h_ and 0 <= z < w_:
                vals.append(x[n, c, y, z].item())
            if -pt <= y < h_ + pb and -pl <= z < w_ + pr:
                count += 1
        if kind == "max":
            # TOPI pads max pools with the dtype's lowest value (tvm::min_value), not -inf
            lowest = np.finfo(x.dtype).min if x.dtype.kind == "f" else np.iinfo(x.dtype).min
            out[n, c, i, j] = max(vals, default=lowest)
        else:
            div = count if count_include_pad else len(vals)
            tot = sum(vals)
            if x.dtype.kind in "iu":
                out[n, c, i, j] = int(tot / max(div, 1)) if div else 0
            else:
                out[n, c, i, j] = tot / max(div, 1)
    return out


# ---------------------------------------------------------------------------------------------
# conv2d
# ---------------------------------------------------------------------------------------------


@st.composite
def conv_case(draw, max_hw=9):
    groups = draw(st.sampled_from([1, 1, 2, 3]))
    cg = draw(st.integers(1, 3))
    og = draw(st.integers(1, 3))
    if draw(st.integers(0, 3)) == 0:  # depthwise, sometimes with a channel multiplier
        groups, cg = draw(st.integers(2, 4)), 1
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    strides = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    pads = tuple(draw(st.integers(0, 2)) for _ in range(4))
    h = draw(st.integers((kh - 1) * dilation[0] + 1, max_hw))
    w = draw(st.integers((kw - 1) * dilation[1] + 1, max_hw))
    n = draw(st.integers(1, 2))
    return dict(
        xshape=(n, cg * groups, h, w),
        wshape=(og * groups, cg, kh, kw),
        strides=strides,
        padding=pads,
        dilation=dilation,
        groups=groups,
    )


def _conv_attrs(c):
    return dict(
        strides=c["strides"], padding=c["padding"], dilation=c["dilation"], groups=c["groups"]
    )


@settings(max_examples=40, deadline=None)
@given(c=conv_case(), seed=st.integers(0, 2**16))
def test_conv2d_nchw_vs_onnxruntime(h, c, seed):
    rng = np.random.default_rng(seed)
    x = h.rand(rng, c["xshape"], "float32", -1, 1)
    w = h.rand(rng, c["wshape"], "float32", -1, 1)
    pt, pl, pb, pr = c["padding"]
    attrs = {
        "strides": list(c["strides"]),
        "pads": [pt, pl, pb, pr],
        "dilations": list(c["dilation"]),
        "group": c["groups"],
    }
    (ref,) = h.run_onnx("Conv", [x, w], attrs)
    h.assert_same(KERNELS["nn.conv2d"](x, w, **_conv_attrs(c)), ref, accum=True)


@pytest.mark.parametrize("dtype", ["float16", "float64"])
@settings(max_examples=8, deadline=None)
@given(c=conv_case(max_hw=6), seed=st.integers(0, 2**16))
def test_conv2d_float16_float64_vs_loops(h, dtype, c, seed):
    rng = np.random.default_rng(seed)
    x = h.rand(rng, c["xshape"], dtype, -1, 1)
    w = h.rand(rng, c["wshape"], dtype, -1, 1)
    ref = conv_ref(
        x.astype(np.float64),
        w.astype(np.float64),
        c["strides"],
        c["padding"],
        c["dilation"],
        c["groups"],
    )
    h.assert_same(KERNELS["nn.conv2d"](x, w, **_conv_attrs(c)), ref.astype(dtype), accum=True)


@settings(max_examples=12, deadline=None)
@given(
    c=conv_case(max_hw=6),
    seed=st.integers(0, 2**16),
    layouts=st.sampled_from(
        [
            ("NHWC", "HWIO", ""),
            ("NHWC", "OIHW", ""),
            ("NCHW", "HWIO", "NHWC"),
            ("NHWC", "OHWI", "NCHW"),
            ("HWCN", "IOHW", ""),
        ]
    ),
)
def test_conv2d_layouts_vs_loops(h, c, seed, layouts):
    data_layout, kernel_layout, out_layout = layouts
    rng = np.random.default_rng(seed)
    x = h.rand(rng, c["xshape"], "float32", -1, 1)
    w = h.rand(rng, c["wshape"], "float32", -1, 1)
    ref = conv_ref(x, w, c["strides"], c["padding"], c["dilation"], c["groups"]).astype(np.float32)
    xl = np.transpose(x, ["NCHW".index(a) for a in data_layout])
    wl = np.transpose(w, ["OIHW".index(a) for a in kernel_layout])
    res = KERNELS["nn.conv2d"](
        xl,
        wl,
        data_layout=data_layout,
        kernel_layout=kernel_layout,
        out_layout=out_layout,
        **_conv_attrs(c),
    )
    expect = np.transpose(ref, ["NCHW".index(a) for a in (out_layout or data_layout)])
    h.assert_same(res, expect, accum=True)


def test_conv2d_int8_with_int32_out_dtype(h):
    rng = np.random.default_rng(0)
    x = h.rand(rng, (1, 4, 6, 6), "int8")
    w = h.rand(rng, (6, 2, 3, 3), "int8")
    res = KERNELS["nn.conv2d"](x, w, padding=(1, 0, 1, 2), groups=2, out_dtype="int32")
    ref = conv_ref(x, w, (1, 1), (1, 0, 1, 2), (1, 1), 2, acc_dtype=int).astype(np.int32)
    h.assert_same(res, ref)
    # Without out_dtype the int8 result wraps like C int8 arithmetic.
    res8 = KERNELS["nn.conv2d"](x, w, padding=(1, 0, 1, 2), groups=2)
    h.assert_same(res8, ref.astype(np.int8))


def test_conv2d_checks_attributes():
    x = np.zeros((1, 4, 5, 5), np.float32)
    w = np.zeros((6, 2, 3, 3), np.float32)
    with pytest.raises(ValueError, match="groups"):
        KERNELS["nn.conv2d"](x, w, groups=1)
    with pytest.raises(ValueError, match="channels=8"):
        KERNELS["nn.conv2d"](x, w, groups=2, channels=8)
    with pytest.raises(ValueError, match="kernel_size"):
        KERNELS["nn.conv2d"](x, w, groups=2, kernel_size=(1, 1))
    with pytest.raises(ValueError, match="larger than padded input"):
        KERNELS["nn.conv2d"](x[:, :, :2], w, groups=2)
    with pytest.raises(ValueError, match="dtypes differ"):
        KERNELS["nn.conv2d"](x, w.astype(np.float64), groups=2)


# ---------------------------------------------------------------------------------------------
# conv2d_transpose
# ---------------------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_conv2d_transpose_vs_onnxruntime(h, data, seed):
    groups = data.draw(st.sampled_from([1, 1, 2, 3]))
    cg, og = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    kh, kw = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    s = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    d = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    # onnxruntime insists on output_padding < stride.
    op = (data.draw(st.integers(0, s[0] - 1)), data.draw(st.integers(0, s[1] - 1)))
    pads = tuple(data.draw(st.integers(0, 2)) for _ in range(4))
    hh, ww = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 6))
    oh = (hh - 1) * s[0] + (kh - 1) * d[0] + 1 - pads[0] - pads[2] + op[0]
    ow = (ww - 1) * s[1] + (kw - 1) * d[1] + 1 - pads[1] - pads[3] + op[1]
    assume(oh > 0 and ow > 0)
    rng = np.random.default_rng(seed)
    x = h.rand(rng, (data.draw(st.integers(1, 2)), cg * groups, hh, ww), "float32", -1, 1)
    w = h.rand(rng, (cg * groups, og, kh, kw), "float32", -1, 1)  # IOHW
    attrs = {
        "strides": list(s),
        "pads": list(pads),
        "dilations": list(d),
        "group": groups,
        "output_padding": list(op),
    }
    (ref,) = h.run_onnx("ConvTranspose", [x, w], attrs)
    res = KERNELS["nn.conv2d_transpose"](
        x, w, strides=s, padding=pads, dilation=d, groups=groups, output_padding=op
    )
    h.assert_same(res, ref, accum=True)
    # The same through NHWC data and an OIHW-lettered kernel.
    res2 = KERNELS["nn.conv2d_transpose"](
        x.transpose(0, 2, 3, 1),
        w.transpose(1, 0, 2, 3),
        strides=s,
        padding=pads,
        dilation=d,
        groups=groups,
        output_padding=op,
        data_layout="NHWC",
        kernel_layout="OIHW",
    )
    h.assert_same(res2, ref.transpose(0, 2, 3, 1), accum=True)


# ---------------------------------------------------------------------------------------------
# Pools
# ---------------------------------------------------------------------------------------------


@st.composite
def pool_case(draw, dilated=True):
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    s = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    d = (draw(st.integers(1, 2)), draw(st.integers(1, 2))) if dilated else (1, 1)
    # onnxruntime requires pads smaller than the kernel.
    pads = (
        draw(st.integers(0, k[0] - 1)),
        draw(st.integers(0, k[1] - 1)),
        draw(st.integers(0, k[0] - 1)),
        draw(st.integers(0, k[1] - 1)),
    )
    hh = draw(st.integers((k[0] - 1) * d[0] + 1, 9))
    ww = draw(st.integers((k[1] - 1) * d[1] + 1, 9))
    ceil_mode = draw(st.booleans())
    return dict(
        k=k,
        s=s,
        d=d,
        pads=pads,
        shape=(draw(st.integers(1, 2)), draw(st.integers(1, 3)), hh, ww),
        ceil=ceil_mode,
    )


def _ceil_windows_start_inside(c):
    """onnxruntime drops a ceil-mode window that would start in the bottom padding; TVM keeps it.
    Compare only where the two agree."""
    for size, k, s, d, pb, pa in zip(
        c["shape"][2:], c["k"], c["s"], c["d"], c["pads"][:2], c["pads"][2:]
    ):
        span = size + pb + pa - (k - 1) * d - 1
        out = (-(-span // s) if c["ceil"] else span // s) + 1
        if (out - 1) * s >= size + pb:
            return False
    return True


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@settings(max_examples=25, deadline=None)
@given(c=pool_case(), seed=st.integers(0, 2**16))
def test_max_pool2d_vs_onnxruntime(h, dtype, c, seed):
    assume(_ceil_windows_start_inside(c))
    x = h.rand(np.random.default_rng(seed), c["shape"], dtype)
    attrs = {
        "kernel_shape": list(c["k"]),
        "strides": list(c["s"]),
        "dilations": list(c["d"]),
        "pads": list(c["pads"]),
        "ceil_mode": int(c["ceil"]),
    }
    (ref,) = h.run_onnx("MaxPool", [x], attrs)
    res = KERNELS["nn.max_pool2d"](
        x, pool_size=c["k"], strides=c["s"], dilation=c["d"], padding=c["pads"], ceil_mode=c["ceil"]
    )
    h.assert_same(res, ref)


@pytest.mark.parametrize("count_include_pad", [False, True])
@settings(max_examples=25, deadline=None)
@given(c=pool_case(dilated=False), seed=st.integers(0, 2**16))
def test_avg_pool2d_vs_onnxruntime(h, count_include_pad, c, seed):
    assume(_ceil_windows_start_inside(c))
    x = h.rand(np.random.default_rng(seed), c["shape"], "float32")
    attrs = {
        "kernel_shape": list(c["k"]),
        "strides": list(c["s"]),
        "pads": list(c["pads"]),
        "ceil_mode": int(c["ceil"]),
        "count_include_pad": int(count_include_pad),
    }
    (ref,) = h.run_onnx("AveragePool", [x], attrs)
    res = KERNELS["nn.avg_pool2d"](
        x,
        pool_size=c["k"],
        strides=c["s"],
        padding=c["pads"],
        ceil_mode=c["ceil"],
        count_include_pad=count_include_pad,
    )
    h.assert_same(res, ref, accum=True)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "float64"])
@pytest.mark.parametrize("kind", ["max", "avg"])
@settings(max_examples=8, deadline=None)
@given(c=pool_case(), seed=st.integers(0, 2**16), cip=st.booleans())
def test_pools_other_dtypes_and_nhwc_vs_loops(h, dtype, kind, c, seed, cip):
    x = h.rand(np.random.default_rng(seed), c["shape"], dtype)
    ref = pool_ref(x, kind, c["k"], c["s"], c["d"], c["pads"], c["ceil"], cip)
    attrs = dict(
        pool_size=c["k"], strides=c["s"], dilation=c["d"], padding=c["pads"], ceil_mode=c["ceil"]
    )
    if kind == "avg":
        attrs["count_include_pad"] = cip
    op = f"nn.{kind}_pool2d"
    h.assert_same(KERNELS[op](x, **attrs), ref, accum=True)
    nhwc = KERNELS[op](x.transpose(0, 2, 3, 1), layout="NHWC", **attrs)
    h.assert_same(nhwc, ref.transpose(0, 2, 3, 1), accum=True)


def test_pool_window_starting_in_padding_is_kept_like_tvm():
    # H=2, k=2, s=2, bottom/right pad 1, ceil: TVM keeps a second window that starts in the
    # padding (onnxruntime would drop it). It sees no input: avg gives 0, max the lowest value.
    x = np.ones((1, 1, 2, 2), np.float32)
    attrs = dict(pool_size=(2, 2), strides=(2, 2), padding=(0, 0, 1, 1), ceil_mode=True)
    avg = KERNELS["nn.avg_pool2d"](x, **attrs)
    assert avg[0, 0].tolist() == [[1.0, 0.0], [0.0, 0.0]]
    mx = KERNELS["nn.max_pool2d"](x, **attrs)
    low = float(np.finfo(np.float32).min)  # TOPI's tvm::min_value(float32), not -inf
    assert mx[0, 0].tolist() == [[1.0, low], [low, low]]
    mi = KERNELS["nn.max_pool2d"](x.astype(np.int8), **attrs)
    assert mi[0, 0].tolist() == [[1, -128], [-128, -128]]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_global_pools_vs_onnxruntime(h, dtype):
    x = h.rand(np.random.default_rng(1), (2, 3, 5, 7), dtype)
    (avg,) = h.run_onnx("GlobalAveragePool", [x])
    (mx,) = h.run_onnx("GlobalMaxPool", [x])
    h.assert_same(KERNELS["nn.global_avg_pool2d"](x), avg, accum=True)
    h.assert_same(KERNELS["nn.global_max_pool2d"](x), mx)
    nhwc = x.transpose(0, 2, 3, 1)
    h.assert_same(
        KERNELS["nn.global_avg_pool2d"](nhwc, layout="NHWC"), avg.transpose(0, 2, 3, 1), accum=True
    )
    h.assert_same(KERNELS["nn.global_max_pool2d"](nhwc, layout="NHWC"), mx.transpose(0, 2, 3, 1))


@pytest.mark.parametrize("output_size", [None, (1, 1), (2, 3), (3, 3), (5, 4), (7,)])
def test_adaptive_pools_vs_loops(h, output_size):
    x = h.rand(np.random.default_rng(2), (2, 3, 7, 5), "float32")
    res = KERNELS["nn.adaptive_avg_pool2d"](x, output_size=output_size)
    res_max = KERNELS["nn.adaptive_max_pool2d"](x, output_size=output_size)
    oh, ow = (
        (7, 5)  # Relay: no output_size keeps the input's size
        if output_size is None
        else (output_size * 2 if len(output_size) == 1 else output_size)
    )
    assert res.shape == (2, 3, oh, ow)
    for n, c, i, j in itertools.product(range(2), range(3), range(oh), range(ow)):
        h0, h1 = math.floor(i * 7 / oh), math.ceil((i + 1) * 7 / oh)
        w0, w1 = math.floor(j * 5 / ow), math.ceil((j + 1) * 5 / ow)
        vals = [float(x[n, c, a, b]) for a in range(h0, h1) for b in range(w0, w1)]
        assert res[n, c, i, j] == pytest.approx(sum(vals) / len(vals), rel=1e-5)
        assert res_max[n, c, i, j] == max(vals)
    nhwc = KERNELS["nn.adaptive_avg_pool2d"](
        x.transpose(0, 2, 3, 1), output_size=output_size, layout="NHWC"
    )
    h.assert_same(nhwc, res.transpose(0, 2, 3, 1))


def test_adaptive_avg_pool_integer_truncates():
    x = np.array([[[[1, 2], [2, 2]]]], dtype=np.int32)  # sum 7 over 4 -> 1
    assert KERNELS["nn.adaptive_avg_pool2d"](x, output_size=(1, 1)).tolist() == [[[[1]]]]


# ---------------------------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@FAST
@given(
    shape=st.lists(st.integers(1, 4), min_size=2, max_size=4),
    seed=st.integers(0, 2**16),
    eps=st.sampled_from([1e-5, 2e-5, 1e-3]),
)
def test_batch_norm_vs_onnxruntime(h, dtype, shape, seed, eps):
    rng = np.random.default_rng(seed)
    c = shape[1]
    x = h.rand(rng, shape, dtype)
    gamma, beta, mean = (h.rand(rng, (c,), dtype) for _ in range(3))
    var = h.rand(rng, (c,), dtype, 0.1, 2)
    (ref,) = h.run_onnx("BatchNormalization", [x, gamma, beta, mean, var], {"epsilon": eps})
    out, m, v = KERNELS["nn.batch_norm"](x, gamma, beta, mean, var, epsilon=eps)
    h.assert_same(out, ref, accum=True)
    h.assert_same(m, mean)
    h.assert_same(v, var)
    assert not np.shares_memory(m, mean)


def test_batch_norm_axis_center_scale_vs_formula(h):
    rng = np.random.default_rng(4)
    x = h.rand(rng, (2, 3, 4), "float32")
    gamma, beta, mean = (h.rand(rng, (4,), "float32") for _ in range(3))
    var = h.rand(rng, (4,), "float32", 0.5, 2)
    for center, scale in itertools.product([False, True], repeat=2):
        (out, _, _) = KERNELS["nn.batch_norm"](
            x, gamma, beta, mean, var, axis=-1, epsilon=1e-3, center=center, scale=scale
        )
        for idx in itertools.product(range(2), range(3), range(4)):
            c = idx[-1]
            v = (float(x[idx]) - float(mean[c])) / math.sqrt(float(var[c]) + 1e-3)
            v = v * float(gamma[c]) if scale else v
            v = v + float(beta[c]) if center else v
            assert out[idx] == pytest.approx(v, rel=1e-5, abs=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@FAST
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=4), seed=st.integers(0, 2**16))
def test_layer_norm_vs_onnxruntime(h, dtype, shape, seed):
    rng = np.random.default_rng(seed)
    x = h.rand(rng, shape, dtype)
    gamma, beta = h.rand(rng, shape[-1:], dtype), h.rand(rng, shape[-1:], dtype)
    (ref,) = h.run_onnx("LayerNormalization", [x, gamma, beta], {"axis": -1, "epsilon": 1e-5})
    h.assert_same(KERNELS["nn.layer_norm"](x, gamma, beta, axis=-1, epsilon=1e-5), ref, accum=True)


def test_layer_norm_middle_axis_vs_formula(h):
    x = h.rand(np.random.default_rng(5), (2, 3, 2), "float32")
    gamma, beta = np.array([1.0, 2.0, 0.5], np.float32), np.array([0.0, 1.0, -1.0], np.float32)
    res = KERNELS["nn.layer_norm"](x, gamma, beta, axis=1, epsilon=1e-5, center=False)
    for a, b in itertools.product(range(2), range(2)):
        col = [float(x[a, i, b]) for i in range(3)]
        m = sum(col) / 3
        var = sum((v - m) ** 2 for v in col) / 3
        for i in range(3):
            assert res[a, i, b] == pytest.approx(
                (col[i] - m) / math.sqrt(var + 1e-5) * gamma[i], rel=1e-4, abs=1e-5
            )


def test_instance_norm_vs_onnxruntime(h):
    rng = np.random.default_rng(6)
    x = h.rand(rng, (2, 3, 4, 5), "float32")
    gamma, beta = h.rand(rng, (3,), "float32"), h.rand(rng, (3,), "float32")
    (ref,) = h.run_onnx("InstanceNormalization", [x, gamma, beta], {"epsilon": 1e-5})
    h.assert_same(KERNELS["nn.instance_norm"](x, gamma, beta), ref, accum=True)


def test_l2_normalize_vs_formula():
    x = np.array([[3.0, 4.0], [0.0, 0.0]], np.float32)
    res = KERNELS["nn.l2_normalize"](x, eps=1e-12, axis=(1,))
    np.testing.assert_allclose(res, [[0.6, 0.8], [0.0, 0.0]], rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# Dense and matmul
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@FAST
@given(m=st.integers(1, 6), k=st.integers(1, 7), n=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_dense_vs_onnxruntime_gemm(h, dtype, m, k, n, seed):
    rng = np.random.default_rng(seed)
    x, w = h.rand(rng, (m, k), dtype), h.rand(rng, (n, k), dtype)
    (ref,) = h.run_onnx("Gemm", [x, w], {"transB": 1})
    h.assert_same(KERNELS["nn.dense"](x, w, units=n), ref, accum=True)


def test_dense_nd_float16_and_int8_out_dtype(h):
    rng = np.random.default_rng(8)
    x, w = h.rand(rng, (2, 3, 5), "float16", -1, 1), h.rand(rng, (4, 5), "float16", -1, 1)
    (ref,) = h.run_onnx("MatMul", [x, np.ascontiguousarray(w.T)])
    h.assert_same(KERNELS["nn.dense"](x, w), ref, accum=True)
    xi, wi = h.rand(rng, (3, 6), "int8"), h.rand(rng, (2, 6), "int8")
    res = KERNELS["nn.dense"](xi, wi, out_dtype="int32")
    ref_i = [[sum(int(a) * int(b) for a, b in zip(r, q)) for q in wi] for r in xi]
    h.assert_same(res, np.array(ref_i, np.int32))


@FAST
@given(
    b=st.integers(1, 3),
    m=st.integers(1, 5),
    k=st.integers(1, 5),
    n=st.integers(1, 5),
    ta=st.booleans(),
    tb=st.booleans(),
    bcast=st.sampled_from([None, "a", "b"]),
    seed=st.integers(0, 2**16),
)
def test_batch_matmul_and_matmul_vs_onnxruntime(h, b, m, k, n, ta, tb, bcast, seed):
    rng = np.random.default_rng(seed)
    a = h.rand(rng, (1 if bcast == "a" else b, m, k), "float32")
    bb = h.rand(rng, (1 if bcast == "b" else b, k, n), "float32")
    (ref,) = h.run_onnx("MatMul", [a, bb])
    a_in = np.ascontiguousarray(a.transpose(0, 2, 1)) if ta else a
    b_in = np.ascontiguousarray(bb.transpose(0, 2, 1)) if tb else bb
    res = KERNELS["nn.batch_matmul"](a_in, b_in, transpose_a=ta, transpose_b=tb)
    h.assert_same(res, ref, accum=True)
    res2 = KERNELS["nn.matmul"](a_in[0], b_in[0], transpose_a=ta, transpose_b=tb)
    h.assert_same(res2, ref[0], accum=True)


def test_batch_matmul_defaults_are_the_dialects():
    # the op's attribute default is transpose_b = false (Relay's C++ attrs; only the Python
    # API's relay.nn.batch_matmul defaults to true)
    a = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    b = np.arange(12, dtype=np.float32).reshape(1, 3, 4)  # (batch, K, N)
    res = KERNELS["nn.batch_matmul"](a, b)
    np.testing.assert_array_equal(res, a @ b)
    bt = np.ascontiguousarray(b.transpose(0, 2, 1))
    np.testing.assert_array_equal(KERNELS["nn.batch_matmul"](a, bt, transpose_b=True), a @ b)


@pytest.mark.parametrize("dtype", ["float32", "int32", "float16"])
def test_bias_add_vs_onnxruntime(h, dtype):
    rng = np.random.default_rng(9)
    x, bias = h.rand(rng, (2, 3, 4, 5), dtype, -9, 9), h.rand(rng, (3,), dtype, -9, 9)
    (ref,) = h.run_onnx("Add", [x, bias.reshape(3, 1, 1)])
    h.assert_same(KERNELS["nn.bias_add"](x, bias), ref)
    bias5 = h.rand(rng, (5,), dtype, -9, 9)
    (ref,) = h.run_onnx("Add", [x, bias5])
    h.assert_same(KERNELS["nn.bias_add"](x, bias5, axis=-1), ref)


# ---------------------------------------------------------------------------------------------
# Softmax, dropout, pad
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "op,onnx_op", [("nn.softmax", "Softmax"), ("nn.log_softmax", "LogSoftmax")]
)
@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@FAST
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=4), data=st.data())
def test_softmax_vs_onnxruntime(h, op, onnx_op, dtype, shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = h.rand(np.random.default_rng(len(shape)), shape, dtype, -30, 30)
    (ref,) = h.run_onnx(onnx_op, [x], {"axis": axis})
    h.assert_same(KERNELS[op](x, axis=axis), ref, accum=True)


def test_dropout_is_identity_with_ones_mask():
    x = np.arange(6, dtype=np.float16).reshape(2, 3)
    y, mask = KERNELS["nn.dropout"](x, rate=0.3)
    np.testing.assert_array_equal(y, x)
    assert mask.dtype == np.float16 and mask.tolist() == [[1.0] * 3] * 2
    assert not np.shares_memory(y, x)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8"])
@FAST
@given(shape=st.lists(st.integers(2, 4), min_size=1, max_size=4), data=st.data())
def test_pad_vs_onnxruntime(h, mode, dtype, shape, data):
    limit = (lambda d: d - 1) if mode == "reflect" else (lambda d: 3)
    widths = [
        (data.draw(st.integers(0, limit(d))), data.draw(st.integers(0, limit(d)))) for d in shape
    ]
    x = h.rand(np.random.default_rng(len(shape)), shape, dtype)
    value = np.array(7, dtype)
    pads = np.array([b for b, _ in widths] + [a for _, a in widths], np.int64)
    (ref,) = h.run_onnx("Pad", [x, pads, value], {"mode": mode})
    h.assert_same(KERNELS["nn.pad"](x, value, pad_width=tuple(widths), pad_mode=mode), ref)


def test_pad_errors():
    with pytest.raises(ValueError, match="reflect pads"):
        KERNELS["nn.pad"](
            np.zeros((2, 2)), np.array(0.0), pad_width=((2, 0), (0, 0)), pad_mode="reflect"
        )
    with pytest.raises(ValueError, match="one \\(before, after\\) pair"):
        KERNELS["nn.pad"](np.zeros((2, 2)), np.array(0.0), pad_width=((1, 1),))
