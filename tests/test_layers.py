"""The import structure: no import cycles, and the top-level packages import only downward.

Every module of the package is parsed (not imported) and every ``import`` / ``from ... import``
statement counts, at any depth (inside functions too); only ``if TYPE_CHECKING:`` blocks are
left out, since they never run. Layers, lowest first::

    error -> dialects -> kernels -> runtime -> transforms -> backend
          -> relay API (and TVM's namespaces) -> frontends, testing -> tools

Run time is at the bottom of what executes: ``runtime`` (executors, interpreters, the engines'
kernels, loading an export with its checks: graph JSON, liveness, the plan) runs programs that
are already compiled, with the IR's dialects and the reference kernels only; ``transforms``
(the passes) and ``backend`` (compile time: the build driver, targets, the engines'
partitioning and C emission) sit above it. No exception: nothing in ``runtime`` imports
``transforms`` or ``backend``, at any depth.

A package may import its own layer and the layers below it. ``xrelay.relay.testing`` is
``xrelay.testing`` at tvm.relay.testing's path, so it counts as ``testing``, and
``xrelay.relay.frontend`` (``from_onnx`` at tvm.relay.frontend's path) counts as ``frontends``
(nothing in ``relay`` imports them; ``relay`` hands them out lazily by name).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOT_PACKAGE = {"tests", "benchmarks", "docs", "build", ".venv", ".venv-extras", ".ci", ".git", "__pycache__"}

LAYERS: list[set[str]] = [
    {"error"},
    {"dialects"},
    {"kernels"},
    {"runtime"},
    {"transforms"},
    {"backend"},
    # the relay API and the facades of TVM's namespaces (tvm.ir, tvm.nd, tvm.target, ...)
    {"relay", "xrelay", "contrib", "instrument", "ir", "nd", "parser", "target", "te", "tir", "topi", "transform",
     "universe"},
    {"frontends", "testing"},
    {"tools"},
]  # fmt: skip
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}

MODULE_PACKAGE = {"xrelay.relay.testing": "testing", "xrelay.relay.frontend": "frontends"}
"""Modules that belong to another package's layer than their folder's."""


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        if any(part in NOT_PACKAGE or part.endswith(".egg-info") for part in rel.parts):
            continue
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(["xrelay", *parts])] = path
    return out


MODULES = _modules()


def _resolve(name: str) -> str:
    """The module (or package) an imported name lives in."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _imports(module: str, path: Path, source: str | None = None) -> dict[str, int]:
    """Modules of the package that ``module`` imports, with the line of the first import."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: dict[str, int] = {}

    def add(target: str, line: int) -> None:
        if target.split(".")[0] == "xrelay" and target != module:
            found.setdefault(target, line)

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for stmt in child.orelse:
                    visit_one(stmt)
                continue
            visit_one(child)

    def visit_one(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(_resolve(alias.name), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                add(sub if sub in MODULES else _resolve(source), node.lineno)
        visit(node)

    visit(ast.parse(path.read_text() if source is None else source, str(path)))
    return found


GRAPH = {m: _imports(m, p) for m, p in MODULES.items()}


def _package(module: str) -> str:
    if module in MODULE_PACKAGE:
        return MODULE_PACKAGE[module]
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "xrelay"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def _edges_within(component: list[str], graph: dict[str, dict[str, int]], key=lambda m: m) -> list[str]:
    members = set(component)
    out = []
    for a in sorted(graph):
        for b, line in sorted(graph[a].items()):
            if key(a) in members and key(b) in members and key(a) != key(b):
                out.append(f"{MODULES[a].relative_to(ROOT)}:{line} imports {b}")
    return out


def test_the_parser_sees_the_package():
    assert "xrelay.relay.expr" in MODULES and "xrelay.dialects.relay.ops" in MODULES
    assert "xrelay.dialects.relay" in GRAPH["xrelay.kernels._registry"]
    # relative imports resolve; function-level imports count, TYPE_CHECKING blocks do not
    source = (
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "from .expr import Call\n"
        "if TYPE_CHECKING:\n"
        "    from xrelay.tools import demo\n"
        "def f():\n"
        "    from xrelay.backend import build\n"
    )
    probe = ROOT / "relay" / "expr.py"
    found = _imports("xrelay.relay.probe", probe, source)
    assert set(found) == {"xrelay.relay.expr", "xrelay.backend.build"}


def test_no_import_cycle_between_top_level_packages():
    packages: dict[str, set[str]] = {}
    for a, targets in GRAPH.items():
        for b in targets:
            if _package(a) != _package(b):
                packages.setdefault(_package(a), set()).add(_package(b))
    cycles = _cycles(packages)
    details = [line for c in cycles for line in _edges_within(c, GRAPH, _package)]
    assert not cycles, f"import cycles between packages {cycles}:\n" + "\n".join(details)


def test_no_import_cycle_between_modules():
    cycles = _cycles({m: set(t) for m, t in GRAPH.items()})
    details = [line for c in cycles for line in _edges_within(c, GRAPH)]
    assert not cycles, f"import cycles between modules {cycles}:\n" + "\n".join(details)


def test_packages_import_only_their_layer_and_below():
    upward = []
    for a, targets in GRAPH.items():
        for b, line in targets.items():
            pa, pb = _package(a), _package(b)
            if pa in RANK and pb in RANK and RANK[pb] > RANK[pa]:
                upward.append(f"{MODULES[a].relative_to(ROOT)}:{line} ({pa}) imports {b} ({pb})")
    assert not upward, "imports against the layers:\n" + "\n".join(upward)


@pytest.mark.parametrize(
    ("graph", "cycles"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}}, [["a", "b"], ["c", "d"]]),
    ],
)
def test_the_cycle_finder_finds_cycles(graph, cycles):
    assert sorted(_cycles(graph)) == cycles
