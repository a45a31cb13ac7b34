"""The arena executor against onnxruntime and OpenVINO: latency ratios and peak RSS.

    python benchmarks/runtime.py --models resnet18 resnet50 mobilenet_v2 bert_layer --pairs 20
    python benchmarks/runtime.py --models resnet18 --pairs 30 --backends native --no-rss
    python benchmarks/runtime.py --int8 --models resnet18 mobilenet_v2 bert_layer   # int8 vs ort int8, f32

Every model is built as an ONNX graph (``xrelay.testing.onnx_models``), imported into xrelay
and built with ``xrelay.build`` (-O3, default backends: oneDNN where it takes a step, the
native kernels elsewhere; ``--backends native`` for the native kernels alone); the same ONNX
runs in onnxruntime and, when the ``openvino`` package is installed (``pip install -e
'.[bench]'``), in OpenVINO's CPU plugin (``INFERENCE_PRECISION_HINT`` f32,
``INFERENCE_NUM_THREADS`` 2, one stream, latency hint). Batch 1, float32, 2 threads each
(onnxruntime ``intra_op_num_threads = 2``; xrelay's pool of 2 and oneDNN's 2 OpenMP threads).

**Latency.** The machine is noisy, so every session lives in this one process and they run
in rounds, back to back (xrelay, onnxruntime with spinning off, OpenVINO) after a warm-up;
each ratio is the median over ``--pairs`` rounds of the per-round ratio. onnxruntime with
spinning on is measured afterwards in separate xrelay/onnxruntime pairs: its pool threads keep
spinning for about 40 ms after each run and would slow whatever runs next, so after each
spinning run the script busy-waits until the process's other threads have stopped using CPU
(no other thread in state ``R`` in ``/proc/self/task/*/stat``; the median wait is printed) before the next xrelay run. ``max rel err`` is the largest difference from
onnxruntime's output relative to its largest magnitude.

**Peak RSS.** Measured in separate processes, one per runtime: the xrelay process loads the
exported ``(graph.json, lib.mlir, params.npz)`` (``xrelay.runtime.load``) as a deployed model
would, the onnxruntime one the ``.onnx`` file; each runs the model 3 times and reports
``ru_maxrss`` (OpenVINO's too, in a third process). The activation arena of the module is
checked to be the plan's arena size.

**bfloat16.** Unless ``--no-bf16``, each round also runs xrelay's
``xrelay.build(..., mixed_precision="bfloat16")`` build (oneDNN's bf16 convolutions and dense)
and OpenVINO at its default precision (no ``INFERENCE_PRECISION_HINT``: bf16 on a CPU with
AVX512_BF16); their ratios are to onnxruntime float32 in the same rounds, and their errors
(largest absolute difference, and relative to the largest magnitude) are against xrelay's
float32 output on the same input. ``benchmarks/mixed_precision.py`` measures top-1
agreement over 100 inputs.

**Winograd rules.** ``--winograd`` also times each ResNet with
``XRELAY_DNNL_WINOGRAD=never`` (every convolution direct on oneDNN) against the same model with
``f4`` (its 3x3 stride-1 convolutions with outputs of at least 28x28 on the native Winograd
F(4x4, 3x3) kernel) and with ``dnnl``, the default (3x3 stride-1 convolutions with outputs
from 14x14 as Winograd F(4x4, 3x3) on the oneDNN backend: the shim's transforms around
oneDNN's batched matmul), alternating: the measurement behind
``runtime.dnnl.primitives.winograd_in_dnnl`` and ``backend.dnnl.partition.winograd_choice``.

``--profile`` prints xrelay's per-op-family profile (matmul, im2col, elementwise, ...) per
model, which is what limits a model that misses its target.

**Busy core.** ``--busy-core`` keeps one core busy with a spinning process (``while True:
pass``) during the latency pairs: how both runtimes degrade when another program takes a
core (OpenBLAS's own threads collapse then, which is why the executor runs its own).
``--threads`` sets xrelay's thread count (default: ``TVM_NUM_THREADS`` or the cores).

**int8.** ``--int8`` prints instead the quantized table of ``benchmarks/quantized.py`` for the
chosen models (those it knows: ResNet-18, MobileNetV2, the BERT layer): onnxruntime's
``quantize_static`` QDQ models, per-tensor and per-channel; agreement with onnxruntime; xrelay
int8 latency against onnxruntime int8 and against xrelay float32 (``--pairs`` alternating
pairs, median of per-pair ratios); the int8 and float32 arenas. ``--inputs`` sets how many
random inputs the agreement is measured on (default 100).

**Layouts.** With ResNet-18 among the models, the script also runs it as imported (NCHW)
against the same model after ``ConvertLayout`` to NHWC/HWIO and after TVM's x86
``AlterOpLayout`` (blocked ``NCHW{c}c``, which the build leaves out), in turn, and prints the
times and the median per-round ratios (``--no-layouts`` skips it): once with the build's
default backends (or ``--backends``) and once with the native kernels alone.
"""

from __future__ import annotations

import os

# BLAS threads are fixed before numpy loads (a benchmark setting, not a library default).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")
os.environ.setdefault("OMP_NUM_THREADS", "2")

import argparse  # noqa: E402
import collections  # noqa: E402
import contextlib  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402
from peers import (  # noqa: E402  (benchmarks/peers.py: what the runtime benchmarks share)
    BusyCore,
    alternate,
    child,
    median_ratio,
    peak_rss,
)
from peers import errors as _errors  # noqa: E402
from peers import has_openvino as _has_openvino  # noqa: E402
from peers import ort_session as _ort_session  # noqa: E402
from peers import ov_request as _ov_request  # noqa: E402
from peers import settle_other_threads as _settle_other_threads  # noqa: E402

from xrelay.runtime.files import scratch_dir  # noqa: E402

MODELS = {
    "resnet18": ("resnet18", {}),
    "resnet50": ("resnet50", {}),
    "mobilenet_v2": ("mobilenet_v2", {}),
    "bert_layer": ("bert_layer", {}),
}
TARGETS = {"resnet18": 0.9, "resnet50": 0.9, "mobilenet_v2": 1.0, "bert_layer": 1.0}
BF16_TARGETS = {"resnet18": 0.55, "resnet50": 0.55}
"""``mixed_precision="bfloat16"`` against onnxruntime float32."""


def _model(name: str):
    from xrelay.testing import onnx_models

    fn, kwargs = MODELS[name]
    return getattr(onnx_models, fn)(**kwargs)


def _inputs(name: str, model) -> dict[str, np.ndarray]:
    from xrelay.testing import onnx_models

    if name == "bert_layer":
        return onnx_models.bert_inputs()
    rng = np.random.default_rng(0)
    out = {}
    for i in model.graph.input:
        shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
        out[i.name] = rng.standard_normal(shape).astype("float32")
    return out


def _build(name: str, model, plan: str, threads: int | None = None, backends=None, mixed_precision=None):
    import xrelay
    from xrelay.backend.build import MixedPrecisionWarning
    from xrelay.frontends.onnx import from_onnx

    mod, params = from_onnx(model)
    with warnings.catch_warnings():
        # (the bf16 build is measured wherever it runs; its table says when it is slow)
        warnings.simplefilter("ignore", MixedPrecisionWarning)
        return xrelay.build(
            mod, params, opt_level=3, plan=plan, threads=threads, backends=backends, mixed_precision=mixed_precision
        )


def measure_latency(
    name: str,
    plan: str,
    pairs: int,
    warmup: int,
    profile: bool,
    threads: int | None = None,
    busy_core: bool = False,
    backends: tuple[str, ...] | None = None,
    bf16: bool = True,
) -> dict:
    """Rounds of xrelay, onnxruntime (spinning off), OpenVINO f32, and with ``bf16`` xrelay's
    ``mixed_precision="bfloat16"`` build and OpenVINO at its default precision, back to back;
    then, as separate pairs, xrelay against onnxruntime with spinning on."""
    model = _model(name)
    inputs = _inputs(name, model)
    t0 = time.perf_counter()
    m = _build(name, model, plan, threads, backends)
    build_s = time.perf_counter() - t0
    mbf = _build(name, model, plan, threads, backends, mixed_precision="bfloat16") if bf16 else None
    sess = _ort_session(model.SerializeToString())
    spin_sess = _ort_session(model.SerializeToString(), spin=True)
    with scratch_dir("xrelay-bench-runtime-") as tmp:
        path = os.path.join(tmp, "model.onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        ov_req = _ov_request(path)
        ov_bf = _ov_request(path, precision=None) if bf16 else None
    m.set_input(**inputs)
    m.run()
    (expect, *_) = sess.run(None, inputs)
    out = m.get_output(0).numpy()
    err, rel = _errors(out, expect)
    accuracy = {}  # bf16 against xrelay float32
    if mbf is not None:
        mbf.set_input(**inputs)
        mbf.run()
        accuracy["bf16"] = _errors(mbf.get_output(0).numpy(), out)
    if ov_bf is not None:
        (ov_out, *_) = ov_bf.infer(inputs).values()
        accuracy["ov_bf16"] = _errors(np.asarray(ov_out), out)
    peers: dict[str, Callable[[], object]] = {"xrelay": m.run, "ort": lambda: sess.run(None, inputs)}
    if ov_req is not None:
        peers["ov"] = lambda: ov_req.infer(inputs)
    if mbf is not None:
        peers["bf16"] = mbf.run
    if ov_bf is not None:
        peers["ov_bf16"] = lambda: ov_bf.infer(inputs)
    clock = time.perf_counter
    with BusyCore() if busy_core else contextlib.nullcontext():
        times = alternate(peers, pairs, warmup)
        # spinning on, in separate pairs: onnxruntime's pool threads keep spinning for tens
        # of milliseconds after a run (about 40 ms measured on this machine), which would
        # land on the xrelay run that follows; each pair waits, busy, until they stop.
        spin_ratios, spin_times, spin_settle = [], [], []
        for i in range(warmup + pairs):
            t = clock()
            m.run()
            a = clock() - t
            t = clock()
            spin_sess.run(None, inputs)
            b = clock() - t
            settled = _settle_other_threads()
            if i >= warmup:
                spin_ratios.append(a / b)
                spin_times.append(b)
                spin_settle.append(settled)
    med = statistics.median

    def ratio(a: str, b: str) -> float | None:
        return median_ratio(times, a, b)

    result = {
        "model": name,
        "xrelay_ms": med(times["xrelay"]) * 1000,
        "ort_ms": med(times["ort"]) * 1000,
        "ratio": ratio("xrelay", "ort"),
        "ort_spin_ms": med(spin_times) * 1000,
        "ratio_spin": med(spin_ratios),
        "spin_settle_ms": med(spin_settle) * 1000,
        "ov_ms": med(times["ov"]) * 1000 if "ov" in times else None,
        "ratio_ov": ratio("xrelay", "ov"),
        "bf16_ms": med(times["bf16"]) * 1000 if "bf16" in times else None,
        "ratio_bf16": ratio("bf16", "ort"),
        "ov_bf16_ms": med(times["ov_bf16"]) * 1000 if "ov_bf16" in times else None,
        "ratio_ov_bf16": ratio("ov_bf16", "ort"),
        "accuracy": accuracy,
        "target": TARGETS[name],
        "arena_bytes": m.arena_bytes,
        "plan_arena_bytes": sum(
            op.size.value.data for op in m.program.ops if op.name == "memory.pool"
        ),
        "max_abs_err_vs_ort": err,
        "max_rel_err_vs_ort": rel,
        "build_s": build_s,
        "threads": m.executor.threads,
        "backends": dict(collections.Counter(m.executor.step_backends)),
    }
    if profile:
        result["profile"] = m.profile(runs=3)
        if mbf is not None:
            result["profile_bf16"] = mbf.profile(runs=3)
    return result


def measure_rss(name: str, plan: str, backends=None) -> dict:
    model = _model(name)
    inputs = _inputs(name, model)
    m = _build(name, model, plan, backends=backends)
    with scratch_dir("xrelay-bench-runtime-") as tmp:
        onnx_path = os.path.join(tmp, "model.onnx")
        with open(onnx_path, "wb") as f:
            f.write(model.SerializeToString())
        paths = [os.path.join(tmp, n) for n in ("graph.json", "lib.mlir", "params.npz")]
        m.export(*paths)
        del m, model
        out = {}
        runtimes = [("ort", [onnx_path]), ("xrelay", paths)]
        if _has_openvino():
            runtimes.append(("ov", [onnx_path]))
        for runtime, args in runtimes:
            out[runtime] = peak_rss(runtime, args, inputs, tmp)
    return {"model": name, **{f"{k}_rss_mb": v / 2**20 for k, v in out.items()}}


def measure_layouts(
    name: str, plan: str, pairs: int, warmup: int, threads: int | None = None, backends=None
) -> dict:
    """The model as imported (NCHW) against the same model after ConvertLayout to NHWC/HWIO
    (pools too) and after TVM's x86 AlterOpLayout (blocked NCHW{c}c), all built at -O3 with
    ``backends`` (None: the build's default) and run in turn in one process; ratios are
    medians of the per-round ratios to NCHW."""
    import xrelay
    from xrelay.frontends.onnx import from_onnx
    from xrelay.relay import transform
    from xrelay.relay.build_module import bind_params_by_name

    model = _model(name)
    inputs = _inputs(name, model)
    mod, params = from_onnx(model)
    nhwc, _ = from_onnx(model)
    desired = {k: ["NHWC", "default"] if k == "nn.conv2d" else ["NHWC"] for k in (
        "nn.conv2d", "nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d"
    )}
    with transform.PassContext(opt_level=3):
        nhwc = transform.Sequential([transform.ConvertLayout(desired)])(nhwc)
    # TVM's x86 rule where Relay's build runs it (the build itself leaves it out)
    blocked, _ = from_onnx(model)
    blocked["main"] = bind_params_by_name(blocked["main"], params)
    with transform.PassContext(opt_level=3):
        blocked = transform.Sequential([
            transform.SimplifyInference(), transform.FoldConstant(), transform.FoldScaleAxis(),
            transform.CanonicalizeOps(), transform.AlterOpLayout(), transform.FoldConstant(),
        ])(blocked)  # fmt: skip
    runtimes = [xrelay.build(m, p, opt_level=3, plan=plan, threads=threads, backends=backends) for m, p in (
        (mod, params), (nhwc, params), (blocked, {})
    )]  # fmt: skip
    for m in runtimes:
        m.set_input(**inputs)
        m.run()
    err = max(float(np.max(np.abs(runtimes[0].get_output(0) - m.get_output(0)))) for m in runtimes[1:])
    times: list[list[float]] = [[], [], []]
    for i in range(warmup + pairs):
        for k, m in enumerate(runtimes):
            t = time.perf_counter()
            m.run()
            if i >= warmup:
                times[k].append(time.perf_counter() - t)
    return {
        "model": name,
        "nchw_ms": statistics.median(times[0]) * 1000,
        "nhwc_ms": statistics.median(times[1]) * 1000,
        "blocked_ms": statistics.median(times[2]) * 1000,
        "ratio": statistics.median([b / a for a, b in zip(times[0], times[1])]),
        "blocked_ratio": statistics.median([b / a for a, b in zip(times[0], times[2])]),
        "max_abs_diff": err,
        "backends": [dict(collections.Counter(m.executor.step_backends)) for m in runtimes],
    }


def measure_winograd(name: str, plan: str, pairs: int, warmup: int, threads: int | None = None) -> dict:
    """The three ``XRELAY_DNNL_WINOGRAD`` rules, alternating: ``never`` (every convolution
    direct on oneDNN), ``f4`` (3x3 stride-1 convolutions with outputs of at least 28x28 on the
    native Winograd F(4x4, 3x3) kernel) and ``dnnl``, the default (3x3 stride-1 ones with
    outputs from 14x14 as Winograd F(4x4, 3x3) on the oneDNN backend); medians of the
    per-round ratios to ``never``."""
    model = _model(name)
    inputs = _inputs(name, model)
    builds = {}
    before = os.environ.get("XRELAY_DNNL_WINOGRAD")
    try:
        for mode in ("never", "f4", "dnnl"):
            os.environ["XRELAY_DNNL_WINOGRAD"] = mode
            builds[mode] = _build(name, model, plan, threads)
    finally:
        if before is None:
            os.environ.pop("XRELAY_DNNL_WINOGRAD", None)
        else:
            os.environ["XRELAY_DNNL_WINOGRAD"] = before
    times: dict[str, list[float]] = {k: [] for k in builds}
    for m in builds.values():
        m.set_input(**inputs)
        m.run()
    for i in range(warmup + pairs):
        for k, m in builds.items():
            t = time.perf_counter()
            m.run()
            if i >= warmup:
                times[k].append(time.perf_counter() - t)
    return {
        "model": name,
        **{f"{k}_ms": statistics.median(v) * 1000 for k, v in times.items()},
        **{f"{k}_ratio": statistics.median([b / a for a, b in zip(times["never"], times[k])]) for k in ("f4", "dnnl")},
        "native_steps": builds["f4"].executor.step_backends.count("native"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--plan", default="greedy-by-size")
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--no-rss", action="store_true", help="skip the peak-RSS processes")
    parser.add_argument("--profile", action="store_true", help="print xrelay's op profile")
    parser.add_argument("--threads", type=int, default=None, help="xrelay's threads")
    parser.add_argument(
        "--busy-core", action="store_true", help="keep one core busy during the latency pairs"
    )
    parser.add_argument(
        "--no-layouts", action="store_true", help="skip ResNet-18 NCHW against NHWC (convert-layout)"
    )
    parser.add_argument(
        "--backends", default=None, help="xrelay's backends, e.g. native or dnnl,native (default: build's)"
    )
    parser.add_argument(
        "--winograd", action="store_true",
        help="also time the ResNets with each XRELAY_DNNL_WINOGRAD rule (never, f4, dnnl: the default)",
    )
    parser.add_argument(
        "--no-bf16", action="store_true", help="skip the bfloat16 build and OpenVINO's default precision"
    )
    parser.add_argument("--int8", action="store_true", help="the int8 table (benchmarks/quantized.py)")
    parser.add_argument("--inputs", type=int, default=100, help="--int8: inputs for the agreement")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.int8:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import quantized

        quantized.report([m for m in args.models if m in quantized.MODELS], args.inputs, pairs=max(args.pairs, 1))
        return 0
    if args.child:  # the peak-RSS child as earlier versions ran it
        runtime, inputs_path, *paths = args.child
        child(runtime, paths, inputs_path)
        return 0
    from tabulate import tabulate

    backends = tuple(args.backends.split(",")) if args.backends else None
    rows, bf_rows = [], []
    for name in args.models:
        r = measure_latency(
            name,
            args.plan,
            max(args.pairs, 1),
            args.warmup,
            args.profile,
            args.threads,
            args.busy_core,
            backends,
            bf16=not args.no_bf16,
        )
        rss = None if args.no_rss else measure_rss(name, args.plan, backends)
        target = r["target"]
        verdict = "" if target is None else ("ok" if r["ratio"] <= target else "MISS")
        if r["ratio_ov"] is not None and r["ratio_ov"] > 1.0:
            verdict += " (slower than OpenVINO)"
        rows.append(
            [
                name,
                f"{r['xrelay_ms']:.2f}",
                f"{r['ort_ms']:.2f}",
                f"{r['ratio']:.3f}",
                f"{r['ort_spin_ms']:.2f}",
                f"{r['ratio_spin']:.3f}",
                f"{r['spin_settle_ms']:.0f}",
                "-" if r["ov_ms"] is None else f"{r['ov_ms']:.2f}",
                "-" if r["ratio_ov"] is None else f"{r['ratio_ov']:.3f}",
                "-" if target is None else f"<= {target}",
                verdict,
                "-" if rss is None else f"{rss['xrelay_rss_mb']:.0f}",
                "-" if rss is None else f"{rss['ort_rss_mb']:.0f}",
                "-" if rss is None or "ov_rss_mb" not in rss else f"{rss['ov_rss_mb']:.0f}",
                f"{r['arena_bytes'] / 2**20:.2f}",
                "yes" if r["arena_bytes"] == r["plan_arena_bytes"] else "NO",
                f"{r['max_rel_err_vs_ort']:.1e}",
                " ".join(f"{k} {v}" for k, v in sorted(r["backends"].items())),
            ]
        )
        if r["bf16_ms"] is not None:
            bt = BF16_TARGETS.get(name)
            acc = r["accuracy"]
            bf_rows.append(
                [
                    name,
                    f"{r['bf16_ms']:.2f}",
                    f"{r['ratio_bf16']:.3f}",
                    "-" if bt is None else f"<= {bt}",
                    "" if bt is None else ("ok" if r["ratio_bf16"] <= bt else "MISS"),
                    "-" if r["ov_bf16_ms"] is None else f"{r['ov_bf16_ms']:.2f}",
                    "-" if r["ratio_ov_bf16"] is None else f"{r['ratio_ov_bf16']:.3f}",
                    "{:.2g} / {:.1e}".format(*acc["bf16"]),
                    "-" if "ov_bf16" not in acc else "{:.2g} / {:.1e}".format(*acc["ov_bf16"]),
                ]
            )
        if args.profile:
            print(f"== {name}\n{r['profile']}\n", flush=True)
            if "profile_bf16" in r:
                print(f"== {name}, bfloat16\n{r['profile_bf16']}\n", flush=True)
    print(
        tabulate(
            rows,
            headers=[
                "model",
                "xrelay ms",
                "ort ms",
                "/ ort",
                "ort spin ms",
                "/ ort spin",
                "spin settle ms",
                "OpenVINO ms",
                "/ OpenVINO",
                "target",
                "",
                "xrelay RSS MB",
                "ort RSS MB",
                "OpenVINO RSS MB",
                "arena MiB",
                "arena = plan",
                "max rel err",
                "steps by backend",
            ],
        )
    )
    if bf_rows:
        print()
        print(
            tabulate(
                bf_rows,
                headers=["model", "xrelay bf16 ms", "/ ort f32", "target", "", "OpenVINO default ms",
                         "/ ort f32", "xrelay bf16 err vs f32 (abs / rel)",
                         "OpenVINO default err vs f32 (abs / rel)"],
            )  # fmt: skip
        )
    if args.winograd:
        wr = [measure_winograd(n, args.plan, max(args.pairs, 1), args.warmup, args.threads)
              for n in args.models if n.startswith("resnet")]  # fmt: skip
        print()
        print(
            tabulate(
                [[w["model"], f"{w['never_ms']:.2f}", f"{w['f4_ms']:.2f}", f"{w['dnnl_ms']:.2f}",
                  f"{w['f4_ratio']:.3f}", f"{w['dnnl_ratio']:.3f}", w["native_steps"]] for w in wr],
                headers=["model", "direct ms (never)", "native Winograd ms (f4)", "oneDNN Winograd ms (dnnl, default)",
                         "f4 / never", "dnnl / never", "native steps (f4)"],
            )  # fmt: skip
        )
    if "resnet18" in args.models and not args.no_layouts:
        # with the build's backends (oneDNN takes NCHW and NHWC programs alike: its partition
        # converts to channels last) and with the native kernels alone
        layout_rows = []
        for label, bk in (("default", backends), ("native", ("native",))):
            if label == "default" and backends == ("native",):
                continue
            lr = measure_layouts("resnet18", args.plan, max(args.pairs, 1), args.warmup, args.threads, bk)
            steps = [" ".join(f"{k} {v}" for k, v in sorted(b.items())) for b in lr["backends"]]
            layout_rows.append([
                lr["model"], label if bk is None else ",".join(bk), f"{lr['nchw_ms']:.2f}",
                f"{lr['nhwc_ms']:.2f}", f"{lr['ratio']:.3f}", f"{lr['blocked_ms']:.2f}",
                f"{lr['blocked_ratio']:.3f}", f"{lr['max_abs_diff']:.1e}", " / ".join(steps),
            ])  # fmt: skip
        print(
            tabulate(
                layout_rows,
                headers=["model", "backends", "NCHW ms", "NHWC ms (convert-layout)", "ratio NHWC/NCHW",
                         "NCHW{c}c ms (x86 alter-op-layout)", "ratio NCHW{c}c/NCHW", "max |diff|",
                         "steps by backend (NCHW / NHWC / NCHW{c}c)"],
            )
        )  # fmt: skip
    from xrelay.runtime.native.fast_kernels import winograd_enabled

    print(
        f"plan {args.plan}, {args.pairs} A/B pairs after {args.warmup} warm-up pairs, xrelay "
        f"threads {r['threads']}, onnxruntime threads 2, Winograd "
        + ("on" if winograd_enabled() else "off (XRELAY_WINOGRAD=0)")
        + (", one core kept busy by another process" if args.busy_core else "")
        + f"; OpenVINO {'f32 (and its default precision beside bf16), 2 threads, 1 stream' if _has_openvino() else 'not installed (pip install -e .[bench])'}"
        + f"; load average {os.getloadavg()[0]:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
