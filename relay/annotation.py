"""``relay.annotation``: annotations that steer fusion and device placement."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xrelay.dialects.relay.devices import as_virtual_device
from xrelay.relay.expr import Function
from xrelay.relay.op import _call, on_device, stop_fusion

__all__ = ["compiler_begin", "compiler_end", "function_on_device", "on_device", "stop_fusion"]


def compiler_begin(data: Any, compiler: str) -> Any:
    """Relay's ``annotation.compiler_begin``: ``data`` enters a region of ``compiler``."""
    return _call("annotation.compiler_begin", [data], compiler=compiler)


def compiler_end(data: Any, compiler: str) -> Any:
    """Relay's ``annotation.compiler_end``: ``data`` leaves a region of ``compiler``."""
    return _call("annotation.compiler_end", [data], compiler=compiler)


def function_on_device(function: Function, param_devices: Sequence[Any], result_device: Any) -> Function:
    """Relay's ``function_on_device``: pin a function's parameters and result to devices.

    The devices (as ``on_device`` takes them) become the function's
    ``relay.param_virtual_devices`` / ``relay.result_virtual_device``, which plan-devices
    treats as constraints (they are also what it writes).
    """
    if len(param_devices) != len(function.params):
        raise ValueError(
            f"function_on_device: {len(param_devices)} device(s) for {len(function.params)} parameter(s)"
        )
    return function.with_attr(
        {
            "param_virtual_devices": [as_virtual_device(d) for d in param_devices],
            "result_virtual_device": as_virtual_device(result_device),
        }
    )
