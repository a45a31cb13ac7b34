"""xrelay's dialects and the context that loads them.

``get_all_dialects`` follows xDSL's registry style: names to lazy factories, so tools start fast.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Dialect

from xrelay.dialects import _lexer_fix  # noqa: F401  (installs the linear string pattern)
from xrelay.dialects._locations import op_location  # ops keep their line:column (installs it)
from xrelay.dialects.adt import Adt
from xrelay.dialects.dyn import Dyn
from xrelay.dialects.memory import Memory
from xrelay.dialects.qnn import Qnn
from xrelay.dialects.ref import Ref
from xrelay.dialects.relay import Relay

__all__ = ["get_all_dialects", "make_context", "module_op", "op_location"]


def _relay() -> Dialect:

    return Relay


def _memory() -> Dialect:

    return Memory


def _qnn() -> Dialect:

    return Qnn


def _dyn() -> Dialect:

    return Dyn


def _ref() -> Dialect:

    return Ref


def _adt() -> Dialect:

    return Adt


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """xrelay's own dialects by name."""
    dialects: dict[str, Callable[[], Dialect]] = {"relay": _relay, "qnn": _qnn, "dyn": _dyn, "ref": _ref, "adt": _adt}
    try:
        import xrelay.dialects.memory  # noqa: F401

        dialects["memory"] = _memory
    except ImportError:
        pass
    return dialects


def make_context() -> Context:
    """A context with builtin, func, arith, test, tensor (its ``tensor.cast`` joins static and
    dynamic shapes), scf (``scf.if`` is Relay's If) and xrelay's dialects (relay, qnn, dyn, ref, adt, memory) loaded."""
    from xdsl.dialects.arith import Arith
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func
    from xdsl.dialects.scf import Scf
    from xdsl.dialects.tensor import Tensor
    from xdsl.dialects.test import Test

    ctx = Context()
    for d in (Builtin, Func, Arith, Test, Tensor, Scf):  # scf.if holds Relay's If
        ctx.load_dialect(d)
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx


def module_op(mod: Any) -> ModuleOp:
    """Return the `ModuleOp` behind `mod` (a `ModuleOp` or an object with `.module`)."""
    if isinstance(mod, ModuleOp):
        return mod
    inner = getattr(mod, "module", None)
    if isinstance(inner, ModuleOp):
        return inner
    raise TypeError(
        f"expected an xDSL ModuleOp or an IRModule holding one in '.module', "
        f"got {type(mod).__name__}"
    )
