"""The ONNX importer: the graph walk, the converter contract (``Importer``, ``Node``, ``Value``,
``SequenceValue``, ``OptionalValue``) and the entry points, like ``tvm.relay.frontend.from_onnx``.

``from_onnx(model)`` returns ``(mod, params)``: ``mod`` holds ``func.func @main`` whose
parameters are the graph's real inputs (named after them) followed by the initializers it uses,
and ``params`` maps those initializers' names to numpy arrays. With ``freeze_params=True`` the
initializers are bound instead as named constants (``relay.constant @name``) and ``params`` is
empty. The default follows TVM: ``freeze_params=False``.

Decisions a user may want to know:

* **Names.** ONNX names may hold characters MLIR identifiers cannot (``onnx::Conv_7``,
  ``input:0``); they are sanitised (every other character becomes ``_``, a leading digit gets
  a ``_`` prefix, a trailing ``_<digits>`` becomes ``.<digits>`` because xDSL strips it from
  value names, clashes get a ``.N`` suffix). Parameter names, the keys of ``params`` and
  ``param_name`` of frozen constants all use the sanitised form; ``OnnxImport.input_names``
  maps original input names to it.
* **Folding during import.** An op whose inputs are all known (Constant nodes, initializers,
  static ``Shape`` results, values folded before) is evaluated at import time with the numpy
  kernels, so exporter shape arithmetic (``Shape -> Gather -> Concat -> Reshape``,
  ``Unsqueeze``/``Cast`` of constants) gives a static ``newshape``. Without
  ``freeze_params``, initializers with more than ``FOLD_PARAM_LIMIT`` elements are never folded
  (they stay parameters); small ones (shape tensors, axes) are.
* **Parameters.** Only initializers that some op takes as a run-time operand become parameters
  of ``main``, in order of first use; those consumed at import time (a Reshape's shape, a
  Slice's starts) do not appear in ``params``.
* **Errors.** Every failure raises ``OnnxImportError`` (a ``ValueError``). Unsupported operators
  are collected over the whole graph first, so one error lists them all with their node names.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import numpy_helper
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region, SSAValue

from xrelay.dialects.dyn import DYN_OPS
from xrelay.dialects.relay import RELAY_OPS, ConstantOp, RelayTypeError, numpy_dtype
from xrelay.dialects.relay.dtypes import (
    DTYPES,
    byte_size,
    dtype_from_numpy,
    dtype_of,
    shape_of,
    tensor_type,
    too_large,
)
from xrelay.dialects.relay.strings import StringConstantOp, is_string_tensor, string_tensor
from xrelay.error import TVMError
from xrelay.frontends.onnx.registry import converters, structured_ops
from xrelay.kernels import evaluate, has_kernel
from xrelay.relay.module import IRModule

FOLD_PARAM_LIMIT = 1024
"""Initializers with more elements are never folded at import when params are not frozen."""


class OnnxImportError(ValueError, TVMError):
    """An ONNX model that cannot be imported; the message says which nodes and why."""


class OnnxRunTimeValueError(OnnxImportError):
    """An op argument that must be known at import time (an axis list, split sizes, ...) is
    computed from graph inputs and has no dynamic form in Relay; ``inputs`` names those graph
    inputs (the ONNX backend then imports again with their values bound)."""

    def __init__(self, msg: str, inputs: Sequence[str]):
        super().__init__(msg)
        self.inputs = tuple(inputs)


@dataclass
class OnnxImport:
    """Everything one import produced (``from_onnx`` returns ``(mod, params)`` from it)."""

    module: ModuleOp
    params: dict[str, np.ndarray]
    input_names: dict[str, str]
    """Original ONNX input name -> parameter name in ``main``."""
    output_names: list[str]
    """The ONNX graph's output names, in the order ``main`` returns them."""
    opset: int
    output_structure: list[Any] = field(default_factory=list)
    """Per ONNX output: None for a tensor, ``n`` for a sequence of ``n`` tensors,
    ``("optional", s)`` for an optional holding ``s`` and ``("optional", "empty")`` for an
    empty one; ``main`` returns the tensors of all of them in order (see ``pack_outputs``)."""

    def pack_outputs(self, flat: Sequence[Any]) -> list[Any]:
        """``main``'s results grouped back into the ONNX outputs (lists for sequences, None
        for an empty optional)."""
        it = iter(flat)

        def take(s: Any) -> Any:
            if s is None:
                return next(it)
            if isinstance(s, int):
                return [next(it) for _ in range(s)]
            return None if s[1] == "empty" else take(s[1])

        return [take(s) for s in (self.output_structure or [None] * len(self.output_names))]


# ============================================================================================
# Values
# ============================================================================================


@dataclass(eq=False)
class Value:
    """An ONNX tensor during import: a run-time SSA value or a value known now."""

    value: SSAValue | None = None
    const: np.ndarray | None = None
    param: str | None = None
    """The initializer's (sanitised) name when ``const`` is an initializer."""
    _ssa: SSAValue | None = field(default=None, repr=False)

    @property
    def known(self) -> bool:
        return self.const is not None


@dataclass(eq=False)
class SequenceValue:
    """An ONNX sequence during import: a list of tensors whose length is known at import
    (sequences have no type in the relay dialect; their ops are evaluated on the list)."""

    items: list[Value]
    elem_dtype: str | None = None
    """The element type of an empty sequence (``SequenceEmpty``'s dtype)."""


@dataclass(eq=False)
class OptionalValue:
    """An ONNX optional during import: a tensor or sequence, or None when empty."""

    value: Value | SequenceValue | None


@dataclass
class Node:
    op_type: str
    name: str
    inputs: list[Value | None]
    attrs: dict[str, Any]
    num_outputs: int
    opset: int
    proto: onnx.NodeProto | None = None
    """The node itself (a converter may import the ONNX function body instead)."""

    def input(self, i: int) -> Value | None:
        return self.inputs[i] if i < len(self.inputs) else None

    def fail(self, msg: str) -> OnnxImportError:
        return OnnxImportError(f"{self.op_type} node '{self.name}': {msg}")


UNSEEDED_BASE = 0x5EED0000
"""The seeds of random operators without one start after this (``Importer.random_state``)."""


def refuse_too_large(what: str, t: Any) -> None:
    """A ``ValueError`` (the node's error) when ``t`` cannot fit in memory: a constant the
    importer computes is refused before numpy allocates it."""
    if isinstance(t, TensorType) and t.has_static_shape():
        message = too_large(f"{what} ({t})", byte_size(t))
        if message:
            raise ValueError(message)


_NAME_BAD = re.compile(r"[^\w$.-]")
_NAME_NUM_SUFFIX = re.compile(r"_(\d+)$")


def sanitize(name: str) -> str:
    """A valid MLIR value name that xDSL keeps as is.

    xDSL drops a trailing ``_<digits>`` from name hints (it reserves it for uniquing), so such
    a suffix is written ``.<digits>`` instead: ``onnx::Conv_7`` becomes ``onnx__Conv.7``.
    """
    out = _NAME_BAD.sub("_", name) or "v"
    if out[0].isdigit():
        out = "_" + out
    return _NAME_NUM_SUFFIX.sub(lambda m: "." + m.group(1), out)

ONNX_DTYPES = {
    onnx.TensorProto.FLOAT: "float32",
    onnx.TensorProto.DOUBLE: "float64",
    onnx.TensorProto.FLOAT16: "float16",
    onnx.TensorProto.BFLOAT16: "bfloat16",
    onnx.TensorProto.INT8: "int8",
    onnx.TensorProto.INT16: "int16",
    onnx.TensorProto.INT32: "int32",
    onnx.TensorProto.INT64: "int64",
    onnx.TensorProto.UINT8: "uint8",
    onnx.TensorProto.UINT16: "uint16",
    onnx.TensorProto.UINT32: "uint32",
    onnx.TensorProto.UINT64: "uint64",
    onnx.TensorProto.BOOL: "bool",
    onnx.TensorProto.FLOAT8E4M3FN: "float8_e4m3fn",
    onnx.TensorProto.FLOAT8E4M3FNUZ: "float8_e4m3fnuz",
    onnx.TensorProto.FLOAT8E5M2: "float8_e5m2",
    onnx.TensorProto.FLOAT8E5M2FNUZ: "float8_e5m2fnuz",
    onnx.TensorProto.FLOAT8E8M0: "float8_e8m0fnu",
    onnx.TensorProto.FLOAT4E2M1: "float4_e2m1fn",
    onnx.TensorProto.INT4: "int4",
    onnx.TensorProto.UINT4: "uint4",
    onnx.TensorProto.INT2: "int2",
    onnx.TensorProto.UINT2: "uint2",
}


def tensor_array(t: onnx.TensorProto, what: str) -> np.ndarray:
    """The data of an initializer or a tensor attribute, or one ``OnnxImportError`` naming
    ``what``: negative dims (numpy would read one as "the rest"), data that does not match the
    dims, an element type without data, external data that cannot be read (outside the model's
    folder, missing, short)."""
    dims = list(t.dims)
    negative = [d for d in dims if d < 0]
    if negative:
        raise OnnxImportError(f"{what}: negative dim {negative[0]} in dims {dims}")
    if t.data_location == onnx.TensorProto.EXTERNAL:
        location = next((e.value for e in t.external_data if e.key == "location"), "?")
        try:
            return numpy_helper.to_array(t)
        except (OSError, ValueError, TypeError, onnx.checker.ValidationError) as e:
            raise OnnxImportError(
                f"{what}: its external data '{location}' cannot be read ({_first_line(e)})"
            ) from None
    try:
        return numpy_helper.to_array(t)
    except ValueError as e:  # e.g. dims [4, 4] over 3 values, 10 raw bytes of float32
        raise OnnxImportError(f"{what}: its data does not match its dims {dims} ({e})") from None
    except (TypeError, KeyError, IndexError, OverflowError) as e:  # an undefined element type
        raise OnnxImportError(f"{what}: cannot be read ({_first_line(e)})") from None


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


def relay_dtype(elem_type: int, what: str) -> str:
    try:
        return ONNX_DTYPES[elem_type]
    except KeyError:
        try:
            name = onnx.TensorProto.DataType.Name(elem_type) if elem_type else "undefined"
        except ValueError:  # a number protobuf has no name for
            name = str(elem_type)
        raise OnnxImportError(f"{what}: ONNX element type {name} is not supported") from None


# ============================================================================================
# The importer
# ============================================================================================


class Importer:
    """Imports one ONNX graph into ``main``; converters get it as ``im`` and build with its
    methods (``emit``, ``const``, ``static``, ``reshape``, ...)."""

    def __init__(self, model: onnx.ModelProto, shape, dtype, freeze_params: bool, unroll_loops: bool = False):
        self.model = model
        self.unroll_loops = unroll_loops
        """Refuse a ``Loop`` that cannot be unrolled (``OnnxRunTimeValueError``) instead of
        importing it as a ``relay.loop`` region (which only the interpreter runs)."""
        self.graph = model.graph
        self.freeze = freeze_params
        self.opset = _default_opset(model)
        self.opsets = {imp.domain or "ai.onnx": imp.version for imp in model.opset_import}
        self.names: set[str] = set()
        self.vals: dict[str, Value] = {}
        self.written: dict[str, str] = {}
        """Who wrote each value of the current scope (graph, body or function body): ONNX
        graphs assign each value once."""
        self.block = Block()
        """Where ops are added: ``main``'s block, or an If branch's while it is imported."""
        self.root = self.block
        """``main``'s block: parameters and constants always go here (a constant first used
        in a branch is shared with the code after the If)."""
        self.params: dict[str, np.ndarray] = {}
        self.param_args: dict[str, SSAValue] = {}
        self.frozen: dict[str, SSAValue] = {}
        self.input_names: dict[str, str] = {}
        self.shape = dict(shape or {})
        self.dtype = dtype
        self.converters = converters()
        self.structured = structured_ops()
        self.unseeded_draws = 0
        """How many random operators without a ``seed`` this import has drawn for (their seeds)."""

    # ---- names ----------------------------------------------------------------------------

    def fresh_name(self, name: str) -> str:
        base = sanitize(name)
        out, k = base, 0
        while out in self.names:
            k += 1
            out = f"{base}.{k}"
        self.names.add(out)
        return out

    @contextmanager
    def trial(self) -> Iterator[None]:
        """Import something and throw it away: ops go to scratch blocks, and every value,
        name, parameter and seed the import touched is as before afterwards (a Loop tries
        whether it unrolls before it imports for real)."""
        values = [x for v in self.vals.values() for x in _values_in(v)]
        saved = (
            self.block, self.root, set(self.names), dict(self.params), dict(self.param_args),
            dict(self.frozen), self.unseeded_draws, [v._ssa for v in values],
        )
        scratch = self.block = self.root = Block(arg_types=[a.type for a in saved[1].args])
        try:
            yield
        finally:
            for op in reversed(list(scratch.ops)):  # their uses of the real values go too
                scratch.erase_op(op, safe_erase=False)
            self.block, self.root, self.names, self.params, self.param_args, self.frozen, self.unseeded_draws = saved[:7]
            for v, ssa in zip(values, saved[7]):
                v._ssa = ssa

    # ---- values ---------------------------------------------------------------------------

    def const(self, array: Any, dtype: str | None = None) -> Value:
        arr = np.asarray(array)
        if dtype is not None:
            arr = arr.astype(numpy_dtype(dtype))
        return Value(const=arr)

    def shape_of(self, v: Value) -> tuple[int | None, ...]:
        if v.known:
            return tuple(v.const.shape)
        return shape_of(v.value.type)

    def static_shape(self, v: Value, node: Node) -> tuple[int, ...]:
        s = self.shape_of(v)
        if any(d is None for d in s):
            raise node.fail(f"needs a static input shape, got {list(s)} (pass shape={{...}})")
        return s  # type: ignore[return-value]

    def dtype_of(self, v: Value) -> str:
        if v.known:
            return dtype_from_numpy(v.const.dtype)
        if is_string_tensor(v.value.type):
            raise ValueError(
                "a tensor of strings is taken only by Equal, Identity, StringConcat, StringSplit, "
                "RegexFullMatch and StringNormalizer (docs/guide/onnx.md)"
            )
        return dtype_of(v.value.type)

    def is_string(self, v: Any) -> bool:
        """Whether ``v`` is a tensor of strings (ONNX's ``STRING``), at run time or constant."""
        if isinstance(v, Value) and v.known:
            return v.const.dtype == object
        return isinstance(v, Value) and v.value is not None and is_string_tensor(v.value.type)

    def rank(self, v: Value) -> int:
        return len(self.shape_of(v))

    def ssa(self, v: Value) -> SSAValue:
        """The run-time value of ``v``, materialising constants and parameters once."""
        if v.value is not None:
            return v.value
        if v._ssa is not None:
            return v._ssa
        if v.param is not None and not self.freeze:
            if v.param not in self.param_args:
                ty = tensor_type(v.const.shape, dtype_from_numpy(v.const.dtype))
                arg = self.root.insert_arg(ty, len(self.root.args))
                arg.name_hint = v.param
                self.param_args[v.param] = arg
                self.params[v.param] = np.asarray(v.const)
            v._ssa = self.param_args[v.param]
            return v._ssa
        if v.param is not None:
            if v.param not in self.frozen:
                op = ConstantOp.from_numpy(v.const, param_name=v.param)
                self._add_const(op)
                self.frozen[v.param] = op.result
            v._ssa = self.frozen[v.param]
            return v._ssa
        if v.const.dtype == object:  # ONNX STRING data (bytes or str): relay.string.constant
            op = StringConstantOp([_text(x) for x in v.const.flat], v.const.shape)
        else:
            op = ConstantOp.from_numpy(v.const)
        self._add_const(op)
        v._ssa = op.results[0]
        return v._ssa

    def _add_const(self, op: ConstantOp) -> None:
        # in a branch: before the If that is being built (it is added to main's block last)
        self.root.add_op(op)

    def foldable(self, vals: Sequence[Value]) -> bool:
        if not all(v.known for v in vals):
            return False
        if self.freeze:
            return True
        return all(v.param is None or v.const.size <= FOLD_PARAM_LIMIT for v in vals)

    def emit(self, name: str, vals: Sequence[Value], **attrs: Any) -> list[Value]:
        """Apply Relay op ``name``: fold it when every input is known, else add the op."""
        cls = RELAY_OPS.get(name) or DYN_OPS[name]
        if self.foldable(vals) and has_kernel(name) and not cls.STATEFUL:
            folded = self._fold(cls, vals, attrs)
            if folded is not None:
                return folded
        op = cls.make([self.ssa(v) for v in vals], **attrs)
        self.block.add_op(op)
        return [Value(value=r) for r in op.results]

    def emit1(self, name: str, vals: Sequence[Value], **attrs: Any) -> Value:
        return self.emit(name, vals, **attrs)[0]

    def _fold(self, cls, vals: Sequence[Value], attrs: dict[str, Any]) -> list[Value] | None:
        in_types = [tensor_type(v.const.shape, dtype_from_numpy(v.const.dtype)) for v in vals]
        full = cls.complete_attrs(attrs, in_types)
        out_types = cls.infer_types(in_types, full)
        for t in out_types:  # before the kernel allocates it
            refuse_too_large("its folded result", t)
        arrays = evaluate(cls, [v.const for v in vals], full, out_types)
        return None if arrays is None else [Value(const=a) for a in arrays]

    def static(self, v: Value | None, node: Node, what: str) -> np.ndarray | None:
        """The value of an input that must be known at import time (None when absent)."""
        if v is None:
            return None
        if not v.known:
            raise OnnxRunTimeValueError(
                f"{node.op_type} node '{node.name}': input '{what}' must be a constant (or "
                "computable from static shapes)",
                self.graph_inputs_of(v),
            )
        return v.const

    def graph_inputs_of(self, v: Value) -> list[str]:
        """The graph inputs a run-time value is computed from (original ONNX names)."""
        by_arg = {self.input_names[n]: n for n in self.input_names}
        seen: set[SSAValue] = set()
        todo = [self.ssa(v)]
        found: list[str] = []
        while todo:
            x = todo.pop()
            if x in seen:
                continue
            seen.add(x)
            if x.owner is self.root:
                name = by_arg.get(x.name_hint or "")
                if name is not None and name not in found:
                    found.append(name)
            elif isinstance(x.owner, Block):  # a loop body's argument: what the loop takes
                loop = x.owner.parent_op()
                todo.extend(loop.operands if loop is not None else ())
            elif x.owner is not None:
                todo.extend(x.owner.operands)
                for region in getattr(x.owner, "regions", ()):  # an If's branches
                    todo.extend(o for op in region.walk() for o in op.operands)
        return found

    def int64(self, v: Value) -> Value:
        """``v`` as int64 (the dtype of ONNX's shape arguments; dyn ops take any integers)."""
        return self.cast_like(v, "int64")

    def element(self, v: Value, i: int) -> Value:
        """Element ``i`` of a 1-D run-time value, as a 1-element vector."""
        return self.emit1("strided_slice", [v], begin=[i], end=[i + 1])

    def cast_like(self, v: Value, dtype: str) -> Value:
        if self.dtype_of(v) == dtype:
            return v
        return self.emit1("cast", [v], dtype=dtype)

    def scalar(self, value: float, like: Value) -> Value:
        return self.const(np.array(value, dtype=numpy_dtype(self.dtype_of(like))))

    def reshape(self, v: Value, shape: Sequence[int]) -> Value:
        if tuple(self.shape_of(v)) == tuple(shape):
            return v
        return self.emit1("reshape", [v], newshape=list(shape))

    def apply(self, name: str, *vals: Value) -> Value:
        """Relay op ``name`` on ``vals`` without attributes (``emit1`` with positional inputs)."""
        return self.emit1(name, list(vals))

    def split(self, x: Value, n: int, axis: int) -> list[Value]:
        """``x`` cut into ``n`` equal parts along ``axis``."""
        return [x] if n == 1 else self.emit("split", [x], indices_or_sections=n, axis=axis)

    def last_axis_slice(self, x: Value, begin: int, end: int, step: int = 1) -> Value:
        return self.emit1("strided_slice", [x], begin=[begin], end=[end], strides=[step], axes=[self.rank(x) - 1])

    def take_first(self, x: Value, count: Value) -> Value:
        """The first ``count`` (a 1-element int vector) entries of ``x`` along axis 0."""
        if count.known:
            n = int(np.asarray(count.const).reshape(-1)[0])
            return self.emit1("strided_slice", [x], begin=[0], end=[n], strides=[1], axes=[0])
        zero, one = self.const(np.array([0], np.int64)), self.const(np.array([1], np.int64))
        return self.emit1("dyn.strided_slice", [x, zero, self.int64(count), one])

    def random_state(self, node: Node) -> np.random.RandomState:
        """The generator of a random operator (``RandomNormal``, ``RandomUniform(Like)``,
        ``Multinomial``, training ``Dropout``). xrelay has no random state at run time: every
        draw is made at import, into a constant, by numpy's ``RandomState`` seeded with the
        node's ``seed`` as ONNX's reference implementation does (so a seeded node draws the
        reference's values). ONNX leaves an unseeded node's seed to the implementation: the
        n-th unseeded draw of an import takes seed ``UNSEEDED_BASE + n``, so nodes (and the
        unrolled steps of a loop) draw differently and importing again draws the same."""
        seed = node.attrs.get("seed")
        if seed is None:
            self.unseeded_draws += 1
            return np.random.RandomState(UNSEEDED_BASE + self.unseeded_draws)
        if not float(seed).is_integer() or not 0 <= seed < 2**32:
            raise node.fail(f"seed must be an integer in [0, 2^32), got {seed}")
        return np.random.RandomState(int(seed))

    def static_ints(self, node: Node, i: int, what: str) -> list[int]:
        """Input ``i`` of ``node`` as a list of ints known at import time."""
        return [int(v) for v in np.asarray(self.static(node.inputs[i], node, what)).reshape(-1)]

    def rank_in(self, node: Node, x: Value, ranks: tuple[int, ...]) -> int:
        """The rank of ``x``, refused unless it is one of ``ranks``."""
        r = self.rank(x)
        if r not in ranks:
            raise node.fail(f"inputs of rank {', '.join(map(str, ranks))} are supported, got rank {r}")
        return r

    def axes_arg(self, node: Node, attr_opset: int, index: int = 1) -> list[int] | None:
        """Axes from the attribute (before ``attr_opset``) or from input ``index``."""
        if node.opset < attr_opset:
            axes = node.attrs.get("axes")
        else:
            axes = self.static(node.input(index), node, "axes")
        return None if axes is None else [int(a) for a in np.asarray(axes).reshape(-1)]

    def broadcast_operands(self, node: Node) -> tuple[Value, Value]:
        """A binary op's A and B, B reshaped for opset < 7's ``broadcast``/``axis`` attributes:
        B's dims line up with A's from ``axis`` on, so trailing 1s make it numpy's broadcast."""
        a, b = node.inputs[0], node.inputs[1]
        if node.opset < 7 and node.attrs.get("broadcast", 0) and node.attrs.get("axis") is not None:
            ra, rb = self.rank(a), self.rank(b)
            axis = node.attrs["axis"] + ra if node.attrs["axis"] < 0 else node.attrs["axis"]
            if not 0 <= axis <= ra - rb:
                raise node.fail(f"broadcast axis {node.attrs['axis']} does not fit B of rank {rb} into A of rank {ra}")
            b = self.reshape(b, [*self.static_shape(b, node), *[1] * (ra - axis - rb)])
        return a, b

    # ---- the graph ------------------------------------------------------------------------

    def run(self) -> OnnxImport:
        graph = self.graph
        self.check_supported()
        init_names = {t.name for t in graph.initializer}
        for t in graph.initializer:
            if t.name in self.written:
                raise OnnxImportError(f"the graph has two initializers named '{t.name}'")
            if t.data_type != onnx.TensorProto.STRING:  # strings: relay.string.constant
                relay_dtype(t.data_type, f"initializer '{t.name}'")
            arr = tensor_array(t, f"initializer '{t.name}'")
            self.vals[t.name] = Value(const=np.asarray(arr), param=None)
            self.written[t.name] = "is an initializer"
        names = [inp.name for inp in graph.input if inp.name not in init_names]
        twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
        if twice is not None:
            raise OnnxImportError(f"the graph has two inputs named '{twice}'")
        # sanitised parameter names are given after the inputs so inputs keep their names
        for inp in graph.input:
            if inp.name in init_names:
                continue  # old exporters list initializers as inputs too
            ty = self.input_type(inp)
            arg = self.root.insert_arg(ty, len(self.root.args))
            sname = self.fresh_name(inp.name)
            arg.name_hint = sname
            self.input_names[inp.name] = sname
            self.written[inp.name] = "is a graph input"
            self.vals[inp.name] = Value(value=arg)
        unknown = set(self.shape) - set(self.input_names)
        if unknown:
            raise OnnxImportError(
                f"shape given for unknown input(s) {', '.join(sorted(unknown))}; "
                f"the graph's inputs are {', '.join(self.input_names) or 'none'}"
            )
        for t in graph.initializer:
            if t.data_type != onnx.TensorProto.STRING:  # a string initializer is a constant
                self.vals[t.name].param = self.fresh_name(t.name)
        for node in graph.node:
            self.convert(node)
        outs: list[SSAValue] = []
        structure: list[Any] = []

        def flatten(v: Any, name: str) -> Any:
            if isinstance(v, OptionalValue):
                return ("optional", "empty" if v.value is None else flatten(v.value, name))
            if isinstance(v, SequenceValue):
                for i, item in enumerate(v.items):
                    flatten(item, f"{name}.{i}")
                return len(v.items)
            ssa = self.ssa(v)
            if ssa.name_hint is None:
                ssa.name_hint = sanitize(name)
            outs.append(ssa)
            return None

        for o in graph.output:
            if o.name not in self.vals:
                raise OnnxImportError(f"graph output '{o.name}' is not produced by any node")
            structure.append(flatten(self.vals[o.name], o.name))
        self.root.add_op(ReturnOp(*outs))
        ftype = ([a.type for a in self.root.args], [v.type for v in outs])
        func = FuncOp("main", ftype, Region(self.root))
        module = ModuleOp([func])
        try:
            module.verify()
        except Exception as e:  # an importer bug rather than a model problem; say so
            raise OnnxImportError(f"the imported module does not verify: {e}") from e
        return OnnxImport(
            module,
            self.params,
            self.input_names,
            [o.name for o in graph.output],
            self.opset,
            structure,
        )

    # ---- operators defined by ONNX functions ----------------------------------------------

    def _schema(self, proto: onnx.NodeProto) -> Any:
        domain = proto.domain or "ai.onnx"
        version = self.opsets.get(domain, self.opset if domain == "ai.onnx" else None)
        if version is None:
            return None
        try:
            return onnx.defs.get_schema(proto.op_type, version, "" if domain == "ai.onnx" else domain)
        except onnx.defs.SchemaError:
            return None

    def check_required_inputs(self, proto: onnx.NodeProto) -> None:
        """An ``OnnxImportError`` when an input the operator's schema requires is missing or
        empty (``Reshape(x, "")``): converters may then rely on every required input."""
        schema = self._schema(proto)
        if schema is None:
            return
        for i, formal in enumerate(schema.inputs):
            if formal.option == onnx.defs.OpSchema.FormalParameterOption.Single and (
                i >= len(proto.input) or not proto.input[i]
            ):
                name = proto.name or (proto.output[0] if proto.output else "")
                raise OnnxImportError(
                    f"{proto.op_type} node '{name}': input {i} ({formal.name}) is required, but "
                    f"{'empty' if i < len(proto.input) else 'not given'}"
                )

    def has_function(self, proto: onnx.NodeProto) -> bool:
        """Whether ONNX defines ``proto``'s operator by a function (a body of other operators)."""
        schema = self._schema(proto)
        return schema is not None and bool(schema.has_function or schema.has_context_dependent_function)

    def expand_function(self, proto: onnx.NodeProto, node: Node) -> list[Any]:
        """An operator the importer has no converter for, imported as the function body ONNX
        defines it by (``LinearAttention``, ``CausalConvWithState``, ...): the body's nodes
        with the node's inputs, attributes and opset, in a scope of their own."""
        schema = self._schema(proto)
        key = proto.op_type if not proto.domain else f"{proto.domain}.{proto.op_type}"
        if schema is None or not (schema.has_function or schema.has_context_dependent_function):
            raise node.fail(f"operator {key} is not imported")
        fn = onnx.FunctionProto()
        if schema.has_context_dependent_function:
            types = [self._type_proto(v).SerializeToString() for v in node.inputs]
            fn.ParseFromString(schema.get_context_dependent_function(proto.SerializeToString(), types))
        else:
            fn.CopyFrom(schema.function_body)
        given = {a.name: a for a in proto.attribute}
        defaults = {a.name: a for a in fn.attribute_proto}
        outer, outer_opset, outer_written = self.vals, self.opset, self.written
        self.vals, self.written = dict(outer), {}
        try:
            self.opset = next((o.version for o in fn.opset_import if o.domain in ("", "ai.onnx")), self.opset)
            for i, name in enumerate(fn.input):
                self.vals[name] = node.input(i)
            for body_node in fn.node:
                self.convert(_bind_attrs(body_node, given, defaults))
            return [self.vals[o] for o in fn.output[: node.num_outputs]]
        finally:
            self.vals, self.opset, self.written = outer, outer_opset, outer_written

    def _type_proto(self, v: Any) -> onnx.TypeProto:
        """An ONNX type for ``v`` (a context-dependent function is built for its input types)."""
        if not isinstance(v, Value):
            return onnx.TypeProto()
        elem = {d: k for k, d in ONNX_DTYPES.items()}[self.dtype_of(v)]
        return onnx.helper.make_tensor_type_proto(elem, list(self.shape_of(v)))

    def subgraph(self, graph: onnx.GraphProto, inputs: Sequence[Value], node: Node) -> list[Value]:
        """Import the body ``graph`` of an If/Loop/Scan ``node`` in place, with its inputs bound
        to ``inputs``; returns its outputs. The body sees the enclosing scope's values (ONNX's
        outer-scope references); its own names do not leak out."""
        if len(graph.input) != len(inputs):
            raise node.fail(
                f"its body '{graph.name}' has {len(graph.input)} inputs, the node gives {len(inputs)}"
            )
        outer, outer_written = self.vals, self.written
        self.vals, self.written = dict(outer), {}
        try:
            for inp, v in zip(graph.input, inputs):
                self.vals[inp.name] = v
                self.written[inp.name] = f"is an input of body '{graph.name}'"
            for t in graph.initializer:
                what = f"initializer '{t.name}' of body '{graph.name}'"
                relay_dtype(t.data_type, what)
                self.vals[t.name] = Value(const=np.asarray(tensor_array(t, what)))
                self.written[t.name] = "is an initializer"
            for proto in graph.node:
                self.convert(proto)
            outs = []
            for o in graph.output:
                if o.name not in self.vals:
                    raise node.fail(f"output '{o.name}' of its body '{graph.name}' is not produced by any node")
                outs.append(self.vals[o.name])
            return outs
        finally:
            self.vals, self.written = outer, outer_written

    def input_type(self, inp: onnx.ValueInfoProto) -> TensorType:
        tt = inp.type.tensor_type
        if not inp.type.HasField("tensor_type"):
            raise OnnxImportError(f"input '{inp.name}' is not a tensor")
        if tt.elem_type == onnx.TensorProto.STRING:  # a tensor<...x!relay.string>
            dims = self.shape.get(inp.name) or [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
            return string_tensor([None if d is None or d == -1 else int(d) for d in dims])
        if isinstance(self.dtype, Mapping):
            dtype = self.dtype.get(inp.name) or relay_dtype(tt.elem_type, f"input '{inp.name}'")
        elif isinstance(self.dtype, str):
            dtype = self.dtype
        else:
            dtype = relay_dtype(tt.elem_type, f"input '{inp.name}'")
        if dtype not in DTYPES:
            raise OnnxImportError(
                f"dtype '{dtype}' for input '{inp.name}' is not a Relay dtype; "
                f"known: {', '.join(DTYPES)}"
            )
        if inp.name in self.shape:
            dims = [None if d is None or d == -1 else int(d) for d in self.shape[inp.name]]
        else:
            dims = []
            for d in tt.shape.dim:
                if d.HasField("dim_value") and d.dim_value < 0:
                    raise OnnxImportError(
                        f"input '{inp.name}' has a negative dimension {d.dim_value}"
                    )
                dims.append(d.dim_value if d.HasField("dim_value") else None)
        return tensor_type(dims, dtype)

    def check_supported(self) -> None:
        missing: dict[str, list[str]] = {}

        def walk(graph: onnx.GraphProto, where: str) -> None:
            # protobuf hands over a string field that is not UTF-8 as bytes
            named = [*graph.input, *graph.output, *graph.initializer]
            if not all(isinstance(v.name, str) for v in named):
                raise OnnxImportError(f"{where or 'the graph'}: a value's name is not UTF-8 text")
            for i, node in enumerate(graph.node):
                texts = (node.op_type, node.domain, node.name, *node.input, *node.output)
                if not all(isinstance(t, str) for t in texts):
                    raise OnnxImportError(
                        f"node #{i} of {where or 'the graph'}: its op type or a name is not UTF-8 text"
                    )
                domain = node.domain or "ai.onnx"
                key = node.op_type if domain == "ai.onnx" else f"{domain}.{node.op_type}"
                known = key in self.converters
                if not known and not self.has_function(node):
                    missing.setdefault(key, []).append(where + (node.name or f"#{i}"))
                for a in node.attribute:  # the bodies of If, Loop and Scan
                    for g in [a.g] if a.HasField("g") else list(a.graphs):
                        walk(g, f"{where}{node.name or f'#{i}'}.{a.name}/")

        walk(self.graph, "")
        if missing:
            parts = [f"{op} ({', '.join(names)})" for op, names in sorted(missing.items())]
            raise OnnxImportError(
                f"{sum(map(len, missing.values()))} node(s) use unsupported ONNX operators "
                f"(opset {self.opset}): " + "; ".join(parts)
            )

    def convert(self, proto: onnx.NodeProto) -> None:
        ins: list[Value | None] = []
        for name in proto.input:
            if name == "":
                ins.append(None)
            elif name not in self.vals:
                raise OnnxImportError(  # an unnamed node by its first output, as node.fail does
                    f"{proto.op_type} node '{proto.name or proto.output[0]}': input '{name}' is "
                    "not defined before use (a graph must list its nodes in topological order)"
                )
            else:
                ins.append(self.vals[name])
        self.check_required_inputs(proto)
        attrs = {a.name: _attr_value(a, proto) for a in proto.attribute}
        node = Node(proto.op_type, proto.name or proto.output[0], ins, attrs, len(proto.output), self.opset, proto)
        domain = proto.domain or "ai.onnx"
        key = proto.op_type if domain == "ai.onnx" else f"{domain}.{proto.op_type}"
        if key not in self.structured and any(isinstance(v, SequenceValue | OptionalValue) for v in ins):
            raise node.fail("an input is a sequence or optional, which this operator does not take")
        try:
            if key in self.converters:
                outs = self.converters[key](self, node)
            else:
                outs = self.expand_function(proto, node)
        except OnnxImportError:
            raise
        except (RelayTypeError, ValueError, IndexError, KeyError, TypeError) as e:
            # TypeError: a hostile value where a converter expects another kind (a float or
            # 2-D tensor as a shape, a dynamic dim where a size is needed)
            raise node.fail(str(e)) from e
        except MemoryError as e:  # a constant computed at import time (the checks missed it)
            raise node.fail(f"a constant it computes does not fit in memory: {e}") from None
        for name, v in zip(proto.output, outs):
            if name:
                if name in self.written:
                    once = " (ONNX graphs assign each value once)" if "wrote" in self.written[name] else ""
                    raise node.fail(f"writes '{name}', which {self.written[name]}{once}")
                self.vals[name] = v
                self.written[name] = f"{proto.op_type} node '{node.name}' already wrote"
        used = [n for n in proto.output[len(outs) :] if n]
        if used:
            raise node.fail(f"optional output(s) {', '.join(used)} are not supported")


def _text(x: Any) -> str:
    """An element of ONNX STRING data as text (protobuf gives bytes; UTF-8)."""
    if isinstance(x, bytes):
        try:
            return x.decode("utf-8")
        except UnicodeDecodeError:
            raise OnnxImportError("a string constant is not UTF-8 text") from None
    return str(x)


def _values_in(v: Any) -> list[Value]:
    """The tensors in an import-time value (a tensor, a sequence's items, an optional's)."""
    if isinstance(v, Value):
        return [v]
    if isinstance(v, SequenceValue):
        return [x for item in v.items for x in _values_in(item)]
    if isinstance(v, OptionalValue) and v.value is not None:
        return _values_in(v.value)
    return []


def _bind_attrs(
    body_node: onnx.NodeProto, given: Mapping[str, onnx.AttributeProto], defaults: Mapping[str, onnx.AttributeProto]
) -> onnx.NodeProto:
    """A function body's node with its attribute references (``ref_attr_name``) replaced by the
    calling node's attributes, or the function's defaults, or dropped (the op's own default)."""
    if not any(a.ref_attr_name for a in body_node.attribute):
        return body_node
    out = onnx.NodeProto()
    out.CopyFrom(body_node)
    del out.attribute[:]
    for a in body_node.attribute:
        if not a.ref_attr_name:
            out.attribute.append(a)
            continue
        src = given.get(a.ref_attr_name) or defaults.get(a.ref_attr_name)
        if src is not None:
            b = onnx.AttributeProto()
            b.CopyFrom(src)
            b.name = a.name
            out.attribute.append(b)
    return out


def _default_opset(model: onnx.ModelProto) -> int:
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return imp.version
    return 1


def _attr_value(a: onnx.AttributeProto, proto: onnx.NodeProto) -> Any:
    where = f"{proto.op_type} node '{proto.name or (proto.output[0] if proto.output else '')}'"
    try:
        v = onnx.helper.get_attribute_value(a)
    except (ValueError, TypeError) as e:  # an attribute of no type, or of a type that is not ONNX's
        raise OnnxImportError(f"{where}: attribute '{a.name}': {_first_line(e)}") from None
    if isinstance(v, float):
        # ONNX stores float32: print 1e-12, not its float64 widening 9.999999960041972e-13
        return float(str(np.float32(v)))
    if isinstance(v, list) and v and isinstance(v[0], float):
        return [float(str(np.float32(x))) for x in v]
    try:
        if isinstance(v, bytes):
            return v.decode()
        if isinstance(v, list) and v and isinstance(v[0], bytes):
            return [x.decode() for x in v]
    except UnicodeDecodeError:
        raise OnnxImportError(f"{where}: attribute '{a.name}' is not UTF-8 text") from None
    if isinstance(v, onnx.TensorProto):
        return tensor_array(v, f"{where}: its {a.name}")
    return v


# ============================================================================================
# Entry points
# ============================================================================================


def load_model(model: onnx.ModelProto | str | os.PathLike) -> onnx.ModelProto:
    """An ``onnx.ModelProto`` from a proto or a path, with a clear error for bad files."""
    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, str | os.PathLike):
        try:
            return onnx.load(os.fspath(model))
        except FileNotFoundError:
            raise OnnxImportError(f"no such ONNX file: {os.fspath(model)}") from None
        except DecodeError as e:
            # protobuf refuses messages nested more than 100 deep (a subgraph in an If/Loop
            # attribute is three levels), so a hostile nesting stops here, before any recursion.
            raise OnnxImportError(
                f"cannot read ONNX model {os.fspath(model)}: {e} (not an ONNX protobuf, "
                "truncated, or nested deeper than protobuf's limit of 100 messages, e.g. "
                "subgraphs in If/Loop attributes more than about 30 levels deep)"
            ) from None
        except Exception as e:
            raise OnnxImportError(f"cannot read ONNX model {os.fspath(model)}: {e}") from None
    raise OnnxImportError(f"expected an onnx.ModelProto or a path, got {type(model).__name__}")


def import_onnx(
    model: onnx.ModelProto | str | os.PathLike,
    shape: Mapping[str, Sequence[int | None]] | None = None,
    dtype: str | Mapping[str, str] | None = None,
    freeze_params: bool = False,
    unroll_loops: bool = False,
) -> OnnxImport:
    """Import ``model`` and return the module together with its name mappings (``OnnxImport``).

    A ``Loop`` whose trip count and conditions are known at import is unrolled; otherwise it
    becomes a ``relay.loop`` region, which the reference interpreter runs and ``xrelay.build``
    refuses. With ``unroll_loops=True`` such a Loop raises ``OnnxRunTimeValueError`` naming the
    graph inputs its count or condition comes from instead (bind them and import again)."""
    proto = load_model(model)
    if not proto.HasField("graph"):  # an empty file parses as an empty ModelProto
        raise OnnxImportError("the ONNX model has no graph (an empty or non-ONNX file?)")
    return Importer(proto, shape, dtype, freeze_params, unroll_loops).run()


def from_onnx(
    model: onnx.ModelProto | str | os.PathLike,
    shape: Mapping[str, Sequence[int | None]] | None = None,
    dtype: str | Mapping[str, str] | None = None,
    freeze_params: bool = False,
) -> tuple[Any, dict[str, np.ndarray]]:
    """Convert an ONNX model to Relay: ``(mod, params)`` like ``tvm.relay.frontend.from_onnx``.

    ``shape`` maps input names to shapes overriding the graph's (needed for dynamic dims;
    ``None``/-1 keeps a dim dynamic). ``dtype`` overrides input dtypes (one string for all, or
    a dict by name); by default the graph's are used. With ``freeze_params=False`` (TVM's
    default) the initializers become parameters of ``main`` after the real inputs and are
    returned in ``params``; with ``True`` they are bound as named constants and ``params`` is
    empty. ``mod`` is an ``xrelay.relay.IRModule``. Raises ``OnnxImportError`` (a
    ``ValueError``) for unsupported models.
    """
    result = import_onnx(model, shape, dtype, freeze_params)
    return IRModule.from_module_op(result.module), result.params
