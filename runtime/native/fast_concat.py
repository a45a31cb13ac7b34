"""The native engine's ``concatenate``: the copies and the elementwise ops after them in one
pass, block by block, on the executor's threads.

A fused function like DenseNet's ``concatenate, add, nn.relu`` (the next layer's batch-norm
shift and ReLU on the joined features) ran as the reference kernel's copies and then two
whole passes of single-threaded numpy over the result. With the C loop kernels the result
is viewed as (outer, joined, inner) (a channels-last image: its pixels, their channels, 1)
and the C kernel ``concat_epi`` copies each outer index's run of every input into place and
runs the in-place elementwise chain (``fast_kernels._epilogue_of``: a bias, a scale,
``relu``, ``clip``; up to four ops whose operands vary along the joined axis only) on the
joined run while it is in cache (one pass over the result, no Python per block); ranges
of outer indices are split between the threads. Otherwise the result is cut along the
first axis before the joined one that has more than one element: each block gets one
``np.concatenate`` and the chain as numpy ufuncs. Elementwise ops give the same bits in any
blocking, so either way the result equals the reference's bit for bit.

``stack`` runs the same way: its inputs, each seen with an axis of 1 where they are stacked,
are a concatenation's.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from xrelay.runtime.native.fast_kernels import (
    _EPILOGUE_CODES,
    _OUT,
    FINE_CHUNKS_PER_THREAD,
    Thunk,
    bind_kernel,
    chunk_count,
    epilogue_thunks,
    even_ranges,
    in_sequence,
    loop_kernels_available,
    split_job,
)

__all__ = ["fast_concatenate", "fast_stack"]

def fast_concatenate(op: Any, vals: list[Any], out: Any, ws: Any, opts: Any) -> list[tuple[str, Thunk]] | None:
    """Thunks of ``concatenate`` (and the epilogue in ``opts.epilogue``) into ``out``, or None
    for what the reference kernel keeps (mixed dtypes, an input overlapping the output)."""
    if not _joinable(vals, out):
        return None
    return _join(vals, out, int(op.attrs["axis"]) % out.ndim, opts)


def fast_stack(op: Any, vals: list[Any], out: Any, ws: Any, opts: Any) -> list[tuple[str, Thunk]] | None:
    """``stack``: the concatenation of its inputs, each seen with an axis of 1 at ``axis`` (a
    view), so it runs as a concatenation does: ``concat_epi`` in C where the inputs are
    contiguous (a call the run chains), else numpy's concatenation block by block (a
    recurrent layer's stacked time steps were a ``np.stack`` call per layer between oneDNN
    runs). The same copies: the reference's bits."""
    if not _joinable(vals, out):
        return None
    axis = int(op.attrs["axis"]) % out.ndim
    if any(v.ndim + 1 != out.ndim for v in vals):
        return None
    return _join([np.expand_dims(v, axis) for v in vals], out, axis, opts)


def _joinable(vals: list[Any], out: Any) -> bool:
    """Whether these kernels take the inputs and result: arrays of one dtype, the result
    contiguous and overlapping no input (else the reference kernel runs)."""
    if not vals or not isinstance(out, np.ndarray) or not out.flags.c_contiguous:
        return False
    return not any(not isinstance(v, np.ndarray) or v.dtype != out.dtype or np.shares_memory(v, out) for v in vals)


def _join(vals: list[np.ndarray], out: np.ndarray, axis: int, opts: Any) -> list[tuple[str, Thunk]] | None:
    """Thunks joining ``vals`` along ``axis`` into ``out`` (with ``opts.epilogue``)."""
    if sum(v.shape[axis] for v in vals) != out.shape[axis] or any(v.ndim != out.ndim for v in vals):
        return None
    epilogue = list(opts.epilogue)
    joined = _in_one_pass(vals, out, axis, epilogue, opts)
    if joined is not None:
        return [("copy", joined)]
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


def _in_one_pass(vals: list[np.ndarray], out: np.ndarray, axis: int, epilogue: list, opts: Any) -> Thunk | None:
    """The C kernel ``concat_epi`` over ranges of the outer indices, or None where it does
    not apply (no C kernels, not float, an input not contiguous, more than four epilogue
    ops, an operand that varies along another axis than the joined one)."""
    if not (opts.use_c_kernels and loop_kernels_available()) or out.dtype not in (np.float32, np.float64):
        return None
    if len(epilogue) > 4 or any(not v.flags.c_contiguous for v in vals):
        return None
    outer = int(np.prod(out.shape[:axis], dtype=np.int64))
    inner = int(np.prod(out.shape[axis + 1 :], dtype=np.int64))
    if outer * inner == 0:
        return None
    size = out.dtype.itemsize
    operands, steps, codes, swapped = [], [], [], []
    for uf, a, b in epilogue:
        other = b if a is _OUT else a
        if uf not in _EPILOGUE_CODES or other is _OUT:
            return None
        full = np.broadcast_to(other, out.shape)
        if any(s != 0 for i, s in enumerate(full.strides) if i != axis) or full.strides[axis] % size:
            return None
        # the operand's first element along the joined axis (the view keeps its base alive)
        operands.append(full[(0,) * axis + (slice(None),) + (0,) * (out.ndim - axis - 1)])
        steps.append(full.strides[axis] // size)
        codes.append(_EPILOGUE_CODES[uf])
        swapped.append(a is not _OUT)
    while len(codes) < 4:  # unused (code -1)
        operands.append(out.reshape(-1)[:1])
        steps.append(0)
        codes.append(-1)
        swapped.append(False)
    o3 = out.reshape(outer, out.shape[axis], inner)
    ins = [v.reshape(outer, v.shape[axis], inner) for v in vals]

    def make(lo: int, hi: int) -> Thunk:
        return bind_kernel("concat_epi", o3, ins, lo, hi, operands, steps, codes, swapped)

    ranges = even_ranges(outer, chunk_count(opts))
    fine = even_ranges(outer, chunk_count(opts, FINE_CHUNKS_PER_THREAD))
    return split_job(opts, make, ranges, outer, fine)
