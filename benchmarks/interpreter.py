"""Reference-interpreter latency next to onnxruntime, in the same process.

ResNet-18 and MobileNetV2 are built as ONNX graphs (random weights, no downloads), imported into
xrelay and run by the reference interpreter (``xrelay.run``; unoptimised, one kernel per relay
op, every intermediate a fresh array), and the same ONNX runs in onnxruntime. Both use 2 threads.
The two runtimes alternate (A B A B ...) after warm-up and the median of the per-pair ratios is
printed, which keeps the comparison fair on a noisy machine.

    python benchmarks/interpreter.py [--pairs 20] [--models resnet18 mobilenet_v2]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import onnxruntime as ort
from tabulate import tabulate

from xrelay.frontends import from_onnx
from xrelay.runtime.interpreter import Runner
from xrelay.testing import onnx_models

MODELS = {
    "resnet18": lambda: onnx_models.resnet18(),
    "mobilenet_v2": lambda: onnx_models.mobilenet_v2(),
}


def session(model) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    opts.inter_op_num_threads = 1
    # spinning threads would take the cores from the interpreter's BLAS calls in the alternation
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def bench(name: str, pairs: int, warmup: int = 3) -> list[object]:
    model = MODELS[name]()
    mod, params = from_onnx(model)
    runner = Runner(mod)
    sess = session(model)
    input_name = sess.get_inputs()[0].name
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    feeds = {input_name: x}
    ours_inputs = {mod_input_name(mod): x}
    ref = sess.run(None, feeds)[0]
    got = runner.run(ours_inputs, params)[0]
    err = float(np.max(np.abs(got - ref)) / (np.max(np.abs(ref)) + 1e-12))
    for _ in range(warmup):
        runner.run(ours_inputs, params)
        sess.run(None, feeds)
    ours, theirs, ratios = [], [], []
    for _ in range(pairs):
        t0 = time.perf_counter()
        runner.run(ours_inputs, params)
        t1 = time.perf_counter()
        sess.run(None, feeds)
        t2 = time.perf_counter()
        ours.append(t1 - t0)
        theirs.append(t2 - t1)
        ratios.append((t1 - t0) / (t2 - t1))
    return [
        name,
        statistics.median(ours) * 1e3,
        statistics.median(theirs) * 1e3,
        statistics.median(ratios),
        err,
    ]


def mod_input_name(mod) -> str:
    from xrelay.runtime.interpreter import parameter_specs

    return parameter_specs(getattr(mod, "module", mod))[0][0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    args = ap.parse_args()
    rows = [bench(m, args.pairs) for m in args.models]
    print(
        tabulate(
            rows,
            headers=["model", "interpreter ms", "onnxruntime ms", "ratio (median of pairs)", "max rel err"],
            floatfmt=".2f",
            tablefmt="github",
        )
    )


if __name__ == "__main__":
    main()
