"""Per-operator import tests: each ONNX attribute variant against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

F32 = np.float32
I64 = np.int64


def _r(rng, *shape):
    return np.asarray(rng.standard_normal(shape), dtype=F32)


# ---- convolutions and pools ------------------------------------------------------------------


@pytest.mark.parametrize(
    "attrs, xshape, wshape",
    [
        ({}, (1, 3, 7, 7), (4, 3, 3, 3)),
        ({"pads": [1, 2, 0, 1], "strides": [2, 1]}, (2, 3, 9, 8), (4, 3, 3, 3)),
        ({"dilations": [2, 2], "pads": [2, 2, 2, 2]}, (1, 2, 9, 9), (3, 2, 3, 3)),
        ({"group": 4, "pads": [1, 1, 1, 1]}, (1, 4, 6, 6), (8, 1, 3, 3)),
        ({"auto_pad": "SAME_UPPER", "strides": [2, 2]}, (1, 3, 8, 7), (2, 3, 4, 4)),
        ({"auto_pad": "SAME_LOWER", "strides": [2, 2]}, (1, 3, 8, 7), (2, 3, 4, 4)),
        ({"auto_pad": "VALID", "strides": [3, 3]}, (1, 3, 10, 10), (2, 3, 3, 3)),
    ],
)
@pytest.mark.parametrize("bias", [False, True])
def test_conv(h, rng, attrs, xshape, wshape, bias):
    ins = [_r(rng, *xshape), _r(rng, *wshape)]
    if bias:
        ins.append(_r(rng, wshape[0]))
    imp = h.check_node("Conv", ins, attrs, consts=(1, 2), rtol=1e-4, atol=1e-4)
    names = h.relay_op_names(imp.module)
    assert "relay.nn.conv2d" in names
    assert ("relay.nn.bias_add" in names) == bias


@pytest.mark.parametrize(
    "attrs, xshape, wshape",
    [
        ({"strides": [2, 2]}, (1, 4, 4, 4), (4, 3, 3, 3)),
        ({"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]}, (1, 4, 5, 5), (4, 2, 3, 3)),
        ({"strides": [2, 2], "output_shape": [10, 10]}, (1, 2, 5, 5), (2, 3, 3, 3)),
        ({"group": 2, "strides": [1, 2]}, (1, 4, 3, 3), (4, 2, 2, 2)),
        ({"strides": [2, 2], "auto_pad": "SAME_UPPER"}, (1, 2, 4, 4), (2, 2, 3, 3)),
    ],
)
def test_conv_transpose(h, rng, attrs, xshape, wshape):
    ins = [_r(rng, *xshape), _r(rng, *wshape), _r(rng, wshape[1] * attrs.get("group", 1))]
    h.check_node("ConvTranspose", ins, attrs, consts=(1, 2), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "attrs",
    [
        {"kernel_shape": [3, 3]},
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
        {"kernel_shape": [2, 3], "strides": [2, 2], "ceil_mode": 1},
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1},
        {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"},
        {"kernel_shape": [2, 2], "strides": [2, 2], "auto_pad": "SAME_LOWER"},
        {"kernel_shape": [3, 3], "auto_pad": "VALID"},
    ],
)
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_pools(h, rng, op, attrs):
    x = _r(rng, 1, 2, 7, 8)
    h.check_node(op, [x], attrs)


@pytest.mark.parametrize("ceil", [0, 1])
def test_average_pool_count_include_pad(h, rng, ceil):
    x = _r(rng, 1, 2, 6, 7)
    attrs = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": 1}
    h.check_node("AveragePool", [x], {**attrs, "ceil_mode": ceil})


def test_max_pool_dilation(h, rng):
    h.check_node("MaxPool", [_r(rng, 1, 2, 9, 9)], {"kernel_shape": [2, 2], "dilations": [2, 2]})


def test_max_pool_ceil_drops_window_in_padding(h, rng):
    # 5 + 1 padding, k 2, s 2, ceil: a window would start inside the right padding
    imp = h.check_node("MaxPool", [_r(rng, 1, 1, 5, 5)],
                       {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1})
    assert imp.module is not None


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
def test_global_pools(h, rng, op):
    h.check_node(op, [_r(rng, 2, 3, 5, 4)])


def test_batch_norm(h, rng):
    c = 3
    ins = [_r(rng, 2, c, 4, 4), rng.uniform(0.5, 1.5, c).astype(F32), _r(rng, c), _r(rng, c),
           rng.uniform(0.5, 1.5, c).astype(F32)]
    imp = h.check_node("BatchNormalization", ins, {"epsilon": 1e-3}, consts=(1, 2, 3, 4))
    assert h.relay_op_names(imp.module) == ["relay.nn.batch_norm", "func.return"]


# ---- elementwise ------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Neg", "Abs", "Floor", "Ceil"])
def test_unary(h, rng, op):
    h.check_node(op, [_r(rng, 2, 3, 4)])


@pytest.mark.parametrize("op", ["Sqrt", "Log", "Reciprocal"])
def test_unary_positive(h, rng, op):
    h.check_node(op, [rng.uniform(0.1, 3.0, (3, 4)).astype(F32)])


@pytest.mark.parametrize("attrs", [{}, {"alpha": 0.2}])
def test_leaky_relu(h, rng, attrs):
    h.check_node("LeakyRelu", [_r(rng, 3, 5)], attrs)


def test_clip_attribute_form(h, rng):
    h.check_node("Clip", [_r(rng, 4, 5)], {"min": -0.5, "max": 0.7}, opset=6)
    h.check_node("Clip", [_r(rng, 4, 5)], {"min": -0.5}, opset=6)


@pytest.mark.parametrize("bounds", [(0.0, 6.0), (-0.3, None), (None, 0.2), (None, None)])
def test_clip_input_form(h, rng, bounds):
    x = _r(rng, 4, 5) * 4
    ins = [x] + [None if b is None else np.array(b, F32) for b in bounds]
    while ins[-1] is None:
        ins.pop()
    imp = h.check_node("Clip", ins, consts=(1, 2), opset=13)
    assert "relay.clip" in h.relay_op_names(imp.module)


def test_clip_runtime_bounds(h, rng):
    imp = h.check_node("Clip", [_r(rng, 4, 5), np.array(-0.1, F32), np.array(0.4, F32)], opset=13)
    names = h.relay_op_names(imp.module)
    assert "relay.maximum" in names and "relay.minimum" in names


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize("shapes", [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((2, 3), ())])
def test_binary_broadcast(h, rng, op, shapes):
    a, b = _r(rng, *shapes[0]), _r(rng, *shapes[1])
    if op == "Div":
        b = np.asarray(np.abs(b) + 0.5, dtype=F32)
    h.check_node(op, [a, b])


def test_binary_with_constant(h, rng):
    imp = h.check_node("Mul", [_r(rng, 2, 3), np.array(0.5, F32)], consts=(1,), freeze_params=True)
    assert imp.params == {}


def test_pow(h, rng):
    x = rng.uniform(0.5, 2.0, (3, 4)).astype(F32)
    h.check_node("Pow", [x, np.array(3.0, F32)], consts=(1,))
    h.check_node("Pow", [x, _r(rng, 3, 4)])


def test_pow_integer_exponent(h, rng):
    x = rng.uniform(0.5, 2.0, (3, 4)).astype(F32)
    h.check_node("Pow", [x, np.array(2, I64)], consts=(1,))


# ---- shapes -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, allowzero",
    [([0, -1], 0), ([2, 0, 2, -1], 0), ([-1], 0), ([4, 3, 2], 1), ([3, -1, 2], 0)],
)
def test_reshape(h, rng, shape, allowzero):
    x = _r(rng, 2, 3, 4)
    imp = h.check_node("Reshape", [x, np.array(shape, I64)], {"allowzero": allowzero} if allowzero else {},
                       consts=(1,), opset=14)
    assert imp.params == {}, "the shape input is consumed at import, not a parameter"


@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1])
def test_flatten(h, rng, axis):
    h.check_node("Flatten", [_r(rng, 2, 3, 4, 5)], {"axis": axis})


@pytest.mark.parametrize("perm", [None, [0, 2, 1], [2, 0, 1]])
def test_transpose(h, rng, perm):
    h.check_node("Transpose", [_r(rng, 2, 3, 4)], {} if perm is None else {"perm": perm})


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(h, rng, axis):
    shapes = [[2, 3, 4], [2, 3, 4], [2, 3, 4]]
    for s in shapes[1:]:
        s[axis] += 1
    h.check_node("Concat", [_r(rng, *s) for s in shapes], {"axis": axis})


def test_split_attr_form(h, rng):
    h.check_node("Split", [_r(rng, 2, 6)], {"axis": 1, "split": [1, 2, 3]}, opset=11, n_out=3)
    h.check_node("Split", [_r(rng, 6, 2)], {}, opset=11, n_out=2)


def test_split_input_form(h, rng):
    h.check_node("Split", [_r(rng, 2, 7), np.array([3, 4], I64)], {"axis": -1}, consts=(1,), opset=13, n_out=2)
    h.check_node("Split", [_r(rng, 3, 6)], {"axis": 1}, opset=13, n_out=3)


def test_split_num_outputs_opset18(h, rng):
    # 7 into 3: chunks of ceil(7/3) = 3, the last one smaller
    h.check_node("Split", [_r(rng, 2, 7)], {"axis": 1, "num_outputs": 3}, opset=18, n_out=3)


def test_squeeze(h, rng):
    x = _r(rng, 1, 3, 1, 4)
    h.check_node("Squeeze", [x], {"axes": [0, 2]}, opset=11)
    h.check_node("Squeeze", [x, np.array([-2], I64)], consts=(1,), opset=13)
    h.check_node("Squeeze", [x], opset=13)


def test_unsqueeze(h, rng):
    x = _r(rng, 3, 4)
    h.check_node("Unsqueeze", [x], {"axes": [0, 3]}, opset=11)
    h.check_node("Unsqueeze", [x, np.array([-1, 1], I64)], consts=(1,), opset=13)
    h.check_node("Unsqueeze", [x, np.array([0, 1, 4], I64)], consts=(1,), opset=13)


@pytest.mark.parametrize(
    "starts, ends, axes, steps",
    [
        ([1, 0], [3, 10], None, None),
        ([-3], [np.iinfo(np.int64).max], [2], None),
        ([3], [0], [1], [-1]),
        ([-1], [np.iinfo(np.int64).min], [0], [-2]),
        ([0, 1], [4, 5], [-1, 1], [2, 3]),
        ([10], [20], [1], None),
    ],
)
def test_slice(h, rng, starts, ends, axes, steps):
    x = _r(rng, 4, 5, 6)
    ins = [x, np.array(starts, I64), np.array(ends, I64)]
    if axes is not None or steps is not None:
        ins.append(np.array(axes if axes is not None else list(range(len(starts))), I64))
    if steps is not None:
        ins.append(np.array(steps, I64))
    h.check_node("Slice", ins, consts=(1, 2, 3, 4), opset=13)


def test_slice_attr_form(h, rng):
    h.check_node("Slice", [_r(rng, 4, 5)], {"starts": [1, -4], "ends": [3, 100], "axes": [0, 1]}, opset=9)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_constant_indices(h, rng, axis):
    x = _r(rng, 4, 5, 6)
    h.check_node("Gather", [x, np.array([[0, -1], [2, 1]], I64)], {"axis": axis}, consts=(1,))


def test_gather_scalar_index(h, rng):
    imp = h.check_node("Gather", [_r(rng, 4, 5), np.array(-2, I64)], {"axis": 1}, consts=(1,))
    assert "relay.take" in h.relay_op_names(imp.module)


def test_gather_runtime_indices(h, rng):
    h.check_node("Gather", [_r(rng, 6, 3), np.array([5, -1, 0, -6], I64)], {"axis": 0})


@pytest.mark.parametrize("opset, axis", [(11, 1), (11, -1), (11, 0), (13, 1), (13, -1)])
def test_softmax_axis_semantics(h, rng, opset, axis):
    # opset < 13 normalises over the flattened trailing dims, >= 13 over one axis
    h.check_node("Softmax", [_r(rng, 2, 3, 4)], {"axis": axis}, opset=opset)


def test_log_softmax(h, rng):
    h.check_node("LogSoftmax", [_r(rng, 2, 3, 4)], {"axis": 1}, opset=13)


@pytest.mark.parametrize("op", ["ReduceMean", "ReduceSum", "ReduceMax"])
@pytest.mark.parametrize("axes, keepdims", [([1], 1), ([0, 2], 0), ([-1], 0), (None, 1), (None, 0)])
def test_reduce_axes_attr(h, rng, op, axes, keepdims):
    attrs = {"keepdims": keepdims}
    if axes is not None:
        attrs["axes"] = axes
    h.check_node(op, [_r(rng, 2, 3, 4)], attrs, opset=11)


@pytest.mark.parametrize("op, opset", [("ReduceSum", 13), ("ReduceMean", 18)])
@pytest.mark.parametrize("axes, noop", [([1, -1], 0), ([], 0), ([], 1), (None, 1)])
def test_reduce_axes_input(h, rng, op, opset, axes, noop):
    ins = [_r(rng, 2, 3, 4)]
    if axes is not None:
        ins.append(np.array(axes, I64))
    h.check_node(op, ins, {"keepdims": 0, "noop_with_empty_axes": noop}, consts=(1,), opset=opset)


@pytest.mark.parametrize("to, dtype", [(6, np.int32), (7, np.int64), (11, np.float64), (9, np.bool_)])
def test_cast(h, rng, to, dtype):
    x = (_r(rng, 3, 4) * 3).round()
    h.check_node("Cast", [x], {"to": to}, out_dtypes=[dtype])


def test_cast_of_constant_is_folded(h, rng):
    imp = h.check_node("Cast", [np.array([1, 2, 3], I64)], {"to": 1}, consts=(0,), freeze_params=True)
    assert h.relay_op_names(imp.module) == ["relay.constant", "func.return"]


def test_identity_and_dropout(h, rng):
    x = _r(rng, 2, 3)
    imp = h.check_node("Identity", [x])
    assert h.relay_op_names(imp.module) == ["func.return"]
    h.check_node("Dropout", [x], {}, opset=13)
    h.check_node("Dropout", [x, np.array(0.3, F32)], {}, opset=13, consts=(1,))


def test_dropout_mask_output(h, rng):
    h.check_node("Dropout", [_r(rng, 2, 3)], opset=13, n_out=2, out_dtypes=[F32, np.bool_])


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_pad_input_form(h, rng, mode):
    x = _r(rng, 1, 2, 4, 5)
    pads = np.array([0, 0, 1, 2, 0, 0, 2, 1], I64)
    h.check_node("Pad", [x, pads], {"mode": mode}, consts=(1,), opset=13)


def test_pad_constant_value_and_axes(h, rng):
    x = _r(rng, 3, 4)
    h.check_node("Pad", [x, np.array([1, 2, 0, 3], I64), np.array(1.5, F32)], consts=(1, 2), opset=13)
    h.check_node("Pad", [x, np.array([2, 1], I64), np.array(-1.0, F32), np.array([-1], I64)],
                 consts=(1, 2, 3), opset=18)


def test_pad_attr_form(h, rng):
    h.check_node("Pad", [_r(rng, 3, 4)], {"pads": [1, 0, 0, 2], "value": 2.0}, opset=2)


def test_shape_static(h, rng):
    imp = h.check_node("Shape", [_r(rng, 2, 3, 4)], out_dtypes=[I64])
    assert h.relay_op_names(imp.module) == ["relay.constant", "func.return"]
    h.check_node("Shape", [_r(rng, 2, 3, 4)], {"start": 1, "end": -1}, opset=15, out_dtypes=[I64])


@pytest.mark.parametrize("bias", [True, False])
def test_layer_norm_last_axis(h, rng, bias):
    x = _r(rng, 2, 5, 8)
    ins = [x, rng.uniform(0.5, 1.5, 8).astype(F32)] + ([_r(rng, 8)] if bias else [])
    imp = h.check_node("LayerNormalization", ins, {"epsilon": 1e-3}, consts=(1, 2), rtol=1e-4, atol=1e-4)
    assert "relay.nn.layer_norm" in h.relay_op_names(imp.module)


def test_layer_norm_several_axes(h, rng):
    x = _r(rng, 2, 3, 4)
    ins = [x, rng.uniform(0.5, 1.5, (3, 4)).astype(F32), _r(rng, 3, 4)]
    imp = h.check_node("LayerNormalization", ins, {"axis": 1}, consts=(1, 2), rtol=1e-4, atol=1e-4)
    names = h.relay_op_names(imp.module)
    assert "relay.nn.layer_norm" not in names and "relay.mean" in names


# ---- dense ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "attrs, ashape, bshape, cshape",
    [
        ({}, (3, 4), (4, 5), (5,)),
        ({"transB": 1}, (3, 4), (5, 4), (5,)),
        ({"transA": 1, "alpha": 0.5, "beta": 2.0}, (4, 3), (4, 5), (3, 5)),
        ({"transA": 1, "transB": 1}, (4, 3), (5, 4), (1, 5)),
        ({"beta": 0.5}, (3, 4), (4, 5), ()),
        ({}, (3, 4), (4, 5), None),
    ],
)
def test_gemm(h, rng, attrs, ashape, bshape, cshape):
    ins = [_r(rng, *ashape), _r(rng, *bshape)]
    if cshape is not None:
        ins.append(_r(rng, *cshape))
    h.check_node("Gemm", ins, attrs, consts=(1, 2), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "ashape, bshape",
    [
        ((3, 4), (4, 5)),
        ((2, 3, 4), (4, 5)),
        ((2, 2, 3, 4), (2, 2, 4, 5)),
        ((2, 1, 3, 4), (3, 4, 5)),
        ((3, 4), (2, 4, 5)),
        ((4,), (4, 5)),
        ((3, 4), (4,)),
        ((4,), (2, 4, 5)),
        ((4,), (4,)),
    ],
)
def test_matmul(h, rng, ashape, bshape):
    imp = h.check_node("MatMul", [_r(rng, *ashape), _r(rng, *bshape)], rtol=1e-5, atol=1e-5)
    names = h.relay_op_names(imp.module)
    assert ("relay.nn.batch_matmul" in names) == (len(bshape) > 2)


# ---- misc -------------------------------------------------------------------------------------


def test_constant_forms(h):
    from onnx import helper

    from xrelay.frontends import import_onnx
    from xrelay.runtime.interpreter import run
    from xrelay.testing.onnx_models import make_model, run_onnxruntime

    nodes = [
        helper.make_node("Constant", [], ["a"], value_float=1.5),
        helper.make_node("Constant", [], ["b"], value_floats=[1.0, 2.0, 3.0]),
        helper.make_node("Add", ["x", "a"], ["t"]),
        helper.make_node("Mul", ["t", "b"], ["y"]),
    ]
    model = make_model(nodes, {"x": ((2, 3), F32)}, ["y"])
    x = np.arange(6, dtype=F32).reshape(2, 3)
    imp = import_onnx(model)
    np.testing.assert_allclose(run(imp.module, {"x": x})[0], run_onnxruntime(model, {"x": x})[0])


def test_where_expand_and_comparison(h, rng):
    h.check_node("Expand", [_r(rng, 3, 1), np.array([2, 3, 4], I64)], consts=(1,))
    imp = h.check_node("Greater", [_r(rng, 3, 4), _r(rng, 4)], out_dtypes=[np.bool_])
    assert "relay.greater" in h.relay_op_names(imp.module)
    cond = rng.standard_normal((3, 4)) > 0
    h.check_node("Where", [cond, _r(rng, 3, 4), _r(rng, 4)])


@pytest.mark.parametrize("axis, b_shape", [(1, (3,)), (0, (2, 3)), (2, (4, 5)), (-2, (4,))])
def test_legacy_axis_broadcasting(axis, b_shape):
    # opset < 7: B's dims line up with A's from `axis` (onnxruntime has no opset 6: numpy reference)
    from onnx import helper

    from xrelay.frontends import import_onnx
    from xrelay.runtime.interpreter import run
    from xrelay.testing.onnx_models import make_model

    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    node = helper.make_node("Add", ["a", "b"], ["y"], broadcast=1, axis=axis)
    model = make_model([node], {"a": (a.shape, a.dtype), "b": (b.shape, b.dtype)}, ["y"], {}, opset=6, check=False)
    (got,) = run(import_onnx(model).module, {"a": a, "b": b})
    start = axis % 4
    want = a + b.reshape(b_shape + (1,) * (4 - start - len(b_shape)))
    np.testing.assert_array_equal(got, want)
