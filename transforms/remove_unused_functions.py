"""``remove-unused-functions``: drop functions the entry functions cannot reach (Relay's RemoveUnusedFunctions).

Reachability follows every symbol reference in a function body (``func.call @f`` and any other
op attribute or property naming a symbol, such as a function used as a value), transitively,
starting from ``entry-functions`` (default ``main``). Every ``func.func`` not reached, definition
or declaration, is erased; other module-level ops are left alone.

Entry names that do not exist are ignored, as in Relay; but when none of them exists the pass
fails instead of emptying the module, since that is almost surely a wrong option.

```mlir
func.func @fn1(%x: tensor<1x1000xf32>) -> tensor<1x1000xf32> { func.return %x : tensor<1x1000xf32> }
func.func @fn2(%y: tensor<1x1000xf32>) -> tensor<1x1000xf32> { func.return %y : tensor<1x1000xf32> }
func.func @main(%z: tensor<1x1000xf32>) -> tensor<1x1000xf32> {
  %0 = func.call @fn1(%z) : (tensor<1x1000xf32>) -> tensor<1x1000xf32>
  ...
}
// after: @fn2 is gone, @fn1 and @main stay
```
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, SymbolRefAttr
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import DiagnosticException

from xrelay.error import TVMError


class RemoveUnusedFunctionsError(DiagnosticException, TVMError):
    pass


def _symbol_refs(attr: Attribute) -> Iterator[str]:
    if isinstance(attr, SymbolRefAttr):
        yield attr.root_reference.data
    elif isinstance(attr, ArrayAttr):
        for a in attr.data:
            yield from _symbol_refs(a)
    elif isinstance(attr, DictionaryAttr):
        for a in attr.data.values():
            yield from _symbol_refs(a)


def op_symbol_refs(op: Operation) -> list[str]:
    """Root names of the symbols ``op``'s properties and attributes reference."""
    names: list[str] = []
    for attr in (*op.properties.values(), *op.attributes.values()):
        names.extend(_symbol_refs(attr))
    return names


def referenced_symbols(fn: func.FuncOp) -> set[str]:
    """Names of every symbol referenced inside ``fn``'s body."""
    names: set[str] = set()
    for op in fn.body.walk():
        names.update(op_symbol_refs(op))
    return names


def reachable_functions(module: ModuleOp, entries: Iterable[str]) -> set[str]:
    """Names of the functions reachable from ``entries`` (the existing ones) through references."""
    funcs = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    seen: set[str] = set()
    work = [e for e in entries if e in funcs]
    while work:
        name = work.pop()
        if name in seen:
            continue
        seen.add(name)
        work.extend(n for n in referenced_symbols(funcs[name]) if n in funcs and n not in seen)
    return seen


def remove_unused_functions(module: ModuleOp, entries: Iterable[str] = ("main",)) -> list[str]:
    """Erase every function not reachable from ``entries``; return the erased names."""
    entries = tuple(entries)
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if funcs and not any(f.sym_name.data in entries for f in funcs):
        raise RemoveUnusedFunctionsError(
            f"remove-unused-functions: none of the entry functions {', '.join('@' + e for e in entries)} "
            f"exists (functions: {', '.join('@' + f.sym_name.data for f in funcs)})"
        )
    keep = reachable_functions(module, entries)
    removed = []
    for fn in funcs:
        if fn.sym_name.data not in keep:
            removed.append(fn.sym_name.data)
            Rewriter.erase_op(fn)
    return removed


@dataclass(frozen=True)
class RemoveUnusedFunctionsPass(ModulePass):
    """Delete the functions not reachable from the entry functions."""

    name = "remove-unused-functions"
    relay_name: ClassVar[str] = "RemoveUnusedFunctions"
    opt_level: ClassVar[int] = 1
    required: ClassVar[tuple[str, ...]] = ()

    entry_functions: tuple[str, ...] = ("main",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        remove_unused_functions(op, self.entry_functions)
