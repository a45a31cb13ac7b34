"""Import of ONNX's sequences and optionals (lists of tensors held by the importer) against
onnxruntime, through the ONNX backend in both modes: sequence outputs come back as lists,
sequence/optional inputs are expanded into tensors by the backend."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from xrelay.frontends import import_onnx
from xrelay.frontends.onnx import OnnxImportError
from xrelay.testing.onnx_backend import XrelayBackend

F = TensorProto.FLOAT


def _model(nodes, inputs, outputs, opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _ort(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _same(got, want):
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)


def _check(model, feeds):
    want = _ort(model, feeds)
    for mode in ("interpreter", "built"):
        got = XrelayBackend.prepare(model, mode=mode).run(feeds)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)


def _tensor(name, shape, t=F):
    return helper.make_tensor_value_info(name, t, shape)


def _seq(name, shape, t=F):
    return helper.make_tensor_sequence_value_info(name, t, shape)


def test_split_insert_erase_at_concat(rng):
    consts = [
        helper.make_node("Constant", [], ["p"], value=helper.make_tensor("p", TensorProto.INT64, [], [1])),
        helper.make_node("Constant", [], ["q"], value=helper.make_tensor("q", TensorProto.INT64, [], [-1])),
        helper.make_node("Constant", [], ["sp"], value=helper.make_tensor("sp", TensorProto.INT64, [3], [1, 2, 1])),
    ]
    nodes = consts + [
        helper.make_node("SplitToSequence", ["x", "sp"], ["s"], axis=1),
        helper.make_node("SequenceInsert", ["s", "y", "p"], ["s2"]),
        helper.make_node("SequenceErase", ["s2", "q"], ["s3"]),
        helper.make_node("SequenceAt", ["s3", "p"], ["at"]),
        helper.make_node("SequenceLength", ["s3"], ["n"]),
        helper.make_node("ConcatFromSequence", ["s3"], ["cat"], axis=1),
    ]
    model = _model(
        nodes,
        [_tensor("x", [2, 4]), _tensor("y", [2, 3])],
        [_seq("s3", None), _tensor("at", None), _tensor("n", [], TensorProto.INT64), _tensor("cat", None)],
    )
    feeds = {"x": rng.standard_normal((2, 4)).astype(np.float32), "y": rng.standard_normal((2, 3)).astype(np.float32)}
    _check(model, feeds)


@pytest.mark.parametrize("keepdims, new_axis", [(0, 1), (1, 0)])
def test_split_to_pieces_and_stack(rng, keepdims, new_axis):
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["s"], axis=0, keepdims=keepdims),
        helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=-1, new_axis=new_axis),
    ]
    model = _model(nodes, [_tensor("x", [3, 2])], [_tensor("y", None)])
    _check(model, {"x": rng.standard_normal((3, 2)).astype(np.float32)})


def test_sequence_input_and_optional(rng):
    nodes = [
        helper.make_node("SequenceLength", ["s"], ["n"]),
        helper.make_node("Optional", ["x"], ["o"]),
        helper.make_node("OptionalHasElement", ["o"], ["has"]),
        helper.make_node("OptionalGetElement", ["o"], ["got"]),
        helper.make_node("ConcatFromSequence", ["s"], ["cat"], axis=0),
    ]
    model = _model(
        nodes,
        [_seq("s", [None, 2]), _tensor("x", [3])],
        [_tensor("n", [], TensorProto.INT64), _tensor("has", [], TensorProto.BOOL), _tensor("got", [3]), _tensor("cat", None)],
        opset=18,
    )
    x = rng.standard_normal(3).astype(np.float32)
    for k in (1, 3):
        s = [rng.standard_normal((i + 1, 2)).astype(np.float32) for i in range(k)]
        _check(model, {"s": s, "x": x})


def test_sequence_index_at_run_time_is_bound(rng):
    nodes = [helper.make_node("SequenceConstruct", ["a", "b"], ["s"]), helper.make_node("SequenceAt", ["s", "i"], ["y"])]
    model = _model(nodes, [_tensor("a", [2]), _tensor("b", [2]), _tensor("i", [], TensorProto.INT64)], [_tensor("y", [2])])
    feeds = {"a": np.ones(2, np.float32), "b": np.zeros(2, np.float32)}
    for i in (0, 1, -1):
        _check(model, {**feeds, "i": np.array(i, np.int64)})


def test_sequence_given_to_a_tensor_op():
    nodes = [helper.make_node("SequenceConstruct", ["a"], ["s"]), helper.make_node("Relu", ["s"], ["y"])]
    model = _model(nodes, [_tensor("a", [2])], [_tensor("y", [2])])
    with pytest.raises(OnnxImportError, match="Relu node 'y': an input is a sequence or optional"):
        import_onnx(model)


def test_empty_sequence_output_structure():
    nodes = [helper.make_node("SequenceEmpty", [], ["s"]), helper.make_node("Relu", ["a"], ["y"])]
    model = _model(nodes, [_tensor("a", [2])], [_seq("s", None), _tensor("y", [2])])
    imp = import_onnx(model)
    assert imp.output_structure == [0, None]
    a = np.array([-1.0, 2.0], np.float32)
    got = XrelayBackend.prepare(model).run([a])
    assert got[0] == [] and got[1].tolist() == [0.0, 2.0]
