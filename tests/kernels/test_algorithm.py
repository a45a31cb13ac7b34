"""cumsum, scatter_elements, scatter_nd, einsum, reverse_sequence and image.grid_sample against
onnxruntime (CumSum, ScatterElements, ScatterND, Einsum, ReverseSequence, GridSample); cumprod
against numpy's running product; reinterpret against numpy's ``view``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xrelay.dialects.relay import RelayTypeError

from .conftest import run_op as run

FAST = settings(max_examples=12, deadline=None)


@FAST
@given(
    axis=st.integers(-2, 1),
    exclusive=st.booleans(),
    dtype=st.sampled_from(["float32", "int32", "float64"]),
    seed=st.integers(0, 2**16),
)
def test_cumsum_vs_onnx(h, axis, exclusive, dtype, seed):
    x = h.rand(np.random.default_rng(seed), (3, 4), dtype, -100, 100)
    if dtype == "int32":
        x = (x % 1000).astype(np.int32)
    (want,) = h.run_onnx("CumSum", [x, np.array(axis, np.int64)], {"exclusive": int(exclusive)})
    h.assert_same(run("cumsum", x, axis=axis, exclusive=exclusive), want, accum=True)


def test_cumsum_flattened_and_dtype():
    x = np.arange(6, dtype=np.int8).reshape(2, 3) * 40
    got = run("cumsum", x, dtype="int32")  # no axis: the flattened tensor, accumulated in int32
    np.testing.assert_array_equal(got, np.cumsum(x.reshape(-1), dtype=np.int32))
    assert got.dtype == np.int32


@pytest.mark.parametrize("exclusive", [False, True])
def test_cumprod(exclusive):
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int64)
    got = run("cumprod", x, axis=1, exclusive=exclusive)
    want = np.cumprod(x, axis=1)
    if exclusive:
        want = np.concatenate([np.ones((2, 1), np.int64), want[:, :-1]], axis=1)
    np.testing.assert_array_equal(got, want)


@FAST
@given(
    axis=st.integers(-2, 1),
    reduction=st.sampled_from(["update", "add", "mul", "min", "max"]),
    seed=st.integers(0, 2**16),
)
def test_scatter_elements_vs_onnx(h, axis, reduction, seed):
    rng = np.random.default_rng(seed)
    data = h.rand(rng, (3, 4), "float32")
    ax = axis % 2
    shape = (2, 3)
    if reduction == "update":  # duplicates are undefined in ONNX: a permutation per row/column
        idx = np.argsort(rng.random((data.shape[ax], *shape[1 - ax : 2 - ax])), axis=0)[: shape[ax]]
        idx = idx if ax == 0 else idx.T
    else:
        idx = rng.integers(-data.shape[ax], data.shape[ax], size=shape)
    idx = idx.astype(np.int64)
    upd = h.rand(rng, shape, "float32")
    attrs = {"axis": axis, "reduction": "none" if reduction == "update" else reduction}
    (want,) = h.run_onnx("ScatterElements", [data, idx, upd], attrs)
    h.assert_same(run("scatter_elements", data, idx, upd, axis=axis, reduction=reduction), want)


def test_scatter_elements_mean_and_errors():
    data = np.zeros((1, 3), np.float32)
    idx = np.array([[0, 0]], np.int64)
    got = run("scatter_elements", data, idx, np.array([[3.0, 6.0]], np.float32), axis=1, reduction="mean")
    np.testing.assert_array_equal(got, [[3.0, 0.0, 0.0]])  # (0 + 3 + 6) / 3
    with pytest.raises(IndexError, match="scatter_elements: an index is out of range"):
        run("scatter_elements", data, np.array([[3]], np.int64), np.ones((1, 1), np.float32), axis=1)
    with pytest.raises(RelayTypeError, match="reduction must be one of"):
        run("scatter_elements", data, idx, np.ones((1, 2), np.float32), reduction="sub")


@FAST
@given(
    depth=st.integers(1, 3),
    mode=st.sampled_from(["update", "add", "mul", "min", "max"]),
    seed=st.integers(0, 2**16),
)
def test_scatter_nd_vs_onnx(h, depth, mode, seed):
    rng = np.random.default_rng(seed)
    data = h.rand(rng, (3, 4, 2), "float32")
    n = 2
    dims = data.shape[:depth]
    if mode == "update":  # distinct tuples (duplicates are undefined)
        flat = rng.permutation(int(np.prod(dims)))[:n]
        idx = np.stack(np.unravel_index(flat, dims), axis=-1)
    else:
        idx = np.stack([rng.integers(-d, d, size=n) for d in dims], axis=-1)
    idx = idx.astype(np.int64)
    upd = h.rand(rng, (n, *data.shape[depth:]), "float32")
    attrs = {"reduction": "none" if mode == "update" else mode}
    (want,) = h.run_onnx("ScatterND", [data, idx, upd], attrs)
    got = run("scatter_nd", data, np.moveaxis(idx, -1, 0), upd, mode=mode)
    h.assert_same(got, want)


@pytest.mark.parametrize(
    "equation, shapes",
    [
        ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
        ("...ii->...i", [(3, 4, 4)]),
        ("i,i", [(5,), (5,)]),
        ("ij->ji", [(3, 4)]),
        ("ij,kj->ik", [(2, 3), (4, 3)]),
        ("ij", [(3, 2)]),
    ],
)
def test_einsum_vs_onnx(h, equation, shapes):
    rng = np.random.default_rng(0)
    xs = [h.rand(rng, s, "float32") for s in shapes]
    (want,) = h.run_onnx("Einsum", xs, {"equation": equation})
    h.assert_same(run("einsum", *xs, equation=equation), want, accum=True)


def test_reinterpret():
    x = np.array([1.0, -2.5, np.inf], np.float32)
    np.testing.assert_array_equal(run("reinterpret", x, dtype="int32"), x.view(np.int32))
    s = np.array(3.0, np.float64)
    assert run("reinterpret", s, dtype="uint64") == s.view(np.uint64)
    with pytest.raises(RelayTypeError, match="cannot reinterpret float32"):
        run("reinterpret", x, dtype="int8")


@pytest.mark.parametrize("time_axis, batch_axis", [(0, 1), (1, 0)])
def test_reverse_sequence_vs_onnx(h, time_axis, batch_axis):
    rng = np.random.default_rng(1)
    x = h.rand(rng, (4, 4, 2), "float32")
    lengths = np.array([4, 1, 3, 2], np.int64)
    (want,) = h.run_onnx("ReverseSequence", [x, lengths], {"time_axis": time_axis, "batch_axis": batch_axis})
    h.assert_same(run("reverse_sequence", x, lengths, seq_axis=time_axis, batch_axis=batch_axis), want)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_vs_onnx(h, mode, padding_mode, align_corners):
    rng = np.random.default_rng(2)
    x = h.rand(rng, (2, 3, 4, 5), "float32")
    grid = rng.uniform(-1.6, 1.6, size=(2, 3, 6, 2)).astype(np.float32)  # also outside [-1, 1]
    attrs = {"mode": mode, "padding_mode": padding_mode, "align_corners": int(align_corners)}
    (want,) = h.run_onnx("GridSample", [x, grid], attrs, opset=16)
    got = run(
        "image.grid_sample",
        x,
        np.moveaxis(grid, -1, 1),
        method=mode,
        padding_mode=padding_mode,
        align_corners=align_corners,
    )
    h.assert_same(got, want, accum=True)


@pytest.mark.parametrize("mode", ["linear", "nearest"])
def test_grid_sample_3d_vs_onnx(h, mode):
    rng = np.random.default_rng(3)
    x = h.rand(rng, (1, 2, 3, 4, 5), "float32")
    grid = rng.uniform(-1.2, 1.2, size=(1, 2, 3, 4, 3)).astype(np.float32)
    (want,) = h.run_onnx("GridSample", [x, grid], {"mode": mode, "align_corners": 0}, opset=20)
    got = run(
        "image.grid_sample",
        x,
        np.moveaxis(grid, -1, 1),
        method="bilinear" if mode == "linear" else "nearest",
        layout="NCDHW",
        align_corners=False,
    )
    h.assert_same(got, want, accum=True)


@pytest.mark.parametrize("inverse", [False, True])
def test_dft_vs_onnx(h, inverse):
    rng = np.random.default_rng(4)
    x = h.rand(rng, (2, 3, 8, 2), "float32")  # ONNX: (batch, ..., signal, [re, im])
    (want,) = h.run_onnx("DFT", [x], {"axis": 2, "inverse": int(inverse)}, opset=17)
    re, im = run_multi("dft", x[..., 0], x[..., 1], inverse=inverse)
    h.assert_same(np.stack([re, im], axis=-1), want, accum=True)


def run_multi(name, *arrays, **attrs):
    from xrelay.dialects.relay import RELAY_OPS, tensor_type
    from xrelay.kernels import KERNELS

    op = RELAY_OPS[name]
    types = [tensor_type(a.shape, a.dtype.name) for a in arrays]
    full = op.complete_attrs(attrs, types)
    want = op.infer_types(types, full)
    res = KERNELS[name](*arrays, **full)
    assert [r.shape for r in res] == [tuple(t.get_shape()) for t in want]
    return res


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8"])
@pytest.mark.parametrize("is_ascend", [False, True])
def test_topk_vs_onnx(h, dtype, is_ascend):
    x = np.array([[3, 1, 3, 0, 2], [5, 5, 1, 4, 5]], dtype)  # ties keep index order
    want_v, want_i = h.run_onnx(
        "TopK", [x, np.array([3], np.int64)], {"axis": 1, "largest": int(not is_ascend)}, out_dtypes=[dtype, np.int64]
    )
    v, i = run_multi("topk", x, k=3, is_ascend=is_ascend, dtype="int64")
    h.assert_same(v, want_v)
    h.assert_same(i, want_i)
    (only,) = run_multi("topk", x, k=0, axis=0, ret_type="indices")  # k < 1: the whole axis
    assert only.shape == (2, 5) and only.dtype == np.int32


def test_one_hot():
    got = run("one_hot", np.array([[1, 3], [0, 9]], np.int32), np.array(7, np.int8), np.array(-1, np.int8),
              depth=4, axis=1, dtype="int8")
    want = np.full((2, 4, 2), -1, np.int8)
    want[0, 1, 0] = want[0, 3, 1] = want[1, 0, 0] = 7  # 9 is out of range: all off
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("sample_ratio", [0, 2])
def test_roi_align_vs_onnx(h, sample_ratio):
    rng = np.random.default_rng(5)
    x = h.rand(rng, (2, 3, 10, 10), "float32")
    rois = np.array([[0, 0, 9, 9], [0, 5, 4, 9], [5, 5, 9, 9], [-3, 2, 12, 6]], np.float32)  # also beyond the image
    batch = np.array([0, 1, 0, 1], np.int64)
    attrs = {"output_height": 3, "output_width": 2, "sampling_ratio": sample_ratio, "spatial_scale": 1.0}
    (want,) = h.run_onnx("RoiAlign", [x, rois, batch], {**attrs, "coordinate_transformation_mode": "output_half_pixel"}, opset=16)
    rows = np.concatenate([batch[:, None].astype(np.float32), rois], axis=1)
    got = run("vision.roi_align", x, rows, pooled_size=[3, 2], spatial_scale=1.0, sample_ratio=sample_ratio)
    h.assert_same(got, want, accum=True)
    nhwc = run("vision.roi_align", np.moveaxis(x, 1, 3).copy(), rows, pooled_size=[3, 2], spatial_scale=1.0,
               sample_ratio=sample_ratio, layout="NHWC")
    h.assert_same(np.moveaxis(nhwc, 3, 1), want, accum=True)


@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_roi_pool_vs_onnx(h, scale):
    rng = np.random.default_rng(6)
    x = h.rand(rng, (2, 3, 10, 12), "float32")
    # whole image, a corner, a region reaching past the image, a malformed one (x2 < x1)
    rois = np.array(
        [[0, 0, 0, 11, 9], [1, 5, 4, 11, 9], [0, -3, 2, 14, 7], [1, 6, 6, 2, 3], [1, 3, 1, 8, 8]], np.float32
    )
    (want,) = h.run_onnx("MaxRoiPool", [x, rois], {"pooled_shape": [3, 2], "spatial_scale": scale})
    got = run("vision.roi_pool", x, rois, pooled_size=[3, 2], spatial_scale=scale)
    h.assert_same(got, want)
    nhwc = run("vision.roi_pool", np.moveaxis(x, 1, 3).copy(), rois, pooled_size=[3, 2], spatial_scale=scale, layout="NHWC")
    h.assert_same(np.moveaxis(nhwc, 3, 1), want)
