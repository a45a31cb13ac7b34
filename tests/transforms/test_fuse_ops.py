"""fuse-ops: meaning on ResNet-18, MobileNet and random DAGs; group counts; options and API."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.testing import mobilenet, resnet
from xrelay.testing.random_graphs import random_dag
from xrelay.testing.semantics import apply_pass, check_semantics
from xrelay.transforms.bind_params import bind_params_by_name
from xrelay.transforms.dominators import PostDominatorTree
from xrelay.transforms.fuse_ops import FuseOpsError, FuseOpsPass, fuse_ops, is_primitive
from xrelay.transforms.infra import PassContext, pass_info_of


def parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def primitives(mod: ModuleOp) -> list[func.FuncOp]:
    return [f for f in mod.ops if isinstance(f, func.FuncOp) and is_primitive(f)]


def main_of(mod: ModuleOp) -> func.FuncOp:
    return next(f for f in mod.ops if isinstance(f, func.FuncOp) and f.sym_name.data == "main")


CHAIN = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = relay.nn.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %b = relay.exp %a : (tensor<4xf32>) -> tensor<4xf32>
  %c = relay.tanh %b : (tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}
"""


# ---- meaning ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def resnet18():
    return resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10)


def test_resnet18_semantics(resnet18):
    mod, params = resnet18
    before, after = check_semantics("simplify-inference,fuse-ops", mod, params=params)
    assert before[0].shape == (1, 10)


def test_mobilenet_semantics():
    mod, params = mobilenet.get_workload(image_shape=(3, 32, 32), num_classes=10)
    check_semantics("simplify-inference,fuse-ops", mod, params=params)


@pytest.mark.parametrize("seed", range(12))
def test_random_dag_semantics(seed):
    mod = random_dag(seed, num_ops=30)
    _, after = check_semantics("fuse-ops", mod, seed=seed)
    assert after


@pytest.mark.parametrize("seed", range(4))
def test_random_dag_semantics_small_groups(seed):
    # max-depth=3 cuts groups in many places: still the same program
    mod = random_dag(100 + seed, num_ops=30)
    check_semantics(FuseOpsPass(max_depth=3), mod, seed=seed)


@pytest.mark.parametrize("seed", range(4))
def test_random_dag_semantics_max_function_args(seed):
    # a limit of 3 arguments (outputs included) refuses fusions by Relay's estimate of the
    # fused function's arguments: as many or more, smaller functions, still the same program
    # (test_max_function_args_from_target checks a cut exactly)
    mod = random_dag(200 + seed, num_ops=30)
    check_semantics(FuseOpsPass(max_function_args=3), mod, seed=seed)

    def count(module):
        return sum(1 for f in module.ops if isinstance(f, func.FuncOp) and is_primitive(f))

    limited = apply_pass(FuseOpsPass(max_function_args=3), random_dag(200 + seed, num_ops=30))
    assert count(limited) >= count(apply_pass(FuseOpsPass(), random_dag(200 + seed, num_ops=30)))


def test_max_function_args_from_target():
    # unset, the option is the current target's max_function_args (Metal: 31; OpenCL: 128)
    from xrelay.backend.target import Target

    text = "func.func @main(" + ", ".join(f"%x{i}: tensor<4xf32>" for i in range(40)) + ") -> tensor<4xf32> {\n"
    prev = "%x0"
    for i in range(1, 40):
        text += f"  %s{i} = relay.add {prev}, %x{i} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
        prev = f"%s{i}"
    text += f"  func.return {prev} : tensor<4xf32>\n}}\n"

    def arities(target):
        module = Parser(make_context(), text).parse_module()
        if target is None:
            FuseOpsPass().apply(make_context(), module)
        else:
            with Target(target):
                FuseOpsPass().apply(make_context(), module)
        return sorted(len(f.body.block.args) for f in module.ops if isinstance(f, func.FuncOp) and is_primitive(f))

    assert arities(None) == [40] == arities("opencl") == arities("cuda")  # cuda: no limit
    metal = arities("metal")
    assert len(metal) > 1 and max(metal) <= 30 and sum(metal) - (len(metal) - 1) == 40


# ---- ResNet-18 group counts, derived by hand from Relay's algorithm ----------------------------
#
# After simplify-inference each batch_norm is ``y = x * expand_dims(s); z = y + expand_dims(t)``
# with the scale ``s = 1 / sqrt(var + eps) * gamma`` and shift ``t = -mean * s + beta``
# computed from parameters. ``s`` feeds both expand_dims(s) (-> y) and t, so its
# post-dominator is z. Phase 0 visits nodes in post-DFS order, where x's producer comes first:
# * if x comes from an OUT_ELEMWISE_FUSABLE group whose only consumer is y (a conv2d, or a
#   residual add already holding conv2 -- a group with an anchor), that group joins y first;
#   the path from s to z then passes y, whose group is OUT_ELEMWISE_FUSABLE (> INJECTIVE), so
#   the scale chain (add, sqrt, divide[, multiply]) stays a group of its own: 2 functions;
# * otherwise (bn_data on the input, bn1 of a unit whose input also feeds the residual add)
#   the whole batch_norm is one group: 1 function.
# relu joins its batch_norm; nothing passes a conv2d input edge (OUT_ELEMWISE_FUSABLE).
# Per residual unit (32x32 input: 3x3 stem conv0, no bn0/max_pool, 4 stages of 2 units):
# * unit 1 of a stage (dim_match False; input feeds only bn1): bn1 2 (holding conv0 or the
#   previous unit's conv2+add) + conv1/bn2/relu 2 + shortcut conv 1 + conv2+add 1 (the next
#   unit's input also feeds its residual add, so it stays alone) = 6;
# * unit 2: bn1 1 + conv1/bn2/relu 2 (+ conv2+add joins the next bn1) = 3.
# 4 stages x (6 + 3) = 36, bn_data 1, tail: bn1 (+ stage4 conv2+add) 2, global_avg_pool2d 1,
# batch_flatten 1 (its consumer dense is OUT_ELEMWISE_FUSABLE), dense+bias_add 1, softmax 1.
# Total 36 + 1 + 6 = 43. At 224x224 the stem adds conv0+bn0+relu (2, with its scale chain)
# and max_pool2d joins stage 1's bn1 (anchor): 45.


@pytest.mark.parametrize("shape, expected", [((3, 32, 32), 43), ((3, 224, 224), 45)])
def test_resnet18_count_after_simplify_inference(shape, expected):
    mod, _ = resnet.get_workload(num_layers=18, image_shape=shape, num_classes=10)
    m = mod.module.clone()
    apply_pass("simplify-inference", m)
    assert fuse_ops(m) == expected
    m.verify()
    fused = primitives(m)
    assert len(fused) == expected
    # every conv2d is in a group of its own (two anchors never meet)
    convs = [sum(op.name == "relay.nn.conv2d" for op in f.walk()) for f in fused]
    assert sum(convs) == 21 and max(convs) == 1
    chain = re.compile(r"fused_add_sqrt_divide_multiply(_\d+)?$")
    scale_chains = [f for f in fused if chain.match(f.sym_name.data)]
    # the chains cut off by a conv anchor: conv0's bn, 8 bn2, 3 stage-entry bn1, tail bn1 (+bn0)
    assert len(scale_chains) == (13 if shape[1] == 32 else 14)


# With params bound and folded, every batch_norm is ``x * c1 + c2`` with constants: the same
# reasoning without scale chains gives bn_data 1, conv0/conv1 + bn + relu 9, shortcut convs 4,
# conv2+add alone 4, conv2+add + next bn1 + relu 4, unit-2 bn1 + relu 4, tail 4 = 30.
def test_resnet18_count_full_pipeline(resnet18):
    mod, params = resnet18
    m = mod.module.clone()
    bind_params_by_name(m, params)
    apply_pass("simplify-inference,fold-constant,fold-scale-axis,fuse-ops", m)
    m.verify()
    fused = primitives(m)
    assert len(fused) == 30
    names = Counter(f.sym_name.data for f in fused)
    assert names["fused_nn_softmax"] == 1 and names["fused_nn_dense_nn_bias_add"] == 1
    # main only calls fused functions and returns
    assert {op.name for op in main_of(m).body.block.ops} <= {"func.call", "func.return", "relay.constant"}


def test_resnet18_full_pipeline_semantics(resnet18):
    mod, params = resnet18
    m = mod.module.clone()
    bind_params_by_name(m, params)
    check_semantics("simplify-inference,fold-constant,fold-scale-axis,fuse-ops", m)


# ---- options, context and API ---------------------------------------------------------------


def test_pass_info_and_fields():
    info = pass_info_of(FuseOpsPass)
    assert (info.opt_level, info.name, info.required) == (0, "FuseOps", ("InferType",))
    assert FuseOpsPass().opt_level == -1
    assert FuseOpsPass(opt_level=1).opt_level == 1
    assert FuseOpsPass().max_depth is None


def test_opt_level_from_context():
    m = parse(CHAIN)
    with PassContext(opt_level=0):
        apply_pass(FuseOpsPass(), m)
    assert sorted(f.sym_name.data for f in primitives(m)) == ["fused_exp", "fused_nn_relu", "fused_tanh"]
    m = parse(CHAIN)
    with PassContext(opt_level=3):
        apply_pass(FuseOpsPass(), m)
    assert [f.sym_name.data for f in primitives(m)] == ["fused_nn_relu_exp_tanh"]
    # an explicit level wins over the context
    m = parse(CHAIN)
    with PassContext(opt_level=0):
        apply_pass(FuseOpsPass(opt_level=2), m)
    assert len(primitives(m)) == 1


def test_max_depth_from_config():
    m = parse(CHAIN)
    with PassContext(config={"relay.FuseOps.max_depth": 2}):
        apply_pass(FuseOpsPass(), m)
    assert [f.sym_name.data for f in primitives(m)] == ["fused_nn_relu_exp", "fused_tanh"]
    m = parse(CHAIN)
    with PassContext(config={"relay.FuseOps.max_depth": 2}):
        apply_pass(FuseOpsPass(max_depth=1), m)  # the option wins over the config
    assert len(primitives(m)) == 3


def test_relay_transform_api():
    from xrelay.relay import transform

    m = parse(CHAIN)
    m = transform.FuseOps(fuse_opt_level=0)(m)
    assert len(primitives(m)) == 3


def test_link_params_keeps_constants_inside():
    text = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = relay.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %a = relay.add %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}
"""
    m = parse(text)
    fuse_ops(m)
    (f,) = primitives(m)
    assert len(f.args) == 2  # the tensor constant is a parameter
    m = parse(text)
    with PassContext(config={"relay.FuseOps.link_params": True}):
        apply_pass(FuseOpsPass(), m)
    (f,) = primitives(m)
    assert len(f.args) == 1
    assert [op.name for op in f.body.block.ops] == ["relay.constant", "relay.add", "func.return"]
    check_semantics(FuseOpsPass(), parse(text))


@pytest.mark.no_change("fuse-ops", "idempotence: fusing a fused module changes nothing (the identity is idempotent too; the other tests check what fusing does)")
def test_fusing_twice_changes_nothing():
    mod = random_dag(7, num_ops=25)
    once = apply_pass("fuse-ops", mod.clone())
    twice = apply_pass("fuse-ops", once.clone())
    assert str(once) == str(twice)


def test_long_names_are_cut_with_a_hash():
    body = "\n".join(
        f"  %v{i + 1} = relay.{'nn.relu' if i % 2 else 'negative'} %v{i} : (tensor<4xf32>) -> tensor<4xf32>"
        for i in range(20)
    )
    text = f"""
func.func @main(%v0: tensor<4xf32>) -> tensor<4xf32> {{
{body}
  func.return %v20 : tensor<4xf32>
}}
"""
    m = parse(text)
    fuse_ops(m)
    (f,) = primitives(m)
    name = f.sym_name.data
    assert name.startswith("fused_negative_nn_relu_negative_nn_relu")
    assert len(name) == 80 + 1 + 8
    assert all(c in "0123456789abcdef" for c in name[-8:])
    m2 = parse(text)
    fuse_ops(m2)
    assert primitives(m2)[0].sym_name.data == name  # deterministic


def test_ops_with_regions_are_rejected():
    m = parse(
        """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  "test.op"() ({
    "test.termop"() : () -> ()
  }) : () -> ()
  func.return %x : tensor<4xf32>
}
"""
    )
    with pytest.raises(FuseOpsError, match="'test.op', an op with regions"):
        fuse_ops(m)


def test_dead_relay_ops_are_removed_and_others_kept():
    m = parse(
        """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %d = relay.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %a = relay.nn.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  "test.op"(%a) : (tensor<4xf32>) -> ()
  %b = relay.tanh %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}
"""
    )
    fuse_ops(m)
    m.verify()
    names = [op.name for op in main_of(m).body.block.ops]
    assert names == ["func.call", "test.op", "func.call", "func.return"]
    # relu feeds test.op (an extern use) so it cannot join tanh
    assert sorted(f.sym_name.data for f in primitives(m)) == ["fused_nn_relu", "fused_tanh"]


def test_negative_options_are_errors():
    with pytest.raises(FuseOpsError, match="max-depth must be >= 0"):
        fuse_ops(parse(CHAIN), max_depth=-1)
    with pytest.raises(FuseOpsError, match="opt-level must be -1 or >= 0"):
        apply_pass(FuseOpsPass(opt_level=-3), parse(CHAIN))


# ---- the post-dominator tree ------------------------------------------------------------------


def test_post_dominator_tree_diamond_and_forest():
    # 0 -> {1, 2} -> 3 (extern); 4 -> {5, 6}, both extern: no common post-dominator
    outputs = [[(1, 0), (2, 1)], [(3, 2)], [(3, 0)], [], [(5, 0), (6, 0)], [], []]
    tree = PostDominatorTree.build(outputs, [False, False, False, True, False, True, True])
    assert tree.parent == [3, 3, 3, -1, -1, -1, -1]
    assert tree.depth == [2, 2, 2, 1, 1, 1, 1]
    assert int(tree.pattern[0]) == 2  # max of edges 0, 1 and node 1's path pattern 2
    assert tree.dominators(0) == [3]


def test_post_dominator_tree_rejects_unordered_graphs():
    with pytest.raises(ValueError, match="topological order"):
        PostDominatorTree.build([[], [(0, 0)]], [True, False])


@pytest.mark.no_change("fuse-ops", "a run comparison: the identity computes the same outputs")
def test_fused_outputs_are_numerically_identical():
    # fusion only moves ops: results are bit-identical, not just close
    from xrelay.runtime.interpreter import random_inputs, run

    mod = random_dag(3, num_ops=30)
    inputs = random_inputs(mod, 0)
    before = run(mod, inputs)
    after = run(apply_pass("fuse-ops", mod.clone()), inputs)
    for a, b in zip(before, after, strict=True):
        np.testing.assert_array_equal(a, b)
