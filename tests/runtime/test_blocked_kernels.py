"""Blocked layouts (AlterOpLayout's NCHW{c}c / OIHW{i}i{o}o) in the arena runtime: fast kernels
(Winograd on the channel blocks, the NCHW kernels on an unblocked copy, pools), the meaning
kept, and the build pipeline that blocks a model only where that is not slower."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

import xrelay
from xrelay.dialects import make_context
from xrelay.kernels import layout_transform_array
from xrelay.relay import transform
from xrelay.runtime.build import build_program
from xrelay.runtime.executor import Executor
from xrelay.runtime.interpreter import run
from xrelay.runtime.parallel import WorkerPool
from xrelay.testing import mobilenet, resnet
from xrelay.transforms.alter_op_layout import blocked_is_fast
from xrelay.transforms.infra import BUILD_PIPELINE_PASSES


def _conv_case(c, o, ic, oc, hw, *, stride=1, k=3, groups=1, seed=0):
    """conv (blocked in, out) + bias + relu, and the reference's random data for it."""
    pad = k // 2
    out_hw = (hw + 2 * pad - k) // stride + 1
    kic = 1 if groups > 1 else ic
    x_t = f"tensor<1x{c // ic}x{hw}x{hw}x{ic}xf32>"
    w_t = f"tensor<{o // oc}x{c // groups // kic}x{k}x{k}x{kic}x{oc}xf32>"
    y_t = f"tensor<1x{o // oc}x{out_hw}x{out_hw}x{oc}xf32>"
    b_t = f"tensor<1x{o // oc}x1x1x{oc}xf32>"
    attrs = (
        f'strides = [{stride}, {stride}], padding = [{pad}, {pad}, {pad}, {pad}], groups = {groups}, '
        f'data_layout = "NCHW{ic}c", kernel_layout = "OIHW{kic}i{oc}o", out_layout = "NCHW{oc}c"'
    )
    text = f"""
func.func @main(%x: {x_t}, %w: {w_t}, %b: {b_t}) -> {y_t} {{
  %y = relay.nn.conv2d %x, %w {{{attrs}}} : ({x_t}, {w_t}) -> {y_t}
  %z = relay.add %y, %b : ({y_t}, {b_t}) -> {y_t}
  %a = relay.nn.relu %z : ({y_t}) -> {y_t}
  func.return %a : {y_t}
}}
"""
    mod = Parser(make_context(), text).parse_module()
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((o, c // groups, k, k)) / np.sqrt(k * k * c / groups)).astype("float32")
    params = {
        "w": np.ascontiguousarray(layout_transform_array(w, "OIHW", f"OIHW{kic}i{oc}o")),
        "b": rng.standard_normal((1, o // oc, 1, 1, oc)).astype("float32"),
    }
    x = layout_transform_array(rng.standard_normal((1, c, hw, hw)).astype("float32"), "NCHW", f"NCHW{ic}c")
    return mod, params, {"x": np.ascontiguousarray(x)}


def _outputs(ex: Executor, inputs) -> np.ndarray:
    for name, buf in zip(ex.input_names, ex.input_buffers):
        np.copyto(buf, inputs[name])
    ex.run()
    return ex.outputs[0].copy()


CASES = {
    "winograd F(2x2)": dict(c=16, o=32, ic=8, oc=16, hw=10),
    "winograd F(4x4)": dict(c=16, o=16, ic=16, oc=16, hw=28),
    "strided, unblocked copy": dict(c=16, o=32, ic=8, oc=16, hw=9, stride=2),
    "pointwise": dict(c=32, o=16, ic=16, oc=8, hw=6, k=1),
    "depthwise": dict(c=32, o=32, ic=16, oc=16, hw=7, groups=32),
}


@pytest.mark.parametrize("case", list(CASES))
def test_blocked_conv_fast_kernels_match_the_reference(case):
    mod, params, inputs = _conv_case(**CASES[case])
    program, _ = build_program(mod, params)
    ex = Executor(program, threads=1)
    (step,) = [c for name, _, c in ex.steps if "conv2d" in name]
    assert step.fast_ops >= 1
    assert bool(step.winograd) == case.startswith("winograd")
    got = _outputs(ex, inputs)
    (ref,) = run(mod, inputs, params)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5 * float(np.abs(ref).max()))
    two = Executor(program, threads=WorkerPool(2, adaptive=False))
    assert np.array_equal(_outputs(two, inputs), got)


def test_blocked_pools_match_the_reference():
    x_t, p_t, g_t = "tensor<1x2x9x9x8xf32>", "tensor<1x2x5x5x8xf32>", "tensor<1x2x1x1x8xf32>"
    text = f"""
func.func @main(%x: {x_t}) -> ({p_t}, {g_t}) {{
  %p = relay.nn.max_pool2d %x {{pool_size = [3, 3], strides = [2, 2], padding = [1, 1, 1, 1], layout = "NCHW8c"}} : ({x_t}) -> {p_t}
  %g = relay.nn.global_avg_pool2d %x {{layout = "NCHW8c"}} : ({x_t}) -> {g_t}
  func.return %p, %g : {p_t}, {g_t}
}}
"""
    mod = Parser(make_context(), text).parse_module()
    program, _ = build_program(mod, {})
    ex = Executor(program, threads=1)
    assert all(c.fast_ops >= 1 for name, _, c in ex.steps if "pool" in name)
    x = np.random.default_rng(1).standard_normal((1, 2, 9, 9, 8)).astype("float32")
    np.copyto(ex.input_buffers[0], x)
    ex.run()
    ref = run(mod, {"x": x}, {})
    np.testing.assert_array_equal(ex.outputs[0], ref[0])
    np.testing.assert_allclose(ex.outputs[1], ref[1], rtol=1e-5, atol=1e-7)


def test_build_pipeline_has_relays_passes_in_relays_order():
    names = list(BUILD_PIPELINE_PASSES)
    order = [
        "SimplifyInference", "EliminateCommonSubexpr", "CombineParallelConv2d", "CombineParallelDense",
        "CombineParallelBatchMatmul", "FoldConstant", "FoldScaleAxis", "CanonicalizeOps",
        "AlterOpLayout", "FuseOps",
    ]  # fmt: skip
    assert [n for n in names if n in order] == order[:-1] + ["FoldConstant", "FuseOps"]


def test_build_blocks_resnet18_only_where_the_runtime_is_not_slower():
    assert blocked_is_fast(resnet.get_workload(num_layers=18)[0].module)
    assert not blocked_is_fast(resnet.get_workload(num_layers=50)[0].module)  # 1x1 bottlenecks
    assert not blocked_is_fast(mobilenet.get_workload()[0].module)  # depthwise
    # at 224x224 the Winograd-able layers carry 82% of the work (at 32x32 the last stages'
    # few output blocks keep im2col, and the model stays NCHW)
    mod, params = resnet.get_workload(num_layers=18, num_classes=10)
    assert not blocked_is_fast(resnet.get_workload(num_layers=18, image_shape=(3, 32, 32))[0].module)
    blocked = xrelay.build(mod, params, opt_level=3)
    with transform.PassContext(opt_level=3, disabled_pass=["AlterOpLayout"]):
        plain = xrelay.build(mod, params, opt_level=3)
    layouts = {
        op.attrs["data_layout"] for op in blocked.program.walk() if getattr(op, "RELAY_NAME", "") == "nn.conv2d"
    }
    assert "NCHW16c" in layouts and "NCHW" not in layouts
    assert not any(
        getattr(op, "RELAY_NAME", "") == "nn.conv2d" and op.attrs["data_layout"] != "NCHW"
        for op in plain.program.walk()
    )
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype("float32")
    outs = []
    for m in (blocked, plain):
        m.set_input("data", x)
        m.run()
        outs.append(m.get_output(0).numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-4, atol=1e-5)
