"""Import TFLite flatbuffers into the relay dialect, like ``tvm.relay.frontend.from_tflite``.

``from_tflite(model, shape_dict, dtype_dict)`` returns ``(mod, params)``: ``mod`` holds
``func.func @main`` whose parameters are the subgraph's inputs (named after their tensors,
sanitised: ``serving_default_input_1:0`` -> ``serving_default_input_1.0``) followed by the
weights it uses, and ``params`` maps those weights' names to numpy arrays. ``model`` is a
``tflite.Model`` (Relay's argument), the flatbuffer's bytes, or a path.

Decisions a user may want to know:

* **Layout.** TFLite's tensors are channels-last and stay so: convolutions are ``NHWC`` with
  ``HWIO`` kernels (``HWOI`` for depthwise), pools are ``NHWC``. TFLite's ``OHWI`` and
  ``1HWC`` weights are transposed at import (``relay-opt -p convert-layout`` moves a module to
  ``NCHW`` when wanted).
* **Batch.** ``shape_dict`` may give the inputs another first axis (the batch) than the
  model's. Only the axes that carry it change, as the data flow says: a converted result
  whose shape differs from the model's on one axis by the batch's factor carries the batch
  there; a RESHAPE's constant new shape gets it on the axis with as many elements before
  and after it as the input's batch axis (not on a leading 1 that is something else); shape
  vectors (SHAPE, GATHER of them, PACK) keep their sizes. A reshape the model wrote that
  merges the batch with another axis (the converter writes the transpose of a size-1 batch
  axis as one) is refused, naming the tensor.
* **Weights.** Tensors backed by a buffer and read by an op at run time (kernels, biases)
  become parameters of ``main`` named after their tensor; constant operands that must be known
  at import (shapes, axes, paddings) are read, not imported.
* **Quantized models** (int8/uint8, per-tensor or per-channel) are imported with TFLite's
  integer arithmetic, so that results match the TFLite interpreter bit for bit: see
  ``xrelay.frontends.tflite.quantized``.
* **Errors.** ``TFLiteImportError`` (a ``ValueError``); unsupported operators are collected
  over the whole graph first and listed with the tensors they produce.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from xrelay.dialects.relay import RelayTypeError
from xrelay.error import TVMError
from xrelay.frontends.graph_builder import GraphBuilder, Value, converter_registry


class TFLiteImportError(ValueError, TVMError):
    """A TFLite model that cannot be imported; the message says which operators and why."""


TFLITE_DTYPES = {
    0: "float32",
    1: "float16",
    2: "int32",
    3: "uint8",
    4: "int64",
    6: "bool",
    7: "int16",
    9: "int8",
    10: "float64",
    12: "uint64",
    15: "uint32",
    16: "uint16",
    18: "bfloat16",
}


@dataclass
class QParams:
    """A tensor's quantization: ``real = scale * (q - zero_point)``; vectors along ``axis``
    for per-channel quantization."""

    scale: np.ndarray
    zero_point: np.ndarray
    axis: int

    @property
    def per_channel(self) -> bool:
        return self.scale.size > 1


@dataclass
class Tensor:
    index: int
    name: str
    shape: list[int]
    dtype: str
    qparams: QParams | None
    data: np.ndarray | None
    """The buffer's values when the tensor is a constant."""
    dynamic: tuple[int, ...] = ()
    """Axes the converter left unknown (-1 in the shape signature; ``shape`` holds 1 there)."""


@dataclass
class Op:
    """One operator: its builtin name, tensors and parsed options (None when it has none)."""

    index: int
    code: str
    inputs: list[Tensor | None]
    outputs: list[Tensor]
    options: Any

    def input(self, i: int) -> Tensor | None:
        return self.inputs[i] if i < len(self.inputs) else None

    def fail(self, msg: str) -> TFLiteImportError:
        out = self.outputs[0].name if self.outputs else f"#{self.index}"
        return TFLiteImportError(f"{self.code} operator #{self.index} (output '{out}'): {msg}")


@dataclass
class TFLiteImport:
    module: ModuleOp
    params: dict[str, np.ndarray]
    input_names: dict[str, str] = field(default_factory=dict)
    """Original tensor name -> parameter name in ``main``."""
    output_names: list[str] = field(default_factory=list)


Converter = Callable[["Importer", Op], list[Value]]

CONVERTERS: dict[str, Converter] = {}
"""TFLite builtin operator name (``CONV_2D``) -> converter; filled by ``ops`` and ``quantized``."""


converter = converter_registry(CONVERTERS)
"""``@converter(NAME, ...)``: register a converter for builtin operators ``NAME``."""


def _enum_names(cls: Any) -> dict[int, str]:
    return {v: k for k, v in vars(cls).items() if not k.startswith("_") and isinstance(v, int)}


class Importer:
    def __init__(self, model: Any, shape_dict: Mapping | None, dtype_dict: Mapping | None, freeze_params: bool):
        import tflite

        self.tflite = tflite
        self.model = model
        self.b = GraphBuilder(freeze_params)
        self.shape_dict = dict(shape_dict or {})
        self.dtype_dict = dict(dtype_dict or {})
        self.vals: dict[int, Value] = {}
        if model.SubgraphsLength() < 1:
            raise TFLiteImportError("the model has no subgraph")
        self.graph = model.Subgraphs(0)
        self._op_names = _enum_names(tflite.BuiltinOperator)
        self._opt_names = _enum_names(tflite.BuiltinOptions)
        self.tensors: dict[int, Tensor] = {}
        self.batch: int | None = None
        """The inputs' first dimension when ``shape_dict`` changed it (else None)."""
        self.model_batch: int | None = None
        self.batch_axes: dict[int, int] = {}
        """Tensor index -> the axis whose outermost factor is the inputs' batch (``model_batch``
        in the model, ``batch`` here), for the tensors computed from a re-batched input."""
        self.batched: set[int] = set()
        """The tensors computed from a re-batched input (their batch axis may be unknown: a
        RESHAPE to a shape the converter left unknown merges it with another axis)."""

    # ---- tensors --------------------------------------------------------------------------

    def tensor(self, i: int) -> Tensor:
        if i in self.tensors:
            return self.tensors[i]
        if not 0 <= i < self.graph.TensorsLength():
            raise TFLiteImportError(f"tensor index {i} is out of range ({self.graph.TensorsLength()} tensors)")
        t = self.graph.Tensors(i)
        name = (t.Name() or b"").decode("utf-8", "replace") or f"tensor{i}"
        code = t.Type()
        if code not in TFLITE_DTYPES:
            names = _enum_names(self.tflite.TensorType)
            raise TFLiteImportError(f"tensor '{name}': type {names.get(code, code)} is not supported")
        dtype = TFLITE_DTYPES[code]
        shape = [int(d) for d in t.ShapeAsNumpy()] if t.ShapeLength() else []
        q = t.Quantization()
        qp = None
        if q is not None and q.ScaleLength() > 0:
            scale = q.ScaleAsNumpy().astype(np.float32)
            zp = q.ZeroPointAsNumpy().astype(np.int64) if q.ZeroPointLength() else np.zeros(scale.shape, np.int64)
            qp = QParams(scale, zp, int(q.QuantizedDimension()))
        data = None
        if 0 < t.Buffer() < self.model.BuffersLength():
            buf = self.model.Buffers(t.Buffer())
            if buf.DataLength() > 0:
                raw = buf.DataAsNumpy().tobytes()
                from xrelay.dialects.relay import numpy_dtype

                arr = np.frombuffer(raw, dtype=numpy_dtype(dtype))
                if arr.size != int(np.prod(shape)):
                    raise TFLiteImportError(
                        f"tensor '{name}': its buffer holds {arr.size} values, its shape {shape} needs {int(np.prod(shape))}"
                    )
                data = arr.reshape(shape)
            elif buf.Size() > 0:
                raise TFLiteImportError(f"tensor '{name}': buffers stored outside the flatbuffer are not supported")
        sig = [int(d) for d in t.ShapeSignatureAsNumpy()] if t.ShapeSignatureLength() else []
        dynamic = tuple(k for k, d in enumerate(sig) if d < 0)
        self.tensors[i] = Tensor(i, name, shape, dtype, qp, data, dynamic)
        return self.tensors[i]

    def get(self, t: Tensor, as_param: bool = True) -> Value:
        """The value of tensor ``t``: a computed value, a weight (a parameter of ``main``), or
        with ``as_param=False`` its constant array."""
        if t.index in self.vals:
            return self.vals[t.index]
        if t.data is None:
            raise TFLiteImportError(f"tensor '{t.name}' is read before any operator produces it")
        if as_param and t.data.size > 1:
            return self.b.param(t.name, t.data)
        return t.data

    def reshaped(self, op: Op, x: Value) -> list[int]:
        """The shape ``op``'s output ``out`` has here, a reshape of ``x`` (input ``xt``) to the
        shape the model wrote for the saved batch (a RESHAPE's constant new shape). Only the
        axis that takes ``x``'s batch changes: an axis of the batch's size in the model with as
        many elements before and after it as ``x``'s batch axis has (a shape vector whose first
        value is 1 is not a batch by itself, and a tensor that does not carry the batch keeps
        the model's shape). A new shape that merges the batch with another axis is refused:
        a model saved for one batch may fold a transpose of its size-1 batch axis into such a
        reshape, which no reshape computes at another batch."""
        xt, out = op.inputs[0], op.outputs[0]
        a = self.batch_axes.get(xt.index)
        shape = list(self.b.shape(x))
        if a is None or self.model_batch is None:
            if math.prod(out.shape) != math.prod(shape):
                raise op.fail(f"cannot reshape {shape} ('{xt.name}', its batch axis unknown) to the model's {out.shape}")
            return out.shape
        before, after = math.prod(shape[:a]), math.prod(shape[a + 1 :])
        for k, d in enumerate(out.shape):
            if d == self.model_batch and math.prod(out.shape[:k]) == before and math.prod(out.shape[k + 1 :]) == after:
                return [*out.shape[:k], shape[a], *out.shape[k + 1 :]]
        raise op.fail(
            f"the model's new shape {out.shape} merges the batch (axis {a} of {shape}, "
            f"'{xt.name}') with another axis: the model cannot take another batch than {self.model_batch}"
        )

    def _batch_axis(self, op: Op, t: Tensor, got: list[int]) -> int | None:
        """The axis of output ``t`` that carries the batch, read from the converted result's
        shape ``got``: the one axis where it differs from the model's by the batch's factor,
        in an output of an op reading a re-batched tensor (data flow). Any other difference
        outside the axes the converter left unknown is an error."""
        want = t.shape
        if not want:
            return None
        if len(got) != len(want):
            raise op.fail(f"converted result has shape {got}, the model's '{t.name}' has {want}")
        batched = self.model_batch is not None and any(i is not None and i.index in self.batched for i in op.inputs)
        differ = [k for k, (g, w) in enumerate(zip(got, want)) if g != w]
        scaled = [k for k in differ if batched and got[k] * self.model_batch == want[k] * self.batch]
        fixed = [k for k in differ if k not in t.dynamic]
        if len(fixed) > 1 or fixed and fixed[0] not in scaled:
            raise op.fail(f"converted result has shape {got}, the model's '{t.name}' has {want}")
        return differ[0] if len(differ) == 1 and differ == scaled else None

    def const_of(self, op: Op, i: int, what: str) -> np.ndarray:
        t = op.input(i)
        if t is None or t.data is None:
            raise op.fail(f"input {i} ({what}) must be a constant")
        return t.data

    # ---- the graph ------------------------------------------------------------------------

    def op_code(self, op: Any) -> str:
        idx = op.OpcodeIndex()
        if not 0 <= idx < self.model.OperatorCodesLength():
            raise TFLiteImportError(f"operator code index {idx} is out of range")
        oc = self.model.OperatorCodes(idx)
        code = max(int(oc.BuiltinCode()), int(oc.DeprecatedBuiltinCode()))
        name = self._op_names.get(code, f"builtin {code}")
        if name == "CUSTOM":
            name = f"CUSTOM({(oc.CustomCode() or b'').decode('utf-8', 'replace')})"
        return name

    def options(self, op: Any) -> Any:
        kind = op.BuiltinOptionsType()
        if kind == 0 or op.BuiltinOptions() is None:
            return None
        name = self._opt_names.get(kind)
        cls = getattr(self.tflite, name, None) if name else None
        if cls is None:
            return None
        opts = cls()
        table = op.BuiltinOptions()
        opts.Init(table.Bytes, table.Pos)
        return opts

    def run(self) -> TFLiteImport:
        g = self.graph
        codes = [self.op_code(g.Operators(i)) for i in range(g.OperatorsLength())]
        missing: dict[str, list[str]] = {}
        for i, code in enumerate(codes):
            if code not in CONVERTERS:
                op = g.Operators(i)
                out = self.tensor(op.Outputs(0)).name if op.OutputsLength() else f"#{i}"
                missing.setdefault(code, []).append(f"'{out}'")
        if missing:
            parts = [f"{c} ({', '.join(outs)})" for c, outs in sorted(missing.items())]
            raise TFLiteImportError(
                f"{sum(map(len, missing.values()))} operator(s) are not supported: " + "; ".join(parts)
            )
        input_names = {}
        inputs = [int(i) for i in g.InputsAsNumpy()] if g.InputsLength() else []
        known = {self.tensor(i).name for i in inputs}
        unknown = (set(self.shape_dict) | set(self.dtype_dict)) - known
        if unknown:
            raise TFLiteImportError(
                f"shape/dtype given for unknown input(s) {', '.join(sorted(unknown))}; "
                f"the model's inputs are {', '.join(sorted(known)) or 'none'}"
            )
        for i in inputs:
            t = self.tensor(i)
            shape = [int(d) for d in self.shape_dict.get(t.name, t.shape)]
            dtype = self.dtype_dict.get(t.name, t.dtype)
            if t.shape and shape and shape[0] != t.shape[0] and list(shape[1:]) == t.shape[1:]:
                self.batch, self.model_batch = shape[0], t.shape[0]
                self.batch_axes[i] = 0
                self.batched.add(i)
            arg = self.b.input(t.name, shape, dtype)
            input_names[t.name] = arg.name_hint
            self.vals[i] = arg
        for i, code in enumerate(codes):
            raw = g.Operators(i)
            op = Op(
                i,
                code,
                [self.tensor(int(k)) if k >= 0 else None for k in (raw.InputsAsNumpy() if raw.InputsLength() else [])],
                [self.tensor(int(k)) for k in (raw.OutputsAsNumpy() if raw.OutputsLength() else [])],
                self.options(raw),
            )
            try:
                outs = CONVERTERS[code](self, op)
            except TFLiteImportError:
                raise
            except (RelayTypeError, ValueError, IndexError, KeyError, TypeError) as e:
                raise op.fail(str(e)) from e
            for t, v in zip(op.outputs, outs):
                axis = self._batch_axis(op, t, list(self.b.shape(v)))
                if axis is not None:
                    self.batch_axes[t.index] = axis
                if any(i is not None and i.index in self.batched for i in op.inputs):
                    self.batched.add(t.index)
                self.vals[t.index] = v
        outputs = [self.tensor(int(i)) for i in g.OutputsAsNumpy()] if g.OutputsLength() else []
        try:
            module = self.b.finish([self.get(t) for t in outputs], [t.name for t in outputs])
        except TFLiteImportError:
            raise
        except Exception as e:
            raise TFLiteImportError(f"the imported module does not verify: {e}") from e
        return TFLiteImport(module, self.b.params, input_names, [t.name for t in outputs])
