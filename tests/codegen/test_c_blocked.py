"""The C target's channel-blocked float convolutions (``NCHW8c`` data, ``OIHW8i8o`` kernels,
chosen by ``alter-op-layout`` in ``build_c``) run as register tiles (``XR_F8_*`` of
``xrelay_kernels.h``). Each case is built for C, its steps run through the host-compiled
library (the host's vector width) and compared with the reference interpreter; the exported
program and a standalone main are compiled strictly three ways (GNU vectors at the default
width, at AVX's width, and ``XRELAY_PORTABLE``'s plain loops) and the runnable ones are run.
Shapes leave remainders of every blocking: output columns past a whole tile, tiles reaching
into the padding on either side, strides, dilation, asymmetric padding, 3 input channels
(``NCHW3c``), depthwise and batch 2."""

import re
import shutil
import subprocess

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.backend.build import build_c
from xrelay.runtime.c.module import host_float_lanes

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2"]
CC = shutil.which("cc")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler (cc) on PATH")
RNG = np.random.default_rng(11)


def conv_net(n, c, h, w, o, k, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    x = relay.var("x", shape=(n, c, h, w))
    wt = relay.const(RNG.standard_normal((o, c // groups, *k)).astype("float32") * 0.3)
    b = relay.const(RNG.standard_normal((o,)).astype("float32"))
    y = relay.nn.conv2d(x, wt, kernel_size=k, channels=o, strides=strides, padding=padding,
                        dilation=dilation, groups=groups)  # fmt: skip
    y = relay.nn.relu(relay.nn.bias_add(y, b))
    return relay.Function([x], y), (n, c, h, w)


CASES = {
    "3x3-pad1-columns-13": dict(n=1, c=16, h=5, w=13, o=24, k=(3, 3), padding=(1, 1)),
    "3x3-stride2-odd": dict(n=1, c=8, h=15, w=15, o=16, k=(3, 3), strides=(2, 2), padding=(1, 1)),
    "5x5-dilated-asymmetric": dict(n=1, c=24, h=12, w=17, o=16, k=(5, 5), dilation=(2, 2), padding=(2, 3, 1, 0)),
    "1x1-7x7": dict(n=1, c=16, h=7, w=7, o=32, k=(1, 1)),
    "7x7-stride2-3-channels": dict(n=1, c=3, h=19, w=21, o=8, k=(7, 7), strides=(2, 2), padding=(3, 3)),
    "depthwise-stride2": dict(n=1, c=16, h=9, w=11, o=16, k=(3, 3), strides=(2, 2), padding=(1, 1), groups=16),
    "depthwise-5x5-wider-than-a-tile": dict(n=1, c=8, h=6, w=19, o=8, k=(5, 5), padding=(2, 2), groups=8),
    "batch-2": dict(n=2, c=8, h=4, w=10, o=8, k=(3, 3), padding=(0, 1)),
}


def reference(mod, inputs):
    ref = xrelay.run(mod, inputs)
    return np.asarray(ref[0] if isinstance(ref, list | tuple) else ref)


def export_and_run(lib, x, tmp_path, flags):
    """Compile the exported program with its main under STRICT + ``flags`` and run it; the
    output, or None where the host cannot run the build (AVX code on a machine without)."""
    out = tmp_path / "_".join(f.strip("-").replace("=", "") for f in flags) if flags else tmp_path / "default"
    out.mkdir()
    lib.export(out, main=True)
    exe = out / "model"
    res = subprocess.run([CC, *STRICT, *flags, "-I", str(out), str(out / "model.c"), str(out / "main.c"),
                          "-o", str(exe), "-lm"], capture_output=True, text=True)  # fmt: skip
    assert res.returncode == 0, res.stderr
    cpu = open("/proc/cpuinfo").read().split()
    if ("-mavx" in flags and "avx" not in cpu) or ("-mavx512f" in flags and "avx512f" not in cpu):
        return None
    (out / "x.bin").write_bytes(x.tobytes())
    outs = [out / f"y{i}.bin" for i in range(len(lib.c_program.outputs))]
    res = subprocess.run([str(exe), str(out / "x.bin"), *map(str, outs)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    shape = lib.c_program.outputs[0][1].get_shape()
    return np.frombuffer(outs[0].read_bytes(), dtype="float32").reshape(shape)


@pytest.mark.parametrize("case", CASES)
def test_blocked_convolutions_match_the_interpreter(case, tmp_path):
    fn, shape = conv_net(**CASES[case])
    mod = xrelay.IRModule.from_expr(fn)
    lib = xrelay.build(mod, target="c")
    src = lib.get_source()
    # the tile kernel ran (alter-op-layout blocked the convolution for C)
    assert re.search(r"XR_F(8|16)_MACV?\(a", src), src[:2000]
    x = RNG.standard_normal(shape).astype("float32")
    want = reference(mod, {"x": x})
    assert np.isfinite(want).all() and np.ptp(want) > 0
    lib.run(x=x)
    np.testing.assert_allclose(lib.get_output(0), want, rtol=1e-4, atol=1e-4)
    portable = export_and_run(lib, x, tmp_path, ["-DXRELAY_PORTABLE"])
    np.testing.assert_allclose(portable, want, rtol=1e-4, atol=1e-4)
    # GNU vectors at the default width and at AVX's: the same arithmetic lane by lane as the
    # portable loops (no contraction under -std=c99), so the same bits
    for flags in ([], ["-mavx"]):
        got = export_and_run(lib, x, tmp_path, flags)
        if got is not None:
            np.testing.assert_array_equal(got, portable)


@pytest.mark.parametrize("block, vectors", [(16, ["XR_F16_MAC(a0_0,"]), (32, ["XR_F16_MAC(a0_0,", "XR_F16_MAC(a0_1,"]),
                                           (24, ["XR_F8_MAC(a0_0,", "XR_F8_MAC(a0_2,"])])  # fmt: skip
def test_explicit_channel_blocks_take_16_lane_vectors_where_they_divide(block, vectors, tmp_path):
    """A convolution written in NCHW{k}c / OIHW{k}i{k}o (the user's layout, not
    alter-op-layout's) runs with k / 16 ``XR_F16`` accumulators per pixel where 16 divides k,
    else k / 8 ``XR_F8`` ones; the same values in the step library, the exported program at
    GNU vectors' width and at AVX's (``XR_F16`` as two ``XR_F8`` halves there) and
    ``XRELAY_PORTABLE``'s loops."""
    x = relay.var("x", shape=(1, 2, 6, 9, block))
    w = relay.const(RNG.standard_normal((2, 2, 3, 3, block, block)).astype("float32") * 0.2)
    y = relay.nn.conv2d(x, w, kernel_size=(3, 3), channels=2 * block, padding=(1, 1), data_layout=f"NCHW{block}c",
                        kernel_layout=f"OIHW{block}i{block}o", out_layout=f"NCHW{block}c")  # fmt: skip
    mod = xrelay.IRModule.from_expr(relay.Function([x], y))
    lib = xrelay.build(mod, target="c")
    src = lib.get_source()
    assert all(v in src for v in vectors), [v for v in vectors if v not in src]
    assert (f"XR_F16_MAC(a0_{block // 16}," in src) is False
    xv = RNG.standard_normal((1, 2, 6, 9, block)).astype("float32")
    want = reference(mod, {"x": xv})
    assert np.isfinite(want).all() and np.ptp(want) > 0
    lib.run(x=xv)
    np.testing.assert_allclose(lib.get_output(0), want, rtol=1e-4, atol=1e-4)
    portable = export_and_run(lib, xv, tmp_path, ["-DXRELAY_PORTABLE"])
    np.testing.assert_allclose(portable, want, rtol=1e-4, atol=1e-4)
    for flags in ([], ["-mavx"], ["-mavx512f"]):
        got = export_and_run(lib, xv, tmp_path, flags)
        if got is not None:
            np.testing.assert_array_equal(got, portable)


def test_groups_of_part_of_a_block_keep_the_direct_loops():
    """Neither depthwise nor groups of whole 8-channel blocks (4 groups of 4): no tiles."""
    fn, _ = conv_net(n=1, c=16, h=6, w=6, o=16, k=(3, 3), padding=(1, 1), groups=4)
    lib = xrelay.build(xrelay.IRModule.from_expr(fn), target="c")
    assert "XR_F8" not in lib.get_source().split("#endif /* XRELAY_KERNELS_H */")[-1]


@pytest.mark.parametrize("groups", [8, 2])
def test_grouped_convolutions_between_blocked_ones_read_the_blocks(groups, tmp_path):
    """A grouped (not depthwise) convolution between blocked ones takes their channel-blocked
    layout: no layout_transform around it, so the plan holds no NCHW copies of its input and
    result. Groups of 4 channels (half a block) run the direct loops over blocked indices;
    groups of 16 channels (whole 8-channel blocks: each output block reads its group's 2
    input blocks) run as register tiles. The interpreter's values."""
    fn, shape = conv_net(n=1, c=8, h=7, w=9, o=32, k=(3, 3), padding=(1, 1))
    wg = relay.const(RNG.standard_normal((32, 32 // groups, 3, 3)).astype("float32") * 0.3)
    y = relay.nn.conv2d(fn.body, wg, kernel_size=(3, 3), channels=32, padding=(1, 1), groups=groups)
    w2 = relay.const(RNG.standard_normal((8, 32, 1, 1)).astype("float32") * 0.3)
    y = relay.nn.conv2d(relay.nn.relu(y), w2, kernel_size=(1, 1), channels=8)
    mod = xrelay.IRModule.from_expr(relay.Function(fn.params, y))
    lib = build_c(mod, channel_block=8)  # blocks of 8: groups of 16 channels are 2 blocks
    src = lib.get_source()
    # the input's transform into blocks and the result's out of them, nothing between
    assert src.count("/* layout_transform */") == 2, src.count("/* layout_transform */")
    # the tile over a group's 2 input blocks (the other convolutions have 1 and 4)
    assert ("for (int64_t icb = 0; icb < 2; ++icb)" in src) == (groups == 2)
    x = RNG.standard_normal(shape).astype("float32")
    want = reference(mod, {"x": x})
    assert np.isfinite(want).all() and np.ptp(want) > 0
    lib.run(x=x)
    np.testing.assert_allclose(lib.get_output(0), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(export_and_run(lib, x, tmp_path, []), want, rtol=1e-4, atol=1e-4)


def test_nchw_when_alter_op_layout_is_disabled():
    fn, _ = conv_net(**CASES["1x1-7x7"])
    with xrelay.transform.PassContext(opt_level=3, disabled_pass=["AlterOpLayout"]):
        lib = xrelay.build(xrelay.IRModule.from_expr(fn), target="c")
    assert "XR_F8_MAC" not in lib.get_source() and "layout_transform" not in lib.get_source()


@pytest.mark.parametrize("count_include_pad", [False, True])
def test_pools_after_a_blocked_convolution_read_channel_blocks(count_include_pad, tmp_path):
    """Max, average and global pools that follow a blocked convolution stay blocked and run
    over each window position's contiguous channel block; padding as the reference's."""
    fn, shape = conv_net(n=1, c=8, h=11, w=10, o=16, k=(3, 3), padding=(1, 1))
    y = relay.nn.max_pool2d(fn.body, pool_size=(3, 3), strides=(2, 2), padding=(1, 1))
    z = relay.nn.avg_pool2d(y, pool_size=(2, 3), strides=(1, 2), padding=(1, 1, 0, 1),
                            count_include_pad=count_include_pad)  # fmt: skip
    g = relay.nn.global_avg_pool2d(z)
    mod = xrelay.IRModule.from_expr(relay.Function(fn.params, relay.Tuple([z, g])))
    lib = xrelay.build(mod, target="c")
    assert lib.get_source().count("const float *restrict vp = ") >= 3
    x = RNG.standard_normal(shape).astype("float32")
    ref = xrelay.run(mod, {"x": x})
    lib.run(x=x)
    for i, want in enumerate(ref):
        want = np.asarray(want)
        assert np.isfinite(want).all() and np.ptp(want) > 0
        np.testing.assert_allclose(lib.get_output(i), want, rtol=1e-5, atol=1e-5)
    portable = export_and_run(lib, x, tmp_path, ["-DXRELAY_PORTABLE"])
    np.testing.assert_allclose(portable, np.asarray(ref[0]), rtol=1e-5, atol=1e-5)


def test_blocked_max_pool_takes_vector_maxima_and_keeps_nans(tmp_path):
    """A float max pool over 8-channel blocks takes each window position's block as
    ``XR_F8`` vectors (``XR_F8_MAX``): the reference's values, and a NaN in a window gives NaN
    (the select lets NaN win, as ``v > acc || v != v`` does), at GNU vectors' default width, at
    AVX's, and in ``XRELAY_PORTABLE``'s loops."""
    fn, shape = conv_net(n=1, c=8, h=12, w=13, o=16, k=(3, 3), padding=(1, 1))
    y = relay.nn.max_pool2d(fn.body, pool_size=(3, 3), strides=(2, 2), padding=(1, 1))
    mod = xrelay.IRModule.from_expr(relay.Function(fn.params, y))
    lib = xrelay.build(mod, target="c")
    assert "XR_F8_MAX(acc0, x0)" in lib.get_source()
    x = RNG.standard_normal(shape).astype("float32")
    x[0, 3, 2, 4] = np.nan  # through the 3x3 convolution: NaN in every channel around (2, 4)
    want = reference(mod, {"x": x})
    nan = np.isnan(want)
    assert nan.any() and not nan.all() and np.isfinite(want[~nan]).all() and np.ptp(want[~nan]) > 0
    lib.run(x=x)
    got = lib.get_output(0)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_allclose(got[~nan], want[~nan], rtol=1e-5, atol=1e-5)
    for flags in (["-DXRELAY_PORTABLE"], [], ["-mavx"]):
        out = export_and_run(lib, x, tmp_path, flags)
        if out is not None:
            np.testing.assert_array_equal(np.isnan(out), nan)
            np.testing.assert_allclose(out[~nan], want[~nan], rtol=1e-5, atol=1e-5)


def test_the_host_vector_chooses_the_blocks():
    """``build_c`` blocks float channels by the host compiler's vector (16 lanes with AVX-512,
    else 8) in multiples of 8 where the channels allow: 24 channels take blocks of 8 (not 12:
    no register tile) and the convolution after them reads those blocks (no
    ``layout_transform`` between), 32 channels take the host's width; ``channel_block=8``
    gives 8 everywhere."""
    x = relay.var("x", shape=(1, 8, 6, 7))
    w1 = relay.const(RNG.standard_normal((24, 8, 3, 3)).astype("float32") * 0.3)
    w2 = relay.const(RNG.standard_normal((32, 24, 3, 3)).astype("float32") * 0.3)
    y = relay.nn.conv2d(x, w1, kernel_size=(3, 3), channels=24, padding=(1, 1))
    y = relay.nn.conv2d(relay.nn.relu(y), w2, kernel_size=(3, 3), channels=32, padding=(1, 1))
    mod = xrelay.IRModule.from_expr(relay.Function([x], y))
    lanes = host_float_lanes()
    assert lanes == (16 if "avx512f" in open("/proc/cpuinfo").read().split() else 8)
    xv = RNG.standard_normal((1, 8, 6, 7)).astype("float32")
    want = reference(mod, {"x": xv})
    assert np.isfinite(want).all() and np.ptp(want) > 0
    for block, lib in ((lanes, build_c(mod)), (8, build_c(mod, channel_block=8))):
        src = lib.get_source()
        assert src.count("/* layout_transform */") == 2, src.count("/* layout_transform */")
        assert "XR_F8_MAC(a0_0," in src  # the 24 channels' blocks of 8
        assert ("XR_F16_MAC(a0_0," in src) == (block == 16)
        lib.run(x=xv)
        np.testing.assert_allclose(lib.get_output(0), want, rtol=1e-4, atol=1e-4)
