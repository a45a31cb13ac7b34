"""simplify-expr keeps the meaning: every FileCheck case (one per rewrite), ResNet-18,
MobileNet and random DAGs run before and after on random inputs; and the rewrites reach a
fixpoint (running the pass twice changes nothing)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.testing import mobilenet, resnet
from xrelay.testing.random_graphs import random_dag
from xrelay.testing.semantics import check_semantics, filecheck_cases
from xrelay.transforms.simplify_expr import SimplifyExprPass

CASES = Path(__file__).parents[1] / "filecheck" / "transforms" / "simplify-expr.mlir"


def _chunks() -> list[str]:
    return filecheck_cases(CASES)


@pytest.mark.parametrize("index", range(len(_chunks())))
def test_filecheck_cases_keep_their_meaning(index):
    module = Parser(make_context(), _chunks()[index]).parse_module()
    name = next(op.sym_name.data for op in module.ops)
    # dynamic dims need inputs given explicitly
    params = {"x": np.ones((2, 3), "float32"), "i": np.arange(5, dtype="int32")} if name == "dynamic" else None
    before, after = check_semantics(SimplifyExprPass(), module, entry=name, params=params, **_domain(name))
    assert len(before) == len(after)


def _domain(name: str) -> dict:
    """What a case's run needs: the positive inputs of its ``sqrt``, and why its outputs are
    the same whatever the inputs."""
    if name == "concretize_zeros_ones":
        return {"constant_outputs": "zeros_like and ones_like depend on the shape only"}
    if name == "rsqrt":
        return {"positive": ["x"]}
    return {}


@pytest.mark.no_change("simplify-expr", "idempotence: a second run changes nothing (the identity is idempotent too; the FileCheck cases check the rewrites)")
def test_fixpoint():
    module = Parser(make_context(), "\n".join(_chunks())).parse_module()
    SimplifyExprPass().apply(make_context(), module)
    once = str(module)
    SimplifyExprPass().apply(make_context(), module)
    assert str(module) == once


@pytest.mark.parametrize("workload", [resnet, mobilenet])
def test_workloads(workload):
    mod, params = workload.get_workload(image_shape=(3, 32, 32), num_classes=10)
    check_semantics(SimplifyExprPass(), mod, params=params)


@pytest.mark.parametrize("seed", range(4))
def test_random_dags(seed):
    check_semantics(SimplifyExprPass(), random_dag(seed, 40))


def test_post_alter_op_subset_keeps_meaning():
    from xrelay.transforms.simplify_expr_post_alter_op import SimplifyExprPostAlterOpPass

    path = CASES.parent / "simplify-expr-post-alter-op.mlir"
    module = Parser(make_context(), path.read_text()).parse_module()
    check_semantics(SimplifyExprPostAlterOpPass(), module, entry="post")
    for chunk in _chunks():
        m = Parser(make_context(), chunk).parse_module()
        name = next(op.sym_name.data for op in m.ops)
        if name != "dynamic":
            check_semantics(SimplifyExprPostAlterOpPass(), m, entry=name, **_domain(name))
