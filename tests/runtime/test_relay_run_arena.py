"""relay-run's arena-executor options: --plan, --benchmark, --profile, --memory-report."""

from __future__ import annotations

import io

import numpy as np
import pytest

from xrelay.tools.relay_run import build_parser, execute, main

MODEL = """
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %r = relay.nn.relu %y : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %r : tensor<1x4x8x8xf32>
}
"""


@pytest.fixture
def files(tmp_path):
    path = tmp_path / "m.mlir"
    path.write_text(MODEL)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 3, 8, 8)).astype("float32")
    w = rng.standard_normal((4, 3, 3, 3)).astype("float32")
    np.save(tmp_path / "x.npy", x)
    np.savez(tmp_path / "w.npz", w=w)
    return str(path), str(tmp_path / "x.npy"), str(tmp_path / "w.npz"), tmp_path


def _exec(argv):
    out = io.StringIO()
    assert execute(build_parser().parse_args(argv), out) == 0
    return out.getvalue()


def test_plan_gives_the_interpreters_outputs(files):
    path, x, w, tmp = files
    base = [path, "--input", f"x={x}", "--params", w]
    plain = _exec([*base, "--output", str(tmp / "a.npz")])
    arena = _exec([*base, "--plan", "storage-ids", "--output", str(tmp / "b.npz")])
    assert plain.splitlines()[0].split("[")[0] == arena.splitlines()[0].split("[")[0]
    a, b = np.load(tmp / "a.npz")["output_0"], np.load(tmp / "b.npz")["output_0"]
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_benchmark_profile_report(files):
    path, x, w, _ = files
    text = _exec([path, "--input", f"x={x}", "--params", w, "--benchmark", "3", "--profile",
                  "--memory-report"])  # fmt: skip
    assert text.startswith("output 0: shape (1, 4, 8, 8) float32")
    assert "mean (ms)" in text and "plan greedy-by-size" in text
    assert "Op family" in text and "nn.conv2d" in text
    assert "Lower bound" in text


def test_errors_are_one_line(files, capsys):
    path, x, w, _ = files
    assert main([path, "--input", f"x={x}", "--params", w, "--plan", "best"]) == 1
    assert "unknown planning algorithm 'best'" in capsys.readouterr().err
    assert main([path, "--input", f"y={x}", "--params", w, "--plan", "naive"]) == 1
    assert "unknown input(s) y" in capsys.readouterr().err
    assert main([path, "--params", w, "--plan", "naive"]) == 1
    assert "no value for input(s) x" in capsys.readouterr().err
