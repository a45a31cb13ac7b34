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

import xrelay
from xrelay import relay
from xrelay.frontends.onnx import from_onnx
from xrelay.runtime.interpreter import run
from xrelay.testing import onnx_models as om
from xrelay.testing import quantized_models as qm
from xrelay.transforms.fake_quantization_to_integer import FakeQuantizationToIntegerPass

RNG = np.random.default_rng(5)
# random int8 weights onnxruntime multiplies exactly on this CPU (7 bits where its uint8 x int8
# products saturate: quantized_models.ort_u8s8_exact)
W8 = qm.int8_weight_bounds()


def _qdq_model(nodes, inputs, inits):
    graph = helper.make_graph(
        nodes, "q", [helper.make_tensor_value_info(*i) for i in inputs],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _same_bits(model, feeds, ort_isa_dependent: bool = False):
    """onnxruntime's bits on every feed. ``ort_isa_dependent``: a graph whose onnxruntime
    result depends on its kernels' ISA; where its uint8 x int8 products are not VNNI's
    (``qm.ort_u8s8_exact``) the arena's bits are checked against the reference interpreter on
    the same integer module (onnxruntime's VNNI arithmetic) instead."""
    m = qm.build(model, integer=True)
    for feed in feeds:
        ref, out = qm.compare(model, feed, m)
        assert ref.dtype == out.dtype and ref.max() > ref.min()
        if ort_isa_dependent and not qm.ort_u8s8_exact():
            mod, params = from_onnx(model, freeze_params=True)
            FakeQuantizationToIntegerPass(onnxruntime=True).apply(None, mod.module)
            want = np.asarray(run(mod, feed, params)[0])
            assert np.array_equal(want, np.asarray(out)) and ref.argmax(axis=-1).tolist() == want.argmax(axis=-1).tolist()
        else:
            assert np.array_equal(ref, out), np.flatnonzero(ref != out)[:10]


def _p(name, value):
    return name, np.asarray(value)


def test_conv_add_pool_gemm_mul_softmax_give_onnxruntime_bits():
    """Every fused QDQ kernel at once; the zero points are odd (where a zero point added before
    rounding rounds ties the other way)."""
    f32 = np.float32
    inits = dict([
        _p("sx", f32(0.031)), _p("zx", np.uint8(131)),
        _p("w", RNG.integers(*W8, (8, 4, 3, 3)).astype(np.int8)), _p("sw", RNG.uniform(0.004, 0.02, 8).astype(f32)),
        _p("zw", np.zeros(8, np.int8)), _p("b", RNG.integers(-900, 900, 8).astype(np.int32)),
        _p("sb", (f32(0.031) * RNG.uniform(0.004, 0.02, 8)).astype(f32)), _p("zb", np.zeros(8, np.int32)),
        _p("sc", f32(0.057)), _p("zc", np.uint8(77)),
        _p("dw", RNG.integers(*W8, (8, 1, 3, 3)).astype(np.int8)), _p("sdw", f32(0.013)), _p("zdw", np.int8(0)),
        _p("sd", f32(0.049)), _p("zd", np.uint8(101)),
        _p("sa", f32(0.063)), _p("za", np.uint8(119)),
        _p("sg", f32(0.021)), _p("zg", np.uint8(3)),
        _p("fw", RNG.integers(*W8, (6, 8)).astype(np.int8)), _p("sfw", f32(0.01)), _p("zfw", np.int8(0)),
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
    _same_bits(model, [{"x": RNG.normal(size=(2, 4, 9, 9)).astype(np.float32) * 2} for _ in range(3)], True)


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
        "sx": f32(0.5), "zx": np.uint8(0), "w": RNG.integers(*W8, (4, 3, 3, 3)).astype(np.int8),
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
def test_convolution_and_gemm_channel_blocks_give_onnxruntime_bits(per_channel):
    """The int8 product's register blocks: 40 output channels are a pair of 16-channel blocks
    and a partial one, 63 pixels (7 x 9) eight groups of eight and a partial group; a 3x3
    convolution (tiles of im2row rows), a 1x1 one (the image's rows) and a Gemm (pixel-major
    rows), each requantized inside the product, per tensor or per output channel."""
    f32 = np.float32
    o = 40

    def scales(n):
        return RNG.uniform(0.002, 0.02, n).astype(f32) if per_channel else f32(0.011)

    def zeros(n):
        return np.zeros(n, np.int8) if per_channel else np.int8(0)

    inits = dict([
        _p("sx", f32(0.029)), _p("zx", np.uint8(117)),
        _p("w1", RNG.integers(*W8, (o, 5, 3, 3)).astype(np.int8)), _p("sw1", scales(o)), _p("zw1", zeros(o)),
        _p("s1", f32(0.083)), _p("z1", np.uint8(125)),
        _p("w2", RNG.integers(*W8, (o, o, 1, 1)).astype(np.int8)), _p("sw2", scales(o)), _p("zw2", zeros(o)),
        _p("s2", f32(0.31)), _p("z2", np.uint8(131)),
        _p("w3", RNG.integers(*W8, (o, o * 63)).astype(np.int8)), _p("sw3", scales(o)), _p("zw3", zeros(o)),
        _p("sy", f32(2.9)), _p("zy", np.uint8(97)),
    ])  # fmt: skip
    n = helper.make_node
    nodes = [
        n("QuantizeLinear", ["x", "sx", "zx"], ["qx"]), n("DequantizeLinear", ["qx", "sx", "zx"], ["fx"]),
        n("DequantizeLinear", ["w1", "sw1", "zw1"], ["fw1"], axis=0), n("Conv", ["fx", "fw1"], ["c1"], pads=[1, 1, 1, 1]),
        n("QuantizeLinear", ["c1", "s1", "z1"], ["q1"]), n("DequantizeLinear", ["q1", "s1", "z1"], ["f1"]),
        n("DequantizeLinear", ["w2", "sw2", "zw2"], ["fw2"], axis=0), n("Conv", ["f1", "fw2"], ["c2"]),
        n("QuantizeLinear", ["c2", "s2", "z2"], ["q2"]), n("DequantizeLinear", ["q2", "s2", "z2"], ["f2"]),
        n("Flatten", ["f2"], ["fl"]), n("DequantizeLinear", ["w3", "sw3", "zw3"], ["fw3"], axis=0),
        n("Gemm", ["fl", "fw3"], ["g"], transB=1), n("QuantizeLinear", ["g", "sy", "zy"], ["y"]),
    ]  # fmt: skip
    model = _qdq_model(nodes, [("x", TensorProto.FLOAT, [3, 5, 7, 9])], inits)
    _same_bits(model, [{"x": RNG.normal(size=(3, 5, 7, 9)).astype(np.float32) * 2} for _ in range(2)])


def _conv_after_a_convolution(shape, mid, w, per_channel, **conv):
    """x -> QuantizeLinear -> a 1x1 convolution to ``mid`` channels -> the convolution of the
    int8 weight ``w`` (its attributes ``conv``) -> y, in QDQ form. The second convolution's
    input comes from a convolution, so its pad (the zero point) is read through, not made."""
    f32 = np.float32
    o = w.shape[0]
    inits = dict([
        _p("sx", f32(0.027)), _p("zx", np.uint8(121)),
        _p("w0", RNG.integers(*W8, (mid, shape[1], 1, 1)).astype(np.int8)), _p("sw0", f32(0.02)),
        _p("zw0", np.int8(0)), _p("s0", f32(0.031)), _p("z0", np.uint8(109)),
        _p("w", w), _p("sw", RNG.uniform(0.002, 0.02, o).astype(f32) if per_channel else f32(0.009)),
        _p("zw", np.zeros(o, np.int8) if per_channel else np.int8(0)),
        _p("sy", f32(0.17)), _p("zy", np.uint8(131)),
    ])  # fmt: skip
    n = helper.make_node
    nodes = [
        n("QuantizeLinear", ["x", "sx", "zx"], ["qx"]), n("DequantizeLinear", ["qx", "sx", "zx"], ["fx"]),
        n("DequantizeLinear", ["w0", "sw0", "zw0"], ["fw0"]), n("Conv", ["fx", "fw0"], ["c0"]),
        n("QuantizeLinear", ["c0", "s0", "z0"], ["q0"]), n("DequantizeLinear", ["q0", "s0", "z0"], ["f0"]),
        n("DequantizeLinear", ["w", "sw", "zw"], ["fw"], axis=0), n("Conv", ["f0", "fw"], ["c"], **conv),
        n("QuantizeLinear", ["c", "sy", "zy"], ["y"]),
    ]  # fmt: skip
    return _qdq_model(nodes, [("x", TensorProto.FLOAT, list(shape))], inits)


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("channels, kernel, stride, dilation", [(3, 7, 2, 1), (1, 5, 1, 1), (4, 3, 1, 3), (2, 3, 2, 1)])
def test_few_channel_convolutions_give_onnxruntime_bits(channels, kernel, stride, dilation, per_channel):
    """Convolutions of up to 4 input channels (a stem: 3 channels, 7x7, stride 2) build their
    im2row rows from the image's planes: whole kernel rows by byte permutation inside the
    image, tap by tap at its borders, where the padded taps read the zero point."""
    w = RNG.integers(*W8, (24, channels, kernel, kernel)).astype(np.int8)
    pad = dilation * (kernel - 1) // 2
    shape = (2, channels, 23, 29)
    model = _conv_after_a_convolution(
        shape, channels, w, per_channel, pads=[pad] * 4, strides=[stride] * 2, dilations=[dilation] * 2
    )
    _same_bits(model, [{"x": RNG.normal(size=shape).astype(np.float32) * 2} for _ in range(2)])


@pytest.mark.parametrize("pool", [(3, 2, 1), (2, 2, 0), (3, 1, 1)])
def test_max_pool_of_a_quantized_convolution_gives_onnxruntime_bits(pool):
    """DequantizeLinear -> MaxPool -> QuantizeLinear with one scale is onnxruntime's 8-bit
    MaxPool; xrelay pools the 8-bit values in C (ResNet's 3x3/2 after its stem)."""
    f32 = np.float32
    k, s, pad = pool
    inits = dict([
        _p("sx", f32(0.027)), _p("zx", np.uint8(121)),
        _p("w", RNG.integers(*W8, (16, 3, 3, 3)).astype(np.int8)), _p("sw", f32(0.009)), _p("zw", np.int8(0)),
        _p("sc", f32(0.05)), _p("zc", np.uint8(140)),
    ])  # fmt: skip
    n = helper.make_node
    nodes = [
        n("QuantizeLinear", ["x", "sx", "zx"], ["qx"]), n("DequantizeLinear", ["qx", "sx", "zx"], ["fx"]),
        n("DequantizeLinear", ["w", "sw", "zw"], ["fw"]), n("Conv", ["fx", "fw"], ["c"], pads=[1, 1, 1, 1]),
        n("QuantizeLinear", ["c", "sc", "zc"], ["qc"]), n("DequantizeLinear", ["qc", "sc", "zc"], ["fc"]),
        n("MaxPool", ["fc"], ["m"], kernel_shape=[k, k], strides=[s, s], pads=[pad] * 4),
        n("QuantizeLinear", ["m", "sc", "zc"], ["y"]),
    ]  # fmt: skip
    shape = (2, 3, 15, 14)
    model = _qdq_model(nodes, [("x", TensorProto.FLOAT, list(shape))], inits)
    _same_bits(model, [{"x": RNG.normal(size=shape).astype(np.float32) * 2} for _ in range(2)])


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("kernel, stride, width", [(3, 1, 37), (3, 2, 37), (5, 1, 20), (5, 2, 9), (7, 1, 16), (3, 1, 5)])
def test_depthwise_convolutions_give_onnxruntime_bits(kernel, stride, width, per_channel):
    """Depthwise convolutions (groups = channels) of 3x3, 5x5 and 7x7 kernels (one or two
    groups of four taps per kernel row), stride 1 and 2, rows shorter and longer than the
    kernel's 16 output columns; the pad (the zero point) is read through, and the requantize
    runs in the kernel's registers."""
    c = 6
    w = RNG.integers(*W8, (c, 1, kernel, kernel)).astype(np.int8)
    shape = (2, 3, 11, width)
    model = _conv_after_a_convolution(shape, c, w, per_channel, pads=[kernel // 2] * 4, strides=[stride] * 2, group=c)
    _same_bits(model, [{"x": RNG.normal(size=shape).astype(np.float32) * 2} for _ in range(2)])


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
    mod = relay.transform.FakeQuantizationToInteger()(mod)
    text = str(mod)
    assert text.count("qnn.requantize") >= 20 and "qnn.add" in text
    ort_mod = relay.transform.FakeQuantizationToInteger(onnxruntime=True)(ort_mod)
    text = str(ort_mod)
    assert "qnn.requantize" not in text and "qnn.add" not in text and text.count("qnn.conv2d") == 20


def _float_bits(model, feeds, outputs=1):
    """Every listed output equal to onnxruntime's bit for bit (float32 compared as bits)."""
    m = qm.build(model, integer=True)
    for feed in feeds:
        refs = om.run_onnxruntime(model, feed)
        for name, value in feed.items():
            m.set_input(name, value)
        m.run()
        for k in range(outputs):
            ref, out = refs[k], m.get_output(k)
            out = np.asarray(out).reshape(ref.shape)
            assert ref.dtype == out.dtype and np.isfinite(ref).all() and (ref.size == 1 or ref.max() > ref.min())
            assert np.array_equal(ref.view(np.uint8), out.view(np.uint8)), (k, np.flatnonzero(ref != out)[:10])


@pytest.mark.parametrize("op", ["ReduceMean", "ReduceSum"])
@pytest.mark.parametrize(
    "shape, axes",
    [((1, 37, 7, 7), [2, 3]), ((1, 24, 13, 13), [2, 3]), ((2, 9, 14, 14), [2, 3]), ((1, 8, 2, 3), [2, 3]),
     ((1, 5, 1, 3), [2, 3]), ((3, 5, 2, 2), [-1, -2]), ((6, 13), [1]), ((5, 12), [1]), ((7, 21), [0, 1]),
     ((9, 6, 5), [0]), ((4, 3, 10), [0, 1])],
)  # fmt: skip
def test_float_reductions_of_dequantized_values_add_in_onnxruntimes_order(op, shape, axes):
    """A float ReduceMean/ReduceSum between DequantizeLinear and the output (onnxruntime has no
    QDQ kernel for it): over trailing axes onnxruntime's Eigen sum (aligned 4-float packets in
    two accumulators, then the lanes, then the unaligned head and the tail; rows of a length
    that is not a multiple of 4 start at different alignments), over leading axes one row after
    another. numpy's pairwise mean agrees on 20-80 % of such rows; here every bit must."""
    f32 = np.float32
    inits = {"s": f32(0.037), "z": np.uint8(131)}
    if op == "ReduceSum":
        inits["axes"] = np.array(axes, np.int64)
        reduce = helper.make_node("ReduceSum", ["d", "axes"], ["y"], keepdims=1)
    else:
        reduce = helper.make_node("ReduceMean", ["d"], ["y"], axes=axes, keepdims=1)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
        helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"]), reduce,
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes, "r", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    feeds = [{"x": RNG.normal(size=shape).astype(f32) * 3} for _ in range(3)]
    _float_bits(model, feeds)
    # the reference kernels (qnn.dequantize_sum's order) give the same bits in the interpreter
    mod, _ = from_onnx(model, freeze_params=True)
    mod = relay.transform.FakeQuantizationToInteger(onnxruntime=True)(mod)
    assert "qnn.dequantize_sum" in str(mod)
    for feed in feeds:
        ref = om.run_onnxruntime(model, feed)[0]
        out = np.asarray(xrelay.run(mod, feed)[0]).reshape(ref.shape)
        assert np.array_equal(ref.view(np.uint32), out.view(np.uint32))


def test_squeeze_excitation_mean_adds_channels_last_and_its_mul_adds_the_zero_point_first():
    """A squeeze-and-excitation block after a quantized convolution and its SiLU (a chain of
    some 30 ops once quantized): onnxruntime runs the convolutions channels-last, and with them
    the ReduceMean between them (each channel's positions added one after another); the
    pooling ReduceMean that leaves for a Flatten runs NCHW again (Eigen's order). The means are
    outputs too, so every bit shows. The Mul's scales make every odd product a tie (multiplier
    ``0.0371 * 0.5 / 0.0371 = 0.5``): QLinearMul adds the odd zero point before rounding half
    to even, so a zero point added after the rounding is off by one on them."""
    model = _squeeze_excitation_model(12, 13)
    _float_bits(model, [{"x": RNG.normal(size=(1, 3, 13, 13)).astype(np.float32) * 2} for _ in range(3)], outputs=3)


def test_squeeze_excitation_mean_never_makes_the_float_map():
    """The channels-last mean is one ``qnn.dequantize_sum`` of the uint8 map: no float32
    tensor of the map's size (or of its running sums) exists anywhere in the built program,
    and the bits are still onnxruntime's."""
    import re

    c, size = 16, 96
    model = _squeeze_excitation_model(c, size)
    feeds = [{"x": RNG.normal(size=(1, 3, size, size)).astype(np.float32) * 2}]
    _float_bits(model, feeds, outputs=3)
    m = qm.build(model, integer=True)
    module = m.executor.module
    assert "qnn.dequantize_sum" in str(module) and "relay.cumsum" not in str(module)
    main = next(op for op in module.ops if getattr(op, "sym_name", None) and op.sym_name.data == "main")
    # the values that pass between steps (the arena's): none is a float map
    float_maps = [t for t in re.findall(r"tensor<([0-9x]+)xf32>", str(main))
                  if np.prod([int(d) for d in t.split("x")]) >= c * size * size // 4]  # fmt: skip
    assert not float_maps, float_maps


def _squeeze_excitation_model(c, size):
    """The block below on a 1 x 3 x ``size`` x ``size`` input, ``c`` channels."""
    f32 = np.float32
    inits = dict([
        _p("sx", f32(0.027)), _p("zx", np.uint8(121)),
        _p("w0", RNG.integers(*W8, (c, 3, 3, 3)).astype(np.int8)), _p("sw0", f32(0.02)), _p("zw0", np.int8(0)),
        _p("s0", f32(0.0371)), _p("z0", np.uint8(99)),
        _p("ss", f32(1 / 256)), _p("zs", np.uint8(0)), _p("su", f32(0.0297)), _p("zu", np.uint8(9)),
        _p("sm", f32(0.031)), _p("zm", np.uint8(7)),
        _p("w1", RNG.integers(*W8, (c, c, 1, 1)).astype(np.int8)), _p("sw1", f32(0.004)), _p("zw1", np.int8(0)),
        _p("s1", f32(0.5)), _p("z1", np.uint8(128)),
        _p("s2", f32(0.0371)), _p("z2", np.uint8(101)),
        _p("w3", RNG.integers(*W8, (c, c, 1, 1)).astype(np.int8)), _p("sw3", f32(0.003)), _p("zw3", np.int8(0)),
        _p("s3", f32(0.09)), _p("z3", np.uint8(117)),
    ])  # fmt: skip
    n = helper.make_node
    nodes = [
        n("QuantizeLinear", ["x", "sx", "zx"], ["qx"]), n("DequantizeLinear", ["qx", "sx", "zx"], ["fx"]),
        n("DequantizeLinear", ["w0", "sw0", "zw0"], ["fw0"]), n("Conv", ["fx", "fw0"], ["c0"], pads=[1, 1, 1, 1]),
        n("QuantizeLinear", ["c0", "s0", "z0"], ["q0"]), n("DequantizeLinear", ["q0", "s0", "z0"], ["f0"]),
        n("Sigmoid", ["f0"], ["sg"]), n("QuantizeLinear", ["sg", "ss", "zs"], ["qsg"]),
        n("DequantizeLinear", ["qsg", "ss", "zs"], ["fsg"]), n("Mul", ["f0", "fsg"], ["silu"]),
        n("QuantizeLinear", ["silu", "su", "zu"], ["qsilu"]), n("DequantizeLinear", ["qsilu", "su", "zu"], ["fsilu"]),
        n("ReduceMean", ["fsilu"], ["se"], axes=[2, 3], keepdims=1),
        n("QuantizeLinear", ["se", "sm", "zm"], ["qse"]), n("DequantizeLinear", ["qse", "sm", "zm"], ["fse"]),
        n("DequantizeLinear", ["w1", "sw1", "zw1"], ["fw1"]), n("Conv", ["fse", "fw1"], ["c1"]),
        n("QuantizeLinear", ["c1", "s1", "z1"], ["q1"]), n("DequantizeLinear", ["q1", "s1", "z1"], ["f1"]),
        n("Mul", ["f0", "f1"], ["m"]), n("QuantizeLinear", ["m", "s2", "z2"], ["q2"]),
        n("DequantizeLinear", ["q2", "s2", "z2"], ["f2"]),
        n("DequantizeLinear", ["w3", "sw3", "zw3"], ["fw3"]), n("Conv", ["f2", "fw3"], ["c3"]),
        n("QuantizeLinear", ["c3", "s3", "z3"], ["q3"]), n("DequantizeLinear", ["q3", "s3", "z3"], ["f3"]),
        n("ReduceMean", ["f3"], ["pool"], axes=[2, 3], keepdims=1), n("Flatten", ["pool"], ["y"]),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes, "se", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
        [helper.make_tensor_value_info(v, TensorProto.FLOAT, None) for v in ("y", "se")]
        + [helper.make_tensor_value_info("q2", TensorProto.UINT8, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("per_channel", [False, True])
def test_quantize_static_se_net_gives_onnxruntime_bits(per_channel):
    """MobileNetV3-style blocks (hard-swish, squeeze-and-excitation, a ReduceMean pooling) on
    odd map sizes, quantized by onnxruntime's quantize_static."""
    f32 = om.se_net(image=26)
    q = qm.quantize(f32, qm.calibration_inputs(f32, 2), per_channel=per_channel)
    _same_bits(q, qm.calibration_inputs(f32, 3, seed=9))


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [((1, 8, 23, 23), (1, 8, 1, 1)), ((1, 8, 5, 5), (1, 8, 1, 1)), ((1, 6, 7, 7), (1, 6, 7, 7)),
     ((1, 6, 7, 7), (1, 1, 1, 1)), ((2, 3, 4), (2, 3, 1))],
)  # fmt: skip
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_qlinear_mul_runs_as_one_c_pass_with_onnxruntimes_bits(a_shape, b_shape, dtype, monkeypatch):
    """A QDQ Mul (onnxruntime's QLinearMul: a squeeze-and-excitation scale, an elementwise
    product, a scalar) runs as one C pass from the two 8-bit tensors (``fast_int8.ort_mul``:
    rows of one value, rows of >= 256 through a 256-entry table of results) and gives
    onnxruntime's bits (uint8 activations) and the reference kernels'; the scales make ties
    (the zero point is added before rounding)."""
    from xrelay.runtime.native import fast_int8, steps

    used = []

    def spy(op, vals, out, ws, opts):
        thunks = fast_int8.ort_mul(op, vals, out, ws, opts)
        used.append(thunks is not None)
        return thunks

    monkeypatch.setattr(steps, "FAST", {**steps.FAST, "multiply": spy})
    f32 = np.float32
    zero = (lambda z: np.uint8(z)) if dtype == np.uint8 else (lambda z: np.int8(z - 128))
    inits = dict([_p("sa", f32(0.0371)), _p("za", zero(99)), _p("sb", f32(0.5)), _p("zb", zero(128)),
                  _p("sm", f32(0.0371)), _p("zm", zero(101))])  # fmt: skip
    n = helper.make_node
    nodes = [
        n("QuantizeLinear", ["a", "sa", "za"], ["qa"]), n("DequantizeLinear", ["qa", "sa", "za"], ["fa"]),
        n("QuantizeLinear", ["b", "sb", "zb"], ["qb"]), n("DequantizeLinear", ["qb", "sb", "zb"], ["fb"]),
        n("Mul", ["fa", "fb"], ["m"]), n("QuantizeLinear", ["m", "sm", "zm"], ["y"]),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes, "mul", [helper.make_tensor_value_info("a", TensorProto.FLOAT, list(a_shape)),
                       helper.make_tensor_value_info("b", TensorProto.FLOAT, list(b_shape))],
        [helper.make_tensor_value_info("y", TensorProto.UINT8 if dtype == np.uint8 else TensorProto.INT8, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    rng = np.random.default_rng(5)  # b away from 0: a scalar b of 0 would make every product 0
    feeds = [{"a": rng.normal(size=a_shape).astype(f32), "b": (rng.normal(size=b_shape) * 0.5 + 1).astype(f32)}
             for _ in range(3)]  # fmt: skip
    if dtype == np.uint8:  # (int8 activations: the pass's QLinearMul is not onnxruntime's, as before)
        _float_bits(model, feeds)
    # and the reference kernels' bits for both
    m = qm.build(model, integer=True)
    mod, _ = from_onnx(model, freeze_params=True)
    mod = relay.transform.FakeQuantizationToInteger(onnxruntime=True)(mod)
    for feed in feeds:
        m.set_input(**feed)
        m.run()
        ref = np.asarray(xrelay.run(mod, feed)[0])
        assert np.array_equal(ref, np.asarray(m.get_output(0)).reshape(ref.shape)) and ref.max() > ref.min()
    assert True in used, used
