"""A 2-D nearest or bilinear ``image.grid_sample`` (a spatial transformer's sampling, an optical
flow's warp) runs as the C kernel over parts of its output rows: the reference kernel's bits for
every padding mode and ``align_corners``, also with grid points outside [-1, 1] and with two
threads, onnxruntime's values, nothing allocated outside the arena (the numpy reference held
its gathers there). Bicubic sampling keeps the reference kernel."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.testing.onnx_models import GraphBuilder, build_and_run

RNG = np.random.default_rng(3)


def _grid_sample(method, padding, align):
    x = relay.var("x", shape=(2, 5, 9, 11))
    g = relay.var("g", shape=(2, 2, 7, 13))
    y = relay.image.grid_sample(x, g, method=method, padding_mode=padding, align_corners=align)
    return xrelay.IRModule.from_expr(relay.Function([x, g], y))


def _run(mod, feeds, **options):
    m = xrelay.build(mod, None, backends=("native",), **options)
    m.set_input(**feeds)
    m.run()
    return m, m.get_output(0).numpy()


@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("method", ["nearest", "bilinear"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_kernel_gives_the_reference_bits(method, padding, align):
    mod = _grid_sample(method, padding, align)
    feeds = {"x": RNG.standard_normal((2, 5, 9, 11)).astype("float32"),
             "g": RNG.uniform(-1.7, 1.7, (2, 2, 7, 13)).astype("float32")}  # fmt: skip
    feeds["g"][0, :, 0, :4] = [[-1, 1, -1.0 / 11, 0.5], [1, -1, 1.0 / 9, -0.5]]  # edges, half pixels
    _, ref = _run(mod, feeds, use_c_kernels=False)
    for threads in (1, 2):
        m, got = _run(mod, feeds, threads=threads)
        (label,) = [lab for _, _, c in m.executor.steps for lab, _, _ in c.thunks if "grid_sample" in lab]
        assert m.executor.steps[-1][2].fast_ops == 1, label  # the C kernel, not the reference
        assert np.isfinite(got).all() and np.abs(got).max() > 0.1
        np.testing.assert_array_equal(got, ref)
        report = m.executor.outside_arena()
        assert (report.held_bytes, report.run_bytes) == (0, 0), report.steps
    feeds["g"] = feeds["g"] * 0.5
    assert np.abs(_run(mod, feeds)[1] - got).max() > 0.1  # (the output follows the grid)


def test_bicubic_keeps_the_reference_kernel():
    mod = _grid_sample("bicubic", "zeros", False)
    feeds = {"x": RNG.standard_normal((2, 5, 9, 11)).astype("float32"),
             "g": RNG.uniform(-1.2, 1.2, (2, 2, 7, 13)).astype("float32")}  # fmt: skip
    m, got = _run(mod, feeds)
    assert m.executor.steps[-1][2].fast_ops == 0
    np.testing.assert_array_equal(got, _run(mod, feeds, use_c_kernels=False)[1])


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_onnx_grid_sample_matches_onnxruntime(mode):
    """ONNX GridSample (opset 20) after a convolution, as a spatial transformer samples."""
    g = GraphBuilder(2)
    feat = g.conv("data", 3, 6, 3, bias=True)
    y = g.node("GridSample", [feat, "grid"], mode=mode, padding_mode="border", align_corners=0)
    model = g.model({"data": ([1, 3, 16, 16], np.float32), "grid": ([1, 10, 12, 2], np.float32)}, [y],
                    "grid_sample", opset=20)  # fmt: skip
    feeds = {"data": RNG.standard_normal((1, 3, 16, 16)).astype("float32"),
             "grid": RNG.uniform(-1.1, 1.1, (1, 10, 12, 2)).astype("float32")}  # fmt: skip
    m, got, ref = build_and_run(model, feeds)
    assert float(np.std(ref)) > 0.1
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    report = m.executor.outside_arena()
    assert (report.held_bytes, report.run_bytes) == (0, 0), report.steps
