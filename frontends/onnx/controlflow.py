"""ONNX's ``onnx/defs/controlflow`` operators: ``If``, ``Loop`` and ``Scan``.

Relay's ONNX frontend (TVM v0.19) mapped ``If`` to Relay's ``If`` and ``Loop``/``Scan`` to
recursive Relay functions. xrelay's IR has Relay's If (``scf.if`` on a bool scalar's element,
which the reference interpreter runs and ``xrelay.build`` refuses) and ``relay.loop`` but no
recursion, so:

* ``If`` whose condition is known at import (a constant, or computed from static shapes and
  attributes, as in the expanded function bodies ONNX ships) imports only the branch taken;
  with a run-time condition it becomes ``scf.if``, each branch imported into its own region.
  Both branches must then import and give the same types (Relay's If has one type); when they
  do not, the import raises ``OnnxRunTimeValueError`` naming the graph inputs the condition
  comes from (the ONNX backend then imports again with those bound, which picks the branch).
* ``Scan`` over a static scan axis is unrolled: the body is imported once per step (slices of
  the scan inputs with ``take``, the scan outputs joined with ``stack``). Opset 8's batch axis
  is unrolled too; its ``sequence_lens`` must be absent or the full length. Over an axis of
  run-time length (opset 9 on) it is a ``relay.loop`` whose trip count is that length.
* ``Loop`` is unrolled when its trip count and every step's condition are known at import (a
  body whose condition only forwards its input, or folds to a constant; tried in a throw-away
  scope first). Otherwise it is a ``relay.loop`` (docs/design.md, decision 10): the body
  imported once into its region, a loop-carried value whose shape changes between iterations
  made dynamic where it does. Only the reference interpreter runs it; with ``unroll_loops``
  (the ONNX backend's built mode) the import raises ``OnnxRunTimeValueError`` naming the graph
  inputs the count or condition comes from instead (the backend binds them and imports again).

Unrolling is bounded: a Loop or Scan that would import more than ``UNROLL_LIMIT`` body nodes is
refused with its numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import onnx
from xdsl.dialects.builtin import i1
from xdsl.dialects.scf import IfOp, YieldOp
from xdsl.dialects.tensor import CastOp, ExtractOp
from xdsl.ir import Attribute, Block, Region, SSAValue

from xrelay.dialects.relay.dtypes import dtype_of, shape_of, tensor_type
from xrelay.dialects.relay.loop import LoopOp, LoopYieldOp, loop_body
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
    if len(body.input) != 2 + n_carried:
        raise node.fail(
            f"its body '{body.name}' has {len(body.input)} inputs; a Loop body takes the iteration "
            f"number, the condition and the {n_carried} loop-carried value(s) ({2 + n_carried})"
        )
    if any(v is None for v in carried):
        raise node.fail("a loop-carried input is empty (optional values are not supported)")
    if trip is None and cond is None:
        raise node.fail("it has neither a trip count nor a condition (an endless loop)")
    for v, what in ((trip, "trip count"), (cond, "condition")):
        if isinstance(v, Value) and v.known and np.asarray(v.const).size != 1:
            raise node.fail(f"its {what} has {np.asarray(v.const).size} elements, expected one")
    static = all(v is None or v.known for v in (trip, cond))
    if static and not im.unroll_loops:
        try:  # unrolled when every step's condition is known at import (static shapes then)
            with im.trial():
                _unroll(im, node, body, trip, cond, carried, n_scan)
        except _RunTimeCondition:
            return _region(im, node, body, trip, cond, carried, n_scan)
    if static or im.unroll_loops:
        return _unroll(im, node, body, trip, cond, carried, n_scan)
    return _region(im, node, body, trip, cond, carried, n_scan)


class _RunTimeCondition(OnnxRunTimeValueError):
    """A Loop's trip count or a step's condition is computed at run time."""


def _unroll(
    im: Importer, node: Node, body: onnx.GraphProto, trip: Value | None, cond: Value | None,
    carried: list[Value], n_scan: int,
) -> list[Value]:
    n_carried = len(carried)
    m = None if trip is None else int(np.asarray(_known(im, node, trip, "trip count").const).reshape(-1)[0])
    going = True if cond is None else _truth(_known(im, node, cond, "cond"), node, "condition")
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
        # without a condition input the body's still ends the loop (onnxruntime and ONNX's
        # reference do so, though the operator's text calls it ignored)
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
        raise _RunTimeCondition(
            f"Loop node '{node.name}': its {what} is computed at run time; unrolling the Loop at "
            "import (unroll_loops=True, or an xrelay.build of it) needs the trip count and every "
            "step's condition known then",
            im.graph_inputs_of(v),
        )
    return v


def _scalar(im: Importer, node: Node, v: Value, dtype: str, what: str) -> Value:
    """``v`` (one element of ``dtype``) as a 0-d tensor."""
    if not isinstance(v, Value):
        raise node.fail(f"its {what} is a sequence or optional, expected a tensor")
    shape = im.shape_of(v)
    if any(d is None for d in shape) or int(np.prod(shape, dtype=np.int64)) != 1:
        raise node.fail(f"its {what} has shape {list(shape)}, expected one element")
    if im.dtype_of(v) != dtype:
        raise node.fail(f"its {what} is {im.dtype_of(v)}, expected {dtype}")
    return im.reshape(v, [])


def _join(a: Attribute, b: Attribute) -> Attribute | None:
    """The type both ``a`` and ``b`` fit (dynamic where their dimensions differ), if any."""
    if dtype_of(a) != dtype_of(b) or len(shape_of(a)) != len(shape_of(b)):
        return None
    dims = [x if x == y else None for x, y in zip(shape_of(a), shape_of(b))]
    return tensor_type(dims, dtype_of(a))


def _refined(t: Attribute, declared: onnx.ValueInfoProto) -> Attribute:
    """``t`` with its dynamic dimensions taken from ``declared`` where that gives them."""
    tt = declared.type.tensor_type
    if not declared.type.HasField("tensor_type") or not tt.HasField("shape"):
        return t
    dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
    shape = shape_of(t)
    if len(dims) != len(shape) or any(a is not None and b is not None and a != b for a, b in zip(shape, dims)):
        return t
    return tensor_type([a if a is not None else b for a, b in zip(shape, dims)], dtype_of(t))


def _region(
    im: Importer, node: Node, body: onnx.GraphProto, trip: Value | None, cond: Value | None,
    carried: list[Value], n_scan: int,
) -> list[Value]:
    """The Loop as a ``relay.loop``: its body imported once, into the loop's region."""
    deps = [n for v in (trip, cond) if v is not None and not v.known for n in im.graph_inputs_of(v)]

    def refuse(why: str) -> OnnxRunTimeValueError:
        # the ONNX backend then binds the inputs the count and condition come from and unrolls
        return OnnxRunTimeValueError(
            f"Loop node '{node.name}': its trip count or condition is computed at run time and it "
            f"cannot be a loop region: {why}",
            deps or [n for v in carried if isinstance(v, Value) for n in im.graph_inputs_of(v)],
        )

    if any(not isinstance(v, Value) for v in carried):
        raise refuse("a loop-carried value is a sequence or optional (a region carries tensors)")
    trip_v = im.const(np.int64(np.iinfo(np.int64).max)) if trip is None else _scalar(im, node, trip, "int64", "trip count")
    cond_v = im.const(np.array(True)) if cond is None else _scalar(im, node, cond, "bool", "condition")
    step = lambda args: im.subgraph(body, args, node)  # noqa: E731 - the body as it is
    return _loop_op(im, node, trip_v, cond_v, carried, step, list(body.output[1 + len(carried) :]), refuse)


def _loop_op(
    im: Importer, node: Node, trip_v: Value, cond_v: Value, carried: list[Value],
    step: Callable[[list[Value]], list[Any]], declared: Sequence[onnx.ValueInfoProto],
    refuse: Callable[[str], OnnxRunTimeValueError],
) -> list[Value]:
    """A ``relay.loop`` whose body ``step`` imports: given the block's arguments (iteration
    number, condition, loop-carried values) it gives the next condition, the next loop-carried
    values and the scan elements (``declared``: the ONNX types of the scan elements)."""
    n_carried = len(carried)
    init = [im.ssa(v) for v in carried]

    def import_body(types: list[Attribute]) -> tuple[Block, list[SSAValue]]:
        block = loop_body(types)
        outer = im.block
        im.block = block
        try:
            try:
                outs = step([Value(value=a) for a in block.args])
            except OnnxImportError as e:
                raise refuse(f"its body does not import with a run-time iteration number and values: {e}") from e
            if not all(isinstance(v, Value) for v in outs):
                raise refuse("its body gives a sequence or optional")
            c_out = _scalar(im, node, outs[0], "bool", "body's condition output")
            return block, [im.ssa(c_out)] + [im.ssa(v) for v in outs[1:]]
        finally:
            im.block = outer

    # a loop-carried value whose shape changes between iterations gets dynamic dimensions there
    types = [v.type for v in init]
    for _ in range(1 + max((len(shape_of(t)) for t in types), default=0)):
        with im.trial():
            trial_block, yielded = import_body(types)
            after = [v.type for v in yielded[1 : 1 + n_carried]]
            for op in reversed(list(trial_block.ops)):  # thrown away: their uses go too
                trial_block.erase_op(op, safe_erase=False)
        joined = [_join(a, b) for a, b in zip(types, after)]
        for k, (a, b, j) in enumerate(zip(types, after, joined)):
            if j is None:
                raise refuse(f"loop-carried value {k} is {a} before an iteration and {b} after it")
        if joined == types:
            break
        types = joined
    block, yielded = import_body(types)
    for k, t in enumerate(types):
        v = yielded[1 + k]
        if v.type != t:  # a value of static shape carried as a dynamic one
            cast = CastOp(v, t)
            block.add_op(cast)
            yielded[1 + k] = cast.dest
    for k, out in zip(range(1 + n_carried, len(yielded)), declared):
        # a scan element of dynamic shape takes the body's declared static one, so that zero
        # iterations give the shape onnxruntime gives (checked at run time by tensor.cast)
        t = _refined(yielded[k].type, out)
        if t != yielded[k].type:
            cast = CastOp(yielded[k], t)
            block.add_op(cast)
            yielded[k] = cast.dest
    block.add_op(LoopYieldOp(*yielded))
    for k, (v, t) in enumerate(zip(init, types)):
        if v.type != t:  # a static initial value into a loop-carried value of dynamic shape
            cast = CastOp(v, t)
            im.block.add_op(cast)
            init[k] = cast.dest
    op = LoopOp(im.ssa(trip_v), im.ssa(cond_v), init, Region(block), [v.type for v in yielded[1 + n_carried :]])
    im.block.add_op(op)
    return [Value(value=r) for r in op.results]


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
    if not im.unroll_loops and any(im.shape_of(x)[a] is None for x, a in zip(scans, in_axes)):
        return _scan_region(im, node, body, states, scans, (in_axes, in_dirs, out_axes, out_dirs))
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


def _scan_region(
    im: Importer, node: Node, body: onnx.GraphProto, states: list[Value], scans: list[Value],
    layout: tuple[Sequence[int], Sequence[int], Sequence[int], Sequence[int]],
) -> list[Value]:
    """A Scan over an axis of run-time length as a ``relay.loop``: the number of steps is the
    first scan input's length; each step takes element ``i`` (or ``length - 1 - i``) of every scan
    input; the scan outputs, stacked on axis 0 by the loop, are moved to their axes. The other scan
    inputs must have the first one's length (``take`` clips an index beyond it, unchecked).
    ``layout``: the scan input axes and directions, the scan output axes and directions."""
    in_axes, in_dirs, out_axes, out_dirs = layout

    def refuse(why: str) -> OnnxRunTimeValueError:
        return OnnxRunTimeValueError(f"Scan node '{node.name}': its scan axis has a run-time length and {why}", [])

    if any(not isinstance(v, Value) for v in states):
        raise refuse("a state is a sequence or optional")
    if any(out_dirs):
        raise node.fail(
            "a reversed scan output (scan_output_directions 1) over a scan axis of run-time length is "
            "not supported (xrelay has no reverse along a dynamic axis); give the scan inputs static shapes"
        )
    lengths = [im.reshape(_step(im, im.emit1("shape_of", [x], dtype="int64"), a, 0), []) for x, a in zip(scans, in_axes)]
    n_states = len(states)

    def step(args: list[Value]) -> list[Any]:
        i = args[0]
        xs = []
        for x, a, d, n in zip(scans, in_axes, in_dirs, lengths):
            at = im.apply("subtract", im.apply("subtract", n, im.const(np.int64(1))), i) if d else i
            xs.append(im.emit1("take", [x, at], axis=a))
        return [args[1], *im.subgraph(body, [*args[2:], *xs], node)]

    outs = _loop_op(
        im, node, lengths[0], im.const(np.array(True)), states, step, list(body.output[n_states:]), refuse
    )
    results = outs[:n_states]
    for k, v in enumerate(outs[n_states:]):
        if out_axes[k]:
            rank = im.rank(v)
            perm = list(range(1, out_axes[k] + 1)) + [0] + list(range(out_axes[k] + 1, rank))
            v = im.emit1("transpose", [v], axes=perm)
        results.append(v)
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
