"""Import of Conv 1-D/3-D, 3-D pools, Resize, Upsample, GatherND, BitShift, Size,
GroupNormalization, InstanceNormalization and LpNormalization, each against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from xrelay.frontends.onnx import import_onnx
from xrelay.runtime.interpreter import run
from xrelay.testing.onnx_models import run_onnxruntime

F32 = np.float32
I64 = np.int64


def _r(rng, *shape):
    return np.asarray(rng.standard_normal(shape), dtype=F32)


@pytest.mark.parametrize(
    "attrs, xshape, wshape",
    [
        ({"pads": [1, 2]}, (2, 3, 9), (4, 3, 3)),
        ({"strides": [2], "dilations": [2], "group": 3}, (1, 3, 11), (6, 1, 2)),
        ({"auto_pad": "SAME_UPPER", "strides": [2]}, (1, 2, 7), (2, 2, 4)),
        ({"pads": [1, 0, 1, 1, 0, 1]}, (1, 2, 4, 5, 5), (3, 2, 3, 3, 3)),
        ({"strides": [1, 2, 2], "group": 2}, (1, 4, 4, 6, 6), (4, 2, 2, 2, 2)),
    ],
)
@pytest.mark.parametrize("bias", [False, True])
def test_conv_1d_3d(h, rng, attrs, xshape, wshape, bias):
    ins = [_r(rng, *xshape), _r(rng, *wshape)]
    if bias:
        ins.append(_r(rng, wshape[0]))
    imp = h.check_node("Conv", ins, attrs, consts=(1, 2), rtol=1e-4, atol=1e-4)
    assert f"relay.nn.conv{len(xshape) - 2}d" in h.relay_op_names(imp.module)


@pytest.mark.parametrize(
    "op, attrs",
    [
        ("MaxPool", {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2]}),
        ("MaxPool", {"kernel_shape": [3, 3, 3], "pads": [1, 1, 1, 1, 1, 1], "ceil_mode": 1, "strides": [2, 2, 2]}),
        ("AveragePool", {"kernel_shape": [3, 2, 3], "pads": [1, 0, 1, 1, 0, 1], "count_include_pad": 1}),
        ("AveragePool", {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2], "ceil_mode": 1}),
    ],
)
def test_pools_3d(h, rng, op, attrs):
    imp = h.check_node(op, [_r(rng, 1, 2, 5, 6, 7)], attrs, rtol=1e-5, atol=1e-5)
    assert f"relay.nn.{'max' if op == 'MaxPool' else 'avg'}_pool3d" in h.relay_op_names(imp.module)


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
def test_global_pools_3d(h, rng, op):
    imp = h.check_node(op, [_r(rng, 2, 3, 4, 5, 6)], {}, rtol=1e-5, atol=1e-5)
    assert any("adaptive" in n for n in h.relay_op_names(imp.module))


@pytest.mark.parametrize(
    "attrs, sizes",
    [
        ({"mode": "nearest"}, [1, 2, 10, 12]),
        ({"mode": "nearest", "nearest_mode": "floor", "coordinate_transformation_mode": "asymmetric"}, [1, 2, 7, 9]),
        ({"mode": "linear"}, [1, 2, 3, 9]),
        ({"mode": "linear", "coordinate_transformation_mode": "align_corners"}, [1, 2, 8, 8]),
        ({"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1}, [1, 2, 9, 4]),
        ({"mode": "cubic"}, [1, 2, 6, 10]),
    ],
)
def test_resize_sizes(h, rng, attrs, sizes):
    x = _r(rng, 1, 2, 5, 6)
    imp = h.check_node("Resize", [x, None, None, np.array(sizes, I64)], attrs, consts=(3,), rtol=1e-4, atol=1e-4)
    assert "relay.image.resize2d" in h.relay_op_names(imp.module)


def test_resize_scales_and_roi(h, rng):
    x = _r(rng, 1, 2, 4, 6)
    scales = np.array([1, 1, 2.0, 0.5], F32)
    h.check_node("Resize", [x, None, scales], {"mode": "linear"}, consts=(2,), rtol=1e-4, atol=1e-4)
    roi = np.array([0, 0, 0.2, 0.1, 1, 1, 0.8, 1.1], F32)
    attrs = {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize", "extrapolation_value": 3.0}
    h.check_node("Resize", [x, roi, None, np.array([1, 2, 5, 5], I64)], attrs, consts=(1, 3), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_upsample(h, rng, mode):
    x = _r(rng, 1, 2, 3, 4)
    imp = h.check_node("Upsample", [x, np.array([1, 1, 2, 3], F32)], {"mode": mode}, consts=(1,), opset=9)
    assert "relay.nn.upsampling" in h.relay_op_names(imp.module)


@pytest.mark.parametrize("batch_dims", [0, 1])
def test_gather_nd(h, rng, batch_dims):
    data = _r(rng, 2, 3, 4)
    idx = np.stack([rng.integers(-3, 3, size=(2, 5)), rng.integers(0, 4, size=(2, 5))], axis=-1).astype(I64)
    if batch_dims == 0:
        idx = np.stack([rng.integers(-2, 2, size=(5,)), rng.integers(0, 3, size=(5,))], axis=-1).astype(I64)
    imp = h.check_node("GatherND", [data, idx], {"batch_dims": batch_dims})
    assert "relay.gather_nd" in h.relay_op_names(imp.module)


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint32])
def test_bit_shift(h, rng, direction, dtype):
    x = rng.integers(0, 200, size=(3, 4)).astype(dtype)
    s = rng.integers(0, 4, size=(4,)).astype(dtype)
    h.check_node("BitShift", [x, s], {"direction": direction}, out_dtypes=[dtype])


def test_size(h, rng):
    imp = h.check_node("Size", [_r(rng, 2, 3, 4)], {}, out_dtypes=[I64])
    assert "relay.ndarray_size" in h.relay_op_names(imp.module)


@pytest.mark.parametrize("opset", [18, 21])
def test_group_normalization(rng, opset):
    # ONNX's shape inference cannot type GroupNormalization's output: the model is built with it
    x = _r(rng, 2, 6, 4, 4)
    n = 3 if opset == 18 else 6  # opset 18: one scale and bias per group
    scale, bias = _r(rng, n), _r(rng, n)
    node = helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=3, epsilon=1e-5)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(x.shape))],
        [numpy_helper.from_array(scale, "s"), numpy_helper.from_array(bias, "b")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    (want,) = run_onnxruntime(model, {"x": x})
    imp = import_onnx(model)
    (got,) = run(imp.module, {"x": x}, imp.params)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert any(op.name == "relay.nn.group_norm" for op in imp.module.walk())


def test_instance_normalization(h, rng):
    ins = [_r(rng, 2, 3, 5, 4), _r(rng, 3), _r(rng, 3)]
    h.check_node("InstanceNormalization", ins, {"epsilon": 1e-3}, consts=(1, 2), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("p, axis", [(2, -1), (2, 1), (1, 0)])
def test_lp_normalization(h, rng, p, axis):
    imp = h.check_node("LpNormalization", [_r(rng, 3, 4, 5)], {"p": p, "axis": axis}, rtol=1e-5, atol=1e-5)
    if p == 2:
        assert "relay.nn.l2_normalize" in h.relay_op_names(imp.module)
