"""Shared workloads for the memory tests: small, so the whole directory runs in seconds."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ModuleOp

from xrelay.dialects import make_context
from xrelay.transforms.bind_params import bind_params_by_name
from xrelay.transforms.fuse_ops import FuseOpsPass


def _bound(mod, params) -> ModuleOp:
    m = mod.module.clone()
    bind_params_by_name(m, params)
    return m


def _fused(m: ModuleOp) -> ModuleOp:
    m = m.clone()
    FuseOpsPass().apply(make_context(), m)
    return m


@pytest.fixture(scope="session")
def fused():
    """``fused(module)``: a fused copy of a relay module (fuse-ops at the default level)."""
    return _fused


@pytest.fixture(scope="session")
def workloads() -> dict[str, ModuleOp]:
    """Relay modules with their weights bound as constants (so only activations are planned)."""
    from xrelay.testing import mlp, mobilenet, resnet

    out = {}
    mod, params = resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10)
    out["resnet18"] = _bound(mod, params)
    mod, params = mobilenet.get_workload(image_shape=(3, 32, 32), num_classes=10)
    out["mobilenet"] = _bound(mod, params)
    mod, params = mlp.get_workload(batch_size=1)
    out["mlp"] = _bound(mod, params)
    return out
