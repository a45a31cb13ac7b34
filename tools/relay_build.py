"""``relay-build``: build a relay module ahead of time into a standalone C program.

    relay-build model.mlir --params w.npz --target c -o out/ [--name model]
                [--plan optimal --time-limit 60] [--pools sram:262144:16,dram:0:64]
                [--constants blob] [--section sram=.sram_bss]

writes ``out/<name>.c``, ``out/<name>.h``, ``out/xrelay_kernels.h`` (and ``out/<name>.bin`` with
``--constants blob``; ``xrelay_winograd.h``, ``winograd_core.h`` and ``winograd4.h`` when a
convolution runs as Winograd): one entry ``int <name>_run(const <name>_inputs *, <name>_outputs *)``,
C99 with libc and libm only and no allocation, every pool a static array of exactly its
planned size in its own linker section (``.bss.xrelay.<pool>``, or ``--section POOL=NAME``: a
pool of the program, and a name of letters, digits, ``_``, ``.`` and ``$``, nothing else),
the weights as ``const`` arrays or in the blob. It prints the memory summary: RAM per pool,
ROM for the constants and, when a C compiler is found (``$CC``, default ``cc``), for the code
(the ``.text`` of ``<name>.c`` compiled with ``-O2``).

The module is read like ``relay-run`` reads it (``.mlir``, or Relay text for ``.relay``);
``--params`` binds ``@main``'s parameters of those names. Every error (a parse error with
file:line:col, an op without a C lowering, a name that is not a C identifier, a dynamic
shape, a pool too small) is one message on stderr and exit 1; nothing is written then.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException

from xrelay.backend.c import CodegenError
from xrelay.dialects.verify import verify_module
from xrelay.error import TVMError
from xrelay.tools.opt_flags import add_opt_level_argument
from xrelay.tools.relay_opt import ToolError, load_params, report
from xrelay.tools.relay_run import parse_module
from xrelay.transforms.planners import ALGORITHMS, PlanError

PROG = "relay-build"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Build a relay module into a C program.")
    p.add_argument("module", help="the module (.mlir, or .relay for Relay text)")
    p.add_argument("--params", metavar="FILE.npz", help="weights bound by name")
    p.add_argument("--target", default="c", help="the target (only 'c')")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="output directory")
    p.add_argument("--name", default="model", help="the program's C name (default model)")
    p.add_argument("--plan", default="greedy-by-size", help=f"planner: {', '.join(ALGORITHMS)}")
    p.add_argument("--time-limit", type=float, default=None, help="seconds for optimal")
    add_opt_level_argument(p)
    p.add_argument(
        "--pools",
        metavar="NAME:SIZE:ALIGN,...",
        help="memory pools, fastest first (SIZE 0: unbounded); each its own static array",
    )
    p.add_argument("--constants", choices=("arrays", "blob"), default="arrays",
                   help="weights as const arrays in the C, or in <name>.bin")  # fmt: skip
    p.add_argument("--section", action="append", default=[], metavar="POOL=SECTION",
                   help="the linker section of a pool's array (letters, digits, _ . $)")  # fmt: skip
    p.add_argument("--input-format", choices=("mlir", "relay"), default=None)
    return p


def code_bytes(source_dir: Path, name: str) -> int | None:
    """Bytes of ``.text`` in ``<name>.c`` compiled with ``-O2`` (None without a compiler)."""
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        obj = Path(tmp) / f"{name}.o"
        res = subprocess.run(
            [cc, "-std=c99", "-O2", "-c", "-I", str(source_dir), str(source_dir / f"{name}.c"),
             "-o", str(obj)], capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        if res.returncode != 0:
            first = (res.stderr.strip().splitlines() or ["?"])[0]
            raise ToolError(f"the generated C did not compile with {cc}: {first}")
        size = shutil.which("size")
        if size is None:
            return None
        out = subprocess.run([size, "-A", str(obj)], capture_output=True, text=True).stdout
        return sum(int(line.split()[1]) for line in out.splitlines() if line.startswith(".text"))


def execute(args: argparse.Namespace) -> int:
    from xrelay.backend.build import BuildError, build_c
    from xrelay.backend.target import Target, TargetError

    try:
        kind = Target(args.target).kind
    except TargetError:
        kind = None
    if kind != "c":  # the host CPU (llvm) runs in relay-run's arena runtime, not here
        raise ToolError(
            f"--target {args.target}: relay-build emits C only (--target c); "
            "to run on this CPU use 'relay-run --plan'"
        )
    if args.plan not in ALGORITHMS:
        raise ToolError(f"unknown planning algorithm '{args.plan}' (known: {', '.join(ALGORITHMS)})")
    if args.time_limit is not None and not (0 < args.time_limit < math.inf):
        raise ToolError(f"--time-limit must be a positive number of seconds, got {args.time_limit}")
    sections = {}
    for spec in args.section:
        pool, sep, section = spec.partition("=")
        if not sep or not pool or not section:
            raise ToolError(f"--section {spec}: expected POOL=SECTION")
        sections[pool] = section
    params = load_params(args.params) if args.params else None
    module = parse_module(args.module, params, args.input_format)
    verify_module(module)
    try:
        lib = build_c(module, params, args.opt_level, args.plan, args.pools, name=args.name,
                      constants=args.constants, sections=sections, time_limit=args.time_limit)  # fmt: skip
    except BuildError as e:
        raise ToolError(str(e)) from None
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise ToolError(f"-o {out}: exists and is not a directory")
    # Written beside the output, then moved into place file by file: a failure leaves the
    # directory as it was.
    with tempfile.TemporaryDirectory(dir=out.parent if out.parent.exists() else None) as tmp:
        files = lib.export(tmp, main=True)
        lib.summary.code = code_bytes(Path(tmp), args.name)
        out.mkdir(parents=True, exist_ok=True)
        for f in files:
            os.replace(f, out / f.name)
    for f in files:
        print(f"wrote {out / f.name}")
    print(lib.summary.format())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    try:
        return execute(args)
    except (ParseError, DiagnosticException, ToolError) as e:
        return report(e, PROG)
    except (CodegenError, PlanError, VerifyException, TVMError, OSError) as e:
        return report(ToolError(str(e)), PROG)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
