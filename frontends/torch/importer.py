"""Import a ``torch.export`` ExportedProgram into the relay dialect.

``from_exported_program(ep)`` returns ``(mod, params)`` like the other Relay frontends:
``mod`` holds ``func.func @main`` whose parameters are the program's user inputs (named after
its placeholders, ``x``) followed by the weights it uses, and ``params`` maps those weights'
names to numpy arrays. Weights are the program's parameters, buffers (batch-norm running
statistics) and lifted tensor constants, named by their fully qualified names
(``layer1.0.conv1.weight``); with ``freeze_params=True`` they are bound as named constants
(``relay.constant @name``) and ``params`` is empty.

Decisions a user may want to know:

* **Opset.** The graph is decomposed to the core ATen opset first
  (``ep.run_decompositions()``; pass ``decompose=False`` for a program already decomposed),
  but for ``aten._safe_softmax`` (attention's softmax, zeros for a row that is all ``-inf``):
  it imports as ``nn.softmax`` and a guard that ``drop-softmax-guard`` drops where no row
  can be all ``-inf`` (``program.decompositions``).
  The converters are keyed by ATen overload (``aten.convolution.default``); an op without
  one is refused by name, with every unsupported node listed in one error with the source
  line torch recorded for it (``model.py:12 in forward: x = torch.cumprod(x, 1)``).
* **In-place and view ops.** ``torch.export`` functionalizes the program: ``x.add_(1)`` is an
  ``add`` whose result later uses read, views (``view``, ``permute``, ``expand``, ``slice``,
  ``select``...) are ops producing new values. The importer follows that program exactly, so
  a value read after an in-place update is the updated one, as in eager mode. An update of a
  buffer or of a user input is a side effect of the program, not one of its outputs: ``main``
  returns the user outputs only, and ``TorchImport.mutations`` names the updated buffers and
  inputs.
* **Shapes.** Shapes are the ones the program was exported with; a program exported with
  dynamic dimensions is refused (``torch.export.Dim``), naming the dimension.
* **Dtypes.** An elementwise op computes in the dtype torch gives its result (its
  ``meta["val"]``): operands are cast to it first, as torch's type promotion does.
"""

from __future__ import annotations

import operator
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from xrelay.dialects.relay import RelayTypeError
from xrelay.error import TVMError
from xrelay.frontends.graph_builder import GraphBuilder, Value, converter_registry


class TorchImportError(ValueError, TVMError):
    """A PyTorch program that cannot be imported; the message says which nodes and why."""


@dataclass
class TorchImport:
    """Everything one import produced (``from_exported_program`` returns ``(mod, params)``)."""

    module: ModuleOp
    params: dict[str, np.ndarray]
    input_names: list[str]
    """``main``'s real inputs in order (the program's user input placeholders, sanitised)."""
    output_names: list[str]
    mutations: dict[str, str] = field(default_factory=dict)
    """Buffers and user inputs the program updates in place: target -> kind (the updated
    values are not results of ``main``)."""


TORCH_DTYPES = {
    "torch.float32": "float32",
    "torch.float64": "float64",
    "torch.float16": "float16",
    "torch.bfloat16": "bfloat16",
    "torch.int8": "int8",
    "torch.uint8": "uint8",
    "torch.int16": "int16",
    "torch.int32": "int32",
    "torch.int64": "int64",
    "torch.bool": "bool",
}


def relay_dtype(torch_dtype: Any, what: str) -> str:
    try:
        return TORCH_DTYPES[str(torch_dtype)]
    except KeyError:
        raise TorchImportError(f"{what}: dtype {torch_dtype} is not supported") from None


# ============================================================================================
# Nodes
# ============================================================================================


def source_location(node: Any) -> str:
    """Where torch recorded ``node`` was made: ``file:line in fn: code`` from the innermost
    frame of its stack trace, else the module path, else ''."""
    trace = node.meta.get("stack_trace") or ""
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)\n\s*(.*)', trace)
    if frames:
        path, line, fn, code = frames[-1]
        return f"{os.path.basename(path)}:{line} in {fn}: {code.strip()}"
    stack = node.meta.get("nn_module_stack")
    if stack:
        path, cls = list(stack.values())[-1]
        return f"in module '{path}' ({getattr(cls, '__name__', cls)})"
    return ""


def op_name(target: Any) -> str:
    """``aten.convolution.default`` for an OpOverload, the function's name otherwise."""
    if hasattr(target, "_schema") and hasattr(target, "namespace"):
        return f"{target.namespace}.{target._opname}.{target._overloadname}"
    return getattr(target, "__name__", str(target))


class Node:
    """A ``call_function`` node with its arguments bound by name (schema defaults filled in)."""

    def __init__(self, im: _Importer, fx_node: Any):
        self.fx = fx_node
        self.name = fx_node.name
        self.op = op_name(fx_node.target)
        self.im = im
        self.args: dict[str, Any] = {}
        schema = getattr(fx_node.target, "_schema", None)
        if schema is not None:
            for i, a in enumerate(schema.arguments):
                if i < len(fx_node.args):
                    v = fx_node.args[i]
                elif a.name in fx_node.kwargs:
                    v = fx_node.kwargs[a.name]
                elif a.has_default_value():
                    v = a.default_value
                else:
                    v = None
                self.args[a.name] = im.lookup(v)
        self.positional = [im.lookup(a) for a in fx_node.args]

    def __getitem__(self, key: str) -> Any:
        return self.args[key]

    @property
    def val(self) -> Any:
        """torch's fake result: a tensor, or a tuple of them."""
        return self.fx.meta.get("val")

    def out_shape(self, i: int | None = None) -> list[int]:
        v = self.val if i is None else self.val[i]
        return [self.im.static_dim(d, self) for d in v.shape]

    def out_dtype(self, i: int | None = None) -> str:
        v = self.val if i is None else self.val[i]
        return relay_dtype(v.dtype, f"{self.op} node '{self.name}'")

    def fail(self, msg: str) -> TorchImportError:
        where = source_location(self.fx)
        return TorchImportError(f"{self.op} node '{self.name}'{' (' + where + ')' if where else ''}: {msg}")


# ============================================================================================
# The importer
# ============================================================================================

Converter = Callable[["_Importer", Node], Any]

CONVERTERS: dict[str, Converter] = {}
"""ATen overload name (``aten.add.Tensor``) -> converter; filled by ``xrelay.frontends.torch.aten``."""

IGNORED = frozenset(
    {
        "aten._assert_async.msg",
        "aten._assert_scalar.default",
        "aten._assert_tensor_metadata.default",
        "aten.sym_constrain_range_for_size.default",
        "aten._functional_assert_async.msg",
    }
)
"""Run-time checks that compute nothing: skipped."""


_DATA = "its result's shape or value depends on the data (static shapes only)"
_RANDOM = "random values (export the model in eval() mode, with its random tensors as inputs)"
_TRAINING = "a training op (export the model in eval() mode, without gradients)"
_SYMBOLIC = "a symbolic size (export with static shapes)"
REFUSED: dict[str, str] = {
    "aten.nonzero.default": _DATA,
    "aten.masked_scatter.default": _DATA,
    "aten._local_scalar_dense.default": _DATA,
    "aten.rand.default": _RANDOM,
    "aten.randn.default": _RANDOM,
    "aten.randperm.default": _RANDOM,
    "aten._native_batch_norm_legit.default": _TRAINING,
    "aten._native_batch_norm_legit.no_stats": _TRAINING,
    "aten._adaptive_avg_pool2d_backward.default": _TRAINING,
    "aten.avg_pool2d_backward.default": _TRAINING,
    "aten.convolution_backward.default": _TRAINING,
    "aten.embedding_dense_backward.default": _TRAINING,
    "aten.max_pool2d_with_indices_backward.default": _TRAINING,
    "aten.native_group_norm_backward.default": _TRAINING,
    "aten.native_layer_norm_backward.default": _TRAINING,
    "aten.sym_numel.default": _SYMBOLIC,
    "aten.sym_size.int": _SYMBOLIC,
    "aten.sym_storage_offset.default": _SYMBOLIC,
    "aten.sym_stride.int": _SYMBOLIC,
    "aten._fft_r2c.default": "complex tensors are not supported",
    "aten._fft_c2r.default": "complex tensors are not supported",
}
"""Core ATen ops the importer refuses on purpose -> why (named in the error)."""


converter = converter_registry(CONVERTERS)
"""``@converter(NAME, ...)``: register a converter for ATen overloads ``NAME``."""


class _Importer:
    def __init__(self, ep: Any, freeze_params: bool, input_names: list[str] | None = None):
        self.ep = ep
        self.rename = list(input_names or [])
        """Names for the user inputs in order (``from_pytorch``'s input_infos)."""
        self.b = GraphBuilder(freeze_params)
        self.env: dict[str, Any] = {}
        self.transposed_of: dict[int, Value] = {}
        """id(value) -> the 2-D value it transposes (``linear`` becomes ``nn.dense``)."""

    # ---- values ---------------------------------------------------------------------------

    def lookup(self, a: Any) -> Any:
        """An fx argument with its nodes replaced by their imported values."""
        import torch.fx

        if isinstance(a, torch.fx.Node):
            return self.env[a.name]
        if isinstance(a, list | tuple):
            return type(a)(self.lookup(x) for x in a)
        return a

    def static_dim(self, d: Any, node: Node | None = None, what: str = "") -> int:
        if isinstance(d, int):
            return d
        from torch.fx.experimental.symbolic_shapes import is_concrete_int

        if is_concrete_int(d):
            return int(d)
        msg = f"{what}dynamic dimension {d} is not supported (export with static shapes)"
        raise node.fail(msg) if node else TorchImportError(msg)

    # ---- the program ----------------------------------------------------------------------

    def run(self) -> TorchImport:
        from torch.export.graph_signature import InputKind, OutputKind

        ep = self.ep
        sig = ep.graph_signature
        graph = ep.graph_module.graph
        self.check_supported(graph)
        specs = {s.arg.name: s for s in sig.input_specs if hasattr(s.arg, "name")}
        input_names = []
        weights: dict[str, tuple[str, Any]] = {}
        for node in graph.nodes:
            if node.op != "placeholder":
                continue
            spec = specs.get(node.name)
            kind = spec.kind if spec is not None else InputKind.USER_INPUT
            if kind == InputKind.USER_INPUT:
                val = node.meta.get("val")
                if not hasattr(val, "shape"):  # a Python scalar input is specialised away
                    self.env[node.name] = val
                    continue
                shape = [self.static_dim(d, what=f"input '{node.name}': ") for d in val.shape]
                name = self.rename[len(input_names)] if len(input_names) < len(self.rename) else node.name
                arg = self.b.input(name, shape, relay_dtype(val.dtype, f"input '{node.name}'"))
                input_names.append(arg.name_hint)
                self.env[node.name] = arg
            elif kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
                tensor = ep.state_dict.get(spec.target)
                if tensor is None:
                    tensor = ep.constants.get(spec.target)
                if tensor is None:
                    raise TorchImportError(f"weight '{spec.target}' is missing from the program")
                weights[node.name] = (spec.target, tensor)
                self.env[node.name] = _Weight(spec.target, tensor)
            else:
                raise TorchImportError(f"input '{node.name}' of kind {kind.name} is not supported")
        outputs: list[Value] = []
        out_names: list[str] = []
        for node in graph.nodes:
            if node.op == "call_function":
                self.convert(node)
            elif node.op == "output":
                results = node.args[0]
                user = [
                    s.arg.name if hasattr(s.arg, "name") else None
                    for s in sig.output_specs
                    if s.kind == OutputKind.USER_OUTPUT
                ]
                for r in results:
                    name = getattr(r, "name", None)
                    if name is None or name not in user:
                        continue
                    for i, v in enumerate(_flatten(self.env[name])):
                        outputs.append(self.value(v))
                        out_names.append(name if i == 0 else f"{name}.{i}")
            elif node.op not in ("placeholder",):
                raise TorchImportError(f"graph node '{node.name}' of kind {node.op} is not supported")
        mutations = {
            s.target: s.kind.name.lower()
            for s in sig.output_specs
            if s.kind in (OutputKind.BUFFER_MUTATION, OutputKind.USER_INPUT_MUTATION)
        }
        try:
            module = self.b.finish(outputs, out_names)
        except Exception as e:  # an importer bug rather than a model problem; say so
            raise TorchImportError(f"the imported module does not verify: {e}") from e
        return TorchImport(module, self.b.params, input_names, out_names, mutations)

    def value(self, v: Any) -> Value:
        """A tensor operand: weights become parameters of ``main`` on first use."""
        if isinstance(v, _Weight):
            return self.b.param(v.target, v.array())
        if isinstance(v, np.ndarray):
            return v
        if hasattr(v, "type"):
            return v
        raise TypeError(f"expected a tensor, got {type(v).__name__}")

    def check_supported(self, graph: Any) -> None:
        missing: dict[str, list[str]] = {}
        for node in graph.nodes:
            if node.op != "call_function":
                continue
            name = op_name(node.target)
            if node.target is operator.getitem or name in CONVERTERS or name in IGNORED:
                continue
            where = source_location(node)
            missing.setdefault(name, []).append(f"'{node.name}'" + (f" at {where}" if where else ""))
        if missing:
            parts = [
                f"{op}{' [' + REFUSED[op] + ']' if op in REFUSED else ''} ({'; '.join(nodes)})"
                for op, nodes in sorted(missing.items())
            ]
            raise TorchImportError(
                f"{sum(map(len, missing.values()))} node(s) use unsupported ATen operators: " + "; ".join(parts)
            )

    def convert(self, fx_node: Any) -> None:
        if fx_node.target is operator.getitem:
            seq, i = fx_node.args
            got = self.env[seq.name][i]
            if got is None:
                raise TorchImportError(
                    f"getitem node '{fx_node.name}' ({source_location(fx_node)}): output {i} of "
                    f"'{seq.name}' is not supported (only the first result of this op is imported)"
                )
            self.env[fx_node.name] = got
            return
        name = op_name(fx_node.target)
        if name in IGNORED:
            self.env[fx_node.name] = None
            return
        node = Node(self, fx_node)
        try:
            out = CONVERTERS[name](self, node)
        except TorchImportError:
            raise
        except (RelayTypeError, ValueError, IndexError, KeyError, TypeError) as e:
            raise node.fail(str(e)) from e
        self.env[fx_node.name] = out


class _Weight:
    """A parameter, buffer or constant of the program, made a parameter of ``main`` when an op
    uses it at run time (converters may read its value instead, e.g. a shape)."""

    def __init__(self, target: str, tensor: Any):
        self.target = target
        self.tensor = tensor

    def array(self) -> np.ndarray:
        t = self.tensor.detach()
        if str(t.dtype) == "torch.bfloat16":
            import ml_dtypes

            return t.view(__import__("torch").int16).numpy().view(ml_dtypes.bfloat16)
        return t.contiguous().numpy()

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.tensor.shape)


def _flatten(v: Any) -> list[Any]:
    if isinstance(v, list | tuple):
        return [x for item in v for x in _flatten(item)]
    return [v]
