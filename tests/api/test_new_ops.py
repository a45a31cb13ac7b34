"""The Python API of the 1-D/3-D convolutions and pools, upsampling, resize2d, group/instance/L2
norms, repeat, gather_nd, ndarray_size, reverse_reshape and shifts: TVM's typed type-inference
cases (test_op_level2/3/5; symbolic batch sizes as ``relay.Any()``), signatures with tvm.relay's
defaults, and a module of all of them run by the interpreter against the kernels."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.dialects.relay import RelayTypeError
from xrelay.kernels import KERNELS
from xrelay.runtime.interpreter import RunError

n = relay.Any()


def typed(expr):
    return expr.checked_type


def test_conv1d_infer_type():
    x = relay.var("x", relay.TensorType((n, 10, 224), "int8"))
    w = relay.var("w", relay.TensorType((2, 10, 3), "int8"))
    assert typed(relay.nn.conv1d(x, w, out_dtype="int32")) == relay.TensorType((n, 2, 222), "int32")
    x = relay.var("x", relay.TensorType((n, 10, 224), "uint8"))
    assert typed(relay.nn.conv1d(x, w, out_dtype="int32")) == relay.TensorType((n, 2, 222), "int32")
    x = relay.var("x", relay.TensorType((4, 224, 32), "int8"))
    w = relay.var("w", relay.TensorType((3, 32, 16), "int8"))
    y = relay.nn.conv1d(x, w, kernel_size=3, padding=(1, 1), channels=16, data_layout="NWC", kernel_layout="WIO", out_dtype="int32")
    assert typed(y) == relay.TensorType((4, 224, 16), "int32")


def test_conv3d_infer_type():
    x = relay.var("x", relay.TensorType((n, 10, 224, 224, 224), "int8"))
    w = relay.var("w", relay.TensorType((2, 10, 3, 3, 3), "int8"))
    assert typed(relay.nn.conv3d(x, w, out_dtype="int32")) == relay.TensorType((n, 2, 222, 222, 222), "int32")
    x = relay.var("x", relay.TensorType((4, 224, 224, 224, 32), "int8"))
    w = relay.var("w", relay.TensorType((3, 3, 3, 32, 16), "int8"))
    y = relay.nn.conv3d(
        x, w, kernel_size=(3, 3, 3), padding=(1, 1, 1), channels=16, data_layout="NDHWC",
        kernel_layout="DHWIO", out_dtype="int32",
    )  # fmt: skip
    assert typed(y) == relay.TensorType((4, 224, 224, 224, 16), "int32")
    x = relay.var("x", relay.TensorType((1, 16, 224, 224, 224), "float32"))
    w = relay.var("w", relay.TensorType((4, 4, 1, 1, 1), "float32"))
    y = relay.nn.conv3d(x, w, groups=4, kernel_size=(1, 1, 1), channels=4)
    assert typed(y) == relay.TensorType((1, 4, 224, 224, 224), "float32")


def test_pool3d_and_upsampling_infer_type():
    x = relay.var("x", relay.TensorType((n, 10, 5, 5, 5), "float32"))
    assert typed(relay.nn.max_pool3d(x, pool_size=(2, 2, 2), strides=(2, 2, 2), padding=(0, 0, 0, 0, 0, 0))) == relay.TensorType((n, 10, 2, 2, 2), "float32")
    assert typed(relay.nn.avg_pool3d(x, pool_size=(3, 3, 3), padding=(1, 1, 1), ceil_mode=True, strides=2)) == relay.TensorType((n, 10, 3, 3, 3), "float32")
    assert typed(relay.nn.adaptive_avg_pool3d(x, output_size=(1, 2, 3))) == relay.TensorType((n, 10, 1, 2, 3), "float32")
    assert typed(relay.nn.adaptive_max_pool3d(x)) == relay.TensorType((n, 10, 5, 5, 5), "float32")
    x = relay.var("x", relay.TensorType((n, 3, 100, 200), "float32"))
    y = relay.nn.upsampling(x, scale_h=2, scale_w=2, layout="NCHW", method="bilinear")
    assert typed(y) == relay.TensorType((n, 3, 200, 400), "float32")


def test_resize2d_infer_type():
    x = relay.var("x", relay.TensorType((n, 4, 16, 32), "int8"))
    assert typed(relay.image.resize2d(x, (100, 200), None, "NCHW", "linear", "align_corners")) == relay.TensorType((n, 4, 100, 200), "int8")
    x = relay.var("x", relay.TensorType((1, 16, 32, 4), "float32"))
    assert typed(relay.image.resize2d(x, (5, 7), layout="NHWC", out_dtype="float16")) == relay.TensorType((1, 5, 7, 4), "float16")
    with pytest.raises(relay.RelayTypeError, match="method 'bilinear' is not one of"):
        relay.image.resize2d(x, (5, 7), layout="NHWC", method="bilinear")


def test_signatures_are_tvm_relays():
    assert str(inspect.signature(relay.nn.l2_normalize)) .startswith("(data: 'Expr', eps: 'float', axis: 'Any' = None)")
    params = inspect.signature(relay.image.resize2d).parameters
    assert params["method"].default == "linear"
    assert params["coordinate_transformation_mode"].default == "half_pixel"
    assert params["cubic_alpha"].default == -0.5 and params["roi"].default is None
    params = inspect.signature(relay.nn.group_norm).parameters
    assert list(params)[:4] == ["data", "gamma", "beta", "num_groups"] and params["epsilon"].default == 1e-5
    assert inspect.signature(relay.nn.max_pool3d).parameters["pool_size"].default == (1, 1, 1)
    assert inspect.signature(relay.nn.upsampling).parameters["method"].default == "nearest_neighbor"


def test_all_new_ops_run_in_the_interpreter():
    rng = np.random.default_rng(0)
    x = relay.var("x", shape=(1, 4, 6, 6))
    v = relay.var("v", shape=(1, 2, 4, 4, 4))
    g = relay.var("g", shape=(4,))
    b = relay.var("b", shape=(4,))
    s = relay.var("s", shape=(5,), dtype="int32")
    outs = [
        relay.image.resize2d(x, (9, 4), method="cubic"),
        relay.nn.upsampling(x, 2.0, 0.5, method="bilinear", align_corners=True),
        relay.nn.group_norm(x, g, b, num_groups=2),
        relay.nn.instance_norm(x, g, b),
        relay.nn.l2_normalize(x, 1e-6, axis=[1]),
        relay.nn.conv1d(relay.reshape(x, (1, 4, 36)), relay.const(rng.standard_normal((3, 4, 5)).astype("float32")), padding=2),
        relay.nn.conv3d(v, relay.const(rng.standard_normal((3, 2, 3, 3, 3)).astype("float32")), padding=1),
        relay.nn.max_pool3d(v, (2, 2, 2), strides=2),
        relay.nn.avg_pool3d(v, (3, 3, 3), padding=1, count_include_pad=True),
        relay.nn.adaptive_avg_pool3d(v, (2, 1, 3)),
        relay.gather_nd(x, relay.const(np.array([[0, 0], [3, 1]], "int64"))),
        relay.repeat(x, 2, -1),
        relay.reverse_reshape(x, (-1, 0)),
        relay.ndarray_size(x, "int64"),
        relay.right_shift(relay.left_shift(s, relay.const(np.int32(3))), 1),
    ]
    mod = xrelay.IRModule.from_expr(relay.Function([x, v, g, b, s], relay.Tuple(outs)))
    inputs = {
        "x": rng.standard_normal((1, 4, 6, 6)).astype("float32"),
        "v": rng.standard_normal((1, 2, 4, 4, 4)).astype("float32"),
        "g": rng.standard_normal(4).astype("float32"),
        "b": rng.standard_normal(4).astype("float32"),
        "s": np.array([-5, -1, 0, 1, 7], "int32"),
    }
    got = xrelay.run(mod, inputs)
    X = inputs["x"]
    np.testing.assert_allclose(got[0], KERNELS["image.resize2d"](X, size=(9, 4), method="cubic"), rtol=1e-6)
    np.testing.assert_allclose(got[2], KERNELS["nn.group_norm"](X, inputs["g"], inputs["b"], num_groups=2), rtol=1e-6)
    np.testing.assert_allclose(got[4], X / np.sqrt(np.maximum((X * X).sum(axis=1, keepdims=True), 1e-6)), rtol=1e-5)
    np.testing.assert_array_equal(got[10], X[[0, 0], [3, 1]])  # (x[0, 3], x[0, 1])
    np.testing.assert_array_equal(got[11], np.repeat(X, 2, axis=-1))
    assert got[12].shape == (24, 6) and int(got[13]) == 144
    np.testing.assert_array_equal(got[14], (inputs["s"] << 3) >> 1)
    assert [o.shape for o in got[5:10]] == [(1, 3, 36), (1, 3, 4, 4, 4), (1, 2, 2, 2, 2), (1, 2, 4, 4, 4), (1, 2, 2, 1, 3)]


def test_float_left_shift_is_typed_as_relay_and_refused_when_computed():
    # Relay's BroadcastRel types a float shift (TVM's fusion tests build one); no target
    # computes it: the reference kernel and the C target refuse it by name
    x = relay.var("x", shape=(2,))
    y = relay.left_shift(x, relay.const(1.0))
    assert y.checked_type == relay.TensorType((2,), "float32")
    mod = xrelay.IRModule.from_expr(relay.Function([x], y))
    with pytest.raises(RunError, match="left_shift computes on integers only, got float32"):
        xrelay.run(mod, {"x": np.ones(2, "float32")})
    with pytest.raises(RelayTypeError, match="operand dtypes differ"):
        relay.left_shift(x, relay.const(1))


def test_conv3d_blocked_layouts():
    # NCDHW2c data and OIDHW2i4o kernel (TVM's fold-scale-axis conv3d cases): typed in the
    # primal layouts and blocked back; the kernel computes what the plain layout computes
    from xrelay.kernels.blocked import layout_transform_array
    from xrelay.relay import transform
    from xrelay.testing.semantics import check_semantics

    rng = np.random.default_rng(3)
    x = relay.var("x", shape=(2, 2, 6, 6, 6, 2))  # NCDHW2c: 4 channels
    w = relay.var("w", shape=(2, 2, 3, 3, 3, 2, 4))  # OIDHW2i4o: 8 x 4
    y = relay.nn.conv3d(x, w, padding=(1, 1, 1), channels=8, kernel_size=(3, 3, 3),
                        data_layout="NCDHW2c", kernel_layout="OIDHW2i4o")  # fmt: skip
    assert y.checked_type == relay.TensorType((2, 4, 6, 6, 6, 2), "float32")
    xv = rng.standard_normal((2, 4, 6, 6, 6)).astype("float32")
    wv = rng.standard_normal((8, 4, 3, 3, 3)).astype("float32")
    xb = layout_transform_array(xv, "NCDHW", "NCDHW2c")
    wb = layout_transform_array(wv, "OIDHW", "OIDHW2i4o")
    got = xrelay.run(xrelay.IRModule.from_expr(relay.Function([x, w], y)), {"x": xb, "w": wb})[0]
    plain = KERNELS["nn.conv3d"](xv, wv, strides=(1, 1, 1), padding=(1,) * 6, dilation=(1, 1, 1), groups=1,
                                 channels=8, kernel_size=(3, 3, 3), data_layout="NCDHW", kernel_layout="OIDHW",
                                 out_layout="", out_dtype="")  # fmt: skip
    np.testing.assert_allclose(got, layout_transform_array(plain, "NCDHW", "NCDHW2c"), rtol=1e-5, atol=1e-5)
    with pytest.raises(RelayTypeError, match="conv3d"):
        relay.nn.conv3d(x, relay.var("w2", shape=(2, 3, 3, 3, 3, 2, 4)), data_layout="NCDHW2c", kernel_layout="OIDHW2i4o")
    # forward fold-scale-axis through the blocked conv3d keeps the meaning
    s = relay.const(rng.uniform(0.5, 2.0, (1, 2, 1, 1, 1, 2)).astype("float32"))
    body = relay.nn.relu(relay.multiply(x, s))
    z = relay.nn.conv3d(body, relay.const(wb), padding=(1, 1, 1), channels=8, kernel_size=(3, 3, 3),
                        data_layout="NCDHW2c", kernel_layout="OIDHW2i4o")  # fmt: skip
    mod = xrelay.IRModule.from_expr(relay.Function([x], z))
    folded = transform.ForwardFoldScaleAxis()(mod.clone())
    assert "multiply" in mod.astext() and "multiply(%x" not in folded.astext()
    check_semantics(transform.ForwardFoldScaleAxis(), mod)


def test_conv3d_transpose_infer_type():
    # TVM's test_op_level2.test_conv3d_transpose_infer_type (a symbolic batch as relay.Any())
    x = relay.var("x", relay.TensorType((n, 10, 224, 224, 224), "float32"))
    w = relay.var("w")
    y = relay.nn.conv3d_transpose(x, w, kernel_size=(3, 3, 3), padding=(1, 1, 1), channels=2)
    mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function([x, w], y)))
    fn = mod["main"]
    assert fn.body.checked_type == relay.TensorType((n, 2, 224, 224, 224), "float32")
    assert fn.params[1].checked_type == relay.TensorType((10, 2, 3, 3, 3), "float32")
    for dt in ("int8", "uint8"):
        x = relay.var("x", relay.TensorType((n, 10, 224, 224, 224), dt))
        w = relay.var("w", relay.TensorType((10, 12, 3, 3, 3), "int8"))
        y = relay.nn.conv3d_transpose(x, w, out_dtype="int32")
        assert 'out_dtype="int32"' in y.astext()
        assert typed(y) == relay.TensorType((n, 12, 226, 226, 226), "int32")


@pytest.mark.parametrize(
    "attrs",
    [
        # TVM's test_conv3d_transpose_ncdhw_run
        {"channels": 4, "kernel_size": (2, 2, 2), "strides": (1, 1, 1), "padding": (1, 1, 1)},
        {"strides": (2, 1, 2), "padding": (0, 1, 1, 1, 0, 0), "dilation": (1, 2, 1), "output_padding": (1, 0, 1)},
        {"groups": 3, "strides": (2, 2, 2)},
    ],
)
def test_conv3d_transpose_run_against_onnxruntime(attrs):
    from onnx import helper

    from xrelay.testing.onnx_models import make_model, run_onnxruntime

    groups = attrs.get("groups", 1)
    dshape, kshape = (1, 3, 6, 5, 7), (3, 4 // groups if groups == 1 else 2, 2, 3, 2)
    if "kernel_size" in attrs:
        kshape = (3, 4, 2, 2, 2)
    rng = np.random.default_rng(0)
    data, kernel = rng.uniform(size=dshape).astype("float32"), rng.standard_normal(kshape).astype("float32")
    x, w = relay.var("x", shape=dshape), relay.var("w", shape=kshape)
    func = relay.Function([x, w], relay.nn.conv3d_transpose(x, w, **attrs))
    got = relay.create_executor("graph", mod=xrelay.IRModule.from_expr(func)).evaluate()(data, kernel).numpy()
    p = attrs.get("padding", (0, 0, 0))
    pads = list(p) * 2 if len(p) == 3 else list(p)
    onnx_attrs = {"pads": pads, "strides": list(attrs.get("strides", (1, 1, 1))), "group": groups,
                  "dilations": list(attrs.get("dilation", (1, 1, 1))),
                  "output_padding": list(attrs.get("output_padding", (0, 0, 0)))}
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], **onnx_attrs)
    model = make_model([node], {"x": (dshape, np.float32), "w": (kshape, np.float32)}, ["y"])
    (want,) = run_onnxruntime(model, {"x": data, "w": kernel})
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
