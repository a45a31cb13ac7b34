"""Import of ONNX's control flow (If, Loop, Scan) against onnxruntime: Scan and Loop unrolled,
If inlined when its condition is known and ``scf.if`` when it is not."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from xrelay.frontends import import_onnx
from xrelay.frontends.onnx import OnnxImportError, OnnxRunTimeValueError
from xrelay.runtime.interpreter import run
from xrelay.testing.onnx_backend import XrelayBackend
from xrelay.testing.onnx_models import run_onnxruntime

F = TensorProto.FLOAT


def _model(nodes, inputs, outputs, opset=17, inits=()):
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        list(inits),
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _check(model, feeds, *, bound=()):
    want = run_onnxruntime(model, feeds)
    for mode in ("interpreter", "built"):
        got = XrelayBackend.prepare(model, mode=mode).run([feeds[i.name] for i in model.graph.input])
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def _ops(module) -> list[str]:
    return [op.name for op in module.walk()]


def _scan_body():
    # state s, scan input x: s' = s * 0.5 + x; outputs s' and s' + x
    return helper.make_graph(
        [
            helper.make_node("Constant", [], ["h"], value=helper.make_tensor("h", F, [], [0.5])),
            helper.make_node("Mul", ["s", "h"], ["sh"]),
            helper.make_node("Add", ["sh", "x"], ["s2"]),
            helper.make_node("Add", ["s2", "x"], ["y"]),
        ],
        "body",
        [helper.make_tensor_value_info("s", F, [3]), helper.make_tensor_value_info("x", F, [3])],
        [helper.make_tensor_value_info("s2", F, [3]), helper.make_tensor_value_info("y", F, [3])],
    )


@pytest.mark.parametrize("in_axis, in_dir, out_axis, out_dir", [(0, 0, 0, 0), (1, 1, 1, 0), (-1, 0, -1, 1)])
def test_scan_axes_and_directions(rng, in_axis, in_dir, out_axis, out_dir):
    xs = (4, 3) if in_axis == 0 else (3, 4)
    node = helper.make_node(
        "Scan", ["s0", "xs"], ["s", "ys"], num_scan_inputs=1, body=_scan_body(),
        scan_input_axes=[in_axis], scan_input_directions=[in_dir],
        scan_output_axes=[out_axis], scan_output_directions=[out_dir],
    )
    ys = (4, 3) if out_axis == 0 else (3, 4)
    model = _model([node], [("s0", F, [3]), ("xs", F, list(xs))], [("s", F, [3]), ("ys", F, list(ys))])
    feeds = {"s0": rng.standard_normal(3).astype(np.float32), "xs": rng.standard_normal(xs).astype(np.float32)}
    _check(model, feeds)
    ops = _ops(import_onnx(model).module)
    assert ops.count("relay.take") == 4 and "relay.stack" in ops  # four steps, unrolled


def test_scan_opset8_batch(rng):
    node = helper.make_node("Scan", ["", "s0", "xs"], ["s", "ys"], num_scan_inputs=1, body=_scan_body())
    model = _model([node], [("s0", F, [2, 3]), ("xs", F, [2, 4, 3])], [("s", F, [2, 3]), ("ys", F, [2, 4, 3])], opset=8)
    feeds = {"s0": rng.standard_normal((2, 3)).astype(np.float32), "xs": rng.standard_normal((2, 4, 3)).astype(np.float32)}
    want = run_onnxruntime(model, feeds)
    imp = import_onnx(model)
    for g, w in zip(run(imp.module, feeds, imp.params), want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def _loop_body(stop_at=None):
    # carried v: v' = v * 2 + i; scan output v'; the condition turns false after step stop_at
    nodes = [
        helper.make_node("Cast", ["i"], ["fi"], to=F),
        helper.make_node("Constant", [], ["two"], value=helper.make_tensor("two", F, [], [2.0])),
        helper.make_node("Mul", ["v", "two"], ["v2"]),
        helper.make_node("Add", ["v2", "fi"], ["v3"]),
        helper.make_node("Identity", ["v3"], ["scan"]),
    ]
    if stop_at is None:
        nodes.append(helper.make_node("Identity", ["c"], ["c2"]))
    else:
        nodes.append(helper.make_node("Constant", [], ["lim"], value=helper.make_tensor("lim", TensorProto.INT64, [], [stop_at])))
        nodes.append(helper.make_node("Less", ["i", "lim"], ["c2"]))
    return helper.make_graph(
        nodes,
        "loop_body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v", F, [2]),
        ],
        [
            helper.make_tensor_value_info("c2", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v3", F, [2]),
            helper.make_tensor_value_info("scan", F, [2]),
        ],
    )


def _loop_model(trip, cond, stop_at=None):
    inits = [helper.make_tensor("M", TensorProto.INT64, [], [trip])] if trip is not None else []
    inits += [helper.make_tensor("C", TensorProto.BOOL, [], [cond])]
    node = helper.make_node("Loop", ["M" if trip is not None else "", "C", "v0"], ["v", "vs"], body=_loop_body(stop_at))
    return _model([node], [("v0", F, [2])], [("v", F, [2]), ("vs", F, None)], inits=inits)


@pytest.mark.parametrize("trip, cond, stop_at", [(5, True, None), (5, True, 2), (None, True, 3), (0, True, None), (4, False, None)])
def test_loop_unrolled(rng, trip, cond, stop_at):
    model = _loop_model(trip, cond, stop_at)
    feeds = {"v0": rng.standard_normal(2).astype(np.float32)}
    _check(model, feeds)
    ops = _ops(import_onnx(model).module)
    assert not any(o.startswith("scf.") for o in ops)


def test_loop_run_time_trip_count():
    node = helper.make_node("Loop", ["M", "", "v0"], ["v", "vs"], body=_loop_body())
    model = _model([node], [("M", TensorProto.INT64, []), ("v0", F, [2])], [("v", F, [2]), ("vs", F, None)])
    with pytest.raises(OnnxRunTimeValueError, match="Loop node .*trip count and every step's condition") as e:
        import_onnx(model)
    assert e.value.inputs == ("M",)
    feeds = {"M": np.array(3, np.int64), "v0": np.array([1.0, -1.0], np.float32)}
    _check(model, feeds)  # the backend binds M and unrolls


def test_loop_too_long_is_refused():
    with pytest.raises(OnnxImportError, match=r"unrolling 1000000 steps of a body of 6 nodes is more than"):
        import_onnx(_loop_model(1_000_000, True))


def _branch(name, value):
    return helper.make_graph(
        [helper.make_node("Add", ["x", name + "_c"], [name + "_out"])],
        name,
        [],
        [helper.make_tensor_value_info(name + "_out", F, [3])],
        [helper.make_tensor(name + "_c", F, [3], value)],
    )


def test_if_run_time_condition_is_scf_if(rng):
    node = helper.make_node("If", ["c"], ["y"], then_branch=_branch("t", [1, 2, 3]), else_branch=_branch("e", [-1, -2, -3]))
    model = _model([node], [("c", TensorProto.BOOL, []), ("x", F, [3])], [("y", F, [3])])
    imp = import_onnx(model)
    assert "scf.if" in _ops(imp.module)
    x = rng.standard_normal(3).astype(np.float32)
    for c in (True, False):
        feeds = {"c": np.array(c), "x": x}
        (want,) = run_onnxruntime(model, feeds)
        (got,) = run(imp.module, feeds, imp.params)
        np.testing.assert_allclose(got, want)
    from xrelay.backend.build import build

    with pytest.raises(Exception, match="holds an If"):
        build(imp.module, {})
    # the backend's built mode binds the inputs the condition comes from (fold-constant then
    # keeps the branch taken), once per distinct value
    rep = XrelayBackend.prepare(model, mode="built")
    for c in (True, False, True):
        (want,) = run_onnxruntime(model, {"c": np.array(c), "x": x})
        (got,) = rep.run([np.array(c), x])
        np.testing.assert_allclose(got, want)
    assert len(rep._builds) == 2


def test_if_known_condition_is_inlined(rng):
    node = helper.make_node("If", ["c"], ["y"], then_branch=_branch("t", [1, 2, 3]), else_branch=_branch("e", [-1, -2, -3]))
    model = _model([node], [("x", F, [3])], [("y", F, [3])], inits=[helper.make_tensor("c", TensorProto.BOOL, [1], [False])])
    imp = import_onnx(model)
    assert "scf.if" not in _ops(imp.module)
    _check(model, {"x": rng.standard_normal(3).astype(np.float32)})


def test_if_branch_types_differ():
    other = helper.make_graph(
        [helper.make_node("Constant", [], ["o"], value=helper.make_tensor("v", F, [2], [1, 2]))],
        "other", [], [helper.make_tensor_value_info("o", F, [2])],
    )
    node = helper.make_node("If", ["c"], ["y"], then_branch=_branch("t", [1, 2, 3]), else_branch=other)
    model = _model([node], [("c", TensorProto.BOOL, []), ("x", F, [3])], [("y", F, None)])
    with pytest.raises(OnnxRunTimeValueError, match="branches give different types") as e:
        import_onnx(model)
    assert e.value.inputs == ("c",)


def test_unsupported_op_in_body_is_named():
    body = helper.make_graph(
        [helper.make_node("NoSuchOp", ["x"], ["o"])], "b", [], [helper.make_tensor_value_info("o", F, [3])]
    )
    node = helper.make_node("If", ["c"], ["y"], then_branch=body, else_branch=body, name="the_if")
    model = _model([node], [("c", TensorProto.BOOL, []), ("x", F, [3])], [("y", F, [3])])
    with pytest.raises(OnnxImportError, match=r"NoSuchOp \(the_if.else_branch/#0, the_if.then_branch/#0\)"):
        import_onnx(model)
