"""
relay-opt's pass-infrastructure flags: Relay's instruments and opt levels on the CLI.

`add_arguments` adds the flags to relay-opt's parser; `run_pipeline` runs the `-p`
passes (already parsed by xDSL into `ModulePass` instances) through
`xrelay.transforms.infra`, so instruments see every pass, nested ones included:

* `--pass-timing`: Relay's timing profile (`PassTimingInstrument.render()`);
* `--print-ir-before-all`, `--print-ir-after-all`, `--print-ir-before=A,B`,
  `--print-ir-after=A,B`: IR dumps with `// -----// IR Dump After X //----- //`
  headers (names are CLI or Relay names), parseable with `--split-input-file`;
* `--print-op-diff`: the op count change of every pass that changed it (`OpCountDiff`);
* `-O0` .. `-O3`: after the `-p` passes (or alone), run `build_pipeline` at that level;
* `--disable-pass=A,B`: passes the `-O` pipeline (and any Sequential) skips.

Each `-p` pass is called directly, as `pass(mod)` in Relay: it runs whatever the opt
level and disabled passes say, and does not run its required passes first. The context's
opt level is 3 unless `-O<n>` sets it, so the parts of a composite pass named in `-p`
(`fold-scale-axis`: backward, forward, fold-constant) all run. Everything
the flags print goes to stderr, so stdout holds only the resulting module; a pass name
in the flags that names no registered pass is an error there. Unless
`--disable-verify` is given, the module is verified after every pass, and a failure
names the pass.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from xrelay.dialects import module_op
from xrelay.dialects.verify import verify_module
from xrelay.transforms.infra import (
    PassContext,
    PassInfo,
    as_pass,
    build_pipeline,
    has_pass,
    in_place,
    registered_pass_classes,
    relay_name_of,
)
from xrelay.transforms.instrument import (
    OpCountDiff,
    PassInstrument,
    PassPrintingInstrument,
    PassTimingInstrument,
    PrintAfterAll,
    PrintBeforeAll,
)

__all__ = ["add_arguments", "instruments_from_args", "run_pipeline"]


def _names(value: str) -> list[str]:
    names = [name.strip() for name in value.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"empty pass name in '{value}'")
    return names


def add_arguments(arg_parser: argparse.ArgumentParser) -> None:
    """Add the pass-infrastructure flags to relay-opt's argument parser."""
    group = arg_parser.add_argument_group("Relay pass infrastructure")
    group.add_argument(
        "--pass-timing",
        action="store_true",
        help="print the time of every pass in Relay's nested format to stderr",
    )
    group.add_argument(
        "--print-ir-before-all",
        action="store_true",
        help="print the IR before every pass to stderr",
    )
    group.add_argument(
        "--print-ir-after-all",
        action="store_true",
        help="print the IR after every pass to stderr",
    )
    group.add_argument(
        "--print-ir-before",
        type=_names,
        action="append",
        default=[],
        metavar="NAME[,NAME]",
        help="print the IR before the named passes (CLI or Relay names) to stderr",
    )
    group.add_argument(
        "--print-ir-after",
        type=_names,
        action="append",
        default=[],
        metavar="NAME[,NAME]",
        help="print the IR after the named passes (CLI or Relay names) to stderr",
    )
    group.add_argument(
        "--print-op-diff",
        action="store_true",
        help="print the op count changes of every pass to stderr",
    )
    group.add_argument(
        "-O",
        dest="opt_level",
        type=int,
        choices=OPT_LEVELS,
        default=None,
        metavar="{0,1,2,3,4}",
        help="run relay.build's optimization pipeline at this level after the -p passes "
        "(Relay's levels: 4 adds the CombineParallel* passes)",
    )
    group.add_argument(
        "--disable-pass",
        type=_names,
        action="append",
        default=[],
        metavar="NAME[,NAME]",
        help="passes the -O pipeline skips (CLI or Relay names)",
    )


def _flatten(lists: Sequence[Sequence[str]] | None) -> list[str]:
    return [name for names in lists or () for name in names]


class PassOutputInvalid(VerifyException):
    """A pass left IR that does not verify. A tool's diagnostic: the pass infrastructure
    keeps it as it is (instrument errors otherwise carry their Python traceback, as Relay's
    do after crossing its C++ boundary)."""

    _xrelay_traceback_message = True


class _VerifyAfterPass(PassInstrument):
    """Verifies the module after every pass, naming the pass when it fails."""

    def run_after_pass(self, mod: Any, info: PassInfo) -> None:
        try:
            verify_module(module_op(mod))
        except VerifyException as exc:
            raise PassOutputInvalid(f"the IR did not verify after pass {info.name}: {exc}") from None


OPT_LEVELS = range(5)
"""Relay's optimisation levels, the range ``xrelay.build`` takes (4 adds CombineParallel*)."""


def add_opt_level_argument(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--opt-level N`` of the tools that build (relay-run, relay-plan, relay-build)."""
    parser.add_argument(
        "--opt-level", type=int, default=3, choices=OPT_LEVELS, metavar="{0,1,2,3,4}",
        help="optimisation level of the build (default 3)",
    )  # fmt: skip


def instruments_from_args(args: argparse.Namespace) -> list[PassInstrument]:
    """The instruments the flags ask for, printing to stderr (timing last, so the
    other instruments' before-hooks are not timed)."""
    stream = sys.stderr
    instruments: list[PassInstrument] = []
    if args.print_ir_before_all:
        instruments.append(PrintBeforeAll(stream))
    before, after = _flatten(args.print_ir_before), _flatten(args.print_ir_after)
    if before or after:
        instruments.append(PassPrintingInstrument(before, after, stream))
    if args.print_ir_after_all:
        instruments.append(PrintAfterAll(stream))
    if args.print_op_diff:
        instruments.append(OpCountDiff())
    if args.pass_timing:
        instruments.append(PassTimingInstrument())
    return instruments


def _pass_names() -> list[str]:
    """Every name a flag may use for a pass: CLI names and Relay names."""
    classes = registered_pass_classes()
    return sorted(set(classes) | {relay_name_of(c) for c in classes.values()})


def _check_names(args: argparse.Namespace) -> None:
    """Refuse pass names in the flags that name no registered pass (typos would otherwise
    silently disable or print nothing), suggesting the closest names. In Python, Relay's
    ``PassContext(disabled_pass=...)`` still accepts any name, as Relay does."""
    import difflib

    for flag, lists in (
        ("--print-ir-before", args.print_ir_before),
        ("--print-ir-after", args.print_ir_after),
        ("--disable-pass", args.disable_pass),
    ):
        for name in _flatten(lists):
            if name != "sequential" and not has_pass(name):
                close = difflib.get_close_matches(name, _pass_names(), n=3)
                hint = f" (did you mean {', '.join(close)}?)" if close else ""
                raise ValueError(f"{flag}: no pass named '{name}'{hint}")


def run_pipeline(
    args: argparse.Namespace, ctx: Context, module: ModuleOp, passes: list[ModulePass]
) -> None:
    """
    Run `passes` (relay-opt's `-p` pipeline) on `module` in place, then the `-O`
    pipeline if asked, with the instruments the flags request, and print their reports
    (timing profile, op diff) to stderr.
    """
    _check_names(args)
    instruments = instruments_from_args(args)
    all_instruments = list(instruments)
    if not getattr(args, "disable_verify", False):
        all_instruments.append(_VerifyAfterPass())
    # Without -O the context is at Relay's highest standard level, so a composite pass named
    # in -p (fold-scale-axis) runs all its parts; -O<n> sets both the pipeline and the gate.
    opt_level = args.opt_level if args.opt_level is not None else 3
    with PassContext(
        opt_level=opt_level,
        disabled_pass=_flatten(args.disable_pass),
        instruments=all_instruments,
        xdsl_context=ctx,
    ):
        with in_place(module):  # relay-opt's module is its own: no pass copies it
            for module_pass in passes:
                as_pass(module_pass)(module)
            if args.opt_level is not None:
                build_pipeline(args.opt_level)(module)
        # Reports are read before leaving the context, which clears the profile.
        if args.pass_timing:
            sys.stderr.write(PassTimingInstrument.render())
        for instrument in instruments:
            if isinstance(instrument, OpCountDiff):
                sys.stderr.write(instrument.render())
    sys.stderr.flush()
