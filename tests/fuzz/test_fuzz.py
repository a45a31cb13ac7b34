"""A short, deterministic run of the mutation fuzzer (``make fuzz`` runs 10,000 cases)."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

_spec = importlib.util.spec_from_file_location(
    "xrelay_fuzz", Path(__file__).with_name("xrelay_fuzz.py")
)
fuzz = importlib.util.module_from_spec(_spec)
sys.modules["xrelay_fuzz"] = fuzz
_spec.loader.exec_module(fuzz)

SEEDS = fuzz.load_seeds()


def test_seeds_are_relay_modules():
    # The seeds are the FileCheck inputs as they are: each one parses (most also verify).
    assert len(SEEDS) > 100
    outcomes = [fuzz.run_case(s) for s in SEEDS[::4]]
    assert not [o for o in outcomes if o.status == "crashed"]
    assert sum(o.status in ("parsed", "ran") for o in outcomes) > len(outcomes) // 2


def test_run_case_reports_a_crash(monkeypatch):
    # The harness itself: a raw exception is a crash, a diagnostic is a rejection.
    out = fuzz.run_case("func.func @main( {")
    assert out.status == "rejected" and out.stage == "parse"
    # xDSL's own parser crashing on a generic attribute is counted apart.
    out = fuzz.run_case('"test.op"() {v = dense<[1.0]> : tensor<1xcomplex<f32>>} : () -> ()\n')
    assert out.status == "parser-bug" and out.stage == "parse"
    import xrelay.transforms.utils

    def broken(mod):
        raise KeyError("x")

    monkeypatch.setattr(xrelay.transforms.utils, "verify_module", broken)
    out = fuzz.run_case(SEEDS[0])
    assert out.status == "crashed" and out.stage == "verify" and "KeyError" in out.error


@settings(
    max_examples=200,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(st.randoms(use_true_random=False))
def test_mutated_inputs_give_diagnostics_not_crashes(rng: random.Random):
    text = fuzz.mutate(SEEDS, rng)
    out = fuzz.run_case(text)
    assert out.status not in ("crashed",), f"{out.stage}: {out.error}\n--- input:\n{text}"
