"""Planning time against problem size: seconds per 1k buffers for the greedy planners.

    python benchmarks/planning_scale.py [--sizes 1000 10000 100000 1000000] [--algorithms a,b]

The problems look like a long model's schedule (``model_like``): step ``i`` makes buffer
``i``, which dies 1-4 steps later; 2 % are skip connections living up to 64 steps; four
buffers live over the whole schedule (inputs, outputs); sizes from 16 bytes to 1 MiB, with
alignments 1, 16 and 64, in one unbounded pool aligned to 16. Each cell is the CPU time of
one ``plan_memory`` call (problem check included) divided by the thousands of buffers; below
``--min-buffers`` (100k) a size is planned repeatedly until that many buffers were planned and
the median call counts, so that small sizes are not one noisy millisecond. Flat across a row
means the planner is linear-ish on such problems: the second table divides each cell by the
row's first (smallest size) cell. Times are the process's CPU time (``time.process_time``): on
a machine shared with other jobs, wall time mostly measures the others. Every plan is checked
with ``verify_plan`` (not timed). Planners whose work grows with the conflicts per buffer stay
flat only while those stay bounded, as here.

``hill-climb`` re-plans every buffer on each attempt and makes at most 500 attempts and 5 M
placements in all (``HILL_CLIMB_PLACEMENTS``), so its row is seconds per 1k buffers *per
attempt* (the attempts made are printed); ``optimal`` is not measured (an exact search).

``--order position`` is an experiment, not a planner: greedy-by-size's best-fit placement
with buffers visited by first step instead of by size. Same work, but each buffer's
neighbours in memory were just touched; comparing it with greedy-by-size shows how much of
greedy-by-size's growth with n comes from visiting a million buffers in size order (random
places in the schedule), i.e. cache misses, rather than from the algorithm.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time

from tabulate import tabulate

from xrelay.runtime.memory_plan import default_pools
from xrelay.transforms.planners import Buffer, greedy, plan_memory, verify_plan

GREEDY = (
    "naive",
    "greedy-by-size",
    "greedy-by-size-first-fit",
    "greedy-by-conflicts",
    "position-greedy-hierarchy",
    "greedy-hierarchy",
    "storage-ids",
    "hill-climb",
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
    parser.add_argument(
        "--order", choices=("position",), help="add the visit-order experiment (see above)"
    )
    parser.add_argument("--min-buffers", type=int, default=100_000)
    args = parser.parse_args(argv)
    algorithms = [a for a in args.algorithms.split(",") if a]
    if args.order:
        algorithms.append("by-position")
    rows, ratios = [], []
    for algorithm in algorithms:
        label = algorithm + (" (per attempt)" if algorithm == "hill-climb" else "")
        row: list[object] = [label]
        for n in args.sizes:
            buffers = model_like(n)
            calls = max(1, -(-args.min_buffers // n)) if algorithm != "hill-climb" else 1
            per_call = []
            for _ in range(calls):
                seconds, attempts = _plan_once(buffers, algorithm)
                per_call.append(seconds / attempts)
            del buffers
            row.append(statistics.median(per_call) / (n / 1000))
            note = f" ({attempts} attempts)" if algorithm == "hill-climb" else ""
            print(
                f"{algorithm} {n}: {statistics.median(per_call):.3f} s per call, {calls} calls{note}",
                file=sys.stderr,
                flush=True,
            )
        rows.append(row)
        ratios.append([label] + [cell / row[1] for cell in row[1:]])
    headers = ["algorithm"] + [f"{n:,} buffers" for n in args.sizes]
    print("CPU seconds per 1k buffers (one plan_memory call each):\n")
    print(tabulate(rows, headers=headers, floatfmt=".4f", tablefmt="github"))
    print(f"\nThe same, divided by the {args.sizes[0]:,}-buffer column (flat: 1.00 across):\n")
    print(tabulate(ratios, headers=headers, floatfmt=".2f", tablefmt="github"))
    return 0


def _plan_once(buffers: list[Buffer], algorithm: str) -> tuple[float, int]:
    """CPU seconds of one planning call and the attempts it made; the plan is verified."""
    n = len(buffers)
    gc.collect()
    t0 = time.process_time()
    if algorithm == "by-position":
        starts = [b.start for b in buffers]
        order = sorted(range(n), key=starts.__getitem__)
        plan = greedy._run(buffers, default_pools(), order, greedy._best_fit, algorithm)
    else:
        plan = plan_memory(buffers, algorithm)
    seconds = time.process_time() - t0
    verify_plan(buffers, None, plan)
    return seconds, plan.stats.get("attempts", 1)


if __name__ == "__main__":
    sys.exit(main())
