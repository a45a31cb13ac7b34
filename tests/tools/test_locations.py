"""Errors name the op at fault by file:line:column (issue 17): verifier and type-inference
errors in relay-opt, relay-run, relay-plan and xrelay.runtime.load; xDSL's dense-literal
assertion in generic attributes; nesting too deep for the recursive parser, refused up front."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import FileLineColLoc, UnknownLoc
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError

from xrelay.dialects import make_context, op_location
from xrelay.dialects._locations import MAX_NESTING
from xrelay.tools import relay_opt, relay_plan, relay_run

BROADCAST = """func.func @main(%x: tensor<2x3xf32>, %y: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %a = relay.nn.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %0 = relay.add %a, %y : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
"""
GENERIC = """"builtin.module"() ({
  "func.func"() <{sym_name = "main", function_type = (tensor<2xf32>) -> tensor<2xf32>}> ({
  ^bb0(%x: tensor<2xf32>):
      %0 = "relay.nn.relu"(%x) : (tensor<2xf32>) -> tensor<3xf32>
    "func.return"(%0) : (tensor<3xf32>) -> ()
  }) : () -> ()
}) : () -> ()
"""
DOMINANCE = """func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = relay.add %z, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %z = relay.add %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
"""


def _err(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err
    return err


def _write(tmp_path, text: str, name: str = "m.mlir") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_parsed_ops_carry_their_line_and_column():
    mod = Parser(make_context(), BROADCAST, "m.mlir").parse_module()
    where = {op.name: op_location(op) for op in mod.walk()}
    assert where["func.func"] == "m.mlir:1:1"
    assert where["relay.nn.relu"] == "m.mlir:2:3"
    assert where["relay.add"] == "m.mlir:3:5"  # the first token: the result name
    assert where["func.return"] == "m.mlir:4:3"
    # Printing is unchanged (locations print only with debug info) and clones keep them.
    printed = []
    for m in (mod, mod.clone()):
        out = __import__("io").StringIO()
        Printer(stream=out).print_op(m)
        printed.append(out.getvalue())
    assert printed[0] == printed[1] and "loc(" not in printed[0]
    assert [op_location(op) for op in mod.clone().walk()] == [op_location(op) for op in mod.walk()]


def test_an_explicit_location_wins_and_built_ops_have_none():
    text = 'func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n  func.return %x : tensor<2xf32> loc("model.py":7:3)\n}\n'
    mod = Parser(make_context(), text, "m.mlir").parse_module()
    ret = next(op for op in mod.walk() if op.name == "func.return")
    assert isinstance(ret.location, FileLineColLoc) and op_location(ret) == "model.py:7:3"
    from xrelay.testing.random_graphs import random_dag

    built = random_dag(0, 3)
    assert all(isinstance(op.location, UnknownLoc) and op_location(op) is None for op in built.walk())


@pytest.mark.parametrize("tool", ["relay-opt", "relay-run", "relay-plan"])
def test_verifier_errors_name_file_line_column(tmp_path, capsys, tool):
    path = _write(tmp_path, BROADCAST)
    main = {"relay-opt": relay_opt.main, "relay-run": relay_run.main, "relay-plan": relay_plan.main}[tool]
    args = [path, "--random-inputs"] if tool == "relay-run" else [path]
    assert main(args) == 1
    err = _err(capsys)
    assert f"{path}:3:5: relay.add: operands cannot be broadcast together" in err
    assert f"{path}: {path}" not in err  # named once


def test_generic_form_and_dominance_errors_are_located(tmp_path, capsys):
    path = _write(tmp_path, GENERIC)
    assert relay_opt.main([path]) == 1
    assert f"{path}:4:7: relay.nn.relu: result 0 has type tensor<3xf32>" in _err(capsys)
    path = _write(tmp_path, DOMINANCE)
    assert relay_run.main([path, "--random-inputs"]) == 1
    assert f"{path}:2:3: operand #0 of 'relay.add' uses %z before its definition" in _err(capsys)


def test_infer_type_errors_are_located(tmp_path, capsys):
    path = _write(tmp_path, BROADCAST)
    assert relay_opt.main([path, "--disable-verify", "-p", "infer-type"]) == 1
    err = _err(capsys)
    assert f"{path}:3:5: in @main: relay.add: operands cannot be broadcast together" in err


def test_runtime_load_names_the_op_in_lib_mlir(tmp_path):
    from xrelay.backend.build import build
    from xrelay.relay.module import IRModule
    from xrelay.runtime.executor_factory import load
    from xrelay.runtime.graph_json import GraphJsonError

    text = """func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = relay.negative %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
"""
    paths = [tmp_path / "graph.json", tmp_path / "lib.mlir", tmp_path / "params.npz"]
    build(IRModule.from_text(text), opt_level=0).export(*paths)
    lib = paths[1].read_text()
    lines = lib.splitlines()
    row = next(i for i, ln in enumerate(lines) if "relay.negative" in ln)
    # a transpose that keeps the shape: parses, but its verifier refuses the result type
    lines[row] = lines[row].replace("relay.negative %p0", "relay.transpose %p0 {axes = [1, 0]}")
    paths[1].write_text("\n".join(lines) + "\n")
    column = len(lines[row]) - len(lines[row].lstrip()) + 1
    with pytest.raises(GraphJsonError) as e:
        load(*paths)
    assert str(e.value).startswith(f"{paths[1]}:{row + 1}:{column}: relay.transpose: result 0 has type")


def test_complex_dense_literal_in_a_generic_attribute(tmp_path, capsys):
    # xDSL 0.74 asserts inside its parser here; it is a parse error at the literal now.
    text = '"test.op"() {v = dense<[1.0]> : tensor<1xcomplex<f32>>} : () -> ()\n'
    path = _write(tmp_path, text)
    assert relay_opt.main([path]) == 1
    err = _err(capsys)
    assert f"{path}:1:23" in err and "malformed dense literal" in err
    with pytest.raises(ParseError, match="malformed dense literal"):
        Parser(make_context(), text).parse_module()


def _nested(depth: int) -> str:
    return '"test.op"() ({' * depth + "}) : () -> ()" * depth + "\n"


def test_nesting_is_refused_before_parsing(tmp_path, capsys):
    ok = MAX_NESTING // 2  # "({" per op: exactly the limit
    Parser(make_context(), _nested(ok)).parse_module()
    with pytest.raises(ParseError, match=f"nesting deeper than {MAX_NESTING} levels"):
        Parser(make_context(), _nested(ok + 1)).parse_module()
    # Brackets in strings and comments do not count; a literal nests too.
    quoted = '"test.op"() {s = "' + "{" * 500 + '"} : () -> ()  // ' + "(" * 500 + "\n"
    Parser(make_context(), quoted).parse_module()
    literal = "[" * 150 + "1" + "]" * 150
    text = f'"test.op"() {{v = dense<{literal}> : tensor<{"1x" * 150}i8>}} : () -> ()\n'
    path = _write(tmp_path, text)
    for main in (relay_opt.main, relay_plan.main):
        assert main([path]) == 1
        err = _err(capsys)
        assert f"{path}:1:" in err and "nested too deeply" in err
    # 3000 ops deep on one 80 kB line: the message shows a window of the line, not all of it
    path = _write(tmp_path, _nested(3000))
    assert relay_run.main([path]) == 1
    err = _err(capsys)
    assert f"{path}:1:{14 * (MAX_NESTING // 2) + 10}" in err and "nested too deeply" in err
    assert max(len(line) for line in err.splitlines()) < 200 and len(err) < 1000


def test_relay_import_deeply_nested_subgraphs(tmp_path, capsys):
    # A chain of If nodes, each holding the next graph in its then_branch attribute, 60 deep
    # (180 protobuf levels): refused while reading, with the reason.
    from onnx import TensorProto, helper

    from xrelay.tools import relay_import

    def field(num: int, payload: bytes) -> bytes:
        def varint(v: int) -> bytes:
            out = b""
            while True:
                b, v = v & 0x7F, v >> 7
                out += bytes([b | 0x80]) if v else bytes([b])
                if not v:
                    return out

        return varint(num << 3 | 2) + varint(len(payload)) + payload

    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])], "leaf", [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    ).SerializeToString()  # fmt: skip
    for _ in range(60):
        attr = field(1, b"then_branch") + bytes([160, 1, 5]) + field(6, graph)  # type = GRAPH
        graph = field(1, field(1, b"c") + field(2, b"y") + field(4, b"If") + field(5, attr))
    path = tmp_path / "deep.onnx"
    path.write_bytes(bytes([8, 8]) + field(7, graph))
    assert relay_import.main([str(path)]) == 1
    err = _err(capsys)
    assert err.startswith("relay-import: error: cannot read ONNX model")
    assert "nested deeper than protobuf's limit of 100 messages" in err
