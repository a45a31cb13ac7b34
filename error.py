"""``xrelay.error``: the base of xrelay's errors, as ``tvm.error`` / ``tvm.TVMError``.

Every error xrelay raises on purpose (ill-typed IR, a failing pass, a bad build, a wrong
input to a module, a file that does not load) is a ``TVMError``, so scripts that catch
``tvm.TVMError`` port as ``except xrelay.TVMError``. Each error class keeps its own bases
too (``RelayTypeError`` is still an xDSL ``VerifyException``, ``GraphModuleError`` still a
``ValueError``), so existing handlers keep working.

This module imports nothing from xrelay: every layer may derive from it.
"""

from __future__ import annotations

__all__ = ["TVMError", "UnsupportedError"]


class TVMError(RuntimeError):
    """The base of xrelay's errors (TVM's ``TVMError`` is a ``RuntimeError`` too)."""


class UnsupportedError(TVMError, AttributeError):
    """A TVM name that xrelay imports but cannot honour; the message says what to use
    instead. It is an ``AttributeError`` too, so ``hasattr`` answers False."""
