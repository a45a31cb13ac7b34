"""sink-transpose keeps the meaning: every FileCheck case runs before and after on random
inputs; and ConvNeXt's block end, built through the default pipeline, ends with no native
step and no layout transform between its blocks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

import xrelay
from xrelay import relay
from xrelay.dialects import make_context
from xrelay.testing.semantics import check_semantics, filecheck_cases
from xrelay.transforms.sink_transpose import SinkTransposePass

CASES = filecheck_cases(Path(__file__).parents[1] / "filecheck" / "transforms" / "sink-transpose.mlir")


@pytest.mark.parametrize("case", CASES, ids=[c.split("@")[1].split("(")[0] for c in CASES])
def test_filecheck_cases_keep_their_meaning(case):
    module = Parser(make_context(), case).parse_module()
    entry = next(op.sym_name.data for op in module.ops)
    outputs = check_semantics(SinkTransposePass(), module, entry=entry)
    assert all(len(o) for o in outputs)


def test_channels_last_blocks_lose_their_transposes():
    """A stem convolution and two ConvNeXt-style blocks (NCHW depthwise convolution, permute to NHWC, a dense
    layer, permute back, layer scale, residual add): built with the defaults, the layer
    scale and residual add read NHWC tensors in place (no native transpose step, no reorder
    between the blocks), and the output equals the native kernels' build."""
    rng = np.random.default_rng(0)
    c = 8
    x = relay.var("x", shape=(1, c, 6, 6))
    h = relay.nn.conv2d(x, relay.const(rng.standard_normal((c, c, 1, 1)).astype("float32")), channels=c, kernel_size=(1, 1))
    for _ in range(2):
        dw = relay.nn.conv2d(h, relay.const(rng.standard_normal((c, 1, 3, 3)).astype("float32")),
                             channels=c, kernel_size=(3, 3), padding=(1, 1), groups=c)  # fmt: skip
        t = relay.transpose(dw, axes=(0, 2, 3, 1))
        d = relay.nn.dense(relay.reshape(t, (36, c)), relay.const(rng.standard_normal((c, c)).astype("float32")))
        back = relay.transpose(relay.reshape(d, (1, 6, 6, c)), axes=(0, 3, 1, 2))
        scaled = relay.multiply(back, relay.const(rng.standard_normal((c, 1, 1)).astype("float32")))
        h = relay.add(scaled, h)
    mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function([x], h)))
    feed = rng.standard_normal((1, c, 6, 6)).astype("float32")
    outs = {}
    for backends in (None, ("native",)):
        m = xrelay.build(mod, None, opt_level=3, backends=backends)
        m.set_input(x=feed)
        m.run()
        outs[backends] = (m.get_output(0).numpy(), m)
    out, m = outs[None]
    np.testing.assert_allclose(out, outs[("native",)][0], rtol=1e-4, atol=1e-4)
    assert np.std(out) > 0.1
    steps = [(ops, b) for (_, ops, _), b in zip(m.executor.steps, m.executor.step_backends)]
    # the only permutes left: the input's to NHWC and the last step's back to NCHW (the
    # output's layout), none between the blocks
    permutes = [ops for ops, _ in steps if "transpose" in ops or "layout_transform" in ops]
    assert permutes == ["layout_transform", steps[-1][0]], steps
    assert steps[-1][0] == "transpose", steps
    # each block's matmul takes its layer scale and residual (NHWC rows, read in place)
    assert [ops for ops, _ in steps].count("dnnl.dense_scale_sum(nn.dense+multiply+add)") == 2, steps
