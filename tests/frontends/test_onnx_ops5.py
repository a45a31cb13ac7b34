"""CenterCropPad, AffineGrid, Col2Im, STFT, the windows, MelWeightMatrix, Det, MaxPool's
Indices, 1-D ConvTranspose and TfIdfVectorizer (compositions of Relay ops) against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from xrelay.frontends.onnx import OnnxImportError, OnnxRunTimeValueError

F32, I64 = np.float32, np.int64


@pytest.mark.parametrize("shape, axes", [([2, 5, 9], None), ([7, 3], [1, -1]), ([4], [0])])
def test_center_crop_pad(h, rng, shape, axes):
    x = h.randn(rng, 3, 6, 5)
    attrs = {} if axes is None else {"axes": axes}
    h.check_node("CenterCropPad", [x, np.array(shape, I64)], attrs, opset=18, consts=[1])


def test_center_crop_pad_shape_at_run_time():
    from onnx import helper

    from xrelay.frontends import import_onnx
    from xrelay.testing.onnx_models import make_model

    node = helper.make_node("CenterCropPad", ["x", "shape"], ["y"])
    model = make_model([node], {"x": ((3, 4), F32), "shape": ((2,), I64)}, {"y": F32}, {}, opset=18, check=False)
    with pytest.raises(OnnxRunTimeValueError, match="input 'shape' must be a constant") as e:
        import_onnx(model)
    assert e.value.inputs == ("shape",)


@pytest.mark.parametrize("size, align", [([2, 3, 4, 5], 0), ([2, 3, 4, 5], 1), ([2, 1, 3, 2, 4], 0)])
def test_affine_grid(h, rng, size, align):
    k = len(size) - 2
    theta = h.randn(rng, size[0], k, k + 1)
    h.check_node("AffineGrid", [theta, np.array(size, I64)], {"align_corners": align}, opset=20, consts=[1])


@pytest.mark.parametrize(
    "image, block, attrs",
    [([5, 5], [2, 2], {}), ([6, 7], [3, 2], {"strides": [2, 1], "pads": [1, 0, 0, 1]}), ([7, 7], [2, 3], {"dilations": [2, 2]})],
)
def test_col2im(h, rng, image, block, attrs):
    s = attrs.get("strides", [1, 1])
    p = attrs.get("pads", [0, 0, 0, 0])
    d = attrs.get("dilations", [1, 1])
    nb = [(image[i] + p[i] + p[i + 2] - d[i] * (block[i] - 1) - 1) // s[i] + 1 for i in range(2)]
    x = h.randn(rng, 2, 2 * block[0] * block[1], nb[0] * nb[1])
    h.check_node("Col2Im", [x, np.array(image, I64), np.array(block, I64)], attrs, opset=18, consts=[1, 2])


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
def test_windows(h, op, periodic):
    h.check_node(op, [np.array(12, np.int32)], {"periodic": periodic}, opset=17, consts=[0], rtol=1e-5, atol=1e-6)


def test_mel_weight_matrix(h):
    ins = [np.array(8, np.int32), np.array(32, np.int32), np.array(8000, np.int32), np.array(0.0, F32), np.array(3500.0, F32)]
    h.check_node("MelWeightMatrix", ins, opset=17, consts=[0, 1, 2, 3, 4])


@pytest.mark.parametrize("onesided", [0, 1])
@pytest.mark.parametrize("window", [False, True])
def test_stft(h, rng, onesided, window):
    signal = h.randn(rng, 2, 40, 1)
    ins = [signal, np.array(5, I64), np.hanning(12).astype(F32) if window else None, None if window else np.array(12, I64)]
    h.check_node("STFT", ins, {"onesided": onesided}, opset=17, consts=[1, 3], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape", [(3, 3), (2, 1, 1), (4, 2, 2), (2, 4, 4)])
def test_det(h, rng, shape):
    h.check_node("Det", [h.randn(rng, *shape)], opset=11, rtol=1e-4, atol=1e-4)


def test_det_too_large(h, rng):
    with pytest.raises(OnnxImportError, match="5 x 5 matrices: xrelay expands determinants by permutations up to 4 x 4"):
        h.check_node("Det", [h.randn(rng, 5, 5)], opset=11)


@pytest.mark.parametrize(
    "attrs",
    [
        {"kernel_shape": [2, 2]},
        {"kernel_shape": [3, 2], "strides": [2, 1], "pads": [1, 0, 1, 1]},
        {"kernel_shape": [2, 2], "dilations": [2, 1], "storage_order": 1},
    ],
)
def test_max_pool_indices(h, rng, attrs):
    x = h.randn(rng, 2, 3, 6, 5)
    h.check_node("MaxPool", [x], attrs, opset=12, n_out=2, out_dtypes=[F32, I64])


@pytest.mark.parametrize("attrs", [{}, {"strides": [2], "pads": [1, 0]}, {"strides": [3], "output_padding": [1], "group": 2}])
def test_conv_transpose_1d(h, rng, attrs):
    x = h.randn(rng, 1, 2, 5)
    w = h.randn(rng, 2, 3, 3)
    h.check_node("ConvTranspose", [x, w], attrs)


@pytest.mark.parametrize("mode, axis", [("linear", -2), ("circular", -2), ("circular", 1)])
def test_tensor_scatter_vs_onnx_reference(rng, mode, axis):
    # onnxruntime has no TensorScatter (opset 24): ONNX's reference
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    from xrelay.testing.onnx_backend import XrelayBackend

    cache, update = (2, 5, 3, 4), (2, 2, 3, 4) if axis == 1 else (2, 5, 2, 4)
    if axis == -2:
        cache, update = (2, 3, 5, 4), (2, 3, 2, 4)
    node = helper.make_node("TensorScatter", ["c", "u", "w"], ["y"], mode=mode, axis=axis)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, cache), helper.make_tensor_value_info("u", TensorProto.FLOAT, update),
         helper.make_tensor_value_info("w", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, cache)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
    length = cache[axis]
    feeds = {"c": rng.standard_normal(cache).astype(F32), "u": rng.standard_normal(update).astype(F32),
             "w": np.array([length - 1, 1] if mode == "circular" else [0, length - update[axis]], I64)}
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    for m in ("interpreter", "built"):
        (got,) = XrelayBackend.prepare(model, mode=m).run(feeds)
        np.testing.assert_array_equal(got, want)


_POOL = {  # 1-grams from 0, 2-grams from 3, 3-grams from 9: [2], [3], [5]; [4,5] [6,7] [8,6]; [7,5,6]
    "ngram_counts": np.array([0, 3, 9], I64),
    "pool_int64s": np.array([2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 5, 6], I64),
}


@pytest.mark.parametrize(
    "mode, lengths, skip, weights",
    [
        ("TF", (1, 3), 2, None),
        ("TF", (2, 3), 3, None),
        ("IDF", (1, 2), 1, None),
        ("IDF", (1, 3), 2, [0.5, 1.5, 2.0, 3.0, 0.25, 4.0, 1.25]),
        ("TFIDF", (2, 2), 5, [0.5, 1.5, 2.0, 3.0, 0.25, 4.0, 1.25]),
        ("TFIDF", (1, 1), 0, None),
    ],
)
@pytest.mark.parametrize("shape, dtype", [((2, 12), np.int32), ((15,), np.int64)])
def test_tfidf_vectorizer(h, mode, lengths, skip, weights, shape, dtype):
    tokens = np.random.default_rng(5).integers(2, 9, size=shape).astype(dtype)
    attrs = dict(_POOL, mode=mode, min_gram_length=lengths[0], max_gram_length=lengths[1], max_skip_count=skip,
                 ngram_indexes=np.array([6, 0, 3, 1, 5, 2, 4], I64))
    if weights is not None:
        attrs["weights"] = np.array(weights, F32)
    imp = h.check_node("TfIdfVectorizer", [tokens], attrs, opset=9)
    assert imp is not None


def test_tfidf_vectorizer_counts_something(h):
    # the comparison above is not vacuous: these tokens hold every pool n-gram
    tokens = np.array([2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 5, 6], np.int64)
    attrs = dict(_POOL, mode="TF", min_gram_length=1, max_gram_length=3, max_skip_count=0,
                 ngram_indexes=np.arange(7, dtype=I64))
    from onnx import helper as oh

    from xrelay.frontends import import_onnx
    from xrelay.runtime.interpreter import run
    from xrelay.testing.onnx_models import make_model

    model = make_model([oh.make_node("TfIdfVectorizer", ["x"], ["y"], **attrs)], {"x": ((12,), I64)}, ["y"], opset=9)
    imp = import_onnx(model)
    (got,) = run(imp.module, {"x": tokens}, imp.params)
    np.testing.assert_array_equal(got, [1, 1, 3, 1, 2, 1, 1])


def test_tfidf_vectorizer_refuses_string_pools(h):
    attrs = {"mode": "TF", "min_gram_length": 1, "max_gram_length": 1, "max_skip_count": 0,
             "ngram_counts": np.array([0], I64), "ngram_indexes": np.array([0], I64), "pool_strings": ["a"]}
    with pytest.raises(OnnxImportError, match="string n-grams need string tensors"):
        h.check_node("TfIdfVectorizer", [np.array([1, 2], I64)], attrs, opset=9)


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("coord", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("ratio", [0, 2])
def test_roi_align_modes_and_small_regions(h, rng, mode, coord, ratio):
    """ONNX's max (the largest weighted corner term, not the largest bilinear sample) and
    half_pixel regions smaller than a pixel (no minimum size), against onnxruntime."""
    x = h.randn(rng, 2, 3, 9, 10)  # negative values too: the corner terms' max differs from the sample's
    rois = np.array([[0, 0, 8, 8], [1.2, 0.5, 1.6, 0.9], [5, 5, 9.5, 8], [-3, 2, 12, 6], [4.1, 4.2, 4.3, 4.9]], F32)
    batch = np.array([0, 1, 0, 1, 1], I64)
    attrs = {"mode": mode, "coordinate_transformation_mode": coord, "output_height": 3, "output_width": 2,
             "sampling_ratio": ratio, "spatial_scale": 0.9}
    h.check_node("RoiAlign", [x, rois, batch], attrs, opset=16, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "attrs",
    [
        {},
        {"strides": [2, 1, 2], "pads": [1, 0, 1, 0, 1, 1], "output_padding": [1, 0, 0], "group": 2},
        {"dilations": [2, 1, 1], "auto_pad": "SAME_UPPER", "strides": [2, 2, 1]},
        {"output_shape": [5, 8, 6], "strides": [2, 2, 2]},
    ],
)
def test_conv_transpose_3d(h, rng, attrs):
    x = h.randn(rng, 2, 4, 3, 4, 3)
    w = h.randn(rng, 4, 3, 2, 3, 2)
    h.check_node("ConvTranspose", [x, w, h.randn(rng, 3 * attrs.get("group", 1))], attrs, consts=[1, 2], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "image, block, attrs",
    [([3, 4, 5], [1, 1, 5], {}), ([5, 4, 6], [2, 2, 3], {"strides": [1, 2, 1], "pads": [1, 0, 1, 0, 1, 0]})],
)
def test_col2im_3d(h, rng, image, block, attrs):
    s = attrs.get("strides", [1, 1, 1])
    p = attrs.get("pads", [0] * 6)
    d = attrs.get("dilations", [1, 1, 1])
    nb = [(image[i] + p[i] + p[i + 3] - d[i] * (block[i] - 1) - 1) // s[i] + 1 for i in range(3)]
    x = h.randn(rng, 2, 2 * int(np.prod(block)), int(np.prod(nb)))
    h.check_node("Col2Im", [x, np.array(image, I64), np.array(block, I64)], attrs, opset=18, consts=[1, 2])


def test_col2im_3d_dilated_against_onnx_reference(rng):
    """3-D Col2Im with dilations against ONNX's reference evaluator (onnxruntime 1.31 gives
    other values here, while it agrees with the reference in 2-D and without dilations)."""
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    from xrelay.testing.onnx_backend import XrelayBackend
    from xrelay.testing.onnx_models import make_model

    x = rng.standard_normal((2, 16, 48)).astype(F32)
    node = helper.make_node("Col2Im", ["x", "i", "b"], ["y"], dilations=[2, 1, 2])
    inits = {"i": np.array([6, 5, 5], I64), "b": np.array([2, 2, 2], I64)}
    model = make_model([node], {"x": (x.shape, F32)}, ["y"], inits, opset=18)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    for mode in ("interpreter", "built"):
        (got,) = XrelayBackend.prepare(model, mode=mode).run([x])
        assert got.shape == (2, 2, 6, 5, 5)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "x_shape, slope_shape, axis",
    [
        ((1, 6, 10), (1, 1), 1),  # torch's nn.PReLU(): one parameter, as (1, 1) for 3-D data
        ((2, 4, 5, 3), (1,), 1),  # ... as (1,)
        ((2, 4, 5, 3), (4, 1, 1), 1),  # nn.PReLU(4) on images
        ((2, 4, 5, 3), (3,), 3),  # numpy's broadcasting from the right: the last axis
        ((2, 4, 5, 3), (5, 1), 2),
        ((2, 4, 5, 3), (4, 5, 1), None),  # varies on two axes: where(x < 0, x * slope, x)
    ],
)
def test_prelu_slopes(h, rng, x_shape, slope_shape, axis):
    """PRelu becomes ``nn.prelu`` along the one axis its slope varies on (ONNX broadcasts it
    from the right; opset 6's channel slope, which does not broadcast so, is the ONNX suite's
    test_PReLU_*_multiparam), onnxruntime's values."""
    x = h.randn(rng, *x_shape)
    slope = (rng.standard_normal(slope_shape) * 0.3).astype(F32)
    imp = h.check_node("PRelu", [x, slope], opset=16, consts=[1])
    ops = h.relay_op_names(imp.module)
    if axis is None:
        assert "relay.nn.prelu" not in ops and "relay.where" in ops
    else:
        (prelu,) = [o for o in imp.module.walk() if getattr(o, "RELAY_NAME", "") == "nn.prelu"]
        assert int(prelu.attrs["axis"]) == axis and "relay.where" not in ops
