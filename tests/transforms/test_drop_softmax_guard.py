"""drop-softmax-guard keeps the meaning: every FileCheck case runs before and after on random
inputs (the guards the pass drops are gone); rows that are all -inf keep their zeros where
the guard stays; the analysis refuses what may hold an infinity."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.runtime.interpreter import run
from xrelay.testing.semantics import check_semantics, filecheck_cases
from xrelay.transforms.drop_softmax_guard import (
    DropSoftmaxGuardPass,
    drop_softmax_guard,
    finite_or_nan,
)

CASES = filecheck_cases(
    Path(__file__).parents[1] / "filecheck" / "transforms" / "drop-softmax-guard.mlir"
)


def _entry(case: str) -> str:
    return case.split("func.func @")[1].split("(")[0]


def _parse(entry: str):
    (case,) = [c for c in CASES if _entry(c) == entry]
    return Parser(make_context(), case).parse_module()


def _count(module, name: str) -> int:
    return sum(1 for op in module.walk() if op.name == name)


@pytest.mark.parametrize("case", CASES, ids=[_entry(c) for c in CASES])
def test_filecheck_cases_keep_their_values(case):
    module = Parser(make_context(), case).parse_module()
    wheres = _count(module, "relay.where")
    before, after = check_semantics(
        DropSoftmaxGuardPass(), module, entry=_entry(case), rtol=0, atol=0
    )
    assert all(np.asarray(o).size for o in before)
    DropSoftmaxGuardPass().apply(make_context(), module)
    # the unmasked and constant-masked guards go with every op only they read; @kept keeps 4
    # where ops (a causal mask is one), and its reductions
    if _entry(case) == "kept":
        assert _count(module, "relay.where") == wheres == 4 and _count(module, "relay.max") == 3
    else:
        assert (
            _count(module, "relay.where")
            == _count(module, "relay.max")
            == _count(module, "relay.cast")
            == 0
        )


def _safe_softmax(x: np.ndarray) -> np.ndarray:
    """torch's ``_safe_softmax`` along the last axis, in float64: rows all -inf give zeros."""
    x = x.astype(np.float64)
    live = (x != -np.inf).any(axis=-1, keepdims=True)
    m = np.where(live, x.max(axis=-1, keepdims=True), 0.0)
    e = np.exp(x - m)
    return np.where(live, e / np.where(live, e.sum(axis=-1, keepdims=True), 1.0), 0.0)


@pytest.mark.no_change(
    "drop-softmax-guard", "the guards of @kept stay: the values with them are the point"
)
def test_rows_all_minus_inf_keep_their_zeros():
    """A run-time mask with a fully masked row, and a causal mask: the guards stay, so that
    row is zeros after the pass as before it (without the guard it would be NaN)."""
    module = _parse("kept")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    mask = np.zeros((3, 4), np.float32)
    mask[1] = -np.inf
    mask[2, :2] = -np.inf
    before = run(module, {"a": a, "mask": mask}, entry="kept")
    DropSoftmaxGuardPass().apply(make_context(), module)
    after = run(module, {"a": a, "mask": mask}, entry="kept")
    n = (a - a.mean(-1, keepdims=True)) / np.sqrt(a.var(-1, keepdims=True) + 1e-5)
    want = _safe_softmax(n + mask)
    for got in (before[0], after[0]):
        assert np.isfinite(got).all() and not got[1].any() and got[0].all()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    for b, c in zip(before, after):
        np.testing.assert_array_equal(b, c)


def test_fixpoint():
    module = Parser(make_context(), "\n".join(CASES)).parse_module()
    assert drop_softmax_guard(module) == 2
    once = str(module)
    assert drop_softmax_guard(module) == 0 and str(module) == once


def test_what_may_hold_an_infinity():
    module = _parse("kept")
    ops = {
        op.results[0].name_hint: op.results[0]
        for op in module.walk()
        if op.results and op.results[0].name_hint
    }
    assert finite_or_nan(ops["n"]) and finite_or_nan(ops["s1"])  # a layer norm's, a softmax's
    assert not finite_or_nan(ops["x1"])  # plus a mask given at run time
    assert not finite_or_nan(ops["x2"])  # a select of -inf
    assert not finite_or_nan(ops["inf"])
