"""The ONNX converter table: one converter per operator, each in the module of its ONNX family.

The family of an operator is the ``onnx/defs/<family>`` folder ONNX defines it in
(``onnx.defs.get_schema(op).file``); its converter lives in ``xrelay.frontends.onnx.<family>``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from xrelay.frontends import SUPPORTED_OPS as FRONTENDS_SUPPORTED_OPS
from xrelay.frontends.onnx import SUPPORTED_OPS, converter, import_onnx, registry
from xrelay.frontends.onnx.registry import FAMILIES, DuplicateConverterError, converters

NO_SCHEMA = {"QLinearAdd": "quantization"}
"""Operators ONNX has no schema for: onnxruntime's contrib ``QLinearAdd`` (domain
com.microsoft, which exporters also write in the default domain) sits with the quantized ops."""


def family(op_type: str) -> str:
    if op_type in NO_SCHEMA:
        with pytest.raises(onnx.defs.SchemaError):
            onnx.defs.get_schema(op_type)
        return NO_SCHEMA[op_type]
    domain, _, op = op_type.rpartition(".")  # "ai.onnx.preview.training.Adam": another domain
    path = onnx.defs.get_schema(op, domain=domain).file.replace("\\", "/")
    return path.split("/defs/")[1].split("/")[0]


@pytest.mark.parametrize("op_type", sorted(converters()))
def test_each_converter_is_in_its_onnx_family_module(op_type):
    fn = converters()[op_type]
    assert fn.__module__ == f"xrelay.frontends.onnx.{family(op_type)}", (
        f"the {op_type} converter ({fn.__module__}.{fn.__qualname__}) belongs in "
        f"xrelay.frontends.onnx.{family(op_type)} (ONNX defines {op_type} in "
        f"onnx/defs/{family(op_type)})"
    )


def test_every_family_module_is_an_onnx_family_and_holds_converters():
    families = {family(op) for op in converters()}
    assert set(FAMILIES) == families
    assert len(converters()) >= 189  # the operators imported when the package was made


def test_the_table_is_read_only_and_the_same_everywhere():
    table = converters()
    assert SUPPORTED_OPS == dict(table) == FRONTENDS_SUPPORTED_OPS
    with pytest.raises(TypeError):
        table["Relu"] = table["Sigmoid"]  # type: ignore[index]


def test_a_second_converter_for_an_operator_is_refused():
    before = dict(converters())

    def relu_again(im, node):
        return []

    with pytest.raises(DuplicateConverterError, match=r"Relu already has a converter \(xrelay\.frontends\.onnx\.math\."):
        converter("Relu")(relu_again)
    # nothing of the refused registration is kept, even for the names before the duplicate
    with pytest.raises(DuplicateConverterError, match="MaxPool"):
        converter("NotAnOnnxOperator", "MaxPool")(relu_again)
    with pytest.raises(DuplicateConverterError, match="named twice"):
        converter("NotAnOnnxOperator", "NotAnOnnxOperator")(relu_again)
    assert dict(converters()) == before


def test_structured_operators_take_sequences():
    assert registry.structured_ops() >= {"Identity", "If", "Loop", "SequenceAt", "OptionalGetElement"}
    # an operator that is not structured refuses a sequence input before its converter runs
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph(
        [helper.make_node("SequenceConstruct", ["x", "x"], ["s"]), helper.make_node("Relu", ["s"], ["y"])],
        "g",
        [x],
        [y],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(ValueError, match="Relu node .*an input is a sequence or optional"):
        import_onnx(model)


def test_no_module_of_the_package_uses_another_modules_private_names():
    """The converter contract is the public names: no module of ``frontends/onnx`` imports a
    private (``_name``) from another module or reads one as ``module._name`` (the registry's
    table is reached through ``converter`` and ``converters`` only)."""
    root = Path(registry.__file__).parent
    found = []
    for path in sorted(root.glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        modules = set()  # names bound to modules of xrelay by ``import`` / ``from x import mod``
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("xrelay"):
                for alias in node.names:
                    if alias.name.startswith("_"):
                        found.append(f"{path.name}:{node.lineno} imports {node.module}.{alias.name}")
                    modules.add(alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                modules.update(a.asname or a.name.split(".")[0] for a in node.names if a.name.startswith("xrelay"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name)
                and node.value.id in modules
            ):
                found.append(f"{path.name}:{node.lineno} reads {node.value.id}.{node.attr}")
    assert not found, "private names used across modules:\n" + "\n".join(found)
