"""
Relay's pass-instrument call order and exception semantics (docs/relay-semantics.md §6.2), ported from
TVM's tests/python/relay/test_pass_instrument.py.
"""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ModuleOp

from xrelay.instrument import PassInstrument, pass_instrument
from xrelay.transforms.infra import PassContext, PassInfo, Sequential, module_pass


class _Recorder:
    """Instrument logging every hook as "<id> <event>" to a shared list."""

    def __init__(self, ident: str, events: list[str], fail: str | None = None):
        self.ident = ident
        self.events = events
        self.fail = fail

    def _log(self, event: str) -> None:
        self.events.append(f"{self.ident} {event}")
        if event == self.fail:
            raise RuntimeError(f"{self.ident} broken {event}")

    def enter_pass_ctx(self):
        self._log("enter ctx")

    def exit_pass_ctx(self):
        self._log("exit ctx")

    def should_run(self, mod, info):
        self._log("should_run")
        return True

    def run_before_pass(self, mod, info):
        self._log("run_before_pass")

    def run_after_pass(self, mod, info):
        self._log("run_after_pass")


Recorder = pass_instrument(_Recorder)


def _transform(events: list[str], fail: bool = False):
    @module_pass(opt_level=0, name="TestPass")
    def transform(mod, ctx):
        events.append("transform pass")
        if fail:
            raise RuntimeError("pass failed")

    return transform


def test_pass_instrument_decorator_keeps_class_and_adds_defaults():
    @pass_instrument
    class OnlyBefore:
        """Doc."""

        def run_before_pass(self, mod, info):
            return "mine"

    inst = OnlyBefore()
    assert isinstance(inst, PassInstrument)
    assert OnlyBefore.__name__ == "OnlyBefore" and OnlyBefore.__doc__ == "Doc."
    assert inst.name == "OnlyBefore"
    assert inst.should_run(None, PassInfo(0, "x")) is True
    assert inst.run_before_pass(None, None) == "mine"
    # Works with parentheses too, and on instruments already.
    assert pass_instrument()(OnlyBefore) is OnlyBefore


def test_non_instrument_is_rejected():
    with pytest.raises(TypeError, match="not a PassInstrument"):
        PassContext(instruments=[_Recorder("%1", [])])


def test_call_order_two_instruments_two_passes(module: ModuleOp):
    events: list[str] = []
    with PassContext(instruments=[Recorder("%1", events), Recorder("%2", events)]):
        transform = _transform(events)
        transform(module)
        transform(module)
    per_pass = [
        "%1 should_run",
        "%2 should_run",
        "%1 run_before_pass",
        "%2 run_before_pass",
        "transform pass",
        "%1 run_after_pass",
        "%2 run_after_pass",
    ]
    assert events == [
        "%1 enter ctx",
        "%2 enter ctx",
        *per_pass,
        *per_pass,
        "%1 exit ctx",
        "%2 exit ctx",
    ]


def test_should_run_false_skips_pass_and_returns_module(module: ModuleOp):
    events: list[str] = []

    @pass_instrument
    class SkipAll:
        def should_run(self, mod, info):
            events.append("skip should_run")
            return False

    with PassContext(instruments=[SkipAll(), Recorder("%2", events)]):
        result = _transform(events)(module)
    assert result is module
    # %2's should_run is still asked (no short-circuit), nothing else runs.
    assert events == ["%2 enter ctx", "skip should_run", "%2 should_run", "%2 exit ctx"]


def test_should_run_ignored_for_required_pass(module: ModuleOp):
    events: list[str] = []

    @pass_instrument
    class SkipAll:
        def should_run(self, mod, info):
            events.append("should_run")
            return False

    with PassContext(required_pass=["TestPass"], instruments=[SkipAll()]):
        _transform(events)(module)
    assert events == ["transform pass"]


def test_enter_failure_exits_entered_in_reverse_and_clears(module: ModuleOp):
    events: list[str] = []
    outer = PassContext.current()
    ctx = PassContext(
        instruments=[
            Recorder("%1", events),
            Recorder("%2", events),
            Recorder("%3", events, fail="enter ctx"),
            Recorder("%4", events),
        ]
    )
    with pytest.raises(RuntimeError, match="%3 broken enter ctx"):
        with ctx:
            events.append("body")  # never reached
    assert events == ["%1 enter ctx", "%2 enter ctx", "%3 enter ctx", "%2 exit ctx", "%1 exit ctx"]
    assert ctx.instruments == ()
    assert PassContext.current() is outer
    assert outer.instruments == ()


def test_relay_enter_failure_case(module: ModuleOp):
    events: list[str] = []
    ctx = PassContext(
        instruments=[
            Recorder("%1", events),
            Recorder("%2", events, fail="enter ctx"),
            Recorder("%3", events),
        ]
    )
    with pytest.raises(RuntimeError):
        with ctx:
            _transform(events)(module)
    assert events == ["%1 enter ctx", "%2 enter ctx", "%1 exit ctx"]


def test_exit_failure_propagates_and_clears(module: ModuleOp):
    events: list[str] = []
    outer = PassContext.current()
    ctx = PassContext(
        instruments=[
            Recorder("%1", events),
            Recorder("%2", events, fail="exit ctx"),
            Recorder("%3", events),
        ]
    )
    with pytest.raises(RuntimeError, match="%2 broken exit ctx"):
        with ctx:
            pass
    assert events == [
        "%1 enter ctx",
        "%2 enter ctx",
        "%3 enter ctx",
        "%1 exit ctx",
        "%2 exit ctx",
    ]
    assert ctx.instruments == ()
    assert PassContext.current() is outer


def test_pass_exception_keeps_instruments(module: ModuleOp):
    events: list[str] = []
    ctx = PassContext(instruments=[Recorder("%1", events)])
    with pytest.raises(RuntimeError, match="pass failed"):
        with ctx:
            _transform(events, fail=True)(module)
    assert events == [
        "%1 enter ctx",
        "%1 should_run",
        "%1 run_before_pass",
        "transform pass",
        "%1 exit ctx",
    ]
    assert len(ctx.instruments) == 1


@pytest.mark.parametrize(
    ("hook", "expected_middle"),
    [
        ("should_run", ["%1 should_run"]),
        (
            "run_before_pass",
            ["%1 should_run", "%2 should_run", "%1 run_before_pass"],
        ),
        (
            "run_after_pass",
            [
                "%1 should_run",
                "%2 should_run",
                "%1 run_before_pass",
                "%2 run_before_pass",
                "transform pass",
                "%1 run_after_pass",
            ],
        ),
    ],
)
def test_hook_exception_propagates_at_once(module: ModuleOp, hook: str, expected_middle):
    events: list[str] = []
    ctx = PassContext(instruments=[Recorder("%1", events, fail=hook), Recorder("%2", events)])
    with pytest.raises(RuntimeError, match=f"%1 broken {hook}"):
        with ctx:
            _transform(events)(module)
    assert events == [
        "%1 enter ctx",
        "%2 enter ctx",
        *expected_middle,
        "%1 exit ctx",
        "%2 exit ctx",
    ]
    # Not disabled: overriding exits them again.
    events.clear()
    ctx.override_instruments([])
    assert events == ["%1 exit ctx", "%2 exit ctx"]


def test_override_instruments_on_current_context(module: ModuleOp):
    events: list[str] = []
    current = PassContext.current()
    current.override_instruments([Recorder("%1", events)])
    assert events == ["%1 enter ctx"]
    _transform(events)(module)
    current.override_instruments([Recorder("%2", events)])
    assert events == [
        "%1 enter ctx",
        "%1 should_run",
        "%1 run_before_pass",
        "transform pass",
        "%1 run_after_pass",
        "%1 exit ctx",
        "%2 enter ctx",
    ]
    current.override_instruments([])
    assert events[-1] == "%2 exit ctx"
    assert current.instruments == ()


def test_override_instruments_enter_failure_clears():
    events: list[str] = []
    current = PassContext.current()
    with pytest.raises(RuntimeError, match="broken enter ctx"):
        current.override_instruments(
            [Recorder("%1", events), Recorder("%2", events, fail="enter ctx")]
        )
    assert events == ["%1 enter ctx", "%2 enter ctx", "%1 exit ctx"]
    assert current.instruments == ()


def test_override_instruments_exit_failure_clears():
    events: list[str] = []
    current = PassContext.current()
    current.override_instruments([Recorder("%1", events, fail="exit ctx"), Recorder("%2", events)])
    with pytest.raises(RuntimeError, match="broken exit ctx"):
        current.override_instruments([Recorder("%3", events)])
    # %2 is not exited and %3 never entered.
    assert events == ["%1 enter ctx", "%2 enter ctx", "%1 exit ctx"]
    assert current.instruments == ()


def test_run_before_failure_without_with_block_leaves_instruments(module: ModuleOp):
    events: list[str] = []
    current = PassContext.current()
    current.override_instruments(
        [Recorder("%1", events), Recorder("%2", events, fail="run_before_pass")]
    )
    with pytest.raises(RuntimeError):
        _transform(events)(module)
    assert events == [
        "%1 enter ctx",
        "%2 enter ctx",
        "%1 should_run",
        "%2 should_run",
        "%1 run_before_pass",
        "%2 run_before_pass",
    ]
    events.clear()
    current.override_instruments([])
    assert events == ["%1 exit ctx", "%2 exit ctx"]


def test_sequential_instruments_see_nested_and_required_passes(module: ModuleOp, registry):
    seen: list[tuple[str, str]] = []

    @pass_instrument
    class Names:
        def run_before_pass(self, mod, info):
            seen.append(("before", info.name))

        def run_after_pass(self, mod, info):
            seen.append(("after", info.name))

    with PassContext(opt_level=3, instruments=[Names()]):
        Sequential([registry.AppendPure()], name="outer")(module)
    assert seen == [
        ("before", "outer"),
        ("before", "InferType"),
        ("after", "InferType"),
        ("before", "AppendPure"),
        ("after", "AppendPure"),
        ("after", "outer"),
    ]
