"""Import ONNX models into the relay dialect, like ``tvm.relay.frontend.from_onnx``.

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

import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
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
from xrelay.error import TVMError
from xrelay.kernels import evaluate, has_kernel

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
class _Val:
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
class _Seq:
    """An ONNX sequence during import: a list of tensors whose length is known at import
    (sequences have no type in the relay dialect; their ops are evaluated on the list)."""

    items: list[_Val]
    elem_dtype: str | None = None
    """The element type of an empty sequence (``SequenceEmpty``'s dtype)."""


@dataclass(eq=False)
class _Opt:
    """An ONNX optional during import: a tensor or sequence, or None when empty."""

    value: _Val | _Seq | None


@dataclass
class _Node:
    op_type: str
    name: str
    inputs: list[_Val | None]
    attrs: dict[str, Any]
    num_outputs: int
    opset: int
    proto: onnx.NodeProto | None = None
    """The node itself (a converter may import the ONNX function body instead)."""

    def input(self, i: int) -> _Val | None:
        return self.inputs[i] if i < len(self.inputs) else None

    def fail(self, msg: str) -> OnnxImportError:
        return OnnxImportError(f"{self.op_type} node '{self.name}': {msg}")


def _refuse_too_large(what: str, t: Any) -> None:
    """A ``ValueError`` (the node's error) when ``t`` cannot fit in memory: a constant the
    importer computes is refused before numpy allocates it."""
    if isinstance(t, TensorType) and t.has_static_shape():
        message = too_large(f"{what} ({t})", byte_size(t))
        if message:
            raise ValueError(message)


_NAME_BAD = re.compile(r"[^\w$.-]")
_NAME_NUM_SUFFIX = re.compile(r"_(\d+)$")


def _sanitize(name: str) -> str:
    """A valid MLIR value name that xDSL keeps as is.

    xDSL drops a trailing ``_<digits>`` from name hints (it reserves it for uniquing), so such
    a suffix is written ``.<digits>`` instead: ``onnx::Conv_7`` becomes ``onnx__Conv.7``.
    """
    out = _NAME_BAD.sub("_", name) or "v"
    if out[0].isdigit():
        out = "_" + out
    return _NAME_NUM_SUFFIX.sub(lambda m: "." + m.group(1), out)

_ONNX_DTYPES = {
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


def _relay_dtype(elem_type: int, what: str) -> str:
    try:
        return _ONNX_DTYPES[elem_type]
    except KeyError:
        name = onnx.TensorProto.DataType.Name(elem_type) if elem_type else "undefined"
        raise OnnxImportError(f"{what}: ONNX element type {name} is not supported") from None


# ============================================================================================
# The importer
# ============================================================================================


class _Importer:
    def __init__(self, model: onnx.ModelProto, shape, dtype, freeze_params: bool):
        self.model = model
        self.graph = model.graph
        self.freeze = freeze_params
        self.opset = _default_opset(model)
        self.opsets = {imp.domain or "ai.onnx": imp.version for imp in model.opset_import}
        self.names: set[str] = set()
        self.vals: dict[str, _Val] = {}
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

    # ---- names ----------------------------------------------------------------------------

    def fresh_name(self, name: str) -> str:
        base = _sanitize(name)
        out, k = base, 0
        while out in self.names:
            k += 1
            out = f"{base}.{k}"
        self.names.add(out)
        return out

    # ---- values ---------------------------------------------------------------------------

    def const(self, array: Any, dtype: str | None = None) -> _Val:
        arr = np.asarray(array)
        if dtype is not None:
            arr = arr.astype(numpy_dtype(dtype))
        return _Val(const=arr)

    def shape_of(self, v: _Val) -> tuple[int | None, ...]:
        if v.known:
            return tuple(v.const.shape)
        return shape_of(v.value.type)

    def static_shape(self, v: _Val, node: _Node) -> tuple[int, ...]:
        s = self.shape_of(v)
        if any(d is None for d in s):
            raise node.fail(f"needs a static input shape, got {list(s)} (pass shape={{...}})")
        return s  # type: ignore[return-value]

    def dtype_of(self, v: _Val) -> str:
        if v.known:
            return dtype_from_numpy(v.const.dtype)
        return dtype_of(v.value.type)

    def rank(self, v: _Val) -> int:
        return len(self.shape_of(v))

    def ssa(self, v: _Val) -> SSAValue:
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
        op = ConstantOp.from_numpy(v.const)
        self._add_const(op)
        v._ssa = op.result
        return v._ssa

    def _add_const(self, op: ConstantOp) -> None:
        # in a branch: before the If that is being built (it is added to main's block last)
        self.root.add_op(op)

    def foldable(self, vals: Sequence[_Val]) -> bool:
        if not all(v.known for v in vals):
            return False
        if self.freeze:
            return True
        return all(v.param is None or v.const.size <= FOLD_PARAM_LIMIT for v in vals)

    def emit(self, name: str, vals: Sequence[_Val], **attrs: Any) -> list[_Val]:
        """Apply Relay op ``name``: fold it when every input is known, else add the op."""
        cls = RELAY_OPS.get(name) or DYN_OPS[name]
        if self.foldable(vals) and has_kernel(name) and not cls.STATEFUL:
            folded = self._fold(cls, vals, attrs)
            if folded is not None:
                return folded
        op = cls.make([self.ssa(v) for v in vals], **attrs)
        self.block.add_op(op)
        return [_Val(value=r) for r in op.results]

    def emit1(self, name: str, vals: Sequence[_Val], **attrs: Any) -> _Val:
        return self.emit(name, vals, **attrs)[0]

    def _fold(self, cls, vals: Sequence[_Val], attrs: dict[str, Any]) -> list[_Val] | None:
        in_types = [tensor_type(v.const.shape, dtype_from_numpy(v.const.dtype)) for v in vals]
        full = cls.complete_attrs(attrs, in_types)
        out_types = cls.infer_types(in_types, full)
        for t in out_types:  # before the kernel allocates it
            _refuse_too_large("its folded result", t)
        arrays = evaluate(cls, [v.const for v in vals], full, out_types)
        return None if arrays is None else [_Val(const=a) for a in arrays]

    def static(self, v: _Val | None, node: _Node, what: str) -> np.ndarray | None:
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

    def graph_inputs_of(self, v: _Val) -> list[str]:
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
            elif x.owner is not None:
                todo.extend(x.owner.operands)
                for region in getattr(x.owner, "regions", ()):  # an If's branches
                    todo.extend(o for op in region.walk() for o in op.operands)
        return found

    def int64(self, v: _Val) -> _Val:
        """``v`` as int64 (the dtype of ONNX's shape arguments; dyn ops take any integers)."""
        return self.cast_like(v, "int64")

    def element(self, v: _Val, i: int) -> _Val:
        """Element ``i`` of a 1-D run-time value, as a 1-element vector."""
        return self.emit1("strided_slice", [v], begin=[i], end=[i + 1])

    def cast_like(self, v: _Val, dtype: str) -> _Val:
        if self.dtype_of(v) == dtype:
            return v
        return self.emit1("cast", [v], dtype=dtype)

    def scalar(self, value: float, like: _Val) -> _Val:
        return self.const(np.array(value, dtype=numpy_dtype(self.dtype_of(like))))

    def reshape(self, v: _Val, shape: Sequence[int]) -> _Val:
        if tuple(self.shape_of(v)) == tuple(shape):
            return v
        return self.emit1("reshape", [v], newshape=list(shape))

    # ---- the graph ------------------------------------------------------------------------

    def run(self) -> OnnxImport:
        graph = self.graph
        self.check_supported()
        init_names = {t.name for t in graph.initializer}
        for t in graph.initializer:
            try:
                arr = numpy_helper.to_array(t)
            except ValueError as e:  # e.g. dims [4, 4] over 3 values
                raise OnnxImportError(
                    f"initializer '{t.name}': its data does not match its dims {list(t.dims)} ({e})"
                ) from None
            _relay_dtype(t.data_type, f"initializer '{t.name}'")
            self.vals[t.name] = _Val(const=np.asarray(arr), param=None)
        # sanitised parameter names are given after the inputs so inputs keep their names
        for inp in graph.input:
            if inp.name in init_names:
                continue  # old exporters list initializers as inputs too
            ty = self.input_type(inp)
            arg = self.root.insert_arg(ty, len(self.root.args))
            sname = self.fresh_name(inp.name)
            arg.name_hint = sname
            self.input_names[inp.name] = sname
            self.vals[inp.name] = _Val(value=arg)
        unknown = set(self.shape) - set(self.input_names)
        if unknown:
            raise OnnxImportError(
                f"shape given for unknown input(s) {', '.join(sorted(unknown))}; "
                f"the graph's inputs are {', '.join(self.input_names) or 'none'}"
            )
        for t in graph.initializer:
            self.vals[t.name].param = self.fresh_name(t.name)
        for node in graph.node:
            self.convert(node)
        outs: list[SSAValue] = []
        structure: list[Any] = []

        def flatten(v: Any, name: str) -> Any:
            if isinstance(v, _Opt):
                return ("optional", "empty" if v.value is None else flatten(v.value, name))
            if isinstance(v, _Seq):
                for i, item in enumerate(v.items):
                    flatten(item, f"{name}.{i}")
                return len(v.items)
            ssa = self.ssa(v)
            if ssa.name_hint is None:
                ssa.name_hint = _sanitize(name)
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

    def has_function(self, proto: onnx.NodeProto) -> bool:
        """Whether ONNX defines ``proto``'s operator by a function (a body of other operators)."""
        schema = self._schema(proto)
        return schema is not None and bool(schema.has_function or schema.has_context_dependent_function)

    def expand_function(self, proto: onnx.NodeProto, node: _Node) -> list[Any]:
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
        outer, outer_opset = self.vals, self.opset
        self.vals = dict(outer)
        try:
            self.opset = next((o.version for o in fn.opset_import if o.domain in ("", "ai.onnx")), self.opset)
            for i, name in enumerate(fn.input):
                self.vals[name] = node.input(i)
            for body_node in fn.node:
                self.convert(_bind_attrs(body_node, given, defaults))
            return [self.vals[o] for o in fn.output[: node.num_outputs]]
        finally:
            self.vals, self.opset = outer, outer_opset

    def _type_proto(self, v: Any) -> onnx.TypeProto:
        """An ONNX type for ``v`` (a context-dependent function is built for its input types)."""
        if not isinstance(v, _Val):
            return onnx.TypeProto()
        elem = {d: k for k, d in _ONNX_DTYPES.items()}[self.dtype_of(v)]
        return onnx.helper.make_tensor_type_proto(elem, list(self.shape_of(v)))

    def subgraph(self, graph: onnx.GraphProto, inputs: Sequence[_Val], node: _Node) -> list[_Val]:
        """Import the body ``graph`` of an If/Loop/Scan ``node`` in place, with its inputs bound
        to ``inputs``; returns its outputs. The body sees the enclosing scope's values (ONNX's
        outer-scope references); its own names do not leak out."""
        if len(graph.input) != len(inputs):
            raise node.fail(
                f"its body '{graph.name}' has {len(graph.input)} inputs, the node gives {len(inputs)}"
            )
        outer = self.vals
        self.vals = dict(outer)
        try:
            for inp, v in zip(graph.input, inputs):
                self.vals[inp.name] = v
            for t in graph.initializer:
                _relay_dtype(t.data_type, f"initializer '{t.name}' of body '{graph.name}'")
                self.vals[t.name] = _Val(const=np.asarray(numpy_helper.to_array(t)))
            for proto in graph.node:
                self.convert(proto)
            outs = []
            for o in graph.output:
                if o.name not in self.vals:
                    raise node.fail(f"output '{o.name}' of its body '{graph.name}' is not produced by any node")
                outs.append(self.vals[o.name])
            return outs
        finally:
            self.vals = outer

    def input_type(self, inp: onnx.ValueInfoProto) -> TensorType:
        tt = inp.type.tensor_type
        if not inp.type.HasField("tensor_type"):
            raise OnnxImportError(f"input '{inp.name}' is not a tensor")
        if isinstance(self.dtype, Mapping):
            dtype = self.dtype.get(inp.name) or _relay_dtype(tt.elem_type, f"input '{inp.name}'")
        elif isinstance(self.dtype, str):
            dtype = self.dtype
        else:
            dtype = _relay_dtype(tt.elem_type, f"input '{inp.name}'")
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
            for i, node in enumerate(graph.node):
                domain = node.domain or "ai.onnx"
                key = node.op_type if domain == "ai.onnx" else f"{domain}.{node.op_type}"
                known = domain == "ai.onnx" and node.op_type in _CONVERTERS
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
        ins: list[_Val | None] = []
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
        attrs = {a.name: _attr_value(a) for a in proto.attribute}
        node = _Node(proto.op_type, proto.name or proto.output[0], ins, attrs, len(proto.output), self.opset, proto)
        if proto.op_type not in STRUCTURED_OPS and any(isinstance(v, _Seq | _Opt) for v in ins):
            raise node.fail("an input is a sequence or optional, which this operator does not take")
        domain = proto.domain or "ai.onnx"
        try:
            if domain == "ai.onnx" and proto.op_type in _CONVERTERS:
                outs = _CONVERTERS[proto.op_type](self, node)
            else:
                outs = self.expand_function(proto, node)
        except OnnxImportError:
            raise
        except (RelayTypeError, ValueError, IndexError, KeyError) as e:
            raise node.fail(str(e)) from e
        except MemoryError as e:  # a constant computed at import time (the checks missed it)
            raise node.fail(f"a constant it computes does not fit in memory: {e}") from None
        for name, v in zip(proto.output, outs):
            if name:
                self.vals[name] = v
        used = [n for n in proto.output[len(outs) :] if n]
        if used:
            raise node.fail(f"optional output(s) {', '.join(used)} are not supported")


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


def _attr_value(a: onnx.AttributeProto) -> Any:
    v = onnx.helper.get_attribute_value(a)
    if isinstance(v, float):
        # ONNX stores float32: print 1e-12, not its float64 widening 9.999999960041972e-13
        return float(str(np.float32(v)))
    if isinstance(v, list) and v and isinstance(v[0], float):
        return [float(str(np.float32(x))) for x in v]
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, onnx.TensorProto):
        return numpy_helper.to_array(v)
    if isinstance(v, list) and v and isinstance(v[0], bytes):
        return [x.decode() for x in v]
    return v




# ============================================================================================
# Converters
# ============================================================================================

_CONVERTERS: dict[str, Callable[[_Importer, _Node], list[_Val]]] = {}


def _op(*names: str):
    def wrap(fn):
        for n in names:
            _CONVERTERS[n] = fn
        return fn

    return wrap


SUPPORTED_OPS = _CONVERTERS
"""ONNX operator type -> converter; the keys are every operator the importer handles."""

STRUCTURED_OPS: set[str] = {"Identity", "If", "Loop"}
"""Operators whose converters take sequences and optionals (``_Seq``/``_Opt``) as inputs."""


# ---- elementwise ---------------------------------------------------------------------------

_UNARY = {
    "Relu": "nn.relu",
    "Sigmoid": "sigmoid",
    "Tanh": "tanh",
    "Erf": "erf",
    "Sqrt": "sqrt",
    "Exp": "exp",
    "Log": "log",
    "Neg": "negative",
    "Abs": "abs",
    "Floor": "floor",
    "Ceil": "ceil",
}


@_op(*_UNARY)
def _unary(im: _Importer, node: _Node) -> list[_Val]:
    return im.emit(_UNARY[node.op_type], [node.inputs[0]])


@_op("Identity", "Dropout")
def _identity(im: _Importer, node: _Node) -> list[_Val]:
    x = node.inputs[0]
    if node.op_type == "Dropout":
        training = node.input(2)
        if training is not None and (not training.known or bool(training.const)):
            raise node.fail("training mode is not supported (inference import)")
        if node.num_outputs > 1:
            mask = im.const(np.ones(im.static_shape(x, node), dtype=np.bool_))
            return [x, mask]
    return [x]


@_op("LeakyRelu")
def _leaky_relu(im, node):
    return im.emit("nn.leaky_relu", [node.inputs[0]], alpha=float(node.attrs.get("alpha", 0.01)))


@_op("Reciprocal")
def _reciprocal(im, node):
    x = node.inputs[0]
    return im.emit("divide", [im.scalar(1.0, x), x])


@_op("Clip")
def _clip(im, node):
    x = node.inputs[0]
    if node.opset < 11:
        lo = node.attrs.get("min", -math.inf)
        hi = node.attrs.get("max", math.inf)
        return im.emit("clip", [x], a_min=float(lo), a_max=float(hi))
    lo_v, hi_v = node.input(1), node.input(2)
    if (lo_v is None or lo_v.known) and (hi_v is None or hi_v.known):
        lo = -math.inf if lo_v is None else float(np.asarray(lo_v.const).reshape(()))
        hi = math.inf if hi_v is None else float(np.asarray(hi_v.const).reshape(()))
        return im.emit("clip", [x], a_min=lo, a_max=hi)
    # run-time bounds: max then min, as the ONNX definition reads
    out = x
    if lo_v is not None:
        out = im.emit1("maximum", [out, lo_v])
    if hi_v is not None:
        out = im.emit1("minimum", [out, hi_v])
    return [out]


_BINARY = {
    "Add": "add",
    "Sub": "subtract",
    "Mul": "multiply",
    "Div": "divide",
    "Equal": "equal",
    "Less": "less",
    "LessOrEqual": "less_equal",
    "Greater": "greater",
    "GreaterOrEqual": "greater_equal",
}


@_op(*_BINARY)
def _binary(im, node):
    a, b = node.inputs[0], node.inputs[1]
    if node.opset < 7 and node.attrs.get("broadcast", 0) and node.attrs.get("axis") is not None:
        # opset < 7: B's dims line up with A's from `axis` on; trailing 1s make it numpy's
        ra, rb = im.rank(a), im.rank(b)
        axis = node.attrs["axis"] + ra if node.attrs["axis"] < 0 else node.attrs["axis"]
        if not 0 <= axis <= ra - rb:
            raise node.fail(f"broadcast axis {node.attrs['axis']} does not fit B of rank {rb} into A of rank {ra}")
        b = im.reshape(b, [*im.static_shape(b, node), *[1] * (ra - axis - rb)])
    return im.emit(_BINARY[node.op_type], [a, b])


@_op("Pow")
def _pow(im, node):
    a, b = node.inputs[0], node.inputs[1]
    return im.emit("power", [a, im.cast_like(b, im.dtype_of(a))])


@_op("Max", "Min", "Sum", "Mean")
def _variadic(im, node):
    relay = {"Max": "maximum", "Min": "minimum", "Sum": "add", "Mean": "add"}[node.op_type]
    vals = [v for v in node.inputs if v is not None]
    out = vals[0]
    for v in vals[1:]:
        out = im.emit1(relay, [out, v])
    if node.op_type == "Mean" and len(vals) > 1:
        out = im.emit1("divide", [out, im.scalar(len(vals), out)])
    return [out]


@_op("Where")
def _where(im, node):
    return im.emit("where", node.inputs[:3])


@_op("PRelu")
def _prelu(im, node):
    x, slope = node.inputs[0], node.inputs[1]
    ss = im.shape_of(slope)
    xs = im.shape_of(x)
    if len(xs) >= 2 and xs[1] is not None and [d for d in ss if d != 1] in ([xs[1]], []) and (
        len(ss) == 1 or (len(ss) == len(xs) - 1 and ss[0] == xs[1])
    ):
        if len(ss) == 1 and ss[0] != xs[1]:
            slope = im.emit1("broadcast_to", [slope], shape=[xs[1]])
        else:
            slope = im.reshape(slope, [xs[1]])
        return im.emit("nn.prelu", [x, slope], axis=1)
    # general broadcasting slope: where(x < 0, x * slope, x)
    zero = im.scalar(0.0, x)
    neg = im.emit1("less", [x, zero])
    return im.emit("where", [neg, im.emit1("multiply", [x, slope]), x])


@_op("Cast")
def _cast(im, node):
    dtype = _relay_dtype(node.attrs["to"], f"Cast node '{node.name}'")
    return [onnx_cast(im, node, node.inputs[0], dtype)]


_SATURATING = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz")
"""The float8 types whose ONNX casts saturate (``saturate``, default 1)."""


def onnx_cast(im: _Importer, node: _Node, x: _Val, dtype: str) -> _Val:
    """ONNX's ``Cast`` of ``x`` to ``dtype`` with ``node``'s ``saturate`` and ``round_mode``.

    Relay's ``cast`` rounds to nearest even and overflows to inf/NaN; ONNX's saturating float8
    cast clips to the largest finite value first (infinities too, NaN stays NaN), and its cast
    to float8_e8m0fnu keeps a float32's exponent field, rounded as ``round_mode`` says.
    """
    saturate = bool(node.attrs.get("saturate", 1))
    if dtype == "float8_e8m0fnu":
        return _to_e8m0(im, node, x, saturate, node.attrs.get("round_mode", "up"))
    if saturate and dtype in _SATURATING and im.dtype_of(x) != dtype:
        if im.dtype_of(x) not in ("float16", "float32", "float64"):
            x = im.cast_like(x, "float32")  # exact here, so the clip itself cannot round
        big = float(ml_dtypes.finfo(numpy_dtype(dtype)).max)
        x = im.emit1("clip", [x], a_min=-big, a_max=big)
    return im.cast_like(x, dtype)


def _to_e8m0(im: _Importer, node: _Node, x: _Val, saturate: bool, round_mode: str) -> _Val:
    """ONNX's cast to float8_e8m0fnu (onnx.numpy_helper.to_float8e8m0) on a float32's bits:
    the exponent field, one more when ``round_mode`` rounds up (``up``: any fraction;
    ``nearest``: the first fraction bit and any other bit or a nonzero exponent), NaN/inf
    become NaN (0xFF) and, saturating, 2**127 does not round up to NaN."""
    if round_mode not in ("up", "down", "nearest"):
        raise node.fail(f"round_mode {round_mode!r} is not one of up, down, nearest")

    def u32(v: int) -> _Val:
        return im.const(np.uint32(v))

    def test(bits: _Val, mask: int) -> _Val:
        return im.emit1("not_equal", [im.emit1("bitwise_and", [bits, u32(mask)]), u32(0)])

    bits = im.emit1("reinterpret", [im.cast_like(x, "float32")], dtype="uint32")
    exp = im.emit1("bitwise_and", [im.emit1("right_shift", [bits, u32(23)]), u32(0xFF)])
    normal = im.emit1("not_equal", [exp, u32(0xFF)])
    if round_mode == "up":
        up = im.emit1("logical_and", [test(bits, 0x7FFFFF), normal])
    elif round_mode == "nearest":
        rest = im.emit1("logical_or", [test(bits, 0x3FFFFF), im.emit1("not_equal", [exp, u32(0)])])
        up = im.emit1("logical_and", [im.emit1("logical_and", [test(bits, 0x400000), rest]), normal])
    else:
        up = None
    if up is not None and saturate:
        up = im.emit1("logical_and", [up, im.emit1("not_equal", [exp, u32(0xFE)])])
    if up is not None:
        exp = im.emit1("add", [exp, im.cast_like(up, "uint32")])
    return im.emit1("reinterpret", [im.cast_like(exp, "uint8")], dtype="float8_e8m0fnu")


@_op("Constant")
def _constant(im, node):
    a = node.attrs
    if "value" in a:
        return [im.const(a["value"])]
    if "value_float" in a:
        return [im.const(np.float32(a["value_float"]))]
    if "value_floats" in a:
        return [im.const(np.array(a["value_floats"], dtype=np.float32))]
    if "value_int" in a:
        return [im.const(np.int64(a["value_int"]))]
    if "value_ints" in a:
        return [im.const(np.array(a["value_ints"], dtype=np.int64))]
    raise node.fail(f"unsupported value attribute(s) {', '.join(a) or 'none'}")


@_op("ConstantOfShape")
def _constant_of_shape(im, node):
    value = node.attrs.get("value", np.zeros(1, np.float32))
    if not node.inputs[0].known:  # Relay's dyn.full
        fill = im.const(np.asarray(value).reshape(()))
        return im.emit("dyn.full", [fill, im.int64(node.inputs[0])])
    shape = im.static(node.inputs[0], node, "input")
    fill = np.asarray(value).reshape(-1)[:1]
    _refuse_too_large("its result", tensor_type(np.asarray(shape).tolist(), dtype_from_numpy(fill.dtype)))
    return [im.const(np.full(tuple(int(d) for d in shape), np.asarray(value).reshape(-1)[0]))]


@_op("Range")
def _range(im, node):
    start, limit, delta = (im.static(node.inputs[i], node, n) for i, n in enumerate(("start", "limit", "delta")))
    for v, n in ((start, "start"), (limit, "limit"), (delta, "delta")):
        if np.size(v) != 1:
            raise node.fail(f"'{n}' has {np.size(v)} elements, expected a scalar")
    # a one-element vector is taken as its element (ONNX's expanded AffineGrid gives those)
    start, limit, delta = (np.asarray(v).reshape(()) for v in (start, limit, delta))
    if delta == 0:
        raise node.fail("'delta' is 0")
    count = max(0, math.ceil((float(limit) - float(start)) / float(delta)))  # ONNX's formula
    _refuse_too_large("its result", tensor_type([count], dtype_from_numpy(start.dtype)))
    return [im.const(np.arange(start, limit, delta, dtype=start.dtype))]


# ---- shapes ---------------------------------------------------------------------------------


@_op("Shape")
def _shape(im, node):
    x = node.inputs[0]
    s = im.shape_of(x)
    start = node.attrs.get("start", 0)
    end = node.attrs.get("end", None)
    sel = list(s)[slice(start, end)]
    if all(d is not None for d in sel):
        return [im.const(np.array(sel, dtype=np.int64))]
    out = im.emit1("shape_of", [x], dtype="int64")
    if (start, end) != (0, None):
        r = len(s)
        b = max(0, min(r, start + r if start < 0 else start))
        e = r if end is None else max(0, min(r, end + r if end < 0 else end))
        out = im.emit1("strided_slice", [out], begin=[b], end=[e], axes=[0])
    return [out]


def _reshape_target(in_shape, shape: Sequence[int], allowzero: bool, node: _Node) -> list[int | None]:
    out: list[int | None] = []
    infer = None
    for i, d in enumerate(shape):
        d = int(d)
        if d == 0 and not allowzero:
            if i >= len(in_shape):
                raise node.fail(f"shape {list(shape)}: 0 copies dimension {i} beyond rank {len(in_shape)}")
            out.append(in_shape[i])
        elif d == -1:
            if infer is not None:
                raise node.fail(f"shape {np.asarray(shape).tolist()} has more than one -1")
            infer = i
            out.append(-1)
        elif d < -1:
            raise node.fail(f"shape {list(shape)} has invalid value {d}")
        else:
            out.append(d)
    if infer is not None:
        # dims copied by 0 cancel out, so a dynamic batch copied through still lets -1 resolve
        copied = {i for i, d in enumerate(shape) if int(d) == 0 and not allowzero}
        in_rest = [d for i, d in enumerate(in_shape) if i not in copied]
        rest = [d for k, d in enumerate(out) if k != infer and k not in copied]
        if any(d is None for d in in_rest) or any(d is None for d in rest):
            out[infer] = None
        else:
            total, known = math.prod(in_rest), math.prod(rest)
            if known == 0 or total % known:
                raise node.fail(f"cannot reshape {list(in_shape)} to {list(shape)}")
            out[infer] = total // known
    return out


@_op("Reshape")
def _reshape(im, node):
    x = node.inputs[0]
    allowzero = bool(node.attrs.get("allowzero", 0))
    if node.opset < 5:
        shape = node.attrs["shape"]
    elif not node.inputs[1].known:  # Relay's dyn.reshape: ONNX's 0 and -1 mean the same there
        return im.emit("dyn.reshape", [x, im.int64(node.inputs[1])], allowzero=allowzero)
    else:
        shape = im.static(node.inputs[1], node, "shape")
    target = _reshape_target(im.shape_of(x), shape, allowzero, node)
    if allowzero and 0 in target:  # a real 0-sized dimension: Relay's 0 would copy instead
        return im.emit("reshape", [x], newshape=target, allowzero=True)
    if all(d is not None for d in target):
        return [im.reshape(x, target)]
    copied = [not allowzero and int(d) == 0 for d in shape]
    if all(d is not None or c for d, c in zip(target, copied)):
        # only copied dims are dynamic: 0 for them (Relay's 0 copies too), sizes elsewhere
        return im.emit("reshape", [x], newshape=[0 if d is None else d for d in target])
    # otherwise hand Relay ONNX's own special values (same meaning for 0 and -1)
    return im.emit("reshape", [x], newshape=[int(d) for d in shape], allowzero=allowzero)


@_op("Flatten")
def _flatten(im, node):
    x = node.inputs[0]
    s = im.shape_of(x)
    axis = node.attrs.get("axis", 1)
    axis = axis + len(s) if axis < 0 else axis
    if axis == 1 and len(s) >= 2:
        return im.emit("nn.batch_flatten", [x])
    s = im.static_shape(x, node)
    return [im.reshape(x, [math.prod(s[:axis]), math.prod(s[axis:])])]


@_op("Transpose")
def _transpose(im, node):
    perm = node.attrs.get("perm")
    return im.emit("transpose", [node.inputs[0]], axes=None if perm is None else list(perm))


@_op("Concat")
def _concat(im, node):
    vals = [v for v in node.inputs if v is not None]
    return im.emit("concatenate", vals, axis=node.attrs["axis"])


@_op("Split")
def _split(im, node):
    x = node.inputs[0]
    axis = node.attrs.get("axis", 0)
    s = im.shape_of(x)
    ax = axis + len(s) if axis < 0 else axis
    dim = s[ax]
    if node.opset < 13:
        sizes = node.attrs.get("split")
    else:
        sizes = im.static(node.input(1), node, "split")
    n = node.num_outputs
    if sizes is None and "num_outputs" in node.attrs:
        n = node.attrs["num_outputs"]
        if dim is None:
            raise node.fail("num_outputs needs a static split axis")
        chunk = -(-dim // n)
        sizes = [min(chunk, dim - i * chunk) for i in range(n)]
    if sizes is None:
        if n == 1:
            return [x]
        return im.emit("split", [x], indices_or_sections=n, axis=ax)
    sizes = [int(v) for v in sizes]
    if dim is not None and sum(sizes) != dim:
        raise node.fail(f"split sizes {sizes} do not add up to axis {ax} of size {dim}")
    if len(sizes) == 1:
        return [x]
    return im.emit("split", [x], indices_or_sections=list(np.cumsum(sizes)[:-1]), axis=ax)


def _axes_arg(im: _Importer, node: _Node, attr_opset: int, index: int = 1) -> list[int] | None:
    """Axes from the attribute (before ``attr_opset``) or from input ``index``."""
    if node.opset < attr_opset:
        axes = node.attrs.get("axes")
    else:
        axes = im.static(node.input(index), node, "axes")
    return None if axes is None else [int(a) for a in np.asarray(axes).reshape(-1)]


@_op("Squeeze")
def _squeeze(im, node):
    given = node.input(1)
    if node.opset >= 13 and given is not None and not given.known:
        return im.emit("dyn.squeeze", [node.inputs[0], im.int64(given)])
    axes = _axes_arg(im, node, 13)
    return im.emit("squeeze", [node.inputs[0]], axis=axes)


@_op("Unsqueeze")
def _unsqueeze(im, node):
    x = node.inputs[0]
    axes = _axes_arg(im, node, 13)
    if axes is None:
        raise node.fail("axes are required")
    out_rank = im.rank(x) + len(axes)
    norm = sorted(a + out_rank if a < 0 else a for a in axes)
    if len(set(norm)) != len(norm) or any(not 0 <= a < out_rank for a in norm):
        raise node.fail(f"invalid axes {axes} for output rank {out_rank}")
    for a in norm:
        x = im.emit1("expand_dims", [x], axis=a)
    return [x]


@_op("Expand")
def _expand(im, node):
    x = node.inputs[0]
    if not node.inputs[1].known:
        return [_dyn_expand(im, node, x, im.int64(node.inputs[1]))]
    shape = [int(d) for d in im.static(node.inputs[1], node, "shape")]
    xs = im.shape_of(x)
    rank = max(len(xs), len(shape))
    xs_p = [1] * (rank - len(xs)) + list(xs)
    sh_p = [1] * (rank - len(shape)) + shape
    target = []
    for a, b in zip(xs_p, sh_p):
        if a is None:
            raise node.fail("needs a static input shape")
        if a != 1 and b != 1 and a != b:
            raise node.fail(f"cannot expand {list(xs)} to {shape}")
        target.append(a if b == 1 else b)
    return im.emit("broadcast_to", [x], shape=target)


def _dyn_expand(im: _Importer, node: _Node, x: _Val, shape: _Val) -> _Val:
    """ONNX's two-way broadcast to a run-time shape: dyn.broadcast_to to the elementwise
    maximum of the shape and the input's shape, both padded with leading ones (a mismatch
    other than 1 fails in broadcast_to at run time, as ONNX's Expand would)."""
    (m,) = im.static_shape(shape, node)
    r = im.rank(x)
    xs = im.int64(im.emit1("shape_of", [x], dtype="int64"))
    if m > r:
        xs = im.emit1("concatenate", [im.const(np.ones(m - r, np.int64)), xs], axis=0)
    elif r > m:
        shape = im.emit1("concatenate", [im.const(np.ones(r - m, np.int64)), shape], axis=0)
    target = im.emit1("maximum", [shape, xs])
    return im.emit1("dyn.broadcast_to", [x, target])


@_op("Tile")
def _tile(im, node):
    if not node.inputs[1].known:
        return im.emit("dyn.tile", [node.inputs[0], im.int64(node.inputs[1])])
    reps = im.static(node.inputs[1], node, "repeats")
    return im.emit("tile", [node.inputs[0]], reps=[int(r) for r in reps])


_I64_MAX = np.iinfo(np.int64).max


@_op("Slice")
def _slice(im, node):
    x = node.inputs[0]
    if node.opset < 10:
        starts = node.attrs["starts"]
        ends = node.attrs["ends"]
        axes = node.attrs.get("axes")
        steps = None
    else:
        dyn = [v for v in (node.inputs[1], node.inputs[2], node.input(4)) if v is not None and not v.known]
        if dyn:
            return [_dyn_slice(im, node, x)]
        starts = im.static(node.inputs[1], node, "starts")
        ends = im.static(node.inputs[2], node, "ends")
        axes = im.static(node.input(3), node, "axes")
        steps = im.static(node.input(4), node, "steps")
    starts = [int(v) for v in np.asarray(starts).reshape(-1)]
    ends = [int(v) for v in np.asarray(ends).reshape(-1)]
    rank = im.rank(x)
    axes = list(range(len(starts))) if axes is None else [int(a) for a in np.asarray(axes).reshape(-1)]
    steps = [1] * len(starts) if steps is None else [int(v) for v in np.asarray(steps).reshape(-1)]
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise node.fail("starts, ends, axes and steps must have the same length")
    s = im.shape_of(x)
    begin, end, strides, ax_out = [], [], [], []
    for st, en, ax, step in zip(starts, ends, axes, steps):
        ax = ax + rank if ax < 0 else ax
        if not 0 <= ax < rank:
            raise node.fail(f"axis {ax} out of range for rank {rank}")
        if step == 0:
            raise node.fail("steps must be non-zero")
        d = s[ax]
        if d is None:
            raise node.fail(f"slicing the dynamic axis {ax} is not supported")
        # ONNX's clamping, resolved here so Relay gets plain in-range bounds
        st = st + d if st < 0 else st
        en = en + d if en < 0 else en
        if step > 0:
            st, en = min(max(st, 0), d), min(max(en, 0), d)
        else:
            st, en = min(max(st, 0), d - 1), min(max(en, -1), d - 1)
            if en == -1:
                en = -d - 1  # "before index 0": Relay reads a plain -1 as the last index
        begin.append(st)
        end.append(en)
        strides.append(step)
        ax_out.append(ax)
    return im.emit("strided_slice", [x], begin=begin, end=end, strides=strides, axes=ax_out)


def _dyn_slice(im: _Importer, node: _Node, x: _Val) -> _Val:
    """Slice with run-time starts/ends/steps: Relay's dyn.strided_slice over the leading axes
    up to the last sliced one (the others whole), whose clamping is ONNX's. ``axes`` must be
    known (Relay's dyn.strided_slice has no axes)."""
    rank = im.rank(x)
    starts, ends = im.int64(node.inputs[1]), im.int64(node.inputs[2])
    (n,) = im.static_shape(starts, node)
    ax = im.static(node.input(3), node, "axes")
    axes = list(range(n)) if ax is None else [int(a) + rank if a < 0 else int(a) for a in ax]
    if len(axes) != n or any(not 0 <= a < rank for a in axes) or len(set(axes)) != n:
        raise node.fail(f"axes {axes} do not fit {n} starts for rank {rank}")
    steps = node.input(4)
    steps = im.const(np.ones(n, np.int64)) if steps is None else im.int64(steps)
    k = max(axes) + 1
    whole = {"begin": 0, "end": _I64_MAX, "strides": 1}

    def full(v: _Val, what: str) -> _Val:
        if axes == list(range(k)):
            return v
        parts = []
        for a in range(k):
            parts.append(im.element(v, axes.index(a)) if a in axes else im.const(np.array([whole[what]], np.int64)))
        return im.emit1("concatenate", parts, axis=0)

    return im.emit1("dyn.strided_slice", [x, full(starts, "begin"), full(ends, "end"), full(steps, "strides")])


@_op("Gather")
def _gather(im, node):
    data, idx = node.inputs[0], node.inputs[1]
    axis = node.attrs.get("axis", 0)
    rank = im.rank(data)
    ax = axis + rank if axis < 0 else axis
    if idx.known:
        dim = im.shape_of(data)[ax]
        if dim is not None:
            i = np.asarray(idx.const).astype(np.int64)
            if np.any(i < -dim) or np.any(i >= dim):
                raise node.fail(f"indices {i.tolist()} out of range for axis {ax} of size {dim}")
            idx = im.const(np.where(i < 0, i + dim, i).astype(idx.const.dtype))
            return im.emit("take", [data, idx], axis=ax)
    # run-time indices may be negative: wrap them, which is ONNX's meaning for [-n, n)
    return im.emit("take", [data, idx], axis=ax, mode="wrap")


# ---- nn ---------------------------------------------------------------------------------


def _spatial_pads(node: _Node, in_hw, kernel, strides, dilations, transposed=False):
    """Relay's padding (all befores, then all afters: [top, left, bottom, right] in 2-D) from
    ONNX pads / auto_pad for windows of any rank."""
    # checked here, as SAME padding divides by the strides (the relay op checks them too)
    for name, values in (("strides", strides), ("dilations", dilations)):
        if any(isinstance(v, float) or v < 1 for v in values):
            raise node.fail(f"{name} must be positive integers, got {list(values)}")
    auto = node.attrs.get("auto_pad", "NOTSET")
    if auto in ("NOTSET", ""):
        n = len(kernel)
        pads = list(node.attrs.get("pads", [0] * (2 * n)))
        if len(pads) != 2 * n:
            raise node.fail(f"pads {pads} must have {2 * n} values for {n}-D")
        return pads
    if auto == "VALID":
        return [0, 0, 0, 0]
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise node.fail(f"unknown auto_pad '{auto}'")
    before, after = [], []
    for n, k, s, d in zip(in_hw, kernel, strides, dilations):
        if n is None:
            raise node.fail("auto_pad SAME needs static spatial dims")
        total = max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
        small, big = total // 2, total - total // 2
        if auto == "SAME_UPPER":
            before.append(small)
            after.append(big)
        else:
            before.append(big)
            after.append(small)
    return before + after


def _check_2d(im: _Importer, node: _Node, x: _Val) -> None:
    if im.rank(x) != 4:
        raise node.fail(f"only 2-D (NCHW) inputs are supported, got rank {im.rank(x)}")


@_op("Conv")
def _conv(im, node):
    x, w, b = node.inputs[0], node.inputs[1], node.input(2)
    n = im.rank(x) - 2
    if n not in (1, 2, 3):
        raise node.fail(f"only 1-D, 2-D and 3-D convolutions are supported, got rank {n + 2}")
    ws = im.shape_of(w)
    kernel = list(node.attrs.get("kernel_shape", ws[2:]))
    strides = list(node.attrs.get("strides", [1] * n))
    dil = list(node.attrs.get("dilations", [1] * n))
    pads = _spatial_pads(node, im.shape_of(x)[2:], kernel, strides, dil)
    y = im.emit1(
        f"nn.conv{n}d",
        [x, w],
        strides=strides,
        padding=pads,
        dilation=dil,
        groups=node.attrs.get("group", 1),
        channels=ws[0],
        kernel_size=kernel,
    )
    if b is not None:
        y = im.emit1("nn.bias_add", [y, b], axis=1)
    return [y]


@_op("ConvTranspose")
def _conv_transpose(im, node):
    x, w, b = node.inputs[0], node.inputs[1], node.input(2)
    _check_2d(im, node, x)
    ws = im.shape_of(w)
    xs = im.shape_of(x)
    kernel = list(node.attrs.get("kernel_shape", ws[2:]))
    strides = list(node.attrs.get("strides", [1, 1]))
    dil = list(node.attrs.get("dilations", [1, 1]))
    out_pad = list(node.attrs.get("output_padding", [0, 0]))
    group = node.attrs.get("group", 1)
    auto = node.attrs.get("auto_pad", "NOTSET")
    grow: list[list[int]] = []
    if "output_shape" in node.attrs or auto in ("SAME_UPPER", "SAME_LOWER"):
        if "output_shape" in node.attrs:
            target = list(node.attrs["output_shape"])[-2:]
        else:
            target = [n * s for n, s in zip(xs[2:], strides)]
        before, after = [], []
        for n, k, s, d, op, t in zip(xs[2:], kernel, strides, dil, out_pad, target):
            if n is None:
                raise node.fail("output_shape / auto_pad SAME need static spatial dims")
            total = s * (n - 1) + op + (k - 1) * d + 1 - t
            # negative total padding (output_shape beyond the full output): split the same
            # way, and the negative parts become zero padding of the result (bias only there)
            # the ONNX spec (and onnxruntime): an odd pixel goes at the end only for SAME_UPPER
            if auto == "SAME_UPPER":
                before.append(total // 2)
                after.append(total - total // 2)
            else:
                before.append(total - total // 2)
                after.append(total // 2)
        pads = before + after
        grow = [[0, 0], [0, 0]] + [[max(0, -b0), max(0, -a0)] for b0, a0 in zip(before, after)]
        pads = [max(0, p) for p in pads]
    elif auto == "VALID":
        pads = [0, 0, 0, 0]
    else:
        pads = list(node.attrs.get("pads", [0, 0, 0, 0]))
    y = im.emit1(
        "nn.conv2d_transpose",
        [x, w],
        strides=strides,
        padding=pads,
        dilation=dil,
        output_padding=out_pad,
        groups=group,
        kernel_size=kernel,
    )
    if any(map(any, grow)):
        y = im.emit1("nn.pad", [y, im.scalar(0.0, y)], pad_width=grow)
    if b is not None:
        y = im.emit1("nn.bias_add", [y, b], axis=1)
    return [y]


@_op("BatchNormalization")
def _batch_norm(im, node):
    if node.attrs.get("training_mode", 0):
        raise node.fail("training_mode = 1 is not supported (inference import)")
    # training outputs (running mean / var) are rejected by convert() when they are used
    x, g, b, m, v = node.inputs[:5]
    outs = im.emit("nn.batch_norm", [x, g, b, m, v], axis=1, epsilon=float(node.attrs.get("epsilon", 1e-5)))
    return [outs[0]]


def _pool(im: _Importer, node: _Node, relay_name: str, **extra) -> list[_Val]:
    x = node.inputs[0]
    _check_2d(im, node, x)
    if node.num_outputs > 1:
        raise node.fail("the Indices output is not supported")
    if node.attrs.get("storage_order", 0):
        raise node.fail("storage_order = 1 is not supported")
    kernel = list(node.attrs["kernel_shape"])
    strides = list(node.attrs.get("strides", [1, 1]))
    dil = list(node.attrs.get("dilations", [1, 1]))
    pads = _spatial_pads(node, im.shape_of(x)[2:], kernel, strides, dil)
    ceil = bool(node.attrs.get("ceil_mode", 0))
    attrs = dict(pool_size=kernel, strides=strides, padding=pads, ceil_mode=ceil, **extra)
    if dil != [1, 1]:
        attrs["dilation"] = dil
    y = im.emit1(relay_name, [x], **attrs)
    if ceil:
        # ONNX drops a last window that would start inside the right padding; Relay keeps it
        xs, ys = im.shape_of(x), im.shape_of(y)
        want = list(ys[2:])
        for i in range(2):
            if xs[2 + i] is not None and (want[i] - 1) * strides[i] >= xs[2 + i] + pads[i]:
                want[i] -= 1
        if want != list(ys[2:]):
            y = im.emit1("strided_slice", [y], begin=[0, 0], end=want, axes=[2, 3])
    return [y]


@_op("MaxPool")
def _max_pool(im, node):
    return _pool(im, node, "nn.max_pool2d")


@_op("AveragePool")
def _avg_pool(im, node):
    return _pool(im, node, "nn.avg_pool2d", count_include_pad=bool(node.attrs.get("count_include_pad", 0)))


@_op("GlobalAveragePool")
def _global_avg_pool(im, node):
    _check_2d(im, node, node.inputs[0])
    return im.emit("nn.global_avg_pool2d", [node.inputs[0]])


@_op("GlobalMaxPool")
def _global_max_pool(im, node):
    _check_2d(im, node, node.inputs[0])
    return im.emit("nn.global_max_pool2d", [node.inputs[0]])


@_op("Gemm")
def _gemm(im, node):
    a, b, c = node.inputs[0], node.inputs[1], node.input(2)
    alpha = float(node.attrs.get("alpha", 1.0))
    beta = float(node.attrs.get("beta", 1.0))
    if im.rank(a) != 2 or im.rank(b) != 2:
        raise node.fail("A and B must be 2-D")
    if node.attrs.get("transA", 0):
        a = im.emit1("transpose", [a], axes=[1, 0])
    if node.attrs.get("transB", 0):
        y = im.emit1("nn.dense", [a, b], units=im.shape_of(b)[0])
    else:
        y = im.emit1("nn.matmul", [a, b], units=im.shape_of(b)[1])
    if alpha != 1.0:
        y = im.emit1("multiply", [y, im.scalar(alpha, y)])
    if c is not None and beta != 0.0:
        if beta != 1.0:
            c = im.emit1("multiply", [c, im.scalar(beta, c)])
        cs, ys = im.shape_of(c), im.shape_of(y)
        if len(cs) == 1 and cs[0] == ys[1] and cs[0] is not None:
            y = im.emit1("nn.bias_add", [y, c], axis=-1)
        else:
            y = im.emit1("add", [y, c])
    return [y]


@_op("MatMul")
def _matmul(im, node):
    a, b = node.inputs[0], node.inputs[1]
    sa, sb = im.shape_of(a), im.shape_of(b)
    if not sa or not sb:
        raise node.fail("MatMul operands must have rank >= 1")
    a1 = im.reshape(a, [1, sa[0]]) if len(sa) == 1 else a
    b1 = im.reshape(b, [sb[0], 1]) if len(sb) == 1 else b
    sa1, sb1 = im.shape_of(a1), im.shape_of(b1)
    if len(sb1) == 2:
        y = im.emit1("nn.matmul", [a1, b1])
    else:
        if any(d is None for d in sa1[:-2]) or any(d is None for d in sb1[:-2]):
            raise node.fail("batched MatMul needs static batch dims")
        batch = tuple(np.broadcast_shapes(tuple(sa1[:-2]), tuple(sb1[:-2])))
        nb = math.prod(batch)

        def to3(v, s):
            if tuple(s[:-2]) != batch and math.prod(s[:-2]) != 1:
                v = im.emit1("broadcast_to", [v], shape=[*batch, *s[-2:]])
                return im.reshape(v, [nb, *s[-2:]])
            return im.reshape(v, [math.prod(s[:-2]), *s[-2:]])

        y = im.emit1("nn.batch_matmul", [to3(a1, sa1), to3(b1, sb1)], transpose_b=False)
        ys = im.shape_of(y)
        y = im.reshape(y, [*batch, ys[1], ys[2]])
    ys = list(im.shape_of(y))
    if len(sa) == 1:
        del ys[-2]
    if len(sb) == 1:
        del ys[-1]
    if len(ys) != im.rank(y):
        if any(d is None for d in ys):
            raise node.fail("1-D MatMul operands need static shapes")
        y = im.reshape(y, ys)
    return [y]


@_op("Softmax", "LogSoftmax")
def _softmax(im, node):
    x = node.inputs[0]
    relay = "nn.softmax" if node.op_type == "Softmax" else "nn.log_softmax"
    rank = im.rank(x)
    if node.opset >= 13:
        return im.emit(relay, [x], axis=node.attrs.get("axis", -1))
    axis = node.attrs.get("axis", 1)
    axis = axis + rank if axis < 0 else axis
    if axis == rank - 1:
        return im.emit(relay, [x], axis=-1)
    # opset < 13: the input is viewed as 2-D [prod(d[:axis]), prod(d[axis:])]
    s = im.static_shape(x, node)
    flat = im.reshape(x, [math.prod(s[:axis]), math.prod(s[axis:])])
    return [im.reshape(im.emit1(relay, [flat], axis=1), s)]


_REDUCE = {
    "ReduceMean": ("mean", 18),
    "ReduceSum": ("sum", 13),
    "ReduceMax": ("max", 18),
    "ReduceMin": ("min", 18),
    "ReduceProd": ("prod", 18),
}


@_op(*_REDUCE)
def _reduce(im, node):
    relay, input_opset = _REDUCE[node.op_type]
    x = node.inputs[0]
    axes = _axes_arg(im, node, input_opset)
    keep = bool(node.attrs.get("keepdims", 1))
    if not axes:
        if node.attrs.get("noop_with_empty_axes", 0):
            return [x]
        axes = None
    return im.emit(relay, [x], axis=axes, keepdims=keep)


@_op("Pad")
def _pad(im, node):
    x = node.inputs[0]
    mode = node.attrs.get("mode", "constant")
    if mode not in ("constant", "edge", "reflect", "wrap"):
        raise node.fail(f"pad mode '{mode}' is not supported")
    rank = im.rank(x)
    if node.opset < 11:
        pads = list(node.attrs.get("pads", node.attrs.get("paddings", [])))
        value = im.scalar(float(node.attrs.get("value", 0.0)), x)
        axes = list(range(rank))
    else:
        v = node.input(2)
        value = im.scalar(0, x) if v is None else im.reshape(v, [])
        if not node.inputs[1].known and node.input(3) is None and mode != "wrap":
            # Relay's dyn.nn.pad: ONNX's [begins..., ends...] as Relay's [[begin, end], ...]
            pads = im.int64(node.inputs[1])
            width = im.emit1("transpose", [im.reshape(pads, [2, rank])], axes=[1, 0])
            return im.emit("dyn.nn.pad", [x, width, value], pad_mode=mode)
        pads = [int(p) for p in im.static(node.inputs[1], node, "pads")]
        ax = im.static(node.input(3), node, "axes")
        axes = list(range(rank)) if ax is None else [int(a) + rank if a < 0 else int(a) for a in ax]
    n = len(axes)
    if len(pads) != 2 * n:
        raise node.fail(f"pads {pads} must have 2 values per padded axis ({n})")
    if any(p < 0 for p in pads):
        raise node.fail(f"negative pads {pads} are not supported")
    width = [[0, 0] for _ in range(rank)]
    for k, a in enumerate(axes):
        width[a] = [pads[k], pads[k + n]]
    if mode == "wrap":  # no Relay pad mode: a take of the wrapped indices per padded axis
        xs = im.static_shape(x, node)
        for a, (before, after) in enumerate(width):
            if (before or after) and xs[a] == 0:
                raise node.fail(f"cannot wrap-pad axis {a} of size 0")
            if before or after:
                idx = (np.arange(-before, xs[a] + after) % xs[a]).astype(np.int64)
                x = im.emit1("take", [x, im.const(idx)], axis=a)
        return [x]
    return im.emit("nn.pad", [x, value], pad_width=width, pad_mode=mode)


@_op("LayerNormalization")
def _layer_norm(im, node):
    x, scale, bias = node.inputs[0], node.inputs[1], node.input(2)
    rank = im.rank(x)
    axis = node.attrs.get("axis", -1)
    axis = axis + rank if axis < 0 else axis
    eps = float(node.attrs.get("epsilon", 1e-5))
    xs = im.shape_of(x)
    if axis == rank - 1 and im.shape_of(scale) == (xs[-1],) and (bias is None or im.shape_of(bias) == (xs[-1],)):
        center = bias is not None
        if bias is None:
            bias = im.const(np.zeros(xs[-1], numpy_dtype(im.dtype_of(x))))
        return im.emit("nn.layer_norm", [x, scale, bias], axis=-1, epsilon=eps, center=center)
    # normalising several trailing axes: mean / variance arithmetic
    axes = list(range(axis, rank))
    mean = im.emit1("mean", [x], axis=axes, keepdims=True)
    d = im.emit1("subtract", [x, mean])
    var = im.emit1("mean", [im.emit1("multiply", [d, d])], axis=axes, keepdims=True)
    denom = im.emit1("sqrt", [im.emit1("add", [var, im.scalar(eps, var)])])
    y = im.emit1("multiply", [im.emit1("divide", [d, denom]), scale])
    if bias is not None:
        y = im.emit1("add", [y, bias])
    return [y]


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
) -> OnnxImport:
    """Import ``model`` and return the module together with its name mappings (``OnnxImport``)."""
    proto = load_model(model)
    if not proto.HasField("graph"):  # an empty file parses as an empty ModelProto
        raise OnnxImportError("the ONNX model has no graph (an empty or non-ONNX file?)")
    return _Importer(proto, shape, dtype, freeze_params).run()


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
    empty. ``mod`` is an ``xrelay.relay.IRModule`` when that class exists, else the xDSL
    ``ModuleOp``. Raises ``OnnxImportError`` (a ``ValueError``) for unsupported models.
    """
    result = import_onnx(model, shape, dtype, freeze_params)
    return _wrap_module(result.module), result.params


def _wrap_module(module: ModuleOp) -> Any:
    try:
        from xrelay.relay import IRModule  # type: ignore[attr-defined]
    except ImportError:
        return module
    for ctor in ("from_module_op", "from_module"):
        if hasattr(IRModule, ctor):
            return getattr(IRModule, ctor)(module)
    try:
        return IRModule(module)
    except Exception:
        return module

