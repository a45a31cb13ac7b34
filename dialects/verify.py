"""Helpers shared by passes and tools.

``verify_module`` verifies a module in time linear in its size. xDSL 0.74 resolves every
``func.call`` (and every other symbol use) by scanning all ops of the symbol table, so verifying a
module of n functions and n calls costs n² (minutes for a fused 10k-op graph). While the module
is being verified nothing changes it, so the lookups can use an index built once per symbol
table.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Operation
from xdsl.traits import SymbolOpInterface, SymbolTable

from xrelay.dialects.dominance import verify_dominance


@contextlib.contextmanager
def indexed_symbol_lookup() -> Iterator[None]:
    """Within the block, ``SymbolTable.lookup_symbol`` uses a per-table name index.

    Only for code that does not add, remove or rename symbols inside the block (verification).
    """
    original = SymbolTable.lookup_symbol
    indexes: dict[int, tuple[Operation, dict[str, Operation]]] = {}

    def lookup(op: Operation, name: str | StringAttr | SymbolRefAttr) -> Operation | None:
        anchor: Operation | None = op
        while anchor is not None and not anchor.has_trait(SymbolTable):
            anchor = anchor.parent_op()
        if anchor is None or (isinstance(name, SymbolRefAttr) and name.nested_references):
            return original(op, name)
        entry = indexes.get(id(anchor))
        if entry is None or entry[0] is not anchor:
            table: dict[str, Operation] = {}
            for o in anchor.regions[0].block.ops:
                if (sym := o.get_trait(SymbolOpInterface)) is not None:
                    table.setdefault(sym.get_sym_attr_name(o).data, o)
            entry = (anchor, table)
            indexes[id(anchor)] = entry
        key = name.root_reference.data if isinstance(name, SymbolRefAttr) else (
            name.data if isinstance(name, StringAttr) else name
        )
        return entry[1].get(key)

    SymbolTable.lookup_symbol = staticmethod(lookup)  # type: ignore[method-assign]
    try:
        yield
    finally:
        SymbolTable.lookup_symbol = staticmethod(original)  # type: ignore[method-assign]


def verify_module(module: ModuleOp) -> None:
    """``module.verify()`` with symbol lookups through an index (linear instead of quadratic),
    then SSA dominance (which xDSL does not check)."""
    with indexed_symbol_lookup():
        module.verify()
    verify_dominance(module)
