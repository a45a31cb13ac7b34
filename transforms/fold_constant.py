"""``fold-constant``: evaluate constant subgraphs at compile time (Relay's FoldConstant).

Every relay op whose operands are all ``relay.constant`` is run with the numpy kernels
(``xrelay.kernels.evaluate``, the constant evaluator the ONNX importer folds with too) and its
used results become constants. Ops are visited in program order, so whole constant subgraphs
collapse in one pass, in time linear in the number of ops. Relay's rules kept:

* stateful ops (``nn.dropout``) are never evaluated, nor ``device_copy`` (a transfer, not a
  computation), nor annotations (``on_device``, ``annotation.stop_fusion``);
* a constant under ``on_device`` annotations counts as a constant (Relay looks through them:
  a let-bound annotated constant still folds); the op's own annotations stay;
* ``shape_of`` and ``ndarray_size`` of a statically shaped tensor are folded even when the
  tensor is not constant (Relay's EvaluateShapeOf / EvaluateNdarraySize);
* ``argwhere`` of a constant folds into a constant of the size found (its type has a dynamic
  dimension; ``infer-type`` makes its uses static);
* calls of functions are not evaluated (Relay folds only calls of operators);
* an If (``scf.if``) whose condition is a constant becomes the branch it takes;
* qnn ops are folded only with ``fold-qnn=true`` (Relay's ``FoldConstant(fold_qnn=True)``),
  evaluated with their reference kernels, which give the bits of their lowering.

Two decisions of xrelay:

* **Size limit.** A result with more than ``max-elements`` elements (default 2**24, i.e. 64 MiB
  of float32, larger than any weight of the ResNet/MobileNet workloads) is not materialised,
  so a ``broadcast_to``/``tile`` of a small constant cannot blow up the module by accident.
  ``max-elements=0`` removes the limit.
* **Names.** A folded constant keeps the ``param_name`` of its largest named input (the
  weight in ``multiply(@conv0_weight, scale)``), so it still prints by reference with
  ``--emit-params``; the printer makes clashing names unique. Anonymous inputs give an
  anonymous constant.

An op whose kernel raises (an unsupported dtype, say) is left as it is. Constants orphaned by
folding are erased.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects import scf, tensor
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from xrelay.dialects.relay import ConstantOp, RelayOp, dtype_of, numpy_dtype, shape_of
from xrelay.kernels import evaluate

DEFAULT_MAX_ELEMENTS = 2**24

_NEVER_FOLD = frozenset({"device_copy", "on_device", "annotation.stop_fusion"})
_DATA_SHAPED = frozenset({"argwhere"})
"""Ops whose result shape depends on their operands' values: folded into a constant of the
size computed (``infer-type`` then makes the uses static)."""


def _num_elements(t: TensorType) -> int | None:
    shape = shape_of(t)
    if any(d is None for d in shape):
        return None
    return int(np.prod(shape, dtype=np.int64)) if shape else 1


def _derived_name(inputs: list[ConstantOp]) -> str | None:
    best: ConstantOp | None = None
    for c in inputs:
        if c.param_name is not None and (best is None or c.num_elements > best.num_elements):
            best = c
    return None if best is None else best.param_name.data


def _constant_under(value: SSAValue) -> ConstantOp | None:
    """The constant ``value`` is, looking through ``on_device`` annotations."""
    owner = value.owner
    while isinstance(owner, RelayOp) and owner.RELAY_NAME == "on_device":
        owner = owner.operands[0].owner
    return owner if isinstance(owner, ConstantOp) else None


def _evaluate(op: RelayOp) -> list[np.ndarray] | None:
    inputs = [_constant_under(o).numpy() for o in op.operands]  # type: ignore[union-attr]
    return evaluate(type(op), inputs, op.attrs, [r.type for r in op.results])  # type: ignore[misc]


def fold_op(op: Operation, max_elements: int = DEFAULT_MAX_ELEMENTS, fold_qnn: bool = False) -> bool:
    """Fold ``op`` into constants if it qualifies; return whether it was folded."""
    if not isinstance(op, RelayOp) or op.STATEFUL or op.RELAY_NAME in _NEVER_FOLD:
        return False
    if not fold_qnn and op.RELAY_NAME.startswith("qnn."):
        return False
    used = [r for r in op.results if r.uses]
    if not used or not all(isinstance(r.type, TensorType) for r in op.results):
        return False  # nothing to fold into, or not a tensor (memory.alloc_storage's Storage)
    for r in used:
        n = _num_elements(r.type)  # type: ignore[arg-type]
        if n is None and op.RELAY_NAME not in _DATA_SHAPED:
            return False
        if n is not None and max_elements and n > max_elements:
            return False
    if op.RELAY_NAME in ("shape_of", "ndarray_size"):
        in_shape = shape_of(op.operands[0].type)  # type: ignore[arg-type]
        if any(d is None for d in in_shape):
            return False
        value = in_shape if op.RELAY_NAME == "shape_of" else int(np.prod(in_shape, dtype=np.int64))
        arrays = [np.array(value, dtype=numpy_dtype(op.results[0].type.element_type))]  # type: ignore[union-attr]
        inputs: list[ConstantOp] = []
    else:
        inputs = []
        for o in op.operands:
            c = _constant_under(o)
            if c is None:
                return False
            inputs.append(c)
        arrays = _evaluate(op)
        if arrays is None:
            return False
        if max_elements and any(a.size > max_elements for a in arrays):  # a data-shaped result
            return False
    name = _derived_name(inputs)
    for res, array in zip(op.results, arrays, strict=True):
        if not res.uses:
            continue
        t = res.type
        assert isinstance(t, TensorType)
        const = ConstantOp.from_numpy(array, name, _relay_dtype(t))
        Rewriter.insert_op(const, InsertPoint.before(op))
        if res.name_hint is not None:
            const.result.name_hint = res.name_hint
        res.replace_all_uses_with(const.result)
    operands = [o.owner for o in op.operands]
    Rewriter.erase_op(op)
    while operands:  # orphaned constants, and annotations of them
        owner = operands.pop()
        if not isinstance(owner, Operation) or owner.parent is None or any(r.uses for r in owner.results):
            continue
        if isinstance(owner, ConstantOp) or (isinstance(owner, RelayOp) and owner.RELAY_NAME == "on_device"):
            operands.extend(o.owner for o in owner.operands)
            Rewriter.erase_op(owner)
    return True


def _relay_dtype(t: TensorType) -> str:
    return dtype_of(t.element_type)


def fold_constants(
    module: ModuleOp, max_elements: int = DEFAULT_MAX_ELEMENTS, fold_qnn: bool = False
) -> int:
    """Fold every constant subgraph in ``module``; return the number of ops folded."""
    folded = 0
    for op in list(module.walk()):
        if op.parent is None:
            continue
        if isinstance(op, scf.IfOp):
            folded += _fold_if(op)
        elif fold_op(op, max_elements, fold_qnn):
            folded += 1
    return folded


def _fold_if(op: scf.IfOp) -> bool:
    """An If on a constant condition becomes the branch it takes (Relay's FoldConstant)."""
    test = op.cond.owner
    if not isinstance(test, tensor.ExtractOp) or not isinstance(test.tensor.owner, ConstantOp):
        return False
    taken = op.true_region if test.tensor.owner.numpy().reshape(-1)[0] else op.false_region
    block = taken.block
    yielded = list(block.last_op.operands)
    for inner in list(block.ops)[:-1]:
        inner.detach()
        Rewriter.insert_op(inner, InsertPoint.before(op))
    for old, new in zip(op.results, yielded, strict=True):
        old.replace_all_uses_with(new)
    Rewriter.erase_op(op)
    if not test.result.uses:
        const = test.tensor.owner
        Rewriter.erase_op(test)
        if not const.result.uses:
            Rewriter.erase_op(const)
    return True


@dataclass(frozen=True)
class FoldConstantPass(ModulePass):
    """Evaluate ops whose operands are all constants (and static ``shape_of``)."""

    name = "fold-constant"
    relay_name: ClassVar[str] = "FoldConstant"
    opt_level: ClassVar[int] = 2
    required: ClassVar[tuple[str, ...]] = ()

    max_elements: int = DEFAULT_MAX_ELEMENTS
    fold_qnn: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_elements < 0:
            raise ValueError(f"fold-constant: max-elements must be >= 0, got {self.max_elements}")
        fold_constants(op, self.max_elements, self.fold_qnn)
