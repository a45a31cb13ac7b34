"""Import order changes nothing: every registry table is the same whichever order the package's
modules are imported in.

A table filled by decorators, or edited or wrapped by another module, depends on which module
ran first when a key is registered twice or a module reads an entry at import time (the ONNX
frontend's ``MaxPool`` was once a chain of wrappers across four files, and swapping two of them
broke 1-D pools). Each order runs in a fresh interpreter that imports every module of the
package in that order, then describes every registry it can find: a module-level dict with
string keys whose values are all callables (functions, classes) or all strings (the lazy
``"module.Class"`` tables), and module-level sets of strings. The sorted order and its reverse
put every pair of modules in both relative orders; two seeded shuffles mix them further.
"""

from __future__ import annotations

import json
import pkgutil
import random
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOT_PACKAGE = {"tests", "benchmarks", "docs", "build"}

DESCRIBE = r"""
import importlib, json, sys, types

for name in sys.argv[1:]:
    importlib.import_module(name)


def describe(v):
    if isinstance(v, str):
        return v
    return f"{getattr(v, '__module__', '?')}.{getattr(v, '__qualname__', type(v).__qualname__)}"


def is_registry(v):
    if isinstance(v, (set, frozenset)):
        return bool(v) and all(isinstance(x, str) for x in v)
    if not isinstance(v, (dict, types.MappingProxyType)) or not v:
        return False
    if not all(isinstance(k, str) for k in v):
        return False
    values = list(v.values())
    return all(isinstance(x, str) for x in values) or all(callable(x) for x in values)


tables = {}
for modname, mod in sorted(sys.modules.items()):
    if modname != "xrelay" and not modname.startswith("xrelay."):
        continue
    for attr, v in sorted(vars(mod).items()):
        if is_registry(v):
            # a table re-exported by other modules is described once, under its first name
            tables.setdefault(id(v), (f"{modname}.{attr}", v))
out = {}
for name, v in tables.values():
    if isinstance(v, (set, frozenset)):
        out[name] = sorted(v)
    else:
        out[name] = sorted((k, describe(x)) for k, x in v.items())
json.dump(out, sys.stdout, sort_keys=True)
"""


def package_modules() -> list[str]:
    """Every module of the package, found on disk without importing it (importing packages to
    list them would run their imports first, in one fixed order)."""
    out = ["xrelay"]
    todo = [(ROOT, "xrelay")]
    while todo:
        path, prefix = todo.pop()
        for info in pkgutil.iter_modules([str(path)]):
            if info.name in NOT_PACKAGE:
                continue
            out.append(f"{prefix}.{info.name}")
            if info.ispkg:
                todo.append((path / info.name, f"{prefix}.{info.name}"))
    return sorted(out)


def registries(order: list[str], name: str) -> dict[str, list]:
    """The registry tables after importing ``order`` in a fresh interpreter."""
    proc = subprocess.run(
        [sys.executable, "-c", DESCRIBE, *order], capture_output=True, text=True, cwd=ROOT, timeout=600
    )
    assert proc.returncode == 0, f"importing the modules in the {name} order failed:\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout)


def orders(modules: list[str]) -> dict[str, list[str]]:
    out = {"sorted": sorted(modules), "reversed": sorted(modules, reverse=True)}
    for seed in (1, 2):
        shuffled = list(modules)
        random.Random(seed).shuffle(shuffled)
        out[f"shuffled-{seed}"] = shuffled
    return out


def test_the_module_list_is_the_package():
    modules = package_modules()
    assert "xrelay.frontends.onnx.nn" in modules and "xrelay.frontends.onnx.registry" in modules
    assert "xrelay.transforms" in modules and "xrelay" in modules
    assert not any(".tests." in m or m.startswith("xrelay.tests") for m in modules)


@pytest.fixture(scope="module")
def baseline() -> dict[str, list]:
    return registries(orders(package_modules())["sorted"], "sorted")


def test_the_registries_are_found(baseline):
    # the tables this test must see, whatever else it finds
    assert len(dict(baseline["xrelay.frontends.onnx.registry._TABLE"])) >= 189
    assert "fuse-ops" in dict(baseline["xrelay.transforms.PASSES"])
    assert "nn.conv2d" in dict(baseline["xrelay.kernels.KERNELS"])
    assert "SequenceAt" in baseline["xrelay.frontends.onnx.registry._STRUCTURED"]


@pytest.mark.parametrize("name", ["reversed", "shuffled-1", "shuffled-2"])
def test_import_order_changes_no_registry(baseline, name):
    got = registries(orders(package_modules())[name], name)
    differ = sorted(k for k in set(baseline) | set(got) if baseline.get(k) != got.get(k))
    details = []
    for k in differ:
        a, b = baseline.get(k), got.get(k)
        if a is None or b is None:
            details.append(f"{k}: only {'after' if a is None else 'before'} the reorder")
            continue
        a, b = {tuple(x) if isinstance(x, list) else x for x in a}, {tuple(x) if isinstance(x, list) else x for x in b}
        details.append(f"{k}: sorted order only {sorted(a - b)[:5]}, {name} only {sorted(b - a)[:5]}")
    assert not differ, f"the {name} import order changes registries:\n" + "\n".join(details)
