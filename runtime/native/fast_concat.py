"""The native engine's ``concatenate``: the copies and the elementwise ops after them in one
pass, block by block, on the executor's threads.

A fused function like DenseNet's ``concatenate, add, nn.relu`` (the next layer's batch-norm
shift and ReLU on the joined features) ran as the reference kernel's copies and then two
whole passes of single-threaded numpy over the result. Here the result is cut along the
first axis before the joined one that has more than one element (the rows of a
channels-last image): each block gets its slice of every input copied in, then the in-place
elementwise chain (``fast_kernels._epilogue_of``: a bias, a scale, ``relu``, ``clip``) runs
on that block while it is in cache. Blocks are split between the threads; elementwise ops
give the same bits in any blocking, so the result equals the reference's bit for bit.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from xrelay.runtime.native.fast_kernels import (
    FINE_CHUNKS_PER_THREAD,
    Thunk,
    chunk_count,
    epilogue_thunks,
    even_ranges,
    in_sequence,
    split_job,
)

__all__ = ["fast_concatenate"]

def fast_concatenate(op: Any, vals: list[Any], out: Any, ws: Any, opts: Any) -> list[tuple[str, Thunk]] | None:
    """Thunks of ``concatenate`` (and the epilogue in ``opts.epilogue``) into ``out``, or None
    for what the reference kernel keeps (mixed dtypes, an input overlapping the output)."""
    if not vals or not isinstance(out, np.ndarray) or not out.flags.c_contiguous:
        return None
    if any(not isinstance(v, np.ndarray) or v.dtype != out.dtype or np.shares_memory(v, out) for v in vals):
        return None
    axis = int(op.attrs["axis"]) % out.ndim
    if sum(v.shape[axis] for v in vals) != out.shape[axis] or any(v.ndim != out.ndim for v in vals):
        return None
    epilogue = list(opts.epilogue)
    cut = next((i for i in range(axis) if out.shape[i] > 1), None)
    extent = 1 if cut is None else out.shape[cut]

    def block(lo: int, hi: int) -> list[Thunk]:
        index: list[Any] = [slice(None)] * out.ndim
        if cut is not None:
            index[cut] = slice(lo, hi)
        where = tuple(index)
        # one np.concatenate into the block (slice assignment per input is 5x slower)
        joined = functools.partial(np.concatenate, [v[where] for v in vals], axis, out[where])
        return [joined, *epilogue_thunks(epilogue, out, where)]

    def make(lo: int, hi: int) -> Thunk:
        return in_sequence(block(lo, hi))

    ranges = even_ranges(extent, chunk_count(opts))
    fine = even_ranges(extent, chunk_count(opts, FINE_CHUNKS_PER_THREAD))
    return [("copy", split_job(opts, make, ranges, extent, fine))]
