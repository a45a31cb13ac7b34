"""A mutation fuzzer for xrelay's front door: parser, verifier, passes and interpreter.

Seeds are the relay-level FileCheck inputs under ``tests/filecheck`` (split at ``// -----``,
comments dropped). A case applies one to three mutations to a seed -- delete, duplicate or
swap a token, flip a number, change a tensor dim or an element type -- and runs the result
in-process through ``make_context`` + xDSL's ``Parser``, ``verify_module``, the passes
``infer-type``, ``fold-constant`` and ``fuse-ops``, and the reference interpreter on random
inputs. A case *crashes* when anything raises other than the project's diagnostics
(``ParseError``, ``DiagnosticException``/``VerifyException``, ``xrelay.TVMError``).

``tests/fuzz/test_fuzz.py`` runs a short, deterministic run under hypothesis; ``make fuzz``
runs ``python tests/fuzz/xrelay_fuzz.py`` (10,000 cases) and prints the counts.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError

from xrelay.error import TVMError

FILECHECK = Path(__file__).resolve().parent.parent / "filecheck"
# Relay-level inputs; the memory dialect's and the C target's inputs are another layer.
SEED_DIRS = ("transforms", "dialects/relay", "dialects/qnn", "tools", "dialects")
PASSES = ("infer-type", "fold-constant", "fuse-ops")
DIAGNOSTICS = (ParseError, DiagnosticException, TVMError)
# The interpreter runs a case only when its inputs are small: the fuzzer looks for crashes,
# not for the cost of a legitimately large tensor (huge sizes are refused by the runtime).
MAX_INPUT_ELEMENTS = 1 << 16

TOKEN = re.compile(r'"[^"\n]*"|%[\w.#$-]+|@[\w.$-]+|\d+(?:\.\d+)?(?:e[+-]?\d+)?|\w+|\s+|.')
DIM = re.compile(r"(?<=[<x])(\d+|\?)(?=x)")
DTYPES = (
    "f32", "f16", "bf16", "f64", "i1", "i8", "i32", "i64", "ui8", "si8", "i7", "i72", "f80",
    "index", "complex<f32>", "f8E4M3FN", "none",
)  # fmt: skip
ELEMENT = re.compile(r"(?<=x)(f\d+|bf16|i\d+|ui\d+|si\d+|index)(?=>)")
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
            if body and "memory." not in body:
                seeds.append(body + "\n")
    return seeds


def _tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def _solid(tokens: list[str]) -> list[int]:
    return [i for i, t in enumerate(tokens) if not t.isspace()]


def mutate_once(text: str, rng: random.Random) -> str:
    """One random mutation of ``text``."""
    # Typed mutations keep the text parseable more often, so they reach deeper stages.
    kind = rng.choice(("delete", "duplicate", "swap") + ("number", "dim", "dtype") * 3)
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


@dataclass
class Outcome:
    """What one case did: ``parsed`` / ``rejected`` (a diagnostic) / ``ran`` / ``crashed``, or
    ``parser-bug`` (a raw exception from xDSL's parser itself)."""

    status: str
    stage: str = ""
    error: str = ""
    seconds: float = 0.0


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
    from xrelay.runtime.interpreter import random_inputs, run
    from xrelay.transforms import get_all_passes
    from xrelay.transforms.utils import verify_module

    start = time.perf_counter()
    stage = "parse"
    status = "parsed"
    try:
        mod = Parser(make_context(), text, "<fuzz>").parse_module()
        stage = "verify"
        verify_module(mod)
        entry = _entry(mod)
        if entry is not None and _small_enough(mod, entry):
            stage = "interpret"
            run(mod, random_inputs(mod, seed=0, entry=entry), entry=entry)
            status = "ran"
        passes = get_all_passes()
        for name in PASSES:
            stage = name
            clone = mod.clone()
            passes[name]()().apply(make_context(), clone)
            verify_module(clone)
    except DIAGNOSTICS as e:
        return Outcome("rejected", stage, _first_line(e), time.perf_counter() - start)
    except Exception as e:  # noqa: BLE001 - this is what the fuzzer looks for
        tb = traceback.format_exception(e)
        # A raw exception from inside xDSL's own parser (e.g. AssertionError on a complex
        # dense literal) is counted apart: it is xDSL 0.74's bug, not xrelay's.
        status = "parser-bug" if stage == "parse" and _from_xdsl_parser(e) else "crashed"
        return Outcome(status, stage, "".join(tb[-3:]), time.perf_counter() - start)
    return Outcome(status, stage, "", time.perf_counter() - start)


def _from_xdsl_parser(e: BaseException) -> bool:
    frames = traceback.extract_tb(e.__traceback__)
    return all("site-packages" in f.filename for f in frames[1:])


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[-1][:200]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", "--cases", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=5, help="crashes to print in full")
    args = ap.parse_args(argv)
    seeds = load_seeds()
    for seed in seeds:  # warm-up: lazy imports (scipy for erf, ...) are not a case's time
        run_case(seed)
    rng = random.Random(args.seed)
    counts: Counter[str] = Counter()
    rejected_at: Counter[str] = Counter()
    crashes: list[tuple[str, Outcome]] = []
    slow: list[tuple[float, str]] = []
    slowest = (0.0, "")
    for _ in range(args.cases):
        text = mutate(seeds, rng)
        out = run_case(text)
        counts[out.status] += 1
        if out.status == "rejected":
            rejected_at[out.stage] += 1
        if out.status in ("crashed", "parser-bug"):
            crashes.append((text, out))
        if out.seconds > slowest[0]:
            slowest = (out.seconds, text)
        if out.seconds > 1.0:
            slow.append((out.seconds, text))
    print(f"{args.cases} cases from {len(seeds)} seeds (seed {args.seed})")
    for status in ("parsed", "rejected", "ran", "crashed", "parser-bug"):
        print(f"  {status:9} {counts[status]}")
    print("  rejected at: " + ", ".join(f"{k} {n}" for k, n in rejected_at.most_common()))
    print(f"  slowest   {slowest[0]:.3f} s:\n{slowest[1]}")
    print(f"  over 1 s  {len(slow)}")
    kinds = Counter(o.error.strip().splitlines()[-1] for _, o in crashes)
    for kind, n in kinds.most_common():
        print(f"  crash x{n}: {kind}")
    for text, out in crashes[: args.show]:
        print(f"--- {out.status} in {out.stage}:\n{text}\n{out.error}")
    for seconds, text in slow[: args.show]:
        print(f"--- {seconds:.2f} s:\n{text}")
    return 1 if any(o.status == "crashed" for _, o in crashes) or slow else 0


if __name__ == "__main__":
    sys.exit(main())
