"""verify_module: the same verdicts as xDSL's verify, with indexed symbol lookups."""

from __future__ import annotations

import pytest
from xdsl.parser import Parser
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import VerifyException

from xrelay.dialects import make_context
from xrelay.dialects.verify import indexed_symbol_lookup, verify_module

GOOD = """
func.func private @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  func.return %a : tensor<2xf32>
}
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = func.call @f(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
"""


def parse(text: str):
    return Parser(make_context(), text).parse_module()


def test_accepts_valid_and_restores_lookup():
    original = SymbolTable.lookup_symbol
    verify_module(parse(GOOD))
    assert SymbolTable.lookup_symbol is original


def test_reports_what_xdsl_reports():
    bad = parse(GOOD.replace("func.call @f(", "func.call @g("))
    with pytest.raises(VerifyException) as plain:
        bad.verify()
    with pytest.raises(VerifyException) as indexed:
        verify_module(bad)
    assert str(indexed.value) == str(plain.value)
    assert "@g" in str(indexed.value)


def test_lookup_finds_functions_and_misses():
    module = parse(GOOD)
    main = list(module.ops)[1]
    with indexed_symbol_lookup():
        assert SymbolTable.lookup_symbol(main, "f") is list(module.ops)[0]
        assert SymbolTable.lookup_symbol(main, "nope") is None
