"""The C target's 8-bit convolutions: ``alter-op-layout`` gives them an ``OHWI`` kernel and the
C computes them as int32 dot products over contiguous channels-last patches in register tiles
(``_conv2d_int8``). Each case is a qnn block (quantize, ``qnn.conv2d`` with per-channel
kernel scales, an int32 bias, requantize) built for C, compiled strictly, run step by step
and through its standalone entry, and compared with the reference interpreter bit for bit.
Shapes leave remainders of every blocking: output channels not a multiple of the tile, output
columns past a whole tile, patch lengths that are not a multiple of ``INT8_K_ALIGN`` (the 7x7
stem's 147, a 1x1 kernel's 24 channels), strides, dilation, asymmetric padding, int8 data,
batch 2. The requantize after a convolution is the tile store's epilogue (no int32 result in
memory), depthwise 8-bit convolutions run one loop per channel's map with it. Pointwise convolutions of uint8 data
by int8 weights (1x1, stride 1, unpadded) run as a GEMM over the map read in place
(``_conv2d_int8_pointwise``, the ``xr_pw_*`` kernels of ``xrelay_kernels.h``), at every opt
level, the AVX-512 VNNI build and the ``XRELAY_PORTABLE`` one giving the same bits."""

import re
import shutil
import subprocess

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.backend.c import c_function
from xrelay.backend.c.c_function import INT8_K_ALIGN, INT8_K_ALIGN_SHORT

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2"]
CC = shutil.which("cc")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler (cc) on PATH")
RNG = np.random.default_rng(23)
TILE = "+= v0 * (int32_t)w0[k];"
"""A line only the 8-bit tile emits."""
POINTWISE = "xr_pw_tile_u8s8("
"""The call only the pointwise 8-bit GEMM's tiles emit (the pointwise GEMM, wide rows, bands)."""
BAND = "xr_pw_pack_patches_u8("
"""The call only the band tiles of a uint8 x int8 convolution over channel quads emit."""


def dense_tiles(src: str) -> bool:
    """Whether a convolution of ``src`` runs as the 2 x 4 tiles or as the band tiles."""
    return TILE in src or BAND in src


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
    """The interpreter's result for input ``x`` (or a dict of inputs)."""
    ref = xrelay.run(mod, x if isinstance(x, dict) else {"x": x})
    ref = ref[0] if isinstance(ref, list | tuple) else ref
    return np.asarray(ref.numpy() if hasattr(ref, "numpy") else ref)


def compile_strictly(lib, tmp_path) -> None:
    lib.export(tmp_path)
    res = subprocess.run([CC, *STRICT, "-c", "-I", str(tmp_path), str(tmp_path / "model.c"),
                          "-o", str(tmp_path / "model.o")], capture_output=True, text=True)  # fmt: skip
    assert res.returncode == 0, res.stderr


def steps_and_program_match(lib, mod, xv, distinct: int = 100) -> None:
    """The C steps and the standalone program give the interpreter's bits for ``xv`` (whose
    result has more than ``distinct`` values: a broken sum would show)."""
    want = reference(mod, xv)
    assert len(np.unique(want)) > distinct
    lib.run(x=xv)
    np.testing.assert_array_equal(lib.get_output(0), want)
    lib.run_aot()
    np.testing.assert_array_equal(lib.get_output(0), want)


def build_and_compare(fn, shape, tmp_path):
    """Build for C, compile strictly, run the steps and the standalone entry; both must be the
    interpreter's bits. Returns the module."""
    mod = xrelay.IRModule.from_expr(fn)
    lib = xrelay.build(mod, target="c")
    compile_strictly(lib, tmp_path)
    x = (RNG.standard_normal(shape) * 4).astype("float32")
    assert reference(mod, x).dtype == np.uint8
    steps_and_program_match(lib, mod, x, distinct=20)
    return lib


@pytest.mark.parametrize("case", CASES)
def test_int8_convolutions_are_the_interpreters_bits(case, tmp_path):
    fn, shape = qconv(**CASES[case])
    lib = build_and_compare(fn, shape, tmp_path)
    kw = CASES[case]
    uint8 = kw.get("dtype", "uint8") == "uint8"
    pointwise = kw["k"] == (1, 1) and kw.get("strides", (1, 1)) == (1, 1) and uint8
    band = uint8 and kw["c_"] % 4 == 0 and kw["o"] % 4 == 0
    assert (POINTWISE if pointwise else BAND if band else TILE) in lib.get_source()


def test_patch_lengths_are_padded_to_the_vector_multiple(tmp_path):
    """The 7x7x3 stem's 147 taps run as a loop of 192 over zero-padded rows (no remainder)."""
    fn, shape = qconv(**CASES["7x7-stride2-3-channels"])
    src = build_and_compare(fn, shape, tmp_path).get_source()
    padded = -(-147 // INT8_K_ALIGN) * INT8_K_ALIGN
    assert f"for (int64_t k = 0; k < {padded}; ++k) {{" in src and "k < 147; ++k) {\n" not in src


def test_grouped_and_overflowing_convolutions_keep_the_direct_loops(tmp_path):
    """Depthwise 8-bit convolutions keep NCHW/OIHW (and run channel by channel, below); one whose
    patch (8192 channels x 3 x 3 = 73728 taps of 255 x 128) could overflow an int32 sum."""
    fn, shape = qconv(n=1, c_=8, h=6, w=9, o=8, k=(3, 3), padding=(1, 1), groups=8)
    assert not dense_tiles(build_and_compare(fn, shape, tmp_path / "depthwise").get_source())
    fn, shape = qconv(n=1, c_=8192, h=3, w=3, o=2, k=(3, 3))
    lib = xrelay.build(xrelay.IRModule.from_expr(fn), target="c")
    assert not dense_tiles(lib.get_source())
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
    assert not dense_tiles(lib.get_source())
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
    assert lib.get_source().count(BAND) == 1 and "xr_pw_pack_u8(" in lib.get_source()  # (its tile of input bytes)
    for seed in range(2):  # the second run starts from the scratch the first one left
        xv = np.random.default_rng(seed).integers(100, 256, (1, 16, 12, 12)).astype("uint8")
        steps_and_program_match(lib, mod, xv)


DEPTHWISE = ("yr[m] = (int32_t)xp[m + ", "xr_dw_plane_u8(")
"""What only the depthwise 8-bit convolution emits: the sum of a channel's taps in one loop over
its map, and the padded, phase-split plane copy of a padded or strided one."""


def loops_after_the_convolution(src: str) -> set[str]:
    """The ops the convolution's function emits as loops of their own after it (their
    ``/* op */`` comments); empty when the chain after it is its epilogue."""
    found = set()
    for fn in re.findall(r"XRELAY_FN void \w*conv2d\w*\(.*?\n}\n", src, re.S):
        found |= set(re.findall(r"/\* ([\w.]+) \*/", fn)) - {"nn.conv2d", "nn.pad"}
    return found

DEPTHWISE_CASES = {
    "stride1": dict(strides=(1, 1), padding=(1, 1)),
    "stride2": dict(strides=(2, 2), padding=(1, 1)),
    "stride2-no-padding": dict(strides=(2, 2), padding=(0, 0)),
    "dilated-asymmetric": dict(strides=(1, 1), padding=(2, 1, 0, 2), dilation=(2, 2)),
    "stride3-dilated-int8-data": dict(strides=(3, 2), padding=(2, 1), dilation=(2, 3), dtype="int8"),
    "stride1-no-padding": dict(strides=(1, 1), padding=(0, 0)),
    "stride2x1-no-padding": dict(strides=(2, 1), padding=(0, 0)),
}


@pytest.mark.parametrize("case", DEPTHWISE_CASES)
def test_depthwise_convolutions_run_channel_by_channel_with_the_epilogue(case, tmp_path):
    """qnn depthwise convolutions (their zero-point padding an explicit ``nn.pad``, so the
    convolution has none: one pass over each channel's map summing all 9 taps) at batch 2: the
    interpreter's bits, compiled strictly, and no int32 result in memory."""
    kw = DEPTHWISE_CASES[case]
    fn, shape = qconv(n=2, c_=8, h=9, w=11, o=8, k=(3, 3), groups=8, **kw)
    lib = build_and_compare(fn, shape, tmp_path)
    src = lib.get_source()
    assert DEPTHWISE[0] in src and not dense_tiles(src)
    assert not loops_after_the_convolution(src) and "xr_q_multiply_shift(v, in" in src
    # (the zero-point nn.pad fuses with the quantize before it, not into the convolution)
    assert (DEPTHWISE[1] in src) == (kw["strides"] != (1, 1))


@pytest.mark.parametrize("dtype, strides, widths", [
    ("uint8", (1, 1), ((1, 1), (1, 1))), ("uint8", (2, 2), ((1, 1), (1, 1))),
    ("int8", (2, 1), ((0, 2), (3, 1))), ("uint8", (3, 3), ((2, 0), (0, 2))),
])  # fmt: skip
def test_the_zero_point_pad_before_a_depthwise_convolution_is_never_made(dtype, strides, widths, tmp_path):
    """An ``nn.pad`` of the height and width by a zero point (7, or -3 for int8 data) in the
    depthwise convolution's function (MobileNetV2's every 3x3 layer): the convolution pads each
    channel's plane as it copies it, so the padded map never exists: the function's scratch is
    one padded plane and one map of int32 sums, below the padded map's bytes; the interpreter's
    bits, compiled strictly, steps and standalone."""
    c_, h, w = 24, 10, 13
    x = relay.var("x", shape=(2, c_, h, w), dtype=dtype)
    zp = 7 if dtype == "uint8" else -3
    p = relay.nn.pad(x, ((0, 0), (0, 0), *widths), pad_value=relay.const(np.array(zp, dtype)))
    wt = relay.const(RNG.integers(-128, 128, (c_, 1, 3, 3)).astype("int8"))
    y = relay.nn.conv2d(p, wt, kernel_size=(3, 3), channels=c_, groups=c_, strides=strides, out_dtype="int32")
    y = relay.cast(relay.clip(relay.right_shift(y, relay.const(np.int32(6))), 0, 255), "uint8")
    mod = xrelay.IRModule.from_expr(relay.Function([x], y))
    lib = xrelay.build(mod, target="c")
    src = lib.get_source()
    assert "(into the convolution below)" in src and DEPTHWISE[1] in src
    compile_strictly(lib, tmp_path)
    lo = 0 if dtype == "uint8" else -128
    steps_and_program_match(lib, mod, RNG.integers(lo, lo + 256, (2, c_, h, w)).astype(dtype), distinct=50)
    hp, wp = h + sum(widths[0]), w + sum(widths[1])
    assert _conv_scratch(lib) < 2 * c_ * hp * wp


@pytest.mark.parametrize("pad, strides", [((1, 1), (1, 1)), ((1, 2, 0, 1), (2, 1)), ((3, 3), (1, 1)), ((1, 1), (2, 2)),
                                         ((0, 0), (1, 1)), ((0, 0), (1, 2))])
def test_depthwise_convolutions_with_their_own_padding(pad, strides, tmp_path):
    """An 8-bit depthwise ``nn.conv2d`` with its own padding (zeros), its int32 result
    returned (padding wider than the kernel's reach: taps that read only padding; unpadded with
    stride 1, the sums go straight into the result, rows not moved)."""
    x = relay.var("x", shape=(1, 6, 7, 10), dtype="uint8")
    w = relay.const(RNG.integers(-128, 128, (6, 1, 3, 3)).astype("int8"))
    y = relay.nn.conv2d(x, w, kernel_size=(3, 3), channels=6, groups=6, padding=pad, strides=strides, out_dtype="int32")
    mod = xrelay.IRModule.from_expr(relay.Function([x], y))
    lib = xrelay.build(mod, target="c")
    compile_strictly(lib, tmp_path)
    assert (DEPTHWISE[1] in lib.get_source()) == (any(pad) or strides != (1, 1))
    assert DEPTHWISE[0] in lib.get_source()
    steps_and_program_match(lib, mod, RNG.integers(0, 256, (1, 6, 7, 10)).astype("uint8"))


def _conv_scratch(lib) -> int:
    return max(f.scratch_bytes for name, f in lib.c_program.functions.items() if "conv2d" in name)


EPILOGUE_CASES = {
    # 48 rows of 13 columns: groups of 20 rows (EPILOGUE_SPAN / 13), the last one of 8
    "3x3-48x13": dict(n=1, c_=16, h=48, w=13, o=8, k=(3, 3), padding=(1, 1)),
    "1x1-24-channels-40x10-int8": dict(n=1, c_=24, h=40, w=10, o=16, k=(1, 1), dtype="int8"),
    "batch-2-6-channels": dict(n=2, c_=8, h=30, w=11, o=6, k=(3, 3), padding=(1, 1)),
}


@pytest.mark.parametrize("case", EPILOGUE_CASES)
def test_the_requantize_is_the_tile_stores_epilogue(case, tmp_path, monkeypatch):
    """The requantize chain after an 8-bit convolution (zero-point term, bias, per-channel
    fixed-point multiply, zero point, clip, cast) runs over each band of output rows as soon
    as the tiles have stored its int32 sums: the int32 result in memory is one band of
    ``ceil(EPILOGUE_SPAN / W)`` rows, not the map, so the function's scratch is smaller by
    the rest of the map, and the C's RAM is the plan's pools. Without the epilogue (the
    chain as a loop of its own) the bits are the same."""
    fn, shape = qconv(**EPILOGUE_CASES[case])
    lib = build_and_compare(fn, shape, tmp_path / "epilogue")
    src = lib.get_source()
    assert not loops_after_the_convolution(src) and "xr_q_multiply_shift(v, in" in src
    assert lib.summary.pools == dict(lib.plan_info[2].pool_sizes)
    monkeypatch.setattr(c_function, "_epilogue", lambda em, op: None)
    plain = build_and_compare(fn, shape, tmp_path / "plain")
    assert loops_after_the_convolution(plain.get_source())
    n, o, h, w = (EPILOGUE_CASES[case][k] for k in ("n", "o", "h", "w"))
    band = -(-c_function.EPILOGUE_SPAN // w)
    assert band < h
    assert _conv_scratch(plain) - _conv_scratch(lib) >= (n * h - band) * o * w * 4
    assert lib.summary.ram < plain.summary.ram


def test_a_returned_int32_result_is_stored_and_the_chain_reads_it(tmp_path):
    """A convolution whose int32 result is also returned stores it (no epilogue); both
    results are the interpreter's bits."""
    x = relay.var("x", shape=(1, 16, 6, 9), dtype="uint8")
    w = relay.const(RNG.integers(-128, 128, (8, 16, 3, 3)).astype("int8"))
    acc = relay.nn.conv2d(x, w, kernel_size=(3, 3), channels=8, padding=(1, 1), out_dtype="int32")
    q = relay.cast(relay.clip(relay.right_shift(acc, relay.const(np.int32(7))), 0, 255), "uint8")
    mod = xrelay.IRModule.from_expr(relay.Function([x], relay.Tuple([q, acc])))
    lib = xrelay.build(mod, target="c")
    assert BAND in lib.get_source()
    xv = RNG.integers(0, 256, (1, 16, 6, 9)).astype("uint8")
    want = xrelay.run(mod, {"x": xv})
    lib.run(x=xv)
    for k in range(2):
        np.testing.assert_array_equal(lib.get_output(k), np.asarray(want[k]))


def test_short_patches_pad_to_16_bytes_not_64(tmp_path):
    """A 1x1 convolution over 24 channels of int8 data (uint8 data takes the pointwise GEMM)
    runs a loop of 32 (not 64: 2.7x the work in zeros)."""
    fn, shape = qconv(**{**CASES["1x1-24-channels"], "dtype": "int8"})
    src = build_and_compare(fn, shape, tmp_path).get_source()
    assert INT8_K_ALIGN_SHORT == 16
    assert "for (int64_t k = 0; k < 32; ++k) {" in src and "k < 64; ++k) {" not in src


def test_an_epilogue_operand_broadcast_along_the_columns(tmp_path):
    """An epilogue operand that varies along the columns only (shape ``(W,)``: its row stride
    is 0, not W times its column stride) is read at each element's column, not at its
    offset in the band."""
    x = relay.var("x", shape=(1, 16, 40, 13), dtype="uint8")
    w = relay.const(RNG.integers(-128, 128, (8, 16, 3, 3)).astype("int8"))
    y = relay.nn.conv2d(x, w, kernel_size=(3, 3), channels=8, padding=(1, 1), out_dtype="int32")
    y = relay.add(y, relay.const(RNG.integers(-20000, 20000, (13,)).astype("int32")))
    y = relay.cast(relay.clip(relay.right_shift(y, relay.const(np.int32(8))), 0, 255), "uint8")
    mod = xrelay.IRModule.from_expr(relay.Function([x], y))
    lib = xrelay.build(mod, target="c")
    assert BAND in lib.get_source() and not loops_after_the_convolution(lib.get_source())
    compile_strictly(lib, tmp_path)
    steps_and_program_match(lib, mod, RNG.integers(0, 256, (1, 16, 40, 13)).astype("uint8"))


PW_CASES = {
    # channels, output channels, rows x columns (pixels vs the 64-pixel tile), batch
    "16-to-96-whole-tiles": dict(n=1, c_=16, h=8, w=16, o=96),
    "6-channels-6-outputs-65-pixels": dict(n=1, c_=6, h=5, w=13, o=6),
    "10-channels-batch-2-49-pixels": dict(n=2, c_=10, h=7, w=7, o=8),
    "96-to-24-tail-of-3": dict(n=1, c_=96, h=7, w=19, o=24),
}


def export_and_run(lib, x, out, flags, dtype="uint8"):
    """The exported program with its main compiled under STRICT + ``flags`` and run on ``x``:
    its first output."""
    out.mkdir()
    lib.export(out, main=True)
    res = subprocess.run([CC, *STRICT, *flags, "-I", str(out), str(out / "model.c"), str(out / "main.c"),
                          "-o", str(out / "model"), "-lm"], capture_output=True, text=True)  # fmt: skip
    assert res.returncode == 0, res.stderr
    (out / "x.bin").write_bytes(x.tobytes())
    res = subprocess.run([str(out / "model"), str(out / "x.bin"), str(out / "y.bin")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return np.frombuffer((out / "y.bin").read_bytes(), dtype=dtype).reshape(lib.c_program.outputs[0][1].get_shape())


def host_has_vnni() -> bool:
    return "avx512_vnni" in open("/proc/cpuinfo").read()


@pytest.mark.parametrize("case", PW_CASES)
def test_pointwise_convolutions_are_a_gemm_over_the_map_in_place(case, tmp_path):
    """1x1 uint8 x int8 convolutions with the requantize after them: the pointwise GEMM's bits
    are the interpreter's, step by step, standalone, in the portable build and (where the host
    has it) the AVX-512 VNNI one; the int32 result never exists (the epilogue stores the 4 x 64
    tile) and the input is never copied whole: the function's scratch is one tile's channels
    (x 64 pixels) and the 4 x 64 int32 sums, plus zero-padded weight rows where the channels
    are not a multiple of 4 or the output channels of 4."""
    kw = PW_CASES[case]
    fn, shape = qconv(**kw, k=(1, 1))
    mod = xrelay.IRModule.from_expr(fn)
    lib = build_and_compare(fn, shape, tmp_path / "steps")
    src = lib.get_source()
    assert POINTWISE in src and TILE not in src and not loops_after_the_convolution(src)
    cp, o4 = -(-kw["c_"] // 4) * 4, -(-kw["o"] // 4) * 4
    weights = 0 if (cp, o4) == (kw["c_"], kw["o"]) else o4 * cp
    assert _conv_scratch(lib) <= cp * 64 + 4 * 64 * 4 + weights + 3 * 64
    x = (RNG.standard_normal(shape) * 4).astype("float32")
    want = reference(mod, x)
    builds = [["-DXRELAY_PORTABLE"], *([["-march=native"]] if host_has_vnni() else [])]
    for flags in builds:
        got = export_and_run(lib, x, tmp_path / flags[0].strip("-").replace("=", ""), flags)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
def test_pointwise_convolutions_at_every_opt_level(opt_level, tmp_path):
    """Below opt level 3 the kernel stays OIHW, the same bytes as OHWI for 1x1: the pointwise
    GEMM runs at every level, with the interpreter's bits (the int32 result returned too, so
    one convolution stores its sums without an epilogue)."""
    x = relay.var("x", shape=(1, 12, 9, 9), dtype="uint8")
    wt = relay.const(RNG.integers(-128, 128, (20, 12, 1, 1)).astype("int8"))
    acc = relay.nn.conv2d(x, wt, kernel_size=(1, 1), channels=20, out_dtype="int32")
    q = relay.cast(relay.clip(relay.right_shift(acc, relay.const(np.int32(7))), 0, 255), "uint8")
    mod = xrelay.IRModule.from_expr(relay.Function([x], relay.Tuple([q, acc])))
    with xrelay.transform.PassContext(opt_level=opt_level):
        lib = xrelay.build(mod, target="c", opt_level=opt_level)
    assert POINTWISE in lib.get_source()
    compile_strictly(lib, tmp_path)
    xv = RNG.integers(0, 256, (1, 12, 9, 9)).astype("uint8")
    want = xrelay.run(mod, {"x": xv})
    for run in (lambda: lib.run(x=xv), lib.run_aot):
        run()
        for k in range(2):
            np.testing.assert_array_equal(lib.get_output(k), np.asarray(want[k].numpy() if hasattr(want[k], "numpy") else want[k]))


def test_pointwise_forms_the_gemm_does_not_take_keep_their_loops(tmp_path):
    """int8 data, a stride, the convolution's own padding (qnn's zero-point padding is an
    explicit ``nn.pad`` before an unpadded convolution) or an int32 sum that could overflow
    (66000 channels of 255 x 128) keep the other loops."""
    for kw in (dict(dtype="int8"), dict(strides=(2, 2))):
        fn, shape = qconv(n=1, c_=8, h=10, w=10, o=4, k=(1, 1), **kw)
        src = build_and_compare(fn, shape, tmp_path / str(len(list(tmp_path.iterdir())))).get_source()
        assert "xr_pw_pack_u8(" not in src
    x = relay.var("x", shape=(1, 8, 5, 5), dtype="uint8")
    wt = relay.const(RNG.integers(-128, 128, (4, 8, 1, 1)).astype("int8"))
    padded = relay.nn.conv2d(x, wt, kernel_size=(1, 1), padding=(1, 1), out_dtype="int32")
    mod = xrelay.IRModule.from_expr(relay.Function([x], padded))
    lib = xrelay.build(mod, target="c")
    assert "xr_pw_pack_u8(" not in lib.get_source()
    xv = RNG.integers(0, 256, (1, 8, 5, 5)).astype("uint8")
    lib.run(x=xv)
    np.testing.assert_array_equal(lib.get_output(0), reference(mod, xv))
    x = relay.var("x", shape=(1, 66000, 1, 1), dtype="uint8")
    wt = relay.const(np.ones((1, 66000, 1, 1), "int8"))
    mod = xrelay.IRModule.from_expr(relay.Function([x], relay.nn.conv2d(x, wt, kernel_size=(1, 1), out_dtype="int32")))
    assert POINTWISE not in xrelay.build(mod, target="c").get_source()


def test_pointwise_tiles_read_no_byte_past_the_input(tmp_path):
    """The input the program is given, read in place by a 1x1 convolution over 6 channels
    (padded to 8 in the tile) of 65 pixels (a last tile of 1): under AddressSanitizer no read
    goes past it (the padded channels and pixels are zeros the packing writes, not bytes it
    reads), in the portable build and the VNNI one."""
    probe = subprocess.run([CC, "-fsanitize=address", "-x", "c", "-", "-o", str(tmp_path / "probe")],
                           input="int main(void) { return 0; }", capture_output=True, text=True)  # fmt: skip
    assert probe.returncode == 0, f"this test needs a C compiler with AddressSanitizer: {probe.stderr}"
    x = relay.var("x", shape=(1, 6, 5, 13), dtype="uint8")
    wt = relay.const(RNG.integers(-128, 128, (8, 6, 1, 1)).astype("int8"))
    mod = xrelay.IRModule.from_expr(relay.Function([x], relay.nn.conv2d(x, wt, kernel_size=(1, 1), out_dtype="int32")))
    lib = xrelay.build(mod, target="c")
    assert POINTWISE in lib.get_source()
    xv = RNG.integers(0, 256, (1, 6, 5, 13)).astype("uint8")
    for flags in [["-DXRELAY_PORTABLE"], *([["-march=native"]] if host_has_vnni() else [])]:
        got = export_and_run(lib, xv, tmp_path / flags[0].strip("-").replace("=", ""), [*flags, "-fsanitize=address", "-g"], "int32")
        np.testing.assert_array_equal(got, reference(mod, xv))


def test_a_pad_before_a_depthwise_convolution_with_its_own_padding(tmp_path):
    """An ``nn.pad`` by 7 before a depthwise convolution that pads with zeros itself: two
    borders of two values, so the pad is made and the convolution pads its copy with zeros;
    the interpreter's bits."""
    x = relay.var("x", shape=(1, 8, 6, 9), dtype="uint8")
    p = relay.nn.pad(x, ((0, 0), (0, 0), (1, 1), (2, 0)), pad_value=relay.const(np.array(7, "uint8")))
    wt = relay.const(RNG.integers(-128, 128, (8, 1, 3, 3)).astype("int8"))
    y = relay.nn.conv2d(p, wt, kernel_size=(3, 3), channels=8, groups=8, padding=(1, 1), out_dtype="int32")
    mod = xrelay.IRModule.from_expr(relay.Function([x], y))
    lib = xrelay.build(mod, target="c")
    assert "(into the convolution below)" not in lib.get_source() and DEPTHWISE[1] in lib.get_source()
    steps_and_program_match(lib, mod, RNG.integers(0, 256, (1, 8, 6, 9)).astype("uint8"))


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_a_height_and_width_pad_whose_use_is_not_a_convolution_is_made(dtype, tmp_path):
    """A constant pad of the height and width only (the form the zero-point pad has) whose one
    use is not a convolution (Swin-T pads its windows and reshapes): the pad is made and the
    C gives the interpreter's values (it failed with a KeyError on the use's 'padding')."""
    x = relay.var("x", shape=(1, 4, 5, 6), dtype=dtype)
    p = relay.nn.pad(x, ((0, 0), (0, 0), (0, 3), (1, 1)), pad_value=relay.const(np.array(3, dtype)))
    y = relay.reshape(p, (1, 4, 64)) if dtype == "float32" else relay.nn.max_pool2d(p, (2, 2))
    mod = xrelay.IRModule.from_expr(relay.Function([x], y))
    lib = xrelay.build(mod, target="c")
    compile_strictly(lib, tmp_path)
    assert "(into the convolution below)" not in lib.get_source()
    xv = RNG.integers(0, 256, (1, 4, 5, 6)).astype(dtype)
    steps_and_program_match(lib, mod, xv, distinct=20)


def test_a_residual_add_is_read_in_the_pointwise_epilogue(tmp_path):
    """MobileNetV2's residual blocks: the 1x1 projection's requantize, then the residual's
    dequantize, add and requantize (QLinearAdd) all in the GEMM's epilogue, which reads the
    residual map at each element's channel and pixel (65 pixels: a last tile of 1): no int32
    map and no loop after the convolution; the interpreter's bits, steps and standalone."""
    x = relay.var("x", shape=(1, 12, 5, 13), dtype="uint8")
    r = relay.var("r", shape=(1, 8, 5, 13), dtype="uint8")
    wt = relay.const(RNG.integers(-128, 128, (8, 12, 1, 1)).astype("int8"))
    acc = relay.nn.conv2d(x, wt, kernel_size=(1, 1), channels=8, out_dtype="int32")
    y = relay.cast(relay.clip(relay.right_shift(acc, relay.const(np.int32(6))), 0, 255), "int32")
    s = relay.add(y, relay.right_shift(relay.cast(r, "int32"), relay.const(np.int32(1))))
    out = relay.cast(relay.clip(s, 0, 255), "uint8")
    mod = xrelay.IRModule.from_expr(relay.Function([x, r], out))
    lib = xrelay.build(mod, target="c")
    src = lib.get_source()
    assert POINTWISE in src and not loops_after_the_convolution(src)
    compile_strictly(lib, tmp_path)
    xv, rv = (RNG.integers(0, 256, (1, c, 5, 13)).astype("uint8") for c in (12, 8))
    want = reference(mod, {"x": xv, "r": rv})
    assert len(np.unique(want)) > 100
    for run in (lambda: lib.run(x=xv, r=rv), lib.run_aot):
        run()
        np.testing.assert_array_equal(lib.get_output(0), want)



@pytest.mark.parametrize("dtype, strides, widths", [
    ("uint8", (1, 1), ((1, 1), (1, 1))), ("int8", (2, 2), ((1, 1), (1, 1))), ("uint8", (2, 1), ((0, 2), (3, 1))),
])  # fmt: skip
def test_the_zero_point_pad_before_a_dense_convolution_is_its_copys_border(dtype, strides, widths, tmp_path, monkeypatch):
    """The same ``nn.pad`` before an ungrouped 3x3 8-bit convolution (ResNet-18's every 3x3
    layer): the padded map is never made, the channels-last copy's border is the pad's value
    (7, or -3 for int8 data), so the function's scratch is smaller by the padded map; the
    interpreter's bits, compiled strictly, steps and standalone."""
    c_, h, w = 16, 9, 11
    x = relay.var("x", shape=(1, c_, h, w), dtype=dtype)
    zp = 7 if dtype == "uint8" else -3
    p = relay.nn.pad(x, ((0, 0), (0, 0), *widths), pad_value=relay.const(np.array(zp, dtype)))
    wt = relay.const(RNG.integers(-128, 128, (8, c_, 3, 3)).astype("int8"))
    y = relay.nn.conv2d(p, wt, kernel_size=(3, 3), channels=8, strides=strides, out_dtype="int32")
    y = relay.cast(relay.clip(relay.right_shift(y, relay.const(np.int32(9))), 0, 255), "uint8")
    mod = xrelay.IRModule.from_expr(relay.Function([x], y))
    lib = xrelay.build(mod, target="c")
    src = lib.get_source()
    assert "(into the convolution below)" in src and (BAND if dtype == "uint8" else TILE) in src
    compile_strictly(lib, tmp_path)
    lo = 0 if dtype == "uint8" else -128
    steps_and_program_match(lib, mod, RNG.integers(lo, lo + 256, (1, c_, h, w)).astype(dtype), distinct=50)
    monkeypatch.setattr(c_function, "_pad_into_conv", lambda em, op: False)
    made = xrelay.build(mod, target="c")  # the padded map made in scratch, as before
    assert "(into the convolution below)" not in made.get_source()
    hp, wp = h + sum(widths[0]), w + sum(widths[1])
    assert _conv_scratch(made) - _conv_scratch(lib) >= c_ * hp * wp


WIDE_CASES = {
    # output columns >= WIDE_ROW: rows as the pointwise GEMM's tiles (70 = 64 + 6, 50 < 64)
    "3x3-pad1-70-columns": dict(n=1, c_=8, h=4, w=70, o=8, k=(3, 3), padding=(1, 1)),
    "7x7-stride2-3-channels-50-columns": dict(n=1, c_=3, h=9, w=105, o=12, k=(7, 7), strides=(2, 2), padding=(3, 3)),
    "3x5-dilated-batch-2": dict(n=2, c_=5, h=7, w=60, o=4, k=(3, 5), dilation=(2, 1), padding=(2, 2)),
}


@pytest.mark.parametrize("case", WIDE_CASES)
def test_wide_rows_of_patches_run_as_pointwise_tiles(case, tmp_path):
    """A uint8 x int8 convolution with patches (not 1x1) whose output rows have at least
    ``WIDE_ROW`` columns: each row's patches are the pixels of the pointwise GEMM's tiles
    (``xr_pw_pack_rows_u8``, patches padded to 4 bytes); the interpreter's bits in steps,
    standalone, the portable and (where the host has it) the VNNI build."""
    kw = WIDE_CASES[case]
    fn, shape = qconv(**kw)
    mod = xrelay.IRModule.from_expr(fn)
    lib = build_and_compare(fn, shape, tmp_path / "steps")
    src = lib.get_source()
    assert ("xr_pw_pack_rows_u8(" if kw["c_"] % 4 else BAND) in src and TILE not in src
    x = (RNG.standard_normal(shape) * 4).astype("float32")
    want = reference(mod, x)
    for flags in [["-DXRELAY_PORTABLE"], *([["-march=native"]] if host_has_vnni() else [])]:
        got = export_and_run(lib, x, tmp_path / flags[0].strip("-").replace("=", ""), flags)
        np.testing.assert_array_equal(got, want)
    assert c_function.WIDE_ROW <= (kw["w"] + 2 * kw["padding"][1] - (kw["k"][1] - 1) * kw.get("dilation", (1, 1))[1] - 1) // kw.get("strides", (1, 1))[1] + 1


BAND_CASES = {
    # uint8 x int8 over channel quads: tiles of 64 pixels across the rows of a band
    "3x3-7-columns-one-partial-tile": dict(n=1, c_=16, h=7, w=7, o=8, k=(3, 3), padding=(1, 1)),
    "3x3-14-columns-bands-and-tails": dict(n=1, c_=8, h=30, w=14, o=12, k=(3, 3), padding=(1, 1)),
    "3x3-stride2-batch-2": dict(n=2, c_=12, h=15, w=13, o=4, k=(3, 3), strides=(2, 2), padding=(1, 1)),
    "1x1-stride2": dict(n=1, c_=32, h=17, w=17, o=8, k=(1, 1), strides=(2, 2)),
    "3x5-column-dilation-asymmetric": dict(n=1, c_=4, h=11, w=19, o=4, k=(3, 5), dilation=(1, 2), padding=(2, 3, 1, 0)),
    "2x2-row-dilation-stride-3x2": dict(n=1, c_=8, h=16, w=23, o=8, k=(2, 2), dilation=(3, 1), strides=(3, 2)),
}


@pytest.mark.parametrize("case", BAND_CASES)
def test_band_tiles_span_output_rows(case, tmp_path):
    """A uint8 x int8 convolution over whole channel quads packs the patches of 64
    consecutive output pixels of a band of rows, across rows (``xr_pw_pack_patches_u8``,
    straight from the channels-last copy), and sums them with the pointwise GEMM's tiles:
    partial last tiles, several bands, strides, dilation along either axis (runs of one tap's
    channels), 1x1 with a stride, batch 2; the interpreter's bits in steps, standalone, and the
    exported program's portable and (where the host has it) VNNI builds."""
    kw = BAND_CASES[case]
    fn, shape = qconv(**kw)
    mod = xrelay.IRModule.from_expr(fn)
    lib = build_and_compare(fn, shape, tmp_path / "steps")
    src = lib.get_source()
    assert BAND in src and TILE not in src and "xr_pw_pack_rows_u8(" not in src
    assert not loops_after_the_convolution(src)  # the requantize is the bands' epilogue
    x = (RNG.standard_normal(shape) * 4).astype("float32")
    want = reference(mod, x)
    for flags in [["-DXRELAY_PORTABLE"], *([["-march=native"]] if host_has_vnni() else [])]:
        got = export_and_run(lib, x, tmp_path / flags[0].strip("-").replace("=", ""), flags)
        np.testing.assert_array_equal(got, want)


def test_band_tiles_without_an_epilogue_store_the_whole_map(tmp_path):
    """With no requantize after it (the int32 result returned), the band is the whole map and
    the tiles store straight into the result: 7x7 and 9x10 maps (a tile across every row, a
    partial one), the interpreter's bits."""
    for h, w in ((7, 7), (9, 10)):
        x = relay.var("x", shape=(1, 8, h, w), dtype="uint8")
        wt = relay.const(RNG.integers(-128, 128, (12, 8, 3, 3)).astype("int8"))
        mod = xrelay.IRModule.from_expr(
            relay.Function([x], relay.nn.conv2d(x, wt, kernel_size=(3, 3), padding=(1, 1), out_dtype="int32")))
        lib = xrelay.build(mod, target="c")
        assert BAND in lib.get_source()
        compile_strictly(lib, tmp_path)
        xv = RNG.integers(0, 256, (1, 8, h, w)).astype("uint8")
        lib.run(x=xv)
        np.testing.assert_array_equal(lib.get_output(0), reference(mod, xv))
        lib.run_aot()
        np.testing.assert_array_equal(lib.get_output(0), reference(mod, xv))


MAX_POOL_CASES = {
    # pool, strides, padding, dilation, ceil_mode, dtype (input 2 x 5 x 13 x 11)
    "3x3-stride2-pad1": ((3, 3), (2, 2), (1, 1), (1, 1), False, "uint8"),
    "3x3-stride2-pad1-int8": ((3, 3), (2, 2), (1, 1), (1, 1), False, "int8"),
    "2x2-ceil-mode": ((2, 2), (2, 2), (0, 0), (1, 1), True, "uint8"),
    "3x2-asymmetric-dilated": ((3, 2), (1, 3), (2, 0, 1, 1), (2, 1), False, "int8"),
    "2x3-stride-3x1-ceil": ((2, 3), (3, 1), (1, 0, 0, 2), (1, 2), True, "int8"),
    "3x3-stride2-ceil-past-the-phases": ((3, 3), (2, 2), (0, 0, 1, 0), (1, 1), True, "uint8"),
}


@pytest.mark.parametrize("case", MAX_POOL_CASES)
def test_8bit_max_pools_run_as_one_loop_per_channel(case, tmp_path):
    """An 8-bit NCHW max pool copies each channel's plane padded with the dtype's lowest value
    into stride phases and takes each output's maximum in one loop over the map: padding,
    ceil_mode windows past it, dilation, strides, signed and unsigned data; the interpreter's
    bits, compiled strictly, steps and standalone."""
    pool, strides, padding, dilation, ceil, dtype = MAX_POOL_CASES[case]
    x = relay.var("x", shape=(2, 5, 13, 11), dtype=dtype)
    y = relay.nn.max_pool2d(x, pool_size=pool, strides=strides, padding=padding, dilation=dilation, ceil_mode=ceil)
    mod = xrelay.IRModule.from_expr(relay.Function([x], y))
    lib = xrelay.build(mod, target="c")
    assert "xr_dw_plane_u8(" in lib.get_source()
    compile_strictly(lib, tmp_path)
    lo = 0 if dtype == "uint8" else -128
    steps_and_program_match(lib, mod, RNG.integers(lo, lo + 256, (2, 5, 13, 11)).astype(dtype), distinct=50)
