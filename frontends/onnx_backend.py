"""An ``onnx.backend.base.Backend`` over xrelay, so ONNX's own conformance suite can run it.

    >>> from xrelay.frontends.onnx_backend import XrelayBackend  # doctest: +SKIP
    >>> rep = XrelayBackend.prepare(model)            # the reference interpreter
    >>> rep = XrelayBackend.prepare(model, mode="built")   # xrelay.build: the arena runtime
    >>> outputs = rep.run([x])                          # a tuple of numpy arrays, in output order

Two modes:

* ``"interpreter"`` (default): ``import_onnx(model, freeze_params=True)`` and the reference
  interpreter (``xrelay.runtime.interpreter.run``) on ``@main``; dynamic shapes are fine.
* ``"built"``: the imported module goes through ``xrelay.build`` (opt_level 3, passes, fuse,
  lower, plan) and runs in the arena executor. A graph that folds to constants runs too.

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
from onnx import numpy_helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType

from xrelay.error import TVMError
from xrelay.frontends.onnx import import_onnx

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
        self.mode = mode
        init_names = {t.name for t in model.graph.initializer}
        self.input_names = [i.name for i in model.graph.input if i.name not in init_names]
        self.output_names = [o.name for o in model.graph.output]
        self._imp = import_onnx(model, freeze_params=True)
        self._param_names = [self._imp.input_names[n] for n in self.input_names]
        self._built = None
        if mode == "built":
            from xrelay.runtime.build import build

            self._built = build(self._imp.module, {}, **build_kwargs)

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
        return {p: _array(v) for p, v in zip(self._param_names, values)}

    def run(self, inputs: Any, **kwargs: Any) -> tuple:
        feeds = self._feeds(inputs)
        if self._built is None:
            from xrelay.runtime.interpreter import run

            outs = run(self._imp.module, feeds)
        else:
            m = self._built
            for name, value in feeds.items():
                m.set_input(name, value)
            m.run()
            outs = [m.get_output(i).copy() for i in range(m.get_num_outputs())]
        return _outputs_tuple(self.output_names, outs)


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
        from onnx import helper

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
