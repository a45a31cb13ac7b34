"""Shape kernels against onnxruntime (Reshape, Transpose, Concat, Split, Slice, Gather...) and,
for Relay-only behaviour (reshape -2/-3/-4, blocked layouts, take modes and batch_dims,
strided_slice size mode), against index-by-index Python references. All checks are exact.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xrelay.dialects.relay.ops import parse_layout
from xrelay.kernels import KERNELS, infer_reshape

FAST = settings(max_examples=15, deadline=None)
DTYPES = ["float32", "float16", "int8", "uint16", "int64", "bool"]

shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


def _data(h, shape, dtype="float32", seed=0):
    return h.rand(np.random.default_rng(seed), shape, dtype)


# ---------------------------------------------------------------------------------------------
# reshape family
# ---------------------------------------------------------------------------------------------


@FAST
@given(shape=shapes, data=st.data())
def test_reshape_vs_onnxruntime(h, shape, data):
    x = _data(h, shape)
    n_copy = data.draw(st.integers(0, len(shape) - 1))
    # Copy some leading dims with 0, then a factorisation of the rest with one -1.
    rest = int(np.prod(shape[n_copy:]))
    factors = [d for d in range(1, rest + 1) if rest % d == 0]
    f = data.draw(st.sampled_from(factors))
    tail = data.draw(st.sampled_from([[f, -1], [-1, f], [-1], [f, rest // f]]))
    newshape = [0] * n_copy + tail
    (ref,) = h.run_onnx("Reshape", [x, np.array(newshape, np.int64)])
    h.assert_same(KERNELS["reshape"](x, newshape=tuple(newshape)), ref)


@pytest.mark.parametrize(
    "shape,newshape,expected",
    [
        # The examples of Relay's reshape documentation.
        ((2, 3, 4), (4, 0, 2), (4, 3, 2)),
        ((2, 3, 4), (2, 0, 0), (2, 3, 4)),
        ((2, 3, 4), (6, 1, -1), (6, 1, 4)),
        ((2, 3, 4), (3, -1, 8), (3, 1, 8)),
        ((2, 3, 4), (-1,), (24,)),
        ((2, 3, 4), (-2,), (2, 3, 4)),
        ((2, 3, 4), (2, -2), (2, 3, 4)),
        ((2, 3, 4), (-2, 1, 1), (2, 3, 4, 1, 1)),
        ((2, 3, 4), (-3, 4), (6, 4)),
        ((2, 3, 4, 5), (-3, -3), (6, 20)),
        ((2, 3, 4), (0, -3), (2, 12)),
        ((2, 3, 4), (-3, -2), (6, 4)),
        ((2, 3, 4), (-4, 1, 2, -2), (1, 2, 3, 4)),
        ((2, 3, 4), (2, -4, -1, 3, -2), (2, 1, 3, 4)),
    ],
)
def test_reshape_special_values(h, shape, newshape, expected):
    x = _data(h, shape)
    assert infer_reshape(shape, newshape) == expected
    res = KERNELS["reshape"](x, newshape=newshape)
    assert res.shape == expected
    assert res.ravel().tolist() == x.ravel().tolist()


def test_reshape_allowzero_and_errors():
    x = np.zeros((0, 3), np.float32)
    assert KERNELS["reshape"](x, newshape=(3, 0), allowzero=True).shape == (3, 0)
    with pytest.raises(ValueError, match=r"cannot reshape \[2, 3\] to \[4, -1\]"):
        KERNELS["reshape"](np.zeros((2, 3)), newshape=(4, -1))
    with pytest.raises(ValueError, match="more than one -1"):
        KERNELS["reshape"](np.zeros((2, 3)), newshape=(-1, -1))


def test_batch_flatten_vs_onnxruntime(h):
    x = _data(h, (2, 3, 4, 5))
    (ref,) = h.run_onnx("Flatten", [x], {"axis": 1})
    h.assert_same(KERNELS["nn.batch_flatten"](x), ref)


@pytest.mark.parametrize("dtype", DTYPES)
@FAST
@given(shape=shapes, data=st.data())
def test_transpose_vs_onnxruntime(h, dtype, shape, data):
    x = _data(h, shape, dtype)
    perm = data.draw(st.permutations(range(len(shape))))
    (ref,) = h.run_onnx("Transpose", [x], {"perm": list(perm)})
    neg = [p - len(shape) if i % 2 else p for i, p in enumerate(perm)]  # mix negative axes
    h.assert_same(KERNELS["transpose"](x, axes=tuple(neg)), ref)
    h.assert_same(KERNELS["transpose"](x), x.T)


@FAST
@given(shape=shapes, data=st.data())
def test_squeeze_expand_dims_vs_onnxruntime(h, shape, data):
    x = _data(h, shape)
    ones = [i for i, d in enumerate(shape) if d == 1]
    if ones:
        axes = data.draw(st.lists(st.sampled_from(ones), min_size=1, unique=True))
        (ref,) = h.run_onnx("Squeeze", [x, np.array(axes, np.int64)])
        h.assert_same(KERNELS["squeeze"](x, axis=tuple(axes)), ref)
    (ref,) = h.run_onnx("Squeeze", [x])
    h.assert_same(KERNELS["squeeze"](x), ref)
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    (ref,) = h.run_onnx("Unsqueeze", [x, np.array([axis], np.int64)])
    h.assert_same(KERNELS["expand_dims"](x, axis=axis), ref)


def test_expand_dims_num_newaxis_and_squeeze_error():
    x = np.zeros((2, 3))
    assert KERNELS["expand_dims"](x, axis=1, num_newaxis=3).shape == (2, 1, 1, 1, 3)
    assert KERNELS["expand_dims"](x, axis=-1, num_newaxis=2).shape == (2, 3, 1, 1)
    assert KERNELS["expand_dims"](x, axis=0, num_newaxis=0).shape == (2, 3)
    with pytest.raises(ValueError, match="size 3, not 1"):
        KERNELS["squeeze"](x, axis=(1,))


# ---------------------------------------------------------------------------------------------
# concatenate / stack / split
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@FAST
@given(shape=shapes, data=st.data())
def test_concatenate_vs_onnxruntime(h, dtype, shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = data.draw(st.integers(1, 4))
    xs = []
    for i in range(n):
        s = list(shape)
        s[axis] = data.draw(st.integers(1, 3))
        xs.append(_data(h, tuple(s), dtype, seed=i))
    (ref,) = h.run_onnx("Concat", xs, {"axis": axis})
    h.assert_same(KERNELS["concatenate"](*xs, axis=axis), ref)


@FAST
@given(shape=shapes, data=st.data())
def test_stack_vs_python(h, shape, data):
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    n = data.draw(st.integers(1, 3))
    xs = [_data(h, shape, "int16", seed=i) for i in range(n)]
    res = KERNELS["stack"](*xs, axis=axis)
    a = axis % (len(shape) + 1)
    assert res.shape == shape[:a] + (n,) + shape[a:]
    for idx in itertools.product(*[range(d) for d in res.shape]):
        assert res[idx] == xs[idx[a]][idx[:a] + idx[a + 1 :]]


@FAST
@given(shape=shapes, data=st.data())
def test_split_vs_onnxruntime(h, shape, data):
    x = _data(h, shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    dim = shape[axis]
    if data.draw(st.booleans()):
        n = data.draw(st.sampled_from([d for d in range(1, dim + 1) if dim % d == 0]))
        sizes = [dim // n] * n
        res = KERNELS["split"](x, indices_or_sections=n, axis=axis)
    else:
        points = sorted(data.draw(st.lists(st.integers(0, dim), max_size=3)))
        bounds = [0] + points + [dim]
        sizes = [b - a for a, b in zip(bounds, bounds[1:])]
        res = KERNELS["split"](x, indices_or_sections=tuple(points), axis=axis)
    refs = h.run_onnx(
        "Split", [x, np.array(sizes, np.int64)], {"axis": axis}, out_dtypes=["float32"] * len(sizes)
    )
    assert isinstance(res, tuple) and len(res) == len(refs)
    for r, ref in zip(res, refs):
        h.assert_same(r, ref)


def test_split_uneven_sections_is_an_error():
    with pytest.raises(ValueError, match="do not divide"):
        KERNELS["split"](np.zeros((5, 2)), indices_or_sections=2)


# ---------------------------------------------------------------------------------------------
# strided_slice
# ---------------------------------------------------------------------------------------------


@FAST
@given(shape=shapes, data=st.data())
def test_strided_slice_vs_onnxruntime(h, shape, data):
    x = _data(h, shape)
    nd = len(shape)
    k = data.draw(st.integers(1, nd))
    strides = [data.draw(st.sampled_from([-3, -2, -1, 1, 2, 3])) for _ in range(k)]
    # With a negative stride, onnxruntime clamps a begin before the start to 0 where TVM (and
    # Python) clamp it to -1, i.e. an empty slice; that case is tested on its own below.
    begin = [
        data.draw(st.integers(-d if s < 0 else -2 * d - 1, 2 * d + 1))
        for d, s in zip(shape, strides)
    ]
    end = [data.draw(st.integers(-2 * d - 1, 2 * d + 1)) for d in shape[:k]]
    ref_in = [x] + [np.array(v, np.int64) for v in (begin, end, list(range(k)), strides)]
    (ref,) = h.run_onnx("Slice", ref_in)
    h.assert_same(KERNELS["strided_slice"](x, begin=begin, end=end, strides=strides), ref)
    # The same slice through explicit (permuted) axes.
    perm = data.draw(st.permutations(range(k)))
    res = KERNELS["strided_slice"](
        x,
        begin=[begin[p] for p in perm],
        end=[end[p] for p in perm],
        strides=[strides[p] for p in perm],
        axes=list(perm),
    )
    h.assert_same(res, ref)


def test_strided_slice_negative_stride_clamps_like_tvm():
    x = np.arange(6, dtype=np.int32)
    # begin -8 + 6 = -2 clamps to -1 ("before the start"): nothing to take going backwards.
    assert KERNELS["strided_slice"](x, begin=[-8], end=[-10], strides=[-1]).shape == (0,)
    assert KERNELS["strided_slice"](x, begin=[10], end=[-10], strides=[-2]).tolist() == [5, 3, 1]
    assert KERNELS["strided_slice"](x, begin=[4], end=[1], strides=[-1]).tolist() == [4, 3, 2]
    assert KERNELS["strided_slice"](x, begin=[-100], end=[100], strides=[4]).tolist() == [0, 4]


def test_strided_slice_size_mode_and_defaults(h):
    x = np.arange(5 * 6, dtype=np.int32).reshape(5, 6)
    res = KERNELS["strided_slice"](x, begin=[1, 2], end=[2, -1], slice_mode="size")
    assert res.tolist() == [[x[r, c] for c in range(2, 6)] for r in range(1, 3)]
    # Size mode ignores strides; a negative begin counts from the end.
    res = KERNELS["strided_slice"](x, begin=[-2], end=[1], strides=[3], slice_mode="size")
    assert res.tolist() == [x[3].tolist()]
    # Missing end entries mean "to the end" (or to the start for negative strides).
    res = KERNELS["strided_slice"](x, begin=[4, 5], end=[0], strides=[-2, -1])
    assert res.tolist() == [[x[r, c] for c in range(5, -1, -1)] for r in (4, 2)]
    with pytest.raises(ValueError, match="stride 0"):
        KERNELS["strided_slice"](x, begin=[0], end=[2], strides=[0])


def test_strided_slice_kernel_gives_the_inferred_type():
    # Relay pads strides with 1 (StridedSliceRel): a single stride is the first axis's only
    from xrelay import relay

    x = np.arange(4 * 6, dtype=np.float32).reshape(4, 6)
    for kw in (
        dict(begin=[0, 0], end=[4, 6], strides=[2]),
        dict(begin=[1], end=[3], strides=[1], axes=[1]),
        dict(begin=[3, 5], end=[0], strides=[-2]),
        dict(begin=[0, 1], end=[-1, 2], slice_mode="size"),
    ):
        call = relay.strided_slice(relay.var("x", shape=(4, 6)), **kw)
        res = KERNELS["strided_slice"](x, **call.attrs)
        assert res.shape == tuple(call.checked_type.get_shape()), kw
    res = KERNELS["strided_slice"](x, begin=[0, 0], end=[4, 6], strides=[2])
    assert res.tolist() == x[::2, :].tolist()


# ---------------------------------------------------------------------------------------------
# layout_transform
# ---------------------------------------------------------------------------------------------


def test_parse_layout():
    assert parse_layout("NCHW8c") == [("N", 0), ("C", 0), ("H", 0), ("W", 0), ("c", 8)]
    assert parse_layout("OIHW4i16o")[-2:] == [("i", 4), ("o", 16)]
    for bad in ("NCHWc", "NCHW8C", "NCHc", "NCCH", "", "NC-HW"):
        with pytest.raises(ValueError):
            parse_layout(bad)


def test_layout_transform_nchw_nchw8c(h):
    x = _data(h, (2, 16, 3, 5))
    y = KERNELS["layout_transform"](x, src_layout="NCHW", dst_layout="NCHW8c")
    assert y.shape == (2, 2, 3, 5, 8)
    for n, c, i, j in itertools.product(range(2), range(16), range(3), range(5)):
        assert y[n, c // 8, i, j, c % 8] == x[n, c, i, j]
    back = KERNELS["layout_transform"](y, src_layout="NCHW8c", dst_layout="NCHW")
    h.assert_same(back, x)
    # Re-blocking and unblocking straight into another layout.
    z = KERNELS["layout_transform"](y, src_layout="NCHW8c", dst_layout="NHWC4c")
    assert z.shape == (2, 3, 5, 4, 4)
    for n, c, i, j in itertools.product(range(2), range(16), range(3), range(5)):
        assert z[n, i, j, c // 4, c % 4] == x[n, c, i, j]


def test_layout_transform_oihw4i8o(h):
    w = _data(h, (16, 8, 3, 3), "int8")
    y = KERNELS["layout_transform"](w, src_layout="OIHW", dst_layout="OIHW4i8o")
    assert y.shape == (2, 2, 3, 3, 4, 8)
    for o, i, a, b in itertools.product(range(16), range(8), range(3), range(3)):
        assert y[o // 8, i // 4, a, b, i % 4, o % 8] == w[o, i, a, b]
    h.assert_same(KERNELS["layout_transform"](y, src_layout="OIHW4i8o", dst_layout="OIHW"), w)


def test_layout_transform_permutations(h):
    x = _data(h, (2, 3, 4, 5))
    h.assert_same(
        KERNELS["layout_transform"](x, src_layout="NCHW", dst_layout="NHWC"),
        x.transpose(0, 2, 3, 1),
    )
    w = _data(h, (6, 3, 2, 2))
    hwio = KERNELS["layout_transform"](w, src_layout="OIHW", dst_layout="HWIO")
    for o, i, a, b in itertools.product(range(6), range(3), range(2), range(2)):
        assert hwio[a, b, i, o] == w[o, i, a, b]
    with pytest.raises(ValueError, match="not divisible"):
        KERNELS["layout_transform"](x, src_layout="NCHW", dst_layout="NCHW2c")


# ---------------------------------------------------------------------------------------------
# broadcast_to, take, tile, shape_of
# ---------------------------------------------------------------------------------------------


@FAST
@given(shape=shapes, data=st.data())
def test_broadcast_to_vs_onnxruntime(h, shape, data):
    src = tuple(d if data.draw(st.booleans()) else 1 for d in shape)[
        data.draw(st.integers(0, len(shape) - 1)) :
    ]
    x = _data(h, src, "uint8")
    (ref,) = h.run_onnx("Expand", [x, np.array(shape, np.int64)])
    h.assert_same(KERNELS["broadcast_to"](x, shape=shape), ref)


@FAST
@given(shape=shapes, ishape=st.lists(st.integers(0, 3), max_size=2), data=st.data())
def test_take_fast_vs_onnxruntime_gather(h, shape, ishape, data):
    x = _data(h, shape, "float32")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[axis]
    rng = np.random.default_rng(len(ishape))
    idx = rng.integers(-n, n, size=ishape).astype(data.draw(st.sampled_from(["int32", "int64"])))
    (ref,) = h.run_onnx("Gather", [x, idx], {"axis": axis})
    h.assert_same(KERNELS["take"](x, idx, axis=axis, mode="fast"), ref)


def test_take_modes_and_flat():
    x = np.array([[10, 11, 12], [20, 21, 22]], dtype=np.int32)
    idx = np.array([-4, -1, 0, 2, 3, 7], dtype=np.int64)
    assert KERNELS["take"](x, idx, axis=1, mode="clip").tolist() == [
        [10, 10, 10, 12, 12, 12],
        [20, 20, 20, 22, 22, 22],
    ]
    assert KERNELS["take"](x, idx, axis=1, mode="wrap").tolist() == [
        [12, 12, 10, 12, 10, 11],
        [22, 22, 20, 22, 20, 21],
    ]
    assert KERNELS["take"](x, np.array([[5, 0]]), axis=None).tolist() == [[22, 10]]


def test_take_batch_dims_vs_loops(h):
    x = _data(h, (2, 3, 4, 5))
    idx = np.random.default_rng(0).integers(0, 4, size=(2, 3, 6))
    res = KERNELS["take"](x, idx, axis=2, batch_dims=2)
    assert res.shape == (2, 3, 6, 5)
    for a, b, k, c in itertools.product(range(2), range(3), range(6), range(5)):
        assert res[a, b, k, c] == x[a, b, idx[a, b, k], c]
    res = KERNELS["take"](x, idx[:, 0], axis=3, batch_dims=1)
    assert res.shape == (2, 3, 4, 6)
    for a, b, c, k in itertools.product(range(2), range(3), range(4), range(6)):
        assert res[a, b, c, k] == x[a, b, c, idx[a, 0, k]]


@FAST
@given(shape=shapes, data=st.data())
def test_tile_vs_onnxruntime(h, shape, data):
    x = _data(h, shape, "bool")
    reps = [data.draw(st.integers(1, 3)) for _ in shape]
    (ref,) = h.run_onnx("Tile", [x, np.array(reps, np.int64)])
    h.assert_same(KERNELS["tile"](x, reps=tuple(reps)), ref)


def test_tile_rank_mismatch_follows_relay():
    x = np.arange(6).reshape(2, 3)
    assert KERNELS["tile"](x, reps=(2,)).shape == (2, 6)
    assert KERNELS["tile"](x, reps=(2, 1, 1)).shape == (2, 2, 3)


def test_shape_of_vs_onnxruntime(h):
    x = _data(h, (2, 3, 4))
    (ref,) = h.run_onnx("Shape", [x], out_dtypes=[np.int64])
    h.assert_same(KERNELS["shape_of"](x), ref.astype(np.int32))
    h.assert_same(KERNELS["shape_of"](x, dtype="int64"), ref)
