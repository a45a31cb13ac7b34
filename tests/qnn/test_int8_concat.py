"""8-bit concatenations: a QuantizeLinear after a Concat of dequantized values (onnxruntime's
QLinearConcat) runs without float -- each input's requantize is a byte function of that input
(a table at run time, or nothing when the parameters are the output's) written into its slice
of the concatenation -- and gives onnxruntime's bits."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import func

import xrelay
from xrelay.backend.build import build_program
from xrelay.frontends.onnx import from_onnx
from xrelay.testing import onnx_models as om
from xrelay.testing import quantized_models as qm
from xrelay.transforms.fake_quantization_to_integer import FakeQuantizationToIntegerPass

RNG = np.random.default_rng(30)
# random int8 weights onnxruntime multiplies exactly on this CPU (7 bits where its uint8 x int8
# products saturate: quantized_models.ort_u8s8_exact)
W8 = qm.int8_weight_bounds()
F32 = np.float32


def _fire(dtype: str, same: bool) -> helper.ModelProto:
    """A fire module and an inception join: a 1x1 and a 3x3 branch (each a QDQ convolution with
    its own scale and zero point) and a max-pooled branch of the input (the input's
    parameters) concatenated along channels, quantized, then a 1x1 convolution reads it.
    ``same``: the concatenation's output parameters are the 1x1 branch's (its bytes pass as
    they are; onnxruntime copies them)."""
    np_dt = np.int8 if dtype == "int8" else np.uint8
    lo = -128 if dtype == "int8" else 0

    def zp(v):
        return np.asarray(v + lo, np_dt)

    s1, z1 = F32(0.043), zp(7)
    inits = {
        "sx": F32(0.031), "zx": zp(131), "s1": s1, "z1": z1, "s2": F32(0.029), "z2": zp(0),
        "so": s1 if same else F32(0.051), "zo": z1 if same else zp(19), "sy": F32(0.09), "zy": zp(101),
        "w1": RNG.integers(*W8, (6, 4, 1, 1)).astype(np.int8), "w2": RNG.integers(*W8, (5, 4, 3, 3)).astype(np.int8),
        "w3": RNG.integers(*W8, (8, 15, 1, 1)).astype(np.int8), "sw": F32(0.012), "zw": np.int8(0),
    }  # fmt: skip
    n = helper.make_node
    nodes = [
        n("QuantizeLinear", ["x", "sx", "zx"], ["qx"]), n("DequantizeLinear", ["qx", "sx", "zx"], ["fx"]),
        n("DequantizeLinear", ["w1", "sw", "zw"], ["fw1"]), n("DequantizeLinear", ["w2", "sw", "zw"], ["fw2"]),
        n("DequantizeLinear", ["w3", "sw", "zw"], ["fw3"]),
        n("Conv", ["fx", "fw1"], ["c1"]), n("QuantizeLinear", ["c1", "s1", "z1"], ["q1"]),
        n("DequantizeLinear", ["q1", "s1", "z1"], ["f1"]),
        n("Conv", ["fx", "fw2"], ["c2"], pads=[1, 1, 1, 1]), n("QuantizeLinear", ["c2", "s2", "z2"], ["q2"]),
        n("DequantizeLinear", ["q2", "s2", "z2"], ["f2"]),
        n("MaxPool", ["fx"], ["p"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("Concat", ["f1", "f2", "p"], ["j"], axis=1), n("QuantizeLinear", ["j", "so", "zo"], ["qj"]),
        n("DequantizeLinear", ["qj", "so", "zo"], ["fj"]), n("Conv", ["fj", "fw3"], ["c3"]),
        n("QuantizeLinear", ["c3", "sy", "zy"], ["y"]),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes, "fire", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 9, 9])],
        [helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(np.dtype(np_dt)), None)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _fused_functions(model) -> list[func.FuncOp]:
    mod, params = from_onnx(model, freeze_params=True)
    FakeQuantizationToIntegerPass(onnxruntime=True).apply(None, mod.module)
    seen: list[func.FuncOp] = []
    build_program(mod, params, 3, before_lowering=lambda m: seen.extend(
        op.clone() for op in m.walk() if isinstance(op, func.FuncOp) and "relay.primitive" in op.attributes))  # fmt: skip
    return seen


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize("same", [False, True])
def test_quantized_concat_gives_onnxruntime_bits(dtype, same):
    """Inputs with their own scales and zero points (odd ones: ties go the other way when the
    zero point is added before rounding), one passing as it is when ``same``."""
    model = _fire(dtype, same)
    m = qm.build(model, integer=True)
    for seed in range(4):
        feed = {"x": np.random.default_rng(seed).normal(size=(1, 4, 9, 9)).astype(F32) * 3}
        ref, out = qm.compare(model, feed, m)
        assert ref.dtype == out.dtype and ref.max() > ref.min()
        if qm.ort_u8s8_exact() or dtype == "uint8":
            assert np.array_equal(ref, out), np.flatnonzero(ref != out)[:10]
        else:
            # int8 activations: without VNNI onnxruntime shifts them to uint8 for its AVX2
            # kernels and rounds a few outputs (3 of 729 here) a step the other way
            assert np.abs(ref.astype(np.int64) - out.astype(np.int64)).max() <= 1


@pytest.mark.parametrize("same", [False, True])
def test_no_float_step_in_an_int8_concatenation(same):
    """After the build, the concatenation joins 8-bit values only (its own step or placed into
    its producers' slices), no function computes in float32 on the concatenated tensor, and
    each converted input's requantize joined its producer (no requantize step of its own)."""
    fns = _fused_functions(_fire("uint8", same))
    cats = [f for f in fns if "relay.concatenate" in str(f)]
    assert cats, [f.sym_name.data for f in fns]
    for f in cats:
        text = str(f)
        assert "f32" not in text, text
        assert "ui8>) -> tensor<1x15x9x9xui8>" in text, text
    # the requantizes of the 3x3 and pooled branches (and of the 1x1 one unless ``same``)
    # are in their producers' functions: no function is a requantize alone (the model's
    # input quantize reads float32, not bytes)
    divides = [f for f in fns if "relay.divide" in str(f) and "xui8" in str(f.function_type.inputs)]
    assert all("nn.conv2d" in str(f) or "max_pool2d" in str(f) for f in divides), [f.sym_name.data for f in divides]
    assert len(divides) == (2 if same else 3), [f.sym_name.data for f in divides]


def test_the_c_target_joins_the_bytes_with_onnxruntimes_bits():
    """The same program emitted as C (steps and the standalone entry) gives onnxruntime's bits."""
    model = _fire("uint8", False)
    mod, params = from_onnx(model, freeze_params=True)
    FakeQuantizationToIntegerPass(onnxruntime=True).apply(None, mod.module)
    lib = xrelay.build(mod, params, target="c")
    feed = {"x": np.random.default_rng(9).normal(size=(1, 4, 9, 9)).astype(F32) * 3}
    ref = om.run_onnxruntime(model, feed)[0]
    lib.run(**feed)
    assert np.array_equal(lib.get_output(0), ref)
    lib.run_aot()
    assert np.array_equal(lib.get_output(0), ref) and ref.max() > ref.min()


def test_chained_concatenations_give_onnxruntime_bits():
    """A dense block: each concatenation's quantized result is read by a convolution and by the
    next concatenation (an input joined as it is, or through a table, read twice)."""
    inits = {
        "sx": F32(0.031), "zx": np.uint8(131), "sa": F32(0.043), "za": np.uint8(7), "s1": F32(0.047), "z1": np.uint8(3),
        "sb": F32(0.029), "zb": np.uint8(0), "s2": F32(0.052), "z2": np.uint8(11), "sw": F32(0.012), "zw": np.int8(0),
        "wa": RNG.integers(*W8, (3, 4, 3, 3)).astype(np.int8), "wb": RNG.integers(*W8, (5, 7, 1, 1)).astype(np.int8),
    }  # fmt: skip
    n = helper.make_node
    nodes = [
        n("QuantizeLinear", ["x", "sx", "zx"], ["qx"]), n("DequantizeLinear", ["qx", "sx", "zx"], ["fx"]),
        n("DequantizeLinear", ["wa", "sw", "zw"], ["fwa"]), n("DequantizeLinear", ["wb", "sw", "zw"], ["fwb"]),
        n("Conv", ["fx", "fwa"], ["a"], pads=[1, 1, 1, 1]), n("QuantizeLinear", ["a", "sa", "za"], ["qa"]),
        n("DequantizeLinear", ["qa", "sa", "za"], ["fa"]), n("Concat", ["fx", "fa"], ["j1"], axis=1),
        n("QuantizeLinear", ["j1", "s1", "z1"], ["q1"]), n("DequantizeLinear", ["q1", "s1", "z1"], ["f1"]),
        n("Conv", ["f1", "fwb"], ["b"]), n("QuantizeLinear", ["b", "sb", "zb"], ["qb"]),
        n("DequantizeLinear", ["qb", "sb", "zb"], ["fb"]), n("Concat", ["f1", "fb"], ["j2"], axis=1),
        n("QuantizeLinear", ["j2", "s2", "z2"], ["y"]),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes, "dense", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, None)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    m = qm.build(model, integer=True)
    for seed in range(3):
        feed = {"x": np.random.default_rng(seed).normal(size=(1, 4, 8, 8)).astype(F32) * 3}
        ref, out = qm.compare(model, feed, m)
        assert ref.shape == (1, 12, 8, 8) and ref.max() > ref.min()
        assert np.array_equal(ref, out), np.flatnonzero(ref != out)[:10]
    # the join's steps run byte tables and the byte join only (an input read by a convolution
    # too keeps its table in the join's step: no float op runs there)
    steps, _ = m.executor.profile()
    joins = [s.ops for s in steps if "concatenate" in s.ops]
    assert len(joins) == 2 and all(set(ops.split(", ")) <= {"lookup", "concatenate"} for ops in joins), [s.ops for s in steps]
