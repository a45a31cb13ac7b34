"""The C target's lowerings beyond float NCHW: int8/qnn programs after canonicalization, NHWC
and blocked layouts, conv2d_transpose, layer_norm, strided_slice, take and pad. Each program
is built for the C target, compiled strictly, run by the arena executor step by step through
its C functions and compared with the reference interpreter (integer programs bit for bit)."""

import shutil
import subprocess

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.backend.c import CodegenError

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2"]
CC = shutil.which("cc")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler (cc) on PATH")
RNG = np.random.default_rng(7)


def c(value, dtype):
    return relay.const(np.asarray(value, dtype=dtype))


def check(fn, inputs, tmp_path, rtol=1e-5, atol=1e-5, exact=False, opt_level=3):
    """Build ``fn`` for C, compile the program strictly, run it in the executor; compare."""
    mod = xrelay.IRModule.from_expr(fn)
    with xrelay.transform.PassContext(opt_level=opt_level):
        lib = xrelay.build(mod, target="c", opt_level=opt_level)
    lib.export(tmp_path)
    res = subprocess.run([CC, *STRICT, "-c", "-I", str(tmp_path), str(tmp_path / "model.c"),
                          "-o", str(tmp_path / "model.o")], capture_output=True, text=True)  # fmt: skip
    assert res.returncode == 0, res.stderr
    lib.run(**inputs)
    ref = xrelay.run(mod, inputs)
    refs = ref if isinstance(ref, list | tuple) else [ref]
    for i, want in enumerate(refs):
        want = np.asarray(want.numpy() if hasattr(want, "numpy") else want)
        got = lib.get_output(i)
        assert got.dtype == want.dtype
        if exact:
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    # The standalone entry computes the same as the steps.
    first = lib.get_output(0).copy()
    lib.run_aot()
    np.testing.assert_array_equal(lib.get_output(0), first)
    return lib


def f32(*shape):
    return RNG.standard_normal(shape).astype("float32")


# -- layouts -----------------------------------------------------------------------------------


def test_nhwc_convolutions_and_pools(tmp_path):
    x = relay.var("x", shape=(1, 9, 9, 4))
    w = relay.const(f32(3, 3, 4, 6))  # HWIO
    dw = relay.const(f32(3, 3, 6, 1))  # HWOI, depthwise
    y = relay.nn.conv2d(x, w, kernel_size=(3, 3), channels=6, padding=(1, 0, 2, 1), strides=(2, 1),
                        data_layout="NHWC", kernel_layout="HWIO")  # fmt: skip
    y = relay.nn.relu(relay.add(y, relay.const(f32(6))))
    y = relay.nn.conv2d(y, dw, kernel_size=(3, 3), channels=6, groups=6, padding=(1, 1), dilation=(2, 2),
                        data_layout="NHWC", kernel_layout="HWOI")  # fmt: skip
    y = relay.nn.max_pool2d(y, pool_size=(2, 2), strides=(2, 2), layout="NHWC", ceil_mode=True)
    a = relay.nn.avg_pool2d(y, pool_size=(3, 3), padding=(1, 1), layout="NHWC", count_include_pad=False)
    g = relay.nn.global_avg_pool2d(a, layout="NHWC")
    lib = check(relay.Function([x], relay.Tuple([a, g])), {"x": f32(1, 9, 9, 4)}, tmp_path)
    src = lib.get_source()
    assert "restrict srow" in src  # the depthwise one: rows of output columns
    assert "dp[oc] += v *" in src  # the HWIO one: innermost over contiguous output channels


def test_blocked_layouts_and_layout_transform(tmp_path):
    x = relay.var("x", shape=(1, 8, 6, 6))
    w = relay.const(f32(8, 2, 3, 3, 4, 4))  # OIHW4i4o: 32 outputs, 8 inputs
    xb = relay.layout_transform(x, "NCHW", "NCHW4c")
    y = relay.nn.conv2d(xb, w, kernel_size=(3, 3), channels=32, padding=(1, 1),
                        data_layout="NCHW4c", kernel_layout="OIHW4i4o", out_layout="NCHW8c")  # fmt: skip
    y = relay.nn.max_pool2d(y, pool_size=(2, 2), strides=(2, 2), layout="NCHW8c")
    y = relay.layout_transform(y, "NCHW8c", "NHWC")
    check(relay.Function([x], y), {"x": f32(1, 8, 6, 6)}, tmp_path, rtol=1e-4)


# -- other ops -----------------------------------------------------------------------------------


def test_conv2d_transpose_grouped_strided(tmp_path):
    x = relay.var("x", shape=(1, 4, 5, 6))
    w = relay.const(f32(4, 3, 3, 2))  # IOHW: 4 inputs, 3 outputs per group
    y = relay.nn.conv2d_transpose(x, w, channels=6, kernel_size=(3, 2), strides=(2, 3), groups=2,
                                  padding=(1, 0, 0, 1), output_padding=(1, 2), dilation=(1, 2))  # fmt: skip
    check(relay.Function([x], y), {"x": f32(1, 4, 5, 6)}, tmp_path)


def test_layer_norm_strided_slice_take_pad(tmp_path):
    x = relay.var("x", shape=(2, 5, 6))
    ln = relay.nn.layer_norm(x, relay.const(f32(5)), relay.const(f32(5)), axis=1, epsilon=1e-3)
    s = relay.strided_slice(ln, begin=[1, 4, 0], end=[2, 0, 6], strides=[1, -2, 3])
    t1 = relay.take(x, relay.const(np.array([[0, 7], [-1, 3]], "int32")), axis=2, mode="clip")
    t2 = relay.take(x, relay.const(np.array([-1, 11, 59], "int64")), mode="wrap")
    t3 = relay.take(x, relay.const(np.array([[4, 0, 2], [1, 1, 3]], "int32")), axis=1, batch_dims=1)
    p1 = relay.nn.pad(x, ((0, 1), (2, 0), (1, 3)), pad_value=relay.const(np.float32(-1.5)))
    p2 = relay.nn.pad(x, ((0, 0), (2, 1), (3, 2)), pad_mode="reflect")
    p3 = relay.nn.pad(x, ((1, 0), (0, 2), (4, 1)), pad_mode="edge")
    outs = relay.Tuple([s, t1, t2, t3, p1, p2, p3])
    check(relay.Function([x], outs), {"x": f32(2, 5, 6)}, tmp_path, opt_level=0)


# -- int8 / qnn --------------------------------------------------------------------------------


def int8_block(rounding):
    """quantize -> qnn.conv2d (+ int32 bias) -> requantize (per channel) -> qnn.dense ->
    dequantize, canonicalized by the build into integer ops."""
    n, ch = 7, 8
    x = relay.var("x", shape=(1, 3, n, n))
    q = relay.qnn.op.quantize(x, c(0.05, "float32"), c(3, "int32"), out_dtype="int8")
    w = relay.const(RNG.integers(-128, 128, (ch, 3, 3, 3)).astype("int8"))
    acc = relay.qnn.op.conv2d(
        q, w, c(3, "int32"), c(0, "int32"), c(0.05, "float32"), c(RNG.uniform(0.01, 0.02, ch), "float32"),
        kernel_size=(3, 3), channels=ch, padding=(1, 1),
    )  # fmt: skip
    acc = relay.add(acc, relay.const(RNG.integers(-100, 100, (ch, 1, 1)).astype("int32")))
    r = relay.qnn.op.requantize(
        acc, c(RNG.uniform(5e-4, 1e-3, ch), "float32"), c(0, "int32"), c(0.1, "float32"), c(-2, "int32"),
        axis=1, out_dtype="int8", rounding=rounding,
    )  # fmt: skip
    r = relay.nn.max_pool2d(r, pool_size=(2, 2), strides=(2, 2), padding=(1, 1))
    r = relay.qnn.op.avg_pool2d(r, c(0.1, "float32"), c(-2, "int32"), c(0.08, "float32"), c(1, "int32"),
                                pool_size=(3, 3), strides=(1, 1), padding=(1, 1), dilation=(1, 1),
                                layout="NCHW")  # fmt: skip
    flat = relay.nn.batch_flatten(relay.clip(r, -2.0, 127.0))
    wd = relay.const(RNG.integers(0, 256, (10, ch * 4 * 4)).astype("uint8"))
    d = relay.qnn.op.dense(flat, wd, c(-2, "int32"), c(128, "int32"), c(0.1, "float32"), c(0.003, "float32"),
                           units=10)  # fmt: skip
    d = relay.qnn.op.requantize(d, c(3e-4, "float32"), c(0, "int32"), c(0.02, "float32"), c(5, "int32"),
                                out_dtype="uint8", rounding=rounding)  # fmt: skip
    return relay.Function([x], relay.Tuple([d, relay.qnn.op.dequantize(d, c(0.02, "float32"), c(5, "int32"))]))


@pytest.mark.parametrize("rounding", ["UPWARD", "TONEAREST"])
def test_int8_qnn_block_is_bit_exact(rounding, tmp_path):
    x = (RNG.standard_normal((1, 3, 7, 7)) * 3).astype("float32")
    lib = check(int8_block(rounding), {"x": x}, tmp_path, exact=True)
    src = lib.get_source()
    assert "int8_t" in src and "int32_t" in src
    if rounding == "UPWARD":
        assert "xr_q_multiply_shift(" in src  # fixed_point_multiply(_per_axis)
    else:
        assert ">>" in src  # int64 multiply, rounding add, right_shift


def test_integer_arithmetic_wraps_and_divides_as_the_kernels(tmp_path):
    a = relay.var("a", shape=(6,), dtype="int32")
    b = relay.var("b", shape=(6,), dtype="int32")
    f = relay.var("f", shape=(6,), dtype="float32")
    outs = relay.Tuple([
        relay.add(a, b), relay.multiply(a, b), relay.subtract(a, b), relay.divide(a, b),
        relay.negative(a), relay.right_shift(a, relay.const(np.int32(3))),
        relay.cast(f, "int8"), relay.cast(f, "uint8"), relay.cast(f, "bool"), relay.round(f),
        relay.clip(relay.cast(a, "int8"), -3.4e38, 3.5), relay.round(a),
    ])  # fmt: skip
    big = np.iinfo("int32")
    inputs = {
        "a": np.array([big.max, big.min, -7, 7, 0, big.min], "int32"),
        "b": np.array([1, -1, 2, -2, 0, 3], "int32"),
        "f": np.array([300.7, -129.5, 2.5, -2.5, 0.49, 1e3], "float32"),
    }
    check(relay.Function([a, b, f], outs), inputs, tmp_path, exact=True, opt_level=0)


def test_integer_average_pools_truncate_as_the_kernel(tmp_path):
    x = relay.var("x", shape=(1, 3, 5, 6), dtype="int8")
    a = relay.nn.avg_pool2d(x, pool_size=(2, 3), strides=(2, 2), padding=(1, 1, 0, 1), ceil_mode=True)
    b = relay.nn.avg_pool2d(x, pool_size=(3, 3), padding=(1, 1), count_include_pad=True)
    g = relay.nn.global_avg_pool2d(relay.cast(x, "uint16"))
    inputs = {"x": RNG.integers(-128, 128, (1, 3, 5, 6)).astype("int8")}
    check(relay.Function([x], relay.Tuple([a, b, g])), inputs, tmp_path, exact=True, opt_level=0)


def test_still_unsupported_dtypes_name_the_op():
    x = relay.var("x", shape=(4,), dtype="int32")
    mod = xrelay.IRModule.from_expr(relay.power(x, x))
    with pytest.raises(CodegenError, match="power on int32 has no C lowering"):
        xrelay.build(mod, target="c")


def test_quantized_onnx_mobilenet_matches_the_arena_runtime_bit_for_bit():
    """onnxruntime's int8 quantization (per channel, QDQ) of a small MobileNetV2, imported with
    its QDQ pairs made integer ops: what canonicalized qnn models contain (int8 convolutions
    with int32 accumulation, pads with zero points, fixed_point_multiply_per_axis, clips,
    casts) runs in C with the same bits as the arena runtime's int8 kernels."""
    pytest.importorskip("onnxruntime")
    from xrelay.frontends.onnx import from_onnx
    from xrelay.testing import onnx_models
    from xrelay.testing import quantized_models as qm
    from xrelay.transforms.fake_quantization_to_integer import FakeQuantizationToIntegerPass

    f32 = onnx_models.mobilenet_v2(image=32, width=0.25)
    feeds = qm.calibration_inputs(f32, 2)
    mod, params = from_onnx(qm.quantize(f32, feeds, per_channel=True), freeze_params=True)
    FakeQuantizationToIntegerPass(integer_add=False).apply(None, mod.module)
    lib = xrelay.build(mod, params, target="c")
    ops = {op.name for op in lib.planned.walk()}
    assert {"relay.fixed_point_multiply_per_axis", "relay.nn.pad", "relay.cast"} <= ops
    arena = xrelay.build(mod, params)
    (name, x), = feeds[1].items()
    lib.set_input(name.replace(":", "_"), x)
    arena.set_input(name.replace(":", "_"), x)
    lib.run()
    arena.run()
    out = lib.get_output(0)
    assert np.ptp(out) > 0  # not a constant (a broken pipeline would give one)
    np.testing.assert_array_equal(out, arena.get_output(0))
