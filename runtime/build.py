"""``xrelay.build``: optimise, fuse, lower, plan, and bind a module to the arena executor.

    >>> m = xrelay.build(mod, params, opt_level=3, plan="greedy-by-size")  # doctest: +SKIP

The stages, each a pass you can also run alone:

1. ``params`` (a dict of arrays) are bound to ``@main``'s parameters of those names as named
   constants (``bind_params_by_name``), so folding sees the real weights;
2. ``build_pipeline(opt_level)`` (Relay's pre-fusion passes and ``fuse-ops``) runs inside a
   ``PassContext(opt_level=opt_level)``;
3. ``lower-to-memory`` makes storage explicit (inputs and outputs in the arena by default,
   a planned workspace for every im2col convolution);
4. ``plan-memory`` places every storage with ``plan`` (any of ``planners.ALGORITHMS``) into
   ``pools`` (``None``: one unbounded pool; or ``Pool`` objects; or a ``"name:size,..."`` string);
5. the planned program becomes a ``GraphModule`` (``runtime.graph_executor``).

The module given is not modified. Errors of every stage keep their own exception type
(``RelayTypeError``, ``PlanError``, ...); ``BuildError`` is raised for bad arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from xrelay.error import TVMError
from xrelay.runtime.graph_executor import GraphModule
from xrelay.transforms.planners import ALGORITHMS, Pool

__all__ = ["BuildError", "build", "build_program", "demo_resnet18"]


class BuildError(ValueError, TVMError):
    """``build`` got arguments it cannot use."""


def _pools(pools: Sequence[Pool] | str | None) -> list[Pool] | None:
    from xrelay.transforms.plan_memory import parse_pools

    if pools is None:
        return None
    if isinstance(pools, str):
        return parse_pools(pools)
    pools = list(pools)
    if not all(isinstance(p, Pool) for p in pools):
        raise BuildError("pools must be planners.Pool objects or a 'name:size,...' string")
    return pools


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
) -> tuple[ModuleOp, Any]:
    """Stages 1-4 of ``build``: the planned program and ``(buffers, pools, plan)``."""
    from xrelay.dialects import make_context
    from xrelay.transforms.bind_params import bind_params_by_name
    from xrelay.transforms.infra import PassContext, build_pipeline, module_op
    from xrelay.transforms.lower_to_memory import LowerToMemoryPass
    from xrelay.transforms.plan_memory import DEFAULT_POOL, DEFAULT_POOL_ALIGNMENT, plan_module

    if plan not in ALGORITHMS:
        raise BuildError(f"unknown planning algorithm '{plan}' (known: {', '.join(ALGORITHMS)})")
    if not isinstance(opt_level, int) or isinstance(opt_level, bool) or not 0 <= opt_level <= 4:
        raise BuildError(f"opt_level must be an integer from 0 to 4, got {opt_level!r}")
    module = module_op(mod).clone()
    if params:
        arrays = {
            k: (v.numpy() if hasattr(v, "numpy") else np.asarray(v)) for k, v in params.items()
        }
        bind_params_by_name(module, arrays)
    with PassContext(opt_level=opt_level):
        optimised = module_op(build_pipeline(opt_level)(module))
    LowerToMemoryPass(inputs_in_arena=inputs_in_arena, outputs_in_arena=outputs_in_arena).apply(
        make_context(), optimised
    )
    pool_list = _pools(pools)
    if pool_list is None:
        pool_list = [Pool(DEFAULT_POOL, None, DEFAULT_POOL_ALIGNMENT)]
    info = plan_module(optimised, plan, pool_list, time_limit)
    return optimised, info


def build(
    mod: Any,
    params: Mapping[str, Any] | None = None,
    opt_level: int = 3,
    plan: str = "greedy-by-size",
    pools: Sequence[Pool] | str | None = None,
    *,
    target: Any = None,
    debug: bool = False,
    use_numba: bool = True,
    inputs_in_arena: bool = True,
    outputs_in_arena: bool = True,
    time_limit: float | None = None,
    threads: int | None = None,
) -> GraphModule:
    """Build ``mod`` (an ``IRModule`` or ``ModuleOp``) into a runnable ``GraphModule``.

    ``target`` means the host CPU (``"llvm -mcpu=..."``, a ``Target``, ``{"cpu": "llvm"}``;
    see ``xrelay.runtime.target``); any other is a ``BuildError``. ``use_numba=False`` keeps
    every kernel bitwise equal to the reference kernels (depthwise convolutions are then
    slower). ``threads`` is how many
    threads run the chunks of a big kernel (default: ``TVM_NUM_THREADS`` or the cores this
    process may use); results do not depend on it.
    """
    from xrelay.runtime.target import TargetError, resolve_build_target

    try:
        resolve_build_target(target)
    except TargetError as e:  # a target that is not the host CPU
        raise BuildError(str(e)) from None
    program, info = build_program(
        mod,
        params,
        opt_level,
        plan,
        pools,
        inputs_in_arena=inputs_in_arena,
        outputs_in_arena=outputs_in_arena,
        time_limit=time_limit,
    )
    return GraphModule(program, debug=debug, use_numba=use_numba, plan_info=info, threads=threads)


def demo_resnet18(
    out: Any = None,
    *,
    image: int = 224,
    plan: str = "greedy-by-size",
    pairs: int = 10,
    compare_onnxruntime: bool = True,
) -> dict[str, Any]:
    """The pieces of ``make demo`` for ResNet-18, printed to ``out`` (default stdout).

    Builds ResNet-18 as ONNX, imports it, optimises at -O3 (fuse-ops included), lowers to the
    memory dialect, plans with ``plan``, runs it with the arena executor, prints the memory
    report (arena vs lower bound) and, with ``compare_onnxruntime``, the latency of ``pairs``
    alternating runs against onnxruntime (2 threads) and the largest output difference.
    Returns the numbers printed, by name.
    """
    import statistics
    import sys
    import time

    from xrelay.frontends.onnx import from_onnx
    from xrelay.testing import onnx_models
    from xrelay.transforms.liveness import memory_lower_bound

    out = out or sys.stdout
    model = onnx_models.resnet18(image=image)
    mod, params = from_onnx(model)
    t0 = time.perf_counter()
    m = build(mod, params, opt_level=3, plan=plan)
    build_s = time.perf_counter() - t0
    steps = len(m.executor.steps)
    lower = memory_lower_bound(m.program)
    out.write(
        f"ResNet-18 ({image}x{image}): built in {build_s:.2f} s, {steps} steps, "
        f"{len(m.param_names)} params\n{m.memory_report()}\n"
        f"arena {m.arena_bytes} bytes vs lower bound {lower} bytes "
        f"(ratio {m.arena_bytes / max(lower, 1):.4f})\n"
    )
    x = np.random.default_rng(0).standard_normal((1, 3, image, image)).astype("float32")
    m.run(data=x)
    numbers: dict[str, Any] = {"arena_bytes": m.arena_bytes, "lower_bound": lower}
    if compare_onnxruntime:
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = 2
        so.log_severity_level = 3
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        sess = ort.InferenceSession(
            model.SerializeToString(), so, providers=["CPUExecutionProvider"]
        )
        (expect,) = sess.run(None, {"data": x})
        err = float(np.max(np.abs(m.get_output(0) - expect)))
        a, b = [], []
        for _ in range(max(1, pairs)):
            t = time.perf_counter()
            m.run()
            a.append(time.perf_counter() - t)
            t = time.perf_counter()
            sess.run(None, {"data": x})
            b.append(time.perf_counter() - t)
        ratio = statistics.median(x_ / y_ for x_, y_ in zip(a, b))
        out.write(
            f"latency: xrelay {statistics.median(a) * 1000:.2f} ms, onnxruntime "
            f"{statistics.median(b) * 1000:.2f} ms, ratio {ratio:.3f} (median of {len(a)} "
            f"pairs); max |xrelay - onnxruntime| = {err:.2e}\n"
        )
        numbers.update(ratio=ratio, max_abs_err=err)
    return numbers
