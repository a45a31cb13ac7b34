"""The user guide's pass table (docs/_hooks/pass_table.py) lists every registered pass with its
options, as read from the registry."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from xrelay.transforms.infra import registered_pass_classes

HOOK = Path(__file__).resolve().parents[1] / "docs" / "_hooks" / "pass_table.py"


def _hook():
    spec = importlib.util.spec_from_file_location("pass_table_hook", HOOK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_pass_has_a_row_with_its_options():
    hook = _hook()
    rows = hook.pass_options_table().splitlines()[2:]
    names = [row.split("|")[1].strip().strip("`") for row in rows]
    assert names == sorted(registered_pass_classes())
    plan = next(row for row in rows if row.startswith("| `plan-memory` |"))
    assert "| PlanMemory | 0 |" in plan and "`algorithm=greedy-by-size`" in plan
    page = hook.on_page_markdown(f"before\n{hook.MARKER}\nafter")
    assert hook.MARKER not in page and "| `fuse-ops` | FuseOps |" in page
