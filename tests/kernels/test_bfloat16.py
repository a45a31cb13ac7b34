"""bfloat16 end to end: kernels compute in float32 and round to bfloat16 (to nearest even) at
the op's edges; the interpreter, ``xrelay.build`` and the ONNX import all carry ml_dtypes'
bfloat16 arrays; element types without an xrelay dtype are refused by name (the float8, float4
and int4/int2 types: tests/frontends/test_onnx_narrow_types.py)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import xrelay
from xrelay import relay
from xrelay.frontends import OnnxImportError
from xrelay.kernels import KERNELS
from xrelay.testing.onnx_backend import MODES, XrelayBackend

BF16 = np.dtype(ml_dtypes.bfloat16)


def test_cast_rounds_to_nearest_even():
    # 1 + 2**-8 is halfway between 1 and 1 + 2**-7: even (1); 1 + 3 * 2**-8: up to 1 + 2**-6
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8)], np.float32)
    y = KERNELS["cast"](x, dtype="bfloat16")
    assert y.dtype == BF16
    np.testing.assert_array_equal(y.astype(np.float32), [1.0, 1 + 2**-6, -1.0])
    assert KERNELS["cast"](y, dtype="float32").dtype == np.float32


def test_ops_compute_in_float32_and_round_once():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype(BF16)
    b = rng.standard_normal((4, 5)).astype(BF16)
    got = KERNELS["nn.matmul"](a, b)
    assert got.dtype == BF16
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(BF16)
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))
    s = KERNELS["nn.softmax"](a)
    np.testing.assert_array_equal(s.astype(np.float32), KERNELS["nn.softmax"](a.astype(np.float32)).astype(BF16).astype(np.float32))
    # the result's dtype follows the op: cast_like's second input, shape_of's dtype
    assert KERNELS["cast_like"](a, np.zeros(1, np.float32)).dtype == np.float32
    assert KERNELS["cast_like"](a.astype(np.float32), a).dtype == BF16
    assert KERNELS["shape_of"](a, dtype="int64").dtype == np.int64


def test_destination_buffers_of_bfloat16():
    a = np.array([1.5, -2.0], BF16)
    out = np.empty(2, BF16)
    assert KERNELS["add"](a, a, out=out) is out
    np.testing.assert_array_equal(out.astype(np.float32), [3.0, -4.0])


def test_interpreter_and_build_agree_on_a_bfloat16_module():
    x = relay.var("x", shape=(2, 8), dtype="bfloat16")
    w = relay.var("w", shape=(4, 8), dtype="bfloat16")
    y = relay.nn.relu(relay.nn.dense(x, w))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, w], relay.cast(y, "float32"))))
    rng = np.random.default_rng(1)
    feeds = {"x": rng.standard_normal((2, 8)).astype(BF16), "w": rng.standard_normal((4, 8)).astype(BF16)}
    (ref,) = xrelay.run(mod, feeds)
    m = xrelay.build(mod)
    for k, v in feeds.items():
        m.set_input(k, v)
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), ref)
    want = np.maximum(feeds["x"].astype(np.float32) @ feeds["w"].astype(np.float32).T, 0).astype(BF16).astype(np.float32)
    np.testing.assert_array_equal(ref, want)


@pytest.mark.parametrize("mode", MODES)
def test_onnx_cast_to_bfloat16_matches_onnx(mode):
    node = helper.make_node("Cast", ["x"], ["y"], to=TensorProto.BFLOAT16)
    g = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5])],
        [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [5])],
    )  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, 0.1, -7.3, 65504.0], np.float32)
    (got,) = XrelayBackend.run_model(m, [x], mode=mode)
    (want,) = ReferenceEvaluator(m).run(None, {"x": x})
    assert got.dtype == BF16
    np.testing.assert_array_equal(got.astype(np.float32), np.asarray(want).astype(np.float32))


def test_an_element_type_without_an_xrelay_dtype_is_refused_by_name():
    node = helper.make_node("Cast", ["x"], ["y"], to=TensorProto.COMPLEX64)
    g = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.COMPLEX64, [2])],
    )  # fmt: skip
    with pytest.raises(OnnxImportError, match="ONNX element type COMPLEX64 is not supported"):
        XrelayBackend.prepare(helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)]))
