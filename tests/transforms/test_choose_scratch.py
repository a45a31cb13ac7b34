"""``choose-scratch`` keeps the program's meaning: the module of its FileCheck test
(tests/filecheck/transforms/choose-scratch.mlir), planned and run by the memory interpreter
(poisoned arenas and workspaces) before and after the pass, under every priority, gives the
same outputs; the arena shrinks where the balanced choice says."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.runtime.memory_interpreter import run_memory
from xrelay.transforms.choose_scratch import choose_scratch
from xrelay.transforms.plan_memory import plan_module

SOURCE = Path(__file__).resolve().parents[1] / "filecheck" / "transforms" / "choose-scratch.mlir"


def _module():
    return Parser(make_context(), SOURCE.read_text(), str(SOURCE)).parse_module()


@pytest.mark.parametrize("priority, arena", [("speed", 6144), ("balanced", 3072), ("memory", 3072)])
def test_same_outputs_before_and_after(priority, arena):
    x = np.random.default_rng(0).standard_normal(256).astype("float32")
    before = _module()
    plan_module(before)
    want = run_memory(before, [x], use_plan=True)
    after = _module()
    choose_scratch(after, priority)
    _, _, plan = plan_module(after)
    got = run_memory(after, [x], use_plan=True)
    assert plan.total_size == arena
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[0], 2 * x)  # @g(@sub(@f(x), @f(@f(x)))) = -(-x - x)
