"""``relay-run``: run a relay module with the reference interpreter.

    relay-run model.mlir --input x=x.npy [--params weights.npz] [--output out.npz]
    relay-run model.mlir --params weights.npz --random-inputs 7

The module is parsed with ``relay.constant @name`` references resolved from ``--params``;
the same file may also bind ``@main``'s parameters by name (entries that name neither are
ignored). Inputs come from ``--input NAME=FILE.npy`` (repeatable) or ``--input FILE.npz``
(every entry, by name); ``--random-inputs [SEED]`` fills the parameters still unbound with
random data (standard normal floats, small integers, fair bools; seed 0 by default).

For each result of the entry function it prints one line: index, shape, dtype, min / max /
mean and the first values. ``--output OUT.npz`` saves the results as ``output_0``,
``output_1``, ...

Every error (a parse error with file:line:col, a verifier error, a missing or unknown input,
a wrong shape or dtype, an op the interpreter cannot run, a kernel failure) is one message on
stderr and exit code 1, never a traceback.

**The arena executor.** ``--plan ALGO`` (any planner of ``plan-memory``), ``--benchmark`` or
``--profile`` run the module through ``xrelay.build`` instead: optimised at ``--opt-level``
(default 3), fused, lowered, planned with ALGO (default ``greedy-by-size``) and run by the arena
executor. ``--params`` then binds ``@main``'s parameters of those names as constants before
optimising. ``--benchmark [N]`` prints the latency summary of N repeats (default 10) after the
outputs; ``--profile`` prints a per-step and per-op-family table (tabulate); ``--memory-report``
prints the plan's report. Each prints to stdout after the output lines.

**Devices.** ``--devices D1,D2,...`` builds for those devices (``cpu``, ``cpu(1)``, or a device
registered with ``--register-device 'mcu:dram=0:64,sram=262144:16'``: name, then each memory
scope with its capacity in bytes (0: unbounded) and alignment, the first scope the default);
the first device is the default for what no annotation places (plan-devices), each (device,
memory scope) gets its own pool, and ``--pool-algorithms 'mcu0.sram=optimal'`` picks a memory
space's planning algorithm. A device that cannot run here (``cuda``) is an error.

The argument parser is built by ``build_parser``; options act in ``execute``.
"""

from __future__ import annotations

import argparse
import sys
import zipfile
from collections.abc import Mapping, Sequence
from typing import TextIO

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException

from xrelay.dialects.verify import verify_module
from xrelay.runtime.interpreter import RunError, random_inputs, run
from xrelay.tools._io import foreign_model, note_first_optimal, write_output
from xrelay.tools.opt_flags import add_opt_level_argument
from xrelay.tools.relay_opt import (
    ToolError,
    add_register_device_argument,
    load_params,
    register_devices,
    report,
)

PROG = "relay-run"


def build_parser() -> argparse.ArgumentParser:
    """relay-run's command line."""
    parser = argparse.ArgumentParser(
        prog=PROG, description="Run a relay module with xrelay's reference interpreter."
    )
    parser.add_argument("file", metavar="FILE.mlir", help="the module to run ('-' for stdin)")
    parser.add_argument(
        "--input",
        "-i",
        dest="inputs",
        action="append",
        default=[],
        metavar="NAME=FILE.npy | FILE.npz",
        help="bind parameter NAME to the array in FILE.npy, or every parameter named in FILE.npz",
    )
    parser.add_argument(
        "--params",
        metavar="FILE.npz",
        help="weights: resolve `relay.constant @name` and bind parameters of those names",
    )
    parser.add_argument(
        "--input-format",
        choices=["mlir", "relay"],
        help="read MLIR or Relay's text format (default: by the file's extension, .relay is Relay)",
    )
    parser.add_argument(
        "--random-inputs",
        nargs="?",
        const=0,
        type=int,
        default=None,
        metavar="SEED",
        help="give every parameter not bound otherwise random data (seed 0 if omitted)",
    )
    parser.add_argument("--entry", default="main", help="the function to run (default: main)")
    parser.add_argument("--output", "-o", metavar="OUT.npz", help="save the results here")
    parser.add_argument(
        "--no-verify", action="store_true", help="do not verify the module before running"
    )
    arena = parser.add_argument_group("arena executor (xrelay.build)")
    arena.add_argument(
        "--plan",
        metavar="ALGO",
        help="build, plan memory with ALGO and run with the arena executor",
    )
    add_opt_level_argument(arena)
    arena.add_argument(
        "--benchmark",
        nargs="?",
        const=10,
        type=int,
        default=None,
        metavar="N",
        help="print the latency of N timed repeats (default 10) with the arena executor",
    )
    arena.add_argument(
        "--profile", action="store_true", help="print a per-step and per-op-family time table"
    )
    arena.add_argument(
        "--memory-report", action="store_true", help="print the memory plan's report"
    )
    arena.add_argument(
        "--devices",
        metavar="D1,D2",
        help="build for these devices (the first is the default device); implies --plan",
    )
    add_register_device_argument(arena)
    arena.add_argument(
        "--pool-algorithms",
        metavar="POOL=ALGO,...",
        help="the planning algorithm of a memory space's pool (e.g. mcu0.sram=optimal)",
    )
    return parser


def parse_module(path: str, params: Mapping[str, np.ndarray] | None, input_format: str | None = None) -> ModuleOp:
    """Parse the module in ``path`` (``-`` for stdin) with external constants from ``params``;
    Relay text when ``input_format`` is ``relay`` or the file ends in ``.relay``."""
    from xrelay.dialects import make_context
    from xrelay.dialects.relay import params_source

    if (foreign := foreign_model(path)) is not None:
        raise ToolError(foreign)
    if path == "-":
        text, name = sys.stdin.read(), "<stdin>"
    else:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise ToolError(f"cannot read '{path}': {e.strerror or e}") from None
        except UnicodeDecodeError as e:
            raise ToolError(f"cannot read '{path}': not UTF-8 text (byte {e.start})") from None
        name = path
    if input_format == "relay" or (input_format is None and name.endswith(".relay")):
        from xrelay.relay.parser import parse

        return parse(text, name).module
    with params_source(params):
        return Parser(make_context(), text, name).parse_module()


def load_inputs(specs: Sequence[str]) -> dict[str, np.ndarray]:
    """The arrays named by ``--input`` options (``NAME=FILE.npy`` or ``FILE.npz``)."""
    inputs: dict[str, np.ndarray] = {}

    def put(name: str, value: np.ndarray, spec: str) -> None:
        if name in inputs:
            raise ToolError(f"input '{name}' is given twice (again by --input {spec})")
        inputs[name] = value

    for spec in specs:
        name, sep, path = spec.partition("=")
        if sep:
            if not name or not path:
                raise ToolError(f"bad --input '{spec}': expected NAME=FILE.npy or FILE.npz")
            put(name, _load_array(path), spec)
        elif spec.endswith(".npz"):
            for key, value in load_params(spec, "inputs").items():
                put(key, value, spec)
        else:
            raise ToolError(f"bad --input '{spec}': expected NAME=FILE.npy or FILE.npz")
    return inputs


def _load_array(path: str) -> np.ndarray:
    try:
        data = np.load(path, allow_pickle=False)
    except OSError as e:
        raise ToolError(f"cannot read input '{path}': {e.strerror or e}") from None
    except (ValueError, EOFError, zipfile.BadZipFile):
        raise ToolError(f"cannot read input '{path}': not an .npy or .npz file") from None
    if isinstance(data, np.lib.npyio.NpzFile):
        data.close()
        arrays = load_params(path, "input")
        if len(arrays) != 1:
            raise ToolError(
                f"input '{path}' holds {len(arrays)} arrays; use --input {path} "
                "to bind them all by name"
            )
        return next(iter(arrays.values()))
    return data


def summarize(value: np.ndarray, first: int = 6) -> str:
    """One line about an array: shape, dtype, min/max/mean and its first values."""
    text = f"shape {tuple(value.shape)} {value.dtype}"
    if value.size == 0:
        return text + "  (empty)"
    flat = value.reshape(-1)
    if value.dtype == np.bool_:
        text += f"  true {int(np.count_nonzero(flat))}/{flat.size}"
    elif value.dtype.kind in "iuf":
        wide = flat.astype(np.float64)
        finite = wide[np.isfinite(wide)]
        if finite.size:
            text += (
                f"  min {_num(finite.min())} max {_num(finite.max())} mean {_num(finite.mean())}"
            )
        if finite.size != wide.size:
            text += f"  non-finite {wide.size - finite.size}"
    shown = ", ".join(_num(v) for v in flat[:first].tolist())
    more = ", ..." if flat.size > first else ""
    return f"{text}  [{shown}{more}]"


def _num(v: float | int | bool) -> str:
    if isinstance(v, bool | int):
        return str(v)
    return f"{v:.6g}"


def execute(args: argparse.Namespace, out: TextIO) -> int:
    """Run the tool for parsed arguments; errors are raised for ``main`` to report."""
    if args.benchmark is not None and args.benchmark < 1:
        raise ToolError(f"--benchmark takes a positive number of repeats, got {args.benchmark}")
    params = load_params(args.params) if args.params else None
    inputs = load_inputs(args.inputs)
    module = parse_module(args.file, params, args.input_format)
    if not args.no_verify:
        verify_module(module)
    if args.random_inputs is not None:
        bound = set(inputs) | set(params or {})
        inputs.update(random_inputs(module, args.random_inputs, args.entry, skip=bound))
    register_devices(args.register_device)
    if _is_memory_program(module):
        outputs = _run_memory_program(args, module, inputs, params)
    elif _wants_arena(args):
        outputs = _run_arena(args, module, inputs, params, out)
    else:
        outputs = run(module, inputs, params, entry=args.entry)
    for i, value in enumerate(outputs):
        out.write(f"output {i}: {summarize(value)}\n")
    if args.output:
        # exactly the name given (np.savez would append .npz), written atomically
        write_output(args.output, {f"output_{i}": v for i, v in enumerate(outputs)}, ToolError)
    for text in getattr(args, "_reports", []):
        out.write(text + "\n")
    return 0


def _wants_arena(args: argparse.Namespace) -> bool:
    """Whether the flags ask for the arena executor (``xrelay.build``)."""
    return bool(args.plan or args.benchmark is not None or args.profile or args.memory_report or args.devices)


def _is_memory_program(module: ModuleOp) -> bool:
    """Whether ``module`` was lowered to the memory dialect (``lower-to-memory``)."""
    return any(op.name.startswith("memory.") for op in module.walk())


def _run_memory_program(
    args: argparse.Namespace,
    module: ModuleOp,
    inputs: Mapping[str, np.ndarray],
    params: Mapping[str, np.ndarray] | None,
) -> list[np.ndarray]:
    """Run a lowered module in the memory-dialect interpreter: in its planned arenas once its
    plan verifies (the verifier of ``verify-memory-plan``), else unplanned."""
    from xrelay.runtime.memory_interpreter import is_planned, run_memory
    from xrelay.transforms.verify_memory_plan import verify_memory_plan

    if _wants_arena(args):
        raise ToolError(
            "the module is already lowered to the memory dialect: --plan, --benchmark, --profile, "
            "--memory-report and --devices take a relay-level module"
        )
    if is_planned(module, args.entry):
        verify_memory_plan(module, args.entry)
    return run_memory(module, inputs, params, entry=args.entry)


def _run_arena(
    args: argparse.Namespace,
    module: ModuleOp,
    inputs: Mapping[str, np.ndarray],
    params: Mapping[str, np.ndarray] | None,
    out: TextIO,
) -> list[np.ndarray]:
    """Build with the arena executor, run once, and queue the requested reports."""
    from xrelay.backend.build import BuildError, build
    from xrelay.runtime.graph_executor import GraphModuleError
    from xrelay.transforms.planners import ALGORITHMS, PlanError

    if args.entry != "main":
        raise ToolError("--plan/--benchmark/--profile run @main only")
    plan = args.plan or "greedy-by-size"
    if plan not in ALGORITHMS:
        raise ToolError(f"unknown planning algorithm '{plan}' (known: {', '.join(ALGORITHMS)})")
    note_first_optimal(PROG, plan)
    target, default, algorithms = None, None, None
    if args.devices:
        names = [d.strip() for d in args.devices.split(",") if d.strip()]
        target, default = {d: "llvm" for d in names}, names[0]
    if args.pool_algorithms:
        algorithms = {}
        for item in filter(None, (i.strip() for i in args.pool_algorithms.split(","))):
            pool, eq, algo = item.partition("=")
            if not eq or algo not in ALGORITHMS:
                raise ToolError(f"--pool-algorithms: expected POOL=ALGO with ALGO one of {', '.join(ALGORITHMS)}, got '{item}'")
            algorithms[pool] = algo
    try:
        m = build(
            module, params, opt_level=args.opt_level, plan=plan, target=target,
            default_device=default, pool_algorithms=algorithms,
        )
        unknown = [k for k in inputs if m.get_input_index(k) < 0 and k not in (params or {})]
        if unknown:
            raise ToolError(
                f"unknown input(s) {', '.join(unknown)}; @main takes: "
                + ", ".join(m.executor.input_names)
            )
        m.set_input(**{k: v for k, v in inputs.items() if m.get_input_index(k) >= 0})
        missing = [n for n in m.executor.input_names if n not in inputs]
        if missing:
            raise ToolError(
                f"no value for input(s) {', '.join(missing)} (use --input or --random-inputs)"
            )
        m.run()
        outputs = [m.get_output(i) for i in range(m.get_num_outputs())]
        reports: list[str] = []
        if args.memory_report:
            reports.append(m.memory_report())
        if args.benchmark is not None:
            res = m.benchmark(repeat=max(1, args.benchmark), number=1)
            reports.append(f"arena: {m.arena_bytes} bytes, plan {plan}\n{res}")
        if args.profile:
            reports.append(m.profile())
    except (BuildError, GraphModuleError, PlanError) as e:
        raise ToolError(str(e)) from None
    args._reports = reports
    return outputs


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``relay-run``; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0) if not isinstance(e.code, str) else 2
    try:
        return execute(args, sys.stdout)
    except (ParseError, DiagnosticException, ToolError) as e:
        return report(e, PROG)
    except (RunError, VerifyException) as e:
        return report(ToolError(str(e)), PROG)
    except RecursionError:  # xDSL parses, verifies and prints regions recursively
        return report(ToolError("the input is nested too deeply to process"), PROG)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
