"""The native engine's steps in the arena executor (``runtime/engines.py``'s protocol).

``bind_step`` binds any primitive function to its arrays as the fast kernels' thunks
(``fast_kernels.compile_function`` with this engine's makers, chunked on the executor's
pool), the reference kernels where no fast kernel applies: it takes every step.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects import func

from xrelay.dialects.relay import ConstantOp
from xrelay.runtime.compiled import CompiledFunction
from xrelay.runtime.native.fast_kernels import compile_function
from xrelay.runtime.native.makers import FAST, LOOKUPS, PAD_READERS

__all__ = ["bind_step", "bind_function"]


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
