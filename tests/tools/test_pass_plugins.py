"""relay-opt --load-pass-plugin: the user guide's two example passes (docs/examples) run as
written, in both styles, and a bad plugin is one clear error."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from xrelay.runtime.interpreter import run
from xrelay.tools import relay_opt

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"

MODULE = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = relay.negative %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = relay.negative %a : (tensor<4xf32>) -> tensor<4xf32>
  %c = relay.nn.relu %b : (tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}
"""


def _opt(tmp_path, capsys, *argv: str) -> tuple[int, str, str]:
    src = tmp_path / "m.mlir"
    src.write_text(MODULE)
    code = relay_opt.main([str(src), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _run(text: str) -> np.ndarray:
    from xdsl.parser import Parser

    from xrelay.dialects import make_context

    module = Parser(make_context(), text).parse_module()
    x = np.array([-2.0, -0.5, 0.5, 3.0], np.float32)
    (y,) = run(module, {"x": x})
    return y


def test_xdsl_style_plugin(tmp_path, capsys):
    code, out, err = _opt(tmp_path, capsys, "--load-pass-plugin", str(EXAMPLES / "negate_pass.py"),
                          "-p", "fold-double-negation,dce")  # fmt: skip
    assert code == 0, err
    assert "relay.negative" not in out and "%c = relay.nn.relu %x" in out
    assert np.array_equal(_run(out), _run(MODULE))
    assert _run(out).tolist() == [0.0, 0.0, 0.5, 3.0]


def test_relay_style_plugin_runs_once_under_its_name(tmp_path, capsys):
    code, out, err = _opt(tmp_path, capsys, "--load-pass-plugin", str(EXAMPLES / "relu_to_clip_pass.py"),
                          "-p", "ReluToClip", "--pass-timing")  # fmt: skip
    assert code == 0, err
    assert "relay.clip" in out and "relay.nn.relu" not in out
    assert np.array_equal(_run(out), _run(MODULE))
    assert [line.split(":")[0] for line in err.splitlines()] == ["ReluToClip"]


def test_bad_plugins_are_one_error(tmp_path, capsys):
    raising = tmp_path / "raising.py"
    raising.write_text("raise RuntimeError('broken plugin')\n")
    empty = tmp_path / "empty.py"
    empty.write_text("X = 1\n")
    clash = tmp_path / "clash.py"
    clash.write_text(
        "from dataclasses import dataclass\nfrom xdsl.passes import ModulePass\n"
        "@dataclass(frozen=True)\nclass P(ModulePass):\n    name = 'fuse-ops'\n"
        "    def apply(self, ctx, op): pass\n"
    )
    for plugin, message in [
        (tmp_path / "missing.py", "no such file"),
        (raising, "RuntimeError: broken plugin"),
        (empty, "defines no pass"),
        (clash, "a pass named 'fuse-ops' exists already"),
    ]:
        code, _, err = _opt(tmp_path, capsys, "--load-pass-plugin", str(plugin))
        assert code == 1
        assert err.startswith(f"relay-opt: error: pass plugin '{plugin}'") and message in err
        assert "Traceback" not in err and err.count("\n") == 1
