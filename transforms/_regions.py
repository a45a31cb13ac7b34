"""Annotated regions: the ops between ``compiler_begin`` and ``compiler_end`` annotations.

Relay's ``AnnotatedRegionSet`` on one block: a region holds the ``compiler_begin`` ops on its
inputs, the ops they reach without crossing a ``compiler_end``, and the ``compiler_end`` ops on
its outputs. A ``relay.constant`` used inside a region belongs to no region (it is copied where
it is needed), so two regions never join through a shared constant.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.ir import Block, Operation
from xdsl.utils.exceptions import DiagnosticException

from xrelay.dialects.relay import ConstantOp
from xrelay.dialects.relay.ops import CompilerBeginOp, CompilerEndOp
from xrelay.error import TVMError

__all__ = ["Region", "RegionError", "find_regions"]


class RegionError(DiagnosticException, TVMError):
    """Annotations that do not form regions (one region, two compilers)."""


@dataclass(eq=False)
class Region:
    id: int
    target: str
    ops: list[Operation] = field(default_factory=list)

    @property
    def begins(self) -> list[CompilerBeginOp]:
        return [op for op in self.ops if isinstance(op, CompilerBeginOp)]

    @property
    def ends(self) -> list[CompilerEndOp]:
        return [op for op in self.ops if isinstance(op, CompilerEndOp)]


def find_regions(block: Block) -> tuple[list[Region], dict[Operation, Region]]:
    """The regions of ``block`` in order of their first op, and each member op's region."""
    parent: dict[Operation, Operation] = {}

    def find(op: Operation) -> Operation:
        root = op
        while parent.get(root, root) is not root:
            root = parent[root]
        while op is not root:
            parent[op], op = root, parent.get(op, op)
        return root

    for op in block.ops:
        if isinstance(op, CompilerBeginOp | ConstantOp):
            continue
        for value in op.operands:
            producer = value.owner
            if not isinstance(producer, Operation) or producer.parent is not block:
                continue
            if isinstance(producer, CompilerEndOp | ConstantOp):
                continue
            a, b = find(op), find(producer)
            if a is not b:
                parent[a] = b
    groups: dict[Operation, list[Operation]] = {}
    for op in block.ops:
        if not isinstance(op, ConstantOp):
            groups.setdefault(find(op), []).append(op)
    regions: list[Region] = []
    member: dict[Operation, Region] = {}
    for ops in groups.values():
        targets = {op.attrs["compiler"] for op in ops if isinstance(op, CompilerBeginOp | CompilerEndOp)}
        if not targets:
            continue
        if len(targets) > 1:
            raise RegionError(
                f"partition: one annotated region has annotations for several compilers: {', '.join(sorted(targets))}"
            )
        region = Region(len(regions), targets.pop(), ops)
        regions.append(region)
        for op in ops:
            member[op] = region
    return regions, member
