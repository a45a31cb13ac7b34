"""Destination passing: every kernel writes into a strided view of a bigger arena buffer and
leaves the rest of the buffer untouched; results match the ``out=None`` path exactly.
Also the registry API and the errors for bad destinations and unsupported dtypes.
"""

from __future__ import annotations

import numpy as np
import pytest

from xrelay.kernels import KERNELS, get_kernel, has_kernel, to_numpy_dtype

SENTINEL = 77


def _f(*shape, dtype="float32", seed=0):
    return np.random.default_rng(seed).uniform(-2, 2, size=shape).astype(dtype)


# (op, inputs, attrs); multi-result ops are handled separately.
CASES = [
    ("add", [_f(2, 3), _f(3, seed=1)], {}),
    ("divide", [np.arange(1, 7, dtype=np.int32).reshape(2, 3), np.full((2, 3), -2, np.int32)], {}),
    ("less", [_f(2, 3), _f(2, 3, seed=1)], {}),
    ("exp", [_f(2, 3)], {}),
    ("erf", [_f(2, 3, dtype="float16")], {}),
    ("round", [_f(2, 3)], {}),
    ("nn.relu", [_f(2, 3)], {}),
    ("clip", [_f(2, 3)], {"a_min": -1.0, "a_max": 1.0}),
    ("cast", [_f(2, 3)], {"dtype": "int8"}),
    ("where", [_f(2, 3) > 0, _f(2, 3), _f(2, 3, seed=1)], {}),
    ("sum", [_f(2, 3, 4)], {"axis": (1,), "keepdims": False, "exclude": False}),
    ("argmax", [_f(2, 3, 4)], {"axis": (2,)}),
    ("reshape", [_f(2, 3, 4)], {"newshape": (-1, 4)}),
    ("transpose", [_f(2, 3, 4)], {"axes": (2, 0, 1)}),
    ("concatenate", [_f(2, 3), _f(1, 3)], {"axis": 0}),
    ("stack", [_f(2, 3), _f(2, 3)], {"axis": 1}),
    ("strided_slice", [_f(6, 5)], {"begin": (5, 0), "end": (0, 5), "strides": (-2, 2)}),
    ("layout_transform", [_f(1, 8, 2, 2)], {"src_layout": "NCHW", "dst_layout": "NCHW4c"}),
    ("take", [_f(4, 3), np.array([3, 0, 1])], {"axis": 0}),
    ("tile", [_f(2, 3)], {"reps": (2, 1)}),
    ("broadcast_to", [_f(1, 3)], {"shape": (4, 3)}),
    ("shape_of", [_f(2, 3)], {}),
    ("nn.conv2d", [_f(1, 4, 6, 6), _f(8, 4, 3, 3, seed=1)], {"padding": (1, 1, 1, 1)}),
    (
        "nn.conv2d",
        [_f(1, 6, 6, 4), _f(3, 3, 4, 8, seed=1)],
        {"data_layout": "NHWC", "kernel_layout": "HWIO", "strides": (2, 2)},
    ),
    ("nn.conv2d", [_f(1, 4, 6, 6), _f(4, 1, 3, 3, seed=1)], {"groups": 4}),
    ("nn.conv2d_transpose", [_f(1, 4, 3, 3), _f(4, 2, 3, 3, seed=1)], {"strides": (2, 2)}),
    ("nn.max_pool2d", [_f(1, 2, 5, 5)], {"pool_size": (3, 3), "strides": (2, 2)}),
    (
        "nn.avg_pool2d",
        [_f(1, 2, 5, 5)],
        {"pool_size": (2, 2), "ceil_mode": True, "strides": (2, 2)},
    ),
    ("nn.global_avg_pool2d", [_f(1, 2, 5, 5)], {}),
    ("nn.adaptive_avg_pool2d", [_f(1, 2, 5, 5)], {"output_size": (2, 2)}),
    ("nn.dense", [_f(3, 5), _f(4, 5, seed=1)], {}),
    ("nn.batch_matmul", [_f(2, 3, 5), _f(2, 4, 5, seed=1)], {"transpose_b": True}),
    ("nn.bias_add", [_f(2, 3, 2), _f(3)], {}),
    ("nn.softmax", [_f(2, 5)], {}),
    ("nn.layer_norm", [_f(2, 5), _f(5), _f(5, seed=2)], {}),
    ("nn.pad", [_f(2, 3), np.array(1.5, np.float32)], {"pad_width": ((1, 0), (2, 1))}),
    ("nn.batch_flatten", [_f(2, 3, 4)], {}),
    ("copy", [_f(2, 3)], {}),
    ("on_device", [_f(2, 3)], {"virtual_device": "cpu", "constrain_result": True}),
    ("device_copy", [_f(2, 3)], {"src_virtual_device": 1, "dst_virtual_device": 2}),
    ("annotation.stop_fusion", [_f(2, 3)], {}),
    ("zeros_like", [_f(2, 3)], {}),
]


def _strided_view(shape, dtype):
    """A non-contiguous view (every other element of the last axis) inside a sentinel arena."""
    arena = np.full(
        tuple(shape[:-1]) + (2 * shape[-1] + 3,) if shape else (5,), SENTINEL, dtype=dtype
    )
    view = arena[..., 1 : 1 + 2 * shape[-1] : 2] if shape else arena[2:3].reshape(())
    return arena, view


@pytest.mark.parametrize("layout", ["strided", "contiguous"])
@pytest.mark.parametrize("op,inputs,attrs", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_writes_into_a_view_and_nothing_else(op, inputs, attrs, layout):
    expected = KERNELS[op](*inputs, **attrs)
    if layout == "strided":
        arena, view = _strided_view(expected.shape, expected.dtype)
        mask = np.ones(arena.shape, dtype=bool)
        mask[..., 1 : 1 + 2 * expected.shape[-1] : 2] = False
    else:
        # A contiguous window in the middle of a flat arena, like a planned buffer.
        arena = np.full(expected.size + 10, SENTINEL, dtype=expected.dtype)
        view = arena[4 : 4 + expected.size].reshape(expected.shape)
        mask = np.ones(arena.shape, dtype=bool)
        mask[4 : 4 + expected.size] = False
    res = KERNELS[op](*inputs, out=view, **attrs)
    assert res is view
    np.testing.assert_array_equal(view, expected)
    assert (arena[mask] == np.array(SENTINEL).astype(arena.dtype)).all()


def test_out_none_never_aliases_inputs():
    x = _f(2, 3)
    for op, attrs in [("reshape", {"newshape": (6,)}), ("copy", {}), ("transpose", {})]:
        assert not np.shares_memory(KERNELS[op](x, **attrs), x)


@pytest.mark.parametrize(
    "op,inputs,attrs",
    [
        ("split", [_f(6, 2)], {"indices_or_sections": (1, 4)}),
        ("nn.dropout", [_f(2, 3)], {"rate": 0.1}),
        (
            "nn.batch_norm",
            [_f(2, 3, 2), _f(3), _f(3, seed=1), _f(3, seed=2), _f(3, seed=3) + 3],
            {},
        ),
    ],
)
def test_multi_result_destinations(op, inputs, attrs):
    expected = KERNELS[op](*inputs, **attrs)
    assert isinstance(expected, tuple)
    total = sum(e.size for e in expected)
    arena = np.full(total + 8, SENTINEL, dtype=np.float32)
    views, pos = [], 2
    for e in expected:
        views.append(arena[pos : pos + e.size].reshape(e.shape))
        pos += e.size
    res = KERNELS[op](*inputs, out=tuple(views), **attrs)
    assert all(r is v for r, v in zip(res, views))
    for v, e in zip(views, expected):
        np.testing.assert_array_equal(v, e)
    assert (arena[:2] == SENTINEL).all() and (arena[pos:] == SENTINEL).all()


def test_bad_destinations_are_rejected():
    x = _f(2, 3)
    with pytest.raises(ValueError, match="shape"):
        KERNELS["exp"](x, out=np.empty((3, 2), np.float32))
    with pytest.raises(ValueError, match="dtype"):
        KERNELS["add"](x, x, out=np.empty((2, 3), np.float64))
    with pytest.raises(ValueError, match="dtype"):
        KERNELS["nn.conv2d"](_f(1, 1, 3, 3), _f(1, 1, 1, 1), out=np.empty((1, 1, 3, 3), np.float16))
    with pytest.raises(ValueError, match="2 output buffers for 3"):
        KERNELS["split"](_f(3, 2), indices_or_sections=3, out=(np.empty((1, 2)),) * 2)
    with pytest.raises(TypeError, match="tuple or list"):
        KERNELS["nn.dropout"](x, out=np.empty((2, 3), np.float32))


def test_registry_api():
    assert has_kernel("nn.conv2d") and has_kernel("add") and has_kernel("split")
    assert not has_kernel("relay.add") and not has_kernel("nn.not_an_op")
    assert get_kernel("add") is KERNELS["add"]
    with pytest.raises(KeyError, match="nn.fifo_buffer"):
        get_kernel("nn.fifo_buffer")
    # Every op the interface promises is present.
    promised = """nn.conv2d nn.conv2d_transpose nn.max_pool2d nn.avg_pool2d nn.global_avg_pool2d
    nn.global_max_pool2d nn.adaptive_avg_pool2d nn.batch_norm nn.layer_norm nn.dropout nn.dense
    nn.matmul nn.batch_matmul nn.bias_add nn.softmax nn.log_softmax nn.batch_flatten nn.pad
    nn.prelu nn.leaky_relu nn.relu tanh sigmoid exp log sqrt rsqrt abs negative erf floor ceil
    round clip cast copy zeros_like ones_like add subtract multiply divide power maximum minimum
    equal not_equal less less_equal greater greater_equal where sum mean max min prod argmax
    argmin reshape transpose concatenate stack split squeeze expand_dims strided_slice
    layout_transform broadcast_to take tile shape_of on_device device_copy
    annotation.stop_fusion""".split()
    assert [op for op in promised if not has_kernel(op)] == []


def test_dtype_names():
    assert to_numpy_dtype("uint16") == np.uint16 and to_numpy_dtype("bool") == np.bool_
    with pytest.raises(ValueError, match="bfloat16"):
        to_numpy_dtype("bfloat16")
    with pytest.raises(ValueError, match="int4"):
        to_numpy_dtype("int4")
    # the kernels themselves never see bfloat16: the registry computes it in float32
    dense = KERNELS["nn.dense"](_f(2, 3), _f(4, 3), out_dtype="bfloat16")
    assert dense.dtype.name == "bfloat16"
