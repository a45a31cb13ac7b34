"""The constant evaluator shared by fold-constant and the ONNX importer."""

from __future__ import annotations

import numpy as np

from xrelay.dialects.relay import RELAY_OPS, tensor_type
from xrelay.frontends.onnx import importer as onnx_importer
from xrelay.kernels import evaluate
from xrelay.transforms import fold_constant


def test_results_take_the_result_types_dtype():
    add = RELAY_OPS["add"]
    a = np.array([1.5, 2.5], "float32")
    (res,) = evaluate(add, [a, a], add.default_attrs(), [tensor_type((2,), "float64")])
    assert res.dtype == np.float64
    assert res.tolist() == [3.0, 5.0]


def test_multi_result_op():
    split = RELAY_OPS["split"]
    t = tensor_type((2,), "int32")
    res = evaluate(split, [np.arange(4, dtype="int32")], {"indices_or_sections": 2, "axis": 0}, [t, t])
    assert [r.tolist() for r in res] == [[0, 1], [2, 3]]


def test_none_when_the_kernel_raises_or_disagrees_with_the_types():
    mean = RELAY_OPS["mean"]
    attrs = mean.default_attrs()
    # the kernel refuses bool: not evaluated, no exception
    assert evaluate(mean, [np.ones(3, bool)], attrs, [tensor_type((), "bool")]) is None
    # a result type the kernel's result does not have
    assert evaluate(mean, [np.ones(3, "float32")], attrs, [tensor_type((3,), "float32")]) is None
    # a wrong number of result types
    assert evaluate(mean, [np.ones(3, "float32")], attrs, []) is None


def test_fold_constant_and_the_onnx_importer_use_it():
    assert fold_constant.evaluate is evaluate
    assert onnx_importer.evaluate is evaluate
