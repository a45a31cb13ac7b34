"""A fuzzer for xrelay's front door: parser, verifier, passes and interpreter.

Two kinds of cases. *Generated* (60 %): a random well-typed program (``random_dag``) mutated
as IR -- attribute values, a parameter's dims or element type -- and printed, sometimes in the
generic form (see ``generate``); most of these parse, so they exercise the verifier, the passes
and the kernels. *Mutated* (40 %): the FileCheck inputs under ``tests/filecheck`` (relay, qnn and memory)
(split at ``// -----``, comments dropped) with one to three text mutations -- delete, duplicate
or swap a token, flip a number, change a tensor dim or an element type, rename an op to
another one (``relay.constant`` to ``arith.constant``, ``relay.add`` to ``relay.tile``) --
which mostly test the parser. Each case runs in-process through ``make_context`` + xDSL's ``Parser``,
``verify_module``, the reference interpreter on random inputs (a lowered module: its plan's
checks, then the memory-dialect interpreter, as ``relay-run`` does) and the passes ``infer-type``,
``fold-constant`` and ``fuse-ops``. A case *crashes* when anything raises other than the
project's diagnostics (``ParseError``, ``DiagnosticException``/``VerifyException``,
``xrelay.TVMError``), or when a diagnostic reports a ``MemoryError`` (a size that should have
been refused before allocating).

``tests/fuzz/test_fuzz.py`` runs short, deterministic runs under hypothesis; ``make fuzz``
runs ``python tests/fuzz/xrelay_fuzz.py`` (10,000 cases) and prints the counts per kind and
stage and the slowest case in CPU time.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import re
import resource
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError

from xrelay.dialects.relay.dtypes import MEMORY_LIMIT_ENV
from xrelay.error import TVMError

FILECHECK = Path(__file__).resolve().parent.parent / "filecheck"
# Relay-level inputs; the memory dialect's and the C target's inputs are another layer.
SEED_DIRS = ("transforms", "dialects/relay", "dialects/qnn", "dialects/memory", "tools", "dialects")
PASSES = ("infer-type", "fold-constant", "fuse-ops")
DIAGNOSTICS = (ParseError, DiagnosticException, TVMError)
# The interpreter runs a case only when its inputs are small: the fuzzer looks for crashes,
# not for the cost of a legitimately large tensor (huge sizes are refused by the runtime).
MAX_INPUT_ELEMENTS = 1 << 16
# A case allocating gigabytes is a bug (a size the runtime should have refused); under this
# address-space limit it shows as a MemoryError crash, not as the machine running out.
MEMORY_LIMIT_MB = 8192
# The largest tensor a case may make (XRELAY_MEMORY_LIMIT; unless already set).
TENSOR_LIMIT = "256M"

TOKEN = re.compile(r'"[^"\n]*"|%[\w.#$-]+|@[\w.$-]+|\d+(?:\.\d+)?(?:e[+-]?\d+)?|\w+|\s+|.')
DIM = re.compile(r"(?<=[<x])(\d+|\?)(?=x)")
DTYPES = (
    "f32", "f16", "bf16", "f64", "i1", "i8", "i32", "i64", "ui8", "si8", "i7", "i72", "f80",
    "index", "complex<f32>", "f8E4M3FN", "none",
)  # fmt: skip
ELEMENT = re.compile(r"(?<=x)(f\d+|bf16|i\d+|ui\d+|si\d+|index)(?=>)")
OP_NAME = re.compile(r"(?<=[\s\"])(?:relay|arith|qnn|dyn)\.[a-z_.0-9]+")
# Ops whose result size comes from attributes or operand values, not operand sizes.
OP_NAMES = ("arith.constant", "relay.zeros", "relay.ones", "relay.full", "relay.tile",
            "relay.broadcast_to", "relay.repeat", "relay.arange", "relay.reshape")  # fmt: skip
NUMBERS = ("0", "1", "-1", "2", "3", "7", "64", "-3", "99999999999", "4294967296", "1.5", "nan")


def load_seeds(root: Path = FILECHECK) -> list[str]:
    """The FileCheck inputs as separate modules, without comments, sorted for determinism."""
    files: set[Path] = set()
    for sub in SEED_DIRS:
        files.update((root / sub).glob("*.mlir"))
    seeds: list[str] = []
    for path in sorted(files):
        for chunk in path.read_text().split("// -----"):
            body = "\n".join(
                line for line in chunk.splitlines() if not line.lstrip().startswith("//")
            ).strip()
            if body:
                seeds.append(body + "\n")
    return seeds


def _tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def _solid(tokens: list[str]) -> list[int]:
    return [i for i, t in enumerate(tokens) if not t.isspace()]


def mutate_once(text: str, rng: random.Random) -> str:
    """One random mutation of ``text``."""
    # Typed mutations keep the text parseable more often, so they reach deeper stages.
    kind = rng.choice(("delete", "duplicate", "swap", "op") + ("number", "dim", "dtype") * 3)
    if kind == "op":
        spots = list(OP_NAME.finditer(text))
        if spots:
            m = rng.choice(spots)
            names = [n.group(0) for n in spots] + list(OP_NAMES)
            return text[: m.start()] + rng.choice(names) + text[m.end() :]
        kind = "number"
    if kind in ("dim", "dtype") and rng.random() < 0.5:
        # Change one dim size or element type everywhere: the module stays consistent more
        # often, so the verifier, the passes and the kernels see zero, odd and huge sizes.
        pattern = DIM if kind == "dim" else ELEMENT
        found = sorted({m.group(0) for m in pattern.finditer(text)})
        if found:
            old = rng.choice(found)
            new = rng.choice(("0", "1", "5", "17", "99999999999") if kind == "dim" else DTYPES)
            return pattern.sub(lambda m: new if m.group(0) == old else m.group(0), text)
    if kind == "dim":
        spots = list(DIM.finditer(text))
        if spots:
            m = rng.choice(spots)
            new = rng.choice(("0", "1", "?", "3", "17", "-3", "99999999999", "4294967297"))
            return text[: m.start()] + new + text[m.end() :]
        kind = "number"
    if kind == "dtype":
        spots = list(ELEMENT.finditer(text))
        if spots:
            m = rng.choice(spots)
            return text[: m.start()] + rng.choice(DTYPES) + text[m.end() :]
        kind = "number"
    tokens = _tokens(text)
    solid = _solid(tokens)
    if not solid:
        return text
    if kind == "number":
        numbers = [i for i in solid if tokens[i][0].isdigit()]
        if numbers:
            tokens[rng.choice(numbers)] = rng.choice(NUMBERS)
            return "".join(tokens)
        kind = "delete"
    i = rng.choice(solid)
    if kind == "delete":
        del tokens[i]
    elif kind == "duplicate":
        tokens.insert(i, tokens[i])
    else:
        j = rng.choice(solid)
        tokens[i], tokens[j] = tokens[j], tokens[i]
    return "".join(tokens)


def mutate(seeds: list[str], rng: random.Random) -> str:
    """A seed with one to three mutations."""
    text = rng.choice(seeds)
    for _ in range(rng.randint(1, 3)):
        text = mutate_once(text, rng)
    return text


# ---- structure-aware cases -------------------------------------------------------------------
# Most text mutations break the syntax, so few of them reach the passes and the interpreter.
# These cases start from a random well-typed program (``random_dag``: convolutions, pools,
# dense, reductions, reshapes, concatenations, ... over a random NCHW shape) and mutate it as
# IR: an attribute value (integers to zero, negative, huge; one element of an array changed,
# dropped or added; layouts), a parameter's dims or element type with the types re-inferred
# (a consistent program with odd shapes) or not (an inconsistent one the verifier must
# reject). The result is printed, in the generic form one time in four (which skips relay's
# custom parser, so the op verifiers see what it would refuse), and run like any case.

INTS = (0, 1, 2, 3, -1, -2, 7, 64, 1 << 31, -(1 << 40))
LAYOUTS = ("NCHW", "NHWC", "OIHW", "HWIO", "NCHW4c", "", "XYZ")
ARG_DTYPES = ("float32", "float16", "float64", "int8", "int32", "int64", "uint8", "bool")


def generate(rng: random.Random) -> str:
    """A random well-typed relay program with zero to three IR mutations, as text."""
    from xdsl.printer import Printer

    from xrelay.testing.random_graphs import random_dag

    # random_dag's pools and strided convolutions need 4x4 or more (odd sizes come from
    # the parameter mutations below)
    shape = (rng.choice((1, 2)), rng.choice((1, 2, 3, 4)), rng.choice((4, 7, 8)), rng.choice((4, 5, 8)))
    mod = random_dag(rng.randrange(1 << 30), num_ops=rng.randint(2, 10), input_shape=shape)
    for _ in range(rng.choice((0, 1, 1, 1, 2, 3))):
        (mutate_attribute if rng.random() < 0.6 else mutate_parameter)(mod, rng)
    out = io.StringIO()
    Printer(stream=out, print_generic_format=rng.random() < 0.25).print_op(mod)
    return out.getvalue() + "\n"


def _relay_ops(mod) -> list:
    return [op for op in mod.walk() if op.name.startswith("relay.")]


def mutate_attribute(mod, rng: random.Random) -> None:
    """Change one attribute of one relay op to another value of the same kind."""
    from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, IntegerType, StringAttr, i64

    ops = [op for op in _relay_ops(mod) if op.properties]
    if not ops:
        return
    op = rng.choice(ops)
    name = rng.choice(sorted(op.properties))
    value = op.properties[name]
    if isinstance(value, IntegerAttr) and isinstance(value.type, IntegerType):
        if value.type.width.data == 1:
            new = IntegerAttr(0 if value.value.data else 1, value.type)
        else:
            new = IntegerAttr(rng.choice(INTS), value.type)
    elif isinstance(value, DenseArrayBase):
        items = [int(v) for v in value.get_values()]
        how = rng.choice(("set", "set", "drop", "add"))
        if how == "set" and items:
            items[rng.randrange(len(items))] = rng.choice(INTS)
        elif how == "drop" and items:
            del items[rng.randrange(len(items))]
        else:
            items.append(rng.choice(INTS))
        new = DenseArrayBase.from_list(i64, [max(min(v, (1 << 63) - 1), -(1 << 63)) for v in items])
    elif isinstance(value, StringAttr):
        new = StringAttr(rng.choice(LAYOUTS))
    else:
        return
    op.properties[name] = new


def mutate_parameter(mod, rng: random.Random) -> None:
    """Change one parameter's dims or element type; re-infer the types half of the time."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import FunctionType
    from xdsl.rewriter import Rewriter

    from xrelay.dialects.relay import dtype_of, shape_of, tensor_type
    from xrelay.transforms.infer_type import infer_types

    fn = next(op for op in mod.walk() if isinstance(op, func.FuncOp))
    arg = rng.choice(list(fn.body.block.args))
    shape, dtype = list(shape_of(arg.type)), dtype_of(arg.type)
    if rng.random() < 0.5 and shape:
        shape[rng.randrange(len(shape))] = rng.choice((0, 1, 2, 3, 5, 9))
    else:
        dtype = rng.choice(ARG_DTYPES)
    Rewriter.replace_value_with_new_type(arg, tensor_type(shape, dtype))
    if rng.random() < 0.7:
        try:
            infer_types(mod)
        except DIAGNOSTICS:
            pass  # left inconsistent: the verifier's turn
    else:
        fn.properties["function_type"] = FunctionType.from_lists(
            [a.type for a in fn.body.block.args], list(fn.function_type.outputs.data)
        )


@dataclass
class Outcome:
    """What one case did: ``parsed`` / ``rejected`` (a diagnostic) / ``ran`` / ``crashed``, or
    ``parser-bug`` (a raw exception from xDSL's parser itself)."""

    status: str
    stage: str = ""
    error: str = ""
    seconds: float = 0.0
    """CPU seconds of this process (``time.process_time``): on a machine shared with other
    jobs, wall time would mostly measure them; a pathological case (backtracking, a
    quadratic pass) shows in CPU time all the same."""
    wall: float = 0.0


def _entry(mod) -> str | None:
    """``main``, else the first function: what the interpreter runs (None: nothing to run)."""
    from xdsl.dialects import func

    names = [op.sym_name.data for op in mod.walk() if isinstance(op, func.FuncOp) and op.body.blocks]
    return "main" if "main" in names else (names[0] if names else None)


def _small_enough(mod, entry: str) -> bool:
    from xrelay.dialects.relay.dtypes import shape_of
    from xrelay.runtime.interpreter import parameter_specs

    total = 0
    for _, ty in parameter_specs(mod, entry):
        shape = shape_of(ty) if hasattr(ty, "get_shape") else None
        if shape is None or any(d is None or d < 0 for d in shape):
            return True  # the interpreter gives its own diagnostic
        total += int(np.prod(shape, dtype=np.int64))
    return total <= MAX_INPUT_ELEMENTS


def run_case(text: str) -> Outcome:
    """Parse, verify, transform and run ``text``; never raises (a crash is an Outcome)."""
    from xrelay.dialects import make_context
    from xrelay.dialects.verify import verify_module
    from xrelay.runtime.interpreter import random_inputs, run
    from xrelay.transforms import get_all_passes

    start, wall = time.process_time(), time.perf_counter()
    stage = "parse"
    status = "parsed"
    try:
        mod = Parser(make_context(), text, "<fuzz>").parse_module()
        stage = "verify"
        verify_module(mod)
        entry = _entry(mod)
        if entry is not None and _small_enough(mod, entry):
            stage = "interpret"
            inputs = random_inputs(mod, seed=0, entry=entry)
            if any(op.name.startswith("memory.") for op in mod.walk()):
                # as relay-run runs a lowered module: its plan checked, then in its arenas
                from xrelay.runtime.memory_interpreter import is_planned, run_memory
                from xrelay.transforms.verify_memory_plan import verify_memory_plan

                if is_planned(mod, entry):
                    verify_memory_plan(mod, entry)
                run_memory(mod, inputs, entry=entry)
            else:
                run(mod, inputs, entry=entry)
            status = "ran"
        passes = get_all_passes()
        for name in PASSES:
            stage = name
            clone = mod.clone()
            passes[name]()().apply(make_context(), clone)
            verify_module(clone)
    except DIAGNOSTICS as e:
        if "MemoryError" in str(e):  # a kernel's allocation failed: not refused beforehand
            return Outcome("crashed", stage, _first_line(e), time.process_time() - start, time.perf_counter() - wall)
        return Outcome("rejected", stage, _first_line(e), time.process_time() - start, time.perf_counter() - wall)
    except Exception as e:  # noqa: BLE001 - this is what the fuzzer looks for
        tb = traceback.format_exception(e)
        # A raw exception from inside xDSL's own parser (e.g. AssertionError on a complex
        # dense literal) is counted apart: it is xDSL 0.74's bug, not xrelay's.
        status = "parser-bug" if stage == "parse" and _from_xdsl_parser(e) else "crashed"
        return Outcome(status, stage, "".join(tb[-3:]), time.process_time() - start, time.perf_counter() - wall)
    return Outcome(status, stage, "", time.process_time() - start, time.perf_counter() - wall)


def _from_xdsl_parser(e: BaseException) -> bool:
    frames = traceback.extract_tb(e.__traceback__)
    return all("site-packages" in f.filename for f in frames[1:])


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[-1][:200]


STAGES = ("parse", "verify", "interpret") + PASSES


def make_case(seeds: list[str], rng: random.Random) -> tuple[str, str]:
    """One case: ``("generated", text)`` 60 % of the time, else ``("mutated", text)``."""
    if rng.random() < 0.6:
        return "generated", generate(rng)
    return "mutated", mutate(seeds, rng)


def _reached(out: Outcome) -> int:
    """How many stages a case got through (a rejection counts its stage as reached)."""
    if out.status in ("parsed", "ran"):
        return len(STAGES)
    return STAGES.index(out.stage) + 1 if out.stage in STAGES else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", "--cases", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=5, help="crashes to print in full")
    ap.add_argument(
        "--memory-limit", type=int, default=MEMORY_LIMIT_MB, metavar="MB",
        help="address space of the run (0: none); a case that needs more is a crash "
             "(MemoryError) instead of the machine's out-of-memory killer",
    )
    ap.add_argument("--progress", type=int, default=1000, metavar="N",
                    help="print a line to stderr every N cases (0: never)")
    args = ap.parse_args(argv)
    # A tensor of gigabytes that fits the machine is legitimate, and takes seconds to fill
    # (page faults): the fuzzer looks for crashes and hangs, so such sizes are refused here.
    os.environ.setdefault(MEMORY_LIMIT_ENV, TENSOR_LIMIT)
    if args.memory_limit:
        limit = args.memory_limit << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    seeds = load_seeds()
    for seed in seeds:  # warm-up: lazy imports (scipy for erf, ...) are not a case's time
        run_case(seed)
    rng = random.Random(args.seed)
    counts: Counter[tuple[str, str]] = Counter()
    rejected_at: Counter[tuple[str, str]] = Counter()
    reached: Counter[tuple[str, str]] = Counter()
    crashes: list[tuple[str, Outcome]] = []
    slow: list[tuple[float, str]] = []
    slowest = (0.0, "")
    slowest_wall = 0.0
    for case in range(args.cases):
        if args.progress and case and case % args.progress == 0:
            print(f"{case} cases, {len(crashes)} crashed, slowest {slowest[0]:.3f} s CPU",
                  file=sys.stderr, flush=True)
        try:
            kind, text = make_case(seeds, rng)
            out = run_case(text)
        except Exception as e:  # noqa: BLE001 - generate() runs infer-type on mutated IR
            kind, text = "generated", f"(while generating, seed {args.seed})"
            out = Outcome("crashed", "generate", "".join(traceback.format_exception(e)[-3:]))
        counts[kind, out.status] += 1
        counts["all", out.status] += 1
        if out.status == "rejected":
            rejected_at[kind, out.stage] += 1
        for stage in STAGES[: _reached(out)]:
            reached[kind, stage] += 1
        if out.status in ("crashed", "parser-bug"):
            crashes.append((text, out))
            if args.progress:  # at once: a run cut short still shows what it found
                print(f"--- case {case}: {out.status} in {out.stage}:\n{text}\n{out.error}",
                      file=sys.stderr, flush=True)
        slowest_wall = max(slowest_wall, out.wall)
        if out.seconds > slowest[0]:
            slowest = (out.seconds, text)
        if out.seconds > 1.0:
            slow.append((out.seconds, text))
    print(f"{args.cases} cases (seed {args.seed}): 60 % generated well-typed programs with IR "
          f"mutations, 40 % text mutations of {len(seeds)} FileCheck seeds")
    for kind in ("generated", "mutated", "all"):
        total = sum(n for (k, _), n in counts.items() if k == kind)
        parts = ", ".join(f"{st} {counts[kind, st]}" for st in ("ran", "parsed", "rejected", "crashed", "parser-bug"))
        print(f"  {kind:9} {total:6}: {parts}")
    for kind in ("generated", "mutated"):
        print(f"  {kind} reached: " + ", ".join(f"{st} {reached[kind, st]}" for st in STAGES))
        print(f"  {kind} rejected at: " + ", ".join(
            f"{st} {rejected_at[kind, st]}" for st in STAGES if rejected_at[kind, st]))
    print(f"  slowest   {slowest[0]:.3f} s CPU (wall: slowest {slowest_wall:.3f} s):\n{slowest[1]}")
    print(f"  over 1 s CPU: {len(slow)}")
    kinds = Counter(o.error.strip().splitlines()[-1] for _, o in crashes)
    for kind, n in kinds.most_common():
        print(f"  crash x{n}: {kind}")
    for text, out in crashes[: args.show]:
        print(f"--- {out.status} in {out.stage}:\n{text}\n{out.error}")
    for seconds, text in slow[: args.show]:
        print(f"--- {seconds:.2f} s:\n{text}")
    return 1 if crashes or slow else 0


if __name__ == "__main__":
    sys.exit(main())
