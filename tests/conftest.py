"""Fixtures of every test."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def _pointwise_convolutions_on_onednn(monkeypatch):
    """1x1 convolutions on oneDNN's convolution unless the environment says otherwise: the
    default, ``XRELAY_DNNL_POINTWISE=measure``, times both ways at build time and takes the
    faster, so a test's plan would depend on the moment's timing (test_dnnl_pointwise.py
    sets each mode itself)."""
    monkeypatch.setenv("XRELAY_DNNL_POINTWISE", os.environ.get("XRELAY_DNNL_POINTWISE", "dnnl"))
