"""The u8s8 GEMM core (``xr_gemm_u8s8``) and the dense layer on it give the reference's bits:
every tail of rows (groups of 8), channels (pairs of 16-channel blocks) and reduction (4-byte
steps), every epilogue kind, per tensor and per channel, both layouts, one thread and a native
job cut between two."""

from __future__ import annotations

import ctypes
import functools

import numpy as np
import pytest

from xrelay.runtime.native import fast_int8
from xrelay.runtime.native.fast_kernels import Options
from xrelay.runtime.parallel import WorkerPool
from xrelay.testing import quantized_models as qm

RNG = np.random.default_rng(30)
# random int8 weights onnxruntime multiplies exactly on this CPU (7 bits where its uint8 x int8
# products saturate: quantized_models.ort_u8s8_exact)
W8 = qm.int8_weight_bounds()

# (rows, reduction, channels): tails of every loop -- rows below and past a group of 8, a
# lone block after the pairs, channels short of a block, a reduction not a multiple of 4
# (zero padded as the callers do), several pairs with several groups each (the next pair's
# weights prefetched group by group), a panel past XR_PF_PANEL (no prefetch); a last group of
# 1-7 rows runs four rows by four blocks at a time (5 rows as 4 + 1 by 5 blocks, 1 row by 9)
SHAPES = [(1, 4, 1), (7, 12, 17), (8, 13, 16), (9, 36, 33), (23, 100, 48), (40, 64, 100), (130, 256, 72),
          (17, 2052, 40), (45, 40, 80), (49, 24, 136)]  # fmt: skip


def _reference_sums(a, w):
    return a.astype(np.int64) @ w.astype(np.int64).T  # (rows, channels), exact


def _wrap32(v):
    return v.astype(np.int64).astype(np.uint64).astype(np.uint32).astype(np.int32)


def _reference_requant(acc, kind, per_channel, out_kind, offset, fmult, m, ls, total, zp, lo, hi, flo, fhi):
    """xr_epi's arithmetic, written from its description in int8_gemm.c with numpy."""
    n = acc.shape[1]
    r = _wrap32(acc + (0 if offset is None else offset.astype(np.int64)))
    if kind == 1:
        mult = fmult if per_channel else np.full(n, fmult[0], np.float32)
        f = np.clip(r.astype(np.float32) * mult, np.float32(flo), np.float32(fhi))
        v = _wrap32(np.rint(f).astype(np.int64) + zp)
    else:
        pick = (lambda x: x) if per_channel else (lambda x: np.full(n, x[0], np.int64))
        sl, tt, mm = pick(ls), pick(total), pick(m)
        t = (r.astype(np.int64).astype(object) << sl.astype(object)) * mm.astype(object)
        t = np.vectorize(lambda x: (x + (1 << 63)) % (1 << 64) - (1 << 63), otypes=[object])(t)  # int64 wraps
        t = (t + (1 << (tt.astype(object) - 1))) >> tt.astype(object)
        v = np.clip(_wrap32(np.vectorize(int, otypes=[np.int64])(t) + zp), lo, hi)
    return v.astype(np.int8 if out_kind == 0 else np.uint8)


def _reference_add(v, ra, t, lo, hi):
    """xr_epi_add: onnxruntime's QLinearAdd of a per-channel constant on the 8-bit values v."""
    f = (v.astype(np.float64) * ra + t.astype(np.float64)).astype(np.float32)
    return np.clip(np.rint(f), lo, hi).astype(np.int64).astype(np.uint8)


def _epilogue(kind, per_channel, out_kind, with_offset, n, wide_bounds=False, bias_add=False):
    """An xr_epi of that kind and its reference's arguments (the arrays kept alive in ``held``);
    with ``bias_add`` the QLinearAdd of a per-channel constant after it (uint8 result)."""
    offset = RNG.integers(-(2**24), 2**24, n).astype(np.int32) if with_offset else None
    size = n if per_channel else 1
    fmult = (RNG.random(size) * 3e-5 + 1e-6).astype(np.float32)
    m = RNG.integers(2**29, 2**30, size).astype(np.int64)
    ls = RNG.integers(0, 2, size).astype(np.int64)
    total = RNG.integers(38, 44, size).astype(np.int64)
    zp = int(RNG.integers(-20, 20))
    lo, hi = (-128, 127) if out_kind == 0 else (0, 255)
    flo, fhi = float(lo - zp), float(hi - zp)
    if wide_bounds:  # past 2^22: the scalar loop (no 16-lane requantize)
        flo, fhi = -1e7, 1e7
    epi = fast_int8.Epilogue(kind=kind, out_kind=out_kind, per_channel=int(per_channel), zp=zp, lo=lo, hi=hi,
                             offset=None if offset is None else offset.ctypes.data, fmult=fmult.ctypes.data,
                             m=m.ctypes.data, ls=ls.ctypes.data, total=total.ctypes.data, flo=flo, fhi=fhi)  # fmt: skip
    ref = functools.partial(_reference_requant, kind=kind, per_channel=per_channel, out_kind=out_kind, offset=offset,
                            fmult=fmult, m=m, ls=ls, total=total, zp=zp, lo=lo, hi=hi, flo=flo, fhi=fhi)  # fmt: skip
    t = (RNG.normal(size=n) * 40).astype(np.float32)
    if bias_add:
        ra = float(RNG.uniform(0.5, 1.5))
        epi.add_t, epi.add_ra, epi.add_kind, epi.add_lo, epi.add_hi = t.ctypes.data, ra, 1, 0, 255
        first = ref
        ref = lambda acc: _reference_add(first(acc), ra, t, 0, 255)  # noqa: E731
    return epi, ref, (offset, fmult, m, ls, total, t)


EPILOGUES = [None, (1, False, 1, True), (1, True, 1, True), (1, True, 0, False), (1, False, 0, True, True),
             (2, False, 0, True), (2, True, 1, True), (1, True, 1, True, False, True), (1, False, 0, True, False, True),
             (1, True, 1, True, True, True)]  # fmt: skip
"""None: the int32 sums; else (kind, per channel, out kind, with offset[, bounds past 2^22[, then
a bias QLinearAdd]])."""


def _gemm_thunk(lib, a, wp, out, n, pm, epi, pool):
    p, kp = a.shape
    blocks = wp.shape[0]
    epi_ptr = None if epi is None else ctypes.addressof(epi)
    args = [a.ctypes.data, wp.ctypes.data, out.ctypes.data, p, kp, n, 0, blocks, epi_ptr, pm]
    serial = functools.partial(lib.xr_gemm_u8s8, *args)
    if pool is None:
        return serial
    opts = Options(pool=pool)
    cut = fast_int8.native_cut(blocks, opts)
    return fast_int8.native_thunk(lib, opts, "gemm", list(args), (6, 7), cut, serial)


@pytest.mark.usefixtures("int8_library")
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("threads", [1, 2])
def test_the_gemm_core_gives_the_references_bits(shape, threads):
    lib = fast_int8.vnni_library()
    p, k, n = shape
    kp = -(-k // 4) * 4
    a = np.zeros((p, kp), np.uint8)
    a[:, :k] = RNG.integers(0, 256, (p, k))
    a[: min(p, 3), :k] = 255  # the extremes: the largest sums of either sign
    w = RNG.integers(-128, 128, (n, k)).astype(np.int8)
    w[: min(n, 2)] = -128
    w[min(n, 2) : min(n, 4)] = 127
    wp = fast_int8.pack_weights(w)
    sums = _reference_sums(a[:, :k], w)
    pool = WorkerPool(2, adaptive=False) if threads == 2 else None
    for spec in EPILOGUES:
        for pm in (0, 1) if len(spec or ()) < 6 else (1,):  # the bias add: a dense layer's (pixel-major)
            epi, ref, held = (None, None, ()) if spec is None else _epilogue(*spec[:4], n, *spec[4:])
            expected = sums.astype(np.int32) if spec is None else ref(sums)
            out = np.full((p, n) if pm else (n, p), 99, expected.dtype)
            run = _gemm_thunk(lib, a, wp, out, n, pm, epi, pool)
            for _ in range(3 if threads == 2 else 1):  # whichever thread takes which part
                out[...] = 99
                run()
                np.testing.assert_array_equal(out if pm else out.T, expected, err_msg=f"{spec} pm={pm}")
            del held
    if pool is not None:
        assert pool.stats["native"] >= (1 if wp.shape[0] > 1 else 0)  # one block: one part, the serial call
        pool.park()


@pytest.mark.usefixtures("int8_library")
@pytest.mark.parametrize("threads", [1, 2])
def test_the_dense_layer_runs_the_core_as_a_native_job_with_the_references_sums(threads):
    """``fast_int8.dense`` (uint8 x int8, int32): on two threads one native job whose parts
    are channel-block ranges, run by either thread; the reference's sums every run."""
    lib = fast_int8.vnni_library()
    x = RNG.integers(0, 256, (2, 45, 132)).astype(np.uint8)
    w = RNG.integers(-128, 128, (200, 132)).astype(np.int8)
    out = np.empty((2, 45, 200), np.int32)
    pool = WorkerPool(2, adaptive=False) if threads == 2 else None
    opts = Options(pool=pool, fixed=(False, True))
    thunks = fast_int8._vnni_dense(lib, None, x.reshape(90, 132), w, out, opts)
    assert [fam for fam, _ in thunks] == ["matmul"]
    expected = _reference_sums(x.reshape(90, 132), w).reshape(out.shape)
    for _ in range(20):
        out[...] = 0
        thunks[0][1]()
        np.testing.assert_array_equal(out, expected)
    if pool is not None:
        assert pool.stats["native"] >= 20  # no Python chunks: the pool's native path
        pool.park()


def _projections(tokens: int, sizes: list[int], per_channel: bool):
    """A QDQ model of MatMul + Add (bias) layers as quantize_static leaves BERT's exported
    projections: a QuantizeLinear after the MatMul and the Add's two sides dequantized (the
    bias a constant uint8 tensor), which onnxruntime runs as a QLinearMatMul then a QLinearAdd."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(4)
    f32, n = np.float32, helper.make_node
    inits = {"sx": f32(0.031), "zx": np.uint8(121)}
    nodes = [n("QuantizeLinear", ["x", "sx", "zx"], ["q"]), n("DequantizeLinear", ["q", "sx", "zx"], ["f0"])]
    for i, (k, o) in enumerate(zip(sizes, sizes[1:])):
        sw = rng.uniform(0.002, 0.01, o).astype(f32) if per_channel else f32(0.006)
        zw = np.zeros(o, np.int8) if per_channel else np.int8(0)
        inits |= {f"w{i}": rng.integers(*W8, (k, o)).astype(np.int8), f"sw{i}": sw, f"zw{i}": zw,
                  f"sm{i}": f32(rng.uniform(0.05, 0.1)), f"zm{i}": np.uint8(rng.integers(100, 150)),
                  f"b{i}": rng.integers(0, 256, o).astype(np.uint8), f"sb{i}": f32(0.013), f"zb{i}": np.uint8(131),
                  f"sa{i}": f32(rng.uniform(0.05, 0.1)), f"za{i}": np.uint8(rng.integers(100, 150))}  # fmt: skip
        nodes += [
            n("DequantizeLinear", [f"w{i}", f"sw{i}", f"zw{i}"], [f"fw{i}"], axis=1),
            n("MatMul", [f"f{i}", f"fw{i}"], [f"m{i}"]), n("QuantizeLinear", [f"m{i}", f"sm{i}", f"zm{i}"], [f"qm{i}"]),
            n("DequantizeLinear", [f"qm{i}", f"sm{i}", f"zm{i}"], [f"dm{i}"]),
            n("DequantizeLinear", [f"b{i}", f"sb{i}", f"zb{i}"], [f"db{i}"]),
            n("Add", [f"dm{i}", f"db{i}"], [f"a{i}"]), n("QuantizeLinear", [f"a{i}", f"sa{i}", f"za{i}"], [f"qa{i}"]),
            n("DequantizeLinear", [f"qa{i}", f"sa{i}", f"za{i}"], [f"f{i + 1}"]),
        ]  # fmt: skip
    last = len(sizes) - 2
    nodes.append(n("QuantizeLinear", [f"f{last + 1}", f"sa{last}", f"za{last}"], ["y"]))
    graph = helper.make_graph(nodes, "p", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, tokens, sizes[0]])],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, None)],
                              [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("per_channel", [False, True])
def test_a_dense_layers_bias_qlinear_add_runs_on_its_tiles_with_onnxruntimes_bits(per_channel, counting):
    """quantize_static's MatMul + Add projections are a QLinearMatMul then a QLinearAdd of the
    bias (a constant per channel): the add's requantize runs in the product's epilogue on each
    tile (``_bias_add_chain``), no C pass of its own (``xr_qlinear_add_const``), with
    onnxruntime's bits. 40 and 72 channels: pairs of 16-channel blocks and a partial one; 13
    tokens: a partial group of rows."""
    from xrelay.testing import quantized_models as qm

    q = _projections(13, [40, 40, 72, 40], per_channel)
    rng = np.random.default_rng(9)
    with counting("xr_qlinear_add_const") as calls:
        m = qm.build(q, integer=True)
        for feed in [{"x": rng.normal(size=(1, 13, 40)).astype(np.float32) * 2} for _ in range(3)]:
            ref, out = qm.compare(q, feed, m)
            assert np.all(np.isfinite(out)) and ref.dtype == out.dtype and np.array_equal(ref, out)
            assert len(np.unique(out)) > 20  # the output follows the input
    assert len(calls) == 0, len(calls)
    assert [ops for name, ops, _ in m.executor.steps if "dense" in name] == ["nn.dense"] * 3
