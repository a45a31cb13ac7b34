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
from xrelay.testing.semantics import check_reference

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2"]
CC = shutil.which("cc")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler (cc) on PATH")
RNG = np.random.default_rng(7)


def c(value, dtype):
    return relay.const(np.asarray(value, dtype=dtype))


def check(fn, inputs, tmp_path, rtol=1e-5, atol=1e-5, exact=False, opt_level=3, disabled=()):
    """Build ``fn`` (a function or a module) for C, compile the program strictly, run it in the
    executor; compare."""
    mod = fn if isinstance(fn, xrelay.IRModule) else xrelay.IRModule.from_expr(fn)
    with xrelay.transform.PassContext(opt_level=opt_level, disabled_pass=list(disabled)):
        lib = xrelay.build(mod, target="c", opt_level=opt_level)
    lib.export(tmp_path)
    res = subprocess.run([CC, *STRICT, "-c", "-I", str(tmp_path), str(tmp_path / "model.c"),
                          "-o", str(tmp_path / "model.o")], capture_output=True, text=True)  # fmt: skip
    assert res.returncode == 0, res.stderr
    lib.run(**inputs)
    ref = xrelay.run(mod, inputs)
    refs = ref if isinstance(ref, list | tuple) else [ref]
    if not exact:  # an exact comparison may test inf and NaN on purpose; a tolerance would hide them
        check_reference([np.asarray(r) for r in refs])
    for i, want in enumerate(refs):
        want = np.asarray(want.numpy() if hasattr(want, "numpy") else want)
        got = lib.get_output(i)
        assert got.dtype == want.dtype
        if want.dtype.kind == "f":
            assert np.isfinite(want).all() and np.isfinite(got).all()
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


@pytest.mark.parametrize("shape, axes, order", [
    ((1, 37, 7, 7), [2, 3], "eigen"), ((3, 5, 1, 3), [2, 3], "eigen"), ((2, 6, 20), [2], "eigen"),
    ((1, 19, 9, 9), [2, 3], "sequential"), ((9, 6, 5), [0], "sequential"), ((1, 3, 0, 2), [2, 3], "sequential"),
])  # fmt: skip
@pytest.mark.parametrize("dtype", ["uint8", "int8"])
def test_dequantize_sum_adds_in_the_references_order(shape, axes, order, dtype, tmp_path):
    """qnn.dequantize_sum (the float reductions of fake-quantization-to-integer
    {onnxruntime=true}) in C gives the reference kernel's bits: Eigen's packets with each row's
    alignment head, or first to last."""
    from xrelay.testing.quantized_models import dequantize_sum_program

    mod, data = dequantize_sum_program(shape, axes, order, dtype, seed=4)
    lib = check(mod, {"q": data}, tmp_path, exact=True)
    assert "qnn.dequantize_sum" in lib.get_source()


# -- every op: a lowering or a refusal naming it ---------------------------------------------


def test_every_relay_qnn_and_dyn_op_has_a_c_lowering_or_a_documented_refusal():
    from pathlib import Path

    from xrelay.backend.c.c_function import _HANDLERS, C_REFUSALS, QNN_BY_CANONICALIZATION
    from xrelay.dialects.dyn import DYN_OPS
    from xrelay.dialects.qnn import QNN_OPS
    from xrelay.dialects.relay import RELAY_OPS

    guide = (Path(xrelay.__file__).parent / "docs" / "guide" / "c-target.md").read_text()
    for name in [*RELAY_OPS, *QNN_OPS, *DYN_OPS]:
        lowered = name in _HANDLERS or name in QNN_BY_CANONICALIZATION
        assert lowered != (name in C_REFUSALS), name  # one or the other
        if name in C_REFUSALS:
            assert f"`{name}`" in guide, f"{name}'s refusal is not in docs/guide/c-target.md"


@pytest.mark.parametrize(("fn", "op"), [
    (lambda: relay.argwhere(relay.var("x", shape=(4,), dtype="bool")), "argwhere"),
    (lambda: relay.unique(relay.var("x", shape=(4,), dtype="int32"))[0], "unique"),
])  # fmt: skip
def test_refusals_name_the_op_and_the_reason(fn, op):
    body = fn()
    mod = xrelay.IRModule.from_expr(relay.Function(relay.analysis.free_vars(body), body))
    with pytest.raises(CodegenError, match=rf"{op} has no C lowering: its result's shape depends"):
        xrelay.build(mod, target="c")


@pytest.mark.parametrize("opt_level", [0, 2])
def test_mlp_workload_at_every_level(opt_level, tmp_path):
    """The README's call: the MLP workload with its params (bias_add remains below level 3)."""
    from xrelay.testing import mlp

    mod, params = mlp.get_workload(batch_size=2)
    x = RNG.standard_normal((2, 1, 28, 28)).astype("float32")
    with xrelay.transform.PassContext(opt_level=opt_level):
        lib = relay.build(mod, target="c", params=params)
    assert "nn.bias_add" in {op.RELAY_NAME for op in lib.planned.walk() if hasattr(op, "RELAY_NAME")}
    lib.run(data=x)
    want = xrelay.run(mod, {"data": x}, params=params)[0]
    assert np.ptp(want) > 0
    np.testing.assert_allclose(lib.get_output(0), want, rtol=1e-5, atol=1e-6)


def test_bias_prelu_dropout_and_unfolded_batch_norm(tmp_path):
    x = relay.var("x", shape=(2, 4, 3, 5))
    y = relay.nn.bias_add(x, relay.const(f32(4)))
    y = relay.nn.prelu(y, relay.const(f32(4)))
    y = relay.nn.dropout(y, rate=0.3)
    bn = relay.nn.batch_norm(y, *(relay.const(v) for v in (f32(4), f32(4), f32(4), np.abs(f32(4)) + 0.5)))
    z = relay.nn.bias_add(relay.nn.relu(bn[0]), relay.const(f32(5)), axis=-1)
    i = relay.var("i", shape=(3, 2), dtype="int32")
    ints = relay.nn.bias_add(i, relay.const(np.array([2**31 - 1, -5], "int32")))
    inputs = {"x": f32(2, 4, 3, 5), "i": np.array([[1, 2], [3, 4], [-1, 0]], "int32")}
    fn = relay.Function([x, i], relay.Tuple([z, bn[1], ints]))
    check(fn, inputs, tmp_path, opt_level=0, disabled=["SimplifyInference"])


@pytest.mark.parametrize("opt_level", [0, 3])
def test_matmul_and_batch_matmul(opt_level, tmp_path):
    a = relay.var("a", shape=(2, 3, 5))
    b = relay.var("b", shape=(1, 4, 5))
    nt = relay.nn.batch_matmul(a, b)  # NT, batch 1 broadcast
    nn_ = relay.nn.batch_matmul(a, relay.const(f32(2, 5, 6)), transpose_b=False)
    tt = relay.nn.batch_matmul(relay.const(f32(2, 5, 3)), b, transpose_a=True, transpose_b=True)
    mm = relay.nn.matmul(relay.reshape(a, (6, 5)), relay.const(f32(5, 7)))
    qa = relay.var("qa", shape=(2, 3, 8), dtype="int8")
    qb = relay.const(RNG.integers(-128, 128, (2, 4, 8)).astype("int8"))
    qi = relay.nn.batch_matmul(qa, qb, out_dtype="int32")
    inputs = {"a": f32(2, 3, 5), "b": f32(1, 4, 5), "qa": RNG.integers(-128, 128, (2, 3, 8)).astype("int8")}
    fn = relay.Function([a, b, qa], relay.Tuple([nt, nn_, tt, mm, qi]))
    check(fn, inputs, tmp_path, opt_level=opt_level, rtol=1e-5, atol=1e-5)


def test_float16_programs_compute_in_float32(tmp_path):
    """float16 operands and results are stored as their bits; the ops compute in float (the
    reference rounds every op to float16: agreement within float16 rounding)."""
    x = relay.var("x", shape=(2, 8), dtype="float16")
    w = relay.const(RNG.standard_normal((4, 8)).astype("float16"))
    y = relay.nn.dense(x, w)
    y = relay.exp(relay.multiply(relay.tanh(y), relay.const(np.float16(0.5))))
    c32 = relay.cast(y, "float32")
    back = relay.cast(relay.add(c32, relay.const(np.float32(1e-3))), "float16")
    inputs = {"x": RNG.standard_normal((2, 8)).astype("float16")}
    for lvl in (0, 3):
        check(relay.Function([x], relay.Tuple([y, c32, back])), inputs, tmp_path, opt_level=lvl, rtol=2e-3, atol=2e-3)


def test_float16_conversions_round_to_nearest_even(tmp_path):
    """Every float16 bit pattern through C's float16 -> float32 -> float16 (identity, NaN kept
    NaN) and float32 values at the rounding edges (ties, subnormals, overflow) to float16."""
    bits = np.arange(0, 1 << 16, dtype=np.uint32).astype(np.uint16)
    h = relay.var("h", shape=(bits.size,), dtype="float16")
    edges = np.array([65504, 65519.99, 65520, 1e-8, 2.0**-25, 2.0**-25 * 1.0001, 2.0**-24 * 1.5, 2.0**-14 * (1 - 2.0**-11),
                      1 + 2.0**-11, 1 + 3 * 2.0**-11, -0.0, 3e38], "float32")  # fmt: skip
    f = relay.var("f", shape=edges.shape, dtype="float32")
    fn = relay.Function([h, f], relay.Tuple([relay.cast(relay.cast(h, "float32"), "float16"), relay.cast(f, "float16")]))
    mod = xrelay.IRModule.from_expr(fn)
    lib = xrelay.build(mod, target="c", opt_level=0)
    lib.run(h=bits.view(np.float16), f=edges)
    got = lib.get_output(0).view(np.uint16)
    finite = ~np.isnan(bits.view(np.float16))
    np.testing.assert_array_equal(got[finite], bits[finite])
    assert np.isnan(lib.get_output(0)[~finite]).all()
    np.testing.assert_array_equal(lib.get_output(1).view(np.uint16), edges.astype(np.float16).view(np.uint16))


def test_resize_upsampling_and_adaptive_pools(tmp_path):
    x = relay.var("x", shape=(1, 3, 5, 7))
    outs = [
        relay.image.resize2d(x, (9, 4), method="linear", coordinate_transformation_mode="half_pixel"),
        relay.image.resize2d(x, (8, 11), method="cubic", coordinate_transformation_mode="align_corners"),
        relay.image.resize2d(x, (10, 14), method="nearest_neighbor", coordinate_transformation_mode="asymmetric"),
        relay.image.resize2d(x, (3, 3), method="cubic", cubic_exclude=1),
        relay.nn.upsampling(x, scale_h=2, scale_w=2, method="bilinear", align_corners=True),
        relay.nn.upsampling(x, scale_h=2, scale_w=3),
        relay.nn.adaptive_avg_pool2d(x, (2, 3)),
        relay.image.resize1d(relay.reshape(x, (1, 3, 35)), (20,), method="linear"),
    ]
    check(relay.Function([x], relay.Tuple(outs)), {"x": f32(1, 3, 5, 7)}, tmp_path, opt_level=0, rtol=1e-5)
    q = relay.var("q", shape=(1, 2, 4, 4), dtype="int8")
    qouts = [relay.image.resize2d(q, (7, 6), method="nearest_neighbor"), relay.image.resize2d(q, (6, 6), method="linear"),
             relay.nn.adaptive_avg_pool2d(q, (3, 3))]  # fmt: skip
    check(relay.Function([q], relay.Tuple(qouts)), {"q": RNG.integers(-128, 128, (1, 2, 4, 4)).astype("int8")},
          tmp_path, opt_level=0, exact=True)  # fmt: skip


def test_elementwise_families(tmp_path):
    op = relay.op.make_call
    a = relay.var("a", shape=(3, 4))
    b = relay.var("b", shape=(4,))
    i = relay.var("i", shape=(9,), dtype="int32")
    j = relay.var("j", shape=(9,), dtype="int32")
    p, q = relay.var("p", shape=(4,), dtype="bool"), relay.var("q", shape=(4,), dtype="bool")
    outs = [*(op(n, [a]) for n in ("sin", "cos", "tan", "atan", "sign", "trunc")),
            *(op(n, [a, b]) for n in ("mod", "floor_mod", "floor_divide")),
            *(op(n, [i, j]) for n in ("mod", "floor_mod", "floor_divide", "bitwise_and", "bitwise_or", "bitwise_xor")),
            op("sign", [i]), *(op(n, [p, q]) for n in ("logical_and", "logical_or", "logical_xor")),
            op("logical_not", [p])]  # fmt: skip
    big = np.iinfo("int32")
    inputs = {"a": f32(3, 4) * 4, "b": np.array([1.5, -2.0, 0.7, -0.3], "float32"),
              "i": np.array([7, -7, 7, -7, 0, big.min, big.min, 5, -3], "int32"),
              "j": np.array([2, 2, -2, -2, 3, -1, 0, 0, 3], "int32"),
              "p": np.array([1, 1, 0, 0], bool), "q": np.array([1, 0, 1, 0], bool)}  # fmt: skip
    check(relay.Function([a, b, i, j, p, q], relay.Tuple(outs)), inputs, tmp_path, opt_level=0, rtol=1e-5)


def test_integer_and_bool_max_and_min_reductions(tmp_path):
    """max/min on integers start from the dtype's extremes (a row of the most negative int32
    stays that), bool max/min are any/all; the ViT's int32 max among them."""
    i = relay.var("i", shape=(3, 4), dtype="int32")
    u = relay.var("u", shape=(2, 5), dtype="uint8")
    s = relay.var("s", shape=(6,), dtype="int8")
    b = relay.var("b", shape=(2, 3), dtype="bool")
    outs = [relay.max(i, axis=1), relay.min(i, axis=0), relay.max(u, axis=0), relay.min(u),
            relay.max(s), relay.min(s, keepdims=True), relay.max(b, axis=1), relay.min(b, axis=1)]  # fmt: skip
    big = np.iinfo("int32")
    inputs = {"i": np.array([[big.min] * 4, [3, -9, big.max, 0], [-1, -2, -3, -4]], "int32"),
              "u": np.array([[255, 0, 7, 9, 1], [254, 3, 7, 10, 0]], "uint8"),
              "s": np.array([-128, 5, -7, 127, 0, 3], "int8"),
              "b": np.array([[0, 0, 0], [1, 0, 1]], bool)}  # fmt: skip
    check(relay.Function([i, u, s, b], relay.Tuple(outs)), inputs, tmp_path, exact=True)


def test_index_and_shape_ops(tmp_path):
    x = relay.var("x", shape=(2, 3, 4))
    v = relay.var("v", shape=(6,), dtype="int32")
    outs = [
        relay.stack([x, relay.negative(x)], axis=1),
        relay.tile(x, (2, 1, 1, 2)),
        relay.repeat(x, 2, axis=2),
        relay.broadcast_to(relay.const(f32(3, 1)), (2, 3, 4)),
        relay.slice_like(x, relay.zeros((1, 2, 3), "float32")),
        relay.collapse_sum_like(x, relay.zeros((3, 1), "float32")),
        relay.gather_nd(x, relay.const(np.array([[1, 0, -1], [2, 0, 1]], "int64"))),
        relay.one_hot(v, relay.const(np.float32(2)), relay.const(np.float32(-1)), depth=5, axis=0, dtype="float32"),
        relay.cumsum(x, axis=1), relay.cumprod(x, axis=2, exclusive=True), relay.cumsum(v, dtype="int64"),
        relay.argmax(x, axis=[1]), relay.argmin(x, axis=[0, 2], keepdims=True),
        relay.variance(x, axis=[2]), relay.variance(x, axis=[0, 1], unbiased=True),
        relay.argsort(x, axis=1, is_ascend=False), *relay.topk(x, k=2, axis=2),
        relay.einsum([x, relay.const(f32(4, 5))], "abc,cd->bad"),
        relay.reverse_sequence(x, relay.const(np.array([2, 3], "int32")), seq_axis=2, batch_axis=0),
        relay.scatter_elements(x, relay.const(np.array([[[0, 2, 1, 0]]], "int64")), relay.const(f32(1, 1, 4)), axis=1, reduction="add"),
        relay.scatter_nd(x, relay.const(np.array([[1], [0]], "int64")), relay.const(f32(1, 4)), mode="update"),
        relay.reinterpret(relay.add(v, relay.const(np.int32(1 << 30))), "float32"),
        relay.shape_of(x), relay.ndarray_size(x, "int64"),
    ]  # fmt: skip
    inputs = {"x": f32(2, 3, 4), "v": np.array([0, 4, 2, 7, -1, 3], "int32")}
    check(relay.Function([x, v], relay.Tuple(outs)), inputs, tmp_path, opt_level=0, rtol=1e-5, atol=1e-5)


def test_normalisations_and_n_d_convolutions(tmp_path):
    x = relay.var("x", shape=(2, 4, 5, 6))
    g, b = relay.const(f32(4)), relay.const(f32(4))
    outs = [relay.nn.instance_norm(x, g, b), relay.nn.group_norm(x, g, b, num_groups=2),
            relay.nn.l2_normalize(x, 1e-4, axis=[1]), relay.nn.lrn(x, size=3, axis=1, alpha=0.5, beta=0.75, bias=1.5)]  # fmt: skip
    s = relay.var("s", shape=(1, 3, 10))
    outs.append(relay.nn.conv1d(s, relay.const(f32(4, 3, 3)), padding=(1, 2), strides=(2,), channels=4, kernel_size=(3,)))
    v = relay.var("v", shape=(1, 2, 4, 5, 5))
    c3 = relay.nn.conv3d(v, relay.const(f32(4, 1, 2, 3, 3)), padding=(1, 1, 1), groups=2, channels=4, kernel_size=(2, 3, 3))
    outs += [c3, relay.nn.max_pool3d(c3, pool_size=(2, 2, 2), strides=(1, 2, 2), padding=(1, 0, 1)),
             relay.nn.avg_pool3d(c3, pool_size=(2, 2, 2), padding=(1, 1, 1), count_include_pad=True)]  # fmt: skip
    outs += [relay.nn.adaptive_avg_pool3d(c3, (2, 2, 3)), relay.nn.adaptive_max_pool3d(c3, (3, 2, 2)),
             relay.nn.adaptive_avg_pool3d(v, (2, 3, 2), layout="NDHWC")]  # fmt: skip
    inputs = {"x": f32(2, 4, 5, 6), "s": f32(1, 3, 10), "v": f32(1, 2, 4, 5, 5)}
    check(relay.Function([x, s, v], relay.Tuple(outs)), inputs, tmp_path, opt_level=0, rtol=1e-4, atol=1e-5)
    q = relay.var("q", shape=(1, 2, 3, 5, 4), dtype="int8")
    qouts = [relay.nn.adaptive_avg_pool3d(q, (2, 2, 3)), relay.nn.adaptive_max_pool3d(q, (2, 3, 2))]
    check(relay.Function([q], relay.Tuple(qouts)), {"q": RNG.integers(-128, 128, (1, 2, 3, 5, 4)).astype("int8")},
          tmp_path, opt_level=0, exact=True)  # fmt: skip


def test_qnn_ops_at_opt_level_0_are_bit_exact(tmp_path):
    """Below opt_level 1 the pipeline leaves the qnn ops: the C target lowers them itself."""
    x = (RNG.standard_normal((1, 3, 7, 7)) * 3).astype("float32")
    lib = check(int8_block("UPWARD"), {"x": x}, tmp_path, exact=True, opt_level=0)
    assert "xr_q_multiply_shift(" in lib.get_source()


@pytest.mark.parametrize("constants", ["arrays", "blob"])
def test_generated_main_runs_the_model_standalone(constants, tmp_path):
    """``export(dir, main=True)``: model.c + main.c compile strictly into a program that reads
    raw inputs, runs, and writes raw outputs equal to the interpreter's; wrong input sizes
    are refused with a message."""
    from xrelay.backend.build import build_c
    from xrelay.testing import mlp

    mod, params = mlp.get_workload(batch_size=2)
    with xrelay.transform.PassContext(opt_level=2):
        lib = build_c(mod, params, opt_level=2, constants=constants)
    files = {f.name for f in lib.export(tmp_path, main=True)}
    assert "main.c" in files
    exe = tmp_path / "model"
    res = subprocess.run([CC, *STRICT, "-I", str(tmp_path), str(tmp_path / "model.c"), str(tmp_path / "main.c"),
                          "-o", str(exe), "-lm"], capture_output=True, text=True)  # fmt: skip
    assert res.returncode == 0, res.stderr
    x = RNG.standard_normal((2, 1, 28, 28)).astype("float32")
    (tmp_path / "data.bin").write_bytes(x.tobytes())
    args = [str(exe), *([str(tmp_path / "model.bin")] if constants == "blob" else []), str(tmp_path / "data.bin"),
            str(tmp_path / "out.bin")]  # fmt: skip
    res = subprocess.run(args, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    got = np.frombuffer((tmp_path / "out.bin").read_bytes(), dtype="float32").reshape(2, 10)
    want = xrelay.run(mod, {"data": x}, params=params)[0]
    assert np.ptp(want) > 0
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    (tmp_path / "data.bin").write_bytes(x.tobytes()[:-4])
    res = subprocess.run(args, capture_output=True, text=True)
    assert res.returncode == 1 and "expected exactly 6272 bytes" in res.stderr
    res = subprocess.run(args[:2], capture_output=True, text=True)
    assert res.returncode == 2 and "usage:" in res.stderr
    res = subprocess.run(args[:1], capture_output=True, text=True)
    if constants == "arrays":  # no arguments: inputs of zeros, the outputs printed
        assert res.returncode == 0 and res.stdout.startswith("output0 (2x10 float32):"), res.stderr
    else:  # the weights' file is needed
        assert res.returncode == 2 and "usage:" in res.stderr


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_region_of_interest_pool_and_align(layout, tmp_path):
    shape = (2, 3, 9, 11) if layout == "NCHW" else (2, 9, 11, 3)
    x = relay.var("x", shape=shape)
    rois = relay.var("rois", shape=(4, 5))
    outs = [relay.vision.roi_pool(x, rois, pooled_size=(3, 2), spatial_scale=0.5, layout=layout),
            relay.vision.roi_align(x, rois, pooled_size=(2, 3), spatial_scale=0.5, sample_ratio=-1, layout=layout),
            relay.vision.roi_align(x, rois, pooled_size=(2, 2), spatial_scale=1.0, sample_ratio=2, layout=layout,
                                   mode="max"),
            # ONNX's max (largest weighted corner term) over regions that may be under a pixel
            relay.vision.roi_align(x, rois, pooled_size=(2, 3), spatial_scale=0.5, sample_ratio=-1, layout=layout,
                                   mode="max_corner", min_roi_size=0.0)]  # fmt: skip
    boxes = np.array([[0, 1.0, 2.0, 15.5, 12.0], [1, -3.0, 0.0, 6.0, 4.0], [1, 4.4, 4.4, 4.6, 4.6],
                      [0, 10.0, 2.0, 30.0, 22.0]], "float32")  # fmt: skip
    check(relay.Function([x, rois], relay.Tuple(outs)), {"x": f32(*shape), "rois": boxes}, tmp_path, opt_level=0,
          rtol=1e-5, atol=1e-5)  # fmt: skip


def test_deformable_conv2d(tmp_path):
    """Offsets moving taps inside, across and outside the image, two deformable groups, two
    convolution groups."""
    x = relay.var("x", shape=(1, 4, 6, 7))
    off = relay.var("off", shape=(1, 2 * 2 * 3 * 3, 6, 7))
    w = relay.const(f32(6, 2, 3, 3))
    y = relay.nn.deformable_conv2d(x, off, w, padding=(1, 1), deformable_groups=2, groups=2, channels=6,
                                   kernel_size=(3, 3))  # fmt: skip
    inputs = {"x": f32(1, 4, 6, 7), "off": (RNG.standard_normal((1, 36, 6, 7)) * 2.5).astype("float32")}
    check(relay.Function([x, off], y), inputs, tmp_path, opt_level=0, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_nearest_and_bilinear_every_padding(align_corners, tmp_path):
    x = relay.var("x", shape=(2, 3, 5, 6))
    grid = relay.var("grid", shape=(2, 2, 4, 7))
    outs = [relay.image.grid_sample(x, grid, method=m, padding_mode=p, align_corners=align_corners)
            for m in ("nearest", "bilinear") for p in ("zeros", "border", "reflection")]  # fmt: skip
    g = (RNG.uniform(-2.2, 2.2, (2, 2, 4, 7))).astype("float32")
    g[0, :, 0, :3] = [[-1, 1, 0.5], [1, -1, -0.5]]  # corners and a half step
    check(relay.Function([x, grid], relay.Tuple(outs)), {"x": f32(2, 3, 5, 6), "grid": g}, tmp_path, opt_level=0,
          rtol=1e-5, atol=1e-5)  # fmt: skip


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_max_pool_window_wholly_in_padding_is_the_lowest_float(layout, tmp_path):
    """TOPI pads max pools with tvm::min_value (the lowest float32, not -inf): the ceil-mode
    windows past the input see only padding and give it, in the C target as in the reference."""
    shape = (1, 1, 2, 2) if layout == "NCHW" else (1, 2, 2, 1)
    x = relay.var("x", shape=shape)
    y = relay.nn.max_pool2d(x, pool_size=(2, 2), strides=(2, 2), padding=(0, 0, 1, 1), ceil_mode=True, layout=layout)
    lib = check(relay.Function([x], y), {"x": np.ones(shape, "float32")}, tmp_path, exact=True)
    low = np.finfo(np.float32).min
    assert lib.get_output(0).reshape(2, 2).tolist() == [[1.0, low], [low, low]]
