"""gather_nd, ndarray_size against onnxruntime (GatherND, Size); repeat against a loop reference;
reverse_reshape against TVM's own cases (test_op_level3.py ``verify_reverse_reshape``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xrelay.dialects.relay import RelayTypeError

from .conftest import run_op as run

FAST = settings(max_examples=15, deadline=None)


@FAST
@given(batch_dims=st.integers(0, 1), depth=st.integers(1, 2), y=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_gather_nd_vs_onnx(h, batch_dims, depth, y, seed):
    rng = np.random.default_rng(seed)
    data = h.rand(rng, (2, 3, 4, 5), "float32")
    dims = data.shape[batch_dims : batch_dims + depth]
    # ONNX: index tuples along the last axis, possibly negative
    idx = np.stack([rng.integers(-d, d, size=(*data.shape[:batch_dims], y)) for d in dims], axis=-1)
    (want,) = h.run_onnx("GatherND", [data, idx.astype(np.int64)], {"batch_dims": batch_dims})
    relay_idx = np.moveaxis(idx, -1, 0).astype(np.int64)  # Relay: along the first axis
    h.assert_same(run("gather_nd", data, relay_idx, batch_dims=batch_dims), want)


def test_gather_nd_relay_examples():
    # TVM's test_op_level3 gather_nd cases
    data = np.arange(4).reshape(2, 2).astype("int32")
    np.testing.assert_array_equal(run("gather_nd", data, np.array([[1, 0], [0, 1]])), [2, 1])
    data = np.arange(8).reshape(2, 2, 2).astype("float32")
    got = run("gather_nd", data, np.array([[0, 1], [1, 0]]))
    np.testing.assert_array_equal(got, [[2, 3], [4, 5]])
    got = run("gather_nd", data, np.array([[1, 0]]), batch_dims=1)
    np.testing.assert_array_equal(got, [[2, 3], [4, 5]])
    with pytest.raises(IndexError, match="out of range"):
        run("gather_nd", data, np.array([[2], [0]]))
    with pytest.raises(RelayTypeError, match="index_rank = 1"):
        run("gather_nd", data, np.array([[0, 1], [1, 0]]), index_rank=1)


def test_ndarray_size_vs_onnx(h):
    x = np.zeros((2, 3, 4), "float32")
    (want,) = h.run_onnx("Size", [x], out_dtypes=[np.int64])
    h.assert_same(run("ndarray_size", x, dtype="int64"), want)
    got = run("ndarray_size", x)
    assert got.dtype == np.int32 and got.shape == () and int(got) == 24


@FAST
@given(repeats=st.integers(1, 3), axis=st.integers(-3, 2), seed=st.integers(0, 2**16))
def test_repeat(h, repeats, axis, seed):
    x = h.rand(np.random.default_rng(seed), (2, 3, 2), "int32")
    got = run("repeat", x, repeats=repeats, axis=axis)
    ax = axis % 3
    for i in range(got.shape[ax]):
        np.testing.assert_array_equal(np.take(got, i, axis=ax), np.take(x, i // repeats, axis=ax))


def test_repeat_errors():
    with pytest.raises(RelayTypeError, match="repeats must be at least 1"):
        run("repeat", np.zeros(3, "float32"), repeats=0, axis=0)
    with pytest.raises(RelayTypeError, match="axis 1 is out of range"):
        run("repeat", np.zeros(3, "float32"), repeats=2, axis=1)


@pytest.mark.parametrize(
    ("shape", "newshape", "out"),
    [
        ((2, 3, 4), (4, 0, 2), (4, 3, 2)),
        ((2, 3, 4), (2, 0, 0), (2, 3, 4)),
        ((2, 3, 4), (0, -1), (3, 8)),
        ((2, 3, 4), (-1, 0), (6, 4)),
        ((2, 3, 4), (0, -3), (2, 12)),
    ],
)
def test_reverse_reshape_tvm_cases(shape, newshape, out):
    x = np.arange(np.prod(shape), dtype="float32").reshape(shape)
    got = run("contrib_reverse_reshape", x, newshape=newshape)
    assert got.shape == out
    np.testing.assert_array_equal(got.reshape(-1), x.reshape(-1))


def test_reverse_reshape_rejects_split():
    with pytest.raises(RelayTypeError, match="not supported in reverse"):
        run("contrib_reverse_reshape", np.zeros((2, 6), "float32"), newshape=(-4, 1, 2, -1))


# ---- filled tensors and *_like ops (no onnxruntime counterpart for most: numpy references) ----


def test_collapse_sum_is_the_adjoint_of_broadcasting(h):
    rng = np.random.default_rng(9)
    x = h.rand(rng, (2, 4, 3), "float32")
    np.testing.assert_allclose(run("collapse_sum_like", x, np.zeros((4, 1), "float32")), x.sum(axis=(0, 2))[:, None], rtol=1e-5)
    got = run("collapse_sum_to", x, np.array([1, 3], "int32"), shape=[1, 3])
    np.testing.assert_allclose(got, x.sum(axis=(0, 1))[None, :], rtol=1e-5)
    with pytest.raises(RelayTypeError, match="cannot collapse"):
        run("collapse_sum_like", x, np.zeros((2, 3), "float32"))


def test_reshape_like_ranges_and_cast_like():
    x = np.arange(24, dtype="float32").reshape(2, 12)
    assert run("reshape_like", x, np.zeros((6, 4), "int8")).shape == (6, 4)
    assert run("reshape_like", x, np.zeros((5, 3, 4), "int8"), lhs_begin=1, rhs_begin=1).shape == (2, 3, 4)
    got = run("cast_like", np.array([1.7, -1.7], "float32"), np.zeros(1, "int16"))
    assert got.dtype == np.int16 and got.tolist() == [1, -1]


def test_argsort_vs_onnx_topk(h):
    rng = np.random.default_rng(10)
    x = rng.permutation(20).astype("float32").reshape(4, 5)
    (_, want) = h.run_onnx("TopK", [x, np.array([5], np.int64)], {"axis": 1, "largest": 1}, out_dtypes=["float32", "int64"])
    np.testing.assert_array_equal(run("argsort", x, axis=1, is_ascend=False, dtype="int64"), want)
    np.testing.assert_array_equal(run("argsort", x, axis=0), np.argsort(x, axis=0))


def test_filled_tensors():
    assert run("zeros", shape=[2, 3], dtype="int8").tolist() == [[0, 0, 0]] * 2
    assert run("full", np.array(2.5, "float32"), shape=[2], dtype="").tolist() == [2.5, 2.5]
    assert run("full", np.array(2.5, "float32"), shape=[2], dtype="int32").dtype == np.int32
    assert run("full_like", np.zeros((2, 2), "float64"), np.array(3.0, "float64")).tolist() == [[3.0, 3.0]] * 2


@pytest.mark.parametrize(
    "data, like, axes, output",
    # TVM v0.19 test_op_level10.py test_slice_like's static cases
    [
        ((3, 4, 5), (1, 2, 3), None, (1, 2, 3)),
        ((3, 4, 5), (1, 2), None, (1, 2, 5)),
        ((3, 4, 5), (1, 2, 3), (1, 2), (3, 2, 3)),
        ((3, 4, 5), (1, 2, 3), (-1, -3), (1, 4, 3)),
        ((1, 3, 224, 224), (1, 3, 112, 112), (2, 3), (1, 3, 112, 112)),
    ],
)
def test_slice_like_tvm_cases(data, like, axes, output):
    from xrelay import relay
    from xrelay.relay.module import IRModule
    from xrelay.relay.transform import InferType

    x = np.random.default_rng(0).uniform(size=data).astype("float32")
    got = run("slice_like", x, np.zeros(like, "float32"), axes=axes)
    np.testing.assert_array_equal(got, x[tuple(slice(0, n) for n in output)])
    z = relay.slice_like(relay.var("data", shape=data), relay.var("like", shape=like), axes)
    mod = InferType()(IRModule.from_expr(z))
    assert mod["main"].ret_type == relay.TensorType(output, "float32")
    if axes:
        assert "axes" in z.astext()
