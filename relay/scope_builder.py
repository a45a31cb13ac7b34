"""``relay.ScopeBuilder``: build nested ``let`` / ``if`` expressions imperatively, as Relay's.

::

    sb = relay.ScopeBuilder()
    t = sb.let("t", relay.add(x, relay.const(1.0)))
    with sb.if_scope(cond):
        sb.ret(relay.multiply(t, t))
    with sb.else_scope():
        sb.ret(t)
    body = sb.get()          # Let(t, add(x, 1f), If(cond, multiply(t, t), t))

Each scope collects ``let`` bindings and one return value (``ret``); ``get`` folds the
bindings around the value. An ``if_scope`` must be followed by an ``else_scope`` in the same
scope; the errors are Relay's (``ret`` twice, ``else`` without ``if``, no ``ret``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from xrelay.relay.expr import Expr, If, Let, Var, var

__all__ = ["ScopeBuilder"]


class _PartialIf:
    """An ``if_scope`` whose ``else_scope`` has not been written yet."""

    def __init__(self, cond: Expr, then: Expr):
        self.cond, self.then = cond, then


def _fold(bindings: list[tuple[Var, Expr]], ret: Any) -> Expr:
    if ret is None:
        raise RuntimeError("ret is not called in this scope")
    if isinstance(ret, _PartialIf):
        raise RuntimeError("Creating an If expression without else.")
    out = ret
    for v, value in reversed(bindings):
        out = Let(v, value, out)
    return out


class ScopeBuilder:
    """Relay's ``ScopeBuilder``: ``let``, ``if_scope``, ``else_scope``, ``ret``, ``get``."""

    def __init__(self) -> None:
        self._bindings: list[list[tuple[Var, Expr]]] = [[]]
        self._rets: list[Any] = [None]

    @contextmanager
    def _scope(self, on_exit: Callable[[list[tuple[Var, Expr]], Any], None]) -> Iterator[None]:
        self._bindings.append([])
        self._rets.append(None)
        ok = False
        try:
            yield None
            ok = True
        finally:
            bindings, ret = self._bindings.pop(), self._rets.pop()
            if ok:
                on_exit(bindings, ret)

    def let(self, variable: Var | str | tuple[str, Any] | list[Any], value: Expr) -> Var:
        """Bind ``value`` to a variable (a ``Var``, a name, or ``(name, type)``); returns it."""
        if isinstance(variable, tuple | list):
            if len(variable) > 2:
                raise ValueError("Expect var to be Tuple[str, relay.Type]")
            variable = var(*variable)
        elif isinstance(variable, str):
            variable = var(variable)
        self._bindings[-1].append((variable, value))
        return variable

    def if_scope(self, cond: Expr) -> Any:
        """A ``with`` block building the true branch; an ``else_scope`` must follow."""

        def done(bindings: list[tuple[Var, Expr]], ret: Any) -> None:
            if self._rets[-1] is not None:
                raise RuntimeError("result already returned before if scope")
            self._rets[-1] = _PartialIf(cond, _fold(bindings, ret))

        return self._scope(done)

    def else_scope(self) -> Any:
        """A ``with`` block building the false branch of the ``if_scope`` just closed."""

        def done(bindings: list[tuple[Var, Expr]], ret: Any) -> None:
            partial = self._rets[-1]
            if not isinstance(partial, _PartialIf):
                raise RuntimeError("else scope must follows")
            self._rets[-1] = If(partial.cond, partial.then, _fold(bindings, ret))

        if not isinstance(self._rets[-1], _PartialIf):
            raise RuntimeError("else scope must follows")
        return self._scope(done)

    def type_of(self, expr: Expr) -> Any:
        """The type of ``expr`` (a variable's annotation; otherwise its inferred type)."""
        if isinstance(expr, Var):
            return expr.type_annotation
        return expr.checked_type

    def ret(self, value: Expr) -> None:
        """Set the value of the current scope."""
        if self._rets[-1] is not None:
            raise RuntimeError("ret value is already set in this scope.")
        self._rets[-1] = value

    def get(self) -> Expr:
        """The expression built (only at the outermost scope)."""
        if len(self._bindings) != 1:
            raise RuntimeError("can only call get at the outmost scope")
        return _fold(self._bindings[-1], self._rets[-1])
