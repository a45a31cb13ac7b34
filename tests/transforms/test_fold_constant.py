"""fold-constant: meaning kept; constant subgraphs gone; size limit and names."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.dialects.relay import ConstantOp, RelayOp
from xrelay.testing import resnet
from xrelay.testing.random_graphs import random_dag
from xrelay.testing.semantics import check_semantics
from xrelay.transforms.bind_params import bind_params_by_name
from xrelay.transforms.fold_constant import FoldConstantPass, fold_constants
from xrelay.transforms.simplify_inference import SimplifyInferencePass


def _all_constant_ops(module):
    return [
        op
        for op in module.walk()
        if isinstance(op, RelayOp)
        and op.operands
        and not op.STATEFUL
        and all(isinstance(o.owner, ConstantOp) for o in op.operands)
    ]


def test_resnet18_after_simplify_inference():
    mod, params = resnet.get_workload(num_layers=18, image_shape=(3, 64, 64), num_classes=10)
    bind_params_by_name(mod.module, params)
    SimplifyInferencePass().apply(make_context(), mod.module)
    # per batch norm, add(var, eps) and negative(mean) have only constant operands
    assert len(_all_constant_ops(mod.module)) == 2 * 19
    check_semantics(FoldConstantPass(), mod)
    module = mod.module.clone()
    FoldConstantPass().apply(make_context(), module)
    assert _all_constant_ops(module) == []
    names = {op.param_name.data for op in module.walk() if isinstance(op, ConstantOp) and op.param_name}
    # bn scales keep a name derived from their batch norm's params
    assert any(n.startswith("bn_data_") for n in names)


@pytest.mark.parametrize("seed", range(6))
def test_random_graphs_with_bound_weights(seed):
    module = random_dag(seed, num_ops=30)
    rng = np.random.default_rng(seed)
    params = {
        a.name_hint: rng.uniform(-1, 1, size=a.type.get_shape()).astype(np.float32)
        for a in module.ops.first.body.block.args[1:]
    }
    bind_params_by_name(module, params)
    check_semantics(FoldConstantPass(), module)
    after = module.clone()
    assert fold_constants(after) > 0 or not _all_constant_ops(module)
    assert _all_constant_ops(after) == []


def test_max_elements_limit_and_errors():
    text = """
    func.func @main() -> tensor<4x4xf32> {
      %c = relay.constant dense<2.0> : tensor<f32>
      %b = relay.broadcast_to %c {shape = [4, 4]} : (tensor<f32>) -> tensor<4x4xf32>
      func.return %b : tensor<4x4xf32>
    }
    """
    module = Parser(make_context(), text).parse_module()
    assert fold_constants(module.clone(), max_elements=15) == 0
    folded = module.clone()
    assert fold_constants(folded, max_elements=16) == 1
    const = next(op for op in folded.walk() if isinstance(op, ConstantOp))
    np.testing.assert_array_equal(const.numpy(), np.full((4, 4), 2.0, np.float32))
    assert fold_constants(module.clone(), max_elements=0) == 1  # 0: no limit
    with pytest.raises(ValueError, match="max-elements must be >= 0"):
        FoldConstantPass(max_elements=-1).apply(make_context(), module)
