"""PassTimingInstrument render, printing instruments and OpCountDiff."""

from __future__ import annotations

import io
import logging
import re

import pytest
from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.func import Func
from xdsl.dialects.test import Test
from xdsl.parser import Parser

from xrelay.instrument import (
    OpCountDiff,
    PassPrintingInstrument,
    PassTimingInstrument,
    PrintAfterAll,
    PrintBeforeAll,
    count_ops,
)
from xrelay.transforms.infra import PassContext, Sequential, as_pass

_LINE = re.compile(
    r"^(?P<tabs>\t*)(?P<name>[^\t:]+): (?P<total>\d+)us \[(?P<self>-?\d+)us\] "
    r"\((?P<pct>\d+\.\d\d)%; (?P<parent>\d+\.\d\d)%\)$"
)


def _parse_render(text: str) -> list[dict]:
    assert text.endswith("\n")
    rows = []
    for line in text[:-1].split("\n"):
        match = _LINE.match(line)
        assert match, f"bad line {line!r}"
        rows.append(
            {
                "depth": len(match["tabs"]),
                "name": match["name"],
                "total": int(match["total"]),
                "self": int(match["self"]),
                "pct": float(match["pct"]),
                "parent": float(match["parent"]),
            }
        )
    return rows


def test_timing_nested_sequentials(module: ModuleOp, registry):
    timing = PassTimingInstrument()
    inner = Sequential([registry.AppendOp(count=50), registry.AppendPure()], name="inner")
    outer = Sequential([registry.AppendOp(count=20), inner], name="outer")
    with PassContext(opt_level=3, instruments=[timing]):
        as_pass(registry.InferTypeStub())(module)
        outer(module)
        rows = _parse_render(PassTimingInstrument.render())
    assert [(r["depth"], r["name"]) for r in rows] == [
        (0, "InferType"),
        (0, "outer"),
        (1, "AppendOp"),
        (1, "inner"),
        (2, "AppendOp"),
        (2, "InferType"),
        (2, "AppendPure"),
    ]
    top = [r for r in rows if r["depth"] == 0]
    # Top level: percentage of the total equals percentage of the "parent".
    assert all(r["pct"] == r["parent"] for r in top)
    assert sum(r["pct"] for r in top) == pytest.approx(100.0, abs=0.02)
    for r in rows:
        assert 0 <= r["self"] <= r["total"]
    # Children's shares of their parent add up to at most 100%, and their total
    # shares to their parent's total share (up to rounding).
    outer_row, inner_row = rows[1], rows[3]
    children = [rows[2], rows[3]]
    assert sum(c["parent"] for c in children) <= 100.0 + 0.02
    assert sum(c["total"] for c in children) <= outer_row["total"] + 1
    assert outer_row["self"] == pytest.approx(
        outer_row["total"] - sum(c["total"] for c in children), abs=2
    )
    assert sum(c["parent"] for c in rows[4:7]) <= 100.0 + 0.03
    assert sum(c["pct"] for c in rows[4:7]) <= inner_row["pct"] + 0.03


def test_timing_cleared_on_exit_and_warns_when_empty(module: ModuleOp, registry, caplog):
    with PassContext(instruments=[PassTimingInstrument()]):
        as_pass(registry.Noop())(module)
        assert PassTimingInstrument.render().startswith("noop: ")
    with caplog.at_level(logging.WARNING):
        assert PassTimingInstrument.render() == ""
    assert "no passes have been profiled, did you enable pass profiling?" in caplog.text


def test_timing_override_instruments_clears(module: ModuleOp, registry):
    current = PassContext.current()
    current.override_instruments([PassTimingInstrument()])
    as_pass(registry.Noop())(module)
    assert PassTimingInstrument.render().count("\n") == 1
    current.override_instruments([])
    assert PassTimingInstrument.render() == ""


def test_timing_render_inside_pass_raises(module: ModuleOp, registry):
    from xrelay.transforms.infra import module_pass

    @module_pass(opt_level=0, name="Renders")
    def renders(mod, ctx):
        PassTimingInstrument.render()

    with PassContext(instruments=[PassTimingInstrument()]):
        with pytest.raises(RuntimeError, match="still in a pass"):
            renders(module)


def _xdsl_ctx() -> Context:
    ctx = Context()
    for dialect in (Builtin, Func, Arith, Test):
        ctx.load_dialect(dialect)
    return ctx


def _sections(text: str) -> list[tuple[str, ModuleOp]]:
    """Split a dump at its headers and parse every section."""
    parts = re.split(r"^// -----// IR Dump (.*) //----- //\n", text, flags=re.M)
    assert parts[0] == ""
    return [
        (header, Parser(_xdsl_ctx(), body).parse_module())
        for header, body in zip(parts[1::2], parts[2::2])
    ]


def test_print_before_and_after_all_parse_back(module: ModuleOp, registry):
    out = io.StringIO()
    with PassContext(instruments=[PrintBeforeAll(out), PrintAfterAll(out)]):
        Sequential([registry.AppendOp(), registry.EraseFirst()], name="seq")(module)
    sections = _sections(out.getvalue())
    assert [(h, len(list(m.ops))) for h, m in sections] == [
        ("Before seq", 1),
        ("Before AppendOp", 1),
        ("After AppendOp", 2),
        ("Before EraseFirst", 2),
        ("After EraseFirst", 1),
        ("After seq", 1),
    ]
    assert str(sections[-1][1]) == str(module)


def test_print_all_defaults_to_stdout(module: ModuleOp, registry, capsys):
    with PassContext(instruments=[PrintAfterAll()]):
        as_pass(registry.Noop())(module)
    assert capsys.readouterr().out.startswith("// -----// IR Dump After noop //----- //\n")


def test_pass_printing_instrument_by_cli_and_relay_names(module: ModuleOp, registry):
    out = io.StringIO()
    printer = PassPrintingInstrument(
        print_before_pass_names=["append-op"],
        print_after_pass_names=["EraseFirst", "seq"],
        stream=out,
    )
    with PassContext(instruments=[printer]):
        Sequential([registry.AppendOp(), registry.EraseFirst()], name="seq")(module)
    assert [h for h, _ in _sections(out.getvalue())] == [
        "Before AppendOp",
        "After EraseFirst",
        "After seq",
    ]
    with pytest.raises(TypeError, match="list"):
        PassPrintingInstrument("FuseOps")  # type: ignore[arg-type]


def test_op_count_diff(module: ModuleOp, registry):
    diff = OpCountDiff()
    seq = Sequential(
        [registry.AppendOp(count=2), registry.AppendPure(), registry.Noop(), registry.EraseFirst()]
    )
    with PassContext(opt_level=3, instruments=[diff]):
        module = seq(module)
    assert diff.get_pass_to_op_diff() == [
        (1, "AppendOp", {"test.op": 2}),
        (1, "AppendPure", {"test.pureop": 1}),
        (1, "EraseFirst", {"test.op": -1}),
        (0, "sequential", {"test.op": 1, "test.pureop": 1}),
    ]
    table = diff.render().splitlines()
    assert table[0].split() == ["pass", "op", "change"]
    assert table[1].split() == ["AppendOp", "test.op", "+2"]
    assert table[1].startswith("  AppendOp")
    assert table[-2].split() == ["sequential", "test.op", "+1"]
    assert table[-1].split() == ["test.pureop", "+1"]
    assert count_ops(module) == {"test.op": 2, "test.pureop": 1}


def test_op_count_diff_reset_on_enter(module: ModuleOp, registry):
    diff = OpCountDiff()
    with PassContext(instruments=[diff]):
        as_pass(registry.AppendOp())(module)
    assert len(diff.diffs) == 1
    with PassContext(instruments=[diff]):
        as_pass(registry.Noop())(module)
    assert diff.diffs == []
    assert diff.render() == "no pass changed the op counts\n"

