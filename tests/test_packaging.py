"""pyproject's package list must name every package folder (a normal `pip install .` installs
only what it lists), and every folder of Python code must be a package."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIP = {"tests", "benchmarks", ".venv", ".venv-extras", "build", ".git", ".ci", "docs"}


def package_folders() -> set[str]:
    found = {"xrelay"}
    for init in ROOT.rglob("__init__.py"):
        rel = init.parent.relative_to(ROOT)
        if not rel.parts or rel.parts[0] in SKIP or any(p.startswith(".") for p in rel.parts):
            continue
        found.add(".".join(("xrelay", *rel.parts)))
    return found


def test_pyproject_lists_every_package():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    assert listed == package_folders()


def test_python_folders_are_packages():
    for py in ROOT.rglob("*.py"):
        rel = py.parent.relative_to(ROOT)
        if not rel.parts or rel.parts[0] in SKIP or any(p.startswith(".") for p in rel.parts):
            continue
        assert (py.parent / "__init__.py").exists(), f"{py.parent} has Python files but no __init__.py"
