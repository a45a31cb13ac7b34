"""make-static: its meaning (the module before and after on random inputs), that a module
without dyn ops is left as it is, and its error (xrelay.build's use of it:
test_dynamic_to_static.py's build tests)."""

from __future__ import annotations

import numpy as np
import pytest

from xrelay import relay
from xrelay.dialects import make_context
from xrelay.dialects.dyn import DynOp
from xrelay.dialects.relay import ConstantOp
from xrelay.testing.semantics import check_semantics
from xrelay.testing.structural import assert_structural_equal
from xrelay.transforms.make_static import MakeStaticError, MakeStaticPass


def _mod(body_fn, *params):
    return relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(list(params), body_fn(*params))))


def _dyn_ops(module):
    return [op.name for op in module.walk() if isinstance(op, DynOp)]


def test_dyn_ops_with_constant_shapes_become_static_and_mean_the_same():
    x, y = relay.var("x", shape=(2, 3, 4)), relay.var("y", shape=(4, 6))
    mod = _mod(lambda x, y: relay.nn.relu(relay.reshape(x, relay.shape_of(y, "int64"))), x, y)
    assert _dyn_ops(mod.module) == ["dyn.reshape"]
    before, after = check_semantics(MakeStaticPass(), mod, trials=2)
    assert before[0].shape == (4, 6)
    module = mod.module.clone()
    MakeStaticPass().apply(make_context(), module)
    assert _dyn_ops(module) == []


def test_a_module_without_dyn_ops_is_left_as_it_is():
    # dynamic-to-static would fold the constant sum; make-static does not run it here
    x = relay.var("x", shape=(2,))
    one = relay.const(np.ones(2, "float32"))
    mod = _mod(lambda x: x + (one + one), x)
    module = mod.module.clone()
    MakeStaticPass().apply(make_context(), module)
    assert_structural_equal(module, mod.module)
    assert sum(isinstance(op, ConstantOp) for op in module.walk()) == 1
    check_semantics(MakeStaticPass(), mod)


def test_a_shape_known_only_at_run_time_is_an_error_naming_the_op():
    x = relay.var("x", shape=(2, 3))
    s = relay.var("s", shape=(2,), dtype="int64")
    mod = _mod(lambda x, s: relay.reshape(x, s), x, s)
    with pytest.raises(MakeStaticError, match=r"make-static: dyn.reshape .*'newshape' \(.*\) known only at run time"):
        MakeStaticPass().apply(make_context(), mod.module.clone())

