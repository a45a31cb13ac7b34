"""xrelay.relay.transform (mirror of tvm.relay.transform) and build_pipeline."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ModuleOp

from xrelay.instrument import PassTimingInstrument
from xrelay.relay import transform
from xrelay.transforms.infra import (
    BUILD_PIPELINE_PASSES,
    ModulePassAdapter,
    PassContext,
    PassInfo,
    Sequential,
    build_pipeline,
    in_place,
)


def test_passes_by_relay_name(registry):
    fuse = transform.FuseOps()
    assert isinstance(fuse, ModulePassAdapter)
    assert fuse.info == PassInfo(0, "FuseOps", ("InferType",))
    assert fuse.module_pass == registry.FuseOpsStub()
    assert transform.FuseOps.__name__ == "FuseOps"
    assert "FuseOps" in dir(transform) and "PassContext" in dir(transform)


def test_arguments_map_onto_fields(registry, module: ModuleOp):
    assert transform.FuseOps(fuse_opt_level=1).module_pass == registry.FuseOpsStub(1)
    assert transform.FuseOps(2, max_depth=8).module_pass == registry.FuseOpsStub(2, 8)
    module = transform.AppendOp(count=3)(module)
    assert registry.log == ["AppendOp(3)"]
    assert len(list(module.ops)) == 4


def test_argument_aliases(registry):
    transform.register_argument_aliases("FuseOps", {"depth": "max_depth"})
    try:
        assert transform.FuseOps(depth=4).module_pass.max_depth == 4
    finally:
        del transform._ARGUMENT_ALIASES["FuseOps"]["depth"]


def test_bad_arguments(registry):
    with pytest.raises(TypeError, match=r"FuseOps\(\) got an unexpected keyword argument 'nope'"):
        transform.FuseOps(nope=1)
    with pytest.raises(TypeError, match="at most 2 positional"):
        transform.FuseOps(1, 2, 3)
    with pytest.raises(TypeError, match="multiple values"):
        transform.FuseOps(1, fuse_opt_level=2)


def test_unknown_and_cli_names(registry):
    with pytest.raises(AttributeError, match="no pass 'NoSuchPass'.*known passes: .*FuseOps"):
        transform.NoSuchPass  # noqa: B018
    assert not hasattr(transform, "NoSuchPass")
    # Only Relay names are attributes; "noop" has no Relay name, so it is its own.
    assert transform.noop().info.name == "noop"


def test_names_resolved_lazily(registry, module: ModuleOp):
    from dataclasses import dataclass
    from typing import ClassVar

    from xdsl.passes import ModulePass

    from xrelay.transforms.infra import override_pass_registry

    @dataclass(frozen=True)
    class Late(ModulePass):
        name = "late"
        relay_name: ClassVar[str] = "LatePass"

        def apply(self, ctx, op):
            registry.log.append("late")

    assert not hasattr(transform, "LatePass")
    with override_pass_registry({"late": lambda: Late}):
        transform.LatePass()(module)
    assert registry.log == ["late"]


def test_composite_factory_is_a_sequential(registry):
    fsa = transform.FoldScaleAxis()
    assert isinstance(fsa, Sequential)
    assert [p.info.name for p in fsa.passes] == [
        "BackwardFoldScaleAxis",
        "ForwardFoldScaleAxis",
        "FoldConstant",
    ]


def test_tutorial_timing_shape(registry, module: ModuleOp):
    # docs/relay-semantics.md §6.1: FoldScaleAxis at opt_level 2 runs only FoldConstant inside
    # (and FoldConstant, a function pass, its closing InferType).
    timing = PassTimingInstrument()
    with PassContext(instruments=[timing]):
        module = transform.InferType()(module)
        module = transform.FoldScaleAxis()(module)
        names = [line.split(":")[0] for line in timing.render().splitlines()]
    assert names == ["InferType", "FoldScaleAxis", "\tFoldConstant", "\t\tInferType"]


def test_build_pipeline_order_and_gating(registry, module: ModuleOp):
    # EliminateCommonSubexpr and CanonicalizeOps are absent from the test registry.
    assert "EliminateCommonSubexpr" in BUILD_PIPELINE_PASSES
    pipeline = build_pipeline()
    assert [p.info.name for p in pipeline.passes] == [
        "RemoveUnusedFunctions",
        "SimplifyInference",
        "FoldConstant",
        "FoldScaleAxis",
        "FoldConstant",
        "FuseOps",
    ]
    with PassContext(opt_level=3), in_place(module):
        assert pipeline(module) is module  # a driver owning its module runs passes in place
    # No instruments: the function passes' closing InferType is skipped (it would change nothing).
    assert registry.log == [
        "RemoveUnusedFunctions",
        "InferType",
        "SimplifyInference",
        "FoldConstant",
        "InferType",
        "BackwardFoldScaleAxis",
        "InferType",
        "ForwardFoldScaleAxis",
        "FoldConstant",
        "FoldConstant",
        "InferType",
        "FuseOps(-1,256)",
    ]


def test_build_pipeline_fixed_opt_level(registry, module: ModuleOp):
    with PassContext(opt_level=3, disabled_pass=["FuseOps"]) as ctx:
        build_pipeline(opt_level=0)(module)
        assert ctx.opt_level == 3
    assert registry.log == ["InferType", "SimplifyInference"]
    with pytest.raises(TypeError):
        build_pipeline(opt_level="3")  # type: ignore[arg-type]
