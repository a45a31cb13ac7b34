"""The engines that run a program's steps, declared once.

Each engine is one line of ``ENGINES`` and two folders: ``runtime/<name>/`` holds what runs its
steps (its Python beside its C) and ``backend/<name>/`` what it needs at compile time (the
composite patterns and supported ops the BYOC passes offload to it, the scratch it states
before ``lower-to-memory``). ``xrelay.backend.engines`` finds that compile-time side by the
name, the executor its run-time side (``run_side``). The order is the preference: a step runs
on the first engine that takes it, and the last (``native``) takes every step.

An engine's run-time side is its module ``xrelay.runtime.<name>.steps``:
``bind_step(executor, fn, invoke, ins, outs, workspace)`` binds the function a
``memory.invoke`` calls to its arrays (a ``fast_kernels.CompiledFunction``), or returns None
where the engine does not take it; it may define ``join_steps(steps, park, one)`` (``run``'s
thunks for a run of consecutive steps it bound), ``PARK_BEFORE`` (park the executor's
spinning workers before such a run) and ``parts_switch(steps)`` (a function of one argument
that turns the one-thread program's steps cut in parts on or off, ``dnnl.parts``, and one
that gives the CPU seconds their helper threads have used; or None) and ``settle()`` (called
once the executor bound every step: hands back what only binding needed). The module is imported when an executor first asks for
the engine, so an engine with an optional library (oneDNN) costs nothing unless chosen.

The C target is not an engine here: it is a program of its own (``relay-build --target c``),
every step a function of one generated library, bound through ``Executor(step_compiler=...)``
(``runtime/c/module.py``), not chosen step by step from this table.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["ENGINES", "TAKES_EVERY_STEP", "run_side"]

ENGINES: dict[str, str] = {
    "dnnl": 'oneDNN primitives, for the functions partitioned to it (relay.compiler = "dnnl")',
    "native": "numpy/BLAS and the C loop kernels compiled for this machine; runs every step",
}

TAKES_EVERY_STEP = next(reversed(ENGINES))
"""The table's last engine: it runs every step no engine before it took (and the copies)."""


def run_side(name: str) -> ModuleType:
    """The module ``xrelay.runtime.<name>.steps`` of an engine of ``ENGINES``."""
    if name not in ENGINES:
        raise KeyError(f"unknown engine '{name}' (known: {', '.join(ENGINES)})")
    return importlib.import_module(f"xrelay.runtime.{name}.steps")
