"""Compilation targets as TVM names them: ``"llvm -mcpu=skylake -mattr=+avx2"``,
``tvm.target.Target(target, host=...)``, ``target_host=`` and dicts of targets.

xrelay compiles for the host CPU: its kernels are numpy, OpenBLAS and C compiled for this
machine. A target is accepted when it means the host CPU -- kind ``llvm`` (or xrelay's own
``cpu``/``numpy``), with any of LLVM's CPU options (``-mcpu``, ``-mattr``, ``-mtriple`` of this
machine's architecture, ``-num-cores``, ...), which are parsed, checked and recorded but do not
change the code (the kernels are already built for this CPU). ``"c"`` is the C source target
(``xrelay.backend.c``: C99 emitted from the planned program, compiled here with the system
compiler). Any other kind (``cuda``, ``opencl``, ...) is a
``TargetError`` naming it, as is an unknown option or a ``-mtriple`` for another architecture.
"""

from __future__ import annotations

import platform
import shlex
from collections.abc import Mapping
from typing import Any, ClassVar

from xrelay.error import TVMError

__all__ = ["HOST_KINDS", "Target", "TargetError", "resolve_build_target"]


class TargetError(TVMError, ValueError):
    """A target string or object xrelay cannot compile for, or a malformed one."""


HOST_KINDS = ("llvm", "cpu", "numpy")
"""Target kinds that mean the host CPU."""

# The options of TVM's llvm target kind (target_kind.cc), by value kind.
_LLVM_OPTIONS: dict[str, str] = {
    "mcpu": "str", "mtriple": "str", "mattr": "list", "mabi": "str", "mfloat-abi": "str",
    "model": "str", "device": "str", "keys": "list", "libs": "list", "tag": "str",
    "num-cores": "int", "opt-level": "int", "cl-opt": "list", "link-params": "bool",
    "fast-math": "bool", "fast-math-nnan": "bool", "fast-math-ninf": "bool",
    "fast-math-nsz": "bool", "fast-math-arcp": "bool", "fast-math-contract": "bool",
    "fast-math-reassoc": "bool", "jit": "str", "vector-width": "int", "from_device": "int",
}  # fmt: skip
_OTHER_KINDS = (
    "cuda", "nvptx", "rocm", "opencl", "vulkan", "metal", "webgpu", "hexagon", "ext_dev",
    "hybrid", "sdaccel", "aocl", "aocl_sw_emu", "stackvm", "ccompiler", "example_target_hook",
)  # fmt: skip
_ARCH_ALIASES = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}


def _host_arch() -> str:
    m = platform.machine().lower()
    return _ARCH_ALIASES.get(m, m)


def _parse_value(target: str, key: str, kind: str, text: str) -> Any:
    if kind == "list":
        return tuple(v for v in text.split(",") if v)
    if kind == "int":
        try:
            return int(text)
        except ValueError:
            raise TargetError(f"target {target!r}: -{key} expects an integer, got {text!r}") from None
    if kind == "bool":
        low = text.lower()
        if low in ("1", "true"):
            return True
        if low in ("0", "false"):
            return False
        raise TargetError(f"target {target!r}: -{key} expects true or false, got {text!r}")
    return text


class Target:
    """A parsed target: ``kind`` (``"llvm"``), ``attrs`` (``{"mcpu": "skylake", "mattr":
    ("+avx2",)}``), ``keys`` and ``host`` (a ``Target`` or None).

    ``Target("llvm -mcpu=skylake")``, ``Target("llvm", host="llvm")``, ``Target(other)``
    and ``Target({"kind": "llvm", "mcpu": "skylake"})`` are accepted. A kind xrelay cannot
    compile for is a ``TargetError`` here, naming the target.
    """

    def __init__(self, target: Any, host: Any = None):
        if isinstance(target, Target):
            self.kind, self.attrs, self.text = target.kind, dict(target.attrs), target.text
            host = host if host is not None else target.host
        elif isinstance(target, Mapping):
            self._from_dict(target)
            host = host if host is not None else target.get("host")
        elif isinstance(target, str):
            self._from_string(target)
        else:
            raise TargetError(f"a target is a string such as 'llvm -mcpu=skylake', got {target!r}")
        self.host = None if host is None else Target(host)
        if self.host is not None and self.host.host is not None:
            raise TargetError(f"the host target {host!r} cannot have a host of its own")

    # ``with Target(...)``: the innermost target entered is ``Target.current()``
    _scope: ClassVar[list[Target]] = []

    def __enter__(self) -> Target:
        Target._scope.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        Target._scope.pop()

    @staticmethod
    def current(allow_none: bool = True) -> Target | None:
        """The target of the innermost ``with Target(...)``; None (or an error when
        ``allow_none`` is False) outside one."""
        if Target._scope:
            return Target._scope[-1]
        if not allow_none:
            raise TargetError("no target is set: use `with Target(...)`")
        return None

    def _from_string(self, target: str) -> None:
        try:
            words = shlex.split(target)
        except ValueError as e:
            raise TargetError(f"cannot parse target {target!r}: {e}") from None
        if not words:
            raise TargetError("empty target string (expected e.g. 'llvm')")
        kind, attrs = words[0], {}
        self._check_kind(kind, target)
        for w in words[1:]:
            if not w.startswith("-") or w == "-":
                raise TargetError(f"target {target!r}: expected an option like -mcpu=..., got {w!r}")
            key, eq, value = w.lstrip("-").partition("=")
            if key not in _LLVM_OPTIONS:
                raise TargetError(
                    f"target {target!r}: unknown option -{key} for kind '{kind}' "
                    f"(known: {', '.join('-' + k for k in sorted(_LLVM_OPTIONS))})"
                )
            value_kind = _LLVM_OPTIONS[key]
            if not eq:
                if value_kind != "bool":
                    raise TargetError(f"target {target!r}: -{key} needs a value (-{key}=...)")
                attrs[key] = True
            else:
                attrs[key] = _parse_value(target, key, value_kind, value)
        self.kind, self.attrs, self.text = kind, attrs, target
        self._check_triple()

    def _from_dict(self, d: Mapping[str, Any]) -> None:
        kind = d.get("kind")
        if not isinstance(kind, str):
            raise TargetError(f"a target dict needs a 'kind' string, got {dict(d)!r}")
        self._check_kind(kind, kind)
        attrs = {}
        for key, value in d.items():
            if key in ("kind", "host"):
                continue
            if key not in _LLVM_OPTIONS:
                raise TargetError(f"target {dict(d)!r}: unknown option '{key}' for kind '{kind}'")
            attrs[key] = tuple(value) if isinstance(value, list) else value
        self.kind, self.attrs = kind, attrs
        self.text = " ".join([kind, *(f"-{k}={_fmt(v)}" for k, v in attrs.items())])
        self._check_triple()

    @staticmethod
    def _check_kind(kind: str, target: str) -> None:
        if kind in HOST_KINDS:
            return
        if kind == "c":
            return  # the C source target (xrelay.backend.c), compiled here with the system cc
        if kind in _OTHER_KINDS:
            raise TargetError(
                f"unsupported target {target!r}: xrelay compiles for the host CPU only, not for "
                f"'{kind}'; use 'llvm' (optionally with -mcpu/-mattr)"
            )
        raise TargetError(f"unsupported target {target!r}: unknown kind '{kind}' (xrelay compiles for 'llvm')")

    def _check_triple(self) -> None:
        triple = self.attrs.get("mtriple")
        if triple is None:
            return
        arch = _ARCH_ALIASES.get(triple.split("-")[0].lower(), triple.split("-")[0].lower())
        if arch != _host_arch():
            raise TargetError(
                f"target {self.text!r}: -mtriple={triple} is for {arch}, but xrelay runs its "
                f"kernels on this machine ({_host_arch()}); cross-compilation is not supported"
            )

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(self.attrs.get("keys", ("cpu",)))

    @property
    def mcpu(self) -> str:
        return self.attrs.get("mcpu", "")

    @property
    def mattr(self) -> tuple[str, ...]:
        return tuple(self.attrs.get("mattr", ()))

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        host = f", host={str(self.host)!r}" if self.host is not None else ""
        return f"Target({self.text!r}{host})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Target):
            return NotImplemented
        return (self.kind, self.attrs, self.host) == (other.kind, other.attrs, other.host)

    def __hash__(self) -> int:
        return hash((self.kind, tuple(sorted(self.attrs.items()))))


def _fmt(v: Any) -> str:
    return ",".join(v) if isinstance(v, tuple) else str(v).lower() if isinstance(v, bool) else str(v)


_HOST_DEVICE_KEYS = ("cpu", "llvm", 1)


def _runnable(key: Any) -> bool:
    """Whether a dict-of-targets key names a device kind that runs here (one registered with
    ``xrelay.register_device``, which executes on the host)."""
    from xrelay.dialects.relay.devices import DeviceError, as_virtual_device, device_kind

    try:
        return device_kind(as_virtual_device(key).device_type).runnable
    except DeviceError:
        return False


def resolve_build_target(target: Any, target_host: Any = None) -> Target | None:
    """The host-CPU ``Target`` that ``target`` (and ``target_host``) mean for a build, or a
    ``TargetError`` naming what cannot be built here.

    ``target`` may be None, a string, a ``Target``, or a dict of targets by device
    (``{"cpu": "llvm"}``): every entry must be a host target under a host key.
    """
    if target is None:
        return None if target_host is None else Target(target_host)
    if isinstance(target, Mapping) and "kind" not in target:
        if not target:
            raise TargetError("an empty dict of targets")
        chosen = None
        for key, value in target.items():
            key_name = getattr(key, "name", key) if not isinstance(key, str | int) else key
            t = Target(value)  # raises for a kind other than the host's
            if key_name not in _HOST_DEVICE_KEYS and key_name not in HOST_KINDS and not _runnable(key_name):
                raise TargetError(
                    f"target {{{key!r}: {value!r}}}: xrelay compiles for the host CPU only, not "
                    f"for device {key!r} (devices that run here: cpu and those registered with "
                    "xrelay.register_device)"
                )
            chosen = chosen or t
        target = chosen
    t = Target(target, host=target_host)
    return t
