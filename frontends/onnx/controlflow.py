"""ONNX's ``onnx/defs/controlflow`` operators: ``If``, ``Loop`` and ``Scan``.

Relay's ONNX frontend (TVM v0.19) mapped ``If`` to Relay's ``If`` and ``Loop``/``Scan`` to
recursive Relay functions. xrelay's IR has Relay's If (``scf.if`` on a bool scalar's element,
which the reference interpreter runs and ``xrelay.build`` refuses) but no recursion, so:

* ``If`` whose condition is known at import (a constant, or computed from static shapes and
  attributes, as in the expanded function bodies ONNX ships) imports only the branch taken;
  with a run-time condition it becomes ``scf.if``, each branch imported into its own region.
  Both branches must then import and give the same types (Relay's If has one type); when they
  do not, the import raises ``OnnxRunTimeValueError`` naming the graph inputs the condition
  comes from (the ONNX backend then imports again with those bound, which picks the branch).
* ``Scan`` is unrolled: the scanned axis has a static length, so the body is imported once per
  step (slices of the scan inputs with ``take``, the scan outputs joined with ``stack``). Opset 8's
  batch axis is unrolled too; its ``sequence_lens`` must be absent or the full length.
* ``Loop`` is unrolled when its trip count and every step's condition are known at import (a
  body whose condition only forwards its input, or folds to a constant). Otherwise the import
  raises ``OnnxRunTimeValueError`` naming the graph inputs the count or condition comes from
  (the ONNX backend then imports again with those inputs bound).

Unrolling is bounded: a Loop or Scan that would import more than ``UNROLL_LIMIT`` body nodes is
refused with its numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from xdsl.dialects.builtin import i1
from xdsl.dialects.scf import IfOp, YieldOp
from xdsl.dialects.tensor import ExtractOp
from xdsl.ir import Block, Region

from xrelay.dialects.relay.dtypes import dtype_of
from xrelay.frontends.onnx.importer import (
    Importer,
    Node,
    OnnxImportError,
    OnnxRunTimeValueError,
    Value,
    relay_dtype,
)
from xrelay.frontends.onnx.registry import converter

UNROLL_LIMIT = 100_000
"""The most body nodes one Loop or Scan is unrolled into."""


def _check_unroll(node: Node, steps: int, body: onnx.GraphProto) -> None:
    if steps * max(1, len(body.node)) > UNROLL_LIMIT:
        raise node.fail(
            f"unrolling {steps} steps of a body of {len(body.node)} nodes is more than the "
            f"importer unrolls ({UNROLL_LIMIT:,} body nodes)"
        )


def _truth(v: Value, node: Node, what: str) -> bool:
    a = np.asarray(v.const)
    if a.size != 1:
        raise node.fail(f"its {what} has {a.size} elements, expected one")
    return bool(a.reshape(-1)[0])


def _stack(im: Importer, vals: Sequence[Value], axis: int) -> Value:
    return im.emit1("stack", list(vals), axis=axis)


def _step(im: Importer, x: Value, t: int, axis: int) -> Value:
    """``x[..., t, ...]`` along ``axis`` (the axis removed)."""
    return im.emit1("take", [x, im.const(np.int64(t))], axis=axis)


def _empty_scan(im: Importer, node: Node, out: onnx.ValueInfoProto, axis: int = 0) -> Value:
    """A scan output of zero steps, from the body's declared output type."""
    tt = out.type.tensor_type
    dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
    if not out.type.HasField("tensor_type") or not tt.HasField("shape") or None in dims:
        raise node.fail(
            f"it runs zero times and its body does not declare a static shape for scan output "
            f"'{out.name}' (needed for its empty result)"
        )
    dtype = relay_dtype(tt.elem_type, f"body output '{out.name}'")
    dims.insert(axis, 0)
    return im.const(np.zeros(dims), dtype)


# ---- If --------------------------------------------------------------------------------------


@converter("If", structured=True)
def _if(im: Importer, node: Node) -> list[Value]:
    cond = node.inputs[0]
    then_g, else_g = node.attrs["then_branch"], node.attrs["else_branch"]
    if cond.known:
        return im.subgraph(then_g if _truth(cond, node, "condition") else else_g, [], node)
    if any(d != 1 for d in im.static_shape(cond, node)):
        raise node.fail(f"its condition has shape {list(im.shape_of(cond))}, expected one element")
    if dtype_of(cond.value.type) != "bool":
        raise node.fail(f"its condition is {im.dtype_of(cond)}, expected bool")
    flag = im.reshape(cond, [])
    ext = ExtractOp(im.ssa(flag), [], i1)
    im.block.add_op(ext)
    outer = im.block
    regions, yielded = [], []
    try:
        for g in (then_g, else_g):
            im.block = Block()
            vals = im.subgraph(g, [], node)
            if not all(isinstance(v, Value) for v in vals):
                raise node.fail(f"branch '{g.name}' gives a sequence or optional")
            outs = [im.ssa(v) for v in vals]
            im.block.add_op(YieldOp(*outs))
            regions.append(Region(im.block))
            yielded.append(outs)
    except OnnxImportError as e:
        # the branch not taken may not even import with these shapes (ONNX's expanded
        # functions branch on the rank): binding the condition's inputs picks one branch
        raise OnnxRunTimeValueError(
            f"If node '{node.name}': with a run-time condition both branches are imported, and "
            f"branch '{g.name}' cannot be: {e}",
            im.graph_inputs_of(cond),
        ) from e
    finally:
        im.block = outer
    types = [v.type for v in yielded[0]]
    if types != [v.type for v in yielded[1]]:
        raise OnnxRunTimeValueError(
            f"If node '{node.name}': its branches give different types ("
            + ", ".join(map(str, types))
            + ") and ("
            + ", ".join(str(v.type) for v in yielded[1])
            + "); Relay's If has one type, so the condition must be known at import",
            im.graph_inputs_of(cond),
        )
    op = IfOp(ext.result, types, regions[0], regions[1])
    im.block.add_op(op)
    return [Value(value=r) for r in op.results]


# ---- Loop ------------------------------------------------------------------------------------


@converter("Loop", structured=True)
def _loop(im: Importer, node: Node) -> list[Value]:
    body: onnx.GraphProto = node.attrs["body"]
    trip, cond = node.input(0), node.input(1)
    carried = list(node.inputs[2:])
    n_carried = len(carried)
    n_scan = len(body.output) - 1 - n_carried
    if n_scan < 0:
        raise node.fail(f"its body has {len(body.output)} outputs, fewer than 1 + {n_carried} loop-carried values")
    if any(v is None for v in carried):
        raise node.fail("a loop-carried input is empty (optional values are not supported)")
    m = None if trip is None else int(np.asarray(_known(im, node, trip, "trip count").const).reshape(-1)[0])
    going = True if cond is None else _truth(_known(im, node, cond, "cond"), node, "condition")
    if m is None and cond is None:
        raise node.fail("it has neither a trip count nor a condition (an endless loop)")
    if m is not None:
        _check_unroll(node, m, body)
    cond_val = im.const(np.array(True)) if cond is None else cond
    scans: list[list[Value]] = [[] for _ in range(n_scan)]
    i = 0
    while going and (m is None or i < m):
        if m is None:
            _check_unroll(node, i + 1, body)
        outs = im.subgraph(body, [im.const(np.int64(i)), cond_val, *carried], node)
        cond_val, carried = outs[0], outs[1 : 1 + n_carried]
        for k, v in enumerate(outs[1 + n_carried :]):
            if not isinstance(v, Value):
                raise node.fail("a scan output of its body is a sequence or optional")
            scans[k].append(v)
        going = _truth(_known(im, node, cond_val, "condition (body output)"), node, "condition")
        i += 1
    results = list(carried)
    for k in range(n_scan):
        if scans[k]:
            results.append(_stack(im, scans[k], 0))
        else:
            results.append(_empty_scan(im, node, body.output[1 + n_carried + k]))
    return results


def _known(im: Importer, node: Node, v: Value, what: str) -> Value:
    if not v.known:
        raise OnnxRunTimeValueError(
            f"Loop node '{node.name}': its {what} is computed at run time; xrelay unrolls Loop at "
            "import, so the trip count and every step's condition must be known then",
            im.graph_inputs_of(v),
        )
    return v


# ---- Scan ------------------------------------------------------------------------------------


def _scan_steps(
    im: Importer,
    node: Node,
    body: onnx.GraphProto,
    states: list[Value],
    scans: list[Value],
    in_axes: Sequence[int],
    in_dirs: Sequence[int],
    out_axes: Sequence[int],
    out_dirs: Sequence[int],
) -> list[Value]:
    """One Scan over ``scans`` (states first): the final states, then the scan outputs."""
    lengths = {im.static_shape(x, node)[a] for x, a in zip(scans, in_axes)}
    if len(lengths) != 1:
        raise node.fail(f"its scan inputs have different lengths {sorted(lengths)} along the scan axes")
    (length,) = lengths
    _check_unroll(node, length, body)
    n_out = len(body.output) - len(states)
    if n_out < 0:
        raise node.fail(f"its body has {len(body.output)} outputs, fewer than its {len(states)} states")
    per_step: list[list[Value]] = [[] for _ in range(n_out)]
    for t in range(length):
        xs = [_step(im, x, length - 1 - t if d else t, a) for x, a, d in zip(scans, in_axes, in_dirs)]
        outs = im.subgraph(body, [*states, *xs], node)
        states = outs[: len(states)]
        for k, v in enumerate(outs[len(states) :]):
            per_step[k].append(v)
    results = list(states)
    for k in range(n_out):
        if not per_step[k]:
            results.append(_empty_scan(im, node, body.output[len(states) + k], out_axes[k]))
            continue
        vals = per_step[k][::-1] if out_dirs[k] else per_step[k]
        results.append(_stack(im, vals, out_axes[k]))
    return results


def _axes(node: Node, name: str, n: int, ranks: Sequence[int]) -> list[int]:
    vals = list(node.attrs.get(name, [0] * n))
    if len(vals) != n:
        raise node.fail(f"'{name}' has {len(vals)} values for {n} tensors")
    out = []
    for a, r in zip(vals, ranks):
        if not -r <= a < r:
            raise node.fail(f"'{name}' value {a} is out of range for rank {r}")
        out.append(a + r if a < 0 else a)
    return out


@converter("Scan")
def _scan(im: Importer, node: Node) -> list[Value]:
    body: onnx.GraphProto = node.attrs["body"]
    n_scan = node.attrs.get("num_scan_inputs")
    if n_scan is None:
        raise node.fail("attribute 'num_scan_inputs' is required")
    if node.opset < 9:
        return _scan8(im, node, body, n_scan)
    ins = list(node.inputs)
    if any(v is None for v in ins):
        raise node.fail("an input is empty")
    states, scans = ins[: len(ins) - n_scan], ins[len(ins) - n_scan :]
    n_out = len(body.output) - len(states)
    in_axes = _axes(node, "scan_input_axes", n_scan, [im.rank(x) for x in scans])
    out_ranks = [len(o.type.tensor_type.shape.dim) + 1 for o in body.output[len(states) :]]
    raw_out = node.attrs.get("scan_output_axes")
    if raw_out is not None and any(a < 0 for a in raw_out) and any(
        not o.type.tensor_type.HasField("shape") for o in body.output[len(states) :]
    ):
        raise node.fail("negative 'scan_output_axes' need the body's output ranks")
    out_axes = _axes(node, "scan_output_axes", n_out, out_ranks)
    in_dirs = list(node.attrs.get("scan_input_directions", [0] * n_scan))
    out_dirs = list(node.attrs.get("scan_output_directions", [0] * n_out))
    if len(in_dirs) != n_scan or len(out_dirs) != n_out:
        raise node.fail("'scan_input_directions'/'scan_output_directions' have the wrong length")
    return _scan_steps(im, node, body, states, scans, in_axes, in_dirs, out_axes, out_dirs)


def _scan8(im: Importer, node: Node, body: onnx.GraphProto, n_scan: int) -> list[Value]:
    """Opset 8: a leading batch axis on every input and output, the scan axis after it."""
    seq_lens, ins = node.input(0), list(node.inputs[1:])
    states, scans = ins[: len(ins) - n_scan], ins[len(ins) - n_scan :]
    if not scans or any(v is None for v in ins):
        raise node.fail("an input is empty")
    batch, length = im.static_shape(scans[0], node)[:2]
    if seq_lens is not None:
        lens = im.static(seq_lens, node, "sequence_lens")
        if np.any(np.asarray(lens) != length):
            raise node.fail(f"sequence_lens {np.asarray(lens).tolist()} shorter than the scan length {length} are not supported")
    n_out = len(body.output) - len(states)
    dirs = list(node.attrs.get("directions", [0] * n_scan))
    per_batch = []
    for b in range(batch):
        per_batch.append(
            _scan_steps(
                im,
                node,
                body,
                [_step(im, s, b, 0) for s in states],
                [_step(im, x, b, 0) for x in scans],
                [0] * n_scan,
                dirs,
                [0] * n_out,
                [0] * n_out,
            )
        )
    return [_stack(im, [r[k] for r in per_batch], 0) for k in range(len(states) + n_out)]
