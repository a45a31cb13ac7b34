"""
The search kernel of the ``optimal`` planner: a canonical branch and bound in the style of
MiniMalloc (Moffitt, ASPLOS 2023), as one resumable, explicit-stack loop compiled with numba.

Time is cut into *sections* at the buffers' end points, so every section's live set is a
clique of buffers that are all live together. A search node places one buffer of its
*partition* (a range of sections no unplaced buffer crosses) at that buffer's minimum
offset: the highest top of the already placed buffers it overlaps in time. Placement
order is canonical: offsets never decrease, ties follow the partition's static order.
Everything a placement changes is updated incrementally and undone from trails:

* the minimum offsets of the unplaced buffers that overlap the placed one (only these
  can change), failing at once when one of them is pushed above the height;
* per section, the total of its unplaced bytes. Cross-section inference asks, for every
  section, that ``max(top of its last placed buffer, lowest minimum offset of its unplaced
  buffers, last offset) + total <= height``. Placing a buffer at ``o`` leaves ``o +
  total`` to hold in every section, so candidates above ``height - max total`` are never
  tried; past that filter only the sections whose lowest minimum offset rose need a look,
  and there it is enough to find one unplaced buffer low enough (a remembered witness
  usually is). This is MiniMalloc's "unallocated floor" check without maintaining floors;
* per section boundary, how many unplaced buffers cross it: when a boundary reaches zero,
  the partition splits and each part is searched on its own (a failing part fails the
  node that split it: its siblings' choices cannot change it).

Candidates must lie below the lowest top any unplaced buffer of the partition can reach
(dominance), and a buffer that nothing unplaced overlaps is tried only once (hatless).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numba import njit

RUNNING, FOUND, EXHAUSTED = 0, 1, 2

# Option bits of the kernel.
OPT_KEEP_FLOOR = 1
"""Split parts keep the split's last offset as their floor (sound: in the global
canonical order every later buffer sits at or above it)."""
OPT_FIT_CHECK = 2
"""Fail as soon as a minimum offset pushes an unplaced buffer's top above the height."""
OPT_UNALLOC_FLOOR = 4
"""Count the lowest minimum offset of a section's unplaced buffers in its inference."""
OPT_REORDER = 8
"""Order each new part by the heuristic with the current section totals (else keep the
initial order, filtered to the part)."""
DEFAULT_OPTIONS = OPT_KEEP_FLOOR | OPT_FIT_CHECK | OPT_UNALLOC_FLOOR | OPT_REORDER

HEURISTIC_LETTERS = "WATZ"
"""Static-order keys, each descending: W = lifetime width (steps), A = area (bytes x
steps), T = the largest total of unplaced bytes in a section the buffer covers, Z = size."""

# Phases of the loop.
_INIT, _NEXT, _BACK = 0, 1, 2
# ctl slots.
_D, _PHASE, _NODES, _PEND, _TMO, _STAMP = range(6)


@njit(cache=True, nogil=True)
def _order_part(members, m, w, width, area, sa, sb, total, keys, out):
    """Write ``members[:m]`` to ``out`` sorted by the descending ``keys`` (letter codes
    of ``HEURISTIC_LETTERS``), ties by buffer index (``members`` come in index order)."""
    order = np.arange(m)
    vals = np.empty(m, dtype=np.int64)
    for k in range(keys.shape[0] - 1, -1, -1):
        code = keys[k]
        for i in range(m):
            b = members[order[i]]
            if code == 0:
                v = width[b]
            elif code == 1:
                v = area[b]
            elif code == 2:
                v = 0
                for s in range(sa[b], sb[b]):
                    if total[s] > v:
                        v = total[s]
            else:
                v = w[b]
            vals[i] = -v
        perm = np.argsort(vals, kind="mergesort")
        order = order[perm]
    for i in range(m):
        out[i] = members[order[i]]


@njit(cache=True, nogil=True)
def _undo(x, w, sa, sb, off, minoff, total, cuts, f_b, f_tmo, tmo_idx, tmo_old, ctl):
    """Take back the placement of frame ``x`` (the newest one still in place)."""
    top = ctl[_TMO]
    while top > f_tmo[x]:
        top -= 1
        minoff[tmo_idx[top]] = tmo_old[top]
    ctl[_TMO] = top
    b = f_b[x]
    for s in range(sa[b], sb[b]):
        total[s] += w[b]
    for s in range(sa[b], sb[b] - 1):
        cuts[s] += 1
    off[b] = -1
    f_b[x] = -1


@njit(cache=True, nogil=True)
def search(  # noqa: C901 - one tight loop on purpose
    w, al, sa, sb, width, area, ov_ptr, ov_idx, sec_ptr, sec_idx, keys, static_order, cap,
    options, off, minoff, total, cuts, stamp_of, wit,
    tmo_idx, tmo_old, aff,
    part, f_root, f_plen, f_lo, f_hi, f_mo, f_mp, cand, cand_o, f_cn, f_ci,
    f_fail, f_pend, f_tmo, f_b, f_hat, pend, members, cuts_new,
    ctl, max_nodes,
):  # fmt: skip
    """Run the search for at most ``max_nodes`` nodes; all state lives in the arrays.

    ``ctl`` holds the loop registers (depth, phase, node count, pending-part count, trail
    top, stamp). Frame ``d`` searches the partition listed in ``part[f_root[d]]``
    (``f_plen`` entries, some already placed) over sections ``[f_lo, f_hi)``; its
    candidates are ``cand[d]`` (positions in that list) at offsets ``cand_o[d]``. Parts
    waiting to be searched are rows of ``pend``: (lo, hi, floor, min position, frame to
    fail). Returns RUNNING, FOUND (offsets in ``off``) or EXHAUSTED.
    """
    d = ctl[_D]
    phase = ctl[_PHASE]
    nodes = 0
    big = np.int64(1) << np.int64(62)
    keep_floor = options & OPT_KEEP_FLOOR != 0
    fit_check = options & OPT_FIT_CHECK != 0
    unalloc_floor = options & OPT_UNALLOC_FLOOR != 0
    reorder = options & OPT_REORDER != 0
    while True:
        if phase == _INIT:
            if nodes >= max_nodes:
                ctl[_D] = d
                ctl[_PHASE] = _INIT
                ctl[_NODES] += nodes
                return RUNNING
            nodes += 1
            r = f_root[d]
            pl = f_plen[d]
            m = 0
            for j in range(pl):
                if off[part[r, j]] < 0:
                    m += 1
                    break
            if m == 0:
                # This part is done: search the next waiting one in this frame.
                k = ctl[_PEND]
                if k == 0:
                    ctl[_D] = d
                    ctl[_PHASE] = _INIT
                    ctl[_NODES] += nodes
                    return FOUND
                k -= 1
                ctl[_PEND] = k
                lo = pend[k, 0]
                hi = pend[k, 1]
                f_lo[d] = lo
                f_hi[d] = hi
                f_mo[d] = pend[k, 2]
                f_mp[d] = pend[k, 3]
                f_fail[d] = pend[k, 4]
                m = 0
                if reorder:
                    for b in range(w.shape[0]):
                        if off[b] < 0 and sa[b] >= lo and sb[b] <= hi:
                            members[m] = b
                            m += 1
                    _order_part(members, m, w, width, area, sa, sb, total, keys, part[d])
                else:
                    # Keep the initial order: filter it.
                    for j in range(w.shape[0]):
                        b = static_order[j]
                        if off[b] < 0 and sa[b] >= lo and sb[b] <= hi:
                            part[d, m] = b
                            m += 1
                f_root[d] = d
                f_plen[d] = m
                r = d
                pl = m
            # Candidates: canonical, below the lowest reachable top, by (offset, order).
            lo = f_lo[d]
            mo = f_mo[d]
            mp = f_mp[d]
            min_top = big
            for j in range(pl):
                b = part[r, j]
                if off[b] < 0:
                    t = minoff[b] + w[b]
                    if t < min_top:
                        min_top = t
            # Placing any buffer at o leaves o + total[s] bytes to hold in every section
            # s (its own sections included), so offsets above cap - max total fail.
            max_total = 0
            for s in range(lo, f_hi[d]):
                if total[s] > max_total:
                    max_total = total[s]
            o_max = cap - max_total
            if o_max >= min_top:
                o_max = min_top - 1
            cn = 0
            for j in range(pl):
                b = part[r, j]
                if off[b] >= 0:
                    continue
                o = minoff[b]
                if o < mo or (o == mo and j < mp) or o > o_max:
                    continue
                i = cn
                while i > 0 and cand_o[d, i - 1] > o:
                    cand[d, i] = cand[d, i - 1]
                    cand_o[d, i] = cand_o[d, i - 1]
                    i -= 1
                cand[d, i] = j
                cand_o[d, i] = o
                cn += 1
            f_cn[d] = cn
            f_ci[d] = 0
            phase = _NEXT
        elif phase == _NEXT:
            if f_ci[d] >= f_cn[d]:
                phase = _BACK
                continue
            i = f_ci[d]
            f_ci[d] = i + 1
            j = cand[d, i]
            o = cand_o[d, i]
            r = f_root[d]
            b = part[r, j]
            # Place b at o, recording everything for the undo.
            f_pend[d] = ctl[_PEND]
            f_tmo[d] = ctl[_TMO]
            f_b[d] = b
            off[b] = o
            top_b = o + w[b]
            hat = False
            fail = False
            stamp = ctl[_STAMP] + 1
            ctl[_STAMP] = stamp
            naff = 0
            tmo = ctl[_TMO]
            for q in range(ov_ptr[b], ov_ptr[b + 1]):
                c = ov_idx[q]
                if off[c] >= 0:
                    continue
                hat = True
                if minoff[c] >= top_b:
                    continue
                tmo_idx[tmo] = c
                tmo_old[tmo] = minoff[c]
                tmo += 1
                a = al[c]
                h = ((top_b + a - 1) // a) * a
                minoff[c] = h
                if h + w[c] > cap and fit_check:
                    fail = True
                if unalloc_floor:
                    for s in range(sa[c], sb[c]):
                        if stamp_of[s] != stamp:
                            stamp_of[s] = stamp
                            aff[naff] = s
                            naff += 1
            ctl[_TMO] = tmo
            f_hat[d] = hat
            for s in range(sa[b], sb[b]):
                total[s] -= w[b]
            ncut = 0
            for s in range(sa[b], sb[b] - 1):
                cuts[s] -= 1
                if cuts[s] == 0:
                    cuts_new[ncut] = s + 1
                    ncut += 1
            lo = f_lo[d]
            hi = f_hi[d]
            if not fail:
                # Cross-section inference: in every section, the unplaced bytes must fit
                # between max(top of the last buffer placed there, lowest minimum offset
                # of its unplaced buffers) and the height. Only b's sections and those
                # whose minimum offsets rose can have changed: the others passed at the
                # parent. In b's sections the top is o + w[b], fine by the candidate
                # filter (o + total <= cap before placing b).
                for k in range(naff):
                    s = aff[k]
                    if total[s] == 0:
                        continue
                    limit = cap - total[s]
                    c = wit[s]
                    if off[c] < 0 and minoff[c] <= limit:
                        continue
                    fail = True
                    for q in range(sec_ptr[s], sec_ptr[s + 1]):
                        c = sec_idx[q]
                        if off[c] < 0 and minoff[c] <= limit:
                            wit[s] = c  # a hint for the next check only
                            fail = False
                            break
                    if fail:
                        break
            if fail:
                _undo(d, w, sa, sb, off, minoff, total, cuts, f_b, f_tmo, tmo_idx, tmo_old, ctl)
                if not hat:
                    phase = _BACK
                continue
            e = d + 1
            f_b[e] = -1
            if ncut > 0:
                # The partition splits: queue its non-empty parts, leftmost on top.
                k = ctl[_PEND]
                p_hi = hi
                for t in range(ncut, -1, -1):
                    p_lo = lo if t == 0 else cuts_new[t - 1]
                    busy = False
                    for jj in range(f_plen[d]):
                        c = part[r, jj]
                        if off[c] < 0 and sa[c] >= p_lo and sb[c] <= p_hi:
                            busy = True
                            break
                    if busy:
                        pend[k, 0] = p_lo
                        pend[k, 1] = p_hi
                        pend[k, 2] = o if keep_floor else 0
                        pend[k, 3] = 0
                        pend[k, 4] = d
                        k += 1
                    p_hi = p_lo
                ctl[_PEND] = k
                # The child starts empty and takes the first queued part.
                f_root[e] = r
                f_plen[e] = 0
            else:
                f_root[e] = r
                f_plen[e] = f_plen[d]
                f_lo[e] = lo
                f_hi[e] = hi
                f_mo[e] = o
                f_mp[e] = j
                f_fail[e] = -1
            d = e
            phase = _INIT
        else:
            # Frame d has no candidates left: back to the frame that must change.
            t = f_fail[d]
            if t < 0:
                t = d - 1
            if t < 0:
                ctl[_D] = 0
                ctl[_PHASE] = _BACK
                ctl[_NODES] += nodes
                return EXHAUSTED
            x = d - 1
            while x >= t:
                _undo(x, w, sa, sb, off, minoff, total, cuts, f_b, f_tmo, tmo_idx, tmo_old, ctl)
                x -= 1
            d = t
            ctl[_PEND] = f_pend[d]
            phase = _NEXT if f_hat[d] else _BACK


def compiled() -> bool:
    """Whether ``search`` is compiled already: in this process, or in numba's cache beside
    this file (the first use on a machine compiles it, which takes some 20 seconds)."""
    if search.signatures:
        return True
    return any((Path(__file__).parent / "__pycache__").glob("_bnb.search-*.nbi"))
