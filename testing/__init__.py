"""``xrelay.testing``: built-in workloads and helpers, as ``tvm.relay.testing``.

``resnet``, ``mobilenet`` and ``mlp`` have ``get_workload(...) -> (mod, params)``;
``create_workload`` turns any network function into a module plus deterministic parameters.
Params are numpy arrays (Relay gives NDArrays). ``check_semantics`` (from
``xrelay.testing.semantics``) is re-exported lazily.
"""

from __future__ import annotations

import importlib
from collections import Counter
from typing import Any

from xrelay.relay import IRModule
from xrelay.relay.expr import Expr, Function
from xrelay.testing import init, layers, mlp, mobilenet, resnet
from xrelay.testing.init import create_workload

__all__ = [
    "assert_allclose",
    "count_ops",
    "create_workload",
    "init",
    "layers",
    "mlp",
    "mobilenet",
    "resnet",
    "run_infer_type",
    "run_opt_pass",
]

_LAZY = {"check_semantics": ("xrelay.testing.semantics", "check_semantics")}


def assert_allclose(actual: Any, desired: Any, rtol: float = 1e-7, atol: float = 1e-7) -> None:
    """``tvm.testing.assert_allclose``: numpy's, with TVM's defaults (shapes must match)."""
    import numpy as np

    actual, desired = np.asarray(actual), np.asarray(desired)
    np.testing.assert_equal(actual.shape, desired.shape)
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol, verbose=True)


def count_ops(mod: Any) -> Counter[str]:
    """How many times each relay op occurs in the module (all functions), by Relay name."""
    from xrelay.relay.analysis import list_op_freqs

    return Counter(list_op_freqs(mod))


def run_opt_pass(expr: Expr, opt_pass: Any) -> Expr:
    """Run ``opt_pass`` on ``IRModule.from_expr(expr)``; return main (or its body when
    ``expr`` is not a function), as Relay's helper."""
    mod = opt_pass(IRModule.from_expr(expr))
    entry = mod["main"]
    return entry if isinstance(expr, Function) else entry.body


def run_infer_type(expr: Expr) -> Expr:
    """Types are inferred eagerly in xrelay; this returns ``expr`` after checking it has one."""
    expr.checked_type  # noqa: B018 - raises when the type is not known
    return expr


def __getattr__(name: str) -> Any:
    entry = _LAZY.get(name)
    if entry is not None:
        return getattr(importlib.import_module(entry[0]), entry[1])
    raise AttributeError(f"module 'xrelay.testing' has no attribute '{name}'")
