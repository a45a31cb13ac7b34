"""The int8 arena: qnn-fuse-pad, the kernels reading through the zero-point pad and
requantizing in the product, their scratch planned as the step's workspace."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.dialects import make_context
from xrelay.runtime.native import fast_int8
from xrelay.testing import check_semantics
from xrelay.testing import onnx_models as om
from xrelay.testing import quantized_models as qm
from xrelay.transforms.qnn_fuse_pad import QnnFusePadPass, qnn_fuse_pad
from xrelay.transforms.qnn_narrow_edges import QnnNarrowEdgesPass, qnn_narrow_edges

RNG = np.random.default_rng(5)


def _qconv(x, c, o, k, *, stride=1, pad=1, groups=1, zp_x=7, ort=True):
    """dequantize -> conv2d -> quantize: after fake-quantization-to-integer a qnn.conv2d whose
    lowering pads with the input zero point (nn.pad) and requantizes."""
    w = relay.const(RNG.integers(-127, 128, (o, c // groups, k, k)).astype("int8"))
    fx = relay.qnn.op.dequantize(x, relay.const(0.05), relay.const(zp_x))
    fw = relay.qnn.op.dequantize(w, relay.const(0.01), relay.const(0))
    y = relay.nn.conv2d(fx, fw, padding=(pad, pad), strides=(stride, stride), groups=groups, channels=o, kernel_size=(k, k))
    return relay.qnn.op.quantize(y, relay.const(0.1), relay.const(5), out_dtype="uint8")


def _int8_module(body, ort=True):
    mod = xrelay.IRModule.from_expr(body)
    mod = relay.transform.FakeQuantizationToInteger(onnxruntime=ort)(mod)
    return mod


def _block(ort=True, width=1030):
    """A 3x3 convolution, a depthwise one (rows wider than the C kernel's 512-column pieces)
    and a 1x1 one, each padded by the zero point where it pads."""
    x = relay.var("x", shape=(1, 4, 5, width), dtype="uint8")
    y = _qconv(x, 4, 16, 3, ort=ort)
    y = _qconv(y, 16, 16, 3, groups=16, zp_x=5, ort=ort)
    y = _qconv(y, 16, 8, 1, pad=0, zp_x=5, ort=ort)
    return _int8_module(y, ort)


def _built_like_the_reference(mod, data):
    """The module built for the arena runtime, run on ``data`` with the reference's bits."""
    ref = xrelay.run(mod, {"x": data})[0]
    m = xrelay.build(mod.clone(), {}, opt_level=3, plan="greedy-by-size")
    m.set_input("x", data)
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), ref)
    return m


def _fused(mod):
    fused = relay.transform.FuseOps()(relay.qnn.transform.CanonicalizeOps()(mod))
    return fused.module


def test_qnn_fuse_pad_keeps_the_meaning_and_moves_every_zero_point_pad():
    mod = _fused(_block(width=9))
    before = str(mod)
    assert before.count("func.func private @fused_nn_pad(") == 1 and before.count("func.func private @fused_nn_pad_1(") == 1
    check_semantics(QnnFusePadPass(), mod, trials=2, rtol=0, atol=0)
    assert qnn_fuse_pad(mod.clone()) == 2
    after = mod.clone()
    QnnFusePadPass().apply(make_context(), after)  # through the pass, as relay-opt runs it
    text = str(after)
    assert "@fused_nn_pad(" not in text and "@fused_nn_pad_1(" not in text
    assert text.count("func.func private @fused_nn_pad_nn_conv2d") == 2


@pytest.mark.usefixtures("int8_library")
@pytest.mark.parametrize("ort", [True, False])
def test_the_kernels_read_through_the_pad_and_requantize_in_the_product(ort):
    mod = _block(ort)
    data = RNG.integers(0, 256, (1, 4, 5, 1030)).astype("uint8")
    m = _built_like_the_reference(mod, data)
    steps = [(name, [label for label, _, _ in c.thunks]) for name, _, c in m.executor.steps if name != "memory.copy"]
    # three steps, the pads inside the convolutions' functions, each step one kernel: no pad
    # made, no int32 accumulator, no requantize pass of its own
    assert [n.split("_conv2d")[0] for n, _ in steps] == ["fused_nn_pad_nn", "fused_nn_pad_nn", "fused_nn"]
    assert all(set(labels) == {"nn.conv2d"} for _, labels in steps), steps
    # what the kernels allocated at compile time: the packed weights and the per-channel
    # constants, never an activation-sized buffer
    assert m.executor.scratch_bytes < 2048, m.executor.scratch_bytes
    # the 3x3 convolution's channels-last copy and row tiles are its planned workspace
    program = str(m.program)
    need = fast_int8.conv_workspace_bytes(4, 5, 1030, 3, 3, 5, 1030, False)
    assert f"size = {need}, alignment = 64, kind = \"workspace\"" in program


@pytest.mark.usefixtures("int8_library")
def test_an_int8_run_allocates_nothing():
    m = xrelay.build(_block(width=40).clone(), {}, opt_level=3, plan="greedy-by-size")
    m.set_input("x", RNG.integers(0, 256, (1, 4, 5, 40)).astype("uint8"))
    m.run()
    tracemalloc.start()
    try:
        m.executor.run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4096, peak
    pools = [op for op in m.program.ops if op.name == "memory.pool"]
    assert m.arena_bytes == sum(p.size.value.data for p in pools)


def test_a_pad_the_kernel_cannot_read_through_is_made():
    # int8 data (not uint8): the float32 path pads with zeros only, so the pad is made first
    x = relay.var("x", shape=(1, 4, 6, 6), dtype="int8")
    w = relay.const(RNG.integers(-127, 128, (8, 4, 3, 3)).astype("int8"))
    y = relay.qnn.op.conv2d(x, w, relay.const(3), relay.const(0), relay.const(0.5), relay.const(0.5),
                            kernel_size=(3, 3), channels=8, padding=(1, 1))  # fmt: skip
    mod = xrelay.IRModule.from_expr(y)
    data = RNG.integers(-128, 128, (1, 4, 6, 6)).astype("int8")
    m = _built_like_the_reference(mod, data)
    (labels,) = [[label for label, _, _ in c.thunks] for n, _, c in m.executor.steps if "conv2d" in n]
    assert labels[0] == "nn.pad"


@pytest.mark.usefixtures("int8_library")
def test_quantized_mobilenet_arena_is_about_a_quarter_of_float32():
    f32 = om.mobilenet_v2(image=64, width=0.5, num_classes=10)
    model = qm.quantize(f32, qm.calibration_inputs(f32, 2))
    f32_arena = qm.build(f32).arena_bytes
    m = qm.build(model, integer=True)
    assert m.arena_bytes / f32_arena < 0.3, (m.arena_bytes, f32_arena)
    feed = qm.calibration_inputs(f32, 1, seed=3)[0]
    ref, out = qm.compare(model, feed, m)
    np.testing.assert_array_equal(out.numpy(), ref)


@pytest.mark.usefixtures("int8_library")
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("ort", [True, False])
@pytest.mark.parametrize("out_dtype", ["uint8", "int8"])
def test_a_uint8_dense_runs_the_vnni_product_requantized_in_it(per_channel, ort, out_dtype):
    x = relay.var("x", shape=(2, 5, 36), dtype="uint8")
    w = relay.const(RNG.integers(-127, 128, (20, 36)).astype("int8"))  # 20 units: a partial block
    scale = RNG.uniform(0.001, 0.02, 20).astype("float32") if per_channel else np.float32(0.01)
    fx = relay.qnn.op.dequantize(x, relay.const(0.05), relay.const(9))
    fw = relay.qnn.op.dequantize(w, relay.const(scale), relay.const(0), axis=0)
    y = relay.add(relay.nn.dense(fx, fw), relay.const(RNG.standard_normal(20).astype("float32")))
    y = relay.qnn.op.quantize(y, relay.const(0.07), relay.const(3 if out_dtype == "uint8" else -2), out_dtype=out_dtype)
    mod = _int8_module(y, ort)
    assert "qnn.dense" in mod.mlir_text()
    data = RNG.integers(0, 256, (2, 5, 36)).astype("uint8")
    m = _built_like_the_reference(mod, data)
    (labels,) = [[label for label, _, _ in c.thunks] for n, _, c in m.executor.steps if "dense" in n]
    assert labels == ["nn.dense"]


def _residual(ort=True):
    """Two quantized convolutions of one input joined by a quantized add (a ResNet block with
    its downsampling branch, QLinearAdd as onnxruntime computes it)."""
    x = relay.var("x", shape=(1, 4, 6, 6), dtype="uint8")
    a = _qconv(x, 4, 8, 3)
    b = _qconv(x, 4, 8, 1, pad=0)
    s = relay.add(relay.qnn.op.dequantize(a, relay.const(0.1), relay.const(5)), relay.qnn.op.dequantize(b, relay.const(0.1), relay.const(5)))
    return _int8_module(relay.qnn.op.quantize(s, relay.const(0.2), relay.const(4), out_dtype="uint8"), ort)


def test_qnn_narrow_edges_keeps_the_meaning_and_passes_the_uint8_value():
    mod = _fused(_residual())

    def edges(m):
        return sorted({str(r.type.element_type) for op in m.walk() if op.name == "func.call" for r in op.results})

    assert edges(mod) == ["f64", "i32", "ui8"]  # the downsampling branch passes float64
    check_semantics(QnnNarrowEdgesPass(), mod, trials=2, rtol=0, atol=0)
    assert qnn_narrow_edges(mod.clone()) == 1
    after = mod.clone()
    QnnNarrowEdgesPass().apply(make_context(), after)  # through the pass, as relay-opt runs it
    assert edges(after) == ["i32", "ui8"]


@pytest.mark.usefixtures("int8_library")
def test_a_residual_block_passes_8_bit_values_in_the_arena():
    mod = _residual()
    data = RNG.integers(0, 256, (1, 4, 6, 6)).astype("uint8")
    m = _built_like_the_reference(mod, data)
    invokes = [op for op in m.program.walk() if op.name == "memory.invoke"]
    assert all("f64" not in str(v.type) for op in invokes for v in op.outs), [str(op) for op in invokes]


@pytest.mark.usefixtures("int8_library")
def test_a_strided_1x1_convolution_plans_only_the_rows_it_reads():
    # ResNet's downsampling branch: a 1x1 stride-2 convolution reads every other row and column,
    # so its workspace is the rows of those pixels (a quarter of the image), not a channels-last
    # copy of the whole image and row tiles; the arena's peak was this step's (ResNet-50 int8)
    x = relay.var("x", shape=(1, 24, 9, 11), dtype="uint8")
    mod = _int8_module(_qconv(x, 24, 32, 1, stride=2, pad=0))
    data = RNG.integers(0, 256, (1, 24, 9, 11)).astype("uint8")
    m = _built_like_the_reference(mod, data)
    need = fast_int8.conv_workspace_bytes(24, 9, 11, 1, 1, 5, 6, True)  # 5 x 6 rows of 24 bytes, on cache lines
    assert need == 768 < fast_int8.conv_workspace_bytes(24, 9, 11, 1, 1, 5, 6, False)
    workspaces = [op for op in m.program.walk() if op.name == "memory.alloc_storage" and "workspace" in str(op)]
    assert [op.size.value.data for op in workspaces] == [need], [str(op) for op in workspaces]
    (labels,) = [[label for label, _, _ in c.thunks] for n, _, c in m.executor.steps if "conv2d" in n]
    assert labels == ["nn.conv2d", "nn.conv2d"]  # the rows, then their product (no tiles)


@pytest.mark.usefixtures("int8_library")
@pytest.mark.parametrize("size", [8, 7])
def test_a_1x1_convolution_reads_the_nchw_planes_without_a_workspace(size):
    # 8x8: 64 pixels, whole registers of 16: with VBMI the product reads the planes and writes
    # the planes (no rows, no workspace); 7x7 (49 pixels in 64 lanes) keeps the rows
    x = relay.var("x", shape=(1, 22, size, size), dtype="uint8")  # 22 channels: a partial group of 4
    mod = _int8_module(_qconv(x, 22, 20, 1, pad=0))  # 20 output channels: a partial block of 16
    data = RNG.integers(0, 256, (1, 22, size, size)).astype("uint8")
    m = _built_like_the_reference(mod, data)
    planes = size == 8 and bool(fast_int8.vnni_library().xr_int8_has_vbmi())
    workspaces = [op for op in m.program.walk() if op.name == "memory.alloc_storage" and "workspace" in str(op)]
    rows = fast_int8.conv_workspace_bytes(22, size, size, 1, 1, size, size, True)
    assert [op.size.value.data for op in workspaces] == ([] if planes else [rows]), [str(op) for op in workspaces]
    (labels,) = [[label for label, _, _ in c.thunks] for n, _, c in m.executor.steps if "conv2d" in n]
    assert labels == (["nn.conv2d"] if planes else ["nn.conv2d", "nn.conv2d"])  # (the rows, then the product)


@pytest.mark.usefixtures("int8_library")
@pytest.mark.parametrize("per_channel", [False, True])
def test_consecutive_native_jobs_run_as_one_chain_with_onnxruntimes_bits(per_channel):
    # A MobileNetV2 quantized by onnxruntime (QDQ): on two threads, run's program joins each
    # run of consecutive native jobs (1x1 planes, depthwise, QLinearAdd, ...) into one C call
    # (runtime/native/steps.py join_steps); each job still ends before the next starts, so the
    # outputs are onnxruntime's, run after run, and the same as the jobs called one by one
    from xrelay.frontends.onnx import from_onnx
    from xrelay.transforms.fake_quantization_to_integer import FakeQuantizationToIntegerPass

    f32 = om.mobilenet_v2(image=40, num_classes=10, width=0.5)
    q = qm.quantize(f32, qm.calibration_inputs(f32, 2), per_channel=per_channel)
    mod, params = from_onnx(q, freeze_params=True)
    FakeQuantizationToIntegerPass(onnxruntime=True).apply(None, mod.module)  # (qm.build(integer=True)'s)
    m = xrelay.build(mod, params, opt_level=3, plan="greedy-by-size", threads=2)
    ex = m.executor
    chained = [t for t in ex._thunks if not hasattr(t, "native_job") and getattr(t, "__name__", "") == "run"]
    plain = [t for _, _, c in ex.steps for _, _, t in c.thunks]
    jobs = [t for t in plain if hasattr(t, "native_job")]
    assert len(ex._thunks) < len(plain) and len(jobs) >= 20, (len(ex._thunks), len(plain), len(jobs))
    assert chained
    before = ex.pool.stats["native"]
    outs = []
    for i, feed in enumerate(qm.calibration_inputs(f32, 4, seed=9)):
        ref = om.run_onnxruntime(q, feed)[0]
        m.set_input(**feed)
        ex.chooser.choose = lambda: 0  # (every run on both threads)
        m.run()
        out = m.get_output(0).numpy()
        assert np.all(np.isfinite(out)) and np.array_equal(out, ref), (i, np.abs(out - ref).max())
        outs.append(out)
    assert ex.pool.stats["native"] - before >= 4 * len(jobs)
    assert not all(np.array_equal(outs[0], o) for o in outs[1:])  # (the output follows the input)
    ex._thunks = plain  # the same jobs one by one: the same bits
    m.run()
    assert np.array_equal(m.get_output(0).numpy(), outs[-1])
