"""Devices, as TVM scripts name them: ``tvm.cpu(0)``, ``tvm.cuda(0)``, ``tvm.device("cpu", 0)``.

Every device TVM names can be constructed (so scripts import and set up unchanged), with
TVM's DLPack type code as ``device_type`` and ``str(dev) == "cuda(0)"``. xrelay executes on
the host CPU only: building or creating a module for any other device is a ``TVMError`` that
names the device, raised there and not when the device is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xrelay.dialects.relay.devices import (
    DEVICE_ALIASES,
    DEVICE_KINDS,
    FIRST_REGISTERED_CODE,
    DeviceError,
    device_kind,
    kind_by_code,
)
from xrelay.error import TVMError

__all__ = [
    "Device",
    "DeviceUnavailableError",
    "check_runnable",
    "cl",
    "cpu",
    "cuda",
    "device",
    "ext_dev",
    "gpu",
    "hexagon",
    "metal",
    "opencl",
    "rocm",
    "vpi",
    "vulkan",
    "webgpu",
]

# DLPack's DLDeviceType codes, TVM's Device.device_type: the device kinds of the relay dialect
# (dialects/relay/devices.py), which also holds the kinds registered with register_device.
DEVICE_CODES: dict[str, int] = {
    k.name: k.code for k in DEVICE_KINDS.values() if k.code < FIRST_REGISTERED_CODE
}


class DeviceUnavailableError(TVMError, ValueError):
    """A module was built or created for a device xrelay cannot execute on."""


@dataclass(frozen=True)
class Device:
    """A device handle: DLPack ``device_type`` code and ``device_id`` (TVM's ``Device``)."""

    device_type: int = 1
    device_id: int = 0

    @property
    def name(self) -> str:
        """The device kind (``"cpu"``, ``"cuda"``, a registered kind, ...)."""
        try:
            return kind_by_code(self.device_type).name
        except DeviceError:
            return f"device{self.device_type}"

    @property
    def exist(self) -> bool:
        """Whether xrelay can execute on this device (the host CPU and registered devices)."""
        try:
            return kind_by_code(self.device_type).runnable
        except DeviceError:
            return False

    def sync(self) -> None:
        """Wait for the device (host execution is synchronous: nothing to wait for)."""

    def __str__(self) -> str:
        return f"{self.name}({self.device_id})"

    def __repr__(self) -> str:
        return str(self)


def check_runnable(dev: Any, what: str = "run a module") -> None:
    """Raise ``DeviceUnavailableError`` unless ``dev`` (a ``Device`` or None) is the host CPU."""
    if dev is None or (isinstance(dev, Device) and dev.exist):
        return
    if not isinstance(dev, Device):
        raise DeviceUnavailableError(f"expected a device such as xrelay.cpu(0), got {dev!r}")
    raise DeviceUnavailableError(
        f"cannot {what} on {dev}: xrelay executes on the host CPU only (use xrelay.cpu(0))"
    )


def device(dev_type: str | int = "cpu", dev_id: int = 0) -> Device:
    """``tvm.device("cuda", 0)``: a device by kind name (or code, or ``"cuda -arch=..."``)."""
    if isinstance(dev_type, int) and not isinstance(dev_type, bool):
        try:
            return Device(kind_by_code(dev_type).code, dev_id)
        except DeviceError:
            raise TVMError(f"unknown device type code {dev_type}") from None
    if not isinstance(dev_type, str) or not dev_type.strip():
        raise TVMError(f"unknown device {dev_type!r}")
    head = dev_type.split()[0]
    if ":" in head:  # tvm.device("cuda:1")
        head, _, sid = head.partition(":")
        dev_id = int(sid) if sid.isdigit() else dev_id
    try:
        return Device(device_kind(head).code, dev_id)
    except DeviceError:
        known = ", ".join(sorted(set(DEVICE_KINDS) | set(DEVICE_ALIASES)))
        raise TVMError(f"unknown device {dev_type!r} (known: {known})") from None


def _constructor(kind: str):
    def make(dev_id: int = 0) -> Device:
        return Device(DEVICE_CODES[kind], dev_id)

    make.__doc__ = f"``tvm.{kind}(dev_id)``: a {kind} device handle."
    return make


cpu = _constructor("cpu")
cuda = _constructor("cuda")
gpu = cuda
rocm = _constructor("rocm")
opencl = _constructor("opencl")
cl = opencl
vulkan = _constructor("vulkan")
metal = _constructor("metal")
vpi = _constructor("vpi")
ext_dev = _constructor("ext_dev")
hexagon = _constructor("hexagon")
webgpu = _constructor("webgpu")
cpu.__name__ = "cpu"
