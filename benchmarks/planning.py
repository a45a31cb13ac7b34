"""
Planning benchmark: every planner on the MiniMalloc challenging files A-K.

    python -m xrelay.benchmarks.planning [--time-limit 60] [--algorithms a,b] [--files A,B]

Reads ``benchmarks/data/minimalloc/{A..K}.1048576.csv`` (one unbounded pool,
alignment 1, as MiniMalloc), verifies every plan with ``verify_plan`` and prints two
markdown tables: arena / max-live lower bound, and planning seconds, per file and
algorithm. ``optimal`` results carry ``*`` when proven optimal. Optimal arena sizes in
bytes are printed as a third table next to MiniMalloc's target (1,048,576; C: 1,039,360),
with the search nodes of all probes and their rate (nodes per second of planning time;
the heuristics' searches run side by side, so this is the machine's rate, not a core's).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

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
    args = parser.parse_args(argv)
    algorithms = args.algorithms.split(",")
    files = args.files.split(",")
    pools = [Pool("global", None, alignment=1)]
    ratio: dict[tuple[str, str], str] = {}
    seconds: dict[tuple[str, str], str] = {}
    arena: dict[str, tuple[int, int, bool | None, float, int]] = {}
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
                arena[f] = (plan.total_size, lb, plan.optimal, plan.seconds, nodes)
            print(f"{f} {alg}: {plan.total_size} ({ratio[f, alg]}) {plan.seconds:.2f}s",
                  file=sys.stderr, flush=True)  # fmt: skip

    def table(title: str, cells: dict[tuple[str, str], str]) -> None:
        print(f"\n### {title}\n")
        print("| file | " + " | ".join(algorithms) + " |")
        print("|---|" + "---|" * len(algorithms))
        for f in files:
            print(f"| {f} | " + " | ".join(cells[f, a] for a in algorithms) + " |")

    table("Arena / max-live lower bound (* = proven optimal)", ratio)
    table("Planning time (s)", seconds)
    if arena:
        print("\n### optimal vs MiniMalloc target\n")
        print(
            "| file | lower bound | optimal arena | target | reached | proven | seconds "
            "| nodes | nodes/s |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        for f, (size, lb, proven, secs, nodes) in arena.items():
            print(
                f"| {f} | {lb:,} | {size:,} | {TARGET[f]:,} | "
                f"{'yes' if size <= TARGET[f] else 'no'} | {'yes' if proven else 'no'} | "
                f"{secs:.2f} | {nodes:,} | {nodes / max(secs, 1e-9):,.0f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
