"""ResNet-18 through the interpreter: same numbers as onnxruntime, and usable by check_semantics."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from xrelay.dialects.relay import RELAY_OPS
from xrelay.runtime.interpreter import Runner, run
from xrelay.testing.onnx_models import run_onnxruntime
from xrelay.testing.semantics import check_semantics

from .nets import resnet18


@pytest.fixture(scope="module")
def resnet():
    mod, params, model = resnet18(batch=1, image=224, seed=0)
    mod.verify()
    x = np.random.default_rng(7).standard_normal((1, 3, 224, 224)).astype("float32")
    return mod, params, model, x


def test_resnet18_matches_onnxruntime(resnet):
    mod, params, model, x = resnet
    n_convs = sum(isinstance(op, RELAY_OPS["nn.conv2d"]) for op in mod.walk())
    assert n_convs == 20
    logits, probs = run(mod, {"data": x}, params)
    ref_logits, ref_probs = run_onnxruntime(model, {"data": x})
    assert logits.shape == probs.shape == (1, 1000)
    assert logits.dtype == probs.dtype == np.float32
    scale = float(np.abs(ref_logits).max())
    np.testing.assert_allclose(logits, ref_logits, rtol=1e-4, atol=1e-5 * scale)
    np.testing.assert_allclose(probs, ref_probs, rtol=1e-3, atol=1e-6)
    assert abs(float(probs.sum()) - 1.0) < 1e-5
    assert int(logits.argmax()) == int(ref_logits.argmax())


def test_resnet18_is_deterministic_and_checks_a_pipeline(resnet):
    mod, params, _, x = resnet
    runner = Runner(mod)
    first = runner.run({"data": x}, params)
    again = runner.run([x], params)
    np.testing.assert_array_equal(first[0], again[0])
    before, after = check_semantics("cse,dce", mod, params=params)
    assert before[0].shape == (1, 1000)
    np.testing.assert_array_equal(before[1], after[1])
    assert isinstance(mod, ModuleOp)
