"""A fuzzer for the files xrelay reads that are not text: ONNX models and exported libraries.

Two kinds of cases, half each:

* *onnx*: a small ONNX model built in code (convolutions with initializers, matmul/softmax,
  reshape/transpose/concat with shape tensors, Constant nodes, an If with two bodies, reductions
  and slices) mutated as a protobuf -- a node's op type, inputs, outputs or attributes (numbers
  to zero, negative, huge; strings to other names or bytes that are not UTF-8; tensors with
  negative or wrong dims or data), an initializer's dims, type or data, a graph input's dims or
  type, duplicated names (two nodes writing one output, two inputs of one name), the opset --
  or, one case in eight, its serialised bytes flipped or cut. Each goes through
  ``import_onnx`` (a ``ModelProto``, or the bytes as a file), then, when it imports and its
  inputs are small, the reference interpreter on random inputs.
* *archive*: a library written by ``export_library`` with one to three mutations of its zip
  archive -- a member's text or bytes mutated (``lib.mlir`` with the text fuzzer's mutations,
  ``graph.json`` and ``manifest.json`` with JSON ones, ``params.params`` bytes), a member
  dropped, renamed, duplicated or added, a declared size that lies, the archive's bytes
  flipped or cut -- then ``load_module`` and, when it loads, a run on random inputs.

A case *crashes* when anything raises other than the project's diagnostics
(``xrelay.TVMError``, ``ParseError``, ``DiagnosticException``), or when a diagnostic reports a
``MemoryError``. ``make fuzz`` runs ``python tests/fuzz/format_fuzz.py -n 10000`` after the IR
fuzzer and prints the counts per kind and the slowest case in CPU time;
``tests/fuzz/test_format_fuzz.py`` runs short deterministic runs.
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import os
import random
import resource
import struct
import sys
import tempfile
import time
import traceback
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from xdsl.utils.exceptions import DiagnosticException, ParseError

from xrelay.dialects.relay.dtypes import MEMORY_LIMIT_ENV
from xrelay.error import TVMError

sys.path.insert(0, str(Path(__file__).resolve().parent))
import xrelay_fuzz  # noqa: E402 - the text fuzzer's mutations and its Outcome

Outcome = xrelay_fuzz.Outcome
DIAGNOSTICS = (ParseError, DiagnosticException, TVMError)
MAX_INPUT_ELEMENTS = 1 << 16
INTS = (0, 1, -1, 2, 3, 7, -(1 << 40), 1 << 31, (1 << 63) - 1, -(1 << 63))
FLOATS = (0.0, -1.0, 1e30, float("nan"), float("inf"))
DIMS = (0, 1, 3, -1, -5, 1 << 32, (1 << 62))
NOT_UTF8 = b"\xff\xfe\x80name"


# ---- ONNX seeds ------------------------------------------------------------------------------


def onnx_seeds() -> list[onnx.ModelProto]:
    """Small valid models, one per family of structure the importer handles."""
    from xrelay.testing.onnx_models import make_model

    rng = np.random.default_rng(0)
    f = np.float32
    seeds = [
        make_model(
            [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
            {"x": ((1, 2, 6, 6), f)}, ["y"],
            {"w": rng.standard_normal((3, 2, 3, 3)).astype(f), "b": rng.standard_normal(3).astype(f)},
        ),
        make_model(
            [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["a"]),
             helper.make_node("Softmax", ["a"], ["y"], axis=-1)],
            {"x": ((2, 4), f)}, ["y"],
            {"w": rng.standard_normal((4, 3)).astype(f), "b": rng.standard_normal(3).astype(f)},
        ),
        make_model(
            [helper.make_node("Reshape", ["x", "s"], ["r"]),
             helper.make_node("Transpose", ["r"], ["t"], perm=[1, 0]),
             helper.make_node("Concat", ["t", "t"], ["y"], axis=0)],
            {"x": ((2, 3, 2), f)}, ["y"], {"s": np.array([3, 4], np.int64)},
        ),
        make_model(
            [helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(
                rng.standard_normal((2, 3)).astype(f))),
             helper.make_node("Mul", ["x", "k"], ["m"]),
             helper.make_node("Gather", ["m", "i"], ["g"], axis=1),
             helper.make_node("Cast", ["g"], ["y"], to=TensorProto.FLOAT16)],
            {"x": ((2, 3), f)}, {"y": np.float16}, {"i": np.array([2, 0], np.int64)},
        ),
        make_model(
            [helper.make_node("ReduceMean", ["x"], ["m"], axes=[1], keepdims=1),
             helper.make_node("Sub", ["x", "m"], ["d"]),
             helper.make_node("Split", ["d"], ["p", "q"], axis=1, split=[1, 3]),
             helper.make_node("Slice", ["q", "st", "en"], ["y"])],
            {"x": ((2, 4), f)}, ["p", "y"],
            {"st": np.array([0], np.int64), "en": np.array([2], np.int64)}, opset=12,
        ),
    ]
    then = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [],
                             [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])])  # fmt: skip
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])])  # fmt: skip
    seeds.append(make_model([helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
                            {"x": ((2,), f), "c": ((), np.bool_)}, ["y"]))  # fmt: skip
    return seeds


# ---- ONNX mutations --------------------------------------------------------------------------


def _graphs(g: onnx.GraphProto) -> list[onnx.GraphProto]:
    out = [g]
    for node in g.node:
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                out += _graphs(a.g)
    return out


def _tensors(model: onnx.ModelProto) -> list[onnx.TensorProto]:
    ts = []
    for g in _graphs(model.graph):
        ts += list(g.initializer)
        ts += [a.t for n in g.node for a in n.attribute if a.type == onnx.AttributeProto.TENSOR]
    return ts


def _names(model: onnx.ModelProto) -> list[str]:
    names = set()
    for g in _graphs(model.graph):
        names.update(i.name for i in g.input)
        names.update(t.name for t in g.initializer)
        for n in g.node:
            names.update(n.input)
            names.update(n.output)
    return sorted(names)


def _mutate_tensor(t: onnx.TensorProto, rng: random.Random) -> None:
    how = rng.choice(("dim", "dim", "drop-dim", "add-dim", "type", "data", "raw"))
    if how == "dim" and t.dims:
        t.dims[rng.randrange(len(t.dims))] = rng.choice(DIMS)
    elif how == "drop-dim" and t.dims:
        del t.dims[rng.randrange(len(t.dims))]
    elif how == "add-dim":
        t.dims.append(rng.choice(DIMS))
    elif how == "type":
        t.data_type = rng.choice((0, 1, 2, 3, 6, 7, 8, 9, 10, 11, 16, 17, 23, 99))
    elif how == "data":
        if t.raw_data:
            t.raw_data = t.raw_data[: rng.randrange(len(t.raw_data) + 1)]
        elif t.float_data:
            t.float_data.append(1.0)
        elif t.int64_data:
            del t.int64_data[-1:]
    else:
        t.raw_data = bytes(rng.randrange(256) for _ in range(rng.choice((0, 3, 8, 64))))


def _mutate_attribute(node: onnx.NodeProto, rng: random.Random, names: list[str]) -> None:
    if not node.attribute or rng.random() < 0.2:
        kind = rng.choice(("axis", "perm", "mode", "to", "value"))
        value: object = {"axis": rng.choice(INTS), "perm": [rng.choice(INTS) for _ in range(2)],
                         "mode": NOT_UTF8, "to": rng.choice(INTS), "value": 1.5}[kind]  # fmt: skip
        node.attribute.append(helper.make_attribute(kind, value))
        return
    a = node.attribute[rng.randrange(len(node.attribute))]
    if a.type == onnx.AttributeProto.INT:
        a.i = rng.choice(INTS)
    elif a.type == onnx.AttributeProto.INTS:
        if a.ints and rng.random() < 0.7:
            a.ints[rng.randrange(len(a.ints))] = rng.choice(INTS)
        elif a.ints and rng.random() < 0.5:
            del a.ints[-1]
        else:
            a.ints.append(rng.choice(INTS))
    elif a.type == onnx.AttributeProto.FLOAT:
        a.f = rng.choice(FLOATS)
    elif a.type == onnx.AttributeProto.STRING:
        a.s = rng.choice((NOT_UTF8, b"", b"nonsense", rng.choice(names).encode()))
    elif a.type == onnx.AttributeProto.TENSOR:
        _mutate_tensor(a.t, rng)
    elif a.type == onnx.AttributeProto.GRAPH:
        g = a.g
        if g.output and rng.random() < 0.5:
            g.output[0].name = rng.choice(names + ["nowhere"])
        elif g.node:
            g.node[0].input.append(rng.choice(names))
    else:
        a.name = rng.choice(("axis", "bogus", ""))


def mutate_onnx(model: onnx.ModelProto, rng: random.Random) -> onnx.ModelProto:
    """One structural mutation of a copy of ``model``."""
    m = copy.deepcopy(model)
    names = _names(m)
    graph = rng.choice(_graphs(m.graph))
    how = rng.choice(("op", "input", "output", "dup-output", "attr", "attr", "tensor", "tensor",
                      "graph-input", "graph-input", "dup-input", "graph-output", "opset"))  # fmt: skip
    nodes = list(graph.node)
    if how in ("op", "input", "output", "dup-output", "attr") and nodes:
        node = rng.choice(nodes)
        if how == "op":
            node.op_type = rng.choice(sorted({n.op_type for g in _graphs(m.graph) for n in g.node}
                                             | {"Conv", "Reshape", "Bogus", ""}))  # fmt: skip
        elif how == "input":
            if node.input and rng.random() < 0.5:
                del node.input[rng.randrange(len(node.input))]
            else:
                node.input.append(rng.choice(names + ["", "undefined"]))
        elif how == "output":
            if node.output:
                node.output[rng.randrange(len(node.output))] = rng.choice(names + [""])
        elif how == "dup-output":
            other = rng.choice(nodes)
            if node.output and other.output:
                other.output[0] = node.output[0]
        else:
            _mutate_attribute(node, rng, names)
    elif how == "tensor":
        ts = _tensors(m)
        if ts:
            _mutate_tensor(rng.choice(ts), rng)
    elif how == "graph-input" and graph.input:
        inp = rng.choice(list(graph.input))
        tt = inp.type.tensor_type
        if tt.shape.dim and rng.random() < 0.7:
            d = tt.shape.dim[rng.randrange(len(tt.shape.dim))]
            if rng.random() < 0.8:
                d.dim_value = rng.choice(DIMS)
            else:
                d.dim_param = rng.choice(("N", "", "batch"))
        else:
            tt.elem_type = rng.choice((0, 1, 2, 7, 8, 9, 10, 16, 99))
    elif how == "dup-input" and graph.input:
        graph.input.append(copy.deepcopy(rng.choice(list(graph.input))))
    elif how == "graph-output" and graph.output:
        out = rng.choice(list(graph.output))
        out.name = rng.choice(names + ["missing"])
    elif how == "opset" and m.opset_import:
        m.opset_import[0].version = rng.choice((1, 6, 7, 11, 13, 17, 21, 99, -1))
    return m


# ---- archive seeds and mutations ------------------------------------------------------------

ARCHIVE_MODULES = (
    """func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = relay.multiply %x, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %z = relay.add %y, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %z : tensor<2x3xf32>
}
""",
    """func.func @main(%x: tensor<1x4xf32>, %w: tensor<3x4xf32>) -> tensor<1x3xf32> {
  %0 = relay.nn.dense %x, %w {units = 3} : (tensor<1x4xf32>, tensor<3x4xf32>) -> tensor<1x3xf32>
  %1 = relay.nn.relu %0 : (tensor<1x3xf32>) -> tensor<1x3xf32>
  %2 = relay.nn.softmax %1 : (tensor<1x3xf32>) -> tensor<1x3xf32>
  func.return %2 : tensor<1x3xf32>
}
""",
)


def archive_seeds() -> list[dict[str, bytes]]:
    """The members of libraries ``export_library`` wrote, by name."""
    from xrelay.backend.build import build
    from xrelay.relay.module import IRModule
    from xrelay.runtime.executor_factory import export_library

    seeds = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, text in enumerate(ARCHIVE_MODULES):
            params = {"w": np.ones((3, 4), "float32")} if "%w" in text else None
            path = os.path.join(tmp, f"lib{i}.so")
            export_library(build(IRModule.from_text(text), params, opt_level=3), path)
            with zipfile.ZipFile(path) as z:
                seeds.append({n: z.read(n) for n in z.namelist()})
    return seeds


def _mutate_json(data: bytes, rng: random.Random) -> bytes:
    try:
        doc = json.loads(data)
    except ValueError:
        return data[: rng.randrange(len(data) + 1)]
    spots: list[tuple[object, object]] = []

    def walk(v: object) -> None:
        if isinstance(v, dict):
            for k in list(v):
                spots.append((v, k))
                walk(v[k])
        elif isinstance(v, list):
            for i, x in enumerate(v):
                spots.append((v, i))
                walk(x)

    walk(doc)
    if not spots:
        return b"{}"
    parent, key = rng.choice(spots)
    how = rng.choice(("value", "value", "type", "delete"))
    if how == "delete":
        del parent[key]  # type: ignore[index,attr-defined]
    elif how == "type":
        parent[key] = rng.choice(({}, [], "x", None, True, [[1]]))  # type: ignore[index]
    else:
        parent[key] = rng.choice(INTS + (1.5, -0.0, "main", "float32", "p0"))  # type: ignore[index]
    return json.dumps(doc).encode()


def _mutate_member(name: str, data: bytes, rng: random.Random) -> bytes:
    if name.endswith(".json"):
        return _mutate_json(data, rng)
    if name.endswith(".mlir"):
        try:
            return xrelay_fuzz.mutate_once(data.decode(), rng).encode()
        except UnicodeDecodeError:
            return data
    buf = bytearray(data)
    how = rng.choice(("flip", "cut", "int64"))
    if how == "flip" and buf:
        buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
    elif how == "cut":
        del buf[rng.randrange(len(buf) + 1):]
    elif len(buf) >= 8:
        at = rng.randrange(len(buf) - 7) & ~7
        struct.pack_into("<q", buf, at, rng.choice(INTS + (1 << 32,)))
    return bytes(buf)


def _zip(members: list[tuple[str, bytes]], method: int) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as z:
        for name, data in members:
            z.writestr(name, data)
    return out.getvalue()


def mutate_archive(seed: dict[str, bytes], rng: random.Random) -> bytes:
    """A seed library's archive with one to three mutations, as bytes."""
    members = list(seed.items())
    byte_level = []
    for _ in range(rng.randint(1, 3)):
        how = rng.choice(("member", "member", "member", "drop", "rename", "dup", "add", "bytes", "lie"))
        if how == "member":
            i = rng.randrange(len(members))
            members[i] = (members[i][0], _mutate_member(*members[i], rng))
        elif how == "drop" and members:
            del members[rng.randrange(len(members))]
        elif how == "rename" and members:
            i = rng.randrange(len(members))
            members[i] = (rng.choice(("../escape", "/abs", "graph.JSON", "lib.mlir", "")) or "x", members[i][1])
        elif how == "dup" and members:
            members.append(rng.choice(members))
        elif how == "add":
            members.append(("extra.bin", bytes(rng.randrange(100))))
        else:
            byte_level.append(how)
    method = rng.choice((zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about duplicate names
        data = bytearray(_zip(members, method))
    for how in byte_level:
        if how == "lie":  # a central-directory entry's uncompressed size
            at = data.rfind(b"PK\x01\x02")
            if 0 <= at <= len(data) - 28:
                struct.pack_into("<I", data, at + 24, rng.choice((0, 1, 1 << 31, (1 << 32) - 1)))
        elif rng.random() < 0.5 and data:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        else:
            del data[rng.randrange(len(data) + 1):]
    return bytes(data)


# ---- running a case --------------------------------------------------------------------------


def _small(mod, entry: str = "main") -> bool:
    return xrelay_fuzz._small_enough(mod, entry)  # noqa: SLF001


def _interpret(module) -> None:
    from xrelay.runtime.interpreter import random_inputs, run

    if _small(module):
        run(module, random_inputs(module, seed=0), entry="main")


def _timed(steps) -> Outcome:
    """Run ``steps`` (a generator yielding each stage's name, returning the final status) and
    classify what it raised: a diagnostic is a rejection (a crash if it reports a
    ``MemoryError``), anything else a crash."""
    start, wall = time.process_time(), time.perf_counter()
    stage = "?"
    try:
        while True:
            stage = next(steps)
    except StopIteration as done:
        return Outcome(done.value, stage, "", time.process_time() - start, time.perf_counter() - wall)
    except DIAGNOSTICS as e:
        status = "crashed" if "MemoryError" in str(e) else "rejected"
        error = xrelay_fuzz._first_line(e)  # noqa: SLF001
    except Exception as e:  # noqa: BLE001 - what the fuzzer looks for
        status, error = "crashed", "".join(traceback.format_exception(e)[-3:])
    return Outcome(status, stage, error, time.process_time() - start, time.perf_counter() - wall)


def run_onnx(case: onnx.ModelProto | bytes, tmp: str) -> Outcome:
    from xrelay.frontends import import_onnx

    def steps():
        yield "import"
        if isinstance(case, bytes):
            path = os.path.join(tmp, "model.onnx")
            with open(path, "wb") as f:
                f.write(case)
            result = import_onnx(path)
        else:
            result = import_onnx(case)
        yield "interpret"
        _interpret(result.module)
        return "ran"

    return _timed(steps())


def run_archive(data: bytes, tmp: str) -> Outcome:
    from xrelay.runtime.executor_factory import load_module
    from xrelay.runtime.interpreter import random_inputs

    path = os.path.join(tmp, "lib.so")
    with open(path, "wb") as f:
        f.write(data)

    def steps():
        yield "load"
        factory = load_module(path)
        yield "run"
        program = factory.get_lib()
        if not _small(program):
            return "parsed"
        m = factory[factory.libmod_name]()
        m.set_input(**random_inputs(program, seed=0))
        m.run()
        return "ran"

    return _timed(steps())


class Cases:
    """Makes and runs the cases of both kinds (seeds built once); a context manager whose
    scratch directory goes on leaving it (``with Cases() as cases: ...``)."""

    def __init__(self) -> None:
        self.onnx = onnx_seeds()
        self.archives = archive_seeds()
        self._scratch = tempfile.TemporaryDirectory(prefix="xrelay-fuzz-")
        self.tmp = self._scratch.name

    def __enter__(self) -> Cases:
        return self

    def __exit__(self, *exc: object) -> None:
        self._scratch.cleanup()

    def make(self, rng: random.Random) -> tuple[str, object]:
        if rng.random() < 0.5:
            model = rng.choice(self.onnx)
            for _ in range(rng.randint(1, 3)):
                model = mutate_onnx(model, rng)
            if rng.random() < 0.125:
                data = bytearray(model.SerializeToString())
                for _ in range(rng.randint(1, 4)):
                    if rng.random() < 0.7 and data:
                        data[rng.randrange(len(data))] = rng.randrange(256)
                    else:
                        del data[rng.randrange(len(data) + 1):]
                return "onnx", bytes(data)
            return "onnx", model
        return "archive", mutate_archive(rng.choice(self.archives), rng)

    def run(self, kind: str, case: object) -> Outcome:
        if kind == "onnx":
            return run_onnx(case, self.tmp)  # type: ignore[arg-type]
        return run_archive(case, self.tmp)  # type: ignore[arg-type]


def describe(kind: str, case: object) -> str:
    if isinstance(case, onnx.ModelProto):
        try:
            return onnx.printer.to_text(case)
        except Exception:  # noqa: BLE001 - a mutated model the printer cannot show
            return str(case)
    return f"{kind}: {len(case)} bytes: {bytes(case[:64])!r}..."  # type: ignore[arg-type,index]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", "--cases", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=5)
    ap.add_argument("--memory-limit", type=int, default=xrelay_fuzz.MEMORY_LIMIT_MB, metavar="MB")
    ap.add_argument("--progress", type=int, default=1000, metavar="N")
    args = ap.parse_args(argv)
    os.environ.setdefault(MEMORY_LIMIT_ENV, xrelay_fuzz.TENSOR_LIMIT)
    if args.memory_limit:
        limit = args.memory_limit << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    with Cases() as cases:
        return _fuzz(args, cases)


def _fuzz(args: argparse.Namespace, cases: Cases) -> int:
    for m in cases.onnx:  # warm-up: lazy imports are not a case's time
        run_onnx(m, cases.tmp)
    rng = random.Random(args.seed)
    counts: Counter[tuple[str, str]] = Counter()
    crashes: list[tuple[str, object, Outcome]] = []
    slowest: tuple[float, str, object] = (0.0, "", b"")
    slowest_wall = 0.0
    for i in range(args.cases):
        if args.progress and i and i % args.progress == 0:
            print(f"{i} cases, {len(crashes)} crashed, slowest {slowest[0]:.3f} s CPU", file=sys.stderr, flush=True)
        kind, case = cases.make(rng)
        out = cases.run(kind, case)
        counts[kind, out.status] += 1
        counts["all", out.status] += 1
        if out.status == "crashed":
            crashes.append((kind, case, out))
            if args.progress:
                print(f"--- case {i}: crashed in {out.stage}:\n{describe(kind, case)}\n{out.error}",
                      file=sys.stderr, flush=True)  # fmt: skip
        slowest_wall = max(slowest_wall, out.wall)
        if out.seconds > slowest[0]:
            slowest = (out.seconds, kind, case)
    print(f"{args.cases} cases (seed {args.seed}): mutated ONNX models ({len(cases.onnx)} seeds) and "
          f"export archives ({len(cases.archives)} seeds)")  # fmt: skip
    for kind in ("onnx", "archive", "all"):
        total = sum(n for (k, _), n in counts.items() if k == kind)
        parts = ", ".join(f"{st} {counts[kind, st]}" for st in ("ran", "parsed", "rejected", "crashed"))
        print(f"  {kind:8} {total:6}: {parts}")
    print(f"  slowest  {slowest[0]:.3f} s CPU (wall: slowest {slowest_wall:.3f} s), a {slowest[1]} case:\n"
          f"{describe(slowest[1], slowest[2])[:2000]}")  # fmt: skip
    errors = Counter(o.error.strip().splitlines()[-1] if o.error.strip() else "?" for _, _, o in crashes)
    for err, n in errors.most_common():
        print(f"  crash x{n}: {err}")
    for kind, case, out in crashes[: args.show]:
        print(f"--- {kind} crashed in {out.stage}:\n{describe(kind, case)[:3000]}\n{out.error}")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
