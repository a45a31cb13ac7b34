"""Seed 003: ExecuTorch Cadence's ``memory_planning.py`` -- its algorithms and reports,
compared with xrelay's planners on random problems.

The seed's functions are ported below as the reference (the documentation code kept as
written; only what ties it to torch.fx is replaced by a list of specs: ``TensorSpec`` has
``allocated_memory``, ``lifetime``, ``mem_id``, ``mem_offset``; ``Verifier`` has ExecuTorch's
inclusive interval overlap; ``MemConstraints`` knows each spec's blocked memories). xrelay's
API stays its own; the mapping is

* ``MemoryConfig`` (sizes, alignments, names, base addresses) -> ``Pool``s in order, and
  ``mem_id`` ``k`` is the ``k``-th pool; a blocked ``mem_id`` is a ``Buffer.forbidden_pools`` entry;
* ``position_based_greedy_with_hierarchy`` -> ``plan_memory(..., "position-greedy-hierarchy")``,
  ``greedy_by_size_for_offset_calculation_with_hierarchy`` -> ``"greedy-hierarchy"``;
* ``find_peak_memory_usages_per_memory`` -> ``peak_memory_usages_per_memory``,
  ``find_peak_memory_usage`` -> ``peak``, ``print_memory_planning_info`` -> the function of
  that name (same tables, logged at INFO the same way);
* ``MemoryError("Cannot fit ...")`` -> ``PlanError``.

Every random problem must give the same memory and offset for every tensor, the same
per-memory peaks (unrounded, as the seed's ``bufsizes``), the same total peak and node, and
the same logged tables.
"""

from __future__ import annotations

import collections
import itertools
import logging
import math
import random
import typing
from dataclasses import dataclass, field
from functools import partial
from typing import List, Optional, Tuple  # noqa: UP035 - the seed's annotations

import pytest
from tabulate import tabulate

from xrelay.transforms.planners import (
    Buffer,
    PlanError,
    Pool,
    memory_planning_info,
    peak,
    peak_memory_usages_per_memory,
    plan_memory,
    print_memory_planning_info,
)

# ---- the seed's environment, without torch ---------------------------------------------


@dataclass(eq=False)
class TensorSpec:
    name: str
    allocated_memory: int
    lifetime: list
    blocked: frozenset = frozenset()
    mem_id: Optional[int] = None  # noqa: UP045
    mem_offset: Optional[int] = None  # noqa: UP045

    def __repr__(self):
        return f"TensorSpec({self.name})"


class Verifier:
    @staticmethod
    def has_overlap(lhs_ivl, rhs_ivl):
        return (lhs_ivl[0] >= rhs_ivl[0] and lhs_ivl[0] <= rhs_ivl[1]) or (
            rhs_ivl[0] >= lhs_ivl[0] and rhs_ivl[0] <= lhs_ivl[1]
        )

    @classmethod
    def lifetime_overlap(cls, lhs_spec, rhs_spec):
        return cls.has_overlap(lhs_spec.lifetime, rhs_spec.lifetime)

    @classmethod
    def storage_overlap(cls, lhs_spec, rhs_spec):
        if lhs_spec.mem_id != rhs_spec.mem_id:
            return False
        intervals = [
            [spec.mem_offset, spec.mem_offset + spec.allocated_memory - 1]
            for spec in (lhs_spec, rhs_spec)
        ]
        return cls.has_overlap(*intervals)


@dataclass
class MemoryConfig:
    memory_sizes: list
    memory_alignments: Optional[list] = None  # noqa: UP045
    memory_names: Optional[list] = None  # noqa: UP045
    base_addrs: Optional[list] = None  # noqa: UP045


@dataclass
class MemConstraints:
    opt_level: int = 1
    alloc_graph_input: bool = True
    alloc_graph_output: bool = True
    specs: list = field(default_factory=list)

    def skipped_spec(self, spec):
        return False

    def is_mem_id_in_blocklist(self, spec, mem_id):
        return mem_id in spec.blocked

    def relative_loc_constraints_exist(self):
        return False


def GenerateMemConstraints(mem_constraints, additional_constraint_gen_passes):  # noqa: N802
    return lambda graph_module: None


@dataclass
class GraphModule:
    """Stands in for torch.fx.GraphModule: the specs in topological order, and the node count."""

    specs: list
    num_nodes: int


def collect_specs_from_graph_module(graph_module, graph_signature, alloc_graph_input, alloc_graph_output):
    return list(graph_module.specs)


ExportGraphSignature = PassResult = typing.Any


# ---- the seed's code (reference) ----------------------------------------------------------


# get num memories indexed from 1..N, compatible with EXIR's spec.mem_id
def get_num_memories(memory_config: MemoryConfig) -> int:
    return len(memory_config.memory_sizes) + 1


# memory_space module provides num_memories indexed 0..num_memories-1.
def get_size(memory_config: MemoryConfig, exir_id: int) -> int:
    return memory_config.memory_sizes[exir_id - 1]


def get_alignment(memory_config: MemoryConfig, exir_id: int) -> int:
    # EXIR's spec.mem_id is indexed from 1..N.
    assert memory_config.memory_alignments is not None
    return memory_config.memory_alignments[exir_id - 1]


def get_aligned_offset(pre_aligned_offset: int, alignment: int) -> int:
    return int(math.ceil(pre_aligned_offset / alignment) * alignment)


def position_based_greedy_with_hierarchy(
    graph_module,
    alignment: int,
    graph_signature,
    alloc_graph_input: bool,
    alloc_graph_output: bool,
    *,
    memory_config: MemoryConfig,
    mem_constraints: MemConstraints,
    additional_constraint_gen_passes=None,
) -> List[int]:  # noqa: UP006
    # We do not use the `alignment` parameter and instead use the per-memory alignment
    # constraints from `memory_config`.
    del alignment
    num_memories = get_num_memories(memory_config)
    bufsizes = [0] * num_memories
    allocated_buffers: List[List[TensorSpec]] = [[] for _ in range(num_memories)]  # noqa: UP006
    # Generate the memory constraints
    GenerateMemConstraints(mem_constraints, additional_constraint_gen_passes)(graph_module)

    def overlap(spec: TensorSpec) -> Optional[TensorSpec]:  # noqa: UP045
        for allocated_spec in allocated_buffers[spec.mem_id]:
            if Verifier.lifetime_overlap(spec, allocated_spec) and Verifier.storage_overlap(
                spec, allocated_spec
            ):
                return allocated_spec
        return None

    def memory_available(spec: TensorSpec) -> bool:
        return get_aligned_offset(
            spec.mem_offset + spec.allocated_memory,
            get_alignment(memory_config, spec.mem_id),
        ) <= get_size(memory_config, spec.mem_id)

    # Iterate over all the specs in sorted order
    for spec in sorted(
        collect_specs_from_graph_module(graph_module, graph_signature, alloc_graph_input, alloc_graph_output),
        key=lambda spec: spec.allocated_memory,
        reverse=True,
    ):
        # Skip allocation memory to any tensor whose spec id is in skip list.
        if mem_constraints.skipped_spec(spec):
            continue
        for spec.mem_id in range(1, num_memories):
            if mem_constraints.is_mem_id_in_blocklist(spec, spec.mem_id):
                continue
            spec.mem_offset = 0
            while memory_available(spec) and (overlapped := overlap(spec)):
                spec.mem_offset = get_aligned_offset(
                    overlapped.mem_offset + overlapped.allocated_memory,
                    get_alignment(memory_config, spec.mem_id),
                )
            if memory_available(spec):
                allocated_buffers[spec.mem_id].append(spec)
                bufsizes[spec.mem_id] = max(spec.mem_offset + spec.allocated_memory, bufsizes[spec.mem_id])
                break
        if not allocated_buffers[spec.mem_id] or allocated_buffers[spec.mem_id][-1] is not spec:
            raise MemoryError(f"Cannot fit {spec} in any memory hierarchy")
        # And now honor the various memory location constraints (i.e., infer the memory
        # location of tensors in skip_specs from the constraints) for this spec.
        if mem_constraints.relative_loc_constraints_exist():
            mem_constraints.resolve_relative_loc_constraints(spec)
    # At the end, all the keys in relative_loc_constraints should have been visited
    # and emptied.
    assert not mem_constraints.relative_loc_constraints_exist()
    logging.debug(f"position based greedy algorithm with hierarchy returns bufsizes: {bufsizes}")
    return bufsizes


# Greedy tensor placement with the heuristics from arxiv.org/pdf/2001.03288.pdf
def greedy_by_size_for_offset_calculation_with_hierarchy(
    graph_module,
    alignment: int,
    graph_signature,
    alloc_graph_input: bool,
    alloc_graph_output: bool,
    *,
    memory_config: MemoryConfig,
    mem_constraints: MemConstraints,
    additional_constraint_gen_passes=None,
) -> List[int]:  # noqa: UP006
    # We do not use the `alignment` parameter and instead use the per-memory alignment
    # constraints from `memory_config`.
    del alignment
    num_memories = get_num_memories(memory_config)
    bufsizes = [0] * num_memories
    allocated_buffers = [[] for _ in range(num_memories)]
    # Generate the memory constraints
    GenerateMemConstraints(mem_constraints, additional_constraint_gen_passes)(graph_module)
    # Iterate over all the specs in sorted order
    for spec in sorted(
        collect_specs_from_graph_module(graph_module, graph_signature, alloc_graph_input, alloc_graph_output),
        key=lambda spec: spec.allocated_memory,
        reverse=True,
    ):
        # Skip allocation memory to any tensor whose spec id is in skip list.
        if mem_constraints.skipped_spec(spec):
            continue
        for spec.mem_id in range(1, num_memories):
            if mem_constraints.is_mem_id_in_blocklist(spec, spec.mem_id):
                continue
            prev_offset, smallest_gap = 0, float("inf")
            for allocated_spec in allocated_buffers[spec.mem_id]:
                if Verifier.lifetime_overlap(spec, allocated_spec):
                    if (
                        gap := allocated_spec.mem_offset - prev_offset
                    ) >= spec.allocated_memory and gap < smallest_gap:
                        smallest_gap = gap
                        spec.mem_offset = prev_offset
                    # Note that different from the paper, which updates prev_offset for all
                    # allocated tensors, we only update tensors with overlapping lifetime.
                    # Updating prev_offset outside the if statement will include tensors without
                    # overlapping lifetime, causing unnecessary waste of memory and make the
                    # calculation of gap incorrect. Moving it out will make the algorithm degenerate
                    # to the naive one, reusing 0 tensor. The paper may have a typo here.
                    prev_offset = max(
                        get_aligned_offset(
                            allocated_spec.mem_offset + allocated_spec.allocated_memory,
                            get_alignment(memory_config, spec.mem_id),
                        ),
                        prev_offset,
                    )
            if spec.mem_offset is None:
                if get_aligned_offset(
                    prev_offset + spec.allocated_memory,
                    get_alignment(memory_config, spec.mem_id),
                ) > get_size(memory_config, spec.mem_id):
                    continue
                else:
                    spec.mem_offset = prev_offset
            bufsizes[spec.mem_id] = max(spec.mem_offset + spec.allocated_memory, bufsizes[spec.mem_id])
            allocated_buffers[spec.mem_id].append(spec)
            allocated_buffers[spec.mem_id].sort(key=lambda spec: spec.mem_offset)
            # A data structure used for maintaining the tensor order
            # by offset, named ordered_allocated_ids in the paper
            break
        if spec not in allocated_buffers[spec.mem_id]:
            raise MemoryError(f"Cannot fit {spec} in any memory hierarchy")
        # And now honor the various memory location constraints (i.e., infer the memory
        # location of tensors in skip_specs from the constraints) for this spec.
        if mem_constraints.relative_loc_constraints_exist():
            mem_constraints.resolve_relative_loc_constraints(spec)
    # At the end, all the keys in relative_loc_constraints should have been visited
    # and emptied.
    assert not mem_constraints.relative_loc_constraints_exist()
    logging.debug(f"greedy by size for offset calculation with hierarchy returns bufsizes: {bufsizes}")
    return bufsizes


def find_peak_memory_usages_per_memory(
    graph_module,
    graph_signature,
    alloc_graph_input: bool,
    alloc_graph_output: bool,
    mem_constraints: Optional[MemConstraints] = None,  # noqa: UP045
) -> List[int]:  # noqa: UP006
    """
    Given a GraphModule with a memory plan, find the peak memory usages for each memory
    in the memory hierarchy.
    """
    # Create a defaultdict to keep track of memory usages: {mem_id: mem_usage}
    # Use a defaultdict here because we don't know how many unique memory_id in
    # the memory hierarchy used in memory planning.
    usages = collections.defaultdict(int)
    # go through all nodes in the graph, collect memory usage per spec.mem_id
    for spec in collect_specs_from_graph_module(graph_module, graph_signature, alloc_graph_input, alloc_graph_output):
        if mem_constraints is not None and mem_constraints.skipped_spec(spec):
            continue
        usages[spec.mem_id] = max(usages[spec.mem_id], spec.mem_offset + spec.allocated_memory)
    # Convert usages dictionary into list of len of max memory id
    # Ex: {1: 20, 3:30} -> [0, 20, 0, 30].
    #                       ^   ^  ^   ^
    #                       |   |  |   |_  mem_id 3
    #                       |   |  |_ mem_id 2
    #                       |   |_ mem_id 1
    #                       |_ mem_id 0
    max_mem_id = max(usages.keys(), default=0)
    usages = [usages[i] for i in range(1, max_mem_id + 1)]
    return usages


def find_peak_memory_usage(
    graph_module,
    graph_signature,
    alloc_graph_input: bool,
    alloc_graph_output: bool,
    mem_constraints: Optional[MemConstraints] = None,  # noqa: UP045
) -> Tuple[int, int]:  # noqa: UP006
    """
    Given a GraphModule with a memory plan, find the peak usage over time across all
    memories in the memory hierarchy. The resulting peak memory usage should be:
    1. >= min(find_peak_memory_usages_per_memory(graph_module))
    2. <= sum(find_peak_memory_usages_per_memory(graph_module))
    """
    # memory allocations over time (measured in nodex index)
    byte_allocated = [0] * (graph_module.num_nodes + 1)
    # Iterate over all the node specs
    for spec in collect_specs_from_graph_module(graph_module, graph_signature, alloc_graph_input, alloc_graph_output):
        if spec.lifetime[0] is None or (mem_constraints is not None and mem_constraints.skipped_spec(spec)):
            continue
        # lifetime is [start, end], both ends inclusive
        start, end = spec.lifetime
        byte_allocated[start] += spec.allocated_memory
        byte_allocated[end + 1] -= spec.allocated_memory
    # accumulate the bytes allocated/deallocated to get memory usages
    memory_usages = list(itertools.accumulate(byte_allocated))
    # find the peak memory usage and the index
    peak_memory_usage = max(memory_usages, default=0)
    peak_memory_usage_node_idx = memory_usages.index(peak_memory_usage) if memory_usages else 0
    return peak_memory_usage, peak_memory_usage_node_idx


def print_memory_planning_info_reference(graph_module, memory_config, opt_level, alloc_graph_input, alloc_graph_output):
    # The seed's print_memory_planning_info (its ExecutorchProgramManager argument is the
    # stand-in graph module).
    mem_constraints = MemConstraints(
        opt_level=opt_level,
        alloc_graph_input=alloc_graph_input,
        alloc_graph_output=alloc_graph_output,
    )
    # Get the peak memory usages per memory space
    peak_memory_usages_per_memory = find_peak_memory_usages_per_memory(
        graph_module, None, alloc_graph_input, alloc_graph_output, mem_constraints
    )
    # Create a table of memory spaces and their base addresses, total memory sizes, and peak memory usage
    memory_names, base_addrs = memory_config.memory_names, memory_config.base_addrs
    memory_usage_table = [
        [
            f"{(i + 1) if memory_names is None else memory_names[i]}",
            None if base_addrs is None else hex(base_addrs[i]),
            memory_config.memory_sizes[i],
            peak_memory_usages_per_memory[i],
        ]
        for i in range(len(peak_memory_usages_per_memory))
    ]
    # Print the memory usage per memory space as a table
    logging.info(
        "\n"
        + tabulate(
            memory_usage_table,
            headers=[
                "Memory Space",
                "Base Address",
                "Memory Size (Bytes)",
                "Peak Memory Usage (Bytes)",
            ],
            tablefmt="outline",
        )
    )
    # Get the total peak memory usage across all memory spaces
    total_peak_memory_usage = find_peak_memory_usage(
        graph_module, None, alloc_graph_input, alloc_graph_output, mem_constraints
    )
    # Create a table with total peak memory usage and node at which this occurs
    total_memory_usage_table = [
        [
            "Peak memory usage across all spaces",
            f"{total_peak_memory_usage[0]} bytes",
            f"Node {total_peak_memory_usage[1]}",
        ]
    ]
    # Print the total memory usage as a table
    logging.info("\n" + tabulate(total_memory_usage_table, tablefmt="outline"))


class CadenceMemoryPlanning:
    def __init__(self, memory_config, opt_level, mem_algo, alloc_graph_input=True, alloc_graph_output=True, additional_constraint_gen_passes=None):
        self._init_mem_algos()
        self.memory_config = memory_config
        self.opt_level = opt_level
        self.mem_algo = mem_algo
        self.alloc_graph_input = alloc_graph_input
        self.alloc_graph_output = alloc_graph_output
        self.additional_constraint_gen_passes = additional_constraint_gen_passes

    def _init_mem_algos(self) -> None:
        self.available_mem_algos = [
            position_based_greedy_with_hierarchy,
            greedy_by_size_for_offset_calculation_with_hierarchy,
        ]

    def run(self, graph_module, graph_signature=None):
        mem_constraints = MemConstraints(
            opt_level=self.opt_level,
            alloc_graph_input=self.alloc_graph_input,
            alloc_graph_output=self.alloc_graph_output,
        )
        algo = partial(
            self.available_mem_algos[self.mem_algo],
            memory_config=self.memory_config,
            mem_constraints=mem_constraints,
            additional_constraint_gen_passes=self.additional_constraint_gen_passes,
        )
        # MemoryPlanningPass(algo, ...).run(graph_module, graph_signature) in ExecuTorch
        return algo(graph_module, 16, graph_signature, self.alloc_graph_input, self.alloc_graph_output)


# ---- random problems and their xrelay form ------------------------------------------------

XRELAY_ALGORITHMS = ["position-greedy-hierarchy", "greedy-hierarchy"]  # CadenceMemoryPlanning's mem_algo 0, 1


def _problem(seed: int, fits: bool = True):
    rng = random.Random(seed)
    n = rng.randint(1, 40)
    steps = rng.randint(1, 25)
    size_pool = [rng.randint(1, 3000) for _ in range(rng.randint(1, 8))]
    specs = []
    for i in range(n):
        start = rng.randrange(steps)
        end = rng.randint(start, min(steps - 1, start + rng.randint(0, 8)))
        size = rng.choice(size_pool) if rng.random() < 0.4 else rng.randint(1, 5000)
        specs.append(TensorSpec(f"t{i}", size, [start, end]))
    n_mem = rng.randint(1, 3)
    alignments = [rng.choice([1, 2, 4, 8, 16, 64]) for _ in range(n_mem)]
    total = sum(s.allocated_memory + 64 for s in specs)
    sizes = [rng.randint(total // 8, total // 2) for _ in range(n_mem - 1)]
    sizes.append(total if fits else rng.randint(1, max(1, total // 6)))
    for s in specs:
        if n_mem > 1 and rng.random() < 0.3:  # block some memories, never the last
            s.blocked = frozenset(rng.sample(range(1, n_mem), rng.randint(1, n_mem - 1)))
    names = [f"mem{k}" for k in range(n_mem)]
    bases = [rng.randrange(0, 1 << 32, 4096) for _ in range(n_mem)]
    config = MemoryConfig(sizes, alignments, names, bases)
    return GraphModule(specs, steps), config


def _xrelay_problem(graph_module, config):
    pools = [
        Pool(name, size, alignment, base)
        for name, size, alignment, base in zip(
            config.memory_names, config.memory_sizes, config.memory_alignments, config.base_addrs
        )
    ]
    buffers = [
        Buffer(
            s.name,
            s.allocated_memory,
            s.lifetime[0],
            s.lifetime[1],
            forbidden_pools=tuple(config.memory_names[k - 1] for k in sorted(s.blocked)),
        )
        for s in graph_module.specs
    ]
    return buffers, pools


SEEDS = range(120)


@pytest.mark.parametrize("mem_algo", [0, 1])
def test_algorithms_match_the_seed(mem_algo):
    compared = 0
    for seed in SEEDS:
        graph_module, config = _problem(seed)
        buffers, pools = _xrelay_problem(graph_module, config)
        bufsizes = CadenceMemoryPlanning(config, opt_level=1, mem_algo=mem_algo).run(graph_module)
        plan = plan_memory(buffers, XRELAY_ALGORITHMS[mem_algo], pools)
        for s in graph_module.specs:
            assert plan.offsets[s.name] == (config.memory_names[s.mem_id - 1], s.mem_offset), (seed, s)
        per_memory = peak_memory_usages_per_memory(buffers, pools, plan)
        assert per_memory == find_peak_memory_usages_per_memory(graph_module, None, True, True)
        # The seed's bufsizes are the same unrounded peaks (index 0 unused).
        assert bufsizes[1 : 1 + len(per_memory)] == per_memory
        assert not any(bufsizes[1 + len(per_memory) :])
        compared += len(graph_module.specs)
    assert compared > 1000


@pytest.mark.parametrize("mem_algo", [0, 1])
def test_memory_error_matches_the_seed(mem_algo):
    failures = 0
    for seed in SEEDS:
        graph_module, config = _problem(seed, fits=False)
        buffers, pools = _xrelay_problem(graph_module, config)
        try:
            CadenceMemoryPlanning(config, opt_level=1, mem_algo=mem_algo).run(graph_module)
        except MemoryError as e:
            assert str(e).startswith("Cannot fit TensorSpec(")
            name = str(e).split("TensorSpec(")[1].split(")")[0]
            with pytest.raises(PlanError, match=f"'{name}'"):
                plan_memory(buffers, XRELAY_ALGORITHMS[mem_algo], pools)
            failures += 1
        else:
            plan = plan_memory(buffers, XRELAY_ALGORITHMS[mem_algo], pools)
            for s in graph_module.specs:
                assert plan.offsets[s.name] == (config.memory_names[s.mem_id - 1], s.mem_offset)
    assert failures > 10


def test_peak_usage_matches_the_seed():
    for seed in SEEDS:
        graph_module, config = _problem(seed)
        buffers, _ = _xrelay_problem(graph_module, config)
        assert peak(buffers) == find_peak_memory_usage(graph_module, None, True, True)


@pytest.mark.parametrize("mem_algo", [0, 1])
def test_print_memory_planning_info_matches_the_seed(caplog, mem_algo):
    for seed in range(40):
        graph_module, config = _problem(seed)
        buffers, pools = _xrelay_problem(graph_module, config)
        CadenceMemoryPlanning(config, opt_level=1, mem_algo=mem_algo).run(graph_module)
        plan = plan_memory(buffers, XRELAY_ALGORITHMS[mem_algo], pools)
        with caplog.at_level(logging.INFO):
            caplog.clear()
            print_memory_planning_info_reference(graph_module, config, 1, True, True)
            expected = [r.getMessage() for r in caplog.records]
            caplog.clear()
            print_memory_planning_info(buffers, pools, plan)
            got = [r.getMessage() for r in caplog.records]
        assert got == expected
        assert memory_planning_info(buffers, pools, plan) == "\n".join(m[1:] for m in expected)


def test_the_seeds_table_shape():
    # The seed's comment shows the two tables; one small problem printed in full.
    specs = [TensorSpec("a", 100, [0, 1]), TensorSpec("b", 60, [1, 2]), TensorSpec("c", 100, [2, 3])]
    config = MemoryConfig([128, 1024], [16, 64], ["MEMORY SPACE A", "MEMORY SPACE B"], [0x57BE0000, 0x57BF0000])
    buffers, pools = _xrelay_problem(GraphModule(specs, 4), config)
    plan = plan_memory(buffers, "greedy-hierarchy", pools)
    # a (100) fits A at 0; b (60) overlaps a in time and does not fit A above it (112 + 60 >
    # 128): it goes to B at 0; c (100) only overlaps b, which is in B: A at 0 again.
    assert plan.offsets == {"a": ("MEMORY SPACE A", 0), "b": ("MEMORY SPACE B", 0), "c": ("MEMORY SPACE A", 0)}
    assert memory_planning_info(buffers, pools, plan) == (
        "+----------------+----------------+-----------------------+-----------------------------+\n"
        "| Memory Space   | Base Address   |   Memory Size (Bytes) |   Peak Memory Usage (Bytes) |\n"
        "+================+================+=======================+=============================+\n"
        "| MEMORY SPACE A | 0x57be0000     |                   128 |                         100 |\n"
        "| MEMORY SPACE B | 0x57bf0000     |                  1024 |                          60 |\n"
        "+----------------+----------------+-----------------------+-----------------------------+\n"
        "+-------------------------------------+-----------+--------+\n"
        "| Peak memory usage across all spaces | 160 bytes | Node 1 |\n"
        "+-------------------------------------+-----------+--------+"
    )
