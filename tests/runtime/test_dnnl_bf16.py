"""``xrelay.build(..., mixed_precision="bfloat16")`` on oneDNN: bf16 convolutions and dense as
oneDNN primitives (weights reordered once to bf16), bf16 activations in an arena planned for
2-byte elements, float32 where Relay's lists say NEVER (softmax)."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.runtime.dnnl.library import dnnl_library
from xrelay.testing import platform

RNG = np.random.default_rng(1)

pytestmark = pytest.mark.skipif(dnnl_library() is None, reason="needs the onednn-cpu-gomp package")


def _const(*shape):
    return relay.const(RNG.standard_normal(shape).astype("float32") * 0.2)


def _net():
    """conv+bias+relu, max pool, conv+bias+residual+relu, a bare conv, pool, dense, softmax."""
    x = relay.var("x", shape=(1, 8, 16, 16))
    conv = lambda d, c, w: relay.nn.conv2d(d, w, padding=(1, 1), channels=c, kernel_size=(3, 3))  # noqa: E731
    h = relay.nn.relu(relay.add(conv(x, 16, _const(16, 8, 3, 3)), _const(16, 1, 1)))
    h = relay.nn.max_pool2d(h, pool_size=(2, 2), strides=(2, 2))
    r = relay.nn.relu(relay.add(relay.add(conv(h, 16, _const(16, 16, 3, 3)), _const(16, 1, 1)), h))
    r = conv(r, 16, _const(16, 16, 3, 3))
    g = relay.nn.batch_flatten(relay.nn.global_avg_pool2d(r))
    y = relay.nn.softmax(relay.add(relay.nn.dense(g, _const(10, 16)), _const(10)))
    return relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function([x], y)))


def _run(m, x):
    m.set_input("x", x)
    m.run()
    return m.get_output(0).numpy()


def _dnnl_plans(m):
    """The oneDNN functions' plans, reorders (layout transforms, casts) left out."""
    plans = [c.dnnl_plan for _, _, c in m.executor.steps if hasattr(c, "dnnl_plan")]
    return [p for p in plans if any(s.family != "copy" for s in p.steps)]


def test_bf16_build_runs_on_onednn_and_matches_float32():
    mod = _net()
    m32 = xrelay.build(mod, None)
    mbf = xrelay.build(mod, None, mixed_precision="bfloat16")
    plans = _dnnl_plans(mbf)
    names = [s.name for p in plans for s in p.steps]
    native = [o for (_, o, _), b in zip(mbf.executor.steps, mbf.executor.step_backends) if b == "native"]
    if not platform.avx512():
        # oneDNN (3.2) makes no bfloat16 primitive without AVX-512: every step falls back to
        # the native bf16 kernels (which the comparison below then checks)
        assert not any("conv2d" in n or "dense" in n for n in names), names
        assert any("conv2d" in o for o in native) and any("dense" in o for o in native), native
    else:
        assert [n for n in names if "conv2d" in n or "dense" in n] == [
            "dnnl.conv2d_bias_relu(nn.conv2d+add+nn.relu)",
            "dnnl.conv2d_bias_sum_relu(nn.conv2d+add+add+nn.relu)",
            "nn.conv2d",
            "dnnl.dense_bias(nn.dense+add)",
        ]
        # the weights were reordered once, from bfloat16 constants
        for p in plans:
            for step in p.steps:
                for _, stored, _, _ in step.weights:
                    assert stored.dtype == ml_dtypes.bfloat16
        # the casts and layout transforms at the edges are oneDNN reorders: only the input copy,
        # the flatten (between a cast and dense) and the float32 softmax's neighbours stay native
        assert not any("cast" in o or "layout_transform" in o for o in native), native
    # softmax is NEVER: it computes and returns float32
    assert mbf.get_output(0).numpy().dtype == np.float32
    for _ in range(3):
        x = RNG.standard_normal((1, 8, 16, 16)).astype("float32")
        a, b = _run(m32, x), _run(mbf, x)
        assert a.argmax() == b.argmax()
        # bf16 keeps 8 significant bits: a few ulps (2^-8) after five layers
        np.testing.assert_allclose(b, a, rtol=5e-2, atol=2e-3)
        assert np.abs(b - a).max() > 0  # it did compute in bf16


def test_bf16_onednn_agrees_with_the_native_bf16_kernels():
    """The native kernels (bf16 computed in float32, rounded at each op's output) and oneDNN's
    bf16 primitives (float32 accumulation, bf16 output) differ by rounding only."""
    mod = _net()
    mbf = xrelay.build(mod, None, mixed_precision="bfloat16")
    nat = xrelay.build(mod, None, mixed_precision="bfloat16", backends=("native",))
    assert "dnnl" not in nat.executor.step_backends
    x = RNG.standard_normal((1, 8, 16, 16)).astype("float32")
    np.testing.assert_allclose(_run(mbf, x), _run(nat, x), rtol=5e-2, atol=2e-3)


def test_bf16_plan_sizes_are_two_bytes_per_element():
    from xrelay.dialects.relay import dtype_of, shape_of

    mbf = xrelay.build(_net(), None, mixed_precision="bfloat16")
    m32 = xrelay.build(_net(), None)
    text = str(mbf.program)
    assert "xbf16>" in text
    seen = 0
    for op in mbf.program.walk():
        if op.name != "memory.alloc_tensor":
            continue
        storage = op.operands[0].owner
        ty = op.results[0].type
        if dtype_of(ty) != "bfloat16" or storage.name != "memory.alloc_storage":
            continue
        assert storage.size.value.data == 2 * math.prod(shape_of(ty)), ty
        seen += 1
    assert seen >= 5
    # (smaller than float32's where oneDNN runs the bf16 steps; the native fallback without
    # AVX-512 keeps float32 layout transforms and casts between its steps)
    assert mbf.arena_bytes < m32.arena_bytes or not platform.avx512()
    pools = [op for op in mbf.program.ops if op.name == "memory.pool"]
    assert mbf.arena_bytes == sum(p.size.value.data for p in pools)


def test_bare_convolution_and_dense_run_on_onednn_in_float32():
    """A convolution or dense without a bias or epilogue (pre-activation ResNets' convolutions)
    is offloaded alone and runs as a primitive without post-ops."""
    x = relay.var("x", shape=(1, 8, 10, 10))
    h = relay.nn.conv2d(x, _const(8, 8, 3, 3), padding=(1, 1), channels=8, kernel_size=(3, 3))
    y = relay.nn.dense(relay.nn.batch_flatten(h), _const(6, 800))
    mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function([x], y)))
    m = xrelay.build(mod, None)
    n = xrelay.build(mod, None, backends=("native",))
    assert [s.name for p in _dnnl_plans(m) for s in p.steps] == ["nn.conv2d", "nn.dense"]
    xv = RNG.standard_normal((1, 8, 10, 10)).astype("float32")
    np.testing.assert_allclose(_run(m, xv), _run(n, xv), rtol=1e-4, atol=1e-4)
