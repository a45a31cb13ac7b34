"""Helpers for the ONNX importer tests: build a small graph, import it, run both sides.

The reference is onnxruntime (CPU, one thread). xrelay's side is the reference interpreter
on the imported module. Default tolerance: float32 rtol = atol = 1e-5 for single ops; the
whole-model tests use rtol = 1e-4 and atol = 1e-4 times the output's largest magnitude.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

import numpy as np
import pytest
from onnx import helper

from xrelay.frontends import import_onnx
from xrelay.runtime.interpreter import run
from xrelay.testing.onnx_models import make_model, run_onnxruntime


def relay_op_names(module) -> list[str]:
    """Names of the ops in @main, in order (``relay.nn.conv2d``...)."""
    func = next(iter(module.ops))
    return [op.name for op in func.body.block.ops]


def check_node(
    op_type: str,
    inputs: Sequence[np.ndarray | None],
    attrs: dict | None = None,
    *,
    opset: int = 17,
    consts: Sequence[int] = (),
    n_out: int = 1,
    out_dtypes: Sequence = (),
    freeze_params: bool = False,
    rtol: float = 1e-5,
    atol: float = 1e-5,
):
    """One ``op_type`` node: inputs ``x0, x1, ...``; indices in ``consts`` become initializers.

    Returns the import result after checking every output against onnxruntime.
    """
    names, feeds, graph_inputs, inits = [], {}, {}, {}
    for i, x in enumerate(inputs):
        if x is None:
            names.append("")
            continue
        name = f"x{i}"
        names.append(name)
        if i in consts:
            inits[name] = x
        else:
            feeds[name] = x
            graph_inputs[name] = (x.shape, x.dtype)
    outs = [f"y{i}" for i in range(n_out)]
    dts = list(out_dtypes) or [np.float32] * n_out
    node = helper.make_node(op_type, names, outs, name=f"{op_type.lower()}_node", **(attrs or {}))
    model = make_model([node], graph_inputs, dict(zip(outs, dts)), inits, opset=opset)
    want = run_onnxruntime(model, feeds)
    imp = import_onnx(model, freeze_params=freeze_params)
    got = run(imp.module, feeds, imp.params)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape, (g.shape, w.shape)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return imp


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


def randn(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


helpers = SimpleNamespace(check_node=check_node, relay_op_names=relay_op_names, randn=randn)


@pytest.fixture
def h() -> SimpleNamespace:
    return helpers
