"""``partition-graph``: Relay's PartitionGraph, each annotated region becomes an external function.

Every region of a target other than ``default`` (see ``_regions``) is outlined into a function
named ``tvmgen_default_<target>_main_<n>`` (Relay's mangled name: ``mod-name`` replaces
``default``, characters other than letters, digits and ``_`` in the target become ``_``) with Relay's attributes::

    func.func @tvmgen_default_dnnl_main_0(%dnnl_0_i0: tensor<1x4xf32>) -> tensor<1x4xf32>
        attributes {relay.primitive = 1 : i64, relay.compiler = "dnnl",
                    relay.global_symbol = "tvmgen_default_dnnl_main_0", relay.inline = 1 : i64} {
      %r = relay.nn.relu %dnnl_0_i0 : ...
      func.return %r : ...
    }

and called where the region was. Its parameters are the region's ``compiler_begin`` operands
(one per distinct value, named ``<target>_<n>_i<k>``; constants are copied in unless
``bind-constants=false``, Relay's ``bind_constants``), its results the values under its
``compiler_end`` ops, one result per value however many ends it has (a region with several
outputs returns several results, where Relay returns a tuple). Then every remaining annotation
(the ``default`` ones) is removed. Regions are numbered module-wide in order of appearance.

Each call stands where the region's last output was, moved up (with what it needs) when an op
before it uses an earlier output: the order a depth-first sort of the block would give, found
by looking only at the ops that move, so outlining a block of many regions costs about its
size, not its size times the number of regions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir import Region as IRRegion
from xdsl.passes import ModulePass

from xrelay.dialects.relay import FUNC_ATTRS, ConstantOp
from xrelay.dialects.relay.ops import CompilerBeginOp, CompilerEndOp
from xrelay.transforms._regions import Region, find_regions
from xrelay.transforms.annotate_target import DEFAULT_TARGET

__all__ = ["PartitionGraphPass", "partition_graph"]

_SKIP = (FUNC_ATTRS["Composite"], FUNC_ATTRS["Primitive"], FUNC_ATTRS["Compiler"])


class _Positions:
    """Keys that order a block's ops as the block does, kept up to date as ops move, so
    ordering a region's ops costs its size, not the block's. Keys are ints with gaps;
    when ops are put where no gap is left, the block is renumbered."""

    GAP = 1 << 32

    def __init__(self, block: Block) -> None:
        self.block = block
        self.key: dict[Operation, int] = {}
        self.renumber()

    def renumber(self) -> None:
        self.key = {op: i * self.GAP for i, op in enumerate(self.block.ops)}

    def sorted(self, ops: list[Operation]) -> list[Operation]:
        return sorted(ops, key=self.key.__getitem__)

    def placed_before(self, ops: list[Operation], anchor: Operation) -> None:
        """``ops`` now stand, in this order, just before ``anchor``."""
        before = ops[0].prev_op
        low = self.key[before] if before is not None else self.key[anchor] - self.GAP
        step = (self.key[anchor] - low) // (len(ops) + 1)
        if step == 0:
            self.renumber()
            return
        for k, op in enumerate(ops, 1):
            self.key[op] = low + k * step


def _outline(
    block: Block,
    at: _Positions,
    region: Region,
    name: str,
    symbol: str,
    n: int,
    bind_constants: bool,
) -> func.FuncOp:
    ops = at.sorted(region.ops)  # the block's order now: earlier outlining may have moved ops
    inputs: list[SSAValue] = []
    bound: list[SSAValue] = []
    for op in ops:
        if isinstance(op, CompilerBeginOp):
            value = op.operands[0]
            where = bound if bind_constants and isinstance(value.owner, ConstantOp) else inputs
            if value not in where:
                where.append(value)
    body = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = {}
    for k, arg in enumerate(body.args):
        arg.name_hint = f"{symbol}_{n}_i{k}"
    arg_of: dict[SSAValue, SSAValue] = dict(zip(inputs, body.args, strict=True))
    for value in bound:
        copy = value.owner.clone()  # type: ignore[union-attr]
        body.add_op(copy)
        arg_of[value] = copy.results[0]
    outputs: list[CompilerEndOp] = []
    for op in ops:
        if isinstance(op, CompilerBeginOp):
            mapping[op.results[0]] = arg_of[op.operands[0]]
            continue
        if isinstance(op, CompilerEndOp):
            outputs.append(op)
            continue
        for value in op.operands:
            const = value.owner
            if value not in mapping and isinstance(const, ConstantOp):
                copy = const.clone()
                body.add_op(copy)
                mapping[value] = copy.results[0]
        new_op = op.clone(value_mapper=mapping)
        body.add_op(new_op)
        for old, new in zip(op.results, new_op.results, strict=True):
            mapping[old] = new
    # one result per value: ends of the same value (one per use) share it, as in Relay
    out_index: dict[SSAValue, int] = {}
    for e in outputs:
        out_index.setdefault(e.operands[0], len(out_index))
    results = [mapping[v] for v in out_index]
    body.add_op(func.ReturnOp(*results))
    fn = func.FuncOp(name, ([v.type for v in inputs], [v.type for v in results]), IRRegion(body))
    fn.attributes[FUNC_ATTRS["Primitive"]] = IntegerAttr(1, i64)
    fn.attributes[FUNC_ATTRS["Compiler"]] = StringAttr(region.target)
    fn.attributes[FUNC_ATTRS["global_symbol"]] = StringAttr(name)
    fn.attributes[FUNC_ATTRS["Inline"]] = IntegerAttr(1, i64)
    last = outputs[-1]
    call = func.CallOp(name, inputs, [v.type for v in results])
    block.insert_op_after(call, last)
    at.key[call] = at.key[last]  # the call takes the place of the last end, erased below
    for end in outputs:
        end.results[0].replace_all_uses_with(call.results[out_index[end.operands[0]]])
    for op in reversed(ops):  # users before their operands
        del at.key[op]
        op.detach()
        op.erase(safe_erase=False)
    for value in bound:
        if not value.uses:
            del at.key[value.owner]  # type: ignore[arg-type]
            value.owner.detach()  # type: ignore[union-attr]
            value.owner.erase()  # type: ignore[union-attr]
    _hoist(block, at, call)
    return fn


def _hoist(block: Block, at: _Positions, call: func.CallOp) -> None:
    """Restore def-before-use around the region's new ``call``, the one place where it may
    be broken, as a depth-first sort of the whole block would (operands in order, ops in
    block order), moving only what must move: the call stands where the region's last output
    was, which can be after an op using an earlier output, and before an input of a member
    that comes later (a member whose result no one uses). The call goes up to just before its
    first use, or stays, and what it needs that stood at or after that place goes just before
    it (in depth-first post-order of their operands); the rest of the block does not move."""
    users = [u.operation for r in call.results for u in r.uses if u.operation.parent is block]
    anchor = min([*users, call], key=at.key.__getitem__)
    floor = at.key[anchor]
    moved: list[Operation] = []
    seen = {call}
    stack: list[tuple[Operation, int]] = [(call, 0)]
    while stack:
        op, i = stack.pop()
        if i == len(op.operands):
            moved.append(op)
            continue
        stack.append((op, i + 1))
        owner = op.operands[i].owner
        if (
            isinstance(owner, Operation)
            and owner.parent is block
            and owner not in seen
            and at.key[owner] > floor
        ):
            seen.add(owner)
            stack.append((owner, 0))
    if anchor is call:
        moved.pop()  # the call stays; what it needs goes before it
    if not moved:
        return
    for op in moved:
        op.detach()
        block.insert_op_before(op, anchor)
    at.placed_before(moved, anchor)


def _strip_annotations(block: Block) -> None:
    for op in list(block.ops):
        if isinstance(op, CompilerBeginOp | CompilerEndOp):
            op.results[0].replace_all_uses_with(op.operands[0])
            op.detach()
            op.erase()


def partition_graph(
    module: ModuleOp, mod_name: str = "default", bind_constants: bool = True
) -> int:
    """Outline every non-default region of ``module``; return how many functions were made."""
    counters: dict[str, int] = {}
    made = 0
    for fn in [op for op in module.ops if isinstance(op, func.FuncOp)]:
        if fn.is_declaration or any(a in fn.attributes for a in _SKIP):
            continue
        for block in fn.body.blocks:
            regions, _ = find_regions(block)
            at = _Positions(block)
            for region in regions:
                if region.target == DEFAULT_TARGET or not region.ends:
                    continue
                n = counters.get(region.target, 0)
                counters[region.target] = n + 1
                prefix = f"tvmgen_{mod_name}_" if mod_name else ""
                symbol = re.sub(r"[^0-9A-Za-z_]", "_", region.target)  # Relay sanitizes the name
                new = _outline(
                    block, at, region, f"{prefix}{symbol}_main_{n}", symbol, n, bind_constants
                )
                module.body.block.insert_op_before(new, fn)
                made += 1
            _strip_annotations(block)
    return made


@dataclass(frozen=True)
class PartitionGraphPass(ModulePass):
    """Relay's ``PartitionGraph(mod_name="default")``."""

    name = "partition-graph"
    relay_name: ClassVar[str] = "PartitionGraph"
    relay_opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    mod_name: str = "default"
    bind_constants: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        partition_graph(op, self.mod_name, self.bind_constants)
