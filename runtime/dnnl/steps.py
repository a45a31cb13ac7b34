"""The oneDNN engine's steps in the arena executor (``runtime/engines.py``'s protocol).

``bind_step`` binds a function partitioned to it (``relay.compiler = "dnnl"``) to its arrays as oneDNN primitives
(``primitives.plan_function``), run the way ``choose-scratch`` chose
(``relay.scratch_choice``), or returns None where oneDNN cannot run it (the next engine
takes it); a function whose work is at most ``SMALL_WORK`` runs the primitives made for one
thread in the program for all the threads too. ``join_steps`` makes one C call of each run of
consecutive oneDNN steps. The pool's
workers, which spin between jobs, are parked before the first step of such a run
(``PARK_BEFORE``): oneDNN's OpenMP threads need those cores.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
from xdsl.dialects import func

from xrelay.dialects.memory import scratch_choice
from xrelay.dialects.relay import ConstantOp
from xrelay.runtime.compiled import CompiledFunction
from xrelay.runtime.dnnl.library import dnnl_library, release_code_pages
from xrelay.runtime.dnnl.primitives import (
    SMALL_WORK,
    DnnlUnsupported,
    _Owned,
    plan_function,
    run_together,
    way_of,
)

__all__ = ["PARK_BEFORE", "bind_step", "host_native", "join_steps", "parts_switch", "settle"]

PARK_BEFORE = True


def bind_step(ex: Any, fn: func.FuncOp, op: Any, ins: list, outs: list, ws: Any) -> CompiledFunction | None:
    """The function (partitioned to oneDNN: the executor asks only for those) as oneDNN
    primitives bound to ``ins``/``outs``/``ws``, or None where oneDNN cannot run it."""
    fixed = [a if isinstance(v.owner, ConstantOp) else None for v, a in zip(op.inputs, ins)]

    def constant(c: ConstantOp) -> Any:
        value = ex.constants.get(c)
        return c.numpy() if value is None else value

    memo: dict = {}
    shared = ex.shared_weights  # (one reordered copy of a weight for every function reading it)
    way = way_of(scratch_choice(fn))  # the way choose-scratch chose (its workspace planned)

    def bound(threads: int, slots: int = 0) -> tuple[Any, Any]:
        plan = plan_function(fn, lookup=ex.functions.get, constant=constant, fixed=fixed, threads=threads, memo=memo, **way)
        if plan.winograd and plan.workspace_bytes > (0 if ws is None else ws.nbytes):
            # planned without Winograd's temporaries (built with another
            # XRELAY_DNNL_WINOGRAD): the direct convolution still fits
            plan = plan_function(
                fn, lookup=ex.functions.get, constant=constant, fixed=fixed, threads=threads, winograd=False, memo=memo
            )
        return plan, plan.bind(ins, outs, ws, threads, shared, slots)

    try:
        plan, thunk = bound(ex.pool.threads)
    except DnnlUnsupported:
        return None
    one = None
    if ex.pool.threads > 1:
        # the same primitives made for one thread (RunChooser): a team of one has no
        # barrier to wait at when another process holds a core
        try:
            one = bound(1, ex.pool.threads)[1]
        except DnnlUnsupported:
            one = None  # (its workspace does not fit: the threads' primitives run alone)
        dnnl_library().xr_dnnl_set_threads(ex.pool.threads)  # as the caller had it
    compiled = CompiledFunction(fn.sym_name.data)
    # the profile's family: the steps' one, else the family of the step doing the most
    # products (a dense with its GELU pass is a matmul), else "other"
    families = {s.family for s in plan.steps}
    heaviest = max(plan.steps, key=lambda s: s.macs, default=None)
    family = families.pop() if len(families) == 1 else heaviest.family if heaviest and heaviest.macs else "other"
    label = ", ".join(dict.fromkeys(s.name for s in plan.steps))
    # a small function runs its one-thread primitives in both programs (SMALL_WORK)
    small = one is not None and plan.work <= SMALL_WORK
    compiled.thunks.append((label, family, one if small else thunk))
    compiled.dnnl_thunk = one if small else thunk  # type: ignore[attr-defined]  # before any parking wrapper
    compiled.thunk_one = one  # type: ignore[attr-defined]
    # the one-thread program's thunk with its big convolutions in parts (dnnl.parts)
    compiled.thunk_parts = getattr(one, "parts_thunk", None)  # type: ignore[attr-defined]
    compiled.small = small  # type: ignore[attr-defined]
    compiled.fast_ops = len(plan.steps)
    compiled.dnnl_plan = plan  # type: ignore[attr-defined]
    return compiled


def join_steps(steps: list[CompiledFunction], park: Any, one: bool) -> list[Any]:
    """``run``'s thunks for a run of consecutive oneDNN steps: one C call when there are
    several (``profile`` and ``step_outputs`` still run them one by one). With ``one``, the
    steps' primitives made for one thread (where a step has none, its primitives for all
    the threads run with one OpenMP thread)."""
    raws = []
    for c in steps:
        ((_, _, thunk),) = c.thunks
        raw = getattr(c, "dnnl_thunk", thunk)
        if one:
            raw = getattr(c, "thunk_parts", None) or getattr(c, "thunk_one", None) or _with_threads(raw, 1)
            thunk = raw
        raws.append((raw, thunk))
    if len(raws) == 1:
        return [raws[0][1]]
    joined = run_together([raw for raw, _ in raws])

    def parked() -> None:
        park()
        joined()

    parked.joined = joined  # type: ignore[attr-defined]
    return [parked]


def parts_switch(steps: list[CompiledFunction]) -> Any:
    """When one of ``steps`` has parts (``dnnl.parts``): the shim's ``xr_dnnl_parts_mode``
    (1: the one-thread program's cut steps run in parts, 0: uncut; the same bits) and
    ``xr_dnnl_parts_cpu`` (the part workers' CPU seconds so far); else None."""
    if not any(getattr(c, "thunk_parts", None) is not None for c in steps):
        return None
    lib = dnnl_library()
    return None if lib is None else (lib.xr_dnnl_parts_mode, lib.xr_dnnl_parts_cpu)


def settle() -> None:
    """The executor bound every step: oneDNN's code pages that only creating the primitives
    ran through go back (``library.release_code_pages``)."""
    release_code_pages()


def _with_threads(raw: Any, threads: int) -> Any:
    """A bound oneDNN thunk that runs its primitives with ``threads`` OpenMP threads."""
    prims, nargs, keys, mems, _ = raw.dnnl_run
    proxy = SimpleNamespace(dnnl_run=(prims, nargs, keys, mems, threads), keep=raw)
    thunk = run_together([proxy])
    thunk.dnnl_run = proxy.dnnl_run  # type: ignore[attr-defined]
    return thunk


def host_native(quads: list[tuple[int, int, int, int]], threads: int, keep: Any) -> CompiledFunction | None:
    """A step of this engine running the native engine's jobs ``quads`` ((fn, job, parts,
    slots): ``native.steps.chain_link``) inside a joined run, on oneDNN's OpenMP team (the
    shim's ``xr_dnnl_native``: each thread takes parts from one counter, its thread number
    the slot), so the executor joins a native step whose thunks are all such jobs with the
    oneDNN steps around it: no hand-over from one thread team to the other. ``keep``: what
    the jobs' addresses point into. None without the library."""
    lib = dnnl_library()
    if lib is None or not quads:
        return None
    table = np.ascontiguousarray(quads, np.int64)
    handle = lib.xr_dnnl_native(len(quads), table.ctypes.data)
    if not handle:
        return None
    proxy = SimpleNamespace(
        dnnl_run=([handle], [-1], [0], [0], threads), keep=(_Owned(lib.xr_dnnl_native_free, handle), keep)
    )
    thunk = run_together([proxy])
    thunk.dnnl_run = proxy.dnnl_run  # type: ignore[attr-defined]
    compiled = CompiledFunction("native jobs")
    compiled.thunks.append(("native jobs", "other", thunk))
    compiled.dnnl_thunk = thunk  # type: ignore[attr-defined]
    return compiled
