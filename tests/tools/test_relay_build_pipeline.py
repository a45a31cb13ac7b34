"""``relay-opt -p 'relay-build{...}'`` runs exactly what ``xrelay.build`` runs before lowering
(``xrelay.backend.pipeline``): for the built-in models and the engine choices, the IR printed by
the command equals the IR ``build_program`` hands to ``lower-to-memory``; and the comparison
sees one pass dropped or two swapped on one side."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from xdsl.parser import Parser

from xrelay.backend import pipeline
from xrelay.backend.build import build_program
from xrelay.dialects import make_context, module_op
from xrelay.tools import relay_opt

ENGINE_CHOICES = [("native",), ("dnnl", "native")]


@functools.cache
def _model(name: str):
    """(module, params) of a built-in model, small."""
    if name == "mlp":
        from xrelay.testing import mlp

        mod, params = mlp.get_workload(1)
    elif name == "resnet":
        from xrelay.testing import resnet

        # ResNet-8 (the CIFAR variant: 28x28 inputs), weights small enough to print
        mod, params = resnet.get_workload(1, num_classes=10, num_layers=8, image_shape=(3, 28, 28))
    else:
        from xrelay.frontends.onnx import from_onnx
        from xrelay.testing import onnx_models

        if name == "bert":
            model = onnx_models.bert_layer(seq=16, hidden=64, heads=4)
        else:  # int8: a quantized (QDQ) MLP
            from xrelay.testing import quantized_models

            model = onnx_models.mlp()
            feeds = quantized_models.calibration_inputs(model, 2)
            model = quantized_models.quantize(model, feeds)
        mod, params = from_onnx(model)
    params = {k: (v.numpy() if hasattr(v, "numpy") else np.asarray(v)) for k, v in (params or {}).items()}
    return module_op(mod), params


def _build_ir(name: str, engines: tuple[str, ...]) -> str:
    mod, params = _model(name)
    seen: list[str] = []
    build_program(mod, params, backends=engines, before_lowering=lambda m: seen.append(str(m)))
    return seen[0]


def _cli_ir(name: str, engines: tuple[str, ...], tmp_path) -> str:
    mod, params = _model(name)
    source, weights, out = tmp_path / "m.mlir", tmp_path / "w.npz", tmp_path / "out.mlir"
    source.write_text(str(mod))
    np.savez(weights, **params)
    spec = f"relay-build{{opt-level=3 engines={','.join(engines)}}}"
    code = relay_opt.main([str(source), "--params", str(weights), "-p", spec, "-o", str(out)])
    assert code == 0
    return str(Parser(make_context(), out.read_text()).parse_module())


@pytest.mark.parametrize("engines", ENGINE_CHOICES, ids="+".join)
@pytest.mark.parametrize("name", ["mlp", "resnet", "bert", "int8"])
def test_relay_opt_runs_what_build_runs(name, engines, tmp_path):
    assert _cli_ir(name, engines, tmp_path) == _build_ir(name, engines)


def _drop(spec: str, name: str) -> str:
    return ",".join(s for s in spec.split(",") if not s.startswith(name))


def _swap(spec: str, a: str, b: str) -> str:
    parts = spec.split(",")
    i, j = parts.index(a), parts.index(b)
    parts[i], parts[j] = parts[j], parts[i]
    return ",".join(parts)


@pytest.mark.parametrize(
    "name, engines, change",
    [
        ("resnet", ("native",), lambda s: _drop(s, "fold-scale-axis")),
        ("resnet", ("native",), lambda s: _swap(s, "simplify-inference", "fold-scale-axis")),
        ("bert", ("dnnl", "native"), lambda s: _drop(s, "partition-for-engines")),
        ("int8", ("native",), lambda s: _drop(s, "qnn-canonicalize-ops")),
    ],
)
def test_the_comparison_sees_a_pass_dropped_or_moved(name, engines, change, tmp_path, monkeypatch):
    """The relay-opt side's pipeline changed (one pass dropped, or two swapped): the IRs differ."""
    real = pipeline.build_pipeline_spec
    monkeypatch.setattr(pipeline, "build_pipeline_spec", lambda *a, **k: change(real(*a, **k)))
    changed = _cli_ir(name, engines, tmp_path)
    monkeypatch.undo()
    assert changed != _build_ir(name, engines)


def test_the_pipeline_lists_what_runs():
    """The spec names only enabled passes, pins fuse-ops' level, places partitioning and device
    planning before fuse-ops and mixed precision where the engine needs it."""
    spec = pipeline.build_pipeline_spec(1)
    assert "fold-constant" not in spec and "fuse-ops{opt-level=1}" in spec
    spec = pipeline.build_pipeline_spec(3, offload=("dnnl",), mixed_precision="bfloat16")
    names = [s.split("{")[0] for s in spec.split(",")]
    assert names.index("partition-for-engines") == names.index("fuse-ops") - 1
    assert "to-mixed-precision" not in names and 'mixed-precision="bfloat16"' in spec
    spec = pipeline.build_pipeline_spec(3, mixed_precision="float16", default_device="cpu")
    names = [s.split("{")[0] for s in spec.split(",")]
    assert names[:3] == ["make-static", "combine-split-conv2d", "to-mixed-precision"]
    assert names.index("plan-devices") == names.index("fuse-ops") - 1
