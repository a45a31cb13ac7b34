"""Relay's operator functions (``relay.add``, ``relay.reshape``, ...) with tvm.relay's signatures.

Each function builds a ``Call`` of the relay dialect op of the same name; the call's type is
inferred at once (see ``xrelay.relay.expr``). Parameters are tvm.relay's, in its order. An
attribute parameter defaults to ``DEFAULT``, the relay dialect's default for that attribute
(declared once, on the op class; ``@dialect_defaults`` shows it in the signature). Where
tvm.relay's Python default differs from the attribute's (for example ``nn.batch_matmul``'s
``transpose_b=True``), the function keeps tvm.relay's value, which is then printed.

Python scalars mixed with tensors (``relay.add(x, 1.0)``, ``x * 2``) become constants of the
tensor's dtype. Ops returning several values (``split``) return a ``TupleWrapper``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from xrelay.dialects.qnn import QNN_OPS
from xrelay.dialects.relay import RELAY_OPS, numpy_dtype
from xrelay.dialects.relay import dtype_of as _dtype_of
from xrelay.dialects.relay import shape_of as _shape_of
from xrelay.relay.expr import Call, Constant, Expr, Op, Tuple, TupleWrapper, _to_expr, const
from xrelay.transforms.to_mixed_precision import register_mixed_precision_conversion

__all__ = [
    "DEFAULT",
    "Op",
    "register_mixed_precision_conversion",
    "dialect_defaults",
    "get",
    "list_op_names",
]


class _DialectDefault:
    __slots__ = ()

    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT: Any = _DialectDefault()
"""The default of an attribute parameter: the relay dialect's default for that attribute."""

_F = TypeVar("_F", bound=Callable[..., Any])


def dialect_defaults(op_name: str) -> Callable[[_F], _F]:
    """Show op ``op_name``'s attribute defaults in the signature of an API function.

    Every parameter defaulting to ``DEFAULT`` must be an attribute of the op with a default
    (checked here, at import); ``help()`` and ``inspect.signature`` then show that default.
    """
    op_class = RELAY_OPS.get(op_name) or QNN_OPS[op_name]
    defaults = op_class.default_attrs()

    def wrap(fn: _F) -> _F:
        sig = inspect.signature(fn)
        params = []
        for p in sig.parameters.values():
            if p.default is DEFAULT:
                if p.name not in defaults:
                    raise TypeError(f"{fn.__name__}: relay.{op_name} has no attribute {p.name!r} with a default")
                p = p.replace(default=defaults[p.name])
            params.append(p)
        fn.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
        return fn

    return wrap


def get(name: str) -> Op:
    """The op named ``name`` (``"nn.conv2d"``); raises ValueError for an unknown name."""
    return Op.get(name)


def list_op_names() -> list[str]:
    """Every relay op name, sorted."""
    return sorted(RELAY_OPS)


def make_call(name: str, args: Sequence[Any], **attrs: Any) -> Call:
    """A call of relay op ``name``; attributes given as ``DEFAULT`` take the dialect's default."""
    return Call(Op.get(name), list(args), {k: v for k, v in attrs.items() if v is not DEFAULT})


_call = make_call


def _tensor_args(*args: Any) -> list[Expr]:
    """Convert scalars among ``args`` to constants of the dtype of the first typed Expr."""
    like = next((a for a in args if isinstance(a, Expr) and a.type_known), None)
    return [_to_expr(a, like=like) for a in args]


def _tuple_arg(data: Any) -> Expr:
    if isinstance(data, TupleWrapper):
        return data.astuple()
    if isinstance(data, list | tuple):
        return Tuple([_to_expr(d) for d in data])
    if isinstance(data, Expr):
        return data
    raise TypeError(f"expected a list or tuple of expressions, got {data!r}")


def _static(v: Any) -> Any:
    """A constant's values as a list (tvm.relay folds a Constant shape argument into the
    static op); anything else as given. An ``Expr`` left over selects the ``dyn.*`` op."""
    if isinstance(v, Constant):
        return np.asarray(v.data).tolist()
    return v


def _export(fn: Any) -> Any:
    __all__.append(fn.__name__)
    return fn


# ---- elementwise unary ------------------------------------------------------------------

_UNARY = (
    "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "negative", "abs", "erf", "floor",
    "ceil", "round", "copy", "zeros_like", "ones_like",
)  # fmt: skip


def _make_unary(name: str) -> Any:
    def unary(data: Expr) -> Call:
        return _call(name, [data])

    unary.__name__ = unary.__qualname__ = name
    unary.__doc__ = f"Elementwise ``{name}``."
    return unary


for _name in _UNARY:
    globals()[_name] = _export(_make_unary(_name))


@_export
def clip(a: Expr, a_min: float, a_max: float) -> Call:
    """Clamp ``a`` into ``[a_min, a_max]``."""
    return _call("clip", [a], a_min=a_min, a_max=a_max)


@_export
def cast(data: Expr, dtype: str) -> Call:
    """Convert ``data`` to ``dtype``."""
    return _call("cast", [data], dtype=dtype)


# ---- binary, broadcasting ----------------------------------------------------------------

_BINARY = (
    "add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "equal",
    "not_equal", "less", "less_equal", "greater", "greater_equal",
)  # fmt: skip


def _make_binary(name: str) -> Any:
    def binary(lhs: Any, rhs: Any) -> Call:
        return _call(name, _tensor_args(lhs, rhs))

    binary.__name__ = binary.__qualname__ = name
    binary.__doc__ = f"Broadcasting ``{name}``; a Python scalar takes the other side's dtype."
    return binary


for _name in _BINARY:
    globals()[_name] = _export(_make_binary(_name))


@_export
def where(condition: Expr, x: Any, y: Any) -> Call:
    """``x`` where ``condition`` else ``y`` (all broadcast)."""
    x, y = _tensor_args(x, y)
    return _call("where", [condition, x, y])


# ---- reductions ----------------------------------------------------------------------------


def _make_reduce(name: str) -> Any:
    def reduce(data: Expr, axis: Any = DEFAULT, keepdims: bool = DEFAULT, exclude: bool = DEFAULT) -> Call:
        return _call(name, [data], axis=axis, keepdims=keepdims, exclude=exclude)

    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = f"``{name}`` over ``axis`` (all axes when None or empty; the others with exclude)."
    return dialect_defaults(name)(reduce)


for _name in ("sum", "mean", "max", "min", "prod"):
    globals()[_name] = _export(_make_reduce(_name))


@_export
@dialect_defaults("variance")
def variance(
    data: Expr, axis: Any = DEFAULT, keepdims: bool = DEFAULT, exclude: bool = DEFAULT, unbiased: bool = DEFAULT,
    with_mean: Expr | None = None,
) -> Call:  # fmt: skip
    """Relay's ``variance``: the op ``variance(data, mean)`` with ``mean`` the keepdims mean
    over ``axis`` unless ``with_mean`` gives it."""
    axis = [axis] if isinstance(axis, int) else axis
    m = _call("mean", [data], axis=axis, keepdims=True, exclude=exclude) if with_mean is None else with_mean
    return _call("variance", [data, m], axis=axis, keepdims=keepdims, exclude=exclude, unbiased=unbiased)


@_export
def std(data: Expr, axis: Any = None, keepdims: bool = False, exclude: bool = False, unbiased: bool = False) -> Call:
    """Relay's ``std``: ``sqrt(variance(...))``."""
    return _call("sqrt", [variance(data, axis, keepdims, exclude, unbiased)])


@_export
def mean_variance(
    data: Expr, axis: Any = None, keepdims: bool = False, exclude: bool = False, unbiased: bool = False
) -> TupleWrapper:
    """Relay's ``mean_variance``: (mean, variance); without keepdims the mean is squeezed at
    ``axis`` (as Relay does, whatever ``exclude``)."""
    axis = [axis] if isinstance(axis, int) else axis
    m = _call("mean", [data], axis=axis, keepdims=True, exclude=exclude)
    var = _call("variance", [data, m], axis=axis, keepdims=keepdims, exclude=exclude, unbiased=unbiased)
    if not keepdims:
        m = squeeze(m, axis=axis)
    return TupleWrapper(Tuple([m, var]), 2)


@_export
def mean_std(data: Expr, axis: Any = None, keepdims: bool = False, exclude: bool = False) -> TupleWrapper:
    """Relay's ``mean_std``: (mean, standard deviation); without keepdims every size-1 axis
    of the mean is squeezed (as Relay does)."""
    axis = [axis] if isinstance(axis, int) else axis
    m = _call("mean", [data], axis=axis, keepdims=True, exclude=exclude)
    sd = _call("sqrt", [_call("variance", [data, m], axis=axis, keepdims=keepdims, exclude=exclude, unbiased=False)])
    if not keepdims:
        m = squeeze(m)
    return TupleWrapper(Tuple([m, sd]), 2)


def _make_arg_reduce(name: str) -> Any:
    def arg_reduce(
        data: Expr,
        axis: Any = DEFAULT,
        keepdims: bool = DEFAULT,
        exclude: bool = DEFAULT,
        select_last_index: bool = DEFAULT,
    ) -> Call:
        return _call(
            name,
            [data],
            axis=axis,
            keepdims=keepdims,
            exclude=exclude,
            select_last_index=select_last_index,
        )

    arg_reduce.__name__ = arg_reduce.__qualname__ = name
    arg_reduce.__doc__ = f"``{name}`` over ``axis`` (int32 indices)."
    return dialect_defaults(name)(arg_reduce)


for _name in ("argmax", "argmin"):
    globals()[_name] = _export(_make_arg_reduce(_name))


# ---- shape and layout ----------------------------------------------------------------------


@_export
@dialect_defaults("reshape")
def reshape(data: Expr, newshape: Any, allowzero: bool = DEFAULT) -> Call:
    """Reshape with Relay's special values (0 copy, -1 infer, -2, -3, -4); an ``Expr``
    ``newshape`` gives ``dyn.reshape``."""
    newshape = _static(newshape)
    if isinstance(newshape, Expr):
        return _call("dyn.reshape", [data, newshape], allowzero=allowzero)
    if isinstance(newshape, int):
        newshape = [newshape]
    return _call("reshape", [data], newshape=list(newshape), allowzero=allowzero)


@_export
@dialect_defaults("transpose")
def transpose(data: Expr, axes: Any = DEFAULT) -> Call:
    """Permute axes (reverse them when ``axes`` is None)."""
    return _call("transpose", [data], axes=axes)


@_export
def concatenate(data: Any, axis: int) -> Call:
    """Join a list/tuple of tensors along ``axis``."""
    return _call("concatenate", [_tuple_arg(data)], axis=axis)


@_export
def stack(data: Any, axis: int) -> Call:
    """Stack a list/tuple of equally shaped tensors along a new ``axis``."""
    return _call("stack", [_tuple_arg(data)], axis=axis)


@_export
@dialect_defaults("split")
def split(data: Expr, indices_or_sections: Any, axis: int = DEFAULT) -> TupleWrapper:
    """Split into ``indices_or_sections`` equal parts (int) or at indices (list)."""
    if not isinstance(indices_or_sections, int):
        indices_or_sections = list(indices_or_sections)
    call = _call("split", [data], indices_or_sections=indices_or_sections, axis=axis)
    return TupleWrapper(call, len(call.checked_type.fields) if call.type_known else _n_split(indices_or_sections))


def _n_split(ios: Any) -> int:
    return ios if isinstance(ios, int) else len(ios) + 1


@_export
@dialect_defaults("squeeze")
def squeeze(data: Expr, axis: Any = DEFAULT) -> Call:
    """Remove size-1 axes (all of them when ``axis`` is None); an ``Expr`` gives ``dyn.squeeze``."""
    axis = _static(axis)
    if isinstance(axis, Expr):
        return _call("dyn.squeeze", [data, axis])
    if isinstance(axis, int):
        axis = [axis]
    return _call("squeeze", [data], axis=axis)


@_export
@dialect_defaults("expand_dims")
def expand_dims(data: Expr, axis: int, num_newaxis: int = DEFAULT) -> Call:
    """Insert ``num_newaxis`` size-1 axes at ``axis``; an ``Expr`` gives ``dyn.expand_dims``."""
    axis = _static(axis)
    if isinstance(axis, Expr):
        return _call("dyn.expand_dims", [data, axis], num_newaxis=num_newaxis)
    return _call("expand_dims", [data], axis=axis, num_newaxis=num_newaxis)


@_export
@dialect_defaults("strided_slice")
def strided_slice(
    data: Expr,
    begin: Any,
    end: Any,
    strides: Any = DEFAULT,
    axes: Any = DEFAULT,
    slice_mode: str = DEFAULT,
) -> Call:
    """Slice ``data``; ``slice_mode="size"`` reads ``end`` as sizes (-1: to the end).

    An ``Expr`` among ``begin``/``end``/``strides`` gives ``dyn.strided_slice`` (the other two
    become constants of its dtype; ``strides`` defaults to ones), as in tvm.relay, where
    ``axes`` must then be absent.
    """
    begin, end, strides = _static(begin), _static(end), _static(strides)
    if any(isinstance(v, Expr) for v in (begin, end, strides)):
        return _dyn_strided_slice(data, begin, end, strides, axes, slice_mode)

    def ints(v: Any) -> Any:
        return [v] if isinstance(v, int) else v

    return _call(
        "strided_slice",
        [data],
        begin=ints(begin),
        end=ints(end),
        strides=ints(strides),
        axes=ints(axes),
        slice_mode=slice_mode,
    )


def _dyn_strided_slice(data: Expr, begin: Any, end: Any, strides: Any, axes: Any, slice_mode: Any) -> Call:
    if axes is not DEFAULT and axes is not None:
        raise TypeError("strided_slice: axes cannot be given with run-time begin/end/strides")
    like = next(v for v in (begin, end, strides) if isinstance(v, Expr))
    n = _shape_of(like.checked_type)[0]
    dtype = _dtype_of(like.checked_type.element_type)

    def tensor(v: Any, fill: int) -> Expr:
        if isinstance(v, Expr):
            return v
        if v is DEFAULT or v is None:
            v = [fill] * n
        return Constant(np.asarray([v] if isinstance(v, int) else v), dtype=dtype)

    return _call(
        "dyn.strided_slice",
        [data, tensor(begin, 0), tensor(end, 0), tensor(strides, 1)],
        slice_mode=slice_mode,
    )


@_export
def layout_transform(data: Expr, src_layout: str, dst_layout: str) -> Call:
    """Change the data layout (``NCHW`` -> ``NHWC``, ``NCHW8c``, ...)."""
    return _call("layout_transform", [data], src_layout=src_layout, dst_layout=dst_layout)


@_export
def broadcast_to(data: Expr, shape: Any) -> Call:
    """Broadcast to ``shape``; an ``Expr`` gives ``dyn.broadcast_to``."""
    shape = _static(shape)
    if isinstance(shape, Expr):
        return _call("dyn.broadcast_to", [data, shape])
    if isinstance(shape, int):
        shape = [shape]
    return _call("broadcast_to", [data], shape=list(shape))


@_export
@dialect_defaults("take")
def take(data: Expr, indices: Any, axis: int | None = DEFAULT, batch_dims: int = DEFAULT, mode: str = DEFAULT) -> Call:
    """Gather along ``axis`` (the flattened tensor when None); Python ints become int32."""
    if not isinstance(indices, Expr):
        indices = _to_expr(indices)
    return _call("take", [data, indices], axis=axis, batch_dims=batch_dims, mode=mode)


@_export
def tile(data: Expr, reps: Any) -> Call:
    """Repeat ``data`` ``reps`` times per axis; an ``Expr`` gives ``dyn.tile``."""
    reps = _static(reps)
    if isinstance(reps, Expr):
        return _call("dyn.tile", [data, reps])
    return _call("tile", [data], reps=list(reps))


@_export
@dialect_defaults("shape_of")
def shape_of(data: Expr, dtype: str = DEFAULT) -> Call:
    """The shape of ``data`` as a 1-D tensor."""
    return _call("shape_of", [data], dtype=dtype)


# ---- devices ---------------------------------------------------------------------------------


def _tuple_fields(e: Any) -> list[Expr] | None:
    """The fields of a tuple-valued expression (a TupleWrapper, Tuple or tuple-typed value)."""
    if isinstance(e, TupleWrapper):
        return list(e)
    if isinstance(e, Tuple):
        return list(e.fields)
    fields = getattr(getattr(e, "_type", None), "fields", None)
    if isinstance(e, Expr) and isinstance(fields, tuple):
        return list(TupleWrapper(e, len(fields)))
    return None


@_export
@dialect_defaults("on_device")
def on_device(body: Expr, device: Any, constrain_result: bool = DEFAULT, constrain_body: bool = DEFAULT) -> Call:
    """Annotate that ``body`` is computed on ``device`` (Relay's ``relay.annotation.on_device``).

    ``device``: a device handle (``xrelay.cpu(0)``), a name (``"cuda"``, ``"cpu(1)"``, a
    registered device) or a ``VirtualDevice``. ``constrain_result`` also pins the result there;
    with the default ``False``, plan-devices copies it to wherever it is used. A tuple (a
    multi-result op) is annotated field by field, as Relay's PlanDevices rewrites
    ``on_device(t).0`` to ``on_device(t.0)``.
    """
    fields = _tuple_fields(body)
    if fields is not None:
        annotated = [on_device(f, device, constrain_result, constrain_body) for f in fields]
        return TupleWrapper(Tuple(annotated), len(annotated))  # type: ignore[return-value]
    return _call(
        "on_device",
        [body],
        virtual_device=device,
        constrain_result=constrain_result,
        constrain_body=constrain_body,
    )


@_export
def device_copy(data: Expr, src_device: Any, dst_device: Any) -> Call:
    """Copy ``data`` from ``src_device`` to ``dst_device`` (devices as for ``on_device``, or type codes)."""
    return _call("device_copy", [data], src_virtual_device=src_device, dst_virtual_device=dst_device)


@_export
def stop_fusion(data: Expr) -> Call:
    """An identity that fusion does not cross (``relay.annotation.stop_fusion``)."""
    return _call("annotation.stop_fusion", [data])


# ---- repeat, gather_nd, ndarray_size, reverse_reshape, shifts --------------------------------


@_export
def repeat(data: Expr, repeats: int, axis: int) -> Call:
    """Repeat each element ``repeats`` times along ``axis``."""
    return _call("repeat", [data], repeats=repeats, axis=axis)


@_export
@dialect_defaults("gather_nd")
def gather_nd(data: Expr, indices: Any, batch_dims: int = DEFAULT, index_rank: int | None = DEFAULT) -> Call:
    """Gather ``data`` at the index tuples along ``indices``' first axis."""
    return _call("gather_nd", [data, _to_expr(indices)], batch_dims=batch_dims, index_rank=index_rank)


@_export
@dialect_defaults("ndarray_size")
def ndarray_size(data: Expr, dtype: str = DEFAULT) -> Call:
    """The number of elements of ``data`` as a scalar of ``dtype``."""
    return _call("ndarray_size", [data], dtype=dtype)


@_export
def reverse_reshape(data: Expr, newshape: Any) -> Call:
    """Reshape with the special values read right to left (op ``contrib_reverse_reshape``)."""
    if isinstance(newshape, int):
        newshape = [newshape]
    return _call("contrib_reverse_reshape", [data], newshape=list(newshape))


@_export
def left_shift(lhs: Any, rhs: Any) -> Call:
    """Broadcasting ``lhs << rhs`` on integers."""
    return _call("left_shift", _tensor_args(lhs, rhs))


@_export
def right_shift(lhs: Any, rhs: Any) -> Call:
    """Broadcasting ``lhs >> rhs`` on integers (arithmetic for signed ones)."""
    return _call("right_shift", _tensor_args(lhs, rhs))


# ---- filled tensors and *_like ops -----------------------------------------------------------


@_export
def zeros(shape: Any, dtype: str) -> Call:
    """A tensor of zeros; an ``Expr`` shape gives ``dyn.zeros``."""
    shape = _static(shape)
    if isinstance(shape, Expr):
        return _call("dyn.zeros", [shape], dtype=dtype)
    return _call("zeros", [], shape=shape, dtype=dtype)


@_export
def ones(shape: Any, dtype: str) -> Call:
    """A tensor of ones; an ``Expr`` shape gives ``dyn.ones``."""
    shape = _static(shape)
    if isinstance(shape, Expr):
        return _call("dyn.ones", [shape], dtype=dtype)
    return _call("ones", [], shape=shape, dtype=dtype)


@_export
@dialect_defaults("full")
def full(fill_value: Any, shape: Any = (), dtype: str = DEFAULT) -> Call:
    """A tensor of ``shape`` filled with the scalar ``fill_value``; an ``Expr`` shape gives
    ``dyn.full``."""
    shape = _static(shape)
    if isinstance(shape, Expr):
        return _call("dyn.full", [_to_expr(fill_value), shape], dtype=dtype)
    return _call("full", [_to_expr(fill_value)], shape=shape, dtype=dtype)


@_export
def full_like(data: Expr, fill_value: Any) -> Call:
    """A tensor like ``data`` filled with the scalar ``fill_value``."""
    return _call("full_like", _tensor_args(data, fill_value))


@_export
@dialect_defaults("reshape_like")
def reshape_like(
    data: Expr, shape_like: Expr, lhs_begin: int = DEFAULT, lhs_end: int | None = DEFAULT,
    rhs_begin: int = DEFAULT, rhs_end: int | None = DEFAULT,
) -> Call:  # fmt: skip
    """Reshape ``data`` (axes [lhs_begin, lhs_end)) to ``shape_like``'s axes [rhs_begin, rhs_end)."""
    return _call(
        "reshape_like", [data, shape_like], lhs_begin=lhs_begin, lhs_end=lhs_end,
        rhs_begin=rhs_begin, rhs_end=rhs_end,
    )  # fmt: skip


@_export
@dialect_defaults("slice_like")
def slice_like(data: Expr, shape_like: Expr, axes: Any = DEFAULT) -> Call:
    """``data`` sliced from 0 to ``shape_like``'s size along ``axes`` (all shared axes when None)."""
    return _call("slice_like", [data, shape_like], axes=axes if axes is None or axes is DEFAULT else list(axes))


@_export
def broadcast_to_like(data: Expr, broadcast_type: Expr) -> Call:
    """Broadcast ``data`` to the shape of ``broadcast_type``."""
    return _call("broadcast_to_like", [data, broadcast_type])


@_export
def cast_like(data: Expr, dtype_like: Expr) -> Call:
    """Convert ``data`` to the dtype of ``dtype_like``."""
    return _call("cast_like", [data, dtype_like])


@_export
def collapse_sum_like(data: Expr, collapse_type: Expr) -> Call:
    """Sum ``data`` over the axes ``collapse_type`` would be broadcast along."""
    return _call("collapse_sum_like", [data, collapse_type])


@_export
def collapse_sum_to(data: Expr, shape: Any) -> Call:
    """Sum ``data`` down to ``shape`` (a list of ints, passed on as an int32 constant too)."""
    import numpy as np


    shape = [int(d) for d in shape]
    return _call("collapse_sum_to", [data, const(np.array(shape, "int32"))], shape=shape)


@_export
@dialect_defaults("argsort")
def argsort(data: Expr, axis: int = DEFAULT, is_ascend: bool = DEFAULT, dtype: str = DEFAULT) -> Call:
    """Indices that sort ``data`` along ``axis``."""
    return _call("argsort", [data], axis=axis, is_ascend=bool(is_ascend), dtype=dtype)


# ---- scans, scatters, einsum, reinterpret, reverse_sequence ---------------------------------


@_export
@dialect_defaults("cumsum")
def cumsum(data: Expr, axis: int | None = DEFAULT, dtype: str | None = DEFAULT, exclusive: bool | None = None) -> Call:
    """Running sum along ``axis`` (the flattened tensor when None); ``exclusive`` starts at 0."""
    return _call("cumsum", [data], axis=axis, dtype=dtype, exclusive=None if exclusive is None else bool(exclusive))


@_export
@dialect_defaults("cumprod")
def cumprod(data: Expr, axis: int | None = DEFAULT, dtype: str | None = DEFAULT, exclusive: bool | None = None) -> Call:
    """Running product along ``axis`` (the flattened tensor when None); ``exclusive`` starts at 1."""
    return _call("cumprod", [data], axis=axis, dtype=dtype, exclusive=None if exclusive is None else bool(exclusive))


@_export
@dialect_defaults("scatter_elements")
def scatter_elements(data: Expr, indices: Any, updates: Expr, axis: int = DEFAULT, reduction: str = DEFAULT) -> Call:
    """``data`` with ``updates`` written at ``indices`` along ``axis`` (``reduction``: update,
    add, mul, mean, min, max)."""
    return _call("scatter_elements", [data, _to_expr(indices), updates], axis=axis, reduction=reduction)


@_export
@dialect_defaults("scatter_nd")
def scatter_nd(data: Expr, indices: Any, updates: Expr, mode: str = DEFAULT) -> Call:
    """``data`` with ``updates`` written at the index tuples along ``indices``' first axis."""
    return _call("scatter_nd", [data, _to_expr(indices), updates], mode=mode)


@_export
def einsum(data: Any, equation: str) -> Call:
    """Einstein summation of a list/tuple of tensors (numpy's equation syntax)."""
    return _call("einsum", [_tuple_arg(data)], equation=equation)


@_export
def reinterpret(data: Expr, dtype: str) -> Call:
    """The bits of ``data`` read as ``dtype`` (of the same width)."""
    return _call("reinterpret", [data], dtype=dtype)


@_export
@dialect_defaults("reverse_sequence")
def reverse_sequence(data: Expr, seq_lengths: Any, seq_axis: int = DEFAULT, batch_axis: int = DEFAULT) -> Call:
    """Reverse the first ``seq_lengths[b]`` steps along ``seq_axis`` of each batch entry."""
    return _call("reverse_sequence", [data, _to_expr(seq_lengths)], seq_axis=seq_axis, batch_axis=batch_axis)


@_export
@dialect_defaults("dft")
def dft(re_data: Expr, im_data: Expr, inverse: bool | None = DEFAULT) -> TupleWrapper:
    """The discrete Fourier transform along the last axis: ``(re, im)`` of the result
    (``inverse=None`` means False, as in tvm.relay)."""
    return TupleWrapper(_call("dft", [re_data, im_data], inverse=inverse), 2)


@_export
@dialect_defaults("topk")
def topk(
    data: Expr, k: int = DEFAULT, axis: int = DEFAULT, ret_type: str = DEFAULT, is_ascend: bool = DEFAULT, dtype: str = DEFAULT
) -> Any:
    """The ``k`` largest (``is_ascend``: smallest) elements along ``axis``: a ``TupleWrapper`` of
    (values, indices) for ``ret_type="both"``, else one tensor. An ``Expr`` ``k`` gives
    ``dyn.topk``."""
    k = _static(k)
    if isinstance(k, Expr):  # tvm.relay: dyn.topk
        call = _call("dyn.topk", [data, k], axis=axis, ret_type=ret_type, is_ascend=is_ascend, dtype=dtype)
    else:
        call = _call("topk", [data], k=k, axis=axis, ret_type=ret_type, is_ascend=is_ascend, dtype=dtype)
    return TupleWrapper(call, 2) if ret_type in (DEFAULT, "both") else call


@_export
def one_hot(indices: Expr, on_value: Any, off_value: Any, depth: int, axis: int, dtype: str) -> Call:
    """One-hot rows along a new ``axis`` of size ``depth``; an ``Expr`` depth gives
    ``dyn.one_hot``."""
    on, off = (v if isinstance(v, Expr) else _scalar_const(v, dtype) for v in (on_value, off_value))
    depth = _static(depth)
    if isinstance(depth, Expr):  # tvm.relay: dyn.one_hot
        return _call("dyn.one_hot", [indices, on, off, depth], axis=axis, dtype=dtype)
    return _call("one_hot", [indices, on, off], depth=depth, axis=axis, dtype=dtype)


@_export
def argwhere(condition: Expr) -> Call:
    """The coordinates of the nonzero elements, one int32 row each (``[?, rank]``)."""
    return _call("argwhere", [condition])


@_export
@dialect_defaults("unique")
def unique(data: Expr, is_sorted: bool = True, return_counts: bool = DEFAULT) -> TupleWrapper:
    """The distinct elements of 1-D ``data``, zero-padded to its length: a ``TupleWrapper`` of
    (output, indices, inverse_indices, num_unique[, counts]). tvm.relay's signature: its
    ``is_sorted`` is the op's ``sorted`` attribute."""
    call = _call("unique", [data], sorted=bool(is_sorted), return_counts=return_counts)
    return TupleWrapper(call, 5 if return_counts is not DEFAULT and return_counts else 4)


def _scalar_const(value: Any, dtype: str) -> Expr:
    import numpy as np


    return const(np.array(value, dtype=numpy_dtype(dtype)))
