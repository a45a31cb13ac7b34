"""TVM v0.19's tests of reinterpret, reverse_sequence, scatter_elements, cumsum/cumprod,
scatter_nd (test_op_level3.py), topk (test_op_level6.py) and one_hot (test_op_level10.py) through
xrelay's Python API and ``xrelay.run`` (the interpreter), with TVM's numpy references."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay import relay


def _run(params, out, *inputs):
    mod = xrelay.IRModule.from_expr(relay.Function(params, out))
    return xrelay.run(mod, {p.name_hint: v for p, v in zip(params, inputs)})


def test_reinterpret():
    a = relay.var("a", relay.TensorType((1000, 4), "float32"))
    y = relay.reinterpret(a, "int32")
    assert y.checked_type == relay.TensorType((1000, 4), "int32")
    data = np.random.default_rng(0).standard_normal((1000, 4)).astype("float32") * 1000
    (got,) = _run([a], y, data)
    np.testing.assert_equal(got, data.view("int32"))


def _reverse_sequence(x_data, seq_lengths, batch_axis, seq_axis):
    x = relay.var("x", relay.TensorType(x_data.shape, str(x_data.dtype)))
    z = relay.reverse_sequence(x, relay.const(np.array(seq_lengths).astype("int32")), seq_axis, batch_axis)
    assert z.checked_type == x.type_annotation
    return _run([x], z, x_data)[0]


def test_reverse_sequence():
    indata = np.arange(0, 16).reshape([4, 4]).astype("int32")
    result = np.array([[0, 5, 10, 15], [4, 1, 6, 11], [8, 9, 2, 7], [12, 13, 14, 3]])
    np.testing.assert_array_equal(_reverse_sequence(indata, [1, 2, 3, 4], 1, 0), result)
    np.testing.assert_array_equal(_reverse_sequence(indata, [1, 2, 3, 4], -1, 0), result)
    np.testing.assert_array_equal(_reverse_sequence(indata.astype("float32"), [1, 2, 3, 4], 1, 0), result)
    result = np.array([[0, 1, 2, 3], [5, 4, 6, 7], [10, 9, 8, 11], [15, 14, 13, 12]])
    np.testing.assert_array_equal(_reverse_sequence(indata, [1, 2, 3, 4], 0, 1), result)
    np.testing.assert_array_equal(_reverse_sequence(indata, [1, 2, 3, 4], 0, -1), result)
    np.testing.assert_array_equal(_reverse_sequence(indata.astype("float32"), [1, 2, 3, 4], 0, 1), result)
    result = np.array([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [15, 14, 13, 12]])
    np.testing.assert_array_equal(_reverse_sequence(indata, [-1, 0, 1, 5], 0, 1), result)
    indata = np.arange(0, 54).reshape([2, 3, 3, 3]).astype("int32")
    got = _reverse_sequence(indata, [3, 3], 0, 1)
    np.testing.assert_array_equal(got, indata[:, ::-1])
    got = _reverse_sequence(indata, [2, 3, 2], 2, 1)
    want = [
        [[[9, 10, 11], [21, 22, 23], [15, 16, 17]], [[0, 1, 2], [12, 13, 14], [6, 7, 8]], [[18, 19, 20], [3, 4, 5], [24, 25, 26]]],
        [[[36, 37, 38], [48, 49, 50], [42, 43, 44]], [[27, 28, 29], [39, 40, 41], [33, 34, 35]], [[45, 46, 47], [30, 31, 32], [51, 52, 53]]],
    ]
    np.testing.assert_array_equal(got, want)
    indata = np.arange(0, 16).reshape([4, 4]).astype("int32")
    # TVM's message names the sizes too (its text has a typo, "reverse_sequnece")
    with pytest.raises(xrelay.relay.RelayTypeError, match="seq_lengths tensor<5xi32> must be 1-D of the batch size"):
        _reverse_sequence(indata, [2, 3, 2, 4, 5], 1, 0)


def _ref_scatter(data, indices, updates, axis=0):
    idx = np.indices(indices.shape).reshape(indices.ndim, -1)
    updated_idx = np.copy(idx)
    indices = indices.reshape(-1)
    for i in range(len(indices)):
        updated_idx[axis, i] = indices[i]
    scattered = np.copy(data)
    scattered[tuple(updated_idx)] = updates[tuple(idx)]
    return scattered


@pytest.mark.parametrize(
    "dshape, ishape, axis, indices_dtype",
    [
        ((10,), (10,), 0, "int64"),
        ((10, 5), (10, 5), -2, "int64"),
        ((10, 5), (10, 5), -1, "int64"),
        ((10, 5), (3, 5), 0, "int64"),
        ((12, 4), (7, 2), 1, "int64"),
        ((2, 3, 4), (1, 3, 4), 0, "int64"),
        ((2, 3, 4), (2, 1, 4), 1, "int64"),
        ((2, 3, 4), (2, 3, 1), 2, "int64"),
        ((4, 2, 1), (1, 1, 1), 0, "int64"),
        ((2, 3, 4, 5), (1, 3, 4, 5), 0, "int64"),
        ((6, 3, 4, 5), (2, 3, 4, 5), 1, "int64"),
        ((2, 3, 8, 5), (2, 3, 1, 1), 2, "int64"),
        ((16, 16, 4, 5), (16, 16, 4, 5), 3, "int64"),
        ((16, 16, 4, 5), (16, 16, 4, 5), 3, "uint32"),
    ],
)
def test_scatter(dshape, ishape, axis, indices_dtype):
    rng = np.random.default_rng(1)
    d = relay.var("d", relay.TensorType(dshape, "float32"))
    i = relay.var("i", relay.TensorType(ishape, indices_dtype))
    u = relay.var("u", relay.TensorType(ishape, "float32"))
    z = relay.scatter_elements(d, i, u, axis)
    data_np = rng.uniform(size=dshape).astype("float32")
    updates_np = rng.uniform(size=ishape).astype("float32")
    indices_np = rng.integers(0, dshape[axis] - 1, ishape).astype(indices_dtype) if dshape[axis] > 1 else np.zeros(ishape, indices_dtype)
    (got,) = _run([d, i, u], z, data_np, indices_np, updates_np)
    np.testing.assert_allclose(got, _ref_scatter(data_np, indices_np, updates_np, axis), rtol=1e-5)


@pytest.mark.parametrize("binop, gt_func", [("cumsum", np.cumsum), ("cumprod", np.cumprod)])
def test_scan_ops(binop, gt_func):
    rng = np.random.default_rng(2)
    fn = getattr(relay, binop)

    def check(data_np, np_out, axis=None, out_dtype=None, rtol=1e-5, atol=1e-5, exclusive=False):
        inp = relay.var("data", relay.TensorType(data_np.shape, str(data_np.dtype)))
        (got,) = _run([inp], fn(inp, axis, out_dtype, exclusive=exclusive), data_np)
        np.testing.assert_allclose(got, np_out, rtol=rtol, atol=atol)

    data = np.array([2, 3, 0])
    check(data, gt_func(data))
    check(data, gt_func(data), out_dtype="int64")
    data = rng.standard_normal((10, 10))
    check(data, gt_func(data))
    check(data, gt_func(data, axis=0), axis=0)
    check(data, gt_func(data, axis=1), axis=1)
    data = rng.standard_normal((10, 5, 10)).astype("float32")
    check(data, gt_func(data), rtol=1e-4, atol=1e-4)
    check(data, gt_func(data, axis=0), axis=0, rtol=1e-4, atol=1e-4)
    check(data, gt_func(data, axis=1), axis=1, rtol=1e-4, atol=1e-4)
    check(data, gt_func(data, axis=-1), axis=-1, rtol=1e-4, atol=1e-4)
    data = (rng.random(10) > 0.5).astype(np.int32)
    check(data, gt_func(data, dtype=np.int32))
    check(data, gt_func(data, dtype="int64"), out_dtype="int64")
    # exclusive: the identity first, then the running op without the last element
    data = rng.integers(-100, 100, size=(10, 10)).astype("int64")
    identity = 0 if binop == "cumsum" else 1
    expected = np.concatenate([np.full((10, 1), identity), gt_func(data, axis=1)[:, :-1]], axis=1)
    check(data, expected, axis=1, exclusive=True)


def test_scatter_nd():
    def check(data_np, indices_np, updates_np, ref_res, mode="add"):
        data = relay.var("data", shape=data_np.shape, dtype=str(data_np.dtype))
        indices = relay.var("indices", shape=indices_np.shape, dtype=str(indices_np.dtype))
        updates = relay.var("updates", shape=updates_np.shape, dtype=str(updates_np.dtype))
        (got,) = _run([data, indices, updates], relay.scatter_nd(data, indices, updates, mode), data_np, indices_np, updates_np)
        np.testing.assert_allclose(got, ref_res, rtol=1e-5, atol=1e-5)

    # TVM's inequal M and K case: type inference only
    data = relay.const(np.zeros((1, 1, 10), "float32"))
    indices = relay.const(np.zeros((2, 1, 1, 1), "int64"))
    assert relay.scatter_nd(data, indices, relay.const(np.ones((1, 1, 1, 10), "float32"))).checked_type == relay.TensorType((1, 1, 10), "float32")

    data = np.zeros((2, 2)).astype("int64")
    indices = np.array([[1, 1, 0], [0, 1, 0]])
    updates = np.array([2, 3, 0])
    out = np.array([[0, 0], [2, 3]])
    check(data, indices, updates, out)
    data = np.zeros((2, 2, 2, 2)).astype("int64")
    indices = np.array([[0, 1], [1, 1]])
    updates = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]])
    out = np.array([[[[0, 0], [0, 0]], [[1, 2], [3, 4]]], [[[0, 0], [0, 0]], [[5, 6], [7, 8]]]])
    check(data, indices, updates, out)
    indices = np.array([[1, 0, 0]])
    updates = np.reshape(np.arange(1560 * 3), (3, 1560)).astype("float32")
    shape = (2, 1560)
    data = np.zeros(shape).astype("float32")
    out = data.copy()
    out[1, :] += updates[0, :]
    out[0, :] += updates[1, :]
    out[0, :] += updates[2, :]
    check(data, indices, updates, out, mode="add")
    for mode in ["update", "add"]:
        indices = np.stack((np.random.default_rng(3).integers(2, size=5), np.random.default_rng(4).integers(7, size=5))).astype("int64")
        updates = np.ones((5, 3)).astype("float64")
        shape = (2, 7, 3)
        data = np.random.default_rng(5).random(shape).astype("float64")
        out = data.copy()
        for i in range(indices.shape[1]):
            for j in range(updates.shape[1]):
                if mode == "add":
                    out[indices[0, i], indices[1, i], j] += updates[i, j]
                elif mode == "update":
                    out[indices[0, i], indices[1, i], j] = updates[i, j]
        check(data, indices, updates, out, mode)


@pytest.mark.parametrize("k", [0, 1, 5])
@pytest.mark.parametrize("axis", [0, -1, 1])
@pytest.mark.parametrize("ret_type", ["both", "values", "indices"])
@pytest.mark.parametrize("is_ascend, dtype, in_dtype", [(True, "int64", "float32"), (False, "float32", "float32"), (False, "int64", "float16")])
def test_topk(k, axis, ret_type, is_ascend, dtype, in_dtype):
    shape = (20, 100)
    x = relay.var("x", relay.TensorType(shape, in_dtype))
    out = relay.topk(x, k, axis, ret_type, is_ascend, dtype)
    if isinstance(out, relay.TupleWrapper):
        out = out.astuple()
    np_data = np.random.default_rng(6).uniform(size=shape).astype(in_dtype)
    np_indices = np.argsort(np_data if is_ascend else -np_data, axis=axis, kind="stable")
    kk = k if k >= 1 else shape[axis]
    np_indices = np_indices[:kk, :] if axis == 0 else np_indices[:, :kk]
    np_values = np.take_along_axis(np_data, np_indices, axis=axis)
    got = _run([x], out, np_data)
    if ret_type == "both":
        np.testing.assert_array_equal(got[0], np_values)
        np.testing.assert_array_equal(got[1], np_indices.astype(dtype))
    elif ret_type == "values":
        np.testing.assert_array_equal(got[0], np_values)
    else:
        np.testing.assert_array_equal(got[0], np_indices.astype(dtype))


@pytest.mark.parametrize(
    "indices_shape, depth, on_value, off_value, axis, dtype",
    [
        ((3,), 3, 1, 0, -1, "int32"),
        ((3,), 3, 1.0, 0.0, -1, "float32"),
        ((2, 2), 5, 2, -2, 0, "int32"),
        ((2, 2), 5, 0.5, -0.5, 1, "float32"),
        ((3, 2, 4, 5), 6, 1, 0, 1, "int32"),
        ((3, 2, 4, 5), 6, 1.0, 0.0, 0, "float32"),
    ],
)
def test_one_hot(indices_shape, depth, on_value, off_value, axis, dtype):
    indices = relay.var("indices", relay.TensorType(indices_shape, "int32"))
    out = relay.one_hot(indices, relay.const(on_value), relay.const(off_value), depth, axis, dtype)
    true_axis = len(indices_shape) if axis == -1 else axis
    oshape = list(indices_shape)
    oshape.insert(true_axis, depth)
    assert out.checked_type == relay.TensorType(oshape, dtype)
    indices_np = np.random.default_rng(7).integers(0, depth, size=indices_shape).astype("int32")
    # TVM's topi.testing.one_hot: on where the position along the new axis equals the index
    want = np.where(np.expand_dims(indices_np, true_axis) == np.arange(depth).reshape([depth] + [1] * (len(indices_shape) - true_axis)), on_value, off_value).astype(dtype)
    (got,) = _run([indices], out, indices_np)
    np.testing.assert_array_equal(got, want)
