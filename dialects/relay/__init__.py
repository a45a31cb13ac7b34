"""The relay dialect: Relay's operators as xDSL ops.

Ops are named ``relay.<relay name>`` (``relay.nn.conv2d``); attributes are properties with
Relay's names and defaults; every op infers and verifies its result types; op metadata (fusion
pattern kind, stateful / reshape-only / non-computational flags) is class data that passes read.
Function-level Relay attributes live on ``func.func`` as discardable attributes with a
``relay.`` prefix (see ``FUNC_ATTRS``).
"""

from xdsl.ir import Dialect

from xrelay.dialects.relay import algorithm as _algorithm  # noqa: F401 - registers its ops
from xrelay.dialects.relay import elemwise as _elemwise  # noqa: F401 - registers its ops
from xrelay.dialects.relay import init_ops as _init_ops  # noqa: F401 - registers its ops
from xrelay.dialects.relay import integer as _integer  # noqa: F401 - registers its ops
from xrelay.dialects.relay import normalization as _normalization  # noqa: F401 - registers its ops
from xrelay.dialects.relay import ops as _ops
from xrelay.dialects.relay import shape_ops as _shape_ops  # noqa: F401 - registers its ops
from xrelay.dialects.relay import spatial as _spatial  # noqa: F401 - registers its ops
from xrelay.dialects.relay.base import (
    RELAY_OPS,
    REQUIRED,
    AttrSpec,
    OpPattern,
    RelayOp,
    RelayTypeError,
)
from xrelay.dialects.relay.constant import (
    ConstantOp,
    dense_from_numpy,
    numpy_from_dense,
    params_source,
    print_options,
)
from xrelay.dialects.relay.devices import VirtualDeviceAttr
from xrelay.dialects.relay.dtypes import (
    byte_size,
    dtype_of,
    element_type,
    numpy_dtype,
    shape_of,
    tensor_type,
)
from xrelay.dialects.relay.loop import LoopOp, LoopYieldOp
from xrelay.dialects.relay.strings import STRING_OPS, StringType

FUNC_ATTRS = {
    "Primitive": "relay.primitive",
    "Composite": "relay.composite",
    "Inline": "relay.inline",
    "used_memory": "relay.used_memory",
    "io_used_memory": "relay.io_used_memory",
    "reshape_only": "relay.reshape_only",
    "Compiler": "relay.compiler",
    "global_symbol": "relay.global_symbol",
    "PartitionedFromPattern": "relay.partitioned_from_pattern",
    "Extern": "relay.extern",
    "SkipOptimization": "relay.skip_optimization",
}
"""Relay function attribute names and the discardable ``func.func`` attributes that hold them."""

Relay = Dialect(
    "relay",
    [ConstantOp, LoopOp, LoopYieldOp, *STRING_OPS, *RELAY_OPS.values()],
    [VirtualDeviceAttr, _ops.StorageType, StringType],
)

__all__ = [
    "FUNC_ATTRS",
    "RELAY_OPS",
    "REQUIRED",
    "AttrSpec",
    "ConstantOp",
    "LoopOp",
    "LoopYieldOp",
    "OpPattern",
    "Relay",
    "RelayOp",
    "RelayTypeError",
    "VirtualDeviceAttr",
    "byte_size",
    "dense_from_numpy",
    "dtype_of",
    "element_type",
    "numpy_dtype",
    "numpy_from_dense",
    "params_source",
    "print_options",
    "shape_of",
    "tensor_type",
]
del _ops, _integer
