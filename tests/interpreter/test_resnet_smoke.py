"""ResNet-18 through the interpreter: same numbers as onnxruntime, and usable by check_semantics."""

from __future__ import annotations

import numpy as np
import pytest

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
    np.testing.assert_allclose(probs, ref_probs, rtol=1e-4, atol=1e-6)
    assert abs(float(probs.sum()) - 1.0) < 1e-5
    assert int(logits.argmax()) == int(ref_logits.argmax())


def test_resnet18_is_deterministic(resnet):
    mod, params, _, x = resnet
    runner = Runner(mod)
    first = runner.run({"data": x}, params)
    again = runner.run([x], params)
    np.testing.assert_array_equal(first[0], again[0])
    np.testing.assert_array_equal(first[1], again[1])


def test_relay_resnet18_workload_matches_onnxruntime_and_survives_fusion():
    """Relay's own ResNet-18 workload (an IRModule with weights as params)."""
    import xrelay
    from xrelay.testing.onnx_models import relay_resnet_v2
    from xrelay.testing.resnet import get_workload

    mod, params = get_workload(batch_size=1, num_layers=18, image_shape=(3, 224, 224))
    x = np.random.default_rng(3).standard_normal((1, 3, 224, 224)).astype("float32")
    (probs,) = xrelay.run(mod, {"data": x}, params)
    (ref,) = run_onnxruntime(relay_resnet_v2(params=params), {"data": x})
    assert probs.shape == (1, 1000) and probs.dtype == np.float32
    np.testing.assert_allclose(probs, ref, rtol=1e-4, atol=1e-9)
    # fused modules call private primitive functions; the interpreter runs both forms alike
    before, after = check_semantics("simplify-inference,fuse-ops", mod, params=params, atol=1e-9)
    assert before[0].shape == after[0].shape == (1, 1000)
