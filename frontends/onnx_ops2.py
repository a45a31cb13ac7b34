"""More ONNX operators: logic, bitwise, modulo, trigonometry, activations, arg/extra reductions.

Each maps as Relay's ONNX frontend (TVM v0.19) maps it: onto Relay's own op where Relay had
one (``And`` -> ``logical_and``, ``Mod`` -> ``floor_mod``/``mod``, ``Sin`` -> ``sin``,
``ArgMax`` -> ``argmax`` then a cast to int64, ...), else onto the composition the frontend
used (``Elu``, ``Selu``, ``HardSigmoid``, ``Softplus``, ``ReduceL2`` = sqrt(sum(x*x)), the
inverse trigonometric and hyperbolic functions through ``log``/``sqrt``/``atan``...).

``ReduceMax``/``ReduceMin`` over an empty axis give -inf/+inf (the lowest/highest integer),
ONNX's identity, as a constant of the output shape.
"""

from __future__ import annotations

import math

import numpy as np

from xrelay.dialects.relay import numpy_dtype
from xrelay.frontends.onnx import (
    _CONVERTERS,
    _REDUCE,
    _axes_arg,
    _Importer,
    _Node,
    _op,
    _Val,
    onnx_cast,
)

_REDUCE_STATIC = _CONVERTERS["ReduceMax"]

_SAME = {
    "Sin": "sin",
    "Cos": "cos",
    "Tan": "tan",
    "Atan": "atan",
    "Sign": "sign",
    "Not": "logical_not",
}


@_op(*_SAME)
def _same_name(im: _Importer, node: _Node) -> list[_Val]:
    return im.emit(_SAME[node.op_type], [node.inputs[0]])


_LOGIC = {
    "And": "logical_and",
    "Or": "logical_or",
    "Xor": "logical_xor",
    "BitwiseAnd": "bitwise_and",
    "BitwiseOr": "bitwise_or",
    "BitwiseXor": "bitwise_xor",
}


@_op(*_LOGIC)
def _logic(im, node):
    return im.emit(_LOGIC[node.op_type], node.inputs[:2])


@_op("BitwiseNot")
def _bitwise_not(im, node):
    x = node.inputs[0]
    ones = np.array(-1).astype(numpy_dtype(im.dtype_of(x)))  # all bits set
    return im.emit("bitwise_xor", [x, im.const(ones)])


@_op("Mod")
def _mod(im, node):
    a, b = node.inputs[:2]
    fmod = int(node.attrs.get("fmod", 0))
    return im.emit("mod" if fmod else "floor_mod", [a, b])


@_op("CastLike")
def _cast_like(im, node):
    return [onnx_cast(im, node, node.inputs[0], im.dtype_of(node.inputs[1]))]


@_op("ArgMax", "ArgMin")
def _arg(im, node):
    x = node.inputs[0]
    axis = int(node.attrs.get("axis", 0))
    y = im.emit1(
        "argmax" if node.op_type == "ArgMax" else "argmin",
        [x],
        axis=[axis],
        keepdims=bool(node.attrs.get("keepdims", 1)),
        select_last_index=bool(node.attrs.get("select_last_index", 0)),
    )
    return [im.cast_like(y, "int64")]


# ---- activations (compositions, as Relay's frontend) --------------------------------------------


def _s(im: _Importer, value: float, like: _Val) -> _Val:
    return im.scalar(value, like)


def _e(im: _Importer, name: str, *vals: _Val) -> _Val:
    return im.emit1(name, list(vals))


@_op("Elu")
def _elu(im, node):
    x = node.inputs[0]
    alpha = float(node.attrs.get("alpha", 1.0))
    # -alpha * relu(1 - exp(x)) + relu(x)
    neg = _e(im, "nn.relu", _e(im, "subtract", _s(im, 1.0, x), _e(im, "exp", x)))
    return [_e(im, "add", _e(im, "multiply", _s(im, -alpha, x), neg), _e(im, "nn.relu", x))]


@_op("Celu")
def _celu(im, node):
    x = node.inputs[0]
    alpha = float(node.attrs.get("alpha", 1.0))
    # max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
    zero = _s(im, 0.0, x)
    inner = _e(im, "exp", _e(im, "divide", x, _s(im, alpha, x)))
    neg = _e(im, "minimum", zero, _e(im, "multiply", _s(im, alpha, x), _e(im, "subtract", inner, _s(im, 1.0, x))))
    return [_e(im, "add", _e(im, "maximum", zero, x), neg)]


@_op("Selu")
def _selu(im, node):
    x = node.inputs[0]
    alpha = float(node.attrs.get("alpha", 1.67326319217681884765625))
    gamma = float(node.attrs.get("gamma", 1.05070102214813232421875))
    neg = _e(im, "nn.relu", _e(im, "subtract", _s(im, 1.0, x), _e(im, "exp", x)))
    inner = _e(im, "add", _e(im, "multiply", _s(im, -alpha, x), neg), _e(im, "nn.relu", x))
    return [_e(im, "multiply", _s(im, gamma, x), inner)]


@_op("HardSigmoid")
def _hard_sigmoid(im, node):
    x = node.inputs[0]
    alpha = float(node.attrs.get("alpha", 0.2))
    beta = float(node.attrs.get("beta", 0.5))
    t = _e(im, "add", _e(im, "multiply", x, _s(im, alpha, x)), _s(im, beta, x))
    return im.emit("clip", [t], a_min=0.0, a_max=1.0)


@_op("HardSwish")
def _hard_swish(im, node):
    x = node.inputs[0]
    t = _e(im, "add", _e(im, "multiply", x, _s(im, 1.0 / 6.0, x)), _s(im, 0.5, x))
    return [_e(im, "multiply", x, im.emit1("clip", [t], a_min=0.0, a_max=1.0))]


def _softplus_of(im: _Importer, x: _Val) -> _Val:
    # log(1 + exp(x)) without overflow: relu(x) + log(1 + exp(-|x|))
    tail = _e(im, "log", _e(im, "add", _s(im, 1.0, x), _e(im, "exp", _e(im, "negative", _e(im, "abs", x)))))
    return _e(im, "add", _e(im, "nn.relu", x), tail)


@_op("Softplus")
def _softplus(im, node):
    return [_softplus_of(im, node.inputs[0])]


@_op("Mish")
def _mish(im, node):
    x = node.inputs[0]
    return [_e(im, "multiply", x, _e(im, "tanh", _softplus_of(im, x)))]


@_op("Softsign")
def _softsign(im, node):
    x = node.inputs[0]
    return [_e(im, "divide", x, _e(im, "add", _s(im, 1.0, x), _e(im, "abs", x)))]


@_op("ThresholdedRelu")
def _thresholded_relu(im, node):
    x = node.inputs[0]
    alpha = float(node.attrs.get("alpha", 1.0))
    mask = im.cast_like(_e(im, "greater", x, _s(im, alpha, x)), im.dtype_of(x))
    return [_e(im, "multiply", x, mask)]


@_op("Shrink")
def _shrink(im, node):
    x = node.inputs[0]
    lambd = float(node.attrs.get("lambd", 0.5))
    bias = float(node.attrs.get("bias", 0.0))
    zero = _s(im, 0, x)
    hi = _e(im, "where", _e(im, "greater", x, _s(im, lambd, x)), _e(im, "subtract", x, _s(im, bias, x)), zero)
    lo = _e(im, "where", _e(im, "less", x, _s(im, -lambd, x)), _e(im, "add", x, _s(im, bias, x)), hi)
    return [lo]


@_op("Swish")
def _swish(im, node):
    x = node.inputs[0]
    alpha = float(node.attrs.get("alpha", 1.0))
    return [_e(im, "multiply", x, _e(im, "sigmoid", _e(im, "multiply", x, _s(im, alpha, x))))]


@_op("Gelu")
def _gelu(im, node):
    x = node.inputs[0]
    if node.attrs.get("approximate", "none") == "tanh":
        # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        cube = _e(im, "multiply", _e(im, "multiply", x, x), x)
        inner = _e(im, "add", x, _e(im, "multiply", _s(im, 0.044715, x), cube))
        t = _e(im, "tanh", _e(im, "multiply", _s(im, math.sqrt(2.0 / math.pi), x), inner))
    else:
        t = _e(im, "erf", _e(im, "multiply", x, _s(im, 1.0 / math.sqrt(2.0), x)))
    half = _e(im, "multiply", x, _s(im, 0.5, x))
    return [_e(im, "multiply", half, _e(im, "add", _s(im, 1.0, x), t))]


@_op("IsNaN")
def _isnan(im, node):
    x = node.inputs[0]
    return im.emit("not_equal", [x, x])


@_op("IsInf")
def _isinf(im, node):
    x = node.inputs[0]
    pos = bool(node.attrs.get("detect_positive", 1))
    neg = bool(node.attrs.get("detect_negative", 1))
    hits = []
    if pos:
        hits.append(_e(im, "equal", x, _s(im, math.inf, x)))
    if neg:
        hits.append(_e(im, "equal", x, _s(im, -math.inf, x)))
    if not hits:
        return [im.const(np.zeros(im.static_shape(x, node), np.bool_))]
    return [hits[0] if len(hits) == 1 else _e(im, "logical_or", *hits)]


# ---- trigonometric and hyperbolic functions through exp/log/sqrt/atan ------------------------


@_op("Asin", "Acos")
def _asin_acos(im, node):
    x = node.inputs[0]
    # asin(x) = 2 atan(x / (1 + sqrt(1 - x^2))), exact at +-1
    root = _e(im, "sqrt", _e(im, "subtract", _s(im, 1.0, x), _e(im, "multiply", x, x)))
    asin = _e(im, "multiply", _s(im, 2.0, x), _e(im, "atan", _e(im, "divide", x, _e(im, "add", _s(im, 1.0, x), root))))
    if node.op_type == "Asin":
        return [asin]
    return [_e(im, "subtract", _s(im, math.pi / 2, x), asin)]


@_op("Sinh", "Cosh")
def _sinh_cosh(im, node):
    x = node.inputs[0]
    a, b = _e(im, "exp", x), _e(im, "exp", _e(im, "negative", x))
    both = _e(im, "subtract" if node.op_type == "Sinh" else "add", a, b)
    return [_e(im, "multiply", both, _s(im, 0.5, x))]


@_op("Asinh", "Acosh")
def _asinh_acosh(im, node):
    x = node.inputs[0]
    sq = _e(im, "multiply", x, x)
    sq = _e(im, "add" if node.op_type == "Asinh" else "subtract", sq, _s(im, 1.0, x))
    return [_e(im, "log", _e(im, "add", x, _e(im, "sqrt", sq)))]


@_op("Atanh")
def _atanh(im, node):
    x = node.inputs[0]
    ratio = _e(im, "divide", _e(im, "add", _s(im, 1.0, x), x), _e(im, "subtract", _s(im, 1.0, x), x))
    return [_e(im, "multiply", _e(im, "log", ratio), _s(im, 0.5, x))]


# ---- reductions --------------------------------------------------------------------------------


def _reduced_axes(im: _Importer, node: _Node, attr_opset: int) -> list[int] | None:
    return _axes_arg(im, node, attr_opset)


def _reduce_on(im: _Importer, node: _Node, relay: str, x: _Val) -> _Val:
    axes = _reduced_axes(im, node, 18)
    keep = bool(node.attrs.get("keepdims", 1))
    if not axes:
        if node.attrs.get("noop_with_empty_axes", 0):
            return x
        axes = None
    return im.emit1(relay, [x], axis=axes, keepdims=keep)


@_op("ReduceL1")
def _reduce_l1(im, node):
    return [_reduce_on(im, node, "sum", _e(im, "abs", node.inputs[0]))]


@_op("ReduceL2")
def _reduce_l2(im, node):
    x = node.inputs[0]
    return [_e(im, "sqrt", _reduce_on(im, node, "sum", _e(im, "multiply", x, x)))]


@_op("ReduceSumSquare")
def _reduce_sum_square(im, node):
    x = node.inputs[0]
    return [_reduce_on(im, node, "sum", _e(im, "multiply", x, x))]


@_op("ReduceLogSum")
def _reduce_log_sum(im, node):
    return [_e(im, "log", _reduce_on(im, node, "sum", node.inputs[0]))]


@_op("ReduceLogSumExp")
def _reduce_log_sum_exp(im, node):
    x = node.inputs[0]
    # max + log(sum(exp(x - max))), the max kept for broadcasting
    keep = bool(node.attrs.get("keepdims", 1))
    axes = _reduced_axes(im, node, 18)
    if not axes and node.attrs.get("noop_with_empty_axes", 0):
        return [x]
    axes = axes or None
    shape = im.static_shape(x, node)
    if any(shape[a] == 0 for a in (axes if axes is not None else range(len(shape)))):
        return [_e(im, "log", im.emit1("sum", [_e(im, "exp", x)], axis=axes, keepdims=keep))]
    m = im.emit1("max", [x], axis=axes, keepdims=True)
    s = im.emit1("sum", [_e(im, "exp", _e(im, "subtract", x, m))], axis=axes, keepdims=keep)
    m_out = m if keep else im.reshape(m, im.shape_of(s))
    return [_e(im, "add", _e(im, "log", s), m_out)]


@_op("ReduceMax", "ReduceMin")
def _reduce_extreme(im, node):
    """The reduction, or ONNX's identity (-inf for max, +inf for min) over an empty axis."""
    x = node.inputs[0]
    shape = im.shape_of(x)
    axes = _axes_arg(im, node, _REDUCE[node.op_type][1])
    if not axes and node.attrs.get("noop_with_empty_axes", 0):
        return [x]
    red = [a % len(shape) for a in axes] if axes else list(range(len(shape)))
    if not any(shape[a] == 0 for a in red):
        return _REDUCE_STATIC(im, node)
    keep = bool(node.attrs.get("keepdims", 1))
    out_shape = [1 if a in red else d for a, d in enumerate(shape) if keep or a not in red]
    if any(d is None for d in out_shape):
        raise node.fail(f"needs a static input shape, got {list(shape)}")
    dt = np.dtype(numpy_dtype(im.dtype_of(x)))
    big = math.inf if dt.kind == "f" else (np.iinfo(dt).max if dt.kind in "iu" else True)
    small = -math.inf if dt.kind == "f" else (np.iinfo(dt).min if dt.kind in "iu" else False)
    return [im.const(np.full(out_shape, small if node.op_type == "ReduceMax" else big, dtype=dt))]


# ---- element gathers and the losses built on them -----------------------------------------------


def _wrap_index(im: _Importer, idx: _Val, dim: int) -> _Val:
    """ONNX indices in [-dim, dim) as [0, dim)."""
    idx = im.cast_like(idx, "int64")
    neg = _e(im, "less", idx, im.const(np.int64(0)))
    return _e(im, "where", neg, _e(im, "add", idx, im.const(np.int64(dim))), idx)


def _gather_elements(im: _Importer, node: _Node, data: _Val, idx: _Val, axis: int) -> _Val:
    """``out[i0..in] = data[i0.., idx[i0..in], ..in]`` as ``gather_nd`` over index grids."""
    ishape = im.static_shape(idx, node)
    rank = len(ishape)
    dim = im.static_shape(data, node)[axis]
    grids = np.indices(ishape, dtype=np.int64)
    rows = [_wrap_index(im, idx, dim) if a == axis else im.const(grids[a]) for a in range(rank)]
    stacked = im.emit1("stack", rows, axis=0)
    return im.emit1("gather_nd", [data, stacked])


@_op("GatherElements")
def _gather_elements_op(im, node):
    data, idx = node.inputs[:2]
    rank = im.rank(data)
    axis = int(node.attrs.get("axis", 0))
    return [_gather_elements(im, node, data, idx, axis + rank if axis < 0 else axis)]


def _nll(im: _Importer, node: _Node, logp: _Val, target: _Val, weight: _Val | None) -> _Val:
    """ONNX's NegativeLogLikelihoodLoss on log-probabilities ``logp`` (N, C, d...)."""
    reduction = node.attrs.get("reduction", "mean")
    ignore = node.attrs.get("ignore_index")
    shape = im.static_shape(logp, node)
    n_class = shape[1]
    target = im.cast_like(target, "int64")
    tshape = im.static_shape(target, node)
    keep = None
    if ignore is not None:
        keep = _e(im, "not_equal", target, im.const(np.int64(ignore)))
        target = _e(im, "where", keep, target, im.const(np.int64(0)))
    grids = np.indices(tshape, dtype=np.int64)
    rows = [im.const(grids[0]), target] + [im.const(g) for g in grids[1:]]
    picked = im.emit1("gather_nd", [logp, im.emit1("stack", rows, axis=0)])
    if weight is not None:
        w = im.emit1("take", [weight, target], axis=0)
    else:
        w = im.const(np.ones(tshape, numpy_dtype(im.dtype_of(logp))))
    if keep is not None:
        w = _e(im, "multiply", w, im.cast_like(keep, im.dtype_of(logp)))
    loss = _e(im, "negative", _e(im, "multiply", picked, w))
    del n_class
    if reduction == "none":
        return loss
    total = im.emit1("sum", [loss], axis=None, keepdims=False)
    if reduction == "sum":
        return total
    if reduction != "mean":
        raise node.fail(f"unknown reduction '{reduction}'")
    return _e(im, "divide", total, im.emit1("sum", [w], axis=None, keepdims=False))


@_op("NegativeLogLikelihoodLoss")
def _nll_loss(im, node):
    return [_nll(im, node, node.inputs[0], node.inputs[1], node.input(2))]


@_op("SoftmaxCrossEntropyLoss")
def _softmax_cross_entropy(im, node):
    scores = node.inputs[0]
    logp = im.emit1("nn.log_softmax", [scores], axis=1)
    loss = _nll(im, node, logp, node.inputs[1], node.input(2))
    return [loss, logp][: max(1, node.num_outputs)]


# ---- normalisations ------------------------------------------------------------------------------


@_op("RMSNormalization")
def _rms_norm(im, node):
    x, scale = node.inputs[:2]
    rank = im.rank(x)
    axis = int(node.attrs.get("axis", -1))
    axis = axis + rank if axis < 0 else axis
    eps = float(node.attrs.get("epsilon", 1e-5))
    axes = list(range(axis, rank))
    ms = im.emit1("mean", [_e(im, "multiply", x, x)], axis=axes, keepdims=True)
    inv = _e(im, "rsqrt", _e(im, "add", ms, _s(im, eps, ms)))
    return [_e(im, "multiply", _e(im, "multiply", x, inv), scale)]


_LAYER_NORM = _CONVERTERS["LayerNormalization"]


@_op("LayerNormalization")
def _layer_norm_stats(im, node):
    """With the optional Mean and InvStdDev outputs (reduced axes kept as 1), else as before."""
    if node.num_outputs == 1:
        return _LAYER_NORM(im, node)
    x, scale, bias = node.inputs[0], node.inputs[1], node.input(2)
    rank = im.rank(x)
    axis = int(node.attrs.get("axis", -1))
    axis = axis + rank if axis < 0 else axis
    eps = float(node.attrs.get("epsilon", 1e-5))
    axes = list(range(axis, rank))
    mean = im.emit1("mean", [x], axis=axes, keepdims=True)
    d = _e(im, "subtract", x, mean)
    var = im.emit1("mean", [_e(im, "multiply", d, d)], axis=axes, keepdims=True)
    inv = _e(im, "divide", _s(im, 1.0, var), _e(im, "sqrt", _e(im, "add", var, _s(im, eps, var))))
    y = _e(im, "multiply", _e(im, "multiply", d, inv), scale)
    if bias is not None:
        y = _e(im, "add", y, bias)
    return [y, mean, inv][: node.num_outputs]


# ---- masks and rounding --------------------------------------------------------------------------


@_op("Trilu")
def _trilu(im, node):
    x = node.inputs[0]
    shape = im.static_shape(x, node)
    rows, cols = shape[-2], shape[-1]
    diag = np.arange(cols, dtype=np.int64)[None, :] - np.arange(rows, dtype=np.int64)[:, None]
    k = node.input(1)
    k = im.const(np.int64(0)) if k is None else im.reshape(im.cast_like(k, "int64"), [])
    upper = bool(node.attrs.get("upper", 1))
    mask = _e(im, "greater_equal" if upper else "less_equal", im.const(diag), k)
    return [_e(im, "where", mask, x, im.const(np.zeros((), numpy_dtype(im.dtype_of(x)))))]


@_op("Round")
def _round_even(im, node):
    """ONNX rounds halves to even (Relay's ``round`` goes away from zero)."""
    x = node.inputs[0]
    fl = _e(im, "floor", x)
    frac = _e(im, "subtract", x, fl)
    up = _e(im, "add", fl, _s(im, 1.0, x))
    odd = _e(im, "not_equal", _e(im, "floor_mod", fl, _s(im, 2.0, x)), _s(im, 0.0, x))
    half = _e(im, "where", odd, up, fl)
    nearest = _e(im, "where", _e(im, "greater", frac, _s(im, 0.5, x)), up, fl)
    return [_e(im, "where", _e(im, "equal", frac, _s(im, 0.5, x)), half, nearest)]


@_op("Hardmax")
def _hardmax(im, node):
    x = node.inputs[0]
    rank = im.rank(x)
    axis = int(node.attrs.get("axis", -1))
    axis = axis + rank if axis < 0 else axis
    shape = im.static_shape(x, node)
    if node.opset < 13:  # the input viewed as 2-D [prod(d[:axis]), prod(d[axis:])]
        flat = im.reshape(x, [math.prod(shape[:axis]), math.prod(shape[axis:])])
        return [im.reshape(_hardmax_axis(im, flat, 1, [math.prod(shape[:axis]), math.prod(shape[axis:])]), shape)]
    return [_hardmax_axis(im, x, axis, list(shape))]


def _hardmax_axis(im: _Importer, x: _Val, axis: int, shape: list[int]) -> _Val:
    first = im.emit1("argmax", [x], axis=[axis], keepdims=True)
    iota = np.arange(shape[axis], dtype=np.int32).reshape([-1 if a == axis else 1 for a in range(len(shape))])
    hit = _e(im, "equal", first, im.const(iota))
    return im.cast_like(hit, im.dtype_of(x))


# ---- training-mode Dropout and BatchNormalization ------------------------------------------------

_DROPOUT = _CONVERTERS["Dropout"]
_BATCH_NORM = _CONVERTERS["BatchNormalization"]


@_op("Dropout")
def _dropout_training(im, node):
    """Training mode with ratio 0 is the identity (mask all true); a ratio > 0 draws random
    numbers, which an inference compiler does not (refused with that reason)."""
    training = node.input(2)
    if training is None or (training.known and not bool(training.const)):
        return _DROPOUT(im, node)
    ratio = node.input(1)
    r = 0.5 if ratio is None else (float(np.asarray(ratio.const).reshape(())) if ratio.known else None)
    if r != 0.0:
        raise node.fail("training mode with a ratio that is not a constant 0 is random; not supported")
    x = node.inputs[0]
    return [x, im.const(np.ones(im.static_shape(x, node), dtype=np.bool_))][: node.num_outputs]


@_op("BatchNormalization")
def _batch_norm_training(im, node):
    """``training_mode = 1``: normalise with the batch's statistics and return the updated
    running mean and variance (``running * momentum + batch * (1 - momentum)``)."""
    if not node.attrs.get("training_mode", 0):
        return _BATCH_NORM(im, node)
    x, g, b, mean, var = node.inputs[:5]
    rank = im.rank(x)
    axes = [a for a in range(rank) if a != 1]
    eps = float(node.attrs.get("epsilon", 1e-5))
    momentum = float(node.attrs.get("momentum", 0.9))
    bshape = [-1 if a == 1 else 1 for a in range(rank)]
    channels = im.static_shape(x, node)[1]
    bshape = [channels if d == -1 else d for d in bshape]
    m = im.emit1("mean", [x], axis=axes, keepdims=True)
    d = _e(im, "subtract", x, m)
    v = im.emit1("mean", [_e(im, "multiply", d, d)], axis=axes, keepdims=True)
    inv = _e(im, "rsqrt", _e(im, "add", v, _s(im, eps, v)))
    y = _e(im, "add", _e(im, "multiply", _e(im, "multiply", d, inv), im.reshape(g, bshape)), im.reshape(b, bshape))
    m1, v1 = im.reshape(m, [channels]), im.reshape(v, [channels])

    def running(old: _Val, batch: _Val) -> _Val:
        return _e(im, "add", _e(im, "multiply", old, _s(im, momentum, old)), _e(im, "multiply", batch, _s(im, 1.0 - momentum, batch)))

    return [y, running(mean, m1), running(var, v1)][: node.num_outputs]


# ---- layout shuffles and constants -----------------------------------------------------------------


@_op("DepthToSpace")
def _depth_to_space(im, node):
    x = node.inputs[0]
    n, c, h, w = im.static_shape(x, node)
    bs = int(node.attrs["blocksize"])
    if node.attrs.get("mode", "DCR") == "DCR":
        t = im.reshape(x, [n, bs, bs, c // (bs * bs), h, w])
        t = im.emit1("transpose", [t], axes=[0, 3, 4, 1, 5, 2])
    else:  # CRD
        t = im.reshape(x, [n, c // (bs * bs), bs, bs, h, w])
        t = im.emit1("transpose", [t], axes=[0, 1, 4, 2, 5, 3])
    return [im.reshape(t, [n, c // (bs * bs), h * bs, w * bs])]


@_op("SpaceToDepth")
def _space_to_depth(im, node):
    x = node.inputs[0]
    n, c, h, w = im.static_shape(x, node)
    bs = int(node.attrs["blocksize"])
    t = im.reshape(x, [n, c, h // bs, bs, w // bs, bs])
    crd = node.attrs.get("mode", "DCR") == "CRD"  # channels outermost, then the block offsets
    t = im.emit1("transpose", [t], axes=[0, 1, 3, 5, 2, 4] if crd else [0, 3, 5, 1, 2, 4])
    return [im.reshape(t, [n, c * bs * bs, h // bs, w // bs])]


@_op("EyeLike")
def _eye_like(im, node):
    x = node.inputs[0]
    rows, cols = im.static_shape(x, node)
    dtype = numpy_dtype(_onnx_dtype(node) or im.dtype_of(x))
    return [im.const(np.eye(rows, cols, k=int(node.attrs.get("k", 0)), dtype=dtype))]


def _onnx_dtype(node: _Node) -> str | None:
    from xrelay.frontends.onnx import _relay_dtype

    to = node.attrs.get("dtype")
    return None if to is None else _relay_dtype(to, f"{node.op_type} node '{node.name}'")


# ---- Attention (opset 23) -------------------------------------------------------------------------


def _bmm(im: _Importer, a: _Val, b: _Val, transpose_b: bool) -> _Val:
    """4-D ``a @ b`` (``b`` transposed when asked) through 3-D ``nn.batch_matmul``."""
    sa, sb = im.shape_of(a), im.shape_of(b)
    a3 = im.reshape(a, [sa[0] * sa[1], sa[2], sa[3]])
    b3 = im.reshape(b, [sb[0] * sb[1], sb[2], sb[3]])
    y = im.emit1("nn.batch_matmul", [a3, b3], transpose_a=False, transpose_b=transpose_b)
    return im.reshape(y, [sa[0], sa[1], sa[2], sb[2] if transpose_b else sb[3]])


def _to_heads(im: _Importer, x: _Val, heads: int) -> _Val:
    b, s, hidden = im.shape_of(x)
    t = im.reshape(x, [b, s, heads, hidden // heads])
    return im.emit1("transpose", [t], axes=[0, 2, 1, 3])


def _bias_of_mask(im: _Importer, mask: _Val, dtype: str) -> _Val:
    if im.dtype_of(mask) != "bool":
        return mask
    zero, ninf = np.zeros((), numpy_dtype(dtype)), np.array(-np.inf, numpy_dtype(dtype))
    return _e(im, "where", mask, im.const(zero), im.const(ninf))


@_op("Attention")
def _attention(im, node):
    """ONNX's Attention: scaled dot-product attention with masks, causal and sliding windows,
    a KV cache (past -> present), grouped heads, softcap and the qk output modes."""
    q, k, v = node.inputs[:3]
    mask, past_k, past_v = node.input(3), node.input(4), node.input(5)
    nonpad = node.input(6)
    a = node.attrs
    dtype = im.dtype_of(q)
    rank = im.rank(q)
    if rank == 3:
        q = _to_heads(im, q, int(a["q_num_heads"]))
        k = _to_heads(im, k, int(a["kv_num_heads"]))
        v = _to_heads(im, v, int(a["kv_num_heads"]))
    batch, q_heads, q_len, head = im.static_shape(q, node)
    scale = a.get("scale")
    scale = 1.0 / math.sqrt(head) if scale is None else float(scale)
    root = math.sqrt(scale)  # both sides scaled by sqrt(scale), as ONNX's reference
    if past_k is not None:
        k = im.emit1("concatenate", [past_k, k], axis=2)
        v = im.emit1("concatenate", [past_v, v], axis=2)
    present_k, present_v = k, v
    past = im.static_shape(past_k, node)[2] if past_k is not None else 0
    kv_len = im.static_shape(k, node)[2]
    kv_heads = im.shape_of(k)[1]
    np_dt = numpy_dtype(dtype)
    # the additive bias: a run-time mask plus static causal / window terms
    bias = None
    if mask is not None:
        ms = im.static_shape(mask, node)
        if ms[-1] < kv_len:
            fill = np.zeros((*ms[:-1], kv_len - ms[-1]), dtype=numpy_dtype(im.dtype_of(mask)))
            fill[...] = False if im.dtype_of(mask) == "bool" else -np.inf
            mask = im.emit1("concatenate", [mask, im.const(fill)], axis=len(ms) - 1)
        bias = _bias_of_mask(im, mask, dtype)
    i = np.arange(q_len).reshape(-1, 1) + past
    j = np.arange(kv_len).reshape(1, -1)
    allowed = np.ones((q_len, kv_len), dtype=bool)
    if a.get("is_causal", 0):
        allowed &= j <= i
    left, right = int(a.get("left_window_size", -1)), int(a.get("right_window_size", -1))
    if left >= 0:
        allowed &= i - j <= left
    if right >= 0:
        allowed &= j - i <= right
    if nonpad is not None and (past_k is not None or not allowed.all()):
        # the masks combine per batch row here: ONNX's own function body for this node
        return im.expand_function(node.proto, node)
    if not allowed.all():
        static = im.const(np.where(allowed, 0, -np.inf).astype(np_dt))
        bias = static if bias is None else _e(im, "add", bias, static)
    if nonpad is not None:
        lens = im.reshape(im.cast_like(nonpad, "int64"), [batch, 1, 1, 1])
        keep = _e(im, "less", im.const(np.arange(kv_len, dtype=np.int64).reshape(1, 1, 1, kv_len)), lens)
        pad_bias = _bias_of_mask(im, keep, dtype)
        bias = pad_bias if bias is None else _e(im, "add", bias, pad_bias)
    if kv_heads != q_heads:
        k = im.emit1("repeat", [k], repeats=q_heads // kv_heads, axis=1)
        v = im.emit1("repeat", [v], repeats=q_heads // kv_heads, axis=1)
    qs = _e(im, "multiply", q, im.const(np.array(root, np_dt)))
    ks = _e(im, "multiply", k, im.const(np.array(root, np_dt)))
    qk = _bmm(im, qs, ks, transpose_b=True)
    softcap = float(a.get("softcap", 0.0))
    if softcap > 0:
        c = im.const(np.array(softcap, np_dt))
        qk = _e(im, "multiply", _e(im, "tanh", _e(im, "divide", qk, c)), c)
    with_bias = qk if bias is None else _e(im, "add", qk, bias)
    mode = int(a.get("qk_matmul_output_mode", 0))
    qk_out = with_bias if mode == 2 else qk
    sm_in = with_bias
    precision = a.get("softmax_precision")
    if precision is not None:
        from xrelay.frontends.onnx import _relay_dtype

        sm_in = im.cast_like(sm_in, _relay_dtype(precision, f"Attention node '{node.name}'"))
    sm = im.emit1("nn.softmax", [sm_in], axis=-1)
    if bias is not None:  # rows masked everywhere give 0, not NaN
        dead = _e(im, "equal", im.emit1("max", [bias], axis=[-1], keepdims=True), im.const(np.array(-np.inf, np_dt)))
        sm = _e(im, "where", dead, im.const(np.zeros((), numpy_dtype(im.dtype_of(sm)))), sm)
    sm = im.cast_like(sm, dtype)
    if mode == 3:
        qk_out = sm
    y = _bmm(im, sm, v, transpose_b=False)
    if rank == 3:
        y = im.emit1("transpose", [y], axes=[0, 2, 1, 3])
        ys = im.shape_of(y)
        y = im.reshape(y, [ys[0], ys[1], ys[2] * ys[3]])
    return [y, present_k, present_v, im.cast_like(qk_out, dtype)][: node.num_outputs]


# ---- Lp pooling, local response and mean-variance normalisation ----------------------------------


@_op("LpPool")
def _lp_pool(im, node):
    return _pool1d(im, node, _lp_pool_2d)


def _lp_pool_2d(im: _Importer, node: _Node) -> list[_Val]:
    """(sum over the window of |x|^p)^(1/p): an average pool of |x|^p counting the padding,
    times the window size (as Relay's frontend)."""
    from dataclasses import replace

    from xrelay.frontends.onnx import _pool

    x = node.inputs[0]
    if im.rank(x) != 4:
        raise node.fail(f"only 2-D (NCHW) inputs are supported, got rank {im.rank(x)}")
    p = float(node.attrs.get("p", 2))
    powed = _e(im, "power", _e(im, "abs", x), _s(im, p, x))
    pooled = _pool(im, replace(node, inputs=[powed]), "nn.avg_pool2d", count_include_pad=True)[0]
    window = float(math.prod(node.attrs["kernel_shape"]))
    total = _e(im, "multiply", pooled, _s(im, window, x))
    return [_e(im, "power", total, _s(im, 1.0 / p, x))]


@_op("LRN")
def _lrn(im, node):
    """x / (bias + alpha / size * sum of x^2 over ``size`` neighbouring channels)^beta:
    ``nn.lrn`` as Relay's frontend where the size is odd (the window is centred); an even
    size (ONNX's window has one more channel after than before, TOPI's refuses it) as
    squares summed by an average pool."""
    x = node.inputs[0]
    shape = im.static_shape(x, node)
    if len(shape) != 4:
        raise node.fail(f"only 4-D inputs are supported, got rank {len(shape)}")
    n, c, h, w = shape
    size = int(node.attrs["size"])
    alpha = float(node.attrs.get("alpha", 1e-4))
    beta = float(node.attrs.get("beta", 0.75))
    bias = float(node.attrs.get("bias", 1.0))
    if size % 2 == 1:
        return im.emit("nn.lrn", [x], size=size, axis=1, alpha=alpha, beta=beta, bias=bias)
    sq = im.reshape(_e(im, "multiply", x, x), [n, 1, c, h * w])
    lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
    summed = im.emit1(
        "nn.avg_pool2d", [sq], pool_size=[size, 1], strides=[1, 1], padding=[lo, 0, hi, 0], count_include_pad=True
    )
    summed = im.reshape(_e(im, "multiply", summed, _s(im, float(size), x)), [n, c, h, w])
    denom = _e(im, "add", _s(im, bias, x), _e(im, "multiply", summed, _s(im, alpha / size, x)))
    return [_e(im, "divide", x, _e(im, "power", denom, _s(im, beta, x)))]


@_op("MeanVarianceNormalization")
def _mvn(im, node):
    x = node.inputs[0]
    axes = [int(a) for a in node.attrs.get("axes", [0, 2, 3])]
    mean = im.emit1("mean", [x], axis=axes, keepdims=True)
    d = _e(im, "subtract", x, mean)
    var = im.emit1("mean", [_e(im, "multiply", d, d)], axis=axes, keepdims=True)
    return [_e(im, "divide", d, _e(im, "add", _e(im, "sqrt", var), _s(im, 1e-9, x)))]


# ---- 1-D pools: the 2-D pool over (N, C, 1, W) -------------------------------------------------

_MAX_POOL = _CONVERTERS["MaxPool"]
_AVG_POOL = _CONVERTERS["AveragePool"]


def _pool1d(im: _Importer, node: _Node, pool2d) -> list[_Val]:
    from dataclasses import replace

    x = node.inputs[0]
    if im.rank(x) != 3:
        return pool2d(im, node)
    n, c, w = im.shape_of(x)
    a = dict(node.attrs)
    a["kernel_shape"] = [1, *a["kernel_shape"]]
    for key in ("strides", "dilations"):
        if key in a:
            a[key] = [1, *a[key]]
    if "pads" in a:
        a["pads"] = [0, a["pads"][0], 0, a["pads"][1]]
    x4 = im.emit1("expand_dims", [x], axis=2, num_newaxis=1)
    outs = pool2d(im, replace(node, inputs=[x4], attrs=a))
    return [im.emit1("squeeze", [y], axis=[2]) for y in outs]


@_op("MaxPool")
def _max_pool1d(im, node):
    return _pool1d(im, node, _MAX_POOL)


@_op("AveragePool")
def _avg_pool1d(im, node):
    return _pool1d(im, node, _AVG_POOL)
