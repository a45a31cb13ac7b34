"""``XrelayBackend``'s API (prepare/run_model/run_node/supports_device, both modes) and the
importer bugs the ONNX suite found, each checked against ONNX's reference evaluator."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from xrelay.frontends import OnnxImportError
from xrelay.testing.onnx_backend import MODES, BackendError, XrelayBackend


def _model(nodes, inputs, outputs, inits=(), opset=19):
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in outputs],
        [numpy_helper.from_array(a, n) for n, a in inits],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _same_as_reference(model, feeds, mode):
    want = ReferenceEvaluator(model).run(None, dict(feeds))
    got = XrelayBackend.run_model(model, [v for _, v in feeds], mode=mode)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-6)
    return got


@pytest.mark.parametrize("mode", MODES)
def test_run_model_positional_and_by_name(mode):
    m = _model([helper.make_node("Add", ["a", "b"], ["y"])], [("a", [2]), ("b", [2])], ["y"])
    a, b = np.array([1, 2], np.float32), np.array([3, 5], np.float32)
    rep = XrelayBackend.prepare(m, "CPU", mode=mode)
    np.testing.assert_array_equal(rep.run([a, b])[0], [4, 7])
    np.testing.assert_array_equal(rep.run({"b": b, "a": a}).y, [4, 7])
    with pytest.raises(BackendError, match="takes 2 inputs, got 1"):
        rep.run([a])
    with pytest.raises(BackendError, match="missing inputs: b"):
        rep.run({"a": a})


def test_devices_and_modes():
    assert XrelayBackend.supports_device("CPU")
    assert not XrelayBackend.supports_device("CUDA")
    m = _model([helper.make_node("Relu", ["x"], ["y"])], [("x", [1])], ["y"])
    with pytest.raises(BackendError, match="device 'CUDA'"):
        XrelayBackend.prepare(m, "CUDA")
    with pytest.raises(BackendError, match="mode must be one of interpreter, built"):
        XrelayBackend.prepare(m, mode="jit")


@pytest.mark.parametrize("mode", MODES)
def test_prepare_takes_a_proto_or_a_path_and_says_so_otherwise(mode, tmp_path):
    m = _model([helper.make_node("Relu", ["x"], ["y"])], [("x", [2])], ["y"])
    path = tmp_path / "m.onnx"
    path.write_bytes(m.SerializeToString())
    x = np.array([-1, 2], np.float32)
    np.testing.assert_array_equal(XrelayBackend.prepare(str(path), mode=mode).run([x])[0], [0, 2])
    with pytest.raises(OnnxImportError, match="expected an onnx.ModelProto or a path, got bytes"):
        XrelayBackend.prepare(b"garbage", mode=mode)
    (tmp_path / "bad.onnx").write_bytes(b"\xff\x00garbage")
    with pytest.raises(OnnxImportError, match="cannot read ONNX model"):
        XrelayBackend.prepare(str(tmp_path / "bad.onnx"), mode=mode)


@pytest.mark.parametrize("mode", MODES)
def test_run_node(mode):
    node = helper.make_node("Mod", ["x", "y"], ["z"], fmod=0)
    x, y = np.array([-7, 7, 5], np.int32), np.array([3, -3, 5], np.int32)
    (z,) = XrelayBackend.run_node(node, [x, y], mode=mode)
    np.testing.assert_array_equal(z, np.mod(x, y))


@pytest.mark.parametrize("mode", MODES)
def test_graph_folding_to_constants_builds(mode):
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Range", ["z", "n", "o"], ["r"])]
    inits = [("z", np.array(0, np.int64)), ("n", np.array(4, np.int64)), ("o", np.array(1, np.int64))]
    m = _model(nodes, [("x", [2, 3])], ["s", "r"], inits)
    s, r = XrelayBackend.run_model(m, [np.zeros((2, 3), np.float32)], mode=mode)
    np.testing.assert_array_equal(s, [2, 3])
    np.testing.assert_array_equal(r, [0, 1, 2, 3])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape, xshape", [([3, 4, 0], (0, 3, 4)), ([0, 3, 4], (0, 3, 4)), ([2, 12], (2, 3, 4))])
def test_reshape_allowzero_keeps_zero_sized_dims(mode, shape, xshape):
    node = helper.make_node("Reshape", ["x", "s"], ["y"], allowzero=1)
    m = _model([node], [("x", list(xshape))], ["y"], [("s", np.array(shape, np.int64))])
    x = np.arange(np.prod(xshape), dtype=np.float32).reshape(xshape)
    (y,) = _same_as_reference(m, [("x", x)], mode)
    assert y.shape == tuple(shape)


def test_reshape_allowzero_zero_is_not_a_copy():
    node = helper.make_node("Reshape", ["x", "s"], ["y"], allowzero=1)
    m = _model([node], [("x", [2, 3, 4])], ["y"], [("s", np.array([2, 0, 4], np.int64))])
    with pytest.raises(OnnxImportError, match=r"cannot reshape \[2, 3, 4\]"):
        XrelayBackend.prepare(m)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op, want", [("ReduceMax", -np.inf), ("ReduceMin", np.inf)])
def test_reduce_extreme_over_empty_axis(mode, op, want):
    node = helper.make_node(op, ["x", "axes"], ["y"], keepdims=1)
    m = _model([node], [("x", [2, 0, 4])], ["y"], [("axes", np.array([1], np.int64))])
    (y,) = _same_as_reference(m, [("x", np.zeros((2, 0, 4), np.float32))], mode)
    assert y.shape == (2, 1, 4) and np.all(y == want)


@pytest.mark.parametrize("mode", MODES)
def test_conv_transpose_output_shape_beyond_full_output(mode):
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], strides=[3, 2], output_shape=[10, 8])
    rng = np.random.default_rng(0)
    w, b = rng.standard_normal((1, 2, 3, 3)).astype(np.float32), np.array([0.5, -1], np.float32)
    m = _model([node], [("x", [1, 1, 3, 3])], ["y"], [("w", w), ("b", b)])
    (y,) = _same_as_reference(m, [("x", rng.standard_normal((1, 1, 3, 3)).astype(np.float32))], mode)
    assert y.shape == (1, 2, 10, 8)


@pytest.mark.parametrize("mode", MODES)
def test_layer_norm_mean_and_inv_std_dev(mode):
    node = helper.make_node("LayerNormalization", ["x", "g"], ["y", "mean", "isd"], axis=1)
    g = np.linspace(0.5, 2, 12, dtype=np.float32).reshape(3, 4)
    m = _model([node], [("x", [2, 3, 4])], ["y", "mean", "isd"], [("g", g)])
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    y, mean, isd = _same_as_reference(m, [("x", x)], mode)
    assert mean.shape == isd.shape == (2, 1, 1)


def test_training_dropout_with_a_ratio_of_one_is_refused():
    """Training Dropout is imported (a mask drawn at import, tests/frontends/test_onnx_random.py);
    a ratio outside ONNX's [0, 1) would divide by zero and is refused by value."""
    node = helper.make_node("Dropout", ["x", "r", "t"], ["y"])
    inits = [("r", np.array(1.0, np.float32)), ("t", np.array(True))]
    m = _model([node], [("x", [3])], ["y"], inits)
    with pytest.raises(OnnxImportError, match=r"ratio must be in \[0, 1\), got 1.0"):
        XrelayBackend.prepare(m)


def _int_model(nodes, inputs, outputs, opset=19):
    """Like ``_model``, with each input's element type given: (name, shape, elem_type)."""
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, s, t in inputs],
        [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in outputs],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("mode", MODES)
def test_run_time_shape_gives_dyn_ops(mode):
    """A Reshape/Tile shape given as a graph input imports as dyn ops; the interpreter runs them,
    the built mode builds once per distinct shape value (dynamic-to-static on the bound value)."""
    from xrelay.dialects.dyn import DynOp

    m = _int_model(
        [helper.make_node("Reshape", ["x", "s"], ["r"]), helper.make_node("Tile", ["r", "t"], ["y"])],
        [("x", [2, 3], TensorProto.FLOAT), ("s", [2], TensorProto.INT64), ("t", [2], TensorProto.INT64)],
        ["y"],
    )
    rep = XrelayBackend.prepare(m, mode=mode)
    assert sorted(op.name for op in rep._imp.module.walk() if isinstance(op, DynOp)) == ["dyn.reshape", "dyn.tile"]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for s, t in (([3, 2], [1, 2]), ([1, -1], [2, 1]), ([3, 2], [1, 2])):
        feeds = {"x": x, "s": np.array(s, np.int64), "t": np.array(t, np.int64)}
        (y,) = rep.run(feeds)
        np.testing.assert_array_equal(y, ReferenceEvaluator(m).run(None, feeds)[0])
    if mode == "built":
        assert len(rep._builds) == 2  # one build per distinct (s, t)


@pytest.mark.parametrize("mode", MODES)
def test_run_time_axes_without_a_dyn_form_are_bound_at_run(mode):
    """ReduceSum's axes as a graph input: Relay has no dynamic reduction, so the backend imports
    again with the axes bound, per distinct value."""
    m = _int_model(
        [helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)],
        [("x", [2, 3, 4], TensorProto.FLOAT), ("axes", [1], TensorProto.INT64)],
        ["y"],
    )
    rep = XrelayBackend.prepare(m, mode=mode)
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    for axes in ([1], [-1], [0]):
        feeds = {"x": x, "axes": np.array(axes, np.int64)}
        (y,) = rep.run(feeds)
        np.testing.assert_allclose(y, ReferenceEvaluator(m).run(None, feeds)[0], rtol=1e-5)


@pytest.mark.parametrize("mode", MODES)
def test_resize_scales_with_a_fractional_size(mode):
    """ONNX maps coordinates with the scale, Relay's resize2d with the size ratio: ONNX's own
    per-axis weights give ONNX's numbers."""
    m = _model(
        [helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear")],
        [("x", [1, 1, 2, 4])],
        ["y"],
        inits=[("scales", np.array([1, 1, 0.6, 0.6], np.float32))],
    )
    x = np.arange(8, dtype=np.float32).reshape(1, 1, 2, 4)
    (y,) = _same_as_reference(m, [("x", x)], mode)
    assert y.shape == (1, 1, 1, 2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("p", [1, 2])
def test_lp_normalization_is_zero_at_a_zero_norm(mode, p):
    m = _model([helper.make_node("LpNormalization", ["x"], ["y"], axis=0, p=p)], [("x", [2, 3])], ["y"])
    # non-negative: ONNX's reference sums x**p without abs for p = 1 (onnxruntime takes |x|)
    x = np.array([[0, 3, 1], [0, 4, 2]], np.float32)
    (y,) = _same_as_reference(m, [("x", x)], mode)
    assert y[0, 0] == 0 and y[1, 0] == 0


@pytest.mark.parametrize("mode", MODES)
def test_pad_mode_wrap(mode):
    m = _model(
        [helper.make_node("Pad", ["x", "pads"], ["y"], mode="wrap")],
        [("x", [2, 3])],
        ["y"],
        inits=[("pads", np.array([1, 4, 0, 2], np.int64))],
    )
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (y,) = _same_as_reference(m, [("x", x)], mode)
    np.testing.assert_array_equal(y, np.pad(x, [(1, 0), (4, 2)], mode="wrap"))


@pytest.mark.parametrize("mode", MODES)
def test_resize_with_axes(mode):
    m = _model(
        [helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="nearest", axes=[3, 2])],
        [("x", [1, 1, 2, 2])],
        ["y"],
        inits=[("sizes", np.array([6, 4], np.int64))],
    )
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    (y,) = _same_as_reference(m, [("x", x)], mode)
    assert y.shape == (1, 1, 4, 6)
