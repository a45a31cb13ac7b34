"""``relay.constant`` and the ways its data is kept out of (or in) the text.

Weights make up almost all of a real model's bytes. A constant either prints its data inline
(``dense<...>``), or, when it has a name and the printer is asked to, prints only the name and
writes the data to a side table that the tools save as an ``.npz`` (``--params``)::

    %w = relay.constant @conv0_weight : tensor<64x3x7x7xf32>          // data in params.npz
    %b = relay.constant @fc1_bias dense<0.0> : tensor<10xf32>          // named, inline
    %c = relay.constant dense<[1, 2]> : tensor<2xi32>                   // anonymous, inline

Printing can also elide large data (``dense_resource<__elided__>``, like MLIR's
``--mlir-elide-elementsattrs-if-larger``); such text is for reading and does not parse back.
"""

from __future__ import annotations

import contextlib
import contextvars
import mmap
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, StringAttr, TensorType
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, Pure
from xdsl.utils.exceptions import ParseError, VerifyException

from xrelay.dialects._locations import refuse_huge_dense
from xrelay.dialects.relay.dtypes import (
    DTYPES,
    dtype_from_numpy,
    dtype_of,
    from_stored,
    numpy_dtype,
    tensor_type,
)


@dataclass
class ConstantPrintOptions:
    """How ``relay.constant`` prints its data (see ``print_options``)."""

    external: dict[str, np.ndarray] | None = None
    """When set, named constants (and large anonymous ones, given generated names) print only
    their name and their data is stored here."""
    external_min_elements: int = 2
    """Constants with fewer elements stay inline even in external mode."""
    elide_larger_than: int | None = None
    """Elide the data of constants with more elements than this."""
    _counter: list[int] = field(default_factory=lambda: [0])


_PRINT_OPTIONS: contextvars.ContextVar[ConstantPrintOptions | None] = contextvars.ContextVar(
    "relay_constant_print_options", default=None
)
_PARAMS_SOURCE: contextvars.ContextVar[Mapping[str, np.ndarray] | None] = contextvars.ContextVar(
    "relay_constant_params_source", default=None
)


@contextlib.contextmanager
def print_options(
    *,
    external: dict[str, np.ndarray] | None = None,
    external_min_elements: int = 2,
    elide_larger_than: int | None = None,
) -> Iterator[ConstantPrintOptions]:
    """Print named constants by reference into ``external`` and/or elide large ones."""
    opts = ConstantPrintOptions(external, external_min_elements, elide_larger_than)
    token = _PRINT_OPTIONS.set(opts)
    try:
        yield opts
    finally:
        _PRINT_OPTIONS.reset(token)


@contextlib.contextmanager
def params_source(params: Mapping[str, np.ndarray] | None) -> Iterator[None]:
    """Resolve ``relay.constant @name : type`` against ``params`` while parsing."""
    token = _PARAMS_SOURCE.set(params)
    try:
        yield
    finally:
        _PARAMS_SOURCE.reset(token)


_SIGN_EXTENDED = ("int4", "int2")
"""Stored one sign-extended byte per element by xDSL (see ``dense_from_numpy``)."""


class ParamsChangedError(OSError):
    """A mapped params file (``runtime.npz.map_npz``) was truncated or rewritten in place
    while constants viewing it were alive (raised instead of reading it)."""


def file_mapping_of(array: object) -> mmap.mmap | None:
    """The file mapping (``mmap``) whose bytes ``array`` -- an ndarray or a memoryview,
    through their bases -- views, else None (``runtime.npz.map_npz`` makes such arrays)."""
    for _ in range(64):
        if array is None or isinstance(array, mmap.mmap):
            return array
        array = array.obj if isinstance(array, memoryview) else getattr(array, "base", None)
    return None


def dense_from_numpy(array: np.ndarray, ty: TensorType | None = None) -> DenseIntOrFPElementsAttr:
    """A dense elements attribute holding ``array``'s bytes (no per-element Python work)."""
    array = np.asarray(array)
    if ty is None:

        ty = tensor_type(array.shape, dtype_from_numpy(array.dtype))
    want = numpy_dtype(ty.element_type)
    if array.dtype == np.bool_:
        array = array.astype(np.uint8)
        want = np.dtype(np.uint8)
    elif dtype_of(ty.element_type) in _SIGN_EXTENDED:
        # xDSL keeps an i4/i2 element in a sign-extended byte; ml_dtypes keeps only its low bits
        array = np.asarray(array, dtype=want).astype(np.int8)
        want = np.dtype(np.int8)
    if array.dtype == want and array.flags.c_contiguous and not array.flags.writeable and file_mapping_of(array):
        # a read-only view of a mapped params file (runtime.npz.map_npz): kept as a view, so
        # its pages stay on disk until read and can be handed back once a kernel has its copy
        return DenseIntOrFPElementsAttr(ty, BytesAttr(memoryview(array).cast("B")))  # type: ignore[arg-type]
    data = np.ascontiguousarray(array, dtype=want).tobytes()
    return DenseIntOrFPElementsAttr(ty, BytesAttr(data))


def numpy_from_dense(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """A read-only numpy view of a dense elements attribute."""
    ty = attr.type
    dtype = dtype_of(ty.element_type)
    shape = ty.get_shape()
    if dtype == "bool":
        raw = np.frombuffer(attr.data.data, dtype=np.uint8)
        arr = raw.astype(np.bool_)
    elif dtype in _SIGN_EXTENDED:
        arr = np.frombuffer(attr.data.data, dtype=np.int8).astype(numpy_dtype(dtype))
    else:
        check = getattr(file_mapping_of(attr.data.data), "check_unchanged", None)
        if check is not None:  # a view of a mapped params file: refuse one that changed
            check()
        arr = np.frombuffer(attr.data.data, dtype=numpy_dtype(dtype))
    n = int(np.prod(shape)) if shape else 1
    if arr.size == 1 and n != 1:  # splat
        arr = np.broadcast_to(arr, (n,))
    return arr.reshape(shape)


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """A tensor constant (Relay's ``Constant``), optionally named after the parameter it binds.

    ```mlir
    %c = relay.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %w = relay.constant @fc1_weight : tensor<10x64xf32>
    ```
    """

    name = "relay.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    param_name = opt_prop_def(StringAttr)
    """The parameter this constant was bound from; used to keep its data out of the text."""
    result = result_def(TensorType)
    traits = traits_def(Pure(), ConstantLike())

    def __init__(self, value: DenseIntOrFPElementsAttr, param_name: str | None = None):
        props: dict = {"value": value}
        if param_name is not None:
            props["param_name"] = StringAttr(param_name)
        super().__init__(properties=props, result_types=[value.type])

    @staticmethod
    def from_numpy(
        array: np.ndarray, param_name: str | None = None, dtype: str | None = None
    ) -> ConstantOp:
        array = np.asarray(array)
        ty = None if dtype is None else tensor_type(array.shape, dtype)
        return ConstantOp(dense_from_numpy(array, ty), param_name)

    def numpy(self) -> np.ndarray:
        return numpy_from_dense(self.value)

    @property
    def num_elements(self) -> int:
        n = 1
        for d in self.value.type.get_shape():
            n *= d
        return n

    def verify_(self) -> None:
        if self.value.type != self.result.type:
            raise VerifyException(
                f"relay.constant: value type {self.value.type} differs from result type {self.result.type}"
            )
        try:  # complex, f80, index, f8, i7...: nothing in Relay computes on them
            known = dtype_of(self.result.type) in DTYPES
        except ValueError:
            known = False
        if not known:
            raise VerifyException(
                f"relay.constant: element type {self.result.type.element_type} is no Relay dtype"
            )

    def print(self, printer: Printer) -> None:
        opts = _PRINT_OPTIONS.get()
        name = self.param_name.data if self.param_name else None
        n = self.num_elements
        if opts is not None and opts.external is not None and n >= opts.external_min_elements:
            if name is None or (name in opts.external and opts.external[name] is not self.numpy()):
                name = name or "const"
                base = name
                while name in opts.external:
                    opts._counter[0] += 1
                    name = f"{base}_{opts._counter[0]}"
            opts.external[name] = self.numpy()
            printer.print_string(" ")
            printer.print_symbol_name(name)
            printer.print_string(" : ")
            printer.print_attribute(self.result.type)
            return
        if name is not None:
            printer.print_string(" ")
            printer.print_symbol_name(name)
        printer.print_string(" ")
        if opts is not None and opts.elide_larger_than is not None and n > opts.elide_larger_than:
            printer.print_string("dense_resource<__elided__> : ")
            printer.print_attribute(self.result.type)
            return
        if self._non_finite():
            # xDSL prints NaN/inf as their bits (0x7fc00000) but parses such a literal back as an
            # integer value: write the whole data as a hex blob, which parses back bit for bit
            printer.print_string(f'dense<"0x{self.value.data.data.hex().upper()}"> : ')
            printer.print_attribute(self.result.type)
            return
        printer.print_attribute(self.value)

    def _non_finite(self) -> bool:
        """Whether this is float data with a NaN or an infinity."""
        dtype = dtype_of(self.result.type)
        if not (dtype.startswith("float") or dtype == "bfloat16"):
            return False
        with np.errstate(invalid="ignore"):
            return not bool(np.isfinite(self.numpy().astype(np.float32)).all())

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        name_attr = parser.parse_optional_symbol_name()
        name = name_attr.data if name_attr else None
        if parser.parse_optional_punctuation(":"):
            pos = parser.pos
            ty = parser.parse_type()
            if name is None:
                parser.raise_error("relay.constant needs a value or a @name", pos)
            params = _PARAMS_SOURCE.get()
            if params is None or name not in params:
                where = (
                    "no params were given (use --params FILE.npz)"
                    if params is None
                    else "the params have no such entry"
                )
                parser.raise_error(f"relay.constant @{name}: {where}", pos, parser.pos)
            array = np.asarray(params[name])
            if isinstance(ty, TensorType):
                array = from_stored(array, ty.element_type)
            if not isinstance(ty, TensorType) or tuple(array.shape) != tuple(ty.get_shape()):
                parser.raise_error(
                    f"relay.constant @{name}: params entry has shape {tuple(array.shape)} "
                    f"and dtype {array.dtype}, but the type is {ty}",
                    pos,
                    parser.pos,
                )
            if array.dtype != numpy_dtype(ty.element_type):
                parser.raise_error(
                    f"relay.constant @{name}: params entry has dtype {array.dtype}, but the type is {ty}",
                    pos,
                    parser.pos,
                )
            return ConstantOp(dense_from_numpy(array, ty), name)
        pos = parser.pos
        if parser.parse_optional_keyword("dense_resource"):
            parser.raise_error(
                "relay.constant: this constant's data was elided when it was printed; "
                "print without eliding (or with --params) to get parseable text",
                pos,
            )
        refuse_huge_dense(parser, pos, "relay.constant")
        try:
            value = parser.parse_attribute()
        except _XDSL_LITERAL_ERRORS as e:
            # xDSL 0.74's dense parser raises raw errors on literals that do not fit their
            # element type (3 : i1, a float for complex<f32>): report them at the literal.
            reason = str(e) or "it does not fit its type"
            parser.raise_error(f"relay.constant: bad dense literal: {reason}", pos)
        except ParseError as e:  # the same, already turned into a ParseError by xrelay.dialects
            reason = getattr(e, "dense_literal_reason", None)
            if reason is None:
                raise
            parser.raise_error(f"relay.constant: bad dense literal: {reason}", pos)
        if not isinstance(value, DenseIntOrFPElementsAttr):
            parser.raise_error(
                f"relay.constant expects dense<...> data, got {value}", pos, parser.pos
            )
        return ConstantOp(value, name)


_XDSL_LITERAL_ERRORS = (
    AssertionError, ValueError, TypeError, ArithmeticError, NotImplementedError, MemoryError
)  # fmt: skip
