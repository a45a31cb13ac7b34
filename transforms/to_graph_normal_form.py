"""``to-graph-normal-form``: Relay's ToGraphNormalForm: no ``let`` bindings left.

Relay's ToGraphNormalForm removes ``let`` bindings and turns the program back into a
dataflow graph where shared subexpressions are shared nodes. xrelay's ops already refer to
their operands by SSA use-def edges, so the module is that graph; a ``let`` is only the name
an op result carries (``relay.Let`` and the text's ``let %x = ...`` set it). This pass drops
those names (the Relay text then prints ``%0 = ...`` graph bindings; parameters keep theirs)
and removes the ``relay.a_normal_form`` mark that ``to-a-normal-form`` sets, so visitors walk
the dataflow graph again (callee before arguments, as Relay's visitor walks a graph).

It exists so that Relay scripts calling ``relay.transform.ToGraphNormalForm()`` port without
edits, and so that pipelines naming it keep working.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from xrelay.transforms.to_a_normal_form import A_NORMAL_FORM_ATTR


@dataclass(frozen=True)
class ToGraphNormalFormPass(ModulePass):
    """Leave the module unchanged: SSA use-def edges already form the dataflow graph."""

    name = "to-graph-normal-form"
    relay_name: ClassVar[str] = "ToGraphNormalForm"
    opt_level: ClassVar[int] = 1
    required: ClassVar[tuple[str, ...]] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        op.attributes.pop(A_NORMAL_FORM_ATTR, None)
        for inner in op.walk():  # let-bound values become plain graph nodes
            for r in inner.results:
                r.name_hint = None
