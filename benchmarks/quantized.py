"""int8 models quantized by onnxruntime, in onnxruntime and in xrelay: accuracy, latency, arena.

    python benchmarks/quantized.py                        # ResNet-18, MobileNetV2, BERT layer
    python benchmarks/quantized.py --models resnet18 --inputs 100 --pairs 20
    python benchmarks/runtime.py --int8                   # the same table, from runtime.py
    .venv-extras/bin/python benchmarks/zoo.py --int8      # the quantized real-model zoo
    .venv-extras/bin/python benchmarks/quantized.py --zoo --models resnet18,bert_base --inputs 20

Each float32 ONNX model (``xrelay.testing.onnx_models``, batch 1, 224x224 / seq 128) is
pre-processed and quantized by onnxruntime (``quant_pre_process``, ``quantize_static``: QDQ
format, uint8 activations, int8 weights) calibrated on random inputs, per-tensor and
per-channel. xrelay imports it with its weights bound, runs
``fake-quantization-to-integer{onnxruntime=true}`` (onnxruntime's arithmetic) so the
convolutions and matmuls run in int8, and builds it at -O3. Both runtimes then run the same
``--inputs`` random inputs (other seeds than the calibration's):

* **accuracy**: the share of output elements within one quantization step of the output
  (|xrelay - onnxruntime| <= scale), and how many inputs give the same top-1 class;
* **latency** (``--pairs`` alternating pairs after warm-up, median of per-pair ratios): xrelay
  int8 / onnxruntime int8 and xrelay int8 / xrelay float32 (the unquantized model);
* **arena**: the planned activation arena of the int8 and the float32 build.

``--zoo`` (``zoo_report``, what ``benchmarks/zoo.py --int8`` calls) takes the real-model zoo
instead: the CNNs of ``xrelay.testing.zoo`` and BERT-base, quantized by onnxruntime
(``quantized_models.zoo_path``: the same ``quantize_static`` call, calibrated on random zoo
inputs, cached outside the repository), per-tensor and per-channel. For each:

* **equal**: on how many of ``--inputs`` random inputs (``zoo.inputs``, seeds from 2000) the
  output is onnxruntime's bit for bit, and the largest difference in quantization steps;
* **latency**: xrelay int8 (its default threads) and onnxruntime int8 (2 intra-op threads,
  spinning off) in alternating rounds (``peers.alternate``), median of per-round ratios;
* **arena**: the int8 build's planned arena against the float zoo model's (``xrelay.build``
  at -O3 with the defaults).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")

import argparse  # noqa: E402
import functools  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

MODELS = {
    "resnet18": ("resnet18", {}),
    "mobilenet_v2": ("mobilenet_v2", {}),
    "bert_layer": ("bert_layer", {}),
}


def _median_ratio(run_a, run_b, pairs: int) -> tuple[float, float, float]:
    for _ in range(3):
        run_a()
        run_b()
    ta, tb, ratios = [], [], []
    for _ in range(pairs):
        t0 = time.perf_counter()
        run_a()
        t1 = time.perf_counter()
        run_b()
        t2 = time.perf_counter()
        ta.append(t1 - t0)
        tb.append(t2 - t1)
        ratios.append((t1 - t0) / (t2 - t1))
    return statistics.median(ta) * 1e3, statistics.median(tb) * 1e3, statistics.median(ratios)


def report(models: list[str], inputs: int = 100, calibration: int = 8, pairs: int = 20) -> None:
    """Print the table (one row per model and weight quantization), flushing row by row."""
    import onnxruntime as ort

    from xrelay.testing import onnx_models as om
    from xrelay.testing import quantized_models as qm

    print("| model | weights | within 1 step | same top-1 | xrelay int8 ms | ort int8 ms | ratio | xrelay f32 ms | int8/f32 | arena int8 | arena f32 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in models:
        maker, kw = MODELS[name]
        f32 = getattr(om, maker)(**kw)
        f32_mod = qm.build(f32)
        for per_channel in (False, True):
            q = qm.quantize(f32, qm.calibration_inputs(f32, calibration), per_channel=per_channel)
            m = qm.build(q, integer=True)
            step = qm.output_step(q)
            within, same, total = 0, 0, 0
            feeds = qm.calibration_inputs(f32, inputs, seed=1000)
            for feed in feeds:
                ref, out = qm.compare(q, feed, m)
                steps = qm.quantization_steps(ref, out, step)
                within += int((steps <= 1).sum())
                total += steps.size
                same += int(np.array_equal(ref.reshape(ref.shape[0], -1).argmax(-1), out.reshape(out.shape[0], -1).argmax(-1)))
            so = ort.SessionOptions()
            so.intra_op_num_threads = 2
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
            sess = ort.InferenceSession(q.SerializeToString(), so, providers=["CPUExecutionProvider"])
            feed = feeds[0]
            for k, v in feed.items():
                m.set_input(k.replace(":", "_"), v)
                f32_mod.set_input(k.replace(":", "_"), v)
            x_ms, o_ms, ratio = _median_ratio(m.run, functools.partial(sess.run, None, feed), pairs)
            _, f_ms, ratio_f = _median_ratio(m.run, f32_mod.run, pairs)
            print(
                f"| {name} | {'per-channel' if per_channel else 'per-tensor'} | {within / total:.5f} | "
                f"{same}/{len(feeds)} | {x_ms:.1f} | {o_ms:.1f} | {ratio:.2f}x | {f_ms:.1f} | {ratio_f:.2f}x | "
                f"{m.arena_bytes:,} | {f32_mod.arena_bytes:,} |",
                flush=True,
            )


def _load() -> str:
    return "load " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def zoo_report(
    models: list[str], pairs: int = 15, warmup: int = 3, inputs: int = 100, profile=None,
) -> list[dict]:  # fmt: skip
    """The quantized zoo's table (see the module docstring); the models of ``models`` that have
    no quantized twin are named and left out. Rows are printed as they are measured;
    ``profile(label, module)``, when given, is called on each int8 build after its row (what
    ``zoo.py --int8 --profile`` passes: the time by op family)."""
    import onnx
    from peers import alternate, median_ratio, ort_session

    import xrelay
    from xrelay.frontends.onnx import from_onnx
    from xrelay.testing import quantized_models as qm
    from xrelay.testing import zoo

    chosen = [m for m in models if m in qm.ZOO_MODELS]
    left = [m for m in models if m not in qm.ZOO_MODELS]
    if left:
        print(f"no quantized twin (left out): {', '.join(left)}", flush=True)
    print(f"before: {_load()}", flush=True)
    header = ("| model | weights | equal to ort | max steps | xrelay int8 ms | ort int8 ms | / ort int8 "
              "| arena int8 | arena f32 | int8/f32 | load |")
    print(header + "\n" + "|---" * (header.count("|") - 1) + "|", flush=True)
    rows = []
    for name in chosen:
        f32 = xrelay.build(*from_onnx(onnx.load(zoo.onnx_path(name))), opt_level=3)
        f32_arena = f32.arena_bytes
        del f32
        for per_channel in (False, True):
            q = onnx.load(qm.zoo_path(name, per_channel))
            m = qm.build(q, integer=True)
            sess = ort_session(q.SerializeToString())
            step = qm.output_step(q)
            equal, worst = 0, 0.0
            for i in range(inputs):
                feed = zoo.inputs(name, 2000 + i)
                ref = sess.run(None, feed)[0]
                m.set_input(**feed)
                m.run()
                out = m.get_output(0).numpy()
                if not np.all(np.isfinite(out)):
                    raise RuntimeError(f"{name}: xrelay's int8 output is not finite")
                equal += int(out.shape == ref.shape and np.array_equal(out, ref))
                if step:
                    worst = max(worst, float(qm.quantization_steps(ref, out, step).max()))
            feed = zoo.inputs(name, 0)
            m.set_input(**feed)
            times = alternate({"xrelay": m.run, "ort": functools.partial(sess.run, None, feed)}, pairs, warmup)
            row = {
                "model": name, "per_channel": per_channel, "equal": equal, "inputs": inputs,
                "max_steps": worst, "xrelay_ms": statistics.median(times["xrelay"]) * 1e3,
                "ort_ms": statistics.median(times["ort"]) * 1e3,
                "ratio": median_ratio(times, "xrelay", "ort"), "arena": m.arena_bytes,
                "arena_f32": f32_arena, "load": _load(),
            }  # fmt: skip
            rows.append(row)
            print(
                f"| {name} | {'per-channel' if per_channel else 'per-tensor'} | {equal}/{inputs} | "
                f"{worst:g} | {row['xrelay_ms']:.1f} | {row['ort_ms']:.1f} | {row['ratio']:.2f}x | "
                f"{m.arena_bytes:,} | {f32_arena:,} | {m.arena_bytes / f32_arena:.3f} | {row['load']} |",
                flush=True,
            )
            if profile is not None:
                profile(f"{name} int8 {'per-channel' if per_channel else 'per-tensor'}", m)
            del m, sess, q
    print(f"after: {_load()}; {pairs} rounds after {warmup} warm-up rounds", flush=True)
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--zoo", action="store_true", help="the quantized real-model zoo (zoo_report)")
    p.add_argument("--models", default=None)
    p.add_argument("--inputs", type=int, default=100)
    p.add_argument("--calibration", type=int, default=8)
    p.add_argument("--pairs", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    args = p.parse_args()
    if args.zoo:
        from xrelay.testing import quantized_models as qm

        models = args.models.split(",") if args.models else list(qm.ZOO_MODELS)
        zoo_report(models, args.pairs, args.warmup, args.inputs)
        return
    report((args.models or ",".join(MODELS)).split(","), args.inputs, args.calibration, args.pairs)


if __name__ == "__main__":
    main()
