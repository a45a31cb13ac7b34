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
from xrelay.runtime.native.makers import FAST, LOOKUPS, PAD_READERS

__all__ = ["bind_step", "bind_function", "join_steps"]


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
    of two or more consecutive native jobs of one pool (``native_thunk``'s ``native_job``)
    replaced by one thunk running them in one C call (``WorkerPool.run_native_chain``; each
    job still waits for all its parts, so the next reads its results). With ``one`` (the
    one-thread program) the thunks as they are: each runs its uncut kernel."""
    thunks = [t for c in steps for _, _, t in c.thunks]
    if one:
        return thunks
    out: list[Any] = []
    run: list[Any] = []

    def flush() -> None:
        if len(run) < 2:
            out.extend(run)
        else:
            out.append(_chain(list(run)))
        run.clear()

    for t in thunks:
        job = getattr(t, "native_job", None)
        if job is None or (run and run[0].native_job[0] is not job[0]):
            flush()
        if job is None:
            out.append(t)
        else:
            run.append(t)
    flush()
    return out


def _chain(thunks: list[Any]) -> Any:
    """One thunk running the native jobs of ``thunks`` (all of one pool) in one C call."""
    pool = thunks[0].native_job[0]
    quads = np.ascontiguousarray([t.native_job[1:] for t in thunks], np.int64)
    address, count, each = quads.ctypes.data, len(thunks), tuple(thunks)
    chain = pool.run_native_chain

    def run(held: np.ndarray = quads) -> None:  # holds the quads (each job's thunk in each holds its job)
        chain(address, count, each)

    return run
