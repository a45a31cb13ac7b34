"""``alias-slices``: slices that are one byte range of their source are views, not copies.

A step whose function only selects a contiguous part of its one input -- a ``strided_slice``
or ``split`` along an axis with only 1s before it, reshapes before and after (``take`` of a
constant index is such a slice after ``canonicalize-views``) -- copies those bytes into a
storage of its own. Its result can instead be a tensor placed in the source's storage at
that byte offset: the step disappears and its readers read the source's bytes (``qkv[0],
qkv[1], qkv[2]`` of a computed tensor; a packed projection that is only permuted before it
is sliced is sliced first by ``canonicalize-views``). This pass runs after ``lower-to-memory`` and ``place-concat-inputs``, before
``choose-scratch`` and ``plan-memory``, which then plan the new lifetimes:

```mlir
%s = memory.alloc_storage {size = 2304, ...}
%qkv = memory.alloc_tensor %s {offset = 0} : tensor<3x4x48xf32>
memory.invoke @proj(%x) outs(%qkv) ...
%k_s = memory.alloc_storage {size = 768, ...}
%k = memory.alloc_tensor %k_s {offset = 0} : tensor<4x48xf32>
memory.invoke @fused_strided_slice_reshape(%qkv) outs(%k) ...   // qkv[1]
// after: no slice step; %k is the middle third of %s
%k = memory.alloc_tensor %s {offset = 768} : tensor<4x48xf32>
```

**Which steps.** One input, every result a contiguous byte range of it: the function is a
chain of reshape-only ops (``reshape``, ``squeeze``, ``expand_dims``, ...), ``strided_slice``
(every axis before the first one it narrows has extent 1 in the result, that axis has step
1, every axis after it is whole) and ``split`` (axes before the split one of extent 1). The
input is a tensor of a storage that is not ``external`` (a step, a copy of a graph input or
a placed concatenation wrote it); each result is at the start of its own ``intermediate``
storage (not an output), read by steps only (the storage's other tensors are views of it that
earlier aliasing placed there, and move with it); its byte offset in the source is a multiple
of the storage's alignment (the kernels may count on the alignment their storage promised).

**The memory it keeps.** The source's storage then lives until the last reader of the
slices, and the slices' storages are gone. That can raise the most bytes live at once (a
small slice of a large tensor read much later would keep the whole tensor): the pass leaves a
step whose aliasing would raise the peak of its memory space. The steps are swept until none
changes: a slice made a view can make another's aliasing no longer raise the peak (an unrolled
LSTM's projection split into steps, each piece reshaped by a step of its own:
``tests/filecheck/transforms/alias-slices-lstm.mlir``). Liveness is recomputed, so
``plan-memory`` and ``verify-memory-plan`` see exactly the bytes the program touches and the
memory report stays exact.

``xrelay.build`` (and so the C target) runs it; ``PassContext(disabled_pass=["AliasSlices"])``
turns it off.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from xrelay.dialects.memory import AllocStorageOp, AllocTensorOp, InvokeOp, KillOp
from xrelay.dialects.relay import RelayOp, byte_size, shape_of
from xrelay.dialects.relay.ops import strided_slice_bounds
from xrelay.error import TVMError
from xrelay.transforms.lower_to_memory import annotate_liveness
from xrelay.transforms.place_concat_inputs import LiveBytes, pools_of, unplanned_steps

__all__ = ["AliasSlicesError", "AliasSlicesPass", "alias_slices", "slice_offsets"]


class AliasSlicesError(DiagnosticException, TVMError):
    """The module is not a lowered memory-dialect program."""


def _slice_offset(op: RelayOp, shape: list[int]) -> int | None:
    """The element offset of a ``strided_slice``'s result in its contiguous operand of
    ``shape`` when the result is one contiguous run of it (its axes longer than 1, in
    order, step through the operand row-major), else None."""
    a = op.attrs
    bounds = strided_slice_bounds(shape, a["begin"], a["end"], a["strides"], a["axes"], a["slice_mode"])
    out = list(shape_of(op.results[0].type))
    if bounds is None or len(bounds) != len(shape) or 0 in out:
        return None
    inner = [math.prod(shape[i + 1 :]) for i in range(len(shape))]
    for i, ((_, _, step), n) in enumerate(zip(bounds, out)):
        if n > 1 and step * inner[i] != math.prod(out[i + 1 :]):
            return None
    return sum(b * st for (b, _, _), st in zip(bounds, inner))


def slice_offsets(fn: func.FuncOp | None) -> list[int] | None:
    """The byte offset in ``fn``'s one argument of each of its results, when each is one
    contiguous byte range of it (see the module docstring), else None."""
    if fn is None or fn.is_declaration or len(fn.body.blocks) != 1:
        return None
    block = fn.body.block
    if len(block.args) != 1:
        return None
    where: dict[SSAValue, int] = {block.args[0]: 0}  # element offsets
    ret = block.last_op
    for op in block.ops:
        if op is ret:
            break
        if not isinstance(op, RelayOp) or any(v not in where for v in op.operands):
            return None
        src = op.operands[0]
        shape = list(shape_of(src.type))
        if not all(isinstance(d, int) for d in shape):
            return None
        if op.RESHAPE_ONLY and len(op.results) == 1:
            where[op.results[0]] = where[src]
        elif op.RELAY_NAME == "strided_slice":
            off = _slice_offset(op, shape)
            if off is None:
                return None
            where[op.results[0]] = where[src] + off
        elif op.RELAY_NAME == "split":
            axis = int(op.attrs["axis"]) % len(shape)
            if any(d != 1 for d in shape[:axis]):
                return None
            inner = math.prod(shape[axis + 1 :])
            start = 0
            for r in op.results:
                where[r] = where[src] + start * inner
                start += int(shape_of(r.type)[axis])
        else:
            return None
    if not isinstance(ret, func.ReturnOp) or not ret.operands or any(v not in where or isinstance(v, BlockArgument) for v in ret.operands):
        return None
    item = byte_size(block.args[0].type) // max(1, math.prod(shape_of(block.args[0].type)))
    return [where[v] * item for v in ret.operands]


class _Aliaser(LiveBytes):
    def run(self) -> int:
        done = 0
        while True:  # (a slice made a view can let another's source be held without a new peak)
            found = 0
            for inv in [op for op in self.block.ops if isinstance(op, InvokeOp)]:
                offsets = slice_offsets(self.funcs.get(inv.callee_name))
                if offsets is not None and len(inv.inputs) == 1 and len(inv.outs) == len(offsets):
                    found += self._alias(inv, offsets)
            done += found
            if not found:
                return done

    def _own_storage(self, v: SSAValue) -> AllocStorageOp | None:
        """The storage of a step's result (at its start), intermediate, read by steps; its
        other tensors are views of the result that earlier aliasing placed there (each within
        the result's bytes)."""
        t = v.owner
        if not isinstance(t, AllocTensorOp) or t.offset.value.data != 0:
            return None
        s = t.storage.owner
        if not isinstance(s, AllocStorageOp) or s.is_external or s.storage_kind != "intermediate" or s not in self.life:
            return None
        if any(not isinstance(u.operation, AllocTensorOp | KillOp) for u in s.result.uses):
            return None
        # (a tensor beyond the result's bytes -- a concatenation place-concat-inputs put
        # there, the result its first slice -- would move with it past the slice's bytes of
        # the source: Swin's roll at opt level 0 wrote past the source's storage)
        end = byte_size(v.type)
        for u in s.result.uses:
            o = u.operation
            if isinstance(o, AllocTensorOp) and o.offset.value.data + byte_size(o.result.type) > end:
                return None
        return s

    def _alias(self, inv: InvokeOp, offsets: list[int]) -> int:
        src = inv.inputs[0].owner
        if not isinstance(src, AllocTensorOp):
            return 0
        source = src.storage.owner
        if not isinstance(source, AllocStorageOp) or source.is_external or source not in self.life:
            return 0
        base = src.offset.value.data
        dests = [self._own_storage(v) for v in inv.outs]
        if any(d is None or d is source or pools_of(d) != pools_of(source) for d in dests):
            return 0
        if any((base + off) % source.align for off in offsets) or len(set(dests)) != len(dests):
            return 0
        first, last = self.life[source]
        for d in dests:
            last = max(last, self.life[d][1])  # type: ignore[index]
        key = pools_of(source)
        after = list(self.live.get(key, [0] * self.steps))
        row = {key: after}
        for d in dests:
            self._add(row, d, *self.life[d], -1)  # type: ignore[arg-type]
        self._add(row, source, *self.life[source], -1)
        self._add(row, source, first, last, 1)
        if max(after) > max(self.live.get(key, [0])):
            return 0  # the source held longer would raise the peak: the step stays
        self.live[key] = after
        self.life[source] = (first, last)
        for d, off in zip(dests, offsets):
            assert d is not None
            for old in [u.operation for u in d.result.uses if isinstance(u.operation, AllocTensorOp)]:
                moved = AllocTensorOp(source.result, old.result.type, base + off + old.offset.value.data)  # type: ignore[arg-type]
                moved.result.name_hint = old.result.name_hint
                assert old.parent is not None
                old.parent.insert_op_before(moved, old)
                old.result.replace_all_uses_with(moved.result)
                _erase(old)
            self.life.pop(d)
            for use in list(d.result.uses):
                _erase(use.operation)  # its kill
            _erase(d)
        scratch = [w.owner for w in inv.workspace]  # (a split's unused parts): not needed now
        _erase(inv)
        for w in scratch:
            if isinstance(w, AllocStorageOp):
                self._add(self.live, w, *self.life.pop(w), -1)
                for use in list(w.result.uses):
                    _erase(use.operation)  # its kill
                _erase(w)
        return 1


def _erase(op: Operation) -> None:
    """Remove ``op`` (unused by now) from its block."""
    op.detach()
    op.erase()


def alias_slices(module: ModuleOp, entry: str = "main") -> int:
    """Make the result of every slice step of ``@entry`` that can be a view of its source
    (see the module docstring); returns how many steps it removed."""
    if not unplanned_steps(module, entry, "alias-slices", AliasSlicesError):
        return 0
    done = _Aliaser(module, entry).run()
    if done:
        annotate_liveness(module, entry)
    return done


@dataclass(frozen=True)
class AliasSlicesPass(ModulePass):
    """Slices that are one byte range of their source become tensors in its storage."""

    name = "alias-slices"
    relay_name: ClassVar[str] = "AliasSlices"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        alias_slices(op)
