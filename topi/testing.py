"""``tvm.topi.testing``: numpy reference implementations TVM's tests compare against."""

from __future__ import annotations

import numpy as np

__all__ = ["log_softmax_python", "softmax_python"]


def softmax_python(a_np: np.ndarray, axis: int = 1) -> np.ndarray:
    """Softmax along ``axis`` (TVM's reference takes 2-D input and axis 1), max-shifted."""
    shifted = a_np - np.max(a_np, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax_python(a_np: np.ndarray, axis: int = 1) -> np.ndarray:
    """Log-softmax along ``axis``, max-shifted."""
    shifted = a_np - np.max(a_np, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
