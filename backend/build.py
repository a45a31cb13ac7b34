"""``xrelay.build``: optimise, fuse, lower, plan, and bind a module to the arena executor.

    >>> m = xrelay.build(mod, params, opt_level=3, plan="greedy-by-size")  # doctest: +SKIP

The stages, each a pass you can also run alone:

1. ``params`` (a dict of arrays) are bound to ``@main``'s parameters of those names as named
   constants (``bind_params_by_name``), so folding sees the real weights;
2. the build pipeline (``backend.pipeline.pipeline_for``: its text is data, and the pass
   ``relay-build{...}`` runs the same from ``relay-opt``): ``make-static`` (every shape static,
   or the ``BuildError`` names the op whose shape is known only at run time), Relay's
   pre-fusion passes at ``opt_level``, the engines' partitioning or device planning,
   ``fuse-ops``, the int8 arena's ``qnn-fuse-pad``/``qnn-narrow-edges``, ``state-scratch``;
3. ``lower-to-memory`` makes storage explicit (inputs and outputs in the arena by default,
   a planned workspace for every im2col convolution); ``place-concat-inputs`` has the steps
   producing a concatenation's inputs write its contiguous slices (no concatenation step);
   ``alias-slices`` makes a step that only selects a contiguous byte range of its input a
   tensor in the input's storage (no slice step);
   ``choose-scratch`` then runs each step
   whose engine offers several ways the one that keeps the plan's peak down at the least
   time (the PassContext's ``relay.ChooseScratch.priority`` and ``.budget``);
4. ``plan-memory`` places every storage with ``plan`` (any of ``planners.ALGORITHMS``) into
   ``pools`` (``None``: one unbounded pool; or ``Pool`` objects; or a ``"name:size,..."`` string);
5. the planned program becomes a ``GraphModule`` (``runtime.graph_executor``).

**Devices.** With a dict of targets (``{"cpu": "llvm", "mcu": "llvm"}``, as ``relay.build``
takes for heterogeneous execution), or a module that uses ``on_device``/``device_copy``,
``plan-devices`` runs after the pre-fusion passes and before ``fuse-ops``, with the
PassContext's ``relay.fallback_device_type`` as the default device (else cpu if a target is
for cpu, else the first); each (device, memory scope) is then planned into its own pools and
every ``device_copy`` is a step that copies between arenas. A device that cannot run here
(``cuda``, ...) is a ``BuildError`` naming it.

The module given is not modified. Errors of every stage keep their own exception type
(``RelayTypeError``, ``PlanError``, ...); ``BuildError`` is raised for bad arguments.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType

from xrelay.backend.c import annotate_scratch, emit_program
from xrelay.backend.engines import ENGINES
from xrelay.backend.pipeline import pipeline_for, run_pipeline
from xrelay.backend.target import TargetError, native_float_types, resolve_build_target
from xrelay.dialects import make_context, module_op
from xrelay.dialects.relay.devices import (
    DeviceError,
    VirtualDeviceAttr,
    as_virtual_device,
    device_kind,
)
from xrelay.dialects.relay.dtypes import shape_of
from xrelay.dialects.relay.loop import LoopOp
from xrelay.dialects.relay.strings import STRING_OPS, is_string_tensor
from xrelay.error import TVMError
from xrelay.runtime.c.module import CModule, host_float_lanes
from xrelay.runtime.executor import deprecated_use_numba
from xrelay.runtime.graph_executor import GraphModule
from xrelay.transforms.alias_slices import AliasSlicesPass
from xrelay.transforms.bind_params import bind_params_by_name
from xrelay.transforms.choose_scratch import ChooseScratchPass
from xrelay.transforms.infra import PassContext, pass_info_of
from xrelay.transforms.lower_to_memory import LowerToMemoryPass
from xrelay.transforms.make_static import MakeStaticError
from xrelay.transforms.place_concat_inputs import PlaceConcatInputsPass
from xrelay.transforms.plan_memory import (
    DEFAULT_POOL,
    DEFAULT_POOL_ALIGNMENT,
    module_pools,
    parse_pools,
    plan_module,
)
from xrelay.transforms.planners import ALGORITHMS, Pool
from xrelay.transforms.to_mixed_precision import ToMixedPrecisionError

__all__ = ["BuildError", "MixedPrecisionWarning", "build", "build_c", "build_program"]


class BuildError(ValueError, TVMError):
    """``build`` got arguments it cannot use."""


def _pools(pools: Sequence[Pool] | str | None) -> list[Pool] | None:

    if pools is None:
        return None
    if isinstance(pools, str):
        return parse_pools(pools)
    pools = list(pools)
    if not all(isinstance(p, Pool) for p in pools):
        raise BuildError("pools must be planners.Pool objects or a 'name:size,...' string")
    return pools


def _refuse_interpreter_only(module: ModuleOp) -> None:
    """A ``BuildError`` naming the first op only the reference interpreter runs: a
    ``relay.loop`` (its scan outputs' sizes are known after it ran) or an op on tensors of
    strings (a string has no fixed size; the arena plans fixed-size buffers)."""
    for op in module.walk():
        if isinstance(op, LoopOp):
            raise BuildError(
                "build: the module holds a 'relay.loop' (ONNX's Loop with a run-time trip count or "
                "condition); the arena runtime runs straight-line programs: run it with xrelay.run "
                "(the reference interpreter), or import with unroll_loops=True and bind the inputs it names"
            )
        if isinstance(op, STRING_OPS) or any(is_string_tensor(r.type) for r in op.results):
            raise BuildError(
                f"build: the module holds '{op.name}' on tensors of strings; a string has no fixed "
                "size and the arena plans fixed-size buffers: run it with xrelay.run (the reference "
                "interpreter)"
            )
        if isinstance(op, func.FuncOp) and any(is_string_tensor(t) for t in op.function_type.inputs.data):
            raise BuildError(
                f"build: @{op.sym_name.data} takes a tensor of strings; a string has no fixed size "
                "and the arena plans fixed-size buffers: run it with xrelay.run (the reference interpreter)"
            )


def _refuse_dynamic_inputs(module: ModuleOp) -> None:
    """A ``BuildError`` naming the first input of ``@main`` (its weights bound) with a
    dynamic dimension: an exported model's batch or sequence axis (ONNX ``dim_param``,
    torch's ``dynamic_axes``) imports as ``?``, and the arena plans fixed sizes."""
    for op in module.ops:
        if not (isinstance(op, func.FuncOp) and op.sym_name.data == "main" and op.body.blocks):
            continue
        for arg in op.body.blocks[0].args:
            if isinstance(arg.type, TensorType) and None in shape_of(arg.type):
                name = arg.name_hint or f"#{arg.index}"
                example = tuple(1 if d is None else d for d in shape_of(arg.type))
                raise BuildError(
                    f"build: input '{name}' of @main has the dynamic shape {arg.type} (each '?' is "
                    "known only at run time) and the arena plans fixed sizes: give its shape at "
                    f"import, e.g. from_onnx(model, shape={{'{name}': {example}}}) or relay-import "
                    f"--shape {name}={','.join(map(str, example))} (each '?' the size you will run), "
                    "or run the module with xrelay.run (the reference interpreter)"
                )


def build_program(
    mod: Any,
    params: Mapping[str, Any] | None = None,
    opt_level: int = 3,
    plan: str = "greedy-by-size",
    pools: Sequence[Pool] | str | None = None,
    *,
    inputs_in_arena: bool = True,
    outputs_in_arena: bool = True,
    time_limit: float | None = None,
    default_device: Any = None,
    pool_algorithms: Mapping[str, str] | None = None,
    before_lowering: Callable[[ModuleOp], Any] | None = None,
    backends: Sequence[str] = ("native",),
    mixed_precision: str | None = None,
    threads: int | None = None,
    blocked_simd_width: int | None = None,
    winograd: bool = False,
) -> tuple[ModuleOp, Any]:
    """Stages 1-4 of ``build``: the planned program and ``(buffers, pools, plan)``.

    ``before_lowering(module)`` sees the fused module before ``lower-to-memory`` (the C target
    states each function's scratch there).

    ``default_device`` (a device, name or ``VirtualDevice``) plans devices with that default;
    so does a module with device annotations (default cpu). ``pool_algorithms`` maps a pool
    (memory space) to the algorithm planning it. With ``"dnnl"`` in ``backends`` (and oneDNN
    loadable) the module is partitioned for oneDNN before fusion
    (``backend.dnnl.partition``). ``mixed_precision`` (``"float16"``, ``"bfloat16"``) runs
    ``to-mixed-precision`` after the parameters are bound, so the weights' casts fold into
    constants of that type; when the module goes to oneDNN, it runs after the pre-fusion
    passes instead (batch norms folded into the float32 weights first) and bfloat16
    convolutions and dense run as oneDNN's bf16 primitives. ``blocked_simd_width`` gives
    float convolutions TVM's x86 blocked layouts at that width (``alter-op-layout``);
    ``winograd`` runs ``conv2d-winograd`` before fusion (the C target's Winograd)."""

    if plan not in ALGORITHMS:
        raise BuildError(f"unknown planning algorithm '{plan}' (known: {', '.join(ALGORITHMS)})")
    if not isinstance(opt_level, int) or isinstance(opt_level, bool) or not 0 <= opt_level <= 4:
        raise BuildError(f"opt_level must be an integer from 0 to 4, got {opt_level!r}")
    module = module_op(mod).clone()
    _refuse_interpreter_only(module)
    if params:
        arrays = {
            k: (v.numpy() if hasattr(v, "numpy") else np.asarray(v)) for k, v in params.items()
        }
        bind_params_by_name(module, arrays)
    _refuse_dynamic_inputs(module)
    device, scope = _device_option(default_device)
    spec = pipeline_for(
        module, opt_level, backends, mixed_precision=mixed_precision, default_device=device,
        memory_scope=scope, blocked_simd_width=blocked_simd_width, winograd=winograd,
        threads=threads,
    )  # fmt: skip
    try:
        run_pipeline(module, spec, opt_level)
    except (MakeStaticError, ToMixedPrecisionError) as e:  # xrelay.build's error type for these
        raise BuildError(str(e)) from None
    optimised = module
    _check_devices_runnable(optimised)
    if before_lowering is not None:
        before_lowering(optimised)
    LowerToMemoryPass(inputs_in_arena=inputs_in_arena, outputs_in_arena=outputs_in_arena).apply(
        make_context(), optimised
    )
    if PassContext.current().pass_enabled(pass_info_of(PlaceConcatInputsPass)):
        PlaceConcatInputsPass().apply(make_context(), optimised)  # producers write the slices
    if PassContext.current().pass_enabled(pass_info_of(AliasSlicesPass)):
        AliasSlicesPass().apply(make_context(), optimised)  # slices read their source's bytes
    ChooseScratchPass().apply(make_context(), optimised)  # the PassContext's priority and budget
    pool_list = _pools(pools)
    if pool_list is None:
        pool_list = module_pools(optimised) or [Pool(DEFAULT_POOL, None, DEFAULT_POOL_ALIGNMENT)]
    info = plan_module(optimised, plan, pool_list, time_limit, algorithms=pool_algorithms)
    return optimised, info


def build_c(
    mod: Any,
    params: Mapping[str, Any] | None = None,
    opt_level: int = 3,
    plan: str = "greedy-by-size",
    pools: Sequence[Pool] | str | None = None,
    *,
    name: str = "model",
    constants: str = "arrays",
    sections: Mapping[str, str] | None = None,
    time_limit: float | None = None,
    debug: bool = False,
    channel_block: int | None = None,
) -> CModule:
    """Build ``mod`` for the C target (``xrelay.backend.c``): the build pipeline, each fused
    function's C scratch stated before ``lower-to-memory`` (so every step's planned workspace
    is what its C needs), inputs and outputs outside the arena (the caller's buffers), the
    plan, and the emitted program in a ``runtime.c.module.CModule``. ``constants`` is
    ``"arrays"`` or ``"blob"``; ``sections`` names each pool's linker section; ``debug``
    records every step's outputs (``debug_get_output``), as for ``build``. ``channel_block``
    is the lanes float convolutions' channels are blocked by (``NCHW{k}c``, multiples of 8
    where the channels allow); None takes the host compiler's vector (``host_float_lanes``: 16
    with AVX-512, else 8), so the C compiled here runs its widest tiles."""

    outer = PassContext.current()
    # qnn ops reach C as their integer relay form, at every optimisation level
    required = [*outer.required_pass, "QnnCanonicalize"]
    with outer.nested(disabled_pass=list(outer.disabled_pass), required_pass=required):
        # float convolutions in channel blocks (AlterOpLayout, opt_level 3), which the C
        # computes as register tiles of 8 or 16 lanes
        program, info = build_program(
            mod, params, opt_level, plan, pools, inputs_in_arena=False, outputs_in_arena=False,
            time_limit=time_limit, before_lowering=annotate_scratch,
            blocked_simd_width=channel_block or host_float_lanes(),
            winograd=True,
        )  # fmt: skip
    c_program = emit_program(program, name, constants, dict(sections or {}))
    # What runs here is compiled with the weights in a blob (the same functions; a compiler
    # takes minutes over millions of float literals, and the executor passes weights by pointer).
    runtime = c_program if constants == "blob" else emit_program(program, name, "blob", dict(sections or {}))
    return CModule(c_program, info, program, debug=debug, runtime_program=runtime)


def _backends(backends: Sequence[str] | str | None) -> tuple[str, ...]:
    if backends is None:
        return tuple(ENGINES)
    if isinstance(backends, str):
        backends = (backends,)
    out = tuple(backends)
    unknown = [b for b in out if b not in ENGINES]
    if unknown or not out:
        raise BuildError(
            f"unknown backend(s) {unknown or out!r} (known: {', '.join(ENGINES)})"
        )
    return out


def _device_option(default_device: Any) -> tuple[str | None, str]:
    """``default_device`` as plan-devices' options: the device (``name(id)``) and its memory
    scope, or ``(None, "")``."""
    if default_device is None:
        return None, ""
    try:
        vd = as_virtual_device(default_device)
    except DeviceError as e:
        raise BuildError(f"build: {e}") from None
    return vd.device_type + (f"({vd.virtual_device_id})" if vd.virtual_device_id >= 0 else ""), vd.scope.data


def _check_devices_runnable(module: ModuleOp) -> None:
    """Every device the planned program names can run here (else a ``BuildError``)."""
    for op in module.walk():
        values = [*op.attributes.values(), *op.properties.values()]
        values += [v for a in values if hasattr(a, "data") and isinstance(a.data, tuple) for v in a.data]
        for vd in values:
            if isinstance(vd, VirtualDeviceAttr) and vd.device_type:
                try:
                    runnable = device_kind(vd.device_type).runnable
                except DeviceError as e:
                    raise BuildError(f"build: {e}") from None
                if not runnable:
                    raise BuildError(
                        f"build: the program runs on {vd}, but xrelay has no way to run "
                        f"'{vd.device_type}' here (it runs on the host CPU and on devices registered "
                        "with xrelay.register_device)"
                    )


def device_targets(target: Any) -> tuple[Any, list[Any]]:
    """``(default device, devices)`` of a dict of targets by device, else ``(None, [])`` (also
    for a dict of just the host CPU).

    The default is the PassContext's ``relay.fallback_device_type``, else cpu if a target is
    for it, else the first device.
    """

    if not isinstance(target, Mapping) or "kind" in target:
        return None, []
    try:
        devices = [as_virtual_device(getattr(k, "name", k) if not isinstance(k, str | int) else k) for k in target]
        fallback = PassContext.current().config.get("relay.fallback_device_type")
        if fallback is not None:
            return as_virtual_device(int(fallback) if not isinstance(fallback, str) else fallback), devices
    except DeviceError as e:
        raise BuildError(f"build: target {dict(target)!r}: {e}") from None
    cpu = [d for d in devices if d.device_type == "cpu"]
    if len(devices) == 1 and cpu:
        return None, []  # just the host: plan devices only if the module asks for them
    return (cpu or devices)[0], devices


class MixedPrecisionWarning(UserWarning):
    """``mixed_precision`` asks for a 16-bit type the host CPU has no arithmetic for."""


def _warn_slow_mixed_precision(mixed_precision: str | None) -> None:
    """Warn where ``mixed_precision`` will make the model slower, not faster: the host CPU
    has no arithmetic in that type, so every kernel converts each value (bfloat16 ran 3.2-22x
    onnxruntime's float32 time on an AVX2 Zen 3: ``benchmarks/runtime.py``; float16 runs numpy's kernels)."""
    if mixed_precision not in ("bfloat16", "float16"):
        return
    native = native_float_types()
    if native is None or mixed_precision in native:
        return
    flags = "AVX512_BF16 or AMX-BF16" if mixed_precision == "bfloat16" else "AVX512_FP16 or AMX-FP16"
    warnings.warn(
        f"mixed_precision={mixed_precision!r}: this CPU has no {mixed_precision} arithmetic (no {flags}), "
        "so its kernels convert every value and the model runs slower than in float32 (it still "
        "halves the weights' and activations' bytes)",
        MixedPrecisionWarning,
        stacklevel=3,
    )


def build(
    mod: Any,
    params: Mapping[str, Any] | None = None,
    opt_level: int = 3,
    plan: str = "greedy-by-size",
    pools: Sequence[Pool] | str | None = None,
    *,
    target: Any = None,
    debug: bool = False,
    use_c_kernels: bool = True,
    inputs_in_arena: bool = True,
    outputs_in_arena: bool = True,
    time_limit: float | None = None,
    threads: int | None = None,
    pool_algorithms: Mapping[str, str] | None = None,
    default_device: Any = None,
    backends: Sequence[str] | str | None = None,
    partition: bool = True,
    mixed_precision: str | None = None,
    use_numba: bool | None = None,
) -> GraphModule:
    """Build ``mod`` (an ``IRModule`` or ``ModuleOp``) into a runnable ``GraphModule``.

    ``target`` means the host CPU (``"llvm -mcpu=..."``, a ``Target``, ``{"cpu": "llvm"}``;
    see ``xrelay.backend.target``), or is ``"c"``: the C target, which returns a
    ``runtime.c.module.CModule`` (``get_source()``, and it runs); any other is a
    ``BuildError``. ``use_c_kernels=False`` keeps
    every kernel bitwise equal to the reference kernels: no C loop kernel (im2col, depthwise,
    pooling, Winograd) runs, so depthwise convolutions are slower (``use_numba``, its old
    name, still works and warns). ``threads`` is how many
    threads run the chunks of a big kernel (default: ``TVM_NUM_THREADS`` or the cores this
    process may use); results do not depend on it.

    ``target`` may be a dict of targets by device (``{"cpu": "llvm", "mcu": "llvm"}``): the
    module is then planned for several devices (see the module docstring); ``pool_algorithms``
    maps a memory space's pool (``"mcu0.sram"``) to its planning algorithm; ``default_device``
    overrides the default device chosen from the targets (and plans devices even without them).

    ``backends`` (default ``("dnnl", "native")``: the fastest available) says what may run the
    steps: with ``"dnnl"`` the module is partitioned for oneDNN (Relay's BYOC passes with the
    dnnl pattern table, after converting convolutions to NHWC) and every
    ``relay.compiler = "dnnl"`` function runs as oneDNN primitives; ``("native",)`` keeps
    everything on the native kernels. Without a loadable oneDNN (warned once) the native
    kernels run everything. ``profile()`` names the backend of each step. ``partition=False``
    skips that partitioning (``relay.build`` does, as Relay's does): functions the module
    already has with ``relay.compiler = "dnnl"`` still run on oneDNN.

    ``mixed_precision="float16"`` (or ``"bfloat16"``) computes in that type where Relay's
    ToMixedPrecision says it is safe (see ``build_program``); on a CPU without arithmetic in
    that type (no AVX512_BF16 / AMX-BF16, no AVX512_FP16 / AMX-FP16) it warns
    (``MixedPrecisionWarning``): the model then runs slower than in float32.
    """
    use_c_kernels = deprecated_use_numba(use_c_kernels, use_numba)
    backends = _backends(backends)

    try:
        resolved = resolve_build_target(target)
    except TargetError as e:  # a target that is not the host CPU
        raise BuildError(str(e)) from None
    if resolved is not None and resolved.kind == "c":
        if mixed_precision is not None:
            raise BuildError("mixed_precision is not supported by the C target (its kernels are float32 and integer)")
        return build_c(mod, params, opt_level, plan, pools, time_limit=time_limit, debug=debug)
    if default_device is None:
        default_device, _ = device_targets(target)
    _warn_slow_mixed_precision(mixed_precision)
    program, info = build_program(
        mod,
        params,
        opt_level,
        plan,
        pools,
        inputs_in_arena=inputs_in_arena,
        outputs_in_arena=outputs_in_arena,
        time_limit=time_limit,
        default_device=default_device,
        pool_algorithms=pool_algorithms,
        before_lowering=None,
        backends=backends if partition else ("native",),
        mixed_precision=mixed_precision,
        threads=threads,
    )
    return GraphModule(
        program, debug=debug, use_c_kernels=use_c_kernels, plan_info=info, threads=threads,
        backends=backends,
    )  # fmt: skip

