"""The build pipeline as data: what ``xrelay.build`` runs before lowering, as an xDSL pass pipeline.

``build_pipeline_spec`` is a function from the build's choices (opt level, engines, mixed
precision, default device, ...) and two facts of the module (whether it uses devices, which
engines offload it) to the pipeline's text, in xDSL's syntax (``name{option=value ...}``,
comma-separated)::

    make-static,combine-split-conv2d,drop-softmax-guard,remove-unused-functions,qnn-legalize,
    qnn-canonicalize-ops,simplify-inference,eliminate-common-subexpr,fold-constant,fold-scale-axis,
    canonicalize-ops,alter-op-layout{x86=false},fold-constant,canonicalize-views,sink-reshape,
    partition-for-engines{engines=dnnl},
    fuse-ops{opt-level=3},
    qnn-fuse-pad,qnn-narrow-edges,state-scratch

Only the passes that run are listed: the opt level and the PassContext's disabled and
required passes choose them here, as Relay's ``PassEnabled`` does when the pipeline runs.
``pipeline_for(module, ...)`` reads the two facts from the module; ``run_pipeline`` runs a
pipeline's text (the engines resolved by ``backend.engines.resolve_pass``). ``xrelay.build``
runs exactly ``run_pipeline(module, pipeline_for(module, ...))`` and then lowers
(``lower-to-memory``, ``plan-memory``, the executor).

The same is the pass ``relay-build`` (``PIPELINES``, which ``relay-opt`` registers)::

    relay-opt model.mlir --params w.npz -p 'relay-build{opt-level=3 engines=dnnl,native}'

prints the module ``xrelay.build`` lowers (its options: ``opt-level``, ``engines``,
``mixed-precision``, ``default-device``, ``memory-scope``, ``blocked-simd-width``, ``threads``;
defaults as
``xrelay.build``'s). ``relay-opt ... --print-pipeline`` is not needed to see the expansion:
``--print-ir-after-all`` names each pass as it runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline

from xrelay.backend.engines import ENGINES, offloading, resolve_pass
from xrelay.dialects.relay.device_analysis import PARAM_DEVICES, is_device_copy, is_on_device
from xrelay.transforms import get_all_passes
from xrelay.transforms.infra import (
    BUILD_PIPELINE_PASSES,
    PassContext,
    Sequential,
    as_pass,
    build_alter_op_layout,
    get_pass_class,
    has_pass,
    in_place,
    pass_info_of,
)
from xrelay.transforms.partition_for_engines import PartitionForEnginesPass
from xrelay.transforms.plan_devices import PlanDevicesPass
from xrelay.transforms.state_scratch import StateScratchPass
from xrelay.transforms.to_mixed_precision import ToMixedPrecisionPass

__all__ = ["PIPELINES", "RelayBuildPass", "build_pipeline_spec", "pipeline_for", "run_pipeline", "uses_devices"]


def uses_devices(module: ModuleOp) -> bool:
    """Whether the module annotates devices (``on_device``, ``device_copy``, parameter devices)."""
    return any(
        is_on_device(op) or is_device_copy(op) or PARAM_DEVICES in op.attributes for op in module.walk()
    )


def build_pipeline_spec(
    opt_level: int = 3,
    *,
    offload: Sequence[str] = (),
    mixed_precision: str | None = None,
    default_device: str | None = None,
    memory_scope: str = "",
    blocked_simd_width: int | None = None,
    threads: int | None = None,
    context: PassContext | None = None,
    winograd: bool = False,
) -> str:
    """The pipeline ``xrelay.build`` runs before lowering, as text. ``offload``: the engines
    that partition the module (``partition-for-engines``; the pre-fusion passes run first,
    ``fuse-ops`` after it); ``default_device`` (a device name, ``name(id)``): plan devices
    with that default (after the pre-fusion passes, before ``fuse-ops``); ``context`` (default:
    the current one) gives the disabled and required passes; ``winograd`` (the C target) runs
    ``conv2d-winograd`` before ``fuse-ops``."""
    ctx = (context or PassContext.current()).nested(
        opt_level=opt_level, disabled_pass=list((context or PassContext.current()).disabled_pass),
        required_pass=list((context or PassContext.current()).required_pass),
    )  # fmt: skip
    passes: list[ModulePass] = [get_pass_class("make-static")()]
    # convolutions of a tensor's channel pieces, concatenated (MixConv, grouped 1x1 convolutions
    # written as split/concat), become one grouped convolution, into which the batch norm
    # after the concatenation then folds (before casts come between them)
    passes.append(get_pass_class("combine-split-conv2d")())
    if mixed_precision is not None and not offload:
        passes.append(ToMixedPrecisionPass(mixed_precision))  # the weights' casts fold next
    # torch's attention softmax zeroes rows that are all -inf: that guard (a reduction and a
    # select) goes where no infinity can reach the softmax; before simplify-inference, whose
    # arithmetic for nn.layer_norm the proof does not read (after mixed precision's casts,
    # which it does not read either: float16 overflows, the guard stays)
    passes.append(get_pass_class("drop-softmax-guard")())
    for name in BUILD_PIPELINE_PASSES:
        if name == "FuseOps" or not has_pass(name):
            continue
        passes.append(build_alter_op_layout(blocked_simd_width) if name == "AlterOpLayout" else get_pass_class(name)())
    # exporters' views written as work (zero pads, size-1 transposes, takes of a constant
    # index) become reshapes and slices, which the engines read in place
    passes.append(get_pass_class("canonicalize-views")())
    # a reshape between a product and its requantize moves to the bytes, so the requantize
    # fuses into the product's function and bytes pass between the steps
    passes.append(get_pass_class("sink-reshape")())
    if winograd:
        passes.append(get_pass_class("conv2d-winograd")())
    if default_device is not None:
        passes.append(PlanDevicesPass(default_device, memory_scope))
    if offload:
        passes.append(PartitionForEnginesPass(tuple(offload), mixed_precision or ""))
    passes.append(get_pass_class("FuseOps")(opt_level=opt_level))  # Relay's fuse_opt_level
    passes = [p for p in passes if ctx.pass_enabled(pass_info_of(type(p)))]
    if opt_level >= 1 and "FuseOps" not in ctx.disabled_pass:
        # the int8 arena: zero-point pads join their convolution, 8-bit values rather than
        # wider copies pass between steps
        passes += [get_pass_class("qnn-fuse-pad")(), get_pass_class("qnn-narrow-edges")()]
    passes.append(StateScratchPass(threads))
    return ",".join(_text(p) for p in passes)


def _text(p: ModulePass) -> str:
    """``p`` in pipeline syntax with its options' CLI names (``opt-level``, as typed)."""
    spec = p.pipeline_pass_spec()
    return str(ArgSpec(spec.name, {k.replace("_", "-"): v for k, v in spec.parameters.items()}))


def pipeline_for(
    module: ModuleOp, opt_level: int = 3, engines: Sequence[str] = tuple(ENGINES), **options: Any
) -> str:
    """``build_pipeline_spec(opt_level, **options)`` for ``module``: devices are planned when
    ``default_device`` is given or the module annotates devices (default cpu); otherwise the
    ``engines`` that offload it (``backend.engines.offloading``) partition it."""
    if options.get("default_device") is None and uses_devices(module):
        options["default_device"] = "cpu"
    offload = offloading(tuple(engines), module) if options.get("default_device") is None else ()
    return build_pipeline_spec(opt_level, offload=offload, **options)


def run_pipeline(module: ModuleOp, spec: str, opt_level: int = 3) -> None:
    """Run the pipeline ``spec`` on ``module`` in place, as one Sequential named
    ``relay-build`` in a PassContext at ``opt_level`` (the current one's disabled and required
    passes and instruments; every pass listed is enabled there)."""
    available = get_all_passes()
    passes = []
    for arg in parse_pipeline(spec):
        if arg.name not in available:
            raise ValueError(f"relay-build: unknown pass '{arg.name}' in the pipeline")
        passes.append(as_pass(resolve_pass(available[arg.name]().from_pass_spec(arg))))
    outer = PassContext.current()
    with outer.nested(opt_level=opt_level, disabled_pass=list(outer.disabled_pass),
                      required_pass=list(outer.required_pass)):  # fmt: skip
        with in_place(module):  # the build's own clone: its passes rewrite it, none copies it
            Sequential(passes, 0, "relay-build")(module)


@dataclass(frozen=True)
class RelayBuildPass(ModulePass):
    """``xrelay.build``'s pipeline up to lowering (``pipeline_for`` with these options, then
    ``run_pipeline``): ``relay-build{opt-level=3 engines=dnnl,native}``."""

    name = "relay-build"
    relay_name: ClassVar[str] = "RelayBuild"
    relay_opt_level: ClassVar[int] = 0

    opt_level: int = 3
    engines: tuple[str, ...] = tuple(ENGINES)
    mixed_precision: str | None = None
    default_device: str | None = None
    memory_scope: str = ""
    blocked_simd_width: int | None = None
    threads: int | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        unknown = [e for e in self.engines if e not in ENGINES]
        if unknown or not self.engines:
            raise ValueError(f"relay-build: unknown engine(s) {unknown or list(self.engines)} (known: {', '.join(ENGINES)})")
        spec = pipeline_for(
            op, self.opt_level, self.engines, mixed_precision=self.mixed_precision,
            default_device=self.default_device, memory_scope=self.memory_scope,
            blocked_simd_width=self.blocked_simd_width, threads=self.threads,
        )  # fmt: skip
        run_pipeline(op, spec, self.opt_level)


PIPELINES = {"relay-build": lambda: RelayBuildPass}
"""The pipelines ``relay-opt`` offers beside ``xrelay.transforms.PASSES`` (CLI name -> factory
of the pass class), declared here, where the build is."""
