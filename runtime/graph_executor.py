"""The graph-executor module: TVM's ``GraphModule`` API over the arena executor.

``xrelay.build(mod, params)``, ``xrelay.runtime.load(...)`` or ``xrelay.runtime.create(program)``
return a ``GraphModule``::

    m = xrelay.build(mod, params, opt_level=3, plan="greedy-by-size")
    m.set_input("data", x)          # or m.set_input(data=x), or m.run(data=x)
    m.run()
    y = m.get_output(0)             # a copy; get_output(0, out=buf) copies into buf
    print(m.benchmark(repeat=5, number=5))
    print(m.memory_report())        # the plan: pools, peak, lower bound

**Inputs** are ``@main``'s parameters, by name (their SSA names) or index. ``set_input``
copies the value into a buffer the module owns, checking name, shape and dtype (a clear
``GraphModuleError`` names the input and what it expected); a float64 array is not silently
narrowed to float32: dtypes must match exactly (cast first).

**Params** are the constants of the planned ``@main`` (weights after optimisation), named
``p0, p1, ...`` in the order ``@main`` first uses them, like the params of TVM's
``relay.build``. ``save_params()`` gives them as the bytes of an ``.npz``; ``load_params``
replaces those it names (checking shape and dtype; names that are not params are ignored, as
TVM ignores them). ``set_input`` also accepts a param name. ``share_params(other, bytes)``
makes this module use ``other``'s arrays for the params named in ``bytes`` (no copy).
Replacing params rebinds the steps (a few milliseconds), never in ``run``.

**Threads**: ``GraphModule(..., threads=n)`` (``xrelay.build(..., threads=n)``; default
``TVM_NUM_THREADS`` or the cores this process may use) runs each big kernel in chunks on
``n`` threads; results are the same bits for every ``n`` (``xrelay.runtime.parallel``).

**One module, one thread at a time.** A module owns one set of input buffers, arenas and
outputs, so two threads using it at once would overwrite each other's tensors. It does not
serialise them (a lock around ``run`` alone cannot keep another thread's ``set_input`` out of
the gap between ``set_input``, ``run`` and ``get_output``); it *detects* overlap: a call to
``set_input``, ``get_input``, ``run``, ``get_output``, ``benchmark``, ``profile``,
``load_params`` or ``share_params`` while another thread is inside one of them raises
``ConcurrentUseError`` naming both threads and calls. Callers that share a module hold their
own lock over the whole ``set_input .. get_output`` sequence; or each thread makes its own
module (``create(m.program)``, then ``share_params`` to share the weights).

**Views**: ``memory_report()`` and ``graph_json()`` read the planned program
(``runtime.plan_report``, ``runtime.liveness``, ``runtime.graph_json``), whoever made the module.

**Debug**: ``GraphModule(..., debug=True)`` (or ``DebugModule``) records every step's outputs
and time on each ``run`` (``debug_get_output(step)``, ``profile()`` for a per-op table).
"""

from __future__ import annotations

import functools
import io
import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr

from xrelay.dialects import module_op
from xrelay.dialects.relay import ConstantOp, dtype_of, print_options, shape_of
from xrelay.dialects.relay.dtypes import dtype_from_numpy, from_stored
from xrelay.error import TVMError
from xrelay.runtime.engines import ENGINES
from xrelay.runtime.executor import Executor, ExecutorError, StepCompiler, deprecated_use_numba
from xrelay.runtime.graph_json import graph_json
from xrelay.runtime.liveness import memory_report
from xrelay.runtime.ndarray import NDArray
from xrelay.runtime.npz import read_npz
from xrelay.runtime.parallel import blas_single_thread
from xrelay.runtime.params import ParamsFormatError, is_param_dict, load_param_dict
from xrelay.runtime.plan_report import format_report

__all__ = [
    "BenchmarkResult",
    "ConcurrentUseError",
    "DebugModule",
    "GraphModule",
    "GraphModuleError",
    "create",
    "main_constants",
]


def main_constants(program: ModuleOp, entry: str) -> list[ConstantOp]:
    """@main's constants in the order the steps first use them (TVM's p0, p1, ...)."""
    fn = next(op for op in program.ops if isinstance(op, func.FuncOp) and op.sym_name.data == entry)
    seen: dict[ConstantOp, None] = {}
    for op in fn.body.block.ops:
        for v in op.operands:
            if isinstance(v.owner, ConstantOp):
                seen.setdefault(v.owner, None)
    for op in fn.body.block.ops:
        if isinstance(op, ConstantOp):
            seen.setdefault(op, None)
    return list(seen)


class GraphModuleError(ValueError, TVMError):
    """Wrong use of a module: unknown input, wrong shape or dtype, bad params."""


class ConcurrentUseError(GraphModuleError):
    """Two threads used one module at the same time (see the module docstring)."""


def _exclusive(method):
    """Run ``method`` as the module's only user: a call from another thread while one is
    inside raises ``ConcurrentUseError`` (calls nest within one thread, as ``benchmark``
    calls ``run``)."""

    @functools.wraps(method)
    def guarded(self: GraphModule, *args: Any, **kwargs: Any) -> Any:
        me = threading.current_thread()
        with self._guard:
            if self._user is not None and self._user[0] is not me:
                thread, call = self._user
                raise ConcurrentUseError(
                    f"GraphModule.{method.__name__}() called from thread '{me.name}' while "
                    f"thread '{thread.name}' is inside {call}(): one module has one set of "
                    "input, arena and output buffers, so threads must not use it at the same "
                    "time; hold a lock of your own over set_input .. get_output, or give each "
                    "thread its own module (xrelay.runtime.create(m.program), then share_params)"
                )
            if self._user is None:
                self._user = (me, method.__name__)
            self._depth += 1
        try:
            return method(self, *args, **kwargs)
        finally:
            with self._guard:
                self._depth -= 1
                if self._depth == 0:
                    self._user = None

    return guarded


@dataclass
class BenchmarkResult:
    """Seconds per run of each repeat (``results``) and their statistics."""

    results: list[float]
    number: int = 1
    mean: float = field(init=False)
    median: float = field(init=False)
    std: float = field(init=False)
    min: float = field(init=False)
    max: float = field(init=False)

    def __post_init__(self) -> None:
        r = self.results
        if not r:
            raise ValueError("a benchmark needs at least one result")
        # numpy's, not the statistics module's: that imports fractions and decimal (0.4 MB
        # resident) into every deployed process for a benchmark it may never run
        a = np.asarray(r, dtype=np.float64)
        self.mean = float(a.mean())
        self.median = float(np.median(a))
        self.std = float(a.std()) if len(r) > 1 else 0.0
        self.min = min(r)
        self.max = max(r)

    def __str__(self) -> str:
        # TVM's summary, character for character: centred columns of width 12.
        return (
            f"Execution time summary:\n"
            f"{'mean (ms)':^12} {'median (ms)':^12} {'max (ms)':^12} "
            f"{'min (ms)':^12} {'std (ms)':^12}\n"
            f"{self.mean * 1000:^12.4f} {self.median * 1000:^12.4f} {self.max * 1000:^12.4f} "
            f"{self.min * 1000:^12.4f} {self.std * 1000:^12.4f}"
            "               "
        )

    def __repr__(self) -> str:
        return (
            f"BenchmarkResult(min={self.min}, mean={self.mean}, median={self.median}, "
            f"max={self.max}, std={self.std}, results={self.results})"
        )


class GraphModule:
    """A planned program ready to run; see the module docstring."""

    def __init__(
        self,
        program: ModuleOp,
        *,
        entry: str = "main",
        debug: bool = False,
        fast: bool = True,
        use_c_kernels: bool = True,
        plan_info: Any = None,
        threads: int | None = None,
        backends: Sequence[str] = tuple(ENGINES),
        step_compiler: StepCompiler | None = None,
        use_numba: bool | None = None,
    ):
        use_c_kernels = deprecated_use_numba(use_c_kernels, use_numba)
        self.program = program
        self.backends = tuple(backends)
        self._step_compiler = step_compiler
        self._guard = threading.Lock()  # guards _user/_depth (see _exclusive)
        self._user: tuple[threading.Thread, str] | None = None
        self._depth = 0
        self._threads = threads
        self.entry = entry
        self.debug = debug
        self._fast = fast
        self._use_c_kernels = use_c_kernels
        self._plan_info = plan_info
        self._constants = main_constants(program, entry)
        self.param_names = [f"p{i}" for i in range(len(self._constants))]
        self._params: dict[str, np.ndarray] = {}
        try:
            self._executor = Executor(
                program, entry=entry, fast=fast, use_c_kernels=use_c_kernels, threads=threads,
                backends=self.backends, step_compiler=step_compiler,
            )
        except ExecutorError as e:
            raise GraphModuleError(str(e)) from None
        self._input_index = {n: i for i, n in enumerate(self._executor.input_names)}
        self._debug_outputs: list[list[np.ndarray]] = []
        self._debug_times: list[float] = []

    # ---------------------------------------------------------------------------------------
    # Inputs
    # ---------------------------------------------------------------------------------------

    @property
    def executor(self) -> Executor:
        """The compiled step list (arenas, views, thunks)."""
        return self._executor

    def get_num_inputs(self) -> int:
        """The number of graph inputs (``@main``'s parameters)."""
        return len(self._executor.input_names)

    def get_input_index(self, name: str) -> int:
        """The index of input ``name``; -1 if there is none (as TVM)."""
        return self._input_index.get(name, -1)

    def get_input_info(self) -> tuple[dict[str, tuple[int, ...]], dict[str, str]]:
        """``(shape_dict, dtype_dict)`` of the graph inputs, by name (TVM's order)."""
        ex = self._executor
        shapes = {n: tuple(shape_of(t)) for n, t in zip(ex.input_names, ex.input_types)}
        dtypes = {n: dtype_of(t.element_type) for n, t in zip(ex.input_names, ex.input_types)}
        return shapes, dtypes

    def _index(self, key: int | str) -> int:
        if isinstance(key, bool) or not isinstance(key, int | str | np.integer):
            raise GraphModuleError(f"an input is named by a string or an index, got {key!r}")
        if isinstance(key, str):
            i = self._input_index.get(key)
            if i is None:
                known = ", ".join(self._executor.input_names) or "none"
                raise GraphModuleError(f"unknown input '{key}' (inputs: {known})")
            return i
        n = self.get_num_inputs()
        if not -n <= int(key) < n:
            raise GraphModuleError(f"input index {key} out of range: the graph has {n} input(s)")
        return int(key) % n

    @_exclusive
    def get_input(self, index: int | str, out: np.ndarray | None = None) -> np.ndarray:
        """A copy of input ``index`` (a name or a position), or copied into ``out``."""
        buf = self._executor.input_buffers[self._index(index)]
        if out is None:
            return buf.copy()
        np.copyto(out, buf)
        return out

    @_exclusive
    def set_input(self, key: int | str | None = None, value: Any = None, **inputs: Any) -> None:
        """Set one input (``set_input("x", arr)`` / ``set_input(0, arr)``) and/or several by
        keyword (``set_input(x=arr, y=arr2)``); a param name sets that param."""
        if key is not None:
            if value is None:
                raise GraphModuleError(f"set_input({key!r}) needs a value")
            self._set_one(key, value)
        elif value is not None:
            raise GraphModuleError("set_input got a value but no input name or index")
        for name, v in inputs.items():
            self._set_one(name, v)

    def _set_one(self, key: int | str, value: Any) -> None:
        if isinstance(key, str) and key not in self._input_index and key in self.param_names:
            self._set_params({key: value})
            return
        i = self._index(key)
        name = self._executor.input_names[i]
        buf = self._executor.input_buffers[i]
        arr = value.numpy() if hasattr(value, "numpy") else np.asarray(value)
        want_dt = dtype_of(self._executor.input_types[i].element_type)
        arr = from_stored(arr, want_dt)
        if arr.shape != buf.shape:
            raise GraphModuleError(
                f"input '{name}': expected shape {buf.shape} ({want_dt}), got {arr.shape}"
            )
        if arr.dtype != buf.dtype:
            raise GraphModuleError(
                f"input '{name}': expected dtype {want_dt} (shape {buf.shape}), got {arr.dtype}"
            )
        np.copyto(buf, arr)

    # ---------------------------------------------------------------------------------------
    # Params
    # ---------------------------------------------------------------------------------------

    def get_params(self) -> dict[str, np.ndarray]:
        """The params by name (read-only views; the module's own arrays)."""
        return {n: self._param_array(n) for n in self.param_names}

    def _param_array(self, name: str) -> np.ndarray:
        arr = self._params.get(name)
        if arr is None:
            arr = self._constants[self.param_names.index(name)].numpy()
        return arr

    def save_params(self) -> bytes:
        """The params as the bytes of an ``.npz`` (``np.load(io.BytesIO(b))`` reads them)."""
        buf = io.BytesIO()
        np.savez(buf, **self.get_params())
        return buf.getvalue()

    @_exclusive
    def load_params(self, params_bytes: bytes | Mapping[str, Any]) -> None:
        """Replace the params named in ``params_bytes`` (``.npz`` bytes, or a dict)."""
        self._set_params(_read_params(params_bytes), copy=True)

    @_exclusive
    def share_params(self, other: GraphModule, params_bytes: bytes | Mapping[str, Any]) -> None:
        """Use ``other``'s arrays for the params named in ``params_bytes`` (no copy)."""
        names = _read_params(params_bytes)
        self._set_params(
            {n: other._param_array(n) for n in names if n in other.param_names}, copy=False
        )

    def _set_params(self, params: Mapping[str, Any], copy: bool = True) -> None:
        changed = False
        for name, value in params.items():
            if name not in self.param_names:
                continue
            arr = value.numpy() if hasattr(value, "numpy") else np.asarray(value)
            const = self._constants[self.param_names.index(name)]
            want = const.numpy()
            arr = from_stored(arr, dtype_from_numpy(want.dtype))
            if arr.shape != want.shape or arr.dtype != want.dtype:
                raise GraphModuleError(
                    f"param '{name}': expected {want.dtype} of shape {want.shape}, got "
                    f"{arr.dtype} of shape {arr.shape}"
                )
            self._params[name] = np.array(arr, copy=True) if copy else arr
            changed = True
        if changed:
            self._rebind()

    def _rebind(self) -> None:
        overrides = {self._constants[self.param_names.index(n)]: a for n, a in self._params.items()}
        inputs = [b.copy() for b in self._executor.input_buffers]
        self._executor = Executor(
            self.program,
            entry=self.entry,
            fast=self._fast,
            use_c_kernels=self._use_c_kernels,
            constants=overrides,
            threads=self._threads,
            backends=self.backends,
            step_compiler=self._step_compiler,
        )
        for buf, value in zip(self._executor.input_buffers, inputs):
            np.copyto(buf, value)

    # ---------------------------------------------------------------------------------------
    # Running
    # ---------------------------------------------------------------------------------------

    @_exclusive
    def run(self, **inputs: Any) -> None:
        """Set ``inputs`` (by name) if given, then run every step."""
        if inputs:
            self.set_input(**inputs)
        if self.debug:
            self._run_debug()
        else:
            self._executor.run()

    def _run_debug(self) -> None:
        ex = self._executor
        self._debug_outputs, self._debug_times = [], []
        with blas_single_thread():
            for (_, _, compiled), dests in zip(ex.steps, ex.step_dests):
                t0 = time.perf_counter()
                compiled()
                self._debug_times.append(time.perf_counter() - t0)
                self._debug_outputs.append([d.copy() for d in dests])

    def get_num_outputs(self) -> int:
        """The number of results of ``@main``."""
        return len(self._executor.outputs)

    @_exclusive
    def get_output(self, index: int, out: np.ndarray | None = None) -> np.ndarray:
        """A copy of output ``index`` (the arena is reused by the next run), or copied into
        ``out`` (which must have the output's shape and dtype)."""
        n = self.get_num_outputs()
        if (
            isinstance(index, bool)
            or not isinstance(index, int | np.integer)
            or not -n <= index < n
        ):
            raise GraphModuleError(
                f"output index {index!r} out of range: the graph has {n} output(s)"
            )
        value = self._executor.outputs[int(index)]
        if out is None:
            return np.array(value, copy=True).view(NDArray)
        if out.shape != value.shape or out.dtype != value.dtype:
            raise GraphModuleError(
                f"get_output({index}, out=...): out is {out.dtype} {out.shape}, the output is "
                f"{value.dtype} {value.shape}"
            )
        np.copyto(out, value)
        return out

    @_exclusive
    def benchmark(self, *args: Any, **kwargs: Any) -> BenchmarkResult:
        """Time ``run``: ``benchmark(repeat=5, number=5, min_repeat_ms=None, end_to_end=False,
        cooldown_interval_ms=None, repeats_to_cooldown=1, **inputs)``.

        ``repeat`` measurements, each the mean of ``number`` runs (seconds). ``min_repeat_ms``
        raises ``number`` until one repeat lasts that long; ``end_to_end`` includes copying the
        inputs in and every output out; ``cooldown_interval_ms`` sleeps between every
        ``repeats_to_cooldown`` repeats. One untimed run warms up first. TVM's form
        ``benchmark(dev, func_name="run", repeat=..., number=...)`` works too: a leading device
        and the function name (only ``"run"`` can be timed) are accepted and skipped.
        """
        rest = list(args)
        if rest and not isinstance(rest[0], int):  # TVM's leading device
            rest.pop(0)
        func_name = rest.pop(0) if rest and isinstance(rest[0], str) else kwargs.pop("func_name", "run")
        if func_name != "run":
            raise GraphModuleError(f"benchmark can only time 'run', not {func_name!r}")
        kwargs.pop("limit_zero_time_iterations", None)  # TVM's guard for zero timings
        return self._benchmark(*rest, **kwargs)

    _PACKED_FUNCS = (
        "set_input", "run", "get_output", "get_num_outputs", "get_input", "get_num_inputs",
        "get_input_index", "get_input_info", "load_params", "share_params", "benchmark",
    )

    def __getitem__(self, name: str) -> Any:
        """TVM's ``module["run"]`` style: the method of that name."""
        if name not in self._PACKED_FUNCS:
            raise KeyError(f"graph module has no function {name!r}; it has {', '.join(self._PACKED_FUNCS)}")
        return getattr(self, name)

    def _benchmark(
        self,
        repeat: int = 5,
        number: int = 5,
        min_repeat_ms: float | None = None,
        end_to_end: bool = False,
        cooldown_interval_ms: float | None = None,
        repeats_to_cooldown: int = 1,
        **inputs: Any,
    ) -> BenchmarkResult:
        if repeat < 1 or number < 1:
            raise GraphModuleError("benchmark needs repeat >= 1 and number >= 1")
        if inputs:
            self.set_input(**inputs)
        ex = self._executor
        current_inputs = [b.copy() for b in ex.input_buffers] if end_to_end else []
        outs = [np.empty_like(o) for o in ex.outputs] if end_to_end else []

        def once() -> None:
            if end_to_end:
                for i, v in enumerate(current_inputs):
                    self._set_one(i, v)
            self.run()
            if end_to_end:
                for i, o in enumerate(outs):
                    self.get_output(i, out=o)

        once()
        if min_repeat_ms:
            while True:
                t0 = time.perf_counter()
                for _ in range(number):
                    once()
                if (time.perf_counter() - t0) * 1000 >= min_repeat_ms:
                    break
                number *= 2
        results = []
        for r in range(repeat):
            t0 = time.perf_counter()
            for _ in range(number):
                once()
            results.append((time.perf_counter() - t0) / number)
            if cooldown_interval_ms and (r + 1) % max(1, repeats_to_cooldown) == 0:
                time.sleep(cooldown_interval_ms / 1000)
        return BenchmarkResult(results, number)

    # ---------------------------------------------------------------------------------------
    # Memory
    # ---------------------------------------------------------------------------------------

    @property
    def arena_bytes(self) -> int:
        """The bytes of all arenas (the plan's pool sizes)."""
        return self._executor.arena_bytes

    @property
    def plan_info(self) -> Any:
        """``(buffers, pools, plan)`` of the memory plan the arenas come from (None for a
        module loaded from an export, whose plan is in its program)."""
        return self._plan_info

    def memory_report(self) -> str:
        """The plan's report: per pool, peak with its step, lower bound and ratio."""
        if self._plan_info is not None:  # built here: the planner's own record (algorithm, time, optimality)
            return format_report(*self._plan_info)
        return memory_report(self.program, self.entry)

    def graph_json(self, mod_name: str = "default") -> dict[str, Any]:
        """TVM's graph-executor JSON of the program (see ``xrelay.runtime.graph_json``)."""
        return graph_json(self.program, self.entry, mod_name)

    # ---------------------------------------------------------------------------------------
    # Debug
    # ---------------------------------------------------------------------------------------

    def debug_get_output(self, node: int | str, out: np.ndarray | None = None) -> Any:
        """The outputs of step ``node`` (its index, or the name of the function it calls) as
        recorded by the last debug run: a list of arrays, or, with ``out`` (TVM's form),
        the step's first output copied into ``out``."""
        if not self._debug_outputs:
            raise GraphModuleError(
                "debug_get_output needs a debug run: build with xrelay.build(..., debug=True) "
                "(or GraphModule(..., debug=True)) and run it first"
            )
        steps = self._executor.steps
        if isinstance(node, str):
            found = [i for i, (name, _, _) in enumerate(steps) if name == node]
            if len(found) != 1:
                raise GraphModuleError(
                    f"debug_get_output: {len(found)} steps call {node!r} "
                    f"(steps: {', '.join(n for n, _, _ in steps)}); pass the step index"
                )
            node = found[0]
        if isinstance(node, bool) or not isinstance(node, int) or not -len(steps) <= node < len(steps):
            raise GraphModuleError(f"debug_get_output: no step {node!r} (the program has {len(steps)})")
        values = self._debug_outputs[node]
        if out is None:
            return values
        if out.shape != values[0].shape or out.dtype != values[0].dtype:
            raise GraphModuleError(
                f"debug_get_output({node}, out=...): out is {out.dtype} {out.shape}, the step's "
                f"output is {values[0].dtype} {values[0].shape}"
            )
        np.copyto(out, values[0])
        return out

    @_exclusive
    def profile(self, runs: int = 1) -> str:
        """Run ``runs`` times timing each step and op family; a table per step (slowest
        first) and one per op family (tabulate)."""
        from tabulate import tabulate  # (printing only: it imports importlib.metadata, 2.5 MB)
        total: dict[int, float] = {}
        families: dict[str, float] = {}
        backends = self._executor.step_backends
        steps = []
        for _ in range(max(1, runs)):
            steps, fams = self._executor.profile()
            for s in steps:
                total[s.index] = total.get(s.index, 0.0) + s.seconds
            for k, v in fams.items():
                families[k] = families.get(k, 0.0) + v
        runs = max(1, runs)
        all_time = sum(total.values()) or 1e-12
        rows = sorted(
            (
                [
                    s.index,
                    s.name,
                    backends[s.index],
                    s.ops,
                    total[s.index] / runs * 1000,
                    total[s.index] / all_time * 100,
                ]
                for s in steps
            ),
            key=lambda r: -r[4],
        )
        table = tabulate(
            rows,
            headers=["Step", "Function", "Backend", "Ops", "Time (ms)", "Percent"],
            floatfmt=(".0f", "", "", "", ".3f", ".1f"),
        )
        fam_rows = [[k, v / runs * 1000, v / all_time * 100] for k, v in families.items() if v > 0]
        fam_table = tabulate(
            sorted(fam_rows, key=lambda r: -r[1]),
            headers=["Op family", "Time (ms)", "Percent"],
            floatfmt=("", ".3f", ".1f"),
        )
        return f"{table}\n\n{fam_table}\nTotal: {all_time / runs * 1000:.3f} ms per run"

    def export(
        self, graph_json_path: str | os.PathLike, lib_mlir_path: str | os.PathLike,
        params_npz_path: str | os.PathLike,
    ) -> None:  # fmt: skip
        """Write the three files of TVM's ``(graph, lib, params)``: the graph JSON, the planned
        program as ``.mlir`` (every function, ``@main``'s constants printed by reference as
        ``relay.constant @p<k>``) and the params as ``.npz``; ``xrelay.runtime.load`` reads
        them back."""
        doc = self.graph_json()
        clone = self.program.clone()
        for k, op in enumerate(main_constants(clone, self.entry)):
            op.param_name = StringAttr(f"p{k}")
        external: dict[str, np.ndarray] = {}
        with print_options(external=external, external_min_elements=1):
            text = str(clone)
        external.update(self.get_params())
        with open(graph_json_path, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
        with open(lib_mlir_path, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        np.savez(params_npz_path, **external)


class DebugModule(GraphModule):
    """A ``GraphModule`` that records every step's outputs and time on each run."""

    def __init__(self, program: ModuleOp, **kwargs: Any):
        kwargs["debug"] = True
        super().__init__(program, **kwargs)


def _read_params(params: bytes | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(params, Mapping):
        return dict(params)
    if not isinstance(params, bytes | bytearray | memoryview):
        raise GraphModuleError(f"params must be .npz bytes or a dict, got {type(params).__name__}")

    if is_param_dict(params):  # TVM's format (relay.save_param_dict)
        try:
            return dict(load_param_dict(params))
        except ParamsFormatError as e:
            raise GraphModuleError(f"cannot read params: {e}") from None
    try:
        return read_npz(bytes(params))
    except (OSError, ValueError) as e:
        raise GraphModuleError(f"cannot read params: {e}") from None


def create(program: Any, *, debug: bool = False, **kwargs: Any) -> GraphModule:
    """A module for an already lowered and planned program (a ``ModuleOp`` or ``IRModule``)."""

    return GraphModule(module_op(program), debug=debug, **kwargs)
