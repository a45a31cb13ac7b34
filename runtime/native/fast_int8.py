"""int8 x int8 -> int32 convolution and dense for the arena executor, bit-exact.

The lowered qnn ops leave ``nn.conv2d`` / ``nn.dense`` with (u)int8 operands and an int32 result
(``out_dtype = "int32"``). numpy's integer matmul has no BLAS behind it, so these kernels use
float32 SGEMM where it is exact: a product of two 8-bit values is at most 255 * 128 = 32640 in
magnitude, so a sum of up to ``EXACT_K = 512`` of them stays below 2**24 and float32 represents
it exactly. The reduction is cut into chunks of at most 512, each chunk's float32 product is
exact, and the chunks are summed into the int32 output (exact too). The results are the
reference kernels' bits (int32 accumulation, without overflow for K * 32640 < 2**31, K < 65794).

Weights must be constants (they are converted and cut once, at compile time); the float32 im2col
matrix and the product tile are compile-time scratch. The int32 epilogue of the fused function
(zero-point terms, bias) then runs op by op; the requantize that follows is claimed whole and
runs as one C pass: Relay's fixed-point form (``xr_requant_tail``) or onnxruntime's float form as
``fake-quantization-to-integer{onnxruntime=true}`` writes it (``ort_requant`` ->
``xr_requant_float``), and that pass's QLinearAdd chain likewise (``ort_add`` ->
``xr_qlinear_add``), each giving the reference kernels' bits.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

import numpy as np

from xrelay.dialects.memory import VIEW_OPS
from xrelay.runtime.native.fast_kernels import chunk_count as pool_chunks
from xrelay.runtime.native.fast_kernels import epilogue_thunks, even_ranges, im2col_numpy, split_job
from xrelay.runtime.native.library import NATIVE_PARTS_PER_THREAD, c_call

_LIB: list = []


def vnni_library():
    """The compiled ``int8_gemm.c`` (cached like the other native kernels), or None.

    ``XRELAY_NATIVE=0`` or a missing compiler leave the float32 SGEMM path.
    """
    if _LIB:
        return _LIB[0]
    _LIB.append(_build_library())
    return _LIB[0]


def _build_library():
    import ctypes
    import os
    import subprocess

    from xrelay.runtime.compile_cache import cached_library
    from xrelay.runtime.native import library as native

    if os.environ.get("XRELAY_NATIVE", "1") == "0":
        return None
    source_path = os.path.join(os.path.dirname(__file__), "int8_gemm.c")
    with open(source_path) as f:
        source = f.read()
    compiler = os.environ.get("CC", "cc")
    flags = [*native._FLAGS]  # noqa: SLF001 - the same flags as the other kernels

    def build(out: str) -> None:
        subprocess.run([compiler, *flags, source_path, "-o", out], check=True, capture_output=True, timeout=120)

    try:
        lib = cached_library("xrelay_int8", [source, compiler, *flags], build)
    except (OSError, subprocess.SubprocessError):
        return None
    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    lib.xr_gemm_u8s8.argtypes = [ptr, ptr, ptr, i64, i64, i64, i64, i64, ptr, i64]
    lib.xr_gemm_u8s8.restype = None
    lib.xr_int8_has_vnni.restype = ctypes.c_int
    lib.xr_planes_to_rows_u8.argtypes = [ptr, ptr] + [i64] * 5
    lib.xr_planes_to_rows_u8.restype = None
    lib.xr_strided_to_rows_u8.argtypes = [ptr, ptr] + [i64] * 9
    lib.xr_strided_to_rows_u8.restype = None
    lib.xr_int8_has_vbmi.restype = ctypes.c_int
    lib.xr_conv1x1_planes_u8s8.argtypes = [ptr, ptr, ptr] + [i64] * 8 + [ptr]
    lib.xr_conv1x1_planes_u8s8.restype = ctypes.c_int
    lib.xr_conv_tiles_u8s8.argtypes = [ptr, ptr, ptr, ptr] + [i64] * 20 + [ptr, i64, ptr, i64]
    lib.xr_conv_tiles_u8s8.restype = None
    lib.xr_conv_direct_u8s8.argtypes = [ptr, ptr, ptr, ptr] + [i64] * 19 + [ptr, i64]
    lib.xr_conv_direct_u8s8.restype = None
    lib.xr_depthwise_u8s8.argtypes = [ptr, ptr, ptr] + [i64] * 15 + [ptr]
    lib.xr_depthwise_u8s8.restype = None
    lib.xr_depthwise_plane_available.restype = ctypes.c_int
    if lib.xr_depthwise_plane_available():  # built only for AVX-512 VBMI (absent on AVX2 CPUs)
        lib.xr_depthwise_plane_u8s8.argtypes = [ptr, ptr, ptr, i64, i64, i64, ptr, ptr, i64, i64, i64, ptr]
        lib.xr_depthwise_plane_u8s8.restype = None
    lib.xr_requant_tail.argtypes = [ptr, ptr, i64, i64, i64, i64, ptr, ptr, ptr, i64, i64, i64, i64]
    lib.xr_requant_tail.restype = None
    lib.xr_requant_float.argtypes = [ptr, ptr, i64, i64, i64, i64, ptr, i64] + [ctypes.c_float] * 3 + [i64]
    lib.xr_requant_float.restype = None
    f64, f32 = ctypes.c_double, ctypes.c_float
    lib.xr_qlinear_add.argtypes = [ptr, i64, ptr, i64, ptr, i64, i64, f64, f64, f64, i64, i64]
    lib.xr_qlinear_add.restype = None
    lib.xr_qlinear_add_fma.argtypes = [ptr, i64, ptr, i64, ptr, i64, f32, f32, f32, i64, i64]
    lib.xr_qlinear_add_fma.restype = ctypes.c_int
    lib.xr_qlinear_add_fma_exact.argtypes = [i64, i64, i64, f64, f64, f64, i64, i64]
    lib.xr_qlinear_add_fma_exact.restype = ctypes.c_int
    lib.xr_qlinear_add_const.argtypes = [ptr, i64, ptr, i64, i64, ptr, i64, i64, f64, i64, i64]
    lib.xr_qlinear_add_const.restype = None
    lib.xr_quantize_float.argtypes = [ptr, ptr, i64, i64, i64, f32, f32, f32] + [i64] * 6
    lib.xr_quantize_float.restype = None
    lib.xr_cumsum_f32.argtypes = [ptr, ptr, i64, i64, i64, i64]
    lib.xr_cumsum_f32.restype = None
    lib.xr_qlinear_mul.argtypes = [ptr, ptr, i64, ptr, ptr, i64, ptr, i64, i64] + [ctypes.c_float] * 4 + [i64] * 3
    lib.xr_qlinear_mul.restype = None
    lib.xr_dequantize_sum.argtypes = [ptr, ptr, ptr] + [i64] * 5
    lib.xr_dequantize_sum.restype = None
    lib.xr_ort_layer_norm.argtypes = [ptr, ptr, ptr, ptr, i64, f32, i64, i64]
    lib.xr_ort_layer_norm.restype = None
    lib.xr_ort_gelu.argtypes = [ptr, ptr, i64, i64, i64]
    lib.xr_ort_gelu.restype = None
    lib.xr_bmm_u8x8.argtypes = [ptr, ptr, i64, ptr] + [i64] * 6 + [ptr] * 4
    lib.xr_bmm_u8x8.restype = None
    lib.xr_rowsum_8bit.argtypes = [ptr, i64, ptr, i64, i64, i64]
    lib.xr_rowsum_8bit.restype = None
    lib.xr_ort_softmax.argtypes = [ptr, ptr, ptr, i64, f32, i64, i64, i64]
    lib.xr_ort_softmax.restype = None
    lib.xr_lookup8.argtypes = [ptr, ptr, ptr, i64, i64]
    lib.xr_lookup8.restype = None
    for pool in (lib.xr_max_pool_u8, lib.xr_max_pool_s8):
        pool.argtypes = [ptr, ptr] + [i64] * 14
        pool.restype = None
    return lib


def pack_weights(w2: np.ndarray) -> np.ndarray:
    """(O, K) int8 weights as [O/16][Kp/4][16][4], zero padded (Kp = K rounded up to 4)."""
    o, k = w2.shape
    kp, o16 = -(-k // 4) * 4, -(-o // 16) * 16
    padded = np.zeros((o16, kp), np.int8)
    padded[:o, :k] = w2
    return np.ascontiguousarray(padded.reshape(o16 // 16, 16, kp // 4, 4).transpose(0, 2, 1, 3))


EXACT_K = 512
"""Largest reduction whose float32 sum of 8-bit products is exact (512 * 32640 < 2**24)."""

_INT8 = (np.dtype(np.int8), np.dtype(np.uint8))


def _chunks(k: int) -> list[tuple[int, int]]:
    return [(k0, min(k, k0 + EXACT_K)) for k0 in range(0, k, EXACT_K)]


def _sum_into(out2: np.ndarray, tmp: np.ndarray, tmpi: np.ndarray | None, first: bool) -> None:
    """``out2 (+)= tmp``: the exact float32 chunk converted to int32 (a mixed-type add is ~80x slower)."""
    if first:
        np.copyto(out2, tmp, casting="unsafe")
    else:
        np.copyto(tmpi, tmp, casting="unsafe")
        np.add(out2, tmpi, out=out2)


def _accumulate(wf, cols, tmp, tmpi, out2, chunks) -> None:
    """``out2 = wf @ cols`` in int32, one exact float32 product per chunk of the reduction."""
    for i, (k0, k1) in enumerate(chunks):
        np.matmul(wf[:, k0:k1], cols[k0:k1], out=tmp)
        _sum_into(out2, tmp, tmpi, i == 0)


def conv2d(op, vals, out, ws, opts) -> list | None:
    """NCHW/OIHW, (u)int8 data and constant (u)int8 weights, int32 result.

    uint8 x int8 runs the C kernels (``_vnni_conv``, ``_depthwise``) with their scratch in the
    step's planned workspace (``conv_workspace_bytes``, stated by ``xrelay.backend.native.scratch``), reading
    through a deferred ``nn.pad`` (``Options.padded``: taps outside the image read its value)
    and requantizing in the kernel when the function's next ops are a lowered requantize
    (``_fused_requant``): then neither the padded tensor nor the int32 accumulator is made."""
    x, w = vals
    a = op.attrs
    if a["data_layout"] != "NCHW" or a["kernel_layout"] != "OIHW" or (a["out_layout"] or "NCHW") != "NCHW":
        return None
    if w.dtype not in _INT8 or out.dtype != np.int32:
        return None
    if not out.flags.c_contiguous or len(opts.fixed) < 2 or not opts.fixed[1]:
        return None
    source = _source(op, x, opts)
    if source is None:
        return None
    x, padding, pv = source
    if x.dtype not in _INT8 or not x.flags.c_contiguous:
        return None
    vnni = (x.dtype, w.dtype) == (np.dtype(np.uint8), np.dtype(np.int8))
    lib = vnni_library() if vnni else None
    if opts.padded is not None and lib is None:
        return None  # the float32 path pads with zeros only: let the pad be made
    requant = _fused_requant(op, out.shape, opts) if lib is not None else None
    if a["groups"] != 1:
        return _depthwise(op, x, w, out, opts, padding, pv, requant)
    n, c, _, _ = x.shape
    o, _, kh, kw = w.shape
    oh, ow = out.shape[2:]
    k, p = c * kh * kw, oh * ow
    sh, sw = a["strides"]
    dh, dw = a["dilation"]
    pt, pl = padding[0], padding[1]
    geometry = (kh, kw, sh, sw, dh, dw, pt, pl)
    if lib is not None:
        thunks = _vnni_conv(lib, x, w, out, geometry, opts, ws=ws, pv=pv, requant=requant)
        if thunks is not None:
            return thunks
    wf = np.ascontiguousarray(w.reshape(o, k), dtype=np.float32)
    cols = np.empty((k, p), np.float32)
    tmp = np.empty((o, p), np.float32)
    chunks = _chunks(k)
    tmpi = np.empty((o, p), np.int32) if len(chunks) > 1 else None
    opts.scratch += [a for a in (wf, cols, tmp, tmpi) if a is not None]
    thunks: list[tuple[str, Any]] = []
    for b in range(n):
        thunks += im2col_numpy(x[b], cols, (oh, ow), geometry)
        thunks.append(("matmul", functools.partial(_accumulate, wf, cols, tmp, tmpi, out[b].reshape(o, p), chunks)))
        thunks += _epilogue(opts, out, b)
    return thunks


def _source(op, x, opts) -> tuple[np.ndarray, tuple[int, int, int, int], int] | None:
    """(data, padding (top, left, bottom, right), pad value) the convolution reads: its operand
    with its padding and 0, or the data of a deferred ``nn.pad`` (only H and W padded, the
    convolution itself unpadded) with the pad's widths and value."""
    if opts.padded is None:
        return x, tuple(op.attrs["padding"]), 0
    pad, data, value = opts.padded
    widths = [tuple(wd) for wd in pad.attrs["pad_width"]]
    if any(op.attrs["padding"]) or len(widths) != 4 or widths[0] != (0, 0) or widths[1] != (0, 0):
        return None
    if min(min(wd) for wd in widths) < 0 or np.size(value) != 1:
        return None
    v = np.asarray(value).reshape(())
    if data.dtype != np.uint8 or v.dtype != np.uint8:
        return None
    (t, b), (left, r) = widths[2], widths[3]
    return data, (t, left, b, r), int(v)


class Epilogue(ctypes.Structure):
    """``xr_epi`` of ``int8_gemm.c``: a lowered requantize the C kernels apply to each int32 sum."""

    _fields_ = [
        *[(f, ctypes.c_int64) for f in ("kind", "out_kind", "per_channel", "zp", "lo", "hi")],
        *[(f, ctypes.c_void_p) for f in ("offset", "fmult", "m", "ls", "total")],
        ("flo", ctypes.c_float), ("fhi", ctypes.c_float),
        ("add_t", ctypes.c_void_p), ("add_ra", ctypes.c_double),
        *[(f, ctypes.c_int64) for f in ("add_kind", "add_lo", "add_hi")],
    ]  # fmt: skip


def _per_channel(c: np.ndarray, shape: tuple, channels: int, axis: int) -> np.ndarray | None:
    """A constant broadcasting to ``shape`` along ``axis`` only, as ``channels`` int64 values."""
    if c.ndim > len(shape) or np.broadcast_shapes(c.shape, shape) != tuple(shape):
        return None
    full = (1,) * (len(shape) - c.ndim) + c.shape
    if any(d != 1 for i, d in enumerate(full) if i != axis):
        return None
    return np.broadcast_to(c.reshape(-1).astype(np.int64), (channels,)) if c.size in (1, channels) else None


def _bias_add_chain(cast8, shape: tuple, opts) -> tuple[list, np.ndarray, float, int, int, Any] | None:
    """After a requantize's ``cast8`` (its only user): a QLinearAdd of a constant repeating per
    channel along the last axis (a dense layer's bias added in 8 bits, as ``ort_add``'s const
    side) -- ``cast(f64) -> multiply(ra) -> add(t) -> cast(f32) -> add/subtract 1.5*2^23 ->
    cast(i32) -> clip -> cast((u)int8)``: (those ops, t as float32 per channel, ra, the clip's
    bounds, the last cast). None for anything else."""

    c64 = _single_user(cast8.results[0], "cast")
    if c64 is None or c64.attrs["dtype"] != "float64":
        return None
    found = _user_with(c64.results[0], "multiply", opts, lambda c: c.dtype == np.float64 and c.size == 1)
    if found is None:
        return None
    mul, ra = found
    add = _single_user(mul.results[0], "add")
    if add is None or len(add.operands) != 2 or shape_of_result(add) != tuple(shape):
        return None
    other = add.operands[1] if add.operands[0] is mul.results[0] else add.operands[0]
    t = _repeating_side(opts.constant(other), tuple(shape))
    if t is None or t.size != shape[-1]:
        return None
    found = _to_byte(add, opts)
    if found is None:
        return None
    ops, lo, hi, last = found
    return [c64, mul, add, *ops], t, float(ra.reshape(())), lo, hi, last


def _fused_requant(op, shape: tuple, opts, axis: int = 1, bias_add: bool = False) -> tuple[Epilogue, np.ndarray, list] | None:
    """The function's ops after the convolution's int32 result ``op``, when they are constant
    per-channel int32 adds/subtracts (zero-point terms, bias) and then a lowered requantize to
    (u)int8 -- onnxruntime's float form (``_ort_chain``) or Relay's fixed point
    (``_fixed_chain``): (the C epilogue, the 8-bit destination, arrays to keep alive). The
    ops are claimed and the int32 result dropped (``Options.result_unused``). The kernel's
    channels lie along ``axis`` (a convolution's 1, a dense layer's last). With ``bias_add``
    (a dense layer's, onnxruntime's float form) a QLinearAdd of a per-channel constant after
    the requantize (``_bias_add_chain``) is claimed too and runs on the kernel's tiles."""
    from xrelay.kernels import KERNELS

    channels = shape[axis]
    inner = int(np.prod(shape[axis + 1 :]))
    r = op.results[0]
    offset = np.zeros(channels, np.int64)
    claimed: list = []
    while True:
        user = _single_user(r, "add") or _single_user(r, "subtract")
        if user is None or shape_of_result(user) != tuple(shape):
            break
        i = 1 if user.operands[0] is r else 0
        c = opts.constant(user.operands[i])
        if (user.RELAY_NAME == "subtract" and i == 0) or c is None or np.asarray(c).dtype != np.int32:
            break
        per = _per_channel(np.asarray(c), shape, channels, axis)
        if per is None:
            break
        offset = offset + per if user.RELAY_NAME == "add" else offset - per
        claimed.append(user)
        r = user.results[0]
    epi = Epilogue()
    keep: list[np.ndarray] = []
    cast = _single_user(r, "cast")
    if cast is not None and cast.attrs["dtype"] == "float32":
        chain = _ort_chain(cast, tuple(shape), opts)
        if chain is None:
            return None
        ops, mult, layout, flo, fhi, zp, cast8, fzp = chain
        _, c, rest, per_channel = layout
        if fzp:
            return None  # QLinearMul's form: not a convolution's epilogue
        if per_channel and (c, rest) != (channels, inner):
            return None
        fm = np.ascontiguousarray(mult.reshape(-1), np.float32)
        keep.append(fm)
        epi.kind, epi.fmult, epi.flo, epi.fhi, epi.zp, epi.per_channel = 1, fm.ctypes.data, flo, fhi, zp, per_channel
    else:
        fpm = _single_user(r, "fixed_point_multiply") or _single_user(r, "fixed_point_multiply_per_axis")
        params = None if fpm is None else _fpm_params(fpm, opts)
        if params is None:
            return None
        m, ls, total, along = params
        if along not in (None, axis):
            return None
        tail = _tail_chain(fpm.results[0], opts)
        if tail is None:
            return None
        rest, zp, cast8 = tail
        ops = [fpm, *rest]
        clip = rest[-2]
        info = np.iinfo(np.int32)
        lo, hi = KERNELS["clip"](np.array([info.min, info.max], np.int32), **clip.attrs)
        count = channels if along is not None else 1
        arrays = [np.ascontiguousarray(np.broadcast_to(np.asarray(v, np.int64).reshape(-1), (count,))) for v in (m, ls, total)]
        keep += arrays
        epi.kind, epi.zp, epi.lo, epi.hi, epi.per_channel = 2, zp, int(lo), int(hi), int(along is not None)
        epi.m, epi.ls, epi.total = (v.ctypes.data for v in arrays)
    then = _bias_add_chain(cast8, tuple(shape), opts) if bias_add and epi.kind == 1 and axis == len(shape) - 1 else None
    if then is not None:
        more, t, ra, lo2, hi2, last = then
        keep.append(t)
        epi.add_t, epi.add_ra, epi.add_lo, epi.add_hi = t.ctypes.data, ra, lo2, hi2
        epi.out_kind = 0 if cast8.attrs["dtype"] == "int8" else 1  # the requantize's bytes, read by the add
        found = _int8_destination(opts, last, tuple(shape))
        if found is None:
            return None
        dst, epi.add_kind = found
        ops = [*ops, *more]
    else:
        found = _int8_destination(opts, cast8, tuple(shape))
        if found is None:
            return None
        dst, epi.out_kind = found
    if claimed:
        off = np.ascontiguousarray((offset % 2**32).astype(np.uint32).view(np.int32))
        keep.append(off)
        epi.offset = off.ctypes.data
    opts.scratch += keep
    opts.claimed += [*claimed, *ops]
    opts.result_unused = True
    return epi, dst, keep


TILE = 16
"""Output pixels whose rows ``xr_conv_tiles_u8s8`` makes at once (``XR_TILE`` in the C)."""

SLOTS = 4
"""Tile buffers a convolution's workspace holds: at most this many pixel ranges run at once."""


PLANAR_CHANNELS = 4
"""Up to this many input channels a convolution's tiles read the image's planes directly (a
byte per channel and tap) instead of a channels-last copy (a copy of ``C`` bytes per tap)."""


def reads_rows(kh: int, kw: int, sh: int, sw: int, pt: int, pl: int, h: int, w: int, oh: int, ow: int) -> bool:
    """Whether ``_vnni_conv`` multiplies a convolution's rows directly (no tiles): a 1x1
    convolution without top/left padding whose output pixels all read inside the image, with
    any strides. Each output pixel's row is then one input pixel's channels (every ``sh``-th
    row, ``sw``-th column): a 1x1/stride-2 downsampling reads a quarter of the image."""
    return (kh, kw, pt, pl) == (1, 1, 0, 0) and (oh - 1) * sh < h and (ow - 1) * sw < w


def reads_planes(kh: int, kw: int, sh: int, sw: int, pt: int, pl: int, h: int, w: int, oh: int, ow: int) -> bool:
    """Whether ``_vnni_conv`` multiplies a 1x1 stride-1 unpadded convolution's NCHW planes as
    they are (``xr_conv1x1_planes_u8s8``, with AVX-512 VBMI): no rows, no workspace. Its
    registers hold 16 pixels, so images whose last group of 16 would waste more than a tenth
    of the lanes (7x7: 49 pixels in 64 lanes) keep the rows (8 pixels at a time)."""
    if (kh, kw, sh, sw, pt, pl, oh, ow) != (1, 1, 1, 1, 0, 0, h, w) or (-(h * w) % 16) * 10 > h * w:
        return False
    lib = vnni_library()
    return lib is not None and bool(lib.xr_int8_has_vbmi())


def band_rows(h: int, kh: int, sh: int, dh: int, ow: int) -> int:
    """Input rows of a tiled convolution's band (``conv_workspace_bytes``): those of the output
    rows a tile of ``TILE`` pixels touches, and two more output rows' (copied once, read by
    the next tiles too); at most the image."""
    rows = -(-TILE // ow) + 3  # output rows: a tile's (it may straddle one more) and two
    return min(h, (rows - 1) * sh + (kh - 1) * dh + 1)


def _banded(c: int, h: int, kh: int, sh: int, dh: int, ow: int, slots: int) -> bool:
    """Whether the tiles read channels-last bands (one per pixel range) rather than one
    channels-last copy of the whole image: when the bands of ``slots`` ranges are fewer rows."""
    return c > PLANAR_CHANNELS and slots * band_rows(h, kh, sh, dh, ow) < h


def reads_direct(c: int, kw: int, dw: int, pointwise: bool) -> bool:
    """Whether ``_vnni_conv`` reads a convolution's taps where they lie in a padded
    channels-last copy of its input (``xr_conv_direct_u8s8``, no im2row rows): no dilation
    along W, so that each output pixel's taps of one kernel row are one run of ``kw * c`` bytes
    of one padded row; not a convolution ``reads_rows`` takes. A run whose length is not a
    multiple of 4 is read in whole 4-byte steps, its weights zero past it
    (``_direct_weights``): a 3-channel stem's 7x7 row of 21 bytes as 24. That costs up to 3
    products in 4 where the kernel row is short (a 3x3 row of 3 channels, 9 bytes as 12) and
    still wins: im2row wrote every pixel's rows just before multiplying them (a 7x7/2 stem
    of 3 channels, one thread: 0.99 -> 0.70 ms; 3x3/2 to 32 channels 0.38 -> 0.23 ms)."""
    return not pointwise and dw == 1


def direct_slack(c: int, kw: int) -> int:
    """Bytes a direct convolution's band holds past its rows: the last kernel row's 4-byte
    steps read up to 3 bytes past it when ``kw * c`` is not a multiple of 4."""
    return -(kw * c) % 4


def _direct_weights(w: np.ndarray) -> np.ndarray:
    """OIHW int8 weights packed for ``xr_conv_direct_u8s8``: K in (i, j, channel) order, each
    kernel row's ``kw * c`` bytes zero padded to a multiple of 4 (the steps it reads)."""
    o, c, kh, kw = w.shape
    row = kw * c
    rows = np.zeros((o, kh, row + direct_slack(c, kw)), np.int8)
    rows[:, :, :row] = w.transpose(0, 2, 3, 1).reshape(o, kh, row)
    return pack_weights(rows.reshape(o, -1))


DIRECT_EXTRA_ROWS = 4
"""Output rows past a tile's that a direct convolution's padded band holds: the band is
refilled every few output rows (a chunk: the rows it holds), the rows of the kernel's height
less one stride copied twice."""


def direct_band_rows(oh: int, kh: int, sh: int, dh: int, ow: int) -> int:
    """Padded input rows of a direct convolution's band (``xr_conv_direct_u8s8``'s ``cap``):
    those of the output rows a tile of ``TILE`` pixels touches (it may straddle one more) and
    ``DIRECT_EXTRA_ROWS`` more; at most the padded image's."""
    rows = -(-TILE // ow) + 1 + DIRECT_EXTRA_ROWS
    return min((oh - 1) * sh + (kh - 1) * dh + 1, (rows - 1) * sh + (kh - 1) * dh + 1)


def conv_workspace_bytes(c: int, h: int, w: int, kh: int, kw: int, oh: int, ow: int, pointwise: bool,
                         sh: int = 1, dh: int = 1, sw: int = 1, dw: int = 1) -> int:  # fmt: skip
    """The scratch of ``_vnni_conv`` for one image, on whole cache lines: with ``pointwise``
    (``reads_rows``) the rows of the pixels a 1x1 convolution reads (``oh * ow`` x ``C``
    rounded up to 4, channels-last); any other's up to ``SLOTS`` tiles of ``TILE`` rows of
    ``K`` (rounded up to 4) bytes (fewer for small images) -- never the whole im2row matrix --
    and the channels-last input they are made from: none up to ``PLANAR_CHANNELS`` channels
    (the planes are read), a band of ``band_rows`` rows per tile where those are fewer rows
    than the image (``sh``/``dh``: the vertical stride and dilation), else one copy of the
    image. A direct convolution (``reads_direct``; ``sw``/``dw``: the horizontal stride and
    dilation) needs only a padded band of ``direct_band_rows`` rows per range."""
    kp = -(-c * kh * kw // 4) * 4
    p = oh * ow
    if pointwise:
        return -(-p * kp // 64) * 64
    slots = min(SLOTS, -(-p // TILE))
    if reads_direct(c, kw, dw, pointwise):
        band = direct_band_rows(oh, kh, sh, dh, ow) * ((ow - 1) * sw + kw) * c + direct_slack(c, kw)
        return slots * -(-band // 64) * 64
    tiles = slots * -(-min(TILE, p) * kp // 64) * 64
    if c <= PLANAR_CHANNELS:
        return tiles
    if _banded(c, h, kh, sh, dh, ow, slots):
        return tiles + slots * -(-band_rows(h, kh, sh, dh, ow) * w * c // 64) * 64
    return tiles + -(-h * w * c // 64) * 64


def _carve(ws: np.ndarray | None, sizes: list[int], opts) -> list[np.ndarray]:
    """Byte buffers of ``sizes`` from the planned workspace (64-byte aligned offsets), or
    compile-time arrays when there is none or it is too small (counted as scratch)."""
    offsets = [0]
    for n in sizes:
        offsets.append(offsets[-1] + -(-n // 64) * 64)
    if ws is not None and ws.nbytes >= offsets[-1] and ws.flags.c_contiguous:
        flat = ws.reshape(-1).view(np.uint8)
        return [flat[o : o + n] for o, n in zip(offsets, sizes)]
    bufs = [np.empty(n, np.uint8) for n in sizes]
    opts.scratch += bufs
    return bufs


def _epilogue(opts, out: np.ndarray, b: int) -> list:
    """The in-place elementwise ops compile_function fused into the convolution (int32 adds,
    subtracts, ...): they must run here, after the product."""
    return [("conv", t) for t in epilogue_thunks(opts.epilogue, out, (b,))]


def _vnni_conv(lib, x, w, out, geometry, opts, *, ws=None, pv: int = 0, requant=None) -> list | None:
    """uint8 data x int8 weights, the C/VNNI product: a 1x1/stride 1 convolution multiplies the
    image's channels-last rows; any other runs by tiles of ``TILE`` output pixels, each tile's
    rows (4-aligned K, taps outside the image read ``pv``) made from a channels-last copy just
    before its product (``xr_conv_tiles_u8s8``). The buffers are in ``ws`` when it is large
    enough (``conv_workspace_bytes``). With ``requant`` (``_fused_requant``) the product writes
    the 8-bit result."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = out.shape[2:]
    k, p = c * kh * kw, oh * ow
    kh_, kw_, sh, sw, dh, dw, pt, pl = geometry
    pointwise = reads_rows(kh, kw, sh, sw, pt, pl, h, wd, oh, ow)
    strided = pointwise and (sh, sw, ow) != (1, 1, wd)  # the rows of every sh-th row, sw-th column
    if reads_direct(c, kw, dw, pointwise):
        wp = _direct_weights(w)
        opts.scratch.append(wp)
        return _direct_conv(lib, x, wp, out, geometry, opts, ws, pv, requant)
    # K in (i, j, channel) order, so that im2row copies whole channel vectors
    wp = pack_weights(np.ascontiguousarray(w.transpose(0, 2, 3, 1)).reshape(o, k))
    kp = wp.shape[1] * 4
    blocks = wp.shape[0]
    opts.scratch.append(wp)
    parts = pool_chunks(opts)
    if reads_planes(kh, kw, sh, sw, pt, pl, h, wd, oh, ow):
        return _planes_conv(lib, x, wp, out, opts, requant)
    slots = min(SLOTS, max(1, parts), -(-p // TILE))
    cap, bands = 0, [None] * slots  # no bands: the whole image's copy, or its planes
    if pointwise:
        (rows,) = _carve(ws, [p * kp], opts)
        hwc, tiles = None, []
    elif c <= PLANAR_CHANNELS:
        hwc, tiles = None, _carve(ws, [min(TILE, p) * kp] * slots, opts)
    elif _banded(c, h, kh, sh, dh, ow, min(SLOTS, -(-p // TILE))):  # as planned: for SLOTS ranges
        cap = band_rows(h, kh, sh, dh, ow)
        hwc, tiles = None, _carve(ws, [min(TILE, p) * kp] * slots + [cap * wd * c] * slots, opts)
        tiles, bands = tiles[:slots], tiles[slots:]
    else:
        hwc, *tiles = _carve(ws, [h * wd * c] + [min(TILE, p) * kp] * slots, opts)
    geo = (c, h, wd, kh_, kw_, sh, sw, dh, dw, pt, pl, ow, kp, o, pv, p)
    pixel_ranges = even_ranges(p, slots, TILE)  # each range with its own tile buffer
    block_ranges = _block_ranges(p, blocks, pixel_ranges)  # or the threads share the channels
    epi, dst, held = (None, out, []) if requant is None else requant
    epi_ptr = None if epi is None else ctypes.addressof(epi)
    native = opts.pool is not None and opts.pool.native and slots > 1
    thunks: list[tuple[str, Any]] = []
    for b in range(n):
        xb, ob = x[b], dst[b]

        def to_rows(p0: int, p1: int, xb=xb) -> Any:
            target, ld = (rows, kp) if pointwise else (hwc, c)

            if strided:
                return c_call(lib.xr_strided_to_rows_u8, xb.ctypes.data, target.ctypes.data, c, h, wd, sh, sw, ow, ld,
                              p0, p1, keep=(xb, target))  # fmt: skip
            return c_call(lib.xr_planes_to_rows_u8, xb.ctypes.data, target.ctypes.data, c, h * wd, ld, p0, p1,
                          keep=(xb, target))  # fmt: skip

        if hwc is not None or pointwise:
            span = p if pointwise else h * wd  # the output's pixels, or the image's
            if native:
                target, ld = (rows, kp) if pointwise else (hwc, c)
                if strided:
                    args, at = [xb.ctypes.data, target.ctypes.data, c, h, wd, sh, sw, ow, ld, 0, 0], (9, 10)
                else:
                    args, at = [xb.ctypes.data, target.ctypes.data, c, h * wd, ld, 0, 0], (5, 6)
                cut = native_cut(span, opts, 16, 64)
                job = native_thunk(lib, opts, "strided" if strided else "rows", args, at, cut, to_rows(0, span))
                thunks.append(("im2col", job))
            else:
                thunks.append(("im2col", split_job(opts, to_rows, even_ranges(span, min(parts, span)), span)))
        if pointwise:

            def make(b0: int, b1: int, ob=ob) -> Any:
                args = (rows.ctypes.data, wp.ctypes.data, ob.ctypes.data, p, kp, o, b0, b1, epi_ptr, 0)

                return c_call(lib.xr_gemm_u8s8, *args, keep=(rows, wp, ob, epi, *held))

            if native:
                args = [rows.ctypes.data, wp.ctypes.data, ob.ctypes.data, p, kp, o, 0, 0, epi_ptr, 0]
                job = native_thunk(lib, opts, "gemm", args, (6, 7), native_cut(blocks, opts), make(0, blocks))
                thunks.append(("matmul", job))
            else:
                count = min(parts, blocks)
                step = -(-blocks // count)
                ranges = [(i, min(blocks, i + step)) for i in range(0, blocks, step)]
                thunks.append(("matmul", split_job(opts, make, ranges, blocks)))
        else:

            def tiles_of(lo: int, hi: int, ob=ob, xb=xb) -> Any:
                cut = block_ranges or pixel_ranges
                slot = next(i for i, r in enumerate(cut) if r[0] <= lo < r[1])
                tile, band = tiles[slot], bands[slot]
                image = xb if hwc is None else hwc
                q0, q1, b0, b1 = (0, p, lo, hi) if block_ranges else (lo, hi, 0, blocks)
                args = (image.ctypes.data, wp.ctypes.data, ob.ctypes.data, tile.ctypes.data, *geo, q0, q1, b0, b1,
                        epi_ptr, int(hwc is None and band is None), None if band is None else band.ctypes.data, cap)  # fmt: skip

                # holds every slot's tile and band (see _direct_conv)
                return c_call(lib.xr_conv_tiles_u8s8, *args, keep=(image, wp, ob, tiles, bands, epi, *held))

            if native:
                # each thread its slot's tile and band; parts of tiles (or the block cut)
                image = xb if hwc is None else hwc
                args = [image.ctypes.data, wp.ctypes.data, ob.ctypes.data, 0, *geo, 0, p, 0, blocks, epi_ptr,
                        int(hwc is None and bands[0] is None), 0, cap]  # fmt: skip
                slot_vals = [(t.ctypes.data, 0 if bd is None else bd.ctypes.data) for t, bd in zip(tiles, bands)]
                if block_ranges:
                    cut = [(0, p, lo, hi) for lo, hi in block_ranges]
                else:
                    cut = [(lo, hi, 0, blocks) for lo, hi in native_cut(p, opts, TILE, 2 * TILE)]
                serial = tiles_of(0, blocks) if block_ranges else tiles_of(0, p)
                job = native_thunk(lib, opts, "tiles", args, (20, 21, 22, 23), cut, serial, (3, 26), slot_vals)
                thunks.append(("matmul", job))
            elif block_ranges:
                thunks.append(("matmul", split_job(opts, tiles_of, block_ranges, blocks)))
            else:
                thunks.append(("matmul", split_job(opts, tiles_of, pixel_ranges, p)))
        if requant is None:
            thunks += _epilogue(opts, out, b)
    return thunks


def _direct_conv(lib, x, wp, out, geometry, opts, ws, pv: int, requant) -> list:
    """A convolution whose taps are read in place (``reads_direct``, ``xr_conv_direct_u8s8``):
    each range of output pixels (or of channel blocks, ``_block_ranges``) with its own padded
    channels-last band of ``direct_band_rows`` rows, filled from the NCHW planes as its chunks
    move down the image."""
    n, c, h, wd = x.shape
    o, oh, ow = out.shape[1:]
    kh, kw, sh, sw, dh, _, pt, pl = geometry
    p, kp, blocks = oh * ow, wp.shape[1] * 4, wp.shape[0]
    slots = min(SLOTS, max(1, pool_chunks(opts)), -(-p // TILE))
    cap = direct_band_rows(oh, kh, sh, dh, ow)
    bands = _carve(ws, [cap * ((ow - 1) * sw + kw) * c + direct_slack(c, kw)] * slots, opts)
    pixel_ranges = even_ranges(p, slots, TILE)
    block_ranges = _block_ranges(p, blocks, pixel_ranges)
    epi, dst, held = (None, out, []) if requant is None else requant
    epi_ptr = None if epi is None else ctypes.addressof(epi)
    native = opts.pool is not None and opts.pool.native and slots > 1
    geo = (c, h, wd, kh, kw, sh, sw, dh, pt, pl, oh, ow, kp, o, pv)
    thunks: list[tuple[str, Any]] = []
    for b in range(n):
        xb, ob = x[b], dst[b]

        def part(lo: int, hi: int, xb=xb, ob=ob) -> Any:
            cut = block_ranges or pixel_ranges
            band = bands[next(i for i, r in enumerate(cut) if r[0] <= lo < r[1])]
            q0, q1, b0, b1 = (0, p, lo, hi) if block_ranges else (lo, hi, 0, blocks)
            args = (xb.ctypes.data, wp.ctypes.data, ob.ctypes.data, band.ctypes.data, *geo, q0, q1, b0, b1, epi_ptr, cap)

            # every slot's band: a native job has their addresses only
            return c_call(lib.xr_conv_direct_u8s8, *args, keep=(xb, wp, ob, bands, epi, *held))

        if native:  # each thread its slot's band; parts of chunks (or the block cut)
            args = [xb.ctypes.data, wp.ctypes.data, ob.ctypes.data, 0, *geo, 0, p, 0, blocks, epi_ptr, cap]
            if block_ranges:
                cut = [(0, p, lo, hi) for lo, hi in block_ranges]
            else:
                cut = [(lo, hi, 0, blocks) for lo, hi in native_cut(p, opts, TILE, 2 * TILE)]
            serial = part(0, blocks) if block_ranges else part(0, p)
            slots_at = [(bd.ctypes.data,) for bd in bands]
            job = native_thunk(lib, opts, "direct", args, (19, 20, 21, 22), cut, serial, (3,), slots_at)
            thunks.append(("matmul", job))
        else:
            extent = blocks if block_ranges else p
            thunks.append(("matmul", split_job(opts, part, block_ranges or pixel_ranges, extent)))
        if requant is None:
            thunks += _epilogue(opts, out, b)
    return thunks


def _planes_conv(lib, x, wp, out, opts, requant) -> list:
    """A 1x1 stride-1 convolution from the NCHW planes to the NCHW result
    (``xr_conv1x1_planes_u8s8``), its threads' parts rectangles of pixels by 16-channel blocks
    (``planes_cut``)."""
    n, c, h, wd = x.shape
    o, p, kp, blocks = out.shape[1], h * wd, wp.shape[1] * 4, wp.shape[0]
    parts = pool_chunks(opts)
    epi, dst, held = (None, out, []) if requant is None else requant
    epi_ptr = None if epi is None else ctypes.addressof(epi)
    native = opts.pool is not None and opts.pool.native
    cut = planes_cut(p, blocks, parts, NATIVE_PARTS_PER_THREAD if native else 1)
    thunks: list[tuple[str, Any]] = []
    for b in range(n):
        xb, ob = x[b], dst[b]

        def make(q0: int, q1: int, b0: int, b1: int, xb=xb, ob=ob) -> Any:
            args = (xb.ctypes.data, wp.ctypes.data, ob.ctypes.data, c, p, kp, o, b0, b1, q0, q1, epi_ptr)

            return c_call(lib.xr_conv1x1_planes_u8s8, *args, keep=(xb, wp, ob, epi, *held))

        if native:
            args = [xb.ctypes.data, wp.ctypes.data, ob.ctypes.data, c, p, kp, o, 0, blocks, 0, p, epi_ptr]
            thunks.append(("matmul", native_thunk(lib, opts, "planes", args, (9, 10, 7, 8), cut, make(0, p, 0, blocks))))
        else:

            def of_parts(lo: int, hi: int, make=make) -> Any:  # parts [lo, hi) of the cut: one, or all
                return make(*cut[lo]) if hi == lo + 1 else make(0, p, 0, blocks)

            thunks.append(("matmul", split_job(opts, of_parts, [(i, i + 1) for i in range(len(cut))], len(cut))))
        if requant is None:
            thunks += _epilogue(opts, out, b)
    return thunks


PART_COST = 2
"""A part's fixed cost in ``planes_cut``'s units (16 pixels by 16 channels): claiming it, its
weights and the first pixels' loads."""

PART_UNITS = 8
"""``planes_cut``'s least units (16 pixels by 16 channels) a part when the cut is fine."""


def planes_cut(p: int, blocks: int, threads: int, per_thread: int) -> list[tuple[int, int, int, int]]:
    """The parts (q0, q1, b0, b1) of ``xr_conv1x1_planes_u8s8``'s ``p`` pixels by ``blocks``
    16-channel blocks for ``threads`` threads taking parts from one counter: a grid of pixel
    ranges (multiples of 16) by block ranges, of ``threads * per_thread`` parts where the work
    (groups of 16 pixels times blocks) has ``PART_UNITS`` units a part for that many (so a
    thread that starts late leaves its share to the others), whose parts the threads finish
    soonest (the next part to the least loaded thread; a part costs its units plus
    ``PART_COST``). A 14x14 image's 13 groups cut by pixels alone gave two threads 3 parts, one
    thread two of them; by blocks each thread takes half the channels. Ties go to fewer block
    ranges (each pixel's planes read by fewer parts)."""
    groups = -(-p // 16)
    most = threads * per_thread
    least = max(1, min(most, groups * blocks // PART_UNITS))
    if threads < 2 or least < 2:
        return [(0, p, 0, blocks)]
    best = None
    for nb in range(1, min(blocks, most) + 1):
        for ng in range(1, min(groups, most // nb) + 1):
            if nb * ng < least:
                continue
            bs = even_ranges(blocks, nb)
            qs = [(lo, min(hi, p)) for lo, hi in even_ranges(groups * 16, ng, 16)]
            parts = [(q0, q1, b0, b1) for q0, q1 in qs for b0, b1 in bs]
            load = [0] * threads
            for q0, q1, b0, b1 in parts:  # claimed in turn: the least loaded thread takes the next
                load[load.index(min(load))] += -(-(q1 - q0) // 16) * (b1 - b0) + PART_COST
            key = (max(load), nb)
            if best is None or key < best[0]:
                best = (key, parts)
    return best[1] if best is not None else [(0, p, 0, blocks)]


def _block_ranges(p: int, blocks: int, pixel_ranges: list[tuple[int, int]]) -> list[tuple[int, int]] | None:
    """Ranges of 16-channel blocks for the threads of a tiled convolution, one per pixel range
    (so one tile buffer each), when that cut is the shorter: the product runs 8 pixels at a
    time, so a small image cuts unevenly by pixels (7x7: 32 and 17 of 49, the first thread's
    4 groups of 8 against 3) and evenly by channels (each thread all 7 groups, half the
    blocks). None: the threads share the pixels."""
    count = min(len(pixel_ranges), blocks)
    if count < 2:
        return None
    by_pixels = max(-(-(hi - lo) // 8) for lo, hi in pixel_ranges) * blocks
    by_blocks = -(-p // 8) * -(-blocks // count)
    if by_blocks * 10 > by_pixels * 9:  # not a tenth shorter: the pixels (each row made once)
        return None
    return even_ranges(blocks, count)


class NativeJob(ctypes.Structure):
    """``xr_job`` of ``int8_gemm.c``: a kernel's arguments, and those each part and each
    thread's slot set (``native_thunk``)."""

    _fields_ = [
        ("kind", ctypes.c_int64), ("args", ctypes.c_int64 * 28),
        ("n_part", ctypes.c_int64), ("part_at", ctypes.c_int64 * 4), ("part_vals", ctypes.c_void_p),
        ("n_slot", ctypes.c_int64), ("slot_at", ctypes.c_int64 * 2), ("slot_vals", ctypes.c_void_p),
    ]  # fmt: skip


NATIVE_KINDS = {"tiles": 0, "planes": 1, "gemm": 2, "rows": 3, "strided": 4, "depthwise": 5, "depthwise_plane": 6, "qlinear_add_fma": 7,
                "direct": 8}  # fmt: skip
"""The kernels ``xr_job_part`` calls, by ``NativeJob.kind``."""


def native_thunk(lib, opts, kind: str, args: list, part_at: tuple, parts: list[tuple], serial: Any,
                 slot_at: tuple = (), slot_vals: list[tuple] | None = None) -> Any:  # fmt: skip
    """A thunk running the kernel ``kind`` once per part on the pool's threads without the
    GIL (``WorkerPool.run_native``; ``args``: its arguments as ints, ``part_at``: the indexes
    each part's values in ``parts`` replace, ``slot_at``/``slot_vals``: those of each thread's
    slot, one tuple per slot), or ``serial`` (the kernel over the whole range: one-thread
    runs). ``serial`` when the pool cannot run native jobs or there is one part."""
    pool = opts.pool
    if pool is None or not pool.native or len(parts) <= 1:
        return serial
    job = NativeJob()
    job.kind = NATIVE_KINDS[kind]
    for i, v in enumerate(args):
        job.args[i] = int(v or 0)
    pv = np.ascontiguousarray(parts, np.int64)
    sv = np.ascontiguousarray(slot_vals or [(0,)], np.int64)
    job.n_part, job.part_vals = len(part_at), pv.ctypes.data
    for i, at in enumerate(part_at):
        job.part_at[i] = at
    job.n_slot, job.slot_vals = len(slot_at), sv.ctypes.data
    for i, at in enumerate(slot_at):
        job.slot_at[i] = at
    fn = ctypes.cast(lib.xr_job_part, ctypes.c_void_p).value
    call = functools.partial(pool.run_native, fn, ctypes.addressof(job), len(parts),
                             len(slot_vals) if slot_vals else pool.threads, serial)  # fmt: skip

    def run() -> None:
        call()
        keep_alive(job, pv, sv)  # the serial thunk holds the kernel's arrays

    # what join_steps (runtime/native/steps.py) chains into one C call with the next jobs
    run.native_job = (pool, fn, ctypes.addressof(job), len(parts), call.args[3])  # type: ignore[attr-defined]
    return run


def native_cut(extent: int, opts, align: int = 1, least: int = 1) -> list[tuple[int, int]]:
    """A native job's parts of ``extent``: ``NATIVE_PARTS_PER_THREAD`` per thread, each at
    least ``least`` units long, boundaries multiples of ``align``."""
    parts = pool_chunks(opts) * NATIVE_PARTS_PER_THREAD
    return even_ranges(extent, max(1, min(parts, extent // max(least, 1))), align)


def keep_alive(*arrays: Any) -> None:
    """Referenced by a thunk so the arrays behind its raw pointers outlive it."""


PLANE_BYTES = 256
"""Largest input plane (``h * w`` bytes) a depthwise convolution holds in registers
(``xr_depthwise_plane_u8s8``: four 64-byte registers)."""


def plane_tables(h: int, w: int, oh: int, ow: int, kh: int, kw: int, strides, dilation, pt: int, pl: int):
    """``xr_depthwise_plane_u8s8``'s tables for one geometry: (idx, pad, chunks). The kernel's
    ``kh * kw`` taps, row-major, are cut into ``chunks`` groups of four; for each group of 16
    output pixels (row-major over the whole ``oh x ow`` output) and chunk, ``idx`` holds the
    plane byte each lane's four taps read (64 bytes: lane l's tap b at byte 4l + b) and ``pad``
    a 64-bit mask of the bytes whose tap lies outside the image. Taps past the kernel (zero
    weights) and lanes past the output read byte 0."""
    (sh, sw), (dh, dw) = strides, dilation
    taps = kh * kw
    chunks = -(-taps // 4)
    groups = -(-(oh * ow) // 16)
    q = np.arange(groups * 16).reshape(groups, 1, 16, 1)  # output pixel of each lane
    t = np.arange(chunks * 4).reshape(1, chunks, 1, 4)  # tap of each byte
    iy = (q // ow) * sh + (t // kw) * dh - pt
    ix = (q % ow) * sw + (t % kw) * dw - pl
    real = (q < oh * ow) & (t < taps)
    inside = (iy >= 0) & (iy < h) & (ix >= 0) & (ix < w)
    idx = np.where(real & inside, iy * w + ix, 0).astype(np.uint8).reshape(groups * chunks, 64)
    bits = (real & ~inside).reshape(groups * chunks, 64).astype(np.uint64)
    pad = (bits << np.arange(64, dtype=np.uint64)).sum(axis=1, dtype=np.uint64)
    return np.ascontiguousarray(idx), np.ascontiguousarray(pad), chunks


def _plane_weights(w: np.ndarray, chunks: int) -> np.ndarray:
    """(C, 1, kh, kw) int8 weights as ``xr_depthwise_plane_u8s8`` reads them: per channel
    ``chunks`` int32 words, four taps each in row-major order (zero past the kernel)."""
    c = w.shape[0]
    flat = np.zeros((c, chunks * 4), np.int8)
    flat[:, : w[0].size] = w.reshape(c, -1)
    return np.ascontiguousarray(flat).view(np.int32)


def _depthwise(op, x, w, out, opts, padding=None, pv: int = 0, requant=None) -> list | None:
    """groups = channels, one output channel each, uint8 x int8: the C direct kernel (no
    scratch); with ``requant`` it writes the 8-bit result row by row. Images of at most
    ``PLANE_BYTES`` pixels run ``xr_depthwise_plane_u8s8`` (the plane in registers, the output's
    pixels 16 to a register whatever their rows): ``xr_depthwise_u8s8`` takes an image row by
    row, so a 7x7 output fills 7 of a register's 16 lanes."""
    a = op.attrs
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    if not (a["groups"] == c == o and cg == 1) or (x.dtype, w.dtype) != (np.dtype(np.uint8), np.dtype(np.int8)):
        return None
    lib = vnni_library()
    if lib is None or not x.flags.c_contiguous:
        return None
    oh, ow = out.shape[2:]
    wc = np.ascontiguousarray(w)
    pt, pl = (padding or a["padding"])[:2]
    (sh, sw), (dh, dw) = a["strides"], a["dilation"]
    epi, dst, held = (None, out, []) if requant is None else requant
    epi_ptr = None if epi is None else ctypes.addressof(epi)
    plane = h * wd <= PLANE_BYTES and bool(lib.xr_depthwise_plane_available())
    kernel = lib.xr_depthwise_plane_u8s8 if plane else lib.xr_depthwise_u8s8
    tables: tuple = ()
    if plane:
        idx, pad, chunks = plane_tables(h, wd, oh, ow, kh, kw, (sh, sw), (dh, dw), pt, pl)
        wc, tables = _plane_weights(w, chunks), (idx, pad)
    opts.scratch += [wc, *tables]
    thunks: list[tuple[str, Any]] = []
    for b in range(n):
        xb, ob = x[b], dst[b]

        def arguments(c0: int, c1: int, xb=xb, ob=ob) -> tuple:
            if plane:
                return (xb.ctypes.data, wc.ctypes.data, ob.ctypes.data, h * wd, oh * ow, chunks, idx.ctypes.data,
                        pad.ctypes.data, c0, c1, pv, epi_ptr)  # fmt: skip
            return (xb.ctypes.data, wc.ctypes.data, ob.ctypes.data, h, wd, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl,
                    c0, c1, pv, epi_ptr)  # fmt: skip

        def make(c0: int, c1: int, xb=xb, ob=ob) -> Any:
            args = arguments(c0, c1, xb, ob)

            return c_call(kernel, *args, keep=(xb, wc, ob, epi, *tables, *held))

        # channel ranges taken by the pool's threads in C, without the GIL (a Python chunk
        # per thread cost about as much as a small image's whole depthwise step)
        thunks.append(("conv", native_thunk(lib, opts, "depthwise_plane" if plane else "depthwise", list(arguments(0, c)),
                                            (8, 9) if plane else (15, 16), native_cut(c, opts), make(0, c))))  # fmt: skip
        if requant is None:
            thunks += _epilogue(opts, out, b)
    return thunks


def max_pool(op, vals, out, ws, opts) -> list | None:
    """``nn.max_pool2d`` of 8-bit NCHW data (ResNet's and GoogLeNet's pools after the
    quantized stem): ``xr_max_pool_u8``/``_s8`` by channel ranges on the pool, the reference's
    maxima (padding is the dtype's lowest value, which never wins)."""
    (x,) = vals
    a = op.attrs
    if x.dtype not in _INT8 or out.dtype != x.dtype or x.ndim != 4:
        return None
    if a["layout"] != "NCHW" or (a.get("out_layout") or "NCHW") != "NCHW":
        return None
    if not (x.flags.c_contiguous and out.flags.c_contiguous):
        return None
    lib = vnni_library()
    if lib is None:
        return None
    kernel = lib.xr_max_pool_u8 if x.dtype == np.uint8 else lib.xr_max_pool_s8
    n, c, h, wd = x.shape
    oh, ow = out.shape[2:]
    geometry = (*a["pool_size"], *a["strides"], *a["dilation"], a["padding"][0], a["padding"][1])
    thunks: list[tuple[str, Any]] = []
    for b in range(n):
        xb, ob = x[b], out[b]

        def make(c0: int, c1: int, xb=xb, ob=ob) -> Any:
            args = (xb.ctypes.data, ob.ctypes.data, h, wd, oh, ow, *geometry, c0, c1)

            return c_call(kernel, *args, keep=(xb, ob))

        thunks.append(("pool", split_job(opts, make, even_ranges(c, min(pool_chunks(opts), c)), c)))
    return thunks


def dense(op, vals, out, ws, opts) -> list | None:
    """(u)int8 data (any leading dims) and a constant (u)int8 weight, int32 result.

    uint8 x int8 with a reduction of a multiple of 4 runs the VNNI product on the data's rows
    as they are (``_vnni_dense``, requantized in the product like the convolutions); other
    types run float32 SGEMM on exact chunks."""
    x, w = vals
    if x.dtype not in _INT8 or w.dtype not in _INT8 or out.dtype != np.int32:
        return None
    if len(opts.fixed) < 2 or not opts.fixed[1] or not out.flags.c_contiguous:
        return None
    k = x.shape[-1]
    m = int(np.prod(x.shape[:-1]))
    if (x.dtype, w.dtype) == (np.dtype(np.uint8), np.dtype(np.int8)) and k % 4 == 0 and x.flags.c_contiguous:
        lib = vnni_library()
        if lib is not None:
            return _vnni_dense(lib, op, x.reshape(m, k), w, out, opts)
    wf = np.ascontiguousarray(w.T, dtype=np.float32)  # (K, N)
    xf = np.empty((m, k), np.float32)
    tmp = np.empty((m, w.shape[0]), np.float32)
    chunks = _chunks(k)
    tmpi = np.empty((m, w.shape[0]), np.int32) if len(chunks) > 1 else None
    opts.scratch += [a for a in (wf, xf, tmp, tmpi) if a is not None]
    out2 = out.reshape(m, w.shape[0])

    def run() -> None:
        np.copyto(xf, x.reshape(m, k), casting="safe")
        for i, (k0, k1) in enumerate(chunks):
            np.matmul(xf[:, k0:k1], wf[k0:k1], out=tmp)
            _sum_into(out2, tmp, tmpi, i == 0)

    return [("matmul", run)]


def _vnni_dense(lib, op, x, w, out, opts) -> list:
    """The data's rows (M x K, K a multiple of 4) times the packed weights, channel blocks cut
    across the pool, the result pixel-major (M x N) in int32 or, with the function's requantize
    (``_fused_requant`` along the last axis), in 8 bits."""
    m, k = x.shape
    n = w.shape[0]
    wp = pack_weights(np.ascontiguousarray(w))
    opts.scratch.append(wp)
    blocks = wp.shape[0]
    requant = None if op is None else _fused_requant(op, out.shape, opts, axis=out.ndim - 1, bias_add=True)
    epi, dst, held = (None, out, []) if requant is None else requant
    epi_ptr = None if epi is None else ctypes.addressof(epi)

    def make(b0: int, b1: int) -> Any:
        args = (x.ctypes.data, wp.ctypes.data, dst.ctypes.data, m, k, n, b0, b1, epi_ptr, 1)

        return c_call(lib.xr_gemm_u8s8, *args, keep=(x, wp, dst, epi, *held))

    if opts.pool is not None and opts.pool.native:  # parts taken by the pool's threads in C, no GIL
        args = [x.ctypes.data, wp.ctypes.data, dst.ctypes.data, m, k, n, 0, 0, epi_ptr, 1]
        return [("matmul", native_thunk(lib, opts, "gemm", args, (6, 7), native_cut(blocks, opts), make(0, blocks)))]
    count = min(pool_chunks(opts), blocks)
    step = -(-blocks // count)
    ranges = [(i, min(blocks, i + step)) for i in range(0, blocks, step)]
    return [("matmul", split_job(opts, make, ranges, blocks))]


def fixed_point_multiply(op, vals, out, ws, opts) -> list | None:
    """``relay.fixed_point_multiply`` and ``fixed_point_multiply_per_axis`` (constant
    per-channel operands, shaped once) in place on an int64 scratch (the kernel's arithmetic),
    or with the requantize's tail as one C pass (``_requant_tail``)."""
    x = vals[0]
    if x.dtype != np.int32 or out.dtype != np.int32:
        return None
    params = _fpm_params(op, opts)
    if params is None:
        return None
    m, ls, total, axis = params
    return _requant_tail(op, x, m, ls, total, axis, opts) or _fpm(x, out, m, ls, total, opts)


def _fpm_params(op, opts) -> tuple[Any, Any, Any, int | None] | None:
    """(multiplier, left shift, right shift + 31, axis or None) of a ``fixed_point_multiply``
    (None for the power-of-two multiplier: the reference kernel shifts in int32 there) or a
    ``fixed_point_multiply_per_axis`` with constant operands (shaped along its axis)."""
    from xrelay.kernels.qnn import split_shift

    a = op.attrs
    ndim = len(shape_of_result(op))
    if op.RELAY_NAME == "fixed_point_multiply":
        if a["multiplier"] == 1 << 30:
            return None
        left, right = split_shift(a["shift"])
        return np.int64(a["multiplier"]), np.int64(left), np.int64(right + 31), None
    consts = [opts.constant(v) for v in op.operands[1:4]]
    if any(c is None for c in consts):
        return None
    m, ls, rs = (np.asarray(c) for c in consts)
    axis = a["axes"][0] % ndim
    shape = [1] * ndim
    shape[axis] = -1
    left = ls.astype(np.int64).reshape(shape) if a["is_lshift_required"] else np.int64(0)
    return m.astype(np.int64).reshape(shape), left, rs.astype(np.int64).reshape(shape) + 31, axis


def _single_user(v, name: str):
    """The only user of ``v`` when it is the relay op ``name`` (one use), else None."""
    if v.uses.get_length() != 1:
        return None
    user = next(iter(v.uses)).operation
    return user if getattr(user, "RELAY_NAME", None) == name else None


def _int8_destination(opts, cast, shape) -> tuple[np.ndarray, int] | None:
    """Where a claimed chain ending in ``cast`` to (u)int8 writes: the result's destination, or a
    compile-time buffer the function reads the claimed result from; with the C kind (0: int8,
    1: uint8). None when the destination is not a contiguous array of ``shape``."""
    res = cast.results[0]
    kind = 0 if cast.attrs["dtype"] == "int8" else 1
    dst = opts.dest.get(res)
    if dst is None:
        dst = np.empty(shape, np.int8 if kind == 0 else np.uint8)
        opts.scratch.append(dst)
        opts.produced[res] = dst
    if dst.shape != tuple(shape) or not dst.flags.c_contiguous:
        return None
    return dst, kind


def _tail_chain(r, opts) -> tuple[list, int, Any] | None:
    """``[add zero point] -> clip -> cast to (u)int8`` after a fixed-point multiply's result
    ``r``: (those ops, the zero point, the cast)."""
    claimed = []
    zp = 0
    add = _single_user(r, "add")
    if add is not None:
        other = add.operands[0] if add.operands[1] is r else add.operands[1]
        z = opts.constant(other)
        if z is None or np.size(z) != 1 or np.asarray(z).dtype != np.int32:
            return None
        zp = int(np.asarray(z).reshape(()))
        claimed.append(add)
        r = add.results[0]
    clip = _single_user(r, "clip")
    cast = None if clip is None else _single_user(clip.results[0], "cast")
    if cast is None or cast.attrs["dtype"] not in ("int8", "uint8"):
        return None
    return [*claimed, clip, cast], zp, cast


def _requant_tail(op, x, m, ls, total, axis, opts) -> list | None:
    """``fixed_point_multiply[_per_axis]`` -> [add zero point] -> clip -> cast to (u)int8, as one C
    pass (``xr_requant_tail``): the three later ops are claimed from the function."""
    from xrelay.kernels import KERNELS

    lib = vnni_library()
    if lib is None or not x.flags.c_contiguous or x.dtype != np.int32:
        return None
    tail = _tail_chain(op.results[0], opts)
    if tail is None:
        return None
    claimed, zp, cast = tail
    clip = claimed[-2]
    info = np.iinfo(np.int32)
    lo, hi = KERNELS["clip"](np.array([info.min, info.max], np.int32), **clip.attrs)
    found = _int8_destination(opts, cast, x.shape)
    if found is None:
        return None
    out, kind = found
    if axis is None:
        n, c, inner = 1, 1, x.size
        per_channel = 0
    else:
        n = int(np.prod(x.shape[:axis]))
        c = x.shape[axis]
        inner = int(np.prod(x.shape[axis + 1:]))
        per_channel = 1
    count = c if per_channel else 1
    arrays = [np.ascontiguousarray(np.broadcast_to(np.asarray(a, np.int64).reshape(-1), (count,))) for a in (m, ls, total)]
    opts.scratch += arrays
    opts.claimed += claimed
    args = (x.ctypes.data, out.ctypes.data, kind, n, c, inner, *(a.ctypes.data for a in arrays), per_channel, zp, int(lo), int(hi))

    return [("elementwise", c_call(lib.xr_requant_tail, *args, keep=(x, out, *arrays)))]


ROUND_EVEN = np.float32(12582912.0)
"""fake-quantization-to-integer's round-half-to-even constant (``ROUND_EVEN`` there)."""


def _round_half_even(op, opts) -> list | None:
    """After a float32 result ``op``: ``add 1.5*2^23 -> subtract 1.5*2^23 -> cast(i32)``, the
    lowered requantize's rounding half to even (those three ops), or None."""
    magic = lambda c: c.dtype == np.float32 and c.size == 1 and c.reshape(()) == ROUND_EVEN  # noqa: E731
    ops = [op]
    for name in ("add", "subtract"):
        step = _user_with(ops[-1].results[0], name, opts, magic)
        if step is None:
            return None
        ops.append(step[0])
    to_int = _single_user(ops[-1].results[0], "cast")
    if to_int is None or to_int.attrs["dtype"] != "int32":
        return None
    return [*ops[1:], to_int]


def _to_byte(op, opts) -> tuple[list, int, int, Any] | None:
    """After ``op``: ``cast(f32) -> add/subtract 1.5*2^23 -> cast(i32) -> clip -> cast((u)int8)``,
    the lowered requantize's tail: (those ops, the clip's bounds as int32 values, the last
    cast), or None."""
    from xrelay.kernels import KERNELS

    down = _single_user(op.results[0], "cast")
    if down is None or down.attrs["dtype"] != "float32":
        return None
    rounded = _round_half_even(down, opts)
    clip = None if rounded is None else _single_user(rounded[-1].results[0], "clip")
    cast8 = None if clip is None else _single_user(clip.results[0], "cast")
    if cast8 is None or cast8.attrs["dtype"] not in ("int8", "uint8"):
        return None
    info = np.iinfo(np.int32)
    lo, hi = KERNELS["clip"](np.array([info.min, info.max], np.int32), **clip.attrs)
    return [down, *rounded, clip, cast8], int(lo), int(hi), cast8


def _user_with(v, name: str, opts, value_check) -> tuple[Any, np.ndarray] | None:
    """``v``'s only user when it is ``name`` with ``v`` as its first operand and a fixed second
    operand passing ``value_check``: (the user, that operand's value)."""
    user = _single_user(v, name)
    if user is None or user.operands[0] is not v or len(user.operands) != 2:
        return None
    c = opts.constant(user.operands[1])
    if c is None or not value_check(np.asarray(c)):
        return None
    return user, np.asarray(c)


def _channel_layout(shape: tuple, c: np.ndarray) -> tuple[int, int, int, int] | None:
    """(n, channels, inner, per_channel) of a multiplier broadcasting to ``shape`` along one axis."""
    if c.size == 1:
        return 1, 1, int(np.prod(shape)), 0
    if c.ndim != len(shape) or sum(d != 1 for d in c.shape) != 1:
        return None
    axis = next(i for i, d in enumerate(c.shape) if d != 1)
    if c.shape[axis] != shape[axis]:
        return None
    return int(np.prod(shape[:axis])), shape[axis], int(np.prod(shape[axis + 1:])), 1


def _ort_chain(op, shape: tuple, opts) -> tuple | None:
    """The requantize fake-quantization-to-integer{onnxruntime=true} writes from ``op``, a
    ``cast`` of the int32 accumulator to float32: ``multiply(M) -> [add fzp] -> clip ->
    add(1.5*2^23) -> subtract(1.5*2^23) -> cast(i32) -> [add zp] -> cast((u)int8)``. Returns
    (the later ops, M, ``_channel_layout``, the clamp bounds as float32, the zero point, the
    last cast, the float32 zero point added before the clamp or 0)."""
    f32 = np.dtype(np.float32)
    step = _user_with(op.results[0], "multiply", opts, lambda c: c.dtype == f32)
    if step is None:
        return None
    mul, mult = step
    layout = _channel_layout(shape, mult)
    ops = [op, mul]
    fzp = 0.0
    # QLinearMul's form adds the zero point in float32 before the clamp (``Affine.product``)
    added = _user_with(mul.results[0], "add", opts, lambda c: c.dtype == f32 and c.size == 1)
    if added is not None:
        ops.append(added[0])
        fzp = float(added[1].reshape(()))
    clip = _single_user(ops[-1].results[0], "clip")
    if layout is None or shape_of_result(mul) != shape or clip is None:
        return None
    rounded = _round_to_8bit(clip, opts)
    if rounded is None:
        return None
    claimed, zp, cast8 = rounded
    flo, fhi = (float(np.float32(clip.attrs[k])) for k in ("a_min", "a_max"))  # the kernel's float32 bounds
    return [*ops, clip, *claimed], mult, layout, flo, fhi, zp, cast8, fzp


def _round_to_8bit(clip, opts) -> tuple[list, int, Any] | None:
    """After a float32 ``clip``: ``add/subtract 1.5*2^23 -> cast(i32) -> [add zp] -> cast((u)int8)``
    (fake-quantization-to-integer{onnxruntime=true}'s rounding half to even): (those ops, the
    zero point, the last cast)."""
    rounded = _round_half_even(clip, opts)
    if rounded is None:
        return None
    claimed = [clip, *rounded]
    to_int = rounded[-1]
    zp = 0
    step = _user_with(to_int.results[0], "add", opts, lambda c: c.dtype == np.int32 and c.size == 1)
    if step is not None:
        claimed.append(step[0])
        zp = int(step[1].reshape(()))
    cast8 = _single_user(claimed[-1].results[0], "cast")
    if cast8 is None or cast8.attrs["dtype"] not in ("int8", "uint8"):
        return None
    return [*claimed[1:], cast8], zp, cast8


def ort_requant(op, vals, out, ws, opts) -> list | None:
    """onnxruntime's requantize as fake-quantization-to-integer{onnxruntime=true} writes it
    (``_ort_chain``), claimed from this ``cast`` and run as one C pass (``xr_requant_float``):
    no float temporaries."""
    (x,) = vals
    if x.dtype != np.int32 or out.dtype != np.float32 or not x.flags.c_contiguous:
        return None
    lib = vnni_library()
    if lib is None:
        return None
    chain = _ort_chain(op, x.shape, opts)
    if chain is None:
        return None
    claimed, mult, layout, flo, fhi, zp, cast8, fzp = chain
    found = _int8_destination(opts, cast8, x.shape)
    if found is None:
        return None
    dst, kind = found
    n, c, inner, per_channel = layout
    m = np.ascontiguousarray(mult.reshape(-1), np.float32)
    opts.scratch.append(m)
    opts.claimed += claimed[1:]
    # cut into parts for the pool: channels (one batch element) or elements (one scale)
    extent = c if (n == 1 and per_channel) else x.size if not per_channel else 1

    def make(lo: int, hi: int) -> Any:
        if not per_channel:
            args = (x.ctypes.data + 4 * lo, dst.ctypes.data + lo, kind, 1, 1, hi - lo, m.ctypes.data, 0, fzp, flo, fhi, zp)
        elif n == 1:
            off = lo * inner
            args = (x.ctypes.data + 4 * off, dst.ctypes.data + off, kind, 1, hi - lo, inner,
                    m.ctypes.data + 4 * lo, 1, fzp, flo, fhi, zp)  # fmt: skip
        else:
            args = (x.ctypes.data, dst.ctypes.data, kind, n, c, inner, m.ctypes.data, 1, fzp, flo, fhi, zp)

        return c_call(lib.xr_requant_float, *args, keep=(x, dst, m))

    return [("elementwise", split_job(opts, make, even_ranges(extent, pool_chunks(opts)), extent))]


def _byte_function(v, opts) -> tuple[Any, np.ndarray, np.ndarray] | None:
    """``v`` as an elementwise function of ONE 8-bit value (``cast``, ``subtract zp``, ...: ops
    whose other operands are fixed single values, up to 8): (that value, its buffer, the 256
    int32 results by the reference kernels, indexed by the byte). None otherwise."""
    from xrelay.dialects.relay import RelayOp, dtype_of, numpy_dtype

    chain: list = []
    while not _is_8bit(v):
        owner = v.owner
        if not isinstance(owner, RelayOp) or getattr(owner, "PATTERN", None) not in _TABLE_PATTERNS or len(chain) >= 8:
            return None
        free = [o for o in owner.operands if opts.constant(o) is None]
        if len(owner.results) != 1 or len(free) != 1 or any(
            np.size(opts.constant(o)) != 1 for o in owner.operands if o is not free[0]
        ):  # fmt: skip
            return None
        chain.insert(0, owner)
        v = free[0]
    buf = opts.available(v)
    if not chain or buf is None or not buf.flags.c_contiguous:
        return None
    tables = _tables(v, chain, [chain[-1]], opts.constant, numpy_dtype, dtype_of)
    if tables is None or tables[chain[-1]].dtype != np.int32:
        return None
    return v, buf, tables[chain[-1]]


def _read_mode(shape: tuple, side: tuple) -> tuple[int, int] | None:
    """How an operand of ``side``'s shape broadcasts to ``shape``: (0, 0) the same shape, (2, 0)
    one value, (1, k) one value per row of the first ``k`` axes. None otherwise."""
    side = (1,) * (len(shape) - len(side)) + tuple(side)
    if side == tuple(shape):
        return 0, 0
    if all(d == 1 for d in side):
        return 2, 0
    k = max(i for i, d in enumerate(side) if d != 1) + 1
    if side[:k] != tuple(shape[:k]):
        return None
    return 1, k


def ort_mul(op, vals, out, ws, opts) -> list | None:
    """onnxruntime's QLinearMul as fake-quantization-to-integer{onnxruntime=true} writes it: the
    int32 ``multiply`` of two functions of 8-bit values (their zero points subtracted) and the
    float requantize after it (``_ort_chain``, one multiplier), claimed and run as one C pass
    (``xr_qlinear_mul``) reading the two 8-bit tensors through 256-entry tables: the int32
    operands, their product and the float steps are never made."""
    if out.dtype != np.int32 or len(op.operands) != 2 or not out.flags.c_contiguous:
        return None
    lib = vnni_library()
    cast = _single_user(op.results[0], "cast")
    if lib is None or cast is None or cast.attrs["dtype"] != "float32":
        return None
    shape = tuple(out.shape)
    chain = _ort_chain(cast, shape, opts)
    sides = [_byte_function(v, opts) for v in op.operands]
    if chain is None or chain[1].size != 1 or any(s is None for s in sides):
        return None
    modes = [_read_mode(shape, tuple(s[1].shape)) for s in sides]
    if any(m is None for m in modes) or len({k for m, k in modes if m == 1}) > 1:
        return None
    claimed, mult, _, flo, fhi, zp, cast8, fzp = chain
    found = _int8_destination(opts, cast8, shape)
    if found is None:
        return None
    dst, kind = found
    # rows: the per-row operand's (its value read once a row), else all but the last axis
    k = next((k for mode, k in modes if mode == 1), max(len(shape) - 1, 0))
    rows = int(np.prod(shape[:k], dtype=np.int64))
    inner = int(np.prod(shape[k:], dtype=np.int64))
    m = float(np.float32(mult.reshape(())))
    opts.claimed += [cast, *claimed[1:]]
    opts.unread += list(op.operands)
    opts.reads += [s[0] for s in sides]
    opts.result_unused = True
    (_, a, ta), (_, b, tb) = sides
    a8, b8 = a.view(np.uint8), b.view(np.uint8)
    opts.scratch += [ta, tb]

    def make(lo: int, hi: int) -> Any:
        args = (a8.ctypes.data, ta.ctypes.data, modes[0][0], b8.ctypes.data, tb.ctypes.data, modes[1][0],
                dst.ctypes.data, kind, inner, m, fzp, flo, fhi, zp, lo, hi)  # fmt: skip

        return c_call(lib.xr_qlinear_mul, *args, keep=(a8, b8, ta, tb, dst))

    return [("elementwise", split_job(opts, make, even_ranges(rows, pool_chunks(opts)), rows))]


def _add_side(v, opts) -> tuple[str, Any, float, float | None] | None:
    """One operand of ort_add's final float64 add, parsed backwards: ``("outer", q, ra, None)``
    for ``multiply(cast(q, f64), ra)``, ``("inner", q, rb, fixed)`` for
    ``cast(cast(add(multiply(cast(q, f64), rb), fixed), f32), f64)``."""
    f64 = np.dtype(np.float64)

    def owner(v, name):
        o = v.owner
        return o if getattr(o, "RELAY_NAME", None) == name else None

    def scalar(v, dtype):
        c = opts.constant(v)
        return None if c is None or c.dtype != dtype or c.size != 1 else float(c.reshape(()))

    def product(v):
        mul = owner(v, "multiply")
        cast = None if mul is None else owner(mul.operands[0], "cast")
        r = None if mul is None else scalar(mul.operands[1], f64)
        if cast is None or r is None or cast.attrs["dtype"] != "float64":
            return None
        q = cast.operands[0]
        return (q, r) if str(getattr(q.type, "element_type", "")) in ("i8", "ui8") else None

    found = product(v)
    if found is not None:
        return "outer", found[0], found[1], None
    up = owner(v, "cast")
    down = None if up is None else owner(up.operands[0], "cast")
    add = None if down is None else owner(down.operands[0], "add")
    if add is None or up.attrs["dtype"] != "float64" or down.attrs["dtype"] != "float32":
        return None
    fixed = scalar(add.operands[1], f64)
    found = product(add.operands[0])
    if fixed is None or found is None:
        return None
    return "inner", found[0], found[1], fixed


def _repeats_along(small: tuple, shape: tuple) -> bool:
    """Whether a tensor of shape ``small`` broadcast to ``shape`` repeats its values whole
    (its shape, leading 1s dropped, ends ``shape``): one period of the flattened result."""
    dims = list(small)
    while dims and dims[0] == 1:
        dims.pop(0)
    return len(small) <= len(shape) and bool(dims) and tuple(dims) == tuple(shape[len(shape) - len(dims) :])


def _repeating_side(c: np.ndarray | None, shape: tuple) -> np.ndarray | None:
    """A constant float64 side of ``ort_add`` that is float32 values (its inner multiply-add,
    folded) repeating along ``shape`` (``_repeats_along``): those values, contiguous float32.
    None for anything else."""
    if c is None or c.dtype != np.float64 or not _repeats_along(c.shape, shape):
        return None
    t = np.ascontiguousarray(c.astype(np.float32).reshape(-1))
    return t if np.array_equal(t.astype(np.float64), c.reshape(-1)) else None


def ort_add(op, vals, out, ws, opts) -> list | None:
    """QLinearAdd as fake-quantization-to-integer{onnxruntime=true} writes it (``ort_add``):
    the float64 add of the two sides, then ``cast(f32) -> add/subtract 1.5*2^23 -> cast(i32) ->
    clip -> cast((u)int8)``, claimed from this add and run as one C pass (``xr_qlinear_add``)
    from the two 8-bit inputs. The sides' own float64 ops, which precede the add, are dropped
    from the function when nothing else reads them (``Options.unread``)."""

    if out.dtype != np.float64 or len(vals) != 2:
        return None
    lib = vnni_library()
    if lib is None:
        return None
    sides = [_add_side(v, opts) for v in op.operands]
    period = None
    if sides.count(None) == 1 and any(s is not None and s[0] == "outer" for s in sides):
        # a constant side (a broadcast bias, folded): its float32 values repeat along the rows
        k = sides.index(None)
        period = _repeating_side(opts.constant(op.operands[k]), out.shape)
        if period is None:
            return None
        sides[k] = ("inner", None, 0.0, 0.0)
    if None in sides or sorted(s[0] for s in sides) != ["inner", "outer"]:
        return None
    outer, inner = sides if sides[0][0] == "outer" else sides[::-1]
    xq = opts.available(outer[1])
    yq = period if period is not None else opts.available(inner[1])
    inner_bytes = None
    if period is None and yq is not None and yq.shape != out.shape:
        # an 8-bit side broadcast over the leading axes (BERT's attention mask over the heads):
        # its inner multiply-adds, one period of them, are made before each run
        if not _repeats_along(yq.shape, out.shape) or not yq.flags.c_contiguous:
            return None
        inner_bytes, yq = yq, np.empty(yq.size, np.float32)
        period = yq
    if xq is None or yq is None or xq.shape != out.shape or (period is None and yq.shape != out.shape):
        return None
    if not (xq.flags.c_contiguous and yq.flags.c_contiguous):
        return None
    found = _to_byte(op, opts)
    if found is None:
        return None
    claimed, lo, hi, cast8 = found
    found = _int8_destination(opts, cast8, out.shape)
    if found is None:
        return None
    dst, okind = found
    opts.claimed += claimed
    # computed from the two 8-bit values: the float64 sides run no more when nothing else reads them
    opts.unread += list(op.operands)
    opts.reads += [outer[1]] + ([] if period is not None else [inner[1]])
    kinds = [0 if a.dtype == np.int8 else 1 for a in (xq, yq)]

    if period is not None:
        opts.scratch.append(yq)
        prepare = []
        if inner_bytes is not None:
            opts.reads.append(inner[1])
            wide = np.empty(yq.size, np.float64)
            opts.scratch.append(wide)
            flat, rb, fixed = inner_bytes.reshape(-1), inner[2], inner[3]

            def inner_sums() -> None:
                # float32(b * rB + fixed), as xr_qlinear_add computes each element's inner side
                np.multiply(flat, rb, out=wide)
                np.add(wide, fixed, out=wide)
                np.copyto(yq, wide, casting="unsafe")

            prepare.append(("elementwise", inner_sums))

        def make(i0: int, i1: int) -> Any:
            args = (xq.ctypes.data + i0, kinds[0], yq.ctypes.data, yq.size, i0, dst.ctypes.data + i0, okind,
                    i1 - i0, outer[2], int(lo), int(hi))  # fmt: skip

            return c_call(lib.xr_qlinear_add_const, *args, keep=(xq, yq, dst))

        return [*prepare, ("elementwise", split_job(opts, make, even_ranges(out.size, pool_chunks(opts)), out.size))]

    # onnxruntime's own float32 fused multiply-adds where they give the float64 form's bits for
    # every pair of input bytes (checked exhaustively, once): a third of the float64 form's time
    fma = bool(lib.xr_qlinear_add_fma_exact(*kinds, okind, outer[2], inner[2], inner[3], int(lo), int(hi)))

    def make(i0: int, i1: int) -> Any:
        if fma:
            args = (xq.ctypes.data + i0, kinds[0], yq.ctypes.data + i0, kinds[1], dst.ctypes.data + i0, i1 - i0,
                    outer[2], inner[2], inner[3], int(lo), int(hi))  # fmt: skip
            kernel = lib.xr_qlinear_add_fma
        else:
            args = (xq.ctypes.data + i0, kinds[0], yq.ctypes.data + i0, kinds[1], dst.ctypes.data + i0, okind,
                    i1 - i0, outer[2], inner[2], inner[3], int(lo), int(hi))  # fmt: skip
            kernel = lib.xr_qlinear_add

        return c_call(kernel, *args, keep=(xq, yq, dst))

    if fma:  # element ranges taken by the pool's threads in C (a Python chunk cost more than a small add)
        bits = [int(np.array(v, np.float32).view(np.uint32)) for v in (outer[2], inner[2], inner[3])]
        args = [xq.ctypes.data, kinds[0], yq.ctypes.data, kinds[1], dst.ctypes.data, 0, out.size, *bits, int(lo), int(hi)]
        cut = native_cut(out.size, opts, 64, ADD_PART)
        return [("elementwise", native_thunk(lib, opts, "qlinear_add_fma", args, (5, 6), cut, make(0, out.size)))]
    return [("elementwise", split_job(opts, make, even_ranges(out.size, pool_chunks(opts)), out.size))]


ADD_PART = 4096
"""Fewest elements of a native QLinearAdd job's part (smaller adds run on one thread)."""


def shape_of_result(op) -> tuple:
    from xrelay.dialects.relay import shape_of

    return tuple(shape_of(op.results[0].type))


def _fpm(x, out, m, left, total, opts) -> list:
    """``((x << left) * m + 2**(total - 1)) >> total`` (rounding half up), int64, into ``out``."""
    t = np.empty(x.shape, np.int64)
    half = np.left_shift(np.int64(1), total - 1)
    opts.scratch.append(t)
    shift = np.any(left != 0)

    def run() -> None:
        np.copyto(t, x)
        if shift:
            np.left_shift(t, left, out=t)
        np.multiply(t, m, out=t)
        np.add(t, half, out=t)
        np.right_shift(t, total, out=t)
        np.copyto(out, t, casting="unsafe")

    return [("elementwise", run)]


def batch_matmul(op, vals, out, ws, opts) -> list | None:
    """(u)int8 ``a @ b^T`` per batch (attention's scores), int32: exact float32 chunks as dense."""
    a, b = vals
    if a.dtype not in _INT8 or b.dtype not in _INT8 or out.dtype != np.int32 or op.attrs["transpose_a"]:
        return None
    if not out.flags.c_contiguous or a.shape[0] != b.shape[0]:
        return None
    nb, m, k = a.shape
    n = out.shape[2]
    lib = vnni_library()
    if lib is not None and a.dtype == np.uint8 and k % 4 == 0 and a.flags.c_contiguous and b.flags.c_contiguous:
        return _vnni_batch_matmul(lib, op, a, b, out, bool(op.attrs["transpose_b"]), opts)
    af = np.empty(a.shape, np.float32)
    bf = np.empty((nb, k, n), np.float32)
    tmp = np.empty((m, n), np.float32)
    chunks = _chunks(k)
    tmpi = np.empty((m, n), np.int32) if len(chunks) > 1 else None
    opts.scratch += [x for x in (af, bf, tmp, tmpi) if x is not None]
    bt = b.transpose(0, 2, 1) if op.attrs["transpose_b"] else b

    def run() -> None:
        np.copyto(af, a, casting="safe")
        np.copyto(bf, bt, casting="safe")
        for i in range(nb):
            for j, (k0, k1) in enumerate(chunks):
                np.matmul(af[i, :, k0:k1], bf[i, k0:k1], out=tmp)
                _sum_into(out[i], tmp, tmpi, j == 0)

    return [("matmul", run)]


class BmmTerms(ctypes.Structure):
    """``xr_bmm_terms`` of ``int8_gemm.c``: the integer terms added to each sum of a batch product."""

    _fields_ = [("rows", ctypes.c_void_p), ("cols", ctypes.c_void_p),
                *[(f, ctypes.c_int64) for f in ("rstride", "cstride", "rcoef", "ccoef", "c0")]]  # fmt: skip


_I32 = np.dtype(np.int32)


class _Linear:
    """An int32 value of a function as ``acc * accumulator + sum(coef * array) + c0``, wrapping
    like numpy's int32: each array term ``(buffer, its shape as broadcast, coefficient)``."""

    def __init__(self, acc: int = 0, terms: list | None = None, c0: int = 0) -> None:
        self.acc, self.terms, self.c0 = acc, terms or [], c0

    def scaled(self, f: int) -> _Linear:
        return _Linear(self.acc * f, [(a, sh, c * f) for a, sh, c in self.terms], self.c0 * f)

    def plus(self, other: _Linear) -> _Linear:
        return _Linear(self.acc + other.acc, self.terms + other.terms, self.c0 + other.c0)


def _linear_of(v, acc, opts, used: list, depth: int = 0) -> _Linear | None:
    """``v`` (int32) as a ``_Linear`` of the product's result ``acc``: sums, differences and
    multiples by constant scalars of constants, the function's inputs (their buffers) and their
    ``expand_dims``/``reshape``. ``used`` collects the ops read; None for anything else."""
    from xrelay.dialects.relay import dtype_of, numpy_dtype

    if v is acc:
        return _Linear(acc=1)
    t = getattr(v, "type", None)
    if depth > 16 or getattr(t, "element_type", None) is None or numpy_dtype(dtype_of(t.element_type)) != _I32:
        return None
    shape = tuple(t.get_shape())
    c = opts.constant(v)
    if c is not None:
        c = np.asarray(c)
        if c.size == 1:
            return _Linear(c0=int(c.reshape(())))
        return _Linear(terms=[(np.ascontiguousarray(c, np.int32), shape, 1)])
    owner = getattr(v, "owner", None)
    name = getattr(owner, "RELAY_NAME", None)
    if name is None:  # an input of the function: its buffer, read when the kernel runs
        return _leaf(v, shape, opts)
    if name in ("add", "subtract"):
        x, y = (_linear_of(u, acc, opts, used, depth + 1) for u in owner.operands)
        if x is None or y is None:
            return None
        used.append(owner)
        return x.plus(y if name == "add" else y.scaled(-1))
    if name == "multiply":
        x, y = (_linear_of(u, acc, opts, used, depth + 1) for u in owner.operands)
        if x is None or y is None:
            return None
        for f, g in ((x, y), (y, x)):
            if f.acc == 0 and not f.terms:  # a constant scalar factor
                used.append(owner)
                return g.scaled(f.c0)
        return None
    if name in ("expand_dims", "reshape"):
        src = owner.operands[0]
        x = _linear_of(src, acc, opts, used, depth + 1)
        before = tuple(src.type.get_shape())
        if x is None or x.acc or any(sh != before for _, sh, _ in x.terms):
            return None
        used.append(owner)
        return _Linear(terms=[(a, shape, f) for a, _, f in x.terms], c0=x.c0)
    return _leaf(v, shape, opts)  # made by an earlier op: its buffer


def _leaf(v, shape: tuple, opts) -> _Linear | None:
    """A value the kernel reads as it is when it runs: an input or an earlier op's result."""
    buf = opts.available(v)
    if buf is None or buf.dtype != _I32 or not buf.flags.c_contiguous or buf.size == 1:
        return None
    return _Linear(terms=[(buf, shape, 1)])


def _bmm_terms(op, shape: tuple, opts) -> tuple[BmmTerms, Any, list] | None:
    """The int32 adds and subtracts after a batch product ``op`` (``nb x m x n``) of terms
    broadcast along its rows or columns -- its zero-point terms, ``- zb * rowsum(a)``,
    ``k * za * zb - za * colsum(b)`` as fake-quantization-to-integer writes them -- folded
    into ``xr_bmm_terms``: (the terms, the last op of the chain, arrays to keep alive). The
    chain's ops and those computing only its terms are claimed; None when there is no chain
    or a term is not one row array, one column array and constants."""
    nb, m, n = shape
    r, last, form, chain, used = op.results[0], None, _Linear(acc=1), [], []
    while True:
        user = _single_user(r, "add") or _single_user(r, "subtract")
        if user is None or shape_of_result(user) != tuple(shape):
            break
        read: list = []
        f = _linear_of(user.results[0], r, opts, read)
        if f is None or f.acc != 1:
            break
        form = form.plus(_Linear(terms=f.terms, c0=f.c0))  # r's own form, plus the user's terms
        chain.append(user)
        used += read
        r, last = user.results[0], user
    if last is None:
        return None
    rows, cols, keep = {}, {}, []
    for arr, sh, coef in form.terms:
        while len(sh) > 3 and sh[0] == 1:
            sh = sh[1:]
        full = (1,) * (3 - len(sh)) + sh
        if len(full) != 3 or full[0] not in (1, nb) or arr.size != int(np.prod(full)):
            return None
        if full[1:] == (m, 1):
            side, stride = rows, m
        elif full[1:] == (1, n):
            side, stride = cols, n
        else:
            return None
        key = (arr.ctypes.data, stride if full[0] == nb else 0)
        held = side.setdefault(key, [arr, 0])
        held[1] += coef
    if len(rows) > 1 or len(cols) > 1:
        return None
    t = BmmTerms()
    t.c0 = _wrap32(form.c0)
    for side, ptr, stride, coef in ((rows, "rows", "rstride", "rcoef"), (cols, "cols", "cstride", "ccoef")):
        for (address, step), (arr, f) in side.items():
            setattr(t, ptr, address)
            setattr(t, stride, step)
            setattr(t, coef, _wrap32(f))
            keep.append(arr)
    # the chain, and the ops computing its terms whose every use is claimed (users come
    # after their operands in `used`, so one pass from the end settles it)
    claimed = set(chain)
    for u in reversed(used):
        if u not in claimed and all(use.operation in claimed for use in u.results[0].uses):
            claimed.add(u)
    opts.claimed += [u for u in used if u in claimed]
    opts.scratch += keep
    return t, last, keep


def _wrap32(v: int) -> int:
    """``v`` modulo 2^32 as a signed int32 (the wrapping of numpy's int32 arithmetic)."""
    return (int(v) + 2**31) % 2**32 - 2**31


def _vnni_batch_matmul(lib, op, a, b, out, trans_b: bool, opts) -> list:
    """uint8 ``a`` times an 8-bit ``b`` (``b^T`` with ``trans_b``) per batch in the VNNI
    product (``xr_bmm_u8x8``: a uint8 ``b`` shifted into int8 and the shift given back from
    each row's sum, exact in int32), the batches cut between the pool's threads, each range
    with its own packing buffer. The function's zero-point terms after the product
    (``_bmm_terms``) are added in the kernel, and a per-tensor requantize after them
    (``_fused_requant``) runs on each row there, so the int32 sums never reach the arena."""
    nb, m, k = a.shape
    n = out.shape[2]
    pack_bytes = -(-n // 16) * 16 * k
    unsigned = int(b.dtype == np.uint8)
    found = _bmm_terms(op, out.shape, opts)
    terms, last, keep = found if found is not None else (None, op, [])
    dst, epi = out, None
    requant = _bmm_requant(last, out.shape, opts)
    if requant is not None:
        epi, dst, held = requant
        keep += held
    elif found is not None:
        res = last.results[0]
        dst = opts.dest.get(res)
        if dst is None:
            dst = np.empty(out.shape, np.int32)
            opts.scratch.append(dst)
            opts.produced[res] = dst
        if dst.shape != out.shape or not dst.flags.c_contiguous:
            raise AssertionError("a batch product's result is a contiguous array of its shape")  # _assign_destinations
        opts.result_unused = True
    t_ptr = None if terms is None else ctypes.addressof(terms)
    e_ptr = None if epi is None else ctypes.addressof(epi)

    def make(b0: int, b1: int) -> Any:
        pack = np.empty(pack_bytes, np.int8)
        acc = np.empty((m, n) if epi is not None else 1, np.int32)
        opts.scratch += [pack, acc]
        args = (a.ctypes.data, b.ctypes.data, unsigned, dst.ctypes.data, m, k, n, int(trans_b), b0, b1,
                pack.ctypes.data, t_ptr, e_ptr, acc.ctypes.data)  # fmt: skip

        return c_call(lib.xr_bmm_u8x8, *args, keep=(a, b, dst, pack, acc, terms, epi, *keep))

    return [("matmul", split_job(opts, make, even_ranges(nb, pool_chunks(opts)), nb))]


def _bmm_requant(last, shape: tuple, opts) -> tuple | None:
    """``_fused_requant`` of the batch product's int32 result ``last`` when ``xr_bmm_u8x8``'s
    rows can take it: one multiplier for the tensor, no int32 offset left, no bias add; the
    claims are undone otherwise."""
    before = (len(opts.claimed), len(opts.scratch), dict(opts.produced), opts.result_unused)
    found = _fused_requant(last, shape, opts, axis=len(shape) - 1)
    if found is None:
        return None
    epi = found[0]
    if not epi.per_channel and not epi.offset and not epi.add_t:
        return found
    del opts.claimed[before[0]:], opts.scratch[before[1]:]
    opts.produced.clear()
    opts.produced.update(before[2])
    opts.result_unused = before[3]
    return None


def cast(op, vals, out, ws, opts) -> list | None:
    """Integer to integer casts (the requantize epilogue's ``cast``): one copy, no temporary.

    Between integer dtypes numpy's unsafe copy wraps modulo 2**bits, as the reference's astype."""
    (x,) = vals
    if x.dtype.kind not in "iu" or out.dtype.kind not in "iu" or x.shape != out.shape:
        return None
    return [("elementwise", functools.partial(np.copyto, out, x, casting="unsafe"))]


def cumsum(op, vals, out, ws, opts) -> list | None:
    """float32 ``cumsum`` along one axis in C (``xr_cumsum_f32``: the sequential sums the
    reference computes, without numpy's slow strided accumulate), for the float reductions
    fake-quantization-to-integer{onnxruntime=true} writes in onnxruntime's order."""
    (x,) = vals
    a = op.attrs
    if x.dtype != np.float32 or out.dtype != np.float32 or x.shape != out.shape or a["dtype"] not in (None, "", "float32"):
        return None
    if a["axis"] is None or not (x.flags.c_contiguous and out.flags.c_contiguous) or np.shares_memory(x, out):
        return None
    lib = vnni_library()
    if lib is None:
        return None
    axis = a["axis"] % x.ndim
    outer, inner = int(np.prod(x.shape[:axis])), int(np.prod(x.shape[axis + 1 :]))
    args = (x.ctypes.data, out.ctypes.data, outer, x.shape[axis], inner, int(bool(a["exclusive"])))

    return [("other", c_call(lib.xr_cumsum_f32, *args, keep=(x, out)))]


def dequantize_sum(op, vals, out, ws, opts) -> list | None:
    """``qnn.dequantize_sum`` in C (``xr_dequantize_sum``): each byte's float32 value from a
    256-entry table made once with the reference ``qnn.dequantize`` (the same bits), added in
    the op's order straight from the 8-bit tensor (no float copy); the rows are cut between
    the pool's threads (each row's sum is one thread's, in order)."""
    from xrelay.dialects.qnn import DequantizeSumOp, sum_block
    from xrelay.kernels.qnn import dequantize

    x = vals[0]
    scale, zp = (opts.constant(v) for v in op.operands[1:])
    lib = vnni_library()
    if lib is None or scale is None or zp is None or x is None or not x.flags.c_contiguous:
        return None
    if out.dtype != np.float32 or not out.flags.c_contiguous or x.dtype not in _INT8:
        return None
    a = op.attrs
    first, last, _ = sum_block(DequantizeSumOp, x.ndim, a["axes"], a["order"])
    outer, n, inner = (int(np.prod(x.shape[i:j], dtype=np.int64)) for i, j in ((0, first), (first, last + 1), (last + 1, x.ndim)))
    byte = np.arange(256, dtype=np.uint8).view(x.dtype)  # index = the byte's bits
    table = np.ascontiguousarray(dequantize(byte, scale, zp, axis=-1, out_dtype="float32"), np.float32)
    opts.scratch.append(table)
    src = x.view(np.uint8)
    eigen = int(a["order"] == "eigen")

    def make(lo: int, hi: int) -> Any:
        args = (src.ctypes.data, table.ctypes.data, out.ctypes.data, n, inner, eigen, lo, hi)

        return c_call(lib.xr_dequantize_sum, *args, keep=(src, table, out))

    return [("other", split_job(opts, make, even_ranges(outer, pool_chunks(opts), 8), outer))]


def ort_layer_norm(op, vals, out, ws, opts) -> list | None:
    """``qnn.ort_layer_norm`` in C (``xr_ort_layer_norm``, the reference kernel's bits), its
    rows cut between the pool's threads."""
    x, gamma, beta = vals
    lib = vnni_library()
    arrays = (x, gamma, beta, out)
    if lib is None or any(a is None or a.dtype != np.float32 or not a.flags.c_contiguous for a in arrays):
        return None
    n = x.shape[-1]
    rows = x.size // n
    eps = float(op.attrs["epsilon"])

    def make(lo: int, hi: int) -> Any:
        args = (x.ctypes.data, gamma.ctypes.data, beta.ctypes.data, out.ctypes.data, n, eps, lo, hi)

        return c_call(lib.xr_ort_layer_norm, *args, keep=tuple(arrays))

    return [("other", split_job(opts, make, even_ranges(rows, pool_chunks(opts), 1), rows))]


def ort_gelu(op, vals, out, ws, opts) -> list | None:
    """``qnn.ort_gelu`` in C (``xr_ort_gelu``, the reference kernel's bits), by chunks of
    onnxruntime's 4096 values between the pool's threads."""
    from xrelay.kernels.qnn import ORT_GELU_CHUNK

    (x,) = vals
    lib = vnni_library()
    if lib is None or x is None or x.dtype != np.float32 or not x.flags.c_contiguous or not out.flags.c_contiguous:
        return None
    size = x.size
    chunks = -(-size // ORT_GELU_CHUNK)

    def make(lo: int, hi: int) -> Any:
        args = (x.ctypes.data, out.ctypes.data, size, lo * ORT_GELU_CHUNK, min(hi * ORT_GELU_CHUNK, size))

        return c_call(lib.xr_ort_gelu, *args, keep=(x, out))

    return [("other", split_job(opts, make, even_ranges(chunks, pool_chunks(opts), 1), chunks))]


def ort_softmax(op, vals, out, ws, opts) -> list | None:
    """``qnn.ort_softmax`` along the last axis in C (``xr_ort_softmax``, the reference kernel's
    bits), rows between the pool's threads; the table is made once here from the constant
    input scale."""
    from xrelay.kernels.qnn import ort_softmax_table

    x = vals[0]
    lib = vnni_library()
    params = [opts.constant(v) for v in op.operands[1:]]
    rank = x.ndim if x is not None else 0
    if lib is None or x is None or any(p is None for p in params) or op.attrs["axis"] % max(rank, 1) != rank - 1:
        return None
    if not x.flags.c_contiguous or not out.flags.c_contiguous or x.shape[-1] == 0:
        return None
    s_x, s_y, zp = (np.asarray(p).reshape(()) for p in params)
    d = x.shape[-1]
    rows = x.size // d
    table = ort_softmax_table(float(s_x), d)
    ys = float(np.floor(np.float32(1) / np.float32(s_y)))
    opts.scratch.append(table)

    def make(lo: int, hi: int) -> Any:
        args = (x.ctypes.data, out.ctypes.data, table.ctypes.data, d, ys, int(zp), lo, hi)

        return c_call(lib.xr_ort_softmax, *args, keep=(x, out, table))

    return [("other", split_job(opts, make, even_ranges(rows, pool_chunks(opts), 4), rows))]


def byte_row_sum(op, vals, out, ws, opts) -> list | None:
    """``sum(cast(q, int32))`` over the last axis, ``q`` 8-bit (the row sums of a quantized
    product's zero-point terms, ``qnn-canonicalize-ops``' ``sum(cast(x))``), summed from the
    bytes in C (``xr_rowsum_8bit``); the int32 copy is then not made (``Options.unread``)."""
    from xrelay.dialects.relay.ops import reduce_axes

    cast = op.operands[0].owner
    if getattr(cast, "RELAY_NAME", None) != "cast" or cast.attrs["dtype"] != "int32" or out.dtype != np.int32:
        return None
    q = opts.available(cast.operands[0])
    lib = vnni_library()
    if lib is None or q is None or q.dtype not in _INT8 or not q.flags.c_contiguous or q.ndim == 0 or q.shape[-1] == 0:
        return None
    try:
        axes = reduce_axes(q.ndim, op.attrs.get("axis"), bool(op.attrs.get("exclude", False)))
    except ValueError:
        return None
    if list(axes) != [q.ndim - 1] or not out.flags.c_contiguous or out.size != q.size // q.shape[-1]:
        return None
    n, rows = q.shape[-1], q.size // q.shape[-1]
    opts.unread.append(op.operands[0])
    opts.reads.append(cast.operands[0])

    def make(lo: int, hi: int) -> Any:
        args = (q.ctypes.data, int(q.dtype == np.int8), out.ctypes.data, n, lo, hi)

        return c_call(lib.xr_rowsum_8bit, *args, keep=(q, out))

    return [("other", split_job(opts, make, even_ranges(rows, pool_chunks(opts), 8), rows))]


def clip(op, vals, out, ws, opts) -> list | None:
    """Integer ``clip`` in place, with the reference kernel's bounds (ceil/floor, saturated)."""
    from xrelay.kernels import KERNELS

    (x,) = vals
    if x.dtype.kind not in "iu" or out.dtype != x.dtype or x.shape != out.shape:
        return None
    info = np.iinfo(x.dtype)
    lo, hi = KERNELS["clip"](np.array([info.min, info.max], x.dtype), **op.attrs)
    return [
        ("elementwise", functools.partial(np.maximum, x, lo, out=out)),
        ("elementwise", functools.partial(np.minimum, out, hi, out=out)),
    ]


__all__ = [
    "EXACT_K", "conv2d", "dense", "fixed_point_multiply", "conv_workspace_bytes", "reads_planes", "reads_rows",
    "pack_weights", "vnni_library", "cast", "clip", "cumsum", "dequantize_sum", "ort_gelu", "ort_layer_norm", "ort_mul",
    "ort_softmax", "byte_row_sum", "batch_matmul", "ort_requant", "ort_add",
]  # fmt: skip


# --------------------------------------------------------------------------------------------
# Unary functions of one 8-bit value as tables
# --------------------------------------------------------------------------------------------

_TABLE_PATTERNS = (0, 1)  # OpPattern.ELEMWISE, OpPattern.BROADCAST


def lookup_regions(ops: list, returned: set, fixed_value) -> dict:
    """The ops of a function that compute, elementwise, a function of ONE 8-bit value and
    constants of one element: whatever the chain (onnxruntime's dequantize -> sigmoid ->
    quantize -> QLinearMul of SiLU, hard-swish, a dequantized output, the float64 sides of
    QLinearAdd), each result it hands on is one of 256 values, so it is a table looked up by the
    8-bit value's byte (``xr_lookup8``), made here by running the chain's own reference kernels
    on the 256 values (the same bits as running them on the tensor). Reshapes (``VIEW_OPS``)
    join a chain as the identity: onnxruntime's dequantize -> GELU -> quantize around BERT's
    reshapes is one byte-to-byte table.

    ``ops``: the function's ops in order; ``returned``: the values it returns; ``fixed_value(v)``:
    a constant's value or None. Returns ``{op: (source value, table)}`` for every op of a
    chain of at least two ops: ``table`` None for an op whose result stays inside its chain
    (not computed), the 256 values for one whose result is used after it.
    """
    from xrelay.dialects.relay import RelayOp, dtype_of, numpy_dtype, shape_of

    if vnni_library() is None:  # (xr_lookup8 is in the int8 library)
        return {}
    source: dict = {}  # value -> the 8-bit value it is a function of
    members: dict = {}  # source -> its chain's ops in order
    for op in ops:
        if not isinstance(op, RelayOp) or len(op.results) != 1 or getattr(op, "STATEFUL", False):
            continue
        r = op.results[0]
        view = op.RELAY_NAME in VIEW_OPS  # the same elements in the same order: the identity
        if (getattr(op, "PATTERN", None) not in _TABLE_PATTERNS and not view) or not hasattr(r.type, "element_type"):
            continue
        found = None
        ok = True
        for v in op.operands[:1] if view else op.operands:
            c = None if v in source else fixed_value(v)
            if c is not None:
                if np.size(c) != 1:
                    ok = False
                    break
                continue
            if v in source:
                s = source[v]
            elif _is_8bit(v):
                s = v
            else:
                ok = False
                break
            if found is not None and s is not found:
                ok = False
                break
            found = s
        # (the other operands are single values: the result has the source's elements in order)
        if not ok or found is None or _count(shape_of(r.type)) != _count(shape_of(found.type)):
            continue
        source[r] = found
        members.setdefault(found, []).append(op)
    for s, chain in list(members.items()):
        cut = _qlinear_add_cut(chain, source, fixed_value)
        if cut is not None:
            members[s], members[cut[0]] = cut[1], cut[2]
    regions: dict = {}
    for s, chain in members.items():
        while chain and chain[-1].RELAY_NAME in VIEW_OPS:
            chain.pop()  # a view at the end stays a view of the table's result (a returned one writes no buffer)
        if len(chain) < 2:
            continue
        inside = set(chain)
        outputs = [
            op for op in chain
            if op.results[0] in returned or any(u.operation not in inside for u in op.results[0].uses)
        ]  # fmt: skip
        tables = _tables(s, chain, outputs, fixed_value, numpy_dtype, dtype_of)
        if tables is None:
            continue
        for op in chain:
            regions[op] = (s, None)
        for op, table in tables.items():
            regions[op] = (s, table)
    return regions


class _Constants:
    """``opts.constant`` for ``_add_side`` from a ``fixed_value`` function."""

    def __init__(self, fixed_value):
        self.constant = fixed_value


def _qlinear_add_cut(chain: list, source: dict, fixed_value) -> tuple | None:
    """A chain whose last op is a QLinearAdd side (``_add_side``: the float64 product of an
    8-bit value made inside the chain, read by an ``add`` outside it) is cut at that 8-bit
    value: ``(value, ops up to it, ops after it)``. Then the bytes are the first part's
    table output and ``ort_add`` runs the add from them (its float64 sides are not made);
    one chain through to the float64 side would leave the add no bytes to read (a QLinearMul
    then the attention mask's QLinearAdd). None when the chain is not of that form."""
    last = chain[-1]
    r = last.results[0]
    inside = set(chain)
    if not any(getattr(u.operation, "RELAY_NAME", None) == "add" and u.operation not in inside for u in r.uses):
        return None
    side = _add_side(r, _Constants(fixed_value))
    q = None if side is None else side[1]
    owner = getattr(q, "owner", None)
    if owner not in inside or owner is last:
        return None
    k = chain.index(owner)
    head, tail = chain[: k + 1], chain[k + 1 :]
    made = {q} | {op.results[0] for op in tail}
    # the tail reads only q, its own results and constants (a linear side, not a branch)
    for op in tail:
        for v in op.operands:
            if v not in made and (v in source or fixed_value(v) is None):
                return None
    return q, head, tail


def _count(shape) -> int:
    return int(np.prod(tuple(shape), dtype=np.int64))


def _is_8bit(v) -> bool:
    t = getattr(v, "type", None)
    return str(getattr(t, "element_type", "")) in ("i8", "ui8") and hasattr(t, "get_shape")


def _tables(s, chain, outputs, fixed_value, numpy_dtype, dtype_of) -> dict | None:
    """The 256-entry table of each output of the chain from ``s``, by the reference kernels;
    None when one of them cannot run on the table's shape."""
    from xrelay.kernels import KERNELS

    rank = max(len(v.type.get_shape()) for v in [s, *(op.results[0] for op in chain)])
    dt = np.int8 if str(s.type.element_type) == "i8" else np.uint8
    x = np.arange(256, dtype=np.uint8).view(dt).reshape((256,) + (1,) * max(rank - 1, 0))
    env = {s: x}
    try:
        for op in chain:
            if op.RELAY_NAME in VIEW_OPS:
                env[op.results[0]] = env[op.operands[0]]
                continue
            kernel = KERNELS.get(op.RELAY_NAME)
            if kernel is None:
                return None
            vals = [env[v] if v in env else np.asarray(fixed_value(v)) for v in op.operands]
            r = op.results[0]
            buf = np.empty(x.shape, numpy_dtype(dtype_of(r.type.element_type)))
            res = kernel(*vals, out=buf, **op.attrs)
            if res is not buf:
                np.copyto(buf, res, casting="unsafe")
            env[r] = buf
    except Exception:  # a kernel that needs the real shape (an axis): no table
        return None
    tables = {}
    for op in outputs:
        t = np.ascontiguousarray(env[op.results[0]].reshape(256))
        if t.dtype.itemsize not in (1, 2, 4, 8):
            return None
        tables[op] = t
    return tables


def lookup_thunk(src: np.ndarray, table: np.ndarray, out: np.ndarray, opts) -> Any:
    """``out = table[src]`` elementwise (``src`` 8-bit, read as bytes), chunked on the pool."""
    lib = vnni_library()
    size = table.dtype.itemsize
    if lib is None or not (src.flags.c_contiguous and out.flags.c_contiguous) or out.size != src.size:
        return None
    if size > 1 and np.may_share_memory(src, out):
        return None
    s8 = src.view(np.uint8)

    def make(lo: int, hi: int) -> Any:
        args = (s8.ctypes.data + lo, table.ctypes.data, out.ctypes.data + size * lo, size, hi - lo)

        return c_call(lib.xr_lookup8, *args, keep=(s8, table, out))

    parts = pool_chunks(opts) if src.size >= 2 * LOOKUP_PART else 1
    return split_job(opts, make, even_ranges(src.size, parts), src.size)


LOOKUP_PART = 65536
"""Bytes a thread looks up at least: ``xr_lookup8`` does 64 a cycle or two, so a smaller
tensor (a concatenation input's table, a QLinearMul side) costs less on the calling thread
than the hand-over of a half to another (measured: GoogLeNet's 27 tables)."""


def ort_quantize(op, vals, out, ws, opts) -> list | None:
    """onnxruntime's QuantizeLinear as fake-quantization-to-integer{onnxruntime=true} writes it,
    from this ``divide`` of a float32 tensor by a one-element scale: ``clip -> add/subtract
    1.5*2^23 -> cast(i32) -> [add zp] -> cast((u)int8) [-> constant nn.pad of the last two axes]``,
    claimed and run as one C pass (``xr_quantize_float``) writing the 8-bit (padded) result."""
    f32 = np.dtype(np.float32)
    x = vals[0]
    if len(vals) != 2 or x is None or x.dtype != f32 or out.dtype != f32 or not x.flags.c_contiguous:
        return None
    scale = opts.constant(op.operands[1])
    if scale is None or np.size(scale) != 1 or np.asarray(scale).dtype != f32 or x.ndim < 2:
        return None
    lib = vnni_library()
    clip = _single_user(op.results[0], "clip")
    if lib is None or clip is None:
        return None
    rounded = _round_to_8bit(clip, opts)
    if rounded is None:
        return None
    claimed, zp, cast8 = rounded
    claimed = [clip, *claimed]
    last, pads, padv = cast8, (0, 0, 0, 0), 0
    pad = _single_user(cast8.results[0], "nn.pad")
    if pad is not None and pad.operands[0] is cast8.results[0] and pad.attrs.get("pad_mode", "constant") == "constant":
        widths = [tuple(int(v) for v in p) for p in pad.attrs["pad_width"]]
        value = opts.constant(pad.operands[1]) if len(pad.operands) > 1 else None
        if value is not None and np.size(value) == 1 and all(w == (0, 0) for w in widths[:-2]) and min(sum(widths, ())) >= 0:
            (top, bottom), (left, right) = widths[-2:]
            pads, padv, last = (top, bottom, left, right), int(np.asarray(value).reshape(())), pad
            claimed.append(pad)
    h, w = x.shape[-2:]
    oshape = x.shape[:-2] + (h + pads[0] + pads[1], w + pads[2] + pads[3])
    res = last.results[0]
    dst = opts.dest.get(res)
    if dst is None:
        dst = np.empty(oshape, np.int8 if cast8.attrs["dtype"] == "int8" else np.uint8)
        opts.scratch.append(dst)
        opts.produced[res] = dst
    if dst.shape != oshape or not dst.flags.c_contiguous:
        return None
    opts.claimed += claimed
    opts.result_unused = True
    planes = int(np.prod(x.shape[:-2]))
    flo, fhi = (float(np.float32(clip.attrs[k])) for k in ("a_min", "a_max"))
    s = float(np.asarray(scale, f32).reshape(()))
    oh, ow = oshape[-2:]

    def make(p0: int, p1: int) -> Any:
        args = (x.ctypes.data + 4 * p0 * h * w, dst.ctypes.data + p0 * oh * ow, p1 - p0, h, w, s, flo, fhi, zp,
                *pads, padv & 0xFF)  # fmt: skip

        return c_call(lib.xr_quantize_float, *args, keep=(x, dst))

    return [("elementwise", split_job(opts, make, even_ranges(planes, pool_chunks(opts)), planes))]
