"""Functions as values: ``adt.closure`` / ``adt.apply`` (docs/design.md, decision 9).

A ``GlobalVar`` or a function literal used as a value is a closure; a call of a value of
function type applies it. Typed, printed and parsed as Relay text, run by the interpreter,
refused by fusion and the build naming the op; and the Prelude's higher-order functions.
"""

from __future__ import annotations

import numpy as np
import pytest

import xrelay as tvm
from xrelay import relay
from xrelay.dialects.relay import RelayTypeError
from xrelay.relay.prelude import Prelude
from xrelay.runtime.interpreter import ConstructorValue, run
from xrelay.testing.structural import assert_structural_equal, structural_equal

i32 = relay.scalar_type("int32")
SEMVER = '#[version = "0.0.5"]\n'


def _twice_module() -> tvm.IRModule:
    """@twice(f, x) = f(f(x)); main passes a literal capturing %n."""
    mod = tvm.IRModule()
    f = relay.var("f", relay.FuncType([i32], i32))
    x = relay.var("x", i32)
    mod["twice"] = relay.Function([f, x], f(f(x)))
    a, n, y = relay.var("a", i32), relay.var("n", i32), relay.var("y", i32)
    add_n = relay.Function([y], relay.add(y, n))
    mod["main"] = relay.Function([a, n], mod.get_global_var("twice")(add_n, a))
    return mod


def _ints(v) -> list[int]:
    out = []
    while isinstance(v, ConstructorValue) and v.fields:
        out.append(int(v.fields[0]))
        v = v.fields[1]
    return out


def test_closure_capturing_a_value_runs_prints_and_parses_back():
    mod = _twice_module()
    ir = mod.mlir_text()
    assert "adt.closure @fn_add(%n)" in ir and "adt.apply %f(%x)" in ir
    inputs = {"a": np.array(1, "int32"), "n": np.array(10, "int32")}
    assert int(run(mod, inputs)[0]) == 21
    assert int(run(mod, {"a": np.array(-4, "int32"), "n": np.array(3, "int32")})[0]) == 2
    text = mod.astext()
    assert "%f: fn (int32) -> int32" in text and "add(%y, %n)" in text
    back = relay.parse(text)
    assert_structural_equal(back, mod)
    assert int(run(back, inputs)[0]) == 21
    # the rebuilt Python function holds the literal with %n in place
    fn = mod["main"]
    assert isinstance(fn.body, relay.Call) and isinstance(fn.body.args[0], relay.Function)
    assert len(fn.body.args[0].params) == 1
    # a different captured value is a different program
    other = relay.parse(text.replace("add(%y, %n)", "add(%y, %a)"))
    assert not structural_equal(other, mod)


def test_global_as_value_and_call_of_a_returned_function():
    mod = relay.parse(SEMVER + """
def @double(%x: int32) -> int32 { %x * 2 }
def @pick(%p: bool) -> fn (int32) -> int32 {
  if (%p) { @double } else { fn (%y: int32) -> int32 { %y + 100 } }
}
def @main(%p: bool, %x: int32) -> int32 { @pick(%p)(%x) }
""")
    assert int(run(mod, {"p": np.array(True), "x": np.array(7, "int32")})[0]) == 14
    assert int(run(mod, {"p": np.array(False), "x": np.array(7, "int32")})[0]) == 107
    assert "adt.closure @double()" in mod.mlir_text()


def test_type_errors_name_the_function_type():
    f = relay.var("f", relay.FuncType([i32], i32))
    with pytest.raises(RelayTypeError, match="call of %f: argument 0 has type tensor<f32>"):
        f(relay.const(1.5, "float32"))
    p = Prelude()
    lst = relay.var("l", p.List(i32))
    with pytest.raises(RelayTypeError, match="call of @map: argument 1"):
        p.mod["main"] = relay.Function([lst], p.mod.get_global_var("map")(p.mod.get_global_var("id"), lst))


def test_prelude_higher_order_functions_from_relay_text():
    p = Prelude()
    mod = relay.parse(SEMVER + """
def @main(%a: int32) -> List[int32] {
  let %l: List[int32] = Cons(%a, Cons(2, Cons(3, Nil)));
  let %m = @map(fn (%x: int32) -> int32 { %x * 10 }, %l);
  let %inc = fn (%x: int32) -> int32 { %x + 1 };
  Cons(@foldl(fn (%acc: int32, %x: int32) -> int32 { %acc - %x }, 0, %m),
  Cons(@foldr(fn (%x: int32, %acc: int32) -> int32 { %x - %acc }, 0, %m),
  Cons(@length(@filter(fn (%x: int32) -> bool { %x > 15 }, %m)),
  Cons(@iterate(%inc, 5)(%a),
  Cons(@compose(%inc, %inc)(%a),
  Cons(@foldr1(fn (%x: int32, %y: int32) -> int32 { %x - %y }, @rev(%l)),
  Cons(@flip(fn (%x: int32, %y: int32) -> int32 { %x - %y })(%a, 10), Nil)))))))
}
""", init_module=p.mod)
    for a in (1, 4):
        m = [a * 10, 20, 30]
        rev = [3, 2, a]
        expect = [
            ((0 - m[0]) - m[1]) - m[2],
            m[0] - (m[1] - (m[2] - 0)),
            sum(v > 15 for v in m),
            a + 5,
            a + 2,
            rev[0] - (rev[1] - rev[2]),
            10 - a,
        ]
        assert _ints(run(mod, {"a": np.array(a, "int32")})[0]) == expect


def test_passes_refuse_closures_by_name_and_inline_replaces_a_global_value():
    mod = _twice_module()
    with pytest.raises(Exception, match="adt.apply|adt.closure"):
        relay.build(mod, target="llvm")
    # Inline: a global marked inline used as a value becomes its function literal
    m = tvm.IRModule()
    x = relay.var("x", i32)
    m["g"] = relay.Function([x], x * relay.const(3)).with_attr("Inline", 1)
    f, y = relay.var("f", relay.FuncType([i32], i32)), relay.var("y", i32)
    m["apply"] = relay.Function([f, y], f(y))
    a = relay.var("a", i32)
    m["main"] = relay.Function([a], m.get_global_var("apply")(m.get_global_var("g"), a))
    new = relay.transform.Inline()(m)
    assert "g" not in [gv.name_hint for gv in new.get_global_vars()]
    assert "fn (%x: int32" in new.astext()
    inputs = {"a": np.array(5, "int32")}
    assert int(run(new, inputs)[0]) == int(run(m, inputs)[0]) == 15
    # dead-code elimination and CSE keep the closures' meaning
    for p in (relay.transform.DeadCodeElimination(), relay.transform.EliminateCommonSubexpr()):
        with tvm.transform.PassContext(opt_level=3):
            out = p(_twice_module())
        assert int(run(out, {"a": np.array(1, "int32"), "n": np.array(10, "int32")})[0]) == 21
