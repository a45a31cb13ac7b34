"""``xrelay.relay.testing``: the same as ``xrelay.testing``, so ``from tvm.relay.testing import
resnet`` ports as ``from xrelay.relay.testing import resnet``."""

from __future__ import annotations

import importlib
from typing import Any

from xrelay.testing import (
    count,
    count_ops,
    create_workload,
    inception_v3,
    init,
    layers,
    mlp,
    mobilenet,
    resnet,
    run_infer_type,
    run_opt_pass,
)

__all__ = [
    "count",
    "count_ops",
    "create_workload",
    "init",
    "layers",
    "mlp",
    "inception_v3",
    "mobilenet",
    "resnet",
    "run_infer_type",
    "run_opt_pass",
]


def __getattr__(name: str) -> Any:
    # lazily re-exported names of xrelay.testing (check_semantics, ...)
    return getattr(importlib.import_module("xrelay.testing"), name)
