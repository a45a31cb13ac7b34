"""``benchmarks/zoo.py --profile`` puts onnxruntime's kernel time by op family beside
xrelay's: its profiler's nodes (after its own fusions) sorted into the same families, a
convolution depthwise or not by its weight's shape."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from xrelay.testing.onnx_models import GraphBuilder

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def zoo_script():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import zoo  # benchmarks/zoo.py

        yield zoo
    finally:
        sys.path.remove(str(BENCHMARKS))


@pytest.mark.parametrize(
    "op, shapes, family",
    [("Conv", [[1, 32, 56, 56], [32, 1, 3, 3]], "depthwise"),
     ("FusedConv", [[1, 144, 28, 28], [144, 1, 5, 5], [144]], "depthwise"),
     ("Conv", [[1, 32, 56, 56], [64, 32, 1, 1]], "conv"),
     ("Conv", [[1, 64, 56, 56], [64, 16, 3, 3]], "conv"),  # grouped, 16 channels a group
     ("Conv", [[1, 1, 28, 28], [1, 1, 3, 3]], "conv"),  # one channel: not depthwise
     ("Gemm", [[1, 1280], [1000, 1280]], "matmul"), ("ReduceMean", [[1, 96, 56, 56]], "pool"),
     ("ReorderOutput", [[1, 96, 56, 56]], "copy"), ("QuickGelu", [[1, 96, 56, 56]], "elementwise"),
     ("LayerNormalization", [[1, 49, 768]], "other")],
)  # fmt: skip
def test_families_of_onnxruntime_nodes(zoo_script, op, shapes, family):
    assert zoo_script.ort_family(op, shapes) == family


def test_onnxruntime_profile_by_family(zoo_script):
    g = GraphBuilder(5)
    x = g.node("Relu", [g.conv("data", 8, 32, 1, bias=True)])
    x = g.node("Relu", [g.conv(x, 32, 32, 3, pad=1, group=32, bias=True)])
    p = g.node("Flatten", [g.node("GlobalAveragePool", [x])])
    w = g.init("w", np.random.default_rng(5).standard_normal((32, 10)).astype("float32"))
    y = g.node("MatMul", [p, w])
    model = g.model({"data": ([1, 8, 32, 32], np.float32)}, [y], "families")
    feeds = {"data": np.random.default_rng(6).standard_normal((1, 8, 32, 32)).astype("float32")}
    prof = zoo_script._ort_profile(model.SerializeToString(), feeds, runs=2)
    fams, nodes = prof["families"], prof["nodes"]
    assert nodes["depthwise"] == 1 and nodes["conv"] == 1 and nodes["matmul"] == 1, prof
    assert nodes["pool"] == 1, prof
    assert all(fams[k] > 0 for k in ("depthwise", "conv", "matmul", "pool")), prof
    assert sum(fams.values()) < 50, prof  # milliseconds per run, not the runs' sum in us


def test_each_nodes_mean_over_the_runs_it_appears_in(zoo_script):
    """Two runs of a depthwise convolution (30 and 50 us) and a pool seen once (8 us): the
    depthwise family's 0.04 ms per run, the pool's 0.008; other events are not kernels."""

    def event(name, op, dur, shapes):
        return {"cat": "Node", "name": name + "_kernel_time", "dur": dur,
                "args": {"op_name": op, "input_type_shape": [{"float": s} for s in shapes]}}  # fmt: skip

    dw = [[1, 16, 8, 8], [16, 1, 3, 3]]
    events = [
        event("dw", "Conv", 30, dw), event("dw", "Conv", 50, dw), event("mean", "ReduceMean", 8, [[1, 16, 8, 8]]),
        {"cat": "Node", "name": "dw_fence_before", "dur": 999, "args": {"op_name": "Conv"}},
        {"cat": "Session", "name": "model_run", "dur": 5000},
    ]  # fmt: skip
    prof = zoo_script.ort_families(events)
    assert prof["nodes"] == {"depthwise": 1, "pool": 1}
    assert prof["families"] == pytest.approx({"depthwise": 0.04, "pool": 0.008})
