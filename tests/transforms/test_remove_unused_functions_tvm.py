"""TVM v0.19's tests/python/relay/test_pass_remove_unused_functions.py (Apache-2.0, the Apache Software Foundation), ported.

Changes: imports only. 5 of 6 functions. Not here: test_globalvar_as_call_arg (Relay's
tensor-array functions of the Prelude, which xrelay does not build: docs/design.md, decision 9).
"""
# ruff: noqa: E741, F841 - TVM's test code as written
import pytest

import xrelay as tvm
from xrelay import relay
from xrelay.relay.prelude import Prelude


def test_remove_all_prelude_functions():
    mod = tvm.IRModule()
    p = Prelude(mod)
    x = relay.var("x", shape=(1, 16))
    mod["main"] = relay.Function([x], x)
    mod = relay.transform.RemoveUnusedFunctions()(mod)
    l = set([x[0].name_hint for x in mod.functions.items()])
    assert l == set(["main"])


def test_remove_all_prelude_functions_but_referenced_functions():
    mod = tvm.IRModule()
    p = Prelude(mod)
    x = relay.var("x", shape=(1, 16))
    id_func = relay.Function([x], x)
    id_name = relay.GlobalVar("id_func")
    mod[id_name] = id_func

    mod["main"] = relay.Function([x], id_name(x))
    mod = relay.transform.RemoveUnusedFunctions()(mod)
    l = set([x[0].name_hint for x in mod.functions.items()])
    assert l == set(["id_func", "main"])


def test_keep_only_referenced_prelude_functions():
    mod = tvm.IRModule()
    p = Prelude(mod)
    _, cons, nil = p.mod.get_type("List")
    hd = p.mod.get_global_var("hd")
    tl = p.mod.get_global_var("tl")
    l = nil()
    for i in [4, 3, 2, 1, 0]:
        l = cons(relay.const(i), l)
    body = hd(tl(tl(l)))
    mod["main"] = relay.Function([], body)
    mod = relay.transform.RemoveUnusedFunctions()(mod)
    l = set([x[0].name_hint for x in mod.functions.items()])
    assert l == set(["tl", "hd", "main"])


def test_multiple_entry_functions():
    mod = tvm.IRModule()
    p = Prelude(mod)
    _, cons, nil = p.mod.get_type("List")
    hd = p.mod.get_global_var("hd")
    tl = p.mod.get_global_var("tl")
    l = nil()
    for i in [4, 3, 2, 1, 0]:
        l = cons(relay.const(i), l)
    body = hd(tl(tl(l)))
    mod["main1"] = relay.Function([], body)

    x = relay.var("x", shape=(1, 16))
    id_func = relay.Function([x], x)
    id_name = relay.GlobalVar("id_func")
    mod[id_name] = id_func
    mod["main2"] = relay.Function([x], id_name(x))
    mod = relay.transform.RemoveUnusedFunctions(["main1", "main2"])(mod)
    l = set([x[0].name_hint for x in mod.functions.items()])
    assert l == set(["tl", "hd", "main2", "id_func", "main1"])


@pytest.mark.no_change("remove-unused-functions", "TVM's case: every function is used, so the module stays as it is")
def test_call_globalvar_without_args():
    def get_mod():
        mod = tvm.IRModule({})
        fn1 = relay.Function([], relay.const(1))
        fn2 = relay.Function([], relay.const(2))
        g1 = relay.GlobalVar("g1")
        g2 = relay.GlobalVar("g2")
        mod[g1] = fn1
        mod[g2] = fn2
        p = relay.var("p", "bool")
        mod["main"] = relay.Function([p], relay.Call(relay.If(p, g1, g2), []))
        return mod

    mod = get_mod()
    ref_mod = get_mod()
    mod = relay.transform.RemoveUnusedFunctions()(mod)
    tvm.ir.assert_structural_equal(mod, ref_mod, map_free_vars=True)
