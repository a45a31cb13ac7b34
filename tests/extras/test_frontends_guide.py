"""docs/guide/frontends.md's recipes run as written: a ``.pt2`` and a ``.tflite`` file through
``relay-import``, ``relay-plan``, ``relay-run --plan`` and ``relay-build --target c``, the C
compiled and run; its scores must equal the arena runtime's on the same input."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="the 'frontends' extra is not installed (pip install -e '.[frontends]')")
pytest.importorskip("tflite", reason="the 'frontends' extra is not installed (pip install -e '.[frontends]')")

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "frontends.md"
BIN = Path(sys.executable).parent


def _recipe(title: str) -> str:
    """The shell block of the guide whose first line is ``# TITLE``."""
    for body in re.findall(r"^```sh\n(.*?)^```", GUIDE.read_text(), re.S | re.M):
        if body.startswith(f"# {title}"):
            return body
    raise AssertionError(f"no recipe '# {title}' in {GUIDE}")


def _run(script: str, cwd: Path) -> str:
    if shutil.which("cc") is None:
        pytest.fail("the recipe compiles C: no 'cc' on PATH")
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    res = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env,
                         capture_output=True, text=True, timeout=1800)  # fmt: skip
    assert res.returncode == 0, (res.stdout[-3000:], res.stderr[-3000:])
    return res.stdout


def _arena_output(tmp_path: Path, module: str, params: str, name: str, image: np.ndarray) -> np.ndarray:
    from xrelay.tools import relay_run

    np.save(tmp_path / "image.npy", image)
    out = tmp_path / "ref.npz"
    args = [str(tmp_path / module), "--params", str(tmp_path / params), "--input",
            f"{name}={tmp_path / 'image.npy'}", "--plan", "greedy-by-size", "-o", str(out)]  # fmt: skip
    assert relay_run.main(args) == 0
    return np.load(out)["output_0"].reshape(-1)


def _arena_bytes(stdout: str) -> list[int]:
    return [int(n) for n in re.findall(r"Total arena size\s*\|\s*(\d+) bytes", stdout)]


RECIPES = {
    "pt2": ("PyTorch (torch.export) -> plan -> run -> C", "resnet18", "x", (1, 3, 224, 224), np.float32, 8 << 20),
    "tflite": ("TFLite (int8) -> plan -> run -> C", "mnv2", "serving_default_keras_tensor.0", (1, 64, 64, 3), np.int8, 1 << 20),
}
"""Recipe -> (its first line, the module's file stem, its input, the input's shape and dtype,
most arena bytes: the activations only, never the weights)."""


@pytest.mark.parametrize("recipe", list(RECIPES))
def test_recipe(recipe, tmp_path):
    title, stem, name, shape, dtype, most = RECIPES[recipe]
    stdout = _run(_recipe(title), tmp_path)
    # relay-plan's arena is the one relay-run --plan allocates
    plan, run = _arena_bytes(stdout)
    assert plan == run and 0 < plan < most
    image = np.fromfile(tmp_path / "image.bin", dtype).reshape(shape)
    reference = _arena_output(tmp_path, f"{stem}.mlir", f"{stem}.npz", name, image)
    scores = np.fromfile(tmp_path / "scores.bin", dtype)
    assert reference.dtype == dtype and np.isfinite(reference).all() and len(set(reference.tolist())) > 1
    if dtype == np.int8:
        np.testing.assert_array_equal(scores, reference)
    else:
        np.testing.assert_allclose(scores, reference, rtol=1e-4, atol=1e-4 * float(np.abs(reference).max()))


def test_the_readme_shows_the_guides_pytorch_recipe():
    """The README's PyTorch recipe (not run by ``make test``: it needs torch) is the start of
    the guide's, which the test above runs: every line of it is a line of the guide's."""
    readme = GUIDE.parents[2] / "README.md"
    title = RECIPES["pt2"][0]
    blocks = [b for b in re.findall(r"^```sh\n(.*?)^```", readme.read_text(), re.S | re.M) if b.startswith(f"# {title}")]
    assert len(blocks) == 1, f"README.md has {len(blocks)} '# {title}' recipes"
    guide = _recipe(title).splitlines()
    lines = blocks[0].splitlines()
    assert len(lines) >= 5 and lines == guide[: len(lines)], (lines, guide)
