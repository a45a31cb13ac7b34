"""Planning problems with no free byte: a (time x offset) rectangle cut into buffers.

A *perfect packing* is made by cutting the rectangle ``[0, width) x [0, steps)`` recursively
(guillotine cuts, each across one piece, in offset or in time) until it is ``n`` pieces; each
piece becomes a buffer of the piece's height in bytes, live over the piece's steps. Every
step is then covered exactly, so the max-live lower bound equals ``width`` and the plan made
by the cuts reaches it: the optimum is known by construction. Such problems are the hard
case of exact planning (no slack prunes anything), so they measure what ``optimal`` holds.

>>> p = perfect_packing(50, seed=1)
>>> p.optimum, len(p.buffers)
(1048576, 50)
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from xrelay.transforms.planners import Buffer


@dataclass(frozen=True)
class PerfectPacking:
    """Buffers whose best plan has no free byte: ``optimum`` bytes, reached by ``offsets``."""

    buffers: list[Buffer]
    optimum: int
    offsets: dict[str, int]


def perfect_packing(
    n: int,
    seed: int = 0,
    width: int = 1 << 20,
    steps: int | None = None,
    quantum: int = 64,
    time_bias: float = 0.5,
) -> PerfectPacking:
    """Cut ``width`` bytes x ``steps`` steps into ``n`` buffers.

    ``quantum`` is the granularity of offset cuts (every size is a multiple of it);
    ``time_bias`` is the chance that a piece that can be cut both ways is cut in time;
    ``steps`` defaults to ``n`` (lifetimes then average a few steps). Pieces are chosen for
    cutting in proportion to their area, so sizes and lifetimes spread over several orders.
    Buffers are listed in a seeded random order with names ``b0, b1, ...``.
    """
    if n < 1:
        raise ValueError(f"perfect_packing: n must be at least 1, not {n}")
    steps = n if steps is None else steps
    if width % quantum or width < quantum:
        raise ValueError(f"perfect_packing: width {width} is not a multiple of {quantum}")
    cells = (width // quantum) * steps
    if n > cells:
        raise ValueError(f"perfect_packing: {n} buffers do not fit {cells} cells")
    rng = random.Random(seed)
    # Pieces as [offset_lo, offset_hi, step_lo, step_hi) in quanta and steps.
    pieces = [(0, width // quantum, 0, steps)]
    while len(pieces) < n:
        areas = [(h1 - h0) * (t1 - t0) for h0, h1, t0, t1 in pieces]
        # Only pieces of two or more cells can be cut.
        weights = [a if a > 1 else 0 for a in areas]
        k = rng.choices(range(len(pieces)), weights)[0]
        h0, h1, t0, t1 = pieces[k]
        can_time, can_off = t1 - t0 > 1, h1 - h0 > 1
        if can_time and (not can_off or rng.random() < time_bias):
            cut = rng.randrange(t0 + 1, t1)
            halves = [(h0, h1, t0, cut), (h0, h1, cut, t1)]
        else:
            cut = rng.randrange(h0 + 1, h1)
            halves = [(h0, cut, t0, t1), (cut, h1, t0, t1)]
        pieces[k : k + 1] = halves
    rng.shuffle(pieces)
    buffers = []
    offsets = {}
    for i, (h0, h1, t0, t1) in enumerate(pieces):
        name = f"b{i}"
        buffers.append(Buffer(name, (h1 - h0) * quantum, t0, t1 - 1))
        offsets[name] = h0 * quantum
    return PerfectPacking(buffers, width, offsets)
