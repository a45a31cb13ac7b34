"""What the ported TVM qnn tests need beyond ``from xrelay import relay``.

Each ported file keeps TVM's test bodies and golden values; only these calls change:

* ``graph, lib, params = relay.build(mod, "llvm")`` + ``graph_executor.create(...)`` and
  ``relay.create_executor("graph", ...).evaluate(func)(*args)`` become ``build(mod, params)``
  and ``evaluate(func)(*args)``: ``xrelay.build`` at the current PassContext's opt level (Relay's
  pipeline, qnn lowering first), planned, run in the arena executor; outputs are numpy arrays
  (so ``.numpy()`` is dropped);
* ``TempOpAttr(op, "FTVMQnnLegalize", ...)``: the tests override the target's qnn legalization
  so that no target rule applies; xrelay's ``qnn-legalize`` applies none unless asked
  (``fast-int8``), so the context does nothing.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

import xrelay
from xrelay import relay


class Module:
    """The built module; ``set_input`` copies into the input's dtype, as TVM's does."""

    def __init__(self, m: Any):
        self.m = m
        shapes, self.dtypes = m.get_input_info()
        self.names = list(shapes)

    def set_input(self, key: Any = None, value: Any = None, **inputs: Any) -> None:
        if key is not None:
            inputs[key if isinstance(key, str) else self.names[key]] = value
        for name, v in inputs.items():
            self.m.set_input(name, np.asarray(v).astype(self.dtypes[name]))

    def run(self, **inputs: Any) -> None:
        self.set_input(**inputs)
        self.m.run()

    def get_output(self, i: int) -> np.ndarray:
        return self.m.get_output(i)

    def get_num_outputs(self) -> int:
        return self.m.get_num_outputs()


def build(mod: Any, params: Any = None) -> Module:
    if isinstance(mod, relay.Function):
        mod = xrelay.IRModule.from_expr(mod)
    opt_level = relay.transform.PassContext.current().opt_level
    return Module(xrelay.build(mod.clone(), dict(params or {}), opt_level=opt_level, plan="greedy-by-size"))


def evaluate(func: Any):
    def call(*args: Any) -> Any:
        m = build(func)
        for i, a in enumerate(args):
            m.set_input(i, a)
        m.run()
        outs = [m.get_output(i) for i in range(m.get_num_outputs())]
        return outs[0] if len(outs) == 1 else outs

    return call


def vm_compile(mod: Any, target: Any = None, params: Any = None) -> Any:
    """``relay.vm.compile``: the module itself; xrelay has no VM, and the arena runtime needs
    static shapes, so ``VirtualMachine`` runs it in the reference interpreter."""
    return mod if not isinstance(mod, relay.Function) else xrelay.IRModule.from_expr(mod)


class VirtualMachine:
    """``tvm.runtime.vm.VirtualMachine``: ``invoke("main", **inputs)`` in the reference interpreter."""

    def __init__(self, exe: Any, device: Any = None):
        self.mod = exe

    def invoke(self, name: str, **inputs: Any) -> np.ndarray:
        return xrelay.run(self.mod, {k: np.asarray(v) for k, v in inputs.items()}, entry=name)[0]


@contextlib.contextmanager
def TempOpAttr(op_name: str, attr_key: str, attr_value: Any):  # noqa: N802 - TVM's name
    yield


def run_infer_type(expr: Any) -> Any:
    """Expressions are typed when built; ``checked_type`` is already there."""
    return expr
