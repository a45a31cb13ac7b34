"""The arena executor against onnxruntime: latency ratio and peak RSS, same models, same run.

    python benchmarks/runtime.py                       # ResNet-18, ResNet-50, MobileNetV2, BERT
    python benchmarks/runtime.py --models resnet18 --pairs 30 --plan storage-ids

Every model is built as an ONNX graph (``xrelay.testing.onnx_models``), imported into xrelay
and built with ``xrelay.build`` (-O3, fused, lowered, planned); the same ONNX runs in
onnxruntime. Batch 1, float32, 2 threads each (``intra_op_num_threads = 2``; xrelay's own
worker pool of 2, with BLAS held to one thread per call inside ``run``).

**Latency.** The machine is noisy, so both sessions live in this one process and run
alternately (A B A B ...) after a warm-up; the result is the median over at least ``--pairs``
pairs of the per-pair ratio xrelay / onnxruntime, with each runtime's median time.

**Peak RSS.** Measured in separate processes, one per runtime: the xrelay process loads the
exported ``(graph.json, lib.mlir, params.npz)`` (``xrelay.runtime.load``) as a deployed model
would, the onnxruntime one the ``.onnx`` file; each runs the model 3 times and reports
``ru_maxrss``. The activation arena of the module is checked to be the plan's arena size.

``--profile`` prints xrelay's per-op-family profile (matmul, im2col, elementwise, ...) per
model, which is what limits a model that misses its target.

**Busy core.** ``--busy-core`` keeps one core busy with a spinning process (``while True:
pass``) during the latency pairs: how both runtimes degrade when another program takes a
core (OpenBLAS's own threads collapse then, which is why the executor runs its own).
``--threads`` sets xrelay's thread count (default: ``TVM_NUM_THREADS`` or the cores).

**Layouts.** With ResNet-18 among the models, the script also runs it as imported (NCHW)
against the same model after ``ConvertLayout`` to NHWC/HWIO, alternately, and prints both
times and the median per-pair ratio (``--no-layouts`` skips it).
"""

from __future__ import annotations

import os

# BLAS threads are fixed before numpy loads (a benchmark setting, not a library default).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")
os.environ.setdefault("OMP_NUM_THREADS", "2")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

MODELS = {
    "resnet18": ("resnet18", {}),
    "resnet50": ("resnet50", {}),
    "mobilenet_v2": ("mobilenet_v2", {}),
    "bert_layer": ("bert_layer", {}),
}
SPIN = os.environ.get("XRELAY_BENCH_ORT_SPIN", "0") == "1"
TARGETS = {"resnet18": 1.0, "resnet50": 1.15, "mobilenet_v2": 2.0, "bert_layer": None}


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


def _ort_session(model_bytes: bytes):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    if not SPIN:
        # Spinning pool threads would steal the cores from the BLAS threads of the other
        # runtime that runs right after in the A/B alternation.
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])


def _build(name: str, model, plan: str, threads: int | None = None):
    import xrelay
    from xrelay.frontends.onnx import from_onnx

    mod, params = from_onnx(model)
    return xrelay.build(mod, params, opt_level=3, plan=plan, threads=threads)


class BusyCore:
    """A process spinning on one core while the block runs."""

    def __enter__(self) -> BusyCore:
        self.proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        time.sleep(0.2)  # let it get scheduled
        return self

    def __exit__(self, *exc) -> None:
        self.proc.kill()
        self.proc.wait()


def measure_latency(
    name: str,
    plan: str,
    pairs: int,
    warmup: int,
    profile: bool,
    threads: int | None = None,
    busy_core: bool = False,
) -> dict:
    model = _model(name)
    inputs = _inputs(name, model)
    t0 = time.perf_counter()
    m = _build(name, model, plan, threads)
    build_s = time.perf_counter() - t0
    sess = _ort_session(model.SerializeToString())
    m.set_input(**inputs)
    m.run()
    (expect, *_) = sess.run(None, inputs)
    err = float(np.max(np.abs(m.get_output(0) - expect)))
    xs, os_, ratios = [], [], []
    with BusyCore() if busy_core else contextlib.nullcontext():
        for _ in range(warmup):
            m.run()
            sess.run(None, inputs)
        for _ in range(pairs):
            t = time.perf_counter()
            m.run()
            a = time.perf_counter() - t
            t = time.perf_counter()
            sess.run(None, inputs)
            b = time.perf_counter() - t
            xs.append(a)
            os_.append(b)
            ratios.append(a / b)
    result = {
        "model": name,
        "xrelay_ms": statistics.median(xs) * 1000,
        "ort_ms": statistics.median(os_) * 1000,
        "ratio": statistics.median(ratios),
        "target": TARGETS[name],
        "arena_bytes": m.arena_bytes,
        "plan_arena_bytes": sum(
            op.size.value.data for op in m.program.ops if op.name == "memory.pool"
        ),
        "max_abs_err_vs_ort": err,
        "build_s": build_s,
        "threads": m.executor.threads,
    }
    if profile:
        result["profile"] = m.profile(runs=3)
    return result


def _child(runtime: str, paths: list[str], inputs_path: str) -> None:
    """Run in a fresh process: load the model, run it 3 times, print peak RSS (bytes)."""
    import resource  # noqa: F401  (fallback where /proc is missing)

    data = np.load(inputs_path)
    inputs = {k: data[k] for k in data.files}
    if runtime == "ort":
        with open(paths[0], "rb") as f:
            sess = _ort_session(f.read())
        for _ in range(3):
            sess.run(None, inputs)
    else:
        import xrelay.runtime

        m = xrelay.runtime.load(*paths)
        m.set_input(**inputs)
        for _ in range(3):
            m.run()
    # VmHWM starts afresh at exec; ru_maxrss would carry the parent's peak across fork+exec.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                peak = int(line.split()[1]) * 1024
    print(json.dumps({"maxrss": peak}))


def measure_rss(name: str, plan: str) -> dict:
    model = _model(name)
    inputs = _inputs(name, model)
    m = _build(name, model, plan)
    with tempfile.TemporaryDirectory() as tmp:
        onnx_path = os.path.join(tmp, "model.onnx")
        with open(onnx_path, "wb") as f:
            f.write(model.SerializeToString())
        paths = [os.path.join(tmp, n) for n in ("graph.json", "lib.mlir", "params.npz")]
        m.export(*paths)
        inputs_path = os.path.join(tmp, "inputs.npz")
        np.savez(inputs_path, **inputs)
        del m, model
        out = {}
        for runtime, args in (("ort", [onnx_path]), ("xrelay", paths)):
            proc = subprocess.run(
                [sys.executable, __file__, "--child", runtime, inputs_path, *args],
                capture_output=True,
                text=True,
                check=True,
            )
            out[runtime] = json.loads(proc.stdout.strip().splitlines()[-1])["maxrss"]
    return {"model": name, "xrelay_rss_mb": out["xrelay"] / 2**20, "ort_rss_mb": out["ort"] / 2**20}


def measure_layouts(name: str, plan: str, pairs: int, warmup: int, threads: int | None = None) -> dict:
    """The model as imported (NCHW) against the same model after ConvertLayout to NHWC/HWIO
    (pools too), both built at -O3 and run alternately in one process."""
    import xrelay
    from xrelay.frontends.onnx import from_onnx
    from xrelay.relay import transform

    model = _model(name)
    inputs = _inputs(name, model)
    mod, params = from_onnx(model)
    nhwc, _ = from_onnx(model)
    desired = {k: ["NHWC", "default"] if k == "nn.conv2d" else ["NHWC"] for k in (
        "nn.conv2d", "nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d"
    )}
    with transform.PassContext(opt_level=3):
        nhwc = transform.Sequential([transform.ConvertLayout(desired)])(nhwc)
    runtimes = [xrelay.build(m, params, opt_level=3, plan=plan, threads=threads) for m in (mod, nhwc)]
    for m in runtimes:
        m.set_input(**inputs)
        m.run()
    err = float(np.max(np.abs(runtimes[0].get_output(0) - runtimes[1].get_output(0))))
    times: list[list[float]] = [[], []]
    for i in range(warmup + pairs):
        for k, m in enumerate(runtimes):
            t = time.perf_counter()
            m.run()
            if i >= warmup:
                times[k].append(time.perf_counter() - t)
    ratios = [b / a for a, b in zip(*times)]
    return {
        "model": name,
        "nchw_ms": statistics.median(times[0]) * 1000,
        "nhwc_ms": statistics.median(times[1]) * 1000,
        "ratio": statistics.median(ratios),
        "max_abs_diff": err,
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
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        runtime, inputs_path, *paths = args.child
        _child(runtime, paths, inputs_path)
        return 0
    from tabulate import tabulate

    rows = []
    for name in args.models:
        r = measure_latency(
            name,
            args.plan,
            max(args.pairs, 1),
            args.warmup,
            args.profile,
            args.threads,
            args.busy_core,
        )
        rss = None if args.no_rss else measure_rss(name, args.plan)
        target = r["target"]
        verdict = "" if target is None else ("ok" if r["ratio"] <= target else "MISS")
        rows.append(
            [
                name,
                f"{r['xrelay_ms']:.2f}",
                f"{r['ort_ms']:.2f}",
                f"{r['ratio']:.3f}",
                "-" if target is None else f"<= {target}",
                verdict,
                "-" if rss is None else f"{rss['xrelay_rss_mb']:.0f}",
                "-" if rss is None else f"{rss['ort_rss_mb']:.0f}",
                f"{r['arena_bytes'] / 2**20:.2f}",
                "yes" if r["arena_bytes"] == r["plan_arena_bytes"] else "NO",
                f"{r['max_abs_err_vs_ort']:.1e}",
            ]
        )
        if args.profile:
            print(f"== {name}\n{r['profile']}\n", flush=True)
    print(
        tabulate(
            rows,
            headers=[
                "model",
                "xrelay ms",
                "ort ms",
                "ratio (median of pairs)",
                "target",
                "",
                "xrelay RSS MB",
                "ort RSS MB",
                "arena MiB",
                "arena = plan",
                "max |err|",
            ],
        )
    )
    if "resnet18" in args.models and not args.no_layouts:
        lr = measure_layouts("resnet18", args.plan, max(args.pairs, 1), args.warmup, args.threads)
        print(
            tabulate(
                [[lr["model"], f"{lr['nchw_ms']:.2f}", f"{lr['nhwc_ms']:.2f}", f"{lr['ratio']:.3f}",
                  f"{lr['max_abs_diff']:.1e}"]],
                headers=["model", "NCHW ms", "NHWC ms (convert-layout)", "ratio NHWC/NCHW", "max |diff|"],
            )
        )
    from xrelay.runtime.fast_kernels import winograd_enabled

    print(
        f"plan {args.plan}, {args.pairs} A/B pairs after {args.warmup} warm-up pairs, xrelay "
        f"threads {r['threads']}, onnxruntime threads 2, Winograd "
        + ("on" if winograd_enabled() else "off (XRELAY_WINOGRAD=0)")
        + (", one core kept busy by another process" if args.busy_core else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
