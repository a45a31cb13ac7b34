"""Issue 17, item 3: SSA dominance is verified (xDSL's parser and verifier accept a use before
its definition; relay-run then failed with a KeyError traceback)."""

from __future__ import annotations

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import UnknownLoc
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from xrelay.dialects import make_context
from xrelay.dialects.dominance import verify_dominance
from xrelay.dialects.verify import verify_module
from xrelay.tools import relay_opt, relay_run

USE_BEFORE_DEF = """\
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = relay.add %z, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %z = relay.add %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
"""
NESTED = """\
func.func @main(%c: i1, %x: tensor<2xf32>) -> tensor<2xf32> {
  %r = scf.if %c -> (tensor<2xf32>) {
    %inner = relay.negative %x : (tensor<2xf32>) -> tensor<2xf32>
    scf.yield %inner : tensor<2xf32>
  } else {
    scf.yield %x : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}
"""


def _parse(text: str):
    return Parser(make_context(), text).parse_module()


def test_verify_module_rejects_a_use_before_its_definition():
    with pytest.raises(VerifyException, match="operand #0 of 'relay.add' uses %z before its definition"):
        verify_module(_parse(USE_BEFORE_DEF))


def test_reordered_definitions_are_accepted():
    lines = USE_BEFORE_DEF.splitlines()
    lines[1], lines[2] = lines[2], lines[1]
    verify_module(_parse("\n".join(lines)))


def test_a_use_outside_the_defining_region_is_rejected():
    module = _parse(NESTED)
    verify_module(module)  # valid as written
    main = next(op for op in module.ops if isinstance(op, func.FuncOp))
    ret = main.body.block.last_op
    inner = next(op for op in main.walk() if op.name == "relay.negative").results[0]
    ret.operands = [inner]  # the parser refuses this text, a pass could still build it
    with pytest.raises(VerifyException, match="uses %inner outside the region that defines it"):
        verify_dominance(module)


def test_unnamed_values_are_described_by_their_op_and_where_it_is():
    module = _parse(USE_BEFORE_DEF.replace("%z", "%0"))
    # the parser keeps no numeric names: the definition's line and column stand in for %0
    with pytest.raises(VerifyException, match=r"uses result #0 of 'relay.add' \(defined at [^:]*:3:3\) before its definition"):
        verify_dominance(module)
    for op in module.walk():  # built by a pass, not parsed: no position to give
        op.location = UnknownLoc()
    with pytest.raises(VerifyException, match="uses result #0 of 'relay.add' before its definition"):
        verify_dominance(module)


@pytest.mark.parametrize("tool, extra", [(relay_opt, []), (relay_run, ["--random-inputs", "0"])])
def test_tools_report_it_in_one_message(tmp_path, capsys, tool, extra):
    path = tmp_path / "m.mlir"
    path.write_text(USE_BEFORE_DEF)
    assert tool.main([str(path), *extra]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[0].endswith(f"error: {path}:2:3: operand #0 of 'relay.add' uses %z before its definition")
    assert "KeyError" not in err and "Traceback" not in err
