"""
Planning benchmark: every planner on the MiniMalloc challenging files A-K, and ``optimal``
on generated perfect packings (no free byte at the optimum).

    python -m xrelay.benchmarks.planning [--time-limit 60] [--algorithms a,b] [--files A,B]
                                         [--perfect 50,100,200,300,500] [--seeds 5]

Reads ``benchmarks/data/minimalloc/{A..K}.1048576.csv`` (one unbounded pool,
alignment 1, as MiniMalloc), verifies every plan with ``verify_plan`` and prints two
markdown tables: arena / max-live lower bound, and planning seconds, per file and
algorithm. ``optimal`` results carry ``*`` when proven optimal. Optimal arena sizes in
bytes are printed as a third table next to MiniMalloc's target (1,048,576; C: 1,039,360),
with the time to the first plan at the final size (``first best``) apart from the time to
the proof (``proof``: the search stopped there), which search found it, and the search nodes
of the branch and bound's probes.

``--perfect`` then runs ``optimal`` on ``--seeds`` generated instances per size
(``xrelay.testing.packings``, the optimum known by construction) and prints, per instance,
whether the optimum was reached, the first-best and proof times: pick a time limit from
these. ``--files ''`` or ``--perfect ''`` skips a set.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from xrelay.testing.packings import perfect_packing
from xrelay.transforms.planners import ALGORITHMS, Pool, lower_bound, plan_memory, verify_plan
from xrelay.transforms.planners.csv_io import read_minimalloc_csv

DATA = Path(__file__).resolve().parent / "data" / "minimalloc"
FILES = tuple("ABCDEFGHIJK")
TARGET = {f: 1_048_576 for f in FILES} | {"C": 1_039_360}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per optimal run")
    parser.add_argument("--algorithms", default=",".join(ALGORITHMS))
    parser.add_argument("--files", default=",".join(FILES))
    parser.add_argument("--perfect", default="50,100,200,300,500",
                        help="sizes of generated perfect packings ('' for none)")  # fmt: skip
    parser.add_argument("--seeds", type=int, default=5, help="perfect packings per size")
    args = parser.parse_args(argv)
    algorithms = args.algorithms.split(",")
    files = [f for f in args.files.split(",") if f]
    pools = [Pool("global", None, alignment=1)]
    ratio: dict[tuple[str, str], str] = {}
    seconds: dict[tuple[str, str], str] = {}
    arena: dict[str, tuple[int, int, int, dict]] = {}
    for f in files:
        buffers = read_minimalloc_csv(DATA / f"{f}.1048576.csv")
        lb = lower_bound(buffers, pools)
        for alg in algorithms:
            plan = plan_memory(buffers, alg, pools, time_limit=args.time_limit)
            verify_plan(buffers, pools, plan)
            mark = "*" if plan.optimal else ""
            ratio[f, alg] = f"{plan.total_size / lb:.3f}{mark}"
            seconds[f, alg] = f"{plan.seconds:.3f}"
            if alg == "optimal":
                probes = [p for st in plan.stats.values() for p in st.get("probes", [])]
                nodes = sum(n for _, _, n in probes)
                arena[f] = (plan.total_size, lb, nodes,
                            plan.stats["global"])  # fmt: skip
            print(f"{f} {alg}: {plan.total_size} ({ratio[f, alg]}) {plan.seconds:.2f}s",
                  file=sys.stderr, flush=True)  # fmt: skip

    def table(title: str, cells: dict[tuple[str, str], str]) -> None:
        print(f"\n### {title}\n")
        print("| file | " + " | ".join(algorithms) + " |")
        print("|---|" + "---|" * len(algorithms))
        for f in files:
            print(f"| {f} | " + " | ".join(cells[f, a] for a in algorithms) + " |")

    if files:
        table("Arena / max-live lower bound (* = proven optimal)", ratio)
        table("Planning time (s)", seconds)
    if arena:
        print("\n### optimal vs MiniMalloc target\n")
        print(
            "| file | lower bound | optimal arena | target | reached | first best (s) "
            "| proof (s) | found by | nodes |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        for f, (size, lb, nodes, st) in arena.items():
            print(
                f"| {f} | {lb:,} | {size:,} | {TARGET[f]:,} | "
                f"{'yes' if size <= TARGET[f] else 'no'} | {st['first_best_seconds']:.2f} | "
                f"{_proof(st)} | {st['best_by']} | {nodes:,} |"
            )
    sizes = [int(n) for n in args.perfect.split(",") if n]
    if sizes:
        perfect(sizes, args.seeds, args.time_limit, pools)
    return 0


def _proof(stats: dict) -> str:
    proof = stats.get("proof_seconds")
    return "-" if proof is None else f"{proof:.2f}"


def perfect(sizes: list[int], seeds: int, time_limit: float, pools: list[Pool]) -> None:
    """``optimal`` on generated perfect packings: one row per instance, then a summary."""
    print(f"\n### optimal on perfect packings (time limit {time_limit:g} s)\n")
    print("| buffers | seed | optimum | arena / optimum | first best (s) | proof (s) "
          "| found by |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    summary: dict[int, list[float | None]] = {}
    for n in sizes:
        for seed in range(seeds):
            p = perfect_packing(n, seed=seed)
            plan = plan_memory(p.buffers, "optimal", pools, time_limit=time_limit)
            verify_plan(p.buffers, pools, plan)
            st = plan.stats["global"]
            reached = plan.total_size == p.optimum
            summary.setdefault(n, []).append(st["first_best_seconds"] if reached else None)
            print(f"| {n} | {seed} | {p.optimum:,} | {plan.total_size / p.optimum:.4f} | "
                  f"{st['first_best_seconds']:.2f} | {_proof(st)} | {st['best_by']} |",
                  flush=True)  # fmt: skip
    print("\n| buffers | optimum reached | worst first best (s) |")
    print("|---|---|---|")
    for n, times in summary.items():
        hit = [t for t in times if t is not None]
        worst = f"{max(hit):.2f}" if hit else "-"
        print(f"| {n} | {len(hit)} of {len(times)} | {worst} |")


if __name__ == "__main__":
    sys.exit(main())
