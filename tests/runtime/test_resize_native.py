"""A nearest-neighbour upsampling by whole factors (``nn.Upsample(scale_factor=k)`` as torch
exports it: HRNet's fuse layers, feature pyramids) runs as one broadcasting copy into its
destination, with the residual add and ReLU fused after it in place: nothing allocated
outside the arena (the reference kernel's gathers were), the values of onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay.frontends.onnx import from_onnx
from xrelay.testing.onnx_models import GraphBuilder, run_onnxruntime

RNG = np.random.default_rng(0)


def _model(scale, mode, nearest_mode, conv):
    g = GraphBuilder(1)
    small = g.conv("data", 4, 8, 1, bias=True) if conv else g.node("Tanh", ["data"])
    up = g.node("Resize", [small, "", g.const(np.array([1, 1, scale, scale], np.float32))], mode="nearest",
                coordinate_transformation_mode=mode, nearest_mode=nearest_mode)  # fmt: skip
    big = g.node("Sigmoid", ["other"])
    y = g.node("Relu", [g.node("Add", [up, big])])
    size = 6
    c = 8 if conv else 4
    out = int(size * scale)
    return g.model({"data": ([1, 4, size, size], np.float32), "other": ([1, c, out, out], np.float32)}, [y],
                   "resize", opset=20), out, c  # fmt: skip


@pytest.mark.parametrize("conv", [True, False])  # channels-last after a convolution, or NCHW
@pytest.mark.parametrize("scale,mode,nearest", [(2.0, "asymmetric", "floor"), (4.0, "asymmetric", "floor"),
                                                (3.0, "half_pixel", "round_prefer_floor"), (1.5, "asymmetric", "floor")])
def test_nearest_upsampling_runs_inside_the_arena(scale, mode, nearest, conv):
    model, out, c = _model(scale, mode, nearest, conv)
    x = {"data": RNG.standard_normal((1, 4, 6, 6)).astype("float32"),
         "other": RNG.standard_normal((1, c, out, out)).astype("float32")}  # fmt: skip
    mod, params = from_onnx(model)
    m = xrelay.build(mod, params, opt_level=3, threads=1)
    m.set_input(**x)
    m.run()
    got = m.get_output(0).numpy()
    ref = run_onnxruntime(model, x)[0]
    assert got.shape == ref.shape and float(np.std(ref)) > 0.1
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    report = m.executor.outside_arena()
    if scale == int(scale):  # a whole factor: a copy (1.5 gathers: checked for its values only)
        assert (report.held_bytes, report.run_bytes) == (0, 0), report.steps
