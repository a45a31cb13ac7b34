"""Relay's memory ops in Relay text (``memory.alloc_storage``, ``memory.kill``; TVM's
src/relay/op/memory/memory.cc): parsed, typed (``Storage``, ``()``), printed, run by the
reference interpreter, kept by the passes where their effect says so.

``test_tvm_impure_*`` are TVM v0.19's dead-code-elimination ``test_impure_op`` and
``test_impure_func`` programs, each parsed on its own: TVM's test parses both into one
``core`` module (``init_module``), which its functional passes leave alone; xrelay's passes
rewrite in place (docs/guide/departures.md), so the harness's copy compares the result with
itself. The comparison here is the one TVM's test means: DCE of the first is the second.
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

SHAPE = np.array([64, 2])
CPU = tvm.target.VirtualDevice(tvm.cpu(), tvm.target.Target("llvm"))


def _meta():
    return {"VirtualDevice": [CPU], "relay.Constant": [relay.const(SHAPE, dtype="int64")]}


def _parse(text: str) -> tvm.IRModule:
    return tvm.relay.parse(text, "from_string", None, _meta())


IMPURE_OP_BEFORE = """
#[version = "0.0.5"]
def @main() {
   let %size: int64 = cast(1024, dtype="int64");
   let %alignment: int64 = cast(64, dtype="int64");
   let %x = memory.alloc_storage(%size, meta[relay.Constant][0], %alignment, virtual_device=meta[VirtualDevice][0]);
   let %_ = memory.kill(%x);
   0
}
"""
IMPURE_OP_AFTER = """
#[version = "0.0.5"]
def @main() {
   %0 = memory.alloc_storage(cast(1024, dtype="int64"),
                             meta[relay.Constant][0],
                             cast(64, dtype="int64"),
                             virtual_device=meta[VirtualDevice][0]);
   let %_ = memory.kill(%0);
   0
}
"""
IMPURE_FUNC_BEFORE = """
#[version = "0.0.5"]
def @f() -> int {
   let %size: int64 = cast(1024, dtype="int64");
   let %alignment: int64 = cast(64, dtype="int64");
   let %x = memory.alloc_storage(%size, meta[relay.Constant][0], %alignment, virtual_device=meta[VirtualDevice][0]);
   let %_ = memory.kill(%x);
   0
}
def @main() -> int {
   let %y = @f();
   0
}
"""
IMPURE_FUNC_AFTER = """
#[version = "0.0.5"]
def @f() -> int {
   %0 = memory.alloc_storage(cast(1024, dtype="int64"),
                             meta[relay.Constant][0],
                             cast(64, dtype="int64"),
                             virtual_device=meta[VirtualDevice][0]);
   let %_ = memory.kill(%0);
   0
}
def @main() -> int {
    let %y = @f();
    0
}
"""


@pytest.mark.parametrize("before, after", [(IMPURE_OP_BEFORE, IMPURE_OP_AFTER), (IMPURE_FUNC_BEFORE, IMPURE_FUNC_AFTER)])
def test_tvm_impure(before, after):
    optimized = tvm.transform.Sequential([transform.DeadCodeElimination(inline_once=True)])(_parse(before))
    assert_structural_equal(optimized, _parse(after), map_free_vars=True)
    main = optimized["f" if "@f" in before else "main"]
    assert "memory.kill" in main.astext() and "memory.alloc_storage" in main.astext()


PROGRAM = """
#[version = "0.0.5"]
def @main(%a: Tensor[(4), float32]) {
   let %size: int64 = cast(256, dtype="int64");
   let %x = memory.alloc_storage(%size, meta[relay.Constant][0], cast(64, dtype="int64"), dtype="float32");
   let %unused = memory.alloc_storage(%size, meta[relay.Constant][0], cast(64, dtype="int64"));
   let %_ = memory.kill(%x);
   multiply(%a, %a)
}
"""


def _run(mod: tvm.IRModule, a: np.ndarray) -> np.ndarray:
    return relay.create_executor("debug", mod=mod).evaluate()(a).numpy()


def test_run_and_passes_keep_the_meaning():
    # the reference interpreter runs the ops (an allocation, a release) and every pass
    # that sees them leaves the value; DCE drops only the unused allocation
    a = np.random.default_rng(0).standard_normal(4).astype("float32")
    want = a * a
    np.testing.assert_array_equal(_run(_parse(PROGRAM), a), want)
    for p in (
        transform.DeadCodeElimination(inline_once=True),
        transform.FoldConstant(),
        transform.EliminateCommonSubexpr(),
        transform.FuseOps(),
        transform.ToANormalForm(),
    ):
        mod = p(transform.InferType()(_parse(PROGRAM)))
        np.testing.assert_array_equal(_run(mod, a), want)
        text = mod.astext()
        assert "memory.kill" in text, p  # the effect is kept by every pass
    dce = transform.DeadCodeElimination()(_parse(PROGRAM)).astext()
    assert dce.count("memory.alloc_storage") == 1


def test_types_printing_and_parsing_back():
    mod = transform.InferType()(_parse(PROGRAM))
    text = mod.astext()
    assert "/* ty=Storage[] */" in text and "memory.kill(" in text and "/* ty=() */" in text
    again = tvm.relay.parse(text, "from_string", None, _meta())
    assert_structural_equal(again, mod)


def test_errors_name_the_op():
    with pytest.raises((RelayTypeError, RelayTextError), match="relay.memory.alloc_storage: size must be an int64 scalar"):
        _parse("""#[version = "0.0.5"]
def @main() { let %x = memory.alloc_storage(1f, meta[relay.Constant][0], cast(64, dtype="int64")); 0 }""")
    with pytest.raises((RelayTypeError, RelayTextError), match="takes 3 operand"):
        _parse("""#[version = "0.0.5"]
def @main() { let %x = memory.alloc_storage(cast(8, dtype="int64")); 0 }""")
    bad = _parse("""#[version = "0.0.5"]
def @main() { let %x = memory.alloc_storage(cast(8, dtype="int64"), meta[relay.Constant][0], cast(3, dtype="int64")); let %_ = memory.kill(%x); 0 }""")
    with pytest.raises(RunError, match="alignment 3 a power of two"):
        relay.create_executor("debug", mod=bad).evaluate()()
    with pytest.raises(tvm.TVMError, match="memory.alloc_storage"):
        relay.build(_parse(PROGRAM), target="llvm")
