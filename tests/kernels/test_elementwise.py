"""Elementwise kernels against one-node onnxruntime models and plain-Python references.

Tolerances are those of ``conftest.tol``: float16 1e-2, float32 1e-5, float64 1e-10 (relative
and absolute), integers and bool exact. Ops or dtypes onnxruntime lacks (round half away from
zero, rsqrt, int16 max/min, erf on float64, negative integer powers...) are checked against
Python scalar arithmetic.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xrelay.kernels import KERNELS

FLOATS = ["float16", "float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
ALL = FLOATS + INTS + ["bool"]
FAST = settings(max_examples=12, deadline=None)


@st.composite
def shape_pair(draw):
    """Two shapes that broadcast together (either may be the larger)."""
    nd = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=nd, max_size=nd)))
    other = tuple(d if draw(st.booleans()) else 1 for d in shape)[draw(st.integers(0, nd)) :]
    return (other, shape) if draw(st.booleans()) else (shape, other)


# ---------------------------------------------------------------------------------------------
# Unary
# ---------------------------------------------------------------------------------------------

UNARY_ORT = {
    # relay op: (onnx op, dtypes, input range)
    "exp": ("Exp", FLOATS, (-5, 5)),
    "log": ("Log", FLOATS, (0.01, 50)),
    "sqrt": ("Sqrt", FLOATS, (0, 50)),
    "tanh": ("Tanh", FLOATS, (-5, 5)),
    "sigmoid": ("Sigmoid", FLOATS, (-12, 12)),
    "erf": ("Erf", ["float16", "float32"], (-3, 3)),
    "floor": ("Floor", FLOATS, (-9, 9)),
    "ceil": ("Ceil", FLOATS, (-9, 9)),
    "sin": ("Sin", FLOATS, (-6, 6)),
    "cos": ("Cos", FLOATS, (-6, 6)),
    "abs": ("Abs", FLOATS + INTS, (-9, 9)),
    "negative": ("Neg", FLOATS + ["int8", "int16", "int32", "int64"], (-9, 9)),
    "sign": ("Sign", FLOATS + INTS, (-9, 9)),
    "nn.relu": ("Relu", FLOATS + ["int8", "int32", "int64"], (-9, 9)),
}


@pytest.mark.parametrize(
    "op,dtype", [(op, dt) for op, (_, dts, _) in UNARY_ORT.items() for dt in dts]
)
@settings(max_examples=6, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=0, max_size=4), seed=st.integers(0, 2**16))
def test_unary_vs_onnxruntime(h, op, dtype, shape, seed):
    onnx_op, _, (lo, hi) = UNARY_ORT[op]
    x = h.rand(np.random.default_rng(seed), shape, dtype, lo, hi)
    (ref,) = h.run_onnx(onnx_op, [x])
    h.assert_same(KERNELS[op](x), ref)


def test_erf_float64_matches_math_erf(h):
    x = np.linspace(-4, 4, 101)
    h.assert_same(KERNELS["erf"](x), np.array([math.erf(v) for v in x]))


@pytest.mark.parametrize("dtype", FLOATS)
def test_rsqrt(h, dtype):
    x = np.linspace(0.05, 40, 64).astype(dtype).reshape(4, 16)
    ref = np.array([1 / math.sqrt(float(v)) for v in x.ravel()]).reshape(x.shape).astype(dtype)
    h.assert_same(KERNELS["rsqrt"](x), ref)


@pytest.mark.parametrize("dtype", FLOATS)
def test_round_is_half_away_from_zero(h, dtype):
    x = np.array(
        [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.49999997, 3.7, -3.2, 0.0, 1e4 + 0.5],
        dtype=dtype,
    )
    ref = [float(Decimal(float(v)).quantize(Decimal(1), rounding=ROUND_HALF_UP)) for v in x]
    h.assert_same(KERNELS["round"](x), np.array(ref, dtype=dtype))


@pytest.mark.parametrize("op", ["round", "floor", "ceil", "trunc"])
@pytest.mark.parametrize("dtype", INTS)
def test_rounding_is_identity_on_integers(h, op, dtype):
    x = h.rand(np.random.default_rng(0), (3, 4), dtype)
    h.assert_same(KERNELS[op](x), x)


@pytest.mark.parametrize("op", ["exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "erf"])
def test_float_only_ops_reject_integers(op):
    with pytest.raises(ValueError, match="floating-point"):
        KERNELS[op](np.arange(4, dtype=np.int32))


def test_sigmoid_is_stable_for_large_inputs():
    x = np.array([-1000.0, -50.0, 0.0, 50.0, 1000.0], dtype=np.float32)
    with np.errstate(all="raise"):
        res = KERNELS["sigmoid"](x)
    np.testing.assert_allclose(res, [0.0, 1.9287498e-22, 0.5, 1.0, 1.0], rtol=1e-6)


def test_integer_unary_wraps():
    x = np.array([-128, -1, 0, 127], dtype=np.int8)
    np.testing.assert_array_equal(KERNELS["abs"](x), np.array([-128, 1, 0, 127], np.int8))
    np.testing.assert_array_equal(KERNELS["negative"](x), np.array([-128, 1, 0, -127], np.int8))
    u = np.array([0, 1, 255], dtype=np.uint8)
    np.testing.assert_array_equal(KERNELS["negative"](u), np.array([0, 255, 1], np.uint8))


@pytest.mark.parametrize("dtype", FLOATS)
@FAST
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=4), alpha=st.floats(0.0, 1.0))
def test_leaky_relu_vs_onnxruntime(h, dtype, shape, alpha):
    alpha = float(np.float32(alpha))  # ONNX attributes are float32
    x = h.rand(np.random.default_rng(len(shape)), shape, dtype)
    (ref,) = h.run_onnx("LeakyRelu", [x], {"alpha": alpha})
    h.assert_same(KERNELS["nn.leaky_relu"](x, alpha=alpha), ref)


@pytest.mark.parametrize("dtype", FLOATS)
@FAST
@given(shape=st.lists(st.integers(1, 5), min_size=2, max_size=4), seed=st.integers(0, 999))
def test_prelu_vs_onnxruntime(h, dtype, shape, seed):
    rng = np.random.default_rng(seed)
    x = h.rand(rng, shape, dtype)
    alpha = h.rand(rng, (shape[1],), dtype, -1, 1)
    # ONNX broadcasts slope from the right: (C, 1, ..., 1) puts it on axis 1.
    slope = alpha.reshape((-1,) + (1,) * (len(shape) - 2))
    (ref,) = h.run_onnx("PRelu", [x, slope])
    h.assert_same(KERNELS["nn.prelu"](x, alpha, axis=1), ref)


def test_prelu_other_axis():
    x = np.array([[-1.0, 2.0], [-3.0, -4.0], [5.0, -6.0]], dtype=np.float32)
    alpha = np.array([0.5, 0.25], dtype=np.float32)
    res = KERNELS["nn.prelu"](x, alpha, axis=-1)
    ref = [[-0.5, 2.0], [-1.5, -1.0], [5.0, -1.5]]
    np.testing.assert_array_equal(res, np.array(ref, np.float32))


# ---------------------------------------------------------------------------------------------
# clip and cast
# ---------------------------------------------------------------------------------------------


CLIP_ORT = FLOATS + ["int8", "int32", "int64", "uint8", "uint32", "uint64"]


@pytest.mark.parametrize("dtype", CLIP_ORT)
@FAST
@given(
    shapes=shape_pair(),
    seed=st.integers(0, 999),
    bounds=st.tuples(st.integers(-20, 20), st.integers(0, 30)),
)
def test_clip_vs_onnxruntime(h, dtype, shapes, seed, bounds):
    lo, width = bounds
    if np.dtype(dtype).kind == "u":
        lo = abs(lo)
    x = h.rand(np.random.default_rng(seed), shapes[1], dtype, -40, 40)
    a_min, a_max = np.array(lo, dtype), np.array(lo + width, dtype)
    (ref,) = h.run_onnx("Clip", [x, a_min, a_max])
    h.assert_same(KERNELS["clip"](x, a_min=float(lo), a_max=float(lo + width)), ref)


def test_clip_integer_bounds_are_rounded_inward_and_saturated():
    x = np.array([-128, -3, -1, 0, 1, 2, 3, 127], dtype=np.int8)
    res = KERNELS["clip"](x, a_min=-1.5, a_max=2.5)
    np.testing.assert_array_equal(res, np.array([-1, -1, -1, 0, 1, 2, 2, 2], np.int8))
    res = KERNELS["clip"](x, a_min=-3.4e38, a_max=3.4e38)
    np.testing.assert_array_equal(res, x)
    u = np.array([0, 5, 255], dtype=np.uint8)
    np.testing.assert_array_equal(KERNELS["clip"](u, a_min=-10.0, a_max=6.0), [0, 5, 6])


@pytest.mark.parametrize("dtype", ["int16", "uint16"])
def test_clip_int16_vs_python(h, dtype):
    x = h.rand(np.random.default_rng(1), (40,), dtype)
    ref = [min(max(v, 3), 1000) for v in x.tolist()]
    h.assert_same(KERNELS["clip"](x, a_min=2.5, a_max=1000.0), np.array(ref, dtype))


def test_clip_keeps_nan():
    res = KERNELS["clip"](np.array([np.nan, -5.0, 5.0], np.float32), a_min=-1.0, a_max=1.0)
    assert np.isnan(res[0]) and res[1] == -1.0 and res[2] == 1.0


def _cast_input(src: str, dst: str) -> np.ndarray:
    """Values every pair can represent: in [0, 100] with fractions where src is float."""
    rng = np.random.default_rng(hash((src, dst)) % 2**32)
    lo = 0 if np.dtype(dst).kind in "ub" or np.dtype(src).kind == "u" else -100
    vals = rng.uniform(lo, 100, size=(3, 7))
    vals[0, :3] = [0, 1, 2]
    if np.dtype(src) == np.bool_:
        return vals > 50
    if np.dtype(src).kind == "f":
        return vals.astype(src)
    return np.trunc(vals).astype(src)


@pytest.mark.parametrize("dst", ALL)
@pytest.mark.parametrize("src", ALL)
def test_cast_vs_onnxruntime(h, src, dst):
    x = _cast_input(src, dst)
    to = onnx_type(dst)
    (ref,) = h.run_onnx("Cast", [x], {"to": to}, out_dtypes=[dst])
    h.assert_same(KERNELS["cast"](x, dtype=dst), ref)


def onnx_type(dtype: str) -> int:
    from onnx import helper

    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def test_cast_truncates_toward_zero_and_wraps():
    x = np.array([-2.7, -0.5, 0.5, 2.7, 200.0, 300.0, -129.0], dtype=np.float32)
    np.testing.assert_array_equal(
        KERNELS["cast"](x, dtype="int8"), np.array([-2, 0, 0, 2, -56, 44, 127], np.int8)
    )
    np.testing.assert_array_equal(
        KERNELS["cast"](np.array([-1.0, 256.5], np.float64), dtype="uint8"), [255, 0]
    )
    np.testing.assert_array_equal(
        KERNELS["cast"](np.array([0.0, -0.0, 0.1, np.nan], np.float32), dtype="bool"),
        [False, False, True, True],
    )
    np.testing.assert_array_equal(
        KERNELS["cast"](np.array([256, 257, -1], np.int32), dtype="uint8"), [0, 1, 255]
    )


def test_cast_to_bfloat16_gives_ml_dtypes_bfloat16():
    y = KERNELS["cast"](np.array([1.0, 1 + 2**-8], np.float32), dtype="bfloat16")
    assert y.dtype.name == "bfloat16"
    np.testing.assert_array_equal(y.astype(np.float32), [1.0, 1.0])  # halfway: to even


# ---------------------------------------------------------------------------------------------
# Binary
# ---------------------------------------------------------------------------------------------

BINARY_ORT = {
    "add": ("Add", FLOATS + INTS),
    "subtract": ("Sub", FLOATS + INTS),
    "multiply": ("Mul", FLOATS + INTS),
    "maximum": ("Max", FLOATS + ["int8", "int32", "int64", "uint8", "uint32", "uint64"]),
    "minimum": ("Min", FLOATS + ["int8", "int32", "int64", "uint8", "uint32", "uint64"]),
    "divide": ("Div", FLOATS + INTS),
    "floor_mod": ("Mod", INTS),
}
CMP_ORT = {
    "equal": "Equal",
    "less": "Less",
    "greater": "Greater",
    "less_equal": "LessOrEqual",
    "greater_equal": "GreaterOrEqual",
}


def _operands(h, rng, shapes, dtype, op):
    a = h.rand(rng, shapes[0], dtype)
    b = h.rand(rng, shapes[1], dtype)
    if op in ("divide", "floor_mod", "mod", "floor_divide"):
        b = np.where(b == 0, np.ones((), dtype), b).astype(dtype)
        if np.dtype(dtype).kind == "i":
            # INT_MIN / -1 overflows in C; onnxruntime would trap.
            b = np.where(b == -1, np.full((), 3, dtype), b).astype(dtype)
    if np.dtype(dtype).kind == "f" and op in ("divide",):
        b = np.where(np.abs(b) < 0.1, np.ones((), dtype), b).astype(dtype)
    return a, b


@pytest.mark.parametrize(
    "op,dtype", [(op, dt) for op, (_, dts) in BINARY_ORT.items() for dt in dts]
)
@settings(max_examples=5, deadline=None)
@given(shapes=shape_pair(), seed=st.integers(0, 2**16))
def test_binary_vs_onnxruntime(h, op, dtype, shapes, seed):
    a, b = _operands(h, np.random.default_rng(seed), shapes, dtype, op)
    attrs = {"fmod": 0} if op == "floor_mod" else None
    (ref,) = h.run_onnx(BINARY_ORT[op][0], [a, b], attrs)
    h.assert_same(KERNELS[op](a, b), ref)


# onnxruntime computes 64-bit integer fmod through double, losing low bits; those are checked
# against Python below.
@pytest.mark.parametrize("dtype", FLOATS + INTS[:3] + INTS[4:7])
@settings(max_examples=5, deadline=None)
@given(shapes=shape_pair(), seed=st.integers(0, 2**16))
def test_mod_vs_onnxruntime_fmod(h, dtype, shapes, seed):
    a, b = _operands(h, np.random.default_rng(seed), shapes, dtype, "mod")
    (ref,) = h.run_onnx("Mod", [a, b], {"fmod": 1})
    h.assert_same(KERNELS["mod"](a, b), ref)


@pytest.mark.parametrize("op", sorted(CMP_ORT))
@pytest.mark.parametrize("dtype", FLOATS + INTS)
@settings(max_examples=3, deadline=None)
@given(shapes=shape_pair(), seed=st.integers(0, 2**16))
def test_comparison_vs_onnxruntime(h, op, dtype, shapes, seed):
    rng = np.random.default_rng(seed)
    a = h.rand(rng, shapes[0], dtype, -3, 3).round().astype(dtype)  # ties happen
    b = h.rand(rng, shapes[1], dtype, -3, 3).round().astype(dtype)
    (ref,) = h.run_onnx(CMP_ORT[op], [a, b], out_dtypes=[np.bool_])
    h.assert_same(KERNELS[op](a, b), ref)


def test_not_equal_and_int16_extremes_vs_python(h):
    rng = np.random.default_rng(3)
    a = h.rand(rng, (4, 5), "int16")
    b = np.where(rng.random((4, 5)) < 0.5, a, h.rand(rng, (4, 5), "int16"))
    h.assert_same(
        KERNELS["not_equal"](a, b),
        np.array([[x != y for x, y in zip(r, s)] for r, s in zip(a.tolist(), b.tolist())]),
    )
    h.assert_same(
        KERNELS["maximum"](a, b),
        np.array(
            [[max(x, y) for x, y in zip(r, s)] for r, s in zip(a.tolist(), b.tolist())], np.int16
        ),
    )
    h.assert_same(
        KERNELS["minimum"](a, b),
        np.array(
            [[min(x, y) for x, y in zip(r, s)] for r, s in zip(a.tolist(), b.tolist())], np.int16
        ),
    )


def _wrap(v: int, dtype: str) -> int:
    bits = np.dtype(dtype).itemsize * 8
    v %= 1 << bits
    if np.dtype(dtype).kind == "i" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "uint32"])
def test_integer_arithmetic_wraps_like_c(h, dtype):
    rng = np.random.default_rng(7)
    a, b = h.rand(rng, (50,), dtype), h.rand(rng, (50,), dtype)
    b = np.where(b == 0, np.ones((), dtype), b).astype(dtype)
    al, bl = a.tolist(), b.tolist()
    for op, f in [
        ("add", lambda x, y: x + y),
        ("subtract", lambda x, y: x - y),
        ("multiply", lambda x, y: x * y),
        # C truncating division; x / y on python ints is floor, so build trunc by hand.
        ("divide", lambda x, y: abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)),
        ("floor_divide", lambda x, y: x // y),
    ]:
        ref = np.array([_wrap(f(x, y), dtype) for x, y in zip(al, bl)], dtype=dtype)
        h.assert_same(KERNELS[op](a, b), ref)


@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_mod_64bit_is_exact(h, dtype):
    rng = np.random.default_rng(5)
    a, b = h.rand(rng, (60,), dtype), h.rand(rng, (60,), dtype) // 1000
    b = np.where(b == 0, np.ones((), dtype), b).astype(dtype)
    ref = [abs(x) % abs(y) * (1 if x >= 0 else -1) for x, y in zip(a.tolist(), b.tolist())]
    h.assert_same(KERNELS["mod"](a, b), np.array(ref, dtype))


def test_integer_divide_truncates_and_zero_division_gives_zero():
    a = np.array([7, -7, 7, -7, 5, -128], dtype=np.int8)
    b = np.array([2, 2, -2, -2, 0, -1], dtype=np.int8)
    np.testing.assert_array_equal(KERNELS["divide"](a, b), [3, -3, -3, 3, 0, -128])
    np.testing.assert_array_equal(KERNELS["floor_divide"](a, b)[:4], [3, -4, -4, 3])
    np.testing.assert_array_equal(KERNELS["mod"](a[:4], b[:4]), [1, -1, 1, -1])
    np.testing.assert_array_equal(KERNELS["floor_mod"](a[:4], b[:4]), [1, 1, -1, -1])


@pytest.mark.parametrize("dtype", FLOATS)
@FAST
@given(shapes=shape_pair(), seed=st.integers(0, 2**16))
def test_power_float_vs_onnxruntime(h, dtype, shapes, seed):
    rng = np.random.default_rng(seed)
    a = h.rand(rng, shapes[0], dtype, 0.1, 3)
    b = h.rand(rng, shapes[1], dtype, -2, 2)
    (ref,) = h.run_onnx("Pow", [a, b])
    h.assert_same(KERNELS["power"](a, b), ref)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_power_int_vs_onnxruntime(h, dtype):
    a = np.arange(-4, 5, dtype=dtype).reshape(9, 1)
    b = np.arange(0, 6, dtype=dtype).reshape(1, 6)
    (ref,) = h.run_onnx("Pow", [a, b])
    h.assert_same(KERNELS["power"](a, b), ref)


def test_power_negative_integer_exponents():
    a = np.array([1, -1, -1, 2, 0, -3, 5], dtype=np.int32)
    b = np.array([-3, -3, -2, -1, -2, -1, 2], dtype=np.int32)
    np.testing.assert_array_equal(KERNELS["power"](a, b), [1, -1, 1, 0, 0, 0, 25])
    np.testing.assert_array_equal(
        KERNELS["power"](np.array([2], np.int8), np.array([7], np.int8)), [-128]
    )


@pytest.mark.parametrize("dtype", ["float16", "float32", "int32", "uint8", "int64"])
@FAST
@given(seed=st.integers(0, 2**16), shapes=shape_pair())
def test_where_vs_onnxruntime(h, dtype, seed, shapes):
    rng = np.random.default_rng(seed)
    cond = rng.random(shapes[0]) < 0.5
    x = h.rand(rng, shapes[1], dtype)
    y = h.rand(rng, shapes[0][-1:], dtype)
    (ref,) = h.run_onnx("Where", [cond, x, y], out_dtypes=[dtype])
    h.assert_same(KERNELS["where"](cond, x, y), ref)


def test_where_bool_and_nonbool_condition():
    cond = np.array([[1], [0]], dtype=np.int32)  # broadcast over columns, non-zero = true
    x = np.array([True, False, True])
    y = np.array([[False], [True]])
    res = KERNELS["where"](cond, x, y)
    assert res.dtype == np.bool_
    assert res.tolist() == [[True, False, True], [True, True, True]]


def test_logical_ops():
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    np.testing.assert_array_equal(KERNELS["logical_and"](a, b), [1, 0, 0, 0])
    np.testing.assert_array_equal(KERNELS["logical_or"](a, b), [1, 1, 1, 0])
    np.testing.assert_array_equal(KERNELS["logical_xor"](a, b), [0, 1, 1, 0])
    np.testing.assert_array_equal(KERNELS["logical_not"](a), [0, 0, 1, 1])


def test_mismatched_dtypes_are_rejected():
    with pytest.raises(ValueError, match="dtypes differ"):
        KERNELS["add"](np.ones(2, np.float32), np.ones(2, np.float64))


def test_like_and_fill_ops():
    x = np.arange(6, dtype=np.int16).reshape(2, 3)
    np.testing.assert_array_equal(KERNELS["zeros_like"](x), np.zeros((2, 3), np.int16))
    np.testing.assert_array_equal(KERNELS["ones_like"](x), np.ones((2, 3), np.int16))
    assert KERNELS["ones_like"](x).dtype == np.int16
    res = KERNELS["full"](np.array(2.5), shape=(2, 2), dtype="float16")
    assert res.dtype == np.float16 and res.tolist() == [[2.5, 2.5], [2.5, 2.5]]
    assert KERNELS["zeros"](shape=(3,), dtype="uint8").tolist() == [0, 0, 0]
    assert KERNELS["full_like"](x, np.array(7)).tolist() == [[7] * 3] * 2
