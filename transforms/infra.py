"""
Relay's pass infrastructure on top of xDSL module passes.

Every xrelay pass is an xDSL `ModulePass` that also carries Relay's pass metadata as
class variables::

    @dataclass(frozen=True)
    class FuseOpsPass(ModulePass):
        name = "fuse-ops"                                    # CLI name
        relay_name: ClassVar[str] = "FuseOps"                # Relay's PassInfo name
        opt_level: ClassVar[int] = 0                         # Relay's PassInfo opt_level
        required: ClassVar[tuple[str, ...]] = ("InferType",)  # Relay names

A pass whose own option is named `opt_level` (`fuse-ops{opt-level=0}`) declares Relay's level
as `relay_opt_level: ClassVar[int]` instead, which takes precedence.

A pass without these class variables (xDSL's own `cse`, `dce`, `canonicalize`) is named
by its CLI name, has opt_level 0 and requires nothing. A composite pass (Relay's
`FoldScaleAxis`) additionally declares `sequence: ClassVar[tuple[str, ...]]`, the CLI
names of its parts; the infrastructure runs it as a nested `Sequential` named after
the composite, so instruments and timing see the nesting as in Relay.

This module mirrors `tvm.transform`: `PassContext` (opt level, required and disabled
passes, instruments, configuration), `PassInfo`, `Pass` (a callable on a module) and
`Sequential`, with Relay's semantics (see `docs/relay-semantics.md` §1 and §6). Relay's
passes are functional: `new = pass_(mod)` leaves `mod` unchanged. xDSL's passes rewrite a
module in place, so a pass called on a module it does not own rewrites a copy and returns
it; the copies made while a pass runs are owned until it returns, so a `Sequential` copies
its input once. A pass made by `module_pass` gets the module it is called on (Relay hands a
module pass's function the module itself: `module_pass(f)(m)` may return `m`). A driver that
owns its module runs passes on it in place inside `with in_place(module):` (`xrelay.build`
on its clone, relay-opt). The config `testing.immutable_module=True` copies for every pass,
module passes included.

A "module" is either an xDSL `ModuleOp` or an object with a `.module` attribute holding
one (`xrelay.relay.IRModule`). Instruments receive that object unchanged.
"""

from __future__ import annotations

import copy
import gc
import logging
import threading
import traceback
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass

from xrelay.dialects import module_op
from xrelay.dialects.relay import FUNC_ATTRS
from xrelay.error import TVMError

__all__ = [
    "BUILD_PIPELINE_PASSES",
    "ModulePassAdapter",
    "Pass",
    "PassContext",
    "PassInfo",
    "PassInstrument",
    "PassLookupError",
    "Sequential",
    "as_pass",
    "build_alter_op_layout",
    "build_pipeline",
    "current_target",
    "current_target_attr",
    "enter_target",
    "exit_target",
    "get_pass",
    "get_pass_class",
    "get_xdsl_context",
    "has_pass",
    "in_place",
    "module_op",
    "module_pass",
    "override_pass_registry",
    "pass_info_of",
    "pass_instrument",
    "register_config",
    "registered_pass_classes",
    "relay_name_of",
]

_logger = logging.getLogger(__name__)

ModuleT = TypeVar("ModuleT")
_T = TypeVar("_T", bound=type)

PassRegistry = Mapping[str, Callable[[], type[ModulePass]]]


# --------------------------------------------------------------------------------------
# Modules and xDSL contexts
# --------------------------------------------------------------------------------------


def _copy_module(mod: ModuleT) -> ModuleT:
    """A copy of `mod` whose ModuleOp can be rewritten without touching `mod`: the xDSL module
    is cloned; an IRModule-like holder is copied with its own dicts and sets (the objects in
    them, GlobalVars included, are shared, as a Relay pass's result shares them)."""
    old = module_op(mod)
    clone = old.clone()
    # a function built in Python and not yet type-inferred stays so in the copy (printing)
    mark_types_unknown(c for o, c in zip(old.ops, clone.ops) if o in _UNTYPED_FUNCS)
    if isinstance(mod, ModuleOp):
        return clone  # type: ignore[return-value]
    new = copy.copy(mod)
    for key, value in vars(mod).items():
        if isinstance(value, dict | set | list):
            setattr(new, key, copy.copy(value))
    new.module = clone  # type: ignore[attr-defined]
    return new


_owned = threading.local()


def _owned_modules() -> list[ModuleOp]:
    stack = getattr(_owned, "modules", None)
    if stack is None:
        stack = _owned.modules = []
    return stack


def _is_owned(mod: Any) -> bool:
    op = module_op(mod)
    return any(m is op for m in _owned_modules())


@contextmanager
def in_place(mod: Any) -> Iterator[Any]:
    """Let the passes called inside rewrite `mod` in place.

    A pass called on a module leaves that module unchanged, as Relay's do: its rewrites go to a
    copy, which it returns. A driver that owns its module (``xrelay.build`` clones the user's
    once, then runs a whole pipeline on the clone) wraps the calls in ``with in_place(module):``
    so no pass copies it again. The copies passes make are owned the same way while the
    outermost pass runs, so a Sequential copies its input once, not once per pass."""
    stack = _owned_modules()
    stack.append(module_op(mod))
    try:
        yield mod
    finally:
        stack.pop()


_default_xdsl_context: Context | None = None


def _make_default_xdsl_context() -> Context:
    """The xrelay context, or the upstream dialects xrelay builds on if it is missing."""
    try:
        from xrelay.dialects import make_context  # type: ignore[attr-defined]
    except ImportError:
        make_context = None
    if make_context is not None:
        return make_context()
    from xdsl.dialects.arith import Arith
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func
    from xdsl.dialects.test import Test

    ctx = Context()
    for dialect in (Builtin, Func, Arith, Test):
        ctx.load_dialect(dialect)
    return ctx


def get_xdsl_context() -> Context:
    """
    The xDSL `Context` handed to `ModulePass.apply`.

    It is the `xdsl_context` of the current `PassContext` if one was given (relay-opt
    passes its own), otherwise one shared context with the xrelay dialects loaded.
    """
    ctx = PassContext.current().xdsl_context
    if ctx is not None:
        return ctx
    global _default_xdsl_context
    if _default_xdsl_context is None:
        _default_xdsl_context = _make_default_xdsl_context()
    return _default_xdsl_context


# --------------------------------------------------------------------------------------
# Pass registry
# --------------------------------------------------------------------------------------


class PassLookupError(LookupError, TVMError):
    """Raised when a pass name is neither a registered CLI name nor a Relay name."""


def _xrelay_registry() -> PassRegistry:
    try:
        from xrelay.transforms import get_all_passes  # type: ignore[attr-defined]
    except ImportError:
        return {}
    return get_all_passes()


_registry_provider: Callable[[], PassRegistry] = _xrelay_registry
# Relay name -> CLI name, filled while scanning the registry (revalidated on use).
_relay_to_cli: dict[str, str] = {}


@contextmanager
def override_pass_registry(
    registry: PassRegistry | Callable[[], PassRegistry],
) -> Iterator[None]:
    """
    Use another pass registry (a mapping CLI name -> class factory, or a function
    returning one) inside the `with` block; meant for tests.
    """
    global _registry_provider
    provider = registry if callable(registry) else (lambda: registry)
    saved_provider, saved_cache = _registry_provider, dict(_relay_to_cli)
    _registry_provider = provider  # type: ignore[assignment]
    _relay_to_cli.clear()
    try:
        yield
    finally:
        _registry_provider = saved_provider
        _relay_to_cli.clear()
        _relay_to_cli.update(saved_cache)


def relay_name_of(cls: type[ModulePass]) -> str:
    """Relay's name of a pass class; its CLI name when it has no `relay_name`."""
    return getattr(cls, "relay_name", None) or cls.name


def get_pass_class(name: str) -> type[ModulePass]:
    """
    Look up a pass class by CLI name (`fuse-ops`) or Relay name (`FuseOps`).

    Raises `PassLookupError` listing the known names when there is no such pass.
    """
    registry = _registry_provider()
    if name in registry:
        return registry[name]()
    cli = _relay_to_cli.get(name)
    if cli is not None and cli in registry:
        cls = registry[cli]()
        if relay_name_of(cls) == name:
            return cls
    # Scan every pass; a module that fails to import must not hide the others.
    broken: list[str] = []
    found: type[ModulePass] | None = None
    for cli_name, factory in registry.items():
        try:
            cls = factory()
        except Exception as exc:
            broken.append(f"{cli_name} ({type(exc).__name__}: {exc})")
            continue
        _relay_to_cli[relay_name_of(cls)] = cli_name
        if found is None and relay_name_of(cls) == name:
            found = cls
    if found is not None:
        return found
    known = sorted(set(registry) | {r for r, c in _relay_to_cli.items() if c in registry})
    message = f"unknown pass '{name}'; known passes: {', '.join(known) or '(none)'}"
    if broken:
        message += f"; passes that failed to load: {'; '.join(broken)}"
    raise PassLookupError(message)


def has_pass(name: str) -> bool:
    """Whether `name` (CLI or Relay name) names a registered pass."""
    try:
        get_pass_class(name)
    except PassLookupError:
        return False
    return True


def registered_pass_classes() -> dict[str, type[ModulePass]]:
    """CLI name -> class of every registered pass (passes that fail to load left out)."""
    classes: dict[str, type[ModulePass]] = {}
    for cli_name, factory in _registry_provider().items():
        try:
            classes[cli_name] = factory()
        except Exception:
            continue
    return classes


def _canonical_name(name: str) -> str:
    """The Relay name for a CLI name of a registered pass; any other name unchanged."""
    registry = _registry_provider()
    if name in registry:
        try:
            return relay_name_of(registry[name]())
        except Exception:
            return name
    return name


def get_pass(name: str) -> Pass:
    """A `Pass` with default options for the pass named `name` (CLI or Relay name)."""
    return as_pass(get_pass_class(name)())


# --------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _ConfigOption:
    key: str
    type: type
    default: Any


_config_registry: dict[str, _ConfigOption] = {}
_MISSING: Any = object()


_TVM_TYPE_NAMES: dict[type, str] = {
    bool: "IntImm",
    int: "IntImm",
    float: "FloatImm",
    str: "runtime.String",
    list: "Array",
    tuple: "Array",
    dict: "Map",
}
"""How TVM's ``PassContext.list_configs`` names a config option's type."""


def register_config(key: str, value_type: type, default: Any = None) -> None:
    """
    Declare a `PassContext` config option `key` holding values of `value_type`.

    Registering a key again replaces the declaration (so modules can be reloaded).
    """
    if not isinstance(value_type, type):
        raise TypeError(f"config option '{key}': type must be a class, got {value_type!r}")
    _config_registry[key] = _ConfigOption(key, value_type, default)


def _check_config_value(key: str, value: Any) -> Any:
    if key not in _config_registry:
        raise AttributeError(
            f"Invalid config option '{key}' candidates are: {', '.join(sorted(_config_registry))}"
        )
    option = _config_registry[key]
    expected = option.type
    # Relay converts integers to Bool and Integer options; accept what it accepts.
    if expected is bool and isinstance(value, int) and value in (0, 1):
        return bool(value)
    if expected is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if expected is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if expected not in (bool, int, float) and isinstance(value, expected):
        return value
    raise TypeError(
        f"config option '{key}' expects a value of type {expected.__name__}, "
        f"got {value!r} of type {type(value).__name__}"
    )


register_config("relay.FuseOps.max_depth", int, 256)
register_config("relay.FuseOps.link_params", bool, False)
register_config("relay.fallback_device_type", int, 1)
register_config("relay.ToMixedPrecision.keep_orig_output_dtype", bool, False)
register_config("relay.backend.use_auto_scheduler", bool, False)
register_config("relay.ChooseScratch.priority", str, "balanced")
register_config("relay.ChooseScratch.budget", int, 0)
register_config("testing.immutable_module", bool, False)


# --------------------------------------------------------------------------------------
# PassInfo and PassContext
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PassInfo:
    """Relay's pass metadata: optimization level, name and the passes it requires."""

    opt_level: int
    name: str
    required: tuple[str, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "required", tuple(self.required))

    def __str__(self) -> str:
        return (
            f"The meta data of the pass - pass name: {self.name}, opt_level: "
            f"{self.opt_level}, required passes: [{', '.join(self.required)}]"
        )


def pass_info_of(cls: type[ModulePass]) -> PassInfo:
    """The `PassInfo` of a pass class, from its class variables (see the module doc)."""
    # A pass whose own option is called opt_level (fuse-ops{opt-level=0}) declares Relay's
    # level as `relay_opt_level` instead, since one class attribute cannot be both.
    level = getattr(cls, "relay_opt_level", None)
    if level is None:
        level = getattr(cls, "opt_level", 0)
    return PassInfo(level, relay_name_of(cls), tuple(getattr(cls, "required", ())))


class _ContextStack(threading.local):
    """Per-thread stack of entered contexts above a per-thread default context."""

    def __init__(self):
        self.stack: list[PassContext] = []
        self.default: PassContext | None = None


_contexts = _ContextStack()


class _TargetStack(threading.local):
    """Per-thread stack of entered targets (``with tvm.target.Target(...)``): the passes read
    the current one (fuse-ops its ``max_function_args``); the ``Target`` class is compile
    time's (backend.target), which this layer does not import."""

    def __init__(self):
        self.stack: list[Any] = []


_targets = _TargetStack()


def enter_target(target: Any) -> None:
    """Make ``target`` the current target (``Target.__enter__``)."""
    _targets.stack.append(target)


def exit_target(target: Any) -> None:
    """Leave the innermost target, which must be ``target`` (``Target.__exit__``)."""
    if not _targets.stack or _targets.stack[-1] is not target:
        raise RuntimeError(f"leaving target {target!r}, which is not the innermost one entered")
    _targets.stack.pop()


def current_target() -> Any:
    """The innermost entered target (a ``backend.target.Target``), or None."""
    return _targets.stack[-1] if _targets.stack else None


def current_target_attr(name: str, default: Any = None) -> Any:
    """An attribute of the current target (``attrs[name]``), ``default`` without a target or
    when the target does not set it."""
    target = current_target()
    return default if target is None else target.attrs.get(name, default)


class PassInstrument:
    """Base class of instruments; every hook does nothing and `should_run` says yes."""

    @property
    def name(self) -> str:
        """The instrument's name (its class name)."""
        return type(self).__name__

    def enter_pass_ctx(self) -> None:
        """Called when the PassContext holding this instrument is entered."""

    def exit_pass_ctx(self) -> None:
        """Called when the PassContext holding this instrument is left."""

    def should_run(self, mod: Any, info: PassInfo) -> bool:
        """Whether the pass described by `info` should run on `mod`."""
        return True

    def run_before_pass(self, mod: Any, info: PassInfo) -> None:
        """Called before a pass runs."""

    def run_after_pass(self, mod: Any, info: PassInfo) -> None:
        """Called after a pass ran (not if it raised)."""


def pass_instrument(pi_cls: _T | None = None) -> Any:
    """
    Class decorator making a class an instrument, as `tvm.instrument.pass_instrument`:
    the result is a subclass of it and `PassInstrument`, so methods it lacks get the
    defaults. Usable as `@pass_instrument` and `@pass_instrument()`.
    """

    def wrap(cls: _T) -> _T:
        if not isinstance(cls, type):
            raise TypeError(f"@pass_instrument decorates classes, got {cls!r}")
        if issubclass(cls, PassInstrument):
            return cls
        namespace = {
            "__module__": cls.__module__,
            "__qualname__": cls.__qualname__,
            "__doc__": cls.__doc__,
        }
        return type(cls.__name__, (cls, PassInstrument), namespace)  # type: ignore[return-value]

    if pi_cls is None:
        return wrap
    return wrap(pi_cls)


class PassContext:
    """
    The settings passes run under, as `tvm.transform.PassContext`.

    Use it as a context manager; `PassContext.current()` is the innermost entered one
    (a default context with opt_level 2 exists per thread).

    * `opt_level`: inside a `Sequential`, a pass runs only when
      `ctx.opt_level >= pass.opt_level` or it is in `required_pass`, and it is not in
      `disabled_pass` (names may be CLI or Relay names).
    * `instruments`: `PassInstrument`s called around every pass; entering the context
      calls their `enter_pass_ctx`, leaving it their `exit_pass_ctx`, with Relay's
      rules on failure (docs/relay-semantics.md §6.2): a failing enter exits the already entered ones in
      reverse order, clears the list and propagates without entering the context; a
      failing exit propagates at once, leaves the rest un-exited and clears the list.
    * `config`: options declared with `register_config`; an unknown key raises
      `AttributeError`, a value of the wrong type `TypeError`.
    * `xdsl_context`: the xDSL `Context` for `ModulePass.apply` (default: one with the
      xrelay dialects, see `get_xdsl_context`).
    """

    def __init__(
        self,
        opt_level: int = 2,
        required_pass: Iterable[str] = (),
        disabled_pass: Iterable[str] = (),
        instruments: Iterable[PassInstrument] = (),
        config: Mapping[str, Any] | None = None,
        *,
        xdsl_context: Context | None = None,
    ):
        if not isinstance(opt_level, int) or isinstance(opt_level, bool):
            raise TypeError(f"opt_level must be an int, got {opt_level!r}")
        for names, what in ((required_pass, "required_pass"), (disabled_pass, "disabled_pass")):
            if isinstance(names, str):
                raise TypeError(f"{what} must be a list of pass names, not a string")
        self.opt_level = opt_level
        self.required_pass = tuple(required_pass)
        self.disabled_pass = tuple(disabled_pass)
        self._required = frozenset(_canonical_name(n) for n in self.required_pass)
        self._disabled = frozenset(_canonical_name(n) for n in self.disabled_pass)
        instruments = list(instruments)
        for instrument in instruments:
            if not isinstance(instrument, PassInstrument):
                raise TypeError(
                    f"{instrument!r} is not a PassInstrument; subclass PassInstrument "
                    "or decorate its class with @pass_instrument"
                )
        self._instruments: list[PassInstrument] = instruments
        self._borrowed = False  # instruments shared with the context this one was nested in
        self._config = {key: _check_config_value(key, v) for key, v in (config or {}).items()}
        self.xdsl_context = xdsl_context

    # ---- accessors -----------------------------------------------------------------

    @property
    def instruments(self) -> tuple[PassInstrument, ...]:
        """The installed instruments, in call order."""
        return tuple(self._instruments)

    @property
    def config(self) -> Mapping[str, Any]:
        """The options set explicitly on this context (read-only)."""
        return MappingProxyType(self._config)

    def get_config(self, key: str, default: Any = _MISSING) -> Any:
        """The value of config option `key`: as set here, else `default` if given, else
        the registered default. An unknown key raises `AttributeError`."""
        if key not in _config_registry:
            _check_config_value(key, None)  # raises the "Invalid config option" error
        if key in self._config:
            return self._config[key]
        return _config_registry[key].default if default is _MISSING else default

    @staticmethod
    def list_configs() -> dict[str, dict[str, Any]]:
        """Every registered config option: `{key: {"type": name, "default": value}}`, the type
        named as TVM's reflection names it (bool and int are `IntImm`, str `runtime.String`)."""
        return {
            key: {"type": _TVM_TYPE_NAMES.get(opt.type, opt.type.__name__), "default": opt.default}
            for key, opt in sorted(_config_registry.items())
        }

    @staticmethod
    def current() -> PassContext:
        """The innermost entered context, or this thread's default context."""
        if _contexts.stack:
            return _contexts.stack[-1]
        if _contexts.default is None:
            _contexts.default = PassContext()
        return _contexts.default

    def pass_enabled(self, info: PassInfo) -> bool:
        """Relay's `PassEnabled`: not disabled, and required or within the opt level."""
        if info.name in self._disabled:
            return False
        return info.name in self._required or self.opt_level >= info.opt_level

    def is_required(self, info: PassInfo) -> bool:
        """Whether the pass is in this context's `required_pass`."""
        return info.name in self._required

    def __repr__(self) -> str:
        return (
            f"PassContext(opt_level={self.opt_level}, required_pass={list(self.required_pass)}, "
            f"disabled_pass={list(self.disabled_pass)}, instruments={self._instruments}, "
            f"config={self._config})"
        )

    # ---- scope and instruments -----------------------------------------------------

    def nested(self, **changes: Any) -> PassContext:
        """A context with this one's settings changed by ``changes`` (``opt_level``,
        ``required_pass``, ``disabled_pass``, ``config``; the lists default to empty, the
        config to this one's) that shares this context's instruments without entering or
        exiting them again: a build's inner contexts, so that the user's instruments see the
        passes the build runs, as Relay's build runs them in the user's context."""
        new = PassContext(
            opt_level=changes.pop("opt_level", self.opt_level),
            required_pass=changes.pop("required_pass", ()),
            disabled_pass=changes.pop("disabled_pass", ()),
            config=changes.pop("config", self._config),
            xdsl_context=self.xdsl_context,
        )
        if changes:
            raise TypeError(f"PassContext.nested() got unexpected arguments {sorted(changes)}")
        new._instruments = self._instruments
        new._borrowed = True
        return new

    def __enter__(self) -> PassContext:
        if not self._borrowed:
            self._enter_instruments()
        _contexts.stack.append(self)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if not _contexts.stack or _contexts.stack[-1] is not self:
            raise RuntimeError("PassContext exited out of order")
        _contexts.stack.pop()
        if not self._borrowed:
            self._exit_instruments()

    def override_instruments(self, instruments: Iterable[PassInstrument] | None) -> None:
        """
        Replace the instruments: exit the current ones, install `instruments` (None: none),
        enter them. A failure follows the enter/exit rules above (the list ends up empty).
        """
        new = list(instruments or ())
        for instrument in new:
            if not isinstance(instrument, PassInstrument):
                raise TypeError(f"{instrument!r} is not a PassInstrument")
        self._exit_instruments()
        self._instruments = new
        self._enter_instruments()

    def _enter_instruments(self) -> None:
        entered: list[PassInstrument] = []
        try:
            for instrument in self._instruments:
                instrument.enter_pass_ctx()
                entered.append(instrument)
        except BaseException as e:
            _with_traceback_message(e)
            _logger.warning(
                "Pass instrumentation entering pass context failed; disabling pass instrumentation."
            )
            for instrument in reversed(entered):
                try:
                    instrument.exit_pass_ctx()
                except Exception:
                    # Relay's clean-up runs in destructors; keep the original error.
                    _logger.exception("%s failed to exit the PassContext", instrument.name)
            self._instruments = []
            raise

    def _exit_instruments(self) -> None:
        try:
            for instrument in self._instruments:
                instrument.exit_pass_ctx()
        except BaseException as e:
            _with_traceback_message(e)
            _logger.warning(
                "Pass instrumentation exiting pass context failed; disabling pass instrumentation."
            )
            self._instruments = []
            raise

    def _instrument_before_pass(self, mod: Any, info: PassInfo) -> bool:
        """should_run (all instruments, no short-circuit, skipped for required passes),
        then run_before_pass; returns whether the pass should run."""
        should_run = True
        try:
            if not self.is_required(info):
                for instrument in self._instruments:
                    should_run &= bool(instrument.should_run(mod, info))
            if should_run:
                for instrument in self._instruments:
                    instrument.run_before_pass(mod, info)
        except Exception as e:
            _with_traceback_message(e)
            raise
        return should_run

    def _instrument_after_pass(self, mod: Any, info: PassInfo) -> None:
        try:
            for instrument in self._instruments:
                instrument.run_after_pass(mod, info)
        except Exception as e:
            _with_traceback_message(e)
            raise


def _with_traceback_message(e: BaseException) -> None:
    """Give an error raised by an instrument the message Relay's has after crossing its C++
    boundary: the Python traceback, so the last line reads ``ValueError: <message>``. The
    exception keeps its type; a message is rewritten once, and only a plain one (``args``)."""
    if not isinstance(e, Exception) or getattr(e, "_xrelay_traceback_message", False):
        return
    if type(e).__str__ is not BaseException.__str__ or len(e.args) > 1:
        return
    e.args = ("".join(traceback.format_exception(e)).rstrip("\n"),)
    e._xrelay_traceback_message = True  # type: ignore[attr-defined]


# --------------------------------------------------------------------------------------
# Passes
# --------------------------------------------------------------------------------------


class Pass(ABC):
    """
    A pass callable on a module, as `tvm.transform.Pass`.

    `pass_(mod)` runs the pass under `PassContext.current()`, whatever its opt level:
    the instruments' `should_run` may skip it, `run_before_pass`/`run_after_pass` are
    called around it. The module is rewritten in place and returned (see the module
    docstring for this departure from Relay).
    """

    @property
    @abstractmethod
    def info(self) -> PassInfo:
        """The pass metadata."""

    @abstractmethod
    def _transform(self, mod: ModuleT, ctx: PassContext) -> ModuleT:
        """Run the pass body on `mod` (no instrumentation); return the module."""

    copies_input: bool = True
    """Whether the pass rewrites a copy of a module it does not own (see `in_place`). A pass
    made by `module_pass` hands its function the module itself, as Relay does; a Sequential
    leaves the copying to its passes."""

    def __call__(self, mod: ModuleT) -> ModuleT:
        module_op(mod)  # fail early on something that is not a module
        ctx = PassContext.current()
        info = self.info
        # Build the xDSL context (slow the first time) before the instruments start timing.
        get_xdsl_context()
        if not ctx._instrument_before_pass(mod, info):
            return mod
        stack = _owned_modules()
        outermost = not getattr(_owned, "depth", 0)
        entry = len(stack)
        _owned.depth = getattr(_owned, "depth", 0) + 1
        try:
            if ctx.get_config("testing.immutable_module") or (
                self.copies_input and not _is_owned(mod)
            ):
                mod = _copy_module(mod)
                stack.append(module_op(mod))  # owned until the outermost pass returns
            with _frozen_heap():
                mod = self._transform(mod, ctx)
        finally:
            _owned.depth -= 1
            if outermost:
                del stack[entry:]
        ctx._instrument_after_pass(mod, info)
        return mod

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.info.name}>"


_heap_frozen = threading.local()


@contextmanager
def _frozen_heap() -> Iterator[None]:
    """Keep Python's cyclic GC out of the way while passes run.

    A model's IR is millions of live objects, and every full collection walks all of them,
    which made passes on 100k-op graphs superlinear (fuse-ops on 40k ops: 0.41 s per 1k ops with
    the collector, 0.28 without). During the outermost pass the collector is off and the objects
    alive when it started are frozen; reference counting still frees everything acyclic, and the
    cycles the pass drops (erased ops) are collected after it, in one go.
    """
    if getattr(_heap_frozen, "active", False):
        yield
        return
    _heap_frozen.active = True
    was_enabled = gc.isenabled()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
        gc.unfreeze()
        _heap_frozen.active = False


class ModulePassAdapter(Pass):
    """A `Pass` running one xDSL `ModulePass` instance (use `as_pass` to build one)."""

    def __init__(self, module_pass: ModulePass):
        if not isinstance(module_pass, ModulePass):
            raise TypeError(f"expected a ModulePass instance, got {module_pass!r}")
        self.module_pass = module_pass
        self._info = pass_info_of(type(module_pass))

    @property
    def info(self) -> PassInfo:
        return self._info

    def _transform(self, mod: ModuleT, ctx: PassContext) -> ModuleT:
        if self._info.name in RELAY_FUNCTION_PASSES:
            with _external_functions_hidden(module_op(mod)):
                self.module_pass.apply(get_xdsl_context(), module_op(mod))
        else:
            self.module_pass.apply(get_xdsl_context(), module_op(mod))
        if self._info.name not in RELAY_UNTYPED_MODULE_PASSES:
            mark_types_inferred(module_op(mod))
        if self._info.name in RELAY_FUNCTION_PASSES and ctx.instruments:
            # Relay's FunctionPass ends by running InferType on the module (ir/transform.cc),
            # a nested pass that instruments and the timing profile see. xrelay's passes keep
            # every type exact, so without instruments it would change nothing: skipped.
            mod = get_pass("InferType")(mod)
        return mod

    def __repr__(self) -> str:
        return f"<ModulePassAdapter {self._info.name}: {self.module_pass!r}>"


@contextmanager
def _external_functions_hidden(module: ModuleOp) -> Iterator[None]:
    """Hide the functions a Relay function pass must not touch while it runs.

    Relay's ``FunctionPass`` rewrites only "optimizable" functions (``AsOptimizableFunctionNode``
    in ``relay/ir/function.cc``): not those with a ``Compiler`` attribute (partitioned for an
    external codegen) or a nonzero ``Extern`` / ``SkipOptimization``. Each such ``func.func``
    is swapped for a private declaration with the same name, type and attributes while the
    pass runs (calls to it still resolve and type), then put back in its place.
    """
    hidden: list[tuple[FuncOp, FuncOp]] = []
    for op in list(module.ops):
        if isinstance(op, FuncOp) and op.body.blocks and _skips_optimization(op):
            decl = FuncOp.external(
                op.sym_name.data, list(op.function_type.inputs), list(op.function_type.outputs)
            )
            decl.attributes.update(op.attributes)
            op.parent_block().insert_op_before(decl, op)  # type: ignore[union-attr]
            op.detach()
            hidden.append((decl, op))
    try:
        yield
    finally:
        for decl, op in hidden:
            block = decl.parent_block()
            if block is not None:  # a pass that erased the declaration erased the function
                block.insert_op_before(op, decl)
                decl.detach()
            decl.erase(safe_erase=False)


def _skips_optimization(func: FuncOp) -> bool:
    attrs = func.attributes
    if FUNC_ATTRS["Compiler"] in attrs:
        return True
    for key in ("Extern", "SkipOptimization"):
        value = attrs.get(FUNC_ATTRS[key])
        if isinstance(value, IntegerAttr) and value.value.data != 0:
            return True
    return False


RELAY_FUNCTION_PASSES: frozenset[str] = frozenset(
    {
        "AlterOpLayout", "BackwardFoldScaleAxis", "CanonicalizeOps", "CombineParallelBatchMatmul",
        "CombineParallelConv2d", "CombineParallelDense", "ConvertLayout",
        "DefuseOps", "EliminateCommonSubexpr", "FoldConstant", "ForwardFoldScaleAxis", "FuseOps",
        "QnnCanonicalize", "QnnLegalize", "SimplifyInference", "ToGraphNormalForm", "ToMixedPrecision",
    }
)  # fmt: skip
"""Relay names of the passes Relay builds with ``CreateFunctionPass``: each ends with a nested
``InferType``, as in Relay, when instruments watch (see ``ModulePassAdapter._transform``)."""


RELAY_UNTYPED_MODULE_PASSES: frozenset[str] = frozenset(
    {
        "AnnotateUsedMemory", "InlineGlobals", "LambdaLift", "MergeCompilerRegions", "PartitionGraph",
        "RemoveUnusedFunctions", "ToANormalForm", "ToBasicBlockNormalForm",
    }
)  # fmt: skip
"""Relay module passes that do not run ``InferType``: a function built in Python (untyped in
Relay until ``InferType``) stays untyped through them; every other pass types the module."""

_UNTYPED_FUNCS: weakref.WeakSet[Any] = weakref.WeakSet()


def mark_types_unknown(funcs: Iterable[Any]) -> None:
    """Mark ``func.func`` ops as built in Python and not yet type-inferred: Relay's printer
    shows no ``/* ty=... */`` and no return type for them (their IR types are exact anyway)."""
    _UNTYPED_FUNCS.update(funcs)


def mark_types_inferred(module: ModuleOp) -> None:
    """Every function of ``module`` is typed (``InferType`` or a function pass ran)."""
    for op in module.ops:
        _UNTYPED_FUNCS.discard(op)


def types_inferred(func: Any) -> bool:
    """Whether Relay would have types on ``func`` (see ``mark_types_unknown``)."""
    return func not in _UNTYPED_FUNCS


def as_pass(p: Pass | ModulePass) -> Pass:
    """
    `p` as a `Pass`: a `Pass` as is, a `ModulePass` instance wrapped, and a composite
    `ModulePass` (with a `sequence` class variable) as a `Sequential` of its parts named
    by its Relay name, with its opt_level and required passes.
    """
    if isinstance(p, Pass):
        return p
    if isinstance(getattr(p, "relay_pass", None), Pass):
        return p.relay_pass  # a Relay-style pass carried by an xDSL one (relay-opt's plugins)
    if isinstance(p, ModulePass):
        cls = type(p)
        sequence = getattr(cls, "sequence", None)
        if sequence:
            info = pass_info_of(cls)
            return Sequential(
                [get_pass(name) for name in sequence], info.opt_level, info.name, info.required
            )
        return ModulePassAdapter(p)
    if isinstance(p, type) and issubclass(p, ModulePass):
        raise TypeError(f"expected a pass instance, got the class {p.__name__}; call it first")
    raise TypeError(f"expected a Pass or an xDSL ModulePass, got {p!r}")


class Sequential(Pass):
    """
    A list of passes run in order, as `tvm.transform.Sequential`.

    Each pass runs only if `PassContext.current().pass_enabled(pass.info)`; before it,
    the passes it requires run (looked up by name, called like a direct call, so
    instruments see them and their own opt level does not matter). Sequentials nest.
    `passes` may hold `Pass`es and xDSL `ModulePass` instances.
    """

    def __init__(
        self,
        passes: Sequence[Pass | ModulePass] | None = None,
        opt_level: int = 0,
        name: str = "sequential",
        required: Iterable[str] = (),
    ):
        if isinstance(passes, Pass | ModulePass):
            raise TypeError("Sequential expects a list of passes, not a single pass")
        self.passes: list[Pass] = [as_pass(p) for p in passes or ()]
        self._info = PassInfo(opt_level, name, tuple(required))

    copies_input = False  # each of its passes copies a module it does not own

    @property
    def info(self) -> PassInfo:
        return self._info

    def _transform(self, mod: ModuleT, ctx: PassContext) -> ModuleT:
        for p in self.passes:
            info = p.info
            if not ctx.pass_enabled(info):
                continue
            for name in info.required:
                mod = get_pass(name)(mod)
            mod = p(mod)
        return mod

    def __repr__(self) -> str:
        inner = ", ".join(p.info.name for p in self.passes)
        return f"<Sequential {self._info.name}: [{inner}]>"


class _FunctionPass(Pass):
    """A pass made from a Python function by `module_pass`."""

    copies_input = False  # Relay hands a module pass's function the module itself

    def __init__(self, func: Callable[[Any, PassContext], Any], info: PassInfo):
        self.func = func
        self._info = info

    @property
    def info(self) -> PassInfo:
        return self._info

    def _transform(self, mod: ModuleT, ctx: PassContext) -> ModuleT:
        result = self.func(mod, ctx)
        return mod if result is None else result


PythonModulePass = _FunctionPass
"""The class of passes `module_pass` makes (`tvm.transform.ModulePass`)."""


def module_pass(
    pass_func: Callable[[Any, PassContext], Any] | None = None,
    opt_level: int | None = None,
    name: str | None = None,
    required: Iterable[str] = (),
) -> Any:
    """
    Make a `Pass` from a Python function `pass_func(mod, ctx)`, as
    `tvm.transform.module_pass`. The function rewrites `mod` (whatever the pass was
    called on: a `ModuleOp` or an `IRModule`) in place and returns None, or returns the
    module to continue with. Usable as a decorator, `@module_pass(opt_level=1)`.
    """
    if opt_level is None:
        raise ValueError("module_pass: please provide opt_level for the pass")

    def create(func: Any) -> Any:
        if isinstance(func, type):
            # a decorated class: its instances (built with its own arguments) are the passes
            if not hasattr(func, "transform_module"):
                raise TypeError(f"{func.__name__} needs a transform_module(mod, ctx) method")
            info = PassInfo(opt_level, name or func.__name__, tuple(required))

            def make(*args: Any, **kwargs: Any) -> Pass:
                return _FunctionPass(func(*args, **kwargs).transform_module, info)

            make.__name__ = make.__qualname__ = func.__name__
            make.__doc__ = func.__doc__
            return make
        if not callable(func):
            raise TypeError(f"module_pass expects a function, got {func!r}")
        return _FunctionPass(func, PassInfo(opt_level, name or func.__name__, tuple(required)))

    if pass_func is not None:
        return create(pass_func)
    return create


# --------------------------------------------------------------------------------------
# The relay.build pipeline
# --------------------------------------------------------------------------------------

BUILD_PIPELINE_PASSES: tuple[str, ...] = (
    "RemoveUnusedFunctions",
    "QnnLegalize",
    "QnnCanonicalize",
    "SimplifyInference",
    "EliminateCommonSubexpr",
    "CombineParallelConv2d",
    "CombineParallelDense",
    "CombineParallelBatchMatmul",
    "FoldConstant",
    "FoldScaleAxis",
    "CanonicalizeOps",
    "AlterOpLayout",
    "FoldConstant",
    "FuseOps",
)
"""
The passes `relay.build` runs up to fusion, in its order (Relay's `GetPassPrefix`), that
xrelay mirrors (Relay names), each gated by its own opt level as in Relay: CombineParallel*
run at level 4, AlterOpLayout at 3. Relay's other steps (ToBasicBlockNormalForm, Legalize,
SimplifyExpr and SimplifyExprPostAlterOp, CanonicalizeCast, FlattenAtrousConv, FastMath,
PlanDevices, ...) are left out: v0.19's SimplifyExpr runs at every level and rewrites
``x + x`` to ``x * 2``, which would change seed 002's printed graphs (made by the TVM its
scripts ran on) and grew the int8 ResNet's arena.
"""


class _BuildPipeline(Sequential):
    """A Sequential that gates its passes by a fixed opt level instead of the context's."""

    def __init__(self, passes: Sequence[Pass], opt_level: int | None):
        super().__init__(passes, 0, "sequential")
        self.gate_opt_level = opt_level

    def _transform(self, mod: ModuleT, ctx: PassContext) -> ModuleT:
        if self.gate_opt_level is None:
            return super()._transform(mod, ctx)
        saved = ctx.opt_level
        ctx.opt_level = self.gate_opt_level
        try:
            return super()._transform(mod, ctx)
        finally:
            ctx.opt_level = saved


def build_alter_op_layout(blocked_simd_width: int | None = None) -> ModulePass:
    """The build pipeline's AlterOpLayout: TVM's x86 rule (grouped convolutions blocked too) at
    ``blocked_simd_width`` lanes when given (the C target's channel blocks, multiples of 8 lanes
    where they can be: ``block_lanes``), else only the
    Python-registered rules (the arena runtime ran the x86 rule's blocked programs slower than
    NCHW: measured; README, Layouts)."""
    from xrelay.transforms.alter_op_layout import AlterOpLayoutPass

    blocked = blocked_simd_width is not None
    # blocks of a multiple of 8 lanes where the channels allow: the C's narrowest register tile
    lanes = min(8, blocked_simd_width) if blocked else 1
    return AlterOpLayoutPass(
        simd_width=blocked_simd_width or 16, x86=blocked, grouped=blocked, block_lanes=lanes
    )


def build_pipeline(opt_level: int | None = None, blocked_simd_width: int | None = None) -> Sequential:
    """
    The optimizations `relay.build` applies before code generation, as one `Sequential`
    named "sequential" (as in Relay's `build_module.cc`).

    The list is `BUILD_PIPELINE_PASSES`; passes xrelay does not (yet) register are left
    out, looked up when this function is called. Each pass runs if enabled by the
    current `PassContext`; with `opt_level` given, that level replaces the context's
    while the pipeline runs (disabled/required passes and instruments still apply).
    `blocked_simd_width` turns on TVM's x86 rule in AlterOpLayout with that many lanes (the
    C target's channel-blocked convolutions; grouped ones blocked too, `grouped`); without it
    only Python-registered rules apply.
    """
    if opt_level is not None and (not isinstance(opt_level, int) or isinstance(opt_level, bool)):
        raise TypeError(f"opt_level must be an int or None, got {opt_level!r}")

    passes = [
        # Python-registered rules only: the arena runtime ran the x86 rule's blocked programs
        # slower than NCHW (measured; README, Layouts)
        as_pass(build_alter_op_layout(blocked_simd_width))
        if name == "AlterOpLayout"
        else get_pass(name)
        for name in BUILD_PIPELINE_PASSES
        if has_pass(name)
    ]
    return _BuildPipeline(passes, opt_level)
