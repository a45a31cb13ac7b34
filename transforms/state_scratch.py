"""``state-scratch``: every engine states, on the fused functions it will run, the workspace its
kernels need, before ``lower-to-memory`` (which only reads it).

xrelay's step (Relay sizes workspaces inside its code generators): the engines' compile-time
sides decide how their kernels run a fused function -- the native engine, for example, which
convolutions run as Winograd and with which block size -- and write the bytes that needs as
attributes, so the plan, the executor and an exported module all read one statement::

    func.func private @fused_conv(...) attributes {relay.primitive = 1 : i64} {
      %0 = relay.nn.conv2d %p0, %p1 {padding = [1, 1, 1, 1]} : ...

becomes (the native engine; a 1x4x8x8 output of a 3x3 convolution of 3 channels)::

    func.func private @fused_conv(...) attributes {relay.kernel_scratch_bytes = 6912 : i64, relay.primitive = 1 : i64} {

The engines are not named here: ``xrelay.backend.engines.resolve_pass`` gives the pass their
statement functions (relay-opt and Relay's Python API do), in ``ENGINES`` order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from xrelay.error import TVMError

__all__ = ["StateScratchError", "StateScratchPass"]


class StateScratchError(TVMError):
    """The pass was run without the engines' statement functions."""


@dataclass(frozen=True)
class StateScratchPass(ModulePass):
    """Run after ``fuse-ops`` (and the BYOC partitioning), before ``lower-to-memory``:
    ``state-scratch`` or ``state-scratch{threads=4}`` (oneDNN's scratchpad grows with the
    threads its primitives are made for)."""

    name = "state-scratch"
    relay_name: ClassVar[str] = "StateScratch"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ()

    threads: int | None = None
    states: tuple[tuple[str, Callable[[ModuleOp, int | None], None]], ...] = ()
    """(engine, statement function) pairs, from ``resolve_pass`` only."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.states:
            raise StateScratchError(
                "state-scratch: no engine's statement was given "
                "(run it through relay-opt, or xrelay.backend.engines.resolve_pass)"
            )
        for _, state in self.states:
            state(op, self.threads)
