"""Relay expressions in Python, shaped like ``tvm.relay.expr``.

An expression is an immutable graph of ``Var``, ``Constant``, ``Call``, ``Tuple``,
``TupleGetItem``, ``Function``, ``GlobalVar`` and ``Op`` nodes. Sharing a node means sharing a
value: the lowering to the relay dialect (``xrelay.relay.module``) emits each node once.

Typing is eager: every expression gets its ``checked_type`` when it is built, using the op
class's ``infer_types`` from the relay dialect, so an ill-typed expression raises
``RelayTypeError`` at once, naming the op and the operand types. Types are the builtin
``TensorType`` (dynamic dims are ``?``), ``TupleType`` for tuples and multi-result ops, and
``FuncType`` for functions. The only expressions without a known type are those that depend
on a ``relay.var`` given no shape or on a ``GlobalVar`` not yet typed by a module; their type
is resolved when the function is added to an ``IRModule``.

Departures from Relay, on purpose:

* ``Constant.data`` is a read-only numpy array (Relay gives an NDArray).
* Node equality is identity, as in Relay; there is no structural hashing here.
* Tuples flatten when lowered: a tuple of tuples returned from a function becomes one flat
  list of results (docs/design.md, decision 3).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any as _AnyT

import numpy as np
from xdsl.dialects.builtin import FunctionType as _FunctionType
from xdsl.dialects.builtin import TensorType as _BuiltinTensorType
from xdsl.irdl import VarOperandDef, VarResultDef

from xrelay.dialects.adt import TypeVarType as _AdtVar
from xrelay.dialects.adt import ValueType as _AdtValue
from xrelay.dialects.adt import substitute as _adt_substitute
from xrelay.dialects.adt import type_vars as _adt_vars
from xrelay.dialects.adt import unify as _adt_unify
from xrelay.dialects.dyn import DYN_OPS
from xrelay.dialects.qnn import QNN_OPS
from xrelay.dialects.ref import RefType as _DialectRefType
from xrelay.dialects.relay import (
    RELAY_OPS,
    RelayOp,
    RelayTypeError,
    dtype_of,
    numpy_dtype,
    shape_of,
    tensor_type,
)
from xrelay.dialects.relay.dtypes import dtype_from_numpy
from xrelay.relay.text_printer import expr_astext
from xrelay.runtime.ndarray import NDArray

__all__ = [
    "Any",
    "Attrs",
    "Call",
    "Clause",
    "Constant",
    "Constructor",
    "Expr",
    "FuncType",
    "Function",
    "GlobalTypeVar",
    "GlobalVar",
    "If",
    "IncompleteType",
    "Let",
    "Match",
    "Op",
    "Pattern",
    "PatternConstructor",
    "PatternTuple",
    "PatternVar",
    "PatternWildcard",
    "RefCreate",
    "RefRead",
    "RefType",
    "RefWrite",
    "Tuple",
    "TupleGetItem",
    "TupleType",
    "TupleWrapper",
    "TensorType",
    "TypeCall",
    "TypeData",
    "TypeVar",
    "Var",
    "const",
    "scalar_type",
    "var",
]


as_module: Callable[[Expr], _AnyT] | None = None
"""An expression as an ``IRModule`` whose ``main`` is it (a non-function wrapped in a function of
its free variables): what ``astext`` and ``str`` print. ``xrelay.relay.module``, which builds on
this module, installs it when imported (importing it from here would be an import cycle)."""


# --------------------------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------------------------


class Any:
    """A dynamic dimension (Relay's ``relay.Any()``); printed ``?`` in tensor types."""

    def __repr__(self) -> str:
        return "?"


def _dims(shape: _AnyT) -> tuple[int | None, ...]:
    if shape is None:
        return ()
    if isinstance(shape, int | np.integer | Any):
        shape = (shape,)
    out: list[int | None] = []
    for d in shape:
        if d is None or isinstance(d, Any):
            out.append(None)
        elif isinstance(d, int | np.integer) and not isinstance(d, bool) and d >= 0:
            out.append(int(d))
        else:
            raise ValueError(f"invalid dimension {d!r} in shape {shape!r}")
    return tuple(out)


class _TensorTypeMeta(type):
    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, _BuiltinTensorType)


class TensorType(metaclass=_TensorTypeMeta):
    """``relay.TensorType(shape, dtype)``: builds a builtin ``tensor<...>`` type (dynamic dims
    as ``relay.Any()``); ``isinstance(t, relay.TensorType)`` accepts any builtin tensor type.
    Read shapes with ``xrelay.dialects.relay.shape_of`` (None for ``?``)."""

    def __new__(cls, shape: _AnyT = (), dtype: str = "float32") -> _AnyT:  # type: ignore[misc]
        return tensor_type(_dims(shape), dtype)


class TupleType:
    """The type of a tuple (and of a multi-result op such as ``nn.batch_norm``)."""

    __slots__ = ("fields",)

    def __init__(self, fields: Sequence[_AnyT]):
        self.fields = tuple(fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TupleType) and other.fields == self.fields

    def __hash__(self) -> int:
        return hash(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def __repr__(self) -> str:
        return "(" + ", ".join(_type_str(f) for f in self.fields) + ")"


class FuncType:
    """The type of a function: parameter types and return type; ``type_params`` are the type
    variables of a function with type parameters. Equality is up to renaming them
    (``fn[A](List[A]) -> A`` equals ``fn[a](List[a]) -> a``), as Relay's structural equality."""

    __slots__ = ("arg_types", "ret_type", "type_params")

    def __init__(
        self,
        arg_types: Sequence[_AnyT],
        ret_type: _AnyT,
        type_params: Sequence[_AnyT] | None = None,
        type_constraints: Sequence[_AnyT] | None = None,
    ):
        if type_constraints:
            raise RelayTypeError("FuncType: type constraints are not supported")
        self.arg_types = tuple(arg_types)
        self.ret_type = ret_type
        self.type_params = tuple(type_params or ())

    def _canonical(self) -> tuple[_AnyT, ...]:
        names: dict[str, _AnyT] = {}
        for t in (*self.arg_types, self.ret_type):
            if t is not None and not isinstance(t, TupleType | FuncType):
                for v in _adt_vars(t):
                    names.setdefault(v, _AdtVar(f"${len(names)}"))
        types = (*self.arg_types, self.ret_type)
        if not names:
            return types
        return tuple(
            t if t is None or isinstance(t, TupleType | FuncType) else _adt_substitute(t, names) for t in types
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FuncType) and other._canonical() == self._canonical()

    def __hash__(self) -> int:
        return hash(self._canonical())

    def __repr__(self) -> str:
        args = ", ".join(_type_str(t) for t in self.arg_types)
        return f"fn ({args}) -> {_type_str(self.ret_type)}"


def scalar_type(dtype: str) -> _AnyT:
    """``relay.scalar_type(dtype)``: the type of a scalar tensor, ``TensorType((), dtype)``."""
    return tensor_type((), dtype)


class _RefTypeMeta(type):
    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, _DialectRefType)


class RefType(metaclass=_RefTypeMeta):
    """``relay.RefType(value)``: the type of a reference holding a ``value`` (Relay's
    ``ref(T)``); builds the ref dialect's ``!ref.ref<T>``. A reference holds a tensor or a
    reference (a tuple is several values in xrelay's IR, decision 3, and has no one type)."""

    def __new__(cls, value: _AnyT) -> _AnyT:  # type: ignore[misc]
        return _ref_type(value, "RefType")


def _ref_type(value: _AnyT, what: str) -> _AnyT:
    if isinstance(value, TupleType | FuncType) or value is None:
        raise RelayTypeError(
            f"{what}: a reference holds a tensor or a reference, not {_type_str(value)}"
        )
    return _DialectRefType(value)


def _type_str(t: _AnyT) -> str:
    return "?" if t is None else str(t)


def ir_type(t: _AnyT) -> _AnyT:
    """The IR type of a value of Python type ``t``: a ``FuncType`` becomes the builtin
    ``FunctionType`` of a closure (tuples flattened: several parameters or results); other
    types are their own (a tuple has no one IR type: None)."""
    if isinstance(t, FuncType):
        ins = [x for a in t.arg_types for x in _flat_ir(a)]
        outs = _flat_ir(t.ret_type)
        return _FunctionType.from_lists(ins, outs)
    if isinstance(t, TupleType):
        return None
    return t


def _flat_ir(t: _AnyT) -> list[_AnyT]:
    if isinstance(t, TupleType):
        return [x for f in t.fields for x in _flat_ir(f)]
    if t is None:
        raise RelayTypeError("a function type with an unknown part has no IR type yet")
    return [ir_type(t)]


def py_type(t: _AnyT) -> _AnyT:
    """The Python type of an IR type: a ``FunctionType`` is a ``FuncType`` (several results a
    ``TupleType``)."""
    if isinstance(t, _FunctionType):
        outs = [py_type(o) for o in t.outputs.data]
        return FuncType([py_type(i) for i in t.inputs.data], outs[0] if len(outs) == 1 else TupleType(outs))
    return t


def _flat_tensor_types(t: _AnyT) -> list[_AnyT] | None:
    """The tensor types a value of type ``t`` lowers to, or None if unknown."""
    if t is None:
        return None
    if isinstance(t, TupleType):
        out: list[_AnyT] = []
        for f in t.fields:
            sub = _flat_tensor_types(f)
            if sub is None:
                return None
            out.extend(sub)
        return out
    if isinstance(t, FuncType):
        return [ir_type(t)]  # a closure (an op refuses it: it is not a tensor)
    return [t]


# --------------------------------------------------------------------------------------------
# Expressions
# --------------------------------------------------------------------------------------------


class Expr:
    """Base of every Relay expression; supports ``+ - * /`` and unary ``-`` like Relay."""

    _type: _AnyT = None
    _inferred = False  # read back from a module (see astext)

    @property
    def checked_type(self) -> _AnyT:
        """The inferred type; raises if it depends on something not yet typed."""
        if self._type is None:
            raise ValueError(
                f"the type of {self!r} is not known yet: it depends on a relay.var without "
                "a shape or on a GlobalVar that is not in a module"
            )
        return self._type

    @property
    def type_known(self) -> bool:
        return self._type is not None

    def _as_module(self) -> _AnyT:
        if as_module is None:
            raise RuntimeError("printing an expression needs xrelay.relay.module imported")
        return as_module(self)

    def astext(self, show_meta_data: bool = True, annotate: _AnyT = None) -> str:
        """Relay's text of this expression, as ``relay.Expr.astext``: a function prints as
        ``fn (...) {...}``, anything else as its body after ``free_var`` declarations of its free
        variables (``xrelay.parser.parse_expr`` reads both back). ``/* ty=... */`` comments are
        printed for expressions read from a module (``mod["main"]``, typed as after Relay's
        InferType) and not for expressions built in Python (as Relay's, untyped until
        InferType); ``annotate`` overrides."""

        if annotate is None:
            annotate = self._inferred
        typed = self._inferred or bool(annotate)
        return expr_astext(self._as_module().module, isinstance(self, Function), show_meta_data, bool(annotate), typed=typed)

    def __str__(self) -> str:
        # Relay's PrettyPrint: the text without the version line and the metadata section.
        # Printing must not raise, so an expression without a text form falls back to repr.

        try:
            module = self._as_module().module
            return expr_astext(module, isinstance(self, Function), False, self._inferred, header=False)
        except Exception:
            return repr(self)

    def astype(self, dtype: str) -> Call:
        """``cast(self, dtype)`` (Relay's ``Expr.astype``)."""
        return Call(Op.get("cast"), [self], {"dtype": dtype})

    # ---- arithmetic sugar ---------------------------------------------------------------

    def _binary(self, name: str, other: _AnyT, reverse: bool = False) -> Call:
        other = _to_expr(other, like=self)
        lhs, rhs = (other, self) if reverse else (self, other)
        return Call(Op.get(name), [lhs, rhs])

    def __add__(self, other: _AnyT) -> Call:
        return self._binary("add", other)

    def __radd__(self, other: _AnyT) -> Call:
        return self._binary("add", other, True)

    def __sub__(self, other: _AnyT) -> Call:
        return self._binary("subtract", other)

    def __rsub__(self, other: _AnyT) -> Call:
        return self._binary("subtract", other, True)

    def __mul__(self, other: _AnyT) -> Call:
        return self._binary("multiply", other)

    def __rmul__(self, other: _AnyT) -> Call:
        return self._binary("multiply", other, True)

    def __truediv__(self, other: _AnyT) -> Call:
        return self._binary("divide", other)

    def __rtruediv__(self, other: _AnyT) -> Call:
        return self._binary("divide", other, True)

    def __neg__(self) -> Call:
        return Call(Op.get("negative"), [self])

    # identity semantics, as Relay's ObjectRef
    __hash__ = object.__hash__

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other


class IncompleteType:
    """Relay's ``relay.IncompleteType()``: a type to be inferred. A variable annotated with it
    is a variable without a type; ``xrelay.relay.type_solver`` gives it one from its uses."""

    def __init__(self, kind: _AnyT = None):
        self.kind = kind

    def __repr__(self) -> str:
        return "?"


class Var(Expr):
    """A local variable: a function parameter (or a free variable until bound)."""

    def __init__(self, name_hint: str, type_annotation: _AnyT = None):
        if not isinstance(name_hint, str):
            raise TypeError(f"variable name must be a string, got {name_hint!r}")
        if isinstance(type_annotation, IncompleteType):
            type_annotation = None
        type_annotation = _adt_annotation(type_annotation)
        if type_annotation is not None and not isinstance(
            type_annotation, _BuiltinTensorType | TupleType | FuncType | _DialectRefType | _AdtValue | _AdtVar
        ):
            raise TypeError(f"unsupported type annotation {type_annotation!r}")
        self.name_hint = name_hint
        self.type_annotation = type_annotation
        self._type = type_annotation

    def __call__(self, *args: Expr) -> Call:
        """A call of the function this variable holds (``relay.Call(var, args)``)."""
        return Call(self, list(args))

    def __repr__(self) -> str:
        return f"Var({self.name_hint}, ty={_type_str(self._type)})"


class Constant(Expr):
    """A tensor constant; ``name`` is the parameter it was bound from, if any."""

    def __init__(self, data: np.ndarray, name: str | None = None, dtype: str | None = None):
        arr = np.asarray(data)
        if dtype is not None and arr.dtype != numpy_dtype(dtype):
            arr = arr.astype(numpy_dtype(dtype))
        dt = dtype or dtype_from_numpy(arr.dtype)
        self.data = arr.view(NDArray)  # numpy, with TVM's .numpy()
        self.name = name
        self._type = tensor_type(arr.shape, dt)

    @property
    def dtype(self) -> str:
        return dtype_of(self._type)

    def __repr__(self) -> str:
        label = f"@{self.name} " if self.name else ""
        return f"Constant({label}{_type_str(self._type)})"


class Op(Expr):
    """A reference to a relay op by name (``relay.op.get("nn.conv2d")``)."""

    _cache: dict[str, Op] = {}

    def __init__(self, name: str):
        ops = QNN_OPS if name.startswith("qnn.") else DYN_OPS if name.startswith("dyn.") else RELAY_OPS
        if name not in ops:
            close = [n for n in ops if n.split(".")[-1] == name.split(".")[-1]]
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ValueError(f"operator '{name}' is not a relay op{hint}")
        self.name = name
        self.op_class: type[RelayOp] = ops[name]

    @classmethod
    def get(cls, name: str) -> Op:
        """The (shared) Op object for ``name``."""
        op = cls._cache.get(name)
        if op is None:
            op = cls._cache[name] = cls(name)
        return op

    def __call__(self, *args: Expr, **attrs: _AnyT) -> Call:
        return Call(self, list(args), attrs)

    def __repr__(self) -> str:
        return f"Op({self.name})"


class Attrs(Mapping[str, _AnyT]):
    """Read-only attributes of a call or function; ``attrs["x"]`` and ``attrs.x`` both work."""

    __slots__ = ("_d",)

    def __init__(self, d: Mapping[str, _AnyT] | None = None):
        object.__setattr__(self, "_d", dict(d or {}))

    def __getitem__(self, key: str) -> _AnyT:
        return self._d[key]

    def __getattr__(self, key: str) -> _AnyT:
        try:
            return self._d[key]
        except KeyError:
            raise AttributeError(key) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k}={v!r}" for k, v in self._d.items()) + "}"


def _op_has_var_operands(cls: type[RelayOp]) -> bool:
    return any(isinstance(d, VarOperandDef) for _, d in cls.get_irdl_definition().operands)


def _op_returns_tuple(cls: type[RelayOp]) -> bool:
    results = cls.get_irdl_definition().results
    return len(results) != 1 or any(isinstance(d, VarResultDef) for _, d in results)


class Call(Expr):
    """A call of an op, a function literal, a ``GlobalVar`` or a function-typed value.

    For op calls ``attrs`` holds every Relay attribute (defaults filled, normalised), and the
    result type is inferred at once by the op's ``infer_types``.
    """

    def __init__(
        self,
        op: Expr,
        args: Sequence[Expr],
        attrs: Mapping[str, _AnyT] | None = None,
        type_args: _AnyT = None,
        span: _AnyT = None,
    ):
        if isinstance(op, str):
            op = Op.get(op)
        if not isinstance(op, Expr):
            raise TypeError(f"cannot call {op!r}")
        args = [a if isinstance(a, Expr) else _to_expr(a) for a in args]
        self.op = op
        self.args = tuple(args)
        self._raw_attrs = dict(attrs or {})
        self._full_attrs: dict[str, _AnyT] | None = None
        if isinstance(op, Op):
            self._type = self._infer_op_call(op)
            shown = self._full_attrs if self._full_attrs is not None else self._raw_attrs
            self.attrs = Attrs(shown)
        else:
            if attrs:
                raise TypeError("only op calls take attributes")
            self.attrs = Attrs()
            self._type = self._infer_fn_call(op)

    def _operand_types(self) -> list[_AnyT] | None:
        out: list[_AnyT] = []
        for a in self.args:
            sub = _flat_tensor_types(a._type)
            if sub is None:
                return None
            out.extend(sub)
        return out

    def _infer_op_call(self, op: Op) -> _AnyT:
        cls = op.op_class
        if not _op_has_var_operands(cls):
            for i, a in enumerate(self.args):
                if isinstance(a._type, TupleType):
                    raise RelayTypeError(
                        f"relay.{op.name}: argument {i} is a tuple {a._type}; "
                        "take an element with [i] first"
                    )
        in_types = self._operand_types()
        if in_types is None:
            return None  # resolved when lowered in a module
        for i, t in enumerate(in_types):
            if not isinstance(t, _BuiltinTensorType) and not cls.NON_TENSOR_OPERANDS:
                raise RelayTypeError(f"relay.{op.name}: operand {i} has type {t}, expected a tensor")
        cls.operand_groups([None] * len(in_types))  # arity check with Relay's message
        full = cls.complete_attrs(self._raw_attrs, in_types)
        results = cls.infer_types(in_types, full)
        self._full_attrs = full
        if _op_returns_tuple(cls):
            return TupleType(results)
        return results[0]

    def _infer_fn_call(self, callee: Expr) -> _AnyT:
        if isinstance(callee, Constructor):
            return callee.result_type(self.args)
        ft = callee._type
        if isinstance(ft, FuncType) and _polymorphic(ft):
            return _instantiate(callee, ft, self.args)
        if ft is None:
            return None
        if not isinstance(ft, FuncType):
            raise RelayTypeError(f"cannot call {callee!r} of non-function type {_type_str(ft)}")
        if len(ft.arg_types) != len(self.args):
            raise RelayTypeError(
                f"call of {_callee_name(callee)}: expects {len(ft.arg_types)} argument(s), "
                f"got {len(self.args)}"
            )
        for i, (want, a) in enumerate(zip(ft.arg_types, self.args)):
            if want is not None and a._type is not None and not unifies(want, a._type):
                raise RelayTypeError(
                    f"call of {_callee_name(callee)}: argument {i} has type {_type_str(a._type)} "
                    f"but the parameter expects {_type_str(want)}"
                )
        return ft.ret_type

    def __repr__(self) -> str:
        return f"Call({_callee_name(self.op)}, {len(self.args)} args, ty={_type_str(self._type)})"


def _polymorphic(ft: FuncType) -> bool:
    return any(True for t in (*ft.arg_types, ft.ret_type) for _ in _type_vars_of(t))


def _type_vars_of(t: _AnyT) -> list[str]:
    if t is None:
        return []
    if isinstance(t, TupleType):
        return [v for f in t.fields for v in _type_vars_of(f)]
    if isinstance(t, FuncType):
        return [v for a in (*t.arg_types, t.ret_type) for v in _type_vars_of(a)]
    return list(_adt_vars(t))


def _unify_py(want: _AnyT, got: _AnyT, subst: dict[str, _AnyT]) -> bool:
    """The dialect's unification on Python types (function types compared as closures')."""
    if isinstance(want, TupleType) or isinstance(got, TupleType):
        return (
            isinstance(want, TupleType) and isinstance(got, TupleType) and len(want.fields) == len(got.fields)
            and all(_unify_py(w, g, subst) for w, g in zip(want.fields, got.fields))
        )
    try:
        return _adt_unify(ir_type(want), ir_type(got), subst)
    except RelayTypeError:  # a function type with a part not known yet
        return True


def _substitute_py(t: _AnyT, subst: dict[str, _AnyT]) -> _AnyT:
    if isinstance(t, TupleType):
        return TupleType([_substitute_py(f, subst) for f in t.fields])
    if isinstance(t, FuncType):
        return FuncType([_substitute_py(a, subst) for a in t.arg_types], _substitute_py(t.ret_type, subst))
    return _adt_substitute(t, subst)


def _instantiate(callee: Expr, ft: FuncType, args: Sequence[Expr]) -> _AnyT:
    """The type of a call of a function with type parameters: its return type with the type
    variables the arguments bind (None while one is not known)."""
    if len(ft.arg_types) != len(args):
        raise RelayTypeError(
            f"call of {_callee_name(callee)}: expects {len(ft.arg_types)} argument(s), got {len(args)}"
        )
    subst: dict[str, _AnyT] = {}
    for i, (want, a) in enumerate(zip(ft.arg_types, args)):
        if a._type is not None and not _unify_py(want, a._type, subst):
            raise RelayTypeError(
                f"call of {_callee_name(callee)}: argument {i} has type {_type_str(a._type)} "
                f"but the parameter expects {_type_str(_substitute_py(want, subst))}"
            )
    ret = ft.ret_type
    if any(v not in subst for v in _type_vars_of(ret)):
        return None
    return py_type(_substitute_py(ret, subst))


def unifies(want: _AnyT, got: _AnyT) -> bool:
    """Relay's unification of an argument type with a parameter type: equal, or tensors of one
    dtype and rank whose every dimension is equal or dynamic (``relay.Any()``) on one side."""
    if want == got:
        return True
    if not isinstance(want, _BuiltinTensorType) or not isinstance(got, _BuiltinTensorType):
        return False
    a, b = want.get_shape(), got.get_shape()
    return (
        want.element_type == got.element_type
        and len(a) == len(b)
        and all(x == y or x < 0 or y < 0 for x, y in zip(a, b))
    )


def _callee_name(e: Expr) -> str:
    if isinstance(e, Op):
        return e.name
    if isinstance(e, GlobalVar):
        return "@" + e.name_hint
    if isinstance(e, Var):
        return "%" + e.name_hint
    if isinstance(e, Constructor):
        return e.name_hint
    return "a function literal"


class Tuple(Expr):
    """A tuple of values."""

    def __init__(self, fields: Sequence[Expr], span: _AnyT = None):
        self.fields = tuple(f if isinstance(f, Expr) else _to_expr(f) for f in fields)
        types = [f._type for f in self.fields]
        self._type = None if any(t is None for t in types) else TupleType(types)

    def __getitem__(self, i: int) -> Expr:
        return self.fields[i]

    def __len__(self) -> int:
        return len(self.fields)

    def astuple(self) -> Tuple:
        return self

    def __repr__(self) -> str:
        return f"Tuple({len(self.fields)} fields)"


class TupleGetItem(Expr):
    """Field ``index`` of a tuple-typed value (Relay's ``%0.1``)."""

    def __init__(self, tuple_value: Expr, index: int, span: _AnyT = None):
        if isinstance(tuple_value, TupleWrapper):
            tuple_value = tuple_value.tuple_value
        self.tuple_value = tuple_value
        self.index = int(index)
        t = tuple_value._type
        if t is None:
            self._type = None
            return
        if not isinstance(t, TupleType):
            raise RelayTypeError(f"TupleGetItem: {tuple_value!r} has type {t}, not a tuple type")
        if not -len(t.fields) <= self.index < len(t.fields):
            raise RelayTypeError(
                f"TupleGetItem: index {index} out of range for a tuple of {len(t.fields)} fields"
            )
        if self.index < 0:
            self.index += len(t.fields)
        self._type = t.fields[self.index]

    def __repr__(self) -> str:
        return f"TupleGetItem({self.tuple_value!r}, {self.index})"


class TupleWrapper:
    """A tuple-valued expression with known size, as returned by multi-result ops.

    Index it (``bn[0]``), unpack it (``y, mean, var = relay.nn.batch_norm(...)``) or get the
    expression itself with ``astuple()``.
    """

    def __init__(self, tuple_value: Expr, size: int):
        self.tuple_value = tuple_value
        self.size = size

    def astuple(self) -> Expr:
        return self.tuple_value

    def astext(self) -> str:
        return self.tuple_value.astext()

    def __getitem__(self, index: int) -> Expr:
        if not -self.size <= index < self.size:
            raise IndexError(f"tuple index {index} out of range for {self.size} fields")
        if isinstance(self.tuple_value, Tuple):
            return self.tuple_value.fields[index]
        return TupleGetItem(self.tuple_value, index % self.size)

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[Expr]:
        return (self[i] for i in range(self.size))

    def __repr__(self) -> str:
        return f"TupleWrapper({self.tuple_value!r}, {self.size})"


class GlobalVar(Expr):
    """A reference to a module-level function by name (``@name``)."""

    def __init__(self, name_hint: str, type_annot: _AnyT = None):
        self.name_hint = name_hint
        self._type = type_annot

    def __call__(self, *args: Expr) -> Call:
        return Call(self, list(args))

    def __repr__(self) -> str:
        return f"GlobalVar({self.name_hint})"


class Function(Expr):
    """A function literal ``fn (params) -> ret_type { body }`` with Relay attributes.

    Attributes are Relay's names (``Primitive``, ``Composite``, ``Inline``, ``used_memory``,
    ...); ``with_attr`` returns a copy with one more. A function literal that is called is
    outlined into a private ``func.func`` when lowered; its free variables become extra
    parameters. ``type_params`` are the ``TypeVar``s its signature uses (a function with type
    parameters, such as the Prelude's ``hd``, is instantiated per call).
    """

    type_params: tuple[_AnyT, ...] = ()

    def __init__(
        self,
        params: Sequence[Var],
        body: Expr,
        ret_type: _AnyT = None,
        type_params: _AnyT = None,
        attrs: Mapping[str, _AnyT] | None = None,
        span: _AnyT = None,
    ):
        params = list(params)
        for p in params:
            if not isinstance(p, Var):
                raise TypeError(f"function parameters must be relay.var, got {p!r}")
        if type_params:
            for tp in type_params:
                if not isinstance(tp, _AdtVar):
                    raise RelayTypeError(f"Function: type parameter {tp!r} is not a relay.TypeVar")
            self.type_params = tuple(type_params)
        if isinstance(body, TupleWrapper):
            body = body.astuple()
        if not isinstance(body, Expr):
            body = _to_expr(body)
        ret_type = _adt_annotation(ret_type)
        self.params = tuple(params)
        self.body = body
        self.attrs = Attrs(attrs)
        self._source_name: str | None = None  # the func.func this was rebuilt from, if any
        body_type = body._type
        if ret_type is not None and body_type is not None and ret_type != body_type:
            raise RelayTypeError(
                f"function body has type {_type_str(body_type)} but the return type is "
                f"annotated {_type_str(ret_type)}"
            )
        self.ret_type = ret_type if ret_type is not None else body_type
        arg_types = [p._type for p in self.params]
        self._type = FuncType(arg_types, self.ret_type) if self.ret_type is not None else None

    def with_attr(self, attr_key: str | Mapping[str, _AnyT], attr_value: _AnyT = None) -> Function:
        """A copy with ``attr_key`` set (or with every entry of a dict set)."""
        new_attrs = dict(self.attrs)
        if isinstance(attr_key, Mapping):
            new_attrs.update(attr_key)
        else:
            new_attrs[attr_key] = _plain_attr(attr_value)
        fn = Function.__new__(Function)
        fn.params, fn.body, fn.ret_type, fn._type = self.params, self.body, self.ret_type, self._type
        fn.attrs = Attrs(new_attrs)
        fn._source_name = self._source_name
        return fn

    def without_attr(self, attr_key: str) -> Function:
        new_attrs = {k: v for k, v in self.attrs.items() if k != attr_key}
        fn = self.with_attr(new_attrs)
        fn.attrs = Attrs(new_attrs)
        return fn

    def __call__(self, *args: Expr) -> Call:
        return Call(self, list(args))

    def __repr__(self) -> str:
        names = ", ".join("%" + p.name_hint for p in self.params)
        return f"Function(({names}), ty={_type_str(self._type)}, attrs={self.attrs!r})"


class Let(Expr):
    """``let %var = value; body``: in xrelay's SSA IR the value gets the variable's name (its
    SSA name hint) and the body uses it directly; the text printer shows it as a ``let``."""

    def __init__(self, variable: Var, value: Expr, body: Expr, span: _AnyT = None):
        if not isinstance(variable, Var):
            raise TypeError(f"let binds a relay.var, got {variable!r}")
        value = value.astuple() if isinstance(value, TupleWrapper) else _to_expr(value)
        body = body.astuple() if isinstance(body, TupleWrapper) else _to_expr(body)
        ann, vt = variable.type_annotation, value._type
        if ann is not None and vt is not None and ann != vt:
            raise RelayTypeError(
                f"let %{variable.name_hint}: the value has type {_type_str(vt)} but the variable "
                f"is annotated {_type_str(ann)}"
            )
        if variable._type is None and vt is not None:
            variable._type = vt
        self.var, self.value, self.body = variable, value, body
        self._type = body._type

    def __repr__(self) -> str:
        return f"Let(%{self.var.name_hint}, ty={_type_str(self._type)})"


class If(Expr):
    """``if (cond) { true_branch } else { false_branch }``; ``cond`` is a bool scalar tensor
    and both branches have one type (Relay's rule)."""

    def __init__(self, cond: Expr, true_branch: Expr, false_branch: Expr, span: _AnyT = None):
        cond, t, f = (_to_expr(e.astuple() if isinstance(e, TupleWrapper) else e) for e in (cond, true_branch, false_branch))
        ct = cond._type
        if ct is not None and (not isinstance(ct, _BuiltinTensorType) or shape_of(ct) != () or dtype_of(ct) != "bool"):
            raise RelayTypeError(f"If: the condition has type {_type_str(ct)}, expected a bool scalar")
        if t._type is not None and f._type is not None and t._type != f._type:
            raise RelayTypeError(
                f"If: the branches have different types: {_type_str(t._type)} and {_type_str(f._type)}"
            )
        self.cond, self.true_branch, self.false_branch = cond, t, f
        self._type = t._type if t._type is not None else f._type

    def __repr__(self) -> str:
        return f"If(ty={_type_str(self._type)})"


class RefCreate(Expr):
    """``ref(value)``: a new reference holding ``value`` (its type ``RefType(value type)``)."""

    def __init__(self, value: Expr, span: _AnyT = None):
        self.value = _to_expr(value)
        vt = self.value._type
        self._type = None if vt is None else _ref_type(vt, "RefCreate")

    def __repr__(self) -> str:
        return f"RefCreate(ty={_type_str(self._type)})"


def _held(ref: Expr, what: str) -> _AnyT:
    t = ref._type
    if t is None:
        return None
    if not isinstance(t, _DialectRefType):
        raise RelayTypeError(f"{what}: expected a reference, got a value of type {_type_str(t)}")
    return t.value


class RefRead(Expr):
    """``ref_read(ref)``: the value ``ref`` holds when this is evaluated."""

    def __init__(self, ref: Expr, span: _AnyT = None):
        self.ref = _to_expr(ref)
        self._type = _held(self.ref, "RefRead")

    def __repr__(self) -> str:
        return f"RefRead(ty={_type_str(self._type)})"


class RefWrite(Expr):
    """``ref_write(ref, value)``: store ``value`` in ``ref``; its value is ``()``."""

    def __init__(self, ref: Expr, value: Expr, span: _AnyT = None):
        self.ref, self.value = _to_expr(ref), _to_expr(value)
        held, vt = _held(self.ref, "RefWrite"), self.value._type
        if held is not None and vt is not None and held != vt:
            raise RelayTypeError(
                f"RefWrite: writing a value of type {_type_str(vt)} into a reference of {_type_str(held)}"
            )
        self._type = TupleType([])

    def __repr__(self) -> str:
        return "RefWrite()"


def _plain_attr(v: _AnyT) -> _AnyT:
    # tvm.tir.IntImm-like values (anything with an integer .value) become plain ints
    if hasattr(v, "value") and isinstance(v.value, int | np.integer):
        return int(v.value)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, list | tuple):
        return [_plain_attr(x) for x in v]
    return v


# --------------------------------------------------------------------------------------------
# Constructors
# --------------------------------------------------------------------------------------------


def var(
    name_hint: str,
    type_annotation: _AnyT = None,
    shape: _AnyT = None,
    dtype: str = "float32",
    span: _AnyT = None,
) -> Var:
    """A variable. Give its type by ``shape`` (+ ``dtype``) or ``type_annotation``.

    ``relay.var("x", shape=(1, relay.Any()), dtype="int8")``; as in Relay, a string second
    argument is a dtype (``relay.var("n", "int32")`` is a scalar).
    """
    if isinstance(type_annotation, str):
        type_annotation = TensorType((), type_annotation)
    if shape is not None:
        if type_annotation is not None:
            raise ValueError("give either shape or type_annotation, not both")
        type_annotation = TensorType(shape, dtype)
    return Var(name_hint, type_annotation)


_DEFAULT_NARROW = {np.dtype("float64"): "float32", np.dtype("int64"): "int32"}


def const(value: _AnyT, dtype: str | None = None, span: _AnyT = None) -> Constant:
    """A constant from a Python scalar, list or numpy array.

    Without ``dtype``, Python floats and float64 arrays become float32, Python ints and int64
    arrays int32, as in Relay.
    """
    if isinstance(value, Constant):
        return value
    if dtype is not None:

        arr = np.asarray(value, dtype=numpy_dtype(dtype))
        return Constant(arr, dtype=dtype)
    arr = np.asarray(value)
    if arr.dtype in _DEFAULT_NARROW:
        narrow = _DEFAULT_NARROW[arr.dtype]
        return Constant(arr.astype(narrow), dtype=narrow)
    return Constant(arr)


def _to_expr(value: _AnyT, like: Expr | None = None) -> Expr:
    """An Expr for ``value``; Python scalars take the dtype of ``like`` when it is known."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, TupleWrapper):
        return value.astuple()
    if isinstance(value, bool | int | float | np.number | np.bool_):
        t = like._type if like is not None else None
        if isinstance(t, _BuiltinTensorType):
            return const(value, dtype_of(t))
        return const(value)
    if isinstance(value, np.ndarray | list):
        return const(value)
    raise TypeError(f"cannot use {value!r} as a relay expression")


def shape_dims(t: _AnyT) -> tuple[int | None, ...]:
    """The shape of a tensor type, with None for dynamic dims."""
    return shape_of(t)


# --------------------------------------------------------------------------------------------
# Algebraic data types (the adt dialect, docs/design.md decision 9)
# --------------------------------------------------------------------------------------------


class _TypeVarMeta(type):
    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, _AdtVar)


class TypeVar(metaclass=_TypeVarMeta):
    """``relay.TypeVar("A")``: a type parameter (of a type definition or of a function);
    builds the adt dialect's ``!adt.var<"A">``."""

    def __new__(cls, name_hint: str, kind: _AnyT = None) -> _AnyT:  # type: ignore[misc]
        return _AdtVar(name_hint)


class GlobalTypeVar:
    """The name of a type definition (``List``); calling it with type arguments gives the type
    of its values, ``List(int32)`` is ``List[int32]`` (``!adt.value<@List, [tensor<i32>]>``)."""

    __slots__ = ("kind", "name_hint")

    def __init__(self, name_hint: str, kind: _AnyT = None):
        self.name_hint = name_hint
        self.kind = kind

    def __call__(self, *args: _AnyT) -> _AnyT:
        return _AdtValue(self.name_hint, list(args))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GlobalTypeVar) and other.name_hint == self.name_hint

    def __hash__(self) -> int:
        return hash(("GlobalTypeVar", self.name_hint))

    def __repr__(self) -> str:
        return f"GlobalTypeVar({self.name_hint})"


class _TypeCallMeta(type):
    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, _AdtValue)


class TypeCall(metaclass=_TypeCallMeta):
    """``relay.TypeCall(List, [int32])``: the type ``List[int32]``."""

    def __new__(cls, func: GlobalTypeVar, args: Sequence[_AnyT]) -> _AnyT:  # type: ignore[misc]
        return _AdtValue(func.name_hint, list(args))


def _adt_annotation(t: _AnyT) -> _AnyT:
    """A type annotation with a bare ``GlobalTypeVar`` (``nat``) as the type it names."""
    return _AdtValue(t.name_hint, []) if isinstance(t, GlobalTypeVar) else t


class Constructor(Expr):
    """A constructor of a type definition (``Cons``): calling it builds a value,
    ``Cons(h, t)``. ``inputs`` are its field types (over the definition's type variables),
    ``belong_to`` the definition's ``GlobalTypeVar``, ``tag`` its index in the definition."""

    def __init__(self, name_hint: str, inputs: Sequence[_AnyT], belong_to: GlobalTypeVar):
        self.name_hint = name_hint
        self.inputs = [_adt_annotation(t) for t in inputs]
        self.belong_to = belong_to
        self.tag = -1
        self.type_vars: list[_AnyT] = []  # the definition's, set by TypeData

    def __call__(self, *args: Expr) -> Call:
        return Call(self, list(args))

    def result_type(self, args: Sequence[Expr]) -> _AnyT:
        """The type of ``self(*args)`` (None while a type argument is not known); raises
        ``RelayTypeError`` when the arguments do not fit the fields."""
        if len(args) != len(self.inputs):
            raise RelayTypeError(
                f"constructor {self.name_hint} takes {len(self.inputs)} field(s), got {len(args)}"
            )
        subst: dict[str, _AnyT] = {}
        for i, (want, a) in enumerate(zip(self.inputs, args)):
            if a._type is None:
                continue
            if not _adt_unify(want, a._type, subst):
                raise RelayTypeError(
                    f"constructor {self.name_hint}: field {i} has type {_type_str(a._type)}, "
                    f"the constructor takes {_type_str(_adt_substitute(want, subst))}"
                )
        names = [v.var_name.data for v in self.type_vars]
        if any(n not in subst for n in names):
            return None
        return _AdtValue(self.belong_to.name_hint, [subst[n] for n in names])

    def __repr__(self) -> str:
        return f"Constructor({self.name_hint})"


class TypeData:
    """A type definition (Relay's ``type List[A] { Cons(A, List[A]), Nil }``): ``header``
    names it, ``type_vars`` are its parameters, ``constructors`` build its values."""

    def __init__(self, header: GlobalTypeVar, type_vars: Sequence[_AnyT], constructors: Sequence[Constructor]):
        self.header = header
        self.type_vars = list(type_vars)
        self.constructors = list(constructors)
        for i, c in enumerate(self.constructors):
            c.tag = i
            c.type_vars = self.type_vars
            c.belong_to = header

    def __repr__(self) -> str:
        return f"TypeData({self.header.name_hint}, {len(self.constructors)} constructors)"


class Pattern:
    """Base of the patterns of a ``match`` clause."""


class PatternWildcard(Pattern):
    """``_``: matches anything, binds nothing."""

    def __repr__(self) -> str:
        return "_"


class PatternVar(Pattern):
    """``%x``: matches anything and binds it to ``var``."""

    def __init__(self, var: Var):
        self.var = var

    def __repr__(self) -> str:
        return f"%{self.var.name_hint}"


class PatternConstructor(Pattern):
    """``Cons(p1, p2)``: matches a value built by ``constructor`` whose fields match."""

    def __init__(self, constructor: Constructor, patterns: Sequence[Pattern] | None = None):
        self.constructor = constructor
        self.patterns = list(patterns or [])
        if len(self.patterns) != len(constructor.inputs):
            raise RelayTypeError(
                f"pattern {constructor.name_hint}: the constructor has {len(constructor.inputs)} "
                f"field(s), the pattern {len(self.patterns)}"
            )

    def __repr__(self) -> str:
        inner = ", ".join(map(repr, self.patterns))
        return f"{self.constructor.name_hint}({inner})" if self.patterns else self.constructor.name_hint


class PatternTuple(Pattern):
    """``(p1, p2)``: matches a tuple whose fields match."""

    def __init__(self, patterns: Sequence[Pattern] | None = None):
        self.patterns = list(patterns or [])

    def __repr__(self) -> str:
        return "(" + ", ".join(map(repr, self.patterns)) + ")"


def pattern_variables(p: Pattern) -> list[Var]:
    """The variables ``p`` binds, left to right."""
    if isinstance(p, PatternVar):
        return [p.var]
    if isinstance(p, PatternConstructor | PatternTuple):
        return [v for q in p.patterns for v in pattern_variables(q)]
    return []


def _type_pattern(p: Pattern, t: _AnyT) -> None:
    """Give the variables of ``p`` their types when it matches a value of type ``t``."""
    if isinstance(p, PatternVar):
        if p.var._type is None and t is not None:
            p.var._type = t
    elif isinstance(p, PatternConstructor):
        c = p.constructor
        if isinstance(t, _AdtValue) and t.def_name != c.belong_to.name_hint:
            raise RelayTypeError(f"pattern {c.name_hint} (of {c.belong_to.name_hint}) on a value of type {t}")
        subst: dict[str, _AnyT] = {}
        if isinstance(t, _AdtValue):
            subst = {v.var_name.data: a for v, a in zip(c.type_vars, t.args.data)}
        for q, ft in zip(p.patterns, c.inputs):
            _type_pattern(q, _adt_substitute(ft, subst) if isinstance(t, _AdtValue) else None)
    elif isinstance(p, PatternTuple):
        fields = t.fields if isinstance(t, TupleType) else [None] * len(p.patterns)
        for q, ft in zip(p.patterns, fields):
            _type_pattern(q, ft)


class Clause:
    """One clause of a ``match``: ``lhs => rhs``."""

    def __init__(self, lhs: Pattern, rhs: Expr):
        self.lhs = lhs
        self.rhs = _to_expr(rhs)

    def __repr__(self) -> str:
        return f"Clause({self.lhs!r})"


class Match(Expr):
    """``match (data) { clauses }``: the first clause whose pattern fits ``data`` is taken;
    ``complete=False`` is Relay's ``match?``."""

    def __init__(self, data: Expr, clauses: Sequence[Clause], complete: bool = True, span: _AnyT = None):
        self.data = _to_expr(data)
        self.clauses = list(clauses)
        self.complete = complete
        if not self.clauses:
            raise RelayTypeError("Match: a match needs at least one clause")
        for c in self.clauses:
            _type_pattern(c.lhs, self.data._type)
        self._type = next((c.rhs._type for c in self.clauses if c.rhs._type is not None), None)

    def __repr__(self) -> str:
        return f"Match({len(self.clauses)} clauses, ty={_type_str(self._type)})"
