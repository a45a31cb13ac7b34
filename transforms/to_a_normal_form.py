"""``to-a-normal-form``: Relay's ToANormalForm. On SSA the program needs no rewriting; the
pass marks the module as being in A-normal form, which is what visitors observe.

Relay's ToANormalForm binds every intermediate expression to a ``let`` variable, so that
evaluation order and sharing are explicit. xrelay's IR is SSA: every op result already is a
named value defined once, in program order, inside one block, and nothing is shared without
being named. The ops and values are therefore left exactly as they are.

What ANF changes in Relay that a script can see is the order in which an ``ExprVisitor``
meets the nodes: walking the ``let`` chain, a call's arguments are bound (and visited)
before its callee, so primitive functions are visited in evaluation order. The pass records
the form as the module attribute ``relay.a_normal_form``; ``IRModule.__getitem__`` rebuilds
the functions of a module so marked with calls that ``ExprVisitor`` walks arguments first,
as Relay's visitor walks the let chain. ``to-graph-normal-form`` removes the mark.

```mlir
// before
builtin.module {
  func.func @main(...) { ... }
}
// after
builtin.module attributes {relay.a_normal_form} {
  func.func @main(...) { ... }
}
```
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.passes import ModulePass

A_NORMAL_FORM_ATTR = "relay.a_normal_form"
"""The module attribute that says the module is in A-normal form (see the module doc)."""


@dataclass(frozen=True)
class ToANormalFormPass(ModulePass):
    """Mark the module as being in A-normal form; the ops are unchanged (see the module doc)."""

    name = "to-a-normal-form"
    relay_name: ClassVar[str] = "ToANormalForm"
    opt_level: ClassVar[int] = 1
    required: ClassVar[tuple[str, ...]] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # Nothing to bind: every op result is already a named SSA value.
        op.attributes[A_NORMAL_FORM_ATTR] = UnitAttr()
