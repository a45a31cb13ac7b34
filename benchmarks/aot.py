"""The C target's program against the arena runtime and onnxruntime, and its memory against the plan.

    python benchmarks/aot.py                      # MLP, MobileNetV2, ResNet-18
    python benchmarks/aot.py --models mlp --pairs 30
    python benchmarks/aot.py --threads 1             # against one-thread runtimes
    python benchmarks/aot.py --int8 --threads 1      # int8 ResNet-18 and MobileNetV2
    python benchmarks/aot.py --int8 --per-channel --threads 1   # their per-channel quantization

Each model (``xrelay.testing``: Relay's MLP, MobileNetV2 and ResNet-18 workloads, batch 1,
float32) is built three ways in this one process:

* **C (AOT)**: ``xrelay.build(mod, params, target="c")``; the whole emitted program compiled by
  the system compiler (``-std=c99 -O3 -march=native -ffp-contract=fast``: ``CModule``'s flags
  for the machine it runs on) and run single-threaded through its
  ``model_run`` entry in its own static arenas (``CModule.run_aot``);
* **C (steps)**: the same module's ``run()``: the arena executor calling each step's C
  function (what ``profile()`` and ``debug_get_output`` see);
* **arena runtime**: ``xrelay.build(mod, params)`` (its default backends: oneDNN where it
  loads, else the numpy/BLAS/C kernels; 2 threads);
* **onnxruntime**: the workload's ONNX twin from ``xrelay.testing.onnx_models`` (the same
  network; ResNet-18 with the same weights), ``peers.ort_session`` with ``--threads``
  intra-op threads, spinning off; MobileNetV2 has no twin there and is skipped.

Latency: runs alternate back to back after a warm-up (``peers.alternate``: the rounds go
through every order of the runtimes); each runtime's median over ``--pairs`` rounds and the
median of the per-round ratios of the C program to the others are printed. Memory: the C program's static pools must equal
the plan's arena, byte for byte (checked), and the summary prints RAM per pool and ROM for
weights and code (``.text`` of ``model.c`` compiled with ``cc -O2``).

``--int8`` takes onnxruntime's per-tensor int8 quantization of ``xrelay.testing.onnx_models``'
ResNet-18 and MobileNetV2 instead (``quantized_models``: ``quantize_static``, QDQ, random
calibration; ``--per-channel``: the weights quantized per output channel), imported with
``fake-quantization-to-integer{onnxruntime=true}`` as ``benchmarks/quantized.py`` does, and times the C program against the arena runtime's int8
build (same process, alternating rounds); the outputs must be equal bit for bit.

The C program is portable C99 (channel-blocked register tiles for float convolutions, direct
loops elsewhere, one thread, no BLAS), so it is expected to be slower than the tuned runtimes;
what it guarantees is the memory: exactly the planned bytes, no allocation.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

import numpy as np

import xrelay
from xrelay.backend.build import build_c
from xrelay.runtime.files import scratch_dir
from xrelay.testing import mlp, mobilenet, resnet
from xrelay.tools.relay_build import code_bytes

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import alternate, median_ratio, ort_session  # noqa: E402  (benchmarks/peers.py)

MODELS = {
    "mlp": (mlp, {}, (1, 1, 28, 28)),
    "mobilenet": (mobilenet, {}, None),
    "resnet18": (resnet, {"num_layers": 18}, None),
}


def _onnx_session(name: str, params, threads: int = 2):
    """onnxruntime on the workload's ONNX twin (the same network and weights), or None."""
    from xrelay.testing import onnx_models

    if name == "resnet18":
        model = onnx_models.relay_resnet_v2(18, params=params)
    elif name == "mlp":
        model = onnx_models.mlp()
    else:
        return None  # no ONNX twin of Relay's MobileNet here
    sess = ort_session(model.SerializeToString(), threads=threads)
    feed_name = sess.get_inputs()[0].name
    shape = [d if isinstance(d, int) else 1 for d in sess.get_inputs()[0].shape]
    x = np.random.default_rng(0).standard_normal(shape).astype("float32")
    return lambda: sess.run(None, {feed_name: x})


def run_model(name: str, pairs: int, warmup: int, threads: int = 2) -> dict:
    workload, kw, _ = MODELS[name]
    mod, params = workload.get_workload(batch_size=1, **kw)
    lib = build_c(mod, params, constants="blob")
    shape = lib.c_program.inputs[0][1].get_shape()
    x = np.random.default_rng(0).standard_normal(shape).astype("float32")
    arena = xrelay.build(mod, params, threads=threads)
    arena.set_input("data", x)
    lib.set_input("data", x)
    lib.run()
    arena.run()
    np.testing.assert_allclose(lib.get_output(0), arena.get_output(0).numpy()
                               if hasattr(arena.get_output(0), "numpy") else arena.get_output(0),
                               rtol=1e-3, atol=1e-5)  # fmt: skip
    plan = lib.plan_info[2]
    assert lib.summary.pools == dict(plan.pool_sizes), (lib.summary.pools, plan.pool_sizes)
    with scratch_dir("xrelay-bench-aot-") as tmp:
        lib.export(tmp)
        lib.summary.code = code_bytes(Path(tmp), lib.c_program.name)
    ort_run = _onnx_session(name, params, threads)
    lib.run_aot()
    np.testing.assert_allclose(lib.get_output(0), arena.get_output(0), rtol=1e-3, atol=1e-5)
    runners = {"c": lib.run_aot, "c-steps": lib.run, "arena": arena.run}
    if ort_run is not None:
        runners["onnxruntime"] = ort_run
    times = alternate(runners, pairs, warmup)
    result = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    ratios = {k: median_ratio(times, "c", k) for k in runners if k != "c"}
    return {"ms": result, "c_over": ratios, "summary": lib.summary, "plan": plan.total_size}


INT8_MODELS = ("resnet18", "mobilenet_v2")


def run_int8(name: str, pairs: int, warmup: int, threads: int, per_channel: bool = False) -> dict:
    """C (AOT) against the arena runtime on an onnxruntime-quantized int8 model; same bits."""
    from xrelay.frontends.onnx import from_onnx
    from xrelay.testing import onnx_models as om
    from xrelay.testing import quantized_models as qm
    from xrelay.transforms.fake_quantization_to_integer import FakeQuantizationToIntegerPass

    f32 = getattr(om, name)()
    q = qm.quantize(f32, qm.calibration_inputs(f32, 4), per_channel=per_channel)

    def imported():
        mod, params = from_onnx(q, freeze_params=True)
        FakeQuantizationToIntegerPass(onnxruntime=True).apply(None, mod.module)
        return mod, params

    lib = build_c(*imported(), constants="blob")
    arena = xrelay.build(*imported(), opt_level=3, plan="greedy-by-size", threads=threads)
    for k, v in qm.calibration_inputs(f32, 1, seed=1000)[0].items():
        lib.set_input(k.replace(":", "_"), v)
        arena.set_input(k.replace(":", "_"), v)
    lib.run_aot()
    arena.run()
    np.testing.assert_array_equal(lib.get_output(0), arena.get_output(0).numpy())
    runners = {"c": lib.run_aot, "arena": arena.run}
    times = alternate(runners, pairs, warmup)
    ratio = median_ratio(times, "c", "arena")
    return {"ms": {k: statistics.median(v) * 1e3 for k, v in times.items()}, "ratio": ratio,
            "ram": lib.summary.ram, "arena_bytes": arena.arena_bytes}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2,
                    help="threads of the arena runtime and onnxruntime (the C program has one)")  # fmt: skip
    ap.add_argument("--int8", action="store_true", help="onnxruntime-quantized ResNet-18 and MobileNetV2")
    ap.add_argument("--per-channel", action="store_true", help="--int8: weights quantized per output channel")
    args = ap.parse_args(argv)
    if args.int8:
        print(f"load before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        print("| model (int8) | weights | C ms | arena ms | C / arena | C RAM | arena plan |")
        print("|---|---|---|---|---|---|---|")
        weights = "per-channel" if args.per_channel else "per-tensor"
        names = INT8_MODELS if args.models == ",".join(MODELS) else args.models.split(",")
        for name in names:
            r = run_int8(name, args.pairs, args.warmup, args.threads, args.per_channel)
            print(f"| {name} | {weights} | {r['ms']['c']:.2f} | {r['ms']['arena']:.2f} | {r['ratio']:.2f}x | "
                  f"{r['ram']:,} | {r['arena_bytes']:,} |", flush=True)  # fmt: skip
        print(f"load after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        return 0
    print("| model | C ms | C steps ms | arena ms | onnxruntime ms | C / C steps | C / arena "
          "| C / onnxruntime | RAM (plan) | ROM weights | ROM code |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        r = run_model(name, args.pairs, args.warmup, args.threads)
        ms, over, s = r["ms"], r["c_over"], r["summary"]
        ort_ms = f"{ms['onnxruntime']:.2f}" if "onnxruntime" in ms else "-"
        ort_ratio = f"{over['onnxruntime']:.2f}x" if "onnxruntime" in over else "-"
        print(f"| {name} | {ms['c']:.2f} | {ms['c-steps']:.2f} | {ms['arena']:.2f} | {ort_ms} | "
              f"{over['c-steps']:.2f}x | {over['arena']:.2f}x | {ort_ratio} | {s.ram:,} ({r['plan']:,}) | "
              f"{s.constants:,} | {s.code if s.code is not None else '-'} |", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
