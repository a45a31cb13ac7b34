"""xrelay's runtime: numpy kernels, the reference and memory interpreters, the arena executor.

``create(program)`` wraps an already planned program in a ``GraphModule``; ``load(graph_json,
lib_mlir, params_npz)`` reads the three files of an export back. Both are imported lazily.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY: dict[str, tuple[str, str]] = {
    "create": ("xrelay.runtime.graph_executor", "create"),
    "GraphModule": ("xrelay.runtime.graph_executor", "GraphModule"),
    "DebugModule": ("xrelay.runtime.graph_executor", "DebugModule"),
    "load": ("xrelay.runtime.graph_json", "load"),
}


def __getattr__(name: str) -> Any:
    entry = _LAZY.get(name)
    if entry is None:
        raise AttributeError(f"module 'xrelay.runtime' has no attribute '{name}'")
    return getattr(importlib.import_module(entry[0]), entry[1])
