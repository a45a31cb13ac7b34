"""relay-run end to end through ``main([...])``: outputs, files, and one-line errors."""

from __future__ import annotations

import numpy as np
import pytest

from xrelay.tools.relay_run import main, summarize

TEXT = """
func.func @main(%x: tensor<2x3xf32>, %w: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2xi32>) {
  %c = relay.constant @bias : tensor<3xf32>
  %y = relay.add %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %z = relay.add %y, %c : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %a = relay.argmax %z {axis = [1]} : (tensor<2x3xf32>) -> tensor<2xi32>
  func.return %z, %a : tensor<2x3xf32>, tensor<2xi32>
}
"""


@pytest.fixture
def files(tmp_path):
    model = tmp_path / "model.mlir"
    model.write_text(TEXT)
    params = tmp_path / "params.npz"
    np.savez(params, bias=np.array([0.0, 1.0, 2.0], "float32"), w=np.ones(3, "float32"))
    x = tmp_path / "x.npy"
    np.save(x, np.arange(6, dtype="float32").reshape(2, 3))
    return tmp_path, str(model), str(params), str(x)


def test_run_prints_and_saves_outputs(files, capsys):
    tmp, model, params, x = files
    out = tmp / "out.npz"
    assert main([model, "--params", params, "--input", f"x={x}", "--output", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out.splitlines() == [
        "output 0: shape (2, 3) float32  min 1 max 8 mean 4.5  [1, 3, 5, 4, 6, 8]",
        "output 1: shape (2,) int32  min 2 max 2 mean 2  [2, 2]",
    ]
    with np.load(out) as saved:
        assert saved.files == ["output_0", "output_1"]
        np.testing.assert_array_equal(saved["output_0"], [[1, 3, 5], [4, 6, 8]])
        assert saved["output_1"].dtype == np.int32


def test_inputs_from_npz_and_random_inputs(files, capsys):
    tmp, model, params, _ = files
    inputs = tmp / "inputs.npz"
    np.savez(inputs, x=np.zeros((2, 3), "float32"))
    assert main([model, "--params", params, "--input", str(inputs)]) == 0
    assert capsys.readouterr().out.startswith("output 0: shape (2, 3) float32  min 1 max 3 ")
    # random inputs fill x (w comes from the params); the seed makes them reproducible
    assert main([model, "--params", params, "--random-inputs", "7"]) == 0
    first = capsys.readouterr().out
    assert main([model, "--params", params, "--random-inputs", "7"]) == 0
    assert capsys.readouterr().out == first
    assert main([model, "--params", params, "--random-inputs"]) == 0
    assert capsys.readouterr().out != first


@pytest.mark.parametrize(
    "args, message",
    [
        (["--params", "{params}"], "relay-run: error: missing input(s) x; @main takes: x: "),
        (
            ["--params", "{params}", "--input", "x={x}", "--input", "q={x}"],
            "relay-run: error: unknown input(s) 'q'; @main takes: x, w",
        ),
        (
            ["--params", "{params}", "--input", "x={bad}"],
            "relay-run: error: input 'x' has dtype float64, expected float32",
        ),
        (
            ["--params", "{params}", "--input", "x={x}", "--entry", "nope"],
            "relay-run: error: the module has no function @nope; functions: @main",
        ),
        (["--input", "x={x}"], "relay.constant @bias: no params were given"),
        (["--params", "{tmp}/none.npz"], "relay-run: error: cannot read params"),
        (["--input", "xyz"], "relay-run: error: bad --input 'xyz'"),
        (["--params", "{params}", "--input", "x={tmp}/no.npy"], "cannot read input"),
    ],
)
def test_errors_are_one_message_and_exit_1(files, capsys, args, message):
    tmp, model, params, x = files
    bad = tmp / "bad.npy"
    np.save(bad, np.zeros((2, 3)))
    args = [a.format(params=params, x=x, bad=bad, tmp=tmp) for a in args]
    assert main([model, *args]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err
    assert "Traceback" not in captured.err


def test_parse_error_has_file_line_and_column(tmp_path, capsys):
    model = tmp_path / "broken.mlir"
    model.write_text(
        "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %y = relay.nosuchop %x : (tensor<2xf32>) -> tensor<2xf32>\n"
        "  func.return %y : tensor<2xf32>\n}\n"
    )
    assert main([str(model), "--random-inputs"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{model}:2:")
    assert "relay.nosuchop is not registered" in err


def test_unknown_op_and_missing_file(tmp_path, capsys):
    model = tmp_path / "m.mlir"
    model.write_text(
        "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        '  %y = "test.op"(%x) : (tensor<2xf32>) -> tensor<2xf32>\n'
        "  func.return %y : tensor<2xf32>\n}\n"
    )
    assert main([str(model), "--random-inputs"]) == 1
    assert capsys.readouterr().err == (
        "relay-run: error: @main, op #1 (%y = test.op): no implementation for op 'test.op' "
        "(the interpreter runs relay, qnn, dyn, ref and adt ops, relay.constant, func.call/return, scf.if, relay.loop and relay.string ops)\n"
    )
    assert main([str(tmp_path / "absent.mlir")]) == 1
    assert "relay-run: error: cannot read" in capsys.readouterr().err


def test_verifier_error(tmp_path, capsys):
    model = tmp_path / "m.mlir"
    model.write_text(
        "func.func @main(%x: tensor<2xf32>) -> tensor<2xi32> {\n"
        "  %y = relay.nn.relu %x : (tensor<2xf32>) -> tensor<2xi32>\n"
        "  func.return %y : tensor<2xi32>\n}\n"
    )
    assert main([str(model), "--random-inputs"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"relay-run: error: {model}:2:3: relay.nn.relu: result 0 has type tensor<2xi32>")
    # --no-verify lets the interpreter find it
    assert main([str(model), "--random-inputs", "--no-verify"]) == 1
    assert "the op is ill-typed" in capsys.readouterr().err


def test_bad_arguments_exit_2(capsys):
    assert main([]) == 2
    assert "usage: relay-run" in capsys.readouterr().err


def test_summarize():
    assert (
        summarize(np.array([True, False, True])) == "shape (3,) bool  true 2/3  [True, False, True]"
    )
    assert summarize(np.zeros((0, 2), "float32")) == "shape (0, 2) float32  (empty)"
    line = summarize(np.array([1.0, np.inf, -2.0, 0.5, 0.25, 3.0, 7.0], "float64"))
    assert line == (
        "shape (7,) float64  min -2 max 7 mean 1.625  non-finite 1  [1, inf, -2, 0.5, 0.25, 3, ...]"
    )
