"""
Human-readable views of a plan: ExecuTorch-style tables and a matplotlib picture.

``format_report`` is xrelay's table (arena used, live peak, lower bound, algorithm);
``memory_planning_info`` / ``print_memory_planning_info`` and
``peak_memory_usages_per_memory`` are ExecuTorch Cadence's reporting forms, with its columns
and its unrounded per-memory peaks.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from xrelay.runtime.memory_plan import (
    Buffer,
    Plan,
    Pool,
    _sweep,
    default_pools,
    footprint,
    lower_bound,
    peak,
)


def _placed_peak(buffers: Sequence[Buffer], pools: Sequence[Pool], plan: Plan) -> tuple[int, int]:
    """Max over steps of live footprint bytes across all pools, and its first step."""
    by_name = {p.name: p for p in pools}
    return _sweep(
        (footprint(b, by_name[plan.offsets[b.name][0]]), b.start, b.end) for b in buffers
    )


def format_report(buffers: Sequence[Buffer], pools: Sequence[Pool] | None, plan: Plan) -> str:
    """Per-pool table (name, base address, size, used bytes, live peak) and a summary
    (peak across pools with its step, lower bound, arena/lower-bound ratio, algorithm,
    time, optimality)."""
    from tabulate import tabulate  # (printing only: it imports importlib.metadata, 2.5 MB)
    pools = list(pools) if pools is not None else default_pools()
    rows = []
    for p in pools:
        members = [b for b in buffers if plan.offsets[b.name][0] == p.name]
        live = _sweep((footprint(b, p), b.start, b.end) for b in members)[0]
        rows.append(
            [
                p.name,
                f"{p.base_address:#x}",
                "unbounded" if p.size is None else p.size,
                plan.pool_sizes.get(p.name, 0),
                live,
                len(members),
            ]
        )
    per_pool = tabulate(
        rows,
        headers=[
            "Memory Space",
            "Base Address",
            "Memory Size (Bytes)",
            "Arena Used (Bytes)",
            "Peak Live (Bytes)",
            "Buffers",
        ],
        tablefmt="outline",
    )
    total_peak, step = _placed_peak(buffers, pools, plan)
    lb = lower_bound(buffers, pools)
    total = plan.total_size
    ratio = f"{total / lb:.4f}" if lb else "n/a"
    optimal = {True: "yes (proven)", False: "not proven", None: "n/a"}[plan.optimal]
    summary_rows = [
        ["Peak memory usage across all spaces", f"{total_peak} bytes", f"Step {step}"],
        ["Lower bound (max live bytes)", f"{lb} bytes", ""],
        ["Total arena size", f"{total} bytes", f"ratio to lower bound {ratio}"],
        ["Algorithm", plan.algorithm, f"{plan.seconds:.3f} s"],
        ["Optimal", optimal, ""],
    ]
    if plan.storage_sizes is not None:
        summary_rows.append(["Storage objects", str(len(plan.storage_sizes)), ""])
    summary = tabulate(summary_rows, tablefmt="outline")
    return per_pool + "\n" + summary


def plot_plan(
    buffers: Sequence[Buffer],
    pools: Sequence[Pool] | None,
    plan: Plan,
    path: str | Path,
    title: str | None = None,
) -> None:
    """Write a PNG: time on x, offset on y, one rectangle per buffer, one panel per used
    pool (stacked), each with the pool's live-bytes lower bound as a dashed line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    pools = list(pools) if pools is not None else default_pools()
    shown = [p for p in pools if any(plan.offsets[b.name][0] == p.name for b in buffers)]
    shown = shown or pools[:1]
    fig, axes = plt.subplots(
        len(shown), 1, figsize=(12, 3.2 * len(shown) + 1), squeeze=False, sharex=True
    )
    cmap = plt.get_cmap("tab20")
    for ax, pool in zip(axes[:, 0], shown):
        members = [b for b in buffers if plan.offsets[b.name][0] == pool.name and b.size]
        rects = []
        colors = []
        for i, b in enumerate(members):
            offset = plan.offsets[b.name][1]
            rects.append(Rectangle((b.start, offset), b.end + 1 - b.start, b.size))
            colors.append(cmap(i % 20))
        ax.add_collection(
            PatchCollection(rects, facecolor=colors, edgecolor="black", linewidth=0.3)
        )
        used = plan.pool_sizes.get(pool.name, 0)
        lb = _sweep((footprint(b, pool), b.start, b.end) for b in members)[0]
        t0 = min((b.start for b in buffers), default=0)
        t1 = max((b.end + 1 for b in buffers), default=1)
        ax.set_xlim(t0, t1)
        ax.set_ylim(0, max(used, lb, 1) * 1.08)
        ax.axhline(lb, color="red", linestyle="--", linewidth=1, label=f"lower bound {lb}")
        ax.axhline(used, color="blue", linestyle=":", linewidth=1, label=f"arena {used}")
        if pool.size is not None and pool.size <= used * 1.05:
            ax.axhline(pool.size, color="gray", linewidth=1, label=f"pool size {pool.size}")
        ax.set_ylabel(f"{pool.name}: offset (bytes)")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    axes[-1, 0].set_xlabel("step")
    fig.suptitle(
        title or f"{plan.algorithm}: {plan.total_size} bytes, {len(buffers)} buffers"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def peak_memory_usages_per_memory(
    buffers: Sequence[Buffer], pools: Sequence[Pool] | None, plan: Plan
) -> list[int]:
    """ExecuTorch's ``find_peak_memory_usages_per_memory``: for each pool in order, up to the
    last pool that holds a buffer, the highest ``offset + size`` of its buffers -- the byte
    size, not rounded up to the alignment (``plan.pool_sizes`` holds the rounded arena)."""
    pools = list(pools) if pools is not None else default_pools()
    usage = {p.name: 0 for p in pools}
    for b in buffers:
        pool, offset = plan.offsets[b.name]
        usage[pool] = max(usage[pool], offset + b.size)
    used = [i for i, p in enumerate(pools) if any(plan.offsets[b.name][0] == p.name for b in buffers)]
    last = used[-1] + 1 if used else 0
    return [usage[p.name] for p in pools[:last]]


def _info_tables(buffers: Sequence[Buffer], pools: Sequence[Pool] | None, plan: Plan) -> tuple[str, str]:
    from tabulate import tabulate  # (printing only: it imports importlib.metadata, 2.5 MB)
    pools = list(pools) if pools is not None else default_pools()
    peaks = peak_memory_usages_per_memory(buffers, pools, plan)
    rows = [
        [p.name, hex(p.base_address), "unbounded" if p.size is None else p.size, usage]
        for p, usage in zip(pools, peaks)
    ]
    per_space = tabulate(
        rows,
        headers=["Memory Space", "Base Address", "Memory Size (Bytes)", "Peak Memory Usage (Bytes)"],
        tablefmt="outline",
    )
    total, node = peak(buffers)
    summary = tabulate(
        [["Peak memory usage across all spaces", f"{total} bytes", f"Node {node}"]], tablefmt="outline"
    )
    return per_space, summary


def memory_planning_info(buffers: Sequence[Buffer], pools: Sequence[Pool] | None, plan: Plan) -> str:
    """The two tables of ExecuTorch's ``print_memory_planning_info``, as text: per memory
    space (name, base address, size, peak usage as ``peak_memory_usages_per_memory``) and
    the peak across all spaces with the step ("Node") where it occurs. ``format_report``
    is the richer table (arena, live peak, lower bound, algorithm)."""
    return "\n".join(_info_tables(buffers, pools, plan))


def print_memory_planning_info(
    buffers: Sequence[Buffer], pools: Sequence[Pool] | None, plan: Plan
) -> None:
    """ExecuTorch's ``print_memory_planning_info``: log the two tables of
    ``memory_planning_info`` at INFO level (logger ``xrelay.planners``), each after a
    newline, as ExecuTorch does."""
    import logging  # (here: a run-time process that prints nothing does not load logging)

    logger = logging.getLogger("xrelay.planners")
    for table in _info_tables(buffers, pools, plan):
        logger.info("\n" + table)
