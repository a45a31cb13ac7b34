"""Inferred result types of relay ops: broadcasting, layouts, strides, padding, dilation, groups,
ceil_mode, reshape special values, and the errors (each names the op and the types)."""

from __future__ import annotations

import pytest
from xdsl.utils.test_value import create_ssa_value

from xrelay.dialects.relay import RELAY_OPS, RelayTypeError, shape_of, tensor_type
from xrelay.dialects.relay.dtypes import dtype_of


def infer(name: str, *types, **attrs):
    """Build the op on fresh values of the given (shape, dtype) pairs; return its result types."""
    values = [create_ssa_value(tensor_type(s, d)) for s, d in types]
    op = RELAY_OPS[name].make(values, **attrs)
    op.verify()
    return [(shape_of(r.type), dtype_of(r.type)) for r in op.results]


F = "float32"


def one(name, *types, **attrs):
    (res,) = infer(name, *types, **attrs)
    return res


@pytest.mark.parametrize(
    ("a", "b", "out"),
    [
        ((2, 3), (3,), (2, 3)),
        ((4, 1, 5), (1, 6, 1), (4, 6, 5)),
        ((), (2, 2), (2, 2)),
        ((1, 64, 56, 56), (64, 1, 1), (1, 64, 56, 56)),
        ((None, 3), (1, 3), (None, 3)),
    ],
)
def test_binary_broadcasting(a, b, out):
    assert one("add", (a, F), (b, F)) == (out, F)
    assert one("less", (a, F), (b, F)) == (out, "bool")


def test_binary_errors_name_op_and_types():
    with pytest.raises(RelayTypeError, match=r"relay.subtract: operands cannot be broadcast together: tensor<2x3xf32>, tensor<4xf32>"):
        one("subtract", ((2, 3), F), ((4,), F))
    with pytest.raises(RelayTypeError, match=r"relay.add: operand dtypes differ"):
        one("add", ((2,), F), ((2,), "int32"))


@pytest.mark.parametrize(
    "name",
    ["nn.relu", "tanh", "sigmoid", "exp", "log", "sqrt", "rsqrt", "abs", "negative", "erf",
     "floor", "ceil", "round", "copy", "zeros_like", "ones_like", "annotation.stop_fusion"],
)
def test_unary_keep_type(name):
    assert one(name, ((2, 5), "float16")) == ((2, 5), "float16")


def test_cast_clip_leaky():
    assert one("cast", ((1, 2, 2, 2), "int16"), dtype="uint32") == ((1, 2, 2, 2), "uint32")
    assert one("clip", ((3,), F), a_min=0.0, a_max=6.0) == ((3,), F)
    assert one("nn.leaky_relu", ((3,), F)) == ((3,), F)
    with pytest.raises(RelayTypeError, match="relay.cast: unknown dtype 'float8'"):
        one("cast", ((3,), F), dtype="float8")


@pytest.mark.parametrize(
    ("data", "weight", "attrs", "out"),
    [
        ((1, 3, 224, 224), (64, 3, 7, 7), dict(strides=(2, 2), padding=(3, 3)), (1, 64, 112, 112)),
        ((1, 64, 56, 56), (64, 64, 3, 3), dict(padding=1), (1, 64, 56, 56)),
        ((1, 8, 10, 10), (8, 1, 3, 3), dict(groups=8, padding=(1, 1)), (1, 8, 10, 10)),
        ((1, 4, 10, 10), (6, 2, 3, 3), dict(groups=2), (1, 6, 8, 8)),
        ((1, 3, 10, 10), (4, 3, 3, 3), dict(dilation=(2, 2)), (1, 4, 6, 6)),
        ((1, 3, 10, 10), (4, 3, 3, 3), dict(padding=(0, 1, 2, 3)), (1, 4, 10, 12)),
        ((2, 3, 9, 9), (4, 3, 3, 3), dict(strides=3), (2, 4, 3, 3)),
    ],
)
def test_conv2d_nchw(data, weight, attrs, out):
    assert one("nn.conv2d", (data, F), (weight, F), **attrs) == (out, F)


def test_conv2d_layouts_and_dtype():
    out = one("nn.conv2d", ((1, 224, 224, 3), F), ((7, 7, 3, 64), F), strides=(2, 2),
              padding=(3, 3), data_layout="NHWC", kernel_layout="HWIO")
    assert out == ((1, 112, 112, 64), F)
    out = one("nn.conv2d", ((1, 3, 8, 8), "int8"), ((4, 3, 3, 3), "int8"), out_dtype="int32")
    assert out == ((1, 4, 6, 6), "int32")
    out = one("nn.conv2d", ((1, 3, 8, 8), F), ((4, 3, 3, 3), F), out_layout="NHWC")
    assert out == ((1, 6, 6, 4), F)


def test_conv2d_padding_normalised_like_relay():
    x = create_ssa_value(tensor_type((1, 3, 8, 8), F))
    w = create_ssa_value(tensor_type((4, 3, 3, 3), F))
    assert RELAY_OPS["nn.conv2d"].make([x, w], padding=1).attrs["padding"] == (1, 1, 1, 1)
    assert RELAY_OPS["nn.conv2d"].make([x, w], padding=(1, 2)).attrs["padding"] == (1, 2, 1, 2)


def test_conv2d_errors():
    with pytest.raises(RelayTypeError, match=r"relay.nn.conv2d: data tensor<1x3x8x8xf32> has 3 input channels but weight tensor<4x2x3x3xf32> expects 2 x groups 1 = 2"):
        one("nn.conv2d", ((1, 3, 8, 8), F), ((4, 2, 3, 3), F))
    with pytest.raises(RelayTypeError, match="kernel_size"):
        one("nn.conv2d", ((1, 3, 8, 8), F), ((4, 3, 3, 3), F), kernel_size=(5, 5))


def test_conv2d_transpose():
    out = one("nn.conv2d_transpose", ((1, 8, 4, 4), F), ((8, 4, 3, 3), F), strides=(2, 2))
    assert out == ((1, 4, 9, 9), F)
    out = one("nn.conv2d_transpose", ((1, 8, 4, 4), F), ((8, 4, 4, 4), F), strides=(2, 2),
              padding=(1, 1), output_padding=(1, 1))
    assert out == ((1, 4, 9, 9), F)


@pytest.mark.parametrize(
    ("attrs", "out"),
    [
        (dict(pool_size=(3, 3), strides=(2, 2), padding=(1, 1)), (1, 4, 56, 56)),
        (dict(pool_size=(2, 2), strides=(2, 2)), (1, 4, 56, 56)),
        (dict(pool_size=(3, 3), strides=(2, 2)), (1, 4, 55, 55)),
        (dict(pool_size=(3, 3), strides=(2, 2), ceil_mode=True), (1, 4, 56, 56)),
        (dict(pool_size=(3, 3), dilation=(2, 2)), (1, 4, 108, 108)),
    ],
)
def test_pools(attrs, out):
    assert one("nn.max_pool2d", ((1, 4, 112, 112), F), **attrs) == (out, F)
    assert one("nn.avg_pool2d", ((1, 4, 112, 112), F), **attrs) == (out, F)


def test_pool_nhwc_and_global_and_adaptive():
    assert one("nn.max_pool2d", ((1, 8, 8, 2), "int8"), pool_size=(2, 2), layout="NHWC") == ((1, 7, 7, 2), "int8")
    assert one("nn.global_avg_pool2d", ((1, 512, 7, 7), F)) == ((1, 512, 1, 1), F)
    assert one("nn.global_max_pool2d", ((1, 7, 7, 512), F), layout="NHWC") == ((1, 1, 1, 512), F)
    assert one("nn.adaptive_avg_pool2d", ((1, 8, 7, 7), F), output_size=(2, 3)) == ((1, 8, 2, 3), F)
    assert one("nn.adaptive_avg_pool2d", ((1, 8, 7, 7), F)) == ((1, 8, 7, 7), F)


def test_batch_norm_dropout_layer_norm():
    v = ((64,), F)
    res = infer("nn.batch_norm", ((1, 64, 8, 8), F), v, v, v, v)
    assert res == [((1, 64, 8, 8), F), ((64,), F), ((64,), F)]
    res = infer("nn.batch_norm", ((1, 8, 8, 64), F), v, v, v, v, axis=3)
    assert res[0] == ((1, 8, 8, 64), F)
    assert infer("nn.dropout", ((2, 3), F)) == [((2, 3), F), ((2, 3), F)]
    assert one("nn.layer_norm", ((2, 8, 16), F), ((16,), F), ((16,), F)) == ((2, 8, 16), F)
    with pytest.raises(RelayTypeError, match="relay.nn.batch_norm: gamma tensor<3xf32>"):
        infer("nn.batch_norm", ((1, 4, 2, 2), F), ((3,), F), ((4,), F), ((4,), F), ((4,), F))


def test_dense_matmul_batch_matmul_bias_softmax():
    assert one("nn.dense", ((1, 512), F), ((1000, 512), F)) == ((1, 1000), F)
    assert one("nn.dense", ((2, 7, 64), F), ((10, 64), F), units=10) == ((2, 7, 10), F)
    assert one("nn.matmul", ((4, 8), F), ((8, 3), F)) == ((4, 3), F)
    assert one("nn.matmul", ((4, 8), F), ((3, 8), F), transpose_b=True) == ((4, 3), F)
    assert one("nn.batch_matmul", ((2, 4, 8), F), ((2, 3, 8), F), transpose_b=True) == ((2, 4, 3), F)
    assert one("nn.batch_matmul", ((2, 4, 8), F), ((1, 8, 5), F)) == ((2, 4, 5), F)
    assert one("nn.bias_add", ((1, 10), F), ((10,), F), axis=-1) == ((1, 10), F)
    assert one("nn.softmax", ((1, 1000), F)) == ((1, 1000), F)
    assert one("nn.log_softmax", ((2, 10), F), axis=0) == ((2, 10), F)
    assert one("nn.batch_flatten", ((1, 512, 1, 1), F)) == ((1, 512), F)
    assert one("nn.prelu", ((1, 4, 8, 8), F), ((4,), F)) == ((1, 4, 8, 8), F)
    assert one("nn.pad", ((1, 3, 4, 4), F), ((), F), pad_width=((0, 0), (0, 0), (1, 2), (3, 4))) == ((1, 3, 7, 11), F)


@pytest.mark.parametrize(
    ("attrs", "out"),
    [
        (dict(), ()),
        (dict(axis=1), (2, 4)),
        (dict(axis=(0, 2), keepdims=True), (1, 3, 1)),
        (dict(axis=1, exclude=True), (3,)),
        (dict(axis=-1), (2, 3)),
    ],
)
def test_reductions(attrs, out):
    for name in ("sum", "mean", "max", "min", "prod"):
        assert one(name, ((2, 3, 4), F), **attrs) == (out, F)
    assert one("argmax", ((2, 3, 4), F), **attrs) == (out, "int32")
    assert one("argmin", ((2, 3, 4), F), **attrs) == (out, "int32")


@pytest.mark.parametrize(
    ("shape", "newshape", "out"),
    [
        ((2, 3, 4), (6, 4), (6, 4)),
        ((2, 3, 4), (-1, 4), (6, 4)),
        ((2, 3, 4), (0, -1), (2, 12)),
        ((2, 3, 4), (-2,), (2, 3, 4)),
        ((2, 3, 4), (2, -2), (2, 3, 4)),
        ((2, 3, 4), (-3, 4), (6, 4)),
        ((2, 3, 4), (0, -3), (2, 12)),
        ((2, 12), (0, -4, 3, -1), (2, 3, 4)),
        ((2, 12), (-4, 1, 2, -1), (1, 2, 12)),
        ((1, 4, 5, 6), (1, 4, 30), (1, 4, 30)),
        ((4,), (2, 2, 1), (2, 2, 1)),
    ],
)
def test_reshape_special_values(shape, newshape, out):
    assert one("reshape", (shape, F), newshape=newshape) == (out, F)


def test_reshape_errors():
    with pytest.raises(RelayTypeError, match=r"relay.reshape: cannot reshape \[2, 4\] \(8 elements\) to \[3, 3\]"):
        one("reshape", ((2, 4), F), newshape=(3, 3))
    with pytest.raises(RelayTypeError, match="more than one -1"):
        one("reshape", ((2, 4), F), newshape=(-1, -1))


def test_shape_ops():
    assert one("transpose", ((1, 3, 4, 5), F), axes=(0, 2, 3, 1)) == ((1, 4, 5, 3), F)
    assert one("transpose", ((1, 3, 4), F)) == ((4, 3, 1), F)
    assert one("concatenate", ((1, 2), F), ((1, 3), F), axis=1) == ((1, 5), F)
    assert one("concatenate", ((1, 2), F), ((3, 2), F), axis=-2) == ((4, 2), F)
    assert one("stack", ((3,), F), ((3,), F), axis=1) == ((3, 2), F)
    assert infer("split", ((1, 4), F), indices_or_sections=2, axis=1) == [((1, 2), F)] * 2
    assert infer("split", ((10,), F), indices_or_sections=(3, 7)) == [((3,), F), ((4,), F), ((3,), F)]
    assert one("squeeze", ((1, 8, 1, 1), F)) == ((8,), F)
    assert one("squeeze", ((1, 8, 1, 1), F), axis=(2, 3)) == ((1, 8), F)
    assert one("expand_dims", ((64,), F), axis=1, num_newaxis=2) == ((64, 1, 1), F)
    assert one("expand_dims", ((2, 3), F), axis=-1) == ((2, 3, 1), F)
    assert len(one("expand_dims", ((2, 3), F), axis=0, num_newaxis=62)[0]) == 64
    # Found by the fuzzer: the shape list of 2**31 ones took the machine's memory.
    with pytest.raises(RelayTypeError, match="num_newaxis 2147483648 gives rank 2147483650, more than the 64"):
        one("expand_dims", ((2, 3), F), axis=0, num_newaxis=2**31)
    with pytest.raises(RelayTypeError, match="gives rank 65"):
        one("expand_dims", ((2, 3), F), axis=0, num_newaxis=63)
    assert one("broadcast_to", ((1, 3), F), shape=(4, 3)) == ((4, 3), F)
    assert one("tile", ((2, 3), F), reps=(2, 1)) == ((4, 3), F)
    assert one("tile", ((2, 3), F), reps=(2, 1, 2)) == ((2, 2, 6), F)
    assert one("take", ((10, 4), F), ((3,), "int32"), axis=0) == ((3, 4), F)
    assert one("take", ((10, 4), F), ((2, 3), "int64")) == ((2, 3), F)
    assert one("where", ((4, 1), "bool"), ((4, 3), F), ((3,), F)) == ((4, 3), F)
    assert one("shape_of", ((1, 3, 4), F)) == ((3,), "int32")
    assert one("shape_of", ((1, 3), F), dtype="int64") == ((2,), "int64")


@pytest.mark.parametrize(
    ("attrs", "out"),
    [
        (dict(begin=(0, 1), end=(2, 3)), (2, 2)),
        (dict(begin=(3,), end=(0,), strides=(-1,)), (3, 4)),
        (dict(begin=(-1,), end=(-5,), strides=(-1,)), (4, 4)),
        (dict(begin=(1, 0), end=(2, -1), slice_mode="size"), (2, 4)),
        (dict(begin=(1,), end=(100,), axes=(1,)), (4, 3)),
        (dict(begin=(0, 0), end=(4, 4), strides=(2, 3)), (2, 2)),
    ],
)
def test_strided_slice(attrs, out):
    assert one("strided_slice", ((4, 4), F), **attrs) == (out, F)


@pytest.mark.parametrize(
    ("shape", "src", "dst", "out"),
    [
        ((1, 8, 2, 3), "NCHW", "NHWC", (1, 2, 3, 8)),
        ((1, 8, 2, 3), "NCHW", "NCHW4c", (1, 2, 2, 3, 4)),
        ((1, 2, 2, 3, 4), "NCHW4c", "NCHW", (1, 8, 2, 3)),
        ((16, 8, 3, 3), "OIHW", "OIHW4i8o", (2, 2, 3, 3, 4, 8)),
        ((64, 3, 7, 7), "OIHW", "HWIO", (7, 7, 3, 64)),
    ],
)
def test_layout_transform(shape, src, dst, out):
    assert one("layout_transform", (shape, F), src_layout=src, dst_layout=dst) == (out, F)


def test_dynamic_dims_propagate():
    assert one("nn.relu", ((None, 4), F)) == ((None, 4), F)
    assert one("nn.dense", ((None, 8), F), ((4, 8), F)) == ((None, 4), F)
    assert one("reshape", ((None, 8), F), newshape=(0, 2, 4)) == ((None, 2, 4), F)
    assert one("reshape", ((None, 8), F), newshape=(-1,)) == ((None,), F)


def test_unknown_and_missing_attributes():
    with pytest.raises(RelayTypeError, match=r"relay.nn.relu: unknown attribute\(s\) alpha; known: none"):
        one("nn.relu", ((2,), F), alpha=0.1)
    with pytest.raises(RelayTypeError, match="relay.nn.max_pool2d: attribute 'pool_size' is required"):
        one("nn.max_pool2d", ((1, 1, 4, 4), F))
    with pytest.raises(RelayTypeError, match="attribute 'groups' expects an integer"):
        one("nn.conv2d", ((1, 3, 8, 8), F), ((4, 3, 3, 3), F), groups="2")


def test_every_op_has_metadata_and_an_example():
    from xrelay.dialects.relay import OpPattern

    for name, cls in RELAY_OPS.items():
        assert cls.name == "relay." + name
        assert isinstance(cls.PATTERN, OpPattern)
        assert "```mlir" in (cls.__doc__ or ""), name
    assert RELAY_OPS["nn.dropout"].STATEFUL
    assert RELAY_OPS["reshape"].RESHAPE_ONLY and RELAY_OPS["squeeze"].RESHAPE_ONLY
    assert RELAY_OPS["on_device"].NON_COMPUTATIONAL
    assert RELAY_OPS["nn.conv2d"].PATTERN == OpPattern.OUT_ELEMWISE_FUSABLE
    assert RELAY_OPS["add"].PATTERN == OpPattern.BROADCAST
    assert RELAY_OPS["sum"].PATTERN == OpPattern.COMM_REDUCE


def test_arg_reductions_select_last_index_runs():
    import numpy as np

    import xrelay
    from xrelay import relay

    x = relay.var("x", shape=(2, 4))
    mod = xrelay.IRModule.from_expr(relay.argmax(x, axis=1, select_last_index=True))
    assert "select_last_index = true" in mod.mlir_text()
    data = np.array([[1, 3, 3, 0], [5, 5, 1, 5]], "float32")
    (out,) = xrelay.run(mod, {"x": data})
    assert out.tolist() == [2, 3]
    mod = xrelay.IRModule.from_expr(relay.argmin(x, axis=1))
    (out,) = xrelay.run(mod, {"x": -data})
    assert out.tolist() == [1, 0]
