"""Relay's built-in ResNet (``xrelay.testing.resnet``) against the same network in ONNX.

``relay_resnet_v2`` rebuilds Relay's pre-activation structure with Relay's parameter names;
with the same (randomised, so batch norms are not the identity) parameters, the workload run
by the interpreter, onnxruntime on the ONNX twin and the imported twin all agree
(float32, rtol 1e-4, atol 1e-5 on softmax outputs).
"""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay.frontends import from_onnx
from xrelay.testing import onnx_models as M
from xrelay.testing.resnet import get_workload


def _randomised(params, seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for k, v in params.items():
        v = np.asarray(v)
        if k.endswith(("_gamma", "_moving_var")):
            v = rng.uniform(0.5, 1.5, v.shape)
        elif k.endswith(("_beta", "_moving_mean", "_bias")):
            v = rng.normal(0.0, 0.1, v.shape)
        out[k] = v.astype(np.float32)
    return out


@pytest.mark.parametrize("image", [32, 64])  # 3x3 stem (<= 32 px) and 7x7 stem + max pool
def test_relay_resnet18_matches_onnx_twin(image):
    shape = (3, image, image)
    mod, params = get_workload(batch_size=2, num_classes=10, num_layers=18, image_shape=shape)
    params = _randomised(params)
    model = M.relay_resnet_v2(18, 2, shape, 10, params)
    x = np.random.default_rng(1).standard_normal((2, *shape)).astype(np.float32)
    want = M.run_onnxruntime(model, {"data": x})[0]
    got = xrelay.run(mod, {"data": x}, params)[0]
    assert got.shape == want.shape == (2, 10)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    # the imported twin: the same parameter names, the same numbers
    imod, iparams = from_onnx(model)
    assert set(iparams) - set(params) == {"bn_data_gamma_ones"}
    assert all(np.array_equal(iparams[k], params[k]) for k in iparams if k in params)
    np.testing.assert_allclose(xrelay.run(imod, {"data": x}, iparams)[0], want, rtol=1e-4, atol=1e-5)


def test_relay_resnet_v2_default_params_and_errors():
    model = M.relay_resnet_v2(18, 1, (3, 32, 32), 10)
    names = {t.name for t in model.graph.initializer}
    assert {"conv0_weight", "stage4_unit1_sc_weight", "fc1_weight", "bn_data_moving_var"} <= names
    assert "bn0_gamma" not in names  # small inputs have no bn0 / max pool stem
    with pytest.raises(KeyError, match="bn_data_beta"):
        M.relay_resnet_v2(18, 1, (3, 32, 32), 10, params={})
    with pytest.raises(ValueError, match="no ResNet with 19 layers"):
        M.relay_resnet_v2(19, 1, (3, 64, 64), 10, params={})
