"""Relay's references (``RefCreate``/``RefRead``/``RefWrite``) through the Python API, the text
format, the passes and the reference interpreter (the ref dialect, docs/design.md decision 9).

The ``test_tvm_*`` functions are TVM v0.19's reference tests as written, with their expected
values: test_backend_interpreter.py's and test_pass_to_a_normal_form.py's ``test_ref`` (3),
test_pass_to_basic_block_normal_form.py's ``test_ref`` (its basic-block check is not ported),
test_ir_parser.py's ``test_ref`` and test_type_infer.py's ``test_ref`` (``infer_expr`` is the
eager typing here; ``relay.scalar_type`` is ``relay.TensorType((), dtype)``).
"""

from __future__ import annotations

import numpy as np
import pytest

import xrelay as tvm
from xrelay import relay
from xrelay.dialects.relay import RelayTypeError
from xrelay.relay import transform
from xrelay.relay.parser import RelayTextError
from xrelay.runtime.interpreter import RunError
from xrelay.testing.structural import assert_structural_equal


def _three_with_ref() -> relay.Expr:
    i, iv, u, uv = (relay.Var(n) for n in ("i", "iv", "u", "uv"))
    body = relay.add(iv, uv)
    body = relay.Let(uv, relay.RefRead(i), body)
    body = relay.Let(u, relay.RefWrite(i, relay.const(2)), body)
    body = relay.Let(iv, relay.RefRead(i), body)
    return relay.Let(i, relay.RefCreate(relay.const(1)), body)


def _eval(expr: relay.Expr, mod: tvm.IRModule | None = None) -> np.ndarray:
    return relay.create_executor(mod=mod, device=tvm.device("llvm", 0), target="llvm").evaluate(expr).numpy()


def test_tvm_backend_interpreter_ref():
    mod = tvm.IRModule()
    three_with_ref = relay.GlobalVar("three_with_ref")
    mod[three_with_ref] = relay.Function([], _three_with_ref())
    result = relay.create_executor(mod=mod).evaluate(three_with_ref)()
    np.testing.assert_allclose(result.numpy(), 3)


@pytest.mark.parametrize("normal_form", [transform.ToANormalForm, transform.ToBasicBlockNormalForm])
def test_tvm_normal_forms_ref(normal_form):
    body = _three_with_ref()
    np.testing.assert_allclose(_eval(body), 3)
    mod = normal_form()(tvm.IRModule.from_expr(body))
    np.testing.assert_allclose(_eval(mod["main"].body), 3)


def test_tvm_ir_parser_ref():
    program = """
    #[version = "0.0.5"]
    def @main(%x: float32) {
        %0 = ref(%x);
        ref_write(%0, 1f);
        ref_read(%0)
    }
    """
    mod = tvm.relay.parse(program)
    # the write happens before the read: 1, whatever %x is
    run = relay.create_executor(mod=mod).evaluate()
    assert run(np.float32(5)).numpy() == 1


def test_tvm_type_infer_ref():
    x = relay.var("x", "float32")
    y = relay.var("y", "float32")
    r = relay.RefCreate(x)
    st = relay.TensorType((), "float32")
    assert r.checked_type == relay.RefType(st)
    g = relay.RefRead(r)
    assert g.checked_type == st
    w = relay.RefWrite(r, y)
    assert w.checked_type == relay.TupleType([])


def test_text_round_trip_and_types_from_uses():
    # %c has no type: ref_read's use in an int64 multiply makes it ref(int64)
    program = """
    #[version = "0.0.5"]
    def @double(%c) -> int64 {
        let %old = ref_read(%c);
        let %new = multiply(%old, 2i64);
        let %w = ref_write(%c, %new);
        %new
    }
    def @main(%start: int64) -> int64 {
        let %c = ref(%start);
        let %a = @double(%c);
        @double(%c)
    }
    """
    mod = relay.parse(program)
    text = mod.astext()
    assert "def @double(%c: ref(int64)" in text
    assert "let %old = ref_read(%c);" in text
    assert "ref_write(%c, %new);" in text
    assert_structural_equal(relay.parse(text), mod)
    # the second call sees the first's write: start * 4
    assert relay.create_executor(mod=mod).evaluate()(np.int64(3)).numpy() == 12
    # rebuilt as expressions and lowered again, the unused first call is still made (a let)
    again = tvm.IRModule()
    again["double"] = mod["double"]
    again["main"] = mod["main"]
    assert relay.create_executor(mod=again).evaluate()(np.int64(3)).numpy() == 12


def test_aliasing_and_reference_of_reference():
    # two names for one reference see each other's writes; a reference can hold a reference
    x = relay.var("x", shape=(2,))
    r, rr, a = relay.Var("r"), relay.Var("rr"), relay.Var("a")
    body = relay.Let(
        r,
        relay.RefCreate(x),
        relay.Let(
            rr,
            relay.RefCreate(r),
            relay.Let(a, relay.RefWrite(relay.RefRead(rr), x * relay.const(3.0)), relay.RefRead(r)),
        ),
    )
    mod = tvm.IRModule.from_expr(relay.Function([x], body))
    out = relay.create_executor(mod=mod).evaluate()(np.array([1, 2], "float32")).numpy()
    np.testing.assert_array_equal(out, [3, 6])


def test_detect_feature_reports_references():
    from xrelay.relay.analysis import Feature, detect_feature

    features = detect_feature(_three_with_ref())
    assert {Feature.fRefCreate, Feature.fRefRead, Feature.fRefWrite, Feature.fLet} <= features
    mod = tvm.IRModule.from_expr(_three_with_ref())
    assert {Feature.fRefCreate, Feature.fRefRead, Feature.fRefWrite} <= detect_feature(mod)
    assert Feature.fRefCreate not in detect_feature(relay.const(1))


def test_dead_code_elimination_keeps_effects():
    program = """
    #[version = "0.0.5"]
    def @main(%x: float32) -> float32 {
        let %r = ref(%x);
        let %w = ref_write(%r, 2f);
        let %unused = add(%x, %x);
        ref_read(%r)
    }
    """
    mod = transform.DeadCodeElimination(inline_once=True)(relay.parse(program))
    text = mod.astext()
    assert "ref_write(%r, 2f" in text and "add(" not in text
    assert relay.create_executor(mod=mod).evaluate()(np.float32(7)).numpy() == 2


def test_fuse_ops_leaves_references_between_fused_functions():
    x = relay.var("x", shape=(6, 9))
    y = relay.split(x, 3).astuple()
    a, b, c = (relay.TupleGetItem(y, i) for i in range(3))
    mod = tvm.IRModule.from_expr(relay.Function([x], a + relay.RefRead(relay.RefCreate(b)) + c))
    fused = transform.FuseOps()(transform.InferType()(mod))
    text = fused.astext()
    assert "ref(" in text and "ref_read(" in text and text.count("Primitive=1") == 2
    data = np.random.default_rng(0).random((6, 9), dtype=np.float32)
    out = relay.create_executor(mod=fused).evaluate()(data).numpy()
    np.testing.assert_allclose(out, data[:2] + data[2:4] + data[4:], rtol=1e-6)


def test_build_refuses_references_by_name():
    x = relay.var("x", shape=(2,))
    r = relay.Var("r")
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.Let(r, relay.RefCreate(x), relay.RefRead(r))))
    with pytest.raises(Exception, match="ref.create"):
        relay.build(mod, target="llvm")


def test_type_errors():
    x = relay.var("x", shape=(2,))
    with pytest.raises(RelayTypeError, match="expected a reference"):
        relay.RefRead(x)
    r = relay.RefCreate(x)
    with pytest.raises(RelayTypeError, match="into a reference of"):
        relay.RefWrite(r, relay.const(1))
    with pytest.raises(RelayTypeError, match="holds a tensor or a reference"):
        relay.RefCreate(relay.Tuple([x, x]))
    with pytest.raises(RelayTextError, match="1:18: RefWrite"):
        relay.parse_expr("let %r = ref(1); ref_write(%r, 1f)")


def test_interpreter_runs_the_dialect():
    from xdsl.parser import Parser

    from xrelay.dialects import make_context
    from xrelay.runtime.interpreter import run

    module = Parser(
        make_context(),
        """
        func.func @main(%v: tensor<i32>) -> tensor<i32> {
          %r = ref.create %v : tensor<i32>
          %x = ref.read %r : !ref.ref<tensor<i32>>
          %y = relay.add %x, %x : (tensor<i32>, tensor<i32>) -> tensor<i32>
          ref.write %r, %y : !ref.ref<tensor<i32>>
          %z = ref.read %r : !ref.ref<tensor<i32>>
          func.return %z : tensor<i32>
        }""",
    ).parse_module()
    assert run(module, {"v": np.array(5, "int32")})[0] == 10
    with pytest.raises(RunError):
        run(module, {"v": np.array(5, "float32")})


REFS = """
#[version = "0.0.5"]
def @main(%x: float32) -> float32 {
    let %r = ref(%x);
    let %w = ref_write(%r, %x * 2f);
    ref_read(%r) + 1f
}
"""


@pytest.mark.parametrize(
    "name",
    ["InferType", "FuseOps", "Inline", "DefuseOps", "ToANormalForm", "ToGraphNormalForm", "DeadCodeElimination",
     "FoldConstant", "EliminateCommonSubexpr", "SimplifyExpr", "ToBasicBlockNormalForm", "CanonicalizeOps"],
)  # fmt: skip
def test_passes_keep_the_write_before_the_read(name):
    # whatever the pass, the read sees the write: 2 * x + 1 (x + 1 if the write moved or went)
    with tvm.transform.PassContext(opt_level=3):
        mod = getattr(transform, name)()(relay.parse(REFS))
    assert "ref.write" in mod.mlir_text()
    assert relay.create_executor(mod=mod).evaluate()(np.float32(2)).numpy() == 5
