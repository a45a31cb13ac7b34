"""``tvm.te``: importable so scripts that import it load; nothing in it can be used.

xrelay has no tensor-expression language or schedules: operators are relay ops with numpy and
C kernels. Any ``te.<name>`` raises an error saying what to use instead (``relay.var`` for
``te.placeholder``, relay ops for ``te.compute``, ``xrelay.build`` for ``te.create_schedule``
and ``tvm.build``).
"""

from __future__ import annotations

from typing import Any

from xrelay.error import UnsupportedError

_INSTEAD = {
    "placeholder": "relay.var(name, shape=..., dtype=...)",
    "var": "relay.var",
    "compute": "relay ops (relay.add, relay.nn.conv2d, ...) on relay.var inputs",
    "create_schedule": "xrelay.build(mod, params) (fusion and memory planning are automatic)",
    "create_prim_func": "a relay.Function",
    "reduce_axis": "the reductions relay.sum / relay.max / ... with axis=",
}


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    instead = _INSTEAD.get(name, "the relay ops (xrelay.relay) and xrelay.build")
    raise UnsupportedError(
        f"tvm.te.{name} is not available in xrelay (no tensor expressions or schedules); "
        f"use {instead} instead"
    )
