"""Time xrelay's graph passes on ResNet-50 and on random graphs of 1k, 10k and 100k ops.

For each workload every pass runs on a fresh copy of the module, alone (its own row), and then
the whole pipeline ``simplify-inference,fold-constant,fold-scale-axis,fuse-ops`` runs once (the
"pipeline" row). Seconds per 1k ops (ops counted before the passes) should stay flat as the
graphs grow when a pass is linear.

* ResNet-50 (224x224, bound weights): the module is printed with its weights kept out of the
  text (``print_options(external=...)``), parsed back with ``params_source`` (both timed), then
  the passes run; the target is the full pipeline under 3 s.
* ``bn-chain-N``: a ResNet-like graph of N ops (conv2d, batch-norm as constant multiply/add,
  relu, residual add), the pattern the folding passes look for.
* ``random-N``: ``xrelay.testing.random_graphs.random_dag`` with its weights bound to constants.

    python benchmarks/passes.py [--sizes 1000 10000 100000] [--no-resnet] [--no-random]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from tabulate import tabulate
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region, SSAValue
from xdsl.parser import Parser
from xdsl.passes import ModulePass

from xrelay.dialects import make_context
from xrelay.dialects.relay import (
    RELAY_OPS,
    ConstantOp,
    params_source,
    print_options,
    shape_of,
    tensor_type,
)
from xrelay.transforms import get_all_passes
from xrelay.transforms.bind_params import bind_params_by_name
from xrelay.transforms.infra import PassContext, as_pass, in_place

PASSES = (
    "simplify-inference",
    "fold-constant",
    "canonicalize-ops",
    "backward-fold-scale-axis",
    "forward-fold-scale-axis",
    "fold-scale-axis",
    "eliminate-common-subexpr",
    "dead-code-elimination",
    "inline",
    "remove-unused-functions",
    "fuse-ops",
)
PIPELINE = ("simplify-inference", "fold-constant", "fold-scale-axis", "fuse-ops")


def _pass(name: str) -> ModulePass:
    return get_all_passes()[name]()()


def count_ops(module: ModuleOp) -> int:
    return sum(1 for op in module.walk() if op.name.startswith("relay."))


def bn_chain(n: int, channels: int = 8) -> ModuleOp:
    """conv -> bn(multiply, add) -> relu -> conv -> bn -> add(residual) ... with ~n relay ops."""
    rng = np.random.default_rng(0)
    block = Block(arg_types=[tensor_type((1, channels, 8, 8), "float32")])

    def op(name: str, operands: list[SSAValue], **attrs) -> SSAValue:
        new = RELAY_OPS[name].make(operands, **attrs)
        block.add_op(new)
        return new.results[0]

    def const(shape, low=-1.0, high=1.0, name=None) -> SSAValue:
        c = ConstantOp.from_numpy(rng.uniform(low, high, shape).astype(np.float32), name)
        block.add_op(c)
        return c.result

    x = block.args[0]
    i = 0
    while 7 * i < n:  # seven non-constant ops per unit
        y = op("nn.conv2d", [x, const((channels, channels, 3, 3), name=f"w{i}")], padding=[1, 1, 1, 1])
        y = op("multiply", [y, const((channels, 1, 1), 0.5, 2.0)])
        y = op("add", [y, const((channels, 1, 1))])
        y = op("nn.relu", [y])
        y = op("multiply", [y, const((channels, 1, 1), 0.5, 2.0)])
        y = op("nn.conv2d", [y, const((channels, channels, 3, 3), name=f"v{i}")], padding=[1, 1, 1, 1])
        x = op("add", [x, y])
        i += 1
    block.add_op(func.ReturnOp(x))
    return ModuleOp([func.FuncOp("main", ([block.args[0].type], [x.type]), Region(block))])


def random_graph(n: int) -> ModuleOp:
    from xrelay.testing.random_graphs import random_dag

    module = random_dag(0, num_ops=n)
    rng = np.random.default_rng(0)
    params = {
        a.name_hint: rng.uniform(0.25, 2.0, shape_of(a.type)).astype(np.float32)
        for a in module.ops.first.body.block.args[1:]
    }
    bind_params_by_name(module, params)
    return module


def time_passes(make: Callable[[], ModuleOp], label: str, rows: list[list]) -> None:
    base = make()
    n = count_ops(base)
    ctx = make_context()
    for name in (*PASSES, "pipeline"):
        module = base.clone()
        passes = [_pass(p) for p in PIPELINE] if name == "pipeline" else [_pass(name)]
        start = time.perf_counter()
        # through the pass infrastructure, as relay-opt and Python users run passes
        with PassContext(opt_level=3, xdsl_context=ctx):
            with in_place(module):  # time the passes, not a copy per pass
                for p in passes:
                    as_pass(p)(module)
        dt = time.perf_counter() - start
        rows.append([label, n, name, f"{dt:.3f}", f"{dt / n * 1000:.4f}"])
        print(*rows[-1], sep="\t", flush=True)


def resnet50(rows: list[list]) -> None:
    from xrelay.testing import resnet

    mod, params = resnet.get_workload(num_layers=50)
    module = mod.module
    bind_params_by_name(module, params)
    n = count_ops(module)
    external: dict[str, np.ndarray] = {}
    start = time.perf_counter()
    with print_options(external=external):
        text = str(module)
    t_print = time.perf_counter() - start
    start = time.perf_counter()
    with params_source(external):
        parsed = Parser(make_context(), text).parse_module()
    t_parse = time.perf_counter() - start
    rows.append(["resnet-50", n, "print (weights external)", f"{t_print:.3f}", f"{t_print / n * 1000:.4f}"])
    rows.append(["resnet-50", n, "parse (params_source)", f"{t_parse:.3f}", f"{t_parse / n * 1000:.4f}"])
    time_passes(lambda: parsed, "resnet-50", rows)
    out: dict[str, np.ndarray] = {}
    module = parsed.clone()
    with PassContext(opt_level=3):
        with in_place(module):
            for p in PIPELINE:
                as_pass(_pass(p))(module)
    start = time.perf_counter()
    with print_options(external=out):
        str(module)
    t = time.perf_counter() - start
    rows.append(["resnet-50", n, "print after pipeline", f"{t:.3f}", f"{t / n * 1000:.4f}"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--no-resnet", action="store_true")
    parser.add_argument("--no-random", action="store_true")
    args = parser.parse_args(argv)
    rows: list[list] = []
    if not args.no_resnet:
        resnet50(rows)
    for n in args.sizes:
        time_passes(lambda n=n: bn_chain(n), f"bn-chain-{n}", rows)
        if not args.no_random:
            time_passes(lambda n=n: random_graph(n), f"random-{n}", rows)
    print(tabulate(rows, headers=["workload", "ops", "pass", "seconds", "s / 1k ops"]))


if __name__ == "__main__":
    main()
