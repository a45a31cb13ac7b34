"""Compilation targets as TVM names them: ``"llvm -mcpu=skylake -mattr=+avx2"``,
``tvm.target.Target(target, host=...)``, ``target_host=`` and dicts of targets.

A ``Target`` is a description, independent of code generation, as in TVM: every target kind
TVM v0.19 registers (src/target/target_kind.cc) is known here with its options, their value
kinds and defaults, and its default keys -- ``Target("opencl").max_function_args`` is 128,
``Target("metal")`` 31, ``Target("cuda").max_num_threads`` 1024 -- so passes that read a target
(fuse-ops reads ``max_function_args`` of ``Target.current()``) behave for it as TVM's do.
An unknown kind or option, a malformed value, or a ``-mtriple`` for another architecture is a
``TargetError`` when the target is made.

What xrelay can *build* is narrower (``resolve_build_target``, used by ``xrelay.build`` and
the executors): the host CPU -- kind ``llvm`` (or xrelay's own ``cpu``/``numpy``), whose CPU
options are checked and recorded but do not change the code (the kernels are already built
for this CPU) -- and ``"c"``, the C source target (``xrelay.backend.c``). Building for any
other kind (``cuda``, ``opencl``, ...) is a ``TargetError`` naming it: there is no code
generator for it here.
"""

from __future__ import annotations

import platform
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from xrelay.error import TVMError
from xrelay.runtime.compile_cache import host_cpu_flags
from xrelay.transforms.infra import current_target, enter_target, exit_target

__all__ = [
    "BUILD_KINDS", "HOST_KINDS", "KINDS", "Target", "TargetError", "TargetKind", "native_float_types",
    "resolve_build_target",
]  # fmt: skip


_NATIVE_FLAGS = {"bfloat16": ("avx512_bf16", "amx_bf16"), "float16": ("avx512_fp16", "amx_fp16")}


def native_float_types() -> tuple[str, ...] | None:
    """The 16-bit float types the host CPU has arithmetic for (``mixed_precision`` that pays
    off), or None where its flags cannot be read (not Linux)."""
    flags = host_cpu_flags()
    if not flags:
        return None
    return tuple(t for t, names in _NATIVE_FLAGS.items() if flags & set(names))


class TargetError(TVMError, ValueError):
    """A target string or object that is malformed, or one xrelay cannot compile for."""


HOST_KINDS = ("llvm", "cpu", "numpy")
"""Target kinds that mean the host CPU."""

BUILD_KINDS = (*HOST_KINDS, "c")
"""Target kinds xrelay has a code generator for (``c``: C source, ``xrelay.backend.c``)."""


@dataclass(frozen=True)
class TargetKind:
    """One of TVM's target kinds: its DLPack device type, its options (name -> (value kind,
    default or None)) and its default keys."""

    name: str
    device_type: int
    options: Mapping[str, tuple[str, Any]]
    default_keys: tuple[str, ...] = ()


# DLPack device types (dlpack.h), as TVM's kinds declare them
_CPU, _CUDA, _OPENCL, _AOCL, _VULKAN, _METAL, _ROCM, _EXT_DEV, _WEBGPU, _HEXAGON = 1, 2, 4, 5, 7, 8, 10, 12, 15, 16

# Options every kind has (TVM_REGISTER_TARGET_KIND); ``host`` is the ``host=`` argument here
_COMMON = {
    "keys": ("list", None), "tag": ("str", None), "device": ("str", None), "model": ("str", None),
    "libs": ("list", None), "from_device": ("int", None), "target_device_type": ("int", None),
}  # fmt: skip
_FAST_MATH = ("fast-math", "fast-math-nnan", "fast-math-ninf", "fast-math-nsz", "fast-math-arcp",
              "fast-math-contract", "fast-math-reassoc")  # fmt: skip
# The llvm kind's options; ``link-params`` and ``vector-width`` are older TVM's, still accepted
_LLVM = {
    "mattr": ("list", None), "mcpu": ("str", None), "mtriple": ("str", None), "mfloat-abi": ("str", None),
    "mabi": ("str", None), "num-cores": ("int", None), **{k: ("bool", None) for k in _FAST_MATH},
    "opt-level": ("int", None), "cl-opt": ("list", None), "jit": ("str", None),
    "link-params": ("bool", None), "vector-width": ("int", None),
}  # fmt: skip
_GPU_LIMITS = ("max_num_threads", "max_threads_per_block", "max_shared_memory_per_block", "thread_warp_size")


def _ints(*names: str, **defaults: int) -> dict[str, tuple[str, Any]]:
    return {**{n: ("int", None) for n in names}, **{n: ("int", v) for n, v in defaults.items()}}


_VULKAN_BOOLS = (
    "supports_float16", "supports_float64", "supports_int8", "supports_int16", "supports_int64",
    "supports_8bit_buffer", "supports_16bit_buffer", "supports_storage_buffer_storage_class",
    "supports_push_descriptor", "supports_dedicated_allocation", "supports_integer_dot_product",
    "supports_cooperative_matrix",
)  # fmt: skip


def _kinds() -> dict[str, TargetKind]:
    s, lst = ("str", None), ("list", None)
    table = [
        TargetKind("llvm", _CPU, _LLVM, ("cpu",)),
        TargetKind("cpu", _CPU, _LLVM, ("cpu",)),  # xrelay's own names for the host CPU
        TargetKind("numpy", _CPU, _LLVM, ("cpu",)),
        TargetKind("c", _CPU, {"mcpu": s, "march": s, **_ints("workspace-byte-alignment", "constants-byte-alignment")},
                   ("cpu",)),
        TargetKind("cuda", _CUDA, {"mcpu": s, "arch": s, **_ints(
            "max_shared_memory_per_block", "max_threads_per_block", "registers_per_block", "l2_cache_size_bytes",
            thread_warp_size=32, max_num_threads=1024)}, ("cuda", "gpu")),
        TargetKind("nvptx", _CUDA, {"mcpu": s, "mtriple": s, **_ints(max_num_threads=1024, thread_warp_size=32)},
                   ("cuda", "gpu")),
        TargetKind("rocm", _ROCM, {"mcpu": s, "mtriple": s, "mattr": lst, **_ints(
            max_num_threads=256, max_threads_per_block=256, max_shared_memory_per_block=65536,
            thread_warp_size=64)}, ("rocm", "gpu")),
        TargetKind("opencl", _OPENCL, _ints(
            max_threads_per_block=256, max_shared_memory_per_block=16384, max_num_threads=256,
            thread_warp_size=1, texture_spatial_limit=16384, max_function_args=128), ("opencl", "gpu")),
        TargetKind("metal", _METAL, _ints(
            max_num_threads=256, max_threads_per_block=256, max_shared_memory_per_block=32768,
            thread_warp_size=16, max_function_args=31), ("metal", "gpu")),
        TargetKind("vulkan", _VULKAN, {
            "mattr": lst, **{b: ("bool", None) for b in _VULKAN_BOOLS},
            "supports_float32": ("bool", True), "supports_int32": ("bool", True),
            **_ints("supported_subgroup_operations", "max_block_size_x", "max_block_size_y", "max_block_size_z",
                    "max_push_constants_size", "max_uniform_buffer_range", "max_storage_buffer_range",
                    "max_per_stage_descriptor_storage_buffer", "max_shared_memory_per_block", "driver_version",
                    "vulkan_api_version", "max_spirv_version",
                    max_num_threads=256, max_threads_per_block=256, thread_warp_size=1),
            "device_type": s, "device_name": s, "driver_name": s}, ("vulkan", "gpu")),
        TargetKind("webgpu", _WEBGPU, _ints(max_num_threads=256), ("webgpu", "gpu")),
        TargetKind("sdaccel", _OPENCL, {}, ("sdaccel", "hls")),
        TargetKind("aocl", _AOCL, {}, ("aocl", "hls")),
        TargetKind("aocl_sw_emu", _AOCL, {}, ("aocl", "hls")),
        TargetKind("hexagon", _HEXAGON, {"mattr": lst, "mcpu": s, "mtriple": s, "llvm-options": lst,
                                         **_ints("num-cores", "vtcm-capacity")}, ("hexagon", "cpu")),
        TargetKind("stackvm", _CPU, {}, ("cpu",)),
        TargetKind("ext_dev", _EXT_DEV, {}),
        TargetKind("hybrid", _CPU, {}),
    ]  # fmt: skip
    return {k.name: TargetKind(k.name, k.device_type, {**_COMMON, **k.options}, k.default_keys) for k in table}


KINDS: dict[str, TargetKind] = _kinds()
"""Every target kind by name (TVM v0.19's, and xrelay's ``cpu``/``numpy`` for the host)."""
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


def _check_value(target: str, key: str, kind: str, value: Any) -> Any:
    """A dict target's option value, checked against the option's value kind."""
    if kind == "list":
        if isinstance(value, str):
            return _parse_value(target, key, kind, value)
        if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            return tuple(value)
    elif kind == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif kind == "bool":
        if isinstance(value, bool):
            return value
    elif isinstance(value, str):
        return value
    if isinstance(value, str):
        return _parse_value(target, key, kind, value)
    what = {"list": "a list of strings", "int": "an integer", "bool": "true or false"}.get(kind, "a string")
    raise TargetError(f"target {target!r}: option '{key}' expects {what}, got {value!r}")


def _kind_of(kind: str, target: str) -> TargetKind:
    found = KINDS.get(kind)
    if found is None:
        raise TargetError(
            f"unsupported target {target!r}: unknown kind '{kind}' (known: {', '.join(sorted(KINDS))})"
        )
    return found


class Target:
    """A parsed target: ``kind`` (``"llvm"``), ``attrs`` (``{"mcpu": "skylake", "mattr":
    ("+avx2",)}``, with the kind's defaults: ``Target("metal").attrs["max_function_args"]`` is
    31), ``keys`` and ``host`` (a ``Target`` or None).

    ``Target("llvm -mcpu=skylake")``, ``Target("cuda", host="llvm")``, ``Target(other)``
    and ``Target({"kind": "opencl", "max_function_args": 64})`` are accepted. Any kind TVM
    registers is described; building is for the host CPU and C only (``resolve_build_target``).
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

    # ``with Target(...)``: the innermost target entered is ``Target.current()`` (the stack is
    # the passes' (transforms.infra), so that a pass can read the target it runs under)

    def __enter__(self) -> Target:
        enter_target(self)
        return self

    def __exit__(self, *exc: object) -> None:
        exit_target(self)

    @staticmethod
    def current(allow_none: bool = True) -> Target | None:
        """The target of the innermost ``with Target(...)``; None (or an error when
        ``allow_none`` is False) outside one."""
        target = current_target()
        if target is None and not allow_none:
            raise TargetError("no target is set: use `with Target(...)`")
        return target

    @staticmethod
    def list_kinds() -> list[str]:
        """The names of every target kind (TVM's ``Target.list_kinds``)."""
        return sorted(KINDS)

    def _with_defaults(self, kind: TargetKind, attrs: dict[str, Any]) -> dict[str, Any]:
        defaults = {k: d for k, (_, d) in kind.options.items() if d is not None and k not in attrs}
        return {**attrs, **defaults}

    def _from_string(self, target: str) -> None:
        try:
            words = shlex.split(target)
        except ValueError as e:
            raise TargetError(f"cannot parse target {target!r}: {e}") from None
        if not words:
            raise TargetError("empty target string (expected e.g. 'llvm')")
        kind_name, attrs = words[0], {}
        kind = _kind_of(kind_name, target)
        for w in words[1:]:
            if not w.startswith("-") or w == "-":
                raise TargetError(f"target {target!r}: expected an option like -mcpu=..., got {w!r}")
            key, eq, value = w.lstrip("-").partition("=")
            if key not in kind.options:
                raise TargetError(
                    f"target {target!r}: unknown option -{key} for kind '{kind_name}' "
                    f"(known: {', '.join('-' + k for k in sorted(kind.options))})"
                )
            value_kind = kind.options[key][0]
            if not eq:
                if value_kind != "bool":
                    raise TargetError(f"target {target!r}: -{key} needs a value (-{key}=...)")
                attrs[key] = True
            else:
                attrs[key] = _parse_value(target, key, value_kind, value)
        self.kind, self.attrs, self.text = kind_name, self._with_defaults(kind, attrs), target
        self._check_triple()

    def _from_dict(self, d: Mapping[str, Any]) -> None:
        kind_name = d.get("kind")
        if not isinstance(kind_name, str):
            raise TargetError(f"a target dict needs a 'kind' string, got {dict(d)!r}")
        kind = _kind_of(kind_name, kind_name)
        attrs = {}
        for key, value in d.items():
            if key in ("kind", "host"):
                continue
            if key not in kind.options:
                raise TargetError(f"target {dict(d)!r}: unknown option '{key}' for kind '{kind_name}'")
            attrs[key] = _check_value(kind_name, key, kind.options[key][0], value)
        self.kind, self.attrs = kind_name, self._with_defaults(kind, attrs)
        self.text = " ".join([kind_name, *(f"-{k}={_fmt(v)}" for k, v in attrs.items())])
        self._check_triple()

    def _check_triple(self) -> None:
        if self.kind not in BUILD_KINDS:
            return  # a device target's triple (nvptx, rocm, hexagon) is for that device
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
        return tuple(self.attrs.get("keys", KINDS[self.kind].default_keys))

    @property
    def mcpu(self) -> str:
        return self.attrs.get("mcpu", "")

    @property
    def mattr(self) -> tuple[str, ...]:
        return tuple(self.attrs.get("mattr", ()))

    @property
    def model(self) -> str:
        return self.attrs.get("model", "unknown")

    @property
    def libs(self) -> tuple[str, ...]:
        return tuple(self.attrs.get("libs", ()))

    @property
    def max_num_threads(self) -> int:
        return int(self.attrs.get("max_num_threads", 0))

    @property
    def thread_warp_size(self) -> int:
        return int(self.attrs.get("thread_warp_size", 0))

    @property
    def max_shared_memory_per_block(self) -> int:
        return int(self.attrs.get("max_shared_memory_per_block", 0))

    @property
    def max_function_args(self) -> int:
        """The most arguments a kernel of this target may take; 0: no limit (TVM's)."""
        return int(self.attrs.get("max_function_args", 0))

    def get_target_device_type(self) -> int:
        """The DLPack device type of the target (``target_device_type``, or the kind's)."""
        return int(self.attrs.get("target_device_type", KINDS[self.kind].device_type))

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


def _buildable(t: Target) -> Target:
    """``t`` when xrelay has a code generator for its kind (and its host's), else the error."""
    for part in (t, t.host):
        if part is not None and part.kind not in BUILD_KINDS:
            raise TargetError(
                f"unsupported target {part.text!r}: no code generator for '{part.kind}' here; "
                "xrelay compiles for the host CPU only ('llvm', optionally with -mcpu/-mattr) "
                "or to C source ('c')"
            )
    return t


def resolve_build_target(target: Any, target_host: Any = None) -> Target | None:
    """The host-CPU ``Target`` that ``target`` (and ``target_host``) mean for a build, or a
    ``TargetError`` naming what cannot be built here.

    ``target`` may be None, a string, a ``Target``, or a dict of targets by device
    (``{"cpu": "llvm"}``): every entry must be a host target under a host key.
    """
    if target is None:
        return None if target_host is None else _buildable(Target(target_host))
    if isinstance(target, Mapping) and "kind" not in target:
        if not target:
            raise TargetError("an empty dict of targets")
        chosen = None
        for key, value in target.items():
            key_name = getattr(key, "name", key) if not isinstance(key, str | int) else key
            t = _buildable(Target(value))
            if key_name not in _HOST_DEVICE_KEYS and key_name not in HOST_KINDS and not _runnable(key_name):
                raise TargetError(
                    f"target {{{key!r}: {value!r}}}: xrelay compiles for the host CPU only, not "
                    f"for device {key!r} (devices that run here: cpu and those registered with "
                    "xrelay.register_device)"
                )
            chosen = chosen or t
        target = chosen
    return _buildable(Target(target, host=target_host))
