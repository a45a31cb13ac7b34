"""``annotate-target``: Relay's AnnotateTarget, mark what each external compiler takes.

Every op (and every call of a composite function) gets a target: the first of ``targets``
that supports it (an op by the target's op list, e.g. ``dnnl``'s; a composite function when
its ``relay.composite`` name starts with ``<target>.``), else ``"default"``. Then, as Relay's
``AnnotateTargetRewriter`` does, each operand gets ``compiler_end`` with the target of the op
that produced it (when that op has one) and ``compiler_begin`` with the consumer's target, and
each value the function returns gets ``compiler_end``::

    %r = relay.nn.relu %x : ...

with ``targets=dnnl`` becomes::

    %0 = relay.annotation.compiler_begin %x {compiler = "dnnl"} : ...
    %r = relay.nn.relu %0 : ...
    %1 = relay.annotation.compiler_end %r {compiler = "dnnl"} : ...

Constants and parameters get only the consumer's ``compiler_begin``. Running it again (for
another target) keeps what is annotated: an op whose first operand comes from a non-default
``compiler_begin`` is left as it is, and ``default`` annotations are replaced, as in Relay. Each use gets its own annotation, as each Relay call argument does. Functions that
are composite, primitive or already partitioned (``relay.compiler``) are not annotated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from xrelay.dialects.relay import FUNC_ATTRS, ConstantOp, RelayOp
from xrelay.dialects.relay.ops import CompilerBeginOp, CompilerEndOp
from xrelay.error import TVMError

__all__ = ["DEFAULT_TARGET", "AnnotateTargetError", "AnnotateTargetPass", "annotate_target", "register_target"]

DEFAULT_TARGET = "default"
COMPOSITE = FUNC_ATTRS["Composite"]
_SKIP = (FUNC_ATTRS["Composite"], FUNC_ATTRS["Primitive"], FUNC_ATTRS["Compiler"])

_TARGETS: dict[str, Callable[[Operation], bool]] = {}
"""Relay's ``target.<name>`` op attribute: a predicate per external compiler."""


class AnnotateTargetError(DiagnosticException, TVMError):
    """An unknown target."""


def register_target(name: str, supported: Callable[[Operation], bool]) -> None:
    """Declare which ops the external compiler ``name`` takes (``supported(op) -> bool``)."""
    _TARGETS[name] = supported


def _predicates(targets: Sequence[str], given: Mapping[str, Callable[[Operation], bool]]) -> dict:
    """Each target's predicate: the one given (an engine's, resolved by name above the passes),
    else one registered with ``register_target``; an unknown target is an error."""
    known = {**_TARGETS, **given}
    for target in targets:
        if target != DEFAULT_TARGET and target not in known:
            raise AnnotateTargetError(
                f"annotate-target: unknown target '{target}' (known: {', '.join(sorted(known)) or 'none'})"
            )
    return known


def _begin(value: SSAValue, target: str) -> CompilerBeginOp:
    return CompilerBeginOp.make([value], compiler=target)  # type: ignore[return-value]


def _end(value: SSAValue, target: str) -> CompilerEndOp:
    return CompilerEndOp.make([value], compiler=target)  # type: ignore[return-value]


def _target_of(op: Operation, targets: Sequence[str], module: ModuleOp, predicates: Mapping) -> str:
    if isinstance(op, func.CallOp):
        callee = _lookup(module, op.callee.root_reference.data)
        if callee is not None and COMPOSITE in callee.attributes:
            name = callee.attributes[COMPOSITE]
            assert isinstance(name, StringAttr)
            prefix = name.data.split(".", 1)[0] if "." in name.data else None
            if prefix in targets:
                return prefix
        return DEFAULT_TARGET
    for target in targets:
        check = predicates.get(target)
        if check is not None and check(op):
            return target
    return DEFAULT_TARGET


def _lookup(module: ModuleOp, name: str) -> func.FuncOp | None:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    return None


def _annotate_block(block: Block, targets: Sequence[str], module: ModuleOp, predicates: Mapping) -> None:
    target_of: dict[SSAValue, str] = {}
    stale: list[Operation] = []  # default annotations replaced by new ones
    for op in list(block.ops):
        if isinstance(op, CompilerEndOp):
            target_of.setdefault(op.operands[0], op.attrs["compiler"])
            continue
        if isinstance(op, CompilerBeginOp | ConstantOp | func.ReturnOp):
            continue
        if not isinstance(op, RelayOp | func.CallOp) or not op.operands:
            continue
        first = op.operands[0].owner
        if isinstance(first, CompilerBeginOp) and first.attrs["compiler"] != DEFAULT_TARGET:
            continue  # annotated by an earlier run
        target = _target_of(op, targets, module, predicates)
        for i, value in enumerate(op.operands):
            owner = value.owner
            if isinstance(owner, CompilerBeginOp):
                if owner.attrs["compiler"] != DEFAULT_TARGET:
                    continue
                stale.append(owner)  # a default begin is annotated again
                value = owner.operands[0]
            elif value in target_of:
                end = _end(value, target_of[value])
                block.insert_op_before(end, op)
                value = end.result
            begin = _begin(value, target)
            block.insert_op_before(begin, op)
            op.operands[i] = begin.result
        for r in op.results:
            target_of[r] = target
    ret = block.last_op
    if isinstance(ret, func.ReturnOp):
        for i, value in enumerate(ret.operands):
            owner = value.owner
            if isinstance(owner, CompilerEndOp) and owner.attrs["compiler"] == DEFAULT_TARGET:
                stale.append(owner)
                value = owner.operands[0]
            elif value not in target_of or isinstance(owner, CompilerEndOp):
                continue
            end = _end(value, target_of[value])
            block.insert_op_before(end, ret)
            ret.operands[i] = end.result
    for op in stale:
        if op.parent is block and not op.results[0].uses:
            block.erase_op(op)


def annotate_target(
    module: ModuleOp,
    targets: Sequence[str],
    supported: Mapping[str, Callable[[Operation], bool]] | None = None,
) -> None:
    """Annotate every function of ``module`` for ``targets`` (in place); ``supported`` gives
    targets' op predicates (the engines' ``supported``), besides those of ``register_target``."""
    predicates = _predicates(targets, supported or {})
    for fn in [op for op in module.ops if isinstance(op, func.FuncOp)]:
        if fn.is_declaration or any(a in fn.attributes for a in _SKIP):
            continue
        for block in fn.body.blocks:
            _annotate_block(block, targets, module, predicates)


@dataclass(frozen=True)
class AnnotateTargetPass(ModulePass):
    """Relay's ``AnnotateTarget(targets)``: ``annotate-target{targets=dnnl}``. An engine's
    name is resolved to its predicate (``supported``) above the passes
    (``xrelay.backend.engines.resolve_pass``: relay-opt, Relay's Python API, the build)."""

    name = "annotate-target"
    relay_name: ClassVar[str] = "AnnotateTarget"
    relay_opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    targets: tuple[str, ...] = ()
    include_non_call_ops: bool = True  # Relay's flag; tuples are not values here, so both agree
    supported: tuple[tuple[str, Callable[[Operation], bool]], ...] = ()
    """(target, predicate) pairs: the engines' ops, from Python only."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        targets = (self.targets,) if isinstance(self.targets, str) else tuple(self.targets)
        annotate_target(op, targets, dict(self.supported))
