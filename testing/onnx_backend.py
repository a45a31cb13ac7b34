"""An ``onnx.backend.base.Backend`` over xrelay, so ONNX's own conformance suite can run it.

    >>> from xrelay.testing.onnx_backend import XrelayBackend  # doctest: +SKIP
    >>> rep = XrelayBackend.prepare(model)            # the reference interpreter
    >>> rep = XrelayBackend.prepare(model, mode="built")   # xrelay.build: the arena runtime
    >>> outputs = rep.run([x])                          # a tuple of numpy arrays, in output order

Two modes:

* ``"interpreter"`` (default): ``import_onnx(model, freeze_params=True)`` and the reference
  interpreter (``xrelay.runtime.interpreter.run``) on ``@main``; dynamic shapes are fine.
* ``"built"``: the imported module goes through ``xrelay.build`` (opt_level 3, passes, fuse,
  lower, plan) and runs in the arena executor. A graph that folds to constants runs too.

Shapes, axes, pads, ... given as graph inputs (ONNX's node tests feed them as inputs):

* where Relay has a dynamic op (``Reshape``, ``Expand``, ``Tile``, ``Slice``, ``Pad``,
  ``ConstantOfShape``, ``Squeeze``, ``Upsample``), the import holds ``dyn.*`` ops. The
  interpreter runs them as they are; ``"built"`` builds at the first ``run``, with the graph
  inputs those ops' shape operands are computed from bound to their values (so
  ``dynamic-to-static`` makes them static), and builds again when those values change
  (one build per distinct set of values, cached). The same holds for ops whose result shape
  depends on values (``argwhere``) and for the condition of an ``If`` (``scf.if``, which
  ``fold-constant`` reduces to the branch taken once the condition is known);
* an ONNX ``Loop`` whose trip count or condition is computed at run time is a ``relay.loop``
  region in ``"interpreter"`` mode (run as it is, data-dependent scan lengths included);
  ``"built"`` imports with ``unroll_loops=True``, so the inputs the count and the conditions
  come from are bound at the first ``run`` and the Loop is unrolled (one build per distinct
  set of their values), as the arena runtime runs straight-line programs;
* where Relay has none (a reduction's ``axes``, ``Split``'s sizes, ``Range``, ``Unsqueeze``'s
  axes, ``Resize``'s scales/sizes, ...: TVM's importer refused these), both modes import at
  the first ``run`` with those graph inputs bound as initializers (cached per distinct values).

``run(inputs)`` takes the graph's real inputs (not the initializers) in order, or a dict by
their ONNX names. Outputs are returned in graph order as a ``namedtuple`` of numpy arrays.
Only ``"CPU"`` is supported. Any failure is an ``OnnxImportError``, a ``RunError``/``TVMError``
from the runtime, or ``BackendError`` for bad arguments.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import TensorType

from xrelay.backend.build import build
from xrelay.dialects.dyn import DynOp
from xrelay.error import TVMError
from xrelay.frontends.onnx import OnnxRunTimeValueError, import_onnx, load_model
from xrelay.runtime.interpreter import run

__all__ = ["BackendError", "XrelayBackend", "XrelayBackendRep", "prepare", "run_model", "run_node", "supports_device"]

MODES = ("interpreter", "built")


class BackendError(ValueError, TVMError):
    """Arguments the backend cannot use (an unknown mode or device, wrong number of inputs)."""


def _outputs_tuple(names: Sequence[str], values: Sequence[np.ndarray]) -> tuple:
    fields = [n if n.isidentifier() and not n.startswith("_") else f"output_{i}" for i, n in enumerate(names)]
    if len(set(fields)) != len(fields):
        fields = [f"output_{i}" for i in range(len(names))]
    return namedtuple("Outputs", fields, rename=True)(*values)


def _array(v: Any) -> np.ndarray:
    if isinstance(v, onnx.TensorProto):
        return numpy_helper.to_array(v)
    return np.asarray(v)


class XrelayBackendRep(BackendRep):
    """A prepared model: ``run(inputs)`` returns its outputs."""

    def __init__(self, model: onnx.ModelProto, mode: str, **build_kwargs: Any) -> None:
        if mode not in MODES:
            raise BackendError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        model = load_model(model)  # a proto or a path; anything else is an OnnxImportError
        self.mode = mode
        init_names = {t.name for t in model.graph.initializer}
        self.input_names = [i.name for i in model.graph.input if i.name not in init_names]
        self.output_names = [o.name for o in model.graph.output]
        self._model = model
        self._build_kwargs = build_kwargs
        self._bound: tuple[str, ...] = ()  # graph inputs bound at run time (no dyn form)
        self._imports: dict[bytes, Any] = {}
        self._builds: dict[bytes, Any] = {}
        self._imp = None
        self._built = None
        # sequence/optional inputs: expanded into tensors once their values are seen (run)
        self._structured = [
            i for i in model.graph.input if i.name not in init_names and not i.type.HasField("tensor_type")
        ]
        self._expanded: dict[str, XrelayBackendRep] = {}
        if self._structured:
            return
        try:
            self._imp = import_onnx(model, freeze_params=True, unroll_loops=mode == "built")
        except OnnxRunTimeValueError as e:
            self._bound = e.inputs
            return
        if mode == "built":
            if not _dyn_shape_args(self._imp.module):

                self._built = build(self._imp.module, {}, **build_kwargs)

    def _specialised(self, values: dict[str, np.ndarray]) -> tuple[Any, Any, tuple[str, ...]]:
        """(import, built module or None, bound parameter names) for these input values,
        cached by the values of the inputs they depend on (at most 16 of each)."""
        key = _key(values, self._bound)
        imp = self._imports.get(key)
        if imp is None and not self._bound:
            imp = self._imp
        elif imp is None:
            imp, more = _import_bound(self._model, values, self._bound, self.mode == "built")
            if more != self._bound:  # a later node needed more inputs: key on them too
                self._bound = more
                key = _key(values, more)
            self._imports = _bounded(self._imports)
            self._imports[key] = imp
        if self.mode != "built":
            return imp, None, ()
        by_arg = {imp.input_names[n]: n for n in imp.input_names}
        bound_args = _dyn_shape_args(imp.module)
        key += b"|" + _key(values, [by_arg[a] for a in bound_args])
        built = self._builds.get(key)
        if built is None:

            params = {a: values[by_arg[a]] for a in bound_args}
            built = build(imp.module, params, **self._build_kwargs)
            self._builds = _bounded(self._builds)
            self._builds[key] = built
        return imp, built, bound_args

    def _feeds(self, inputs: Any) -> dict[str, np.ndarray]:
        if isinstance(inputs, Mapping):
            missing = [n for n in self.input_names if n not in inputs]
            if missing:
                raise BackendError(f"missing inputs: {', '.join(missing)}")
            values = [inputs[n] for n in self.input_names]
        else:
            if isinstance(inputs, np.ndarray):
                inputs = [inputs]
            values = list(inputs)
            if len(values) != len(self.input_names):
                raise BackendError(f"the model takes {len(self.input_names)} inputs, got {len(values)}")
        structured = {i.name for i in self._structured}
        return {n: v if n in structured else _array(v) for n, v in zip(self.input_names, values)}

    def run(self, inputs: Any, **kwargs: Any) -> tuple:
        values = self._feeds(inputs)
        if self._structured:
            model, flat, key = _expand_structured(self._model, values, self._structured)
            rep = self._expanded.get(key)
            if rep is None:
                rep = XrelayBackendRep(model, self.mode, **self._build_kwargs)
                self._expanded = _bounded(self._expanded)  # type: ignore[arg-type]
                self._expanded[key] = rep
            return rep.run(flat)
        imp, built, bound_args = self._imp, self._built, ()
        if imp is None or (self.mode == "built" and built is None):
            imp, built, bound_args = self._specialised(values)
        feeds = {imp.input_names[n]: v for n, v in values.items() if n in imp.input_names}
        if built is None:

            outs = run(imp.module, feeds)
        else:
            for name, value in feeds.items():
                if name not in bound_args:
                    built.set_input(name, value)
            built.run()
            outs = [built.get_output(i).copy() for i in range(built.get_num_outputs())]
        return _outputs_tuple(self.output_names, imp.pack_outputs(outs))


def _expand_structured(
    model: onnx.ModelProto, values: Mapping[str, Any], structured: Sequence[onnx.ValueInfoProto]
) -> tuple[onnx.ModelProto, dict[str, np.ndarray], str]:
    """``model`` with each sequence/optional input replaced by tensor inputs (named
    ``<input>__<i>`` / ``<input>__opt``) and the ``SequenceConstruct``/``SequenceEmpty``/
    ``Optional`` nodes that rebuild it from them; the tensor values by name; and a key naming
    the structure (lengths, emptiness, shapes and dtypes) the model was expanded for."""

    nodes: list[onnx.NodeProto] = []
    inputs: list[onnx.ValueInfoProto] = []
    flat: dict[str, np.ndarray] = {}
    key: list[str] = []

    def expand(what: str, ty: onnx.TypeProto, v: Any, out: str) -> None:
        if ty.HasField("optional_type"):
            if v is None:
                key.append("none")
                nodes.append(helper.make_node("Optional", [], [out], type=ty.optional_type.elem_type))
                return
            expand(what, ty.optional_type.elem_type, v, out + "__opt")
            nodes.append(helper.make_node("Optional", [out + "__opt"], [out]))
        elif ty.HasField("sequence_type"):
            if not isinstance(v, list | tuple):
                raise BackendError(f"input '{what}' is a sequence: give a list of arrays, got {type(v).__name__}")
            key.append(f"seq{len(v)}")
            names = [f"{out}__{i}" for i in range(len(v))]
            for n, item in zip(names, v):
                expand(what, ty.sequence_type.elem_type, item, n)
            if names:
                nodes.append(helper.make_node("SequenceConstruct", names, [out]))
            else:
                elem = ty.sequence_type.elem_type.tensor_type.elem_type or onnx.TensorProto.FLOAT
                nodes.append(helper.make_node("SequenceEmpty", [], [out], dtype=elem))
        elif ty.HasField("tensor_type"):
            if v is None or isinstance(v, list | tuple):
                raise BackendError(f"input '{what}' needs an array, got {type(v).__name__}")
            a = _array(v)
            key.append(f"{a.dtype}{a.shape}")
            inputs.append(helper.make_tensor_value_info(out, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape))
            flat[out] = a
        else:
            raise BackendError(f"input '{what}' has a type the backend does not take (maps, sparse tensors)")

    names = {i.name for i in structured}
    for inp in model.graph.input:
        if inp.name in names:
            expand(inp.name, inp.type, values[inp.name], inp.name)
        elif inp.name in values:  # its shape made concrete too (the model is specialised anyway)
            expand(inp.name, inp.type, values[inp.name], inp.name)
        else:
            inputs.append(inp)
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.input[:]
    m.graph.input.extend(inputs)
    body = list(m.graph.node)
    del m.graph.node[:]
    m.graph.node.extend(nodes + body)
    return m, flat, "|".join(key)


def _bounded(cache: dict[bytes, Any]) -> dict[bytes, Any]:
    return {} if len(cache) >= 16 else cache


def _key(values: Mapping[str, np.ndarray], names: Sequence[str]) -> bytes:
    return b"".join(
        n.encode() + b"\0" + str(values[n].dtype).encode() + str(values[n].shape).encode() + values[n].tobytes()
        for n in names
    )


def _import_bound(
    model: onnx.ModelProto, values: Mapping[str, np.ndarray], names: Sequence[str], unroll_loops: bool
) -> tuple[Any, tuple[str, ...]]:
    """Import ``model`` with the graph inputs ``names`` turned into initializers of their
    ``values``; inputs found to need binding too (an OnnxRunTimeValueError naming more) are
    added and the import tried again. Returns the import and every input bound."""
    names = list(names)
    while True:
        m = onnx.ModelProto()
        m.CopyFrom(model)
        keep = [i for i in m.graph.input if i.name not in names]
        del m.graph.input[:]
        m.graph.input.extend(keep)
        m.graph.initializer.extend(numpy_helper.from_array(np.asarray(values[n]), n) for n in names)
        try:
            return import_onnx(m, freeze_params=True, unroll_loops=unroll_loops), tuple(names)
        except OnnxRunTimeValueError as e:
            more = [n for n in e.inputs if n not in names and n in values]
            if not more:
                raise
            names += more


def _dyn_shape_args(module: Any) -> tuple[str, ...]:
    """Parameters of @main that the shape operands of its dyn ops, the operands of ops whose
    result shape depends on values (``argwhere``) and the conditions of Ifs are computed from."""


    main = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
    args = set(main.body.block.args)
    found: list[str] = []
    seen: set[Any] = set()
    todo = [op.operands[i] for op in main.walk() if isinstance(op, DynOp) for i in op.VALUE_OPERANDS]
    # ops whose result shape follows from their operands' values (argwhere): all operands
    todo += [v for op in main.walk() if not isinstance(op, DynOp) and _data_shaped(op) for v in op.operands]
    # a run-time If condition (the arena runtime runs straight-line programs; fold-constant
    # turns an If on a constant into the branch it takes)
    todo += [op.cond for op in main.walk() if isinstance(op, scf.IfOp)]
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        if v in args:
            if v.name_hint not in found:
                found.append(v.name_hint)
        elif v.owner is not None and not isinstance(v.owner, type(main.body.block)):
            todo.extend(v.owner.operands)
    return tuple(found)


def _data_shaped(op: Any) -> bool:
    """A result with a dynamic dimension from operands of static shapes."""

    def dynamic(t: Any) -> bool:
        return isinstance(t, TensorType) and any(d < 0 for d in t.get_shape())

    return any(dynamic(r.type) for r in op.results) and not any(dynamic(v.type) for v in op.operands)


class XrelayBackend(Backend):
    """ONNX's backend interface over xrelay (``mode="interpreter"`` or ``"built"``)."""

    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", mode: str = "interpreter", **kwargs: Any):
        if not cls.supports_device(device):
            raise BackendError(f"device {device!r} is not supported (only CPU)")
        return XrelayBackendRep(model, mode, **kwargs)

    @classmethod
    def run_model(cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any) -> tuple:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(
        cls, node: onnx.NodeProto, inputs: Any, device: str = "CPU", outputs_info: Any = None, **kwargs: Any
    ) -> tuple:
        """Run one node on ``inputs`` (a list of arrays in the node's input order)."""

        values = list(inputs.values()) if isinstance(inputs, Mapping) else list(inputs)
        names = [n for n in node.input if n]
        if len(values) != len(names):
            raise BackendError(f"the node takes {len(names)} inputs, got {len(values)}")
        graph_inputs = [
            helper.make_tensor_value_info(n, onnx.helper.np_dtype_to_tensor_dtype(np.asarray(v).dtype), np.shape(v))
            for n, v in zip(names, values)
        ]
        if outputs_info:
            graph_outputs = [
                helper.make_tensor_value_info(n, onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dt)), shape)
                for n, (dt, shape) in zip(node.output, outputs_info)
            ]
        else:
            graph_outputs = [helper.make_empty_tensor_value_info(n) for n in node.output if n]
        opset = kwargs.pop("opset_version", None)
        graph = helper.make_graph([node], "run_node", graph_inputs, graph_outputs)
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid(node.domain or "", opset or onnx.defs.onnx_opset_version())]
        )
        return cls.run_model(model, values, device, **kwargs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return Device(device).type == DeviceType.CPU


prepare = XrelayBackend.prepare
run_model = XrelayBackend.run_model
run_node = XrelayBackend.run_node
supports_device = XrelayBackend.supports_device
