"""Ops that copy or scan, run by the native engine straight into their destinations: reflect
and edge padding (TResNet's anti-aliased downsampling), ``cumsum`` of integers (the position
ids RoBERTa and OPT count from the attention mask) and ``stack`` (GatherElements' index grids):
nothing allocated outside the arena, the reference kernels' values."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay.frontends.onnx import from_onnx
from xrelay.testing.onnx_models import GraphBuilder, run_onnxruntime

RNG = np.random.default_rng(0)


def _run(model, x):
    mod, params = from_onnx(model)
    m = xrelay.build(mod, params, opt_level=3, threads=1)
    m.set_input(**x)
    m.run()
    out = [m.get_output(i).numpy() for i in range(m.get_num_outputs())]
    report = m.executor.outside_arena()
    assert (report.held_bytes, report.run_bytes) == (0, 0), report.steps
    return out


@pytest.mark.parametrize("mode", ["reflect", "edge"])
@pytest.mark.parametrize("pads", [[0, 0, 1, 1, 0, 0, 1, 1], [0, 1, 2, 0, 0, 0, 1, 3]])
def test_reflect_and_edge_padding_copy_into_the_destination(mode, pads):
    g = GraphBuilder(1)
    y = g.node("Pad", [g.node("Tanh", ["data"]), g.const(np.array(pads, np.int64))], mode=mode)
    model = g.model({"data": ([1, 3, 6, 5], np.float32)}, [g.node("Sigmoid", [y])], "pad", opset=18)
    x = {"data": RNG.standard_normal((1, 3, 6, 5)).astype("float32")}
    (out,) = _run(model, x)
    ref = run_onnxruntime(model, x)[0]
    assert out.shape == ref.shape
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("exclusive", [0, 1])
def test_integer_cumsum_runs_inside_the_arena(exclusive):
    """RoBERTa's position ids: ``cumsum`` of the int mask along the sequence, times the
    mask, plus the padding index, then the position embedding."""
    g = GraphBuilder(2)
    mask = g.node("Cast", [g.node("Not", [g.node("Equal", ["ids", g.const(np.array(1, np.int64))])])], to=7)
    pos = g.node("CumSum", [mask, g.const(np.array(1, np.int64))], exclusive=exclusive)
    pos = g.node("Add", [g.node("Mul", [pos, mask]), g.const(np.array(1, np.int64))])
    table = g.init("table", RNG.standard_normal((16, 8)).astype("float32"))
    out = [g.node("Cast", [pos], to=1), g.node("Gather", [table, pos], axis=0)]
    model = g.model({"ids": ([2, 12], np.int64)}, out, "positions", opset=18)
    x = {"ids": RNG.integers(0, 5, (2, 12)).astype(np.int64)}
    got = _run(model, x)
    ref = run_onnxruntime(model, x)
    np.testing.assert_array_equal(got[0], ref[0])
    np.testing.assert_array_equal(got[1], ref[1])
    assert len(np.unique(got[0])) > 3  # the positions differ along the sequence


STACK = """
func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x2x3xf32> {
  %a = relay.tanh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %b = relay.sigmoid %y : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = relay.stack %a, %b {axis = 1} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2x3xf32>
  %r = relay.exp %s : (tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
  func.return %r : tensor<2x2x3xf32>
}
"""


def test_stack_writes_its_destination():
    from xdsl.parser import Parser

    from xrelay.dialects import make_context

    module = Parser(make_context(), STACK).parse_module()
    m = xrelay.build(module, {}, opt_level=3, threads=1)
    x, y = RNG.standard_normal((2, 3)).astype("float32"), RNG.standard_normal((2, 3)).astype("float32")
    m.set_input(x=x, y=y)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), np.exp(np.stack([np.tanh(x), 1 / (1 + np.exp(-y))], axis=1)),
                               rtol=1e-6)  # fmt: skip
    report = m.executor.outside_arena()
    assert (report.held_bytes, report.run_bytes) == (0, 0), report.steps
