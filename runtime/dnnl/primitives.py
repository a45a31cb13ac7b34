"""The oneDNN backend: ``relay.compiler = "dnnl"`` functions as oneDNN primitives.

``plan_function(fn, module)`` reads a partitioned function (the calls of composite functions
``dnnl.conv2d_bias_relu``, ``dnnl.conv2d_bias_sum_relu``, ``dnnl.dense_bias``, ... and single
offloaded ops) and creates one oneDNN primitive descriptor per step:

* ``nn.conv2d`` (NCHW or NHWC data, OIHW/HWIO/HWOI/OHWI kernels, groups and depthwise,
  strides, dilation, padding), ``nn.conv1d`` (NCW or NWC data, OIW kernels; wav2vec2's
  feature encoder, Whisper's stem), ``nn.conv3d`` (NCDHW or NDHWC data, OIDHW kernels in
  any order; video models), ``nn.conv2d_transpose``/``nn.conv3d_transpose`` (oneDNN's
  deconvolution: grouped, strided, dilated, padded, the output padding taken off the end's
  padding; ONNX ``Col2Im``'s one-hot kernels) and ``nn.dense`` as convolution, deconvolution
  and matmul primitives whose
  bias and epilogue are oneDNN post-ops: ``relu``/``clip``/``sigmoid``/``tanh``/Relay's
  ``gelu`` (erf), ``swish`` and ``mish`` patterns as eltwise post-ops (a float32 swish that
  ends the epilogue as the shim's in-place SiLU pass after the primitive, ``silu_in_shim``),
  a residual ``add`` and a gate's ``multiply`` (a computed tensor of the output's shape) as
  binary post-ops reading it straight from the arena;
* ``nn.max_pool2d``/``nn.avg_pool2d``/``nn.global_avg_pool2d`` and the 3-D max and average
  pools (video and volume models; not in ceil mode), ``nn.softmax``,
  ``nn.layer_norm``, ``nn.instance_norm`` (channels first: a layer normalisation of its rows
  and a per-channel affine), ``nn.batch_matmul``, broadcasting ``add``/``multiply`` and unary
  ``relu``/``clip``/``sigmoid``/``tanh``/``sqrt``/``exp``/``abs``/``log``.

A 3x3 stride-1 float32 NHWC convolution (``winograd_in_dnnl``) runs as Winograd F(4x4, 3x3)
in three steps of the same run: the shim's input transform (the native kernels'
channels-last transform from ``native_nhwc.h``, on oneDNN's OpenMP threads) into 36 matrices
of tiles x channels, oneDNN's batched matmul by the transformed weights (computed once in
float64, reordered once into oneDNN's format), and the output transform with the bias, a
residual (the sum post-op) and ReLU into the destination; the two intermediate matrices are
workspace temporaries.

Activations are described with the arena tensors' own strides (plain layouts: channels-last
NHWC runs oneDNN's fast ``brgconv`` kernels, see ``dnnl_partition``); weights are described
as they are stored and reordered once, at bind time, into the format the primitive chose
(``format_tag any``). Scratch lives in the step's planned workspace: oneDNN's scratchpad
(``scratchpad_mode user``) at its start, then the temporaries between the steps of a
function with several (``FunctionPlan.workspace_bytes``, which ``dnnl_partition.state_scratch``
states before lowering). ``FunctionPlan.bind(ins, outs, ws)`` creates the memory objects over
those arrays and returns one thunk that runs every primitive of the function in one C call.

Anything else raises ``DnnlUnsupported`` and the executor runs the function on its native
kernels (``xrelay.runtime.native.fast_kernels``).
"""

from __future__ import annotations

import ctypes
import dataclasses
import math
import os
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue

from xrelay.dialects.relay import ConstantOp, RelayOp, dtype_of, numpy_dtype, shape_of
from xrelay.dialects.relay.constant import file_mapping_of
from xrelay.dialects.relay.ops import strided_slice_bounds
from xrelay.kernels.nn import explicit_pool_padding
from xrelay.runtime.dnnl.library import dnnl_library
from xrelay.runtime.dnnl.parts import (
    PART_WORK,
    conv_rows,
    parts_enabled,
    parts_for,
    rescue_ns,
    row_cuts,
    spin_ns,
)
from xrelay.runtime.native.fast_kernels import winograd_enabled, winograd_weights
from xrelay.runtime.native.movement import movement_patterns, split_movement
from xrelay.runtime.native.workspace import WINOGRAD_F4_MAX_AREA
from xrelay.runtime.npz import private_copy, release_pages
from xrelay.runtime.parallel import default_threads

__all__ = [
    "DnnlUnsupported", "FunctionPlan", "GEMM_CONV_ELTWISE_APART", "POINTWISE_MARGIN", "SMALL_WORK", "band_rows_choices", "batch_strides", "contiguous_strides", "is_view",
    "matmul_view", "measure_plans", "plan_function", "pointwise_eligible", "pointwise_mode", "refine_batches", "reshape_strides", "silu_in_shim", "view_back", "view_strides",
    "way_label", "way_of", "winograd_in_dnnl",
]  # fmt: skip


def _dense_rows_faster(impl: bytes) -> bool:
    """Whether a dense step whose matmul oneDNN made as ``impl`` (with its weight in the format
    "any") runs on the weight's own (N, K) rows instead: oneDNN's jit GEMM, its float32 matmul
    where it has no brgemm kernel (``_Reader._dense``)."""
    return impl.startswith(b"gemm")


def _dense_on_packed(impl: bytes) -> bool:
    """Whether a float32 dense step for which oneDNN made ``impl`` (its matmul without
    post-ops) runs on the shim's packed-weight kernel instead (``_Reader._packed_dense``):
    where oneDNN has only its jit GEMM (3.2 without AVX-512), which repacks the weight at
    every call. On an AMD EPYC (Zen 3, 2 cores) 128 x 768 -> 3072 with its bias took 5.03 ms
    there on two threads, 4.57 on the kernel; in the zoo BERT-base went from 1.02x to 0.80x
    onnxruntime, ViT-B/16 from 1.13x to 0.95x (``benchmarks/zoo.py``, with the GELU pass)."""
    return impl.startswith(b"gemm")


def _gemm_epilogue(post: list) -> tuple[list[tuple[int, float, float]], Any]:
    """The leading post-ops of ``post`` the packed kernel applies in its epilogue (one
    residual add, ReLUs and clips, at most ``_GEMM_OPS``): their (op, lo, hi) and the
    residual (or None); the rest run in place after the kernel."""
    ops: list[tuple[int, float, float]] = []
    residual = None
    for kind, what in post[:_GEMM_OPS]:
        if kind == "sum" and residual is None:
            ops.append((_GEMM_ADD, 0.0, 0.0))
            residual = what
        elif kind == "eltwise" and what[0] == _RELU and what[1] == 0.0:
            ops.append((_GEMM_CLIP, 0.0, math.inf))
        elif kind == "eltwise" and what[0] == _CLIP:
            ops.append((_GEMM_CLIP, float(what[1]), float(what[2])))
        else:
            break
    return ops, residual


def _gemm_kernel(lib: Any, m: int, n: int, k: int, threads: int, ops: list[tuple[int, float, float]],
                 block: int = 0) -> _Owned | None:  # fmt: skip
    """The shim's packed dense kernel (``xr_dnnl_gemm``) for ``m`` rows with the epilogue
    ``ops`` and ``block`` products a block (0: the kernel's choice for ``m`` rows), owned
    (None when the shim refuses it)."""
    handle = lib.xr_dnnl_gemm(
        m, n, k, threads, block, len(ops), (ctypes.c_int32 * _GEMM_OPS)(*[o[0] for o in ops]),
        (ctypes.c_float * _GEMM_OPS)(*[o[1] for o in ops]), (ctypes.c_float * _GEMM_OPS)(*[o[2] for o in ops]),
    )  # fmt: skip
    return _Owned(lib.xr_dnnl_gemm_free, handle) if handle else None


def packed_dense_enabled() -> bool:
    """Whether float32 dense steps may run on the shim's packed-weight kernel
    (``XRELAY_DNNL_PACKED_DENSE``, default on; ``0`` keeps oneDNN's matmul)."""
    return os.environ.get("XRELAY_DNNL_PACKED_DENSE", "1") != "0"


def _post_ops_on_reference(impl: bytes) -> bool:
    """Whether oneDNN chose its reference code (``impl``) for a convolution with post-ops:
    then it runs the convolution alone and the post-ops apart (``_Reader._conv``)."""
    return impl.startswith(b"ref")


class DnnlUnsupported(Exception):
    """oneDNN cannot run this function (the native kernels run it)."""


_CONVS = ("nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.conv2d_transpose", "nn.conv3d_transpose")
"""The convolutions oneDNN runs: the transposed ones as its deconvolution."""


# oneDNN's numbers (dnnl_api.h)
_BF16, _F32 = 2, 3
_TYPES = {"float32": _F32, "bfloat16": _BF16}
"""The element types oneDNN runs here (``dnnl_data_type_t``): bfloat16 where
``to-mixed-precision`` made it so (the CPU's AVX512_BF16 kernels, float32 accumulation)."""
_Q_SRC, _Q_WEIGHTS, _Q_DST, _Q_SCRATCH = 129, 131, 133, 136
_ARG_SRC, _ARG_SRC_1, _ARG_DST, _ARG_WEIGHTS, _ARG_WEIGHTS_TAIL, _ARG_BIAS = 1, 2, 17, 33, 34, 41
_ARG_SCALE, _ARG_SHIFT, _ARG_PACKED, _ARG_SCRATCHPAD = 51, 52, 64, 80
_ARG_MULTIPLE_SRC, _ARG_MULTIPLE_DST = 1024, 2048
_COPY_LEVELS = 8
_COPY_WIDTH = 5 + 3 * _COPY_LEVELS
"""A pattern's row of ``xr_dnnl_copies``' table: input, output, levels, the two start
offsets, then the levels' sizes, source steps and destination steps (``_COPY_LEVELS`` each)."""
_TAIL_CODES = {"add": 0, "subtract": 1, "multiply": 2, "maximum": 3, "minimum": 4}
"""The elementwise ops a strided copy runs on its way (``xr_dnnl_copies``' codes)."""
_COPY_ROW = 4096
"""Elements of a strided copy's row (its last level) above which the row is cut into a
level of shorter rows, so that the threads share a pattern of few long rows."""
_RELU, _TANH, _ABS, _SQRT, _LINEAR, _LOGISTIC, _EXP, _SWISH, _LOG = 32, 33, 36, 37, 38, 41, 42, 44, 45
_CLIP, _GELU_ERF, _MISH = 46, 49, 51
_HARDSIGMOID, _GELU_TANH, _HARDSWISH = 40, 43, 52
_GELU_C = math.sqrt(2 / math.pi)
"""GELU's tanh form: 0.5 x (1 + tanh(_GELU_C (x + 0.044715 x^3)))."""
_GELU_TANH_PASS = (2 * _GELU_C, 2 * _GELU_C * 0.044715)
"""The same as the shim's SiLU pass ``x / (1 + exp(-(alpha x + cubic x^3)))``: (alpha, cubic)."""
_POOL_MAX, _POOL_AVG_INCLUDE, _POOL_AVG_EXCLUDE = 511, 767, 1023
_BIN_ADD, _BIN_MUL = 131056, 131057
_GEMM_ADD, _GEMM_CLIP, _GEMM_OPS = 1, 2, 4
"""The packed kernel's epilogue ops (a residual add, a clip) and their most (packed_gemm.h)."""
GCONV_MAX_IN = 64
"""The most input channels a group of a convolution the shim's grouped kernel runs
(grouped_conv.h's ``GCONV_MAX_IN``)."""
_USE_SCALE, _USE_SHIFT = 2, 4
_ALIGN = 64

_UNARY = {"nn.relu": _RELU, "tanh": _TANH, "sigmoid": _LOGISTIC, "sqrt": _SQRT, "exp": _EXP,
          "abs": _ABS, "log": _LOG, "clip": _CLIP}  # fmt: skip
_BINARY = {"add": _BIN_ADD, "multiply": _BIN_MUL}


WINOGRAD_MIN_OUT = 14
"""``winograd_in_dnnl``: the smallest output height and width run as Winograd (below it the
36 transformed weight matrices, four times the kernel's bytes, cost more to read than the
multiplications saved)."""


def silu_in_shim() -> bool:
    """Whether a SiLU (``x * sigmoid(alpha x)``) or a GELU in its tanh form that ends a
    float32 convolution's or matmul's epilogue runs as the shim's in-place pass after the
    primitive (``XRELAY_DNNL_SILU=shim``, the default) rather than as oneDNN's
    ``eltwise_swish`` / ``eltwise_gelu_tanh`` post-op (``XRELAY_DNNL_SILU=postop``): oneDNN
    3.2's swish post-op costs about 0.35 ms more than its ReLU on a 1.2M-element output on
    the Xeon, the pass less, and its gelu_tanh 1.3 ms over GPT-2's 128 x 3072 on a Zen 3
    (see the runtime guide, "SiLU after a convolution")."""
    return os.environ.get("XRELAY_DNNL_SILU", "shim") != "postop"


def winograd_in_dnnl(c: int, o: int, oh: int, ow: int) -> bool:
    """Whether a 3x3 stride-1 float32 NHWC convolution with ``c`` input and ``o`` output
    channels and an ``oh x ow`` output runs as Winograd F(4x4, 3x3) around oneDNN's batched
    matmul (``XRELAY_DNNL_WINOGRAD=dnnl``, the default; see ``dnnl_partition.winograd_choice``
    for the other modes; ``XRELAY_WINOGRAD=0`` turns Winograd off everywhere): at least 16
    channels each way, outputs of at least ``WINOGRAD_MIN_OUT`` each way and at most
    ``WINOGRAD_F4_MAX_AREA`` pixels (larger maps run direct: the error budget)."""

    if os.environ.get("XRELAY_DNNL_WINOGRAD", "dnnl") != "dnnl" or not winograd_enabled():
        return False
    return min(c, o) >= 16 and min(oh, ow) >= WINOGRAD_MIN_OUT and oh * ow <= WINOGRAD_F4_MAX_AREA


POINTWISE_MARGIN = 0.95
"""``"measure"`` (``pointwise_mode``) takes the way ``"pointwise"`` for a function when its
measured time is below this fraction of oneDNN's: a close call keeps oneDNN's convolution, so
two builds on one machine seldom choose apart."""

POINTWISE_ROUNDS = 9
"""Alternated runs of each way that ``measure_plans`` takes the median of (after one)."""


def pointwise_mode() -> str:
    """How ``state_scratch`` runs the 1x1 convolutions the packed dense kernel can run
    (``pointwise_eligible``), from ``XRELAY_DNNL_POINTWISE``: ``measure`` (the default: a
    function's both ways are timed once per shape at build time, ``measure_plans``, and the
    kernel taken where it is faster by ``POINTWISE_MARGIN``), ``packed`` (always the kernel),
    ``dnnl`` (always oneDNN's convolution). oneDNN 3.2's ``brgconv_1x1`` on AVX2 runs some
    shapes at a third of its best (on an AMD EPYC, Zen 3: 1024 -> 1024 channels over 19 x 19
    pixels took 3.4x the kernel's time, 728 -> 728 1.3x) and others faster than the kernel
    (256 channels over 56 x 56: 0.8x); no rule of a few shapes told them apart."""
    mode = os.environ.get("XRELAY_DNNL_POINTWISE", "measure")
    if mode not in ("measure", "packed", "dnnl"):
        raise ValueError(f"XRELAY_DNNL_POINTWISE must be measure, packed or dnnl, not {mode!r}")
    return mode


def pointwise_eligible(attrs: Any, data_shape: Sequence[int], weight: np.ndarray, groups: int, types: set, bias: Any) -> bool:
    """Whether a convolution (its attributes ``attrs``, data of ``data_shape``) is a 1x1 one
    over channels-last data, stride 1, no padding, one group, all float32: the dense of its
    pixels' rows (N x H x W rows of C) by its (O, C) kernel, which the packed dense kernel
    runs (the way ``"pointwise"``)."""
    layout = attrs.get("data_layout")
    kernel_layout = attrs.get("kernel_layout") or ""
    if layout not in ("NHWC",) or (attrs.get("out_layout") or layout) != layout or groups != 1:
        return False
    if weight.ndim != 4 or sorted(kernel_layout) != sorted("OIHW"):
        return False
    if weight.shape[kernel_layout.index("H")] != 1 or weight.shape[kernel_layout.index("W")] != 1:
        return False
    if weight.shape[kernel_layout.index("I")] != data_shape[-1]:
        return False
    if any(int(v) != 1 for v in attrs["strides"]) or any(int(v) != 0 for v in attrs["padding"]):
        return False
    return types == {"float32"} and weight.dtype == np.float32 and (bias is None or bias.dtype == np.float32)


def _post_multiple(i: int) -> int:
    """``DNNL_ARG_ATTR_MULTIPLE_POST_OP(i) | DNNL_ARG_SRC_1``: the second operand of post-op i."""
    return 32768 * (i + 1) | _ARG_SRC_1


def _i64(values: Sequence[int]) -> Any:
    return (ctypes.c_int64 * max(len(values), 1))(*[int(v) for v in values])


class _Md:
    """A memory descriptor the Python side owns (freed with it)."""

    dims: list[int] | None = None
    strides: list[int] | None = None
    """The dims and element strides ``_md`` made it with (None: queried from a primitive)."""

    def __init__(self, lib: Any, handle: int | None, what: str):
        if not handle:
            raise DnnlUnsupported(f"oneDNN rejected {what} (status {lib.xr_dnnl_last_status()})")
        self.lib, self.handle = lib, handle

    def __del__(self) -> None:
        if getattr(self, "handle", None):
            self.lib.xr_dnnl_md_free(self.handle)
            self.handle = None

    @property
    def size(self) -> int:
        return int(self.lib.xr_dnnl_md_size(self.handle))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Md) and bool(self.lib.xr_dnnl_md_equal(self.handle, other.handle))

    __hash__ = None  # type: ignore[assignment]


def _md(
    lib: Any, dims: Sequence[int], strides: Sequence[int] | None, what: str, dtype: str = "float32"
) -> _Md:
    handle = lib.xr_dnnl_md(len(dims), _i64(dims), _TYPES[dtype], None if strides is None else _i64(strides))
    md = _Md(lib, handle, what)
    md.dims, md.strides = list(dims), None if strides is None else list(strides)
    return md


def _np_type(dtype: str) -> np.dtype:

    return numpy_dtype(dtype)


def _array_dtype(a: np.ndarray) -> str:

    if a.dtype.name == "bfloat16":  # ml_dtypes' (numpy has none)
        return "bfloat16"
    if a.dtype == np.float32:
        return "float32"
    raise DnnlUnsupported(f"oneDNN runs float32 and bfloat16 tensors, not {a.dtype}")


def _elem_strides(a: np.ndarray) -> list[int]:
    return [s // a.itemsize for s in a.strides]


def contiguous_strides(shape: Sequence[int]) -> list[int]:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return out[::-1]


def reshape_strides(dims: Sequence[int], strides: Sequence[int], shape: Sequence[int]) -> list[int] | None:
    """The element strides of a view ``shape`` of the strided tensor (``dims``, ``strides``)
    that holds the same elements in the same row-major order, or None if no strides can (as
    numpy's reshape without a copy): runs of old dimensions that are contiguous relative to
    each other are merged or split; size-1 dimensions get any stride."""
    if math.prod(dims) != math.prod(shape):
        return None
    old = [(d, s) for d, s in zip(dims, strides) if d != 1]
    new_dims = [d for d in shape if d != 1]
    out: list[int] = []
    i = j = 0
    while i < len(old) and j < len(new_dims):
        # the smallest groups of old and new dimensions with equal products
        i2, j2 = i + 1, j + 1
        po, pn = old[i][0], new_dims[j]
        while po != pn:
            if po < pn:
                po *= old[i2][0]
                i2 += 1
            else:
                pn *= new_dims[j2]
                j2 += 1
        for k in range(i, i2 - 1):  # the group's old dimensions must be one strided run
            if old[k][1] != old[k + 1][1] * old[k + 1][0]:
                return None
        stride = old[i2 - 1][1]
        group = []
        for d in reversed(new_dims[j:j2]):
            group.append(stride)
            stride *= d
        out += group[::-1]
        i, j = i2, j2
    it = iter(out)
    return [0 if d == 1 else next(it) for d in shape]


def permute_strides(dims: Sequence[int], strides: Sequence[int], axes: Sequence[int]) -> tuple[list[int], list[int]]:
    """``transpose(axes)`` of a strided tensor: the same bytes, dimensions and strides permuted."""
    return [dims[a] for a in axes], [strides[a] for a in axes]


def _dense_strides(dims: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether a strided view is the contiguous row-major tensor of its dims (size-1
    dimensions' strides do not matter)."""
    return all(d == 1 or s == c for d, s, c in zip(dims, strides, contiguous_strides(dims)))


def _axes(op: Operation, rank: int) -> list[int]:
    axes = op.attrs.get("axes")  # type: ignore[attr-defined]
    return list(range(rank))[::-1] if not axes else [int(a) % rank for a in axes]


def refine_batches(batches: Sequence[Sequence[int]]) -> list[int] | None:
    """The coarsest batch dims that every one of ``batches`` (dims of equal product; an
    all-ones entry broadcasts and is skipped) splits into by merging adjacent dims: the
    union of their running products (``[64, 3]`` and ``[192]`` give ``[64, 3]``), or None
    where two cut the batch incompatibly (``[4, 6]`` and ``[6, 4]``)."""
    cuts: set[int] = set()
    total = None
    for dims in batches:
        if math.prod(dims) == 1:
            continue
        if total is not None and math.prod(dims) != total:
            return None
        total, acc = math.prod(dims), 1
        for d in dims:
            acc *= d
            cuts.add(acc)
    if total is None:
        return []
    out, prev = [], 1
    for c in sorted(cuts):
        if c % prev:
            return None
        if c != prev:
            out.append(c // prev)
        prev = c
    return out


def batch_strides(dims: Sequence[int], strides: Sequence[int], fine: Sequence[int]) -> list[int] | None:
    """The strides of a matmul operand's batch dims (``dims``, ``strides``) seen as the
    batch dims ``fine`` (``refine_batches``): a batch of one broadcasts (zero strides);
    else None where no strides give them."""
    if math.prod(dims) == 1:
        return [0] * len(fine)
    if not fine:
        return []
    out = reshape_strides(list(dims), list(strides), list(fine))
    if out is not None:
        for i in reversed(range(len(fine) - 1)):  # a dim of 1 as if dense around the next
            if fine[i] == 1:  # (oneDNN takes a zero stride for a broadcast: its slow code)
                out[i] = out[i + 1] * fine[i + 1]
    return out


def _dense_units(dims: Sequence[int], strides: Sequence[int]) -> list[int]:
    """``strides`` with each dim of size 1 given the stride a dense layout would have around
    the dims inside it (any stride addresses the same elements there, but oneDNN takes a
    zero stride for a broadcast and runs its reference matmul: SegFormer's one-head attention
    over a batch of one, 3136 x 49 x 32, took 140 ms instead of under one)."""
    out = list(strides)
    for i in reversed(range(len(dims))):
        if dims[i] == 1:
            out[i] = max((dims[j] * abs(out[j]) for j in range(i + 1, len(dims))), default=1)
    return out


def _batch_groups(fine: list[int], coarse: list[int]) -> list[tuple[int, int]] | None:
    """The runs of ``fine``'s dims whose products are ``coarse``'s dims in order (``coarse``
    merges adjacent dims of ``fine``), or None."""
    out: list[tuple[int, int]] = []
    i = 0
    for d in coarse:
        lo, p = i, 1
        while p < d and i < len(fine):
            p *= fine[i]
            i += 1
        if p != d:
            return None
        out.append((lo, i))
    while i < len(fine) and fine[i] == 1:  # trailing dims of 1 join the last run
        i += 1
    if out:
        out[-1] = (out[-1][0], i)
    return out if i == len(fine) else None


def _slice_bounds(op: Operation) -> list[tuple[int, int, int]] | None:
    """(begin, end, step) per axis of a static ``strided_slice`` with positive steps that
    selects something, else None."""
    a = op.attrs  # type: ignore[attr-defined]
    shape = list(shape_of(op.operands[0].type))
    if None in shape or 0 in shape_of(op.results[0].type):
        return None
    bounds = strided_slice_bounds(shape, a["begin"], a["end"], a["strides"], a["axes"], a["slice_mode"])
    if bounds is None or any(s <= 0 for _, _, s in bounds):
        return None
    return bounds


def is_view(op: Operation) -> bool:
    """An op whose result is its operand's elements seen through other strides: a reshape
    (``reshape``, ``squeeze``, ``expand_dims``, ``nn.batch_flatten``, ...), a ``transpose``,
    or a ``strided_slice`` with positive steps (strides and an offset: ``view_offset``)."""
    return isinstance(op, RelayOp) and len(op.operands) == 1 and len(op.results) == 1 and (
        op.RESHAPE_ONLY or op.RELAY_NAME == "transpose"
        or (op.RELAY_NAME == "strided_slice" and _slice_bounds(op) is not None)
    ) and dtype_of(op.operands[0].type) == dtype_of(op.results[0].type)


def view_strides(op: Operation, dims: Sequence[int], strides: Sequence[int]) -> list[int] | None:
    """The strides of ``op``'s result (``is_view``) read from its operand seen as (``dims``,
    ``strides``), or None if no strides give it."""
    if _relay(op) == "transpose":
        return permute_strides(dims, strides, _axes(op, len(dims)))[1]
    if _relay(op) == "strided_slice":
        bounds = _slice_bounds(op)
        return None if bounds is None else [st * s for st, (_, _, s) in zip(strides, bounds)]
    return reshape_strides(dims, strides, shape_of(op.results[0].type))


def matmul_view(
    op: Operation, dims: Sequence[int], strides: Sequence[int], grouped: bool = False
) -> tuple[list[int], list[int], bool] | None:
    """``view_strides`` for a view that a batched matmul reads: (dims, strides, grouped) of
    ``op``'s result seen from its operand (``dims``, ``strides``). A reshape that merges
    batch dims no single stride spans (Swin's windows and heads, each a strided run of the
    packed Q/K/V) keeps them apart, the rows and columns (the last two dims) unchanged:
    ``grouped``, the dims then split the batch finer than the result's shape
    (``refine_batches``). Of a grouped view only a reshape is seen again; None if no
    strides give the result."""
    shape = list(shape_of(op.results[0].type))
    reshape = isinstance(op, RelayOp) and bool(op.RESHAPE_ONLY)
    new = None if grouped and not reshape else view_strides(op, dims, strides)
    if new is not None:
        return shape, new, False
    if not (reshape and len(shape) > 2 and len(dims) > 2 and shape[-2:] == list(dims[-2:])):
        return None
    fine = refine_batches([dims[:-2], shape[:-2]])
    batch = None if fine is None else batch_strides(dims[:-2], strides[:-2], fine)
    if batch is None:
        return None
    return [*fine, *shape[-2:]], [*batch, *strides[-2:]], True


def view_offset(op: Operation, strides: Sequence[int]) -> int:
    """The element offset of ``op``'s result (``is_view``) from its operand's first element,
    the operand seen with ``strides``: a slice's begin; 0 for reshapes and transposes."""
    if _relay(op) != "strided_slice":
        return 0
    bounds = _slice_bounds(op)
    assert bounds is not None
    return sum(st * b for st, (b, _, _) in zip(strides, bounds))


def view_back(op: Operation, dims: Sequence[int], strides: Sequence[int]) -> list[int] | None:
    """``view_strides`` backwards: the strides of ``op``'s operand when its result is seen as
    (``dims``, ``strides``)."""
    in_shape = list(shape_of(op.operands[0].type))
    if _relay(op) == "strided_slice":
        return None  # the rest of the operand is not the result's
    if _relay(op) == "transpose":
        axes = _axes(op, len(in_shape))
        back = [0] * len(axes)
        for i, a in enumerate(axes):
            back[a] = strides[i]
        return back
    return reshape_strides(dims, strides, in_shape)


# --------------------------------------------------------------------------------------------
# What a step reads and writes
# --------------------------------------------------------------------------------------------


@dataclass
class _Value:
    """Where a value of the function lives: a function input or output, a constant, or a
    temporary in the workspace."""

    kind: str  # "in", "out", "const", "tmp"
    index: int = 0
    array: np.ndarray | None = None  # constants
    shape: tuple[int, ...] = ()
    offset: int = 0  # temporaries: bytes into the workspace
    dtype: str = "float32"
    elem_offset: int = 0
    """Elements from the buffer's start to the first one read (a slice read in place)."""


@dataclass
class _Step:
    name: str  # the composite or op, for the profile
    family: str
    pd: int
    args: list[tuple[int, Any]]  # (oneDNN argument kind, _Value or a reordered weight array)
    impl: str = ""
    weights: list[tuple[int, np.ndarray | None, _Md, _Md]] = field(default_factory=list)
    """(argument kind, stored constant, its md, the primitive's md): reordered at bind time."""
    logical: dict[int, tuple[list[int], list[int]]] = field(default_factory=dict)
    """Dims and element strides oneDNN sees for each activation argument (a view of the
    arena tensor: NHWC data is described as logical NCHW with channels-last strides)."""
    keep: list[Any] = field(default_factory=list)
    custom: bool = False
    """``pd`` is a kernel of the shim (a Winograd transform, ``xr_dnnl_wino``, or a
    concatenation, ``xr_dnnl_concat``), not a primitive descriptor: it runs as it is,
    marked by a negative argument count."""
    derived: bool = False
    """Its weights were computed here (Winograd's transformed weights): ``bind`` drops them
    once reordered, so the process does not hold them twice."""
    origins: dict[int, tuple[np.ndarray, tuple]] = field(default_factory=dict)
    """A derived weight's source by argument kind: (the stored constant it was computed from,
    how: ``("winograd", 4)``, ``("scaled", scale bytes)``). ``bind`` shares its reordered copy
    by its source, since each function derives its own array (RAFT's 12 flow updates read
    three 3x3 convolutions' weights 12 times each: 32 more reordered Winograd weights, 45 MB)."""
    macs: int = 0
    """Multiply-adds of a convolution or matmul (``FunctionPlan.work``)."""
    cut: dict[str, Any] | None = None
    """A 2-D convolution's or a dense step's parameters (``kind``: ``"conv"``, ``"dense"``),
    to make primitives over parts of its output rows (``FunctionPlan.bind``'s ``slots``,
    ``dnnl.parts``)."""


@dataclass
class FunctionPlan:
    """The primitives of one dnnl function; see the module docstring."""

    name: str
    steps: list[_Step]
    scratch_bytes: int
    temp_bytes: int
    keep: list[Any] = field(default_factory=list)
    descriptors: list[_Owned] = field(default_factory=list)
    """The steps' primitive descriptors and attributes: ``bind`` frees them once it made the
    primitives (each primitive holds its own copy), so a plan is bound once."""
    bound: bool = False
    tile_rows: int = 0
    """The most rows of 4x4 output tiles of a convolution run as Winograd (0: none)."""
    pointwise_convs: int = 0
    """Its 1x1 convolutions the packed dense kernel can run (``pointwise_eligible``): the
    way ``"pointwise"`` runs them there."""

    @property
    def workspace_bytes(self) -> int:
        return _round(self.scratch_bytes) + self.temp_bytes

    @property
    def work(self) -> int:
        """The function's work: per step, its multiply-adds or the elements its arguments
        hold, whichever is more (``SMALL_WORK``)."""
        total = 0
        for s in self.steps:
            held = sum(math.prod(dims) for dims, _ in s.logical.values())
            held += sum(stored.size for _, stored, _, _ in s.weights if stored is not None)
            total += max(s.macs, held)
        return total

    @property
    def impls(self) -> list[str]:
        return [s.impl for s in self.steps]

    @property
    def winograd(self) -> bool:
        """Whether a convolution runs as Winograd (the shim's transforms)."""
        return any(s.custom and s.impl.startswith("winograd") for s in self.steps)

    def bind(
        self,
        ins: Sequence[np.ndarray],
        outs: Sequence[np.ndarray],
        ws: np.ndarray | None,
        threads: int,
        shared: dict[tuple[int, tuple], tuple[weakref.ref, list[tuple[_Md, np.ndarray]]]] | None = None,
        slots: int = 0,
    ) -> Callable[[], None]:
        """Memory objects over ``ins``/``outs``/``ws`` and the reordered weights; the thunk
        that runs every step. ``shared`` (keyed by the stored weight's id, or a derived
        weight's source's id and derivation, ``_Step.origins``, with a weak reference to
        that array: a weight made for one bind is not kept alive) holds weights
        reordered by an earlier ``bind``: one of the same format is used again rather than
        reordered twice (the executor's plans of a function for all its threads and for
        one, and every function reading the weight). ``slots`` > 1 (a plan made for one
        thread): the thunk's ``parts_thunk`` runs the same steps with each big convolution
        cut in parts of its output rows for ``slots`` threads (``dnnl.parts``; None when no
        step was cut)."""
        lib = dnnl_library()
        assert lib is not None
        if self.bound:
            raise DnnlUnsupported(f"@{self.name}: bound already (its descriptors are freed)")
        if self.workspace_bytes and (ws is None or ws.nbytes < self.workspace_bytes):
            raise DnnlUnsupported(
                f"@{self.name}: needs a workspace of {self.workspace_bytes} bytes"
            )
        keep: list[Any] = [ins, outs, ws]
        shared = {} if shared is None else shared  # (the bands of a convolution share its weights)
        mems: list[int] = []
        keys: list[int] = []
        nargs: list[int] = []
        prims: list[int] = []
        cut: list[tuple[int, int, int, int] | None] = []  # per step: its parts' run entry
        for step in self.steps:
            reordered: dict[int, np.ndarray] = {}
            for key, stored, src_md, dst_md in step.weights:
                if stored is None:
                    raise DnnlUnsupported(f"@{self.name}: bound already (its derived weights are dropped)")
                source, how = step.origins.get(key, (stored, ()))
                ident = (id(source), how)
                entry = shared.get(ident)
                if entry is None or entry[0]() is not source:  # (a dead weight's id reused)
                    entry = shared[ident] = (weakref.ref(source), [])
                done = entry[1]
                same = [array for md, array in done if md == dst_md]
                if same:
                    reordered[key] = same[0]
                    keep.append(same[0])
                    continue
                reordered[key] = _reorder(lib, stored, src_md, dst_md, keep)
                release_pages(stored)  # a weight read from a mapped params file: now held once
                done.append((dst_md, reordered[key]))
            if step.derived:
                step.weights = [(key, None, src_md, dst_md) for key, _, src_md, dst_md in step.weights]
            count = 0
            for key, where in step.args:
                if isinstance(where, _Value):
                    ptr, md = self._pointer(lib, step, key, where, ins, outs, ws, keep)
                elif key == _ARG_SCRATCHPAD:
                    md = where
                    ptr = ws.ctypes.data if ws is not None else None
                else:
                    array, md = reordered[key], where
                    ptr = array.ctypes.data
                mem = lib.xr_dnnl_memory(md.handle, ptr)
                if not mem:
                    raise DnnlUnsupported(f"@{self.name}: oneDNN memory object refused")
                keep.append(_Owned(lib.xr_dnnl_memory_free, mem))
                keys.append(key)
                mems.append(mem)
                count += 1
            if step.custom:
                prims.append(step.pd)
                nargs.append(-count)
                if slots > 1 and step.cut is not None and parts_enabled():  # (the packed dense kernel)
                    whole = (step.pd, keys[-count:], mems[-count:])
                    handle = self._parts(lib, step, reordered, ins, outs, ws, keep, slots, whole)
                    cut.append(None if handle is None else (handle, len(prims) - 1, len(keys) - count, count))
                continue
            prim = lib.xr_dnnl_primitive(step.pd)
            if not prim:
                raise DnnlUnsupported(f"@{self.name}: oneDNN could not create {step.name}")
            keep.append(_Owned(lib.xr_dnnl_primitive_free, prim))
            prims.append(prim)
            nargs.append(count)
            if slots > 1 and step.cut is not None and parts_enabled():
                whole = (prim, keys[-count:], mems[-count:])
                handle = self._parts(lib, step, reordered, ins, outs, ws, keep, slots, whole)
                cut.append(None if handle is None else (handle, len(prims) - 1, len(keys) - count, count))
        # every primitive holds its own copy of its descriptor: the plan's go now, so the
        # next functions' descriptors reuse their memory (a third of a small model's oneDNN
        # allocations; ``bound``)
        self.bound = True
        for owned in self.descriptors:
            owned.release()
        c_prims = (ctypes.c_void_p * len(prims))(*prims)
        c_nargs = (ctypes.c_int32 * len(nargs))(*nargs)
        c_keys = (ctypes.c_int32 * len(keys))(*keys)
        c_mems = (ctypes.c_void_p * len(mems))(*mems)
        keep += [c_prims, c_nargs, c_keys, c_mems, self]
        run = lib.xr_dnnl_run
        count = len(prims)
        set_threads = lib.xr_dnnl_set_threads
        name = self.name

        def thunk() -> None:
            set_threads(threads)
            status = run(count, c_prims, c_nargs, c_keys, c_mems, None)
            if status:
                raise RuntimeError(f"oneDNN failed in @{name} (status {status})")

        thunk.keep = keep  # type: ignore[attr-defined]
        thunk.dnnl_run = (prims, nargs, keys, mems, threads)  # type: ignore[attr-defined]
        thunk.parts_thunk = None  # type: ignore[attr-defined]
        if any(c is not None for c in cut):
            # the same run with each cut step one entry of the shim's parts kind (its own
            # memories: one unused argument)
            p_prims, p_nargs, p_keys, p_mems = list(prims), list(nargs), list(keys), list(mems)
            for handle, i, first, count in sorted((c for c in cut if c is not None), key=lambda c: -c[1]):
                p_prims[i], p_nargs[i] = handle, -1
                p_keys[first : first + count] = [0]
                p_mems[first : first + count] = [0]
            proxy = SimpleNamespace(dnnl_run=(p_prims, p_nargs, p_keys, p_mems, threads), keep=keep)
            parted = run_together([proxy])
            parted.dnnl_run = proxy.dnnl_run  # type: ignore[attr-defined]
            parted.parts = sum(c is not None for c in cut)  # type: ignore[attr-defined]
            thunk.parts_thunk = parted  # type: ignore[attr-defined]
        return thunk

    def _pieces(
        self, lib: Any, step: _Step, keep: list[Any], descriptors: list[Any]
    ) -> list[tuple[int, dict, _Md | None]] | None:
        """``step`` (a convolution or dense step made for one thread) as primitive
        descriptors over parts of its output rows (``dnnl.parts``): (pd, {argument: (dims, strides, element
        offset)}, scratchpad md) per part, or None when it is not cut: too little work, a
        layout whose rows are not dense (NCHW), a part in the padding, or a part for which
        oneDNN picks another kernel than the step's (each part must compute its rows' bits
        as the uncut step does: the shim runs one or the other, run by run). The parts'
        descriptors and attributes go to ``descriptors`` (freed once their primitives exist)."""
        c = step.cut
        if c is None or not parts_enabled():
            return None
        if c["kind"] == "dense":
            return self._dense_pieces(lib, step, keep, descriptors)
        if c["kind"] == "packed":
            return self._packed_pieces(lib, step, keep)
        dst_dims, dst_st = step.logical[_ARG_DST]
        src_dims, src_st = step.logical[_ARG_SRC]
        if not all(st[2] >= max(st[1], st[3]) for st in (src_st, dst_st)):
            return None  # rows are not the outer dimension of an image (NCHW): no dense part
        images = dst_dims[0]
        work = max(step.macs, sum(math.prod(d) for d, _ in step.logical.values())) // images
        n = parts_for(work, dst_dims[2])
        if n < 2:
            return None
        pad = c["pad"]
        lib.xr_dnnl_set_threads(1)
        pieces = []
        for b, (r0, r1) in ((b, r) for b in range(images) for r in row_cuts(dst_dims[2], n, work)):
            rows = conv_rows(r0, r1, src_dims[2], c["kernel"], c["stride"], c["dilation"], pad[0])
            if rows is None:
                return None
            i0, i1, top, bottom = rows
            # one image's rows, described dense (oneDNN's fast kernels want a plain layout)
            s_dims = [1, src_dims[1], i1 - i0, *src_dims[3:]]
            d_dims = [1, dst_dims[1], r1 - r0, *dst_dims[3:]]
            s_st = [s_dims[2] * src_st[2], *src_st[1:]]
            d_st = [d_dims[2] * dst_st[2], *dst_st[1:]]
            views = {_ARG_SRC: (s_dims, s_st, b * src_st[0] + i0 * src_st[2])}
            for key in step.logical:
                if key != _ARG_SRC and key != _ARG_BIAS:
                    views[key] = (d_dims, d_st, b * dst_st[0] + r0 * dst_st[2])
            src_md = _md(lib, s_dims, s_st, "conv2d data", c["types"][0])
            dst_md = _md(lib, d_dims, d_st, "conv2d output", c["types"][1])
            keep += [src_md, dst_md]
            piece = self._piece(lib, step, views, d_dims, d_st, keep, descriptors, lib.xr_dnnl_conv, (0,), (
                src_md.handle, c["weights"].handle, c["bias"].handle if c["bias"] else None, dst_md.handle,
                2, _i64(c["strides"]), _i64(c["dilates"]), _i64([top, pad[1]]), _i64([bottom, pad[3]]),
            ))  # fmt: skip
            if piece is None:
                return None
            pieces.append(piece)
        return pieces

    def _piece(self, lib, step, views, d_dims, d_st, keep, descriptors, make, before, after) -> tuple | None:
        """One part of ``step``: its post-ops over the part's output rows (``d_dims``,
        ``d_st``: a residual's rows too), the primitive descriptor ``make(*before, attr,
        *after)`` gives, and its scratchpad md: (pd, views, scratchpad or None), or None
        when oneDNN makes none or picks another kernel than the step's."""
        c = step.cut
        post = [
            (kind, alg, alpha, beta, None if md is None else _md(lib, d_dims, d_st, "a residual", c["types"][1]))
            for kind, alg, alpha, beta, md in c["post"]
        ]
        attr = self._part_attr(lib, post)
        if attr is None:
            return None
        pd = make(*before, attr.handle, *after)
        if not pd:
            return None
        descriptors += [_Owned(lib.xr_dnnl_pd_free, pd), attr]
        keep.append(post)
        if (lib.xr_dnnl_impl(pd) or b"").decode() != step.impl:
            return None  # (the uncut step's kernel: the same sums in the same order)
        handle = lib.xr_dnnl_pd_md(pd, _Q_SCRATCH, 0)
        scratch = _Md(lib, handle, "scratchpad") if handle else None
        return pd, views, scratch if scratch is not None and scratch.size else None

    def _dense_pieces(
        self, lib: Any, step: _Step, keep: list[Any], descriptors: list[Any]
    ) -> list[tuple[int, dict, _Md | None]] | None:
        """``_pieces`` for a dense step (``[m, k]`` rows by a constant ``[k, n]``): parts of
        its ``m`` rows, each a matmul over those rows of the data, the output and any
        residual, with the step's reordered weights and bias (so each part streams the whole
        weight matrix: ``parts_for`` keeps parts big)."""
        c = step.cut
        (m, n), k = step.logical[_ARG_DST][0], c["k"]
        parts = parts_for(step.macs, m)
        if parts < 2:
            return None
        lib.xr_dnnl_set_threads(1)
        pieces = []
        for r0, r1 in row_cuts(m, parts, step.macs):
            rows = r1 - r0
            views = {_ARG_SRC: ([rows, k], [k, 1], r0 * k)}
            for key in step.logical:
                if key != _ARG_SRC and key != _ARG_BIAS:
                    views[key] = ([rows, n], [n, 1], r0 * n)
            src_md = _md(lib, [rows, k], [k, 1], "dense data", c["types"][0])
            dst_md = _md(lib, [rows, n], [n, 1], "dense output", c["types"][1])
            keep += [src_md, dst_md]
            bias = c["bias"].handle if c["bias"] else None
            piece = self._piece(lib, step, views, [rows, n], [n, 1], keep, descriptors, lib.xr_dnnl_matmul, (), (
                src_md.handle, c["weights"].handle, bias, dst_md.handle
            ))  # fmt: skip
            if piece is None:
                return None
            pieces.append(piece)
        return pieces

    def _packed_pieces(self, lib: Any, step: _Step, keep: list[Any]) -> list[tuple[int, dict, None]] | None:
        """``_pieces`` for a step on the packed dense kernel: parts of whole tiles of six rows,
        each the kernel for its rows over its rows of the data, their packed copy, the
        output and any residual (every output sums its products in the same order in any
        part: the uncut step's bits)."""
        c = step.cut
        (m, n), k, ops = step.logical[_ARG_DST][0], c["k"], c["ops"]
        tiles = -(-m // 6)
        parts = parts_for(step.macs, tiles)
        if parts < 2:
            return None
        pieces = []
        block = lib.xr_dnnl_gemm_block(step.pd)  # (the whole step's blocks: its sums' order)
        for t0, t1 in row_cuts(tiles, parts, step.macs):
            r0, r1 = 6 * t0, min(6 * t1, m)
            owned = _gemm_kernel(lib, r1 - r0, n, k, 1, ops, block)
            if owned is None:
                return None
            keep.append(owned)
            rows = r1 - r0
            views = {
                _ARG_SRC: ([rows, k], [k, 1], r0 * k), _ARG_DST: ([rows, n], [n, 1], r0 * n),
                _ARG_PACKED: ([-(-rows // 6) * 6 * k], [1], r0 * k),
            }  # fmt: skip
            if _ARG_SRC_1 in step.logical:
                views[_ARG_SRC_1] = ([rows, n], [n, 1], r0 * n)
            pieces.append((owned.handle, views, None))
        return pieces

    def _slot_bases(self, pieces: list, slots: int) -> list[int]:
        """Where each slot's scratchpad starts in the workspace: in the plan's own scratchpad
        as many as fit there (no other step of the plan runs while the parts do), the others
        after the temporaries."""
        most = max((_round(p[2].size) for p in pieces if p[2] is not None), default=0)
        if most == 0:
            return [0] * slots
        after = _round(self.scratch_bytes) + self.temp_bytes
        inside = min(slots, _round(self.scratch_bytes) // most)
        return [k * most for k in range(inside)] + [after + k * most for k in range(slots - inside)]

    def parts_workspace(self, slots: int) -> int:
        """The workspace this plan (made for one thread) needs to run its big convolutions
        in parts for ``slots`` threads (``bind``'s ``slots``): ``workspace_bytes`` and a
        scratchpad per slot (``dnnl_partition.state_scratch`` states the larger need)."""
        need = self.workspace_bytes
        if slots < 2:
            return need
        lib = dnnl_library()
        for step in self.steps:
            keep: list[Any] = []
            pieces = self._pieces(lib, step, keep, keep)
            if pieces is not None:
                most = max((_round(p[2].size) for p in pieces if p[2] is not None), default=0)
                need = max(need, self._slot_bases(pieces, slots)[-1] + most)
        return need

    def _parts(self, lib, step, reordered, ins, outs, ws, keep, slots, whole) -> int | None:
        """The shim's parts object running ``step`` in parts (``_pieces``) on ``slots``
        threads, each slot with its own scratchpad (``_slot_bases``), or None when it is
        not cut or the workspace has no room for the slots' scratchpads. ``whole``: the
        uncut step's primitive, argument kinds and memories (run instead while every
        worker sleeps)."""
        descriptors: list[Any] = []  # (freed on return: the parts' primitives hold copies)
        pieces = self._pieces(lib, step, keep, descriptors)
        if pieces is None:
            return None
        most = max((_round(p[2].size) for p in pieces if p[2] is not None), default=0)
        bases = self._slot_bases(pieces, slots)
        if most and (ws is None or bases[-1] + most > ws.nbytes):
            return None
        uncut: dict[int, tuple[int, _Md]] = {}  # the bias and other uncut operands, bound once
        part_prims: list[int] = []
        part_nargs: list[int] = []
        part_keys: list[int] = []
        per_slot: list[list[int]] = [[] for _ in range(slots)]
        for pd, views, scratch in pieces:
            prim = pd if step.custom else lib.xr_dnnl_primitive(pd)  # (the packed kernel's own parts)
            if not prim:
                return None
            if not step.custom:
                keep.append(_Owned(lib.xr_dnnl_primitive_free, prim))
            bound: list[tuple[int, _Md, list[int]]] = []  # (argument, md, pointer per slot)
            for key, where in step.args:
                if key == _ARG_SCRATCHPAD:
                    continue
                if isinstance(where, _Value) and key in views:
                    dims, strides, offset = views[key]
                    ptr, md = self._pointer(lib, step, key, where, ins, outs, ws, keep, (dims, strides))
                    bound.append((key, md, [ptr + offset * _np_type(where.dtype).itemsize] * slots))
                elif isinstance(where, _Value):
                    if key not in uncut:
                        uncut[key] = self._pointer(lib, step, key, where, ins, outs, ws, keep)
                    bound.append((key, uncut[key][1], [uncut[key][0]] * slots))
                else:
                    bound.append((key, where, [reordered[key].ctypes.data] * slots))
            if scratch is not None:
                bound.append((_ARG_SCRATCHPAD, scratch, [ws.ctypes.data + b for b in bases]))
            for key, md, ptrs in bound:
                for s in range(slots):
                    mem = lib.xr_dnnl_memory(md.handle, ptrs[s])
                    if not mem:
                        return None
                    keep.append(_Owned(lib.xr_dnnl_memory_free, mem))
                    per_slot[s].append(mem)
                part_keys.append(key)
            count = len(bound)
            keep.append(scratch)
            part_prims.append(prim)
            part_nargs.append(-count if step.custom else count)
        flat = [m for slot in per_slot for m in slot]
        handle = lib.xr_dnnl_parts(
            len(part_prims), slots, (ctypes.c_void_p * len(part_prims))(*part_prims),
            (ctypes.c_int32 * len(part_nargs))(*part_nargs), (ctypes.c_int32 * len(part_keys))(*part_keys),
            (ctypes.c_void_p * len(flat))(*flat),
        )  # fmt: skip
        if not handle:
            return None
        keep.append(_Owned(lib.xr_dnnl_parts_free, handle))
        prim, w_keys, w_mems = whole
        count = -len(w_keys) if step.custom else len(w_keys)
        if lib.xr_dnnl_parts_whole(
            handle, prim, count, (ctypes.c_int32 * len(w_keys))(*w_keys), (ctypes.c_void_p * len(w_mems))(*w_mems)
        ):
            return None
        lib.xr_dnnl_parts_spin(spin_ns())
        lib.xr_dnnl_parts_rescue(rescue_ns())
        return handle

    @staticmethod
    def _part_attr(lib, post) -> _Owned | None:
        n = len(post)
        arrays = [(ctypes.c_int32 * max(n, 1))(*[p[i] for p in post]) for i in (0, 1)]
        alpha = (ctypes.c_float * max(n, 1))(*[p[2] for p in post])
        beta = (ctypes.c_float * max(n, 1))(*[p[3] for p in post])
        mds = (ctypes.c_void_p * max(n, 1))(*[p[4].handle if p[4] else None for p in post])
        attr = lib.xr_dnnl_attr(n, arrays[0], arrays[1], alpha, beta, mds, 0)
        return _Owned(lib.xr_dnnl_attr_free, attr) if attr else None

    def _pointer(self, lib, step, key, where, ins, outs, ws, keep, view=None) -> tuple[int, _Md]:
        dims, strides = step.logical[key] if view is None else view
        if where.kind == "in":
            a = ins[where.index]
            if file_mapping_of(a) is not None:  # a constant of a mapped params file: read at
                a = private_copy(a)  # every run, so not from the file (npz.private_copy)
                keep.append(a)
        elif where.kind == "out":
            a = outs[where.index]
        elif where.kind == "const":
            a = private_copy(np.ascontiguousarray(where.array, _np_type(where.dtype)))
            keep.append(a)
        else:
            assert ws is not None
            start = _round(self.scratch_bytes) + where.offset + where.elem_offset * _np_type(where.dtype).itemsize
            return ws.ctypes.data + start, _md(lib, dims, strides, "a temporary", where.dtype)
        if _array_dtype(a) != where.dtype:
            raise DnnlUnsupported(f"an operand of type {a.dtype} where the function has {where.dtype}")
        if where.kind != "const" and not a.flags.c_contiguous:
            raise DnnlUnsupported("an arena tensor that is not contiguous")
        return a.ctypes.data + where.elem_offset * a.itemsize, _md(lib, dims, strides, "an operand", where.dtype)


SMALL_WORK = 32768
"""A function whose work (``FunctionPlan.work``: multiply-adds or elements held, per step)
is at most this runs on one thread in the executor's program for all its threads: on the
2-core machine a oneDNN primitive run by a team of two costs about 2 us more than by one
thread (a fork and a join: 2.2 against 0.2 us for a 64-element ReLU, GNU OpenMP spinning,
load ~10), the time a core takes for some 30,000 multiply-adds or a pass over 128 KB in
cache, and a team waits at its join for a thread another process preempted. Such steps are
the squeeze-and-excitation gates' 1x1 convolutions and activations, the heads' pools and
small matmuls."""


def run_together(thunks: Sequence[Callable[[], None]]) -> Callable[[], None]:
    """One thunk that runs the primitives of several bound functions in one C call (the
    executor joins consecutive oneDNN steps: one ctypes call and one stream wait instead of
    one per step), each primitive on the threads its function was bound for (a small
    step's one-thread primitives inside a run of the threads' ones: ``SMALL_WORK``)."""
    lib = dnnl_library()
    assert lib is not None
    prims: list[int] = []
    nargs: list[int] = []
    keys: list[int] = []
    mems: list[int] = []
    counts: list[int] = []
    for t in thunks:
        p, n, k, m, threads = t.dnnl_run  # type: ignore[attr-defined]
        prims += p
        nargs += n
        keys += k
        mems += m
        counts += [threads] * len(p)
    c_prims = (ctypes.c_void_p * len(prims))(*prims)
    c_nargs = (ctypes.c_int32 * len(nargs))(*nargs)
    c_keys = (ctypes.c_int32 * len(keys))(*keys)
    c_mems = (ctypes.c_void_p * len(mems))(*mems)
    c_threads = (ctypes.c_int32 * len(counts))(*counts)
    run, set_threads, count = lib.xr_dnnl_run, lib.xr_dnnl_set_threads, len(prims)
    most = max(counts, default=1)

    def joined() -> None:
        set_threads(most)
        status = run(count, c_prims, c_nargs, c_keys, c_mems, c_threads)
        if status:
            raise RuntimeError(f"oneDNN failed (status {status})")

    joined.keep = [list(thunks), c_prims, c_nargs, c_keys, c_mems, c_threads]  # type: ignore[attr-defined]
    joined.dnnl_threads = counts  # type: ignore[attr-defined]
    return joined


class _Owned:
    """Frees a C object when the thunk that uses it goes away."""

    def __init__(self, free: Callable[[int], None], handle: int):
        self.free, self.handle = free, handle

    def release(self) -> None:
        """Frees the object now (nothing uses it any more); once."""
        if self.handle:
            self.free(self.handle)
            self.handle = 0

    def __del__(self) -> None:
        self.release()


def _round(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


def _aligned(nbytes: int, zeroed: bool) -> np.ndarray:
    """A new uint8 buffer of ``nbytes`` starting on ``_ALIGN`` bytes, as the arena's."""
    raw = (np.zeros if zeroed else np.empty)(nbytes + _ALIGN, np.uint8)
    start = (-raw.ctypes.data) % _ALIGN
    return raw[start : start + nbytes]


REORDER_PART_BYTES = 1 << 20
"""``_reorder``: the bytes of a weight read from a mapped params file reordered at a time."""


def _reorder(lib: Any, stored: np.ndarray, src: _Md, dst: _Md, keep: list[Any]) -> np.ndarray:
    """``stored`` in the primitive's weight format (a new aligned buffer), once. A weight of a
    mapped params file goes in parts of about ``REORDER_PART_BYTES`` along its outermost
    dimension, each part's file pages handed back once reordered (``_parts``): its reordered
    copy and its file pages are not all resident together (the peak of loading a model whose
    largest weight -- a classifier's -- comes last). ``src`` describes ``stored`` as the array
    it is, with its strides (``_elem_strides``): a view is read in place, never copied into
    another layout than ``src`` says."""
    if any(st < 0 for st in stored.strides):
        raise DnnlUnsupported("a weight of negative strides (oneDNN's memory has none)")
    parts = _parts(stored, src) if file_mapping_of(stored) is not None else None
    size = max(dst.size, 4)
    # (parts leave a blocked format's padding as it is: zeroed first, as a whole reorder writes it)
    out = _aligned(size, zeroed=parts is not None)
    if parts is None or not _reorder_parts(lib, stored, src, dst, out, parts):
        _reorder_run(lib, stored, src, dst, out)
    keep.append(out)
    return out


def _parts(stored: np.ndarray, src: _Md) -> tuple[int, list[tuple[int, int]]] | None:
    """``(axis, [(offset, extent)])``: ``stored`` (a dense array that ``src`` describes, dims
    in any order of its strides) cut along its outermost dimension into runs of about
    ``REORDER_PART_BYTES``, multiples of 64 where the dimension is longer (oneDNN's blocks
    divide 64: a part of a blocked format starts on a block), or None for one part."""
    if src.dims is None or src.strides is None or stored.nbytes <= 2 * REORDER_PART_BYTES:
        return None
    axis = max((k for k, d in enumerate(src.dims) if d > 1), key=lambda k: src.strides[k], default=None)
    if axis is None or src.strides[axis] * src.dims[axis] != stored.size:
        return None
    n, row = src.dims[axis], src.strides[axis] * stored.itemsize
    step = max(1, REORDER_PART_BYTES // row)
    if n > 64:
        step = max(64, step // 64 * 64)
    if step >= n:
        return None
    return axis, [(lo, min(step, n - lo)) for lo in range(0, n, step)]


def _reorder_parts(
    lib: Any, stored: np.ndarray, src: _Md, dst: _Md, out: np.ndarray,
    parts: tuple[int, list[tuple[int, int]]],
) -> bool:  # fmt: skip
    """Reorder ``stored`` into ``out`` part by part (``_parts``), handing back each part's
    file pages after it; False (nothing written) where oneDNN has no sub-memory of a part."""
    axis, runs = parts
    assert src.dims is not None
    subs = []
    for lo, extent in runs:
        dims = list(src.dims)
        dims[axis] = extent
        offsets = [0] * len(dims)
        offsets[axis] = lo
        pair = [lib.xr_dnnl_submemory(md.handle, len(dims), _i64(dims), _i64(offsets)) for md in (src, dst)]
        subs.append([_Md(lib, h, "a part of a weight") if h else None for h in pair])
        if not all(pair):
            return False
    flat = stored.reshape(-1).view(np.uint8)
    row = src.strides[axis] * stored.itemsize  # type: ignore[index]
    for (lo, extent), (sub_src, sub_dst) in zip(runs, subs):
        _reorder_run(lib, stored, sub_src, sub_dst, out)
        release_pages(flat[lo * row : (lo + extent) * row])
    return True


def _reorder_run(lib: Any, stored: np.ndarray, src: _Md, dst: _Md, out: np.ndarray) -> None:
    """One oneDNN reorder of ``stored`` (described by ``src``) into ``out`` (by ``dst``)."""
    pd = lib.xr_dnnl_reorder(src.handle, dst.handle)
    if not pd:
        raise DnnlUnsupported("oneDNN cannot reorder a weight")
    try:
        prim = lib.xr_dnnl_primitive(pd)
        src_mem = lib.xr_dnnl_memory(src.handle, stored.ctypes.data)
        dst_mem = lib.xr_dnnl_memory(dst.handle, out.ctypes.data)
        keys = (ctypes.c_int32 * 2)(_ARG_SRC, _ARG_DST)
        mems = (ctypes.c_void_p * 2)(src_mem, dst_mem)
        status = lib.xr_dnnl_run(1, (ctypes.c_void_p * 1)(prim), (ctypes.c_int32 * 1)(2), keys, mems, None)
        lib.xr_dnnl_memory_free(src_mem)
        lib.xr_dnnl_memory_free(dst_mem)
        lib.xr_dnnl_primitive_free(prim)
    finally:
        lib.xr_dnnl_pd_free(pd)
    if status:
        raise DnnlUnsupported(f"oneDNN failed to reorder a weight (status {status})")


# --------------------------------------------------------------------------------------------
# Reading a function
# --------------------------------------------------------------------------------------------


def _copy_levels(length: int, levels: Sequence[tuple[int, int, int]]) -> tuple[list[int], list[int], list[int]]:
    """A movement pattern (``movement.Pattern``: runs of ``length`` elements, ``levels`` of
    (count, destination step, source step)) as the levels of ``xr_dnnl_copies``: sizes,
    source steps and destination steps, the last level the row copied in one loop (a run
    of one element: the last level of the pattern, strided; a long row cut into a level of
    rows of at most ``_COPY_ROW``)."""
    dims = [n for n, _, _ in levels] + [length]
    ss = [s for _, _, s in levels] + [1]
    ds = [o for _, o, _ in levels] + [1]
    if length == 1 and levels:
        dims, ss, ds = dims[:-1], ss[:-1], ds[:-1]
    n = dims[-1]
    if n > _COPY_ROW:
        cut = next(c for c in range(_COPY_ROW, 0, -1) if n % c == 0)
        if cut > 1:
            dims[-1:], ss[-1:], ds[-1:] = [n // cut, cut], [ss[-1] * cut, ss[-1]], [ds[-1] * cut, ds[-1]]
    return dims, ss, ds


def _layout_view(shape: Sequence[int], layout: str) -> tuple[list[int], list[int]]:
    """Logical NC(D)HW dims and element strides of a contiguous tensor stored as ``layout``
    (``NCHW``, ``NHWC``, ``NCW``, ...)."""
    if len(layout) != len(shape) or "N" not in layout or "C" not in layout:
        raise DnnlUnsupported(f"layout {layout}")
    if any(ch.islower() or ch.isdigit() for ch in layout):
        raise DnnlUnsupported(f"blocked layout {layout}")
    strides = contiguous_strides(shape)
    spatial = [ch for ch in layout if ch not in "NC"]
    order = ["N", "C", *spatial]
    idx = [layout.index(ch) for ch in order]
    return [shape[i] for i in idx], [strides[i] for i in idx]


def _kernel_view(w: np.ndarray, layout: str, groups: int, transposed: bool = False) -> tuple[list[int], list[int]]:
    """Logical (G,) O, I, (D,) (H,) W dims and element strides of a stored kernel (``OIHW``
    in any order, ``OIW`` for a 1-D convolution, ``OIDHW`` for a 3-D one). A transposed
    convolution's kernel (``IOHW``) counts I over all groups and O per group; oneDNN's
    deconvolution reads it as the convolution's: O then I per group."""
    if sorted(layout) not in (sorted("OIHW"), sorted("OIW"), sorted("OIDHW")):
        raise DnnlUnsupported(f"kernel layout {layout}")
    st = _elem_strides(w)
    dims = {ch: w.shape[i] for i, ch in enumerate(layout)}
    strides = {ch: st[i] for i, ch in enumerate(layout)}
    spatial = [ch for ch in "DHW" if ch in layout]
    if transposed and groups > 1:
        in_per = dims["I"] // groups
        return (
            [groups, dims["O"], in_per, *(dims[ch] for ch in spatial)],
            [in_per * strides["I"], strides["O"], strides["I"], *(strides[ch] for ch in spatial)],
        )
    if groups == 1:
        return ([dims["O"], dims["I"], *(dims[ch] for ch in spatial)],
                [strides["O"], strides["I"], *(strides[ch] for ch in spatial)])  # fmt: skip
    out_per = dims["O"] // groups
    return (
        [groups, out_per, dims["I"], *(dims[ch] for ch in spatial)],
        [out_per * strides["O"], strides["O"], strides["I"], *(strides[ch] for ch in spatial)],
    )


def _type_of(v: SSAValue) -> str:
    """The value's element type, if oneDNN runs it."""
    dtype = dtype_of(v.type)
    if dtype not in _TYPES:
        raise DnnlUnsupported(f"oneDNN runs float32 and bfloat16 tensors, not {dtype}")
    return dtype


def _relay(op: Operation) -> str:
    return op.RELAY_NAME if isinstance(op, RelayOp) else op.name


# --------------------------------------------------------------------------------------------
# Activations as oneDNN eltwise post-ops
# --------------------------------------------------------------------------------------------

_X = "x"
"""In an activation's template: the value the activation applies to."""


def _c(value: float | None = None) -> tuple:
    """In a template: a one-element constant (``value``: the one it must have; None: any,
    bound in the order the template is read)."""
    return ("const", value)


def _clip(lo: float | None, hi: float | None, arg: Any) -> tuple:
    """In a template: ``clip`` with these bounds (None: any, bound)."""
    return ("clip", lo, hi, arg)


_SQRT1_2, _SQRT2_PI = 1 / math.sqrt(2.0), math.sqrt(2.0 / math.pi)
_HSIG = _clip(0.0, 1.0, ("add", ("multiply", _X, _c()), _c()))
_CUBES = (("multiply", ("multiply", _X, _X), _X), ("power", _X, _c(3.0)))
_ACTIVATIONS: list[tuple[int, Any, Callable[[list[float]], tuple[float, float]]]] = [
    (_RELU, ("nn.relu", _X), lambda k: (0.0, 0.0)),
    (_TANH, ("tanh", _X), lambda k: (0.0, 0.0)),
    (_CLIP, _clip(None, None, _X), lambda k: (k[0], k[1])),
    # x * sigmoid(x), x * sigmoid(a x) (Swish with beta)
    (_SWISH, ("multiply", _X, ("sigmoid", _X)), lambda k: (1.0, 0.0)),
    (_SWISH, ("multiply", _X, ("sigmoid", ("multiply", _X, _c()))), lambda k: (k[0], 0.0)),
    (_LOGISTIC, ("sigmoid", _X), lambda k: (0.0, 0.0)),
    # x * clip(a x + b, 0, 1) (HardSwish: a = 1/6, b = 1/2), clip(a x + b, 0, 1)
    (_HARDSWISH, ("multiply", _X, _HSIG), lambda k: (k[0], k[1])),
    (_HARDSIGMOID, _HSIG, lambda k: (k[0], k[1])),
    # x * (erf(x / sqrt 2) + 1) * 0.5: Relay's pattern and the canonical form
    # (``canonicalize-arith``) with the reciprocal
    *[(_GELU_ERF, ("multiply", ("multiply", _X, ("add", ("erf", (op, _X, _c(c))), _c(1.0))), _c(0.5)),
       lambda k: (0.0, 0.0)) for op, c in (("divide", math.sqrt(2.0)), ("multiply", _SQRT1_2))],
    # x * (tanh(sqrt(2/pi) (x + 0.044715 x^3)) + 1) * 0.5
    *[(_GELU_TANH, ("multiply", ("multiply", _X, ("add", ("tanh", ("multiply", ("add", _X, ("multiply", cube, _c(0.044715))),
                                                                     _c(_SQRT2_PI))), _c(1.0))), _c(0.5)),
       lambda k: (0.0, 0.0)) for cube in _CUBES],
    # x * tanh(log(exp(x) + 1)): Relay's mish pattern
    (_MISH, ("multiply", _X, ("tanh", ("log", ("add", ("exp", _X), _c(1.0))))), lambda k: (0.0, 0.0)),
]  # fmt: skip
"""The activations a convolution or matmul takes as an eltwise post-op: (oneDNN algorithm,
the template of its ops, its alpha and beta from the bound constants). Templates are matched
with ``add`` and ``multiply`` in either operand order."""

_DOUBLED = [(alg, t[1]) for alg, t, _ in _ACTIVATIONS if alg in (_GELU_ERF, _GELU_TANH)]
"""A GELU without its outer ``0.5`` (twice the GELU): ``canonicalize-arith`` moves a chain's
scalar factor outermost, so a gated GELU ``gelu(a) * b`` (GeGLU: Gemma's MLP) is left as
``(a * (1 + tanh(...)) * b) * 0.5``; the activation is the eltwise GELU then ``linear``
(``2 x``), and the ``0.5`` goes to whatever reads the product."""


def _match(v: SSAValue, t: Any, x: SSAValue, allowed: set, const_of, binds: list, used: set) -> bool:
    if t == _X:
        return v is x
    if t[0] == "const":
        c = const_of(v)
        if c is None or c.size != 1:
            return False
        value = float(np.asarray(c, np.float64).reshape(-1)[0])
        if t[1] is not None and not math.isclose(value, t[1], rel_tol=1e-6):
            return False
        binds.append(value)
        return True
    o = v.owner
    if not isinstance(o, RelayOp) or o not in allowed or o.RELAY_NAME != t[0]:
        return False
    if t[0] == "clip":
        lo, hi = float(o.attrs["a_min"]), float(o.attrs["a_max"])
        for want, got in ((t[1], lo), (t[2], hi)):
            if want is not None and got != want:
                return False
        if t[1] is None:
            binds.append(lo)
        if t[2] is None:
            binds.append(hi)
        args = [t[3]]
    else:
        args = list(t[1:])
    if len(o.operands) != len(args):
        return False
    orders = [list(o.operands)]
    if t[0] in ("add", "multiply"):
        orders.append(orders[0][::-1])
    for operands in orders:
        b, u = list(binds), set(used)
        if all(_match(ov, at, x, allowed, const_of, b, u) for ov, at in zip(operands, args)):
            binds[:] = b
            used.clear()
            used.update(u | {o})
            return True
    return False


GEMM_CONV_ELTWISE_APART = 4096
"""The least output elements for which a convolution that oneDNN runs as im2col + GEMM
(``gemm:jit``) takes its trailing eltwise post-ops as eltwise primitives after it: its
post-ops cost about 5 ns per element with ReLU and 25-30 with GELU (two threads), an eltwise
primitive's own call a few microseconds."""


WIDEN_GROUPS = (2, 4)
"""``_Reader._conv``: a grouped convolution that oneDNN would run as im2col + GEMM (``_im2col``:
3.2 without AVX-512 for fewer than 8 channels a group -- ResNeXt's and DPN's 32 groups of 4
took 7.6 ms for 14.5 M multiply-adds on two Zen 3 cores, 3.8 GFLOP/s) runs as the convolution
of f times fewer, f times wider groups (``_widened_kernel``), for the first f of these for
which oneDNN has a direct kernel: f times the products, which that kernel does many times
faster."""


def _im2col(impl: bytes) -> bool:
    """Whether oneDNN runs a convolution as im2col + GEMM or its reference code (``impl``)."""
    return b"gemm" in impl or impl.startswith(b"ref")


def _widened_kernel(w: np.ndarray, layout: str, groups: int, f: int) -> np.ndarray:
    """The kernel (same layout) of the convolution of ``groups // f`` groups that computes
    what ``w``'s ``groups`` groups do: group g's f blocks of output channels read its f blocks
    of input channels each through the kernel of the one group they were, zero elsewhere
    (block-diagonal). Exact for finite inputs (a zero's product adds +0 to a sum); an
    infinite or NaN input makes NaN in the f - 1 other groups' outputs of its group too."""
    order = [layout.index(ch) for ch in "OI"] + [layout.index(ch) for ch in "DHW" if ch in layout]
    oihw = np.transpose(w, order)  # (O, I per group, *taps)
    o, i, taps = oihw.shape[0], oihw.shape[1], oihw.shape[2:]
    blocks = oihw.reshape(groups // f, f, o // groups, i, *taps)
    wide = np.zeros((groups // f, f, o // groups, f, i, *taps), w.dtype)
    for k in range(f):
        wide[:, k, :, k] = blocks[:, k]
    return np.ascontiguousarray(np.transpose(wide.reshape(o, f * i, *taps), np.argsort(order)))


STREAMED_ROWS = 8
"""``_Reader._packed_dense``: a dense step of fewer rows counts as this many when it decides
whether the team shares the step (``PART_WORK``): each weight element then comes from L3 or
memory for a few products (a recurrent layer's time step, one row: 1 x 256 x 768 took 42 us
on one Zen 3 core, about 5 GMAC/s), so two threads' caches and bandwidth halve it where its
multiply-adds alone say it is too small to share (a bidirectional GRU's run 0.81x the time)."""


def _trailing_eltwise(post: list) -> list:
    """The eltwise post-ops (``_Reader._post_ops``' entries of kind 0) that end ``post``."""
    n = 0
    while n < len(post) and post[len(post) - 1 - n][0] == 0:
        n += 1
    return post[len(post) - n :]


def _activation(ops: Sequence[Operation], x: SSAValue, const_of) -> tuple[list[tuple[int, float, float]], int] | None:
    """The eltwise post-ops (one, or a GELU and its doubling: ``_DOUBLED``) that the first
    ops of ``ops`` compute from ``x`` (``_ACTIVATIONS``), and how many ops they take; None if
    they compute none of them. The ops taken are exactly the first ones, and only the last
    one's result is used after them."""
    allowed = set(ops)
    first = ops[0] if ops else None
    if isinstance(first, RelayOp) and first.RELAY_NAME == "nn.leaky_relu" and first.operands[0] is x:
        return [(_RELU, float(first.attrs.get("alpha", 0.01)), 0.0)], 1  # oneDNN's relu with a slope
    doubled = [(alg, t, lambda k: (0.0, 0.0), 2.0) for alg, t in _DOUBLED]
    for alg, template, params, factor in [(*a, 1.0) for a in _ACTIVATIONS] + doubled:
        for end in range(len(ops), 0, -1):
            binds: list[float] = []
            used: set = set()
            if not _match(ops[end - 1].results[0], template, x, allowed, const_of, binds, used):
                continue
            if used != set(ops[:end]):
                continue
            inner = [r for o in ops[: end - 1] for r in o.results]
            if any(u.operation not in used for r in inner for u in r.uses):
                continue  # an intermediate value read after the activation
            alpha, beta = params(binds)
            return [(alg, alpha, beta)] + ([(_LINEAR, factor, 0.0)] if factor != 1.0 else []), end
    return None


class _Reader:
    """Turns the ops of one dnnl function into steps."""

    def __init__(
        self,
        lib: Any,
        fn: func.FuncOp,
        funcs: dict[str, func.FuncOp],
        constant: Callable[[ConstantOp], np.ndarray],
        fixed: Sequence[np.ndarray | None],
    ):
        self.lib, self.fn, self.funcs, self.constant = lib, fn, funcs, constant
        self.values: dict[SSAValue, _Value] = {}
        self.steps: list[_Step] = []
        self.temp = 0
        self.scratch = 0
        self.produced: set[SSAValue] = set()
        self.keep_pd: list[Any] = []
        self._packed: bool | None = None  # (packed_matmuls)
        self.descriptors: list[_Owned] = []
        """Primitive descriptors and attributes: read only to create the primitives."""
        self.winograd = True
        self.band_rows = 0
        self.pointwise = False
        """1x1 convolutions on the packed dense kernel (the way ``"pointwise"``)."""
        self.pointwise_convs = 0
        """The function's convolutions the way ``"pointwise"`` runs on the kernel."""
        self.tile_rows = 0
        self.memo: dict[Any, Any] = {}
        for i, a in enumerate(fn.body.block.args):
            array = fixed[i] if i < len(fixed) else None
            if array is not None:  # a weight the caller passes (PartitionGraph without binding)
                self.values[a] = _Value("const", array=array, shape=tuple(shape_of(a.type)), dtype=_type_of(a))
            else:
                self.values[a] = _Value("in", i, shape=tuple(shape_of(a.type)), dtype=_type_of(a))
        ret = fn.body.block.last_op
        assert ret is not None
        self.outputs = {v: i for i, v in enumerate(ret.operands)}
        self.views: dict[SSAValue, tuple[SSAValue, list[int], list[int]]] = {}
        """Values of view ops (``is_view``) read or written in place: the value whose buffer
        holds the elements, and the dims and element strides that see them."""
        self.view_offsets: dict[SSAValue, int] = {}
        """Element offsets of the views that do not start at their buffer's first element
        (slices)."""
        self.consumed: set[Operation] = set()
        """Ops a step took as its epilogue (``_matmul_epilogue``): no step of their own."""
        self.plain_matmuls: set[Operation] = set()
        self.grouped: set[SSAValue] = set()
        """Views whose dims in ``views`` split their batch dims finer than their shape
        (``_view_op``): a batched matmul reads them; another view of one must be a reshape."""
        """Batched matmuls whose epilogue oneDNN refused: their ops run as steps."""
        self.fold_views = any(_relay(o) == "nn.batch_matmul" for o in fn.body.block.ops)
        """A function with a batched matmul (which reads and writes any strides, so the
        attention heads' reshapes and transposes around it are views, not copies; see
        ``dnnl_partition.fold_views``)."""

    def read(self) -> FunctionPlan:
        block = self.fn.body.block
        if self._permute(block) or self._move(block) or self._concatenate(block):
            return FunctionPlan(self.fn.sym_name.data, self.steps, self.scratch, self.temp)
        for op in block.ops:
            if op in self.consumed:
                continue
            if isinstance(op, ConstantOp):
                self.values[op.result] = _Value("const", array=self.constant(op), shape=tuple(shape_of(op.result.type)), dtype=_type_of(op.result))
            elif isinstance(op, func.ReturnOp):
                if any(v not in self.produced for v in op.operands):
                    raise DnnlUnsupported("a result that no step computes")
            elif isinstance(op, func.CallOp):
                callee = self.funcs.get(op.callee.root_reference.data)
                comp = callee.attributes.get("relay.composite") if callee is not None else None
                if callee is None or not isinstance(comp, StringAttr):
                    raise DnnlUnsupported("a call of a function that is not a composite")
                self._composite(op, callee, comp.data)
            elif self.fold_views and is_view(op):
                self._view_op(op)
            elif isinstance(op, RelayOp):
                self._single(op)
            else:
                raise DnnlUnsupported(f"'{op.name}'")
        return FunctionPlan(self.fn.sym_name.data, self.steps, self.scratch, self.temp)

    def _permute(self, block) -> bool:
        """A chain ``reshape* -> transpose -> reshape*`` from the argument to the result (what
        ``offload_reorders`` outlines) as one reorder: the reshapes are views of contiguous
        bytes, so the source is the transpose's input seen through the permuted strides."""
        ops = [o for o in block.ops if not isinstance(o, func.ReturnOp)]
        names = [_relay(o) for o in ops]
        if names.count("transpose") != 1 or not set(names) <= {"reshape", "transpose"}:
            return False
        arg = block.args[0] if len(block.args) == 1 else None
        prev = arg
        for o in ops:
            if len(o.operands) != 1 or o.operands[0] is not prev:
                return False
            prev = o.results[0]
        ret = block.last_op
        if arg is None or ret is None or list(ret.operands) != [prev]:
            return False
        t = ops[names.index("transpose")]
        in_shape = list(shape_of(t.operands[0].type))
        out_shape = list(shape_of(t.results[0].type))
        axes = t.attrs.get("axes")  # type: ignore[attr-defined]
        axes = list(range(len(in_shape)))[::-1] if not axes else [int(a) % len(in_shape) for a in axes]
        in_st = contiguous_strides(in_shape)
        src_st, dst_st = [in_st[a] for a in axes], contiguous_strides(out_shape)
        dtype = _type_of(arg)
        if _type_of(prev) != dtype:
            return False
        src_md = _md(self.lib, out_shape, src_st, "transpose source", dtype)
        dst_md = _md(self.lib, out_shape, dst_st, "transpose destination", dtype)
        step = _Step("transpose", "copy", 0, [(_ARG_SRC, self._src(arg))])
        step.logical[_ARG_SRC] = (out_shape, src_st)
        step.logical[_ARG_DST] = (out_shape, dst_st)
        step.args.append((_ARG_DST, self._dest(prev)))
        step.keep += [src_md, dst_md]
        self._finish("transpose", "copy", self.lib.xr_dnnl_reorder(src_md.handle, dst_md.handle), step)
        return True

    def _concatenate(self, block) -> bool:
        """A float32 ``concatenate`` of the arguments and a chain of up to four elementwise
        ops on its result (``add``/``subtract``/``multiply``/``maximum``/``minimum`` by a
        constant that varies along the joined axis only, ``nn.relu``, ``clip``; what
        ``offload_concatenations`` outlines) as the shim's ``xr_dnnl_concat``: the native
        kernels' ``concat_epi`` on oneDNN's OpenMP threads, one pass over the result."""
        ops = [o for o in block.ops if not isinstance(o, (func.ReturnOp, ConstantOp))]
        if not ops or _relay(ops[0]) != "concatenate":
            return False
        cat = ops[0]
        if any(v not in block.args for v in cat.operands) or len(cat.operands) > 64:
            raise DnnlUnsupported("a concatenation of values that are not the function's arguments")
        if any(_type_of(v) != "float32" for v in [*cat.operands, *(o.results[0] for o in ops)]):
            raise DnnlUnsupported("a concatenation that is not float32")
        out_shape = list(shape_of(cat.results[0].type))
        axis = int(cat.attrs["axis"]) % len(out_shape)  # type: ignore[attr-defined]
        codes = {"add": 0, "subtract": 1, "multiply": 2, "maximum": 3, "minimum": 4}
        spec: list[tuple[int, int, np.ndarray]] = []  # (code, swapped, operand along the axis)
        prev = cat.results[0]
        for o in ops[1:]:
            name = _relay(o)
            if prev not in o.operands or len(o.results) != 1 or list(shape_of(o.results[0].type)) != out_shape:
                raise DnnlUnsupported(f"{name} after a concatenation")
            if name == "nn.relu":
                spec.append((3, 0, np.zeros(1, np.float32)))
            elif name == "clip":
                a = o.attrs  # type: ignore[attr-defined]
                spec += [(3, 0, np.full(1, a["a_min"], np.float32)), (4, 0, np.full(1, a["a_max"], np.float32))]
            elif name in codes and len(o.operands) == 2:
                other = o.operands[1] if o.operands[0] is prev else o.operands[0]
                if other is prev or not isinstance(other.owner, ConstantOp):
                    raise DnnlUnsupported(f"{name} after a concatenation by a value that is not a constant")
                c = np.asarray(self.constant(other.owner))
                if c.dtype != np.float32:
                    raise DnnlUnsupported(f"{name} after a concatenation by a {c.dtype} constant")
                full = np.broadcast_to(c, out_shape)
                if any(st != 0 for i, st in enumerate(full.strides) if i != axis):
                    raise DnnlUnsupported(f"{name} after a concatenation by a constant along another axis")
                line = full[(0,) * axis + (slice(None),) + (0,) * (len(out_shape) - axis - 1)]
                vec = np.ascontiguousarray(line if full.strides[axis] else line[:1])
                spec.append((codes[name], int(o.operands[0] is not prev), vec))
            else:
                raise DnnlUnsupported(f"{name} after a concatenation")
            prev = o.results[0]
        if len(spec) > 4:
            raise DnnlUnsupported("more than four elementwise ops after a concatenation")
        outer, inner = math.prod(out_shape[:axis]), math.prod(out_shape[axis + 1 :])
        lens = [int(shape_of(v.type)[axis]) for v in cat.operands]
        table = np.full((4, 4), -1, np.int64)
        values = []
        for k, (code, swapped, vec) in enumerate(spec):
            table[k] = [code, swapped, int(vec.size > 1), vec.size]
            values.append(vec)
        values += [np.zeros(1, np.float32)] * (4 - len(values))
        c_values = (ctypes.c_void_p * 4)(*[v.ctypes.data for v in values])
        geometry = np.array([outer, out_shape[axis], inner, len(lens)], np.int64)
        lens_a = np.array(lens, np.int64)
        k = self.lib.xr_dnnl_concat(geometry.ctypes.data, lens_a.ctypes.data, table.ctypes.data, c_values)
        if not k:
            raise DnnlUnsupported("no memory for a concatenation")
        self.keep_pd.append(_Owned(self.lib.xr_dnnl_concat_free, k))  # (it copied the operands)
        label = "+".join(_relay(o) for o in ops)
        step = _Step(label, "copy", k, [], impl="concat_epi", custom=True)
        for i, v in enumerate(cat.operands):
            shape = list(shape_of(v.type))
            step.args.append((_ARG_MULTIPLE_SRC + i, self._src(v)))
            step.logical[_ARG_MULTIPLE_SRC + i] = (shape, contiguous_strides(shape))
        step.args.append((_ARG_DST, self._dest(prev)))
        step.logical[_ARG_DST] = (out_shape, contiguous_strides(out_shape))
        self.steps.append(step)
        return True

    def _move(self, block) -> bool:
        """A function of data movement (``MOVEMENT_OPS``: concatenations, splits, slices,
        transposes, reshapes, layout transforms; what ``offload_movement`` outlines) as the
        strided patterns ``movement.movement_patterns`` finds from the arguments to the
        results: one pattern as one oneDNN reorder between two strided descriptors, several
        (a channel shuffle's four: each half of each branch to every other channel of a
        result) as the shim's ``xr_dnnl_copies``, every pattern in one parallel region on
        oneDNN's OpenMP threads. A float32 function of one result may end in a chain of up
        to four ``add``/``subtract``/``multiply``/``maximum``/``minimum`` by arguments of
        the result's type (Swin's residual add after the window reverse), which each
        element goes through on its way. A lone concatenation is ``_concatenate``'s."""
        parts = split_movement(self.fn)
        if parts is None:
            return False
        move, tail = parts
        args, ret = list(block.args), block.last_op
        if len(move) < len([o for o in block.ops if not isinstance(o, func.ReturnOp)]) - len(tail):
            return False  # (constants: _concatenate's epilogue)
        if all(o.RESHAPE_ONLY for o in move) or (not tail and len(move) == 1 and _relay(move[0]) == "concatenate"):
            return False
        chain: list[tuple[int, int, int]] = []  # (code, swapped, argument)
        prev = tail[0].operands[0] if tail and tail[0].operands[0].owner in move else None
        prev = prev if prev is not None else (tail[0].operands[1] if tail else None)
        for o in tail:
            other = o.operands[1] if o.operands[0] is prev else o.operands[0]
            if other not in args or other.type != prev.type:
                return False
            chain.append((_TAIL_CODES[_relay(o)], int(o.operands[0] is not prev), args.index(other)))
            prev = o.results[0]
        dtype = _type_of(args[0]) if args else ""
        if any(_type_of(v) != dtype for v in [*args, *ret.operands]) or (tail and dtype != "float32"):
            raise DnnlUnsupported("data movement between element types")
        wanted = [tail[0].operands[0] if tail[0].operands[0].owner in move else tail[0].operands[1]] if tail else list(ret.operands)
        patterns = movement_patterns(self.fn, move, wanted, [tuple(shape_of(a.type)) for a in args])
        if patterns is None and len(move) == 1 and not tail:
            return False  # (one op: a layout transform is one reorder of its own, _single)
        if patterns is None:
            raise DnnlUnsupported("data movement that is not a few strided patterns")
        label = ", ".join(dict.fromkeys(_relay(o) for o in [*move, *tail] if not o.RESHAPE_ONLY))
        outs = [self._dest(v) for v in ret.operands]
        if len(patterns) == 1 and not tail:
            ((r, i, length, o0, s0, levels),) = patterns
            dims = [n for n, _, _ in levels] + [length]
            src_st, dst_st = [s for _, _, s in levels] + [1], [o for _, o, _ in levels] + [1]
            src = self._src(args[i])
            src = dataclasses.replace(src, elem_offset=src.elem_offset + s0)
            dst = dataclasses.replace(outs[r], elem_offset=o0)
            src_md = _md(self.lib, dims, src_st, "a moved source", dtype)
            dst_md = _md(self.lib, dims, dst_st, "a moved destination", dtype)
            step = _Step(label, "copy", 0, [(_ARG_SRC, src), (_ARG_DST, dst)])
            step.logical[_ARG_SRC] = (dims, src_st)
            step.logical[_ARG_DST] = (dims, dst_st)
            step.keep += [src_md, dst_md]
            self._finish(label, "copy", self.lib.xr_dnnl_reorder(src_md.handle, dst_md.handle), step)
            return True
        table = np.zeros((len(patterns), _COPY_WIDTH), np.int64)
        for row, (r, i, length, o0, s0, levels) in zip(table, patterns):
            dims, ss, ds = _copy_levels(length, levels)
            if len(dims) > _COPY_LEVELS:
                raise DnnlUnsupported("a strided copy of more than eight levels")
            row[:5] = [i, r, len(dims), s0, o0]
            for j, (n, a, b) in enumerate(zip(dims, ss, ds)):
                row[5 + j], row[5 + _COPY_LEVELS + j], row[5 + 2 * _COPY_LEVELS + j] = n, a, b
        head = [len(patterns), _np_type(dtype).itemsize, len(args), len(outs), len(chain)]
        shape = np.array(head + [x for op in chain for x in op], np.int64)
        k = self.lib.xr_dnnl_copies(shape.ctypes.data, table.ctypes.data)
        if not k:
            raise DnnlUnsupported("strided copies the shim refuses")
        self.keep_pd.append(_Owned(self.lib.xr_dnnl_copies_free, k))
        step = _Step(label, "copy", k, [], impl="strided copies", custom=True)
        for i, a in enumerate(args):
            shape_a = list(shape_of(a.type))
            step.args.append((_ARG_MULTIPLE_SRC + i, self._src(a)))
            step.logical[_ARG_MULTIPLE_SRC + i] = (shape_a, contiguous_strides(shape_a))
        for r, (v, out) in enumerate(zip(ret.operands, outs)):
            shape_v = list(shape_of(v.type))
            step.args.append((_ARG_MULTIPLE_DST + r, out))
            step.logical[_ARG_MULTIPLE_DST + r] = (shape_v, contiguous_strides(shape_v))
        self.steps.append(step)
        return True

    # -- views ---------------------------------------------------------------------------

    def _view_op(self, op: Operation) -> None:
        """A reshape or transpose: its result is a view of its operand's buffer, unless a step
        wrote it already through ``_dest_view`` (a view of an output)."""
        res = op.results[0]
        if res in self.produced:
            return
        base, dims, strides = self._view(op.operands[0])
        seen = matmul_view(op, dims, strides, op.operands[0] in self.grouped)
        if seen is None:
            raise DnnlUnsupported(f"{_relay(op)} of a strided view that no strides give")
        self.views[res] = (base, seen[0], seen[1])
        if seen[2]:
            self.grouped.add(res)
        offset = self.view_offsets.get(op.operands[0], 0) + view_offset(op, strides)
        if offset:
            self.view_offsets[res] = offset
        self.produced.add(res)

    def _view(self, v: SSAValue) -> tuple[SSAValue, list[int], list[int]]:
        """The value whose buffer holds ``v``'s elements, and ``v``'s dims and strides there."""
        if v in self.views:
            return self.views[v]
        dims = list(shape_of(v.type))
        return v, dims, contiguous_strides(dims)

    def _dest_view(self, v: SSAValue) -> tuple[_Value, list[int], list[int]]:
        """Where a step that writes any strides writes ``v``: if ``v`` reaches an output only
        through view ops each read once (the heads' transpose back after attention), the
        output's buffer seen through the inverse views; else ``_dest(v)``, contiguous."""
        chain: list[Operation] = []
        cur = v
        while self.fold_views and cur not in self.outputs and cur.has_one_use():
            user = next(iter(cur.uses)).operation
            if not is_view(user):
                break
            chain.append(user)
            cur = user.results[0]
        if chain and cur in self.outputs:
            dims = list(shape_of(cur.type))
            strides: list[int] | None = contiguous_strides(dims)
            views = [(cur, dims, strides)]
            for op in reversed(chain):
                strides = view_back(op, dims, strides)
                if strides is None:
                    break
                dims = list(shape_of(op.operands[0].type))
                views.append((op.operands[0], dims, strides))
            else:
                out = self._dest(cur)
                for w, d, st in views[1:]:
                    self.views[w] = (cur, d, st)
                    self.produced.add(w)
                return out, dims, strides
        out = self._dest(v)
        dims = list(shape_of(v.type))
        return out, dims, contiguous_strides(dims)

    def _matmul_epilogue(self, res: SSAValue, b: int, m: int, n: int) -> tuple[list[int], list, SSAValue, list] | None:
        """The elementwise ``add``/``multiply`` ops (and reshapes) between a batched
        matmul's result ``res`` and a function output, each value read once, as oneDNN
        binary post-ops (attention's scale and mask or position-bias adds; see
        ``dnnl_partition.fold_views``): (the batch dims the matmul runs over, [(op, its other
        operand, that operand's dims there)], the output, the ops taken), or None. The reshapes may only
        regroup the batch dimension (the rows and columns stay the last two); every operand
        broadcasts into the finest batch dims any op sees (an operand dim spans a group of
        them whole, or is 1)."""
        chain: list[Operation] = []
        inputs: dict[Operation, SSAValue] = {}
        cur = res
        while self.fold_views and cur not in self.outputs and cur.has_one_use():
            user = next(iter(cur.uses)).operation
            if isinstance(user, RelayOp) and is_view(user) and user.RESHAPE_ONLY:
                pass
            elif not (
                _relay(user) in _BINARY and len(user.operands) == 2 and len(user.results) == 1
                and list(user.operands).count(cur) == 1 and _type_of(user.results[0]) == "float32"
                and list(shape_of(user.results[0].type)) == list(shape_of(cur.type))
            ):  # fmt: skip
                break
            chain.append(user)
            inputs[user] = cur
            cur = user.results[0]
        elementwise = [o for o in chain if _relay(o) in _BINARY]
        if not elementwise or cur not in self.outputs:
            return None
        shapes = [list(shape_of(o.results[0].type)) for o in elementwise]
        if any(sh[-2:] != [m, n] or math.prod(sh[:-2]) != b for sh in shapes):
            return None
        batch = max((sh[:-2] for sh in shapes), key=len)
        ops = []
        for o, sh in zip(elementwise, shapes):
            groups = _batch_groups(batch, sh[:-2])
            other = o.operands[1] if o.operands[0] is inputs[o] else o.operands[0]
            if groups is None or other in self.views or _type_of(other) != "float32":
                return None
            od = list(shape_of(other.type))
            if len(od) > len(sh):
                return None
            od = [1] * (len(sh) - len(od)) + od
            dims: list[int] = []
            for (lo, hi), d, full in zip(groups, od, sh[:-2]):
                if d == full:
                    dims += batch[lo:hi]
                elif d == 1:
                    dims += [1] * (hi - lo)
                else:
                    return None
            dims += od[-2:]
            ops.append((o, other, dims))
        self.consumed.update(chain)
        for o in chain:
            self.produced.add(o.results[0])
        return batch, ops, cur, chain

    # -- destinations --------------------------------------------------------------------

    def _dest(self, v: SSAValue) -> _Value:
        shape = tuple(shape_of(v.type))
        dtype = _type_of(v)
        if v in self.outputs:
            out = _Value("out", self.outputs[v], shape=shape, dtype=dtype)
        else:
            out = _Value("tmp", shape=shape, offset=self.temp, dtype=dtype)
            self.temp += _round(_np_type(dtype).itemsize * math.prod(shape))
        self.values[v] = out
        self.produced.add(v)
        return out

    def _src(self, v: SSAValue) -> _Value:
        _type_of(v)
        if v in self.views:  # a view: usable where contiguous bytes are read only if it is so
            base, dims, strides = self.views[v]
            if not _dense_strides(dims, strides):
                raise DnnlUnsupported("a strided view read by a step that reads contiguous tensors")
            return self._at(self.values[base], v)
        return self.values[v]

    def _at(self, where: _Value, v: SSAValue) -> _Value:
        """``where`` (the buffer of the view ``v``) read from ``v``'s first element."""
        offset = self.view_offsets.get(v, 0)
        return dataclasses.replace(where, elem_offset=where.elem_offset + offset) if offset else where

    def _src_view(self, v: SSAValue) -> tuple[_Value, list[int], list[int]]:
        """What a step that reads any strides reads for ``v``: its buffer (from ``v``'s first
        element), dims and strides."""
        base, dims, strides = self._view(v)
        return self._at(self.values[base], v), dims, strides

    def _finish(self, name: str, family: str, pd: int, step: _Step) -> None:
        if not pd:
            raise DnnlUnsupported(f"oneDNN has no primitive for {name} (status {self.lib.xr_dnnl_last_status()})")
        step.pd = pd
        step.impl = (self.lib.xr_dnnl_impl(pd) or b"").decode()
        if step.impl.startswith("ref"):
            # oneDNN's reference implementation (scalar loops over any strides): a batched
            # matmul over transposed views ran 100x slower than numpy's (BoTNet's position
            # logits, 470 ms): the native kernels run such a function
            self.lib.xr_dnnl_pd_free(pd)
            raise DnnlUnsupported(f"oneDNN has only its reference implementation for {name} ({step.impl})")
        handle = self.lib.xr_dnnl_pd_md(pd, _Q_SCRATCH, 0)
        scratch = _Md(self.lib, handle, "scratchpad") if handle else None
        if scratch is not None and scratch.size:
            self.scratch = max(self.scratch, scratch.size)
            step.args.append((_ARG_SCRATCHPAD, scratch))
        self.steps.append(step)
        self.descriptors.append(_Owned(self.lib.xr_dnnl_pd_free, pd))

    def _attr(self, post: list[tuple[int, int, float, float, _Md | None]]) -> int:
        n = len(post)
        kinds = (ctypes.c_int32 * max(n, 1))(*[p[0] for p in post])
        algs = (ctypes.c_int32 * max(n, 1))(*[p[1] for p in post])
        alpha = (ctypes.c_float * max(n, 1))(*[p[2] for p in post])
        beta = (ctypes.c_float * max(n, 1))(*[p[3] for p in post])
        mds = (ctypes.c_void_p * max(n, 1))(*[p[4].handle if p[4] else None for p in post])
        attr = self.lib.xr_dnnl_attr(n, kinds, algs, alpha, beta, mds, 0)
        if not attr:
            raise DnnlUnsupported(f"oneDNN rejected the post-ops (status {self.lib.xr_dnnl_last_status()})")
        self.descriptors.append(_Owned(self.lib.xr_dnnl_attr_free, attr))
        return attr

    # -- composites ----------------------------------------------------------------------

    def _composite(self, call: func.CallOp, callee: func.FuncOp, name: str) -> None:
        """``conv2d``/``dense`` then bias, sum and eltwise post-ops, read from the body."""
        params = dict(zip(callee.body.block.args, call.arguments))
        ops = [o for o in callee.body.block.ops if not isinstance(o, func.ReturnOp)]
        inner: dict[SSAValue, SSAValue] = dict(params)
        local_consts: dict[SSAValue, np.ndarray] = {}
        for o in ops:
            if isinstance(o, ConstantOp):
                local_consts[o.result] = self.constant(o)
        ops = [o for o in ops if not isinstance(o, ConstantOp)]

        def outer(v: SSAValue) -> SSAValue | None:
            return inner.get(v)

        def const_of(v: SSAValue) -> np.ndarray | None:
            if v in local_consts:
                return local_consts[v]
            o = outer(v)
            if o is not None and isinstance(self.values.get(o), _Value) and self.values[o].kind == "const":
                return self.values[o].array
            return None

        if ops and name in ("dnnl.gelu", "dnnl.gelu_tanh"):
            self._activation_alone(call, callee, ops, const_of, name)
            return
        if not ops or _relay(ops[0]) not in (*_CONVS, "nn.dense"):
            raise DnnlUnsupported(f"composite {name}")
        anchor = ops[0]

        cur = anchor.results[0]
        bias: np.ndarray | None = None
        scale: np.ndarray | None = None
        post: list[tuple[str, Any]] = []
        rest = ops[1:]
        reshaped = False
        units_last = True
        i = 0
        while i < len(rest):
            o = rest[i]
            nm = _relay(o)
            others = [v for v in o.operands if v is not cur]
            if nm == "reshape" and o.operands[0] is cur and _relay(anchor) == "nn.dense":
                reshaped = True  # the matmul's contiguous rows seen with another shape
                # (the units still the last axis: a per-unit scale still folds)
                units_last = shape_of(o.results[0].type)[-1:] == shape_of(cur.type)[-1:]
            elif nm == "add" and len(others) == 1 and cur in o.operands:
                c = const_of(others[0])
                if c is not None and bias is None and not post and not reshaped and c.size == shape_of(cur.type)[self._channel_axis(anchor)]:
                    bias = c.reshape(-1)
                elif c is None and outer(others[0]) is not None and tuple(shape_of(others[0].type)) == tuple(shape_of(cur.type)):
                    post.append(("sum", outer(others[0])))
                else:
                    raise DnnlUnsupported(f"composite {name}: an add oneDNN cannot fuse")
            elif (
                nm == "multiply" and len(others) == 1 and const_of(others[0]) is None and outer(others[0]) is not None
                and tuple(shape_of(others[0].type)) == tuple(shape_of(cur.type)) and not reshaped
            ):  # fmt: skip
                post.append(("mul", outer(others[0])))  # a gate: a binary post-op over the output
            else:
                found = _activation(rest[i:], cur, const_of)
                if found is None and nm == "multiply" and len(others) == 1 and not post and units_last:
                    # a constant scale per output channel (ConvNeXt's layer scale): folded
                    # into the weights and the bias, (W x + b) s = (s W) x + s b
                    s = self._channel_scale(o, others, anchor, const_of)
                    scale = s if scale is None else scale * s
                    bias = None if bias is None else bias * s
                    cur = o.results[0]
                    i += 1
                    continue
                if found is None:
                    raise DnnlUnsupported(f"composite {name}: {nm}")
                specs, used = found
                post += [("eltwise", spec) for spec in specs]
                cur = rest[i + used - 1].results[0]
                i += used
                continue
            cur = o.results[0]
            i += 1
        result = call.results[0]
        name = f"{name}({'+'.join(_relay(o) for o in ops)})"  # the profile shows the ops
        origin = None
        if scale is not None:
            const_of, origin = self._scaled_weight(anchor, const_of, scale)
        silu = None
        if post and post[-1][0] == "eltwise" and silu_in_shim() and _type_of(result) == "float32":
            if post[-1][1][0] == _SWISH:
                silu = (post.pop()[1][1], 0.0)  # (its alpha) the shim's pass after the primitive
            elif post[-1][1][0] == _GELU_TANH:
                post.pop()  # the same pass
                silu = _GELU_TANH_PASS
        if _relay(anchor) in _CONVS:
            self._conv(anchor, outer, const_of, bias, post, result, name)
        else:
            self._dense(anchor, outer, const_of, bias, post, result, name)
        if origin is not None:
            step = self.steps[-1]
            step.derived = True  # (the scaled weights: dropped once reordered)
            # (derived again from the scaled weights -- Winograd, widened groups: both derivations)
            inner = step.origins.get(_ARG_WEIGHTS, (None, ()))[1]
            step.origins[_ARG_WEIGHTS] = (origin[0], origin[1] + inner)
        if silu is not None:
            self._silu(result, *silu, name, self.steps[-1].family)

    def _activation_alone(self, call: func.CallOp, callee: func.FuncOp, ops: list, const_of, name: str) -> None:
        """An activation by itself (``dnnl.gelu``: the GELU after a transpose or a GroupNorm,
        which no convolution or matmul takes as a post-op): one eltwise primitive over the
        contiguous float32 tensor, e.g. ``x * (erf(x * 0.7071) + 1) * 0.5`` -> ``gelu_erf``."""
        xs = [v for v in callee.body.block.args if const_of(v) is None]
        found = _activation(ops, xs[0], const_of) if len(xs) == 1 else None
        if found is None or found[1] != len(ops):
            raise DnnlUnsupported(f"composite {name}: not one activation")
        ((alg, alpha, beta), *more), _ = found
        x, res = call.arguments[callee.body.block.args.index(xs[0])], call.results[0]
        out_shape = list(shape_of(res.type))
        if list(shape_of(x.type)) != out_shape or not _type_of(x) == _type_of(res) == "float32":
            raise DnnlUnsupported(f"composite {name}: a broadcast or a type that is not float32")
        st = contiguous_strides(out_shape)
        label = f"{name}({'+'.join(_relay(o) for o in ops)})"
        if alg == _GELU_TANH and not more and silu_in_shim():
            # the shim's pass from the input to the output (oneDNN's gelu_tanh eltwise is 5x
            # its gelu_erf on AVX2)
            self._silu(res, *_GELU_TANH_PASS, label, "elementwise", source=x)
            return
        md = _md(self.lib, out_shape, st, "eltwise data", "float32")
        attr = self._attr([(0, a, al, be, None) for a, al, be in more])
        pd = self.lib.xr_dnnl_eltwise(attr, alg, md.handle, md.handle, alpha, beta)
        step = _Step(label, "elementwise", 0, [(_ARG_SRC, self._src(x))])
        step.logical[_ARG_SRC] = (out_shape, st)
        step.logical[_ARG_DST] = (out_shape, st)
        step.keep.append(md)
        step.args.append((_ARG_DST, self._dest(res)))
        self._finish(label, "elementwise", pd, step)

    def _silu(self, result: SSAValue, alpha: float, cubic: float, name: str, family: str,
              source: SSAValue | None = None) -> None:  # fmt: skip
        """SiLU ``x * sigmoid(alpha x)`` (``cubic`` 0), or GELU's tanh form ``x / (1 +
        exp(-(alpha x + cubic x^3)))``, in place over ``result``, which the step before
        wrote, or from ``source`` into ``result`` (a GELU by itself): the shim's kernel
        (``xr_dnnl_silu``, ``silu_in_shim``) on the same threads, in the same C call, while
        the tensor is still in cache."""
        n = math.prod(shape_of(result.type))
        k = self.lib.xr_dnnl_silu(n, alpha, cubic)
        if not k:
            raise DnnlUnsupported(f"{name}: no memory for the SiLU kernel")
        self.keep_pd.append(_Owned(self.lib.xr_dnnl_silu_free, k))
        impl = "gelu_tanh" if cubic else "silu"
        if source is None:
            args = [(_ARG_DST, self.values[result])]
        else:
            args = [(_ARG_SRC, self._src(source)), (_ARG_DST, self._dest(result))]
        step = _Step(name, family, k, args, impl=impl, custom=True)
        for key, _ in args:
            step.logical[key] = ([n], [1])
        self.steps.append(step)

    def _channel_scale(self, mul: Operation, others: list, anchor: Operation, const_of) -> np.ndarray:
        """The per-output-channel factors of ``multiply`` by a constant that varies along the
        channel axis only (a scalar: the same for every channel)."""
        c = const_of(others[0])
        out = list(shape_of(mul.results[0].type))
        axis = self._channel_axis(anchor) % len(out)
        if c is None or np.ndim(c) > len(out) or list(shape_of(mul.operands[0].type)) != out:
            raise DnnlUnsupported("a multiply that is not a constant scale of the output")
        full = np.reshape(c, (1,) * (len(out) - np.ndim(c)) + np.shape(c))
        if any(d != 1 for k, d in enumerate(full.shape) if k != axis) or full.shape[axis] not in (1, out[axis]):
            raise DnnlUnsupported("a multiply by a constant that varies along another axis than the channels")
        return np.broadcast_to(full.reshape(-1), (out[axis],)).astype(np.float32)

    def _scaled_weight(self, anchor: Operation, const_of, scale: np.ndarray):
        """``const_of`` with the anchor's weight scaled along its output channels (computed
        once for the plans of one function for several thread counts), and the scaled
        weight's origin (``_Step.origins``)."""
        w_value = anchor.operands[1]
        weight = const_of(w_value)
        if weight is None:
            raise DnnlUnsupported("a scaled convolution or matmul whose weight is not a constant")
        key = ("scaled", id(weight), scale.tobytes())
        scaled = self.memo.get(key)
        if scaled is None:
            if _relay(anchor) == "nn.dense":
                axis = 0  # (units, input features)
            else:
                if _relay(anchor).endswith("_transpose") and int(anchor.attrs.get("groups", 1)) > 1:  # type: ignore[attr-defined]
                    raise DnnlUnsupported("a scaled grouped transposed convolution (O counts one group)")
                axis = anchor.attrs["kernel_layout"].index("O")  # type: ignore[attr-defined]
            shape = [1] * weight.ndim
            shape[axis] = scale.size
            scaled = self.memo[key] = (weight * scale.reshape(shape)).astype(weight.dtype)

        def scaled_of(v: SSAValue) -> np.ndarray | None:
            return scaled if v is w_value else const_of(v)

        return scaled_of, (weight, ("scaled", scale.tobytes()))

    @staticmethod
    def _channel_axis(anchor: Operation) -> int:
        if _relay(anchor) == "nn.dense":
            return -1
        layout = anchor.attrs.get("out_layout") or anchor.attrs.get("data_layout") or "NCHW"  # type: ignore[attr-defined]
        return layout.index("C")

    def _post_ops(self, post, dst_dims, dst_strides, step: _Step) -> int:
        spec: list[tuple[int, int, float, float, _Md | None]] = []
        step.post = spec  # type: ignore[attr-defined]  # (a part's residual md: its rows)
        for k, (kind, what) in enumerate(post):
            if kind == "eltwise":
                alg, a, b = what
                spec.append((0, alg, a, b, None))
            else:  # "sum" (a residual) or "mul" (a gate)
                src = self._src(what)
                md = _md(self.lib, dst_dims, dst_strides, "a residual", src.dtype)
                spec.append((2, _BIN_ADD if kind == "sum" else _BIN_MUL, 0.0, 0.0, md))
                step.args.append((_post_multiple(k), src))
                step.logical[_post_multiple(k)] = (list(dst_dims), list(dst_strides))
                step.keep.append(md)
        return self._attr(spec)

    def _conv(self, conv, outer, const_of, bias, post, result, name) -> None:
        a = conv.attrs
        if a.get("out_dtype") not in ("", None, *_TYPES):
            raise DnnlUnsupported("conv2d out_dtype")
        data_v = outer(conv.operands[0])
        weight = const_of(conv.operands[1])
        if data_v is None or weight is None:
            raise DnnlUnsupported("conv2d whose weight is not a constant")
        groups = int(a.get("groups", 1))
        transposed = _relay(conv).endswith("_transpose")
        out_layout = a.get("out_layout") or a["data_layout"]
        src_dims, src_st = _layout_view(shape_of(data_v.type), a["data_layout"])
        dst_dims, dst_st = _layout_view(shape_of(result.type), out_layout)
        w_dims, w_st = _kernel_view(weight, a["kernel_layout"], groups, transposed)
        if not transposed and self._winograd(a, data_v, weight, bias, post, result, name, groups):
            return
        if not transposed and self._pointwise(a, data_v, weight, bias, post, result, name, groups):
            return
        lib = self.lib
        step = _Step(name, "depthwise" if groups > 1 and groups == src_dims[1] and not transposed else "conv", 0, [])
        # (a transposed convolution multiplies each input element by a kernel's O x taps)
        outer_dims = src_dims if transposed else dst_dims
        step.macs = math.prod(outer_dims) * weight.size // max(outer_dims[1], 1)
        src_md = _md(lib, src_dims, src_st, "conv2d data", _type_of(data_v))
        dst_md = _md(lib, dst_dims, dst_st, "conv2d output", _type_of(result))
        w_type = _array_dtype(weight)
        w_user = _md(lib, w_dims, w_st, "conv2d weight", w_type)
        w_any = _md(lib, w_dims, None, "conv2d weight", w_type)
        b_md = _md(lib, [bias.size], [1], "bias", _array_dtype(bias)) if bias is not None else None
        attr = self._post_ops(post, dst_dims, dst_st, step)
        pad = a["padding"]
        nsp = len(src_dims) - 2  # 2, 1 for nn.conv1d (NCW/NWC data, OIW kernel), 3 for nn.conv3d
        if len(pad) != 2 * nsp or len(a["strides"]) != nsp or len(a["dilation"]) != nsp:
            raise DnnlUnsupported(f"{name}: padding, strides or dilation of another rank")
        pad_r = list(pad[nsp:])
        if transposed:  # the output padding: rows and columns the padding at the end leaves
            pad_r = [p - int(e) for p, e in zip(pad_r, a.get("output_padding") or [0] * nsp)]

        def conv(attr: int) -> int:
            return lib.xr_dnnl_conv(
                int(transposed), attr, src_md.handle, w_any.handle, b_md.handle if b_md else None, dst_md.handle, nsp,
                _i64(a["strides"]), _i64([d - 1 for d in a["dilation"]]), _i64(pad[:nsp]), _i64(pad_r),
            )  # fmt: skip

        pd = conv(attr)
        if not pd:
            raise DnnlUnsupported(f"oneDNN has no convolution for {name} (status {lib.xr_dnnl_last_status()})")
        if groups > 1 and step.family == "conv" and not transposed and nsp == 2:
            if self._grouped(a, data_v, weight, bias, post, result, name, groups, lib.xr_dnnl_impl(pd) or b""):
                lib.xr_dnnl_pd_free(pd)
                return
        if groups > 1 and step.family == "conv" and not transposed and _im2col(lib.xr_dnnl_impl(pd) or b""):
            stored = weight
            for f in WIDEN_GROUPS:
                if groups % f:
                    continue
                wide = _widened_kernel(weight, a["kernel_layout"], groups, f)
                wide_dims, wide_st = _kernel_view(wide, a["kernel_layout"], groups // f)
                wide_any = _md(lib, wide_dims, None, "conv2d weight", w_type)
                w_any, kept = wide_any, w_any
                wider = conv(attr)
                if wider and not _im2col(lib.xr_dnnl_impl(wider) or b""):
                    # the same convolution, f groups a group: a direct kernel for f times
                    # the products (the zeros' products add +0 to every sum)
                    lib.xr_dnnl_pd_free(pd)
                    pd, weight, groups, w_dims = wider, wide, groups // f, wide_dims
                    w_user = _md(lib, wide_dims, wide_st, "conv2d weight", w_type)
                    step.derived = True  # (the widened weight: dropped once reordered)
                    step.origins[_ARG_WEIGHTS] = (stored, ("groups widened", f))
                    step.keep.append(kept)
                    break
                if wider:
                    lib.xr_dnnl_pd_free(wider)
                w_any = kept
        apart = []
        if b"gemm" in (lib.xr_dnnl_impl(pd) or b"") and math.prod(dst_dims) >= GEMM_CONV_ELTWISE_APART:
            # oneDNN's im2col + GEMM convolution (1-D convolutions over NCW data: Whisper's,
            # wav2vec2's) applies eltwise post-ops slowly, after its GEMM: 80 -> 384
            # channels over 3000 samples took 2.6 ms, 5.6 with a ReLU post-op and 15.5 with
            # GELU; they run after it as eltwise primitives, in place over its output
            apart = _trailing_eltwise(step.post)  # type: ignore[attr-defined]
        if apart:
            lib.xr_dnnl_pd_free(pd)
            step.post = step.post[: -len(apart)]  # type: ignore[attr-defined]
            pd = conv(self._attr(step.post))  # type: ignore[attr-defined]
            if not pd:
                raise DnnlUnsupported(f"oneDNN has no convolution for {name} (status {lib.xr_dnnl_last_status()})")
        separate: list = []
        if post and not apart and _post_ops_on_reference(lib.xr_dnnl_impl(pd) or b""):
            # oneDNN has only its reference code for some convolutions with post-ops where it
            # has a kernel for the convolution alone (3.2 on AVX2: FastViT's depthwise 3x3 with
            # a residual add): the convolution alone, then each post-op a primitive of its own
            # in place over the output (else the whole function left oneDNN for numpy)
            plain = conv(self._attr([]))
            if plain and not (lib.xr_dnnl_impl(plain) or b"").startswith(b"ref"):
                lib.xr_dnnl_pd_free(pd)
                pd, separate, step.post = plain, list(post), []  # type: ignore[attr-defined]
                residuals = {_post_multiple(k) for k in range(len(post))}
                step.args = [(k, v) for k, v in step.args if k not in residuals]
                for k in residuals:
                    step.logical.pop(k, None)
            elif plain:
                lib.xr_dnnl_pd_free(plain)
        w_chosen = _Md(lib, lib.xr_dnnl_pd_md(pd, _Q_WEIGHTS, 0), "weights")
        step.weights.append((_ARG_WEIGHTS, weight, w_user, w_chosen))
        step.args[:0] = [(_ARG_SRC, self._src(data_v)), (_ARG_WEIGHTS, w_chosen)]
        step.logical[_ARG_SRC] = (src_dims, src_st)
        if bias is not None:
            step.args.append((_ARG_BIAS, _Value("const", array=np.ascontiguousarray(bias), shape=(bias.size,), dtype=_array_dtype(bias))))
            step.logical[_ARG_BIAS] = ([bias.size], [1])
        step.args.append((_ARG_DST, self._dest(result)))
        step.logical[_ARG_DST] = (dst_dims, dst_st)
        step.keep += [src_md, dst_md, w_user, w_any, b_md]
        step.cut = None if nsp != 2 or transposed else {  # (parts: rows of a 2-D convolution's output)
            "kind": "conv", "kernel": w_dims[-2], "stride": int(a["strides"][0]), "dilation": int(a["dilation"][0]),
            "pad": [int(p) for p in pad], "strides": [int(v) for v in a["strides"]],
            "dilates": [int(d) - 1 for d in a["dilation"]], "post": step.post, "weights": w_chosen, "bias": b_md,
            "types": (_type_of(data_v), _type_of(result)),
        }  # fmt: skip
        self._finish(name, step.family, pd, step)
        for _, alg, alpha, beta, _ in apart:
            self._eltwise_in_place(result, dst_dims, dst_st, alg, alpha, beta, name)
        self._post_ops_in_place(result, dst_dims, dst_st, separate, name)

    def _pointwise(self, a, data_v, weight, bias, post, result, name, groups) -> bool:
        """A 1x1 convolution over channels-last data (stride 1, no padding, float32) on the
        packed dense kernel, as the dense of its pixels' rows (``_packed_dense``), in the
        way ``"pointwise"`` (``pointwise_eligible``); False where it is not such a one."""
        if not pointwise_eligible(a, shape_of(data_v.type), weight, groups, {_type_of(data_v), _type_of(result)}, bias):
            return False
        if not self.packed_matmuls():
            return False
        self.pointwise_convs += 1
        if not self.pointwise:
            return False
        layout = a["kernel_layout"]
        o, i = layout.index("O"), layout.index("I")
        # the (O, C) rows: a view of the kernel (HWIO, the build's layout: strided), reordered
        # from where it is (``_reorder``)
        rows = weight.transpose([o, i, *(k for k in range(weight.ndim) if k not in (o, i))])[:, :, 0, 0]
        shape = shape_of(data_v.type)
        self._packed_dense(rows, data_v, bias, post, result, name, (math.prod(shape[:-1]), rows.shape[0], shape[-1]),
                           family="conv", source=weight)  # fmt: skip
        return True

    def _grouped(self, a, data_v, weight, bias, post, result, name, groups, impl: bytes) -> bool:
        """A 2-D convolution of narrow groups (at most ``GCONV_MAX_IN`` input channels and a
        multiple of 8 output channels a group, not depthwise, three taps a row, a column
        stride of 1 or 2) over channels-last float32 data on the shim's kernel for AVX2
        (``xr_dnnl_gconv``, ``grouped_conv.h``), where oneDNN would run it on ``impl``, its
        jit:avx2 direct kernel or im2col: the bias and the leading residual
        add, ReLUs and clips of ``post`` in the kernel's epilogue, the other post-ops each a
        primitive in place after it; False where it is not such a one
        (``XRELAY_DNNL_GROUPED=0``: never)."""
        if os.environ.get("XRELAY_DNNL_GROUPED", "1") == "0":
            return False
        lib = self.lib
        layout, kernel_layout = a.get("data_layout"), a.get("kernel_layout") or ""
        if layout != "NHWC" or (a.get("out_layout") or layout) != layout or sorted(kernel_layout) != sorted("OIHW"):
            return False
        shape, out = shape_of(data_v.type), shape_of(result.type)
        if {_type_of(data_v), _type_of(result)} != {"float32"} or weight.dtype != np.float32:
            return False
        if bias is not None and (bias.dtype != np.float32 or bias.size != out[-1]):
            return False
        ci, co = shape[-1] // groups, out[-1] // groups
        if ci < 2 or ci > GCONV_MAX_IN or co % 8 or any(int(d) != 1 for d in a["dilation"]):
            return False
        if not lib.xr_dnnl_gemm_built():
            return False
        kh, kw = weight.shape[kernel_layout.index("H")], weight.shape[kernel_layout.index("W")]
        pad = [int(p) for p in a["padding"]]
        sh, sw = (int(v) for v in a["strides"])
        if kw != 3 or sw not in (1, 2):
            return False
        if impl != b"jit:avx2" and not _im2col(impl):
            return False  # (oneDNN's brgconv for wider groups, AVX-512's kernels: as fast or faster)
        ops, residual = _gemm_epilogue(post)
        macs = math.prod(out) * kh * kw * ci
        table = [shape[0], shape[1], shape[2], shape[3], groups, ci, co, kh, kw, sh, sw, pad[0], pad[1], out[1], out[2]]
        handle = lib.xr_dnnl_gconv(
            _i64(table), 1 if macs < PART_WORK else 0, len(ops), (ctypes.c_int32 * _GEMM_OPS)(*[o[0] for o in ops]),
            (ctypes.c_float * _GEMM_OPS)(*[o[1] for o in ops]), (ctypes.c_float * _GEMM_OPS)(*[o[2] for o in ops]),
        )  # fmt: skip
        if not handle:
            return False
        self.keep_pd.append(_Owned(lib.xr_dnnl_gconv_free, handle))
        step = _Step(name, "conv", handle, [(_ARG_SRC, self._src(data_v))], impl="grouped_conv:avx2", custom=True, macs=macs)
        # the kernel (G, O/G, I/G, H, W) read as [group][kh][kw][in][out]
        g_dims, g_st = _kernel_view(weight, kernel_layout, groups)
        dims = [g_dims[0], g_dims[3], g_dims[4], g_dims[2], g_dims[1]]
        strides = [g_st[0], g_st[3], g_st[4], g_st[2], g_st[1]]
        w_user = _md(lib, dims, strides, "grouped conv2d weight", "float32")
        w_packed = _md(lib, dims, contiguous_strides(dims), "packed grouped conv2d weight", "float32")
        step.weights.append((_ARG_WEIGHTS, weight, w_user, w_packed))
        step.args.append((_ARG_WEIGHTS, w_packed))
        step.keep += [w_user, w_packed]
        step.logical[_ARG_SRC] = (list(shape), contiguous_strides(list(shape)))
        if bias is not None:
            step.args.append((_ARG_BIAS, _Value("const", array=np.ascontiguousarray(bias).reshape(-1), shape=(bias.size,), dtype="float32")))
            step.logical[_ARG_BIAS] = ([bias.size], [1])
        if residual is not None:
            step.args.append((_ARG_SRC_1, self._src(residual)))
            step.logical[_ARG_SRC_1] = (list(out), contiguous_strides(list(out)))
        step.args.append((_ARG_DST, self._dest(result)))
        step.logical[_ARG_DST] = (list(out), contiguous_strides(list(out)))
        self.steps.append(step)
        dst_dims, dst_st = _layout_view(out, layout)
        self._post_ops_in_place(result, dst_dims, dst_st, post[len(ops) :], name)
        return True

    def _post_ops_in_place(self, result, dims, strides, post, name) -> None:
        """``post`` (eltwise ops, residual sums, gate products) each a primitive in place over
        ``result``, which the step before wrote."""
        for kind, what in post:
            if kind == "eltwise":
                self._eltwise_in_place(result, dims, strides, *what, name)
            else:
                self._binary_in_place(result, dims, strides, _BIN_ADD if kind == "sum" else _BIN_MUL, what, name)

    def _eltwise_in_place(self, result, dims, strides, alg, alpha, beta, name) -> None:
        """One eltwise primitive over ``result`` (seen as ``dims``, ``strides``), which the
        step before wrote, in place."""
        md = _md(self.lib, dims, strides, "eltwise data", _type_of(result))
        pd = self.lib.xr_dnnl_eltwise(self._attr([]), alg, md.handle, md.handle, alpha, beta)
        where = self.values[result]
        step = _Step(name, "elementwise", 0, [(_ARG_SRC, where), (_ARG_DST, where)], keep=[md])
        step.logical[_ARG_SRC] = step.logical[_ARG_DST] = (list(dims), list(strides))
        self._finish(name, "elementwise", pd, step)

    def _binary_in_place(self, result, dims, strides, alg, other, name) -> None:
        """One binary primitive ``result = result (alg) other`` (both seen as ``dims``,
        ``strides``) over ``result``, which the step before wrote, in place."""
        src = self._src(other)
        md = _md(self.lib, dims, strides, "binary data", _type_of(result))
        other_md = _md(self.lib, dims, strides, "a residual", src.dtype)
        pd = self.lib.xr_dnnl_binary(self._attr([]), alg, md.handle, other_md.handle, md.handle)
        where = self.values[result]
        step = _Step(name, "elementwise", 0, [(_ARG_SRC, where), (_ARG_SRC_1, src), (_ARG_DST, where)], keep=[md, other_md])
        step.logical[_ARG_SRC] = step.logical[_ARG_SRC_1] = step.logical[_ARG_DST] = (list(dims), list(strides))
        self._finish(name, "elementwise", pd, step)

    def _winograd(self, a, data_v, weight, bias, post, result, name, groups) -> bool:
        """A 3x3 stride-1 float32 NHWC convolution that ``winograd_in_dnnl`` picks as three
        steps: the shim's F(4x4, 3x3) input transform into 36 matrices (tiles x channels, a
        temporary), oneDNN's batched matmul by the transformed weights (36 x C x O, computed
        once in float64 and reordered once into oneDNN's format) into a second temporary,
        and the shim's output transform into the destination with the bias, a residual (the
        sum post-op) and a ReLU."""
        if not (
            self.winograd and groups == 1 and a["data_layout"] == "NHWC" and (a.get("out_layout") or "NHWC") == "NHWC"
            and list(a["strides"]) == [1, 1] and list(a["dilation"]) == [1, 1]
            and _type_of(data_v) == "float32" and _type_of(result) == "float32"
            and weight.dtype == np.float32 and (bias is None or bias.dtype == np.float32)
        ):  # fmt: skip
            return False
        relu = ("eltwise", (_RELU, 0.0, 0.0))
        residual = post[0][1] if post and post[0][0] == "sum" else None
        if post[1 if residual is not None else 0 :] not in ([], [relu]):
            return False
        if residual is not None and _type_of(residual) != "float32":
            return False
        layout = a["kernel_layout"]
        if sorted(layout) != sorted("OIHW"):
            return False
        w_hwio = np.transpose(weight, [layout.index(ch) for ch in "HWIO"])
        n, h, w, c = shape_of(data_v.type)
        _, oh, ow, o = shape_of(result.type)
        if w_hwio.shape != (3, 3, c, o) or not winograd_in_dnnl(c, o, oh, ow):
            return False

        lib = self.lib
        name = f"{name} as Winograd F(4x4, 3x3)"  # the steps' one label in the profile
        th, tw = -(-oh // 4), -(-ow // 4)
        self.tile_rows = max(self.tile_rows, th)
        rows = min(self.band_rows, th) if self.band_rows > 0 and (self.band_rows < th or n > 1) else 0
        # the whole convolution at once (band (0, 0, 0)), or band by band of ``rows`` tile rows
        # of one image: the two temporaries then hold one band's tiles (a bounded workspace)
        bands = [(b, r0, min(r0 + rows, th)) for b in range(n) for r0 in range(0, th, rows)] if rows else [(0, 0, 0)]
        most = rows * tw if rows else n * th * tw
        v_at, self.temp = self.temp, self.temp + _round(4 * 36 * most * c)
        m_at, self.temp = self.temp, self.temp + _round(4 * 36 * most * o)
        pt, pl = a["padding"][:2]
        relu_flag = int(post[-1:] == [relu])

        def transform(kind: int, impl: str, band: tuple[int, int, int], args, logical) -> None:
            k = lib.xr_dnnl_wino(kind, relu_flag, _i64([n, h, w, c, oh, ow, o, pt, pl, *band]))
            if not k:
                raise DnnlUnsupported(f"{name}: no memory for a Winograd transform")
            self.keep_pd.append(_Owned(lib.xr_dnnl_wino_free, k))
            step = _Step(name, "conv", k, args, impl=impl, custom=True)
            step.logical.update(logical)
            self.steps.append(step)

        u = self.memo.get(("winograd", id(weight)))
        if u is None:  # (computed once for the plans of one function for several thread counts)
            u = self.memo[("winograd", id(weight))] = winograd_weights(w_hwio, 4, np.dtype(np.float32))
            release_pages(weight)
        u_user = _md(lib, [36, c, o], contiguous_strides([36, c, o]), "Winograd weights", "float32")
        u_any = _md(lib, [36, c, o], None, "Winograd weights", "float32")
        matmuls: dict[int, _Step] = {}  # one primitive descriptor per band size (the last band may be shorter)
        bias_arg = _Value("const", array=np.ascontiguousarray(bias), shape=(o,), dtype="float32") if bias is not None else None
        res = self._src(residual) if residual is not None else None
        dst = self._dest(result)
        for band in bands:
            tiles = (band[2] - band[1]) * tw if rows else most
            v = _Value("tmp", shape=(36, tiles, c), offset=v_at)
            m = _Value("tmp", shape=(36, tiles, o), offset=m_at)
            v_view = ([36, tiles, c], contiguous_strides([36, tiles, c]))
            m_view = ([36, tiles, o], contiguous_strides([36, tiles, o]))
            src_view = ([n, h, w, c], contiguous_strides([n, h, w, c]))
            transform(1, "winograd_f4_input", band, [(_ARG_SRC, self._src(data_v)), (_ARG_DST, v)],
                      {_ARG_SRC: src_view, _ARG_DST: v_view})  # fmt: skip
            step = _Step(name, "conv", 0, [], derived=True)
            made = matmuls.get(tiles)
            if made is None:
                v_md = _md(lib, *v_view, "Winograd tiles", "float32")
                m_md = _md(lib, *m_view, "Winograd products", "float32")
                pd = lib.xr_dnnl_matmul(self._attr([]), v_md.handle, u_any.handle, None, m_md.handle)
                if not pd:
                    raise DnnlUnsupported(f"oneDNN has no matmul for {name} (status {lib.xr_dnnl_last_status()})")
                u_chosen = _Md(lib, lib.xr_dnnl_pd_md(pd, _Q_WEIGHTS, 0), "weights")
                step.weights.append((_ARG_WEIGHTS, u, u_user, u_chosen))
                step.origins[_ARG_WEIGHTS] = (weight, ("winograd", 4))
                step.args[:0] = [(_ARG_SRC, v), (_ARG_WEIGHTS, u_chosen), (_ARG_DST, m)]
                step.keep += [v_md, m_md, u_user, u_any]
                step.logical[_ARG_SRC], step.logical[_ARG_DST] = v_view, m_view
                self._finish(name, "conv", pd, step)
                matmuls[tiles] = step
            else:  # the same primitive descriptor (freed once) with this band's temporaries
                step.pd, step.impl, step.weights = made.pd, made.impl, list(made.weights)
                step.origins = dict(made.origins)
                step.args = [(_ARG_SRC, v), *made.args[1:2], (_ARG_DST, m), *made.args[3:]]
                step.logical[_ARG_SRC], step.logical[_ARG_DST] = v_view, m_view
                self.steps.append(step)
            out_args = [(_ARG_SRC, m)]
            out_logical = {_ARG_SRC: m_view, _ARG_DST: ([n, oh, ow, o], contiguous_strides([n, oh, ow, o]))}
            if bias_arg is not None:
                out_args.append((_ARG_BIAS, bias_arg))
                out_logical[_ARG_BIAS] = ([o], [1])
            if res is not None:
                out_args.append((_ARG_SRC_1, res))
                out_logical[_ARG_SRC_1] = out_logical[_ARG_DST]
            out_args.append((_ARG_DST, dst))
            transform(2, "winograd_f4_output", band, out_args, out_logical)
        return True

    def _dense(self, dense, outer, const_of, bias, post, result, name) -> None:
        data_v = outer(dense.operands[0])
        weight = const_of(dense.operands[1])
        if data_v is None or weight is None or weight.ndim != 2:
            raise DnnlUnsupported("dense whose weight is not a constant matrix")
        if dense.attrs.get("out_dtype") not in ("", None, *_TYPES):  # type: ignore[attr-defined]
            raise DnnlUnsupported("dense out_dtype")
        x_shape = list(shape_of(data_v.type))
        if len(x_shape) < 2:
            raise DnnlUnsupported("dense of a vector")
        m, k = math.prod(x_shape[:-1]), x_shape[-1]  # leading dims as rows (contiguous)
        n = weight.shape[0]
        lib = self.lib
        w_type = _array_dtype(weight)
        types = {w_type, _type_of(data_v), _type_of(result), "float32" if bias is None else _array_dtype(bias)}
        if types == {"float32"} and self.packed_matmuls():
            self._packed_dense(weight, data_v, bias, post, result, name, (m, n, k))
            return
        step = _Step(name, "matmul", 0, [], macs=m * n * k)
        src_md = _md(lib, [m, k], [k, 1], "dense data", _type_of(data_v))
        dst_md = _md(lib, [m, n], [n, 1], "dense output", _type_of(result))
        ws = _elem_strides(weight)
        w_user = _md(lib, [k, n], [ws[1], ws[0]], "dense weight", w_type)  # (N, K) read as K x N
        w_any = _md(lib, [k, n], None, "dense weight", w_type)
        b_md = _md(lib, [1, n], [n, 1], "bias", _array_dtype(bias)) if bias is not None else None
        attr = self._post_ops(post, [m, n], [n, 1], step)
        pd = lib.xr_dnnl_matmul(attr, src_md.handle, w_any.handle, b_md.handle if b_md else None, dst_md.handle)
        if not pd:
            raise DnnlUnsupported(f"oneDNN has no matmul for {name} (status {lib.xr_dnnl_last_status()})")
        w_rows = None
        if _dense_rows_faster(lib.xr_dnnl_impl(pd) or b""):
            # oneDNN's jit GEMM (no brgemm matmul for this CPU: 3.2 on AVX2) runs faster on
            # the dense's own (N, K) rows than on the format "any" gives it: on an AMD EPYC
            # (Zen 3) 128 x 768 -> 3072 took 9.42 -> 5.27 ms on two threads, 12.1 -> 6.3 on
            # one, 49 x 1024 -> 4096 6.64 -> 4.46; other BERT and ViT shapes the same or
            # faster (15 alternated rounds each)
            w_rows = _md(lib, [k, n], [1, k], "dense weight", w_type)
            rows_pd = lib.xr_dnnl_matmul(self._attr(step.post), src_md.handle, w_rows.handle,  # type: ignore[attr-defined]
                                         b_md.handle if b_md else None, dst_md.handle)  # fmt: skip
            if rows_pd and not (lib.xr_dnnl_impl(rows_pd) or b"").startswith(b"ref"):
                lib.xr_dnnl_pd_free(pd)
                pd = rows_pd
            elif rows_pd:
                lib.xr_dnnl_pd_free(rows_pd)
        w_chosen = _Md(lib, lib.xr_dnnl_pd_md(pd, _Q_WEIGHTS, 0), "weights")
        step.weights.append((_ARG_WEIGHTS, weight, w_user, w_chosen))
        step.args[:0] = [(_ARG_SRC, self._src(data_v)), (_ARG_WEIGHTS, w_chosen)]
        step.logical[_ARG_SRC] = ([m, k], [k, 1])
        if bias is not None:
            step.args.append((_ARG_BIAS, _Value("const", array=np.ascontiguousarray(bias).reshape(1, n), shape=(1, n), dtype=_array_dtype(bias))))
            step.logical[_ARG_BIAS] = ([1, n], [n, 1])
        step.args.append((_ARG_DST, self._dest(result)))
        step.logical[_ARG_DST] = ([m, n], [n, 1])
        step.keep += [src_md, dst_md, w_user, w_any, w_rows, b_md]
        step.cut = {  # (parts: rows of the output)
            "kind": "dense", "k": k, "post": step.post, "weights": w_chosen, "bias": b_md,  # type: ignore[attr-defined]
            "types": (_type_of(data_v), _type_of(result)),
        }  # fmt: skip
        self._finish(name, "matmul", pd, step)

    def _packed_dense(self, weight, data_v, bias, post, result, name, mnk, family="matmul", source=None) -> None:
        """A float32 dense step on the shim's kernel for AVX2 (``xr_dnnl_gemm``,
        ``packed_gemm.h``) where oneDNN has only its jit GEMM (``packed_matmuls``):
        ``weight`` (N, K) reordered once into panels of 16 output columns (``[n // 16, k,
        16]``, and the rows left padded with zero rows to a panel of their own), the bias and
        the leading residual adds, ReLUs and clips of ``post`` in the kernel's epilogue, the
        other post-ops (GELU, a gate) each a primitive in place over the output after it. The data's rows packed by six (the
        kernel's first pass) are a temporary of the plan's workspace. ``source``: the stored
        constant ``weight`` was read from (a 1x1 convolution's kernel), which plans share its
        panels by (``_Step.origins``)."""
        lib = self.lib
        m, n, k = mnk
        ops, residual = _gemm_epilogue(post)
        owned = _gemm_kernel(lib, m, n, k, 1 if max(m, STREAMED_ROWS) * n * k < PART_WORK else 0, ops)
        if owned is None:
            raise DnnlUnsupported(f"{name}: no memory for the dense kernel")
        self.keep_pd.append(owned)
        kernel = owned.handle
        packed_bytes = lib.xr_dnnl_gemm_packed_bytes(kernel)
        at, self.temp = self.temp, self.temp + _round(packed_bytes)  # A's rows packed by 6
        args: list[tuple[int, Any]] = [
            (_ARG_SRC, self._src(data_v)), (_ARG_PACKED, _Value("tmp", shape=(packed_bytes // 4,), offset=at)),
        ]  # fmt: skip
        step = _Step(name, family, kernel, args, impl="packed_gemm:avx2", custom=True, macs=m * n * k)
        source = weight if source is None else source
        full = n // 16 * 16
        if full:  # the whole panels, straight from the stored rows (a mapped file's in parts)
            rows = weight[:full]
            ws = _elem_strides(rows)
            w_user = _md(lib, [full // 16, k, 16], [16 * ws[0], ws[1], ws[0]], "dense weight", "float32")
            w_packed = _md(lib, [full // 16, k, 16], contiguous_strides([full // 16, k, 16]), "packed dense weight", "float32")
            step.weights.append((_ARG_WEIGHTS, rows, w_user, w_packed))
            step.args.append((_ARG_WEIGHTS, w_packed))
            step.origins[_ARG_WEIGHTS] = (source, ("panels", 16))
            step.keep += [w_user, w_packed]
        if n > full:  # the last rows, padded with zero rows to a panel
            tail = np.zeros((16, k), np.float32)
            tail[: n - full] = weight[full:]
            release_pages(weight[full:])  # (a mapped file's: copied here, not held resident)
            t_user = _md(lib, [1, k, 16], [16 * k, 1, k], "dense weight", "float32")
            t_packed = _md(lib, [1, k, 16], contiguous_strides([1, k, 16]), "packed dense weight", "float32")
            step.weights.append((_ARG_WEIGHTS_TAIL, tail, t_user, t_packed))
            step.args.append((_ARG_WEIGHTS_TAIL, t_packed))
            step.origins[_ARG_WEIGHTS_TAIL] = (source, ("tail panel", 16))
            step.derived = True
            step.keep += [t_user, t_packed]
        step.logical[_ARG_SRC] = ([m, k], [k, 1])
        step.logical[_ARG_PACKED] = ([packed_bytes // 4], [1])
        if bias is not None:
            step.args.append((_ARG_BIAS, _Value("const", array=np.ascontiguousarray(bias).reshape(n), shape=(n,), dtype="float32")))
            step.logical[_ARG_BIAS] = ([n], [1])
        if residual is not None:
            step.args.append((_ARG_SRC_1, self._src(residual)))
            step.logical[_ARG_SRC_1] = ([m, n], [n, 1])
        step.args.append((_ARG_DST, self._dest(result)))
        step.logical[_ARG_DST] = ([m, n], [n, 1])
        step.cut = {"kind": "packed", "n": n, "k": k, "ops": ops}  # (parts: whole tiles of rows)
        self.steps.append(step)
        self._post_ops_in_place(result, [m, n], [n, 1], post[len(ops) :], name)

    def packed_matmuls(self) -> bool:
        """Whether float32 dense steps run on the shim's packed kernel
        (``_dense_on_packed``: oneDNN makes only its jit GEMM for a float32 matmul here),
        probed once per reader."""
        if self._packed is None:
            lib = self.lib
            self._packed = False
            if packed_dense_enabled() and lib.xr_dnnl_gemm_built():
                x = _md(lib, [64, 64], [64, 1], "a probe")
                w = _md(lib, [64, 64], None, "a probe")
                probe = lib.xr_dnnl_matmul(self._attr([]), x.handle, w.handle, None, x.handle)
                if probe:
                    self._packed = _dense_on_packed(lib.xr_dnnl_impl(probe) or b"")
                    lib.xr_dnnl_pd_free(probe)
        return self._packed

    # -- single ops ------------------------------------------------------------------------

    def _single(self, op: RelayOp) -> None:
        nm = op.RELAY_NAME
        lib = self.lib
        if nm in (*_CONVS, "nn.dense") and len(op.results) == 1:
            # offloaded alone (no bias or epilogue matched a pattern): a primitive without post-ops
            def outer(v: SSAValue) -> SSAValue:
                return v

            def const_of(v: SSAValue) -> np.ndarray | None:
                where = self.values.get(v)
                return where.array if where is not None and where.kind == "const" else None

            make = self._dense if nm == "nn.dense" else self._conv
            make(op, outer, const_of, None, [], op.results[0], nm)
            return
        if nm == "nn.instance_norm":
            self._instance_norm(op)
            return
        res = op.results[0] if len(op.results) == 1 else None
        if res is None:
            raise DnnlUnsupported(f"{nm} with several results")
        out_shape = list(shape_of(res.type))
        step = _Step(nm, "other", 0, [])
        a = op.attrs
        if nm in ("nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d", "nn.max_pool3d", "nn.avg_pool3d"):
            nsp = 3 if nm.endswith("3d") else 2
            layout = a.get("layout", "NCDHW" if nsp == 3 else "NCHW")
            out_layout = a.get("out_layout") or layout
            x = op.operands[0]
            src_dims, src_st = _layout_view(shape_of(x.type), layout)
            dst_dims, dst_st = _layout_view(out_shape, out_layout)
            if nm == "nn.global_avg_pool2d":
                kernel, strides, dil, pad = src_dims[2:], [1, 1], [0, 0], [0, 0, 0, 0]
                alg = _POOL_AVG_INCLUDE
            else:
                kernel, strides = list(a["pool_size"]), list(a["strides"])
                dil = [d - 1 for d in a.get("dilation", (1,) * nsp)]
                if nsp == 3 and a.get("ceil_mode"):
                    raise DnnlUnsupported("a 3-D pool in ceil mode")
                padding = explicit_pool_padding(op) if nsp == 2 else tuple(a["padding"])  # ceil mode: the overhang
                if padding is None:
                    raise DnnlUnsupported("a ceil_mode pool whose windows no explicit padding gives")
                pad = list(padding)
                if nm.startswith("nn.max_pool"):
                    alg = _POOL_MAX
                else:
                    alg = _POOL_AVG_INCLUDE if a.get("count_include_pad") else _POOL_AVG_EXCLUDE
            src_md = _md(lib, src_dims, src_st, "pool data", _type_of(x))
            dst_md = _md(lib, dst_dims, dst_st, "pool output", _type_of(res))
            attr = self._attr([])
            pd = lib.xr_dnnl_pool(attr, alg, src_md.handle, dst_md.handle, nsp, _i64(strides), _i64(kernel), _i64(dil), _i64(pad[:nsp]), _i64(pad[nsp:]))
            step.family = "pool"
            step.args = [(_ARG_SRC, self._src(x))]
            step.logical[_ARG_SRC] = (src_dims, src_st)
            step.logical[_ARG_DST] = (dst_dims, dst_st)
        elif nm in ("layout_transform", "cast", "reshape", "nn.batch_flatten"):
            # one reorder: another plain layout of the same logical tensor, another type, or
            # (a reshape between two oneDNN steps) a copy of the same bytes
            x = op.operands[0]
            if nm != "layout_transform":
                if nm != "cast" and _type_of(x) != _type_of(res):
                    raise DnnlUnsupported(f"{nm} that changes the type")
                dims = list(out_shape)
                src_st = dst_st = contiguous_strides(dims)
                src_dims = dims
            else:
                src_dims, src_st = _layout_view(shape_of(x.type), a["src_layout"])
                dims, dst_st = _layout_view(out_shape, a["dst_layout"])
                if src_dims != dims:
                    raise DnnlUnsupported("a layout_transform that changes the logical shape")
            src_md = _md(lib, src_dims, src_st, "reorder source", _type_of(x))
            dst_md = _md(lib, dims, dst_st, "reorder destination", _type_of(res))
            pd = lib.xr_dnnl_reorder(src_md.handle, dst_md.handle)
            step.family = "copy"
            step.args = [(_ARG_SRC, self._src(x))]
            step.logical[_ARG_SRC] = (src_dims, src_st)
            step.logical[_ARG_DST] = (dims, dst_st)
            step.keep += [src_md, dst_md]
        elif nm == "nn.softmax":
            x = op.operands[0]
            shape = list(shape_of(x.type))
            axis = int(a.get("axis", -1)) % len(shape)
            st = contiguous_strides(shape)
            src_md = _md(lib, shape, st, "softmax data", _type_of(x))
            dst_md = _md(lib, shape, st, "softmax output", _type_of(res))
            step.keep += [src_md, dst_md]
            pd = lib.xr_dnnl_softmax(self._attr([]), src_md.handle, dst_md.handle, axis)
            step.args = [(_ARG_SRC, self._src(x))]
            step.logical[_ARG_SRC] = (shape, st)
            step.logical[_ARG_DST] = (shape, st)
        elif nm == "nn.layer_norm":
            x, gamma, beta = op.operands
            shape = list(shape_of(x.type))
            axis = int(a.get("axis", -1)) % len(shape)
            if axis != len(shape) - 1:
                raise DnnlUnsupported("layer_norm over an axis that is not the last")
            st = contiguous_strides(shape)
            if _type_of(gamma) != "float32" or _type_of(beta) != "float32":
                raise DnnlUnsupported("layer_norm scale and shift must be float32")
            src_md = _md(lib, shape, st, "layer_norm data", _type_of(x))
            dst_md = _md(lib, shape, st, "layer_norm output", _type_of(res))
            step.keep += [src_md, dst_md]
            flags = (_USE_SCALE if a.get("scale", True) else 0) | (_USE_SHIFT if a.get("center", True) else 0)
            pd = lib.xr_dnnl_layer_norm(self._attr([]), src_md.handle, dst_md.handle, float(a.get("epsilon", 1e-5)), flags)
            step.args = [(_ARG_SRC, self._src(x))]
            c = shape[-1]
            if flags & _USE_SCALE:
                step.args.append((_ARG_SCALE, self._src(gamma)))
                step.logical[_ARG_SCALE] = ([c], [1])
            if flags & _USE_SHIFT:
                step.args.append((_ARG_SHIFT, self._src(beta)))
                step.logical[_ARG_SHIFT] = ([c], [1])
            step.logical[_ARG_SRC] = (shape, st)
            step.logical[_ARG_DST] = (shape, st)
        elif nm in _BINARY:
            x, y = op.operands
            xs, ys = list(shape_of(x.type)), list(shape_of(y.type))
            if xs != out_shape and ys == out_shape:
                x, y, xs, ys = y, x, ys, xs  # add and multiply commute; src0 is the full shape
            if xs != out_shape:
                raise DnnlUnsupported("a binary op whose operands both broadcast")
            if not _type_of(x) == _type_of(y) == _type_of(res):
                raise DnnlUnsupported("a binary op of mixed types")
            ys = [1] * (len(out_shape) - len(ys)) + ys
            yv = self._src(y)
            y_st = contiguous_strides(ys) if yv.kind != "const" else None
            if yv.kind == "const":
                arr = np.ascontiguousarray(yv.array).reshape(ys)
                yv = _Value("const", array=arr, shape=tuple(ys), dtype=yv.dtype)
                y_st = contiguous_strides(ys)
            st = contiguous_strides(out_shape)
            x_md = _md(lib, out_shape, st, "binary operand", _type_of(x))
            y_md = _md(lib, ys, y_st, "binary operand", _type_of(y))
            pd = lib.xr_dnnl_binary(self._attr([]), _BINARY[nm], x_md.handle, y_md.handle, x_md.handle)
            step.family = "elementwise"
            step.args = [(_ARG_SRC, self._src(x)), (_ARG_SRC_1, yv)]
            step.logical[_ARG_SRC] = (out_shape, st)
            step.logical[_ARG_SRC_1] = (ys, y_st)
            step.logical[_ARG_DST] = (out_shape, st)
            step.keep += [x_md, y_md]
        elif nm in _UNARY or nm == "nn.leaky_relu":
            x = op.operands[0]
            st = contiguous_strides(out_shape)
            alpha = beta = 0.0
            alg = _RELU if nm == "nn.leaky_relu" else _UNARY[nm]
            if nm == "clip":
                alpha, beta = float(a["a_min"]), float(a["a_max"])
            elif nm == "nn.leaky_relu":
                alpha = float(a.get("alpha", 0.01))
            if _type_of(x) != _type_of(res):
                raise DnnlUnsupported("an eltwise op that changes type")
            md = _md(lib, out_shape, st, "eltwise data", _type_of(x))
            pd = lib.xr_dnnl_eltwise(self._attr([]), alg, md.handle, md.handle, alpha, beta)
            step.family = "elementwise"
            step.args = [(_ARG_SRC, self._src(x))]
            step.logical[_ARG_SRC] = (out_shape, st)
            step.logical[_ARG_DST] = (out_shape, st)
            step.keep.append(md)
        elif nm == "nn.batch_matmul":
            x, y = op.operands
            ta, tb = bool(a.get("transpose_a", False)), bool(a.get("transpose_b", True))
            xs, ys = list(shape_of(x.type)), list(shape_of(y.type))
            if len(xs) != 3 or len(ys) != 3:
                raise DnnlUnsupported("batch_matmul of tensors that are not 3-D")
            bx, m, k = xs[0], *((xs[2], xs[1]) if ta else (xs[1], xs[2]))
            by = ys[0]
            n = ys[1] if tb else ys[2]
            b = max(bx, by)
            # operands and result as the strides of the buffers they are views of (the
            # heads' reshapes and transposes, folded into the matmul: ``_view_op``), over
            # batch dims fine enough for each (``refine_batches``)
            xv, x_fd, x_fs = self._src_view(x)
            yv, y_fd, y_fs = self._src_view(y)
            x_mat = [x_fs[-1], x_fs[-2]] if ta else [x_fs[-2], x_fs[-1]]
            y_mat = [y_fs[-1], y_fs[-2]] if tb else [y_fs[-2], y_fs[-1]]
            epilogue = None if op in self.plain_matmuls else self._matmul_epilogue(res, b, m, n)
            if epilogue is None:
                ov, o_fd, o_fs = self._dest_view(res)
                o_mat, o_batch = o_fs[-2:], [(o_fd[:-2], o_fs[:-2])]
            else:
                batch, ops, end, chain = epilogue
                ov = self._dest(end)  # the epilogue's end, contiguous
                o_mat, o_batch = contiguous_strides([m, n]), [(batch, contiguous_strides([*batch, m, n])[:-2])]
            fine = refine_batches([x_fd[:-2], y_fd[:-2], *(d for d, _ in o_batch)])
            if fine is not None and epilogue is not None and fine == refine_batches([batch]):
                fine = list(batch)  # as the epilogue sees them, dims of 1 kept (oneDNN's
                # fast post-op broadcasts are told apart by rank: BERT's (1, 1, s, s) mask
                # over (1, heads, s, s) scores is one, over (heads, s, s) it is not)
            elif fine == []:
                fine = [1]  # one matrix: a 3-D matmul, as a batch of one
            if fine is not None and len(fine) == 1 and fine[0] > 1:
                # one batch dim as two, the first of 1: oneDNN's brgemm matmul takes the
                # heads' strided layouts (acbd, adbc) at rank 4 only; at rank 3 they ran
                # as gemm:jit:f32 (Whisper's 6 x 1500 x 64 scores 15.4 ms, here 12.1)
                fine = [1, *fine]
            x_b = None if fine is None else batch_strides(x_fd[:-2], x_fs[:-2], fine)
            y_b = None if fine is None else batch_strides(y_fd[:-2], y_fs[:-2], fine)
            o_b = None if fine is None else batch_strides(*o_batch[0], fine)
            if fine is None or x_b is None or y_b is None or o_b is None:
                raise DnnlUnsupported("batch_matmul operands whose batch dims no strides align")
            post_dims: list[list[int]] = []
            if epilogue is not None:
                # the ops as binary post-ops: each operand's dims over the batch dims (a dim
                # of the epilogue's batch it spans whole, or 1)
                groups = _batch_groups(fine, batch) if batch else []
                for _, _, dims in ops:
                    if groups is None:
                        raise DnnlUnsupported("an epilogue whose batch dims no strides align")
                    split: list[int] = []
                    for (lo, hi), d in zip(groups, dims[:-2]):
                        split += fine[lo:hi] if d != 1 else [1] * (hi - lo)
                    post_dims.append([*split, *dims[-2:]])
            x_dims, x_st = [*fine, m, k], _dense_units([*fine, m, k], [*x_b, *x_mat])
            y_dims, y_st = [*fine, k, n], _dense_units([*fine, k, n], [*y_b, *y_mat])
            o_dims, o_st = [*fine, m, n], _dense_units([*fine, m, n], [*o_b, *o_mat])
            # (the batch dims are not reordered for the post-ops' broadcasts: oneDNN's
            # gemm:jit:f32 misplaces a post-op operand over a result not dense in its order)
            post_views = [(d, contiguous_strides(d)) for d in post_dims]
            mds = [_md(lib, d, st, "an epilogue operand", "float32") for d, st in post_views]
            post = [(2, _BINARY[_relay(o)], 0.0, 0.0, md) for (o, _, _), md in zip(ops, mds)] if epilogue else []
            x_md = _md(lib, x_dims, x_st, "batch_matmul operand", _type_of(x))
            y_md = _md(lib, y_dims, y_st, "batch_matmul operand", _type_of(y))
            o_md = _md(lib, o_dims, o_st, "batch_matmul output", _type_of(res))
            try:
                pd = lib.xr_dnnl_matmul(self._attr(post), x_md.handle, y_md.handle, None, o_md.handle)
            except DnnlUnsupported:
                if epilogue is None:
                    raise
                pd = 0
            if pd and epilogue is not None and (lib.xr_dnnl_impl(pd) or b"").startswith(b"ref"):
                # oneDNN's reference code (Swin's bias broadcast over a 4-D batch: 10x
                # slower than the plain matmul and the adds apart)
                lib.xr_dnnl_pd_free(pd)
                pd = 0
            if not pd and epilogue is not None:  # a broadcast oneDNN's post-ops lack:
                self.consumed.difference_update(chain)  # the ops run as steps of their own
                self.produced.difference_update(o.results[0] for o in chain)
                self.values.pop(end, None)
                self.plain_matmuls.add(op)
                self._single(op)
                return
            if epilogue is not None:
                for i, ((_, other, _), view, md) in enumerate(zip(ops, post_views, mds)):
                    step.args.append((_post_multiple(i), self._src(other)))
                    step.logical[_post_multiple(i)] = view
                    step.keep.append(md)
                step.name = "+".join([nm, *(_relay(o) for o, _, _ in ops)])
            step.family = "matmul"
            step.args[:0] = [(_ARG_SRC, xv), (_ARG_WEIGHTS, yv)]
            step.logical[_ARG_SRC] = (x_dims, x_st)
            step.logical[_ARG_WEIGHTS] = (y_dims, y_st)
            step.logical[_ARG_DST] = (o_dims, o_st)
            step.keep += [x_md, y_md, o_md]
            if not pd:
                raise DnnlUnsupported(f"oneDNN has no primitive for {nm} (status {lib.xr_dnnl_last_status()})")
            step.args.append((_ARG_DST, ov))
            self._finish(step.name, step.family, pd, step)
            return
        else:
            raise DnnlUnsupported(f"op {nm}")
        if not pd:
            raise DnnlUnsupported(f"oneDNN has no primitive for {nm} (status {lib.xr_dnnl_last_status()})")
        step.args.append((_ARG_DST, self._dest(res)))
        self._finish(nm, step.family, pd, step)


    def _instance_norm(self, op: RelayOp) -> None:
        """``nn.instance_norm`` over channels-first data ``(N, C, ...)`` (GroupNorm as torch
        exports it: ``(N, groups, C/groups * H * W)``; InstanceNorm): oneDNN's layer
        normalisation of the ``N*C`` contiguous rows, without scale or shift, then, unless
        gamma and beta are constant ones and zeros, one binary multiply by gamma with the
        add of beta as its post-op, in place, both broadcast along the channels."""
        x, gamma, beta = op.operands
        res = op.results[0]
        a = op.attrs
        shape = list(shape_of(x.type))
        if len(shape) < 3 or int(a.get("axis", 1)) % len(shape) != 1:
            raise DnnlUnsupported("instance_norm over another axis than the channels of NC... data")
        dtype = _type_of(x)
        if _type_of(res) != dtype:
            raise DnnlUnsupported("an instance_norm that changes type")
        lib = self.lib
        n, c = shape[0], shape[1]
        rows, size = [n * c, math.prod(shape[2:])], [math.prod(shape[2:]), 1]
        src_md = _md(lib, rows, size, "instance_norm data", dtype)
        pd = lib.xr_dnnl_layer_norm(self._attr([]), src_md.handle, src_md.handle, float(a.get("epsilon", 1e-5)), 0)
        step = _Step("nn.instance_norm", "other", 0, [(_ARG_SRC, self._src(x))], keep=[src_md])
        step.logical[_ARG_SRC] = step.logical[_ARG_DST] = (rows, size)
        dest = self._dest(res)
        step.args.append((_ARG_DST, dest))
        self._finish("nn.instance_norm", "other", pd, step)
        affine: list[tuple[int, np.ndarray]] = []
        for v, flag, neutral, alg in ((gamma, "scale", 1.0, _BIN_MUL), (beta, "center", 0.0, _BIN_ADD)):
            if not a.get(flag, True):
                continue
            held = self.values.get(v)
            arr = held.array if held is not None and held.kind == "const" else None
            if arr is None:
                raise DnnlUnsupported("instance_norm whose scale or shift is not a constant")
            if not np.all(arr == neutral):
                affine.append((alg, np.ascontiguousarray(arr, dtype=_np_type(dtype)).reshape(1, c, 1)))
        if not affine:
            return
        full, full_st = [n, c, rows[1]], contiguous_strides([n, c, rows[1]])
        x_md = _md(lib, full, full_st, "instance_norm output", dtype)
        vec = [1, c, 1]
        mds = [_md(lib, vec, contiguous_strides(vec), "instance_norm scale or shift", dtype) for _ in affine]
        attr = self._attr([(2, alg, 0.0, 0.0, md) for (alg, _), md in zip(affine[1:], mds[1:])])
        pd = lib.xr_dnnl_binary(attr, affine[0][0], x_md.handle, mds[0].handle, x_md.handle)
        consts = [_Value("const", array=arr, shape=tuple(vec), dtype=dtype) for _, arr in affine]
        step = _Step("nn.instance_norm affine", "elementwise", 0, [(_ARG_SRC, dest), (_ARG_SRC_1, consts[0])],
                     keep=[x_md, *mds])  # fmt: skip
        step.logical[_ARG_SRC] = step.logical[_ARG_DST] = (full, full_st)
        step.logical[_ARG_SRC_1] = (vec, contiguous_strides(vec))
        for k, value in enumerate(consts[1:]):
            step.args.append((_post_multiple(k), value))
            step.logical[_post_multiple(k)] = (vec, contiguous_strides(vec))
        step.args.append((_ARG_DST, dest))
        self._finish("nn.instance_norm affine", "elementwise", pd, step)


def plan_function(
    fn: func.FuncOp,
    module: ModuleOp | None = None,
    *,
    lookup: Callable[[str], func.FuncOp | None] | None = None,
    constant: Callable[[ConstantOp], np.ndarray] | None = None,
    fixed: Sequence[np.ndarray | None] = (),
    threads: int | None = None,
    winograd: bool = True,
    band_rows: int = 0,
    pointwise: bool = False,
    memo: dict | None = None,
) -> FunctionPlan:
    """The primitives of ``fn`` (``DnnlUnsupported`` if oneDNN cannot run all of it, or the
    library is unavailable). ``constant(op)`` gives a constant's array (default its data);
    ``fixed[i]``, when not None, is the value of parameter ``i`` that every call passes (a
    weight the caller holds as a constant). ``threads`` (default: the executor's default,
    ``runtime.parallel.default_threads``) is how many threads the primitives are made for: a
    oneDNN primitive splits its work, and sizes its scratchpad, for the OpenMP thread count
    current when its descriptor is created. ``winograd=False`` runs every convolution direct
    (for a workspace planned without Winograd's temporaries); ``band_rows`` (0: none) runs
    each Winograd convolution band by band of that many rows of 4x4 output tiles, so its
    temporaries hold one band (the workspace ``state_scratch`` chose); ``pointwise`` runs its
    1x1 convolutions on the packed dense kernel (``pointwise_eligible``). ``memo`` shares what plans of
    the same function compute from its weights (Winograd's transformed weights)."""
    lib = dnnl_library()
    if lib is None:
        raise DnnlUnsupported("the oneDNN library is unavailable")
    if threads is None:

        threads = default_threads()
    lib.xr_dnnl_set_threads(threads)
    if module is None:
        top = fn.get_toplevel_object()
        module = top if isinstance(top, ModuleOp) else None
    if lookup is None and module is not None:
        lookup = _functions_of(module)
    reader = _Reader(lib, fn, {}, constant or (lambda op: op.numpy()), fixed)
    reader.winograd = winograd
    reader.band_rows = band_rows
    reader.pointwise = pointwise
    if memo is not None:  # derived weights shared between plans of the same function
        reader.memo = memo
    if lookup is not None:
        reader.funcs = _Lookup(lookup)  # type: ignore[assignment]
    plan = reader.read()
    plan.keep = reader.keep_pd
    plan.descriptors = reader.descriptors
    plan.tile_rows = reader.tile_rows
    plan.pointwise_convs = reader.pointwise_convs
    return plan


def measure_plans(fn: func.FuncOp, plans: Sequence[FunctionPlan], fixed: Sequence[np.ndarray | None], threads: int,
                  rounds: int = POINTWISE_ROUNDS) -> list[float]:  # fmt: skip
    """The median seconds of a run of each of ``plans`` (ways to run ``fn``, made for
    ``threads`` threads and not bound), alternated run by run ``rounds`` times after one run
    each, over zeros (its inputs but the ``fixed`` constants, outputs and workspace each
    the plan's own arrays). Binds the plans (they are spent)."""
    lib = dnnl_library()
    assert lib is not None
    args = fn.body.block.args
    ins = [
        fixed[i] if i < len(fixed) and fixed[i] is not None else np.zeros(shape_of(a.type), _np_type(_type_of(a)))
        for i, a in enumerate(args)
    ]  # fmt: skip
    outs = [np.zeros(shape_of(t), _np_type(dtype_of(t))) for t in fn.function_type.outputs.data]
    thunks = []
    for plan in plans:
        ws = _aligned(plan.workspace_bytes, zeroed=True) if plan.workspace_bytes else None
        thunks.append(plan.bind(ins, outs, ws, threads))
    times: list[list[float]] = [[] for _ in plans]
    for _ in range(rounds + 1):
        for thunk, seen in zip(thunks, times):
            t0 = time.perf_counter()
            thunk()
            seen.append(time.perf_counter() - t0)
    return [float(np.median(seen[1:])) for seen in times]


def band_rows_choices(tile_rows: int) -> list[int]:
    """The band heights (rows of 4x4 output tiles) offered for a Winograd convolution of
    ``tile_rows`` tile rows, tallest first: about a half, a quarter, ... of the image, down to
    one row (each halves the temporaries again)."""
    out: list[int] = []
    k = 2
    while tile_rows > 1:
        rows = -(-tile_rows // k)
        if rows not in out:
            out.append(rows)
        if rows == 1:
            break
        k *= 2
    return out


def way_label(winograd: bool = True, band_rows: int = 0, pointwise: bool = False) -> str:
    """The label of a way to run a dnnl function (``relay.scratch_options``):
    ``"winograd"`` (Winograd convolutions whole), ``"winograd-rows=R"`` (in bands of R tile
    rows), ``"direct"`` (every convolution direct), ``"pointwise"`` (its 1x1 convolutions on
    the packed dense kernel)."""
    if pointwise:
        return "pointwise"
    if not winograd:
        return "direct"
    return f"winograd-rows={band_rows}" if band_rows else "winograd"


def way_of(label: str | None) -> dict[str, Any]:
    """``plan_function``'s ``winograd``/``band_rows`` for a label of ``way_label`` (None: the
    default); a ``DnnlUnsupported`` for another label."""
    if label in (None, "winograd"):
        return {}
    if label == "direct":
        return {"winograd": False}
    if label == "pointwise":
        return {"pointwise": True}
    prefix = "winograd-rows="
    if label.startswith(prefix) and label[len(prefix):].isdigit() and int(label[len(prefix):]) > 0:
        return {"band_rows": int(label[len(prefix):])}
    raise DnnlUnsupported(f"unknown way to run a oneDNN function: {label!r}")


def _functions_of(module: ModuleOp) -> Callable[[str], func.FuncOp | None]:
    """The functions of ``module`` by name, indexed on the first look-up: a plan of a function
    that calls none does not read the module (``offload_movement`` plans one per region)."""
    index: dict[str, func.FuncOp] | None = None

    def find(name: str) -> func.FuncOp | None:
        nonlocal index
        if index is None:
            index = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
        return index.get(name)

    return find


class _Lookup(dict):
    def __init__(self, lookup: Callable[[str], func.FuncOp | None]):
        super().__init__()
        self._lookup = lookup

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        found = self._lookup(key)
        return default if found is None else found
