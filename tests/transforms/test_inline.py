"""inline and remove-unused-functions: meaning kept, Relay's error, entry handling."""

from __future__ import annotations

import pytest
from xdsl.dialects import func
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.testing.semantics import check_semantics
from xrelay.transforms.inline import InlineError, InlinePass, inline_module
from xrelay.transforms.remove_unused_functions import (
    RemoveUnusedFunctionsError,
    RemoveUnusedFunctionsPass,
    remove_unused_functions,
)

NESTED = """
func.func private @sq(%a: tensor<4xf32>) -> tensor<4xf32> attributes {relay.inline = 1 : i64} {
  %0 = relay.multiply %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func private @poly(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {relay.inline = 1 : i64} {
  %0 = func.call @sq(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.subtract %0, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = func.call @sq(%1) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %2, %0 : tensor<4xf32>, tensor<4xf32>
}
func.func @keep(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.tanh %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0, %1 = func.call @poly(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %2, %3 = func.call @poly(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %4 = func.call @keep(%3) : (tensor<4xf32>) -> tensor<4xf32>
  %5 = relay.add %2, %4 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %5 : tensor<4xf32>
}
"""


def _parse(text):
    return Parser(make_context(), text).parse_module()


def _func_names(module):
    return [op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)]


def test_inline_nested_keeps_meaning():
    module = _parse(NESTED)
    check_semantics(InlinePass(), module)
    removed = inline_module(module)
    assert sorted(removed) == ["poly", "sq"]
    assert _func_names(module) == ["keep", "main"]
    main = module.ops.last
    calls = [op.callee.root_reference.data for op in main.walk() if isinstance(op, func.CallOp)]
    assert calls == ["keep"]
    assert sum(op.name == "relay.multiply" for op in main.walk()) == 4


def test_inline_error_when_not_inlinable():
    module = _parse(NESTED.replace("func.func @keep(%a: tensor<4xf32>) -> tensor<4xf32> {", "func.func @keep(%a: tensor<4xf32>) -> tensor<4xf32> attributes {relay.inline = 1 : i64} {\n  %z = func.call @ext(%a) : (tensor<4xf32>) -> tensor<4xf32>").replace("func.func @main", "func.func private @ext(tensor<4xf32>) -> tensor<4xf32>\nfunc.func @main"))
    with pytest.raises(InlineError, match="@keep is marked as inline but not inlined"):
        inline_module(module)


def test_remove_unused_functions():
    module = _parse(NESTED)
    assert remove_unused_functions(module, ["keep"]) == ["sq", "poly", "main"]
    assert _func_names(module) == ["keep"]
    module = _parse(NESTED)
    check_semantics(RemoveUnusedFunctionsPass(), module)
    assert remove_unused_functions(module) == []
    with pytest.raises(RemoveUnusedFunctionsError, match="none of the entry functions @nope"):
        remove_unused_functions(module, ["nope"])
