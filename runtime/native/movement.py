"""Functions that only move data, as a few strided copies from their inputs to their results.

A fused function made only of ops that rearrange elements -- ``concatenate``, ``reshape``,
``transpose``, ``split``, ``strided_slice``, ``squeeze``, ``expand_dims``,
``layout_transform``, ``copy`` -- ran op by op, each one a full copy into a temporary:
ShuffleNet's channel shuffle (``concatenate, reshape, transpose, reshape, split``) copied its
tensor three times. Which input element lands where does not depend on the values, so it is
found once, when the step is bound: the function runs on *addresses* (input ``i``'s elements
numbered ``i * 2**40 + offset``) through the reference kernels, each result's addresses are
cut into runs of consecutive elements of one input, and the runs of each (result, input) pair
are factored into a strided pattern: ``count`` runs, ``levels`` deep, each level a constant
step in the result and in the input. Each pair is then one ``np.copyto`` between two strided
views of the arena (ShuffleNet's shuffle: four copies, every element moved once). A function
whose runs do not factor, or whose tensors are not contiguous, is left to the op-by-op path.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

__all__ = ["MOVEMENT_OPS", "compile_movement"]

MOVEMENT_OPS = frozenset({
    "concatenate", "reshape", "transpose", "split", "strided_slice", "squeeze", "expand_dims",
    "layout_transform", "copy", "nn.batch_flatten",
})  # fmt: skip
"""Ops whose result elements are input elements, placed by the attributes and shapes alone."""

MAX_ELEMENTS = 1 << 20
"""Largest result (elements) analysed: the addresses are int64, 8 bytes per element plus a
few temporaries of that size while the step is bound, which a loading process's peak
memory would show."""

_SHIFT = 40


def _factor(out_starts: np.ndarray, src_starts: np.ndarray) -> list[tuple[int, int, int]] | None:
    """``[(count, out_step, src_step), ...]`` outermost first, such that the runs' starts are
    ``base + sum(index * step)`` over the levels in C order; None when they are not."""
    levels: list[tuple[int, int, int]] = []
    o, s = out_starts, src_starts
    while len(o) > 1:
        do, ds = int(o[1] - o[0]), int(s[1] - s[0])
        bad = np.flatnonzero((np.diff(o) != do) | (np.diff(s) != ds))
        n = int(bad[0]) + 1 if bad.size else len(o)
        if len(o) % n:
            return None
        o2, s2 = o.reshape(-1, n), s.reshape(-1, n)
        if not (np.array_equal(o2 - o2[:, :1], np.broadcast_to(o2[0] - o2[0, 0], o2.shape))
                and np.array_equal(s2 - s2[:, :1], np.broadcast_to(s2[0] - s2[0, 0], s2.shape))):  # fmt: skip
            return None
        levels.append((n, do, ds))
        o, s = o2[:, 0], s2[:, 0]
    return levels[::-1]


def _addresses(fn: Any, shapes: Sequence[tuple[int, ...]]) -> list[np.ndarray] | None:
    """Each result's element addresses, from the reference kernels run on address inputs."""
    from xdsl.dialects import func

    from xrelay.dialects.relay import RelayOp
    from xrelay.kernels import KERNELS

    body = fn.body.block
    env: dict[Any, Any] = {}
    for i, (arg, shape) in enumerate(zip(body.args, shapes)):
        env[arg] = (np.int64(i) << _SHIFT) + np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    for op in body.ops:
        if isinstance(op, func.ReturnOp):
            return [np.asarray(env[v]) for v in op.arguments]
        if not isinstance(op, RelayOp) or op.RELAY_NAME not in MOVEMENT_OPS:
            return None
        res = KERNELS[op.RELAY_NAME](*[env[v] for v in op.operands], **op.attrs)
        res = res if isinstance(res, tuple | list) else (res,)
        if len(res) != len(op.results):
            return None
        env.update(zip(op.results, res))
    return None


def compile_movement(fn: Any, inputs: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> list | None:
    """``[(label, family, thunk)]`` copying ``inputs`` into ``outs`` as ``fn`` does, or None
    (a single op: its own kernel is as good, and ``concatenate``'s runs on the threads; an op
    that is not a movement, tensors that are not contiguous or too large, a pattern
    that does not factor)."""
    from xdsl.dialects import func

    from xrelay.dialects.relay import RelayOp

    ops = [op for op in fn.body.block.ops if not isinstance(op, func.ReturnOp)]
    if len(ops) < 2 or any(not isinstance(op, RelayOp) or op.RELAY_NAME not in MOVEMENT_OPS for op in ops):
        return None
    arrays = [*inputs, *outs]
    if any(not isinstance(a, np.ndarray) or not a.flags.c_contiguous for a in arrays):
        return None
    if len({a.dtype for a in arrays}) != 1 or sum(o.size for o in outs) > MAX_ELEMENTS:
        return None
    addresses = _addresses(fn, [a.shape for a in inputs])
    if addresses is None or any(a.shape != o.shape for a, o in zip(addresses, outs)):
        return None
    item = outs[0].itemsize
    copies = []
    for out, addr in zip(outs, addresses):
        flat = addr.reshape(-1)
        if flat.size == 0:
            continue
        src, off = flat >> _SHIFT, flat & ((1 << _SHIFT) - 1)
        cut = np.flatnonzero((np.diff(src) != 0) | (np.diff(off) != 1)) + 1
        starts = np.concatenate(([0], cut))
        lengths = np.diff(np.concatenate((starts, [flat.size])))
        for i in np.unique(src[starts]):
            mine = src[starts] == i
            run = np.unique(lengths[mine])
            if run.size != 1:
                return None
            levels = _factor(starts[mine], off[starts][mine])
            if levels is None or any(d < 0 or e < 0 for _, d, e in levels):
                return None
            o0, s0 = int(starts[mine][0]), int(off[starts][mine][0])
            shape = [n for n, _, _ in levels] + [int(run[0])]
            o_strides = [d * item for _, d, _ in levels] + [item]
            s_strides = [d * item for _, _, d in levels] + [item]
            src_flat = inputs[int(i)].reshape(-1)
            reach_o = o0 + sum((n - 1) * d for n, d, _ in levels) + shape[-1]
            reach_s = s0 + sum((n - 1) * d for n, _, d in levels) + shape[-1]
            if min(o0, s0) < 0 or reach_o > out.size or reach_s > src_flat.size:
                return None  # (cannot happen for addresses the kernels produced; checked anyway)
            dst_view = as_strided(out.reshape(-1)[o0:], shape, o_strides, writeable=True)
            src_view = as_strided(src_flat[s0:], shape, s_strides, writeable=False)
            copies.append(functools.partial(np.copyto, dst_view, src_view))
    label = ", ".join(dict.fromkeys(op.RELAY_NAME for op in ops)) + " as strided copies"

    def run() -> None:
        for c in copies:
            c()

    return [(label, "copy", run)]
