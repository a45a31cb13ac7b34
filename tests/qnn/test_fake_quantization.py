"""fake-quantization-to-integer: QDQ graphs computed in integers, checked against the float path
and against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.frontends.onnx import from_onnx
from xrelay.runtime.interpreter import run
from xrelay.testing import onnx_models as om
from xrelay.testing import quantized_models as qm
from xrelay.transforms.fake_quantization_to_integer import FakeQuantizationToIntegerPass

RNG = np.random.default_rng(5)


def c(value, dtype):
    return relay.const(np.asarray(value, dtype=dtype))


def dq(x, s, zp, axis=-1):
    return relay.qnn.op.dequantize(x, c(s, "float32"), c(zp, "int32"), axis=axis)


def q(x, s, zp, dtype="uint8"):
    return relay.qnn.op.quantize(x, c(s, "float32"), c(zp, "int32"), out_dtype=dtype)


def integer_matches_float(expr, inputs, converted):
    """FQ2I converts ``converted`` ops and changes results by at most one step (roundings)."""
    mod = xrelay.IRModule.from_expr(expr)
    before = xrelay.run(mod, inputs)[0]
    after_mod = mod.clone()
    FakeQuantizationToIntegerPass().apply(None, after_mod.module)
    text = after_mod.mlir_text()
    for name in converted:
        assert name in text, (name, text)
    assert "relay.nn.conv2d" not in text and "relay.nn.dense" not in text and "qnn.dequantize" not in text
    after = xrelay.run(after_mod, inputs)[0]
    diff = np.abs(after.astype(np.int64) - before.astype(np.int64))
    assert diff.max() <= 1 and (diff == 0).mean() > 0.9


def test_conv_bias_relu_maxpool_gap():
    x = relay.var("x", shape=(1, 3, 8, 8), dtype="uint8")
    w = relay.const(RNG.integers(-127, 128, (6, 3, 3, 3)).astype("int8"))
    y = relay.nn.conv2d(dq(x, 0.02, 128), dq(w, np.linspace(0.005, 0.01, 6).astype("float32"), 0, axis=0), padding=(1, 1), channels=6, kernel_size=(3, 3))
    y = relay.nn.relu(relay.nn.bias_add(y, relay.const(RNG.normal(size=6).astype("float32"))))
    y = dq(q(y, 0.05, 0), 0.05, 0)
    y = relay.nn.global_avg_pool2d(relay.nn.max_pool2d(y, pool_size=(2, 2), strides=(2, 2)))
    y = q(relay.nn.batch_flatten(y), 0.04, 2)
    integer_matches_float(y, {"x": RNG.integers(0, 256, (1, 3, 8, 8)).astype("uint8")}, ["qnn.conv2d", "relay.nn.max_pool2d", "relay.sum", "qnn.requantize"])


def test_dense_matmul_batch_matmul_and_add():
    x = relay.var("x", shape=(4, 16), dtype="int8")
    w = relay.const(RNG.integers(-127, 128, (16, 8)).astype("int8"))
    h = q(relay.nn.matmul(dq(x, 0.1, 0), dq(w, 0.02, 0)), 0.3, 0, "int8")
    wd = relay.const(RNG.integers(-127, 128, (8, 8)).astype("int8"))
    d = q(relay.nn.dense(dq(h, 0.3, 0), dq(wd, 0.02, 0)), 0.2, 0, "int8")
    s = q(relay.add(dq(h, 0.3, 0), dq(d, 0.2, 0)), 0.4, 0, "int8")
    a3 = relay.reshape(dq(s, 0.4, 0), (1, 4, 8))
    bm = q(relay.nn.batch_matmul(a3, a3, transpose_b=True), 0.5, 0, "int8")
    integer_matches_float(bm, {"x": RNG.integers(-128, 128, (4, 16)).astype("int8")}, ["qnn.dense", "qnn.add", "qnn.batch_matmul"])


@pytest.mark.parametrize("per_channel", [False, True])
def test_quantized_resnet_runs_in_int8_a_quarter_of_the_arena_and_matches_onnxruntime(per_channel):
    f32 = om.resnet18(image=32, num_classes=100)
    model = qm.quantize(f32, qm.calibration_inputs(f32, 2), per_channel=per_channel)
    mod, params = from_onnx(model, freeze_params=True)
    # the float32 model (not the QDQ one, whose 8-bit edges qnn-narrow-edges keeps 8-bit) on
    # the same (native, NCHW) kernels as the int8 build
    f32_mod, f32_params = from_onnx(f32, freeze_params=True)
    float_arena = xrelay.build(
        f32_mod, f32_params, opt_level=3, plan="greedy-by-size", backends=("native",)
    ).arena_bytes
    mod = relay.transform.FakeQuantizationToInteger(integer_add=False)(mod)
    text = mod.mlir_text()
    assert text.count("qnn.conv2d") == 20 and "relay.nn.conv2d" not in text
    m = xrelay.build(mod, params, opt_level=3, plan="greedy-by-size")
    assert m.arena_bytes * 4 <= float_arena + 4096
    step = qm.output_step(model)
    for feed in qm.calibration_inputs(f32, 2, seed=7):
        ref, out = qm.compare(model, feed, m)
        assert ref.argmax() == out.argmax()
        if qm.ort_u8s8_exact():
            assert (qm.quantization_steps(ref, out, step) <= 1).mean() >= 0.99
        else:
            # without VNNI onnxruntime's int8 convolutions compute otherwise (saturating pairs;
            # per channel a fifth of these outputs more than a step away): the arena's bits are
            # then checked against the reference interpreter on the same module
            want = run(mod, feed, params)[0]
            assert np.array_equal(np.asarray(out.numpy()), np.asarray(want.numpy() if hasattr(want, "numpy") else want))


def test_fake_quantize_concat():
    """TVM's ``test_fake_quantize_concat`` (tests/python/relay/test_pass_fake_quantization_to_integer.py):
    four int8 inputs with scales 0.5 .. 3.5 concatenated and quantized with scale 3.5 become
    one ``qnn.concatenate`` and give the float graph's values exactly."""
    zero = relay.const(0)
    inputs = [relay.qnn.op.dequantize(relay.var(f"x{i}", shape=[1, 4], dtype="int8"), relay.const(i + 0.5), zero) for i in range(4)]
    out = relay.qnn.op.quantize(relay.op.concatenate(inputs, axis=1), relay.const(3.5), zero)
    mod = xrelay.IRModule.from_expr(out)
    feeds = {f"x{i}": RNG.integers(-128, 127, size=[1, 4]).astype("int8") for i in range(4)}
    before = xrelay.run(mod, feeds)[0]
    converted = mod.clone()
    FakeQuantizationToIntegerPass().apply(None, converted.module)
    text = converted.mlir_text()
    assert "qnn.concatenate" in text and "qnn.dequantize" not in text and "qnn.quantize" not in text, text
    assert before.max() > before.min()
    np.testing.assert_array_equal(xrelay.run(converted, feeds)[0], before)
