"""Hostile input to the tools: one clear message (line:column where there is a file), exit 1,
no traceback (issue 17, item 5)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from xrelay.runtime.interpreter import RunError, random_array, random_inputs
from xrelay.tools import relay_opt, relay_run

ADD = """func.func @main(%x: tensor<2xT>) -> tensor<2xT> {
  %y = relay.add %x, %x : (tensor<2xT>, tensor<2xT>) -> tensor<2xT>
  func.return %y : tensor<2xT>
}
"""
IDENTITY = """func.func @main(%x: tensor<SHAPExT>) -> tensor<SHAPExT> {
  func.return %x : tensor<SHAPExT>
}
"""
CONSTANT = """func.func @main() -> tensor<SHAPExT> {
  %c = relay.constant VALUE : tensor<SHAPExT>
  func.return %c : tensor<SHAPExT>
}
"""
UNRUNNABLE = ["i72", "f80", "complex<f32>", "f8E4M3B11FNUZ", "index", "i7"]


def _one_error(capsys, tool: str) -> str:
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "internal error" not in captured.err
    assert captured.err.startswith(f"{tool}: error: ") or ".mlir:" in captured.err
    return captured.err


def _write(tmp_path, text: str, name: str = "m.mlir") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("elem", UNRUNNABLE)
def test_relay_ops_reject_element_types_relay_has_no_dtype_for(tmp_path, capsys, elem):
    path = _write(tmp_path, ADD.replace("T", elem))
    assert relay_opt.main([path]) == 1
    err = _one_error(capsys, "relay-opt")
    assert f"{path}:2:27" in err
    assert f"relay.add: operand 0 has element type {elem}, which is no Relay dtype" in err
    assert relay_run.main([path, "--random-inputs"]) == 1
    assert f"has element type {elem}, which is no Relay dtype" in _one_error(capsys, "relay-run")


@pytest.mark.parametrize("elem", UNRUNNABLE)
def test_relay_run_refuses_inputs_it_cannot_make(tmp_path, capsys, elem):
    # No relay op to verify: the interpreter itself names the input and the type.
    path = _write(tmp_path, IDENTITY.replace("SHAPE", "2").replace("T", elem))
    assert relay_run.main([path, "--random-inputs"]) == 1
    err = _one_error(capsys, "relay-run")
    assert f"input 'x': element type {elem} cannot be run" in err


@pytest.mark.parametrize("elem", ["i7", "f80", "index"])
def test_constants_of_non_relay_element_types_do_not_verify(tmp_path, capsys, elem):
    text = CONSTANT.replace("SHAPE", "2").replace("T", elem).replace("VALUE", "dense<1>")
    assert relay_run.main([_write(tmp_path, text)]) == 1
    err = _one_error(capsys, "relay-run")
    assert f"element type {elem} is no Relay dtype" in err or "bad dense literal" in err


@pytest.mark.parametrize(
    ("shape", "elem", "value", "message"),
    [
        ("2", "complex<f32>", "dense<[1.0, 2.0]>", "bad dense literal: it does not fit its type"),
        ("2", "i1", "dense<[3, 1]>", "Integer value 3 is out of range for type i1"),
        ("2", "f80", "dense<1.0>", "bad dense literal"),
        (
            "99999999999",
            "f32",
            "dense<1.0>",
            "relay.constant of type tensor<99999999999xf32> needs 399999999996 bytes",
        ),
    ],
)
def test_bad_dense_literals_are_parse_errors_with_a_location(
    tmp_path, capsys, shape, elem, value, message
):
    text = CONSTANT.replace("SHAPE", shape).replace("T", elem).replace("VALUE", value)
    path = _write(tmp_path, text)
    for tool, main in (("relay-opt", relay_opt.main), ("relay-run", relay_run.main)):
        assert main([path]) == 1
        err = _one_error(capsys, tool)
        assert f"{path}:2:23" in err and message in err


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        (CONSTANT.replace("relay.constant", "arith.constant"), "2:28", "tensor<99999999999xf32> needs 399999999996 bytes"),
        ('"test.op"() {v = dense<2.0> : tensor<99999999999x3xf64>} : () -> ()\n', "1:23", "tensor<99999999999x3xf64> needs 2399999999976 bytes"),
        ('"test.op"() {v = dense<1> : vector<4294967296xi64>} : () -> ()\n', "1:23", "vector<4294967296xi64> needs 34359738368 bytes"),
    ],
)
def test_huge_splats_outside_relay_constant_are_refused_before_expanding(tmp_path, capsys, text, where, what):
    # xDSL's own dense parser (arith.constant, any attribute) expands a splat into one Python
    # value per element: a MemoryError after minutes, or gigabytes taken, without the check.
    path = _write(tmp_path, text.replace("SHAPE", "99999999999").replace("T", "f32").replace("VALUE", "dense<1.0>"))
    for tool, main in (("relay-opt", relay_opt.main), ("relay-run", relay_run.main)):
        assert main([path]) == 1
        err = _one_error(capsys, tool)
        assert f"{path}:{where}" in err and f"dense literal of type {what}" in err


def test_relay_run_binary_file(tmp_path, capsys):
    path = tmp_path / "m.mlir"
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00\xd0\xff\xfe")
    assert relay_run.main([str(path)]) == 1
    assert "not UTF-8 text (byte 8)" in _one_error(capsys, "relay-run")


@pytest.mark.parametrize("name", ["m.mlir", "m.relay"])
def test_relay_opt_binary_file_names_the_file(tmp_path, capsys, name):
    path = tmp_path / name
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00\xd0\xff\xfe")
    assert relay_opt.main([str(path)]) == 1
    assert f"cannot read '{path}': not UTF-8 text (byte 8)" in _one_error(capsys, "relay-opt")


def test_deep_nesting(tmp_path, capsys):
    depth = 3000
    body = '"test.op"() ({' * depth + "}) : () -> ()" * depth
    text = IDENTITY.replace("SHAPE", "2").replace("T", "f32").replace("func.return", body + "\n func.return")
    path = _write(tmp_path, text)
    assert relay_opt.main([path]) == 1
    assert "nested too deeply" in _one_error(capsys, "relay-opt")
    assert relay_run.main([path, "--random-inputs"]) == 1
    assert "nested too deeply" in _one_error(capsys, "relay-run")


def test_negative_random_seed(tmp_path, capsys):
    path = _write(tmp_path, IDENTITY.replace("SHAPE", "2").replace("T", "f32"))
    assert relay_run.main([path, "--random-inputs", "-5"]) == 1
    assert "random seed must be a non-negative integer, got -5" in _one_error(capsys, "relay-run")


def test_huge_input_is_refused_before_allocating(tmp_path, capsys):
    path = _write(tmp_path, IDENTITY.replace("SHAPE", "99999999999x9999").replace("T", "f32"))
    assert relay_run.main([path, "--random-inputs"]) == 1
    err = _one_error(capsys, "relay-run")
    assert "input 'x' (tensor<99999999999x9999xf32>) needs 3999599999960004 bytes" in err


def test_random_array_api_errors():
    from xdsl.dialects.builtin import Float32Type, TensorType

    rng = np.random.default_rng(0)
    with pytest.raises(RunError, match=r"'w' \(tensor<4294967296x4294967296xf32>\) needs"):
        random_array(TensorType(Float32Type(), [2**32, 2**32]), rng, "'w'")
    with pytest.raises(RunError, match="non-negative integer, got 1.5"):
        random_inputs(None, seed=1.5)


# ---- relay-import ----------------------------------------------------------------------------


def _onnx(tmp_path, name: str, nodes, inputs, outputs, initializers=()) -> str:
    import onnx
    from onnx import helper

    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    path = tmp_path / name
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return str(path)


def _relu(tmp_path, dims=(2, 3)) -> str:
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(dims))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(dims))
    return _onnx(tmp_path, "relu.onnx", [helper.make_node("Relu", ["x"], ["y"])], [x], [y])


def test_relay_import_unknown_dtype(tmp_path, capsys):
    from xrelay.tools import relay_import

    assert relay_import.main([_relu(tmp_path), "--dtype", "foo"]) == 1
    err = _one_error(capsys, "relay-import")
    assert "dtype 'foo' for input 'x' is not a Relay dtype; known: float16" in err


def test_relay_import_negative_dim(tmp_path, capsys):
    from xrelay.tools import relay_import

    assert relay_import.main([_relu(tmp_path, (-3, 2))]) == 1
    assert "input 'x' has a negative dimension -3" in _one_error(capsys, "relay-import")


@pytest.mark.parametrize("raw", [True, False])
def test_relay_import_initializer_dims_do_not_match_data(tmp_path, capsys, raw):
    from onnx import TensorProto, helper, numpy_helper

    from xrelay.tools import relay_import

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])
    if raw:
        w = numpy_helper.from_array(np.ones(3, np.float32), "w")
    else:
        w = helper.make_tensor("w", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])
    w.dims[:] = [4, 4]
    path = _onnx(tmp_path, "m.onnx", [helper.make_node("Add", ["x", "w"], ["y"])], [x], [y], [w])
    assert relay_import.main([path, "--freeze-params"]) == 1
    err = _one_error(capsys, "relay-import")
    assert "initializer 'w': its data does not match its dims [4, 4]" in err


def test_relay_import_empty_file(tmp_path, capsys):
    from xrelay.tools import relay_import

    path = tmp_path / "empty.onnx"
    path.write_bytes(b"")
    out = tmp_path / "out.mlir"
    assert relay_import.main([str(path), "-o", str(out)]) == 1
    assert "the ONNX model has no graph" in _one_error(capsys, "relay-import")
    assert not out.exists()


# ---- relay-plan ------------------------------------------------------------------------------


def test_relay_plan_binary_problem(tmp_path, capsys):
    from xrelay.tools import relay_plan

    for name in ("p.csv", "p.mlir"):
        path = tmp_path / name
        path.write_bytes(b"id,lower\n\xd0\xff\xfe")
        assert relay_plan.main([str(path)]) == 1
        # as relay-run and relay-opt say it, naming the file
        assert re.search(rf"{name}'?: not UTF-8 text \(byte 9\)", _one_error(capsys, "relay-plan"))



def test_generic_form_reaches_the_verifier_check(tmp_path, capsys):
    # The generic syntax skips relay's parser: the op verifier catches the element type.
    text = """func.func @main(%x: tensor<2xi7>) -> tensor<2xi7> {
  %y = "relay.add"(%x, %x) : (tensor<2xi7>, tensor<2xi7>) -> tensor<2xi7>
  func.return %y : tensor<2xi7>
}
"""
    assert relay_opt.main([_write(tmp_path, text)]) == 1
    err = _one_error(capsys, "relay-opt")
    assert "relay.add: result 0 has element type i7, which is no Relay dtype" in err


def _bad_npz_files(tmp_path) -> dict[str, tuple[str, str]]:
    """Files that are not archives of arrays, and what the tools say about each."""
    import zipfile

    np.save(tmp_path / "one.npy", np.zeros(2, np.float32))
    np.savez(tmp_path / "ok.npz", x=np.zeros(2, np.float32))
    whole = (tmp_path / "ok.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(whole[: len(whole) // 2])
    with zipfile.ZipFile(tmp_path / "raw.npz", "w") as z:
        z.writestr("x.npy", b"not an npy")
    np.savez(tmp_path / "obj.npz", x=np.array([{}], dtype=object))
    (tmp_path / "junk.npz").write_bytes(b"garbage, not a zip")
    (tmp_path / "empty.npz").write_bytes(b"")
    return {
        "one.npy": "a single .npy array, not an .npz archive",
        "cut.npz": "a damaged .npz archive",
        "raw.npz": "member 'x' is not an .npy array",
        "obj.npz": "array 'x': Object arrays cannot be loaded",
        "junk.npz": "not an .npz archive",
        "empty.npz": "empty file, not an .npz archive",
    }


def test_params_files_that_are_not_npz_archives(tmp_path, capsys):
    # A plain .npy, a truncated archive and a member in another format were tracebacks
    # (TypeError, BadZipFile) or silently loaded as bytes; a foreign file was "pickled data".
    from xrelay.tools import relay_build

    path = _write(tmp_path, ADD.replace("T", "f32"))
    for name, message in _bad_npz_files(tmp_path).items():
        params = str(tmp_path / name)
        assert relay_run.main([path, "--params", params]) == 1
        assert f"cannot read params '{params}': {message}" in _one_error(capsys, "relay-run")
        assert relay_opt.main([path, "--params", params]) == 1
        assert message in _one_error(capsys, "relay-opt")
        assert relay_opt.main([path, "-p", f'bind-params{{file="{params}"}}']) == 1
        assert f"bind-params: cannot read '{params}': {message}" in _one_error(capsys, "relay-opt")
        out = tmp_path / "c"
        assert relay_build.main([path, "--params", params, "-o", str(out)]) == 1
        assert message in _one_error(capsys, "relay-build") and not out.exists()
        if name.endswith(".npz"):
            assert relay_run.main([path, "--input", f"x={params}"]) == 1
            assert f"cannot read input '{params}'" in _one_error(capsys, "relay-run")


def test_loaders_of_weights_say_what_is_wrong(tmp_path):
    from xrelay.runtime.npz import NpzError, read_npz

    for name, message in _bad_npz_files(tmp_path).items():
        with pytest.raises(NpzError, match=message.replace(".", r"\.")):
            read_npz(tmp_path / name)
    assert read_npz((tmp_path / "ok.npz").read_bytes())["x"].shape == (2,)


# ---- relay-opt pass options ------------------------------------------------------------------

RELU_MAIN = """func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = relay.nn.relu %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
"""
PLAN_OPTIONS = "(options: algorithm, pools, alignment, time-limit, seed, pool-algorithms, report, plot)"


@pytest.mark.parametrize(
    "options, message",
    [
        ("plan-memory{time-limit=abc}", "option 'time-limit' takes a number, not 'abc'"),
        ("plan-memory{time-limit}", "option 'time-limit' takes a number, not ''"),
        ("plan-memory{seed=1.5}", "option 'seed' takes an integer, not '1.5'"),
        ("plan-memory{report=3}", "option 'report' takes true or false, not '3'"),
        ("plan-memory{nosuch=1}", "unknown option 'nosuch'"),
        ("fuse-ops{fuse-opt-level=1}", "unknown option 'fuse-opt-level' (options: opt-level, max-depth, max-function-args)"),
    ],
)
def test_bad_pass_options_name_the_pass_the_option_and_what_it_takes(tmp_path, capsys, options, message):
    assert relay_opt.main([_write(tmp_path, RELU_MAIN), "-p", options]) == 1
    err = _one_error(capsys, "relay-opt")
    assert f"pass '{options.split('{')[0]}': {message}" in err
    assert "Incompatible types" not in err and "<class" not in err
    if options.startswith("plan-memory"):
        assert err.rstrip().endswith(PLAN_OPTIONS)


@pytest.mark.parametrize("limit", ["-1", "-0.5"])
def test_negative_time_limit_is_refused(tmp_path, capsys, limit):
    path = _write(tmp_path, RELU_MAIN)
    assert relay_opt.main([path, "-p", f"fuse-ops,lower-to-memory,plan-memory{{time-limit={limit}}}"]) == 1
    err = _one_error(capsys, "relay-opt")
    assert f"plan-memory: time-limit must be a number of seconds >= 0 (0: the planner's default), not {float(limit)}" in err


def test_integer_time_limit_is_a_number(tmp_path, capsys):
    # xDSL alone refuses an int where the option is a float ("Incompatible types").
    path = _write(tmp_path, RELU_MAIN)
    out = tmp_path / "out.mlir"
    pipeline = "fuse-ops,lower-to-memory,plan-memory{time-limit=2 algorithm=optimal}"
    assert relay_opt.main([path, "-p", pipeline, "-o", str(out)]) == 0
    assert re.search(r"memory\.pool @global \{alignment = 16, size = \d+\}", out.read_text())


@pytest.mark.parametrize(
    ("op", "shape"),
    [
        ('%y = relay.zeros {shape = [8000000000], dtype = "float32"} : () -> tensor<8000000000xf32>', "8000000000"),
        ("%y = relay.tile %x {reps = [4000000000]} : (tensor<2xf32>) -> tensor<8000000000xf32>", "8000000000"),
        ("%y = relay.broadcast_to %x {shape = [4000000000, 2]} : (tensor<2xf32>) -> tensor<4000000000x2xf32>", "4000000000x2"),
    ],
)
def test_ops_making_tensors_larger_than_memory_are_refused_before_their_kernels(tmp_path, capsys, op, shape):
    # Small inputs, a 32 GB result: numpy's MemoryError (or, within overcommit, pages taken
    # until the OOM killer) without the check; the message names the op, its result and bytes.
    text = f"""func.func @main(%x: tensor<2xf32>) -> tensor<{shape}xf32> {{
  {op}
  func.return %y : tensor<{shape}xf32>
}}
"""
    assert relay_run.main([_write(tmp_path, text), "--random-inputs"]) == 1
    err = _one_error(capsys, "relay-run")
    assert f"(%y = relay.{op.split()[2].removeprefix('relay.')}): result 0 (tensor<{shape}xf32>) needs 32000000000 bytes" in err
    assert "MemoryError" not in err


@pytest.mark.parametrize(
    ("op", "inputs", "message"),
    [
        ("ConstantOfShape", {"s": [99999999999, 99999]}, "ConstantOfShape node 'y': its result (tensor<99999999999x99999xf32>) needs 39999599999600004 bytes"),
        ("Range", {"a": 0.0, "b": 1e12, "c": 1.0}, "Range node 'y': its result (tensor<999999995904xf32>) needs 3999999983616 bytes"),
        ("Range", {"a": 0.0, "b": 1.0, "c": 0.0}, "Range node 'y': 'delta' is 0"),
        ("Expand", {"c": np.ones(2, np.float32), "s": [4000000000, 2]}, "Expand node 'y': its folded result (tensor<4000000000x2xf32>) needs 32000000000 bytes"),
        ("Tile", {"c": np.ones(2, np.float32), "s": [4000000000]}, "Tile node 'y': its folded result (tensor<8000000000xf32>) needs 32000000000 bytes"),
    ],
)
def test_relay_import_refuses_constants_larger_than_memory_before_computing_them(tmp_path, capsys, op, inputs, message):
    # Constants the importer computes from constants (numpy's MemoryError was an "internal
    # error"; within overcommit, numpy would fill the pages until the OOM killer came).
    from onnx import TensorProto, helper, numpy_helper

    from xrelay.tools import relay_import

    inits = [
        numpy_helper.from_array(np.asarray(v, np.float32 if isinstance(v, float) else None), k)
        for k, v in inputs.items()
    ]
    node = helper.make_node(op, list(inputs), ["y"], **({"value": helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])} if op == "ConstantOfShape" else {}))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    path = _onnx(tmp_path, "m.onnx", [node], [], [y], inits)
    assert relay_import.main([path, "-o", str(tmp_path / "m.mlir")]) == 1
    err = _one_error(capsys, "relay-import")
    assert message in err and "MemoryError" not in err
    assert not (tmp_path / "m.mlir").exists()


def test_relay_import_names_an_unnamed_node_by_its_output(tmp_path, capsys):
    # Two Relu nodes feeding each other (a cycle: no topological order), neither named.
    from onnx import TensorProto, helper

    from xrelay.tools import relay_import

    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [2])
    nodes = [helper.make_node("Relu", ["b"], ["a"]), helper.make_node("Relu", ["a"], ["b"])]
    assert relay_import.main([_onnx(tmp_path, "m.onnx", nodes, [], [a])]) == 1
    err = _one_error(capsys, "relay-import")
    assert "Relu node 'a': input 'b' is not defined before use (a graph must list" in err


def test_pool_alignments_that_are_not_powers_of_two_are_refused(tmp_path, capsys):
    # They became memory.pool ops that do not verify: relay-opt printed the verifier's
    # Python traceback, relay-build the C compiler's "requested alignment is not a power of 2".
    from xrelay.tools import relay_build

    path = _write(tmp_path, ADD.replace("T", "f32"))
    argv = [path, "-p", 'fuse-ops,lower-to-memory,plan-memory{pools="sram:4096:3"}']
    assert relay_opt.main(argv) == 1
    assert "plan-memory: bad pool 'sram:4096:3': alignment 3 is not a power of two" in _one_error(capsys, "relay-opt")
    assert relay_build.main([path, "-o", str(tmp_path / "out"), "--pools", "sram:4096:3"]) == 1
    assert "bad pool 'sram:4096:3': alignment 3 is not a power of two" in _one_error(capsys, "relay-build")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("n", ["0", "-1"])
def test_relay_run_benchmark_needs_a_positive_count(tmp_path, capsys, n):
    # It ran one repeat and printed a table as if asked for it.
    path = _write(tmp_path, ADD.replace("T", "f32"))
    assert relay_run.main([path, "--random-inputs", "--benchmark", n]) == 1
    assert f"--benchmark takes a positive number of repeats, got {n}" in _one_error(capsys, "relay-run")


def test_xrelay_memory_limit_lowers_the_size_refused_before_allocating(tmp_path, capsys, monkeypatch):
    from xrelay.dialects.relay.dtypes import too_large

    monkeypatch.setenv("XRELAY_MEMORY_LIMIT", "1K")
    assert too_large("x", 1024) is None
    # in the unit that fits the size (was "(0.0 GiB)" for both)
    assert too_large("x", 1025) == "x needs 1025 bytes (1.0 KiB), more than XRELAY_MEMORY_LIMIT (1.0 KiB)"
    monkeypatch.setenv("XRELAY_MEMORY_LIMIT", "100")
    assert too_large("x", 101) == "x needs 101 bytes, more than XRELAY_MEMORY_LIMIT (100 bytes)"
    monkeypatch.setenv("XRELAY_MEMORY_LIMIT", "1K")
    text = CONSTANT.replace("SHAPE", "300").replace("T", "f32").replace("VALUE", "dense<1.0>")
    assert relay_run.main([_write(tmp_path, text)]) == 1
    assert "relay.constant of type tensor<300xf32> needs 1200 bytes" in _one_error(capsys, "relay-run")
    monkeypatch.setenv("XRELAY_MEMORY_LIMIT", "lots")
    with pytest.raises(ValueError, match="XRELAY_MEMORY_LIMIT must be a number of bytes"):
        too_large("x", 1)


def test_a_dyn_op_whose_run_time_shape_cannot_fit_is_refused_before_its_kernel(tmp_path, capsys):
    # Found by the fuzzer: the shape is known only from the pad widths at run time, and the
    # static kernel's np.pad raised MemoryError (64 GB).
    text = """func.func @main(%x: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<?x?xf32> {
  %w = relay.constant dense<[[1, 4294967296], [0, 2]]> : tensor<2x2xi64>
  %p = dyn.nn.pad %x, %w, %v : (tensor<2x3xf32>, tensor<2x2xi64>, tensor<f32>) -> tensor<?x?xf32>
  func.return %p : tensor<?x?xf32>
}
"""
    assert relay_run.main([_write(tmp_path, text), "--random-inputs"]) == 1
    err = _one_error(capsys, "relay-run")
    assert "dyn.nn.pad: its result tensor<4294967299x5xf32> needs 85899345980 bytes" in err
    assert "MemoryError" not in err
