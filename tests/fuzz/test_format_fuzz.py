"""Short deterministic runs of the format fuzzer (``make fuzz`` runs 10,000 cases): mutated
ONNX models and export archives give diagnostics, not crashes."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("format_fuzz", Path(__file__).with_name("format_fuzz.py"))
fuzz = importlib.util.module_from_spec(_spec)
sys.modules["format_fuzz"] = fuzz
_spec.loader.exec_module(fuzz)


@pytest.fixture(scope="module")
def cases():
    with fuzz.Cases() as c:  # its scratch directory is removed after the module's tests
        yield c


def test_the_seeds_import_and_load(cases):
    assert len(cases.onnx) >= 6 and len(cases.archives) >= 2
    for model in cases.onnx:
        assert fuzz.run_onnx(model, cases.tmp).status == "ran"
    for members in cases.archives:
        out = fuzz.run_archive(fuzz._zip(list(members.items()), fuzz.zipfile.ZIP_DEFLATED), cases.tmp)
        assert out.status == "ran", out.error


def test_the_harness_counts_a_raw_exception_as_a_crash(cases, monkeypatch):
    import xrelay.runtime.executor_factory

    def broken(path):
        raise KeyError("x")

    monkeypatch.setattr(xrelay.runtime.executor_factory, "load_module", broken)
    out = fuzz.run_archive(b"PK", cases.tmp)
    assert out.status == "crashed" and "KeyError" in out.error


@pytest.mark.parametrize("seed", range(4))
def test_mutated_models_and_archives_give_diagnostics_not_crashes(cases, seed):
    rng = random.Random(seed)
    outcomes = []
    for _ in range(60):
        kind, case = cases.make(rng)
        out = cases.run(kind, case)
        assert out.status != "crashed", f"{kind} in {out.stage}: {out.error}\n{fuzz.describe(kind, case)[:2000]}"
        outcomes.append((kind, out.status))
    assert {k for k, _ in outcomes} == {"onnx", "archive"}
    assert any(s == "rejected" for _, s in outcomes) and any(s == "ran" for _, s in outcomes)
