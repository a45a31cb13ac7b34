"""ONNX's ``onnx/defs/math`` operators: arithmetic, activations, matrix products, softmax,
trigonometry, scans, signal processing, losses.

Each maps as Relay's ONNX frontend (TVM v0.19) maps it: onto Relay's own op where Relay had
one (``Add`` -> ``add``, ``Mod`` -> ``floor_mod``/``mod``, ``Sin`` -> ``sin``, ``Gemm`` ->
``nn.dense``/``nn.matmul``, ``MatMul`` -> ``nn.matmul``/``nn.batch_matmul``, ``TopK`` ->
``topk`` with int64 indices, ``Einsum`` -> ``einsum``, ``DFT`` -> ``dft``, ``CumSum``/``CumProd``
-> ``cumsum``/``cumprod``), else onto the composition the frontend used (``Elu``, ``Selu``,
``HardSigmoid``, ``Softplus``, the inverse trigonometric and hyperbolic functions through
``log``/``sqrt``/``atan``...). Where Relay's frontend needed a value at import that does not
change the result's type (CumSum's axis), a run-time value is imported as one op per choice and
a ``where``.

* ``Round`` rounds halves to even (``compose.round_half_even``).
* ``STFT``: the frames as ``strided_slice``s stacked, times the window, ``dft`` of each frame;
  ``HannWindow``/``HammingWindow``/``BlackmanWindow`` and ``MelWeightMatrix`` are functions of
  their sizes alone and are computed at import; ``Det`` of ``n x n`` matrices, n <= 4: the sum
  over permutations of signed products.
* ``QLinearMatMul``: ``qnn.dense`` + ``qnn.requantize`` for a constant 2-D B, otherwise
  dequantize, ``MatMul``, quantize, as Relay does; ``MatMulInteger``: int32 ``nn.matmul`` /
  ``nn.batch_matmul`` of the zero-point-shifted operands.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from xrelay.dialects.relay import numpy_dtype
from xrelay.frontends.onnx.compose import round_half_even
from xrelay.frontends.onnx.importer import (
    Importer,
    Node,
    Value,
    relay_dtype,
)
from xrelay.frontends.onnx.quantization import (
    qnn_emit,
    quant_param,
    requantize,
    scale_and_zero_point,
    scale_of,
    zero_point_dtype,
    zero_point_of,
)
from xrelay.frontends.onnx.registry import converter

# ---- elementwise ---------------------------------------------------------------------------

_UNARY = {
    "Relu": "nn.relu",
    "Sigmoid": "sigmoid",
    "Tanh": "tanh",
    "Erf": "erf",
    "Sqrt": "sqrt",
    "Exp": "exp",
    "Log": "log",
    "Neg": "negative",
    "Abs": "abs",
    "Floor": "floor",
    "Ceil": "ceil",
    "Sin": "sin",
    "Cos": "cos",
    "Tan": "tan",
    "Atan": "atan",
    "Sign": "sign",
}


@converter(*_UNARY)
def _unary(im: Importer, node: Node) -> list[Value]:
    return im.emit(_UNARY[node.op_type], [node.inputs[0]])


@converter("LeakyRelu")
def _leaky_relu(im, node):
    return im.emit("nn.leaky_relu", [node.inputs[0]], alpha=float(node.attrs.get("alpha", 0.01)))


@converter("Reciprocal")
def _reciprocal(im, node):
    x = node.inputs[0]
    return im.emit("divide", [im.scalar(1.0, x), x])


@converter("Clip")
def _clip(im, node):
    x = node.inputs[0]
    if node.opset < 11:
        lo = node.attrs.get("min", -math.inf)
        hi = node.attrs.get("max", math.inf)
        return im.emit("clip", [x], a_min=float(lo), a_max=float(hi))
    lo_v, hi_v = node.input(1), node.input(2)
    if (lo_v is None or lo_v.known) and (hi_v is None or hi_v.known):
        lo = -math.inf if lo_v is None else float(np.asarray(lo_v.const).reshape(()))
        hi = math.inf if hi_v is None else float(np.asarray(hi_v.const).reshape(()))
        return im.emit("clip", [x], a_min=lo, a_max=hi)
    # run-time bounds: max then min, as the ONNX definition reads
    out = x
    if lo_v is not None:
        out = im.emit1("maximum", [out, lo_v])
    if hi_v is not None:
        out = im.emit1("minimum", [out, hi_v])
    return [out]


_BINARY = {"Add": "add", "Sub": "subtract", "Mul": "multiply", "Div": "divide"}


@converter(*_BINARY)
def _binary(im, node):
    return im.emit(_BINARY[node.op_type], list(im.broadcast_operands(node)))


@converter("Pow")
def _pow(im, node):
    a, b = node.inputs[0], node.inputs[1]
    return im.emit("power", [a, im.cast_like(b, im.dtype_of(a))])


@converter("Max", "Min", "Sum", "Mean")
def _variadic(im, node):
    relay = {"Max": "maximum", "Min": "minimum", "Sum": "add", "Mean": "add"}[node.op_type]
    vals = [v for v in node.inputs if v is not None]
    out = vals[0]
    for v in vals[1:]:
        out = im.emit1(relay, [out, v])
    if node.op_type == "Mean" and len(vals) > 1:
        out = im.emit1("divide", [out, im.scalar(len(vals), out)])
    return [out]


@converter("PRelu")
def _prelu(im, node):
    """``nn.prelu`` along the one axis the slope varies on (ONNX broadcasts it numpy's way,
    from the right: torch's ``nn.PReLU(C)`` exports a ``(C, 1, 1)`` slope for images, and its
    single parameter a ``(1,)`` or ``(1, 1)`` one; a 1-D slope of the channels that does not
    broadcast from the right is opset 6's channel slope), else ``where(x < 0, x * slope, x)``."""
    x, slope = node.inputs[0], node.inputs[1]
    ss = list(im.shape_of(slope))
    xs = im.shape_of(x)
    rank = len(xs)
    if rank >= 2 and len(ss) == 1 and ss[0] == xs[1] != xs[-1]:
        padded = [1, ss[0]] + [1] * (rank - 2)  # (opset 6's channel slope: no numpy broadcast)
    elif rank >= 1 and len(ss) <= rank and None not in ss:
        padded = [1] * (rank - len(ss)) + ss
    else:
        padded = None
    if padded is not None:
        varying = [i for i, d in enumerate(padded) if d != 1]
        axis = varying[0] if len(varying) == 1 else (1 if rank >= 2 else 0)
        if len(varying) <= 1 and xs[axis] is not None:
            slope = im.reshape(slope, [padded[axis]])
            if padded[axis] != xs[axis]:
                slope = im.emit1("broadcast_to", [slope], shape=[xs[axis]])
            return im.emit("nn.prelu", [x, slope], axis=axis)
    zero = im.scalar(0.0, x)
    neg = im.emit1("less", [x, zero])
    return im.emit("where", [neg, im.emit1("multiply", [x, slope]), x])


@converter("Expand")
def _expand(im, node):
    x = node.inputs[0]
    if not node.inputs[1].known:
        return [_dyn_expand(im, node, x, im.int64(node.inputs[1]))]
    shape = [int(d) for d in im.static(node.inputs[1], node, "shape")]
    xs = im.shape_of(x)
    rank = max(len(xs), len(shape))
    xs_p = [1] * (rank - len(xs)) + list(xs)
    sh_p = [1] * (rank - len(shape)) + shape
    target = []
    for a, b in zip(xs_p, sh_p):
        if a is None:
            raise node.fail("needs a static input shape")
        if a != 1 and b != 1 and a != b:
            raise node.fail(f"cannot expand {list(xs)} to {shape}")
        target.append(a if b == 1 else b)
    return im.emit("broadcast_to", [x], shape=target)


def _dyn_expand(im: Importer, node: Node, x: Value, shape: Value) -> Value:
    """ONNX's two-way broadcast to a run-time shape: dyn.broadcast_to to the elementwise
    maximum of the shape and the input's shape, both padded with leading ones (a mismatch
    other than 1 fails in broadcast_to at run time, as ONNX's Expand would)."""
    (m,) = im.static_shape(shape, node)
    r = im.rank(x)
    xs = im.int64(im.emit1("shape_of", [x], dtype="int64"))
    if m > r:
        xs = im.emit1("concatenate", [im.const(np.ones(m - r, np.int64)), xs], axis=0)
    elif r > m:
        shape = im.emit1("concatenate", [im.const(np.ones(r - m, np.int64)), shape], axis=0)
    target = im.emit1("maximum", [shape, xs])
    return im.emit1("dyn.broadcast_to", [x, target])


@converter("Gemm")
def _gemm(im, node):
    a, b, c = node.inputs[0], node.inputs[1], node.input(2)
    alpha = float(node.attrs.get("alpha", 1.0))
    beta = float(node.attrs.get("beta", 1.0))
    if im.rank(a) != 2 or im.rank(b) != 2:
        raise node.fail("A and B must be 2-D")
    if node.attrs.get("transA", 0):
        a = im.emit1("transpose", [a], axes=[1, 0])
    if node.attrs.get("transB", 0):
        y = im.emit1("nn.dense", [a, b], units=im.shape_of(b)[0])
    else:
        y = im.emit1("nn.matmul", [a, b], units=im.shape_of(b)[1])
    if alpha != 1.0:
        y = im.emit1("multiply", [y, im.scalar(alpha, y)])
    if c is not None and beta != 0.0:
        if beta != 1.0:
            c = im.emit1("multiply", [c, im.scalar(beta, c)])
        cs, ys = im.shape_of(c), im.shape_of(y)
        if len(cs) == 1 and cs[0] == ys[1] and cs[0] is not None:
            y = im.emit1("nn.bias_add", [y, c], axis=-1)
        else:
            y = im.emit1("add", [y, c])
    return [y]


@converter("MatMul")
def _matmul(im, node):
    a, b = node.inputs[0], node.inputs[1]
    sa, sb = im.shape_of(a), im.shape_of(b)
    if not sa or not sb:
        raise node.fail("MatMul operands must have rank >= 1")
    a1 = im.reshape(a, [1, sa[0]]) if len(sa) == 1 else a
    b1 = im.reshape(b, [sb[0], 1]) if len(sb) == 1 else b
    sa1, sb1 = im.shape_of(a1), im.shape_of(b1)
    if len(sb1) == 2:
        y = im.emit1("nn.matmul", [a1, b1])
    else:
        if any(d is None for d in sa1[:-2]) or any(d is None for d in sb1[:-2]):
            raise node.fail("batched MatMul needs static batch dims")
        batch = tuple(np.broadcast_shapes(tuple(sa1[:-2]), tuple(sb1[:-2])))
        nb = math.prod(batch)

        def to3(v, s):
            if tuple(s[:-2]) != batch and math.prod(s[:-2]) != 1:
                v = im.emit1("broadcast_to", [v], shape=[*batch, *s[-2:]])
                return im.reshape(v, [nb, *s[-2:]])
            return im.reshape(v, [math.prod(s[:-2]), *s[-2:]])

        y = im.emit1("nn.batch_matmul", [to3(a1, sa1), to3(b1, sb1)], transpose_b=False)
        ys = im.shape_of(y)
        y = im.reshape(y, [*batch, ys[1], ys[2]])
    ys = list(im.shape_of(y))
    if len(sa) == 1:
        del ys[-2]
    if len(sb) == 1:
        del ys[-1]
    if len(ys) != im.rank(y):
        if any(d is None for d in ys):
            raise node.fail("1-D MatMul operands need static shapes")
        y = im.reshape(y, ys)
    return [y]


@converter("Softmax", "LogSoftmax")
def _softmax(im, node):
    x = node.inputs[0]
    relay = "nn.softmax" if node.op_type == "Softmax" else "nn.log_softmax"
    rank = im.rank(x)
    if node.opset >= 13:
        return im.emit(relay, [x], axis=node.attrs.get("axis", -1))
    axis = node.attrs.get("axis", 1)
    axis = axis + rank if axis < 0 else axis
    if axis == rank - 1:
        return im.emit(relay, [x], axis=-1)
    # opset < 13: the input is viewed as 2-D [prod(d[:axis]), prod(d[axis:])]
    s = im.static_shape(x, node)
    flat = im.reshape(x, [math.prod(s[:axis]), math.prod(s[axis:])])
    return [im.reshape(im.emit1(relay, [flat], axis=1), s)]


@converter("Mod")
def _mod(im, node):
    a, b = node.inputs[:2]
    fmod = int(node.attrs.get("fmod", 0))
    return im.emit("mod" if fmod else "floor_mod", [a, b])


@converter("Elu")
def _elu(im, node):
    x = node.inputs[0]
    alpha = float(node.attrs.get("alpha", 1.0))
    # -alpha * relu(1 - exp(x)) + relu(x)
    neg = im.apply("nn.relu", im.apply("subtract", im.scalar(1.0, x), im.apply("exp", x)))
    return [im.apply("add", im.apply("multiply", im.scalar(-alpha, x), neg), im.apply("nn.relu", x))]


@converter("Celu")
def _celu(im, node):
    x = node.inputs[0]
    alpha = float(node.attrs.get("alpha", 1.0))
    # max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
    zero = im.scalar(0.0, x)
    inner = im.apply("exp", im.apply("divide", x, im.scalar(alpha, x)))
    neg = im.apply("minimum", zero, im.apply("multiply", im.scalar(alpha, x), im.apply("subtract", inner, im.scalar(1.0, x))))
    return [im.apply("add", im.apply("maximum", zero, x), neg)]


@converter("Selu")
def _selu(im, node):
    x = node.inputs[0]
    alpha = float(node.attrs.get("alpha", 1.67326319217681884765625))
    gamma = float(node.attrs.get("gamma", 1.05070102214813232421875))
    neg = im.apply("nn.relu", im.apply("subtract", im.scalar(1.0, x), im.apply("exp", x)))
    inner = im.apply("add", im.apply("multiply", im.scalar(-alpha, x), neg), im.apply("nn.relu", x))
    return [im.apply("multiply", im.scalar(gamma, x), inner)]


@converter("HardSigmoid")
def _hard_sigmoid(im, node):
    x = node.inputs[0]
    alpha = float(node.attrs.get("alpha", 0.2))
    beta = float(node.attrs.get("beta", 0.5))
    t = im.apply("add", im.apply("multiply", x, im.scalar(alpha, x)), im.scalar(beta, x))
    return im.emit("clip", [t], a_min=0.0, a_max=1.0)


@converter("HardSwish")
def _hard_swish(im, node):
    x = node.inputs[0]
    t = im.apply("add", im.apply("multiply", x, im.scalar(1.0 / 6.0, x)), im.scalar(0.5, x))
    return [im.apply("multiply", x, im.emit1("clip", [t], a_min=0.0, a_max=1.0))]


def _softplus_of(im: Importer, x: Value) -> Value:
    # log(1 + exp(x)) without overflow: relu(x) + log(1 + exp(-|x|))
    tail = im.apply("log", im.apply("add", im.scalar(1.0, x), im.apply("exp", im.apply("negative", im.apply("abs", x)))))
    return im.apply("add", im.apply("nn.relu", x), tail)


@converter("Softplus")
def _softplus(im, node):
    return [_softplus_of(im, node.inputs[0])]


@converter("Mish")
def _mish(im, node):
    x = node.inputs[0]
    return [im.apply("multiply", x, im.apply("tanh", _softplus_of(im, x)))]


@converter("Softsign")
def _softsign(im, node):
    x = node.inputs[0]
    return [im.apply("divide", x, im.apply("add", im.scalar(1.0, x), im.apply("abs", x)))]


@converter("ThresholdedRelu")
def _thresholded_relu(im, node):
    x = node.inputs[0]
    alpha = float(node.attrs.get("alpha", 1.0))
    mask = im.cast_like(im.apply("greater", x, im.scalar(alpha, x)), im.dtype_of(x))
    return [im.apply("multiply", x, mask)]


@converter("Swish")
def _swish(im, node):
    x = node.inputs[0]
    alpha = float(node.attrs.get("alpha", 1.0))
    return [im.apply("multiply", x, im.apply("sigmoid", im.apply("multiply", x, im.scalar(alpha, x))))]


@converter("Gelu")
def _gelu(im, node):
    x = node.inputs[0]
    if node.attrs.get("approximate", "none") == "tanh":
        # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        cube = im.apply("multiply", im.apply("multiply", x, x), x)
        inner = im.apply("add", x, im.apply("multiply", im.scalar(0.044715, x), cube))
        t = im.apply("tanh", im.apply("multiply", im.scalar(math.sqrt(2.0 / math.pi), x), inner))
    else:
        t = im.apply("erf", im.apply("multiply", x, im.scalar(1.0 / math.sqrt(2.0), x)))
    half = im.apply("multiply", x, im.scalar(0.5, x))
    return [im.apply("multiply", half, im.apply("add", im.scalar(1.0, x), t))]


# ---- trigonometric and hyperbolic functions through exp/log/sqrt/atan ------------------------


@converter("Asin", "Acos")
def _asin_acos(im, node):
    x = node.inputs[0]
    # asin(x) = 2 atan(x / (1 + sqrt(1 - x^2))), exact at +-1
    root = im.apply("sqrt", im.apply("subtract", im.scalar(1.0, x), im.apply("multiply", x, x)))
    asin = im.apply("multiply", im.scalar(2.0, x), im.apply("atan", im.apply("divide", x, im.apply("add", im.scalar(1.0, x), root))))
    if node.op_type == "Asin":
        return [asin]
    return [im.apply("subtract", im.scalar(math.pi / 2, x), asin)]


@converter("Sinh", "Cosh")
def _sinh_cosh(im, node):
    x = node.inputs[0]
    a, b = im.apply("exp", x), im.apply("exp", im.apply("negative", x))
    both = im.apply("subtract" if node.op_type == "Sinh" else "add", a, b)
    return [im.apply("multiply", both, im.scalar(0.5, x))]


@converter("Asinh", "Acosh")
def _asinh_acosh(im, node):
    x = node.inputs[0]
    sq = im.apply("multiply", x, x)
    sq = im.apply("add" if node.op_type == "Asinh" else "subtract", sq, im.scalar(1.0, x))
    return [im.apply("log", im.apply("add", x, im.apply("sqrt", sq)))]


@converter("Atanh")
def _atanh(im, node):
    x = node.inputs[0]
    ratio = im.apply("divide", im.apply("add", im.scalar(1.0, x), x), im.apply("subtract", im.scalar(1.0, x), x))
    return [im.apply("multiply", im.apply("log", ratio), im.scalar(0.5, x))]


def _nll(im: Importer, node: Node, logp: Value, target: Value, weight: Value | None) -> Value:
    """ONNX's NegativeLogLikelihoodLoss on log-probabilities ``logp`` (N, C, d...)."""
    reduction = node.attrs.get("reduction", "mean")
    ignore = node.attrs.get("ignore_index")
    shape = im.static_shape(logp, node)
    n_class = shape[1]
    target = im.cast_like(target, "int64")
    tshape = im.static_shape(target, node)
    keep = None
    if ignore is not None:
        keep = im.apply("not_equal", target, im.const(np.int64(ignore)))
        target = im.apply("where", keep, target, im.const(np.int64(0)))
    grids = np.indices(tshape, dtype=np.int64)
    rows = [im.const(grids[0]), target] + [im.const(g) for g in grids[1:]]
    picked = im.emit1("gather_nd", [logp, im.emit1("stack", rows, axis=0)])
    if weight is not None:
        w = im.emit1("take", [weight, target], axis=0)
    else:
        w = im.const(np.ones(tshape, numpy_dtype(im.dtype_of(logp))))
    if keep is not None:
        w = im.apply("multiply", w, im.cast_like(keep, im.dtype_of(logp)))
    loss = im.apply("negative", im.apply("multiply", picked, w))
    del n_class
    if reduction == "none":
        return loss
    total = im.emit1("sum", [loss], axis=None, keepdims=False)
    if reduction == "sum":
        return total
    if reduction != "mean":
        raise node.fail(f"unknown reduction '{reduction}'")
    return im.apply("divide", total, im.emit1("sum", [w], axis=None, keepdims=False))


@converter("NegativeLogLikelihoodLoss")
def _nll_loss(im, node):
    return [_nll(im, node, node.inputs[0], node.inputs[1], node.input(2))]


@converter("SoftmaxCrossEntropyLoss")
def _softmax_cross_entropy(im, node):
    scores = node.inputs[0]
    logp = im.emit1("nn.log_softmax", [scores], axis=1)
    loss = _nll(im, node, logp, node.inputs[1], node.input(2))
    return [loss, logp][: max(1, node.num_outputs)]


@converter("Round")
def _round(im, node):
    """ONNX rounds halves to even (Relay's ``round`` goes away from zero)."""
    return [round_half_even(im, node.inputs[0])]


@converter("Hardmax")
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


def _hardmax_axis(im: Importer, x: Value, axis: int, shape: list[int]) -> Value:
    first = im.emit1("argmax", [x], axis=[axis], keepdims=True)
    iota = np.arange(shape[axis], dtype=np.int32).reshape([-1 if a == axis else 1 for a in range(len(shape))])
    hit = im.apply("equal", first, im.const(iota))
    return im.cast_like(hit, im.dtype_of(x))


def _flip(im: Importer, node: Node, x: Value, axis: int) -> Value:
    """``x`` reversed along ``axis`` (a strided slice with step -1)."""
    rank = im.rank(x)
    axis = axis + rank if axis < 0 else axis
    d = im.static_shape(x, node)[axis]
    # end -d-1 is "before index 0" (a plain -1 would be the last index)
    return im.emit1("strided_slice", [x], begin=[d - 1], end=[-d - 1], strides=[-1], axes=[axis])


@converter("CumSum", "CumProd")
def _cumulative(im, node):
    x, axis_in = node.inputs[0], node.input(1)
    name = "cumsum" if node.op_type == "CumSum" else "cumprod"
    exclusive = bool(node.attrs.get("exclusive", 0))

    def scan(axis: int) -> Value:
        if node.attrs.get("reverse", 0):
            flipped = im.emit1(name, [_flip(im, node, x, axis)], axis=axis, exclusive=exclusive)
            return _flip(im, node, flipped, axis)
        return im.emit1(name, [x], axis=axis, exclusive=exclusive)

    if axis_in is None:
        return [scan(0)]
    if axis_in.known:
        return [scan(int(axis_in.const.reshape(-1)[0]))]
    # The axis is a run-time value, but the result's type does not depend on it: scan along
    # every axis and select the one asked for (an axis outside [-rank, rank) selects the last).
    rank = im.rank(x)
    if rank == 0:
        raise node.fail("the input must have rank >= 1")
    return [_select_by_axis(im, axis_in, rank, {a: scan(a) for a in range(rank)})]


def _select_by_axis(im: Importer, axis_in: Value, rank: int, outs: dict[int, Value]) -> Value:
    """``outs[axis]`` for a run-time ``axis`` (negative counts from ``rank``): a chain of
    ``where`` on the axis value; an axis matching none of them selects the last."""
    axis = im.reshape(axis_in, [])
    keys = sorted(outs)
    out = outs[keys[-1]]
    for a in reversed(keys[:-1]):
        hit = im.emit1(
            "logical_or",
            [im.emit1("equal", [axis, im.scalar(a, axis)]), im.emit1("equal", [axis, im.scalar(a - rank, axis)])],
        )
        out = im.emit1("where", [hit, outs[a], out])
    return out


@converter("Einsum")
def _einsum(im, node):
    return im.emit("einsum", list(node.inputs), equation=node.attrs["equation"])


# ---- SwiGLU, RotaryEmbedding: compositions (newer than Relay, which had no op for them) ------------


@converter("SwiGLU")
def _swiglu(im, node):
    a, b = node.inputs[:2]
    if im.shape_of(a) != im.shape_of(b):
        raise node.fail(f"A {list(im.shape_of(a))} and B {list(im.shape_of(b))} must have one shape")
    alpha = float(node.attrs.get("alpha", 1.0))
    gate = im.emit1("sigmoid", [a if alpha == 1.0 else im.emit1("multiply", [a, im.scalar(alpha, a)])])
    return [im.emit1("multiply", [im.emit1("multiply", [a, gate]), b])]


# ---- DFT: Relay's ``dft`` (the last axis) with the signal axis swapped there ----------------------


def _dft_along(im: Importer, node: Node, x: Value, axis: int, length: int | None) -> Value:
    shape = im.static_shape(x, node)
    rank = len(shape)
    inverse, onesided = bool(node.attrs.get("inverse", 0)), bool(node.attrs.get("onesided", 0))
    n = shape[axis]
    if length is None:
        length = 2 * (n - 1) if inverse and onesided else n
    if length < 1:
        raise node.fail(f"dft_length must be positive, got {length}")
    if shape[-1] == 1:
        re = im.reshape(x, shape[:-1])
        imag = im.const(np.zeros(shape[:-1]), im.dtype_of(x))
    elif shape[-1] == 2:
        re, imag = (im.reshape(p, shape[:-1]) for p in im.split(x, 2, rank - 1))
    else:
        raise node.fail(f"the last axis must be 1 (real) or 2 (complex), got {shape[-1]}")
    last = rank - 2
    perm = list(range(rank - 1))
    perm[axis], perm[last] = perm[last], perm[axis]

    def to_last(v: Value) -> Value:
        return v if axis == last else im.emit1("transpose", [v], axes=perm)

    re, imag = to_last(re), to_last(imag)
    if inverse and onesided:  # rebuild the full spectrum: X[N - k] = conj(X[k])
        mirror = length - n
        if mirror < 0 or n < 1:
            raise node.fail(f"a one-sided inverse of {n} bins cannot give {length} samples")
        if mirror:
            def tail(v: Value) -> Value:
                part = im.last_axis_slice(v, n - 2 if length % 2 == 0 else n - 1, 0, -1)
                return im.last_axis_slice(part, 0, mirror)

            re = im.emit1("concatenate", [re, tail(re)], axis=last)
            imag = im.emit1("concatenate", [imag, im.emit1("negative", [tail(imag)])], axis=last)
        n = length
    if n != length:  # crop or zero-pad the signal to dft_length
        if n > length:
            re, imag = im.last_axis_slice(re, 0, length), im.last_axis_slice(imag, 0, length)
        else:
            pads = [[0, 0]] * (rank - 2) + [[0, length - n]]
            re, imag = (im.emit1("nn.pad", [v, im.scalar(0.0, v)], pad_width=pads) for v in (re, imag))
    re, imag = im.emit("dft", [re, imag], inverse=inverse)
    if inverse and onesided:  # a real signal
        return im.emit1("expand_dims", [to_last(re)], axis=rank - 1)
    if onesided:
        re, imag = im.last_axis_slice(re, 0, length // 2 + 1), im.last_axis_slice(imag, 0, length // 2 + 1)
    re, imag = to_last(re), to_last(imag)
    return im.emit1("stack", [re, imag], axis=rank - 1)


@converter("DFT")
def _dft(im, node):
    x = node.inputs[0]
    length_v = im.static(node.input(1), node, "dft_length")
    length = None if length_v is None else int(length_v.reshape(-1)[0])
    rank = im.rank(x)
    if node.opset < 20:
        axis = int(node.attrs.get("axis", 1))
        candidates = [axis + rank if axis < 0 else axis]
        axis_in = None
    else:
        axis_in = node.input(2)
        if axis_in is None or axis_in.known:
            axis = -2 if axis_in is None else int(axis_in.const.reshape(-1)[0])
            candidates = [axis + rank if axis < 0 else axis]
            axis_in = None
        else:
            candidates = list(range(1, rank - 1))
    for a in candidates:
        if not 1 <= a <= rank - 2:
            raise node.fail(f"axis {a} must be a signal axis (not the batch or the complex axis)")
    outs = {a: _dft_along(im, node, x, a, length) for a in candidates}
    if axis_in is None:
        return [outs[candidates[0]]]
    # a run-time axis: every signal axis, then a where on its value (when the results agree in shape)
    shapes = {im.shape_of(v) for v in outs.values()}
    if len(shapes) != 1:
        im.static(axis_in, node, "axis")  # the result's shape depends on it: refused, naming the inputs
    return [_select_by_axis(im, axis_in, rank, outs)]


# ---- TopK, OneHot: Relay's static ops (a K or depth given at run time needs Relay's dyn.* ops) ----


@converter("TopK")
def _topk(im, node):
    x = node.inputs[0]
    if node.opset < 10:
        k = int(node.attrs["k"])
    else:
        k = int(im.static(node.inputs[1], node, "K").reshape(-1)[0])
    axis = int(node.attrs.get("axis", -1))
    rank = im.rank(x)
    d = im.shape_of(x)[axis + rank if axis < 0 else axis]
    if k < 0 or (d is not None and k > d):
        raise node.fail(f"K = {k} must be in [0, {d}]")
    if k == 0:  # Relay's k < 1 means the whole axis: an empty result is a constant
        shape = list(im.static_shape(x, node))
        shape[axis] = 0
        return [im.const(np.zeros(shape), im.dtype_of(x)), im.const(np.zeros(shape, np.int64))]
    largest = bool(node.attrs.get("largest", 1))
    return im.emit("topk", [x], k=k, axis=axis, is_ascend=not largest, dtype="int64")


def _window(node: Node, n: int, periodic: bool) -> np.ndarray:
    m = n if periodic else n - 1
    t = 2.0 * math.pi * np.arange(n) / max(m, 1)
    if node.op_type == "HannWindow":
        return 0.5 - 0.5 * np.cos(t)
    if node.op_type == "HammingWindow":
        return 25.0 / 46.0 - (1.0 - 25.0 / 46.0) * np.cos(t)
    return 0.42 - 0.5 * np.cos(t) + 0.08 * np.cos(2.0 * t)


@converter("HannWindow", "HammingWindow", "BlackmanWindow")
def _windows(im, node):
    (n,) = im.static_ints(node, 0, "size")
    if n < 0:
        raise node.fail(f"size {n} is negative")
    dtype = relay_dtype(node.attrs.get("output_datatype", 1), f"{node.op_type} node '{node.name}'")
    return [im.const(_window(node, n, bool(node.attrs.get("periodic", 1))), dtype)]


@converter("MelWeightMatrix")
def _mel_weight_matrix(im, node):
    n_mel, dft_len, rate = (im.static_ints(node, i, w)[0] for i, w in enumerate(("num_mel_bins", "dft_length", "sample_rate")))
    lo, hi = (float(np.asarray(im.static(node.inputs[i], node, w)).reshape(-1)[0]) for i, w in ((3, "lower_edge_hertz"), (4, "upper_edge_hertz")))
    if n_mel < 1 or dft_len < 1 or rate < 1:
        raise node.fail("num_mel_bins, dft_length and sample_rate must be positive")
    bins = dft_len // 2 + 1

    def mel(f: float) -> float:
        return 2595.0 * math.log10(1.0 + f / 700.0)

    # n_mel + 2 points a step of (high - low) / (n_mel + 2) mels apart from the lower edge (as
    # ONNX's definition), as FFT bins; a triangle rising to the middle point, falling to the last
    step = (mel(hi) - mel(lo)) / (n_mel + 2)
    hz = 700.0 * (10.0 ** ((np.arange(n_mel + 2) * step + mel(lo)) / 2595.0) - 1.0)
    idx = ((dft_len + 1) * hz // rate).astype(np.int64)
    if idx.min() < 0 or idx.max() >= bins:
        raise node.fail(f"the mel bins fall outside the {bins} spectrogram bins (edges {lo:g}-{hi:g} Hz at {rate} Hz)")
    out = np.zeros((bins, n_mel))
    for i in range(n_mel):
        a, b, c = idx[i], idx[i + 1], idx[i + 2]
        if b == a:
            out[b, i] = 1.0
        else:
            out[a : b + 1, i] = (np.arange(a, b + 1) - a) / (b - a)
        if c > b:
            out[b:c, i] = (c - np.arange(b, c)) / (c - b)
    dtype = relay_dtype(node.attrs.get("output_datatype", 1), f"MelWeightMatrix node '{node.name}'")
    return [im.const(out, dtype)]


@converter("STFT")
def _stft(im, node):
    signal, window = node.inputs[0], node.input(2)
    (step,) = im.static_ints(node, 1, "frame_step")
    b, length, comps = im.static_shape(signal, node)
    if comps != 1:
        raise node.fail("only real signals ([batch, length, 1]) are supported")
    if node.input(3) is not None:
        (flen,) = im.static_ints(node, 3, "frame_length")
    elif window is not None:
        flen = im.static_shape(window, node)[0]
    else:
        raise node.fail("needs a window or a frame_length")
    if step < 1 or not 1 <= flen <= length:
        raise node.fail(f"frame_step {step} / frame_length {flen} do not fit a signal of {length}")
    frames = (length - flen) // step + 1
    x = im.reshape(signal, [b, length])
    parts = [im.emit1("strided_slice", [x], begin=[f * step], end=[f * step + flen], axes=[1]) for f in range(frames)]
    fr = im.emit1("stack", parts, axis=1)  # [b, frames, flen]
    if window is not None:
        fr = im.emit1("multiply", [fr, window])
    zero = im.emit1("zeros_like", [fr])
    re, imag = im.emit("dft", [fr, zero])
    if node.attrs.get("onesided", 1):
        half = flen // 2 + 1
        re, imag = (im.emit1("strided_slice", [v], begin=[0], end=[half], axes=[2]) for v in (re, imag))
    return [im.emit1("stack", [re, imag], axis=3)]


@converter("Det")
def _det(im, node):
    x = node.inputs[0]
    xs = im.static_shape(x, node)
    if len(xs) < 2 or xs[-1] != xs[-2]:
        raise node.fail(f"expects [..., n, n] matrices, got {list(xs)}")
    n = xs[-1]
    if n > 4:
        raise node.fail(f"{n} x {n} matrices: xrelay expands determinants by permutations up to 4 x 4")
    if n == 0:
        return [im.const(np.ones(xs[:-2]), im.dtype_of(x))]
    lead = len(xs) - 2
    entry = {
        (i, j): im.emit1("strided_slice", [x], begin=[i, j], end=[i + 1, j + 1], axes=[lead, lead + 1])
        for i in range(n)
        for j in range(n)
    }
    total = None
    for perm in itertools.permutations(range(n)):
        term = entry[0, perm[0]]
        for i in range(1, n):
            term = im.emit1("multiply", [term, entry[i, perm[i]]])
        inversions = sum(perm[i] > perm[j] for i in range(n) for j in range(i + 1, n))
        if total is None:
            total = term if inversions % 2 == 0 else im.emit1("negative", [term])
        else:
            total = im.emit1("subtract" if inversions % 2 else "add", [total, term])
    return [im.reshape(total, list(xs[:-2]))]


@converter("QLinearMatMul")
def _qlinear_matmul(im, node):
    a, b = node.inputs[0], node.inputs[3]
    a_s, a_zp = scale_and_zero_point(im, node, 1, "a")
    b_s, b_zp = scale_and_zero_point(im, node, 4, "b")
    y_s, y_zp = scale_and_zero_point(im, node, 6, "y")
    out_dtype = zero_point_dtype(node, 7, im)
    sa, sb = im.shape_of(a), im.shape_of(b)
    if b.known and len(sb) == 2 and len(sa) >= 2 and None not in sa:
        wt = im.const(np.ascontiguousarray(b.const.T))
        a2 = im.reshape(a, [int(np.prod(sa[:-1])), sa[-1]])
        acc = qnn_emit(
            im, "qnn.dense", [a2, wt, im.const(zero_point_of(a_zp)), im.const(zero_point_of(b_zp)), im.const(scale_of(a_s)), im.const(scale_of(b_s))],
            units=sb[1],
        )  # fmt: skip
        in_scale = np.asarray(a_s, np.float32).reshape(()) * scale_of(b_s)
        y = requantize(im, acc, in_scale, y_s, y_zp, out_dtype)
        return [im.reshape(y, [*sa[:-1], sb[1]])]
    # Relay's general form: dequantize, float MatMul, quantize
    fa = qnn_emit(im, "qnn.dequantize", [a, im.const(scale_of(a_s)), im.const(zero_point_of(a_zp))], axis=0)
    fb = qnn_emit(im, "qnn.dequantize", [b, im.const(scale_of(b_s)), im.const(zero_point_of(b_zp))], axis=max(im.rank(b) - 1, 0))
    (y,) = _matmul(im, Node("MatMul", node.name, [fa, fb], {}, 1, node.opset))
    return [qnn_emit(im, "qnn.quantize", [y, im.const(scale_of(y_s)), im.const(zero_point_of(y_zp))], out_dtype=out_dtype)]


@converter("MatMulInteger")
def _matmul_integer(im, node):
    a, b = node.inputs[0], node.inputs[1]
    a_zp, b_zp = quant_param(im, node, 2, "a_zero_point", "zp"), quant_param(im, node, 3, "b_zero_point", "zp")
    a32 = im.emit1("subtract", [im.cast_like(a, "int32"), im.const(zero_point_of(a_zp))])
    zb = zero_point_of(b_zp)
    b32 = im.emit1("subtract", [im.cast_like(b, "int32"), im.const(zb)])
    (y,) = _matmul(im, Node("MatMul", node.name, [a32, b32], {}, 1, node.opset))
    return [y]
