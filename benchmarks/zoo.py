"""The real-model zoo against onnxruntime and OpenVINO: correctness, latency, memory.

    make zoo                                              # every model (creates .venv-extras)
    .venv-extras/bin/python benchmarks/zoo.py --models efficientnet_b0 gpt2 --profile
    .venv-extras/bin/python benchmarks/zoo.py --busy         # one competing busy process
    .venv-extras/bin/python benchmarks/zoo.py --json out.json --no-rss
    .venv-extras/bin/python benchmarks/zoo.py --more --no-rss   # zoo.EXTRA_MODELS instead

Every model of ``xrelay.testing.zoo`` (torchvision and Hugging Face architectures with random
weights, exported by torch's default ONNX exporter at opset 20 and cached outside the
repository, ``$XRELAY_ZOO_CACHE``) is imported with ``xrelay.frontends.onnx.from_onnx`` and
built with ``xrelay.build(..., opt_level=3)`` and the defaults, as a user would. For each:

* **correctness**: the largest difference of every output from onnxruntime's, relative to
  the largest magnitude of onnxruntime's output (``max rel err``); outputs must be finite;
* **latency**: xrelay, onnxruntime (2 intra-op threads, spinning off) and OpenVINO f32
  (2 threads, one stream) run in rounds, back to back, ``--pairs`` rounds (default 15) after
  ``--warmup`` rounds; each ratio is the median of the per-round ratios
  (``benchmarks/peers.py``: the method of ``benchmarks/runtime.py``);
* **memory**: the planned arena, and EVERY byte of activation memory outside it
  (``Executor.outside_arena``: temporaries the bound steps hold, plus the peak of what one
  run allocates, counted by numpy's allocation hook, ``runtime.allocations``); peak RSS
  of each runtime in a fresh process of its own that loads the model as deployed (xrelay: the
  exported ``graph.json, lib.mlir, params.npz``; the others: the ``.onnx`` file) and runs it
  3 times (``VmHWM``), so no runtime pays for another's libraries or for the build;
* ``--profile``: xrelay's time by op family (and the slowest steps) per model, beside
  onnxruntime's kernel time by the same families from its own profiler (``ort_family``:
  its node types, a convolution depthwise or not by its weight's shape);
* ``--busy``: one process spinning on a core beside both runtimes during the rounds;
  ``--busy-start SECONDS``: only during their first seconds (a load that passes); the runs
  of each of xrelay's programs (all threads, one thread: ``RunChooser``) are printed, and
  with ``XRELAY_CHOOSER_TRACE=1`` every run's program, time and why it was chosen;
* ``--scratch-priority``: the build's ``relay.ChooseScratch.priority`` (``speed``: every step
  its fastest way, whatever its scratch; see docs/guide/memory.md);
* ``--int8``: the quantized zoo (its CNNs and BERT-base, quantized by onnxruntime per-tensor
  and per-channel), through ``quantized.zoo_report(models, pairs, warmup, inputs)`` in
  ``benchmarks/quantized.py``: outputs equal to onnxruntime int8's over ``--inputs`` inputs,
  latency against onnxruntime int8, int8 arena against float.

The table ends with the geometric mean of each ratio column, and the load average is
printed before and after (the machine is shared: give it beside every figure), with each
core's speed of the moment relative to the fastest (``peers.core_speeds``: ``cores
1.00/0.51`` says the second core ran at half speed, given to someone else by the host).
"""

from __future__ import annotations

import os

# BLAS threads are fixed before numpy loads (a benchmark setting, not a library default).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")
os.environ.setdefault("OMP_NUM_THREADS", "2")

import argparse  # noqa: E402
import collections  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from peers import (  # noqa: E402  (benchmarks/peers.py)
    BusyCore,
    alternate,
    cores,
    has_openvino,
    load,
    median_ratio,
    ort_session,
    ov_request,
    peak_rss,
)

from xrelay.runtime.files import scratch_dir  # noqa: E402

MiB = 2**20


def _rel_error(outs: list[np.ndarray], refs: list[np.ndarray]) -> float:
    """Largest difference over all outputs relative to the largest reference magnitude."""
    worst = 0.0
    for out, ref in zip(outs, refs):
        out = np.asarray(out, np.float64)
        ref = np.asarray(ref, np.float64)
        if out.shape != ref.shape:
            raise RuntimeError(f"output shape {out.shape} differs from onnxruntime's {ref.shape}")
        if not np.all(np.isfinite(out)):
            return math.inf
        scale = max(float(np.max(np.abs(ref))), 1e-30)
        worst = max(worst, float(np.max(np.abs(out - ref))) / scale)
    return worst


def _profile(m, runs: int = 3, top: int = 8) -> dict:
    """Milliseconds per op family, and the slowest steps, averaged over ``runs`` runs."""
    ex = m.executor
    families: dict[str, float] = collections.defaultdict(float)
    steps: dict[int, list] = {}
    for _ in range(runs):
        profiled, fams = ex.profile()
        for k, v in fams.items():
            families[k] += v * 1000 / runs
        for s in profiled:
            row = steps.setdefault(s.index, [s.index, s.name, ex.step_backends[s.index], s.ops, 0.0])
            row[4] += s.seconds * 1000 / runs
    slowest = sorted(steps.values(), key=lambda r: -r[4])[:top]
    return {
        "families": {k: v for k, v in sorted(families.items(), key=lambda kv: -kv[1]) if v > 0},
        "slowest": slowest,
        "total_ms": sum(r[4] for r in steps.values()),
    }


ORT_FAMILIES = {
    "matmul": ("Gemm", "MatMul", "FusedMatMul", "FusedGemm", "MatMulInteger", "QLinearMatMul"),
    "pool": ("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "ReduceMean", "NhwcMaxPool"),
    "copy": ("ReorderInput", "ReorderOutput", "Transpose", "Reshape", "Concat", "Slice", "Split", "Gather",
             "Flatten", "Squeeze", "Unsqueeze", "Expand", "Identity", "Cast", "Pad"),
    "elementwise": ("Add", "Sub", "Mul", "Div", "Relu", "Clip", "Sigmoid", "Tanh", "Erf", "Gelu", "FastGelu",
                    "BiasGelu", "QuickGelu", "HardSigmoid", "HardSwish", "Sqrt", "Pow", "Exp", "Where", "Neg",
                    "Max", "Min", "LeakyRelu", "BiasAdd", "Sum"),
}  # fmt: skip
"""onnxruntime's node types (after its graph optimisations) by xrelay's profile families;
``Conv``/``FusedConv`` are ``depthwise`` or ``conv`` by their weight's shape, the rest
``other`` (softmax, layer norm, attention, ...)."""


def ort_family(op: str, shapes: list) -> str:
    """The family of an onnxruntime node of type ``op`` whose inputs have ``shapes``: a
    convolution whose weight ``(O, 1, kh, kw)`` has one input channel per group and as many
    outputs as the data has channels is depthwise."""
    if op in ("Conv", "FusedConv", "NhwcConv", "NhwcFusedConv"):
        data, weight = (shapes + [[], []])[:2]
        if len(weight) == 4 and len(data) == 4 and weight[1] == 1 and weight[0] == data[1] > 1:
            return "depthwise"
        return "conv"
    return next((fam for fam, ops in ORT_FAMILIES.items() if op in ops), "other")


def _ort_profile(model_bytes: bytes, feeds: dict, runs: int = 3) -> dict:
    """onnxruntime's kernel time by family (milliseconds per run, and nodes per family) from
    its profiler, over ``runs`` runs after one warm-up run. Its kernel times leave out its
    dispatch between nodes; xrelay's step times include each step's call."""
    from xrelay.runtime.files import scratch_dir

    with scratch_dir("xrelay-bench-ortprof-") as tmp:
        sess = ort_session(model_bytes, profile_prefix=os.path.join(tmp, "ort"))
        for _ in range(1 + runs):
            sess.run(None, feeds)
        with open(sess.end_profiling()) as f:
            events = json.load(f)
    return ort_families(events)


def ort_families(events: list[dict]) -> dict:
    """Milliseconds per run by family, and nodes per family, from onnxruntime's profiler
    trace (``Node`` events ``<node>_kernel_time``, microseconds): each node's mean over the
    runs it appears in."""
    per_node: dict[str, list] = {}  # node -> [family, total ms, runs seen]
    for e in events:
        if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
            continue
        a = e.get("args", {})
        shapes = [list(next(iter(d.values()))) for d in a.get("input_type_shape", []) if d]
        row = per_node.setdefault(e["name"], [ort_family(a.get("op_name", ""), shapes), 0.0, 0])
        row[1] += e["dur"] / 1000
        row[2] += 1
    families: dict[str, float] = collections.defaultdict(float)
    nodes: dict[str, int] = collections.defaultdict(int)
    for fam, ms, seen in per_node.values():
        families[fam] += ms / seen
        nodes[fam] += 1
    return {"families": dict(families), "nodes": dict(nodes)}


def measure(name: str, args: argparse.Namespace) -> dict:
    import onnx

    import xrelay
    from xrelay.frontends.onnx import from_onnx
    from xrelay.testing import zoo

    path = zoo.onnx_path(name)
    feeds = zoo.inputs(name)
    model = onnx.load(path)
    t0 = time.perf_counter()
    mod, params = from_onnx(model)
    backends = tuple(args.backends.split(",")) if args.backends else None
    with xrelay.transform.PassContext(config={"relay.ChooseScratch.priority": args.scratch_priority}):
        m = xrelay.build(mod, params, opt_level=3, threads=args.threads, backends=backends)
    build_s = time.perf_counter() - t0
    del mod, params
    model_bytes = model.SerializeToString()
    sess = ort_session(model_bytes)
    del model
    profiled_bytes = model_bytes if args.profile else None  # (onnxruntime's profile: a session of its own)
    del model_bytes
    ov = None if args.no_openvino else ov_request(path)
    m.set_input(**feeds)
    m.run()
    outs = [m.get_output(i).numpy() for i in range(m.get_num_outputs())]
    refs = sess.run(None, feeds)
    rel = _rel_error(outs, refs)
    outside = m.executor.outside_arena()
    peers = {"xrelay": m.run, "ort": lambda: sess.run(None, feeds)}
    if ov is not None:
        peers["ov"] = lambda: ov.infer(feeds)
    busy = BusyCore() if args.busy else BusyCore(args.busy_start) if args.busy_start else None
    with busy or contextlib.nullcontext():
        times = alternate(peers, args.pairs, args.warmup)
    chooser = m.executor.chooser
    med = statistics.median
    result = {
        "model": name,
        "max_rel_err": rel,
        "xrelay_ms": med(times["xrelay"]) * 1000,
        "ort_ms": med(times["ort"]) * 1000,
        "ratio_ort": median_ratio(times, "xrelay", "ort"),
        "ov_ms": med(times["ov"]) * 1000 if "ov" in times else None,
        "ratio_ov": median_ratio(times, "xrelay", "ov"),
        "ov_over_ort": median_ratio(times, "ov", "ort"),
        "arena_bytes": outside.arena_bytes,
        "outside_held_bytes": outside.held_bytes,
        "outside_run_peak": outside.run_peak,
        "outside_run_bytes": outside.run_bytes,
        "outside_steps": outside.steps,
        "build_s": build_s,
        "threads": m.executor.threads,
        "backends": dict(collections.Counter(m.executor.step_backends)),
        "chooser_runs": list(chooser.stats) if m.executor.threads > 1 else None,
        "parts_runs": list(m.executor.parts_choice.stats) if m.executor.parts_choice is not None else None,
        "chooser_trace": chooser.trace,
    }
    if args.profile:
        result["profile"] = _profile(m)
        result["profile"]["ort"] = _ort_profile(profiled_bytes, feeds)
    if not args.no_rss:
        with scratch_dir("xrelay-bench-zoo-") as tmp:
            paths = [os.path.join(tmp, n) for n in ("graph.json", "lib.mlir", "params.npz")]
            m.export(*paths)
            del m, sess, ov, peers
            result["xrelay_rss"] = peak_rss("xrelay", paths, feeds, tmp)
            result["ort_rss"] = peak_rss("ort", [path], feeds, tmp)
            if not args.no_openvino and has_openvino():
                result["ov_rss"] = peak_rss("ov", [path], feeds, tmp)
    return result


def _geomean(values: list[float | None]) -> str:
    vs = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    return f"{math.exp(sum(map(math.log, vs)) / len(vs)):.3f}" if vs else "-"


def _fmt(v: float | None, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def table(results: list[dict]) -> str:
    from tabulate import tabulate

    rows = []
    for r in results:
        outside = r["outside_held_bytes"] + r["outside_run_peak"]
        rows.append([
            r["model"], f"{r['max_rel_err']:.1e}", f"{r['xrelay_ms']:.2f}", f"{r['ort_ms']:.2f}",
            f"{r['ratio_ort']:.3f}", _fmt(r["ov_ms"], ".2f"), _fmt(r["ratio_ov"], ".3f"),
            _fmt(r["ov_over_ort"], ".3f"), f"{r['arena_bytes'] / MiB:.2f}",
            f"{outside / MiB:.3f}" if outside else "0",
            _fmt(r.get("xrelay_rss") and r["xrelay_rss"] / MiB, ".0f"),
            _fmt(r.get("ort_rss") and r["ort_rss"] / MiB, ".0f"),
            _fmt(r.get("ov_rss") and r["ov_rss"] / MiB, ".0f"),
            " ".join(f"{k} {v}" for k, v in sorted(r["backends"].items())),
        ])  # fmt: skip
    rows.append([
        "geometric mean", "", "", "", _geomean([r["ratio_ort"] for r in results]), "",
        _geomean([r["ratio_ov"] for r in results]), _geomean([r["ov_over_ort"] for r in results]),
        "", "", "", "", "", "",
    ])  # fmt: skip
    return tabulate(
        rows,
        headers=["model", "max rel err", "xrelay ms", "ort ms", "/ ort", "OpenVINO ms",
                 "/ OpenVINO", "OpenVINO / ort", "arena MiB", "outside arena MiB",
                 "xrelay RSS MB", "ort RSS MB", "OpenVINO RSS MB", "steps by backend"],
    )  # fmt: skip


def profile_text(r: dict) -> str:
    from tabulate import tabulate

    p = r["profile"]
    ort = p.get("ort") or {"families": {}, "nodes": {}}
    names = list(p["families"]) + [k for k in ort["families"] if k not in p["families"]]
    fams = tabulate(
        [[k, f"{p['families'].get(k, 0.0):.2f}", f"{100 * p['families'].get(k, 0.0) / max(p['total_ms'], 1e-12):.1f}",
          f"{ort['families'].get(k, 0.0):.2f}", ort["nodes"].get(k, 0)] for k in names],
        headers=["op family", "ms", "%", "onnxruntime ms", "its nodes"],
    )  # fmt: skip
    steps = tabulate(
        [[i, n, b, ops[:70], f"{ms:.2f}"] for i, n, b, ops, ms in p["slowest"]],
        headers=["step", "function", "backend", "ops", "ms"],
    )
    return f"== {r['model']} ({p['total_ms']:.2f} ms profiled)\n{fams}\n\n{steps}\n"


def main(argv: list[str] | None = None) -> int:
    from xrelay.testing import zoo

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    known = [*zoo.MODELS, *zoo.EXTRA_MODELS]
    parser.add_argument("--models", nargs="+", default=None, choices=known, metavar="NAME",
                        help=f"these models (default: the 19 of zoo.MODELS); any of: {', '.join(known)}")
    parser.add_argument("--more", action="store_true",
                        help=f"the {len(zoo.EXTRA_MODELS)} further architectures of zoo.EXTRA_MODELS instead "
                             "(more torchvision, Hugging Face from config objects, timm)")
    parser.add_argument("--pairs", type=int, default=15, help="timed rounds (default 15)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed rounds first (default 3)")
    parser.add_argument("--profile", action="store_true", help="xrelay's and onnxruntime's time by op family")
    parser.add_argument("--busy", action="store_true", help="one competing busy process")
    parser.add_argument(
        "--busy-start", type=float, default=None, metavar="SECONDS",
        help="one competing busy process for the rounds' first SECONDS only (a load that passes)",
    )  # fmt: skip
    parser.add_argument("--threads", type=int, default=None, help="xrelay's threads (default: its own)")
    parser.add_argument("--backends", default=None, help="xrelay's backends, e.g. native")
    parser.add_argument("--no-rss", action="store_true", help="skip the peak-RSS processes")
    parser.add_argument(
        "--scratch-priority", default="balanced", choices=("balanced", "speed", "memory"),
        help="choose-scratch's priority (default balanced, xrelay.build's; speed: every step its fastest way)",
    )  # fmt: skip
    parser.add_argument("--no-openvino", action="store_true", help="leave OpenVINO out")
    parser.add_argument("--int8", action="store_true", help="the quantized zoo (benchmarks/quantized.py)")
    parser.add_argument("--inputs", type=int, default=100, help="--int8: inputs compared (default 100)")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    if args.pairs < 1 or args.warmup < 0:
        parser.error("--pairs must be at least 1 and --warmup at least 0")
    if args.models is None:
        args.models = list(zoo.EXTRA_MODELS if args.more else zoo.MODELS)
    elif args.more:
        parser.error("--more and --models are exclusive")
    if args.int8:
        import quantized

        def profile(label, m):
            print(profile_text({"model": label, "profile": _profile(m)}), flush=True)

        quantized.zoo_report(
            args.models, pairs=args.pairs, warmup=args.warmup, inputs=args.inputs,
            profile=profile if args.profile else None,
        )  # fmt: skip
        return 0
    print(f"before: {load()}, {cores()}", flush=True)
    results = []
    for name in args.models:
        r = measure(name, args)
        results.append(r)
        outside = r["outside_held_bytes"] + r["outside_run_peak"]
        print(
            f"{name}: err {r['max_rel_err']:.1e}, {r['xrelay_ms']:.2f} ms, / ort {r['ratio_ort']:.3f}"
            f", / OpenVINO {_fmt(r['ratio_ov'], '.3f')}, arena {r['arena_bytes'] / MiB:.2f} MiB, "
            f"outside {outside} B, RSS MB xrelay/ort/OpenVINO "
            + "/".join(_fmt(r.get(k) and r[k] / MiB, ".0f") for k in ("xrelay_rss", "ort_rss", "ov_rss"))
            + f"; {load()}, {cores()}",
            flush=True,
        )
        if r["chooser_runs"]:
            parts = r.get("parts_runs")
            cut = f" (one thread: {parts[1]} in parts, {parts[0]} uncut)" if parts else ""
            print(f"  {name} runs (all threads / one thread): {r['chooser_runs'][0]} / {r['chooser_runs'][1]}{cut}", flush=True)
        if r["chooser_trace"]:  # XRELAY_CHOOSER_TRACE=1: run, program, ms, why chosen, idle
            print("  " + " ".join(
                f"{run}{'AO'[mode]}{s * 1000:.1f}{'' if settled else '~'}{'' if why == 'best' else '(' + why + ')'}"
                + ("" if idle is None else f"/{idle / s:.1f}")
                for run, mode, s, settled, why, idle in r["chooser_trace"]
            ), flush=True)  # fmt: skip
        if args.json:  # after every model: a long run that dies keeps what it measured
            with open(args.json + ".tmp", "w") as f:
                json.dump(results, f, indent=1, default=str)
            os.replace(args.json + ".tmp", args.json)
        if args.profile:
            print(profile_text(r), flush=True)
    print()
    print(table(results))
    print(
        f"\n{args.pairs} rounds after {args.warmup} warm-up rounds, medians of per-round ratios; "
        f"xrelay threads {results[0]['threads']}, onnxruntime 2 intra-op threads (spinning off), "
        + ("OpenVINO f32 2 threads 1 stream" if has_openvino() and not args.no_openvino else "no OpenVINO")
        + ("; one competing busy process" if args.busy else "")
        + f"; after: {load()}, {cores()}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
