"""The layout rewriter behind ``convert-layout`` and ``alter-op-layout`` (Relay's LayoutRewriter).

Ops are visited in program order. Each value carries two layouts: the one it had before the
rewrite (``old``) and the one it has now (``new``). For an op with a layout rule
(``xrelay.dialects.relay.layout``):

1. the rule on the old input layouts gives the layouts the op used before (``old_cur``);
2. the pass's hook may replace the op or its attributes (ConvertLayout's desired layouts,
   AlterOpLayout's target rule);
3. the rule on the new input layouts gives the layouts the new op wants (``new_cur``) and its
   result layouts;
4. each input gets a ``layout_transform`` from what it is to what the op wants, unless they
   agree; one transform per (value, source, destination) is made and shared.

An op without a rule, or whose rule cannot infer, gets its inputs back in their old layouts
and stays as it was; so do non-relay ops (``func.return``, ``func.call``), which is why a
function's results keep their layouts. A per-channel operand of lower rank is expanded with
``expand_dims`` before a transform that needs more axes (``C`` -> ``NHWC`` -> ``NCHW``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from xrelay.dialects.dyn import DYN_OPS
from xrelay.dialects.qnn import QNN_OPS
from xrelay.dialects.relay import FUNC_ATTRS, RELAY_OPS, RelayOp, RelayTypeError, shape_of
from xrelay.dialects.relay.layout import Layout, LayoutError, infer_layout, same

logger = logging.getLogger("xrelay.layout")

NewCall = Callable[
    [RelayOp, dict[str, Any], list[TensorType], list[SSAValue]],
    tuple[str, dict[str, Any], list[SSAValue]],
]
"""The pass's hook: ``(op, attrs, old input types, new inputs) -> (op name, attrs, inputs)``
of the replacement (Relay's CallWithNewLayouts; the inputs may be new values built before
``op``, which are then treated as the inputs they replace)."""


def _op_class(name: str) -> type[RelayOp]:
    if name.startswith("qnn."):
        return QNN_OPS[name]
    if name.startswith("dyn."):
        return DYN_OPS[name]
    return RELAY_OPS[name]


@dataclass
class _Alt:
    value: SSAValue
    old: Layout | None
    new: Layout | None


class LayoutRewriter:
    """Rewrite the functions of a module with one hook (one instance per pass run)."""

    def __init__(self, new_call: NewCall):
        self.new_call = new_call
        self.memo: dict[tuple[SSAValue, str, str], SSAValue] = {}
        self.created: list[Operation] = []

    # ---- transforms ---------------------------------------------------------------------

    def _insert(self, name: str, operands: list[SSAValue], anchor: Operation, **attrs: Any) -> SSAValue:
        op = _op_class(name).make(operands, **attrs)
        Rewriter.insert_op(op, InsertPoint.before(anchor))
        self.created.append(op)
        return op.results[0]

    def transform(self, value: SSAValue, src: Layout | None, dst: Layout | None, anchor: Operation) -> SSAValue:
        """``value`` (in ``src``) in layout ``dst``; memoised, inserted before ``anchor``."""
        if same(src, dst):
            return value
        if src is None or dst is None:
            raise LayoutError(f"cannot transform between an undefined layout and {src or dst}")
        key = (value, src.name, dst.name)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        out = value
        if src.ndim_primal < dst.ndim_primal:
            if all(d == 1 for d in shape_of(value.type)):  # one element broadcasts in any layout
                self.memo[key] = value
                return value
            src_expanded = src.expand_primal(dst)
            out = self._insert(
                "expand_dims", [out], anchor, axis=0, num_newaxis=dst.ndim_primal - src.ndim_primal
            )
            src = src_expanded
        if src != dst:
            out = self._insert("layout_transform", [out], anchor, src_layout=src.name, dst_layout=dst.name)
        self.memo[key] = out
        return out

    def realize(self, alt: _Alt, anchor: Operation) -> SSAValue:
        """The value back in the layout it had before the rewrite."""
        return self.transform(alt.value, alt.new, alt.old, anchor)

    # ---- ops ----------------------------------------------------------------------------

    def rewrite_op(self, op: RelayOp, state: dict[SSAValue, _Alt]) -> Operation | None:
        """The replacement of ``op`` in new layouts (results recorded in ``state``), or None."""
        alts = [state.get(v) or _Alt(v, None, None) for v in op.operands]
        # A producer's layout with another rank than the value (Relay's dense says "NC" for
        # any rank) says nothing about its axes: the value counts as having no layout.
        for i, (v, a) in enumerate(zip(op.operands, alts)):
            if a.old is not None and a.old.ndim != len(shape_of(v.type)):
                alts[i] = _Alt(self.realize(a, op), None, None)
        types = [v.type for v in op.operands]
        old_prd = [a.old for a in alts]
        new_prd = [a.new for a in alts]
        name = op.RELAY_NAME
        first = infer_layout(name, op.attrs, None, old_prd, types)
        if first is None or len(first.inputs) != len(alts) or len(first.outputs) != len(op.results):
            return None
        old_cur, old_out = first.inputs, first.outputs
        new_prd_inferred = [n if n is not None else c for n, c in zip(new_prd, old_cur, strict=True)]
        old_prd_inferred = [o if o is not None else c for o, c in zip(old_prd, old_cur, strict=True)]
        new_name, new_attrs, new_args = self.new_call(op, first.attrs, types, [a.value for a in alts])
        if len(new_args) != len(alts):
            raise LayoutError(f"{op.name}: the replacement takes {len(new_args)} inputs, not {len(alts)}")
        second = infer_layout(new_name, new_attrs, new_prd_inferred, old_prd_inferred, types)
        if second is None or len(second.inputs) != len(alts) or len(second.outputs) != len(op.results):
            return None
        new_cur, new_out = second.inputs, second.outputs
        args = []
        for v, o_prd, o_cur, n_prd, n_cur in zip(new_args, old_prd, old_cur, new_prd, new_cur, strict=True):
            if same(o_cur, o_prd):
                v = self.transform(v, n_prd, n_cur, op)
            else:
                if o_prd is not None:
                    v = self.transform(v, n_prd, o_prd, op)
                v = self.transform(v, o_cur, n_cur, op)
            args.append(v)
        if new_name == name and args == list(op.operands) and second.attrs == dict(op.attrs):
            # nothing changes: the op stays itself (with any attributes it carries)
            for r, lo, ln in zip(op.results, old_out, new_out, strict=True):
                state[r] = _Alt(r, lo, ln)
            return op
        new_op = _op_class(new_name).make(args, **second.attrs)
        Rewriter.insert_op(new_op, InsertPoint.before(op))
        self.created.append(new_op)
        for old_r, new_r, lo, ln in zip(op.results, new_op.results, old_out, new_out, strict=True):
            if old_r.name_hint is not None:
                new_r.name_hint = old_r.name_hint
            state[old_r] = _Alt(new_r, lo, ln)
        return new_op

    def run_function(self, fn: func.FuncOp) -> None:
        state: dict[SSAValue, _Alt] = {}
        replaced: list[Operation] = []
        for op in list(fn.body.block.ops):
            if isinstance(op, RelayOp):
                try:
                    new_op = self.rewrite_op(op, state)
                except (LayoutError, RelayTypeError) as e:
                    logger.debug("keeping %s in its layout: %s", op.name, e)
                    new_op = None
                if new_op is op:
                    continue
                if new_op is not None:
                    replaced.append(op)
                    continue
            for i, v in enumerate(op.operands):
                alt = state.get(v)
                if alt is not None:
                    op.operands[i] = self.realize(alt, op)
        for op in reversed(replaced):
            Rewriter.erase_op(op)
        # transforms made for a rewrite that then failed are left unused
        for op in reversed(self.created):
            if op.parent is not None and not any(r.uses for r in op.results):
                Rewriter.erase_op(op)
        self.created.clear()
        self.memo.clear()

    def run(self, module: ModuleOp) -> None:
        for op in list(module.body.block.ops):
            if not isinstance(op, func.FuncOp) or op.body.blocks.first is None:
                continue
            # fused, external (BYOC) and composite functions are code for a backend as they are
            if any(FUNC_ATTRS[k] in op.attributes for k in ("Primitive", "Compiler", "Composite")):
                continue
            self.run_function(op)
