"""How building, printing, parsing, verifying and partitioning relay IR scale with the number of ops.

Builds two graph families of 1k, 10k and 100k ops — a chain of elementwise/broadcast ops and a
ResNet-style graph (conv2d, bias add, relu, residual add, repeated) — and prints seconds per 1k
ops for each stage. Linear growth shows as a flat column. The partition column annotates a
fresh copy for the oneDNN backend (``annotate-target`` with its op list, no region merging, so
nearly every op is a region of its own, as in the dnnl build) and times ``partition-graph``,
which outlines each region into a function of its own.

    python benchmarks/ir_scaling.py [--sizes 1000 10000 100000]
"""

from __future__ import annotations

import argparse
import time

from tabulate import tabulate
from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region
from xdsl.parser import Parser
from xdsl.rewriter import InsertPoint

from xrelay.backend.dnnl.patterns import supported
from xrelay.dialects import make_context
from xrelay.dialects.relay import RELAY_OPS, ConstantOp, tensor_type
from xrelay.transforms.annotate_target import annotate_target
from xrelay.transforms.partition_graph import partition_graph


def chain(n: int) -> ModuleOp:
    """x -> relu -> add(., b) -> multiply(., b) -> ... : n ops."""
    t = tensor_type((1, 64, 56, 56), "float32")
    b = tensor_type((64, 1, 1), "float32")
    block = Block(arg_types=[t, b])
    builder = Builder(InsertPoint.at_end(block))
    x, bias = block.args
    names = ["nn.relu", "add", "multiply", "tanh"]
    for i in range(n):
        name = names[i % len(names)]
        operands = [x] if name in ("nn.relu", "tanh") else [x, bias]
        x = builder.insert(RELAY_OPS[name].make(operands)).results[0]
    builder.insert(func.ReturnOp(x))
    fn = func.FuncOp("main", ([t, b], [t]), Region(block))
    return ModuleOp([fn])


def resnet_like(n: int) -> ModuleOp:
    """Residual blocks of conv2d + add + relu (+ residual add) until n ops."""
    t = tensor_type((1, 16, 14, 14), "float32")
    block = Block(arg_types=[t])
    builder = Builder(InsertPoint.at_end(block))
    import numpy as np

    w = builder.insert(ConstantOp.from_numpy(np.zeros((16, 16, 3, 3), np.float32), "w")).result
    bias = builder.insert(ConstantOp.from_numpy(np.zeros((16, 1, 1), np.float32), "b")).result
    x = block.args[0]
    count = 2
    while count < n:
        shortcut = x
        for _ in range(2):
            x = builder.insert(RELAY_OPS["nn.conv2d"].make([x, w], padding=1)).results[0]
            x = builder.insert(RELAY_OPS["add"].make([x, bias])).results[0]
            x = builder.insert(RELAY_OPS["nn.relu"].make([x])).results[0]
        x = builder.insert(RELAY_OPS["add"].make([x, shortcut])).results[0]
        count += 7
    builder.insert(func.ReturnOp(x))
    fn = func.FuncOp("main", ([t], [t]), Region(block))
    return ModuleOp([fn])


def measure(kind: str, n: int) -> list[object]:
    ctx = make_context()
    t0 = time.perf_counter()
    module = chain(n) if kind == "chain" else resnet_like(n)
    t1 = time.perf_counter()
    text = str(module)
    t2 = time.perf_counter()
    parsed = Parser(ctx, text).parse_module()
    t3 = time.perf_counter()
    parsed.verify()
    t4 = time.perf_counter()
    ops = sum(1 for _ in parsed.walk()) - 2
    annotate_target(parsed, ["dnnl"], {"dnnl": supported})
    t5 = time.perf_counter()
    functions = partition_graph(parsed)
    t6 = time.perf_counter()
    k = ops / 1000
    return [
        kind,
        ops,
        (t1 - t0) / k,
        (t2 - t1) / k,
        (t3 - t2) / k,
        (t4 - t3) / k,
        (t6 - t5) / k,
        functions,
        len(text) / 1e6,
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    args = ap.parse_args()
    rows = [measure(kind, n) for kind in ("chain", "resnet-like") for n in args.sizes]
    headers = [
        "graph",
        "ops",
        "build s/1k",
        "print s/1k",
        "parse s/1k",
        "verify s/1k",
        "partition s/1k",
        "regions",
        "text MB",
    ]
    print(tabulate(rows, headers=headers, floatfmt=".3f", tablefmt="github"))


if __name__ == "__main__":
    main()
