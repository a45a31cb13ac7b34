"""
The Python pass API, mirroring `tvm.relay.transform`.

Besides `PassContext`, `Sequential`, `PassInfo`, `Pass` and `module_pass`, every
registered pass is available by its Relay name as a factory taking Relay's arguments
and returning a `Pass`::

    from xrelay.relay import transform
    with transform.PassContext(opt_level=3):
        mod = transform.Sequential([transform.SimplifyInference(), transform.FuseOps()])(mod)

Pass names are resolved lazily through the registry (`xrelay.transforms.get_all_passes`),
so passes added later appear here too. Arguments map onto the `ModulePass` fields (the
snake_case form of the CLI options): positional arguments in field order, keywords by
field name or by a Relay alias (`register_argument_aliases`), lists become tuples.
Passes rewrite the module in place and return it (see `xrelay.transforms.infra`).

Where Relay's factory is named differently from the pass it makes, both work: `Inline()`
makes the pass named `InlineGlobals`, as in Relay. `_ffi_api` holds the same factories, so
scripts that reach for `relay.transform._ffi_api.AnnotateUsedMemory()` (as Relay's own tests
do for passes without a Python wrapper) port too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from xdsl.passes import ModulePass

from xrelay.backend.engines import resolve_pass
from xrelay.dialects import module_op
from xrelay.relay.module import IRModule, value_expressions
from xrelay.relay.parser import parse
from xrelay.transforms import to_mixed_precision as mixed_precision
from xrelay.transforms.convert_layout import LayoutConfig
from xrelay.transforms.infra import (
    Pass,
    PassContext,
    PassInfo,
    PassLookupError,
    Sequential,
    as_pass,
    build_pipeline,
    get_pass_class,
    mark_types_inferred,
    module_pass,
    registered_pass_classes,
    relay_name_of,
)

__all__ = [
    "FunctionPass",
    "LayoutConfig",
    "Pass",
    "PassContext",
    "PassInfo",
    "Sequential",
    "build_pipeline",
    "function_pass",
    "mixed_precision",
    "module_pass",
    "register_argument_aliases",
]

# Relay keyword -> ModulePass field, per Relay pass name, where the names differ.
_ARGUMENT_ALIASES: dict[str, dict[str, str]] = {
    "FuseOps": {"fuse_opt_level": "opt_level"},
}


# Relay pass name -> its arguments that are callbacks on Relay expressions: the pass gets a
# predicate on ops that shows the callback each op's Relay ``Call`` (see _on_expressions).
_EXPRESSION_CALLBACKS: dict[str, tuple[str, ...]] = {
    "EliminateCommonSubexpr": ("fskip",),
}


def _on_expressions(callback: Callable[[Any], Any]) -> Callable[[Any], bool]:
    """An op predicate calling ``callback`` with the op's Relay expression (built once per
    function of the module the op is in, when first asked)."""
    from xdsl.dialects.builtin import ModuleOp as _ModuleOp
    from xdsl.dialects.func import FuncOp


    seen: dict[int, dict[Any, Any]] = {}

    def predicate(op: Any) -> bool:
        fop = op.parent_op()
        while fop is not None and not isinstance(fop, FuncOp):
            fop = fop.parent_op()
        if fop is None:
            return False
        exprs = seen.get(id(fop))
        if exprs is None:
            module = fop.parent_op()
            symbols = {f.sym_name.data: f for f in module.ops if isinstance(f, FuncOp)} if isinstance(
                module, _ModuleOp
            ) else {}
            exprs = seen[id(fop)] = value_expressions(fop, symbols)
        expr = exprs.get(op.results[0]) if op.results else None
        return expr is not None and bool(callback(expr))

    predicate.__name__ = getattr(callback, "__name__", "callback")
    return predicate


# Relay factory name -> Relay name of the pass it makes, where they differ.
_FACTORY_ALIASES: dict[str, str] = {
    "Inline": "InlineGlobals",
    "CombineParallelConv2D": "CombineParallelConv2d",
}


class FunctionPass(Pass):
    """A pass that rewrites each function of a module (Relay's ``FunctionPass``), made by
    ``function_pass``: ``pass_func(func, mod, ctx)`` returns the new ``Function`` (or the
    same one). Functions handed to an external compiler (``Compiler`` attribute) are
    skipped, as in Relay."""

    def __init__(self, func: Callable[..., Any], info: PassInfo):
        self.func = func
        self._info = info

    @property
    def info(self) -> PassInfo:
        return self._info

    def _transform(self, mod: Any, ctx: PassContext) -> Any:

        irmod = mod if isinstance(mod, IRModule) else IRModule.from_module_op(mod)
        for gv in irmod.get_global_vars():
            fn = irmod[gv]
            if "Compiler" in fn.attrs:
                continue
            new = self.func(fn, irmod, ctx)
            if new is None or new is fn:
                continue
            irmod[gv] = new
        mark_types_inferred(irmod.module)  # Relay's FunctionPass ends with InferType
        return mod


def function_pass(
    pass_func: Any = None,
    opt_level: int | None = None,
    name: str | None = None,
    required: Any = (),
) -> Any:
    """Relay's ``function_pass``: a ``FunctionPass`` from ``pass_func(func, mod, ctx)``, or
    from a class with a ``transform_function(self, func, mod, ctx)`` method (the decorated
    class's instances are the passes). Usable as ``@function_pass(opt_level=1)``."""
    if opt_level is None:
        raise ValueError("function_pass: please provide opt_level for the pass")

    def create(target: Any) -> Any:
        if isinstance(target, type):
            if not hasattr(target, "transform_function"):
                raise TypeError(f"{target.__name__} needs a transform_function(func, mod, ctx) method")
            cls_name = name or target.__name__

            def make(*args: Any, **kwargs: Any) -> FunctionPass:
                inst = target(*args, **kwargs)
                return FunctionPass(
                    inst.transform_function, PassInfo(opt_level, cls_name, tuple(required or ()))
                )

            make.__name__ = make.__qualname__ = target.__name__
            make.__doc__ = target.__doc__
            return make
        if not callable(target):
            raise TypeError(f"function_pass expects a function, got {target!r}")
        return FunctionPass(target, PassInfo(opt_level, name or target.__name__, tuple(required or ())))

    if pass_func is not None:
        return create(pass_func)
    return create


def register_argument_aliases(relay_name: str, aliases: Mapping[str, str]) -> None:
    """Accept the Relay keyword arguments in `aliases` (keyword -> field name) for the
    pass `relay_name`, added to any already registered."""
    _ARGUMENT_ALIASES.setdefault(relay_name, {}).update(aliases)


def _convert(value: Any) -> Any:
    # ModulePass options are hashable: Relay's lists become tuples.
    if isinstance(value, list | tuple):
        return tuple(_convert(v) for v in value)
    return value


def instantiate(cls: type[ModulePass], args: tuple[Any, ...], kwargs: dict[str, Any]) -> ModulePass:
    """Build `cls` from Relay-style positional and keyword arguments."""
    relay_name = relay_name_of(cls)
    fields = [f.name for f in dataclasses.fields(cls) if f.init]
    aliases = _ARGUMENT_ALIASES.get(relay_name, {})
    if len(args) > len(fields):
        raise TypeError(
            f"{relay_name}() takes at most {len(fields)} positional arguments "
            f"({', '.join(fields) or 'none'}), got {len(args)}"
        )
    values: dict[str, Any] = dict(zip(fields, map(_convert, args)))
    for key, value in kwargs.items():
        field_name = key if key in fields else aliases.get(key)
        if field_name not in fields:
            valid = fields + [a for a, f in aliases.items() if f in fields]
            raise TypeError(
                f"{relay_name}() got an unexpected keyword argument '{key}'; "
                f"valid arguments: {', '.join(valid) or 'none'}"
            )
        if field_name in values:
            raise TypeError(f"{relay_name}() got multiple values for argument '{key}'")
        values[field_name] = _convert(value)
    for name in _EXPRESSION_CALLBACKS.get(relay_name, ()):
        if values.get(name) is not None:
            if not callable(values[name]):
                raise TypeError(f"{relay_name}(): {name} must be callable, got {values[name]!r}")
            values[name] = _on_expressions(values[name])
    return cls(**values)


def _factory(relay_name: str, cls: type[ModulePass]) -> Callable[..., Pass]:
    def make(*args: Any, **kwargs: Any) -> Pass:
        # Look the class up again: the registry may have changed since.
        # an engine named in the arguments (MergeComposite("dnnl")) gets its table
        return as_pass(resolve_pass(instantiate(get_pass_class(relay_name), args, kwargs)))

    make.__name__ = make.__qualname__ = relay_name
    make.__doc__ = cls.__doc__
    return make


class _FFIApi:
    """Relay's `relay.transform._ffi_api`: every pass factory, looked up by name."""

    def __getattr__(self, name: str) -> Callable[..., Pass]:
        return _lookup_factory(name)

    def __dir__(self) -> list[str]:
        return [n for n in __dir__() if n[0].isupper()]

    def __repr__(self) -> str:
        return "<xrelay.relay.transform._ffi_api>"


_ffi_api = _FFIApi()


def __getattr__(name: str) -> Callable[..., Pass]:
    return _lookup_factory(name)


def _lookup_factory(name: str) -> Callable[..., Pass]:
    if name.startswith("__"):
        raise AttributeError(name)
    if name in _FACTORY_ALIASES:
        target = _FACTORY_ALIASES[name]
        try:
            cls = get_pass_class(target)
        except PassLookupError as exc:
            raise AttributeError(
                f"module 'xrelay.relay.transform' has no pass '{name}': {exc}"
            ) from None
        factory = _factory(target, cls)
        factory.__name__ = factory.__qualname__ = name
        return factory
    try:
        cls = get_pass_class(name)
    except PassLookupError as exc:
        raise AttributeError(
            f"module 'xrelay.relay.transform' has no pass '{name}': {exc}"
        ) from None
    if relay_name_of(cls) != name:
        raise AttributeError(
            f"module 'xrelay.relay.transform' has no attribute '{name}'; "
            f"the pass is called {relay_name_of(cls)} here"
        )
    return _factory(name, cls)


def __dir__() -> list[str]:
    names = set(__all__) | {relay_name_of(c) for c in registered_pass_classes().values()}
    names |= {alias for alias, target in _FACTORY_ALIASES.items() if target in names}
    return sorted(names)


def AnnotateSpans() -> Pass:
    """Relay's ``AnnotateSpans``: print the module as Relay text and parse it back under the
    source name ``AnnotateSpans`` (what Relay does to give every node a span). xrelay's ops
    carry no source spans (xDSL operations have no locations), so the module keeps its
    structure; what the pass checks is that the module prints as Relay text that parses
    (a module that does not raises the parser's error, naming the line)."""

    def annotate(mod: Any, ctx: PassContext) -> Any:

        module = module_op(mod)
        text = IRModule.from_module_op(module).astext(show_meta_data=True)
        reparsed = module_op(parse(text, "AnnotateSpans"))
        for op in list(module.body.block.ops):
            op.detach()
            op.erase(safe_erase=False)
        for op in list(reparsed.body.block.ops):
            op.detach()
            module.body.block.add_op(op)
        return mod

    return module_pass(annotate, opt_level=0, name="AnnotateSpans")
