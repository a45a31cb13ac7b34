"""
``relay-plan``: run a static memory planner on a problem file or a model and report the plan.

    relay-plan FILE.csv --algorithm NAME [--output OUT.csv] [--time-limit S]
               [--plot PNG] [--pool NAME:SIZE[:ALIGN[:BASE]] ...]
    relay-plan MODEL.mlir [--params WEIGHTS.npz] [--opt-level N] ...

A relay-level model (``.mlir`` or ``.relay``, as ``relay-import`` writes it) is built as the
arena runtime builds it (``xrelay.build``: the weights given with ``--params`` become
constants, the build pipeline runs, operators are fused, each engine states its workspace),
so the plan is the activation arena ``relay-run --plan`` allocates, byte for byte. A module
already lowered to the memory dialect is planned as it is.

Problems are loaded by ``load_problem``, which dispatches on the file extension through
``LOADERS`` (extension -> function returning ``list[Buffer]``); other formats (such as the
memory dialect's ``.mlir``) plug in by adding an entry. MiniMalloc CSV files
(``id,lower,upper,size``, half-open lifetimes) are built in. With no ``--pool``, a single
unbounded pool ``global`` with alignment 1 is used, so that arena sizes match MiniMalloc's.
Every plan is checked by ``verify_plan`` before it is written. Errors print one line on
stderr and exit with status 1.
"""

from __future__ import annotations

import argparse
import io
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from xrelay.tools._io import foreign_model, note_first_optimal, write_output
from xrelay.tools.opt_flags import add_opt_level_argument
from xrelay.transforms.planners import (
    ALGORITHMS,
    Buffer,
    PlanError,
    Pool,
    format_report,
    plan_memory,
    plot_plan,
    verify_plan,
)
from xrelay.transforms.planners.csv_io import format_minimalloc_csv, read_minimalloc_csv

LOADERS: dict[str, Callable[[Path], list[Buffer]]] = {
    ".csv": read_minimalloc_csv,
}
"""Problem loaders by lower-case file extension."""



def _load_mlir(path: Path) -> list[Buffer]:
    # Imported lazily: the IR stack is only needed for .mlir problems.
    from xrelay.backend.engines import state_scratch
    from xrelay.transforms.plan_memory import load_mlir_problem

    return load_mlir_problem(path, state_scratch)


LOADERS[".mlir"] = _load_mlir

CLI_DEFAULT_POOL = Pool("global", None, alignment=1)


def load_problem(path: str | Path) -> list[Buffer]:
    """The buffers of a problem file, loaded by the ``LOADERS`` entry of its extension."""
    if (foreign := foreign_model(str(path))) is not None:
        raise PlanError(foreign)
    path = Path(path)
    loader = LOADERS.get(path.suffix.lower())
    if loader is None:
        known = ", ".join(sorted(LOADERS))
        raise PlanError(f"{path}: unknown problem format '{path.suffix}' (known: {known})")
    if not path.exists():
        raise PlanError(f"{path}: no such file")
    try:
        return loader(path)
    except UnicodeDecodeError as e:  # a binary file given as .csv/.mlir
        raise PlanError(f"{path}: not UTF-8 text (byte {e.start})") from None


def _int(text: str, what: str, spec: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise PlanError(f"--pool {spec}: {what} '{text}' is not an integer") from None


def parse_pool(spec: str) -> Pool:
    """``NAME:SIZE[:ALIGN[:BASE]]``; SIZE 0 (or ``inf``, ``none``) is unbounded, as in
    ``plan-memory{pools=...}`` and ``relay-build --pools``; numbers accept Python literals
    (``0x1000``). ALIGN defaults to 1, BASE to 0."""
    parts = spec.split(":")
    if not 2 <= len(parts) <= 4 or not parts[0]:
        raise PlanError(f"--pool {spec}: expected NAME:SIZE[:ALIGN[:BASE]]")
    name = parts[0]
    size = None if parts[1].lower() in ("inf", "none") else _int(parts[1], "size", spec)
    if size == 0:
        size = None
    align = _int(parts[2], "alignment", spec) if len(parts) > 2 else 1
    base = _int(parts[3], "base address", spec) if len(parts) > 3 else 0
    return Pool(name, size, align, base)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="relay-plan",
        description="Plan buffer offsets with a static memory planner and report the plan.",
    )
    parser.add_argument(
        "problem",
        help="problem file (.csv: MiniMalloc id,lower,upper,size) or a model (.mlir, .relay)",
    )
    parser.add_argument(
        "--params",
        metavar="FILE.npz",
        help="a model's weights: bound as constants, so the plan is the activation arena",
    )
    add_opt_level_argument(parser)
    parser.add_argument(
        "--algorithm",
        "-a",
        default="greedy-by-size",
        help=f"planner (default greedy-by-size): {', '.join(ALGORITHMS)}",
    )
    parser.add_argument("--output", "-o", help="write the plan as CSV (input columns + offset)")
    parser.add_argument(
        "--time-limit", type=float, default=None, help="seconds for optimal/hill-climb"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed for hill-climb")
    parser.add_argument("--plot", help="write a PNG picture of the plan")
    parser.add_argument(
        "--pool",
        action="append",
        default=[],
        metavar="NAME:SIZE[:ALIGN[:BASE]]",
        help="a memory pool, fastest first (SIZE 0 or inf: unbounded); repeat for several "
        "(default: one unbounded, alignment 1)",
    )
    return parser




def _plan_model(args: argparse.Namespace, pools: list[Pool]) -> tuple | None:
    """``(buffers, pools, plan)`` of a relay-level model built as the runtime builds it, or
    None when the problem is not one (a CSV, or a module lowered to the memory dialect)."""
    path = args.problem
    if (foreign := foreign_model(path)) is not None:
        raise PlanError(foreign)
    if Path(path).suffix.lower() not in (".mlir", ".relay"):
        return None
    # Imported here: a CSV problem needs none of the compiler.
    from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException

    from xrelay.backend.build import BuildError, build
    from xrelay.dialects.verify import verify_module
    from xrelay.tools.relay_opt import ToolError, load_params
    from xrelay.tools.relay_run import parse_module

    try:
        params = load_params(args.params) if args.params else {}
        module = parse_module(path, params)
        verify_module(module)
    except ToolError as e:
        raise PlanError(str(e)) from None
    except (ParseError, DiagnosticException, VerifyException) as e:
        text = str(e)
        raise PlanError(text if text.startswith(path) else f"{path}: {text}") from None
    if any(op.name.startswith("memory.") for op in module.walk()):
        return None
    _note_unbound_params(module, params)
    sys.stderr.write(f"relay-plan: building {path} as the runtime does (opt level {args.opt_level})\n")
    try:
        built = build(
            module, params, opt_level=args.opt_level, plan=args.algorithm,
            pools=pools or None, time_limit=args.time_limit,
        )  # fmt: skip
    except BuildError as e:
        raise PlanError(str(e)) from None
    return built.plan_info


def _note_unbound_params(module, params: dict) -> None:
    """Say when ``@main`` has parameters besides its first and no ``--params`` is given: they
    are planned in the arena as inputs (an imported model's weights, without their values)."""
    from xdsl.dialects import func

    from xrelay.dialects.relay.dtypes import byte_size, format_bytes

    main = next((f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == "main"), None)
    if params or main is None or len(main.args) < 2:
        return
    total = sum(byte_size(a.type) for a in main.args[1:])
    sys.stderr.write(
        f"relay-plan: note: {len(main.args)} parameters of @main are inputs planned in the "
        f"arena ({format_bytes(total)} besides the first); give the weights with --params to plan "
        "only the activations\n"
    )


class Progress:
    """Shows ``optimal``'s search once it has run for a second: best arena, proven bound,
    gap, elapsed. On a terminal one line is rewritten in place; otherwise a line is
    printed at most every few seconds, so logs stay short."""

    AFTER = 1.0

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.tty = stream.isatty()
        self.every = 0.2 if self.tty else 5.0
        self.last = -math.inf
        self.shown = False

    def __call__(self, pool: str, best: int | None, bound: int, elapsed: float) -> None:
        if elapsed < self.AFTER or elapsed - self.last < self.every:
            return
        self.last = elapsed
        if best is None:
            text = f"optimal [{pool}]: no plan yet, bound {bound:,} bytes, {elapsed:.1f} s"
        else:
            gap = (best - bound) / best if best else 0.0
            text = (
                f"optimal [{pool}]: best {best:,} bytes, bound {bound:,} "
                f"(gap {max(gap, 0.0):.2%}), {elapsed:.1f} s"
            )
        if self.tty:
            self.stream.write("\r\x1b[K" + text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown and self.tty:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    try:
        if args.algorithm not in ALGORITHMS:
            raise PlanError(
                f"unknown algorithm '{args.algorithm}' (known: {', '.join(ALGORITHMS)})"
            )
        if args.time_limit is not None and not (0 < args.time_limit < math.inf):
            raise PlanError(
                f"--time-limit must be a positive number of seconds, got {args.time_limit}"
            )
        given_pools = [parse_pool(spec) for spec in args.pool]
        note_first_optimal("relay-plan", args.algorithm)
        model = _plan_model(args, given_pools)
        if model is not None:
            buffers, pools, plan = model
        else:
            if args.params:
                raise PlanError("--params goes with a model (.mlir or .relay), not a CSV problem")
            pools = given_pools or [CLI_DEFAULT_POOL]
            buffers = load_problem(args.problem)
            progress = Progress(sys.stderr)
            try:
                plan = plan_memory(
                    buffers, args.algorithm, pools, time_limit=args.time_limit, seed=args.seed,
                    progress=progress,
                )  # fmt: skip
            finally:
                progress.close()
        verify_plan(buffers, pools, plan)
        if args.output:
            text = format_minimalloc_csv(buffers, plan, with_pool=len(pools) > 1)
            write_output(args.output, text, PlanError)
        if args.plot:
            png = io.BytesIO()  # drawn in memory, then written atomically like --output
            plot_plan(buffers, pools, plan, png, title=Path(args.problem).name)
            write_output(args.plot, png.getvalue(), PlanError)
    except PlanError as err:
        print(f"relay-plan: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except RecursionError:
        print("relay-plan: error: the input is nested too deeply to process", file=sys.stderr)
        return 1
    except Exception as e:  # a bug: still one message, unless asked for the traceback
        if os.environ.get("XRELAY_TRACEBACK"):
            raise
        print(
            f"relay-plan: error: internal error: {type(e).__name__}: {e} "
            "(set XRELAY_TRACEBACK=1 for details)",
            file=sys.stderr,
        )
        return 1
    print(f"{args.problem}: {len(buffers)} buffers")
    print(format_report(buffers, pools, plan))
    return 0


if __name__ == "__main__":
    sys.exit(main())
