"""relay.variance / std / mean_variance / mean_std: TVM v0.19 test_op_level4.py's static
cases for them (TestReduceFunctions with var, unbiased_var, std, unbiased_std; test_mean_var_std
with float32 and float16), run by the interpreter against numpy."""

from __future__ import annotations

import numpy as np
import pytest

from xrelay import relay
from xrelay.runtime.interpreter import run

CASES = [  # (shape, axis, keepdims, output) -- TestReduceFunctions' static shapes
    ((2, 3, 4), 1, True, (2, 1, 4)),
    ((2, 3, 4), (1,), True, (2, 1, 4)),
    ((2, 3, 4), -1, True, (2, 3, 1)),
    ((2, 3, 4), (0, 1, 2), False, ()),
    ((4, 4, 3), None, False, ()),
    ((4, 4, 3), (0, 2), False, (4,)),
    ((16, 6, 16), (0, 1), False, (16,)),
    ((16, 6, 16), (0, 2), True, (1, 6, 1)),
]


def _evaluate(expr, x):
    mod = relay.IRModule.from_expr(relay.Function([relay.analysis.free_vars(expr)[0]], expr))
    return run(mod.module, {"x": x}, {})


@pytest.mark.parametrize("shape, axis, keepdims, output", CASES)
@pytest.mark.parametrize("name, unbiased", [("variance", False), ("variance", True), ("std", False), ("std", True)])
def test_variance_and_std_vs_numpy(shape, axis, keepdims, output, name, unbiased):
    x = relay.var("x", relay.TensorType(shape, "float32"))
    z = getattr(relay, name)(x, axis, keepdims, False, unbiased=unbiased)
    assert relay.transform.InferType()(relay.IRModule.from_expr(z))["main"].ret_type == relay.TensorType(output, "float32")
    if axis:
        assert "axis=" in z.astext()
    data = np.random.default_rng(0).uniform(size=shape).astype("float32")
    ref = (np.var if name == "variance" else np.std)(data, axis=axis, keepdims=keepdims, ddof=int(unbiased))
    (got,) = _evaluate(z, data)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape, axis, keepdims, output", CASES + [((16, 6, 16), (0, 2), True, "float16")])
@pytest.mark.parametrize("func, ref_func", [(relay.mean_variance, np.var), (relay.mean_std, np.std)])
def test_mean_var_std(shape, axis, keepdims, output, func, ref_func):
    dtype = "float16" if output == "float16" else "float32"
    x = relay.var("x", relay.TensorType(shape, dtype))
    z = func(x, axis, keepdims)
    data = np.random.default_rng(1).uniform(size=shape).astype("float32")
    ref_mean = np.mean(data, axis=axis, keepdims=keepdims)
    ref = ref_func(data, axis=axis, keepdims=keepdims)
    got_mean, got = _evaluate(z.astuple(), data.astype(dtype))
    tol = 1e-2 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(got_mean, ref_mean, rtol=tol, atol=tol)
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


def test_variance_with_mean_and_exclude():
    """``with_mean`` replaces the computed mean; ``exclude`` reduces the other axes."""
    x = relay.var("x", relay.TensorType((2, 3, 4), "float32"))
    data = np.random.default_rng(2).standard_normal((2, 3, 4)).astype("float32")
    zero = relay.const(np.zeros((1, 3, 1), "float32"))
    (got,) = _evaluate(relay.variance(x, axis=1, exclude=True, with_mean=zero), data)
    np.testing.assert_allclose(got, (data**2).mean(axis=(0, 2)), rtol=1e-5)
    with pytest.raises(Exception, match="mean .* must have the rank of data"):
        relay.variance(x, axis=1, with_mean=relay.const(np.zeros(3, "float32")))
