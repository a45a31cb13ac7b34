"""check_semantics: it passes semantics-preserving passes and catches wrong ones."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from xrelay.dialects.relay import RELAY_OPS, ConstantOp
from xrelay.testing.semantics import assert_outputs_match, check_semantics

from .conftest import parse

AddOp = RELAY_OPS["add"]
SubtractOp = RELAY_OPS["subtract"]

TEXT = """
func.func @main(%x: tensor<3x4xf32>, %w: tensor<4xf32>, %k: tensor<3xi32>) -> (tensor<3x4xf32>, tensor<3xi32>) {
  %y = relay.add %x, %w : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %z = relay.nn.relu %y : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %m = relay.multiply %k, %k : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return %z, %m : tensor<3x4xf32>, tensor<3xi32>
}
"""


class _AddToSubtract(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AddOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, SubtractOp.make(list(op.operands)))


@dataclass(frozen=True)
class AddToSubtract(ModulePass):
    """A deliberately wrong pass."""

    name = "add-to-subtract"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(_AddToSubtract()).rewrite_module(op)


@dataclass(frozen=True)
class Identity(ModulePass):
    name = "identity"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pass


def test_identity_pass_passes_and_returns_outputs():
    mod = parse(TEXT)
    before, after = check_semantics(Identity(), mod)
    assert len(before) == len(after) == 2
    assert before[0].shape == (3, 4) and before[1].dtype == np.int32
    np.testing.assert_array_equal(before[0], after[0])
    # random inputs were used: relu of a normal sample has zeros and positives
    assert (before[0] == 0).any() and (before[0] > 0).any()


def test_wrong_pass_is_caught_and_original_untouched():
    mod = parse(TEXT)
    text_before = str(mod)
    with pytest.raises(AssertionError) as info:
        check_semantics(AddToSubtract(), mod)
    msg = str(info.value)
    assert msg.startswith("after add-to-subtract: output 0: ")
    assert "values differ (rtol=0.0001, atol=0.0001); max abs error" in msg
    assert "max rel error" in msg and "first at index" in msg
    assert str(mod) == text_before
    assert any(isinstance(op, AddOp) for op in mod.walk())


def test_callable_sequence_and_trials():
    mod = parse(TEXT)
    seen = []

    def my_pass(m):
        seen.append(m)
        AddToSubtract().apply(Context(), m)

    with pytest.raises(AssertionError, match="after my_pass: output 0"):
        check_semantics(my_pass, mod)
    assert seen and seen[0] is not mod
    # a sequence of passes; several trials with different seeds
    before, _ = check_semantics([Identity(), lambda m: None], mod, trials=3, seed=5)
    first, _ = check_semantics(Identity(), mod, seed=5)
    np.testing.assert_array_equal(before[0], first[0])
    with pytest.raises(ValueError, match="trials must be at least 1"):
        check_semantics(Identity(), mod, trials=0)


def test_pipeline_strings_and_infra_passes():
    from xrelay.transforms.infra import as_pass

    mod = parse(TEXT)
    check_semantics("cse,dce", mod)
    check_semantics(as_pass(Identity()), mod)
    with pytest.raises(ValueError, match="Unrecognized passes"):
        check_semantics("no-such-pass", mod)


def test_params_are_shared_and_can_become_constants():
    """A pass may replace a parameter by a constant: inputs follow by name."""
    mod = parse(TEXT)
    w = np.arange(4, dtype="float32")

    def bind_w(m: ModuleOp) -> None:
        main = next(iter(m.ops))
        block = main.body.blocks.first
        arg = next(a for a in block.args if a.name_hint == "w")
        const = ConstantOp.from_numpy(w, param_name="w")
        block.insert_op_before(const, block.first_op)
        arg.replace_all_uses_with(const.result)
        block.erase_arg(arg)
        main.function_type = FunctionType.from_lists(
            [a.type for a in block.args], main.function_type.outputs.data
        )

    before, after = check_semantics(bind_w, mod, params={"w": w})
    np.testing.assert_array_equal(before[0], after[0])
    # with a different w the bound constant disagrees
    with pytest.raises(AssertionError, match="output 0"):
        check_semantics(bind_w, mod, params={"w": w + 1})


def test_invalid_result_is_reported():
    mod = parse(TEXT)

    def break_types(m: ModuleOp) -> None:
        # a subtract whose declared result type is not what its operands give
        add = next(op for op in m.walk() if isinstance(op, AddOp))
        bad = SubtractOp.build(
            operands=[add.operands[0], add.operands[0]], result_types=[add.operands[1].type]
        )
        add.parent_block().insert_op_before(bad, add)

    with pytest.raises(AssertionError, match="the module does not verify after break_types"):
        check_semantics(break_types, mod)


def test_assert_outputs_match_messages():
    a = np.array([1.0, 2.0, np.nan], "float32")
    assert_outputs_match([a], [a.copy()])
    assert_outputs_match([a], [a + 1e-5])
    with pytest.raises(AssertionError, match=r"the number of outputs changed: 1 before, 2 after"):
        assert_outputs_match([a], [a, a])
    with pytest.raises(AssertionError, match=r"output 0: shape \(3,\) before, \(1, 3\) after"):
        assert_outputs_match([a], [a[None]])
    with pytest.raises(AssertionError, match=r"output 0: dtype float32 before, float64 after"):
        assert_outputs_match([a], [a.astype("float64")])
    b = a.copy()
    b[1] = 2.5
    with pytest.raises(
        AssertionError,
        match=r"output 0: 1 of 3 values differ .*max abs error 0.5, max rel error 0.25; "
        r"first at index \(1,\): before np.float32\(2.0\), after np.float32\(2.5\)",
    ):
        assert_outputs_match([a], [b])
    with pytest.raises(AssertionError, match="1 of 3 values differ"):
        assert_outputs_match([a], [np.array([1.0, 2.0, 0.0], "float32")])
    ints = np.array([3, 4], "int64")
    with pytest.raises(AssertionError, match="1 of 2 values differ"):
        assert_outputs_match([ints], [ints + np.array([0, 1])])
