"""A weight that several oneDNN functions read is one constant and reordered once for the executor
(``Executor.shared_weights``): an unrolled recurrent layer's recurrent weight is one dense per
time step, each step its own function between the native gate loops. With a copy per step
(before), a two-layer bidirectional LSTM of 256 over 100 frames held 400 reordered copies of
1 MB and streamed each from memory (18.5 ms, 2.5x onnxruntime; one copy: 6.1 ms)."""

from __future__ import annotations

import weakref

import numpy as np
import onnx
from onnx import TensorProto, helper

import xrelay
from xrelay.testing.onnx_models import build_and_run

RNG = np.random.default_rng(0)
SEQ, BATCH, WIDTH, HIDDEN = 6, 2, 8, 16


def _lstm() -> onnx.ModelProto:
    w = (RNG.standard_normal((1, 4 * HIDDEN, WIDTH)) * 0.3).astype(np.float32)
    r = (RNG.standard_normal((1, 4 * HIDDEN, HIDDEN)) * 0.3).astype(np.float32)
    b = (RNG.standard_normal((1, 8 * HIDDEN)) * 0.1).astype(np.float32)
    node = helper.make_node("LSTM", ["x", "w", "r", "b"], ["y"], hidden_size=HIDDEN)
    graph = helper.make_graph(
        [node], "lstm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [SEQ, BATCH, WIDTH])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [SEQ, 1, BATCH, HIDDEN])],
        [onnx.numpy_helper.from_array(a, n) for a, n in ((w, "w"), (r, "r"), (b, "b"))],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=8)


def test_recurrent_weight_is_reordered_once():
    model = _lstm()
    x = {"x": RNG.standard_normal((SEQ, BATCH, WIDTH)).astype(np.float32)}
    m, got, want = build_and_run(model, x)
    other = build_and_run(model, {"x": x["x"][::-1].copy()})[1]
    assert np.all(np.isfinite(got)) and not np.allclose(got, other)  # depends on x
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    ex = m.executor
    # every time step after the first multiplies the state by r: its own oneDNN function
    step_macs = BATCH * 4 * HIDDEN * HIDDEN
    readers = [c for _, _, c in ex.steps if hasattr(c, "dnnl_plan") and any(s.macs == step_macs for s in c.dnnl_plan.steps)]
    assert len(readers) >= SEQ - 1, [c.name for _, _, c in ex.steps]
    alive = [(ref(), copies) for ref, copies in ex.shared_weights.values() if ref() is not None]
    recurrent = [copies for stored, copies in alive if stored.size == 4 * HIDDEN * HIDDEN]
    # one stored weight, reordered into one format once, read by every step's function
    assert len(recurrent) == 1 and len(recurrent[0]) == 1, recurrent


def test_tied_layers_share_one_weight():
    """Two layers by one ONNX initializer (weight tying, ALBERT's layers): the partition's
    per-use transposes of it are one constant again (``share_equal_constants``), reordered
    once; the values are onnxruntime's."""
    w = (RNG.standard_normal((32, 32)) * 0.3).astype(np.float32)
    b = (RNG.standard_normal(32) * 0.1).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m1"]),
        helper.make_node("Add", ["m1", "b"], ["a1"]),
        helper.make_node("Tanh", ["a1"], ["t1"]),
        helper.make_node("MatMul", ["t1", "w"], ["m2"]),
        helper.make_node("Add", ["m2", "b"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "tied",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 32])],
        [onnx.numpy_helper.from_array(w, "w"), onnx.numpy_helper.from_array(b, "b")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=8)
    x = {"x": RNG.standard_normal((4, 32)).astype(np.float32)}
    m, got, want = build_and_run(model, x)
    other = build_and_run(model, {"x": -x["x"]})[1]
    assert np.all(np.isfinite(got)) and not np.allclose(got, other)  # depends on x
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    stored = [ref() for ref, _ in m.executor.shared_weights.values()]
    weights = [a for a in stored if a is not None and a.size == w.size]
    assert len(weights) == 1, len(weights)
    # held weakly: a weight made for one function's bind is not kept alive by the table
    # (held strongly, GoogLeNet's peak RSS was 172 MB against onnxruntime's 149; weakly 140/151)
    assert all(isinstance(ref, weakref.ref) for ref, _ in m.executor.shared_weights.values())


def _repeated_conv(k: int, times: int, scale: bool) -> tuple[onnx.ModelProto, np.ndarray]:
    """One ``k x k`` convolution's initializers applied ``times`` times in a chain (an
    iterated refinement: RAFT's flow updates, a convolutional recurrent cell unrolled), each
    followed by a per-channel constant scale (``scale``, ConvNeXt's layer scale) and a ReLU."""
    c = 32
    w = (RNG.standard_normal((c, c, k, k)) * 0.1).astype(np.float32)
    b = (RNG.standard_normal(c) * 0.1).astype(np.float32)
    s = (RNG.uniform(0.5, 1.5, (1, c, 1, 1))).astype(np.float32)
    nodes, cur = [], "x"
    for t in range(times):
        nodes.append(helper.make_node("Conv", [cur, "w", "b"], [f"c{t}"], pads=[k // 2] * 4))
        cur = f"c{t}"
        if scale:
            nodes.append(helper.make_node("Mul", [cur, "s"], [f"s{t}"]))
            cur = f"s{t}"
        nodes.append(helper.make_node("Relu", [cur], [f"r{t}" if t < times - 1 else "y"]))
        cur = f"r{t}"
    graph = helper.make_graph(
        nodes, "repeated",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, 16, 16])],
        [onnx.numpy_helper.from_array(a, n) for a, n in ((w, "w"), (b, "b"), (s, "s"))],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=8), w


def _copies(ex, nbytes: int) -> int:
    """Reordered weight copies of at least ``nbytes`` the executor holds (dead entries too)."""
    return sum(a.nbytes >= nbytes for _, copies in ex.shared_weights.values() for _, a in copies)


def test_derived_weights_of_one_weight_are_reordered_once():
    """A weight each oneDNN function derives its own array from (Winograd's transformed
    weights, a weight with a constant scale folded in) is shared by its source: RAFT-small's
    12 flow updates held 12 reordered copies of three convolutions' Winograd weights (peak RSS
    169 -> 116 MB once shared)."""
    for k, scale, derived in ((1, True, 32 * 32 * 4), (3, False, 36 * 32 * 32 * 4)):
        model, w = _repeated_conv(k, 4, scale)
        x = {"x": RNG.standard_normal((1, 32, 16, 16)).astype(np.float32)}
        # each way at its fastest (at "balanced" this small model's peak is Winograd's scratch)
        with xrelay.transform.PassContext(config={"relay.ChooseScratch.priority": "speed"}):
            m, got, want = build_and_run(model, x)
            other = build_and_run(model, {"x": -x["x"]})[1]
        assert np.all(np.isfinite(got)) and not np.allclose(got, other)  # depends on x
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        ex = m.executor
        readers = [c for _, _, c in ex.steps if hasattr(c, "dnnl_plan") and "conv2d" in c.dnnl_plan.steps[0].name]
        assert len(readers) == 4, [c.name for _, _, c in ex.steps]
        if k == 3:  # every convolution runs as Winograd (the derived 36 x C x O weights)
            assert all(any("Winograd" in s.name for s in c.dnnl_plan.steps) for c in readers)
        assert _copies(ex, derived) == 1, (k, [(a.nbytes) for _, cs in ex.shared_weights.values() for _, a in cs])
