"""``tvm.contrib.graph_executor`` for scripts ported from TVM.

TVM wraps the built library in a runtime module::

    lib = relay.build(mod, target="llvm", params=params)
    module = graph_executor.GraphModule(lib["default"](dev))

In xrelay ``lib["default"](dev)`` already is the runnable module, so ``GraphModule`` hands it
back (and also accepts the factory itself); ``create`` builds one from exported files.
"""

from __future__ import annotations

from typing import Any

from xrelay.runtime.device import Device, cpu

__all__ = ["Device", "GraphModule", "cpu", "create"]


def GraphModule(module: Any) -> Any:  # noqa: N802 - TVM's name for a constructor
    """The runnable module behind ``module`` (a GraphModule, or what ``relay.build`` returned)."""
    from xrelay.relay.build_module import GraphExecutorFactoryModule
    from xrelay.runtime.graph_executor import GraphModule as Runtime

    if isinstance(module, Runtime):
        return module
    if isinstance(module, GraphExecutorFactoryModule):
        return module[module.libmod_name](None)
    raise TypeError(
        f"graph_executor.GraphModule expects the module made by lib['default'](dev) or the "
        f"result of relay.build, got {type(module).__name__}"
    )


def create(graph_json_path: str, lib_mlir_path: str, params_npz_path: str) -> Any:
    """Load an exported ``(graph, lib, params)`` triple as a runnable module."""
    from xrelay.runtime.graph_json import load

    return load(graph_json_path, lib_mlir_path, params_npz_path)
