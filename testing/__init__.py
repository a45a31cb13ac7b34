"""``xrelay.testing``: built-in workloads and helpers, as ``tvm.relay.testing``.

``resnet``, ``mobilenet`` and ``mlp`` have ``get_workload(...) -> (mod, params)``;
``create_workload`` turns any network function into a module plus deterministic parameters.
Params are numpy arrays (Relay gives NDArrays). ``check_semantics`` (from
``xrelay.testing.semantics``) is re-exported lazily.

It is also ``tvm.testing``'s test utilities, so TVM's tests run with only their imports
changed: ``parameter`` (a parametrized pytest fixture), ``main``, ``enabled_targets`` (the CPU:
xrelay has no GPU target), ``uses_gpu`` and ``assert_allclose``.
"""

from __future__ import annotations

import importlib
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

from xrelay.relay import IRModule
from xrelay.relay.analysis import free_vars, list_op_freqs
from xrelay.relay.expr import Expr, Function
from xrelay.relay.expr_functor import substitute
from xrelay.runtime.device import cpu
from xrelay.testing import inception_v3, init, layers, mlp, mobilenet, resnet
from xrelay.testing.init import create_workload

__all__ = [
    "assert_allclose",
    "count",
    "count_ops",
    "create_workload",
    "enabled_targets",
    "init",
    "layers",
    "main",
    "main_or_body",
    "make_nat_expr",
    "make_nat_value",
    "mlp",
    "inception_v3",
    "mobilenet",
    "parameter",
    "resnet",
    "run_infer_type",
    "run_opt_pass",
    "uses_gpu",
]

_LAZY = {"check_semantics": ("xrelay.testing.semantics", "check_semantics")}


def assert_allclose(actual: Any, desired: Any, rtol: float = 1e-7, atol: float = 1e-7) -> None:
    """``tvm.testing.assert_allclose``: numpy's, with TVM's defaults (shapes must match)."""
    import numpy as np

    actual, desired = np.asarray(actual), np.asarray(desired)
    np.testing.assert_equal(actual.shape, desired.shape)
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol, verbose=True)


def parameter(*values: Any, ids: Any = None, by_dict: dict[str, Any] | None = None) -> Any:
    """``tvm.testing.parameter``: ``size = parameter(1, 10)`` at module level makes ``size`` a
    pytest fixture taking each value in turn (``by_dict`` maps ids to values)."""
    import pytest

    if by_dict is not None:
        if values or ids:
            raise ValueError("parameter: by_dict cannot be combined with positional values or ids")
        ids, values = tuple(by_dict), tuple(by_dict.values())

    # pytest names a module-level fixture after the variable it is assigned to
    @pytest.fixture(params=values, ids=ids, scope="session")
    def as_fixture(*_cls: Any, request: Any) -> Any:
        return request.param

    return as_fixture


def main() -> None:
    """``tvm.testing.main``: run pytest on the calling script and exit with its status."""
    import pytest

    sys.exit(pytest.main([sys.argv[0], *sys.argv[1:]]))


def enabled_targets() -> list[tuple[str, Any]]:
    """``tvm.testing.enabled_targets``: ``(target, device)`` pairs; xrelay runs on the CPU only."""

    return [("llvm", cpu(0))]


def uses_gpu(func: Callable[..., Any]) -> Callable[..., Any]:
    """``tvm.testing.uses_gpu``: TVM marks a test that also runs on GPUs; with no GPU target here
    it runs on the targets ``enabled_targets`` gives, unchanged."""
    return func


def count(prelude: Any, n: Any) -> int:
    """The Python int of a run-time ``nat`` value (``succ(succ(zero))`` is 2), as
    ``tvm.relay.testing.count``; ``prelude.mod`` must hold ``nat.rly``."""
    from xrelay.runtime.interpreter import ConstructorValue

    _, z, s = prelude.mod.get_type("nat")
    total = 0
    while True:
        if not isinstance(n, ConstructorValue):
            raise TypeError(f"count: {n!r} is not a nat value")
        if n.tag == z.tag:
            return total
        if n.tag != s.tag:
            raise ValueError(f"count: {n!r} is not a nat value")
        total, n = total + 1, n.fields[0]


def make_nat_value(prelude: Any, n: int) -> Any:
    """The run-time ``nat`` value of ``n`` (the inverse of ``count``)."""
    from xrelay.runtime.interpreter import ConstructorValue

    _, z, s = prelude.mod.get_type("nat")
    value = ConstructorValue(z.tag, [], z)
    for _ in range(n):
        value = ConstructorValue(s.tag, [value], s)
    return value


def make_nat_expr(prelude: Any, n: int) -> Any:
    """The expression ``succ(...succ(zero))`` of ``n``."""
    if n < 0:
        raise ValueError(f"make_nat_expr: {n} is negative")
    _, z, s = prelude.mod.get_type("nat")
    e = z()
    for _ in range(n):
        e = s(e)
    return e


def count_ops(mod: Any) -> Counter[str]:
    """How many times each relay op occurs in the module (all functions), by Relay name."""

    return Counter(list_op_freqs(mod))


def run_opt_pass(expr: Expr, opt_pass: Any) -> Expr:
    """Run ``opt_pass`` on ``IRModule.from_expr(expr)``; return main (or its body when
    ``expr`` is not a function), as Relay's helper (see ``main_or_body``)."""
    return main_or_body(opt_pass(IRModule.from_expr(expr)), expr)


def main_or_body(mod: IRModule, expr: Expr) -> Expr:
    """``mod["main"]`` of a module made by ``IRModule.from_expr(expr)`` (and passes), or, when
    ``expr`` is not a function, main's body over ``expr``'s own free variables, as Relay's
    passes keep them (main is rebuilt from the IR with new ones): it then compares with
    expressions built from the same variables (``assert_structural_equal`` matches free
    variables by identity)."""

    entry = mod["main"]
    if isinstance(expr, Function):
        return entry
    original = free_vars(expr)
    if len(original) != len(entry.params):
        return entry.body  # the pass changed main's parameters: nothing to map back
    return substitute(entry.body, dict(zip(entry.params, original)))


def run_infer_type(expr: Expr) -> Expr:
    """Types are inferred eagerly in xrelay; this returns ``expr`` after checking it has one."""
    expr.checked_type  # noqa: B018 - raises when the type is not known
    return expr


def __getattr__(name: str) -> Any:
    entry = _LAZY.get(name)
    if entry is not None:
        return getattr(importlib.import_module(entry[0]), entry[1])
    raise AttributeError(f"module 'xrelay.testing' has no attribute '{name}'")
