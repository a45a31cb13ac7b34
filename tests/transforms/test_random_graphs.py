"""testing.random_graphs: valid, deterministic, varied, runnable relay DAGs."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from xdsl.dialects import func

from xrelay.runtime.interpreter import random_inputs, run
from xrelay.testing.random_graphs import random_dag, random_dags


def test_same_seed_same_program_and_different_seeds_differ():
    assert str(random_dag(5, num_ops=40)) == str(random_dag(5, num_ops=40))
    assert str(random_dag(5, num_ops=40)) != str(random_dag(6, num_ops=40))


@pytest.mark.parametrize("seed", range(8))
def test_valid_with_enough_ops_and_no_dead_values(seed):
    mod = random_dag(seed, num_ops=30)
    mod.verify()
    (fn,) = [op for op in mod.ops if isinstance(op, func.FuncOp)]
    ops = list(fn.body.block.ops)
    assert sum(op.name.startswith("relay.") and op.name != "relay.constant" for op in ops) >= 30
    for op in ops:
        for r in op.results:
            assert r.uses, f"{op.name} has an unused result"
    # static float32 shapes everywhere
    for op in ops:
        for r in op.results:
            assert "?" not in str(r.type) and "f32" in str(r.type)


def test_family_covers_the_op_mix_with_fan_out():
    counts: Counter[str] = Counter()
    fan_out = 0
    for mod in random_dags(20, num_ops=30):
        for op in mod.walk():
            counts[op.name] += 1
            fan_out += any(len(list(r.uses)) > 1 for r in op.results)
    for name in (
        "relay.nn.conv2d", "relay.nn.dense", "relay.concatenate", "relay.split", "relay.sum",
        "relay.mean", "relay.transpose", "relay.reshape", "relay.nn.max_pool2d",
        "relay.nn.avg_pool2d", "relay.nn.global_avg_pool2d", "relay.add", "relay.multiply",
        "relay.nn.relu", "relay.nn.softmax", "relay.constant",
    ):
        assert counts[name] > 0, name
    assert fan_out > 20


@pytest.mark.parametrize("seed", range(4))
def test_runs_with_finite_outputs(seed):
    mod = random_dag(seed, num_ops=30)
    outs = run(mod, random_inputs(mod, seed))
    assert outs and all(np.isfinite(o).all() for o in outs)


def test_bad_arguments():
    with pytest.raises(ValueError, match="num_ops must be >= 1"):
        random_dag(0, num_ops=0)
    with pytest.raises(ValueError, match="NCHW"):
        random_dag(0, input_shape=(4, 8))


def test_custom_input_shape():
    mod = random_dag(1, num_ops=10, input_shape=(2, 3, 4, 4))
    (fn,) = [op for op in mod.ops if isinstance(op, func.FuncOp)]
    assert str(fn.args[0].type) == "tensor<2x3x4x4xf32>"
    assert fn.args[0].name_hint == "x"
