"""Structural equality of relay functions, like ``tvm.ir.assert_structural_equal``.

Two functions are equal when their parameters have the same types (matched by position, as
with Relay's ``map_free_vars=True``) and their returned values are the same graph: the same
ops with the same attributes and result types over equal operands, constants with equal
values. The order in which ops are printed does not matter (Relay's expressions are graphs,
not lists), names do not matter, and sharing must match: one value used twice is not equal to
two equal values.

>>> from xrelay import relay
>>> x = relay.var("x", shape=(2,))
>>> y = relay.var("y", shape=(2,))
>>> assert_structural_equal(relay.Function([x], relay.exp(x)), relay.Function([y], relay.exp(y)))
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from xrelay.dialects.relay import ConstantOp

__all__ = ["assert_structural_equal", "structural_equal"]


_CONVERTED: OrderedDict[int, tuple[Any, Any]] = OrderedDict()
"""Expressions recently turned into modules (by id, the expression kept alive with it): a test
comparing one result with many candidates converts each candidate once."""


def _main(x: Any) -> func.FuncOp:
    """The function to compare: a FuncOp, a module's ``main``, or an expression's."""
    if isinstance(x, func.FuncOp):
        return x
    if not isinstance(x, ModuleOp) and not hasattr(x, "module"):
        from xrelay.relay.expr import Expr
        from xrelay.relay.module import IRModule

        if not isinstance(x, Expr):
            raise TypeError(f"cannot compare {type(x).__name__}: expected a function, module or expression")
        hit = _CONVERTED.get(id(x))
        if hit is not None and hit[0] is x:
            _CONVERTED.move_to_end(id(x))
            x = hit[1]
        else:
            mod = IRModule.from_expr(x)
            _CONVERTED[id(x)] = (x, mod)
            if len(_CONVERTED) > 256:
                _CONVERTED.popitem(last=False)
            x = mod
    module = x if isinstance(x, ModuleOp) else x.module
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == "main":
            return op
    raise ValueError("the module has no @main function")


class _Mismatch(Exception):
    """A difference; its message (which prints IR) is only made when asked for."""

    def __init__(self, what: str, a: Any = None, b: Any = None):
        super().__init__(what)
        self.what, self.a, self.b = what, a, b

    def __str__(self) -> str:
        if self.a is None:
            return self.what
        return f"{self.what}:\n  {_show(self.a)}\n  {_show(self.b)}"


class _Comparer:
    def __init__(self, a: func.FuncOp, b: func.FuncOp):
        self.a, self.b = a, b
        self.a_to_b: dict[SSAValue, SSAValue] = {}
        self.b_to_a: dict[SSAValue, SSAValue] = {}

    def run(self) -> None:
        args_a, args_b = self.a.body.block.args, self.b.body.block.args
        if len(args_a) != len(args_b):
            raise _Mismatch(f"{len(args_a)} parameters vs {len(args_b)}")
        for i, (x, y) in enumerate(zip(args_a, args_b)):
            if x.type != y.type:
                raise _Mismatch(f"parameter {i}: {x.type} vs {y.type}")
            self._bind(x, y)
        ret_a, ret_b = self.a.body.block.last_op, self.b.body.block.last_op
        assert isinstance(ret_a, func.ReturnOp) and isinstance(ret_b, func.ReturnOp)
        if len(ret_a.operands) != len(ret_b.operands):
            raise _Mismatch(f"{len(ret_a.operands)} results vs {len(ret_b.operands)}")
        for x, y in zip(ret_a.operands, ret_b.operands):
            self.value(x, y)

    def _bind(self, x: SSAValue, y: SSAValue) -> None:
        self.a_to_b[x] = y
        self.b_to_a[y] = x

    def value(self, x: SSAValue, y: SSAValue) -> None:
        # Iterative: deep graphs (a ResNet) would overflow Python's recursion limit.
        stack = [(x, y)]
        while stack:
            x, y = stack.pop()
            if isinstance(x, BlockArgument) != isinstance(y, BlockArgument):
                raise _Mismatch("a parameter against an op result", x, y)
            if isinstance(x.owner, ConstantOp) and isinstance(y.owner, ConstantOp):
                # Relay compares constants by value; they are not graph nodes, so sharing
                # one constant or using two equal ones is the same
                self._same_op(x.owner, y.owner)
                continue
            if x in self.a_to_b or y in self.b_to_a:
                if self.a_to_b.get(x) is not y:
                    raise _Mismatch("sharing differs at", x, y)
                continue
            assert isinstance(x, OpResult) and isinstance(y, OpResult)
            self._same_op(x.op, y.op)
            if x.index != y.index:
                raise _Mismatch(f"result {x.index} vs result {y.index} of", x, y)
            for rx, ry in zip(x.op.results, y.op.results):
                self._bind(rx, ry)
            stack.extend(zip(x.op.operands, y.op.operands))

    @staticmethod
    def _same_op(p: Operation, q: Operation) -> None:
        why = None
        if p.name != q.name:
            why = "different ops"
        elif [r.type for r in p.results] != [r.type for r in q.results]:
            why = "different result types"
        elif len(p.operands) != len(q.operands):
            why = "different operand counts"
        elif isinstance(p, ConstantOp) and isinstance(q, ConstantOp):
            if not np.array_equal(p.numpy(), q.numpy()):
                why = "different constant values"
        elif p.properties != q.properties or p.attributes != q.attributes:
            why = "different attributes"
        if why is not None:
            raise _Mismatch(why, p, q)


def _show(v: SSAValue | Operation) -> str:
    if isinstance(v, Operation):
        return str(v)
    if isinstance(v, BlockArgument):
        return f"parameter {v.index} ({v.type})"
    return str(v.owner)


def _compare(a: Any, b: Any) -> _Mismatch | None:
    try:
        _Comparer(_main(a), _main(b)).run()
    except _Mismatch as e:
        return e
    return None


def structural_equal(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` (functions, modules' mains or expressions) are the same graph."""
    return _compare(a, b) is None


def assert_structural_equal(a: Any, b: Any, map_free_vars: bool = True) -> None:
    """Raise ``AssertionError`` naming the first difference when ``a`` and ``b`` differ.

    Parameters are always matched by position (Relay's ``map_free_vars=True``); the argument
    is accepted so Relay's calls port unchanged.
    """
    del map_free_vars
    why = _compare(a, b)
    if why is not None:
        raise AssertionError(f"not structurally equal: {why}")
