"""Registries are declared once, in their owner's module: no module adds to, removes from or
wraps a table it imported from another module (what made the tables depend on import order).

Every module of the package is parsed; a *foreign table* is a name bound by an import of an
xrelay module (``from xrelay.m import TABLE``, or ``m.TABLE`` through an imported xrelay
module). Writing into one -- ``TABLE[k] =``, ``del TABLE[k]``,
``TABLE.update/setdefault/append/extend/insert/pop/clear(...)``, or rebinding ``m.TABLE =`` --
is reported with its place. A table's owner offers a function where users may register (Relay's
``register_alter_op_layout`` calls ``alter_op_layout.set_rule``). Tests may patch tables
(monkeypatch). Patching xDSL or the standard library is another matter, not checked here."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIP = {"tests", "benchmarks", "docs", "build", ".venv", ".venv-extras", ".ci", ".git", "__pycache__"}

MUTATORS = {"update", "setdefault", "append", "extend", "insert", "pop", "clear", "remove", "__setitem__"}


def _foreign_writes(source: str, where: str) -> list[str]:
    tree = ast.parse(source, where)
    imported_names: set[str] = set()  # from m import TABLE
    imported_modules: set[str] = set()  # import m / from pkg import m (as alias)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("xrelay")):
            for a in node.names:
                name = a.asname or a.name
                (imported_modules if name[:1].islower() and not name.isupper() else imported_names).add(name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("xrelay"):
                    imported_modules.add((a.asname or a.name).split(".")[0])

    def foreign(expr: ast.expr) -> bool:
        if isinstance(expr, ast.Name):
            return expr.id in imported_names
        if isinstance(expr, ast.Attribute):
            root = expr
            while isinstance(root, ast.Attribute):
                root = root.value
            return isinstance(root, ast.Name) and root.id in imported_modules
        return False

    found = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for t in targets:
            if isinstance(t, ast.Subscript) and foreign(t.value):
                found.append(f"{where}:{node.lineno} writes into {ast.unparse(t.value)}")
            elif isinstance(t, ast.Attribute) and foreign(t.value) and isinstance(node, ast.Assign):
                found.append(f"{where}:{node.lineno} rebinds {ast.unparse(t)}")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in MUTATORS
            and foreign(node.func.value)
        ):
            found.append(f"{where}:{node.lineno} calls {ast.unparse(node.func)}")
    return found


def test_the_checker_sees_foreign_writes():
    src = (
        "from xrelay.runtime.native import fast_kernels as fk\n"
        "from xrelay.kernels import KERNELS\n"
        "from xrelay.kernels import nn\n"
        "import xrelay.transforms\n"
        "LOCAL = {}\n"
        "LOCAL['a'] = 1\n"
        "fk._FAST['x'] = 1\n"
        "KERNELS['y'] = 2\n"
        "nn.TABLE.update(z=3)\n"
        "xrelay.transforms.PASSES = {}\n"
        "KERNELS.get('y')\n"
    )
    found = _foreign_writes(src, "m.py")
    assert sorted(f.split(" ", 1)[0] for f in found) == ["m.py:10", "m.py:7", "m.py:8", "m.py:9"], found


def test_no_module_writes_into_another_modules_table():
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if any(part in SKIP or part.endswith(".egg-info") for part in rel.parts):
            continue
        found += _foreign_writes(path.read_text(), str(rel))
    assert not found, "tables written from outside their module:\n" + "\n".join(found)
