"""Devices and memory scopes: ``#relay.virtual_device<...>`` and the registry of device kinds.

A *virtual device* is Relay's ``VirtualDevice``: where a value lives and a computation runs,
as four independently optional constraints:

* ``device_type`` -- a device kind by name (``cpu``, ``cuda``, or a kind a user registered);
  its DLPack code (``kDLCPU = 1``, ``kDLCUDA = 2``, ...) is ``device_type_int``;
* ``virtual_device_id`` -- which device of that kind (``-1``: not constrained);
* ``target`` -- the compilation target (``"llvm"``, ``"c"``, ``"cuda"``; ``""``: not constrained);
* ``memory_scope`` -- a memory of that device (``"sram"``, ``"dram"``, ``"global"``; ``""``: the
  device's default scope).

```mlir
#relay.virtual_device<cpu(0)>
#relay.virtual_device<cuda(0), target = "cuda">
#relay.virtual_device<mcu(0), memory_scope = "sram">
#relay.virtual_device<cuda>          // any CUDA device
#relay.virtual_device<?>             // fully unconstrained
```

``join`` and ``default`` are Relay's ``VirtualDevice::Join`` / ``::Default``; PlanDevices unifies
with ``join`` and fills what stays free with ``default``.

Every (device, memory scope) pair is a *memory space* with its own memory pools
(``memory_space``: ``cpu0``, ``mcu0.sram``); lower-to-memory pins each buffer to the pools of
its space. The kinds known here are DLPack's; ``register_device`` adds a kind that executes on
this host with named memory scopes, each with an optional capacity and an alignment, which
become the default pools of its spaces. Only kinds marked ``runnable`` can be built here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects.builtin import IntAttr, StringAttr
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from xrelay.error import TVMError


class DeviceError(ValueError, TVMError):
    """A device or memory scope that does not exist, or an invalid registration."""


@dataclass(frozen=True)
class MemoryScope:
    """A memory of a device kind: ``size`` bytes (``None``: unbounded), aligned to ``alignment``."""

    size: int | None = None
    alignment: int = 16

    def __post_init__(self) -> None:
        if self.size is not None and (not isinstance(self.size, int) or self.size < 0):
            raise DeviceError(f"memory scope size must be a non-negative integer, got {self.size!r}")
        if not isinstance(self.alignment, int) or self.alignment < 1:
            raise DeviceError(f"memory scope alignment must be a positive integer, got {self.alignment!r}")


@dataclass(frozen=True)
class DeviceKind:
    """A kind of device: its DLPack type code, whether it executes on this host, its scopes."""

    name: str
    code: int
    runnable: bool
    memory_scopes: Mapping[str, MemoryScope] = field(default_factory=dict)
    default_scope: str = "global"

    def scope(self, name: str) -> str:
        """The canonical scope name (``""`` and ``"global"`` are the default scope)."""
        if name in ("", "global"):
            return self.default_scope
        if self.memory_scopes and name not in self.memory_scopes:
            known = ", ".join(self.memory_scopes)
            raise DeviceError(f"device '{self.name}' has no memory scope '{name}' (scopes: {known})")
        return name


# DLPack's DLDeviceType codes (dlpack.h), as TVM numbers devices in graph JSON ``device_index``.
_DLPACK = {
    "cpu": 1, "cuda": 2, "cuda_host": 3, "opencl": 4, "vulkan": 7, "metal": 8, "vpi": 9,
    "rocm": 10, "ext_dev": 12, "hexagon": 16, "webgpu": 15,
}  # fmt: skip
DEVICE_ALIASES = {"llvm": "cpu", "c": "cpu", "stackvm": "cpu", "gpu": "cuda", "nvptx": "cuda", "cl": "opencl"}
"""Other names of device kinds (target kinds and TVM's old spellings), as ``tvm.device`` takes them."""
_ALIASES = DEVICE_ALIASES

FIRST_REGISTERED_CODE = 64
"""Type codes of registered kinds start here (above DLPack's range)."""

DEVICE_KINDS: dict[str, DeviceKind] = {
    name: DeviceKind(name, code, runnable=(name == "cpu")) for name, code in _DLPACK.items()
}
"""Every known device kind by name; ``cpu`` is the only built-in kind that runs here."""


def register_device(
    name: str,
    memory_scopes: Mapping[str, MemoryScope | int | None | tuple[int | None, int]] | None = None,
    default_scope: str | None = None,
) -> DeviceKind:
    """Register a device kind that executes on this host, with its memory scopes.

    ``memory_scopes`` maps a scope name to a ``MemoryScope``, a capacity in bytes (``None`` or
    0: unbounded) or ``(capacity, alignment)``; the first scope is the default unless
    ``default_scope`` names another. Registering the same name again with the same scopes is a
    no-op; with different scopes, or a built-in name, it is an error.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise DeviceError(f"a device name must be an identifier, got {name!r}")
    scopes: dict[str, MemoryScope] = {}
    for scope, spec in (memory_scopes or {"global": MemoryScope()}).items():
        if not isinstance(scope, str) or not scope or not scope.replace("_", "a").isalnum():
            raise DeviceError(f"a memory scope name must be alphanumeric, got {scope!r}")
        if isinstance(spec, MemoryScope):
            scopes[scope] = spec
        elif isinstance(spec, tuple):
            size, align = spec
            scopes[scope] = MemoryScope(size or None, align)
        elif spec is None or isinstance(spec, int):
            scopes[scope] = MemoryScope(spec or None)
        else:
            raise DeviceError(f"memory scope '{scope}' of '{name}': expected a MemoryScope, got {spec!r}")
    default = default_scope or next(iter(scopes))
    if default not in scopes:
        raise DeviceError(f"default scope '{default}' of '{name}' is not one of {', '.join(scopes)}")
    old = DEVICE_KINDS.get(name) or DEVICE_KINDS.get(_ALIASES.get(name, ""))
    if old is not None:
        if old.code < FIRST_REGISTERED_CODE:
            raise DeviceError(f"'{name}' is a built-in device kind and cannot be registered again")
        if dict(old.memory_scopes) == scopes and old.default_scope == default:
            return old
        raise DeviceError(f"device '{name}' is already registered with other memory scopes")
    code = max(FIRST_REGISTERED_CODE - 1, *(k.code for k in DEVICE_KINDS.values())) + 1
    kind = DeviceKind(name, code, True, scopes, default)
    DEVICE_KINDS[name] = kind
    return kind


def register_device_spec(spec: str) -> DeviceKind:
    """Register a device from the tools' text form ``NAME:SCOPE=SIZE[:ALIGN],...`` (size 0:
    unbounded; alignment 16 by default; the first scope is the default scope)."""
    name, _, rest = spec.partition(":")
    scopes: dict[str, MemoryScope] = {}
    for item in filter(None, (i.strip() for i in rest.split(","))):
        scope, eq, value = item.partition("=")
        parts = value.split(":") if eq else []
        if not eq or not 1 <= len(parts) <= 2 or not all(p.isdigit() for p in parts):
            raise DeviceError(f"expected SCOPE=SIZE[:ALIGN], got '{item}'")
        scopes[scope.strip()] = MemoryScope(int(parts[0]) or None, int(parts[1]) if len(parts) > 1 else 16)
    return register_device(name.strip(), scopes or None)


def device_kind(name: str) -> DeviceKind:
    """The kind called ``name`` (aliases ``llvm``, ``c`` -> ``cpu``); an error names the known ones."""
    kind = DEVICE_KINDS.get(_ALIASES.get(name, name))
    if kind is None:
        raise DeviceError(
            f"unknown device '{name}' (known: {', '.join(DEVICE_KINDS)}; "
            "register one with xrelay.register_device or --register-device)"
        )
    return kind


def kind_by_code(code: int) -> DeviceKind:
    for kind in DEVICE_KINDS.values():
        if kind.code == code:
            return kind
    raise DeviceError(f"unknown device type code {code}")


# --------------------------------------------------------------------------------------------
# The attribute
# --------------------------------------------------------------------------------------------


@irdl_attr_definition
class VirtualDeviceAttr(ParametrizedAttribute):
    """Relay's ``VirtualDevice``; see the module docstring for the syntax."""

    name = "relay.virtual_device"

    device_kind: StringAttr
    device_id: IntAttr
    target_name: StringAttr
    scope: StringAttr

    def verify(self) -> None:
        kind = self.device_kind.data
        if kind and not kind.isidentifier():
            raise VerifyException(f"virtual device: '{kind}' is not a device name")
        if self.device_id.data < -1:
            raise VerifyException(f"virtual device: id {self.device_id.data} < -1")

    # ---- Relay's fields --------------------------------------------------------------------

    @property
    def device_type(self) -> str:
        """The device kind's name, ``""`` when not constrained."""
        return self.device_kind.data

    @property
    def device_type_int(self) -> int:
        """The DLPack type code (0 when not constrained); an unregistered kind is an error."""
        return device_kind(self.device_type).code if self.device_type else 0

    @property
    def virtual_device_id(self) -> int:
        return self.device_id.data

    @property
    def target(self) -> str:
        return self.target_name.data

    @property
    def memory_scope(self) -> str:
        return self.scope.data

    def is_fully_unconstrained(self) -> bool:
        return self == UNCONSTRAINED

    def with_memory_scope(self, scope: str) -> VirtualDeviceAttr:
        return VirtualDeviceAttr(self.device_kind, self.device_id, self.target_name, StringAttr(scope))

    @property
    def memory_space(self) -> str:
        """The memory space of this device and scope: ``cpu0``, ``mcu0.sram`` (id -1 counts as 0).

        The device kind's default scope (``""``/``"global"`` on built-in kinds) adds no suffix;
        kinds registered with scopes always name theirs.
        """
        kind = device_kind(self.device_type or "cpu")
        base = f"{kind.name}{max(self.virtual_device_id, 0)}"
        scope = kind.scope(self.memory_scope)
        return base if scope == "global" and not kind.memory_scopes else f"{base}.{scope}"

    def memory_scope_spec(self) -> MemoryScope:
        """The registered capacity and alignment of this device's scope (unbounded, 16 if none)."""
        kind = device_kind(self.device_type or "cpu")
        return kind.memory_scopes.get(kind.scope(self.memory_scope), MemoryScope())

    # ---- Relay's lattice operations ---------------------------------------------------------

    def join(self, other: VirtualDeviceAttr) -> VirtualDeviceAttr | None:
        """The least device satisfying both constraints, or None if they contradict."""
        if self == other or other == UNCONSTRAINED:
            return self
        if self == UNCONSTRAINED:
            return other
        key = (self, other)
        if key in _JOINS:
            return _JOINS[key]
        _JOINS[key] = joined = self._join(other)
        return joined

    def _join(self, other: VirtualDeviceAttr) -> VirtualDeviceAttr | None:
        fields = []
        for a, b, free in (
            (self.device_type, other.device_type, ""),
            (self.virtual_device_id, other.virtual_device_id, -1),
            (self.target, other.target, ""),
            (self.memory_scope, other.memory_scope, ""),
        ):
            if a != free and b != free and a != b:
                return None
            fields.append(a if a != free else b)
        return virtual_device(*fields)

    def default(self, other: VirtualDeviceAttr) -> VirtualDeviceAttr:
        """This device with its free fields taken from ``other``; the target and (unlike Relay,
        as a scope names a memory of one kind of device) the memory scope only if the kinds agree."""
        if self == other or other == UNCONSTRAINED:
            return self
        key = (self, other)
        if key not in _DEFAULTS:
            _DEFAULTS[key] = self._default(other)
        return _DEFAULTS[key]

    def _default(self, other: VirtualDeviceAttr) -> VirtualDeviceAttr:
        kind = self.device_type or other.device_type
        same = other.device_type == kind
        target = self.target or (other.target if same else "")
        vid = self.virtual_device_id if self.virtual_device_id >= 0 else other.virtual_device_id
        return virtual_device(kind, vid, target, self.memory_scope or (other.memory_scope if same else ""))

    # ---- syntax -----------------------------------------------------------------------------

    def text(self) -> str:
        """The body of ``#relay.virtual_device<...>``."""
        if self.is_fully_unconstrained():
            return "?"
        parts = []
        if self.device_type:
            vid = self.virtual_device_id
            parts.append(self.device_type + (f"({vid})" if vid >= 0 else ""))
        elif self.virtual_device_id >= 0:
            parts.append(f"?({self.virtual_device_id})")
        else:
            parts.append("?")
        if self.target:
            parts.append(f'target = "{self.target}"')
        if self.memory_scope:
            parts.append(f'memory_scope = "{self.memory_scope}"')
        return ", ".join(parts)

    def __str__(self) -> str:
        return f"#relay.virtual_device<{self.text()}>"

    def relay_text(self) -> str:
        """How Relay prints a VirtualDevice: ``VirtualDevice(device_type=1, virtual_device_id=0,
        memory_scope="sram")`` (unset fields left out; a registered kind by its code), which
        the Relay text parser reads back."""
        try:
            code = str(self.device_type_int)
        except DeviceError:
            code = f'"{self.device_type}"'
        parts = []
        if self.device_type:
            parts.append(f"device_type={code}")
        if self.virtual_device_id >= 0:
            parts.append(f"virtual_device_id={self.virtual_device_id}")
        if self.target:
            parts.append(f'target="{self.target}"')
        if self.memory_scope:
            parts.append(f'memory_scope="{self.memory_scope}"')
        return f"VirtualDevice({', '.join(parts)})"

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.text()}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            kind, vid = "", -1
            if parser.parse_optional_characters("?") is None:
                kind = parser.parse_identifier(" for a device name (cpu, cuda, ...) or '?'")
            if parser.parse_optional_punctuation("("):
                vid = parser.parse_integer(allow_boolean=False, allow_negative=False)
                parser.parse_punctuation(")")
            fields = {"target": "", "memory_scope": ""}
            while parser.parse_optional_punctuation(","):
                pos = parser.pos
                key = parser.parse_identifier(" ('target' or 'memory_scope')")
                if key not in fields:
                    parser.raise_error(
                        f"virtual device has no field '{key}' (fields: target, memory_scope)", pos, parser.pos
                    )
                parser.parse_punctuation("=")
                fields[key] = parser.parse_str_literal()
        return (StringAttr(kind), IntAttr(vid), StringAttr(fields["target"]), StringAttr(fields["memory_scope"]))


def virtual_device(
    device_type: str = "", virtual_device_id: int = -1, target: str = "", memory_scope: str = ""
) -> VirtualDeviceAttr:
    """A virtual device from its four fields (kind names are canonicalised: ``llvm`` -> ``cpu``)."""
    kind = _ALIASES.get(device_type, device_type)
    return VirtualDeviceAttr(StringAttr(kind), IntAttr(virtual_device_id), StringAttr(target), StringAttr(memory_scope))


def VirtualDevice(device: Any = None, target: str | None = None, memory_scope: str = "") -> VirtualDeviceAttr:  # noqa: N802
    """``tvm.target.VirtualDevice(device, target, memory_scope)``: ``device`` as for
    ``as_virtual_device`` (None: unconstrained), ``target`` a target name (``"llvm"``)."""
    vd = UNCONSTRAINED if device is None else as_virtual_device(device)
    target_name = str(target or "").split()[0] if target else ""
    return virtual_device(vd.device_type, vd.virtual_device_id, target_name, memory_scope or vd.memory_scope)


UNCONSTRAINED = VirtualDeviceAttr(StringAttr(""), IntAttr(-1), StringAttr(""), StringAttr(""))

# Memo of join/default: attributes are immutable and few, and building one is slow in xDSL.
_JOINS: dict[tuple[VirtualDeviceAttr, VirtualDeviceAttr], VirtualDeviceAttr | None] = {}
_DEFAULTS: dict[tuple[VirtualDeviceAttr, VirtualDeviceAttr], VirtualDeviceAttr] = {}


def as_virtual_device(value: Any, memory_scope: str = "") -> VirtualDeviceAttr:
    """A virtual device from what Relay's Python API accepts for one.

    ``VirtualDeviceAttr``; a device handle (anything with ``device_type`` and ``device_id``, as
    ``xrelay.cpu(0)``); a name (``"cuda"``: device 0; ``"cpu(1)"``; a target name such as
    ``"llvm"``); a DLPack type code (``2``: cuda, device 0).
    """
    if isinstance(value, VirtualDeviceAttr):
        return value.with_memory_scope(memory_scope) if memory_scope else value
    if hasattr(value, "device_type") and hasattr(value, "device_id"):
        dt = value.device_type
        name = kind_by_code(dt).name if isinstance(dt, int) else device_kind(str(dt)).name
        return virtual_device(name, int(value.device_id), "", memory_scope or getattr(value, "memory_scope", ""))
    if isinstance(value, bool):
        raise DeviceError(f"expected a device, got {value!r}")
    if isinstance(value, int):
        return virtual_device(kind_by_code(value).name, 0, "", memory_scope)
    if isinstance(value, str):
        text = value.strip()
        vid = 0
        if text.endswith(")") and "(" in text:
            text, _, num = text[:-1].partition("(")
            if not num.isdigit():
                raise DeviceError(f"bad device '{value}': expected name(id)")
            vid = int(num)
        return virtual_device(device_kind(text).name, vid, "", memory_scope)
    raise DeviceError(f"expecting a device, device name or VirtualDevice, got {type(value).__name__} {value!r}")


__all__ = [
    "DEVICE_ALIASES",
    "DEVICE_KINDS",
    "UNCONSTRAINED",
    "VirtualDevice",
    "DeviceError",
    "DeviceKind",
    "MemoryScope",
    "VirtualDeviceAttr",
    "as_virtual_device",
    "device_kind",
    "kind_by_code",
    "register_device",
    "register_device_spec",
    "virtual_device",
]
