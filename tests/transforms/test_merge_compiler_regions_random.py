"""annotate-target + merge-compiler-regions + partition-graph on seeded random graphs of two
targets: every merged region is convex (no path leaves it through another region's op and
comes back), the partitioned module defines each value before its uses and verifies, and it
computes what the graph did (run before/after)."""

from __future__ import annotations

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation

from xrelay.testing.random_graphs import TARGET_ATTR, random_target_graph, target_predicates
from xrelay.testing.semantics import check_semantics
from xrelay.transforms._regions import find_regions
from xrelay.transforms.annotate_target import annotate_target
from xrelay.transforms.merge_compiler_regions import merge_compiler_regions
from xrelay.transforms.partition_graph import partition_graph

SEEDS = range(400)


def nonconvex_regions(block: Block) -> list[int]:
    """The ids of the regions of ``block`` on (or below) a cycle of its region graph (each region one
    node, each other op one node): the regions a path leaves and comes back into. Outlining
    makes each region one call, so a region is convex only in this graph: a path out of a
    region's first op into another region may come back from that region's other ops."""
    regions, member = find_regions(block)
    node = {op: member[op].id if op in member else ("op", i) for i, op in enumerate(block.ops)}
    succ: dict[object, set[object]] = {n: set() for n in node.values()}
    waiting = dict.fromkeys(succ, 0)
    for op in block.ops:
        for v in op.operands:
            if isinstance(v.owner, Operation) and v.owner in node and node[v.owner] != node[op]:
                if node[op] not in succ[node[v.owner]]:
                    succ[node[v.owner]].add(node[op])
                    waiting[node[op]] += 1
    ready = [n for n, k in waiting.items() if not k]
    while ready:
        for m in succ[ready.pop()]:
            waiting[m] -= 1
            if not waiting[m]:
                ready.append(m)
    return sorted(r.id for r in regions if waiting[r.id])


def uses_before_defs(module: ModuleOp) -> list[str]:
    out = []
    for fn in module.ops:
        for block in fn.regions[0].blocks:
            seen = set(block.args)
            for op in block.ops:
                out += [
                    f"{op.name} uses {v.name_hint or v}"
                    for v in op.operands
                    if v.owner is not op and v.owner in block.ops and v not in seen
                ]
                seen.update(op.results)
    return out


def byoc(module: ModuleOp) -> None:
    annotate_target(module, ["a", "b"], target_predicates(("a", "b")))
    merge_compiler_regions(module)
    main = next(op for op in module.ops if isinstance(op, func.FuncOp))
    assert nonconvex_regions(main.body.block) == []
    for op in module.walk():
        op.attributes.pop(TARGET_ATTR, None)
    partition_graph(module)
    assert uses_before_defs(module) == []


@pytest.mark.parametrize("first", range(0, len(SEEDS), 100))
def test_merged_regions_are_convex_and_keep_meaning(first: int) -> None:
    for seed in SEEDS[first : first + 100]:
        module = random_target_graph(seed, 1 + seed % 60)
        check_semantics(byoc, module)
