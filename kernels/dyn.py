"""Kernels of the dyn dialect: the static op's kernel, its attributes read from the operands.

A dyn op knows how its value operands become the static op's attributes
(``DynOp.static_attrs``); the kernel applies that to the run-time values, checks the static
op's type relation on them (so a bad shape fails with the static op's message), and runs the
static op's kernel. ``dynamic-to-static`` makes the same substitution in the IR.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from xrelay.dialects.dyn import DYN_OPS, DynOp
from xrelay.dialects.relay import RELAY_OPS, RelayTypeError
from xrelay.dialects.relay.dtypes import byte_size, dtype_from_numpy, tensor_type, too_large

from ._registry import KERNELS, register


def _dyn_kernel(cls: type[DynOp]) -> Any:
    static_cls = RELAY_OPS[cls.STATIC]

    def kernel(*inputs: np.ndarray, out: Any = None, **attrs: Any) -> Any:
        values = [np.asarray(inputs[i]) for i in cls.VALUE_OPERANDS]
        operands = [np.asarray(x) for x in cls.static_operands(inputs)]
        try:
            given = cls.static_attrs(attrs, values)
            types = [tensor_type(x.shape, dtype_from_numpy(x.dtype)) for x in operands]
            full = static_cls.complete_attrs(given, types)
            results = static_cls.infer_types(types, full)
        except (ValueError, RelayTypeError) as e:
            raise ValueError(f"{cls.RELAY_NAME}: {e}") from None
        for t in results:  # the shape is known only now: refuse it before the kernel allocates
            refusal = too_large(f"{cls.RELAY_NAME}: its result {t}", byte_size(t))
            if refusal:
                raise ValueError(refusal)
        return KERNELS[cls.STATIC](*operands, out=out, **full)

    kernel.__name__ = cls.RELAY_NAME.replace(".", "_")
    kernel.__doc__ = f"Relay ``{cls.RELAY_NAME}``: ``{cls.STATIC}`` on the run-time values."
    return kernel


for _name, _cls in DYN_OPS.items():
    register(_name)(_dyn_kernel(_cls))
del _name, _cls
