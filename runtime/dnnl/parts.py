"""Steps cut in parts: how the one-thread program keeps the share of a busy core it gets.

With another process on one of two cores, oneDNN's team of two collapses (static parts and
a barrier per step: docs/guide/threads.md) and the executor runs its one-thread program. In
that program a 2-D convolution or a dense step big enough (``PART_WORK``) runs as
``parts_for`` parts of its output rows (``row_cuts``), each part a primitive made for one
thread over a view of the same arena tensors (``conv_rows``: the input rows a convolution's
part reads and its own top and bottom padding; a dense step's part reads its own rows of
the data), bound once per slot (each slot its own scratchpad). The shim (``xr_dnnl_parts``)
runs the parts on the caller and part workers that sleep between steps: the caller claims
the first part, then each thread takes the next part from one counter. A worker woken for
a step keeps off the CPU the caller posted it from (else the scheduler often queues it
there, where the two share one core), runs as soon as the scheduler gives it the busy
core's share and takes the parts it can; the caller takes the rest and waits only for
parts a worker started. Every part computes the same output rows whichever thread runs
it, so a run's bits do not depend on which thread took which part.

``XRELAY_DNNL_PARTS=0`` binds the one-thread program without parts.
"""

from __future__ import annotations

import os

__all__ = [
    "LONG_SHARE",
    "LONG_WORK",
    "MAX_PARTS",
    "PART_WORK",
    "RESCUE_US",
    "SPIN_US",
    "conv_rows",
    "parts_enabled",
    "parts_for",
    "rescue_ns",
    "row_cuts",
    "spin_ns",
]

PART_WORK = 400_000
"""The least work (multiply-adds or elements held, as ``FunctionPlan.work`` counts) of one
part: about 10 us of one core, so the parts of a step outweigh the worker's wake-up and the
part's own start."""

MAX_PARTS = 2
"""The most parts of one step. Two (one per thread of a 2-core machine) ran the one-thread
program fastest with the other core free: MobileNetV3, ShuffleNetV2, MobileNetV2, MnasNet
4.66-4.71 / 3.16-3.26 / 4.11-4.28 / 4.24-4.26 ms with 2 parts against 4.73-4.79 / 3.24-3.64
/ 4.75-4.87 / 4.49-4.56 with 4 (two in-process blocks, 21 rounds, load 1.2-3; team 3.4-3.7 /
2.4-2.8 / 3.8 / 3.8). More parts would leave less to wait for behind a preempted worker,
but beside a busy core ``PartsChoice`` runs the steps uncut where the parts lose, and each
part of a dense step streams the whole weight matrix (BERT-base's in 8 parts: 116-120 ms
with the other core free, 87 on the team, 165 uncut)."""

LONG_WORK = 40_000_000
"""The work (multiply-adds) from which a step's first part, the one the caller runs, is
the larger (``LONG_SHARE``). Beside a busy process a worker woken for a short step runs
its part at once (it slept, so the scheduler owes it time), but over a step of about a
millisecond or more (a scheduler slice) it gets the half of its core that is its fair
share, and even halves leave the caller waiting for the worker's part. Measured on the
2-core Xeon beside ``peers.BusyCore``, in one process (6 blocks of 5 alternated rounds,
medians, load 1.7-2.2), even halves / two thirds for the caller / two thirds from this
work: ResNet-50 47.8 / 44.1 / 44.1 ms, ConvNeXt-Tiny 67.5 / 55.8 / 56.1, BERT-base 163 /
136 / -, Swin-T 64.3 / 60.8 / -, and for models of small steps MobileNetV2 5.03 / 5.29 /
4.83, MnasNet 4.45 / 5.13 / -, EfficientNet-B0 10.2 / 10.3 / 9.9, DenseNet-121 31.7 /
32.5 / 32.6."""

LONG_SHARE = 2 / 3
"""The caller's share of the rows of a step of at least ``LONG_WORK`` in two parts: the
caller at full speed and a worker at half its core finish together."""

MIN_ROWS = 1
"""The fewest output rows of one part: oneDNN's kernels run a matrix of the part's pixels,
and a part of one 7-pixel row of a 7x7 map costs more per pixel than the whole."""

SPIN_US = 40
"""How long a part worker that finished its parts spins for the next step before it sleeps
(``xr_dnnl_parts_spin``, ``XRELAY_DNNL_PART_SPIN_US``): waking a sleeping thread takes
longer than most steps of a small model, so a worker that always slept came too late for
the parts of the next step; one that spins longer than the gap between two cut steps takes
its core's share even when nothing is cut."""


RESCUE_US = 100
"""How long at least the caller, its own parts done, waits spinning for the parts a worker
holds (and no less than its own parts took) before it moves that worker to its own CPU and
sleeps until they are done (``xr_dnnl_parts_rescue``): a worker that has not finished by
then is most likely descheduled on the other process's core, where it would wait up to a
scheduler slice (milliseconds) for its next turn, and the caller's core is about to be free.
Moving it costs a migration and the caller's sleep and wake-up, tens of microseconds.
Measured beside ``peers.BusyCore`` (10 blocks of 5 rounds alternated with onnxruntime in one
process, medians / 90th percentiles in ms, load 1.8-1.9): MobileNetV2 4.22 / 6.31 without,
3.79 / 5.17, 3.77 / 5.04 and 3.98 / 5.06 from 20, 100 and 300 us; MnasNet 4.39 / 7.48
without, 3.81-4.02 / 5.18-5.28 with."""


def rescue_ns() -> int:
    """``RESCUE_US`` in nanoseconds."""
    return RESCUE_US * 1000


def spin_ns() -> int:
    """``SPIN_US`` or ``XRELAY_DNNL_PART_SPIN_US``, in nanoseconds."""
    try:
        return max(0, int(float(os.environ.get("XRELAY_DNNL_PART_SPIN_US", SPIN_US)) * 1000))
    except ValueError:
        return SPIN_US * 1000


def parts_enabled() -> bool:
    """Whether the one-thread program runs big convolutions in parts (``XRELAY_DNNL_PARTS``,
    default on)."""
    return os.environ.get("XRELAY_DNNL_PARTS", "1") != "0"


def parts_for(work: int, rows: int) -> int:
    """How many parts a step of ``work`` with ``rows`` output rows is cut into (below 2:
    not cut)."""
    return min(MAX_PARTS, rows // MIN_ROWS, work // PART_WORK)


def row_cuts(rows: int, parts: int, work: int = 0) -> list[tuple[int, int]]:
    """``parts`` contiguous ranges of ``rows``: even, but for two parts of a step of at
    least ``LONG_WORK``, whose first (the caller's) takes ``LONG_SHARE`` of the rows."""
    if parts == 2 and work >= LONG_WORK and rows >= 3:
        cut = min(rows - 1, max(1, round(rows * LONG_SHARE)))
        return [(0, cut), (cut, rows)]
    return [(rows * p // parts, rows * (p + 1) // parts) for p in range(parts)]


def conv_rows(
    r0: int, r1: int, height: int, kernel: int, stride: int, dilation: int, pad_top: int
) -> tuple[int, int, int, int] | None:
    """For output rows ``[r0, r1)`` of a convolution (``dilation`` counts the gaps plus one,
    Relay's), the input rows ``[i0, i1)`` it reads and the part's top and bottom padding:
    (i0, i1, top, bottom); None when the part reads no input row (it lies in the padding).

    >>> conv_rows(0, 2, 7, 3, 1, 1, 1)  # the first two rows of a 3x3 'same' convolution
    (0, 3, 1, 0)
    >>> conv_rows(2, 4, 7, 3, 2, 1, 1)  # output rows 2-3 at stride 2 read input rows 3-7
    (3, 7, 0, 1)
    """
    first = r0 * stride - pad_top
    end = (r1 - 1) * stride - pad_top + (kernel - 1) * dilation + 1
    i0, i1 = max(0, first), min(height, end)
    if i1 <= i0:
        return None
    return i0, i1, i0 - first, end - i1
