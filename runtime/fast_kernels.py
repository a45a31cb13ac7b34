"""Compile one primitive (fused) function into thunks bound to fixed arrays.

The arena executor knows every array a step touches before it runs: the inputs are arena
views, constants or input buffers, the destinations and the workspace are arena views. So each
op of a primitive function is turned, once, into a zero-argument callable (a *thunk*) that
calls a kernel on those fixed arrays; running the step is calling its thunks in order.

Where the result goes (decided backwards from ``func.return``):

* a value the function returns is computed straight into its destination view;
* an elementwise op that writes such a buffer takes one operand of the same type that only it
  uses and asks that operand's producer to write the same buffer: ``conv2d -> multiply -> add
  -> relu`` runs as one convolution into ``out`` followed by three in-place ufuncs on ``out``;
* a reshape (``reshape``/``squeeze``/``expand_dims``/``nn.batch_flatten``) of a value that only
  it uses makes the producer write a reshaped view of the destination: no copy at all;
* any other internal value gets a scratch array allocated here, at compile time, never in a
  run (``CompiledFunction.scratch_bytes`` counts them; ResNet-style models need none).

Kernels: every op can run through the reference kernels (``xrelay.runtime.kernels``) called
with ``out=`` exactly as the memory-dialect interpreter calls them. Faster versions exist for
the ops that dominate CNNs, written so that they compute the *same* floating-point operations
in the same order as the reference kernels (so results are bitwise identical):

* ``nn.conv2d`` (NCHW/OIHW, groups 1, float): im2col into the step's planned workspace (the
  padding is never materialised: border taps are zeroed in place), then one BLAS matmul per
  batch element into the destination; 1x1 stride-1 unpadded convolutions skip im2col;
* ``nn.max_pool2d`` (float): ``np.maximum(out=)`` over the valid part of every tap;
* ``nn.global_avg_pool2d`` (float), ``clip``, ``nn.relu`` and the binary ufunc ops: one or two
  ufunc calls with ``out=`` and no temporary.

With ``use_numba=True`` depthwise convolutions (groups = channels = output channels) run in a
numba kernel instead of the reference grouped matmul: several times faster, but it sums the
taps in another order, so results differ from the reference kernels in the last bits
(``MemoryRunner``-style comparisons then use ``xrelay.runtime.executor.run_memory_compiled``,
which runs the memory interpreter with these very kernels).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from xrelay.dialects.relay import ConstantOp, RelayOp, dtype_of, numpy_dtype
from xrelay.runtime.kernels import KERNELS

__all__ = [
    "CompiledFunction",
    "FAMILIES",
    "KernelError",
    "compile_function",
    "numba_available",
]

Thunk = Callable[[], Any]

FAMILIES = ("im2col", "matmul", "depthwise", "elementwise", "pool", "copy", "other")
"""Op families a thunk is counted in by the profiler."""

# Ops that may write their destination while reading an operand of the same type from the
# same buffer: they compute elementwise (a ufunc, or a full temporary before writing).
_INPLACE_OK = frozenset(
    {
        "add", "subtract", "multiply", "divide", "maximum", "minimum", "power",
        "nn.relu", "clip", "negative", "abs", "exp", "log", "sqrt", "rsqrt", "tanh",
        "sigmoid", "erf", "nn.leaky_relu", "nn.prelu", "nn.bias_add", "floor", "ceil",
        "trunc", "round", "sign", "copy", "where",
    }
)  # fmt: skip

# Ops whose result is their first operand's elements in the same order (a view).
_VIEW_OPS = frozenset({"reshape", "squeeze", "expand_dims", "nn.batch_flatten"})

_BINARY_UFUNCS: dict[str, np.ufunc] = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "maximum": np.maximum,
    "minimum": np.minimum,
}


class KernelError(RuntimeError):
    """A step could not be compiled or failed while running; the message names the op."""


def _tensor_spec(v: SSAValue) -> tuple[tuple[int, ...], np.dtype]:
    t = v.type
    if not isinstance(t, TensorType) or not t.has_static_shape():
        raise KernelError(f"the executor needs static tensor types, got {t}")
    return tuple(t.get_shape()), numpy_dtype(dtype_of(t.element_type))


@dataclass
class CompiledFunction:
    """The thunks of one primitive function bound to its arrays."""

    name: str
    thunks: list[tuple[str, str, Thunk]] = field(default_factory=list)
    """``(op name, family, thunk)`` in execution order."""
    scratch_bytes: int = 0
    """Bytes of internal temporaries allocated at compile time (outside the arena)."""
    fast_ops: int = 0
    """How many ops run through a fast kernel (the rest use the reference kernels)."""

    def __call__(self) -> None:
        for _, _, t in self.thunks:
            t()


# --------------------------------------------------------------------------------------------
# Generic: the reference kernel with out=, as the memory interpreter calls it
# --------------------------------------------------------------------------------------------


def _generic(kernel: Callable[..., Any], vals: list[Any], attrs: dict[str, Any], out: Any) -> Thunk:
    if isinstance(out, tuple):

        def run_multi() -> None:
            res = kernel(*vals, out=out, **attrs)
            for r, o in zip(res, out):
                if r is not o:
                    np.copyto(o, r, casting="unsafe")

        return run_multi

    def run() -> None:
        res = kernel(*vals, out=out, **attrs)
        if res is not out:
            np.copyto(out, res, casting="unsafe")

    return run


# --------------------------------------------------------------------------------------------
# Fast kernels: each returns a thunk list, or None to fall back to the reference kernel
# --------------------------------------------------------------------------------------------


def _float_same(*arrays: np.ndarray) -> bool:
    dt = arrays[0].dtype
    return dt.kind == "f" and dt != np.float16 and all(a.dtype == dt for a in arrays)


def _fast_binary(op: RelayOp, vals, out, ws, use_numba):
    uf = _BINARY_UFUNCS[op.RELAY_NAME]
    a, b = vals
    if a.dtype != b.dtype or out.dtype != a.dtype or a.dtype == np.bool_:
        return None
    if np.broadcast_shapes(a.shape, b.shape) != out.shape:
        return None
    # One ufunc call, as the reference's _ufunc_into does when out has the result dtype.
    return [("elementwise", functools.partial(uf, a, b, out=out))]


def _fast_relu(op, vals, out, ws, use_numba):
    (x,) = vals
    if not _float_same(x, out) or x.shape != out.shape:
        return None
    return [("elementwise", functools.partial(np.maximum, x, np.zeros((), x.dtype), out=out))]


def _fast_clip(op, vals, out, ws, use_numba):
    (x,) = vals
    if not _float_same(x, out) or x.shape != out.shape:
        return None
    a = op.attrs
    lo = np.asarray(a["a_min"], dtype=x.dtype)
    hi = np.asarray(a["a_max"], dtype=x.dtype)
    # The reference computes minimum(maximum(x, lo), hi): the same two roundings-free ops.
    return [
        ("elementwise", functools.partial(np.maximum, x, lo, out=out)),
        ("elementwise", functools.partial(np.minimum, out, hi, out=out)),
    ]


def _fast_global_avg_pool(op, vals, out, ws, use_numba):
    (x,) = vals
    a = op.attrs
    if a["layout"] != "NCHW" or (a["out_layout"] or "NCHW") != "NCHW":
        return None
    if not _float_same(x, out) or x.ndim != 4:
        return None
    return [
        ("pool", functools.partial(np.mean, x, axis=(2, 3), keepdims=True, dtype=x.dtype, out=out))
    ]


def _valid_range(n_out: int, n_in: int, tap: int, stride: int, pad_before: int) -> tuple[int, int]:
    """Output indices ``o`` with ``0 <= o * stride + tap - pad_before < n_in``."""
    lo = max(0, -(-(pad_before - tap) // stride))
    hi = min(n_out, -(-(n_in + pad_before - tap) // stride))
    return lo, max(lo, hi)


def _fast_max_pool(op, vals, out, ws, use_numba):
    (x,) = vals
    a = op.attrs
    if a["layout"] != "NCHW" or (a.get("out_layout") or "NCHW") != "NCHW":
        return None
    if not _float_same(x, out) or x.ndim != 4:
        return None
    kh, kw = a["pool_size"]
    sh, sw = a["strides"]
    dh, dw = a["dilation"]
    pt, pl = a["padding"][0], a["padding"][1]
    h, w = x.shape[2:]
    oh, ow = out.shape[2:]
    thunks: list[tuple[str, Thunk]] = [("pool", functools.partial(out.fill, -np.inf))]
    # The reference pads with -inf and folds np.maximum over the taps in this order; skipping
    # the padded positions gives the same maxima.
    for i in range(kh):
        r0, r1 = _valid_range(oh, h, i * dh, sh, pt)
        if r0 >= r1:
            continue
        for j in range(kw):
            c0, c1 = _valid_range(ow, w, j * dw, sw, pl)
            if c0 >= c1:
                continue
            y0, x0 = r0 * sh + i * dh - pt, c0 * sw + j * dw - pl
            src = x[
                :, :, y0 : y0 + (r1 - r0 - 1) * sh + 1 : sh, x0 : x0 + (c1 - c0 - 1) * sw + 1 : sw
            ]
            dst = out[:, :, r0:r1, c0:c1]
            thunks.append(("pool", functools.partial(np.maximum, dst, src, out=dst)))
    return thunks


def _conv_geometry(op: RelayOp, x: np.ndarray, w: np.ndarray, out: np.ndarray):
    a = op.attrs
    if a["data_layout"] != "NCHW" or a["kernel_layout"] != "OIHW":
        return None
    if (a["out_layout"] or "NCHW") != "NCHW" or a["out_dtype"] not in ("", None, str(x.dtype)):
        return None
    if not _float_same(x, w, out) or x.ndim != 4 or w.ndim != 4:
        return None
    if not out.flags.c_contiguous:
        return None
    return a


def _fast_conv2d(op, vals, out, ws, use_numba):
    x, w = vals
    a = _conv_geometry(op, x, w, out)
    if a is None:
        return None
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    _, _, oh, ow = out.shape
    sh, sw = a["strides"]
    dh, dw = a["dilation"]
    pt, pl, _, _ = a["padding"]
    groups = a["groups"]
    if groups != 1:
        if use_numba and groups == c == o and cg == 1:
            return _depthwise(x, w, out, (sh, sw), (dh, dw), (pt, pl))
        return None
    k = c * kh * kw
    p = oh * ow
    wmat = np.ascontiguousarray(w.reshape(o, k))  # packed once, here
    thunks: list[tuple[str, Thunk]] = []
    pointwise = kh == kw == 1 and sh == sw == 1 and not any(a["padding"])
    if pointwise:
        if not x.flags.c_contiguous:
            return None
        for b in range(n):
            thunks.append(
                (
                    "matmul",
                    functools.partial(
                        np.matmul, wmat, x[b].reshape(c, p), out=out[b].reshape(o, p)
                    ),
                )
            )
        return thunks
    need = k * p * x.dtype.itemsize
    if ws is None or ws.nbytes < need:
        return None  # lowered without a workspace: the reference kernel allocates
    cols = ws[:need].view(x.dtype).reshape(k, p)
    cols6 = cols.reshape(c, kh, kw, oh, ow)
    for b in range(n):
        xb = x[b]
        for i in range(kh):
            r0, r1 = _valid_range(oh, h, i * dh, sh, pt)
            for j in range(kw):
                c0, c1 = _valid_range(ow, wd, j * dw, sw, pl)
                tap = cols6[:, i, j]
                # Zero the border the padding would give, then copy the valid window.
                for zone in (tap[:, :r0], tap[:, r1:], tap[:, r0:r1, :c0], tap[:, r0:r1, c1:]):
                    if zone.size:
                        thunks.append(("im2col", functools.partial(zone.fill, 0)))
                if r0 < r1 and c0 < c1:
                    y0, x0 = r0 * sh + i * dh - pt, c0 * sw + j * dw - pl
                    src = xb[
                        :,
                        y0 : y0 + (r1 - r0 - 1) * sh + 1 : sh,
                        x0 : x0 + (c1 - c0 - 1) * sw + 1 : sw,
                    ]
                    thunks.append(
                        ("im2col", functools.partial(np.copyto, tap[:, r0:r1, c0:c1], src))
                    )
        thunks.append(
            ("matmul", functools.partial(np.matmul, wmat, cols, out=out[b].reshape(o, p)))
        )
    return thunks


# --------------------------------------------------------------------------------------------
# numba depthwise convolution
# --------------------------------------------------------------------------------------------

_NUMBA: dict[str, Any] = {}


def numba_available() -> bool:
    """Whether numba imports (the depthwise kernel needs it)."""
    if "ok" not in _NUMBA:
        try:
            import numba  # noqa: F401

            _NUMBA["ok"] = True
        except Exception:  # pragma: no cover - numba is a declared dependency
            _NUMBA["ok"] = False
    return _NUMBA["ok"]


def _depthwise_kernel() -> Callable[..., None]:
    kernel = _NUMBA.get("depthwise")
    if kernel is None:
        import numba

        @numba.njit(cache=False, fastmath=False, nogil=True)
        def depthwise(x, w, out, sh, sw, dh, dw, pt, pl):  # pragma: no cover - compiled
            n, c, h, wd = x.shape
            _, _, kh, kw = w.shape
            oh, ow = out.shape[2], out.shape[3]
            for b in range(n):
                for ch in range(c):
                    for y in range(oh):
                        for xo in range(ow):
                            out[b, ch, y, xo] = 0.0
                    for i in range(kh):
                        for j in range(kw):
                            wv = w[ch, 0, i, j]
                            for y in range(oh):
                                iy = y * sh + i * dh - pt
                                if iy < 0 or iy >= h:
                                    continue
                                for xo in range(ow):
                                    ix = xo * sw + j * dw - pl
                                    if ix >= 0 and ix < wd:
                                        out[b, ch, y, xo] += wv * x[b, ch, iy, ix]

        kernel = _NUMBA["depthwise"] = depthwise
    return kernel


def _depthwise(x, w, out, strides, dilation, pads):
    if not numba_available():
        return None
    kernel = _depthwise_kernel()
    wc = np.ascontiguousarray(w)
    call = functools.partial(kernel, x, wc, out, *strides, *dilation, *pads)
    return [("depthwise", call)]


_FAST: dict[str, Callable[..., list[tuple[str, Thunk]] | None]] = {
    **{name: _fast_binary for name in _BINARY_UFUNCS},
    "nn.relu": _fast_relu,
    "clip": _fast_clip,
    "nn.global_avg_pool2d": _fast_global_avg_pool,
    "nn.max_pool2d": _fast_max_pool,
    "nn.conv2d": _fast_conv2d,
}

_FAMILY_OF = {
    "nn.conv2d": "matmul",
    "nn.dense": "matmul",
    "nn.matmul": "matmul",
    "nn.batch_matmul": "matmul",
    "nn.max_pool2d": "pool",
    "nn.avg_pool2d": "pool",
    "nn.global_avg_pool2d": "pool",
}


def _family(op: RelayOp) -> str:
    fam = _FAMILY_OF.get(op.RELAY_NAME)
    if fam is not None:
        return fam
    if int(op.PATTERN) <= 1:  # elemwise, broadcast
        return "elementwise"
    return "other"


# --------------------------------------------------------------------------------------------
# Compiling a function
# --------------------------------------------------------------------------------------------


def _assign_destinations(fn: func.FuncOp, outs: Sequence[np.ndarray]) -> tuple[dict, set]:
    """Backwards from the return: which values write which buffer; which ops are views."""
    body = fn.body.block
    ret = body.last_op
    assert isinstance(ret, func.ReturnOp)
    dest: dict[SSAValue, Any] = {}
    for v, o in zip(ret.arguments, outs):
        if v in dest or not isinstance(v.owner, RelayOp):
            continue
        if isinstance(v.owner, ConstantOp):
            continue
        dest[v] = o
    views: set[RelayOp] = set()
    for op in reversed(list(body.ops)):
        if not isinstance(op, RelayOp) or isinstance(op, ConstantOp) or len(op.results) != 1:
            continue
        buf = dest.get(op.results[0])
        if buf is None:
            continue
        r = op.results[0]
        for v in op.operands:
            owner = v.owner
            if (
                v in dest
                or not isinstance(owner, RelayOp)
                or isinstance(owner, ConstantOp)
                or v.uses.get_length() != 1
                or len(owner.results) != 1
            ):
                continue
            if op.RELAY_NAME in _INPLACE_OK and v.type == r.type:
                dest[v] = buf
                break
            if op.RELAY_NAME in _VIEW_OPS and v is op.operands[0] and buf.flags.c_contiguous:
                shape, dt = _tensor_spec(v)
                if dt == buf.dtype and int(np.prod(shape)) == buf.size:
                    dest[v] = buf.reshape(shape)
                    views.add(op)
                break
    return dest, views


def compile_function(
    fn: func.FuncOp,
    inputs: Sequence[np.ndarray],
    outs: Sequence[np.ndarray],
    workspace: np.ndarray | None = None,
    *,
    fast: bool = True,
    use_numba: bool = False,
    call_function: Callable[[func.FuncOp, tuple[Any, ...]], Sequence[Any]] | None = None,
    lookup: Callable[[str], func.FuncOp | None] | None = None,
) -> CompiledFunction:
    """Bind ``fn``'s body to ``inputs``/``outs``/``workspace`` and return its thunks.

    ``fast=False`` runs every op through the reference kernels (still in place where the
    destinations allow). ``call_function`` runs composite functions called inside ``fn``
    (found with ``lookup``) with reference semantics. Raises ``KernelError`` naming the op for
    ops without a kernel.
    """
    name = fn.sym_name.data
    body = fn.body.block
    if len(inputs) != len(body.args) or len(outs) != len(fn.function_type.outputs.data):
        raise KernelError(
            f"@{name}: called with {len(inputs)} input(s) and {len(outs)} output(s), but its "
            f"type is {fn.function_type}"
        )
    compiled = CompiledFunction(name)
    env: dict[SSAValue, Any] = dict(zip(body.args, inputs))
    dest, views = _assign_destinations(fn, outs)
    ret = body.last_op
    assert isinstance(ret, func.ReturnOp)
    for op in body.ops:
        if op is ret:
            break
        if isinstance(op, ConstantOp):
            env[op.result] = op.numpy()
            continue
        if isinstance(op, func.CallOp):
            callee_name = op.callee.root_reference.data
            callee = lookup(callee_name) if lookup else None
            if callee is None or call_function is None:
                raise KernelError(f"@{name}: cannot run the call of @{callee_name}")
            args = [env[v] for v in op.arguments]
            bufs = []
            for r in op.results:
                shape, dt = _tensor_spec(r)
                buf = dest.get(r)
                if buf is None:
                    buf = np.empty(shape, dt)
                    compiled.scratch_bytes += buf.nbytes
                env[r] = buf
                bufs.append(buf)

            def run_call(callee=callee, args=args, bufs=bufs) -> None:
                for b, v in zip(bufs, call_function(callee, tuple(args))):
                    np.copyto(b, v, casting="unsafe")

            compiled.thunks.append((f"call @{callee_name}", "other", run_call))
            continue
        if not isinstance(op, RelayOp):
            raise KernelError(f"@{name}: cannot run '{op.name}' inside a primitive function")
        vals = [env[v] for v in op.operands]
        if op in views:
            env[op.results[0]] = dest[op.results[0]]
            continue
        results = []
        for r in op.results:
            buf = dest.get(r)
            if buf is None:
                shape, dt = _tensor_spec(r)
                if op.RELAY_NAME in _VIEW_OPS and vals and vals[0].flags.c_contiguous:
                    # A reshape nothing writes back: a view of the operand, no thunk.
                    buf = vals[0].reshape(shape)
                    env[r] = buf
                    results = None
                    break
                buf = np.empty(shape, dt)
                compiled.scratch_bytes += buf.nbytes
            results.append(buf)
        if results is None:
            continue
        env.update(zip(op.results, results))
        out = results[0] if len(op.results) == 1 and not _multi(op) else tuple(results)
        thunks = None
        if fast and not isinstance(out, tuple):
            maker = _FAST.get(op.RELAY_NAME)
            if maker is not None:
                thunks = maker(op, vals, out, workspace, use_numba)
        if thunks is not None:
            compiled.fast_ops += 1
            compiled.thunks.extend((op.RELAY_NAME, fam, t) for fam, t in thunks)
            continue
        kernel = KERNELS.get(op.RELAY_NAME)
        if kernel is None:
            raise KernelError(f"@{name}: no numpy kernel implements {op.name}")
        compiled.thunks.append((op.RELAY_NAME, _family(op), _generic(kernel, vals, op.attrs, out)))
    for i, v in enumerate(ret.arguments):
        value = env[v]
        if value is outs[i]:
            continue
        if dest.get(v) is outs[i]:
            continue
        compiled.thunks.append(
            ("copy", "copy", functools.partial(np.copyto, outs[i], value, casting="unsafe"))
        )
    return compiled


def _multi(op: RelayOp) -> bool:
    from xrelay.runtime.interpreter import _is_multi_result

    return _is_multi_result(type(op))
