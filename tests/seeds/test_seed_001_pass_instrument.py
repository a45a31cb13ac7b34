"""Seed 001: the "How to use TVM Pass Instrument" tutorial, ported with only imports changed.

``tvm.transform`` is ``xrelay.relay.transform`` (``PassContext``, ``Sequential``) and
``tvm.ir.instrument`` is ``xrelay.instrument``. What the tutorial prints is asserted: the
timing profile's lines and nesting, the op-count differences per pass, and the order of the
instrument calls when an instrument raises. Adaptations, each said again where it happens:

* Relay's FoldConstant runs InferType inside itself, which the timing profile shows as a
  nested line; xrelay's FoldConstant needs no type inference, so that line is absent.
* ``ConvertLayout`` does not exist in xrelay (it has no layout-rewriting pass). The sequence
  that the op-count instrument watches uses ``SimplifyInference`` in its place, and runs
  ``CanonicalizeOps`` (which Relay's ConvertLayout runs as a required pass) explicitly.
"""

from __future__ import annotations

import re

import pytest

from xrelay import relay
from xrelay.instrument import (
    PassTimingInstrument,
    pass_instrument,
)
from xrelay.relay import transform as tvm_transform  # the seed's tvm.transform
from xrelay.relay.build_module import bind_params_by_name
from xrelay.relay.testing import resnet

batch_size = 1
num_of_image_class = 1000
image_shape = (3, 224, 224)
output_shape = (batch_size, num_of_image_class)

_TIMING_LINE = re.compile(r"^(\t*)(\w+): (\d+)us \[(-?\d+)us\] \((\d+\.\d\d)%; (\d+\.\d\d)%\)$")


@pytest.fixture(scope="module")
def resnet18():
    relay_mod, relay_params = resnet.get_workload(
        num_layers=18, batch_size=1, image_shape=image_shape
    )
    return relay_mod, relay_params


@pytest.fixture
def relay_mod_and_params(resnet18):
    # Passes rewrite modules in place: every test starts from its own copy.
    relay_mod, relay_params = resnet18
    return relay_mod.clone(), relay_params


def _timing_lines(profiles):
    """(depth, pass name, total us, self us) per line of a rendered profile."""
    out = []
    for line in profiles.splitlines():
        m = _TIMING_LINE.match(line)
        assert m, f"not a timing line: {line!r}"
        out.append((len(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4))))
    return out


def test_create_relay_program(relay_mod_and_params):
    relay_mod, relay_params = relay_mod_and_params
    print("Printing the IR module...")
    text = str(relay_mod["main"])
    # The seed's %2: the first convolution, and the classifier at the end.
    assert (
        "relay.nn.conv2d %0, %conv0_weight {strides = [2, 2], padding = [3, 3, 3, 3], "
        "channels = 64, kernel_size = [7, 7]} : (tensor<1x3x224x224xf32>, "
        "tensor<64x3x7x7xf32>) -> tensor<1x64x112x112xf32>"
    ) in text
    assert "relay.nn.softmax" in text and "-> tensor<1x1000xf32>" in text
    fn = relay_mod["main"]
    assert [p.name_hint for p in fn.params][:6] == [
        "data",
        "bn_data_gamma",
        "bn_data_beta",
        "bn_data_moving_mean",
        "bn_data_moving_var",
        "conv0_weight",
    ]
    assert fn.params[-1].name_hint == "fc1_bias"
    assert len(fn.params) == 1 + len(relay_params)
    assert fn.checked_type.ret_type == relay.TensorType(output_shape, "float32")


def test_pass_context_with_timing_instrument(relay_mod_and_params):
    relay_mod, _ = relay_mod_and_params
    timing_inst = PassTimingInstrument()
    with tvm_transform.PassContext(instruments=[timing_inst]):
        relay_mod = relay.transform.InferType()(relay_mod)
        relay_mod = relay.transform.FoldScaleAxis()(relay_mod)
        # before exiting the context, get profile results.
        profiles = timing_inst.render()
    print("Printing results of timing profile...")
    print(profiles)

    # Seed: InferType, FoldScaleAxis with FoldConstant nested (at the default opt_level 2
    # the opt-level-3 parts of FoldScaleAxis do not run). Relay's FoldConstant also shows
    # a nested InferType, which xrelay's FoldConstant does not run.
    lines = _timing_lines(profiles)
    assert [(d, n) for d, n, _, _ in lines] == [
        (0, "InferType"),
        (0, "FoldScaleAxis"),
        (1, "FoldConstant"),
    ]
    (_, _, infer_total, infer_self), (_, _, fsa_total, fsa_self), (_, _, fc_total, _) = lines
    assert infer_total == infer_self
    assert fc_total <= fsa_total
    # Rounding each figure to whole microseconds may move the difference by one.
    assert abs(fsa_self - (fsa_total - fc_total)) <= 1
    top_percents = [float(_TIMING_LINE.match(line).group(5)) for line in profiles.splitlines()]
    assert top_percents[0] + top_percents[1] == pytest.approx(100.0, abs=0.02)
    # Leaving the context cleared the profile.
    assert timing_inst.render() == ""


def test_current_pass_context_with_instruments(relay_mod_and_params, caplog):
    relay_mod, _ = relay_mod_and_params
    timing_inst = PassTimingInstrument()
    cur_pass_ctx = tvm_transform.PassContext.current()
    cur_pass_ctx.override_instruments([timing_inst])
    try:
        relay_mod = relay.transform.InferType()(relay_mod)
        relay_mod = relay.transform.FoldScaleAxis()(relay_mod)
        profiles = timing_inst.render()
        print("Printing results of timing profile...")
        print(profiles)
        assert [(d, n) for d, n, _, _ in _timing_lines(profiles)] == [
            (0, "InferType"),
            (0, "FoldScaleAxis"),
            (1, "FoldConstant"),
        ]
    finally:
        # Register an empty list to clear existing instruments: exit_pass_ctx of
        # PassTimingInstrument is called and the profiles are cleared.
        cur_pass_ctx.override_instruments([])
    assert cur_pass_ctx.instruments == ()
    with caplog.at_level("WARNING"):
        profiles = timing_inst.render()
    assert profiles == ""
    assert "no passes have been profiled, did you enable pass profiling?" in caplog.text


@pass_instrument
class RelayCallNodeDiffer:
    def __init__(self):
        self._op_diff = []
        # Passes can be nested.
        # Use stack to make sure we get correct before/after pairs.
        self._op_cnt_before_stack = []

    def enter_pass_ctx(self):
        self._op_diff = []
        self._op_cnt_before_stack = []

    def exit_pass_ctx(self):
        assert len(self._op_cnt_before_stack) == 0, "The stack is not empty. Something wrong."

    def run_before_pass(self, mod, info):
        self._op_cnt_before_stack.append((info.name, self._count_nodes(mod)))

    def run_after_pass(self, mod, info):
        # Pop out the latest recorded pass.
        name_before, op_to_cnt_before = self._op_cnt_before_stack.pop()
        assert name_before == info.name, (
            f"name_before: {name_before}, info.name: {info.name} doesn't match"
        )
        cur_depth = len(self._op_cnt_before_stack)
        op_to_cnt_after = self._count_nodes(mod)
        op_diff = self._diff(op_to_cnt_after, op_to_cnt_before)
        # only record passes causing differences.
        if op_diff:
            self._op_diff.append((cur_depth, info.name, op_diff))

    def get_pass_to_op_diff(self):
        """
        return [
          (depth, pass_name, {op_name: diff_num, ...}), ...
        ]
        """
        return self._op_diff

    @staticmethod
    def _count_nodes(mod):
        """Count the number of occurrences of each operator in the module"""
        ret = {}

        def visit(node):
            if isinstance(node, relay.expr.Call):
                if hasattr(node.op, "name"):
                    op_name = node.op.name
                else:
                    # Some CallNode may not have 'name' such as relay.Function
                    return
                ret[op_name] = ret.get(op_name, 0) + 1

        relay.analysis.post_order_visit(mod["main"], visit)
        return ret

    @staticmethod
    def _diff(d_after, d_before):
        """Calculate the difference of two dictionary along their keys.
        The result is values in d_after minus values in d_before.
        """
        ret = {}
        key_after, key_before = set(d_after), set(d_before)
        for k in key_before & key_after:
            tmp = d_after[k] - d_before[k]
            if tmp:
                ret[k] = d_after[k] - d_before[k]
        for k in key_after - key_before:
            ret[k] = d_after[k]
        for k in key_before - key_after:
            ret[k] = -d_before[k]
        return ret


def test_multiple_instruments_and_op_diff(relay_mod_and_params):
    relay_mod, relay_params = relay_mod_and_params
    timing_inst = PassTimingInstrument()
    call_node_inst = RelayCallNodeDiffer()
    # Adapted: xrelay has no ConvertLayout; SimplifyInference takes its place, and
    # CanonicalizeOps (a required pass of Relay's ConvertLayout) runs explicitly.
    pass_seq = tvm_transform.Sequential(
        [
            relay.transform.FoldConstant(),
            relay.transform.SimplifyInference(),
            relay.transform.CanonicalizeOps(),
            relay.transform.FoldConstant(),
        ]
    )
    relay_mod["main"] = bind_params_by_name(relay_mod["main"], relay_params)
    batch_norms = [node for node in _calls(relay_mod["main"]) if node.op.name == "nn.batch_norm"]
    n_bn = len(batch_norms)
    n_scaled = sum(1 for bn in batch_norms if bn.attrs["scale"])
    assert (n_bn, n_scaled) == (19, 18)  # bn_data has scale=False

    # timing_inst is put after call_node_inst.
    # So the execution time of ``call_node.inst.run_after_pass()`` is also counted.
    with tvm_transform.PassContext(opt_level=3, instruments=[call_node_inst, timing_inst]):
        relay_mod = pass_seq(relay_mod)
        profiles = timing_inst.render()

    # The profile nests the Sequential's passes (and the InferType they require) under it.
    assert [(d, n) for d, n, _, _ in _timing_lines(profiles)] == [
        (0, "sequential"),
        (1, "FoldConstant"),
        (1, "InferType"),
        (1, "SimplifyInference"),
        (1, "InferType"),
        (1, "CanonicalizeOps"),
        (1, "FoldConstant"),
    ]

    # Per batch_norm Relay's SimplifyInference builds add(var, eps), sqrt, divide(1, .),
    # multiply(., gamma) if scale, negative(mean), multiply(-mean, scale), add(., beta),
    # expand_dims of scale and shift (NCHW, axis 1), multiply(x, scale), add(., shift);
    # FoldConstant then folds everything but the two ops on the data.
    assert call_node_inst.get_pass_to_op_diff() == [
        (
            1,
            "SimplifyInference",
            {
                "nn.batch_norm": -n_bn,
                "add": 3 * n_bn,
                "sqrt": n_bn,
                "divide": n_bn,
                "multiply": 2 * n_bn + n_scaled,
                "negative": n_bn,
                "expand_dims": 2 * n_bn,
            },
        ),
        (1, "CanonicalizeOps", {"add": 1, "nn.bias_add": -1}),
        (
            1,
            "FoldConstant",
            {
                "add": -2 * n_bn,
                "sqrt": -n_bn,
                "divide": -n_bn,
                "multiply": -(n_bn + n_scaled),
                "negative": -n_bn,
                "expand_dims": -2 * n_bn,
            },
        ),
        (
            0,
            "sequential",
            {"add": n_bn + 1, "multiply": n_bn, "nn.batch_norm": -n_bn, "nn.bias_add": -1},
        ),
    ]


def _calls(fn):
    out = []
    relay.analysis.post_order_visit(
        fn,
        lambda n: (
            out.append(n) if isinstance(n, relay.expr.Call) and hasattr(n.op, "name") else None
        ),
    )
    return out


# ---------------------------------------------------------------------------------------
# Exception handling
# ---------------------------------------------------------------------------------------


class PassExampleBase:
    def __init__(self, name):
        self._name = name

    def enter_pass_ctx(self):
        print(self._name, "enter_pass_ctx")

    def exit_pass_ctx(self):
        print(self._name, "exit_pass_ctx")

    def should_run(self, mod, info):
        print(self._name, "should_run")
        return True

    def run_before_pass(self, mod, pass_info):
        print(self._name, "run_before_pass")

    def run_after_pass(self, mod, pass_info):
        print(self._name, "run_after_pass")


@pass_instrument
class PassFine(PassExampleBase):
    pass


@pass_instrument
class PassBadEnterCtx(PassExampleBase):
    def enter_pass_ctx(self):
        print(self._name, "bad enter_pass_ctx!!!")
        raise ValueError(f"{self._name} bad enter_pass_ctx")


@pass_instrument
class PassBadExitCtx(PassExampleBase):
    def exit_pass_ctx(self):
        print(self._name, "bad exit_pass_ctx!!!")
        raise ValueError(f"{self._name} bad exit_pass_ctx")


@pass_instrument
class PassBadRunBefore(PassExampleBase):
    def run_before_pass(self, mod, pass_info):
        print(self._name, "bad run_before_pass!!!")
        raise ValueError(f"{self._name} bad run_before_pass")


def _printed(capsys):
    return capsys.readouterr().out.splitlines()


def test_exception_in_enter_pass_ctx(relay_mod_and_params, capsys):
    relay_mod, _ = relay_mod_and_params
    demo_ctx = tvm_transform.PassContext(
        instruments=[
            PassFine("PassFine_0"),
            PassBadEnterCtx("PassBadEnterCtx"),
            PassFine("PassFine_1"),
        ]
    )
    try:
        with demo_ctx:
            relay_mod = relay.transform.InferType()(relay_mod)
    except ValueError as ex:
        print("Catching", str(ex).split("\n")[-1])
    # Relay's "Catching ValueError: ..." comes from its FFI error text; Python's message
    # is the exception's own.
    assert _printed(capsys) == [
        "PassFine_0 enter_pass_ctx",
        "PassBadEnterCtx bad enter_pass_ctx!!!",
        "PassFine_0 exit_pass_ctx",
        "Catching PassBadEnterCtx bad enter_pass_ctx",
    ]
    # The instruments were cleared: nothing is exited again.
    demo_ctx.override_instruments([])  # no PassFine_0 exit_pass_ctx printed....etc
    assert _printed(capsys) == []


def test_exception_in_exit_pass_ctx(relay_mod_and_params, capsys):
    relay_mod, _ = relay_mod_and_params
    demo_ctx = tvm_transform.PassContext(
        instruments=[
            PassFine("PassFine_0"),
            PassBadExitCtx("PassBadExitCtx"),
            PassFine("PassFine_1"),
        ]
    )
    try:
        # PassFine_1 execute enter_pass_ctx, but not exit_pass_ctx.
        with demo_ctx:
            relay_mod = relay.transform.InferType()(relay_mod)
    except ValueError as ex:
        print("Catching", str(ex).split("\n")[-1])
    assert _printed(capsys) == [
        "PassFine_0 enter_pass_ctx",
        "PassBadExitCtx enter_pass_ctx",
        "PassFine_1 enter_pass_ctx",
        "PassFine_0 should_run",
        "PassBadExitCtx should_run",
        "PassFine_1 should_run",
        "PassFine_0 run_before_pass",
        "PassBadExitCtx run_before_pass",
        "PassFine_1 run_before_pass",
        "PassFine_0 run_after_pass",
        "PassBadExitCtx run_after_pass",
        "PassFine_1 run_after_pass",
        "PassFine_0 exit_pass_ctx",
        "PassBadExitCtx bad exit_pass_ctx!!!",
        "Catching PassBadExitCtx bad exit_pass_ctx",
    ]
    demo_ctx.override_instruments([])
    assert _printed(capsys) == []


def test_exception_in_run_before_pass(relay_mod_and_params, capsys):
    relay_mod, _ = relay_mod_and_params
    demo_ctx = tvm_transform.PassContext(
        instruments=[
            PassFine("PassFine_0"),
            PassBadRunBefore("PassBadRunBefore"),
            PassFine("PassFine_1"),
        ]
    )
    try:
        # All exit_pass_ctx are called.
        with demo_ctx:
            relay_mod = relay.transform.InferType()(relay_mod)
    except ValueError as ex:
        print("Catching", str(ex).split("\n")[-1])
    assert _printed(capsys) == [
        "PassFine_0 enter_pass_ctx",
        "PassBadRunBefore enter_pass_ctx",
        "PassFine_1 enter_pass_ctx",
        "PassFine_0 should_run",
        "PassBadRunBefore should_run",
        "PassFine_1 should_run",
        "PassFine_0 run_before_pass",
        "PassBadRunBefore bad run_before_pass!!!",
        "PassFine_0 exit_pass_ctx",
        "PassBadRunBefore exit_pass_ctx",
        "PassFine_1 exit_pass_ctx",
        "Catching PassBadRunBefore bad run_before_pass",
    ]
    # Pass instrumentation is not disabled: overriding exits the old instruments again.
    demo_ctx.override_instruments([])
    assert _printed(capsys) == [
        "PassFine_0 exit_pass_ctx",
        "PassBadRunBefore exit_pass_ctx",
        "PassFine_1 exit_pass_ctx",
    ]


def test_exception_without_with_statement(relay_mod_and_params, capsys):
    relay_mod, _ = relay_mod_and_params
    cur_pass_ctx = tvm_transform.PassContext.current()
    cur_pass_ctx.override_instruments(
        [
            PassFine("PassFine_0"),
            PassBadRunBefore("PassBadRunBefore"),
            PassFine("PassFine_1"),
        ]
    )
    try:
        assert _printed(capsys) == [
            "PassFine_0 enter_pass_ctx",
            "PassBadRunBefore enter_pass_ctx",
            "PassFine_1 enter_pass_ctx",
        ]
        try:
            # No ``exit_pass_ctx`` got executed.
            relay_mod = relay.transform.InferType()(relay_mod)
        except ValueError as ex:
            print("Catching", str(ex).split("\n")[-1])
        assert _printed(capsys) == [
            "PassFine_0 should_run",
            "PassBadRunBefore should_run",
            "PassFine_1 should_run",
            "PassFine_0 run_before_pass",
            "PassBadRunBefore bad run_before_pass!!!",
            "Catching PassBadRunBefore bad run_before_pass",
        ]
    finally:
        # Clear instruments.
        cur_pass_ctx.override_instruments([])
    assert _printed(capsys) == [
        "PassFine_0 exit_pass_ctx",
        "PassBadRunBefore exit_pass_ctx",
        "PassFine_1 exit_pass_ctx",
    ]
