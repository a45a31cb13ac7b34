"""combine-parallel-conv2d: TVM v0.19's test_pass_combine_parallel_conv2d.py ported (4 of 4
cases, structural comparison with ``assert_structural_equal``), seed 002's example, and the
pass's meaning on hand-built inception-style graphs, ResNet-18, MobileNet and random DAGs."""

from __future__ import annotations

import pytest

import xrelay as tvm
from xrelay import relay
from xrelay.relay import transform
from xrelay.testing import count_ops, mobilenet, resnet
from xrelay.testing.random_graphs import random_dag
from xrelay.testing.semantics import check_semantics
from xrelay.testing.structural import assert_structural_equal
from xrelay.transforms.combine_parallel_conv2d import CombineParallelConv2DPass


def run_opt_pass(expr, opt_pass):
    mod = tvm.IRModule.from_expr(expr)
    mod = relay.transform.InferType()(mod)
    mod = opt_pass(mod)
    return mod["main"]


# ---- TVM's cases ---------------------------------------------------------------------------


@pytest.mark.parametrize("channels", [(4, 4, 4, 4), (4, 8, 4, 7)])
def test_combine_parallel_conv2d(channels):
    def before(x, w1, w2, w3, w4):
        y1 = relay.nn.conv2d(x, w1)
        y2 = relay.nn.conv2d(x, w2)
        y3 = relay.nn.conv2d(x, w3)  # cannot be combined (3x3)
        y4 = relay.nn.conv2d(x, w4)
        y5 = relay.nn.max_pool2d(x)
        return relay.Function([x, w1, w2, w3, w4], relay.Tuple((y1, y2, y3, y4, y5)))

    def expected(x, w1, w2, w3, w4, channels1, channels2, channels3, channels4):
        w = relay.concatenate((w1, w2, w4), axis=0)
        y = relay.nn.conv2d(x, w, channels=channels1 + channels2 + channels4)
        y1 = relay.strided_slice(y, begin=[0, 0], end=[-1, channels1], strides=[1, 1], slice_mode="size")
        y2 = relay.strided_slice(
            y, begin=[0, channels1], end=[-1, channels2], strides=[1, 1], slice_mode="size"
        )
        y3 = relay.nn.conv2d(x, w3)
        y4 = relay.strided_slice(
            y, begin=[0, channels1 + channels2], end=[-1, channels4], strides=[1, 1], slice_mode="size"
        )
        y5 = relay.nn.max_pool2d(x)
        return relay.Function([x, w1, w2, w3, w4], relay.Tuple((y1, y2, y3, y4, y5)))

    x_shape = (1, 4, 16, 16)
    channels1, channels2, channels3, channels4 = channels
    x = relay.var("x", shape=x_shape)
    in_c = x_shape[1]
    w1 = relay.var("w1", shape=(channels1, in_c, 1, 1))
    w2 = relay.var("w2", shape=(channels2, in_c, 1, 1))
    w3 = relay.var("w3", shape=(channels3, in_c, 3, 3))
    w4 = relay.var("w4", shape=(channels4, in_c, 1, 1))
    y = run_opt_pass(before(x, w1, w2, w3, w4), transform.CombineParallelConv2D(min_num_branches=2))
    y_expected = expected(x, w1, w2, w3, w4, channels1, channels2, channels3, channels4)
    y_expected = run_opt_pass(y_expected, transform.InferType())
    assert_structural_equal(y, y_expected, map_free_vars=True)
    check_semantics(CombineParallelConv2DPass(2), tvm.IRModule.from_expr(before(x, w1, w2, w3, w4)))


def test_combine_parallel_conv2d_scale_relu():
    def before(x, w1, w2, scale1, scale2, bias):
        y1 = relay.nn.relu(relay.multiply(relay.nn.conv2d(x, w1), scale1))
        y2 = relay.nn.relu(relay.multiply(relay.nn.conv2d(x, w2), scale2))
        y2 = relay.add(y2, bias)
        return relay.Function([x, w1, w2, scale1, scale2, bias], relay.Tuple((y1, y2)))

    def expected(x, w1, w2, scale1, scale2, bias, channels1, channels2):
        w = relay.concatenate((w1, w2), axis=0)
        scale = relay.concatenate((scale1, scale2), axis=0)
        y = relay.nn.conv2d(x, w, channels=channels1 + channels2)
        y = relay.multiply(y, scale)
        y = relay.nn.relu(y)
        y1 = relay.strided_slice(y, begin=[0, 0], end=[-1, channels1], strides=[1, 1], slice_mode="size")
        y2 = relay.strided_slice(
            y, begin=[0, channels1], end=[-1, channels2], strides=[1, 1], slice_mode="size"
        )
        y2 = relay.add(y2, bias)
        return relay.Function([x, w1, w2, scale1, scale2, bias], relay.Tuple((y1, y2)))

    channels1, channels2 = 4, 8
    x = relay.var("x", shape=(1, 4, 16, 16))
    w1 = relay.var("w1", shape=(channels1, 4, 1, 1))
    w2 = relay.var("w2", shape=(channels2, 4, 1, 1))
    scale1 = relay.var("scale1", shape=(channels1, 1, 1))
    scale2 = relay.var("scale2", shape=(channels2, 1, 1))
    bias = relay.var("bias", shape=(channels2, 1, 1))
    args = (x, w1, w2, scale1, scale2, bias)
    y = run_opt_pass(before(*args), transform.CombineParallelConv2D(min_num_branches=2))
    y_expected = run_opt_pass(expected(*args, channels1, channels2), transform.InferType())
    assert_structural_equal(y, y_expected, map_free_vars=True)
    check_semantics(CombineParallelConv2DPass(2), tvm.IRModule.from_expr(before(*args)))


def test_combine_parallel_conv2d_scale():
    """A scale of shape (1,) broadcasts and cannot be concatenated: only the convs combine."""

    def before(x, w1, w2, scale1, scale2):
        y1 = relay.multiply(relay.nn.conv2d(x, w1), scale1)
        y2 = relay.multiply(relay.nn.conv2d(x, w2), scale2)
        return relay.Function([x, w1, w2, scale1, scale2], relay.Tuple((y1, y2)))

    def expected(x, w1, w2, scale1, scale2, channels1, channels2):
        w = relay.concatenate((w1, w2), axis=0)
        y = relay.nn.conv2d(x, w, channels=channels1 + channels2)
        y1 = relay.strided_slice(y, begin=[0, 0], end=[-1, channels1], strides=[1, 1], slice_mode="size")
        y2 = relay.strided_slice(
            y, begin=[0, channels1], end=[-1, channels2], strides=[1, 1], slice_mode="size"
        )
        y1 = relay.multiply(y1, scale1)
        y2 = relay.multiply(y2, scale2)
        return relay.Function([x, w1, w2, scale1, scale2], relay.Tuple((y1, y2)))

    x = relay.var("x", shape=(1, 4, 16, 16))
    w1 = relay.var("w1", shape=(4, 4, 1, 1))
    w2 = relay.var("w2", shape=(8, 4, 1, 1))
    scale1 = relay.var("scale1", shape=(1,))
    scale2 = relay.var("scale2", shape=(1,))
    args = (x, w1, w2, scale1, scale2)
    y = run_opt_pass(before(*args), transform.CombineParallelConv2D(min_num_branches=2))
    y_expected = run_opt_pass(expected(*args, 4, 8), transform.InferType())
    assert_structural_equal(y, y_expected, map_free_vars=True)
    check_semantics(CombineParallelConv2DPass(2), tvm.IRModule.from_expr(before(*args)))


def test_combine_parallel_conv2d_multiple_blocks():
    def before(x, w, repeat):
        y = x
        for _ in range(repeat):
            y1 = relay.nn.conv2d(y, w)
            y2 = relay.nn.conv2d(y, w)
            y = relay.concatenate((y1, y2), axis=1)
        return relay.Function([x, w], y)

    def expected(x, w, channels, repeat):
        y = x
        for _ in range(repeat):
            w_concat = relay.concatenate((w, w), axis=0)
            y = relay.nn.conv2d(y, w_concat, channels=channels * 2)
            y1 = relay.strided_slice(y, begin=[0, 0], end=[-1, channels], strides=[1, 1], slice_mode="size")
            y2 = relay.strided_slice(
                y, begin=[0, channels], end=[-1, channels], strides=[1, 1], slice_mode="size"
            )
            y = relay.concatenate((y1, y2), axis=1)
        return relay.Function([x, w], y)

    x = relay.var("x", shape=(1, 4, 16, 16))
    w = relay.var("w", shape=(2, 4, 1, 1))
    y = run_opt_pass(before(x, w, 4), transform.CombineParallelConv2D(min_num_branches=2))
    y_expected = run_opt_pass(expected(x, w, 2, 4), transform.InferType())
    assert_structural_equal(y, y_expected, map_free_vars=True)
    check_semantics(CombineParallelConv2DPass(2), tvm.IRModule.from_expr(before(x, w, 4)))


# ---- seed 002 --------------------------------------------------------------------------------


def test_seed_002_example():
    """Seed 002's script: the printed graph is the seed's (concatenate, conv2d with channels=8,
    two strided_slices in size mode, max_pool2d untouched)."""

    def before(x, w1, w2):
        y = relay.Tuple((relay.nn.conv2d(x, w1), relay.nn.conv2d(x, w2), relay.nn.max_pool2d(x)))
        mod = tvm.IRModule.from_expr(relay.Function([x, w1, w2], y))
        return relay.transform.InferType()(mod)

    x = relay.var("x", shape=(1, 4, 16, 16))
    w1 = relay.var("w1", shape=(4, 4, 1, 1))
    w2 = relay.var("w2", shape=(4, 4, 1, 1))
    mod = transform.CombineParallelConv2D(min_num_branches=2)(before(x, w1, w2))
    text = mod.mlir_text()
    assert "relay.concatenate %w1, %w2 : (tensor<4x4x1x1xf32>, tensor<4x4x1x1xf32>) -> tensor<8x4x1x1xf32>" in text
    assert "relay.nn.conv2d %x, %0 {channels = 8}" in text
    assert '{begin = [0, 0], end = [-1, 4], strides = [1, 1], slice_mode = "size"}' in text
    assert '{begin = [0, 4], end = [-1, 4], strides = [1, 1], slice_mode = "size"}' in text
    assert count_ops(mod) == {"concatenate": 1, "nn.conv2d": 1, "strided_slice": 2, "nn.max_pool2d": 1}


# ---- behaviour and meaning ---------------------------------------------------------------------


def _inception(x_shape=(1, 8, 8, 8)):
    """Three 1x1 branches of different widths with bias+relu, a 3x3 branch, a pool branch."""
    x = relay.var("x", shape=x_shape)
    c = x_shape[1]
    outs, params = [], [x]
    for i, width in enumerate((4, 6, 4)):
        w = relay.var(f"w{i}", shape=(width, c, 1, 1))
        b = relay.var(f"b{i}", shape=(width, 1, 1))
        outs.append(relay.nn.relu(relay.add(relay.nn.conv2d(x, w), b)))
        params += [w, b]
    w3 = relay.var("w3", shape=(4, c, 3, 3))
    params.append(w3)
    outs.append(relay.nn.conv2d(x, w3, padding=(1, 1)))
    outs.append(relay.nn.max_pool2d(x, pool_size=(3, 3), padding=(1, 1)))
    return tvm.IRModule.from_expr(relay.Function(params, relay.concatenate(outs, axis=1)))


def test_inception_block_combines_through_add_and_relu():
    mod = _inception()
    check_semantics(CombineParallelConv2DPass(), mod)
    after = transform.CombineParallelConv2D()(mod.clone())
    counts = count_ops(after)
    assert counts["nn.conv2d"] == 2 and counts["add"] == 1 and counts["nn.relu"] == 1
    assert counts["strided_slice"] == 3


@pytest.mark.no_change("combine-parallel-conv2d", "fewer branches than min_num_branches, and opt level 3 below the pass's 4: nothing combines")
def test_min_num_branches_and_opt_level():
    mod = _inception()
    assert count_ops(transform.CombineParallelConv2D(min_num_branches=4)(mod.clone()))["nn.conv2d"] == 4
    # Relay registers it at opt level 4 under the name CombineParallelConv2d.
    p = transform.CombineParallelConv2D()
    assert p.info.name == "CombineParallelConv2d" and p.info.opt_level == 4
    with transform.PassContext(opt_level=3):
        out = transform.Sequential([p])(mod.clone())
    assert count_ops(out)["nn.conv2d"] == 4


@pytest.mark.no_change("combine-parallel-conv2d", "grouped and strided convolutions must not combine")
def test_grouped_and_strided_convs_are_not_combined():
    x = relay.var("x", shape=(1, 4, 8, 8))
    ws = [relay.var(f"w{i}", shape=(4, 2, 3, 3)) for i in range(2)]
    v = [relay.var(f"v{i}", shape=(4, 4, 1, 1)) for i in range(2)]
    outs = [relay.nn.conv2d(x, w, groups=2, padding=(1, 1)) for w in ws]
    outs += [relay.nn.conv2d(x, v[0], strides=(2, 2)), relay.nn.conv2d(x, v[1])]
    mod = tvm.IRModule.from_expr(relay.Function([x, *ws, *v], relay.Tuple(outs)))
    out = transform.CombineParallelConv2D(min_num_branches=2)(mod.clone())
    assert count_ops(out)["nn.conv2d"] == 4 and "concatenate" not in count_ops(out)


def test_nhwc_layout_slices_last_axis():
    x = relay.var("x", shape=(1, 8, 8, 4))
    ws = [relay.var(f"w{i}", shape=(1, 1, 4, c)) for i, c in enumerate((3, 5))]
    outs = [relay.nn.conv2d(x, w, data_layout="NHWC", kernel_layout="HWIO") for w in ws]
    mod = tvm.IRModule.from_expr(relay.Function([x, *ws], relay.Tuple(outs)))
    check_semantics(CombineParallelConv2DPass(2), mod)
    text = transform.CombineParallelConv2D(2)(mod.clone()).mlir_text()
    assert "relay.concatenate %w0, %w1 {axis = 3}" in text
    assert "begin = [0, 0, 0, 3], end = [-1, -1, -1, 5]" in text


def test_workloads_and_random_dags():
    for workload in (resnet, mobilenet):
        mod, params = workload.get_workload(image_shape=(3, 32, 32), num_classes=10)
        check_semantics(CombineParallelConv2DPass(2), mod, params=params)
    for seed in range(4):
        check_semantics(CombineParallelConv2DPass(2), random_dag(seed, 30))


@pytest.mark.parametrize("seed", range(6))
def test_random_branch_sets(seed):
    """Random sets of parallel branches (kernel 1 or 3, widths 1-5, followers relu / per-channel
    scale / bias / scalar multiply in random lengths): the meaning is kept, and every
    kernel-size class with at least two branches becomes one convolution."""
    import numpy as np

    rng = np.random.default_rng(seed)
    x = relay.var("x", shape=(1, 3, 6, 6))
    params, outs, kernels = [x], [], []
    for i in range(int(rng.integers(2, 6))):
        k = int(rng.choice([1, 3]))
        c = int(rng.integers(1, 6))
        w = relay.var(f"w{i}", shape=(c, 3, k, k))
        params.append(w)
        y = relay.nn.conv2d(x, w, padding=(k // 2, k // 2))
        for j in range(int(rng.integers(0, 3))):
            kind = int(rng.integers(4))
            if kind == 0:
                y = relay.nn.relu(y)
            elif kind in (1, 2):
                v = relay.var(f"v{i}k{j}", shape=(c, 1, 1))
                params.append(v)
                y = relay.multiply(y, v) if kind == 1 else relay.add(y, v)
            else:
                y = relay.multiply(y, relay.const(1.5))
        outs.append(y)
        kernels.append(k)
    mod = tvm.IRModule.from_expr(relay.Function(params, relay.Tuple(outs)))
    check_semantics(CombineParallelConv2DPass(2), mod)
    after = transform.CombineParallelConv2D(2)(mod.clone())
    expected = sum(1 if kernels.count(k) >= 2 else kernels.count(k) for k in set(kernels))
    assert count_ops(after)["nn.conv2d"] == expected
