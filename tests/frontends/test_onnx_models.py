"""Whole models: import the built-in ONNX models and compare with onnxruntime.

Tolerance: float32, rtol = 1e-4 and atol = 1e-4 x max|reference| (deep networks accumulate
rounding differences proportional to the output's scale). Image sizes are reduced (64x64)
and BERT is small (seq 16, hidden 64, 4 heads) to keep the suite fast; ResNet-50 at 224x224 is
only imported and checked for shapes and structure.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from xrelay.frontends import from_onnx, import_onnx
from xrelay.runtime.interpreter import run
from xrelay.testing import onnx_models as M


def _compare(model, inputs, freeze_params=False):
    onnx.checker.check_model(model)
    want = M.run_onnxruntime(model, inputs)
    mod, params = from_onnx(model, freeze_params=freeze_params)
    got = run(mod, inputs, params)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * float(np.abs(w).max()))
    return mod, params


def _ops(mod) -> list[str]:
    module = getattr(mod, "module", mod)
    return [op.name for op in next(iter(module.ops)).body.block.ops]


def _image(batch=1, size=64):
    return {"data": np.random.default_rng(7).standard_normal((batch, 3, size, size)).astype(np.float32)}


def test_resnet18():
    mod, params = _compare(M.resnet18(image=64), _image())
    ops = _ops(mod)
    assert ops.count("relay.nn.conv2d") == 20 and ops.count("relay.nn.batch_norm") == 20
    assert ops.count("relay.add") == 8 and "relay.nn.dense" in ops and "relay.nn.bias_add" in ops
    assert "conv1_weight" in params and params["conv1_weight"].shape == (64, 3, 7, 7)


def test_resnet18_frozen_batch2():
    mod, params = _compare(M.resnet18(batch=2, image=32, num_classes=10), _image(2, 32), freeze_params=True)
    assert params == {}
    assert _ops(mod).count("relay.constant") > 60


def test_mobilenet_v2():
    mod, _ = _compare(M.mobilenet_v2(image=64), _image())
    ops = _ops(mod)
    assert ops.count("relay.clip") == 35
    module = getattr(mod, "module", mod)
    groups = [op.attrs["groups"] for op in next(iter(module.ops)).body.block.ops if op.name == "relay.nn.conv2d"]
    assert sum(g > 1 for g in groups) == 17  # one depthwise conv per inverted residual


def test_mlp():
    x = np.random.default_rng(0).standard_normal((4, 1, 28, 28)).astype(np.float32)
    mod, _ = _compare(M.mlp(batch=4), {"data": x})
    assert _ops(mod) == [
        "relay.nn.batch_flatten",
        "relay.nn.dense", "relay.nn.bias_add", "relay.nn.relu",
        "relay.nn.dense", "relay.nn.bias_add", "relay.nn.relu",
        "relay.nn.dense", "relay.nn.bias_add",
        "relay.nn.softmax", "func.return",
    ]


def test_bert_layer():
    model = M.bert_layer(batch=2, seq=16, hidden=64, heads=4)
    mod, _ = _compare(model, M.bert_inputs(batch=2, seq=16, hidden=64))
    ops = _ops(mod)
    # the exporter's Shape -> Gather -> Concat chain was folded: static reshapes, no shape_of
    assert "relay.shape_of" not in ops and "relay.concatenate" not in ops
    module = getattr(mod, "module", mod)
    shapes = [op.attrs["newshape"] for op in next(iter(module.ops)).body.block.ops if op.name == "relay.reshape"]
    assert (2, 16, 4, 16) in shapes and all(-1 not in s and 0 not in s for s in shapes)
    assert ops.count("relay.nn.layer_norm") == 2 and ops.count("relay.erf") == 1
    assert ops.count("relay.nn.batch_matmul") == 2


def test_resnet50_imports_with_shapes():
    imp = import_onnx(M.resnet50())
    func = next(iter(imp.module.ops))
    assert [str(t) for t in func.function_type.outputs.data] == ["tensor<1x1000xf32>"]
    ops = [op.name for op in func.body.block.ops]
    assert ops.count("relay.nn.conv2d") == 53 and ops.count("relay.add") == 16
    assert len(imp.params) == 53 + 53 * 4 + 2


@pytest.mark.parametrize("builder", [M.resnet18, M.mobilenet_v2, M.mlp, M.bert_layer])
def test_builders_are_deterministic(builder):
    kw = {"seq": 8, "hidden": 32, "heads": 2} if builder is M.bert_layer else {}
    assert builder(**kw).SerializeToString() == builder(**kw).SerializeToString()


def test_bert_layer_text_round_trip_with_external_weights():
    from xdsl.parser import Parser

    from xrelay.dialects import make_context
    from xrelay.dialects.relay import params_source, print_options

    model = M.bert_layer(seq=8, hidden=32, heads=2)
    imp = import_onnx(model, freeze_params=True)
    weights: dict[str, np.ndarray] = {}
    with print_options(external=weights):
        text = str(imp.module)
    assert "relay.constant @query.weight : tensor<32x32xf32>" in text
    assert "epsilon = 1.0e-12" in text
    with params_source(weights):
        module = Parser(make_context(), text).parse_module()
    module.verify()
    inputs = M.bert_inputs(seq=8, hidden=32)
    want = M.run_onnxruntime(model, inputs)[0]
    np.testing.assert_allclose(run(module, inputs)[0], want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2", "bert_layer"])
def test_full_size_models_run_in_onnxruntime_and_import(name):
    model = getattr(M, name)()
    onnx.checker.check_model(model)
    if name == "bert_layer":
        inputs, out_type = M.bert_inputs(), "tensor<1x128x768xf32>"
    else:
        inputs, out_type = _image(size=224), "tensor<1x1000xf32>"
    (out,) = M.run_onnxruntime(model, inputs)
    # meaningful scales: neither vanishing nor exploding through the depth
    assert np.isfinite(out).all() and 0.5 < float(out.std()) < 50.0
    func = next(iter(import_onnx(model).module.ops))
    assert [str(t) for t in func.function_type.outputs.data] == [out_type]


def test_importer_covers_the_required_operators():
    from xrelay.frontends import SUPPORTED_OPS

    required = """Conv ConvTranspose BatchNormalization Relu Clip LeakyRelu Sigmoid Tanh Erf MaxPool
    AveragePool GlobalAveragePool Gemm MatMul Add Sub Mul Div Pow Sqrt Reshape Flatten Transpose
    Concat Split Squeeze Unsqueeze Slice Gather Softmax ReduceMean ReduceSum Cast Constant
    Identity Dropout Pad Shape LayerNormalization""".split()
    assert [op for op in required if op not in SUPPORTED_OPS] == []
