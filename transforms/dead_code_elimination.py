"""``dead-code-elimination``: remove ops whose results are unused (Relay's DeadCodeElimination).

Relay's pass removes unused let-bindings; on SSA the same thing is xDSL's ``dce``: every
side-effect-free op with no uses is erased, repeatedly, including chains that become dead.
Stateful ops (``nn.dropout``, which carries no ``Pure`` trait) are kept, as Relay keeps impure
calls, unless ``ignore-impurity=true`` (Relay's ``ignore_impurity``) also drops stateful relay
ops whose results are all unused. A let-binding is a named SSA value (``xrelay.relay.module``):
``inline-once=true`` (Relay's ``inline_once``) inlines each one used exactly once, i.e. drops its
name, so the text prints it where it is used instead of as ``let``; as Relay's, it leaves
impure bindings alone (reference ops, stateful ops, calls of functions that use references).
References (the ref dialect) carry memory effects, so dce keeps them and their order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.transforms.dead_code_elimination import region_dce

from xrelay.dialects.ref import REF_OPS, impure_functions
from xrelay.dialects.relay import RelayOp


def _drop_unused_stateful(module: ModuleOp) -> bool:
    changed = False
    for op in reversed(list(module.walk())):
        if isinstance(op, RelayOp) and op.STATEFUL and not any(r.uses for r in op.results):
            Rewriter.erase_op(op)
            changed = True
    return changed


def _has_effects(op: Operation, impure: set[str]) -> bool:
    if isinstance(op, REF_OPS) or (isinstance(op, RelayOp) and op.STATEFUL):
        return True
    return isinstance(op, CallOp) and op.callee.root_reference.data in impure


@dataclass(frozen=True)
class DeadCodeEliminationPass(ModulePass):
    """Erase unused side-effect-free ops (xDSL's dce); keep stateful ones."""

    name = "dead-code-elimination"
    relay_name: ClassVar[str] = "DeadCodeElimination"
    opt_level: ClassVar[int] = 1
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    ignore_impurity: bool = False
    inline_once: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        while True:
            region_dce(op.body)
            if not (self.ignore_impurity and _drop_unused_stateful(op)):
                break
        if self.inline_once:
            # as Relay's, only pure bindings are inlined: a reference op, a stateful op or a
            # call of a function using references stays a let where its effect happens
            impure = impure_functions(f for f in op.walk() if isinstance(f, FuncOp))
            for inner in op.walk():
                if _has_effects(inner, impure):
                    continue
                for r in inner.results:
                    if r.name_hint is not None and r.has_one_use():
                        r.name_hint = None
