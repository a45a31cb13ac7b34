"""Tensors of strings (``tensor<...x!relay.string>``, design decision 11): ONNX's Equal of
strings, StringConcat, RegexFullMatch, StringSplit and StringNormalizer imported as
``relay.string.*`` ops, run by the reference interpreter and compared with onnxruntime;
xrelay.build refuses them by name."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from xrelay.backend.build import BuildError, build
from xrelay.frontends import import_onnx
from xrelay.frontends.onnx import OnnxImportError
from xrelay.runtime.interpreter import RunError, run
from xrelay.testing.onnx_backend import XrelayBackend
from xrelay.testing.onnx_models import run_onnxruntime

S, B, I64, F = TensorProto.STRING, TensorProto.BOOL, TensorProto.INT64, TensorProto.FLOAT


def _model(node, inputs, outputs, opset=20, inits=()):
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(*i) for i in inputs],
        [helper.make_tensor_value_info(*o) for o in outputs], list(inits),
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=9)


def _strings(*items):
    return np.array(items, dtype=object)


def _compare(model, feeds, reference="onnxruntime"):
    if reference == "onnxruntime":
        want = run_onnxruntime(model, feeds)
    else:  # ONNX's reference evaluator
        from onnx.reference import ReferenceEvaluator

        want = ReferenceEvaluator(model).run(None, feeds)
    got = XrelayBackend.prepare(model).run([feeds[i.name] for i in model.graph.input])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape, (g.shape, w.shape)
        if w.dtype == object:
            assert g.dtype == object and g.tolist() == w.tolist()
        else:
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)


WORDS = _strings("apple", "Banana", "", "über", "a b  c", "x,y,,z")


@pytest.mark.parametrize("b", [_strings("apple"), WORDS[::-1].copy(), _strings("")])
def test_equal_of_strings(b):
    model = _model(helper.make_node("Equal", ["a", "b"], ["y"]), [("a", S, [6]), ("b", S, list(b.shape))], [("y", B, [6])])
    _compare(model, {"a": WORDS, "b": b})
    assert "relay.string.equal" in str(import_onnx(model).module)


@pytest.mark.parametrize("b", [_strings("!"), _strings(*("-" + w for w in WORDS)), _strings("")])
def test_string_concat(b):
    model = _model(helper.make_node("StringConcat", ["a", "b"], ["y"]), [("a", S, [6]), ("b", S, list(b.shape))], [("y", S, [6])])
    _compare(model, {"a": WORDS, "b": b})


@pytest.mark.parametrize("pattern", [r"[a-z]+", r".*a.*", r"", r"\w+,\w+,,\w"])
def test_regex_full_match(pattern):
    model = _model(helper.make_node("RegexFullMatch", ["a"], ["y"], pattern=pattern), [("a", S, [6])], [("y", B, [6])])
    _compare(model, {"a": WORDS})


@pytest.mark.parametrize("attrs", [{}, {"delimiter": ","}, {"delimiter": " ", "maxsplit": 1}, {"maxsplit": 1}, {"delimiter": ""}])
def test_string_split(attrs):
    node = helper.make_node("StringSplit", ["a"], ["y", "n"], **attrs)
    model = _model(node, [("a", S, [2, 3])], [("y", S, None), ("n", I64, [2, 3])])
    _compare(model, {"a": WORDS.reshape(2, 3)}, reference="onnx")
    # onnxruntime splits "" into no pieces with any delimiter, ONNX's reference (Python's
    # str.split, which xrelay follows) into one empty piece with an explicit one: without ""
    # the two agree
    _compare(model, {"a": _strings("apple", "Banana", "über", "über", "a b  c", "x,y,,z").reshape(2, 3)})


@pytest.mark.parametrize(
    "attrs",
    [
        {"case_change_action": "LOWER", "is_case_sensitive": 1, "stopwords": ["apple"]},
        {"case_change_action": "UPPER", "is_case_sensitive": 0, "stopwords": ["APPLE", "banana"]},
        {"case_change_action": "NONE"},
        {"case_change_action": "LOWER", "stopwords": list(WORDS)},  # everything removed: [""]
    ],
)
@pytest.mark.parametrize("shape", [[6], [1, 6]])
def test_string_normalizer(attrs, shape):
    # onnxruntime's default locale (en_US.UTF-8) is not installed here; C.UTF-8 is
    node = helper.make_node("StringNormalizer", ["a"], ["y"], locale="C.UTF-8", **attrs)
    model = _model(node, [("a", S, shape)], [("y", S, None)], opset=10)
    _compare(model, {"a": WORDS.reshape(shape)})


def test_one_import_serves_every_input():
    model = _model(helper.make_node("StringConcat", ["a", "b"], ["y"]), [("a", S, [None]), ("b", S, [])], [("y", S, [None])])
    imp = import_onnx(model)
    for n in (0, 1, 4):
        a = _strings(*(f"w{k}" for k in range(n))).reshape(n)
        (y,) = run(imp.module, {"a": a, "b": np.array("!", dtype=object)})
        assert y.tolist() == [f"w{k}!" for k in range(n)]


def test_numpy_unicode_arrays_are_taken():
    model = _model(helper.make_node("Equal", ["a", "b"], ["y"]), [("a", S, [2]), ("b", S, [2])], [("y", B, [2])])
    imp = import_onnx(model)
    (y,) = run(imp.module, {"a": np.array(["x", "y"]), "b": ["x", "z"]})
    assert y.tolist() == [True, False]


def test_interpreter_refuses_numbers_for_strings():
    model = _model(helper.make_node("Equal", ["a", "b"], ["y"]), [("a", S, [2]), ("b", S, [2])], [("y", B, [2])])
    imp = import_onnx(model)
    with pytest.raises(RunError, match=r"input 'a': expected strings \(an array of str\), got float32 array of shape \(2,\)"):
        run(imp.module, {"a": np.zeros(2, np.float32), "b": _strings("x", "y")})


def test_build_refuses_strings_by_name():
    model = _model(helper.make_node("StringConcat", ["a", "b"], ["y"]), [("a", S, [2]), ("b", S, [2])], [("y", S, [2])])
    with pytest.raises(BuildError, match=r"build: @main takes a tensor of strings; a string has no fixed size"):
        build(import_onnx(model).module, {})


def test_module_prints_and_parses_back():
    from xdsl.parser import Parser

    from xrelay.dialects import make_context
    from xrelay.relay.module import IRModule
    from xrelay.relay.text_printer import RelayTextPrintError

    node = helper.make_node("StringSplit", ["a"], ["y", "n"], delimiter=",", maxsplit=2)
    text = str(import_onnx(_model(node, [("a", S, [3])], [("y", S, None), ("n", I64, [3])])).module)
    assert 'relay.string.split %a {delimiter = ",", maxsplit = 2 : i64} : (tensor<3x!relay.string>) -> (tensor<3x?x!relay.string>, tensor<3xi64>)' in text
    again = Parser(make_context(), text).parse_module()
    again.verify()
    assert str(again) == text
    with pytest.raises(RelayTextPrintError, match=r"tensor<3x!relay.string> has no Relay text form"):
        IRModule.from_module_op(again).astext()


# ---- what is refused, each with one clear error ------------------------------------------------

REFUSED = {
    "a relay op on strings": (
        helper.make_node("Cast", ["a"], ["y"], to=F), [("a", S, [2])], [("y", F, [2])],
        r"Cast node 'y': a tensor of strings is taken only by Equal, Identity, StringConcat",
    ),
    "strings and numbers": (
        helper.make_node("StringConcat", ["a", "x"], ["y"]), [("a", S, [2]), ("x", F, [2])], [("y", S, [2])],
        r"StringConcat node 'y': its inputs must be tensors of strings; one is not",
    ),
    "shapes that do not broadcast": (
        helper.make_node("StringConcat", ["a", "b"], ["y"]), [("a", S, [2]), ("b", S, [3])], [("y", S, [2])],
        r"StringConcat node 'y': relay.string.concat: shapes tensor<2x!relay.string> and tensor<3x!relay.string> do not broadcast",
    ),
    "a bad pattern": (
        helper.make_node("RegexFullMatch", ["a"], ["y"], pattern="(unclosed"), [("a", S, [2])], [("y", B, [2])],
        r"RegexFullMatch node 'y': its pattern '\(unclosed' is not a regular expression",
    ),
    "a bad case action": (
        helper.make_node("StringNormalizer", ["a"], ["y"], case_change_action="TITLE"), [("a", S, [2])], [("y", S, None)],
        r"StringNormalizer node 'y': case_change_action must be one of LOWER, UPPER, NONE, got 'TITLE'",
    ),
    "a 3-D normalizer input": (
        helper.make_node("StringNormalizer", ["a"], ["y"]), [("a", S, [1, 2, 2])], [("y", S, None)],
        r"StringNormalizer node 'y': its input must be \[C\] or \[1, C\], got \[1, 2, 2\]",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_with_one_clear_error(case):
    node, inputs, outputs, message = REFUSED[case]
    with pytest.raises(OnnxImportError, match=message):
        import_onnx(_model(node, inputs, outputs))


def test_string_initializer_and_constant_node():
    # Equal(a, initializer c) and StringConcat(a, Constant): relay.string.constant
    c = helper.make_tensor("c", S, [6], [w.encode() for w in ["apple", "banana", "", "über", "x", "y"]])
    k = helper.make_node("Constant", [], ["k"], value=helper.make_tensor("kv", S, [], [b"!"]))
    nodes = [helper.make_node("Equal", ["a", "c"], ["e"]), k, helper.make_node("StringConcat", ["a", "k"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("a", S, [6])],
        [helper.make_tensor_value_info("e", B, [6]), helper.make_tensor_value_info("y", S, [6])], [c],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=9)
    text = str(import_onnx(model).module)
    assert text.count("relay.string.constant") == 2
    _compare(model, {"a": WORDS})
