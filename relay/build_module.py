"""``relay.build_module``: ``relay.build`` and ``bind_params_by_name``, as in tvm.relay.build_module.

``relay.build(mod, target, params=params)`` compiles with ``xrelay.build`` (optimise, fuse,
lower, plan) and returns a ``GraphExecutorFactoryModule`` shaped like TVM's::

    with relay.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    m = lib["default"](dev)          # a fresh xrelay.runtime.GraphModule; dev is ignored
    graph, lib_, params = lib        # TVM's legacy three-value unpacking works too

The opt level is the current ``PassContext``'s, as in Relay. ``lib.get_graph_json()`` is TVM's
graph-executor JSON of the planned program, ``lib.get_lib()`` the planned program itself
(xrelay's "library": primitive functions plus the memory-dialect ``@main``), and
``lib.get_params()`` the constants of ``@main`` by their graph names ``p0, p1, ...``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from xrelay.backend.build import BuildError
from xrelay.backend.build import build as xbuild
from xrelay.backend.target import TargetError, resolve_build_target
from xrelay.dialects.relay import RelayTypeError, dtype_of
from xrelay.relay.analysis import free_vars
from xrelay.relay.expr import Constant, Expr, Function, GlobalVar, TupleType
from xrelay.relay.expr_functor import substitute
from xrelay.relay.module import IRModule
from xrelay.relay.scope_builder import ScopeBuilder
from xrelay.runtime.device import check_runnable
from xrelay.runtime.executor_factory import GraphExecutorFactoryModule
from xrelay.runtime.interpreter import ConstructorValue, Reference
from xrelay.runtime.interpreter import run as interpret
from xrelay.runtime.ndarray import array
from xrelay.transforms.infra import PassContext

__all__ = [
    "Executor",
    "GraphExecutorFactoryModule",
    "bind_params_by_name",
    "build",
    "create_executor",
]


def bind_params_by_name(func: Function, params: Mapping[str, Any]) -> Function:
    """``func`` with the parameters named in ``params`` replaced by named constants.

    Each bound parameter becomes a ``relay.constant @name`` holding the array (cast to the
    parameter's dtype; the shape must match). Parameters not in ``params`` stay, in order;
    names in ``params`` that are not parameters are ignored, as in Relay. Raises ValueError
    when several parameters share a bound name, as Relay does.
    """
    if not isinstance(func, Function):
        raise TypeError(f"bind_params_by_name expects a relay.Function, got {func!r}")
    counts: dict[str, int] = {}
    for p in func.params:
        counts[p.name_hint] = counts.get(p.name_hint, 0) + 1
    mapping = {}
    for p in func.params:
        if p.name_hint not in params:
            continue
        if counts[p.name_hint] > 1:
            raise ValueError(f"multiple parameters are named {p.name_hint}")
        value = params[p.name_hint]
        arr = value.numpy() if hasattr(value, "numpy") else np.asarray(value)
        t = p._type
        if t is not None:
            want = tuple(t.get_shape())
            if tuple(arr.shape) != want:
                raise RelayTypeError(
                    f"bind_params_by_name: param '{p.name_hint}' has shape {tuple(arr.shape)} "
                    f"but the parameter has type {t}"
                )
            dtype = dtype_of(t)
        else:
            dtype = None
        mapping[p] = Constant(arr, p.name_hint, dtype=dtype) if dtype else Constant(arr, p.name_hint)
    if not mapping:
        return func
    body = substitute(func.body, mapping)
    new = Function([p for p in func.params if p not in mapping], body, attrs=dict(func.attrs))
    return new


def build(
    ir_mod: Any,
    target: Any = None,
    target_host: Any = None,
    executor: Any = None,
    runtime: Any = None,
    workspace_memory_pools: Any = None,
    constant_memory_pools: Any = None,
    params: Mapping[str, Any] | None = None,
    mod_name: str = "default",
    *,
    plan: str = "greedy-by-size",
) -> GraphExecutorFactoryModule:
    """Relay's ``relay.build``: compile ``ir_mod`` (an ``IRModule`` or a ``Function``, which
    becomes ``main``) at the current ``PassContext``'s opt level with ``xrelay.build``.

    ``target`` and ``target_host`` must mean the host CPU (``"llvm -mcpu=..."``, a
    ``Target``, a dict ``{"cpu": "llvm"}``; see ``xrelay.backend.target``); ``executor`` and
    ``runtime`` are accepted for compatibility and must be None; ``workspace_memory_pools`` may be a list of ``planners.Pool`` (or a
    ``"name:size,..."`` string) to plan into; ``plan`` names the planning algorithm. Like
    Relay's, it offloads nothing by itself: functions ``partition_for_dnnl`` made run on
    oneDNN (``xrelay.build`` partitions for oneDNN by default).
    """

    for name, value in (
        ("executor", executor),
        ("runtime", runtime),
        ("constant_memory_pools", constant_memory_pools),
    ):
        if value is not None:
            raise BuildError(f"relay.build: {name} is not supported by xrelay (got {value!r})")
    try:
        host_target = resolve_build_target(target, target_host)
    except TargetError as e:
        raise BuildError(str(e)) from None
    if isinstance(ir_mod, Function):
        ir_mod = IRModule.from_expr(ir_mod)
    opt_level = PassContext.current().opt_level
    module = xbuild(
        ir_mod,
        params,
        opt_level=opt_level,
        plan=plan,
        pools=workspace_memory_pools,
        target=target if isinstance(target, Mapping) and "kind" not in target else host_target,
        partition=False,  # Relay's relay.build runs what the module was partitioned into
    )
    if host_target is not None and host_target.kind == "c":
        return module  # a CModule: get_source(), lib["default"](dev), set_input/run/get_output
    return GraphExecutorFactoryModule(module, mod_name)


# --------------------------------------------------------------------------------------
# create_executor
# --------------------------------------------------------------------------------------

EXECUTOR_KINDS = ("debug", "graph", "vm", "aot")
"""``create_executor`` kinds. ``debug`` and ``vm`` run the reference interpreter (xrelay has
no VM; the interpreter also runs what the arena runtime cannot: If, dynamic shapes);
``graph`` and ``aot`` compile with ``xrelay.build`` and run in the arena runtime."""


def create_executor(
    kind: str = "debug",
    mod: Any = None,
    device: Any = None,
    target: Any = "llvm",
    params: Mapping[str, Any] | None = None,
) -> Executor:
    """Relay's ``relay.create_executor``: an ``Executor`` whose ``evaluate()`` runs ``mod``.

    ``params`` binds ``main``'s parameters by name first, as in Relay. ``device`` and
    ``target`` must mean the host CPU. An unknown ``kind`` is an error, as in Relay.
    """

    if kind not in EXECUTOR_KINDS:
        raise RuntimeError(f"unknown execution strategy: {kind}")
    check_runnable(device, "create an executor")
    try:
        resolve_build_target(target, None)
    except TargetError as e:
        raise BuildError(str(e)) from None
    mod = IRModule() if mod is None else mod.clone()
    if params is not None:
        mod = IRModule.from_expr(bind_params_by_name(mod["main"], params))
    return Executor(kind, mod)


class Executor:
    """Relay's ``relay.backend.Executor`` (made by ``create_executor``)."""

    def __init__(self, kind: str, mod: Any):
        self.kind = kind
        self.mod = mod

    def evaluate(self, expr: Any = None, binds: Mapping[Any, Any] | None = None) -> Any:
        """Relay's ``Executor.evaluate``: with no ``expr``, a callable running ``main``; with a
        ``Function`` or ``GlobalVar``, a callable running it; with any other (closed)
        expression, its value. ``binds`` maps variables of ``expr`` to expressions first.
        Callables take ``main``'s parameters by position or by name and return an
        ``NDArray`` (a tuple of them for a tuple result)."""

        if binds:
            # As Relay: each binding becomes a Let around the expression.
            if expr is None:
                raise ValueError("Executor.evaluate: binds need an expression to bind in")
            sb = ScopeBuilder()
            for var, value in binds.items():
                sb.let(var, value if isinstance(value, Expr) else Constant(_arg_value(value)))
            sb.ret(expr)
            expr = sb.get()
        if expr is None:
            return self._make_executor("main")
        if isinstance(expr, GlobalVar):
            return self._make_executor(expr.name_hint)
        if isinstance(expr, Function):
            if free_vars(expr):
                raise ValueError(
                    "Executor.evaluate: the function has free variables "
                    + ", ".join("%" + v.name_hint for v in free_vars(expr))
                )
            return self._make_executor("main", expr)
        missing = free_vars(expr)
        if missing:
            names = ", ".join("%" + v.name_hint for v in missing)
            raise ValueError(f"Executor.evaluate: the expression has free variables {names}")
        return self._make_executor("main", Function([], expr))()

    def _make_executor(self, entry: str, func: Function | None = None) -> Any:

        mod = self.mod.clone()
        if func is not None:
            mod["main"] = func
        if entry not in [g.name_hint for g in mod.get_global_vars()]:
            raise ValueError(f"Executor.evaluate: the module has no function @{entry}")
        fn = mod[entry]
        params = [p.name_hint for p in fn.params]
        ret_type = fn.checked_type.ret_type
        run = _arena_runner(mod, entry) if self.kind in ("graph", "aot") else None

        def call(*args: Any, **kwargs: Any) -> Any:
            values = _convert_args(params, args, kwargs)
            flat = run(values) if run is not None else interpret(mod, values, entry=entry)
            it = iter(flat)

            def unflatten(t: Any) -> Any:
                if isinstance(t, TupleType):
                    return tuple(unflatten(f) for f in t.fields)
                value = next(it)
                # an ADT value (Relay's ConstructorValue) or a reference is returned as it is
                return value if isinstance(value, ConstructorValue | Reference) else array(value)

            return unflatten(ret_type)

        return call


def _arena_runner(mod: Any, entry: str) -> Any:
    """``entry`` of ``mod`` built by ``xrelay.build`` at the current opt level; a function
    from the inputs to the flat outputs."""

    if entry != "main":
        mod = mod.clone()
        mod["main"] = mod[entry]
    m = xbuild(mod, None, opt_level=PassContext.current().opt_level, partition=False)

    def run(values: list[Any]) -> list[Any]:
        for i, v in enumerate(values):
            m.set_input(i, v)
        m.run()
        return [np.array(m.get_output(i)) for i in range(m.get_num_outputs())]

    return run


def _convert_args(params: list[str], args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> list[Any]:
    """The inputs in parameter order, from positional then keyword arguments (Relay's
    ``Executor._convert_args``), each an array or a Python scalar."""
    if len(args) > len(params):
        raise ValueError(f"expected {len(params)} arguments, got {len(args)}")
    for i, name in enumerate(params[: len(args)]):
        if name in kwargs:
            raise ValueError(
                f"duplicate argument supplied in both positional args (at position: {i}), "
                f"and keyword argument (with name: {name})"
            )
    unknown = sorted(set(kwargs) - set(params))
    if unknown:
        raise ValueError(f"unexpected keyword arguments {unknown}; the parameters are {params}")
    values = list(args)
    for name in params[len(args) :]:
        if name not in kwargs:
            raise ValueError(f"insufficient arguments: no value for parameter {name}")
        values.append(kwargs[name])
    return [_arg_value(v) for v in values]


def _arg_value(v: Any) -> Any:
    if isinstance(v, Constant):
        return v.data.numpy()
    if isinstance(v, tuple | list):
        raise TypeError("tuple arguments are not supported: pass each tensor of the tuple")
    return v.numpy() if hasattr(v, "numpy") else v
