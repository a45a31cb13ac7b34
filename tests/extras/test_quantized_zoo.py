"""Zoo models quantized by onnxruntime (``xrelay.testing.quantized_models.zoo_path``: QDQ,
``quantize_static`` on random calibration inputs) imported, built in int8 with onnxruntime's
arithmetic (``fake-quantization-to-integer{onnxruntime=true}``) and run in the arena: the
outputs are onnxruntime's bit for bit on inputs the calibration never saw. The same check over
100 inputs and every quantized zoo model is ``benchmarks/zoo.py --int8``."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch", reason="the 'zoo' extra is not installed (pip install -e '.[zoo]')")
pytest.importorskip("transformers", reason="the 'zoo' extra is not installed (pip install -e '.[zoo]')")

from xrelay.testing import quantized_models as qm  # noqa: E402
from xrelay.testing import zoo  # noqa: E402


@pytest.mark.parametrize(
    "name, per_channel",
    [("resnet18", False), ("mobilenet_v2", True)],
)
def test_quantized_zoo_model_is_onnxruntime_bit_for_bit(name, per_channel):
    import onnx
    import onnxruntime as ort

    path = qm.zoo_path(name, per_channel)
    model = onnx.load(path)
    assert any(n.op_type == "QuantizeLinear" for n in model.graph.node)  # really quantized
    m = qm.build(model, integer=True)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    outs = []
    for seed in (2000, 2001):
        feeds = zoo.inputs(name, seed)
        ref = sess.run(None, feeds)[0]
        m.set_input(**feeds)
        m.run()
        out = m.get_output(0).numpy()
        assert np.all(np.isfinite(out))
        assert out.shape == ref.shape and out.dtype == ref.dtype
        assert np.array_equal(out, ref), (
            f"{name}: {int((out != ref).sum())} of {out.size} elements differ from onnxruntime's"
        )
        outs.append(out)
    assert not np.array_equal(outs[0], outs[1])  # the output depends on the input
