"""The dataflow graph fuse-ops partitions: Relay's ``IndexedForwardGraph`` of one function.

Relay builds this graph from an expression tree with ``Tuple`` and ``TupleGetItem`` nodes.
xrelay has no tuple values (docs/design.md, decision 3), so the builder puts *virtual* nodes where
Relay's graph would have them, which makes the graph, and thus the partition, the one Relay
builds for the same program:

* a variadic operand group (``concatenate``/``stack`` operands) is a ``tuple`` node (Relay's
  ``Tuple`` argument, pattern ``TUPLE``): each field has an ``INJECTIVE`` edge to it, and it has
  an edge to the op with the op's pattern;
* each used result of a multi-result op (``split``, ``nn.batch_norm``, ``nn.dropout``, a
  ``func.call`` with several results) is a ``getitem`` node (Relay's ``TupleGetItem``, pattern
  ``INJECTIVE``) with an ``INJECTIVE`` edge from the op; every use of that result goes
  through it;
* a ``func.return`` of several values is an extern ``tuple`` node (Relay's tuple body), one of a
  single value marks that value's node extern.

Op nodes take their pattern from the op class (``PATTERN``); an edge to a ``BROADCAST`` op
becomes ``ELEMWISE`` when the operand's shape equals the result's. Scalar constants of dtype
int32/int64/float32/float64/bool are ``ELEMWISE``; other constants, non-relay ops and calls
are ``OPAQUE``. Function parameters have no node (they are opaque and extern in Relay, which
is the same for fusion). Nodes are numbered in Relay's post-DFS order: a depth-first walk
from the function's result over operands left to right, producers first. Ops that the walk
does not reach are dead to Relay (it has no such ops); the builder reports them in
``dead_ops`` and leaves them out of the graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.irdl import VarOperandDef, VarResultDef

from xrelay.dialects.relay import ConstantOp, OpPattern, RelayOp, dtype_of, shape_of
from xrelay.transforms.dominators import PostDominatorTree

__all__ = ["FusionGraph", "GraphNode", "is_tuple_op"]

_SIMPLE_CONST_DTYPES = frozenset({"int32", "int64", "float32", "float64", "bool"})


@dataclass(eq=False)
class GraphNode:
    """One node of the graph: an op, a virtual tuple or a virtual tuple-get-item."""

    kind: str
    """``"op"``, ``"tuple"`` or ``"getitem"``."""
    op: Operation | None
    """The op (for ``getitem``: the multi-result op; for ``tuple``: the consumer op, or None
    for a returned tuple)."""
    item: int = 0
    """Result index of a ``getitem``; operand-group index of a ``tuple``."""
    fields: list[SSAValue] = field(default_factory=list)
    """The values of a ``tuple`` node."""
    index: int = -1
    pattern: OpPattern = OpPattern.OPAQUE
    extern: bool = False
    outputs: list[tuple[GraphNode, OpPattern]] = field(default_factory=list)
    args: list[GraphNode | SSAValue] = field(default_factory=list)
    """Relay's arguments in order: a node, or a value without a node (a parameter)."""
    seen: bool = False

    def values(self) -> list[SSAValue]:
        """The SSA values this node stands for when it is an argument of another group."""
        if self.kind == "tuple":
            return list(self.fields)
        assert self.op is not None
        if self.kind == "getitem":
            return [self.op.results[self.item]]
        return list(self.op.results)

    def describe(self) -> str:
        if self.kind == "op":
            assert self.op is not None
            return self.op.name
        if self.kind == "getitem":
            assert self.op is not None
            return f"{self.op.name}#{self.item}"
        return "tuple"


def is_tuple_op(op: Operation) -> bool:
    """Whether Relay would see ``op``'s result as a tuple (several or variadic results)."""
    if len(op.results) != 1:
        return True
    if isinstance(op, RelayOp):
        return any(isinstance(d, VarResultDef) for _, d in type(op).get_irdl_definition().results)
    return False


def op_pattern(op: Operation) -> OpPattern:
    """The fusion pattern kind of an op node."""
    if isinstance(op, RelayOp):
        return type(op).PATTERN
    if isinstance(op, ConstantOp):
        ty = op.result.type
        if (
            isinstance(ty, TensorType)
            and len(ty.get_shape()) == 0
            and dtype_of(ty.element_type) in _SIMPLE_CONST_DTYPES
        ):
            return OpPattern.ELEMWISE
        return OpPattern.OPAQUE
    return OpPattern.OPAQUE


def captured_values(op: Operation) -> list[SSAValue]:
    """Values an op's regions use that are defined outside it (what an ``scf.if`` holding
    Relay's If reads besides its condition), in order of first use."""
    if not op.regions:
        return []
    inner_ops = {id(o) for r in op.regions for o in r.walk()}
    inner_blocks = {id(b) for o in [op, *(o for r in op.regions for o in r.walk())] for r in o.regions for b in r.blocks}
    out: dict[SSAValue, None] = {}
    for r in op.regions:
        for o in r.walk():
            for v in o.operands:
                inside = id(v.owner) in (inner_blocks if isinstance(v, BlockArgument) else inner_ops)
                if not inside:
                    out.setdefault(v)
    return list(out)


def _var_groups(op: Operation) -> list[tuple[bool, list[SSAValue]]]:
    """An op's operands as Relay call arguments: (is_tuple, values) per argument. An op with
    regions (Relay's If) also reads what its regions capture: an opaque use of each."""
    if not isinstance(op, RelayOp):
        return [(False, [v]) for v in [*op.operands, *captured_values(op)]]
    defs = type(op).get_irdl_definition().operands
    if not any(isinstance(d, VarOperandDef) for _, d in defs):
        return [(False, [v]) for v in op.operands]
    out: list[tuple[bool, list[SSAValue]]] = []
    for (_, d), group in zip(defs, type(op).operand_groups(list(op.operands)), strict=True):
        if isinstance(d, VarOperandDef):
            out.append((True, list(group)))
        else:
            out.append((False, [group]))
    return out


class FusionGraph:
    """The indexed forward graph of one function body, with its post-dominator tree."""

    def __init__(self, block: Block):
        self.block = block
        self.nodes: list[GraphNode] = []
        """All nodes in post-DFS order (``node.index`` is the position)."""
        self.op_nodes: dict[Operation, GraphNode] = {}
        self.item_nodes: dict[tuple[Operation, int], GraphNode] = {}
        self.dead_ops: list[Operation] = []
        """Relay ops and constants the result does not depend on (program order)."""
        self._build()
        self.post_dom = PostDominatorTree.build(
            [[(c.index, p) for c, p in n.outputs] for n in self.nodes],
            [n.extern for n in self.nodes],
        )

    # ---- construction ---------------------------------------------------------------------

    def _node_of_value(self, value: SSAValue) -> GraphNode | None:
        if isinstance(value, BlockArgument):
            return None
        owner = value.owner
        assert isinstance(owner, Operation)
        if owner.parent_block() is not self.block:
            return None  # defined around an If branch being fused: an input, like a parameter
        if is_tuple_op(owner):
            key = (owner, value.index)
            node = self.item_nodes.get(key)
            if node is None:
                node = GraphNode("getitem", owner, item=value.index, pattern=OpPattern.INJECTIVE)
                self.item_nodes[key] = node
            return node
        node = self.op_nodes.get(owner)
        if node is None:
            node = GraphNode("op", owner, pattern=op_pattern(owner))
            self.op_nodes[owner] = node
        return node

    def _arg(self, value: SSAValue) -> GraphNode | SSAValue:
        node = self._node_of_value(value)
        return value if node is None else node

    def _connect(self, node: GraphNode) -> None:
        """Fill ``node.args`` and the output edges of its arguments (Relay's ``Update``)."""
        if node.kind == "getitem":
            assert node.op is not None
            producer = self._node_of_op(node.op)
            node.args = [producer]
            producer.outputs.append((node, OpPattern.INJECTIVE))
            return
        if node.kind == "tuple":
            node.args = [self._arg(v) for v in node.fields]
            for arg in node.args:
                if isinstance(arg, GraphNode):
                    arg.outputs.append((node, OpPattern.INJECTIVE))
            return
        op = node.op
        assert op is not None
        pattern = node.pattern if isinstance(op, RelayOp) else OpPattern.OPAQUE
        result_shape = None
        if pattern == OpPattern.BROADCAST and not is_tuple_op(op):
            ty = op.results[0].type
            if isinstance(ty, TensorType):
                result_shape = shape_of(ty)
        for k, (is_tuple, values) in enumerate(_var_groups(op)):
            if is_tuple:
                arg: GraphNode | SSAValue = GraphNode(
                    "tuple", op, item=k, fields=values, pattern=OpPattern.TUPLE
                )
            else:
                arg = self._arg(values[0])
            node.args.append(arg)
            if not isinstance(arg, GraphNode):
                continue
            edge = pattern
            if result_shape is not None and arg.kind != "tuple":
                ty = values[0].type
                if isinstance(ty, TensorType) and shape_of(ty) == result_shape:
                    edge = OpPattern.ELEMWISE
            arg.outputs.append((node, edge))

    def _node_of_op(self, op: Operation) -> GraphNode:
        node = self.op_nodes.get(op)
        if node is None:
            node = GraphNode("op", op, pattern=op_pattern(op))
            self.op_nodes[op] = node
        return node

    def _visit(self, root: GraphNode) -> None:
        """Iterative post-order DFS from ``root`` (Relay's ``ExprVisitor`` order)."""
        if root.seen:
            return
        stack: list[tuple[GraphNode, int]] = [(root, 0)]
        root.seen = True
        self._connect(root)
        while stack:
            node, i = stack[-1]
            if i < len(node.args):
                stack[-1] = (node, i + 1)
                child = node.args[i]
                if isinstance(child, GraphNode) and not child.seen:
                    child.seen = True
                    self._connect(child)
                    stack.append((child, 0))
                continue
            stack.pop()
            node.index = len(self.nodes)
            self.nodes.append(node)

    def _build(self) -> None:
        ret = self.block.last_op
        roots: list[GraphNode] = []
        if isinstance(ret, func.ReturnOp | scf.YieldOp):  # a function body or an If branch
            if len(ret.operands) == 1:
                node = self._node_of_value(ret.operands[0])
                if node is not None:
                    roots.append(node)
            elif len(ret.operands) > 1:
                roots.append(GraphNode("tuple", None, fields=list(ret.operands), pattern=OpPattern.TUPLE))
        for root in roots:
            root.extern = True
            self._visit(root)
        # Ops outside Relay's world (other dialects) that nothing reaches are kept and act as
        # extra results; dead relay ops and constants are what Relay cannot even represent.
        for op in self.block.ops:
            if op is ret or op in self.op_nodes and self.op_nodes[op].index != -1:
                continue
            if isinstance(op, ConstantOp) or (isinstance(op, RelayOp) and not op.STATEFUL):
                continue  # a stateful op (memory.kill) is an effect Relay keeps as a let
            if is_tuple_op(op):
                for k in range(len(op.results)):
                    item = self._node_of_value(op.results[k])
                    assert item is not None
                    item.extern = True
                    self._visit(item)
                if not op.results:
                    node = self._node_of_op(op)
                    node.extern = True
                    self._visit(node)
            else:
                node = self._node_of_op(op)
                node.extern = True
                self._visit(node)
        for op in self.block.ops:
            if isinstance(op, RelayOp | ConstantOp) and not self.is_live(op):
                self.dead_ops.append(op)

    def is_live(self, op: Operation) -> bool:
        """Whether ``op`` is in the graph (some node of it was reached)."""
        node = self.op_nodes.get(op)
        return node is not None and node.index != -1
