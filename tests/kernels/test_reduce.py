"""Reduction kernels against onnxruntime's Reduce*/ArgMax/ArgMin and Python loops.

Tolerances: ``conftest.tol(dtype, accum=True)``: float16 2e-2, float32 1e-4, float64 1e-9;
integers exact. Integer data is kept small where onnxruntime would overflow differently
(it may accumulate in the element type); wrapping itself is checked against Python.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xrelay.kernels import KERNELS

ORT_DTYPES = {
    "sum": ("ReduceSum", ["float16", "float32", "float64", "int32", "int64"]),
    "mean": ("ReduceMean", ["float16", "float32", "float64", "int32", "int64"]),
    "prod": ("ReduceProd", ["float32", "float64", "int32", "int64"]),
    "max": ("ReduceMax", ["float16", "float32", "float64", "int8", "int32", "int64", "uint8"]),
    "min": ("ReduceMin", ["float16", "float32", "float64", "int8", "int32", "int64", "uint8"]),
}


@st.composite
def shape_and_axes(draw, min_nd=1):
    nd = draw(st.integers(min_nd, 4))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=nd, max_size=nd)))
    if draw(st.booleans()):
        return shape, None
    axes = draw(
        st.lists(st.integers(-nd, nd - 1), min_size=1, max_size=nd, unique_by=lambda a: a % nd)
    )
    return shape, tuple(axes)


@pytest.mark.parametrize(
    "op,dtype", [(op, dt) for op, (_, dts) in ORT_DTYPES.items() for dt in dts]
)
@settings(max_examples=10, deadline=None)
@given(sa=shape_and_axes(), keepdims=st.booleans(), seed=st.integers(0, 2**16))
def test_reduce_vs_onnxruntime(h, op, dtype, sa, keepdims, seed):
    shape, axes = sa
    lo, hi = (-2, 2) if op == "prod" else (-100, 100)
    if op == "prod" and np.dtype(dtype).kind in "iu":
        lo, hi = -1, 1  # products that fit; onnxruntime's overflow is no reference
    x = h.rand(np.random.default_rng(seed), shape, dtype, lo, hi)
    if np.dtype(dtype).kind in "iu":
        x = np.clip(x, lo if np.dtype(dtype).kind == "i" else 0, hi).astype(dtype)
    inputs = [x] if axes is None else [x, np.array(axes, dtype=np.int64)]
    (ref,) = h.run_onnx(ORT_DTYPES[op][0], inputs, {"keepdims": int(keepdims)})
    res = KERNELS[op](x, axis=axes, keepdims=keepdims)
    h.assert_same(res, ref, accum=True)


@pytest.mark.parametrize("op", ["sum", "max", "mean"])
def test_exclude_reduces_the_other_axes(h, op):
    x = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    res = KERNELS[op](x, axis=(1,), exclude=True)
    fn = {"sum": sum, "max": max, "mean": lambda v: sum(v) / len(v)}[op]
    ref = [fn([float(x[i, j, k]) for i in range(2) for k in range(4)]) for j in range(3)]
    h.assert_same(res, np.array(ref, np.float32), accum=True)
    kept = KERNELS[op](x, axis=(-2,), exclude=True, keepdims=True)
    assert kept.shape == (1, 3, 1)


def test_integer_sum_wraps_and_mean_truncates():
    x = np.array([[100, 100, 100], [-7, 0, 0]], dtype=np.int8)
    np.testing.assert_array_equal(KERNELS["sum"](x, axis=(1,)), np.array([44, -7], np.int8))
    # The mean is exact (no int8 overflow) and truncates toward zero: 300/3, -7/3.
    np.testing.assert_array_equal(KERNELS["mean"](x, axis=(1,)), np.array([100, -2], np.int8))
    assert KERNELS["sum"](x).dtype == np.int8


def _arg_ref(x, axes, keepdims, fn, last):
    """argmax/argmin over several axes: index into the flattened reduced axes, by loops."""
    kept = [a for a in range(x.ndim) if a not in axes]
    out_shape = [1 if a in axes else x.shape[a] for a in range(x.ndim)]
    res = np.zeros([x.shape[a] for a in kept], dtype=np.int32)
    for ko in itertools.product(*[range(x.shape[a]) for a in kept]):
        best, best_i = None, 0
        for i, ro in enumerate(itertools.product(*[range(x.shape[a]) for a in axes])):
            idx = [0] * x.ndim
            for a, v in zip(kept, ko):
                idx[a] = v
            for a, v in zip(axes, ro):
                idx[a] = v
            val = x[tuple(idx)]
            if best is None or fn(val, best) or (last and val == best):
                best, best_i = val, i
        res[ko] = best_i
    return res.reshape(out_shape) if keepdims else res


@pytest.mark.parametrize("op,onnx_op", [("argmax", "ArgMax"), ("argmin", "ArgMin")])
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8"])
@settings(max_examples=10, deadline=None)
@given(
    sa=shape_and_axes(),
    keepdims=st.booleans(),
    last=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_arg_reduce_vs_onnxruntime(h, op, onnx_op, dtype, sa, keepdims, last, seed):
    shape, axes = sa
    x = h.rand(np.random.default_rng(seed), shape, dtype, -3, 3).round().astype(dtype)
    res = KERNELS[op](x, axis=axes, keepdims=keepdims, select_last_index=last)
    assert res.dtype == np.int32
    if axes is not None and len(axes) == 1:
        attrs = {"axis": axes[0], "keepdims": int(keepdims), "select_last_index": int(last)}
        (ref,) = h.run_onnx(onnx_op, [x], attrs, out_dtypes=[np.int64])
    else:
        red = tuple(range(x.ndim)) if axes is None else tuple(sorted(a % x.ndim for a in axes))
        cmp = (lambda a, b: a > b) if op == "argmax" else (lambda a, b: a < b)
        ref = _arg_ref(x, red, keepdims, cmp, last)
    h.assert_same(res, np.asarray(ref).astype(np.int32))


def test_arg_reduce_exclude():
    x = np.array([[[1, 9], [3, 4]], [[8, 2], [0, 7]]], dtype=np.int32)  # (2, 2, 2)
    # Reduce axes 0 and 2 (everything but 1): slice j=0 -> [1,9,8,2] -> 1; j=1 -> [3,4,0,7] -> 3.
    np.testing.assert_array_equal(KERNELS["argmax"](x, axis=(1,), exclude=True), [1, 3])


def test_all_any_and_bool_sum():
    x = np.array([[True, False], [True, True]])
    assert KERNELS["all"](x, axis=(1,)).tolist() == [False, True]
    assert KERNELS["any"](x, axis=(0,)).tolist() == [True, True]
    assert KERNELS["sum"](x).dtype == np.bool_


def test_empty_max_is_an_error():
    with pytest.raises(ValueError, match="empty"):
        KERNELS["max"](np.zeros((2, 0), np.float32), axis=(1,))
