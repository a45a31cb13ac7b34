"""Issue 17, item 2: every tool writes its outputs atomically and never truncates on failure."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np
import onnx
import pytest

from xrelay.testing.onnx_models import mlp
from xrelay.tools import _io, relay_import, relay_opt, relay_plan, relay_run

ADD = """\
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = relay.add %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
"""
KEEP = "// an existing file that must survive a failure\n"
PLAN_CSV = Path(__file__).parents[1] / "planning" / "data" / "five.csv"


def _leftovers(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name.endswith(".tmp")]


# -- the helper ------------------------------------------------------------------------------


def test_write_atomic_replaces_whole_file_and_keeps_mode(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("old contents, longer than the new")
    os.chmod(path, 0o640)
    _io.write_atomic(path, "new")
    assert path.read_text() == "new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    _io.write_atomic(path, b"\x00\x01")
    assert path.read_bytes() == b"\x00\x01"
    assert _leftovers(tmp_path) == []


def test_write_atomic_failure_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "f.txt"
    path.write_text(KEEP)

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_io.os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space left"):
        _io.write_atomic(path, "x" * 100)
    assert path.read_text() == KEEP
    assert _leftovers(tmp_path) == []


def test_write_atomic_writes_through_a_symlink(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    _io.write_atomic(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_write_output_names_the_file(tmp_path):
    with pytest.raises(relay_opt.ToolError, match=r"cannot write '.*/no/x.txt': No such file"):
        _io.write_output(str(tmp_path / "no" / "x.txt"), "x", relay_opt.ToolError)


# -- relay-opt -------------------------------------------------------------------------------


def test_relay_opt_in_place(tmp_path):
    path = tmp_path / "a.mlir"
    path.write_text(ADD)
    assert relay_opt.main([str(path), "-o", str(path)]) == 0
    assert "relay.add %x, %x" in path.read_text()


@pytest.mark.parametrize(
    "source, extra",
    [
        ("junk\n", []),  # parse error
        (ADD, ["-p", "fuse-ops{opt-level=x}"]),  # bad pass option
        (ADD.replace("tensor<2xf32>) -> tensor<2xf32>\n  func", "tensor<2xf32>) -> tensor<3xf32>\n  func"), []),
    ],
    ids=["parse-error", "bad-pass-option", "verify-error"],
)
def test_relay_opt_failure_keeps_existing_output(tmp_path, capsys, source, extra):
    src, out = tmp_path / "in.mlir", tmp_path / "out.mlir"
    src.write_text(source)
    out.write_text(KEEP)
    assert relay_opt.main([str(src), "-o", str(out), *extra]) == 1
    assert out.read_text() == KEEP
    assert capsys.readouterr().err  # the one-line report (its wording is tested elsewhere)


def test_relay_opt_in_place_failure_keeps_the_input(tmp_path):
    path = tmp_path / "a.mlir"
    path.write_text(ADD)
    assert relay_opt.main([str(path), "-o", str(path), "-p", "no-such-pass"]) == 1
    assert path.read_text() == ADD


def test_relay_opt_emit_params_keeps_the_name(tmp_path):
    src = tmp_path / "c.mlir"
    src.write_text(
        "func.func @main() -> tensor<2xf32> {\n"
        '  %c = relay.constant @w dense<[1.0, 2.0]> : tensor<2xf32>\n'
        "  func.return %c : tensor<2xf32>\n}\n"
    )
    out, weights = tmp_path / "o.mlir", tmp_path / "weights.bin"
    assert relay_opt.main([str(src), "-o", str(out), "--emit-params", str(weights)]) == 0
    assert not (tmp_path / "weights.bin.npz").exists()
    np.testing.assert_array_equal(np.load(weights)["w"], [1.0, 2.0])
    assert "relay.constant @w : tensor<2xf32>" in out.read_text()


# -- relay-import ----------------------------------------------------------------------------


def test_relay_import_unwritable_params_keeps_existing_output(tmp_path, capsys):
    model = tmp_path / "m.onnx"
    onnx.save(mlp(image_shape=(1, 2, 2), num_classes=2), model)
    out = tmp_path / "m.mlir"
    out.write_text(KEEP)
    bad = tmp_path / "no" / "p.npz"
    assert relay_import.main([str(model), "-o", str(out), "--params", str(bad)]) == 1
    assert out.read_text() == KEEP
    assert f"cannot write '{bad}'" in capsys.readouterr().err
    assert relay_import.main([str(model), "-o", str(out), "--params", str(tmp_path / "p.weights")]) == 0
    assert "func.func @main" in out.read_text()
    assert "fc1_weight" in np.load(tmp_path / "p.weights").files
    assert _leftovers(tmp_path) == []


# -- relay-run -------------------------------------------------------------------------------


def test_relay_run_output_keeps_the_name_given(tmp_path, capsys):
    src = tmp_path / "a.mlir"
    src.write_text(ADD)
    np.save(tmp_path / "x.npy", np.array([1.0, 2.0], "float32"))
    out = tmp_path / "result.txt"
    assert relay_run.main([str(src), "--input", f"x={tmp_path / 'x.npy'}", "--output", str(out)]) == 0
    assert not (tmp_path / "result.txt.npz").exists()
    np.testing.assert_array_equal(np.load(out)["output_0"], [2.0, 4.0])


def test_relay_run_failure_keeps_existing_output(tmp_path, capsys):
    src = tmp_path / "a.mlir"
    src.write_text(ADD)
    out = tmp_path / "out.npz"
    out.write_text(KEEP)
    assert relay_run.main([str(src), "--output", str(out)]) == 1  # input x is missing
    assert out.read_text() == KEEP


# -- relay-plan ------------------------------------------------------------------------------


def test_relay_plan_plot_and_output_any_name(tmp_path, capsys):
    plot, csv = tmp_path / "plan.txt", tmp_path / "plan.out"
    assert relay_plan.main([str(PLAN_CSV), "--plot", str(plot), "--output", str(csv)]) == 0
    assert plot.read_bytes().startswith(b"\x89PNG")
    assert csv.read_text().startswith("id,lower,upper,size,offset")
    assert _leftovers(tmp_path) == []


def test_scratch_dir_goes_when_the_process_is_stopped_with_sigterm(tmp_path):
    """A benchmark or model writer stopped by ``timeout``/a CI runner (SIGTERM) leaves no
    scratch directory behind (the default SIGTERM ends Python without unwinding)."""
    import signal
    import subprocess
    import sys

    code = (
        "import sys, time\n"
        "from xrelay.runtime.files import scratch_dir\n"
        "with scratch_dir('xrelay-test-') as d:\n"
        "    open(d + '/big', 'wb').write(b'x' * 1000)\n"
        "    print(d, flush=True)\n"
        "    time.sleep(60)\n"
    )
    env = {**__import__("os").environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    path = proc.stdout.readline().strip()
    assert path.startswith(str(tmp_path / "xrelay-test-")) and (tmp_path / path / "big").exists()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    assert list(tmp_path.iterdir()) == []
