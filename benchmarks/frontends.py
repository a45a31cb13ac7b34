"""The same model brought through torch.export and through ONNX: xrelay's run time of each.

Each model of ``xrelay.testing.zoo`` is imported twice, ``from_exported_program(
torch.export.export(module, args))`` and ``from_onnx`` of the zoo's exported ONNX file, both
built with ``xrelay.build(mod, params, opt_level=3)`` and run on the same input. The runs
alternate back to back (``peers.alternate``: ``--pairs`` rounds after ``--warmup``, the
rounds going through both orders); the figure is the median over rounds of the per-round
ratio torch.export / ONNX (``peers.median_ratio``), with the two medians beside it and the
largest difference between the two outputs relative to the ONNX output's largest value.
The load average is printed first and last.

    PYTHONPATH=... python benchmarks/frontends.py mobilenet_v3_large llama_small
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from peers import alternate, load, median_ratio  # noqa: E402  (benchmarks/peers.py)


def built_pair(name: str):
    """The two built modules of zoo model ``name``, their inputs set: (torch.export, ONNX)."""
    import onnx
    import torch

    import xrelay
    from xrelay.frontends.onnx import from_onnx
    from xrelay.frontends.torch import from_exported_program
    from xrelay.testing import zoo

    module, args = zoo.torch_model(name)
    te = xrelay.build(*from_exported_program(torch.export.export(module, args)), opt_level=3)
    ox = xrelay.build(*from_onnx(onnx.load(zoo.onnx_path(name))), opt_level=3)
    for i, a in enumerate(args):
        te.set_input(i, a.numpy())
    ox.set_input(**zoo.inputs(name))
    return te, ox


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", help="names in xrelay.testing.zoo (MODELS or EXTRA_MODELS)")
    ap.add_argument("--pairs", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=3)
    a = ap.parse_args(argv)
    if a.pairs < 15:
        ap.error("--pairs must be at least 15")
    print(load(), flush=True)
    print(f"{'model':24s} {'te/onnx':>8s} {'te ms':>9s} {'onnx ms':>9s} {'max diff':>9s}", flush=True)
    for name in a.models:
        t0 = time.perf_counter()
        te, ox = built_pair(name)
        te.run()
        ox.run()
        out_te, out_ox = te.get_output(0).numpy(), ox.get_output(0).numpy()
        diff = float(np.max(np.abs(out_te - out_ox)) / max(float(np.max(np.abs(out_ox))), 1e-30))
        times = alternate({"te": te.run, "onnx": ox.run}, a.pairs, a.warmup)
        ratio = median_ratio(times, "te", "onnx")
        ms = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        print(f"{name:24s} {ratio:8.3f} {ms['te']:9.2f} {ms['onnx']:9.2f} {diff:9.1e}"
              f"  ({time.perf_counter() - t0:.0f} s)", flush=True)  # fmt: skip
    print(load(), flush=True)


if __name__ == "__main__":
    main()
