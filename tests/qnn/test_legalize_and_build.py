"""qnn-legalize (Relay's x86 uint8 x int8 rule), the build pipeline on int8 programs, memory."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.testing.semantics import check_semantics

RNG = np.random.default_rng(3)


def c(value, dtype):
    return relay.const(np.asarray(value, dtype=dtype))


def int8_block(n=12, ch=8):
    """quantize -> qnn.conv2d (+ int32 bias) -> requantize (per channel) -> qnn.dense -> dequantize."""
    x = relay.var("x", shape=(1, 3, n, n))
    q = relay.qnn.op.quantize(x, c(0.05, "float32"), c(3, "int32"), out_dtype="int8")
    w = relay.const(RNG.integers(-128, 128, (ch, 3, 3, 3)).astype("int8"))
    acc = relay.qnn.op.conv2d(
        q, w, c(3, "int32"), c(0, "int32"), c(0.05, "float32"), c(RNG.uniform(0.01, 0.02, ch), "float32"),
        kernel_size=(3, 3), channels=ch, padding=(1, 1),
    )  # fmt: skip
    acc = relay.add(acc, relay.const(RNG.integers(-100, 100, (ch, 1, 1)).astype("int32")))
    r = relay.qnn.op.requantize(
        acc, c(RNG.uniform(5e-4, 1e-3, ch), "float32"), c(0, "int32"), c(0.1, "float32"), c(-2, "int32"),
        axis=1, out_dtype="int8",
    )  # fmt: skip
    flat = relay.nn.batch_flatten(relay.clip(r, -2.0, 127.0))
    wd = relay.const(RNG.integers(0, 256, (10, ch * n * n)).astype("uint8"))
    d = relay.qnn.op.dense(flat, wd, c(-2, "int32"), c(128, "int32"), c(0.1, "float32"), c(0.003, "float32"), units=10)
    y = relay.qnn.op.dequantize(d, c(3e-4, "float32"), c(0, "int32"))
    return xrelay.IRModule.from_expr(y)


def test_qnn_legalize_fast_int8_makes_uint8_int8_and_keeps_the_meaning():
    mod = int8_block()
    check_semantics("qnn-legalize{fast-int8=true}", mod, rtol=0, atol=0)
    legal = relay.transform.PassContext()  # noqa: F841 - the pass is callable directly too
    out = xrelay.relay.qnn.transform.Legalize()(mod.clone())
    assert "ui8" not in out.mlir_text().split("qnn.conv2d")[1].split("->")[0]  # off by default: unchanged
    from xrelay.transforms.qnn_legalize import QnnLegalizePass

    fast = mod.clone()
    QnnLegalizePass(fast_int8=True).apply(None, fast.module)
    convs = [op for op in fast.module.walk() if op.name in ("qnn.conv2d", "qnn.dense")]
    assert [str(op.operands[0].type.element_type) for op in convs] == ["ui8", "ui8"]
    assert [str(op.operands[1].type.element_type) for op in convs] == ["i8", "i8"]


@pytest.mark.no_change("qnn-legalize", "a build and run test: the identity legalization is lowered by the build's own qnn canonicalization")
def test_build_lowers_qnn_before_fusion_and_runs_bit_exact():
    mod = int8_block()
    data = {"x": RNG.normal(size=(1, 3, 12, 12)).astype("float32")}
    ref = xrelay.run(mod, data)[0]
    with relay.transform.PassContext(opt_level=3):
        fused = relay.transform.build_pipeline(3)(mod.clone())
    text = fused.mlir_text()
    assert "qnn." not in text
    # the requantize epilogue fuses into the convolution, as in Relay
    assert "fused_nn_conv2d_subtract_add_fixed_point_multiply_per_axis_add_clip_cast" in text
    m = xrelay.build(mod.clone(), {}, opt_level=3, plan="greedy-by-size")
    m.set_input("x", data["x"])
    m.run()
    np.testing.assert_array_equal(m.get_output(0), ref)


@pytest.mark.no_change("qnn-legalize", "a build and run test: the identity legalization is lowered by the build's own qnn canonicalization")
def test_int8_programs_plan_and_annotate_memory():
    mod = int8_block()
    with relay.transform.PassContext(opt_level=3):
        fused = relay.transform.build_pipeline(3)(mod.clone())
    fused = relay.transform.AnnotateUsedMemory()(fused)
    text = fused.mlir_text()
    # the int8 activation (1x8x12x12 = 1152 bytes) is what lives across the dense's call
    assert "relay.io_used_memory" in text and "relay.used_memory" in text
    for algorithm in ("greedy-by-size", "optimal"):
        m = xrelay.build(mod.clone(), {}, opt_level=3, plan=algorithm)
        m.set_input("x", RNG.normal(size=(1, 3, 12, 12)).astype("float32"))
        m.run()
        assert m.arena_bytes < 1 * 3 * 12 * 12 * 4 + 8 * 14 * 14 * 4 + 1152 * 4
