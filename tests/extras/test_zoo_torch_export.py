"""The zoo (``xrelay.testing.zoo``: the same networks, weights and inputs as the ONNX zoo
checks) through ``torch.export`` and ``from_exported_program``, run in the reference
interpreter, against torch's eager outputs: float32 within 1e-4 of the output's largest
magnitude. The zoo builder has already checked that each model's output depends on its input;
here the imported module's output must also be finite and differ for a second input."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the 'zoo' extra is not installed (pip install -e '.[zoo]')")
pytest.importorskip("transformers", reason="the 'zoo' extra is not installed (pip install -e '.[zoo]')")

from xrelay.frontends.torch import import_exported_program  # noqa: E402
from xrelay.runtime.interpreter import run  # noqa: E402
from xrelay.testing import zoo  # noqa: E402

TORCH_EXPORT_MODELS = [
    "resnet18",
    "resnet50",
    "googlenet",
    "inception_v3",
    "regnet_y_400mf",
    "vit_b_16",
    "convnext_tiny",
    "swin_t",
]
"""The zoo models checked through torch.export (see docs/guide/frontends.md for the others)."""


@pytest.mark.parametrize("name", TORCH_EXPORT_MODELS)
def test_zoo_model_through_torch_export(name):
    module, args = zoo.torch_model(name)
    with torch.no_grad():
        want = module(*args).numpy()
    result = import_exported_program(torch.export.export(module, args))
    got = run(result.module, [a.numpy() for a in args], result.params)[0]
    assert got.shape == want.shape and np.isfinite(got).all()
    rel = float(np.abs(got - want).max()) / float(np.abs(want).max())
    assert rel <= 1e-4, f"{name}: max relative error {rel:.2e}"
    other = [a.numpy() for a in zoo._torch_args(name, 1)]
    assert not np.array_equal(run(result.module, other, result.params)[0], got)
