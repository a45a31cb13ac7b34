"""Relay's reduction type relation (ReduceRel / GetReduceAxes) against the type inference and the
kernels: one ``reduce_axes`` decides both, so the inferred type is the shape the kernel returns.

Ported from TVM v0.19.0 tests/python/relay/test_op_level4.py: ``TestReduceFunctions.test_reduce``
(its 17 shape cases for sum, max, min, mean, prod, argmin, argmax; variance, std, all, any and
logsumexp are not relay dialect ops) and ``test_sum_with_bool_input`` (10 cases).
"""

from __future__ import annotations

import numpy as np
import pytest

from xrelay import relay
from xrelay.dialects.relay import shape_of
from xrelay.dialects.relay.dtypes import dtype_of
from xrelay.dialects.relay.ops import reduce_axes
from xrelay.kernels import KERNELS

D = None  # a dynamic dimension (TVM's te.var)

# (data shape, axis, keepdims, exclude, output shape): TVM's table, te.var dims as None
REDUCE_CASES = [
    ((D, D, D, D), None, False, False, ()),
    ((D, D, D, D), 2, True, False, (D, D, 1, D)),
    ((D, D, D, D), 0, True, False, (1, D, D, D)),
    ((D, D, D), 1, True, False, (D, 1, D)),
    ((D, D, D), 0, True, False, (1, D, D)),
    ((D, D, D), None, True, False, (1, 1, 1)),
    ((D, D, D), (0, 1), True, False, (1, 1, D)),
    ((2, 3, 4), 1, True, False, (2, 1, 4)),
    ((2, 3, 4), (1,), True, False, (2, 1, 4)),
    ((2, 3, 4), -1, True, False, (2, 3, 1)),
    ((2, 3, 4), (0, 1, 2), False, False, ()),
    ((4, 4, 3), None, False, False, ()),
    ((4, 4, 3), (0, 2), False, False, (4,)),
    ((128, 24, 128), (0, 1), False, False, (128,)),
    ((128, 24, 128), (0, 2), False, False, (24,)),
    ((128, 24, 128), (0, 1), True, False, (1, 1, 128)),
    ((128, 24, 128), (0, 2), True, False, (1, 24, 1)),
]

FUNCS = {
    "sum": np.sum,
    "max": np.max,
    "min": np.min,
    "mean": np.mean,
    "prod": np.prod,
    "argmin": np.argmin,
    "argmax": np.argmax,
}


def _typed(call):
    t = call.checked_type
    return shape_of(t), dtype_of(t.element_type)


@pytest.mark.parametrize("name", list(FUNCS))
@pytest.mark.parametrize(("data", "axis", "keepdims", "exclude", "output"), REDUCE_CASES)
def test_reduce_rel(name, data, axis, keepdims, exclude, output):
    x = relay.var("x", shape=tuple(relay.Any() if d is None else d for d in data))
    z = getattr(relay, name)(x, axis, keepdims, exclude)
    out_dtype = "int32" if name.startswith("arg") else "float32"
    assert _typed(z) == (output, out_dtype)
    if None in data:
        return
    if name.startswith("arg") and axis is not None and not isinstance(axis, int) and len(axis) > 1:
        return  # TVM's reference (numpy) takes one axis; the type is checked above
    x_data = np.random.default_rng(0).uniform(size=data).astype("float32")
    res = KERNELS[name](x_data, **z.attrs)
    if name.startswith("arg"):
        axis = axis[0] if isinstance(axis, tuple) else axis
        ref = FUNCS[name](x_data, axis=axis)
        if keepdims:
            ref = np.expand_dims(ref, tuple(range(len(data))) if axis is None else axis)
    else:
        ref = FUNCS[name](x_data, axis=axis, keepdims=keepdims)
    assert res.shape == output
    np.testing.assert_allclose(res, ref, rtol=1e-5)


@pytest.mark.parametrize(
    ("dshape", "axis", "keepdims", "exclude"),
    [
        ((3, 5, 7, 9), None, False, False),
        ((3, 5, 7, 9), None, True, False),
        ((3, 5, 7, 9), (0,), False, False),
        ((3, 5, 7, 9), (1,), True, False),
        ((3, 5, 7, 9), (2, 3), False, True),
        ((3, 5, 7, 9), (0, 2), True, True),
        ((3, 5, 7, 9), (0, 1, 2, 3), False, False),
        ((3, 5, 7, 9), (0, 1, 2, 3), False, True),
        ((3, 5, 7, 9), (0, 1, 2, 3), True, False),
        ((3, 5, 7, 9), (0, 1, 2, 3), True, True),
    ],
)
def test_reduce_rel_sum_with_bool_input(dshape, axis, keepdims, exclude):
    x = relay.var("x", shape=dshape, dtype="bool")
    y = relay.sum(x, axis, keepdims, exclude)
    data = np.random.default_rng(1).choice([False, True], size=dshape)
    if exclude and axis is not None:
        axis = tuple(set(range(len(dshape))) - set(axis))
    ref = np.sum(data, axis, keepdims=keepdims, dtype="bool")
    res = KERNELS["sum"](data, **y.attrs)
    assert _typed(y) == (ref.shape, "bool")
    np.testing.assert_array_equal(res, ref)


@pytest.mark.parametrize("exclude", [False, True])
@pytest.mark.parametrize("axis", [None, ()])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduce_rel_no_axis_reduces_every_axis_whatever_exclude(axis, exclude, keepdims):
    # GetReduceAxes: an undefined or empty axis list means every axis, exclude or not
    assert reduce_axes(3, axis, exclude) == (0, 1, 2)
    x = relay.var("x", shape=(2, 3, 4))
    z = relay.sum(x, axis=axis, keepdims=keepdims, exclude=exclude)
    want = (1, 1, 1) if keepdims else ()
    assert _typed(z) == (want, "float32")
    data = np.arange(24, dtype="float32").reshape(2, 3, 4)
    res = KERNELS["sum"](data, **z.attrs)
    assert res.shape == want
    assert float(res.reshape(())) == float(data.sum())


def test_reduce_rel_exclude_of_every_axis_reduces_nothing():
    assert reduce_axes(3, (0, 1, -1), True) == ()
    z = relay.max(relay.var("x", shape=(2, 3, 4)), axis=(0, 1, 2), exclude=True)
    assert _typed(z) == ((2, 3, 4), "float32")


def test_reduce_rel_axis_out_of_range_names_the_op():
    with pytest.raises(relay.RelayTypeError, match="relay.sum: axis 3 is out of range for rank 3"):
        relay.sum(relay.var("x", shape=(2, 3, 4)), axis=3)
    with pytest.raises(ValueError, match="sum: axis -4 is out of range for rank 3"):
        KERNELS["sum"](np.zeros((2, 3, 4), "float32"), axis=(-4,))
