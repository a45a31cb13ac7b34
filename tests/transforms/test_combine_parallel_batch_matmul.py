"""combine-parallel-batch-matmul: TVM v0.19's test_pass_combine_parallel_batch_matmul.py ported
(2 of 2 cases, 4 shape checks, structural comparison) and the pass's meaning."""

from __future__ import annotations

import pytest

import xrelay as tvm
from xrelay import relay
from xrelay.relay import transform
from xrelay.testing import count_ops
from xrelay.testing.random_graphs import random_dag
from xrelay.testing.semantics import check_semantics
from xrelay.testing.structural import assert_structural_equal
from xrelay.transforms.combine_parallel_batch_matmul import CombineParallelBatchMatmulPass


def run_opt_pass(expr, opt_pass):
    mod = tvm.IRModule.from_expr(expr)
    mod = relay.transform.InferType()(mod)
    mod = opt_pass(mod)
    return mod["main"]


def _vars(b, i, j, k, bias=False):
    x = relay.var("x", shape=(b, i, k))
    ws = [relay.var(f"w{n}", shape=(b, j, k)) for n in (1, 2, 3)]
    bs = [relay.var(f"b{n}", shape=(j,)) for n in (1, 2, 3)] if bias else []
    return x, ws, bs


def _slices(y, sizes):
    out, start = [], 0
    for s in sizes:
        out.append(relay.strided_slice(y, begin=[0, 0, start], end=[-1, -1, s], strides=[1, 1, 1], slice_mode="size"))
        start += s
    return out


@pytest.mark.parametrize("dims", [(2, 3, 5, 4), (1, 100, 200, 300)])
def test_combine_parallel_batch_matmul(dims):
    x, ws, _ = _vars(*dims)

    def before():
        return relay.Function([x, *ws], relay.Tuple([relay.nn.batch_matmul(x, w) for w in ws]))

    def expected():
        y = relay.nn.batch_matmul(x, relay.concatenate(ws, axis=1))
        return relay.Function([x, *ws], relay.Tuple(_slices(y, [dims[2]] * 3)))

    y = run_opt_pass(before(), transform.CombineParallelBatchMatmul(min_num_branches=2))
    assert_structural_equal(y, run_opt_pass(expected(), transform.InferType()), map_free_vars=True)


@pytest.mark.parametrize("dims", [(2, 3, 5, 4), (1, 100, 200, 300)])
def test_combine_parallel_batch_matmul_biasadd(dims):
    x, ws, bs = _vars(*dims, bias=True)

    def before():
        ys = [relay.add(relay.nn.batch_matmul(x, w), b) for w, b in zip(ws, bs)]
        return relay.Function([x, *ws, *bs], relay.Tuple(ys))

    def expected():
        w = relay.concatenate(ws, axis=1)
        b = relay.concatenate(bs, axis=-1)
        y = relay.add(relay.nn.batch_matmul(x, w), b)
        return relay.Function([x, *ws, *bs], relay.Tuple(_slices(y, [dims[2]] * 3)))

    y = run_opt_pass(before(), transform.CombineParallelBatchMatmul(min_num_branches=2))
    assert_structural_equal(y, run_opt_pass(expected(), transform.InferType()), map_free_vars=True)


def test_meaning_with_different_widths_and_followers():
    x = relay.var("x", shape=(2, 3, 4))
    ws = [relay.var(f"w{n}", shape=(2, n + 2, 4)) for n in range(3)]
    bs = [relay.var(f"b{n}", shape=(n + 2,)) for n in range(3)]
    ys = [relay.nn.relu(relay.add(relay.nn.batch_matmul(x, w), b)) for w, b in zip(ws, bs)]
    mod = tvm.IRModule.from_expr(relay.Function([x, *ws, *bs], relay.Tuple(ys)))
    check_semantics(CombineParallelBatchMatmulPass(), mod)
    out = transform.CombineParallelBatchMatmul()(mod.clone())
    assert count_ops(out) == {
        "concatenate": 2, "nn.batch_matmul": 1, "add": 1, "nn.relu": 1, "strided_slice": 3
    }  # fmt: skip


def test_not_combined():
    """transpose_b=False (Relay's legacy restriction) and a broadcast scalar operand."""
    x = relay.var("x", shape=(2, 3, 4))
    ws = [relay.var(f"w{n}", shape=(2, 4, 5)) for n in range(2)]
    ys = [relay.nn.batch_matmul(x, w, transpose_b=False) for w in ws]
    mod = tvm.IRModule.from_expr(relay.Function([x, *ws], relay.Tuple(ys)))
    assert count_ops(transform.CombineParallelBatchMatmul(2)(mod))["nn.batch_matmul"] == 2

    vs = [relay.var(f"v{n}", shape=(2, 5, 4)) for n in range(2)]
    s = [relay.var(f"s{n}", shape=(1,)) for n in range(2)]
    ys = [relay.multiply(relay.nn.batch_matmul(x, v), c) for v, c in zip(vs, s)]
    mod = tvm.IRModule.from_expr(relay.Function([x, *vs, *s], relay.Tuple(ys)))
    check_semantics(CombineParallelBatchMatmulPass(2), mod)
    counts = count_ops(transform.CombineParallelBatchMatmul(2)(mod))
    assert counts["nn.batch_matmul"] == 1 and counts["multiply"] == 2


def test_random_dags():
    for seed in range(3):
        check_semantics(CombineParallelBatchMatmulPass(2), random_dag(seed, 30))
