"""``merge-composite``: Relay's MergeComposite, pattern matches outlined as composite functions.

Given a pattern table ``[(name, pattern[, check]), ...]`` (patterns from
``xrelay.relay.dataflow_pattern``), each pattern in turn is matched over every function's
ops from the last to the first (Relay's reverse post-DFS order), and every match becomes a
private function marked ``relay.composite = name``, called where the match's root was::

    %c = relay.nn.conv2d %x, %w : ...
    %r = relay.nn.relu %c : ...

with the pattern ``is_op("nn.relu")(is_op("nn.conv2d")(wildcard(), wildcard()))`` named
``"dnnl.conv2d_relu"`` becomes::

    func.func private @dnnl_conv2d_relu(%p0: ..., %p1: ...) -> ...
        attributes {relay.composite = "dnnl.conv2d_relu",
                    relay.partitioned_from_pattern = "nn.conv2d_nn.relu_"} {
      %c = relay.nn.conv2d %p0, %p1 : ...
      %r = relay.nn.relu %c : ...
      func.return %r : ...
    }
    ...
    %r = func.call @dnnl_conv2d_relu(%x, %w) : ...

As in Relay: values matched by wildcards and variables become parameters
``p0, p1, ...`` (Relay: ``FunctionVar_<group>_<i>``) in the pattern's post-DFS order (a value used twice is one
parameter); constants matched by ``is_constant()`` are copied into the function; a match that
overlaps an earlier group of the same pattern is skipped, and so is one whose ``check``
returns false. ``check`` receives the root op of the match (Relay passes the extracted call
expression). Departure: a match whose inner value is also used outside the match is always
rejected (Relay keeps it when the root dominates that use, which recomputes the inner ops).

From the command line the table is named: ``merge-composite{pattern-table=dnnl}`` uses
``partition_for_dnnl``'s patterns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from xrelay.dialects.relay import FUNC_ATTRS, ConstantOp, RelayOp
from xrelay.error import TVMError
from xrelay.transforms._dataflow_pattern import (
    AltPattern,
    AttrPattern,
    CallPattern,
    ConstantPattern,
    DFPattern,
    Match,
    TupleGetItemPattern,
    VarPattern,
    WildcardPattern,
    root_ops,
)
from xrelay.transforms.fuse_ops import _Namer

__all__ = ["MergeCompositeError", "MergeCompositePass", "merge_composite"]

COMPOSITE = FUNC_ATTRS["Composite"]
FROM_PATTERN = FUNC_ATTRS["PartitionedFromPattern"]
PRIMITIVE = FUNC_ATTRS["Primitive"]

PatternEntry = tuple[Any, ...]
"""``(name, pattern)`` or ``(name, pattern, check)``."""


class MergeCompositeError(DiagnosticException, TVMError):
    """A bad pattern table."""


def _owner(bound: SSAValue | Operation) -> Operation:
    return bound if isinstance(bound, Operation) else bound.owner  # type: ignore[return-value]


def _extract(pattern: DFPattern, match: Match, inputs: list[SSAValue], ops: list[Operation]) -> None:
    """Walk the matched pattern in post-DFS order: parameters and matched ops."""
    if isinstance(pattern, AltPattern):
        _extract(match.chosen[pattern], match, inputs, ops)
        return
    if isinstance(pattern, AttrPattern):
        _extract(pattern.pattern, match, inputs, ops)
        return
    if pattern not in match.memo:
        return
    bound = match.memo[pattern]
    if isinstance(pattern, TupleGetItemPattern):
        _extract(pattern.tuple, match, inputs, ops)
    elif isinstance(pattern, CallPattern):
        op = _owner(bound)
        if pattern.args is None:
            for v in op.operands:
                if v not in inputs:
                    inputs.append(v)
        else:
            for arg in pattern.args:
                _extract(arg, match, inputs, ops)
        if op not in ops:
            ops.append(op)
    elif isinstance(pattern, WildcardPattern | VarPattern):
        assert isinstance(bound, SSAValue)
        if bound not in inputs:
            inputs.append(bound)
    elif isinstance(pattern, ConstantPattern):
        const = _owner(bound)
        if const not in ops:
            ops.append(const)


def _check_table(table: Sequence[PatternEntry]) -> list[tuple[str, DFPattern, Callable | None]]:
    out = []
    for entry in table:
        if not isinstance(entry, tuple | list) or len(entry) not in (2, 3):
            raise MergeCompositeError(
                f"merge-composite: a pattern table entry is (name, pattern) or (name, pattern, check), got {entry!r}"
            )
        name, pattern = entry[0], entry[1]
        check = entry[2] if len(entry) == 3 else None
        if not isinstance(name, str) or not isinstance(pattern, DFPattern):
            raise MergeCompositeError(
                f"merge-composite: entry {entry!r} needs a name (str) and a dataflow pattern"
            )
        out.append((name, pattern, check))
    return out


def _merge_in_block(
    block: Block, name: str, pattern: DFPattern, check: Callable | None, namer: _Namer
) -> list[func.FuncOp]:
    new: list[func.FuncOp] = []
    grouped: set[Operation] = set()
    in_order = list(block.ops)
    # each op's place in the block (a call takes its root's), so a match's ops are put in
    # block order without walking the block once per match
    position: dict[Operation, float] = {op: i for i, op in enumerate(in_order)}
    names = root_ops(pattern)
    for root in reversed(in_order):
        if root in grouped or root.parent is not block or not isinstance(root, RelayOp):
            continue
        if names is not None and root.RELAY_NAME not in names:
            continue  # (the match would fail at its first op)
        for value in root.results:
            match = Match()
            if not match.match(pattern, value):
                continue
            inputs: list[SSAValue] = []
            ops: list[Operation] = []
            _extract(pattern, match, inputs, ops)
            computing = [o for o in ops if not isinstance(o, ConstantOp)]
            if root not in computing or any(o in grouped for o in computing):
                continue
            if any(o.parent is not block for o in ops):
                continue
            members = set(ops)
            interior_ok = all(
                use.operation in members
                for o in computing
                for r in o.results
                if r is not value
                for use in r.uses
            )
            if not interior_ok or (check is not None and not check(root)):
                continue
            new.append(_outline(block, name, value, inputs, ops, namer, position))
            grouped.update(computing)
            break
    return new


def _outline(
    block: Block,
    name: str,
    root_value: SSAValue,
    inputs: list[SSAValue],
    ops: list[Operation],
    namer: _Namer,
    position: dict[Operation, float],
) -> func.FuncOp:
    body = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = {}
    for i, (outer, arg) in enumerate(zip(inputs, body.args, strict=True)):
        arg.name_hint = f"p{i}"
        mapping[outer] = arg
    members = sorted(ops, key=position.__getitem__)  # block order keeps every def before its use
    op_names = []
    for op in members:
        new_op = op.clone(value_mapper=mapping)
        body.add_op(new_op)
        for old, new in zip(op.results, new_op.results, strict=True):
            mapping[old] = new
        if isinstance(op, RelayOp):
            op_names.append(op.RELAY_NAME)
    body.add_op(func.ReturnOp(mapping[root_value]))
    fn = func.FuncOp(
        namer(name.replace(".", "_")),
        ([v.type for v in inputs], [root_value.type]),
        Region(body),
        visibility="private",
    )
    fn.attributes[COMPOSITE] = StringAttr(name)
    fn.attributes[FROM_PATTERN] = StringAttr("".join(n + "_" for n in op_names))
    root = root_value.owner
    assert isinstance(root, Operation)
    call = func.CallOp(fn.sym_name.data, inputs, [root_value.type])
    block.insert_op_before(call, root)
    position[call] = position[root] - 0.5
    if root_value.name_hint is not None:
        call.results[0].name_hint = root_value.name_hint
    root_value.replace_all_uses_with(call.results[0])
    for op in reversed(members):  # users before their operands
        if not any(r.uses for r in op.results):
            op.detach()
            op.erase()
    return fn


def merge_composite(module: ModuleOp, table: Sequence[PatternEntry]) -> int:
    """Outline every match of ``table`` in ``module`` (in place); return the number made."""
    entries = _check_table(table)
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
    namer = _Namer(f.sym_name.data for f in funcs)
    made = 0
    for fn in funcs:
        if fn.is_declaration or COMPOSITE in fn.attributes or PRIMITIVE in fn.attributes:
            continue
        for name, pattern, check in entries:
            for block in [b for b in fn.body.blocks]:
                new = _merge_in_block(block, name, pattern, check, namer)
                for f in new:
                    module.body.block.insert_op_before(f, fn)
                made += len(new)
    return made




@dataclass(frozen=True)
class MergeCompositePass(ModulePass):
    """Relay's ``MergeComposite(pattern_table)``; ``pattern_table`` is the table itself, or on
    the command line an engine's name (``dnnl``), which is resolved to the engine's table
    above the passes (``xrelay.backend.engines.resolve_pass``: relay-opt, Relay's Python API)."""

    name = "merge-composite"
    relay_name: ClassVar[str] = "MergeComposite"
    relay_opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ()

    pattern_table: Any = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        table = self.pattern_table
        if table == "":
            raise MergeCompositeError("merge-composite needs a pattern table (pattern-table=<engine>)")
        if isinstance(table, str):
            raise MergeCompositeError(
                f"merge-composite: unknown pattern table '{table}' (an engine's name is resolved "
                "by relay-opt and Relay's Python API; a table of your own is passed itself)"
            )
        merge_composite(op, table)
