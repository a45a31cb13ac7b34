"""The main passes against program size: seconds per 1k ops from 1k ops up.

    python benchmarks/passes_scale.py [--sizes 1000 10000 100000 1000000]

Each program is generated as text: residual blocks of ``nn.conv2d`` + bias ``add`` +
``nn.relu`` (twice) + a residual ``add``, on small tensors (1x4x4x4), weights as function
parameters, until the op count is reached. The stages run one after the other on the same
module, the way ``relay-opt`` runs them, each timed alone: ``parse`` (the text, with op
locations), ``infer-type``, ``fuse-ops``, ``lower-to-memory``, ``plan-memory``
(greedy-by-size) and ``print``. Passes run through the pass infrastructure (``as_pass``, which
pauses Python's cyclic collector like ``relay-opt`` does). A flat row means the stage is
linear on such programs; the last column is peak resident memory after the largest stage.
Times are the process's CPU time (``time.process_time``), not wall time: on a machine shared
with other jobs, wall time mostly measures the others.
"""

from __future__ import annotations

import argparse
import gc
import resource
import sys
import time
from io import StringIO

from tabulate import tabulate
from xdsl.parser import Parser
from xdsl.printer import Printer

from xrelay.dialects import make_context
from xrelay.transforms import get_all_passes
from xrelay.transforms.infra import PassContext, as_pass, in_place

STAGES = ("parse", "infer-type", "fuse-ops", "lower-to-memory", "plan-memory", "print")
T = "tensor<1x4x4x4xf32>"
W = "tensor<4x4x3x3xf32>"
B = "tensor<4x1x1xf32>"


def program(n: int) -> str:
    """A residual network of about ``n`` relay ops (7 per block)."""
    blocks = max(1, n // 7)
    lines = [f"func.func @main(%x: {T}, %w: {W}, %b: {B}) -> {T} {{"]
    cur = "%x"
    k = 0
    for _ in range(blocks):
        shortcut = cur
        for _ in range(2):
            lines.append(
                f"  %{k} = relay.nn.conv2d {cur}, %w {{padding = [1, 1, 1, 1]}} : ({T}, {W}) -> {T}"
            )
            lines.append(f"  %{k + 1} = relay.add %{k}, %b : ({T}, {B}) -> {T}")
            lines.append(f"  %{k + 2} = relay.nn.relu %{k + 1} : ({T}) -> {T}")
            cur = f"%{k + 2}"
            k += 3
        lines.append(f"  %{k} = relay.add {cur}, {shortcut} : ({T}, {T}) -> {T}")
        cur = f"%{k}"
        k += 1
    lines.append(f"  func.return {cur} : {T}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def measure(n: int) -> tuple[int, dict[str, float]]:
    """Run the stages on a program of about ``n`` ops; seconds per stage and the op count."""
    text = program(n)
    ctx = make_context()
    passes = get_all_passes()
    seconds: dict[str, float] = {}
    gc.collect()
    t0 = time.process_time()
    module = Parser(ctx, text, "program.mlir").parse_module()
    seconds["parse"] = time.process_time() - t0
    del text
    ops = sum(1 for op in module.walk() if op.name.startswith("relay."))
    with PassContext(opt_level=3):
        for name in STAGES[1:-1]:
            module_pass = passes[name]()()  # plan-memory's default algorithm: greedy-by-size
            gc.collect()
            t0 = time.process_time()
            with in_place(module):  # time the pass, not a copy of its input
                as_pass(module_pass)(module)
            seconds[name] = time.process_time() - t0
    gc.collect()
    t0 = time.process_time()
    out = StringIO()
    Printer(stream=out).print_op(module)
    seconds["print"] = time.process_time() - t0
    return ops, seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    args = parser.parse_args(argv)
    measure(200)  # warm-up: lazy imports and caches are not a size's cost
    rows = []
    for n in args.sizes:
        ops, seconds = measure(n)
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        k = ops / 1000
        rows.append([f"{ops:,}"] + [seconds[s] / k for s in STAGES] + [sum(seconds.values()), rss_mb])
        print(f"{ops} ops: " + ", ".join(f"{s} {seconds[s]:.2f} s" for s in STAGES), file=sys.stderr, flush=True)
    headers = ["ops"] + list(STAGES) + ["total s", "peak RSS MB"]
    print("Seconds per 1k ops (each stage once, on the previous stage's result):\n")
    print(tabulate(rows, headers=headers, floatfmt=".4f", tablefmt="github"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
