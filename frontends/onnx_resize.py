"""ONNX ``Resize`` where Relay's ``image.resize2d`` cannot give ONNX's numbers: per-axis
interpolation weights.

``image.resize2d`` maps output coordinates by the ratio of the sizes and has no antialiasing,
so three kinds of ONNX Resize were refused: ``scales`` whose output size is fractional (ONNX maps
by the scale itself), ``antialias = 1``, and ``nearest_mode`` round_prefer_ceil/ceil/round with
asymmetric coordinates at a whole-number upscale (TOPI divides integers there). ONNX's
linear, cubic and nearest modes are separable, and along one axis each is a linear map of the
input: a matrix ``W[out, in]``. Here each resized axis gets its matrix from ONNX's own reference
implementation (``onnx.reference``) run on the unit vectors of that axis, so the coefficients
are ONNX's by construction, and the import applies it: ``take`` of the selected indices for
``nearest`` (exact), an ``einsum`` with the weights for ``linear``/``cubic`` (accumulated in the
input's type). ``tf_crop_and_resize`` (not linear: points outside the region are a constant)
stays refused. The matrices are computed at import, so an axis of more than ``MAX_WEIGHTS``
``in x out`` entries is refused.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper

from xrelay.frontends.onnx import _Importer, _Node, _Val

MAX_WEIGHTS = 1 << 20
"""The most entries (input length x output length) of one axis' weight matrix."""

_ATTRS = ("mode", "coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside", "nearest_mode", "antialias")


def axis_weights(node: _Node, length: int, out: int, scale: float | None) -> np.ndarray:
    """ONNX's ``W[out, length]`` for one axis of ``node``: by ``scale`` when given (ONNX maps
    coordinates by it), else by the sizes."""
    if length * out > MAX_WEIGHTS:
        raise node.fail(
            f"resizing an axis of {length} to {out} needs a {out} x {length} weight matrix, more than "
            f"the importer computes ({MAX_WEIGHTS:,} entries)"
        )
    from onnx.reference import ReferenceEvaluator

    attrs = {k: node.attrs[k] for k in _ATTRS if k in node.attrs}
    inputs = ["x", "", "s"] if scale is not None else ["x", "", "", "s"]
    s = np.array([scale], np.float32) if scale is not None else np.array([out], np.int64)
    graph = helper.make_graph(
        [helper.make_node("Resize", inputs, ["y"], **attrs)],
        "axis",
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [length])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [out])],
        [onnx.numpy_helper.from_array(s, "s")],
    )
    opset = max(node.opset, 18) if attrs.get("antialias") else max(node.opset, 13)
    ref = ReferenceEvaluator(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]))
    cols = []
    for j in range(length):
        e = np.zeros(length)
        e[j] = 1.0
        (y,) = ref.run(None, {"x": e})
        if y.shape != (out,):
            raise node.fail(f"ONNX's reference gives {y.shape[0]} outputs for an axis of {length} -> {out}")
        cols.append(y)
    return np.stack(cols, axis=1)


def resize_by_weights(
    im: _Importer, node: _Node, x: _Val, in_shape: Sequence[int], out_shape: Sequence[int], scales: Sequence[float] | None
) -> list[_Val]:
    """``x`` resized axis by axis with ONNX's weights (``scales`` per axis, or None when the
    node gave sizes)."""
    mode = node.attrs.get("mode", "nearest")
    if node.attrs.get("coordinate_transformation_mode") == "tf_crop_and_resize":
        raise node.fail("tf_crop_and_resize is only supported where image.resize2d gives ONNX's numbers")
    letters = "abcdefghijklmnop"
    y = x
    for axis, (d, o) in enumerate(zip(in_shape, out_shape)):
        scale = None if scales is None else float(scales[axis])
        if d == o and scale in (None, 1.0):
            continue
        w = axis_weights(node, d, o, scale)
        if mode == "nearest":
            idx = w.argmax(axis=1)
            if not np.array_equal(w, np.eye(d)[idx]):
                raise node.fail("ONNX's nearest weights are not a selection (an importer bug)")
            y = im.emit1("take", [y, im.const(idx.astype(np.int64))], axis=axis)
            continue
        src = letters[: len(in_shape)]
        dst = src[:axis] + "z" + src[axis + 1 :]
        weights = im.const(w, im.dtype_of(x))
        y = im.emit1("einsum", [y, weights], equation=f"{src},z{src[axis]}->{dst}")
    return [y]
