"""``rewrite-annotated-ops``: Relay's RewriteAnnotatedOps, ``on_device`` to ``device_copy``.

The older form of device placement (TVM before PlanDevices): every op whose result an
``on_device`` annotates runs on that annotation's device, every other op (and every
parameter) on ``fallback-device``; the annotations are removed and a ``device_copy`` is
inserted on every edge between values on different devices, one per use. Primitive functions
are left alone. ``plan-devices`` (which ``xrelay.build`` runs) then records the placement.

```mlir
%0 = relay.add %x, %y
%1 = relay.sqrt %0
%2 = relay.on_device %1 {virtual_device = #relay.virtual_device<cuda(0)>}
%3 = relay.log %0
%4 = relay.subtract %2, %3
// rewrite-annotated-ops{fallback-device=cpu}:
%0 = relay.add %x, %y
%1 = relay.device_copy %0 {src_virtual_device = <cpu(0)>, dst_virtual_device = <cuda(0)>}
%2 = relay.sqrt %1
%3 = relay.device_copy %2 {src_virtual_device = <cuda(0)>, dst_virtual_device = <cpu(0)>}
%4 = relay.log %0
%5 = relay.subtract %3, %4
```
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from xrelay.dialects.relay.device_analysis import is_on_device, is_primitive
from xrelay.dialects.relay.devices import DeviceError, VirtualDeviceAttr, as_virtual_device
from xrelay.transforms.plan_devices import PlanDevicesError, insert_device_copy


def rewrite_annotated_ops(module: ModuleOp, fallback: VirtualDeviceAttr) -> None:
    """Run the rewrite in place (see the module docstring)."""
    for fn in module.ops:
        if not isinstance(fn, func.FuncOp) or fn.is_declaration or is_primitive(fn):
            continue
        block = fn.body.block
        device: dict[SSAValue, VirtualDeviceAttr] = {a: fallback for a in block.args}
        for op in block.ops:
            if is_on_device(op):
                continue
            annotated = [
                u.operation.attrs["virtual_device"] for r in op.results for u in r.uses if is_on_device(u.operation)
            ]
            dev = annotated[0] if annotated else fallback
            for r in op.results:
                device[r] = dev
        for op in list(block.ops):
            if is_on_device(op):
                op.results[0].replace_all_uses_with(op.operands[0])
                block.erase_op(op)
        for op in list(block.ops):
            if isinstance(op, func.ReturnOp):
                continue  # the function's result lives where it was computed
            here = _device_of(op, device, fallback)
            for index, v in enumerate(list(op.operands)):
                there = device.get(v, fallback)
                if there != here:
                    op.operands[index] = insert_device_copy(v, there, here, op)


def _device_of(op: Operation, device: dict[SSAValue, VirtualDeviceAttr], fallback: VirtualDeviceAttr):
    return device.get(op.results[0], fallback) if op.results else fallback


@dataclass(frozen=True)
class RewriteAnnotatedOpsPass(ModulePass):
    """Relay's RewriteAnnotatedOps (see the module docstring)."""

    name = "rewrite-annotated-ops"
    relay_name: ClassVar[str] = "RewriteAnnotatedOps"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ()

    fallback_device: str | int = "cpu"
    """Where unannotated ops run: a name, ``name(id)`` or a DLPack type code (Relay passes 1)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        value = self.fallback_device
        if isinstance(value, str) and value.isdigit():
            value = int(value)
        try:
            fallback = as_virtual_device(value)
        except DeviceError as e:
            raise PlanDevicesError(f"rewrite-annotated-ops: fallback-device: {e}") from None
        rewrite_annotated_ops(op, fallback)


__all__ = ["RewriteAnnotatedOpsPass", "rewrite_annotated_ops"]
