"""xrelay's runtime: numpy kernels, the reference and memory interpreters, the arena executor.

``create(program)`` wraps an already planned program in a ``GraphModule``; ``load(graph_json,
lib_mlir, params_npz)`` reads the three files of an export back; ``load_module(path)`` reads a
library written by ``export_library``. TVM's ``tvm.runtime`` names ``DataType``, ``Device``,
``NDArray``, ``save_param_dict``/``load_param_dict`` are here too. All are imported lazily.

This package is also TVM's ``tvm.runtime`` namespace. Reading an export back (``load``,
``load_module``, in ``executor_factory``) is run time: the archive, the program's verification,
its memory plan's check and the graph JSON's comparison with the program take no compile-time
module, so a deployed process that loads and runs an export imports nothing from
``xrelay.transforms`` or ``xrelay.backend`` (``tests/runtime/test_deployed_imports.py``); no
module of the runtime imports compile-time code (``tests/test_layers.py``).
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY: dict[str, tuple[str, str]] = {
    "create": ("xrelay.runtime.graph_executor", "create"),
    "GraphModule": ("xrelay.runtime.graph_executor", "GraphModule"),
    "DebugModule": ("xrelay.runtime.graph_executor", "DebugModule"),
    "load": ("xrelay.runtime.executor_factory", "load"),
    # TVM's tvm.runtime names
    "DataType": ("xrelay.runtime.data_type", "DataType"),
    "Device": ("xrelay.runtime.device", "Device"),
    "Module": ("xrelay.runtime.executor_factory", "GraphExecutorFactoryModule"),
    "NDArray": ("xrelay.runtime.ndarray", "NDArray"),
    "load_module": ("xrelay.runtime.executor_factory", "load_module"),
    "load_param_dict": ("xrelay.runtime.params", "load_param_dict"),
    "save_param_dict": ("xrelay.runtime.params", "save_param_dict"),
}


def __getattr__(name: str) -> Any:
    entry = _LAZY.get(name)
    if entry is None:
        raise AttributeError(f"module 'xrelay.runtime' has no attribute '{name}'")
    return getattr(importlib.import_module(entry[0]), entry[1])
