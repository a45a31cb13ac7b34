"""``to-a-normal-form``: Relay's ToANormalForm, which on SSA has nothing left to do.

Relay's ToANormalForm binds every intermediate expression to a ``let`` variable, so that
evaluation order and sharing are explicit. xrelay's IR is SSA: every op result already is a
named value defined once, in program order, inside one block, and nothing is shared without
being named. A module is therefore always in A-normal form, and this pass leaves it unchanged.

It exists so that Relay scripts calling ``relay.transform.ToANormalForm()`` (for instance
before ``AnnotateUsedMemory``) port without edits, and so that pipelines naming it keep
working. Visitors over the Python expressions rebuilt by ``IRModule.__getitem__`` see the
dataflow graph, not a ``let`` chain: walk call arguments before the callee to see calls in
evaluation order, as a ``let`` chain would list them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


@dataclass(frozen=True)
class ToANormalFormPass(ModulePass):
    """Leave the module unchanged: SSA is already in A-normal form (see the module doc)."""

    name = "to-a-normal-form"
    relay_name: ClassVar[str] = "ToANormalForm"
    opt_level: ClassVar[int] = 1
    required: ClassVar[tuple[str, ...]] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # Nothing to bind: every op result is already a named SSA value.
        return None
