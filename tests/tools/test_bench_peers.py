"""``benchmarks/peers.py``'s alternation: every peer once per round, and over the rounds every
order of the peers, so no peer always runs right after the same other one (a runtime whose
threads spin on after its run slows whichever runs next)."""

from __future__ import annotations

import collections
import runpy
from pathlib import Path
from types import SimpleNamespace

PEERS = Path(__file__).resolve().parents[2] / "benchmarks" / "peers.py"


def _peers() -> SimpleNamespace:
    return SimpleNamespace(**runpy.run_path(str(PEERS)))


def test_rounds_go_through_every_order_of_the_peers():
    peers = _peers()
    calls: list[str] = []
    runners = {name: (lambda name=name: calls.append(name)) for name in ("xrelay", "ort", "ov")}
    times = peers.alternate(runners, pairs=12, warmup=3)
    assert {k: len(v) for k, v in times.items()} == {"xrelay": 12, "ort": 12, "ov": 12}
    rounds = [tuple(calls[i : i + 3]) for i in range(0, len(calls), 3)]
    assert all(sorted(r) == ["ort", "ov", "xrelay"] for r in rounds)
    timed = rounds[3:]
    assert set(timed) == set(peers.orders(["xrelay", "ort", "ov"])) and len(set(timed)) == 6
    # within the timed rounds each peer comes right after each other one equally often
    after = collections.Counter((r[i - 1], r[i]) for r in timed for i in (1, 2))
    assert len(after) == 6 and len(set(after.values())) == 1


def test_two_peers_take_turns_going_first():
    peers = _peers()
    calls: list[str] = []
    runners = {"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}
    peers.alternate(runners, pairs=4, warmup=0)
    assert calls == ["a", "b", "b", "a", "a", "b", "b", "a"]


def test_core_speeds_pin_each_core_and_put_it_back():
    """Each allowed CPU is measured pinned (``work`` sees only it), the speeds are relative
    to the fastest, and the caller's affinity is what it was."""
    import os
    import time

    peers = _peers()
    allowed = os.sched_getaffinity(0)
    seen = []

    def work(cpu):  # the highest CPU "shared on the host": twice as slow
        seen.append((cpu, os.sched_getaffinity(0)))
        time.sleep(0.04 if cpu == max(allowed) and len(allowed) > 1 else 0.02)

    speeds = peers.core_speeds(samples=3, work=work)
    assert os.sched_getaffinity(0) == allowed
    assert sorted(speeds) == sorted(allowed) and seen == [(c, {c}) for c in sorted(allowed) for _ in range(3)]
    assert max(speeds.values()) == 1.0
    if len(allowed) > 1:
        assert 0.35 < speeds[max(allowed)] < 0.65
    assert peers.cores().startswith("cores ") and peers.cores().count("/") == len(allowed) - 1
