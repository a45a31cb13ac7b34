"""Fused elementwise functions as one C loop (``native_loop.h``): every value once in registers.

A fused function made of float32 elementwise ops -- ``add``, ``subtract``, ``multiply``,
``divide``, ``maximum``, ``minimum``, ``negative``, ``abs``, ``exp``, ``tanh``, ``sigmoid``,
``nn.relu``, ``nn.prelu``, ``sqrt``, ``clip``, ``where`` of a bool condition -- and of the ops that only say
where elements are (``split``, ``strided_slice``, ``transpose``, ``reshape``, ``squeeze``,
``expand_dims``, ``nn.batch_flatten``, ``repeat``, broadcasting) ran op by op, each op a numpy call over the whole tensor
and a temporary: an unrolled LSTM cell's gates (``split`` of the projected gates, three
``sigmoid``, two ``tanh``, three ``multiply``, an ``add``) were about ten calls, 50-70 us a
time step for 1536 elements. Here each result is an expression over the function's inputs:
the placement ops move to the inputs (a ``split`` of ``add(a, b)`` is the ``add`` of the two
slices; slices and broadcasts are strided numpy views of the arena), the expression is
compiled, when the step is bound, into a short program of loads, ops and stores, and one C
call runs it over the result in blocks of 64 elements held in registers on the stack. (A
gated activation written with slices, WaveNet's ``tanh(a) * sigmoid(b)`` of a convolution's
two halves, ran op by op the same way: 560-800 us for 64,000 elements, against some tens in
one loop.)::

    %s:4 = relay.split %g {indices_or_sections = 4, axis = 1}   // (16, 384) -> 4 x (16, 96)
    %i = relay.sigmoid %s#0 ... %c = relay.add(%fc, %ig) ...
    // one pass over the (16, 96) result: load g[:, 0:96], g[:, 192:288], g[:, 288:384] and
    // c; sigmoid, sigmoid, tanh, multiply, multiply, add; store

The program is a ``c_call``, so the steps around it that are C calls too (another elementwise
loop, a native job) run in one C call from ``run`` (``native.steps.join_steps``).

**Bits.** The arithmetic ops, ``sqrt``, ``where``, ``abs`` and the clip compute numpy's values
exactly; ``exp``, ``tanh`` and ``sigmoid`` use Cephes' single-precision polynomials,
vectorised (numpy's and the C library's are not in reach of the loop): within 3 units in the
last place of the correctly rounded result, so their last bits may differ from the numpy
reference kernels' (``build(use_c_kernels=False)`` keeps those). A big loop runs in parts of
its rows on the pool's threads (``compile_loop``), each element computed as in the whole
loop: the same bits for every thread count. Values the same along the innermost dimension
are computed once per row (``ROW_ONCE``): the same operations, so the same bits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType

from xrelay.dialects.relay import ConstantOp, RelayOp
from xrelay.dialects.relay.ops import strided_slice_bounds
from xrelay.runtime.native.library import NATIVE_PARTS_PER_THREAD, c_call, call_job, loop_kernel
from xrelay.runtime.native.movement import split_movement
from xrelay.runtime.npz import private_copy

__all__ = ["LOOP_OPS", "compile_elementwise_loop", "compile_loop", "input_loop", "loopable"]

_BINARY = {"add": 10, "subtract": 11, "multiply": 12, "divide": 13, "maximum": 14, "minimum": 15}
_UNARY = {
    "negative": 20,
    "abs": 21,
    "exp": 22,
    "tanh": 23,
    "sigmoid": 24,
    "nn.relu": 25,
    "sqrt": 26,
}
_PRELU = 16  # x > 0 ? x : x * alpha, alpha broadcast along the op's axis
_LOAD, _LOAD_BOOL, _STORE, _SELECT = 0, 1, 2, 30
_RESHAPES = frozenset({"reshape", "squeeze", "expand_dims", "nn.batch_flatten", "reshape_like"})
_PLACEMENT = frozenset({"split", "strided_slice", "transpose", "image.resize2d", "repeat", *_RESHAPES})
LOOP_OPS = frozenset({*_BINARY, *_UNARY, "clip", "where", "nn.prelu", *_PLACEMENT})
"""The ops a function may be made of to run as one elementwise loop."""

LOOP_DIMS = 5
"""Dimensions of a loop's index space (``native_loop.h``): a nearest upsampling's result
seen with its factor axes needs five (rows, factor, columns, factor, channels)."""

REGISTERS = 32
"""Blocks the loop holds at once (``XR_LOOP_REGS``)."""

PART_ELEMENTS = 16384
"""The fewest result elements of one part of a loop cut for the pool's threads (some
microseconds of work: an LSTM time step's gates, a few hundred elements, stay one call)."""

SHORT_ROW = 16
"""An innermost dimension shorter than this gives its place to the longest other one
(``_dims``)."""

ROW_CUT = 4096
"""The longest row a long contiguous loop is cut into (``_dims``): rows are what the pool's
threads take parts of, and a fused function over a whole contiguous tensor is one row."""

STRIDED_ROW = 16
"""The least step (elements) along a loop's innermost dimension for which a function that
moves data (a ``transpose``) runs as the loop rather than as ``runtime.native.movement``'s
strided copies: a float32 cache line's elements, so that each element of a row of the
strided copy is a line of its own (SqueezeBERT's (768, 128) transposes around its layer
norms: numpy's copy 155-170 us, the tiled loop 59)."""

ROW_ONCE = 256
"""Flag of an instruction computing a value that is the same along the innermost dimension
(its loads broadcast along it): ``native_loop.h`` runs it in the first block of each row,
on one element broadcast to the block, and the row's later blocks read its register."""


@dataclass(eq=False)
class _Leaf:
    """An operand: a (strided, possibly broadcast) view of an input, a constant or a scalar."""

    array: np.ndarray


@dataclass(eq=False)
class _Node:
    """An op of the loop on values of ``shape``; every operand has that shape."""

    code: int
    shape: tuple[int, ...]
    operands: tuple[Any, ...]


@dataclass(eq=False)
class _Reshaped:
    """A value seen with another ``shape`` that no view of its operands gives (a reshape of a
    value with a broadcast operand: a PReLU's slope along the channels, then the flattening
    of a GroupNorm; a whole-factor upsampling). Elementwise ops on it are computed in the
    inner value's shape (their other operands seen so too), and a result's destination is
    viewed with that shape."""

    inner: Any
    shape: tuple[int, ...]


class _Refused(Exception):
    """The function does not run as one loop (the op-by-op path runs it)."""


def _shape(v: Any) -> tuple[int, ...]:
    return v.array.shape if isinstance(v, _Leaf) else v.shape


def _view(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``a`` reshaped without a copy (a strided view), else refused."""
    v = a.view()
    try:
        v.shape = shape
    except AttributeError:
        raise _Refused from None
    return v


def _placed(v: Any, place: Any, memo: dict) -> Any:
    """``v`` with the placement ``place`` (a function of a numpy view) applied: to a leaf's
    view, or pushed to the operands of an elementwise node (it commutes with placement)."""
    key = (id(v), id(place))
    if key in memo:
        return memo[key][2]
    if isinstance(v, _Leaf):
        out: Any = _Leaf(place(v.array))
    else:
        ops = tuple(_placed(o, place, memo) for o in v.operands)
        out = _Node(v.code, _shape(ops[0]), ops)
    memo[key] = (v, place, out)  # (both held: their ids stay their own)
    return out


def _broadcast(v: Any, shape: tuple[int, ...], memo: dict) -> Any:
    if _shape(v) == shape:
        return v
    return _placed(v, lambda a: np.broadcast_to(a, shape), memo)


def _upsampled(op: Any, shape: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """A nearest ``image.resize2d`` by whole factors (``kernels.spatial.nearest_whole_factors``)
    as (the input's shape with an axis of 1 after H and after W, the same with the factors
    there), else None: the input seen so, broadcast along the factor axes and reshaped, is
    the result."""
    from xrelay.dialects.relay.ops import parse_layout
    from xrelay.kernels.spatial import nearest_whole_factors

    letters = [ch for ch, _ in parse_layout(op.attrs.get("layout", "NCHW"))]
    ins = tuple(op.operands[0].type.get_shape())
    if "H" not in letters or "W" not in letters or len(letters) != len(ins):
        return None
    axes = (letters.index("H"), letters.index("W"))
    factors = nearest_whole_factors(op.attrs, ins, shape, axes)
    if factors is None:
        return None
    expanded, grown = [], []
    for k, n in enumerate(ins):
        expanded.append(n)
        grown.append(n)
        if k in axes:
            expanded.append(1)
            grown.append(factors[axes.index(k)])
    return tuple(expanded), tuple(grown)


def _type_ok(t: Any, bool_ok: bool = False) -> bool:
    if not isinstance(t, TensorType) or not t.has_static_shape():
        return False
    name = str(t.element_type)
    return name == "f32" or (bool_ok and name == "i1")


def loopable(op: Any) -> bool:
    """Whether ``op`` may be part of an elementwise loop (its kind and float32 results; the
    loop may still decline what it finds when the step is bound)."""
    return (
        isinstance(op, RelayOp)
        and op.RELAY_NAME in LOOP_OPS
        and all(_type_ok(r.type) for r in op.results)
    )


def _expressions(ops: Sequence[Any], value_of: Any) -> dict[Any, Any]:
    """Each value ``ops`` compute as a leaf or node over the arrays ``value_of`` gives for the
    values they read from outside (inputs, constants)."""
    env: dict[Any, Any] = {}
    memo: dict = {}
    for op in ops:
        if isinstance(op, ConstantOp):
            env[op.result] = _Leaf(private_copy(op.numpy()))
            continue
        if not isinstance(op, RelayOp) or op.RELAY_NAME not in LOOP_OPS:
            raise _Refused
        for v in op.operands:
            if v not in env:
                a = value_of(v)
                if not isinstance(a, np.ndarray):
                    raise _Refused
                env[v] = _Leaf(a)
        name = op.RELAY_NAME
        if not all(_type_ok(r.type) for r in op.results):
            raise _Refused
        vals = [env[v] for v in op.operands]
        shape = tuple(op.results[0].type.get_shape())
        outer = None
        if any(isinstance(v, _Reshaped) for v in vals):
            # an elementwise op of values seen reshaped (and of single elements) is computed
            # in their shape and seen reshaped too (a pixel shuffle, then its sigmoid)
            inner = next(_shape(v.inner) for v in vals if isinstance(v, _Reshaped))
            if (name not in _BINARY and name not in _UNARY and name != "clip") or not all(
                (v.shape, _shape(v.inner)) == (shape, inner) for v in vals if isinstance(v, _Reshaped)
            ):
                raise _Refused
            # single elements broadcast; values of the result's shape are seen in that shape
            # (a view when they are contiguous: a feature pyramid's other input, added to the
            # upsampled one), else refused (their raise)
            vals = [
                v.inner if isinstance(v, _Reshaped)
                else _Leaf(v.array.reshape(())) if isinstance(v, _Leaf) and v.array.size == 1
                else _placed(_broadcast(v, shape, memo), lambda a, s=inner: _view(a, s), memo)
                for v in vals
            ]  # fmt: skip
            outer, shape = shape, inner
        if name in _BINARY:
            if not all(_type_ok(v.type) for v in op.operands):
                raise _Refused
            env[op.results[0]] = _Node(
                _BINARY[name], shape, tuple(_broadcast(v, shape, memo) for v in vals)
            )
        elif name in _UNARY:
            if _shape(vals[0]) != shape:
                raise _Refused
            env[op.results[0]] = _Node(_UNARY[name], shape, (vals[0],))
        elif name == "nn.prelu":
            if not all(_type_ok(v.type) for v in op.operands):
                raise _Refused
            axis = int(op.attrs.get("axis", 1)) % len(shape)
            along = [1] * axis + [-1] + [1] * (len(shape) - axis - 1)  # (C,) along the axis
            along[axis] = shape[axis]
            alpha = _placed(vals[1], lambda a, s=tuple(along): _view(a, s), memo)
            env[op.results[0]] = _Node(
                _PRELU, shape, (_broadcast(vals[0], shape, memo), _broadcast(alpha, shape, memo))
            )
        elif name == "clip":
            lo = _Leaf(np.broadcast_to(np.array(op.attrs["a_min"], np.float32), shape))
            hi = _Leaf(np.broadcast_to(np.array(op.attrs["a_max"], np.float32), shape))
            env[op.results[0]] = _Node(
                _BINARY["minimum"], shape, (_Node(_BINARY["maximum"], shape, (vals[0], lo)), hi)
            )
        elif name == "where":
            cond, x, y = op.operands
            if not (_type_ok(cond.type, bool_ok=True) and str(cond.type.element_type) == "i1"):
                raise _Refused
            c = _broadcast(vals[0], shape, memo)
            if not isinstance(c, _Leaf):  # a computed condition is not a float of the loop
                raise _Refused
            env[op.results[0]] = _Node(
                _SELECT, shape, (c, *(_broadcast(v, shape, memo) for v in vals[1:]))
            )
        if outer is not None:
            env[op.results[0]] = _Reshaped(env[op.results[0]], outer)
            continue
        if name in _RESHAPES:
            try:
                env[op.results[0]] = _placed(vals[0], lambda a, s=shape: _view(a, s), memo)
            except _Refused:
                env[op.results[0]] = _Reshaped(vals[0], shape)
        elif name == "image.resize2d":
            up = _upsampled(op, shape)
            if up is None:
                raise _Refused
            expanded, grown = up
            seen = _placed(vals[0], lambda a, e=expanded, g=grown: np.broadcast_to(_view(a, e), g), memo)
            env[op.results[0]] = _Reshaped(seen, shape)
        elif name == "repeat":
            # every element k times along the axis: the input seen with an axis of 1 after
            # it, broadcast to k there, and reshaped (a depthwise convolution's channels
            # repeated for its multiplier: backend.dnnl.partition.depthwise_multiplier)
            ins = _shape(vals[0])
            axis = int(op.attrs["axis"]) % len(ins)
            expanded = (*ins[: axis + 1], 1, *ins[axis + 1 :])
            grown = (*ins[: axis + 1], int(op.attrs["repeats"]), *ins[axis + 1 :])
            seen = _placed(vals[0], lambda a, e=expanded, g=grown: np.broadcast_to(_view(a, e), g), memo)
            env[op.results[0]] = _Reshaped(seen, shape)
        elif name == "transpose":
            axes = op.attrs.get("axes")
            order = tuple(range(len(shape)))[::-1] if not axes else tuple(int(a) % len(shape) for a in axes)
            env[op.results[0]] = _placed(vals[0], lambda a, ax=order: a.transpose(ax), memo)
        elif name == "strided_slice":
            at = op.attrs
            bounds = strided_slice_bounds(
                _shape(vals[0]), at["begin"], at["end"], at["strides"], at["axes"], at["slice_mode"]
            )
            if bounds is None:
                raise _Refused
            # (a negative step ends at -1, "before 0": None in numpy's slice)
            index = tuple(slice(b, None if e < 0 else e, s) for b, e, s in bounds)
            env[op.results[0]] = _placed(vals[0], lambda a, i=index: a[i], memo)
        elif name == "split":
            axis = op.attrs.get("axis", 0) or 0
            size = _shape(vals[0])[axis % len(_shape(vals[0]))]
            spec = op.attrs["indices_or_sections"]
            cuts = (
                [size * k // spec for k in range(1, spec)] if isinstance(spec, int) else list(spec)
            )
            for r, lo, hi in zip(op.results, [0, *cuts], [*cuts, size]):
                index = (slice(None),) * (axis % len(_shape(vals[0]))) + (slice(lo, hi),)
                env[r] = _placed(vals[0], lambda a, i=index: a[i], memo)
    return env


def _dims(
    shape: tuple[int, ...], arrays: list[np.ndarray]
) -> tuple[list[int], list[list[int]]] | None:
    """The loop's index space (``LOOP_DIMS`` dims) and each array's strides in elements over
    it: size-1 dims dropped, neighbours merged where every array steps through them as one."""
    keep = [i for i, d in enumerate(shape) if d != 1]
    dims = [shape[i] for i in keep]
    strides = []
    for a in arrays:
        if any(s % a.itemsize for s in a.strides):
            return None
        strides.append([a.strides[i] // a.itemsize for i in keep])
    k = len(dims) - 1
    while k > 0:
        if all(s[k - 1] == s[k] * dims[k] for s in strides):
            dims[k - 1 : k + 1] = [dims[k - 1] * dims[k]]
            for s in strides:
                s[k - 1 : k + 1] = [s[k]]
        k -= 1
    if len(dims) > LOOP_DIMS:
        return None
    if len(dims) > 1 and dims[-1] < SHORT_ROW:
        # a short innermost dimension (a pixel shuffle's 3 sub-pixels) makes rows of a few
        # elements, each a block's whole overhead: the longest dimension goes innermost (its
        # strides may be any: the loop's loads and stores step by them)
        k = max(range(len(dims) - 1), key=lambda i: dims[i])
        if dims[k] >= 4 * dims[-1]:
            dims.append(dims.pop(k))
            for s in strides:
                s.append(s.pop(k))
    if len(dims) < LOOP_DIMS and dims and dims[-1] >= 2 * PART_ELEMENTS:
        # one long row (a contiguous result: everything merged) cut into rows, so that the
        # pool's threads can take parts of it (compile_loop cuts rows)
        row = _row_length(dims[-1])
        if row:
            dims[-1:] = [dims[-1] // row, row]
            for s in strides:
                s[-1:] = [s[-1] * row, s[-1]]
    pad = LOOP_DIMS - len(dims)
    return [1] * pad + dims, [[0] * pad + s for s in strides]


def _row_length(n: int) -> int:
    """A length of rows that cuts ``n`` elements evenly: the longest whole number of
    ``XR_LOOP_BLOCK`` (64) blocks up to ``ROW_CUT`` elements, else the longest length from
    ``ROW_CUT / 4`` up, else 0 (no such cut)."""
    blocks = [r for r in range(64, ROW_CUT + 1, 64) if n % r == 0]
    if blocks and blocks[-1] >= ROW_CUT // 4:
        return blocks[-1]
    near = [r for r in range(ROW_CUT // 4, ROW_CUT + 1) if n % r == 0]
    return near[-1] if near else 0


def _program(shape: tuple[int, ...], results: list[tuple[Any, np.ndarray]]) -> np.ndarray | None:
    """The int64 table of the loop computing ``results`` ((expression, destination) pairs of
    one shape), or None (too many live values, too many dimensions)."""
    order: list[Any] = []
    seen: set[int] = set()

    def visit(v: Any) -> None:
        if id(v) in seen:
            return
        seen.add(id(v))
        if isinstance(v, _Node):
            for o in v.operands:
                visit(o)
        order.append(v)

    for e, _ in results:
        visit(e)
    leaves = [v for v in order if isinstance(v, _Leaf)]
    arrays = [v.array for v in leaves] + [d for _, d in results]
    placed = _dims(shape, arrays)
    if placed is None:
        return None
    dims, strides = placed
    index = {id(v): k for k, v in enumerate(leaves)}
    # values the same along the innermost dimension (an RMSNorm's 1 / sqrt(mean + eps) per
    # row): computed once per row, not once per element (ROW_ONCE)
    once: set[int] = set()
    for v in order:
        if isinstance(v, _Leaf) and strides[index[id(v)]][-1] == 0 and dims[-1] > 1:
            once.add(id(v))
        elif isinstance(v, _Node) and all(id(o) in once for o in v.operands):
            once.add(id(v))
    if len(once) > REGISTERS // 2:
        once = set()  # (registers held for a whole row: no more than half of them)
    last: dict[int, int] = {}
    for k, v in enumerate(order):
        if isinstance(v, _Node):
            for o in v.operands:
                last[id(o)] = k
    for e, _ in results:
        last[id(e)] = len(order)
    # a row's values get registers of their own (below the others'): they are computed in
    # the row's first block only, so no later block may write over them
    held = iter(range(len(once)))
    free = list(range(REGISTERS - 1, len(once) - 1, -1))
    reg: dict[int, int] = {}
    code: list[list[int]] = []
    for k, v in enumerate(order):
        if id(v) not in once and not free:
            return None
        r = reg[id(v)] = next(held) if id(v) in once else free.pop()  # (never an operand's: no aliasing)
        flag = ROW_ONCE if id(v) in once else 0
        if isinstance(v, _Leaf):
            code.append([(_LOAD_BOOL if v.array.dtype == np.bool_ else _LOAD) | flag, r, index[id(v)], 0, 0])
            continue
        srcs = [reg[id(o)] for o in v.operands]
        code.append([v.code | flag, r, *srcs, *[0] * (3 - len(srcs))])
        for o in {id(o): o for o in v.operands}.values():  # read for the last time: free
            if last[id(o)] == k and id(o) not in once:  # (a row's value: held for the row)
                free.append(reg[id(o)])
    for j, (e, _) in enumerate(results):
        code.append([_STORE, len(leaves) + j, reg[id(e)], 0, 0])
    table = [*dims, len(arrays), len(code)]
    for a, s in zip(arrays, strides):
        table += [a.ctypes.data, *s]
    for c in code:
        table += c
    return np.array(table, np.int64)


def _strided_row(table: np.ndarray, least: int) -> bool:
    """Whether an operand of the program ``table`` steps by at least ``least`` elements along
    the innermost dimension (``native_loop.h`` then runs tiles of rows: ``XR_LOOP_TILE``)."""
    n = int(table[LOOP_DIMS])
    inner = table[LOOP_DIMS + 2 : LOOP_DIMS + 2 + 6 * n].reshape(n, 6)[:, 5]
    return bool(np.any(np.abs(inner) >= least))


def _leaf_arrays(exprs: list[Any]) -> list[np.ndarray]:
    out: dict[int, np.ndarray] = {}
    stack = list(exprs)
    while stack:
        v = stack.pop()
        if isinstance(v, _Leaf):
            out[id(v)] = v.array
        else:
            stack.extend(v.operands)
    return list(out.values())


def _overlap(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two destinations share an element: exactly (interleaved slices of one result,
    the joined values of ``_joined_tail``, do not), and yes where that is too hard to tell."""
    if not np.may_share_memory(a, b):
        return False
    try:
        return bool(np.shares_memory(a, b, max_work=100_000))
    except np.exceptions.TooHardError:
        return True


def compile_loop(
    ops: Sequence[Any],
    value_of: Any,
    results: Sequence[tuple[Any, np.ndarray]],
    pool: Any = None,
    strided: int = 0,
) -> list | None:
    """The thunks computing the values ``results`` names of ``ops`` (elementwise ops in an
    order that defines each before its uses) into their buffers, one C call per shape of
    result; None when the ops are not all ``LOOP_OPS`` on float32, a view cannot be made, a
    buffer overlaps an operand, or the program needs more registers or dimensions. With a
    ``pool`` of several threads, a loop of at least two ``PART_ELEMENTS`` runs in parts of
    its rows on the pool's threads (a native job; the one-thread program runs it whole):
    every element is computed as in the whole loop, so the bits do not depend on the cut.
    With ``strided``, None too unless an operand steps by at least that many elements along
    the loop's innermost dimension (``_strided_row``)."""
    fn_c = loop_kernel()
    if fn_c is None:
        return None
    try:
        env = _expressions(ops, value_of)
    except _Refused:
        return None
    exprs = [env.get(v) for v, _ in results]
    outs = [o for _, o in results]
    for k, (e, o) in enumerate(zip(exprs, outs)):
        if isinstance(e, _Reshaped):  # the destination seen with the computed shape
            if e.shape != o.shape or not o.flags.c_contiguous:
                return None
            exprs[k], outs[k] = e.inner, o.reshape(_shape(e.inner))
    if any(e is None or o.dtype != np.float32 or _shape(e) != o.shape for e, o in zip(exprs, outs)):
        return None
    leaves = _leaf_arrays(exprs)
    for k, o in enumerate(outs):  # a result written over what it does not read at its places
        for a in leaves:
            same = a.ctypes.data == o.ctypes.data and a.strides == o.strides and a.shape == o.shape
            if not same and np.may_share_memory(a, o):
                return None
        if any(_overlap(o, other) for other in outs[k + 1 :]):
            return None
    groups: dict[tuple[int, ...], list[tuple[Any, np.ndarray]]] = {}
    for e, o in zip(exprs, outs):
        groups.setdefault(o.shape, []).append((e, o))
    names = [op.RELAY_NAME for op in ops if not isinstance(op, ConstantOp)]
    label = ", ".join(dict.fromkeys(names)) + " as one loop"
    thunks = []
    for shape, group in groups.items():
        table = _program(shape, group)
        if table is None or (strided and not _strided_row(table, strided)):
            return None
        rows = math.prod(int(d) for d in table[: LOOP_DIMS - 1])
        keep = (table, [e for e, _ in group], [o for _, o in group])
        thunk = c_call(fn_c, table.ctypes.data, 0, rows, keep=keep)
        parts = 0 if pool is None or pool.threads < 2 else min(
            rows, pool.threads * NATIVE_PARTS_PER_THREAD, rows * int(table[LOOP_DIMS - 1]) // PART_ELEMENTS
        )  # fmt: skip
        if parts >= 2:
            cut = [(rows * k // parts, rows * (k + 1) // parts) for k in range(parts)]
            calls = [c_call(fn_c, table.ctypes.data, lo, hi, keep=keep) for lo, hi in cut]
            thunk = call_job(pool, calls, thunk) or thunk
        thunks.append((label, "elementwise", thunk))
    return thunks


def compile_elementwise_loop(
    fn: func.FuncOp, inputs: Sequence[np.ndarray], outs: Sequence[np.ndarray], pool: Any = None
) -> list[tuple[str, str, Any]] | None:
    """The thunks running the whole of ``fn`` as elementwise loops, or None (``compile_loop``;
    a function of one op keeps its kernel: one numpy call either way, and exp's bits stay
    numpy's; but ``nn.prelu``, the same bits in one pass). A function ending in a
    ``concatenate`` and transposes or reshapes of it stores the joined values in place
    (``_joined_tail``). A function that moves data with a
    ``transpose`` or ``strided_slice`` (and may end in a chain of binary ops with its
    arguments) is left to ``runtime.native.movement``'s strided copies, unless an operand
    steps by a cache line or more along the result's rows (``STRIDED_ROW``: a transpose)."""
    body = fn.body.block
    ops = [op for op in body.ops if op is not body.last_op]
    computed = [op for op in ops if not isinstance(op, ConstantOp)]
    if len(computed) == 1 and computed[0].RELAY_NAME not in (*_PLACEMENT, "nn.prelu"):
        return None  # (a prelu alone: numpy's where of a product, three calls; the loop's bits)
    moving = any(op.RELAY_NAME in ("transpose", "strided_slice") for op in computed) and split_movement(fn)
    if not all(isinstance(t, TensorType) for t in fn.function_type.outputs.data):
        return None
    args = dict(zip(body.args, inputs))
    if any(op.RELAY_NAME == "concatenate" for op in computed):
        tail = None if moving else _joined_tail(body, ops, outs)
        return None if tail is None else compile_loop(tail[0], args.get, tail[1], pool)
    # data movement (and a chain after it) is movement's strided copies, unless an element
    # of a row is a cache line from the next (a transpose): the loop's tiles of rows then
    # read each line once where a strided copy reads it once per element
    strided = STRIDED_ROW if moving else 0
    return compile_loop(ops, args.get, list(zip(body.last_op.operands, outs)), pool, strided=strided)


def _joined_tail(body: Any, ops: list[Any], outs: Sequence[np.ndarray]) -> tuple[list[Any], list[Any]] | None:
    """A function whose one result is a ``concatenate`` of values, then only transposes and
    reshapes of it: the ops before that tail, and each joined value with the view of the
    result it lands in (a slice of the result seen back through the transposes), or None.
    The loop then stores each value in place: no joined temporary, no copy through the
    transposes (RAFT's correlation lookup: the sampling grid's two coordinates computed,
    joined on the last axis and transposed to channels first, 44 steps of 150 us)::

        %x = relay.subtract %a, %p3 ...    %y = relay.subtract %b, %p3 ...
        %j = relay.concatenate %x, %y {axis = -1} : ... -> tensor<256x7x7x2xf32>
        %r = relay.transpose %j {axes = [0, 3, 1, 2]} : ... -> tensor<256x2x7x7xf32>
        // the loop stores %x at r[:, 0] and %y at r[:, 1] (views of the destination)
    """
    ret = body.last_op
    if len(ret.operands) != 1 or len(outs) != 1:
        return None
    view, v, tail = outs[0], ret.operands[0], []
    while True:
        op = v.owner
        if not isinstance(op, RelayOp) or op not in ops or len(list(v.uses)) != 1 or not isinstance(op.operands[0].type, TensorType):
            return None
        tail.append(op)
        if op.RELAY_NAME == "concatenate":
            break
        if op.RELAY_NAME == "transpose":
            axes = op.attrs.get("axes")
            order = list(range(view.ndim))[::-1] if not axes else [int(a) % view.ndim for a in axes]
            view = view.transpose(np.argsort(order))
        elif op.RELAY_NAME in _RESHAPES:
            try:
                view = _view(view, tuple(op.operands[0].type.get_shape()))
            except _Refused:
                return None
        else:
            return None
        v = op.operands[0]
    joined = tail[-1]
    axis = int(joined.attrs.get("axis", 0)) % view.ndim
    results, start = [], 0
    for x in joined.operands:
        if not isinstance(x.type, TensorType):
            return None
        n = x.type.get_shape()[axis]
        results.append((x, view[(slice(None),) * axis + (slice(start, start + n),)]))
        start += n
    if start != view.shape[axis]:
        return None
    return [op for op in ops if op not in tail], results


def input_loop(fn: func.FuncOp) -> tuple[list[Any], list[Any]] | None:
    """The part of ``fn`` (not all of it) an elementwise loop can compute first: the loopable
    ops that read only the function's inputs, constants and each other, when at least two of
    them compute (not only place), and the values of theirs the rest of the function (or its
    return) reads: ``(ops, live-outs)``, else None. The LSTM's last time step fused with the
    stack of the outputs: its gate math is such a part, the stacks the rest."""
    body = fn.body.block
    inside: set[Any] = set(body.args)
    part: list[Any] = []
    for op in body.ops:
        if op is body.last_op:
            break
        if isinstance(op, ConstantOp) or (loopable(op) and all(v in inside for v in op.operands)):
            part.append(op)
            inside.update(op.results)
    computing = [
        op for op in part if not isinstance(op, ConstantOp) and op.RELAY_NAME not in _PLACEMENT
    ]
    rest = [op for op in body.ops if op not in set(part)]
    if len(computing) < 2 or len(rest) < 2:
        return None
    made = {r for op in part if not isinstance(op, ConstantOp) for r in op.results}
    live = list(dict.fromkeys(v for op in rest for v in op.operands if v in made))
    return part, live
