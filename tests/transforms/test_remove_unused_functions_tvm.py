"""TVM v0.19's tests/python/relay/test_pass_remove_unused_functions.py (Apache-2.0, the Apache Software Foundation), ported.

Changes: imports only. Only test_call_globalvar_without_args is here; the others use the
Prelude (ADTs), which xrelay does not implement.
"""
import pytest

import xrelay as tvm
from xrelay import relay


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
