"""How the native kernels use a step's planned workspace: the one statement both sides read.

The kernels (``fast_kernels``, ``fast_nhwc``) lay their scratch out by these functions; the
native engine's compile-time side (``xrelay.backend.native.scratch``) sizes each fused
function's workspace with them and records its choices in the module, so the run time reads
them instead of deciding again:

* ``WINOGRAD_TILE_ATTR`` on an ``nn.conv2d`` (``relay.winograd_tile = 4 : i64``): the block
  size ``m`` of Winograd F(m x m, 3x3) the workspace was planned for;
* ``relay.kernel_scratch_bytes`` on the function (``xrelay.dialects.memory``): the bytes at
  the start of the workspace that belong to the kernels (the function's temporaries follow).
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import IntegerAttr, TensorType
from xdsl.ir import Operation

from xrelay.dialects.relay import dtype_of

__all__ = [
    "CHUNKED_ELEMENTWISE",
    "ELEMENTWISE_CHUNK",
    "WINOGRAD_F4_MAX_AREA",
    "WINOGRAD_TILE_ATTR",
    "dft_scratch_bytes",
    "elementwise_scratch_bytes",
    "gather_nd_scratch_bytes",
    "resize_scratch_bytes",
    "stated_winograd_tile",
    "winograd_scratch_bytes",
    "winograd_slice_bytes",
]

WINOGRAD_TILE_ATTR = "relay.winograd_tile"
"""Attribute of an ``nn.conv2d`` whose workspace was planned for Winograd F(m x m, 3x3): m."""


WINOGRAD_F4_MAX_AREA = 128 * 128
"""The largest output (height x width) a convolution runs as Winograd F(4x4, 3x3); larger
maps run direct on oneDNN (``dnnl.winograd_in_dnnl``) and as F(2x2, 3x3) on the native
kernels (``backend.native.scratch.winograd_tile``). The whole model's error budget: F(4x4)'s
rounding grows with how smooth its input is over a 6x6 tile, and the first, largest maps of
a network (the image itself, barely filtered) are the smoothest; their errors are also the
ones the most layers amplify. Zoo Inception-v3 against onnxruntime: 1.03e-4 with its two
147x147 stem layers as F(4x4), 6.0e-5 with them direct (direct everywhere: 4.3e-5), 2 % slower
(F(4x4) everywhere else it runs: 11 % faster than direct). See docs/guide/runtime.md,
"Winograd numerics"."""


def stated_winograd_tile(op: Operation) -> int:
    """The Winograd block size the compiler planned ``op``'s workspace for, or 0."""
    attr = op.attributes.get(WINOGRAD_TILE_ATTR)
    return attr.value.data if isinstance(attr, IntegerAttr) else 0


def winograd_slice_bytes(rows: int, tiles: int, itemsize: int) -> int:
    """Bytes between two of a Winograd convolution's tile-element matrices (``rows x
    tiles``): whole cache lines, an odd number of them, so the 16 or 36 rows a transform
    writes or reads at once never share cache sets (a power-of-two distance made the input
    transform 8x slower, measured)."""
    lines = -(-rows * tiles * itemsize // 64)
    return 64 * (lines + 1 - lines % 2)


def winograd_scratch_bytes(
    in_c: int, out_c: int, out_h: int, out_w: int, itemsize: int, tile: int = 2
) -> int:
    """Scratch bytes of one image's Winograd F(tile x tile, 3x3) convolution: the
    transformed input tiles (``(tile + 2)**2`` matrices ``in_c x T``, ``T`` the output
    blocks) and the products (as many matrices ``out_c x T``), each matrix starting on a
    cache line (see ``winograd_slice_bytes``)."""
    tiles = -(-out_h // tile) * -(-out_w // tile)
    count = (tile + 2) ** 2
    return count * (
        winograd_slice_bytes(in_c, tiles, itemsize) + winograd_slice_bytes(out_c, tiles, itemsize)
    )


ELEMENTWISE_CHUNK = 4096
"""Elements per chunk of the arena executor's elementwise kernels that need scratch (a float
``sigmoid`` keeps ``exp(-|x|)`` and the sign beside the result): their scratch is one chunk in
the step's workspace (``elementwise_scratch_bytes``), never an array the size of the tensor."""

CHUNKED_ELEMENTWISE = frozenset({"sigmoid", "nn.softmax", "where", "nn.l2_normalize"})
"""The ops whose kernels take ``elementwise_scratch_bytes`` of workspace."""


def elementwise_scratch_bytes(op: Operation) -> int:
    """Workspace bytes of a ``CHUNKED_ELEMENTWISE`` op on float32/float64 (0 for any other
    op): for ``sigmoid`` one chunk of the value and one of a mask; for ``nn.softmax`` the
    reduced tensor (the maximum, then the sum, along the axis), for ``nn.l2_normalize`` the
    reduced tensor (the sums of squares, then the norms, over its axes); for ``where`` with a
    bool condition, the negated condition."""
    name = getattr(op, "RELAY_NAME", None)
    if name not in CHUNKED_ELEMENTWISE or not op.results:
        return 0
    if name == "where":  # the negated condition, for a ``where`` written into ``x``'s buffer
        c = op.operands[0].type
        if not isinstance(c, TensorType) or not c.has_static_shape() or dtype_of(c.element_type) != "bool":
            return 0
        return -(-max(1, math.prod(c.get_shape())) // 64) * 64
    t = op.results[0].type
    if not isinstance(t, TensorType) or not t.has_static_shape():
        return 0
    dt = dtype_of(t.element_type)
    if dt not in ("float32", "float64"):
        return 0
    shape = t.get_shape()
    itemsize = int(dt[-2:]) // 8
    if name == "nn.softmax":
        axis = op.attrs.get("axis", -1)
        if not shape or not -len(shape) <= axis < len(shape):
            return 0
        n = math.prod(shape) // max(1, shape[axis])
        return -(-n * itemsize // 64) * 64
    if name == "nn.l2_normalize":
        axes = op.attrs.get("axis")
        if not shape or any(not -len(shape) <= a < len(shape) for a in axes or ()):
            return 0
        reduced = {a % len(shape) for a in axes} if axes else set(range(len(shape)))
        n = math.prod(d for i, d in enumerate(shape) if i not in reduced)
        return -(-max(1, n) * itemsize // 64) * 64
    n = min(ELEMENTWISE_CHUNK, max(1, math.prod(shape)))
    return -(-n * (itemsize + 1) // 64) * 64


def gather_nd_scratch_bytes(op: Operation) -> int:
    """Workspace bytes of a ``gather_nd`` whose indices are computed by the model (RoBERTa's
    position ids, say): per index tuple its flat position and one index component (int64
    each) and the component's sign, then the least and the greatest component (8 bytes
    each); 0 when the indices' shape is not static. A kernel given constant indices turns
    them into positions once and uses none of it."""
    if getattr(op, "RELAY_NAME", None) != "gather_nd" or len(op.operands) != 2:
        return 0
    t = op.operands[1].type
    if not isinstance(t, TensorType) or not t.has_static_shape() or not t.get_shape():
        return 0
    n = math.prod(t.get_shape()[1:])
    return -(-(17 * n + 16) // 64) * 64


RESIZE_MATMUL_LAYOUTS = ("NCHW", "NHWC")
"""Layouts in which a linear or cubic ``image.resize2d`` runs as two matrix products."""


def resize_scratch_bytes(op: Operation) -> int:
    """Workspace bytes of a linear or cubic float32/float64 ``image.resize2d`` (NCHW or NHWC,
    static shapes, any coordinate transformation mode but ``tf_crop_and_resize``), which the
    native kernels run as ``A_h . x . A_w^T``: the product with ``A_w`` first, so the
    intermediate of ``N x C x H_in x W_out`` elements (0 for any other op)."""
    if getattr(op, "RELAY_NAME", None) != "image.resize2d" or len(op.operands) != 1 or not op.results:
        return 0
    a = op.attrs
    if a.get("method") not in ("linear", "cubic") or a.get("coordinate_transformation_mode") == "tf_crop_and_resize":
        return 0
    layout = a.get("layout", "NCHW")
    x_t, out_t = op.operands[0].type, op.results[0].type
    if layout not in RESIZE_MATMUL_LAYOUTS or not all(
        isinstance(t, TensorType) and t.has_static_shape() and len(t.get_shape()) == 4 for t in (x_t, out_t)
    ):
        return 0
    dt = dtype_of(x_t.element_type)
    if dt not in ("float32", "float64") or dtype_of(out_t.element_type) != dt:
        return 0
    w = layout.index("W")
    shape = list(x_t.get_shape())
    shape[w] = out_t.get_shape()[w]
    return -(-math.prod(shape) * (int(dt[-2:]) // 8) // 64) * 64


def dft_scratch_bytes(op: Operation) -> int:
    """Workspace bytes of a float32/float64 ``dft`` (static shapes), which the native kernels
    run with pocketFFT from and into the workspace, in double precision at most: the
    complex128 signal (the real and imaginary parts interleaved), then the complex128
    spectrum, each a multiple of 64 bytes (0 for any other op)."""
    if getattr(op, "RELAY_NAME", None) != "dft" or len(op.operands) != 2 or len(op.results) != 2:
        return 0
    types = [v.type for v in (*op.operands, *op.results)]
    if not all(isinstance(t, TensorType) and t.has_static_shape() for t in types):
        return 0
    dts = {dtype_of(t.element_type) for t in types}
    if len(dts) != 1 or not dts <= {"float32", "float64"} or len({tuple(t.get_shape()) for t in types}) != 1:
        return 0
    complex_bytes = math.prod(types[0].get_shape()) * 16
    return 2 * (-(-complex_bytes // 64) * 64)
