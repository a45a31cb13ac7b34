"""Converters from core ATen ops (``torch.export`` after ``run_decompositions()``) to relay.

Each converter takes the importer and a ``Node`` whose arguments are bound by the op's schema
names (``node["stride"]``) and returns the node's value: one relay value, or a tuple for ops
with several results (``None`` where a result is not imported, e.g. max-pool indices).
Semantics follow ATen's definitions (``native_functions.yaml``): shapes and result dtypes are
read from torch's own record of the node (``node.val``), so type promotion and views come out
as torch computes them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from xrelay.dialects.relay import numpy_dtype
from xrelay.frontends.graph_builder import Value
from xrelay.frontends.torch.importer import Node, _Importer, converter


def _t(im: _Importer, v: Any, dtype: str | None = None) -> Value:
    """A tensor operand; a Python number becomes a 0-d array of ``dtype``."""
    if isinstance(v, bool | int | float):
        return np.asarray(v, dtype=numpy_dtype(dtype or ("float32" if isinstance(v, float) else "int64")))
    out = im.value(v)
    return out if dtype is None else im.b.cast(out, dtype)


def _axis(d: int, rank: int) -> int:
    return d + rank if d < 0 else d


def _axes(dims: Any, rank: int) -> list[int] | None:
    if dims is None or (isinstance(dims, Sequence) and len(dims) == 0):
        return None
    if isinstance(dims, int):
        dims = [dims]
    return sorted(_axis(d, max(rank, 1)) for d in dims)


def _emit(im: _Importer, name: str, vals: Sequence[Value], **attrs: Any) -> Value:
    return im.b.emit1(name, vals, **attrs)


def _fit(im: _Importer, node: Node, y: Value) -> Value:
    """``y`` checked against torch's result shape (a converter bug fails here, naming the node)."""
    want = node.out_shape()
    got = list(im.b.shape(y))
    if got != want:
        raise node.fail(f"converted result has shape {got}, torch's has {want}")
    return y


# ============================================================================================
# Elementwise
# ============================================================================================

_UNARY = {
    "aten.relu.default": "nn.relu",
    "aten.sigmoid.default": "sigmoid",
    "aten.tanh.default": "tanh",
    "aten.exp.default": "exp",
    "aten.log.default": "log",
    "aten.sqrt.default": "sqrt",
    "aten.rsqrt.default": "rsqrt",
    "aten.abs.default": "abs",
    "aten.neg.default": "negative",
    "aten.erf.default": "erf",
    "aten.sin.default": "sin",
    "aten.cos.default": "cos",
    "aten.floor.default": "floor",
    "aten.ceil.default": "ceil",
    "aten.round.default": "round",
    "aten.sign.default": "sign",
    "aten.trunc.default": "trunc",
    "aten.logical_not.default": "logical_not",
}


@converter(*_UNARY)
def _unary(im, node):
    dtype = node.out_dtype()
    x = _t(im, node["self"])
    if dtype != "bool":
        x = im.b.cast(x, dtype)
    return _emit(im, _UNARY[node.op], [x])


@converter("aten.bitwise_not.default")
def _bitwise_not(im, node):
    if node.out_dtype() != "bool":
        raise node.fail("bitwise_not is imported for bool tensors only")
    return _emit(im, "logical_not", [_t(im, node["self"])])


@converter("aten.reciprocal.default")
def _reciprocal(im, node):
    dtype = node.out_dtype()
    return _emit(im, "divide", [np.asarray(1, numpy_dtype(dtype)), _t(im, node["self"], dtype)])


_BINARY = {
    "add": "add",
    "sub": "subtract",
    "mul": "multiply",
    "div": "divide",
    "maximum": "maximum",
    "minimum": "minimum",
    "pow": "power",
    "remainder": "floor_mod",
    "fmod": "mod",
    "bitwise_and": "logical_and",
    "bitwise_or": "logical_or",
    "bitwise_xor": "logical_xor",
    "logical_and": "logical_and",
    "logical_or": "logical_or",
    "logical_xor": "logical_xor",
}


@converter(
    "aten.add.Tensor", "aten.add.Scalar", "aten.sub.Tensor", "aten.sub.Scalar",
    "aten.mul.Tensor", "aten.mul.Scalar", "aten.div.Tensor", "aten.div.Scalar",
    "aten.maximum.default", "aten.minimum.default",
    "aten.pow.Tensor_Scalar", "aten.pow.Tensor_Tensor", "aten.pow.Scalar",
    "aten.remainder.Tensor", "aten.remainder.Scalar", "aten.fmod.Tensor", "aten.fmod.Scalar",
    "aten.bitwise_and.Tensor", "aten.bitwise_or.Tensor", "aten.bitwise_xor.Tensor",
    "aten.bitwise_and.Scalar", "aten.bitwise_or.Scalar", "aten.bitwise_xor.Scalar",
    "aten.logical_and.default", "aten.logical_or.default", "aten.logical_xor.default",
)  # fmt: skip
def _binary(im, node):
    base = node.op.split(".")[1]
    dtype = node.out_dtype()
    names = list(node.args)
    a, b = node[names[0]], node[names[1]]
    if base.startswith("bitwise") and dtype != "bool":
        raise node.fail(f"{base} is imported for bool tensors only")
    a, b = _t(im, a, dtype), _t(im, b, dtype)
    alpha = node.args.get("alpha")
    if alpha is not None and alpha != 1:
        b = _emit(im, "multiply", [b, np.asarray(alpha, numpy_dtype(dtype))])
    return _emit(im, _BINARY[base], [a, b])


@converter("aten.div.Tensor_mode", "aten.div.Scalar_mode")
def _div_mode(im, node):
    dtype = node.out_dtype()
    a, b = _t(im, node["self"], dtype), _t(im, node["other"], dtype)
    mode = node["rounding_mode"]
    if mode is None:
        return _emit(im, "divide", [a, b])
    if mode == "floor":
        if dtype.startswith("float"):
            return _emit(im, "floor", [_emit(im, "divide", [a, b])])
        return _emit(im, "floor_divide", [a, b])
    if mode == "trunc":
        if dtype.startswith("float"):
            return _emit(im, "trunc", [_emit(im, "divide", [a, b])])
        return _emit(im, "divide", [a, b])  # integer divide truncates, as C does
    raise node.fail(f"rounding_mode '{mode}' is not supported")


_COMPARE = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal"}


@converter(*(f"aten.{k}.{v}" for k in _COMPARE for v in ("Tensor", "Scalar")))
def _compare(im, node):
    import torch

    a, b = node["self"], node["other"]
    ta = node.fx.args[0].meta["val"].dtype
    tb = node.fx.args[1].meta["val"].dtype if hasattr(node.fx.args[1], "meta") else None
    if tb is not None:
        common = torch.promote_types(ta, tb)
    else:
        common = torch.result_type(torch.empty((), dtype=ta), b)
    from xrelay.frontends.torch.importer import relay_dtype

    dtype = relay_dtype(common, node.op)
    return _emit(im, _COMPARE[node.op.split(".")[1]], [_t(im, a, dtype), _t(im, b, dtype)])


@converter("aten.where.self")
def _where(im, node):
    dtype = node.out_dtype()
    cond = _t(im, node["condition"], "bool")
    return _emit(im, "where", [cond, _t(im, node["self"], dtype), _t(im, node["other"], dtype)])


@converter("aten.clamp.default", "aten.clamp.Tensor", "aten.hardtanh.default", "aten.clamp_min.default", "aten.clamp_max.default")
def _clamp(im, node):
    dtype = node.out_dtype()
    x = _t(im, node["self"], dtype)
    if node.op.startswith("aten.hardtanh"):
        lo, hi = node["min_val"], node["max_val"]
    elif node.op.startswith("aten.clamp_min"):
        lo, hi = node["min"], None
    elif node.op.startswith("aten.clamp_max"):
        lo, hi = None, node["max"]
    else:
        lo, hi = node["min"], node["max"]
    if all(v is None or isinstance(v, int | float) for v in (lo, hi)) and dtype.startswith("float"):
        return _emit(im, "clip", [x], a_min=-math.inf if lo is None else float(lo), a_max=math.inf if hi is None else float(hi))
    if lo is not None:
        x = _emit(im, "maximum", [x, _t(im, lo, dtype)])
    if hi is not None:
        x = _emit(im, "minimum", [x, _t(im, hi, dtype)])
    return x


@converter("aten.leaky_relu.default")
def _leaky_relu(im, node):
    return _emit(im, "nn.leaky_relu", [_t(im, node["self"])], alpha=float(node["negative_slope"]))


@converter("aten.gelu.default")
def _gelu(im, node):
    dtype = node.out_dtype()
    x = _t(im, node["self"], dtype)

    def c(v):
        return np.asarray(v, numpy_dtype(dtype))

    if node["approximate"] == "tanh":
        # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        x3 = _emit(im, "multiply", [_emit(im, "multiply", [x, x]), x])
        inner = _emit(im, "add", [x, _emit(im, "multiply", [x3, c(0.044715)])])
        t = _emit(im, "tanh", [_emit(im, "multiply", [inner, c(math.sqrt(2 / math.pi))])])
    else:  # 0.5 x (1 + erf(x / sqrt 2))
        t = _emit(im, "erf", [_emit(im, "multiply", [x, c(1 / math.sqrt(2))])])
    return _emit(im, "multiply", [_emit(im, "multiply", [x, c(0.5)]), _emit(im, "add", [t, c(1.0)])])


# ============================================================================================
# Convolution, pooling, normalisation
# ============================================================================================


@converter("aten.convolution.default")
def _convolution(im, node):
    x, w, bias = _t(im, node["input"]), _t(im, node["weight"]), node["bias"]
    ws = im.b.shape(w)
    n = len(ws) - 2
    if n not in (1, 2, 3):
        raise node.fail(f"only 1-D, 2-D and 3-D convolutions are supported, got a {n}-D one")
    stride, pad, dil = list(node["stride"]), list(node["padding"]), list(node["dilation"])
    stride, pad, dil = (v * n if len(v) == 1 else v for v in (stride, pad, dil))
    groups = int(node["groups"])
    padding = pad + pad  # ATen pads each spatial dim by the same amount on both sides
    if node["transposed"]:
        if n != 2:
            raise node.fail("only 2-D transposed convolutions are supported")
        y = _emit(
            im, "nn.conv2d_transpose", [x, w], strides=stride, padding=padding, dilation=dil, groups=groups,
            channels=ws[1] * groups, kernel_size=list(ws[2:]), output_padding=list(node["output_padding"]),
        )  # fmt: skip
    else:
        y = _emit(
            im, f"nn.conv{n}d", [x, w], strides=stride, padding=padding, dilation=dil, groups=groups,
            channels=ws[0], kernel_size=list(ws[2:]),
        )  # fmt: skip
    if bias is not None:
        y = _emit(im, "nn.bias_add", [y, _t(im, bias)], axis=1)
    return _fit(im, node, y)


def _crop_to(im: _Importer, node: Node, y: Value, i: int | None = None) -> Value:
    """Relay's ceil-mode pooling keeps a last window that starts in the right padding; torch
    drops it: slice ``y`` to torch's spatial size."""
    want = node.out_shape(i)
    got = list(im.b.shape(y))
    if got == want:
        return y
    if got[:2] != want[:2] or any(g < w for g, w in zip(got[2:], want[2:])):
        raise node.fail(f"pooled shape {got} does not match torch's {want}")
    return _emit(im, "strided_slice", [y], begin=[0] * (len(want) - 2), end=want[2:], axes=list(range(2, len(want))))


def _pool_args(node: Node, n: int) -> tuple[list[int], list[int], list[int]]:
    k = list(node["kernel_size"])
    k = k * n if len(k) == 1 else k
    s = list(node["stride"] or k)
    s = s * n if len(s) == 1 else s
    p = list(node["padding"])
    p = p * n if len(p) == 1 else p
    return k, s, p


@converter("aten.max_pool2d_with_indices.default")
def _max_pool2d(im, node):
    k, s, p = _pool_args(node, 2)
    d = list(node["dilation"])
    d = d * 2 if len(d) == 1 else d
    x = _t(im, node["self"])
    y = _emit(im, "nn.max_pool2d", [x], pool_size=k, strides=s, padding=p + p, dilation=d, ceil_mode=bool(node["ceil_mode"]))
    return (_crop_to(im, node, y, 0), None)


@converter("aten.avg_pool2d.default")
def _avg_pool2d(im, node):
    if node["divisor_override"] is not None:
        raise node.fail("divisor_override is not supported")
    k, s, p = _pool_args(node, 2)
    x = _t(im, node["self"])
    y = _emit(
        im, "nn.avg_pool2d", [x], pool_size=k, strides=s, padding=p + p, ceil_mode=bool(node["ceil_mode"]),
        count_include_pad=bool(node["count_include_pad"]),
    )  # fmt: skip
    return _crop_to(im, node, y)


@converter("aten._adaptive_avg_pool2d.default")
def _adaptive_avg_pool2d(im, node):
    x = _t(im, node["self"])
    size = list(node["output_size"])
    if im.b.rank(x) == 4 and size == [1, 1]:
        return _emit(im, "nn.global_avg_pool2d", [x])
    if im.b.rank(x) != 4:
        raise node.fail("only 4-D (NCHW) inputs are supported")
    return _emit(im, "nn.adaptive_avg_pool2d", [x], output_size=size)


@converter("aten._native_batch_norm_legit_no_training.default")
def _batch_norm(im, node):
    x = _t(im, node["input"])
    c = im.b.shape(x)[1]
    dtype = im.b.dtype(x)
    w = node["weight"]
    b = node["bias"]
    gamma = _t(im, w) if w is not None else np.ones(c, numpy_dtype(dtype))
    beta = _t(im, b) if b is not None else np.zeros(c, numpy_dtype(dtype))
    mean, var = _t(im, node["running_mean"]), _t(im, node["running_var"])
    out = im.b.emit("nn.batch_norm", [x, gamma, beta, mean, var], axis=1, epsilon=float(node["eps"]))
    return (out[0], None, None)


@converter("aten.native_layer_norm.default")
def _layer_norm(im, node):
    x = _t(im, node["input"])
    shape = list(node["normalized_shape"])
    rank = im.b.rank(x)
    dtype = im.b.dtype(x)
    xs = list(im.b.shape(x))
    k = len(shape)
    if xs[rank - k :] != shape:
        raise node.fail(f"normalized_shape {shape} does not end the input's shape {xs}")
    n = math.prod(shape)
    y = im.b.reshape(x, xs[: rank - k] + [n]) if k != 1 else x
    w, b = node["weight"], node["bias"]
    gamma = im.b.reshape(_t(im, w), [n]) if w is not None else np.ones(n, numpy_dtype(dtype))
    beta = im.b.reshape(_t(im, b), [n]) if b is not None else np.zeros(n, numpy_dtype(dtype))
    y = _emit(im, "nn.layer_norm", [y, gamma, beta], axis=-1, epsilon=float(node["eps"]))
    return (im.b.reshape(y, xs), None, None)


@converter("aten.native_group_norm.default")
def _group_norm(im, node):
    x = _t(im, node["input"])
    c = im.b.shape(x)[1]
    dtype = im.b.dtype(x)
    w, b = node["weight"], node["bias"]
    gamma = _t(im, w) if w is not None else np.ones(c, numpy_dtype(dtype))
    beta = _t(im, b) if b is not None else np.zeros(c, numpy_dtype(dtype))
    y = _emit(im, "nn.group_norm", [x, gamma, beta], num_groups=int(node["group"]), axis=1, epsilon=float(node["eps"]))
    return (y, None, None)


# ============================================================================================
# Linear algebra
# ============================================================================================


def _matmul2d(im: _Importer, a: Value, b: Value) -> Value:
    """``a @ b`` for 2-D operands: ``nn.dense`` when ``b`` is a transposed weight (a Linear
    layer after decomposition is ``addmm(bias, x, permute(W, [1, 0]))``)."""
    orig = im.transposed_of.get(id(b))
    if orig is not None:
        return _emit(im, "nn.dense", [a, orig], units=im.b.shape(orig)[0])
    return _emit(im, "nn.matmul", [a, b])


@converter("aten.mm.default")
def _mm(im, node):
    return _matmul2d(im, _t(im, node["self"]), _t(im, node["mat2"]))


@converter("aten.addmm.default")
def _addmm(im, node):
    y = _matmul2d(im, _t(im, node["mat1"]), _t(im, node["mat2"]))
    dtype = im.b.dtype(y)
    alpha, beta = node["alpha"], node["beta"]
    if alpha != 1:
        y = _emit(im, "multiply", [y, np.asarray(alpha, numpy_dtype(dtype))])
    if beta == 0:
        return y
    c = _t(im, node["self"], dtype)
    if beta != 1:
        c = _emit(im, "multiply", [c, np.asarray(beta, numpy_dtype(dtype))])
    cs, ys = im.b.shape(c), im.b.shape(y)
    if len(cs) == 1 and cs[0] == ys[1]:
        return _emit(im, "nn.bias_add", [y, c], axis=-1)
    return _emit(im, "add", [y, c])


@converter("aten.bmm.default")
def _bmm(im, node):
    return _emit(im, "nn.batch_matmul", [_t(im, node["self"]), _t(im, node["mat2"])], transpose_b=False)


@converter("aten._scaled_dot_product_flash_attention_for_cpu.default")
def _sdpa(im, node):
    q, k, v = _t(im, node["query"]), _t(im, node["key"]), _t(im, node["value"])
    if node["dropout_p"]:
        raise node.fail("dropout_p > 0 is not supported (inference import)")
    qs, ks, vs = im.b.shape(q), im.b.shape(k), im.b.shape(v)
    dtype = im.b.dtype(q)
    lead = list(qs[:-2])
    nb = math.prod(lead)
    L, E, S, Ev = qs[-2], qs[-1], ks[-2], vs[-1]
    q3 = im.b.reshape(q, [nb, L, E])
    k3 = im.b.reshape(k, [nb, S, E])
    v3 = im.b.reshape(v, [nb, S, Ev])
    scale = node["scale"] if node["scale"] is not None else 1 / math.sqrt(E)
    s = _emit(im, "nn.batch_matmul", [q3, k3], transpose_b=True)
    s = _emit(im, "multiply", [s, np.asarray(scale, numpy_dtype(dtype))])
    mask = node["attn_mask"]
    if node["is_causal"]:
        tri = np.tril(np.ones((L, S), bool))
        s = _emit(im, "where", [tri, s, np.asarray(-np.inf, numpy_dtype(dtype))])
    if mask is not None:
        m = _t(im, mask)
        ms = list(im.b.shape(m))
        m = im.b.reshape(_emit(im, "broadcast_to", [m], shape=lead + [L, S]) if ms != lead + [L, S] else m, [nb, L, S])
        if im.b.dtype(m) == "bool":
            s = _emit(im, "where", [m, s, np.asarray(-np.inf, numpy_dtype(dtype))])
        else:
            s = _emit(im, "add", [s, im.b.cast(m, dtype)])
    p = _emit(im, "nn.softmax", [s], axis=-1)
    o = _emit(im, "nn.batch_matmul", [p, v3], transpose_b=False)
    return (im.b.reshape(o, lead + [L, Ev]), None)


@converter("aten.embedding.default")
def _embedding(im, node):
    return _emit(im, "take", [_t(im, node["weight"]), _t(im, node["indices"])], axis=0)


# ============================================================================================
# Reductions and softmax
# ============================================================================================


@converter("aten._softmax.default", "aten._log_softmax.default")
def _softmax(im, node):
    x = _t(im, node["self"], node.out_dtype())
    relay = "nn.softmax" if "_softmax" in node.op and "log" not in node.op else "nn.log_softmax"
    return _emit(im, relay, [x], axis=int(node["dim"]))


@converter("aten._safe_softmax.default")
def _safe_softmax(im, node):
    """torch's softmax for attention: a row that is all ``-inf`` (fully masked) gives zeros,
    not NaN. ``where(any(x != -inf), softmax(x), 0)`` along the axis; ``drop-softmax-guard``
    drops the guard where ``x`` holds no infinity."""
    dtype = node.out_dtype()
    x = _t(im, node["self"], dtype)
    axis = int(node["dim"])
    y = _emit(im, "nn.softmax", [x], axis=axis)
    live = _emit(im, "not_equal", [x, np.asarray(-np.inf, numpy_dtype(dtype))])
    live = _emit(im, "max", [im.b.cast(live, "int32")], axis=[_axis(axis, im.b.rank(x))], keepdims=True)
    return _emit(im, "where", [im.b.cast(live, "bool"), y, np.zeros((), numpy_dtype(dtype))])


_REDUCE = {"mean": "mean", "sum": "sum", "amax": "max", "amin": "min", "prod": "prod", "any": "max"}


@converter(
    "aten.mean.dim", "aten.mean.default", "aten.sum.dim_IntList", "aten.sum.default",
    "aten.amax.default", "aten.amin.default", "aten.prod.dim_int", "aten.prod.default", "aten.any.dim",
    "aten.any.dims", "aten.any.default",
)  # fmt: skip
def _reduce(im, node):
    base = node.op.split(".")[1]
    dtype = node.out_dtype()
    x = _t(im, node["self"])
    x = im.b.cast(x, "int32" if base == "any" else dtype) if base != "any" else im.b.cast(x, "int32")
    dim = node.args.get("dim")
    axes = _axes(dim, im.b.rank(x))
    keep = bool(node.args.get("keepdim", False))
    if axes is None and dim is not None and base in ("amax", "amin") and len(dim) == 0:
        axes = None
    if base == "mean" and keep and axes == [2, 3] and im.b.rank(x) == 4:
        return _emit(im, "nn.global_avg_pool2d", [x])  # global pooling, as Relay's frontends give it
    y = _emit(im, _REDUCE[base], [x], axis=axes, keepdims=keep)
    return im.b.cast(y, "bool") if base == "any" else y


@converter("aten.var.correction", "aten.var.dim")
def _var(im, node):
    x = _t(im, node["self"], node.out_dtype())
    if node.op == "aten.var.dim":
        corr = 1 if node["unbiased"] else 0
    else:
        corr = node["correction"]
        corr = 1 if corr is None else corr
    if corr not in (0, 1):
        raise node.fail(f"correction {corr} is not supported (0 or 1)")
    axes = _axes(node["dim"], im.b.rank(x))
    mean = _emit(im, "mean", [x], axis=axes, keepdims=True)
    return _emit(im, "variance", [x, mean], axis=axes, keepdims=bool(node["keepdim"]), unbiased=corr == 1)


@converter("aten.argmax.default", "aten.argmin.default")
def _argmax(im, node):
    x = _t(im, node["self"])
    dim = node["dim"]
    y = _emit(im, node.op.split(".")[1], [x], axis=None if dim is None else [_axis(dim, im.b.rank(x))], keepdims=bool(node["keepdim"]))
    return im.b.cast(y, "int64")


@converter("aten.max.dim", "aten.min.dim")
def _max_dim(im, node):
    x = _t(im, node["self"])
    axis = [_axis(node["dim"], im.b.rank(x))]
    keep = bool(node["keepdim"])
    kind = node.op.split(".")[1]
    values = _emit(im, kind, [x], axis=axis, keepdims=keep)
    indices = im.b.cast(_emit(im, f"arg{kind}", [x], axis=axis, keepdims=keep), "int64")
    return (values, indices)


@converter("aten.cumsum.default")
def _cumsum(im, node):
    x = _t(im, node["self"], node.out_dtype())
    return _emit(im, "cumsum", [x], axis=_axis(node["dim"], im.b.rank(x)))


# ============================================================================================
# Shapes, views and copies
# ============================================================================================


@converter("aten.view.default", "aten._unsafe_view.default", "aten.reshape.default")
def _view(im, node):
    return im.b.reshape(_t(im, node["self"]), node.out_shape())


@converter("aten.permute.default")
def _permute(im, node):
    x = _t(im, node["self"])
    rank = im.b.rank(x)
    axes = [_axis(d, rank) for d in node["dims"]]
    if axes == list(range(rank)):
        return x
    y = _emit(im, "transpose", [x], axes=axes)
    if axes == [1, 0]:
        im.transposed_of[id(y)] = x
    return y


@converter("aten.t.default")
def _t2(im, node):
    x = _t(im, node["self"])
    if im.b.rank(x) < 2:
        return x
    y = _emit(im, "transpose", [x], axes=[1, 0])
    im.transposed_of[id(y)] = x
    return y


@converter("aten.expand.default")
def _expand(im, node):
    x = _t(im, node["self"])
    want = node.out_shape()
    return x if list(im.b.shape(x)) == want else _emit(im, "broadcast_to", [x], shape=want)


@converter(
    "aten.clone.default", "aten.alias.default", "aten.detach.default", "aten.lift_fresh_copy.default",
    "aten.contiguous.default", "aten.dropout.default",
)  # fmt: skip
def _identity(im, node):
    return _t(im, node.positional[0])


@converter("aten._to_copy.default")
def _to_copy(im, node):
    return im.b.cast(_t(im, node["self"]), node.out_dtype())


@converter("aten.copy.default")
def _copy(im, node):
    # functional copy_: the result is ``src`` broadcast to ``self``'s shape and dtype
    src = _t(im, node["src"], node.out_dtype())
    want = node.out_shape()
    return src if list(im.b.shape(src)) == want else _emit(im, "broadcast_to", [src], shape=want)


@converter("aten.cat.default")
def _cat(im, node):
    dtype = node.out_dtype()
    parts = [_t(im, v, dtype) for v in node["tensors"]]
    rank = max(im.b.rank(p) for p in parts)
    parts = [p for p in parts if not (im.b.rank(p) == 1 and im.b.shape(p)[0] == 0 and rank > 1)]
    if len(parts) == 1:
        return parts[0]
    return _emit(im, "concatenate", parts, axis=_axis(node["dim"], rank))


@converter("aten.stack.default")
def _stack(im, node):
    dtype = node.out_dtype()
    parts = [_t(im, v, dtype) for v in node["tensors"]]
    return _emit(im, "stack", parts, axis=_axis(node["dim"], im.b.rank(parts[0]) + 1))


def _slice_bounds(node: Node, n: int) -> tuple[int, int]:
    """A slice's (start, end) along a dim of size ``n``, as Python clamps them."""
    start = 0 if node["start"] is None else node["start"]
    end = n if node["end"] is None else node["end"]
    start = min(max(start + n if start < 0 else start, 0), n)
    end = min(max(end + n if end < 0 else end, 0), n)
    return start, max(end, start)


@converter("aten.slice.Tensor")
def _slice(im, node):
    x = _t(im, node["self"])
    shape = im.b.shape(x)
    dim = _axis(node["dim"], len(shape))
    n = shape[dim]
    start, end = _slice_bounds(node, n)
    step = node["step"]
    if start == 0 and end == n and step == 1:
        return x
    y = _emit(im, "strided_slice", [x], begin=[start], end=[end], strides=[step], axes=[dim])
    return _fit(im, node, y)


@converter("aten.flip.default")
def _flip(im, node):
    x = _t(im, node["self"])
    shape = im.b.shape(x)
    for d in _axes(node["dims"], len(shape)) or []:
        x = _emit(im, "take", [x, np.arange(shape[d] - 1, -1, -1, dtype=np.int64)], axis=d)
    return x


def _scatter_slice(im: _Importer, node: Node, x: Value, src: Value, dim: int, start: int, end: int) -> Value:
    """``x`` with ``x[start:end]`` along ``dim`` replaced by ``src``: the pieces concatenated."""
    n = im.b.shape(x)[dim]
    parts = []
    if start > 0:
        parts.append(_emit(im, "strided_slice", [x], begin=[0], end=[start], axes=[dim]))
    parts.append(src)
    if end < n:
        parts.append(_emit(im, "strided_slice", [x], begin=[end], end=[n], axes=[dim]))
    return parts[0] if len(parts) == 1 else _emit(im, "concatenate", parts, axis=dim)


@converter("aten.slice_scatter.default", "aten.select_scatter.default")
def _slice_scatter(im, node):
    # what an in-place update of a slice or row (``y[:, 1:].mul_(2)``) becomes once functionalized
    dtype = node.out_dtype()
    x, src = _t(im, node["self"], dtype), _t(im, node["src"], dtype)
    shape = im.b.shape(x)
    dim = _axis(node["dim"], len(shape))
    if node.op == "aten.select_scatter.default":
        start = node["index"] + shape[dim] if node["index"] < 0 else node["index"]
        end = start + 1
        src = _emit(im, "expand_dims", [src], axis=dim)
    else:
        start, end = _slice_bounds(node, shape[dim])
        if node["step"] != 1:
            raise node.fail("slice_scatter with a step other than 1 is not supported")
    return _fit(im, node, _scatter_slice(im, node, x, src, dim, start, end))


@converter("aten.select.int")
def _select(im, node):
    x = _t(im, node["self"])
    shape = im.b.shape(x)
    dim = _axis(node["dim"], len(shape))
    i = node["index"]
    i = i + shape[dim] if i < 0 else i
    y = _emit(im, "strided_slice", [x], begin=[i], end=[i + 1], axes=[dim])
    return _emit(im, "squeeze", [y], axis=[dim])


@converter("aten.unsqueeze.default")
def _unsqueeze(im, node):
    x = _t(im, node["self"])
    return _emit(im, "expand_dims", [x], axis=_axis(node["dim"], im.b.rank(x) + 1))


@converter("aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze.default")
def _squeeze(im, node):
    x = _t(im, node["self"])
    shape = im.b.shape(x)
    dims = node.args.get("dim")
    axes = range(len(shape)) if dims is None else _axes(dims, len(shape)) or []
    axes = [a for a in axes if shape[a] == 1]
    return _emit(im, "squeeze", [x], axis=axes) if axes else x


@converter("aten.split_with_sizes.default", "aten.split.Tensor")
def _split(im, node):
    x = _t(im, node["self"])
    shape = im.b.shape(x)
    dim = _axis(node["dim"], len(shape))
    if node.op == "aten.split.Tensor":
        size = node["split_size"]
        sizes = [min(size, shape[dim] - i) for i in range(0, shape[dim], size)]
    else:
        sizes = list(node["split_sizes"])
    if len(sizes) == 1:
        return (x,)
    indices = list(np.cumsum(sizes)[:-1].tolist())
    return tuple(im.b.emit("split", [x], indices_or_sections=indices, axis=dim))


@converter(
    "aten.constant_pad_nd.default", "aten.reflection_pad1d.default", "aten.reflection_pad2d.default",
    "aten.reflection_pad3d.default", "aten.replication_pad2d.default", "aten.replication_pad3d.default",
)  # fmt: skip
def _pad(im, node):
    x = _t(im, node["self"])
    rank = im.b.rank(x)
    pad = list(node["pad"] if "constant" in node.op else node["padding"])
    widths = [[0, 0] for _ in range(rank)]
    for i in range(len(pad) // 2):
        widths[rank - 1 - i] = [pad[2 * i], pad[2 * i + 1]]
    if any(w < 0 for pair in widths for w in pair):
        raise node.fail("negative padding is not supported")
    dtype = im.b.dtype(x)
    if "constant" in node.op:
        return _emit(im, "nn.pad", [x, np.asarray(node["value"], numpy_dtype(dtype))], pad_width=widths)
    mode = "reflect" if "reflection" in node.op else "edge"  # the last dims, torch's pads
    return _fit(im, node, _emit(im, "nn.pad", [x, _k(x, im, 0.0)], pad_width=widths, pad_mode=mode))


@converter("aten.index.Tensor")
def _index(im, node):
    # x[i0, i1, ...] with tensors (None: the whole dim): the index tensors broadcast to one
    # shape B; the indexed dims are replaced by B where the first of them stood when they are
    # adjacent, and put first otherwise (NumPy's rule, which torch follows). With static shapes
    # that is one `take` over the indexed dims flattened into one, at the flat index
    # sum(i_k mod n_k * stride_k) (the mod is torch's reading of a negative index).
    x = _t(im, node["self"])
    shape = list(im.b.shape(x))
    idx = list(node["indices"])
    used = [d for d, v in enumerate(idx) if v is not None]
    if not used:
        return x
    for d in used:
        if im.b.dtype(_t(im, idx[d])) in ("bool", "uint8"):
            raise node.fail("a boolean mask index (its result's shape depends on the data) is not supported")
    adjacent = used == list(range(used[0], used[-1] + 1))
    rest = [d for d in range(len(shape)) if d not in used]
    if adjacent:
        order, at = list(range(len(shape))), used[0]
    else:
        order, at = used + rest, 0
        x = _emit(im, "transpose", [x], axes=order)
    sizes = [shape[d] for d in used]
    flat = None
    for k, d in enumerate(used):
        i = _t(im, idx[d], "int64")
        i = _emit(im, "floor_mod", [i, np.asarray(shape[d], np.int64)])
        stride = math.prod(sizes[k + 1 :])
        if stride != 1:
            i = _emit(im, "multiply", [i, np.asarray(stride, np.int64)])
        flat = i if flat is None else _emit(im, "add", [flat, i])
    kept = [shape[d] for d in order]
    x = im.b.reshape(x, kept[:at] + [math.prod(sizes)] + kept[at + len(used) :])
    return _fit(im, node, _emit(im, "take", [x, flat], axis=at, mode="fast"))


@converter("aten.gather.default")
def _gather(im, node):
    # out[i_0..i_n] = self[i_0.., index[i_0..i_n] (at dim), ..i_n]; index may be smaller than
    # self in the other dims (torch's definition): gather_nd over the index grid, with
    # index's own values at `dim`
    x = _t(im, node["self"])
    index = _t(im, node["index"], "int64")
    rank = im.b.rank(x)
    dim = _axis(node["dim"], max(rank, 1))
    ishape = list(im.b.shape(index))
    if rank == 0:
        return x
    grids = np.indices(ishape, dtype=np.int64)
    n = np.asarray(im.b.shape(x)[dim], np.int64)
    rows = [_emit(im, "floor_mod", [index, n]) if a == dim else grids[a] for a in range(rank)]
    return _fit(im, node, _emit(im, "gather_nd", [x, _emit(im, "stack", rows, axis=0)]))


@converter("aten.upsample_nearest2d.vec", "aten.upsample_bilinear2d.vec")
def _upsample(im, node):
    x = _t(im, node["input"])
    size = node.out_shape()[2:]
    if "nearest" in node.op:
        attrs = dict(method="nearest_neighbor", coordinate_transformation_mode="asymmetric", rounding_method="floor")
    else:
        ctm = "align_corners" if node["align_corners"] else "half_pixel"
        attrs = dict(method="linear", coordinate_transformation_mode=ctm)
    return _emit(im, "image.resize2d", [x], size=size, layout="NCHW", **attrs)


# ============================================================================================
# Tensors made from nothing (folded: they are constants of the program)
# ============================================================================================


_FILLS = {
    "aten.full.default": "fill_value",
    "aten.full_like.default": "fill_value",
    "aten.scalar_tensor.default": "s",
    "aten.zeros.default": 0,
    "aten.zeros_like.default": 0,
    "aten.empty.memory_format": 0,
    "aten.empty_like.default": 0,
    "aten.ones.default": 1,
    "aten.ones_like.default": 1,
    "aten.fill.Scalar": "value",
    "aten.empty_strided.default": 0,
}
"""Op -> the argument holding its fill value, or the value itself."""


@converter(*_FILLS)
def _full(im, node):
    fill = _FILLS[node.op]
    value = node[fill] if isinstance(fill, str) else fill
    return np.full(node.out_shape(), value, dtype=numpy_dtype(node.out_dtype()))


@converter("aten.arange.start_step", "aten.arange.default", "aten.arange.start")
def _arange(im, node):
    dtype = node.out_dtype()
    start = node.args.get("start", 0) or 0
    end = node["end"]
    step = node.args.get("step", 1) or 1
    out = np.arange(start, end, step).astype(numpy_dtype(dtype))
    if list(out.shape) != node.out_shape():
        raise node.fail(f"arange gives {out.shape[0]} values, torch's result has {node.out_shape()}")
    return out


@converter("aten.index_select.default")
def _index_select(im, node):
    x = _t(im, node["self"])
    return _emit(im, "take", [x, _t(im, node["index"], "int64")], axis=_axis(node["dim"], im.b.rank(x)))


@converter("aten.as_strided.default")
def _as_strided(im, node):
    # a view of the input's (contiguous) storage: element i of the result is storage element
    # offset + sum(i_k * stride_k); with static shapes that is a gather of constant indices
    x = _t(im, node["self"])
    size, stride = list(node["size"]), list(node["stride"])
    offset = node["storage_offset"] or 0
    flat = np.full(size, offset, dtype=np.int64)
    for k, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[k] = n
        flat = flat + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    total = math.prod(im.b.shape(x))
    if flat.size and (flat.min() < 0 or flat.max() >= total):
        raise node.fail(f"the strided view reads outside the input's {total} elements")
    contiguous = [math.prod(size[k + 1 :]) for k in range(len(size))]
    if offset == 0 and flat.size == total and all(s == c for n, s, c in zip(size, stride, contiguous) if n > 1):
        return im.b.reshape(x, size)
    return _emit(im, "take", [im.b.reshape(x, [total]), flat], axis=0)


# ============================================================================================
# Elementwise functions Relay has no op for, composed from the ones it has
# ============================================================================================
#
# Written in the forms that keep float32 accuracy where the naive one loses it: log1p and
# expm1 near 0 (``log(1 + x)`` is 0 for |x| < 6e-8) by Goldberg's and Kahan's corrections,
# and the inverse hyperbolics through them.


def _k(x: Value, im: _Importer, v: float) -> np.ndarray:
    """The scalar ``v`` in ``x``'s dtype."""
    return np.asarray(v, numpy_dtype(im.b.dtype(x)))


def _log1p(im: _Importer, x: Value) -> Value:
    # u = 1 + x rounded; log(u) * x / (u - 1) corrects the rounding of u (Goldberg, 1991)
    u = _emit(im, "add", [x, _k(x, im, 1.0)])
    d = _emit(im, "subtract", [u, _k(x, im, 1.0)])
    r = _emit(im, "divide", [_emit(im, "multiply", [_emit(im, "log", [u]), x]), d])
    y = _emit(im, "where", [_emit(im, "equal", [d, _k(x, im, 0.0)]), x, r])
    return _emit(im, "where", [_emit(im, "equal", [u, _k(x, im, math.inf)]), u, y])


def _expm1(im: _Importer, x: Value) -> Value:
    # u = exp(x) rounded; (u - 1) * x / log(u) corrects it (Kahan)
    u = _emit(im, "exp", [x])
    d = _emit(im, "subtract", [u, _k(x, im, 1.0)])
    r = _emit(im, "divide", [_emit(im, "multiply", [d, x]), _emit(im, "log", [u])])
    y = _emit(im, "where", [_emit(im, "equal", [u, _k(x, im, 1.0)]), x, r])
    y = _emit(im, "where", [_emit(im, "equal", [d, _k(x, im, -1.0)]), d, y])
    return _emit(im, "where", [_emit(im, "equal", [u, _k(x, im, math.inf)]), u, y])


def _sq(im: _Importer, x: Value) -> Value:
    return _emit(im, "multiply", [x, x])


def _asinh(im: _Importer, x: Value) -> Value:
    # sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2))); log|x| + ln 2 where x^2 overflows
    a = _emit(im, "abs", [x])
    s = _emit(im, "sqrt", [_emit(im, "add", [_sq(im, a), _k(x, im, 1.0)])])
    t = _emit(im, "divide", [_sq(im, a), _emit(im, "add", [s, _k(x, im, 1.0)])])
    small = _log1p(im, _emit(im, "add", [a, t]))
    big = _emit(im, "add", [_emit(im, "log", [a]), _k(x, im, math.log(2.0))])
    y = _emit(im, "where", [_emit(im, "greater", [a, _k(x, im, 1e18)]), big, small])
    return _emit(im, "multiply", [_emit(im, "sign", [x]), y])


def _acosh(im: _Importer, x: Value) -> Value:
    # log1p((x - 1) + sqrt((x - 1)(x + 1))); log x + ln 2 where the product overflows
    m = _emit(im, "subtract", [x, _k(x, im, 1.0)])
    r = _emit(im, "sqrt", [_emit(im, "multiply", [m, _emit(im, "add", [x, _k(x, im, 1.0)])])])
    small = _log1p(im, _emit(im, "add", [m, r]))
    big = _emit(im, "add", [_emit(im, "log", [x]), _k(x, im, math.log(2.0))])
    return _emit(im, "where", [_emit(im, "greater", [x, _k(x, im, 1e18)]), big, small])


def _atanh(im: _Importer, x: Value) -> Value:
    # 0.5 log1p(2x / (1 - x))
    q = _emit(im, "divide", [_emit(im, "add", [x, x]), _emit(im, "subtract", [_k(x, im, 1.0), x])])
    return _emit(im, "multiply", [_log1p(im, q), _k(x, im, 0.5)])


def _asin(im: _Importer, x: Value) -> Value:
    # atan(x / sqrt((1 - x)(1 + x))): +-pi/2 at +-1, NaN beyond
    one = _k(x, im, 1.0)
    c = _emit(im, "sqrt", [_emit(im, "multiply", [_emit(im, "subtract", [one, x]), _emit(im, "add", [x, one])])])
    return _emit(im, "atan", [_emit(im, "divide", [x, c])])


def _acos(im: _Importer, x: Value) -> Value:
    # 2 atan(sqrt((1 - x) / (1 + x))): accurate near 1, pi at -1
    one = _k(x, im, 1.0)
    q = _emit(im, "divide", [_emit(im, "subtract", [one, x]), _emit(im, "add", [x, one])])
    return _emit(im, "multiply", [_emit(im, "atan", [_emit(im, "sqrt", [q])]), _k(x, im, 2.0)])


def _sinh(im: _Importer, x: Value) -> Value:
    d = _emit(im, "subtract", [_expm1(im, x), _expm1(im, _emit(im, "negative", [x]))])
    return _emit(im, "multiply", [d, _k(x, im, 0.5)])


def _cosh(im: _Importer, x: Value) -> Value:
    s = _emit(im, "add", [_emit(im, "exp", [x]), _emit(im, "exp", [_emit(im, "negative", [x])])])
    return _emit(im, "multiply", [s, _k(x, im, 0.5)])


def _scaled_log(c: float):
    return lambda im, x: _emit(im, "multiply", [_emit(im, "log", [x]), _k(x, im, c)])


_COMPOSED = {
    "aten.log1p.default": _log1p,
    "aten.expm1.default": _expm1,
    "aten.log2.default": _scaled_log(1 / math.log(2.0)),
    "aten.log10.default": _scaled_log(1 / math.log(10.0)),
    "aten.asinh.default": _asinh,
    "aten.acosh.default": _acosh,
    "aten.atanh.default": _atanh,
    "aten.asin.default": _asin,
    "aten.acos.default": _acos,
    "aten.sinh.default": _sinh,
    "aten.cosh.default": _cosh,
    "aten.atan.default": lambda im, x: _emit(im, "atan", [x]),
    "aten.tan.default": lambda im, x: _emit(im, "tan", [x]),
}


@converter(*_COMPOSED)
def _composed(im, node):
    return _COMPOSED[node.op](im, _t(im, node["self"], node.out_dtype()))


@converter("aten.isnan.default", "aten.isinf.default")
def _isnan(im, node):
    x = _t(im, node["self"])
    if not im.b.dtype(x).startswith(("float", "bfloat")):
        return np.zeros(node.out_shape(), bool)
    if node.op == "aten.isnan.default":
        return _emit(im, "not_equal", [x, x])
    return _emit(im, "equal", [_emit(im, "abs", [x]), _k(x, im, math.inf)])


def _negative_side(im: _Importer, v: Value) -> Value:
    """``v < 0``, or ``v`` is -0 (``1 / v`` is -inf): the sign bit, as C's atan2 reads it."""
    zero = _k(v, im, 0.0)
    minus_zero = _emit(im, "logical_and", [_emit(im, "equal", [v, zero]),
                                           _emit(im, "less", [_emit(im, "divide", [_k(v, im, 1.0), v]), zero])])  # fmt: skip
    return _emit(im, "logical_or", [_emit(im, "less", [v, zero]), minus_zero])


@converter("aten.atan2.default")
def _atan2(im, node):
    # atan(y / x) (y / 0 is +-inf: +-pi/2; y itself at the origin), turned by pi towards y's
    # side where x is on the negative side; signed zeros as C's atan2
    dtype = node.out_dtype()
    y, x = _t(im, node["self"], dtype), _t(im, node["other"], dtype)
    zero = _k(y, im, 0.0)
    origin = _emit(im, "logical_and", [_emit(im, "equal", [x, zero]), _emit(im, "equal", [y, zero])])
    a = _emit(im, "where", [origin, y, _emit(im, "atan", [_emit(im, "divide", [y, x])])])
    turned = _emit(im, "where", [_negative_side(im, y), _emit(im, "subtract", [a, _k(a, im, math.pi)]),
                                 _emit(im, "add", [a, _k(a, im, math.pi)])])  # fmt: skip
    return _emit(im, "where", [_negative_side(im, x), turned, a])


@converter("aten.elu.default")
def _elu(im, node):
    # scale * (x if x > 0 else alpha * expm1(input_scale * x))
    x = _t(im, node["self"], node.out_dtype())
    alpha, scale, in_scale = (float(node[k]) for k in ("alpha", "scale", "input_scale"))
    neg = _expm1(im, _emit(im, "multiply", [x, _k(x, im, in_scale)]) if in_scale != 1 else x)
    neg = _emit(im, "multiply", [neg, _k(x, im, alpha)])
    y = _emit(im, "where", [_emit(im, "greater", [x, _k(x, im, 0.0)]), x, neg])
    return y if scale == 1 else _emit(im, "multiply", [y, _k(x, im, scale)])


# ============================================================================================
# More shapes, pads, pools, sorting and scatters
# ============================================================================================


@converter("aten.repeat.default")
def _repeat(im, node):
    x = _t(im, node["self"])
    reps = list(node["repeats"])
    shape = list(im.b.shape(x))
    x = im.b.reshape(x, [1] * (len(reps) - len(shape)) + shape)
    return _fit(im, node, _emit(im, "tile", [x], reps=reps))


@converter("aten.diagonal.default")
def _diagonal(im, node):
    # the other dims first, then (dim1, dim2) flattened: the diagonal is a take of constant
    # flat positions (i + row0) * n2 + (i + col0), appended as the last dim as torch does
    x = _t(im, node["self"])
    shape = list(im.b.shape(x))
    d1, d2 = _axis(node["dim1"], len(shape)), _axis(node["dim2"], len(shape))
    if d1 == d2:
        raise node.fail("dim1 and dim2 must differ")
    off = int(node["offset"])
    rest = [d for d in range(len(shape)) if d not in (d1, d2)]
    n2 = shape[d2]
    length = node.out_shape()[-1]
    x = _emit(im, "transpose", [x], axes=rest + [d1, d2])
    x = im.b.reshape(x, [shape[d] for d in rest] + [shape[d1] * n2])
    i = np.arange(length, dtype=np.int64)
    flat = (i + max(-off, 0)) * n2 + (i + max(off, 0))
    return _fit(im, node, _emit(im, "take", [x, flat], axis=len(rest)))


@converter("aten.avg_pool3d.default")
def _avg_pool3d(im, node):
    if node["divisor_override"] is not None:
        raise node.fail("divisor_override is not supported")
    k, s, p = _pool_args(node, 3)
    y = _emit(
        im, "nn.avg_pool3d", [_t(im, node["self"])], pool_size=k, strides=s, padding=p + p,
        ceil_mode=bool(node["ceil_mode"]), count_include_pad=bool(node["count_include_pad"]),
    )  # fmt: skip
    return _crop_to(im, node, y)


@converter("aten.max_pool3d_with_indices.default")
def _max_pool3d(im, node):
    k, s, p = _pool_args(node, 3)
    d = list(node["dilation"])
    d = d * 3 if len(d) == 1 else d
    y = _emit(im, "nn.max_pool3d", [_t(im, node["self"])], pool_size=k, strides=s, padding=p + p, dilation=d,
              ceil_mode=bool(node["ceil_mode"]))  # fmt: skip
    return (_crop_to(im, node, y, 0), None)


@converter("aten._adaptive_avg_pool3d.default")
def _adaptive_avg_pool3d(im, node):
    x = _t(im, node["self"])
    if im.b.rank(x) != 5:
        raise node.fail("only 5-D (NCDHW) inputs are supported")
    return _emit(im, "nn.adaptive_avg_pool3d", [x], output_size=list(node["output_size"]))


@converter("aten.topk.default", "aten.sort.default")
def _topk(im, node):
    x = _t(im, node["self"])
    axis = _axis(node["dim"], im.b.rank(x))
    if node.op == "aten.sort.default":
        k, ascend = 0, not node["descending"]
    else:
        k, ascend = int(node["k"]), not node["largest"]
    values, indices = im.b.emit("topk", [x], k=k, axis=axis, ret_type="both", is_ascend=ascend, dtype="int64")
    return (values, indices)


_SCATTER_REDUCE = {"sum": "add", "prod": "mul", "mean": "mean", "amax": "max", "amin": "min"}


@converter("aten.scatter.src", "aten.scatter.value", "aten.scatter_add.default", "aten.scatter_reduce.two")
def _scatter(im, node):
    dtype = node.out_dtype()
    x = _t(im, node["self"], dtype)
    index = _t(im, node["index"], "int64")
    ishape = list(im.b.shape(index))
    dim = _axis(node["dim"], im.b.rank(x))
    if node.op == "aten.scatter.value":
        src: Value = np.full(ishape, node["value"], numpy_dtype(dtype))
    else:
        src = _t(im, node["src"], dtype)
        if list(im.b.shape(src)) != ishape:  # torch reads the index-shaped corner of src
            src = _emit(im, "strided_slice", [src], begin=[0] * len(ishape), end=ishape, axes=list(range(len(ishape))))
    reduction = "update"
    if node.op == "aten.scatter_add.default":
        reduction = "add"
    elif node.op == "aten.scatter_reduce.two":
        if not node["include_self"]:
            raise node.fail("scatter_reduce with include_self=False is not supported")
        reduction = _SCATTER_REDUCE[node["reduce"]]
    return _fit(im, node, _emit(im, "scatter_elements", [x, index, src], axis=dim, reduction=reduction))


@converter("aten.index_put.default")
def _index_put(im, node):
    # x[i0, i1, ...] = v for index tensors of the leading dims: scatter_nd of the index
    # tuples (broadcast to one shape B) with v broadcast to B + the remaining dims
    dtype = node.out_dtype()
    x = _t(im, node["self"], dtype)
    shape = list(im.b.shape(x))
    idx = list(node["indices"])
    if any(v is None for v in idx):
        raise node.fail("index_put with a full slice (None) among the indices is not supported")
    parts = [_t(im, v) for v in idx]
    if any(im.b.dtype(p) in ("bool", "uint8") for p in parts):
        raise node.fail("index_put with a boolean mask (the positions depend on the data) is not supported")
    bshape = list(np.broadcast_shapes(*(tuple(im.b.shape(p)) for p in parts)))
    rows = []
    for p, n in zip(parts, shape):
        p = _emit(im, "floor_mod", [im.b.cast(p, "int64"), np.asarray(n, np.int64)])
        rows.append(p if list(im.b.shape(p)) == bshape else _emit(im, "broadcast_to", [p], shape=bshape))
    indices = _emit(im, "stack", rows, axis=0)
    want = bshape + shape[len(parts):]
    v = _t(im, node["values"], dtype)
    v = v if list(im.b.shape(v)) == want else _emit(im, "broadcast_to", [v], shape=want)
    mode = "add" if node["accumulate"] else "update"
    return _fit(im, node, _emit(im, "scatter_nd", [x, indices, v], mode=mode))


@converter("aten.grid_sampler_2d.default")
def _grid_sampler_2d(im, node):
    x, grid = _t(im, node["input"]), _t(im, node["grid"])
    method = {0: "bilinear", 1: "nearest", 2: "bicubic"}[int(node["interpolation_mode"])]
    padding = {0: "zeros", 1: "border", 2: "reflection"}[int(node["padding_mode"])]
    grid = _emit(im, "transpose", [grid], axes=[0, 3, 1, 2])  # (N, H, W, 2) -> relay's (N, 2, H, W)
    y = _emit(im, "image.grid_sample", [x, grid], method=method, layout="NCHW", padding_mode=padding,
              align_corners=bool(node["align_corners"]))  # fmt: skip
    return _fit(im, node, y)


@converter("aten.native_dropout.default")
def _native_dropout(im, node):
    if node["train"] and node["p"]:
        raise node.fail("dropout in training mode is random (export the model in eval() mode)")
    return (_t(im, node["input"]), np.ones(node.out_shape(1), bool))
