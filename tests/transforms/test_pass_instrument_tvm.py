"""TVM v0.19's tests/python/relay/test_pass_instrument.py (Apache-2.0, the Apache Software Foundation), ported.

Changes: imports only; ``tvm.testing.parameter`` is xrelay.testing's. Not here:
test_pass_timing_instrument, test_disable_pass, test_multiple_instrument,
test_instrument_pass_counts, test_enter_pass_ctx_exception.
"""
import pytest

import xrelay as tvm
import xrelay.relay
import xrelay.testing  # noqa: F401 - tvm.testing.parameter
from xrelay.ir.instrument import pass_instrument
from xrelay.relay import op


def get_test_model():
    x, y, z = [tvm.relay.var(c, shape=(3, 4), dtype="float32") for c in "xyz"]
    e1 = op.add(x, y)
    e2 = op.subtract(x, z)
    e3 = op.multiply(e1, e1 / e2)
    return tvm.IRModule.from_expr(e3 + e2)


instrument_definition_type = tvm.testing.parameter("decorator", "subclass")


def test_custom_instrument(instrument_definition_type):
    class BaseTest:
        def __init__(self):
            self.events = []

        def enter_pass_ctx(self):
            self.events.append("enter ctx")

        def exit_pass_ctx(self):
            self.events.append("exit ctx")

        def run_before_pass(self, mod, info):
            self.events.append("run before " + info.name)

        def run_after_pass(self, mod, info):
            self.events.append("run after " + info.name)

    if instrument_definition_type == "decorator":
        MyTest = pass_instrument(BaseTest)

    elif instrument_definition_type == "subclass":

        class MyTest(BaseTest, tvm.ir.instrument.PassInstrument):
            def __init__(self):
                BaseTest.__init__(self)
                tvm.ir.instrument.PassInstrument.__init__(self)

    mod = get_test_model()
    my_test = MyTest()
    with tvm.transform.PassContext(instruments=[my_test]):
        mod = tvm.relay.transform.InferType()(mod)

    assert (
        "enter ctx"
        "run before InferType"
        "run after InferType"
        "exit ctx" == "".join(my_test.events)
    )


def test_enter_pass_ctx_exception_global():
    @pass_instrument
    class PIBroken:
        def enter_pass_ctx(self):
            raise RuntimeError("Just a dummy error")

    cur_pass_ctx = tvm.transform.PassContext.current()
    with pytest.raises(RuntimeError) as cm:
        cur_pass_ctx.override_instruments([PIBroken()])
        assert "Just a dummy error" in str(cm.exception)
    assert not cur_pass_ctx.instruments


def test_exit_pass_ctx_exception():
    events = []

    @pass_instrument
    class PI:
        def __init__(self, id):
            self.id = id

        def exit_pass_ctx(self):
            events.append(self.id + " exit ctx")

    @pass_instrument
    class PIBroken(PI):
        def __init__(self, id):
            super().__init__(id)

        def exit_pass_ctx(self):
            events.append(self.id + " exit ctx")
            raise RuntimeError("Just a dummy error")

    pass_ctx = tvm.transform.PassContext(instruments=[PI("%1"), PIBroken("%2"), PI("%3")])
    with pytest.raises(RuntimeError) as cm:
        with pass_ctx:
            pass
        assert "Just a dummy error" in str(cm.exception)

    assert "%1 exit ctx" "%2 exit ctx" == "".join(events)

    # Make sure we get correct PassContext
    cur_pass_ctx = tvm.transform.PassContext.current()
    assert pass_ctx != cur_pass_ctx
    assert not cur_pass_ctx.instruments


def test_exit_pass_ctx_exception_global():
    @pass_instrument
    class PIBroken:
        def exit_pass_ctx(self):
            raise RuntimeError("Just a dummy error")

    cur_pass_ctx = tvm.transform.PassContext.current()
    with pytest.raises(RuntimeError) as cm:
        cur_pass_ctx.override_instruments([PIBroken()])
        cur_pass_ctx.override_instruments([PIBroken()])
        assert "Just a dummy error" in str(cm.exception)
    assert not cur_pass_ctx.instruments


def test_pass_exception():
    events = []

    @pass_instrument
    class PI:
        def enter_pass_ctx(self):
            events.append("enter_pass_ctx")

        def exit_pass_ctx(self):
            events.append("exit_pass_ctx")

        def should_run(self, mod, info):
            events.append("should_run")
            return True

        def run_before_pass(self, mod, info):
            events.append("run_before_pass")

        def run_after_pass(self, mod, info):
            events.append("run_after_pass")

    @tvm.transform.module_pass(opt_level=2)
    def transform(mod, ctx):
        events.append("transform pass")
        raise RuntimeError("Just a dummy error")
        return mod

    mod = get_test_model()
    with pytest.raises(RuntimeError) as cm:
        with tvm.transform.PassContext(instruments=[PI()]):
            mod = transform(mod)
        assert "Just a dummy error" in str(cm.exception)

    assert (
        "enter_pass_ctx"
        "should_run"
        "run_before_pass"
        "transform pass"
        "exit_pass_ctx" == "".join(events)
    )


def test_should_run_exception():
    events = []

    @pass_instrument
    class PI:
        def __init__(self, id):
            self.id = id

        def enter_pass_ctx(self):
            events.append(self.id + " enter_pass_ctx")

        def exit_pass_ctx(self):
            events.append(self.id + " exit_pass_ctx")

        def should_run(self, mod, info):
            events.append(self.id + " should_run")
            raise RuntimeError("Just a dummy error")
            return True

        def run_before_pass(self, mod, info):
            events.append(self.id + " run_before_pass")

        def run_after_pass(self, mod, info):
            events.append(self.id + " run_after_pass")

    @tvm.transform.module_pass(opt_level=2)
    def transform(mod, ctx):
        events.append("transform pass")
        return mod

    mod = get_test_model()
    with pytest.raises(RuntimeError) as cm:
        with tvm.transform.PassContext(instruments=[PI("%1"), PI("%2")]):
            mod = transform(mod)
        assert "Just a dummy error" in str(cm.exception)

    assert (
        "%1 enter_pass_ctx"
        "%2 enter_pass_ctx"
        "%1 should_run"
        "%1 exit_pass_ctx"
        "%2 exit_pass_ctx" == "".join(events)
    )


def test_run_before_exception():
    events = []

    @pass_instrument
    class PI:
        def __init__(self, id):
            self.id = id

        def enter_pass_ctx(self):
            events.append(self.id + " enter_pass_ctx")

        def exit_pass_ctx(self):
            events.append(self.id + " exit_pass_ctx")

        def should_run(self, mod, info):
            events.append(self.id + " should_run")
            return True

        def run_before_pass(self, mod, info):
            events.append(self.id + " run_before_pass")
            raise RuntimeError("Just a dummy error")

        def run_after_pass(self, mod, info):
            events.append(self.id + " run_after_pass")

    @tvm.transform.module_pass(opt_level=2)
    def transform(mod, ctx):
        events.append("transform pass")
        return mod

    mod = get_test_model()
    with pytest.raises(RuntimeError) as cm:
        with tvm.transform.PassContext(instruments=[PI("%1"), PI("%2")]):
            mod = transform(mod)
        assert "Just a dummy error" in str(cm.exception)

    assert (
        "%1 enter_pass_ctx"
        "%2 enter_pass_ctx"
        "%1 should_run"
        "%2 should_run"
        "%1 run_before_pass"
        "%1 exit_pass_ctx"
        "%2 exit_pass_ctx" == "".join(events)
    )


def test_run_after_exception():
    events = []

    @pass_instrument
    class PI:
        def __init__(self, id):
            self.id = id

        def enter_pass_ctx(self):
            events.append(self.id + " enter_pass_ctx")

        def exit_pass_ctx(self):
            events.append(self.id + " exit_pass_ctx")

        def should_run(self, mod, info):
            events.append(self.id + " should_run")
            return True

        def run_before_pass(self, mod, info):
            events.append(self.id + " run_before_pass")

        def run_after_pass(self, mod, info):
            events.append(self.id + " run_after_pass")
            raise RuntimeError("Just a dummy error")

    @tvm.transform.module_pass(opt_level=2)
    def transform(mod, ctx):
        events.append("transform pass")
        return mod

    x, y = [tvm.relay.var(c, shape=(3, 4), dtype="float32") for c in "xy"]
    mod = tvm.IRModule.from_expr(tvm.relay.add(x, y))

    with pytest.raises(RuntimeError) as cm:
        with tvm.transform.PassContext(instruments=[PI("%1"), PI("%2")]):
            mod = transform(mod)
        assert "Just a dummy error" in str(cm.exception)

    assert (
        "%1 enter_pass_ctx"
        "%2 enter_pass_ctx"
        "%1 should_run"
        "%2 should_run"
        "%1 run_before_pass"
        "%2 run_before_pass"
        "transform pass"
        "%1 run_after_pass"
        "%1 exit_pass_ctx"
        "%2 exit_pass_ctx" == "".join(events)
    )


def test_instrument_call_sequence():
    events = []

    @pass_instrument
    class PI:
        def __init__(self, id):
            self.id = id

        def enter_pass_ctx(self):
            events.append(self.id + " enter_pass_ctx")

        def exit_pass_ctx(self):
            events.append(self.id + " exit_pass_ctx")

        def should_run(self, mod, info):
            events.append("  " + self.id + " should_run")
            return True

        def run_before_pass(self, mod, info):
            events.append("  " + self.id + " run_before_pass")

        def run_after_pass(self, mod, info):
            events.append("  " + self.id + " run_after_pass")

    @tvm.transform.module_pass(opt_level=2)
    def transform1(mod, ctx):
        events.append("    transform1 pass")
        return mod

    @tvm.transform.module_pass(opt_level=2)
    def transform2(mod, ctx):
        events.append("    transform2 pass")
        return mod

    mod = get_test_model()
    with tvm.transform.PassContext(instruments=[PI("%1"), PI("%2")]):
        mod = transform1(mod)
        mod = transform2(mod)

    assert (
        "%1 enter_pass_ctx"
        "%2 enter_pass_ctx"
        "  %1 should_run"
        "  %2 should_run"
        "  %1 run_before_pass"
        "  %2 run_before_pass"
        "    transform1 pass"
        "  %1 run_after_pass"
        "  %2 run_after_pass"
        "  %1 should_run"
        "  %2 should_run"
        "  %1 run_before_pass"
        "  %2 run_before_pass"
        "    transform2 pass"
        "  %1 run_after_pass"
        "  %2 run_after_pass"
        "%1 exit_pass_ctx"
        "%2 exit_pass_ctx" == "".join(events)
    )


def test_list_pass_configs():
    configs = tvm.transform.PassContext.list_configs()

    assert len(configs) > 0
    assert "relay.backend.use_auto_scheduler" in configs.keys()
    assert configs["relay.backend.use_auto_scheduler"]["type"] == "IntImm"
