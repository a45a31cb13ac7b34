"""``relay-import`` end to end through ``main([...])``: text, params, round trip, errors."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.dialects.relay import params_source
from xrelay.runtime.interpreter import run
from xrelay.testing.onnx_models import GraphBuilder, make_model, mlp, run_onnxruntime
from xrelay.tools.relay_import import main


@pytest.fixture
def small_cnn(tmp_path):
    g = GraphBuilder(3)
    x = g.relu(g.bn(g.conv("data", 3, 4, 3, name="conv0"), 4))
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x])])
    x = g.gemm(x, 4, 5, name="fc")
    model = g.model({"data": (["N", 3, 8, 8], np.float32)}, [x], "small_cnn")
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    return model, path


def _parse(text: str, params=None):
    with params_source(params):
        return Parser(make_context(), text).parse_module()


def _ref(model, batch=2):
    x = np.random.default_rng(0).standard_normal((batch, 3, 8, 8)).astype(np.float32)
    return x, run_onnxruntime(model, {"data": x})[0]


def test_params_as_main_parameters(small_cnn, tmp_path):
    model, path = small_cnn
    out, npz = tmp_path / "m.mlir", tmp_path / "p.npz"
    assert main([str(path), "-o", str(out), "--params", str(npz), "--shape", "data=2,3,8,8"]) == 0
    text = out.read_text()
    assert "func.func @main(%data: tensor<2x3x8x8xf32>, %conv0_weight: tensor<4x3x3x3xf32>" in text
    assert "dense<" not in text, "weights must stay out of the text"
    params = dict(np.load(npz))
    assert set(params) >= {"conv0_weight", "fc_weight", "fc_bias", "bn_gamma"}
    x, want = _ref(model)
    got = run(_parse(text), {"data": x}, params)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_frozen_params_external(small_cnn, tmp_path):
    model, path = small_cnn
    out, npz = tmp_path / "m.mlir", tmp_path / "p.npz"
    assert main([str(path), "-o", str(out), "--params", str(npz), "--freeze-params", "--shape", "data=2,3,8,8"]) == 0
    text = out.read_text()
    assert "relay.constant @conv0_weight : tensor<4x3x3x3xf32>" in text
    assert "func.func @main(%data: tensor<2x3x8x8xf32>) ->" in text
    params = dict(np.load(npz))
    x, want = _ref(model)
    got = run(_parse(text, params), {"data": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_frozen_params_inline_to_stdout(small_cnn, capsys):
    model, path = small_cnn
    assert main([str(path), "--freeze-params", "--shape", "data=2,3,8,8"]) == 0
    text = capsys.readouterr().out
    assert "relay.constant @conv0_weight dense<" in text
    x, want = _ref(model)
    np.testing.assert_allclose(run(_parse(text), {"data": x})[0], want, rtol=1e-5, atol=1e-5)


def test_dynamic_batch_kept_without_shape(small_cnn, tmp_path):
    _, path = small_cnn
    out = tmp_path / "m.mlir"
    assert main([str(path), "-o", str(out), "--freeze-params"]) == 0
    assert "%data: tensor<?x3x8x8xf32>" in out.read_text()


def _error(capsys, argv) -> str:
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("relay-import: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


def test_missing_params_is_an_error(small_cnn, capsys):
    _, path = small_cnn
    err = _error(capsys, [str(path)])
    assert "--params" in err and "--freeze-params" in err


def test_errors(small_cnn, tmp_path, capsys):
    _, path = small_cnn
    assert "no such ONNX file" in _error(capsys, [str(tmp_path / "nope.onnx"), "--freeze-params"])
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    assert "cannot read ONNX model" in _error(capsys, [str(bad), "--freeze-params"])
    assert "data=1,x" in _error(capsys, [str(path), "--freeze-params", "--shape", "data=1,x"])
    assert "unknown input(s) image" in _error(capsys, [str(path), "--freeze-params", "--shape", "image=1,3,8,8"])
    assert "Conv" in _error(capsys, [str(path), "--freeze-params", "--shape", "data=1,4,8,8"])


def test_unsupported_ops_listed(tmp_path, capsys):
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="r"),
        helper.make_node("HannMixer", ["a"], ["b"], name="hm1"),
        helper.make_node("NoSuchOperator", ["b"], ["c"], name="nz"),
        helper.make_node("HannMixer", ["a"], ["d"], name="hm2"),
    ]
    model = make_model(nodes, {"x": ((2, 3), np.float32)}, {"c": np.float32, "d": np.float32}, check=False)
    path = tmp_path / "u.onnx"
    onnx.save(model, path)
    err = _error(capsys, [str(path), "--freeze-params"])
    assert "HannMixer (hm1, hm2)" in err and "NoSuchOperator (nz)" in err and "3 node(s)" in err


def test_no_weights_needs_no_params(tmp_path, capsys):
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], {"x": ((2, 3), np.float32)}, ["y"])
    path = tmp_path / "r.onnx"
    onnx.save(model, path)
    assert main([str(path)]) == 0
    assert "relay.nn.relu %x" in capsys.readouterr().out


def test_mlp_round_trip_via_stdout(tmp_path, capsys):
    model = mlp(batch=3)
    path = tmp_path / "mlp.onnx"
    onnx.save(model, path)
    npz = tmp_path / "w.npz"
    assert main([str(path), "--params", str(npz)]) == 0
    text = capsys.readouterr().out
    x = np.random.default_rng(1).standard_normal((3, 1, 28, 28)).astype(np.float32)
    got = run(_parse(text), {"data": x}, dict(np.load(npz)))[0]
    np.testing.assert_allclose(got, run_onnxruntime(model, {"data": x})[0], rtol=1e-5, atol=1e-6)
