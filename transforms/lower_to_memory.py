"""``lower-to-memory``: make storage explicit (relay dialect -> memory dialect).

Each step of ``@main`` becomes a ``memory.invoke`` of a primitive function that writes its
results into destination tensors, each in its own ``memory.alloc_storage``:

* a ``func.call`` of a primitive function (``relay.primitive = 1``, as fuse-ops makes them) is
  one step;
* a relay op left in ``@main`` (an unfused module, or ops fuse-ops left outside) is first
  outlined into its own private primitive function ``@<op>_<n>``, and is then one step: so the
  unfused module runs with one step per op and the executor only ever invokes functions;
* ``relay.constant`` stays as it is (constants never enter an arena);
* a call of a reshape-only primitive (``relay.reshape_only = 1``, or an outlined reshape-only
  op) with one input and one output of the same byte size becomes ``memory.alias`` of its
  input, as Relay's ``__nop``: no step, no copy; its storage's lifetime covers both views.

Graph inputs used by any step are copied into ``kind = "input"`` storage before step 0 when
``inputs-in-arena`` is set, else steps read the caller's arrays. Returned tensors get
``kind = "output"`` storage, ``external = true`` unless ``outputs-in-arena``. With
``workspace``, a step whose function needs scratch (``memory.workspace_bytes``) gets a
``kind = "workspace"`` storage for that step only. Every storage is aligned to ``alignment``
bytes (default 64, a cache line and TFLite's tensor alignment; ExecuTorch uses 16).

**Devices.** When ``@main`` was planned by ``plan-devices`` (it carries
``relay.param_virtual_devices``), every value's device is read off the IR
(``device_analysis.value_devices``), the ``on_device`` annotations are dropped (they are not steps),
and each (device, memory scope) is a memory space with its own pool: ``memory.pool
@<space>`` (``cpu0``, ``cuda0``, ``mcu0.sram``) is declared with the ``device``, and the
capacity and alignment a registered device gives its scope, and every storage is pinned to the
pool of the space its tensor lives in (``pools = ["mcu0.sram"]``; a step's workspace to its
device's). A ``device_copy`` is a step of its own whose input and output are in different pools.

Finally liveness runs: each storage gets ``lifetime = [first, last]``, each invoke its
``step``, and a ``memory.kill`` follows the last step of every storage but the outputs.

```mlir
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = relay.negative %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// after (inputs-in-arena=false): @negative_0 is outlined, and main is
//   %0 = memory.alloc_storage {size = 16, alignment = 64, kind = "output", lifetime = [0, 0]}
//   %1 = memory.alloc_tensor %0 {offset = 0} : tensor<4xf32>
//   memory.invoke @negative_0(%x) outs(%1) {step = 0} : (tensor<4xf32>) -> (tensor<4xf32>)
//   func.return %1 : tensor<4xf32>
```
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    FunctionType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from xrelay.dialects import op_location
from xrelay.dialects.adt import ADT_OPS, TypeDefOp, adt_feature
from xrelay.dialects.memory import (
    MAX_BYTES,
    AliasOp,
    AllocStorageOp,
    AllocTensorOp,
    CopyOp,
    InvokeOp,
    KillOp,
    PoolOp,
    workspace_bytes,
)
from xrelay.dialects.relay import FUNC_ATTRS, ConstantOp, LoopOp, RelayOp, byte_size, dtype_of
from xrelay.dialects.relay.device_analysis import check_devices, is_on_device, value_devices
from xrelay.dialects.relay.devices import DeviceError, VirtualDeviceAttr, virtual_device
from xrelay.dialects.relay.ops import RelayAllocStorageOp, RelayKillOp
from xrelay.error import TVMError
from xrelay.runtime.liveness import entry_block, storage_lifetimes

DEFAULT_ALIGNMENT = 64


class LowerToMemoryError(DiagnosticException, TVMError):
    """The module cannot be lowered; the message names the op or value at fault."""


def _flag(fn: func.FuncOp, key: str) -> bool:
    attr = fn.attributes.get(FUNC_ATTRS[key])
    return isinstance(attr, IntegerAttr) and attr.value.data == 1


def _describe(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else f"a value of type {v.type}"


def _static(v: SSAValue) -> TensorType:
    t = v.type
    if not isinstance(t, TensorType):
        raise LowerToMemoryError(f"lower-to-memory: {_describe(v)} is not a tensor ({t})")
    if not t.has_static_shape():
        raise LowerToMemoryError(
            f"lower-to-memory does not support dynamic shapes: {_describe(v)} has type {t}"
        )
    return t


def _bytes(t: TensorType, v: SSAValue | None) -> int:
    """``byte_size(t)``, or a ``LowerToMemoryError`` saying what needs more than 2**63 - 1."""
    n = byte_size(t)
    if n > MAX_BYTES:
        what = f"%{v.name_hint} ({t})" if v is not None and v.name_hint else f"a {t}"
        where = op_location(v.owner) if v is not None and isinstance(v.owner, Operation) else None
        raise LowerToMemoryError(
            f"{where + ': ' if where else ''}lower-to-memory: {what} needs {n} bytes, more than "
            "a 64-bit size can hold"
        )
    return n


class _Names:
    """Fresh function names for outlined ops (linear: a counter per base name)."""

    def __init__(self, module: ModuleOp):
        self.taken = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
        self.counters: dict[str, int] = {}

    def fresh(self, base: str) -> str:
        k = self.counters.get(base, 0)
        while f"{base}_{k}" in self.taken:
            k += 1
        self.counters[base] = k + 1
        name = f"{base}_{k}"
        self.taken.add(name)
        return name


def outline_op(op: RelayOp, module: ModuleOp, names: _Names) -> func.CallOp:
    """Move a relay op of ``@main`` into its own private primitive function and call it."""
    in_types = [v.type for v in op.operands]
    out_types = [r.type for r in op.results]
    block = Block(arg_types=in_types)
    clone = op.clone()
    for i, arg in enumerate(block.args):
        clone.operands[i] = arg
    block.add_op(clone)
    block.add_op(func.ReturnOp(*clone.results))
    name = names.fresh(op.RELAY_NAME.replace(".", "_"))
    fn = func.FuncOp(name, FunctionType.from_lists(in_types, out_types), Region(block), "private")
    fn.attributes[FUNC_ATTRS["Primitive"]] = IntegerAttr(1, i64)
    if type(op).RESHAPE_ONLY:
        fn.attributes[FUNC_ATTRS["reshape_only"]] = IntegerAttr(1, i64)
    module.body.block.add_op(fn)
    call = func.CallOp(name, list(op.operands), out_types)
    Rewriter.replace_op(op, call)
    return call


@dataclass
class _Lowering:
    module: ModuleOp
    inputs_in_arena: bool
    outputs_in_arena: bool
    alignment: int
    workspace: bool
    devices: dict[SSAValue, VirtualDeviceAttr] | None = None
    spaces: dict[str, VirtualDeviceAttr] | None = None

    def run(self) -> None:
        block = entry_block(self.module)
        for op in self.module.walk():
            if isinstance(op, ADT_OPS) and not isinstance(op, TypeDefOp):  # a definition alone is no value
                where = op.parent_op()
                while where is not None and not isinstance(where, func.FuncOp):
                    where = where.parent_op()
                fname = f"@{where.sym_name.data}" if isinstance(where, func.FuncOp) else "the module"
                raise LowerToMemoryError(
                    f"lower-to-memory: {fname} uses {adt_feature(op)} ('{op.name}'); the "
                    "arena runtime runs tensors only: run it with xrelay.run (the reference "
                    "interpreter) instead"
                )
        if any(isinstance(op, InvokeOp | AllocStorageOp | AllocTensorOp) for op in block.ops):
            raise LowerToMemoryError("lower-to-memory: @main is already lowered")
        for k, op in enumerate(block.ops):
            if isinstance(op, RelayAllocStorageOp | RelayKillOp):
                raise LowerToMemoryError(
                    f"lower-to-memory: @main holds Relay's '{op.RELAY_NAME}' (op #{k}); this pass plans "
                    "storage itself and does not take Relay's memory ops: run the program with "
                    "xrelay.run (the reference interpreter) instead"
                )
            if isinstance(op, LoopOp):
                raise LowerToMemoryError(
                    f"lower-to-memory: @main holds a 'relay.loop' (op #{k}); the arena runtime runs "
                    "straight-line programs only: run it with xrelay.run (the reference interpreter) instead"
                )
            if op.regions:  # Relay's If is scf.if; the arena runs one straight-line schedule
                cond = op.operands[0].owner.operands[0] if op.operands and op.operands[0].owner.operands else None
                what = f" on %{cond.name_hint}" if cond is not None and cond.name_hint else ""
                raise LowerToMemoryError(
                    f"lower-to-memory: @main holds an If ('{op.name}', op #{k}{what}); the arena "
                    "runtime runs straight-line programs only: run it with xrelay.run (the "
                    "reference interpreter) instead"
                )
        funcs = {op.sym_name.data: op for op in self.module.ops if isinstance(op, func.FuncOp)}
        names = _Names(self.module)
        ret = block.last_op
        if not isinstance(ret, func.ReturnOp):
            raise LowerToMemoryError("lower-to-memory: @main must end with func.return")
        for v in (*block.args, *ret.arguments):
            _static(v)
        main = block.parent_op()
        assert isinstance(main, func.FuncOp)
        self.devices = value_devices(main, funcs)
        if self.devices is not None:
            try:
                check_devices(main, funcs, self.devices)
            except ValueError as e:
                raise LowerToMemoryError(f"lower-to-memory: {e}") from None
            self.spaces = {}
            for op in list(block.ops):
                if is_on_device(op):  # an annotation, not a step
                    op.results[0].replace_all_uses_with(op.operands[0])
                    block.erase_op(op)

        # Unfused relay ops become one-op primitive functions.
        for op in list(block.ops):
            if isinstance(op, RelayOp):
                for v in (*op.operands, *op.results):
                    _static(v)
                old = list(op.results)
                call = outline_op(op, self.module, names)
                if self.devices is not None:
                    for r, new in zip(old, call.results, strict=True):
                        self.devices[new] = self.devices[r]
                funcs[call.callee.root_reference.data] = self.module.body.block.last_op

        if self.inputs_in_arena:
            self._copy_inputs(block)

        for op in list(block.ops):
            if isinstance(op, func.CallOp):
                self._lower_call(op, funcs)
            elif not isinstance(
                op, ConstantOp | func.ReturnOp | AllocStorageOp | AllocTensorOp | CopyOp
            ):
                raise LowerToMemoryError(
                    f"lower-to-memory: cannot lower '{op.name}' in @main (expected relay ops, "
                    "relay.constant and calls of primitive functions)"
                )

        self._mark_outputs(ret)
        self._declare_pools()
        self._annotate(block)

    def _pin(self, storage: AllocStorageOp, value: SSAValue) -> None:
        """Pin a storage to the pool of the memory space ``value`` lives in (planned modules)."""
        if self.devices is None or self.spaces is None:
            return
        device = self.devices.get(value)
        if device is None:
            raise LowerToMemoryError(f"lower-to-memory: no device known for {_describe(value)}")
        try:
            space = device.memory_space
        except DeviceError as e:
            raise LowerToMemoryError(f"lower-to-memory: {_describe(value)}: {e}") from None
        self.spaces.setdefault(space, device)
        storage.pools = ArrayAttr([StringAttr(space)])

    def _declare_pools(self) -> None:
        """One ``memory.pool`` per memory space used, unless the module declares it already."""
        if not self.spaces:
            return
        declared = {op.pool_name for op in self.module.ops if isinstance(op, PoolOp)}
        pools = []
        for space, device in self.spaces.items():
            if space in declared:
                continue
            spec = device.memory_scope_spec()
            canonical = virtual_device(device.device_type or "cpu", max(device.virtual_device_id, 0), device.target,
                                       device.memory_scope)
            pools.append(PoolOp(space, alignment=spec.alignment, capacity=spec.size, device=canonical))
        first = self.module.body.block.first_op
        if pools and first is not None:
            Rewriter.insert_op(pools, InsertPoint.before(first))

    def _storage(self, t: TensorType, kind: str, at: Operation, value: SSAValue | None = None) -> SSAValue:
        storage = AllocStorageOp(_bytes(t, value), alignment=self.alignment, kind=kind)
        if value is not None:
            self._pin(storage, value)
        tensor = AllocTensorOp(storage.result, t)
        Rewriter.insert_op([storage, tensor], InsertPoint.before(at))
        return tensor.result

    def _copy_inputs(self, block: Block) -> None:
        first = block.first_op
        assert first is not None
        for arg in block.args:
            if not arg.uses:
                continue
            t = _static(arg)
            storage = AllocStorageOp(_bytes(t, arg), alignment=self.alignment, kind="input")
            self._pin(storage, arg)
            if arg.name_hint:
                storage.result.name_hint = f"{arg.name_hint}_storage"
            tensor = AllocTensorOp(storage.result, t)
            if arg.name_hint:
                tensor.result.name_hint = f"{arg.name_hint}_in"
            arg.replace_all_uses_with(tensor.result)
            copy = CopyOp(arg, tensor.result)
            Rewriter.insert_op([storage, tensor, copy], InsertPoint.before(first))

    def _lower_call(self, call: func.CallOp, funcs: dict[str, func.FuncOp]) -> None:
        name = call.callee.root_reference.data
        fn = funcs.get(name)
        if fn is None:
            raise LowerToMemoryError(f"lower-to-memory: @main calls unknown function @{name}")
        if not _flag(fn, "Primitive"):
            raise LowerToMemoryError(
                f"lower-to-memory: @main calls @{name}, which is not primitive "
                "(run fuse-ops, or inline it first)"
            )
        for v in (*call.arguments, *call.results):
            _static(v)
        if _flag(fn, "reshape_only") and self._aliasable(call):
            (src,) = call.arguments
            (res,) = call.results
            alias = AliasOp(src, res.type)  # type: ignore[arg-type]
            Rewriter.replace_op(call, alias)
            return
        outs = [self._storage(r.type, "intermediate", call, r) for r in call.results]  # type: ignore[arg-type]
        for r, o in zip(call.results, outs):
            if r.name_hint:
                o.name_hint = r.name_hint
                assert isinstance(o.owner, AllocTensorOp)
                o.owner.storage.name_hint = f"{r.name_hint}_storage"
        ws: list[SSAValue] = []
        if self.workspace:
            need = workspace_bytes(fn, funcs.get)
            if need:
                w = AllocStorageOp(need, alignment=self.alignment, kind="workspace")
                if call.results:
                    self._pin(w, call.results[0])  # scratch of the device the step runs on
                w.result.name_hint = f"{name}_ws"
                Rewriter.insert_op(w, InsertPoint.before(call))
                ws.append(w.result)
        invoke = InvokeOp(name, list(call.arguments), outs, ws)
        Rewriter.insert_op(invoke, InsertPoint.before(call))
        for r, o in zip(call.results, outs):
            r.replace_all_uses_with(o)
        Rewriter.erase_op(call)

    @staticmethod
    def _aliasable(call: func.CallOp) -> bool:
        if len(call.arguments) != 1 or len(call.results) != 1:
            return False
        src, dst = call.arguments[0].type, call.results[0].type
        assert isinstance(src, TensorType) and isinstance(dst, TensorType)
        return byte_size(src) == byte_size(dst) and dtype_of(src.element_type) == dtype_of(
            dst.element_type
        )

    def _mark_outputs(self, ret: func.ReturnOp) -> None:
        for v in ret.arguments:
            root = v
            while isinstance(root.owner, AliasOp | AllocTensorOp):
                root = root.owner.operands[0]
            owner = root.owner
            if isinstance(owner, AllocStorageOp) and owner.storage_kind == "intermediate":
                owner.kind = StringAttr("output")
                if not self.outputs_in_arena:
                    owner.external = UnitAttr()

    def _annotate(self, block: Block) -> None:
        annotate_liveness(self.module)


def annotate_liveness(module: ModuleOp, entry: str = "main") -> None:
    """Write ``lifetime`` on every storage and ``step`` on every invoke of ``@entry``, and put a
    ``memory.kill`` after the last step of every storage that is not an output (existing kills
    are replaced, so this can run again after edits)."""
    block = entry_block(module, entry)
    for op in list(block.ops):
        if isinstance(op, KillOp):
            Rewriter.erase_op(op)
    lifetimes, n = storage_lifetimes(module, entry)
    invokes: list[InvokeOp] = []
    for op in block.ops:
        if isinstance(op, InvokeOp):
            op.step = IntegerAttr(len(invokes), i64)
            invokes.append(op)
    returned: set[Operation] = set()
    ret = block.last_op
    if isinstance(ret, func.ReturnOp):
        for v in ret.arguments:
            while isinstance(v.owner, AliasOp | AllocTensorOp):
                v = v.owner.operands[0]
            returned.add(v.owner)
    kills: dict[int, list[AllocStorageOp]] = {}
    for storage, (first, last) in lifetimes.items():
        storage.set_lifetime(first, last)
        if storage not in returned and invokes:
            kills.setdefault(last, []).append(storage)
    # a storage dies after its last step's invoke; at the last step, after the copies that
    # follow it too (place-concat-inputs puts them where a concatenation step was)
    anchors: list[Operation] = list(invokes)
    if invokes:
        op = invokes[-1].next_op
        while op is not None:
            if isinstance(op, CopyOp):
                anchors[-1] = op
            op = op.next_op
    for step, storages in kills.items():
        Rewriter.insert_op([KillOp(s.result) for s in storages], InsertPoint.after(anchors[step]))


@dataclass(frozen=True)
class LowerToMemoryPass(ModulePass):
    """Lower ``@main`` to the memory dialect: explicit storage, destination-passing steps."""

    name = "lower-to-memory"
    relay_name: ClassVar[str] = "LowerToMemory"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ()

    inputs_in_arena: bool = True
    """Copy graph inputs into arena storage before step 0 (ExecuTorch's default)."""
    outputs_in_arena: bool = True
    """Write graph outputs into arena storage (else ``external`` storage the caller provides)."""
    alignment: int = DEFAULT_ALIGNMENT
    """Byte alignment of every storage (a power of two)."""
    workspace: bool = True
    """Give steps that need scratch (``workspace_bytes``) a workspace storage."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.alignment < 1 or self.alignment & (self.alignment - 1):
            raise LowerToMemoryError(
                f"lower-to-memory: alignment {self.alignment} is not a power of two"
            )
        _Lowering(
            op, self.inputs_in_arena, self.outputs_in_arena, self.alignment, self.workspace
        ).run()
