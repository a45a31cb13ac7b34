"""ONNX models through the C target at every optimisation level, checked against onnxruntime.

    python benchmarks/c_models.py model.onnx [more.onnx ...] [--levels 0,1,2,3]
    python benchmarks/c_models.py ~/.cache/xrelay-zoo/*.onnx      # the zoo's exported models

For each model and level: ``build_c`` (weights in a blob), ``model.c`` and ``main.c`` compiled
with ``cc -std=c99 -Wall -Wextra -Werror -O0 -c``, the program run step by step through its C
functions on one random input (standard-normal floats; integer inputs: token ids below 1000,
masks of ones) and its first output compared with onnxruntime's: the largest absolute
difference and the output's largest magnitude are printed, with the build time. A model
whose output does not depend on its input is reported (the comparison would prove nothing).
Exit status 1 if any model fails to build, compile or match (``--rtol`` of the output scale).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from xrelay.runtime.files import scratch_dir


def _feeds(session, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds = {}
    for i in session.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        if "int" in i.type:
            values = np.ones(shape) if "mask" in i.name else rng.integers(0, 1000, shape)
            feeds[i.name] = values.astype(np.int64)
        else:
            feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def check(path: str, levels: list[int], rtol: float) -> bool:
    import onnx
    import onnxruntime as ort

    import xrelay
    from xrelay.backend.build import build_c
    from xrelay.frontends.onnx import from_onnx

    name = Path(path).stem
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = _feeds(session, 0)
    want = session.run(None, feeds)[0]
    other = session.run(None, _feeds(session, 1))[0]
    if np.array_equal(want, other):
        print(f"{name}: its output does not depend on its input; not checked")
        return False
    mod, params = from_onnx(onnx.load(path), freeze_params=True)
    ok = True
    for level in levels:
        t = time.perf_counter()
        try:
            with xrelay.transform.PassContext(opt_level=level):
                lib = build_c(mod, params, opt_level=level, constants="blob")
            with scratch_dir("xrelay-bench-c-") as tmp:
                lib.export(tmp, main=True)
                for src in ("model.c", "main.c"):
                    res = subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O0", "-c", "-I", tmp,
                                          str(Path(tmp) / src), "-o", str(Path(tmp) / "x.o")],
                                         capture_output=True, text=True)  # fmt: skip
                    if res.returncode:
                        raise RuntimeError(f"{src} did not compile: {res.stderr.strip()[:300]}")
            built = time.perf_counter() - t
            for k, v in feeds.items():
                lib.set_input(k, v)
            lib.run()
            got = lib.get_output(0)
            err, scale = float(np.abs(got - want).max()), float(np.abs(want).max())
            good = bool(np.isfinite(got).all()) and err <= rtol * scale
            ok &= good
            print(f"{name} -O{level}: {'ok' if good else 'MISMATCH'}, max |C - onnxruntime| {err:.3g} "
                  f"(|output| <= {scale:.3g}), built in {built:.0f} s", flush=True)  # fmt: skip
        except Exception as e:  # noqa: BLE001 - reported per model and level
            ok = False
            print(f"{name} -O{level}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
    return ok


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="+", help="ONNX files")
    p.add_argument("--levels", default="0,1,2,3")
    p.add_argument("--rtol", type=float, default=1e-3, help="of the output's largest magnitude")
    args = p.parse_args(argv)
    levels = [int(v) for v in args.levels.split(",")]
    results = [check(m, levels, args.rtol) for m in args.models]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
