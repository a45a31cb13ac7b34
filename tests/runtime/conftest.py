"""Fixtures of the runtime tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def onednn_matmul(monkeypatch):
    """Float32 dense steps on oneDNN's matmul and its post-ops, which the test reads (what
    AVX-512 CPUs run), not on the shim's packed kernel that runs them where oneDNN has only
    its jit GEMM (``primitives._dense_on_packed``; test_dnnl's packed-dense tests)."""
    monkeypatch.setenv("XRELAY_DNNL_PACKED_DENSE", "0")
