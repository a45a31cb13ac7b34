"""The machinery of Relay's horizontal fusion (``combine_parallel_op.cc``), shared by
``combine-parallel-conv2d``, ``combine-parallel-dense`` and ``combine-parallel-batch-matmul``.

Relay's algorithm, on SSA:

1. **Find branches.** Every supported op of the given kind whose first operand (the data) is
   shared with others starts a branch. A branch grows through the op's only *child* while that
   child is elementwise or broadcast (fusion pattern ``<= BROADCAST``). A child is a relay op or
   a call using the value, as in Relay, where only calls count: a use by ``func.return`` or by
   ``concatenate``/``stack`` (Relay's tuples) is not a child. Ops unreachable from the return
   are ignored, as Relay never visits them.
2. **Group branches.** Branches from the same data form groups of mutually combinable ops
   (``can_ops_be_combined``); groups smaller than ``min_num_branches`` are left alone.
3. **Combine.** The group's ops become one op (``make_combined_op``); then level by level the
   followers are combined while every branch has the same op with equal attributes there, fed by
   the previous level in the same operand position, with compatible other operands
   (``check_level`` / ``is_arg_compatible``); the other operands are joined
   (``make_combined_call_from_following_ops``). The last combined level is split back into
   one value per branch (``update_group_output``), which replaces the branch's last op.

Departures, each to keep the meaning of the program: a branch starts only at a *supported* op
(Relay also starts one at an unsupported op when the data has a supported one, and would combine
grouped convolutions wrongly); a group whose combined ops would need a value computed from one of
the values they replace (a cycle) is left alone.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.irdl import VarOperandDef

from xrelay.dialects.relay import RELAY_OPS, OpPattern, RelayOp, shape_of

Branch = list[Operation]
Group = list[Branch]


def shape(value: SSAValue) -> tuple[int | None, ...]:
    t = value.type
    assert isinstance(t, TensorType)
    return shape_of(t)


def element(value: SSAValue) -> Any:
    t = value.type
    assert isinstance(t, TensorType)
    return t.element_type


def _takes_tuple(op: Operation) -> bool:
    """concatenate/stack: Relay passes them a tuple, whose fields are not call children."""
    return isinstance(op, RelayOp) and any(
        isinstance(d, VarOperandDef) for _, d in type(op).get_irdl_definition().operands
    )


def _live_ops(block: Block) -> set[Operation]:
    """Ops the function's return depends on (what a Relay visitor would reach)."""
    live: set[Operation] = set()
    ret = block.last_op
    if ret is None:
        return live
    stack = [ret]
    while stack:
        op = stack.pop()
        if op in live:
            continue
        live.add(op)
        for v in op.operands:
            owner = v.owner
            if isinstance(owner, Operation) and owner.parent_block() is block:
                stack.append(owner)
    return live


class Builder:
    """Collects new, not yet inserted relay ops in creation (hence dependency) order."""

    def __init__(self) -> None:
        self.ops: list[Operation] = []

    def __call__(self, name: str, operands: Sequence[SSAValue], **attrs: Any) -> SSAValue:
        return self.op(name, operands, **attrs).results[0]

    def op(self, name: str, operands: Sequence[SSAValue], **attrs: Any) -> RelayOp:
        new = RELAY_OPS[name].make(list(operands), **attrs)
        self.ops.append(new)
        return new

    def discard(self) -> None:
        for op in reversed(self.ops):
            op.erase()
        self.ops.clear()


class ParallelOpCombiner:
    """Relay's ``ParallelOpCombiner``: subclasses give the op and the hooks."""

    op_name: str = ""
    """The Relay name of the ops to combine (``nn.conv2d``)."""

    def __init__(self, min_num_branches: int):
        self.min_num_branches = min_num_branches

    # ---- hooks ---------------------------------------------------------------------------

    def is_supported_op(self, op: RelayOp) -> bool:
        return True

    def can_ops_be_combined(self, a: RelayOp, b: RelayOp) -> bool:
        raise NotImplementedError

    def make_combined_op(self, b: Builder, group: Group) -> SSAValue:
        raise NotImplementedError

    def is_arg_compatible(self, a: Operation, b: Operation, index: int) -> bool:
        raise NotImplementedError

    def join_operand(self, b: Builder, group: Group, depth: int, index: int, parent_index: int) -> SSAValue:
        """Operand ``index`` of the branches' ops at ``depth`` joined into one value."""
        raise NotImplementedError

    def make_combined_call_from_following_ops(
        self, b: Builder, data: SSAValue, group: Group, depth: int, parent_index: int
    ) -> SSAValue:
        call = group[0][depth]
        args = [
            data if i == parent_index else self.join_operand(b, group, depth, i, parent_index)
            for i in range(len(call.operands))
        ]
        return b(call.RELAY_NAME, args, **call.attrs)  # type: ignore[attr-defined]

    def update_group_output(self, b: Builder, data: SSAValue, group: Group, depth: int) -> list[SSAValue]:
        """One value per branch to replace the branch's op at ``depth``."""
        raise NotImplementedError

    # ---- the algorithm -------------------------------------------------------------------

    def run(self, module: ModuleOp) -> bool:
        changed = False
        for op in list(module.ops):
            if not isinstance(op, func.FuncOp) or op.is_declaration:
                continue
            # Relay's function passes skip primitive (fused) and external functions.
            if "relay.primitive" in op.attributes or "relay.compiler" in op.attributes:
                continue
            changed |= self.combine(op.body.block)
        return changed

    def combine(self, block: Block) -> bool:
        changed = False
        for group in self.find_groups(block):
            if len(group) >= self.min_num_branches:
                changed |= self.combine_branches(block, group)
        return changed

    def find_groups(self, block: Block) -> list[Group]:
        live = _live_ops(block)
        roots: dict[SSAValue, None] = {}
        children: dict[SSAValue, list[Operation]] = {}
        for op in block.ops:
            if op not in live or isinstance(op, func.ReturnOp) or _takes_tuple(op):
                continue
            if isinstance(op, RelayOp) and op.RELAY_NAME == self.op_name and self.is_supported_op(op):
                roots.setdefault(op.operands[0])
                children.setdefault(op.operands[0], []).append(op)
            else:
                for v in op.operands:
                    children.setdefault(v, []).append(op)
        groups: list[Group] = []
        for root in roots:
            first = len(groups)
            for child in children[root]:
                if not (
                    isinstance(child, RelayOp)
                    and child.RELAY_NAME == self.op_name
                    and self.is_supported_op(child)
                ):
                    continue
                branch = self._branch(child, children)
                for group in groups[first:]:
                    if self.can_ops_be_combined(child, group[0][0]):
                        group.append(branch)
                        break
                else:
                    groups.append([branch])
        return groups

    @staticmethod
    def _branch(op: Operation, children: dict[SSAValue, list[Operation]]) -> Branch:
        branch = [op]
        while True:
            users = children.get(branch[-1].results[0], [])
            if len(users) != 1:
                return branch
            user = users[0]
            if not isinstance(user, RelayOp) or user.PATTERN > OpPattern.BROADCAST:
                return branch
            branch.append(user)

    def check_level(self, group: Group, depth: int, parent_index: int) -> bool:
        call = group[0][depth]
        for branch in group[1:]:
            other = branch[depth]
            if (
                other.name != call.name
                or other.properties != call.properties
                or len(other.operands) != len(call.operands)
            ):
                return False
            if other.operands[parent_index] is not branch[depth - 1].results[0]:
                return False
            for i in range(len(call.operands)):
                if i != parent_index and not self.is_arg_compatible(call, other, i):
                    return False
        return True

    def combine_branches(self, block: Block, group: Group) -> bool:
        # A branch may end in ops another group already replaced.
        group = [_alive_prefix(branch, block) for branch in group]
        b = Builder()
        combined = self.make_combined_op(b, group)
        depth = min(len(branch) for branch in group)
        i = 1
        while i < depth:
            prev = group[0][i - 1].results[0]
            parent_index = next(
                (k for k, v in enumerate(group[0][i].operands) if v is prev), None
            )
            if parent_index is None or not self.check_level(group, i, parent_index):
                break
            combined = self.make_combined_call_from_following_ops(b, combined, group, i, parent_index)
            i += 1
        last = i - 1
        outputs = self.update_group_output(b, combined, group, last)
        replaced = [branch[last].results[0] for branch in group]
        if _creates_cycle(block, b.ops, replaced):
            b.discard()
            return False
        _insert(block, b.ops)
        for old, new in zip(replaced, outputs, strict=True):
            old.replace_all_uses_with(new)
        for branch in group:
            for op in reversed(branch[: last + 1]):
                if all(not r.uses for r in op.results):
                    op.detach()
                    op.erase()
        _restore_order(block)
        return True


def slices(
    b: Builder, data: SSAValue, axis: int, widths: Sequence[int], rank: int | None = None, start: int = 0
) -> list[SSAValue]:
    """Consecutive ``widths`` from ``start`` along ``axis`` of ``data`` as ``strided_slice``s in
    size mode (Relay's form: begin/end listed up to ``axis``, or over all ``rank`` axes)."""
    n = axis + 1 if rank is None else rank
    out = []
    index = start
    for width in widths:
        begin, end = [0] * n, [-1] * n
        begin[axis], end[axis] = index, width
        index += width
        out.append(b("strided_slice", [data], begin=begin, end=end, strides=[1] * n, slice_mode="size"))
    return out


def _alive_prefix(branch: Branch, block: Block) -> Branch:
    for k, op in enumerate(branch):
        if op.parent_block() is not block:
            return branch[:k]
    return branch


def _external_operands(new_ops: list[Operation]) -> list[SSAValue]:
    made = {r for op in new_ops for r in op.results}
    return [v for op in new_ops for v in op.operands if v not in made]


def _creates_cycle(block: Block, new_ops: list[Operation], replaced: list[SSAValue]) -> bool:
    """Whether a value the new ops read depends on a value they are to replace."""
    downstream: set[Operation] = set()
    stack = [use.operation for v in replaced for use in v.uses]
    while stack:
        op = stack.pop()
        if op in downstream or op in new_ops:
            continue
        downstream.add(op)
        stack.extend(use.operation for r in op.results for use in r.uses)
    replaced_set = set(replaced)
    for v in _external_operands(new_ops):
        if v in replaced_set or v.owner in downstream:
            return True
    return False


def _insert(block: Block, new_ops: list[Operation]) -> None:
    """Insert after the last op defining a value the new ops read (at the top if none)."""
    index = {op: k for k, op in enumerate(block.ops)}
    anchor: Operation | None = None
    for v in _external_operands(new_ops):
        owner = v.owner
        if isinstance(owner, Operation) and owner in index:
            if anchor is None or index[owner] > index[anchor]:
                anchor = owner
    if anchor is None:
        first = block.first_op
        assert first is not None
        block.insert_ops_before(new_ops, first)
    else:
        block.insert_ops_after(new_ops, anchor)


def _restore_order(block: Block) -> None:
    """Reorder the block topologically if a use now precedes its definition (stable:
    ops keep their relative order wherever the dependencies allow)."""
    ops = list(block.ops)
    pos = {op: k for k, op in enumerate(ops)}
    if all(
        not (isinstance(v.owner, Operation) and v.owner in pos and pos[v.owner] > pos[op])
        for op in ops
        for v in op.operands
    ):
        return
    waiting = {op: 0 for op in ops}
    users: dict[Operation, list[Operation]] = {op: [] for op in ops}
    for op in ops:
        for v in op.operands:
            owner = v.owner
            if isinstance(owner, Operation) and owner in pos:
                waiting[op] += 1
                users[owner].append(op)
    ready = [pos[op] for op in ops if waiting[op] == 0]
    heapq.heapify(ready)
    order: list[Operation] = []
    while ready:
        op = ops[heapq.heappop(ready)]
        order.append(op)
        for user in users[op]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, pos[user])
    assert len(order) == len(ops), "combining created a cycle"
    for op in ops:
        op.detach()
    block.add_ops(order)
