"""relay-import picks the frontend by extension; without the optional package it says which
extra to install (one line, exit 1), whether or not the extra is installed here."""

from __future__ import annotations

import os
import subprocess
import sys


def test_pt2_without_torch_names_the_extra(tmp_path):
    # a 'torch' that cannot be imported shadows any installed one
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("raise ImportError('no torch here')\n")
    model = tmp_path / "m.pt2"
    model.write_bytes(b"PK")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    r = subprocess.run(
        [sys.executable, "-m", "xrelay.tools.relay_import", str(model)], capture_output=True, text=True, env=env
    )
    assert r.returncode == 1
    assert r.stderr == "relay-import: error: reading .pt2 needs torch: pip install 'xrelay[frontends]'\n"


def test_pt2_refuses_shape_overrides(tmp_path):
    model = tmp_path / "m.pt2"
    model.write_bytes(b"PK")
    r = subprocess.run(
        [sys.executable, "-m", "xrelay.tools.relay_import", str(model), "--shape", "x=1,2"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert r.returncode == 1 and "--shape and --dtype do not apply to a .pt2 program" in r.stderr
