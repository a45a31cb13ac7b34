"""Hostile input, second round (issue 29): attribute values that do not fit their type, float
attributes of widths xrelay has no dtype for, ranks above 64, sizes beyond 2**63 bytes,
xdsl-opt's targets in relay-opt, overflowing shapes in TVM parameter files and Relay-text
metadata, metadata of the wrong JSON types. Each is one clear error (with file:line:col where
there is text), exit 1, no traceback."""

from __future__ import annotations

import base64
import struct

import numpy as np
import pytest

from xrelay.dialects.relay.base import RelayTypeError
from xrelay.relay.text_metadata import _MAGIC, MetadataError, read_metadata
from xrelay.runtime.params import ParamsFormatError, load_param_dict, save_param_dict
from xrelay.tools import relay_build, relay_opt, relay_run


def _write(tmp_path, text: str, name: str = "m.mlir") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _one_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    return err


SOFTMAX = """func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = OP
  func.return %0 : tensor<2x3xf32>
}
"""
BIG = "100000000000000000000000000"


@pytest.mark.parametrize(
    ("op", "column", "message"),
    [
        (f"relay.nn.softmax %x {{axis = {BIG}}} : (tensor<2x3xf32>) -> tensor<2x3xf32>", 36,
         f"attribute 'axis' = {BIG} does not fit its type (64-bit integers)"),
        (f'"relay.nn.softmax"(%x) {{axis = {BIG} : i64}} : (tensor<2x3xf32>) -> tensor<2x3xf32>', 39,
         f"Integer value {BIG} is out of range for type i64"),
        ('"relay.nn.softmax"(%x) {axis = 300 : i8} : (tensor<2x3xf32>) -> tensor<2x3xf32>', 39,
         "Integer value 300 is out of range for type i8"),
        ('"relay.nn.softmax"(%x) {axis = 1.0 : f80} : (tensor<2x3xf32>) -> tensor<2x3xf32>', 39,
         "f80 values are not supported (float attributes are f16, bf16, f32 or f64)"),
        ('"relay.nn.softmax"(%x) {axis = 1.0 : f128} : (tensor<2x3xf32>) -> tensor<2x3xf32>', 39,
         "f128 values are not supported"),
        ('"relay.nn.softmax"(%x) {axis = 0x1234 : f80} : (tensor<2x3xf32>) -> tensor<2x3xf32>', 39,
         "float values of this width are not supported"),
        ('"relay.nn.softmax"(%x) {axis = array<f80: 1.0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>', 44,
         "float values of this width are not supported"),
        ('"relay.nn.softmax"(%x) {axis = dense<1.0> : tensor<2xf80>} : (tensor<2x3xf32>) -> tensor<2x3xf32>',
         44, "float values of this width are not supported"),
        ("relay.nn.softmax %x {axis = -1} : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
         "  %c = arith.constant 1.0 : f80", 23, "f80 values are not supported"),
    ],
)
@pytest.mark.parametrize("tool", ["relay-opt", "relay-run"])
def test_attribute_values_that_do_not_fit_are_located(tmp_path, capsys, op, column, message, tool):
    path = _write(tmp_path, SOFTMAX.replace("OP", op))
    if tool == "relay-opt":
        assert relay_opt.main([path]) == 1
    else:
        assert relay_run.main([path, "--random-inputs"]) == 1
    err = _one_error(capsys)
    line = 3 if "arith.constant" in op else 2
    assert err.startswith(f"{path}:{line}:{column}\n"), err
    assert message in err


def test_relay_text_attribute_too_large_is_located(tmp_path, capsys):
    text = f"def @main(%x: Tensor[(2, 3), float32]) {{\n  nn.softmax(%x, axis={BIG})\n}}\n"
    path = _write(tmp_path, text, "m.relay")
    assert relay_opt.main([path]) == 1
    err = _one_error(capsys)
    assert err.startswith(f"relay-opt: error: {path}:2:13: attribute 'axis' = {BIG} does not fit")


def test_python_api_attribute_too_large_is_a_type_error():
    from xrelay import relay

    x = relay.var("x", shape=(2, 3))
    with pytest.raises(RelayTypeError, match=f"attribute 'axis' = {BIG} does not fit its type"):
        relay.nn.softmax(x, axis=10**26)
    with pytest.raises(RelayTypeError, match="attribute 'alpha' = .* does not fit its type"):
        relay.nn.leaky_relu(x, alpha=10**400)


RANK65 = "x".join(["1"] * 65)


@pytest.mark.parametrize("argv", [["--random-inputs"], ["--random-inputs", "--plan", "greedy-by-size"]])
def test_rank_above_64_is_refused_by_relay_run(tmp_path, capsys, argv):
    t = f"tensor<{RANK65}xf32>"
    path = _write(tmp_path, f"func.func @main(%x: {t}) -> {t} {{\n"
                            f"  %0 = relay.nn.relu %x : ({t}) -> {t}\n  func.return %0 : {t}\n}}\n")  # fmt: skip
    assert relay_run.main([path, *argv]) == 1
    err = _one_error(capsys)
    assert err == f"relay-run: error: input 'x' ({t}) has 65 dimensions, more than the 64 a tensor can have\n"


def test_rank_above_64_is_refused_by_relay_build(tmp_path, capsys):
    t = f"tensor<{RANK65}xf32>"
    path = _write(tmp_path, f"func.func @main(%x: {t}) -> {t} {{\n"
                            f"  %0 = relay.nn.relu %x : ({t}) -> {t}\n  func.return %0 : {t}\n}}\n")  # fmt: skip
    assert relay_build.main([path, "-o", str(tmp_path / "out")]) == 1
    err = _one_error(capsys)
    assert "has 65 dimensions, more than the 64 a tensor can have" in err and err.count("\n") == 1


def _huge(n: int, live: int) -> str:
    t = f"tensor<{n}x4xf32>"
    lines = ["func.func @main(%x: tensor<1x1xf32>) -> tensor<f32> {",
             f"  %0 = relay.broadcast_to %x {{shape = [{n}, 4]}} : (tensor<1x1xf32>) -> {t}"]  # fmt: skip
    for i in range(1, live):
        lines.append(f"  %{i} = relay.exp %{i - 1} : ({t}) -> {t}")
    acc = f"%{live - 1}"
    for i in range(live - 1):
        lines.append(f"  %a{i} = relay.add {acc}, %{i} : ({t}, {t}) -> {t}")
        acc = f"%a{i}"
    lines += [f"  %s = relay.sum {acc} : ({t}) -> tensor<f32>", "  func.return %s : tensor<f32>", "}", ""]
    return "\n".join(lines)


@pytest.mark.parametrize(
    ("n", "live", "message"),
    [
        # one tensor of 2**64 bytes
        (1 << 62, 2, "lower-to-memory: a tensor<4611686018427387904x4xf32> needs 73786976294838206464 "
                     "bytes, more than a 64-bit size can hold"),
        # four tensors of 2**62 bytes live at once: the pool needs 2**64
        (1 << 58, 4, "plan-memory: pool 'global' needs 23058430092136939520 bytes, more than a 64-bit "
                     "size can hold"),
    ],
)
def test_sizes_beyond_2_63_bytes_say_what_they_need(tmp_path, capsys, n, live, message):
    path = _write(tmp_path, _huge(n, live))
    assert relay_opt.main([path, "-p", "lower-to-memory,plan-memory"]) == 1
    err = _one_error(capsys)
    assert err == f"relay-opt: error: {message}\n"
    assert relay_run.main([path, "--random-inputs", "--plan", "greedy-by-size", "--opt-level", "0"]) == 1
    err = _one_error(capsys)
    assert "needs" in err and "more than a 64-bit size can hold" in err and err.count("\n") == 1


def test_relay_opt_refuses_targets_that_do_not_apply(tmp_path, capsys):
    path = _write(tmp_path, SOFTMAX.replace("OP", "relay.nn.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>"))
    for target in ("llvm", "x86-asm", "riscv-asm", "wat"):
        assert relay_opt.main([path, "-t", target]) == 1
        err = _one_error(capsys)
        assert err == (f"relay-opt: error: -t {target}: relay-opt writes MLIR text only (-t mlir; "
                       "--output-format relay for Relay's text); relay-build emits C\n")  # fmt: skip
    assert relay_opt.main([path, "-t", "mlir"]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit):
        relay_opt.RelayOptMain(["--help"])
    help_text = capsys.readouterr().out
    assert "Available targets are: mlir\n" in help_text and "llvm" not in help_text


def _ndarray(shape, nbytes: int, data: bytes = b"", magic: int = _MAGIC) -> bytes:
    head = struct.pack("<QQiii", magic, 0, 1, 0, len(shape)) + struct.pack("<BBH", 2, 32, 1)
    return head + struct.pack(f"<{len(shape)}q", *shape) + struct.pack("<q", nbytes) + data


def test_params_file_with_an_overflowing_shape_is_refused():
    good = bytes(save_param_dict({"w": np.ones((2, 2), "float32")}))
    # the array's header starts after the list header, the name and the array count
    start = 16 + 8 + 8 + 1 + 8
    arr = _ndarray((1 << 32, 1 << 32), 0, magic=struct.unpack_from("<Q", good, start)[0])
    with pytest.raises(ParamsFormatError, match=r"0 data bytes, but float32 \(4294967296, 4294967296\) "
                       r"needs 73786976294838206464"):  # fmt: skip
        load_param_dict(good[:start] + arr)


def _metadata(nodes=None, arrays=None, **extra) -> str:
    import json

    doc = {"root": 1, "nodes": nodes if nodes is not None else [
        {"type_key": ""}, {"type_key": "Map", "keys": ["relay.Constant"], "data": [2]},
        {"type_key": "Array", "data": [3]},
        {"type_key": "relay.Constant", "attrs": {"data": "0"}}],
        "b64ndarrays": arrays if arrays is not None else [], **extra}  # fmt: skip
    return json.dumps(doc)


def test_metadata_array_with_an_overflowing_shape_is_refused():
    blob = base64.b64encode(_ndarray((1 << 32, 1 << 32), 0)).decode()
    with pytest.raises(MetadataError, match=r"NDArray of shape \(4294967296, 4294967296\)"):
        read_metadata(_metadata(arrays=[blob]))


MAP = {"type_key": "Map", "keys": ["relay.Constant"], "data": [2]}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_metadata(nodes={"1": MAP}), "the metadata's 'nodes' is an object, expected a list"),
        (_metadata(nodes=[{}, {"type_key": "Map", "keys": 5, "data": [2]}]),
         "the metadata Map's 'keys' is an integer, expected a list"),
        (_metadata(nodes=[{}, {"type_key": "Map", "keys": [["x"]], "data": [2]},
                          {"type_key": "Array", "data": []}]), "a metadata Map key is a list, expected a string"),
        (_metadata(nodes=[{}, MAP, {"type_key": "Array", "data": 7}]),
         "the data of metadata entry 'relay.Constant' is an integer, expected a list"),
        (_metadata(nodes=[{}, MAP, {"type_key": "Array", "data": [3]},
                          {"type_key": "relay.Constant", "attrs": 5}]),
         "the attrs of meta[relay.Constant][0] is an integer, expected an object"),
        (_metadata(arrays=[5]), "b64ndarrays[0] is an integer, expected a string"),
        (_metadata(arrays={"0": "x"}), "the metadata's 'b64ndarrays' is an object, expected a list"),
        (_metadata(arrays=[], **{"xrelay.constant_names": {"a": 1}}),
         "the metadata's 'xrelay.constant_names' is an object, expected a list"),
        (_metadata(nodes=[{}, MAP, [1]]), "metadata node 2 is a list, expected an object"),
    ],
)
def test_metadata_of_the_wrong_json_types_is_a_located_error(tmp_path, capsys, text, message):
    with pytest.raises(MetadataError, match=f"^{message.replace('[', '.').replace(']', '.')}"):
        read_metadata(text)
    relay = ('#[version = "0.0.5"]\ndef @main(%x: Tensor[(2), float32]) {\n'
             f"  add(%x, meta[relay.Constant][0])\n}}\n#[metadata]\n{text}\n")  # fmt: skip
    path = _write(tmp_path, relay, "m.relay")
    assert relay_opt.main([path]) == 1
    assert _one_error(capsys).startswith(f"relay-opt: error: {path}:5:1: {message}\n#[metadata]\n")
