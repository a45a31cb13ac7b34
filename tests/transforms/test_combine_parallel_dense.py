"""combine-parallel-dense: TVM v0.19's test_pass_combine_parallel_dense.py ported (7 of 7 test
functions, 24 checks, structural comparison), seed 002's example, and the pass's meaning."""

from __future__ import annotations

import pytest

import xrelay as tvm
from xrelay import relay
from xrelay.relay import transform
from xrelay.testing import count_ops, mlp
from xrelay.testing.random_graphs import random_dag
from xrelay.testing.semantics import check_semantics
from xrelay.testing.structural import assert_structural_equal
from xrelay.transforms.combine_parallel_dense import CombineParallelDensePass


def run_opt_pass(expr, opt_pass):
    mod = tvm.IRModule.from_expr(expr)
    mod = relay.transform.InferType()(mod)
    mod = opt_pass(mod)
    return mod["main"]


def _check(before, expected, opt_pass, semantics_pass):
    y = run_opt_pass(before, opt_pass)
    y_expected = run_opt_pass(expected, transform.InferType())
    assert_structural_equal(y, y_expected, map_free_vars=True)
    check_semantics(semantics_pass, tvm.IRModule.from_expr(before))


# ---- to_batch=True ---------------------------------------------------------------------------


@pytest.mark.parametrize(("i", "j", "k"), [(3, 5, 4), (100, 200, 300)])
def test_combine_parallel_dense(i, j, k):
    """One dense cannot be combined due to shape mismatch."""
    x = relay.var("x", shape=(i, k))
    w1, w2, w4 = (relay.var(f"w{n}", shape=(j, k)) for n in (1, 2, 4))
    w3 = relay.var("w3", shape=(j + 1, k))
    args = [x, w1, w2, w3, w4]
    before = relay.Function(args, relay.Tuple([relay.nn.dense(x, w) for w in (w1, w2, w3, w4)]))
    x_stacked = relay.stack((x, x, x), axis=0)
    y = relay.nn.batch_matmul(x_stacked, relay.stack((w1, w2, w4), axis=0))
    (y1, y2, y4) = relay.split(y, 3)
    y1, y2, y4 = (relay.squeeze(v, [0]) for v in (y1, y2, y4))
    expected = relay.Function(args, relay.Tuple((y1, y2, relay.nn.dense(x, w3), y4)))
    _check(before, expected, transform.CombineParallelDense(min_num_branches=2), CombineParallelDensePass(2))


@pytest.mark.parametrize(("i", "j", "k", "is_2d_bias"), [(3, 5, 4, False), (100, 200, 300, False), (3, 5, 4, True), (100, 200, 300, True)])
def test_combine_parallel_dense_biasadd(i, j, k, is_2d_bias):
    x = relay.var("x", shape=(i, k))
    w1, w2 = relay.var("w1", shape=(j, k)), relay.var("w2", shape=(j, k))
    bshape = (i, j) if is_2d_bias else (j,)
    b1, b2 = relay.var("b1", shape=bshape), relay.var("b2", shape=bshape)
    args = [x, w1, w2, b1, b2]
    before = relay.Function(args, relay.Tuple((relay.add(relay.nn.dense(x, w1), b1), relay.add(relay.nn.dense(x, w2), b2))))
    y = relay.nn.batch_matmul(relay.stack((x, x), axis=0), relay.stack((w1, w2), axis=0))
    e1, e2 = (b1, b2) if is_2d_bias else (relay.expand_dims(b1, 0), relay.expand_dims(b2, 0))
    y = relay.add(y, relay.stack((e1, e2), axis=0))
    (y1, y2) = relay.split(y, 2)
    expected = relay.Function(args, relay.Tuple((relay.squeeze(y1, [0]), relay.squeeze(y2, [0]))))
    semantics = CombineParallelDensePass(2) if i < 10 else None
    y = run_opt_pass(before, transform.CombineParallelDense(min_num_branches=2))
    assert_structural_equal(y, run_opt_pass(expected, transform.InferType()))
    if semantics:
        check_semantics(semantics, tvm.IRModule.from_expr(before))


@pytest.mark.parametrize(("i", "j", "k", "newshape"), [(3, 5, 4, (1, 1, 15)), (100, 200, 300, (1, 1, 20000))])
def test_combine_parallel_dense_biasadd_scale_reshape(i, j, k, newshape):
    """dense + 1-d bias add + multiply, then a reshape that is not combined."""
    x = relay.var("x", shape=(i, k))
    w1, w2 = relay.var("w1", shape=(j, k)), relay.var("w2", shape=(j, k))
    b1, b2 = relay.var("b1", shape=(j,)), relay.var("b2", shape=(j,))
    scale1, scale2 = relay.var("scale1", shape=(1,)), relay.var("scale2", shape=(1,))
    args = [x, w1, w2, b1, b2, scale1, scale2]

    def branch(w, b, s):
        return relay.reshape(relay.multiply(relay.add(relay.nn.dense(x, w), b), s), newshape=newshape)

    before = relay.Function(args, relay.Tuple((branch(w1, b1, scale1), branch(w2, b2, scale2))))
    y = relay.nn.batch_matmul(relay.stack((x, x), axis=0), relay.stack((w1, w2), axis=0))
    y = relay.add(y, relay.stack((relay.expand_dims(b1, 0), relay.expand_dims(b2, 0)), axis=0))
    y = relay.multiply(y, relay.stack((relay.expand_dims(scale1, 0), relay.expand_dims(scale2, 0)), axis=0))
    (y1, y2) = relay.split(y, 2)
    y1 = relay.reshape(relay.squeeze(y1, [0]), newshape=newshape)
    y2 = relay.reshape(relay.squeeze(y2, [0]), newshape=newshape)
    expected = relay.Function(args, relay.Tuple((y1, y2)))
    y = run_opt_pass(before, transform.CombineParallelDense(min_num_branches=2))
    assert_structural_equal(y, run_opt_pass(expected, transform.InferType()))
    if i < 10:
        check_semantics(CombineParallelDensePass(2), tvm.IRModule.from_expr(before))


# ---- to_batch=False --------------------------------------------------------------------------


@pytest.mark.parametrize(("i", "j", "k"), [(3, 5, 4), (100, 200, 300)])
def test_combine_parallel_dense_flat(i, j, k):
    """All dense ops of different output widths combine."""
    x = relay.var("x", shape=(i, k))
    w1, w2, w3 = relay.var("w1", shape=(j, k)), relay.var("w2", shape=(2 * j, k)), relay.var("w3", shape=(3 * j, k))
    args = [x, w1, w2, w3]
    before = relay.Function(args, relay.Tuple([relay.nn.dense(x, w) for w in (w1, w2, w3)]))
    y = relay.nn.dense(x, relay.concatenate((w1, w2, w3), axis=0), units=6 * j)
    strides = [1, 1]
    y1 = relay.strided_slice(y, begin=[0, 0], end=[-1, j], strides=strides, slice_mode="size")
    y2 = relay.strided_slice(y, begin=[0, j], end=[-1, 2 * j], strides=strides, slice_mode="size")
    y3 = relay.strided_slice(y, begin=[0, 3 * j], end=[-1, 3 * j], strides=strides, slice_mode="size")
    expected = relay.Function(args, relay.Tuple((y1, y2, y3)))
    opt = transform.CombineParallelDense(min_num_branches=3, to_batch=False)
    y = run_opt_pass(before, opt)
    assert_structural_equal(y, run_opt_pass(expected, transform.InferType()))
    if i < 10:
        check_semantics(CombineParallelDensePass(3, False), tvm.IRModule.from_expr(before))


@pytest.mark.parametrize(
    ("bias_shape1", "bias_shape2"),
    [
        ((), ()), ((1,), (1,)), ((5,), (1,)), ((1,), (10,)), ((3, 1), (3, 1)), ((3, 5), (3, 10)),
        ((3, 1), (3, 10)), ((3, 5), (3, 1)), ((9, 3, 5), (9, 3, 10)), ((9, 3, 5), (9, 3, 1)),
        ((9, 3, 1), (9, 3, 10)),
    ],
)  # fmt: skip
def test_combine_parallel_dense_flat_biasadd(bias_shape1, bias_shape2):
    """dense + bias add with different output widths and bias shapes (repeat where one is 1)."""
    i, j, k = 3, 5, 4
    x = relay.var("x", shape=(i, k))
    w1, w2 = relay.var("w1", shape=(j, k)), relay.var("w2", shape=(2 * j, k))
    b1, b2 = relay.var("b1", shape=bias_shape1), relay.var("b2", shape=bias_shape2)
    args = [x, w1, w2, b1, b2]
    before = relay.Function(args, relay.Tuple((relay.add(relay.nn.dense(x, w1), b1), relay.add(relay.nn.dense(x, w2), b2))))

    y = relay.nn.dense(x, relay.concatenate((w1, w2), axis=0), units=3 * j)
    n_out_dims = max(len(bias_shape1), 2)
    e1, e2 = b1, b2
    if len(bias_shape1) == 0:
        e1 = relay.repeat(relay.expand_dims(b1, -1), j, 0)
    elif bias_shape1[-1] == 1:
        e1 = relay.repeat(b1, j, len(bias_shape1) - 1)
    if len(bias_shape2) == 0:
        e2 = relay.repeat(relay.expand_dims(b2, -1), 2 * j, 0)
    elif bias_shape2[-1] == 1:
        e2 = relay.repeat(b2, 2 * j, len(bias_shape2) - 1)
    y = relay.add(y, relay.concatenate((e1, e2), axis=max(0, len(bias_shape1) - 1)))
    begin, end = [0] * (n_out_dims - 1), [-1] * (n_out_dims - 1)
    strides = [1] * n_out_dims
    y1 = relay.strided_slice(y, begin=begin + [0], end=end + [j], strides=strides, slice_mode="size")
    y2 = relay.strided_slice(y, begin=begin + [j], end=end + [2 * j], strides=strides, slice_mode="size")
    expected = relay.Function(args, relay.Tuple((y1, y2)))
    _check(before, expected, transform.CombineParallelDense(min_num_branches=2, to_batch=False), CombineParallelDensePass(2, False))


@pytest.mark.parametrize(("i", "j", "k", "newshape1", "newshape2"), [(3, 5, 4, (1, 1, 15), (1, 1, 30)), (100, 200, 300, (1, 1, 20000), (1, 1, 40000))])
def test_combine_parallel_dense_flat_biasadd_scale_reshape(i, j, k, newshape1, newshape2):
    x = relay.var("x", shape=(i, k))
    w1, w2 = relay.var("w1", shape=(j, k)), relay.var("w2", shape=(2 * j, k))
    b1, b2 = relay.var("b1", shape=(j,)), relay.var("b2", shape=(2 * j,))
    scale1, scale2 = relay.var("scale1", shape=(1,)), relay.var("scale2", shape=(1,))
    args = [x, w1, w2, b1, b2, scale1, scale2]

    def branch(w, b, s, newshape):
        return relay.reshape(relay.multiply(relay.add(relay.nn.dense(x, w), b), s), newshape=newshape)

    before = relay.Function(args, relay.Tuple((branch(w1, b1, scale1, newshape1), branch(w2, b2, scale2, newshape2))))
    y = relay.nn.dense(x, relay.concatenate((w1, w2), axis=0), units=3 * j)
    y = relay.add(y, relay.concatenate((b1, b2), axis=0))
    scale = relay.concatenate((relay.repeat(scale1, j, 0), relay.repeat(scale2, 2 * j, 0)), axis=0)
    y = relay.multiply(y, scale)
    y1 = relay.strided_slice(y, begin=[0, 0], end=[-1, j], strides=[1, 1], slice_mode="size")
    y2 = relay.strided_slice(y, begin=[0, j], end=[-1, 2 * j], strides=[1, 1], slice_mode="size")
    expected = relay.Function(args, relay.Tuple((relay.reshape(y1, newshape=newshape1), relay.reshape(y2, newshape=newshape2))))
    y = run_opt_pass(before, transform.CombineParallelDense(min_num_branches=2, to_batch=False))
    assert_structural_equal(y, run_opt_pass(expected, transform.InferType()))
    if i < 10:
        check_semantics(CombineParallelDensePass(2, False), tvm.IRModule.from_expr(before))


def test_combine_parallel_dense_expand_dims():
    """The slice axis is the last one of the dense's width after the combined followers."""
    x = relay.var("x", shape=(2, 32))
    w1, w2 = relay.var("w1", shape=(16, 32)), relay.var("w2", shape=(8, 32))
    before = relay.Function(
        [x, w1, w2],
        relay.Tuple((relay.expand_dims(relay.nn.dense(x, w1), axis=2), relay.expand_dims(relay.nn.dense(x, w2), axis=2))),
    )
    y = relay.expand_dims(relay.nn.dense(x, relay.concatenate((w1, w2), axis=0), units=24), axis=2)
    y1 = relay.strided_slice(y, begin=[0, 0, 0], end=[-1, 16, -1], strides=[1, 1, 1], slice_mode="size")
    y2 = relay.strided_slice(y, begin=[0, 16, 0], end=[-1, 8, -1], strides=[1, 1, 1], slice_mode="size")
    expected = relay.Function([x, w1, w2], relay.Tuple((y1, y2)))
    _check(before, expected, transform.CombineParallelDense(min_num_branches=2, to_batch=False), CombineParallelDensePass(2, False))


# ---- seed 002 and behaviour --------------------------------------------------------------------


def test_seed_002_example():
    """Seed 002: (%x, %x) and (%w1, %w2) stacked, batch_matmul(transpose_b=True), split into two,
    each squeezed on axis 0."""
    x = relay.var("x", shape=(3, 4))
    w1, w2 = relay.var("w1", shape=(5, 4)), relay.var("w2", shape=(5, 4))
    y_before = relay.Function([x, w1, w2], relay.Tuple((relay.nn.dense(x, w1), relay.nn.dense(x, w2))))
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(y_before))
    y = transform.CombineParallelDense(min_num_branches=2)(mod)["main"]
    text = tvm.IRModule.from_expr(y).mlir_text()
    assert "relay.stack %x, %x : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>" in text
    assert "relay.stack %w1, %w2 : (tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<2x5x4xf32>" in text
    assert "{transpose_b = true} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32>" in text
    assert "{indices_or_sections = 2} : (tensor<2x3x5xf32>) -> (tensor<1x3x5xf32>, tensor<1x3x5xf32>)" in text
    assert text.count("relay.squeeze") == 2 and text.count("{axis = [0]}") == 2
    assert dict(count_ops(tvm.IRModule.from_expr(y))) == {"stack": 2, "nn.batch_matmul": 1, "split": 1, "squeeze": 2}


def test_relay_defaults_and_meaning_on_workloads():
    p = transform.CombineParallelDense()
    assert p.info.name == "CombineParallelDense" and p.info.opt_level == 4
    x = relay.var("x", shape=(2, 8))
    ws = [relay.var(f"w{n}", shape=(4, 8)) for n in range(3)]
    mod = tvm.IRModule.from_expr(relay.Function([x, *ws], relay.Tuple([relay.nn.relu(relay.nn.dense(x, w)) for w in ws])))
    # three branches meet the default min_num_branches=3; relu is combined on the batch
    out = transform.CombineParallelDense()(mod.clone())
    assert count_ops(out) == {"stack": 2, "nn.batch_matmul": 1, "nn.relu": 1, "split": 1, "squeeze": 3}
    check_semantics(CombineParallelDensePass(), mod)
    check_semantics(CombineParallelDensePass(3, False), mod)
    m, params = mlp.get_workload(batch_size=2)
    check_semantics(CombineParallelDensePass(2), m, params=params)
    for seed in range(3):
        check_semantics(CombineParallelDensePass(2), random_dag(seed, 30))


def test_scalar_operand_stops_the_batch_form():
    x = relay.var("x", shape=(2, 3))
    ws = [relay.var(f"w{n}", shape=(2, 3)) for n in range(2)]
    ys = [relay.multiply(relay.nn.dense(x, w), relay.const(float(n + 2))) for n, w in enumerate(ws)]
    mod = tvm.IRModule.from_expr(relay.Function([x, *ws], relay.Tuple(ys)))
    check_semantics(CombineParallelDensePass(2), mod)
    counts = count_ops(transform.CombineParallelDense(2)(mod.clone()))
    assert counts["nn.batch_matmul"] == 1 and counts["multiply"] == 2


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("to_batch", [True, False])
def test_random_branch_sets(seed, to_batch):
    """Random parallel dense branches (widths 2-4, followers relu / vector or 2-d bias / scalar
    scale): the meaning is kept in both forms, and the dense ops of a group become one op."""
    import numpy as np

    rng = np.random.default_rng(seed)
    x = relay.var("x", shape=(3, 5))
    params, outs, widths = [x], [], []
    for i in range(int(rng.integers(2, 5))):
        n = int(rng.integers(2, 5))
        w = relay.var(f"w{i}", shape=(n, 5))
        params.append(w)
        y = relay.nn.dense(x, w)
        for j in range(int(rng.integers(0, 3))):
            kind = int(rng.integers(4))
            if kind == 0:
                y = relay.nn.relu(y)
            elif kind in (1, 2):
                b = relay.var(f"b{i}k{j}", shape=(n,) if kind == 1 else (3, n))
                params.append(b)
                y = relay.add(y, b)
            else:
                y = relay.multiply(y, relay.const(0.5))
        outs.append(y)
        widths.append(n)
    mod = tvm.IRModule.from_expr(relay.Function(params, relay.Tuple(outs)))
    check_semantics(CombineParallelDensePass(2, to_batch), mod)
    counts = count_ops(transform.CombineParallelDense(2, to_batch)(mod.clone()))
    if to_batch:  # equal widths group together
        groups = [widths.count(n) for n in set(widths)]
        assert counts["nn.batch_matmul"] == sum(1 for g in groups if g >= 2)
        assert counts["nn.dense"] == sum(1 for g in groups if g == 1)
    else:  # one input width: everything combines
        assert counts["nn.dense"] == 1
