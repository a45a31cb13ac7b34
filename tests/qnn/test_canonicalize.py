"""qnn-canonicalize-ops: every qnn op lowers to integer relay ops with the bits of its kernel."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.dialects.qnn import QNN_OPS
from xrelay.dialects.relay import RelayTypeError
from xrelay.testing.semantics import check_semantics

RNG = np.random.default_rng(7)


def c(value, dtype):
    return relay.const(np.asarray(value, dtype=dtype))


def ints(shape, dtype):
    info = np.iinfo(dtype)
    return RNG.integers(info.min, int(info.max) + 1, shape).astype(dtype)


def lowered_matches(expr, inputs, **kw):
    """The module runs the same before and after lowering, on given inputs (exact)."""
    mod = xrelay.IRModule.from_expr(expr)
    before = xrelay.run(mod, inputs)
    after_mod = relay.qnn.transform.CanonicalizeOps()(mod.clone())
    names = {op.name for op in after_mod.module.walk()}
    assert not any(n.startswith("qnn.") for n in names if not n.startswith("qnn.simulated")), names
    after = xrelay.run(after_mod, inputs)
    for b, a in zip(before, after, strict=True):
        np.testing.assert_array_equal(a, b)
    return before, after_mod


@pytest.mark.parametrize("rounding", ["UPWARD", "TONEAREST"])
@pytest.mark.parametrize("compute_dtype", ["int64", "float32", "float64"])
@pytest.mark.parametrize("per_channel", [False, True])
def test_requantize(rounding, compute_dtype, per_channel):
    x = relay.var("x", shape=(2, 4, 3, 3), dtype="int32")
    s_in = c([0.5, 0.25, 0.125, 0.3], "float32") if per_channel else c(0.37, "float32")
    zp_in = c([1, 2, -3, 0], "int32") if per_channel else c(3, "int32")
    y = relay.qnn.op.requantize(
        x, s_in, zp_in, c(0.8, "float32"), c(-4, "int32"), axis=1, rounding=rounding,
        compute_dtype=compute_dtype, out_dtype="int8",
    )  # fmt: skip
    data = RNG.integers(-600, 600, (2, 4, 3, 3)).astype("int32")
    data.flat[:6] = [-3, -2, 2, 5, 7, -9]  # midpoints for the 0.5 multiplier
    lowered_matches(y, {"x": data})


def test_requantize_midpoints_round_as_relay():
    # 0.5 * x: UPWARD rounds -2.5 to -2, TONEAREST to -3 (Relay's rounding modes)
    x = relay.var("x", shape=(4,), dtype="int32")
    data = np.array([-5, -3, 3, 5], "int32")
    out = {}
    for rounding in ("UPWARD", "TONEAREST"):
        y = relay.qnn.op.requantize(x, c(0.5, "float32"), c(0, "int32"), c(1.0, "float32"), c(0, "int32"), rounding=rounding)
        out[rounding], _ = lowered_matches(y, {"x": data})
    np.testing.assert_array_equal(out["UPWARD"][0], [-2, -1, 2, 3])
    np.testing.assert_array_equal(out["TONEAREST"][0], [-3, -2, 2, 3])


@pytest.mark.parametrize("per_channel", [False, True])
def test_quantize_dequantize(per_channel):
    x = relay.var("x", shape=(2, 3, 4))
    s = c([0.1, 0.02, 0.5], "float32") if per_channel else c(0.05, "float32")
    zp = c([3, 0, -2], "int32") if per_channel else c(10, "int32")
    q = relay.qnn.op.quantize(x, s, zp, axis=1, out_dtype="int8")
    y = relay.qnn.op.dequantize(q, s, zp, axis=1)
    (out,), _ = lowered_matches(y, {"x": RNG.normal(size=(2, 3, 4)).astype("float32") * 3})
    assert out.dtype == np.float32


@pytest.mark.parametrize(
    "dtypes, zps, kw",
    [
        (("uint8", "int8"), (3, 2), dict(padding=(1, 1))),
        (("int8", "int8"), (0, 0), dict(strides=(2, 2))),
        (("uint8", "uint8"), (0, 5), dict(kernel_size=(1, 1), strides=(2, 2))),
        (("int8", "int8"), (-4, 0), dict(dilation=(2, 2), padding=(2, 1, 0, 1))),
        (("uint8", "int8"), (7, 1), dict(data_layout="NHWC", kernel_layout="HWIO", padding=(1, 1))),
        (("int8", "int8"), (5, 3), dict(dilation=(2, 2))),  # fallback (dilated, kzp != 0)
    ],
)
def test_conv2d(dtypes, zps, kw):
    kh, kwid = kw.pop("kernel_size", (3, 3))
    nhwc = kw.get("data_layout") == "NHWC"
    xshape = (1, 9, 9, 4) if nhwc else (1, 4, 9, 9)
    wshape = (kh, kwid, 4, 6) if nhwc else (6, 4, kh, kwid)
    x = relay.var("x", shape=xshape, dtype=dtypes[0])
    w = relay.const(ints(wshape, dtypes[1]))
    y = relay.qnn.op.conv2d(
        x, w, c(zps[0], "int32"), c(zps[1], "int32"), c(0.1, "float32"), c(0.2, "float32"),
        kernel_size=(kh, kwid), channels=6, **kw,
    )  # fmt: skip
    lowered_matches(y, {"x": ints(xshape, dtypes[0])})


@pytest.mark.parametrize("zps", [(2, 3), (0, 4), (5, 0)])
def test_depthwise_conv2d(zps):
    x = relay.var("x", shape=(1, 4, 7, 7), dtype="uint8")
    w = relay.const(ints((4, 1, 3, 3), "int8"))
    y = relay.qnn.op.conv2d(
        x, w, c(zps[0], "int32"), c(zps[1], "int32"), c(0.1, "float32"), c([0.2] * 4, "float32"),
        kernel_size=(3, 3), channels=4, groups=4, padding=(1, 1), strides=(2, 2),
    )  # fmt: skip
    lowered_matches(y, {"x": ints((1, 4, 7, 7), "uint8")})


def test_grouped_conv2d_and_per_channel_kernel_zero_point_use_the_fallback():
    x = relay.var("x", shape=(1, 4, 5, 5), dtype="int8")
    w = relay.const(ints((6, 2, 3, 3), "int8"))
    y = relay.qnn.op.conv2d(
        x, w, c(1, "int32"), c(2, "int32"), c(0.1, "float32"), c(0.2, "float32"),
        kernel_size=(3, 3), channels=6, groups=2,
    )  # fmt: skip
    lowered_matches(y, {"x": ints((1, 4, 5, 5), "int8")})
    w2 = relay.const(ints((6, 4, 3, 3), "int8"))
    y2 = relay.qnn.op.conv2d(
        x, w2, c(1, "int32"), c(list(range(6)), "int32"), c(0.1, "float32"), c([0.2] * 6, "float32"),
        kernel_size=(3, 3), channels=6,
    )  # fmt: skip
    lowered_matches(y2, {"x": ints((1, 4, 5, 5), "int8")})


@pytest.mark.parametrize("zps", [(0, 0), (3, 0), (0, -2), (4, 5)])
def test_dense_and_batch_matmul(zps):
    x = relay.var("x", shape=(3, 8), dtype="uint8")
    w = relay.const(ints((5, 8), "int8"))
    y = relay.qnn.op.dense(x, w, c(zps[0], "int32"), c(zps[1], "int32"), c(0.1, "float32"), c(0.3, "float32"), units=5)
    lowered_matches(y, {"x": ints((3, 8), "uint8")})
    a = relay.var("a", shape=(2, 3, 8), dtype="int8")
    b = relay.var("b", shape=(2, 4, 8), dtype="int8")
    z = relay.qnn.op.batch_matmul(a, b, c(zps[0], "int32"), c(zps[1], "int32"), c(0.1, "float32"), c(0.3, "float32"))
    lowered_matches(z, {"a": ints((2, 3, 8), "int8"), "b": ints((2, 4, 8), "int8")})


@pytest.mark.parametrize("name", ["add", "subtract", "mul"])
@pytest.mark.parametrize("same_params", [False, True])
def test_binary(name, same_params):
    a = relay.var("a", shape=(2, 5), dtype="uint8")
    b = relay.var("b", shape=(5,), dtype="uint8")
    fn = getattr(relay.qnn.op, name)
    if same_params:
        args = (c(0.1, "float32"), c(3, "int32")) * 3
    else:
        args = (c(0.1, "float32"), c(3, "int32"), c(0.07, "float32"), c(128, "int32"), c(0.2, "float32"), c(9, "int32"))
    y = fn(a, b, *args)
    lowered_matches(y, {"a": ints((2, 5), "uint8"), "b": ints((5,), "uint8")})


def test_per_channel_mul_and_add():
    a = relay.var("a", shape=(2, 3), dtype="int8")
    b = relay.var("b", shape=(2, 3), dtype="int8")
    s = c([0.1, 0.2, 0.3], "float32")
    zp = c([1, 0, -1], "int32")
    for fn in (relay.qnn.op.mul, relay.qnn.op.add):
        y = fn(a, b, s, zp, s, zp, c(0.25, "float32"), c(2, "int32"), lhs_axis=1, rhs_axis=1)
        lowered_matches(y, {"a": ints((2, 3), "int8"), "b": ints((2, 3), "int8")})


def test_concatenate_and_avg_pool2d():
    a = relay.var("a", shape=(1, 2, 4, 4), dtype="int8")
    b = relay.var("b", shape=(1, 3, 4, 4), dtype="int8")
    y = relay.qnn.op.concatenate(
        [a, b], [c(0.1, "float32"), c(0.3, "float32")], [c(0, "int32"), c(-5, "int32")],
        c(0.1, "float32"), c(0, "int32"), axis=1,
    )  # fmt: skip
    p = relay.qnn.op.avg_pool2d(
        y, c(0.1, "float32"), c(0, "int32"), c(0.05, "float32"), c(-3, "int32"), pool_size=(2, 2),
        strides=(2, 2), padding=(0, 0), dilation=(1, 1), layout="NCHW",
    )  # fmt: skip
    lowered_matches(p, {"a": ints((1, 2, 4, 4), "int8"), "b": ints((1, 3, 4, 4), "int8")})


def test_conv2d_transpose():
    x = relay.var("x", shape=(1, 4, 4, 4), dtype="uint8")
    w = relay.const(ints((4, 3, 3, 3), "int8"))
    y = relay.qnn.op.conv2d_transpose(
        x, w, c(5, "int32"), c(1, "int32"), c(0.1, "float32"), c(0.2, "float32"), strides=(2, 2),
        channels=3, kernel_size=(3, 3),
    )  # fmt: skip
    lowered_matches(y, {"x": ints((1, 4, 4, 4), "uint8")})


def test_check_semantics_on_a_quantized_block():
    x = relay.var("x", shape=(1, 3, 8, 8))
    q = relay.qnn.op.quantize(x, c(0.05, "float32"), c(0, "int32"))
    w = relay.const(ints((4, 3, 3, 3), "int8"))
    acc = relay.qnn.op.conv2d(q, w, c(0, "int32"), c(0, "int32"), c(0.05, "float32"), c([0.01, 0.02, 0.03, 0.04], "float32"), kernel_size=(3, 3), channels=4, padding=(1, 1))
    r = relay.qnn.op.requantize(acc, c([5e-4, 1e-3, 1.5e-3, 2e-3], "float32"), c(0, "int32"), c(0.1, "float32"), c(0, "int32"), axis=1)
    y = relay.qnn.op.dequantize(r, c(0.1, "float32"), c(0, "int32"))
    check_semantics("qnn-canonicalize-ops", xrelay.IRModule.from_expr(y), rtol=0, atol=0, trials=2)


def test_errors_name_the_op():
    x = relay.var("x", shape=(4,), dtype="int32")
    with pytest.raises(RelayTypeError, match="qnn.requantize: output_scale must be a scalar"):
        relay.qnn.op.requantize(x, c(0.5, "float32"), c(0, "int32"), c([1.0, 2.0], "float32"), c(0, "int32"))
    with pytest.raises(RelayTypeError, match="qnn.requantize: rounding must be one of"):
        relay.qnn.op.requantize(x, c(0.5, "float32"), c(0, "int32"), c(1.0, "float32"), c(0, "int32"), rounding="DOWN")
    with pytest.raises(RelayTypeError, match=r"qnn.quantize: data must be one of \[float32\]"):
        relay.qnn.op.quantize(x, c(0.5, "float32"), c(0, "int32"))
    with pytest.raises(RelayTypeError, match="qnn.dequantize: input_scale must be a scalar or a vector of 4"):
        relay.qnn.op.dequantize(relay.var("q", shape=(4,), dtype="int8"), c([0.5, 1.0], "float32"), c(0, "int32"))
    # scales that are not constants cannot be lowered (Relay requires constants too)
    s = relay.var("s", shape=(), dtype="float32")
    y = relay.qnn.op.requantize(x, s, c(0, "int32"), c(1.0, "float32"), c(0, "int32"))
    with pytest.raises(RelayTypeError, match="qnn.requantize: input_scale must be a constant"):
        relay.qnn.transform.CanonicalizeOps()(xrelay.IRModule.from_expr(y))


def test_every_qnn_op_is_registered_with_an_example():
    assert len(QNN_OPS) == 18  # Relay's 14, qnn.dequantize_sum, qnn.ort_layer_norm, qnn.ort_gelu, qnn.ort_softmax
    for name, cls in QNN_OPS.items():
        assert cls.name == name and name.startswith("qnn.")
        assert "```mlir" in (cls.__doc__ or ""), name
