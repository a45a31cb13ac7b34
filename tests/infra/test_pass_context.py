"""PassContext: scoping, configuration, PassInfo, opt-level gating, pass lookup."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ModuleOp

from xrelay.transforms.infra import (
    PassContext,
    PassInfo,
    PassLookupError,
    Sequential,
    as_pass,
    get_pass,
    get_pass_class,
    has_pass,
    in_place,
    module_pass,
    pass_info_of,
    register_config,
)
from xrelay.transforms.instrument import PassInstrument


def test_default_context_and_nesting():
    default = PassContext.current()
    assert default.opt_level == 2
    assert PassContext.current() is default
    with PassContext(opt_level=3) as outer:
        assert PassContext.current() is outer
        with PassContext(opt_level=0) as inner:
            assert PassContext.current() is inner
        assert PassContext.current() is outer
    assert PassContext.current() is default


def test_unknown_config_key_message():
    with pytest.raises(AttributeError) as info:
        PassContext(config={"relay.FuseOps.no_such_option": 1})
    message = str(info.value)
    assert message.startswith(
        "Invalid config option 'relay.FuseOps.no_such_option' candidates are: "
    )
    assert "relay.FuseOps.max_depth" in message
    assert "testing.immutable_module" in message


def test_config_values_and_defaults():
    ctx = PassContext(config={"relay.FuseOps.max_depth": 10, "relay.FuseOps.link_params": 1})
    assert ctx.config == {"relay.FuseOps.max_depth": 10, "relay.FuseOps.link_params": True}
    assert ctx.get_config("relay.FuseOps.max_depth") == 10
    assert PassContext().get_config("relay.FuseOps.max_depth") == 256
    assert PassContext().get_config("relay.FuseOps.link_params") is False
    assert PassContext().get_config("relay.FuseOps.max_depth", 7) == 7
    with pytest.raises(AttributeError, match="Invalid config option 'nope'"):
        ctx.get_config("nope")
    with pytest.raises(TypeError, match="expects a value of type int"):
        PassContext(config={"relay.FuseOps.max_depth": "deep"})
    with pytest.raises(TypeError):
        ctx.config["relay.FuseOps.max_depth"] = 3  # read-only view


def test_register_config_adds_a_key():
    register_config("testing.infra_test_option", str, "x")
    try:
        ctx = PassContext(config={"testing.infra_test_option": "y"})
        assert ctx.get_config("testing.infra_test_option") == "y"
        assert PassContext.list_configs()["testing.infra_test_option"] == {
            "type": "runtime.String",
            "default": "x",
        }
    finally:
        from xrelay.transforms import infra

        del infra._config_registry["testing.infra_test_option"]


def test_list_configs_has_relay_keys():
    configs = PassContext.list_configs()
    assert configs["relay.FuseOps.max_depth"] == {"type": "IntImm", "default": 256}
    assert configs["relay.backend.use_auto_scheduler"]["type"] == "IntImm"  # TVM's name for Bool


def test_bad_arguments():
    with pytest.raises(TypeError, match="opt_level"):
        PassContext(opt_level="3")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="list of pass names"):
        PassContext(disabled_pass="FuseOps")  # type: ignore[arg-type]


def test_pass_info_from_class_vars(registry):
    assert pass_info_of(registry.FuseOpsStub) == PassInfo(0, "FuseOps", ("InferType",))
    assert pass_info_of(registry.AppendPure) == PassInfo(3, "AppendPure", ("InferType",))
    # Upstream passes without the class variables.
    assert pass_info_of(registry.Noop) == PassInfo(0, "noop", ())
    info = as_pass(registry.AppendOp()).info
    assert (info.opt_level, info.name, info.required) == (1, "AppendOp", ())
    assert "pass name: AppendOp, opt_level: 1" in str(info)
    seq = Sequential([], opt_level=3, name="S", required=["InferType"])
    assert seq.info == PassInfo(3, "S", ("InferType",))


def test_lookup_by_cli_and_relay_name(registry):
    assert get_pass_class("fuse-ops") is registry.FuseOpsStub
    assert get_pass_class("FuseOps") is registry.FuseOpsStub
    assert get_pass_class("noop") is registry.Noop
    assert has_pass("AppendOp") and not has_pass("Nope")
    with pytest.raises(PassLookupError) as info:
        get_pass("Nope")
    message = str(info.value)
    assert message.startswith("unknown pass 'Nope'; known passes: ")
    assert "fuse-ops" in message and "FuseOps" in message


def test_lookup_reports_broken_pass_modules(registry):
    from xrelay.transforms.infra import override_pass_registry

    def broken():
        raise ImportError("no module named foo")

    with override_pass_registry({"broken": broken, "noop": lambda: registry.Noop}):
        assert get_pass_class("noop") is registry.Noop
        with pytest.raises(PassLookupError, match=r"failed to load: broken \(ImportError"):
            get_pass_class("Missing")


def test_direct_call_ignores_opt_level(module: ModuleOp, registry):
    with PassContext(opt_level=0):
        result = as_pass(registry.AppendPure())(module)
    assert result is not module  # a pass leaves its input and returns a new module
    # A direct call does not run required passes (as in Relay).
    assert registry.log == ["AppendPure"]
    assert [op.name for op in result.ops] == ["test.op", "test.pureop"]
    assert [op.name for op in module.ops] == ["test.op"]


@pytest.mark.parametrize(
    ("opt_level", "expected"),
    [
        (0, ["InferType"]),
        (1, ["InferType", "AppendOp(1)"]),
        (2, ["InferType", "AppendOp(1)", "EraseFirst"]),
        (3, ["InferType", "AppendOp(1)", "EraseFirst", "InferType", "AppendPure"]),
    ],
)
def test_sequential_opt_level_gating(module: ModuleOp, registry, opt_level, expected):
    seq = Sequential(
        [
            registry.InferTypeStub(),
            registry.AppendOp(),
            registry.EraseFirst(),
            registry.AppendPure(),
        ]
    )
    with PassContext(opt_level=opt_level):
        seq(module)
    assert registry.log == expected


def test_disabled_and_required_passes(module: ModuleOp, registry):
    seq = Sequential([registry.AppendOp(), registry.EraseFirst(), registry.AppendPure()])
    # Names may be Relay or CLI names; required beats opt_level, disabled beats both.
    with PassContext(opt_level=1, required_pass=["append-pure"], disabled_pass=["AppendOp"]):
        seq(module)
    assert registry.log == ["InferType", "AppendPure"]
    registry.log.clear()
    with PassContext(opt_level=3, required_pass=["AppendOp"], disabled_pass=["append-op"]):
        seq(module)
    assert registry.log == ["EraseFirst", "InferType", "AppendPure"]


def test_required_pass_runs_even_if_disabled(module: ModuleOp, registry):
    # Relay resolves `required` without checking PassEnabled.
    with PassContext(opt_level=3, disabled_pass=["InferType"]):
        Sequential([registry.AppendPure()])(module)
    assert registry.log == ["InferType", "AppendPure"]


def test_nested_sequential_is_gated_by_its_own_opt_level(module: ModuleOp, registry):
    inner = Sequential([registry.AppendOp()], opt_level=3, name="inner")
    outer = Sequential([inner, registry.Noop()])
    with PassContext(opt_level=2):
        outer(module)
    assert registry.log == ["noop"]
    registry.log.clear()
    with PassContext(opt_level=3):
        outer(module)
    assert registry.log == ["AppendOp(1)", "noop"]


def test_composite_pass_runs_its_sequence(module: ModuleOp, registry):
    with PassContext(opt_level=3):
        Sequential([registry.FoldScaleAxisStub()])(module)
    assert registry.log == [
        "InferType",
        "BackwardFoldScaleAxis",
        "InferType",
        "ForwardFoldScaleAxis",
        "FoldConstant",
    ]
    # With an instrument watching, each function pass ends with an InferType, as in Relay.
    registry.log.clear()
    with PassContext(opt_level=3, instruments=[PassInstrument()]):
        Sequential([registry.FoldScaleAxisStub()])(module)
    assert registry.log == [
        "InferType",
        "BackwardFoldScaleAxis",
        "InferType",
        "InferType",
        "ForwardFoldScaleAxis",
        "InferType",
        "FoldConstant",
        "InferType",
    ]
    composite = as_pass(registry.FoldScaleAxisStub())
    assert isinstance(composite, Sequential)
    assert composite.info.name == "FoldScaleAxis"


def test_immutable_module_config_leaves_input_untouched(module: ModuleOp, registry):
    before = str(module)
    with PassContext(config={"testing.immutable_module": True}):
        result = as_pass(registry.AppendOp())(module)
    assert str(module) == before
    assert result is not module
    assert [op.name for op in result.ops] == ["test.op", "test.op"]


def test_irmodule_like_objects(registry, module: ModuleOp):
    class Holder:
        def __init__(self, m):
            self.module = m

    holder = Holder(module)
    holder.names = {"a": 1}
    new = as_pass(registry.AppendOp(count=2))(holder)
    assert isinstance(new, Holder) and new is not holder
    assert len(list(new.module.ops)) == 3 and len(list(module.ops)) == 1
    new.names["b"] = 2  # the copy's dicts are its own
    assert holder.names == {"a": 1}
    with in_place(holder):
        assert as_pass(registry.AppendOp(count=2))(holder) is holder
    assert len(list(module.ops)) == 3
    with pytest.raises(TypeError, match="expected an xDSL ModuleOp"):
        as_pass(registry.AppendOp())(object())


def test_module_pass_decorator(module: ModuleOp):
    @module_pass(opt_level=2, name="Counter", required=["InferType"])
    def counter(mod, ctx):
        assert isinstance(ctx, PassContext)
        mod.body.block.first_op.detach()

    assert counter.info == PassInfo(2, "Counter", ("InferType",))
    assert counter(module) is module
    assert list(module.ops) == []
    with pytest.raises(ValueError, match="opt_level"):
        module_pass(lambda m, c: None)


def test_sequential_rejects_non_passes(registry):
    with pytest.raises(TypeError, match="call it first"):
        Sequential([registry.AppendOp])
    with pytest.raises(TypeError, match="list of passes"):
        Sequential(registry.AppendOp())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expected a Pass"):
        Sequential(["AppendOp"])  # type: ignore[list-item]


def test_upstream_xdsl_pass_runs_through_the_infra():
    from xdsl.dialects import test
    from xdsl.dialects.builtin import i32
    from xdsl.transforms.dead_code_elimination import DeadCodeElimination

    from xrelay.transforms.instrument import OpCountDiff

    mod = ModuleOp([test.TestPureOp(result_types=[i32]), test.TestOp(result_types=[i32])])
    dce = as_pass(DeadCodeElimination())
    assert dce.info == PassInfo(0, "dce", ())
    diff = OpCountDiff()
    with PassContext(instruments=[diff]):
        mod = dce(mod)
    # The unused pure op is gone, the effectful test.op stays.
    assert [op.name for op in mod.ops] == ["test.op"]
    assert diff.diffs == [(0, "dce", {"test.pureop": -1})]
