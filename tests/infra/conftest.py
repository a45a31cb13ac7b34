"""
Fixtures for the pass-infrastructure tests: a registry of small test passes standing
in for xrelay's real ones, and an event log they and the test instruments write to.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import ClassVar

import pytest
from xdsl.context import Context
from xdsl.dialects import test
from xdsl.dialects.builtin import ModuleOp, i32
from xdsl.passes import ModulePass

from xrelay.transforms.infra import PassContext, override_pass_registry
from xrelay.transforms.instrument import PassTimingInstrument

# Every test pass appends its Relay name here when it runs.
LOG: list[str] = []


def _append_op(op: ModuleOp, name: str = "test.op") -> None:
    new = test.TestOp(result_types=[i32])
    if name != "test.op":
        new = test.TestPureOp(result_types=[i32])
    op.body.block.add_op(new)


@dataclass(frozen=True)
class InferTypeStub(ModulePass):
    name = "infer-type"
    relay_name: ClassVar[str] = "InferType"
    opt_level: ClassVar[int] = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        LOG.append("InferType")


@dataclass(frozen=True)
class AppendOp(ModulePass):
    """Appends `count` test.op ops to the module."""

    name = "append-op"
    relay_name: ClassVar[str] = "AppendOp"
    opt_level: ClassVar[int] = 1
    required: ClassVar[tuple[str, ...]] = ()
    count: int = 1

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        LOG.append(f"AppendOp({self.count})")
        for _ in range(self.count):
            _append_op(op)


@dataclass(frozen=True)
class AppendPure(ModulePass):
    """Appends one test.pureop; requires InferType."""

    name = "append-pure"
    relay_name: ClassVar[str] = "AppendPure"
    opt_level: ClassVar[int] = 3
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        LOG.append("AppendPure")
        _append_op(op, "test.pureop")


@dataclass(frozen=True)
class EraseFirst(ModulePass):
    """Erases the first op of the module body."""

    name = "erase-first"
    relay_name: ClassVar[str] = "EraseFirst"
    opt_level: ClassVar[int] = 2

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        LOG.append("EraseFirst")
        first = op.body.block.first_op
        if first is not None:
            first.detach()
            first.erase()


@dataclass(frozen=True)
class Noop(ModulePass):
    """An upstream-style pass without Relay class variables."""

    name = "noop"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        LOG.append("noop")


@dataclass(frozen=True)
class Raising(ModulePass):
    name = "raising"
    relay_name: ClassVar[str] = "Raising"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        LOG.append("Raising")
        raise ValueError("pass failed")


def _stub(cli: str, relay: str, level: int, req: tuple[str, ...] = ()) -> type[ModulePass]:
    """A recording pass standing in for a Relay pass of the build pipeline."""

    def apply(self: ModulePass, ctx: Context, op: ModuleOp) -> None:
        LOG.append(relay)

    cls = type(
        relay + "Stub",
        (ModulePass,),
        {
            "name": cli,
            "relay_name": relay,
            "opt_level": level,
            "required": req,
            "apply": apply,
            "__annotations__": {},
        },
    )
    return dataclass(frozen=True)(cls)


@dataclass(frozen=True)
class FoldScaleAxisStub(ModulePass):
    """Composite, as Relay's FoldScaleAxis."""

    name = "fold-scale-axis"
    relay_name: ClassVar[str] = "FoldScaleAxis"
    opt_level: ClassVar[int] = 0
    sequence: ClassVar[tuple[str, ...]] = (
        "backward-fold-scale-axis",
        "forward-fold-scale-axis",
        "fold-constant",
    )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise AssertionError("a composite pass is run through its sequence")


@dataclass(frozen=True)
class FuseOpsStub(ModulePass):
    name = "fuse-ops"
    relay_name: ClassVar[str] = "FuseOps"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ("InferType",)
    fuse_opt_level: int = -1
    max_depth: int = 256

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        LOG.append(f"FuseOps({self.fuse_opt_level},{self.max_depth})")


PASSES: dict[str, type[ModulePass]] = {
    cls.name: cls
    for cls in (
        InferTypeStub,
        AppendOp,
        AppendPure,
        EraseFirst,
        Noop,
        Raising,
        FoldScaleAxisStub,
        FuseOpsStub,
        _stub("remove-unused-functions", "RemoveUnusedFunctions", 1),
        _stub("simplify-inference", "SimplifyInference", 0, ("InferType",)),
        _stub("fold-constant", "FoldConstant", 2),
        _stub("backward-fold-scale-axis", "BackwardFoldScaleAxis", 3, ("InferType",)),
        _stub("forward-fold-scale-axis", "ForwardFoldScaleAxis", 3, ("InferType",)),
    )
}


@pytest.fixture(autouse=True)
def registry():
    """Install the test passes as the registry and reset the shared state."""
    LOG.clear()
    factories = {name: (lambda cls=cls: cls) for name, cls in PASSES.items()}
    with override_pass_registry(factories):
        yield SimpleNamespace(log=LOG, **{cls.__name__: cls for cls in PASSES.values()})
    # Leave the default context clean for the next test.
    current = PassContext.current()
    current.opt_level = 2
    try:
        current.override_instruments([])
    except Exception:
        pass
    PassTimingInstrument().exit_pass_ctx()


@pytest.fixture
def module() -> ModuleOp:
    """A module holding one test.op."""
    mod = ModuleOp([])
    _append_op(mod)
    return mod
