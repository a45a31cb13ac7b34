"""ONNX's ``onnx/defs/training`` operators (domain ``ai.onnx.preview.training``): the optimizer
steps ``Adagrad``, ``Momentum`` (standard and Nesterov) and ``Adam``.

Each is an elementwise update of every optimized tensor, written out with Relay's elementwise
ops as ONNX's operator definitions give it. Their inputs are the learning rate ``R`` and the
update count ``T`` (scalars), then the n tensors ``X``, their n gradients ``G`` and the n
states of the optimizer (``H`` for Adagrad, ``V`` for Momentum, ``V`` then ``H`` for Adam);
the outputs are the n new tensors, then the new states in the same order. ``T`` may be a graph
input: the branch on ``T > 0`` (no bias correction / a first step at full weight) is a
``where``, so one import serves every step.

``Gradient`` (same domain) is not imported: it asks for the derivatives of a part of the graph
with respect to some of its inputs, which needs automatic differentiation over the imported
Relay graph; xrelay has no autodiff pass.
"""

from __future__ import annotations

from collections.abc import Callable

from xrelay.frontends.onnx.importer import Importer, Node, Value
from xrelay.frontends.onnx.registry import converter

DOMAIN = "ai.onnx.preview.training"


def _groups(im: Importer, node: Node, states: int) -> tuple[Value, Value, list[list[Value]]]:
    """``R``, ``T`` and the n tensors' groups ``[X, G, state...]`` of an optimizer node."""
    ins = node.inputs
    k = 2 + states  # X, G and the states
    if len(ins) < 2 + k or (len(ins) - 2) % k:
        raise node.fail(f"needs R, T and {k} inputs per optimized tensor (X, G, states), got {len(ins)} inputs")
    if any(v is None for v in ins):
        raise node.fail("every input is required")
    n = (len(ins) - 2) // k
    r, t = ins[0], ins[1]
    for name, v in (("R", r), ("T", t)):
        if im.rank(v) != 0 and any(d != 1 for d in im.shape_of(v)):
            raise node.fail(f"{name} must be a scalar, got shape {list(im.shape_of(v))}")
    groups = [[ins[2 + j * n + i] for j in range(k)] for i in range(n)]
    for g in groups:
        x = g[0]
        for v in g[1:]:
            if im.dtype_of(v) != im.dtype_of(x) or tuple(im.shape_of(v)) != tuple(im.shape_of(x)):
                raise node.fail("each gradient and state must have its tensor's shape and type")
    return r, t, groups


def _scalar_of(im: Importer, v: Value, like: Value) -> Value:
    """A scalar input cast to ``like``'s element type, as a 0-d tensor."""
    return im.reshape(im.cast_like(v, im.dtype_of(like)), [])


def _regularized(im: Importer, node: Node, x: Value, g: Value) -> Value:
    """``norm_coefficient * X + G`` (the gradient of the L2 regularization added)."""
    c = float(node.attrs.get("norm_coefficient", 0.0))
    if c == 0.0:
        return g
    return im.apply("add", im.apply("multiply", im.scalar(c, x), x), g)


def _positive(im: Importer, t: Value) -> Value:
    """``T > 0`` as a 0-d bool."""
    return im.reshape(im.apply("greater", t, im.const(0, im.dtype_of(t))), [])


def _optimizer(states: int, step: Callable[..., list[Value]]):
    def convert(im: Importer, node: Node) -> list[Value]:
        r, t, groups = _groups(im, node, states)
        outs = [step(im, node, r, t, *g) for g in groups]
        return [o[j] for j in range(len(outs[0])) for o in outs]  # all new X, then each state

    return convert


def _adagrad(im: Importer, node: Node, r: Value, t: Value, x: Value, g: Value, h: Value) -> list[Value]:
    decay = float(node.attrs.get("decay_factor", 0.0))
    eps = float(node.attrs.get("epsilon", 1e-6))
    # r / (1 + T * decay_factor)
    tf = _scalar_of(im, t, x)
    rate = im.apply("divide", _scalar_of(im, r, x), im.apply("add", im.scalar(1.0, x), im.apply("multiply", tf, im.scalar(decay, x))))
    gr = _regularized(im, node, x, g)
    h_new = im.apply("add", h, im.apply("multiply", gr, gr))
    denom = im.apply("add", im.apply("sqrt", h_new), im.scalar(eps, x))
    x_new = im.apply("subtract", x, im.apply("divide", im.apply("multiply", rate, gr), denom))
    return [x_new, h_new]


def _momentum(im: Importer, node: Node, r: Value, t: Value, x: Value, g: Value, v: Value) -> list[Value]:
    missing = [a for a in ("alpha", "beta", "mode", "norm_coefficient") if a not in node.attrs]
    if missing:
        raise node.fail(f"attribute(s) {', '.join(missing)} are required")
    alpha = float(node.attrs["alpha"])
    beta = float(node.attrs["beta"])
    mode = node.attrs["mode"]
    if mode not in ("standard", "nesterov"):
        raise node.fail(f"mode must be 'standard' or 'nesterov', got {mode!r}")
    gr = _regularized(im, node, x, g)
    # the gradient's weight is 1 at the first step (T = 0)
    b = im.apply("where", _positive(im, t), im.scalar(beta, x), im.scalar(1.0, x))
    v_new = im.apply("add", im.apply("multiply", im.scalar(alpha, x), v), im.apply("multiply", b, gr))
    step = v_new if mode == "standard" else im.apply("add", gr, im.apply("multiply", im.scalar(alpha, x), v_new))
    x_new = im.apply("subtract", x, im.apply("multiply", _scalar_of(im, r, x), step))
    return [x_new, v_new]


def _adam(im: Importer, node: Node, r: Value, t: Value, x: Value, g: Value, v: Value, h: Value) -> list[Value]:
    alpha = float(node.attrs.get("alpha", 0.9))
    beta = float(node.attrs.get("beta", 0.999))
    eps = float(node.attrs.get("epsilon", 1e-6))
    post = float(node.attrs.get("norm_coefficient_post", 0.0))
    gr = _regularized(im, node, x, g)
    v_new = im.apply("add", im.apply("multiply", im.scalar(alpha, x), v), im.apply("multiply", im.scalar(1 - alpha, x), gr))
    h_new = im.apply("add", im.apply("multiply", im.scalar(beta, x), h), im.apply("multiply", im.scalar(1 - beta, x), im.apply("multiply", gr, gr)))
    h_sqrt = im.apply("add", im.apply("sqrt", h_new), im.scalar(eps, x))
    # bias correction for T > 0: R * sqrt(1 - beta^T) / (1 - alpha^T); R itself at T = 0
    rate = _scalar_of(im, r, x)
    one = im.scalar(1.0, x)
    tf = im.apply("maximum", _scalar_of(im, t, x), one)  # T = 0 takes R: no 0 / 0 computed for it
    corrected = im.apply(
        "divide",
        im.apply("multiply", rate, im.apply("sqrt", im.apply("subtract", one, im.apply("power", im.scalar(beta, x), tf)))),
        im.apply("subtract", one, im.apply("power", im.scalar(alpha, x), tf)),
    )
    rate = im.apply("where", _positive(im, t), corrected, rate)
    x_new = im.apply("subtract", x, im.apply("multiply", rate, im.apply("divide", v_new, h_sqrt)))
    if post != 0.0:
        x_new = im.apply("multiply", im.scalar(1 - post, x), x_new)
    return [x_new, v_new, h_new]


converter(f"{DOMAIN}.Adagrad")(_optimizer(1, _adagrad))
converter(f"{DOMAIN}.Momentum")(_optimizer(1, _momentum))
converter(f"{DOMAIN}.Adam")(_optimizer(2, _adam))
