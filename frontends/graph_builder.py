"""Building ``func.func @main`` in the relay dialect from another framework's graph.

The PyTorch and TFLite importers walk their graphs node by node and call ``GraphBuilder``:

* ``input(name, shape, dtype)`` adds a parameter of ``main`` for a real input;
* ``param(name, array)`` gives a weight: a parameter of ``main`` after the inputs (its array
  goes to ``params`` under the same name), or with ``freeze_params`` a named constant
  (``relay.constant @name``);
* ``emit(op, values, **attrs)`` adds a relay or qnn op, or evaluates it now with the numpy
  kernels when every operand is a known array (shape arithmetic, ``arange``, ``full``);
* ``finish(outputs)`` returns the verified module.

A value is an ``SSAValue`` (computed at run time) or a numpy array (known now, not yet in the
IR); ``ssa`` materialises an array as a ``relay.constant`` once. Names follow MLIR's rules:
``sanitize`` maps a framework's name (``layer1.0.conv1.weight``, ``serving_default_x:0``) to
one xDSL prints back unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region, SSAValue

from xrelay.dialects.dyn import DYN_OPS
from xrelay.dialects.qnn import QNN_OPS
from xrelay.dialects.relay import RELAY_OPS, ConstantOp, numpy_dtype
from xrelay.dialects.relay.dtypes import (
    byte_size,
    dtype_from_numpy,
    dtype_of,
    shape_of,
    tensor_type,
    too_large,
)
from xrelay.kernels import evaluate, has_kernel

Value = SSAValue | np.ndarray
"""A tensor during import: computed at run time (an SSA value) or known now (an array)."""

_NAME_BAD = re.compile(r"[^\w$.-]")
_NAME_NUM_SUFFIX = re.compile(r"_(\d+)$")


def sanitize(name: str) -> str:
    """A valid MLIR value name that xDSL keeps as is.

    Characters MLIR does not allow become ``_``, a leading digit gets a ``_`` prefix, and a
    trailing ``_<digits>`` becomes ``.<digits>`` (xDSL strips it from name hints, reserving it
    for uniquing): ``serving_default_x:0`` -> ``serving_default_x.0``.
    """
    out = _NAME_BAD.sub("_", name) or "v"
    if out[0].isdigit():
        out = "_" + out
    return _NAME_NUM_SUFFIX.sub(lambda m: "." + m.group(1), out)


def converter_registry(table: dict[str, Callable]) -> Callable:
    """The decorator ``@converter("NAME", ...)`` registering a converter into ``table`` under
    each name; a second registration of a name is an error (import order changes nothing)."""

    def converter(*names: str) -> Callable[[Callable], Callable]:
        def wrap(fn: Callable) -> Callable:
            for n in names:
                if n in table:
                    raise KeyError(f"converter for {n} registered twice")
                table[n] = fn
            return fn

        return wrap

    return converter


def op_class(name: str) -> Any:
    """The op class of relay, dyn or qnn op ``name``."""
    cls = RELAY_OPS.get(name) or QNN_OPS.get(name) or DYN_OPS.get(name)
    if cls is None:
        raise KeyError(f"no relay op named {name!r}")
    return cls


class GraphBuilder:
    """One ``@main`` under construction (see the module docstring)."""

    def __init__(self, freeze_params: bool = False):
        self.freeze = freeze_params
        self.block = Block()
        self.names: set[str] = set()
        self.params: dict[str, np.ndarray] = {}
        self._param_vals: dict[str, SSAValue] = {}
        self._consts: dict[Any, tuple[np.ndarray, SSAValue]] = {}
        self.n_inputs = 0

    # ---- names and values -----------------------------------------------------------------

    def fresh_name(self, name: str) -> str:
        base = sanitize(name)
        out, k = base, 0
        while out in self.names:
            k += 1
            out = f"{base}.{k}"
        self.names.add(out)
        return out

    def input(self, name: str, shape: Sequence[int | None], dtype: str) -> SSAValue:
        """A real input: the next parameter of ``main`` (inputs come before weights)."""
        arg = self.block.insert_arg(tensor_type(list(shape), dtype), self.n_inputs)
        arg.name_hint = self.fresh_name(name)
        self.n_inputs += 1
        return arg

    def param(self, name: str, array: np.ndarray) -> SSAValue:
        """A weight named ``name``: a parameter of ``main`` (or a named constant when frozen),
        created once per name."""
        if name in self._param_vals:
            return self._param_vals[name]
        array = np.ascontiguousarray(array)
        pname = self.fresh_name(name)
        if self.freeze:
            op = ConstantOp.from_numpy(array, param_name=pname)
            self.block.add_op(op)
            val = op.result
        else:
            val = self.block.insert_arg(tensor_type(array.shape, dtype_from_numpy(array.dtype)), len(self.block.args))
            val.name_hint = pname
            self.params[pname] = array
        self._param_vals[name] = val
        return val

    def ssa(self, v: Value) -> SSAValue:
        """The run-time value of ``v``; an array becomes a ``relay.constant``, once per array
        (once per value for small ones: the scalars converters write inline)."""
        if isinstance(v, SSAValue):
            return v
        arr = np.asarray(v)
        key: Any = (arr.dtype.str, arr.shape, arr.tobytes()) if arr.size <= 16 else id(v)
        hit = self._consts.get(key)
        if hit is not None and (not isinstance(key, int) or hit[0] is v):
            return hit[1]
        op = ConstantOp.from_numpy(arr)
        self.block.add_op(op)
        self._consts[key] = (v, op.result)  # keeps v alive so its id is not reused
        return op.result

    @staticmethod
    def shape(v: Value) -> tuple[int | None, ...]:
        return tuple(v.shape) if isinstance(v, np.ndarray) else shape_of(v.type)

    @staticmethod
    def dtype(v: Value) -> str:
        return dtype_from_numpy(v.dtype) if isinstance(v, np.ndarray) else dtype_of(v.type)

    def rank(self, v: Value) -> int:
        return len(self.shape(v))

    def const(self, value: Any, dtype: str) -> np.ndarray:
        return np.asarray(value, dtype=numpy_dtype(dtype))

    # ---- ops ------------------------------------------------------------------------------

    def emit(self, name: str, vals: Sequence[Value], **attrs: Any) -> list[Value]:
        """Apply op ``name`` to ``vals``: evaluated now when every operand is a known array
        (and the op has a kernel), else added to ``main``."""
        cls = op_class(name)
        if all(isinstance(v, np.ndarray) for v in vals) and has_kernel(name) and not cls.STATEFUL:
            in_types = [tensor_type(v.shape, dtype_from_numpy(v.dtype)) for v in vals]
            full = cls.complete_attrs(attrs, in_types)
            out_types = cls.infer_types(in_types, full)
            for t in out_types:  # refuse before the kernel allocates it
                if isinstance(t, TensorType) and t.has_static_shape():
                    message = too_large(f"the constant {name} computes ({t})", byte_size(t))
                    if message:
                        raise ValueError(message)
            arrays = evaluate(cls, list(vals), full, out_types)
            if arrays is not None:
                return [np.asarray(a) for a in arrays]
        op = cls.make([self.ssa(v) for v in vals], **attrs)
        self.block.add_op(op)
        return list(op.results)

    def emit1(self, name: str, vals: Sequence[Value], **attrs: Any) -> Value:
        return self.emit(name, vals, **attrs)[0]

    def cast(self, v: Value, dtype: str) -> Value:
        return v if self.dtype(v) == dtype else self.emit1("cast", [v], dtype=dtype)

    def reshape(self, v: Value, shape: Sequence[int]) -> Value:
        if tuple(self.shape(v)) == tuple(shape):
            return v
        return self.emit1("reshape", [v], newshape=list(shape))

    # ---- the function ---------------------------------------------------------------------

    def _erase_dead(self) -> None:
        """Erase ops whose results nothing uses (a converter may emit a value it then does
        not need, e.g. the transpose of a weight that ``nn.dense`` takes untransposed)."""
        for op in reversed(list(self.block.ops)):
            if op.results and all(not r.uses for r in op.results):
                self.block.erase_op(op)

    def finish(self, outputs: Sequence[Value], names: Sequence[str] | None = None) -> ModuleOp:
        """``main`` returning ``outputs`` (named ``names`` where a result has no name yet)."""
        outs = [self.ssa(v) for v in outputs]
        for v, name in zip(outs, names or []):
            if v.name_hint is None:
                v.name_hint = sanitize(name)
        self.block.add_op(ReturnOp(*outs))
        self._erase_dead()
        ftype = ([a.type for a in self.block.args], [v.type for v in outs])
        module = ModuleOp([FuncOp("main", ftype, Region(self.block))])
        module.verify()
        return module
