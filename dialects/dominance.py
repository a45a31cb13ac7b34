"""SSA dominance, verified as MLIR does (xDSL 0.74's ``verify`` does not check it).

Every use of a value must be dominated by its definition:

* in the defining block, the defining op comes before the op holding the use (or the op whose
  region holds it); a block argument dominates its whole block;
* in another block of the defining region, the defining block strictly dominates it (blocks
  unreachable from the entry are dominated by everything, as in MLIR);
* a use outside the region that defines the value is never dominated.

A use before its definition parses (xDSL allows forward references), so without this check
``%y = relay.add %z, %x`` followed by ``%z = ...`` is printed back and only fails when run::

    %y = relay.add %z, %x : ...   // error: operand #0 of 'relay.add' uses %z before its definition
    %z = relay.add %x, %x : ...

The cost is linear in the module (one position table per block, one dominator tree per
multi-block region).
"""

from __future__ import annotations

from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.irdl.dominance import DominanceInfo
from xdsl.utils.exceptions import VerifyException

from xrelay.dialects import op_location


class _Dominance:
    def __init__(self) -> None:
        self.positions: dict[int, dict[int, int]] = {}  # id(block) -> id(op) -> index
        self.trees: dict[int, DominanceInfo] = {}  # id(region) -> its blocks' dominators

    def position(self, op: Operation, block: Block) -> int:
        table = self.positions.get(id(block))
        if table is None:
            table = {id(o): i for i, o in enumerate(block.ops)}
            self.positions[id(block)] = table
        return table[id(op)]

    def block_dominates(self, a: Block, b: Block, region: Region) -> bool:
        tree = self.trees.get(id(region))
        if tree is None:
            tree = DominanceInfo(region)
            self.trees[id(region)] = tree
        entry = region.blocks.first
        if entry is not None and not tree.dominates(entry, b):
            return True  # unreachable: MLIR accepts any use there
        return tree.strictly_dominates(a, b)

    def dominates(self, value: SSAValue, user: Operation) -> bool | None:
        """Whether ``value`` dominates its use in ``user``; None if the use is outside the
        region that defines the value."""
        if isinstance(value, OpResult):
            def_op: Operation | None = value.op
            def_block = value.op.parent_block()
        elif isinstance(value, BlockArgument):
            def_op, def_block = None, value.block
        else:
            return True
        if def_block is None:  # a detached definition: nothing to order it against
            return True
        def_region = def_block.parent
        ancestor: Operation | None = user
        while ancestor is not None:
            block = ancestor.parent_block()
            if block is def_block:
                if def_op is None:
                    return True
                if ancestor is def_op:  # used inside its own defining op's regions
                    return False
                return self.position(def_op, block) < self.position(ancestor, block)
            if block is not None and def_region is not None and block.parent is def_region:
                return self.block_dominates(def_block, block, def_region)
            ancestor = ancestor.parent_op()
        return None


def value_name(value: SSAValue) -> str:
    """``%name`` when the value has one, else which result or block argument it is."""
    if value.name_hint:
        return f"%{value.name_hint}"
    if isinstance(value, OpResult):
        # A numeric name (%0) is not kept by the parser: the definition's position stands in.
        where = op_location(value.op)
        at = f" (defined at {where})" if where else ""
        return f"result #{value.index} of '{value.op.name}'{at}"
    if isinstance(value, BlockArgument):
        return f"block argument #{value.index}"
    return "a value"


def verify_dominance(root: Operation) -> None:
    """Raise a ``VerifyException`` (the use's op marked in the printed IR) at the first use of a
    value that its definition does not dominate."""
    dominance = _Dominance()
    for op in root.walk():
        for i, operand in enumerate(op.operands):
            ok = dominance.dominates(operand, op)
            if ok:
                continue
            what = "before its definition" if ok is False else "outside the region that defines it"
            message = f"operand #{i} of '{op.name}' uses {value_name(operand)} {what}"
            op.emit_error(message, VerifyException(message))
