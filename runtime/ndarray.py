"""``tvm.nd``: ``nd.array(x, dev)`` and the ``NDArray`` it makes.

An ``NDArray`` is a numpy array (a subclass) with TVM's methods: ``.numpy()`` (a plain numpy
copy), ``.asnumpy()``, ``.device``, ``.copyfrom(src)`` and ``.copyto(target)``. Everything
numpy accepts still works on it, and ``GraphModule.get_output`` returns one, so both
``m.get_output(0).numpy()`` (TVM) and numpy code on the result run unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from xrelay.runtime.device import Device, check_runnable, cpu

__all__ = ["NDArray", "array", "empty"]


class NDArray(np.ndarray):
    """A host array with TVM's ``NDArray`` methods (see the module doc)."""

    @property
    def device(self) -> Device:
        """Where the data lives: always the host CPU."""
        return cpu(0)

    def numpy(self) -> np.ndarray:
        """A plain numpy copy of the data."""
        return np.array(self.view(np.ndarray), copy=True)

    def asnumpy(self) -> np.ndarray:
        """The old name of ``numpy()``."""
        return self.numpy()

    def copyfrom(self, source: Any) -> NDArray:
        """Copy ``source`` (same shape; cast to this dtype) into this array."""
        src = np.asarray(source)
        if src.shape != self.shape:
            raise ValueError(f"copyfrom: array shape {src.shape} does not match {self.shape}")
        np.copyto(self.view(np.ndarray), src, casting="unsafe")
        return self

    def copyto(self, target: Any) -> NDArray:
        """Copy into ``target`` (an ``NDArray``) or into a new array on device ``target``."""
        if isinstance(target, Device):
            check_runnable(target, "copy an array")
            return array(self, target)
        if isinstance(target, np.ndarray):
            np.copyto(target, self.view(np.ndarray))
            return target
        raise ValueError(f"copyto expects an NDArray or a Device, got {type(target).__name__}")


def array(arr: Any, device: Device | None = None, mem_scope: Any = None) -> NDArray:
    """``tvm.nd.array``: a copy of ``arr`` as an ``NDArray`` on ``device`` (the host CPU)."""
    check_runnable(device, "allocate an array")
    return np.array(arr, copy=True).view(NDArray)


def empty(shape: Any, dtype: str = "float32", device: Device | None = None) -> NDArray:
    """``tvm.nd.empty``: an uninitialised array."""
    check_runnable(device, "allocate an array")
    return np.empty(shape, dtype=dtype).view(NDArray)
