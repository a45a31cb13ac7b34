"""
Pass instruments, as `tvm.ir.instrument`.

An instrument is an object the `PassContext` calls around passes; subclass
`PassInstrument` (or decorate any class with `@pass_instrument`; both live in `infra`, which
the `PassContext` that calls them is part of, and are exported here) and define any of:

* `enter_pass_ctx()` / `exit_pass_ctx()`: when the context is entered / left (and on
  `PassContext.override_instruments`);
* `should_run(mod, info) -> bool`: whether the pass runs (all instruments are asked,
  the pass runs only if every one says yes; not asked for the context's required passes);
* `run_before_pass(mod, info)` / `run_after_pass(mod, info)`: around every pass that runs.

`mod` is the module object the pass was called on (`ModuleOp` or `IRModule`), `info`
its `PassInfo`. Instruments are called in the order of the context's list.

Built-in instruments: `PassTimingInstrument` (Relay's timing profile and its render
format), `PrintBeforeAll`, `PrintAfterAll`, `PassPrintingInstrument` (IR dumps: Relay
text for an `IRModule`, MLIR that parses back for a `ModuleOp`) and `OpCountDiff` (op
count changes per pass, like the Relay tutorial's `RelayCallNodeDiffer`).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import IO, Any

from xdsl.dialects.builtin import ModuleOp

from xrelay.dialects import module_op
from xrelay.transforms.infra import (
    PassInfo,
    PassInstrument,
    get_pass_class,
    pass_instrument,
    relay_name_of,
)

__all__ = [
    "OpCountDiff",
    "PassInstrument",
    "PassPrintingInstrument",
    "PassTimingInstrument",
    "PrintAfterAll",
    "PrintBeforeAll",
    "count_ops",
    "pass_instrument",
]

_logger = logging.getLogger(__name__)

# --------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------


@dataclass
class _Profile:
    name: str
    start: int = 0
    duration_us: float = 0.0
    children: list[_Profile] = field(default_factory=list)


class _ProfileState(threading.local):
    """Profiles are per thread and shared by all timing instruments, as in Relay."""

    def __init__(self):
        self.root = _Profile("root")
        self.stack: list[_Profile] = [self.root]


_profiles = _ProfileState()


def _format_pct(part: float, whole: float) -> str:
    return f"{(part / whole * 100.0 if whole else 0.0):.2f}"


class PassTimingInstrument(PassInstrument):
    """
    Records how long every pass takes, nested passes (inside `Sequential`s, required
    passes) as children. Read the profile with the static `render()` before the
    context is left: leaving it clears the profile.
    """

    def run_before_pass(self, mod: Any, info: PassInfo) -> None:
        profile = _Profile(info.name)
        _profiles.stack[-1].children.append(profile)
        _profiles.stack.append(profile)
        profile.start = time.perf_counter_ns()

    def run_after_pass(self, mod: Any, info: PassInfo) -> None:
        end = time.perf_counter_ns()
        if len(_profiles.stack) == 1:
            raise RuntimeError("PassTimingInstrument: run_after_pass without run_before_pass")
        profile = _profiles.stack.pop()
        profile.duration_us = (end - profile.start) / 1000.0

    def exit_pass_ctx(self) -> None:
        _profiles.root.children.clear()
        del _profiles.stack[1:]

    @staticmethod
    def render() -> str:
        """
        The profile in Relay's format, one line per pass in pre-order::

            <tabs for depth><name>: <total>us [<self>us] (<% of all>%; <% of parent>%)

        with times as integer microseconds and percentages with two decimals; the parent
        of a top-level pass is the sum of all top-level passes. Returns "" (and logs a
        warning) when nothing was profiled; raises while a pass is running.
        """
        if len(_profiles.stack) > 1:
            raise RuntimeError("cannot print pass profile while still in a pass!")
        top = _profiles.root.children
        if not top:
            _logger.warning("no passes have been profiled, did you enable pass profiling?")
            return ""
        total = sum(p.duration_us for p in top)
        lines: list[str] = []

        def visit(profile: _Profile, depth: int, parent_us: float) -> None:
            self_us = profile.duration_us - sum(c.duration_us for c in profile.children)
            lines.append(
                f"{chr(9) * depth}{profile.name}: {profile.duration_us:.0f}us "
                f"[{self_us:.0f}us] ({_format_pct(profile.duration_us, total)}%; "
                f"{_format_pct(profile.duration_us, parent_us)}%)\n"
            )
            for child in profile.children:
                visit(child, depth + 1, profile.duration_us)

        for profile in top:
            visit(profile, 0, total)
        return "".join(lines)


# --------------------------------------------------------------------------------------
# Printing
# --------------------------------------------------------------------------------------


def _dump(stream: IO[str] | None, when: str, mod: Any, info: PassInfo, tvm_text: str) -> None:
    """Print `mod` before or after a pass.

    An xDSL `ModuleOp` (what `relay-opt` runs passes on) prints as MLIR under an MLIR
    comment header, so each dump parses back on its own (the header starts with `// -----`,
    the split marker of `--split-input-file`). Any other module (an `IRModule` of the
    Python API) prints as TVM's instrument prints it: `tvm_text` with `{mod}` replaced by
    `str(mod)`, which is Relay's text.
    """
    out = stream if stream is not None else sys.stdout
    if isinstance(mod, ModuleOp):
        out.write(f"// -----// IR Dump {when} {info.name} //----- //\n{str(mod)}\n\n")
    else:
        out.write(tvm_text.replace("{mod}", str(mod)))
    out.flush()


class PrintBeforeAll(PassInstrument):
    """Print the module before every pass (to `stream`, default the current stdout)."""

    def __init__(self, stream: IO[str] | None = None):
        self.stream = stream

    def run_before_pass(self, mod: Any, info: PassInfo) -> None:
        _dump(self.stream, "Before", mod, info, f"Before Running Pass: {info}\n{{mod}}\n")


class PrintAfterAll(PassInstrument):
    """Print the module after every pass (to `stream`, default the current stdout)."""

    def __init__(self, stream: IO[str] | None = None):
        self.stream = stream

    def run_after_pass(self, mod: Any, info: PassInfo) -> None:
        _dump(self.stream, "After", mod, info, f"After Running Pass: {info}\n{{mod}}\n")


def _relay_name(name: str) -> str:
    """Relay name of a registered pass named by CLI or Relay name; else `name`."""
    try:
        return relay_name_of(get_pass_class(name))
    except LookupError:
        return name


class PassPrintingInstrument(PassInstrument):
    """
    Print the module before the passes named in `print_before_pass_names` and after
    those in `print_after_pass_names`. Names may be CLI names (`fuse-ops`) or Relay
    names (`FuseOps`), including names of Sequentials (`FoldScaleAxis`, `sequential`).
    """

    def __init__(
        self,
        print_before_pass_names: Iterable[str] = (),
        print_after_pass_names: Iterable[str] = (),
        stream: IO[str] | None = None,
    ):
        for names in (print_before_pass_names, print_after_pass_names):
            if isinstance(names, str):
                raise TypeError("pass names must be given as a list, not a string")
        self.print_before_pass_names = tuple(print_before_pass_names)
        self.print_after_pass_names = tuple(print_after_pass_names)
        self.stream = stream
        self._before: frozenset[str] | None = None
        self._after: frozenset[str] | None = None

    def _resolve(self) -> tuple[frozenset[str], frozenset[str]]:
        # Resolved on first use so passes registered after construction are known.
        if self._before is None or self._after is None:
            self._before = frozenset(map(_relay_name, self.print_before_pass_names))
            self._after = frozenset(map(_relay_name, self.print_after_pass_names))
        return self._before, self._after

    def run_before_pass(self, mod: Any, info: PassInfo) -> None:
        if info.name in self._resolve()[0]:
            _dump(self.stream, "Before", mod, info, f"Print IR before: {info.name}\n{{mod}}\n\n\n")

    def run_after_pass(self, mod: Any, info: PassInfo) -> None:
        if info.name in self._resolve()[1]:
            _dump(self.stream, "After", mod, info, f"Print IR after: {info.name}\n{{mod}}\n\n\n")


# --------------------------------------------------------------------------------------
# Op count differences
# --------------------------------------------------------------------------------------


def count_ops(mod: Any) -> Counter[str]:
    """How many ops of each name the module holds (the module op itself not counted)."""
    top = module_op(mod)
    return Counter(op.name for op in top.walk() if op is not top)


class OpCountDiff(PassInstrument):
    """
    Records, for every pass that changed the op counts, `(depth, pass name, {op name:
    change})`, where depth is the nesting level (0 for a pass called at top level).
    Entries are in the order the passes finish, so a Sequential comes after its parts.
    Cleared when the context is entered.
    """

    def __init__(self):
        self.diffs: list[tuple[int, str, dict[str, int]]] = []
        self._before: list[tuple[str, Counter[str]]] = []

    def enter_pass_ctx(self) -> None:
        self.diffs = []
        self._before = []

    def run_before_pass(self, mod: Any, info: PassInfo) -> None:
        self._before.append((info.name, count_ops(mod)))

    def run_after_pass(self, mod: Any, info: PassInfo) -> None:
        if not self._before or self._before[-1][0] != info.name:
            raise RuntimeError(f"OpCountDiff: unbalanced run_after_pass for {info.name}")
        _, before = self._before.pop()
        after = count_ops(mod)
        diff = {
            op: after[op] - before[op]
            for op in sorted(set(before) | set(after))
            if after[op] != before[op]
        }
        if diff:
            self.diffs.append((len(self._before), info.name, diff))

    def get_pass_to_op_diff(self) -> list[tuple[int, str, dict[str, int]]]:
        """The recorded diffs (the name used in Relay's tutorial)."""
        return list(self.diffs)

    def render(self) -> str:
        """
        The diffs as a table, one row per (pass, op), pass names indented by depth::

            pass          op         change
            FoldConstant  relay.add  -1
        """
        rows = [("pass", "op", "change")]
        for depth, name, diff in self.diffs:
            for i, (op, change) in enumerate(diff.items()):
                rows.append(("  " * depth + name if i == 0 else "", op, f"{change:+d}"))
        if len(rows) == 1:
            return "no pass changed the op counts\n"
        widths = [max(len(row[c]) for row in rows) for c in range(2)]
        return "".join(
            f"{row[0].ljust(widths[0])}  {row[1].ljust(widths[1])}  {row[2]}".rstrip() + "\n"
            for row in rows
        )
