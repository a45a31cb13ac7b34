"""ONNX's ``onnx/defs/sequence`` operators: ``Sequence*``, ``SplitToSequence``,
``ConcatFromSequence``, ``SequenceMap`` (the optionals are in ``optional``).

Relay's ONNX frontend built sequences from Relay tuples and ADT lists. xrelay's relay dialect
has neither, so a sequence is a list of tensors held by the importer (``SequenceValue``) and an
optional a tensor, a sequence or nothing (``OptionalValue``): the sequence ops are evaluated on those
lists at import, and only the tensors reach the IR (``SequenceAt`` is the element itself,
``ConcatFromSequence`` a ``concatenate``/``stack``, ``SequenceMap`` its body imported once per
element). A sequence's length and every position/index must therefore be known at import;
one computed at run time is an ``OnnxRunTimeValueError`` naming the graph inputs it comes from
(the ONNX backend then imports again with those bound). A graph output that is a sequence
returns its tensors from ``main`` one after the other (``OnnxImport.output_structure`` and
``pack_outputs`` regroup them); graph inputs of sequence or optional type are expanded into
tensors by the ONNX backend before import.
"""

from __future__ import annotations

import numpy as np

from xrelay.frontends.onnx.importer import (
    Importer,
    Node,
    OnnxRunTimeValueError,
    SequenceValue,
    Value,
    relay_dtype,
)
from xrelay.frontends.onnx.registry import converter


def _seq(node: Node, v, what: str = "input") -> SequenceValue:
    if not isinstance(v, SequenceValue):
        raise node.fail(f"its {what} must be a sequence")
    return v


def _tensor(node: Node, v, what: str = "input") -> Value:
    if not isinstance(v, Value):
        raise node.fail(f"its {what} must be a tensor")
    return v


def _position(im: Importer, node: Node, v: Value | None, length: int, default: int, insert: bool = False) -> int:
    """A position in a sequence of ``length`` (negative from the end), known at import."""
    if v is None:
        return default
    p = int(np.asarray(im.static(v, node, "position")).reshape(-1)[0])
    hi = length if insert else length - 1
    if not -length <= p <= hi:
        raise node.fail(f"position {p} is out of range for a sequence of {length}")
    return p + length if p < 0 else p


@converter("SequenceEmpty", structured=True)
def _seq_empty(im, node):
    dtype = node.attrs.get("dtype", 1)
    return [SequenceValue([], relay_dtype(dtype, f"SequenceEmpty node '{node.name}'"))]


@converter("SequenceConstruct", structured=True)
def _seq_construct(im, node):
    return [SequenceValue([_tensor(node, v) for v in node.inputs])]


@converter("SequenceInsert", structured=True)
def _seq_insert(im, node):
    s = _seq(node, node.inputs[0])
    t = _tensor(node, node.inputs[1], "tensor")
    p = _position(im, node, node.input(2), len(s.items), len(s.items), insert=True)
    return [SequenceValue(s.items[:p] + [t] + s.items[p:], s.elem_dtype)]


@converter("SequenceAt", structured=True)
def _seq_at(im, node):
    s = _seq(node, node.inputs[0])
    return [s.items[_position(im, node, node.inputs[1], len(s.items), 0)]]


@converter("SequenceErase", structured=True)
def _seq_erase(im, node):
    s = _seq(node, node.inputs[0])
    if not s.items:
        raise node.fail("the sequence is empty")
    p = _position(im, node, node.input(1), len(s.items), len(s.items) - 1)
    return [SequenceValue(s.items[:p] + s.items[p + 1 :], s.elem_dtype)]


@converter("SequenceLength", structured=True)
def _seq_length(im, node):
    return [im.const(np.int64(len(_seq(node, node.inputs[0]).items)))]


@converter("ConcatFromSequence", structured=True)
def _concat_from_seq(im, node):
    s = _seq(node, node.inputs[0])
    if not s.items:
        raise node.fail("the sequence is empty")
    axis = node.attrs.get("axis")
    if axis is None:
        raise node.fail("attribute 'axis' is required")
    rank = im.rank(s.items[0]) + (1 if node.attrs.get("new_axis", 0) else 0)
    if not -rank <= axis < rank:
        raise node.fail(f"axis {axis} is out of range for rank {rank}")
    if node.attrs.get("new_axis", 0):
        return [im.emit1("stack", s.items, axis=axis % rank)]
    return [im.emit1("concatenate", s.items, axis=axis % rank)]


@converter("SplitToSequence", structured=True)
def _split_to_seq(im, node):
    x = _tensor(node, node.inputs[0])
    shape = im.shape_of(x)
    if None in shape:  # the number of pieces would depend on it
        raise OnnxRunTimeValueError(
            f"SplitToSequence node '{node.name}': its input's shape {list(shape)} must be known at "
            "import (a sequence's length is)",
            im.graph_inputs_of(x),
        )
    axis = node.attrs.get("axis", 0)
    if not -len(shape) <= axis < len(shape):
        raise node.fail(f"axis {axis} is out of range for rank {len(shape)}")
    axis %= len(shape)
    d = shape[axis]
    split = im.static(node.input(1), node, "split")
    if split is None:  # pieces of 1, the axis dropped unless keepdims
        parts = [im.emit1("strided_slice", [x], begin=[i], end=[i + 1], axes=[axis]) for i in range(d)]
        if not node.attrs.get("keepdims", 1):
            parts = [im.emit1("squeeze", [p], axis=[axis]) for p in parts]
        return [SequenceValue(parts, im.dtype_of(x))]
    split = np.asarray(split).astype(np.int64)
    if split.ndim == 0:  # equal pieces of that size, the last one smaller
        n = int(split)
        if n <= 0:
            raise node.fail(f"split size {n} must be positive")
        sizes = [n] * (d // n) + ([d % n] if d % n else [])
    else:
        sizes = [int(v) for v in split]
        if sum(sizes) != d or min(sizes, default=0) < 0:
            raise node.fail(f"split sizes {sizes} do not add up to axis {axis} of size {d}")
    starts = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    parts = [im.emit1("strided_slice", [x], begin=[a], end=[b], axes=[axis]) for a, b in zip(starts, starts[1:])]
    return [SequenceValue(parts, im.dtype_of(x))]


@converter("SequenceMap", structured=True)
def _seq_map(im, node):
    body = node.attrs["body"]
    seqs = [v for v in node.inputs if isinstance(v, SequenceValue)]
    if not isinstance(node.inputs[0], SequenceValue):
        raise node.fail("its first input must be a sequence")
    n = len(node.inputs[0].items)
    if any(len(s.items) != n for s in seqs):
        raise node.fail(f"its sequences have different lengths {[len(s.items) for s in seqs]}")
    outs: list[list[Value]] = [[] for _ in body.output]
    for i in range(n):
        args = [v.items[i] if isinstance(v, SequenceValue) else v for v in node.inputs]
        for k, v in enumerate(im.subgraph(body, args, node)):
            outs[k].append(_tensor(node, v, "body output"))
    return [SequenceValue(o, relay_dtype(b.type.tensor_type.elem_type, "body output")) for o, b in zip(outs, body.output)]
