"""``from_onnx`` / ``import_onnx`` behaviour: errors, names, params, shapes, folding."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import xrelay
from xrelay.frontends import OnnxImportError, from_onnx, import_onnx
from xrelay.frontends.onnx import FOLD_PARAM_LIMIT, OnnxRunTimeValueError
from xrelay.testing.onnx_models import make_model, run_onnxruntime

F32 = np.float32


def _ops(module) -> list[str]:
    return [op.name for op in next(iter(module.ops)).body.block.ops]


def _main(module):
    return next(iter(module.ops))


def test_unsupported_operators_all_listed():
    nodes = [
        helper.make_node("Binarizer", ["x"], ["a"], name="first", domain="ai.onnx.ml"),
        helper.make_node("Relu", ["a"], ["b"], name="fine"),
        helper.make_node("Binarizer", ["b"], ["c"], name="second", domain="ai.onnx.ml"),
        helper.make_node("ImageDecoder", ["c"], ["d"], name="det"),
        helper.make_node("FusedGemm", ["d"], ["e"], name="ms", domain="com.microsoft"),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3])],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(OnnxImportError) as info:
        from_onnx(model)
    msg = str(info.value)
    assert isinstance(info.value, ValueError)
    assert "4 node(s)" in msg and "opset 17" in msg
    assert "ai.onnx.ml.Binarizer (first, second)" in msg and "ImageDecoder (det)" in msg and "com.microsoft.FusedGemm (ms)" in msg
    assert "fine" not in msg


def test_dynamic_batch_and_shape_override():
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Flatten", ["r"], ["y"], axis=1)]
    model = make_model(nodes, {"x": (["batch", 3, 4], F32)}, ["y"])
    imp = import_onnx(model)
    assert str(_main(imp.module).function_type.inputs.data[0]) == "tensor<?x3x4xf32>"
    assert str(_main(imp.module).function_type.outputs.data[0]) == "tensor<?x12xf32>"
    x = np.random.default_rng(0).standard_normal((5, 3, 4)).astype(F32)
    np.testing.assert_allclose(xrelay.run(imp.module, {"x": x})[0], x.reshape(5, 12).clip(0))
    imp2 = import_onnx(model, shape={"x": (2, 3, 4)})
    assert str(_main(imp2.module).function_type.outputs.data[0]) == "tensor<2x12xf32>"


def test_dynamic_dims_where_static_needed():
    model = make_model([helper.make_node("Flatten", ["x"], ["y"], axis=2, name="flat")], {"x": (["n", 3, 4], F32)}, ["y"])
    with pytest.raises(OnnxImportError, match=r"Flatten node 'flat': needs a static input shape.*shape="):
        from_onnx(model)
    assert from_onnx(model, shape={"x": [2, 3, 4]})[0] is not None


def test_shape_for_unknown_input():
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], {"x": ((2,), F32)}, ["y"])
    with pytest.raises(OnnxImportError, match="unknown input.*data.*inputs are x"):
        from_onnx(model, shape={"data": (2,)})


def test_dtype_override():
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], {"x": ((2,), F32)}, ["y"])
    imp = import_onnx(model, dtype="float64")
    assert str(_main(imp.module).function_type.inputs.data[0]) == "tensor<2xf64>"
    imp = import_onnx(model, dtype={"x": "float16"})
    assert str(_main(imp.module).function_type.inputs.data[0]) == "tensor<2xf16>"


def test_name_sanitising_and_mapping():
    w = np.ones((3, 3), F32)
    nodes = [helper.make_node("MatMul", ["input:0", "onnx::MatMul_12"], ["t"]),
             helper.make_node("Add", ["t", "7bias"], ["out:0"])]
    model = make_model(nodes, {"input:0": ((2, 3), F32)}, ["out:0"],
                       {"onnx::MatMul_12": w, "7bias": np.arange(3, dtype=F32)})
    imp = import_onnx(model)
    assert imp.input_names == {"input:0": "input.0"}
    assert set(imp.params) == {"onnx__MatMul.12", "_7bias"}
    text = str(imp.module)
    assert "@main(%input.0: tensor<2x3xf32>, %onnx__MatMul.12: tensor<3x3xf32>, %_7bias: tensor<3xf32>)" in text
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(F32)
    want = run_onnxruntime(model, {"input:0": x})[0]
    np.testing.assert_allclose(xrelay.run(imp.module, {"input.0": x}, imp.params)[0], want, rtol=1e-6)
    assert imp.output_names == ["out:0"]


def test_params_order_and_shape_only_initializers():
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["r"]),
             helper.make_node("Add", ["r", "b"], ["s"]),
             helper.make_node("Mul", ["s", "a"], ["y"])]
    inits = {"shape": np.array([0, -1], np.int64), "a": np.full((12,), 2, F32), "b": np.ones(12, F32)}
    model = make_model(nodes, {"x": ((2, 3, 4), F32)}, ["y"], inits)
    imp = import_onnx(model)
    # first-use order after the inputs; the shape was consumed at import
    assert list(imp.params) == ["b", "a"]
    args = [a.name_hint for a in _main(imp.module).body.block.args]
    assert args == ["x", "b", "a"]
    frozen = import_onnx(model, freeze_params=True)
    assert frozen.params == {}
    consts = [op for op in _main(frozen.module).body.block.ops if op.name == "relay.constant"]
    assert sorted(op.param_name.data for op in consts) == ["a", "b"]


def test_initializers_listed_as_inputs_are_not_inputs():
    w = np.ones((2, 2), F32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])],
        [numpy_helper.from_array(w, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    imp = import_onnx(model)
    assert imp.input_names == {"x": "x"} and list(imp.params) == ["w"]


def test_large_initializers_are_not_folded_unless_frozen():
    big = np.random.default_rng(0).standard_normal((FOLD_PARAM_LIMIT + 1,)).astype(F32)
    small = np.arange(4, dtype=F32)
    nodes = [helper.make_node("Neg", ["big"], ["nb"]), helper.make_node("Neg", ["small"], ["ns"]),
             helper.make_node("Add", ["x", "nb"], ["y"]), helper.make_node("Add", ["x4", "ns"], ["z"])]
    model = make_model(nodes, {"x": ((FOLD_PARAM_LIMIT + 1,), F32), "x4": ((4,), F32)}, ["y", "z"],
                       {"big": big, "small": small})
    imp = import_onnx(model)
    assert list(imp.params) == ["big"] and _ops(imp.module).count("relay.negative") == 1
    frozen = import_onnx(model, freeze_params=True)
    assert "relay.negative" not in _ops(frozen.module)
    feeds = {"x": np.ones(FOLD_PARAM_LIMIT + 1, F32), "x4": np.ones(4, F32)}
    want = run_onnxruntime(model, feeds)
    for got in (xrelay.run(imp.module, feeds, imp.params), xrelay.run(frozen.module, feeds)):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w)


def test_exporter_shape_chain_folds_to_static_reshape():
    const = lambda name, v: helper.make_node(  # noqa: E731
        "Constant", [], [name], value=numpy_helper.from_array(np.asarray(v)))
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        const("i0", np.int64(0)), const("ax", np.array([0])),
        helper.make_node("Gather", ["s", "i0"], ["d0"], axis=0),
        helper.make_node("Unsqueeze", ["d0", "ax"], ["u0"]),
        const("rest", np.array([-1], np.int64)),
        helper.make_node("Concat", ["u0", "rest"], ["shape"], axis=0),
        helper.make_node("Cast", ["shape"], ["shape_f"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["shape_f"], ["shape_i"], to=TensorProto.INT64),
        helper.make_node("Reshape", ["x", "shape_i"], ["y"]),
    ]
    model = make_model(nodes, {"x": ((2, 3, 4), F32)}, ["y"])
    imp = import_onnx(model)
    assert _ops(imp.module) == ["relay.reshape", "func.return"]
    assert "newshape = [2, 12]" in str(imp.module)


def test_model_from_path_and_irmodule(tmp_path):
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], {"x": ((2,), F32)}, ["y"])
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    mod, params = from_onnx(str(path))
    assert isinstance(mod, xrelay.IRModule) and params == {}
    with pytest.raises(OnnxImportError, match="expected an onnx.ModelProto or a path"):
        from_onnx(42)


def test_unsupported_variants_are_clear():
    nodes = [helper.make_node("MaxPool", ["x"], ["y", "idx"], kernel_shape=[2, 2], ceil_mode=1, name="mp")]
    model = make_model(nodes, {"x": ((1, 1, 5, 5), F32)}, {"y": F32, "idx": np.int64})
    with pytest.raises(OnnxImportError, match="MaxPool node 'mp': the Indices output with auto_pad or ceil_mode"):
        from_onnx(model)
    # a run-time argument without a dyn form in Relay: the error names the graph inputs it is
    # computed from (a Reshape's run-time shape imports as dyn.reshape instead)
    nodes = [helper.make_node("ReduceSum", ["x", "a"], ["y"], name="rs")]
    model = make_model(nodes, {"x": ((4,), F32), "a": ((1,), np.int64)}, ["y"], check=False)
    with pytest.raises(OnnxRunTimeValueError, match="ReduceSum node 'rs': input 'axes' must be a constant") as e:
        from_onnx(model)
    assert e.value.inputs == ("a",)
    nodes = [helper.make_node("Pad", ["x", "p"], ["y"], mode="circular", name="pd")]
    model = make_model(nodes, {"x": ((4,), F32)}, ["y"], {"p": np.array([1, 1])}, opset=19)
    with pytest.raises(OnnxImportError, match="pad mode 'circular'"):
        from_onnx(model)


def test_ill_typed_model_names_the_node():
    nodes = [helper.make_node("Add", ["x", "y"], ["z"], name="bad_add")]
    model = make_model(nodes, {"x": ((2, 3), F32), "y": ((4,), F32)}, ["z"], check=False)
    with pytest.raises(OnnxImportError, match="Add node 'bad_add': .*cannot be broadcast"):
        from_onnx(model)


def test_output_that_is_an_input_or_a_constant():
    nodes = [helper.make_node("Identity", ["x"], ["y"]),
             helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.arange(3, dtype=F32)))]
    model = make_model(nodes, {"x": ((3,), F32)}, ["y", "c"])
    imp = import_onnx(model)
    x = np.arange(3, dtype=F32) + 1
    got = xrelay.run(imp.module, {"x": x})
    np.testing.assert_array_equal(got[0], x)
    np.testing.assert_array_equal(got[1], np.arange(3, dtype=F32))


def test_reshape_with_dynamic_batch_keeps_onnx_special_values():
    nodes = [helper.make_node("Reshape", ["x", "s"], ["y"])]
    model = make_model(nodes, {"x": (["n", 3, 4], F32)}, ["y"], {"s": np.array([0, -1], np.int64)})
    imp = import_onnx(model)
    assert "newshape = [0, 12]" in str(imp.module)
    assert str(_main(imp.module).function_type.outputs.data[0]) == "tensor<?x12xf32>"
    x = np.arange(24, dtype=F32).reshape(2, 3, 4)
    np.testing.assert_array_equal(xrelay.run(imp.module, {"x": x})[0], x.reshape(2, 12))
    # a -1 that needs the dynamic dim stays -1, with Relay inferring a dynamic dim
    model = make_model(nodes, {"x": (["n", 3, 4], F32)}, ["y"], {"s": np.array([-1, 4], np.int64)})
    imp = import_onnx(model)
    assert "newshape = [-1, 4]" in str(imp.module)
    np.testing.assert_array_equal(xrelay.run(imp.module, {"x": x})[0], x.reshape(6, 4))
