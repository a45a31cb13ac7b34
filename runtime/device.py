"""Devices, as TVM scripts name them. xrelay runs on the host CPU only."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Device:
    """A device handle (``tvm.cpu(0)``); only ``cpu`` exists."""

    device_type: str = "cpu"
    device_id: int = 0

    def __str__(self) -> str:
        return f"{self.device_type}({self.device_id})"


def cpu(dev_id: int = 0) -> Device:
    """The host CPU, ``tvm.cpu(0)``."""
    return Device("cpu", dev_id)


def device(dev_type: str = "cpu", dev_id: int = 0) -> Device:
    """``tvm.device("cpu", 0)``; any other device type is an error."""
    if dev_type not in ("cpu", "llvm"):
        raise ValueError(f"xrelay runs on the host CPU; there is no device '{dev_type}'")
    return Device("cpu", dev_id)
