"""``fuse-ops``: Relay's FuseOps, operator fusion into primitive functions.

The pass partitions each function's dataflow graph exactly as Relay's ``GraphPartitioner``
does (docs/relay-semantics.md §2.1) and outlines every group into a private ``func.func`` marked
``relay.primitive = 1 : i64``, called from where the group's result was computed::

    func.func @main(%x: tensor<1x4xf32>, %y: tensor<1x4xf32>) -> tensor<1x4xf32> {
      %a = relay.add %x, %y : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
      %r = relay.nn.relu %a : (tensor<1x4xf32>) -> tensor<1x4xf32>
      func.return %r : tensor<1x4xf32>
    }

becomes::

    func.func private @fused_add_nn_relu(%p0: tensor<1x4xf32>, %p1: tensor<1x4xf32>)
        -> tensor<1x4xf32> attributes {relay.primitive = 1 : i64} {
      %a = relay.add %p0, %p1 : ...
      %r = relay.nn.relu %a : ...
      func.return %r : tensor<1x4xf32>
    }
    func.func @main(...) {
      %r = func.call @fused_add_nn_relu(%x, %y) : (...) -> tensor<1x4xf32>
      func.return %r : tensor<1x4xf32>
    }

**Graph.** ``_fusion_graph`` builds Relay's indexed forward graph, with virtual tuple and
tuple-get-item nodes where Relay's program would have them (see that module): the variadic
operands of ``concatenate``/``stack`` are a ``Tuple`` (pattern TUPLE, fields with INJECTIVE
edges), each used result of a multi-result op (``split``: INJECTIVE; ``nn.batch_norm``:
OUT_ELEMWISE_FUSABLE; ``nn.dropout``: OPAQUE) is a ``TupleGetItem`` (INJECTIVE), and a
multi-value ``func.return`` is the function's extern tuple body. So phase 1 can fuse a tuple
into its injective consumer, phase 2 fuses injective producers into a tuple already fused
into its consumer, a tuple returned from the function stops fusion of its fields, and an
isolated get-item stays outside any group, as in Relay.

**Partition.** Post-dominator tree (``dominators.py``), then Relay's three phases with its
path rules and its ``max_depth`` count (virtual nodes count, as Relay's tuple nodes do).
``opt_level == 0`` puts every node in its own group. Under a target with
``max_function_args`` (OpenCL 128, Metal 31) a fusion that would give a function more
arguments than that (its outputs and, per dynamic tensor, its dimension sizes and strides
counted) is refused, with Relay's counting and its postponement of a fusion whose consumer's
count is not known yet; the option ``max-function-args`` sets the limit directly.

**Outlining.** A group becomes a function when its root is a relay op (or a get-item whose
op is in the group); singletons of non-relay ops, ``relay.constant``, non-computational ops
(``on_device``) and tuples stay where they are; ``annotation.stop_fusion`` is removed (its
operand is used directly), after it cut the group. The function:

* is named ``fused_`` + the group's relay op names in post-DFS order with ``.`` -> ``_``
  (``fused_nn_conv2d_add_nn_relu``); a name longer than 80 characters is cut to 80 and given
  ``_`` + 8 hex digits of a CRC-32 of the full name (Relay cuts at 80 and appends a hash too);
  names are made unique in the module with ``_1``, ``_2``, ... Identical groups are not
  merged: one function per group, as in Relay;
* takes the group's external inputs as parameters ``p0, p1, ...`` in order of first use
  (members in post-DFS order, operands left to right, as Relay's mutator allocates them); a
  value used twice is one parameter. Where Relay would pass a tuple (a get-item or tuple
  whose producer is outside the group) each field used is its own parameter;
* clones scalar constants of the group into its body; other constants are parameters, unless
  the config ``relay.FuseOps.link_params`` is true, which clones them in too;
* returns the root's results: all results of a multi-result root op, one result for a
  get-item root;
* carries ``relay.primitive = 1 : i64``, and ``relay.reshape_only = 1 : i64`` when every op
  in it is reshape-only (``reshape``, ``squeeze``, ``expand_dims``) and no parameter stands
  for a Relay tuple.

The group's ops keep their order; the ``func.call`` replaces the root. Functions that are
already primitive (or have ``relay.compiler`` or ``relay.composite``) are skipped; every other function is fused.
Ops that the function's result does not depend on are deleted, since Relay's graphs cannot
hold them. Functions must have one block and no ops with regions.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, ModuleOp, TensorType, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from xrelay.dialects.adt import ADT_OPS, adt_feature
from xrelay.dialects.relay import FUNC_ATTRS, ConstantOp, LoopOp, OpPattern, RelayOp
from xrelay.dialects.relay.strings import STRING_OPS
from xrelay.error import TVMError
from xrelay.transforms._fusion_graph import FusionGraph, GraphNode
from xrelay.transforms.infra import PassContext, current_target_attr

__all__ = [
    "FuseOpsError",
    "FuseOpsPass",
    "GraphPartitioner",
    "fuse_function",
    "fuse_ops",
    "is_primitive",
    "partition",
]

MAX_FUSED_OPS = 256
"""Relay's ``kMaxFusedOps``: the default of ``relay.FuseOps.max_depth``."""

MAX_NAME_LENGTH = 80
"""Fused function names longer than this are cut and given a hash (Relay's limit)."""

PRIMITIVE = FUNC_ATTRS["Primitive"]
RESHAPE_ONLY = FUNC_ATTRS["reshape_only"]
COMPILER = FUNC_ATTRS["Compiler"]
COMPOSITE = FUNC_ATTRS["Composite"]

E, B, I, R, O, T, X = (  # noqa: E741 - Relay's pattern keys
    OpPattern.ELEMWISE,
    OpPattern.BROADCAST,
    OpPattern.INJECTIVE,
    OpPattern.COMM_REDUCE,
    OpPattern.OUT_ELEMWISE_FUSABLE,
    OpPattern.TUPLE,
    OpPattern.OPAQUE,
)


class FuseOpsError(DiagnosticException, TVMError):
    """The module cannot be fused (bad options, unsupported IR); the message says why."""


# ---------------------------------------------------------------------------------------------
# Partition
# ---------------------------------------------------------------------------------------------


class Group:
    """A union-find set of graph nodes (Relay's ``GraphPartitioner::Group``).

    Every node starts with its own ``Group``; merging links a root under another root. As in
    Relay, only roots are updated on merges, and several rules read a node's *own* group
    object (its initial pattern, its node count at the time it was merged).
    """

    __slots__ = ("anchor", "args_num", "node", "num_nodes", "parent", "pattern")

    def __init__(self, node: int, pattern: OpPattern, args_num: int = 0):
        self.parent: Group | None = None
        self.node = node
        """Index of the node this group object was made for (the root node for a root)."""
        self.pattern = pattern
        self.anchor = node if pattern == O else -1
        self.num_nodes = 1
        self.args_num = args_num
        """Arguments the group's kernel takes (Relay's ``args_num``; read only under a
        ``max_function_args`` limit)."""

    def find_root(self) -> Group:
        root = self
        while root.parent is not None:
            root = root.parent
        node = self
        while node is not root:  # path compression
            nxt = node.parent
            assert nxt is not None
            node.parent = root
            node = nxt
        return root


def _combine(lhs: OpPattern, rhs: OpPattern) -> OpPattern:
    if lhs > B and rhs > B:
        raise FuseOpsError("fuse-ops: internal error: cannot merge two complex groups together")
    return max(lhs, rhs)


class GraphPartitioner:
    """Relay's three-phase partition of a ``FusionGraph`` into fusion groups."""

    def __init__(self, opt_level: int, max_depth: int = MAX_FUSED_OPS, max_function_args: int = 0):
        self.opt_level = opt_level
        self.max_depth = max_depth
        self.max_function_args = max_function_args
        # a fusion whose argument count was not known yet waits for its consumer's turn
        # (Relay's postpone_node_ / postponed_fusing_map_)
        self.postpone_node: GraphNode | None = None
        self.postponed: dict[GraphNode, list[GraphNode]] = {}

    def partition(self, graph: FusionGraph) -> list[Group]:
        """The group object of every node (``find_root()`` gives its group)."""
        self.graph = graph
        self.groups = [Group(n.index, n.pattern, _own_args(n)) for n in graph.nodes]
        if self.opt_level == 0:
            return self.groups
        for phase in range(3):
            self._run_fuse(phase)
        return self.groups

    # ---- helpers on the graph (iterative: paths can be long) --------------------------------

    def _check_path(self, src: GraphNode, sink: GraphNode, cond) -> bool:
        """Every node on every path from ``src`` (excluded) to ``sink`` satisfies ``cond``."""
        groups = self.groups
        visited: set[int] = set()
        stack = [c for c, _ in src.outputs]
        while stack:
            node = stack.pop()
            if node.index in visited:
                continue
            visited.add(node.index)
            is_sink = node is sink
            if not cond(groups[node.index].find_root().pattern, is_sink):
                return False
            if not is_sink:
                stack.extend(c for c, _ in node.outputs)
        return True

    def _merge(self, child: Group, parent: Group) -> None:
        child = child.find_root()
        parent = parent.find_root()
        if child is parent:
            return
        parent.num_nodes += child.num_nodes
        parent.args_num += child.args_num
        child.parent = parent
        if child.anchor != -1:
            if parent.anchor != -1:
                raise FuseOpsError("fuse-ops: internal error: two anchors in one group")
            parent.anchor = child.anchor
            parent.pattern = _combine(child.pattern, parent.pattern)

    def _commit_fuse(self, src: GraphNode, sink: GraphNode) -> None:
        """Merge every node on the paths from ``src`` to ``sink`` into ``sink``'s group (or,
        while an argument count is pending, record the fusion for the pending node's turn)."""
        if self.postpone_node is not None:
            self.postponed.setdefault(self.postpone_node, []).append(src)
            return
        target = self.groups[sink.index]
        visited: set[int] = set()
        stack = [src]
        while stack:
            node = stack.pop()
            if node is sink or node.index in visited:
                continue
            visited.add(node.index)
            self._merge(self.groups[node.index], target)
            stack.extend(c for c, _ in node.outputs)

    def _too_many_nodes(self, child: GraphNode, dom_parent: GraphNode) -> bool:
        """Whether fusing ``child`` into ``dom_parent``'s group exceeds ``max_depth`` nodes
        (Relay's ``CountFusedNodesWithNewChild``; stops counting once over the limit, which
        bounds the walk by ``max_depth``)."""
        groups = self.groups
        limit = self.max_depth
        total = groups[dom_parent.index].find_root().num_nodes
        visited: set[int] = set()
        stack = [child]
        while stack:
            node = stack.pop()
            if node is dom_parent or node.index in visited:
                continue
            visited.add(node.index)
            total += groups[node.index].num_nodes
            if total > limit:
                return True
            stack.extend(c for c, _ in node.outputs)
        return total > limit

    # ---- the argument limit (Relay's max_function_args; a target attribute) ---------------

    def _count_args(self, src: GraphNode, update_postpone: bool = True) -> int:
        """The arguments of ``src``'s group with its argument nodes' groups (Relay's
        ``CountArgs_``): a group not counted yet postpones the fusion being decided, or,
        without ``update_postpone``, is counted now."""
        groups = self.groups
        own = groups[src.index]
        total = own.args_num
        seen = {own.find_root()}
        if src.kind == "getitem":
            return total  # Relay counts through calls and tuples only
        for arg in src.args:
            if not isinstance(arg, GraphNode):
                continue  # a parameter (Relay's Var) adds nothing here
            prev = groups[arg.index].find_root()
            if prev in seen:
                continue
            seen.add(prev)
            if prev.args_num > 0:
                total += prev.args_num
            elif update_postpone:
                self.postpone_node = src
            else:
                total += self._count_args(arg, False)
        return total

    def _args_limit(self, child: GraphNode) -> int:
        """``max_function_args`` less the output arguments of ``child``'s consumers (Relay's
        ``CountArgsLimit_``); 0 when nothing is left."""
        outputs = 0
        for consumer, _ in child.outputs:
            outputs += 1
            if consumer.kind == "op" and consumer.op is not None and len(consumer.op.results) == 1:
                outputs += _extra_args(consumer.op.results[0].type, with_strides=False)
        return self.max_function_args - outputs if self.max_function_args > outputs else 0

    def _fused_args(self, child: GraphNode) -> int:
        """The most arguments a consumer's group of ``child`` would take (``CountFusedArgs``)."""
        return max((self._count_args(consumer) for consumer, _ in child.outputs), default=0)

    # ---- the phases --------------------------------------------------------------------------

    def _run_fuse(self, phase: int) -> None:
        nodes = self.graph.nodes
        tree = self.graph.post_dom
        groups = self.groups
        for nid, node in enumerate(nodes):
            group = groups[nid]
            self.postpone_node = None
            for src in self.postponed.pop(node, ()):
                # retry the fusions that waited for this node's argument count
                if self._count_args(node, False) <= self._args_limit(node):
                    sink = nodes[tree.parent[src.index]]
                    if groups[sink.index].anchor == -1:
                        self._commit_fuse(src, sink)
            if group.pattern == X:
                continue
            dom = tree.parent[nid]
            if dom == -1:
                continue
            dom_node = nodes[dom]
            if self._too_many_nodes(node, dom_node):
                continue
            if self.max_function_args > 0:
                limit = self._args_limit(node)
                if limit > 0 and self._fused_args(node) > limit:
                    continue
            dom_group = groups[dom]
            if phase == 2:
                # fuse injective ops into an intermediate tuple already fused into its consumer
                if group.pattern > I:
                    continue
                dom_root = dom_group.find_root()
                if dom_root.pattern == T:
                    continue
                if dom_group.pattern == T and dom_root.pattern <= I:
                    if self._check_path(node, dom_node, lambda k, s: k <= I):
                        self._commit_fuse(node, dom_node)
                continue
            if group.find_root() is dom_group.find_root():
                continue
            if dom_group.pattern == T:
                continue
            if group.pattern == O:
                if phase != 0:
                    continue
                if tree.pattern[nid] == E and self._check_path(node, dom_node, lambda k, s: k <= B):
                    self._commit_fuse(node, dom_node)
            elif group.pattern <= B:
                path = tree.pattern[nid]
                if path <= I or path == R:
                    if self._check_path(node, dom_node, _elemwise_path):
                        self._commit_fuse(node, dom_node)
            elif group.pattern in (I, T):
                # injective fusion waits for phase 1 so that conv2d groups finish first
                if phase != 1:
                    continue
                if self._check_path(node, dom_node, lambda k, s: k <= I):
                    self._commit_fuse(node, dom_node)
            # COMM_REDUCE never starts a fusion; producers fuse into it


def _extra_args(ty: Attribute, with_strides: bool = True) -> int:
    """Arguments a kernel takes besides a tensor's buffer: one per dynamic dimension, and
    with ``with_strides`` its strides too when it has any (Relay's ``CountAdditionalArgs_``)."""
    if not isinstance(ty, TensorType):
        return 0
    dynamic = sum(1 for d in ty.get_shape() if d == DYNAMIC_INDEX)
    return dynamic + len(ty.get_shape()) if with_strides and dynamic else dynamic


def _own_args(node: GraphNode) -> int:
    """The arguments a node's own kernel takes (Relay's ``InitGroups``): each parameter or
    tuple-get-item argument of an op or tuple, with its extra arguments."""
    if node.kind == "getitem":
        return 0
    count = 0
    for arg in node.args:
        if isinstance(arg, GraphNode):
            if arg.kind != "getitem":
                continue
            assert arg.op is not None
            ty = arg.op.results[arg.item].type
        else:
            ty = arg.type
        count += 1 + _extra_args(ty)
    return count


def _elemwise_path(kind: OpPattern, is_sink: bool) -> bool:
    if not is_sink:
        return kind <= I
    return kind <= B or kind in (R, I, O)


def partition(
    block: Block, opt_level: int = 2, max_depth: int = MAX_FUSED_OPS, max_function_args: int = 0
) -> tuple[FusionGraph, list[Group]]:
    """The fusion graph of a function body and every node's group (for inspection)."""
    graph = FusionGraph(block)
    return graph, GraphPartitioner(opt_level, max_depth, max_function_args).partition(graph)


# ---------------------------------------------------------------------------------------------
# Outlining
# ---------------------------------------------------------------------------------------------


def is_primitive(fn: func.FuncOp) -> bool:
    """Whether ``fn`` carries a non-zero ``relay.primitive`` attribute."""
    attr = fn.attributes.get(PRIMITIVE)
    return isinstance(attr, IntegerAttr) and attr.value.data != 0


def _is_stop_fusion(op: Operation) -> bool:
    return isinstance(op, RelayOp) and op.RELAY_NAME == "annotation.stop_fusion"


class _Namer:
    """Unique symbol names: ``name``, then ``name_1``, ``name_2``, ..."""

    def __init__(self, taken: Iterable[str]):
        self.taken = set(taken)
        self.counters: dict[str, int] = {}

    def __call__(self, base: str) -> str:
        if len(base) > MAX_NAME_LENGTH:
            base = f"{base[:MAX_NAME_LENGTH]}_{zlib.crc32(base.encode()):08x}"
        if base not in self.taken:
            self.taken.add(base)
            return base
        k = self.counters.get(base, 0)
        while True:
            k += 1
            name = f"{base}_{k}"
            if name not in self.taken:
                break
        self.counters[base] = k
        self.taken.add(name)
        return name


@dataclass
class _Outliner:
    """Rewrites one function body given its graph and groups."""

    fn: func.FuncOp
    graph: FusionGraph
    groups: list[Group]
    namer: _Namer
    link_params: bool
    block: Block | None = None  # the block rewritten: the function's body, or an If branch
    new_functions: list[func.FuncOp] = field(default_factory=list)
    replaced: dict[SSAValue, SSAValue] = field(default_factory=dict)
    to_erase: set[Operation] = field(default_factory=set)

    def resolve(self, value: SSAValue) -> SSAValue:
        return self.replaced.get(value, value)

    def run(self) -> None:
        nodes = self.graph.nodes
        members: dict[int, list[GraphNode]] = {}
        for node in nodes:
            members.setdefault(self.groups[node.index].find_root().node, []).append(node)
        for node in nodes:
            if self.groups[node.index].find_root().node != node.index:
                continue
            if node.kind == "op":
                op = node.op
                assert op is not None
                if _is_stop_fusion(op):
                    self.replaced[op.results[0]] = self.resolve(op.operands[0])
                    self.to_erase.add(op)
                    continue
                if not isinstance(op, RelayOp) or op.NON_COMPUTATIONAL:
                    continue
                self._outline(node, members[node.index])
            elif node.kind == "getitem":
                producer = self.graph.op_nodes[node.op]  # type: ignore[index]
                if self.groups[producer.index].find_root() is self.groups[node.index]:
                    self._outline(node, members[node.index])
        for old, new in self.replaced.items():
            old.replace_all_uses_with(new)
        block = self.block if self.block is not None else self.fn.body.block
        for op in reversed(list(block.ops)):
            if op in self.to_erase:
                block.erase_op(op)

    def _in_group(self, node: GraphNode, root: Group) -> bool:
        return self.groups[node.index].find_root() is root

    def _outline(self, root: GraphNode, group_nodes: list[GraphNode]) -> None:
        root_group = self.groups[root.index]
        params: list[SSAValue] = []  # resolved outer values, in parameter order
        param_index: dict[SSAValue, int] = {}
        linked: set[Operation] = set()
        tuple_param = False

        def use(value: SSAValue) -> None:
            value = self.resolve(value)
            if value not in param_index:
                param_index[value] = len(params)
                params.append(value)

        for node in group_nodes:
            for arg in node.args:
                if not isinstance(arg, GraphNode):
                    use(arg)
                    continue
                if self._in_group(arg, root_group):
                    continue
                if self.link_params and arg.kind == "op" and isinstance(arg.op, ConstantOp):
                    linked.add(arg.op)
                    continue
                if node.kind == "getitem":
                    # Relay passes the whole tuple; only the field used is passed here
                    assert node.op is not None
                    tuple_param = True
                    use(node.op.results[node.item])
                    continue
                for value in arg.values():
                    use(value)

        block = Block(arg_types=[v.type for v in params])
        for i, arg in enumerate(block.args):
            arg.name_hint = f"p{i}"
        inner: dict[SSAValue, SSAValue] = {}
        op_names: list[str] = []
        reshape_only = not tuple_param
        for node in group_nodes:
            if node.kind != "op":
                continue
            op = node.op
            assert op is not None
            mapping: dict[SSAValue, SSAValue] = {}
            for value in op.operands:
                if value in inner:
                    mapping[value] = inner[value]
                    continue
                owner = value.owner
                if isinstance(owner, ConstantOp) and owner in linked:
                    const = owner.clone()
                    block.add_op(const)
                    inner[value] = mapping[value] = const.result
                    continue
                mapping[value] = block.args[param_index[self.resolve(value)]]
            new_op = op.clone(value_mapper=mapping)
            block.add_op(new_op)
            for old, new in zip(op.results, new_op.results, strict=True):
                inner[old] = new
            self.to_erase.add(op)
            if isinstance(op, RelayOp):
                op_names.append(op.RELAY_NAME.replace(".", "_"))
                reshape_only &= op.RESHAPE_ONLY

        if root.kind == "getitem":
            assert root.op is not None
            anchor_op = root.op
            outputs = [root.op.results[root.item]]
        else:
            assert root.op is not None
            anchor_op = root.op
            outputs = list(root.op.results)
        block.add_op(func.ReturnOp(*[inner[v] for v in outputs]))

        name = self.namer("fused_" + "_".join(op_names))
        fused = func.FuncOp(
            name,
            ([v.type for v in params], [v.type for v in outputs]),
            Region(block),
            visibility="private",
        )
        fused.attributes[PRIMITIVE] = IntegerAttr(1, i64)
        if reshape_only and op_names:
            fused.attributes[RESHAPE_ONLY] = IntegerAttr(1, i64)
        self.new_functions.append(fused)

        call = func.CallOp(name, params, [v.type for v in outputs])
        anchor_op.parent_block().insert_op_before(call, anchor_op)  # type: ignore[union-attr]
        for old, new in zip(outputs, call.results, strict=True):
            if old.name_hint is not None:
                new.name_hint = old.name_hint
            self.replaced[old] = new


def _check_body(fn: func.FuncOp) -> Block:
    blocks = list(fn.body.blocks)
    if len(blocks) != 1:
        raise FuseOpsError(
            f"fuse-ops: @{fn.sym_name.data} has {len(blocks)} blocks; relay functions have one"
        )
    for op in blocks[0].walk():
        if isinstance(op, ADT_OPS):
            raise FuseOpsError(
                f"fuse-ops: @{fn.sym_name.data} uses {adt_feature(op)} ('{op.name}'); "
                "fusion handles tensors only: run the module with the reference interpreter"
            )
        if isinstance(op, STRING_OPS):
            raise FuseOpsError(
                f"fuse-ops: @{fn.sym_name.data} holds '{op.name}' on tensors of strings; fusion "
                "and the arena runtime handle fixed-size tensors: run the module with the reference interpreter"
            )
        if isinstance(op, LoopOp):
            raise FuseOpsError(
                f"fuse-ops: @{fn.sym_name.data} contains a 'relay.loop' (ONNX's Loop with a run-time "
                "trip count or condition); the arena runtime runs straight-line programs: run the "
                "module with the reference interpreter, or bind the inputs the trip count and "
                "condition come from (import_onnx(..., unroll_loops=True) names them)"
            )
        if op.regions and not isinstance(op, scf.IfOp):
            raise FuseOpsError(
                f"fuse-ops: @{fn.sym_name.data} contains '{op.name}', an op with regions, "
                "which fusion does not support"
            )
    return blocks[0]


def fuse_function(
    fn: func.FuncOp,
    namer: _Namer,
    *,
    opt_level: int,
    max_depth: int = MAX_FUSED_OPS,
    link_params: bool = False,
    max_function_args: int = 0,
) -> list[func.FuncOp]:
    """Fuse one function in place; return the new primitive functions (not yet inserted)."""
    body = _check_body(fn)
    new: list[func.FuncOp] = []
    # Relay's If (scf.if) is opaque: nothing fuses across it; each branch fuses on its own
    blocks = [body]
    while blocks:
        block = blocks.pop()
        graph = FusionGraph(block)
        for op in reversed(graph.dead_ops):
            block.erase_op(op)
        groups = GraphPartitioner(opt_level, max_depth, max_function_args).partition(graph)
        outliner = _Outliner(fn, graph, groups, namer, link_params, block=block)
        outliner.run()
        new += outliner.new_functions
        blocks += [r.block for op in block.ops if isinstance(op, scf.IfOp) for r in op.regions]
    return new


def fuse_ops(
    module: ModuleOp,
    *,
    opt_level: int = 2,
    max_depth: int = MAX_FUSED_OPS,
    link_params: bool = False,
    max_function_args: int = 0,
) -> int:
    """Fuse every non-primitive function of ``module`` in place; return the number of
    primitive functions created. ``max_function_args`` > 0 bounds the arguments of each fused
    function, outputs and dynamic dimensions' sizes included, as Relay counts them."""
    if opt_level < 0:
        raise FuseOpsError(f"fuse-ops: opt-level must be >= 0 here, got {opt_level}")
    if max_depth < 0:
        raise FuseOpsError(f"fuse-ops: max-depth must be >= 0, got {max_depth}")
    if max_function_args < 0:
        raise FuseOpsError(f"fuse-ops: max-function-args must be >= 0, got {max_function_args}")
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
    namer = _Namer(f.sym_name.data for f in funcs)
    created = 0
    for fn in funcs:
        # a composite function is one pattern an external compiler runs whole (Relay never
        # visits it: it lives inside a relay.compiler function)
        if fn.is_declaration or is_primitive(fn) or COMPILER in fn.attributes or COMPOSITE in fn.attributes:
            continue
        new = fuse_function(
            fn, namer, opt_level=opt_level, max_depth=max_depth, link_params=link_params,
            max_function_args=max_function_args,
        )  # fmt: skip
        for f in new:
            module.body.block.insert_op_before(f, fn)
        created += len(new)
    return created


@dataclass(frozen=True)
class FuseOpsPass(ModulePass):
    """Fuse ops into primitive functions (Relay's ``FuseOps(fuse_opt_level=-1)``).

    Options: ``opt_level`` (``-1``, the default, takes ``PassContext.current().opt_level``,
    as Relay's ``fuse_opt_level=-1``; ``0`` outlines every op alone, any higher level fuses);
    ``max_depth`` (the most nodes in one group; unset takes the config
    ``relay.FuseOps.max_depth``, default 256); ``max_function_args`` (the most arguments of
    a fused function, outputs included; unset takes the attribute ``max_function_args`` of
    the current target, ``with tvm.target.Target("metal")``: 31, as Relay; 0 or no target: no
    limit). The config ``relay.FuseOps.link_params`` keeps non-scalar constants inside the
    fused functions.
    """

    name = "fuse-ops"
    relay_name: ClassVar[str] = "FuseOps"
    # Relay's PassInfo level; ``opt_level`` is this pass's option (Relay's fuse_opt_level)
    relay_opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    opt_level: int = -1
    max_depth: int | None = None
    max_function_args: int | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:

        pctx = PassContext.current()
        opt_level = pctx.opt_level if self.opt_level == -1 else self.opt_level
        if self.opt_level < -1:
            raise FuseOpsError(f"fuse-ops: opt-level must be -1 or >= 0, got {self.opt_level}")
        max_depth = self.max_depth
        if max_depth is None:
            max_depth = int(pctx.get_config("relay.FuseOps.max_depth", MAX_FUSED_OPS))
        link_params = bool(pctx.get_config("relay.FuseOps.link_params", False))
        max_args = self.max_function_args
        if max_args is None:
            max_args = int(current_target_attr("max_function_args", 0))
        fuse_ops(op, opt_level=opt_level, max_depth=max_depth, link_params=link_params, max_function_args=max_args)

