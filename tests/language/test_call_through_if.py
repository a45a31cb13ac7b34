"""A call whose callee is chosen by an ``if`` (or a ``let`` body): Relay's
``(if (%p) { @g1 } else { @g2 })()`` is lowered as ``if (%p) { @g1() } else { @g2() }``
(it crashed with ``KeyError: <id>`` before); run for both branches."""

import numpy as np

import xrelay as tvm
from xrelay import relay


def _run(mod, *args):
    return relay.create_executor("debug", mod=mod).evaluate()(*args)


def test_globalvar_chosen_by_if_is_called_in_its_branch():
    mod = tvm.IRModule({})
    g1, g2 = relay.GlobalVar("g1"), relay.GlobalVar("g2")
    mod[g1] = relay.Function([], relay.const(1))
    mod[g2] = relay.Function([], relay.const(2))
    p = relay.var("p", "bool")
    mod["main"] = relay.Function([p], relay.Call(relay.If(p, g1, g2), []))
    assert int(np.asarray(_run(mod, np.array(True)).numpy())) == 1
    assert int(np.asarray(_run(mod, np.array(False)).numpy())) == 2


def test_function_literals_with_arguments_chosen_by_nested_if():
    x = relay.var("x", shape=(3,))
    p, q = relay.var("p", "bool"), relay.var("q", "bool")
    a = relay.var("a", shape=(3,))
    double = relay.Function([a], relay.add(a, a))
    neg = relay.Function([a], relay.negative(a))
    ident = relay.Function([a], a)
    arg = relay.exp(x)  # evaluated once, whichever branch runs
    body = relay.Call(relay.If(p, relay.If(q, double, neg), ident), [arg])
    mod = tvm.IRModule.from_expr(relay.Function([x, p, q], body))
    xv = np.array([0.5, -1.0, 2.0], dtype="float32")
    e = np.exp(xv)
    for pv, qv, want in ((True, True, 2 * e), (True, False, -e), (False, True, e)):
        got = _run(mod, xv, np.array(pv), np.array(qv)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6)
