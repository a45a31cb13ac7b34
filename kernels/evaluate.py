"""The constant evaluator: one relay op run by its kernel on known inputs.

``fold-constant`` and the ONNX importer's folding both evaluate through ``evaluate``, so an op
folds the same way wherever it is folded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType

from xrelay.dialects.relay import RelayOp, numpy_dtype, shape_of

from ._registry import KERNELS


def evaluate(
    op_type: type[RelayOp],
    inputs: Sequence[np.ndarray],
    attrs: Mapping[str, Any],
    result_types: Sequence[TensorType],
) -> list[np.ndarray] | None:
    """The results of op ``op_type`` on ``inputs``, each in its result type's dtype.

    ``attrs`` are the op's Relay attributes; ``result_types`` its inferred result types. None
    when the op cannot be evaluated here: it has no kernel, the kernel raises (an unsupported
    dtype, say), or the kernel's results disagree with ``result_types`` in number or shape.
    Floating-point warnings (overflow, division by zero) are silenced: the result is what the
    kernel computes at run time.
    """
    kernel = KERNELS.get(op_type.RELAY_NAME)
    if kernel is None:
        return None
    try:
        with np.errstate(all="ignore"):
            out = kernel(*inputs, **attrs)
    except Exception:  # noqa: BLE001 - an op the kernels cannot run is simply not evaluated
        return None
    results = list(out) if isinstance(out, tuple | list) else [out]
    if len(results) != len(result_types):
        return None
    arrays = []
    for value, t in zip(results, result_types, strict=True):
        array = np.asarray(value)
        want = shape_of(t)  # a dynamic dimension (argwhere's count) takes any size
        if array.ndim != len(want) or any(w is not None and w != g for w, g in zip(want, array.shape)):
            return None
        arrays.append(array.astype(numpy_dtype(t.element_type), copy=False))
    return arrays
