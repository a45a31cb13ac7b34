"""Accuracy of ``xrelay.build(..., mixed_precision=...)`` against float32, beside OpenVINO's default precision.

For each model (the ONNX ResNets of ``xrelay.testing.onnx_models``, the models
``benchmarks/runtime.py`` times), xrelay's float32 build and its ``mixed_precision`` builds
(``bfloat16``: oneDNN's bf16 convolutions and dense; ``float16``: the native kernels) run the
same random inputs (standard normal, one generator seed), and so does OpenVINO's CPU plugin at
its default precision (no ``INFERENCE_PRECISION_HINT``: bf16 on a CPU with AVX512_BF16; 2
threads) when the ``openvino`` package is installed. Reported against xrelay float32 over all
inputs: the largest absolute difference of the outputs (logits), the largest difference
relative to the output's largest magnitude, and on how many inputs the top-1 classes agree.

    python benchmarks/mixed_precision.py [--models resnet18 resnet50] [--types bfloat16 float16] [--inputs 100]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
from tabulate import tabulate

import xrelay
from xrelay.runtime.files import scratch_dir


def _model(name: str):
    from xrelay.testing import onnx_models

    return getattr(onnx_models, name)()


def _ov_default(model) -> object | None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from runtime import _ov_request

    with scratch_dir("xrelay-bench-bf16-") as tmp:
        path = os.path.join(tmp, "model.onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        return _ov_request(path, precision=None)


def measure(name: str, types: list[str], inputs: int, seed: int) -> list[list[str]]:
    from xrelay.frontends.onnx import from_onnx

    model = _model(name)
    mod, params = from_onnx(model)
    (inp,) = model.graph.input
    shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    ref = xrelay.build(mod, params)
    peers: dict[str, object] = {t: xrelay.build(mod, params, mixed_precision=t) for t in types}
    ov = _ov_default(model)
    rng = np.random.default_rng(seed)
    stats = {k: [0.0, 0.0, 0] for k in [*peers, *(["ov"] if ov is not None else [])]}
    for _ in range(inputs):
        x = rng.standard_normal(shape).astype("float32")
        ref.set_input(inp.name, x)
        ref.run()
        a = ref.get_output(0).numpy().astype(np.float64)
        outs = {}
        for k, m in peers.items():
            m.set_input(inp.name, x)
            m.run()
            outs[k] = m.get_output(0).numpy().astype(np.float64)
        if ov is not None:
            (o, *_) = ov.infer({inp.name: x}).values()
            outs["ov"] = np.asarray(o, np.float64)
        scale = max(float(np.abs(a).max()), 1e-30)
        for k, b in outs.items():
            err = float(np.abs(a - b).max())
            s = stats[k]
            s[0] = max(s[0], err)
            s[1] = max(s[1], err / scale)
            s[2] += int(a.argmax() == b.argmax())
    rows = []
    for k, (abs_err, rel_err, agree) in stats.items():
        what = "OpenVINO, default precision" if k == "ov" else f"xrelay mixed_precision={k}"
        rows.append([name, what, f"{abs_err:.3g}", f"{rel_err:.2e}", f"{agree}/{inputs}"])
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["resnet18", "resnet50"], choices=["resnet18", "resnet50", "mobilenet_v2"])
    ap.add_argument("--types", nargs="+", default=["bfloat16", "float16"], choices=["bfloat16", "float16"])
    ap.add_argument("--inputs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rows = []
    for name in args.models:
        rows += measure(name, args.types, args.inputs, args.seed)
    print(
        tabulate(
            rows,
            headers=["model", "build", "max abs err", "max err / max |f32|", "top-1 agrees with f32"],
        )
    )
    print(f"{args.inputs} standard normal inputs (seed {args.seed}); errors against xrelay float32")


if __name__ == "__main__":
    main()
