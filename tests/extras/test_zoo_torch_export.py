"""The zoo (``xrelay.testing.zoo``: the same networks, weights and inputs as the ONNX zoo
checks) through ``torch.export`` and ``from_exported_program``, run in the reference
interpreter, against torch's eager outputs: float32 within 1e-4 of the output's largest
magnitude, for every model of the zoo (CNNs, vision transformers, BERT, DistilBERT, GPT-2).
The zoo builder has already checked that each model's output depends on its input;
here the imported module's output must also be finite and differ for a second input."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the 'zoo' extra is not installed (pip install -e '.[zoo]')")
pytest.importorskip("transformers", reason="the 'zoo' extra is not installed (pip install -e '.[zoo]')")

from xrelay.frontends.torch import import_exported_program  # noqa: E402
from xrelay.runtime.interpreter import run  # noqa: E402
from xrelay.testing import zoo  # noqa: E402


@pytest.mark.parametrize("name", list(zoo.MODELS))
def test_zoo_model_through_torch_export(name):
    module, args = zoo.torch_model(name)
    with torch.no_grad():
        want = module(*args).numpy()
    result = import_exported_program(torch.export.export(module, args))
    got = run(result.module, [a.numpy() for a in args], result.params)[0]
    assert got.shape == want.shape and np.isfinite(got).all()
    rel = float(np.abs(got - want).max()) / float(np.abs(want).max())
    print(f"{name}: max relative error {rel:.1e}")  # (shown with -s: the guide's table)
    assert rel <= 1e-4, f"{name}: max relative error {rel:.2e}"
    other = [a.numpy() for a in zoo._torch_args(name, 1)]
    assert not np.array_equal(run(result.module, other, result.params)[0], got)
