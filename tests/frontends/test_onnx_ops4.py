"""Import of the ops whose result shape depends on values (NonZero, Compress, Unique,
NonMaxSuppression) against onnxruntime: through the interpreter with the values given at run
time (dynamic dimensions), and through the ONNX backend's built mode (the values bound)."""

from __future__ import annotations

import numpy as np
import pytest

from xrelay.frontends import import_onnx
from xrelay.frontends.onnx import OnnxRunTimeValueError
from xrelay.testing.onnx_backend import XrelayBackend
from xrelay.testing.onnx_models import make_model, run_onnxruntime

I64 = np.int64


def _built_matches(op_type, inputs, attrs, out_dtypes, opset=17):
    names = [f"x{i}" for i in range(len(inputs))]
    from onnx import helper

    outs = [f"y{i}" for i in range(len(out_dtypes))]
    node = helper.make_node(op_type, names, outs, **attrs)
    model = make_model([node], {n: (x.shape, x.dtype) for n, x in zip(names, inputs)}, dict(zip(outs, out_dtypes)), {}, opset=opset)
    want = run_onnxruntime(model, dict(zip(names, inputs)))
    got = XrelayBackend.prepare(model, mode="built").run(inputs)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_nonzero(h, rng):
    x = (rng.standard_normal((3, 4)) > 0.3).astype(np.float32)
    imp = h.check_node("NonZero", [x], out_dtypes=[I64])
    assert "relay.argwhere" in h.relay_op_names(imp.module)
    _built_matches("NonZero", [x], {}, [I64])


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_compress(h, rng, axis):
    x = h.randn(rng, 3, 4)
    n = 4 if axis in (1, -1) else 3 if axis == 0 else 10
    cond = rng.standard_normal(n) > 0
    attrs = {} if axis is None else {"axis": axis}
    h.check_node("Compress", [x, cond], attrs)
    h.check_node("Compress", [x, cond], attrs, consts=[1])  # known condition: a take of constants
    _built_matches("Compress", [x, cond], attrs, [np.float32])


@pytest.mark.parametrize("is_sorted", [0, 1])
def test_unique(h, rng, is_sorted):
    x = rng.integers(0, 5, (3, 4)).astype(np.float32)
    out_dtypes = [np.float32, I64, I64, I64]
    imp = h.check_node("Unique", [x], {"sorted": is_sorted}, n_out=4, out_dtypes=out_dtypes)
    assert "relay.unique" in h.relay_op_names(imp.module)
    _built_matches("Unique", [x], {"sorted": is_sorted}, out_dtypes)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_unique_axis_is_evaluated_at_import(h, rng, axis):
    x = rng.integers(0, 2, (4, 3)).astype(np.float32)
    out_dtypes = [np.float32, I64, I64, I64]
    for is_sorted in (0, 1):
        h.check_node("Unique", [x], {"sorted": is_sorted, "axis": axis}, n_out=4, out_dtypes=out_dtypes, consts=[0])
    _built_matches("Unique", [x], {"axis": axis}, out_dtypes)  # the backend binds the input


def test_unique_axis_at_run_time_names_the_input():
    from onnx import helper

    node = helper.make_node("Unique", ["x"], ["y"], axis=0)
    model = make_model([node], {"x": ((4, 3), np.float32)}, {"y": np.float32}, {})
    with pytest.raises(OnnxRunTimeValueError, match="with 'axis' its input must be known at import") as e:
        import_onnx(model)
    assert e.value.inputs == ("x",)


@pytest.mark.parametrize("center", [0, 1])
@pytest.mark.parametrize("max_out, iou, score", [(3, 0.3, 0.2), (10, 0.6, None), (0, 0.5, 0.0), (-1, 0.5, 0.0)])
def test_non_max_suppression(h, rng, center, max_out, iou, score):
    boxes = rng.uniform(0, 1, (2, 12, 4)).astype(np.float32)
    if center:
        boxes[..., 2:] *= 0.5
    scores = rng.uniform(0, 1, (2, 3, 12)).astype(np.float32)
    ins = [boxes, scores, np.array([max_out], I64), np.array([iou], np.float32)]
    if score is not None:
        ins.append(np.array([score], np.float32))
    imp = h.check_node("NonMaxSuppression", ins, {"center_point_box": center}, out_dtypes=[I64], consts=[2, 3, 4])
    assert "relay.vision.all_class_non_max_suppression" in h.relay_op_names(imp.module)
    _built_matches("NonMaxSuppression", ins, {"center_point_box": center}, [I64])
