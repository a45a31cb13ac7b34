"""ONNX's ``onnx/defs/optional`` operators: ``Optional``, ``OptionalHasElement``,
``OptionalGetElement``.

An optional is held by the importer (``OptionalValue``: a tensor, a sequence or nothing) and
its ops are evaluated at import, as the sequences' are (see ``sequence``).
"""

from __future__ import annotations

import numpy as np

from xrelay.frontends.onnx.importer import (
    OptionalValue,
)
from xrelay.frontends.onnx.registry import converter


@converter("Optional", structured=True)
def _optional(im, node):
    v = node.input(0)
    return [OptionalValue(v)]


@converter("OptionalHasElement", structured=True)
def _optional_has(im, node):
    v = node.input(0)
    has = v is not None and not (isinstance(v, OptionalValue) and v.value is None)
    return [im.const(np.array(has))]


@converter("OptionalGetElement", structured=True)
def _optional_get(im, node):
    v = node.inputs[0]
    if isinstance(v, OptionalValue):
        if v.value is None:
            raise node.fail("the optional is empty")
        return [v.value]
    return [v]  # a tensor or sequence is its own element
