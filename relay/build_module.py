"""``relay.build_module``: helpers around building, as in tvm.relay.build_module.

Only ``bind_params_by_name`` lives here for now.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from xrelay.dialects.relay import RelayTypeError, dtype_of
from xrelay.relay.expr import Constant, Function
from xrelay.relay.expr_functor import substitute

__all__ = ["bind_params_by_name"]


def bind_params_by_name(func: Function, params: Mapping[str, Any]) -> Function:
    """``func`` with the parameters named in ``params`` replaced by named constants.

    Each bound parameter becomes a ``relay.constant @name`` holding the array (cast to the
    parameter's dtype; the shape must match). Parameters not in ``params`` stay, in order;
    names in ``params`` that are not parameters are ignored, as in Relay. Raises ValueError
    when several parameters share a bound name, as Relay does.
    """
    if not isinstance(func, Function):
        raise TypeError(f"bind_params_by_name expects a relay.Function, got {func!r}")
    counts: dict[str, int] = {}
    for p in func.params:
        counts[p.name_hint] = counts.get(p.name_hint, 0) + 1
    mapping = {}
    for p in func.params:
        if p.name_hint not in params:
            continue
        if counts[p.name_hint] > 1:
            raise ValueError(f"multiple parameters are named {p.name_hint}")
        value = params[p.name_hint]
        arr = value.numpy() if hasattr(value, "numpy") else np.asarray(value)
        t = p._type
        if t is not None:
            want = tuple(t.get_shape())
            if tuple(arr.shape) != want:
                raise RelayTypeError(
                    f"bind_params_by_name: param '{p.name_hint}' has shape {tuple(arr.shape)} "
                    f"but the parameter has type {t}"
                )
            dtype = dtype_of(t)
        else:
            dtype = None
        mapping[p] = Constant(arr, p.name_hint, dtype=dtype) if dtype else Constant(arr, p.name_hint)
    if not mapping:
        return func
    body = substitute(func.body, mapping)
    new = Function([p for p in func.params if p not in mapping], body, attrs=dict(func.attrs))
    return new
