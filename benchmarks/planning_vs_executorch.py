"""ExecuTorch's memory plan beside xrelay's, for the same ``torch.export`` graph.

    python -m xrelay.benchmarks.planning_vs_executorch [--image 224] [--time-limit 10] [--models a,b]

Needs the ``executorch`` extra (torch 2.14.1, torchvision 0.29.1, executorch 1.5.1). Each CNN
(torchvision builders, random weights, batch 1, float32) is exported once with
``torch.export.export``; then

* **ExecuTorch**: ``to_edge(ep).to_executorch()`` with its default memory planning (greedy,
  ``alloc_graph_input`` and ``alloc_graph_output`` on): the planned activation bytes are the
  program's ``non_const_buffer_sizes`` (mem_id 1). They include the graph's input and output
  and every intermediate tensor of the edge graph (one buffer per op result: no fusion), and
  exclude the weights (constant segment).
* **xrelay**: ``from_exported_program(ep)`` with the weights bound as constants, ``fuse-ops``,
  ``lower-to-memory`` (inputs and outputs in the arena, 64-byte alignment, the fused
  functions' workspaces: im2col scratch of the kernels) and the planner: the default
  (``greedy-by-size``) and ``optimal`` (time limit per model), with ``planners.lower_bound``
  (most bytes live at one step) beside them. Weights are excluded as in ExecuTorch. ExecuTorch's
  plan holds no kernel scratch, so ``optimal`` is also given without the workspaces
  (``lower-to-memory{workspace=false}``): the same kinds of buffers as ExecuTorch's.
* **ExecuTorch's own problem**: the lifetimes and sizes ExecuTorch's planner placed (its
  ``TensorSpec``s of mem_id 1), planned again by xrelay's ``optimal``, with that problem's
  lower bound: the planners compared on identical buffers, fusion aside.
"""

from __future__ import annotations

import argparse
import time

from tabulate import tabulate

MODELS = {
    "ResNet-18": ("resnet18", {}),
    "MobileNetV2": ("mobilenet_v2", {}),
    "MobileNetV3-small": ("mobilenet_v3_small", {}),
    "SqueezeNet 1.1": ("squeezenet1_1", {}),
    "EfficientNet-B0": ("efficientnet_b0", {}),
}


def export(name: str, image: int):
    import torch
    import torchvision

    builder, kwargs = MODELS[name]
    torch.manual_seed(0)
    model = getattr(torchvision.models, builder)(weights=None, **kwargs).eval()
    return torch.export.export(model, (torch.randn(1, 3, image, image),))


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
    buffers = [Buffer(f"t{i}", size, start, end, alignment=16) for i, (size, start, end) in enumerate(storages.values()) if size > 0]
    return int(sum(sizes)), buffers


def xrelay_problem(ep, workspace: bool = True) -> list:
    from xrelay.dialects import make_context
    from xrelay.frontends.torch import import_exported_program
    from xrelay.transforms.fuse_ops import FuseOpsPass
    from xrelay.transforms.liveness import buffer_lifetimes
    from xrelay.transforms.lower_to_memory import LowerToMemoryPass

    module = import_exported_program(ep, freeze_params=True).module
    ctx = make_context()
    FuseOpsPass().apply(ctx, module)
    LowerToMemoryPass(workspace=workspace).apply(ctx, module)
    return buffer_lifetimes(module)


def main(argv: list[str] | None = None) -> None:
    from xrelay.transforms.planners import lower_bound, plan_memory, verify_plan

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--image", type=int, default=224)
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--models", default=",".join(MODELS))
    args = ap.parse_args(argv)
    rows = []
    for name in args.models.split(","):
        ep = export(name, args.image)
        et_bytes, et_buffers = executorch_plan(ep)
        buffers = xrelay_problem(ep)
        lb = lower_bound(buffers)
        plans = {}
        for algorithm in ("greedy-by-size", "optimal"):
            start = time.perf_counter()
            plan = plan_memory(buffers, algorithm, time_limit=args.time_limit)
            verify_plan(buffers, None, plan)
            plans[algorithm] = (plan.total_size, time.perf_counter() - start)
        bare = xrelay_problem(ep, workspace=False)
        bare_opt = plan_memory(bare, "optimal", time_limit=args.time_limit)
        verify_plan(bare, None, bare_opt)
        et_lb = lower_bound(et_buffers)
        et_opt = plan_memory(et_buffers, "optimal", time_limit=args.time_limit)
        verify_plan(et_buffers, None, et_opt)
        best = min(p[0] for p in plans.values())
        rows.append(
            [
                name, f"{et_bytes:,}", f"{plans['greedy-by-size'][0]:,}", f"{plans['optimal'][0]:,}", f"{lb:,}",
                f"{bare_opt.total_size:,}", f"{et_bytes / bare_opt.total_size:.2f}x",
                f"{et_bytes / et_lb:.3f}x", f"{et_opt.total_size / et_lb:.3f}x",
                "yes" if best <= et_bytes else "NO", "yes" if bare_opt.total_size <= et_bytes else "NO",
            ]
        )  # fmt: skip
        print(f"{name}: done", flush=True)
    print(
        tabulate(
            rows,
            headers=[
                "model", "ExecuTorch", "xrelay default", "xrelay optimal", "xrelay bound",
                "optimal, no scratch", "ET / that", "ET / bound (ET's buffers)",
                "xrelay optimal / bound (ET's buffers)", "xrelay <= ET", "no scratch <= ET",
            ],
        )
    )  # fmt: skip


if __name__ == "__main__":
    main()
