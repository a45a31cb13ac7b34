"""Relay's BYOC passes (merge-composite, annotate-target, merge-compiler-regions,
partition-graph, partition_for_dnnl): the meaning is kept and the partitioned IR has Relay's
shape, on workloads and hand-made graphs."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func

import xrelay
from xrelay import relay
from xrelay.dialects import module_op
from xrelay.relay.dataflow_pattern import is_constant, is_op, wildcard
from xrelay.relay.op.contrib.dnnl import partition_for_dnnl
from xrelay.testing import mobilenet, resnet
from xrelay.testing.semantics import apply_pass, check_semantics

BYOC = "merge-composite{pattern-table=dnnl},annotate-target{targets=dnnl},merge-compiler-regions,partition-graph"


def _funcs(mod) -> dict[str, func.FuncOp]:
    return {f.sym_name.data: f for f in module_op(mod).ops if isinstance(f, func.FuncOp)}


def _attr(f: func.FuncOp, name: str):
    a = f.attributes.get(name)
    return None if a is None else getattr(a, "data", a)


@pytest.mark.parametrize("workload", ["resnet18", "mobilenet"])
def test_byoc_pipeline_keeps_meaning(workload):
    if workload == "resnet18":
        mod, _ = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 32, 32))
    else:
        mod, _ = mobilenet.get_workload(batch_size=1, image_shape=(3, 32, 32))
    with relay.transform.PassContext(opt_level=3):
        mod = relay.transform.CanonicalizeOps()(relay.transform.SimplifyInference()(mod))
    check_semantics(BYOC, mod)
    after = apply_pass(BYOC, mod.clone())
    funcs = _funcs(after)
    external = [f for f in funcs.values() if _attr(f, "relay.compiler") == "dnnl"]
    assert external, "no dnnl function"
    for f in external:
        name = f.sym_name.data
        assert name.startswith("tvmgen_default_dnnl_main_")
        assert _attr(f, "relay.global_symbol") == name
        assert f.attributes["relay.primitive"].value.data == 1
        assert f.attributes["relay.inline"].value.data == 1
    text = str(module_op(after))
    assert "compiler_begin" not in text and "compiler_end" not in text


@pytest.mark.no_change("merge-compiler-regions", "the test checks the composites, that they are partitioned and the run; how many regions merge it does not count")
def test_partition_for_dnnl_resnet_bound_params():
    mod, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 32, 32))
    ref = mod.clone()
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype("float32")
    want = xrelay.run(ref, {"data": x}, params)
    mod = partition_for_dnnl(mod, params)
    funcs = _funcs(mod)
    composites = {_attr(f, "relay.composite") for f in funcs.values()} - {None}
    # Relay's ResNet (conv2d with channels, batch norms folded into bias adds)
    assert "dnnl.conv2d_bias_relu" in composites
    assert "dnnl.dense_bias" in composites
    # partitioned: the composites are in external dnnl functions
    assert any(_attr(f, "relay.compiler") == "dnnl" for f in funcs.values())
    got = xrelay.run(mod, {"data": x})
    np.testing.assert_allclose(got[0] if isinstance(got, list | tuple) else got,
                               want[0] if isinstance(want, list | tuple) else want, rtol=1e-4, atol=1e-4)


def test_merge_composite_python_table_and_check():
    x = relay.var("x", shape=(1, 4))
    y = relay.nn.relu(relay.add(x, relay.const(np.ones((1, 4), "float32"))))
    mod = xrelay.IRModule.from_expr(y)
    pat = is_op("nn.relu")(is_op("add")(wildcard(), is_constant()))
    seen = []
    table = [("test.add_relu", pat, lambda root: seen.append(root.name) or True)]
    check_semantics(relay.transform.MergeComposite(table), mod)
    seen.clear()
    after = relay.transform.MergeComposite(table)(mod.clone())
    assert seen == ["relay.nn.relu"]
    comp = [f for f in _funcs(after).values() if _attr(f, "relay.composite") == "test.add_relu"]
    assert len(comp) == 1
    # the constant matched by is_constant() is embedded, so the function has one parameter
    assert len(comp[0].args) == 1
    # a check that refuses leaves the graph alone
    mod2 = xrelay.IRModule.from_expr(y)
    relay.transform.MergeComposite([("test.add_relu", pat, lambda root: False)])(mod2)
    assert all(_attr(f, "relay.composite") is None for f in _funcs(mod2).values())


def test_composite_bodies_keep_the_block_order_over_many_matches():
    """Each composite's ops are cloned in the block's order, which here is not the
    pattern's (the subtract stands before the add), over many matches in one block."""
    from xdsl.parser import Parser

    from xrelay.dialects import make_context

    t, n = "tensor<4xf32>", 20
    lines, x = [], "%x"
    for i in range(n):
        lines += [
            f"%s{i} = relay.subtract {x}, %b : ({t}, {t}) -> {t}",
            f"%p{i} = relay.add {x}, %b : ({t}, {t}) -> {t}",
            f"%m{i} = relay.multiply %p{i}, %s{i} : ({t}, {t}) -> {t}",
            f"%t{i} = relay.tanh %m{i} : ({t}) -> {t}",
        ]
        x = f"%t{i}"
    text = f"func.func @main(%x: {t}, %b: {t}) -> {t} {{\n" + "\n".join(lines) + f"\nfunc.return {x} : {t}\n}}"
    module = Parser(make_context(), text).parse_module()
    a, b = wildcard(), wildcard()
    table = [("t.add_sub_mul", (a + b) * (a - b))]
    check_semantics(relay.transform.MergeComposite(table), module)
    after = module_op(relay.transform.MergeComposite(table)(module.clone()))
    funcs = _funcs(after)
    main = funcs.pop("main").body.block
    assert len(funcs) == n
    for f in funcs.values():
        assert [o.name for o in f.body.block.ops] == ["relay.subtract", "relay.add", "relay.multiply", "func.return"]
        assert _attr(f, "relay.partitioned_from_pattern") == "subtract_add_multiply_"
    assert [o.name for o in main.ops] == ["func.call", "relay.tanh"] * n + ["func.return"]


def test_root_ops_name_every_op_a_pattern_can_match():
    """``root_ops`` (the ops merge-composite tries a pattern at) names the op of every value
    the pattern matches, in a graph with each form at the pattern's root -- a call, an
    alternative of calls or of callees, attributes on a call, a tuple item, an optional
    tail -- and is None where a wildcard could match anything."""
    from xdsl.parser import Parser

    from xrelay.dialects import make_context
    from xrelay.transforms._dataflow_pattern import Match, TupleGetItemPattern, root_ops

    t = "tensor<4xf32>"
    text = f"""func.func @main(%x: {t}) -> {t} {{
      %r = relay.nn.relu %x : ({t}) -> {t}
      %e = relay.exp %r : ({t}) -> {t}
      %a = relay.add %e, %r : ({t}, {t}) -> {t}
      %s = relay.sum %a {{axis = [0], keepdims = true}} : ({t}) -> tensor<1xf32>
      %p, %q = relay.split %a {{indices_or_sections = 2}} : ({t}) -> (tensor<2xf32>, tensor<2xf32>)
      func.return %a : {t}
    }}"""
    block = Parser(make_context(), text).parse_module().ops.first.body.block
    values = [v for op in block.ops for v in op.results]
    x, y = wildcard(), wildcard()
    cases = [
        (is_op("exp")(x), {"exp"}),
        (is_op("nn.relu")(x) | is_op("exp")(x), {"nn.relu", "exp"}),
        ((is_op("nn.relu") | is_op("exp"))(x), {"nn.relu", "exp"}),
        (is_op("sum")(x).has_attr({"keepdims": True}), {"sum"}),
        (TupleGetItemPattern(is_op("split")(x), 1), {"split"}),
        (is_op("add")(x, y).optional(lambda z: is_op("exp")(z)), {"add", "exp"}),
        (is_op("add")(x, y) | x, None),
    ]
    for pattern, names in cases:
        assert root_ops(pattern) == (None if names is None else frozenset(names)), names
        matched = {v.owner.RELAY_NAME for v in values if Match().match(pattern, v)}
        assert matched and (names is None or matched <= names), (names, matched)


def test_commutative_add_matches_swapped():
    x = relay.var("x", shape=(2, 3))
    b = relay.var("b", shape=(3,))
    y = relay.add(b, relay.nn.relu(x))  # pattern says add(relu(_), _)
    pat = is_op("add")(is_op("nn.relu")(wildcard()), wildcard())
    mod = relay.transform.MergeComposite([("t.relu_add", pat)])(xrelay.IRModule.from_expr(y))
    comp = [f for f in _funcs(mod).values() if _attr(f, "relay.composite") == "t.relu_add"]
    assert len(comp) == 1


@pytest.mark.no_change("merge-composite", "an inner value used outside the pattern must block the match: nothing merges")
def test_inner_value_used_outside_blocks_the_match():
    x = relay.var("x", shape=(2, 3))
    r = relay.nn.relu(x)
    y = relay.add(relay.tanh(r), r)
    pat = is_op("tanh")(is_op("nn.relu")(wildcard()))
    mod = relay.transform.MergeComposite([("t.relu_tanh", pat)])(xrelay.IRModule.from_expr(y))
    assert all(_attr(f, "relay.composite") is None for f in _funcs(mod).values())


def test_unknown_table_and_target_are_errors():
    mod = xrelay.IRModule.from_expr(relay.nn.relu(relay.var("x", shape=(2,))))
    with pytest.raises(Exception, match="unknown pattern table 'nope'"):
        relay.transform.MergeComposite("nope")(mod)
    with pytest.raises(Exception, match="unknown target 'nope'"):
        relay.transform.AnnotateTarget(["nope"])(mod)


@pytest.mark.no_change("merge-compiler-regions", "a run of the partitioned module against the reference (the identity runs alike)")
@pytest.mark.no_change("merge-composite", "a run of the partitioned module against the reference (the identity runs alike)")
def test_partitioned_module_runs_in_the_arena_runtime():
    """partition_for_dnnl's output builds and runs (native kernels) with the interpreter's result."""
    mod, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 32, 32))
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype("float32")
    want = xrelay.run(mod.clone(), {"data": x}, params)
    lib = xrelay.build(partition_for_dnnl(mod, params))
    lib.set_input("data", x)
    lib.run()
    np.testing.assert_allclose(lib.get_output(0).numpy(), np.asarray(want[0] if isinstance(want, list | tuple) else want),
                               rtol=1e-5, atol=1e-5)


def test_batch_norm_region_with_three_outputs():
    """TVM's test_multiple_outputs: a region whose batch_norm's three results leave it; the
    external function returns three results (Relay: a tuple) and main uses them."""
    from xrelay.relay.annotation import compiler_begin, compiler_end

    names = ["data", "weight", "bn_gamma", "bn_beta", "bn_mean", "bn_var"]
    shapes = [(1, 3, 8, 8), (16, 3, 3, 3), (16,), (16,), (16,), (16,)]
    vs = [relay.var(n, shape=s) for n, s in zip(names, shapes, strict=True)]
    cb = [compiler_begin(v, "test_target") for v in vs]
    conv = relay.nn.conv2d(cb[0], cb[1], kernel_size=(3, 3), channels=16, padding=(1, 1))
    bn = relay.nn.batch_norm(conv, *cb[2:])
    relu = compiler_end(relay.nn.relu(bn[0]), "test_target")
    mean = relay.abs(compiler_end(bn[1], "test_target"))
    var = relay.abs(compiler_end(bn[2], "test_target"))
    mod = xrelay.IRModule.from_expr(relay.Function(vs, relay.Tuple([relu, mean, var])))
    before = mod.clone()
    mod = relay.transform.PartitionGraph()(mod)
    ext = _funcs(mod)["tvmgen_default_test_target_main_0"]
    assert [a.name_hint for a in ext.args] == [f"test_target_0_i{i}" for i in range(6)]
    assert len(ext.function_type.outputs.data) == 3
    text = str(module_op(mod))
    assert text.count("relay.abs") == 2 and "compiler_begin" not in text
    # a positive variance, so batch_norm's outputs are finite
    var = np.random.default_rng(3).uniform(0.5, 2.0, 16).astype("float32")
    check_semantics(lambda m: relay.transform.PartitionGraph()(m), before, params={"bn_var": var})


@pytest.mark.parametrize("attr", [("Compiler", "dnnl"), ("SkipOptimization", 1), ("Extern", 1)])
def test_function_passes_skip_external_functions(attr):
    # Relay's FunctionPass rewrites only AsOptimizableFunctionNode functions: a function with
    # a Compiler attribute, or a nonzero SkipOptimization / Extern, is left as it is.
    def bn_of(x):
        c = [relay.const(np.full((2,), v, "float32")) for v in (2.0, 0.5, 0.1, 4.0)]
        return relay.nn.batch_norm(x, *c)[0]

    x, y = relay.var("x", shape=(1, 2, 4, 4)), relay.var("y", shape=(1, 2, 4, 4))
    gv = relay.GlobalVar("ext_0")
    mod = relay.IRModule()
    mod[gv] = relay.Function([x], bn_of(x)).with_attr(*attr)
    mod["main"] = relay.Function([y], relay.add(gv(y), bn_of(y)))
    mod = relay.transform.InferType()(mod)
    data = np.random.default_rng(0).standard_normal((1, 2, 4, 4)).astype("float32")
    expected = relay.create_executor(mod=mod).evaluate()(data).numpy()
    ext_text = mod["ext_0"].astext()
    seq = relay.transform.Sequential(
        [relay.transform.SimplifyInference(), relay.transform.FoldConstant()]
    )
    mod = seq(mod)
    assert mod["ext_0"].astext() == ext_text and "nn.batch_norm" in ext_text
    assert "nn.batch_norm" not in str(mod).split("def @main")[1]
    assert [g.name_hint for g in mod.get_global_vars()] == ["ext_0", "main"]
    result = relay.create_executor(mod=mod).evaluate()(data).numpy()
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-6)
