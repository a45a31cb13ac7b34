"""``plan-memory``: give every arena storage a pool and an offset, and every pool its size.

The problem is read from a lowered module (``lower-to-memory``) by ``liveness``: one buffer
per non-external ``memory.alloc_storage`` with its size, alignment, inclusive lifetime and
pool constraints (``pools = [...]`` pins it to pools in priority order, ``forbidden_pools``
keeps it out). ``planners.plan_memory`` solves it with ``algorithm`` (any of
``planners.ALGORITHMS``; default ``greedy-by-size``), the plan is checked with
``planners.verify_plan``, and only then written: ``pool``/``offset`` on every storage and one
``memory.pool`` per pool at the top of the module with its planned ``size``. If no plan
exists (a buffer fits in no pool), the pass fails with the planner's message and leaves the
module unchanged.

Pools come from, in order: the ``pools`` option, ``memory.pool`` ops already in the module
(their ``capacity``, ``alignment``, ``base_address``), or one unbounded pool ``global``
aligned to ``alignment``. The option is a comma-separated list of
``name:size[:alignment[:base_address]]``; size 0 means unbounded, the alignment defaults to
the ``alignment`` option, the base address to 0 (numbers may be written in hex, ``0x...``).
Pools are listed fastest first: planners that fall back between pools try them in this order.
xDSL's pipeline syntax needs the items quoted (a comma inside one string also separates)::

    relay-opt model.mlir -p 'lower-to-memory,plan-memory{pools="sram:262144:16,dram:0:64" report=true}'

**Memory spaces.** When every buffer is pinned to its own set of pools and the sets do not
overlap (``lower-to-memory`` pins each buffer of a device-planned module to the pool of its
(device, memory scope)), each set is planned on its own: with the ``algorithm`` given for its
first pool in ``pool-algorithms`` (``"mcu0.sram=optimal,mcu0.dram=greedy-by-size"``), else
``algorithm``; each pool keeps its own size limit and alignment, and the report lists every
pool. A pool's ``device`` is kept.

Whether graph inputs and outputs live in the arena is decided when lowering
(``lower-to-memory{inputs-in-arena=... outputs-in-arena=...}``): external storage is not planned.
``report=true`` prints ``memory_report`` (per pool: name, base address, size, peak usage;
total peak with its step; lower bound; ratio) to stderr, and ``plot=path.png`` draws the plan.

```mlir
%0 = memory.alloc_storage {size = 1024, alignment = 64, kind = "intermediate", lifetime = [0, 1]}
// after plan-memory:
memory.pool @global {alignment = 16, size = 2048}
%0 = memory.alloc_storage {size = 1024, alignment = 64, kind = "intermediate", lifetime = [0, 1], pool = "global", offset = 0}
```
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException, ParseError

from xrelay.dialects import make_context
from xrelay.dialects.memory import MAX_BYTES, AllocStorageOp, PoolOp
from xrelay.dialects.relay.devices import DeviceError, device_kind
from xrelay.dialects.verify import verify_module
from xrelay.error import TVMError
from xrelay.runtime.liveness import LivenessError, buffer_lifetimes, module_pools, storage_buffers
from xrelay.transforms.alias_slices import AliasSlicesPass
from xrelay.transforms.annotate_used_memory import is_primitive
from xrelay.transforms.choose_scratch import ChooseScratchPass
from xrelay.transforms.fuse_ops import FuseOpsPass
from xrelay.transforms.lower_to_memory import LowerToMemoryPass
from xrelay.transforms.place_concat_inputs import PlaceConcatInputsPass
from xrelay.transforms.planners import (
    ALGORITHMS,
    Buffer,
    Plan,
    PlanError,
    Pool,
    format_report,
    plan_memory,
    plot_plan,
    verify_plan,
)

DEFAULT_POOL = "global"

DEFAULT_POOL_ALIGNMENT = 16


class PlanMemoryError(DiagnosticException, TVMError):
    """No valid plan; the module was left unchanged."""


def parse_pools(
    specs: tuple[str, ...] | str, alignment: int = DEFAULT_POOL_ALIGNMENT
) -> list[Pool]:
    """Pools from ``name:size[:alignment[:base_address]]`` items (size 0: unbounded)."""
    if isinstance(specs, str):
        specs = (specs,)
    specs = tuple(item for s in specs for item in s.split(",") if item.strip())
    pools: list[Pool] = []
    for spec in specs:
        parts = spec.strip().split(":")
        if not 2 <= len(parts) <= 4 or not parts[0]:
            raise PlanError(f"bad pool '{spec}': expected name:size[:alignment[:base_address]]")
        try:
            numbers = [int(p, 0) for p in parts[1:]]
        except ValueError:
            raise PlanError(
                f"bad pool '{spec}': size, alignment and base must be integers"
            ) from None
        size = numbers[0]
        align = numbers[1] if len(numbers) > 1 else alignment
        base = numbers[2] if len(numbers) > 2 else 0
        if align < 1 or align & (align - 1):
            # the planners take any alignment, but these pools become memory.pool ops (and
            # C arrays), whose alignments are powers of two
            raise PlanError(f"bad pool '{spec}': alignment {align} is not a power of two")
        pools.append(Pool(parts[0], None if size == 0 else size, align, base))
    return pools


def space_groups(buffers: list[Buffer], pools: list[Pool]) -> list[tuple[list[Buffer], list[Pool]]] | None:
    """Buffers grouped by the pools they are pinned to, when the groups share no pool (each
    is then a problem of its own); None when some buffer may go anywhere or groups overlap."""
    groups: dict[frozenset[str], list[Buffer]] = {}
    for b in buffers:
        if b.pools is None:
            return None
        groups.setdefault(frozenset(b.pools), []).append(b)
    keys = list(groups)
    if len(keys) < 2 or any(a & b for i, a in enumerate(keys) for b in keys[i + 1 :]):
        return None
    return [(bs, [p for p in pools if p.name in key]) for key, bs in groups.items()]


def _names_a_space(pool: str) -> bool:
    """Whether ``pool`` is ``<device kind><index>.<scope>`` of a known device kind and scope
    (the names plan-devices gives pools: ``mcu0.sram``)."""
    import re


    m = re.fullmatch(r"([A-Za-z_][A-Za-z_]*?)(\d+)\.(\w+)", pool)
    if m is None:
        return False
    try:
        kind = device_kind(m.group(1))
    except DeviceError:
        return False
    return m.group(3) in (kind.memory_scopes or {"global": None})


def plan_spaces(
    buffers: list[Buffer],
    pools: list[Pool],
    algorithm: str,
    algorithms: Mapping[str, str] | None = None,
    time_limit: float | None = None,
    seed: int = 0,
) -> Plan:
    """``plan_memory``, each memory space (``space_groups``) on its own with its algorithm."""
    algorithms = dict(algorithms or {})
    # A memory space of a known device that this program puts nothing in has no pool: its
    # algorithm has nothing to plan (the same options serve every model). A name no device
    # has is a typo.
    unknown = [
        p for p in algorithms if p not in {q.name for q in pools} and not _names_a_space(p)
    ]
    if unknown:
        raise PlanError(f"pool-algorithms names unknown pool(s) {', '.join(unknown)}")
    groups = space_groups(buffers, pools)
    if groups is None:
        return plan_memory(buffers, algorithms.get(pools[0].name, algorithm) if pools else algorithm,
                           pools, time_limit, seed)
    parts = []
    for group, group_pools in groups:
        chosen = next((algorithms[p.name] for p in group_pools if p.name in algorithms), algorithm)
        parts.append(plan_memory(group, chosen, group_pools, time_limit, seed))
    merged = Plan(
        "+".join(dict.fromkeys(p.algorithm for p in parts)),
        {k: v for p in parts for k, v in p.offsets.items()},
        {p.name: 0 for p in pools} | {k: v for part in parts for k, v in part.pool_sizes.items()},
        optimal=None if any(p.optimal is None for p in parts) else all(p.optimal for p in parts),
        seconds=sum(p.seconds for p in parts),
    )
    merged.stats["spaces"] = {"+".join(q.name for q in gp): part.algorithm for (_, gp), part in zip(groups, parts)}
    return merged


def plan_module(
    module: ModuleOp,
    algorithm: str = "greedy-by-size",
    pools: list[Pool] | None = None,
    time_limit: float | None = None,
    seed: int = 0,
    entry: str = "main",
    algorithms: Mapping[str, str] | None = None,
) -> tuple[list[Buffer], list[Pool], Plan]:
    """Plan a lowered module in place (see the module docstring); return problem and plan.

    Raises ``PlanError`` and leaves the module unchanged if no valid plan is found.
    """
    try:
        pairs = storage_buffers(module, entry)
    except LivenessError as e:
        raise PlanError(str(e)) from None
    if pools is None:
        pools = module_pools(module) or [Pool(DEFAULT_POOL, None, DEFAULT_POOL_ALIGNMENT)]
    buffers = [b for _, b in pairs]
    plan = plan_spaces(buffers, pools, algorithm, algorithms, time_limit, seed)
    verify_plan(buffers, pools, plan)
    for p in pools:  # sizes and addresses are signed 64-bit integers in the IR and in C
        need = plan.pool_sizes.get(p.name, 0) + (p.base_address or 0)
        if need > MAX_BYTES:
            raise PlanError(
                f"pool '{p.name}' needs {need} bytes, more than a 64-bit size can hold"
            )
    # Only now touch the IR.
    devices = {}
    for op in list(module.ops):
        if isinstance(op, PoolOp):
            devices[op.pool_name] = op.device
            Rewriter.erase_op(op)
    new_pools = [
        PoolOp(
            p.name,
            alignment=p.alignment,
            base_address=p.base_address,
            capacity=p.size,
            size=plan.pool_sizes.get(p.name, 0),
            device=devices.get(p.name),
        )
        for p in pools
    ]
    first = module.body.block.first_op
    if first is None:
        module.body.block.add_ops(new_pools)
    else:
        Rewriter.insert_op(new_pools, InsertPoint.before(first))
    for op, b in pairs:
        op.set_placement(*plan.offsets[b.name])
    return buffers, pools, plan


def load_mlir_problem(
    path: str | Path, state_scratch: Callable[[ModuleOp], None] | None = None
) -> list[Buffer]:
    """The planning problem of a ``.mlir`` file, for ``relay-plan``.

    A module already lowered to the memory dialect is read as is. A relay module is lowered
    first with ``lower-to-memory``'s defaults, after ``fuse-ops`` if it has no primitive
    function yet, and after ``state_scratch(module)`` (``relay-plan`` gives the engines'
    ``xrelay.backend.engines.state_scratch``) states the workspaces, then
    ``place-concat-inputs``, ``alias-slices`` and ``choose-scratch`` (the PassContext's priority): one buffer
    per fused group and its kernels' scratch, as a compiler would plan it.
    """
    from xdsl.parser import Parser


    ctx = make_context()
    try:
        module = Parser(ctx, Path(path).read_text(), str(path)).parse_module()
        verify_module(module)
        lowered = any(isinstance(op, AllocStorageOp) for op in module.walk())
        if not lowered:
            if not any(isinstance(f, func.FuncOp) and is_primitive(f) for f in module.ops):
                FuseOpsPass().apply(ctx, module)
            if state_scratch is not None:
                state_scratch(module)
            LowerToMemoryPass().apply(ctx, module)
            PlaceConcatInputsPass().apply(ctx, module)
            AliasSlicesPass().apply(ctx, module)
            ChooseScratchPass().apply(ctx, module)
        return buffer_lifetimes(module)
    except (DiagnosticException, ParseError, LivenessError, OSError) as e:
        text = str(e)  # parse and verifier errors already start with path:line:column
        raise PlanError(text if text.startswith(str(path)) else f"{path}: {text}") from None
    except RecursionError:  # a backstop: the parser refuses deep nesting before this
        raise PlanError(f"{path}: the input is nested too deeply to process") from None


def _pool_algorithms(items: tuple[str, ...] | str) -> dict[str, str]:
    if isinstance(items, str):
        items = (items,)
    out: dict[str, str] = {}
    for item in (i.strip() for s in items for i in s.split(",")):
        if not item:
            continue
        pool, sep, algorithm = item.partition("=")
        if not sep or algorithm not in ALGORITHMS:
            raise PlanError(
                f"pool-algorithms: expected pool=algorithm with an algorithm of {', '.join(ALGORITHMS)}, got '{item}'"
            )
        out[pool] = algorithm
    return out


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    """Static memory planning of a lowered module into pools (see the module docstring)."""

    name = "plan-memory"
    relay_name: ClassVar[str] = "PlanMemory"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ()

    algorithm: str = "greedy-by-size"
    """One of ``planners.ALGORITHMS``."""
    pools: tuple[str, ...] = ()
    """``name:size[:alignment[:base]]`` items, fastest first; size 0 = unbounded."""
    alignment: int = DEFAULT_POOL_ALIGNMENT
    """Alignment of the default pool and of pools given without one."""
    time_limit: float = 0.0
    """Seconds for ``optimal`` and ``hill-climb`` (0: the planner's default)."""
    seed: int = 0
    """Seed of ``hill-climb``."""
    pool_algorithms: tuple[str, ...] = ()
    """``pool=algorithm`` items: the algorithm of the memory space holding that pool."""
    report: bool = False
    """Print ``memory_report`` to stderr."""
    plot: str = ""
    """Write a PNG of the plan to this path."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.algorithm not in ALGORITHMS:
            raise PlanMemoryError(
                f"plan-memory: unknown algorithm '{self.algorithm}' (known: {', '.join(ALGORITHMS)})"
            )
        if not 0 <= self.time_limit < math.inf:
            raise PlanMemoryError(
                f"plan-memory: time-limit must be a number of seconds >= 0 (0: the planner's "
                f"default), not {self.time_limit}"
            )
        try:
            pools = parse_pools(self.pools, self.alignment) if self.pools else None
            if pools is None and not any(isinstance(o, PoolOp) for o in op.ops):
                pools = [Pool(DEFAULT_POOL, None, self.alignment)]
            algorithms = _pool_algorithms(self.pool_algorithms)
            buffers, pools, plan = plan_module(
                op, self.algorithm, pools, self.time_limit or None, self.seed, algorithms=algorithms
            )
        except PlanError as e:
            raise PlanMemoryError(f"plan-memory: {e}") from None
        if self.report:
            print(format_report(buffers, pools, plan), file=sys.stderr)
        if self.plot:
            plot_plan(buffers, pools, plan, self.plot, title=f"plan-memory ({self.algorithm})")


__all__ = [
    "PlanMemoryError",
    "PlanMemoryPass",
    "load_mlir_problem",
    "module_pools",
    "parse_pools",
    "plan_module",
    "plan_spaces",
    "space_groups",
]
