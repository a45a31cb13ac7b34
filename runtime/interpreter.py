"""The reference interpreter: run a relay module op by op with the numpy kernels.

It is built on xDSL's interpreter framework. ``RelayFunctions`` gives every relay op one
generic implementation (look up ``KERNELS[op.RELAY_NAME]``, call it with ``op.attrs``),
``relay.constant`` yields a read-only numpy view of its data, and ``func.call`` runs the
callee, whether a private primitive (fused) function or a global one. Values are numpy
arrays; multi-result ops (``nn.batch_norm``, ``split``...) and functions with several results
give one array per result.

The interpreter is the project's definition of what a module *means*: passes are checked
against it (``xrelay.testing.semantics.check_semantics``), so it is strict. After every op it
checks each result array against the result's declared type: a kernel that returns the wrong
shape or dtype fails at once, naming the op, instead of corrupting later results.

>>> import numpy as np
>>> from xdsl.parser import Parser
>>> from xrelay.dialects import make_context
>>> mod = Parser(make_context(), '''
... func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
...   %y = relay.add %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
...   func.return %y : tensor<2xf32>
... }''').parse_module()
>>> run(mod, {"x": np.array([1.0, 2.0], "float32")})
[array([2., 4.], dtype=float32)]

**Parameter names.** The entry function's parameters are matched to inputs by the SSA name
hints of its block arguments (``%x`` is named ``x``); ``arg_attrs`` are not consulted. A
parameter without a name hint (``%0``) is named ``arg<i>`` after its position.

Errors are ``RunError`` (a ``ValueError``) with one clear message: a missing or unknown input,
a wrong shape or dtype, an op without an implementation, a kernel that raised or returned the
wrong type. Errors inside a called function say where the call came from.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects import func, scf, tensor
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    OpImplResult,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_callable,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Attribute, Operation

from xrelay.dialects import module_op
from xrelay.dialects.adt import (
    AdtCallOp,
    ApplyOp,
    ClosureOp,
    ConstructOp,
    MatchOp,
    PatternAttr,
    TypeDefOp,
)
from xrelay.dialects.adt import YieldOp as AdtYieldOp
from xrelay.dialects.dyn import DYN_OPS
from xrelay.dialects.qnn import QNN_OPS
from xrelay.dialects.ref import RefCreateOp, RefReadOp, RefWriteOp
from xrelay.dialects.relay import RELAY_OPS, ConstantOp, RelayOp, dtype_of, numpy_dtype, shape_of
from xrelay.dialects.relay.base import is_multi_result as _is_multi_result
from xrelay.dialects.relay.dtypes import DTYPES, byte_size, element_type, from_stored, too_large
from xrelay.dialects.relay.loop import LoopOp, LoopYieldOp
from xrelay.dialects.relay.ops import RelayAllocStorageOp, RelayKillOp
from xrelay.dialects.relay.strings import (
    StringConcatOp,
    StringConstantOp,
    StringEqualOp,
    StringNormalizeOp,
    StringRegexFullMatchOp,
    StringSplitOp,
    is_string_tensor,
)
from xrelay.error import TVMError
from xrelay.kernels import KERNELS
from xrelay.runtime.parallel import blas_single_thread

__all__ = [
    "RelayFunctions",
    "RelayInterpreter",
    "RunError",
    "Runner",
    "bind_inputs",
    "entry_function",
    "parameter_specs",
    "random_array",
    "random_inputs",
    "run",
]


_ResultSpec = tuple[tuple[int | None, ...], np.dtype, TensorType]
"""What a result must be: its shape (None for dynamic dims), numpy dtype, and type."""


class RunError(ValueError, TVMError):
    """Interpreting a module failed; the message names the input or op at fault."""

    def add_frame(self, where: str) -> None:
        """Record that the failing code was reached through the call ``where``."""
        self.args = (f"{self.args[0]}\n  called from {where}", *self.args[1:])


# --------------------------------------------------------------------------------------------
# Describing ops and types in messages
# --------------------------------------------------------------------------------------------


def _enclosing_function(op: Operation) -> func.FuncOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return parent


def describe_op(op: Operation) -> str:
    """Where ``op`` is, for messages: ``@main, op #3 (%y = relay.nn.conv2d)``.

    Ops are numbered from 1 in their block's order; only called on error paths, since finding
    the position walks the block.
    """
    fn = _enclosing_function(op)
    where = f"@{fn.sym_name.data}" if fn is not None else "<no function>"
    block = op.parent_block()
    if block is not None:
        for index, other in enumerate(block.ops, start=1):
            if other is op:
                where += f", op #{index}"
                break
    names = [f"%{r.name_hint}" for r in op.results if r.name_hint]
    text = f"{', '.join(names)} = {op.name}" if names else op.name
    return f"{where} ({text})"


def _describe_array(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"{value.dtype} array of shape {value.shape}"
    return f"{type(value).__name__} (not a numpy array)"


def _matches(value: Any, spec: _ResultSpec) -> bool:
    shape, dtype, _ = spec
    if not isinstance(value, np.ndarray) or value.dtype != dtype or value.ndim != len(shape):
        return False
    return all(d is None or d == n for d, n in zip(shape, value.shape))


# --------------------------------------------------------------------------------------------
# Implementations
# --------------------------------------------------------------------------------------------


class RelayFunctions(InterpreterFunctions):
    """xDSL interpreter functions for relay ops, ``relay.constant`` and ``func``.

    Every class in ``RELAY_OPS`` gets the same implementation, ``run_relay_op``, registered in
    a loop below this class. Per-op data (kernel, attributes, constant arrays) is computed on
    first use and cached, so an instance must not outlive changes to the module it ran.
    """

    def __init__(self) -> None:
        self._plans: dict[Operation, tuple[Callable[..., Any], dict[str, Any], bool]] = {}
        self._constants: dict[Operation, np.ndarray] = {}
        self._symbols: dict[ModuleOp, dict[str, func.FuncOp]] = {}

    def run_relay_op(
        self, interpreter: Interpreter, op: RelayOp, args: PythonValues
    ) -> PythonValues:
        plan = self._plans.get(op)
        if plan is None:
            plan = self._plan(op)
        kernel, attrs, multi = plan
        result = kernel(*args, **attrs)
        if multi:
            return tuple(result)
        return (result,)

    def _plan(self, op: RelayOp) -> tuple[Callable[..., Any], dict[str, Any], bool]:

        kernel = KERNELS.get(op.RELAY_NAME)
        if kernel is None:
            raise RunError(f"{describe_op(op)}: no numpy kernel implements {op.name}")
        plan = (kernel, op.attrs, _is_multi_result(type(op)))
        self._plans[op] = plan
        return plan

    @impl(ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: ConstantOp, args: PythonValues
    ) -> PythonValues:
        value = self._constants.get(op)
        if value is None:
            value = self._constants[op] = op.numpy()
        return (value,)

    @impl(func.CallOp)
    def run_call(
        self, interpreter: Interpreter, op: func.CallOp, args: PythonValues
    ) -> PythonValues:
        name = op.callee.root_reference.data
        callee = self._lookup(interpreter.module, name)
        if callee is None:
            raise RunError(f"{describe_op(op)}: calls @{name}, which the module does not define")
        if not callee.body.blocks or callee.body.blocks.first is None:
            raise RunError(
                f"{describe_op(op)}: calls @{name}, which is only declared (no body); "
                "the interpreter cannot run external functions"
            )
        n_params = len(callee.body.blocks.first.args)
        if n_params != len(args):
            raise RunError(
                f"{describe_op(op)}: passes {len(args)} argument(s) to @{name}, "
                f"which takes {n_params}"
            )
        return interpreter.call_op(callee, args)

    def _lookup(self, module: ModuleOp, name: str) -> func.FuncOp | None:
        table = self._symbols.get(module)
        if table is None:
            table = self._symbols[module] = {
                f.sym_name.data: f for f in module.walk() if isinstance(f, func.FuncOp)
            }
        return table.get(name)

    @impl_callable(func.FuncOp)
    def call_func(
        self, interpreter: Interpreter, op: func.FuncOp, args: PythonValues
    ) -> PythonValues:
        return interpreter.run_ssacfg_region(op.body, args, op.sym_name.data)

    @impl_terminator(func.ReturnOp)
    def run_return(
        self, interpreter: Interpreter, op: func.ReturnOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    # Relay's unification of relay.Any() with a static dimension at a call (xrelay.relay.module)
    @impl(tensor.CastOp)
    def run_tensor_cast(
        self, interpreter: Interpreter, op: tensor.CastOp, args: PythonValues
    ) -> PythonValues:
        want = op.dest.type.get_shape()
        got = np.shape(args[0])
        if len(want) != len(got) or any(w >= 0 and w != g for w, g in zip(want, got)):
            raise RunError(f"{describe_op(op)}: a value of shape {got} does not fit {op.dest.type}")
        return (args[0],)

    # Relay's If: scf.if on the element of a bool scalar tensor (xrelay.relay.module)
    @impl(tensor.ExtractOp)
    def run_extract(
        self, interpreter: Interpreter, op: tensor.ExtractOp, args: PythonValues
    ) -> PythonValues:
        index = tuple(int(i) for i in args[1:])
        return (np.asarray(args[0])[index].item(),)

    @impl(scf.IfOp)
    def run_if(self, interpreter: Interpreter, op: scf.IfOp, args: PythonValues) -> PythonValues:
        region = op.true_region if args[0] else op.false_region
        return interpreter.run_ssacfg_region(region, (), "if")

    @impl_terminator(scf.YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: scf.YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    # ONNX's Loop (relay.loop): the body runs while i < trip count and the condition holds
    @impl(LoopOp)
    def run_loop(self, interpreter: Interpreter, op: LoopOp, args: PythonValues) -> PythonValues:
        trip, going = int(np.asarray(args[0])), bool(np.asarray(args[1]))
        carried = tuple(args[2:])
        n = op.n_carried
        steps: list[list[np.ndarray]] = [[] for _ in range(len(op.res) - n)]
        i = 0
        while i < trip and going:
            outs = interpreter.run_ssacfg_region(
                op.body, (np.array(i, np.int64), np.array(going), *carried), "loop"
            )
            going, carried = bool(np.asarray(outs[0])), tuple(outs[1 : 1 + n])
            for k, v in enumerate(outs[1 + n :]):
                steps[k].append(v)
            i += 1
        scans = []
        for k, r in enumerate(op.res[n:]):
            if steps[k]:
                if len({np.shape(v) for v in steps[k]}) != 1:
                    raise RunError(
                        f"{describe_op(op)}: scan output {k} has elements of different shapes "
                        f"{sorted({np.shape(v) for v in steps[k]})} (they are stacked)"
                    )
                scans.append(np.stack(steps[k]))
            else:  # no iteration: zero elements of the yielded shape (dynamic dims as 0)
                t = r.type
                shape = [0] + [max(d, 0) for d in t.get_shape()[1:]]
                scans.append(np.zeros(shape, numpy_dtype(dtype_of(t))))
        return (*carried, *scans)

    @impl_terminator(LoopYieldOp)
    def run_loop_yield(
        self, interpreter: Interpreter, op: LoopYieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    # Tensors of strings (dialects/relay/strings.py): object arrays of str
    @impl(StringConstantOp)
    def run_string_constant(self, interpreter: Interpreter, op: StringConstantOp, args: PythonValues) -> PythonValues:
        out = np.empty(len(op.value.data), dtype=object)
        out[:] = [x.data for x in op.value.data]
        return (out.reshape(op.res.type.get_shape()),)

    @impl(StringEqualOp)
    def run_string_equal(self, interpreter: Interpreter, op: StringEqualOp, args: PythonValues) -> PythonValues:
        a, b = np.broadcast_arrays(*args)
        return (np.frompyfunc(operator.eq, 2, 1)(a, b).astype(np.bool_).reshape(a.shape),)

    @impl(StringConcatOp)
    def run_string_concat(self, interpreter: Interpreter, op: StringConcatOp, args: PythonValues) -> PythonValues:
        a, b = np.broadcast_arrays(*args)
        out = np.empty(a.shape, dtype=object)
        out[...] = np.frompyfunc(operator.add, 2, 1)(a, b)
        return (out,)

    @impl(StringRegexFullMatchOp)
    def run_string_regex_full_match(
        self, interpreter: Interpreter, op: StringRegexFullMatchOp, args: PythonValues
    ) -> PythonValues:
        pattern = re.compile(op.pattern.data)
        return (np.array([pattern.fullmatch(x) is not None for x in args[0].flat], np.bool_).reshape(args[0].shape),)

    @impl(StringSplitOp)
    def run_string_split(self, interpreter: Interpreter, op: StringSplitOp, args: PythonValues) -> PythonValues:
        x = args[0]
        sep = op.delimiter.data if op.delimiter is not None and op.delimiter.data else None
        limit = op.maxsplit.value.data if op.maxsplit is not None else -1
        # Python's str.split is ONNX's: runs of whitespace without a delimiter, every one with
        parts = [s.split(sep, limit) if sep is not None else s.split(None, limit) for s in x.flat]
        width = max((len(p) for p in parts), default=0)
        pieces = np.full((len(parts), width), "", dtype=object)
        for k, p in enumerate(parts):
            pieces[k, : len(p)] = p
        counts = np.array([len(p) for p in parts], np.int64)
        return pieces.reshape(*x.shape, width), counts.reshape(x.shape)

    @impl(StringNormalizeOp)
    def run_string_normalize(self, interpreter: Interpreter, op: StringNormalizeOp, args: PythonValues) -> PythonValues:
        x = args[0]
        words = [w.data for w in op.stopwords.data]
        if op.is_case_sensitive.value.data:
            kept = [s for s in x.flat if s not in words]
        else:
            folded = {w.casefold() for w in words}
            kept = [s for s in x.flat if s.casefold() not in folded]
        action = op.case_change_action.data
        if action == "LOWER":
            kept = [s.lower() for s in kept]
        elif action == "UPPER":
            kept = [s.upper() for s in kept]
        out = np.array(kept or [""], dtype=object)
        return (out if x.ndim == 1 else out.reshape(1, -1),)

    # Relay's references (the ref dialect): a reference is a mutable box
    @impl(RefCreateOp)
    def run_ref_create(
        self, interpreter: Interpreter, op: RefCreateOp, args: PythonValues
    ) -> PythonValues:
        return (Reference(args[0]),)

    @impl(RefReadOp)
    def run_ref_read(self, interpreter: Interpreter, op: RefReadOp, args: PythonValues) -> PythonValues:
        return (args[0].value,)

    @impl(RefWriteOp)
    def run_ref_write(self, interpreter: Interpreter, op: RefWriteOp, args: PythonValues) -> PythonValues:
        args[0].value = args[1]
        return ()

    @impl(RelayAllocStorageOp)
    def run_memory_alloc_storage(
        self, interpreter: Interpreter, op: RelayAllocStorageOp, args: PythonValues
    ) -> PythonValues:
        size, alignment = int(np.asarray(args[0])), int(np.asarray(args[2]))
        if size < 0 or alignment <= 0 or alignment & (alignment - 1):
            raise RunError(
                f"{describe_op(op)}: size {size} must be >= 0 and alignment {alignment} a power of two"
            )
        if (message := too_large("relay.memory.alloc_storage", size)) is not None:
            raise RunError(message)
        return (np.zeros(size, dtype=np.uint8),)  # Relay's Storage: the bytes, unused here

    @impl(RelayKillOp)
    def run_memory_kill(self, interpreter: Interpreter, op: RelayKillOp, args: PythonValues) -> PythonValues:
        return ()  # Python frees the value once nothing refers to it


    # Relay's algebraic data types (the adt dialect): a value is its constructor and fields
    @impl(ConstructOp)
    def run_construct(self, interpreter: Interpreter, op: ConstructOp, args: PythonValues) -> PythonValues:
        tdef = _type_def(op, op.type_name)
        names = [c for c, _ in tdef.constructors]
        tag = names.index(op.ctor_name)
        return (ConstructorValue(tag, list(args), _ConstructorRef(op.type_name, op.ctor_name, tag)),)

    @impl(MatchOp)
    def run_match(self, interpreter: Interpreter, op: MatchOp, args: PythonValues) -> PythonValues:
        for pattern, region in zip(op.patterns.data, op.clauses):
            bound = _bind(pattern.tree, args[0])
            if bound is not None:
                return interpreter.run_ssacfg_region(region, tuple(bound), "match")
        raise RunError(
            f"{describe_op(op)}: no clause of the match fits the value {args[0]!r} (Relay's match error)"
        )

    @impl_terminator(AdtYieldOp)
    def run_adt_yield(
        self, interpreter: Interpreter, op: AdtYieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    @impl(AdtCallOp)
    def run_adt_call(self, interpreter: Interpreter, op: AdtCallOp, args: PythonValues) -> PythonValues:
        name = op.callee.root_reference.data
        callee = self._lookup(interpreter.module, name)
        if callee is None:
            raise RunError(f"{describe_op(op)}: calls @{name}, which the module does not define")
        return interpreter.call_op(callee, args)

    @impl(ClosureOp)
    def run_closure(self, interpreter: Interpreter, op: ClosureOp, args: PythonValues) -> PythonValues:
        name = op.callee.root_reference.data
        callee = self._lookup(interpreter.module, name)
        if callee is None:
            raise RunError(f"{describe_op(op)}: makes a closure of @{name}, which the module does not define")
        return (Closure(callee, tuple(args)),)

    @impl(ApplyOp)
    def run_apply(self, interpreter: Interpreter, op: ApplyOp, args: PythonValues) -> PythonValues:
        fn, *rest = args
        if not isinstance(fn, Closure):
            raise RunError(f"{describe_op(op)}: applies {type(fn).__name__}, which is not a function value")
        return interpreter.call_op(fn.func, (*rest, *fn.captured))


class Closure:
    """A function value (``adt.closure``), as Relay's ``Closure``: the function and the values it
    captured, passed after the arguments when it is applied."""

    def __init__(self, func: Any, captured: tuple[Any, ...]):
        self.func, self.captured = func, captured

    def __repr__(self) -> str:
        return f"Closure(@{self.func.sym_name.data}, {len(self.captured)} captured)"


def _type_def(op: Any, name: str) -> TypeDefOp:
    top = op
    while top.parent_op() is not None:
        top = top.parent_op()
    for o in top.body.block.ops:
        if isinstance(o, TypeDefOp) and o.sym_name.data == name:
            return o
    raise RunError(f"{describe_op(op)}: no type definition @{name}")


def _bind(pattern: Any, value: Any) -> list[Any] | None:
    """The values pattern ``pattern`` binds in ``value`` (left to right), None if it does not fit."""
    from xdsl.dialects.builtin import ArrayAttr, StringAttr, SymbolRefAttr

    if isinstance(pattern, PatternAttr):
        pattern = pattern.tree
    if isinstance(pattern, StringAttr):
        return [value] if pattern.data == "var" else []
    assert isinstance(pattern, ArrayAttr)
    items = pattern.data
    if items and isinstance(items[0], SymbolRefAttr):
        if not isinstance(value, ConstructorValue) or value.constructor.name_hint != items[0].root_reference.data:
            return None
        out: list[Any] = []
        for sub, field in zip(items[1:], value.fields):
            got = _bind(sub, field)
            if got is None:
                return None
            out += got
        return out
    return None


class _ConstructorRef:
    """The constructor a run-time value was built by (its type's and its own name, its tag)."""

    __slots__ = ("name_hint", "tag", "type_name")

    def __init__(self, type_name: str, name_hint: str, tag: int):
        self.type_name, self.name_hint, self.tag = type_name, name_hint, tag

    def __repr__(self) -> str:
        return f"{self.type_name}::{self.name_hint}"


class ConstructorValue:
    """The value of an ADT constructor (``adt.construct``), as Relay's ``ConstructorValue``:
    ``tag`` is the constructor's index in its type definition, ``fields`` its field values."""

    __slots__ = ("constructor", "fields", "tag")

    def __init__(self, tag: int, fields: list[Any], constructor: Any):
        self.tag, self.fields, self.constructor = tag, list(fields), constructor

    def __repr__(self) -> str:
        name = getattr(self.constructor, "name_hint", self.tag)
        return f"{name}({', '.join(map(repr, self.fields))})" if self.fields else str(name)


class Reference:
    """The value of a Relay reference (``ref.create``): a mutable box; ``ref.write`` replaces
    ``value``, every copy of the reference sees it (Relay's ``RefValue``)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __repr__(self) -> str:
        return f"Reference({self.value!r})"


def _relay_impl(op_type: type[RelayOp]) -> Any:
    @impl(op_type)
    def run(self: RelayFunctions, interpreter: Interpreter, op: RelayOp, args: PythonValues):
        return self.run_relay_op(interpreter, op, args)

    run.__name__ = "run_" + op_type.RELAY_NAME.replace(".", "_")
    return run


# One implementation per op class (xDSL dispatches on the exact class, not on RelayOp);
# they are attached before ``register_impls`` collects the class's implementations.
for _cls in (*RELAY_OPS.values(), *QNN_OPS.values(), *DYN_OPS.values()):
    if _cls in (RelayAllocStorageOp, RelayKillOp):
        continue  # run above: no kernel, no tensor result
    _fn = _relay_impl(_cls)
    setattr(RelayFunctions, _fn.__name__, _fn)
register_impls(RelayFunctions)
del _cls, _fn


class RelayInterpreter(Interpreter):
    """xDSL's ``Interpreter`` with relay's error reporting and result checks.

    ``_run_op`` is replaced for two reasons: upstream attaches a generic print of the whole
    module to every error (minutes for a model with megabytes of weights), and every result
    is checked here against its declared type, whatever dialect the op belongs to.
    """

    def __init__(self, module: ModuleOp, listeners: Sequence[Interpreter.Listener] = ()):
        super().__init__(module, listeners=tuple(listeners))
        self.register_implementations(RelayFunctions())
        # (type, numpy dtype) of each op's results, or None for non-tensor results.
        self._result_specs: dict[Operation, list[_ResultSpec | None]] = {}

    def _run_op(self, op: Operation, inputs: PythonValues) -> OpImplResult:
        for listener in self.listeners:
            listener.will_interpret_op(op, inputs)
        entry = self._impls._impl_dict.get(type(op))
        if entry is None:
            raise RunError(
                f"{describe_op(op)}: no implementation for op '{op.name}' "
                "(the interpreter runs relay, qnn, dyn, ref and adt ops, relay.constant, func.call/return, scf.if, relay.loop and relay.string ops)"
            )
        ft, fn = entry
        if op not in self._result_specs:
            self._result_specs[op] = self._specs_that_fit(op)
        try:
            result = fn(ft, self, op, inputs)
        except RunError as e:
            if isinstance(op, func.CallOp):
                e.add_frame(describe_op(op))
            raise
        except RecursionError:
            raise RunError(f"{describe_op(op)}: calls nest too deeply (recursion?)") from None
        except Exception as e:
            raise RunError(f"{describe_op(op)}: {op.name} failed: {type(e).__name__}: {e}") from e
        self._check_results(op, result.values)
        for listener in self.listeners:
            listener.did_interpret_op(op, result.values)
        return result

    def call_entry(self, function: func.FuncOp, args: Sequence[Any]) -> PythonValues:
        """Call ``function``; after an error, drop the scopes the failed call left behind."""
        root = self._ctx
        try:
            return self.call_op(function, tuple(args))
        finally:
            self._ctx = root

    @staticmethod
    def _specs_that_fit(op: Operation) -> list[_ResultSpec | None]:
        """The op's result specs, once its static result types are known to fit in memory:
        an op that makes a tensor larger than the machine (``relay.zeros``, ``tile``) is
        refused before its kernel allocates, naming the value and the bytes."""
        specs = [_spec_of(r.type) for r in op.results]
        for r, spec in zip(op.results, specs):
            if spec is not None and None not in spec[0]:
                refusal = too_large(f"{describe_op(op)}: result {r.index} ({spec[2]})", byte_size(spec[2]),
                                    len(spec[0]))  # fmt: skip
                if refusal:
                    raise RunError(refusal)
        return specs

    def _check_results(self, op: Operation, values: PythonValues) -> None:
        specs = self._result_specs.get(op)
        if specs is None:
            specs = self._result_specs[op] = [_spec_of(r.type) for r in op.results]
        if len(values) != len(specs):
            raise RunError(
                f"{describe_op(op)}: produced {len(values)} value(s) for {len(specs)} result(s)"
            )
        for index, (value, spec) in enumerate(zip(values, specs)):
            if spec is not None and not _matches(value, spec):
                raise RunError(self._mismatch_message(op, index, value, spec[2]))
            if spec is None and is_string_tensor(op.results[index].type):
                want = _spec_of_strings(op.results[index].type)
                if not _matches(value, want) or not all(isinstance(x, str) for x in value.flat):
                    raise RunError(self._mismatch_message(op, index, value, want[2]))

    @staticmethod
    def _mismatch_message(op: Operation, index: int, value: Any, ty: TensorType) -> str:
        where = describe_op(op)
        got = _describe_array(value)
        if isinstance(op, RelayOp):
            # An ill-typed op and a wrong kernel look alike here; tell them apart.
            try:
                inferred = op.inferred_types()
            except Exception as e:
                return f"{where}: the op is ill-typed: {e}"
            declared = [r.type for r in op.results]
            if inferred != declared:
                return (
                    f"{where}: the op is ill-typed: it declares result type(s) "
                    f"{', '.join(map(str, declared))} but its operands give "
                    f"{', '.join(map(str, inferred))}"
                )
            return (
                f"{where}: kernel bug: the kernel returned a {got} for result {index}, "
                f"whose type is {ty}"
            )
        if isinstance(op, func.CallOp):
            return (
                f"{where}: @{op.callee.root_reference.data} returned a {got} for result "
                f"{index}, but the call's result type is {ty}"
            )
        return f"{where}: result {index} is a {got}, but its type is {ty}"


def _spec_of_strings(ty: TensorType) -> _ResultSpec:
    return shape_of(ty), np.dtype(object), ty


def _spec_of(ty: Attribute) -> _ResultSpec | None:
    if not isinstance(ty, TensorType):
        return None
    try:
        return shape_of(ty), numpy_dtype(ty.element_type), ty
    except ValueError:  # an element type without numpy arrays: the kernels reject it themselves
        return None


# --------------------------------------------------------------------------------------------
# Entry functions and inputs
# --------------------------------------------------------------------------------------------


def entry_function(mod: Any, entry: str = "main") -> func.FuncOp:
    """The function ``@entry`` of ``mod``; a ``RunError`` listing the functions if absent."""
    module = module_op(mod)
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
    for f in funcs:
        if f.sym_name.data == entry:
            if not f.body.blocks:
                raise RunError(f"@{entry} is only declared (no body); nothing to run")
            return f
    known = ", ".join(f"@{f.sym_name.data}" for f in funcs) or "none"
    raise RunError(f"the module has no function @{entry}; functions: {known}")


def parameter_specs(mod: Any, entry: str = "main") -> list[tuple[str, Attribute]]:
    """(name, type) of each parameter of ``@entry``, named by SSA name hints (or ``arg<i>``)."""
    fn = entry_function(mod, entry)
    return [
        (arg.name_hint or f"arg{i}", arg.type) for i, arg in enumerate(fn.body.blocks.first.args)
    ]


def _format_names(names: Iterable[str]) -> str:
    return ", ".join(names) or "none"


def _coerce(name: str, value: Any, ty: Attribute) -> Any:
    """Check (or, for non-numpy values, convert) an input against its parameter's type."""
    if not isinstance(ty, TensorType):
        return value
    if is_string_tensor(ty):
        value = _strings(f"input '{name}'", value)
        return _check_shape(name, value, ty)
    want = _runnable_dtype(f"input '{name}'", ty)
    value = from_stored(value, ty.element_type)
    if not isinstance(value, np.ndarray):
        # Python scalars and lists get the declared dtype when numpy calls that safe-ish.
        arr = np.asarray(value)
        if arr.dtype == object or not np.can_cast(arr.dtype, want, casting="same_kind"):
            raise RunError(
                f"input '{name}': expected {ty} ({want}), got a {type(value).__name__} "
                f"of dtype {arr.dtype}"
            )
        value = arr.astype(want)
    if value.dtype != want:
        raise RunError(f"input '{name}' has dtype {value.dtype}, expected {want} (type {ty})")
    return _check_shape(name, value, ty)


def _check_shape(name: str, value: np.ndarray, ty: TensorType) -> np.ndarray:
    shape = shape_of(ty)
    if value.ndim != len(shape) or any(
        d is not None and d != n for d, n in zip(shape, value.shape)
    ):
        expected = tuple("?" if d is None else d for d in shape)
        raise RunError(f"input '{name}' has shape {value.shape}, expected {expected} (type {ty})")
    return value


def _strings(what: str, value: Any) -> np.ndarray:
    """A tensor of strings as the interpreter holds one: an object array of Python ``str``
    (numpy's fixed-width ``<U`` arrays and lists of str are converted; anything else refused)."""
    arr = np.asarray(value, dtype=object) if not isinstance(value, np.ndarray) else value
    if arr.dtype.kind == "U":
        arr = arr.astype(object)
    if arr.dtype != object or not all(isinstance(x, str) for x in arr.flat):
        raise RunError(f"{what}: expected strings (an array of str), got {_describe_array(arr)}")
    return arr


def bind_inputs(
    mod: Any,
    inputs: Mapping[str, Any] | Sequence[Any] | None = None,
    params: Mapping[str, Any] | None = None,
    entry: str = "main",
) -> list[Any]:
    """The arguments of ``@entry``, in order, from ``inputs`` and ``params``.

    ``inputs`` is a dict (by parameter name) or a sequence (the first parameters in order);
    an input naming no parameter is an error. ``params`` binds parameters by name too, but
    entries that name no parameter are ignored: a params file usually also holds the data of
    external constants. A parameter bound twice, or not at all, is an error.
    """
    specs = parameter_specs(mod, entry)
    names = [n for n, _ in specs]
    index_of: dict[str, int] = {}
    for i, n in enumerate(names):
        index_of.setdefault(n, i)
    bound: dict[int, tuple[str, Any]] = {}

    def bind(name: str, value: Any, source: str) -> None:
        i = index_of[name]
        if names.count(name) > 1:
            raise RunError(
                f"@{entry} has several parameters named '{name}'; pass the inputs as a list"
            )
        if i in bound:
            raise RunError(f"parameter '{name}' is given twice ({bound[i][0]} and {source})")
        bound[i] = (source, value)

    if inputs is None:
        inputs = {}
    if isinstance(inputs, Mapping):
        unknown = [k for k in inputs if k not in index_of]
        if unknown:
            raise RunError(
                f"unknown input(s) {_format_names(map(repr, unknown))}; "
                f"@{entry} takes: {_format_names(names)}"
            )
        for k, v in inputs.items():
            bind(k, v, "inputs")
    else:
        values = list(inputs)
        if len(values) > len(names):
            raise RunError(
                f"{len(values)} positional input(s) given, but @{entry} takes {len(names)}: "
                f"{_format_names(names)}"
            )
        for i, v in enumerate(values):
            bound[i] = ("inputs", v)
    for k, v in (params or {}).items():
        if k in index_of:
            bind(k, v, "params")
    missing = [names[i] for i in range(len(names)) if i not in bound]
    if missing:
        raise RunError(
            f"missing input(s) {_format_names(missing)}; @{entry} takes: "
            + ", ".join(f"{n}: {t}" for n, t in specs)
        )
    return [_coerce(names[i], bound[i][1], specs[i][1]) for i in range(len(names))]


def _runnable_dtype(name: str, ty: TensorType) -> np.dtype:
    """The numpy dtype the interpreter computes ``ty`` in; RunError for element types it has
    no arrays for (complex, f8E4M3, index, i7, ...); bfloat16, float8, int4, ... are ml_dtypes'."""
    try:
        return numpy_dtype(ty.element_type)
    except ValueError:
        raise RunError(
            f"{name}: element type {ty.element_type} cannot be run (the interpreter runs "
            f"{', '.join(str(element_type(d)) for d in DTYPES)})"
        ) from None


def random_array(ty: Attribute, rng: np.random.Generator, name: str = "value") -> np.ndarray:
    """A random array of a static tensor type.

    Floats are standard normal (rounded to the narrow float types; float8_e8m0fnu, which
    holds only powers of two, gets 2**-4 .. 2**4), signed integers uniform in [-5, 5], unsigned
    ones in [0, 10] (both cut to the range of int4/int2/uint4/uint2), bools fair coin flips:
    small integers keep index-like inputs meaningful.
    """
    if not isinstance(ty, TensorType):
        raise RunError(f"{name}: cannot make random data for non-tensor type {ty}")
    shape = shape_of(ty)
    if any(d is None for d in shape):
        raise RunError(f"{name}: type {ty} has dynamic dimensions; give this input explicitly")
    want = _runnable_dtype(name, ty)
    refusal = too_large(f"{name} ({ty})", int(np.prod(shape, dtype=object)) * want.itemsize, len(shape))
    if refusal:
        raise RunError(refusal)
    dtype = dtype_of(ty.element_type)
    if dtype == "float8_e8m0fnu":  # powers of two only
        return np.exp2(rng.integers(-4, 5, size=shape)).astype(want)
    if dtype.startswith(("float", "bfloat")):
        return rng.standard_normal(shape).astype(want)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    info = ml_dtypes.iinfo(want)  # int4/int2 have fewer values than [-5, 5]
    if dtype.startswith("uint"):
        return rng.integers(0, min(10, int(info.max)) + 1, size=shape).astype(want)
    return rng.integers(max(-5, int(info.min)), min(5, int(info.max)) + 1, size=shape).astype(want)


def random_inputs(
    mod: Any, seed: int = 0, entry: str = "main", skip: Iterable[str] = ()
) -> dict[str, np.ndarray]:
    """Random arrays for the parameters of ``@entry`` not named in ``skip`` (see random_array)."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise RunError(f"the random seed must be a non-negative integer, got {seed!r}")
    rng = np.random.default_rng(seed)
    skip = set(skip)
    return {
        name: random_array(ty, rng, f"input '{name}'")
        for name, ty in parameter_specs(mod, entry)
        if name not in skip
    }


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------


class Runner:
    """Runs one module repeatedly, keeping per-op data (kernels, attributes) between runs.

    The module must not change while a ``Runner`` uses it; make a new one after a pass.
    ``listeners`` are xDSL ``Interpreter.Listener`` objects (profilers, op counters).
    """

    def __init__(
        self, mod: Any, entry: str = "main", listeners: Sequence[Interpreter.Listener] = ()
    ):
        self.module = module_op(mod)
        self.entry = entry
        self.function = entry_function(self.module, entry)
        self.interpreter = RelayInterpreter(self.module, listeners)

    def run(
        self,
        inputs: Mapping[str, Any] | Sequence[Any] | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> list[np.ndarray]:
        """Run ``@entry`` on ``inputs``/``params`` (see ``bind_inputs``); one array per result."""
        args = bind_inputs(self.module, inputs, params, self.entry)
        outputs = list(self.interpreter.call_entry(self.function, args))
        return _own_outputs(outputs, args)


def _own_outputs(outputs: list[Any], args: Sequence[Any]) -> list[np.ndarray]:
    """Give the caller arrays it may modify: copy constants, inputs and repeated results."""
    owned: list[np.ndarray] = []
    for value in outputs:
        arr = value
        if isinstance(arr, np.ndarray) and (
            not arr.flags.writeable
            or any(np.may_share_memory(arr, a) for a in args if isinstance(a, np.ndarray))
            or any(np.may_share_memory(arr, o) for o in owned)
        ):
            arr = arr.copy()
        owned.append(arr)
    return owned


def run(
    mod: Any,
    inputs: Mapping[str, Any] | Sequence[Any] | None = None,
    params: Mapping[str, Any] | None = None,
    entry: str = "main",
) -> list[np.ndarray]:
    """Interpret ``@entry`` of ``mod`` and return its results as numpy arrays.

    ``mod`` is an xDSL ``ModuleOp`` or an object with ``.module`` (the Python API's IRModule).
    ``inputs`` binds the entry function's parameters by name (a dict; names are the SSA name
    hints of its arguments) or by position (a list); ``params`` binds further parameters by
    name and may hold entries for no parameter (they are ignored). numpy inputs must have the
    parameter's exact dtype and shape (``?`` dims match any size); Python scalars and lists
    are converted to the declared dtype when that is a same-kind cast.

    Raises ``RunError`` (a ``ValueError``) with a message naming the input or op at fault.
    The module is not verified first; an ill-typed op is reported when it runs.

    BLAS runs on one thread, as in the memory interpreter and the arena executor's steps
    (``blas_single_thread``): OpenBLAS's float32 products on AVX2 CPUs change in their last bits
    with its thread count, and the interpreters' results are compared bit for bit.
    """
    with blas_single_thread():
        return Runner(mod, entry).run(inputs, params)
