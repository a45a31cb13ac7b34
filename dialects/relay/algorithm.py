"""Relay's scans, scatters and index algorithms: ``cumsum``, ``cumprod``, ``scatter_elements``,
``scatter_nd``, ``einsum``, ``reinterpret``, ``reverse_sequence``, ``image.grid_sample``, ``dft``,
``topk``, ``one_hot``, ``vision.roi_align``, ``vision.roi_pool``, ``argwhere``, ``unique`` and
``vision.all_class_non_max_suppression``.

Attributes and defaults are Relay's (``ScanopAttrs``, ``ScatterElementsAttrs``,
``ScatterNDAttrs``, ``EinsumAttrs``, ``ReinterpretAttrs`` = ``CastAttrs``,
``ReverseSequenceAttrs``, ``GridSampleAttrs``, ``DFTAttrs``, ``TopKAttrs``, ``OneHotAttrs``, ``ROIAlignAttrs``).
"""

from __future__ import annotations

import re

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import operand_def, result_def, traits_def, var_operand_def, var_result_def
from xdsl.traits import Pure

from xrelay.dialects.relay import ops as _ops  # noqa: F401 - relay's own ops register first
from xrelay.dialects.relay.base import (
    Bool,
    Float,
    Int,
    Ints,
    OpPattern,
    RelayOp,
    Str,
    fail,
    new_tensor,
    norm_axis,
    relay_op,
)
from xrelay.dialects.relay.dtypes import DTYPES, dtype_bits, dtype_of, shape_of

_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _int_indices(cls, t: TensorType, what: str = "indices") -> None:
    if dtype_of(t.element_type) not in _INTS:
        raise fail(cls, f"{what} must be integers, got {t}")


class _ScanOp(RelayOp):
    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    axis = Int(None)
    dtype = Str(None)
    exclusive = Bool(False)

    @classmethod
    def infer_types(cls, in_types, attrs):
        ds = shape_of(in_types[0])
        dtype = attrs["dtype"] or dtype_of(in_types[0].element_type)
        if dtype not in DTYPES:
            raise fail(cls, f"unknown dtype '{dtype}'")
        if attrs["axis"] is None:  # over the flattened tensor
            n = None if any(d is None for d in ds) else _prod(ds)
            return [new_tensor([n], dtype)]
        norm_axis(cls, attrs["axis"], len(ds))
        return [new_tensor(ds, dtype)]


def _prod(ds) -> int:
    out = 1
    for d in ds:
        out *= d
    return out


@relay_op("cumsum", OpPattern.OPAQUE)
class CumsumOp(_ScanOp):
    """Running sum along ``axis`` (the flattened tensor when absent); ``exclusive`` starts at 0.

    ```mlir
    %y = relay.cumsum %x {axis = 1, exclusive = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    ```
    """


@relay_op("cumprod", OpPattern.OPAQUE)
class CumprodOp(_ScanOp):
    """Running product along ``axis`` (the flattened tensor when absent); ``exclusive`` starts at 1.

    ```mlir
    %y = relay.cumprod %x {axis = 0} : (tensor<4xi32>) -> tensor<4xi32>
    ```
    """


_SCATTER_REDUCTIONS = ("update", "add", "mul", "mean", "min", "max")


@relay_op("scatter_elements", OpPattern.OPAQUE)
class ScatterElementsOp(RelayOp):
    """``data`` with ``updates`` written at ``indices`` along ``axis`` (``indices`` and
    ``updates`` have one shape, of ``data``'s rank); ``reduction`` combines a written value
    with the one present: update, add, mul, mean, min or max.

    ```mlir
    %y = relay.scatter_elements %d, %i, %u {axis = 1, reduction = "add"} : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32>
    ```
    """

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    axis = Int(0)
    reduction = Str("update")

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, indices, updates = in_types
        _int_indices(cls, indices)
        ds, ids, us = shape_of(data), shape_of(indices), shape_of(updates)
        if attrs["reduction"] not in _SCATTER_REDUCTIONS:
            raise fail(cls, f"reduction must be one of {', '.join(_SCATTER_REDUCTIONS)}, got '{attrs['reduction']}'")
        if len(ids) != len(ds) or len(us) != len(ds):
            raise fail(cls, f"data {data}, indices {indices} and updates {updates} must have one rank")
        if any(a is not None and b is not None and a != b for a, b in zip(ids, us)):
            raise fail(cls, f"indices {indices} and updates {updates} must have one shape")
        axis = norm_axis(cls, attrs["axis"], len(ds))
        for k, (d, i) in enumerate(zip(ds, ids)):
            if k != axis and d is not None and i is not None and i > d:
                raise fail(cls, f"indices {indices} exceed data {data} along axis {k}")
        if updates.element_type != data.element_type:
            raise fail(cls, f"updates {updates} and data {data} have different element types")
        return [new_tensor(ds, dtype_of(data.element_type))]


_SCATTER_ND_MODES = ("update", "add", "mul", "min", "max")


@relay_op("scatter_nd", OpPattern.OPAQUE)
class ScatterNDOp(RelayOp):
    """``data`` with ``updates`` written at the index tuples of ``indices`` (tuples along
    ``indices``' *first* axis, as ``gather_nd``): ``indices`` ``(M, Y...)``, ``updates``
    ``(Y..., data.shape[M:]...)``; ``mode`` update, add, mul, min or max.

    ```mlir
    %y = relay.scatter_nd %d, %i, %u {mode = "add"} : (tensor<4x4xf32>, tensor<1x2xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>
    ```
    """

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    mode = Str("update")

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, indices, updates = in_types
        _int_indices(cls, indices)
        ds, ids, us = shape_of(data), shape_of(indices), shape_of(updates)
        if attrs["mode"] not in _SCATTER_ND_MODES:
            raise fail(cls, f"mode must be one of {', '.join(_SCATTER_ND_MODES)}, got '{attrs['mode']}'")
        if not ids:
            raise fail(cls, f"indices {indices} must have rank >= 1")
        m = ids[0]
        if m is None:
            raise fail(cls, f"the index depth (first axis of {indices}) must be static")
        if m > len(ds):
            raise fail(cls, f"index depth {m} exceeds the rank of {data}")
        want = list(ids[1:]) + list(ds[m:])
        if len(us) != len(want) or any(a is not None and b is not None and a != b for a, b in zip(us, want)):
            shape = "x".join("?" if d is None else str(d) for d in want)
            raise fail(cls, f"updates {updates} must have shape [{shape}] for indices {indices} into {data}")
        if updates.element_type != data.element_type:
            raise fail(cls, f"updates {updates} and data {data} have different element types")
        return [new_tensor(ds, dtype_of(data.element_type))]


_EINSUM_TERM = re.compile(r"^[A-Za-z]*(\.\.\.)?[A-Za-z]*$")


def parse_einsum(cls, equation: str, shapes) -> tuple[list[str], str, dict[str, int | None], list]:
    """The input terms, the output term (``...`` as ``*``), each letter's size and the
    broadcast shape of the ellipsis; an explicit ``->`` output or numpy's implicit one."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise fail(cls, f"equation '{equation}' has {len(terms)} input term(s) for {len(shapes)} operand(s)")
    sizes: dict[str, int | None] = {}
    ell: list = []
    out_terms = [*terms, rhs] if arrow else terms
    for t in out_terms:
        if not _EINSUM_TERM.match(t):
            raise fail(cls, f"equation '{equation}': bad term '{t}'")
    for t, s in zip(terms, shapes):
        letters = t.replace("...", "")
        if "..." in t:
            n_ell = len(s) - len(letters)
            if n_ell < 0:
                raise fail(cls, f"equation '{equation}': term '{t}' has more letters than rank {len(s)}")
            pos = t.index("...")
            e = list(s[pos : pos + n_ell])
            dims = list(s[:pos]) + list(s[pos + n_ell :])
            ell = _broadcast(cls, equation, ell, e)
        else:
            if len(letters) != len(s):
                raise fail(cls, f"equation '{equation}': term '{t}' has {len(letters)} letters for rank {len(s)}")
            dims = list(s)
        for c, d in zip(letters, dims):
            prev = sizes.get(c)
            if prev is not None and d is not None and prev != d:
                raise fail(cls, f"equation '{equation}': '{c}' is {prev} and {d}")
            if prev is None:
                sizes[c] = d
    if arrow:
        out = rhs
        for c in out.replace("...", ""):
            if c not in sizes:
                raise fail(cls, f"equation '{equation}': output letter '{c}' is in no input")
            if out.replace("...", "").count(c) > 1:
                raise fail(cls, f"equation '{equation}': output letter '{c}' repeats")
    else:  # numpy's implicit output: the ellipsis, then the letters seen once, sorted
        seen = "".join(t.replace("...", "") for t in terms)
        out = ("..." if any("..." in t for t in terms) else "") + "".join(sorted(c for c in set(seen) if seen.count(c) == 1))
    return terms, out, sizes, ell


def _broadcast(cls, equation: str, a: list, b: list) -> list:
    n = max(len(a), len(b))
    a = [1] * (n - len(a)) + a
    b = [1] * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x is not None and y is not None and x != y and 1 not in (x, y):
            raise fail(cls, f"equation '{equation}': the '...' dimensions {a} and {b} do not broadcast")
        out.append(y if x == 1 else x)
    return out


@relay_op("einsum", OpPattern.OPAQUE)
class EinsumOp(RelayOp):
    """Einstein summation over the operands (numpy's ``einsum`` equation, with ``...``).

    ```mlir
    %y = relay.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
    ```
    """

    data = var_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    equation = Str()

    @classmethod
    def infer_types(cls, in_types, attrs):
        if not in_types:
            raise fail(cls, "needs at least one operand")
        dts = {dtype_of(t.element_type) for t in in_types}
        if len(dts) != 1:
            raise fail(cls, "operands have different dtypes: " + ", ".join(map(str, in_types)))
        _, out, sizes, ell = parse_einsum(cls, attrs["equation"], [shape_of(t) for t in in_types])
        shape = []
        for part in re.split(r"(\.\.\.)", out):
            shape += ell if part == "..." else [sizes[c] for c in part]
        return [new_tensor(shape, dts.pop())]


@relay_op("reinterpret", OpPattern.ELEMWISE)
class ReinterpretOp(RelayOp):
    """The bits of each element read as ``dtype`` (same width; ``bool`` as 8 bits).

    ```mlir
    %y = relay.reinterpret %x {dtype = "int32"} : (tensor<3xf32>) -> tensor<3xi32>
    ```
    """

    data = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    dtype = Str()

    @classmethod
    def infer_types(cls, in_types, attrs):
        src, dst = dtype_of(in_types[0].element_type), attrs["dtype"]
        if dst not in DTYPES:
            raise fail(cls, f"unknown dtype '{dst}'")
        if dtype_bits(src) != dtype_bits(dst):
            raise fail(cls, f"cannot reinterpret {src} ({dtype_bits(src)} bits) as {dst} ({dtype_bits(dst)} bits)")
        return [new_tensor(shape_of(in_types[0]), dst)]


@relay_op("reverse_sequence", OpPattern.INJECTIVE)
class ReverseSequenceOp(RelayOp):
    """Reverse the first ``seq_lengths[b]`` elements along ``seq_axis`` of each batch entry
    ``b`` along ``batch_axis`` (lengths beyond the axis are clamped to it).

    ```mlir
    %y = relay.reverse_sequence %x, %l {seq_axis = 0, batch_axis = 1} : (tensor<4x3xf32>, tensor<3xi64>) -> tensor<4x3xf32>
    ```
    """

    data = operand_def(TensorType)
    seq_lengths = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    seq_axis = Int(1)
    batch_axis = Int(0)

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, lengths = in_types
        _int_indices(cls, lengths, "seq_lengths")
        ds, ls = shape_of(data), shape_of(lengths)
        seq = norm_axis(cls, attrs["seq_axis"], len(ds), "seq_axis")
        batch = norm_axis(cls, attrs["batch_axis"], len(ds), "batch_axis")
        if seq == batch:
            raise fail(cls, f"seq_axis and batch_axis are both {seq}")
        if len(ls) != 1 or (ls[0] is not None and ds[batch] is not None and ls[0] != ds[batch]):
            raise fail(cls, f"seq_lengths {lengths} must be 1-D of the batch size of {data}")
        return [new_tensor(ds, dtype_of(data.element_type))]


_GRID_METHODS = ("nearest", "bilinear", "bicubic")
_GRID_PADDING = ("zeros", "border", "reflection")


@relay_op("image.grid_sample", OpPattern.OPAQUE)
class GridSampleOp(RelayOp):
    """Sample ``data`` at the normalised ([-1, 1]) positions of ``grid``: 2-D with ``grid``
    ``(N, 2, H_out, W_out)`` (x then y) in layout NCHW, 3-D with ``(N, 3, D_out, H_out,
    W_out)`` (x, y, z) in NCDHW; ``method`` nearest, bilinear or bicubic (2-D only);
    ``padding_mode`` zeros, border or reflection.

    ```mlir
    %y = relay.image.grid_sample %x, %g {align_corners = false} : (tensor<1x1x3x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x1x2x4xf32>
    ```
    """

    data = operand_def(TensorType)
    grid = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    method = Str("bilinear")
    layout = Str("NCHW")
    padding_mode = Str("zeros")
    align_corners = Bool(True)

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, grid = in_types
        ds, gs = shape_of(data), shape_of(grid)
        layout = attrs["layout"]
        if layout not in ("NCHW", "NCDHW"):
            raise fail(cls, f"layout must be NCHW or NCDHW, got '{layout}'")
        n = len(layout) - 2
        if attrs["method"] not in _GRID_METHODS or (n == 3 and attrs["method"] == "bicubic"):
            raise fail(cls, f"method '{attrs['method']}' is not supported for layout {layout}")
        if attrs["padding_mode"] not in _GRID_PADDING:
            raise fail(cls, f"padding_mode must be one of {', '.join(_GRID_PADDING)}, got '{attrs['padding_mode']}'")
        if len(ds) != n + 2 or len(gs) != n + 2:
            raise fail(cls, f"data {data} and grid {grid} must have rank {n + 2} for layout {layout}")
        if gs[1] is not None and gs[1] != n:
            raise fail(cls, f"grid {grid} must have {n} coordinates along axis 1")
        if ds[0] is not None and gs[0] is not None and ds[0] != gs[0]:
            raise fail(cls, f"data {data} and grid {grid} have different batch sizes")
        dt = dtype_of(data.element_type)
        if dt not in ("float16", "float32", "float64") or grid.element_type != data.element_type:
            raise fail(cls, f"data {data} and grid {grid} must be of one float type")
        return [new_tensor([ds[0], ds[1], *gs[2:]], dt)]


@relay_op("dft", OpPattern.OPAQUE)
class DFTOp(RelayOp):
    """The discrete Fourier transform along the last axis of the complex signal
    ``re_data + i * im_data``: two results, the real and imaginary parts; ``inverse`` uses
    the positive exponent and divides by the length.

    ```mlir
    %re, %im = relay.dft %a, %b {inverse = true} : (tensor<2x8xf32>, tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)
    ```
    """

    re_data = operand_def(TensorType)
    im_data = operand_def(TensorType)
    re_result = result_def(TensorType)
    im_result = result_def(TensorType)
    traits = traits_def(Pure())
    inverse = Bool(False)

    @classmethod
    def infer_types(cls, in_types, attrs):
        re, im = in_types
        if re != im:
            raise fail(cls, f"re_data {re} and im_data {im} must have one type")
        dt = dtype_of(re.element_type)
        if dt not in ("float16", "float32", "float64"):
            raise fail(cls, f"the signal must be floating point, got {re}")
        if not shape_of(re):
            raise fail(cls, f"the signal {re} must have rank >= 1")
        return [re, im]


_TOPK_RETURNS = ("both", "values", "indices")


@relay_op("topk", OpPattern.OPAQUE)
class TopKOp(RelayOp):
    """The ``k`` largest (``is_ascend``: smallest) elements along ``axis``, sorted, equal
    elements in index order; ``ret_type`` both (values, then indices of ``dtype``), values or
    indices. ``k`` < 1 takes the whole axis, as Relay.

    ```mlir
    %v, %i = relay.topk %x {k = 2, dtype = "int64"} : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
    ```
    """

    data = operand_def(TensorType)
    outputs = var_result_def(TensorType)
    traits = traits_def(Pure())
    k = Int(1)
    axis = Int(-1)
    ret_type = Str("both")
    is_ascend = Bool(False)
    dtype = Str("int32")

    @classmethod
    def infer_types(cls, in_types, attrs):
        ds = list(shape_of(in_types[0]))
        axis = norm_axis(cls, attrs["axis"], len(ds))
        if attrs["ret_type"] not in _TOPK_RETURNS:
            raise fail(cls, f"ret_type must be one of {', '.join(_TOPK_RETURNS)}, got '{attrs['ret_type']}'")
        if attrs["dtype"] not in DTYPES:  # Relay casts the indices to any dtype
            raise fail(cls, f"unknown dtype '{attrs['dtype']}'")
        k = attrs["k"]
        if k >= 1:
            if ds[axis] is not None and k > ds[axis]:
                raise fail(cls, f"k = {k} exceeds axis {axis} of {in_types[0]}")
            ds[axis] = k
        values = new_tensor(ds, dtype_of(in_types[0].element_type))
        indices = new_tensor(ds, attrs["dtype"])
        return {"both": [values, indices], "values": [values], "indices": [indices]}[attrs["ret_type"]]


@relay_op("one_hot", OpPattern.OUT_ELEMWISE_FUSABLE)
class OneHotOp(RelayOp):
    """``on_value`` where the new axis' position equals ``indices``, else ``off_value``
    (scalars); the new axis of size ``depth`` goes at ``axis`` (-1: last). Indices outside
    ``[0, depth)`` give a row of ``off_value``.

    ```mlir
    %y = relay.one_hot %i, %on, %off {depth = 3, axis = -1, dtype = "float32"} : (tensor<4xi64>, tensor<f32>, tensor<f32>) -> tensor<4x3xf32>
    ```
    """

    indices = operand_def(TensorType)
    on_value = operand_def(TensorType)
    off_value = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    depth = Int()
    axis = Int(-1)
    dtype = Str()

    @classmethod
    def infer_types(cls, in_types, attrs):
        indices, on, off = in_types
        _int_indices(cls, indices)
        if shape_of(on) or shape_of(off):
            raise fail(cls, f"on_value {on} and off_value {off} must be scalars")
        dtype = attrs["dtype"]
        if dtype not in DTYPES:
            raise fail(cls, f"unknown dtype '{dtype}'")
        if dtype_of(on.element_type) != dtype or dtype_of(off.element_type) != dtype:
            raise fail(cls, f"on_value {on} and off_value {off} must be of dtype {dtype}")
        if attrs["depth"] < 0:
            raise fail(cls, f"depth must be non-negative, got {attrs['depth']}")
        ds = list(shape_of(indices))
        axis = attrs["axis"]
        if not -1 <= axis <= len(ds):
            raise fail(cls, f"axis {axis} is out of range for {len(ds) + 1} output axes")
        ds.insert(len(ds) if axis == -1 else axis, attrs["depth"])
        return [new_tensor(ds, dtype)]


@relay_op("vision.roi_align", OpPattern.OUT_ELEMWISE_FUSABLE)
class ROIAlignOp(RelayOp):
    """Average (or max) of bilinear samples on a ``pooled_size`` grid over each region of
    ``rois`` (``[batch_index, x1, y1, x2, y2]`` rows, scaled by ``spatial_scale``; regions at
    least ``min_roi_size`` wide and high, 1 as TOPI's); ``sample_ratio`` samples per bin side
    (< 1: adaptive). ``mode``: ``avg``, ``max`` (Relay's: the largest bilinear sample) or
    ``max_corner`` (ONNX's and onnxruntime's max: at each sample the largest of its four
    weighted corner terms, then the largest over the bin), an xrelay extension like
    ``min_roi_size`` (ONNX's ``half_pixel`` regions have no minimum: 0).

    ```mlir
    %y = relay.vision.roi_align %x, %r {pooled_size = [2, 2], spatial_scale = 0.5} : (tensor<1x3x8x8xf32>, tensor<4x5xf32>) -> tensor<4x3x2x2xf32>
    ```
    """

    data = operand_def(TensorType)
    rois = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    pooled_size = Ints()
    spatial_scale = Float()
    sample_ratio = Int(-1)
    layout = Str("NCHW")
    mode = Str("avg")
    min_roi_size = Float(1.0)

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, rois = in_types
        if attrs["layout"] not in ("NCHW", "NHWC"):
            raise fail(cls, f"layout must be NCHW or NHWC, got '{attrs['layout']}'")
        if attrs["mode"] not in ("avg", "max", "max_corner"):
            raise fail(cls, f"mode must be avg, max or max_corner, got '{attrs['mode']}'")
        if not attrs["min_roi_size"] >= 0:
            raise fail(cls, f"min_roi_size must not be negative, got {attrs['min_roi_size']}")
        return [_region_pool_type(cls, data, rois, attrs)]


def _region_pool_type(cls, data: TensorType, rois: TensorType, attrs) -> TensorType:
    """roi_align / roi_pool: ``(num_roi, C, ph, pw)`` (NCHW) or ``(num_roi, ph, pw, C)``."""
    ds, rs = shape_of(data), shape_of(rois)
    if len(ds) != 4 or len(rs) != 2 or (rs[1] is not None and rs[1] != 5):
        raise fail(cls, f"expects 4-D data and (num_roi, 5) rois, got {data} and {rois}")
    ph_pw = attrs["pooled_size"]
    if len(ph_pw) != 2 or min(ph_pw) < 1:
        raise fail(cls, f"pooled_size must be two positive sizes, got {list(ph_pw)}")
    dt = dtype_of(data.element_type)
    if dt not in ("float16", "float32", "float64") or rois.element_type != data.element_type:
        raise fail(cls, f"data {data} and rois {rois} must be of one float type")
    c = ds[1] if attrs["layout"] == "NCHW" else ds[3]
    shape = [rs[0], c, *ph_pw] if attrs["layout"] == "NCHW" else [rs[0], *ph_pw, c]
    return new_tensor(shape, dt)


@relay_op("argwhere", OpPattern.OPAQUE)
class ArgWhereOp(RelayOp):
    """The coordinates of the nonzero elements of ``condition``, one row each in row-major
    order (int32). The number of rows depends on the values: the result's first dimension is
    dynamic (``?``), so only the interpreter runs it until its input is known (then it folds).

    ```mlir
    %i = relay.argwhere %c : (tensor<2x3xi1>) -> tensor<?x2xi32>
    ```
    """

    condition = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def infer_types(cls, in_types, attrs):
        return [new_tensor([None, len(shape_of(in_types[0]))], "int32")]


@relay_op("unique", OpPattern.OPAQUE)
class UniqueOp(RelayOp):
    """The distinct elements of the 1-D ``data`` (``sorted``: ascending, else in order of first
    occurrence), padded with zeros to the input's length, as Relay: ``output``, ``indices`` (of
    each one's first occurrence), ``inverse_indices`` (each element's position in ``output``),
    ``num_unique`` (a 1-element count) and, with ``return_counts``, ``counts``; the index
    results are int32. Slicing the first ``num_unique`` entries gives the unpadded results.

    ```mlir
    %u, %i, %inv, %n = relay.unique %x : (tensor<6xf32>) -> (tensor<6xf32>, tensor<6xi32>, tensor<6xi32>, tensor<1xi32>)
    ```
    """

    data = operand_def(TensorType)
    outputs = var_result_def(TensorType)
    traits = traits_def(Pure())
    sorted = Bool(True)
    return_counts = Bool(False)

    @classmethod
    def infer_types(cls, in_types, attrs):
        ds = shape_of(in_types[0])
        if len(ds) != 1:
            raise fail(cls, f"expects 1-D data, got {in_types[0]}")
        out = [in_types[0], new_tensor(ds, "int32"), new_tensor(ds, "int32"), new_tensor([1], "int32")]
        return out + [new_tensor(ds, "int32")] if attrs["return_counts"] else out


@relay_op("vision.all_class_non_max_suppression", OpPattern.OPAQUE)
class AllClassNMSOp(RelayOp):
    """Greedy non-maximum suppression per batch and class, as Relay's (``output_format``
    "onnx"): for each class the boxes scoring above ``score_threshold`` are taken by
    descending score (ties: lower index first), each dropping the later boxes whose IoU with it
    exceeds ``iou_threshold``, at most ``max_output_boxes_per_class`` per class (< 0: no
    limit; scalars, the last three operands). ``boxes`` are ``[batch, num_boxes, 4]`` corners ``(y1, x1, y2, x2)``
    (either order along each axis), ``scores`` ``[batch, num_classes, num_boxes]``. Results:
    ``[batch * num_classes * num_boxes, 3]`` int64 rows ``(batch, class, box)`` in that order,
    zero-padded, and the 1-element int64 count of valid rows.

    ```mlir
    %sel, %n = relay.vision.all_class_non_max_suppression %b, %s, %m, %iou, %st : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<i64>, tensor<f32>, tensor<f32>) -> (tensor<12x3xi64>, tensor<1xi64>)
    ```
    """

    boxes = operand_def(TensorType)
    scores = operand_def(TensorType)
    max_output_boxes_per_class = operand_def(TensorType)
    iou_threshold = operand_def(TensorType)
    score_threshold = operand_def(TensorType)
    selected = result_def(TensorType)
    num_total_detections = result_def(TensorType)
    traits = traits_def(Pure())
    output_format = Str("onnx")

    @classmethod
    def infer_types(cls, in_types, attrs):
        boxes, scores, max_out, iou, score = in_types
        bs, ss = shape_of(boxes), shape_of(scores)
        if attrs["output_format"] != "onnx":
            raise fail(cls, f"output_format must be 'onnx' (the only one xrelay has), got '{attrs['output_format']}'")
        if len(bs) != 3 or bs[2] not in (4, None) or len(ss) != 3:
            raise fail(cls, f"expects [batch, boxes, 4] boxes and [batch, classes, boxes] scores, got {boxes} and {scores}")
        for a, b in ((bs[0], ss[0]), (bs[1], ss[2])):
            if a is not None and b is not None and a != b:
                raise fail(cls, f"boxes {boxes} and scores {scores} disagree on the batch or box count")
        for t, what in ((max_out, "max_output_boxes_per_class"), (iou, "iou_threshold"), (score, "score_threshold")):
            if any(d != 1 for d in shape_of(t)):
                raise fail(cls, f"{what} must be a scalar, got {t}")
        _int_indices(cls, max_out, "max_output_boxes_per_class")
        dt = dtype_of(boxes.element_type)
        if dt not in ("float16", "float32", "float64") or scores.element_type != boxes.element_type:
            raise fail(cls, f"boxes {boxes} and scores {scores} must be of one float type")
        n = None if None in (bs[0], ss[1], bs[1]) else bs[0] * ss[1] * bs[1]
        return [new_tensor([n, 3], "int64"), new_tensor([1], "int64")]


@relay_op("vision.roi_pool", OpPattern.OUT_ELEMWISE_FUSABLE)
class ROIPoolOp(RelayOp):
    """Maximum over each cell of a ``pooled_size`` grid laid on each region of ``rois``
    (``[batch_index, x1, y1, x2, y2]`` rows; corners scaled by ``spatial_scale`` and rounded,
    regions at least 1x1, an empty cell is 0): TOPI's ``roi_pool``.

    ```mlir
    %y = relay.vision.roi_pool %x, %r {pooled_size = [2, 2], spatial_scale = 0.5} : (tensor<1x3x8x8xf32>, tensor<4x5xf32>) -> tensor<4x3x2x2xf32>
    ```
    """

    data = operand_def(TensorType)
    rois = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    pooled_size = Ints()
    spatial_scale = Float()
    layout = Str("NCHW")

    @classmethod
    def infer_types(cls, in_types, attrs):
        data, rois = in_types
        if attrs["layout"] not in ("NCHW", "NHWC"):
            raise fail(cls, f"vision.roi_pool does not support {attrs['layout']} layout")
        return [_region_pool_type(cls, data, rois, attrs)]
