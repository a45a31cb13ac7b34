"""relay-plan reads .mlir problems: lowered modules as they are, relay modules lowered first."""

from __future__ import annotations

from xrelay.tools.relay_plan import load_problem, main

RELAY = """
func.func @main(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %a = relay.negative %x : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %b = relay.nn.relu %a : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %c = relay.nn.softmax %b : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %c : tensor<1x4x8x8xf32>
}
"""


def test_relay_module_is_fused_and_lowered(tmp_path):
    path = tmp_path / "model.mlir"
    path.write_text(RELAY)
    buffers = load_problem(path)
    # fuse-ops groups negative+relu and leaves softmax alone: input, one intermediate, output,
    # and softmax's workspace (the maximum, then the sum, of each row of 8: 32 values).
    assert sorted(b.kind for b in buffers) == ["input", "intermediate", "output", "workspace"]
    assert [b.size for b in buffers if b.kind != "workspace"] == [1024] * 3
    assert [b.size for b in buffers if b.kind == "workspace"] == [1 * 4 * 8 * 4]


def test_cli_report_and_errors(tmp_path, capsys):
    path = tmp_path / "model.mlir"
    path.write_text(RELAY)
    assert main([str(path), "--algorithm", "greedy-by-size"]) == 0
    out = capsys.readouterr().out
    assert "ratio to lower bound 1.0000" in out
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @main() { nonsense }")
    assert main([str(bad), "--algorithm", "naive"]) == 1
    assert "bad.mlir" in capsys.readouterr().err
