"""relay-run on a module lowered to the memory dialect: run in its planned arenas once the plan
verifies, refused with one message when it does not."""

from __future__ import annotations

import re

import numpy as np
import pytest

from xrelay.tools import relay_opt, relay_run

MODEL = """func.func @main(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>) -> tensor<2x4xf32> {
  %0 = relay.nn.dense %x, %w : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %1 = relay.nn.relu %0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %2 = relay.sigmoid %1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = relay.add %2, %0 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %3 : tensor<2x4xf32>
}
"""


def _lower(tmp_path, pipeline: str) -> str:
    src, dst = tmp_path / "m.mlir", tmp_path / "lowered.mlir"
    src.write_text(MODEL)
    assert relay_opt.main([str(src), "-p", pipeline, "-o", str(dst)]) == 0
    return str(dst)


def _run(tmp_path, path: str, name: str) -> np.ndarray:
    out = tmp_path / name
    assert relay_run.main([path, "--random-inputs", "3", "--output", str(out)]) == 0
    with np.load(out) as z:
        return z["output_0"]


@pytest.mark.parametrize("pipeline", ["fuse-ops,lower-to-memory", "fuse-ops,lower-to-memory,plan-memory"])
def test_lowered_module_gives_the_relay_level_result(tmp_path, capsys, pipeline):
    (tmp_path / "m.mlir").write_text(MODEL)
    want = _run(tmp_path, str(tmp_path / "m.mlir"), "want.npz")
    got = _run(tmp_path, _lower(tmp_path, pipeline), "got.npz")
    np.testing.assert_array_equal(got, want)  # the same kernels, in or out of the arenas
    assert "output 0: shape (2, 4) float32" in capsys.readouterr().out


def _planned(tmp_path) -> tuple[str, str]:
    path = _lower(tmp_path, "fuse-ops,lower-to-memory,plan-memory")
    with open(path) as f:
        return path, f.read()


def test_an_overlapping_plan_is_refused_before_running(tmp_path, capsys):
    path, text = _planned(tmp_path)
    # every storage at offset 0: the live ones overlap
    bad = re.sub(r"offset = \d+}", "offset = 0}", text)
    assert bad != text
    with open(path, "w") as f:
        f.write(bad)
    assert relay_run.main([path, "--random-inputs", "3"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("relay-run: error: verify-memory-plan: buffers ") and "overlap in pool" in err


def test_a_pool_larger_than_memory_is_refused_before_allocating(tmp_path, capsys):
    path, text = _planned(tmp_path)
    bad = re.sub(r"(memory.pool @\w+ \{[^}]*size = )\d+", r"\g<1>99999999999999", text)
    assert bad != text
    with open(path, "w") as f:
        f.write(bad)
    assert relay_run.main([path, "--random-inputs", "3"]) == 1
    err = capsys.readouterr().err
    assert "needs 99999999999999 bytes" in err and "more than this machine's memory" in err


def test_arena_options_want_a_relay_level_module(tmp_path, capsys):
    path, _ = _planned(tmp_path)
    assert relay_run.main([path, "--random-inputs", "3", "--plan", "naive"]) == 1
    assert "already lowered to the memory dialect" in capsys.readouterr().err
