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
* any other internal value (``dialects.memory.fused_temporaries``, the same rule from the IR)
  gets a slice of the step's planned workspace after the kernels' scratch; only a program
  planned without that room gets arrays allocated here, at compile time, never in a run
  (``CompiledFunction.scratch_bytes`` counts them).

Kernels: every op can run through the reference kernels (``xrelay.kernels``) called
with ``out=`` exactly as the memory-dialect interpreter calls them. Faster versions exist for
the ops that dominate CNNs, written so that they compute the *same* floating-point operations
in the same order as the reference kernels (so results are bitwise identical):

* ``nn.conv2d`` (NCHW/OIHW, groups 1, float): im2col into the step's planned workspace (the
  padding is never materialised: border taps are zeroed in place), then one BLAS matmul per
  batch element into the destination; 1x1 stride-1 unpadded convolutions skip im2col;
* ``nn.max_pool2d`` (float): ``np.maximum(out=)`` over the valid part of every tap;
* ``nn.global_avg_pool2d`` (float), ``clip``, ``nn.relu`` and the binary ufunc ops: one or two
  ufunc calls with ``out=`` and no temporary.

**Epilogues.** A convolution also runs the in-place elementwise ops that follow it in its
function (bias add, residual add, relu, clip, ...) on each part of its output right after
computing that part, while it is in cache; elementwise ops give the same bits in any order.

**Chunks.** With a ``parallel.WorkerPool`` of several threads, big kernels are cut into fixed
chunks: a convolution by output rows (each chunk gathers its own im2col columns, multiplies
and finishes them) when the image is large, else by output channels; depthwise convolutions
and max pools by channels. A matmul chunk never falls below ``MIN_CHUNK_MNK`` multiply-adds,
above which OpenBLAS's result for an element does not depend on the cut, so every thread
count gives the bits of one thread (tested). Run serially, a job calls the uncut kernel.

**Winograd.** With the loop kernels, a 3x3 stride-1 float32 convolution with constant
weights that the compiler planned for it (``relay.winograd_tile`` on the op, stated by
``xrelay.backend.native.scratch``, which holds the thresholds) runs as Winograd F(4x4, 3x3)
or F(2x2, 3x3): weights transformed once at
compile time, input tiles transformed by a loop kernel into the planned workspace, 36 or 16
batched matmuls, the output transform and the epilogue writing the destination. It needs
2.25x (F(2x2)) or 4x (F(4x4)) fewer multiplications; its results differ from direct
convolution by float32 rounding (relative error about 1e-6 and 1e-5 of the output's scale,
tested) and are the same bits for any thread count. ``XRELAY_WINOGRAD=0`` turns it off.

**Loop kernels** (``use_c_kernels=True``, the default): im2col, max
pool, the epilogue, Winograd's transforms and depthwise convolutions (groups = channels =
output channels) run as compiled loops, the C of ``xrelay.runtime.native.library``, one
implementation each. Without a C compiler (or with ``XRELAY_NATIVE=0``) the makers keep to
numpy (the reference kernels' operations: no Winograd, no depthwise kernel).
im2col, max pool and epilogue compute the reference's values exactly; the depthwise kernel
sums the taps in another order than the reference grouped matmul, so depthwise results
differ from the reference kernels in the last bits (``MemoryRunner``-style comparisons then
use ``xrelay.runtime.executor.run_memory_compiled``, which runs the memory interpreter with
these very kernels). ``use_c_kernels=False`` keeps every kernel bitwise the reference's. A 3x3
depthwise convolution runs its epilogue inside the kernel (``depthwise3x3_epi``), channel by
channel while the channel is in cache; the C kernel copies each channel into a zero-padded
plane and sums the nine taps vectorised over the outputs (the same sums, so the same bits).
"""

from __future__ import annotations

import functools
import itertools
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from xrelay.dialects.memory import INPLACE_OPS, VIEW_OPS, result_buffers, temporaries_offset
from xrelay.dialects.relay import ConstantOp, RelayOp, dtype_of, numpy_dtype
from xrelay.dialects.relay.base import is_multi_result
from xrelay.dialects.relay.dtypes import too_large
from xrelay.kernels import KERNELS
from xrelay.kernels.winograd import WINOGRAD_G, winograd_weights
from xrelay.runtime.compiled import FAMILIES, CompiledFunction, KernelError, Thunk
from xrelay.runtime.native.library import call_job, native_kernels
from xrelay.runtime.native.rotary import Rotation, rotations, row_offsets
from xrelay.runtime.native.workspace import (
    ELEMENTWISE_CHUNK,
    dft_scratch_bytes,
    elementwise_scratch_bytes,
    gather_nd_scratch_bytes,
    resize_scratch_bytes,
    stated_winograd_tile,
    winograd_scratch_bytes,
    winograd_slice_bytes,
)
from xrelay.runtime.npz import private_copy
from xrelay.runtime.parallel import Job, WorkerPool

__all__ = [
    "CompiledFunction",
    "FAMILIES",
    "KernelError",
    "compile_function",
    # the contract the engine's other kernel modules (fast_int8, fast_nhwc, makers) build on
    "FINE_CHUNKS_PER_THREAD", "FLOAT_MAKERS", "MIN_CHUNK_MNK", "WINOGRAD_CHUNKS", "Maker", "Options",
    "Thunk", "bind_kernel", "by_layout", "chunk_count", "epilogue_chunk", "epilogue_thunks",
    "even_ranges", "fast_conv2d", "fast_global_avg_pool", "fast_max_pool", "first", "fixed_split",
    "float_same", "im2col_kernel", "im2col_numpy", "in_sequence", "loop_kernels_available",
    "matmul_ranges", "max_pool_taps", "mean_into", "pool_geometry", "split_job", "valid_range", "wino_matrices",
    "winograd_tile_for", "winograd_weights",
]  # fmt: skip

# Ops that may write their destination while reading an operand of the same type from the
# same buffer, and ops whose result is a view of their first operand (dialects.memory: the
# planner sizes the workspace by the same rule).
_INPLACE_OK = INPLACE_OPS
_VIEW_OPS = VIEW_OPS

_BINARY_UFUNCS: dict[str, np.ufunc] = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "maximum": np.maximum,
    "minimum": np.minimum,
}


class _Out:
    """Marks the kernel's own output in an epilogue operation."""

    def __repr__(self) -> str:
        return "OUT"


_OUT: Any = _Out()


@dataclass
class Options:
    """What a fast kernel maker may use."""

    use_c_kernels: bool = False
    """Whether the C loop kernels may be used (where they are built)."""
    pool: WorkerPool | None = None
    epilogue: list[tuple[np.ufunc, Any, Any]] = field(default_factory=list)
    """In-place elementwise ops to run on the output after the kernel, chunk by chunk:
    ``(ufunc, a, b)`` computing ``out = ufunc(a, b)`` where ``a``/``b`` is ``_OUT`` or an
    array broadcasting to the output."""
    columns: list[np.ndarray] = field(default_factory=list)
    """Where a convolution put its im2col matrix (reported in ``CompiledFunction.columns``)."""
    winograd: list[np.ndarray] = field(default_factory=list)
    """The transformed weights of the Winograd convolutions (``CompiledFunction.winograd``)."""
    derived: list[np.ndarray] = field(default_factory=list)
    """Constants derived from attributes and shapes (``CompiledFunction.derived``)."""
    fixed: tuple[bool, ...] = ()
    """Per operand of the op: whether its values stay the same while the thunks are used
    (a constant), so a kernel may transform it once at compile time (Winograd weights)."""
    scratch: list[np.ndarray] = field(default_factory=list)
    """Arrays a kernel allocated at compile time (counted in ``CompiledFunction.scratch_bytes``)."""
    dest: dict = field(default_factory=dict)
    """The function's destination buffers by value (read-only for kernels)."""
    claimed: list = field(default_factory=list)
    """Later ops of the function the kernel computes too (they get no thunk of their own)."""
    produced: dict = field(default_factory=dict)
    """Buffers a kernel wrote for claimed ops' results that have no destination."""
    constant: Callable[[SSAValue], np.ndarray | None] = lambda v: None
    """The value of any SSA value of the function that stays fixed (a constant, or an input
    marked fixed), else None: what a kernel claiming later ops reads their parameters from."""
    available: Callable[[SSAValue], np.ndarray | None] = lambda v: None
    """The buffer of a value an earlier op (or the caller) provides, else None (not yet made)."""
    padded: tuple[RelayOp, np.ndarray, np.ndarray] | None = None
    """For a ``pad_readers`` maker: ``(nn.pad, its data, its pad value)`` of the constant-mode
    ``nn.pad`` that is the op's first operand and used only there; the padded tensor is not
    made (``vals[0]`` is None) unless the maker declines (returns None)."""
    result_unused: bool = False
    """Set by a kernel that claimed every user of the op's result and never writes its buffer
    (an int32 accumulator requantized in the kernel): the buffer is dropped."""
    unread: list = field(default_factory=list)
    """Operands of the op the kernel does not read: it computes from the values in ``reads``
    (what those operands were computed from). The ops that computed only such operands then
    run no more (``_drop_dead_ops``)."""
    reads: list = field(default_factory=list)
    """Values of the function the kernel reads besides the op's operands (see ``unread``)."""
    winograd_tile: int = 0
    """The Winograd block size the compiler planned the op's workspace for
    (``relay.winograd_tile``), or 0."""


def _tensor_spec(v: SSAValue) -> tuple[tuple[int, ...], np.dtype]:
    t = v.type
    if not isinstance(t, TensorType) or not t.has_static_shape():
        raise KernelError(f"the executor needs static tensor types, got {t}")
    return tuple(t.get_shape()), numpy_dtype(dtype_of(t.element_type))


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


def float_same(*arrays: np.ndarray) -> bool:
    dt = arrays[0].dtype
    return dt in (np.float32, np.float64) and all(a.dtype == dt for a in arrays)


def _fast_binary(op: RelayOp, vals, out, ws, opts):
    uf = _BINARY_UFUNCS[op.RELAY_NAME]
    a, b = vals
    if a.dtype != b.dtype or out.dtype != a.dtype or a.dtype == np.bool_:
        return None
    if np.broadcast_shapes(a.shape, b.shape) != out.shape:
        return None
    # One ufunc call, as the reference's _ufunc_into does when out has the result dtype.
    return [("elementwise", functools.partial(uf, a, b, out=out))]


def _fast_relu(op, vals, out, ws, opts):
    (x,) = vals
    if not float_same(x, out) or x.shape != out.shape:
        return None
    return [("elementwise", functools.partial(np.maximum, x, np.zeros((), x.dtype), out=out))]


def _fast_clip(op, vals, out, ws, opts):
    (x,) = vals
    if not float_same(x, out) or x.shape != out.shape:
        return None
    a = op.attrs
    lo = np.asarray(a["a_min"], dtype=x.dtype)
    hi = np.asarray(a["a_max"], dtype=x.dtype)
    # The reference computes minimum(maximum(x, lo), hi): the same two roundings-free ops.
    return [
        ("elementwise", functools.partial(np.maximum, x, lo, out=out)),
        ("elementwise", functools.partial(np.minimum, out, hi, out=out)),
    ]


def fast_global_avg_pool(op, vals, out, ws, opts):
    (x,) = vals
    a = op.attrs
    if a["layout"] != "NCHW" or (a["out_layout"] or "NCHW") != "NCHW":
        return None
    if not float_same(x, out) or x.ndim != 4:
        return None
    return [("pool", mean_into(x, (2, 3), out))]


def mean_into(x: np.ndarray, axis: tuple[int, ...], out: np.ndarray) -> Thunk:
    """``np.mean(x, axis, keepdims=True, dtype=x.dtype, out=out)`` with the same bits (a sum
    into ``out``, then a division by the count in float64, as numpy's mean divides) but
    without the arrays ``np.mean`` makes on every call for the count: nothing is allocated
    while it runs."""
    count = np.array(float(np.prod([x.shape[a] for a in axis])), np.float64)

    def run() -> None:
        np.add.reduce(x, axis=axis, dtype=x.dtype, out=out, keepdims=True)
        np.true_divide(out, count, out=out, casting="unsafe")

    return run


# Unary float ops and reductions with ``out=``: the reference kernels compute them as fresh
# arrays copied into the destination (and numpy's helpers make small arrays on every call);
# these give the same bits writing the destination only, so a run allocates nothing.

_UNARY_UFUNCS: dict[str, tuple[np.ufunc, ...]] = {
    "exp": (np.exp,), "log": (np.log,), "sqrt": (np.sqrt,), "tanh": (np.tanh,),
    "sin": (np.sin,), "cos": (np.cos,), "tan": (np.tan,), "atan": (np.arctan,),
    "log2": (np.log2,), "log10": (np.log10,), "negative": (np.negative,), "abs": (np.absolute,),
    "rsqrt": (np.sqrt, np.reciprocal),  # the reference's reciprocal(sqrt(x))
}  # fmt: skip


def _fast_unary(op, vals, out, ws, opts):
    (x,) = vals
    if not float_same(x, out) or x.shape != out.shape:
        return None
    first, *rest = _UNARY_UFUNCS[op.RELAY_NAME]

    def run() -> None:
        with np.errstate(all="ignore"):
            first(x, out=out)
            for uf in rest:
                uf(out, out=out)

    return [("elementwise", run)]


def _fast_erf(op, vals, out, ws, opts):
    from xrelay.kernels import elementwise

    (x,) = vals
    if not float_same(x, out) or x.shape != out.shape:
        return None
    elementwise._erf(np.zeros(1, x.dtype))  # compiles the numba ufunc the reference uses
    uf = elementwise._ERF
    if not isinstance(uf, np.ufunc) and not hasattr(uf, "ufunc"):
        return None
    return [("elementwise", functools.partial(uf, x, out=out))]


def _fast_sigmoid(op, vals, out, ws, opts):
    """The reference's ``where(x >= 0, 1 / (1 + e), e / (1 + e))`` with ``e = exp(-|x|)``,
    the same operations chunk by chunk: ``e`` and the sign live in one chunk of the planned
    workspace (``runtime.native.workspace.elementwise_scratch_bytes``), the rest in ``out``."""
    (x,) = vals
    need = elementwise_scratch_bytes(op)
    if not float_same(x, out) or x.shape != out.shape or not (x.flags.c_contiguous and out.flags.c_contiguous):
        return None
    if not need or ws is None or ws.nbytes < need:
        return None
    n = min(ELEMENTWISE_CHUNK, max(1, x.size))
    e = ws[: n * x.dtype.itemsize].view(x.dtype)
    negative = ws[n * x.dtype.itemsize : n * x.dtype.itemsize + n].view(np.bool_)
    xf, of = x.reshape(-1), out.reshape(-1)
    zero, one = np.zeros((), x.dtype), np.ones((), x.dtype)
    pieces = [(xf[a : a + n], of[a : a + n], e[: min(n, x.size - a)], negative[: min(n, x.size - a)])
              for a in range(0, x.size, n)]  # fmt: skip

    def run() -> None:
        with np.errstate(all="ignore"):
            for xs, os_, es, ms in pieces:
                np.less(xs, zero, out=ms)
                np.absolute(xs, out=es)
                np.negative(es, out=es)
                np.exp(es, out=es)
                np.add(es, one, out=os_)
                np.divide(es, os_, out=es)
                np.divide(one, os_, out=os_)
                np.copyto(os_, es, where=ms)

    return [("elementwise", run)]


def _fast_softmax(op, vals, out, ws, opts):
    """The reference's ``e = exp(x - max(x)); e / sum(e)`` along the axis, computed in
    ``out`` with the maximum and then the sum in the planned workspace (same bits)."""
    (x,) = vals
    need = elementwise_scratch_bytes(op)
    if not float_same(x, out) or x.shape != out.shape or np.shares_memory(x, out):
        return None
    if not need or ws is None or ws.nbytes < need:
        return None
    ax = op.attrs["axis"] % x.ndim
    kept = tuple(1 if i == ax else d for i, d in enumerate(x.shape))
    m = ws[: int(np.prod(kept)) * x.dtype.itemsize].view(x.dtype).reshape(kept)

    def run() -> None:
        with np.errstate(all="ignore"):
            np.maximum.reduce(x, axis=ax, keepdims=True, out=m)
            np.subtract(x, m, out=out)
            np.exp(out, out=out)
            np.add.reduce(out, axis=ax, keepdims=True, out=m)
            np.divide(out, m, out=out)

    return [("other", run)]


def _fast_l2_normalize(op, vals, out, ws, opts):
    """``x / sqrt(max(sum(x * x over the axes), eps))``: the sums of squares by ``einsum``
    (no temporary of ``x``'s size, and a row as short as Swin V2's 10 head dims costs no
    per-row reduction call: 0.13 ms where ``multiply`` then ``np.add.reduce`` took 0.56 for
    245,760 values), the norms in place in the planned workspace, one broadcast division.
    The sums' order is ``einsum``'s, not the reference's pairwise ``sum``: the last bits may
    differ."""
    (x,) = vals
    need = elementwise_scratch_bytes(op)
    if not float_same(x, out) or x.shape != out.shape or np.shares_memory(x, out):
        return None
    if not need or ws is None or ws.nbytes < need or x.ndim > 26 or x.size == 0:
        return None
    axes = op.attrs.get("axis")
    reduced = sorted({a % x.ndim for a in axes}) if axes else list(range(x.ndim))
    letters = "abcdefghijklmnopqrstuvwxyz"[: x.ndim]
    kept_letters = "".join(c for i, c in enumerate(letters) if i not in reduced)
    kept = tuple(1 if i in reduced else d for i, d in enumerate(x.shape))
    m = ws[: int(np.prod(kept)) * x.dtype.itemsize].view(x.dtype).reshape(kept)
    flat = m.reshape(tuple(d for i, d in enumerate(x.shape) if i not in reduced))
    spec = f"{letters},{letters}->{kept_letters}"
    eps = np.array(op.attrs["eps"], x.dtype)  # (made once: numpy boxes a scalar per call)

    def run() -> None:
        with np.errstate(all="ignore"):
            np.einsum(spec, x, x, out=flat)
            np.maximum(m, eps, out=m)
            np.sqrt(m, out=m)
            np.divide(x, m, out=out)

    return [("other", run)]


def _fast_where(op, vals, out, ws, opts):
    """``where(cond, x, y)`` with a bool condition: ``y``, then ``x`` where ``cond``
    (selection, so the same values as ``np.where``)."""
    cond, x, y = vals
    if cond.dtype != np.bool_ or x.dtype != out.dtype or y.dtype != out.dtype:
        return None
    if np.shares_memory(out, cond) or (np.shares_memory(out, y) and np.shares_memory(out, x)):
        return None
    if not np.shares_memory(out, x):

        def run() -> None:
            np.copyto(out, y)
            np.copyto(out, x, where=cond)

        return [("elementwise", run)]
    # written into x's buffer: y where the condition is false (negated in the workspace)
    need = elementwise_scratch_bytes(op)
    same = x.shape == out.shape and x.strides == out.strides and x.ctypes.data == out.ctypes.data
    if not same or not need or ws is None or ws.nbytes < need:
        return None
    negated = ws[: cond.size].view(np.bool_).reshape(cond.shape)

    def run_in_place() -> None:
        np.logical_not(cond, out=negated)
        np.copyto(out, y, where=negated)

    return [("elementwise", run_in_place)]


_PLAIN = (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, np.float16, np.float32, np.float64)  # fmt: skip


_COMPARISONS = {
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less,
    "less_equal": np.less_equal, "greater": np.greater, "greater_equal": np.greater_equal,
}  # fmt: skip


def _fast_compare(op, vals, out, ws, opts):
    a, b = vals
    if out.dtype != np.bool_ or a.dtype != b.dtype:
        return None
    return [("elementwise", functools.partial(_COMPARISONS[op.RELAY_NAME], a, b, out=out))]


def _fast_divide(op, vals, out, ws, opts):
    """Float ``divide`` (integers truncate, which numpy's division does not)."""
    a, b = vals
    if not float_same(a, b, out):
        return None
    return [("elementwise", functools.partial(np.true_divide, a, b, out=out))]


def _fast_cast(op, vals, out, ws, opts):
    """The casts where the reference is numpy's own conversion (to a float or to bool, or an
    integer widening): ``np.copyto`` into ``out``. Float to integer (through int64, wrapping)
    and the narrow types keep the reference kernel."""
    (x,) = vals
    src, dst = x.dtype, out.dtype
    if x.shape != out.shape or src.type not in _PLAIN or dst.type not in _PLAIN:
        return None
    if not (dst.kind in "fb" or (src.kind in "iub" and dst.kind in "iu" and dst.itemsize >= src.itemsize
                                 and (src.kind == dst.kind or src.kind == "b"))):
        return None
    return [("elementwise", functools.partial(np.copyto, out, x, casting="unsafe"))]


def _fast_logical(op, vals, out, ws, opts):
    if out.dtype != np.bool_ or any(v.dtype != np.bool_ for v in vals):
        return None
    uf = {"logical_and": np.logical_and, "logical_or": np.logical_or, "logical_not": np.logical_not}[op.RELAY_NAME]
    return [("elementwise", functools.partial(uf, *vals, out=out))]


def _fast_take(op, vals, out, ws, opts):
    """``take`` with ``batch_dims = 0`` and an axis: ``np.take`` into ``out``. ``fast``
    (indices assumed valid) takes them modulo the axis like ``wrap``: the same elements for
    every valid index, without the copy numpy's checking mode makes of ``out``."""
    x, indices = vals
    a = op.attrs
    if a.get("batch_dims", 0) != 0 or a.get("axis") is None or indices.dtype.kind not in "iu":
        return None
    if x.dtype != out.dtype or np.shares_memory(out, x):
        return None
    mode = {"clip": "clip", "wrap": "wrap", "fast": "wrap"}.get(a.get("mode", "clip"))
    if mode is None:
        return None
    if not (indices.flags.writeable and indices.flags.c_contiguous and indices.dtype == np.intp):
        # numpy copies such indices on every call: a constant is converted once, here
        if not (len(opts.fixed) > 1 and opts.fixed[1]):
            return None
        indices = np.array(indices, dtype=np.intp, order="C")
    ax = a["axis"] % x.ndim
    return [("other", functools.partial(np.take, x, indices, axis=ax, out=out, mode=mode))]


def _fast_gather_nd(op, vals, out, ws, opts):
    """``gather_nd`` as one ``np.take`` of flat positions into ``out``: with constant
    indices (an attention mask's expansion, say) the positions are computed once here,
    checked like the reference checks them; with indices the model computes (RoBERTa's
    position ids) they are computed each run in the planned workspace
    (``_computed_gather_nd``)."""
    from xrelay.kernels import KERNELS as reference

    x, indices = vals
    if x.dtype != out.dtype or not x.flags.c_contiguous or not out.flags.c_contiguous or np.shares_memory(out, x):
        return None
    if not (len(opts.fixed) > 1 and opts.fixed[1]):
        return _computed_gather_nd(op, x, indices, out, ws)
    positions = np.arange(x.size, dtype=np.int64).reshape(x.shape)
    try:  # the reference kernel on the positions: the same elements, the same checks
        flat = reference["gather_nd"](positions, indices, **op.attrs)
    except (ValueError, IndexError):
        return None  # the reference kernel reports it when the step runs
    flat = np.ascontiguousarray(flat.reshape(-1))
    if flat.size != out.size:
        return None
    return [("other", functools.partial(np.take, x.reshape(-1), flat, out=out.reshape(-1), mode="wrap"))]


def _fast_scatter_nd(op, vals, out, ws, opts):
    """``scatter_nd`` with constant indices and ``mode="update"`` (torch's slice assignment,
    ``x[..., :k] = y``, exports as ScatterND; Funnel's relative attention): the flat
    position of every update element found once, with the reference's checks (each index in
    ``[-dim, dim)``, negative ones wrapped); each run copies ``data`` into ``out`` (unless it
    is ``out``) and puts the updates there in order (a repeated position: the last wins,
    as the reference's assignment)."""
    data, indices, updates = vals
    if op.attrs.get("mode", "update") != "update" or not (len(opts.fixed) > 1 and opts.fixed[1]):
        return None
    if indices.dtype.kind not in "iu" or indices.ndim < 1 or not 0 < indices.shape[0] <= data.ndim:
        return None
    m = indices.shape[0]
    if data.dtype != out.dtype or updates.dtype != out.dtype or updates.shape != (*indices.shape[1:], *data.shape[m:]):
        return None
    if not all(a.flags.c_contiguous for a in (data, updates, out)):
        return None
    if np.shares_memory(updates, out) or (np.shares_memory(data, out) and data is not out):
        return None  # (the planner's in-place result is the data array itself)
    idx = indices.reshape(m, -1).astype(np.int64)
    dims = np.array(data.shape[:m], np.int64)[:, None]
    if np.any(idx < -dims) or np.any(idx >= dims):
        return None  # the reference kernel reports it when the step runs
    idx = np.where(idx < 0, idx + dims, idx)
    rest = math.prod(data.shape[m:])
    rows = np.ravel_multi_index(tuple(idx), data.shape[:m])
    positions = np.ascontiguousarray((rows[:, None] * rest + np.arange(rest)[None, :]).reshape(-1))
    opts.derived.append(positions)
    flat_out, flat_updates = out.reshape(-1), updates.reshape(-1)

    def run() -> None:
        if data is not out:
            np.copyto(out, data)
        np.put(flat_out, positions, flat_updates)

    return [("other", run)]


_GATHER_INDEX_TYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32)
"""Index types whose every value is an int64 (uint64 keeps the reference kernel)."""


def _computed_gather_nd(op, x, indices, out, ws):
    """``gather_nd`` of indices computed at run time, allocating nothing: per component of
    the index tuples, the reference's checks (every index in ``[-dim, dim)``, from the
    component's least and greatest value) and its wrap of negative ones, the component
    times its row stride added into the flat positions, all in the workspace
    (``gather_nd_scratch_bytes``); then one ``np.take`` of whole rows into ``out``."""
    m = indices.shape[0] if indices.ndim else 0
    b = op.attrs.get("batch_dims", 0)
    if indices.dtype.type not in _GATHER_INDEX_TYPES or m == 0 or b + m > x.ndim:
        return None
    if indices.shape[1 : 1 + b] != x.shape[:b]:
        return None  # the reference kernel reports it
    n = indices.size // m
    rest = math.prod(x.shape[b + m :])
    need = gather_nd_scratch_bytes(op)
    if out.size != n * rest or not need or ws is None or ws.nbytes < need:
        return None
    if n == 0:
        return [("other", lambda: None)]
    pos = ws[: 8 * n].view(np.int64)
    comp = ws[8 * n : 16 * n].view(np.int64)
    negative = ws[16 * n : 17 * n].view(np.bool_)
    bounds = ws[17 * n : 17 * n + 16]
    least, most = bounds[:8].view(np.int64).reshape(()), bounds[8:].view(np.int64).reshape(())
    dims = x.shape[b : b + m]
    block = math.prod(dims)  # rows of one batch entry
    batches = math.prod(x.shape[:b])
    per_batch = n // max(1, batches)
    # 0-d constants made now: a Python number in a ufunc call would become an array each run
    zero = np.zeros((), np.int64)
    sizes = [np.array(d, np.int64) for d in dims]
    steps = [np.array(math.prod(dims[k + 1 :]), np.int64) for k in range(m)]
    offsets = [(pos[j * per_batch : (j + 1) * per_batch], np.array(j * block, np.int64)) for j in range(1, batches)]
    rows = x.reshape(batches * block, rest)
    idx = indices.reshape(m, n)
    dest = out.reshape(n, rest)

    def run() -> None:
        np.copyto(pos, zero)
        for k in range(m):
            np.copyto(comp, idx[k], casting="unsafe")
            np.minimum.reduce(comp, out=least)
            np.maximum.reduce(comp, out=most)
            if int(least) < -dims[k] or int(most) >= dims[k]:
                raise IndexError(f"gather_nd: an index is out of range for data {x.shape}")
            np.less(comp, zero, out=negative)
            np.add(comp, sizes[k], out=comp, where=negative)
            np.multiply(comp, steps[k], out=comp)
            np.add(pos, comp, out=pos)
        for part, offset in offsets:
            np.add(part, offset, out=part)
        np.take(rows, pos, axis=0, out=dest, mode="wrap")  # (positions checked above)

    return [("other", run)]


def _fast_pad(op, vals, out, ws, opts):
    """``nn.pad`` without negative widths: constant mode copies the pad value over ``out``,
    then the data into its interior; ``edge`` and ``reflect`` (TResNet's anti-aliased
    downsampling) copy every region of ``out`` (the interior, each border, each corner)
    from the data, repeated or mirrored (copies only, so the reference's values)."""
    x, value = vals
    widths = [tuple(w) for w in op.attrs["pad_width"]]
    mode = op.attrs.get("pad_mode", "constant")
    if x.dtype != out.dtype:
        return None
    if len(widths) != x.ndim or any(a < 0 or b < 0 for a, b in widths) or np.shares_memory(out, x):
        return None
    interior = out[tuple(slice(a, a + n) for (a, _), n in zip(widths, x.shape))]
    if mode in ("edge", "reflect"):
        if any(n == 0 or (mode == "reflect" and max(a, b) > n - 1) for (a, b), n in zip(widths, x.shape) if a or b):
            return None
        # every region of out (per axis: the border before, the interior, the border after)
        # copied from the data itself, mirrored or repeated (never from out: a copy between
        # two views of one buffer may go through a temporary)
        segments = []
        for (a, b), n in zip(widths, x.shape):
            axis = [(slice(a, a + n), slice(None))]
            if a:
                axis.append((slice(0, a), slice(0, 1) if mode == "edge" else slice(a, 0, -1)))
            if b:
                axis.append((slice(a + n, a + n + b), slice(n - 1, n) if mode == "edge" else slice(n - 2, n - 2 - b if n - 2 - b >= 0 else None, -1)))
            segments.append(axis)
        copies = [(out[tuple(d for d, _ in region)], x[tuple(s for _, s in region)]) for region in itertools.product(*segments)]

        def run_copies() -> None:
            for dst, src in copies:
                np.copyto(dst, src)

        return [("other", run_copies)]
    if mode != "constant":
        return None
    value = np.asarray(value)
    if value.shape != () or value.dtype != out.dtype:
        return None

    def run() -> None:
        np.copyto(out, value)
        np.copyto(interior, x)

    return [("other", run)]


def _fast_resize(op, vals, out, ws, opts):
    """A linear or cubic ``image.resize2d``: ``_fast_resize_matmul``. A nearest-neighbour one
    copies: by whole factors whose output pixel ``o`` reads input pixel ``o // factor``
    along H and W (``nn.Upsample(scale_factor=k)`` as torch exports it: asymmetric
    coordinates, floor), one broadcasting copy into ``out`` seen with each of H and W split
    into (input size, factor); by any other sizes (GhostNetV2's 3 -> 7, a downscale, half-pixel
    rounding) one ``np.take`` over H and W seen as one axis, with the flat source index of
    every output pixel computed once. No temporary either way; the reference's values (a
    nearest resize copies)."""
    from xrelay.dialects.relay.ops import parse_layout
    from xrelay.kernels.spatial import nearest_source_indices, nearest_whole_factors

    (x,) = vals
    a = op.attrs
    if a.get("method") in ("linear", "cubic"):
        return _fast_resize_matmul(op, vals, out, ws, opts)
    if a.get("method") != "nearest_neighbor" or x.dtype != out.dtype or x.ndim != out.ndim:
        return None
    mode = a.get("coordinate_transformation_mode", "half_pixel")
    if mode == "tf_crop_and_resize" or not out.flags.c_contiguous or np.shares_memory(x, out):
        return None
    letters = [ch for ch, _ in parse_layout(a.get("layout", "NCHW"))]
    if "H" not in letters or "W" not in letters or len(letters) != x.ndim:
        return None
    axes = (letters.index("H"), letters.index("W"))
    if any(x.shape[i] != out.shape[i] for i in range(x.ndim) if i not in axes):
        return None
    factors = nearest_whole_factors(a, x.shape, out.shape, axes)
    if factors is not None:
        out_shape: list[int] = []
        for i, d in enumerate(x.shape):
            out_shape += [d, factors[axes.index(i)]] if i in axes else [d]
        # (views both: a reshape of the contiguous destination, size-1 axes of the source)
        dest = out.reshape(out_shape)
        source = np.expand_dims(x, tuple(ax + 1 + k for k, ax in enumerate(sorted(axes))))
        return [("other", functools.partial(np.copyto, dest, source))]
    h, w = axes
    if w != h + 1 or not x.flags.c_contiguous:
        return None
    roi = list(a.get("roi") or [0.0] * 4)
    rounding = a.get("rounding_method", "")
    sources = [nearest_source_indices(x.shape[ax], out.shape[ax], mode, roi[k], roi[k + 2], rounding)
               for k, ax in enumerate(axes)]  # fmt: skip
    # H and W as one axis of both arrays (views); "clip": take's unbuffered mode (the indices
    # are in range: the reference's own choice)
    flat = (sources[0][:, None] * x.shape[w] + sources[1][None, :]).reshape(-1).astype(np.intp)
    opts.derived.append(flat)
    src = x.reshape(*x.shape[:h], -1, *x.shape[w + 1 :])
    dest = out.reshape(*out.shape[:h], -1, *out.shape[w + 1 :])
    return [("other", functools.partial(np.take, src, flat, axis=h, out=dest, mode="clip"))]


GRID_METHODS = {"nearest": 0, "bilinear": 1}
GRID_PADDING = {"zeros": 0, "border": 1, "reflection": 2}


def _fast_grid_sample(op, vals, out, ws, opts):
    """A 2-D nearest or bilinear ``image.grid_sample`` (a spatial transformer's, an optical
    flow's warp): the C kernel (``native_template.h``), the reference's arithmetic per
    output element, parts of the output rows on the pool's threads; no temporary (the numpy
    reference held 189 arrays, 1.8 MB for a 3 x 64 x 64 image). Bicubic and 3-D sampling
    keep the reference kernel."""
    x, grid = vals
    a = op.attrs
    method, padding = GRID_METHODS.get(a.get("method")), GRID_PADDING.get(a.get("padding_mode"))
    if (not (opts.use_c_kernels and loop_kernels_available()) or method is None or padding is None
            or a.get("layout") != "NCHW"
            or x.ndim != 4 or x.dtype not in (np.float32, np.float64) or grid.dtype != x.dtype
            or out.dtype != x.dtype or not (x.flags.c_contiguous and grid.flags.c_contiguous
                                            and out.flags.c_contiguous)):  # fmt: skip
        return None
    align = int(bool(a.get("align_corners")))
    ranges = even_ranges(out.shape[0] * out.shape[2], chunk_count(opts))
    tasks = [bind_kernel("grid_sample", x, grid, out, method, padding, align, lo, hi) for lo, hi in ranges]
    return [("other", fixed_split(opts, tasks))]


def _resize_matrix(op, n_in: int, n_out: int, axis: str) -> np.ndarray:
    """The ``n_out x n_in`` interpolation matrix of ``op`` along ``axis`` (``"H"`` or
    ``"W"``), computed by the reference kernel itself on a stack of unit images (float64,
    as it computes): column ``i`` is its output for an input that is 1 at index ``i`` and 0
    elsewhere, so its weights, its edge clamping and ``cubic_exclude``. The other axis has
    size 1 both sides (an identity: every mode's weights sum to 1 on one clamped index)."""
    from xrelay.kernels import KERNELS as reference

    eye = np.eye(n_in)
    basis, size = (eye.reshape(1, n_in, n_in, 1), [n_out, 1]) if axis == "H" else (eye.reshape(1, n_in, 1, n_in), [1, n_out])
    attrs = dict(op.attrs, size=size, layout="NCHW", out_dtype="")
    return reference["image.resize2d"](basis, **attrs).reshape(n_in, n_out).T


TAPS = 8
"""The most taps per output index a resize pass runs in C (``_resize_taps``): a linear
resize has 2, a cubic one 4 (a downscale too: the reference has no anti-aliasing); a wider
band keeps the matmuls."""


TAPS_ELEMENTS = 16384
"""The fewest output elements a resize runs as ``resize_pass`` (below, the matmuls)."""


def _resize_taps(a: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The band of each row of the interpolation matrix ``a`` (``n_out x n_in``): ``(first,
    w)`` with ``w[j, t] = a[j, first[j] + t]`` for ``t < k``, ``k`` the widest band (a
    narrower row's window reads the matrix's zeros beside it), or None when a band is wider
    than ``TAPS``."""
    n_out, n_in = a.shape
    nz = a != 0
    lo = np.where(nz.any(1), nz.argmax(1), 0)
    hi = np.where(nz.any(1), n_in - 1 - nz[:, ::-1].argmax(1), 0)
    k = int(max(1, (hi - lo + 1).max()))
    if k > TAPS or k > n_in:
        return None
    first = np.minimum(lo, n_in - k).astype(np.int64)
    w = a[np.arange(n_out)[:, None], first[:, None] + np.arange(k)[None, :]]
    return first, w


def _resize_taps_thunks(x, out, ws, layout, a_h, a_w, opts):
    """A linear or cubic resize as passes of the C kernel ``resize_pass`` over the bands of
    its interpolation matrices (2 or 4 taps where the matmuls multiplied whole rows of zeros:
    GLPN's 56 -> 112 -> 224 upsampling of 64 channels took 10.7 ms as matmuls), along W into
    the workspace then along H into ``out``, each pass's rows in parts on the pool (channels
    first: the W pass stays the matmul); None without the C kernels or for a wider band."""
    if not (opts.use_c_kernels and loop_kernels_available()) or x.dtype not in (np.float32, np.float64):
        return None
    if out.size < TAPS_ELEMENTS:
        return None  # (the matmuls of a small image cost less than the pool's parts)
    band_h = _resize_taps(a_h)
    band_w = _resize_taps(a_w) if layout != "NCHW" else None  # (channels first: a matmul)
    if band_h is None or (band_w is None and layout != "NCHW"):
        return None
    first_h, w_h = band_h[0], band_h[1].astype(x.dtype)
    n = x.shape[0]
    steps = []
    if layout == "NCHW":
        # along W the taps would step one element at a time (no inner run to vectorize): the
        # matmul by the W matrix there, the taps along H (whole rows of W_out)
        _, c, h_in, w_in = x.shape
        h_out, w_out = out.shape[2:]
        tmp = ws[: n * c * h_in * w_out * x.itemsize].view(x.dtype)
        a_wt = np.ascontiguousarray(a_w.T, dtype=x.dtype)
        opts.derived += [first_h, w_h, a_wt]
        steps.append(("other", functools.partial(np.matmul, x, a_wt, out=tmp.reshape(n, c, h_in, w_out))))
        passes = [(tmp.reshape(n * c, h_in, w_out), out.reshape(n * c, h_out, w_out), w_h, first_h)]
    else:
        _, h_in, w_in, c = x.shape
        h_out, w_out = out.shape[1:3]
        tmp = ws[: n * h_in * w_out * c * x.itemsize].view(x.dtype)
        first_w, w_w = band_w[0], band_w[1].astype(x.dtype)
        opts.derived += [first_h, w_h, first_w, w_w]
        passes = [(x.reshape(n * h_in, w_in, c), tmp.reshape(n * h_in, w_out, c), w_w, first_w),
                  (tmp.reshape(n, h_in, w_out * c), out.reshape(n, h_out, w_out * c), w_h, first_h)]
    for src, dst, w, first in passes:
        rows = dst.shape[0] * dst.shape[1]
        tasks = [bind_kernel("resize_pass", src, dst, w, first, lo, hi) for lo, hi in even_ranges(rows, chunk_count(opts))]
        steps.append(("other", fixed_split(opts, tasks)))
    return steps


def _fast_resize_matmul(op, vals, out, ws, opts):
    """A linear or cubic ``image.resize2d`` (CrossViT's bicubic 240 -> 224) as the linear map
    it is: per image and channel ``out = A_h . x . A_w^T`` with the constant interpolation
    matrices of ``_resize_matrix`` (the reference's weights), as two ``np.matmul`` — into
    the planned workspace (``resize_scratch_bytes``: ``x . A_w^T``, ``N x C x H_in x W_out``
    in NCHW; ``A_w . x`` per row, ``N x H_in x W_out x C`` in NHWC), then into ``out``.
    Nothing is allocated per run; float32 products where the reference rounds float64 sums
    once (1e-7 relative apart)."""
    (x,) = vals
    layout = op.attrs.get("layout", "NCHW")
    need = resize_scratch_bytes(op)
    if not need or ws is None or ws.nbytes < need or x.dtype != out.dtype or x.ndim != 4:
        return None
    if not (x.flags.c_contiguous and out.flags.c_contiguous) or np.shares_memory(x, out):
        return None
    h, w = layout.index("H"), layout.index("W")
    (h_in, w_in), (h_out, w_out) = (x.shape[h], x.shape[w]), (out.shape[h], out.shape[w])
    try:
        a_h = _resize_matrix(op, h_in, h_out, "H")
        a_w = _resize_matrix(op, w_in, w_out, "W")
    except ValueError:
        return None  # the reference kernel reports it when the step runs
    taps = _resize_taps_thunks(x, out, ws, layout, a_h, a_w, opts)
    if taps is not None:
        return taps
    # derived constants (like the Winograd weights): made here once, held by the function
    a_h = np.ascontiguousarray(a_h, dtype=x.dtype)
    a_w = np.ascontiguousarray(a_w.T if layout == "NCHW" else a_w, dtype=x.dtype)
    opts.derived += [a_h, a_w]
    n = x.shape[0]
    if layout == "NCHW":
        c = x.shape[1]
        tmp = ws[: n * c * h_in * w_out * x.itemsize].view(x.dtype).reshape(n, c, h_in, w_out)

        def run() -> None:
            np.matmul(x, a_w, out=tmp)  # (a_w: W_in x W_out here)
            np.matmul(a_h, tmp, out=out)

    else:
        c = x.shape[3]
        tmp = ws[: n * h_in * w_out * c * x.itemsize].view(x.dtype).reshape(n, h_in, w_out, c)
        rows_in, rows_out = tmp.reshape(n, h_in, w_out * c), out.reshape(n, h_out, w_out * c)

        def run() -> None:
            np.matmul(a_w, x, out=tmp)
            np.matmul(a_h, rows_in, out=rows_out)

    return [("other", run)]


def _fast_dft(op, vals, out, ws, opts):
    """Relay ``dft`` (along the last axis; FNet's token mixing) through pocketFFT, numpy's
    own FFT, in the planned workspace (``dft_scratch_bytes``): the real and imaginary parts
    interleaved into a complex signal, transformed into a complex spectrum beside it, then
    rounded into ``out``'s two arrays; nothing is allocated. The transform runs in the
    precision the reference kernel's ``np.fft`` runs it in, so both give the same bits: a
    float32 signal forward in double precision (numpy passes its ufunc the integer factor 1,
    which selects the complex128 loop), inverse in single precision (the factor 1/n, a
    float); ONNX's DFT tests hold outputs computed that way to 1e-7. ``None`` without
    numpy's pocketFFT ufuncs."""
    umath = getattr(np.fft, "_pocketfft_umath", None)
    need = dft_scratch_bytes(op)
    if umath is None or not need or ws is None or ws.nbytes < need or not isinstance(out, tuple):
        return None
    re, im = vals
    inverse = bool(op.attrs.get("inverse", False))
    cdt = np.complex64 if inverse and re.dtype == np.float32 else np.complex128
    half = need // 2
    signal = ws[: re.size * cdt().itemsize].view(cdt).reshape(re.shape)
    spectrum = ws[half : half + re.size * cdt().itemsize].view(cdt).reshape(re.shape)
    transform = umath.ifft if inverse else umath.fft
    # (the inverse divides by the length, as numpy's and TOPI's)
    factor = np.array(1.0 / re.shape[-1] if inverse else 1.0, signal.real.dtype)
    out_re, out_im = out

    def run() -> None:
        np.copyto(signal.real, re)
        np.copyto(signal.imag, im)
        transform(signal, factor, out=spectrum)
        np.copyto(out_re, spectrum.real)
        np.copyto(out_im, spectrum.imag)

    return [("other", run)]


def _fast_split(op, vals, out, ws, opts):
    """``split``: its parts as views of the operand, found once (``np.split`` computes its
    split points in an array of its own on every call), each copied into its destination."""
    (x,) = vals
    if not isinstance(out, tuple) or any(o.dtype != x.dtype for o in out):
        return None
    a = op.attrs
    sections = a["indices_or_sections"]
    axis = int(a["axis"]) % x.ndim
    points = sections if isinstance(sections, (int, np.integer)) else [int(i) for i in sections]
    parts = np.split(x, points, axis=axis)
    if len(parts) != len(out) or any(p.shape != o.shape or np.shares_memory(p, o) for p, o in zip(parts, out)):
        return None
    pairs = list(zip(out, parts))

    def run() -> None:
        for o, p in pairs:
            np.copyto(o, p)

    return [("copy", run)]


def _fast_scan(op, vals, out, ws, opts):
    """``cumsum``/``cumprod`` along one axis (the position ids RoBERTa and OPT count from the
    attention mask): the reference's ``accumulate`` straight into ``out``; exclusive scans
    start from the identity and accumulate all but the last element into the rest."""
    (x,) = vals
    a = op.attrs
    ufunc = np.add if op.RELAY_NAME == "cumsum" else np.multiply
    if a.get("axis") is None or x.dtype != out.dtype or x.shape != out.shape or np.shares_memory(x, out):
        return None
    if a.get("dtype") not in (None, "") and numpy_dtype(a["dtype"]) != out.dtype:
        return None
    axis = a["axis"] % x.ndim
    if not a.get("exclusive") or x.shape[axis] == 0:
        return [("other", functools.partial(ufunc.accumulate, x, axis=axis, dtype=out.dtype, out=out))]
    first = (slice(None),) * axis + (slice(0, 1),)
    head, rest = out[first], out[(slice(None),) * axis + (slice(1, None),)]
    x_head = x[(slice(None),) * axis + (slice(0, x.shape[axis] - 1),)]

    def run() -> None:
        head.fill(ufunc.identity)
        ufunc.accumulate(x_head, axis=axis, dtype=out.dtype, out=rest)

    return [("other", run)]


def _fast_reduce(op, vals, out, ws, opts):
    """``sum``/``mean``/``max``/``min`` of floats: numpy's reduction into a keep-dims view of
    ``out`` (a mean divides by the count in float64 as ``np.mean`` does)."""
    from xrelay.dialects.relay.ops import reduce_axes

    (x,) = vals
    if not float_same(x, out):
        return None
    a = op.attrs
    try:
        axes = reduce_axes(x.ndim, a.get("axis"), bool(a.get("exclude", False)))
    except ValueError:
        return None
    if not axes or any(x.shape[i] == 0 for i in axes):
        return None
    kept = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    if out.size != int(np.prod(kept)) or not out.flags.c_contiguous:
        return None
    view = out.reshape(kept)
    name = op.RELAY_NAME
    if name == "mean":
        return [("other", mean_into(x, axes, view))]
    uf = {"sum": np.add, "max": np.maximum, "min": np.minimum}[name]
    return [("other", functools.partial(uf.reduce, x, axis=axes, out=view, keepdims=True))]


def valid_range(n_out: int, n_in: int, tap: int, stride: int, pad_before: int) -> tuple[int, int]:
    """Output indices ``o`` with ``0 <= o * stride + tap - pad_before < n_in``."""
    lo = max(0, -(-(pad_before - tap) // stride))
    hi = min(n_out, -(-(n_in + pad_before - tap) // stride))
    return lo, max(lo, hi)


def padded_windows(n_out: int, n_in: int, k: int, stride: int, dil: int, pad_before: int) -> list[tuple[int, int]]:
    """The ``[start, stop)`` runs of output positions whose window has a tap in the padding
    (outside ``[0, n_in)``): computed when the step is made, so running it allocates nothing."""
    pos = np.arange(n_out)[:, None] * stride - pad_before + np.arange(k)[None, :] * dil
    mask = ((pos < 0) | (pos >= n_in)).any(axis=1)
    edges = np.flatnonzero(np.diff(np.concatenate(([0], mask.astype(np.int8), [0]))))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2])]


@functools.cache
def _lowest(dtype: np.dtype) -> np.ndarray:
    """The dtype's lowest value as a 0-d array, made once (numpy would box a scalar operand
    into a new array on every call)."""
    return np.array(np.finfo(dtype).min, dtype)


def pool_padding_floor(
    out: np.ndarray, h_axis: int, rows: list[tuple[int, int]], cols: list[tuple[int, int]]
) -> Callable[[], None]:
    """The step that floors max-pool windows over padding at the dtype's lowest value: TOPI pads
    max pools with it (``tvm::min_value``), so a window wholly in padding gives it, not -inf.
    The views of each run of padded windows are made here, once; the step works in place on
    them and allocates nothing (a boolean index would copy)."""
    low = _lowest(out.dtype)
    views = []
    for axis, runs in ((h_axis, rows), (h_axis + 1, cols)):
        for start, stop in runs:
            idx: list[Any] = [slice(None)] * out.ndim
            idx[axis] = slice(start, stop)
            views.append(out[tuple(idx)])

    def floor() -> None:
        for view in views:
            np.maximum(view, low, out=view)

    return floor


def pool_geometry(op, x, out, layout: str) -> tuple[int, ...] | None:
    """``(kh, kw, sh, sw, dh, dw, pt, pl)`` of a float 2-D pool in ``layout``, else None."""
    a = op.attrs
    if a["layout"] != layout or (a.get("out_layout") or layout) != layout:
        return None
    if not float_same(x, out) or x.ndim != 4:
        return None
    return (*a["pool_size"], *a["strides"], *a["dilation"], a["padding"][0], a["padding"][1])


def fast_max_pool(op, vals, out, ws, opts):
    (x,) = vals
    geometry = pool_geometry(op, x, out, "NCHW")
    if geometry is None:
        return None
    if opts.use_c_kernels and loop_kernels_available() and x.flags.c_contiguous and out.flags.c_contiguous:
        n, c = x.shape[:2]
        parts = chunk_count(opts) if x[0].size >= 2 * _MIN_CHUNK_ELEMENTS else 1
        thunks = []
        for b in range(n):

            def make(c0: int, c1: int, b: int = b) -> Thunk:
                return bind_kernel("max_pool", x[b], out[b], c0, c1, *geometry)

            fine = even_ranges(c, chunk_count(opts, FINE_CHUNKS_PER_THREAD)) if parts > 1 else None
            thunks.append(("pool", split_job(opts, make, even_ranges(c, parts), c, fine)))
        return thunks
    return max_pool_taps(x, out, 2, geometry)


def pool_taps(x: np.ndarray, out: np.ndarray, h_axis: int, geometry: tuple, uf: np.ufunc) -> list[tuple[str, Thunk]]:
    """``out = uf(out, tap)`` for every tap ``(i, j)`` of a 2-D pool in (i, j) order, on the
    valid part of the tap only (H and W are axes ``h_axis`` and ``h_axis + 1`` of ``x`` and
    ``out``, in any layout): the views are made here, running them allocates nothing."""
    kh, kw, sh, sw, dh, dw, pt, pl = geometry
    h, w = x.shape[h_axis : h_axis + 2]
    oh, ow = out.shape[h_axis : h_axis + 2]
    lead = (slice(None),) * h_axis
    thunks: list[tuple[str, Thunk]] = []
    for i in range(kh):
        r0, r1 = valid_range(oh, h, i * dh, sh, pt)
        for j in range(kw):
            c0, c1 = valid_range(ow, w, j * dw, sw, pl)
            if r0 >= r1 or c0 >= c1:
                continue
            y0, x0 = r0 * sh + i * dh - pt, c0 * sw + j * dw - pl
            src = x[(*lead, slice(y0, y0 + (r1 - r0 - 1) * sh + 1, sh), slice(x0, x0 + (c1 - c0 - 1) * sw + 1, sw))]
            dst = out[(*lead, slice(r0, r1), slice(c0, c1))]
            thunks.append(("pool", functools.partial(uf, dst, src, out=dst)))
    return thunks


def max_pool_taps(x: np.ndarray, out: np.ndarray, h_axis: int, geometry: tuple) -> list[tuple[str, Thunk]]:
    """A float max pool with numpy in any layout (H, W at ``h_axis``): the reference pads with
    -inf and folds np.maximum over the taps in this order; skipping the padded positions gives
    the same maxima; windows with padding are then floored like TOPI's."""
    kh, kw, sh, sw, dh, dw, pt, pl = geometry
    h, w = x.shape[h_axis : h_axis + 2]
    oh, ow = out.shape[h_axis : h_axis + 2]
    thunks: list[tuple[str, Thunk]] = [("pool", functools.partial(out.fill, -np.inf))]
    thunks += pool_taps(x, out, h_axis, geometry, np.maximum)
    rows, cols = padded_windows(oh, h, kh, sh, dh, pt), padded_windows(ow, w, kw, sw, dw, pl)
    thunks.append(("pool", pool_padding_floor(out, h_axis, rows, cols)))
    return thunks


def _fast_avg_pool(op, vals, out, ws, opts):
    """Float NCHW ``nn.avg_pool2d``: the reference's sum over the taps in (i, j) order, over
    the valid part of each tap (its padded zeros add nothing), then the division by the
    window counts, made once here."""
    from xrelay.kernels.nn import _window_counts

    (x,) = vals
    geometry = pool_geometry(op, x, out, "NCHW")
    if geometry is None or not out.flags.c_contiguous:
        return None
    kh, kw, sh, sw, dh, dw, pt, pl = geometry
    pb, pr = op.attrs["padding"][2], op.attrs["padding"][3]
    h, w = x.shape[2:]
    oh, ow = out.shape[2:]
    if op.attrs["count_include_pad"]:
        ch = _window_counts(h, kh, sh, dh, pt, -pt, h + pb, oh)
        cw = _window_counts(w, kw, sw, dw, pl, -pl, w + pr, ow)
    else:
        ch = _window_counts(h, kh, sh, dh, pt, 0, h, oh)
        cw = _window_counts(w, kw, sw, dw, pl, 0, w, ow)
    counts = np.maximum(ch[:, None] * cw[None, :], 1).reshape(1, 1, oh, ow).astype(x.dtype)
    thunks: list[tuple[str, Thunk]] = [("pool", functools.partial(out.fill, 0))]
    thunks += pool_taps(x, out, 2, geometry, np.add)
    thunks.append(("pool", functools.partial(np.divide, out, counts, out=out)))
    return thunks


def _conv_geometry(op: RelayOp, x: np.ndarray, w: np.ndarray, out: np.ndarray):
    a = op.attrs
    if a["data_layout"] != "NCHW" or a["kernel_layout"] != "OIHW":
        return None
    if (a["out_layout"] or "NCHW") != "NCHW" or a["out_dtype"] not in ("", None, str(x.dtype)):
        return None
    if not float_same(x, w, out) or x.ndim != 4 or w.ndim != 4:
        return None
    if not out.flags.c_contiguous:
        return None
    return a


# --------------------------------------------------------------------------------------------
# Chunks: how a step is cut for the worker pool
# --------------------------------------------------------------------------------------------

CHUNKS_PER_THREAD = 1
"""Chunks per pool thread for a big kernel's coarse cut. More balance better when a thread
loses its core, but every chunk costs BLAS efficiency and a hand-off; measured on 2 cores,
one chunk per thread gave the best parallel speedup on a quiet machine (ResNet-18 1.5x vs
1.3-1.4x with two)."""

FINE_CHUNKS_PER_THREAD = 4
"""Chunks per pool thread of the fine cut, which the pool measures too and picks when it is
faster (typically while another process holds a core)."""

_MIN_CHUNK_COLUMNS = 256  # output pixels per matmul chunk below which BLAS loses efficiency
_MIN_CHUNK_ROWS = 32  # output channels per matmul chunk (a multiple of the SIMD micro-tile)
_MIN_CHUNK_ELEMENTS = 16384  # elements per chunk of a memory-bound kernel (pool, depthwise)
MIN_CHUNK_MNK = 2_000_000
"""Multiply-adds per matmul chunk, at least. Also a correctness bound: OpenBLAS computes
products of at most 1e6 multiply-adds with its small-matrix kernels, which sum in another
order; above that an element's bits do not depend on how the rows or columns are cut, so
chunked results equal the whole product (the tests check it)."""


def even_ranges(extent: int, parts: int, align: int = 1) -> list[tuple[int, int]]:
    """``extent`` cut into at most ``parts`` non-empty ranges, boundaries multiples of
    ``align`` (deterministic: a function of the arguments only)."""
    parts = max(1, min(parts, extent // max(align, 1) or 1))
    bounds = [min(extent, round(extent * k / parts / align) * align) for k in range(parts + 1)]
    bounds[-1] = extent
    return [(lo, hi) for lo, hi in zip(bounds, bounds[1:]) if hi > lo]


def matmul_ranges(extent: int, parts: int, align: int, per_unit: int) -> list[tuple[int, int]]:
    """``even_ranges`` with every range worth at least ``MIN_CHUNK_MNK`` multiply-adds
    (``per_unit`` for each unit of ``extent``); fewer ranges where needed."""
    while parts > 1:
        ranges = even_ranges(extent, parts, align)
        if min(hi - lo for lo, hi in ranges) * per_unit >= MIN_CHUNK_MNK:
            return ranges
        parts -= 1
    return [(0, extent)]


def chunk_count(opts: Options, per_thread: int = CHUNKS_PER_THREAD) -> int:
    return 1 if opts.pool is None or opts.pool.threads == 1 else opts.pool.threads * per_thread


def _as_operand(v: Any, shape: tuple[int, ...], index: tuple) -> Any:
    if v is _OUT:
        return v
    if v.ndim == 0:
        return v
    return np.broadcast_to(v, shape)[index]


def epilogue_thunks(epilogue: Sequence[tuple], out: np.ndarray, index: tuple) -> list[Thunk]:
    """The in-place elementwise ops after a kernel, restricted to ``out[index]``.

    Elementwise ops compute every element independently, so running them per chunk gives
    the very bits of running them over the whole output (while the chunk is in cache).
    """
    part = out[index]
    thunks = []
    for uf, a, b in epilogue:
        a_ = part if a is _OUT else _as_operand(a, out.shape, index)
        b_ = part if b is _OUT else _as_operand(b, out.shape, index)
        thunks.append(functools.partial(uf, a_, b_, out=part))
    return thunks


_EPILOGUE_CODES = {np.add: 0, np.subtract: 1, np.multiply: 2, np.maximum: 3, np.minimum: 4}


def epilogue_chunk(
    epilogue: Sequence[tuple], out: np.ndarray, b: int, channels: tuple, rows: tuple, opts
) -> list[Thunk]:
    """The epilogue on ``out[b, c0:c1, y0:y1]``: one pass of the C loop kernel (no
    temporaries, no numpy iteration buffers) or, without it, numpy ufuncs on the slice."""
    if not epilogue:
        return []
    (c0, c1), (y0, y1) = channels, rows
    if not (
        opts.use_c_kernels and loop_kernels_available() and out.ndim == 4 and out.flags.c_contiguous
    ):
        return epilogue_thunks(epilogue, out, (b, slice(c0, c1), slice(y0, y1)))
    thunks = []
    for start in range(0, len(epilogue), 4):  # the kernel takes up to four ops
        args = _epilogue_args(epilogue[start : start + 4], out, b)
        thunks.append(bind_kernel("epilogue", out[b], *args, c0, c1, y0, y1))
    return thunks


def _epilogue_args(ops: Sequence[tuple], out: np.ndarray, b: int) -> tuple:
    """The epilogue kernel's ``(p0, p1, p2, p3, codes, swapped)`` for up to four ops on
    ``out[b]``."""
    codes = np.full(4, -1, np.int64)
    swapped = np.zeros(4, np.bool_)
    operands = []
    for i, (uf, a, b_) in enumerate(ops):
        codes[i] = _EPILOGUE_CODES[uf]
        swapped[i] = a is not _OUT
        other = a if a is not _OUT else b_
        operands.append(out[b] if other is _OUT else np.broadcast_to(other, out.shape)[b])
    operands += [out[b]] * (4 - len(operands))  # unused (code -1)
    return (*operands, codes, swapped)


def in_sequence(parts: Sequence[Thunk]) -> Thunk:
    parts = tuple(parts)
    if len(parts) == 1:
        return parts[0]

    def run() -> None:
        for p in parts:
            p()

    return run


def split_job(
    opts: Options,
    make: Callable[[int, int], Thunk],
    ranges: list[tuple[int, int]],
    extent: int,
    fine: list[tuple[int, int]] | None = None,
) -> Thunk:
    """One thunk running ``make(lo, hi)`` for every range on the pool (or for every range of
    ``fine``, a finer cut the pool may prefer when a core is busy); run serially it runs
    ``make(0, extent)`` instead (one call each, no chunking overhead: the same values)."""
    if opts.pool is None or opts.pool.threads == 1 or len(ranges) <= 1:
        return make(0, extent)
    tasks = [make(lo, hi) for lo, hi in ranges]
    serial = make(0, extent)
    native = call_job(opts.pool, fine_calls(make, fine, ranges) or tasks, serial)
    if native is not None:
        return native  # every chunk one C call: parts from C, without the GIL
    fine_tasks = None
    if fine is not None and len(fine) > len(ranges):
        fine_tasks = [make(lo, hi) for lo, hi in fine]
    job = Job(tasks, serial=serial, fine=fine_tasks)
    return functools.partial(opts.pool.run, job)


def fine_calls(make: Callable[[int, int], Thunk], fine: list[tuple[int, int]] | None,
               ranges: list[tuple[int, int]]) -> list[Thunk] | None:  # fmt: skip
    """The chunks of the finer cut when there is one and they are C calls (a native job's
    parts are claimed one by one, so a thread that loses its core leaves fewer behind)."""
    if fine is None or len(fine) <= len(ranges):
        return None
    calls = [make(lo, hi) for lo, hi in fine]
    return calls if all(hasattr(c, "c_call") for c in calls) else None


# --------------------------------------------------------------------------------------------
# Convolutions
# --------------------------------------------------------------------------------------------


def fast_conv2d(op, vals, out, ws, opts):
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
        loops = opts.use_c_kernels and loop_kernels_available() and x.flags.c_contiguous
        if loops and groups == c == o and cg == 1:
            return _depthwise(x, w, out, (sh, sw, dh, dw, pt, pl), opts)
        return None
    tile = _winograd_tile(x, w, out, a, ws, opts)
    if tile:
        return _winograd(x, w, out, ws, (pt, pl), tile, opts)
    k = c * kh * kw
    p = oh * ow
    wmat = np.ascontiguousarray(w.reshape(o, k))  # packed once, here
    pointwise = kh == kw == 1 and sh == sw == 1 and not any(a["padding"])
    if pointwise:
        if not x.flags.c_contiguous:
            return None
        cols = None
    else:
        need = k * p * x.dtype.itemsize
        if ws is None or ws.nbytes < need:
            return None  # lowered without a workspace: the reference kernel allocates
        cols = ws[:need].view(x.dtype).reshape(k, p)
        opts.columns.append(cols)
    geometry = (kh, kw, sh, sw, dh, dw, pt, pl)
    loop_cols = opts.use_c_kernels and loop_kernels_available() and x.flags.c_contiguous
    parts = min(chunk_count(opts), o * k * p // MIN_CHUNK_MNK) or 1
    # Cut by output rows (each chunk gathers its own columns, multiplies and finishes them:
    # no barrier) when the image is large; by output channels when it is small.
    # (Rows at least 16 pixels wide: a chunk is then never a matrix-vector product, which
    # BLAS computes with other kernels than the whole matrix product.)
    by_rows = (
        parts > 1 and p // parts >= _MIN_CHUNK_COLUMNS and ow >= 16 and (pointwise or loop_cols)
    )
    thunks: list[tuple[str, Thunk]] = []
    for b in range(n):
        out2 = out[b].reshape(o, p)
        src = x[b].reshape(c, p) if pointwise else cols
        if by_rows:

            def rows(y0: int, y1: int, b: int = b, out2=out2, src=src) -> Thunk:
                p0, p1 = y0 * ow, y1 * ow
                steps: list[Thunk] = []
                if cols is not None:
                    steps.append(im2col_kernel(x[b], cols, 0, c, y0, y1, (oh, ow), geometry))
                steps.append(functools.partial(np.matmul, wmat, src[:, p0:p1], out=out2[:, p0:p1]))
                steps += epilogue_chunk(opts.epilogue, out, b, (0, o), (y0, y1), opts)
                return in_sequence(steps)

            ranges = matmul_ranges(oh, parts, 1, ow * o * k)
            fine = matmul_ranges(oh, chunk_count(opts, FINE_CHUNKS_PER_THREAD), 1, ow * o * k)
            thunks.append(("conv", split_job(opts, rows, ranges, oh, fine)))
            continue
        if cols is not None:
            if loop_cols:

                def gather(c0: int, c1: int, b: int = b) -> Thunk:
                    return im2col_kernel(x[b], cols, c0, c1, 0, oh, (oh, ow), geometry)

                gparts = parts if c * p >= parts * _MIN_CHUNK_ELEMENTS else 1
                thunks.append(("im2col", split_job(opts, gather, even_ranges(c, gparts), c)))
            else:
                thunks += im2col_numpy(x[b], cols, out.shape[2:], geometry)

        def channels(o0: int, o1: int, b: int = b, out2=out2, src=src) -> Thunk:
            steps = [functools.partial(np.matmul, wmat[o0:o1], src, out=out2[o0:o1])]
            steps += epilogue_chunk(opts.epilogue, out, b, (o0, o1), (0, oh), opts)
            return in_sequence(steps)

        ranges = matmul_ranges(o, min(parts, o // _MIN_CHUNK_ROWS) or 1, 16, k * p)
        fine_parts = min(chunk_count(opts, FINE_CHUNKS_PER_THREAD), o // _MIN_CHUNK_ROWS) or 1
        fine = matmul_ranges(o, fine_parts, 16, k * p)
        family = "conv" if opts.epilogue else "matmul"
        thunks.append((family, split_job(opts, channels, ranges, o, fine)))
    return thunks


# Winograd F(m x m, 3x3)'s matrices and weight transform: xrelay.kernels.winograd.
_WINO_G = WINOGRAD_G
_WINO_KERNELS = {2: ("wino_input", "wino_output"), 4: ("wino4_input", "wino4_output")}


def winograd_enabled() -> bool:
    """Whether 3x3 stride-1 convolutions may run as Winograd (``XRELAY_WINOGRAD=0`` turns it
    off; read when a function is compiled). Which ones, and with which block size, says
    the compiler (``relay.winograd_tile`` on the op); ``XRELAY_WINOGRAD_TILE=2`` or ``4``
    forces the block size of those (where the planned workspace is large enough; for
    measurements)."""
    return os.environ.get("XRELAY_WINOGRAD", "1") != "0"


def _winograd_tile(x, w, out, a, ws, opts) -> int:
    """The stated Winograd block size of a float32 convolution with constant weights and a
    large enough workspace, on the loop-kernel path (``use_c_kernels``; the reference path keeps
    the reference kernels' bits), else 0."""
    if not x.flags.c_contiguous:
        return 0
    return winograd_tile_for(x.shape[1], w.shape[0], w.shape[2:], out.shape[2:], x.dtype, a, ws, opts)


def winograd_tile_for(c, o, kernel_hw, out_hw, dtype, a, ws, opts) -> int:
    """``_winograd_tile`` by channels, kernel and output size (any layout): the block size
    the compiler stated (``opts.winograd_tile``), where the kernels can run it."""
    tile = opts.winograd_tile
    if not (tile and opts.use_c_kernels and winograd_enabled() and loop_kernels_available()):
        return 0
    if opts.fixed[1:2] != (True,):
        return 0  # the weights are transformed once, so they must be a constant
    if tuple(kernel_hw) != (3, 3) or dtype != np.float32 or tile not in (2, 4):
        return 0
    # what the transforms compute (a module from elsewhere may state a tile on any conv)
    if (tuple(a["strides"]), tuple(a["dilation"]), a["groups"]) != ((1, 1), (1, 1), 1):
        return 0
    oh, ow = out_hw
    forced = os.environ.get("XRELAY_WINOGRAD_TILE", "")
    if forced in ("2", "4"):
        tile = int(forced)
    need = winograd_scratch_bytes(c, o, oh, ow, np.dtype(dtype).itemsize, tile)
    return tile if ws is not None and ws.nbytes >= need else 0


WINOGRAD_CHUNKS = 4
"""Chunks of a Winograd convolution cut by tile rows, whatever the thread count.
Its matrix products are each a small part of the direct convolution's, too small for
the ``MIN_CHUNK_MNK`` bound that makes a thread-count-dependent cut bitwise safe; so the cut
is fixed by the shapes alone and one thread runs the same chunks in turn."""


def wino_matrices(
    ws: np.ndarray, start: int, count: int, rows: int, tiles: int, dt: np.dtype
) -> np.ndarray:
    """``count`` matrices ``rows x tiles`` at ``ws[start:]``, ``winograd_slice_bytes`` apart."""
    step = winograd_slice_bytes(rows, tiles, dt.itemsize)
    base = ws[start : start + count * step].view(dt)
    return np.lib.stride_tricks.as_strided(
        base, (count, rows, tiles), (step, tiles * dt.itemsize, dt.itemsize), writeable=True
    )


def fixed_split(opts: Options, tasks: Sequence[Thunk]) -> Thunk:
    """``tasks`` on the pool, or in order on one thread (the same chunks either way)."""
    if opts.pool is None or opts.pool.threads == 1 or len(tasks) <= 1:
        return in_sequence(tasks)
    native = call_job(opts.pool, tasks, in_sequence(tasks))
    return native if native is not None else functools.partial(opts.pool.run, Job(tasks))


def _winograd(x, w, out, ws, pads, tile, opts):
    """Winograd F(tile x tile, 3x3) per image (tile 2 or 4): input tiles transformed into
    the workspace, ``(tile + 2)**2`` matrix products (one per tile element) with the weights
    transformed here once, and the output transform writing the destination, followed by
    the epilogue.

    Large images are cut into ``WINOGRAD_CHUNKS`` ranges of tile rows (each chunk
    transforms, multiplies and finishes its own rows: no barrier); smaller ones run in three
    parallel phases: the input transform cut by channels, the products shared out whole,
    the output transform and epilogue cut by output channels (three hand-offs, but no thin
    products; measured faster from 28x28 images down). The results differ from direct
    convolution by float32 rounding only (the transforms add a few additions per element);
    they are the same bits for any thread count. The profiler counts the input transform as
    ``im2col``, the products as ``matmul`` and the rest (or a whole tile-row chunk) as
    ``conv``.
    """
    pt, pl = pads
    n, c = x.shape[:2]
    o = w.shape[0]
    oh, ow = out.shape[2:]
    th, tw = -(-oh // tile), -(-ow // tile)
    nt = th * tw
    count = (tile + 2) ** 2
    k_in, k_out = _WINO_KERNELS[tile]
    dt = x.dtype
    # The transformed weights, packed once: computed in float64 and rounded once, a few
    # output channels at a time (float64 temporaries of the whole weight would raise the
    # peak memory by several times its size).
    gm = _WINO_G[tile]
    u = np.empty((count, o, c), dt)
    for o0 in range(0, o, 32):
        part = np.einsum("ai,ocij,bj->aboc", gm, w[o0 : o0 + 32].astype(np.float64), gm)
        u[:, o0 : o0 + 32] = part.reshape(count, -1, c)
    v = wino_matrices(ws, 0, count, c, nt, dt)
    m = wino_matrices(ws, count * winograd_slice_bytes(c, nt, dt.itemsize), count, o, nt, dt)
    opts.columns += [v, m]
    opts.winograd.append(u)
    # Rows when every chunk keeps 64 tiles or more (BLAS stays efficient); else channels.
    by_rows = nt >= WINOGRAD_CHUNKS * 64 and th >= WINOGRAD_CHUNKS
    thunks: list[tuple[str, Thunk]] = []
    for b in range(n):
        xb, ob = x[b], out[b]
        if by_rows:

            def rows(r0: int, r1: int, xb=xb, ob=ob, b=b) -> Thunk:
                t0, t1 = r0 * tw, r1 * tw
                steps = [
                    bind_kernel(k_in, xb, v, 0, c, r0, r1, tw, pt, pl),
                    functools.partial(np.matmul, u, v[:, :, t0:t1], out=m[:, :, t0:t1]),
                    bind_kernel(k_out, m, tw, ob, 0, o, r0, r1),
                ]
                y1 = min(oh, tile * r1)
                steps += epilogue_chunk(opts.epilogue, out, b, (0, o), (tile * r0, y1), opts)
                return in_sequence(steps)

            tasks = [rows(lo, hi) for lo, hi in even_ranges(th, WINOGRAD_CHUNKS)]
            thunks.append(("conv", fixed_split(opts, tasks)))
            continue

        def tiles(c0: int, c1: int, xb=xb) -> Thunk:
            return bind_kernel(k_in, xb, v, c0, c1, 0, th, tw, pt, pl)

        # The input transform gives the same values however it is cut.
        gparts = chunk_count(opts) if c * nt * count >= 2 * _MIN_CHUNK_ELEMENTS else 1
        thunks.append(("im2col", split_job(opts, tiles, even_ranges(c, gparts), c)))

        # The products, each whole (the same call however they are shared out).
        def products(k0: int, k1: int) -> Thunk:
            return functools.partial(np.matmul, u[k0:k1], v[k0:k1], out=m[k0:k1])

        fine = even_ranges(count, chunk_count(opts, FINE_CHUNKS_PER_THREAD))
        cut = even_ranges(count, chunk_count(opts))
        thunks.append(("matmul", split_job(opts, products, cut, count, fine)))

        def finish(o0: int, o1: int, ob=ob, b=b) -> Thunk:
            steps = [bind_kernel(k_out, m, tw, ob, o0, o1, 0, th)]
            steps += epilogue_chunk(opts.epilogue, out, b, (o0, o1), (0, oh), opts)
            return in_sequence(steps)

        oparts = chunk_count(opts) if o * oh * ow >= 2 * _MIN_CHUNK_ELEMENTS else 1
        thunks.append(("conv", split_job(opts, finish, even_ranges(o, oparts), o)))
    return thunks


def im2col_numpy(xb, cols, out_hw, geometry) -> list[tuple[str, Thunk]]:
    """im2col of one image with numpy copies (the reference kernel's exact values)."""
    kh, kw, sh, sw, dh, dw, pt, pl = geometry
    c, h, wd = xb.shape
    oh, ow = out_hw
    cols6 = cols.reshape(c, kh, kw, oh, ow)
    thunks: list[tuple[str, Thunk]] = []
    for i in range(kh):
        r0, r1 = valid_range(oh, h, i * dh, sh, pt)
        for j in range(kw):
            c0, c1 = valid_range(ow, wd, j * dw, sw, pl)
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
                thunks.append(("im2col", functools.partial(np.copyto, tap[:, r0:r1, c0:c1], src)))
    return thunks


def im2col_kernel(xb, cols, c0, c1, y0, y1, out_hw, geometry) -> Thunk:
    """Columns ``y0 * ow .. y1 * ow`` of the rows of channels ``c0 .. c1`` by the C gather
    kernel (a pure copy with zeros for the padding: the same values as ``im2col_numpy``)."""
    return bind_kernel("gather", xb, cols, c0, c1, y0, y1, *out_hw, *geometry)


def _depthwise(x, w, out, geometry, opts):
    sh, sw, dh, dw, pt, pl = geometry
    wc = np.ascontiguousarray(w)
    if wc.shape[2:] == (3, 3) and dh == dw == 1:
        # Padded planes, vectorised over the outputs: the same sums in the same order as the
        # generic kernel (bitwise equal; tested), faster at every size (measured).
        kernel = "depthwise3x3"
        geometry = (sh, sw, pt, pl)
    else:
        kernel = "depthwise"
    n, c = x.shape[:2]
    fuse = (
        kernel == "depthwise3x3"
        and 0 < len(opts.epilogue) <= 4
        and out.flags.c_contiguous
        and x.flags.c_contiguous
    )
    per_channel = out.shape[2] * out.shape[3]
    parts = chunk_count(opts) if c * per_channel >= 2 * _MIN_CHUNK_ELEMENTS else 1
    thunks: list[tuple[str, Thunk]] = []
    for b in range(n):

        def make(c0: int, c1: int, b: int = b) -> Thunk:
            if fuse:
                # The epilogue inside the kernel, each channel while it is in cache.
                args = _epilogue_args(opts.epilogue, out, b)
                return bind_kernel("depthwise3x3_epi", x[b], wc, out[b], c0, c1, *geometry, *args)
            steps = [bind_kernel(kernel, x[b], wc, out[b], c0, c1, *geometry)]
            steps += epilogue_chunk(opts.epilogue, out, b, (c0, c1), (0, out.shape[2]), opts)
            return in_sequence(steps)

        fine = even_ranges(c, chunk_count(opts, FINE_CHUNKS_PER_THREAD)) if parts > 1 else None
        thunks.append(("depthwise", split_job(opts, make, even_ranges(c, parts), c, fine)))
    return thunks


# --------------------------------------------------------------------------------------------
# The loop kernels: C (runtime.native.library), one implementation each
# --------------------------------------------------------------------------------------------


def loop_kernels_available() -> bool:
    """Whether the C loop kernels are built (a C compiler, and not ``XRELAY_NATIVE=0``).
    Without them every maker keeps to numpy: the reference kernels' own operations."""
    return native_kernels() is not None


def bind_kernel(name: str, *args: Any) -> Thunk:
    """A thunk calling C loop kernel ``name`` on ``args`` (checked once, here). Only called
    where ``loop_kernels_available()``; the makers hand it contiguous arrays of one float type
    (a ``NativeError`` here is a maker's bug, not a fallback)."""
    kernels = native_kernels()
    if kernels is None:
        raise KernelError(f"loop kernel {name}: the C kernels are not built")
    return kernels[name].bind(*args)


Maker = Callable[..., list[tuple[str, Thunk]] | None]
"""``maker(op, vals, out, ws, opts)``: the thunks computing ``op`` into ``out``, or None when
the kernel does not take this op (the next maker, finally the reference kernel, is tried)."""


def by_layout(nchw: Maker, nhwc: Maker, blocked: Maker) -> Maker:
    """``nchw`` for an op in NCHW, ``nhwc`` for one in NHWC and ``blocked`` for a blocked layout
    (``NCHW16c``)."""

    def maker(op, vals, out, ws, opts):
        a = op.attrs
        layout = a.get("data_layout") or a.get("layout") or ""
        if layout == "NHWC":
            return nhwc(op, vals, out, ws, opts)
        if layout and not layout.isupper():
            return blocked(op, vals, out, ws, opts)
        return nchw(op, vals, out, ws, opts)

    return maker


def first(*makers: Maker) -> Maker:
    """A maker trying ``makers`` in order (the int8 kernel, then the float ones)."""

    def maker(op, vals, out, ws, opts):
        for m in makers:
            thunks = m(op, vals, out, ws, opts)
            if thunks is not None:
                return thunks
        return None

    return maker


FLOAT_MAKERS: Mapping[str, Maker] = MappingProxyType({
    **{name: _fast_binary for name in _BINARY_UFUNCS},
    "nn.relu": _fast_relu,
    "clip": _fast_clip,
    "nn.avg_pool2d": _fast_avg_pool,
    **{name: _fast_unary for name in _UNARY_UFUNCS},
    "erf": _fast_erf,
    "sigmoid": _fast_sigmoid,
    "nn.softmax": _fast_softmax,
    "nn.l2_normalize": _fast_l2_normalize,
    "where": _fast_where,
    **{name: _fast_compare for name in _COMPARISONS},
    "divide": _fast_divide,
    "cast": _fast_cast,
    "take": _fast_take,
    "gather_nd": _fast_gather_nd,
    "scatter_nd": _fast_scatter_nd,
    "nn.pad": _fast_pad,
    "image.resize2d": _fast_resize,
    "image.grid_sample": _fast_grid_sample,
    "dft": _fast_dft,
    "split": _fast_split,
    "cumsum": _fast_scan,
    "cumprod": _fast_scan,
    **{name: _fast_logical for name in ("logical_and", "logical_or", "logical_not")},
    **{name: _fast_reduce for name in ("sum", "mean", "max", "min")},
})  # fmt: skip
"""This module's makers by op name, but those of the layout-dependent ops (``nn.conv2d`` and
the 2-D pools: NCHW here, channels-last and blocked in ``fast_nhwc``); the native engine's
table of every maker is ``runtime.native.makers.FAST``."""

_TUPLE_MAKERS = frozenset({"dft", "split"})
"""Ops of several results whose makers take ``out`` as the tuple of their destinations
(every other maker writes one array)."""

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
    """Which values write which buffer, and which ops are views (``result_buffers``'s rule,
    the one the planner sized the workspace by, bound to the destination arrays)."""
    dest: dict[SSAValue, Any] = {}
    views: set[RelayOp] = set()
    for v, (index, through_view) in result_buffers(fn).items():
        buf = outs[index]
        if not through_view:
            dest[v] = buf
            continue
        shape, dt = _tensor_spec(v)
        if buf.flags.c_contiguous and dt == buf.dtype and int(np.prod(shape)) == buf.size:
            dest[v] = buf.reshape(shape)
            (use,) = [u.operation for u in v.uses]
            if getattr(use, "RELAY_NAME", None) in VIEW_OPS:
                views.add(use)
    return dest, views


def _epilogue_of(
    op: RelayOp, dest: dict[SSAValue, Any], operand: Callable[[SSAValue], Any]
) -> list[tuple[RelayOp, list[tuple[np.ufunc, Any, Any]]]]:
    """The chain of in-place elementwise ops that finish ``op``'s result in its buffer.

    An op joins the chain when it is the only user of the chain's value, writes the same
    buffer (``_assign_destinations`` made it in place) and its other operand is known before
    ``op`` runs (an argument of the function or a constant) and does not overlap the buffer.
    ``operand`` gives such an operand's array, or None when it is not known yet.
    """
    r = op.results[0]
    buf = dest.get(r)
    if buf is None or not isinstance(buf, np.ndarray):
        return []
    chain: list[tuple[RelayOp, list[tuple[np.ufunc, Any, Any]]]] = []
    while r.uses.get_length() == 1:
        user = next(iter(r.uses)).operation
        if (
            not isinstance(user, RelayOp)
            or len(user.results) != 1
            or dest.get(user.results[0]) is not buf
            or user.results[0].type != r.type
        ):
            break
        name = user.RELAY_NAME
        if name in _BINARY_UFUNCS:
            args = []
            for v in user.operands:
                if v is r:
                    args.append(_OUT)
                    continue
                value = operand(v)
                if (
                    not isinstance(value, np.ndarray)
                    or value.dtype != buf.dtype
                    or np.broadcast_shapes(value.shape, buf.shape) != buf.shape
                    or np.shares_memory(value, buf)
                ):
                    return chain
                args.append(value)
            steps = [(_BINARY_UFUNCS[name], args[0], args[1])]
        elif name == "nn.relu" and float_same(buf):
            steps = [(np.maximum, _OUT, np.zeros((), buf.dtype))]
        elif name == "clip" and float_same(buf):
            lo = np.asarray(user.attrs["a_min"], dtype=buf.dtype)
            hi = np.asarray(user.attrs["a_max"], dtype=buf.dtype)
            steps = [(np.maximum, _OUT, lo), (np.minimum, _OUT, hi)]
        else:
            break
        chain.append((user, steps))
        r = user.results[0]
    return chain


def compile_function(
    fn: func.FuncOp,
    inputs: Sequence[np.ndarray],
    outs: Sequence[np.ndarray],
    workspace: np.ndarray | None = None,
    *,
    fast: bool = True,
    use_c_kernels: bool = False,
    pool: WorkerPool | None = None,
    call_function: Callable[[func.FuncOp, tuple[Any, ...]], Sequence[Any]] | None = None,
    lookup: Callable[[str], func.FuncOp | None] | None = None,
    fixed: Sequence[bool] | None = None,
    _temporaries: _Temporaries | None = None,
    makers: Mapping[str, Maker] = MappingProxyType({}),
    pad_readers: Mapping[str, Maker] = MappingProxyType({}),
    lookups: tuple[Callable[..., dict], Callable[..., Any]] | None = None,
) -> CompiledFunction:
    """Bind ``fn``'s body to ``inputs``/``outs``/``workspace`` and return its thunks.

    ``fast=False`` runs every op through the reference kernels (still in place where the
    destinations allow). With ``fast``, a convolution also runs the in-place elementwise ops
    that follow it (bias, residual add, relu, clip) chunk by chunk on its output, and with a
    ``pool`` of several threads its chunks run in parallel (same bits as one thread). ``call_function`` runs composite functions called inside ``fn``
    (found with ``lookup``) with reference semantics. ``fixed`` says which inputs are
    constants, bound for as long as the thunks are used: kernels may pre-transform them here
    (the Winograd convolution's weights; an input not marked is read when a thunk runs).
    ``makers`` are the fast kernels by op name and ``pad_readers`` those that read through a
    deferred ``nn.pad`` (the native engine's table: ``runtime.native.makers``); ``lookups``
    (``makers.LOOKUPS``) finds the chains computing a function of one 8-bit value and makes
    their table lookups.
    Raises ``KernelError`` naming the op for ops without a kernel.
    """
    name = fn.sym_name.data
    fn = _inline_composites(fn, lookup)
    body = fn.body.block
    if len(inputs) != len(body.args) or len(outs) != len(fn.function_type.outputs.data):
        raise KernelError(
            f"@{name}: called with {len(inputs)} input(s) and {len(outs)} output(s), but its "
            f"type is {fn.function_type}"
        )
    compiled = CompiledFunction(name)
    if fast and use_c_kernels and _temporaries is None:
        # a function of float elementwise ops: one C loop over its result
        from xrelay.runtime.native.elementwise_loop import compile_elementwise_loop

        looped = compile_elementwise_loop(fn, inputs, outs, pool)
        if looped is not None:
            compiled.thunks.extend(looped)
            compiled.fast_ops = sum(1 for op in body.ops if op is not body.last_op)
            return compiled
    if fast and _temporaries is None:
        # a function that only moves data: a few strided copies (runtime.native.movement)
        from xrelay.runtime.native.movement import compile_movement

        moved = compile_movement(fn, inputs, outs)
        if moved is not None:
            compiled.thunks.extend(moved)
            compiled.fast_ops = sum(1 for op in body.ops if op is not body.last_op)
            return compiled
    temporaries = _temporaries or _Temporaries(workspace, temporaries_offset(fn))

    def temporary(shape: tuple[int, ...], dt: np.dtype, what: str) -> np.ndarray:
        """A buffer for an internal value: planned workspace after the kernels' scratch
        (``dialects.memory.fused_temporaries``), else -- a program planned without it --
        an array made here (``scratch_bytes``, outside the arena)."""
        buf = temporaries.take(shape, dt)
        if buf is None:
            nbytes = int(np.prod(shape, dtype=object)) * dt.itemsize
            refusal = too_large(what, compiled.scratch_bytes + nbytes)
            if refusal:  # a temporary inside a fused function, outside the planned arena
                raise KernelError(refusal)
            buf = np.empty(shape, dt)
            compiled.scratch_bytes += buf.nbytes
        return buf

    env: dict[SSAValue, Any] = dict(zip(body.args, inputs))
    constant_args = {a for a, f in zip(body.args, fixed or ()) if f}

    def is_fixed(v: SSAValue) -> bool:
        return v in constant_args or isinstance(v.owner, ConstantOp)

    dest, views = _assign_destinations(fn, outs)
    ret = body.last_op
    assert isinstance(ret, func.ReturnOp)
    fused: set[RelayOp] = set()
    produced: dict[SSAValue, np.ndarray] = {}
    deferred: dict[SSAValue, RelayOp] = {}  # pads a kernel may read through (Options.padded)

    def materialise(pad: RelayOp) -> None:
        """Make a deferred pad's tensor after all (its user's kernel declined to read through)."""
        r = pad.results[0]
        shape, dt = _tensor_spec(r)
        buf = temporary(shape, dt, f"the temporary {r.type} of {pad.name}")
        pad_vals = [env[v] for v in pad.operands]
        compiled.thunks.append(("nn.pad", _family(pad), _generic(KERNELS["nn.pad"], pad_vals, pad.attrs, buf)))
        env[r] = buf

    def known(v: SSAValue) -> Any:
        if v in env:
            return env[v]
        if isinstance(v.owner, ConstantOp):
            env[v] = private_copy(v.owner.numpy())  # read at every run: not the params file
            return env[v]
        return None

    # chains computing a function of one 8-bit value: a table each (fast_int8.lookup_regions)
    tables: dict = {}
    if fast and lookups is not None:
        tables = lookups[0](list(body.ops), set(ret.operands), lambda v: known(v) if is_fixed(v) else None)
    # x * a + P(x) * b with P moving elements within rows (rotary embeddings): one C pass
    rotated: dict = {}
    if fast and use_c_kernels and loop_kernels_available():
        rotated = rotations(list(body.ops), set(ret.operands))
    bound: dict[int, bool] = {}

    def bind_rotation(rot: Any) -> bool:
        """The rotation's thunk, at its first op (its operands are known by then, or it is
        left to its ops' kernels), writing the root's buffer."""
        x, a, b = (known(v) for v in (rot.x, rot.a, rot.b))
        if not all(isinstance(v, np.ndarray) for v in (x, a, b)):
            return False
        r = rot.root.results[0]
        out = dest.get(r)
        if out is None:
            shape, dt = _tensor_spec(r)
            if not float_same(x, a, b) or x.dtype != dt or x.shape != shape:
                return False
            out = temporary(shape, dt, f"the temporary {r.type} of a rotation")
        opts = Options(use_c_kernels, pool)
        thunk = _rotation_thunk(rot, x, a, b, out, opts)
        if thunk is None:
            return False
        label = "rotation(" + "+".join(sorted({m.RELAY_NAME for m in rot.members})) + ")"
        compiled.thunks.append((label, "elementwise", thunk))
        compiled.fast_ops += len(rot.members)
        env[r] = out
        return True

    # the elementwise ops that read only the inputs: one C loop first (the LSTM's last step
    # before the stack of its outputs)
    looped = _input_loop(fn, env, dest, views, temporaries, compiled, pool) if fast and use_c_kernels and not tables and not rotated else set()  # fmt: skip
    spans: dict[Operation, tuple[int, int]] = {}  # op -> its thunks' range in compiled.thunks
    unread: dict[Operation, tuple[set[SSAValue], list[SSAValue]]] = {}
    current: tuple[Operation, int] | None = None
    for op in body.ops:
        if current is not None:
            spans[current[0]] = (current[1], len(compiled.thunks))
        current = (op, len(compiled.thunks))
        if op is ret:
            break
        if op in looped:
            continue
        if isinstance(op, ConstantOp):
            if op.result not in env:
                env[op.result] = private_copy(op.numpy())
            continue
        rot = rotated.get(op)
        if rot is not None:
            if id(rot) not in bound:
                bound[id(rot)] = bind_rotation(rot)
            if bound[id(rot)]:
                continue
        if op in fused:
            r = op.results[0]
            env[r] = produced[r] if r in produced else dest.get(r)  # claimed: intermediate, unused
            continue
        if op in tables and op not in views:
            _lookup(op, tables, env, dest, temporary, compiled, Options(use_c_kernels, pool), lookups[1])
            if op in tables:  # (not when its chain was dissolved)
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
                    buf = temporary(shape, dt, f"the result {r.type} of the call of @{callee_name}")
                env[r] = buf
                bufs.append(buf)

            if fast:
                # A composite (a oneDNN pattern that its backend declined, say) is compiled
                # like the function itself, writing its results' buffers: its kernels, its
                # in-place epilogues and the step's workspace, and nothing allocated per run.
                try:
                    inner = compile_function(
                        callee, args, bufs, workspace, fast=fast, use_c_kernels=use_c_kernels, pool=pool,
                        call_function=call_function, lookup=lookup,
                        fixed=[is_fixed(v) for v in op.arguments], _temporaries=temporaries,
                        makers=makers, pad_readers=pad_readers, lookups=lookups,
                    )  # fmt: skip
                except KernelError:
                    inner = None
                if inner is not None:
                    compiled.thunks.extend(inner.thunks)
                    compiled.scratch_bytes += inner.scratch_bytes
                    compiled.fast_ops += inner.fast_ops
                    compiled.columns.extend(inner.columns)
                    compiled.winograd.extend(inner.winograd)
                    compiled.derived.extend(inner.derived)
                    continue

            def run_call(callee=callee, args=args, bufs=bufs) -> None:
                for b, v in zip(bufs, call_function(callee, tuple(args))):
                    np.copyto(b, v, casting="unsafe")

            compiled.thunks.append((f"call @{callee_name}", "other", run_call))
            continue
        if not isinstance(op, RelayOp):
            raise KernelError(f"@{name}: cannot run '{op.name}' inside a primitive function")
        if fast and _pad_read_through(op, dest):
            deferred[op.results[0]] = op
            continue
        pad_op = deferred.pop(op.operands[0], None) if op.operands else None
        vals = [None if pad_op is not None and i == 0 else env[v] for i, v in enumerate(op.operands)]
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
                buf = temporary(shape, dt, f"the temporary {r.type} of {op.name}")
            results.append(buf)
        if results is None:
            continue
        env.update(zip(op.results, results))
        out = results[0] if len(op.results) == 1 and not _multi(op) else tuple(results)
        thunks = None
        chain: list = []
        if fast and (not isinstance(out, tuple) or op.RELAY_NAME in _TUPLE_MAKERS):
            maker = makers.get(op.RELAY_NAME)
            if op.RELAY_NAME in ("nn.conv2d", "concatenate"):  # kernels that run epilogues
                chain = _epilogue_of(op, dest, known)
            # a deferred pad: first the kernel that reads through it, else the pad is made
            attempts = [(pad_readers.get(op.RELAY_NAME), True), (maker, False)] if pad_op is not None else [(maker, False)]
            for make, through in attempts:
                if make is None:
                    continue
                if not through and pad_op is not None:
                    materialise(pad_op)
                    vals[0], pad_op = env[op.operands[0]], None
                epilogue = [s for _, steps in chain for s in steps]
                opts = Options(use_c_kernels, pool, epilogue, compiled.columns, compiled.winograd)
                opts.derived = compiled.derived
                opts.fixed = tuple(is_fixed(v) for v in op.operands)
                opts.winograd_tile = stated_winograd_tile(op)
                opts.dest = dest
                opts.constant = lambda v: known(v) if is_fixed(v) else None
                opts.available = lambda v: known(v) if (v in env or isinstance(v.owner, ConstantOp)) else None
                if through:
                    opts.padded = (pad_op, env[pad_op.operands[0]], env[pad_op.operands[1]])
                thunks = make(op, vals, out, workspace, opts)
                compiled.scratch_bytes += sum(a.nbytes for a in opts.scratch)
                if thunks is not None:
                    fused.update(opts.claimed)
                    produced.update(opts.produced)
                    if opts.unread:
                        unread[op] = (set(opts.unread), list(opts.reads))
                    if opts.result_unused and dest.get(op.results[0]) is None:
                        compiled.scratch_bytes -= out.nbytes
                        env[op.results[0]] = None
                    pad_op = None  # read through, or made above
                    break
        if pad_op is not None:
            materialise(pad_op)
            vals[0] = env[op.operands[0]]
        label = "+".join([op.RELAY_NAME] + [u.RELAY_NAME for u, _ in chain])
        fused.update(u for u, _ in chain)
        if thunks is not None:
            compiled.fast_ops += 1 + len(chain)
            compiled.thunks.extend((label, fam, t) for fam, t in thunks)
            continue
        kernel = KERNELS.get(op.RELAY_NAME)
        if kernel is None:
            raise KernelError(f"@{name}: no numpy kernel implements {op.name}")
        compiled.thunks.append((op.RELAY_NAME, _family(op), _generic(kernel, vals, op.attrs, out)))
        if chain:
            # The reference kernel ran whole; its epilogue runs whole after it.
            epilogue = [s for _, steps in chain for s in steps]
            compiled.fast_ops += len(chain)
            compiled.thunks.extend(
                (label, "elementwise", t) for t in epilogue_thunks(epilogue, out, ())
            )
    if unread:
        _drop_dead_ops(compiled, body, ret, spans, unread)
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


def _lookup(
    op: Any, tables: dict, env: dict, dest: dict, temporary: Any, compiled: CompiledFunction, opts: Options,
    lookup_thunk: Callable[..., Any],
) -> None:
    """Compute ``op`` of a table chain (``fast_int8.lookup_regions``): nothing for a value that
    stays inside the chain, a lookup for one used after it. At the chain's first op, a source
    without a contiguous buffer, or a wider result sharing its memory, dissolves the chain
    (its ops leave ``tables`` and run one by one)."""
    src, table = tables[op]
    source = env.get(src)
    chain = [o for o, (s, _) in tables.items() if s is src]
    if op is chain[0]:
        ok = isinstance(source, np.ndarray) and source.flags.c_contiguous
        for o in chain:
            t, d = tables[o][1], dest.get(o.results[0])
            if ok and t is not None and d is not None:
                ok = d.flags.c_contiguous and (t.dtype.itemsize == 1 or not np.may_share_memory(source, d))
        if not ok:
            for o in chain:
                del tables[o]
            return
    r = op.results[0]
    if table is None:
        env[r] = None
        return
    buf = dest.get(r)
    if buf is None:
        shape, dt = _tensor_spec(r)
        buf = temporary(shape, dt, f"the temporary {r.type} of {op.name}")
    thunk = lookup_thunk(source, table, buf, opts)
    assert thunk is not None  # checked at the chain's first op
    env[r] = buf
    compiled.thunks.append(("lookup", "elementwise", thunk))
    compiled.fast_ops += 1


def _drop_dead_ops(
    compiled: CompiledFunction, body: Any, ret: Operation, spans: Mapping[Operation, tuple[int, int]],
    unread: Mapping[Operation, tuple[set[SSAValue], list[SSAValue]]],
) -> None:
    """Remove the thunks of the relay ops whose results nothing reads: a value is read when the
    function returns it or a live op uses it, except as an operand its kernel declared unread
    (``Options.unread``: onnxruntime's QLinearAdd computes from the two 8-bit values, not from
    the float64 sides the program computes first, so the sides' casts and multiplies go).
    Other ops (calls) are always live."""
    live: set[SSAValue] = set(ret.operands)
    dead: set[Operation] = set()
    for op in reversed(list(body.ops)):
        if op is ret:
            continue
        if isinstance(op, RelayOp) and not any(r in live for r in op.results):
            dead.add(op)
            continue
        skipped, extra = unread.get(op, ((), ()))
        live.update(v for v in op.operands if v not in skipped)
        live.update(extra)
    drop = sorted(spans[op] for op in dead if op in spans and spans[op][0] < spans[op][1])
    if not drop:
        return
    keep = []
    for i, t in enumerate(compiled.thunks):
        if not any(a <= i < b for a, b in drop):
            keep.append(t)
    compiled.thunks[:] = keep
    compiled.fast_ops = max(0, compiled.fast_ops - len(dead))


def _inline_composites(fn: func.FuncOp, lookup: Callable[[str], func.FuncOp | None] | None) -> func.FuncOp:
    """``fn``, or a detached copy of it with every call of a composite function
    (``relay.composite``: a oneDNN function the oneDNN backend refused) replaced by the
    composite's ops, so they run on the fast kernels (a convolution with its bias and
    epilogue fused, in place in the planned destination) rather than call by call through
    the reference interpreter with temporaries of their own."""
    from xdsl.rewriter import InsertPoint, Rewriter

    def composite(op: Any) -> func.FuncOp | None:
        if not isinstance(op, func.CallOp) or lookup is None:
            return None
        callee = lookup(op.callee.root_reference.data)
        return callee if callee is not None and "relay.composite" in callee.attributes else None

    if not any(composite(op) is not None for op in fn.body.block.ops):
        return fn
    copy = fn.clone()
    for call in [op for op in copy.body.block.ops if composite(op) is not None]:
        callee = composite(call)
        assert callee is not None
        mapping: dict[SSAValue, SSAValue] = dict(zip(callee.body.block.args, call.arguments))
        for inner in callee.body.block.ops:
            if isinstance(inner, func.ReturnOp):
                for r, v in zip(call.results, inner.operands):
                    r.replace_all_uses_with(mapping.get(v, v))
                break
            new = inner.clone(value_mapper=mapping)
            Rewriter.insert_op(new, InsertPoint.before(call))
            mapping.update(zip(inner.results, new.results))
        Rewriter.erase_op(call)
    return copy


def _input_loop(fn, env: dict, dest: dict, views: set, temporaries: Any, compiled: CompiledFunction, pool: Any = None) -> set:
    """The ops of ``fn`` computed by one elementwise loop ahead of the rest
    (``elementwise_loop.input_loop``): their thunks added, the values the rest reads bound in
    ``env`` (a destination, else a temporary of the workspace); the empty set if none."""
    from xrelay.runtime.native.elementwise_loop import compile_loop, input_loop

    found = input_loop(fn)
    if found is None or any(op in views for op in found[0]):
        return set()
    part, live = found
    start = temporaries.offset
    bufs = []
    for v in live:
        shape, dt = _tensor_spec(v)
        buf = dest.get(v)
        buf = buf if isinstance(buf, np.ndarray) and buf.shape == shape else temporaries.take(shape, dt)
        if buf is None:
            temporaries.offset = start
            return set()
        bufs.append(buf)
    thunks = compile_loop(part, env.get, list(zip(live, bufs)), pool)
    if thunks is None:
        temporaries.offset = start  # (the buffers go back to the op-by-op path)
        return set()
    compiled.thunks.extend(thunks)
    compiled.fast_ops += sum(1 for op in part if not isinstance(op, ConstantOp))
    env.update(zip(live, bufs))
    return {op for op in part if not isinstance(op, ConstantOp)}  # (constants: bound as usual)


class _Temporaries:
    """Hands out a step's internal buffers from its workspace, after the kernels' scratch
    (``start``), each on a cache line; None once the workspace is used up."""

    def __init__(self, workspace: np.ndarray | None, start: int):
        self.workspace = workspace
        self.offset = start

    def take(self, shape: tuple[int, ...], dt: np.dtype) -> np.ndarray | None:
        ws = self.workspace
        nbytes = int(np.prod(shape, dtype=object)) * dt.itemsize
        end = self.offset + nbytes
        if ws is None or end > ws.nbytes:
            return None
        buf = ws[self.offset : end].view(dt).reshape(shape)
        self.offset = -(-end // 64) * 64
        return buf


def _pad_read_through(op: RelayOp, dest: dict) -> bool:
    """A constant-mode ``nn.pad`` whose only use is the data operand of an ``nn.conv2d`` and
    whose result is not a destination: its tensor is deferred (``Options.padded``)."""
    if op.RELAY_NAME != "nn.pad" or op.attrs.get("pad_mode", "constant") != "constant":
        return False
    r = op.results[0]
    if r in dest or r.uses.get_length() != 1:
        return False
    use = next(iter(r.uses))
    return getattr(use.operation, "RELAY_NAME", None) == "nn.conv2d" and use.index == 0


def _multi(op: RelayOp) -> bool:
    return is_multi_result(type(op))


def _rotation_thunk(
    rot: Rotation, x: np.ndarray, a: np.ndarray, b: np.ndarray, out: np.ndarray, opts: Any
):
    """The thunk computing ``rot`` into ``out`` with ``rotate_rows`` (ranges of rows on the
    pool), or None where the kernel does not apply (another type, ``x`` or ``out`` not
    contiguous or overlapping, an operand with a negative stride)."""
    if (
        not float_same(out, x, a, b)
        or x.shape != out.shape
        or not (x.flags.c_contiguous and out.flags.c_contiguous)
    ):
        return None
    if any(np.shares_memory(out, v) for v in (x, a, b)):
        return None
    fa, fb = row_offsets(a, out.shape), row_offsets(b, out.shape)
    if fa is None or fb is None:
        return None
    d = out.shape[-1]
    rows = out.size // d
    x2, o2 = x.reshape(rows, d), out.reshape(rows, d)

    def make(lo: int, hi: int):
        return bind_kernel("rotate_rows", x2, fa[0], fb[0], fa[1], fb[1], fa[2], fb[2],
                           rot.starts, rot.src, rot.signs, o2, lo, hi)  # fmt: skip

    ranges = even_ranges(rows, chunk_count(opts))
    fine = even_ranges(rows, chunk_count(opts, FINE_CHUNKS_PER_THREAD))
    return split_job(opts, make, ranges, rows, fine)
