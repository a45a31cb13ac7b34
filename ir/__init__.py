"""``tvm.ir``: ``xrelay.ir.IRModule``, ``xrelay.ir.instrument`` and ``xrelay.ir.transform``.

The same objects as ``xrelay.IRModule``, ``xrelay.instrument`` and ``xrelay.transform``,
under the names TVM scripts import them by (``from tvm.ir.instrument import
PassTimingInstrument``).
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY: dict[str, tuple[str, str | None]] = {
    "IRModule": ("xrelay.relay.module", "IRModule"),
    "instrument": ("xrelay.ir.instrument", None),
    "transform": ("xrelay.transform", None),
    "PassContext": ("xrelay.transform", "PassContext"),
    "assert_structural_equal": ("xrelay.testing.structural", "assert_structural_equal"),
    "structural_equal": ("xrelay.testing.structural", "structural_equal"),
}


def __getattr__(name: str) -> Any:
    entry = _LAZY.get(name)
    if entry is None:
        raise AttributeError(f"module 'xrelay.ir' has no attribute '{name}'")
    module = importlib.import_module(entry[0])
    return module if entry[1] is None else getattr(module, entry[1])


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
