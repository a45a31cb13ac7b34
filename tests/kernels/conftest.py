"""Shared helpers for the kernel tests: a one-node ONNX model runner and tolerances.

Tolerances (``tol(dtype, accum=False)``), relative and absolute alike:

* float16: 1e-2 elementwise, 2e-2 for accumulating ops (conv, dense, pools, reductions);
* float32: 1e-5 elementwise, 1e-4 for accumulating ops;
* float64: 1e-10 elementwise, 1e-7 for accumulating ops (onnxruntime's float64 normalisations
  lose about 1e-9 relative when a variance is tiny, e.g. layer_norm over two elements);
* integers and bool: exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

import numpy as np
import onnxruntime as ort
import pytest
from onnx import helper

OPSET = 18

_SO = ort.SessionOptions()
_SO.intra_op_num_threads = 1
_SO.inter_op_num_threads = 1
_SO.log_severity_level = 3


def run_onnx(
    op_type: str,
    inputs: Sequence[np.ndarray | None],
    attrs: dict | None = None,
    out_dtypes: Sequence[np.dtype | str] | None = None,
    opset: int = OPSET,
) -> list[np.ndarray]:
    """Run ``op_type`` as the only node of an ONNX model in onnxruntime (CPU)."""
    names, vis, feeds = [], [], {}
    for i, x in enumerate(inputs):
        if x is None:
            names.append("")
            continue
        name = f"in{i}"
        names.append(name)
        x = np.asarray(x)
        elem = helper.np_dtype_to_tensor_dtype(x.dtype)
        vis.append(helper.make_tensor_value_info(name, elem, list(x.shape)))
        feeds[name] = x
    if out_dtypes is None:
        out_dtypes = [next(np.asarray(x).dtype for x in inputs if x is not None)]
    outs = [f"out{i}" for i in range(len(out_dtypes))]
    out_vis = [
        helper.make_tensor_value_info(o, helper.np_dtype_to_tensor_dtype(np.dtype(d)), None)
        for o, d in zip(outs, out_dtypes)
    ]
    node = helper.make_node(op_type, names, outs, **(attrs or {}))
    graph = helper.make_graph([node], "single", vis, out_vis)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(), _SO, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def tol(dtype, accum: bool = False) -> dict:
    """``np.testing.assert_allclose`` keyword tolerances for ``dtype``."""
    dt = np.dtype(dtype)
    if dt == np.float16:
        t = 2e-2 if accum else 1e-2
    elif dt == np.float32:
        t = 1e-4 if accum else 1e-5
    elif dt == np.float64:
        t = 1e-7 if accum else 1e-10
    else:
        return {"rtol": 0, "atol": 0}
    return {"rtol": t, "atol": t}


def assert_same(actual: np.ndarray, expected: np.ndarray, accum: bool = False) -> None:
    """Same shape and dtype, and values within the dtype's tolerance (exact for ints/bool)."""
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    if actual.dtype.kind in "iub":
        np.testing.assert_array_equal(actual, expected)
    else:
        np.testing.assert_allclose(
            actual.astype(np.float64),
            expected.astype(np.float64),
            equal_nan=True,
            **tol(actual.dtype, accum),
        )


def rand(rng: np.random.Generator, shape, dtype, lo=-4.0, hi=4.0) -> np.ndarray:
    """Random data of ``dtype``: uniform floats or integers over the dtype's full range."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return rng.uniform(lo, hi, size=shape).astype(dt)
    if dt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dt)


def run_op(name: str, *arrays: np.ndarray, **given_attrs) -> np.ndarray:
    """The kernel of relay op ``name`` on ``arrays``, with the attributes the dialect completes
    from ``given_attrs`` (its defaults and normal forms); the result must have the shape the
    op's type inference gives."""
    from xrelay.dialects.relay import RELAY_OPS, tensor_type
    from xrelay.kernels import KERNELS

    op = RELAY_OPS[name]
    types = [tensor_type(a.shape, a.dtype.name) for a in arrays]
    attrs = op.complete_attrs(given_attrs, types)
    (want,) = op.infer_types(types, attrs)
    res = KERNELS[name](*arrays, **attrs)
    assert res.shape == tuple(want.get_shape()), (name, res.shape, want)
    return res


@pytest.fixture(scope="session")
def h() -> SimpleNamespace:
    """The helpers above, as one session fixture (safe to use inside hypothesis tests)."""
    return SimpleNamespace(run_onnx=run_onnx, tol=tol, assert_same=assert_same, rand=rand)
