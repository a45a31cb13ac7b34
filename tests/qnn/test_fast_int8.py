"""The runtime's int8 x int8 -> int32 kernels give the reference kernels' bits."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.kernels import KERNELS
from xrelay.runtime.native import fast_int8
from xrelay.runtime.native.fast_kernels import Options, even_ranges
from xrelay.runtime.parallel import WorkerPool

RNG = np.random.default_rng(2)


def _reference_conv(x, w, s, pad, d):
    """The reference kernel's int32 sums of an NCHW x OIHW convolution (square stride,
    padding and dilation)."""
    o, _, k, _ = w.shape
    return KERNELS["nn.conv2d"](
        x, w, strides=(s, s), padding=(pad,) * 4, dilation=(d, d), groups=1, channels=o, kernel_size=(k, k),
        data_layout="NCHW", kernel_layout="OIHW", out_layout="", out_dtype="int32",
    )  # fmt: skip


@pytest.mark.parametrize("data", ["uint8", "int8"])
def test_dense_extremes_are_exact_across_reduction_chunks(data):
    # K = 4608: uint8 data runs the VNNI product, int8 data nine float32 chunks; every product
    # at its extreme (255 * -128, or -128 * -128)
    x = np.full((2, 4608), 255 if data == "uint8" else -128, data)
    w = np.full((3, 4608), -128, np.int8)
    w[1] = 127
    w[2, ::2] = 1
    out = np.empty((2, 3), np.int32)
    opts = Options(fixed=(False, True))
    thunks = fast_int8.dense(None, [x, w], out, None, opts)
    for _, t in thunks:
        t()
    np.testing.assert_array_equal(out, KERNELS["nn.dense"](x, w, units=None, out_dtype="int32"))
    assert out[0, 0] == int(x[0, 0]) * -128 * 4608


def test_dense_refuses_what_it_does_not_cover():
    opts = Options(fixed=(False, False))  # weights not constant
    out = np.empty((2, 3), np.int32)
    assert fast_int8.dense(None, [np.zeros((2, 4), np.int8), np.zeros((3, 4), np.int8)], out, None, opts) is None
    opts = Options(fixed=(False, True))
    assert fast_int8.dense(None, [np.zeros((2, 4), np.float32), np.zeros((3, 4), np.float32)], np.empty((2, 3), np.float32), None, opts) is None


@pytest.mark.parametrize("dtypes", [("uint8", "int8"), ("int8", "int8"), ("uint8", "uint8")])
@pytest.mark.parametrize("shape", [(1, 64, 9, 9, 3, 1, 1), (2, 8, 7, 7, 3, 2, 0), (1, 96, 5, 5, 1, 1, 0)])
def test_conv2d_in_the_arena_matches_the_reference(dtypes, shape, monkeypatch):
    from xrelay.runtime.native import steps  # the native engine binds with its makers (FAST)

    used = []

    def spy(op, vals, out, ws, opts):  # the int8 kernel must take these convolutions
        thunks = fast_int8.conv2d(op, vals, out, ws, opts)
        used.append(thunks is not None)
        return thunks

    monkeypatch.setattr(steps, "FAST", {**steps.FAST, "nn.conv2d": spy})
    n, c, h, w_, k, stride, pad = shape
    x = relay.var("x", shape=(n, c, h, w_), dtype=dtypes[0])
    info = np.iinfo(dtypes[1])
    wt = relay.const(RNG.integers(info.min, int(info.max) + 1, (16, c, k, k)).astype(dtypes[1]))
    y = relay.nn.conv2d(x, wt, strides=(stride, stride), padding=(pad, pad), out_dtype="int32", channels=16, kernel_size=(k, k))
    # an int32 epilogue the executor fuses into the convolution's kernel: it must run there
    y = relay.subtract(relay.add(y, relay.const(RNG.integers(-999, 999, (16, 1, 1)).astype("int32"))), relay.const(np.int32(7)))
    mod = xrelay.IRModule.from_expr(y)
    xi = np.iinfo(dtypes[0])
    data = RNG.integers(xi.min, int(xi.max) + 1, (n, c, h, w_)).astype(dtypes[0])
    ref = xrelay.run(mod, {"x": data})[0]
    m = xrelay.build(mod.clone(), {}, opt_level=3, plan="greedy-by-size")
    m.set_input("x", data)
    m.run()
    np.testing.assert_array_equal(m.get_output(0), ref)
    assert used == [True]


@pytest.mark.parametrize("out_dtype", ["int32", "int8", "uint8"])
@pytest.mark.parametrize("scales", [[0.37], [3.5, 0.002, 1.0e-5, 0.75]])
def test_fixed_point_multiply_in_the_arena_matches_the_reference(scales, out_dtype, monkeypatch):
    tails = []
    real = fast_int8._requant_tail

    def spy(*args):
        thunks = real(*args)
        tails.append(thunks is not None)
        return thunks

    monkeypatch.setattr(fast_int8, "_requant_tail", spy)
    # requantize lowers to fixed_point_multiply (one scale) or _per_axis (several, some > 1:
    # left shifts); the runtime's in-place int64 versions must give the kernels' bits
    x = relay.var("x", shape=(2, len(scales), 5, 5), dtype="int32")
    y = relay.qnn.op.requantize(
        x, relay.const(np.array(scales if len(scales) > 1 else scales[0], "float32")), relay.const(0),
        relay.const(1.0), relay.const(3), axis=1, out_dtype=out_dtype,
    )  # fmt: skip
    mod = xrelay.IRModule.from_expr(y)
    data = RNG.integers(-(2**20), 2**20, (2, len(scales), 5, 5)).astype("int32")
    data.flat[:4] = [2**31 - 1, -(2**31), 0, -1]
    ref = xrelay.run(mod, {"x": data})[0]
    m = xrelay.build(mod.clone(), {}, opt_level=3, plan="greedy-by-size")
    m.set_input("x", data)
    m.run()
    np.testing.assert_array_equal(m.get_output(0), ref)
    # to 8 bits, the zero point, clip and cast run inside the fused C pass
    if out_dtype == "int32":
        assert not any(tails)  # no clip and cast to fuse
    else:
        assert tails == [fast_int8.vnni_library() is not None]


@pytest.mark.parametrize("geometry", [(8, 3, 16, 1, 1, 1), (64, 3, 16, 2, 1, 1), (96, 1, 16, 1, 0, 1), (16, 3, 5, 1, 2, 2), (3, 7, 64, 2, 3, 1),
                                      (40, 1, 24, 2, 0, 1), (16, 1, 16, 3, 0, 2), (5, 1, 8, 2, 0, 1),
                                      (7, 1, 20, 1, 0, 1), (36, 1, 40, 1, 0, 1), (2, 1, 33, 1, 0, 1),
                                      (20, 3, 64, 2, 1, 1), (20, 3, 40, 2, 1, 1), (3, 3, 16, 1, 1, 2),
                                      (4, 5, 32, 2, 2, 3)])  # fmt: skip
@pytest.mark.parametrize("threads", [1, 2])
def test_vnni_convolution_matches_the_reference(geometry, threads):
    lib = fast_int8.vnni_library()
    if lib is None:  # no compiler: the float32 path is tested above
        assert fast_int8.vnni_library() is None
        return
    c, k, o, s, pad, d = geometry
    # two threads (always in parallel): the threads share the pixels, or, for the 6x7 output of
    # 64 channels (20, 3, 64, 2, 1, 1), the channel blocks, each with its own tile buffer
    opts = Options(pool=WorkerPool(2, adaptive=False)) if threads == 2 else Options()
    if geometry == (20, 3, 64, 2, 1, 1):
        assert fast_int8._block_ranges(42, 4, even_ranges(42, 2, 16)) == [(0, 2), (2, 4)]
    x = RNG.integers(0, 256, (2, c, 11, 13)).astype(np.uint8)
    w = RNG.integers(-128, 128, (o, c, k, k)).astype(np.int8)
    ref = _reference_conv(x, w, s, pad, d)
    out = np.empty(ref.shape, np.int32)
    thunks = fast_int8._vnni_conv(lib, x, w, out, (k, k, s, s, d, d, pad, pad), opts)
    for _, t in thunks:
        t()
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("geometry", [(8, 3, 16, 1, 1, 1), (24, 3, 20, 2, 1, 1), (8, 5, 16, 1, 4, 2), (6, 3, 16, 3, 0, 1)])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_tall_image_is_read_by_bands_with_the_reference_sums(geometry, threads):
    # 100 rows of 9 or 12 columns: each tile's input rows are copied channels-last into its
    # band (a few rows) just before it, not the whole image first; the planned workspace is
    # the bands and tiles, less than the image
    lib = fast_int8.vnni_library()
    if lib is None:
        return
    c, k, o, s, pad, d = geometry
    h, wd = 100, 9 if s != 3 else 12
    x = RNG.integers(0, 256, (2, c, h, wd)).astype(np.uint8)
    w = RNG.integers(-128, 128, (o, c, k, k)).astype(np.int8)
    ref = _reference_conv(x, w, s, pad, d)
    oh, ow = ref.shape[2:]
    need = fast_int8.conv_workspace_bytes(c, h, wd, k, k, oh, ow, False, s, d, s, d)
    if fast_int8.reads_direct(c, k, d, False):  # read in place: a padded band per range, no tiles
        rows = fast_int8.direct_band_rows(oh, k, s, d, ow)
        band = rows * ((ow - 1) * s + k) * c + fast_int8.direct_slack(c, k)
        assert rows < h and need == 4 * -(-band // 64) * 64, (need, rows)
    else:  # dilated along W: im2row tiles
        kp = -(-c * k * k // 4) * 4
        tiles = min(4, -(-oh * ow // 16)) * -(-min(16, oh * ow) * kp // 64) * 64
        rows = fast_int8.band_rows(h, k, s, d, ow)
        assert need == tiles + 4 * -(-rows * wd * c // 64) * 64 < tiles + h * wd * c, (need, tiles, rows)
    ws = np.empty(need, np.uint8)
    opts = Options(pool=WorkerPool(2, adaptive=False)) if threads == 2 else Options()
    out = np.empty(ref.shape, np.int32)
    for _, t in fast_int8._vnni_conv(lib, x, w, out, (k, k, s, s, d, d, pad, pad), opts, ws=ws):
        t()
    assert not opts.scratch[1:], [a.nbytes for a in opts.scratch]  # (the packed weights only)
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "geometry",
    [  # c, k, o, stride, (top, left, bottom, right) padding, pad value, image
        (64, 3, 64, 1, (1, 1, 1, 1), 0, (7, 7)),  # one chunk, the last group of one pixel; block cut
        (12, 3, 40, 2, (1, 1, 1, 1), 0, (23, 17)),  # 40 channels: a pair of blocks and one
        (5, 4, 16, 1, (2, 1, 1, 2), 9, (30, 11)),  # 5 channels (kw * c = 20), uneven padding of 9s
        (20, 5, 24, 3, (2, 2, 2, 2), 3, (40, 19)),  # stride 3, several chunks down the image
        (16, 3, 32, 1, (0, 2, 3, 0), 255, (12, 33)),  # the padding on one side only
        (128, 1, 16, 2, (1, 1, 0, 0), 0, (9, 9)),  # a padded 1x1 (not a strided row read)
        (3, 7, 64, 2, (3, 3, 3, 3), 7, (45, 38)),  # a stem: kernel rows of 21 bytes read as 24
        (3, 3, 32, 2, (1, 1, 1, 1), 0, (33, 35)),  # 9 bytes as 12
        (1, 3, 16, 1, (1, 1, 1, 1), 200, (20, 37)),  # one channel: 3 bytes as 4
        (6, 3, 24, 1, (1, 1, 1, 1), 1, (17, 18)),  # 18 bytes as 20
        (4, 3, 16, 1, (1, 2, 1, 0), 3, (19, 34)),  # 4 channels, whole steps, uneven padding
    ],
)  # fmt: skip
def test_direct_convolution_reads_the_padded_band_with_the_reference_sums(geometry, threads, monkeypatch):
    """Convolutions without dilation along W run xr_conv_direct_u8s8: the taps read where they
    lie in a padded channels-last band (the padding written with the pad value), no im2row
    tiles; a kernel row whose bytes are not a multiple of 4 is read in whole 4-byte steps,
    its packed weights zero past it (the band's few channels interleaved 16 pixels at a time).
    Its planned workspace is the bands only (with the steps' slack past the last row), and
    nothing else is allocated."""
    lib = fast_int8.vnni_library()
    if lib is None:
        return
    c, k, o, s, (pt, pl, pb, pr), pv, (h, wd) = geometry
    calls = []
    real = fast_int8._direct_conv
    monkeypatch.setattr(fast_int8, "_direct_conv", lambda *a: (calls.append(a), real(*a))[1])
    x = RNG.integers(0, 256, (2, c, h, wd)).astype(np.uint8)
    w = RNG.integers(-128, 128, (o, c, k, k)).astype(np.int8)
    padded = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=pv)
    ref = _reference_conv(padded, w, s, 0, 1)
    oh, ow = ref.shape[2:]
    assert fast_int8.reads_direct(c, k, 1, False)
    need = fast_int8.conv_workspace_bytes(c, h, wd, k, k, oh, ow, False, s, 1, s, 1)
    rows = fast_int8.direct_band_rows(oh, k, s, 1, ow)
    slots = min(4, -(-oh * ow // 16))
    assert need == slots * -(-(rows * ((ow - 1) * s + k) * c + -(k * c) % 4) // 64) * 64, need
    ws = np.empty(need, np.uint8)
    opts = Options(pool=WorkerPool(2, adaptive=False)) if threads == 2 else Options()
    out = np.empty(ref.shape, np.int32)
    for _ in range(3):
        out[:] = 0
        for _, t in fast_int8._vnni_conv(lib, x, w, out, (k, k, s, s, 1, 1, pt, pl), opts, ws=ws, pv=pv):
            t()
        np.testing.assert_array_equal(out, ref)
    assert len(calls) == 3  # the packed weights of each build, nothing else outside the workspace
    assert [a.dtype for a in opts.scratch] == [np.dtype(np.int8)] * 3, [a.nbytes for a in opts.scratch]


@pytest.mark.parametrize("geometry", [(16, 3, 32, 1, 1, 1), (16, 3, 32, 1, 1, 2), (3, 3, 16, 1, 1, 2), (3, 7, 16, 2, 3, 1)])
def test_a_native_convolution_job_holds_every_threads_buffers(geometry):
    """A native job gets each thread's band/tile buffers as addresses only: without a planned
    workspace (buffers made at build time) the thunk itself must keep every slot's buffers
    alive once the build's options are gone (else the second thread writes freed memory).
    Direct (16 channels; 3 channels, 7x7), tiles (dilation 2 along W) and planar tiles (3
    channels, dilation 2)."""
    import gc
    import weakref

    lib = fast_int8.vnni_library()
    if lib is None:
        return
    c, k, o, s, pad, d = geometry
    x = RNG.integers(0, 256, (1, c, 40, 36)).astype(np.uint8)
    w = RNG.integers(-128, 128, (o, c, k, k)).astype(np.int8)
    ref = _reference_conv(x, w, s, pad, d)
    out = np.empty(ref.shape, np.int32)
    pool = WorkerPool(2, adaptive=False)
    opts = Options(pool=pool)
    thunks = fast_int8._vnni_conv(lib, x, w, out, (k, k, s, s, d, d, pad, pad), opts)
    buffers = [weakref.ref(a) for a in opts.scratch if a.dtype == np.uint8]
    assert len(buffers) >= 2  # a buffer per thread's slot
    del opts
    gc.collect()
    assert all(r() is not None for r in buffers)
    for _ in range(10):
        out[:] = 0
        for _, t in thunks:
            t()
        np.testing.assert_array_equal(out, ref)
    pool.park()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("size", [(9, 11), (8, 16), (16, 16), (17, 19)])
@pytest.mark.parametrize("geometry", [(3, 1, 1, 1), (3, 2, 1, 1), (5, 1, 2, 2), (1, 2, 0, 1), (5, 1, 2, 1), (3, 1, 0, 1), (7, 1, 3, 1), (2, 1, 0, 1)])
def test_int8_depthwise_convolution_in_the_arena_matches_the_reference(geometry, size, threads, monkeypatch):
    """Images of up to 256 pixels run the plane kernel (in one, two or four registers: 99, 128
    and 256 bytes; its tables made at build time), larger ones the row kernel; both give the
    reference sums on one thread and with the channels cut between two."""
    monkeypatch.setenv("TVM_NUM_THREADS", str(threads))
    lib = fast_int8.vnni_library()
    calls = []
    real_tables = fast_int8.plane_tables
    monkeypatch.setattr(fast_int8, "plane_tables", lambda *a: (calls.append(a), real_tables(*a))[1])
    k, s, pad, d = geometry
    h, wd = size
    x = relay.var("x", shape=(2, 12, h, wd), dtype="uint8")
    wt = relay.const(RNG.integers(-128, 128, (12, 1, k, k)).astype("int8"))
    y = relay.nn.conv2d(
        x, wt, strides=(s, s), padding=(pad, pad), dilation=(d, d), groups=12, channels=12, kernel_size=(k, k),
        out_dtype="int32",
    )  # fmt: skip
    y = relay.add(y, relay.const(RNG.integers(-99, 99, (12, 1, 1)).astype("int32")))
    mod = xrelay.IRModule.from_expr(y)
    data = RNG.integers(0, 256, (2, 12, h, wd)).astype("uint8")
    ref = xrelay.run(mod, {"x": data})[0]
    m = xrelay.build(mod.clone(), {}, opt_level=3, plan="greedy-by-size")
    m.set_input("x", data)
    m.run()
    np.testing.assert_array_equal(m.get_output(0), ref)
    if lib is not None and lib.xr_int8_has_vbmi():
        assert len(calls) == (1 if h * wd <= 256 else 0)


@pytest.mark.parametrize("width", [17, 83, 150])
@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize("geometry", [(3, 2, 1, 1, False), (2, 2, 0, 1, True), (3, 1, 1, 2, False), (3, 3, 2, 1, True)])
def test_8bit_max_pool_runs_in_c_with_the_reference_maxima(geometry, dtype, width):
    """ResNet's 3x3/2 pool and others: stride 1, 2 and 3, dilation, ceil mode (a last window
    partly past the padding); rows within one 64-byte register (17 wide: byte permutations),
    wider ones by windows of 128 bytes (83: one window per row; 150: two or three, the last
    partial). The data is mostly the dtype's lowest values, so padding that won would show."""
    _max_pool_matches(geometry, (1, 1), dtype, width)


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
def test_8bit_max_pool_with_taps_beyond_a_window_runs_the_row_buffer(dtype):
    """Taps 64 columns apart (a 3-wide window spans 129 bytes, more than the kernel's 128-byte
    windows): the padded row buffer, the C kernel's three inner loops."""
    _max_pool_matches((3, 1, 1, 1, False), (1, 64), dtype, 150)


def _max_pool_matches(geometry, dilation, dtype, width):
    k, s, pad, d, ceil = geometry
    shape = (2, 5, 13, width)
    x = relay.var("x", shape=shape, dtype=dtype)
    dil = (d * dilation[0], d * dilation[1])
    y = relay.nn.max_pool2d(x, pool_size=(k, k), strides=(s, s), padding=(pad, pad), dilation=dil, ceil_mode=ceil)
    mod = xrelay.IRModule.from_expr(y)
    info = np.iinfo(dtype)
    data = RNG.integers(info.min, info.max + 1, shape).astype(dtype)
    data[RNG.random(shape) < 0.7] = info.min
    ref = xrelay.run(mod, {"x": data})[0]
    # the native engine (a lone pool would go to oneDNN), as in a quantized CNN
    m = xrelay.build(mod.clone(), {}, opt_level=3, plan="greedy-by-size", backends="native")
    m.set_input("x", data)
    m.run()
    np.testing.assert_array_equal(m.get_output(0), ref)


def test_integer_clip_and_cast_in_the_arena_match_the_reference():
    x = relay.var("x", shape=(3, 50), dtype="int32")
    y = relay.cast(relay.clip(x, -128.7, 127.2), "int8")
    z = relay.cast(relay.clip(x, -3e9, 3e9), "uint8")  # bounds saturate; the cast wraps
    mod = xrelay.IRModule.from_expr(relay.Tuple([y, z]))
    data = RNG.integers(-(2**31), 2**31 - 1, (3, 50)).astype("int32")
    ref = xrelay.run(mod, {"x": data})
    m = xrelay.build(mod.clone(), {}, opt_level=3, plan="greedy-by-size")
    m.set_input("x", data)
    m.run()
    for i, r in enumerate(ref):
        np.testing.assert_array_equal(m.get_output(i), r)


@pytest.mark.parametrize("transpose_b", [True, False])
def test_int8_batch_matmul_in_the_arena_matches_the_reference(transpose_b):
    a = relay.var("a", shape=(3, 5, 600), dtype="uint8")  # K = 600: two float32 chunks
    b = relay.var("b", shape=(3, 4, 600) if transpose_b else (3, 600, 4), dtype="int8")
    y = relay.nn.batch_matmul(a, b, transpose_b=transpose_b, out_dtype="int32")
    mod = xrelay.IRModule.from_expr(y)
    data = {
        "a": np.full((3, 5, 600), 255, np.uint8),
        "b": RNG.integers(-128, 128, (3, 4, 600) if transpose_b else (3, 600, 4)).astype(np.int8),
    }
    ref = xrelay.run(mod, data)[0]
    m = xrelay.build(mod.clone(), {}, opt_level=3, plan="greedy-by-size")
    m.set_input(**data)
    m.run()
    np.testing.assert_array_equal(m.get_output(0), ref)


@pytest.mark.parametrize("multiplier", [0.5, 0.0123, [0.5, 3.0e-6, 7.25, 1.0e9]])
def test_onnxruntime_requantize_and_add_run_fused_in_c_with_the_reference_bits(multiplier, monkeypatch):
    """fake-quantization-to-integer{onnxruntime=true}'s requantize and QLinearAdd chains are
    claimed by one C pass each (the convolution's kernel, ort_add) and give the reference kernels' bits:
    ties (multiplier 0.5), products beyond int32 (1e9: numpy's INT32_MIN, then clipped)."""
    hits = {"req": 0, "add": 0, "conv": 0}
    real_fused = fast_int8._fused_requant

    def fused(*args):
        found = real_fused(*args)
        hits["conv"] += found is not None
        return found

    monkeypatch.setattr(fast_int8, "_fused_requant", fused)
    for name, key in (("ort_requant", "req"), ("ort_add", "add")):
        real = getattr(fast_int8, name)

        def spy(*args, real=real, key=key):
            thunks = real(*args)
            hits[key] += thunks is not None
            return thunks

        monkeypatch.setattr(fast_int8, name, spy)
        from xrelay.runtime.native import steps
        from xrelay.runtime.native.fast_kernels import first

        op = "cast" if key == "req" else "add"
        monkeypatch.setattr(steps, "FAST", {**steps.FAST, op: first(spy, steps.FAST[op])})
    m = np.atleast_1d(np.asarray(multiplier, "float32"))
    x = relay.var("x", shape=(1, 4, 6, 6), dtype="uint8")
    w = relay.const(RNG.integers(-127, 128, (4, 4, 3, 3)).astype("int8"))
    fx = relay.qnn.op.dequantize(x, relay.const(1.0), relay.const(3))
    fw = relay.qnn.op.dequantize(w, relay.const(m if m.size > 1 else m[0]), relay.const(0), axis=0)
    c = relay.qnn.op.quantize(relay.nn.conv2d(fx, fw, padding=(1, 1)), relay.const(1.0), relay.const(7), out_dtype="uint8")
    s = relay.add(relay.qnn.op.dequantize(c, relay.const(1.0), relay.const(7)), relay.qnn.op.dequantize(x, relay.const(0.25), relay.const(3)))
    y = relay.qnn.op.quantize(s, relay.const(0.5), relay.const(11), out_dtype="uint8")
    mod = xrelay.IRModule.from_expr(y)
    mod = relay.transform.FakeQuantizationToInteger(onnxruntime=True)(mod)
    data = RNG.integers(0, 256, (1, 4, 6, 6)).astype("uint8")
    ref = xrelay.run(mod, {"x": data})[0]
    built = xrelay.build(mod.clone(), {}, opt_level=3, plan="greedy-by-size")
    built.set_input("x", data)
    built.run()
    np.testing.assert_array_equal(built.get_output(0), ref)
    # the convolution's kernel requantizes its int32 sums itself (uint8 x int8), so the
    # requantize chain is claimed by it rather than by ort_requant
    assert hits == ({"req": 0, "add": 1, "conv": 1} if fast_int8.vnni_library() is not None else {"req": 0, "add": 0, "conv": 0})



@pytest.mark.usefixtures("int8_library")
@pytest.mark.parametrize("count", [0, 1, 15, 16, 17, 1000])
@pytest.mark.parametrize("kinds", [(1, 1, 1), (0, 1, 0), (1, 0, 1), (0, 0, 0)])
@pytest.mark.parametrize("ra, rb, fixed", [(0.5, 0.25, 3.5), (0.0371, 1.7, -12.25), (1.0e9, 0.5, 0.0)])
def test_qlinear_add_in_c_is_its_arithmetic_on_every_length(count, kinds, ra, rb, fixed):
    # xr_qlinear_add (16 at a time in AVX-512, a masked tail; the byte loop where a sum could
    # leave int32: 1e9) against its arithmetic in numpy: float32(y * rb + fixed) in double,
    # float32(x * ra + that) in double, rounded half to even in float32, truncated, clipped
    lib = fast_int8.vnni_library()
    dt = {0: np.int8, 1: np.uint8}
    x = RNG.integers(0, 256, count).astype(np.uint8).view(dt[kinds[0]])
    y = RNG.integers(0, 256, count).astype(np.uint8).view(dt[kinds[1]])
    lo, hi = (-128, 127) if kinds[2] == 0 else (0, 255)
    out = np.full(count + 1, 99, np.uint8)
    lib.xr_qlinear_add(x.ctypes.data, kinds[0], y.ctypes.data, kinds[1], out.ctypes.data, kinds[2], count,
                       ctypes.c_double(ra), ctypes.c_double(rb), ctypes.c_double(fixed), lo, hi)  # fmt: skip
    t = (y.astype(np.float64) * rb + fixed).astype(np.float32)
    v = (x.astype(np.float64) * ra + t.astype(np.float64)).astype(np.float32)
    magic = np.float32(12582912.0)
    v = (v + magic) - magic
    r = np.clip(v.astype(np.int64).astype(np.int32), lo, hi).astype(np.int64).astype(dt[kinds[2]])
    np.testing.assert_array_equal(out[:count].view(dt[kinds[2]]), r)
    assert out[count] == 99  # nothing written past the end
    if count == 1000 and ra == 0.5:
        assert len(np.unique(r)) > 50


def _round_f32(v) -> float:
    """The exact rational ``v`` rounded once to float32, half to even (normal numbers)."""
    from fractions import Fraction

    if v == 0:
        return 0.0
    a = abs(v)
    e = a.numerator.bit_length() - a.denominator.bit_length()  # 2**e <= a < 2**(e + 2)
    while a >= Fraction(2) ** (e + 1):
        e += 1
    while a < Fraction(2) ** e:
        e -= 1
    n = round(a / Fraction(2) ** (e - 23))  # 24 bits, Fraction rounds half to even
    return float(np.float32(np.copysign(float(n * Fraction(2) ** (e - 23)), float(v))))


def _fma_add(x, y, ra, rb, fixed, lo, hi) -> np.ndarray:
    """onnxruntime's QLinearAdd in exact arithmetic: fma(x, ra, fma(y, rb, fixed)), each fused
    multiply-add rounded once to float32, then to the nearest integer (half to even), clipped."""
    from fractions import Fraction

    out = []
    for a, b in zip(x.tolist(), y.tolist()):
        t = _round_f32(Fraction(b) * Fraction(rb) + Fraction(fixed))
        s = _round_f32(Fraction(a) * Fraction(ra) + Fraction(t))
        out.append(min(max(round(Fraction(s)), lo), hi))
    return np.array(out, np.int64)


# float32 constants whose float64 form rounds twice: 65 * rb + 0.5 = 0.5 + 2**-25 + 2**-55 is
# 0.5 + 2**-25 in float64, a float32 tie (0.5), where one fused multiply-add gives 0.5 + 2**-24
DOUBLE_ROUNDED = (0.5, 16519105 * 2.0**-55, 0.5)
# float32(0.1): 55 * ra - 5 is 0.50000008 in one rounding (1), 0.5 (0) with the product rounded first
PRODUCT_ROUNDED = (float(np.float32(0.1)), 0.25, -5.0)
# the pair of bytes (x, y) where each gives 1 and a rounding too many gives 0
TELLING_PAIR = {DOUBLE_ROUNDED: (0, 65), PRODUCT_ROUNDED: (55, 0)}


@pytest.mark.usefixtures("int8_library")
@pytest.mark.parametrize("count", [0, 1, 15, 16, 17, 300])
@pytest.mark.parametrize("kinds", [(1, 1, 1), (0, 1, 0), (1, 0, 1), (0, 0, 0)])
@pytest.mark.parametrize("ra, rb, fixed", [(0.5, 0.25, 3.5), (0.0371, 1.7, -12.25), DOUBLE_ROUNDED, PRODUCT_ROUNDED])
def test_qlinear_add_fma_is_onnxruntimes_arithmetic_on_every_length(count, kinds, ra, rb, fixed):
    # xr_qlinear_add_fma (16 at a time, a masked tail) against exact rational arithmetic
    lib = fast_int8.vnni_library()
    dt = {0: np.int8, 1: np.uint8}
    x = RNG.integers(0, 256, count).astype(np.uint8).view(dt[kinds[0]])
    y = RNG.integers(0, 256, count).astype(np.uint8).view(dt[kinds[1]])
    pair = TELLING_PAIR.get((ra, rb, fixed))
    if pair is not None and count:
        x[0], y[0] = pair
    lo, hi = (-128, 127) if kinds[2] == 0 else (0, 255)
    out = np.full(count + 1, 99, np.uint8)
    f32 = ctypes.c_float
    done = lib.xr_qlinear_add_fma(x.ctypes.data, kinds[0], y.ctypes.data, kinds[1], out.ctypes.data, count,
                                  f32(ra), f32(rb), f32(fixed), lo, hi)  # fmt: skip
    assert done == 1
    ref = _fma_add(x, y, ra, rb, fixed, lo, hi).astype(dt[kinds[2]])
    np.testing.assert_array_equal(out[:count].view(dt[kinds[2]]), ref)
    assert out[count] == 99  # nothing written past the end
    if pair is not None and count and kinds == (1, 1, 1):
        assert ref[0] == 1  # where a rounding too many gives 0


@pytest.mark.usefixtures("int8_library")
@pytest.mark.parametrize("kinds", [(1, 1, 1), (0, 1, 0), (0, 0, 0)])
def test_the_fma_add_is_taken_only_where_every_pair_of_bytes_agrees(kinds):
    # the exhaustive check: the ordinary ratios pass; DOUBLE_ROUNDED's pair (0, 65) differs
    lib = fast_int8.vnni_library()
    lo, hi = (-128, 127) if kinds[2] == 0 else (0, 255)
    assert lib.xr_qlinear_add_fma_exact(*kinds, 0.5, 0.25, 3.5, lo, hi) == 1
    assert lib.xr_qlinear_add_fma_exact(*kinds, 0.0371, 1.7, -12.25, lo, hi) == 1
    assert lib.xr_qlinear_add_fma_exact(*kinds, *DOUBLE_ROUNDED, lo, hi) == 0


@pytest.mark.usefixtures("int8_library")
@pytest.mark.parametrize("exact", [True, False])
def test_ort_add_runs_the_fma_form_only_when_it_is_exact(exact, monkeypatch):
    """The residual block's QLinearAdd runs xr_qlinear_add_fma when the check passes and the
    float64 form when it does not; both give the reference kernels' bits."""
    lib = fast_int8.vnni_library()
    calls = {"fma": 0, "f64": 0}
    real_fma, real_f64 = lib.xr_qlinear_add_fma, lib.xr_qlinear_add

    def fma(*args):
        calls["fma"] += 1
        return real_fma(*args)

    def f64(*args):
        calls["f64"] += 1
        return real_f64(*args)

    monkeypatch.setattr(lib, "xr_qlinear_add_fma", fma)
    monkeypatch.setattr(lib, "xr_qlinear_add", f64)
    if not exact:
        monkeypatch.setattr(lib, "xr_qlinear_add_fma_exact", lambda *args: 0)
    mod = _residual_block()
    data = RNG.integers(0, 256, (1, 8, 6, 6)).astype("uint8")
    ref = xrelay.run(mod, {"x": data})[0]
    built = xrelay.build(mod.clone(), {}, opt_level=3, plan="greedy-by-size")
    built.set_input("x", data)
    built.run()
    np.testing.assert_array_equal(built.get_output(0).numpy(), ref)
    assert (calls["fma"] > 0, calls["f64"] > 0) == (exact, not exact)


@pytest.mark.parametrize("read_later", [False, True])
def test_ops_only_an_unread_operand_needs_run_no_more(read_later):
    """A kernel that declares an operand unread (``Options.unread``, reading ``Options.reads``
    instead) takes the ops that computed only that operand out of the function: here a
    stand-in ``add`` kernel computing ``1 + a`` drops ``exp(2a)``, and ``2a`` too unless the
    later subtract reads it."""
    from xrelay.runtime.native.fast_kernels import compile_function

    tail = "subtract(%2, %0)" if read_later else "%2"
    mod = xrelay.parser.parse(f"""
def @main(%a: Tensor[(4), float32]) -> Tensor[(4), float32] {{
  %0 = multiply(%a, 2f);
  %1 = exp(%0);
  %2 = add(%1, %a);
  {tail}
}}""")
    fn = next(iter(mod.module.ops))

    def plus_one(op, vals, out, ws, opts):
        a = vals[1]
        opts.unread.append(op.operands[0])
        opts.reads.append(op.operands[1])
        return [("elementwise", lambda: np.add(a, 1.0, out=out))]

    a = np.arange(4, dtype=np.float32)
    out = np.empty(4, np.float32)
    compiled = compile_function(fn, [a], [out], makers={"add": plus_one})
    labels = [label for label, _, _ in compiled.thunks]
    assert labels == (["multiply", "add", "subtract"] if read_later else ["add"])
    for _, _, t in compiled.thunks:
        t()
    np.testing.assert_array_equal(out, (a + 1) - 2 * a if read_later else a + 1)


def _residual_block(size: int = 6):
    """A QDQ convolution whose result onnxruntime's QLinearAdd adds to the block's input, after
    fake-quantization-to-integer{onnxruntime=true}."""
    x = relay.var("x", shape=(1, 8, size, size), dtype="uint8")
    w = relay.const(RNG.integers(-127, 128, (8, 8, 3, 3)).astype("int8"))
    fx = relay.qnn.op.dequantize(x, relay.const(0.05), relay.const(3))
    fw = relay.qnn.op.dequantize(w, relay.const(0.01), relay.const(0))
    c = relay.qnn.op.quantize(relay.nn.conv2d(fx, fw, padding=(1, 1)), relay.const(0.1), relay.const(7), out_dtype="uint8")
    side = relay.qnn.op.dequantize(x, relay.const(0.25), relay.const(3))
    s = relay.add(relay.qnn.op.dequantize(c, relay.const(0.1), relay.const(7)), side)
    y = relay.qnn.op.quantize(s, relay.const(0.5), relay.const(11), out_dtype="uint8")
    mod = xrelay.IRModule.from_expr(y)
    mod = relay.transform.FakeQuantizationToInteger(onnxruntime=True)(mod)
    return mod


@pytest.mark.usefixtures("int8_library")
@pytest.mark.parametrize("threads", [1, 2])
def test_a_residual_add_cut_between_threads_gives_the_reference_bits(threads, monkeypatch):
    """12,800 values: on two threads the FMA add is a native job of several element ranges."""
    monkeypatch.setenv("TVM_NUM_THREADS", str(threads))
    mod = _residual_block(40)
    data = RNG.integers(0, 256, (1, 8, 40, 40)).astype("uint8")
    ref = xrelay.run(mod, {"x": data})[0]
    built = xrelay.build(mod.clone(), {}, opt_level=3, plan="greedy-by-size")
    built.set_input("x", data)
    built.run()
    np.testing.assert_array_equal(built.get_output(0).numpy(), ref)
    assert len(np.unique(ref)) > 20


@pytest.mark.usefixtures("int8_library")
def test_qlinear_add_sides_run_no_more():
    """ort_add computes from the two 8-bit values, so the float64 sides the program computes
    before the add (cast, multiply, add, casts) are dropped from the convolution's step; the
    output is the reference kernels' (the mechanism's other case: the test above)."""
    mod = _residual_block()
    data = RNG.integers(0, 256, (1, 8, 6, 6)).astype("uint8")
    refs = xrelay.run(mod, {"x": data})
    built = xrelay.build(mod.clone(), {}, opt_level=3, plan="greedy-by-size")
    built.set_input("x", data)
    built.run()
    np.testing.assert_array_equal(built.get_output(0).numpy(), refs[0])
    steps = [(name, [label for label, _, _ in compiled.thunks]) for name, _, compiled in built.executor.steps]
    with_add = [labels for _, labels in steps if "add" in labels and any(lb.startswith("nn.conv2d") for lb in labels)]
    assert len(with_add) == 1, steps
    assert [lb for lb in with_add[0] if lb in ("cast", "multiply")] == [], steps


@pytest.mark.usefixtures("int8_library")
@pytest.mark.parametrize("count", [0, 1, 63, 64, 65, 200, 1000])
@pytest.mark.parametrize("in_place", [False, True])
def test_a_byte_table_looks_up_every_byte(count, in_place):
    # xr_lookup8 with 1-byte results (an 8-bit function of an 8-bit value: a quantized SiLU or
    # hard swish), 64 bytes at a time with VBMI and a masked tail: every byte, every length
    lib = fast_int8.vnni_library()
    table = RNG.integers(0, 256, 256).astype(np.uint8)
    src = RNG.integers(0, 256, count + 3).astype(np.uint8)[3:]  # (not 64-byte aligned)
    src[: min(count, 256)] = np.arange(min(count, 256))
    expected = table[src]
    out = src if in_place else np.full(count + 1, 7, np.uint8)
    lib.xr_lookup8(src.ctypes.data, table.ctypes.data, out.ctypes.data, 1, count)
    np.testing.assert_array_equal(out[:count], expected)
    if not in_place:
        assert out[count] == 7  # nothing written past the end


@pytest.mark.usefixtures("int8_library")
@pytest.mark.parametrize("size", [1, 50176, 2 * fast_int8.LOOKUP_PART - 1, 2 * fast_int8.LOOKUP_PART, 802816])
def test_a_small_table_lookup_runs_on_the_calling_thread(size, monkeypatch):
    """A lookup below two LOOKUP_PARTs is one range, run by the calling thread (no hand-over
    to the pool for a concatenation input's few kilobytes); a larger one is cut between the
    threads. Either way every byte is looked up."""
    cuts = []
    split = fast_int8.split_job
    monkeypatch.setattr(fast_int8, "split_job", lambda opts, make, ranges, extent: (cuts.append(ranges), split(opts, make, ranges, extent))[1])
    table = RNG.integers(0, 256, 256).astype(np.uint8)
    src = RNG.integers(0, 256, size).astype(np.uint8)
    out = np.zeros(size, np.uint8)
    fast_int8.lookup_thunk(src, table, out, Options(pool=WorkerPool(2, adaptive=False)))()
    np.testing.assert_array_equal(out, table[src])
    assert len(cuts) == 1 and len(cuts[0]) == (1 if size < 2 * fast_int8.LOOKUP_PART else 2), (size, cuts)


@pytest.mark.usefixtures("int8_library")
@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize("per_channel", [False, True])
def test_a_function_of_one_8bit_value_is_a_table_lookup(dtype, per_channel):
    """SiLU as onnxruntime's QDQ models write it (dequantize -> sigmoid -> quantize, times the
    dequantized input, quantize) and a dequantized output: every value handed on is a function
    of one 8-bit value, so the step looks it up in a table (no sigmoid runs) and gives the
    reference kernels' bits on every one of the 256 values; after a per-channel scale the
    ops run one by one."""
    x = relay.var("x", shape=(1, 4, 8, 8), dtype=dtype)
    scale = relay.const(np.array([0.05, 0.1, 0.02, 0.07], "float32").reshape(1, 4, 1, 1) if per_channel else np.float32(0.05))
    fx = relay.multiply(relay.cast(relay.subtract(relay.cast(x, "int32"), relay.const(3)), "float32"), scale)
    sig = relay.qnn.op.quantize(relay.sigmoid(fx), relay.const(1 / 255), relay.const(0), out_dtype="uint8")
    silu = relay.multiply(fx, relay.qnn.op.dequantize(sig, relay.const(1 / 255), relay.const(0)))
    q = relay.qnn.op.quantize(silu, relay.const(0.03), relay.const(9), out_dtype="uint8")
    y = relay.qnn.op.dequantize(q, relay.const(0.03), relay.const(9))
    mod = xrelay.IRModule.from_expr(y)
    data = np.arange(256, dtype=np.uint8).view(dtype).reshape(1, 4, 8, 8)
    ref = xrelay.run(mod, {"x": data})[0]
    built = xrelay.build(mod.clone(), {}, opt_level=3, plan="greedy-by-size")
    built.set_input("x", data)
    built.run()
    np.testing.assert_array_equal(built.get_output(0).numpy(), ref)
    assert len(np.unique(ref)) > 20  # the output follows the input
    labels = [label for _, _, compiled in built.executor.steps for label, _, _ in compiled.thunks]
    if per_channel:
        assert "sigmoid" in labels, labels  # (the cast and subtract before the scale: a table)
    else:
        assert "lookup" in labels and "sigmoid" not in labels, labels


@pytest.mark.usefixtures("int8_library")
@pytest.mark.parametrize("out_dtype, zp", [("uint8", 3), ("int8", -2)])
@pytest.mark.parametrize("as_output", [True, False])
def test_onnxruntime_quantize_runs_as_one_c_pass_with_the_reference_bits(out_dtype, zp, as_output):
    """The input's QuantizeLinear (fake-quantization-to-integer{onnxruntime=true}: divide,
    clip, round half to even, cast, zero point, cast) and the constant pad the convolution
    after it needs run as one C pass (ort_quantize), giving the reference kernels' bits on
    ties (k + 0.5 steps, both parities), values beyond the clip and negative zeros; the
    quantized tensor as an output, or only padded for the convolution."""
    s = np.float32(0.25)
    x = relay.var("x", shape=(1, 3, 8, 8), dtype="float32")
    q = relay.qnn.op.quantize(x, relay.const(s), relay.const(zp), out_dtype=out_dtype)
    w = relay.const(RNG.integers(-127, 128, (4, 3, 3, 3)).astype("int8"))
    fx = relay.qnn.op.dequantize(q, relay.const(s), relay.const(zp))
    fw = relay.qnn.op.dequantize(w, relay.const(0.01), relay.const(0))
    c = relay.qnn.op.quantize(relay.nn.conv2d(fx, fw, padding=(1, 1)), relay.const(0.2), relay.const(5), out_dtype="uint8")
    mod = xrelay.IRModule.from_expr(relay.Tuple([q, c]) if as_output else c)
    mod = relay.transform.FakeQuantizationToInteger(onnxruntime=True)(mod)
    k = RNG.integers(-160, 160, 192).astype(np.float32)
    data = np.concatenate([(k + 0.5) * s, k[:: 3] * s * 1.37, np.array([-0.0, 0.0, 1e30, -1e30], np.float32)])
    data = np.resize(data, (1, 3, 8, 8)).astype(np.float32)
    refs = xrelay.run(mod, {"x": data})
    built = xrelay.build(mod.clone(), {}, opt_level=3, plan="greedy-by-size")
    built.set_input("x", data)
    built.run()
    for i, ref in enumerate(refs):
        np.testing.assert_array_equal(built.get_output(i).numpy(), ref)
    assert len(np.unique(refs[0])) > 40  # (the output follows the input)
    # as the only input of the convolution, the quantized tensor is made padded (FuseOps puts
    # the pad in the quantize's function): the border is the zero point, where the 3x3 sums
    # of the output's edges read it
    labels = [[label for label, _, _ in compiled.thunks] for _, _, compiled in built.executor.steps]
    assert ["divide"] in labels, labels  # the quantize chain (and a pad, if fused with it) in one pass


@pytest.mark.parametrize("shape, axis", [((7, 1568, 8), 1), ((32, 49), 1), ((196, 24), 0), ((3, 5, 4, 6), 2), ((5,), 0)])
@pytest.mark.parametrize("exclusive", [False, True])
def test_float_cumsum_runs_in_c_with_the_references_sequential_sums(shape, axis, exclusive, monkeypatch):
    """The float32 cumsum fake-quantization-to-integer{onnxruntime=true} writes for
    onnxruntime's reduction orders runs in C (numpy's strided accumulate is ~25 ns an element)
    and gives the reference's sequential sums bit for bit, at every position."""
    from xrelay.runtime.native import steps

    used = []

    def spy(op, vals, out, ws, opts):
        thunks = fast_int8.cumsum(op, vals, out, ws, opts)
        used.append(thunks is not None)
        return thunks

    monkeypatch.setattr(steps, "FAST", {**steps.FAST, "cumsum": spy})
    x = relay.var("x", shape=shape, dtype="float32")
    y = relay.cumsum(relay.exp(x), axis=axis, exclusive=exclusive)
    mod = xrelay.IRModule.from_expr(y)
    data = (RNG.normal(size=shape) * 3).astype(np.float32)
    ref = xrelay.run(mod, {"x": data})[0]
    lib = xrelay.build(mod.clone(), {}, opt_level=3)
    lib.set_input("x", data)
    lib.run()
    ref = np.asarray(ref)
    out = np.asarray(lib.get_output(0))
    assert used == [True]
    assert out.dtype == ref.dtype == np.float32 and np.array_equal(out.view(np.uint32), ref.view(np.uint32))


@pytest.mark.parametrize(
    "shape, axes, order",
    [((1, 37, 7, 7), [2, 3], "eigen"), ((2, 24, 13, 13), [2, 3], "eigen"), ((3, 5, 1, 3), [2, 3], "eigen"),
     ((1, 9, 2, 2), [3], "eigen"), ((1, 8, 3), [2], "eigen"), ((1, 6, 4), [1, 2], "eigen"),
     ((1, 37, 7, 7), [2, 3], "sequential"), ((1, 19, 56, 56), [2, 3], "sequential"),
     ((9, 6, 5), [0], "sequential"), ((4, 3, 10), [0, 1], "sequential"), ((1, 3, 0, 2), [2, 3], "sequential")],
)  # fmt: skip
@pytest.mark.parametrize("dtype", ["uint8", "int8"])
def test_dequantize_sum_runs_in_c_with_the_references_order(shape, axes, order, dtype, monkeypatch):
    """``qnn.dequantize_sum`` runs in C from the 8-bit tensor (``xr_dequantize_sum``, rows cut
    between the threads) and gives the reference kernel's bits for every row: Eigen's packet
    order with each row's alignment head, and first-to-last sums of rows and of columns."""
    from xrelay.runtime.interpreter import run
    from xrelay.runtime.native import steps
    from xrelay.testing.quantized_models import dequantize_sum_program

    used = []

    def spy(op, vals, out, ws, opts):
        thunks = fast_int8.dequantize_sum(op, vals, out, ws, opts)
        used.append(thunks is not None)
        return thunks

    monkeypatch.setattr(steps, "FAST", {**steps.FAST, "qnn.dequantize_sum": spy})
    mod, data = dequantize_sum_program(shape, axes, order, dtype, seed=3)
    ref = np.asarray(run(mod.module.clone(), {"q": data})[0])
    lib = xrelay.build(mod, {}, opt_level=3)
    lib.set_input("q", data)
    lib.run()
    out = np.asarray(lib.get_output(0))
    assert used == [True]
    assert out.dtype == ref.dtype == np.float32 and out.shape == ref.shape
    assert np.array_equal(out.view(np.uint32), ref.view(np.uint32))
    if data.size:
        assert len(np.unique(ref)) > ref.size // 2  # (the sums follow the input)


def _native_rows_job(lib, opts, x, targets, parts):
    """A native job copying x's (c, hw) planes to channels-last rows (``xr_planes_to_rows_u8``),
    each part its pixel range, each thread's slot its own target array."""
    c, hw = x.shape

    def serial() -> None:
        lib.xr_planes_to_rows_u8(x.ctypes.data, targets[0].ctypes.data, c, hw, c, 0, hw)

    slot_vals = [(t.ctypes.data,) for t in targets]
    args = [x.ctypes.data, 0, c, hw, c, 0, 0]
    return fast_int8.native_thunk(lib, opts, "rows", args, (5, 6), parts, serial, (1,), slot_vals), serial


@pytest.mark.usefixtures("int8_library")
def test_native_jobs_run_every_part_once_each_thread_in_its_own_slot():
    """WorkerPool.run_native: the spinning worker takes parts of a C kernel's job without
    Python; every part runs once, in the slot (buffers) of the thread that took it, and the
    threads never share a slot. Here each slot writes its own array, so the two arrays
    together hold every pixel's row exactly once; one-thread runs take the serial kernel."""
    lib = fast_int8.vnni_library()
    pool = WorkerPool(2, adaptive=False)
    opts = Options(pool=pool)
    x = RNG.integers(1, 256, (24, 4096)).astype(np.uint8)  # no zero byte: written rows show
    rows = np.ascontiguousarray(x.T)
    targets = [np.zeros((4096, 24), np.uint8) for _ in range(2)]
    parts = even_ranges(4096, 64, 16)
    thunk, serial = _native_rows_job(lib, opts, x, targets, parts)
    assert thunk is not serial
    import time

    end = time.monotonic() + 20  # the worker needs a core (the machine may be busy)
    while time.monotonic() < end:
        for t in targets:
            t[:] = 0
        thunk()
        written = [t.any(axis=1) for t in targets]
        assert not (written[0] & written[1]).any()  # no pixel in both slots
        assert (written[0] | written[1]).all()  # every pixel in one
        for t, w in zip(targets, written):
            np.testing.assert_array_equal(t[w], rows[w])
        if written[1].any():
            break
    assert written[1].any() and written[0].any()  # the worker took parts, in the other slot
    assert pool.stats["native_shared"] >= 1
    from xrelay.runtime.parallel import serial_jobs

    calls = []
    _, serial_spy = _native_rows_job(lib, opts, x, targets, parts)
    spy_thunk = fast_int8.native_thunk(lib, opts, "rows", [x.ctypes.data, 0, 24, 4096, 24, 0, 0], (5, 6), parts,
                                       lambda: calls.append(serial_spy()), (1,), [(t.ctypes.data,) for t in targets])  # fmt: skip
    before = pool.stats["native"]
    with serial_jobs():
        spy_thunk()
    assert calls == [None] and pool.stats["native"] == before
    pool.park()
    assert not pool._serve


@pytest.mark.parametrize("p, blocks", [(196, 24), (196, 4), (12544, 6), (784, 2), (49, 60), (100, 1), (3136, 9), (16, 1)])
def test_the_1x1_planes_cut_covers_every_pixel_and_block_once(p, blocks):
    """planes_cut's parts tile the pixels by the 16-channel blocks exactly once, 16-aligned,
    at most four a thread; a 14x14 image's 24 blocks are cut by channels too (its 13 groups of
    16 pixels alone cut into 3 ranges left one of two threads twice the work of the other)."""
    cut = fast_int8.planes_cut(p, blocks, 2, 4)
    seen = np.zeros((p, blocks), np.int64)
    for q0, q1, b0, b1 in cut:
        assert 0 <= q0 < q1 <= p and 0 <= b0 < b1 <= blocks and q0 % 16 == 0
        seen[q0:q1, b0:b1] += 1
    assert (seen == 1).all() and len(cut) <= 8
    if (p, blocks) in ((196, 24), (12544, 6)):
        assert len(cut) == 8
        sizes = sorted(-(-(q1 - q0) // 16) * (b1 - b0) for q0, q1, b0, b1 in cut)
        assert sizes[-1] * 8 <= sum(sizes) * 1.35, sizes  # no part much above an eighth
    assert fast_int8.planes_cut(p, blocks, 1, 4) == [(0, p, 0, blocks)]


@pytest.mark.usefixtures("int8_library")
@pytest.mark.parametrize("shape", [(64, 384, 14, 14), (13, 40, 9, 16), (36, 24, 28, 28), (8, 17, 16, 17)])
@pytest.mark.parametrize("threads", [1, 2])
def test_the_1x1_planes_kernel_cut_both_ways_gives_the_reference_sums(shape, threads):
    """The 1x1 planes kernel (``xr_conv1x1_planes_u8s8``) with its parts cut by pixels and by
    channel blocks (a partial last group of 16 pixels, channels not a multiple of 4 or 16)
    gives the reference's sums on one thread and on two, run after run."""
    if not fast_int8.vnni_library().xr_int8_has_vbmi():
        return
    c, o, h, wd = shape
    assert fast_int8.reads_planes(1, 1, 1, 1, 0, 0, h, wd, h, wd)
    pool = WorkerPool(2, adaptive=False) if threads == 2 else None
    opts = Options(pool=pool)
    x = RNG.integers(0, 256, (1, c, h, wd)).astype(np.uint8)
    w = RNG.integers(-128, 128, (o, c, 1, 1)).astype(np.int8)
    ref = _reference_conv(x, w, 1, 0, 1)
    out = np.empty(ref.shape, np.int32)
    thunks = fast_int8._vnni_conv(lib := fast_int8.vnni_library(), x, w, out, (1, 1, 1, 1, 1, 1, 0, 0), opts)
    assert lib is not None and len(thunks) == 1
    for _ in range(20):
        out[:] = 0
        for _, t in thunks:
            t()
        np.testing.assert_array_equal(out, ref)
    if pool is not None:
        assert pool.stats["native"] >= 20
        pool.park()


@pytest.mark.usefixtures("int8_library")
@pytest.mark.parametrize("geometry", [(64, 3, 64, 1, 1, 1), (20, 3, 64, 2, 1, 1), (16, 1, 96, 1, 0, 1), (40, 1, 24, 2, 0, 1)])
def test_native_convolution_jobs_give_the_reference_sums_on_both_threads(geometry):
    """The int8 convolutions' native jobs (tiles with a tile and band buffer per thread, the
    1x1 planes, the rows and their product) give the reference's sums whichever thread runs
    which part, run after run."""
    lib = fast_int8.vnni_library()
    c, k, o, s, pad, d = geometry
    pool = WorkerPool(2, adaptive=False)
    opts = Options(pool=pool)
    x = RNG.integers(0, 256, (1, c, 40, 36)).astype(np.uint8)
    w = RNG.integers(-128, 128, (o, c, k, k)).astype(np.int8)
    ref = _reference_conv(x, w, s, pad, d)
    out = np.empty(ref.shape, np.int32)
    thunks = fast_int8._vnni_conv(lib, x, w, out, (k, k, s, s, d, d, pad, pad), opts)
    for _ in range(30):
        out[:] = 0
        for _, t in thunks:
            t()
        np.testing.assert_array_equal(out, ref)
    assert pool.stats["native"] >= 30


def _ort_requant_reference(acc, mult, zp, flo, fhi):
    """onnxruntime's requantize of int32 sums (xr_epi kind 1) in numpy: float32(sum) times the
    float32 multiplier, clamped to [flo, fhi], rounded half to even, plus zp, as uint8."""
    f = acc.astype(np.float32) * np.float32(1) * mult.astype(np.float32)
    f = np.minimum(np.maximum(f, np.float32(flo)), np.float32(fhi))
    return (np.rint(f).astype(np.int64) + zp).astype(np.uint8)


@pytest.mark.usefixtures("int8_library")
@pytest.mark.parametrize("zp", [0, 7, 255])
@pytest.mark.parametrize("mult", [0.001, 0.5, 0.6, 3000.0, "per-channel"])
@pytest.mark.parametrize("shape", [(16, 22, 100), (32, 96, 64), (8, 4, 37), (13, 20, 48)])
def test_the_1x1_planes_requantize_in_registers_gives_onnxruntimes_bytes(shape, mult, zp):
    """xr_conv1x1_planes_u8s8 requantizing in registers: four channels at a time through the
    saturating packs when the clamp is the byte's and every multiplier at most 1/2
    (xr_epi_saturating; 0.6, 3000 (sums times it leave int32) and a clamp tighter than the
    byte take the one-channel form),
    each group of 16 pixels interleaved once for all the blocks of a part (or per block, a
    part of one block), channels not a multiple of 4 or 16, a partial last group of pixels,
    sums far beyond both ends of the byte: onnxruntime's requantize of the reference sums."""
    lib = fast_int8.vnni_library()
    if not lib.xr_int8_has_vbmi():
        return
    ch, o, p = shape
    x = RNG.integers(0, 256, (ch, p)).astype(np.uint8)
    w = RNG.integers(-128, 128, (o, ch)).astype(np.int8)
    off = (RNG.integers(2**19, 2**20, o) * np.resize([1, -1, 0], o)).astype(np.int32)  # beyond both ends, and near 0
    mults = RNG.uniform(1e-4, 0.3, o).astype(np.float32) if mult == "per-channel" else np.float32([mult])
    acc = w.astype(np.int64) @ x.astype(np.int64) + off[:, None]
    for flo, fhi in ((-zp, 255 - zp), (-zp, 200 - zp)):  # the byte's clamp; a tighter one
        e = fast_int8.Epilogue()
        e.kind, e.out_kind, e.per_channel, e.zp, e.flo, e.fhi = 1, 1, int(mults.size > 1), zp, flo, fhi
        e.fmult, e.offset = mults.ctypes.data, off.ctypes.data
        ref = _ort_requant_reference(acc, np.broadcast_to(mults, (o,))[:, None], zp, flo, fhi)
        assert (ref == 0).any() and (ref == (255 if fhi == 255 - zp else 200)).any()  # (both ends reached)
        wp = fast_int8.pack_weights(w)
        kp, blocks = wp.shape[1] * 4, wp.shape[0]
        for parts in ([(0, blocks)], [(b, b + 1) for b in range(blocks)]):
            out = np.zeros((o, p), np.uint8)
            for b0, b1 in parts:
                lib.xr_conv1x1_planes_u8s8(x.ctypes.data, wp.ctypes.data, out.ctypes.data, ch, p, kp, o, b0, b1, 0,
                                           p, ctypes.addressof(e))  # fmt: skip
            np.testing.assert_array_equal(out, ref)
