"""What a bound oneDNN plan keeps: its primitives, not the primitive descriptors and attributes
they were made from. Each primitive holds its own copy of its descriptor (about 26 KB for a
convolution), so ``FunctionPlan.bind`` frees the plan's descriptors once the primitives exist,
and the parts of a cut convolution (``dnnl.parts``) free theirs as soon as their primitives are
made: the next functions' descriptors reuse that memory while the model loads."""

from __future__ import annotations

import weakref

import numpy as np
import pytest

import xrelay
from xrelay.frontends.onnx import from_onnx
from xrelay.runtime.dnnl import primitives
from xrelay.runtime.dnnl.library import dnnl_library
from xrelay.testing.onnx_models import GraphBuilder


def _model():
    """A stride-2 stem and a 5x5 (both big enough to be cut in parts for the one-thread
    program), a 3x3 stride-1 run as Winograd (a matmul whose descriptor its bands share), and
    a dense head."""
    g = GraphBuilder(7)
    y = g.relu(g.conv("data", 8, 24, 3, stride=2, bias=True))  # 29 x 29
    y = g.relu(g.conv(y, 24, 16, 5, stride=2, bias=True))  # 15 x 15
    y = g.relu(g.conv(y, 16, 16, 3, bias=True))
    y = g.node("Flatten", [g.node("GlobalAveragePool", [y])])
    return g.model({"data": ([1, 8, 57, 57], np.float32)}, [g.gemm(y, 16, 10)], "descriptors")


def test_bound_plans_hold_no_descriptor(monkeypatch):
    lib = dnnl_library()
    assert lib is not None
    made: list[weakref.ref] = []

    class Recorded(primitives._Owned):
        def __init__(self, free, handle):
            super().__init__(free, handle)
            if free in (lib.xr_dnnl_pd_free, lib.xr_dnnl_attr_free):
                made.append(weakref.ref(self))

    monkeypatch.setenv("XRELAY_DNNL_PARTS", "1")
    monkeypatch.setattr(primitives, "_Owned", Recorded)
    mod, params = from_onnx(_model())
    m = xrelay.build(mod, params, opt_level=3, threads=2)
    plans = [c.dnnl_plan for _, _, c in m.executor.steps if hasattr(c, "dnnl_plan")]
    cut = [c for _, _, c in m.executor.steps if getattr(c, "thunk_parts", None) is not None]
    assert len(cut) == 2 and any(p.winograd for p in plans)
    # made while building: the plans' (for all the threads and for one) and the parts'
    assert len(made) > 2 * sum(len(p.descriptors) for p in plans) > 0
    alive = [r() for r in made if r() is not None and r().handle]
    assert alive == []
    assert all(p.bound for p in plans)
    with pytest.raises(primitives.DnnlUnsupported, match="bound already"):
        plans[0].bind([], [], None, 2)
    # the primitives run without them: every program (all threads, one thread, its parts)
    rng = np.random.default_rng(0)
    outs = []
    for x in [rng.standard_normal((1, 8, 57, 57)).astype(np.float32) for _ in range(2)]:
        m.set_input(data=x)
        for program in (m.executor._thunks, m.executor._thunks_one):
            for t in program:
                t()
            m.executor.pool.park()
            outs.append(m.get_output(0).numpy().copy())
    assert all(np.isfinite(o).all() for o in outs)
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(outs[3], outs[2], rtol=1e-4, atol=1e-5)
    assert np.abs(outs[2] - outs[0]).max() > 1e-3  # (the output follows the input)
