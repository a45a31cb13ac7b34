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

The argument parser is built by ``build_parser``; later options (planning, benchmarking,
profiling) add themselves there and act in ``execute``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from typing import TextIO

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException

from xrelay.runtime.interpreter import RunError, random_inputs, run
from xrelay.tools.relay_opt import ToolError, load_params, report

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
    return parser


def parse_module(path: str, params: Mapping[str, np.ndarray] | None) -> ModuleOp:
    """Parse the module in ``path`` (``-`` for stdin) with external constants from ``params``."""
    from xrelay.dialects import make_context
    from xrelay.dialects.relay import params_source

    if path == "-":
        text, name = sys.stdin.read(), "<stdin>"
    else:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise ToolError(f"cannot read '{path}': {e.strerror or e}") from None
        name = path
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
            for key, value in load_params(spec).items():
                put(key, value, spec)
        else:
            raise ToolError(f"bad --input '{spec}': expected NAME=FILE.npy or FILE.npz")
    return inputs


def _load_array(path: str) -> np.ndarray:
    try:
        data = np.load(path, allow_pickle=False)
    except OSError as e:
        raise ToolError(f"cannot read input '{path}': {e.strerror or e}") from None
    except ValueError as e:
        raise ToolError(f"cannot read input '{path}': {e}") from None
    if isinstance(data, np.lib.npyio.NpzFile):
        with data:
            if len(data.files) != 1:
                raise ToolError(
                    f"input '{path}' holds {len(data.files)} arrays; use --input {path} "
                    "to bind them all by name"
                )
            return data[data.files[0]]
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
    params = load_params(args.params) if args.params else None
    inputs = load_inputs(args.inputs)
    module = parse_module(args.file, params)
    if not args.no_verify:
        module.verify()
    if args.random_inputs is not None:
        bound = set(inputs) | set(params or {})
        inputs.update(random_inputs(module, args.random_inputs, args.entry, skip=bound))
    outputs = run(module, inputs, params, entry=args.entry)
    for i, value in enumerate(outputs):
        out.write(f"output {i}: {summarize(value)}\n")
    if args.output:
        try:
            np.savez(args.output, **{f"output_{i}": v for i, v in enumerate(outputs)})
        except OSError as e:
            raise ToolError(f"cannot write '{args.output}': {e.strerror or e}") from None
    return 0


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
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
