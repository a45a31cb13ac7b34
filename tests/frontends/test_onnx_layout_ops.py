"""Import of MaxRoiPool (``vision.roi_pool``), LRN (``nn.lrn``), 3-D Resize and DeformConv (``nn.deformable_conv2d``), against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest


def test_max_roi_pool_vs_onnx(h, rng):
    x = rng.standard_normal((2, 4, 9, 11)).astype(np.float32)
    rois = np.array([[0, 0, 0, 10, 8], [1, 2, 3, 7, 8], [1, -4, 1, 14, 5]], np.float32)
    imp = h.check_node("MaxRoiPool", [x, rois], {"pooled_shape": [2, 3], "spatial_scale": 0.5})
    assert "relay.vision.roi_pool" in h.relay_op_names(imp.module)


def test_lrn_vs_onnx(h, rng):
    """An odd size imports as nn.lrn (Relay's frontend)."""
    x = rng.standard_normal((1, 6, 5, 5)).astype(np.float32)
    imp = h.check_node("LRN", [x], {"size": 3, "alpha": 0.2, "beta": 0.5, "bias": 1.5})
    assert "relay.nn.lrn" in h.relay_op_names(imp.module)


def test_lrn_even_size_vs_onnx_formula(rng):
    """An even size (onnxruntime and TOPI refuse it; ONNX's window has one more channel after
    than before) imports as squares summed by an average pool: the values of ONNX's formula
    (onnx.reference's LRN only sums channels below the batch size, so the formula is
    written out here)."""
    from onnx import TensorProto, helper

    from xrelay.frontends.onnx import from_onnx
    from xrelay.runtime.interpreter import run

    x = rng.standard_normal((1, 6, 5, 5)).astype(np.float32)
    node = helper.make_node("LRN", ["x"], ["y"], size=4, alpha=0.2, beta=0.5, bias=1.5)
    graph = helper.make_graph(
        [node], "lrn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, x.shape)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    # sum over max(0, c - floor(3 / 2)) <= i <= min(C - 1, c + ceil(3 / 2))
    sums = np.stack([(x[:, max(0, c - 1) : c + 3] ** 2).sum(axis=1) for c in range(6)], axis=1)
    want = x / (1.5 + 0.2 / 4 * sums) ** 0.5
    mod, params = from_onnx(model)
    assert "relay.nn.lrn" not in {op.name for op in mod.module.walk()}
    (got,) = run(mod.module, {"x": x}, params)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "attrs",
    [
        {"mode": "linear"},
        {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
        {"mode": "linear", "coordinate_transformation_mode": "align_corners"},
    ],
)
def test_resize_of_3d_inputs_vs_onnx(h, rng, attrs):
    """A 3-D Resize gives onnxruntime's values."""
    x = rng.standard_normal((2, 3, 6)).astype(np.float32)
    h.check_node("Resize", [x, None, None, np.array([2, 3, 9], np.int64)], attrs, consts=(3,))


def test_deform_conv_vs_onnx(h, rng):
    """Padding, strides, a bias and offsets reaching past every border (points in (-1, 0)
    included, which ONNX samples partially)."""
    x = rng.standard_normal((1, 4, 6, 7)).astype(np.float32)
    w = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    off = rng.uniform(-2.5, 2.5, size=(1, 2 * 9 * 2, 3, 3)).astype(np.float32)
    attrs = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 0], "group": 2, "offset_group": 2}
    imp = h.check_node("DeformConv", [x, w, off, b], attrs, opset=19)
    assert "relay.nn.deformable_conv2d" in h.relay_op_names(imp.module)


def test_deform_conv_mask_is_refused(h, rng):
    from xrelay.frontends.onnx import OnnxImportError

    x = rng.standard_normal((1, 1, 4, 4)).astype(np.float32)
    w = rng.standard_normal((1, 1, 2, 2)).astype(np.float32)
    off = np.zeros((1, 8, 3, 3), np.float32)
    with pytest.raises(OnnxImportError, match="mask is not supported"):
        h.check_node("DeformConv", [x, w, off, None, np.ones((1, 4, 3, 3), np.float32)], {}, opset=19)
