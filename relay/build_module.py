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

from xrelay.dialects.relay import RelayTypeError, dtype_of
from xrelay.relay.expr import Constant, Function
from xrelay.relay.expr_functor import substitute
from xrelay.runtime.module import GraphExecutorFactoryModule

__all__ = ["GraphExecutorFactoryModule", "bind_params_by_name", "build"]


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
    ``Target``, a dict ``{"cpu": "llvm"}``; see ``xrelay.runtime.target``); ``executor`` and
    ``runtime`` are accepted for compatibility and must be None; ``workspace_memory_pools`` may be a list of ``planners.Pool`` (or a
    ``"name:size,..."`` string) to plan into; ``plan`` names the planning algorithm. Like
    Relay's, it offloads nothing by itself: functions ``partition_for_dnnl`` made run on
    oneDNN (``xrelay.build`` partitions for oneDNN by default).
    """
    from xrelay.relay.module import IRModule
    from xrelay.runtime.build import BuildError
    from xrelay.runtime.build import build as xbuild
    from xrelay.runtime.target import TargetError, resolve_build_target
    from xrelay.transforms.infra import PassContext

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
