"""Whole models through the C target at every optimisation level: ResNet-18 (Relay's
workload), MobileNetV2 and a BERT encoder layer imported from ONNX. Each program is
compiled with ``-std=c99 -Wall -Wextra -Werror``, run step by step through its C functions and
compared with the reference interpreter; the standalone entry gives the same bits."""

import functools
import shutil
import subprocess

import numpy as np
import pytest

import xrelay
from xrelay.backend.build import build_c

CC = shutil.which("cc")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler (cc) on PATH")
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O0", "-c"]


@functools.cache
def _workload(name):
    from xrelay.frontends.onnx import from_onnx
    from xrelay.testing import onnx_models, resnet

    rng = np.random.default_rng(3)
    if name == "resnet18":
        mod, params = resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10)
        return mod, params, {"data": rng.standard_normal((1, 3, 32, 32)).astype("float32")}
    if name == "mobilenet_v2":
        mod, params = from_onnx(onnx_models.mobilenet_v2(image=32, width=0.25, num_classes=10), freeze_params=True)
        return mod, params, {"data": rng.standard_normal((1, 3, 32, 32)).astype("float32")}
    model = onnx_models.bert_layer(seq=8, hidden=32, heads=2)
    mod, params = from_onnx(model, freeze_params=True)
    return mod, params, onnx_models.bert_inputs(seq=8, hidden=32)


@functools.cache
def _reference(name):
    mod, params, inputs = _workload(name)
    return xrelay.run(mod, inputs, params=params)


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2", "bert_layer"])
def test_model_compiles_strictly_and_matches_the_interpreter(name, opt_level, tmp_path):
    mod, params, inputs = _workload(name)
    with xrelay.transform.PassContext(opt_level=opt_level):
        lib = build_c(mod, params, opt_level=opt_level, constants="blob")
    lib.export(tmp_path, main=True)
    for src in ("model.c", "main.c"):
        res = subprocess.run([CC, *STRICT, "-I", str(tmp_path), str(tmp_path / src), "-o", str(tmp_path / "x.o")],
                             capture_output=True, text=True)  # fmt: skip
        assert res.returncode == 0, res.stderr
    want = _reference(name)
    lib.run(**inputs)
    for i, w in enumerate(want):
        got = lib.get_output(i)
        assert np.isfinite(w).all() and np.isfinite(got).all() and np.ptp(w) > 0
        np.testing.assert_allclose(got, w, rtol=1e-4, atol=1e-4)
    first = lib.get_output(0).copy()
    lib.run_aot()
    np.testing.assert_array_equal(lib.get_output(0), first)
