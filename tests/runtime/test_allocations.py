"""The allocation counter (``runtime.allocations``) and ``Executor.outside_arena``: every array
a run allocates outside the planned arenas is counted and named by its step."""

from __future__ import annotations

import threading

import numpy as np

from xrelay.backend.build import build_program
from xrelay.frontends.onnx import from_onnx
from xrelay.runtime.allocations import count_allocations
from xrelay.runtime.executor import Executor
from xrelay.testing import onnx_models


def test_counts_temporaries_not_in_place_work():
    a = np.ones(1000, np.float32)
    out = np.empty_like(a)
    two = np.array(2, np.float32)
    with count_allocations() as counted:
        np.add(a, a, out=out)
        np.multiply(out, two, out=out)
    assert (counted.bytes, counted.count) == (0, 0)
    with count_allocations() as counted:
        np.multiply(out, np.float32(2), out=out)  # the scalar becomes a 0-d array
    assert counted.count >= 1 and counted.bytes >= 4
    with count_allocations() as counted:
        b = a * 2 + 1  # a temporary (maybe elided into b) and b
        c = np.empty((100, 100))
    assert counted.bytes >= a.nbytes + c.nbytes
    assert counted.largest == c.nbytes
    assert counted.live == counted.peak >= a.nbytes + c.nbytes
    del b, c


def test_frees_lower_live_and_peak_keeps_the_most():
    with count_allocations() as counted:
        for _ in range(3):
            t = np.empty(4096, np.float64)
            del t
    assert counted.count == 3
    assert counted.bytes == 3 * 4096 * 8
    assert counted.live == 0
    assert counted.peak == 4096 * 8


def test_only_the_block_is_counted():
    with count_allocations() as counted:
        pass
    np.empty(10_000)
    assert counted.count == 0
    # the handler is the default again (another thread never had ours)
    seen = []
    with count_allocations() as counted:
        t = threading.Thread(target=lambda: seen.append(np.ones(100)))
        t.start()
        t.join()
    assert seen and counted.count == 0


def test_where_names_the_frames():
    with count_allocations(where=True) as counted:
        np.ones(10) + 1
    assert counted.where and all(n > 0 for n, _ in counted.where)
    assert any("test_where_names_the_frames" in w for _, w in counted.where)


def _executor(threads: int = 1) -> Executor:
    mod, params = from_onnx(onnx_models.mobilenet_v2(image=64, num_classes=10, width=0.5))
    program, _ = build_program(mod, params)
    ex = Executor(program, threads=threads)
    rng = np.random.default_rng(0)
    for buf in ex.input_buffers:
        np.copyto(buf, rng.standard_normal(buf.shape))
    return ex


def test_outside_arena_is_zero_for_a_planned_cnn():
    ex = _executor()
    report = ex.outside_arena()
    assert report.arena_bytes == ex.arena_bytes > 0
    assert (report.held_bytes, report.run_bytes, report.run_count, report.steps) == (0, 0, 0, [])
    assert report.total_bytes == 0


def test_outside_arena_names_a_step_that_allocates():
    """Breaking a step so that it makes a temporary (as a reference kernel returning a new
    array would) shows in the report with the step's index and bytes."""
    ex = _executor()
    index = next(i for i, (n, _, _) in enumerate(ex.steps) if n != "memory.copy")
    name, ops, compiled = ex.steps[index]
    dest = ex.step_dests[index][0]
    run = compiled.thunks[0][2]

    def allocating() -> None:
        run()
        np.copyto(dest, dest * 1.0)  # an output-sized temporary

    compiled.thunks[0] = (compiled.thunks[0][0], compiled.thunks[0][1], allocating)
    report = ex.outside_arena()
    assert [s[:3] for s in report.steps] == [(index, name, ops)]
    assert report.run_bytes >= dest.nbytes
    assert report.run_peak >= dest.nbytes
    assert report.total_bytes == report.run_peak


def test_outside_arena_counts_on_a_one_thread_twin():
    ex = _executor(threads=2)
    report = ex.outside_arena()
    assert report.total_bytes == 0 and report.arena_bytes == ex.arena_bytes


def _elementwise_model():
    """Unary float ops, a sigmoid in and out of place, reductions: the kernels that used to
    compute fresh arrays and copy them into their destinations."""
    import xrelay
    from xrelay import relay

    x = relay.var("x", shape=(2, 24, 9, 11))
    h = relay.sigmoid(relay.multiply(x, relay.const(np.float32(3.0))))  # 4752 > one chunk
    h = relay.add(h, relay.exp(relay.negative(x)))
    h = relay.add(h, relay.tanh(x))
    h = relay.add(h, relay.erf(x))
    h = relay.add(h, relay.rsqrt(relay.add(relay.abs(x), relay.const(np.float32(0.5)))))
    swish = relay.multiply(h, relay.sigmoid(h))
    m = relay.mean(swish, axis=[2, 3], keepdims=True)
    s = relay.sum(swish, axis=[1], keepdims=False)
    mx = relay.max(swish, axis=[3])
    mn = relay.min(swish, axis=[0, 2], keepdims=True)
    p1 = relay.nn.avg_pool2d(swish, pool_size=(3, 3), strides=(1, 1), padding=(1, 1))
    p2 = relay.nn.avg_pool2d(x, pool_size=(3, 2), strides=(2, 2), padding=(1, 0, 1, 1),
                             ceil_mode=True, count_include_pad=True)  # fmt: skip
    q = relay.divide(p1, relay.add(relay.abs(p1), relay.const(np.float32(1.0))))
    keep = relay.greater(q, relay.const(np.float32(0.1)))
    w = relay.where(keep, q, relay.const(np.float32(-1.0)))
    padded = relay.nn.pad(relay.nn.relu(w), ((0, 0), (1, 0), (0, 2), (3, 1)), pad_value=0.5)
    out = relay.Tuple([relay.add(swish, m), s, mx, mn, relay.sqrt(relay.abs(mn)), p2, padded])
    mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function([x], out)))
    return mod


def test_unary_sigmoid_reductions_allocate_nothing_and_keep_the_reference_bits():
    program, _ = build_program(_elementwise_model(), {})
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((2, 24, 9, 11)) * 4).astype(np.float32)
    x[0, 0, 0, :3] = [0.0, -0.0, 40.0]
    results = []
    # the numpy fast kernels (the C elementwise loops' exp, tanh and sigmoid are not numpy's
    # bits), the reference kernels, and the default kernels for the allocations alone
    for fast, c_kernels in ((True, False), (False, False), (True, True)):
        ex = Executor(program, threads=1, fast=fast, use_c_kernels=c_kernels)
        np.copyto(ex.input_buffers[0], x)
        ex.run()
        results.append([o.copy() for o in ex.outputs])
        if fast:
            report = ex.outside_arena()
            assert (report.held_bytes, report.run_bytes, report.steps) == (0, 0, [])
    for a, b in zip(*results[:2]):
        assert np.all(np.isfinite(a)) and np.array_equal(a, b)


def _attention_model():
    """A masked attention block's non-matmul ops: softmax, a bool where, casts, take."""
    import xrelay
    from xrelay import relay

    ids = relay.var("ids", shape=(1, 16), dtype="int64")
    mask = relay.var("mask", shape=(1, 16), dtype="int64")
    table = relay.const(np.random.default_rng(5).standard_normal((50, 8)).astype(np.float32))
    emb = relay.take(table, ids, axis=0)  # (1, 16, 8)
    # constant indices (read-only views of the IR's data, which numpy would copy every call)
    picked = relay.take(emb, relay.const(np.array([0, 2, 4, 6], np.int64)), axis=2)
    scores = relay.nn.batch_matmul(emb, emb)  # (1, 16, 16)
    keep = relay.not_equal(relay.cast(mask, "bool"), relay.const(np.zeros((1, 16), bool)))
    keep = relay.reshape(keep, (1, 1, 16))
    scores = relay.where(keep, scores, relay.const(np.float32(-1e4)))
    p = relay.nn.softmax(scores, axis=-1)
    rows = relay.gather_nd(relay.reshape(p, (16, 16)), relay.const(np.array([[3, 0, -1]], np.int64)))
    projected = relay.nn.matmul(picked, relay.const(np.ones((4, 3), np.float32)))  # the reference matmul
    out = relay.Tuple([p, relay.cast(mask, "float32"), rows, relay.nn.relu(picked), projected])
    return relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function([ids, mask], out)))


def test_attention_ops_allocate_nothing_and_keep_the_reference_bits():
    program, _ = build_program(_attention_model(), {})
    rng = np.random.default_rng(6)
    feeds = {"ids": rng.integers(0, 50, (1, 16)), "mask": (np.arange(16) < 12).astype(np.int64)[None]}
    results = []
    for fast in (True, False):
        ex = Executor(program, threads=1, fast=fast)
        for name, buf in zip(ex.input_names, ex.input_buffers):
            np.copyto(buf, feeds[name])
        ex.run()
        results.append([o.copy() for o in ex.outputs])
        if fast:
            report = ex.outside_arena()
            assert (report.held_bytes, report.run_bytes, report.steps) == (0, 0, [])
    for a, b in zip(*results):
        assert np.all(np.isfinite(a)) and np.array_equal(a, b)
    assert np.all(results[0][0][..., 12:] < 1e-3)  # the mask took effect


def test_padded_max_pools_allocate_nothing():
    """Max pools whose windows reach into the padding (ceil mode: GoogLeNet's and SqueezeNet's
    pools, channels-last after a oneDNN convolution) floor those windows at the dtype's lowest
    value in place: nothing outside the arena."""
    from xrelay.testing.onnx_models import GraphBuilder

    g = GraphBuilder(0)
    y = g.relu(g.conv("x", 3, 64, 3, stride=1, pad=1, name="c"))
    y = g.node("MaxPool", [y], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    mod, params = from_onnx(g.model({"x": ([1, 3, 56, 56], np.float32)}, [y], "pools"))
    for backends in (("native",), ("dnnl", "native")):
        program, _ = build_program(mod, params, backends=backends)
        ex = Executor(program, threads=1)
        np.copyto(ex.input_buffers[0], np.random.default_rng(0).standard_normal(ex.input_buffers[0].shape))
        report = ex.outside_arena()
        assert (report.held_bytes, report.run_bytes, report.steps) == (0, 0, []), backends


def _computed_gather_model():
    """``gather_nd`` whose indices the model computes (RoBERTa's position ids: a
    ``where`` over the token ids, stacked with a batch row), with negative indices wrapped,
    and one with ``batch_dims = 1``."""
    import xrelay
    from xrelay import relay

    ids = relay.var("ids", shape=(2, 6), dtype="int64")
    table = relay.const(np.arange(2 * 9 * 3, dtype=np.float32).reshape(2, 9, 3) * 0.5 - 7)
    # ids in [-9, 9): negative ones count from the end, as ONNX's GatherND (the where keeps
    # them: computed indices the compiler cannot fold)
    floor = relay.const(-100, "int64")
    shifted = relay.where(relay.less(ids, floor), relay.zeros_like(ids), ids)
    rows = relay.stack([relay.const(np.array([[0] * 6, [1] * 6]), "int64"), shifted], axis=0)  # (2, 2, 6)
    picked = relay.gather_nd(table, rows)  # (2, 6, 3)
    per_batch = relay.gather_nd(table, relay.expand_dims(shifted, 0), batch_dims=1)  # (2, 6, 3)
    return relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function([ids], relay.Tuple([picked, per_batch]))))


def _run_gather(program, ids, fast):
    ex = Executor(program, threads=1, fast=fast)
    np.copyto(ex.input_buffers[0], ids)
    ex.run()
    return ex, [o.copy() for o in ex.outputs]


def test_computed_gather_nd_allocates_nothing_and_keeps_the_reference_values():
    program, _ = build_program(_computed_gather_model(), {})
    ids = np.array([[0, 3, -1, 8, -9, 4], [5, -2, 7, 1, 0, -5]], np.int64)
    ex, fast = _run_gather(program, ids, True)
    _, reference = _run_gather(program, ids, False)
    table = np.arange(2 * 9 * 3, dtype=np.float32).reshape(2, 9, 3) * 0.5 - 7
    want = [table[np.array([[0] * 6, [1] * 6]), ids], table[np.arange(2)[:, None], ids]]
    for got, ref, w in zip(fast, reference, want):
        assert np.array_equal(got, ref) and np.array_equal(got, w)
    report = ex.outside_arena()
    assert (report.held_bytes, report.run_bytes, report.steps) == (0, 0, [])
    # other ids, other rows: the positions are computed every run
    np.copyto(ex.input_buffers[0], ids[:, ::-1])
    ex.run()
    assert np.array_equal(ex.outputs[0], table[np.array([[0] * 6, [1] * 6]), ids[:, ::-1]])


def test_computed_gather_nd_refuses_an_index_out_of_range_like_the_reference():
    program, _ = build_program(_computed_gather_model(), {})
    ids = np.zeros((2, 6), np.int64)
    ids[1, 4] = 9  # one past the end
    errors = []
    for fast in (True, False):
        try:
            _run_gather(program, ids, fast)
        except Exception as e:  # the executor's report of the kernel's IndexError
            errors.append((type(e), "out of range" in str(e)))
    assert errors == [errors[1]] * 2 and errors[0][1], errors
    ids[1, 4] = -10  # one before the start
    try:
        _run_gather(program, ids, True)
    except Exception as e:
        assert "out of range" in str(e)
    else:
        raise AssertionError("an index of -10 on a dimension of 9 ran")
