"""int8 models quantized by onnxruntime, in onnxruntime and in xrelay: accuracy, latency, arena.

    python benchmarks/quantized.py                        # ResNet-18, MobileNetV2, BERT layer
    python benchmarks/quantized.py --models resnet18 --inputs 100 --pairs 20
    python benchmarks/runtime.py --int8                   # the same table, from runtime.py

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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--inputs", type=int, default=100)
    p.add_argument("--calibration", type=int, default=8)
    p.add_argument("--pairs", type=int, default=20)
    args = p.parse_args()
    report(args.models.split(","), args.inputs, args.calibration, args.pairs)


if __name__ == "__main__":
    main()
