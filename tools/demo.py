"""``relay-demo`` (``make demo``): xrelay's main job on the built-in ResNet-18.

1. build Relay's ResNet-18 (``xrelay.testing.resnet``) and print its IR statistics;
2. round-trip it through ``relay-opt`` as text with its weights in an ``.npz``;
3. optimise at -O3 (Relay's build pipeline, then fuse-ops) with the pass timing profile;
4. lower to the memory dialect, plan the arena, print the memory report and the arena size
   against the lower bound;
5. run it in the arena runtime, check it against the reference interpreter on the unoptimised
   module, and time it against onnxruntime running the same network (its ONNX twin with the same
   weights) in the same process, alternating the two.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from xrelay.runtime.files import scratch_dir


def _section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="relay-demo", description=__doc__.splitlines()[0])
    ap.add_argument("--image", type=int, default=224, help="input height and width (default 224)")
    ap.add_argument("--plan", default="greedy-by-size", help="planning algorithm")
    ap.add_argument(
        "--pairs", type=int, default=20, help="timed pairs, one run of each runtime (default 20)"
    )
    ap.add_argument("--no-onnxruntime", action="store_true", help="skip the onnxruntime comparison")
    args = ap.parse_args(argv)
    if args.pairs < 1:
        ap.error("--pairs must be at least 1")

    import xrelay
    from xrelay.instrument import PassTimingInstrument
    from xrelay.testing import resnet
    from xrelay.tools import relay_opt
    from xrelay.transforms.bind_params import bind_params_by_name
    from xrelay.transforms.infra import PassContext, build_pipeline, in_place

    image_shape = (3, args.image, args.image)

    _section("1. Build ResNet-18 (xrelay.testing.resnet)")
    t0 = time.perf_counter()
    mod, params = resnet.get_workload(num_layers=18, image_shape=image_shape)
    counts = collections.Counter(
        op.name for op in mod.module.walk() if op.name.startswith("relay.")
    )
    weight_bytes = sum(np.asarray(p).nbytes for p in params.values())
    print(
        f"built in {time.perf_counter() - t0:.2f} s: {sum(counts.values())} relay ops, "
        f"{len(params)} parameters ({weight_bytes / 1e6:.1f} MB)"
    )
    for name, n in counts.most_common():
        print(f"  {n:4d}  {name}")

    _section("2. Text round trip through relay-opt (weights in an .npz)")
    with scratch_dir("xrelay-demo-") as tmp:
        src, weights = Path(tmp, "resnet18.mlir"), Path(tmp, "resnet18.npz")
        out_mlir, out_npz = Path(tmp, "out.mlir"), Path(tmp, "out.npz")
        bound = mod.clone()
        bind_params_by_name(bound.module, {k: np.asarray(v) for k, v in params.items()})
        bound.save(src, weights)
        t0 = time.perf_counter()
        rc = relay_opt.main(
            [str(src), "--params", str(weights), "--emit-params", str(out_npz), "-o", str(out_mlir)]
        )
        if rc != 0:
            return rc
        same_text = src.read_text().rstrip() == out_mlir.read_text().rstrip()
        with np.load(weights) as a, np.load(out_npz) as b:
            same_weights = set(a.files) == set(b.files) and all(
                np.array_equal(a[k], b[k]) for k in a.files
            )
        print(
            f"relay-opt parsed, verified and printed {src.stat().st_size / 1e3:.0f} kB of text in "
            f"{time.perf_counter() - t0:.2f} s: text identical: {same_text}, "
            f"weights identical: {same_weights}"
        )
        if not (same_text and same_weights):
            print("round trip changed the module", file=sys.stderr)
            return 1

    _section("3. Optimise at -O3 (Relay's build pipeline, then fuse-ops)")
    optimised = bound.clone()
    with PassContext(opt_level=3, instruments=[PassTimingInstrument()]):
        with in_place(optimised):
            build_pipeline()(optimised)
        print(PassTimingInstrument.render(), end="")
    fused = [f for f in optimised.module.ops if "relay.primitive" in f.attributes]
    print(
        f"{len(fused)} primitive functions, e.g. "
        + ", ".join(sorted({f.sym_name.data for f in fused})[:4])
    )

    _section(f"4. Lower to the memory dialect and plan ({args.plan})")
    t0 = time.perf_counter()
    module = xrelay.build(mod, params, opt_level=3, plan=args.plan)
    print(f"built in {time.perf_counter() - t0:.2f} s")
    print(module.memory_report())

    _section("5. Run in the arena runtime")
    x = np.random.default_rng(0).standard_normal((1, *image_shape)).astype("float32")
    module.run(data=x)
    got = module.get_output(0)
    (ref,) = xrelay.run(mod, {"data": x}, params)
    print(
        f"output {got.shape} {got.dtype}; max |arena - reference interpreter (unoptimised)| = "
        f"{float(np.max(np.abs(got - ref))):.2e}"
    )
    if args.no_onnxruntime:
        return 0
    import onnxruntime as ort

    from xrelay.testing import onnx_models

    model = onnx_models.relay_resnet_v2(18, image_shape=image_shape, params=params)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    so.inter_op_num_threads = 1
    # as benchmarks/runtime.py: spinning onnxruntime threads would steal the cores from xrelay's
    # pool in the alternation (and slow onnxruntime's own next run less than ours)
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    (expect,) = sess.run(None, {"data": x})
    print(f"max |arena - onnxruntime| = {float(np.max(np.abs(got - expect))):.2e}")
    warmup = 3
    for _ in range(warmup):
        module.run()
        sess.run(None, {"data": x})
    ours, theirs = [], []
    for _ in range(args.pairs):
        t = time.perf_counter()
        module.run()
        ours.append(time.perf_counter() - t)
        t = time.perf_counter()
        sess.run(None, {"data": x})
        theirs.append(time.perf_counter() - t)
    print(latency_report(ours, theirs, warmup))
    return 0


def latency_report(ours: Sequence[float], theirs: Sequence[float], warmup: int) -> str:
    """The timing lines: each runtime's median and, labelled, the median of the per-pair ratios.

    Each pair ran back to back, so the median of the per-pair ratios is the comparison; the two
    medians may come from different pairs and need not divide to it, so their ratio is printed
    too, named as such.
    """
    pairs = len(ours)
    pair_ratio = statistics.median(a / b for a, b in zip(ours, theirs, strict=True))
    mine, peer = statistics.median(ours), statistics.median(theirs)
    return (
        f"latency, {pairs} alternating pairs after {warmup} warm-up runs, 2 threads each:\n"
        f"  xrelay       {mine * 1e3:6.1f} ms  (median of its {pairs} runs)\n"
        f"  onnxruntime  {peer * 1e3:6.1f} ms  (median of its {pairs} runs)\n"
        f"  xrelay / onnxruntime = {pair_ratio:.2f}x, the median of the {pairs} per-pair ratios "
        f"(the ratio of the two medians above is {mine / peer:.2f}x)"
    )


if __name__ == "__main__":
    sys.exit(main())
