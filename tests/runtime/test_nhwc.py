"""Channels-last programs (convert-layout to NHWC) run on the fast kernels, with the meaning kept."""

from __future__ import annotations

import numpy as np
import pytest

from xrelay.backend.build import build_program
from xrelay.relay import transform
from xrelay.runtime.executor import Executor
from xrelay.runtime.interpreter import run
from xrelay.testing import resnet

NHWC = {"nn.conv2d": ["NHWC", "default"], "nn.max_pool2d": ["NHWC"], "nn.global_avg_pool2d": ["NHWC"]}


def _nhwc_resnet(image: int):
    mod, params = resnet.get_workload(num_layers=18, image_shape=(3, image, image), num_classes=10)
    reference = mod.clone()
    with transform.PassContext(opt_level=3):
        mod = transform.Sequential([transform.ConvertLayout(NHWC)])(mod)
    return mod, reference, params


def test_resnet18_nhwc_runs_fast_and_matches_the_reference():
    mod, reference, params = _nhwc_resnet(64)
    program, _ = build_program(mod, params)
    ex = Executor(program)
    x = np.random.default_rng(0).standard_normal((1, 3, 64, 64)).astype("float32")
    np.copyto(ex.input_buffers[0], x)
    ex.run()
    expect = run(reference.module, {"data": x}, params)[0]
    np.testing.assert_allclose(ex.outputs[0], expect, rtol=1e-4, atol=1e-5)
    convs = 0
    for name, _, compiled in ex.steps:
        if "conv2d" not in name:
            continue
        convs += 1
        labels = {label for label, _, _ in compiled.thunks}
        # the reference kernel would show as a plain "nn.conv2d" thunk followed by its
        # epilogue's "nn.conv2d+..." thunks (and no fast op when there is no epilogue)
        reference = "nn.conv2d" in labels and any(lb.startswith("nn.conv2d+") for lb in labels)
        assert compiled.fast_ops >= 1 and not reference, (name, labels)
    assert convs >= 17
    # the stem (3 channels) runs on a channels-first copy of its input, whose scratch array
    # is allocated when the program is compiled
    assert ex.scratch_bytes > 0


def test_nhwc_kernels_on_odd_shapes_match_the_reference_kernel():
    """Strides, asymmetric padding, 1x1 and a pool window larger than the stride."""
    from xdsl.parser import Parser

    from xrelay.dialects import make_context

    text = """
func.func @main(%x: tensor<1x9x11x16xf32>, %w: tensor<3x3x16x24xf32>, %v: tensor<1x1x24x8xf32>) -> tensor<1x2x1x8xf32> {
  %y = relay.nn.conv2d %x, %w {strides = [2, 2], padding = [1, 0, 2, 1], data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x9x11x16xf32>, tensor<3x3x16x24xf32>) -> tensor<1x5x5x24xf32>
  %r = relay.nn.relu %y : (tensor<1x5x5x24xf32>) -> tensor<1x5x5x24xf32>
  %z = relay.nn.conv2d %r, %v {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x5x5x24xf32>, tensor<1x1x24x8xf32>) -> tensor<1x5x5x8xf32>
  %p = relay.nn.max_pool2d %z {pool_size = [3, 3], strides = [2, 2], padding = [0, 1, 1, 0], layout = "NHWC"} : (tensor<1x5x5x8xf32>) -> tensor<1x2x2x8xf32>
  %s = relay.strided_slice %p {begin = [0, 0, 1, 0], end = [1, 2, 2, 8]} : (tensor<1x2x2x8xf32>) -> tensor<1x2x1x8xf32>
  func.return %s : tensor<1x2x1x8xf32>
}
"""
    module = Parser(make_context(), text).parse_module()
    rng = np.random.default_rng(1)
    params = {
        "w": rng.standard_normal((3, 3, 16, 24)).astype("float32"),
        "v": rng.standard_normal((1, 1, 24, 8)).astype("float32"),
    }
    x = rng.standard_normal((1, 9, 11, 16)).astype("float32")
    expect = run(module.clone(), {"x": x}, params)[0]
    program, _ = build_program(module, params)
    ex = Executor(program)
    np.copyto(ex.input_buffers[0], x)
    ex.run()
    np.testing.assert_allclose(ex.outputs[0], expect, rtol=1e-5, atol=1e-5)
    assert all(c.fast_ops >= 1 for n, _, c in ex.steps if "conv2d" in n or "pool" in n)


def test_weights_given_at_run_time_are_read_on_every_run():
    """A channels-first route whose weight is an input (not a constant) re-reads it per run."""
    from xdsl.parser import Parser

    from xrelay.dialects import make_context

    text = """
func.func @main(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32> {
  %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1], data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32>
  %r = relay.nn.relu %y : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  func.return %r : tensor<1x8x8x4xf32>
}
"""
    module = Parser(make_context(), text).parse_module()
    reference = module.clone()
    program, _ = build_program(module, {})
    ex = Executor(program)
    # few channels: a channels-first copy of the input and (an input, so per run) the
    # weights as the (C * kh * kw, O) matrix; the product writes the NHWC output itself
    assert ex.scratch_bytes == 4 * (8 * 8 * 3 + 3 * 3 * 3 * 4)
    rng = np.random.default_rng(2)
    for _ in range(2):
        inputs = {
            "x": rng.standard_normal((1, 8, 8, 3)).astype("float32"),
            "w": rng.standard_normal((3, 3, 3, 4)).astype("float32"),
        }
        for name, buf in zip(ex.input_names, ex.input_buffers):
            np.copyto(buf, inputs[name])
        ex.run()
        expect = run(reference, inputs, {})[0]
        np.testing.assert_allclose(ex.outputs[0], expect, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_max_pool_window_wholly_in_padding_is_the_lowest_float(layout):
    """TOPI pads max pools with tvm::min_value (the lowest float32, not -inf): the arena
    runtime's pool kernels give it for ceil-mode windows that see only padding."""
    import xrelay
    from xrelay import relay

    shape = (1, 1, 2, 2) if layout == "NCHW" else (1, 2, 2, 1)
    x = relay.var("x", shape=shape)
    y = relay.nn.max_pool2d(x, pool_size=(2, 2), strides=(2, 2), padding=(0, 0, 1, 1), ceil_mode=True, layout=layout)
    m = xrelay.build(xrelay.IRModule.from_expr(relay.Function([x], y)))
    m.set_input("x", np.ones(shape, "float32"))
    m.run()
    low = np.finfo(np.float32).min
    assert m.get_output(0).reshape(2, 2).tolist() == [[1.0, low], [low, low]]
