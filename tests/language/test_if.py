"""Relay's If: ``scf.if`` on the element of a bool scalar, relay ops in its regions.

Checked: the IR it lowers to (and back), its Relay text, the reference interpreter on both
branches, the passes that must handle it (each run on both branches before and after), and
``xrelay.build`` refusing it by name.
"""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.dialects import make_context
from xrelay.relay.parser import parse
from xrelay.transforms.infra import get_pass_class

TEXT = """#[version = "0.0.5"]
def @main(%c: bool /* ty=bool */, %x: Tensor[(1, 2, 4, 4), float32] /* ty=Tensor[(1, 2, 4, 4), float32] */) -> Tensor[(1, 2, 4, 4), float32] {
  %0 = nn.relu(%x) /* ty=Tensor[(1, 2, 4, 4), float32] */;
  %1 = add(%0, 1f /* ty=float32 */) /* ty=Tensor[(1, 2, 4, 4), float32] */;
  %4 = if (%c) {
    %2 = multiply(%1, 2f /* ty=float32 */) /* ty=Tensor[(1, 2, 4, 4), float32] */;
    nn.relu(%2) /* ty=Tensor[(1, 2, 4, 4), float32] */
  } else {
    %3 = exp(%1) /* ty=Tensor[(1, 2, 4, 4), float32] */;
    add(%3, 3f /* ty=float32 */) /* ty=Tensor[(1, 2, 4, 4), float32] */
  };
  %5 = exp(%4) /* ty=Tensor[(1, 2, 4, 4), float32] */;
  negative(%5) /* ty=Tensor[(1, 2, 4, 4), float32] */
}
"""

X = np.random.default_rng(0).standard_normal((1, 2, 4, 4)).astype("float32")


def _expected(c: bool) -> np.ndarray:
    a = np.maximum(X, 0) + 1
    b = np.maximum(a * 2, 0) if c else np.exp(a) + 3
    return -np.exp(b)


def _run(mod, c: bool) -> np.ndarray:
    return xrelay.run(mod, {"c": np.array(c), "x": X})[0]


def test_text_parses_prints_and_runs_both_branches():
    mod = parse(TEXT)
    main = mod.module.ops.first
    names = [op.name for op in main.body.block.ops]
    assert names == ["relay.nn.relu", "relay.constant", "relay.add", "tensor.extract", "scf.if",
                     "relay.exp", "relay.negative", "func.return"]  # fmt: skip
    if_op = main.body.block.ops.first.next_op.next_op.next_op.next_op
    assert [op.name for op in if_op.true_region.block.ops] == ["relay.constant", "relay.multiply", "relay.nn.relu", "scf.yield"]
    assert mod.astext() == TEXT
    assert xrelay.IRModule.from_text(mod.mlir_text()).mlir_text() == mod.mlir_text()  # the MLIR form parses too
    for c in (True, False):
        np.testing.assert_allclose(_run(mod, c), _expected(c), rtol=1e-6)


def test_python_api_if_hoists_what_both_branches_use():
    c = relay.var("c", "bool")
    x = relay.var("x", shape=(2,))
    t = relay.add(x, relay.const(1.0))
    only_then = relay.exp(x)
    f = relay.Function([c, x], relay.If(c, relay.multiply(t, only_then), relay.negative(t)))
    mod = xrelay.IRModule.from_expr(f)
    top = [op.name for op in mod.module.ops.first.body.block.ops]
    assert top == ["relay.constant", "relay.add", "tensor.extract", "scf.if", "func.return"]
    if_op = list(mod.module.ops.first.body.block.ops)[3]
    assert [op.name for op in if_op.true_region.block.ops] == ["relay.exp", "relay.multiply", "scf.yield"]
    again = xrelay.IRModule.from_expr(mod["main"])  # rebuilt as relay.If and lowered again
    assert str(again) == str(mod)
    xv = np.array([0.5, 2.0], "float32")
    assert np.allclose(xrelay.run(mod, {"c": np.array(True), "x": xv})[0], (xv + 1) * np.exp(xv))
    assert np.allclose(xrelay.run(mod, {"c": np.array(False), "x": xv})[0], -(xv + 1))


def test_condition_must_be_a_bool_scalar():
    x = relay.var("x", shape=(2,))
    with pytest.raises(relay.RelayTypeError, match="expected a bool scalar"):
        relay.If(relay.var("c", shape=(2,), dtype="bool"), x, x)
    with pytest.raises(Exception, match="expected a bool scalar"):
        parse("def @main(%c: int32, %x: float32) { if (%c) { %x } else { %x } }")


@pytest.mark.parametrize(
    "passes",
    ["infer-type", "dead-code-elimination", "eliminate-common-subexpr", "fold-constant", "inline",
     "simplify-inference", "fuse-ops", "cse,dce,canonicalize"],
)  # fmt: skip
def test_passes_keep_the_meaning_on_both_branches(passes):
    mod = parse(TEXT)
    for name in passes.split(","):
        _apply(name, mod)
    for c in (True, False):
        np.testing.assert_allclose(_run(mod, c), _expected(c), rtol=1e-6)
    assert parse(mod.astext()).astext() == mod.astext()


def _apply(name: str, mod):
    """Run the pass ``name`` (CLI name) on ``mod`` in place, as relay-opt does, and verify."""
    get_pass_class(name)().apply(make_context(), mod.module)
    mod.verify()
    return mod


def test_fuse_ops_fuses_each_branch_and_nothing_across_the_if():
    mod = _apply("fuse-ops", parse(TEXT))
    funcs = {op.sym_name.data: [o.name for o in op.body.block.ops] for op in mod.module.ops}
    assert funcs["fused_nn_relu_add"] == ["relay.nn.relu", "relay.constant", "relay.add", "func.return"]
    assert funcs["fused_multiply_nn_relu"][-2:] == ["relay.nn.relu", "func.return"]
    assert funcs["fused_exp_add"][:1] == ["relay.exp"]
    assert funcs["fused_exp_negative"] == ["relay.exp", "relay.negative", "func.return"]
    assert funcs["main"] == ["func.call", "tensor.extract", "scf.if", "func.call", "func.return"]


def test_fold_constant_takes_the_branch_of_a_constant_condition():
    mod = parse("def @main(%x: Tensor[(2), float32]) { if (False) { exp(%x) } else { add(%x, add(1f, 2f)) } }")
    _apply("fold-constant", mod)
    assert [op.name for op in mod.module.ops.first.body.block.ops] == ["relay.constant", "relay.add", "func.return"]
    assert "add(%x, 3f /* ty=float32 */)" in mod.astext()


def test_dead_code_elimination_drops_an_unused_if():
    mod = parse("def @main(%c: bool, %x: Tensor[(2), float32]) { %0 = if (%c) { exp(%x) } else { %x }; negative(%x) }")
    _apply("dead-code-elimination", mod)
    assert [op.name for op in mod.module.ops.first.body.block.ops] == ["relay.negative", "func.return"]


def test_build_refuses_an_if_by_name():
    with pytest.raises(Exception, match=r"@main holds an If \('scf.if', op #\d+ on %c\)"):
        xrelay.build(parse(TEXT), opt_level=3)
