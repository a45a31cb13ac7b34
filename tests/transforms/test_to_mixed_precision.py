"""to-mixed-precision: meaning kept within float16's precision, bfloat16's structure, options
and errors, and ``xrelay.build(..., mixed_precision=...)``."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.backend.build import BuildError
from xrelay.relay.transform import ToMixedPrecision, mixed_precision
from xrelay.testing import mobilenet, resnet
from xrelay.testing.semantics import check_semantics
from xrelay.transforms.to_mixed_precision import ToMixedPrecisionError


def _dtypes(mod, name):
    """Result dtypes of every relay op called ``name``."""
    return [str(op.results[0].type.element_type) for op in mod.module.walk() if op.name == f"relay.{name}"]


@pytest.mark.parametrize("workload", ["resnet", "mobilenet"])
def test_float16_keeps_the_meaning_within_float16_precision(workload):
    if workload == "resnet":
        mod, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 32, 32), num_classes=10)
    else:
        mod, params = mobilenet.get_workload(batch_size=1, image_shape=(3, 32, 32), num_classes=10)
    before, after = check_semantics(ToMixedPrecision("float16"), mod, params=params, rtol=2e-2, atol=2e-3)
    assert after[0].dtype == np.float32  # softmax is never float16
    amp = ToMixedPrecision("float16")(mod.clone())
    assert set(_dtypes(amp, "nn.conv2d")) == {"f16"}
    assert _dtypes(amp, "nn.softmax") == ["f32"]
    if workload == "resnet":  # (MobileNet's initial weights give every class 0.1)
        # the output is not float32's: the check above can fail on a wrong conversion
        assert not np.array_equal(before[0], after[0])


def test_bfloat16_structure_on_resnet():
    # the numpy kernels have no bfloat16, so bfloat16 is checked by structure
    mod, _ = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 32, 32), num_classes=10)
    amp = ToMixedPrecision("bfloat16")(mod.clone())
    assert set(_dtypes(amp, "nn.conv2d")) == {"bf16"} and set(_dtypes(amp, "nn.dense")) == {"bf16"}
    assert set(_dtypes(amp, "nn.relu")) == {"bf16"} and set(_dtypes(amp, "add")) == {"bf16"}
    assert _dtypes(amp, "nn.global_avg_pool2d") == ["f32"] and _dtypes(amp, "nn.softmax") == ["f32"]
    casts = [op for op in amp.module.walk() if op.name == "relay.cast"]
    # each parameter is cast once, and two values come back to float32 (pool, softmax input)
    params = amp.module.ops.first.body.block.args
    assert sorted(str(c.attrs["dtype"]) for c in casts).count("float32") == 2
    assert len([c for c in casts if c.operands[0] in params]) == len(params)


def test_keep_orig_output_dtype_config():
    x = relay.var("x", shape=(2, 8))
    w = relay.var("w", shape=(4, 8))
    mod = xrelay.IRModule.from_expr(relay.nn.relu(relay.nn.dense(x, w)))
    assert ToMixedPrecision()(mod.clone())["main"].checked_type.ret_type == relay.TensorType((2, 4), "float16")
    with relay.transform.PassContext(config={"relay.ToMixedPrecision.keep_orig_output_dtype": True}):
        kept = ToMixedPrecision()(mod.clone())
        check_semantics(ToMixedPrecision(), mod, rtol=1e-2, atol=1e-2)
    assert kept["main"].checked_type.ret_type == relay.TensorType((2, 4), "float32")


def test_registered_conversion_accumulates_in_float32():
    # Relay's FTVMMixedPrecisionConversionType: [category, accumulation dtype, output dtype]
    x = relay.var("x", shape=(2, 8))
    w = relay.var("w", shape=(4, 8))
    mod = xrelay.IRModule.from_expr(relay.nn.dense(x, w))
    old = mixed_precision._CONVERSIONS["nn.dense"]
    try:

        @relay.op.register_mixed_precision_conversion("nn.dense", level=11)
        def dense_fp32_acc(call, mixed):
            return [mixed_precision.MIXED_PRECISION_ALWAYS, "float32", mixed]

        amp = ToMixedPrecision()(mod.clone())
    finally:
        relay.op.register_mixed_precision_conversion("nn.dense", old)
    (dense,) = [op for op in amp.module.walk() if op.name == "relay.nn.dense"]
    assert dense.attrs["out_dtype"] == "float32" and str(dense.operands[0].type.element_type) == "f16"
    assert str(dense.results[0].type.element_type) == "f32"
    (use,) = [u.operation for u in dense.results[0].uses]
    assert use.name == "relay.cast" and use.attrs["dtype"] == "float16"
    assert amp["main"].checked_type.ret_type == relay.TensorType((2, 4), "float16")


def test_missing_ops_warn_or_fail(caplog):
    x = relay.var("x", shape=(3,))
    mod = xrelay.IRModule.from_expr(relay.negative(relay.abs(x)))
    with caplog.at_level("WARNING"):
        ToMixedPrecision("float16")(mod.clone())
    assert 'Op "abs" not registered FTVMMixedPrecisionConversionType appears 1 times in graph.' in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING"):
        ToMixedPrecision("float16", 2)(mod.clone())
    assert caplog.text == ""
    with pytest.raises(ToMixedPrecisionError, match="missing ops were found .*: abs, negative"):
        ToMixedPrecision("float16", 0)(mod.clone())
    with pytest.raises(ToMixedPrecisionError, match="got 'int8'"):
        ToMixedPrecision("int8")(mod.clone())
    with pytest.raises(ToMixedPrecisionError, match="missing_op_mode must be 0, 1 or 2, got 3"):
        ToMixedPrecision("float16", 3)(mod.clone())


def test_relay_opt_bad_type_is_one_message(tmp_path):
    src = tmp_path / "m.mlir"
    src.write_text(
        "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %0 = relay.nn.relu %x : (tensor<2xf32>) -> tensor<2xf32>\n"
        "  func.return %0 : tensor<2xf32>\n}\n"
    )
    r = subprocess.run(
        [sys.executable, "-m", "xrelay.tools.relay_opt", str(src), "-p", "to-mixed-precision{mixed-precision-type=float8}"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1
    assert "only IEEE floating point types and bfloat16 are supported, got 'float8'" in r.stderr
    assert "Traceback" not in r.stderr


def test_build_with_mixed_precision_runs_close_to_float32():
    mod, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 32, 32), num_classes=10)
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype("float32")
    outs = []
    for mp in (None, "float16"):
        m = xrelay.build(mod, params, mixed_precision=mp)
        m.set_input("data", x)
        m.run()
        outs.append(m.get_output(0).numpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=2e-2, atol=2e-3)
    assert not np.array_equal(outs[0], outs[1])
    with pytest.raises(BuildError, match="only IEEE floating point types"):
        xrelay.build(mod, params, mixed_precision="int8")
    with pytest.raises(BuildError, match="not supported by the C target"):
        xrelay.build(mod, params, target="c", mixed_precision="float16")


@pytest.mark.parametrize("mp", ["bfloat16", "float16"])
def test_build_warns_where_the_cpu_has_no_arithmetic_in_the_type(monkeypatch, mp):
    """A 16-bit type the host CPU has no arithmetic for makes the model slower than float32
    (every kernel converts each value): ``build`` says so; where the CPU has it, or where its
    flags cannot be read, it builds without a word."""
    from xrelay.backend import build as build_module
    from xrelay.backend.build import MixedPrecisionWarning

    x = relay.var("x", shape=(1, 8))
    mod = xrelay.IRModule.from_expr(relay.Function([x], relay.nn.dense(x, relay.const(np.ones((4, 8), "float32")))))
    monkeypatch.setattr(build_module, "native_float_types", lambda: ())
    with pytest.warns(MixedPrecisionWarning, match=f"no {mp} arithmetic"):
        xrelay.build(mod, None, mixed_precision=mp)
    for native in ((mp,), None):
        monkeypatch.setattr(build_module, "native_float_types", lambda native=native: native)
        with warnings.catch_warnings():
            warnings.simplefilter("error", MixedPrecisionWarning)
            xrelay.build(mod, None, mixed_precision=mp)
    with warnings.catch_warnings():  # float32 asks for nothing the CPU lacks
        warnings.simplefilter("error", MixedPrecisionWarning)
        monkeypatch.setattr(build_module, "native_float_types", lambda: ())
        xrelay.build(mod, None)


def test_native_float_types_reads_the_cpu_flags(monkeypatch):
    from xrelay.backend import target

    monkeypatch.setattr(target, "host_cpu_flags", lambda: frozenset({"avx2", "avx512_bf16"}))
    assert target.native_float_types() == ("bfloat16",)
    monkeypatch.setattr(target, "host_cpu_flags", lambda: frozenset({"amx_fp16", "amx_bf16"}))
    assert target.native_float_types() == ("bfloat16", "float16")
    monkeypatch.setattr(target, "host_cpu_flags", lambda: frozenset({"avx2", "fma"}))
    assert target.native_float_types() == ()
    monkeypatch.setattr(target, "host_cpu_flags", frozenset)
    assert target.native_float_types() is None
