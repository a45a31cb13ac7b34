"""TVM v0.19's tests/python/relay/test_pass_dead_code_elimination.py, ported (imports changed).

A let-binding is a named SSA value, so Relay's dead let is xDSL's dead op, and ``inline_once``
drops the name of a value used once. Programs are parsed from TVM's Relay text and compared
structurally after the passes, as TVM's ``optimize_and_check``.

TVM's 12 test functions: 9 ported, all passing as TVM wrote them (plus checks of the text
where the pass changes what it shows, and one test of ``ignore_impurity``). Not ported (3):
Relay's ``memory`` dialect ops (test_impure_op, test_impure_func),
and the inception_v3 workload (test_complexity).
"""

from __future__ import annotations

import pytest

from xrelay import relay
from xrelay.relay import transform
from xrelay.testing.structural import assert_structural_equal


def optimize_and_check(before_program, after_program, passes):
    if isinstance(before_program, str):
        before_program = relay.fromtext(before_program)
    if isinstance(after_program, str):
        after_program = relay.fromtext(after_program)
    if not isinstance(passes, list):
        passes = [passes]
    optimize = transform.Sequential(passes)
    optimized_program = optimize(before_program)
    assert_structural_equal(optimized_program, after_program, map_free_vars=True)
    return optimized_program


def test_dead_let():
    before_program = """
    #[version = "0.0.5"]
    def @main(%z: int) {
        let %x = 1;
        %z
    }
    """
    after_program = """
    #[version = "0.0.5"]
    def @main(%z: int) {
        %z
    }
    """
    out = optimize_and_check(before_program, after_program, transform.DeadCodeElimination())
    assert "let" not in out.astext()


def test_one_live_let():
    before_program = """
    #[version = "0.0.5"]
    def @main(%z: int) {
        let %x = 1;
        let %y = 2;
        %x + %x
    }
    """
    after_program = """
    #[version = "0.0.5"]
    def @main(%z: int) {
        let %x = 1;
        %x + %x
    }
    """
    out = optimize_and_check(before_program, after_program, transform.DeadCodeElimination())
    assert [op.name for op in out.module.ops.first.body.block.ops] == ["relay.constant", "relay.add", "func.return"]


@pytest.mark.no_change(
    "dead-code-elimination",
    "a let of a variable (let %a = %b) is an alias with no op in SSA: the lowered program has "
    "nothing to remove, before and after the pass (test_dead_let is the same case on an op)",
)
def test_nested_let():
    before_program = """
    #[version = "0.0.5"]
    def @main(%d: int, %b: int) {
        let %a = %b;
        let %c = %d;
        %c
    }
    """
    after_program = """
    #[version = "0.0.5"]
    def @main(%d: int, %b: int) {
        let %c = %d;
        %c
    }
    """
    optimize_and_check(before_program, after_program, transform.DeadCodeElimination())


@pytest.mark.no_change(
    "dead-code-elimination",
    "TVM's expected program is the input: the recursive function is used, nothing is dead",
)
def test_live_recursion():
    before_program = """
    #[version = "0.0.5"]
    def @main() {
        let %f = fn (%n: int, %data: int) -> int {
            if (%n == 0) {
                %data
            } else {
                %f(%n - 1, log(%data))
            }
        };
        %f(2, 10000)
    }
    """

    after_program = """
    #[version = "0.0.5"]
    def @main() {
        let %f = fn (%n: int, %data: int) -> int {
            if (%n == 0) {
                %data
            } else {
                %f(%n - 1, log(%data))
            }
        };
        %f(2, 10000)
    }
    """

    optimize_and_check(
        before_program, after_program, [transform.DeadCodeElimination(), transform.InferType()]
    )


@pytest.mark.no_change(
    "dead-code-elimination",
    "a recursive let-bound function becomes a private function only where it is called (design "
    "decision 2): the dead one has no op in the parsed program, before and after the pass",
)
def test_dead_recursion():
    before_program = """
    #[version = "0.0.5"]
    def @main() {
        let %f = fn (%n: int, %data: int) -> int {
            if (%n == 0) {
                %data
            } else {
                %f(%n - 1, log(%data))
            }
        };
        ()
    }
    """

    after_program = """
    #[version = "0.0.5"]
    def @main() {
        ()
    }
    """

    optimize_and_check(
        before_program, after_program, [transform.DeadCodeElimination(), transform.InferType()]
    )


def test_add_with_let():
    before_program = """
    #[version = "0.0.5"]
    def @main() {
        (let %a = 1; 3) + 2
    }
    """
    after_program = """
    #[version = "0.0.5"]
    def @main() {
        3 + 2
    }
    """
    optimize_and_check(before_program, after_program, [transform.DeadCodeElimination(), transform.InferType()])


def test_tuple_get_item():
    before_program = """
    #[version = "0.0.5"]
    def @main() {
        let %a = 100;
        (1, 2, 3, 4).0
    }
    """
    after_program = """
    #[version = "0.0.5"]
    def @main() {
        (1, 2, 3, 4).0
    }
    """
    optimize_and_check(before_program, after_program, transform.DeadCodeElimination())


def test_inline_into_function():
    """Don't inline across function boundaries."""
    before_program = """
    #[version = "0.0.5"]
    def @main() {
        let %x = 1 + 1;
        let %f = fn (%y: int) -> int {
          let %z = %y + %y;
          %x + %z
        };
        (%f(2), %f(3))
    }
    """
    after_program = """
    #[version = "0.0.5"]
    def @main() {
        let %x = 1 + 1;
        let %f = fn (%y: int) -> int {
          %x + (%y + %y)
        };
        (%f(2), %f(3))
    }
    """
    out = optimize_and_check(before_program, after_program, transform.DeadCodeElimination(inline_once=True))
    text = out.astext()
    assert "let %x = add(1 /* ty=int32 */, 1 /* ty=int32 */)" in text  # used twice: kept
    assert "let %z" not in text  # used once: inlined


@pytest.mark.no_change(
    "dead-code-elimination",
    "TVM's expected program is the input: every reference op has an effect and stays",
)
def test_refs():
    """Don't elide expressions with reference create/read/write side effects"""
    before_program = """
    #[version = "0.0.5"]
    def @f(%r) -> int {
        let %v = ref_read(%r);
        let %u = ref_write(%r, %v + 1);
        %v
    }
    def @main() -> int {
        let %r = ref(0);
        let %y = @f(%r);
        let %z = @f(%r);
        %z
    }
    """

    after_program = before_program

    optimize_and_check(
        before_program,
        after_program,
        [transform.InferType(), transform.DeadCodeElimination(inline_once=True)],
    )


def test_ignore_impurity_is_relays_option():
    # not in TVM's file: the option the ported tests' DeadCodeElimination also takes
    mod = relay.fromtext(
        '#[version = "0.0.5"]\n'
        "def @main(%x: Tensor[(2), float32]) { let %d = nn.dropout(%x); %x }"
    )
    transform.DeadCodeElimination()(mod)
    assert "nn.dropout" in mod.astext()
    transform.DeadCodeElimination(ignore_impurity=True)(mod)
    assert "nn.dropout" not in mod.astext()
