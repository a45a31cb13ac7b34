"""ExecuTorch's memory plan beside xrelay's, for the same ``torch.export`` graph.

    python -m xrelay.benchmarks.planning_vs_executorch [--time-limit 10] [--models a,b]

Needs the ``executorch`` extra (torch 2.14.1, torchvision 0.29.1, executorch 1.5.1) and the
``zoo`` extra. Each CNN of the zoo (``xrelay.testing.zoo``, kind ``"cnn"``: the builders with
their random initial weights, batch 1, float32, the zoo's image size) is exported once with
``torch.export.export``; then the same ``ExportedProgram`` goes to both sides. What each
number holds:

* **ExecuTorch** (``to_edge(ep).to_executorch()``, default memory planning: greedy,
  ``alloc_graph_input`` and ``alloc_graph_output`` on): the program's planned
  ``non_const_buffer_sizes`` (mem_id 1). Activations: the graph's input and output and every
  intermediate tensor of the edge graph (one buffer per op result: no fusion), each aligned to
  **16 bytes**. No weights (constant segment). **No kernel scratch**: its portable kernels
  are direct loops that need none (a delegate such as XNNPACK allocates its workspace outside
  this plan).
* **xrelay, default** (``backend.build.build_program`` as ``xrelay.build`` and
  ``relay-plan`` call it): ``from_exported_program(ep)``, the opt-level-3 pipeline (batch norms
  folded, ``fuse-ops``...), the steps partitioned between oneDNN (where its library loads) and
  the native kernels, each engine stating its steps' **kernel scratch** (oneDNN's scratchpads;
  the native kernels' im2col matrices, Winograd tiles, chunked elementwise temporaries),
  ``lower-to-memory`` with the input and output in the arena and every storage aligned to
  **64 bytes**, planned by the default ``greedy-by-size`` and by ``optimal`` (time limit per
  model), with the lower bound of that problem (most bytes live at one step). No weights.
  Beside it, the same build with every step on the native kernels (``backends=("native",)``,
  ``greedy-by-size``): their im2col scratch is the largest of the engines'.
* **xrelay, C target** (the same pipeline as ``build_c``: each fused function's scratch stated
  by the C it compiles to, ``backend.c.annotate_scratch``, before ``lower-to-memory``; its
  convolutions are register tiles or direct loops with no im2col, as ExecuTorch's portable
  kernels, and its elementwise chains are one loop each),
  with the input and output in the arena as ExecuTorch's, planned by ``greedy-by-size``:
  at xrelay's 64-byte alignment, and at ExecuTorch's 16 (the same problem, every storage's
  alignment 16): the like-for-like column. A model the C target cannot compile (an op without
  C) says which op.
* **ExecuTorch's own problem**: the lifetimes and sizes ExecuTorch's planner placed (its
  ``TensorSpec``s of mem_id 1), planned again by xrelay's ``optimal``, with that problem's
  lower bound: the two planners on identical buffers, fusion aside.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from tabulate import tabulate

ET_ALIGNMENT = 16
"""ExecuTorch's default memory planning alignment (``MemoryPlanningPass(alignment=16)``)."""


def cnn_models() -> list[str]:
    from xrelay.testing import zoo

    return [name for name, spec in zoo.MODELS.items() if spec.kind == "cnn"]


def export(name: str):
    """The zoo model ``name`` (its builder's random weights, eval mode) through torch.export."""
    import torch

    from xrelay.testing import zoo

    torch.manual_seed(0)
    model = zoo.MODELS[name].build().eval()
    args = zoo._torch_args(name)
    with torch.no_grad():
        return torch.export.export(model, args)


def executorch_plan(ep) -> tuple[int, list]:
    """ExecuTorch's planned bytes (default planning) and the buffers it placed."""
    from executorch.exir import to_edge

    from xrelay.transforms.planners import Buffer

    program = to_edge(ep).to_executorch()
    sizes = program.executorch_program.execution_plan[0].non_const_buffer_sizes
    # one buffer per storage: specs sharing a mem_obj_id (views, outputs written in place)
    # are one allocation to ExecuTorch's planner
    storages: dict = {}
    for node in program.exported_program().graph.nodes:
        specs = node.meta.get("spec")
        for spec in specs if isinstance(specs, list | tuple) else [specs]:
            if spec is None or getattr(spec, "mem_id", None) != 1 or spec.lifetime[0] is None:
                continue
            key = spec.mem_obj_id if getattr(spec, "mem_obj_id", None) is not None else id(spec)
            size, start, end = int(spec.allocated_memory), int(spec.lifetime[0]), int(spec.lifetime[1])
            if key in storages:
                s0, a0, e0 = storages[key]
                size, start, end = max(size, s0), min(start, a0), max(end, e0)
            storages[key] = (size, start, end)
    buffers = [
        Buffer(f"t{i}", size, start, end, alignment=ET_ALIGNMENT)
        for i, (size, start, end) in enumerate(storages.values())
        if size > 0
    ]
    return int(sum(sizes)), buffers


def xrelay_problem(ep, engine: str) -> list:
    """The buffers xrelay's build plans for ``ep``, input and output in the arena:
    ``engine`` ``"default"`` (what ``xrelay.build`` and ``relay-plan`` plan: oneDNN where it
    loads, the native kernels elsewhere, each stating its scratch), ``"native"`` (every step on
    the native kernels: their im2col scratch) or ``"c"`` (the C target's stated scratch)."""
    from xrelay.backend.build import _backends, build_program
    from xrelay.frontends.torch import import_exported_program
    from xrelay.transforms.infra import PassContext

    imported = import_exported_program(ep)
    if engine in ("default", "native"):
        backends = _backends(None) if engine == "default" else ("native",)
        _, (buffers, _, _) = build_program(imported.module, imported.params, backends=backends)
        return buffers
    from xrelay.backend.c import annotate_scratch
    from xrelay.backend.c.c_function import CHANNEL_BLOCK

    # build_c's pipeline: float convolutions in channel blocks, the C's scratch stated before
    # lowering
    with PassContext(opt_level=3, required_pass=["QnnCanonicalize"]):
        _, (buffers, _, _) = build_program(imported.module, imported.params, before_lowering=annotate_scratch,
                                           blocked_simd_width=CHANNEL_BLOCK)  # fmt: skip
    return buffers


def main(argv: list[str] | None = None) -> None:
    from xrelay.transforms.planners import lower_bound, plan_memory, verify_plan

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--models", default=None, help="comma-separated zoo names (default: every zoo CNN)")
    args = ap.parse_args(argv)
    names = args.models.split(",") if args.models else cnn_models()

    def planned(buffers, algorithm: str) -> int:
        plan = plan_memory(buffers, algorithm, time_limit=args.time_limit)
        verify_plan(buffers, None, plan)
        return plan.total_size

    rows = []
    for name in names:
        start = time.perf_counter()
        ep = export(name)
        try:
            et_bytes, et_buffers = executorch_plan(ep)
        except Exception as e:  # a program ExecuTorch's lowering refuses: say so, go on
            print(f"{name}: ExecuTorch failed: {str(e).splitlines()[0][:200]}", flush=True)
            continue
        default = xrelay_problem(ep, "default")
        greedy, optimal, bound = planned(default, "greedy-by-size"), planned(default, "optimal"), lower_bound(default)
        native = planned(xrelay_problem(ep, "native"), "greedy-by-size")
        try:
            c_buffers = xrelay_problem(ep, "c")
        except Exception as e:  # an op the C target has no code for: say which
            c64 = c16 = None
            why = str(e).splitlines()[0][:60]
        else:
            c64 = planned(c_buffers, "greedy-by-size")
            c16 = planned([dataclasses.replace(b, alignment=ET_ALIGNMENT) for b in c_buffers], "greedy-by-size")
        et_opt, et_lb = planned(et_buffers, "optimal"), lower_bound(et_buffers)
        rows.append(
            [
                name, f"{et_bytes:,}", f"{greedy:,}", f"{optimal:,}", f"{bound:,}", f"{native:,}",
                f"{c64:,}" if c64 is not None else f"n/a: {why}",
                f"{c16:,}" if c16 is not None else "n/a",
                f"{et_bytes / greedy:.2f}x", f"{et_bytes / c16:.2f}x" if c16 else "",
                f"{et_bytes / et_lb:.3f}x", f"{et_opt / et_lb:.3f}x",
            ]
        )  # fmt: skip
        print(f"{name}: done in {time.perf_counter() - start:.0f} s:", " | ".join(rows[-1][1:]), flush=True)
    print(
        tabulate(
            rows,
            headers=[
                "model", "ExecuTorch (16 B, no scratch)", "xrelay default (64 B, scratch)",
                "xrelay optimal", "xrelay bound", "native kernels only", "C target (64 B)",
                "C target (16 B)", "ET / xrelay default", "ET / C 16 B",
                "ET / bound (ET's buffers)", "xrelay optimal / bound (ET's buffers)",
            ],
            disable_numparse=True,
            colalign=["left"] + ["right"] * 11,
        )
    )  # fmt: skip


if __name__ == "__main__":
    main()
