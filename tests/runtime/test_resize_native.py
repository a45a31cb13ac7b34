"""A nearest-neighbour upsampling by whole factors (``nn.Upsample(scale_factor=k)`` as torch
exports it: HRNet's fuse layers, feature pyramids) runs as one broadcasting copy into its
destination, with the residual add and ReLU fused after it in place: nothing allocated
outside the arena (the reference kernel's gathers were), the values of onnxruntime. By any
other sizes (GhostNetV2's 3 -> 7, downscales, half-pixel rounding) it is one gather over H
and W as one axis: the same.

A linear or cubic resize (CrossViT's bicubic 240 -> 224) runs as two matrix products with the
reference kernel's own interpolation matrices, through a planned workspace: the reference's
values, nothing allocated per run. From ``TAPS_ELEMENTS`` outputs, the 2 or 4 taps of each
output index (the bands of those matrices) run in C instead."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.backend.build import build_program
from xrelay.frontends.onnx import from_onnx
from xrelay.runtime.executor import Executor
from xrelay.testing.onnx_models import GraphBuilder, build_and_run, run_onnxruntime

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
    m, got, ref = build_and_run(model, x, threads=1)
    assert got.shape == ref.shape and float(np.std(ref)) > 0.1
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    report = m.executor.outside_arena()
    assert (report.held_bytes, report.run_bytes) == (0, 0), report.steps


@pytest.mark.parametrize("conv", [True, False])
@pytest.mark.parametrize("size,mode,nearest", [
    ((7, 7), "asymmetric", "floor"),  # GhostNetV2's F.interpolate(size=...) of a 3x3 map
    ((4, 9), "half_pixel", "round_prefer_floor"),  # down in H, up in W
    ((5, 5), "align_corners", "round_prefer_ceil"),
    ((11, 2), "pytorch_half_pixel", "ceil"),
])  # fmt: skip
def test_nearest_resize_by_any_size_is_one_gather_in_the_arena(size, mode, nearest, conv):
    g = GraphBuilder(1)
    small = g.conv("data", 4, 8, 1, bias=True) if conv else g.node("Tanh", ["data"])
    c = 8 if conv else 4
    y = g.node("Resize", [small, "", "", g.const(np.array([1, c, *size], np.int64))], mode="nearest",
               coordinate_transformation_mode=mode, nearest_mode=nearest)  # fmt: skip
    y = g.node("Relu", [g.node("Add", [y, g.node("Sigmoid", ["other"])])])
    model = g.model({"data": ([1, 4, 3, 6], np.float32), "other": ([1, c, *size], np.float32)}, [y], "resize",
                    opset=20)  # fmt: skip
    x = {"data": RNG.standard_normal((1, 4, 3, 6)).astype("float32"),
         "other": RNG.standard_normal((1, c, *size)).astype("float32")}  # fmt: skip
    m, got, ref = build_and_run(model, x, threads=1)
    assert got.shape == ref.shape == (1, c, *size) and float(np.std(ref)) > 0.1
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-6)
    # the gather ran: its flat source index, one per output pixel
    assert [d.shape for _, _, f in m.executor.steps for d in f.derived] == [(size[0] * size[1],)]
    report = m.executor.outside_arena()
    assert (report.held_bytes, report.run_bytes) == (0, 0), report.steps


def _resize_program(shape, size, layout, method, mode):
    x = relay.var("x", shape=shape)
    y = relay.image.resize2d(x, size, layout=layout, method=method, coordinate_transformation_mode=mode,
                             cubic_alpha=-0.75)  # fmt: skip
    program, _ = build_program(relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function([x], y))), {})
    return program


def _fast_against_reference(program, shape, threads):
    """Run ``program`` on the fast kernels (``threads``) and the reference kernels on one
    random input; require the same values (finite, not flat); return the fast steps' derived
    constants and their outside-the-arena report."""
    x = RNG.standard_normal(shape).astype(np.float32)
    outs = []
    for fast in (True, False):
        ex = Executor(program, threads=threads, fast=fast)
        np.copyto(ex.input_buffers[0], x)
        ex.run()
        outs.append(ex.outputs[0].copy())
        if fast:
            derived = [m for _, _, c in ex.steps for m in c.derived]
            report = ex.outside_arena()
    got, ref = outs
    assert np.all(np.isfinite(got)) and float(np.std(ref)) > 0.3
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    return derived, report


@pytest.mark.parametrize("method", ["linear", "cubic"])
@pytest.mark.parametrize("mode", ["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel"])
@pytest.mark.parametrize(
    "layout,shape,size",
    [("NCHW", (2, 3, 12, 17), (7, 30)),  # down in H, up in W
     ("NCHW", (1, 3, 24, 24), (22, 22)),  # CrossViT's square downscale, smaller
     ("NHWC", (2, 12, 17, 3), (25, 9))],
)  # fmt: skip
def test_linear_and_cubic_resize_are_two_products_in_the_arena(method, mode, layout, shape, size):
    derived, report = _fast_against_reference(_resize_program(shape, size, layout, method, mode), shape, 1)
    matrices = [m.shape for m in derived]
    h, w = layout.index("H"), layout.index("W")
    a_w = (shape[w], size[1]) if layout == "NCHW" else (size[1], shape[w])  # A_w^T for NCHW
    assert matrices == [(size[0], shape[h]), a_w]  # the fast kernel ran (its derived constants)
    assert (report.held_bytes, report.run_bytes, report.steps) == (0, 0, [])


@pytest.mark.parametrize("mode,alpha", [("linear", None), ("cubic", -0.75), ("cubic", -0.5)])
@pytest.mark.parametrize("ctm", ["half_pixel", "align_corners", "asymmetric"])
@pytest.mark.parametrize("sizes", [(28, 28), (11, 40)])
def test_linear_and_cubic_resize_match_onnxruntime(mode, alpha, ctm, sizes):
    g = GraphBuilder(1)
    attrs = {"mode": mode, "coordinate_transformation_mode": ctm}
    if alpha is not None:
        attrs["cubic_coeff_a"] = alpha
    y = g.node("Resize", ["data", "", "", g.const(np.array([1, 3, *sizes], np.int64))], **attrs)
    model = g.model({"data": ([1, 3, 30, 30], np.float32)}, [y], "resize", opset=18)
    x = {"data": RNG.standard_normal((1, 3, 30, 30)).astype("float32")}
    mod, params = from_onnx(model)
    assert "image.resize2d" in mod.astext()
    m = xrelay.build(mod, params, opt_level=3, threads=1)
    m.set_input(**x)
    m.run()
    got = m.get_output(0).numpy()
    ref = run_onnxruntime(model, x)[0]
    assert got.shape == ref.shape == (1, 3, *sizes) and float(np.std(ref)) > 0.3
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    assert sum(len(c.derived) for _, _, c in m.executor.steps) == 2
    report = m.executor.outside_arena()
    assert (report.held_bytes, report.run_bytes) == (0, 0), report.steps


@pytest.mark.parametrize("method", ["linear", "cubic"])
@pytest.mark.parametrize("mode", ["half_pixel", "align_corners", "asymmetric"])
@pytest.mark.parametrize(
    "layout,shape,size",
    [("NHWC", (1, 28, 28, 32), (112, 112)),  # a decoder's x4 upsampling, channels-last
     ("NHWC", (2, 40, 33, 8), (23, 70)),  # down in H, up in W
     ("NCHW", (1, 16, 30, 30), (64, 45))],
)  # fmt: skip
def test_large_linear_and_cubic_resize_run_the_bands_in_c(method, mode, layout, shape, size):
    """From ``TAPS_ELEMENTS`` outputs a linear or cubic resize runs the 2 or 4 taps of each
    output index (the bands of the reference's interpolation matrices) in C, in parts on two
    threads (channels first: the W pass stays a matmul): the reference's values, nothing
    allocated outside the arena."""
    derived, report = _fast_against_reference(_resize_program(shape, size, layout, method, mode), shape, 2)
    firsts = [m for m in derived if m.dtype == np.int64]
    # the bands' first indices: of H and W channels-last, of H channels-first
    assert [len(f) for f in firsts] == ([size[0], size[1]] if layout == "NHWC" else [size[0]])
    assert (report.held_bytes, report.run_bytes, report.steps) == (0, 0, [])
