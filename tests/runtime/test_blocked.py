"""Blocked programs (alter-op-layout's NCHW{c}c) build and run in the arena runtime."""

from __future__ import annotations

import numpy as np

import xrelay
from xrelay.relay import transform
from xrelay.runtime.interpreter import run
from xrelay.testing import resnet


def test_altered_resnet18_builds_and_matches_the_reference():
    mod, params = resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10)
    reference = mod.clone()
    with transform.PassContext(opt_level=3):
        mod = transform.Sequential(
            [transform.SimplifyInference(), transform.CanonicalizeOps(), transform.AlterOpLayout()]
        )(mod)
    m = xrelay.build(mod, params, opt_level=3)
    blocked = [
        op for op in m.program.walk() if op.name == "relay.nn.conv2d" and "c" in op.attrs["data_layout"]
    ]
    assert len(blocked) == 21  # every convolution of the network runs blocked
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype("float32")
    m.set_input("data", x)
    m.run()
    expect = run(reference.module, {"data": x}, params)[0]
    np.testing.assert_allclose(m.get_output(0), expect, rtol=1e-4, atol=1e-5)
