"""Import of the recurrent layers (RNN, GRU, LSTM: directions, layouts, sequence_lens, initial
states, peepholes, clip, linear_before_reset, other activations) and of CumSum with a run-time
axis, each against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

F32 = np.float32


def _r(rng, *shape):
    return np.asarray(rng.standard_normal(shape) * 0.5, dtype=F32)


def _inputs(rng, kind, seq, batch, width, hidden, dirs, *, bias, lens, init, peep=False, layout=0):
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[kind]
    x = _r(rng, batch, seq, width) if layout else _r(rng, seq, batch, width)
    ins = [x, _r(rng, dirs, gates * hidden, width), _r(rng, dirs, gates * hidden, hidden)]
    ins.append(_r(rng, dirs, 2 * gates * hidden) if bias else None)
    ins.append(np.array(lens, np.int32) if lens is not None else None)
    state = (batch, dirs, hidden) if layout else (dirs, batch, hidden)
    ins.append(_r(rng, *state) if init else None)
    if kind == "LSTM":
        ins.append(_r(rng, *state) if init else None)
        ins.append(_r(rng, dirs, 3 * hidden) if peep else None)
    while ins[-1] is None:
        ins.pop()
    return ins


@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize(
    "direction, lens, layout",
    # onnxruntime has no batchwise (layout=1) kernels: ONNX's node tests cover that layout
    [("forward", [3, 1, 2], 0), ("reverse", [2, 3, 1], 0), ("bidirectional", [1, 3, 2], 0), ("bidirectional", None, 0)],
)
def test_recurrent_vs_onnx(h, rng, kind, direction, lens, layout):
    dirs = 2 if direction == "bidirectional" else 1
    ins = _inputs(rng, kind, 3, 3, 4, 5, dirs, bias=True, lens=lens, init=True, peep=kind == "LSTM", layout=layout)
    attrs = {"hidden_size": 5, "direction": direction, "layout": layout}
    n_out = 3 if kind == "LSTM" else 2
    imp = h.check_node(kind, ins, attrs, opset=14, n_out=n_out, rtol=1e-5, atol=1e-5)
    ops = h.relay_op_names(imp.module)
    assert "relay.nn.dense" in ops and "relay.stack" in ops  # unrolled, as Relay's frontend
    # a step's products with the hidden state in one dense (a GRU's update and reset gates
    # together, its hidden gate's product of the reset state apart), after every step's input
    # projection in one
    per_step = 2 if kind == "GRU" else 1
    assert ops.count("relay.nn.dense") == dirs * (1 + 3 * per_step)
    assert ("relay.where" in ops) == (lens is not None)  # sequence_lens masks the steps


def test_gru_linear_before_reset_and_clip(h, rng):
    ins = _inputs(rng, "GRU", 4, 2, 3, 4, 1, bias=True, lens=None, init=False)
    imp = h.check_node("GRU", ins, {"hidden_size": 4, "linear_before_reset": 1, "clip": 0.7}, n_out=2)
    # linear_before_reset (torch's GRU): a step's three gate products are one dense
    assert h.relay_op_names(imp.module).count("relay.nn.dense") == 1 + 4


@pytest.mark.parametrize(
    "activations, alpha, beta",
    [(["Relu"], [], []), (["LeakyRelu"], [0.2], []), (["HardSigmoid"], [0.3], [0.4]), (["Softsign"], [], [])],
)
def test_rnn_activations(h, rng, activations, alpha, beta):
    ins = _inputs(rng, "RNN", 3, 2, 3, 4, 1, bias=False, lens=None, init=False)
    attrs = {"hidden_size": 4, "activations": activations}
    if alpha:
        attrs["activation_alpha"] = alpha
    if beta:
        attrs["activation_beta"] = beta
    h.check_node("RNN", ins, attrs, n_out=2)


def test_lstm_input_forget_is_refused(h, rng):
    from xrelay.frontends.onnx import OnnxImportError

    ins = _inputs(rng, "LSTM", 2, 1, 3, 2, 1, bias=False, lens=None, init=False)
    with pytest.raises(OnnxImportError, match="input_forget=1"):
        h.check_node("LSTM", ins, {"hidden_size": 2, "input_forget": 1}, n_out=1)


@pytest.mark.parametrize("axis", [0, 1, -1, -2])
@pytest.mark.parametrize("reverse", [0, 1])
def test_cumsum_run_time_axis(h, rng, axis, reverse):
    x = _r(rng, 3, 4)
    imp = h.check_node("CumSum", [x, np.array(axis, np.int64)], {"reverse": reverse, "exclusive": 1}, opset=14)
    assert h.relay_op_names(imp.module).count("relay.cumsum") == 2  # one scan per axis, then a where


@pytest.mark.parametrize(
    "attrs, shape, length",
    [
        ({"axis": 1}, (2, 6, 3, 1), None),
        ({"axis": 2, "onesided": 1}, (1, 3, 8, 1), None),
        ({"axis": 1, "inverse": 1}, (1, 5, 2, 2), None),
        ({"axis": 1}, (1, 6, 2, 2), 4),
        ({"axis": 1}, (1, 4, 2, 1), 7),
    ],
)
def test_dft_vs_onnx(h, rng, attrs, shape, length):
    ins = [_r(rng, *shape)]
    if length is not None:
        ins.append(np.array(length, np.int64))
    imp = h.check_node("DFT", ins, attrs, opset=17, consts=(1,), rtol=1e-4, atol=1e-5)
    assert "relay.dft" in h.relay_op_names(imp.module)


@pytest.mark.parametrize(
    "attrs, scales, sizes",
    [
        ({"axes": [3, 2]}, np.array([2.0, 1.5], np.float32), None),
        ({"axes": [2, 3], "mode": "linear"}, None, np.array([5, 7], np.int64)),
        ({"keep_aspect_ratio_policy": "not_larger"}, None, np.array([1, 1, 5, 9], np.int64)),
        ({"axes": [2, 3], "keep_aspect_ratio_policy": "not_smaller"}, None, np.array([3, 9], np.int64)),
    ],
)
def test_resize_axes_and_aspect_ratio_vs_onnx(h, rng, attrs, scales, sizes):
    x = _r(rng, 1, 1, 4, 6)
    consts = (1, 2, 3)
    imp = h.check_node("Resize", [x, None, scales, sizes], attrs, opset=18, consts=consts)
    assert "relay.image.resize2d" in h.relay_op_names(imp.module)


@pytest.mark.parametrize(
    "shape, attrs, k",
    [((3, 5), {"axis": 1}, 2), ((4, 3), {"axis": 0, "largest": 0}, 3), ((2, 6), {}, 6)],
)
def test_topk_constant_k_vs_onnx(h, rng, shape, attrs, k):
    x = np.round(_r(rng, *shape), 1)  # ties: equal values keep index order
    imp = h.check_node("TopK", [x, np.array([k], np.int64)], attrs, consts=(1,), n_out=2, out_dtypes=[F32, np.int64])
    assert "relay.topk" in h.relay_op_names(imp.module)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot_constant_depth_vs_onnx(h, axis):
    indices = np.array([[0, -1, 4], [2, 7, -5]], np.int64)  # negative wrap; 7 and -5 out of range
    values = np.array([2.0, 5.0], F32)
    ins = [indices, np.array(4.0, F32), values]
    imp = h.check_node("OneHot", ins, {"axis": axis}, opset=11, consts=(1,))
    assert "relay.one_hot" in h.relay_op_names(imp.module)


# (an output_shape initializer defeats ONNX's shape inference, which the model helper needs)
@pytest.mark.parametrize("xshape, output_shape", [((2, 3, 4, 6), None), ((1, 2, 6, 8), None)])
def test_max_unpool_vs_onnx(h, rng, xshape, output_shape):
    from onnx import helper

    from xrelay.testing.onnx_models import run_onnxruntime

    x = _r(rng, *xshape)
    pool = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2], strides=[2, 2])
    g = helper.make_graph(
        [pool], "p", [helper.make_tensor_value_info("x", 1, x.shape)],
        [helper.make_tensor_value_info("y", 1, None), helper.make_tensor_value_info("i", 7, None)],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    y, i = run_onnxruntime(model, {"x": x})
    ins = [y, i] + ([] if output_shape is None else [np.array(output_shape, np.int64)])
    imp = h.check_node("MaxUnpool", ins, {"kernel_shape": [2, 2], "strides": [2, 2]}, opset=11, consts=(2,))
    assert "relay.scatter_elements" in h.relay_op_names(imp.module)


def test_max_unpool_output_shape_pads_the_unpooled_tensor_as_onnxs_reference():
    """With an ``output_shape`` larger than MaxPool's input, the indices still address that
    input's shape and the result is padded with zeros at the end (ONNX's reference and its
    test_maxunpool_export_with_output_shape; onnxruntime instead reads the indices as flat
    positions in ``output_shape``)."""
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    from xrelay.frontends.onnx import import_onnx
    from xrelay.runtime.interpreter import run

    x = np.array([[[[5.0, 6.0], [7.0, 8.0]]]], np.float32)
    idx = np.array([[[[5, 7], [13, 15]]]], np.int64)
    shape = np.array([1, 1, 5, 6], np.int64)
    node = helper.make_node("MaxUnpool", ["x", "i", "s"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
    g = helper.make_graph(
        [node], "u",
        [helper.make_tensor_value_info("x", 1, x.shape), helper.make_tensor_value_info("i", 7, idx.shape)],
        [helper.make_tensor_value_info("y", 1, None)],
        initializer=[helper.make_tensor("s", 7, [4], shape.tolist())],
    )  # fmt: skip
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])
    want = ReferenceEvaluator(model).run(None, {"x": x, "i": idx})[0]
    imp = import_onnx(model, freeze_params=True)
    got = run(imp.module, {imp.input_names["x"]: x, imp.input_names["i"]: idx})[0]
    assert got.shape == (1, 1, 5, 6) and want[0, 0, 1, 1] == 5.0 and want[0, 0, 3, 3] == 8.0
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "attrs", [{"kernel_shape": [2, 2, 2], "p": 3}, {"kernel_shape": [3, 2, 2], "strides": [2, 1, 2], "pads": [1, 0, 1, 1, 0, 0]}]
)
def test_lp_pool_3d_vs_onnx(h, rng, attrs):
    imp = h.check_node("LpPool", [_r(rng, 1, 2, 5, 4, 6)], attrs, opset=18, rtol=1e-4, atol=1e-5)
    assert "relay.nn.avg_pool3d" in h.relay_op_names(imp.module)
