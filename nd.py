"""``tvm.nd``: ``xrelay.nd.array(x)``, ``.numpy()`` (see ``xrelay.runtime.ndarray``)."""

from xrelay.runtime.ndarray import NDArray, array, empty

__all__ = ["NDArray", "array", "empty"]
