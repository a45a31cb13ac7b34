"""Helpers of the extras tests (optional frontends): relay-import run as a user runs it."""

from __future__ import annotations

import subprocess
import sys


def relay_import(*args: str) -> subprocess.CompletedProcess:
    """``relay-import ARGS`` in a fresh interpreter; stdout and stderr captured as text."""
    return subprocess.run([sys.executable, "-m", "xrelay.tools.relay_import", *args], capture_output=True, text=True)


def assert_one_line_error(r: subprocess.CompletedProcess, starts: str = "relay-import: error: ") -> str:
    """Exit 1, one line on stderr beginning with ``starts``, no traceback; returns the line."""
    assert r.returncode == 1, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(starts) and "Traceback" not in r.stderr, r.stderr
    return lines[0]
