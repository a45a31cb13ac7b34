"""``tvm.contrib.graph_executor`` for scripts ported from TVM.

TVM's forms all work::

    lib = relay.build(mod, target="llvm", params=params)
    module = graph_executor.GraphModule(lib["default"](dev))

    graph, lib, params = relay.build(mod, target="llvm", params=params)
    module = graph_executor.create(graph, lib, dev)       # graph: the JSON string
    module.set_input(**params)

``lib["default"](dev)`` already is the runnable ``xrelay.runtime.GraphModule``, so
``GraphModule`` hands it back (it also accepts the factory ``relay.build`` returned or
``load_module`` loaded). ``create`` checks that the graph JSON describes the library (the
same inputs in order, as many heads as outputs) and makes a new module with its own arenas.
Devices must be the host CPU (``xrelay.cpu(0)``); another device is an error naming it.
"""

from __future__ import annotations

import json
from typing import Any

from xrelay.runtime.device import Device, check_runnable, cpu
from xrelay.runtime.executor_factory import GraphExecutorFactoryModule
from xrelay.runtime.graph_executor import GraphModule as Runtime
from xrelay.runtime.graph_executor import GraphModuleError
from xrelay.runtime.graph_json import graph_json

__all__ = ["Device", "GraphModule", "cpu", "create", "get_device"]


def _runtime_module(module: Any) -> Any:

    if isinstance(module, Runtime):
        return module
    if isinstance(module, GraphExecutorFactoryModule):
        return module[module.libmod_name]()
    return None


class _GraphModuleType(type):
    def __instancecheck__(cls, obj: Any) -> bool:

        return isinstance(obj, Runtime)


class GraphModule(metaclass=_GraphModuleType):
    """TVM's wrapper class: ``GraphModule(module)`` is the runnable module behind ``module`` (a
    GraphModule, or what ``relay.build`` or ``load_module`` returned), and
    ``isinstance(m, graph_executor.GraphModule)`` holds for every runnable module."""

    def __new__(cls, module: Any) -> Any:
        runtime = _runtime_module(module)
        if runtime is None:
            raise TypeError(
                f"graph_executor.GraphModule expects the module made by lib['default'](dev) or "
                f"the result of relay.build, got {type(module).__name__}"
            )
        return runtime


def get_device(libmod: Any, device: Any) -> tuple[list[Device], int, list[int]]:
    """TVM's ``get_device``: the devices as a list, the number of RPC devices (always 0) and
    the flat ``[type, id, type, id, ...]`` list. Each must be the host CPU."""
    devices = [device] if isinstance(device, Device) else device
    if not isinstance(devices, list | tuple) or not all(isinstance(d, Device) for d in devices):
        raise ValueError("dev has to be the type of Device or a list of Device")
    type_id: list[int] = []
    for d in devices:
        check_runnable(d, "create a graph executor")
        type_id += [d.device_type, d.device_id]
    return list(devices), 0, type_id


def create(graph_json_str: str, libmod: Any, device: Any = None) -> Any:
    """TVM's ``create(graph_json_str, libmod, device)``: a module running the graph of
    ``graph_json_str`` with the library ``libmod`` (the ``lib`` of ``graph, lib, params =
    relay.build(...)``, the factory itself, or a loaded library)."""
    from xdsl.dialects.builtin import ModuleOp


    if not isinstance(graph_json_str, str):
        raise TypeError(f"create expects the graph JSON as a string, got {type(graph_json_str).__name__}")
    get_device(libmod, cpu(0) if device is None else device)
    try:
        doc = json.loads(graph_json_str)
    except ValueError as e:
        raise GraphModuleError(f"create: the graph is not JSON ({e})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("nodes"), list):
        raise GraphModuleError("create: the graph JSON has no 'nodes' list (not a graph executor graph)")
    runtime = _runtime_module(libmod)
    if runtime is not None:
        program, entry = runtime.program, runtime.entry
    elif isinstance(libmod, ModuleOp):
        program, entry = libmod, "main"
    else:
        raise TypeError(f"create expects the lib of relay.build, got {type(libmod).__name__}")
    expected = graph_json(program, entry)
    try:
        inputs = [doc["nodes"][i]["name"] for i in doc.get("arg_nodes", [])]
        n_heads = len(doc.get("heads", []))
    except (IndexError, KeyError, TypeError) as e:
        raise GraphModuleError(f"create: malformed graph JSON ({type(e).__name__}: {e})") from None
    want = [expected["nodes"][i]["name"] for i in expected["arg_nodes"]]
    if inputs != want or n_heads != len(expected["heads"]):
        raise GraphModuleError(
            f"create: the graph does not describe the library: inputs {inputs} vs {want}, "
            f"{n_heads} heads vs {len(expected['heads'])}"
        )
    return Runtime(program.clone(), entry=entry)
