"""Planning time against problem size: seconds per 1k buffers for the greedy planners.

    python benchmarks/planning_scale.py [--sizes 1000 10000 100000 1000000] [--algorithms a,b]

The problems look like a long model's schedule (``model_like``): step ``i`` makes buffer
``i``, which dies 1-4 steps later; 2 % are skip connections living up to 64 steps; four
buffers live over the whole schedule (inputs, outputs); sizes from 16 bytes to 1 MiB, with
alignments 1, 16 and 64, in one unbounded pool aligned to 16. Each cell is the wall time of
one ``plan_memory`` call (problem check included) divided by the thousands of buffers: flat
across a row means the planner is n log n-ish on such problems. Every plan is checked with
``verify_plan`` (not timed). Planners whose work grows with the conflicts per buffer stay
flat only while those stay bounded, as here; ``hill-climb`` (500 re-plans) and ``optimal``
are not measured.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from tabulate import tabulate

from xrelay.transforms.planners import Buffer, plan_memory, verify_plan

GREEDY = (
    "naive",
    "greedy-by-size",
    "greedy-by-size-first-fit",
    "greedy-by-conflicts",
    "position-greedy-hierarchy",
    "greedy-hierarchy",
    "storage-ids",
)


def model_like(n: int, seed: int = 0) -> list[Buffer]:
    """``n`` buffers of a long chain-with-skips schedule (see the module docstring)."""
    rng = random.Random(seed)
    buffers = []
    for i in range(n):
        if i < 4:
            start, end, kind = 0, n - 1, "input" if i < 2 else "output"
        else:
            span = rng.randrange(1, 65) if rng.random() < 0.02 else rng.randrange(1, 5)
            start, end, kind = i, min(n - 1, i + span), "intermediate"
        size = int(16 * 2 ** rng.uniform(0, 16))
        buffers.append(Buffer(f"b{i}", size, start, end, rng.choice((1, 16, 64)), kind))
    return buffers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000, 1_000_000]
    )
    parser.add_argument("--algorithms", default=",".join(GREEDY))
    args = parser.parse_args(argv)
    algorithms = [a for a in args.algorithms.split(",") if a]
    rows = []
    for algorithm in algorithms:
        row: list[object] = [algorithm]
        for n in args.sizes:
            buffers = model_like(n)
            t0 = time.perf_counter()
            plan = plan_memory(buffers, algorithm)
            seconds = time.perf_counter() - t0
            verify_plan(buffers, None, plan)
            del plan, buffers  # freed here, not inside the next timing
            row.append(seconds / (n / 1000))
            print(f"{algorithm} {n}: {seconds:.2f} s", file=sys.stderr, flush=True)
        rows.append(row)
    headers = ["algorithm"] + [f"{n:,} buffers" for n in args.sizes]
    print("Seconds per 1k buffers (one plan_memory call each):\n")
    print(tabulate(rows, headers=headers, floatfmt=".4f", tablefmt="github"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
