"""Structural equality of relay modules, functions and expressions, as ``tvm.ir.structural_equal``.

What is compared (TVM's ``SEqualReduce`` of Relay's nodes, on xrelay's SSA form):

* **Modules**: every public function, matched by name (a function only one module has is a
  difference); private functions (Relay's function literals, outlined) are compared where they
  are called, and any nothing calls are compared in module order.
* **Functions**: visibility (a global function against a literal), type, attributes
  (``Primitive``, ``Composite="dnnl.a"``, ...) and body. Parameters are definitions: they are
  matched by position and their names do not matter.
* **Calls of functions** compare the callees' bodies by structure, with a map of global
  symbols: a callee of one side is always matched with the same callee of the other
  (``@f`` twice against ``@g`` then ``@h`` is a difference). A call of a global function must
  name the same global (Relay's ``GlobalVar`` is compared by name).
* **Graphs**: the returned values are the same graph: the same ops with the same attributes and
  result types over equal operands. The order ops are printed in does not matter (Relay's
  dataflow is a graph), names do not matter, and sharing must match: one value used twice is
  not two equal values. Constants are compared by value (sharing one constant or using two
  equal ones is the same).
* **Lets**: a let-bound value (a call whose result has a name of its own, as a Relay ``let``
  leaves it, or any call in A-normal form: ``xrelay.relay.text_printer.is_let_bound``, what
  the text printer prints as a ``let``) is compared as a binding: both sides must bind the same
  number of lets, in the same order, whether the body uses them or not, and a let-bound value
  is not equal to an unnamed one. Values nothing uses (dead code) are compared too, in order,
  except unnamed constants (an unused field of a tuple literal, which Relay has no node for).
* **Type definitions** (``adt.type_def``, Relay's ``TypeData``) of two modules are matched by
  name: the same type parameters and constructors, in order, with the same field types. A
  ``match`` is compared as an op with regions: its patterns (attributes) and each clause's
  body in its own scope; an ``adt.call`` like a call (the callee's body, a global by name).
* **If**: the condition and both branches, each branch in its own scope (a value computed in a
  branch is not equal to the same value computed before the ``If``).
* **Free variables** of a bare expression (not a function) are compared by identity, as TVM's
  default: ``x*x - y*y`` is not ``y*y - x*x``. With ``map_free_vars=True`` they are matched in
  order of first use, as TVM maps them when first met.

>>> from xrelay import relay
>>> x = relay.var("x", shape=(2,))
>>> y = relay.var("y", shape=(2,))
>>> assert_structural_equal(relay.Function([x], relay.exp(x)), relay.Function([y], relay.exp(y)))
>>> structural_equal(x * x - y * y, y * y - x * x)
False
>>> structural_equal(x * x - y * y, y * y - x * x, map_free_vars=True)
True
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue

from xrelay.dialects.adt import AdtCallOp, TypeDefOp
from xrelay.dialects.relay import ConstantOp, RelayTypeError
from xrelay.relay.analysis import free_vars
from xrelay.relay.expr import Expr, Function, GlobalVar, Op, TupleWrapper
from xrelay.relay.module import IRModule, lower_function
from xrelay.relay.text_printer import is_let_bound
from xrelay.transforms.to_a_normal_form import A_NORMAL_FORM_ATTR

__all__ = ["assert_structural_equal", "structural_equal"]


_CONVERTED: OrderedDict[int, tuple[Any, Any, list[Any]]] = OrderedDict()
"""Expressions recently turned into modules (by id, the expression kept alive with it, and its
free variables): a test comparing one result with many candidates converts each once."""

_FUNC_HEADER = ("sym_name", "sym_visibility")  # compared on their own (names do not matter)


@dataclass
class _Side:
    """One side of a comparison: what kind of thing it was, its module (symbols for calls) and
    the function to start from (None: the whole module). ``free`` is the free variables of a
    bare expression, one per parameter of the function it was wrapped in."""

    kind: str
    module: ModuleOp | None
    entry: func.FuncOp | None
    free: list[Any] | None = None
    symbols: dict[str, func.FuncOp] = field(default_factory=dict)
    anf: bool = False  # in A-normal form: every call is let-bound

    def __post_init__(self) -> None:

        if self.module is not None:
            self.symbols = {op.sym_name.data: op for op in self.module.ops if isinstance(op, func.FuncOp)}
            self.anf = A_NORMAL_FORM_ATTR in self.module.attributes

    def let_bound(self, op: Operation) -> bool:

        return is_let_bound(op, self.anf)


def _side(x: Any) -> _Side:
    """What ``x`` (a module, a function or an expression) is compared as."""

    if isinstance(x, func.FuncOp):
        parent = x.parent_op()
        return _Side("function", parent if isinstance(parent, ModuleOp) else None, x)
    if isinstance(x, ModuleOp):
        return _Side("module", x, None)
    if isinstance(x, IRModule):
        return _Side("module", x.module, None)
    if isinstance(x, TupleWrapper):
        x = x.astuple()
    if not isinstance(x, Expr):
        raise TypeError(f"cannot compare {type(x).__name__}: expected a module, function or expression")
    hit = _CONVERTED.get(id(x))
    if hit is not None and hit[0] is x:
        _CONVERTED.move_to_end(id(x))
        mod, free = hit[1], hit[2]
    else:
        free = [] if isinstance(x, Function) else free_vars(x)
        mod = _as_module(x)
        _CONVERTED[id(x)] = (x, mod, free)
        if len(_CONVERTED) > 256:
            _CONVERTED.popitem(last=False)
    main = next(op for op in mod.module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
    if isinstance(x, Function):
        return _Side("function", mod.module, main)
    return _Side("expression", mod.module, main, free)


def _as_module(x: Any) -> Any:
    """``x`` as a module with ``main``; a function calling globals of a module it was taken out
    of (``mod["main"]``) calls them by name, as Relay's ``GlobalVar`` (``allow_external``)."""

    try:
        return IRModule.from_expr(x)
    except RelayTypeError:
        if not isinstance(x, Function):
            raise
        return IRModule.from_module_op(ModuleOp(lower_function(x, "main", allow_external=True)))


class _Mismatch(Exception):
    """A difference; its message (which prints IR) is only made when asked for."""

    def __init__(self, what: str, a: Any = None, b: Any = None):
        super().__init__(what)
        self.what, self.a, self.b = what, a, b
        self.where: list[str] = []

    def __str__(self) -> str:
        where = "".join(f"\n  in {w}" for w in self.where)
        if self.a is None:
            return self.what + where
        return f"{self.what}:\n  {_show(self.a)}\n  {_show(self.b)}{where}"




class _Comparer:
    def __init__(self, a: _Side, b: _Side):
        self.a, self.b = a, b
        self.a_to_b: dict[SSAValue, SSAValue] = {}
        self.b_to_a: dict[SSAValue, SSAValue] = {}
        self.ops: dict[Operation, Operation] = {}
        self.ops_back: dict[Operation, Operation] = {}
        self.blocks: dict[Block, Block] = {}
        self.sym: dict[str, str] = {}
        self.sym_back: dict[str, str] = {}
        self.pending: list[tuple[func.FuncOp, func.FuncOp]] = []

    # ---- modules and functions --------------------------------------------------------------

    def run(self, map_free_vars: bool) -> None:
        a, b = self.a, self.b
        if a.kind != b.kind:
            raise _Mismatch(f"a {a.kind} against a {b.kind}")
        if a.module is not None and b.module is not None:
            self.type_defs()
        if a.entry is not None and b.entry is not None:
            self._bind_symbol(a.entry.sym_name.data, b.entry.sym_name.data, queue=False)
            self.function(a.entry, b.entry, a.free, b.free, map_free_vars)
        else:
            pub_a = {n for n, f in a.symbols.items() if not _private(f)}
            pub_b = {n for n, f in b.symbols.items() if not _private(f)}
            if pub_a != pub_b:
                only_a, only_b = sorted(pub_a - pub_b), sorted(pub_b - pub_a)
                raise _Mismatch(f"global functions differ: only in the first {only_a}, only in the second {only_b}")
            for name in sorted(pub_a):
                self._bind_symbol(name, name)
        self.drain()
        if a.entry is None:
            # private functions nothing reached (a pass left them): compared in module order
            rest_a = [f for n, f in a.symbols.items() if n not in self.sym]
            rest_b = [f for n, f in b.symbols.items() if n not in self.sym_back]
            if len(rest_a) != len(rest_b):
                raise _Mismatch(f"{len(rest_a)} uncalled private functions vs {len(rest_b)}")
            for fa, fb in zip(rest_a, rest_b):
                self._bind_symbol(fa.sym_name.data, fb.sym_name.data)
            self.drain()

    def type_defs(self) -> None:
        """Relay's ``TypeData``s of the two modules, matched by name: the same type parameters
        and the same constructors in order, with the same field types."""
        defs_a, defs_b = _type_defs(self.a.module), _type_defs(self.b.module)
        if set(defs_a) != set(defs_b):
            only_a, only_b = sorted(set(defs_a) - set(defs_b)), sorted(set(defs_b) - set(defs_a))
            raise _Mismatch(f"type definitions differ: only in the first {only_a}, only in the second {only_b}")
        for name in sorted(defs_a):
            ta, tb = defs_a[name], defs_b[name]
            if ta.params != tb.params:
                raise _Mismatch(f"type @{name}: type parameters {ta.params} vs {tb.params}")
            if ta.constructors != tb.constructors:
                raise _Mismatch(f"type @{name}: constructors differ", ta, tb)

    def drain(self) -> None:
        while self.pending:
            fa, fb = self.pending.pop(0)
            self.function(fa, fb)

    def function(
        self,
        fa: func.FuncOp,
        fb: func.FuncOp,
        free_a: list[Any] | None = None,
        free_b: list[Any] | None = None,
        map_free_vars: bool = True,
    ) -> None:
        try:
            if _private(fa) != _private(fb):
                raise _Mismatch("a global function against a function literal (a private function)")
            if fa.function_type != fb.function_type:
                raise _Mismatch(f"function types differ: {fa.function_type} vs {fb.function_type}")
            props_a = {k: v for k, v in fa.properties.items() if k not in _FUNC_HEADER}
            props_b = {k: v for k, v in fb.properties.items() if k not in _FUNC_HEADER}
            if props_a != props_b or dict(fa.attributes) != dict(fb.attributes):
                raise _Mismatch(f"function attributes differ: {_attrs(fa)} vs {_attrs(fb)}")
            ba, bb = fa.body.block, fb.body.block
            self.blocks[ba] = bb
            if free_a is not None and not map_free_vars:
                self._bind_free_vars(ba, bb, free_a, free_b or [])
            else:
                for x, y in zip(ba.args, bb.args):
                    self._bind(x, y)
            self.block(ba, bb)
        except _Mismatch as e:
            e.where.append(f"@{fa.sym_name.data} vs @{fb.sym_name.data}")
            raise

    def _bind_free_vars(self, ba: Block, bb: Block, free_a: list[Any], free_b: list[Any]) -> None:
        """Free variables of bare expressions are the same variable object or different."""
        index_b = {id(v): i for i, v in enumerate(free_b)}
        for i, v in enumerate(free_a):
            j = index_b.get(id(v))
            if j is None:
                raise _Mismatch(f"free variable %{v.name_hint} of the first is not a free variable of the second")
            self._bind(ba.args[i], bb.args[j])
        if len(free_a) != len(free_b):
            extra = [v for v in free_b if all(v is not w for w in free_a)]
            raise _Mismatch(f"free variable %{extra[0].name_hint} of the second is not a free variable of the first")

    def _bind_symbol(self, na: str, nb: str, queue: bool = True) -> None:
        if self.sym.get(na, nb) != nb or self.sym_back.get(nb, na) != na:
            raise _Mismatch(
                f"@{na} is matched with @{self.sym.get(na, '?')} elsewhere but called here where the "
                f"other calls @{nb} (matched with @{self.sym_back.get(nb, '?')})"
            )
        if na in self.sym:
            return
        self.sym[na], self.sym_back[nb] = nb, na
        fa, fb = self.a.symbols.get(na), self.b.symbols.get(nb)
        if fa is None or fb is None:
            if fa is not fb:
                raise _Mismatch(f"@{na} and @{nb}: only one is defined in its module")
            if na != nb:
                raise _Mismatch(f"calls of undefined functions @{na} vs @{nb}")
            return
        if queue:
            self.pending.append((fa, fb))

    # ---- blocks -----------------------------------------------------------------------------

    def block(self, ba: Block, bb: Block) -> None:
        """The ops of two corresponding blocks (their arguments are bound): lets in order, the
        terminator's values, then whatever nothing uses, in order."""
        lets_a = [op for op in ba.ops if self.a.let_bound(op)]
        lets_b = [op for op in bb.ops if self.b.let_bound(op)]
        if len(lets_a) != len(lets_b):
            raise _Mismatch(f"{len(lets_a)} let bindings vs {len(lets_b)}")
        for p, q in zip(lets_a, lets_b):
            self.op_pair(p, q)
        ta, tb = ba.last_op, bb.last_op
        if ta is None or tb is None:
            if ta is not tb:
                raise _Mismatch("an empty block against a non-empty one")
            return
        self.op_pair(ta, tb)
        dead_a = [op for op in ba.ops if op not in self.ops and _dead(op)]
        dead_b = [op for op in bb.ops if op not in self.ops_back and _dead(op)]
        if len(dead_a) != len(dead_b):
            raise _Mismatch(f"{len(dead_a)} unused values vs {len(dead_b)}")
        for p, q in zip(dead_a, dead_b):
            self.op_pair(p, q)

    def op_pair(self, p: Operation, q: Operation) -> None:
        if p.results and q.results:
            self.value(p.results[0], q.results[0])
        elif p.results or q.results:
            raise _Mismatch("an op with results against one without", p, q)
        else:
            self._match_op(p, q)
            self.values(list(zip(p.operands, q.operands)))

    def value(self, x: SSAValue, y: SSAValue) -> None:
        self.values([(x, y)])

    def values(self, pairs: list[tuple[SSAValue, SSAValue]]) -> None:
        # Iterative: deep graphs (a ResNet) would overflow Python's recursion limit.
        stack = list(reversed(pairs))
        while stack:
            x, y = stack.pop()
            if isinstance(x, BlockArgument) != isinstance(y, BlockArgument):
                raise _Mismatch("a parameter against an op result", x, y)
            if isinstance(x, BlockArgument):
                if self.a_to_b.get(x) is not y or self.b_to_a.get(y) is not x:
                    raise _Mismatch("sharing differs at (different parameters)", x, y)
                continue
            assert isinstance(x, OpResult) and isinstance(y, OpResult)
            p, q = x.op, y.op
            if isinstance(p, ConstantOp) and isinstance(q, ConstantOp):
                # Relay compares constants by value; they are not graph nodes, so sharing
                # one constant or using two equal ones is the same
                self._same_op(p, q)
                continue
            if x in self.a_to_b or y in self.b_to_a:
                if self.a_to_b.get(x) is not y:
                    raise _Mismatch("sharing differs at", x, y)
                continue
            if x.index != y.index:
                raise _Mismatch(f"result {x.index} vs result {y.index} of", x, y)
            operands = self._match_op(p, q)
            stack.extend(reversed(operands))

    def _match_op(self, p: Operation, q: Operation) -> list[tuple[SSAValue, SSAValue]]:
        """Compare ``p`` with ``q`` as the same node (scope, op, attributes, regions, callee) and
        bind them; the operand pairs still to compare."""
        if p in self.ops or q in self.ops_back:
            if self.ops.get(p) is not q:
                raise _Mismatch("sharing differs at", p, q)
            return []
        if self.blocks.get(p.parent_block()) is not q.parent_block():  # type: ignore[arg-type]
            raise _Mismatch("computed in different scopes (e.g. inside an If branch against before it)", p, q)
        self._same_op(p, q)
        if self.a.let_bound(p) != self.b.let_bound(q):
            raise _Mismatch("a let-bound value against an unnamed one", p, q)
        self.ops[p], self.ops_back[q] = q, p
        for rx, ry in zip(p.results, q.results):
            self._bind(rx, ry)
        if isinstance(p, func.CallOp | AdtCallOp):
            self._bind_symbol(p.callee.root_reference.data, q.callee.root_reference.data)  # type: ignore[union-attr]
        for ra, rb in zip(p.regions, q.regions):
            if len(ra.blocks) != len(rb.blocks):
                raise _Mismatch("regions with different block counts", p, q)
            for xa, xb in zip(ra.blocks, rb.blocks):
                if [t.type for t in xa.args] != [t.type for t in xb.args]:
                    raise _Mismatch("blocks with different arguments", p, q)
                self.blocks[xa] = xb
                for u, v in zip(xa.args, xb.args):
                    self._bind(u, v)
                self.block(xa, xb)
        return list(zip(p.operands, q.operands))

    def _bind(self, x: SSAValue, y: SSAValue) -> None:
        self.a_to_b[x] = y
        self.b_to_a[y] = x

    @staticmethod
    def _same_op(p: Operation, q: Operation) -> None:
        why = None
        if p.name != q.name:
            why = "different ops"
        elif [r.type for r in p.results] != [r.type for r in q.results]:
            why = "different result types"
        elif len(p.operands) != len(q.operands):
            why = "different operand counts"
        elif len(p.regions) != len(q.regions):
            why = "different region counts"
        elif isinstance(p, ConstantOp) and isinstance(q, ConstantOp):
            # as TVM's NDArray equality: the bytes (NaNs of the same bits are equal, 0.0 and
            # -0.0 are not)
            if p.numpy().tobytes() != q.numpy().tobytes():
                why = "different constant values"
        elif isinstance(p, func.CallOp | AdtCallOp):
            if p.attributes != q.attributes:
                why = "different attributes"
        elif p.properties != q.properties or p.attributes != q.attributes:
            why = "different attributes"
        if why is not None:
            raise _Mismatch(why, p, q)


def _dead(op: Operation) -> bool:
    """Unused and part of the program: an unnamed constant nothing uses is not (it is what a
    tuple's unused field lowers to: ``(1, 2).0`` leaves ``2``; Relay has no node for it)."""
    if any(r.uses for r in op.results):
        return False
    return not (isinstance(op, ConstantOp) and op.result.name_hint is None)


def _type_defs(module: ModuleOp | None) -> dict[str, TypeDefOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, TypeDefOp)} if module else {}


def _private(f: func.FuncOp) -> bool:
    return f.sym_visibility is not None and f.sym_visibility.data == "private"


def _attrs(f: func.FuncOp) -> str:
    items = {**{k: v for k, v in f.properties.items() if k not in (*_FUNC_HEADER, "function_type")}, **f.attributes}
    return "{" + ", ".join(f"{k} = {v}" for k, v in sorted(items.items())) + "}"


def _show(v: SSAValue | Operation) -> str:
    if isinstance(v, Operation):
        return str(v)
    if isinstance(v, BlockArgument):
        return f"parameter {v.index} ({v.type})"
    return str(v.owner)


def _compare(a: Any, b: Any, map_free_vars: bool) -> _Mismatch | None:

    for x, y in ((a, b), (b, a)):
        if isinstance(x, Op | GlobalVar):
            if type(x) is not type(y):
                return _Mismatch(f"{x!r} against {y!r}")
            same = x.name == y.name if isinstance(x, Op) else (x is y or (map_free_vars and x.name_hint == y.name_hint))
            return None if same else _Mismatch(f"{x!r} vs {y!r}")
    try:
        sa, sb = _side(a), _side(b)
        _Comparer(sa, sb).run(map_free_vars)
    except _Mismatch as e:
        return e
    return None


def structural_equal(a: Any, b: Any, map_free_vars: bool = False) -> bool:
    """Whether ``a`` and ``b`` (modules, functions or expressions) are structurally equal."""
    return _compare(a, b, map_free_vars) is None


def assert_structural_equal(a: Any, b: Any, map_free_vars: bool = False) -> None:
    """Raise ``AssertionError`` naming the first difference (and the functions it is in) when
    ``a`` and ``b`` differ. ``map_free_vars`` as in ``structural_equal``."""
    why = _compare(a, b, map_free_vars)
    if why is not None:
        raise AssertionError(f"not structurally equal: {why}")
