"""What the ``dnnl`` external compiler takes, as Relay's ``relay.op.contrib.dnnl`` declares it.

``pattern_table()`` is Relay's list of composite patterns (``dnnl.conv2d_bias_relu``,
``dnnl.dense_bias_gelu``, ``dnnl.conv2d_bias_sum_relu``, ...), in Relay's order, with its
predicates, and ``dnnl.{conv2d,dense}[_bias]_scale[_sum]`` (a constant per-channel scale after
the bias or the bias-free op, folded into the weights by the oneDNN reader: ConvNeXt's layer
scale, then its residual), ``dnnl.dense[_bias]_<eltwise>_mul`` (an activation times a gate: SwiGLU's
product as a binary post-op) and ``dnnl.gelu``/``dnnl.gelu_tanh`` (the activation alone,
after an op no pattern anchors); ``supported(op)`` is Relay's ``target.dnnl`` op attribute
(the ops annotate-target offloads one by one). Relay's qnn patterns are not here (qnn ops
reach this point lowered).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.ir import Operation

from xrelay.dialects.relay import ConstantOp, RelayOp, dtype_of, shape_of
from xrelay.kernels.nn import explicit_pool_padding
from xrelay.transforms._dataflow_pattern import (
    ConstantPattern,
    DFPattern,
    Match,
    WildcardPattern,
    is_constant,
    is_op,
    wildcard,
)

__all__ = ["SUPPORTED_OPS", "pattern_table", "supported"]

SUPPORTED_OPS = (
    "nn.batch_norm", "nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.conv2d_transpose",
    "nn.conv3d_transpose", "nn.dense", "nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d",
    "nn.max_pool3d", "nn.avg_pool3d", "abs", "clip", "exp", "log", "sqrt", "round", "nn.relu",
    "nn.leaky_relu", "tanh", "sigmoid", "nn.softmax", "add", "multiply", "nn.layer_norm",
    "nn.batch_matmul", "nn.instance_norm",
)  # fmt: skip
"""Relay's ``_register_external_op_helper`` list for dnnl, and ``nn.instance_norm`` (GroupNorm
as torch exports it; the reader runs it as a layer normalisation of its rows)."""

POST_OPS = ("nn.relu", "tanh", "sigmoid", "clip", "gelu", "swish", "mish", "hardswish", "hardsigmoid",
            "gelu_tanh", "nn.leaky_relu", None)  # fmt: skip
"""Relay's eltwise epilogues and, after ``mish``, the ones exported models use that Relay's
table lacks (MobileNetV3's hard-swish and hard-sigmoid, GPT-2's tanh-GELU, the leaky ReLU of
CSPDarknet and TResNet: oneDNN's relu with its slope as alpha). Each is written
once, in the form ``canonicalize-arith`` leaves (constants last, a division by a constant as
a product by its reciprocal, ``power(x, 3)`` as products, the 0.5 of GELU outermost); Relay's
own GELU (``x / sqrt 2``) is kept as an alternative."""


def supported(op: Operation) -> bool:
    """Relay's ``target.dnnl`` check: a listed op, no int64 operand, and pools with
    ``ceil_mode`` only where explicit padding gives the same windows (``ceil_mode_padding``;
    Relay refuses every ceil-mode pool)."""
    if not isinstance(op, RelayOp) or op.RELAY_NAME not in SUPPORTED_OPS:
        return False
    if any(dtype_of(v.type) == "int64" for v in op.operands):
        return False
    if op.RELAY_NAME in ("nn.max_pool2d", "nn.avg_pool2d") and op.attrs.get("ceil_mode"):
        return explicit_pool_padding(op) is not None
    return not ("pool" in op.RELAY_NAME and op.attrs.get("ceil_mode"))




def _append_eltwise(op: DFPattern, eltwise: str | None) -> DFPattern:
    if eltwise == "gelu":
        scaled = is_op("multiply")(op, wildcard()) | is_op("divide")(op, wildcard())
        added = is_op("add")(is_op("erf")(scaled), wildcard())
        return is_op("multiply")(is_op("multiply")(op, added), wildcard())
    if eltwise == "gelu_tanh":
        cube = is_op("multiply")(is_op("multiply")(op, op), op)
        inner = is_op("multiply")(is_op("add")(op, is_op("multiply")(cube, wildcard())), wildcard())
        added = is_op("add")(is_op("tanh")(inner), wildcard())
        return is_op("multiply")(is_op("multiply")(op, added), wildcard())
    if eltwise == "swish":
        return is_op("multiply")(op, is_op("sigmoid")(op) | is_op("sigmoid")(is_op("multiply")(op, wildcard())))
    if eltwise in ("hardswish", "hardsigmoid"):
        # alpha x + beta, or alpha x alone (a bias before it took the beta: canonicalize-arith's
        # form of torch's clip(x + 3, 0, 6) / 6 after a biased convolution)
        scaled = is_op("multiply")(op, wildcard())
        linear = is_op("add")(scaled, wildcard()) | is_op("multiply")(op, is_constant())
        hsig = is_op("clip")(linear).has_attr({"a_min": 0.0, "a_max": 1.0})
        return hsig if eltwise == "hardsigmoid" else is_op("multiply")(op, hsig)
    if eltwise == "mish":
        log = is_op("log")(is_op("add")(is_op("exp")(op), wildcard()))
        return is_op("multiply")(op, is_op("tanh")(log))
    if eltwise:
        return is_op(eltwise)(op)
    return op


def _operand_op(op: Operation, i: int) -> Operation | None:
    owner = op.operands[i].owner
    return owner if isinstance(owner, Operation) else None


def _name(op: Operation | None) -> str:
    return op.RELAY_NAME if isinstance(op, RelayOp) else ""


_CONVS = ("nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.conv2d_transpose", "nn.conv3d_transpose")
"""The convolutions the patterns anchor (the transposed ones are oneDNN's deconvolution)."""


def _add_checker(add: Operation, kind: str) -> bool:
    """Relay's ``add_checker``: a sum adds two equal shapes after an add; a bias add follows a
    convolution (1-D, 2-D, 3-D or transposed: a decoder's upsampling) whose ``channels``
    equals the bias's element count."""
    first = _operand_op(add, 0)
    if kind == "sum":
        return _name(first) == "add" and shape_of(add.operands[0].type) == shape_of(add.operands[1].type)
    if _name(first) not in _CONVS:
        return False
    assert isinstance(first, RelayOp)
    channels = first.attrs.get("channels")
    shape = shape_of(add.operands[1].type)
    return channels is not None and None not in shape and channels == math.prod(shape)


def _bias_add_predicate(root: Operation) -> bool:
    if _name(root) == "nn.relu":
        root = _operand_op(root, 0)  # type: ignore[assignment]
    return _name(root) != "add" or _add_checker(root, "bias_add")


def _sum_predicate(root: Operation) -> bool:
    if _name(root) == "nn.relu":
        root = _operand_op(root, 0)  # type: ignore[assignment]
    bias_add = _operand_op(root, 0)
    return bias_add is not None and _add_checker(root, "sum") and _add_checker(bias_add, "bias_add")


def _conv_bias_sum(conv: str, relu: bool) -> DFPattern:
    out = is_op("add")(is_op("add")(is_op(conv)(wildcard(), wildcard()), wildcard()), wildcard())
    return is_op("nn.relu")(out) if relu else out


def _scale_predicate(root: Operation) -> bool:
    """A ``*[_bias]_scale`` composite: the multiply after the bias (or the bias-free
    convolution or matmul, its rows viewed with another shape of the same units) is by a
    constant that varies along the output channels only (ConvNeXt's layer scale, a
    per-channel affine after a convolution), so it folds into the weights and the bias;
    with ``_sum`` the residual add adds two equal shapes."""
    mul = _operand_op(root, 0) if _name(root) == "add" else root
    if _name(mul) != "multiply" or not isinstance(mul.operands[1].owner, ConstantOp):
        return False
    if _name(root) == "add" and shape_of(root.operands[0].type) != shape_of(root.operands[1].type):
        return False
    below = _operand_op(mul, 0)
    if below is not None and _name(below) == "reshape":  # (a matmul's rows viewed back)
        if shape_of(below.results[0].type)[-1:] != shape_of(below.operands[0].type)[-1:]:
            return False  # the units are not the last axis any more
        below = _operand_op(below, 0)
    bias_add = below if below is not None and _name(below) == "add" else None
    anchor = _operand_op(bias_add, 0) if bias_add is not None else below
    if anchor is None or _name(anchor) not in ("nn.conv2d", "nn.dense"):
        return False
    if bias_add is not None and _name(anchor) == "nn.conv2d" and not _add_checker(bias_add, "bias_add"):
        return False
    out = list(shape_of(mul.results[0].type))
    if list(shape_of(mul.operands[0].type)) != out:
        return False  # the product broadcasts the convolution's result
    if _name(anchor) == "nn.dense":
        axis = len(out) - 1
    else:
        assert isinstance(anchor, RelayOp)
        axis = (anchor.attrs.get("out_layout") or anchor.attrs.get("data_layout") or "NCHW").index("C")
    const = list(shape_of(mul.operands[1].type))
    lead = len(out) - len(const)
    return lead >= 0 and all(d == 1 or (k + lead == axis and d == out[axis]) for k, d in enumerate(const))


def _scaled(op_name: str, residual: bool, with_bias: bool = True) -> tuple:
    out = is_op(op_name)(wildcard(), wildcard())
    if with_bias:
        out = is_op("add")(out, wildcard())
    if op_name == "nn.dense":  # (the matmul's rows viewed back: the same bytes)
        out = is_op("reshape")(out) | out
    out = is_op("multiply")(out, is_constant())
    name = op_name.replace("nn.", "dnnl.") + ("_bias_scale" if with_bias else "_scale")
    if residual:
        return (name + "_sum", is_op("add")(out, wildcard()), _scale_predicate)
    return (name, out, _scale_predicate)


def _float32(root: Operation) -> bool:
    return all(dtype_of(v.type) == "float32" for v in (*root.operands, *root.results))


def _op_pattern(op_name: str, with_bias: bool, eltwise: str | None) -> tuple:
    name = op_name.replace("nn", "dnnl")
    if "_transpose" in op_name:
        name = "dnnl.deconv" + op_name.split("_")[0][-2:]
    name += "_bias" if with_bias else ""
    name += ("_" + eltwise.split(".")[-1]) if eltwise else ""
    out = is_op(op_name)(wildcard(), wildcard())
    if with_bias:
        out = is_op("add")(out, wildcard())
    if op_name == "nn.dense" and eltwise:
        # a reshape between the matmul and its activation (GPT-2's Conv1D: addmm on the
        # flattened rows, then the view back to (batch, seq, features)) is the same bytes
        out = is_op("reshape")(out) | out
    out = _append_eltwise(out, eltwise)
    if "conv" in op_name:
        return (name, out, _bias_add_predicate)
    return (name, out)


_OUTSIDE = (WildcardPattern, ConstantPattern)
"""Pattern nodes bound to values from outside a match."""


def _gated(with_bias: bool, eltwise: str) -> tuple:
    """``dnnl.dense[_bias]_<eltwise>_mul``: the matmul's activation times a gate, a computed
    tensor of the product's own shape (a gated linear unit: SwiGLU ``silu(x W_g) * (x W_u)``,
    ReGLU, GLU's ``sigmoid``; the activation on either side of the product), which oneDNN
    applies as a binary multiply post-op reading the gate from the arena. A constant factor,
    a broadcast, or a gate the activation's own ops compute (``x * sigmoid(x)`` read as
    ``sigmoid(x)`` gated by ``x``) is no gate."""
    name, out = _op_pattern("nn.dense", with_bias, eltwise)

    def check(root: Operation) -> bool:
        shape = tuple(shape_of(root.results[0].type))
        if not _float32(root) or any(
            tuple(shape_of(v.type)) != shape or isinstance(v.owner, ConstantOp)
            for v in root.operands
        ):
            return False
        for act, gate in (root.operands, root.operands[::-1]):
            m = Match()
            if m.match(out, act):  # the gate is none of the activation's own values
                inner = (v for p, v in m.memo.items() if not isinstance(p, _OUTSIDE))
                return not any(gate is v for v in inner)
        return False

    return (name + "_mul", is_op("multiply")(out, wildcard()), check)


def pattern_table() -> list[tuple[str, DFPattern] | tuple[str, DFPattern, Callable]]:
    """Relay's ``dnnl.pattern_table()`` (without its two qnn entries)."""
    biased = is_op("add")(is_op("nn.dense")(wildcard(), wildcard()), wildcard())
    # the residual after the rows are viewed back (GPT-2's Conv1D: addmm on the flattened
    # rows, the view to (batch, seq, features), then the residual add): the same bytes
    dense_sum = is_op("add")(is_op("reshape")(biased) | biased, wildcard())
    table: list = [
        ("dnnl.dense_bias_sum", dense_sum),
        *((f"dnnl.{conv[3:]}_bias_sum{'_relu' * relu}", _conv_bias_sum(conv, relu), _sum_predicate)
          for conv in ("nn.conv2d", "nn.conv3d") for relu in (True, False)),
    ]  # fmt: skip
    for with_bias in (True, False):
        for elt in POST_OPS:
            if not with_bias and not elt:
                continue
            if with_bias and not elt:
                # a constant scale per channel after the bias (and a residual after it),
                # before the plain biased patterns claim the convolution or matmul
                table += [
                    _scaled(op, residual, biased)
                    for biased in (True, False) for op in ("nn.conv2d", "nn.dense") for residual in (True, False)
                ]  # fmt: skip
            for conv in _CONVS:
                table.append(_op_pattern(conv, with_bias, elt))
            if elt:  # an activation times a gate before the activation alone takes the matmul
                table.append(_gated(with_bias, elt))
            table.append(_op_pattern("nn.dense", with_bias, elt))
    # GELU after an op no pattern above anchors (a transpose back to tokens, a GroupNorm):
    # one oneDNN eltwise step instead of its four or five native ones
    table += [("dnnl." + elt, _append_eltwise(wildcard(), elt), _float32) for elt in ("gelu", "gelu_tanh")]
    return table
