"""xrelay: Relay on xDSL."""

from __future__ import annotations

import importlib
from typing import Any

# Lazy exports: name -> (module, attribute or None for the module itself). Importing xrelay
# stays cheap; add entries here rather than eager imports.
_LAZY: dict[str, tuple[str, str | None]] = {
    "IRModule": ("xrelay.relay.module", "IRModule"),
    "MemoryScope": ("xrelay.dialects.relay.devices", "MemoryScope"),
    "VirtualDevice": ("xrelay.dialects.relay.devices", "VirtualDevice"),
    "register_device": ("xrelay.dialects.relay.devices", "register_device"),
    "parser": ("xrelay.parser", None),
    "build": ("xrelay.backend.build", "build"),
    "contrib": ("xrelay.contrib", None),
    "cpu": ("xrelay.runtime.device", "cpu"),
    "device": ("xrelay.runtime.device", "device"),
    # TVM's namespaces and names, for scripts ported by changing imports (README)
    "TVMError": ("xrelay.error", "TVMError"),
    "error": ("xrelay.error", None),
    "instrument": ("xrelay.instrument", None),
    "ir": ("xrelay.ir", None),
    "nd": ("xrelay.nd", None),
    "runtime": ("xrelay.runtime", None),
    "target": ("xrelay.target", None),
    "te": ("xrelay.te", None),
    "testing": ("xrelay.testing", None),
    "tir": ("xrelay.tir", None),
    "transform": ("xrelay.transform", None),
    "cuda": ("xrelay.runtime.device", "cuda"),
    "gpu": ("xrelay.runtime.device", "gpu"),
    "rocm": ("xrelay.runtime.device", "rocm"),
    "opencl": ("xrelay.runtime.device", "opencl"),
    "cl": ("xrelay.runtime.device", "cl"),
    "vulkan": ("xrelay.runtime.device", "vulkan"),
    "metal": ("xrelay.runtime.device", "metal"),
    "vpi": ("xrelay.runtime.device", "vpi"),
    "ext_dev": ("xrelay.runtime.device", "ext_dev"),
    "hexagon": ("xrelay.runtime.device", "hexagon"),
    "webgpu": ("xrelay.runtime.device", "webgpu"),
    "relay": ("xrelay.relay", None),
    "run": ("xrelay.runtime.interpreter", "run"),
}


def __getattr__(name: str) -> Any:
    entry = _LAZY.get(name)
    if entry is None:
        raise AttributeError(f"module 'xrelay' has no attribute '{name}'")
    module = importlib.import_module(entry[0])
    return module if entry[1] is None else getattr(module, entry[1])


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
