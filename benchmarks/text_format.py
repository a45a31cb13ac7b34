"""Relay's text format against MLIR text: printing and parsing the same modules.

The peer is xrelay's own MLIR form of the same module (xDSL's printer and parser with the relay
dialect's syntax), run in the same process, alternating back to back: at least 20 pairs after a
warm-up, the median of the per-pair ratios (Relay text time / MLIR time). Then a scaling check:
seconds per 1k ops to parse the Relay text of elementwise chains of 1k, 10k and 30k ops
(linear growth shows as a flat column). The defaults finish in a few minutes on an idle 2-core
machine; each section prints how long it took (to stderr). ResNet-50 with its 25.5M weights in
the text (``--bound-pairs N``) is left out by default: its text is ~100 MB and each pair prints
and parses it twice, minutes per pair on a loaded machine (the default run took over ten
minutes with it). For the larger figures:

    python benchmarks/text_format.py [--pairs 20] [--bound-pairs 3] [--sizes 1000 10000 100000]
                                     [--no-models] [--no-scaling]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from tabulate import tabulate
from xdsl.parser import Parser

import xrelay
from xrelay import relay
from xrelay.dialects import make_context
from xrelay.relay.parser import parse
from xrelay.testing import mobilenet, resnet


def _mlir_print(mod: xrelay.IRModule) -> str:
    return mod.mlir_text()


def _mlir_parse(text: str) -> object:
    return Parser(make_context(), text).parse_module()


def _timed(fn, arg) -> float:
    t0 = time.perf_counter()
    fn(arg)
    return time.perf_counter() - t0


def compare(name: str, mod: xrelay.IRModule, pairs: int) -> list[object]:
    relay_text, mlir_text = mod.astext(), mod.mlir_text()
    for _ in range(2):  # warm-up
        parse(relay_text), _mlir_parse(mlir_text), mod.astext(), _mlir_print(mod)
    rows: dict[str, list[tuple[float, float]]] = {"print": [], "parse": []}
    for _ in range(pairs):
        rows["print"].append((_timed(lambda m: m.astext(), mod), _timed(_mlir_print, mod)))
        rows["parse"].append((_timed(parse, relay_text), _timed(_mlir_parse, mlir_text)))
    out = [name, sum(1 for _ in mod.module.walk())]
    for stage in ("print", "parse"):
        ratios = [r / m for r, m in rows[stage]]
        out += [statistics.median(r for r, _ in rows[stage]), statistics.median(m for _, m in rows[stage]), statistics.median(ratios)]
    return out


def chain(n: int) -> xrelay.IRModule:
    x = relay.var("x", shape=(1, 16))
    y = x
    for i in range(n):
        y = relay.nn.relu(y) if i % 2 else relay.add(y, relay.const(1.0))
    return xrelay.IRModule.from_expr(relay.Function([x], y))


def _section(what: str, start: float) -> None:
    print(f"text_format: {what} took {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=10, help="timed pairs per model (default 10)")
    ap.add_argument("--bound-pairs", type=int, default=0, help="pairs for ResNet-50 with its weights in the text (default 0: left out)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 30000], help="chain lengths (default 1000 10000 30000)")
    ap.add_argument("--no-models", action="store_true", help="skip the ResNet-50/MobileNet comparison")
    ap.add_argument("--no-scaling", action="store_true", help="skip the chain scaling check")
    args = ap.parse_args(argv)
    if not args.no_models:
        r50, p50 = resnet.get_workload(num_layers=50)
        mnet, _ = mobilenet.get_workload(batch_size=1)
        models = [("ResNet-50", r50, args.pairs), ("MobileNet", mnet, args.pairs)]
        if args.bound_pairs > 0:
            bound = xrelay.IRModule.from_expr(relay.bind_params_by_name(r50["main"], p50))
            models.insert(1, ("ResNet-50, bound weights", bound, args.bound_pairs))
        rows = []
        for name, mod, pairs in models:
            start = time.perf_counter()
            rows.append(compare(name, mod, pairs))
            _section(f"{name} ({pairs} pairs)", start)
        print(tabulate(rows, headers=["module", "ops", "relay print s", "mlir print s", "ratio", "relay parse s", "mlir parse s", "ratio"], floatfmt=".4f"))
        print()
    if not args.no_scaling:
        scale = []
        for n in args.sizes:
            start = time.perf_counter()
            text = chain(n).astext()
            t = min(_timed(parse, text) for _ in range(3))
            scale.append([n, t, t / n * 1000])
            _section(f"chain of {n} ops", start)
        print(tabulate(scale, headers=["chain ops", "relay parse s", "s / 1k ops"], floatfmt=".4f"))


if __name__ == "__main__":
    main()
