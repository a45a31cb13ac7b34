"""ADTs, match and the Prelude (the adt dialect, docs/design.md decision 9): Relay text read,
printed and read again; values from the reference interpreter against Python's own list
operations; passes keep the meaning; what is refused says so by name."""

from __future__ import annotations

import re

import numpy as np
import pytest

import xrelay as tvm
from xrelay import relay
from xrelay.dialects.relay import RelayTypeError
from xrelay.relay.parser import RelayTextError
from xrelay.relay.prelude import Prelude, PreludeError
from xrelay.runtime.interpreter import ConstructorValue, RunError
from xrelay.runtime.interpreter import run as interpret

TEXT = """#[version = "0.0.5"]
type Shape {
  Circle(float32),
  Rect(float32, float32),
  Empty,
}

def @area(%s: Shape) -> float32 {
  match (%s) {
    Circle(%r) => 3f * %r * %r,
    Rect(%w, %h) => %w * %h,
    Empty => 0f,
  }
}

def @main(%a: float32, %b: float32) -> float32 {
  let %c = Circle(%a);
  let %r = Rect(%a, %b);
  @area(%c) + @area(%r) + @area(Empty)
}
"""


def _values(mod, *args):
    return [np.asarray(v) for v in interpret(mod, list(args))]


def test_text_round_trips_and_runs():
    mod = tvm.relay.parse(TEXT)
    text = mod.astext()
    assert "type Shape {" in text and "Rect(%a, %b)" in text and "match (%s) {" in text
    again = tvm.relay.parse(text)
    assert again.astext() == text
    a, b = np.float32(2.0), np.float32(5.0)
    for m in (mod, again):
        (out,) = _values(m, np.array(a), np.array(b))
        assert out == pytest.approx(3 * a * a + a * b)


def _py_list(p, xs):
    _, cons, nil = p.mod.get_type("List")
    e = nil()
    for x in reversed(xs):
        e = cons(relay.const(np.int32(x)), e)
    return e


def _to_py(v):
    out = []
    while v.constructor.name_hint == "Cons":
        out.append(int(np.asarray(v.fields[0])))
        v = v.fields[1]
    assert v.constructor.name_hint == "Nil"
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_prelude_functions_agree_with_python_lists(seed):
    rng = np.random.default_rng(seed)
    xs = [int(v) for v in rng.integers(-50, 50, size=int(rng.integers(1, 7)))]
    ys = [int(v) for v in rng.integers(-50, 50, size=3)]
    k = int(rng.integers(0, len(xs)))
    mod = tvm.IRModule()
    p = Prelude(mod)
    ex = relay.create_executor(mod=mod)

    def ev(e):
        return ex.evaluate(e)

    assert int(ev(p.length(_py_list(p, xs))).numpy()) == len(xs)
    assert int(ev(p.sum(_py_list(p, xs))).numpy()) == sum(xs)
    assert int(ev(p.nth(_py_list(p, xs), relay.const(np.int32(k)))).numpy()) == xs[k]
    assert int(ev(p.hd(_py_list(p, xs))).numpy()) == xs[0]
    assert _to_py(ev(p.tl(_py_list(p, xs)))) == xs[1:]
    assert _to_py(ev(p.concat(_py_list(p, xs), _py_list(p, ys)))) == xs + ys
    updated = ev(p.update(_py_list(p, xs), relay.const(np.int32(k)), relay.const(np.int32(99))))
    assert _to_py(updated) == xs[:k] + [99] + xs[k + 1 :]


def test_match_takes_the_first_clause_that_fits_and_nested_patterns():
    mod = tvm.relay.parse("""#[version = "0.0.5"]
type List[A] { Cons(A, List[A]), Nil, }
def @second_or(%l: List[int32], %d: int32) -> int32 {
  match (%l) {
    Cons(_, Cons(%y, _)) => %y,
    Cons(%x, _) => %x + %d,
    _ => %d,
  }
}
def @main(%a: int32, %b: int32) -> (int32, int32, int32) {
  (@second_or(Cons(%a, Cons(%b, Nil)), 100), @second_or(Cons(%a, Nil), 100), @second_or(Nil, 100))
}
""")
    outs = _values(mod, np.array(3, "int32"), np.array(4, "int32"))
    assert [int(o) for o in outs] == [4, 103, 100]


def test_partial_match_that_fits_nothing_is_a_run_error():
    mod = tvm.IRModule()
    p = Prelude(mod)
    mod["main"] = relay.Function([], p.hd(p.Nil()), relay.scalar_type("int32"))
    with pytest.raises(RunError, match="no clause of the match fits"):
        interpret(mod)


def test_constructor_values_and_types():
    mod = tvm.IRModule()
    p = Prelude(mod)
    x = relay.var("x", shape=(2,), dtype="float32")
    fn = relay.Function([x], p.Some(x))
    mod["main"] = fn
    assert mod["main"].checked_type == relay.FuncType([relay.TensorType((2,), "float32")], p.Option(relay.TensorType((2,), "float32")))
    (v,) = interpret(mod, [np.array([1, 2], "float32")])
    assert isinstance(v, ConstructorValue) and v.constructor.name_hint == "Some" and v.tag == 0
    np.testing.assert_array_equal(v.fields[0], [1, 2])
    typed = relay.transform.InferType()(mod).astext(annotate=False)
    assert re.search(r"def @main\(%(x\d*): Tensor\[\(2\), float32\]\) -> Option\[Tensor\[\(2\), float32\]\] \{\n  Some\(%\1\)", typed)


def test_type_errors_are_named():
    mod = tvm.IRModule()
    p = Prelude(mod)
    with pytest.raises(RelayTypeError, match="constructor Cons: field 1 has type"):
        p.Cons(relay.const(1), p.Cons(relay.const(1.5), p.Nil()))
    with pytest.raises(RelayTypeError, match="the constructor has 2 field"):
        relay.PatternConstructor(p.Cons, [relay.PatternWildcard()])
    with pytest.raises(RelayTypeError, match="cannot tell the type arguments of List for Nil"):
        mod["main"] = relay.Function([], p.length(p.Nil()))
    t = relay.var("t", shape=(), dtype="int32")
    m = relay.Match(relay.var("l", p.List(relay.scalar_type("int32"))),
                    [relay.Clause(relay.PatternTuple([relay.PatternVar(t)]), t)])
    with pytest.raises(RelayTypeError, match="tuple patterns are not supported"):
        mod["f"] = relay.Function(relay.analysis.free_vars(m), m)
    with pytest.raises(PreludeError, match="@zip builds or takes lists of tuples"):
        p.get_global_var("zip")


@pytest.mark.parametrize(
    "text, message",
    [
        ("type T { A(int32), A }", "constructor A is defined twice"),
        ("type T[X] { A(X) }\ndef @f(%x: T) -> int32 { 0 }", "type T takes 1 type argument"),
        ("type T { A }\ndef @f(%x: T) -> int32 { match (%x) { B => 0 } }", "expected a pattern"),
        ("type T { A }\ndef @f(%x: T) -> int32 { match (%x) { A => 0 ", "expected"),
        ("def @f(%x: Q) -> int32 { 0 }", "expected a type"),
    ],
)
def test_bad_text_gets_one_message_with_its_place(text, message):
    with pytest.raises(RelayTextError, match=message) as e:
        tvm.relay.parse('#[version = "0.0.5"]\n' + text)
    assert "from_string:" in str(e.value)


def _dead_and_match_module():
    mod = tvm.IRModule()
    p = Prelude(mod)
    x = relay.var("x", shape=(3,), dtype="float32")
    dead = p.Cons(x, p.Nil())  # built and never used
    lst = p.Cons(relay.exp(x), p.Cons(x + x, p.Nil()))
    h, t = relay.var("h"), relay.var("t")
    body = relay.Match(lst, [
        relay.Clause(relay.PatternConstructor(p.Cons, [relay.PatternVar(h), relay.PatternVar(t)]), h * p.hd(t)),
        relay.Clause(relay.PatternWildcard(), x),
    ])
    mod["main"] = relay.Function([x], relay.Let(relay.var("d"), dead, body))
    return mod


@pytest.mark.parametrize("name", ["DeadCodeElimination", "ToANormalForm", "Inline", "FoldConstant", "EliminateCommonSubexpr"])
def test_passes_keep_the_meaning_through_match(name):
    data = np.array([0.5, -1.0, 2.0], "float32")
    (want,) = interpret(_dead_and_match_module(), [data])
    np.testing.assert_allclose(want, np.exp(data) * 2 * data, rtol=1e-6)
    after = getattr(relay.transform, name)()(_dead_and_match_module())
    (got,) = interpret(after, [data])
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_dead_code_elimination_and_remove_unused_functions():
    mod = _dead_and_match_module()
    def main_text(m):
        return m.mlir_text().split("func.func @main")[1]

    assert main_text(mod).count("@List::@Cons") == 3
    dce = relay.transform.DeadCodeElimination()(mod)
    assert main_text(dce).count("@List::@Cons") == 2  # the dead Cons is gone
    used = relay.transform.RemoveUnusedFunctions()(_dead_and_match_module())
    assert sorted(g.name_hint for g in used.get_global_vars()) == ["hd", "main"]


def test_fusion_and_build_refuse_adts_by_name():
    mod = tvm.IRModule()
    p = Prelude(mod)
    x = relay.var("x", shape=(2,), dtype="float32")
    mod["main"] = relay.Function([x], p.hd(p.Cons(relay.nn.relu(x), p.Nil())))
    mod = relay.transform.RemoveUnusedFunctions()(mod)
    with pytest.raises(Exception, match=r"fuse-ops: @hd uses Relay's algebraic data types \('adt.match'\)"):
        relay.transform.FuseOps()(mod)
    with pytest.raises(Exception, match="algebraic data types"):
        relay.build(mod, target="llvm")
    from xrelay.dialects import make_context
    from xrelay.transforms.lower_to_memory import LowerToMemoryPass

    with pytest.raises(Exception, match=r"lower-to-memory: @(main|hd) uses Relay's algebraic data types"):
        LowerToMemoryPass().apply(make_context(), mod.module)
