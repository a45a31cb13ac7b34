"""TVM v0.19's tests of unique (test_op_level3.py::test_unique) and
all_class_non_max_suppression (test_op_level5.py) through xrelay's Python API and ``xrelay.run``
(the interpreter), with TVM's numpy references and expected rows; argwhere against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay import relay


def _run(params, out, *inputs):
    mod = xrelay.IRModule.from_expr(relay.Function(params, out))
    return xrelay.run(mod, {p.name_hint: v for p, v in zip(params, inputs)})


def _numpy_unique(data, is_sorted):
    uniq, index, inverse, counts = np.unique(data, return_index=True, return_inverse=True, return_counts=True)
    if not is_sorted:
        order = np.argsort(index)
        reverse_order = np.argsort(order)
        uniq, inverse, counts, index = uniq[order], reverse_order[inverse], counts[order], np.sort(index)
    return uniq, index, inverse, len(uniq), counts


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("is_dyn", [False, True])
@pytest.mark.parametrize("is_sorted", [False, True])
@pytest.mark.parametrize("return_counts", [False, True])
def test_unique(dtype, is_dyn, is_sorted, return_counts):
    x = relay.var("x", relay.TensorType([relay.Any() if is_dyn else 10], dtype))
    outs = relay.unique(x, is_sorted, return_counts)
    x_data = np.random.default_rng(0).integers(50, size=10).astype(dtype)
    got = _run([x], outs.astuple(), x_data)
    assert len(got) == (5 if return_counts else 4)
    uniq, index, inverse, n, counts = _numpy_unique(x_data, is_sorted)
    assert got[3].tolist() == [n]
    np.testing.assert_array_equal(got[0][:n], uniq)
    np.testing.assert_array_equal(got[1][:n], index)
    np.testing.assert_array_equal(got[2], inverse)
    if return_counts:
        np.testing.assert_array_equal(got[4][:n], counts)
    assert got[1].dtype == np.int32 and got[0].dtype == np.dtype(dtype)


def _nms(boxes_np, scores_np, max_out, iou, score, expected):
    boxes = relay.var("boxes", relay.TensorType(boxes_np.shape, "float32"))
    scores = relay.var("scores", relay.TensorType(scores_np.shape, "float32"))
    out = relay.vision.all_class_non_max_suppression(boxes, scores, max_out, iou, score)
    selected, count = _run([boxes, scores], out.astuple(), boxes_np, scores_np)
    assert selected.shape == (boxes_np.shape[0] * scores_np.shape[1] * boxes_np.shape[1], 3)
    np.testing.assert_equal(selected[: count[0]], expected)


def test_all_class_non_max_suppression():
    boxes = np.array(
        [
            [[0.0, 0.0, 0.3, 0.3], [0.0, 0.0, 0.4, 0.4], [0.0, 0.0, 0.5, 0.5], [0.5, 0.5, 0.9, 0.9], [0.5, 0.5, 1.0, 1.0]],
            [[0.0, 0.0, 0.3, 0.3], [0.0, 0.0, 0.4, 0.4], [0.5, 0.5, 0.95, 0.95], [0.5, 0.5, 0.96, 0.96], [0.5, 0.5, 1.0, 1.0]],
        ]
    ).astype("float32")
    scores = np.array(
        [[[0.1, 0.2, 0.6, 0.3, 0.9], [0.1, 0.2, 0.6, 0.3, 0.9]], [[0.1, 0.2, 0.6, 0.3, 0.9], [0.1, 0.2, 0.6, 0.3, 0.9]]]
    ).astype("float32")
    expected = np.array([[0, 0, 4], [0, 0, 2], [0, 1, 4], [0, 1, 2], [1, 0, 4], [1, 0, 1], [1, 1, 4], [1, 1, 1]])
    _nms(boxes, scores, 2, 0.8, 0.0, expected)

    boxes = np.array(
        [[[0.0, 0.0, 1.0, 1.0], [0.0, 0.1, 1.0, 1.1], [0.0, -0.1, 1.0, 0.9], [0.0, 10.0, 1.0, 11.0], [0.0, 10.1, 1.0, 11.1], [0.0, 100.0, 1.0, 101.0]]]
    ).astype(np.float32)
    scores = np.array([[[0.9, 0.75, 0.6, 0.95, 0.5, 0.3]]]).astype(np.float32)
    _nms(boxes, scores, 3, 0.5, 0.4, np.array([[0, 0, 3], [0, 0, 0]]))


def test_all_class_non_max_suppression_types():
    boxes = relay.var("boxes", relay.TensorType((2, 5, 4), "float32"))
    scores = relay.var("scores", relay.TensorType((2, 3, 5), "float32"))
    out = relay.vision.all_class_non_max_suppression(boxes, scores, 2, 0.5, 0.1)
    mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function([boxes, scores], out.astuple())))
    assert mod["main"].ret_type == relay.TupleType([relay.TensorType((30, 3), "int64"), relay.TensorType((1,), "int64")])
    with pytest.raises(relay.RelayTypeError, match=r"expects \[batch, boxes, 4\] boxes"):
        relay.vision.all_class_non_max_suppression(scores, scores, 2, 0.5, 0.1).astuple().checked_type  # noqa: B018


def test_argwhere():
    c = relay.var("c", relay.TensorType((3, 4), "float32"))
    y = relay.argwhere(c)
    assert y.checked_type == relay.TensorType((relay.Any(), 2), "int32")
    data = np.array([[0, 1, 0, 2], [0, 0, 0, 0], [3, 0, 0, 4]], np.float32)
    (got,) = _run([c], y, data)
    np.testing.assert_array_equal(got, np.argwhere(data))
    assert got.dtype == np.int32
    (none,) = _run([c], y, np.zeros((3, 4), np.float32))
    assert none.shape == (0, 2)
