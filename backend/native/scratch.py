"""The native engine's scratch at compile time: what its kernels need as a planned workspace,
and the choices that size it (the one place they are made).

``state_native_scratch`` (first) decides, for every fused function the native kernels may run,
which float32 3x3 convolutions run as Winograd F(4x4, 3x3) or F(2x2, 3x3) (``winograd_tile``:
the thresholds below) and states on each such ``nn.conv2d`` the block size
(``relay.winograd_tile``), and on the function the bytes its kernels use at the start of the
workspace (``relay.kernel_scratch_bytes``: the largest im2col matrix, Winograd matrices or
elementwise chunk, laid out as ``xrelay.runtime.native.workspace`` says). ``lower-to-memory``
only reads the attribute; the run time reads the block size from the op, never recomputes it.

``state_int8_scratch`` (then) states the workspace of the int8 convolution kernels
(``xrelay.runtime.native.fast_int8``) as ``relay.scratch_bytes`` on each primitive function
that has them, so the plan gives it to them and they allocate nothing at run time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, TensorType, i64

from xrelay.dialects.memory import KERNEL_SCRATCH_ATTR, SCRATCH_ATTR, workspace_bytes
from xrelay.dialects.relay import RelayOp, byte_size, shape_of
from xrelay.dialects.relay.ops import parse_layout
from xrelay.runtime.native.fast_int8 import conv_workspace_bytes, reads_planes, reads_rows
from xrelay.runtime.native.workspace import (
    CHUNKED_ELEMENTWISE,
    WINOGRAD_F4_MAX_AREA,
    WINOGRAD_TILE_ATTR,
    dft_scratch_bytes,
    elementwise_scratch_bytes,
    gather_nd_scratch_bytes,
    resize_scratch_bytes,
    winograd_scratch_bytes,
)
from xrelay.transforms._relay_rewrite import tensor_dtype
from xrelay.transforms.fuse_ops import is_primitive

__all__ = [
    "WINOGRAD_F4_MIN_SIZE",
    "WINOGRAD_MIN_CHANNELS",
    "WINOGRAD_MIN_TILES",
    "conv2d_scratch",
    "kernel_scratch_bytes",
    "state_int8_scratch",
    "state_native_scratch",
    "winograd_tile",
]

WINOGRAD_MIN_TILES = 16
"""2x2 output blocks per image below which a convolution keeps im2col (the 16 products
would be thin matrices BLAS runs slowly)."""

WINOGRAD_MIN_CHANNELS = 16
"""Input and output channels below which a convolution keeps im2col (tiny products)."""

WINOGRAD_F4_MIN_SIZE = 28
"""Output height and width from which F(4x4, 3x3) is used instead of F(2x2, 3x3)."""


def winograd_tile(
    kernel: tuple[int, ...],
    strides: tuple[int, ...],
    dilation: tuple[int, ...],
    groups: int,
    in_c: int,
    out_c: int,
    out_h: int,
    out_w: int,
) -> int:
    """The output block size ``m`` with which the native kernels run this convolution as
    Winograd F(m x m, 3x3), or 0: 3x3, stride 1, dilation 1, ungrouped, at least
    ``WINOGRAD_MIN_CHANNELS`` channels in and out and ``WINOGRAD_MIN_TILES`` 2x2 output
    blocks; 4 from ``WINOGRAD_F4_MIN_SIZE`` on up to ``WINOGRAD_F4_MAX_AREA`` output pixels
    (the error budget: larger maps take F(2x2, 3x3)'s smaller rounding), else 2. (It also needs float32 NCHW/OIHW or
    NHWC/HWIO or ``NCHW{c}c``/``OIHW{c}i{o}o`` data, see ``conv2d_scratch``; at run time
    constant weights and ``XRELAY_WINOGRAD`` not ``0``.)"""
    if not (
        tuple(kernel) == (3, 3)
        and tuple(strides) == (1, 1)
        and tuple(dilation) == (1, 1)
        and groups == 1
        and min(in_c, out_c) >= WINOGRAD_MIN_CHANNELS
        and -(-out_h // 2) * -(-out_w // 2) >= WINOGRAD_MIN_TILES
    ):
        return 0
    return 4 if min(out_h, out_w) >= WINOGRAD_F4_MIN_SIZE and out_h * out_w <= WINOGRAD_F4_MAX_AREA else 2


def _dims(layout: str, shape: Sequence[int]) -> dict[str, int]:
    """Primal axis sizes of a (possibly blocked) shape: ``NCHW16c`` counts C as C * 16."""
    dims: dict[str, int] = {}
    for (axis, _), n in zip(parse_layout(layout), shape, strict=True):
        dims[axis.upper()] = dims.get(axis.upper(), 1) * n
    return dims


_BLOCKED_WINOGRAD = re.compile(r"NCHW(\d+)c,OIHW\1i(\d+)o,NCHW\2c$|NCHW\d+c,OIHW,NCHW\d+c$")
_WINOGRAD_LAYOUTS = (("NCHW", "OIHW", "NCHW"), ("NHWC", "HWIO", "NHWC"))


def conv2d_scratch(op: RelayOp) -> tuple[int, int]:
    """``(bytes, tile)`` of an ``nn.conv2d`` on the native kernels: they lower every
    convolution that is not 1x1/stride-1/unpadded (pointwise) to im2col + matmul, one batch
    element and one group at a time, so its scratch is the im2col matrix of one group::

        out_h * out_w * (in_c / groups) * kh * kw * bytes_per_element(data)

    A float32 NCHW, NHWC or ``NCHW{c}c`` (blocked) convolution that runs as Winograd
    (``winograd_tile``, the block size returned, else 0) needs the larger of that and
    ``winograd_scratch_bytes`` (whether Winograd is switched on when the program runs does
    not change the plan)."""
    data_t, weight_t = op.operands[0].type, op.operands[1].type
    out_t = op.results[0].type
    assert isinstance(data_t, TensorType) and isinstance(out_t, TensorType)
    assert isinstance(weight_t, TensorType)
    if not (data_t.has_static_shape() and out_t.has_static_shape()):
        return 0, 0
    a = op.attrs
    dl, kl = a["data_layout"], a["kernel_layout"]
    out_layout = a["out_layout"] or dl
    data = _dims(dl, data_t.get_shape())
    out = _dims(out_layout, out_t.get_shape())
    in_c, out_c, out_h, out_w = data["C"], out["C"], out["H"], out["W"]
    if a["kernel_size"] is not None:
        kh, kw = a["kernel_size"]
    else:
        w = _dims(kl, weight_t.get_shape())
        kh, kw = w["H"], w["W"]
    groups = a["groups"]
    pointwise = (kh, kw) == (1, 1) and tuple(a["strides"]) == (1, 1) and not any(a["padding"])
    if pointwise:
        return 0, 0  # the input already is the im2col matrix
    elem = byte_size(TensorType(data_t.element_type, [1]))
    im2col = out_h * out_w * (in_c // groups) * kh * kw * elem
    tile = winograd_tile(
        (kh, kw), tuple(a["strides"]), tuple(a["dilation"]), groups, in_c, out_c, out_h, out_w
    )
    layouts = (dl, kl, out_layout)
    if tile and elem == 4 and (layouts in _WINOGRAD_LAYOUTS or _BLOCKED_WINOGRAD.match(",".join(layouts))):
        return max(im2col, winograd_scratch_bytes(in_c, out_c, out_h, out_w, elem, tile)), tile
    return im2col, 0


def _walk_with_callees(fn: func.FuncOp, lookup: Callable[[str], func.FuncOp | None]):
    """The ops of ``fn`` and of the (composite) functions it calls, each callee once."""
    seen: set[str] = set()
    todo = [fn]
    while todo:
        for op in todo.pop().body.walk():
            yield op
            if isinstance(op, func.CallOp):
                name = op.callee.root_reference.data
                callee = lookup(name)
                if callee is not None and name not in seen:
                    seen.add(name)
                    todo.append(callee)


def kernel_scratch_bytes(fn: func.FuncOp, lookup: Callable[[str], func.FuncOp | None]) -> int:
    """The workspace one native kernel at a time uses in ``fn`` (im2col or Winograd
    matrices, elementwise chunks, a computed ``gather_nd``'s positions, a linear or cubic
    resize's intermediate, a DFT's complex signal and spectrum), rounded up to 64: the
    largest over its convolutions and chunked elementwise ops, including those of composite
    functions it calls (found with ``lookup``); operations in a function run one after
    another."""
    best = 0
    for op in _walk_with_callees(fn, lookup):
        if isinstance(op, RelayOp) and op.RELAY_NAME == "nn.conv2d":
            best = max(best, conv2d_scratch(op)[0])
        elif isinstance(op, RelayOp) and op.RELAY_NAME in CHUNKED_ELEMENTWISE:
            best = max(best, elementwise_scratch_bytes(op))
        elif isinstance(op, RelayOp) and op.RELAY_NAME == "gather_nd":
            best = max(best, gather_nd_scratch_bytes(op))
        elif isinstance(op, RelayOp) and op.RELAY_NAME == "image.resize2d":
            best = max(best, resize_scratch_bytes(op))
        elif isinstance(op, RelayOp) and op.RELAY_NAME == "dft":
            best = max(best, dft_scratch_bytes(op))
    return -(-best // 64) * 64


def state_native_scratch(module: ModuleOp) -> None:
    """State on every primitive function whose workspace no code generator stated
    (``relay.scratch_bytes``) the native kernels' part of it (``relay.kernel_scratch_bytes``,
    when not 0), and on each convolution planned for Winograd its block size
    (``relay.winograd_tile``)."""
    funcs = {f.sym_name.data: f for f in module.walk() if isinstance(f, func.FuncOp)}
    for fn in funcs.values():
        if not is_primitive(fn) or SCRATCH_ATTR in fn.attributes:
            continue
        for op in _walk_with_callees(fn, funcs.get):
            if isinstance(op, RelayOp) and op.RELAY_NAME == "nn.conv2d":
                tile = conv2d_scratch(op)[1]
                if tile:
                    op.attributes[WINOGRAD_TILE_ATTR] = IntegerAttr(tile, i64)
        need = kernel_scratch_bytes(fn, funcs.get)
        if need:
            fn.attributes[KERNEL_SCRATCH_ATTR] = IntegerAttr(need, i64)


def state_int8_scratch(module: ModuleOp) -> None:
    """Give every primitive function with a uint8 x int8 convolution the workspace its C
    kernels use (``conv_workspace_bytes``, the largest over its convolutions; depthwise ones
    need none; at least what ``workspace_bytes`` plans when it has other convolutions) as
    ``relay.scratch_bytes``, so
    ``lower-to-memory`` plans it and the kernel allocates nothing (like oneDNN's scratchpad)."""
    for fn in module.walk():
        if not isinstance(fn, func.FuncOp) or not is_primitive(fn) or SCRATCH_ATTR in fn.attributes:
            continue
        need, others = None, False
        for op in fn.body.walk():
            if not isinstance(op, RelayOp) or op.RELAY_NAME != "nn.conv2d":
                continue
            data = op.operands[0]
            if (tensor_dtype(data), tensor_dtype(op.operands[1])) != ("uint8", "int8"):
                others = True
                continue
            if op.attrs["groups"] != 1:  # the depthwise kernel needs no scratch
                need = need or 0
                others = others or op.attrs["groups"] != shape_of(data.type)[1]
                continue
            padding = tuple(op.attrs["padding"])
            owner = data.owner
            if getattr(owner, "RELAY_NAME", None) == "nn.pad" and data.uses.get_length() == 1:
                (_, _), (_, _), (pt, _), (pl, _) = (tuple(w) for w in owner.attrs["pad_width"])
                data, padding = owner.operands[0], (pt, pl, 1, 1)  # (not pointwise)
            _, c, h, w = shape_of(data.type)
            _, _, oh, ow = shape_of(op.results[0].type)
            kh, kw = shape_of(op.operands[1].type)[2:]
            pointwise = reads_rows(kh, kw, *op.attrs["strides"], padding[0], padding[1], h, w, oh, ow)
            if reads_planes(kh, kw, *op.attrs["strides"], padding[0], padding[1], h, w, oh, ow):
                bytes_ = 0  # the planes are read as they are
            else:
                (sh, sw), (dh, dw) = op.attrs["strides"], op.attrs["dilation"]
                bytes_ = conv_workspace_bytes(c, h, w, kh, kw, oh, ow, pointwise, sh, dh, sw, dw)
            need = bytes_ if need is None else max(need, bytes_)
        if need is not None:
            fn.attributes[SCRATCH_ATTR] = IntegerAttr(max(need, workspace_bytes(fn)) if others else need, i64)
