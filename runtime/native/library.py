"""The executor's loop kernels as C, compiled once per machine and called through ctypes.

The fast kernels that are loops (im2col gather, depthwise convolution, max pool, the
elementwise epilogue of a convolution, the input and output transforms of Winograd
F(2x2, 3x3) and F(4x4, 3x3) convolutions) exist once, here in C. im2col, max pool and the
epilogue compute the numpy reference's operations in its order (each output element's taps in
(i, j) order from 0 or -inf; the epilogue's ops in program order; no floating-point
contraction or reassociation), so they give its bits (the tests check). Without a compiler
the executor keeps to numpy (``fast_kernels.loop_kernels_available``), not to a second
implementation: numba twins would cost about 130 MB of resident memory (its import and
LLVM's JIT), more than onnxruntime's whole process for MobileNetV2; a ctypes call releases the
GIL while the kernel runs. The C lives beside this module:
``native_template.h`` holds every kernel once for a floating type ``REAL`` (names through
``SFX(name)``), ``native_nhwc.h`` the channels-last Winograd entry points, both running
Winograd's transforms through ``winograd_core.h`` (the one implementation: portable C99, the
caller's scratch; ``winograd4.h`` its F(4x4) one-dimensional transforms), and
``native_kernels.c`` includes them for float (``_f32``) and double (``_f64``) and adds the
worker pool's spin wait. The library is built with ``cc -O3
-march=native -ffp-contract=off`` into xrelay's private cache (``runtime.compile_cache``:
``$XRELAY_CACHE_DIR``, default ``~/.cache/xrelay``), keyed by the hash of the source and flags, and loaded from there
afterwards; ``XRELAY_NATIVE=0`` disables it (the numpy kernels are used then).

Every kernel object is callable with numpy arrays and has ``bind(*args)``, which checks the
arrays once and returns a zero-argument thunk.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform
import struct
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from xrelay.error import TVMError
from xrelay.runtime.compile_cache import build_errors, cached_library

__all__ = [
    "NATIVE_PARTS_PER_THREAD",
    "NativeError",
    "c_call",
    "call_job",
    "call_part",
    "call_table",
    "loop_kernel",
    "native_chain",
    "native_kernels",
    "native_run",
    "spin_wait",
]


class NativeError(TVMError):
    """An array a native kernel cannot take (not contiguous, wrong dtype)."""


HERE = os.path.dirname(os.path.abspath(__file__))
"""The folder of the native engine's C (package data); the oneDNN shim includes its headers."""
_SOURCES = ("native_kernels.c", "native_template.h", "native_concat.h", "native_nhwc.h", "native_loop.h", "winograd_core.h",
            "winograd4.h")
"""The C of the kernels, beside this module (package data)."""

_FLAGS = ["-O3", "-march=native", "-ffp-contract=off", "-fno-fast-math", "-fno-trapping-math", "-fno-math-errno",
          "-shared", "-fPIC"]  # fmt: skip
"""The kernels' flags: IEEE results, no contraction into FMAs (the reference's rounding), and
neither floating-point traps nor ``errno`` observed, which changes no value but lets GCC 12
vectorize loops with a select or a square root (the elementwise loop's exp, tanh, sigmoid,
PReLU and sqrt ran one element at a time: an LSTM step's gates over 32 x 48 took ~70 us)."""
_TYPES = {"f32": "float", "f64": "double"}


def _source() -> str:
    """The text the library is built from (its hash names the cached build)."""
    parts = []
    for name in _SOURCES:
        with open(os.path.join(HERE, name), encoding="utf-8") as f:
            parts.append(f.read())
    return "\n".join(parts)


def _build() -> ctypes.CDLL | None:
    compiler = os.environ.get("CC", "cc")

    def build(out: str) -> None:
        import subprocess

        src = os.path.join(HERE, _SOURCES[0])
        subprocess.run([compiler, *_FLAGS, "-I", HERE, src, "-o", out, "-lm"],
                       check=True, capture_output=True, timeout=120)  # fmt: skip

    try:
        return cached_library("xrelay_kernels", [_source(), compiler, *_FLAGS], build)
    except build_errors() as e:
        print(f"xrelay: native kernels not built ({e}); using the numpy kernels", file=sys.stderr)
        return None


_I64 = ctypes.c_int64
_PTR = ctypes.c_void_p


def _ptr(a: np.ndarray, dtype: np.dtype, what: str, contiguous: bool = True) -> int:
    if a.dtype != dtype:
        raise NativeError(f"{what}: expected {dtype}, got {a.dtype}")
    if contiguous and not a.flags.c_contiguous:
        raise NativeError(f"{what}: the native kernels need a C-contiguous array")
    return a.ctypes.data


class _Kernel:
    """One C kernel for both float types; ``bind`` converts the numpy arguments to C's."""

    def __init__(self, lib: ctypes.CDLL, name: str, convert: Callable[..., tuple]):
        self.name = name
        self._convert = convert
        self._fns = {}
        for suffix in _TYPES:
            fn = getattr(lib, f"{name}_{suffix}")
            fn.restype = None
            self._fns[suffix] = fn

    def bind(self, *args: Any) -> Callable[[], None]:
        first = args[0]
        suffix = "f32" if first.dtype == np.float32 else "f64"
        if first.dtype not in (np.float32, np.float64):
            raise NativeError(f"{self.name}: float32 or float64 arrays only, got {first.dtype}")
        cargs, keep = self._convert(first.dtype, *args)
        fn = self._fns[suffix]
        fn.argtypes = None
        return c_call(fn, *cargs, keep=keep)  # keep: the arrays the pointers point into

    def __call__(self, *args: Any) -> None:
        self.bind(*args)()


def _ints(*values: int) -> list[ctypes.c_int64]:
    return [_I64(int(v)) for v in values]


def _gather(dt, xb, cols, c0, c1, y0, y1, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl):
    _, h, wd = xb.shape
    return (
        [_PTR(_ptr(xb, dt, "gather input")), *_ints(h, wd), _PTR(_ptr(cols, dt, "columns")),
         *_ints(cols.shape[1], c0, c1, y0, y1, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl)],
        (xb, cols),
    )  # fmt: skip


def _depthwise(dt, xb, w, ob, c0, c1, sh, sw, dh, dw, pt, pl):
    _, h, wd = xb.shape
    return (
        [_PTR(_ptr(xb, dt, "depthwise input")), *_ints(h, wd), _PTR(_ptr(w, dt, "weight")),
         *_ints(w.shape[2], w.shape[3]), _PTR(_ptr(ob, dt, "depthwise output")),
         *_ints(ob.shape[1], ob.shape[2], c0, c1, sh, sw, dh, dw, pt, pl)],
        (xb, w, ob),
    )  # fmt: skip


def _depthwise3x3(dt, xb, w, ob, c0, c1, sh, sw, pt, pl):
    _, h, wd = xb.shape
    return (
        [_PTR(_ptr(xb, dt, "depthwise input")), *_ints(h, wd), _PTR(_ptr(w, dt, "weight")),
         _PTR(_ptr(ob, dt, "depthwise output")),
         *_ints(ob.shape[1], ob.shape[2], c0, c1, sh, sw, pt, pl)],
        (xb, w, ob),
    )  # fmt: skip


def _depthwise3x3_epi(dt, xb, w, ob, c0, c1, sh, sw, pt, pl, p0, p1, p2, p3, codes, swapped):
    args, keep = _depthwise3x3(dt, xb, w, ob, c0, c1, sh, sw, pt, pl)
    e_args, e_keep = _epilogue(dt, ob, p0, p1, p2, p3, codes, swapped, c0, c1, 0, ob.shape[1])
    return args + e_args[3:10], keep + e_keep


def _max_pool(dt, xb, ob, c0, c1, kh, kw, sh, sw, dh, dw, pt, pl):
    _, h, wd = xb.shape
    return (
        [_PTR(_ptr(xb, dt, "pool input")), *_ints(h, wd), _PTR(_ptr(ob, dt, "pool output")),
         *_ints(ob.shape[1], ob.shape[2], ob.shape[1] * ob.shape[2], ob.shape[2], c0, c1, kh,
                kw, sh, sw, dh, dw, pt, pl)],
        (xb, ob),
    )  # fmt: skip


def _grid_sample(dt, x, grid, out, method, padding, align, u0, u1):
    n, c, h, wd = x.shape
    if grid.shape != (n, 2, *out.shape[2:]) or out.shape[:2] != (n, c):
        raise NativeError("grid_sample: data, grid and output do not fit")
    return (
        [_PTR(_ptr(x, dt, "grid_sample data")), _PTR(_ptr(grid, dt, "grid")),
         _PTR(_ptr(out, dt, "grid_sample output")),
         *_ints(c, h, wd, out.shape[2], out.shape[3], method, padding, align, u0, u1)],
        (x, grid, out),
    )  # fmt: skip


def _resize_pass(dt, x, out, w, first, u0, u1):
    """``x`` (np, n_in, nq) and ``out`` (np, n_out, nq) C-contiguous; ``w`` (n_out, k) of the
    float type, ``first`` (n_out,) int64 with ``first + k <= n_in``."""
    if x.ndim != 3 or out.ndim != 3 or x.shape[::2] != out.shape[::2] or w.ndim != 2 or w.shape[0] != out.shape[1]:
        raise NativeError("resize_pass: input, output and taps do not fit")
    k = w.shape[1]
    first = np.ascontiguousarray(first, np.int64)
    if len(first) != out.shape[1] or k < 1 or first.min() < 0 or first.max() + k > x.shape[1]:
        raise NativeError("resize_pass: a band outside the input")
    w = np.ascontiguousarray(w, dt)
    return (
        [_PTR(_ptr(x, dt, "resize input")), _PTR(_ptr(out, dt, "resize output")), _PTR(w.ctypes.data),
         _PTR(first.ctypes.data), *_ints(x.shape[1], out.shape[1], x.shape[2], k, u0, u1)],
        (x, out, w, first),
    )  # fmt: skip


def _epilogue(dt, ob, p0, p1, p2, p3, codes, swapped, c0, c1, y0, y1):
    operands = (p0, p1, p2, p3)
    strides = np.zeros(12, np.int64)
    for k, p in enumerate(operands):
        if p.dtype != dt or p.shape != ob.shape:
            raise NativeError("epilogue: operands must be broadcast to the output")
        if any(s % dt.itemsize for s in p.strides):
            raise NativeError("epilogue: operand strides must be whole elements")
        strides[3 * k : 3 * k + 3] = [s // dt.itemsize for s in p.strides]
    codes = np.ascontiguousarray(codes, np.int64)
    flags = np.ascontiguousarray(swapped, np.int64)
    return (
        [_PTR(_ptr(ob, dt, "epilogue output")), *_ints(ob.shape[1], ob.shape[2]),
         *[_PTR(_ptr(p, dt, "operand", contiguous=False)) for p in operands],
         _PTR(strides.ctypes.data), _PTR(codes.ctypes.data), _PTR(flags.ctypes.data),
         *_ints(c0, c1, y0, y1)],
        (ob, *operands, strides, codes, flags),
    )  # fmt: skip


def _tile_matrices(a: np.ndarray, dt: np.dtype, what: str) -> tuple[int, int]:
    """Pointer and element distance between the matrices of 16 (or 36) ``rows x tiles`` matrices
    (rows contiguous, matrices any whole number of elements apart)."""
    if a.dtype != dt or a.ndim != 3 or a.shape[0] not in (16, 36):
        raise NativeError(f"{what}: expected 16 or 36 matrices of {dt}, got {a.shape} {a.dtype}")
    step, row, col = a.strides
    if col != dt.itemsize or row != a.shape[2] * dt.itemsize or step % dt.itemsize:
        raise NativeError(f"{what}: every matrix must be C-contiguous")
    return a.ctypes.data, step // dt.itemsize


def _wino_input(dt, xb, v, c0, c1, r0, r1, tw, pt, pl):
    _, h, wd = xb.shape
    ptr, ks = _tile_matrices(v, dt, "tiles")
    return (
        [_PTR(_ptr(xb, dt, "winograd input")), *_ints(h, wd), _PTR(ptr),
         *_ints(ks, v.shape[2], tw, c0, c1, r0, r1, pt, pl)],
        (xb, v),
    )  # fmt: skip


def _wino_output(dt, m, tw, ob, o0, o1, r0, r1):
    ptr, ks = _tile_matrices(m, dt, "winograd products")
    return (
        [_PTR(ptr), *_ints(ks, m.shape[2], tw),
         _PTR(_ptr(ob, dt, "winograd output")), *_ints(ob.shape[1], ob.shape[2], o0, o1, r0, r1)],
        (m, ob),
    )  # fmt: skip


def _tile_rows(a: np.ndarray, dt: np.dtype, what: str) -> tuple[int, int, int]:
    """Pointer, matrix distance and row distance (elements) of 16 or 36 ``tiles x channels``
    matrices whose channels are contiguous (a column range of wider rows is fine)."""
    if a.dtype != dt or a.ndim != 3 or a.shape[0] not in (16, 36):
        raise NativeError(f"{what}: expected 16 or 36 matrices of {dt}, got {a.shape} {a.dtype}")
    step, row, col = a.strides
    if col != dt.itemsize or row % dt.itemsize or step % dt.itemsize or row < a.shape[2] * col:
        raise NativeError(f"{what}: the channels of every row must be contiguous")
    return a.ctypes.data, step // dt.itemsize, row // dt.itemsize


def _pixels(a: np.ndarray, dt: np.dtype, what: str) -> int:
    """The pixel stride (elements) of a channels-last image whose rows are whole."""
    if a.dtype != dt or a.ndim != 3:
        raise NativeError(f"{what}: expected an (h, w, c) image of {dt}, got {a.shape} {a.dtype}")
    ys, xs, cs = a.strides
    if cs != dt.itemsize or xs % dt.itemsize or ys != a.shape[1] * xs:
        raise NativeError(f"{what}: the image must be contiguous up to its channel stride")
    return xs // dt.itemsize


def _wino_input_nhwc(dt, xb, v, c0, c1, r0, r1, tw, pt, pl):
    h, wd, c = xb.shape
    ptr, ks, vs = _tile_rows(v, dt, "tiles")
    xs = _pixels(xb, dt, "winograd input")
    if v.shape[2] != c:
        raise NativeError(f"tiles: expected {c} channels, got {v.shape}")
    return (
        [_PTR(xb.ctypes.data), *_ints(h, wd, xs), _PTR(ptr),
         *_ints(ks, vs, tw, c0, c1, r0, r1, pt, pl)],
        (xb, v),
    )  # fmt: skip


def _wino_output_nhwc(dt, m, tw, ob, o0, o1, r0, r1):
    ptr, ks, ms = _tile_rows(m, dt, "winograd products")
    oh, ow, o = ob.shape
    os_ = _pixels(ob, dt, "winograd output")
    if m.shape[2] != o:
        raise NativeError(f"winograd products: expected {o} channels, got {m.shape}")
    return (
        [_PTR(ptr), *_ints(ks, ms, tw), _PTR(ob.ctypes.data), *_ints(oh, ow, os_, o0, o1, r0, r1)],
        (m, ob),
    )  # fmt: skip


def _concat_epi(dt, out, inputs, u0, u1, operands, steps, codes, swapped):
    """``out`` and the ``inputs`` as (outer, joined, inner) arrays; ``operands`` four arrays
    (unused ones any), ``steps`` their element steps along the joined axis."""
    if out.ndim != 3 or any(x.ndim != 3 or x.shape[::2] != out.shape[::2] for x in inputs):
        raise NativeError("concatenate: inputs and result must be (outer, joined, inner)")
    if sum(x.shape[1] for x in inputs) != out.shape[1]:
        raise NativeError("concatenate: the inputs do not fill the result")
    for p in operands:
        if p.dtype != dt:
            raise NativeError("concatenate: operands must have the result's type")
    addresses = np.array([_ptr(x, dt, "concatenate input") for x in inputs], np.int64)
    lens = np.array([x.shape[1] for x in inputs], np.int64)
    st = np.ascontiguousarray(steps, np.int64)
    codes = np.ascontiguousarray(codes, np.int64)
    flags = np.ascontiguousarray(swapped, np.int64)
    return (
        [_PTR(_ptr(out, dt, "concatenate output")), *_ints(out.shape[1], out.shape[2], u0, u1,
         len(inputs)), _PTR(addresses.ctypes.data), _PTR(lens.ctypes.data),
         *[_PTR(p.ctypes.data) for p in operands], _PTR(st.ctypes.data),
         _PTR(codes.ctypes.data), _PTR(flags.ctypes.data)],
        (out, *inputs, *operands, addresses, lens, st, codes, flags),
    )  # fmt: skip


def _rotate_rows(dt, x, a, b, a_off, b_off, a_step, b_step, starts, src, signs, out, r0, r1):
    """``x`` and ``out`` as C-contiguous (rows, d) arrays; ``a``, ``b`` the first elements of
    broadcast operands (any strides: ``a_off``/``b_off`` int64 per row, ``a_step``/``b_step``
    along it); ``starts`` (runs + 1), ``src`` (runs) int64, ``signs`` of the float type."""
    if x.ndim != 2 or out.shape != x.shape or len(a_off) != x.shape[0] or len(b_off) != x.shape[0]:
        raise NativeError("rotate_rows: x and the result must be (rows, d), one offset a row")
    ints = [np.ascontiguousarray(v, np.int64) for v in (a_off, b_off, starts, src)]
    sg = np.ascontiguousarray(signs, dt)
    if len(ints[2]) != len(ints[3]) + 1 or len(sg) != len(ints[3]) or ints[2][-1] != x.shape[1]:
        raise NativeError("rotate_rows: runs must cover the row")
    return (
        [_PTR(_ptr(x, dt, "rotate_rows input")), _PTR(_ptr(a, dt, "a", contiguous=False)),
         _PTR(_ptr(b, dt, "b", contiguous=False)), *[_PTR(v.ctypes.data) for v in ints[:2]],
         *_ints(a_step, b_step), *[_PTR(v.ctypes.data) for v in ints[2:]], _PTR(sg.ctypes.data),
         *_ints(len(sg)), _PTR(_ptr(out, dt, "rotate_rows output")), *_ints(x.shape[1], r0, r1)],
        (x, a, b, *ints, sg, out),
    )  # fmt: skip


_CONVERTERS = {
    "concat_epi": _concat_epi,
    "rotate_rows": _rotate_rows,
    "gather": _gather,
    "depthwise": _depthwise,
    "depthwise3x3": _depthwise3x3,
    "depthwise3x3_epi": _depthwise3x3_epi,
    "max_pool": _max_pool,
    "grid_sample": _grid_sample,
    "resize_pass": _resize_pass,
    "epilogue": _epilogue,
    "wino_input": _wino_input,
    "wino_output": _wino_output,
    "wino4_input": _wino_input,
    "wino4_output": _wino_output,
    "wino_input_nhwc": _wino_input_nhwc,
    "wino_output_nhwc": _wino_output_nhwc,
    "wino4_input_nhwc": _wino_input_nhwc,
    "wino4_output_nhwc": _wino_output_nhwc,
}

_STATE: dict[str, Any] = {}


# --------------------------------------------------------------------------------------------
# One C call as data: what the native pool runs from C (no Python, no GIL)

_CALL_INTS, _CALL_FPS = 24, 8
"""Integer-class and floating-point argument slots of a call row (``xrelay_call_part``)."""

_WORDS = (ctypes.c_int64, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_ssize_t)
_HALF_WORDS = (ctypes.c_int32, ctypes.c_uint32)
_FLOATS = {ctypes.c_float: "<f", ctypes.c_double: "<d"}


def _calls_from_c() -> bool:
    """Whether rows of C calls can be called from C here: the System V x86-64 and AAPCS64
    (Linux) conventions place integer-class and floating-point arguments independently, in
    order, 8 bytes a stack slot (``xrelay_call_part``); Windows and Apple arm64 do not."""
    return sys.platform.startswith("linux") and platform.machine() in ("x86_64", "aarch64")


def _word(t: Any, v: Any) -> int | None:
    """The 64-bit integer the argument ``v`` of C type ``t`` (None: untyped, ``v`` a ctypes
    value) is passed as, or None where it is not an integer-class word."""
    if t is None:
        if not isinstance(v, (*_WORDS, *_HALF_WORDS)):
            return None
        t, v = type(v), v.value
    elif isinstance(v, ctypes._SimpleCData):
        v = v.value
    if not (t in _WORDS or t in _HALF_WORDS or (isinstance(t, type) and issubclass(t, ctypes._Pointer))):
        return None
    if v is None:
        return 0
    if isinstance(v, (bytes, str, float, ctypes._Pointer)):
        return None  # (an address that lives as long as a Python object, or not an integer)
    try:
        word = int(v)
    except (TypeError, ValueError):
        return None
    if t in _HALF_WORDS and not -(2**31) <= word < 2**32:
        return None
    return (word + 2**63) % 2**64 - 2**63


def _fp_bits(t: Any, v: Any) -> int | None:
    """The raw bits a floating-point argument is passed with (a float's in the low 32), as a
    signed 64-bit integer."""
    if t is None:
        if type(v) not in _FLOATS:
            return None
        t, v = type(v), v.value
    elif isinstance(v, ctypes._SimpleCData):
        v = v.value
    fmt = _FLOATS.get(t)
    if fmt is None:
        return None
    try:
        raw = struct.pack(fmt, float(v))
    except (TypeError, ValueError, OverflowError):
        return None
    return int.from_bytes(raw.ljust(8, b"\0"), "little", signed=True)


def _call_row(fn: Any, args: tuple) -> tuple[int, ...] | None:
    """``fn(*args)`` as a row of ``xrelay_call_part``'s table, or None where it cannot be one
    (an argument of another type, too many arguments, a return value passed in memory, a
    calling convention that places arguments otherwise)."""
    if not isinstance(fn, ctypes._CFuncPtr) or not _calls_from_c() or call_part() is None:
        return None
    types = fn.argtypes
    if types is not None and len(types) != len(args):
        return None
    rest = fn.restype
    if rest is not None and rest not in (*_WORDS, *_HALF_WORDS, *_FLOATS):
        return None
    ints: list[int] = []
    fps: list[int] = []
    for i, v in enumerate(args):
        t = None if types is None else types[i]
        word = _word(t, v)
        if word is not None:
            ints.append(word)
            continue
        bits = _fp_bits(t, v)
        if bits is None:
            return None
        fps.append(bits)
    if len(ints) > _CALL_INTS or len(fps) > _CALL_FPS:
        return None
    address = ctypes.cast(fn, ctypes.c_void_p).value
    return (address, *ints, *[0] * (_CALL_INTS - len(ints)), *fps, *[0] * (_CALL_FPS - len(fps)))


NATIVE_PARTS_PER_THREAD = 4
"""Parts per thread of a native job's cut: the threads take them from one counter, so a
thread that starts late or loses its core leaves its share to the others."""


def c_call(fn: Any, *args: Any, keep: Any = ()) -> Callable[[], Any]:
    """A thunk calling the ctypes function ``fn(*args)`` (``keep``: what the arguments'
    addresses point into, held as long as the thunk). Where the call can be made from C
    (integer, pointer, float and double arguments on Linux x86-64 or aarch64), it carries
    ``c_call``, its row of ``xrelay_call_part``'s table: ``call_job`` runs a job of such
    calls on the native pool without Python, and ``native.steps.join_steps`` chains single
    ones with the native jobs around them. The same C function with the same arguments
    either way, so the same bits."""
    thunk = functools.partial(fn, *args)
    thunk.keep = keep  # type: ignore[attr-defined]
    row = _call_row(fn, args)
    if row is not None:
        thunk.c_call = row  # type: ignore[attr-defined]
    return thunk


def call_table(calls: Any) -> np.ndarray:
    """The rows (``c_call``) of the thunks ``calls`` as ``xrelay_call_part``'s table."""
    return np.ascontiguousarray([c.c_call for c in calls], np.int64)


def call_job(pool: Any, calls: Any, serial: Callable[[], Any]) -> Callable[[], None] | None:
    """One thunk running the ``c_call`` thunks ``calls`` (the parts of one job, each writing
    its own part of the result) on ``pool``'s threads from C (``WorkerPool.run_native``), or
    ``serial`` (what one thread runs instead) in one-thread runs; None when a call has no
    row or the pool runs no native jobs. It carries ``native_job``, so consecutive ones are
    chained (``native.steps.join_steps``)."""
    calls = tuple(calls)
    fn = call_part()
    if fn is None or pool is None or not pool.native or not calls:
        return None
    if not all(hasattr(c, "c_call") for c in calls):
        return None
    table = call_table(calls)
    post = functools.partial(pool.run_native, fn, table.ctypes.data, len(calls), pool.threads, serial)

    def run(held: tuple = (table, calls)) -> None:  # holds the table and the calls' arrays
        post()

    run.native_job = (pool, fn, table.ctypes.data, len(calls), pool.threads)  # type: ignore[attr-defined]
    run.serial = serial  # type: ignore[attr-defined]
    return run


def call_part() -> int | None:
    """The address of ``xrelay_call_part`` (a native job's part function running one row of a
    call table), None without the native library."""
    if "call_part" not in _STATE:
        address = None
        if native_kernels() is not None:
            lib = _STATE["lib"]
            lib.xrelay_call_width.restype = ctypes.c_int64
            if lib.xrelay_call_width() == 1 + _CALL_INTS + _CALL_FPS:
                address = ctypes.cast(lib.xrelay_call_part, ctypes.c_void_p).value
        _STATE["call_part"] = address
    return _STATE["call_part"]


def spin_wait() -> Callable[[int, int, int, int], int] | None:
    """``spin_wait()(address, seen, max_ns, settle_ns)``: wait (spinning, GIL released) until
    the int64 at ``address`` differs from ``seen`` (then ``settle_ns`` more) or ``max_ns``
    passed; 1 if it changed. None without the native library."""
    if "spin" not in _STATE:
        fn = None
        if native_kernels() is not None:
            fn = _STATE["lib"].xrelay_spin_wait
            fn.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]
            fn.restype = ctypes.c_int64
        _STATE["spin"] = fn
    return _STATE["spin"]


def native_run() -> Callable[[int, int, int, int], int] | None:
    """``native_run()(fn, job, parts, slots)``: run a native job's parts on this thread and
    the workers spinning in ``spin_wait`` (GIL released; ``WorkerPool.run_native``): the parts
    other threads ran, -1 when no worker was waiting. None without the native library."""
    if "native" not in _STATE:
        fn = None
        if native_kernels() is not None:
            fn = _STATE["lib"].xrelay_native_run
            fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]
            fn.restype = ctypes.c_int64
        _STATE["native"] = fn
    return _STATE["native"]


def native_chain() -> Callable[[int, int], int] | None:
    """``native_chain()(jobs, n)``: ``native_run`` for each of ``n`` jobs in turn in one call,
    ``jobs`` the address of their (fn, job, parts, slots) int64 quads: -1 when the last found
    no worker waiting, else the jobs other threads helped with. None without the native
    library."""
    if "chain" not in _STATE:
        fn = None
        if native_kernels() is not None:
            fn = _STATE["lib"].xrelay_native_chain
            fn.argtypes = [ctypes.c_void_p, ctypes.c_int64]
            fn.restype = ctypes.c_int64
        _STATE["chain"] = fn
    return _STATE["chain"]


def loop_kernel() -> Any:
    """``loop_kernel()(table, u0, u1)``: the elementwise loop of ``native_loop.h`` (the program
    ``table``, rows ``[u0, u1)``; ``runtime.native.elementwise_loop``), None without the native
    library."""
    if "loop" not in _STATE:
        fn = None
        if native_kernels() is not None:
            fn = _STATE["lib"].xrelay_loop_f32
            fn.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]
            fn.restype = None
        _STATE["loop"] = fn
    return _STATE["loop"]


def native_kernels() -> dict[str, _Kernel] | None:
    """The C kernels by name (built on first use), or None without a working compiler or
    with ``XRELAY_NATIVE=0``."""
    if "kernels" not in _STATE:
        kernels = None
        if os.environ.get("XRELAY_NATIVE", "1") != "0":
            lib = _build()
            if lib is not None:
                kernels = {n: _Kernel(lib, n, c) for n, c in _CONVERTERS.items()}
                _STATE["lib"] = lib
        _STATE["kernels"] = kernels
    return _STATE["kernels"]
