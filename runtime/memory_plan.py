"""
Data model of static memory planning: buffers, pools, plans, and their checks.

A buffer is a block of bytes live over an inclusive range of schedule steps. A plan
assigns every buffer a pool and a byte offset inside that pool such that no two buffers
whose lifetimes overlap share a byte. Everything here is plain Python so that the planners
can be used (and tested) without any IR; the memory dialect produces these objects.

Conventions used by every planner:

* lifetimes are inclusive: ``[start, end]`` with ``start <= end``; two buffers conflict when
  ``a.start <= b.end and b.start <= a.end``;
* a buffer placed in pool ``p`` has the effective alignment
  ``max(buffer.alignment, p.alignment)``; its offset (relative to the pool start) is a
  multiple of it and its *footprint* is its size rounded up to it;
* a pool's used size (``Plan.pool_sizes``) is the highest ``offset + footprint`` in it;
* size-0 buffers are placed at offset 0 and never conflict with anything.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from xrelay.error import TVMError

BUFFER_KINDS = ("intermediate", "workspace", "input", "output", "constant")

DEFAULT_POOL_NAME = "global"
DEFAULT_POOL_ALIGNMENT = 16


class PlanError(TVMError):
    """A problem cannot be planned, or a plan is invalid for its problem."""


@dataclass(frozen=True)
class Buffer:
    """A block of ``size`` bytes live from step ``start`` to step ``end`` (both inclusive)."""

    name: str
    size: int
    start: int
    end: int
    alignment: int = 1
    kind: str = "intermediate"
    pools: tuple[str, ...] | None = None
    """Allowed pools in priority order (``None``: any pool, in the pools' order)."""
    forbidden_pools: tuple[str, ...] = ()

    def __post_init__(self):
        if self.size < 0:
            raise PlanError(f"buffer '{self.name}' has a negative size {self.size}")
        if self.start > self.end:
            raise PlanError(
                f"buffer '{self.name}' has an empty lifetime [{self.start}, {self.end}]"
            )
        if self.alignment < 1:
            raise PlanError(f"buffer '{self.name}' has alignment {self.alignment} < 1")
        if self.kind not in BUFFER_KINDS:
            raise PlanError(
                f"buffer '{self.name}' has unknown kind '{self.kind}' "
                f"(known: {', '.join(BUFFER_KINDS)})"
            )
        if isinstance(self.pools, list):
            object.__setattr__(self, "pools", tuple(self.pools))
        if isinstance(self.forbidden_pools, list):
            object.__setattr__(self, "forbidden_pools", tuple(self.forbidden_pools))

    def conflicts(self, other: Buffer) -> bool:
        """Whether both buffers are live at a common step and both hold bytes."""
        return (
            self.size > 0
            and other.size > 0
            and self.start <= other.end
            and other.start <= self.end
        )


@dataclass(frozen=True)
class Pool:
    """A memory region; ``size=None`` means unbounded. Offsets are relative to its start."""

    name: str
    size: int | None = None
    alignment: int = DEFAULT_POOL_ALIGNMENT
    base_address: int = 0

    def __post_init__(self):
        if self.size is not None and self.size < 0:
            raise PlanError(f"pool '{self.name}' has a negative size {self.size}")
        if self.alignment < 1:
            raise PlanError(f"pool '{self.name}' has alignment {self.alignment} < 1")
        if self.base_address < 0:
            raise PlanError(f"pool '{self.name}' has a negative base address")


@dataclass
class Plan:
    """The result of a planner.

    ``offsets`` maps each buffer name to ``(pool name, offset inside the pool)``;
    ``pool_sizes`` holds the used bytes of every pool (the arena to allocate, 0 if unused).
    ``storage_ids``/``storage_sizes`` are only set by the shared-object planner
    (``storage-ids``): the object of every buffer and the byte size of every object.
    """

    algorithm: str
    offsets: dict[str, tuple[str, int]]
    pool_sizes: dict[str, int]
    optimal: bool | None = None
    seconds: float = 0.0
    storage_ids: dict[str, int] | None = None
    storage_sizes: dict[int, int] | None = None
    stats: dict[str, object] = field(default_factory=dict)
    """Free-form planner statistics (search nodes, bounds tried, ...)."""

    @property
    def total_size(self) -> int:
        """Sum of the used sizes of all pools."""
        return sum(self.pool_sizes.values())


def align_up(value: int, alignment: int) -> int:
    """The smallest multiple of ``alignment`` that is ``>= value``."""
    return -(-value // alignment) * alignment


def effective_alignment(buffer: Buffer, pool: Pool) -> int:
    return max(buffer.alignment, pool.alignment)


def footprint(buffer: Buffer, pool: Pool) -> int:
    """Bytes a buffer occupies in a pool: its size rounded up to its effective alignment."""
    return align_up(buffer.size, effective_alignment(buffer, pool))


def default_pools() -> list[Pool]:
    return [Pool(DEFAULT_POOL_NAME, None, DEFAULT_POOL_ALIGNMENT)]


def check_problem(buffers: Sequence[Buffer], pools: Sequence[Pool]) -> None:
    """Reject malformed problems: duplicate names, no pools, unknown pool references."""
    if not pools:
        raise PlanError("no pools given")
    pool_names = [p.name for p in pools]
    if len(set(pool_names)) != len(pool_names):
        dup = sorted({n for n in pool_names if pool_names.count(n) > 1})
        raise PlanError(f"duplicate pool names: {', '.join(dup)}")
    for p in pools:
        if p.base_address % p.alignment:
            raise PlanError(
                f"pool '{p.name}' base address {p.base_address:#x} is not a multiple "
                f"of its alignment {p.alignment}"
            )
    # The common case in bulk: distinct names, and each distinct pool constraint valid. Any
    # problem found is reported by the loop below, which names the first offending buffer.
    names = [b.name for b in buffers]
    if len(set(names)) == len(names):
        constraints = {(b.pools, b.forbidden_pools) for b in buffers}
        known = set(pool_names)
        if all(
            known.issuperset((pins or ()) + forbidden)
            and any(p not in forbidden for p in (pins if pins is not None else pool_names))
            for pins, forbidden in constraints
        ):
            return
    seen: set[str] = set()
    for b in buffers:
        if b.name in seen:
            raise PlanError(f"duplicate buffer name '{b.name}'")
        seen.add(b.name)
        for name in (b.pools or ()) + b.forbidden_pools:
            if name not in pool_names:
                raise PlanError(
                    f"buffer '{b.name}' refers to unknown pool '{name}' "
                    f"(pools: {', '.join(pool_names)})"
                )
        if not allowed_pools(b, pools):
            raise PlanError(f"buffer '{b.name}' is allowed in no pool")


def allowed_pools(buffer: Buffer, pools: Sequence[Pool]) -> list[Pool]:
    """The pools a buffer may go to, in priority order."""
    by_name = {p.name: p for p in pools}
    order = [by_name[n] for n in buffer.pools] if buffer.pools is not None else list(pools)
    return [p for p in order if p.name not in buffer.forbidden_pools]


def _sweep(items: Iterable[tuple[int, int, int]]) -> tuple[int, int]:
    """Max over steps of the summed weight of live ``(weight, start, end)`` items, and
    the first step where that max occurs."""
    events: dict[int, int] = {}
    for weight, start, end in items:
        if weight:
            events[start] = events.get(start, 0) + weight
            events[end + 1] = events.get(end + 1, 0) - weight
    best, best_step, live = 0, 0, 0
    for step in sorted(events):
        live += events[step]
        if live > best:
            best, best_step = live, step
    return best, best_step


def _sweep_columns(weights: list[int], starts: list[int], ends: list[int]) -> int:
    """``_sweep(zip(weights, starts, ends))[0]``, by numpy when the values allow it."""
    limit = 1 << 61
    try:
        w = np.array(weights, dtype=np.int64)
        steps = np.array(starts + [e + 1 for e in ends], dtype=np.int64)
    except OverflowError:
        return _sweep(zip(weights, starts, ends))[0]
    if not len(w) or float(np.abs(w).sum(dtype=np.float64)) >= limit or np.abs(steps).max() >= limit:
        return _sweep(zip(weights, starts, ends))[0]
    delta = np.concatenate((w, -w))
    order = np.argsort(steps, kind="stable")
    live = np.cumsum(delta[order])
    # The live bytes after all of a step's events: at the last event of each step.
    ordered = steps[order]
    last = np.ones(len(ordered), dtype=bool)
    last[:-1] = ordered[1:] != ordered[:-1]
    return max(0, int(live[last].max()))


def peak(buffers: Sequence[Buffer]) -> tuple[int, int]:
    """Max live bytes (unaligned sizes) over all steps and the first step where it occurs."""
    return _sweep((b.size, b.start, b.end) for b in buffers)


def lower_bound(buffers: Sequence[Buffer], pools: Sequence[Pool] | None = None) -> int:
    """Max over steps of live bytes, each buffer counted with its smallest footprint over
    the pools it may use. No plan can use fewer bytes in total over all pools.

    When the buffers fall into groups whose allowed pools do not overlap (one group per
    memory space of a device-planned program), no two groups can share bytes, so the bound
    is the sum of the groups' bounds."""
    pools = list(pools) if pools is not None else default_pools()
    # Each distinct pool constraint resolved once: its pools' names and alignments.
    resolved: dict[tuple, tuple[frozenset[str], tuple[int, ...]]] = {}
    groups: dict[frozenset[str], list[Buffer]] = {}
    weights = []
    for b in buffers:
        key = (b.pools, b.forbidden_pools)
        found = resolved.get(key)
        if found is None:
            allowed = allowed_pools(b, pools)
            found = resolved[key] = (
                frozenset(p.name for p in allowed),
                tuple(sorted({p.alignment for p in allowed})),
            )
        names, aligns = found
        groups.setdefault(names, []).append(b)
        if len(aligns) == 1:
            weights.append(align_up(b.size, max(b.alignment, aligns[0])))
        else:
            weights.append(min(align_up(b.size, max(b.alignment, a)) for a in aligns))
    keys = list(groups)
    if len(keys) > 1 and not any(a & b for i, a in enumerate(keys) for b in keys[i + 1 :]):
        return sum(lower_bound(group, pools) for group in groups.values())
    return _sweep_columns(weights, [b.start for b in buffers], [b.end for b in buffers])


def pool_lower_bound(buffers: Sequence[Buffer], pool: Pool) -> int:
    """Max live footprint bytes if all ``buffers`` are placed in ``pool``."""
    return _sweep((footprint(b, pool), b.start, b.end) for b in buffers)[0]


def verify_plan(buffers: Sequence[Buffer], pools: Sequence[Pool] | None, plan: Plan) -> None:
    """Check a plan independently of the planner that made it; raise ``PlanError``.

    Checked: every buffer has an offset in a known pool that it may use; offsets are
    multiples of the effective alignment and non-negative; every buffer lies within its
    pool's size and within the pool size reported by the plan; no two buffers with
    overlapping lifetimes share a byte in the same pool.
    """
    pools = list(pools) if pools is not None else default_pools()
    by_name = {p.name: p for p in pools}
    names = {b.name for b in buffers}
    for extra in sorted(set(plan.offsets) - names):
        raise PlanError(f"plan places unknown buffer '{extra}'")
    per_pool: dict[str, list[tuple[int, int, Buffer]]] = {p.name: [] for p in pools}
    for b in buffers:
        if b.name not in plan.offsets:
            raise PlanError(f"buffer '{b.name}' is missing from the plan")
        pool_name, offset = plan.offsets[b.name]
        pool = by_name.get(pool_name)
        if pool is None:
            raise PlanError(f"buffer '{b.name}' is placed in unknown pool '{pool_name}'")
        if b.pools is not None and pool_name not in b.pools:
            raise PlanError(
                f"buffer '{b.name}' is placed in pool '{pool_name}' but is pinned to "
                f"{', '.join(repr(n) for n in b.pools)}"
            )
        if pool_name in b.forbidden_pools:
            raise PlanError(f"buffer '{b.name}' is placed in forbidden pool '{pool_name}'")
        if offset < 0:
            raise PlanError(f"buffer '{b.name}' has a negative offset {offset}")
        align = effective_alignment(b, pool)
        if b.size and offset % align:
            raise PlanError(
                f"buffer '{b.name}' at offset {offset} in pool '{pool_name}' is not "
                f"aligned to {align} bytes"
            )
        end = offset + b.size
        if pool.size is not None and b.size and end > pool.size:
            raise PlanError(
                f"buffer '{b.name}' [{offset}, {end}) exceeds pool '{pool_name}' "
                f"of {pool.size} bytes"
            )
        used = plan.pool_sizes.get(pool_name, 0)
        if b.size and end > used:
            raise PlanError(
                f"buffer '{b.name}' [{offset}, {end}) exceeds the {used} bytes the plan "
                f"reports for pool '{pool_name}'"
            )
        if b.size:
            per_pool[pool_name].append((offset, end, b))
    for pool_name, placed in per_pool.items():
        # Sweep by first step, keeping the live buffers sorted by offset: while no two
        # overlap, a new buffer can only collide with its neighbours in that order
        # (O(n log n) plus the live set's moves; the old all-pairs sweep was quadratic).
        placed.sort(key=lambda t: t[2].start)
        live: list[tuple[int, int, int]] = []  # (offset, end, index in placed), by offset
        dying: list[tuple[int, int]] = []  # heap of (last step, index in placed)
        for i, (offset, end, b) in enumerate(placed):
            while dying and dying[0][0] < b.start:
                _, j = heapq.heappop(dying)
                live.pop(bisect.bisect_left(live, (placed[j][0], placed[j][1], j)))
            pos = bisect.bisect_left(live, (offset, end, i))
            near = live[max(0, pos - 1) : pos + 1]
            for a_off, a_end, j in near:
                if a_off < end and offset < a_end:
                    (lo_off, lo_end, lo), (hi_off, hi_end, hi) = sorted(
                        [(a_off, a_end, placed[j][2]), (offset, end, b)],
                        key=lambda t: t[:2],
                    )
                    raise PlanError(
                        f"buffers '{lo.name}' (steps {lo.start}..{lo.end}, bytes "
                        f"[{lo_off}, {lo_end})) and '{hi.name}' (steps {hi.start}..{hi.end}, "
                        f"bytes [{hi_off}, {hi_end})) are live at the same time and overlap "
                        f"in pool '{pool_name}'"
                    )
            live.insert(pos, (offset, end, i))
            heapq.heappush(dying, (b.end, i))


def plan_storage_ids(buffers, pools, **_) -> Plan:
    """Relay GraphPlanMemory shared objects (storage tokens).

    Buffers are visited by first step (ties: input order). Before a buffer asks for
    storage, the tokens of buffers whose last step is earlier go back to the free list.
    A request of ``n`` bytes (footprint in the buffer's first allowed pool) takes the
    smallest free token of at least ``n`` bytes with size ``<= 16 n``, else the largest
    free token smaller than ``n`` with size ``>= n // 16`` (which then grows to ``n``),
    else a new token. Tokens are only shared between buffers with the same allowed
    pools (Relay: the same device). Inputs and constants (Relay's params) get tokens that
    are never reused; outputs are never released. The objects are then laid out back to
    back in id order, each in the first of its pools where it still fits, so the result
    is also an offset plan. Size-0 buffers get a token but offset 0.
    """
    match_range = 16
    order = sorted(range(len(buffers)), key=lambda i: (buffers[i].start, i))
    token_group: list[tuple[str, ...]] = []
    token_bytes: list[int] = []
    token_align: list[int] = []
    free: dict[tuple[str, ...], list[tuple[int, int, int]]] = {}  # (key, seq, id)
    holders: list[tuple[int, int, int]] = []  # (end, index, token)
    ids: dict[str, int] = {}
    seq = 0
    for i in order:
        b = buffers[i]
        # Release the tokens of buffers dead before this one starts.
        while holders and holders[0][0] < b.start:
            _, _, tok = heapq.heappop(holders)
            bisect.insort(free[token_group[tok]], (token_bytes[tok], seq, tok))
            seq += 1
        candidates = allowed_pools(b, pools)
        group = tuple(p.name for p in candidates)
        size = footprint(b, candidates[0])
        align = max(effective_alignment(b, p) for p in candidates)
        tok = -1
        lst = free.setdefault(group, [])
        if b.kind not in ("input", "constant"):
            lo = bisect.bisect_left(lst, (size // match_range, -1, -1))
            mid = bisect.bisect_left(lst, (size, -1, -1))
            hi = bisect.bisect_right(lst, (size * match_range, math.inf, math.inf))
            if mid < hi:
                tok = lst.pop(mid)[2]
            elif mid > lo:
                # Among equal keys the last released one, like a multimap walked backwards.
                tok = lst.pop(mid - 1)[2]
        if tok < 0:
            tok = len(token_bytes)
            token_group.append(group)
            token_bytes.append(size)
            token_align.append(align)
        else:
            token_bytes[tok] = max(token_bytes[tok], size)
            token_align[tok] = max(token_align[tok], align)
        ids[b.name] = tok
        if b.kind not in ("input", "constant", "output"):
            heapq.heappush(holders, (b.end, i, tok))
    # Lay the objects out back to back in id order, spilling to the next allowed pool.
    by_name = {p.name: p for p in pools}
    token_place: list[tuple[str, int]] = []
    used = {p.name: 0 for p in pools}
    for tok, nbytes in enumerate(token_bytes):
        for name in token_group[tok]:
            pool = by_name[name]
            nbytes_here = align_up(nbytes, max(token_align[tok], pool.alignment))
            offset = align_up(used[name], max(token_align[tok], pool.alignment))
            if pool.size is None or offset + nbytes_here <= pool.size:
                token_place.append((name, offset))
                used[name] = offset + nbytes_here
                break
        else:
            tenants = sorted(n for n, t in ids.items() if t == tok)
            free_text = ", ".join(
                f"'{n}' has {by_name[n].size - used[n]} bytes left" for n in token_group[tok]
            )
            raise PlanError(
                f"storage-ids: shared object {tok} ({nbytes} bytes, buffers "
                f"{', '.join(repr(t) for t in tenants)}) fits in no pool: {free_text}"
            )
    offsets = {
        b.name: (token_place[ids[b.name]][0], token_place[ids[b.name]][1] if b.size else 0)
        for b in buffers
    }
    plan = Plan("storage-ids", offsets, used)
    plan.storage_ids = ids
    plan.storage_sizes = dict(enumerate(token_bytes))
    return plan
