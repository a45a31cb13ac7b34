"""infer-type: every result type and function signature recomputed from the operands.

Each test runs the pass through its ``apply`` (as relay-opt does) on a module whose types were
made stale by hand, so replaced by the identity (``make mutants``) it fails."""

from __future__ import annotations

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.rewriter import Rewriter

from xrelay.dialects import make_context, module_op
from xrelay.dialects.relay import tensor_type
from xrelay.relay.module import IRModule
from xrelay.transforms.infer_type import InferTypeError, InferTypePass

TEXT = """
func.func private @f(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = relay.exp %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = func.call @f(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = relay.add %0, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = relay.transpose %1 {axes = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %2 : tensor<3x2xf32>
}
"""


def _funcs(module: ModuleOp) -> dict[str, func.FuncOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}


def _retype_params(fn: func.FuncOp, shape: tuple[int, ...]) -> None:
    """Give every parameter of ``fn`` the type ``shape`` x f32, leaving the body stale."""
    for arg in fn.body.block.args:
        Rewriter.replace_value_with_new_type(arg, tensor_type(shape, "float32"))


def _types(fn: func.FuncOp) -> list[str]:
    return [str(r.type) for op in fn.body.block.ops for r in op.results]


def test_parameter_types_changed_by_hand_flow_through_callees_and_callers():
    module = module_op(IRModule.from_text(TEXT))
    funcs = _funcs(module)
    _retype_params(funcs["f"], (4, 5))
    _retype_params(funcs["main"], (4, 5))
    InferTypePass().apply(make_context(), module)
    module.verify()
    assert _types(funcs["f"]) == ["tensor<4x5xf32>"]
    assert str(funcs["f"].function_type) == "(tensor<4x5xf32>) -> tensor<4x5xf32>"
    # the call's result follows the callee's new signature (callees are typed first)
    assert _types(funcs["main"]) == ["tensor<4x5xf32>", "tensor<4x5xf32>", "tensor<5x4xf32>"]
    assert str(funcs["main"].function_type) == "(tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<5x4xf32>"


def test_every_op_that_cannot_be_typed_is_reported():
    module = module_op(IRModule.from_text(TEXT))
    funcs = _funcs(module)
    main = funcs["main"]
    Rewriter.replace_value_with_new_type(main.body.block.args[1], tensor_type((7, 3), "float32"))
    Rewriter.replace_value_with_new_type(funcs["f"].body.block.args[0], tensor_type((2, 2), "float32"))
    with pytest.raises(InferTypeError) as info:
        InferTypePass().apply(make_context(), module)
    message = str(info.value)
    # both failures: the call passes the old type to the retyped callee, and the add's shapes
    assert "func.call @f passes (tensor<2x3xf32>) but the callee takes (tensor<2x2xf32>)" in message
    assert "in @main" in message and "relay.add" in message


@pytest.mark.no_change("infer-type", "a module whose types are up to date is its own result")
def test_a_module_already_typed_is_unchanged():
    module = module_op(IRModule.from_text(TEXT))
    before = str(module)
    InferTypePass().apply(make_context(), module)
    assert str(module) == before
