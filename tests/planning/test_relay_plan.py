"""relay-plan end to end through main(), including its error exits."""

import csv
import io
from pathlib import Path

import pytest

from xrelay.tools.relay_plan import LOADERS, Progress, load_problem, main, parse_pool
from xrelay.transforms.planners import Buffer, PlanError, Pool

DATA = Path(__file__).parent / "data"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_optimal_writes_offsets_and_report(capsys, tmp_path):
    out_csv = tmp_path / "plan.csv"
    code, out, err = run(
        capsys, DATA / "five.csv", "--algorithm", "optimal", "--output", out_csv,
        "--time-limit", "5",
    )  # fmt: skip
    assert code == 0, err
    assert err == ""
    assert "5 buffers" in out
    assert "Total arena size                    | 12 bytes" in out
    assert "yes (proven)" in out
    rows = list(csv.DictReader(out_csv.open()))
    assert [r["id"] for r in rows] == ["a", "b", "c", "d", "e"]
    assert list(rows[0]) == ["id", "lower", "upper", "size", "offset"]
    # Half-open lifetimes are written back as read.
    assert (rows[1]["lower"], rows[1]["upper"]) == ("3", "9")
    tops = max(int(r["offset"]) + int(r["size"]) for r in rows)
    assert tops == 12


def test_default_pool_alignment_is_one(capsys):
    # With the library default (16-byte alignment) the arena would be 48 bytes.
    code, out, _ = run(capsys, DATA / "five.csv", "--algorithm", "greedy-by-size")
    assert code == 0
    assert "Total arena size                    | 12 bytes" in out


def test_several_pools_add_pool_column_and_plot(capsys, tmp_path):
    out_csv = tmp_path / "plan.csv"
    png = tmp_path / "plan.png"
    code, out, err = run(
        capsys, DATA / "five.csv", "-a", "greedy-hierarchy", "--pool", "fast:8:4",
        "--pool", "slow:inf:4:0x1000", "-o", out_csv, "--plot", png,
    )  # fmt: skip
    assert code == 0, err
    rows = list(csv.DictReader(out_csv.open()))
    assert {r["pool"] for r in rows} == {"fast", "slow"}
    assert "0x1000" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_storage_ids_reports_objects(capsys):
    code, out, _ = run(capsys, DATA / "five.csv", "-a", "storage-ids")
    assert code == 0
    assert "Storage objects" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["missing.csv"], "missing.csv: no such file"),
        (["five.csv", "-a", "best"], "unknown algorithm 'best' (known: naive, greedy-by-size"),
        (["bad_row.csv"], "bad_row.csv:3: lower, upper and size must be integers"),
        (["bad_header.csv"], "bad_header.csv:1: header lacks column(s) lower, upper"),
        (["empty_lifetime.csv"], "empty_lifetime.csv:3: buffer 'b' has empty lifetime [5, 5)"),
        (["five.csv", "--pool", "tiny:8"], "fits in no pool"),
        (["five.csv", "-a", "optimal", "--pool", "tiny:8"], "holds 8 bytes"),
        (["five.csv", "--pool", "p:big"], "--pool p:big: size 'big' is not an integer"),
        (["five.csv", "--pool", "nosize"], "expected NAME:SIZE[:ALIGN[:BASE]]"),
        (["five.csv", "--time-limit", "0"], "--time-limit must be a positive number"),
        (["five.csv", "--time-limit", "nan"], "--time-limit must be a positive number"),
        (["five.csv", "--time-limit", "inf"], "--time-limit must be a positive number"),
        (["problem.json"], "unknown problem format '.json' (known: .csv"),
    ],
)
def test_errors_are_one_line_exit_1(capsys, argv, message):
    argv = [str(DATA / argv[0])] + argv[1:]
    code, out, err = run(capsys, *argv)
    assert code == 1
    assert out == ""
    assert err.startswith("relay-plan: error: ")
    assert message in err
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_unwritable_output_is_an_error(capsys, tmp_path):
    code, _, err = run(capsys, DATA / "five.csv", "-o", tmp_path / "no" / "dir" / "x.csv")
    assert code == 1
    assert "cannot write" in err


def test_loader_registry_is_pluggable(tmp_path):
    path = tmp_path / "p.toy"
    path.write_text("x 8 0 3\n")

    def toy(p):
        name, size, start, end = Path(p).read_text().split()
        return [Buffer(name, int(size), int(start), int(end))]

    LOADERS[".toy"] = toy
    try:
        assert load_problem(path) == [Buffer("x", 8, 0, 3)]
    finally:
        del LOADERS[".toy"]
    with pytest.raises(PlanError, match="unknown problem format"):
        load_problem(path)


def test_parse_pool():
    assert parse_pool("l1:0x400:64:0x2000") == Pool("l1", 1024, 64, 0x2000)
    assert parse_pool("dram:inf") == Pool("dram", None, 1, 0)
    # 0 is unbounded, as in plan-memory{pools=...} and relay-build --pools
    assert parse_pool("dram:0:64") == Pool("dram", None, 64, 0)


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_waits_a_second_then_shows_best_bound_and_gap():
    log = io.StringIO()
    progress = Progress(log)
    progress("global", 2000, 1000, 0.5)  # under a second: silent
    assert log.getvalue() == ""
    progress("global", 2000, 1000, 1.5)
    progress("global", 1500, 1000, 2.0)  # within 5 s of the last line: silent in a log
    progress("global", None, 1000, 7.0)
    progress.close()
    assert log.getvalue().splitlines() == [
        "optimal [global]: best 2,000 bytes, bound 1,000 (gap 50.00%), 1.5 s",
        "optimal [global]: no plan yet, bound 1,000 bytes, 7.0 s",
    ]


def test_progress_rewrites_one_line_on_a_terminal():
    tty = _Tty()
    progress = Progress(tty)
    progress("sram", 1024, 1024, 1.0)
    progress("sram", 1024, 1024, 1.3)
    progress.close()
    text = tty.getvalue()
    assert text.count("\r\x1b[K") == 3 and "\n" not in text
    assert "optimal [sram]: best 1,024 bytes, bound 1,024 (gap 0.00%), 1.3 s" in text
