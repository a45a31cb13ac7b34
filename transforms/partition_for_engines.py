"""``partition-for-engines``: hand a module's functions to the engines that offload them.

xrelay's step (Relay's ``partition_for_<target>`` helpers, which a user calls before
``relay.build``): each engine named in ``engines`` that can partition (its compile-time side
has ``partition``) rewrites the module after the pre-fusion passes into functions marked
``relay.compiler = "<engine>"`` (BYOC's ``merge-composite``, ``annotate-target``,
``partition-graph`` with the engine's pattern table and supported ops, and the engine's own
preparation). With ``mixed-precision`` the engine places ``to-mixed-precision`` where its
kernels need it (oneDNN: after the batch norms are folded into float32 weights, so the
weights are rounded once). For example (the oneDNN engine)::

    %0 = relay.nn.conv2d %x, %w {...} : ...
    %1 = relay.nn.relu %0 : ...

becomes a call of a private function ``@tvmgen_default_dnnl_main_0`` with
``relay.compiler = "dnnl"`` holding a composite ``dnnl.conv2d_relu`` function.

The engines are not named here: ``xrelay.backend.engines.resolve_pass`` gives the pass the
engines' partition functions (relay-opt and ``xrelay.build`` do), in the order named.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from xrelay.error import TVMError

__all__ = ["PartitionForEnginesError", "PartitionForEnginesPass"]


class PartitionForEnginesError(ValueError, TVMError):
    """The pass was run without the engines' partition functions."""


@dataclass(frozen=True)
class PartitionForEnginesPass(ModulePass):
    """Run after the pre-fusion passes, before ``fuse-ops``:
    ``partition-for-engines{engines=dnnl}`` or
    ``partition-for-engines{engines=dnnl mixed-precision=bfloat16}``."""

    name = "partition-for-engines"
    relay_name: ClassVar[str] = "PartitionForEngines"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ()

    engines: tuple[str, ...] = ()
    mixed_precision: str = ""
    """``float16`` or ``bfloat16``: the engine places ``to-mixed-precision`` (empty: none)."""
    partitions: tuple[tuple[str, Callable[[ModuleOp, str | None], ModuleOp]], ...] = ()
    """(engine, partition function) pairs, from ``resolve_pass`` only."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.engines and not self.partitions:
            raise PartitionForEnginesError(
                "partition-for-engines: no engine's partition function was given "
                "(run it through relay-opt, or xrelay.backend.engines.resolve_pass)"
            )
        for _, partition in self.partitions:
            result = partition(op, self.mixed_precision or None)
            if result is not op:  # the steps are in place; a new module replaces the body
                op.body.detach_block(0).erase()
                op.body.add_block(result.body.detach_block(0))
