"""Post-dominator tree over a dataflow DAG, built in one pass by least common ancestors.

This is the analysis behind Relay's FuseOps (``DominatorTree::PostDom`` in TVM). The graph is
given in a topological order (producers before consumers) as, for each node, its output edges
``(consumer index, edge pattern)`` and whether it is referenced from outside the graph
(``extern``: function parameters and results). Because the graph is a DAG, the immediate
post-dominator of a node is the least common ancestor (in the tree built so far) of all its
consumers, so visiting nodes in reverse topological order builds the tree in one sweep.

Besides ``parent`` and ``depth``, each tree node records ``pattern``: the maximum over the
patterns of its output edges and of the tree nodes passed on the way from each consumer up to
the parent. Fusion reads it as "how complex is the dataflow between a node and its
post-dominator".

Extern nodes and nodes whose consumers have no common post-dominator are roots: parent ``-1``,
depth 1; extern roots get the pattern ``OPAQUE``.

>>> tree = PostDominatorTree.build([[(1, 0), (2, 0)], [(3, 1)], [(3, 0)], []], [False] * 3 + [True])
>>> tree.parent
[3, 3, 3, -1]
>>> [int(p) for p in tree.pattern]
[1, 1, 0, 8]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xrelay.dialects.relay import OpPattern

__all__ = ["PostDominatorTree"]


@dataclass
class PostDominatorTree:
    """Immediate post-dominators of a DAG's nodes, indexed like the graph's nodes."""

    parent: list[int]
    """Index of the immediate post-dominator, or -1 for a root."""
    depth: list[int]
    """1 for roots, parent's depth + 1 otherwise."""
    pattern: list[OpPattern]
    """Combined (maximum) edge and path pattern from the node to its parent."""

    @staticmethod
    def build(
        outputs: Sequence[Sequence[tuple[int, int]]], extern: Sequence[bool]
    ) -> PostDominatorTree:
        """Build the tree of a DAG whose nodes ``0..n-1`` are in topological order.

        ``outputs[i]`` lists node ``i``'s consumers with the pattern of each edge (duplicates
        allowed); ``extern[i]`` marks nodes used outside the graph.
        """
        n = len(outputs)
        if len(extern) != n:
            raise ValueError(f"outputs has {n} nodes but extern has {len(extern)}")
        tree = PostDominatorTree([-1] * n, [0] * n, [OpPattern.OPAQUE] * n)
        for index in range(n - 1, -1, -1):
            if extern[index]:
                tree.depth[index] = 1
                continue
            parent = -1
            pattern = int(OpPattern.ELEMWISE)
            first = True
            for consumer, edge_pattern in outputs[index]:
                if consumer <= index:
                    raise ValueError(
                        f"node {index} has an output edge to node {consumer}: "
                        "nodes must be in topological order"
                    )
                if first:
                    parent = consumer
                    first = False
                elif parent != -1:
                    parent, pattern = tree._lca(parent, consumer, pattern)
                pattern = max(pattern, int(edge_pattern))
            tree.parent[index] = parent
            tree.depth[index] = tree.depth[parent] + 1 if parent != -1 else 1
            tree.pattern[index] = OpPattern(pattern)
        return tree

    def _lca(self, lhs: int, rhs: int, pattern: int) -> tuple[int, int]:
        """LCA of two tree nodes, folding the patterns of the nodes walked past into
        ``pattern``; -1 when they are in different trees."""
        depth, parent, patterns = self.depth, self.parent, self.pattern
        while lhs != rhs:
            if lhs == -1 or rhs == -1:
                return -1, pattern
            if depth[lhs] < depth[rhs]:
                pattern = max(pattern, int(patterns[rhs]))
                rhs = parent[rhs]
            elif depth[rhs] < depth[lhs]:
                pattern = max(pattern, int(patterns[lhs]))
                lhs = parent[lhs]
            else:
                pattern = max(pattern, int(patterns[lhs]), int(patterns[rhs]))
                lhs = parent[lhs]
                rhs = parent[rhs]
        return lhs, pattern

    def dominators(self, index: int) -> list[int]:
        """The chain of post-dominators of ``index``, nearest first."""
        chain = []
        node = self.parent[index]
        while node != -1:
            chain.append(node)
            node = self.parent[node]
        return chain
