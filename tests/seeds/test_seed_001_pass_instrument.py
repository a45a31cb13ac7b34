# ruff: noqa: UP032 - the seed's code is kept as written (str.format)
"""Seed 001: "How to use TVM Pass Instrument" -- every code block, with only the imports changed.

The import change (README): ``import xrelay as tvm`` for ``import tvm``, ``xrelay`` for
``tvm`` in ``from tvm... import`` lines. Each test runs one block of the tutorial as written
(on its own ResNet-18, since the tutorial's blocks share one module) and asserts what the
tutorial prints: the timing profile's lines and nesting, the op-count differences per pass,
and every line the exception-handling blocks print, in order.

Timing figures are measured, so the tests assert the line shapes and the arithmetic between
them (self time = total - children; percentages) instead of the seed's microseconds.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

# Seed block: the imports, changed.
import xrelay as tvm
import xrelay.relay as relay
from xrelay.contrib.download import download_testdata  # noqa: F401 - imported by the seed
from xrelay.ir.instrument import (
    PassTimingInstrument,
    pass_instrument,
)
from xrelay.relay.build_module import bind_params_by_name
from xrelay.relay.testing import resnet

_LINE = re.compile(r"^(\t*)(\w+): (\d+)us \[(\d+)us\] \((\d+\.\d\d)%; (\d+\.\d\d)%\)$")


def _profile(text):
    """(depth, name, total us, self us, % of all, % of parent) per rendered line."""
    rows = []
    for line in text.splitlines():
        m = _LINE.match(line)
        assert m, f"not a timing line: {line!r}"
        rows.append((len(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4)), float(m.group(5)), float(m.group(6))))
    return rows


def _check_arithmetic(rows):
    # Each line's self time is its total minus its children's (to rounding), and the
    # top-level lines' shares add up to 100%.
    for i, (depth, _, total, self_us, _, _) in enumerate(rows):
        children = []
        for d, _, t, _, _, _ in rows[i + 1 :]:
            if d <= depth:
                break
            if d == depth + 1:
                children.append(t)
        assert abs(self_us - (total - sum(children))) <= len(children) + 1
    assert sum(r[4] for r in rows if r[0] == 0) == pytest.approx(100.0, abs=0.03)


def _resnet():
    # Seed block: "创建 Relay 示例程序"
    batch_size = 1
    num_of_image_class = 1000
    image_shape = (3, 224, 224)
    output_shape = (batch_size, num_of_image_class)
    relay_mod, relay_params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=image_shape)
    return relay_mod, relay_params, output_shape


def test_block_create_relay_program(capsys):
    batch_size = 1
    num_of_image_class = 1000
    image_shape = (3, 224, 224)
    output_shape = (batch_size, num_of_image_class)
    relay_mod, relay_params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=image_shape)
    print("Printing the IR module...")
    print(relay_mod["main"])

    out = capsys.readouterr().out
    # The seed's output, line for line (its copy lost the indentation): Relay's text of the
    # typed function, /* ty=... */ on every parameter, call and field, padding=[0, 0, 0, 0]
    # on the 1x1 shortcut convolutions, temporaries numbered %0 ... %89.
    expected = (Path(__file__).parent / "expected" / "001_resnet18_main.txt").read_text().splitlines()
    assert [line.strip() for line in out.splitlines()] == ["Printing the IR module...", *expected]
    assert len(relay_mod["main"].params) == 1 + len(relay_params) == 100  # the seed's %data ... %fc1_bias
    assert relay_mod["main"].checked_type.ret_type == relay.TensorType(output_shape, "float32")


def test_block_pass_context_with_instruments(capsys):
    relay_mod, relay_params, _ = _resnet()
    timing_inst = PassTimingInstrument()
    with tvm.transform.PassContext(instruments=[timing_inst]):
        relay_mod = relay.transform.InferType()(relay_mod)
        relay_mod = relay.transform.FoldScaleAxis()(relay_mod)
        # 在退出上下文之前,获取 profile 结果。
        profiles = timing_inst.render()
    print("Printing results of timing profile...")
    print(profiles)

    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Printing results of timing profile..."
    rows = _profile("\n".join(out[1:]).rstrip("\n"))
    # Seed: InferType; FoldScaleAxis > FoldConstant > InferType (at opt_level 2 only
    # FoldConstant of FoldScaleAxis runs; a function pass ends with InferType).
    assert [(d, n) for d, n, *_ in rows] == [
        (0, "InferType"),
        (0, "FoldScaleAxis"),
        (1, "FoldConstant"),
        (2, "InferType"),
    ]
    _check_arithmetic(rows)
    assert timing_inst.render() == ""  # leaving the context cleared the profile


def test_block_current_pass_context_with_instruments(capsys, caplog):
    relay_mod, relay_params, _ = _resnet()
    timing_inst = PassTimingInstrument()
    cur_pass_ctx = tvm.transform.PassContext.current()
    cur_pass_ctx.override_instruments([timing_inst])
    relay_mod = relay.transform.InferType()(relay_mod)
    relay_mod = relay.transform.FoldScaleAxis()(relay_mod)
    profiles = timing_inst.render()
    print("Printing results of timing profile...")
    print(profiles)

    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Printing results of timing profile..."
    rows = _profile("\n".join(out[1:]).rstrip("\n"))
    assert [(d, n) for d, n, *_ in rows] == [
        (0, "InferType"),
        (0, "FoldScaleAxis"),
        (1, "FoldConstant"),
        (2, "InferType"),
    ]
    _check_arithmetic(rows)

    # Seed block: register an empty list to clear the instruments.
    cur_pass_ctx.override_instruments([])
    # profiles = timing_inst.render()
    # Uncomment the call to .render() to see a warning like:
    # Warning: no passes have been profiled, did you enable pass profiling?
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
        assert name_before == info.name, "name_before: {}, info.name: {} doesn't match".format(
            name_before, info.name
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


def test_block_multiple_instruments(capsys):
    relay_mod, relay_params, _ = _resnet()
    timing_inst = PassTimingInstrument()

    call_node_inst = RelayCallNodeDiffer()
    desired_layouts = {
        "nn.conv2d": ["NHWC", "HWIO"],
    }
    pass_seq = tvm.transform.Sequential(
        [
            relay.transform.FoldConstant(),
            relay.transform.ConvertLayout(desired_layouts),
            relay.transform.FoldConstant(),
        ]
    )
    relay_mod["main"] = bind_params_by_name(relay_mod["main"], relay_params)
    # timing_inst 放在 call_node_inst 之后。
    # 因此,``call_node.inst.run_after_pass()`` 的执行时间也被计算在内。
    with tvm.transform.PassContext(opt_level=3, instruments=[call_node_inst, timing_inst]):
        relay_mod = pass_seq(relay_mod)
        profiles = timing_inst.render()
    # 查看 timing-profile 结果
    # print(profiles)

    from pprint import pprint

    pprint(call_node_inst.get_pass_to_op_diff())

    # The seed's output, character for character.
    assert capsys.readouterr().out == (
        "[(1, 'CanonicalizeOps', {'add': 1, 'nn.bias_add': -1}),\n"
        " (1, 'ConvertLayout', {'expand_dims': 1, 'layout_transform': 23}),\n"
        " (1, 'FoldConstant', {'expand_dims': -1, 'layout_transform': -21}),\n"
        " (0, 'sequential', {'add': 1, 'layout_transform': 2, 'nn.bias_add': -1})]\n"
    )
    rows = _profile(profiles)
    assert [(d, n) for d, n, *_ in rows] == [
        (0, "sequential"),
        (1, "FoldConstant"),
        (2, "InferType"),
        (1, "InferType"),  # required by CanonicalizeOps, which ConvertLayout requires
        (1, "CanonicalizeOps"),
        (2, "InferType"),
        (1, "ConvertLayout"),
        (2, "InferType"),
        (1, "FoldConstant"),
        (2, "InferType"),
    ]
    _check_arithmetic(rows)


# Seed block: "异常处理"
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
        raise ValueError("{} bad enter_pass_ctx".format(self._name))


@pass_instrument
class PassBadExitCtx(PassExampleBase):
    def exit_pass_ctx(self):
        print(self._name, "bad exit_pass_ctx!!!")
        raise ValueError("{} bad exit_pass_ctx".format(self._name))


@pytest.fixture(scope="module")
def small_resnet():
    return _resnet()[0]


def _printed(capsys):
    return capsys.readouterr().out.splitlines()


def test_block_bad_enter_ctx(capsys, small_resnet):
    relay_mod = small_resnet
    demo_ctx = tvm.transform.PassContext(
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

    assert _printed(capsys) == [
        "PassFine_0 enter_pass_ctx",
        "PassBadEnterCtx bad enter_pass_ctx!!!",
        "PassFine_0 exit_pass_ctx",
        "Catching ValueError: PassBadEnterCtx bad enter_pass_ctx",
    ]

    demo_ctx.override_instruments([])  # no PassFine_0 exit_pass_ctx printed....etc
    assert _printed(capsys) == []


def test_block_bad_exit_ctx(capsys, small_resnet):
    relay_mod = small_resnet
    demo_ctx = tvm.transform.PassContext(
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
        "Catching ValueError: PassBadExitCtx bad exit_pass_ctx",
    ]


@pass_instrument
class PassBadRunBefore(PassExampleBase):
    def run_before_pass(self, mod, pass_info):
        print(self._name, "bad run_before_pass!!!")
        raise ValueError("{} bad run_before_pass".format(self._name))


def test_block_bad_run_before(capsys, small_resnet):
    relay_mod = small_resnet
    demo_ctx = tvm.transform.PassContext(
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
        "Catching ValueError: PassBadRunBefore bad run_before_pass",
    ]

    # Seed block: instrumentation is not disabled, so override_instruments exits them again.
    demo_ctx.override_instruments([])
    assert _printed(capsys) == [
        "PassFine_0 exit_pass_ctx",
        "PassBadRunBefore exit_pass_ctx",
        "PassFine_1 exit_pass_ctx",
    ]


def test_block_current_context_without_with(capsys, small_resnet):
    relay_mod = small_resnet
    cur_pass_ctx = tvm.transform.PassContext.current()
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
            "Catching ValueError: PassBadRunBefore bad run_before_pass",
        ]
    finally:
        # Seed block: clear the instruments.
        cur_pass_ctx.override_instruments([])
    assert _printed(capsys) == [
        "PassFine_0 exit_pass_ctx",
        "PassBadRunBefore exit_pass_ctx",
        "PassFine_1 exit_pass_ctx",
    ]
