"""``choose-scratch``: run each step the way whose scratch keeps the plan's peak down, at the
least time.

An engine can often run a fused function several ways that compute the same values with
different scratch: oneDNN's Winograd convolution needs two temporaries of 2.25 times its
input and output, the same convolution run band by band of output rows needs a fraction of
that, oneDNN's direct convolution almost none. ``state-scratch`` states the fastest way's
bytes and, where there are others, every way, fastest first
(``relay.scratch_options = [["winograd", 7226496], ["winograd-rows=1", 517248],
["direct", 12288]]``). When one step's scratch is what sets the plan's peak, the fastest way
costs memory the whole program pays for.

This pass runs after ``lower-to-memory`` (the steps' lifetimes known) and before
``plan-memory``. Per memory space it computes the bytes every step holds live without the
choosable workspaces, and the lowest peak reachable: the largest over the steps of that plus
the smallest way's scratch. Then, by ``priority``:

* ``balanced`` (the default): the peak target is that lowest reachable peak, or ``budget``
  when larger; each function takes its fastest way whose scratch keeps every step that runs
  it under the target. Steps that do not set the peak keep their fastest way;
* ``speed``: every function its fastest way (the first, as stated);
* ``memory``: every function its way with the least scratch.

The choice is written on the function (``relay.scratch_choice = "winograd-rows=1"``, its
stated scratch attribute set to that way's bytes) and on its workspaces' sizes; the engine
runs the function that way. Functions with one way are left alone, so the pass changes
nothing for a module without options (the C target states one way per function)::

    memory.invoke @conv(%x) outs(%y) workspace(%ws) ...   // %ws: size = 7226496, at the peak
    // after choose-scratch: @conv {relay.scratch_choice = "winograd-rows=1"}, %ws: size = 517248

``xrelay.build`` runs it with ``PassContext`` config ``relay.ChooseScratch.priority`` and
``relay.ChooseScratch.budget`` (bytes; 0: none); as a pass,
``choose-scratch{priority=memory}`` or ``choose-scratch{budget=4000000}``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from xrelay.dialects.memory import (
    KERNEL_SCRATCH_ATTR,
    SCRATCH_ATTR,
    SCRATCH_CHOICE_ATTR,
    AllocStorageOp,
    InvokeOp,
    scratch_options,
)
from xrelay.error import TVMError
from xrelay.runtime.liveness import LivenessError, entry_block, storage_buffers
from xrelay.transforms.infra import PassContext

__all__ = ["PRIORITIES", "ChooseScratchError", "ChooseScratchPass", "choose_scratch"]

PRIORITIES = ("balanced", "speed", "memory")
"""The ``priority`` values; see the module docstring."""


class ChooseScratchError(DiagnosticException, TVMError):
    """Bad options, or a module that is not lowered."""


def _aligned(size: int, alignment: int) -> int:
    return -(-size // alignment) * alignment


def _stated_attr(fn: func.FuncOp) -> str:
    return SCRATCH_ATTR if SCRATCH_ATTR in fn.attributes else KERNEL_SCRATCH_ATTR


def choose_scratch(module: ModuleOp, priority: str = "balanced", budget: int = 0, entry: str = "main") -> dict[str, str]:
    """Choose, in place, the way each function with several runs (see the module docstring);
    returns ``{function: label}`` for every function that has options."""
    if priority not in PRIORITIES:
        raise ChooseScratchError(f"choose-scratch: unknown priority '{priority}' (known: {', '.join(PRIORITIES)})")
    if budget < 0:
        raise ChooseScratchError(f"choose-scratch: budget must be a number of bytes >= 0, not {budget}")
    try:
        block = entry_block(module, entry)
        pairs = storage_buffers(module, entry)
    except LivenessError as e:
        raise ChooseScratchError(f"choose-scratch: {e}") from None
    funcs = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    # the workspaces of functions with options, by function
    owner: dict[AllocStorageOp, func.FuncOp] = {}
    for op in block.ops:
        if isinstance(op, InvokeOp):
            fn = funcs.get(op.callee_name)
            if fn is not None and len(scratch_options(fn)) > 1:
                for w in op.workspace:
                    if isinstance(w.owner, AllocStorageOp):
                        owner[w.owner] = fn
    if not owner:
        return {}
    # bytes live at each step of each memory space without the choosable workspaces
    base: dict[tuple, int] = defaultdict(int)
    choosable: dict[str, list] = defaultdict(list)  # function -> [(space, step, storage, extra)]
    for storage, b in pairs:
        space = b.pools
        fn = owner.get(storage)
        if fn is not None:
            stated = fn.attributes.get(_stated_attr(fn))
            extra = b.size - (stated.value.data if isinstance(stated, IntegerAttr) else 0)
            choosable[fn.sym_name.data].append((space, b.start, storage, max(extra, 0), b.alignment))
            continue
        for step in range(b.start, b.end + 1):
            base[(space, step)] += _aligned(b.size, b.alignment)

    def need(name: str, size: int) -> int:
        """The most bytes a step running ``name`` holds with ``size`` bytes of scratch."""
        return max(base[(space, step)] + _aligned(size + extra, align) for space, step, _, extra, align in choosable[name])

    options = {name: scratch_options(funcs[name]) for name in choosable}
    if priority == "speed":
        chosen = {name: opts[0] for name, opts in options.items()}
    elif priority == "memory":
        chosen = {name: min(opts, key=lambda o: o[1]) for name, opts in options.items()}
    else:
        spaces = {space for space, _ in base} | {c[0] for cs in choosable.values() for c in cs}
        floor = {space: max((v for (s, _), v in base.items() if s == space), default=0) for space in spaces}
        for name, opts in options.items():
            smallest = min(size for _, size in opts)
            for space, step, _, extra, align in choosable[name]:
                floor[space] = max(floor[space], base[(space, step)] + _aligned(smallest + extra, align))
        target = {space: max(v, budget) for space, v in floor.items()}
        chosen = {}
        for name, opts in options.items():
            limit = min(target[c[0]] for c in choosable[name])
            fits = [o for o in opts if need(name, o[1]) <= limit]
            chosen[name] = fits[0] if fits else min(opts, key=lambda o: o[1])
    for name, (label, size) in chosen.items():
        fn = funcs[name]
        fn.attributes[SCRATCH_CHOICE_ATTR] = StringAttr(label)
        fn.attributes[_stated_attr(fn)] = IntegerAttr(size, i64)
        for _, _, storage, extra, _ in choosable[name]:
            storage.size = IntegerAttr(max(size + extra, 1), i64)
    return {name: label for name, (label, _) in chosen.items()}


@dataclass(frozen=True)
class ChooseScratchPass(ModulePass):
    """After ``lower-to-memory``, before ``plan-memory``: each function with several ways
    to run takes the one its priority picks (see the module docstring)."""

    name = "choose-scratch"
    relay_name: ClassVar[str] = "ChooseScratch"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ()

    priority: str = ""
    """``balanced``, ``speed`` or ``memory`` (empty: the PassContext's
    ``relay.ChooseScratch.priority``, default ``balanced``)."""
    budget: int = -1
    """A peak in bytes the ``balanced`` choice may use (0: none, the lowest reachable peak;
    -1: the PassContext's ``relay.ChooseScratch.budget``)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pctx = PassContext.current()
        priority = self.priority or str(pctx.get_config("relay.ChooseScratch.priority", "balanced"))
        budget = self.budget if self.budget >= 0 else int(pctx.get_config("relay.ChooseScratch.budget", 0))
        choose_scratch(op, priority, budget)
