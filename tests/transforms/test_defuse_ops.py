"""defuse-ops: defuse(fuse(x)) is x as a dataflow graph, keeps the meaning, and its errors."""

from __future__ import annotations

from collections import Counter

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.testing import resnet
from xrelay.testing.random_graphs import random_dag
from xrelay.testing.semantics import apply_pass, check_semantics
from xrelay.transforms.defuse_ops import DefuseOpsError, DefuseOpsPass, defuse_ops
from xrelay.transforms.infra import pass_info_of


def parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def main_of(mod: ModuleOp) -> func.FuncOp:
    return next(f for f in mod.ops if isinstance(f, func.FuncOp) and f.sym_name.data == "main")


def canonical(fn: func.FuncOp) -> list[str]:
    """The function as a graph: each returned value's defining expression, spelled out with
    ops (name, properties, result index, type) and argument positions, independent of op
    order and SSA names. Shared subexpressions are numbered in first-visit order."""
    memo: dict[Operation, int] = {}
    lines: list[str] = []

    def expr(v: SSAValue) -> str:
        if isinstance(v, BlockArgument):
            return f"arg{v.index}:{v.type}"
        op = v.owner
        assert isinstance(op, Operation)
        if op not in memo:
            args = ", ".join(expr(o) for o in op.operands)
            props = sorted((k, str(a)) for k, a in op.properties.items())
            memo[op] = len(lines)
            lines.append(f"{op.name}{props}({args})")
        return f"#{memo[op]}.{v.index}:{v.type}"

    ret = fn.body.block.last_op
    assert ret is not None
    return [expr(v) for v in ret.operands] + lines


def relay_ops(fn: func.FuncOp) -> Counter[str]:
    return Counter(op.name for op in fn.body.block.ops)


@pytest.mark.parametrize("seed", range(10))
def test_defuse_of_fuse_is_the_same_graph(seed):
    mod = random_dag(seed, num_ops=30)
    want = canonical(main_of(mod))
    fused = apply_pass("fuse-ops", mod.clone())
    assert any(op.name == "func.call" for op in main_of(fused).body.block.ops)
    back = apply_pass("defuse-ops", fused)
    back.verify()
    assert [f.sym_name.data for f in back.ops] == ["main"]
    assert canonical(main_of(back)) == want
    assert relay_ops(main_of(back)) == relay_ops(main_of(mod))
    assert main_of(back).function_type == main_of(mod).function_type


def test_defuse_of_fuse_on_resnet18_is_the_same_graph():
    mod, _ = resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10)
    m = apply_pass("simplify-inference", mod.module.clone())
    back = apply_pass("fuse-ops,defuse-ops", m.clone())
    assert canonical(main_of(back)) == canonical(main_of(m))
    assert relay_ops(main_of(back)) == relay_ops(main_of(m))
    assert [f.sym_name.data for f in back.ops] == ["main"]


@pytest.mark.parametrize("seed", range(3))
def test_defuse_keeps_meaning(seed):
    mod = apply_pass("fuse-ops", random_dag(50 + seed, num_ops=30))
    check_semantics("defuse-ops", mod, seed=seed)


def test_defuse_inlines_every_call_and_keeps_other_functions():
    m = parse(
        """
func.func private @fused_nn_relu(%p0: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.nn.relu %p0 : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @helper(%p0: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @fused_nn_relu(%p0) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @fused_nn_relu(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @helper(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}
"""
    )
    assert defuse_ops(m) == 2
    m.verify()
    assert [f.sym_name.data for f in m.ops] == ["helper", "main"]
    assert [op.name for op in main_of(m).body.block.ops] == ["relay.nn.relu", "func.call", "func.return"]


def test_defuse_inlines_function_literals_too():
    """Relay's DefuseOps inlines every call of a function literal, primitive or not (TVM's
    test_defuse_complex); a literal is a private function here, and one calling a primitive
    function is defused all the way down."""
    m = parse(
        """
func.func private @fused_nn_relu(%p0: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.nn.relu %p0 : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func private @fn_exp(%p0: tensor<4xf32>) -> tensor<4xf32> {
  %e = relay.exp %p0 : (tensor<4xf32>) -> tensor<4xf32>
  %r = func.call @fused_nn_relu(%e) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %b = func.call @fn_exp(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}
"""
    )
    assert defuse_ops(m) == 2
    m.verify()
    assert [f.sym_name.data for f in m.ops] == ["main"]
    assert [op.name for op in main_of(m).body.block.ops] == ["relay.exp", "relay.nn.relu", "func.return"]


def test_calling_a_primitive_declaration_is_an_error():
    m = parse(
        """
func.func private @fused_ext(tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive = 1 : i64}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @fused_ext(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}
"""
    )
    with pytest.raises(DefuseOpsError, match="cannot inline the call of @fused_ext: it has no body"):
        defuse_ops(m)


def test_pass_info():
    info = pass_info_of(DefuseOpsPass)
    assert (info.opt_level, info.name, info.required) == (3, "DefuseOps", ("InferType",))
