"""The native engine's steps in the arena executor (``runtime/engines.py``'s protocol).

``bind_step`` binds any primitive function to its arrays as the fast kernels' thunks
(``fast_kernels.compile_function`` with this engine's makers, chunked on the executor's
pool), the reference kernels where no fast kernel applies: it takes every step.
``join_steps`` makes one C call of each run of consecutive native jobs (``native_thunk``)
in ``run``'s program: an int8 MobileNetV2 is ~60 such jobs, each ~2.5 us of Python and ctypes
when called one by one.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects import func

from xrelay.dialects.relay import ConstantOp
from xrelay.runtime.compiled import CompiledFunction
from xrelay.runtime.native.fast_kernels import compile_function
from xrelay.runtime.native.library import call_part, call_table, native_chain
from xrelay.runtime.native.makers import FAST, LOOKUPS, PAD_READERS

__all__ = ["bind_function", "bind_step", "chain_link", "join_steps"]


def bind_step(ex: Any, fn: func.FuncOp, op: Any, ins: list, outs: list, ws: Any) -> CompiledFunction:
    """The function ``op`` invokes, bound for the executor ``ex``."""
    return bind_function(
        fn, op, ins, outs, ws, use_c_kernels=ex.use_c_kernels, fast=ex.fast, pool=ex.pool,
        call_function=ex._call_reference, lookup=ex.functions.get,
    )  # fmt: skip


def bind_function(
    fn: func.FuncOp, op: Any, ins: list, outs: list, ws: Any, *, fast: bool, use_c_kernels: bool,
    pool: Any, call_function: Any, lookup: Any,
) -> CompiledFunction:  # fmt: skip
    """``compile_function`` with the native engine's makers (the executor and
    ``run_memory_compiled`` both bind through here)."""
    return compile_function(
        fn,
        ins,
        outs,
        ws,
        fast=fast,
        use_c_kernels=use_c_kernels,
        pool=pool,
        fixed=[isinstance(v.owner, ConstantOp) for v in op.inputs],
        call_function=call_function,
        lookup=lookup,
        makers=FAST,
        pad_readers=PAD_READERS,
        lookups=LOOKUPS,
    )


def join_steps(steps: list[CompiledFunction], park: Any, one: bool) -> list[Any]:
    """``run``'s thunks for a run of consecutive native steps: their thunks in order, each run
    of two or more consecutive native jobs (``native_job``: ``fast_int8.native_thunk``,
    ``library.call_job``) and single C calls (``library.c_call``: a job of one part, run on the
    calling thread) replaced by one thunk running them in one C call
    (``WorkerPool.run_native_chain``; each job still waits for all its parts, so the next
    reads its results). With ``one`` (the one-thread program) the thunks as they are: each
    runs its uncut kernel."""
    thunks = [t for c in steps for _, _, t in c.thunks]
    if one:
        return thunks
    out: list[Any] = []
    run: list[tuple[Any, tuple]] = []  # (thunk, its (pool or None, fn, job, parts, slots))

    def flush() -> None:
        if len(run) < 2:
            out.extend(t for t, _ in run)
        else:
            out.append(_chain(list(run)))
        run.clear()

    for t in thunks:
        job = chain_link(t)
        pools = {q[0] for _, q in run if q[0] is not None}
        if job is None or (job[0] is not None and pools and job[0] not in pools):
            flush()
        if job is None:
            out.append(t)
        else:
            run.append((t, job))
    flush()
    return out


def chain_link(t: Any) -> tuple | None:
    """``(pool, fn, job, parts, slots)`` of a thunk a chain can run from C: a native job (its
    pool's), or a single C call (``c_call``: one part on the calling thread, any pool), else
    None."""
    job = getattr(t, "native_job", None)
    if job is not None:
        return job
    if getattr(t, "c_call", None) is not None and call_part() is not None:
        table = getattr(t, "chain_table", None)
        if table is None:  # (made once: chains made earlier point into it)
            table = call_table([t])
            t.chain_table = table  # type: ignore[attr-defined]  # (held by the thunk)
        return (None, call_part(), table.ctypes.data, 1, 1)
    return None


def _chain(links: list[tuple[Any, tuple]]) -> Any:
    """One thunk running the native jobs and C calls of ``links`` in one C call (on the pool
    of its jobs; with single calls only, on the calling thread alone)."""
    pool = next((q[0] for _, q in links if q[0] is not None), None)
    quads = np.ascontiguousarray([q[1:] for _, q in links], np.int64)
    address, count, each = quads.ctypes.data, len(links), tuple(t for t, _ in links)
    if pool is None:
        chain = native_chain()
        assert chain is not None  # (a C call had a row: the library is loaded)

        def inline(held: np.ndarray = quads, each: tuple = each) -> None:  # holds the quads and the calls
            chain(address, count)

        inline.chained = count  # type: ignore[attr-defined]
        return inline
    run_chain = pool.run_native_chain

    def run(held: np.ndarray = quads) -> None:  # holds the quads (each job's thunk in each holds its job)
        run_chain(address, count, each)

    run.chained = count  # type: ignore[attr-defined]
    return run
