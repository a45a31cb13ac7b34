"""C99 for one primitive (fused) function: loops over its ops, through pointers, no allocation.

A primitive function ``@fused_add_relu(%a, %b) -> tensor<...>`` becomes

```c
XRELAY_FN void fused_add_relu(const float *in0, const float *in1, float *out0, uint8_t *ws) {
  for (int64_t i0 = 0; i0 < 64; ++i0) { ... }   /* relay.add, broadcast by strides */
  for (int64_t i = 0; i < 64; ++i) { ... }       /* relay.nn.relu */
}
```

Every op result that is not a result of the function lives in the scratch ``ws`` at an
offset fixed here (``scratch_bytes`` in all, 16-byte aligned slots, no reuse inside one
function), so the step's planned workspace is all the memory it touches besides its
operands and results. Reshape-like ops (``reshape``, ``nn.batch_flatten``, ``expand_dims``,
``squeeze``) are views: the same pointer, no code. Elementwise and broadcasting ops, casts,
reductions, ``transpose``, ``concatenate`` and ``split`` are written out as loop nests with
constant strides; convolution, dense, pools and softmax call the loop nests of
``xrelay_kernels.h`` (shipped beside this file). Anything else is a ``CodegenError`` naming
the op.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from xrelay.dialects.relay import ConstantOp, RelayOp, dtype_of
from xrelay.dialects.relay.ops import parse_layout, reduce_axes, strided_slice_bounds
from xrelay.error import TVMError

SCRATCH_ALIGN = 16

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
}
"""Relay dtypes the C target computes in, and their C types."""

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


class _Emitter:
    def __init__(self, fn: func.FuncOp, name: str):
        self.fn = fn
        self.name = name
        self.lines: list[str] = []
        self.ptr: dict[SSAValue, str] = {}
        self.scratch = 0
        self.uses_kernels = False
        self.constants: list[str] = []

    # -- helpers ---------------------------------------------------------------------------
    def what(self, op: Operation) -> str:
        return f"{op.name} in @{self.fn.sym_name.data}"

    def out(self, line: str) -> None:
        self.lines.append("  " + line)

    def scratch_slot(self, t: TensorType, ctype: str, what: str) -> str:
        offset = self.scratch
        nbytes = _size(static_shape(t, what)) * np.dtype(_np_dtype(ctype)).itemsize
        self.scratch += -(-max(nbytes, 1) // SCRATCH_ALIGN) * SCRATCH_ALIGN
        return f"(({ctype} *)(ws + {offset}))"

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
            ctype = c_type(a.type, f"operand {i} of @{fn.sym_name.data}")
            static_shape(a.type, f"operand {i} of @{fn.sym_name.data}")
            self.ptr[a] = f"in{i}"
            sig.append(f"const {ctype} *in{i}")
        # A result written by an op goes straight to its out pointer (the first time).
        self.dest: dict[SSAValue, str] = {}
        for r, v in enumerate(rets):
            ctype = c_type(v.type, f"result {r} of @{fn.sym_name.data}")
            sig.append(f"{ctype} *out{r}")
            if v not in self.dest and v not in self.ptr:
                self.dest[v] = f"out{r}"
        sig.append("uint8_t *ws")
        # An elementwise op may compute in place over an operand that dies there: walking
        # back from each result, the ops feeding it that way write into its out pointer
        # (a convolution's result, then its bias and relu, all in out0).
        self.returned = set(rets)
        for op in reversed(list(fn.body.block.ops)):
            if op.results and op.results[0] in self.dest:
                a = self.inplace_operand(op)
                if a is not None and a not in self.dest:
                    self.dest[a] = self.dest[op.results[0]]
        for op in fn.body.block.ops:
            if op is ret:
                break
            self.emit_op(op)
        # Results that are operands, returned twice or views: copy them out.
        for r, v in enumerate(rets):
            if self.ptr.get(v) != f"out{r}":
                n = _size(static_shape(v.type, "a result"))
                self.out(f"for (int64_t i = 0; i < {n}; ++i) out{r}[i] = {self.ptr[v]}[i];")
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
        )

    def inplace_operand(self, op: Operation) -> SSAValue | None:
        """The operand an elementwise ``op`` may overwrite with its result: same type, made
        by an op of this function (not a parameter or constant), used only here, not
        returned. Each result element is computed from that operand's element at the same
        index, so the loop reads it before writing it."""
        if not isinstance(op, RelayOp) or len(op.results) != 1:
            return None
        handler = _HANDLERS.get(op.RELAY_NAME)
        if handler not in (_unary, _binary) or op.RELAY_NAME in _ROUNDING:
            return None
        y = op.results[0]
        for v in op.operands:
            owner = v.owner
            if (v.type == y.type and isinstance(owner, RelayOp) and not isinstance(owner, ConstantOp)
                    and v.has_one_use() and v not in self.returned and v.owner.parent is op.parent
                    and _HANDLERS.get(owner.RELAY_NAME) not in (_view, None)):  # fmt: skip
                return v
        return None

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
        handler = _HANDLERS.get(name)
        if handler is None:
            raise CodegenError(f"{name} has no C lowering (in @{self.fn.sym_name.data})")
        for v in [*op.operands, *op.results]:
            static_shape(v.type, self.what(op))
            c_type(v.type, self.what(op))
        self.out(f"/* {name} */")
        handler(self, op)

    def emit_constant(self, op: ConstantOp) -> None:
        t = op.results[0].type
        ctype = c_type(t, self.what(op))
        data = op.numpy()
        cname = f"{self.name}_c{len(self.constants)}"
        values = ", ".join(c_literal(x, ctype) for x in data.reshape(-1).tolist())
        self.constants.append(f"static const {ctype} {cname}[{max(data.size, 1)}] = {{{values}}};")
        self.ptr[op.results[0]] = cname
        if op.results[0] in self.dest:
            self.dest.pop(op.results[0])


def _np_dtype(ctype: str) -> str:
    return {v: k for k, v in C_TYPES.items() if k != "bool"}[ctype]


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
}
_ROUNDING = {"floor", "ceil", "round"}
_FLOAT_ONLY = {"tanh", "sigmoid", "exp", "log", "sqrt", "rsqrt", "erf"}
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
}


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
    ctype = C_TYPES[dst]
    if _is_float(src) and not _is_float(ctype) and ctype not in ("int64_t", "uint64_t"):
        return f"({ctype})(int64_t){v}"
    return f"({ctype}){v}"


def _unary(em: _Emitter, op: RelayOp) -> None:
    name = op.RELAY_NAME
    x, y = op.operands[0], op.results[0]
    ctype = c_type(y.type, em.what(op))
    src = em.ptr[x]
    n = _size(y.type.get_shape())
    if name in _ROUNDING and not _is_float(ctype):
        _view(em, op)  # the identity on integers
        return
    if name in _FLOAT_ONLY and not _is_float(ctype):
        raise CodegenError(f"{name} on {dtype_of(y.type.element_type)} has no C lowering")
    dst = em.result_ptr(y, op)
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
    elif name == "negative" and ctype in _WRAPPING:
        expr = f"({ctype})(0u - ({_WRAPPING[ctype]})v)"
    else:
        expr = _libm(_UNARY[name].replace("{x}", "v"), ctype)
    in_type = c_type(x.type, em.what(op))
    em.out(f"for (int64_t i = 0; i < {n}; ++i) {{ const {in_type} v = {src}[i]; {dst}[i] = {expr}; }}")


def _binary(em: _Emitter, op: RelayOp) -> None:
    name = op.RELAY_NAME
    a, b = op.operands
    y = op.results[0]
    out_shape = list(y.type.get_shape())
    ctype = c_type(a.type, em.what(op))
    if name in ("right_shift", "left_shift") and _is_float(ctype):
        raise CodegenError(f"{name} on {dtype_of(a.type.element_type)} has no C lowering")
    if name == "power" and ctype not in ("float", "double"):
        raise CodegenError(f"power on {dtype_of(a.type.element_type)} has no C lowering")
    exprs = []
    for v in (a, b):
        shape = list(v.type.get_shape())
        # Right-aligned broadcasting: a size-1 (or missing) dim has stride 0.
        shape = [1] * (len(out_shape) - len(shape)) + shape
        strides = [s if d != 1 else 0 for s, d in zip(_strides(shape), shape)]
        exprs.append(f"{em.ptr[v]}[{em.index(strides)}]")
    dst = em.result_ptr(y, op)
    expr = _libm(_BINARY[name].replace("{a}", "va").replace("{b}", "vb"), ctype)
    if name in ("add", "subtract", "multiply") and ctype in _WRAPPING:
        u = _WRAPPING[ctype]
        expr = f"({ctype})(({u})va {_WRAPPED_OPS[name]} ({u})vb)"
    elif name == "divide" and not _is_float(ctype):
        # truncating; x / 0 is 0 and MIN / -1 wraps, as the kernel (C leaves both undefined)
        neg = f"({ctype})(0u - ({_WRAPPING[ctype]})va)" if ctype in _WRAPPING else "-va"
        expr = f"(vb == 0 ? 0 : (vb == -1 ? {neg} : va / vb))" if ctype[0] != "u" else "(vb == 0 ? 0 : va / vb)"
    elif name in ("right_shift", "left_shift"):
        sh = ">>" if name == "right_shift" else "<<"
        if name == "left_shift" and ctype in _WRAPPING:
            expr = f"({ctype})(({_WRAPPING[ctype]})va << vb)"
        else:
            expr = f"({ctype})(va {sh} vb)"
    body = [
        f"const {ctype} va = {exprs[0]}, vb = {exprs[1]};",
        f"{dst}[{em.index(_strides(out_shape))}] = {expr};",
    ]
    em.loops(out_shape, body)


def _view(em: _Emitter, op: RelayOp) -> None:
    x, y = op.operands[0], op.results[0]
    if y in em.dest:
        dst = em.result_ptr(y, op)
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
    init = {
        "sum": "0", "mean": "0", "prod": "1",
        "max": "-INFINITY" if ctype in ("float", "double") else f"(({ctype})1 << (sizeof({ctype}) * 8 - 2)) * -2",
        "min": "INFINITY" if ctype in ("float", "double") else f"~(({ctype})1 << (sizeof({ctype}) * 8 - 1))",
    }[name]  # fmt: skip
    if name in ("max", "min") and ctype not in ("float", "double"):
        raise CodegenError(f"{name} on {dtype_of(y.type.element_type)} has no C lowering")
    em.out(f"for (int64_t i = 0; i < {n_out}; ++i) {dst}[i] = {init};")
    acc = {
        "sum": "{d} += v;", "mean": "{d} += v;", "prod": "{d} *= v;",
        "max": "if (v > {d} || v != v) {d} = v;", "min": "if (v < {d} || v != v) {d} = v;",
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
    innermost loop runs over a row of output columns, bounds hoisted, so it vectorises."""
    x, w = op.operands
    y = op.results[0]
    dl, kl, ol = _conv_layouts(op, x, w, y, "OIHW")
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
    """2-D and global pools in any (blocked) layout; padding adds nothing (-inf or the
    dtype's lowest for max, 0 for average), an average divides by the window positions inside
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
    if is_max:
        init = "-INFINITY" if _is_float(ctype) else str(_int_range(dtype_of(y.type.element_type))[0])
        step = "acc = (v > acc || v != v) ? v : acc;" if _is_float(ctype) else "acc = v > acc ? v : acc;"
        final = []
    else:
        init, step = "0", "acc += v;"
        lo_y, hi_y, lo_x, hi_x = (-pt, h_ + pb, -pl, w_ + pr) if count_pad else (0, h_, 0, w_)
        final = [f"const int32_t cnt = xr_window_count(y0, {kh}, {dh}, {lo_y}, {hi_y}) * "
                 f"xr_window_count(x0, {kw}, {dw}, {lo_x}, {hi_x});",
                 f"acc = acc / ({acc})(cnt > 1 ? cnt : 1);"]  # fmt: skip
        em.uses_kernels = True
    src, dst = em.ptr[x], em.result_ptr(y, op)
    coords = dict(N="i0", C="i1", H="iy", W="ix")
    em.loops([n_, c_, oh, ow], [
        f"const int32_t y0 = (int32_t)(i2 * {sh} - {pt}), x0 = (int32_t)(i3 * {sw} - {pl});",
        f"{acc} acc = {init};",
        f"for (int32_t i = 0; i < {kh}; ++i) {{",
        f"  const int32_t iy = y0 + i * {dh};",
        f"  if (iy < 0 || iy >= {h_}) continue;",
        f"  for (int32_t j = 0; j < {kw}; ++j) {{",
        f"    const int32_t ix = x0 + j * {dw};",
        f"    if (ix < 0 || ix >= {w_}) continue;",
        f"    const {ctype} v = {src}[{il.index(coords)}];",
        f"    {step}",
        "  }", "}",
        *final,
        f"{dst}[{ol.index(dict(N='i0', C='i1', H='i2', W='i3'))}] = ({ctype})acc;",
    ])  # fmt: skip


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
    y = op.results[0]
    out_shape = list(y.type.get_shape())
    reads = []
    for v in op.operands:
        shape = list(v.type.get_shape())
        shape = [1] * (len(out_shape) - len(shape)) + shape
        strides = [s if d != 1 else 0 for s, d in zip(_strides(shape), shape)]
        reads.append(f"{em.ptr[v]}[{em.index(strides)}]")
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
    """Relay's ``fixed_point_multiply`` (TOPI's q_multiply_shift) in int64, wrapping as the
    kernel does (through uint64 where C would overflow)."""
    x, y = op.operands[0], op.results[0]
    if c_type(x.type, em.what(op)) != "int32_t":
        raise CodegenError(f"{op.RELAY_NAME} on {dtype_of(x.type.element_type)} has no C lowering")
    dst = em.result_ptr(y, op)
    shape = list(y.type.get_shape())
    if op.RELAY_NAME == "fixed_point_multiply":
        m, shift = _attr(op, "multiplier"), _attr(op, "shift")
        if m == 1 << 30:
            e = shift - 1
            expr = (f"(int32_t)((uint32_t)v << {e})" if e > 0 else "v" if e == 0
                    else f"(int32_t)((int32_t)((uint32_t)v + {1 << (-e - 1)}u) >> {-e})")  # fmt: skip
            em.out(f"for (int64_t i = 0; i < {_size(shape)}; ++i) {{ const int32_t v = {em.ptr[x]}[i]; {dst}[i] = {expr}; }}")
            return
        left, right = (shift, 0) if shift > 0 else (0, -shift)
        mult, ls, rs = f"{m}LL", str(left), str(right)
        em.out(f"for (int64_t i = 0; i < {_size(shape)}; ++i) {dst}[i] = xr_q_multiply_shift({em.ptr[x]}[i], {mult}, {ls}, {rs});")
        em.uses_kernels = True
        return
    axis = _attr(op, "axes")[0] % len(shape)
    mult, lsh, rsh = (em.ptr[v] for v in op.operands[1:])
    ls = f"{lsh}[i{axis}]" if _attr(op, "is_lshift_required") else "0"
    em.uses_kernels = True
    em.loops(shape, [f"const int64_t at = {em.index(_strides(shape))};",
                     f"{dst}[at] = xr_q_multiply_shift({em.ptr[x]}[at], {mult}[i{axis}], {ls}, {rsh}[i{axis}]);"])  # fmt: skip



_HANDLERS = {
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
}
"""Relay ops the C target lowers, by Relay name."""


def emit_function(fn: func.FuncOp, name: str | None = None) -> CFunction:
    """The C of primitive function ``fn`` (named ``name``, default its symbol)."""
    name = c_identifier(name or fn.sym_name.data, "function name")
    return _Emitter(fn, name).run()
