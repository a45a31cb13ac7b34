"""bind-params: main's parameters named in an .npz become constants of the same type.

Each test runs the pass through its ``apply`` (as relay-opt does), so replaced by the identity
(``make mutants``) it fails: the parameters stay parameters."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from xrelay.dialects import make_context, module_op
from xrelay.dialects.relay import ConstantOp
from xrelay.relay.module import IRModule
from xrelay.runtime.interpreter import run
from xrelay.transforms.bind_params import BindParamsError, BindParamsPass

TEXT = """
func.func @main(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  %0 = relay.nn.dense %x, %w {units = 4} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %1 = relay.nn.bias_add %0, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %1 : tensor<2x4xf32>
}
"""


def _module() -> ModuleOp:
    return module_op(IRModule.from_text(TEXT))


def _npz(tmp_path, **arrays) -> str:
    path = tmp_path / "params.npz"
    np.savez(path, **arrays)
    return str(path)


def _main(module: ModuleOp) -> func.FuncOp:
    return next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")


def test_named_parameters_become_constants_and_the_meaning_is_kept(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    module = _module()
    before = run(module, {"x": x, "w": w, "b": b})
    BindParamsPass(file=_npz(tmp_path, w=w, b=b, unused=np.zeros(1))).apply(make_context(), module)
    module.verify()
    main = _main(module)
    assert [a.name_hint for a in main.body.block.args] == ["x"]
    assert [str(t) for t in main.function_type.inputs] == ["tensor<2x3xf32>"]
    consts = {op.result.name_hint: op for op in main.body.block.ops if isinstance(op, ConstantOp)}
    assert sorted(consts) == ["b", "w"]
    np.testing.assert_array_equal(consts["w"].numpy(), w)
    after = run(module, {"x": x})
    assert np.all(np.isfinite(before[0])) and np.ptp(before[0]) > 0
    np.testing.assert_array_equal(after[0], before[0])


def test_other_entry(tmp_path):
    module = module_op(IRModule.from_text(TEXT.replace("@main", "@other")))
    BindParamsPass(file=_npz(tmp_path, b=np.ones(4, np.float32)), entry="other").apply(make_context(), module)
    fn = next(iter(module.ops))
    assert [a.name_hint for a in fn.body.block.args] == ["x", "w"]


def test_a_shape_or_dtype_that_differs_is_an_error_naming_both(tmp_path):
    with pytest.raises(BindParamsError, match=r"%w has type tensor<4x3xf32> but the array has shape \(3, 4\)"):
        BindParamsPass(file=_npz(tmp_path, w=np.zeros((3, 4), np.float32))).apply(make_context(), _module())
    with pytest.raises(BindParamsError, match="dtype float64"):
        BindParamsPass(file=_npz(tmp_path, b=np.zeros(4))).apply(make_context(), _module())


def test_no_file_and_a_file_that_is_no_npz_are_errors(tmp_path):
    with pytest.raises(BindParamsError, match="needs file=PATH.npz"):
        BindParamsPass().apply(make_context(), _module())
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip archive")
    with pytest.raises(BindParamsError, match="cannot read"):
        BindParamsPass(file=str(bad)).apply(make_context(), _module())
