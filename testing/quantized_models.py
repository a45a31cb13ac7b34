"""ONNX int8 models made by onnxruntime's own quantizer, to check the qnn path against it.

``quantize(model, inputs, per_channel, quant_format)`` runs onnxruntime's pre-processing
(``quant_pre_process``: batch norms folded, shapes inferred) and
``onnxruntime.quantization.quantize_static`` with random calibration data made here
(``calibration_inputs``), in QDQ format (QuantizeLinear/DequantizeLinear pairs around float
ops, onnxruntime's default) or QOperator format (QLinearConv, QLinearMatMul, ...).
On a CPU where onnxruntime's uint8 x int8 products are not exact (``ort_u8s8_exact``) the
weights are quantized to 7 bits (``reduce_range``), as onnxruntime's quantization guide advises
for such CPUs, so that onnxruntime is still the spec's integer arithmetic to compare with.
``compare(model, inputs)`` runs it in onnxruntime and in xrelay (imported, built at -O3 and run
in the arena) and returns both outputs; ``quantization_steps`` measures their difference in
units of the output's quantization step.

``zoo_path(name, per_channel)`` is the quantized real-model zoo: the float ONNX file of
``xrelay.testing.zoo`` quantized the same way, calibrated on ``ZOO_CALIBRATION`` inputs made by
``zoo.inputs`` (seeds ``1000 + i``; the measured inputs use other seeds), cached beside the float
files (``$XRELAY_ZOO_CACHE``), keyed by the float file, the weight granularity and
onnxruntime's version, written atomically.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import onnx

from xrelay.frontends.onnx import from_onnx
from xrelay.runtime.files import scratch_dir
from xrelay.testing import zoo
from xrelay.testing.onnx_models import run_onnxruntime
from xrelay.transforms.fake_quantization_to_integer import FakeQuantizationToIntegerPass


def calibration_inputs(model: onnx.ModelProto, count: int, seed: int = 0) -> list[dict[str, np.ndarray]]:
    """``count`` random standard-normal float32 feeds for the model's inputs."""
    rng = np.random.default_rng(seed)
    init = {t.name for t in model.graph.initializer}
    feeds = []
    for _ in range(count):
        feed = {}
        for inp in model.graph.input:
            if inp.name in init:
                continue
            shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
            feed[inp.name] = rng.standard_normal(shape).astype(np.float32)
        feeds.append(feed)
    return feeds


@functools.cache
def ort_u8s8_exact() -> bool:
    """Whether onnxruntime multiplies uint8 by int8 exactly on this CPU. Without VNNI its
    kernels use VPMADDUBSW, which adds each pair of products in int16 with saturation
    (onnxruntime's quantization guide: U8S8 "might suffer from saturation issues" on AVX2 and
    AVX-512 without VNNI): two products 255 x -128 give -32768, not -65280, where the ONNX spec's
    sums are exact int32. Probed once with one MatMulInteger of exactly that pair."""
    from onnx import TensorProto, helper, numpy_helper

    a = np.full((1, 2), 255, np.uint8)
    w = np.full((2, 1), -128, np.int8)
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["a", "w"], ["y"])], "probe",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [1, 2])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [1, 1])], [numpy_helper.from_array(w, "w")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    return int(run_onnxruntime(model, {"a": a})[0][0, 0]) == -65280


def int8_weight_bounds() -> tuple[int, int]:
    """[low, high) of random int8 weights a test compares with onnxruntime: the full range where
    onnxruntime's products are exact, 7 bits (-64..63, where no pair of products 255 x w leaves
    int16) where they saturate (``ort_u8s8_exact``)."""
    return (-128, 128) if ort_u8s8_exact() else (-64, 64)


def quantize(
    model: onnx.ModelProto, calibration: list[Mapping[str, np.ndarray]], per_channel: bool = False,
    quant_format: str = "QDQ",
) -> onnx.ModelProto:  # fmt: skip
    """``quantize_static`` (uint8 activations, int8 weights) of ``model`` calibrated on the feeds;
    7-bit weights (``reduce_range``) where onnxruntime's uint8 x int8 products saturate."""
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.it = iter(calibration)

        def get_next(self):
            return next(self.it, None)

    from onnxruntime.quantization.shape_inference import quant_pre_process

    with scratch_dir("xrelay-quantize-") as tmp:
        raw, src, dst = Path(tmp) / "raw.onnx", Path(tmp) / "f32.onnx", Path(tmp) / "int8.onnx"
        onnx.save(model, raw)
        # onnxruntime's recommended pre-processing: graph optimisation (batch norms folded into
        # the convolutions) and shape inference
        quant_pre_process(str(raw), str(src), skip_symbolic_shape=True)
        quantize_static(
            str(src), str(dst), Reader(), quant_format=getattr(QuantFormat, quant_format),
            per_channel=per_channel, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
            reduce_range=not ort_u8s8_exact(),
        )  # fmt: skip
        return onnx.load(dst)


ZOO_MODELS = (
    "resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_large", "efficientnet_b0",
    "mnasnet1_0", "squeezenet1_0", "googlenet", "bert_base",
)  # fmt: skip
"""The float zoo's models that have a quantized twin (its CNNs and BERT-base)."""

ZOO_CALIBRATION = 4
"""Calibration inputs of a quantized zoo model (random, like the zoo's inputs)."""

ZOO_QUANT_VERSION = 1
"""Part of the quantized files' cache key: bump it when ``quantize`` changes what it writes."""


def zoo_path(name: str, per_channel: bool = False, seed: int = 0) -> str:
    """The ONNX file of the zoo model ``name`` quantized by onnxruntime (``quantize``: QDQ,
    uint8 activations, int8 weights, per-tensor or ``per_channel``), made on first use and
    cached beside the float file (see the module docstring)."""
    import importlib.metadata as md


    if name not in ZOO_MODELS:
        raise zoo.ZooError(f"no quantized zoo model '{name}' (known: {', '.join(ZOO_MODELS)})")
    src = zoo.onnx_path(name, seed)
    text = (f"{os.path.basename(src)}|{per_channel}|{ZOO_CALIBRATION}|{ZOO_QUANT_VERSION}|{md.version('onnxruntime')}"
            f"|{'full' if ort_u8s8_exact() else 'reduced'}")
    key = hashlib.sha256(text.encode()).hexdigest()[:12]
    granularity = "pc" if per_channel else "pt"
    path = os.path.join(os.path.dirname(src), f"{name}-s{seed}-int8-{granularity}-{key}.onnx")
    if os.path.exists(path):
        return path
    calibration = [zoo.inputs(name, 1000 + i) for i in range(ZOO_CALIBRATION)]
    q = quantize(onnx.load(src), calibration, per_channel=per_channel)
    zoo.write_cached(path, lambda tmp: onnx.save(q, tmp))
    return path


def output_step(model: onnx.ModelProto) -> float:
    """The quantization step of the graph's output (the scale of the last DequantizeLinear)."""
    out = model.graph.output[0].name
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    producers = {o: n for n in model.graph.node for o in n.output}
    node = producers.get(out)
    while node is not None and node.op_type != "DequantizeLinear":
        node = producers.get(node.input[0])
    if node is None:
        return 0.0
    return float(np.asarray(inits[node.input[1]]).reshape(-1)[0])


def build(model: onnx.ModelProto, opt_level: int = 3, integer: bool = False):
    """Import ``model`` and build it for the arena runtime; ``integer``: weights bound and
    ``fake-quantization-to-integer{onnxruntime=true}`` run first, so the quantized ops compute
    in int8 with onnxruntime's arithmetic (its bits)."""
    import xrelay

    mod, params = from_onnx(model, freeze_params=integer)
    if integer:
        FakeQuantizationToIntegerPass(onnxruntime=True).apply(None, mod.module)
    return xrelay.build(mod, params, opt_level=opt_level, plan="greedy-by-size")


def compare(model: onnx.ModelProto, inputs: Mapping[str, np.ndarray], module=None):
    """(onnxruntime output, xrelay output) of the first graph output on ``inputs``."""
    ref = run_onnxruntime(model, inputs)[0]
    m = module if module is not None else build(model)
    for name, value in inputs.items():
        m.set_input(name.replace(":", "_"), value)
    m.run()
    return ref, m.get_output(0)


def quantization_steps(ref: np.ndarray, out: np.ndarray, step: float) -> np.ndarray:
    """|ref - out| in quantization steps (rounded to cancel float noise)."""
    return np.round(np.abs(ref.astype(np.float64) - out.astype(np.float64)) / step, 3)


def dequantize_sum_program(shape: tuple[int, ...], axes: list[int], order: str, dtype: str, seed: int = 0):
    """``(module, input)``: a program that is one ``qnn.dequantize_sum`` of an 8-bit input
    ``q`` (scale 0.0371, zero point 99 for uint8 and -7 for int8) and random values for it."""
    from xdsl.parser import Parser

    import xrelay
    from xrelay.dialects import make_context

    x_t = f"tensor<{'x'.join(map(str, shape))}x{'ui8' if dtype == 'uint8' else 'i8'}>"
    y_t = f"tensor<{'x'.join(str(1 if i in axes else d) for i, d in enumerate(shape))}xf32>"
    text = f"""
func.func @main(%q: {x_t}) -> {y_t} {{
  %s = relay.constant dense<0.0371> : tensor<f32>
  %z = relay.constant dense<{99 if dtype == "uint8" else -7}> : tensor<i32>
  %y = qnn.dequantize_sum %q, %s, %z {{axes = {list(axes)}, order = "{order}"}} : ({x_t}, tensor<f32>, tensor<i32>) -> {y_t}
  func.return %y : {y_t}
}}
"""
    info = np.iinfo(dtype)
    data = np.random.default_rng(seed).integers(info.min, info.max + 1, shape).astype(dtype)
    return xrelay.IRModule.from_module_op(Parser(make_context(), text).parse_module()), data
