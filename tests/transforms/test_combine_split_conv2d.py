"""combine-split-conv2d keeps the meaning: every FileCheck case runs before and after on
random inputs; the rewrites reach a fixpoint; MixConv blocks as timm exports them (a Split,
one depthwise Conv per piece with its own kernel size, TensorFlow's asymmetric padding at
stride 2, Concat, BatchNormalization, SiLU) and grouped 1x1 convolutions written as pieces
build into one convolution step each and match onnxruntime."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

import xrelay
from xrelay.dialects import make_context
from xrelay.frontends.onnx import from_onnx
from xrelay.testing.onnx_models import GraphBuilder, run_onnxruntime
from xrelay.testing.semantics import check_semantics, filecheck_cases
from xrelay.transforms.combine_split_conv2d import CombineSplitConv2DPass, combine_split_conv2d

CASES = filecheck_cases(
    Path(__file__).parents[1] / "filecheck" / "transforms" / "combine-split-conv2d.mlir"
)


def _entry(case: str) -> str:
    return case.split("func.func @")[1].split("(")[0]


@pytest.mark.parametrize("case", CASES, ids=[_entry(c) for c in CASES])
def test_filecheck_cases_keep_their_values(case):
    module = Parser(make_context(), case).parse_module()
    before, after = check_semantics(
        CombineSplitConv2DPass(), module, entry=_entry(case), rtol=1e-5, atol=1e-5
    )
    assert all(np.asarray(o).size for o in before)


def test_fixpoint():
    module = Parser(make_context(), "\n".join(CASES)).parse_module()
    assert combine_split_conv2d(module) == 5  # the five cases before @kept; @kept keeps its 6
    once = str(module)
    assert combine_split_conv2d(module) == 0
    assert str(module) == once


def test_ratio_bounds_the_padded_work():
    """3x3 and 9x9 pieces of 4 channels each: 2 x 81 / (9 + 81) = 1.8 times the
    multiply-adds, combined at a bound of 2, kept at 1.5."""
    text = """
    func.func @f(%x: tensor<1x8x9x9xf32>, %a: tensor<4x1x3x3xf32>, %b: tensor<4x1x9x9xf32>) -> tensor<1x8x9x9xf32> {
      %s:2 = relay.split %x {indices_or_sections = 2, axis = 1} : (tensor<1x8x9x9xf32>) -> (tensor<1x4x9x9xf32>, tensor<1x4x9x9xf32>)
      %p = relay.nn.conv2d %s#0, %a {padding = [1, 1, 1, 1], groups = 4, channels = 4, kernel_size = [3, 3]} : (tensor<1x4x9x9xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x9x9xf32>
      %q = relay.nn.conv2d %s#1, %b {padding = [4, 4, 4, 4], groups = 4, channels = 4, kernel_size = [9, 9]} : (tensor<1x4x9x9xf32>, tensor<4x1x9x9xf32>) -> tensor<1x4x9x9xf32>
      %y = relay.concatenate %p, %q {axis = 1} : (tensor<1x4x9x9xf32>, tensor<1x4x9x9xf32>) -> tensor<1x8x9x9xf32>
      func.return %y : tensor<1x8x9x9xf32>
    }"""
    assert (
        combine_split_conv2d(Parser(make_context(), text).parse_module(), max_padded_ratio=1.5) == 0
    )
    assert (
        combine_split_conv2d(Parser(make_context(), text).parse_module(), max_padded_ratio=2) == 1
    )


def _same_pads(k: int, size: int, stride: int) -> list[int]:
    """TensorFlow's "same" padding (timm's ``tf_`` models): the extra row below and right."""
    out = -(-size // stride)
    total = max((out - 1) * stride + k - size, 0)
    return [total // 2, total // 2, total - total // 2, total - total // 2]


def _mixconv(channels: list[int], kernels: list[int], stride: int, size: int, bias: bool) -> tuple:
    """timm's MixedConv2d as torch exports it, then BatchNormalization and SiLU."""
    g = GraphBuilder(sum(channels) * 10 + stride)
    c = sum(channels)
    pieces = g.node(
        "Split", ["x", g.const(np.array(channels, np.int64))], n_out=len(channels), axis=1
    )
    outs = []
    for i, (ci, k) in enumerate(zip(channels, kernels)):
        w = g.init(f"w{i}", g.rng.normal(0, 0.3, (ci, 1, k, k)).astype(np.float32))
        ins = [pieces[i], w] + (
            [g.init(f"b{i}", g.rng.normal(0, 0.1, ci).astype(np.float32))] if bias and i % 2 else []
        )
        outs.append(g.node("Conv", ins, group=ci, kernel_shape=[k, k], strides=[stride] * 2,
                           pads=_same_pads(k, size, stride)))  # fmt: skip
    y = g.bn(g.node("Concat", outs, axis=1), c)
    y = g.node("Mul", [y, g.node("Sigmoid", [y])])
    return g.model({"x": ([1, c, size, size], np.float32)}, [y], "mixconv"), (1, c, size, size)


def _grouped_pointwise(pieces: int, cin: int, cout: int, size: int) -> tuple:
    """A grouped 1x1 convolution written as a Split and one ordinary Conv per piece."""
    g = GraphBuilder(pieces * 100 + cin)
    parts = g.node(
        "Split", ["x", g.const(np.array([cin] * pieces, np.int64))], n_out=pieces, axis=1
    )
    outs = [g.conv(p, cin, cout, 1, pad=0, bias=i == 0) for i, p in enumerate(parts)]
    y = g.relu(g.bn(g.node("Concat", outs, axis=1), cout * pieces))
    return g.model({"x": ([1, cin * pieces, size, size], np.float32)}, [y], "grouped"), (
        1,
        cin * pieces,
        size,
        size,
    )


def _built_and_checked(model, shape):
    mod, params = from_onnx(model)
    m = xrelay.build(mod, params, opt_level=3)
    x = np.random.default_rng(len(shape) + shape[1]).standard_normal(shape).astype(np.float32)
    m.set_input(x=x)
    m.run()
    out = m.get_output(0).numpy()
    ref = run_onnxruntime(model, {"x": x})[0]
    other = run_onnxruntime(model, {"x": x[..., ::-1].copy()})[0]
    assert np.all(np.isfinite(ref)) and not np.allclose(ref, other)  # finite, and depends on x
    assert float(np.max(np.abs(out - ref))) <= 1e-4 * max(1.0, float(np.max(np.abs(ref))))
    return m


@pytest.mark.parametrize(
    "channels, kernels, stride, size",
    [
        ([7, 7, 7, 6], [3, 5, 7, 9], 1, 13),
        ([5, 5, 5], [3, 5, 7], 2, 16),
        ([11, 10], [3, 5], 2, 15),
        ([9, 9, 9, 9, 9], [3, 5, 7, 9, 11], 2, 14),
    ],
)
@pytest.mark.parametrize("bias", [False, True])
def test_mixconv_builds_as_one_depthwise_convolution(channels, kernels, stride, size, bias):
    m = _built_and_checked(*_mixconv(channels, kernels, stride, size, bias))
    ops = [ops for _, ops, _ in m.executor.steps]
    assert sum("nn.conv2d" in o for o in ops) == 1, ops
    assert not any("concatenate" in o or "split" in o for o in ops), ops


@pytest.mark.parametrize("pieces, cin, cout", [(2, 12, 18), (3, 5, 7)])
def test_grouped_pointwise_builds_as_one_convolution(pieces, cin, cout):
    m = _built_and_checked(*_grouped_pointwise(pieces, cin, cout, 9))
    ops = [ops for _, ops, _ in m.executor.steps]
    assert sum("nn.conv2d" in o for o in ops) == 1, ops
    assert not any("concatenate" in o or "split" in o for o in ops), ops


@pytest.mark.parametrize("stride", [1, 2])
def test_mixconv_on_the_c_target(stride):
    """The C target runs the pipeline too: its grouped convolution of the zero-padded
    kernels matches onnxruntime."""
    from xrelay.backend.build import build_c

    model, shape = _mixconv([7, 7, 7, 6], [3, 5, 7, 9], stride, 13, True)
    mod, params = from_onnx(model)
    lib = build_c(mod, params, opt_level=3, constants="blob")
    x = np.random.default_rng(stride).standard_normal(shape).astype(np.float32)
    lib.run(x=x)
    got, want = lib.get_output(0), run_onnxruntime(model, {"x": x})[0]
    assert np.all(np.isfinite(want)) and float(np.std(want)) > 0.1
    assert float(np.max(np.abs(got - want))) <= 1e-4 * max(1.0, float(np.max(np.abs(want))))
