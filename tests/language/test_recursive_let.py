"""Recursive let-bound functions: ``let %f = fn (...) -> T { ... %f(...) ... }; %f(...)``.

Relay's parser puts a let-bound function's own name in scope in its body. xrelay outlines the
literal into a private ``func.func`` named after the variable that calls itself (the variables
it captures become extra parameters, passed again on each recursive call); the text printer
prints it back as a let-bound literal, and rebuilding the expression gives the let again.
"""

from __future__ import annotations

import numpy as np
import pytest

import xrelay as tvm
from xrelay import relay
from xrelay.relay.parser import RelayTextError
from xrelay.testing.structural import assert_structural_equal

POWER = """
#[version = "0.0.5"]
def @main(%x: float32) -> float32 {
    let %pow = fn (%n: int32, %acc: float32) -> float32 {
        if (%n == 0) { %acc } else { %pow(%n - 1, %acc * %x) }
    };
    %pow(3, 1f)
}
"""


def _run(mod: tvm.IRModule, x: float) -> float:
    return float(relay.create_executor(mod=mod).evaluate()(np.float32(x)).numpy())


def test_recursive_let_runs_prints_and_parses_back():
    mod = relay.parse(POWER)
    assert _run(mod, 2) == 8 and _run(mod, 3) == 27
    # one private function that calls itself, named after the variable; %x is captured
    text = mod.mlir_text()
    assert "func.func private @pow(%n: tensor<i32>, %acc: tensor<f32>, %x: tensor<f32>)" in text
    assert "func.call @pow(" in text
    printed = mod.astext()
    assert "let %pow = fn (" in printed and "%pow(%1, %2, %x1)" in printed
    assert_structural_equal(relay.parse(printed), mod)


def test_recursive_let_rebuilt_as_an_expression():
    mod = relay.parse(POWER)
    fn = mod["main"]
    assert isinstance(fn.body, relay.Let) or "let %pow" in fn.astext()
    again = tvm.IRModule.from_expr(fn)
    assert_structural_equal(again, mod)
    assert _run(again, 5) == 125


def test_recursive_let_from_python():
    n = relay.var("n", shape=(), dtype="int32")
    acc = relay.var("acc", shape=(), dtype="int32")
    f = relay.Var("f", relay.FuncType([n.checked_type, acc.checked_type], acc.checked_type))
    body = relay.If(
        relay.equal(n, relay.const(0)),
        acc,
        relay.Call(f, [relay.subtract(n, relay.const(1)), relay.multiply(acc, n)]),
    )
    k = relay.var("k", shape=(), dtype="int32")
    main = relay.Function([k], relay.Let(f, relay.Function([n, acc], body), relay.Call(f, [k, relay.const(1)])))
    mod = tvm.IRModule.from_expr(main)
    fact = relay.create_executor(mod=mod).evaluate()
    assert int(fact(np.int32(5)).numpy()) == 120  # 5!
    assert int(fact(np.int32(0)).numpy()) == 1


def test_dead_recursive_let_is_gone():
    mod = relay.parse(
        """
        #[version = "0.0.5"]
        def @main(%x: float32) -> float32 {
            let %f = fn (%n: int32) -> int32 { %f(%n) };
            %x
        }
        """
    )
    assert "func.func private" not in mod.mlir_text()


def test_return_type_from_the_base_case():
    # no return type written: the If's other branch gives it, as Relay's unification does
    mod = relay.parse(
        """
        #[version = "0.0.5"]
        def @main(%x: float32) -> float32 {
            let %f = fn (%y: float32) { if (%y > 0f) { %f(%y - 1f) } else { %y } };
            %f(%x)
        }
        """
    )
    assert _run(mod, 3.5) == -0.5


def test_a_recursive_let_without_a_base_case_has_no_type():
    with pytest.raises(RelayTextError, match="cannot infer the type of %f"):
        relay.parse(
            """
            #[version = "0.0.5"]
            def @main(%x: float32) -> float32 {
                let %f = fn (%y: float32) { %f(%y) };
                %f(%x)
            }
            """
        )


PASSES = [
    "InferType", "FuseOps", "Inline", "DefuseOps", "ToANormalForm", "ToGraphNormalForm",
    "DeadCodeElimination", "FoldConstant", "EliminateCommonSubexpr", "SimplifyExpr",
    "ToBasicBlockNormalForm", "RemoveUnusedFunctions", "CanonicalizeOps", "SimplifyInference",
]  # fmt: skip


@pytest.mark.parametrize("name", PASSES)
def test_passes_keep_the_recursive_function(name):
    # each ends (defuse-ops inlined the recursive literal forever) and keeps the value
    from xrelay.relay import transform

    with tvm.transform.PassContext(opt_level=3):
        mod = getattr(transform, name)()(relay.parse(POWER))
    assert "func.call @pow(" in mod.mlir_text()
    assert _run(mod, 2) == 8
