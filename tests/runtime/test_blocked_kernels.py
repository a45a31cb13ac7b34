"""Blocked layouts (AlterOpLayout's NCHW{c}c / OIHW{i}i{o}o) in the arena runtime: fast kernels
(Winograd on the channel blocks, the NCHW kernels on an unblocked copy, pools), the meaning
kept, and the build pipeline that blocks a model only where that is not slower."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

import xrelay
from xrelay.backend.build import build_program
from xrelay.dialects import make_context
from xrelay.kernels import layout_transform_array
from xrelay.runtime.executor import Executor
from xrelay.runtime.interpreter import run
from xrelay.runtime.parallel import WorkerPool
from xrelay.testing import resnet
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


def test_build_applies_registered_rules_not_the_x86_one():
    """The build's AlterOpLayout (level 3) runs Python-registered rules, as Relay's does, and
    the blocked program runs on the fast kernels; TVM's x86 rule stays out of builds."""
    from xrelay import relay
    from xrelay.relay.op_attr import TempOpAttr

    mod, params = resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10)
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype("float32")

    def convs(m):
        return [op for op in m.program.walk() if getattr(op, "RELAY_NAME", "") == "nn.conv2d"]

    plain = xrelay.build(mod, params, opt_level=3, backends=("native",))
    assert {op.attrs["data_layout"] for op in convs(plain)} == {"NCHW"}

    def alter_conv2d(attrs, inputs, tinfos, out_type):
        data, weight = inputs
        if tinfos[0].shape[1] % 16:
            return None
        return relay.nn.conv2d(data, weight, **dict(attrs, data_layout="NCHW16c"))

    with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", alter_conv2d):
        blocked = xrelay.build(mod, params, opt_level=3, backends=("native",))
    assert "NCHW16c" in {op.attrs["data_layout"] for op in convs(blocked)}
    fast = [c for name, _, c in blocked.executor.steps if "conv2d" in name]
    assert fast and all(c.fast_ops >= 1 for c in fast)
    outs = []
    for m in (blocked, plain):
        m.set_input("data", x)
        m.run()
        outs.append(m.get_output(0).numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-4, atol=1e-5)
