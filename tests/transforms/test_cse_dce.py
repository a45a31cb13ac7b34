"""eliminate-common-subexpr and dead-code-elimination: meaning kept on workloads and random graphs."""

from __future__ import annotations

import pytest

from xrelay.dialects import make_context
from xrelay.testing import resnet
from xrelay.testing.random_graphs import random_dag
from xrelay.testing.semantics import check_semantics
from xrelay.transforms.dead_code_elimination import DeadCodeEliminationPass
from xrelay.transforms.eliminate_common_subexpr import EliminateCommonSubexprPass


def _count(module):
    return sum(1 for op in module.walk() if op.name.startswith("relay."))


@pytest.mark.parametrize("seed", range(4))
def test_cse_on_duplicated_random_graphs(seed):
    # the same DAG built twice into one function: CSE must find every duplicate
    module = random_dag(seed, num_ops=25)
    fn = module.ops.first
    block = fn.body.block
    ret = block.last_op
    n = _count(module)
    mapping = {}
    for op in list(block.ops)[:-1]:
        block.insert_op_before(op.clone(value_mapper=mapping), ret)
    check_semantics(EliminateCommonSubexprPass(), module)
    EliminateCommonSubexprPass().apply(make_context(), module)
    assert _count(module) == n


@pytest.mark.parametrize("seed", range(4))
def test_dce_on_random_graphs_with_dead_copies(seed):
    module = random_dag(seed, num_ops=25)
    fn = module.ops.first
    block = fn.body.block
    ret = block.last_op
    n = _count(module)
    mapping = {}
    for op in list(block.ops)[:-1]:
        block.insert_op_before(op.clone(value_mapper=mapping), ret)
    assert _count(module) == 2 * n
    check_semantics(DeadCodeEliminationPass(), module)
    DeadCodeEliminationPass().apply(make_context(), module)
    assert _count(module) == n


def test_resnet_unchanged_in_meaning():
    mod, params = resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10)
    check_semantics([EliminateCommonSubexprPass(), DeadCodeEliminationPass()], mod, params=params)
