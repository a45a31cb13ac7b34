"""``merge-compiler-regions``: Relay's MergeCompilerRegions, join neighbouring regions of a target.

After annotate-target every supported op is a region of its own. This pass visits the regions
parents first (Relay's ``RegionMerger``) and merges a region into its child when both have the
same target and no path between them leaves through a region of another target (Relay's region
restrictions: a child inherits its parents' restrictions and is restricted from each parent of
another target), so merging never makes a cycle. Then the ``compiler_end`` -> ``compiler_begin``
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


def _merge_block(block: Block) -> None:
    regions, member = find_regions(block)
    if not regions:
        return
    index = {op: i for i, op in enumerate(block.ops)}
    owner: dict[int, Region] = {r.id: r for r in regions}  # region id -> region it merged into
    restrictions: dict[int, set[int]] = {r.id: set() for r in regions}

    def current(r: Region) -> Region:
        while owner[r.id] is not r:
            r = owner[r.id]
        return r

    def parents(r: Region) -> list[Region]:
        out: list[Region] = []
        for begin in sorted(r.begins, key=index.__getitem__):
            producer = begin.operands[0].owner
            if isinstance(producer, Operation) and producer in member:
                p = current(member[producer])
                if p is not r and p not in out:
                    out.append(p)
        return out

    order = sorted(regions, key=lambda r: min(index[e] for e in r.ends) if r.ends else len(index))
    for region in order:
        region = current(region)
        mergeable = parents(region)
        mine = restrictions[region.id]
        for p in mergeable:
            mine |= restrictions[p.id]
        for p in mergeable:
            if p.target != region.target:
                mine.add(p.id)
                continue
            if p.id in mine:
                continue
            region.ops += p.ops
            owner[p.id] = region
            for res in restrictions.values():
                if p.id in res:
                    res.discard(p.id)
                    res.add(region.id)
            mine.discard(region.id)
    for op in list(block.ops):
        if not isinstance(op, CompilerBeginOp):
            continue
        end = op.operands[0].owner
        if not isinstance(end, CompilerEndOp):
            continue
        if current(member[op]) is current(member[end]):
            op.results[0].replace_all_uses_with(end.operands[0])
            block.erase_op(op)
            if not end.results[0].uses:
                block.erase_op(end)


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
