"""The memory dialect: explicit storage for a relay program (docs/design.md, decision 7).

After ``lower-to-memory``, ``@main`` is a list of *steps*: each ``memory.invoke`` runs one
primitive (fused) function, writing its results into destination tensors placed in storage.
Step ``k`` is the ``k``-th ``memory.invoke`` of ``@main`` (counting from 0). Storage is raw bytes
(``!memory.storage``) that holds one tensor or, through ``memory.alias``, several views of one
tensor; ``memory.kill`` ends its life. Liveness writes each storage's inclusive lifetime
``[first step, last step]``; planning (``plan-memory``) gives every storage in an arena a pool
and an offset, and declares every pool with its size, so the planned program is self-contained:

```mlir
memory.pool @global {alignment = 64, size = 1536}
func.func @main(%x: tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32> {
  %s0 = memory.alloc_storage {size = 1024, alignment = 64, kind = "intermediate", lifetime = [0, 1], pool = "global", offset = 0}
  %t0 = memory.alloc_tensor %s0 {offset = 0} : tensor<1x8x8x4xf32>
  %w = memory.alloc_storage {size = 512, alignment = 64, kind = "workspace", lifetime = [0, 0], pool = "global", offset = 1024}
  memory.invoke @fused_conv(%x) outs(%t0) workspace(%w) {step = 0} : (tensor<1x8x8x4xf32>) -> (tensor<1x8x8x4xf32>)
  memory.kill %w : !memory.storage
  %s1 = memory.alloc_storage {size = 1024, alignment = 64, kind = "output", lifetime = [1, 1], external = true}
  %t1 = memory.alloc_tensor %s1 {offset = 0} : tensor<1x8x8x4xf32>
  memory.invoke @fused_relu(%t0) outs(%t1) {step = 1} : (tensor<1x8x8x4xf32>) -> (tensor<1x8x8x4xf32>)
  memory.kill %s0 : !memory.storage
  func.return %t1 : tensor<1x8x8x4xf32>
}
```

Tensors in this dialect are buffers: a ``memory.invoke`` writes its ``outs`` in place, so the
ops that do that (invoke, copy) and kill carry memory effects and no rewrite deletes them.
Storage kinds are ``intermediate``, ``workspace``, ``input`` and ``output``; constants stay
``relay.constant`` and never enter an arena. An ``external`` storage (inputs/outputs kept
outside the arena) is provided by the caller and never planned.

All memory ops print their properties as ``{key = value, ...}`` with plain integers, strings
and lists; the generic form keeps xDSL's encoding, and both round-trip.

``workspace_bytes(fn)`` is the scratch size a primitive function needs, as its engine stated it
in attributes at compile time (see its docstring); the executor and ``lower-to-memory`` read it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DenseArrayBase,
    FlatSymbolRefAttr,
    FunctionType,
    IntegerAttr,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    MemoryAllocEffect,
    MemoryFreeEffect,
    MemoryReadEffect,
    MemoryWriteEffect,
    NoMemoryEffect,
    SymbolOpInterface,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException

from xrelay.dialects.relay import RelayOp, byte_size, dtype_of
from xrelay.dialects.relay.base import format_value, parse_value
from xrelay.dialects.relay.devices import VirtualDeviceAttr

STORAGE_KINDS = ("intermediate", "workspace", "input", "output")

MAX_BYTES = (1 << 63) - 1
"""The largest storage or pool (with its base address): sizes and offsets are signed 64-bit
integers here and in the generated C. ``lower-to-memory`` and ``plan-memory`` refuse more."""
"""Kinds of ``memory.alloc_storage`` (constants are never storage: they stay relay.constant)."""


@irdl_attr_definition
class StorageType(ParametrizedAttribute, TypeAttribute):
    """Raw bytes allocated by ``memory.alloc_storage``: ``!memory.storage``."""

    name = "memory.storage"


# --------------------------------------------------------------------------------------------
# The ``{key = value, ...}`` property syntax shared by every op
# --------------------------------------------------------------------------------------------


def _print_fields(printer: Printer, fields: Sequence[tuple[str, Any]]) -> None:
    shown = [(k, v) for k, v in fields if v is not None]
    if shown:
        printer.print_string(" {" + ", ".join(f"{k} = {format_value(v)}" for k, v in shown) + "}")


def _parse_fields(parser: Parser, op_name: str, known: Sequence[str]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if not parser.parse_optional_punctuation("{"):
        return fields
    if parser.parse_optional_punctuation("}"):
        return fields
    while True:
        pos = parser.pos
        key = parser.parse_identifier("expected a property name")
        if key not in known:
            parser.raise_error(
                f"{op_name}: unknown property '{key}' (known: {', '.join(known)})", pos, parser.pos
            )
        if key in fields:
            parser.raise_error(f"{op_name}: property '{key}' given twice", pos, parser.pos)
        parser.parse_punctuation("=")
        fields[key] = parse_value(parser, allow_float=False)
        if not parser.parse_optional_punctuation(","):
            break
    parser.parse_punctuation("}")
    return fields


def _int(v: Any, op: str, key: str) -> IntegerAttr:
    if not isinstance(v, int) or isinstance(v, bool):
        raise VerifyException(f"{op}: '{key}' must be an integer, got {v!r}")
    return IntegerAttr(v, i64)


def _strs(v: Any, op: str, key: str) -> ArrayAttr[StringAttr]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise VerifyException(f"{op}: '{key}' must be a list of strings, got {v!r}")
    return ArrayAttr([StringAttr(x) for x in v])


def _opt_int(attr: IntegerAttr | None) -> int | None:
    return None if attr is None else attr.value.data


def _opt_strs(attr: ArrayAttr[StringAttr] | None) -> list[str] | None:
    return None if attr is None else [s.data for s in attr.data]


# --------------------------------------------------------------------------------------------
# Ops
# --------------------------------------------------------------------------------------------


@irdl_op_definition
class PoolOp(IRDLOperation):
    """A memory pool (arena), declared at module level.

    ``capacity`` bounds it (absent: unbounded), ``alignment`` is the least alignment of every
    buffer placed in it, ``base_address`` is where it starts in the target's address space,
    and ``size`` is the bytes the plan uses (set by ``plan-memory``). A pool declared before
    planning is configuration that ``plan-memory`` reads. ``device`` is the (device, memory
    scope) whose memory it is, when the program was planned for devices (``lower-to-memory``
    declares one pool per memory space, named after it).

    ```mlir
    memory.pool @sram {capacity = 262144, alignment = 16, base_address = 536870912, size = 81920}
    memory.pool @mcu0.sram {capacity = 262144, alignment = 16, device = #relay.virtual_device<mcu(0), memory_scope = "sram">}
    ```
    """

    name = "memory.pool"
    sym_name = prop_def(SymbolNameConstraint())
    alignment = prop_def(IntegerAttr[I64], default_value=IntegerAttr(64, i64))
    base_address = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    capacity = opt_prop_def(IntegerAttr[I64])
    size = opt_prop_def(IntegerAttr[I64])
    device = opt_prop_def(VirtualDeviceAttr)
    traits = traits_def(SymbolOpInterface(), NoMemoryEffect())

    _KEYS: ClassVar[tuple[str, ...]] = ("capacity", "alignment", "base_address", "size", "device")

    def __init__(
        self,
        name: str,
        *,
        alignment: int = 64,
        base_address: int = 0,
        capacity: int | None = None,
        size: int | None = None,
        device: VirtualDeviceAttr | None = None,
    ):
        props: dict[str, Attribute] = {
            "sym_name": StringAttr(name),
            "alignment": IntegerAttr(alignment, i64),
            "base_address": IntegerAttr(base_address, i64),
        }
        if capacity is not None:
            props["capacity"] = IntegerAttr(capacity, i64)
        if size is not None:
            props["size"] = IntegerAttr(size, i64)
        if device is not None:
            props["device"] = device
        super().__init__(properties=props)

    @property
    def pool_name(self) -> str:
        return self.sym_name.data

    def verify_(self) -> None:
        where = f"memory.pool @{self.pool_name}"
        align = self.alignment.value.data
        if align < 1 or align & (align - 1):
            raise VerifyException(f"{where}: alignment {align} is not a power of two")
        base = self.base_address.value.data
        if base < 0 or base % align:
            raise VerifyException(
                f"{where}: base_address {base} is not a non-negative multiple of its "
                f"alignment {align}"
            )
        cap, size = _opt_int(self.capacity), _opt_int(self.size)
        if cap is not None and cap < 0:
            raise VerifyException(f"{where}: negative capacity {cap}")
        if size is not None and size < 0:
            raise VerifyException(f"{where}: negative size {size}")
        if cap is not None and size is not None and size > cap:
            raise VerifyException(f"{where}: size {size} exceeds its capacity {cap}")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.pool_name)
        _print_fields(
            printer,
            [
                ("capacity", _opt_int(self.capacity)),
                ("alignment", self.alignment.value.data),
                ("base_address", self.base_address.value.data or None),
                ("size", _opt_int(self.size)),
                ("device", self.device),
            ],
        )

    @classmethod
    def parse(cls, parser: Parser) -> PoolOp:
        name = parser.parse_symbol_name().data
        pos = parser.pos
        f = _parse_fields(parser, cls.name, cls._KEYS)
        for k in f:
            if k == "device":
                if not isinstance(f[k], VirtualDeviceAttr):
                    parser.raise_error(f"{cls.name}: 'device' must be a #relay.virtual_device", pos, parser.pos)
                continue
            _int(f[k], cls.name, k)
        return cls(
            name,
            alignment=f.get("alignment", 64),
            base_address=f.get("base_address", 0),
            capacity=f.get("capacity"),
            size=f.get("size"),
            device=f.get("device"),
        )


@irdl_op_definition
class AllocStorageOp(IRDLOperation):
    """Allocate ``size`` bytes aligned to ``alignment``: one buffer of the memory plan.

    ``kind`` says what the storage holds (intermediate, workspace, input, output);
    ``lifetime = [first, last]`` are the inclusive steps during which it is live (written by
    liveness); ``pool`` and ``offset`` place it once planned. ``pools`` pins it to pools in
    priority order and ``forbidden_pools`` keeps it out of some (planning constraints).
    ``external = true`` means the caller provides the bytes (graph inputs/outputs kept out of
    the arena): such storage is never planned.

    ```mlir
    %s = memory.alloc_storage {size = 802816, alignment = 64, kind = "intermediate", lifetime = [3, 5], pool = "global", offset = 0}
    ```
    """

    name = "memory.alloc_storage"
    size = prop_def(IntegerAttr[I64])
    alignment = prop_def(IntegerAttr[I64], default_value=IntegerAttr(64, i64))
    kind = prop_def(StringAttr, default_value=StringAttr("intermediate"))
    lifetime = opt_prop_def(DenseArrayBase.constr(i64))
    pool = opt_prop_def(StringAttr)
    offset = opt_prop_def(IntegerAttr[I64])
    pools = opt_prop_def(ArrayAttr[StringAttr])
    forbidden_pools = opt_prop_def(ArrayAttr[StringAttr])
    external = opt_prop_def(UnitAttr)
    result = result_def(StorageType)
    traits = traits_def(MemoryAllocEffect())

    _KEYS: ClassVar[tuple[str, ...]] = (
        "size",
        "alignment",
        "kind",
        "lifetime",
        "pool",
        "offset",
        "pools",
        "forbidden_pools",
        "external",
    )

    def __init__(
        self,
        size: int,
        *,
        alignment: int = 64,
        kind: str = "intermediate",
        lifetime: tuple[int, int] | None = None,
        pool: str | None = None,
        offset: int | None = None,
        pools: Sequence[str] | None = None,
        forbidden_pools: Sequence[str] | None = None,
        external: bool = False,
    ):
        props: dict[str, Attribute] = {
            "size": IntegerAttr(size, i64),
            "alignment": IntegerAttr(alignment, i64),
            "kind": StringAttr(kind),
        }
        if lifetime is not None:
            props["lifetime"] = DenseArrayBase.from_list(i64, list(lifetime))
        if pool is not None:
            props["pool"] = StringAttr(pool)
        if offset is not None:
            props["offset"] = IntegerAttr(offset, i64)
        if pools is not None:
            props["pools"] = ArrayAttr([StringAttr(p) for p in pools])
        if forbidden_pools is not None:
            props["forbidden_pools"] = ArrayAttr([StringAttr(p) for p in forbidden_pools])
        if external:
            props["external"] = UnitAttr()
        super().__init__(properties=props, result_types=[StorageType()])

    # Plain-Python views of the properties.
    @property
    def nbytes(self) -> int:
        return self.size.value.data

    @property
    def align(self) -> int:
        return self.alignment.value.data

    @property
    def storage_kind(self) -> str:
        return self.kind.data

    @property
    def is_external(self) -> bool:
        return self.external is not None

    @property
    def lifetime_range(self) -> tuple[int, int] | None:
        if self.lifetime is None:
            return None
        first, last = self.lifetime.get_values()
        return (first, last)

    @property
    def placement(self) -> tuple[str, int] | None:
        """``(pool, offset)`` once planned, else None."""
        if self.pool is None or self.offset is None:
            return None
        return (self.pool.data, self.offset.value.data)

    def set_lifetime(self, first: int, last: int) -> None:
        self.lifetime = DenseArrayBase.from_list(i64, [first, last])

    def set_placement(self, pool: str | None, offset: int | None) -> None:
        self.pool = None if pool is None else StringAttr(pool)
        self.offset = None if offset is None else IntegerAttr(offset, i64)

    def verify_(self) -> None:
        where = self.name
        if self.nbytes < 0:
            raise VerifyException(f"{where}: negative size {self.nbytes}")
        if self.align < 1 or self.align & (self.align - 1):
            raise VerifyException(f"{where}: alignment {self.align} is not a power of two")
        if self.storage_kind not in STORAGE_KINDS:
            raise VerifyException(
                f"{where}: unknown kind '{self.storage_kind}' (known: {', '.join(STORAGE_KINDS)})"
            )
        if self.lifetime is not None:
            values = self.lifetime.get_values()
            if len(values) != 2 or values[0] > values[1] or values[0] < 0:
                raise VerifyException(
                    f"{where}: lifetime must be [first, last] with 0 <= first <= last, "
                    f"got {list(values)}"
                )
        if (self.pool is None) != (self.offset is None):
            raise VerifyException(f"{where}: 'pool' and 'offset' must be given together")
        if self.offset is not None:
            off = self.offset.value.data
            if off < 0 or off % self.align:
                raise VerifyException(
                    f"{where}: offset {off} is not a non-negative multiple of its "
                    f"alignment {self.align}"
                )
        if self.is_external and self.pool is not None:
            raise VerifyException(f"{where}: external storage cannot be placed in pool")
        if self.is_external and self.storage_kind not in ("input", "output"):
            raise VerifyException(
                f"{where}: only input and output storage can be external, not '{self.storage_kind}'"
            )
        module = self.get_toplevel_object()
        if self.pool is not None and isinstance(module, Operation):
            pool = SymbolTable.lookup_symbol(module, self.pool.data)
            if not isinstance(pool, PoolOp):
                raise VerifyException(
                    f"{where}: placed in pool '{self.pool.data}', which no memory.pool declares"
                )
            size = _opt_int(pool.size)
            end = self.offset.value.data + self.nbytes if self.offset is not None else 0
            if size is not None and end > size:
                raise VerifyException(
                    f"{where}: bytes [{self.offset.value.data}, {end}) exceed pool "
                    f"'{self.pool.data}' of size {size}"
                )

    def print(self, printer: Printer) -> None:
        _print_fields(
            printer,
            [
                ("size", self.nbytes),
                ("alignment", self.align),
                ("kind", self.storage_kind),
                ("lifetime", self.lifetime_range),
                ("pool", self.pool.data if self.pool else None),
                ("offset", _opt_int(self.offset)),
                ("pools", _opt_strs(self.pools)),
                ("forbidden_pools", _opt_strs(self.forbidden_pools)),
                ("external", True if self.is_external else None),
            ],
        )

    @classmethod
    def parse(cls, parser: Parser) -> AllocStorageOp:
        pos = parser.pos
        f = _parse_fields(parser, cls.name, cls._KEYS)
        try:
            if "size" not in f:
                raise VerifyException(f"{cls.name}: 'size' is required")
            for k in ("size", "alignment", "offset"):
                if k in f:
                    _int(f[k], cls.name, k)
            lifetime = f.get("lifetime")
            if lifetime is not None and (
                not isinstance(lifetime, list)
                or len(lifetime) != 2
                or not all(isinstance(x, int) for x in lifetime)
            ):
                raise VerifyException(f"{cls.name}: 'lifetime' must be [first, last]")
            for k in ("pools", "forbidden_pools"):
                if k in f:
                    _strs(f[k], cls.name, k)
            for k in ("kind", "pool"):
                if k in f and not isinstance(f[k], str):
                    raise VerifyException(f"{cls.name}: '{k}' must be a string")
            if "external" in f and not isinstance(f["external"], bool):
                raise VerifyException(f"{cls.name}: 'external' must be true or false")
        except VerifyException as e:
            parser.raise_error(str(e), pos, parser.pos)
        return cls(
            f["size"],
            alignment=f.get("alignment", 64),
            kind=f.get("kind", "intermediate"),
            lifetime=tuple(lifetime) if lifetime is not None else None,
            pool=f.get("pool"),
            offset=f.get("offset"),
            pools=f.get("pools"),
            forbidden_pools=f.get("forbidden_pools"),
            external=f.get("external", False),
        )


def _static_tensor(t: Attribute, where: str) -> TensorType:
    if not isinstance(t, TensorType) or not t.has_static_shape():
        raise VerifyException(f"{where}: expected a statically shaped tensor, got {t}")
    try:  # its byte size is Relay's, which needs a Relay dtype
        dtype_of(t.element_type)
    except ValueError:
        raise VerifyException(
            f"{where}: {t} has element type {t.element_type}, which is no Relay dtype"
        ) from None
    return t


@irdl_op_definition
class AllocTensorOp(IRDLOperation):
    """A tensor placed in storage at a byte offset (a view of the storage's bytes).

    ```mlir
    %t = memory.alloc_tensor %s {offset = 0} : tensor<1x64x56x56xf32>
    ```
    """

    name = "memory.alloc_tensor"
    storage = operand_def(StorageType)
    offset = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    result = result_def(TensorType)
    traits = traits_def(NoMemoryEffect())

    def __init__(self, storage: SSAValue, result_type: TensorType, offset: int = 0):
        super().__init__(
            operands=[storage],
            result_types=[result_type],
            properties={"offset": IntegerAttr(offset, i64)},
        )

    def verify_(self) -> None:
        t = _static_tensor(self.result.type, self.name)
        off = self.offset.value.data
        if off < 0:
            raise VerifyException(f"{self.name}: negative offset {off}")
        owner = self.storage.owner
        if isinstance(owner, AllocStorageOp) and off + byte_size(t) > owner.nbytes:
            raise VerifyException(
                f"{self.name}: {t} at offset {off} needs {off + byte_size(t)} bytes but its "
                f"storage has {owner.nbytes}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.storage)
        _print_fields(printer, [("offset", self.offset.value.data)])
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> AllocTensorOp:
        storage = parser.parse_operand(StorageType())
        f = _parse_fields(parser, cls.name, ("offset",))
        parser.parse_punctuation(":")
        t = parser.parse_type()
        if not isinstance(t, TensorType):
            parser.raise_error(f"{cls.name}: expected a tensor type, got {t}")
        return cls(storage, t, _int(f.get("offset", 0), cls.name, "offset").value.data)


@irdl_op_definition
class AliasOp(IRDLOperation):
    """A view of a tensor's bytes with another shape (the same byte size): no copy.

    Reshape-only primitive functions lower to it, as Relay's ``__nop``.

    ```mlir
    %v = memory.alias %t : tensor<1x4x5x6xi8> to tensor<1x4x30xi8>
    ```
    """

    name = "memory.alias"
    source = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(NoMemoryEffect())

    def __init__(self, source: SSAValue, result_type: TensorType):
        super().__init__(operands=[source], result_types=[result_type])

    def verify_(self) -> None:
        src = _static_tensor(self.source.type, self.name)
        dst = _static_tensor(self.result.type, self.name)
        if byte_size(src) != byte_size(dst) or dtype_of(src.element_type) != dtype_of(
            dst.element_type
        ):
            raise VerifyException(
                f"{self.name}: cannot view {src} ({byte_size(src)} bytes) as {dst} "
                f"({byte_size(dst)} bytes): element type and byte size must agree"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.source)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)
        printer.print_string(" to ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> AliasOp:
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        src_t = parser.parse_type()
        parser.parse_keyword("to")
        dst_t = parser.parse_type()
        if not isinstance(dst_t, TensorType):
            parser.raise_error(f"{cls.name}: expected a tensor type, got {dst_t}")
        return cls(parser.resolve_operand(unresolved, src_t), dst_t)


@irdl_op_definition
class KillOp(IRDLOperation):
    """End the life of a storage (or of a tensor's storage): its bytes may be reused after.

    ```mlir
    memory.kill %s : !memory.storage
    ```
    """

    name = "memory.kill"
    target = operand_def()
    traits = traits_def(MemoryFreeEffect())

    def __init__(self, target: SSAValue):
        super().__init__(operands=[target])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.target)
        printer.print_string(" : ")
        printer.print_attribute(self.target.type)

    @classmethod
    def parse(cls, parser: Parser) -> KillOp:
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        return cls(parser.resolve_operand(unresolved, parser.parse_type()))


@irdl_op_definition
class CopyOp(IRDLOperation):
    """Copy a tensor's elements into a destination tensor of the same type (graph inputs
    that live in the arena are copied in before step 0).

    ```mlir
    memory.copy %x to %t : tensor<1x3x8x8xf32>
    ```
    """

    name = "memory.copy"
    source = operand_def(TensorType)
    dest = operand_def(TensorType)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, source: SSAValue, dest: SSAValue):
        super().__init__(operands=[source, dest])

    def verify_(self) -> None:
        if self.source.type != self.dest.type:
            raise VerifyException(
                f"{self.name}: source {self.source.type} and destination {self.dest.type} differ"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.source)
        printer.print_string(" to ")
        printer.print_operand(self.dest)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)

    @classmethod
    def parse(cls, parser: Parser) -> CopyOp:
        src = parser.parse_unresolved_operand()
        parser.parse_keyword("to")
        dst = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        return cls(parser.resolve_operand(src, t), parser.resolve_operand(dst, t))


@irdl_op_definition
class InvokeOp(IRDLOperation):
    """Run a primitive function, writing its results into ``outs`` (destination passing).

    ``workspace`` storages are scratch for this step only. ``step`` is the position of the
    invoke in ``@main`` (written by liveness, for reading and FileCheck).

    ```mlir
    memory.invoke @fused_conv(%x, %w) outs(%y) workspace(%ws) {step = 0} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> (tensor<1x4x8x8xf32>)
    ```
    """

    name = "memory.invoke"
    callee = prop_def(SymbolRefAttr)
    step = opt_prop_def(IntegerAttr[I64])
    inputs = var_operand_def()
    outs = var_operand_def(TensorType)
    workspace = var_operand_def(StorageType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(
        self,
        callee: str,
        inputs: Sequence[SSAValue],
        outs: Sequence[SSAValue],
        workspace: Sequence[SSAValue] = (),
        step: int | None = None,
    ):
        props: dict[str, Attribute] = {"callee": FlatSymbolRefAttr(callee)}
        if step is not None:
            props["step"] = IntegerAttr(step, i64)
        super().__init__(operands=[inputs, outs, workspace], properties=props)

    @property
    def callee_name(self) -> str:
        return self.callee.root_reference.data

    def verify_(self) -> None:
        where = f"{self.name} @{self.callee_name}"
        module = self.get_toplevel_object()
        if module is self:
            return
        fn = SymbolTable.lookup_symbol(module, self.callee)
        if not isinstance(fn, func.FuncOp):
            raise VerifyException(f"{where}: no function @{self.callee_name} in the module")
        ftype: FunctionType = fn.function_type
        ins = tuple(v.type for v in self.inputs)
        outs = tuple(v.type for v in self.outs)
        if ins != tuple(ftype.inputs.data) or outs != tuple(ftype.outputs.data):
            raise VerifyException(
                f"{where}: operand types ({', '.join(map(str, ins))}) -> "
                f"({', '.join(map(str, outs))}) do not match the callee's type {ftype}"
            )
        for o in self.outs:
            if o in self.inputs:
                raise VerifyException(f"{where}: a destination is also an input")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.callee_name)
        printer.print_string("(")
        printer.print_list(self.inputs, printer.print_operand)
        printer.print_string(") outs(")
        printer.print_list(self.outs, printer.print_operand)
        printer.print_string(")")
        if self.workspace:
            printer.print_string(" workspace(")
            printer.print_list(self.workspace, printer.print_operand)
            printer.print_string(")")
        _print_fields(printer, [("step", _opt_int(self.step))])
        printer.print_string(" : (")
        printer.print_list((v.type for v in self.inputs), printer.print_attribute)
        printer.print_string(") -> (")
        printer.print_list((v.type for v in self.outs), printer.print_attribute)
        printer.print_string(")")

    @classmethod
    def parse(cls, parser: Parser) -> InvokeOp:
        callee = parser.parse_symbol_name().data
        delim = parser.Delimiter.PAREN
        ins = parser.parse_comma_separated_list(delim, parser.parse_unresolved_operand)
        parser.parse_keyword("outs")
        outs = parser.parse_comma_separated_list(delim, parser.parse_unresolved_operand)
        ws: list[SSAValue] = []
        if parser.parse_optional_keyword("workspace"):
            ws = parser.parse_comma_separated_list(
                delim, lambda: parser.parse_operand(StorageType())
            )
        f = _parse_fields(parser, cls.name, ("step",))
        parser.parse_punctuation(":")
        pos = parser.pos
        in_types = parser.parse_comma_separated_list(delim, parser.parse_type)
        parser.parse_punctuation("->")
        out_types = parser.parse_comma_separated_list(delim, parser.parse_type)
        if len(in_types) != len(ins) or len(out_types) != len(outs):
            parser.raise_error(
                f"{cls.name}: {len(ins)} input(s) and {len(outs)} output(s) but "
                f"{len(in_types)} and {len(out_types)} type(s)",
                pos,
                parser.pos,
            )
        return cls(
            callee,
            [parser.resolve_operand(u, t) for u, t in zip(ins, in_types)],
            [parser.resolve_operand(u, t) for u, t in zip(outs, out_types)],
            ws,
            f.get("step"),
        )


Memory = Dialect(
    "memory",
    [PoolOp, AllocStorageOp, AllocTensorOp, AliasOp, KillOp, CopyOp, InvokeOp],
    [StorageType],
)


# --------------------------------------------------------------------------------------------
# Workspace size of a primitive function
# --------------------------------------------------------------------------------------------


INPLACE_OPS = frozenset(
    {
        "add", "subtract", "multiply", "divide", "maximum", "minimum", "power",
        "nn.relu", "clip", "negative", "abs", "exp", "log", "sqrt", "rsqrt", "tanh",
        "sigmoid", "erf", "nn.leaky_relu", "nn.prelu", "nn.bias_add", "floor", "ceil",
        "trunc", "round", "sign", "copy", "where",
    }
)  # fmt: skip
"""Elementwise ops whose kernels may write the buffer of an operand of their result's type."""

VIEW_OPS = frozenset({"reshape", "squeeze", "expand_dims", "nn.batch_flatten"})
"""Ops whose result is the operand's data with another shape (a view, no copy)."""


def result_buffers(fn: func.FuncOp) -> dict[SSAValue, tuple[int, bool]]:
    """Which values of a primitive function are computed straight into a result's buffer:
    ``value -> (index of the result, whether through a reshaped view)``.

    Backwards from ``func.return``: a returned value writes its result's buffer; an
    ``INPLACE_OPS`` op writing a buffer passes it to its first operand of the same type that
    only it uses; a ``VIEW_OPS`` op passes a reshaped view of it to its data operand when only
    it uses that. Every other value of the function needs a buffer of its own while the step
    runs (``fused_temporaries``). The arena executor binds the buffers by this rule."""
    body = fn.body.block
    ret = body.last_op
    out: dict[SSAValue, tuple[int, bool]] = {}
    if not isinstance(ret, func.ReturnOp):
        return out
    for i, v in enumerate(ret.arguments):
        if v not in out and isinstance(v.owner, RelayOp) and v.owner.name != "relay.constant":
            out[v] = (i, False)
    for op in reversed(list(body.ops)):
        if not isinstance(op, RelayOp) or op.name == "relay.constant" or len(op.results) != 1:
            continue
        r = op.results[0]
        target = out.get(r)
        if target is None:
            continue
        for v in op.operands:
            owner = v.owner
            if (
                v in out
                or not isinstance(owner, RelayOp)
                or owner.name == "relay.constant"
                or v.uses.get_length() != 1
                or len(owner.results) != 1
            ):
                continue
            if op.RELAY_NAME in INPLACE_OPS and v.type == r.type:
                out[v] = target
                break
            if op.RELAY_NAME in VIEW_OPS and v is op.operands[0]:
                out[v] = (target[0], True)
                break
    return out


def fused_temporaries(
    fn: func.FuncOp, lookup: Callable[[str], func.FuncOp | None] | None = None
) -> list[SSAValue]:
    """The values of a primitive function (and of the composites it calls, found with
    ``lookup``) that need a buffer of their own while its step runs: not a result's buffer
    (``result_buffers``), not a constant, not a ``VIEW_OPS`` view. The arena executor takes
    them from the step's planned workspace (``workspace_bytes`` counts them). None for a
    function on 8-bit integers (``_quantized``)."""
    lookup = lookup or _symbols(fn)
    found: list[SSAValue] = []
    seen: set[str] = set()
    if _quantized(fn):
        return found

    def visit(f: func.FuncOp) -> None:
        placed = result_buffers(f)
        for op in f.body.block.ops:
            if isinstance(op, func.CallOp):
                name = op.callee.root_reference.data
                callee = lookup(name)
                if callee is not None and name not in seen:
                    seen.add(name)
                    visit(callee)
            elif not isinstance(op, RelayOp) or op.name == "relay.constant":
                continue
            elif op.RELAY_NAME in VIEW_OPS:
                continue
            found.extend(r for r in op.results if r not in placed)

    visit(fn)
    return found


def _quantized(fn: func.FuncOp) -> bool:
    """Whether a function computes on 8-bit integers: the int8 kernels fold its float and
    int32 tails into the kernel (no buffer), so the rule of ``result_buffers`` would plan
    room they never use; their own scratch is reported as held outside the arena."""
    for op in fn.body.walk():
        if isinstance(op, RelayOp):
            for v in (*op.operands, *op.results):
                t = v.type
                if isinstance(t, TensorType) and dtype_of(t.element_type) in ("int8", "uint8"):
                    return True
    return False


def temporaries_bytes(fn: func.FuncOp, lookup: Callable[[str], func.FuncOp | None] | None = None) -> int:
    """Bytes of ``fused_temporaries``, each rounded up to 64 (a cache line)."""
    total = 0
    for v in fused_temporaries(fn, lookup):
        if isinstance(v.type, TensorType) and v.type.has_static_shape():
            total += -(-byte_size(v.type) // 64) * 64
    return total


SCRATCH_ATTR = "relay.scratch_bytes"
"""Function attribute: the whole workspace a code generator needs to run the function (its
temporaries included: they get no room of their own)."""

KERNEL_SCRATCH_ATTR = "relay.kernel_scratch_bytes"
"""Function attribute: the bytes at the start of the workspace the engine's kernels use
(im2col or Winograd matrices, elementwise chunks), a multiple of 64; the function's
temporaries (``fused_temporaries``) follow them."""


SCRATCH_OPTIONS_ATTR = "relay.scratch_options"
"""Function attribute: the ways its engine can run the function, fastest first (by the
engine's estimate), each ``["label", bytes]`` with the value its stated scratch attribute
(``SCRATCH_ATTR``, else ``KERNEL_SCRATCH_ATTR``) takes for that way; the first is the one
stated. ``choose-scratch`` picks one by the plan's peak::

    relay.scratch_options = [["winograd", 7226496], ["winograd-rows=7", 3613824], ["direct", 12288]]
"""

SCRATCH_CHOICE_ATTR = "relay.scratch_choice"
"""Function attribute: the label of the option of ``SCRATCH_OPTIONS_ATTR`` that
``choose-scratch`` chose (the engine runs the function that way; absent: the first)."""


def _stated(fn: func.FuncOp, name: str) -> int | None:
    attr = fn.attributes.get(name)
    return attr.value.data if isinstance(attr, IntegerAttr) else None


def scratch_options(fn: func.FuncOp) -> list[tuple[str, int]]:
    """The function's ``SCRATCH_OPTIONS_ATTR`` as ``(label, bytes)`` pairs, fastest first
    (empty: the engine offers one way only)."""
    attr = fn.attributes.get(SCRATCH_OPTIONS_ATTR)
    if not isinstance(attr, ArrayAttr):
        return []
    out = []
    for item in attr.data:
        if not (isinstance(item, ArrayAttr) and len(item.data) == 2):
            raise VerifyException(f"@{fn.sym_name.data}: {SCRATCH_OPTIONS_ATTR} items are [\"label\", bytes]")
        label, size = item.data
        if not (isinstance(label, StringAttr) and isinstance(size, IntegerAttr) and size.value.data >= 0):
            raise VerifyException(f"@{fn.sym_name.data}: {SCRATCH_OPTIONS_ATTR} items are [\"label\", bytes]")
        out.append((label.data, size.value.data))
    return out


def scratch_choice(fn: func.FuncOp) -> str | None:
    """The label ``choose-scratch`` chose for the function, else its first option's, else
    None (no options stated)."""
    attr = fn.attributes.get(SCRATCH_CHOICE_ATTR)
    if isinstance(attr, StringAttr):
        return attr.data
    options = scratch_options(fn)
    return options[0][0] if options else None


def workspace_bytes(
    fn: func.FuncOp, lookup: Callable[[str], func.FuncOp | None] | None = None
) -> int:
    """Scratch bytes a primitive function needs while it runs (0: none), as the engines
    stated them at compile time (``xrelay.backend.engines.state_scratch``, relay-opt's
    ``state-scratch``); nothing here decides how a kernel runs.

    A code generator that states the whole workspace (``SCRATCH_ATTR``, ``relay.scratch_bytes
    = N : i64``: the C target, oneDNN, the int8 kernels) gets that. Otherwise the workspace is
    the kernels' part (``KERNEL_SCRATCH_ATTR``, 0 when no engine stated one: the reference
    kernels need none) followed by the function's temporaries (``fused_temporaries``: the
    intermediate values no result's buffer can hold, each rounded up to 64 bytes), so nothing
    a step uses lies outside the plan. ``lookup`` finds composite functions the function
    calls (by default in ``fn``'s module).
    """
    stated = _stated(fn, SCRATCH_ATTR)
    if stated is not None:
        return stated
    kernels = _stated(fn, KERNEL_SCRATCH_ATTR) or 0
    temporaries = temporaries_bytes(fn, lookup or _symbols(fn))
    return kernels + temporaries if temporaries else kernels


def _symbols(fn: func.FuncOp) -> Callable[[str], func.FuncOp | None]:
    module = fn.get_toplevel_object()
    table = (
        {f.sym_name.data: f for f in module.walk() if isinstance(f, func.FuncOp)}
        if module is not fn
        else {}
    )
    return table.get


def temporaries_offset(fn: func.FuncOp) -> int:
    """Where ``fused_temporaries`` start in the function's workspace: after the kernels'
    stated part (``KERNEL_SCRATCH_ATTR``), or -- when a code generator stated the whole
    workspace as its own (``SCRATCH_ATTR``) -- at its end (they then have no planned room)."""
    stated = _stated(fn, SCRATCH_ATTR)
    if stated is not None:
        return stated
    return _stated(fn, KERNEL_SCRATCH_ATTR) or 0


__all__ = [
    "STORAGE_KINDS",
    "AliasOp",
    "AllocStorageOp",
    "AllocTensorOp",
    "CopyOp",
    "InvokeOp",
    "KillOp",
    "Memory",
    "PoolOp",
    "StorageType",
    "INPLACE_OPS",
    "VIEW_OPS",
    "fused_temporaries",
    "result_buffers",
    "temporaries_bytes",
    "temporaries_offset",
    "workspace_bytes",
    "KERNEL_SCRATCH_ATTR",
    "SCRATCH_ATTR",
    "SCRATCH_CHOICE_ATTR",
    "SCRATCH_OPTIONS_ATTR",
    "scratch_choice",
    "scratch_options",
]
