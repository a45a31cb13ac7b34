"""Hostile ONNX models (issue 29): tensors with negative dims or data that does not match
their dims, strings that are not UTF-8, two nodes writing one value, two inputs of one name,
external data outside the model's folder through ``from_onnx(ModelProto)``. Each is one
``OnnxImportError`` naming the tensor, node or input (and for ``relay-import`` one line and exit
1), never a raw exception or a silently accepted graph."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from xrelay.frontends import OnnxImportError, from_onnx
from xrelay.tools import relay_import


def _model(nodes, inputs, outputs, initializers=(), check=False):
    graph = helper.make_graph(list(nodes), "g", list(inputs), list(outputs), list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    if check:
        onnx.checker.check_model(model)
    return model


X = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
Y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)


def _tensor(name: str, dims, values) -> onnx.TensorProto:
    return helper.make_tensor(name, TensorProto.FLOAT, dims, values)


def _cases():
    bad_dims = _tensor("w", [2, 3], [1.0] * 6)
    bad_dims.dims[0] = -2  # numpy read -2 * 3 of 6 values as a (-1, 3) reshape
    few = _tensor("w", [2, 3], [1.0] * 6)
    del few.float_data[3:]
    raw = _tensor("w", [2, 3], [1.0] * 6)
    raw.raw_data = b"\x00" * 10  # 2.5 floats
    raw.ClearField("float_data")
    add = helper.make_node("Add", ["x", "w"], ["y"], name="add")
    return [
        ("initializer with a negative dim",
         _model([add], [X], [Y], [bad_dims]),
         "initializer 'w': negative dim -2 in dims [-2, 3]"),
        ("Constant with a negative dim",
         _model([helper.make_node("Constant", [], ["w"], name="k", value=bad_dims), add], [X], [Y]),
         "Constant node 'k': its value: negative dim -2 in dims [-2, 3]"),
        ("Constant whose data does not match its dims",
         _model([helper.make_node("Constant", [], ["w"], name="k", value=few), add], [X], [Y]),
         "Constant node 'k': its value: its data does not match its dims [2, 3]"),
        ("initializer whose raw data is not whole elements",
         _model([add], [X], [Y], [raw]),
         "initializer 'w': its data does not match its dims [2, 3]"),
        ("a string attribute that is not UTF-8",
         _model([helper.make_node("Resize", ["x", "", "s"], ["y"], name="up", mode=b"\xffnearest")],
                [X], [Y], [numpy_helper.from_array(np.array([1, 1], np.float32), "s")]),
         "Resize node 'up': attribute 'mode' is not UTF-8 text"),
        ("two nodes writing the same output",
         _model([helper.make_node("Relu", ["x"], ["y"], name="a"),
                 helper.make_node("Neg", ["x"], ["y"], name="b")], [X], [Y]),
         "Neg node 'b': writes 'y', which Relu node 'a' already wrote (ONNX graphs assign each "
         "value once)"),
        ("a node writing a graph input",
         _model([helper.make_node("Relu", ["x"], ["x"], name="a"),
                 helper.make_node("Neg", ["x"], ["y"], name="b")], [X], [Y]),
         "Relu node 'a': writes 'x', which is a graph input"),
        ("two inputs of one name",
         _model([helper.make_node("Relu", ["x"], ["y"], name="a")],
                [X, helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])], [Y]),
         "the graph has two inputs named 'x'"),
    ]  # fmt: skip


CASES = _cases()


@pytest.mark.parametrize(("what", "model", "message"), CASES, ids=[c[0] for c in CASES])
def test_hostile_models_are_one_import_error(what, model, message):
    with pytest.raises(OnnxImportError) as e:
        from_onnx(model)
    assert message in str(e.value), str(e.value)


@pytest.mark.parametrize(("what", "model", "message"), CASES, ids=[c[0] for c in CASES])
def test_relay_import_says_so_in_one_line(tmp_path, capsys, what, model, message):
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    assert relay_import.main([str(path), "-o", str(tmp_path / "m.mlir"), "--freeze-params"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err and err.count("\n") == 1, err
    assert message in err
    assert not (tmp_path / "m.mlir").exists()


def test_external_data_outside_the_models_folder_through_a_model_proto(tmp_path):
    w = numpy_helper.from_array(np.ones((2, 3), np.float32), "w")
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "../../../etc/passwd"), ("offset", "0"), ("length", "24")):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    model = _model([helper.make_node("Add", ["x", "w"], ["y"])], [X], [Y], [w])
    with pytest.raises(OnnxImportError, match=r"initializer 'w': its external data .*etc/passwd"):
        from_onnx(model)


@pytest.mark.parametrize("inputs", [["x", ""], ["x"]])
def test_a_required_input_that_is_empty_or_missing(inputs):
    shape = numpy_helper.from_array(np.array([3, 2], np.int64), "s")
    model = _model([helper.make_node("Reshape", inputs, ["y"], name="r")], [X], [Y], [shape])
    with pytest.raises(OnnxImportError, match=r"Reshape node 'r': input 1 \(shape\) is required, but "
                       r"(empty|not given)"):  # fmt: skip
        from_onnx(model)
