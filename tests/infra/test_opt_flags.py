"""relay-opt's pass-infrastructure flags, driven through argparse and run_pipeline."""

from __future__ import annotations

import argparse

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.test import Test

from xrelay.tools.opt_flags import add_arguments, instruments_from_args, run_pipeline
from xrelay.transforms.instrument import (
    OpCountDiff,
    PassPrintingInstrument,
    PassTimingInstrument,
    PrintAfterAll,
)


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(argv)


def _ctx() -> Context:
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(Test)
    return ctx


def test_flag_parsing():
    args = _parse("-O3", "--disable-pass=FuseOps,fold-constant", "--print-ir-after=a,b")
    assert args.opt_level == 3
    assert args.disable_pass == [["FuseOps", "fold-constant"]]
    assert args.print_ir_after == [["a", "b"]]
    assert _parse().opt_level is None
    with pytest.raises(SystemExit):
        _parse("-O5")
    with pytest.raises(SystemExit):
        _parse("--print-ir-after=a,,b")


def test_instruments_from_flags():
    args = _parse("--pass-timing", "--print-ir-after-all", "--print-ir-before=x", "--print-op-diff")
    kinds = [type(i) for i in instruments_from_args(args)]
    assert kinds == [PassPrintingInstrument, PrintAfterAll, OpCountDiff, PassTimingInstrument]
    assert instruments_from_args(_parse()) == []


def test_run_pipeline_direct_passes_and_reports(registry, module: ModuleOp, capsys):
    args = _parse("--pass-timing", "--print-op-diff", "--print-ir-after=append-op")
    # AppendPure has opt_level 3: called directly it runs at the default level.
    run_pipeline(args, _ctx(), module, [registry.AppendOp(count=2), registry.AppendPure()])
    captured = capsys.readouterr()
    assert captured.out == ""
    assert registry.log == ["AppendOp(2)", "AppendPure"]
    err = captured.err
    assert "// -----// IR Dump After AppendOp //----- //" in err
    assert "IR Dump After AppendPure" not in err
    timing_lines = [line for line in err.splitlines() if "us [" in line]
    assert [line.split(":")[0] for line in timing_lines] == ["AppendOp", "AppendPure"]
    table = err[err.index("pass ") :].splitlines()
    assert [row.split() for row in table] == [
        ["pass", "op", "change"],
        ["AppendOp", "test.op", "+2"],
        ["AppendPure", "test.pureop", "+1"],
    ]
    # The profile was cleared when the context was left.
    assert PassTimingInstrument.render() == ""


def test_run_pipeline_with_opt_level_and_disabled(registry, module: ModuleOp, capsys):
    run_pipeline(_parse("-O1", "--disable-pass=fuse-ops"), _ctx(), module, [registry.Noop()])
    assert registry.log == [
        "noop", "RemoveUnusedFunctions", "InferType", "SimplifyInference", "InferType"
    ]
    assert capsys.readouterr().err == ""


def test_run_pipeline_verifies_after_each_pass(registry, capsys):
    from xdsl.dialects import test
    from xdsl.utils.exceptions import VerifyException

    # A terminator in the middle of a block does not verify.
    bad = ModuleOp([])
    bad.body.block.add_op(test.TestTermOp())
    bad.body.block.add_op(test.TestOp())
    with pytest.raises(VerifyException) as info:
        run_pipeline(_parse(), _ctx(), bad, [registry.Noop()])
    # one message naming the pass, without the traceback instrument errors otherwise carry
    message = str(info.value)
    assert message.startswith("the IR did not verify after pass noop: ") and "Traceback" not in message
    args = _parse()
    args.disable_verify = True
    run_pipeline(args, _ctx(), bad, [registry.Noop()])
    assert registry.log == ["noop", "noop"]


def test_unknown_names_in_flags_are_errors(registry, module: ModuleOp):
    # a typo would silently disable nothing or print nothing: refused, with the closest names
    args = _parse("--print-ir-after=AppendOpp,sequential")
    with pytest.raises(ValueError, match=r"--print-ir-after: no pass named 'AppendOpp' \(did you mean AppendOp"):
        run_pipeline(args, _ctx(), module, [registry.Noop()])
    with pytest.raises(ValueError, match=r"^--disable-pass: no pass named 'nope' \(did you mean noop\?\)$"):
        run_pipeline(_parse("--disable-pass=noop,nope"), _ctx(), module, [registry.Noop()])
    assert registry.log == []  # refused before any pass ran
    run_pipeline(_parse("--disable-pass=noop", "--print-ir-after=sequential"), _ctx(), module, [])
