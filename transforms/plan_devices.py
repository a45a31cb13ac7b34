"""``plan-devices``: Relay's PlanDevices, a virtual device for every value of the module.

Devices flow in from ``relay.on_device`` annotations, ``relay.device_copy`` ops, ``shape_of``
(its result lives on the host CPU) and the ``relay.param_virtual_devices`` /
``relay.result_virtual_device`` attributes of an earlier run (so the pass is idempotent). The
phases are Relay's (``device_planner.cc``):

1. **Conflicting uses.** A value without a constraint of its own whose uses want different
   devices gets a ``device_copy`` at the uses that disagree with the first one met walking
   back from the result (Relay's ConflictedNodeFinder). Unlike Relay, the copy's source and
   destination are left free for unification to decide (Relay fixes them from this local walk,
   which can contradict what the whole module implies), and capture drops it if they meet. Unlike Relay, this includes the free
   result of an ``on_device`` (Relay leaves it to capture, which can copy it to one device
   only, and fails).
2. **Unification.** Over the whole module: a primitive op's operands and results share one
   device (each call site its own: ops are device polymorphic), so do a primitive function
   call's arguments and results (unless the function is one ``device_copy``); a call of any
   other function unifies its arguments and results with the callee's parameters and result
   (functions are not device polymorphic); ``on_device`` constrains its operand
   (``constrain_body``) and/or its result (``constrain_result``, and always when returned
   straight from the function); ``device_copy`` constrains its operand to the source and its
   result to the destination. These hard constraints come first; two that cannot be joined
   are an error naming the value and both devices. Then each primitive's operands are
   unified with it, users before producers; an operand that cannot join (it was pulled to
   another device by its other uses or its producer) gets a ``device_copy`` on that edge
   where Relay would stop with an error.
3. **Defaults.** ``on_device`` with neither flag joins its operand and result if it can;
   a function's free result device becomes ``default-device``, its free parameters the
   result's device; every other free value ``default-device``. Partial constraints
   (``cuda`` with no id) are completed from the default (``VirtualDevice::Default``).
4. **Capture.** The devices are written down: the two function attributes; the original
   ``on_device`` ops are dropped (one whose operand and result devices differ becomes a
   ``device_copy``); copies from a device to itself are dropped; and where a use expects
   another device than the op using it runs on (the operand of a ``device_copy``, an argument
   of a function on another device) the operand is wrapped in
   ``on_device {constrain_result = true}`` (one per use, never around a variable: a
   parameter or a let-bound value), so ``device_analysis.value_devices`` recovers every value's
   device from the IR alone. As in Relay, every let-bound value (a named result) is bound
   wrapped in a fixed ``on_device`` of its device (``let %l = on_device(add(%a, %b), ...)``);
   an ``on_device`` nothing reads (the unprojected fields of an annotated tuple) is dropped
   first.

```mlir
func.func @main(%a: tensor<5x7xf32>, %b: tensor<5x7xf32>, %c: tensor<5x7xf32>) -> tensor<5x7xf32> {
  %0 = relay.add %a, %b : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
  %1 = relay.on_device %0 {virtual_device = #relay.virtual_device<cpu(0)>} : ...
  %2 = relay.subtract %1, %c : ...
  func.return %2 : tensor<5x7xf32>
}
// plan-devices{default-device=cuda}:
func.func @main(...) attributes {relay.param_virtual_devices = [<cpu(0)>, <cpu(0)>, <cuda(0)>],
                                 relay.result_virtual_device = <cuda(0)>} {
  %0 = relay.add %a, %b
  %1 = relay.on_device %0 {virtual_device = <cpu(0)>, constrain_result = true}
  %2 = relay.device_copy %1 {src_virtual_device = <cpu(0)>, dst_virtual_device = <cuda(0)>}
  %3 = relay.subtract %2, %c
  func.return %3
}
```

Primitive functions are left as they are (they are device polymorphic). A function with an
op that has regions (Relay's If as ``scf.if``) is rejected with an error naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, i1
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from xrelay.dialects.relay import RELAY_OPS, RelayOp
from xrelay.dialects.relay.device_analysis import (
    PARAM_DEVICES,
    RESULT_DEVICE,
    device_copy_of,
    function_devices,
    functions_by_name,
    is_device_copy,
    is_on_device,
    is_primitive,
)
from xrelay.dialects.relay.devices import (
    UNCONSTRAINED,
    DeviceError,
    VirtualDeviceAttr,
    as_virtual_device,
    virtual_device,
)
from xrelay.error import TVMError

HOST = virtual_device("cpu", 0)
"""Where ``shape_of`` results live (Relay's host device)."""


class PlanDevicesError(DiagnosticException, TVMError):
    """Contradictory device constraints; the message names the value and both devices."""


def describe(value: SSAValue) -> str:
    """``%name`` (or the defining op and result index) and the function holding it."""
    owner = value.owner
    name = f"%{value.name_hint}" if value.name_hint else None
    if isinstance(owner, Operation):
        what = f"result {value.index} of '{owner.name}'" if name is None else f"{name} ('{owner.name}')"
        fn = owner.parent_op()
    else:
        what = name or f"parameter {value.index}"
        fn = owner.parent_op() if owner is not None else None
    where = f" in @{fn.sym_name.data}" if isinstance(fn, func.FuncOp) else ""
    return what + where


def _what(value: SSAValue | str) -> str:
    return value if isinstance(value, str) else describe(value)


class _Domains:
    """Union-find over device domains, each holding the join of its constraints."""

    def __init__(self) -> None:
        self.parent: list[int] = []
        self.device: list[VirtualDeviceAttr] = []

    def new(self, vd: VirtualDeviceAttr = UNCONSTRAINED) -> int:
        self.parent.append(len(self.parent))
        self.device.append(vd)
        return len(self.parent) - 1

    def find(self, i: int) -> int:
        root = i
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[i] != root:
            self.parent[i], i = root, self.parent[i]
        return root

    def get(self, i: int) -> VirtualDeviceAttr:
        return self.device[self.find(i)]

    def constrain(self, i: int, vd: VirtualDeviceAttr, value: SSAValue | str, why: str) -> None:
        root = self.find(i)
        joined = self.device[root].join(vd)
        if joined is None:
            raise PlanDevicesError(
                f"plan-devices: {_what(value)} must be on {self.device[root]} but {why} "
                f"puts it on {vd}"
            )
        self.device[root] = joined

    def unify(self, i: int, j: int, value: SSAValue, why: str) -> None:
        a, b = self.find(i), self.find(j)
        if a == b:
            return
        joined = self.device[a].join(self.device[b])
        if joined is None:
            raise PlanDevicesError(
                f"plan-devices: {_what(value)} is on {self.device[a]} but {why} needs "
                f"{self.device[b]}"
            )
        self.parent[b] = a
        self.device[a] = joined

    def try_unify(self, i: int, j: int) -> None:
        a, b = self.find(i), self.find(j)
        if a != b and (joined := self.device[a].join(self.device[b])) is not None:
            self.parent[b] = a
            self.device[a] = joined

    def default(self, i: int, vd: VirtualDeviceAttr) -> None:
        root = self.find(i)
        self.device[root] = self.device[root].default(vd)


def _on_device_flags(op: RelayOp) -> tuple[VirtualDeviceAttr, bool, bool]:
    attrs = op.attrs
    returned = any(isinstance(u.operation, func.ReturnOp) and len(u.operation.operands) == 1 for u in op.results[0].uses)
    # Relay fixes an on_device at the top of a function body: its result is the function's
    # (not a field of a returned tuple: several results).
    return attrs["virtual_device"], attrs["constrain_result"] or returned, attrs["constrain_body"]


def _bodies(module: ModuleOp) -> list[func.FuncOp]:
    """The functions PlanDevices looks into: every non-primitive function with a body."""
    return [
        fn for fn in module.ops if isinstance(fn, func.FuncOp) and not fn.is_declaration and not is_primitive(fn)
    ]


# ----------------------------------------------------------------------------------------------
# Phase 1
# ----------------------------------------------------------------------------------------------


def _identity_op(name: str, value: SSAValue, properties: dict[str, Attribute], before: Operation) -> SSAValue:
    # Both ops have their operand's type; building them directly skips the attribute checks
    # of RelayOp.make, which dominate the pass on large graphs.
    op = RELAY_OPS[name].build(operands=[value], result_types=[value.type], properties=properties)
    Rewriter.insert_op(op, InsertPoint.before(before))
    return op.results[0]


def insert_device_copy(value: SSAValue, src: VirtualDeviceAttr, dst: VirtualDeviceAttr, before: Operation) -> SSAValue:
    """A ``device_copy`` of ``value`` from ``src`` to ``dst``, inserted before ``before``."""
    return _identity_op("device_copy", value, {"src_virtual_device": src, "dst_virtual_device": dst}, before)


_TRUE = IntegerAttr(1, i1)


def _on_device_fixed(value: SSAValue, vd: VirtualDeviceAttr, before: Operation) -> SSAValue:
    """``on_device {constrain_result = true}`` (constrain_body keeps its default, true)."""
    return _identity_op("on_device", value, {"virtual_device": vd, "constrain_result": _TRUE}, before)


def _copy_conflicting_uses(fn: func.FuncOp) -> None:
    """Phase 1: a value whose uses want different devices is copied at the late-met uses.

    Relay's visit order: pre-order from the returned values, operands left to right.
    """
    seen: dict[SSAValue, VirtualDeviceAttr] = {}
    conflicted: list[tuple[Operation, int]] = []
    call_devices: dict[Operation, VirtualDeviceAttr] = {}
    ret = fn.body.block.last_op
    stack = [v.owner for v in reversed(ret.operands)] if isinstance(ret, func.ReturnOp) else []
    visited: set[Operation] = set()
    while stack:
        op = stack.pop()
        if not isinstance(op, Operation) or op in visited:
            continue
        visited.add(op)
        stack.extend(v.owner for v in reversed(op.operands))
        call_dev = UNCONSTRAINED
        for r in op.results:
            call_dev = seen.get(r, UNCONSTRAINED).join(call_dev) or call_dev
        body_dev = call_dev
        if is_on_device(op):
            vd, constrain_result, constrain_body = _on_device_flags(op)
            body_dev = vd if constrain_body else body_dev
            call_dev = vd if constrain_result else call_dev
        elif is_device_copy(op):
            body_dev, call_dev = op.attrs["src_virtual_device"], op.attrs["dst_virtual_device"]
        elif isinstance(op, RelayOp) and op.RELAY_NAME == "shape_of":
            body_dev = UNCONSTRAINED
        elif isinstance(op, func.CallOp):
            continue  # calls constrain through their callee, in phase 2
        for r in op.results:
            seen[r] = seen.get(r, call_dev).join(call_dev) or seen.get(r, call_dev)
        call_devices[op] = call_dev
        for index, operand in enumerate(op.operands):
            old = seen.get(operand)
            if old is None:
                seen[operand] = body_dev
                continue
            joined = old.join(body_dev)
            if joined is None:
                conflicted.append((op, index))
            else:
                seen[operand] = joined
    for op, index in conflicted:
        operand = op.operands[index]
        owner = operand.owner
        if isinstance(owner, Operation) and is_on_device(owner) and _on_device_flags(owner)[1]:
            continue  # a pinned result: a real conflict, reported in phase 2
        src, dst = seen[operand], call_devices[op]
        if src.is_fully_unconstrained() or dst.is_fully_unconstrained() or src == dst:
            continue
        # Both ends free: unification decides them, capture drops the copy if they meet.
        op.operands[index] = insert_device_copy(operand, UNCONSTRAINED, UNCONSTRAINED, op)


# ----------------------------------------------------------------------------------------------
# Phases 2 and 3
# ----------------------------------------------------------------------------------------------


class _Planner:
    def __init__(self, module: ModuleOp, default: VirtualDeviceAttr):
        self.module = module
        self.default = default
        self.funcs = functions_by_name(module)
        self.doms = _Domains()
        self.value_dom: dict[SSAValue, int] = {}
        self.func_dom: dict[str, tuple[list[int], int]] = {}
        self.soft_ops: list[Operation] = []
        self.copies: list[tuple[Operation, int]] = []

    def dom(self, v: SSAValue) -> int:
        d = self.value_dom.get(v)
        if d is None:
            d = self.value_dom[v] = self.doms.new()
        return d

    def analyse(self) -> None:
        bodies = _bodies(self.module)
        for fn in bodies:
            block = fn.body.block
            params = [self.dom(a) for a in block.args]
            result = self.doms.new()
            self.func_dom[fn.sym_name.data] = (params, result)
            planned = function_devices(fn)
            if planned is not None:  # an earlier run's result: keep it
                for arg, vd in zip(block.args, planned[0], strict=False):
                    self.doms.constrain(self.dom(arg), vd, arg, "its parameter attribute")
                self.doms.constrain(result, planned[1], f"the result of @{fn.sym_name.data}", "its attribute")
        for fn in bodies:
            for op in fn.body.block.ops:
                self._constrain(fn, op)
        self.soft_edges()

    def _constrain(self, fn: func.FuncOp, op: Operation) -> None:
        doms = self.doms
        if isinstance(op, func.ReturnOp):
            result = self.func_dom[fn.sym_name.data][1]
            for v in op.operands:
                doms.unify(result, self.dom(v), v, f"the result of @{fn.sym_name.data}")
            return
        if is_on_device(op):
            vd, constrain_result, constrain_body = _on_device_flags(op)
            if constrain_body:
                doms.constrain(self.dom(op.operands[0]), vd, op.operands[0], "an on_device")
            if constrain_result:
                doms.constrain(self.dom(op.results[0]), vd, op.results[0], "its on_device")
            return
        if is_device_copy(op):
            a = op.attrs
            doms.constrain(self.dom(op.operands[0]), a["src_virtual_device"], op.operands[0], "a device_copy")
            doms.constrain(self.dom(op.results[0]), a["dst_virtual_device"], op.results[0], "its device_copy")
            return
        if isinstance(op, RelayOp) and op.RELAY_NAME == "shape_of":
            doms.constrain(self.dom(op.results[0]), HOST, op.results[0], "shape_of (results on the host)")
            self.dom(op.operands[0])
            return
        if isinstance(op, func.CallOp):
            name = op.callee.root_reference.data
            callee = self.funcs.get(name)
            copy = device_copy_of(callee) if callee is not None else None
            if copy is not None:
                a = copy.attrs
                doms.constrain(self.dom(op.operands[0]), a["src_virtual_device"], op.operands[0], f"@{name}")
                doms.constrain(self.dom(op.results[0]), a["dst_virtual_device"], op.results[0], f"@{name}")
                return
            if name in self.func_dom:
                params, result = self.func_dom[name]
                for k, (v, p) in enumerate(zip(op.operands, params, strict=False)):
                    doms.unify(p, self.dom(v), v, f"parameter {k} of @{name}")
                for r in op.results:
                    doms.unify(result, self.dom(r), r, f"the result of @{name}")
                return
        # primitives (ops, primitive functions): one device for operands and results; the
        # results are one at once, the operands after every hard constraint (soft_edges)
        if not op.results:
            return
        first = self.dom(op.results[0])
        for v in op.results[1:]:
            doms.unify(first, self.dom(v), v, f"'{op.name}'")
        self.soft_ops.append(op)

    def soft_edges(self) -> None:
        """Unify each primitive's operands with it, users before producers (Relay's visit
        order); an operand whose device cannot join its user's gets a copy on that edge
        instead (the value has no constraint that forbids one: all hard ones are in)."""
        for op in reversed(self.soft_ops):
            here = self.dom(op.results[0])
            for index, v in enumerate(op.operands):
                there = self.dom(v)
                a, b = self.doms.find(here), self.doms.find(there)
                if a != b and self.doms.device[a].join(self.doms.device[b]) is None:
                    self.copies.append((op, index))
                else:
                    self.doms.try_unify(here, there)

    def insert_copies(self) -> None:
        for op, index in self.copies:
            v = op.operands[index]
            copy = insert_device_copy(v, UNCONSTRAINED, UNCONSTRAINED, op)
            self.value_dom[copy] = self.dom(op.results[0])
            op.operands[index] = copy

    def default_all(self) -> None:
        doms = self.doms
        for fn in _bodies(self.module):
            for op in fn.body.block.ops:
                if is_on_device(op):
                    _, constrain_result, constrain_body = _on_device_flags(op)
                    if not constrain_result and not constrain_body:
                        doms.try_unify(self.dom(op.operands[0]), self.dom(op.results[0]))
        for fn in _bodies(self.module):
            params, result = self.func_dom[fn.sym_name.data]
            doms.default(result, self.default)
            for p in params:
                doms.default(p, doms.get(result))
            for op in fn.body.block.ops:
                for v in (*op.operands, *op.results):
                    doms.default(self.dom(v), self.default)

    def device(self, v: SSAValue) -> VirtualDeviceAttr:
        return self.doms.get(self.dom(v))


# ----------------------------------------------------------------------------------------------
# Phase 4
# ----------------------------------------------------------------------------------------------


def _capture(planner: _Planner, fn: func.FuncOp) -> None:
    block = fn.body.block
    params, result_dom = planner.func_dom[fn.sym_name.data]
    rd = planner.doms.get(result_dom)
    fn.attributes[PARAM_DEVICES] = ArrayAttr([planner.doms.get(p) for p in params])
    fn.attributes[RESULT_DEVICE] = rd
    dev = planner.device
    for op in list(block.ops):
        if is_on_device(op):
            body, res = dev(op.operands[0]), dev(op.results[0])
            if body == res:
                # a let of an on_device (``let %l = on_device(%0, ...)``) stays a let of its
                # body: the let rule below wraps it again with the planned device
                name, inner = op.results[0].name_hint, op.operands[0]
                if name and isinstance(inner.owner, Operation) and not inner.name_hint:
                    inner.name_hint = name
                op.results[0].replace_all_uses_with(op.operands[0])
            else:
                copy = insert_device_copy(op.operands[0], body, res, op)
                planner.value_dom[copy] = planner.dom(op.results[0])
                op.results[0].replace_all_uses_with(copy)
            block.erase_op(op)
        elif is_device_copy(op):
            src, dst = dev(op.operands[0]), dev(op.results[0])
            if src == dst:
                op.results[0].replace_all_uses_with(op.operands[0])
                block.erase_op(op)
            else:
                op.properties["src_virtual_device"] = src
                op.properties["dst_virtual_device"] = dst
    for op in list(block.ops):
        if _is_let(op) and not is_on_device(op):
            _fix_let(planner, op)
    for op in list(block.ops):
        _wrap_operands(planner, op, rd)


def _is_let(op: Operation) -> bool:
    """A Relay ``let`` in xrelay's IR: an op or call whose result has a name of its own (the
    text printer's rule, ``text_printer.is_let_bound``; a named constant is left alone)."""
    return isinstance(op, RelayOp | func.CallOp) and any(r.name_hint for r in op.results)


def _fix_let(planner: _Planner, op: Operation) -> None:
    """Relay's let rule (DeviceCapturer's Let): a let-bound value is always wrapped in
    ``on_device {constrain_result = true}`` with its device, and the let binds the wrapper
    (``let %l = on_device(add(%a, %b), ...)``). A let of a tuple (a named op with several
    results) binds each field so: ``let %t = on_device(split(...), ...)`` reads back as one
    fixed on_device per field, as the parser gives it."""
    anchor = op.next_op
    assert anchor is not None  # a function body ends with its return
    for r in op.results:
        if not r.name_hint:
            continue
        wrapped = _on_device_fixed(r, planner.device(r), anchor)
        planner.value_dom[wrapped] = planner.dom(r)
        r.replace_all_uses_with(wrapped)
        wrapped.owner.operands[0] = r  # type: ignore[union-attr]
        wrapped.name_hint, r.name_hint = r.name_hint, None


def _is_var(v: SSAValue) -> bool:
    """A Relay variable (MaybeOnDevice leaves it unwrapped: its binding site says its
    device): a parameter, or a let-bound value, but not one field of a let-bound tuple
    (Relay reads it as ``%t.0``, a projection, which is wrapped)."""
    owner = v.owner
    if not isinstance(owner, Operation):
        return True
    if not v.name_hint or not is_on_device(owner):
        return False
    inner = owner.operands[0].owner
    return not (isinstance(inner, Operation) and len(inner.results) > 1)


def _wrap_operands(planner: _Planner, op: Operation, rd: VirtualDeviceAttr) -> None:
    """Copy an operand whose device is not the one its use expects; wrap in a fixed on_device
    an operand its user expects on another device than it runs on (Relay's VisitChild)."""
    dev = planner.device
    if isinstance(op, func.ReturnOp):
        lexical = rd
        expected = [rd] * len(op.operands)
    elif is_device_copy(op):
        lexical = dev(op.results[0])
        expected = [dev(op.operands[0])]
    elif is_on_device(op):
        return
    else:
        lexical = dev(op.results[0]) if op.results else rd
        expected = [dev(v) for v in op.operands]
        if isinstance(op, func.CallOp) and op.callee.root_reference.data in planner.func_dom:
            params, _ = planner.func_dom[op.callee.root_reference.data]
            expected = [planner.doms.get(p) for p in params]
        elif isinstance(op, func.CallOp):
            callee = planner.funcs.get(op.callee.root_reference.data)
            if callee is not None and device_copy_of(callee) is not None:
                expected = [dev(op.operands[0])]
    for index, (v, want) in enumerate(zip(list(op.operands), expected, strict=False)):
        child = dev(v)
        new = v
        if child != want:
            if not _is_var(v):
                new = _on_device_fixed(new, child, op)
            new = insert_device_copy(new, child, want, op)
        if want != lexical and not _is_var(new):
            new = _on_device_fixed(new, want, op)
        if new is not v:
            op.operands[index] = new


@dataclass(frozen=True)
class PlanDevicesPass(ModulePass):
    """Relay's PlanDevices (see the module docstring)."""

    name = "plan-devices"
    relay_name: ClassVar[str] = "PlanDevices"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ()

    default_device: str = "cpu"
    """The device of whatever no constraint decides: a name (``cpu``, ``cuda``), ``name(id)``."""

    memory_scope: str = ""
    """The memory scope of the default device (``""``: the device's default scope)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            default = as_virtual_device(self.default_device, self.memory_scope)
        except DeviceError as e:
            raise PlanDevicesError(f"plan-devices: default-device: {e}") from None
        plan_devices(op, default)


def plan_devices(module: ModuleOp, default: VirtualDeviceAttr | None = None) -> None:
    """Run PlanDevices on ``module`` in place; ``default`` is cpu(0) unless given."""
    default = HOST if default is None else default
    if default.is_fully_unconstrained():
        raise PlanDevicesError("plan-devices: the default device must name a device")
    default = default.default(HOST)
    for fn in _bodies(module):
        if len(fn.body.blocks) != 1:
            raise PlanDevicesError(f"plan-devices: @{fn.sym_name.data} has {len(fn.body.blocks)} blocks (expected one)")
        for op in fn.body.block.ops:
            if op.regions:
                raise PlanDevicesError(
                    f"plan-devices: '{op.name}' in @{fn.sym_name.data} has regions (Relay's If): "
                    "planning devices inside it is not supported"
                )
    for fn in _bodies(module):
        # an on_device that nothing reads annotates nothing: an on_device of a tuple annotates
        # each field, and Relay, which moves it onto each projection (RewriteOnDevices), has
        # none on the fields never projected (a let-bound one, named, stays: a let is kept)
        for op in reversed(list(fn.body.block.ops)):
            if is_on_device(op) and not op.results[0].uses and not op.results[0].name_hint:
                fn.body.block.erase_op(op)
        _copy_conflicting_uses(fn)
    planner = _Planner(module, default)
    planner.analyse()
    planner.default_all()
    planner.insert_copies()
    for fn in _bodies(module):
        _capture(planner, fn)


__all__ = ["HOST", "PlanDevicesError", "PlanDevicesPass", "describe", "insert_device_copy", "plan_devices"]
