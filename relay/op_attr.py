"""Relay's per-op rewrite hooks from Python: ``FTVMAlterOpLayout`` and ``FInferCorrectLayout``.

``register_alter_op_layout(op_name)`` and ``TempOpAttr(op_name, "FTVMAlterOpLayout", fn)``
install a Relay-style alter function for ``alter-op-layout``, as ``tvm.relay.op`` and
``tvm.relay.testing.temp_op_attr`` do::

    def alter_conv2d(attrs, inputs, tinfos, out_type):
        data, weight = inputs
        new_attrs = dict(attrs, data_layout="NCHW16c")
        return relay.nn.conv2d(data, weight, **new_attrs)

    with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", alter_conv2d):
        mod = relay.transform.AlterOpLayout()(mod)

The function gets the op's attributes, its inputs as expressions (of the types the inputs
have after the producers' rewrite), ``tinfos`` with the original ``shape`` and ``dtype`` of
each input and ``out_type`` of the result; it returns a call of an op (whose arguments may be
new expressions of the inputs) or None to keep the op. Relay's priority ``level`` is accepted
and ignored: the last registration wins.

``register_infer_correct_layout(op_name)`` installs a Relay-style layout rule (Relay's
``FInferCorrectLayout``, which ``convert-layout`` and ``alter-op-layout`` run)::

    @register_infer_correct_layout("nn.relu", level=11)
    def infer_relu(attrs, new_in_layouts, old_in_layouts, old_in_types):
        ret = new_in_layouts[0] if new_in_layouts else old_in_layouts[0]
        return InferCorrectLayoutOutput([ret], [ret], attrs)

``new_in_layouts`` is empty when no producer changed its layout; layouts are
``xrelay.dialects.relay.layout.Layout`` (``tvm.tir.layout(name)``), an empty name standing for
Relay's undefined layout (the op then keeps its old layouts).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from xrelay.dialects.relay import RelayOp, dtype_of, shape_of
from xrelay.dialects.relay.layout import Layout, LayoutInference, register_infer_layout
from xrelay.relay.expr import Attrs, Call, Op, Var
from xrelay.relay.module import _Lowering
from xrelay.transforms.alter_op_layout import set_rule

__all__ = ["InferCorrectLayoutOutput", "TempOpAttr", "register_alter_op_layout", "register_infer_correct_layout"]


@dataclass(frozen=True)
class TensorInfo:
    """What Relay's ``tinfos`` / ``out_type`` give an alter function: shape and dtype."""

    shape: tuple[int | None, ...]
    dtype: str


def _info(t: Any) -> TensorInfo:
    return TensorInfo(tuple(shape_of(t)), dtype_of(t.element_type))


def python_alter_rule(fn: Callable[..., Any]) -> Callable[..., Any]:
    """An ``ALTER_OP_LAYOUT`` rule running the Relay-style function ``fn``."""

    def rule(op: RelayOp, attrs: dict[str, Any], types: list[Any], args: list[SSAValue], anchor: Operation):

        # Untyped, as in Relay: the call is typed after its arguments are transformed.
        inputs = [Var(f"alter_input{i}") for i in range(len(args))]
        res = fn(Attrs(attrs), inputs, [_info(t) for t in types], _info(op.results[0].type))
        if res is None:
            return None
        if not isinstance(res, Call) or not isinstance(res.op, Op):
            raise ValueError(f"the alter function of {op.name} must return a call of an op, got {res!r}")
        env: dict[int, list[SSAValue]] = {id(v): [a] for v, a in zip(inputs, args, strict=True)}
        block = Block()
        lowering = _Lowering({})
        new_args: list[SSAValue] = []
        for arg in res.args:
            lowering._emit_body(arg, block, env, "alter-op-layout")  # noqa: SLF001 - same package
            new_args.extend(env[id(arg)])
        for new in list(block.ops):
            new.detach()
            Rewriter.insert_op(new, InsertPoint.before(anchor))
        return res.op.name, dict(res.attrs), new_args

    return rule


def register_alter_op_layout(op_name: str, alter_layout: Callable[..., Any] | None = None, level: int = 10):
    """Register ``alter_layout`` as ``op_name``'s FTVMAlterOpLayout (usable as a decorator)."""

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        set_rule(op_name, python_alter_rule(f))
        return f

    return register(alter_layout) if alter_layout is not None else register


@dataclass
class InferCorrectLayoutOutput:
    """What a Python layout rule returns (Relay's ``InferCorrectLayoutOutput``)."""

    input_layouts: list[Any]
    output_layouts: list[Any]
    new_attrs: Any


def _layout(v: Any) -> Layout | None:
    name = v.name if isinstance(v, Layout) else str(v or "")
    return Layout(name) if name else None  # "" is Relay's undefined layout


def python_layout_rule(fn: Callable[..., Any]) -> Callable[..., Any]:
    """An ``INFER_LAYOUT`` rule running the Relay-style function ``fn``."""

    def rule(attrs: dict[str, Any], new: list[Layout | None] | None, old: list[Layout | None], types: list[Any]):
        out = fn(Attrs(attrs), list(new or []), [lay or Layout("") for lay in old], list(types))
        if not isinstance(out, InferCorrectLayoutOutput):
            raise TypeError(f"a layout rule must return an InferCorrectLayoutOutput, got {out!r}")
        return LayoutInference(
            [_layout(v) for v in out.input_layouts], [_layout(v) for v in out.output_layouts], dict(out.new_attrs)
        )

    return rule


def register_infer_correct_layout(op_name: str, infer_layout: Callable[..., Any] | None = None, level: int = 10):
    """Register ``infer_layout`` as ``op_name``'s FInferCorrectLayout (usable as a decorator)."""

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        register_infer_layout(op_name)(python_layout_rule(f))
        return f

    return register(infer_layout) if infer_layout is not None else register


class TempOpAttr:
    """Set an op attribute for the duration of a ``with`` block (Relay's testing helper)."""

    def __init__(self, op_name: str, attr_key: str, attr_value: Callable[..., Any]):
        if attr_key != "FTVMAlterOpLayout":
            raise NotImplementedError(f"TempOpAttr: only FTVMAlterOpLayout can be set here, not {attr_key}")
        self.op_name = op_name
        self.rule = python_alter_rule(attr_value)
        self.saved: Any = None

    def __enter__(self) -> TempOpAttr:
        self.saved = set_rule(self.op_name, self.rule)
        return self

    def __exit__(self, *exc: object) -> None:
        set_rule(self.op_name, self.saved)
