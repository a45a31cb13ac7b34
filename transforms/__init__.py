"""xrelay's passes, one per file named after its CLI name (``fuse_ops.py`` is ``fuse-ops``).

``get_all_passes`` discovers them: every module here whose name is a pass's CLI name with ``-``
turned into ``_`` and that defines a ``ModulePass`` subclass with that ``name``. Each class also
carries Relay's ``PassInfo`` as class variables: ``relay_name``, ``opt_level``, ``required``.
The factories import lazily so the tools start fast.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

from xdsl.passes import ModulePass

_NOT_PASSES = {"__init__", "infra", "instrument", "analysis", "dominators", "liveness", "utils"}

UPSTREAM_PASSES = ("cse", "dce", "canonicalize")
"""xDSL passes that relay-opt also offers (the relay ops are side-effect free, so they apply)."""


def _loader(module_name: str, cli_name: str) -> Callable[[], type[ModulePass]]:
    def load() -> type[ModulePass]:
        module = importlib.import_module(f"xrelay.transforms.{module_name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, ModulePass)
                and getattr(value, "name", None) == cli_name
            ):
                return value
        raise ImportError(f"xrelay.transforms.{module_name} defines no pass named '{cli_name}'")

    return load


def _upstream(name: str) -> Callable[[], type[ModulePass]]:
    def load() -> type[ModulePass]:
        from xdsl.transforms import get_all_passes as upstream

        return upstream()[name]()

    return load


def get_xrelay_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """xrelay's own passes by CLI name."""
    passes: dict[str, Callable[[], type[ModulePass]]] = {}
    for path in sorted(Path(__file__).parent.glob("*.py")):
        stem = path.stem
        if stem in _NOT_PASSES or stem.startswith("_"):
            continue
        cli = stem.replace("_", "-")
        passes[cli] = _loader(stem, cli)
    return passes


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every pass relay-opt offers: xrelay's own plus ``cse``, ``dce`` and ``canonicalize``."""
    passes = get_xrelay_passes()
    for name in UPSTREAM_PASSES:
        passes.setdefault(name, _upstream(name))
    return passes
