"""ONNX Resize where image.resize2d cannot give ONNX's numbers (fractional-size scales,
antialias, ceil rounding at a whole upscale, other ranks): per-axis weights from ONNX's
reference, checked against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from xrelay.frontends.onnx import OnnxImportError

F32 = np.float32


@pytest.mark.parametrize(
    "attrs, scales",
    [
        ({"mode": "linear"}, [1, 1, 0.6, 0.7]),
        ({"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1}, [1, 1, 0.8, 1.3]),
        ({"mode": "linear", "antialias": 1}, [1, 1, 0.5, 0.35]),
        ({"mode": "cubic", "antialias": 1}, [1, 1, 0.6, 0.5]),
        ({"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "round_prefer_ceil"}, [1, 1, 2, 3]),
        ({"mode": "linear"}, [1, 2, 1.5, 1]),  # C resized too
    ],
)
def test_resize_by_weights_vs_onnx(h, rng, attrs, scales):
    x = h.randn(rng, 1, 2, 7, 9)
    imp = h.check_node("Resize", [x, None, np.array(scales, F32)], attrs, opset=18, consts=[2], rtol=1e-5, atol=1e-5)
    ops = h.relay_op_names(imp.module)
    assert "relay.image.resize2d" not in ops and ("relay.take" in ops or "relay.einsum" in ops)


def test_resize_align_corners_fractional_vs_onnx_reference(rng):
    # onnxruntime maps align_corners by the scale here (1.8 off); ONNX's definition and its
    # reference (which ONNX's node test test_resize_downsample_scales_linear_align_corners
    # follows) by the sizes
    from onnx import helper, numpy_helper
    from onnx.reference import ReferenceEvaluator

    from xrelay.frontends import import_onnx
    from xrelay.runtime.interpreter import run

    x = rng.standard_normal((1, 2, 7, 9)).astype(F32)
    node = helper.make_node("Resize", ["x", "", "s"], ["y"], mode="linear", coordinate_transformation_mode="align_corners")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", 1, x.shape)], [helper.make_tensor_value_info("y", 1, None)],
        [numpy_helper.from_array(np.array([1, 1, 1.7, 0.6], F32), "s")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    (got,) = run(import_onnx(model).module, {"x": x})
    assert got.shape == want.shape == (1, 2, 11, 5)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_resize_sizes_antialias_and_rank3(h, rng):
    x = h.randn(rng, 2, 11, 6)
    h.check_node("Resize", [x, None, None, np.array([2, 5, 9], np.int64)], {"mode": "linear", "antialias": 1},
                 opset=18, consts=[3], rtol=1e-5, atol=1e-5)


def test_resize_2d_path_kept_where_exact(h, rng):
    x = h.randn(rng, 1, 2, 4, 4)
    imp = h.check_node("Resize", [x, None, np.array([1, 1, 2, 1.5], F32)], {"mode": "linear"}, opset=13, consts=[2])
    assert "relay.image.resize2d" in h.relay_op_names(imp.module)


def test_resize_weights_too_large(h, rng):
    x = np.zeros((1, 1, 1, 2000), F32)
    with pytest.raises(OnnxImportError, match=r"needs a 1333 x 2000 weight matrix, more than the importer computes"):
        h.check_node("Resize", [x, None, np.array([1, 1, 1, 0.6667], F32)], {"mode": "linear"}, opset=13, consts=[2])
