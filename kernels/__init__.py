"""numpy kernels for Relay ops, in destination-passing style.

``KERNELS`` maps a Relay op name without the dialect prefix (``"nn.conv2d"``, ``"add"``,
``"split"``...) to ``kernel(*inputs, out=None, **attrs)``. Attributes use Relay's names and plain
Python values; every keyword has Relay's default. Single-result kernels write into ``out`` (any
view, never resized) and return it, or return a fresh array when ``out`` is None. Multi-result
kernels (``nn.batch_norm``, ``nn.dropout``, ``split``) take ``out`` as a sequence of arrays and
return a tuple. ``concatenate`` and ``stack`` take their tensors as varargs.

>>> import numpy as np
>>> from xrelay.kernels import KERNELS
>>> KERNELS["add"](np.ones(2, "float32"), np.ones(2, "float32"))
array([2., 2.], dtype=float32)
"""

from . import algorithm, dyn, elementwise, nn, qnn, reduce, shape_ops, spatial, transform, winograd  # noqa: F401  (they register kernels)
from ._registry import (
    KERNELS,
    Kernel,
    get_kernel,
    has_kernel,
    out_dtype_or,
    to_numpy_dtype,
)
from .evaluate import evaluate
from .transform import infer_reshape, layout_transform_array

# isort: split

__all__ = [
    "KERNELS",
    "Kernel",
    "evaluate",
    "get_kernel",
    "has_kernel",
    "infer_reshape",
    "layout_transform_array",
    "out_dtype_or",
    "to_numpy_dtype",
]
