"""The engine table (``xrelay.runtime.engines.ENGINES``): each engine is one line there and two
folders, the generic passes name no engine (the names are resolved above them), and the
executor names none either (it binds each step through the engine's ``steps`` module)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from xrelay import relay
from xrelay.backend.engines import compile_side, resolve_pass
from xrelay.runtime.engines import ENGINES, run_side
from xrelay.transforms.annotate_target import AnnotateTargetError, AnnotateTargetPass
from xrelay.transforms.merge_composite import MergeCompositeError, MergeCompositePass

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", list(ENGINES))
def test_each_engine_is_two_folders(name):
    assert (ROOT / "runtime" / name / "__init__.py").is_file()
    assert (ROOT / "backend" / name / "__init__.py").is_file()
    assert compile_side(name).__name__ == f"xrelay.backend.{name}"


def _string_constants(path: Path) -> set[str]:
    """The strings a module's code uses (docstrings left out)."""
    tree = ast.parse(path.read_text())
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docs.add(id(body[0].value))
    return {
        n.value for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
    }  # fmt: skip


def test_the_passes_name_no_engine():
    named = {
        f"{p.relative_to(ROOT)}: {s!r}"
        for p in (ROOT / "transforms").rglob("*.py")
        for s in _string_constants(p)
        if s in ENGINES and s != "native"
    }
    assert not named, "passes naming an engine:\n" + "\n".join(sorted(named))


@pytest.mark.parametrize("name", list(ENGINES))
def test_each_engine_binds_its_steps_through_the_table(name):
    side = run_side(name)
    assert side.__name__ == f"xrelay.runtime.{name}.steps" and callable(side.bind_step)


def test_the_executor_names_no_engine():
    # it dispatches through the table (relay.compiler, then the engine that takes every step)
    named = {s for s in _string_constants(ROOT / "runtime" / "executor.py") if s in ENGINES}
    assert not named, f"runtime/executor.py names {sorted(named)}"


def test_an_unknown_engine_is_an_error_naming_the_known_ones():
    with pytest.raises(KeyError, match=r"unknown engine 'nope' \(known: dnnl, native\)"):
        run_side("nope")


def test_an_engine_name_is_resolved_above_the_passes():
    # the pass alone knows no engine ...
    with pytest.raises(MergeCompositeError, match="unknown pattern table 'dnnl'"):
        MergeCompositePass("dnnl").apply(None, None)  # type: ignore[arg-type]
    mod = relay.Function([x := relay.var("x", shape=(2,))], relay.nn.relu(x))
    irmod = __import__("xrelay").IRModule.from_expr(mod)
    with pytest.raises(AnnotateTargetError, match="unknown target 'dnnl'"):
        AnnotateTargetPass(("dnnl",)).apply(None, irmod.module)  # type: ignore[arg-type]
    # ... the resolution gives it the engine's table and predicate
    resolved = resolve_pass(MergeCompositePass("dnnl"))
    assert isinstance(resolved.pattern_table, list) and resolved.pattern_table
    assert "dnnl" in dict(resolve_pass(AnnotateTargetPass(("dnnl",))).supported)
    with pytest.raises(MergeCompositeError, match=r"unknown pattern table 'nope' \(known: dnnl\)"):
        resolve_pass(MergeCompositePass("nope"))
