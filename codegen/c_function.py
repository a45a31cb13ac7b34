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
from xrelay.dialects.relay.ops import reduce_axes
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
        body = self.lines or ["  (void)ws;"]
        if self.lines and "ws" not in "".join(self.lines):
            body = ["  (void)ws;", *self.lines]
        return CFunction(
            self.name,
            "\n".join([head, *body, "}"]),
            self.scratch,
            [a.type for a in params],
            [v.type for v in rets],
            self.uses_kernels,
            self.constants,
        )

    def result_ptr(self, v: SSAValue, op: Operation) -> str:
        if v in self.dest:
            p = self.dest.pop(v)
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
_FLOAT_ONLY = {"tanh", "sigmoid", "exp", "log", "sqrt", "rsqrt", "erf", "floor", "ceil", "round"}

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
}


def _libm(expr: str, ctype: str) -> str:
    # ``{f}exp(`` -> ``expf(`` for float, ``exp(`` for double.
    return re.sub(r"\{f\}(\w+)\(", lambda m: m.group(1) + ("f(" if ctype == "float" else "("), expr)


def _unary(em: _Emitter, op: RelayOp) -> None:
    name = op.RELAY_NAME
    x, y = op.operands[0], op.results[0]
    ctype = c_type(y.type, em.what(op))
    if name in _FLOAT_ONLY and ctype not in ("float", "double"):
        raise CodegenError(f"{name} on {dtype_of(y.type.element_type)} has no C lowering")
    src = em.ptr[x]
    dst = em.result_ptr(y, op)
    n = _size(y.type.get_shape())
    if name == "clip":
        lo = c_literal(_attr(op, "a_min"), ctype)
        hi = c_literal(_attr(op, "a_max"), ctype)
        expr = f"(v < {lo} ? {lo} : (v > {hi} ? {hi} : v))"
    elif name == "nn.leaky_relu":
        alpha = c_literal(_attr(op, "alpha"), ctype)
        expr = f"(v > 0 ? v : {alpha} * v)"
    elif name == "cast":
        expr = f"({ctype})v"
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


def _layout(em: _Emitter, op: RelayOp, attr: str, want: str) -> None:
    got = _attr(op, attr)
    if got not in (want, None, ""):
        raise CodegenError(f"{op.RELAY_NAME} with {attr} {got} has no C lowering (only {want})")


def _conv2d(em: _Emitter, op: RelayOp) -> None:
    _need_float32(em, op)
    _layout(em, op, "data_layout", "NCHW")
    _layout(em, op, "kernel_layout", "OIHW")
    if _attr(op, "out_layout") not in ("", None, "NCHW"):
        raise CodegenError("nn.conv2d with another out_layout has no C lowering")
    x, w = op.operands
    y = op.results[0]
    n, c, h, wd = x.type.get_shape()
    o, _, kh, kw = w.type.get_shape()
    _, _, oh, ow = y.type.get_shape()
    sh, sw = _attr(op, "strides")
    pt, pl, _, _ = _attr(op, "padding")
    dh, dw = _attr(op, "dilation")
    dst = em.result_ptr(y, op)
    em.out(f"xr_conv2d_nchw_f32({em.ptr[x]}, {em.ptr[w]}, {dst}, {n}, {c}, {h}, {wd}, {o}, "
           f"{kh}, {kw}, {oh}, {ow}, {sh}, {sw}, {pt}, {pl}, {dh}, {dw}, {_attr(op, 'groups')});")  # fmt: skip


def _dense(em: _Emitter, op: RelayOp) -> None:
    _need_float32(em, op)
    x, w = op.operands
    y = op.results[0]
    k = x.type.get_shape()[-1]
    m = _size(x.type.get_shape()) // max(k, 1)
    units = w.type.get_shape()[0]
    dst = em.result_ptr(y, op)
    em.out(f"xr_dense_f32({em.ptr[x]}, {em.ptr[w]}, {dst}, {m}, {units}, {k});")


def _pool(em: _Emitter, op: RelayOp) -> None:
    _need_float32(em, op)
    _layout(em, op, "layout", "NCHW")
    x, y = op.operands[0], op.results[0]
    n, c, h, wd = x.type.get_shape()
    _, _, oh, ow = y.type.get_shape()
    name = op.RELAY_NAME
    if name.startswith("nn.global_"):
        kh, kw, sh, sw, dh, dw, pads = h, wd, 1, 1, 1, 1, (0, 0, 0, 0)
        count_pad = 0
    else:
        kh, kw = _attr(op, "pool_size")
        sh, sw = _attr(op, "strides")
        dh, dw = _attr(op, "dilation")
        pads = tuple(_attr(op, "padding"))
        count_pad = int(bool(_attr(op, "count_include_pad"))) if "avg" in name else 0
    is_max = int("max" in name)
    dst = em.result_ptr(y, op)
    pt, pl, pb, pr = pads
    em.out(f"xr_pool2d_nchw_f32({em.ptr[x]}, {dst}, {n * c}, {h}, {wd}, {oh}, {ow}, {kh}, {kw}, "
           f"{sh}, {sw}, {dh}, {dw}, {pt}, {pl}, {pb}, {pr}, {is_max}, {count_pad});")  # fmt: skip


def _softmax(em: _Emitter, op: RelayOp) -> None:
    _need_float32(em, op)
    x, y = op.operands[0], op.results[0]
    shape = list(x.type.get_shape())
    axis = _attr(op, "axis") % len(shape)
    outer, inner = _size(shape[:axis]), _size(shape[axis + 1 :])
    dst = em.result_ptr(y, op)
    log = int(op.RELAY_NAME == "nn.log_softmax")
    em.out(f"xr_softmax_f32({em.ptr[x]}, {dst}, {outer}, {shape[axis]}, {inner}, {log});")


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
}
"""Relay ops the C target lowers, by Relay name."""


def emit_function(fn: func.FuncOp, name: str | None = None) -> CFunction:
    """The C of primitive function ``fn`` (named ``name``, default its symbol)."""
    name = c_identifier(name or fn.sym_name.data, "function name")
    return _Emitter(fn, name).run()
