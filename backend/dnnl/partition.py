"""How ``xrelay.build(..., backends=("dnnl", ...))`` offloads a module to oneDNN.

After Relay's pre-fusion passes (``build_pipeline`` without FuseOps) the module goes through

1. ``ConvertLayout`` to channels-last: ``nn.conv2d`` to ``NHWC`` with Relay's default kernel
   layout, the 2-D pools to ``NHWC``, then ``FoldConstant`` (the weights' transposes fold).
   oneDNN's AVX-512 ``brgconv`` kernels read and write plain NHWC as fast as its blocked
   ``nChw16c`` (measured per ResNet-18 convolution), and an NCHW convolution falls back to
   its much slower im2col + GEMM; so activations stay plain NHWC in the arena and no step
   converts layouts;
2. rewrites that let Relay's dnnl patterns take more: ``matmul_to_dense``, ``residual_last``
   (the residual add's operand order the sum pattern accepts), ``layer_norm_rewrite``
   (Relay's ``LayerNormRewrite``: SimplifyInference's arithmetic back into ``nn.layer_norm``)
   and ``affine_into_dense`` (a per-feature scale and shift left before a matmul go into its
   weight and bias);
   then Relay's BYOC passes with Relay's dnnl pattern table: ``MergeComposite``,
   ``AnnotateTarget(["dnnl"])`` and ``PartitionGraph`` -- without ``MergeCompilerRegions``,
   so every offloaded composite or op is its own ``relay.compiler = "dnnl"`` function and
   each of its inputs and outputs is a planned arena tensor (a merged region's temporaries
   would live outside the plan);
3. ``native_winograd`` gives back to the native kernels the convolutions ``winograd_choice``
   picks for their Winograd kernel (none by default: the default rule runs Winograd on the
   oneDNN backend itself, ``dnnl.winograd_in_dnnl``), ``inline_elementwise`` the lone
   elementwise ops, and ``offload_reorders`` makes the layout transforms and float casts left
   at the edges oneDNN reorders;
4. ``FuseOps`` fuses what stays with the native kernels.

Before ``lower-to-memory``, ``state_scratch`` states each dnnl function's scratch
(``relay.scratch_bytes``: oneDNN's scratchpad, plus the temporaries of a function with
several steps), so the plan gives it a workspace.
"""

from __future__ import annotations

import collections
import functools
import logging
import math
from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Operation

from xrelay.backend.dnnl.patterns import pattern_table, supported
from xrelay.backend.native.scratch import winograd_tile
from xrelay.dialects import module_op
from xrelay.dialects.memory import SCRATCH_ATTR, SCRATCH_OPTIONS_ATTR
from xrelay.dialects.relay import FUNC_ATTRS, RELAY_OPS, ConstantOp, RelayOp, dtype_of, shape_of
from xrelay.runtime.digests import blake2b
from xrelay.runtime.dnnl.primitives import (
    POINTWISE_MARGIN,
    DnnlUnsupported,
    band_rows_choices,
    contiguous_strides,
    is_view,
    matmul_view,
    measure_plans,
    plan_function,
    pointwise_mode,
    view_back,
    way_label,
)
from xrelay.runtime.native.fast_kernels import winograd_enabled
from xrelay.runtime.native.movement import ELEMENTWISE_TAIL, MOVEMENT_OPS
from xrelay.runtime.parallel import default_threads
from xrelay.transforms.annotate_target import AnnotateTargetPass
from xrelay.transforms.canonicalize_arith import canonicalize_arith
from xrelay.transforms.convert_layout import ConvertLayoutPass
from xrelay.transforms.convert_layout import logger as layout_log
from xrelay.transforms.infra import PassContext, as_pass, get_pass
from xrelay.transforms.merge_composite import MergeCompositePass
from xrelay.transforms.partition_graph import PartitionGraphPass
from xrelay.transforms.sink_transpose import SinkTransposePass

__all__ = [
    "DESIRED_LAYOUTS", "affine_into_dense", "dense_without_flattening", "depthwise_multiplier", "dnnl_functions",
    "fold_views",
    "group_norm_as_instance_norm", "instance_norm_channels_first", "layer_norm_rewrite",
    "native_winograd",
    "one_group_norm_channels_last",
    "offload_concatenations", "offload_movement", "offload_reorders",
    "partition_for_backend", "reorderable", "state_scratch", "winograd_choice",
]  # fmt: skip

DESIRED_LAYOUTS = {
    "nn.conv2d": ["NHWC", "default"],
    "nn.conv3d": ["NDHWC", "default"],
    "nn.conv2d_transpose": ["NHWC", "default"],
    "nn.max_pool2d": ["NHWC"],
    "nn.avg_pool2d": ["NHWC"],
    "nn.global_avg_pool2d": ["NHWC"],
}
"""What ``partition_for_backend`` converts to channels-last before partitioning."""

FOLLOWERS = {"nn.conv2d_transpose": frozenset({"nn.conv2d"})}
"""Ops converted only in a model that has one of these too (whose channels-last region they
join) or more than one of themselves (a region of their own: DCGAN's generator, 1.17x
onnxruntime in NCHW against 0.84x in NHWC): a 1-D model's one transposed convolution
(ConvTranspose1d, imported as 2-D of height 1) converted alone only gained a layout transform
on each side (Conv-TasNet's decoder)."""


def partition_for_backend(module: ModuleOp, channels_last: bool = True) -> ModuleOp:
    """Steps 1 and 2 of the module docstring, in place on a module that went through the
    pre-fusion passes; returns it. A module that already has ``relay.compiler`` functions
    (``partition_for_dnnl``'s output) is left as its author partitioned it."""
    if any(isinstance(op, func.FuncOp) and "relay.compiler" in op.attributes for op in module.ops):
        return module
    if not float32_only(module) or blocked_layouts(module):
        return module

    canonicalize_arith(module)  # one written form of each activation for the patterns
    group_norm_as_instance_norm(module)
    mean_to_global_pool(module)
    matmul_to_dense(module)
    dense_without_flattening(module)
    split_gated_dense(module)
    residual_last(module)
    layer_norm_rewrite(module)
    affine_into_dense(module)
    share_equal_constants(module)
    layouts: list[Any] = []
    # only where there is something to convert (ConvertLayout also fails on some graphs
    # without convolutions, such as the BERT-style layer)
    counts = collections.Counter(getattr(o, "RELAY_NAME", "") for o in module.walk())
    desired = {k: v for k, v in DESIRED_LAYOUTS.items()
               if k not in FOLLOWERS or counts[k] > 1 or any(counts[f] for f in FOLLOWERS[k])}  # fmt: skip
    if channels_last and any(counts[k] for k in desired):
        layouts = [ConvertLayoutPass(desired), get_pass("FoldConstant")]
    # weights stay @main's constants (the module's params: get_params, load_params and
    # export see them) and reach each function as an argument
    passes = [
        MergeCompositePass(pattern_table()),
        AnnotateTargetPass(("dnnl",), supported=(("dnnl", supported),)),
        PartitionGraphPass(bind_constants=False),
    ]
    level = layout_log.level
    layout_log.setLevel(logging.ERROR)  # "desired layout not specified" for ops kept as they are
    try:
        with PassContext(opt_level=3):
            for p in layouts:
                module = module_op(_as_pass(p)(module))
            instance_norm_channels_first(module)
            if layouts:
                # a model that permutes to channels-last itself (ConvNeXt's blocks: NCHW
                # depthwise convolution, then transpose to NHWC for layer norm and the
                # MLP) gets ConvertLayout's transform back to NCHW before its own
                # transpose: simplify-expr's transpose rewrites cancel the pair; its
                # permute back to NCHW sinks below the layer scale and residual add
                # (sink-transpose) and cancels with the next block's transform to NHWC
                module = module_op(_as_pass(SinkTransposePass())(module))
                one_group_norm_channels_last(module)
            depthwise_multiplier(module)
            for p in passes:
                module = module_op(_as_pass(p)(module))
    finally:
        layout_log.setLevel(level)
    native_winograd(module)
    inline_elementwise(module)
    fold_views(module)
    offload_movement(module)
    offload_reorders(module)
    offload_concatenations(module)
    return module


def matmul_to_dense(module: ModuleOp) -> int:
    """``nn.matmul(x, W)`` with a constant 2-D ``W`` becomes ``nn.dense(x, W^T)`` (what Relay's
    ONNX importer makes of a MatMul by a weight), so Relay's dnnl patterns
    (``dnnl.dense_bias_gelu``, ``dnnl.dense_bias_sum``, ...) take it. Returns how many."""
    import numpy as np
    from xdsl.rewriter import InsertPoint, Rewriter


    count = 0
    for op in list(module.walk()):
        if not isinstance(op, RelayOp) or op.RELAY_NAME != "nn.matmul":
            continue
        a = op.attrs
        w = op.operands[1].owner
        if (a.get("transpose_a") or a.get("transpose_b") or a.get("out_dtype") not in ("", None)
                or not isinstance(w, ConstantOp) or w.numpy().ndim != 2
                or dtype_of(op.operands[0].type) != "float32"):  # fmt: skip
            continue
        weight = np.ascontiguousarray(w.numpy().T)
        wt = ConstantOp.from_numpy(weight)
        dense = RELAY_OPS["nn.dense"].make([op.operands[0], wt.result], units=weight.shape[0])
        if dense.results[0].type != op.results[0].type:
            continue
        Rewriter.insert_op([wt, dense], InsertPoint.before(op))
        op.results[0].replace_all_uses_with(dense.results[0])
        Rewriter.erase_op(op)
        if not w.result.uses:
            Rewriter.erase_op(w)
        count += 1
    return count


def dense_without_flattening(module: ModuleOp) -> int:
    """``reshape(nn.dense(reshape(x, [M, K]), W), lead + [N])`` where ``x`` is ``lead + [K]``
    and ``M`` the product of ``lead`` becomes ``nn.dense(x, W)`` (``nn.dense`` contracts the
    last axis of any rank), also with a bias added to the product before the reshape back
    (``nn.bias_add`` on the last axis, or ``add`` of an ``(N,)`` or ``(1, N)`` vector):
    torch.export's Linear on a 3-D input (``view``, ``mm`` or ``addmm``, ``view``) gets the
    form ONNX's MatMul imports as, which the dnnl patterns take whole with what follows the
    product (Llama's gated MLP,
    ``dnnl.dense_swish_mul``: the reshape back stood between the gate and its activation).
    Returns how many::

        %f = relay.reshape %x {newshape = [128, 512]} : (tensor<1x128x512xf32>) -> tensor<128x512xf32>
        %d = relay.nn.dense %f, %w {units = 64} : (tensor<128x512xf32>, tensor<64x512xf32>) -> tensor<128x64xf32>
        %y = relay.reshape %d {newshape = [1, 128, 64]} : (tensor<128x64xf32>) -> tensor<1x128x64xf32>

    becomes ``%y = relay.nn.dense %x, %w {units = 64} : (tensor<1x128x512xf32>, ...) -> tensor<1x128x64xf32>``.
    """
    import math

    from xdsl.rewriter import InsertPoint, Rewriter

    def name(o: Any) -> str:
        return o.RELAY_NAME if isinstance(o, RelayOp) else ""

    count = 0
    for dense in list(module.walk()):
        if name(dense) != "nn.dense" or dense.parent is None or not dense.results[0].has_one_use():
            continue
        flat = dense.operands[0].owner
        if name(flat) != "reshape":
            continue
        x = flat.operands[0]
        lead = list(shape_of(x.type))[:-1]
        k = list(shape_of(x.type))[-1]
        if None in lead or len(lead) < 2 or list(shape_of(flat.results[0].type)) != [math.prod(lead), k]:
            continue
        chain, cur = [], dense
        user = next(iter(cur.results[0].uses)).operation
        if (name(user) in ("nn.bias_add", "add") and user.operands[0] is cur.results[0]
                and user.results[0].has_one_use()):  # fmt: skip
            bias = user.operands[1]
            n = list(shape_of(dense.results[0].type))[-1]
            axis = user.attrs.get("axis", -1) if name(user) == "nn.bias_add" else -1
            bs = list(shape_of(bias.type))
            if not bs or bs[-1] != n or any(d != 1 for d in bs[:-1]) or len(bs) > 2 or axis not in (-1, 1):
                continue  # only a bias along the features (1-D, or (1, N) as folded)
            chain.append(bias)
            cur = user
            user = next(iter(cur.results[0].uses)).operation
        n = list(shape_of(cur.results[0].type))[-1]
        if name(user) != "reshape" or list(shape_of(user.results[0].type)) != lead + [n]:
            continue
        new = [RELAY_OPS["nn.dense"].make([x, dense.operands[1]], **dense.attrs)]
        if chain:
            # an add, as ONNX's MatMul + Add imports (the patterns' bias is an add)
            new.append(RELAY_OPS["add"].make([new[-1].results[0], chain[0]]))
        if new[-1].results[0].type != user.results[0].type:
            continue
        Rewriter.insert_op(new, InsertPoint.before(user))
        user.results[0].replace_all_uses_with(new[-1].results[0])
        for o in (user, cur, dense):  # the reshape back, the bias, the product (each used once)
            if o.parent is not None:
                o.detach()
                o.erase()
        if not flat.results[0].uses:
            flat.detach()
            flat.erase()
        count += 1
    return count


GATED_PART_ELEMENTS = 4096
"""The fewest elements of a part for which ``split_gated_dense`` cuts a dense: a part is one
more oneDNN call (some microseconds) that saves the native pass of its activation over the
part (under a nanosecond an element). A bidirectional GRU at batch 1 (a time step's gates
three 1 x 128 parts of one dense) ran in 2.3 ms whole and 3.4 ms cut; MambaOut-femto's last
stage (parts of 7 x 7 x 288 = 14,112) 11.7 ms cut and 12.7-13.3 ms whole."""


def share_equal_constants(module: ModuleOp) -> int:
    """Constants of a block with the same type and bytes become its first one. The rewrites
    above fold each use of a weight into a constant of its own (a ``MatMul``'s weight
    transposed for ``nn.dense``, a layer norm's scale folded into the next weight): the layers
    of a weight-tied model (ALBERT's 12 layers share one layer's weights) held 339 MB of
    weights, 42 MB of them distinct, and a reordered copy of each. Returns how many went.

    Before::

        %a = relay.constant dense<...> : tensor<768x768xf32>   // W^T for layer 1
        %b = relay.constant dense<...> : tensor<768x768xf32>   // the same bytes, layer 2

    After: ``%b``'s uses read ``%a``, and ``%b`` is gone.
    """
    def data(c: ConstantOp) -> memoryview:
        return memoryview(c.value.data.data).cast("B")  # (as graph_json digests a constant)

    count = 0
    for fn in module.ops:
        if not isinstance(fn, func.FuncOp) or not fn.body.blocks:
            continue
        first: dict[tuple[Any, str], ConstantOp] = {}
        for op in list(fn.body.blocks[0].ops):
            if not isinstance(op, ConstantOp):
                continue
            key = (op.result.type, blake2b(data(op), digest_size=16).hexdigest())
            kept = first.setdefault(key, op)
            if kept is op or data(kept) != data(op):
                continue  # (a digest collision: kept apart)
            op.result.replace_all_uses_with(kept.result)
            op.detach()
            op.erase()
            count += 1
    return count


def split_gated_dense(module: ModuleOp) -> int:
    """A float32 ``nn.dense`` by a constant weight (its bias added or not) whose result is
    ``split`` along its features into parts of which one at least only elementwise ops read
    becomes one dense per part, each with its rows of the weight and its part of the bias:
    the gated linear units (SwiGLU, GeGLU) that compute both halves in one layer and then
    ``act(a) * b`` (EVA-02's MLP, timm's ``SwiGLUPacked``), and MambaOut's gated CNN, whose
    other parts are concatenated and convolved. Whole, the split and the activation ran as
    native passes over the parts; split, each part is a dense the oneDNN patterns take with
    its activation as a post-op. A split that only views read (GPT-2's q, k, v reshaped into
    heads) is left alone, and so is a dense with a part of fewer than
    ``GATED_PART_ELEMENTS`` elements (a recurrent step's gates). Returns how many.

    Before::

        %d = relay.nn.dense %x, %w {units = 8}          // %w: a constant (8, 4)
        %y = relay.add %d, %b                           // %b: a constant (8,)
        %a, %g = relay.split %y {indices_or_sections = 2, axis = 1}
        %s = relay.sigmoid %a ...

    After::

        %a = relay.add (relay.nn.dense %x, %w[0:4]), %b[0:4]
        %g = relay.add (relay.nn.dense %x, %w[4:8]), %b[4:8]
    """
    import numpy as np
    from xdsl.rewriter import InsertPoint, Rewriter

    from xrelay.dialects.relay import OpPattern

    count = 0
    for op in list(module.walk()):
        if not isinstance(op, RelayOp) or op.RELAY_NAME != "split" or len(op.results) < 2:
            continue
        y = op.operands[0]
        rank = len(shape_of(y.type))
        if rank == 0 or op.attrs["axis"] % rank != rank - 1 or dtype_of(y.type) != "float32":
            continue
        parts = list(op.results)
        if min(math.prod(shape_of(r.type)) for r in parts) < GATED_PART_ELEMENTS:
            continue
        if not all(r.uses for r in parts) or not any(
            all(isinstance(u.operation, RelayOp) and u.operation.PATTERN <= OpPattern.BROADCAST for u in r.uses)
            for r in parts
        ):
            continue
        add = y.owner if isinstance(y.owner, RelayOp) and y.owner.RELAY_NAME == "add" else None
        dense = add.operands[0].owner if add is not None else y.owner
        bias = add.operands[1].owner if add is not None else None
        if not isinstance(dense, RelayOp) or dense.RELAY_NAME != "nn.dense" or not dense.results[0].has_one_use():
            continue
        if add is not None and (not isinstance(bias, ConstantOp) or not y.has_one_use()):
            continue
        w = dense.operands[1].owner
        if not isinstance(w, ConstantOp) or w.numpy().ndim != 2 or dense.attrs.get("out_dtype") not in ("", None):
            continue
        weight = w.numpy()
        b = None if bias is None else bias.numpy()
        if b is not None and (b.ndim != 1 or b.shape[0] != weight.shape[0]):
            continue  # (a bias of another shape broadcasts: not one value per feature)
        new, start = [], 0
        for r in parts:
            n = shape_of(r.type)[-1]
            wc = ConstantOp.from_numpy(np.ascontiguousarray(weight[start : start + n]))
            d = RELAY_OPS["nn.dense"].make([dense.operands[0], wc.result], units=n)
            made = [wc, d]
            if b is not None:
                bc = ConstantOp.from_numpy(np.ascontiguousarray(b[start : start + n]))
                made += [bc, RELAY_OPS["add"].make([d.results[0], bc.result])]
            if made[-1].results[0].type != r.type:
                break
            new.append(made)
            start += n
        if len(new) != len(parts):
            continue
        Rewriter.insert_op([o for made in new for o in made], InsertPoint.before(op))
        for r, made in zip(parts, new):
            r.replace_all_uses_with(made[-1].results[0])
        for dead in (op, add, dense):
            if dead is not None:
                dead.detach()
                dead.erase()
        for c in (bias, w):
            if c is not None and not c.result.uses:
                c.detach()
                c.erase()
        count += 1
    return count


def affine_into_dense(module: ModuleOp) -> int:
    """A per-feature affine before a float32 ``nn.dense`` by a constant weight,
    ``(x * g + b) W^T``, becomes ``x (W g)^T + W b``: the scale into the weight's columns, the
    shift into a bias (joined to the dense's own constant bias when it has one). What
    ``layer_norm_rewrite`` leaves outside ``nn.layer_norm`` (one normalisation that
    ``eliminate-common-subexpr`` shares between two layer norms of the same input, each with
    its own scale and shift: Falcon's and GPT-NeoX's parallel attention and MLP) and an RMS
    norm's weight before its projections ran as oneDNN binary steps or native passes of
    their own; folded, they are part of the matmul. ``g`` and ``b`` are constants varying
    along the features only (either may be missing); every value between is read only by
    the next op. Returns how many.

    Before::

        %m = relay.multiply %x, %g          // %g: a constant (4,)
        %a = relay.add %m, %b               // %b: a constant (4,)
        %d = relay.nn.dense %a, %w          // %w: a constant (8, 4)

    After::

        %d = relay.add (relay.nn.dense %x, %w * %g), %w @ %b
    """
    import numpy as np
    from xdsl.rewriter import InsertPoint, Rewriter

    def feature_constant(op: Any, k: int) -> tuple[Any, Any] | None:
        """(the other operand, the constant as k values) of a binary op by a constant of one
        value per feature (a single value is an activation's: GELU's 0.5 stays with it)."""
        for i in (0, 1):
            c = op.operands[1 - i].owner
            same = shape_of(op.operands[i].type) == shape_of(op.results[0].type)
            if isinstance(c, ConstantOp) and same:
                value = c.numpy()
                if k > 1 and value.size == k and all(d == 1 for d in value.shape[:-1]):
                    return op.operands[i], value.reshape(-1).astype(np.float64)
        return None

    count = 0
    for dense in list(module.walk()):
        if not isinstance(dense, RelayOp) or dense.RELAY_NAME != "nn.dense":
            continue
        w = dense.operands[1].owner
        if (not isinstance(w, ConstantOp) or w.numpy().ndim != 2
                or dense.attrs.get("out_dtype") not in ("", None)
                or dtype_of(dense.operands[0].type) != "float32"):  # fmt: skip
            continue
        weight = w.numpy().astype(np.float64)
        k = weight.shape[1]
        x, scale, shift, dead = dense.operands[0], np.ones(k), np.zeros(k), []
        for name in ("add", "multiply"):  # the shift first (outermost), then the scale
            op = x.owner
            if not isinstance(op, RelayOp) or op.RELAY_NAME != name or not x.has_one_use():
                continue
            found = feature_constant(op, k)
            if found is None:
                continue
            x = found[0]
            if name == "add":
                shift = found[1]
            else:
                scale = found[1]
            dead.append(op)
        if not dead:
            continue
        bias = weight @ shift
        users = [u.operation for u in dense.results[0].uses]
        one = users[0] if len(users) == 1 else None
        after = one if getattr(one, "RELAY_NAME", "") == "add" else None
        own = None  # the dense's own constant bias, joined
        if after is not None:
            c = next((v.owner for v in after.operands if v is not dense.results[0]), None)
            same = shape_of(after.results[0].type) == shape_of(dense.results[0].type)
            if isinstance(c, ConstantOp) and c.numpy().size == weight.shape[0] and same:
                own = c
                bias = bias + c.numpy().reshape(-1).astype(np.float64)
        scaled = (weight * scale[None, :]).astype(np.float32)
        wc = ConstantOp.from_numpy(np.ascontiguousarray(scaled))
        made: list[Any] = [wc, RELAY_OPS["nn.dense"].make([x, wc.result], units=weight.shape[0])]
        if np.any(bias != 0) or own is not None:
            bc = ConstantOp.from_numpy(bias.astype(np.float32))
            made += [bc, RELAY_OPS["add"].make([made[-1].results[0], bc.result])]
        replaced = after if own is not None else dense
        if made[-1].results[0].type != replaced.results[0].type:
            continue
        Rewriter.insert_op(made, InsertPoint.before(dense))
        replaced.results[0].replace_all_uses_with(made[-1].results[0])
        consts = [w, own] + [v.owner for op in dead for v in op.operands]
        for op in ([after] if own is not None else []) + [dense, *dead]:
            op.detach()
            op.erase()
        for c in dict.fromkeys(consts):
            if isinstance(c, ConstantOp) and not c.result.uses:
                c.detach()
                c.erase()
        count += 1
    return count


def mean_to_global_pool(module: ModuleOp) -> int:
    """``mean(x, axis=[2, 3], keepdims=True)`` of a float32 4-D ``x`` becomes
    ``nn.global_avg_pool2d(x)`` (NCHW), the same sum divided by the same count, and without
    ``keepdims`` the pool reshaped to (N, C): torch exports ``adaptive_avg_pool2d(x, 1)``
    (squeeze-and-excitation blocks) and ``x.mean([2, 3])`` (MnasNet's head) as this
    ``ReduceMean``, which ConvertLayout then leaves for a native reduction over a strided
    channels-last tensor instead of one oneDNN pooling step. Returns how many."""
    from xdsl.rewriter import InsertPoint, Rewriter


    count = 0
    for op in list(module.walk()):
        if not isinstance(op, RelayOp) or op.RELAY_NAME != "mean" or len(op.operands) != 1:
            continue
        x = op.operands[0]
        a = op.attrs
        rank = len(shape_of(x.type))
        axes = sorted(int(v) % rank for v in (a.get("axis") or [])) if rank == 4 else []
        if axes != [2, 3] or a.get("exclude") or dtype_of(x.type) != "float32":
            continue
        pool = RELAY_OPS["nn.global_avg_pool2d"].make([x], layout="NCHW")
        new = [pool]
        if not a.get("keepdims"):  # (N, C): the pool's (N, C, 1, 1) reshaped, the same bytes
            new.append(RELAY_OPS["reshape"].make([pool.results[0]], newshape=list(shape_of(op.results[0].type))))
        if new[-1].results[0].type != op.results[0].type:
            continue
        Rewriter.insert_op(new, InsertPoint.before(op))
        op.results[0].replace_all_uses_with(new[-1].results[0])
        Rewriter.erase_op(op)
        count += 1
    return count


def residual_last(module: ModuleOp) -> int:
    """``add(x, add(conv2d(...), bias))`` becomes ``add(add(conv2d(...), bias), x)`` (add
    commutes), the operand order Relay's ``dnnl.conv2d_bias_sum`` predicate accepts, so
    MobileNetV2's residual adds fuse into the projection convolution as a post-op instead of
    costing a pass of their own. Returns how many."""

    def name(v: Any) -> str:
        return v.owner.RELAY_NAME if isinstance(v.owner, RelayOp) else ""

    def fusable(v: Any) -> bool:
        # a convolution or dense plus bias that only this add reads (the composite absorbs it)
        return name(v) == "add" and name(v.owner.operands[0]) in ("nn.conv2d", "nn.conv3d", "nn.dense") and v.has_one_use()

    count = 0
    for op in list(module.walk()):
        if not isinstance(op, RelayOp) or op.RELAY_NAME != "add" or len(op.operands) != 2:
            continue
        x, y = op.operands
        # (the first residual add of a MobileNetV2 stage adds two projections: the earlier one
        # also feeds the next block, so the later one takes the sum)
        if fusable(y) and not fusable(x) and x.type == y.type:
            op.operands = [y, x]
            count += 1
    return count


def layer_norm_rewrite(module: ModuleOp) -> int:
    """The arithmetic ``SimplifyInference`` makes of ``nn.layer_norm`` over the last axis,
    ``add(multiply(divide(x - mean(x), sqrt(mean((x - mean(x))^2) + eps)), gamma), beta)``,
    becomes ``nn.layer_norm`` again, one oneDNN primitive (Relay's ``LayerNormRewrite`` in
    ``relay.op.contrib.dnnl``). Every form of it: without ``+ beta`` (a norm without bias,
    ``center=false``: MetaFormer's, OLMo's), without ``* gamma`` (``scale=false``), operands
    of the commuting ops in either order, and ``multiply(x - mean, rsqrt(var + eps))`` for the
    divide by the square root; a missing gamma or beta is a constant 1 or 0 with its flag
    off. Returns how many."""
    import numpy as np

    def op_of(v: Any, *names: str) -> Any:
        o = v.owner
        return o if isinstance(o, RelayOp) and o.RELAY_NAME in names else None

    def scalar(v: Any) -> float | None:
        if isinstance(v.owner, ConstantOp):
            a = v.owner.numpy()
            if a.size == 1:
                return float(a.reshape(-1)[0])
        return None

    def last_mean(o: Any, rank: int) -> bool:
        axis = list(o.attrs.get("axis") or [])
        return o.attrs.get("keepdims") and not o.attrs.get("exclude") and [a % rank for a in axis] == [rank - 1]

    def sole_user(v: Any, name: str) -> tuple[Any, Any] | None:
        """(the one op reading ``v``, its other operand) when it is a binary ``name``."""
        if not v.has_one_use():
            return None
        user = next(iter(v.uses)).operation
        if not isinstance(user, RelayOp) or user.RELAY_NAME != name or len(user.operands) != 2:
            return None
        a, b = user.operands
        return (user, b if a is v else a) if a is not b else None

    def per_channel(v: Any, c: int) -> Any:
        """``v``'s values as a float32 ``(c,)`` array when it is a constant along the last axis."""
        if not isinstance(v.owner, ConstantOp):
            return None
        a = v.owner.numpy()
        if a.dtype != np.float32 or a.size != c or (a.ndim and a.shape[-1] != c):
            return None
        return np.ascontiguousarray(a.reshape(c))

    count = 0
    for norm in list(module.walk()):
        # the normalisation: divide(centred, sqrt(var + eps)) or multiply(centred, rsqrt(var + eps))
        if not isinstance(norm, RelayOp) or norm.RELAY_NAME not in ("divide", "multiply") or norm.parent is None:
            continue
        if len(norm.operands) != 2 or dtype_of(norm.results[0].type) != "float32":
            continue
        root_name = "sqrt" if norm.RELAY_NAME == "divide" else "rsqrt"
        orders = [tuple(norm.operands)] if root_name == "sqrt" else [tuple(norm.operands), tuple(norm.operands)[::-1]]
        found = None
        for centred, denom in orders:
            sub, root = op_of(centred, "subtract"), op_of(denom, root_name)
            if sub is not None and root is not None:
                found = (centred, sub, root)
                break
        if found is None:
            continue
        centred, sub, root = found
        eps_add = op_of(root.operands[0], "add")
        if eps_add is None:
            continue
        eps_v, var_v = eps_add.operands
        if scalar(eps_v) is None:
            eps_v, var_v = var_v, eps_v
        var, eps = op_of(var_v, "mean"), scalar(eps_v)
        sq = op_of(var.operands[0], "multiply") if var else None
        if sq is None or eps is None or list(sq.operands) != [centred, centred]:
            continue
        x, m = sub.operands
        mean = op_of(m, "mean")
        shape = list(shape_of(x.type))
        rank = len(shape)
        if not (mean is not None and mean.operands[0] is x and last_mean(mean, rank) and last_mean(var, rank)):
            continue
        if tuple(shape_of(norm.results[0].type)) != tuple(shape):
            continue
        c = shape[-1]
        # the scale, then the shift, each when it is there
        last, gamma, beta, dead = norm, None, None, []
        scaled = sole_user(last.results[0], "multiply")
        if scaled is not None and (g := per_channel(scaled[1], c)) is not None:
            last, gamma = scaled[0], g
            dead.append(scaled[1].owner)
        shifted = sole_user(last.results[0], "add")
        if shifted is not None and (b := per_channel(shifted[1], c)) is not None:
            last, beta = shifted[0], b
            dead.append(shifted[1].owner)
        gc = ConstantOp.from_numpy(gamma if gamma is not None else np.ones(c, np.float32))
        bc = ConstantOp.from_numpy(beta if beta is not None else np.zeros(c, np.float32))
        ln = RELAY_OPS["nn.layer_norm"].make(
            [x, gc.result, bc.result], axis=-1, epsilon=eps, scale=gamma is not None, center=beta is not None
        )
        if ln.results[0].type != last.results[0].type:
            continue
        last.parent.insert_ops_before([gc, bc, ln], last)
        last.results[0].replace_all_uses_with(ln.results[0])
        steps = [shifted[0] if beta is not None else None, scaled[0] if gamma is not None else None]
        for o in (*steps, norm, root, eps_add, var, sq, sub, mean, *dead, eps_v.owner):  # users first; if now dead
            if o is not None and o.parent is not None and not any(r.uses for r in o.results):
                o.detach()
                o.erase()
        count += 1
    return count


def group_norm_as_instance_norm(module: ModuleOp) -> int:
    """A float32 ``nn.group_norm`` over the channels of static ``(N, C, ...)`` data becomes
    the form exporters write (torch.onnx's GroupNorm): ``reshape`` to ``(N, G, K)``,
    ``nn.instance_norm`` without scale and shift, ``reshape`` back, then ``multiply`` by
    gamma and ``add`` beta as ``(C, 1, ...)``. The reader runs that norm as a layer
    normalisation of its rows (one oneDNN primitive; ``nn.group_norm`` has none), and with
    one group ``one_group_norm_channels_last`` keeps it on channels-last data (PoolFormer's
    norms, imported from torch.export as ``nn.group_norm``: native, with a layout transform on
    each side). Returns how many::

        %y = relay.nn.group_norm %x, %g, %b {num_groups = 1} : (tensor<1x16x8x8xf32>, ...)

    becomes ``add(multiply(reshape(nn.instance_norm(reshape(%x, [1, 1, 1024]), ones,
    zeros), [1, 16, 8, 8]), %g as 16x1x1), %b as 16x1x1)``."""
    count = 0
    for op in list(module.walk()):
        if isinstance(op, RelayOp) and op.RELAY_NAME == "nn.group_norm":
            count += _group_norm_rewrite(op)
    return count


def instance_norm_channels_first(module: ModuleOp) -> int:
    """A float32 ``nn.instance_norm`` over another axis than 1 (channels-last data: after
    ``ConvertLayout`` an InstanceNorm that follows an NHWC convolution has ``axis = 3``) runs
    on channels-first data: a ``transpose`` that moves its axis to 1, the norm over axis 1,
    and the ``transpose`` back. The reader's norm is oneDNN's layer normalisation of
    contiguous rows, which channels-last data does not have (it refused it, and the native
    engine ran the function with numpy temporaries outside the arena: a style-transfer
    network's ten norms 2.5 ms and 50 MB); the transposes are reorders. Returns how many::

        %y = relay.nn.instance_norm %x, %g, %b {axis = 3} : (tensor<1x8x8x16xf32>, ...)

    becomes::

        %t = relay.transpose %x {axes = [0, 3, 1, 2]} : (...) -> tensor<1x16x8x8xf32>
        %n = relay.nn.instance_norm %t, %g, %b {axis = 1}
        %y = relay.transpose %n {axes = [0, 2, 3, 1]} : (...) -> tensor<1x8x8x16xf32>
    """
    count = 0
    for op in list(module.walk()):
        if not isinstance(op, RelayOp) or op.RELAY_NAME != "nn.instance_norm":
            continue
        x = op.operands[0]
        shape = list(shape_of(x.type))
        rank = len(shape)
        if rank < 3 or None in shape or dtype_of(x.type) != "float32":
            continue
        axis = int(op.attrs.get("axis", 1)) % rank
        if axis == 1:
            continue
        perm = [0, axis, *(i for i in range(1, rank) if i != axis)]
        back = [perm.index(i) for i in range(rank)]
        there = RELAY_OPS["transpose"].make([x], axes=perm)
        attrs = {**op.attrs, "axis": 1}
        norm = RELAY_OPS["nn.instance_norm"].make([there.results[0], *op.operands[1:]], **attrs)
        again = RELAY_OPS["transpose"].make([norm.results[0]], axes=back)
        if again.results[0].type != op.results[0].type:
            continue
        op.parent.insert_ops_before([there, norm, again], op)
        op.results[0].replace_all_uses_with(again.results[0])
        op.detach()
        op.erase()
        count += 1
    return count


def _group_norm_rewrite(op: RelayOp) -> bool:
    import math

    import numpy as np
    from xdsl.rewriter import InsertPoint, Rewriter

    x, gamma, beta = op.operands
    shape = list(shape_of(x.type))
    groups = int(op.attrs["num_groups"])
    if (None in shape or len(shape) < 3 or int(op.attrs.get("axis", 1)) % len(shape) != 1
            or dtype_of(x.type) != "float32" or shape[1] % groups):  # fmt: skip
        return False
    new: list[Operation] = []

    def make(name: str, operands: list, **attrs: Any) -> Any:
        o = RELAY_OPS[name].make(operands, **attrs)
        new.append(o)
        return o.results[0]

    def const(a: Any) -> Any:
        c = ConstantOp.from_numpy(np.asarray(a, np.float32))
        new.append(c)
        return c.result

    per_channel = [shape[1]] + [1] * (len(shape) - 2)

    def channels(v: Any) -> Any:  # (C,) as (C, 1, ...)
        if isinstance(v.owner, ConstantOp):
            return const(v.owner.numpy().reshape(per_channel))
        return make("reshape", [v], newshape=per_channel)

    rows = make("reshape", [x], newshape=[shape[0], groups, math.prod(shape[1:]) // groups])
    norm = make("nn.instance_norm", [rows, const(np.ones(groups)), const(np.zeros(groups))],
                axis=1, epsilon=float(op.attrs["epsilon"]), center=False, scale=False)  # fmt: skip
    y = make("reshape", [norm], newshape=shape)
    if op.attrs.get("scale", True):
        y = make("multiply", [y, channels(gamma)])
    if op.attrs.get("center", True):
        y = make("add", [y, channels(beta)])
    if y.type != op.results[0].type:
        return False
    Rewriter.insert_op(new, InsertPoint.before(op))
    op.results[0].replace_all_uses_with(y)
    op.detach()
    op.erase()
    return True


def depthwise_multiplier(module: ModuleOp) -> int:
    """A depthwise convolution with a channel multiplier (``groups`` = the input's channels,
    ``k`` times as many outputs: FastViT's stride-2 patch embeddings, Keras'
    ``depth_multiplier``) becomes the plain depthwise convolution (``groups`` = the output's
    channels) of its input with each channel repeated ``k`` times: output channel ``o`` reads
    input channel ``o // k`` either way, with the same weight (one input channel a group, so
    its shape does not change). oneDNN 3.2 has depthwise kernels for a multiplier of 1 only
    and ran the other as im2col + GEMM (48 -> 96 channels, 7x7, stride 2 at 64 x 64: 3.9 ms,
    2.5 GFLOP/s; repeated, then depthwise: 0.70 ms); the repeat is an elementwise loop over
    the repeated tensor, which the plan holds::

        %y = relay.nn.conv2d %x, %w {groups = 48, data_layout = "NHWC", kernel_layout = "HWIO", ...}
            : (tensor<1x64x64x48xf32>, tensor<7x7x1x96xf32>) -> tensor<1x32x32x96xf32>
        // becomes
        %r = relay.repeat %x {repeats = 2, axis = 3} : (tensor<1x64x64x48xf32>) -> tensor<1x64x64x96xf32>
        %y = relay.nn.conv2d %r, %w {groups = 96, ...} : (tensor<1x64x64x96xf32>, tensor<7x7x1x96xf32>) -> ...

    Returns how many."""
    from xdsl.rewriter import InsertPoint, Rewriter

    count = 0
    for op in list(module.walk()):
        if not isinstance(op, RelayOp) or op.RELAY_NAME != "nn.conv2d" or op.parent is None:
            continue
        a = op.attrs
        data, out = a.get("data_layout") or "NCHW", a.get("out_layout") or a.get("data_layout") or "NCHW"
        if not (data.isalpha() and data.isupper() and out.isalpha() and out.isupper() and "C" in data and "C" in out):
            continue  # (blocked layouts: NCHW8c)
        cin = shape_of(op.operands[0].type)[data.index("C")]
        cout = shape_of(op.results[0].type)[out.index("C")]
        groups = int(a.get("groups", 1))
        if groups < 2 or groups != cin or cout <= cin or cout % cin or dtype_of(op.operands[0].type) != "float32":
            continue
        rep = RELAY_OPS["repeat"].make([op.operands[0]], repeats=cout // cin, axis=data.index("C"))
        conv = RELAY_OPS["nn.conv2d"].make([rep.results[0], op.operands[1]], **{**a, "groups": cout})
        if conv.results[0].type != op.results[0].type:
            continue
        Rewriter.insert_op([rep, conv], InsertPoint.before(op))
        op.results[0].replace_all_uses_with(conv.results[0])
        Rewriter.erase_op(op)
        count += 1
    return count


def one_group_norm_channels_last(module: ModuleOp) -> int:
    """GroupNorm with one group as torch exports it (``reshape`` to ``(N, 1, K)``,
    ``nn.instance_norm``, ``reshape`` back, then a per-channel scale and shift), left by
    ``ConvertLayout`` between a transform to NCHW and one back to NHWC
    (PoolFormer's norms), is run on the NHWC data: one group's statistics are over all of a
    sample's elements, in any order, so the norm reads the NHWC tensor as ``(N, 1, K)`` and
    writes it back as NHWC; the per-channel constants after it (multiply, add, subtract,
    divide by a constant that varies along the channels only) are permuted to NHWC. Both
    transforms go (the first stays if something else reads it)::

        %t = relay.layout_transform %x {src_layout = "NHWC", dst_layout = "NCHW"}
        %r = relay.reshape %t {newshape = [1, 1, 2304]}
        %n = relay.nn.instance_norm %r, %one, %zero
        %b = relay.reshape %n {newshape = [1, 16, 12, 12]}
        %m = relay.multiply %b, %gamma : (..., tensor<16x1x1xf32>)
        %y = relay.layout_transform %m {src_layout = "NCHW", dst_layout = "NHWC"}

    becomes ``reshape(%x)``, the same ``instance_norm``, ``reshape`` to ``%x``'s shape and
    ``multiply`` by ``%gamma`` as ``1x1x1x16``. Returns how many."""
    import numpy as np

    def op_of(v: Any, name: str) -> Any:
        o = v.owner
        return o if isinstance(o, RelayOp) and o.RELAY_NAME == name and v.has_one_use() else None

    count = 0
    for back in list(module.walk()):
        if not isinstance(back, RelayOp) or back.RELAY_NAME != "layout_transform" or back.parent is None:
            continue
        src, dst = back.attrs["src_layout"], back.attrs["dst_layout"]
        if sorted(src) != sorted(dst) or not src.isalpha() or not src.isupper() or src[0] != dst[0] or src[0] == "C":
            continue
        perm = [src.index(a) for a in dst]  # the transform as a transpose
        chain, cur = [], back.operands[0]
        while (o := cur.owner) and isinstance(o, RelayOp) and o.RELAY_NAME in ("add", "multiply", "subtract", "divide") \
                and cur.has_one_use() and o.operands[0] is not o.operands[1]:  # fmt: skip
            data = [v for v in o.operands if not isinstance(v.owner, ConstantOp)]
            const = [v for v in o.operands if isinstance(v.owner, ConstantOp)]
            if len(data) != 1 or len(const) != 1 or (o.RELAY_NAME in ("subtract", "divide") and o.operands[0] is not data[0]):
                break
            chain.append(o)
            cur = data[0]
        up = op_of(cur, "reshape")
        norm = op_of(up.operands[0], "nn.instance_norm") if up else None
        down = op_of(norm.operands[0], "reshape") if norm else None
        there = down.operands[0].owner if down else None
        if not (isinstance(there, RelayOp) and there.RELAY_NAME == "layout_transform"):
            continue
        x = there.operands[0]
        shape = list(shape_of(up.results[0].type))
        flat = list(shape_of(down.results[0].type))
        if (
            (there.attrs["src_layout"], there.attrs["dst_layout"]) != (dst, src)
            or int(norm.attrs.get("axis", 1)) % 3 != 1  # (N, 1, K): one group, normalized over K
            or len(flat) != 3 or flat[1] != 1 or flat[0] != shape[0] or shape != list(shape_of(there.results[0].type))
            or any(dtype_of(o.results[0].type) != "float32" for o in (back, *chain))
        ):  # fmt: skip
            continue
        consts = []
        for o in chain:
            (c,) = [v for v in o.operands if isinstance(v.owner, ConstantOp)]
            a = c.owner.numpy()
            if a.ndim > len(shape) or a.dtype != np.float32:
                break
            a = a.reshape((1,) * (len(shape) - a.ndim) + a.shape)
            if any(d != 1 for i, d in enumerate(a.shape) if src[i] != "C"):
                break  # varies along another axis than the channels
            consts.append(ConstantOp.from_numpy(np.ascontiguousarray(a.transpose(perm))))
        if len(consts) != len(chain):
            continue
        new = [RELAY_OPS["reshape"].make([x], newshape=flat)]
        norm_new = RELAY_OPS["nn.instance_norm"].make([new[0].results[0], *norm.operands[1:]], **norm.attrs)
        new += [norm_new, RELAY_OPS["reshape"].make([norm_new.results[0]], newshape=list(shape_of(x.type)))]
        for o, c in zip(reversed(chain), reversed(consts)):
            operands = [new[-1].results[0], c.result] if not isinstance(o.operands[0].owner, ConstantOp) else [c.result, new[-1].results[0]]
            new += [c, RELAY_OPS[o.RELAY_NAME].make(operands)]
        if new[-1].results[0].type != back.results[0].type:
            continue
        back.parent.insert_ops_before(new, back)
        back.results[0].replace_all_uses_with(new[-1].results[0])
        for o in (back, *chain, up, norm, down, there):  # if now dead
            if o.parent is not None and not any(r.uses for r in o.results):
                o.detach()
                o.erase()
        count += 1
    return count


ELEMENTWISE = frozenset(
    {"add", "multiply", "nn.relu", "nn.leaky_relu", "clip", "tanh", "sigmoid", "sqrt", "exp",
     "abs", "log", "round"}
)  # fmt: skip
"""Ops that ``inline_elementwise`` gives back to the native kernels when they are alone."""


def native_winograd(module: ModuleOp) -> int:
    """Give back to the native kernels every dnnl function that is one float32 convolution
    the native kernels run as Winograd (``winograd_choice``). Returns how many."""
    from xdsl.rewriter import Rewriter


    funcs = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    chosen: dict[str, func.FuncOp] = {}
    for fn in dnnl_functions(module):
        calls = [o for o in fn.body.block.ops if isinstance(o, func.CallOp)]
        convs = []
        for c in calls:
            callee = funcs.get(c.callee.root_reference.data)
            if callee is not None:
                convs += [o for o in callee.body.block.ops if isinstance(o, RelayOp) and o.RELAY_NAME == "nn.conv2d"]
        convs += [o for o in fn.body.block.ops if isinstance(o, RelayOp) and o.RELAY_NAME == "nn.conv2d"]
        if len(convs) != 1 or len([o for o in fn.body.block.ops if not isinstance(o, func.ReturnOp)]) != 1:
            continue
        (conv,) = convs
        a = conv.attrs
        if a.get("data_layout") != "NHWC" or a.get("kernel_layout") != "HWIO":
            continue
        if dtype_of(conv.results[0].type) != "float32":
            continue
        x, w = (shape_of(v.type) for v in conv.operands)
        out = shape_of(conv.results[0].type)
        if winograd_choice(w[:2], a["strides"], a["dilation"], a["groups"], x[3], w[3], out[1], out[2]):
            chosen[fn.sym_name.data] = fn
    if not chosen:
        return 0
    count = 0
    for op in list(module.walk()):
        if isinstance(op, func.CallOp) and op.callee.root_reference.data in chosen:
            _inline_call(op, chosen[op.callee.root_reference.data], funcs)
            count += 1
    used = {o.callee.root_reference.data for o in module.walk() if isinstance(o, func.CallOp)}
    for fn in chosen.values():
        Rewriter.erase_op(fn)
    for name, fn in funcs.items():  # composites only the inlined functions called
        if "relay.composite" in fn.attributes and name not in used and fn.parent is not None:
            Rewriter.erase_op(fn)
    return count


def winograd_choice(kernel, strides, dilation, groups, in_c, out_c, out_h, out_w) -> bool:
    """Whether a float32 NHWC convolution runs on the native Winograd kernel instead of the
    oneDNN backend. ``XRELAY_DNNL_WINOGRAD`` chooses the rule:

    * ``dnnl`` (default): none; the oneDNN backend runs the 3x3 stride-1 convolutions with
      outputs from 14x14 as Winograd F(4x4, 3x3) itself (``dnnl.winograd_in_dnnl``: the
      native kernels' transforms on oneDNN's OpenMP threads around oneDNN's batched matmul)
      and every other one as its direct convolution. Whole models, 2 threads, alternating
      (``benchmarks/runtime.py --winograd``, 20 rounds, load 2.1): ResNet-18 0.650x and
      ResNet-50 0.838x the time of ``never``;
    * ``f4``: where the native kernels run F(4x4, 3x3) (``winograd_tile`` 4: 3x3, stride 1,
      at least 16 channels, outputs of at least 28x28) the convolution goes back to the
      native kernels (in the same run 0.796x, unsteady between runs, and 0.933x ``never``:
      their products are OpenBLAS calls per tile element on the native pool);
    * ``never``: every convolution as oneDNN's direct convolution;
    * ``always``: every convolution the native kernels run as Winograd goes native."""
    import os


    mode = os.environ.get("XRELAY_DNNL_WINOGRAD", "dnnl")
    if mode not in ("f4", "always") or not winograd_enabled():
        return False
    tile = winograd_tile(tuple(kernel), tuple(strides), tuple(dilation), groups, in_c, out_c, out_h, out_w)
    return tile > 0 if mode == "always" else tile == 4


def _plain(layout: str) -> bool:
    return layout.isalpha() and layout.isupper() and len(set(layout)) == len(layout)


def reorderable(op: Any) -> bool:
    """A ``layout_transform`` between plain layouts (``NCHW`` to ``NHWC``, ...) or a ``cast``
    between float32 and bfloat16: one oneDNN reorder."""

    if not isinstance(op, RelayOp) or len(op.operands) != 1 or len(op.results) != 1:
        return False
    src, dst = dtype_of(op.operands[0].type), dtype_of(op.results[0].type)
    if op.RELAY_NAME == "layout_transform":
        a = op.attrs
        return (src == dst and src in ("float32", "bfloat16") and _plain(a["src_layout"])
                and _plain(a["dst_layout"]) and sorted(a["src_layout"]) == sorted(a["dst_layout"]))  # fmt: skip
    return op.RELAY_NAME == "cast" and src != dst and {src, dst} <= {"float32", "bfloat16"}


def fold_views(module: ModuleOp) -> int:
    """Move the reshapes and transposes around each oneDNN batched matmul into its function,
    where they are strides rather than copies. Attention splits its rows into heads and joins
    them back with ``reshape -> transpose -> reshape`` chains (Q, K^T and V before the two
    matmuls, the context after; a reshape of the scores between them): each was a copy of
    the tensor (``offload_reorders``' reorders), while a matmul reads and writes any strides.

    An operand's chain (view ops, each result read once, the last by the call) joins the
    function when its elements are a strided view of the chain's source
    (``primitives.matmul_view``; else its longest tail that is); the result's chain (each
    value read once) when the chain's end, contiguous, seen back through it gives the
    matmul's result strides (``view_back``; else its longest head). The reader
    (``primitives._Reader``) describes the matmul's operands and result with those strides.
    A function called more than once, or one oneDNN then refuses, is left as it is.

    The epilogue (``_epilogue_chain``): the ``add``/``multiply`` ops after the result's
    reshapes (attention's scale, its padding or causal mask, Swin's relative-position bias
    and shifted-window mask), each value read once, with reshapes between them, join too;
    their other operands become arguments, and the reader runs them as the matmul's binary
    post-ops over the finest batch dims the reshapes show (``_Reader._matmul_epilogue``).
    If oneDNN refuses that, or has only its reference code for it, the views fold alone.

    Before::

        %q = relay.reshape %x {newshape = [1, 128, 12, 64]}
        %t = relay.transpose %q {axes = [0, 2, 1, 3]}
        %h = relay.reshape %t {newshape = [12, 128, 64]}
        %s = func.call @dnnl_bmm(%h, %k)       // @dnnl_bmm: one nn.batch_matmul

    After::

        %s = func.call @dnnl_bmm(%x, %k)       // @dnnl_bmm: reshape, transpose, reshape,
                                               // nn.batch_matmul (one strided matmul)

    Returns how many ops moved."""
    calls: dict[str, list[func.CallOp]] = {}
    for op in module.walk():
        if isinstance(op, func.CallOp):
            calls.setdefault(op.callee.root_reference.data, []).append(op)
    moved = 0
    for fn in dnnl_functions(module):
        if not any(getattr(o, "RELAY_NAME", "") == "nn.batch_matmul" for o in fn.body.block.ops):
            continue
        sites = calls.get(fn.sym_name.data, [])
        if len(sites) != 1 or len(fn.function_type.outputs.data) != 1:
            continue
        call = sites[0]
        for v in call.arguments:
            _split_to_slice(v)
        before = [_operand_chain(v) for v in call.arguments]
        after = _result_chain(call.results[0])
        epilogue, others = _epilogue_chain(after[-1].results[0] if after else call.results[0])
        if epilogue and not all(o.RESHAPE_ONLY for o in after):
            epilogue, others = [], []  # the post-ops see the result contiguous
        # with the epilogue first; if oneDNN refuses it (a broadcast its post-ops lack),
        # the views alone
        for epi, extra in ([(epilogue, others)] if epilogue else []) + [([], [])]:
            if _fold_call(module, fn, call, before, after + epi, extra, bool(epi)):
                moved += len(after) + len(epi) + sum(map(len, before))
                break
    return moved


def _fold_call(module: ModuleOp, fn: func.FuncOp, call: func.CallOp, before: list, after: list,
               others: list, epilogue: bool) -> bool:
    """``fold_views``' rewrite of one call: ``before`` (per argument) and ``after`` move
    into ``fn``, ``others`` (the epilogue's operands) become arguments; False (nothing
    changed) if there is nothing to move or oneDNN refuses the folded function."""
    from xdsl.ir import Block, Region
    from xdsl.rewriter import InsertPoint, Rewriter

    if not after and not any(before):
        return False
    sources = [chain[0].operands[0] if chain else v for chain, v in zip(before, call.arguments)]
    sources += [v for i, v in enumerate(others) if v not in sources and v not in others[:i]]
    end = after[-1].results[0] if after else call.results[0]
    body = Block(arg_types=[v.type for v in sources])
    mapping: dict = {}
    for chain, v, a in zip(before, call.arguments, body.args):
        mapping[chain[0].operands[0] if chain else v] = a
        for o in chain:
            new = o.clone(value_mapper=mapping)
            body.add_op(new)
            mapping[o.results[0]] = new.results[0]
    for v, a in zip(sources[len(call.arguments) :], body.args[len(call.arguments) :]):
        mapping[v] = a
    inner = dict(zip(fn.body.block.args, (mapping[v] for v in call.arguments)))
    ret = None
    for o in fn.body.block.ops:
        if isinstance(o, func.ReturnOp):
            ret = o
            continue
        new = o.clone(value_mapper=inner)
        body.add_op(new)
        for a, b in zip(o.results, new.results):
            inner[a] = b
    assert ret is not None
    mapping[call.results[0]] = inner[ret.operands[0]]
    for o in after:
        new = o.clone(value_mapper=mapping)
        body.add_op(new)
        mapping[o.results[0]] = new.results[0]
    body.add_op(func.ReturnOp(mapping[end]))
    folded = func.FuncOp(fn.sym_name.data, ([v.type for v in sources], [end.type]), Region(body))
    for key, value in fn.attributes.items():
        if key not in ("sym_name", "function_type"):
            folded.attributes[key] = value
    module.body.block.insert_op_before(folded, fn)
    try:
        plan = plan_function(folded, module)
    except DnnlUnsupported:
        Rewriter.erase_op(folded)  # oneDNN takes the strides only as copies
        return False
    if epilogue and not any(st.name.startswith("nn.batch_matmul+") for st in plan.steps):
        Rewriter.erase_op(folded)  # the reader ran the epilogue apart: native steps are as good
        return False
    Rewriter.erase_op(fn)
    new_call = func.CallOp(fn.sym_name.data, sources, [end.type])
    # (after the epilogue's operands, which the end's op follows)
    Rewriter.insert_op(new_call, InsertPoint.before(end.owner if epilogue else call))
    end.replace_all_uses_with(new_call.results[0])
    for o in reversed(after):
        Rewriter.erase_op(o)
    Rewriter.erase_op(call)
    for chain in before:
        for o in reversed(chain):
            Rewriter.erase_op(o)
    return True


EPILOGUE_OPS = ("add", "multiply")
"""Elementwise ops a oneDNN batched matmul takes as binary post-ops (``fold_views``)."""


def _epilogue_chain(v: Any) -> tuple[list, list]:
    """The ``EPILOGUE_OPS`` (an operand of any shape that broadcasts into ``v``'s, float32)
    and reshapes reading ``v``, each value read once, up to the last such op; and their other
    operands. Attention's scale, mask and position-bias adds after the scores' matmul."""
    chain: list = []
    others: list = []
    last = 0
    while v.has_one_use():
        user = next(iter(v.uses)).operation
        if not isinstance(user, RelayOp):
            break
        if user.RELAY_NAME in EPILOGUE_OPS:
            if not (
                len(user.operands) == 2 and list(user.operands).count(v) == 1 and len(user.results) == 1
                and dtype_of(user.results[0].type) == "float32"
                and list(shape_of(user.results[0].type)) == list(shape_of(v.type))
            ):  # fmt: skip
                break
            others.append(user.operands[1] if user.operands[0] is v else user.operands[0])
            chain.append(user)
            last = len(chain)
        elif is_view(user) and user.RESHAPE_ONLY:
            chain.append(user)
        else:
            break
        v = user.results[0]
    return chain[:last], others


def _split_to_slice(v: Any) -> bool:
    """If the view ops (each result read once) that make ``v`` start at one result of a
    ``split`` read only there, that result becomes a ``strided_slice`` of the split's operand
    (a view the matmul reads in place; GPT-2 splits its fused Q/K/V projection with
    ``split``); the split goes when none of its results is read. Returns whether it did."""

    while isinstance(v.owner, RelayOp) and is_view(v.owner) and v.has_one_use():
        v = v.owner.operands[0]
    split = v.owner
    if not (isinstance(split, RelayOp) and split.RELAY_NAME == "split" and v.has_one_use()):
        return False
    shape = list(shape_of(split.operands[0].type))
    if None in shape or dtype_of(v.type) != dtype_of(split.operands[0].type):
        return False
    axis = int(split.attrs["axis"]) % len(shape)
    start = sum(int(shape_of(r.type)[axis]) for r in split.results[: list(split.results).index(v)])
    size = int(shape_of(v.type)[axis])
    sliced = RELAY_OPS["strided_slice"].make(
        [split.operands[0]], begin=[start], end=[start + size], strides=[1], axes=[axis]
    )
    if sliced.results[0].type != v.type:
        return False
    block = split.parent
    block.insert_op_after(sliced, split)
    v.replace_all_uses_with(sliced.results[0])
    if not any(r.uses for r in split.results):
        split.detach()
        split.erase()
    return True


def _operand_chain(v: Any) -> list:
    """The view ops (each result read once) that make ``v``, source first, cut to the longest
    tail whose result is a strided view of its source as a batched matmul reads it
    (``primitives.matmul_view``: batch dims merged across strides stay apart)."""
    chain: list = []
    while isinstance(v.owner, RelayOp) and is_view(v.owner) and v.has_one_use():
        chain.insert(0, v.owner)
        v = v.owner.operands[0]
    for start in range(len(chain)):
        dims = list(shape_of(chain[start].operands[0].type))
        seen: tuple | None = (dims, contiguous_strides(dims), False)
        for o in chain[start:]:
            seen = matmul_view(o, *seen) if seen is not None else None
        if seen is not None:
            return chain[start:]
    return []


def _result_chain(v: Any) -> list:
    """The view ops reading ``v`` (each value read once), cut to the longest head whose end,
    contiguous, is seen back through it as strides of ``v``."""
    chain: list = []
    while v.has_one_use():
        user = next(iter(v.uses)).operation
        if not (isinstance(user, RelayOp) and is_view(user)):
            break
        chain.append(user)
        v = user.results[0]
    for stop in range(len(chain), 0, -1):
        dims = list(shape_of(chain[stop - 1].results[0].type))
        strides: list[int] | None = contiguous_strides(dims)
        for o in reversed(chain[:stop]):
            strides = view_back(o, dims, strides) if strides is not None else None
            dims = list(shape_of(o.operands[0].type))
        if strides is not None:
            return chain[:stop]
    return []


def offload_reorders(module: ModuleOp) -> int:
    """Make every ``reorderable`` op left in the caller a dnnl function of its own (a oneDNN
    reorder): the layout transforms ``ConvertLayout`` put at the model's edges and the casts
    ``to-mixed-precision`` put there, which the native kernels run as strided numpy copies,
    and which would otherwise split a model's run of oneDNN steps; and, between two oneDNN
    steps, a transpose with the reshapes around it that no batched matmul took as strides
    (``fold_views``): one reorder reading the permuted strides. A lone reshape stays in the
    caller, where it is a reshape-only function: a view of its operand, no step and no
    copy (GPT-2's rows flattened before each matmul and viewed back after it were each a
    copy as a reorder). Returns how many functions it made."""


    dnnl = {f.sym_name.data for f in dnnl_functions(module)}

    def on_dnnl(v: Any) -> bool:
        return isinstance(v.owner, func.CallOp) and v.owner.callee.root_reference.data in dnnl

    callers = [f for f in module.ops if isinstance(f, func.FuncOp) and not f.is_declaration
               and not any(k in f.attributes for k in ("relay.compiler", "relay.composite", "relay.primitive"))]  # fmt: skip
    names = {f.sym_name.data for f in module.ops if isinstance(f, func.FuncOp)}
    def relay_name(o: Any) -> str:
        return getattr(o, "RELAY_NAME", "")

    def permute_chain(op: Any) -> list | None:
        # reshapes, a transpose, reshapes (BERT's heads): one reorder between two oneDNN steps
        if relay_name(op) != "transpose" or dtype_of(op.results[0].type) not in ("float32", "bfloat16"):
            return None
        chain = [op]
        while relay_name(chain[0].operands[0].owner) == "reshape" and chain[0].operands[0].has_one_use():
            chain.insert(0, chain[0].operands[0].owner)
        while chain[-1].results[0].has_one_use():
            user = next(iter(chain[-1].results[0].uses)).operation
            if relay_name(user) != "reshape":
                break
            chain.append(user)
        head, tail = chain[0], chain[-1]
        users = [u.operation for u in tail.results[0].uses]
        if not on_dnnl(head.operands[0]) or not users or not all(
            isinstance(u, func.CallOp) and u.callee.root_reference.data in dnnl for u in users
        ):
            return None
        return chain

    count = 0
    # layout transforms and casts first: a reshape between them and a oneDNN step then sees
    # oneDNN on both sides
    pairs = [(caller, op) for caller in callers for op in caller.walk()]
    pairs = [p for p in pairs if reorderable(p[1])] + [p for p in pairs if not reorderable(p[1])]
    for caller, op in pairs:
        if op.parent is None:
            continue  # outlined with a chain already
        chain = [op] if reorderable(op) else permute_chain(op)
        if chain is None:
            continue
        _outline(module, caller, chain, [chain[0].operands[0]], "tvmgen_default_dnnl_reorder", names, dnnl)
        count += 1
    return count


def offload_movement(module: ModuleOp) -> int:
    """Make every region of data movement between oneDNN steps a dnnl function of its own:
    connected ops of ``MOVEMENT_OPS`` (concatenations, splits, slices, transposes,
    reshapes, plain layout transforms), float32 or bfloat16, whose inputs are oneDNN
    results or the caller's arguments and whose results only oneDNN steps read (or the
    caller returns). The oneDNN reader runs such a function as strided copies on oneDNN's
    OpenMP threads (``primitives._Reader._move``), every element moved once, so the run of
    oneDNN steps around it is one C call: no native step, no hand-over of the cores between
    the engines' thread teams. ShuffleNetV2's channel shuffle, with the layout transforms
    that ``ConvertLayout`` put around its reshapes, was a transform back to NCHW, a native
    step and a transform to NHWC, three copies and two switches between the engines; Swin's
    cyclic shift, window partition and patch merging were native steps.

    A region grows in program order: an op joins the regions of its operands when no path
    from the region through an op outside it reaches the op (the function would read its
    own result); a reshape alone stays a view in the caller. A region oneDNN refuses (too
    many patterns, too large) stays where it was.

    Before (the caller)::

        %c = relay.concatenate %a, %b {axis = 1}      // %a, %b: oneDNN results
        %r = relay.reshape %c {newshape = [1, 2, 4, 6, 6]}
        %t = relay.transpose %r {axes = [0, 2, 1, 3, 4]}
        %s = relay.reshape %t {newshape = [1, 8, 6, 6]}
        %x, %y = relay.split %s {indices_or_sections = 2, axis = 1}

    After::

        %x, %y = func.call @tvmgen_default_dnnl_move_0(%a, %b)   // the five ops

    Returns how many functions it made."""
    dnnl = {f.sym_name.data for f in dnnl_functions(module)}
    callers = [f for f in module.ops if isinstance(f, func.FuncOp) and not f.is_declaration
               and not any(k in f.attributes for k in ("relay.compiler", "relay.composite", "relay.primitive"))]  # fmt: skip
    names = {f.sym_name.data for f in module.ops if isinstance(f, func.FuncOp)}
    count = 0
    for caller in callers:
        block = caller.body.block
        regions, claimed = [], set()
        for r in _movement_regions(block):
            # a tail op is one region's: two slices of one value added together (N-BEATS'
            # forecast sum) both had the add as their tail, and the second region outlined
            # an op the first had taken
            tail = []
            for o in _with_tail(r)[len(r) :]:
                if o in claimed:
                    break
                tail.append(o)
            claimed.update(tail)
            regions.append(r + tail)
        regions = [r for r in regions if _region_function(module, r, names) is not None]
        # the edges: oneDNN steps, the caller's arguments and results, or other regions
        # that become oneDNN steps too (a split's half read by the next concatenation)
        while True:
            moved = {o for r in regions for o in r}
            kept = [r for r in regions if _oneDNN_edges(r, block, dnnl, moved)]
            if len(kept) == len(regions):
                break
            regions = kept
        for region in regions:
            # each region was convex among the block's ops, but two regions can read each
            # other's results through different members (CrossViT's branches swapping their
            # class tokens): once one is a call, the other may no longer be one
            if not _convex(set(region), {o: i for i, o in enumerate(block.ops)}):
                continue
            _outline_region(module, block, region, names, dnnl)
            count += 1
    return count


def _movable(op: Any) -> bool:
    if not isinstance(op, RelayOp) or getattr(op, "RELAY_NAME", "") not in MOVEMENT_OPS:
        return False
    if op.RELAY_NAME == "layout_transform" and not reorderable(op):
        return False
    types = {dtype_of(v.type) for v in [*op.operands, *op.results]}
    return len(types) == 1 and types <= {"float32", "bfloat16"} and not any(
        isinstance(v.owner, ConstantOp) for v in op.operands
    )


def _movement_regions(block: Any) -> list[list]:
    """The regions of ``offload_movement`` in ``block``, each its ops in program order."""
    ops = list(block.ops)
    order = {op: i for i, op in enumerate(ops)}
    region_of: dict[Any, int] = {}
    regions: dict[int, list] = {}

    for op in ops:
        if not _movable(op):
            continue
        near = list(dict.fromkeys(region_of[v.owner] for v in op.operands if v.owner in region_of))
        chosen = None
        for ids in ([near] if len(near) > 1 else []) + [[k] for k in near]:
            members = {m for k in ids for m in regions[k]} | {op}
            if _convex(members, order):
                chosen = ids
                break
        if chosen is None:
            key = len(region_of)  # (a key no region has had: one per op placed)
            regions[key] = [op]
        else:
            key = chosen[0]
            for k in chosen[1:]:
                regions[key] += regions.pop(k)
            regions[key].append(op)
        for m in regions[key]:
            region_of[m] = key
    # (a reshape alone is a view; a concatenation alone is offload_concatenations', with
    # the elementwise ops after it)
    return [
        sorted(r, key=order.__getitem__) for r in regions.values()
        if not all(o.RESHAPE_ONLY for o in r) and not (len(r) == 1 and r[0].RELAY_NAME == "concatenate")
    ]  # fmt: skip


def _convex(members: set, order: dict) -> bool:
    """Whether no op outside ``members`` (ops of one block, ``order`` their positions)
    reads a result of ``members`` and makes, directly or through other ops, a value that
    ``members`` read: the ops can become one call."""
    first = min(order[m] for m in members)
    outside = {v.owner for m in members for v in m.operands if v.owner in order and v.owner not in members}
    for start in outside:  # does it read, through ops from `first` on, a result of members?
        seen, todo = set(), [start]
        while todo:
            for v in todo.pop().operands:
                p = v.owner
                if p in members:
                    return False
                if p in order and order[p] >= first and p not in seen:
                    seen.add(p)
                    todo.append(p)
    return True


def _with_tail(region: list) -> list:
    """``region`` with the chain of up to four elementwise ops (``ELEMENTWISE_TAIL``) on its
    one result, each value read once, each op's other operand a float32 value of the
    result's type that does not depend on the region (Swin's residual add after its
    window reverse): the copies run each element through the chain on its way."""
    _, outs = _region_io(region)
    if len(outs) != 1 or dtype_of(outs[0].type) != "float32":
        return region
    members = set(region)
    out, tail = outs[0], []
    while len(tail) < 4 and out.has_one_use():
        user = next(iter(out.uses)).operation
        if getattr(user, "RELAY_NAME", "") not in ELEMENTWISE_TAIL or len(user.operands) != 2:
            break
        other = user.operands[1] if user.operands[0] is out else user.operands[0]
        if other is out or other.type != out.type or user.results[0].type != out.type:
            break
        if isinstance(other.owner, ConstantOp) or _reads(other, members | set(tail)):
            break
        tail.append(user)
        out = user.results[0]
    return region + tail


def _reads(v: Any, members: set) -> bool:
    """Whether the value ``v`` is made, directly or through other ops of its block, from
    the results of ``members``."""
    seen, todo = set(), [v.owner]
    while todo:
        o = todo.pop()
        if o in members:
            return True
        if isinstance(o, Operation) and o not in seen:
            seen.add(o)
            todo += [w.owner for w in o.operands]
    return False


def _region_io(region: list) -> tuple[list, list]:
    """A region's inputs (values it reads that it does not make) and outputs (values it
    makes that ops outside it read), in order."""
    members = set(region)
    ins = list(dict.fromkeys(v for o in region for v in o.operands if v.owner not in members))
    outs = [r for o in region for r in o.results if any(u.operation not in members for u in r.uses)]
    return ins, outs


def _oneDNN_edges(region: list, block: Any, dnnl: set, moved: set) -> bool:
    """Whether every input of ``region`` is a oneDNN result, an argument of the caller or a
    result of another region of ``moved``, and every op outside it that reads its outputs
    a oneDNN step, the caller's return or an op of ``moved``."""
    members = set(region)
    ins, outs = _region_io(region)

    def on_dnnl(o: Any) -> bool:
        return o in moved or (isinstance(o, func.CallOp) and o.callee.root_reference.data in dnnl)

    if not outs or not all(on_dnnl(v.owner) or v in block.args for v in ins):
        return False
    return all(on_dnnl(u.operation) or isinstance(u.operation, func.ReturnOp)
               for r in outs for u in r.uses if u.operation not in members)  # fmt: skip


def _region_function(module: ModuleOp, region: list, names: set) -> func.FuncOp | None:
    """The dnnl function of ``region``'s ops (its inputs as arguments, its outputs as
    results), named after the first free ``tvmgen_default_dnnl_move_k`` and not yet in the
    module; None where oneDNN does not run it (``plan_function``)."""
    from xdsl.ir import Block, Region

    ins, outs = _region_io(region)
    if not outs:
        return None
    body = Block(arg_types=[v.type for v in ins])
    mapping = dict(zip(ins, body.args))
    for o in region:
        inner = o.clone(value_mapper=mapping)
        mapping.update(zip(o.results, inner.results))
        body.add_op(inner)
    body.add_op(func.ReturnOp(*[mapping[r] for r in outs]))
    k = 0
    while f"tvmgen_default_dnnl_move_{k}" in names:
        k += 1
    name = f"tvmgen_default_dnnl_move_{k}"
    fn = func.FuncOp(name, ([v.type for v in ins], [r.type for r in outs]), Region(body))
    fn.attributes[FUNC_ATTRS["Primitive"]] = IntegerAttr(1, i64)
    fn.attributes[FUNC_ATTRS["Compiler"]] = StringAttr("dnnl")
    fn.attributes[FUNC_ATTRS["global_symbol"]] = StringAttr(name)
    fn.attributes[FUNC_ATTRS["Inline"]] = IntegerAttr(1, i64)
    try:
        plan_function(fn, module)
    except DnnlUnsupported:
        return None
    return fn


def _outline_region(module: ModuleOp, block: Any, region: list, names: set, dnnl: set) -> None:
    """``offload_movement``'s rewrite of one region: its dnnl function, called in its place."""
    from xdsl.rewriter import InsertPoint, Rewriter

    fn = _region_function(module, region, names)
    assert fn is not None  # (offload_movement kept the regions it runs)
    module.body.block.insert_op_before(fn, block.parent_op())
    name = fn.sym_name.data
    names.add(name)
    dnnl.add(name)
    members = set(region)
    ins, outs = _region_io(region)
    ops = list(block.ops)
    order = {o: i for i, o in enumerate(ops)}
    # the call goes after the last op that makes an input (or where the region began)
    makers = [order[v.owner] for v in ins if v.owner in order]
    at = max(makers, default=order[region[0]] - 1)
    call = func.CallOp(name, ins, [r.type for r in outs])
    if at < 0:
        Rewriter.insert_op(call, InsertPoint.at_start(block))
    else:
        Rewriter.insert_op(call, InsertPoint.after(ops[at]))
    for r, new in zip(outs, call.results):
        r.replace_uses_with_if(new, lambda use: use.operation not in members)
    # ops outside the region that read its results and came before the call move after
    # it, in order, with what reads them in turn (none of them makes an input: the
    # region is convex)
    late, moved = {call}, []
    for o in ops[order[region[0]] : at + 1]:
        if o not in members and any(v.owner in late for v in o.operands):
            late.add(o)
            moved.append(o)
    point = call
    for o in moved:
        o.detach()
        Rewriter.insert_op(o, InsertPoint.after(point))
        point = o
    for o in reversed(region):
        o.detach()
        o.erase()


def _outline(module: ModuleOp, caller: Any, chain: list, xs: list, prefix: str, names: set, dnnl: set) -> None:
    """Move ``chain`` (ops of ``caller``, each reading the one before or ``xs``, and
    constants) into a new dnnl function ``prefix_k`` of arguments ``xs`` called in its place;
    the constants it reads are cloned into it (and erased from the caller if unused now)."""
    from xdsl.ir import Block, Region
    from xdsl.rewriter import InsertPoint, Rewriter


    res = chain[-1].results[0]
    body = Block(arg_types=[x.type for x in xs])
    mapping = dict(zip(xs, body.args))
    for o in chain:
        for v in o.operands:
            if v not in mapping and isinstance(v.owner, ConstantOp):
                c = v.owner.clone()
                body.add_op(c)
                mapping[v] = c.results[0]
        inner = o.clone(value_mapper=mapping)
        mapping[o.results[0]] = inner.results[0]
        body.add_op(inner)
    body.add_op(func.ReturnOp(mapping[res]))
    k = 0
    while f"{prefix}_{k}" in names:
        k += 1
    name = f"{prefix}_{k}"
    names.add(name)
    dnnl.add(name)
    fn = func.FuncOp(name, ([x.type for x in xs], [res.type]), Region(body))
    fn.attributes[FUNC_ATTRS["Primitive"]] = IntegerAttr(1, i64)
    fn.attributes[FUNC_ATTRS["Compiler"]] = StringAttr("dnnl")
    fn.attributes[FUNC_ATTRS["global_symbol"]] = StringAttr(name)
    fn.attributes[FUNC_ATTRS["Inline"]] = IntegerAttr(1, i64)
    module.body.block.insert_op_before(fn, caller)
    call = func.CallOp(name, xs, [res.type])
    Rewriter.insert_op(call, InsertPoint.after(chain[-1]))
    res.replace_all_uses_with(call.results[0])
    consts = {v.owner for o in chain for v in o.operands if isinstance(v.owner, ConstantOp)}
    for o in reversed(chain):
        Rewriter.erase_op(o)
    for c in consts:
        if not c.results[0].uses:
            Rewriter.erase_op(c)


CONCAT_EPILOGUE = {"add": 1, "subtract": 1, "multiply": 1, "maximum": 1, "minimum": 1, "nn.relu": 1, "clip": 2}
"""The elementwise ops a oneDNN-side concatenation runs on its result (with how many of the
shim kernel's four ops each takes: ``clip`` is a maximum and a minimum)."""


def offload_concatenations(module: ModuleOp) -> int:
    """Make every float32 ``concatenate`` between oneDNN steps (each input a oneDNN step's
    result, every user of the result a oneDNN step), with the chain of elementwise ops on
    its result (``CONCAT_EPILOGUE``, by constants that vary along the joined axis only; at
    most four kernel ops), a dnnl function of its own: the shim runs it on oneDNN's OpenMP
    threads (``primitives._Reader._concatenate``), so the run of oneDNN steps around it is
    one C call, with no native step, no hand-over between the two engines' threads and no
    Python between them (DenseNet's concatenation, batch-norm shift and ReLU before every
    dense layer; the joined branches of GoogLeNet, Inception and SqueezeNet). Runs after
    ``inline_elementwise``, which gave the chain's ops back to the caller. Returns how many
    functions it made."""


    dnnl = {f.sym_name.data for f in dnnl_functions(module)}

    def on_dnnl(v: Any) -> bool:
        return isinstance(v.owner, func.CallOp) and v.owner.callee.root_reference.data in dnnl

    def along_axis(c: Any, shape: list, axis: int) -> bool:
        cs = list(shape_of(c.type))
        if len(cs) > len(shape) or dtype_of(c.type) != "float32":
            return False
        cs = [1] * (len(shape) - len(cs)) + cs
        return all(d == 1 for i, d in enumerate(cs) if i != axis)

    def chain_of(cat: Any) -> list | None:
        shape = list(shape_of(cat.results[0].type))
        if dtype_of(cat.results[0].type) != "float32" or len(cat.operands) > 64:
            return None
        if any(dtype_of(v.type) != "float32" or not on_dnnl(v) for v in cat.operands):
            return None
        axis = int(cat.attrs["axis"]) % len(shape)
        chain, used = [cat], 0
        while chain[-1].results[0].has_one_use():
            user = next(iter(chain[-1].results[0].uses)).operation
            name = getattr(user, "RELAY_NAME", "")
            if name not in CONCAT_EPILOGUE or used + CONCAT_EPILOGUE[name] > 4:
                break
            if list(shape_of(user.results[0].type)) != shape or dtype_of(user.results[0].type) != "float32":
                break
            others = [v for v in user.operands if v is not chain[-1].results[0]]
            if len(user.operands) == 2 and (
                len(others) != 1 or not isinstance(others[0].owner, ConstantOp) or not along_axis(others[0], shape, axis)
            ):
                break
            chain.append(user)
            used += CONCAT_EPILOGUE[name]
        users = [u.operation for u in chain[-1].results[0].uses]
        if not users or not all(isinstance(u, func.CallOp) and u.callee.root_reference.data in dnnl for u in users):
            return None
        return chain

    callers = [f for f in module.ops if isinstance(f, func.FuncOp) and not f.is_declaration
               and not any(k in f.attributes for k in ("relay.compiler", "relay.composite", "relay.primitive"))]  # fmt: skip
    names = {f.sym_name.data for f in module.ops if isinstance(f, func.FuncOp)}
    count = 0
    for caller in callers:
        for cat in [o for o in caller.walk() if getattr(o, "RELAY_NAME", "") == "concatenate"]:
            chain = chain_of(cat)
            if chain is None:
                continue
            _outline(module, caller, chain, list(cat.operands), "tvmgen_default_dnnl_concat", names, dnnl)
            count += 1
    return count


def inline_elementwise(module: ModuleOp) -> int:
    """Put every dnnl function that is one elementwise op back into its caller, unless it
    sits between oneDNN steps only (its operands oneDNN results or constants, its users
    oneDNN steps): there it has nothing native to fuse with and stays one oneDNN binary or
    eltwise primitive. An op on the result of a batched matmul (read there only) goes back
    in any case: ``fold_views`` then takes it as the matmul's post-op (attention's scale
    after 3-D scores, which no reshape separates from the matmul).

    Alone, such an op is one pass over memory in oneDNN too, but left in the caller it fuses
    with its neighbours (the BERT-style layer's adds and multiplies around its matmuls,
    MobileNetV2's residual adds) instead of costing a step of its own. Returns how many."""
    from xdsl.rewriter import InsertPoint, Rewriter


    candidates = {}
    for fn in dnnl_functions(module):
        ops = [o for o in fn.body.block.ops if not isinstance(o, func.ReturnOp)]
        work = [o for o in ops if not isinstance(o, ConstantOp)]
        if len(work) == 1 and isinstance(work[0], RelayOp) and work[0].RELAY_NAME in ELEMENTWISE:
            candidates[fn.sym_name.data] = fn
    if not candidates:
        return 0
    dnnl = {f.sym_name.data for f in dnnl_functions(module)}

    def on_dnnl(o: Any) -> bool:
        return isinstance(o, func.CallOp) and o.callee.root_reference.data in dnnl

    matmuls = {f.sym_name.data for f in dnnl_functions(module)
               if any(getattr(o, "RELAY_NAME", "") == "nn.batch_matmul" for o in f.body.block.ops)}  # fmt: skip

    def between_dnnl_steps(call: func.CallOp) -> bool:
        # nothing native to fuse with: every operand a oneDNN result or a constant, every
        # user a oneDNN step (squeeze-and-excitation's scale between two convolutions)
        users = [u.operation for r in call.results for u in r.uses]
        if any(on_dnnl(v.owner) and v.owner.callee.root_reference.data in matmuls and v.has_one_use()
               for v in call.arguments):  # fmt: skip
            return False  # a post-op of the matmul for fold_views
        return bool(users) and all(on_dnnl(u) for u in users) and all(
            on_dnnl(v.owner) or isinstance(v.owner, ConstantOp) for v in call.arguments
        )

    count = 0
    kept = set()
    for op in list(module.walk()):
        if not isinstance(op, func.CallOp) or op.callee.root_reference.data not in candidates:
            continue
        if between_dnnl_steps(op):
            kept.add(op.callee.root_reference.data)
            continue
        fn = candidates[op.callee.root_reference.data]
        mapping = dict(zip(fn.body.block.args, op.arguments))
        ret = None
        for inner in fn.body.block.ops:
            if isinstance(inner, func.ReturnOp):
                ret = inner
                continue
            new = inner.clone(value_mapper=mapping)
            Rewriter.insert_op(new, InsertPoint.before(op))
            for a, b in zip(inner.results, new.results):
                mapping[a] = b
        assert ret is not None
        for r, v in zip(op.results, ret.operands):
            r.replace_all_uses_with(mapping[v])
        Rewriter.erase_op(op)
        count += 1
    for name, fn in candidates.items():
        if name not in kept:
            Rewriter.erase_op(fn)
    return count


def _inline_call(call: func.CallOp, fn: func.FuncOp, funcs: dict[str, func.FuncOp]) -> None:
    """Replace ``call`` by a copy of ``fn``'s body, calls of composite functions inlined too."""
    from xdsl.rewriter import InsertPoint, Rewriter

    def copy(body_fn: func.FuncOp, args, before) -> list:
        mapping = dict(zip(body_fn.body.block.args, args))
        for inner in body_fn.body.block.ops:
            if isinstance(inner, func.ReturnOp):
                return [mapping.get(v, v) for v in inner.operands]
            callee = funcs.get(inner.callee.root_reference.data) if isinstance(inner, func.CallOp) else None
            if callee is not None and "relay.composite" in callee.attributes:
                results = copy(callee, [mapping.get(v, v) for v in inner.operands], before)
                for a, b in zip(inner.results, results):
                    mapping[a] = b
                continue
            new = inner.clone(value_mapper=mapping)
            Rewriter.insert_op(new, InsertPoint.before(before))
            for a, b in zip(inner.results, new.results):
                mapping[a] = b
        raise AssertionError("a function without a return")

    results = copy(fn, list(call.arguments), call)
    for r, v in zip(call.results, results):
        r.replace_all_uses_with(v)
    Rewriter.erase_op(call)


def float32_only(module: ModuleOp) -> bool:
    """Whether every convolution, dense and matmul computes in float32 (or in bfloat16, as
    ``to-mixed-precision`` makes them: oneDNN's bf16 kernels) and no qnn op is there (the
    backend's types; quantized models keep the int8 kernels and their rounding)."""

    for op in module.walk():
        if not isinstance(op, RelayOp):
            continue
        if op.RELAY_NAME.startswith("qnn."):
            return False  # quantize/dequantize around float ops: the int8 kernels' rounding
        if op.RELAY_NAME.startswith(("nn.conv", "nn.dense", "nn.matmul", "nn.batch_matmul")):
            if any(dtype_of(v.type) not in ("float32", "bfloat16") for v in (*op.operands, *op.results)):
                return False
    return True


def blocked_layouts(module: ModuleOp) -> bool:
    """Whether a convolution or pool already has a blocked layout (``NCHW16c``, after
    AlterOpLayout): such a module keeps its layout and its native blocked kernels."""

    for op in module.walk():
        if isinstance(op, RelayOp) and op.RELAY_NAME.startswith(("nn.conv", "nn.max_pool", "nn.avg_pool")):
            for key in ("data_layout", "layout", "kernel_layout"):
                layout = op.attrs.get(key) or ""
                if any(ch.isdigit() or ch.islower() for ch in layout):
                    return True
    return False


def _as_pass(p: Any) -> Any:

    return as_pass(p)


def dnnl_functions(module: ModuleOp) -> list[func.FuncOp]:
    """The module's ``relay.compiler = "dnnl"`` functions."""
    out = []
    for op in module.ops:
        if isinstance(op, func.FuncOp):
            c = op.attributes.get("relay.compiler")
            if isinstance(c, StringAttr) and c.data == "dnnl":
                out.append(op)
    return out


_MEASURED: dict[tuple, bool] = {}
"""Whether the way ``"pointwise"`` was faster, by the shape of the function's steps and the
thread count: measured once a process (``_choose_pointwise``)."""


def _choose_pointwise(fn: func.FuncOp, lookup: Callable, fixed: Sequence, threads: int, size: int, need: Callable) -> None:
    """Offer the way ``"pointwise"`` (its 1x1 convolutions on the packed dense kernel) for
    ``fn`` where it is faster (``pointwise_mode``: measured, both ways run over zeros with
    ``threads`` threads, once per shape a process), first in its ``relay.scratch_options``
    with oneDNN's way after it when that needs less scratch (``choose-scratch`` picks by the
    plan's peak)."""
    mode = pointwise_mode()
    if mode == "dnnl":
        return
    try:
        plan, packed_size = need(pointwise=True)
    except DnnlUnsupported:
        return
    if mode == "measure":
        key = (threads, tuple((s.name, s.impl, tuple(tuple(d) for d, _ in s.logical.values())) for s in plan.steps))
        faster = _MEASURED.get(key)
        if faster is None:
            direct = plan_function(fn, lookup=lookup, fixed=fixed, threads=threads)
            ours, theirs = measure_plans(fn, [plan, direct], fixed, threads)
            faster = _MEASURED[key] = ours < POINTWISE_MARGIN * theirs
        if not faster:
            return
    ways = [(way_label(pointwise=True), packed_size)]
    if size < packed_size:
        ways.append((way_label(), size))
    fn.attributes[SCRATCH_ATTR] = IntegerAttr(packed_size, i64)
    fn.attributes[SCRATCH_OPTIONS_ATTR] = ArrayAttr(
        [ArrayAttr([StringAttr(label), IntegerAttr(nbytes, i64)]) for label, nbytes in ways]
    )


def _need(fn: func.FuncOp, lookup: Callable, fixed: Sequence, threads: int, memo: dict, **way: Any) -> tuple[Any, int]:
    """The plan of ``fn`` run ``way`` for ``threads`` threads and its scratch need, which
    covers the one-thread program's parts too (``state_scratch``)."""
    plan = plan_function(fn, lookup=lookup, fixed=fixed, threads=threads, memo=memo, **way)
    size = plan.workspace_bytes
    if threads > 1 and not plan.winograd:
        one = plan_function(fn, lookup=lookup, fixed=fixed, threads=1, memo=memo, **way)
        size = max(size, one.parts_workspace(threads))
    return plan, size


def state_scratch(module: ModuleOp, threads: int | None = None) -> None:
    """Give every dnnl function oneDNN can run its scratch need (``relay.scratch_bytes``),
    for primitives made for ``threads`` threads or the executor's default, whichever is more
    (oneDNN's scratchpad grows with the thread count; a module loaded elsewhere runs with
    that machine's default).

    A function with a Winograd convolution can also run in bands of output rows or direct
    (``primitives.way_label``): its ``relay.scratch_options`` list every way, fastest first
    -- whole, then bands from the tallest (``band_rows_choices``; each band repeats the
    transforms' and the matmul's parallel regions), then direct (its convolutions 1.5-1.9x
    slower, by the ``benchmarks/runtime.py --winograd`` figures) -- and ``choose-scratch``
    picks one by the plan's peak. A function with a 1x1 convolution the packed dense kernel can
    run is offered the way ``"pointwise"`` where that measured faster (``_choose_pointwise``).

    With two or more threads, the need of a function without Winograd also covers the
    one-thread program's convolutions cut in parts (``FunctionPlan.parts_workspace``: a
    scratchpad per thread, ``runtime/dnnl/parts.py``); a function with ways keeps their
    needs as they are (the ways trade speed for memory; its parts run where they fit)."""

    most = max(threads or 1, default_threads())
    # one index of the functions for every plan (each would index the module again)
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    fixed: dict[str, list] = {}
    for op in module.walk():
        if isinstance(op, func.CallOp):
            fixed[op.callee.root_reference.data] = [
                v.owner.numpy() if isinstance(v.owner, ConstantOp) else None for v in op.arguments
            ]
    for fn in dnnl_functions(module):
        args = fixed.get(fn.sym_name.data, ())
        memo: dict = {}  # (the Winograd weights, computed once for every way)

        need = functools.partial(_need, fn, functions.get, args, most, memo)
        try:
            plan, size = need()
        except DnnlUnsupported:
            continue  # runs on the native kernels, which state their own need
        fn.attributes[SCRATCH_ATTR] = IntegerAttr(size, i64)
        if plan.pointwise_convs and not plan.winograd:
            _choose_pointwise(fn, functions.get, args, most, size, need)
        if not plan.winograd:
            continue
        ways = [(way_label(), plan.workspace_bytes)]
        others = [{"band_rows": rows} for rows in band_rows_choices(plan.tile_rows)] + [{"winograd": False}]
        for way in others:
            size = plan_function(fn, lookup=functions.get, fixed=args, threads=most, memo=memo, **way).workspace_bytes
            if size < ways[-1][1]:  # (a way with no less scratch than a faster one is no choice)
                ways.append((way_label(**way), size))
        fn.attributes[SCRATCH_OPTIONS_ATTR] = ArrayAttr(
            [ArrayAttr([StringAttr(label), IntegerAttr(size, i64)]) for label, size in ways]
        )
