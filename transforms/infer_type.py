"""``infer-type``: recompute every result type from operands and attributes (Relay's InferType).

Relay's InferType fills ``checked_type`` on every expression. Here types live on SSA values, so
the pass recomputes them in place: after a rewrite, or after a function's parameter types were
changed by hand, every relay op's results, every ``func.call``'s results and every function's
signature are brought up to date, callees before callers. Every op that cannot be typed is
reported (not only the first), each message naming the op and the types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import DiagnosticException

from xrelay.dialects import op_location
from xrelay.dialects.relay import RelayOp, RelayTypeError
from xrelay.error import TVMError


class InferTypeError(DiagnosticException, TVMError):
    """One or more ops could not be typed; the message lists all of them."""


def call_graph_order(module: ModuleOp) -> list[func.FuncOp]:
    """Functions with callees before callers (cycles broken in program order)."""
    funcs = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    order: list[func.FuncOp] = []
    state: dict[str, int] = {}

    def visit(name: str) -> None:
        if state.get(name):
            return
        state[name] = 1
        fn = funcs[name]
        for op in fn.walk():
            if isinstance(op, func.CallOp) and op.callee.root_reference.data in funcs:
                visit(op.callee.root_reference.data)
        state[name] = 2
        order.append(fn)

    for name in funcs:
        visit(name)
    return order


def infer_function(
    fn: func.FuncOp, errors: list[str], funcs: dict[str, func.FuncOp] | None = None
) -> bool:
    """Retype ``fn``'s body and signature in place; return whether anything changed."""
    changed = False
    module = fn.parent_op()
    if funcs is None and isinstance(module, ModuleOp):
        funcs = _functions(module)
    for op in fn.walk():
        new_types = None
        if isinstance(op, RelayOp):
            try:
                new_types = op.inferred_types()
            except RelayTypeError as e:
                errors.append(f"{_at(op)}in @{fn.sym_name.data}: {e}")
                continue
        elif isinstance(op, func.CallOp) and isinstance(module, ModuleOp):
            callee = funcs.get(op.callee.root_reference.data)
            if callee is not None:
                new_types = list(callee.function_type.outputs.data)
                want_in = list(callee.function_type.inputs.data)
                got_in = [o.type for o in op.arguments]
                if want_in != got_in:
                    errors.append(
                        f"{_at(op)}in @{fn.sym_name.data}: func.call @{callee.sym_name.data} passes "
                        f"({', '.join(map(str, got_in))}) but the callee takes "
                        f"({', '.join(map(str, want_in))})"
                    )
                    continue
        if new_types is None:
            continue
        if len(new_types) != len(op.results):
            errors.append(f"{_at(op)}in @{fn.sym_name.data}: {op.name} has {len(op.results)} results, expected {len(new_types)}")
            continue
        for res, ty in zip(list(op.results), new_types):
            if res.type != ty:
                Rewriter.replace_value_with_new_type(res, ty)
                changed = True
    if not fn.is_declaration:
        ret = fn.get_return_op()
        if ret is not None:
            new_ft = FunctionType.from_lists([a.type for a in fn.args], [o.type for o in ret.operands])
            if new_ft != fn.function_type:
                fn.properties["function_type"] = new_ft
                changed = True
    return changed


def _at(op: Operation) -> str:
    """``file:line:column: `` of a parsed op (empty for one built in Python)."""
    where = op_location(op)
    return f"{where}: " if where else ""


def _functions(module: ModuleOp) -> dict[str, func.FuncOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}


def infer_types(module: ModuleOp) -> bool:
    """Run type inference over a module; raise ``InferTypeError`` listing every failure."""
    errors: list[str] = []
    changed = False
    funcs = _functions(module)
    for fn in call_graph_order(module):
        changed |= infer_function(fn, errors, funcs)
    if errors:
        raise InferTypeError("infer-type failed:\n  " + "\n  ".join(errors))
    return changed


@dataclass(frozen=True)
class InferTypePass(ModulePass):
    """Recompute every type in the module (Relay's ``InferType``)."""

    name = "infer-type"
    relay_name: ClassVar[str] = "InferType"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        infer_types(op)
