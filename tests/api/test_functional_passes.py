"""Passes leave their input module unchanged, as Relay's do (``new = pass_(mod)``).

A pass called on a module it does not own rewrites a copy; the copies made while a pass runs
are owned until it returns, so a Sequential copies its input once; ``in_place`` lets a driver
that owns its module skip the copies; a ``module_pass`` function gets the module itself.
"""

from __future__ import annotations

import numpy as np

from xrelay import relay
from xrelay.dialects import module_op
from xrelay.transforms.infra import PassContext, PassInstrument, Sequential, in_place, module_pass


def _module() -> relay.IRModule:
    x = relay.var("x", shape=(2, 3))
    y = relay.add(relay.exp(x), relay.exp(x))
    return relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(y)))


def test_pass_returns_a_new_module_and_leaves_its_input():
    mod = _module()
    before = mod.astext()
    new = relay.transform.EliminateCommonSubexpr()(mod)
    assert new is not mod and not new.same_as(mod)
    assert mod.astext() == before
    assert new.astext() != before  # the pass did rewrite: one exp left
    assert new.astext().count("exp(") == 1 and before.count("exp(") == 2
    # GlobalVars are shared with the input, as a Relay pass's result shares them
    assert new.get_global_var("main") is mod.get_global_var("main")


def test_fuse_ops_result_and_input_are_independent():
    mod = _module()
    fused = relay.transform.FuseOps(fuse_opt_level=2)(relay.transform.InferType()(mod))
    assert "Primitive" in fused.astext() and "Primitive" not in mod.astext()
    fused["extra"] = relay.Function([v := relay.var("v", shape=(1,))], v)
    assert "extra" not in [gv.name_hint for gv in mod.get_global_vars()]


def test_sequential_copies_its_input_once():
    seen: list[int] = []

    class Watch(PassInstrument):
        def run_before_pass(self, mod, info):
            seen.append(id(module_op(mod)))

    mod = _module()
    before = mod.astext()
    seq = Sequential([relay.transform.InferType(), relay.transform.EliminateCommonSubexpr(),
                      relay.transform.FoldConstant()])
    with PassContext(opt_level=3, instruments=[Watch()]):
        out = seq(mod)
    assert mod.astext() == before
    # the Sequential and its first pass see the input; every later pass the one copy it made
    assert seen[0] == seen[1] == id(mod.module)
    assert len(set(seen[2:])) == 1 and seen[2] != id(mod.module)
    assert seen[2] == id(module_op(out))


def test_in_place_rewrites_the_owned_module():
    mod = _module()
    with in_place(mod):
        out = relay.transform.EliminateCommonSubexpr()(mod)
    assert out is mod and mod.astext().count("exp(") == 1
    # outside the block the module is no longer owned
    again = relay.transform.FoldConstant()(mod)
    assert again is not mod


def test_module_pass_gets_the_module_itself():
    m1, m2 = _module(), _module()

    @module_pass(opt_level=1)
    def keep(mod, ctx):
        return mod

    @module_pass(opt_level=1)
    def swap(mod, ctx):
        return m2

    assert keep(m1) is m1
    assert swap(m1) is m2
    # a Sequential after a module pass that returned another module copies that one
    with PassContext(opt_level=3):
        out = Sequential([swap, relay.transform.EliminateCommonSubexpr()])(m1)
    assert out is not m2 and m2.astext().count("exp(") == 2
    assert out.astext().count("exp(") == 1


def test_build_leaves_the_user_module_and_runs():
    mod = _module()
    before = mod.astext()
    with PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm")
    assert mod.astext() == before
    import xrelay
    from xrelay.contrib import graph_executor

    gm = graph_executor.GraphModule(lib["default"](xrelay.cpu()))
    x = np.linspace(-1, 1, 6, dtype="float32").reshape(2, 3)
    gm.set_input("x", x)
    gm.run()
    np.testing.assert_allclose(gm.get_output(0).numpy(), 2 * np.exp(x), rtol=1e-6)
