"""Import of ONNX's control flow (If, Loop, Scan) against onnxruntime: Scan unrolled, Loop
unrolled when its count and conditions are known (test_onnx_loop.py has the ``relay.loop``
region otherwise), If inlined when its condition is known and ``scf.if`` when it is not."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from xdsl.parser import Parser

from xrelay.backend.build import BuildError, build
from xrelay.dialects import make_context
from xrelay.frontends import import_onnx
from xrelay.frontends.onnx import OnnxImportError, OnnxRunTimeValueError
from xrelay.runtime.interpreter import RunError, run
from xrelay.testing.onnx_backend import XrelayBackend
from xrelay.testing.onnx_models import run_onnxruntime
from xrelay.transforms.fuse_ops import FuseOpsError, fuse_ops

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


def _check(model, feeds, *, modes=("interpreter", "built"), reference="onnxruntime"):
    if reference == "onnxruntime":
        want = run_onnxruntime(model, feeds)
    else:
        from onnx.reference import ReferenceEvaluator

        want = ReferenceEvaluator(model).run(None, feeds)
    assert all(np.isfinite(w).all() for w in want)
    for mode in modes:
        got = XrelayBackend.prepare(model, mode=mode).run([feeds[i.name] for i in model.graph.input])
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype, (mode, g.shape, w.shape)
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


def _loop_body(stop_at=None, *, limit=None, size=2):
    """Carried v: v' = v * 2 + i; scan output v'. The next condition: i < stop_at, or
    sum(v') < limit (``limit`` names an outer-scope value), or the condition passed through."""
    nodes = [
        helper.make_node("Cast", ["i"], ["fi"], to=F),
        helper.make_node("Constant", [], ["two"], value=helper.make_tensor("two", F, [], [2.0])),
        helper.make_node("Mul", ["v", "two"], ["v2"]),
        helper.make_node("Add", ["v2", "fi"], ["v3"]),
        helper.make_node("Identity", ["v3"], ["scan"]),
    ]
    if limit is not None:
        nodes += [helper.make_node("ReduceSum", ["v3"], ["s"], keepdims=0), helper.make_node("Less", ["s", limit], ["c2"])]
    elif stop_at is None:
        nodes.append(helper.make_node("Identity", ["c"], ["c2"]))
    else:
        nodes.append(helper.make_node("Constant", [], ["lim"], value=helper.make_tensor("lim", TensorProto.INT64, [], [stop_at])))
        nodes.append(helper.make_node("Less", ["i", "lim"], ["c2"]))
    return helper.make_graph(
        nodes,
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v", F, [size]),
        ],
        [
            helper.make_tensor_value_info("c2", TensorProto.BOOL, []),
            helper.make_tensor_value_info("v3", F, [size]),
            helper.make_tensor_value_info("scan", F, [size]),
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
    assert "relay.loop" in _ops(import_onnx(model).module)  # a region the interpreter runs
    with pytest.raises(OnnxRunTimeValueError, match="Loop node .*trip count and every step's condition") as e:
        import_onnx(model, unroll_loops=True)
    assert e.value.inputs == ("M",)
    feeds = {"M": np.array(3, np.int64), "v0": np.array([1.0, -1.0], np.float32)}
    _check(model, feeds)  # "built" binds M and unrolls


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


# ---- Loop with a run-time trip count or condition: relay.loop ------------------------------------

I64, B = TensorProto.INT64, TensorProto.BOOL


def _vi(name, t, shape):
    return helper.make_tensor_value_info(name, t, shape)


def _checked_model(nodes, inputs, outputs, inits=()):
    model = _model(nodes, inputs, outputs, inits=inits)
    onnx.checker.check_model(model)
    return model


def _body(stop="limit"):
    return _loop_body(limit=stop, size=3)


def _while_model():
    """Trip count, condition and limit are graph inputs."""
    node = helper.make_node("Loop", ["n", "c0", "v0"], ["v", "vs"], body=_body())
    return _checked_model(
        [node],
        [("n", I64, []), ("c0", B, []), ("v0", F, [3]), ("limit", F, [])],
        [("v", F, [3]), ("vs", F, [None, 3])],
    )


def _dangling_uses(module) -> list[str]:
    """Uses of the module's values by ops that are not in it (left by an import thrown away)."""
    inside = set(module.walk())
    values = [r for op in inside for r in op.results]
    values += [a for op in inside for region in op.regions for block in region.blocks for a in block.args]
    return [f"{v} used by {u.operation.name}" for v in values for u in v.uses if u.operation not in inside]


CASES = [
    (5, True, 1e9),  # five steps
    (0, True, 1e9),  # no iteration: the scan output is (0, 3)
    (3, False, 1e9),  # the initial condition is false: no iteration
    (10, True, 60.0),  # the condition stops it early (after the 3rd step)
    (10, True, -1.0),  # the condition stops it after the first step
]


@pytest.mark.parametrize("n, c, limit", CASES)
def test_run_time_trip_count_and_condition_against_onnxruntime(rng, n, c, limit):
    model = _while_model()
    feeds = {
        "n": np.array(n, np.int64), "c0": np.array(c), "limit": np.array(limit, np.float32),
        "v0": rng.uniform(0.5, 1.5, 3).astype(np.float32),
    }
    _check(model, feeds)


def test_huge_trip_count_ended_by_the_condition(rng):
    # the interpreter runs the region; the built module would have to unroll 2**40 steps
    model = _while_model()
    feeds = {"n": np.array(2**40, np.int64), "c0": np.array(True), "limit": np.array(1e4, np.float32),
             "v0": rng.uniform(0.5, 1.5, 3).astype(np.float32)}
    _check(model, feeds, modes=("interpreter",))
    with pytest.raises(OnnxImportError, match=r"unrolling 1099511627776 steps of a body of 7 nodes is more than"):
        XrelayBackend.prepare(model, mode="built").run([feeds[i.name] for i in model.graph.input])


def test_one_import_serves_every_trip_count(rng):
    model = _while_model()
    imp = import_onnx(model, freeze_params=True)
    ops = _ops(imp.module)
    assert ops.count("relay.loop") == 1 and "relay.loop_yield" in ops
    assert ops.count("relay.multiply") == 1  # the body once, not unrolled
    v0 = rng.uniform(0.5, 1.5, 3).astype(np.float32)
    lengths = []
    for n in (0, 1, 4, 7):
        feeds = {"n": np.array(n, np.int64), "c0": np.array(True), "v0": v0, "limit": np.array(1e9, np.float32)}
        got = run(imp.module, feeds)
        want = run_onnxruntime(model, feeds)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-6)
        lengths.append(got[1].shape[0])
    assert lengths == [0, 1, 4, 7]


def test_module_prints_and_parses_back():
    imp = import_onnx(_while_model(), freeze_params=True)
    text = str(imp.module)
    assert "relay.loop %n, %c0, %v0 : (tensor<i64>, tensor<i1>, tensor<3xf32>) -> (tensor<3xf32>, tensor<?x3xf32>)" in text
    again = Parser(make_context(), text).parse_module()
    again.verify()
    assert str(again) == text


def test_condition_only_is_a_while_loop(rng):
    node = helper.make_node("Loop", ["", "c0", "v0"], ["v", "vs"], body=_body())
    model = _checked_model([node], [("c0", B, []), ("v0", F, [3]), ("limit", F, [])], [("v", F, [3]), ("vs", F, [None, 3])])
    for limit in (-1.0, 50.0, 5e3):
        feeds = {"c0": np.array(True), "v0": rng.uniform(0.5, 1.5, 3).astype(np.float32), "limit": np.array(limit, np.float32)}
        _check(model, feeds)


def test_trip_count_only_still_honours_the_body_condition(rng):
    # ONNX's Loop text calls the body's condition "ignored" without a condition input;
    # onnxruntime and ONNX's reference evaluator stop on it all the same, and so does xrelay
    node = helper.make_node("Loop", ["n", "", "v0"], ["v", "vs"], body=_body())
    model = _checked_model([node], [("n", I64, []), ("v0", F, [3]), ("limit", F, [])], [("v", F, [3]), ("vs", F, [None, 3])])
    for n, limit in ((0, -1.0), (4, -1.0), (4, 1e9), (6, 60.0)):
        feeds = {"n": np.array(n, np.int64), "v0": rng.uniform(0.5, 1.5, 3).astype(np.float32), "limit": np.array(limit, np.float32)}
        _check(model, feeds)


def test_known_trip_count_run_time_condition_is_a_region(rng):
    # the count is a constant, the condition data-dependent: unrolling fails, so a region
    inits = [helper.make_tensor("n", I64, [], [20]), helper.make_tensor("c0", B, [], [True])]
    node = helper.make_node("Loop", ["n", "c0", "v0"], ["v", "vs"], body=_body())
    model = _checked_model([node], [("v0", F, [3]), ("limit", F, [])], [("v", F, [3]), ("vs", F, [None, 3])], inits)
    imp = import_onnx(model, freeze_params=True)
    assert _ops(imp.module).count("relay.loop") == 1
    assert _ops(imp.module).count("relay.multiply") == 1  # the failed unrolling left nothing behind
    assert _dangling_uses(imp.module) == []
    for limit in (10.0, 300.0):
        _check(model, {"v0": rng.uniform(0.5, 1.5, 3).astype(np.float32), "limit": np.array(limit, np.float32)})


def test_loop_carried_value_of_changing_shape_is_dynamic(rng):
    # ONNX's loop11: v' = v + x[i:i+1]; the slice's run-time bounds give tensor<?xf32>
    x = helper.make_tensor("x", F, [5], [1, 2, 3, 4, 5])
    body = helper.make_graph(
        [
            helper.make_node("Constant", [], ["one"], value=helper.make_tensor("one", I64, [], [1])),
            helper.make_node("Add", ["i", "one"], ["end"]),
            helper.make_node("Unsqueeze", ["i", "zero"], ["start1"]),
            helper.make_node("Unsqueeze", ["end", "zero"], ["end1"]),
            helper.make_node("Slice", ["x", "start1", "end1"], ["xi"]),
            helper.make_node("Add", ["v", "xi"], ["v2"]),
            helper.make_node("Identity", ["c"], ["c2"]),
            helper.make_node("Identity", ["v2"], ["scan"]),
        ],
        "body", [_vi("i", I64, []), _vi("c", B, []), _vi("v", F, [1])],
        [_vi("c2", B, []), _vi("v2", F, [1]), _vi("scan", F, [1])],
        [helper.make_tensor("zero", I64, [1], [0])],
    )
    node = helper.make_node("Loop", ["n", "", "v0"], ["v", "vs"], body=body)
    model = _checked_model([node], [("n", I64, []), ("v0", F, [1])], [("v", F, [1]), ("vs", F, [None, 1])], [x])
    imp = import_onnx(model, freeze_params=True)
    assert "tensor.cast" in _ops(imp.module)  # the static initial value joins the dynamic carried one
    for n in (0, 3, 5):
        _check(model, {"n": np.array(n, np.int64), "v0": np.array([0.5], np.float32)})


def test_built_module_unrolls_after_binding_the_count():
    imp_err = None
    try:
        import_onnx(_while_model(), freeze_params=True, unroll_loops=True)
    except OnnxRunTimeValueError as e:
        imp_err = e
    assert imp_err is not None and imp_err.inputs == ("n",)  # the backend asks again for more
    assert "unrolling the Loop at import" in str(imp_err)


def test_build_refuses_the_region_by_name():
    imp = import_onnx(_while_model(), freeze_params=True)
    with pytest.raises(BuildError, match=r"build: the module holds a 'relay.loop' \(ONNX's Loop with a run-time trip count"):
        build(imp.module, {})
    with pytest.raises(FuseOpsError, match=r"contains a 'relay.loop' \(ONNX's Loop with a run-time trip count"):
        fuse_ops(imp.module)  # the pass on its own (relay-opt -p fuse-ops) says so too


def test_interpreter_refuses_scan_elements_of_different_shapes():
    text = """
    func.func @main(%n: tensor<i64>, %c: tensor<i1>, %v0: tensor<?xf32>) -> (tensor<?xf32>, tensor<?x?xf32>) {
      %v, %s = relay.loop %n, %c, %v0 : (tensor<i64>, tensor<i1>, tensor<?xf32>) -> (tensor<?xf32>, tensor<?x?xf32>) {
      ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %vi: tensor<?xf32>):
        %w = relay.concatenate %vi, %vi {axis = 0} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
        relay.loop_yield %ci, %w, %w : tensor<i1>, tensor<?xf32>, tensor<?xf32>
      }
      func.return %v, %s : tensor<?xf32>, tensor<?x?xf32>
    }"""
    mod = Parser(make_context(), text).parse_module()
    feeds = {"n": np.array(2, np.int64), "c": np.array(True), "v0": np.ones(2, np.float32)}
    with pytest.raises(RunError, match=r"relay.loop\): scan output 0 has elements of different shapes \[\(4,\), \(8,\)\]"):
        run(mod, feeds)
    v, _ = run(mod, {**feeds, "n": np.array(1, np.int64)})
    assert v.shape == (4,)


# ---- hostile bodies: one clear error each ----------------------------------------------------


def _bad(body, inputs=(("n", I64, []), ("c0", B, []), ("v0", F, [3]))):
    node = helper.make_node("Loop", ["n", "c0", "v0"], ["v"], body=body, name="the_loop")
    graph = helper.make_graph([node], "g", [_vi(*i) for i in inputs], [_vi("v", F, [3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _graph(nodes, ins, outs, inits=()):
    return helper.make_graph(nodes, "body", [_vi(*i) for i in ins], [_vi(*o) for o in outs], list(inits))


BAD = {
    "too few body inputs": (
        _graph([helper.make_node("Identity", ["c"], ["c2"]), helper.make_node("Identity", ["c"], ["v2"])],
               [("c", B, [])], [("c2", B, []), ("v2", F, [3])]),
        r"Loop node 'the_loop': its body 'body' has 1 inputs; a Loop body takes the iteration number, the condition and the 1 loop-carried value\(s\) \(3\)",
    ),
    "condition not bool": (
        _graph([helper.make_node("Cast", ["i"], ["c2"], to=F), helper.make_node("Identity", ["v"], ["v2"])],
               [("i", I64, []), ("c", B, []), ("v", F, [3])], [("c2", F, []), ("v2", F, [3])]),
        r"Loop node 'the_loop': its body's condition output is float32, expected bool",
    ),
    "condition of three elements": (
        _graph([helper.make_node("Less", ["v", "v"], ["c2"]), helper.make_node("Identity", ["v"], ["v2"])],
               [("i", I64, []), ("c", B, []), ("v", F, [3])], [("c2", B, [3]), ("v2", F, [3])]),
        r"Loop node 'the_loop': its body's condition output has shape \[3\], expected one element",
    ),
    "carried value changes rank": (
        _graph([helper.make_node("Identity", ["c"], ["c2"]), helper.make_node("Unsqueeze", ["v", "ax"], ["v2"])],
               [("i", I64, []), ("c", B, []), ("v", F, [3])], [("c2", B, []), ("v2", F, [1, 3])],
               [helper.make_tensor("ax", I64, [1], [0])]),
        r"cannot be a loop region: loop-carried value 0 is tensor<3xf32> before an iteration and tensor<1x3xf32> after it",
    ),
    "body output never written": (
        _graph([helper.make_node("Identity", ["c"], ["c2"])],
               [("i", I64, []), ("c", B, []), ("v", F, [3])], [("c2", B, []), ("nowhere", F, [3])]),
        r"output 'nowhere' of its body 'body' is not produced by any node",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_loop_body_is_one_clear_error(case):
    body, message = BAD[case]
    with pytest.raises(OnnxImportError, match=message):
        import_onnx(_bad(body))


def test_trip_count_of_the_wrong_type_is_refused():
    model = _bad(_body(stop=None), inputs=(("n", F, []), ("c0", B, []), ("v0", F, [3])))
    with pytest.raises(OnnxImportError, match=r"Loop node 'the_loop': its trip count is float32, expected int64"):
        import_onnx(model)


# ---- Scan over an axis of run-time length: relay.loop -------------------------------------------


@pytest.mark.parametrize("in_axis, in_dir, out_axis, out_dir", [(0, 0, 0, 0), (1, 1, 1, 0), (-1, 0, -1, 0), (0, 1, 1, 0)])
def test_scan_of_run_time_length_is_a_region(rng, in_axis, in_dir, out_axis, out_dir):
    node = helper.make_node(
        "Scan", ["s0", "xs"], ["s", "ys"], num_scan_inputs=1, body=_scan_body(),
        scan_input_axes=[in_axis], scan_input_directions=[in_dir],
        scan_output_axes=[out_axis], scan_output_directions=[out_dir],
    )
    dyn = [None, 3] if in_axis == 0 else [3, None]
    model = _model([node], [("s0", F, [3]), ("xs", F, dyn)], [("s", F, [3]), ("ys", F, None)])
    imp = import_onnx(model)
    assert _ops(imp.module).count("relay.loop") == 1 and _ops(imp.module).count("relay.multiply") == 1
    for n in (1, 5, 0):
        shape = (n, 3) if in_axis == 0 else (3, n)
        feeds = {"s0": rng.standard_normal(3).astype(np.float32), "xs": rng.standard_normal(shape).astype(np.float32)}
        if n:
            _check(model, feeds, modes=("interpreter",))
        else:  # onnxruntime 1.31 dies of SIGFPE on a Scan of no steps, ONNX's reference refuses
            # it: ONNX's Scan gives the initial states and scan outputs of length 0
            s, ys = run(imp.module, feeds)
            np.testing.assert_array_equal(s, feeds["s0"])
            assert ys.shape == ((0, 3) if out_axis == 0 else (3, 0))
    with pytest.raises(BuildError, match="holds a 'relay.loop'"):
        build(imp.module, {})


def test_reversed_scan_output_of_run_time_length_is_refused():
    node = helper.make_node(
        "Scan", ["s0", "xs"], ["s", "ys"], num_scan_inputs=1, body=_scan_body(), scan_output_directions=[1], name="sc"
    )
    model = _model([node], [("s0", F, [3]), ("xs", F, [None, 3])], [("s", F, [3]), ("ys", F, None)])
    with pytest.raises(OnnxImportError, match=r"Scan node 'sc': a reversed scan output .* over a scan axis of run-time length"):
        import_onnx(model)


@pytest.mark.parametrize(
    "name",
    ["infer-type", "fold-constant", "dead-code-elimination", "cse", "canonicalize", "simplify-expr",
     "to-a-normal-form", "to-graph-normal-form", "simplify-inference"],
)
def test_passes_keep_a_loop_region_and_its_meaning(name):
    from xdsl.transforms import get_all_passes as xdsl_passes

    from xrelay.transforms import get_all_passes

    imp = import_onnx(_while_model(), freeze_params=True)
    feeds = {"n": np.array(6, np.int64), "c0": np.array(True), "v0": np.array([1, 2, 3], np.float32),
             "limit": np.array(100, np.float32)}
    before = run(imp.module, feeds)
    {**xdsl_passes(), **get_all_passes()}[name]()().apply(make_context(), imp.module)
    imp.module.verify()
    assert "relay.loop" in _ops(imp.module)
    after = run(imp.module, feeds)
    assert before[1].shape == (4, 3)  # the condition stopped it after four of six steps
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
