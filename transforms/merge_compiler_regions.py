"""``merge-compiler-regions``: Relay's MergeCompilerRegions, join neighbouring regions of a target.

After annotate-target every supported op is a region of its own. This pass visits the regions
parents first (Relay's ``RegionMerger``) and merges each of a region's parents of the same target
into it, unless the parent also reaches it through another region (of any target, or of this
one but kept apart): then the merged region would be left by a path and entered again, and
outlining it as one call would make a cycle. The rule is checked against the graph of the
regions as merged so far, not as they were when a region was visited (Relay's restriction sets
are such snapshots, and miss a path that a later merge opens: in ``%b0 -> %b2 <- %a0``,
``%b0 -> %a1``, ``%a0 -> %a2``, ``%a1, %a2 -> %a3``, merging the default ops ``%b0, %b2`` first and
then ``%a0 .. %a3`` into one region makes the two regions each other's parents).

Each region keeps the set of the regions above it (its ancestors, a bitset of original region
ids). A parent merges in when no other parent has it above; when a merge gives the merged
parents new ancestors, the live regions visited since the parent's first member that have it
above take them too. Cost: one bitset OR (regions/64 words) per parent edge, plus that scan
only on merges that join two ancestries; on the chain and residual graphs of
``benchmarks/ir_scaling.py`` with relu and tanh left to ``default``, 5,000 / 20,000 ops take
0.18 / 0.95 s (the restriction sets before: 0.9 / 14-15 s); random graphs whose ops read any
earlier value still grow faster than linearly (5,000 / 20,000 ops: 0.33 / 5.5 s, before
1.0 / 18 s). Then the ``compiler_end`` -> ``compiler_begin``
pairs inside a merged region are removed::

    %0 = relay.annotation.compiler_begin %x {compiler = "dnnl"}
    %1 = relay.nn.relu %0
    %2 = relay.annotation.compiler_end %1 {compiler = "dnnl"}
    %3 = relay.annotation.compiler_begin %2 {compiler = "dnnl"}
    %4 = relay.tanh %3
    %5 = relay.annotation.compiler_end %4 {compiler = "dnnl"}

becomes one region ``compiler_begin %x -> relu -> tanh -> compiler_end``. ``default`` regions
merge like any other, as in Relay.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass

from xrelay.dialects.relay import FUNC_ATTRS
from xrelay.dialects.relay.ops import CompilerBeginOp, CompilerEndOp
from xrelay.transforms._regions import Region, find_regions

__all__ = ["MergeCompilerRegionsPass", "merge_compiler_regions"]

_SKIP = (FUNC_ATTRS["Composite"], FUNC_ATTRS["Primitive"], FUNC_ATTRS["Compiler"])


def _parents_first(
    regions: list[Region], producers: list[list[Region]], index: dict[Operation, int]
) -> list[Region]:
    """The regions with every producer before its consumers (Kahn's order), earliest first end first."""
    key = [min((index[e] for e in r.ends), default=len(index)) for r in regions]
    waiting = [len(ps) for ps in producers]
    consumers: list[list[int]] = [[] for _ in regions]
    for r, ps in zip(regions, producers):
        for p in ps:
            consumers[p.id].append(r.id)
    ready = [(key[r.id], r.id) for r in regions if not waiting[r.id]]
    heapq.heapify(ready)
    out: list[Region] = []
    while ready:
        _, i = heapq.heappop(ready)
        out.append(regions[i])
        for c in consumers[i]:
            waiting[c] -= 1
            if not waiting[c]:
                heapq.heappush(ready, (key[c], c))
    # Regions on a cycle (hand-written annotations) come last, in block order.
    seen = {r.id for r in out}
    return out + sorted((r for r in regions if r.id not in seen), key=lambda r: key[r.id])


def _merge_block(block: Block) -> None:
    regions, member = find_regions(block)
    if not regions:
        return
    index = {op: i for i, op in enumerate(block.ops)}
    owner: dict[int, Region] = {r.id: r for r in regions}  # region id -> region it merged into

    def current(r: Region) -> Region:
        while owner[r.id] is not r:
            r = owner[r.id]
        return r

    # The original region graph: each region's producer regions, in the order of its begins.
    producers: list[list[Region]] = []
    for r in regions:
        ps: list[Region] = []
        for begin in sorted(r.begins, key=index.__getitem__):
            producer = begin.operands[0].owner
            if isinstance(producer, Operation) and producer in member:
                p = member[producer]
                if p is not r and p not in ps:
                    ps.append(p)
        producers.append(ps)
    order = _parents_first(regions, producers, index)

    # Bitsets over original region ids: ``members`` of a live region, and ``above`` -- every region
    # outside it that reaches it (its ancestors). A same-target parent merges in unless it also
    # reaches the region through another region: then it is in another parent's ancestors.
    members = {r.id: 1 << r.id for r in regions}
    above = {r.id: 0 for r in regions}
    visited: list[Region] = []
    first: dict[int, int] = {}  # a live region's earliest visit among its members
    for region in order:
        if owner[region.id] is not region:
            continue
        first[region.id] = len(visited)
        visited.append(region)
        parents: list[Region] = []
        for p in producers[region.id]:
            p = current(p)
            if p is not region and p not in parents:
                parents.append(p)
        mine = above[region.id]
        for p in parents:
            mine |= above[p.id]
        merged: list[Region] = []
        for p in parents:
            if p.target != region.target:
                mine |= members[p.id]
                continue
            if mine & members[p.id]:
                continue
            merged.append(p)
            if len(p.ops) > len(region.ops):  # extend the longer list
                region.ops, p.ops = p.ops, region.ops
            region.ops += p.ops
            owner[p.id] = region
            members[region.id] |= members[p.id]
            first[region.id] = min(first[region.id], first[p.id])
        above[region.id] = mine
        grown = 0  # members of merged parents whose descendants gain ancestors
        start = len(visited)
        for p in merged:
            if mine & ~above[p.id]:
                grown |= members[p.id]
                start = min(start, first[p.id])
        # What a merged parent reached before now also hangs below the other parents' ancestors
        # (only regions visited since the parent's first member can be below it).
        for r in visited[start:] if grown else ():
            if owner[r.id] is r and above[r.id] & grown:
                above[r.id] |= mine
    for op in list(block.ops):
        if not isinstance(op, CompilerBeginOp):
            continue
        end = op.operands[0].owner
        if not isinstance(end, CompilerEndOp):
            continue
        if current(member[op]) is current(member[end]):
            op.results[0].replace_all_uses_with(end.operands[0])
            op.detach()
            op.erase()
            if not end.results[0].uses:
                end.detach()
                end.erase()


def merge_compiler_regions(module: ModuleOp) -> None:
    for fn in [op for op in module.ops if isinstance(op, func.FuncOp)]:
        if fn.is_declaration or any(a in fn.attributes for a in _SKIP):
            continue
        for block in fn.body.blocks:
            _merge_block(block)


@dataclass(frozen=True)
class MergeCompilerRegionsPass(ModulePass):
    """Relay's ``MergeCompilerRegions()``."""

    name = "merge-compiler-regions"
    relay_name: ClassVar[str] = "MergeCompilerRegions"
    relay_opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        merge_compiler_regions(op)
