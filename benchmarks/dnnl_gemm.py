"""The transformers' GEMM shapes alone: oneDNN's primitives against onnxruntime, per shape.

    python benchmarks/dnnl_gemm.py [--shapes 128x768x768 ...] [--threads 1 2] [--reps 40] [--calls 1]

For each (M, K, N) -- rows (tokens), reduction, outputs: the dense layers of BERT-base,
DistilBERT and GPT-2 at 128 tokens, ViT-B/16 at 197 -- and each thread count, times
alternately, in one process, with a bias (y = x W + b, float32):

* ``mm_any``: oneDNN's matmul with the weights in the format the primitive chooses (format
  ``any``, reordered once), what xrelay's dnnl backend runs;
* ``mm_kn`` / ``mm_nk``: the same matmul reading plain weights, K x N (GPT-2's Conv1D as
  stored) or N x K (a Linear's, read transposed);
* ``ip_any``: oneDNN's inner product, weights in its chosen format;
* ``mm_gelu``: ``mm_any`` with a GELU (tanh) eltwise post-op;
* ``packed``: the shim's packed dense kernel (``packed_gemm.h``) that xrelay's dnnl backend
  runs float32 dense steps on where oneDNN has only its jit GEMM (AVX2 without AVX-512),
  with its own choice of products a block (all k for one tile of rows, m <= 6, else 256);
  ``packed_kc256``: the same kernel told blocks of 256 (its choice for every m before);
* ``ort``: onnxruntime (2 intra-op threads, spinning off, the zoo's settings) running a
  model of one MatMul and one Add of the same shape (2-thread rows only);

and prints the median milliseconds and oneDNN's implementation name per variant, and the
medians of the packed kernel's per-round ratios to ``packed_kc256`` and onnxruntime. oneDNN is
called through its C API (``libdnnl.so.3`` of the pinned wheel, the one the shim loads)
with its own engine and scratchpad. Each round times ``--calls`` calls of each variant back
to back (1 by default: the variants between two calls of one evict its weight from the caches;
more keep a weight the caches hold there, as a recurrent layer's from one time step to the
next). Write the machine's load (``uptime``) beside the figures.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import sys
import time

import numpy as np

from xrelay.runtime.dnnl.library import dnnl_library, library_path

SHAPES = ["128x768x768", "128x768x2304", "128x768x3072", "128x3072x768",
          "197x768x768", "197x768x2304", "197x768x3072", "197x3072x768"]  # fmt: skip
_P = ctypes.c_void_p
_F32, _ANY, _INFERENCE = 3, 1, 96
_Q_IMPL, _Q_WEIGHTS, _Q_SCRATCH = 8, 131, 136
_ARG_SRC, _ARG_WEIGHTS, _ARG_BIAS, _ARG_DST, _ARG_SCRATCHPAD = 1, 33, 41, 17, 80
_GELU_TANH = 43
_DIMS = ctypes.c_int64 * 12


class _Arg(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_int), ("memory", _P)]


class _Dnnl:
    def __init__(self) -> None:
        if dnnl_library() is None:  # (the same library and checks as the backend)
            raise SystemExit("oneDNN is unavailable")
        self.d = ctypes.CDLL(library_path())
        self.d.dnnl_primitive_desc_query_md.restype = _P
        self.d.dnnl_memory_desc_get_size.restype = ctypes.c_size_t
        self.engine, self.stream = _P(), _P()
        self.ok(self.d.dnnl_engine_create(ctypes.byref(self.engine), 1, ctypes.c_size_t(0)), "engine")
        self.ok(self.d.dnnl_stream_create(ctypes.byref(self.stream), self.engine, 1), "stream")

    @staticmethod
    def ok(status: int, what: str) -> None:
        if status != 0:
            raise RuntimeError(f"oneDNN refused the {what} (status {status})")

    def md(self, dims: list[int], strides: list[int] | None = None) -> _P:
        m = _P()
        if strides is None:
            self.ok(self.d.dnnl_memory_desc_create_with_tag(ctypes.byref(m), len(dims), _DIMS(*dims), _F32, _ANY), "descriptor")
        else:
            self.ok(self.d.dnnl_memory_desc_create_with_strides(ctypes.byref(m), len(dims), _DIMS(*dims), _F32, _DIMS(*strides)), "descriptor")
        return m


class Gemm:
    """One primitive of ``kind`` (``matmul``/``inner``) for x (M, K) times weights stored as
    ``weights`` (``any``, ``kn``, ``nk``) plus a bias, its operands allocated and bound."""

    def __init__(self, dnnl: _Dnnl, kind: str, m: int, k: int, n: int, weights: str, post: int = 0):
        d, self.dnnl = dnnl.d, dnnl
        attr = _P()
        dnnl.ok(d.dnnl_primitive_attr_create(ctypes.byref(attr)), "attributes")
        if post:
            ops = _P()
            dnnl.ok(d.dnnl_post_ops_create(ctypes.byref(ops)), "post-ops")
            dnnl.ok(d.dnnl_post_ops_append_eltwise(ops, post, ctypes.c_float(0), ctypes.c_float(0)), "eltwise post-op")
            dnnl.ok(d.dnnl_primitive_attr_set_post_ops(attr, ops), "post-ops")
        src, dst = dnnl.md([m, k], [k, 1]), dnnl.md([m, n], [n, 1])
        pd = _P()
        if kind == "matmul":
            w = dnnl.md([k, n], {"any": None, "kn": [n, 1], "nk": [1, k]}[weights])
            b = dnnl.md([1, n], [n, 1])
            dnnl.ok(d.dnnl_matmul_primitive_desc_create(ctypes.byref(pd), dnnl.engine, src, w, b, dst, attr), "matmul")
        else:
            w = dnnl.md([n, k], None if weights == "any" else [k, 1])
            b = dnnl.md([n], [1])
            dnnl.ok(d.dnnl_inner_product_forward_primitive_desc_create(
                ctypes.byref(pd), dnnl.engine, _INFERENCE, src, w, b, dst, attr), "inner product")  # fmt: skip
        name = ctypes.c_char_p()
        d.dnnl_primitive_desc_query(pd, _Q_IMPL, 0, ctypes.byref(name))
        self.impl = (name.value or b"").decode()
        w_md, s_md = _P(d.dnnl_primitive_desc_query_md(pd, _Q_WEIGHTS, 0)), _P(d.dnnl_primitive_desc_query_md(pd, _Q_SCRATCH, 0))
        self.prim = _P()
        dnnl.ok(d.dnnl_primitive_create(ctypes.byref(self.prim), pd), "primitive")
        rng = np.random.default_rng(0)
        sizes = [m * k, d.dnnl_memory_desc_get_size(w_md) // 4, n, m * n, d.dnnl_memory_desc_get_size(s_md) // 4]
        self.arrays = [rng.standard_normal(max(s, 16)).astype(np.float32) for s in sizes]
        self.args = (_Arg * 5)()
        for i, (md, a, key) in enumerate(zip([src, w_md, b, dst, s_md], self.arrays,
                                              [_ARG_SRC, _ARG_WEIGHTS, _ARG_BIAS, _ARG_DST, _ARG_SCRATCHPAD])):  # fmt: skip
            mem = _P()
            dnnl.ok(d.dnnl_memory_create(ctypes.byref(mem), md, dnnl.engine, _P(a.ctypes.data)), "memory")
            self.args[i].arg, self.args[i].memory = key, mem

    def __call__(self) -> None:
        d = self.dnnl.d
        self.dnnl.ok(d.dnnl_primitive_execute(self.prim, self.dnnl.stream, 5, self.args), "execution")
        d.dnnl_stream_wait(self.dnnl.stream)


class Packed:
    """The shim's packed dense kernel for x (M, K) times a weight (N, K) plus a bias, with
    ``block`` products a block (0: the kernel's choice), run through ``xr_dnnl_run``."""

    def __init__(self, m: int, k: int, n: int, block: int, threads: int):
        lib = self.lib = dnnl_library()
        lib.xr_dnnl_set_threads(threads)
        self.kernel = lib.xr_dnnl_gemm(m, n, k, 0, block, 0, None, None, None)
        if not self.kernel:
            raise SystemExit("the packed kernel is not built for this CPU (AVX2 and FMA)")
        rng = np.random.default_rng(0)
        w = rng.standard_normal((-(-n // 16) * 16, k)).astype(np.float32)
        w[n:] = 0.0
        panels = np.ascontiguousarray(w.reshape(-1, 16, k).transpose(0, 2, 1))
        full = n // 16
        self.arrays = [rng.standard_normal((m, k)).astype(np.float32),
                       np.zeros(lib.xr_dnnl_gemm_packed_bytes(self.kernel) // 4, np.float32),
                       np.zeros((m, n), np.float32), panels[:full], panels[full:], rng.standard_normal(n).astype(np.float32)]  # fmt: skip
        keys = [_ARG_SRC, 64, _ARG_DST, _ARG_WEIGHTS, 34, _ARG_BIAS]
        used = [(key, a) for key, a in zip(keys, self.arrays) if a.size]
        self.mds, self.mems = [], []
        for _, a in used:
            md = lib.xr_dnnl_md(1, _DIMS(a.size), _F32, _DIMS(1))
            self.mds.append(md)
            self.mems.append(lib.xr_dnnl_memory(md, a.ctypes.data))
        self.count = len(used)
        self.keys = (ctypes.c_int32 * self.count)(*[key for key, _ in used])
        self.ptrs = (ctypes.c_void_p * self.count)(*self.mems)
        self.prims = (ctypes.c_void_p * 1)(self.kernel)
        self.nargs = (ctypes.c_int32 * 1)(-self.count)
        self.impl = "packed_gemm:avx2"

    def __call__(self) -> None:
        if self.lib.xr_dnnl_run(1, self.prims, self.nargs, self.keys, self.ptrs, None):
            raise RuntimeError("the packed kernel failed")


def ort_matmul(m: int, k: int, n: int):
    """onnxruntime running MatMul + Add of this shape (the zoo's session settings)."""
    from onnx import TensorProto, helper, numpy_helper

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from peers import ort_session

    rng = np.random.default_rng(0)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Add", ["y", "b"], ["z"])], "gemm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(rng.standard_normal((k, n)).astype(np.float32), "w"),
         numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "b")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    sess = ort_session(model.SerializeToString())
    feeds = {"x": rng.standard_normal((m, k)).astype(np.float32)}
    return lambda: sess.run(None, feeds)


def _ratio(ours: list[float], theirs: list[float]) -> float:
    """The median of the per-round ratios (the rounds alternate the variants)."""
    return statistics.median(a / b for a, b in zip(ours, theirs))


def _shape(text: str) -> tuple[int, int, int]:
    parts = text.lower().split("x")
    if len(parts) != 3 or not all(p.isdigit() and 0 < int(p) <= 1 << 16 for p in parts):
        raise argparse.ArgumentTypeError(f"a shape is MxKxN with sizes 1..65536, not {text!r}")
    m, k, n = (int(p) for p in parts)
    return m, k, n


def _calls(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) <= 10000:
        raise argparse.ArgumentTypeError(f"calls a round is 1..10000, not {text!r}")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", nargs="+", type=_shape, default=[_shape(s) for s in SHAPES], help="MxKxN ...")
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2], choices=range(1, 65), metavar="T")
    ap.add_argument("--reps", type=int, default=40, help="timed rounds (default 40)")
    ap.add_argument("--no-ort", action="store_true", help="leave onnxruntime out")
    ap.add_argument("--calls", type=_calls, default=1, metavar="N",
                    help="calls of a variant back to back per round, timed as their mean (default 1; "
                         "with more, a weight the caches hold stays there, as a recurrent layer's "
                         "from one time step to the next)")  # fmt: skip
    args = ap.parse_args(argv)
    dnnl = _Dnnl()
    gomp = ctypes.CDLL("libgomp.so.1")  # (the wheel's libdnnl.so.3 runs on GNU OpenMP)
    for threads in args.threads:
        gomp.omp_set_num_threads(threads)  # before the primitives: they split work for it
        for m, k, n in args.shapes:
            gemms = {
                "mm_any": Gemm(dnnl, "matmul", m, k, n, "any"),
                "mm_kn": Gemm(dnnl, "matmul", m, k, n, "kn"),
                "mm_nk": Gemm(dnnl, "matmul", m, k, n, "nk"),
                "ip_any": Gemm(dnnl, "inner", m, k, n, "any"),
                "mm_gelu": Gemm(dnnl, "matmul", m, k, n, "any", _GELU_TANH),
            }
            runs: dict = dict(gemms)
            if dnnl_library().xr_dnnl_gemm_built():
                runs["packed"] = Packed(m, k, n, 0, threads)
                runs["packed_kc256"] = Packed(m, k, n, 256, threads)
            if threads == 2 and not args.no_ort:
                runs["ort"] = ort_matmul(m, k, n)
            for run in runs.values():
                run()
            times: dict[str, list[float]] = {name: [] for name in runs}
            for _ in range(args.reps):
                for name, run in runs.items():
                    t = time.perf_counter()
                    for _ in range(args.calls):
                        run()
                    times[name].append((time.perf_counter() - t) / args.calls)
            med = {name: statistics.median(ts) * 1e3 for name, ts in times.items()}
            gflops = 2 * m * k * n / med["mm_any"] / 1e6
            cells = "  ".join(f"{name} {ms:.3f}" for name, ms in med.items())
            ratios = [f"; packed / {peer} {_ratio(times['packed'], times[peer]):.3f}"
                      for peer in ("packed_kc256", "ort") if "packed" in times and peer in times]  # fmt: skip
            impls = " ".join(sorted({g.impl for g in gemms.values()}))
            print(f"{threads} thr {m}x{k}x{n}: {cells} ms  (mm_any {gflops:.0f} GFLOP/s; {impls}{''.join(ratios)})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
