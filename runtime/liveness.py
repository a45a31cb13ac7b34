"""Liveness of the memory dialect: the steps and the buffer lifetimes of a lowered ``@main``.

Step ``k`` is the ``k``-th ``memory.invoke`` in ``@main``. Every other op belongs to the step
of the next invoke (so input copies at the top belong to step 0; ops after the last invoke to
the last step). A storage is live from the first step that touches it, directly or through any
tensor placed in it or alias of such a tensor, to the last one; a value returned by ``@main``
is live to the last step. Kills, tensor placement and aliasing touch nothing.

``buffer_lifetimes`` turns every storage that an arena must hold into a ``memory_plan.Buffer``:
intermediates, workspaces, and inputs/outputs unless ``external``. Constants are never
storage. An aliased storage is one buffer whose lifetime is the union of its views'. All of
this is linear in the size of ``@main``.

The plan written in a planned module is read back here too (``read_plan``), for the checks
(``verify_memory_plan``, which ``verify-memory-plan`` runs and ``xrelay.runtime.load`` runs on
every export it loads) and ``memory_report``; both are run time's because a deployed process
checks the plan of what it loads without the compiler.
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from xrelay.dialects.memory import AliasOp, AllocStorageOp, AllocTensorOp, InvokeOp, KillOp, PoolOp
from xrelay.error import TVMError
from xrelay.runtime.memory_plan import Buffer, Plan, PlanError, Pool, lower_bound, verify_plan
from xrelay.runtime.plan_report import format_report


class LivenessError(ValueError, TVMError):
    """The module is not a lowered memory-dialect program."""


def entry_block(module: ModuleOp, entry: str = "main") -> Block:
    """The single block of ``@entry``; a ``LivenessError`` if there is none."""
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == entry:
            if len(op.body.blocks) != 1:
                raise LivenessError(f"@{entry} must have exactly one block")
            return op.body.block
    raise LivenessError(f"the module has no @{entry} function")


def step_of_ops(block: Block) -> tuple[dict[Operation, int], int]:
    """Each top-level op's step, and the number of steps (invokes)."""
    invokes = sum(1 for op in block.ops if isinstance(op, InvokeOp))
    steps: dict[Operation, int] = {}
    k = 0
    for op in block.ops:
        steps[op] = min(k, max(invokes - 1, 0))
        if isinstance(op, InvokeOp):
            k += 1
    return steps, invokes


def _views(storage: AllocStorageOp) -> Iterator[SSAValue]:
    """The storage value, the tensors placed in it and, transitively, their aliases."""
    work: list[SSAValue] = [storage.result]
    while work:
        v = work.pop()
        yield v
        for use in v.uses:
            if isinstance(use.operation, AllocTensorOp | AliasOp):
                work.append(use.operation.results[0])


def storage_lifetimes(
    module: ModuleOp, entry: str = "main"
) -> tuple[dict[AllocStorageOp, tuple[int, int]], int]:
    """Inclusive ``[first, last]`` step of every ``memory.alloc_storage`` of ``@entry``, and
    the number of steps."""
    block = entry_block(module, entry)
    steps, n = step_of_ops(block)
    last_step = max(n - 1, 0)
    result: dict[AllocStorageOp, tuple[int, int]] = {}
    for op in block.ops:
        if not isinstance(op, AllocStorageOp):
            continue
        first, last = None, None
        for v in _views(op):
            for use in v.uses:
                user = use.operation
                if isinstance(user, AllocTensorOp | AliasOp | KillOp):
                    continue
                top = block.find_ancestor_op_in_block(user)
                if top is None:
                    continue
                s = last_step if isinstance(top, func.ReturnOp) else steps[top]
                first = s if first is None or s < first else first
                last = s if last is None or s > last else last
                if isinstance(top, func.ReturnOp):
                    # A returned value is live to the end, from wherever it was written.
                    first = min(first, steps[op])
        if first is None:
            first = last = steps[op]
        result[op] = (first, last)
    return result, n


def storage_name(op: AllocStorageOp, index: int) -> str:
    """The buffer name of a storage: its SSA name when it has one, else ``s<index>``."""
    hint = op.result.name_hint
    return hint if hint else f"s{index}"


def storage_buffers(module: ModuleOp, entry: str = "main") -> list[tuple[AllocStorageOp, Buffer]]:
    """Every storage an arena must hold with its ``Buffer`` (external storage is left out).

    Buffer names are the storages' SSA names, made unique with a ``.<n>`` suffix if needed.
    """
    lifetimes, _ = storage_lifetimes(module, entry)
    out: list[tuple[AllocStorageOp, Buffer]] = []
    used: set[str] = set()
    for index, (op, (first, last)) in enumerate(lifetimes.items()):
        if op.is_external:
            continue
        name = storage_name(op, index)
        if name in used:
            k = 1
            while f"{name}.{k}" in used:
                k += 1
            name = f"{name}.{k}"
        used.add(name)
        out.append(
            (
                op,
                Buffer(
                    name=name,
                    size=op.nbytes,
                    start=first,
                    end=last,
                    alignment=op.align,
                    kind=op.storage_kind,
                    pools=tuple(s.data for s in op.pools.data) if op.pools else None,
                    forbidden_pools=tuple(s.data for s in op.forbidden_pools.data)
                    if op.forbidden_pools
                    else (),
                ),
            )
        )
    return out


def buffer_lifetimes(module: ModuleOp, entry: str = "main") -> list[Buffer]:
    """The planning problem of a lowered module: one ``Buffer`` per arena storage."""
    return [b for _, b in storage_buffers(module, entry)]


def memory_lower_bound(
    module: ModuleOp, pools: list[Pool] | None = None, entry: str = "main"
) -> int:
    """``planners.lower_bound`` over exactly the buffers of ``buffer_lifetimes``."""
    return lower_bound(buffer_lifetimes(module, entry), pools)


__all__ = [
    "LivenessError",
    "buffer_lifetimes",
    "entry_block",
    "memory_lower_bound",
    "step_of_ops",
    "storage_buffers",
    "storage_lifetimes",
    "storage_name",
]


def module_pools(module: ModuleOp) -> list[Pool]:
    """The ``memory.pool`` declarations of a module as planner pools (capacity as size)."""
    return [
        Pool(
            op.pool_name,
            None if op.capacity is None else op.capacity.value.data,
            op.alignment.value.data,
            op.base_address.value.data,
        )
        for op in module.ops
        if isinstance(op, PoolOp)
    ]


def read_plan(module: ModuleOp, entry: str = "main") -> tuple[list[Buffer], list[Pool], Plan]:
    """The problem and the plan written in a planned module, for checks and reports.

    Raises ``PlanError`` if a storage is not placed or a pool has no planned size.
    """
    pairs = storage_buffers(module, entry)
    pools = module_pools(module)
    if not pools:
        raise PlanError("the module declares no memory.pool (run plan-memory)")
    sizes: dict[str, int] = {}
    for op in module.ops:
        if isinstance(op, PoolOp):
            if op.size is None:
                raise PlanError(f"memory.pool @{op.pool_name} has no planned size")
            sizes[op.pool_name] = op.size.value.data
    offsets: dict[str, tuple[str, int]] = {}
    for op, b in pairs:
        placement = op.placement
        if placement is None:
            raise PlanError(f"storage '{b.name}' ({b.kind}, {b.size} bytes) is not placed")
        offsets[b.name] = placement
    plan = Plan("from IR", offsets, sizes)
    return [b for _, b in pairs], pools, plan


def memory_report(module: ModuleOp, entry: str = "main") -> str:
    """A table per pool (name, base address, size, used bytes, live peak) and a summary (peak
    across pools with its step, the lower bound over the buffers, arena/lower-bound ratio)
    of a planned module."""
    buffers, pools, plan = read_plan(module, entry)
    return format_report(buffers, pools, plan)


class VerifyMemoryPlanError(DiagnosticException, TVMError):
    """The plan in the module is invalid."""


def verify_memory_plan(module: ModuleOp, entry: str = "main") -> None:
    """Raise ``VerifyMemoryPlanError`` naming the first problem of the module's plan."""
    try:
        for op, b in storage_buffers(module, entry):
            written = op.lifetime_range
            if written is not None and written != (b.start, b.end):
                raise PlanError(
                    f"storage '{b.name}' says lifetime [{written[0]}, {written[1]}] but "
                    f"liveness gives [{b.start}, {b.end}]"
                )
        buffers, pools, plan = read_plan(module, entry)
        verify_plan(buffers, pools, plan)
    except (PlanError, LivenessError) as e:
        raise VerifyMemoryPlanError(f"verify-memory-plan: {e}") from None
