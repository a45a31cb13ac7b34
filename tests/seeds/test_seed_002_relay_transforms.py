"""Seed 002: notes on Relay transforms, each example script ported with only imports changed.

``tvm.IRModule`` is ``xrelay.IRModule``, ``tvm.relay.transform``/``tvm.transform`` are
``xrelay.relay.transform`` and ``tvm.relay.testing`` is ``xrelay.relay.testing``. The seed
prints Relay text; here the same structure is asserted on xrelay's IR (func.func, relay.* ops,
private outlined primitive functions) and meaning is checked with ``check_semantics``.

Adapted or left out, as xrelay differs:

* ``graph, lib, params = relay.build(func, target="llvm")`` works as in TVM: ``graph`` is
  the graph-executor JSON, compared with the seed's without TVM's function names and hashes
  (TVM shares one ``fused_add`` between equal functions, xrelay outlines each); ``lib`` is
  the planned program, run with ``xrelay.runtime.create(lib)``.
* ``tvm.tir.IntImm("int32", 1)`` as the ``Inline`` attribute value is a plain ``1``.
* Not ported, since xrelay has no such passes: ``qnn.transform.Legalize`` (no QNN ops),
  ``RewriteAnnotatedOps`` with ``device_copy`` (xrelay has one device, the host CPU;
  ``on_device`` annotations are kept but never rewritten), ``CombineParallelDense`` and
  ``CombineParallelConv2D``.
"""

from __future__ import annotations

import json
import re

import numpy as np
from xdsl.dialects import func
from xdsl.ir import BlockArgument

import xrelay
import xrelay as tvm  # the seed says tvm.IRModule
import xrelay.runtime
from xrelay import relay
from xrelay.dialects.relay import ConstantOp, RelayOp
from xrelay.relay import transform
from xrelay.relay.testing import run_opt_pass
from xrelay.testing import check_semantics


def _funcs(mod):
    return {op.sym_name.data: op for op in mod.module.ops if isinstance(op, func.FuncOp)}


def _terms(fop):
    """Each returned value of ``fop`` as a term, ``op(arg, ...)``, with sharing expanded:
    the graph's structure independent of the order the ops are printed in."""
    term = {}
    seen = {}
    for arg in fop.body.block.args:
        # Repeated names get a number, as Relay prints them (%x, %x1).
        n = seen.get(arg.name_hint, 0)
        seen[arg.name_hint] = n + 1
        term[arg] = f"%{arg.name_hint}{n or ''}"
    for op in fop.body.block.ops:
        if isinstance(op, func.CallOp):
            inner = ", ".join(term[v] for v in op.operands)
            for r in op.results:
                term[r] = f"@{op.callee.root_reference.data}({inner})"
        elif isinstance(op, ConstantOp):
            term[op.results[0]] = f"{float(op.numpy()):g}"
        elif isinstance(op, RelayOp):
            inner = ", ".join(term[v] for v in op.operands)
            for i, r in enumerate(op.results):
                term[r] = f"{op.RELAY_NAME}({inner})" + (f".{i}" if len(op.results) > 1 else "")
        elif isinstance(op, func.ReturnOp):
            return [term[v] for v in op.operands]
    raise AssertionError("no func.return")


# ---------------------------------------------------------------------------------------
# 1.2 RemoveUnusedFunctions
# ---------------------------------------------------------------------------------------


def test_remove_unused_functions(capsys):
    mod = tvm.IRModule()
    x = relay.var("x", shape=(1, 1000))
    mod["fn1"] = relay.Function([x], x)
    y = relay.var("y", shape=(1, 1000))
    mod["fn2"] = relay.Function([y], y)
    z = relay.var("z", shape=(1, 1000))
    mod["main"] = relay.Function([z], relay.add(z, relay.GlobalVar("fn1")(z)))
    print("----------before----------")
    print(mod.get_global_vars())
    print(mod)
    print("----------after----------")
    mod = relay.transform.RemoveUnusedFunctions()(mod)
    print(mod)

    before, after = capsys.readouterr().out.split("----------after----------")
    assert "[GlobalVar(fn1), GlobalVar(fn2), GlobalVar(main)]" in before
    assert "func.func @fn2" in before
    # fn2 is gone; fn1, called from main, stays.
    assert "func.func @fn1" in after and "func.func @main" in after
    assert "@fn2" not in after
    assert [gv.name_hint for gv in mod.get_global_vars()] == ["fn1", "main"]
    assert _terms(_funcs(mod)["main"]) == ["add(%z, @fn1(%z))"]


# ---------------------------------------------------------------------------------------
# 1.3 SimplifyInference
# ---------------------------------------------------------------------------------------


def test_simplify_inference(capsys):
    mod = tvm.IRModule()
    x = relay.var("x", shape=(1, 10))
    alpha, gamma, mean, var = (
        relay.var("x", shape=(10,)),
        relay.var("y", shape=(10,)),
        relay.var("a", shape=(10,)),
        relay.var("b", shape=(10,)),
    )
    # fmt:off
    bn,_,_, = relay.nn.batch_norm(x, alpha, gamma, mean, var)
    # fmt:on
    mod["main"] = relay.Function(
        [x, alpha, gamma, mean, var],
        relay.nn.dropout(bn),
    )
    print("----------before----------")
    print(mod)
    print("----------after----------")
    reference = mod.clone()
    mod = relay.transform.InferType()(mod)
    mod = relay.transform.SimplifyInference()(mod)
    print(mod)

    before, after = capsys.readouterr().out.split("----------after----------")
    assert "relay.nn.batch_norm" in before and "relay.nn.dropout" in before
    assert "batch_norm" not in after and "dropout" not in after
    # The seed's result: %0 = add(%b, 1e-05f); %1 = sqrt(%0); %2 = divide(1f, %1);
    # %3 = multiply(%2, %x1); %4 = negative(%a); %5 = multiply(%4, %3);
    # %6 = multiply(%x, %3); %7 = add(%5, %y); add(%6, %7).
    scale = "multiply(divide(1, sqrt(add(%b, 1e-05))), %x1)"
    assert _terms(_funcs(mod)["main"]) == [
        f"add(multiply(%x, {scale}), add(multiply(negative(%a), {scale}), %y))"
    ]
    assert mod["main"].checked_type.ret_type == relay.TensorType((1, 10), "float32")
    # check_semantics binds inputs by name, and two parameters are called "x": run both
    # modules on the same positional inputs instead. A positive variance keeps sqrt real.
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((1, 10)).astype("float32")]
    inputs += [rng.standard_normal(10).astype("float32") for _ in range(3)]
    inputs.append(rng.uniform(0.5, 2.0, 10).astype("float32"))
    (want,) = tvm.run(reference, inputs)
    (got,) = tvm.run(mod, inputs)
    x_, gamma_, beta_, mean_, var_ = inputs
    np.testing.assert_allclose(
        want, (x_ - mean_) / np.sqrt(var_ + 1e-5) * gamma_ + beta_, rtol=1e-5
    )
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------
# 1.4 Inline
# ---------------------------------------------------------------------------------------


def test_inline(capsys):
    mod = tvm.IRModule()
    x1 = relay.var("x1", shape=(1, 10))
    fn1 = relay.Function([x1], x1)
    fn1 = fn1.with_attr("Inline", 1)  # tvm.tir.IntImm("int32", 1) in the seed
    g1 = relay.GlobalVar("g1")
    mod[g1] = fn1
    x2 = relay.var("x2", shape=(1, 10))
    fn2 = relay.Function([x2], x2)
    # fn2 = fn1.with_attr("Inline", tvm.tir.IntImm("int32", 1))
    g2 = relay.GlobalVar("g2")
    mod[g2] = fn2
    p0 = relay.var("p0", shape=(1, 10))
    mod["main"] = relay.Function([p0], relay.add(g1(p0), g2(p0)))
    print("----------before----------")
    print(mod)
    reference = mod.clone()
    mod = relay.transform.Inline()(mod)
    print("----------after----------")
    print(mod)

    before, after = capsys.readouterr().out.split("----------after----------")
    assert (
        "func.func @g1(%x1: tensor<1x10xf32>) -> tensor<1x10xf32> attributes {relay.inline = 1 : i64}"
        in before
    )
    # Seed: def @main(%p0) { %0 = @g2(%p0); add(%p0, %0) } and @g2 kept; @g1 removed.
    assert "@g1" not in after
    assert sorted(_funcs(mod)) == ["g2", "main"]
    main = _funcs(mod)["main"]
    ops = list(main.body.block.ops)
    assert [op.name for op in ops] == ["func.call", "relay.add", "func.return"]
    assert ops[0].callee.root_reference.data == "g2"
    assert isinstance(ops[1].operands[0], BlockArgument) and ops[1].operands[1] is ops[0].results[0]
    # Relay names the pass InlineGlobals; the factory is called Inline.
    assert relay.transform.Inline().info.name == "InlineGlobals"
    check_semantics(relay.transform.Inline(), reference)


# ---------------------------------------------------------------------------------------
# 1.6 FuseOps
# ---------------------------------------------------------------------------------------


def _fuse_simple_before():
    x = relay.var("x", shape=(10, 20))
    y = relay.add(x, x)
    y = relay.add(y, y)
    y = relay.add(y, y)
    y = relay.add(y, y)
    y = relay.add(y, y)
    z = relay.exp(y)
    return relay.Function([x], z)


# The graphs the seed prints (TVM's "hash" attribute and "tvmgen_default_" prefix left out).
SEED_GRAPH_UNFUSED = {
    "nodes": [{"op": "null", "name": "x", "inputs": []}]
    + [
        {
            "op": "tvm_op",
            "name": name,
            "attrs": {"num_outputs": "1", "num_inputs": "1", "flatten_data": "0"},
            "inputs": [[i, 0, 0]],
        }
        for i, name in enumerate(
            ["fused_add", "fused_add1", "fused_add2", "fused_add3", "fused_add4", "fused_exp"]
        )
    ],
    "arg_nodes": [0],
    "heads": [[6, 0, 0]],
    "attrs": {
        "dltype": ["list_str", ["float32"] * 7],
        "device_index": ["list_int", [1] * 7],
        "storage_id": ["list_int", [0, 1, 2, 1, 2, 1, 2]],
        "shape": ["list_shape", [[10, 20]] * 7],
    },
    "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 7],
}

SEED_GRAPH_FUSED = {
    "nodes": [
        {"op": "null", "name": "x", "inputs": []},
        {
            "op": "tvm_op",
            "name": "fused_add_add_add_add_add_exp",
            "attrs": {"num_outputs": "1", "num_inputs": "1", "flatten_data": "0"},
            "inputs": [[0, 0, 0]],
        },
    ],
    "arg_nodes": [0],
    "heads": [[1, 0, 0]],
    "attrs": {
        "dltype": ["list_str", ["float32", "float32"]],
        "device_index": ["list_int", [1, 1]],
        "storage_id": ["list_int", [0, 1]],
        "shape": ["list_shape", [[10, 20], [10, 20]]],
    },
    "node_row_ptr": [0, 1, 2],
}


def _comparable(graph):
    """The graph without function names: TVM reuses one ``fused_add`` for the five equal
    functions (node names add1, add2, ...), xrelay outlines five (fused_add_1, ...)."""
    graph = json.loads(graph) if isinstance(graph, str) else json.loads(json.dumps(graph))
    for node in graph["nodes"]:
        node.get("attrs", {}).pop("func_name", None)
        node.get("attrs", {}).pop("hash", None)
        if node["op"] == "tvm_op":
            node["name"] = re.sub(r"_?\d+$", "", node["name"])
    return graph


def test_build_without_fuse_ops():
    z = _fuse_simple_before()
    print(z)
    # z = run_opt_pass(z, transform.FuseOps())
    with transform.PassContext(opt_level=0):
        graph, lib, params = relay.build(z, target="llvm", params=None)
    print(graph)
    # One node per add and per exp; the chain's tensors take turns in storages 1 and 2.
    assert _comparable(graph) == _comparable(SEED_GRAPH_UNFUSED)
    assert params == {}

    # lib is the planned program; run it (graph_executor.create(graph, lib, dev) in TVM).
    m = xrelay.runtime.create(lib)
    x = np.random.default_rng(0).standard_normal((10, 20)).astype("float32") / 32
    m.set_input("x", x)
    m.run()
    np.testing.assert_allclose(m.get_output(0), np.exp(32 * x), rtol=1e-5)


def test_build_with_fuse_ops():
    z = _fuse_simple_before()
    z = run_opt_pass(z, transform.FuseOps())
    print(z)
    mod = tvm.IRModule.from_expr(z)
    # fn (%p0, Primitive=1) { add x5; exp }: one primitive function, one call in main.
    funcs = _funcs(mod)
    assert sorted(funcs) == ["fused_add_add_add_add_add_exp", "main"]
    fused = funcs["fused_add_add_add_add_add_exp"]
    assert fused.attributes["relay.primitive"].value.data == 1
    assert [op.name for op in fused.body.block.ops] == ["relay.add"] * 5 + [
        "relay.exp",
        "func.return",
    ]
    with transform.PassContext(opt_level=0):
        graph, lib, params = relay.build(z, target="llvm", params=None)
    print(graph)
    # All ops are fused into the same function tvmgen_default_fused_add_add_add_add_add_exp.
    assert _comparable(graph) == _comparable(SEED_GRAPH_FUSED)
    assert [n["attrs"]["func_name"] for n in json.loads(graph)["nodes"][1:]] == [
        "fused_add_add_add_add_add_exp"
    ]
    m = xrelay.runtime.create(lib)
    x = np.random.default_rng(1).standard_normal((10, 20)).astype("float32") / 32
    m.run(x=x)
    np.testing.assert_allclose(m.get_output(0), np.exp(32 * x), rtol=1e-5)


def test_fuse_ops_stops_at_a_reduction():
    def before():
        x = relay.var("x", shape=(20, 20))
        y1 = relay.add(x, x)
        y2 = relay.add(y1, y1)
        y3 = relay.sum(y2, axis=-1)
        y = relay.add(y3, y3)
        return relay.Function([x], y)

    z = before()
    z = run_opt_pass(z, transform.FuseOps())
    print(z)
    mod = tvm.IRModule.from_expr(z)
    # Seed: fn(add, add, sum) and fn(add); the add after the reduction has a schedule of its
    # own, so it is not fused into the reduction.
    funcs = _funcs(mod)
    primitive = {
        name: [op.name for op in f.body.block.ops][:-1]
        for name, f in funcs.items()
        if "relay.primitive" in f.attributes
    }
    assert sorted(primitive.values()) == [
        ["relay.add"],
        ["relay.add", "relay.add", "relay.sum"],
    ]
    main_calls = [
        op.callee.root_reference.data
        for op in funcs["main"].body.block.ops
        if isinstance(op, func.CallOp)
    ]
    assert [primitive[c] for c in main_calls] == [
        ["relay.add", "relay.add", "relay.sum"],
        ["relay.add"],
    ]
    check_semantics(transform.FuseOps(), tvm.IRModule.from_expr(before()))


# ---------------------------------------------------------------------------------------
# 1.7 FoldScaleAxis
# ---------------------------------------------------------------------------------------

I = N = 1  # noqa: E741 - the seed's names
O = C = 2  # noqa: E741
H = W = 3


def run_opt_pass_local(expr, opt_pass):
    # The seed defines its own run_opt_pass (tvm.transform.Pass is transform.Pass here).
    assert isinstance(opt_pass, transform.Pass)
    mod = tvm.IRModule.from_expr(expr)
    mod = opt_pass(mod)
    entry = mod["main"]
    return entry if isinstance(expr, relay.Function) else entry.body


def test_fold_scale_axis_backward():
    def get_model(x, weight, scale):
        args = [x]
        # x = relay.multiply(x, scale)
        y = relay.nn.conv2d(
            x,
            weight,
            channels=C,
            kernel_size=(3, 3),
            padding=(1, 1),
        )
        y = relay.multiply(y, scale)
        return relay.Function(args, y)

    def check(shape):
        rng = np.random.default_rng(0)
        w = rng.standard_normal((O, I, H, W)).astype("float32")
        s = rng.standard_normal((C, 1, 1)).astype("float32")
        x = relay.var("x", shape=shape)
        weight = relay.const(w)
        scale = relay.const(s)
        y = get_model(x, weight, scale)
        y = run_opt_pass_local(y, transform.InferType())
        print(y)
        y_folded = run_opt_pass_local(y, transform.BackwardFoldScaleAxis())
        print(y_folded)
        mid = tvm.IRModule.from_expr(y_folded)
        y_folded = run_opt_pass_local(y_folded, transform.FoldConstant())
        print(y_folded)

        # After the backward fold the scale multiplies the weight, before the conv2d.
        mid_ops = [op for op in _funcs(mid)["main"].body.block.ops if isinstance(op, RelayOp)]
        assert mid_ops[-1].RELAY_NAME == "nn.conv2d"
        assert "multiply" in [op.RELAY_NAME for op in mid_ops[:-1]]
        # After FoldConstant only the conv2d is left, with weight * scale as its weight.
        final = tvm.IRModule.from_expr(y_folded)
        ops = list(_funcs(final)["main"].body.block.ops)
        assert [op.name for op in ops] == ["relay.constant", "relay.nn.conv2d", "func.return"]
        assert ops[1].attrs["padding"] == (1, 1, 1, 1) and ops[1].attrs["channels"] == 2
        np.testing.assert_allclose(ops[0].numpy(), w * s[:, :, :, None], rtol=1e-6)
        check_semantics(
            [transform.BackwardFoldScaleAxis(), transform.FoldConstant()],
            tvm.IRModule.from_expr(y),
        )

    check((1, N, 10, 10))


def test_fold_scale_axis_is_a_sequence_of_three_passes():
    # Pass FoldScaleAxis() = Sequential({BackwardFoldScaleAxis(), ForwardFoldScaleAxis(),
    # FoldConstant()}, "FoldScaleAxis")
    seq = transform.FoldScaleAxis()
    assert seq.info.name == "FoldScaleAxis"
    assert [p.info.name for p in seq.passes] == [
        "BackwardFoldScaleAxis",
        "ForwardFoldScaleAxis",
        "FoldConstant",
    ]


def test_relay_factory_names():
    # Relay's factory names where the pass has another name, and the normal-form passes.
    names = dir(relay.transform)
    for name in ("Inline", "InlineGlobals", "ToANormalForm", "ToGraphNormalForm", "FuseOps"):
        assert name in names
    assert relay.transform._ffi_api.FuseOps().info.name == "FuseOps"
