"""The dyn dialect: Relay's type relations (``?`` where the value decides), the kernels against
numpy, the Relay API's dispatch to ``dyn.*`` for Expr arguments, and their errors."""

from __future__ import annotations

import numpy as np
import pytest

from xrelay import relay
from xrelay.dialects.dyn import DYN_OPS
from xrelay.dialects.relay import RelayTypeError, shape_of, tensor_type
from xrelay.kernels import KERNELS


def _t(shape, dtype="float32"):
    return tensor_type(shape, dtype)


def test_every_dyn_op_has_a_kernel_and_a_static_op():
    from xrelay.dialects.relay import RELAY_OPS

    for name, cls in DYN_OPS.items():
        assert name.startswith("dyn.") and name in KERNELS
        assert cls.STATIC in RELAY_OPS


@pytest.mark.parametrize(
    ("name", "types", "attrs", "want"),
    [
        ("dyn.reshape", [_t((2, 3)), _t((3,), "int64")], {}, (None, None, None)),
        ("dyn.broadcast_to", [_t((3, 1)), _t((2,), "int32")], {}, (None, None)),
        ("dyn.tile", [_t((2, 3)), _t((3,), "int64")], {}, (None, None, None)),
        ("dyn.tile", [_t((2, 3, 4)), _t((1,), "int64")], {}, (None, None, None)),
        ("dyn.strided_slice", [_t((4, 5, 6))] + [_t((2,), "int64")] * 3, {}, (None, None, 6)),
        ("dyn.expand_dims", [_t((2, 3)), _t((), "int64")], {"num_newaxis": 2}, (None,) * 4),
        ("dyn.squeeze", [_t((1, 3, 1)), _t((2,), "int64")], {}, (None,)),
        ("dyn.full", [_t(()), _t((2,), "int64")], {"dtype": "int8"}, (None, None)),
        ("dyn.zeros", [_t((3,), "int64")], {"dtype": "float32"}, (None,) * 3),
        ("dyn.nn.pad", [_t((2, 3)), _t((2, 2), "int64"), _t(())], {}, (None, None)),
        ("dyn.nn.upsampling", [_t((1, 2, 3, 4)), _t(()), _t(())], {}, (1, 2, None, None)),
        ("dyn.image.resize2d", [_t((1, 2, 3, 4)), _t((2,), "int64"), _t((4,))], {}, (1, 2, None, None)),
        ("dyn.topk", [_t((2, 3, 4)), _t((), "int64")], {"axis": 1, "ret_type": "values"}, (2, None, 4)),
        ("dyn.one_hot", [_t((2, 3), "int64"), _t(()), _t(()), _t((), "int64")], {"axis": 1, "dtype": "float32"}, (2, None, 3)),
    ],
)
def test_types_follow_relay(name, types, attrs, want):
    cls = DYN_OPS[name]
    (out,) = cls.infer_types(types, cls.complete_attrs(attrs, types))
    assert shape_of(out) == want


@pytest.mark.parametrize(
    ("name", "types", "match"),
    [
        ("dyn.reshape", [_t((2, 3)), _t((None,), "int64")], "static length"),
        ("dyn.reshape", [_t((2, 3)), _t((2,), "float32")], "must hold integers"),
        ("dyn.squeeze", [_t((1, 3)), _t((3,), "int64")], "3 axes to squeeze"),
        ("dyn.expand_dims", [_t((1, 3)), _t((1,), "int64")], "axis must be a scalar"),
        ("dyn.full", [_t((2,)), _t((2,), "int64")], "fill_value must be a scalar"),
        ("dyn.nn.pad", [_t((2, 3)), _t((2, 2), "int64"), _t((), "int32")], "differs in dtype"),
        ("dyn.nn.upsampling", [_t((2, 3)), _t(()), _t(())], "data must have rank 4"),
        ("dyn.strided_slice", [_t((2,))] + [_t((2,), "int64")] * 3, "2 sliced axes"),
    ],
)
def test_type_errors_name_the_op(name, types, match):
    cls = DYN_OPS[name]
    with pytest.raises(RelayTypeError, match=f"{name}: .*{match}"):
        cls.infer_types(types, cls.complete_attrs({}, types))


def test_kernels_match_numpy():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4)).astype("float32")
    np.testing.assert_array_equal(KERNELS["dyn.reshape"](x, np.array([4, 0, -1])), x.reshape(4, 3, 2))
    np.testing.assert_array_equal(KERNELS["dyn.tile"](x, np.array([2, 1, 1, 3])), np.tile(x, (2, 1, 1, 3)))
    np.testing.assert_array_equal(
        KERNELS["dyn.broadcast_to"](x[:, :1], np.array([5, 2, 3, 4])), np.broadcast_to(x[:, :1], (5, 2, 3, 4))
    )
    got = KERNELS["dyn.strided_slice"](x, np.array([1, -1]), np.array([2, -4]), np.array([1, -1]))
    np.testing.assert_array_equal(got, x[1:2, ::-1])
    np.testing.assert_array_equal(KERNELS["dyn.expand_dims"](x, np.array(-1)), x[..., None])
    np.testing.assert_array_equal(KERNELS["dyn.squeeze"](x[:, :1, :, None], np.array([1, -1])), x[:, 0])
    np.testing.assert_array_equal(
        KERNELS["dyn.full"](np.array(7, "int8"), np.array([2, 2]), dtype="int32"), np.full((2, 2), 7, "int32")
    )
    np.testing.assert_array_equal(KERNELS["dyn.ones"](np.array([3]), dtype="bool"), np.ones(3, bool))
    got = KERNELS["dyn.nn.pad"](x, np.array([[0, 1], [2, 0], [1, 1]]), np.array(-1, "float32"), pad_mode="constant")
    np.testing.assert_array_equal(got, np.pad(x, [(0, 1), (2, 0), (1, 1)], constant_values=-1))
    v, i = KERNELS["dyn.topk"](x[0], np.array([2]), axis=0, is_ascend=True)
    np.testing.assert_array_equal(v, np.sort(x[0], axis=0)[:2])
    oh = KERNELS["dyn.one_hot"](np.array([2, 0]), np.array(5, "int8"), np.array(0, "int8"), np.array(3), axis=0, dtype="int8")
    np.testing.assert_array_equal(oh, [[0, 5], [0, 0], [5, 0]])
    img = x[None]
    got = KERNELS["dyn.nn.upsampling"](img, np.array(2.0, "float32"), np.array(3.0, "float32"))
    np.testing.assert_array_equal(got, img.repeat(2, axis=2).repeat(3, axis=3))


def test_kernel_errors_name_the_dyn_op():
    x = np.zeros((2, 3), "float32")
    with pytest.raises(ValueError, match=r"dyn.reshape: .*cannot reshape \[2, 3\] to \[4, -1\]"):
        KERNELS["dyn.reshape"](x, np.array([4, -1]))
    with pytest.raises(ValueError, match="dyn.reshape: .*-2 or -4"):
        KERNELS["dyn.reshape"](x, np.array([-2]))
    with pytest.raises(ValueError, match="dyn.strided_slice: strides must be non-zero"):
        KERNELS["dyn.strided_slice"](x, np.array([0]), np.array([1]), np.array([0]))
    with pytest.raises(ValueError, match="dyn.full: shape must be non-negative"):
        KERNELS["dyn.full"](np.array(1.0), np.array([-1, 2]), dtype="")


def test_relay_api_dispatches_on_expr_arguments():
    x = relay.var("x", shape=(2, 3))
    s = relay.var("s", shape=(2,), dtype="int64")
    assert relay.reshape(x, s).op.name == "dyn.reshape"
    assert relay.reshape(x, [3, 2]).op.name == "reshape"
    # a Constant shape is folded into the static op, as tvm.relay does
    assert relay.reshape(x, relay.const(np.array([3, 2]))).op.name == "reshape"
    assert relay.tile(x, s).op.name == "dyn.tile"
    assert relay.broadcast_to(x, relay.var("b", shape=(3,), dtype="int64")).op.name == "dyn.broadcast_to"
    assert relay.zeros(s, "float32").op.name == "dyn.zeros"
    assert relay.full(relay.const(1.0), s).op.name == "dyn.full"
    sl = relay.strided_slice(x, begin=relay.var("b", shape=(1,), dtype="int64"), end=[2])
    assert sl.op.name == "dyn.strided_slice"
    assert shape_of(sl.checked_type) == (None, 3)
    with pytest.raises(TypeError, match="axes cannot be given"):
        relay.strided_slice(x, begin=relay.var("b", shape=(1,), dtype="int64"), end=[2], axes=[1])
    assert relay.nn.pad(x, relay.var("w", shape=(2, 2), dtype="int32")).op.name == "dyn.nn.pad"
    assert relay.squeeze(x, relay.var("a", shape=(1,), dtype="int64")).op.name == "dyn.squeeze"


def test_expand_dims_rank_is_bounded_before_building_the_shape():
    cls = DYN_OPS["dyn.expand_dims"]
    types = [_t((1, 3)), _t((), "int64")]
    with pytest.raises(RelayTypeError, match="num_newaxis 2147483648 gives rank 2147483650"):
        cls.infer_types(types, cls.complete_attrs({"num_newaxis": 2**31}, types))


def test_dyn_upsampling_takes_the_static_ops_layouts():
    """NHWC and a blocked NCHW4c (AlterOpLayout's) as nn.upsampling takes them: H and W unknown."""
    cls = DYN_OPS["dyn.nn.upsampling"]
    for layout, shape, want in (("NHWC", (1, 3, 4, 8), (1, None, None, 8)), ("NCHW4c", (1, 2, 3, 4, 4), (1, 2, None, None, 4))):
        (t,) = cls.infer_types([_t(shape), _t(()), _t(())], cls.complete_attrs({"layout": layout}, []))
        assert tuple(shape_of(t)) == want
    x = np.arange(8 * 2 * 3, dtype="float32").reshape(1, 8, 2, 3)
    blocked = x.reshape(1, 2, 4, 2, 3).transpose(0, 1, 3, 4, 2)
    got = KERNELS["dyn.nn.upsampling"](blocked, np.array(2.0, "float32"), np.array(2.0, "float32"), layout="NCHW4c")
    want = x.repeat(2, axis=2).repeat(2, axis=3).reshape(1, 2, 4, 4, 6).transpose(0, 1, 3, 4, 2)
    np.testing.assert_array_equal(got, want)
