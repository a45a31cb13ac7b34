"""ONNX quantized operators and onnxruntime-quantized models against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import xrelay
from xrelay.frontends.onnx import from_onnx
from xrelay.testing import onnx_models as om
from xrelay.testing import quantized_models as qm

RNG = np.random.default_rng(11)
# random int8 weights onnxruntime multiplies exactly on this CPU (7 bits where its uint8 x int8
# products saturate: quantized_models.ort_u8s8_exact)
W8 = qm.int8_weight_bounds()


def _model(nodes, inputs, outputs, inits, opset=13):
    graph = helper.make_graph(nodes, "q", inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _run_both(model, feeds):
    ref = om.run_onnxruntime(model, feeds)
    mod, params = from_onnx(model)
    out = xrelay.run(mod, feeds, params)
    return ref, out


def test_qlinear_conv_and_matmul_match_onnxruntime():
    inits = {
        "xs": np.array(0.05, np.float32), "xz": np.array(120, np.uint8),
        "w": RNG.integers(*W8, (6, 3, 3, 3)).astype(np.int8),
        "ws": RNG.uniform(0.005, 0.02, 6).astype(np.float32), "wz": np.zeros(6, np.int8),
        "ys": np.array(0.2, np.float32), "yz": np.array(100, np.uint8),
        "b": RNG.integers(-500, 500, 6).astype(np.int32),
        "m": RNG.integers(*W8, (6 * 4 * 4, 5)).astype(np.int8), "ms": np.array(0.01, np.float32),
        "mz": np.array(0, np.int8), "os": np.array(0.5, np.float32), "oz": np.array(128, np.uint8),
        "shape": np.array([1, 96], np.int64),
    }  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["q"]),
        helper.make_node("QLinearConv", ["q", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Reshape", ["c", "shape"], ["f"]),
        helper.make_node("QLinearMatMul", ["f", "ys", "yz", "m", "ms", "mz", "os", "oz"], ["mm"]),
        helper.make_node("DequantizeLinear", ["mm", "os", "oz"], ["y"]),
    ]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])], inits)  # fmt: skip
    for seed in range(3):
        feeds = {"x": np.random.default_rng(seed).normal(size=(1, 3, 8, 8)).astype(np.float32) * 2}
        ref, out = _run_both(model, feeds)
        steps = np.abs(ref[0] - out[0]) / 0.5
        assert steps.max() <= 1.0 + 1e-6, steps


def test_conv_integer_and_matmul_integer_are_exact():
    inits = {
        "w": RNG.integers(*W8, (4, 2, 3, 3)).astype(np.int8), "wz": np.array(3, np.int8),
        "xz": np.array(7, np.uint8), "b": RNG.integers(0, 256, (3, 4)).astype(np.uint8), "bz": np.array(9, np.uint8),
    }  # fmt: skip
    nodes = [
        helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["c"]),
        helper.make_node("MatMulInteger", ["a", "b", "xz", "bz"], ["m"]),
    ]
    model = _model(
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 2, 5, 5]),
         helper.make_tensor_value_info("a", TensorProto.UINT8, [2, 3])],
        [helper.make_tensor_value_info("c", TensorProto.INT32, [1, 4, 3, 3]),
         helper.make_tensor_value_info("m", TensorProto.INT32, [2, 4])],
        inits, opset=10,
    )  # fmt: skip
    feeds = {"x": RNG.integers(0, 256, (1, 2, 5, 5)).astype(np.uint8), "a": RNG.integers(0, 256, (2, 3)).astype(np.uint8)}
    ref, out = _run_both(model, feeds)
    for r, o in zip(ref, out, strict=True):
        np.testing.assert_array_equal(o, r)


def test_qlinear_add_and_per_axis_dequantize():
    inits = {
        "s": np.array(0.1, np.float32), "z": np.array(3, np.uint8), "cs": np.array(0.15, np.float32),
        "cz": np.array(10, np.uint8), "ds": np.array([0.1, 0.2], np.float32), "dz": np.array([1, 2], np.uint8),
    }  # fmt: skip
    nodes = [
        helper.make_node("QLinearAdd", ["a", "s", "z", "b", "s", "z", "cs", "cz"], ["c"]),
        helper.make_node("DequantizeLinear", ["c", "ds", "dz"], ["y"], axis=1),
    ]
    model = _model(
        nodes,
        [helper.make_tensor_value_info(n, TensorProto.UINT8, [3, 2]) for n in ("a", "b")],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])],
        inits,
    )  # fmt: skip
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    model.graph.node[0].domain = "com.microsoft"
    feeds = {n: RNG.integers(0, 256, (3, 2)).astype(np.uint8) for n in ("a", "b")}
    ref = om.run_onnxruntime(model, feeds)[0]
    model.graph.node[0].domain = ""  # xrelay imports ai.onnx-domain nodes only (a known limit)
    mod, params = from_onnx(model)
    out = xrelay.run(mod, feeds, params)[0]
    assert np.abs(ref - out).max() <= 0.2 + 1e-6  # at most one output step (0.15) times the 0.2 dequant scale


@pytest.mark.parametrize("per_channel", [False, True])
def test_quantize_static_resnet_matches_onnxruntime(per_channel):
    f32 = om.resnet18(image=32, num_classes=10)
    q = qm.quantize(f32, qm.calibration_inputs(f32, 2), per_channel=per_channel)
    assert {"QuantizeLinear", "DequantizeLinear"} <= {n.op_type for n in q.graph.node}
    m = qm.build(q)
    step = qm.output_step(q)
    for feed in qm.calibration_inputs(f32, 2, seed=5):
        ref, out = qm.compare(q, feed, m)
        steps = qm.quantization_steps(ref, out, step)
        assert (steps <= 1).mean() >= 0.999
        assert ref.argmax() == out.argmax()
