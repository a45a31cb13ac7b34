"""The zoo's recipe (``xrelay.testing.zoo``): random weights that make outputs depend on the
input, deterministic builds and inputs, the export cache outside the repository."""

from __future__ import annotations

import os

import numpy as np
import pytest

from xrelay.testing import zoo

torch = pytest.importorskip("torch", reason="the 'zoo' extra is not installed (pip install -e '.[zoo]')")


def _block():

    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1),
        torch.nn.BatchNorm2d(8),
        torch.nn.ReLU(),
        torch.nn.Flatten(),
        torch.nn.LayerNorm(8 * 16 * 16),
    )


def test_randomize_replaces_constants_and_measures_batch_norm():

    torch.manual_seed(0)
    m = zoo.randomize(_block(), image=16)
    bn, ln = m[1], m[4]
    for t in (bn.weight, bn.bias, ln.weight, ln.bias):
        assert float(t.std()) > 0.01  # no longer all ones / zeros
    # measured on random images: neither the identity statistics nor left in training mode
    assert not m.training and not bn.training
    assert float((bn.running_var - 1).abs().max()) > 0.01
    assert float(bn.running_mean.abs().max()) > 1e-3
    assert int(bn.num_batches_tracked) == zoo.CALIBRATION_BATCHES


def test_randomize_measures_3d_batch_norm_on_clips_of_the_given_shape():
    """A video model's BatchNorm3d is measured on random clips of the model's input shape
    (images of ``image`` pixels would not reach a 3-D convolution)."""
    torch.manual_seed(0)
    block = torch.nn.Sequential(torch.nn.Conv3d(3, 4, 3, padding=1), torch.nn.BatchNorm3d(4))
    m = zoo.randomize(block, seed=0, shape=(1, 3, 4, 8, 8))
    bn = m[1]
    assert not bn.training and int(bn.num_batches_tracked) == zoo.CALIBRATION_BATCHES
    assert float(bn.running_mean.abs().max()) > 1e-3 and float((bn.running_var - 1).abs().max()) > 0.01
    assert zoo.inputs("r3d_18")["input"].shape == (1, 3, 8, 112, 112)


def test_check_input_dependence_refuses_a_dead_output():

    x = (torch.randn(1, 3, 16, 16),)
    y = (torch.randn(1, 3, 16, 16),)
    with pytest.raises(zoo.ZooError, match="does not depend on the input"):
        zoo.check_input_dependence(lambda a: torch.zeros(4).numpy(), x, y, "dead")
    with pytest.raises(zoo.ZooError, match="not finite"):
        zoo.check_input_dependence(lambda a: np.full(4, np.nan), x, y, "nan")
    torch.manual_seed(0)
    m = zoo.randomize(_block(), image=16)
    with torch.no_grad():
        rel = zoo.check_input_dependence(lambda a: m(*a).numpy(), x, y, "block")
    assert rel > 0.1


def test_unknown_model_is_named():
    with pytest.raises(zoo.ZooError, match="no zoo model 'resnet9'.*resnet18"):
        zoo.inputs("resnet9")


def test_more_models_are_known_with_their_inputs():
    assert not set(zoo.MODELS) & set(zoo.EXTRA_MODELS)
    assert zoo.inputs("whisper_encoder")["input_features"].shape == (1, 80, 3000)
    assert zoo.inputs("wav2vec2")["input_values"].shape == (1, 16000)
    clip = zoo.inputs("clip_text")
    assert clip["input_ids"].shape == (1, 77) and clip["attention_mask"].sum() == 77 - 77 // 4
    assert zoo.inputs("inception_v4")["input"].shape == (1, 3, 299, 299)
    with pytest.raises(zoo.ZooError, match="no zoo model 'resnet9'.*more: .*wav2vec2"):
        zoo.inputs("resnet9")


def test_inputs_are_deterministic_and_masked():
    a, b = zoo.inputs("bert_base"), zoo.inputs("bert_base")
    assert list(a) == ["input_ids", "attention_mask"]
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert a["attention_mask"].sum() == zoo.SEQ - zoo.SEQ // 4
    assert not np.array_equal(a["input_ids"], zoo.inputs("bert_base", seed=1)["input_ids"])
    assert zoo.inputs("inception_v3")["input"].shape == (1, 3, 299, 299)


def test_export_is_cached_outside_the_repository_and_matches_torch(tmp_path, monkeypatch):
    import onnxruntime as ort

    monkeypatch.setenv("XRELAY_ZOO_CACHE", str(tmp_path))
    path = zoo.onnx_path("squeezenet1_0")
    assert os.path.dirname(path) == str(tmp_path)
    stamp = os.stat(path).st_mtime_ns
    assert zoo.onnx_path("squeezenet1_0") == path and os.stat(path).st_mtime_ns == stamp
    assert [p.name for p in tmp_path.iterdir()] == [os.path.basename(path)]  # no temporaries
    model = zoo.onnx_model("squeezenet1_0")
    assert model.opset_import[0].version == zoo.OPSET
    # the file holds the same weights as torch_model builds (same seed)
    module, args = zoo.torch_model("squeezenet1_0")
    with torch.no_grad():
        expect = module(*args).numpy()
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    (got,) = sess.run(None, zoo.inputs("squeezenet1_0"))
    assert np.max(np.abs(got - expect)) <= 1e-4 * np.max(np.abs(expect))
