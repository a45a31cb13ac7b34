"""The C target's 8-bit convolutions: ``alter-op-layout`` gives them an ``OHWI`` kernel and the
C computes them as int32 dot products over contiguous channels-last patches in register tiles
(``_conv2d_int8``). Each case is a qnn block (quantize, ``qnn.conv2d`` with per-channel
kernel scales, an int32 bias, requantize) built for C, compiled strictly, run step by step
and through its standalone entry, and compared with the reference interpreter bit for bit.
Shapes leave remainders of every blocking: output channels not a multiple of the tile, output
columns past a whole tile, patch lengths that are not a multiple of ``INT8_K_ALIGN`` (the 7x7
stem's 147, a 1x1 kernel's 24 channels), strides, dilation, asymmetric padding, int8 data,
batch 2."""

import shutil
import subprocess

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.backend.c.c_function import INT8_K_ALIGN

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2"]
CC = shutil.which("cc")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler (cc) on PATH")
RNG = np.random.default_rng(23)
TILE = "+= v0 * (int32_t)w0[k];"
"""A line only the 8-bit tile emits."""


def c(value, dtype):
    return relay.const(np.asarray(value, dtype=dtype))


def qconv(n, c_, h, w, o, k, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, dtype="uint8"):
    x = relay.var("x", shape=(n, c_, h, w))
    zp = 7 if dtype == "uint8" else -3
    q = relay.qnn.op.quantize(x, c(0.05, "float32"), c(zp, "int32"), out_dtype=dtype)
    wt = relay.const(RNG.integers(-128, 128, (o, c_ // groups, *k)).astype("int8"))
    acc = relay.qnn.op.conv2d(
        q, wt, c(zp, "int32"), c(0, "int32"), c(0.05, "float32"), c(RNG.uniform(0.01, 0.02, o), "float32"),
        kernel_size=k, channels=o, strides=strides, padding=padding, dilation=dilation, groups=groups,
    )  # fmt: skip
    acc = relay.add(acc, relay.const(RNG.integers(-500, 500, (o, 1, 1)).astype("int32")))
    r = relay.qnn.op.requantize(
        acc, c(RNG.uniform(2e-4, 5e-4, o), "float32"), c(0, "int32"), c(0.1, "float32"), c(3, "int32"),
        axis=1, out_dtype="uint8",
    )  # fmt: skip
    return relay.Function([x], r), (n, c_, h, w)


CASES = {
    "3x3-pad1-6-channels-13-columns": dict(n=1, c_=16, h=5, w=13, o=6, k=(3, 3), padding=(1, 1)),
    "7x7-stride2-3-channels": dict(n=1, c_=3, h=19, w=21, o=8, k=(7, 7), strides=(2, 2), padding=(3, 3)),
    "1x1-stride2-64-channels": dict(n=1, c_=64, h=9, w=9, o=8, k=(1, 1), strides=(2, 2)),
    "1x1-24-channels": dict(n=1, c_=24, h=6, w=10, o=16, k=(1, 1)),
    "3x5-dilated-asymmetric": dict(n=1, c_=8, h=12, w=17, o=12, k=(3, 5), dilation=(2, 2), padding=(2, 3, 1, 0)),
    "batch-2-int8-data": dict(n=2, c_=8, h=6, w=7, o=4, k=(3, 3), padding=(1, 1), dtype="int8"),
}


def reference(mod, x):
    ref = xrelay.run(mod, {"x": x})
    ref = ref[0] if isinstance(ref, list | tuple) else ref
    return np.asarray(ref.numpy() if hasattr(ref, "numpy") else ref)


def build_and_compare(fn, shape, tmp_path):
    """Build for C, compile strictly, run the steps and the standalone entry; both must be the
    interpreter's bits. Returns the module."""
    mod = xrelay.IRModule.from_expr(fn)
    lib = xrelay.build(mod, target="c")
    lib.export(tmp_path)
    res = subprocess.run([CC, *STRICT, "-c", "-I", str(tmp_path), str(tmp_path / "model.c"),
                          "-o", str(tmp_path / "model.o")], capture_output=True, text=True)  # fmt: skip
    assert res.returncode == 0, res.stderr
    x = (RNG.standard_normal(shape) * 4).astype("float32")
    want = reference(mod, x)
    # the output spans the range (not clamped to a constant): a broken sum would show
    assert want.dtype == np.uint8 and len(np.unique(want)) > 20
    lib.run(x=x)
    np.testing.assert_array_equal(lib.get_output(0), want)
    lib.run_aot()
    np.testing.assert_array_equal(lib.get_output(0), want)
    return lib


@pytest.mark.parametrize("case", CASES)
def test_int8_convolutions_are_the_interpreters_bits(case, tmp_path):
    fn, shape = qconv(**CASES[case])
    lib = build_and_compare(fn, shape, tmp_path)
    assert TILE in lib.get_source()


def test_patch_lengths_are_padded_to_the_vector_multiple(tmp_path):
    """The 7x7x3 stem's 147 taps run as a loop of 192 over zero-padded rows (no remainder)."""
    fn, shape = qconv(**CASES["7x7-stride2-3-channels"])
    src = build_and_compare(fn, shape, tmp_path).get_source()
    padded = -(-147 // INT8_K_ALIGN) * INT8_K_ALIGN
    assert f"for (int64_t k = 0; k < {padded}; ++k) {{" in src and "k < 147; ++k) {\n" not in src


def test_grouped_and_overflowing_convolutions_keep_the_direct_loops(tmp_path):
    """Depthwise 8-bit convolutions keep NCHW/OIHW and the direct loops; so does one whose
    patch (8192 channels x 3 x 3 = 73728 taps of 255 x 128) could overflow an int32 sum."""
    fn, shape = qconv(n=1, c_=8, h=6, w=9, o=8, k=(3, 3), padding=(1, 1), groups=8)
    assert TILE not in build_and_compare(fn, shape, tmp_path / "depthwise").get_source()
    fn, shape = qconv(n=1, c_=8192, h=3, w=3, o=2, k=(3, 3))
    lib = xrelay.build(xrelay.IRModule.from_expr(fn), target="c")
    assert TILE not in lib.get_source()
    x = (RNG.standard_normal(shape) * 4).astype("float32")
    lib.run(x=x)
    want = reference(xrelay.IRModule.from_expr(fn), x)
    np.testing.assert_array_equal(lib.get_output(0), want)


def test_below_opt_level_3_the_direct_loops_compute_the_same_bits(tmp_path):
    """alter-op-layout runs at opt_level 3: below it the kernel stays OIHW, the direct loops."""
    fn, shape = qconv(**CASES["3x3-pad1-6-channels-13-columns"])
    mod = xrelay.IRModule.from_expr(fn)
    with xrelay.transform.PassContext(opt_level=2):
        lib = xrelay.build(mod, target="c", opt_level=2)
    assert TILE not in lib.get_source()
    x = (RNG.standard_normal(shape) * 4).astype("float32")
    lib.run(x=x)
    np.testing.assert_array_equal(lib.get_output(0), reference(mod, x))


def test_the_convolutions_own_padding_is_zeros_in_reused_scratch(tmp_path):
    """An 8-bit ``nn.conv2d`` with its own padding (zeros; qnn's zero-point padding is an
    explicit ``nn.pad``) after another that fills the shared scratch with input bytes: the
    padded border is zeros, not what the earlier step left there."""
    x = relay.var("x", shape=(1, 16, 12, 12), dtype="uint8")
    w1 = relay.const(RNG.integers(-128, 128, (16, 16, 1, 1)).astype("int8"))
    w2 = relay.const(RNG.integers(-128, 128, (8, 16, 3, 3)).astype("int8"))
    y = relay.nn.conv2d(x, w1, kernel_size=(1, 1), channels=16, out_dtype="int32")
    y = relay.cast(relay.clip(relay.right_shift(y, relay.const(np.int32(6))), 0, 255), "uint8")
    y = relay.nn.conv2d(y, w2, kernel_size=(3, 3), channels=8, padding=(1, 1), out_dtype="int32")
    mod = xrelay.IRModule.from_expr(relay.Function([x], y))
    lib = xrelay.build(mod, target="c")
    assert lib.get_source().count(TILE) == 2
    for seed in range(2):  # the second run starts from the scratch the first one left
        xv = np.random.default_rng(seed).integers(100, 256, (1, 16, 12, 12)).astype("uint8")
        want = reference(mod, xv)
        assert len(np.unique(want)) > 100
        lib.run(x=xv)
        np.testing.assert_array_equal(lib.get_output(0), want)
        lib.run_aot()
        np.testing.assert_array_equal(lib.get_output(0), want)
