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
    # xDSL's own parser asserting on a generic attribute is a located parse error now.
    out = fuzz.run_case('"test.op"() {v = dense<[1.0]> : tensor<1xcomplex<f32>>} : () -> ()\n')
    assert out.status == "rejected" and out.stage == "parse"
    assert "malformed dense literal" in out.error
    import xrelay.dialects.verify

    def broken(mod):
        raise KeyError("x")

    monkeypatch.setattr(xrelay.dialects.verify, "verify_module", broken)
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


def test_generated_cases_reach_the_passes_and_the_interpreter():
    # Structure-aware cases: well-typed random programs, mutated as IR. Unlike text
    # mutations, most of them parse, and many run through every stage.
    rng = random.Random(7)
    outcomes = [fuzz.run_case(fuzz.generate(rng)) for _ in range(40)]
    assert not [o for o in outcomes if o.status in ("crashed", "parser-bug")]
    assert sum(o.stage != "parse" for o in outcomes) >= 30
    assert sum(o.status == "ran" for o in outcomes) >= 8


def test_attribute_mutations_reach_the_verifier():
    rng = random.Random(3)
    from xrelay.testing.random_graphs import random_dag

    mod = random_dag(1, 8)
    before = str(mod)
    for _ in range(20):
        fuzz.mutate_attribute(mod, rng)
    assert str(mod) != before


@settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(st.randoms(use_true_random=False))
def test_generated_programs_give_diagnostics_not_crashes(rng: random.Random):
    text = fuzz.generate(rng)
    out = fuzz.run_case(text)
    assert out.status not in ("crashed", "parser-bug"), f"{out.stage}: {out.error}\n--- input:\n{text}"
