"""Issue 17, item 4: zero, negative or non-integer strides/dilations/groups are refused with a
message naming the op (ONNX: the node), instead of a ZeroDivisionError/TypeError in a kernel."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from xrelay import relay
from xrelay.tools.relay_import import main as relay_import


@pytest.mark.parametrize(
    "attrs, message",
    [
        (dict(strides=(0, 1)), "strides must be positive integers, got [0, 1]"),
        (dict(strides=1.5), "strides must be positive integers, got 1.5"),
        (dict(dilation=(1, 0)), "dilation must be positive integers, got [1, 0]"),
        (dict(groups=0), "groups must be positive integers, got 0"),
        (dict(groups=1.5), "groups must be positive integers, got 1.5"),
    ],
)
def test_python_api_conv2d(attrs, message):
    x, w = relay.var("x", shape=(1, 2, 8, 8)), relay.var("w", shape=(2, 2, 3, 3))
    with pytest.raises(Exception, match=r"relay\.nn\.conv2d: " + message.replace("[", r"\[").replace("]", r"\]")):
        relay.nn.conv2d(x, w, **attrs)


def test_python_api_pools():
    x = relay.var("x", shape=(1, 2, 8, 8))
    with pytest.raises(Exception, match="relay.nn.max_pool2d: strides must be positive integers"):
        relay.nn.max_pool2d(x, pool_size=(2, 2), strides=(0, 2))
    with pytest.raises(Exception, match="relay.nn.avg_pool2d: dilation must be positive integers"):
        relay.nn.avg_pool2d(x, pool_size=(2, 2), dilation=(2, 0))


def _conv_model(path, op="Conv", **attrs):
    inputs = ["x", "w"] if op == "Conv" else ["x"]
    node = helper.make_node(op, inputs, ["y"], name="n0", **attrs)
    w = numpy_helper.from_array(np.ones((2, 2, 3, 3), np.float32), "w")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w] if op == "Conv" else [],
    )  # fmt: skip
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


@pytest.mark.parametrize(
    "op, attrs, message",
    [
        ("Conv", dict(strides=[0, 1], auto_pad="SAME_UPPER"), "strides must be positive integers, got [0, 1]"),
        ("Conv", dict(strides=[2.0, 1.0]), "strides must be positive integers, got [2.0, 1.0]"),
        ("Conv", dict(dilations=[0, 1]), "dilations must be positive integers, got [0, 1]"),
        ("Conv", dict(group=0), "groups must be positive integers, got 0"),
        ("MaxPool", dict(kernel_shape=[2, 2], strides=[0, 2], auto_pad="SAME_LOWER"), "strides must be positive"),
        ("AveragePool", dict(kernel_shape=[2, 2], strides=[1, -1]), "strides must be positive"),
    ],
)
def test_onnx_import_names_the_node(tmp_path, capsys, op, attrs, message):
    path = tmp_path / "m.onnx"
    _conv_model(path, op, **attrs)
    assert relay_import([str(path), "--freeze-params"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"relay-import: error: {op} node 'n0': ")
    assert message in err
    assert err.count("\n") == 1
