"""Mutation check of the pass tests: each pass replaced by the identity, its tests must fail.

``make mutants`` (every pass) and ``make mutants-fast`` (``FAST``, run by ``make test``)::

    python -m xrelay.testing.mutants [--fast] [-j N] [PASS ...]

For each pass (its CLI name), the pytest files of ``TESTS`` run with the pass's ``apply``
replaced by one that changes nothing (``pytest -p xrelay.testing.mutants``, with
``XRELAY_MUTANT`` naming the pass). Only the tests that ran the pass count: a test that ran it
and still passed is a *survivor*. A survivor is accepted when the test is marked as expecting
no change from that pass, with the reason::

    @pytest.mark.no_change("alter-op-layout", "resize2d has no layout to alter")

and otherwise reported; the command exits 1 if any pass has a survivor that is not marked (a
marked test that is killed is listed: a parametrized test may expect no change in some cases). A survivor that checked the meaning
(``check_semantics``: before and after run alike) is counted apart, as ``meaning``: the
identity keeps the meaning, so such a test cannot kill it; the pass's other tests must. A composite pass (``fold-scale-axis``) is
mutated by making each of its parts the identity. FileCheck (lit) cases and tests that run
the pass in a subprocess (``relay-opt``) are not mutated; the lit cases fail on their own
when the output changes.

Prints, per pass, the tests that ran it, how many the mutant killed, how many survived as
marked or as meaning checks, and the unexpected survivors.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from xrelay.testing import semantics
from xrelay.transforms.infra import get_pass_class

__all__ = ["FAST", "TESTS", "main"]

TESTS: dict[str, tuple[str, ...]] = {
    "alias-slices": ("transforms/test_alias_slices.py",),
    "alter-op-layout": ("transforms/test_alter_op_layout.py", "transforms/test_alter_op_layout_tvm.py"),
    "annotate-target": ("transforms/test_byoc.py", "transforms/test_byoc_tvm.py"),
    "annotate-used-memory": ("memory/test_annotate_and_liveness.py", "seeds/test_seed_000_annotate_used_memory.py"),
    "backward-fold-scale-axis": ("transforms/test_fold_scale_axis.py", "transforms/test_fold_scale_axis_tvm.py"),
    "bind-params": ("transforms/test_bind_params.py",),
    "canonicalize-arith": ("transforms/test_canonicalize_arith.py",),
    "canonicalize-ops": ("transforms/test_canonicalize_ops.py",),
    "canonicalize-views": ("transforms/test_canonicalize_views.py",),
    "combine-parallel-batch-matmul": ("transforms/test_combine_parallel_batch_matmul.py",),
    "combine-parallel-conv2d": ("transforms/test_combine_parallel_conv2d.py",),
    "combine-parallel-dense": ("transforms/test_combine_parallel_dense.py",),
    "combine-split-conv2d": ("transforms/test_combine_split_conv2d.py",),
    "conv2d-winograd": ("codegen/test_c_winograd.py",),
    "convert-layout": ("transforms/test_convert_layout.py", "transforms/test_convert_layout_tvm.py"),
    "dead-code-elimination": (
        "transforms/test_cse_dce.py",
        "language/test_tvm_dead_code_elimination.py",
        "language/test_relay_memory_ops.py",
    ),
    "defuse-ops": ("transforms/test_defuse_ops.py", "transforms/test_defuse_ops_tvm.py"),
    "drop-softmax-guard": ("transforms/test_drop_softmax_guard.py",),
    "dynamic-to-static": ("transforms/test_dynamic_to_static.py", "transforms/test_dynamic_to_static_tvm.py"),
    "make-static": ("transforms/test_make_static.py",),
    "eliminate-common-subexpr": ("transforms/test_cse_dce.py", "transforms/test_eliminate_common_subexpr_tvm.py"),
    "fake-quantization-to-integer": ("qnn/test_fake_quantization.py",),
    "fold-constant": (
        "transforms/test_fold_constant.py", "transforms/test_fold_constant_tvm.py", "qnn/test_tvm_pass_fold_constant_qnn.py"
    ),
    "fold-explicit-padding": ("transforms/test_fold_explicit_padding_tvm.py",),
    "fold-scale-axis": ("transforms/test_fold_scale_axis.py", "transforms/test_fold_scale_axis_tvm.py"),
    "forward-fold-scale-axis": ("transforms/test_fold_scale_axis.py", "transforms/test_fold_scale_axis_tvm.py"),
    "fuse-ops": ("transforms/test_fuse_ops.py", "transforms/test_fuse_ops_tvm.py"),
    "infer-type": ("transforms/test_infer_type.py",),
    "inline": ("transforms/test_inline.py", "transforms/test_inline_tvm.py"),
    "merge-compiler-regions": ("transforms/test_byoc.py", "transforms/test_byoc_tvm.py"),
    "merge-composite": ("transforms/test_byoc.py", "transforms/test_byoc_tvm.py"),
    "partition-graph": ("transforms/test_byoc.py", "transforms/test_byoc_tvm.py"),
    "lower-to-memory": ("memory/test_lower_and_plan.py",),
    "plan-devices": (
        "transforms/test_plan_devices.py", "transforms/test_plan_devices_random.py", "transforms/test_plan_devices_text.py"
    ),
    "place-concat-inputs": ("transforms/test_place_concat_inputs.py",),
    "plan-memory": ("memory/test_lower_and_plan.py",),
    "qnn-canonicalize-ops": ("qnn/test_canonicalize.py",),
    "qnn-fuse-pad": ("qnn/test_int8_arena.py",),
    "qnn-narrow-edges": ("qnn/test_int8_arena.py",),
    "qnn-legalize": ("qnn/test_legalize_and_build.py",),
    "remove-unused-functions": ("transforms/test_remove_unused_functions_tvm.py",),
    "rewrite-annotated-ops": ("transforms/test_rewrite_annotated_ops.py",),
    "simplify-expr": ("transforms/test_simplify_expr.py", "transforms/test_simplify_expr_tvm.py"),
    "simplify-expr-post-alter-op": ("transforms/test_simplify_expr.py",),
    "simplify-inference": ("transforms/test_simplify_inference.py",),
    "sink-reshape": ("transforms/test_sink_reshape.py",),
    "sink-transpose": ("transforms/test_sink_transpose.py",),
    "to-a-normal-form": ("language/test_normal_forms.py", "transforms/test_to_a_normal_form_tvm.py"),
    "to-basic-block-normal-form": ("language/test_normal_forms.py",),
    "to-graph-normal-form": ("language/test_normal_forms.py",),
    "verify-memory-plan": ("memory/test_lower_and_plan.py",),
    "to-mixed-precision": ("transforms/test_to_mixed_precision.py", "transforms/test_to_mixed_precision_tvm.py"),
}
"""The pytest files (under ``tests/``) of each pass. Passes without an entry have no pytest
file of their own (their tests are lit cases or run through relay-opt)."""

FAST = (
    "dead-code-elimination",
    "eliminate-common-subexpr",
    "fold-explicit-padding",
    "simplify-expr",
    "rewrite-annotated-ops",
    "combine-parallel-dense",
)
"""The subset ``make test`` runs (about a minute on 2 cores when the machine is idle)."""

ENV_PASS = "XRELAY_MUTANT"
ENV_REPORT = "XRELAY_MUTANT_REPORT"

# ---- the pytest plugin (loaded with -p xrelay.testing.mutants) --------------------------------

_calls = [0]
_meaning = [0]
_results: dict[str, dict[str, Any]] = {}


def _mutate(name: str) -> None:
    """Replace the ``apply`` of pass ``name`` (each part of a composite) with the identity."""

    cls = get_pass_class(name)
    parts = getattr(cls, "sequence", None) or ()
    for part in [get_pass_class(p) for p in parts] or [cls]:

        def identity(self: Any, ctx: Any, op: Any) -> None:
            _calls[0] += 1

        part.apply = identity  # type: ignore[method-assign]


def _count_meaning_checks() -> None:
    """Count ``check_semantics`` calls (before test modules import it)."""

    original = semantics.check_semantics

    def counted(*args: Any, **kwargs: Any) -> Any:
        _meaning[0] += 1
        return original(*args, **kwargs)

    semantics.check_semantics = counted  # type: ignore[assignment]


def pytest_configure(config: Any) -> None:
    name = os.environ.get(ENV_PASS)
    if name:
        _mutate(name)
        _count_meaning_checks()


def pytest_runtest_setup(item: Any) -> None:
    _calls[0] = _meaning[0] = 0


def pytest_runtest_logreport(report: Any) -> None:
    if report.when != "call" and not (report.when == "setup" and report.outcome != "passed"):
        return
    name = os.environ.get(ENV_PASS)
    if not name:
        return
    entry = _results.setdefault(report.nodeid, {})
    entry.update(outcome=report.outcome, ran_pass=_calls[0] > 0, meaning=_meaning[0] > 0)


def pytest_collection_modifyitems(items: list[Any]) -> None:
    name = os.environ.get(ENV_PASS)
    if not name:
        return
    for item in items:
        for mark in item.iter_markers("no_change"):
            if mark.args and mark.args[0] == name:
                _results.setdefault(item.nodeid, {})["no_change"] = mark.args[1] if len(mark.args) > 1 else ""


def pytest_sessionfinish(session: Any) -> None:
    path = os.environ.get(ENV_REPORT)
    if not path or not os.environ.get(ENV_PASS):
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    Path(f"{path}.{worker}").write_text(json.dumps(_results))


# ---- the command ------------------------------------------------------------------------------


def _run_mutant(name: str, root: Path, jobs: int) -> dict[str, dict[str, Any]]:
    files = [str(root / "tests" / f) for f in TESTS[name]]
    with tempfile.TemporaryDirectory() as tmp:
        report = str(Path(tmp) / "report")
        env = {**os.environ, ENV_PASS: name, ENV_REPORT: report}
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "xrelay.testing.mutants", "-p", "no:cacheprovider"]
        cmd += ["-n", str(jobs)] if jobs > 1 else ["-p", "no:xdist"]
        subprocess.run([*cmd, *files], cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        merged: dict[str, dict[str, Any]] = {}
        for part in Path(tmp).glob("report.*"):
            for k, v in json.loads(part.read_text()).items():
                merged.setdefault(k, {}).update(v)
        return merged


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m xrelay.testing.mutants", description=__doc__.split("\n\n")[0])
    parser.add_argument("passes", nargs="*", help="CLI names of the passes (default: all with tests)")
    parser.add_argument("--fast", action="store_true", help="only the passes of FAST")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="pytest workers per pass (default 2)")
    args = parser.parse_args(argv)
    names = list(args.passes) or list(FAST if args.fast else TESTS)
    unknown = [n for n in names if n not in TESTS]
    if unknown:
        print(f"no tests listed for {', '.join(unknown)} (see TESTS in xrelay/testing/mutants.py)", file=sys.stderr)
        return 1
    root = Path(__file__).resolve().parents[1]
    bad = 0
    print(f"{'pass':32} {'ran it':>6} {'killed':>6} {'no change':>9} {'meaning':>7}  unexpected")
    for name in names:
        results = _run_mutant(name, root, args.jobs)
        ran = {k: v for k, v in results.items() if v.get("ran_pass")}
        killed = [k for k, v in ran.items() if v["outcome"] != "passed"]
        passed = [k for k, v in ran.items() if v["outcome"] == "passed"]
        marked = [k for k in passed if "no_change" in ran[k]]
        meaning = [k for k in passed if "no_change" not in ran[k] and ran[k]["meaning"]]
        survivors = [k for k in passed if "no_change" not in ran[k] and not ran[k]["meaning"]]
        stale = [k for k in killed if "no_change" in ran[k]]
        line = f"{name:32} {len(ran):6} {len(killed):6} {len(marked):9} {len(meaning):7}  {len(survivors)}"
        print(line, flush=True)
        for k in survivors:
            print(f"    survives: {k}")
        for k in stale:  # informative: a parametrized test may expect no change for some cases
            print(f"    marked no_change but killed: {k}")
        if not ran:
            print("    no test ran the pass")
        bad += len(survivors) + (not ran)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
