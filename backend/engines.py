"""Each engine's compile-time side, found by its name in ``xrelay.runtime.engines.ENGINES``.

An engine's package ``xrelay.backend.<name>`` may define ``pattern_table()`` (Relay's composite
patterns for ``merge-composite``), ``supported(op)`` (Relay's ``target.<name>`` op attribute,
for ``annotate-target``), ``state_scratch(module)`` (the scratch bytes its kernels need, as
``relay.scratch_bytes``, before ``lower-to-memory``), and ``partition_module(module,
mixed_precision)`` with ``offloads(module)`` (``partition-for-engines``: the engine takes
functions of a module it offloads). The generic passes know no engine by
name: ``resolve_pass`` hands them the engine's table or predicate where a name is given (on
the command line of ``relay-opt``, in Relay's Python API).
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from xrelay.runtime.engines import ENGINES
from xrelay.transforms.annotate_target import AnnotateTargetPass
from xrelay.transforms.merge_composite import MergeCompositeError, MergeCompositePass
from xrelay.transforms.partition_for_engines import (
    PartitionForEnginesError,
    PartitionForEnginesPass,
)
from xrelay.transforms.state_scratch import StateScratchPass

__all__ = [
    "ENGINES", "compile_side", "offloading", "pattern_table", "resolve_pass", "state_scratch", "supported",
]  # fmt: skip


def compile_side(name: str) -> ModuleType:
    """The package ``xrelay.backend.<name>`` of an engine of ``ENGINES``."""
    if name not in ENGINES:
        raise KeyError(f"unknown engine '{name}' (known: {', '.join(ENGINES)})")
    return importlib.import_module(f"xrelay.backend.{name}")


def pattern_table(name: str) -> list[Any] | None:
    """The engine's composite pattern table, or None (not an engine, or it has none)."""
    if name not in ENGINES:
        return None
    make = getattr(compile_side(name), "pattern_table", None)
    return make() if make is not None else None


def supported(name: str) -> Callable[[Operation], bool] | None:
    """The engine's supported-op predicate, or None (not an engine, or it offloads no op)."""
    if name not in ENGINES:
        return None
    return getattr(compile_side(name), "supported", None)


def offloading(engines: tuple[str, ...], module: ModuleOp) -> tuple[str, ...]:
    """The engines of ``engines`` that partition ``module`` (``partition-for-engines``): those
    whose compile-time side can, and whose ``offloads(module)`` says it takes this one."""
    out = []
    for name in engines:
        side = compile_side(name)
        if hasattr(side, "partition_module") and side.offloads(module):
            out.append(name)
    return tuple(out)


def state_scratch(module: ModuleOp, threads: int | None = None) -> None:
    """The one step where every engine states, before ``lower-to-memory``, the scratch bytes
    its kernels need (``relay.scratch_bytes`` on the functions it will run), in ``ENGINES``
    order; ``lower-to-memory`` only reads them."""
    for _, state in _statements():
        state(module, threads)


def _statements() -> tuple[tuple[str, Callable[[ModuleOp, int | None], None]], ...]:
    """Every engine's ``state_scratch``, in ``ENGINES`` order."""
    found = ((name, getattr(compile_side(name), "state_scratch", None)) for name in ENGINES)
    return tuple((name, state) for name, state in found if state is not None)


def resolve_pass(p: Any) -> Any:
    """``p`` with the engines resolved: ``merge-composite{pattern-table=<engine>}`` gets the
    engine's table (another name is an error listing the engines that have one);
    ``annotate-target`` gets every engine's predicate (so ``targets=<engine>`` works and an
    unknown target's error lists the engines); ``state-scratch`` gets every engine's
    ``state_scratch``; ``partition-for-engines{engines=...}`` the named engines'
    ``partition_module`` (another name is an error listing those that have one); any other
    pass is returned as it is."""
    if isinstance(p, MergeCompositePass) and isinstance(p.pattern_table, str) and p.pattern_table:
        table = pattern_table(p.pattern_table)
        if table is None:
            known = [n for n in ENGINES if hasattr(compile_side(n), "pattern_table")]
            raise MergeCompositeError(
                f"merge-composite: unknown pattern table '{p.pattern_table}' (known: {', '.join(known)})"
            )
        return dataclasses.replace(p, pattern_table=table)
    if isinstance(p, AnnotateTargetPass):
        given = dict(p.supported)
        engines = tuple((n, pred) for n in ENGINES if n not in given and (pred := supported(n)) is not None)
        return dataclasses.replace(p, supported=tuple(p.supported) + engines) if engines else p
    if isinstance(p, StateScratchPass) and not p.states:
        return dataclasses.replace(p, states=_statements())
    if isinstance(p, PartitionForEnginesPass) and p.engines and not p.partitions:
        found = []
        for name in p.engines:
            part = getattr(compile_side(name), "partition_module", None) if name in ENGINES else None
            if part is None:
                known = [n for n in ENGINES if hasattr(compile_side(n), "partition_module")]
                raise PartitionForEnginesError(
                    f"partition-for-engines: '{name}' is not an engine that partitions (known: {', '.join(known)})"
                )
            found.append((name, part))
        return dataclasses.replace(p, partitions=tuple(found))
    return p
