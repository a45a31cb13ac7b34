"""``fake-quantization-to-integer{onnxruntime=true}``: int8 programs that give onnxruntime's bits.

onnxruntime fuses a QDQ model's DequantizeLinear -> op -> QuantizeLinear groups into QLinearConv,
QGemm, QLinearMatMul, QLinearAdd, QLinearMul, QLinearGlobalAveragePool and QLinearSoftmax; each
test runs a model through onnxruntime and through xrelay (weights bound, the pass, -O3, arena
runtime) and requires the same output bits, not just closeness.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from xrelay import relay
from xrelay.frontends.onnx import from_onnx
from xrelay.testing import onnx_models as om
from xrelay.testing import quantized_models as qm

RNG = np.random.default_rng(5)


def _qdq_model(nodes, inputs, inits):
    graph = helper.make_graph(
        nodes, "q", [helper.make_tensor_value_info(*i) for i in inputs],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _same_bits(model, feeds):
    m = qm.build(model, integer=True)
    for feed in feeds:
        ref, out = qm.compare(model, feed, m)
        assert ref.dtype == out.dtype and np.array_equal(ref, out), np.flatnonzero(ref != out)[:10]


def _p(name, value):
    return name, np.asarray(value)


def test_conv_add_pool_gemm_mul_softmax_give_onnxruntime_bits():
    """Every fused QDQ kernel at once; the zero points are odd (where a zero point added before
    rounding rounds ties the other way)."""
    f32 = np.float32
    inits = dict([
        _p("sx", f32(0.031)), _p("zx", np.uint8(131)),
        _p("w", RNG.integers(-127, 128, (8, 4, 3, 3)).astype(np.int8)), _p("sw", RNG.uniform(0.004, 0.02, 8).astype(f32)),
        _p("zw", np.zeros(8, np.int8)), _p("b", RNG.integers(-900, 900, 8).astype(np.int32)),
        _p("sb", (f32(0.031) * RNG.uniform(0.004, 0.02, 8)).astype(f32)), _p("zb", np.zeros(8, np.int32)),
        _p("sc", f32(0.057)), _p("zc", np.uint8(77)),
        _p("dw", RNG.integers(-127, 128, (8, 1, 3, 3)).astype(np.int8)), _p("sdw", f32(0.013)), _p("zdw", np.int8(0)),
        _p("sd", f32(0.049)), _p("zd", np.uint8(101)),
        _p("sa", f32(0.063)), _p("za", np.uint8(119)),
        _p("sg", f32(0.021)), _p("zg", np.uint8(3)),
        _p("fw", RNG.integers(-127, 128, (6, 8)).astype(np.int8)), _p("sfw", f32(0.01)), _p("zfw", np.int8(0)),
        _p("sf", f32(0.11)), _p("zf", np.uint8(129)),
        _p("sm", f32(0.23)), _p("zm", np.uint8(97)),
        _p("ss", f32(1 / 256)), _p("zs", np.uint8(0)),
    ])  # fmt: skip
    n = helper.make_node
    nodes = [
        n("QuantizeLinear", ["x", "sx", "zx"], ["qx"]), n("DequantizeLinear", ["qx", "sx", "zx"], ["fx"]),
        n("DequantizeLinear", ["w", "sw", "zw"], ["fw_"], axis=0), n("DequantizeLinear", ["b", "sb", "zb"], ["fb"], axis=0),
        n("Conv", ["fx", "fw_", "fb"], ["c"], pads=[1, 1, 1, 1]),
        n("QuantizeLinear", ["c", "sc", "zc"], ["qc"]), n("DequantizeLinear", ["qc", "sc", "zc"], ["fc"]),
        n("DequantizeLinear", ["dw", "sdw", "zdw"], ["fdw"]), n("Conv", ["fc", "fdw"], ["d"], pads=[1, 1, 1, 1], group=8),
        n("QuantizeLinear", ["d", "sd", "zd"], ["qd"]), n("DequantizeLinear", ["qd", "sd", "zd"], ["fd"]),
        n("Add", ["fd", "fc"], ["a"]), n("QuantizeLinear", ["a", "sa", "za"], ["qa"]), n("DequantizeLinear", ["qa", "sa", "za"], ["fa"]),
        n("GlobalAveragePool", ["fa"], ["g"]), n("QuantizeLinear", ["g", "sg", "zg"], ["qg"]),
        n("DequantizeLinear", ["qg", "sg", "zg"], ["fg"]), n("Flatten", ["fg"], ["fl"]),
        n("DequantizeLinear", ["fw", "sfw", "zfw"], ["ffw"]), n("Gemm", ["fl", "ffw"], ["f"], transB=1),
        n("QuantizeLinear", ["f", "sf", "zf"], ["qf"]), n("DequantizeLinear", ["qf", "sf", "zf"], ["ff"]),
        n("Mul", ["ff", "ff"], ["m"]), n("QuantizeLinear", ["m", "sm", "zm"], ["qm"]), n("DequantizeLinear", ["qm", "sm", "zm"], ["fm"]),
        n("Softmax", ["fm"], ["s"], axis=-1), n("QuantizeLinear", ["s", "ss", "zs"], ["y"]),
    ]  # fmt: skip
    model = _qdq_model(nodes, [("x", TensorProto.FLOAT, [2, 4, 9, 9])], inits)
    _same_bits(model, [{"x": RNG.normal(size=(2, 4, 9, 9)).astype(np.float32) * 2} for _ in range(3)])


def test_quantize_rounds_half_to_even():
    """QuantizeLinear of exact halves: onnxruntime rounds to even (qnn.quantize half away)."""
    inits = {"s": np.float32(0.5), "z": np.uint8(3)}
    model = _qdq_model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])], [("x", TensorProto.FLOAT, [8])], inits)
    _same_bits(model, [{"x": np.array([0.25, 0.75, 1.25, -0.25, -0.75, 3.0, 200.0, -9.0], np.float32)}])


def test_ties_round_half_to_even_after_the_product():
    """Scales whose requantize multiplier is 0.5 and whose add ratios are 0.5: every odd
    accumulator is a tie. onnxruntime rounds them to even before adding the (odd) zero point;
    Relay's requantize (half up, zero point first) differs on about half of them."""
    f32 = np.float32
    inits = {
        "sx": f32(0.5), "zx": np.uint8(0), "w": RNG.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8),
        "sw": f32(0.25), "zw": np.int8(0), "sc": f32(0.25), "zc": np.uint8(101), "sa": f32(0.5), "za": np.uint8(33),
    }
    n = helper.make_node
    nodes = [
        n("DequantizeLinear", ["x", "sx", "zx"], ["fx"]), n("DequantizeLinear", ["w", "sw", "zw"], ["fw"]),
        n("Conv", ["fx", "fw"], ["c"], pads=[1, 1, 1, 1]), n("QuantizeLinear", ["c", "sc", "zc"], ["qc"]),
        n("DequantizeLinear", ["qc", "sc", "zc"], ["fc"]), n("Add", ["fc", "fc"], ["a"]),
        n("QuantizeLinear", ["a", "sa", "za"], ["y"]),
    ]  # fmt: skip
    model = _qdq_model(nodes, [("x", TensorProto.UINT8, [1, 3, 6, 6])], inits)
    _same_bits(model, [{"x": RNG.integers(0, 3, (1, 3, 6, 6)).astype(np.uint8)}])


@pytest.mark.parametrize("per_channel", [False, True])
def test_quantize_static_mobilenet_v2_gives_onnxruntime_bits(per_channel):
    """A random-weight MobileNetV2 turns one step of difference into dozens within a few blocks
    (Relay's requantize agreed on 58-63 % of the outputs): only the same bits agree."""
    f32 = om.mobilenet_v2(image=32, num_classes=10, width=0.5)
    q = qm.quantize(f32, qm.calibration_inputs(f32, 2), per_channel=per_channel)
    _same_bits(q, qm.calibration_inputs(f32, 2, seed=9))


def test_quantize_static_bert_layer_gives_onnxruntime_bits():
    f32 = om.bert_layer(seq=16, hidden=64, heads=4)
    q = qm.quantize(f32, qm.calibration_inputs(f32, 2), per_channel=True)
    _same_bits(q, qm.calibration_inputs(f32, 2, seed=9))


def test_relay_mode_is_unchanged_and_the_option_is_on_the_cli():
    """Without the option the pass writes Relay's qnn.requantize / qnn.add as before."""
    f32 = om.resnet18(image=32, num_classes=10)
    q = qm.quantize(f32, qm.calibration_inputs(f32, 1))
    mod, _ = from_onnx(q, freeze_params=True)
    ort_mod = mod.clone()
    relay.transform.FakeQuantizationToInteger()(mod)
    text = str(mod)
    assert text.count("qnn.requantize") >= 20 and "qnn.add" in text
    relay.transform.FakeQuantizationToInteger(onnxruntime=True)(ort_mod)
    text = str(ort_mod)
    assert "qnn.requantize" not in text and "qnn.add" not in text and text.count("qnn.conv2d") == 20
