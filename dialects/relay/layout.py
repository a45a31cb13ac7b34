"""Data layouts and the relay ops' layout rules (Relay's ``FInferCorrectLayout`` and
``FTVMConvertOpLayout``), registered by op name like Relay's op attributes.

A layout names the axes of a tensor: upper-case letters are primal axes, a lower-case letter
with a factor is a sub-axis of the primal axis of the same letter (``NCHW8c``: C split into
``C/8`` blocks of 8). ``None`` stands for Relay's undefined layout; ``Layout("")`` is the
layout of a scalar.

A layout rule answers, for one op: given the layouts its inputs had before the rewrite
(``old``) and, when some producer changed them, the layouts they have now (``new``), which
layouts the op wants for its inputs, which layouts its results have, and its attributes in
the new layouts::

    infer_layout("nn.relu", attrs, new=[Layout("NHWC")], old=[Layout("NCHW")], types)
    # -> LayoutInference(inputs=[NHWC], outputs=[NHWC], attrs=attrs)

Rules return ``None`` (or a ``None`` among the layouts) when they cannot infer, and the pass
then keeps the op in its old layout. ``convert-layout`` and ``alter-op-layout`` run them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects.builtin import TensorType

from xrelay.dialects.relay.dtypes import shape_of
from xrelay.dialects.relay.ops import parse_layout, reduce_axes
from xrelay.error import TVMError


class LayoutError(ValueError, TVMError):
    """A layout string that does not parse or an impossible layout operation."""


class Layout:
    """A parsed layout such as ``NCHW``, ``NHWC`` or ``NCHW16c`` (immutable, compares by name)."""

    __slots__ = ("axes", "name")

    def __init__(self, name: str):
        try:
            axes = parse_layout(name) if name else []  # "" is the layout of a scalar
        except ValueError:
            raise LayoutError(f"invalid layout '{name}'") from None
        if any(a.islower() and f <= 0 for a, f in axes):
            raise LayoutError(f"invalid layout '{name}': a block size must be positive")
        self.name = name
        self.axes = tuple(axes)

    def __repr__(self) -> str:
        return f"Layout({self.name!r})"

    def __str__(self) -> str:
        return self.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layout) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __len__(self) -> int:
        return len(self.axes)

    def __getitem__(self, i: int) -> str:
        """The axis letter at position ``i`` (``C`` or ``c``)."""
        return self.axes[i][0]

    @property
    def ndim(self) -> int:
        return len(self.axes)

    @property
    def ndim_primal(self) -> int:
        return sum(a.isupper() for a, _ in self.axes)

    def index_of(self, axis: str) -> int:
        """Position of exactly this axis (primal and sub-axis differ), -1 if absent."""
        for i, (a, _) in enumerate(self.axes):
            if a == axis:
                return i
        return -1

    def contains(self, axis: str) -> bool:
        return self.index_of(axis) >= 0

    def factor_of(self, axis: str) -> int:
        """The block size of ``axis``'s sub-axis (either case names it), -1 if not split."""
        for a, f in self.axes:
            if a == axis.lower():
                return f
        return -1

    def sublayout(self, pos: int, length: int) -> Layout:
        return Layout("".join(_axis_text(a, f) for a, f in self.axes[pos : pos + length]))

    def expand_primal(self, dst: Layout) -> Layout:
        """``C`` expanded to ``NHWC`` for ``dst = NCHW``: the missing primal axes first, in dst order."""
        missing = "".join(a for a, _ in dst.axes if a.isupper() and not self.contains(a))
        return Layout(missing + self.name)


def _axis_text(axis: str, factor: int) -> str:
    return f"{factor}{axis}" if axis.islower() else axis


def same(a: Layout | None, b: Layout | None) -> bool:
    """Relay's ``Layout::Equals``: undefined equals undefined."""
    return (a.name if a else None) == (b.name if b else None)


def isomorphic(lhs: Layout, rhs: Layout) -> bool:
    """The two layouts are the same up to renaming axes (factors must agree)."""
    if lhs.ndim != rhs.ndim:
        return False
    to: dict[str, str] = {}
    back: dict[str, str] = {}
    for (la, lf), (ra, rf) in zip(lhs.axes, rhs.axes, strict=True):
        if la.isupper() != ra.isupper():
            return False
        if to.setdefault(la, ra) != ra or back.setdefault(ra, la) != la:
            return False
        if la.islower() and lf != rf:
            return False
    return True


def try_transform_like(old: Layout, ref_old: Layout, ref_new: Layout) -> Layout | None:
    """Transform ``old`` the way ``ref_old`` became ``ref_new`` (Relay's TryTransformLike).

    ``old`` must match the trailing axes of ``ref_old`` (a broadcast operand): ``C`` against
    ``NCHW -> NCHW16c`` gives ``C16c``... renamed to ``old``'s letters. None when not possible.
    """
    large, small = (ref_old, old) if ref_old.ndim > old.ndim else (old, ref_old)
    large_sub = large.sublayout(large.ndim - small.ndim, small.ndim)
    rest = large.sublayout(0, large.ndim - small.ndim)
    for a, _ in rest.axes:
        if large_sub.contains(a.upper()) or large_sub.contains(a.lower()):
            return None
    if not isomorphic(large_sub, small):
        return None
    if old.ndim == 0:
        return old
    mapping: dict[str, str] = {}
    used: set[str] = set()
    j, i = old.ndim - 1, ref_old.ndim - 1
    while j >= 0:
        name_ref, name = ref_old[i].upper(), old[j].upper()
        mapping[name_ref] = name
        used.add(name)
        i, j = i - 1, j - 1
    for i in range(ref_old.ndim - 1, -1, -1):
        name_ref = ref_old[i].upper()
        if name_ref not in mapping:
            pick = name_ref if name_ref not in used else next(
                c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used
            )
            mapping[name_ref] = pick
            used.add(pick)
    out = []
    for a, f in ref_new.axes:
        m = mapping[a.upper()]
        out.append(_axis_text(m.lower(), f) if a.islower() else m)
    return Layout("".join(out))


def adjust_subordinate_factors(src: Layout, old: Layout, old_shape: Sequence[int | None]) -> Layout:
    """Block factors of ``src`` become 1 where the operand's axis has size 1 (it broadcasts)."""
    out = []
    for a, f in src.axes:
        if a.islower():
            k = old.index_of(a.upper())
            one = k < 0 or (old_shape[k] == 1 and old.index_of(a) < 0)
            out.append(f"1{a}" if one else f"{f}{a}")
        else:
            out.append(a)
    return Layout("".join(out))


# --------------------------------------------------------------------------------------------
# The registry
# --------------------------------------------------------------------------------------------


@dataclass
class LayoutInference:
    """What a layout rule decided: input layouts, result layouts, attributes in the new layouts."""

    inputs: list[Layout | None]
    outputs: list[Layout | None]
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return all(lay is not None for lay in (*self.inputs, *self.outputs))


InferLayout = Callable[
    [dict[str, Any], list[Layout] | None, list[Layout | None], list[TensorType]],
    LayoutInference | None,
]
"""``(attrs, new_in_layouts or None, old_in_layouts, old_in_types) -> LayoutInference``."""

ConvertLayout = Callable[[dict[str, Any], list[TensorType], list[str]], tuple[str | None, dict[str, Any]]]
"""``(attrs, in_types, desired_layouts) -> (op name or None for the same op, attrs)``."""

INFER_LAYOUT: dict[str, InferLayout] = {}
"""Relay's FInferCorrectLayout by op name."""

CONVERT_LAYOUT: dict[str, ConvertLayout] = {}
"""Relay's FTVMConvertOpLayout by op name (the ops ``desired_layouts`` may name)."""


def register_infer_layout(*names: str) -> Callable[[InferLayout], InferLayout]:
    def wrap(fn: InferLayout) -> InferLayout:
        for n in names:
            INFER_LAYOUT[n] = fn
        return fn

    return wrap


def register_convert_layout(*names: str) -> Callable[[ConvertLayout], ConvertLayout]:
    def wrap(fn: ConvertLayout) -> ConvertLayout:
        for n in names:
            CONVERT_LAYOUT[n] = fn
        return fn

    return wrap


def infer_layout(
    name: str,
    attrs: dict[str, Any],
    new: list[Layout | None] | None,
    old: list[Layout | None],
    types: list[TensorType],
) -> LayoutInference | None:
    """Run ``name``'s rule; None when the op has none or the rule cannot infer every layout."""
    rule = INFER_LAYOUT.get(name)
    if rule is None:
        return None
    try:
        out = rule(dict(attrs), new, old, types)
    except LayoutError:
        return None
    if out is None or not out.complete:
        return None
    return out


def _shapes(types: Sequence[TensorType]) -> list[tuple]:
    return [shape_of(t) for t in types]


def _norm(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


# --------------------------------------------------------------------------------------------
# Rules (Relay's registrations: op_common.h, infer_layout_utils, nn.cc, convolution.h,
# pooling_common.h, transform.cc, reduce.cc, pad.cc)
# --------------------------------------------------------------------------------------------

ELEMWISE_OPS = (
    "nn.relu", "nn.leaky_relu", "tanh", "sigmoid", "exp", "log", "sqrt", "rsqrt", "abs",
    "negative", "erf", "floor", "ceil", "round", "clip", "cast", "copy", "zeros_like",
    "ones_like", "on_device", "device_copy", "annotation.stop_fusion",
)  # fmt: skip
BROADCAST_OPS = (
    "add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "equal",
    "not_equal", "less", "less_equal", "greater", "greater_equal",
)  # fmt: skip


@register_infer_layout(*ELEMWISE_OPS)
def elemwise_arbitrary_layout(attrs, new, old, types):
    """Every input and the result in the first known layout (ElemwiseArbitraryLayout)."""
    if new is not None:
        ret = new[0]
    else:
        ret = next((lay for lay in old if lay is not None), None)
    return LayoutInference([ret] * len(old), [ret], attrs)


@register_infer_layout("nn.dropout")
def _dropout_layout(attrs, new, old, types):
    # ElemwiseArbitraryLayout; the mask (xrelay's second result) has the data's layout too.
    out = elemwise_arbitrary_layout(attrs, new, old, types)
    return LayoutInference(out.inputs, out.outputs * 2, attrs)


@register_infer_layout(*BROADCAST_OPS)
def binary_broadcast_layout(attrs, new, old, types):
    """Relay's BinaryBroadcastLayout: the smaller operand follows the larger one's change.

    A per-channel operand ``C`` of an ``NCHW`` tensor becomes ``C`` of ``NHWC`` (the same
    axis letters), and for ``NCHW16c`` it is expanded and blocked to ``NCHW16c`` too (or
    ``NCHW1c`` where it broadcasts along C).
    """
    shapes = _shapes(types)
    old_large = 0 if len(shapes[0]) >= len(shapes[1]) else 1
    layouts = list(old)
    fail = LayoutInference([None, None], [None], attrs)
    if layouts[0] is None and layouts[1] is None:
        return fail
    if layouts[0] is None or layouts[1] is None:
        d = 0 if layouts[0] is not None else 1
        u = 1 - d
        if len(shapes[d]) < len(shapes[u]):
            return fail
        layouts[u] = layouts[d].sublayout(len(shapes[d]) - len(shapes[u]), len(shapes[u]))
        out = LayoutInference(list(layouts), [layouts[d]], attrs)
    else:
        out = LayoutInference(list(layouts), [layouts[old_large]], attrs)
    if new is None:
        return out
    ret = new[old_large]
    large = 0 if new[0].ndim_primal >= new[1].ndim_primal else 1
    small = 1 - large
    target = try_transform_like(layouts[small], layouts[large], new[large])
    if target is None:
        return fail
    layouts[small] = adjust_subordinate_factors(target, layouts[small], shapes[small])
    layouts[large] = new[large]
    return LayoutInference(layouts, [ret], attrs)


@register_infer_layout("nn.conv2d", "nn.conv2d_transpose", "nn.conv3d")
def conv_layout(attrs, new, old, types):
    """Convolutions decide their own layouts: the others follow them (ConvInferCorrectLayout)."""
    out = attrs["out_layout"] or attrs["data_layout"]
    return LayoutInference(
        [Layout(attrs["data_layout"]), Layout(attrs["kernel_layout"])], [Layout(out)], attrs
    )


@register_infer_layout("nn.deformable_conv2d")
def deformable_conv_layout(attrs, new, old, types):
    """Its own layouts: the offset in the data's (DeformableConvInferCorrectLayout)."""
    data = Layout(attrs["data_layout"])
    return LayoutInference(
        [data, data, Layout(attrs["kernel_layout"])], [Layout(attrs["out_layout"] or attrs["data_layout"])], attrs
    )


@register_infer_layout(
    "nn.max_pool2d", "nn.avg_pool2d", "nn.global_max_pool2d", "nn.global_avg_pool2d",
    "nn.adaptive_avg_pool2d", "nn.adaptive_max_pool2d",
    "nn.max_pool3d", "nn.avg_pool3d", "nn.adaptive_avg_pool3d", "nn.adaptive_max_pool3d",
)  # fmt: skip
def pool_layout(attrs, new, old, types):
    """Pools take the layout they are given unless ``out_layout`` pins one (PoolInferCorrectLayout,
    which Relay registers for the 2-D and 3-D pools alike)."""
    if attrs.get("out_layout"):
        if attrs["out_layout"] != attrs["layout"]:
            raise LayoutError("pool input and output layouts differ")
    elif new is not None:
        lay = new[0]
        if lay.contains("d") or lay.contains("h") or lay.contains("w"):
            return None  # D, H and W cannot be split for pools
        attrs["layout"] = lay.name
    return LayoutInference([Layout(attrs["layout"])], [Layout(attrs["layout"])], attrs)


def _axis_rule(n_params: int, n_param_outputs: int):
    """batch_norm / layer_norm: the data layout moves ``axis``; the parameters stay ``C``."""

    def rule(attrs, new, old, types):
        rank = len(shape_of(types[0]))
        ret = None
        if new is not None and old[0] is not None:
            axis = _norm(attrs["axis"], rank)
            attrs["axis"] = new[0].index_of(old[0][axis])
            ret = new[0]
        else:
            ret = old[0]
        c = Layout("C")
        return LayoutInference([ret] + [c] * n_params, [ret] + [c] * n_param_outputs, attrs)

    return rule


register_infer_layout("nn.batch_norm")(_axis_rule(4, 2))
register_infer_layout("nn.layer_norm", "nn.instance_norm")(_axis_rule(2, 0))


@register_infer_layout("nn.l2_normalize")
def l2_normalize_layout(attrs, new, old, types):
    """The normalised axes follow their dimensions (L2NormalizeInferCorrectLayout)."""
    if new is not None and old[0] is not None:
        rank = len(shape_of(types[0]))
        attrs["axis"] = tuple(new[0].index_of(old[0][_norm(a, rank)]) for a in attrs["axis"] or ())
        return LayoutInference([new[0]], [new[0]], attrs)
    return LayoutInference([old[0]], [old[0]], attrs)


@register_infer_layout("topk")
def topk_layout(attrs, new, old, types):
    """``axis`` follows its dimension; values and indices in the input's layout
    (TopKInferCorrectLayout)."""
    ret = old[0]
    if new is not None and old[0] is not None:
        attrs["axis"] = new[0].index_of(old[0][_norm(attrs["axis"], len(shape_of(types[0])))])
        ret = new[0]
    return LayoutInference([ret], [ret] * (2 if attrs["ret_type"] == "both" else 1), attrs)


@register_infer_layout("image.resize1d", "image.resize2d")
def resize_layout(attrs, new, old, types):
    """Follows a new input layout of the same rank when the op used its input's old layout
    (ResizeInferCorrectLayout)."""
    if new is not None and old[0] is not None:
        if new[0] != old[0] and attrs["layout"] == old[0].name and new[0].ndim == old[0].ndim:
            attrs["layout"] = new[0].name
    lay = Layout(attrs["layout"])
    return LayoutInference([lay], [lay], attrs)


@register_infer_layout("vision.roi_align", "vision.roi_pool")
def roi_layout(attrs, new, old, types):
    """The data in the op's own ``layout``, the ``(num_roi, 5)`` regions as they are
    (ROIAlignInferCorrectLayout / ROIPoolInferCorrectLayout; Relay names the regions' layout
    ``N5``, two axes here too)."""
    lay = Layout(attrs["layout"])
    return LayoutInference([lay, Layout("NC")], [lay], attrs)


@register_infer_layout("slice_like")
def slice_like_layout(attrs, new, old, types):
    """Both inputs in one new layout move ``axes`` there; otherwise the old layouts
    (SliceLikeInferCorrectLayout)."""
    if new is not None and None not in new and None not in old and attrs["axes"] is not None:
        if new[0] == new[1] and old[0] == old[1]:
            axes = [new[0].index_of(old[0][a]) for a in attrs["axes"]]
            if -1 not in axes:
                attrs["axes"] = tuple(axes)
                return LayoutInference([new[0], new[0]], [new[0]], attrs)
    return LayoutInference([old[0], old[1]], [old[1]], attrs)


@register_infer_layout("nn.upsampling", "dyn.nn.upsampling")
def upsampling_layout(attrs, new, old, types):
    """Follows a new input layout that keeps H and W where they were, unsplit
    (UpsamplingInferCorrectLayout; dyn.nn.upsampling's scales are scalars)."""
    if new is not None:
        raw, lay = Layout(attrs["layout"]), new[0]
        if (
            all(lay.index_of(a) == raw.index_of(a) for a in "HW")
            and not lay.contains("h")
            and not lay.contains("w")
        ):
            attrs["layout"] = lay.name
    lay = Layout(attrs["layout"])
    return LayoutInference([lay] + [Layout("")] * (len(old) - 1), [lay], attrs)


@register_infer_layout("nn.prelu")
def prelu_layout(attrs, new, old, types):
    """Relay keeps prelu's data layout as it was (PReluInferCorrectLayout)."""
    return LayoutInference([old[0], Layout("C")], [old[0]], attrs)


@register_infer_layout("nn.dense", "nn.matmul")
def dense_layout(attrs, new, old, types):
    return LayoutInference([Layout("NC"), Layout("NC")], [Layout("NC")], attrs)


@register_infer_layout("concatenate")
def concatenate_layout(attrs, new, old, types):
    """All inputs in one new layout moves the axis there; otherwise the first known layout."""
    rank = len(shape_of(types[0]))
    axis = _norm(attrs["axis"], rank)
    n = len(old)
    if new is not None and old[0] is not None and all(lay == new[0] for lay in new):
        attrs["axis"] = new[0].index_of(old[0][axis])
        return LayoutInference([new[0]] * n, [new[0]], attrs)
    ret = next((lay for lay in old if lay is not None), None)
    if ret is None or ret.ndim <= axis or not ret[axis].isupper():
        return None
    return LayoutInference([ret] * n, [ret], attrs)


@register_infer_layout("split")
def split_layout(attrs, new, old, types):
    """The split axis follows the layout; indices are divided by a block factor when they can be."""
    rank = len(shape_of(types[0]))
    axis = _norm(attrs["axis"], rank)
    ios = attrs["indices_or_sections"]
    size = ios if isinstance(ios, int) else len(ios) + 1
    ret = old[0]
    if new is not None and old[0] is not None:
        dim = old[0][axis]
        factor = new[0].factor_of(dim)
        divisible = True
        if factor > 1 and not isinstance(ios, int):
            divisible = all(v % factor == 0 for v in ios)
            if divisible:
                attrs["indices_or_sections"] = tuple(v // factor for v in ios)
        if divisible:
            attrs["axis"] = new[0].index_of(dim)
            ret = new[0]
    return LayoutInference([ret], [ret] * size, attrs)


def _reduce_rule(attrs, new, old, types):
    """Reduce axes follow the layout; a reduced blocked axis reduces its block too."""
    rank = len(shape_of(types[0]))
    r_axes = reduce_axes(rank, attrs["axis"], attrs["exclude"])
    exclude, keep = attrs["exclude"], attrs["keepdims"]

    def infer(layout: Layout):
        old_dims = {old[0][a] for a in r_axes}
        new_axes: list[int] = []
        in_s, out_s = [], []

        def push(dim: str, index: int) -> bool:
            if (dim in old_dims) != exclude:
                new_axes.append(index)
                return True
            return False

        for i, (a, f) in enumerate(layout.axes):
            if a.isupper():
                push(a, i)
                in_s.append(a)
                if a not in old_dims or keep:
                    out_s.append(a)
            else:
                packed = f"{f}{a}"
                in_s.append(packed)
                if push(a.upper(), i):
                    if exclude:
                        out_s.append(packed)
                    elif keep:
                        out_s.append(f"1{a}")
                else:
                    out_s.append(packed)
        # Relay's Layout("") is undefined: a reduction to a scalar keeps its old layout
        return Layout("".join(in_s)), Layout("".join(out_s)) if out_s else None, new_axes

    inferred_in = inferred_out = None
    if new is not None and r_axes and old[0] is not None:
        inferred_in, inferred_out, axes = infer(new[0])
        attrs["axis"] = tuple(axes)
    elif old[0] is not None:
        inferred_in, inferred_out, _ = infer(old[0])
    return LayoutInference([inferred_in], [inferred_out], attrs)


register_infer_layout("sum", "mean", "max", "min", "prod", "argmax", "argmin")(_reduce_rule)


@register_infer_layout("variance")
def variance_layout(attrs, new, old, types):
    """The reduction's rule; the mean operand in the data's layout (ReduceInferCorrectLayout)."""
    out = _reduce_rule(attrs, new, old, types)
    return LayoutInference(out.inputs * 2, out.outputs, out.attrs)


@register_infer_layout("nn.pad")
def pad_layout(attrs, new, old, types):
    """Padding widths move with their axes; a padded axis must not be split into blocks."""
    ret = None
    modified = new is not None and old[0] is not None
    if modified:
        width = {a: w for (a, _), w in zip(old[0].axes, attrs["pad_width"], strict=True)}
        new_width = []
        for a, _ in new[0].axes:
            if a.isupper() and a in width:
                new_width.append(width[a])
            else:
                w = width.get(a.upper())
                if w is None:
                    return None
                new_width.append(w)
                if any(w):
                    modified = False
        if modified:
            ret = new[0]
            attrs["pad_width"] = tuple(tuple(w) for w in new_width)
    if not modified:
        ret = old[0]
    return LayoutInference([ret, Layout("")], [ret], attrs)


@register_infer_layout("transpose")
def transpose_layout(attrs, new, old, types):
    """A transpose of the new layout that gives the same result axes (TransposeInferCorrectLayout)."""
    if old[0] is None:
        return None
    old_layout = old[0]
    axes = list(attrs["axes"] or range(old_layout.ndim - 1, -1, -1))
    axes = [_norm(a, old_layout.ndim) for a in axes]
    in_s = ""
    if new is not None and new[0] is not None:
        nl = new[0]
        new_axes = [nl.index_of(old_layout[a]) for a in axes]
        if -1 not in new_axes and len(new_axes) == nl.ndim:
            attrs["axes"] = tuple(new_axes)
            in_s = nl.name
    if not in_s:
        attrs["axes"] = tuple(axes)
        in_s = old_layout.name
    in_l = Layout(in_s)
    try:
        out = Layout("".join(_axis_text(*in_l.axes[a]) for a in attrs["axes"]))
    except (LayoutError, IndexError):
        return None
    return LayoutInference([in_l], [out], attrs)


@register_infer_layout("squeeze")
def squeeze_layout(attrs, new, old, types):
    inferred = new[0] if new is not None else old[0]
    if inferred is None:
        return None
    shape = shape_of(types[0])
    axis = list(attrs["axis"]) if attrs["axis"] is not None else [i for i, d in enumerate(shape) if d == 1]
    if new is not None and old[0] is not None:
        axis = [new[0].index_of(old[0][e]) for e in axis]
        attrs["axis"] = tuple(axis)
    drop = {_norm(a, inferred.ndim) for a in axis}
    kept = "".join(_axis_text(a, f) for i, (a, f) in enumerate(inferred.axes) if i not in drop)
    return LayoutInference([inferred], [Layout(kept)], attrs)


@register_infer_layout("strided_slice")
def strided_slice_layout(attrs, new, old, types):
    """Slices move with their axes; a sliced blocked axis needs bounds on block edges."""
    layout = old[0]
    if layout is None or new is None:
        return LayoutInference([layout], [layout], attrs)
    nl = new[0]
    shape = shape_of(types[0])
    begin, end = list(attrs["begin"]), list(attrs["end"])
    strides = list(attrs["strides"] or [1])
    size_mode = attrs["slice_mode"] == "size"
    if size_mode:
        strides = [1] * len(strides)
    axes = attrs["axes"]
    on, nn_ = layout.name, nl.name
    if not on.startswith(nn_) and not nn_.startswith(on):
        if len(on) != len(nn_):
            return None
        if axes is not None:
            attrs["axes"] = tuple(nl.index_of(layout[a]) for a in axes)
            return LayoutInference([nl], [nl], attrs)
        nb, ne, ns = [], [], []
        for i in range(len(nn_)):
            k = layout.index_of(nl[i])
            if k < 0:
                return None
            ns.append(strides[k] if k < len(strides) else 1)
            nb.append(begin[k] if k < len(begin) else 0)
            if k < len(end):
                ne.append(end[k])
            elif shape[k] is None:
                return None
            else:
                ne.append(shape[k])
        attrs.update(begin=tuple(nb), end=tuple(ne), strides=tuple(ns))
        return LayoutInference([nl], [nl], attrs)
    if len(on) < len(nn_):
        nb, ne = [], []
        if axes is not None:
            new_axes = []
            for i, a in enumerate(axes):
                axis = layout[a]
                new_axes.append(nl.index_of(axis))
                factor = nl.factor_of(axis)
                if factor == -1:
                    nb.append(begin[i])
                    ne.append(end[i])
                    continue
                if i < len(strides) and strides[i] != 1:
                    return None
                if begin[i] % factor or end[i] % factor:
                    return None
                nb.append(begin[i] // factor)
                ne.append(end[i] // factor)
            attrs["axes"] = tuple(new_axes)
        else:
            for i in range(len(begin)):
                axis = layout[i]
                factor = nl.factor_of(axis)
                if factor == -1:
                    nb.append(begin[i])
                    ne.append(end[i])
                    continue
                if i < len(strides) and strides[i] != 1:
                    return None
                bg = begin[i]
                if i >= len(end):
                    ed = shape[i]
                elif size_mode:
                    ed = shape[i] if end[i] < 0 else bg + end[i]
                else:
                    ed = end[i]
                if ed is None or bg % factor or ed % factor:
                    return None
                nb.append(bg // factor)
                ne.append(ed // factor)
        attrs.update(begin=tuple(nb), end=tuple(ne))
        return LayoutInference([nl], [nl], attrs)
    return LayoutInference([layout], [layout], attrs)


# --------------------------------------------------------------------------------------------
# Conversions for convert-layout (python/tvm/relay/op/nn/_nn.py)
# --------------------------------------------------------------------------------------------


def is_depthwise(data: TensorType, data_layout: str, weight: TensorType, kernel_layout: str, groups: int) -> bool:
    """Relay's is_depthwise_conv2d: groups = input channels = output channels."""
    ds, ws = shape_of(data), shape_of(weight)
    return ds[data_layout.index("C")] == groups == ws[kernel_layout.index("O")]


_NCHWC = re.compile(r"NCHW(\d+)c$")


@register_convert_layout("nn.conv2d")
def convert_conv2d(attrs, types, desired):
    """``[data, kernel]`` layouts; ``"default"`` kernel picks Relay's partner (NHWC -> HWIO/HWOI).

    ``convert-layout`` has checked that there are two layouts and the data's is not default.
    """
    data_l, kernel_l = desired
    old_data, old_kernel = attrs["data_layout"], attrs["kernel_layout"]
    attrs = dict(attrs, data_layout=data_l)
    tile = _NCHWC.match(data_l)
    if kernel_l != "default" and not tile:
        attrs["kernel_layout"] = kernel_l
    elif data_l == "NCHW":
        attrs["kernel_layout"] = "OIHW"
    elif data_l == "NHWC":
        dw = is_depthwise(types[0], old_data, types[1], old_kernel, attrs["groups"])
        attrs["kernel_layout"] = "HWOI" if dw else "HWIO"
    elif data_l == "HWNC":
        attrs["kernel_layout"] = "HWOI"
    elif tile:
        if kernel_l == "default":
            raise ValueError("nn.conv2d: kernel layout cannot be 'default' for a blocked layout")
        attrs["kernel_layout"] = kernel_l
    else:
        raise ValueError(f"nn.conv2d: layout {data_l} is not supported")
    return "nn.conv2d", attrs


def _with_partner_kernel(name: str, attrs: dict[str, Any], desired: list[str], partners: dict[str, str]) -> dict[str, Any]:
    """``[data, kernel]`` layouts; a ``"default"`` kernel is the data layout's partner."""
    data_l, kernel_l = desired
    attrs = dict(attrs, data_layout=data_l)
    if kernel_l != "default":
        attrs["kernel_layout"] = kernel_l
    elif data_l in partners:
        attrs["kernel_layout"] = partners[data_l]
    else:
        raise ValueError(f"{name}: layout {data_l} is not supported")
    return attrs


@register_convert_layout("nn.conv3d")
def convert_conv3d(attrs, types, desired):
    """``[data, kernel]`` layouts; ``"default"`` kernel picks Relay's partner (NCDHW -> OIDHW,
    NDHWC -> DHWIO), as Relay's convert_conv3d."""
    return None, _with_partner_kernel("nn.conv3d", attrs, desired, {"NCDHW": "OIDHW", "NDHWC": "DHWIO"})


@register_convert_layout("nn.conv2d_transpose")
def convert_conv2d_transpose(attrs, types, desired):
    """Like conv2d; the default kernel partners are IOHW (NCHW) and HWIO (NHWC)."""
    return "nn.conv2d_transpose", _with_partner_kernel("nn.conv2d_transpose", attrs, desired, {"NCHW": "IOHW", "NHWC": "HWIO"})


@register_convert_layout("image.resize1d", "image.resize2d")
def convert_resize2d(attrs, types, desired):
    """The resize's ``layout`` becomes the desired one."""
    return None, dict(attrs, layout=desired[0])


@register_convert_layout("nn.deformable_conv2d")
def convert_deformable_conv2d(attrs, types, desired):
    """``[data, kernel]`` layouts; a ``"default"`` kernel is OIHW for NCHW and HWIO for NHWC
    (Relay's convert_deformable_conv2d)."""
    return None, _with_partner_kernel("nn.deformable_conv2d", attrs, desired, {"NCHW": "OIHW", "NHWC": "HWIO"})


@register_convert_layout("vision.roi_align", "vision.roi_pool")
def convert_roi(attrs, types, desired):
    """The data's ``layout`` becomes the desired one (NCHW or NHWC; the regions' must be
    ``default``), as Relay's convert_roi_align / convert_roi_pool."""
    if len(desired) != 2 or desired[1] != "default":
        raise ValueError("vision.roi_align/roi_pool: desired layouts are [data layout, 'default']")
    if desired[0] not in ("NCHW", "NHWC"):
        raise ValueError(f"vision.roi_align/roi_pool: layout {desired[0]} is not supported")
    return None, dict(attrs, layout=desired[0])


@register_convert_layout("nn.max_pool2d", "nn.avg_pool2d", "nn.global_max_pool2d", "nn.global_avg_pool2d")
def convert_pool(attrs, types, desired):
    """The pool's ``layout`` and ``out_layout`` both become the desired one."""
    return None, dict(attrs, layout=desired[0], out_layout=desired[0])
