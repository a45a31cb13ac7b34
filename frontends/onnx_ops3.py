"""ONNX operators imported onto Relay's scans, scatters and samplers, and the recurrent layers.

As Relay's ONNX frontend (TVM v0.19) maps them:

* ``CumSum``/``CumProd`` -> ``cumsum``/``cumprod`` (``reverse`` flips the axis around the scan).
  Relay's frontend needed the axis at import; an axis given at run time does not change the
  result's type, so it is imported as one scan per axis and a ``where`` on the axis value.
* ``ScatterElements``/``Scatter`` -> ``scatter_elements``; ``ScatterND`` -> ``scatter_nd`` after
  moving the index tuples to the first axis (as ``GatherND``).
* ``Einsum`` -> ``einsum``; ``BitCast`` -> ``reinterpret``; ``ReverseSequence`` ->
  ``reverse_sequence``.
* ``GridSample`` -> ``image.grid_sample`` with the grid's coordinates moved to axis 1.
"""

from __future__ import annotations

from xrelay.frontends.onnx import _Importer, _Node, _op, _relay_dtype, _Val


def _flip(im: _Importer, node: _Node, x: _Val, axis: int) -> _Val:
    """``x`` reversed along ``axis`` (a strided slice with step -1)."""
    rank = im.rank(x)
    axis = axis + rank if axis < 0 else axis
    d = im.static_shape(x, node)[axis]
    # end -d-1 is "before index 0" (a plain -1 would be the last index)
    return im.emit1("strided_slice", [x], begin=[d - 1], end=[-d - 1], strides=[-1], axes=[axis])


@_op("CumSum", "CumProd")
def _cumulative(im, node):
    x, axis_in = node.inputs[0], node.input(1)
    name = "cumsum" if node.op_type == "CumSum" else "cumprod"
    exclusive = bool(node.attrs.get("exclusive", 0))

    def scan(axis: int) -> _Val:
        if node.attrs.get("reverse", 0):
            flipped = im.emit1(name, [_flip(im, node, x, axis)], axis=axis, exclusive=exclusive)
            return _flip(im, node, flipped, axis)
        return im.emit1(name, [x], axis=axis, exclusive=exclusive)

    if axis_in is None:
        return [scan(0)]
    if axis_in.known:
        return [scan(int(axis_in.const.reshape(-1)[0]))]
    # The axis is a run-time value, but the result's type does not depend on it: scan along
    # every axis and select the one asked for (an axis outside [-rank, rank) selects the last).
    rank = im.rank(x)
    if rank == 0:
        raise node.fail("the input must have rank >= 1")
    axis = im.reshape(axis_in, [])
    out = scan(rank - 1)
    for a in range(rank - 2, -1, -1):
        hit = im.emit1(
            "logical_or",
            [
                im.emit1("equal", [axis, im.scalar(a, axis)]),
                im.emit1("equal", [axis, im.scalar(a - rank, axis)]),
            ],
        )
        out = im.emit1("where", [hit, scan(a), out])
    return [out]


_REDUCTION = {"none": "update", "add": "add", "mul": "mul", "min": "min", "max": "max"}


def _reduction(node: _Node) -> str:
    r = node.attrs.get("reduction", "none")
    if r not in _REDUCTION:
        raise node.fail(f"reduction must be one of {', '.join(_REDUCTION)}, got {r!r}")
    return _REDUCTION[r]


@_op("ScatterElements", "Scatter")
def _scatter_elements(im, node):
    data, indices, updates = node.inputs[:3]
    return im.emit(
        "scatter_elements", [data, indices, updates], axis=int(node.attrs.get("axis", 0)), reduction=_reduction(node)
    )


@_op("ScatterND")
def _scatter_nd(im, node):
    data, indices, updates = node.inputs[:3]
    r = im.rank(indices)
    moved = im.emit1("transpose", [indices], axes=[r - 1, *range(r - 1)])
    return im.emit("scatter_nd", [data, moved, updates], mode=_reduction(node))


@_op("Einsum")
def _einsum(im, node):
    return im.emit("einsum", list(node.inputs), equation=node.attrs["equation"])


@_op("BitCast")
def _bitcast(im, node):
    to = _relay_dtype(int(node.attrs["to"]), f"BitCast node '{node.name}'")
    return im.emit("reinterpret", [node.inputs[0]], dtype=to)


@_op("ReverseSequence")
def _reverse_sequence(im, node):
    x, lengths = node.inputs[:2]
    return im.emit(
        "reverse_sequence",
        [x, lengths],
        seq_axis=int(node.attrs.get("time_axis", 0)),
        batch_axis=int(node.attrs.get("batch_axis", 1)),
    )


_GRID_MODES = {"linear": "bilinear", "bilinear": "bilinear", "cubic": "bicubic", "bicubic": "bicubic", "nearest": "nearest"}


@_op("GridSample")
def _grid_sample(im, node):
    x, grid = node.inputs[:2]
    mode = node.attrs.get("mode", "linear" if node.opset >= 20 else "bilinear")
    if mode not in _GRID_MODES:
        raise node.fail(f"mode must be one of {', '.join(_GRID_MODES)}, got {mode!r}")
    n = im.rank(x) - 2
    if n not in (2, 3):
        raise node.fail(f"only 2-D and 3-D sampling is supported (Relay's), got a {n}-D input")
    moved = im.emit1("transpose", [grid], axes=[0, n + 1, *range(1, n + 1)])
    return im.emit(
        "image.grid_sample",
        [x, moved],
        method=_GRID_MODES[mode],
        layout="NCHW" if n == 2 else "NCDHW",
        padding_mode=node.attrs.get("padding_mode", "zeros"),
        align_corners=bool(node.attrs.get("align_corners", 0)),
    )
