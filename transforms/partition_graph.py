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


def _outline(block: Block, region: Region, name: str, symbol: str, n: int, bind_constants: bool) -> func.FuncOp:
    members = set(region.ops)
    inputs: list[SSAValue] = []
    bound: list[SSAValue] = []
    for op in block.ops:
        if isinstance(op, CompilerBeginOp) and op in members:
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
    for op in block.ops:
        if op not in members:
            continue
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
    out_values: list[SSAValue] = []
    for e in outputs:
        if e.operands[0] not in out_values:
            out_values.append(e.operands[0])
    results = [mapping[v] for v in out_values]
    body.add_op(func.ReturnOp(*results))
    fn = func.FuncOp(name, ([v.type for v in inputs], [v.type for v in results]), IRRegion(body))
    fn.attributes[FUNC_ATTRS["Primitive"]] = IntegerAttr(1, i64)
    fn.attributes[FUNC_ATTRS["Compiler"]] = StringAttr(region.target)
    fn.attributes[FUNC_ATTRS["global_symbol"]] = StringAttr(name)
    fn.attributes[FUNC_ATTRS["Inline"]] = IntegerAttr(1, i64)
    last = max(outputs, key=lambda e: list(block.ops).index(e))
    call = func.CallOp(name, inputs, [v.type for v in results])
    block.insert_op_after(call, last)
    for end in outputs:
        end.results[0].replace_all_uses_with(call.results[out_values.index(end.operands[0])])
    for op in reversed(list(block.ops)):
        if op in members:
            block.erase_op(op, safe_erase=False)
    for value in bound:
        if not value.uses:
            block.erase_op(value.owner)  # type: ignore[arg-type]
    _sort(block)
    return fn


def _sort(block: Block) -> None:
    """Order ``block`` so each def precedes its uses, moving as little as possible: an op
    outside the region that used an early output of it now follows the call."""
    placed: set[Operation] = set()
    order: list[Operation] = []

    def place(op: Operation) -> None:
        if op in placed:
            return
        placed.add(op)
        for value in op.operands:
            owner = value.owner
            if isinstance(owner, Operation) and owner.parent is block:
                place(owner)
        order.append(op)

    for op in list(block.ops):
        place(op)
    if order != list(block.ops):
        for op in order:
            op.detach()
            block.add_op(op)


def _strip_annotations(block: Block) -> None:
    for op in list(block.ops):
        if isinstance(op, CompilerBeginOp | CompilerEndOp):
            op.results[0].replace_all_uses_with(op.operands[0])
            block.erase_op(op)


def partition_graph(module: ModuleOp, mod_name: str = "default", bind_constants: bool = True) -> int:
    """Outline every non-default region of ``module``; return how many functions were made."""
    counters: dict[str, int] = {}
    made = 0
    for fn in [op for op in module.ops if isinstance(op, func.FuncOp)]:
        if fn.is_declaration or any(a in fn.attributes for a in _SKIP):
            continue
        for block in fn.body.blocks:
            regions, _ = find_regions(block)
            for region in regions:
                if region.target == DEFAULT_TARGET or not region.ends:
                    continue
                n = counters.get(region.target, 0)
                counters[region.target] = n + 1
                prefix = f"tvmgen_{mod_name}_" if mod_name else ""
                symbol = re.sub(r"[^0-9A-Za-z_]", "_", region.target)  # Relay sanitizes the name
                new = _outline(block, region, f"{prefix}{symbol}_main_{n}", symbol, n, bind_constants)
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
