"""canonicalize-arith keeps the meaning: every FileCheck case and the GELU/SiLU/hard-swish
forms exporters write run before and after on random inputs; the rewrites reach a fixpoint;
and each written form of GELU ends in one form."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.frontends.onnx import from_onnx
from xrelay.testing.onnx_models import GraphBuilder
from xrelay.testing.random_graphs import random_dag
from xrelay.testing.semantics import check_semantics, filecheck_cases
from xrelay.transforms.canonicalize_arith import CanonicalizeArithPass, canonicalize_arith

ALL_CASES = filecheck_cases(Path(__file__).parents[1] / "filecheck" / "transforms" / "canonicalize-arith.mlir")
CASES = [c for c in ALL_CASES if "@divide_by_zero_kept" not in c]
"""The cases whose outputs are finite (check_semantics refuses comparing infinities)."""
POSITIVE = {"x": np.linspace(0.5, 2.0, 4, dtype="float32")}
"""The power case's input (its square roots and reciprocals stay finite)."""
INTEGERS = {"x": np.array([7, -9, 12, 5], dtype="int32")}
"""The integer case's input (odd values: a rewrite to x * 0.5 would not truncate alike)."""


@pytest.mark.parametrize("case", CASES, ids=[c.split("@")[1].split("(")[0] for c in CASES])
def test_filecheck_cases_keep_their_meaning(case):
    module = Parser(make_context(), case).parse_module()
    entry = next(op.sym_name.data for op in module.ops)
    outputs = check_semantics(CanonicalizeArithPass(), module, entry=entry, params=INTEGERS if "@integer_" in case else POSITIVE if "power" in case else None)
    assert all(len(o) for o in outputs)


@pytest.mark.no_change("canonicalize-arith", "x / 0 has no finite reciprocal: the pass must leave it (the FileCheck case checks the divide stays)")
def test_division_by_zero_keeps_its_infinities():
    from xrelay.runtime.interpreter import run

    (case,) = [c for c in ALL_CASES if "@divide_by_zero_kept" in c]
    x = np.array([-2.0, -0.5, 0.5, 3.0], np.float32)
    module = Parser(make_context(), case).parse_module()
    (before,) = run(module, {"x": x}, entry="divide_by_zero_kept")
    CanonicalizeArithPass().apply(make_context(), module)
    (after,) = run(module, {"x": x}, entry="divide_by_zero_kept")
    assert after.tolist() == before.tolist() == [-np.inf, -np.inf, np.inf, np.inf]


def test_fixpoint():
    module = Parser(make_context(), "\n".join(ALL_CASES)).parse_module()
    CanonicalizeArithPass().apply(make_context(), module)
    once = str(module)
    assert canonicalize_arith(module) == 0
    assert str(module) == once


@pytest.mark.parametrize("seed", range(3))
def test_random_dags(seed):
    check_semantics(CanonicalizeArithPass(), random_dag(seed, 40))


def _gelu(g: GraphBuilder, x: str, form: int) -> str:
    half, one = g.const(np.float32(0.5)), g.const(np.float32(1.0))
    if form == 0:  # torch.onnx: Div by sqrt 2, 0.5 on the left of the last Mul
        erf = g.node("Erf", [g.node("Div", [x, g.const(np.float32(math.sqrt(2.0)))])])
        return g.node("Mul", [half, g.node("Mul", [x, g.node("Add", [erf, one])])])
    if form == 1:  # x * 0.5 first, reciprocal on the left
        erf = g.node("Erf", [g.node("Mul", [g.const(np.float32(1 / math.sqrt(2.0))), x])])
        return g.node("Mul", [g.node("Mul", [x, half]), g.node("Add", [one, erf])])
    return g.node("Gelu", [x])  # the ONNX op


def _ops(module) -> list[str]:
    return [getattr(op, "RELAY_NAME", "") for op in module.walk() if getattr(op, "RELAY_NAME", "") not in ("", "constant")]


@pytest.mark.parametrize("form", range(3))
def test_every_written_gelu_ends_in_one_form(form):
    g = GraphBuilder(0)
    y = _gelu(g, "x", form)
    mod, _ = from_onnx(g.model({"x": ([2, 8], np.float32)}, [y], "gelu", opset=20))
    check_semantics(CanonicalizeArithPass(), mod)
    canonicalize_arith(mod.module if hasattr(mod, "module") else mod)
    assert _ops(mod.module if hasattr(mod, "module") else mod) == ["multiply", "erf", "add", "multiply", "multiply"]


@pytest.mark.parametrize("axes", [[-1], [1, 2]])
def test_f_normalize_is_one_native_step(axes):
    """torch's F.normalize as ONNX writes it (ReduceL2, a Clip with only a minimum, an Expand,
    a Div) builds to one ``nn.l2_normalize`` step of the native engine: onnxruntime's values,
    a zero vector still 0 (its norm clipped to eps), nothing allocated outside the arena."""
    from xrelay.testing.onnx_models import build_and_run

    g = GraphBuilder(0)
    shape = [4, 6, 10]
    norm = g.node("ReduceL2", ["x", g.const(np.array(axes, np.int64))], keepdims=1)
    clipped = g.node("Clip", [norm, g.const(np.float32(1e-12))])
    expanded = g.node("Expand", [clipped, g.const(np.array(shape, np.int64))])
    y = g.node("Div", ["x", expanded])
    model = g.model({"x": (shape, np.float32)}, [y], "normalize", opset=20)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    x[1, 2 if axes == [-1] else slice(None)] = 0.0  # a zero vector along the axes
    m, got, want = build_and_run(model, {"x": x})
    other = build_and_run(model, {"x": x[::-1].copy()})[1]
    assert np.all(np.isfinite(got)) and not np.allclose(got, other)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert not got[1, 2 if axes == [-1] else slice(None)].any()
    ops = [o for _, o, _ in m.executor.steps if o != "copy"]
    assert ops == ["nn.l2_normalize"], ops
    assert m.executor.outside_arena().run_bytes == 0
