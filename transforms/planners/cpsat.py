"""
The CP-SAT member of the ``optimal`` portfolio: "do the buffers fit below H?" as a
two-dimensional no-overlap model solved by OR-Tools' CP-SAT.

Each buffer is a rectangle fixed in time (its lifetime) whose offset is the only variable,
a multiple of its alignment; ``AddNoOverlap2D`` forbids shared bytes. Offsets and sizes are
divided by their common gcd first, which keeps the domains small.

Why a second search: the branch and bound of ``_bnb`` proves most problems quickly, but on
problems whose best plan has no free byte (a *perfect packing*: every step is exactly
full at the lower bound) it can wander for minutes in a subtree it cannot learn to leave.
CP-SAT learns clauses from its conflicts and, asked the decision question at the lower
bound, settles many of those within seconds (measured in ``benchmarks/planning.py``). The
minimisation form (minimise the height) was tried and is much weaker: it stays 20 % above
the bound where the decision form answers, so only the decision form is used.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence

from xrelay.transforms.planners._bnb import EXHAUSTED, FOUND, RUNNING

DEFAULT_WORKERS = 8
"""CP-SAT's parallel portfolio: its diversity matters more than the core count (on this
project's 2-core machine 8 workers settled the hardest generated instance that 2 did not)."""


class CpSatProbe:
    """A CP-SAT decision search at ``height`` running in a background thread until it
    answers, ``deadline`` (a ``time.perf_counter()`` value) passes, or ``stop()``."""

    def __init__(
        self, items: Sequence, height: int, deadline: float, workers: int = DEFAULT_WORKERS
    ):
        """``items`` are ``exact.Item``s (key, size, align, start, end)."""
        # imported here: ortools is large, and only the exact planner needs it
        from ortools.sat.python import cp_model

        self.items = [it for it in items if it.size > 0]
        self.height = height
        self.status = RUNNING
        self.offsets: dict[int, int] = {}
        self._solver = cp_model.CpSolver()
        self._solver.parameters.num_workers = workers
        self._solver.parameters.max_time_in_seconds = max(deadline - time.perf_counter(), 0.0)
        self._model, self._offsets = self._build(cp_model)
        self._thread = threading.Thread(target=self._run, name="cpsat-probe", daemon=True)
        self._thread.start()

    def _build(self, cp_model):
        g = 0
        for it in self.items:
            g = math.gcd(g, it.size)
            g = math.gcd(g, it.align)
        g = g or 1
        top = self.height // g
        model = cp_model.CpModel()
        times, spaces, offsets = [], [], []
        for it in self.items:
            size = -(-it.size // g)
            step = max(it.align // g, 1)
            slots = (top - size) // step
            if slots < 0:
                model.add_bool_or([])  # this buffer alone is taller than the height
                slots = 0
            k = model.new_int_var(0, slots, f"k{it.key}")
            offsets.append((it.key, k, step * g))
            times.append(model.new_fixed_size_interval_var(it.start, it.end + 1 - it.start, ""))
            spaces.append(model.new_fixed_size_interval_var(step * k, size, ""))
        model.add_no_overlap_2d(times, spaces)
        return model, offsets

    def _run(self) -> None:
        from ortools.sat.python import cp_model

        status = self._solver.solve(self._model)
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            self.offsets = {k: int(self._solver.value(v)) * unit for k, v, unit in self._offsets}
            self.status = FOUND
        elif status == cp_model.INFEASIBLE:
            self.status = EXHAUSTED

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def stop(self) -> None:
        """Stop the search (if running) and wait for the thread."""
        self._solver.stop_search()
        self._thread.join()
