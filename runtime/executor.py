"""The arena executor: a planned memory-dialect program compiled once into a flat step list.

``Executor(program)`` reads a module after ``lower-to-memory`` and ``plan-memory``:

* every ``memory.pool`` becomes ONE numpy buffer of its planned size (aligned to 64 bytes);
  every placed ``memory.alloc_storage`` is the slice ``arena[offset:offset + size]``, and every
  tensor the view ``storage[offset:offset + nbytes].view(dtype).reshape(shape)``;
  ``memory.alias`` is a reshaped view, ``memory.kill`` is nothing;
* ``external`` storage (outputs kept out of the arena) gets its own buffer, once;
* every parameter of ``@main`` gets an input buffer owned by the executor (``set_input``
  copies into it; ``memory.copy`` steps move it into the arena at the start of a run);
* ``@main``'s constants are bound as they are (read-only views of the IR's data, no copy),
  or replaced by the arrays given in ``constants`` (params loaded later);
* every ``memory.invoke`` is compiled by ``fast_kernels.compile_function`` into thunks bound
  to those views, its constants and its planned workspace; big kernels are cut into fixed
  chunks that run on a ``parallel.WorkerPool`` of ``threads`` threads.

``run()`` then only calls the thunks, with BLAS held to one thread per call (the executor's
own threads do the parallel work; see ``xrelay.runtime.parallel`` for why): it allocates no
activation memory (``outside_arena`` counts every array a run allocates, with numpy's
allocation hook, and what the bound steps hold outside the arenas; the tests require zero). Results are bitwise the same from run to run and for any ``threads``. ``profile()`` times every step
and every op family. ``run_memory_compiled`` runs the memory-dialect *interpreter* (hostile
mode: poisoned arenas, workspaces and killed storage) with the executor's kernels, which is
the bitwise reference for the C loop kernels.
"""

from __future__ import annotations

import contextlib
import ctypes
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.ir import SSAValue

from xrelay.dialects.memory import (
    AliasOp,
    AllocStorageOp,
    AllocTensorOp,
    CopyOp,
    InvokeOp,
    KillOp,
    PoolOp,
)
from xrelay.dialects.relay import ConstantOp, byte_size, dtype_of, numpy_dtype
from xrelay.dialects.relay.constant import file_mapping_of
from xrelay.dialects.relay.dtypes import too_large
from xrelay.error import TVMError
from xrelay.runtime.compiled import FAMILIES, CompiledFunction, KernelError
from xrelay.runtime.engines import ENGINES, TAKES_EVERY_STEP, run_side
from xrelay.runtime.native.library import c_call, call_job
from xrelay.runtime.native.steps import bind_function, chain_link
from xrelay.runtime.npz import private_copy
from xrelay.runtime.parallel import (
    PartsChoice,
    RunChooser,
    WorkerPool,
    blas_single_thread,
    default_threads,
    idle_cpu_seconds,
    serial_jobs,
)

__all__ = [
    "ARENA_ALIGNMENT",
    "Executor",
    "ExecutorError",
    "OutsideArena",
    "RunProgram",
    "StepProfile",
    "run_memory_compiled",
]

ARENA_ALIGNMENT = 64
"""Byte alignment of every arena's first byte (a cache line; BLAS likes it)."""


StepCompiler = Callable[
    [func.FuncOp, list[np.ndarray], list[np.ndarray], np.ndarray | None], CompiledFunction
]
"""Binds one primitive function to its operand, result and workspace arrays."""


class ExecutorError(ValueError, TVMError):
    """The program cannot be executed; the message names the op or input at fault."""


def _refuse_what_cannot_fit(pool_sizes: Mapping[str, int], function: func.FuncOp) -> None:
    """Refuse, before allocating, arenas and input buffers larger than the machine's memory
    (a hostile or mistaken shape would otherwise be a ``MemoryError`` deep in numpy)."""
    wanted = [(f"memory pool '{name}'", size, 0) for name, size in pool_sizes.items()]
    for i, arg in enumerate(function.body.block.args):
        if isinstance(arg.type, TensorType) and arg.type.has_static_shape():
            wanted.append((f"input '{_name_of(arg, i)}' ({arg.type})", byte_size(arg.type), arg.type.get_num_dims()))
    total = ("the arenas and inputs together", sum(n for _, n, _ in wanted), 0)
    for what, nbytes, rank in [*wanted, total]:
        message = too_large(what, nbytes, rank)
        if message is not None:
            raise ExecutorError(message)


def aligned_empty(nbytes: int, alignment: int = ARENA_ALIGNMENT) -> np.ndarray:
    """An uninitialised uint8 buffer of ``nbytes`` whose first byte is ``alignment``-aligned."""
    raw = np.empty(nbytes + alignment, np.uint8)
    start = (-raw.ctypes.data) % alignment
    return raw[start : start + nbytes]


def _view(raw: np.ndarray, offset: int, t: TensorType) -> np.ndarray:
    dt = numpy_dtype(dtype_of(t.element_type))
    return raw[offset : offset + byte_size(t)].view(dt).reshape(t.get_shape())


def _name_of(v: SSAValue, index: int) -> str:
    return v.name_hint if v.name_hint else f"arg{index}"


@dataclass
class StepProfile:
    """Time of one step (a memory.invoke or an input copy) in one profiled run."""

    index: int
    name: str
    ops: str
    seconds: float
    shapes: str


@dataclass
class OutsideArena:
    """Every byte of activation memory a model takes outside its planned arenas
    (``Executor.outside_arena``); the arenas plus these are the process's activation memory."""

    arena_bytes: int
    """The planned arenas (``memory.pool`` sizes)."""
    held_bytes: int
    """Arrays the executor made when it bound the steps and keeps for every run: temporaries
    inside fused functions (``CompiledFunction.scratch_bytes``) and storage the plan left
    ``external``. Inputs (``set_input``'s buffers) and constants are not counted."""
    run_bytes: int
    """Bytes of the arrays the steps allocated during one run (counted by
    ``runtime.allocations``: every numpy array allocation, not a list of known culprits)."""
    run_peak: int
    """The most of them held at once."""
    run_count: int
    """How many allocations one run made."""
    steps: list[tuple[int, str, str, int, int]]
    """``(index, function, ops, bytes, count)`` of each step that allocated during the run."""

    @property
    def total_bytes(self) -> int:
        """What lies outside the arenas at the worst moment of a run."""
        return self.held_bytes + self.run_peak


@dataclass
class RunProgram:
    """What one ``run()`` calls, outside the kernels (``Executor.run_program``): the per-run
    overhead that no step's profile shows."""

    thunks: int
    """Python-level calls per run (each one call of ``run``'s loop)."""
    python: int
    """Of those, calls that run Python beyond one C call: a pool job of Python chunks (their
    chunks take the GIL on each thread), numpy operations, the input copy."""
    chains: int
    """Of those, chains: native jobs and C calls run one after another in one C call
    (``native.steps.join_steps``)."""
    chained: int
    """Native jobs and C calls inside those chains."""
    dnnl_runs: int
    """Runs of consecutive oneDNN steps (one C call each)."""
    engine_switches: int
    """Places where a oneDNN step follows a step of the native engine or the other way round
    (the input copies aside): each hands the cores from one thread team to the other."""


def _is_planned(fn: func.FuncOp) -> bool:
    arena = [op for op in fn.body.walk() if isinstance(op, AllocStorageOp) and not op.is_external]
    return all(s.placement is not None for s in arena)


def _pool(threads: int | WorkerPool | None) -> WorkerPool:
    if isinstance(threads, WorkerPool):
        return threads
    n = default_threads() if threads is None else threads
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ExecutorError(f"threads must be a positive integer, got {threads!r}")
    return WorkerPool.shared(n)


class Executor:
    """A planned program bound to its arenas; see the module docstring.

    ``threads`` (default: ``TVM_NUM_THREADS`` or the cores this process may use) is the
    number of threads that run the chunks of a step, the caller's included; a
    ``parallel.WorkerPool`` may be given instead of the process-wide pool of that size.
    ``step_compiler(fn, ins, outs, workspace)`` replaces the kernels of every
    ``memory.invoke`` (the C target binds each step to its generated C function).
    """

    def __init__(
        self,
        program: ModuleOp,
        *,
        entry: str = "main",
        fast: bool = True,
        use_c_kernels: bool = True,
        constants: Mapping[ConstantOp, np.ndarray] | None = None,
        threads: int | WorkerPool | None = None,
        backends: Sequence[str] = tuple(ENGINES),
        step_compiler: StepCompiler | None = None,
        use_numba: bool | None = None,
    ):
        use_c_kernels = deprecated_use_numba(use_c_kernels, use_numba)
        self.pool = _pool(threads)
        self.backends = tuple(backends)
        unknown = [b for b in self.backends if b not in ENGINES]
        if unknown:
            raise ExecutorError(f"unknown engine(s) {unknown} (known: {', '.join(ENGINES)})")
        self._sides: dict[str, Any] = {}
        self.step_compiler = step_compiler
        self.module = program
        self.constants = dict(constants or {})
        self._copies: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # see _private
        # constants in an engine's own format (oneDNN's reordered weights), made once for the
        # whole program: the functions of an unrolled recurrent layer's time steps and of
        # weight-tied layers (ALBERT) read the same weight, and one copy of it stays in cache
        self.shared_weights: dict[tuple[int, tuple], Any] = {}
        self.entry = entry
        self.fast = fast
        self.use_c_kernels = use_c_kernels
        self.functions = {op.sym_name.data: op for op in program.ops if isinstance(op, func.FuncOp)}
        fn = self.functions.get(entry)
        if fn is None:
            raise ExecutorError(f"the program has no @{entry} function")
        self.function = fn
        # a function that only returns constants (an ONNX graph folded at import) has nothing
        # to lower; anything else without storage has not been through lower-to-memory
        ops = list(fn.body.block.ops)
        computes = any(not isinstance(op, ConstantOp | func.ReturnOp) for op in ops)
        if computes and not any(isinstance(op, InvokeOp | AllocStorageOp) for op in ops):
            raise ExecutorError(
                f"@{entry} is not lowered to the memory dialect (run lower-to-memory and "
                "plan-memory, or use xrelay.build)"
            )
        if not _is_planned(fn):
            raise ExecutorError(
                f"@{entry} is not planned: some storage has no pool and offset (run plan-memory)"
            )
        self.pool_sizes: dict[str, int] = {}
        for op in program.ops:
            if isinstance(op, PoolOp):
                if op.size is None:
                    raise ExecutorError(f"memory.pool @{op.pool_name} has no planned size")
                self.pool_sizes[op.pool_name] = op.size.value.data
        _refuse_what_cannot_fit(self.pool_sizes, self.function)
        self.arenas = {name: aligned_empty(size) for name, size in self.pool_sizes.items()}
        self.external_bytes = 0
        self._relay_interp: Any = None
        self._compile()

    # ----------------------------------------------------------------------------------------
    # Compilation
    # ----------------------------------------------------------------------------------------

    def _compile(self) -> None:
        block = self.function.body.block
        env: dict[SSAValue, Any] = {}
        self.input_names: list[str] = []
        self.input_buffers: list[np.ndarray] = []
        self.input_types: list[TensorType] = []
        for i, arg in enumerate(block.args):
            t = arg.type
            if not isinstance(t, TensorType) or not t.has_static_shape():
                raise ExecutorError(f"input '{_name_of(arg, i)}' has no static tensor type ({t})")
            # aligned as the arena is: a step may read the input here (``_input_copies``)
            buf = _view(aligned_empty(byte_size(t)), 0, t)
            env[arg] = buf
            self.input_names.append(_name_of(arg, i))
            self.input_buffers.append(buf)
            self.input_types.append(t)
        input_copies = _input_copies(block)
        read_in_place = {op.dest: op.source for op, how in input_copies.items() if how == "read"}
        self.steps: list[tuple[str, str, CompiledFunction]] = []
        self.step_backends: list[str] = []
        """Which engine runs each step (a name of ``ENGINES``; "c" for the C target's steps)."""
        self.step_dests: list[list[np.ndarray]] = []
        self.tensor_views: dict[str, np.ndarray] = {}
        self.scratch_bytes = 0
        for op in block.ops:
            if isinstance(op, AllocStorageOp):
                placement = op.placement
                if placement is not None and not op.is_external:
                    pool, offset = placement
                    arena = self.arenas.get(pool)
                    if arena is None:
                        raise ExecutorError(
                            f"storage placed in pool '{pool}', which is not declared"
                        )
                    if offset + op.nbytes > arena.size:
                        raise ExecutorError(
                            f"storage of {op.nbytes} bytes at offset {offset} lies outside pool "
                            f"'{pool}' of {arena.size} bytes"
                        )
                    env[op.result] = arena[offset : offset + op.nbytes]
                else:
                    env[op.result] = aligned_empty(op.nbytes)
                    self.external_bytes += op.nbytes
            elif isinstance(op, AllocTensorOp):
                t = op.result.type
                assert isinstance(t, TensorType)
                source = read_in_place.get(op.result)
                view = _view(env[op.storage], op.offset.value.data, t) if source is None else env[source]
                env[op.result] = view
                self.tensor_views[op.result.name_hint or f"t{len(self.tensor_views)}"] = view
            elif isinstance(op, AliasOp):
                t = op.result.type
                assert isinstance(t, TensorType)
                env[op.result] = env[op.source].reshape(t.get_shape())
            elif isinstance(op, ConstantOp):
                value = self.constants.get(op)
                env[op.result] = op.numpy() if value is None else value
            elif isinstance(op, CopyOp):
                src, dst = env[op.source], env[op.dest]
                compiled = CompiledFunction("memory.copy")
                how = input_copies.get(op)
                if how == "slot":
                    # the input's own slot: set_input writes there, the step copies nothing
                    index = block.args.index(op.source)  # type: ignore[arg-type]
                    self.input_buffers[index] = env[op.source] = dst
                elif how == "read":
                    pass  # the slot's readers were bound to the input's buffer itself
                else:
                    compiled.thunks.append(("copy", "copy", _copy_thunk(dst, src, self.pool)))
                self.steps.append(("memory.copy", "copy", compiled))
                self.step_backends.append(TAKES_EVERY_STEP)
                self.step_dests.append([dst])
            elif isinstance(op, InvokeOp):
                self.steps.append(self._compile_invoke(op, env))
                self.step_dests.append([env[v] for v in op.outs])
            elif isinstance(op, KillOp | PoolOp):
                continue
            elif isinstance(op, func.ReturnOp):
                self.outputs = self._private([env[v] for v in op.arguments])
                self.output_types = [v.type for v in op.arguments]
            else:
                raise ExecutorError(f"cannot execute '{op.name}' in @{self.entry}")
        self._park_before_engines()
        self.uses_blas = any(
            b == TAKES_EVERY_STEP and any(_may_call_blas(f, t) for _, f, t in c.thunks)
            for (_, _, c), b in zip(self.steps, self.step_backends)
        )
        """Whether a step may call numpy's BLAS (a native step's thunk that is not a C call nor
        an elementwise or copy pass): only then does a run limit BLAS to one thread
        (``blas_single_thread``, 10-18 us a run with OpenBLAS loaded, for nothing when every
        step is oneDNN's or C's: the int8 models)."""
        self._thunks = self._join_runs()
        self._thunks_one = self._join_runs(one=True) if self.pool.threads > 1 else None
        self.chooser = RunChooser(spare=self.pool.threads - 1)
        self._parts_switch: tuple[Callable[[int], Any], Callable[[], float]] | None = None
        """Turns the one-thread program's steps cut in parts (``dnnl.parts``) on or off; the
        CPU seconds of the threads that help run them."""
        for engine, side in self._sides.items():
            switch = getattr(side, "parts_switch", None)
            found = switch([c for (_, _, c), b in zip(self.steps, self.step_backends) if b == engine]) if switch else None
            self._parts_switch = self._parts_switch or found
        for side in self._sides.values():
            settle = getattr(side, "settle", None)
            if settle is not None:
                settle()  # (every step is bound: what only binding needed goes back)
        self.parts_choice = PartsChoice() if self._thunks_one is not None and self._parts_switch else None
        """Whether each one-thread run runs those steps in parts (``parallel.PartsChoice``)."""
        if self._thunks_one is not None:
            idle_cpu_seconds()  # opens /proc/stat and makes its buffer here, not in a run
        """Chooses each run's mode: all threads, or one (``parallel.RunChooser``)."""

    def _join_runs(self, one: bool = False) -> list[Any]:
        """``run``'s thunks: every step's, each run of consecutive steps of an engine with
        ``join_steps`` handed to it (oneDNN makes one C call of them; ``profile`` and
        ``step_outputs`` still run the steps one by one). With ``one``, the thunks the
        engines made for one thread, where they made some."""
        # a step that runs nothing (an input copy that copies nothing) is no step of a program
        kept = [(b, c) for b, (_, _, c) in zip(self.step_backends, self.steps) if c.thunks]
        backends, steps = [b for b, _ in kept], [c for _, c in kept]
        # both programs: the one-thread one runs the hosted native calls on a team of one
        # (an unrolled LSTM's time steps are a oneDNN dense and elementwise loops in turn)
        backends, steps = self._host_native(backends, steps)
        if not one:
            self.program = list(zip(backends, steps))
            """The all-threads program's steps, native ones hosted by another engine joined."""
        out: list[Any] = []
        i = 0
        while i < len(steps):
            join = getattr(self._sides.get(backends[i]), "join_steps", None)
            if join is None:
                out.extend(t for _, _, t in steps[i].thunks)
                i += 1
                continue
            j = i
            while j < len(steps) and backends[j] == backends[i]:
                j += 1
            out.extend(join(steps[i:j], self.pool.park, one))
            i = j
        return out

    def _host_native(self, backends: list[str], steps: list[CompiledFunction]) -> tuple[list[str], list[CompiledFunction]]:
        """The steps as run's programs join them: each run of consecutive
        steps of the native engine whose thunks are all jobs of C parts or single C calls
        (``native.steps.chain_link``: the input copy, the int8 and loop kernels), next to a
        step of an engine whose run-time side hosts such jobs in its own joined runs
        (``host_native``: oneDNN runs them on its OpenMP team), becomes one step of that
        engine: no hand-over of the cores from one thread team to the other and back, and
        no Python between them."""
        def linkable(c: CompiledFunction) -> bool:
            return bool(c.thunks) and all(chain_link(t) is not None for _, _, t in c.thunks)

        out_b: list[str] = []
        out_s: list[CompiledFunction] = []
        i, n = 0, len(steps)
        while i < n:
            j = i
            while j < n and backends[j] == TAKES_EVERY_STEP and linkable(steps[j]):
                j += 1
            hosted = None
            for engine in (out_b[-1] if out_b else None, backends[j] if j < n else None):
                host = getattr(self._sides.get(engine or ""), "host_native", None)
                if j > i and host is not None:
                    thunks = [t for c in steps[i:j] for _, _, t in c.thunks]
                    hosted = host([chain_link(t)[1:] for t in thunks], self.pool.threads, thunks)  # type: ignore[index]
                    if hosted is not None:
                        out_b.append(engine)  # type: ignore[arg-type]
                        out_s.append(hosted)
                        break
            if hosted is None:
                j = max(j, i + 1)
                out_b += backends[i:j]
                out_s += steps[i:j]
            i = j
        return out_b, out_s

    def _park_before_engines(self) -> None:
        """A step of an engine with ``PARK_BEFORE`` after another engine's step first parks
        the pool's workers: they spin between jobs, and that engine's own threads (oneDNN's
        OpenMP team) need those cores."""
        parks = {name for name, side in self._sides.items() if getattr(side, "PARK_BEFORE", False)}
        previous = None  # the engine of the last step that runs something
        for i in range(len(self.steps)):
            if not self.steps[i][2].thunks:
                continue  # (an input copy that copies nothing)
            engine = self.step_backends[i]
            switches, previous = previous is not None and previous != engine, engine
            if engine in parks and switches:
                thunks = self.steps[i][2].thunks
                op_name, family, run = thunks[0]
                park = self.pool.park

                def parked(run=run, park=park) -> None:
                    park()
                    run()

                parked.parks = run  # type: ignore[attr-defined]  # (what run_program counts)
                thunks[0] = (op_name, family, parked)

    def _compile_invoke(
        self, op: InvokeOp, env: dict[SSAValue, Any]
    ) -> tuple[str, str, CompiledFunction]:
        name = op.callee_name
        fn = self.functions.get(name)
        if fn is None:
            raise ExecutorError(f"memory.invoke of unknown function @{name}")
        ins = [env[v] for v in op.inputs]
        outs = [env[v] for v in op.outs]
        ws = env[op.workspace[0]] if op.workspace else None
        if self.step_compiler is not None:
            compiled = self.step_compiler(fn, self._private(ins), outs, ws)
            self.step_backends.append("c")
            ops = ", ".join(dict.fromkeys(n for n, _, _ in compiled.thunks))
            return name, ops, compiled
        # BYOC: the engine the compile-time side partitioned the function to (relay.compiler),
        # if chosen, then the engine that takes every step
        partitioned = fn.attributes.get("relay.compiler")
        order = [TAKES_EVERY_STEP]
        if isinstance(partitioned, StringAttr) and partitioned.data in self.backends:
            order.insert(0, partitioned.data)
        try:
            for engine in order:
                if engine == TAKES_EVERY_STEP or self.step_compiler is not None:
                    ins = self._private(ins)  # kernels that read their constants at every run
                compiled = self._side(engine).bind_step(self, fn, op, ins, outs, ws)
                if compiled is not None:
                    break
        except KernelError as e:
            raise ExecutorError(f"step {len(self.steps)} (@{name}): {e}") from None
        assert compiled is not None, "the last engine takes every step"
        self.step_backends.append(engine)
        self.scratch_bytes += compiled.scratch_bytes
        ops = ", ".join(dict.fromkeys(n for n, _, _ in compiled.thunks))
        return name, ops, compiled

    def _private(self, arrays: list[Any]) -> list[Any]:
        """``arrays`` with each view of a mapped params file replaced by a private copy (one per
        constant, ``npz.private_copy``): a truncated or rewritten params file then changes
        nothing a run reads (the oneDNN engine reads its weights once, reordering them)."""
        out = []
        for a in arrays:
            if isinstance(a, np.ndarray) and file_mapping_of(a) is not None:
                copy = self._copies.get(id(a))
                if copy is None or copy[0] is not a:
                    copy = self._copies[id(a)] = (a, private_copy(a))
                a = copy[1]
            out.append(a)
        return out

    def _side(self, engine: str) -> Any:
        """The engine's run-time side, imported when a step first needs it."""
        side = self._sides.get(engine)
        if side is None:
            side = self._sides[engine] = run_side(engine)
        return side

    def _call_reference(self, fn: func.FuncOp, args: tuple[Any, ...]) -> Sequence[Any]:
        if self._relay_interp is None:
            from xrelay.runtime.interpreter import RelayInterpreter

            self._relay_interp = RelayInterpreter(self.module)
        return self._relay_interp.call_op(fn, args)

    # ----------------------------------------------------------------------------------------
    # Running
    # ----------------------------------------------------------------------------------------

    @property
    def arena_bytes(self) -> int:
        """Bytes of all arenas together (the plan's pool sizes)."""
        return sum(self.pool_sizes.values())

    @property
    def threads(self) -> int:
        """Threads that run a step's chunks (the caller's included)."""
        return self.pool.threads

    def run(self) -> None:
        """Run every step on the current inputs; results stay in ``self.outputs`` (views).

        At the end the pool's workers, which spin between the steps' jobs, are parked
        (``WorkerPool.park``): they take no core between runs.
        """
        one = self._thunks_one is not None and self.chooser.choose() == 1
        first_ways = self.pool.first_ways
        # in one-thread runs, whether the other cores were idle (a load that left)
        idle = idle_cpu_seconds() if one else None
        way = self.parts_choice.choose() if one and self.parts_choice is not None else -1
        helped = 0.0
        if way >= 0:
            self._parts_switch[0](way)  # type: ignore[index]
            # the part workers' time on the other cores counts as idle time (a team would
            # have had it): without it the signal saw a free core busy while parts ran
            helped = self._parts_switch[1]()  # type: ignore[index]
        start = time.perf_counter()
        with self._blas_limit(), serial_jobs() if one else contextlib.nullcontext():
            for t in self._thunks_one if one else self._thunks:  # type: ignore[union-attr]
                t()
        seconds = time.perf_counter() - start
        if way >= 0:
            self.parts_choice.record(way, seconds)  # type: ignore[union-attr]
        self.pool.park()
        if self._thunks_one is not None:
            if idle is not None:
                after = idle_cpu_seconds()
                idle = None if after is None else after - idle
                if idle is not None and way >= 0:
                    idle += self._parts_switch[1]() - helped  # type: ignore[index]
            self.chooser.record(int(one), seconds, self.pool.first_ways == first_ways, idle)

    def run_program(self, one: bool = False) -> RunProgram:
        """What ``run`` calls per run with all threads (``one``: the one-thread program),
        counted from its thunks (``RunProgram``)."""
        thunks = [getattr(t, "parks", t) for t in (self._thunks_one if one else None) or self._thunks]
        chains = [t for t in thunks if hasattr(t, "chained")]
        dnnl = [t for t in thunks if hasattr(t, "joined") or hasattr(t, "dnnl_run")]
        single = [t for t in thunks if hasattr(t, "native_job") or hasattr(t, "c_call")]
        program = zip(self.step_backends, (c for _, _, c in self.steps)) if one else self.program
        engines = [b for b, c in program if c.thunks]  # (an input copied in place: no step)
        return RunProgram(
            thunks=len(thunks),
            python=len(thunks) - len(chains) - len(dnnl) - len(single),
            chains=len(chains),
            chained=sum(t.chained for t in chains),
            dnnl_runs=len(dnnl),
            engine_switches=sum(a != b for a, b in zip(engines, engines[1:])),
        )

    def _blas_limit(self) -> contextlib.AbstractContextManager:
        return blas_single_thread() if self.uses_blas else contextlib.nullcontext()

    def profile(self) -> tuple[list[StepProfile], dict[str, float]]:
        """Run once, timing each step and each op family (im2col, matmul, ...), with the
        program ``run`` prefers now (all threads or one, ``RunChooser``)."""
        steps: list[StepProfile] = []
        families = dict.fromkeys(FAMILIES, 0.0)
        clock = time.perf_counter
        mean = self.chooser.mean
        one = self._thunks_one is not None and 0 <= mean[1] < mean[0]
        with blas_single_thread(), serial_jobs() if one else contextlib.nullcontext():
            for index, (name, ops, compiled) in enumerate(self.steps):
                start = clock()
                single = (getattr(compiled, "thunk_parts", None) or getattr(compiled, "thunk_one", None)) if one else None
                for _, fam, t in compiled.thunks:
                    t0 = clock()
                    (single or t)()
                    families[fam] += clock() - t0
                steps.append(StepProfile(index, name, ops, clock() - start, ""))
        return steps, families

    def outside_arena(self) -> OutsideArena:
        """Run once (on the current inputs) counting, step by step, every array allocated
        outside the arenas (``runtime.allocations.count_allocations``), and add what the
        bound steps hold. Counted on a one-thread twin of this executor when it has several
        threads: numpy's allocation hook sees the calling thread only, and the kernels are
        the same for any thread count."""
        from xrelay.runtime.allocations import count_allocations

        ex = self
        if self.threads > 1:
            ex = Executor(
                self.module, entry=self.entry, fast=self.fast, use_c_kernels=self.use_c_kernels,
                constants=self.constants, threads=1, backends=self.backends,
                step_compiler=self.step_compiler,
            )  # fmt: skip
            for mine, theirs in zip(self.input_buffers, ex.input_buffers):
                np.copyto(theirs, mine)
        steps: list[tuple[int, str, str, int, int]] = []
        total = peak = count = kept = 0  # kept: still held after their step
        with blas_single_thread():
            for index, (name, ops, compiled) in enumerate(ex.steps):
                with count_allocations() as counted:
                    compiled()
                if counted.count:
                    steps.append((index, name, ops, counted.bytes, counted.count))
                total += counted.bytes
                count += counted.count
                peak = max(peak, kept + counted.peak)
                kept += counted.live
        return OutsideArena(
            arena_bytes=ex.arena_bytes,
            held_bytes=ex.scratch_bytes + ex.external_bytes,
            run_bytes=total,
            run_peak=peak,
            run_count=count,
            steps=steps,
        )

    def step_outputs(self) -> list[list[np.ndarray]]:
        """Run once, step by step, and return a copy of every step's destinations."""
        results: list[list[np.ndarray]] = []
        with blas_single_thread():
            for (_, _, compiled), outs in zip(self.steps, self.step_dests):
                compiled()
                results.append([np.array(o, copy=True) for o in outs])
        return results


def deprecated_use_numba(use_c_kernels: bool, use_numba: bool | None) -> bool:
    """``use_c_kernels``, or the value of the deprecated ``use_numba`` (its old name, from when
    the loop kernels had numba twins), with a ``DeprecationWarning``, where that is given."""
    if use_numba is None:
        return use_c_kernels
    warnings.warn(
        "use_numba is deprecated: the loop kernels are C now; use use_c_kernels",
        DeprecationWarning,
        stacklevel=3,
    )
    return use_numba


def _input_copies(block: Any) -> dict[CopyOp, str]:
    """The copies of a graph input into its arena slot (``lower-to-memory``'s ``kind =
    "input"`` storage) that need not run, and how: the input is used by that copy only, the
    copy is the one write to the slot (no step's output, no other copy, through an alias
    either) and the slot holds that one tensor, of the input's type. Then

    * ``"slot"``: no other storage of the pool overlaps the slot (plans that keep an
      input's bytes to it: TVM's storage ids, the naive plan). The slot becomes the input's
      buffer: ``set_input`` writes there and it holds that input until the next
      ``set_input``, through any number of runs, as TVM's graph executor keeps its inputs;
    * ``"read"``: the plan reuses the slot's bytes after the input's last reader (the
      default, greedy-by-size). The readers are bound to the input's own buffer, which no
      step writes, instead of to the slot.

    Either way a run copies nothing into the arena (MnasNet's 224x224x3 input: 0.13 ms of
    8.2)."""
    root: dict[SSAValue, AllocStorageOp] = {}
    spans: dict[str, list[tuple[int, int, AllocStorageOp]]] = {}
    writes: dict[AllocStorageOp, int] = {}
    tensors: dict[AllocStorageOp, int] = {}
    for op in block.ops:
        if isinstance(op, AllocStorageOp):
            if op.placement is not None and not op.is_external:
                pool, offset = op.placement
                spans.setdefault(pool, []).append((offset, offset + op.nbytes, op))
        elif isinstance(op, AllocTensorOp) and isinstance(op.storage.owner, AllocStorageOp):
            root[op.result] = op.storage.owner
            tensors[op.storage.owner] = tensors.get(op.storage.owner, 0) + 1
        elif isinstance(op, AliasOp) and op.source in root:
            root[op.result] = root[op.source]
        elif isinstance(op, InvokeOp | CopyOp):
            for v in op.outs if isinstance(op, InvokeOp) else (op.dest,):
                if v in root:
                    writes[root[v]] = writes.get(root[v], 0) + 1
    found: dict[CopyOp, str] = {}
    for op in block.ops:
        if not (isinstance(op, CopyOp) and op.source in block.args and len(list(op.source.uses)) == 1):
            continue
        storage = root.get(op.dest)
        if (
            storage is None
            or storage.storage_kind != "input"
            or storage.placement is None
            or storage.is_external
            or writes.get(storage) != 1
            or tensors.get(storage) != 1
            or not isinstance(op.dest.owner, AllocTensorOp)
            or op.dest.type != op.source.type
        ):
            continue
        pool, start = storage.placement
        end = start + storage.nbytes
        alone = all(s is storage or e <= start or b >= end for b, e, s in spans.get(pool, ()))
        found[op] = "slot" if alone else "read"
    return found


def _may_call_blas(family: str, thunk: Any) -> bool:
    """Whether a native thunk may call numpy's BLAS: not a C call (``library.c_call``) or a
    job of C parts, nor numpy's elementwise or copy passes."""
    if hasattr(thunk, "c_call") or hasattr(thunk, "native_job"):
        return False
    return family not in ("elementwise", "copy")


COPY_PART_BYTES = 1 << 16
"""Least bytes of a part of a copy run on the pool (a part's hand-over costs ~1 us, 64 KiB
take ~3 us to copy)."""


def _copy_thunk(dst: np.ndarray, src: np.ndarray, pool: WorkerPool) -> Any:
    """``dst[...] = src``: for C-contiguous arrays of one type and shape that do not overlap,
    ``memmove`` calls made from C (``library.c_call``), in parts on the pool's threads when
    the copy is large (``library.call_job``), so the copy chains with the native jobs after it
    and wakes the pool's workers while it runs; else numpy's ``copyto``."""
    same = dst.shape == src.shape and dst.dtype == src.dtype
    if not (same and dst.flags.c_contiguous and src.flags.c_contiguous) or np.may_share_memory(dst, src):

        def copy() -> None:
            np.copyto(dst, src)

        return copy
    d, s, n = dst.ctypes.data, src.ctypes.data, dst.nbytes
    whole = c_call(ctypes.memmove, d, s, n, keep=(dst, src))
    parts = min(4 * pool.threads, n // COPY_PART_BYTES)
    if parts < 2:
        return whole
    cut = [n * i // parts // 64 * 64 for i in range(parts)] + [n]
    calls = [c_call(ctypes.memmove, d + lo, s + lo, hi - lo, keep=(dst, src)) for lo, hi in zip(cut, cut[1:])]
    return call_job(pool, calls, whole) or whole


# --------------------------------------------------------------------------------------------
# The memory interpreter with the executor's kernels
# --------------------------------------------------------------------------------------------


def run_memory_compiled(
    program: ModuleOp,
    inputs: Mapping[str, Any] | Sequence[Any] | None = None,
    *,
    entry: str = "main",
    fast: bool = True,
    use_c_kernels: bool = True,
    poison: bool = True,
    threads: int | WorkerPool | None = None,
    use_numba: bool | None = None,
) -> list[np.ndarray]:
    """Interpret a planned program with ``run_memory``'s machinery (arenas, aliases, kills,
    poisoning) but run each ``memory.invoke`` with the executor's compiled kernels.

    This is the bitwise reference for the executor when its kernels round differently from
    the reference kernels (the C loop kernels' depthwise convolutions); with ``fast=False``
    and ``use_c_kernels=False`` it equals ``run_memory``. ``threads`` is the executor's argument:
    the kernels are chunked the same way.
    """
    use_c_kernels = deprecated_use_numba(use_c_kernels, use_numba)
    pool = _pool(threads)
    from xdsl.interpreter import (  # (not on run's path)
        Interpreter,
        PythonValues,
        impl,
        register_impls,
    )

    from xrelay.runtime.memory_interpreter import MemoryFunctions, MemoryRunner

    @register_impls
    class _Compiled(MemoryFunctions):
        @impl(InvokeOp)
        def run_invoke(
            self, interpreter: Interpreter, op: InvokeOp, args: PythonValues
        ) -> PythonValues:
            n_in, n_out = len(op.inputs), len(op.outs)
            ins, outs = args[:n_in], args[n_in : n_in + n_out]
            ws = args[n_in + n_out :]
            if self.poison:
                for w in ws:
                    w.fill(0xA5)
            fn = self._funcs[op.callee_name]
            compiled = bind_function(
                fn, op, list(ins), list(outs), ws[0] if ws else None, fast=fast, use_c_kernels=use_c_kernels,
                pool=pool, call_function=lambda f, a: self._relay_interpreter().call_op(f, a),
                lookup=self._funcs.get,
            )  # fmt: skip
            compiled()
            return ()

    runner = MemoryRunner(program, entry, True, poison)
    runner.interpreter.register_implementations(
        _Compiled(runner.module, runner.arenas, poison), override=True
    )
    with blas_single_thread():
        return runner.run(inputs)
