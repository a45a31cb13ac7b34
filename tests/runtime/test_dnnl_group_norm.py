"""GroupNorm with one group as torch exports it (Reshape to (N, 1, K), InstanceNormalization,
Reshape back, a per-channel Mul and Add) between channels-last convolutions and pools runs
on the NHWC data (``dnnl_partition.one_group_norm_channels_last``): no layout transform
around it; with more groups, or a constant that varies along another axis than the
channels, it stays NCHW between two transforms. onnxruntime's results either way."""

from __future__ import annotations

import numpy as np
import pytest

from xrelay.testing.onnx_models import GraphBuilder, build_and_run

RNG = np.random.default_rng(0)
C, HW = 16, 12


def _poolformer_block(groups: int, gamma_shape: tuple[int, ...]):
    """A 1x1 convolution, GroupNorm(``groups``) as exported (its scale of ``gamma_shape``),
    PoolFormer's token mixer (3x3 average pool minus its input, count_include_pad=0) and a
    residual add, GroupNorm again, a 1x1 convolution."""
    g = GraphBuilder(7)

    def conv(x):
        w = g.init(g.name("w"), (RNG.standard_normal((C, C, 1, 1)) * 0.3).astype("float32"))
        return g.node(
            "Conv", [x, w, g.init(g.name("b"), (RNG.standard_normal(C) * 0.1).astype("float32"))]
        )

    def norm(x):
        r = g.node("Reshape", [x, g.const(np.array([1, groups, -1], np.int64))])
        ones, zeros = np.ones(groups, np.float32), np.zeros(groups, np.float32)
        n = g.node("InstanceNormalization", [r, g.const(ones), g.const(zeros)], epsilon=1e-5)
        n = g.node("Reshape", [n, g.node("Shape", [x])])
        gamma = g.init(
            g.name("gamma"), (1 + RNG.standard_normal(gamma_shape) * 0.2).astype("float32")
        )
        beta = g.init(g.name("beta"), (RNG.standard_normal((C, 1, 1)) * 0.2).astype("float32"))
        return g.node("Add", [g.node("Mul", [n, gamma]), beta])

    x = conv("data")
    y = norm(x)
    p = g.node(
        "AveragePool",
        [y],
        kernel_shape=[3, 3],
        strides=[1, 1],
        pads=[1, 1, 1, 1],
        count_include_pad=0,
    )
    out = conv(norm(g.node("Add", [x, g.node("Sub", [p, y])])))
    model = g.model({"data": ([1, C, HW, HW], np.float32)}, [out], "poolformer_block", opset=17)
    return model, {"data": RNG.standard_normal((1, C, HW, HW)).astype("float32")}


@pytest.mark.parametrize(
    ("groups", "gamma_shape", "channels_last"),
    [(1, (C, 1, 1), True), (1, (1, C, 1, 1), True), (2, (C, 1, 1), False), (1, (C, HW, 1), False)],
)
def test_one_group_norm_runs_channels_last(groups, gamma_shape, channels_last):
    model, inputs = _poolformer_block(groups, gamma_shape)
    m, out, ref = build_and_run(model, inputs)
    assert np.all(np.isfinite(out)) and float(np.std(ref)) > 0.1
    assert float(np.max(np.abs(out - ref))) <= 1e-4 * max(1.0, float(np.max(np.abs(ref))))
    ops = [o for _, o, _ in m.executor.steps]
    assert ops.count("nn.instance_norm") == 2, ops
    # the input's transform to NHWC and the output's back; in NCHW two more per norm
    assert ops.count("layout_transform") == (2 if channels_last else 6), ops
    m.set_input(data=inputs["data"] + 1.0)
    m.run()
    assert float(np.max(np.abs(m.get_output(0).numpy() - out))) > 1e-2


@pytest.mark.parametrize(("groups", "channels_last"), [(1, True), (4, False)])
def test_group_norm_op_runs_on_onednn(groups, channels_last):
    """``nn.group_norm`` (torch.export's GroupNorm, ONNX's GroupNormalization) between
    convolutions gets the exported form (``group_norm_as_instance_norm``): a oneDNN
    ``nn.instance_norm``, channels-last with one group; the reference interpreter's results."""
    import xrelay
    from xrelay import relay
    from xrelay.runtime.interpreter import run

    x = relay.var("x", shape=(1, C, HW, HW))
    w1, w2 = (relay.var(n, shape=(C, C, 1, 1)) for n in ("w1", "w2"))
    gamma, beta = relay.var("gamma", shape=(C,)), relay.var("beta", shape=(C,))
    y = relay.nn.conv2d(x, w1, channels=C, kernel_size=(1, 1))
    y = relay.nn.group_norm(y, gamma, beta, num_groups=groups)
    y = relay.nn.conv2d(relay.nn.avg_pool2d(y, pool_size=(3, 3), padding=(1, 1)), w2, channels=C, kernel_size=(1, 1))
    mod = xrelay.IRModule.from_expr(relay.Function([x, w1, w2, gamma, beta], y))
    params = {
        "w1": (RNG.standard_normal((C, C, 1, 1)) * 0.3).astype("float32"),
        "w2": (RNG.standard_normal((C, C, 1, 1)) * 0.3).astype("float32"),
        "gamma": (1 + RNG.standard_normal(C) * 0.2).astype("float32"),
        "beta": (RNG.standard_normal(C) * 0.2).astype("float32"),
    }
    data = RNG.standard_normal((1, C, HW, HW)).astype("float32")
    (ref,) = run(mod.module if hasattr(mod, "module") else mod, {"x": data}, params)
    m = xrelay.build(mod, params, opt_level=3)
    m.set_input(x=data)
    m.run()
    out = m.get_output(0).numpy()
    assert np.all(np.isfinite(out)) and float(np.std(ref)) > 0.1
    assert float(np.max(np.abs(out - ref))) <= 1e-4 * max(1.0, float(np.max(np.abs(ref))))
    ops = [o for _, o, _ in m.executor.steps]
    assert ops.count("nn.instance_norm") == 1 and "nn.group_norm" not in " ".join(ops), ops
    assert ops.count("layout_transform") == (2 if channels_last else 4), ops


@pytest.mark.parametrize("batch", [1, 2])
def test_instance_norm_between_convolutions_runs_on_onednn(batch):
    """InstanceNormalization (a style-transfer network's, with scale and shift) between two
    convolutions: ConvertLayout gives it the convolutions' NHWC data, and it runs on NCHW
    data between two transposes (``instance_norm_channels_first``), a oneDNN step: nothing
    outside the arena (the native engine's numpy norm held temporaries there), onnxruntime's
    values, the output depends on the input."""
    g = GraphBuilder(9)

    def conv(x):
        w = g.init(g.name("w"), (RNG.standard_normal((C, C, 3, 3)) * 0.2).astype("float32"))
        return g.node("Conv", [x, w], pads=[1, 1, 1, 1])

    scale = g.init("scale", (1 + RNG.standard_normal(C) * 0.2).astype("float32"))
    shift = g.init("shift", (RNG.standard_normal(C) * 0.2).astype("float32"))
    n = g.node("InstanceNormalization", [conv("data"), scale, shift], epsilon=1e-5)
    out = conv(g.node("Relu", [n]))
    model = g.model({"data": ([batch, C, HW, HW], np.float32)}, [out], "instance_norm", opset=17)
    inputs = {"data": RNG.standard_normal((batch, C, HW, HW)).astype("float32")}
    m, out, ref = build_and_run(model, inputs)
    assert np.all(np.isfinite(out)) and float(np.std(ref)) > 0.1
    assert float(np.max(np.abs(out - ref))) <= 1e-4 * max(1.0, float(np.max(np.abs(ref))))
    norms = [b for (_, o, _), b in zip(m.executor.steps, m.executor.step_backends) if "instance_norm" in o]
    assert norms == ["dnnl"], [o for _, o, _ in m.executor.steps]
    report = m.executor.outside_arena()
    assert (report.held_bytes, report.run_bytes) == (0, 0), report.steps
    m.set_input(data=inputs["data"] + 1.0)
    m.run()
    assert float(np.max(np.abs(m.get_output(0).numpy() - out))) > 1e-2
