"""The u8s8 VNNI GEMM core alone (``xr_gemm_u8s8``) against onnxruntime's, per shape.

    python benchmarks/int8_gemm.py [--shapes 128x768x768 ...] [--threads 1 2] [--reps 30]

For each (M, K, N) -- rows (tokens or output pixels), reduction, output channels: BERT-base's
dense layers at 128 tokens and ResNet-18's convolutions as im2row GEMMs at 224x224 -- and each
thread count, times in one process, alternating blocks of ``BLOCK`` calls, the median of
``--reps`` blocks of:

* ``xr``: ``xr_gemm_u8s8`` with a per-channel requantize epilogue (onnxruntime's float form, the
  zero-point/bias offset per channel) writing uint8, pixel-major (a dense layer's rows) for the
  BERT shapes and channel-major (a convolution's NCHW) for the others; two threads run it as
  the runtime does, a native job of ``native_cut`` channel-block parts on a ``WorkerPool``;
* ``xr32``: the same product with the int32 result (no epilogue);
* ``ort``: onnxruntime (intra-op threads = the thread count, spinning off as in the zoo)
  running a one-node model, ``QLinearMatMul`` (uint8 x int8 -> uint8, per-tensor scales);
* ``ort32``: the same with ``MatMulInteger`` (uint8 x int8 -> int32).

It prints milliseconds and GMAC/s (M*K*N multiply-adds), and the machine's VNNI peak: a loop
of independent ``vpdpbusd zmm`` (64 multiply-adds each), one thread. Every shape's result is
checked against numpy first (the int32 product, exact). Write the machine's load (``uptime``)
beside the figures.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from xrelay.runtime.native import fast_int8 as fi
from xrelay.runtime.native import library as native
from xrelay.runtime.native.fast_kernels import Options
from xrelay.runtime.parallel import WorkerPool

BERT = ["128x768x768", "128x768x3072", "128x3072x768"]
BLOCK = 4
"""Calls timed together: a variant runs this many times in a row (as a model's steps follow
each other), the variants alternating block by block."""
RESNET18 = ["3136x576x64", "784x1152x128", "784x64x128", "196x2304x256", "196x128x256", "49x4608x512"]

_PEAK_C = r"""
#include <immintrin.h>
#include <stdint.h>
/* n iterations of 16 independent vpdpbusd zmm (64 u8 x s8 multiply-adds each) */
int64_t xr_peak(int64_t n, int32_t seed) {
    const __m512i x = _mm512_set1_epi32(seed), w = _mm512_set1_epi32(seed + 1);
#define A(i) __m512i a##i = _mm512_set1_epi32(i);
    A(0) A(1) A(2) A(3) A(4) A(5) A(6) A(7) A(8) A(9) A(10) A(11) A(12) A(13) A(14) A(15)
#undef A
    for (int64_t k = 0; k < n; ++k) {
#define S(i) a##i = _mm512_dpbusd_epi32(a##i, x, w);
        S(0) S(1) S(2) S(3) S(4) S(5) S(6) S(7) S(8) S(9) S(10) S(11) S(12) S(13) S(14) S(15)
#undef S
    }
    __m512i s = _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3)),
                                 _mm512_add_epi32(_mm512_add_epi32(a4, a5), _mm512_add_epi32(a6, a7)));
    s = _mm512_add_epi32(s, _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(a8, a9), _mm512_add_epi32(a10, a11)),
                                             _mm512_add_epi32(_mm512_add_epi32(a12, a13), _mm512_add_epi32(a14, a15))));
    return _mm512_reduce_add_epi32(s);
}
"""


def vnni_peak() -> float | None:
    """GMAC/s of one thread's ``vpdpbusd zmm`` loop (None without a compiler or VNNI)."""
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "peak.c"), os.path.join(d, "peak.so")
        with open(src, "w") as f:
            f.write(_PEAK_C)
        try:
            subprocess.run([os.environ.get("CC", "cc"), *native._FLAGS, src, "-o", out],  # noqa: SLF001
                           check=True, capture_output=True, timeout=60)  # fmt: skip
            lib = ctypes.CDLL(out)
        except (OSError, subprocess.SubprocessError):
            return None
    lib.xr_peak.argtypes, lib.xr_peak.restype = [ctypes.c_int64, ctypes.c_int32], ctypes.c_int64
    n = 2_000_000
    lib.xr_peak(n // 10, 1)
    best = min(_elapsed(lambda: lib.xr_peak(n, 1)) for _ in range(5))
    return n * 16 * 64 / best / 1e9


def _elapsed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


class XrGemm:
    """``xr_gemm_u8s8`` on random operands of one shape, with or without the epilogue."""

    def __init__(self, lib, m: int, k: int, n: int, pm: int, requant: bool, pool: WorkerPool | None, rng,
                 copies: int = 1):  # fmt: skip
        self.a = rng.integers(0, 256, (m, k), dtype=np.uint8)
        self.w = rng.integers(-128, 128, (n, k), dtype=np.int8)
        self.wp = fi.pack_weights(self.w)
        self.copies = [self.wp] + [self.wp.copy() for _ in range(copies - 1)]
        kp, blocks = self.wp.shape[1] * 4, self.wp.shape[0]
        if kp != k:
            raise SystemExit(f"K = {k} must be a multiple of 4")
        self.offset = rng.integers(-(2**20), 2**20, n, dtype=np.int32)
        self.fmult = (rng.random(n, dtype=np.float32) * 2e-4 + 1e-5).astype(np.float32)
        self.epi = fi.Epilogue(kind=1, out_kind=1, per_channel=1, zp=7, lo=0, hi=255, offset=self.offset.ctypes.data,
                               fmult=self.fmult.ctypes.data, flo=-7.0, fhi=248.0)  # fmt: skip
        self.out = np.empty((m, n) if pm else (n, m), np.uint8 if requant else np.int32)
        epi = ctypes.addressof(self.epi) if requant else None
        args = [self.a.ctypes.data, self.wp.ctypes.data, self.out.ctypes.data, m, k, n, 0, blocks, epi, pm]

        opts = Options(pool=pool)
        thunks = []
        for wp in self.copies:
            args[1] = wp.ctypes.data
            call = functools.partial(lib.xr_gemm_u8s8, *args)
            thunks.append(fi.native_thunk(lib, opts, "gemm", list(args), (6, 7), fi.native_cut(blocks, opts), call))
        turn = itertools.cycle(thunks)
        self.run = lambda: next(turn)()
        self.pm, self.requant = pm, requant

    def check(self) -> None:
        self.run()
        ref = self.a.astype(np.int64) @ self.w.astype(np.int64).T  # (m, n)
        if self.requant:
            f = ((ref + self.offset).astype(np.int32).astype(np.float32) * self.fmult).clip(-7.0, 248.0)
            ref = np.rint(f).astype(np.int32) + 7
        got = self.out if self.pm else self.out.T
        if not np.array_equal(got.astype(np.int64), ref.astype(np.int64)):
            raise SystemExit("xr_gemm_u8s8 differs from numpy")


def ort_session(kind: str, m: int, k: int, n: int, threads: int, rng):
    """A one-node onnxruntime session (``QLinearMatMul`` or ``MatMulInteger``) and its feed."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    w = rng.integers(-128, 128, (k, n), dtype=np.int8)
    init = [numpy_helper.from_array(w, "w")]
    if kind == "QLinearMatMul":
        init += [numpy_helper.from_array(np.array(v, t), nm) for nm, v, t in
                 [("as", 0.02, np.float32), ("az", 3, np.uint8), ("ws", 0.01, np.float32), ("wz", 0, np.int8),
                  ("ys", 4.0, np.float32), ("yz", 5, np.uint8)]]  # fmt: skip
        node = helper.make_node(kind, ["a", "as", "az", "w", "ws", "wz", "ys", "yz"], ["y"])
        out_type = TensorProto.UINT8
    else:
        node = helper.make_node(kind, ["a", "w"], ["y"])
        out_type = TensorProto.INT32
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("a", TensorProto.UINT8, [m, k])],
                              [helper.make_tensor_value_info("y", out_type, [m, n])], init)  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    feed = {"a": rng.integers(0, 256, (m, k), dtype=np.uint8)}
    onnx.checker.check_model(model)
    return lambda: sess.run(None, feed)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", nargs="*", default=BERT + RESNET18, help="MxKxN")
    ap.add_argument("--threads", nargs="*", type=int, default=[1, 2])
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("--cold", action="store_true",
                    help="xrelay's calls each take the next of copies of the weights (64 MB in all, more than the L3 "
                         "cache), as in a model whose weights do not stay in cache between runs (onnxruntime keeps one "
                         "session: a session per copy, each with its own thread pool, timed the switching)")  # fmt: skip
    args = ap.parse_args(argv)
    lib = fi.vnni_library()
    if lib is None or not lib.xr_int8_has_vnni():
        print("no VNNI library (XRELAY_NATIVE=0, no compiler, or no AVX-512 VNNI)", file=sys.stderr)
        return 1
    peak = vnni_peak()
    print(f"VNNI peak, one thread: {peak:.0f} GMAC/s" if peak else "VNNI peak: unavailable")
    rng = np.random.default_rng(0)
    print(f"{'shape':>14} {'thr':>3} " + " ".join(f"{c:>15}" for c in ("xr", "xr32", "ort", "ort32")) + "  xr/ort")
    for threads in args.threads:
        pool = WorkerPool(threads) if threads > 1 else None
        for shape in args.shapes:
            m, k, n = (int(v) for v in shape.split("x"))
            pm = int(shape in BERT or m <= 128)
            copies = max(1, (64 << 20) // (k * n)) if args.cold else 1
            runs = {"xr": XrGemm(lib, m, k, n, pm, True, pool, rng, copies),
                    "xr32": XrGemm(lib, m, k, n, pm, False, pool, rng, copies)}  # fmt: skip
            for g in runs.values():
                g.check()
            fns = {name: g.run for name, g in runs.items()}
            if not args.no_ort:
                fns["ort"] = ort_session("QLinearMatMul", m, k, n, threads, rng)
                fns["ort32"] = ort_session("MatMulInteger", m, k, n, threads, rng)
            times: dict[str, list[float]] = {name: [] for name in fns}
            for fn in fns.values():
                for _ in range(3):
                    fn()
            for _ in range(args.reps):
                for name, fn in fns.items():
                    fn()  # (wakes the pool's workers, asleep after the other variants)
                    times[name].append(_elapsed(lambda fn=fn: [fn() for _ in range(BLOCK)]) / BLOCK)
            med = {name: statistics.median(t) for name, t in times.items()}
            cells = [f"{med[c] * 1e3:6.3f} {m * k * n / med[c] / 1e9:5.0f}G" if c in med else f"{'-':>15}"
                     for c in ("xr", "xr32", "ort", "ort32")]  # fmt: skip
            ratio = f"{med['xr'] / med['ort']:6.2f}" if "ort" in med else ""
            print(f"{shape:>14} {threads:>3} " + " ".join(f"{c:>15}" for c in cells) + f"  {ratio}")
        if pool is not None:
            pool.park()  # (its workers are daemons: they sleep until the process ends)
    return 0


if __name__ == "__main__":
    sys.exit(main())
