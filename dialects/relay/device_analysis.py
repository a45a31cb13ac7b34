"""Devices of a planned module, as Relay's device-aware visitors recover them.

After ``plan-devices`` (Relay's PlanDevices) every non-primitive function carries
``relay.param_virtual_devices`` and ``relay.result_virtual_device``, and a value lives on the
device its uses expect (Relay's lexical scoping, read off SSA uses):

* a ``func.return`` operand: the function's result device;
* an operand of ``relay.on_device``: its ``virtual_device``;
* the operand of ``relay.device_copy`` (or of a call of a primitive function that is one
  ``device_copy``, as fuse-ops outlines it): the copy's source device;
* an argument of a call of a planned function: that parameter's device;
* any other operand: the device of the using op's results (primitives run where their
  results live).

``value_devices`` computes this for every value of a function in one backward sweep; passes
after plan-devices (fuse-ops, lower-to-memory, the graph JSON) use it.
"""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue

from xrelay.dialects.relay import FUNC_ATTRS, RelayOp
from xrelay.dialects.relay.devices import VirtualDeviceAttr

PARAM_DEVICES = "relay.param_virtual_devices"
RESULT_DEVICE = "relay.result_virtual_device"


def is_on_device(op: Operation) -> bool:
    return isinstance(op, RelayOp) and op.RELAY_NAME == "on_device"


def is_device_copy(op: Operation) -> bool:
    return isinstance(op, RelayOp) and op.RELAY_NAME == "device_copy"


def is_primitive(fn: func.FuncOp) -> bool:
    attr = fn.attributes.get(FUNC_ATTRS["Primitive"])
    return isinstance(attr, IntegerAttr) and attr.value.data != 0


def device_copy_of(fn: func.FuncOp) -> RelayOp | None:
    """The ``device_copy`` a primitive function consists of (Relay's ``__copy``), else None."""
    if fn.is_declaration or not is_primitive(fn):
        return None
    ops = list(fn.body.block.ops)
    if len(ops) == 2 and is_device_copy(ops[0]) and isinstance(ops[1], func.ReturnOp):
        copy = ops[0]
        if copy.operands[0] is fn.body.block.args[0] and ops[1].operands[0] is copy.results[0]:
            assert isinstance(copy, RelayOp)
            return copy
    return None


def function_devices(fn: func.FuncOp) -> tuple[list[VirtualDeviceAttr], VirtualDeviceAttr] | None:
    """``(parameter devices, result device)`` of a planned function, else None."""
    params = fn.attributes.get(PARAM_DEVICES)
    result = fn.attributes.get(RESULT_DEVICE)
    if not isinstance(result, VirtualDeviceAttr) or not isinstance(params, ArrayAttr):
        return None
    devices = [d for d in params.data if isinstance(d, VirtualDeviceAttr)]
    if len(devices) != len(params.data):
        return None
    return devices, result


def functions_by_name(module: ModuleOp) -> dict[str, func.FuncOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}


def is_planned(module: ModuleOp, entry: str = "main") -> bool:
    fn = functions_by_name(module).get(entry)
    return fn is not None and function_devices(fn) is not None


def value_devices(
    fn: func.FuncOp, funcs: Mapping[str, func.FuncOp]
) -> dict[SSAValue, VirtualDeviceAttr] | None:
    """The device of every value of a planned function (see the module docstring), or None."""
    planned = function_devices(fn)
    if planned is None or fn.is_declaration:
        return None
    params, result = planned
    block = fn.body.block
    devices: dict[SSAValue, VirtualDeviceAttr] = dict(zip(block.args, params, strict=False))

    def expected(user: Operation, index: int) -> VirtualDeviceAttr | None:
        return _expected(user, index, devices, funcs, result)

    for op in reversed(list(block.ops)):
        if not op.results:
            continue
        if is_on_device(op):
            dev = op.attrs["virtual_device"]
        elif is_device_copy(op):
            dev = op.attrs["dst_virtual_device"]
        else:
            dev = None
            if isinstance(op, func.CallOp):
                callee = funcs.get(op.callee.root_reference.data)
                copy = device_copy_of(callee) if callee is not None else None
                callee_devices = function_devices(callee) if callee is not None else None
                if copy is not None:
                    dev = copy.attrs["dst_virtual_device"]
                elif callee_devices is not None:
                    dev = callee_devices[1]
            for r in op.results if dev is None else ():
                for use in r.uses:
                    dev = expected(use.operation, use.index)
                    if dev is not None:
                        break
                if dev is not None:
                    break
            if dev is None:
                dev = result
        for r in op.results:
            devices[r] = dev
    return devices


def _expected(
    user: Operation,
    index: int,
    devices: Mapping[SSAValue, VirtualDeviceAttr],
    funcs: Mapping[str, func.FuncOp],
    result: VirtualDeviceAttr,
) -> VirtualDeviceAttr | None:
    """The device a use wants its operand on (None: not known yet)."""
    if isinstance(user, func.ReturnOp):
        return result
    if is_on_device(user):
        return user.attrs["virtual_device"]
    if is_device_copy(user):
        return user.attrs["src_virtual_device"]
    if isinstance(user, func.CallOp):
        callee = funcs.get(user.callee.root_reference.data)
        if callee is not None:
            copy = device_copy_of(callee)
            if copy is not None:
                return copy.attrs["src_virtual_device"]
            callee_devices = function_devices(callee)
            if callee_devices is not None and index < len(callee_devices[0]):
                return callee_devices[0][index]
    for r in user.results:
        if r in devices:
            return devices[r]
    return None


def check_devices(fn: func.FuncOp, funcs: Mapping[str, func.FuncOp], devices: Mapping[SSAValue, VirtualDeviceAttr]) -> None:
    """Every use of a value wants it where it lives; a device change without a ``device_copy``
    (a planned module edited by hand) is a ``ValueError`` naming the value and both devices."""
    planned = function_devices(fn)
    if planned is None:
        return
    for v, dev in devices.items():
        for use in v.uses:
            want = _expected(use.operation, use.index, devices, funcs, planned[1])
            if want is not None and want != dev:
                name = f"%{v.name_hint}" if v.name_hint else f"a value of type {v.type}"
                raise ValueError(
                    f"{name} lives on {dev} but '{use.operation.name}' uses it on {want} without a "
                    "device_copy (run plan-devices)"
                )


def op_device(op: Operation, devices: Mapping[SSAValue, VirtualDeviceAttr]) -> VirtualDeviceAttr | None:
    """Where an op runs: the device of its results (a copy runs on its destination)."""
    for r in op.results:
        if r in devices:
            return devices[r]
    return None


__all__ = [
    "PARAM_DEVICES",
    "RESULT_DEVICE",
    "check_devices",
    "device_copy_of",
    "function_devices",
    "functions_by_name",
    "is_device_copy",
    "is_on_device",
    "is_planned",
    "op_device",
    "value_devices",
]
