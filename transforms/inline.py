"""``inline``: inline functions marked ``relay.inline`` into their callers (Relay's InlineGlobals).

Relay's rules (src/relay/transforms/inline.cc, docs/relay-semantics.md §2.3) on ``func.func``:

* A callee is inlined at a ``func.call`` when it has a body, carries ``relay.inline`` (non-zero),
  is not recursive (not in a cycle of the call graph) and is a leaf once its own callees have
  been processed: functions are handled bottom-up (callees before callers), so chains of inline
  functions collapse transitively.
* A function with ``relay.compiler`` or ``relay.extern`` (external codegen) is not inlined
  into its caller: as in Relay, the call becomes a call of the function *literal* instead. On
  outlined SSA functions a literal is a private ``func.func``: the callee is cloned once as a
  private function (attributes kept) and its calls are redirected to the clone; the global
  then goes like any inlined function.
* A global marked inline used as a value (``adt.closure @g``, a closure) becomes its function
  literal the same way: the closure refers to the private clone (Relay replaces the
  ``GlobalVar`` by the ``Function``).
* Afterwards every function marked inline that is neither recursive nor an original entry (a
  function nothing referenced before the pass) is deleted. If something still references it
  (for instance it calls a function that cannot be inlined, so it was not a leaf), the pass
  fails with Relay's message ``@f is marked as inline but not inlined``.

Inlining clones the callee's body in front of the call, binding its parameters to the call's
arguments, and replaces the call's results by the cloned return values. Cost is linear in the
size of the inlined code.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from xrelay.dialects.adt import ClosureOp
from xrelay.dialects.relay import FUNC_ATTRS
from xrelay.error import TVMError
from xrelay.transforms.remove_unused_functions import op_symbol_refs

INLINE_ATTR = FUNC_ATTRS["Inline"]
COMPILER_ATTR = FUNC_ATTRS["Compiler"]
EXTERN_ATTR = FUNC_ATTRS["Extern"]


class InlineError(DiagnosticException, TVMError):
    pass


def is_marked_inline(fn: func.FuncOp) -> bool:
    attr = fn.attributes.get(INLINE_ATTR)
    return isinstance(attr, IntegerAttr) and attr.value.data != 0


def _references(fn: func.FuncOp, names: set[str]) -> Counter[str]:
    """How many times ``fn``'s body references each function in ``names``."""
    refs: Counter[str] = Counter()
    if fn.is_declaration:
        return refs
    for op in fn.body.walk():
        if isinstance(op, func.CallOp):
            name = op.callee.root_reference.data
            if name in names:
                refs[name] += 1
            continue
        for name in op_symbol_refs(op):
            if name in names:
                refs[name] += 1
    return refs


def _sccs(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, callees' components first (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    n = stack.pop()
                    on_stack.discard(n)
                    comp.append(n)
                    if n == node:
                        break
                out.append(comp)
    return out


def _is_external(fn: func.FuncOp) -> bool:
    """Whether ``fn`` is compiled by an external codegen (``relay.compiler``, nonzero
    ``relay.extern``): Relay calls its literal rather than inlining its body."""
    extern = fn.attributes.get(EXTERN_ATTR)
    return COMPILER_ATTR in fn.attributes or (isinstance(extern, IntegerAttr) and extern.value.data != 0)


def inline_call(call: func.CallOp, callee: func.FuncOp) -> None:
    """Replace ``call`` by a copy of ``callee``'s body."""
    block = callee.body.block
    mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, call.arguments, strict=True))
    ret = None
    for op in block.ops:
        if isinstance(op, func.ReturnOp):
            ret = op
            break
        clone = op.clone(value_mapper=mapping)
        Rewriter.insert_op(clone, InsertPoint.before(call))
    if ret is None:
        raise InlineError(f"inline: @{callee.sym_name.data} has no func.return")
    for res, value in zip(call.results, ret.arguments, strict=True):
        res.replace_all_uses_with(mapping.get(value, value))
    Rewriter.erase_op(call)


def inline_module(module: ModuleOp) -> list[str]:
    """Inline every inlinable call; delete the inlined functions; return their names."""
    funcs = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    names = set(funcs)
    refs = {name: _references(fn, names) for name, fn in funcs.items()}
    refcount: Counter[str] = Counter()
    for name, counts in refs.items():
        for callee, k in counts.items():
            if callee != name:
                refcount[callee] += k
    original_entries = {name for name in funcs if refcount[name] == 0}
    graph = {name: set(counts) for name, counts in refs.items()}
    recursive: set[str] = set()
    order = _sccs(graph)
    for comp in order:
        if len(comp) > 1 or comp[0] in graph[comp[0]]:
            recursive.update(comp)

    def can_inline(name: str) -> bool:
        fn = funcs[name]
        return (
            not fn.is_declaration
            and name not in recursive
            and is_marked_inline(fn)
            and not refs[name]  # a leaf once its own callees were inlined
        )

    literals: dict[str, str] = {}

    def literal_of(name: str) -> str:
        """The private clone standing for the function literal of external ``name``."""
        if name not in literals:
            clone = funcs[name].clone()
            base, k = f"{name}_literal", 0
            taken = {o.sym_name.data for o in module.ops if isinstance(o, func.FuncOp)}
            literal = base
            while literal in taken:
                k += 1
                literal = f"{base}_{k}"
            clone.sym_name = StringAttr(literal)
            clone.sym_visibility = StringAttr("private")
            module.body.block.insert_op_after(clone, funcs[name])
            literals[name] = literal
        return literals[name]

    for comp in order:
        for name in comp:
            fn = funcs[name]
            if fn.is_declaration or not refs[name]:
                continue
            for op in list(fn.body.walk()):
                if not isinstance(op, func.CallOp | ClosureOp):
                    continue
                callee = op.callee.root_reference.data
                if callee == name or callee not in funcs or not can_inline(callee):
                    continue
                if isinstance(op, ClosureOp) or _is_external(funcs[callee]):
                    # a global used as a value becomes its function literal (Relay's Inline)
                    op.callee = SymbolRefAttr(literal_of(callee))
                else:
                    inline_call(op, funcs[callee])
                refs[name][callee] -= 1
                if not refs[name][callee]:
                    del refs[name][callee]
                refcount[callee] -= 1

    removed = []
    for comp in order:
        for name in comp:
            fn = funcs[name]
            if name in recursive or name in original_entries or not is_marked_inline(fn):
                continue
            if refcount[name]:
                raise InlineError(f"inline: @{name} is marked as inline but not inlined")
            removed.append(name)
    for name in removed:
        Rewriter.erase_op(funcs[name])
    return removed


@dataclass(frozen=True)
class InlinePass(ModulePass):
    """Inline the functions marked ``relay.inline`` and delete them."""

    name = "inline"
    relay_name: ClassVar[str] = "InlineGlobals"
    opt_level: ClassVar[int] = 1
    required: ClassVar[tuple[str, ...]] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        inline_module(op)
