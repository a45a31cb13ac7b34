"""
The planner entry point: ``plan_memory`` dispatching to the algorithms by CLI name.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from xrelay.runtime.memory_plan import (
    Buffer,
    Plan,
    PlanError,
    Pool,
    allowed_pools,
    check_problem,
    default_pools,
    effective_alignment,
    footprint,
    lower_bound,
    plan_storage_ids,
    pool_lower_bound,
)
from xrelay.transforms.planners import greedy

DEFAULT_OPTIMAL_TIME_LIMIT = 60.0


def _greedy_upper(buffers: Sequence[Buffer], pools: Sequence[Pool], until: float) -> Plan | None:
    """The best of the fast greedy plans (least total bytes), or None if none fits; after
    the first plan found, no other is started past ``until`` (a ``perf_counter`` time: on
    dense problems of thousands of buffers each greedy plan takes seconds)."""
    best = None
    for fn in (
        greedy.plan_greedy_by_size,
        greedy.plan_greedy_by_size_first_fit,
        greedy.plan_greedy_hierarchy,
    ):
        if best is not None and time.perf_counter() > until:
            break
        try:
            plan = fn(buffers, pools)
        except PlanError:
            continue
        if best is None or plan.total_size < best.total_size:
            best = plan
    return best


def plan_optimal(
    buffers: Sequence[Buffer],
    pools: Sequence[Pool],
    *,
    time_limit: float | None = None,
    progress: Callable[[str, int | None, int, float], None] | None = None,
    **_,
) -> Plan:
    """Exact branch and bound (see ``exact``) under a time limit (default 60 s), with a
    CP-SAT decision search at the lower bound beside it (``cpsat``); it stops at the
    limit or when the plan is proven optimal, whichever comes first.
    ``progress(pool, best, bound, elapsed)`` is called as the search goes.

    With one pool, the plan is proven optimal (``Plan.optimal``) when the search closes
    the gap to the lower bound or proves every smaller height infeasible. With several
    pools, buffers are first assigned to pools by the best greedy plan (fastest pool
    first, the pools' order) and every pool is then minimised on its own, the time
    split between them; such a plan is never reported optimal, since the assignment
    itself is not searched.
    """
    # imported here: the search kernel pulls in numba (~60 MB), which the heuristics and the
    # runtime (which reads plans through this package) should not pay for
    from xrelay.transforms.planners.exact import Item, minimise

    limit = DEFAULT_OPTIMAL_TIME_LIMIT if time_limit is None else time_limit
    start = time.perf_counter()
    seeds_until = start + limit / 4  # most of the time is the search's
    used_pools = {p.name for b in buffers for p in _candidate_pools(b, pools)}
    if len(used_pools) <= 1:
        pool = next((p for p in pools if p.name in used_pools), pools[0])
        assignment = {pool.name: list(buffers)}
        seed_plan = _greedy_upper(buffers, pools, seeds_until)
    else:
        seed_plan = _greedy_upper(buffers, pools, seeds_until)
        if seed_plan is None:
            # Let the hierarchy planner explain which buffer fits nowhere.
            greedy.plan_greedy_hierarchy(buffers, pools)
        assignment = {p.name: [] for p in pools}
        for b in buffers:
            assignment[seed_plan.offsets[b.name][0]].append(b)
    offsets: dict[str, tuple[str, int]] = {}
    sizes = {p.name: 0 for p in pools}
    proven = True
    stats: dict[str, object] = {}
    active = [p for p in pools if assignment.get(p.name)]
    for k, pool in enumerate(active):
        members = assignment[pool.name]
        keyed = {i: b for i, b in enumerate(members)}
        items = [
            Item(i, footprint(b, pool), effective_alignment(b, pool), b.start, b.end)
            for i, b in keyed.items()
        ]
        upper = upper_offsets = None
        if seed_plan is not None:
            upper_offsets = {i: seed_plan.offsets[b.name][1] for i, b in keyed.items()}
            upper = max((upper_offsets[it.key] + it.size for it in items), default=0)
        lower = pool_lower_bound(members, pool)
        if pool.size is not None and lower > pool.size:
            raise PlanError(
                f"optimal: pool '{pool.name}' holds {pool.size} bytes but its buffers need "
                f"at least {lower} bytes at the same time"
            )
        remaining = limit - (time.perf_counter() - start)
        share = max(remaining / (len(active) - k), 0.0)
        report = None
        if progress is not None:
            def report(best, bound, t, name=pool.name):
                progress(name, best, bound, t)
        res = minimise(items, lower, upper, upper_offsets, pool.size, share, progress=report)
        stats[pool.name] = res.stats
        if res.offsets is None:
            raise PlanError(
                f"optimal: found no plan of the {len(members)} buffers of pool "
                f"'{pool.name}' within its {pool.size} bytes in {share:.1f} s "
                f"(lower bound {lower} bytes)"
            )
        for i, b in keyed.items():
            offsets[b.name] = (pool.name, res.offsets[i])
        sizes[pool.name] = res.height
        proven = proven and res.optimal
    plan = Plan("optimal", offsets, sizes, optimal=proven and len(active) <= 1)
    plan.stats.update(stats)
    return plan


def _candidate_pools(b: Buffer, pools: Sequence[Pool]) -> list[Pool]:
    return allowed_pools(b, pools) if b.size else []


_ALGORITHMS = {
    "naive": greedy.plan_naive,
    "greedy-by-size": greedy.plan_greedy_by_size,
    "greedy-by-size-first-fit": greedy.plan_greedy_by_size_first_fit,
    "greedy-by-conflicts": greedy.plan_greedy_by_conflicts,
    "hill-climb": greedy.plan_hill_climb,
    "storage-ids": plan_storage_ids,
    "position-greedy-hierarchy": greedy.plan_position_greedy_hierarchy,
    "greedy-hierarchy": greedy.plan_greedy_hierarchy,
    "optimal": plan_optimal,
}

ALGORITHMS: tuple[str, ...] = tuple(_ALGORITHMS)
"""Names of all planners, as accepted by ``plan_memory`` and ``relay-plan``."""


def plan_memory(
    buffers: Sequence[Buffer],
    algorithm: str = "greedy-by-size",
    pools: Sequence[Pool] | None = None,
    time_limit: float | None = None,
    seed: int = 0,
    progress: Callable[[str, int | None, int, float], None] | None = None,
) -> Plan:
    """Plan ``buffers`` into ``pools`` (default: one unbounded pool "global" aligned to 16).

    ``time_limit`` (seconds) bounds ``optimal`` and ``hill-climb``; ``seed`` makes
    ``hill-climb`` reproducible; ``progress(pool, best, bound, elapsed)`` follows
    ``optimal``'s search (best height so far or ``None``, proven lower bound, seconds). Raises ``PlanError`` for malformed problems, unknown
    algorithms and buffers that fit in no pool; never returns a partial plan. The plan's
    ``seconds`` is the wall time spent planning.
    """
    if algorithm not in _ALGORITHMS:
        raise PlanError(
            f"unknown planning algorithm '{algorithm}' (known: {', '.join(ALGORITHMS)})"
        )
    pools = list(pools) if pools is not None else default_pools()
    buffers = list(buffers)
    check_problem(buffers, pools)
    start = time.perf_counter()
    kwargs: dict[str, object] = {"time_limit": time_limit, "seed": seed}
    if algorithm == "optimal":
        kwargs["progress"] = progress
    if algorithm == "hill-climb":
        kwargs["lower"] = lower_bound(buffers, pools)
    plan = _ALGORITHMS[algorithm](buffers, pools, **kwargs)
    plan.seconds = time.perf_counter() - start
    plan.algorithm = algorithm
    return plan
