"""Every command in the README runs: its shell blocks (with the venv's tools on PATH, as after
`source .venv/bin/activate`) and its Python blocks, each in a fresh directory, in order.

The first block is the two commands themselves: `make test` is this suite (CI runs it), and
`make demo` is `relay-demo`, run here with fewer timed pairs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BIN = Path(sys.executable).parent

BLOCKS = re.findall(r"^```(sh|python)\n(.*?)^```", README.read_text(), re.S | re.M)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def _blocks(kind: str) -> list[str]:
    return [body for k, body in BLOCKS if k == kind]


def test_readme_has_the_two_commands_first():
    first = _blocks("sh")[0]
    assert [line.split("#")[0].strip() for line in first.splitlines()] == ["make demo", "make test"]


def test_demo_command(tmp_path):
    res = subprocess.run(
        [str(BIN / "relay-demo"), "--pairs", "2"], cwd=tmp_path, env=_env(),
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    assert "Total arena size" in res.stdout and "xrelay / onnxruntime" in res.stdout


def test_shell_recipes_run_in_order(tmp_path):
    """The recipes after the two commands, in one directory (a later recipe uses the files an
    earlier one wrote, as a reader following the README does)."""
    script = "\n".join(
        b
        for b in _blocks("sh")[1:]
        if "source .venv/bin/activate" not in b and "tests/filecheck" not in b
        and not b.startswith("# PyTorch")  # needs torch: tests/extras/test_frontends_guide.py
    )  # fmt: skip
    assert "relay-import" in script and "relay-plan" in script
    res = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=_env(),
        capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    assert res.returncode == 0, (res.stdout[-2000:], res.stderr[-2000:])
    assert (tmp_path / "resnet18-plan.png").read_bytes()[:4] == b"\x89PNG"
    arena = re.search(r"Total arena size\s*\|\s*(\d+) bytes", res.stdout)
    assert arena and int(arena.group(1)) < 8 << 20  # the activations, not the 47 MB of weights
    # the C program's scores are the arena runtime's, on the same image
    import numpy as np

    from xrelay.tools import relay_run

    image = np.fromfile(tmp_path / "image.bin", np.float32).reshape(1, 3, 224, 224)
    np.save(tmp_path / "image.npy", image)
    out = tmp_path / "ref.npz"
    assert relay_run.main([str(tmp_path / "resnet18.mlir"), "--params", str(tmp_path / "resnet18.npz"),
                           "--input", f"data={tmp_path / 'image.npy'}", "--plan", "greedy-by-size",
                           "-o", str(out)]) == 0  # fmt: skip
    reference = np.load(out)["output_0"].reshape(-1)
    scores = np.fromfile(tmp_path / "scores.bin", np.float32)
    assert np.isfinite(reference).all() and reference.std() > 0
    np.testing.assert_allclose(scores, reference, rtol=1e-4, atol=1e-6)


def test_one_lit_test_command():
    (block,) = [b for b in _blocks("sh") if "tests/filecheck" in b]
    res = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block], cwd=ROOT, env=_env(),
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert res.returncode == 0, (res.stdout[-2000:], res.stderr[-2000:])
    assert "PASS: xrelay :: transforms/fuse-ops.mlir" in res.stdout


@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_python_blocks(index, tmp_path):
    res = subprocess.run(
        [sys.executable, "-c", _blocks("python")[index]], cwd=tmp_path, env=_env(),
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip()
