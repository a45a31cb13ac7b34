"""C99 for one primitive (fused) function: loops over its ops, through pointers, no allocation.

A primitive function ``@fused_add_relu(%a, %b) -> tensor<...>`` becomes

```c
XRELAY_FN void fused_add_relu(const float *in0, const float *in1, float *out0, uint8_t *ws) {
  for (int64_t i0 = 0; i0 < 64; ++i0) { ... }   /* relay.add, broadcast by strides */
  for (int64_t i = 0; i < 64; ++i) { ... }       /* relay.nn.relu */
}
```

Every op result that is not a result of the function lives in the scratch ``ws`` at an
offset fixed here (``scratch_bytes`` in all, 16-byte aligned slots), so the step's planned
workspace is all the memory it touches besides its operands and results. A slot is free again
once the op that last reads its value (or a view of it) has been emitted, and a later value
takes the first free gap that fits (first fit by offset), so the scratch is the most bytes live
at once inside the function, not the sum of its temporaries. Reshape-like ops (``reshape``, ``nn.batch_flatten``, ``expand_dims``,
``squeeze``) are views: the same pointer, no code. Elementwise and broadcasting ops, casts,
reductions, ``transpose``, ``concatenate`` and ``split`` are written out as loop nests with
constant strides; convolution, dense, pools and softmax call the loop nests of
``xrelay_kernels.h`` (shipped beside this file). Anything else is a ``CodegenError`` naming
the op.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType, i64
from xdsl.ir import Operation, SSAValue

from xrelay.dialects.relay import ConstantOp, RelayOp, dtype_of, numpy_dtype
from xrelay.dialects.relay.ops import parse_layout, reduce_axes, strided_slice_bounds
from xrelay.error import TVMError
from xrelay.kernels.evaluate import evaluate
from xrelay.kernels.qnn import _SQNN, _qrange
from xrelay.kernels.spatial import _axis_taps, _round_half_away

SCRATCH_ALIGN = 16
_WS_OFFSET = re.compile(r"\bws \+ (\d+)\)")
FOLD_LIMIT = 4096
"""The most elements an op folded while emitting C may have (``_Emitter.fold``)."""

C_TYPES = {
    "float32": "float",
    "float64": "double",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int32_t",
    "int64": "int64_t",
    "uint8": "uint8_t",
    "uint16": "uint16_t",
    "uint32": "uint32_t",
    "uint64": "uint64_t",
    "bool": "uint8_t",
    "float16": "float",
    "bfloat16": "float",
}
"""Relay dtypes the C target computes in, and the C types it computes them in."""

STORED_AS = {"float16": "uint16_t", "bfloat16": "uint16_t"}
"""Dtypes C has no type for: stored as their bits (in the arena, operands, results and
constants of ``@main``) and computed in float32 inside each function: a function converts such
operands to float on entry (``xr_<dtype>_to_f32``) and its results back on exit
(``xr_f32_to_<dtype>``, rounding to nearest even); a ``cast`` to the type rounds there too. So
a chain of fused float16 ops rounds once per function, not once per op as the reference
kernels do: results agree within float16 rounding, not bit for bit."""

C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto "
    "if inline int long register restrict return short signed sizeof static struct switch "
    "typedef union unsigned void volatile while _Bool _Complex _Imaginary".split()
)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class CodegenError(ValueError, TVMError):
    """A program the C target cannot emit (an op without a C lowering, a dynamic shape, ...)."""


def c_identifier(name: str, what: str) -> str:
    """``name`` if it is a C identifier that is not a keyword, else a ``CodegenError``."""
    if not _IDENT.match(name) or name in C_KEYWORDS:
        raise CodegenError(f"{what} '{name}' is not a C identifier (letters, digits and _)")
    return name


def c_type(t: TensorType, what: str) -> str:
    dt = dtype_of(t.element_type)
    if dt not in C_TYPES:
        raise CodegenError(f"{what} has dtype {dt}, which the C target does not compute in")
    return C_TYPES[dt]


def c_storage_type(t: TensorType, what: str) -> str:
    """The C type a tensor of ``t`` is stored in (``c_type`` but for ``STORED_AS`` dtypes)."""
    dt = dtype_of(t.element_type)
    return STORED_AS.get(dt) or c_type(t, what)


def stored_dtype(t: TensorType) -> str | None:
    """``float16``/``bfloat16`` for tensors stored as bits, else None."""
    dt = dtype_of(t.element_type)
    return dt if dt in STORED_AS else None


def static_shape(t: TensorType, what: str) -> tuple[int, ...]:
    shape = tuple(t.get_shape())
    if any(d < 0 for d in shape):
        raise CodegenError(f"{what} has a dynamic shape {t}: the C target needs static shapes")
    return shape


def c_literal(value: float | int | bool, ctype: str) -> str:
    """A C literal that reads back as exactly ``value`` in ``ctype``."""
    if ctype in ("float", "double"):
        v = float(value)
        if math.isnan(v):
            return "NAN"
        if math.isinf(v):
            return "INFINITY" if v > 0 else "-INFINITY"
        return v.hex() + ("f" if ctype == "float" else "")
    if ctype == "uint8_t" and isinstance(value, bool | np.bool_):
        return "1" if value else "0"
    v = int(value)
    if ctype in ("int64_t",) and v == -(1 << 63):
        return "INT64_MIN"
    suffix = {"int64_t": "LL", "uint64_t": "ULL", "uint32_t": "U"}.get(ctype, "")
    return f"{v}{suffix}"


def _strides(shape: Sequence[int]) -> list[int]:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return out[::-1]


def _size(shape: Sequence[int]) -> int:
    return math.prod(shape)


@dataclass
class CFunction:
    """The C of one primitive function."""

    name: str
    source: str
    scratch_bytes: int
    param_types: list[TensorType]
    result_types: list[TensorType]
    uses_kernels: bool = False
    constants: list[str] = field(default_factory=list)
    uses_winograd: bool = False
    """It calls ``xrelay_winograd.h`` (shipped with the program only then)."""


class _Emitter:
    def __init__(self, fn: func.FuncOp, name: str):
        self.fn = fn
        self.name = name
        self.lines: list[str] = []
        self.ptr: dict[SSAValue, str] = {}
        self.scratch = 0
        self.slots: dict[int, int] = {}
        """Scratch slots in use: offset -> bytes."""
        self.last_use: dict[SSAValue, int] = {}
        """Value -> index of the last op reading it (the return: past the end)."""
        self.uses_kernels = False
        self.uses_winograd = False
        self.constants: list[str] = []
        self.known: dict[SSAValue, np.ndarray] = {}
        """Values known when the C is emitted (constants, and ops folded from them)."""
        self.pads: dict[SSAValue, tuple] = {}
        """Results of ``nn.pad`` ops never made, which the depthwise convolution reading them
        pads itself (``_pad_into_conv``): the pad's operand pointer, widths (top, left,
        bottom, right), value expression and operand shape."""
        self.done: set[Operation] = set()
        """Ops already emitted out of program order (a convolution's epilogue chain and the
        constants it reads)."""

    # -- helpers ---------------------------------------------------------------------------
    def what(self, op: Operation) -> str:
        return f"{op.name} in @{self.fn.sym_name.data}"

    def out(self, line: str) -> None:
        self.lines.append("  " + line)

    def scratch_slot(self, t: TensorType, ctype: str, what: str) -> str:
        return self.scratch_buffer(_size(static_shape(t, what)), ctype)

    def scratch_buffer(self, count: int, ctype: str) -> str:
        """``count`` elements of ``ctype`` in scratch (free again after the op that asked)."""
        nbytes = count * np.dtype(_np_dtype(ctype)).itemsize
        size = -(-max(nbytes, 1) // SCRATCH_ALIGN) * SCRATCH_ALIGN
        offset = 0
        for start, n in sorted(self.slots.items()):  # the first free gap that fits
            if start - offset >= size:
                break
            offset = max(offset, start + n)
        self.slots[offset] = size
        self.scratch = max(self.scratch, offset + size)
        return f"(({ctype} *)(ws + {offset}))"

    def release_dead_slots(self, index: int) -> None:
        """After the op at ``index``: free the slots no value still read later points into
        (a view's pointer is its operand's, so a slot lives while any view of it does)."""
        live = set()
        for v, p in self.ptr.items():
            if self.last_use.get(v, -1) > index:
                live.update(int(m) for m in _WS_OFFSET.findall(p))
        for offset in [o for o in self.slots if o not in live]:
            del self.slots[offset]

    def loops(self, shape: Sequence[int], body: list[str]) -> None:
        """A loop nest over ``shape`` with indices i0, i1, ...; ``body`` uses them."""
        depth = 0
        for k, d in enumerate(shape):
            self.out("  " * depth + f"for (int64_t i{k} = 0; i{k} < {d}; ++i{k}) {{")
            depth += 1
        for line in body:
            self.out("  " * depth + line)
        for _ in shape:
            depth -= 1
            self.out("  " * depth + "}")

    @staticmethod
    def index(strides: Sequence[int], dims: Sequence[int] | None = None) -> str:
        """``i0 * s0 + i1 * s1 + ...`` skipping zero strides (broadcast dims)."""
        dims = range(len(strides)) if dims is None else dims
        terms = [f"i{k} * {s}" if s != 1 else f"i{k}" for k, s in zip(dims, strides) if s]
        return " + ".join(terms) or "0"

    # -- driver ----------------------------------------------------------------------------
    def run(self) -> CFunction:
        fn = self.fn
        params = list(fn.body.block.args)
        ret = fn.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        rets = list(ret.operands)
        sig = []
        for i, a in enumerate(params):
            what = f"operand {i} of @{fn.sym_name.data}"
            c_type(a.type, what)
            shape = static_shape(a.type, what)
            sig.append(f"const {c_storage_type(a.type, what)} *in{i}")
            if (sd := stored_dtype(a.type)) is not None:
                # computed in float: converted once on entry
                self.ptr[a] = self.scratch_slot(a.type, "float", what)
                self.out(f"for (int64_t i = 0; i < {_size(shape)}; ++i) "
                         f"{self.ptr[a]}[i] = xr_{sd}_to_f32(in{i}[i]);")  # fmt: skip
                self.uses_kernels = True
            else:
                self.ptr[a] = f"in{i}"
        # A result written by an op goes straight to its out pointer (the first time).
        self.dest: dict[SSAValue, str] = {}
        for r, v in enumerate(rets):
            what = f"result {r} of @{fn.sym_name.data}"
            c_type(v.type, what)
            sig.append(f"{c_storage_type(v.type, what)} *out{r}")
            if v not in self.dest and v not in self.ptr and stored_dtype(v.type) is None:
                self.dest[v] = f"out{r}"
        sig.append("uint8_t *ws")
        # An elementwise op may compute in place over an operand that dies there: walking
        # back from each result, the ops feeding it that way write into its out pointer
        # (a convolution's result, then its bias and relu, all in out0).
        self.returned = set(rets)
        self.find_chains(list(fn.body.block.ops))
        # A view's result in an out pointer takes its operand there too (same bytes): a
        # reshaped result is computed in place, not in scratch and copied.
        for op in reversed(list(fn.body.block.ops)):
            if op.results and op.results[0] in self.dest:
                a = self.inplace_operand(op)
                if a is None:
                    a = self.viewed_operand(op)
                if a is not None and a not in self.dest:
                    self.dest[a] = self.dest[op.results[0]]
        ops = list(fn.body.block.ops)
        at = {op: i for i, op in enumerate(ops)}
        for op in ops:
            for v in op.operands:  # an inlined op reads its operands where its chain is emitted
                self.last_use[v] = len(ops) if op is ret else at[self.root_of.get(op, op)]
        for i, op in enumerate(ops):
            if op is ret:
                break
            if op not in self.root_of and op not in self.done:
                self.emit_op(op)
            self.release_dead_slots(i)
        # Results that are operands, returned twice or views: copy them out.
        for r, v in enumerate(rets):
            if self.ptr.get(v) != f"out{r}":
                n = _size(static_shape(v.type, "a result"))
                sd = stored_dtype(v.type)
                value = f"xr_f32_to_{sd}({self.ptr[v]}[i])" if sd else f"{self.ptr[v]}[i]"
                self.out(f"for (int64_t i = 0; i < {n}; ++i) out{r}[i] = {value};")
        head = f"XRELAY_FN void {self.name}({', '.join(sig)}) {{"
        text = "\n".join(self.lines)
        # Parameters the body does not read (a pad value never used, no scratch): -Wextra.
        unused = [p for p in [*(f"in{i}" for i in range(len(params))), "ws"]
                  if not re.search(rf"\b{p}\b", text)]  # fmt: skip
        body = [f"  (void){p};" for p in unused] + self.lines
        return CFunction(
            self.name,
            "\n".join([head, *body, "}"]),
            self.scratch,
            [a.type for a in params],
            [v.type for v in rets],
            self.uses_kernels,
            self.constants,
            self.uses_winograd,
        )

    def find_chains(self, ops: list[Operation]) -> None:
        """Elementwise chains: an elementwise op (unary, binary, ``where``, fixed-point
        multiply) whose uses are all
        elementwise ops with results of its shape that one loop computes, and that is not
        returned, is computed inside that loop as a local value (``root_of`` maps it to the op
        that emits the loop), so a chain such as GELU's multiply, erf, add, multiply or an int8
        rescaling's casts, shifts, selects and clips is one loop with no temporaries."""
        self.root_of: dict[Operation, Operation] = {}
        for op in reversed(ops):  # users first, so a user's root is known
            if not _elementwise_op(op) or op.results[0] in self.returned:
                continue
            users = {u.operation for u in op.results[0].uses}
            roots = {self.root_of.get(u, u) for u in users}
            shape = op.results[0].type.get_shape()
            # every use in one chain (a value read twice there is computed once, a local)
            if len(roots) == 1 and all(u.parent is op.parent and _elementwise_op(u)
                                       and u.results[0].type.get_shape() == shape for u in users):  # fmt: skip
                self.root_of[op] = roots.pop()

    def chain(self, root: Operation) -> list[Operation]:
        """The ops ``root``'s loop computes, in program order, ``root`` last."""
        return [op for op in root.parent.ops if self.root_of.get(op) is root] + [root]

    def inplace_operand(self, op: Operation) -> SSAValue | None:
        """The operand an elementwise ``op`` (with the chain it computes) may overwrite with
        its result: same type, made by an op of this function (not a parameter or constant),
        read only by the chain, not returned. Each result element is computed from that
        operand's element at the same index, so the loop reads it before writing it."""
        if not _elementwise_op(op) or op in self.root_of:
            return None
        y = op.results[0]
        members = self.chain(op)
        for v in [v for m in members for v in m.operands]:
            owner = v.owner
            if (v.type == y.type and isinstance(owner, RelayOp) and not isinstance(owner, ConstantOp)
                    and owner not in members and all(u.operation in members for u in v.uses)
                    and v not in self.returned and v.owner.parent is op.parent
                    and _HANDLERS.get(owner.RELAY_NAME) not in (_view, None)):  # fmt: skip
                return v
        return None

    def viewed_operand(self, op: Operation) -> SSAValue | None:
        """The operand of a view ``op`` (reshape-like: the same bytes) that may live in the
        view's out pointer: made by an op of this function, read only by the view."""
        if not isinstance(op, RelayOp) or len(op.results) != 1 or _HANDLERS.get(op.RELAY_NAME) is not _view:
            return None
        v = op.operands[0] if op.operands else None
        owner = v.owner if v is not None else None
        if (v is None or not isinstance(owner, RelayOp) or isinstance(owner, ConstantOp)
                or not v.has_one_use() or v in self.returned or owner.parent is not op.parent
                or stored_dtype(v.type) is not None or len(owner.results) != 1):  # fmt: skip
            return None
        return v

    def result_ptr(self, v: SSAValue, op: Operation) -> str:
        if v in self.dest:
            p = self.dest.pop(v)
        elif (a := self.inplace_operand(op)) is not None and self.ptr[a].startswith("(("):
            p = self.ptr[a]  # in place over a scratch slot
        else:
            p = self.scratch_slot(v.type, c_type(v.type, self.what(op)), self.what(op))
        self.ptr[v] = p
        return p

    def emit_op(self, op: Operation) -> None:
        if isinstance(op, ConstantOp):
            self.emit_constant(op)
            return
        if not isinstance(op, RelayOp):
            raise CodegenError(f"{op.name} has no C lowering (in @{self.fn.sym_name.data})")
        name = op.RELAY_NAME
        if name in C_REFUSALS:
            raise CodegenError(f"{name} has no C lowering: {C_REFUSALS[name]} (in @{self.fn.sym_name.data})")
        if self.fold(op):
            return
        handler = _HANDLERS.get(name)
        if handler is None:
            raise CodegenError(f"{name} has no C lowering (in @{self.fn.sym_name.data})")
        for v in [*op.operands, *op.results]:
            static_shape(v.type, self.what(op))
            c_type(v.type, self.what(op))
        self.out(f"/* {name} */")
        handler(self, op)

    def fold(self, op: RelayOp) -> bool:
        """An op whose operands are all constants (a function built at opt_level 0, before
        fold-constant) becomes the constants its reference kernel computes, as fold-constant
        would make them; only small results (``FOLD_LIMIT`` elements), and ops with a kernel."""
        if not op.operands or not all(v in self.known for v in op.operands):
            return False
        if any(_size(static_shape(r.type, self.what(op))) > FOLD_LIMIT for r in op.results):
            return False

        values = evaluate(type(op), [self.known[v] for v in op.operands], op.attrs,
                          [r.type for r in op.results])  # fmt: skip
        if values is None:
            return False
        self.out(f"/* {op.RELAY_NAME}: folded */")
        for r, value in zip(op.results, values, strict=True):
            self.constant(r, value)
        return True

    def emit_constant(self, op: ConstantOp) -> None:
        self.constant(op.results[0], op.numpy())

    def constant(self, v: SSAValue, data: np.ndarray) -> None:
        """``v`` is the constant ``data``: a static array of the function."""
        ctype = c_type(v.type, f"a constant in @{self.fn.sym_name.data}")
        cname = f"{self.name}_c{len(self.constants)}"
        values = ", ".join(c_literal(x, ctype) for x in np.asarray(data).reshape(-1).tolist())
        self.constants.append(f"static const {ctype} {cname}[{max(data.size, 1)}] = {{{values}}};")
        self.ptr[v] = cname
        self.known[v] = np.asarray(data)
        if v in self.dest:
            self.dest.pop(v)


def _np_dtype(ctype: str) -> str:
    return {v: k for k, v in C_TYPES.items() if k != "bool" and k not in STORED_AS}[ctype]


def _attr(op: RelayOp, name: str):
    return op.attrs[name]


# -- handlers ------------------------------------------------------------------------------
_UNARY = {
    "nn.relu": "({x} > 0 ? {x} : ({x} != {x} ? {x} : 0))",
    "negative": "(-{x})",
    "copy": "({x})",
    "abs": "({x} < 0 ? -{x} : {x})",
    "tanh": "{f}tanh({x})",
    "sigmoid": "(1 / (1 + {f}exp(-{x})))",
    "exp": "{f}exp({x})",
    "log": "{f}log({x})",
    "sqrt": "{f}sqrt({x})",
    "rsqrt": "(1 / {f}sqrt({x}))",
    "erf": "{f}erf({x})",
    "floor": "{f}floor({x})",
    "ceil": "{f}ceil({x})",
    "round": "{f}round({x})",
    "trunc": "{f}trunc({x})",
    "sin": "{f}sin({x})",
    "cos": "{f}cos({x})",
    "tan": "{f}tan({x})",
    "atan": "{f}atan({x})",
    "sign": "({x} > 0 ? 1 : ({x} < 0 ? -1 : {x}))",
    "logical_not": "(!{x})",
}
_ROUNDING = {"floor", "ceil", "round", "trunc"}
_FLOAT_ONLY = {"tanh", "sigmoid", "exp", "log", "sqrt", "rsqrt", "erf", "sin", "cos", "tan", "atan"}
_WRAPPING = {"int32_t": "uint32_t", "int64_t": "uint64_t"}
_WRAPPED_OPS = {"add": "+", "subtract": "-", "multiply": "*"}
"""Signed types whose overflow C leaves undefined: add, subtract, multiply and negate go
through the unsigned type, so they wrap as numpy's do."""

_BINARY = {
    "add": "({a} + {b})",
    "subtract": "({a} - {b})",
    "multiply": "({a} * {b})",
    "divide": "({a} / {b})",
    "maximum": "({a} > {b} || {a} != {a} ? {a} : {b})",
    "minimum": "({a} < {b} || {a} != {a} ? {a} : {b})",
    "power": "{f}pow({a}, {b})",
    "equal": "({a} == {b})",
    "not_equal": "({a} != {b})",
    "less": "({a} < {b})",
    "less_equal": "({a} <= {b})",
    "greater": "({a} > {b})",
    "greater_equal": "({a} >= {b})",
    "right_shift": "",
    "left_shift": "",
    "logical_and": "({a} && {b})",
    "logical_or": "({a} || {b})",
    "logical_xor": "(!{a} != !{b})",
    "bitwise_and": "({a} & {b})",
    "bitwise_or": "({a} | {b})",
    "bitwise_xor": "({a} ^ {b})",
    "mod": "{f}fmod({a}, {b})",
    "floor_mod": "",
    "floor_divide": "{f}floor({a} / {b})",
}
_INTEGER_ONLY = {"right_shift", "left_shift", "bitwise_and", "bitwise_or", "bitwise_xor"}


def _libm(expr: str, ctype: str) -> str:
    # ``{f}exp(`` -> ``expf(`` for float, ``exp(`` for double.
    return re.sub(r"\{f\}(\w+)\(", lambda m: m.group(1) + ("f(" if ctype == "float" else "("), expr)


def _is_float(ctype: str) -> bool:
    return ctype in ("float", "double")


def _int_range(dt: str) -> tuple[int, int]:
    info = np.iinfo(np.dtype(dt))
    return int(info.min), int(info.max)


def _cast_expr(v: str, src: str, dst: str) -> str:
    """``v`` of C type ``src`` as ``dst``, as Relay's ``cast`` kernel computes it: float to int
    truncates through int64 (out-of-range values wrap, not undefined), anything to bool is
    ``!= 0``."""
    if dst == "bool":
        return f"(uint8_t)({v} != 0)"
    if dst in STORED_AS:  # computed in float, rounded to the type's precision
        return f"xr_{dst}_to_f32(xr_f32_to_{dst}((float){v}))"
    ctype = C_TYPES[dst]
    if _is_float(src) and not _is_float(ctype) and ctype not in ("int64_t", "uint64_t"):
        return f"({ctype})(int64_t){v}"
    return f"({ctype}){v}"


def _elementwise_op(op: Operation) -> bool:
    """An op ``find_chains`` may compute inside another's loop: a unary, binary or fixed-point
    elementwise op (not an integer rounding, which is a view), with operands that are not all
    constants (those are folded)."""
    if not isinstance(op, RelayOp) or len(op.results) != 1 or _HANDLERS.get(op.RELAY_NAME) not in (_unary, _binary, _where, _fixed_point_multiply):
        return False
    if op.RELAY_NAME in _ROUNDING and dtype_of(op.results[0].type.element_type) not in ("float32", "float64", "float16", "bfloat16"):
        return False
    return not all(isinstance(v.owner, ConstantOp) for v in op.operands)


def _operand_strides(op: RelayOp, k: int, v: SSAValue, full: Sequence[int]) -> list[int]:
    """The strides operand ``k`` of a chain member ``op`` is read with at the indices of the
    chain's result ``full``: right-aligned broadcasting, except a per-axis multiplier or shift
    of ``fixed_point_multiply_per_axis`` (indexed by its axis)."""
    if op.RELAY_NAME == "fixed_point_multiply_per_axis" and k > 0:
        axis = _attr(op, "axes")[0] % len(full)
        return [1 if d == axis else 0 for d in range(len(full))]
    return _bcast_strides(v, full)


def _chain_body(em: _Emitter, members: list[Operation], read) -> tuple[list[str], str]:
    """The statements computing a chain's ``members`` as locals ``t0, t1, ...`` (the last is
    the result's, returned with them); ``read(op, k, v)`` is the C expression of operand
    ``k`` of ``op`` when it is not computed in the chain."""
    local: dict[SSAValue, str] = {}
    body = []
    for k, op in enumerate(members):
        args = [local.get(v) or read(op, j, v) for j, v in enumerate(op.operands)]
        r = op.results[0]
        rt = c_type(r.type, em.what(op))
        handler = _HANDLERS[op.RELAY_NAME]
        if handler is _where:
            body.append(f"const {rt} t{k} = {args[0]} ? {args[1]} : {args[2]};")
        elif handler is _unary:
            in_type, expr = _unary_expr(em, op)
            body.append(f"{rt} t{k}; {{ const {in_type} v = {args[0]}; t{k} = {expr}; }}")
        elif handler is _fixed_point_multiply:
            body.append(f"int32_t t{k}; {{ const int32_t v = {args[0]}; t{k} = {_fixed_point_expr(em, op, args)}; }}")
        else:
            ctype = c_type(op.operands[0].type, em.what(op))
            body.append(f"{rt} t{k}; {{ const {ctype} va = {args[0]}, vb = {args[1]}; t{k} = {_binary_expr(em, op)}; }}")
        local[r] = f"t{k}"
    return body, local[members[-1].results[0]]


def _chain(em: _Emitter, root: RelayOp) -> None:
    """``root`` and the ops inlined into it (``find_chains``) as one loop nest over its result:
    each op's value a local, operands from memory read with their broadcast strides."""
    y = root.results[0]
    full = list(y.type.get_shape())
    members = em.chain(root)
    produced = {op.results[0] for op in members}
    read = list(dict.fromkeys((v, tuple(_operand_strides(op, k, v, full)))
                              for op in members for k, v in enumerate(op.operands) if v not in produced))  # fmt: skip
    shape, strides = _collapse(full, [_strides(full)] + [list(st) for _, st in read]) if full else (full, [[]])
    at = {key: f"{em.ptr[key[0]]}[{em.index(st)}]" for key, st in zip(read, strides[1:], strict=True)}
    body, value = _chain_body(em, members, lambda op, k, v: at[v, tuple(_operand_strides(op, k, v, full))])
    dst = em.result_ptr(y, root)
    body.append(f"{dst}[{em.index(strides[0])}] = {value};")
    em.loops(shape, body)


def _unary(em: _Emitter, op: RelayOp) -> None:
    name = op.RELAY_NAME
    x, y = op.operands[0], op.results[0]
    ctype = c_type(y.type, em.what(op))
    n = _size(y.type.get_shape())
    if name in _ROUNDING and not _is_float(ctype):
        _view(em, op)  # the identity on integers
        return
    if len(em.chain(op)) > 1:
        _chain(em, op)
        return
    src = em.ptr[x]
    in_type, expr = _unary_expr(em, op)
    dst = em.result_ptr(y, op)
    em.out(f"for (int64_t i = 0; i < {n}; ++i) {{ const {in_type} v = {src}[i]; {dst}[i] = {expr}; }}")


def _unary_expr(em: _Emitter, op: RelayOp) -> tuple[str, str]:
    """The C type of the operand ``v`` and the expression of the result."""
    name = op.RELAY_NAME
    x, y = op.operands[0], op.results[0]
    ctype = c_type(y.type, em.what(op))
    if name in _FLOAT_ONLY and not _is_float(ctype):
        raise CodegenError(f"{name} on {dtype_of(y.type.element_type)} has no C lowering")
    if name == "clip":
        lo, hi = _attr(op, "a_min"), _attr(op, "a_max")
        if not _is_float(ctype):
            # As the kernel: ceil(a_min) and floor(a_max), saturated to the dtype's range.
            tmin, tmax = _int_range(dtype_of(y.type.element_type))
            lo = tmin if lo <= tmin else min(math.ceil(lo), tmax)
            hi = tmax if hi >= tmax else max(math.floor(hi), tmin)
            # a bound at the dtype's end is no bound (and comparing with it would not compile
            # under -Wextra's type-limits)
            expr = "v"
            if hi < tmax:
                expr = f"(v > {c_literal(hi, ctype)} ? {c_literal(hi, ctype)} : v)"
            if lo > tmin:
                expr = f"(v < {c_literal(lo, ctype)} ? {c_literal(lo, ctype)} : {expr})"
        else:
            lo, hi = c_literal(lo, ctype), c_literal(hi, ctype)
            expr = f"(v < {lo} ? {lo} : (v > {hi} ? {hi} : v))"
    elif name == "nn.leaky_relu":
        alpha = c_literal(_attr(op, "alpha"), ctype)
        expr = f"(v > 0 ? v : {alpha} * v)"
    elif name == "cast":
        expr = _cast_expr("v", c_type(x.type, em.what(op)), dtype_of(y.type.element_type))
    elif name == "sign" and (ctype[0] == "u"):
        expr = "v" if dtype_of(y.type.element_type) == "bool" else f"({ctype})(v > 0)"
    elif name == "sign":
        expr = f"({ctype}){_UNARY[name].replace('{x}', 'v')}"
    elif name == "negative" and ctype in _WRAPPING:
        expr = f"({ctype})(0u - ({_WRAPPING[ctype]})v)"
    else:
        expr = _libm(_UNARY[name].replace("{x}", "v"), ctype)
    return c_type(x.type, em.what(op)), expr


def _binary(em: _Emitter, op: RelayOp) -> None:
    if len(em.chain(op)) > 1:
        _chain(em, op)
        return
    a, b = op.operands
    y = op.results[0]
    out_shape = list(y.type.get_shape())
    ctype = c_type(a.type, em.what(op))
    expr = _binary_expr(em, op)
    exprs = [_bcast(em, v, out_shape) for v in (a, b)]  # right-aligned broadcasting
    dst = em.result_ptr(y, op)
    body = [
        f"const {ctype} va = {exprs[0]}, vb = {exprs[1]};",
        f"{dst}[{em.index(_strides(out_shape))}] = {expr};",
    ]
    em.loops(out_shape, body)


def _binary_expr(em: _Emitter, op: RelayOp) -> str:
    """The expression of the result from the operands ``va`` and ``vb``."""
    name = op.RELAY_NAME
    a = op.operands[0]
    ctype = c_type(a.type, em.what(op))
    if name in _INTEGER_ONLY and _is_float(ctype):
        raise CodegenError(f"{name} on {dtype_of(a.type.element_type)} has no C lowering")
    if name == "power" and ctype not in ("float", "double"):
        raise CodegenError(f"power on {dtype_of(a.type.element_type)} has no C lowering")
    expr = _libm(_BINARY[name].replace("{a}", "va").replace("{b}", "vb"), ctype)
    if name in ("add", "subtract", "multiply") and ctype in _WRAPPING:
        u = _WRAPPING[ctype]
        expr = f"({ctype})(({u})va {_WRAPPED_OPS[name]} ({u})vb)"
    elif name == "divide" and not _is_float(ctype):
        # truncating; x / 0 is 0 and MIN / -1 wraps, as the kernel (C leaves both undefined)
        neg = f"({ctype})(0u - ({_WRAPPING[ctype]})va)" if ctype in _WRAPPING else "-va"
        expr = f"(vb == 0 ? 0 : (vb == -1 ? {neg} : va / vb))" if ctype[0] != "u" else "(vb == 0 ? 0 : va / vb)"
    elif name in ("mod", "floor_mod", "floor_divide") and not _is_float(ctype):
        # as numpy: x % 0 and x // 0 are 0; MIN % -1 is 0 and MIN // -1 wraps (C: undefined)
        signed = ctype[0] != "u"
        rem = "(vb == 0 || vb == -1 ? 0 : va % vb)" if signed else "(vb == 0 ? 0 : va % vb)"
        if name == "mod":
            expr = f"({ctype}){rem}"
        elif name == "floor_mod":
            expr = f"({ctype})xr_floor_mod_i64({rem}, vb)" if signed else f"({ctype}){rem}"
            em.uses_kernels = True
        else:
            neg = f"({ctype})(0u - ({_WRAPPING[ctype]})va)" if ctype in _WRAPPING else f"({ctype})-va"
            expr = (f"(vb == 0 ? 0 : (vb == -1 ? {neg} : ({ctype})(va / vb - ((va % vb != 0) && ((va < 0) != (vb < 0))))))"
                    if signed else "(vb == 0 ? 0 : va / vb)")  # fmt: skip
    elif name == "floor_mod":  # the remainder takes the divisor's sign
        f = "f" if ctype == "float" else ""
        expr = f"xr_floor_mod{f}(va, vb)"
        em.uses_kernels = True
    elif name in _INTEGER_ONLY and name.startswith("bitwise"):
        expr = f"({ctype}){expr}"
    elif name in ("right_shift", "left_shift"):
        sh = ">>" if name == "right_shift" else "<<"
        if name == "left_shift" and ctype in _WRAPPING:
            expr = f"({ctype})(({_WRAPPING[ctype]})va << vb)"
        else:
            expr = f"({ctype})(va {sh} vb)"
    return expr


def _view(em: _Emitter, op: RelayOp) -> None:
    x, y = op.operands[0], op.results[0]
    if y in em.dest:
        dst = em.result_ptr(y, op)
        if em.ptr[x] != dst:  # (else its operand was computed there: viewed_operand)
            em.out(f"for (int64_t i = 0; i < {_size(y.type.get_shape())}; ++i) {dst}[i] = {em.ptr[x]}[i];")
    else:
        em.ptr[y] = em.ptr[x]


def _reduce(em: _Emitter, op: RelayOp) -> None:
    name = op.RELAY_NAME
    x, y = op.operands[0], op.results[0]
    shape = list(x.type.get_shape())
    ctype = c_type(y.type, em.what(op))
    axes = set(reduce_axes(len(shape), _attr(op, "axis"), _attr(op, "exclude")))
    out_strides_kept = _strides([d for k, d in enumerate(shape) if k not in axes])
    strides, j = [], 0
    for k in range(len(shape)):
        if k in axes:
            strides.append(0)
        else:
            strides.append(out_strides_kept[j])
            j += 1
    dst = em.result_ptr(y, op)
    n_out = _size(y.type.get_shape())
    dt = dtype_of(y.type.element_type)
    if _is_float(ctype):
        lowest, highest = "-INFINITY", "INFINITY"
    else:  # integers and bool (0 and 1) start from the type's extremes, as numpy's reductions
        lowest, highest = (c_literal(v, ctype) for v in ((0, 1) if dt == "bool" else _int_range(dt)))
    init = {"sum": "0", "mean": "0", "prod": "1", "max": lowest, "min": highest}[name]
    em.out(f"for (int64_t i = 0; i < {n_out}; ++i) {dst}[i] = {init};")
    nan = " || v != v" if _is_float(ctype) else ""  # a NaN wins, as numpy's max and min
    acc = {
        "sum": "{d} += v;", "mean": "{d} += v;", "prod": "{d} *= v;",
        "max": f"if (v > {{d}}{nan}) {{d}} = v;", "min": f"if (v < {{d}}{nan}) {{d}} = v;",
    }[name].replace("{d}", f"{dst}[{em.index(strides)}]")  # fmt: skip
    em.loops(shape, [f"const {ctype} v = {em.ptr[x]}[{em.index(_strides(shape))}];", acc])
    if name == "mean":
        count = _size(shape) // max(n_out, 1)
        em.out(f"for (int64_t i = 0; i < {n_out}; ++i) {dst}[i] /= {count};")


def _transpose(em: _Emitter, op: RelayOp) -> None:
    x, y = op.operands[0], op.results[0]
    shape = list(x.type.get_shape())
    axes = _attr(op, "axes")
    axes = list(range(len(shape)))[::-1] if axes is None else [a % len(shape) for a in axes]
    in_strides = _strides(shape)
    dst = em.result_ptr(y, op)
    out_shape = list(y.type.get_shape())
    src_index = em.index([in_strides[a] for a in axes])
    em.loops(out_shape, [f"{dst}[{em.index(_strides(out_shape))}] = {em.ptr[x]}[{src_index}];"])


def _concatenate(em: _Emitter, op: RelayOp) -> None:
    y = op.results[0]
    out_shape = list(y.type.get_shape())
    axis = _attr(op, "axis") % len(out_shape)
    dst = em.result_ptr(y, op)
    out_strides = _strides(out_shape)
    start = 0
    for v in op.operands:
        shape = list(v.type.get_shape())
        index = em.index(out_strides) + (f" + {start * out_strides[axis]}" if start else "")
        em.loops(shape, [f"{dst}[{index}] = {em.ptr[v]}[{em.index(_strides(shape))}];"])
        start += shape[axis]


def _split(em: _Emitter, op: RelayOp) -> None:
    x = op.operands[0]
    in_shape = list(x.type.get_shape())
    axis = _attr(op, "axis") % len(in_shape)
    in_strides = _strides(in_shape)
    start = 0
    for y in op.results:
        shape = list(y.type.get_shape())
        dst = em.result_ptr(y, op)
        index = em.index(in_strides) + (f" + {start * in_strides[axis]}" if start else "")
        em.loops(shape, [f"{dst}[{em.index(_strides(shape))}] = {em.ptr[x]}[{index}];"])
        start += shape[axis]


def _need_float32(em: _Emitter, op: RelayOp) -> None:
    for v in [*op.operands, *op.results]:
        if c_type(v.type, em.what(op)) != "float":
            raise CodegenError(f"{op.RELAY_NAME} on {dtype_of(v.type.element_type)} has no C lowering")
    em.uses_kernels = True


OC_BLOCK = 4
"""Output channels a direct convolution computes together (when the group's count divides)."""

CHANNEL_BLOCK = 8
"""The channel block the C target's float convolutions are laid out in (``NCHW8c`` data,
``OIHW8i8o`` kernels: ``alter-op-layout`` at this SIMD width, chosen in ``build_c``), the lanes
of the ``XR_F8_*`` accumulators of ``xrelay_kernels.h``."""

TILE_LANES = 64
"""Float accumulator lanes of a blocked convolution's tile (pixels x output channels): 8
pixels of 8 channels, 8 of the 16 AVX registers (16 of AArch64's 32 NEON ones; SSE's 16 spill
a little). On ResNet-18 with AVX, 48 lanes ran 1.2x slower and 96 no faster."""


WIDE_BLOCK = 16
"""Output channel blocks that are a multiple of this many lanes run as ``XR_F16_*`` tiles (one
AVX-512 vector per pixel, two ``XR_F8`` halves elsewhere); other multiples of 8 as ``XR_F8``."""

WIDE_TILE_LANES = 192
"""Float accumulator lanes of a tile over 16-channel blocks: 12 pixels of 16 channels, 12 of
AVX-512's 32 registers."""


class _Layout:
    """A (possibly blocked) layout of a tensor: C index expressions from logical coordinates.

    ``_Layout("NCHW8c", shape).index({"N": "n", "C": "c", "H": "y", "W": "x"})`` is
    ``n * s0 + (c / 8) * s1 + y * s2 + x * s3 + (c % 8) * s4``.
    """

    def __init__(self, layout: str, shape: Sequence[int], what: str):
        try:
            self.tokens = parse_layout(layout)
        except ValueError as e:
            raise CodegenError(f"{what}: {e}") from None
        if len(self.tokens) != len(shape):
            raise CodegenError(f"{what}: layout {layout} does not fit shape {tuple(shape)}")
        self.shape = list(shape)
        self.strides = _strides(shape)
        self.factor = {t.upper(): f for t, f in self.tokens if t.islower()}
        self.names = [t for t, _ in self.tokens]

    def extent(self, axis: str) -> int:
        """The logical length of primal axis ``axis`` (blocks times block size)."""
        return self.shape[self.names.index(axis)] * self.factor.get(axis, 1)

    def stride(self, axis: str) -> int:
        """The element stride of an unblocked primal axis."""
        return self.strides[self.names.index(axis)]

    def index(self, coords: dict[str, str]) -> str:
        terms = []
        for (t, f), s in zip(self.tokens, self.strides, strict=True):
            if t.isupper():
                c = coords[t]
                expr = f"({c}) / {self.factor[t]}" if t in self.factor else c
            else:
                expr = f"({coords[t.upper()]}) % {f}"
            if c_literal_is_zero(expr) or s == 0:
                continue
            terms.append(f"({expr}) * {s}" if s != 1 else f"({expr})")
        return " + ".join(terms) or "0"


def c_literal_is_zero(expr: str) -> bool:
    return expr.strip("() ") == "0"


def _conv_layouts(op: RelayOp, x, w, y, kernel_default: str):
    what = f"{op.RELAY_NAME}"
    data_layout = _attr(op, "data_layout") or "NCHW"
    kernel_layout = _attr(op, "kernel_layout") or kernel_default
    out_layout = _attr(op, "out_layout") or data_layout
    return (_Layout(data_layout, x.type.get_shape(), f"{what} data"),
            _Layout(kernel_layout, w.type.get_shape(), f"{what} kernel"),
            _Layout(out_layout, y.type.get_shape(), f"{what} result"))  # fmt: skip


def _conv2d(em: _Emitter, op: RelayOp) -> None:
    """Direct convolution in any (blocked) layout and dtype: for every output channel, the
    taps (input channel, kernel row, kernel column) accumulate into the output plane; the
    innermost loop runs over a row of output columns, bounds hoisted, so it vectorises.
    Float convolutions in channel-blocked layouts run as register tiles instead
    (``_conv2d_blocked``)."""
    x, w = op.operands
    y = op.results[0]
    dl, kl, ol = _conv_layouts(op, x, w, y, "OIHW")
    if (_conv2d_blocked(em, op, dl, kl, ol) or _conv2d_int8_pointwise(em, op, dl, kl, ol)
            or _conv2d_int8(em, op, dl, kl, ol) or _conv2d_int8_depthwise(em, op, dl, kl, ol)):  # fmt: skip
        return
    n_, _, h_, w_ = (dl.extent(a) for a in "NCHW")
    o_, cg, kh, kw = (kl.extent(a) for a in "OIHW")
    oh, ow = ol.extent("H"), ol.extent("W")
    groups = _attr(op, "groups")
    og = o_ // groups
    sh, sw = _attr(op, "strides")
    pt, pl, _, _ = _attr(op, "padding")
    dh, dw = _attr(op, "dilation")
    acc = c_type(y.type, em.what(op))
    xt = c_type(x.type, em.what(op))
    wt = c_type(w.type, em.what(op))
    src, wp = em.ptr[x], em.ptr[w]
    dst = em.result_ptr(y, op)
    si, so = dl.stride("W"), ol.stride("W")
    chan = f"g * {cg} + ic" if groups > 1 else "ic"
    ix = f"ox * {sw} - {pl} + kj * {dw}" if (sw, pl, dw) != (1, 0, 1) else "ox + kj"
    flat = (kh, kw, sh, sw, oh, ow) == (1, 1, 1, 1, h_, w_) and not any(_attr(op, "padding")) and all(
        lay.stride("H") == lay.extent("W") * lay.stride("W") for lay in (dl, ol))  # fmt: skip
    if (_attr(op, "data_layout"), _attr(op, "kernel_layout"), ol.names, groups) == ("NHWC", "HWIO", list("NHWC"), 1):
        # Channels last: per output pixel, every tap's input channels times the weight rows;
        # the innermost loop runs over the contiguous output channels and vectorises.
        em.lines += [f"  for (int64_t n = 0; n < {n_}; ++n) {{",
            f"    for (int64_t oy = 0; oy < {oh}; ++oy) {{",
            f"      for (int64_t ox = 0; ox < {ow}; ++ox) {{",
            f"        {acc} *restrict dp = {dst} + {ol.index(dict(N='n', C='0', H='oy', W='ox'))};",
            f"        for (int64_t oc = 0; oc < {o_}; ++oc) dp[oc] = 0;",
            f"        for (int64_t ki = 0; ki < {kh}; ++ki) {{",
            f"          const int64_t iy = oy * {sh} - {pt} + ki * {dh};",
            f"          if (iy < 0 || iy >= {h_}) continue;",
            f"          for (int64_t kj = 0; kj < {kw}; ++kj) {{",
            f"            const int64_t ix = ox * {sw} - {pl} + kj * {dw};",
            f"            if (ix < 0 || ix >= {w_}) continue;",
            f"            const {xt} *restrict sp = {src} + {dl.index(dict(N='n', C='0', H='iy', W='ix'))};",
            f"            const {wt} *restrict wk = {wp} + {kl.index(dict(O='0', I='0', H='ki', W='kj'))};",
            f"            for (int64_t ic = 0; ic < {cg}; ++ic) {{",
            f"              const {acc} v = ({acc})sp[ic];",
            f"              for (int64_t oc = 0; oc < {o_}; ++oc) dp[oc] += v * ({acc})wk[ic * {o_} + oc];",
            "            }", "          }", "        }", "      }", "    }", "  }"]  # fmt: skip
        return
    if flat:
        # 1x1, stride 1, no padding: each (output, input) channel pair is one axpy over the
        # whole plane, which vectorises even where the rows are short.
        em.lines += [f"  for (int64_t n = 0; n < {n_}; ++n) {{",
            f"    for (int64_t oc = 0; oc < {o_}; ++oc) {{",
            *([f"      const int64_t g = oc / {og};"] if groups > 1 else []),
            f"      {acc} *restrict dp = {dst} + {ol.index(dict(N='n', C='oc', H='0', W='0'))};",
            f"      for (int64_t p = 0; p < {oh * ow}; ++p) dp[p * {so}] = 0;",
            f"      for (int64_t ic = 0; ic < {cg}; ++ic) {{",
            f"        const {acc} wv = ({acc}){wp}[{kl.index(dict(O='oc', I='ic', H='0', W='0'))}];",
            f"        const {xt} *restrict sp = {src} + {dl.index(dict(N='n', C=chan, H='0', W='0'))};",
            f"        for (int64_t p = 0; p < {oh * ow}; ++p) dp[p * {so}] += ({acc})sp[p * {si}] * wv;",
            "      }", "    }", "  }"]  # fmt: skip
        return
    # Output channels in blocks of ``nb``: each input row read feeds nb output rows.
    nb = OC_BLOCK if og % OC_BLOCK == 0 else 1
    bs = range(nb)
    em.lines += [f"  for (int64_t n = 0; n < {n_}; ++n) {{",
        f"    for (int64_t oc = 0; oc < {o_}; oc += {nb}) {{",
        *([f"      const int64_t g = oc / {og};"] if groups > 1 else []),
        f"      for (int64_t b = 0; b < {nb}; ++b)",
        f"        for (int64_t oy = 0; oy < {oh}; ++oy)",
        f"          for (int64_t ox = 0; ox < {ow}; ++ox) {dst}[{ol.index(dict(N='n', C='oc + b', H='oy', W='ox'))}] = 0;",
        f"      for (int64_t ic = 0; ic < {cg}; ++ic) {{",
        f"        for (int64_t ki = 0; ki < {kh}; ++ki) {{",
        f"          for (int64_t kj = 0; kj < {kw}; ++kj) {{",
        *[f"            const {acc} w{b} = ({acc}){wp}[{kl.index(dict(O=f'oc + {b}', I='ic', H='ki', W='kj'))}];" for b in bs],
        f"            const int64_t t = {pl} - kj * {dw}, u = {w_ - 1 + pl} - kj * {dw};",
        f"            const int64_t x0 = t <= 0 ? 0 : (t + {sw - 1}) / {sw};",
        f"            const int64_t x1 = u < 0 ? 0 : (u / {sw} + 1 < {ow} ? u / {sw} + 1 : {ow});",
        f"            for (int64_t oy = 0; oy < {oh}; ++oy) {{",
        f"              const int64_t iy = oy * {sh} - {pt} + ki * {dh};",
        f"              if (iy < 0 || iy >= {h_}) continue;",
        f"              const {xt} *restrict srow = {src} + {dl.index(dict(N='n', C=chan, H='iy', W='0'))};",
        *[f"              {acc} *restrict d{b} = {dst} + {ol.index(dict(N='n', C=f'oc + {b}', H='oy', W='0'))};" for b in bs],
        "              for (int64_t ox = x0; ox < x1; ++ox) {",
        f"                const {acc} v = ({acc})srow[({ix}) * {si}];",
        *[f"                d{b}[ox * {so}] += v * w{b};" for b in bs],
        "              }", "            }", "          }", "        }", "      }", "    }", "  }"]  # fmt: skip


def _x_tiles(ow: int, px: int, sw: int, pl: int, dw: int, kw: int, w_: int):
    """Output columns in tiles of at most ``px``, each with the input columns its taps read:
    ``(first, end, step, valid)`` runs of tiles starting at ``first, first + step, ... < end``
    that share ``valid[kj]``, the tile's pixels whose column ``kj`` falls inside the input
    (known when the C is emitted: columns do not depend on the row)."""

    def valid(x0: int, n: int) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(p for p in range(n) if 0 <= (x0 + p) * sw - pl + kj * dw < w_) for kj in range(kw))

    runs: list[list] = []
    for x0 in range(0, ow, px):
        n = min(px, ow - x0)
        v = valid(x0, n)
        last = runs[-1] if runs else None
        if last is not None and last[2] == n and last[3] == v and last[1] == x0:
            last[1] = x0 + n
        else:
            runs.append([x0, x0 + n, n, v])
    return [tuple(r) for r in runs]


def _conv2d_blocked(em: _Emitter, op: RelayOp, dl: _Layout, kl: _Layout, ol: _Layout) -> bool:
    """A float convolution in ``NCHW{8k}c`` layouts (``OIHW{i}i{8k}o`` kernel, or ``OIHW1i{8k}o``
    depthwise) as register tiles: up to ``TILE_LANES / 8k`` output pixels of a row times the 8k output channels
    of a block accumulate in ``XR_F8`` vectors over every tap (input channel, kernel row and
    column) and are stored once; the kernel's 8k output channels of a tap are contiguous (one
    vector load), each input value is broadcast. Kernel columns are unrolled and the columns a
    tile reads are known when the C is emitted, so only rows are checked against the padding.
    False (nothing emitted) for any other form."""
    x, w = op.operands
    y = op.results[0]
    if any(c_type(v.type, "") != "float" or stored_dtype(v.type) for v in (x, w, y)):
        return False
    if dl.names != list("NCHWc") or ol.names != list("NCHWc") or kl.names != list("OIHWio"):
        return False
    ob, ib, kib = ol.factor["C"], dl.factor["C"], kl.factor["I"]
    groups = _attr(op, "groups")
    n_, c_, h_, w_ = (dl.extent(a) for a in "NCHW")
    o_, kh, kw = kl.extent("O"), kl.extent("H"), kl.extent("W")
    depthwise = groups > 1 and groups == c_ == o_ and kl.extent("I") == 1 and kib == 1 and ib == ob
    # a grouped convolution whose groups are whole channel blocks: each output block reads the
    # input blocks of its group
    whole = not depthwise and kib == ib and (o_ // groups) % ob == 0 and (c_ // groups) % ib == 0
    if ob % CHANNEL_BLOCK or kl.factor["O"] != ob or not (depthwise or whole):
        return False
    oh, ow = ol.extent("H"), ol.extent("W")
    sh, sw = _attr(op, "strides")
    pt, pl, _, _ = _attr(op, "padding")
    dh, dw = _attr(op, "dilation")
    lanes = WIDE_BLOCK if ob % WIDE_BLOCK == 0 else CHANNEL_BLOCK
    f = f"XR_F{lanes}"
    nv = ob // lanes
    px = max(1, (WIDE_TILE_LANES if lanes == WIDE_BLOCK else TILE_LANES) // ob)
    xs, ws, ys = dl.strides, kl.strides, ol.strides
    src, wp = em.ptr[x], em.ptr[w]
    dst = em.result_ptr(y, op)
    em.uses_kernels = True
    lines = [f"for (int64_t n = 0; n < {n_}; ++n) {{",
             f"  for (int64_t cb = 0; cb < {o_ // ob}; ++cb) {{",
             f"    const float *restrict wo = {wp} + cb * {ws[0]};",
             f"    for (int64_t oy = 0; oy < {oh}; ++oy) {{",
             f"      float *restrict yr = {dst} + n * {ys[0]} + cb * {ys[1]} + oy * {ys[2]};"]  # fmt: skip
    for first, end, n, valid in _x_tiles(ow, px, sw, pl, dw, kw, w_):
        acc = [f"a{p}_{v}" for p in range(n) for v in range(nv)]
        body = [f"{f}_ZERO({a});" for a in acc]
        # depthwise: the tap's input channels are the output's (a vector each); else every
        # input channel block, each channel's value broadcast
        first_block = "" if groups == 1 else f"cb / {(o_ // groups) // ob} * {(c_ // groups) // ib} + "
        chan, wk = ("cb", "") if depthwise else (f"{first_block}icb", f"icb * {ws[1]} + ")
        body += [] if depthwise else [f"for (int64_t icb = 0; icb < {(c_ // groups) // ib}; ++icb) {{"]
        body += [f"for (int64_t ki = 0; ki < {kh}; ++ki) {{",
                 f"  const int64_t iy = oy * {sh} - {pt} + ki * {dh};",
                 f"  if (iy < 0 || iy >= {h_}) continue;",
                 f"  const float *restrict xr = {src} + n * {xs[0]} + ({chan}) * {xs[1]} + iy * {xs[2]} + (ox * {sw} - {pl}) * {ib};",
                 f"  const float *restrict wk = wo + {wk}ki * {ws[2]};"]  # fmt: skip
        for kj in (kj for kj in range(kw) if valid[kj]):
            at = [(p, (p * sw + kj * dw) * ib) for p in valid[kj]]
            if depthwise:
                body += ["  {", *(f"    {f}_LOAD(w{v}, wk + {kj * ws[3] + v * lanes});" for v in range(nv))]
                body += [f"    {{ {f}_LOAD(x{v}, xr + {a + v * lanes}); {f}_MACV(a{p}_{v}, x{v}, w{v}); }}"
                         for p, a in at for v in range(nv)]  # fmt: skip
            else:
                body += [f"  for (int64_t ii = 0; ii < {ib}; ++ii) {{",
                         *(f"    {f}_LOAD(w{v}, wk + {kj * ws[3]} + ii * {ob} + {v * lanes});" for v in range(nv))]
                body += [f"    {{ const float xv = xr[{a} + ii]; " + " ".join(f"{f}_MAC(a{p}_{v}, xv, w{v});" for v in range(nv)) + " }"
                         for p, a in at]  # fmt: skip
            body += ["  }"]
        body += ["}"] if depthwise else ["}", "}"]
        body += [f"{f}_STORE(yr + (ox + {p}) * {ob} + {v * lanes}, a{p}_{v});"
                 for p in range(n) for v in range(nv)]  # fmt: skip
        lines += [f"      for (int64_t ox = {first}; ox < {end}; ox += {n}) {{"]
        lines += [f"        {b}" for b in body] + ["      }"]
    lines += ["    }", "  }", "}"]
    em.lines += [f"  {ln}" for ln in lines]
    return True


WINOGRAD_BAND_BYTES = 1536 * 1024
"""The most scratch a Winograd convolution's band of tiles takes (its transformed tiles and
their products, ``36 x band x (in + out channels)`` floats): whole images where they fit
(ResNet-18's 14x14x256 layers: 16 tiles, 1.2 MB), else bands of tiles that do."""

WINOGRAD_TP = 6
"""Tiles of one register tile of the Winograd products (``XR_WINO_TP`` of
``xrelay_winograd.h``): a band is a multiple of it where it can be (the rest run one tile at
a time)."""


def winograd_band(tiles: int, c: int, o: int) -> int:
    """The tiles of one band of a Winograd convolution over ``tiles`` tiles per image, ``c``
    input and ``o`` output channels: equal bands within ``WINOGRAD_BAND_BYTES``, rounded up to
    whole register tiles."""
    most = max(WINOGRAD_TP, WINOGRAD_BAND_BYTES // (36 * (c + o) * 4) // WINOGRAD_TP * WINOGRAD_TP)
    bands = -(-tiles // most)
    each = -(-tiles // bands)
    return min(tiles, -(-each // WINOGRAD_TP) * WINOGRAD_TP)


def _conv2d_winograd(em: _Emitter, op: RelayOp) -> None:
    """``nn.contrib_conv2d_winograd_without_weight_transform`` (made by ``conv2d-winograd``):
    ``xr_conv2d_winograd4_nchwc`` of ``xrelay_winograd.h`` over ``NCHW{ib}c`` data (``NCHW``
    is ib = 1) into ``NCHW{ob}c`` results, ob a multiple of 8, float32, F(4x4, 3x3), weights
    packed ``(6, 6, O / 8, I, 8)``. Its scratch (a band's transformed tiles and products, the
    transforms' rows) is the function's, so it is in the plan."""
    x, u = op.operands
    y = op.results[0]
    what = em.what(op)
    data_layout = _attr(op, "data_layout")
    dl = _Layout(data_layout, x.type.get_shape(), f"{what} data")
    ol = _Layout(_attr(op, "out_layout") or data_layout, y.type.get_shape(), f"{what} result")
    ib, ob = dl.factor.get("C", 1), ol.factor.get("C", 1)
    n_, c_, h_, w_ = (dl.extent(a) for a in "NCHW")
    o_, oh, ow = ol.extent("C"), ol.extent("H"), ol.extent("W")
    if (any(c_type(v.type, what) != "float" or stored_dtype(v.type) for v in (x, u, y))
            or dl.names[:4] != list("NCHW") or ol.names != list("NCHWc") or ob % CHANNEL_BLOCK
            or _attr(op, "tile_size") != 4 or u.type.get_shape() != (6, 6, o_ // 8, c_, 8)):  # fmt: skip
        raise CodegenError(
            f"{what}: the C target runs Winograd F(4x4, 3x3) on float32 NCHW or NCHW{{k}}c data into "
            f"an NCHW{{8k}}c result with weights (6, 6, O/8, I, 8); got {data_layout} "
            f"{x.type.get_shape()} -> {ol.names} {y.type.get_shape()}, weights {u.type.get_shape()}, "
            f"tile_size {_attr(op, 'tile_size')}"
        )
    pt, pl, _, _ = _attr(op, "padding")
    band = winograd_band(-(-oh // 4) * -(-ow // 4), c_, o_)
    v = em.scratch_buffer(36 * band * c_, "float")
    m = em.scratch_buffer(36 * band * o_, "float")
    work = em.scratch_buffer(37 * ib + 24 * 8 + 16 * 8, "float")  # XR_WINO4_WORK(ib)
    src, wp = em.ptr[x], em.ptr[u]
    dst = em.result_ptr(y, op)
    em.uses_kernels = em.uses_winograd = True
    em.out(f"xr_conv2d_winograd4_nchwc({src}, {wp}, {dst}, {n_}, {c_}, {h_}, {w_}, {ib}, {o_}, {oh}, {ow}, "
           f"{ob}, {pt}, {pl}, {band}, {v}, {m}, {work});")  # fmt: skip


INT8_TILE = (2, 4)
"""Output pixels x output channels of an 8-bit convolution's register tile: 8 int32 dot
products sharing each loaded patch and weight row. (4, 4) spilled: GCC kept 16 accumulators
but not the 8 row pointers, and int8 ResNet-18's exported program (static functions) took 12 %
more CPU time than with (2, 4); the ``-fPIC`` shared library was within noise either way."""

INT8_K_ALIGN = 64
"""An 8-bit convolution's patch length is padded with zeros to a multiple of this many bytes
(the widest vector, AVX-512's; a multiple of SSE's and NEON's 16) so that the dot products'
loop has no scalar remainder: a remainder of 19 made ResNet-18's 7x7x3 stem 7x slower per
multiply-add than its 3x3 layers. Rows of another length are copied into scratch per call.
Patches shorter than this (a 1x1 kernel over 16 or 24 channels) pad to ``INT8_K_ALIGN_SHORT``
instead: to 64 they would multiply 4x or 2.7x as many zeros as values."""

EPILOGUE_SPAN = 256
"""The fewest output elements of a channel an 8-bit convolution's epilogue runs over as one
loop: it computes that many rows of int32 sums (every channel) into scratch first, so the
int32 result in memory is a band of rows, not the map."""

INT8_K_ALIGN_SHORT = 16
"""The padding of an 8-bit convolution's patches shorter than ``INT8_K_ALIGN`` bytes: SSE's and
NEON's vector (GCC's 16-byte vpdpbusd/pmaddwd forms), so 16, 32 or 48 bytes."""


def _epilogue(em: _Emitter, op: RelayOp) -> RelayOp | None:
    """The chain (its root) that only ``op``'s result feeds, when the chain may be computed
    where ``op`` stores each element (its epilogue: a requantize's casts, bias, multiply,
    clip): the chain's result has ``op``'s shape, reads ``op``'s result only, and everything
    else it reads is ready before ``op`` (parameters, constants, earlier results). ``op``'s
    result then never exists in memory."""
    y = op.results[0]
    if y in em.returned or not y.uses:
        return None
    roots = {em.root_of.get(u.operation, u.operation) for u in y.uses}
    if len(roots) != 1:
        return None
    root = roots.pop()
    if (not _elementwise_op(root) or root.parent is not op.parent
            or root.results[0].type.get_shape() != y.type.get_shape()):  # fmt: skip
        return None
    members = em.chain(root)
    produced = {m.results[0] for m in members}
    order = {o: i for i, o in enumerate(op.parent.ops)}
    for v in (v for m in members for v in m.operands if v is not y and v not in produced):
        owner = v.owner
        if isinstance(owner, Operation) and not isinstance(owner, ConstantOp) and order[owner] > order[op]:
            return None
    return root


def _emit_epilogue(em: _Emitter, op: RelayOp, root: RelayOp) -> tuple[Callable[[str, Sequence[str]], list[str]], Callable[[Sequence[str]], str]]:
    """Make ``root``'s chain ``op``'s epilogue: ``(store, row)``, where ``store(acc, coords)``
    gives the statements computing the chain from ``acc``, the sum of the element at
    ``coords`` (C expressions, one per dimension), into the row pointer ``yo`` that
    ``row(coords)`` declares."""
    y = op.results[0]
    full = list(y.type.get_shape())
    members = em.chain(root)
    for m in members:
        for v in m.operands:
            if isinstance(v.owner, ConstantOp) and v not in em.ptr:
                em.emit_constant(v.owner)  # (a constant after the op, emitted now)
                em.done.add(v.owner)
    em.done.add(root)
    r = root.results[0]
    dst = em.dest.pop(r) if r in em.dest else em.scratch_slot(r.type, c_type(r.type, em.what(root)), em.what(root))
    em.ptr[r] = dst

    def at(coords: Sequence[str], strides: Sequence[int]) -> str:
        return " + ".join(f"({c}) * {st}" if st != 1 else f"({c})" for c, st in zip(coords, strides) if st) or "0"

    rt = c_type(r.type, em.what(root))

    def store(acc: str, coords: Sequence[str]) -> list[str]:
        """The chain of the element ``i`` of the rows from ``(n, c, y0)`` on (``coords`` is
        ``(n, c, y0, i)``: row ``y0 + i / W``, column ``i % W``) into ``yo`` (``row``)."""
        n, c, y0, i = coords
        width = full[-1]

        def read(m, k, v):
            if v is y:
                return acc
            sn, sc, sh, sw = _operand_strides(m, k, v, full)
            if sh == width * sw:  # rows and columns walked as one (per-channel: both 0)
                return f"{em.ptr[v]}[{at((n, c, f'{y0} * {width} + {i}'), (sn, sc, sw))}]"
            return f"{em.ptr[v]}[{at((n, c, f'{y0} + {i} / {width}', f'{i} % {width}'), (sn, sc, sh, sw))}]"

        body, value = _chain_body(em, members, read)
        return ["{", *(f"  {b}" for b in body), f"  yo[{i}] = {value};", "}"]

    def row(coords: Sequence[str]) -> str:
        """``yo``, the result's row at ``coords`` (the column left out), declared ``restrict``:
        the compiler then knows the stores write nothing the chain reads (an out pointer may
        alias anything), and vectorises the row without run-time overlap checks (1.4x)."""
        return f"{rt} *restrict yo = {dst} + {at([*coords, '0'], _strides(full))};"

    return store, row


PW_PIXELS, PW_CHANNELS = 64, 4
WIDE_ROW = 48
"""The fewest output columns for which a uint8 x int8 convolution with patches runs its rows
as the pointwise GEMM's tiles of ``PW_PIXELS`` (at least 3/4 of the lanes used): ResNet-18's
7x7 stem (112 columns) and first stage (56)."""
"""``XR_PW_PIXELS`` and ``XR_PW_CHANNELS`` of ``xrelay_kernels.h``: the pixels of a pointwise
8-bit convolution's tile and the output channels one call of ``xr_pw_tile_u8s8`` sums."""


def _conv2d_int8_pointwise(em: _Emitter, op: RelayOp, dl: _Layout, kl: _Layout, ol: _Layout) -> bool:
    """A pointwise 8-bit convolution (1x1 kernel, stride 1, no padding, one group; uint8 data,
    int8 weights, int32 result; ``NCHW`` data and result, ``OIHW`` or ``OHWI`` kernel: the same
    bytes for 1x1) as a GEMM over the channels-first map read in place (``xr_pw_pack_u8`` and
    ``xr_pw_tile_u8s8`` in ``xrelay_kernels.h``): per tile of ``PW_PIXELS`` pixels, the tile's
    channels are interleaved by fours into scratch (``cp`` x 64 bytes, the only copy of the
    input), then every ``PW_CHANNELS`` output channels sum over it into a 4 x 64 int32 tile,
    which the epilogue (the requantize chain after the convolution, ``_epilogue``) stores
    straight into the 8-bit result. Weight rows are read in place when the channels are a
    multiple of 4 and the output channels of ``PW_CHANNELS``, else copied once per call into
    zero-padded rows. False (nothing emitted) for any other form, and where an int32 sum could
    overflow."""
    x, w = op.operands
    y = op.results[0]
    xt, wt, acc = (c_type(v.type, em.what(op)) for v in (x, w, y))
    if (xt, wt, acc) != ("uint8_t", "int8_t", "int32_t") or _attr(op, "groups") != 1:
        return False
    if dl.names != list("NCHW") or ol.names != list("NCHW") or kl.names not in (list("OHWI"), list("OIHW")):
        return False
    if (kl.extent("H"), kl.extent("W")) != (1, 1) or tuple(_attr(op, "strides")) != (1, 1) or any(_attr(op, "padding")):
        return False
    n_, c_, h_, w_ = (dl.extent(a) for a in "NCHW")
    o_ = kl.extent("O")
    if c_ * 255 * 128 > 2**31 - 1:  # the largest |uint8 x int8| product, c_ times
        return False
    p_ = h_ * w_
    cp = -(-c_ // 4) * 4
    o4 = -(-o_ // PW_CHANNELS) * PW_CHANNELS
    src, wgt = em.ptr[x], em.ptr[w]
    root = _epilogue(em, op)
    store, out_row = _emit_epilogue(em, op, root) if root is not None else (None, None)
    dst = em.result_ptr(y, op) if store is None else None
    xs = em.scratch_buffer(cp * PW_PIXELS, "uint8_t")
    tile = em.scratch_buffer(PW_CHANNELS * PW_PIXELS, "int32_t")
    em.uses_kernels = True
    lines = []
    if (cp, o4) != (c_, o_):  # weight rows padded with zeros to cp, and zero rows up to o4
        wq = em.scratch_buffer(o4 * cp, "int8_t")
        lines += [f"for (int64_t i = 0; i < {o4 * cp}; ++i) {wq}[i] = 0;",
                  f"for (int64_t o = 0; o < {o_}; ++o)",
                  f"  for (int64_t c = 0; c < {c_}; ++c) {wq}[o * {cp} + c] = {wgt}[o * {c_} + c];"]  # fmt: skip
        wgt = wq
    last = "" if o4 == o_ else f" && o + q < {o_}"
    lines += [f"for (int64_t n = 0; n < {n_}; ++n) {{",
              f"  for (int64_t p0 = 0; p0 < {p_}; p0 += {PW_PIXELS}) {{",
              f"    const int64_t np = {p_} - p0 < {PW_PIXELS} ? {p_} - p0 : {PW_PIXELS};",
              f"    xr_pw_pack_u8({src} + n * {c_ * p_} + p0, {xs}, {c_}, {cp}, {p_}, np);",
              f"    for (int64_t o = 0; o < {o4}; o += {PW_CHANNELS}) {{",
              f"      xr_pw_tile_u8s8({xs}, {wgt} + o * {cp}, {cp}, {cp}, np, {tile});",
              f"      for (int64_t q = 0; q < {PW_CHANNELS}{last}; ++q) {{",
              f"        const int32_t *restrict ar = {tile} + q * {PW_PIXELS};"]  # fmt: skip
    if store is not None:
        lines += [f"        {out_row(('n', 'o + q', '0'))}",
                  "        for (int64_t i = 0; i < np; ++i) {",
                  *(f"          {ln}" for ln in store("ar[i]", ("n", "o + q", "0", "p0 + i"))),
                  "        }"]  # fmt: skip
    else:
        lines += [f"        int32_t *restrict yo = {dst} + n * {o_ * p_} + (o + q) * {p_} + p0;",
                  "        for (int64_t i = 0; i < np; ++i) yo[i] = ar[i];"]  # fmt: skip
    lines += ["      }", "    }", "  }", "}"]
    em.lines += [f"  {ln}" for ln in lines]
    return True


def _int8_gemm_conv(op: Operation) -> bool:
    """Whether ``op`` is an 8-bit convolution ``_conv2d_int8`` takes: 8-bit data and kernel,
    int32 result, ``NCHW`` data and result, ``OHWI`` kernel (``alter-op-layout``'s), one group,
    and no int32 sum of a patch that could overflow."""
    if not isinstance(op, RelayOp) or op.RELAY_NAME != "nn.conv2d" or _attr(op, "groups") != 1:
        return False
    x, w = op.operands
    dts = [dtype_of(v.type.element_type) for v in (x, w, op.results[0])]
    if dts[0] not in ("uint8", "int8") or dts[1] not in ("uint8", "int8") or dts[2] != "int32":
        return False
    if ((_attr(op, "data_layout") or "NCHW") != "NCHW" or _attr(op, "kernel_layout") != "OHWI"
            or (_attr(op, "out_layout") or "NCHW") != "NCHW"):  # fmt: skip
        return False
    _, kh, kw, ci = w.type.get_shape()
    largest = max(abs(v) for v in _int_range(dts[0])) * max(abs(v) for v in _int_range(dts[1]))
    return kh * kw * ci * largest <= 2**31 - 1


def _conv2d_int8(em: _Emitter, op: RelayOp, dl: _Layout, kl: _Layout, ol: _Layout) -> bool:
    """An 8-bit convolution (``NCHW`` data, ``OHWI`` kernel: ``alter-op-layout``'s choice for
    8-bit data, int32 result) as dot products over contiguous patches, GEMM-style: the input is
    copied once into scratch channels-last with the convolution's padding (zeros), each output
    row's patches (kernel rows x columns x channels, the kernel's order) are gathered into a
    row of scratch by contiguous copies (a 1x1 kernel reads the channels-last input in place),
    and each tile of ``INT8_TILE`` pixels x output channels accumulates in int32 over the
    patch length (``INT8_K_ALIGN``-padded), a constant trip count, which compilers turn into
    8-bit dot-product instructions (vpdpbusd, pmaddwd, sdot). False (nothing emitted) for any
    other form, and where an int32 sum of the patch could overflow."""
    if not _int8_gemm_conv(op):
        return False
    x, w = op.operands
    y = op.results[0]
    xt, wt = (c_type(v.type, em.what(op)) for v in (x, w))
    n_, c_, h_, w_ = (dl.extent(a) for a in "NCHW")
    o_, kh, kw = kl.extent("O"), kl.extent("H"), kl.extent("W")
    oh, ow = ol.extent("H"), ol.extent("W")
    sh, sw = _attr(op, "strides")
    pt, pl, pb, pr = _attr(op, "padding")
    dh, dw = _attr(op, "dilation")
    k_ = kh * kw * c_
    # uint8 x int8 over whole quads of channels: tiles of PW_PIXELS output pixels of a band of
    # rows (across rows) as the pointwise GEMM's, patches packed straight from the
    # channels-last copy (no row of patches, no padding of the patch length)
    band = (xt, wt) == ("uint8_t", "int8_t") and c_ % 4 == 0 and o_ % PW_CHANNELS == 0
    align = 4 if band else INT8_K_ALIGN if k_ >= INT8_K_ALIGN else INT8_K_ALIGN_SHORT
    kp = -(-k_ // align) * align
    value = "0"
    if x in em.pads:  # the nn.pad before it, never made: its operand, padded in the copy
        src, (pt, pl, pb, pr), value, (_, _, h_, w_) = em.pads.pop(x)
    else:
        src = em.ptr[x]
    patches = kh * kw > 1
    hp, wp_ = h_ + pt + pb, w_ + pl + pr
    cs = c_ if patches else kp  # a 1x1 kernel's patch is a pixel's (padded) channels
    wgt = em.ptr[w]
    # the requantize chain after it runs in the tile store: no int32 result in memory
    root = _epilogue(em, op)
    store, out_row = _emit_epilogue(em, op, root) if root is not None else (None, None)
    dst = em.result_ptr(y, op) if store is None else None
    xs = em.scratch_buffer(hp * wp_ * cs, xt)
    col = em.scratch_buffer(ow * kp, xt) if patches and not band else None
    # With an epilogue, the int32 sums of a group of output rows (every channel) go to
    # scratch, then the chain runs over each channel's rows as one loop (rows of 14 or 56
    # columns are too short a loop for the chain: 2.8x slower than a loop over the map)
    # uint8 x int8 patches of rows at least WIDE_ROW wide run as the pointwise GEMM's tiles
    # (xr_pw_tile_u8s8: no horizontal sums, patches padded to 4 bytes, not 16 or 64)
    wide = patches and not band and (xt, wt) == ("uint8_t", "int8_t") and ow >= WIDE_ROW and o_ % PW_CHANNELS == 0
    if wide or band:
        em.uses_kernels = True
        xq = em.scratch_buffer(-(-k_ // 4) * 4 * PW_PIXELS, "uint8_t")
        tile = em.scratch_buffer(PW_CHANNELS * PW_PIXELS, "int32_t")
    rows = min(oh, -(-EPILOGUE_SPAN // ow)) if store is not None or not band else oh
    acc_rows = em.scratch_buffer(o_ * rows * ow, "int32_t") if store is not None else None
    lines = [f"for (int64_t n = 0; n < {n_}; ++n) {{"]
    if kp != k_:  # weight rows padded with zeros
        wq = em.scratch_buffer(o_ * kp, wt)
        lines += [f"  for (int64_t i = 0; i < {o_ * kp}; ++i) {wq}[i] = 0;",
                  f"  for (int64_t o = 0; o < {o_}; ++o)",
                  f"    for (int64_t k = 0; k < {k_}; ++k) {wq}[o * {kp} + k] = {wgt}[o * {k_} + k];"]  # fmt: skip
        wgt = wq
    if cs != c_:  # a 1x1 patch's channel tail: every pixel's
        lines += ["  {", f"    const {xt} pv = ({xt})({value});",  # (a local: the stores cannot change it)
                  f"    for (int64_t i = 0; i < {hp * wp_ * cs}; ++i) {xs}[i] = pv;", "  }"]  # fmt: skip
    elif any((pt, pl, pb, pr)):  # the border only: the copy below writes the rest (filling the
        # whole map took 0.03 ms of a 56x56x64 layer's 0.98)
        row = wp_ * cs
        lines += ["  {", f"    const {xt} pv = ({xt})({value});",
                  f"    for (int64_t i = 0; i < {pt * row}; ++i) {xs}[i] = pv;",
                  f"    for (int64_t i = {(pt + h_) * row}; i < {hp * row}; ++i) {xs}[i] = pv;",
                  f"    for (int64_t y = {pt}; y < {pt + h_}; ++y) {{",
                  f"      for (int64_t i = 0; i < {pl * cs}; ++i) {xs}[y * {row} + i] = pv;",
                  f"      for (int64_t i = {(pl + w_) * cs}; i < {row}; ++i) {xs}[y * {row} + i] = pv;",
                  "    }", "  }"]  # fmt: skip
    if col is not None and kp != k_:
        lines += [f"  for (int64_t i = 0; i < {ow * kp}; ++i) {col}[i] = 0;"]
    # (through restrict pointers: an input pointer may alias the scratch, and GCC then left the
    # copy scalar; channels innermost: each pixel's bytes stored together, where a byte every cs
    # bytes made ResNet-18's 56x56x64 layer take 1.25 ms, not 0.98)
    lines += ["  {", f"  const {xt} *restrict xin = {src} + n * {c_ * h_ * w_};", f"  {xt} *restrict xcl = {xs};",
              f"  for (int64_t y = 0; y < {h_}; ++y)",
              f"    for (int64_t x = 0; x < {w_}; ++x)",
              f"      for (int64_t c = 0; c < {c_}; ++c)",
              f"        xcl[((y + {pt}) * {wp_} + x + {pl}) * {cs} + c] = xin[c * {h_ * w_} + y * {w_} + x];", "  }"]
    if band:
        lines += _int8_band_tiles(op, store, out_row, dst, xs, xq, tile, wgt, acc_rows, rows, wp_)
        em.lines += [f"  {ln}" for ln in lines]
        return True
    lines += [*([f"  for (int64_t oy0 = 0; oy0 < {oh}; oy0 += {rows}) {{",
                 f"  for (int64_t oy = oy0; oy < (oy0 + {rows} < {oh} ? oy0 + {rows} : {oh}); ++oy) {{"]
                if store is not None else [f"  for (int64_t oy = 0; oy < {oh}; ++oy) {{"])]  # fmt: skip
    if patches:
        run, runs = (kw * c_, [("0", "0")]) if dw == 1 else (c_, [(str(j), f"{j * dw}") for j in range(kw)])
        lines += [f"    for (int64_t ox = 0; ox < {ow}; ++ox)",
                  f"      for (int64_t ki = 0; ki < {kh}; ++ki) {{",
                  f"        const {xt} *restrict s = {xs} + ((oy * {sh} + ki * {dh}) * {wp_} + ox * {sw}) * {c_};",
                  f"        {xt} *restrict d = {col} + ox * {kp} + ki * {kw * c_};",
                  *(f"        for (int64_t t = 0; t < {run}; ++t) d[{j} * {c_} + t] = s[{off} * {c_} + t];" for j, off in runs),
                  "      }"]  # fmt: skip
        row = f"{col} + {{p}} * {kp}"
    else:
        row = f"{xs} + (oy * {sh} * {wp_} + {{p}} * {sw}) * {cs}"
    tp, to = INT8_TILE
    ob = to if o_ % to == 0 else 1
    if store is not None:  # the sums of the group's rows, every channel's contiguous
        yrow, ys = f"{acc_rows} + o * {rows * ow} + (oy - oy0) * {ow}", rows * ow
    else:
        yrow, ys = f"{dst} + n * {o_ * oh * ow} + o * {oh * ow} + oy * {ow}", oh * ow
    if wide:  # the row's patches as the pointwise GEMM's pixels: tiles of 64 by 4 channels
        cq = -(-k_ // 4) * 4  # the patch's quads (the rest of kp is zeros on both sides)
        lines += [f"    for (int64_t p0 = 0; p0 < {ow}; p0 += {PW_PIXELS}) {{",
                  f"      const int64_t np = {ow} - p0 < {PW_PIXELS} ? {ow} - p0 : {PW_PIXELS};",
                  f"      xr_pw_pack_rows_u8({col} + p0 * {kp}, {kp}, {xq}, {cq}, np);",
                  f"      for (int64_t o = 0; o < {o_}; o += {PW_CHANNELS}) {{",
                  f"        xr_pw_tile_u8s8({xq}, {wgt} + o * {kp}, {cq}, {kp}, np, {tile});",
                  f"        int32_t *restrict yr = {yrow};",
                  f"        for (int64_t q = 0; q < {PW_CHANNELS}; ++q)",
                  f"          for (int64_t i = 0; i < np; ++i) yr[q * {ys} + p0 + i] = {tile}[q * {PW_PIXELS} + i];",
                  "      }", "    }", "  }"]  # fmt: skip
    else:
        lines += _int8_tiles(xt, wt, wgt, kp, o_, ow, ob, tp, row, yrow, ys)
    if store is not None:  # the chain over each channel's rows of the group: one long loop
        lines += [f"  for (int64_t o = 0; o < {o_}; ++o) {{",
                  f"    {out_row(('n', 'o', 'oy0'))}",
                  f"    const int32_t *restrict ar = {acc_rows} + o * {rows * ow};",
                  f"    for (int64_t i = 0; i < ((oy0 + {rows} < {oh} ? oy0 + {rows} : {oh}) - oy0) * {ow}; ++i) {{",
                  *(f"      {ln}" for ln in store("ar[i]", ("n", "o", "oy0", "i"))),
                  "    }", "  }", "  }"]  # fmt: skip
    lines += ["}"]
    em.lines += [f"  {ln}" for ln in lines]
    return True


def _int8_band_tiles(op: RelayOp, store, out_row, dst: str | None, xs: str, xq: str, tile: str, wgt: str,
                     acc_rows: str | None, rows: int, wp_: int) -> list[str]:
    """``_conv2d_int8``'s uint8 x int8 convolution over whole channel quads after its
    channels-last copy ``xs`` (padded rows of ``wp_`` pixels): per band of ``rows`` output rows
    (with an epilogue, its int32 sums of every channel go to ``acc_rows``, then the chain runs
    over each channel's band), tiles of ``PW_PIXELS`` consecutive pixels of the band, across its
    rows (``xr_pw_pack_patches_u8`` packs their patches as the pointwise GEMM's pixels), each
    summed ``PW_CHANNELS`` output channels at a time by ``xr_pw_tile_u8s8``: no horizontal
    sums, every lane used on 14- and 7-column maps, the weights read in place (rows of ``k``
    bytes, a multiple of 4)."""
    x, w = op.operands
    c_ = x.type.get_shape()[1]
    o_, kh, kw, _ = w.type.get_shape()
    oh, ow = op.results[0].type.get_shape()[2:]
    sh, sw = _attr(op, "strides")
    dh, dw = _attr(op, "dilation")
    k_ = kh * kw * c_
    nr, rx, run = (1, 0, kw * c_) if dw == 1 else (kw, dw * c_, c_)
    sy = sh * wp_ * c_
    if store is not None:
        yrow, ys = f"{acc_rows} + o * {rows * ow}", rows * ow
    else:
        yrow, ys = f"{dst} + n * {o_ * oh * ow} + o * {oh * ow} + oy0 * {ow}", oh * ow
    lines = [f"  for (int64_t oy0 = 0; oy0 < {oh}; oy0 += {rows}) {{",
             f"    const int64_t bp = ((oy0 + {rows} < {oh} ? oy0 + {rows} : {oh}) - oy0) * {ow};",
             f"    for (int64_t p0 = 0; p0 < bp; p0 += {PW_PIXELS}) {{",
             f"      const int64_t np = bp - p0 < {PW_PIXELS} ? bp - p0 : {PW_PIXELS};",
             f"      xr_pw_pack_patches_u8({xs} + oy0 * {sy}, {xq}, p0, np, {ow}, {sy}, {sw * c_}, {kh}, "
             f"{dh * wp_ * c_}, {nr}, {rx}, {run});",
             f"      for (int64_t o = 0; o < {o_}; o += {PW_CHANNELS}) {{",
             f"        xr_pw_tile_u8s8({xq}, {wgt} + o * {k_}, {k_}, {k_}, np, {tile});",
             f"        int32_t *restrict yr = {yrow};",
             f"        for (int64_t q = 0; q < {PW_CHANNELS}; ++q)",
             f"          for (int64_t i = 0; i < np; ++i) yr[q * {ys} + p0 + i] = {tile}[q * {PW_PIXELS} + i];",
             "      }", "    }"]  # fmt: skip
    if store is not None:  # the chain over each channel's rows of the band: one long loop
        lines += [f"    for (int64_t o = 0; o < {o_}; ++o) {{",
                  f"      {out_row(('n', 'o', 'oy0'))}",
                  f"      const int32_t *restrict ar = {acc_rows} + o * {rows * ow};",
                  "      for (int64_t i = 0; i < bp; ++i) {",
                  *(f"        {ln}" for ln in store("ar[i]", ("n", "o", "oy0", "i"))),
                  "      }", "    }"]  # fmt: skip
    return [*lines, "  }", "}"]


def _int8_tiles(xt, wt, wgt, kp, o_, ow, ob, tp, row, yrow, ys) -> list[str]:
    """The loops of ``INT8_TILE`` tiles over one output row (``_conv2d_int8``)."""
    lines = [f"    for (int64_t o = 0; o < {o_}; o += {ob}) {{",
              *(f"      const {wt} *restrict w{q} = {wgt} + (o + {q}) * {kp};" for q in range(ob)),
              f"      int32_t *restrict yr = {yrow};"]
    for first, end, np_ in [(0, ow - ow % tp, tp), (ow - ow % tp, ow, ow % tp)]:
        if first == end:
            continue
        accs = [f"a{p}_{q}" for p in range(np_) for q in range(ob)]
        lines += [f"      for (int64_t ox = {first}; ox < {end}; ox += {np_}) {{",
                  *(f"        const {xt} *restrict x{p} = {row.format(p=f'(ox + {p})')};" for p in range(np_)),
                  f"        int32_t {', '.join(f'{a} = 0' for a in accs)};",
                  f"        for (int64_t k = 0; k < {kp}; ++k) {{",
                  *(f"          const int32_t v{p} = x{p}[k];" for p in range(np_)),
                  *(f"          a{p}_{q} += v{p} * (int32_t)w{q}[k];" for p in range(np_) for q in range(ob)),
                  "        }",
                  *(f"        yr[{q} * {ys} + ox + {p}] = a{p}_{q};" for p in range(np_) for q in range(ob)),
                  "      }"]  # fmt: skip
    return [*lines, "    }", "  }"]


def _int8_depthwise(op: Operation) -> bool:
    """Whether ``op`` is an 8-bit depthwise convolution ``_conv2d_int8_depthwise`` takes:
    ``NCHW`` data and result, ``OIHW`` kernel of one input channel per group, int32 result."""
    if not isinstance(op, RelayOp) or op.RELAY_NAME != "nn.conv2d":
        return False
    x, w = op.operands
    y = op.results[0]
    if (any(dtype_of(v.type.element_type) not in ("uint8", "int8") for v in (x, w))
            or dtype_of(y.type.element_type) != "int32"):  # fmt: skip
        return False
    if ((_attr(op, "data_layout") or "NCHW") != "NCHW" or (_attr(op, "kernel_layout") or "OIHW") != "OIHW"
            or (_attr(op, "out_layout") or "NCHW") != "NCHW"):  # fmt: skip
        return False
    c_, o_, ki_ = x.type.get_shape()[1], w.type.get_shape()[0], w.type.get_shape()[1]
    return _attr(op, "groups") == c_ == o_ and ki_ == 1


def _pad_into_conv(em: _Emitter, op: RelayOp) -> bool:
    """A constant ``nn.pad`` of the height and width only (qnn's zero-point padding) whose one
    use is an unpadded 8-bit convolution of this function, depthwise or one ``_conv2d_int8``
    computes from a channels-last copy (not 1x1, which the pointwise GEMM takes): the padded
    map is never made (it was the largest scratch of MobileNetV2 int8's C, 1.2 MB, and a second
    copy of every ResNet-18 3x3 layer's input beside the channels-last one); the convolution
    pads as it copies (``em.pads``). The pad's operands stay live until the convolution is
    emitted."""
    y = op.results[0]
    if _attr(op, "pad_mode") != "constant" or y in em.returned or len(list(y.uses)) != 1:
        return False
    widths = [tuple(p) for p in _attr(op, "pad_width")]
    if len(widths) != 4 or widths[0] != (0, 0) or widths[1] != (0, 0):
        return False
    conv = next(iter(y.uses)).operation
    if (not isinstance(conv, RelayOp) or conv.RELAY_NAME != "nn.conv2d"
            or conv.parent is not op.parent or conv.operands[0] is not y):  # fmt: skip
        return False  # any other use (Swin-T's window pad feeds a reshape) needs the map
    if any(conv.attrs.get("padding") or ()):  # its own padding is zeros: two borders, two values
        return False
    gemm = _int8_gemm_conv(conv) and tuple(conv.operands[1].type.get_shape()[1:3]) != (1, 1)  # 1x1: pointwise
    if not (_int8_depthwise(conv) or gemm):
        return False
    at = list(op.parent.ops).index(conv)
    for v in op.operands:
        em.last_use[v] = max(em.last_use.get(v, -1), at)
    (pt, pb), (pl, pr) = widths[2], widths[3]
    em.pads[y] = (em.ptr[op.operands[0]], (pt, pl, pb, pr), f"{em.ptr[op.operands[1]]}[0]",
                  op.operands[0].type.get_shape())  # fmt: skip
    em.out("/* (into the convolution below) */")
    return True


def _conv2d_int8_depthwise(em: _Emitter, op: RelayOp, dl: _Layout, kl: _Layout, ol: _Layout) -> bool:
    """A depthwise 8-bit convolution (``_int8_depthwise``) channel by channel, with its
    epilogue (``_epilogue``: the requantize chain after it) over the channel's map of sums in
    scratch. Each channel sums all taps in ONE loop over its map (the weights hoisted), whose
    index ``m = oy * pw + ox`` walks output rows ``pw`` apart (the columns from ``ow`` on are
    computed and dropped): a 14x14 or 7x7 map is then a loop of 220 or 61 sums, not 14 or 7
    loops of a row, and compilers vectorise it. So a padded or strided convolution first copies
    the channel's plane into scratch (``xr_dw_plane_u8``) padded (its own zeros, or the value
    of the ``nn.pad`` before it, ``_pad_into_conv``, whose map is then never made) and split
    into ``sh x sw`` phases of rows and columns, each a plane of rows ``pw`` apart: every tap
    reads one phase at a fixed offset plus ``m``. An unpadded stride-1 convolution reads its
    input in place (rows ``w`` apart). The sums' rows are then moved ``ow`` apart. False
    (nothing emitted) for any other form."""
    if not _int8_depthwise(op):
        return False
    x, w = op.operands
    y = op.results[0]
    xt, wt = (c_type(v.type, em.what(op)) for v in (x, w))
    n_, c_, h_, w_ = (dl.extent(a) for a in "NCHW")
    o_, _, kh, kw = (kl.extent(a) for a in "OIHW")
    oh, ow = ol.extent("H"), ol.extent("W")
    sh, sw = _attr(op, "strides")
    pt, pl, pb, pr = _attr(op, "padding")
    dh, dw = _attr(op, "dilation")
    value = "0"
    if x in em.pads:  # the nn.pad before it, never made: its operand, padded here
        src, (qt, ql, qb, qr), value, (_, _, h_, w_) = em.pads.pop(x)
        pt, pl, pb, pr = pt + qt, pl + ql, pb + qb, pr + qr
    else:
        src = em.ptr[x]
    wgt = em.ptr[w]
    root = _epilogue(em, op)
    store, out_row = _emit_epilogue(em, op, root) if root is not None else (None, None)
    dst = em.result_ptr(y, op) if store is None else None
    copy = any((pt, pl, pb, pr)) or sw > 1 or sh > 1
    hp, wp_ = h_ + pt + pb, w_ + pl + pr
    pw = -(-wp_ // sw) if copy else w_  # the pitch of output rows in the flat loop
    hq = -(-hp // sh)
    plane = em.scratch_buffer(sh * sw * hq * pw, xt) if copy else None
    # the channel's sums, rows pw apart (the columns from ow on are discarded): in the result
    # when its rows are that far apart and no epilogue follows, else in scratch, compacted to
    # rows of ow (the epilogue then reads the map as one loop)
    flat = (oh - 1) * pw + ow
    rb = em.scratch_buffer(oh * pw, "int32_t") if store is not None or pw != ow else None
    yc = rb if rb is not None else f"{dst} + n * {o_ * oh * ow} + c * {oh * ow}"
    lines = [f"for (int64_t n = 0; n < {n_}; ++n) {{",
             f"  for (int64_t c = 0; c < {c_}; ++c) {{",
             f"    const {xt} *restrict xc = {src} + n * {c_ * h_ * w_} + c * {h_ * w_};",
             *(f"    const int32_t w{i}_{j} = (int32_t){wgt}[c * {kh * kw} + {i * kw + j}];" for i in range(kh) for j in range(kw))]  # fmt: skip
    if copy:
        em.uses_kernels = True
        lines += [f"    xr_dw_plane_u8((const uint8_t *)xc, (uint8_t *){plane}, {h_}, {w_}, {pt}, {pl}, {pb}, {pr}, "
                  f"{sh}, {sw}, (uint8_t)({value}));",
                  f"    const {xt} *restrict xp = {plane};"]  # fmt: skip
        taps = [[(((i * dh) % sh * sw + (j * dw) % sw) * hq + (i * dh) // sh) * pw + (j * dw) // sw
                 for j in range(kw)] for i in range(kh)]  # fmt: skip
    else:
        lines += [f"    const {xt} *restrict xp = xc;"]
        taps = [[i * dh * w_ + j * dw for j in range(kw)] for i in range(kh)]
    lines += [f"    int32_t *restrict yr = {yc};",
              f"    for (int64_t m = 0; m < {flat}; ++m)",
              "      yr[m] = " + " + ".join(
                  f"(int32_t)xp[m + {taps[i][j]}] * w{i}_{j}" for i in range(kh) for j in range(kw)) + ";"]  # fmt: skip
    if pw != ow:  # rows pw apart -> ow apart, in place (each moves down)
        lines += [f"    for (int64_t oy = 1; oy < {oh}; ++oy) memmove(yr + oy * {ow}, yr + oy * {pw}, {ow * 4});"]
        if store is None:
            lines += [f"    memcpy({dst} + n * {o_ * oh * ow} + c * {oh * ow}, yr, {oh * ow * 4});"]
    if store is not None:
        lines += [f"    {out_row(('n', 'c', '0'))}", f"    for (int64_t i = 0; i < {oh * ow}; ++i) {{",
                  *(f"      {ln}" for ln in store(f"{rb}[i]", ("n", "c", "0", "i"))), "    }"]  # fmt: skip
    lines += ["  }", "}"]
    em.lines += [f"  {ln}" for ln in lines]
    return True


def _conv2d_transpose(em: _Emitter, op: RelayOp) -> None:
    """Transposed convolution as the scatter it is: every input pixel adds its products with
    the kernel into the output window it reaches (taps outside the output are dropped)."""
    x, w = op.operands
    y = op.results[0]
    dl, kl, ol = _conv_layouts(op, x, w, y, "IOHW")
    n_, c_, h_, w_ = (dl.extent(a) for a in "NCHW")
    og, kh, kw = kl.extent("O"), kl.extent("H"), kl.extent("W")
    oh, ow = ol.extent("H"), ol.extent("W")
    groups = _attr(op, "groups")
    cg = c_ // groups
    sh, sw = _attr(op, "strides")
    pt, pl, _, _ = _attr(op, "padding")
    dh, dw = _attr(op, "dilation")
    acc = c_type(y.type, em.what(op))
    src, wp = em.ptr[x], em.ptr[w]
    dst = em.result_ptr(y, op)
    em.lines += [f"  for (int64_t i = 0; i < {_size(y.type.get_shape())}; ++i) {dst}[i] = 0;",
        f"  for (int64_t n = 0; n < {n_}; ++n) {{",
        f"    for (int64_t ic = 0; ic < {c_}; ++ic) {{",
        f"      const int64_t g = ic / {cg};",
        f"      for (int64_t oc = 0; oc < {og}; ++oc) {{",
        f"        for (int64_t ki = 0; ki < {kh}; ++ki) {{",
        f"          for (int64_t kj = 0; kj < {kw}; ++kj) {{",
        f"            const {acc} wv = ({acc}){wp}[{kl.index(dict(I='ic', O='oc', H='ki', W='kj'))}];",
        f"            for (int64_t iy = 0; iy < {h_}; ++iy) {{",
        f"              const int64_t oy = iy * {sh} + ki * {dh} - {pt};",
        f"              if (oy < 0 || oy >= {oh}) continue;",
        f"              for (int64_t ix = 0; ix < {w_}; ++ix) {{",
        f"                const int64_t ox = ix * {sw} + kj * {dw} - {pl};",
        f"                if (ox < 0 || ox >= {ow}) continue;",
        f"                {dst}[{ol.index(dict(N='n', C=f'g * {og} + oc', H='oy', W='ox'))}] += "
        f"({acc}){src}[{dl.index(dict(N='n', C='ic', H='iy', W='ix'))}] * wv;",
        "              }", "            }", "          }", "        }", "      }", "    }", "  }"]  # fmt: skip


def _dense(em: _Emitter, op: RelayOp) -> None:
    x, w = op.operands
    y = op.results[0]
    k = x.type.get_shape()[-1]
    m = _size(x.type.get_shape()) // max(k, 1)
    units = w.type.get_shape()[0]
    dst = em.result_ptr(y, op)
    acc = c_type(y.type, em.what(op))
    if {acc, c_type(x.type, ""), c_type(w.type, "")} == {"float"}:
        em.uses_kernels = True
        em.out(f"xr_dense_f32({em.ptr[x]}, {em.ptr[w]}, {dst}, {m}, {units}, {k});")
        return
    em.loops([m, units], [f"{acc} a = 0;",
        f"for (int64_t t = 0; t < {k}; ++t) a += ({acc}){em.ptr[x]}[i0 * {k} + t] * ({acc}){em.ptr[w]}[i1 * {k} + t];",
        f"{dst}[i0 * {units} + i1] = a;"])  # fmt: skip


def _pool(em: _Emitter, op: RelayOp) -> None:
    """2-D and global pools in any (blocked) layout; padding adds nothing to an average and the
    dtype's lowest value to a max (as TOPI pads), an average divides by the window positions inside
    the padded input (count_include_pad) or inside the input."""
    x, y = op.operands[0], op.results[0]
    name = op.RELAY_NAME
    layout = _attr(op, "layout") or "NCHW"
    il = _Layout(layout, x.type.get_shape(), f"{name} data")
    ol = _Layout(_attr(op, "out_layout") or layout, y.type.get_shape(), f"{name} result")
    n_, c_, h_, w_ = (il.extent(a) for a in "NCHW")
    oh, ow = ol.extent("H"), ol.extent("W")
    ctype = c_type(y.type, em.what(op))
    is_max = "max" in name
    acc = ctype
    if not is_max and not _is_float(ctype):
        if ctype == "uint8_t" and dtype_of(y.type.element_type) == "bool":
            raise CodegenError(f"{name} on bool has no C lowering")
        # integers sum in 64 bits and divide truncating, as the kernel
        acc = "uint64_t" if ctype[0] == "u" else "int64_t"
    if name.startswith("nn.global_"):
        kh, kw, sh, sw, dh, dw, pads, count_pad = h_, w_, 1, 1, 1, 1, (0, 0, 0, 0), False
    else:
        kh, kw = _attr(op, "pool_size")
        sh, sw = _attr(op, "strides")
        dh, dw = _attr(op, "dilation")
        pads = tuple(_attr(op, "padding"))
        count_pad = bool(_attr(op, "count_include_pad")) if not is_max else False
    pt, pl, pb, pr = pads
    padded = ""
    if is_max:
        init = "-INFINITY" if _is_float(ctype) else str(_int_range(dtype_of(y.type.element_type))[0])
        step = "acc = (v > acc || v != v) ? v : acc;" if _is_float(ctype) else "acc = v > acc ? v : acc;"
        final = []
        if _is_float(ctype):
            # TOPI pads max pools with the lowest value (tvm::min_value): a window over padding
            # is at least that, so one wholly in padding gives it, not -inf
            low = "-FLT_MAX" if ctype == "float" else "-DBL_MAX"
            padded = "pad = 1; "
            final = [f"if (pad && acc < {low}) acc = {low};"]
    else:
        init, step = "0", "acc += v;"
        lo_y, hi_y, lo_x, hi_x = (-pt, h_ + pb, -pl, w_ + pr) if count_pad else (0, h_, 0, w_)
        final = [f"const int32_t cnt = xr_window_count(y0, {kh}, {dh}, {lo_y}, {hi_y}) * "
                 f"xr_window_count(x0, {kw}, {dw}, {lo_x}, {hi_x});",
                 f"acc = acc / ({acc})(cnt > 1 ? cnt : 1);"]  # fmt: skip
        em.uses_kernels = True
    src, dst = em.ptr[x], em.result_ptr(y, op)

    def window(read: list[str]) -> list[str]:
        """The window's positions inside the input (a padded one marks ``pad``), ``read`` at each."""
        return [*(["int pad = 0;"] if padded else []),
                f"for (int32_t i = 0; i < {kh}; ++i) {{",
                f"  const int32_t iy = y0 + i * {dh};",
                f"  if (iy < 0 || iy >= {h_}) {{ {padded}continue; }}",
                f"  for (int32_t j = 0; j < {kw}; ++j) {{",
                f"    const int32_t ix = x0 + j * {dw};",
                f"    if (ix < 0 || ix >= {w_}) {{ {padded}continue; }}",
                *(f"    {ln}" for ln in read),
                "  }", "}"]  # fmt: skip

    if il.names == ol.names == list("NCHWc") and il.factor == ol.factor:
        # channel blocks: each window position's block of channels is contiguous, the
        # innermost loop over it vectorises
        b = il.factor["C"]
        lanes = f"for (int64_t l = 0; l < {b}; ++l)"
        lane_step = re.sub(r"\bacc\b", "acc[l]", step)
        if is_max and ctype == "float" and b % CHANNEL_BLOCK == 0:
            _max_pool_blocked(em, op, il, ol, (kh, kw, sh, sw, dh, dw, pt, pl))
            return
        count = [ln for ln in final if ln.startswith("const int32_t cnt")]
        lane_final = [re.sub(r"\bacc\b", "acc[l]", ln) for ln in final if ln not in count]
        em.loops([n_, c_ // b, oh, ow], [
            f"const int32_t y0 = (int32_t)(i2 * {sh} - {pt}), x0 = (int32_t)(i3 * {sw} - {pl});",
            f"{acc} acc[{b}];",
            f"{lanes} acc[l] = {init};",
            *window([f"const {ctype} *restrict vp = {src} + i0 * {il.strides[0]} + i1 * {il.strides[1]} + iy * {il.strides[2]} + ix * {il.strides[3]};",
                     f"{lanes} {{ const {ctype} v = vp[l]; {lane_step} }}"]),
            *count,
            f"{lanes} {{",
            *[f"  {ln}" for ln in lane_final],
            f"  {dst}[i0 * {ol.strides[0]} + i1 * {ol.strides[1]} + i2 * {ol.strides[2]} + i3 * {ol.strides[3]} + l] = ({ctype})acc[l];",
            "}",
        ])  # fmt: skip
        return
    if is_max and ctype in ("uint8_t", "int8_t") and il.names == ol.names == list("NCHW") and not name.startswith("nn.global_"):
        _max_pool_8bit(em, op, (n_, c_, h_, w_), (oh, ow), (kh, kw, sh, sw, dh, dw), pads, ctype, init)
        return
    coords = dict(N="i0", C="i1", H="iy", W="ix")
    em.loops([n_, c_, oh, ow], [
        f"const int32_t y0 = (int32_t)(i2 * {sh} - {pt}), x0 = (int32_t)(i3 * {sw} - {pl});",
        f"{acc} acc = {init};",
        *window([f"const {ctype} v = {src}[{il.index(coords)}];", step]),
        *final,
        f"{dst}[{ol.index(dict(N='i0', C='i1', H='i2', W='i3'))}] = ({ctype})acc;",
    ])  # fmt: skip


def _max_pool_blocked(em: _Emitter, op: RelayOp, il: _Layout, ol: _Layout, window) -> None:
    """A float max pool over ``NCHW{8k}c`` blocks: each window position's block is k
    ``XR_F8`` vectors, the maximum taken by ``XR_F8_MAX`` (a select, NaN winning, as the
    reference). The lane loop's ``(v > acc || v != v)`` stayed scalar and branchy (GCC unrolls
    8 lanes before it vectorises, then cannot if-convert): ResNet-18's 3x3 stride-2 pool over
    64x112x112 took 5.4 ms of its 43 ms."""
    kh, kw, sh, sw, dh, dw, pt, pl = window
    n_, c_, h_, w_ = (il.extent(a) for a in "NCHW")
    oh, ow = ol.extent("H"), ol.extent("W")
    b = il.factor["C"]
    nv = b // CHANNEL_BLOCK
    src, dst = em.ptr[op.operands[0]], em.result_ptr(op.results[0], op)
    xs, ys = il.strides, ol.strides
    em.uses_kernels = True
    em.loops([n_, c_ // b, oh, ow], [
        f"const int32_t y0 = (int32_t)(i2 * {sh} - {pt}), x0 = (int32_t)(i3 * {sw} - {pl});",
        f"float *restrict yp = {dst} + i0 * {ys[0]} + i1 * {ys[1]} + i2 * {ys[2]} + i3 * {ys[3]};",
        *(f"XR_F8_FILL(acc{v}, -INFINITY);" for v in range(nv)),
        "int pad = 0;",
        f"for (int32_t i = 0; i < {kh}; ++i) {{",
        f"  const int32_t iy = y0 + i * {dh};",
        f"  if (iy < 0 || iy >= {h_}) {{ pad = 1; continue; }}",
        f"  for (int32_t j = 0; j < {kw}; ++j) {{",
        f"    const int32_t ix = x0 + j * {dw};",
        f"    if (ix < 0 || ix >= {w_}) {{ pad = 1; continue; }}",
        f"    const float *restrict vp = {src} + i0 * {xs[0]} + i1 * {xs[1]} + iy * {xs[2]} + ix * {xs[3]};",
        *(f"    {{ XR_F8_LOAD(x{v}, vp + {v * CHANNEL_BLOCK}); XR_F8_MAX(acc{v}, x{v}); }}" for v in range(nv)),
        "  }", "}",
        *(f"XR_F8_STORE(yp + {v * CHANNEL_BLOCK}, acc{v});" for v in range(nv)),
        # TOPI pads with the lowest float: a window wholly in padding gives it, not -inf
        f"if (pad) for (int64_t l = 0; l < {b}; ++l) if (yp[l] < -FLT_MAX) yp[l] = -FLT_MAX;",
    ])  # fmt: skip


def _max_pool_8bit(em: _Emitter, op: RelayOp, nchw, ohw, window, pads, ctype: str, low: str) -> None:
    """An 8-bit ``NCHW`` max pool as the depthwise convolution's loop (``_conv2d_int8_depthwise``):
    each channel's plane copied padded with the dtype's lowest value (what TOPI pads a max pool
    with) and split into stride phases (``xr_dw_plane_u8``), then one loop over the channel's
    map, rows ``pw`` apart, taking the maximum of the window's taps at fixed offsets; the rows
    are then moved ``ow`` apart in the result. ResNet-18's 3x3 stride-2 pool over 64x112x112
    was a loop per output pixel with a bounds test per tap."""
    n_, c_, h_, w_ = nchw
    oh, ow = ohw
    kh, kw, sh, sw, dh, dw = window
    pt, pl, pb, pr = pads
    # (ceil_mode's last windows may reach past the padding: more of the lowest value)
    pb = max(pb, (oh - 1) * sh + (kh - 1) * dh + 1 - h_ - pt)
    pr = max(pr, (ow - 1) * sw + (kw - 1) * dw + 1 - w_ - pl)
    src, dst = em.ptr[op.operands[0]], em.result_ptr(op.results[0], op)
    hp, wp_ = h_ + pt + pb, w_ + pl + pr
    pw, hq = -(-wp_ // sw), -(-hp // sh)
    plane = em.scratch_buffer(sh * sw * hq * pw, ctype)
    row = em.scratch_buffer(oh * pw, ctype) if pw != ow else None
    taps = [(((i * dh) % sh * sw + (j * dw) % sw) * hq + (i * dh) // sh) * pw + (j * dw) // sw
            for i in range(kh) for j in range(kw)]  # fmt: skip
    em.uses_kernels = True
    body = f"{ctype} acc = xp[m + {taps[0]}];", *(f"if (xp[m + {t}] > acc) acc = xp[m + {t}];" for t in taps[1:])
    em.lines += [f"  for (int64_t c = 0; c < {n_ * c_}; ++c) {{",
                 f"    xr_dw_plane_u8((const uint8_t *)({src} + c * {h_ * w_}), (uint8_t *){plane}, {h_}, {w_}, {pt}, "
                 f"{pl}, {pb}, {pr}, {sh}, {sw}, (uint8_t)({ctype})({low}));",
                 f"    const {ctype} *restrict xp = {plane};",
                 f"    {ctype} *restrict yr = {row if row is not None else f'{dst} + c * {oh * ow}'};",
                 f"    for (int64_t m = 0; m < {(oh - 1) * pw + ow}; ++m) {{",
                 *(f"      {ln}" for ln in body),
                 "      yr[m] = acc;", "    }",
                 *([f"    for (int64_t oy = 0; oy < {oh}; ++oy) memcpy({dst} + c * {oh * ow} + oy * {ow}, yr + oy * {pw}, {ow});"]
                   if row is not None else []),
                 "  }"]  # fmt: skip


def _softmax(em: _Emitter, op: RelayOp) -> None:
    _need_float32(em, op)
    x, y = op.operands[0], op.results[0]
    shape = list(x.type.get_shape())
    axis = _attr(op, "axis") % len(shape)
    outer, inner = _size(shape[:axis]), _size(shape[axis + 1 :])
    dst = em.result_ptr(y, op)
    log = int(op.RELAY_NAME == "nn.log_softmax")
    em.out(f"xr_softmax_f32({em.ptr[x]}, {dst}, {outer}, {shape[axis]}, {inner}, {log});")


def _where(em: _Emitter, op: RelayOp) -> None:
    if len(em.chain(op)) > 1:
        _chain(em, op)
        return
    y = op.results[0]
    out_shape = list(y.type.get_shape())
    reads = [_bcast(em, v, out_shape) for v in op.operands]  # right-aligned broadcasting
    dst = em.result_ptr(y, op)
    em.loops(out_shape, [f"{dst}[{em.index(_strides(out_shape))}] = {reads[0]} ? {reads[1]} : {reads[2]};"])


def _gather(em: _Emitter, op: RelayOp, source_index: str, cond: str | None = None,
            fill: str | None = None) -> None:  # fmt: skip
    """``out[i0, i1, ...] = in[source_index]`` (or ``fill`` where ``cond`` is false)."""
    x, y = op.operands[0], op.results[0]
    out_shape = list(y.type.get_shape())
    dst = em.result_ptr(y, op)
    value = f"{em.ptr[x]}[{source_index}]"
    if cond is not None:
        value = f"({cond}) ? {value} : {fill}"
    em.loops(out_shape, [f"{dst}[{em.index(_strides(out_shape))}] = {value};"])


def _layout_transform(em: _Emitter, op: RelayOp) -> None:
    x, y = op.operands[0], op.results[0]
    src = _Layout(_attr(op, "src_layout"), x.type.get_shape(), "layout_transform source")
    dst = _Layout(_attr(op, "dst_layout"), y.type.get_shape(), "layout_transform result")
    coords = {}
    for k, (t, _) in enumerate(dst.tokens):
        if t.isupper():
            coords[t] = f"i{k}" if t not in dst.factor else (
                f"i{k} * {dst.factor[t]} + i{dst.names.index(t.lower())}")  # fmt: skip
    _gather(em, op, src.index(coords))


def _pad(em: _Emitter, op: RelayOp) -> None:
    if _pad_into_conv(em, op):
        return
    x = op.operands[0]
    shape = list(x.type.get_shape())
    mode = _attr(op, "pad_mode")
    coords, inside = [], []
    for k, ((before, after), d) in enumerate(zip(_attr(op, "pad_width"), shape, strict=True)):
        c = f"(i{k} - {before})" if before else f"i{k}"
        if before or after:
            if mode == "edge":
                c = f"({c} < 0 ? 0 : ({c} >= {d} ? {d - 1} : {c}))"
            elif mode == "reflect":
                c = f"({c} < 0 ? -{c} : ({c} >= {d} ? {2 * (d - 1)} - {c} : {c}))"
            else:
                inside.append(f"{c} >= 0 && {c} < {d}")
        coords.append(c)
    if mode not in ("constant", "edge", "reflect"):
        raise CodegenError(f"nn.pad with pad_mode {mode} has no C lowering")
    index = " + ".join(f"{c} * {s}" for c, s in zip(coords, _strides(shape), strict=True)) or "0"
    if inside:
        _gather(em, op, index, " && ".join(inside), f"{em.ptr[op.operands[1]]}[0]")
    else:
        _gather(em, op, index)


def _strided_slice(em: _Emitter, op: RelayOp) -> None:
    x = op.operands[0]
    shape = list(x.type.get_shape())
    axes = _attr(op, "axes")
    strides = _attr(op, "strides")
    bounds = strided_slice_bounds(
        shape, [int(v) for v in _attr(op, "begin")], [int(v) for v in _attr(op, "end")],
        [int(v) for v in strides] if strides else None,
        None if axes is None else [int(a) % len(shape) for a in axes], _attr(op, "slice_mode"),
    )  # fmt: skip
    terms = [f"({b} + i{k} * {st}) * {s}" for k, ((b, _, st), s) in enumerate(zip(bounds, _strides(shape)))]
    _gather(em, op, " + ".join(terms) or "0")


def _take(em: _Emitter, op: RelayOp) -> None:
    x, ind = op.operands
    shape = list(x.type.get_shape())
    ishape = list(ind.type.get_shape())
    axis = _attr(op, "axis")
    if axis is None:
        shape, ax = [_size(shape)], 0
    else:
        ax = axis % len(shape)
    bd = _attr(op, "batch_dims")
    bd = bd + len(ishape) if bd < 0 else bd
    if c_type(ind.type, em.what(op)) in ("float", "double"):
        raise CodegenError("take with float indices has no C lowering")
    ni = len(ishape) - bd
    i_index = em.index(_strides(ishape), [*range(bd), *range(ax, ax + ni)])
    n = shape[ax]
    raw = f"(int64_t){em.ptr[ind]}[{i_index}]"
    mode = _attr(op, "mode")
    if mode == "clip":
        idx = f"({raw} < 0 ? 0 : ({raw} > {n - 1} ? {n - 1} : {raw}))"
    elif mode == "wrap":
        idx = f"((({raw}) % {n} + {n}) % {n})"
    else:
        idx = f"({raw} < 0 ? {raw} + {n} : {raw})"
    strides = _strides(shape)
    terms = [f"i{k} * {strides[k]}" for k in range(ax)]
    terms.append(f"{idx} * {strides[ax]}")
    terms += [f"i{ax + ni + k - ax - 1} * {strides[k]}" for k in range(ax + 1, len(shape))]
    _gather(em, op, " + ".join(terms))


def _layer_norm(em: _Emitter, op: RelayOp) -> None:
    x, gamma, beta = op.operands
    y = op.results[0]
    ctype = c_type(y.type, em.what(op))
    if not _is_float(ctype):
        raise CodegenError(f"nn.layer_norm on {dtype_of(y.type.element_type)} has no C lowering")
    shape = list(x.type.get_shape())
    axis = _attr(op, "axis") % len(shape)
    outer, n, inner = _size(shape[:axis]), shape[axis], _size(shape[axis + 1 :])
    eps = c_literal(_attr(op, "epsilon"), "double")
    src, dst = em.ptr[x], em.result_ptr(y, op)
    g = f" * {em.ptr[gamma]}[k]" if _attr(op, "scale") else ""
    b = f" + {em.ptr[beta]}[k]" if _attr(op, "center") else ""
    at = f"(i0 * {n * inner} + k * {inner} + i1)"
    em.loops([outer, inner], [
        "double mean = 0, var = 0;",  # accumulated in double: within rounding of numpy's sums
        f"for (int64_t k = 0; k < {n}; ++k) mean += {src}[{at}];",
        f"mean /= {n};",
        f"for (int64_t k = 0; k < {n}; ++k) {{ const double d = {src}[{at}] - mean; var += d * d; }}",
        f"const {ctype} m = ({ctype})mean, r = ({ctype})sqrt(var / {n} + {eps});",
        f"for (int64_t k = 0; k < {n}; ++k) {dst}[{at}] = ({src}[{at}] - m) / r{g}{b};",
    ])  # fmt: skip


def _fixed_point_multiply(em: _Emitter, op: RelayOp) -> None:
    """Relay's ``fixed_point_multiply`` and ``fixed_point_multiply_per_axis`` (TOPI's
    q_multiply_shift) in int64, wrapping as the kernel does (through uint64 where C would
    overflow): elementwise, so they join chains (a requantize is one loop, or a convolution's
    epilogue: ``_conv2d_int8``)."""
    x = op.operands[0]
    if c_type(x.type, em.what(op)) != "int32_t":
        raise CodegenError(f"{op.RELAY_NAME} on {dtype_of(x.type.element_type)} has no C lowering")
    _chain(em, op)


def _fixed_point_expr(em: _Emitter, op: RelayOp, args: list[str]) -> str:
    """The expression of ``fixed_point_multiply(_per_axis)`` of the int32 ``v``; ``args`` are
    the operands' expressions (a per-axis multiplier and shifts read at the axis' index)."""
    if c_type(op.operands[0].type, em.what(op)) != "int32_t":
        raise CodegenError(f"{op.RELAY_NAME} on {dtype_of(op.operands[0].type.element_type)} has no C lowering")
    em.uses_kernels = True
    if op.RELAY_NAME == "fixed_point_multiply":
        m, shift = _attr(op, "multiplier"), _attr(op, "shift")
        if m == 1 << 30:
            e = shift - 1
            return (f"(int32_t)((uint32_t)v << {e})" if e > 0 else "v" if e == 0
                    else f"(int32_t)((int32_t)((uint32_t)v + {1 << (-e - 1)}u) >> {-e})")  # fmt: skip
        left, right = (shift, 0) if shift > 0 else (0, -shift)
        return f"xr_q_multiply_shift(v, {m}LL, {left}, {right})"
    ls = args[2] if _attr(op, "is_lshift_required") else "0"
    return f"xr_q_multiply_shift(v, {args[1]}, {ls}, {args[3]})"


# -- more ops: bias and norms, matmul, fills and broadcasts, index ops, resize ---------------


def _bcast_strides(v: SSAValue, out_shape: Sequence[int]) -> list[int]:
    """The element strides of ``v`` broadcast (right-aligned) into ``out_shape`` (0 where it
    is broadcast)."""
    shape = list(v.type.get_shape())
    shape = [1] * (len(out_shape) - len(shape)) + shape
    return [s if d != 1 else 0 for s, d in zip(_strides(shape), shape)]


def _bcast(em: _Emitter, v: SSAValue, out_shape: Sequence[int]) -> str:
    """``v`` read at the loop indices of ``out_shape``, broadcast (right-aligned) into it."""
    return f"{em.ptr[v]}[{em.index(_bcast_strides(v, out_shape))}]"


def _collapse(shape: Sequence[int], strides: list[list[int]]) -> tuple[list[int], list[list[int]]]:
    """Merge neighbouring loop dimensions that every access walks as one (``stride[k] ==
    stride[k + 1] * shape[k + 1]`` for each stride list, a broadcast's zeros included): an
    NCHW result with a per-channel operand loops over C and H*W, so the inner loop is long
    enough to vectorize without a scalar remainder of every row."""
    out_shape, out_strides = [shape[0]], [[st[0]] for st in strides]
    for k in range(1, len(shape)):
        if all(o[-1] == st[k] * shape[k] for o, st in zip(out_strides, strides, strict=True)):
            out_shape[-1] *= shape[k]
            for o, st in zip(out_strides, strides, strict=True):
                o[-1] = st[k]
        else:
            out_shape.append(shape[k])
            for o, st in zip(out_strides, strides, strict=True):
                o.append(st[k])
    return out_shape, out_strides


def _elementwise(em: _Emitter, op: RelayOp, expr: str, ctype: str | None = None) -> None:
    """``out = expr`` over the result's shape; ``expr`` uses ``x`` (operand 0 at the same
    index) and ``i0, i1, ...``."""
    x, y = op.operands[0], op.results[0]
    shape = list(y.type.get_shape())
    xt = ctype or c_type(x.type, em.what(op))
    read = _bcast(em, x, shape)
    dst = em.result_ptr(y, op)
    em.loops(shape, [f"const {xt} x = {read};", f"{dst}[{em.index(_strides(shape))}] = {expr};"])


def _add_expr(a: str, b: str, ctype: str) -> str:
    if ctype in _WRAPPING:
        return f"({ctype})(({_WRAPPING[ctype]}){a} + ({_WRAPPING[ctype]}){b})"
    return f"({ctype})({a} + {b})"


def _bias_add(em: _Emitter, op: RelayOp) -> None:
    x, b = op.operands
    axis = _attr(op, "axis") % len(x.type.get_shape())
    ctype = c_type(x.type, em.what(op))
    _elementwise(em, op, _add_expr("x", f"{em.ptr[b]}[i{axis}]", ctype))


def _prelu(em: _Emitter, op: RelayOp) -> None:
    x, a = op.operands
    axis = _attr(op, "axis") % len(x.type.get_shape())
    _elementwise(em, op, f"(x > 0 ? x : {em.ptr[a]}[i{axis}] * x)")


def _copy_to(em: _Emitter, y: SSAValue, op: RelayOp, src: str) -> None:
    dst = em.result_ptr(y, op)
    em.out(f"for (int64_t i = 0; i < {_size(y.type.get_shape())}; ++i) {dst}[i] = {src};")


def _dropout(em: _Emitter, op: RelayOp) -> None:
    """Inference: the data unchanged, and a mask of ones."""
    x = op.operands[0]
    _copy_to(em, op.results[0], op, f"{em.ptr[x]}[i]")
    if len(op.results) > 1:
        _copy_to(em, op.results[1], op, "1")


def _batch_norm(em: _Emitter, op: RelayOp) -> None:
    """Inference form, as the kernel: ``x * inv + shift`` with ``inv = gamma / sqrt(var + eps)``
    and ``shift = beta - mean * inv`` per channel; results 1 and 2 are the moving statistics."""
    x, gamma, beta, mean, var = op.operands
    shape = list(x.type.get_shape())
    axis = _attr(op, "axis") % len(shape)
    ctype = c_type(x.type, em.what(op))
    if not _is_float(ctype):
        raise CodegenError(f"nn.batch_norm on {dtype_of(x.type.element_type)} has no C lowering")
    eps = c_literal(_attr(op, "epsilon"), ctype)
    f = "f" if ctype == "float" else ""
    g = f" * {em.ptr[gamma]}[c]" if _attr(op, "scale") else ""
    bt = f" + {em.ptr[beta]}[c]" if _attr(op, "center") else ""
    outer, n, inner = _size(shape[:axis]), shape[axis], _size(shape[axis + 1 :])
    src = em.ptr[x]
    dst = em.result_ptr(op.results[0], op)
    em.lines += [f"  for (int64_t c = 0; c < {n}; ++c) {{",
        f"    const {ctype} inv = ({ctype})1 / sqrt{f}({em.ptr[var]}[c] + {eps}){g};",
        f"    const {ctype} shift = -{em.ptr[mean]}[c] * inv{bt};",
        f"    for (int64_t o = 0; o < {outer}; ++o) {{",
        f"      const int64_t at = (o * {n} + c) * {inner};",
        f"      for (int64_t i = 0; i < {inner}; ++i) {dst}[at + i] = {src}[at + i] * inv + shift;",
        "    }", "  }"]  # fmt: skip
    for k, v in ((1, mean), (2, var)):
        if len(op.results) > k:
            _copy_to(em, op.results[k], op, f"{em.ptr[v]}[i]")


def _matmul(em: _Emitter, op: RelayOp) -> None:
    """``nn.matmul`` and ``nn.batch_matmul``: per (broadcast) batch, ``op(a) @ op(b)``. The
    NN form runs i-k-j (the innermost loop over a contiguous output row vectorises); a
    transposed ``b`` runs dot products over contiguous rows. Integer products accumulate in
    the result type, wrapping as the kernel's."""
    a, b = op.operands
    y = op.results[0]
    ta, tb = bool(_attr(op, "transpose_a")), bool(_attr(op, "transpose_b"))
    ash, bsh, ysh = list(a.type.get_shape()), list(b.type.get_shape()), list(y.type.get_shape())
    m, k = (ash[-1], ash[-2]) if ta else (ash[-2], ash[-1])
    n = bsh[-2] if tb else bsh[-1]
    batch = ysh[:-2]
    acc = c_type(y.type, em.what(op))
    at_, bt_ = c_type(a.type, em.what(op)), c_type(b.type, em.what(op))
    dst = em.result_ptr(y, op)

    def base(v, shape):  # the batch offset of operand v, broadcast into the result's batch
        lead = [1] * (len(batch) - (len(shape) - 2)) + shape[:-2]
        strides = [s * shape[-1] * shape[-2] if d != 1 else 0 for s, d in zip(_strides(lead), lead)]
        return em.index(strides)

    aoff, boff = base(a, ash), base(b, bsh)
    a_at = f"(i * {k} + t)" if not ta else f"(t * {m} + i)"
    b_at = f"(j * {k} + t)" if tb else f"(t * {n} + j)"
    if acc in _WRAPPING:
        u = _WRAPPING[acc]
        mac = f"s = ({acc})(({u})s + ({u})({acc})A[{a_at}] * ({u})({acc})B[{b_at}]);"
    else:
        mac = f"s += ({acc})A[{a_at}] * ({acc})B[{b_at}];"
    body = [f"const {at_} *restrict A = {em.ptr[a]} + ({aoff}) * 1;",
            f"const {bt_} *restrict B = {em.ptr[b]} + ({boff}) * 1;",
            f"{acc} *restrict Y = {dst} + ({em.index(_strides(batch))}) * {m * n};"]  # fmt: skip
    if not tb and acc not in _WRAPPING:
        body += [f"for (int64_t i = 0; i < {m}; ++i) {{",
                 f"  for (int64_t j = 0; j < {n}; ++j) Y[i * {n} + j] = 0;",
                 f"  for (int64_t t = 0; t < {k}; ++t) {{",
                 f"    const {acc} av = ({acc})A[{a_at}];",
                 f"    for (int64_t j = 0; j < {n}; ++j) Y[i * {n} + j] += av * ({acc})B[t * {n} + j];",
                 "  }", "}"]  # fmt: skip
    else:
        body += [f"for (int64_t i = 0; i < {m}; ++i) {{",
                 f"  for (int64_t j = 0; j < {n}; ++j) {{",
                 f"    {acc} s = 0;",
                 f"    for (int64_t t = 0; t < {k}; ++t) {mac}",
                 f"    Y[i * {n} + j] = s;",
                 "  }", "}"]  # fmt: skip
    em.loops(batch, body)


def _fill(em: _Emitter, op: RelayOp) -> None:
    """zeros, ones, full (operand 0 the value), *_like (the value is operand 1 for full_like)."""
    name = op.RELAY_NAME
    y = op.results[0]
    ctype = c_type(y.type, em.what(op))
    if name.endswith("zeros") or name == "zeros_like":
        value = "0"
    elif name.endswith("ones") or name == "ones_like":
        value = "1"
    else:
        fill = op.operands[1] if name == "full_like" else op.operands[0]
        value = f"({ctype}){em.ptr[fill]}[0]"
    _copy_to(em, y, op, value)


def _broadcast_to(em: _Emitter, op: RelayOp) -> None:
    _elementwise(em, op, "x")


def _cast_like(em: _Emitter, op: RelayOp) -> None:
    x, y = op.operands[0], op.results[0]
    _elementwise(em, op, _cast_expr("x", c_type(x.type, em.what(op)), dtype_of(y.type.element_type)))


def _reinterpret(em: _Emitter, op: RelayOp) -> None:
    x, y = op.operands[0], op.results[0]
    if stored_dtype(x.type) or stored_dtype(y.type):
        raise CodegenError(f"reinterpret of {x.type.element_type} as {y.type.element_type} has no C lowering")
    dst = em.result_ptr(y, op)
    em.out(f"memcpy((void *){dst}, (const void *){em.ptr[x]}, {_size(y.type.get_shape())} * sizeof({dst}[0]));")


def _shape_constant(em: _Emitter, op: RelayOp) -> None:
    """shape_of and ndarray_size: known from the static shape."""
    shape = list(op.operands[0].type.get_shape())
    value = shape if op.RELAY_NAME == "shape_of" else _size(shape)
    y = op.results[0]
    em.constant(y, np.asarray(value, dtype=numpy_dtype(dtype_of(y.type.element_type))))


def _variance(em: _Emitter, op: RelayOp) -> None:
    x, mean = op.operands
    y = op.results[0]
    shape = list(x.type.get_shape())
    ctype = c_type(y.type, em.what(op))
    if not _is_float(ctype):
        raise CodegenError(f"variance on {dtype_of(y.type.element_type)} has no C lowering")
    axes = set(reduce_axes(len(shape), _attr(op, "axis"), _attr(op, "exclude")))
    kept = _strides([d for k, d in enumerate(shape) if k not in axes])
    out_strides, j = [], 0
    for k in range(len(shape)):
        out_strides.append(0 if k in axes else kept[j])
        j += k not in axes
    mshape = list(mean.type.get_shape())
    if len(mshape) == len(shape):
        m_read = _bcast(em, mean, shape)
    else:  # the mean without the reduced axes: indexed as the result
        m_read = f"{em.ptr[mean]}[{em.index(out_strides)}]"
    count = _size([shape[a] for a in axes]) - (1 if _attr(op, "unbiased") else 0)
    dst = em.result_ptr(y, op)
    n_out = _size(y.type.get_shape())
    em.out(f"for (int64_t i = 0; i < {n_out}; ++i) {dst}[i] = 0;")
    em.loops(shape, [f"const {ctype} d = {em.ptr[x]}[{em.index(_strides(shape))}] - {m_read};",
                     f"{dst}[{em.index(out_strides)}] += d * d;"])  # fmt: skip
    em.out(f"for (int64_t i = 0; i < {n_out}; ++i) {dst}[i] /= ({ctype}){count};")


def _arg_reduce(em: _Emitter, op: RelayOp) -> None:
    """argmax/argmin: the index into the flattened reduced axes; NaN counts as extreme (the
    first one, or the last with select_last_index)."""
    x, y = op.operands[0], op.results[0]
    shape = list(x.type.get_shape())
    axes = sorted(reduce_axes(len(shape), _attr(op, "axis"), _attr(op, "exclude")))
    kept = [a for a in range(len(shape)) if a not in axes]
    xt = c_type(x.type, em.what(op))
    yt = c_type(y.type, em.what(op))
    strides = _strides(shape)
    cmp = ">" if op.RELAY_NAME == "argmax" else "<"
    last = bool(_attr(op, "select_last_index"))
    better = f"v {cmp}{'=' if last else ''} best"
    if _is_float(xt):
        better = f"v != v || (best == best && {better})" if last else f"best == best && (v != v || {better})"
    dst = em.result_ptr(y, op)
    red = [shape[a] for a in axes]
    # the kept axes are i0..; the reduced ones r0..
    kept_idx = " + ".join([f"i{j} * {strides[a]}" for j, a in enumerate(kept)] or ["0"])
    red_idx = " + ".join([f"r{j} * {strides[a]}" for j, a in enumerate(axes)] or ["0"])
    body = [f"const {xt} *src = {em.ptr[x]} + {kept_idx};", f"{xt} best = src[0];",
            "int64_t at = 0, pos = 0;"]  # fmt: skip
    for j, d in enumerate(red):
        body.append("  " * j + f"for (int64_t r{j} = 0; r{j} < {d}; ++r{j}) {{")
    ind = "  " * len(red)
    body += [ind + f"const {xt} v = src[{red_idx}];",
             ind + f"if ({better}) {{ best = v; at = pos; }}",
             ind + "++pos;"]  # fmt: skip
    for j in reversed(range(len(red))):
        body.append("  " * j + "}")
    body.append(f"{dst}[{em.index(_strides([shape[a] for a in kept]))}] = ({yt})at;")
    em.loops([shape[a] for a in kept], body)


def _stack(em: _Emitter, op: RelayOp) -> None:
    y = op.results[0]
    out_shape = list(y.type.get_shape())
    axis = _attr(op, "axis") % len(out_shape)
    out_strides = _strides(out_shape)
    dst = em.result_ptr(y, op)
    for k, v in enumerate(op.operands):
        shape = list(v.type.get_shape())
        strides = out_strides[:axis] + out_strides[axis + 1 :]
        index = em.index(strides) + (f" + {k * out_strides[axis]}" if k else "")
        em.loops(shape, [f"{dst}[{index}] = {em.ptr[v]}[{em.index(_strides(shape))}];"])


def _tile(em: _Emitter, op: RelayOp) -> None:
    x, y = op.operands[0], op.results[0]
    out_shape = list(y.type.get_shape())
    shape = [1] * (len(out_shape) - len(x.type.get_shape())) + list(x.type.get_shape())
    terms = [f"(i{k} % {d}) * {s}" for k, (d, s) in enumerate(zip(shape, _strides(shape))) if d != 1]
    _gather(em, op, " + ".join(terms) or "0")


def _repeat(em: _Emitter, op: RelayOp) -> None:
    x = op.operands[0]
    shape = list(x.type.get_shape())
    axis, r = _attr(op, "axis") % len(shape), _attr(op, "repeats")
    terms = [f"{f'i{k} / {r}' if k == axis else f'i{k}'} * {s}" for k, s in enumerate(_strides(shape))]
    _gather(em, op, " + ".join(terms))


def _slice_like(em: _Emitter, op: RelayOp) -> None:
    _gather(em, op, em.index(_strides(list(op.operands[0].type.get_shape()))))


def _scan(em: _Emitter, op: RelayOp) -> None:
    """cumsum/cumprod along an axis (the flattened data when None), in the result dtype."""
    x, y = op.operands[0], op.results[0]
    shape = list(x.type.get_shape())
    axis = _attr(op, "axis")
    if axis is None:
        shape, axis = [_size(shape)], 0
    axis %= len(shape)
    outer, n, inner = _size(shape[:axis]), shape[axis], _size(shape[axis + 1 :])
    ctype = c_type(y.type, em.what(op))
    xt = c_type(x.type, em.what(op))
    is_sum = op.RELAY_NAME == "cumsum"
    sym = "+" if is_sum else "*"
    step = f"acc = ({ctype})(acc {sym} ({ctype})v);"
    if ctype in _WRAPPING:
        step = f"acc = ({ctype})(({_WRAPPING[ctype]})acc {sym} ({_WRAPPING[ctype]})({ctype})v);"
    elif ctype == "uint8_t" and dtype_of(y.type.element_type) == "bool":
        step = "acc = (uint8_t)(acc || v);" if is_sum else "acc = (uint8_t)(acc && v);"
    excl = bool(_attr(op, "exclusive"))
    dst = em.result_ptr(y, op)
    em.loops([outer, inner], [f"{ctype} acc = {0 if is_sum else 1};",
        f"for (int64_t t = 0; t < {n}; ++t) {{",
        f"  const int64_t at = (i0 * {n} + t) * {inner} + i1;",
        f"  const {xt} v = {em.ptr[x]}[at];",
        *([f"  {dst}[at] = acc;", f"  {step}"] if excl else [f"  {step}", f"  {dst}[at] = acc;"]),
        "}"])  # fmt: skip


def _collapse_sum(em: _Emitter, op: RelayOp) -> None:
    x, y = op.operands[0], op.results[0]
    shape = list(x.type.get_shape())
    out = list(y.type.get_shape())
    ctype = c_type(y.type, em.what(op))
    full = [1] * (len(shape) - len(out)) + out
    strides = [s if d != 1 else 0 for s, d in zip(_strides(full), full)]
    dst = em.result_ptr(y, op)
    em.out(f"for (int64_t i = 0; i < {_size(out)}; ++i) {dst}[i] = 0;")
    at = f"{dst}[{em.index(strides)}]"
    em.loops(shape, [f"{at} = {_add_expr(at, em.ptr[x] + '[' + em.index(_strides(shape)) + ']', ctype)};"])


def _gather_nd(em: _Emitter, op: RelayOp) -> None:
    x, ind = op.operands
    y = op.results[0]
    shape, ishape = list(x.type.get_shape()), list(ind.type.get_shape())
    m, b = ishape[0], _attr(op, "batch_dims")
    out_shape = list(y.type.get_shape())
    xs, is_ = _strides(shape), _strides(ishape)
    ny = len(ishape) - 1 - b  # the Y axes of the result follow the batch axes
    # the result's axes: batch (i0..), Y (i<b>..), rest of x
    ipos = " + ".join(f"i{k} * {is_[1 + k]}" for k in range(b + ny)) or "0"
    terms = [f"i{k} * {xs[k]}" for k in range(b)]
    for j in range(m):
        raw = f"(int64_t){em.ptr[ind]}[{j * is_[0]} + {ipos}]"
        d = shape[b + j]
        terms.append(f"({raw} < 0 ? {raw} + {d} : {raw}) * {xs[b + j]}")
    terms += [f"i{b + ny + k} * {xs[b + m + k]}" for k in range(len(shape) - b - m)]
    _gather(em, op, " + ".join(terms) or "0")
    del out_shape


def _one_hot(em: _Emitter, op: RelayOp) -> None:
    ind, on, off = op.operands[:3]
    y = op.results[0]
    out_shape = list(y.type.get_shape())
    axis = _attr(op, "axis")
    axis = len(out_shape) - 1 if axis == -1 else axis % len(out_shape)
    ishape = list(ind.type.get_shape())
    dims = [k for k in range(len(out_shape)) if k != axis]
    read = f"{em.ptr[ind]}[{em.index(_strides(ishape), dims)}]"
    ctype = c_type(y.type, em.what(op))
    dst = em.result_ptr(y, op)
    em.loops(out_shape, [f"{dst}[{em.index(_strides(out_shape))}] = (int64_t){read} == i{axis} ? "
                         f"({ctype}){em.ptr[on]}[0] : ({ctype}){em.ptr[off]}[0];"])  # fmt: skip


def _normalize(em: _Emitter, op: RelayOp) -> None:
    """instance_norm, group_norm, l2_normalize: statistics over groups of elements, in double."""
    name = op.RELAY_NAME
    x, y = op.operands[0], op.results[0]
    shape = list(x.type.get_shape())
    ctype = c_type(y.type, em.what(op))
    if not _is_float(ctype):
        raise CodegenError(f"{name} on {dtype_of(y.type.element_type)} has no C lowering")
    src, dst = em.ptr[x], em.result_ptr(y, op)
    if name == "nn.l2_normalize":
        axes = _attr(op, "axis")
        axes = set(range(len(shape))) if not axes else {a % len(shape) for a in axes}
        kept = [k for k in range(len(shape)) if k not in axes]
        groups = [kept, sorted(axes)]
    else:
        axis = _attr(op, "axis") % len(shape)
        if name == "nn.instance_norm":
            groups = [[0, axis] if axis else [0], [k for k in range(1, len(shape)) if k != axis]]
        else:  # group_norm: channels split into groups; statistics per (batch, group)
            groups = None
    eps = c_literal(_attr(op, "epsilon" if name != "nn.l2_normalize" else "eps"), "double")
    if groups is None:
        ng = _attr(op, "num_groups")
        c = shape[axis]
        if axis != 1:
            raise CodegenError(f"{name} with axis {axis} has no C lowering (only axis 1)")
        inner = _size(shape[2:])
        per = c // ng * inner
        g = f" * {em.ptr[op.operands[1]]}[ch]" if _attr(op, "scale") else ""
        bt = f" + {em.ptr[op.operands[2]]}[ch]" if _attr(op, "center") else ""
        em.loops([shape[0], ng], [f"const int64_t base = (i0 * {ng} + i1) * {per};",
            "double mean = 0, var = 0;",
            f"for (int64_t t = 0; t < {per}; ++t) mean += {src}[base + t];",
            f"mean /= {per};",
            f"for (int64_t t = 0; t < {per}; ++t) {{ const double d = {src}[base + t] - mean; var += d * d; }}",
            f"const double r = sqrt(var / {per} + {eps});",
            f"for (int64_t t = 0; t < {per}; ++t) {{",
            f"  const int64_t ch = i1 * {c // ng} + t / {inner};",
            f"  {dst}[base + t] = ({ctype})(({src}[base + t] - mean) / r){g}{bt};",
            "}"])  # fmt: skip
        return
    outer_axes, red_axes = groups
    strides = _strides(shape)
    o_idx = " + ".join(f"o{j} * {strides[a]}" for j, a in enumerate(outer_axes)) or "0"
    r_idx = " + ".join(f"r{j} * {strides[a]}" for j, a in enumerate(red_axes)) or "0"

    def over(body: list[str]) -> list[str]:
        lines = [f"for (int64_t r{j} = 0; r{j} < {shape[a]}; ++r{j}) {{" for j, a in enumerate(red_axes)]
        return [*lines, *(f"  {b}" for b in body), *("}" for _ in red_axes)]

    count = _size([shape[a] for a in red_axes])
    if name == "nn.l2_normalize":
        body = ["double ss = 0;", *over([f"const double v = {src}[base + {r_idx}]; ss += v * v;"]),
                f"const double r = sqrt(ss > {eps} ? ss : {eps});",
                *over([f"{dst}[base + {r_idx}] = ({ctype})({src}[base + {r_idx}] / r);"])]  # fmt: skip
    else:
        ch = f"o{outer_axes.index(axis)}" if axis in outer_axes else "0"
        g = f" * {em.ptr[op.operands[1]]}[{ch}]" if _attr(op, "scale") else ""
        bt = f" + {em.ptr[op.operands[2]]}[{ch}]" if _attr(op, "center") else ""
        body = ["double mean = 0, var = 0;", *over([f"mean += {src}[base + {r_idx}];"]),
                f"mean /= {count};",
                *over([f"const double d = {src}[base + {r_idx}] - mean; var += d * d;"]),
                f"const double r = sqrt(var / {count} + {eps});",
                *over([f"{dst}[base + {r_idx}] = ({ctype})(({src}[base + {r_idx}] - mean) / r){g}{bt};"])]  # fmt: skip
    lines = [f"for (int64_t o{j} = 0; o{j} < {shape[a]}; ++o{j}) {{" for j, a in enumerate(outer_axes)]
    lines.append(f"  const int64_t base = {o_idx};")
    lines += [f"  {b}" for b in body]
    lines += ["}" for _ in outer_axes]
    em.lines += [f"  {ln}" for ln in lines]


def _lrn(em: _Emitter, op: RelayOp) -> None:
    x, y = op.operands[0], op.results[0]
    shape = list(x.type.get_shape())
    ctype = c_type(y.type, em.what(op))
    size, axis = _attr(op, "size"), _attr(op, "axis") % len(shape)
    if not _is_float(ctype) or len(shape) != 4 or size % 2 != 1 or axis not in (1, 3):
        raise CodegenError(f"nn.lrn on {y.type} (size {size}, axis {axis}) has no C lowering")
    n = shape[axis]
    st = _strides(shape)[axis]
    f = "f" if ctype == "float" else ""
    bias, alpha, beta = (c_literal(_attr(op, k), ctype) for k in ("bias", "alpha", "beta"))
    h = size // 2
    dst = em.result_ptr(y, op)
    em.loops(shape, [f"const int64_t at = {em.index(_strides(shape))};",
        f"{ctype} s = 0;",
        f"for (int64_t t = i{axis} - {h}; t <= i{axis} + {h}; ++t) {{",
        f"  if (t < 0 || t >= {n}) continue;",
        f"  const {ctype} v = {em.ptr[x]}[at + (t - i{axis}) * {st}];",
        "  s += v * v;", "}",
        f"{dst}[at] = {em.ptr[x]}[at] / pow{f}({bias} + {alpha} * s / {c_literal(size, ctype)}, {beta});"])  # fmt: skip


def _adaptive_pool(em: _Emitter, op: RelayOp) -> None:
    """Adaptive pools over any spatial axes: bin i of an axis of S inputs and O outputs
    covers [floor(i * S / O), ceil((i + 1) * S / O)), as the kernel; averages of integers
    sum in 64 bits and divide truncating, maxima of floats propagate NaN."""
    x, y = op.operands[0], op.results[0]
    layout = _attr(op, "layout")
    il = _Layout(layout, x.type.get_shape(), f"{op.RELAY_NAME} data")
    ol = _Layout(_attr(op, "out_layout") or layout, y.type.get_shape(), f"{op.RELAY_NAME} result")
    sp = [a for a in il.names if a.isupper() and a not in "NC"]
    ctype = c_type(y.type, em.what(op))
    if dtype_of(y.type.element_type) == "bool":
        raise CodegenError(f"{op.RELAY_NAME} on bool has no C lowering")
    if "max" in op.RELAY_NAME:
        acc = ctype
        init = "-INFINITY" if _is_float(ctype) else str(_int_range(dtype_of(y.type.element_type))[0])
        step = "acc = (v > acc || v != v) ? v : acc;" if _is_float(ctype) else "acc = v > acc ? v : acc;"
        final = []
    else:
        acc = ctype if _is_float(ctype) else ("uint64_t" if ctype[0] == "u" else "int64_t")
        init, step = "0", "acc += v;"
        count = " * ".join(f"({a}1 - {a}0)" for a in sp)
        final = [f"acc = acc / ({acc})({count});"]
    dst, src = em.result_ptr(y, op), em.ptr[x]
    out_idx = {"N": "i0", "C": "i1", **{a: f"i{k + 2}" for k, a in enumerate(sp)}}
    body = []
    for a in sp:
        s_, o_ = il.extent(a), ol.extent(a)
        i = out_idx[a]
        body.append(f"const int64_t {a}0 = {i} * {s_} / {o_}, {a}1 = (({i} + 1) * {s_} + {o_ - 1}) / {o_};")
    body.append(f"{acc} acc = {init};")
    for k, a in enumerate(sp):
        body.append("  " * k + f"for (int64_t p{a} = {a}0; p{a} < {a}1; ++p{a}) {{")
    ind = "  " * len(sp)
    body += [ind + f"const {ctype} v = {src}[{il.index(dict(N='i0', C='i1', **{a: f'p{a}' for a in sp}))}];",
             ind + step]  # fmt: skip
    body += ["  " * k + "}" for k in reversed(range(len(sp)))]
    body += [*final, f"{dst}[{ol.index(out_idx)}] = ({ctype})acc;"]
    em.loops([il.extent("N"), il.extent("C"), *(ol.extent(a) for a in sp)], body)


def _resize(em: _Emitter, op: RelayOp) -> None:
    """image.resize1d/2d and nn.upsampling, separably per axis as the kernel: each output
    coordinate's source indices and weights are computed at build time by the kernel's own
    tap function (``kernels.spatial._axis_taps``) and emitted as tables; the sum over taps
    runs in double, integers truncate."""

    x, y = op.operands[0], op.results[0]
    name = op.RELAY_NAME
    shape, out_shape = list(x.type.get_shape()), list(y.type.get_shape())
    names = [t for t, _ in parse_layout(_attr(op, "layout"))]
    if name == "nn.upsampling":
        axes = [names.index("H"), names.index("W")]
        method = _attr(op, "method")
        method = method[2:] if method.startswith("bi") else method
        mode = "align_corners" if _attr(op, "align_corners") else "asymmetric"
        size = [int(_round_half_away(shape[a] * s)) for a, s in zip(axes, (_attr(op, "scale_h"), _attr(op, "scale_w")))]
        roi, rounding, alpha, exclude, extrapolation = [0.0] * 4, "", -0.5, 0, 0.0
    else:
        axes = [names.index("W")] if name == "image.resize1d" else [names.index("H"), names.index("W")]
        method, mode = _attr(op, "method"), _attr(op, "coordinate_transformation_mode")
        size, roi = list(_attr(op, "size")), list(_attr(op, "roi"))
        rounding, alpha = _attr(op, "rounding_method"), _attr(op, "cubic_alpha")
        exclude, extrapolation = _attr(op, "cubic_exclude"), _attr(op, "extrapolation_value")
    if [out_shape[a] for a in axes] != size:
        raise CodegenError(f"{name}: the result {y.type} is not the size {size}")
    taps, inside = [], []
    for k, (a, n_out) in enumerate(zip(axes, size)):
        try:
            idx, w, ins = _axis_taps(shape[a], n_out, mode, roi[k], roi[k + len(axes)], method,
                                     rounding, alpha, exclude)  # fmt: skip
        except ValueError as e:
            raise CodegenError(f"{name}: {e}") from None
        taps.append((idx, w))
        inside.append(ins)
    xt = c_type(x.type, em.what(op))
    ctype = c_type(y.type, em.what(op))
    tables = []
    for k, (idx, w) in enumerate(taps):
        base = f"{em.name}_r{len(em.constants)}_{k}"
        em.constants.append(f"static const int32_t {base}_i[{idx.size}] = {{{', '.join(str(int(v)) for v in idx.reshape(-1))}}};")
        em.constants.append(f"static const double {base}_w[{w.size}] = {{{', '.join(c_literal(float(v), 'double') for v in w.reshape(-1))}}};")
        tables.append((base, idx.shape[1]))
    strides = _strides(shape)
    terms = [f"i{d} * {strides[d]}" for d in range(len(shape)) if d not in axes]
    terms += [f"{base}_i[i{a} * {nt} + t{k}] * {strides[a]}" for k, (a, (base, nt)) in enumerate(zip(axes, tables))]
    # the kernel's order: the first axis' taps summed (each product x * w), then the second's
    body = ["double s = 0;"]
    if len(axes) == 1:
        (a,), ((base, nt),) = axes, tables
        body += [f"for (int64_t t0 = 0; t0 < {nt}; ++t0) s += (double){em.ptr[x]}[{' + '.join(terms)}] * {base}_w[i{a} * {nt} + t0];"]
    else:
        (a0, a1), ((b0, n0), (b1, n1)) = axes, tables
        body += [f"for (int64_t t1 = 0; t1 < {n1}; ++t1) {{", "  double r = 0;",
                 f"  for (int64_t t0 = 0; t0 < {n0}; ++t0) r += (double){em.ptr[x]}[{' + '.join(terms)}] * {b0}_w[i{a0} * {n0} + t0];",
                 f"  s += r * {b1}_w[i{a1} * {n1} + t1];", "}"]  # fmt: skip
    value = "s" if _is_float(xt) else f"({xt})(int64_t)s"
    if mode == "tf_crop_and_resize" and not all(m.all() for m in inside):
        for k, (a, m) in enumerate(zip(axes, inside)):
            cname = f"{em.name}_r{len(em.constants)}_in{k}"
            em.constants.append(f"static const uint8_t {cname}[{m.size}] = {{{', '.join(str(int(v)) for v in m)}}};")
            value = f"({cname}[i{a}] ? {value} : {c_literal(extrapolation, 'double')})"
    dst = em.result_ptr(y, op)
    body.append(f"{dst}[{em.index(_strides(out_shape))}] = ({ctype})({xt}){value};")
    em.loops(out_shape, body)


def _scatter(em: _Emitter, op: RelayOp) -> None:
    """scatter_elements and scatter_nd: the data copied, then every update in order (a
    repeated index: the last update wins, as the kernel)."""
    data, ind, upd = op.operands
    y = op.results[0]
    shape, ishape, ushape = (list(v.type.get_shape()) for v in (data, ind, upd))
    mode = _attr(op, "reduction" if op.RELAY_NAME == "scatter_elements" else "mode")
    ctype = c_type(y.type, em.what(op))
    combine = {"update": "{u}", "add": "{d} + {u}", "mul": "{d} * {u}",
               "min": "({u} < {d} ? {u} : {d})", "max": "({u} > {d} ? {u} : {d})"}.get(mode)  # fmt: skip
    if combine is None:
        raise CodegenError(f"{op.RELAY_NAME} with reduction '{mode}' has no C lowering")
    dst = em.result_ptr(y, op)
    em.out(f"for (int64_t i = 0; i < {_size(shape)}; ++i) {dst}[i] = {em.ptr[data]}[i];")
    xs = _strides(shape)
    if op.RELAY_NAME == "scatter_elements":
        axis = _attr(op, "axis") % len(shape)
        raw = f"(int64_t){em.ptr[ind]}[{em.index(_strides(ishape))}]"
        terms = [f"i{k} * {s}" if k != axis else f"({raw} < 0 ? {raw} + {shape[axis]} : {raw}) * {s}"
                 for k, s in enumerate(xs)]  # fmt: skip
        loop_shape = ishape
    else:
        m = ishape[0]
        is_ = _strides(ishape)
        ny = len(ishape) - 1
        pos = " + ".join(f"i{k} * {is_[1 + k]}" for k in range(ny)) or "0"
        terms = []
        for j in range(m):
            raw = f"(int64_t){em.ptr[ind]}[{j * is_[0]} + {pos}]"
            terms.append(f"({raw} < 0 ? {raw} + {shape[j]} : {raw}) * {xs[j]}")
        terms += [f"i{ny + k} * {xs[m + k]}" for k in range(len(shape) - m)]
        loop_shape = ushape
    at = f"{dst}[{' + '.join(terms) or '0'}]"
    u = f"({ctype}){em.ptr[upd]}[{em.index(_strides(ushape))}]"
    em.loops(loop_shape, [f"{at} = ({ctype})({combine.replace('{u}', u).replace('{d}', at)});"])


def _reverse_sequence(em: _Emitter, op: RelayOp) -> None:
    x, lens = op.operands
    shape = list(x.type.get_shape())
    sa, ba = _attr(op, "seq_axis") % len(shape), _attr(op, "batch_axis") % len(shape)
    n = f"(int64_t){em.ptr[lens]}[i{ba}]"
    t = f"(i{sa} < {n} ? {n} - 1 - i{sa} : i{sa})"
    terms = [f"{t if k == sa else f'i{k}'} * {s}" for k, s in enumerate(_strides(shape))]
    _gather(em, op, " + ".join(terms))


def _einsum(em: _Emitter, op: RelayOp) -> None:
    """A loop over the result's letters around a loop over the summed letters."""
    eq = _attr(op, "equation").replace(" ", "")
    if "." in eq:
        raise CodegenError(f"einsum '{eq}' with an ellipsis has no C lowering")
    lhs, _, rhs = eq.partition("->")
    specs = lhs.split(",")
    if not _:
        letters = sorted(set(lhs.replace(",", "")))
        rhs = "".join(c for c in letters if lhs.count(c) == 1)
    extent: dict[str, int] = {}
    for spec, v in zip(specs, op.operands, strict=True):
        for ch, d in zip(spec, v.type.get_shape(), strict=True):
            extent[ch] = d
    summed = [ch for ch in dict.fromkeys(lhs.replace(",", "")) if ch not in rhs]
    y = op.results[0]
    ctype = c_type(y.type, em.what(op))
    reads = []
    for spec, v in zip(specs, op.operands):
        st = _strides(list(v.type.get_shape()))
        reads.append(f"({ctype}){em.ptr[v]}[{' + '.join(f'e_{ch} * {s}' for ch, s in zip(spec, st)) or '0'}]")
    dst = em.result_ptr(y, op)
    body = [f"const int64_t e_{ch} = i{k};" for k, ch in enumerate(rhs)]
    body.append(f"{ctype} s = 0;")
    for j, ch in enumerate(summed):
        body.append("  " * j + f"for (int64_t e_{ch} = 0; e_{ch} < {extent[ch]}; ++e_{ch}) {{")
    body.append("  " * len(summed) + f"s += {' * '.join(reads)};")
    for j in reversed(range(len(summed))):
        body.append("  " * j + "}")
    body.append(f"{dst}[{em.index(_strides(list(y.type.get_shape())))}] = s;")
    em.loops(list(y.type.get_shape()), body)


def _sort_family(em: _Emitter, op: RelayOp) -> None:
    """argsort and topk: a stable insertion sort of each row's indices in the workspace
    (O(n^2) per row, no allocation); descending keeps equal elements in index order."""
    x = op.operands[0]
    shape = list(x.type.get_shape())
    axis = _attr(op, "axis") % len(shape)
    outer, n, inner = _size(shape[:axis]), shape[axis], _size(shape[axis + 1 :])
    xt = c_type(x.type, em.what(op))
    asc = bool(_attr(op, "is_ascend"))
    idx = em.scratch_slot(TensorType(i64, [n]), "int64_t", em.what(op))
    before = "a < b" if asc else "a > b"
    if _is_float(xt):  # NaN sorts last either way (numpy's order of the negated key)
        before = f"({before} || (b != b && a == a))"
    if op.RELAY_NAME == "argsort":
        k, outs = n, [(op.results[0], "idx")]
    else:
        k = _attr(op, "k")
        k = n if k < 1 or k > n else k
        rt = _attr(op, "ret_type")
        outs = {"both": [(op.results[0], "val"), (op.results[1], "idx")], "values": [(op.results[0], "val")],
                "indices": [(op.results[0], "idx")]}[rt]  # fmt: skip
    dsts = [(em.result_ptr(r, op), c_type(r.type, em.what(op)), kind) for r, kind in outs]
    src = em.ptr[x]
    writes = []
    for dst, t, kind in dsts:
        val = f"{src}[(o * {n} + {idx}[t]) * {inner} + i]" if kind == "val" else f"({t}){idx}[t]"
        writes.append(f"    for (int64_t t = 0; t < {k}; ++t) {dst}[(o * {k} + t) * {inner} + i] = {val};")
    em.lines += [f"  for (int64_t o = 0; o < {outer}; ++o) {{",
        f"  for (int64_t i = 0; i < {inner}; ++i) {{",
        f"    for (int64_t t = 0; t < {n}; ++t) {{",
        f"      const {xt} a = {src}[(o * {n} + t) * {inner} + i];",
        "      int64_t p = t;",
        "      while (p > 0) {",
        f"        const {xt} b = {src}[(o * {n} + {idx}[p - 1]) * {inner} + i];",
        f"        if (!{before}) break;",
        f"        {idx}[p] = {idx}[p - 1];",
        "        --p;", "      }",
        f"      {idx}[p] = t;", "    }", *writes, "  }", "  }"]  # fmt: skip


def _simulated_qnn(em: _Emitter, op: RelayOp) -> None:
    """qnn.simulated_(de)quantize with a dtype code known when the C is emitted."""

    x, code, scale, zp = op.operands
    if code not in em.known:
        raise CodegenError(f"{op.RELAY_NAME}: its dtype code is known only at run time; the C "
                           "target needs it constant")  # fmt: skip
    ctype = c_type(x.type, em.what(op))
    shape = list(x.type.get_shape())
    c = int(em.known[code].reshape(-1)[0])
    if c not in _SQNN:
        _elementwise(em, op, "x")
        return
    axis = _attr(op, "axis") % len(shape)

    def param(v):
        return f"({ctype}){em.ptr[v]}[{'i' + str(axis) if _size(v.type.get_shape()) > 1 else '0'}]"

    s, z = param(scale), param(zp)
    if op.RELAY_NAME == "qnn.simulated_quantize":
        lo, hi = (c_literal(v, ctype) for v in _qrange(_SQNN[c]))
        f = "f" if ctype == "float" else ""
        expr = f"(round{f}(x / {s}) + {z})"
        expr = f"({expr} < {lo} ? {lo} : ({expr} > {hi} ? {hi} : {expr}))"
    else:
        expr = f"(x - {z}) * {s}"
    _elementwise(em, op, expr)


def _dequantize_sum(em: _Emitter, op: RelayOp) -> None:
    """qnn.dequantize_sum: each value ``float32(q - zp) * s``, added in the op's order (the
    reference kernel's: first to last, or Eigen's 4-float packets with each row's head)."""
    from xrelay.dialects.qnn import DequantizeSumOp, sum_block

    x, scale, zp = op.operands
    y = op.results[0]
    shape = list(x.type.get_shape())
    first, last, _ = sum_block(DequantizeSumOp, len(shape), _attr(op, "axes"), _attr(op, "order"))
    outer, n, inner = _size(shape[:first]), _size(shape[first : last + 1]), _size(shape[last + 1 :])
    dst = em.result_ptr(y, op)
    q, s, z = em.ptr[x], em.ptr[scale], em.ptr[zp]
    # the 256 values first (a product alone: no add for a compiler to fuse with it), then sums
    tab = em.scratch_buffer(256, "float")
    signed = c_type(x.type, em.what(op)) == "int8_t"
    em.out(f"for (int32_t b = 0; b < 256; ++b) {tab}[b] = (float)({'(b < 128 ? b : b - 256)' if signed else 'b'} - {z}[0]) * {s}[0];")

    def v(i: str) -> str:
        return f"{tab}[(uint8_t){q}[{i}]]"

    if n == 0:
        em.out(f"for (int64_t i = 0; i < {outer * inner}; ++i) {dst}[i] = 0.0f;")
        return
    if _attr(op, "order") == "sequential":
        em.loops([outer, inner], [
            f"float acc = {v(f'i0 * {n * inner} + i1')};",
            f"for (int64_t t = 1; t < {n}; ++t) acc += {v(f'(i0 * {n} + t) * {inner} + i1')};",
            f"{dst}[i0 * {inner} + i1] = acc;",
        ])  # fmt: skip
        return
    em.loops([outer], [
        f"const int64_t base = i0 * {n};",
        f"const int64_t h = (4 - base % 4) % 4 < {n} ? (4 - base % 4) % 4 : {n};",
        f"const int64_t packed = ({n} - h) / 4 * 4, paired = ({n} - h) / 8 * 8;",
        "float acc;",
        "if (packed == 0) {",
        f"  acc = {v('base')};",
        f"  for (int64_t t = 1; t < {n}; ++t) acc += {v('base + t')};",
        "} else {",
        "  float p0[4], p1[4];",
        f"  for (int l = 0; l < 4; ++l) p0[l] = {v('base + h + l')};",
        "  if (packed > 4) {",
        f"    for (int l = 0; l < 4; ++l) p1[l] = {v('base + h + 4 + l')};",
        "    for (int64_t t = h + 8; t < h + paired; t += 8)",
        "      for (int l = 0; l < 4; ++l) {",
        f"        p0[l] += {v('base + t + l')};",
        f"        p1[l] += {v('base + t + 4 + l')};",
        "      }",
        "    for (int l = 0; l < 4; ++l) p0[l] += p1[l];",
        f"    if (packed > paired) for (int l = 0; l < 4; ++l) p0[l] += {v('base + h + paired + l')};",
        "  }",
        "  acc = (p0[0] + p0[2]) + (p0[1] + p0[3]);",
        f"  for (int64_t t = 0; t < h; ++t) acc += {v('base + t')};",
        f"  for (int64_t t = h + packed; t < {n}; ++t) acc += {v('base + t')};",
        "}",
        f"{dst}[i0] = acc;",
    ])  # fmt: skip


def _ort_layer_norm(em: _Emitter, op: RelayOp) -> None:
    """qnn.ort_layer_norm: each row as the reference kernel computes it (onnxruntime's order:
    the mean in double, eight lanes of fmaf folded as halves, the tail, y = fmaf(c * inv, g, b))."""
    x, gamma, beta = op.operands
    y = op.results[0]
    shape = list(x.type.get_shape())
    n = shape[-1]
    rows, whole = _size(shape[:-1]), n - n % 8
    src, g, b, dst = em.ptr[x], em.ptr[gamma], em.ptr[beta], em.result_ptr(y, op)
    eps = c_literal(float(np.float32(_attr(op, "epsilon"))), "float")
    em.loops([rows], [
        f"const float *row = {src} + i0 * {n};",
        "double s = 0.0;",
        f"for (int64_t i = 0; i < {n}; ++i) s += (double)row[i];",
        f"const float mean = (float)(s / {n}.0);",
        "float lane[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};",
        f"for (int64_t i = 0; i < {whole}; i += 8)",
        "  for (int l = 0; l < 8; ++l) { const float c = row[i + l] - mean; lane[l] = fmaf(c, c, lane[l]); }",
        "float h[4];",
        "for (int l = 0; l < 4; ++l) h[l] = lane[l] + lane[l + 4];",
        "const float q0 = h[0] + h[2], q1 = h[1] + h[3];",
        "float total = q0 + q1;",
        f"for (int64_t i = {whole}; i < {n}; ++i) {{ const float c = row[i] - mean; total = fmaf(c, c, total); }}",
        f"const float inv = 1.0f / sqrtf(total / {n}.0f + {eps});",
        f"for (int64_t i = 0; i < {n}; ++i) {dst}[i0 * {n} + i] = fmaf((row[i] - mean) * inv, {g}[i], {b}[i]);",
    ])  # fmt: skip


def _ort_softmax(em: _Emitter, op: RelayOp) -> None:
    """qnn.ort_softmax: onnxruntime's QLinearSoftmax along the axis (the reference kernel's:
    the 256-value table, each row's maximum, the float32 sum first to last, the quotient
    rounded half to even, clamped to 255). The table is a constant made by the reference's
    function when the input scale is known, else built at the start of the step."""
    from xrelay.kernels.qnn import ort_softmax_table

    x, s_x, s_y, zp = op.operands
    shape = list(x.type.get_shape())
    axis = _attr(op, "axis") % len(shape)
    outer, d, inner = _size(shape[:axis]), shape[axis], _size(shape[axis + 1 :])
    src, dst = em.ptr[x], em.result_ptr(op.results[0], op)
    if d == 0 or outer * inner == 0:
        return
    if s_x in em.known:
        tab = f"{em.name}_c{len(em.constants)}"
        values = ", ".join(c_literal(float(v), "float") for v in ort_softmax_table(float(em.known[s_x].reshape(())), d))
        em.constants.append(f"static const float {tab}[256] = {{{values}}};")
    else:
        tab = em.scratch_buffer(256, "float")
        sx = f"(double){em.ptr[s_x]}[0]"
        em.out("{")
        em.out(f"  const double shift = fmax(0.0, log((double)(FLT_MAX / (float){d})) - 5.0) / {sx};")
        em.out(f"  for (int b = 0; b < 256; ++b) {tab}[b] = (float)exp(((double)b - 255.0 + shift) * {sx});")
        em.out("}")

    def at(i: str) -> str:
        return f"(i0 * {d} + {i}) * {inner} + i1"

    em.loops([outer, inner], [
        "uint8_t m = 0;",
        f"for (int64_t t = 0; t < {d}; ++t) m = {src}[{at('t')}] > m ? {src}[{at('t')}] : m;",
        f"const float *tb = {tab} + (255 - m);",
        "float sum = 0.0f;",
        f"for (int64_t t = 0; t < {d}; ++t) sum += tb[{src}[{at('t')}]];",
        f"const float ys = floorf(1.0f / {em.ptr[s_y]}[0]);",
        f"for (int64_t t = 0; t < {d}; ++t) {{",
        f"  const float v = (tb[{src}[{at('t')}]] * ys) / sum;",
        f"  const int32_t q = v < 256.0f ? (int32_t)nearbyintf(v) + {em.ptr[zp]}[0] : 255;",
        f"  {dst}[{at('t')}] = (uint8_t)(q > 255 ? 255 : q);",
        "}",
    ])  # fmt: skip


def _ort_gelu(em: _Emitter, op: RelayOp) -> None:
    """qnn.ort_gelu: MLAS's erf polynomials and exp in fmaf steps for the blocks of 16 of each
    4096-value chunk, the C library's erff for a chunk's last partial block (the reference
    kernel's, onnxruntime's)."""
    from xrelay.kernels.qnn import _ERF_BIG, _ERF_SMALL, _EXP_POLY, ORT_GELU_CHUNK

    x, y = op.operands[0], op.results[0]
    size = _size(list(x.type.get_shape()))
    src, dst = em.ptr[x], em.result_ptr(y, op)

    def lit(v: float) -> str:
        return c_literal(float(np.float32(v)), "float")

    def poly(var: str, coeffs: tuple, arg: str) -> list[str]:
        return [f"float {var} = {lit(coeffs[0])};"] + [f"{var} = fmaf({var}, {arg}, {lit(k)});" for k in coeffs[1:]]

    em.loops([-(-size // ORT_GELU_CHUNK)], [
        f"const int64_t start = i0 * {ORT_GELU_CHUNK};",
        f"const int64_t count = {size} - start < {ORT_GELU_CHUNK} ? {size} - start : {ORT_GELU_CHUNK};",
        "const int64_t blocks = start + count - count % 16;",
        "for (int64_t i = start; i < start + count; ++i) {",
        f"  const float v = {src}[i], t = v * {lit(0.70710678118654752440)};",
        "  float erf_t;",
        "  if (i >= blocks) {",
        "    erf_t = erff(t);",
        "  } else {",
        f"    const float a = fabsf(t) < {lit(3.925)} ? fabsf(t) : {lit(3.925)}, sq = a * a;",
        *("    " + line for line in poly("sm", _ERF_SMALL, "sq")),
        "    sm = fmaf(sm, a, a);",
        f"    const int split = a > {lit(0.921875)};",
        "    const float bi = split ? a : 0.0f;",
        *("    " + line for line in poly("bg", _ERF_BIG, "bi")),
        "    bg = -fmaf(bg, bi, bi);",
        f"    if (bg < {lit(-88.3762626647949)}) bg = {lit(-88.3762626647949)};",
        f"    const float r = fmaf({lit(1.44269504088896341)}, bg, 12582912.0f) - 12582912.0f;",
        f"    float fx = fmaf(r, {lit(-6.93145752e-1)}, bg);",
        f"    fx = fmaf(r, {lit(-1.42860677e-6)}, fx);",
        *("    " + line for line in poly("p", _EXP_POLY, "fx")),
        "    const float e = 1.0f - p * ldexpf(1.0f, (int)r);",
        "    erf_t = split ? e : sm;",
        "    if (signbit(t)) erf_t = -erf_t;",
        "  }",
        f"  {dst}[i] = (0.5f * v) * (erf_t + 1.0f);",
        "}",
    ])  # fmt: skip


def _conv_nd(em: _Emitter, op: RelayOp) -> None:
    """nn.conv1d and nn.conv3d: a direct loop nest over any spatial rank and layout."""
    x, w = op.operands
    y = op.results[0]
    nd = len(x.type.get_shape()) - 2
    sp = "W" if nd == 1 else "DHW"
    dl, kl, ol = _conv_layouts(op, x, w, y, "OI" + sp)
    groups = _attr(op, "groups")
    o_, cg = kl.extent("O"), kl.extent("I")
    og = o_ // groups
    strides, dil, pad = _attr(op, "strides"), _attr(op, "dilation"), _attr(op, "padding")
    acc = c_type(y.type, em.what(op))
    dst = em.result_ptr(y, op)
    body = [f"{acc} s = 0;", f"const int64_t g = oc / {og};", f"for (int64_t ic = 0; ic < {cg}; ++ic) {{"]
    coords = {"N": "n", "C": f"g * {cg} + ic"}
    kcoords = {"O": "oc", "I": "ic"}
    for k, a in enumerate(sp):
        body.append("  " * (k + 1) + f"for (int64_t k{a} = 0; k{a} < {kl.extent(a)}; ++k{a}) {{")
        body.append("  " * (k + 2) + f"const int64_t p{a} = o{a} * {strides[k]} - {pad[k]} + k{a} * {dil[k]};")
        body.append("  " * (k + 2) + f"if (p{a} < 0 || p{a} >= {dl.extent(a)}) continue;")
        coords[a], kcoords[a] = f"p{a}", f"k{a}"
    ind = "  " * (nd + 1)
    body.append(ind + f"s += ({acc}){em.ptr[x]}[{dl.index(coords)}] * ({acc}){em.ptr[w]}[{kl.index(kcoords)}];")
    for k in reversed(range(nd + 1)):
        body.append("  " * k + "}")
    body.append(f"{dst}[{ol.index(dict(N='n', C='oc', **{a: f'o{a}' for a in sp}))}] = s;")
    lines = [f"for (int64_t n = 0; n < {dl.extent('N')}; ++n)", f"for (int64_t oc = 0; oc < {o_}; ++oc)"]
    lines += [f"for (int64_t o{a} = 0; o{a} < {ol.extent(a)}; ++o{a})" for a in sp]
    em.lines += [f"  {ln}" for ln in lines] + ["  {"] + [f"    {b}" for b in body] + ["  }"]


def _pool3d(em: _Emitter, op: RelayOp) -> None:
    x, y = op.operands[0], op.results[0]
    layout = _attr(op, "layout") or "NCDHW"
    il = _Layout(layout, x.type.get_shape(), f"{op.RELAY_NAME} data")
    ol = _Layout(_attr(op, "out_layout") or layout, y.type.get_shape(), f"{op.RELAY_NAME} result")
    ctype = c_type(y.type, em.what(op))
    if not _is_float(ctype):
        raise CodegenError(f"{op.RELAY_NAME} on {dtype_of(y.type.element_type)} has no C lowering")
    is_max = "max" in op.RELAY_NAME
    ks, st, dl = _attr(op, "pool_size"), _attr(op, "strides"), _attr(op, "dilation")
    pads = list(_attr(op, "padding"))
    pads = pads * 2 if len(pads) == 3 else pads
    count_pad = not is_max and bool(_attr(op, "count_include_pad"))
    body = [f"{ctype} acc = {'-INFINITY' if is_max else '0'};", "int64_t cnt = 0;"]
    coords = {"N": "i0", "C": "i1"}
    for k, a in enumerate("DHW"):
        body.append("  " * k + f"for (int64_t k{a} = 0; k{a} < {ks[k]}; ++k{a}) {{")
        body.append("  " * (k + 1) + f"const int64_t p{a} = o{a} * {st[k]} - {pads[k]} + k{a} * {dl[k]};")
        if count_pad:
            body.append("  " * (k + 1) + f"if (p{a} < -{pads[k]} || p{a} >= {il.extent(a) + pads[k + 3]}) continue;")
        else:
            body.append("  " * (k + 1) + f"if (p{a} < 0 || p{a} >= {il.extent(a)}) continue;")
        coords[a] = f"p{a}"
    inside = " && ".join(f"p{a} >= 0 && p{a} < {il.extent(a)}" for a in "DHW")
    read = f"({inside} ? {em.ptr[x]}[{il.index(coords)}] : 0)" if count_pad else f"{em.ptr[x]}[{il.index(coords)}]"
    step = "acc = (v > acc || v != v) ? v : acc;" if is_max else "acc += v;"
    body.append("   " * 3 + f"const {ctype} v = {read}; {step} ++cnt;")
    for k in reversed(range(3)):
        body.append("  " * k + "}")
    if not is_max:
        body.append(f"acc /= ({ctype})(cnt > 1 ? cnt : 1);")
    body.append(f"{em.result_ptr(y, op)}[{ol.index(dict(N='i0', C='i1', D='oD', H='oH', W='oW'))}] = acc;")
    lines = [f"for (int64_t i0 = 0; i0 < {il.extent('N')}; ++i0)", f"for (int64_t i1 = 0; i1 < {il.extent('C')}; ++i1)"]
    lines += [f"for (int64_t o{a} = 0; o{a} < {ol.extent(a)}; ++o{a})" for a in "DHW"]
    em.lines += [f"  {ln}" for ln in lines] + ["  {"] + [f"    {b}" for b in body] + ["  }"]


def _dyn_static(em: _Emitter, op: RelayOp) -> None:
    """A dyn op whose result type is static: the static op's C (its shape operands are not
    read: the static shapes say everything they would)."""
    name = op.RELAY_NAME
    if name in ("dyn.reshape", "dyn.expand_dims", "dyn.squeeze"):
        _view(em, op)
    elif name in ("dyn.zeros", "dyn.ones"):
        _copy_to(em, op.results[0], op, "0" if name == "dyn.zeros" else "1")
    elif name == "dyn.full":
        y = op.results[0]
        _copy_to(em, y, op, f"({c_type(y.type, em.what(op))}){em.ptr[op.operands[0]]}[0]")
    elif name == "dyn.broadcast_to":
        _elementwise(em, op, "x")
    elif name == "dyn.tile":
        _tile(em, op)
    elif name == "dyn.one_hot":
        _one_hot(em, op)


def _dft(em: _Emitter, op: RelayOp) -> None:
    """The direct O(n^2) transform along the last axis, twiddles in double (the inverse
    divides by the length)."""
    re, im = op.operands
    shape = list(re.type.get_shape())
    n, rows = shape[-1], _size(shape[:-1])
    ctype = c_type(re.type, em.what(op))
    if not _is_float(ctype):
        raise CodegenError(f"dft on {dtype_of(re.type.element_type)} has no C lowering")
    inv = bool(_attr(op, "inverse"))
    sign = "" if inv else "-"
    ore, oim = em.result_ptr(op.results[0], op), em.result_ptr(op.results[1], op)
    scale = f" / {n}" if inv else ""
    em.loops([rows, n], [f"const int64_t base = i0 * {n};", "double sr = 0, si = 0;",
        f"for (int64_t t = 0; t < {n}; ++t) {{",
        f"  const double a = {sign}6.283185307179586 * (double)((i1 * t) % {n}) / {n};",
        f"  const double xr = {em.ptr[re]}[base + t], xi = {em.ptr[im]}[base + t];",
        "  sr += xr * cos(a) - xi * sin(a);", "  si += xr * sin(a) + xi * cos(a);", "}",
        f"{ore}[base + i1] = ({ctype})(sr{scale});", f"{oim}[base + i1] = ({ctype})(si{scale});"])  # fmt: skip


def _roi(em: _Emitter, op: RelayOp) -> None:
    """vision.roi_pool and vision.roi_align as TOPI's (the kernel's arithmetic, in double): per
    region and channel, each output cell's window (roi_pool: the largest value, 0 when empty;
    roi_align: the mean or largest of its bilinear samples, or for ``max_corner`` of their
    largest weighted corner terms, 0 outside [-1, size]). A region
    naming a batch outside the data gives zeros (the interpreter raises)."""
    data, rois = op.operands
    y = op.results[0]
    layout = _attr(op, "layout")
    il = _Layout(layout, data.type.get_shape(), f"{op.RELAY_NAME} data")
    ol = _Layout(layout, y.type.get_shape(), f"{op.RELAY_NAME} result")
    n_, c_, h_, w_ = (il.extent(a) for a in "NCHW")
    ph, pw = _attr(op, "pooled_size")
    ctype = c_type(y.type, em.what(op))
    if not _is_float(ctype):
        raise CodegenError(f"{op.RELAY_NAME} on {dtype_of(y.type.element_type)} has no C lowering")
    scale = c_literal(_attr(op, "spatial_scale"), "double")
    src, rp = em.ptr[data], em.ptr[rois]
    dst = em.result_ptr(y, op)
    at = il.index(dict(N="b", C="c", H="yy", W="xx"))
    head = [f"const int64_t b = (int64_t)(double){rp}[r * 5];",
            f"const int valid = b >= 0 && b < {n_};"]  # fmt: skip
    if op.RELAY_NAME == "vision.roi_pool":
        body = [*head,
            *(f"const int64_t {v} = (int64_t)round((double){rp}[r * 5 + {k}] * {scale});"
              for k, v in ((1, "x1"), (2, "y1"), (3, "x2"), (4, "y2"))),
            f"const double bh = (double)(y2 - y1 + 1 > 1 ? y2 - y1 + 1 : 1) / {ph};",
            f"const double bw = (double)(x2 - x1 + 1 > 1 ? x2 - x1 + 1 : 1) / {pw};",
            f"for (int64_t c = 0; c < {c_}; ++c) for (int64_t i = 0; i < {ph}; ++i) for (int64_t j = 0; j < {pw}; ++j) {{",
            *(f"  int64_t {v} = (int64_t){f}({e}) + {o}; {v} = {v} < 0 ? 0 : ({v} > {lim} ? {lim} : {v});"
              for v, f, e, o, lim in (("ya", "floor", "i * bh + 1e-5", "y1", h_), ("yb", "ceil", "(i + 1) * bh - 1e-5", "y1", h_),
                                      ("xa", "floor", "j * bw + 1e-5", "x1", w_), ("xb", "ceil", "(j + 1) * bw - 1e-5", "x1", w_))),
            f"  {ctype} m = 0;",
            "  if (valid && ya < yb && xa < xb) {",
            "    m = -INFINITY;",
            "    for (int64_t yy = ya; yy < yb; ++yy) for (int64_t xx = xa; xx < xb; ++xx) {",
            f"      const {ctype} v = {src}[{at}];",
            "      m = (v > m || v != v) ? v : m;", "    }", "  }",
            f"  {dst}[{ol.index(dict(N='r', C='c', H='i', W='j'))}] = m;", "}"]  # fmt: skip
    else:
        ratio = _attr(op, "sample_ratio")
        mode = _attr(op, "mode")
        is_max = mode in ("max", "max_corner")
        least = c_literal(float(_attr(op, "min_roi_size")), "double")
        gh = str(ratio) if ratio > 0 else f"(int64_t)ceil(rh / {ph})"
        gw = str(ratio) if ratio > 0 else f"(int64_t)ceil(rw / {pw})"
        at0 = il.index(dict(N="b", C="c", H="{yy}", W="{xx}"))

        def tap(yy: str, xx: str) -> str:
            return f"(double){src}[{at0.replace('{yy}', yy).replace('{xx}', xx)}]"

        body = [*head,
            *(f"const double {v} = (double){rp}[r * 5 + {k}] * {scale};" for k, v in ((1, "x1"), (2, "y1"), (3, "x2"), (4, "y2"))),
            f"const double rh = y2 - y1 > {least} ? y2 - y1 : {least}, rw = x2 - x1 > {least} ? x2 - x1 : {least};",
            f"const double bh = rh / {ph}, bw = rw / {pw};",
            f"const int64_t gh = {gh}, gw = {gw};",
            f"for (int64_t c = 0; c < {c_}; ++c) for (int64_t i = 0; i < {ph}; ++i) for (int64_t j = 0; j < {pw}; ++j) {{",
            f"  double acc = {'-INFINITY' if is_max else '0'};",
            "  for (int64_t u = 0; u < gh; ++u) for (int64_t t = 0; t < gw; ++t) {",
            "    double yy = y1 + i * bh + (u + 0.5) * bh / gh, xq = x1 + j * bw + (t + 0.5) * bw / gw, v = 0;",
            f"    if (valid && !(yy < -1.0 || xq < -1.0 || yy > {h_} || xq > {w_})) {{",
            f"      yy = yy < 0 ? 0 : (yy > {h_ - 1} ? {h_ - 1} : yy);",
            f"      xq = xq < 0 ? 0 : (xq > {w_ - 1} ? {w_ - 1} : xq);",
            "      const int64_t y0 = (int64_t)floor(yy), x0 = (int64_t)floor(xq);",
            f"      const int64_t y1i = y0 + 1 < {h_ - 1} ? y0 + 1 : {h_ - 1}, x1i = x0 + 1 < {w_ - 1} ? x0 + 1 : {w_ - 1};",
            "      const double ly = yy - y0, lx = xq - x0;",
            *([f"      const double t0 = {tap('y0', 'x0')} * (1 - ly) * (1 - lx), t1 = {tap('y0', 'x1i')} * (1 - ly) * lx;",
               f"      const double t2 = {tap('y1i', 'x0')} * ly * (1 - lx), t3 = {tap('y1i', 'x1i')} * ly * lx;",
               "      v = fmax(fmax(t0, t1), fmax(t2, t3));"] if mode == "max_corner" else
              [f"      v = {tap('y0', 'x0')} * (1 - ly) * (1 - lx) + {tap('y0', 'x1i')} * (1 - ly) * lx",
               f"        + {tap('y1i', 'x0')} * ly * (1 - lx) + {tap('y1i', 'x1i')} * ly * lx;"]),
            "    }",
            "    " + ("acc = (v > acc || v != v) ? v : acc;" if is_max else "acc += v;"), "  }",
            *([] if is_max else ["  acc /= (double)(gh * gw);"]),
            f"  {dst}[{ol.index(dict(N='r', C='c', H='i', W='j'))}] = ({ctype})acc;", "}"]  # fmt: skip
    em.lines += [f"  for (int64_t r = 0; r < {rois.type.get_shape()[0]}; ++r) {{", *(f"    {b}" for b in body), "  }"]


def _deformable_conv2d(em: _Emitter, op: RelayOp) -> None:
    """TOPI's deformable convolution, in double: tap (ky, kx) of output (y, x) samples its
    input channel at (y * sh - pt + ky * dh + dy, x * sw - pl + kx * dw + dx), the offsets
    (dy, dx) of the tap's deformable group read from ``offset``; 0 when that point is
    outside [0, H) x [0, W), else bilinear with corners outside the image counting 0."""
    x, off, w = op.operands
    y = op.results[0]
    data_layout = _attr(op, "data_layout")
    dl = _Layout(data_layout, x.type.get_shape(), "nn.deformable_conv2d data")
    fl = _Layout(data_layout, off.type.get_shape(), "nn.deformable_conv2d offset")
    kl = _Layout(_attr(op, "kernel_layout"), w.type.get_shape(), "nn.deformable_conv2d kernel")
    ol = _Layout(_attr(op, "out_layout") or data_layout, y.type.get_shape(), "nn.deformable_conv2d result")
    ctype = c_type(y.type, em.what(op))
    if not _is_float(ctype):
        raise CodegenError(f"nn.deformable_conv2d on {dtype_of(y.type.element_type)} has no C lowering")
    n_, c_, h_, w_ = (dl.extent(a) for a in "NCHW")
    o_, cg, kh, kw = (kl.extent(a) for a in "OIHW")
    oh, ow = ol.extent("H"), ol.extent("W")
    og = o_ // _attr(op, "groups")
    per_dg = c_ // _attr(op, "deformable_groups")
    (sh, sw), (dh, dw) = _attr(op, "strides"), _attr(op, "dilation")
    pt, pl = _attr(op, "padding")[:2]
    src, op_, wp = em.ptr[x], em.ptr[off], em.ptr[w]
    dst = em.result_ptr(y, op)

    def img(yy: str, xx: str) -> str:
        return f"(double){src}[{dl.index(dict(N='n', C='c', H=yy, W=xx))}]"

    em.loops([n_, o_, oh, ow], [
        "const int64_t n = i0, o = i1, oy = i2, ox = i3;",
        "double s = 0;",
        f"for (int64_t ic = 0; ic < {cg}; ++ic) {{",
        f"  const int64_t c = o / {og} * {cg} + ic, dg = c / {per_dg};",
        f"  for (int64_t ky = 0; ky < {kh}; ++ky) for (int64_t kx = 0; kx < {kw}; ++kx) {{",
        f"    const int64_t k = dg * {kh * kw * 2} + (ky * {kw} + kx) * 2;",
        f"    const double py = (double)(oy * {sh} - {pt} + ky * {dh}) + (double){op_}[{fl.index(dict(N='n', C='k', H='oy', W='ox'))}];",
        f"    const double px = (double)(ox * {sw} - {pl} + kx * {dw}) + (double){op_}[{fl.index(dict(N='n', C='k + 1', H='oy', W='ox'))}];",
        "    double v = 0;",
        f"    if (!(py < 0 || px < 0 || py >= {h_} || px >= {w_})) {{",
        "      const int64_t y0 = (int64_t)floor(py), x0 = (int64_t)floor(px);",
        "      const double ly = py - (double)y0, lx = px - (double)x0;",
        f"      const int y1ok = y0 + 1 < {h_}, x1ok = x0 + 1 < {w_};",
        f"      v = (1 - ly) * (1 - lx) * {img('y0', 'x0')};",
        f"      if (x1ok) v += (1 - ly) * lx * {img('y0', 'x0 + 1')};",
        f"      if (y1ok) v += ly * (1 - lx) * {img('y0 + 1', 'x0')};",
        f"      if (y1ok && x1ok) v += ly * lx * {img('y0 + 1', 'x0 + 1')};",
        "    }",
        f"    s += v * (double){wp}[{kl.index(dict(O='o', I='ic', H='ky', W='kx'))}];",
        "  }", "}",
        f"{dst}[{ol.index(dict(N='n', C='o', H='oy', W='ox'))}] = ({ctype})s;"])  # fmt: skip


def _grid_sample(em: _Emitter, op: RelayOp) -> None:
    """image.grid_sample on NCHW data, nearest or bilinear, every padding mode, in the
    kernel's float arithmetic (its coordinate formulas, ``rint`` for nearest, PyTorch's
    reflection; ``xr_reflectf``). Bicubic and NCDHW data have no C lowering yet."""
    data, grid = op.operands
    y = op.results[0]
    method, pad = _attr(op, "method"), _attr(op, "padding_mode")
    ctype = c_type(y.type, em.what(op))
    if _attr(op, "layout") != "NCHW" or method not in ("nearest", "bilinear") or ctype != "float":
        raise CodegenError(f"image.grid_sample ({_attr(op, 'layout')}, {method}, {y.type.element_type}) has no C "
                           "lowering: only NCHW float32 data, nearest or bilinear")  # fmt: skip
    n_, c_, h_, w_ = data.type.get_shape()
    oh, ow = grid.type.get_shape()[2:]
    align = bool(_attr(op, "align_corners"))
    src, gp = em.ptr[data], em.ptr[grid]
    dst = em.result_ptr(y, op)
    em.uses_kernels = True
    body = ["const int64_t n = i0, c = i1, oy = i2, ox = i3;"]
    for axis, size, k in (("y", h_, 1), ("x", w_, 0)):
        g = f"{gp}[((n * 2 + {k}) * {oh} + oy) * {ow} + ox]"
        coord = f"(({g} + 1.0f) / 2.0f * {c_literal(size - 1, 'float')})" if align else (
            f"(({g} + 1.0f) * {c_literal(size, 'float')} - 1.0f) / 2.0f")  # fmt: skip
        lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
        body.append(f"float {axis} = {coord};")
        if method == "nearest":
            body.append(f"{axis} = rintf({axis});")
        if pad == "border":
            body.append(f"if ({axis} < {c_literal(lo, 'float')} || {axis} > {c_literal(hi, 'float')}) "
                        f"{axis} = {axis} < 0 ? 0.0f : ({axis} > {c_literal(size - 1, 'float')} ? "
                        f"{c_literal(size - 1, 'float')} : {axis});")  # fmt: skip
        elif pad == "reflection":
            body.append(f"{axis} = xr_reflectf({axis}, {c_literal(lo, 'float')}, {c_literal(hi, 'float')});")

    def fix(i: str, size: int, lo: float, hi: float) -> list[str]:
        """The index ``i`` made valid as the kernel's fetch does; ``ok`` false outside (zeros)."""
        if pad == "zeros":
            return [f"ok = ok && {i} >= 0 && {i} < {size};", f"{i} = {i} < 0 ? 0 : ({i} > {size - 1} ? {size - 1} : {i});"]
        if pad == "reflection":
            return [f"{i} = (int64_t)xr_reflectf((float){i}, {c_literal(lo, 'float')}, {c_literal(hi, 'float')});",
                    f"{i} = {i} < 0 ? 0 : ({i} > {size - 1} ? {size - 1} : {i});"]  # fmt: skip
        return [f"{i} = {i} < 0 ? 0 : ({i} > {size - 1} ? {size - 1} : {i});"]

    ylo, yhi = (0.0, h_ - 1.0) if align else (-0.5, h_ - 0.5)
    xlo, xhi = (0.0, w_ - 1.0) if align else (-0.5, w_ - 0.5)

    def fetch(iy: str, ix: str) -> list[str]:
        return ["{", f"  int64_t fy = {iy}, fx = {ix};", "  int ok = 1;",
                *(f"  {ln}" for ln in fix("fy", h_, ylo, yhi) + fix("fx", w_, xlo, xhi)),
                f"  v = {src}[((n * {c_} + c) * {h_} + fy) * {w_} + fx] * (float)ok;", "}"]  # fmt: skip

    if method == "nearest":
        body += ["float v;", *fetch("(int64_t)y", "(int64_t)x"), f"{dst}[((n * {c_} + c) * {oh} + oy) * {ow} + ox] = v;"]
    else:
        body += ["const float fy0 = floorf(y), fx0 = floorf(x), ty = y - fy0, tx = x - fx0;",
                 "const int64_t y0 = (int64_t)fy0, x0 = (int64_t)fx0;",
                 "float res = 0, v;"]  # fmt: skip
        for dy, wy in ((0, "1 - ty"), (1, "ty")):
            for dx, wx in ((0, "1 - tx"), (1, "tx")):
                body += fetch(f"y0 + {dy}", f"x0 + {dx}")
                body.append(f"res = res + v * (({wy}) * ({wx}));")
        body.append(f"{dst}[((n * {c_} + c) * {oh} + oy) * {ow} + ox] = res;")
    em.loops([n_, c_, oh, ow], body)


_HANDLERS = {
    "nn.contrib_conv2d_winograd_without_weight_transform": _conv2d_winograd,
    **dict.fromkeys([*_UNARY, "clip", "nn.leaky_relu", "cast"], _unary),
    **dict.fromkeys(_BINARY, _binary),
    **dict.fromkeys(["reshape", "nn.batch_flatten", "expand_dims", "squeeze"], _view),
    **dict.fromkeys(["sum", "mean", "max", "min", "prod"], _reduce),
    "transpose": _transpose,
    "concatenate": _concatenate,
    "split": _split,
    "nn.conv2d": _conv2d,
    "nn.dense": _dense,
    **dict.fromkeys(
        ["nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d", "nn.global_max_pool2d"], _pool
    ),
    "nn.softmax": _softmax,
    "nn.log_softmax": _softmax,
    "nn.conv2d_transpose": _conv2d_transpose,
    "where": _where,
    "layout_transform": _layout_transform,
    "nn.pad": _pad,
    "strided_slice": _strided_slice,
    "take": _take,
    "nn.layer_norm": _layer_norm,
    "fixed_point_multiply": _fixed_point_multiply,
    "fixed_point_multiply_per_axis": _fixed_point_multiply,
    "nn.bias_add": _bias_add,
    "nn.prelu": _prelu,
    "nn.dropout": _dropout,
    "nn.batch_norm": _batch_norm,
    "nn.matmul": _matmul,
    "nn.batch_matmul": _matmul,
    **dict.fromkeys(["zeros", "ones", "full", "zeros_like", "ones_like", "full_like"], _fill),
    **dict.fromkeys(["broadcast_to", "broadcast_to_like"], _broadcast_to),
    **dict.fromkeys(["reshape_like", "contrib_reverse_reshape", "on_device", "device_copy",
                     "annotation.compiler_begin", "annotation.compiler_end", "annotation.stop_fusion"],
                    _view),  # fmt: skip
    "cast_like": _cast_like,
    "reinterpret": _reinterpret,
    **dict.fromkeys(["shape_of", "ndarray_size"], _shape_constant),
    "variance": _variance,
    **dict.fromkeys(["argmax", "argmin"], _arg_reduce),
    "stack": _stack,
    "tile": _tile,
    "repeat": _repeat,
    "slice_like": _slice_like,
    **dict.fromkeys(["cumsum", "cumprod"], _scan),
    **dict.fromkeys(["collapse_sum_like", "collapse_sum_to"], _collapse_sum),
    "gather_nd": _gather_nd,
    "one_hot": _one_hot,
    **dict.fromkeys(["nn.instance_norm", "nn.group_norm", "nn.l2_normalize"], _normalize),
    "nn.lrn": _lrn,
    **dict.fromkeys(["nn.adaptive_avg_pool2d", "nn.adaptive_avg_pool3d", "nn.adaptive_max_pool3d"], _adaptive_pool),
    **dict.fromkeys(["image.resize1d", "image.resize2d", "nn.upsampling"], _resize),
    **dict.fromkeys(["scatter_elements", "scatter_nd"], _scatter),
    "reverse_sequence": _reverse_sequence,
    "einsum": _einsum,
    **dict.fromkeys(["argsort", "topk"], _sort_family),
    **dict.fromkeys(["qnn.simulated_quantize", "qnn.simulated_dequantize"], _simulated_qnn),
    "qnn.dequantize_sum": _dequantize_sum,
    "qnn.ort_layer_norm": _ort_layer_norm,
    "qnn.ort_gelu": _ort_gelu,
    "qnn.ort_softmax": _ort_softmax,
    **dict.fromkeys(["nn.conv1d", "nn.conv3d"], _conv_nd),
    **dict.fromkeys(["nn.max_pool3d", "nn.avg_pool3d"], _pool3d),
    **dict.fromkeys(["dyn.reshape", "dyn.expand_dims", "dyn.squeeze", "dyn.zeros", "dyn.ones", "dyn.full",
                     "dyn.broadcast_to", "dyn.tile", "dyn.one_hot"], _dyn_static),  # fmt: skip
    "dft": _dft,
    **dict.fromkeys(["vision.roi_pool", "vision.roi_align"], _roi),
    "nn.deformable_conv2d": _deformable_conv2d,
    "image.grid_sample": _grid_sample,
}
"""Relay ops the C target lowers, by Relay name. The qnn ops other than the simulated ones and
``qnn.dequantize_sum`` (a float sum in a stated order, which no integer form has) have none of their own: the C target lowers them to integer relay ops first
(``qnn-canonicalize-ops``, ``QNN_BY_CANONICALIZATION``)."""

QNN_BY_CANONICALIZATION = frozenset(
    ["qnn.quantize", "qnn.dequantize", "qnn.requantize", "qnn.conv2d", "qnn.conv2d_transpose", "qnn.dense",
     "qnn.batch_matmul", "qnn.add", "qnn.subtract", "qnn.mul", "qnn.concatenate", "qnn.avg_pool2d"]
)  # fmt: skip
"""qnn ops the C target emits through their canonical integer form (``prepare_functions``)."""

_DATA_DEPENDENT = "its result's shape depends on the input values; the C target needs static shapes"
_RUN_TIME_SHAPE = "its shape arguments are known only at run time; the C target needs static shapes"
_RELAY_MEMORY = "Relay's memory ops are storage the C target plans itself (lower-to-memory refuses them first)"
C_REFUSALS = {
    "nn.conv3d_transpose": "not lowered yet (the arena runtime runs it with the numpy kernel)",
    "memory.alloc_storage": _RELAY_MEMORY,
    "memory.kill": _RELAY_MEMORY,
    "argwhere": _DATA_DEPENDENT,
    "unique": _DATA_DEPENDENT,
    "vision.all_class_non_max_suppression": _DATA_DEPENDENT,
    "dyn.strided_slice": _RUN_TIME_SHAPE,
    "dyn.nn.pad": _RUN_TIME_SHAPE,
    "dyn.nn.upsampling": _RUN_TIME_SHAPE,
    "dyn.image.resize2d": _RUN_TIME_SHAPE,
    "dyn.topk": _RUN_TIME_SHAPE,
}
"""Ops the C target refuses, each with the reason its message gives. A dyn op whose shape
arguments are constants becomes its static op at opt_level >= 2 (``dynamic-to-static``)."""


def emit_function(fn: func.FuncOp, name: str | None = None) -> CFunction:
    """The C of primitive function ``fn`` (named ``name``, default its symbol)."""
    name = c_identifier(name or fn.sym_name.data, "function name")
    return _Emitter(fn, name).run()
