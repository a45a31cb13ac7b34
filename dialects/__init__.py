"""xrelay's dialects and the context that loads them.

``get_all_dialects`` follows xDSL's registry style: names to lazy factories, so tools start fast.
Nothing here imports a dialect's module before the context needs it: a process that parses a
program (a deployed one reading ``lib.mlir``, ``runtime.load``) imports the dialects its text
names and those its own modules import, not ``adt``, ``ref``, ``scf`` or ``test`` for a
program without them (``tests/runtime/test_deployed_imports.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Dialect

from xrelay.dialects import _lexer_fix  # noqa: F401  (installs the linear string pattern)
from xrelay.dialects._locations import op_location  # ops keep their line:column (installs it)

__all__ = ["get_all_dialects", "make_context", "module_op", "op_location"]


def _relay() -> Dialect:
    from xrelay.dialects.relay import Relay

    return Relay


def _memory() -> Dialect:
    from xrelay.dialects.memory import Memory

    return Memory


def _qnn() -> Dialect:
    from xrelay.dialects.qnn import Qnn

    return Qnn


def _dyn() -> Dialect:
    from xrelay.dialects.dyn import Dyn

    return Dyn


def _ref() -> Dialect:
    from xrelay.dialects.ref import Ref

    return Ref


def _adt() -> Dialect:
    from xrelay.dialects.adt import Adt

    return Adt


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """xrelay's own dialects by name."""
    dialects: dict[str, Callable[[], Dialect]] = {
        "relay": _relay,
        "qnn": _qnn,
        "dyn": _dyn,
        "ref": _ref,
        "adt": _adt,
    }
    try:
        import xrelay.dialects.memory  # noqa: F401

        dialects["memory"] = _memory
    except ImportError:
        pass
    return dialects


def _arith() -> Dialect:
    from xdsl.dialects.arith import Arith

    return Arith


def _test() -> Dialect:
    from xdsl.dialects.test import Test

    return Test


def _tensor() -> Dialect:
    from xdsl.dialects.tensor import Tensor

    return Tensor


def _scf() -> Dialect:
    from xdsl.dialects.scf import Scf

    return Scf


def make_context() -> Context:
    """A context with builtin and func loaded, and arith, test, tensor (its ``tensor.cast``
    joins static and dynamic shapes), scf (``scf.if`` is Relay's If) and xrelay's dialects
    (relay, qnn, dyn, ref, adt, memory) registered: each loaded when a parsed text first
    names one of its ops or attributes."""
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func

    ctx = Context()
    for d in (Builtin, Func):
        ctx.load_dialect(d)
    xdsl_dialects = {"arith": _arith, "test": _test, "tensor": _tensor, "scf": _scf}
    for name, factory in {**xdsl_dialects, **get_all_dialects()}.items():
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
