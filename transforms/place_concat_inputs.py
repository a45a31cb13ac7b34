"""``place-concat-inputs``: concatenation without copies -- each input is written in place.

A step that only concatenates (its function is one ``relay.concatenate`` of its arguments)
copies every input into its result. When the joined slices are contiguous byte ranges of the
result, the steps that produce the inputs can write their results straight there: each
input's storage becomes a sub-range of the concatenation's storage, and the concatenation
step disappears. This pass runs after ``lower-to-memory`` (and before ``choose-scratch`` and
``plan-memory``, which then plan the new lifetimes):

```mlir
%a_s = memory.alloc_storage {size = 1024, ...}
%a = memory.alloc_tensor %a_s {offset = 0} : tensor<1x4x8x8xf32>
memory.invoke @conv_a(%x) outs(%a) ...
%b_s = memory.alloc_storage {size = 2048, ...}
%b = memory.alloc_tensor %b_s {offset = 0} : tensor<1x8x8x8xf32>
memory.invoke @conv_b(%x) outs(%b) ...
%c_s = memory.alloc_storage {size = 3072, ...}
%c = memory.alloc_tensor %c_s {offset = 0} : tensor<1x12x8x8xf32>
memory.invoke @concatenate(%a, %b) outs(%c) ...      // axis = 1
// after: one storage, live from the first producer; no concatenation step
%c_s = memory.alloc_storage {size = 3072, ...}
%a = memory.alloc_tensor %c_s {offset = 0} : tensor<1x4x8x8xf32>
memory.invoke @conv_a(%x) outs(%a) ...
%b = memory.alloc_tensor %c_s {offset = 1024} : tensor<1x8x8x8xf32>
memory.invoke @conv_b(%x) outs(%b) ...
%c = memory.alloc_tensor %c_s {offset = 0} : tensor<1x12x8x8xf32>
```

**When a slice is contiguous.** Input ``k`` of a concatenation along ``axis`` is one byte
range of the result exactly when every dimension before ``axis`` is 1: an NCHW
concatenation along channels with batch 1, and a blocked one (NCHW8c, NCHW16c) along the
outer channel axis with batch 1, which is what the blocked layouts give when every input is
whole channel blocks (``alter-op-layout`` keeps a concatenation in blocks only then; a
concatenation along the inner ``c`` axis is not contiguous and keeps its copy). A
channels-last (NHWC) concatenation is a strided slice: its inputs keep their copies (writing
a strided destination is not something every engine's steps can do; see the memory guide).

**Which inputs are placed.** An input is placed when it is the only tensor of an
``intermediate`` storage of its own size (so the step producing it, or the steps producing
its parts when it is itself a placed concatenation, write it there; graph inputs,
constants, outputs and aliases of other values are not), this concatenation is the only
concatenation step that reads it (once), its storage is pinned to the same pools, and its
offset in the result is a multiple of its storage's alignment (kernels may count on the
alignment their storage promised). The other inputs keep their copy: a ``memory.copy``
into their slice where the concatenation was. A concatenation with no input placeable is
left as it is (one step, as before); so is one whose placement would raise the peak
(below). A result in ``external`` storage (an output the caller provides) keeps its step.

Nothing else writes the concatenation's storage (its slices are disjoint and each is written
by one producer or one copy), and liveness is recomputed: the storage is live from its first
producer to its last reader, so ``plan-memory`` and ``verify-memory-plan`` see exactly the
bytes the program touches.

**The peak.** Placed, the concatenation's storage is live from its first producer, so the
slices of inputs not computed yet are held earlier than before (while the copies and the
result were live together at the concatenation step, which is gone). The pass keeps the
most bytes live at once in each memory space (the plan's lower bound) from growing: if
placing every placeable input would raise it, it drops the first-produced ones from the
placement until it does not (those are copied), and leaves the step if none is left.

``xrelay.build`` (and so the C target) runs it; ``PassContext(disabled_pass=
["PlaceConcatInputs"])`` turns it off.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import BlockArgument, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from xrelay.dialects.memory import AllocStorageOp, AllocTensorOp, CopyOp, InvokeOp, KillOp
from xrelay.dialects.relay import byte_size
from xrelay.dialects.relay.ops import ConcatenateOp
from xrelay.error import TVMError
from xrelay.runtime.liveness import LivenessError, entry_block, storage_lifetimes
from xrelay.transforms.lower_to_memory import annotate_liveness

__all__ = ["LiveBytes", "PlaceConcatInputsError", "PlaceConcatInputsPass", "concat_of", "place_concat_inputs", "pools_of",
           "unplanned_steps"]


class PlaceConcatInputsError(DiagnosticException, TVMError):
    """The module is not a lowered memory-dialect program."""


def concat_of(fn: func.FuncOp | None) -> tuple[int, list[int]] | None:
    """``(axis, [argument index of each joined operand])`` if ``fn``'s body only
    concatenates its arguments (one ``relay.concatenate``, or concatenations of
    concatenations along the same axis, as fuse-ops groups them), else None."""
    if fn is None or fn.is_declaration or len(fn.body.blocks) != 1:
        return None
    block = fn.body.block
    ret = block.last_op
    if not isinstance(ret, func.ReturnOp) or len(ret.operands) != 1:
        return None
    if any(not isinstance(op, ConcatenateOp) for op in block.ops if op is not ret):
        return None
    root = ret.operands[0].owner
    if not isinstance(root, ConcatenateOp):
        return None
    t = root.results[0].type
    assert isinstance(t, TensorType)
    axis = int(root.attrs["axis"]) % t.get_num_dims()  # type: ignore[attr-defined]
    order: list[int] = []
    work: list[SSAValue] = list(reversed(root.operands))
    while work:
        v = work.pop()
        if isinstance(v, BlockArgument) and v.block is block:
            order.append(v.index)
        elif isinstance(v.owner, ConcatenateOp) and int(v.owner.attrs["axis"]) % t.get_num_dims() == axis:  # type: ignore[attr-defined]
            work.extend(reversed(v.owner.operands))
        else:
            return None
    return axis, order


def pools_of(s: AllocStorageOp) -> tuple:
    """The pools a storage is pinned to and those it is forbidden from (its memory space)."""
    return (
        tuple(a.data for a in s.pools.data) if s.pools else None,
        tuple(a.data for a in s.forbidden_pools.data) if s.forbidden_pools else (),
    )


def aligned_size(size: int, alignment: int) -> int:
    return -(-size // alignment) * alignment


class LiveBytes:
    """The storages' lifetimes of a lowered ``@entry`` and the bytes live at each step of
    each memory space (what bounds the plan from below), for passes that merge storages;
    they keep both up to date in the original step numbers as they rewrite."""

    def __init__(self, module: ModuleOp, entry: str):
        self.block = entry_block(module, entry)
        self.funcs = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
        self.life, n = storage_lifetimes(module, entry)
        self.live: dict[tuple, list[int]] = {}
        self.steps = max(n, 1)
        for s, (first, last) in self.life.items():
            self._add(self.live, s, first, last, 1)

    def _add(self, live: dict[tuple, list[int]], s: AllocStorageOp, first: int, last: int, sign: int) -> None:
        if s.is_external:
            return
        row = live.setdefault(pools_of(s), [0] * self.steps)
        size = aligned_size(s.nbytes, s.align) * sign
        for k in range(first, last + 1):
            row[k] += size


class _Placer(LiveBytes):
    def run(self) -> int:
        invokes = [op for op in self.block.ops if isinstance(op, InvokeOp)]
        concats = {op: spec for op in invokes if (spec := concat_of(self.funcs.get(op.callee_name))) is not None}
        # how many concatenation steps read each value (an input joined by several keeps its copies)
        self.readers: dict[SSAValue, int] = {}
        for op in concats:
            for v in set(op.inputs):
                self.readers[v] = self.readers.get(v, 0) + 1
        done = 0
        for op, (axis, order) in concats.items():
            done += self._place(op, axis, order)
        return done

    def _placeable(self, v: SSAValue, inv: InvokeOp, dest: AllocStorageOp, offset: int) -> AllocStorageOp | None:
        """The storage of ``v`` if it can become the slice at ``offset`` of ``dest``."""
        t = v.owner
        if not isinstance(t, AllocTensorOp) or t.offset.value.data != 0:
            return None
        s = t.storage.owner
        if not isinstance(s, AllocStorageOp) or s is dest or s.is_external or s.storage_kind != "intermediate":
            return None
        if s.nbytes != byte_size(v.type) or offset % s.align or pools_of(s) != pools_of(dest):  # type: ignore[arg-type]
            return None
        if self.readers.get(v, 0) != 1 or sum(1 for x in inv.inputs if x is v) != 1:
            return None
        if any(not isinstance(u.operation, AllocTensorOp | KillOp) for u in s.result.uses):
            return None
        return s

    def _raises_peak(
        self, dest: AllocStorageOp, parts: list[AllocStorageOp], scratch: list[AllocStorageOp]
    ) -> tuple[bool, tuple[int, int]]:
        """Whether placing ``parts`` in ``dest`` raises the most bytes live at once in its
        memory space (the concatenation's storage then lives from its first producer), and
        the storage's new lifetime."""
        first, last = self.life[dest]
        for s in parts:
            first, last = min(first, self.life[s][0]), max(last, self.life[s][1])
        key = pools_of(dest)
        after = {key: list(self.live.get(key, [0] * self.steps))}
        for s in [*parts, *scratch]:
            self._add(after, s, *self.life[s], -1)
        self._add(after, dest, *self.life[dest], -1)
        self._add(after, dest, first, last, 1)
        return max(after[key]) > max(self.live.get(key, [0])), (first, last)

    def _place(self, inv: InvokeOp, axis: int, order: list[int]) -> int:
        if len(inv.outs) != 1:
            return 0
        # a fused concatenation of concatenations holds the inner ones in its workspace
        scratch = [w.owner for w in inv.workspace]
        if any(not isinstance(w, AllocStorageOp) or w not in self.life for w in scratch):
            return 0
        out = inv.outs[0]
        t_out = out.owner
        if not isinstance(t_out, AllocTensorOp):
            return 0
        dest = t_out.storage.owner
        if not isinstance(dest, AllocStorageOp) or dest.is_external or dest not in self.life:
            return 0
        out_t = out.type
        assert isinstance(out_t, TensorType)
        shape = out_t.get_shape()
        if any(d != 1 for d in shape[:axis]) or math.prod(shape) == 0:
            return 0  # the slices are strided (or empty): the step stays
        row = byte_size(out_t) // shape[axis]  # bytes per index along the axis
        offset = t_out.offset.value.data
        slices: list[tuple[SSAValue, int, AllocStorageOp | None]] = []
        for i in order:
            v = inv.inputs[i]
            vt = v.type
            assert isinstance(vt, TensorType)
            slices.append((v, offset, self._placeable(v, inv, dest, offset)))
            offset += vt.get_shape()[axis] * row
        # all that can be placed; while that raises the peak, all but the first produced
        # (the storage then starts later, and holds fewer slices of inputs not yet computed)
        found = [s for _, _, s in slices if s is not None]
        once = [s for s in found if found.count(s) == 1]  # (two inputs viewing one storage: neither)
        parts = sorted(once, key=lambda s: self.life[s][0])
        while parts:
            raises, lifetime = self._raises_peak(dest, parts, scratch)
            if not raises:
                break
            parts = parts[1:]
        if not parts:
            return 0
        slices = [(v, off, s if s in parts else None) for v, off, s in slices]
        for s in [*parts, *scratch]:
            self._add(self.live, s, *self.life.pop(s), -1)
        self._add(self.live, dest, *self.life[dest], -1)
        self._add(self.live, dest, *lifetime, 1)
        self.life[dest] = lifetime
        # the storage must come before every tensor placed in it: before the first input storage
        first = min(parts, key=self.block.get_operation_index)
        dest.detach()
        Rewriter.insert_op(dest, InsertPoint.before(first))
        for v, off, s in slices:
            if s is None:
                slot = AllocTensorOp(dest.result, v.type, off)  # type: ignore[arg-type]
                Rewriter.insert_op([slot, CopyOp(v, slot.result)], InsertPoint.before(inv))
                continue
            for use in list(s.result.uses):
                user = use.operation
                if isinstance(user, KillOp):
                    Rewriter.erase_op(user)
                    continue
                assert isinstance(user, AllocTensorOp)
                moved = AllocTensorOp(dest.result, user.result.type, off + user.offset.value.data)  # type: ignore[arg-type]
                moved.result.name_hint = user.result.name_hint
                Rewriter.replace_op(user, moved)
            Rewriter.erase_op(s)
        Rewriter.erase_op(inv)
        for w in scratch:
            for use in list(w.result.uses):
                Rewriter.erase_op(use.operation)  # its kill
            Rewriter.erase_op(w)
        return 1


def unplanned_steps(module: ModuleOp, entry: str, name: str, error: type[Exception]) -> bool:
    """Whether ``@entry`` is a lowered, not yet planned program with steps (what the passes
    between ``lower-to-memory`` and ``plan-memory`` rewrite); raises ``error`` naming the
    pass ``name`` for a module that is not lowered or is planned already."""
    try:
        block = entry_block(module, entry)
    except LivenessError as e:
        raise error(f"{name}: {e}") from None
    if not any(isinstance(op, InvokeOp) for op in block.ops):
        if any(isinstance(op, func.CallOp) for op in block.ops):
            raise error(f"{name}: @main is not lowered (run lower-to-memory first)")
        return False
    if any(isinstance(op, AllocStorageOp) and op.placement is not None for op in block.ops):
        raise error(f"{name}: @main is planned already; run it before plan-memory")
    return True


def place_concat_inputs(module: ModuleOp, entry: str = "main") -> int:
    """Place, in place, the inputs of every concatenation step of ``@entry`` that can be
    (see the module docstring); returns how many concatenation steps it removed."""
    if not unplanned_steps(module, entry, "place-concat-inputs", PlaceConcatInputsError):
        return 0
    done = _Placer(module, entry).run()
    if done:
        annotate_liveness(module, entry)
    return done


@dataclass(frozen=True)
class PlaceConcatInputsPass(ModulePass):
    """Producers write into the concatenation's slices; the concatenation step disappears."""

    name = "place-concat-inputs"
    relay_name: ClassVar[str] = "PlaceConcatInputs"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        place_concat_inputs(op)
