"""``tvm.relay.backend``: the ``Executor`` and ``Runtime`` configurations a module carries in its
``executor``/``runtime`` attributes (``mod.with_attr("executor", Executor("aot"))``).

The names and options are TVM's registry's; xrelay's build driver runs every module through its
own arena executor, so the choice is recorded and validated, not acted on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["Executor", "Runtime"]

_EXECUTOR_OPTIONS: dict[str, dict[str, type]] = {
    "graph": {"link-params": bool},
    "aot": {
        "link-params": bool,
        "unpacked-api": bool,
        "interface-api": str,
        "workspace-byte-alignment": int,
        "constant-byte-alignment": int,
    },
}
_RUNTIME_OPTIONS: dict[str, dict[str, type]] = {
    "cpp": {"system-lib": bool},
    "crt": {"system-lib": bool},
}


class _Config:
    registry_name = ""
    _registry: dict[str, dict[str, type]] = {}

    def __init__(self, name: str, options: Mapping[str, Any] | None = None) -> None:
        if name not in self._registry:
            raise ValueError(
                f"{self.registry_name} {name!r} is not registered (known: {', '.join(sorted(self._registry))})"
            )
        allowed = self._registry[name]
        attrs: dict[str, Any] = {}
        for key, value in (options or {}).items():
            if key not in allowed:
                raise ValueError(f"{self.registry_name} {name!r} has no option {key!r} (known: {', '.join(allowed)})")
            want = allowed[key]
            if want is bool and isinstance(value, int):
                value = bool(value)
            if not isinstance(value, want) or (want is int and isinstance(value, bool)):
                raise TypeError(f"{self.registry_name} {name!r} option {key!r} must be {want.__name__}, not {value!r}")
            attrs[key] = value
        self.name = name
        self._attrs = attrs

    def __contains__(self, key: str) -> bool:
        return key in self._attrs

    def __getitem__(self, key: str) -> Any:
        return self._attrs[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._attrs.get(key, default)

    @property
    def attrs(self) -> dict[str, Any]:
        return dict(self._attrs)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.name == self.name and other._attrs == self._attrs  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name, tuple(sorted(self._attrs.items()))))

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self._attrs!r})"

    @classmethod
    def list_registered(cls) -> list[str]:
        return sorted(cls._registry)

    @classmethod
    def list_registered_options(cls, name: str) -> dict[str, str]:
        return {k: t.__name__ for k, t in cls._registry[name].items()}


class Executor(_Config):
    """How a built module is executed: ``Executor("graph")`` or ``Executor("aot", {...})``."""

    registry_name = "executor"
    _registry = _EXECUTOR_OPTIONS


class Runtime(_Config):
    """The runtime a built module targets: ``Runtime("cpp")`` or ``Runtime("crt")``."""

    registry_name = "runtime"
    _registry = _RUNTIME_OPTIONS
