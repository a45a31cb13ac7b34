"""The native engine's scratch at compile time: what its kernels need as a planned workspace.

``state_int8_scratch`` states, before ``lower-to-memory``, the workspace of the int8
convolution kernels (``xrelay.runtime.native.fast_int8``) as ``relay.scratch_bytes`` on each
primitive function, so the plan gives it to them and they allocate nothing at run time.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64

from xrelay.dialects.memory import SCRATCH_ATTR, workspace_bytes
from xrelay.dialects.relay import RelayOp, shape_of
from xrelay.runtime.native.fast_int8 import conv_workspace_bytes
from xrelay.transforms._relay_rewrite import tensor_dtype
from xrelay.transforms.fuse_ops import is_primitive

__all__ = ["state_int8_scratch"]


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
            pointwise = (kh, kw, *op.attrs["strides"], *padding, oh, ow) == (1, 1, 1, 1, 0, 0, 0, 0, h, w)
            bytes_ = conv_workspace_bytes(c, h, w, kh, kw, oh, ow, pointwise)
            need = bytes_ if need is None else max(need, bytes_)
        if need is not None:
            fn.attributes[SCRATCH_ATTR] = IntegerAttr(max(need, workspace_bytes(fn)) if others else need, i64)
