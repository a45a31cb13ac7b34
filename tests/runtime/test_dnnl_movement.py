"""Data movement between oneDNN steps runs inside the oneDNN run (``offload_movement`` +
``primitives._Reader._move``): ShuffleNet's channel shuffle, Swin's cyclic shift, window
partition and reverse with the residual add, patch merging, plain transposes. The models
here put 1x1 max pools (oneDNN steps that are exact) around the movement, so each output
equals numpy's bits, and the step list shows no native step but the input copies."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.runtime.dnnl.library import dnnl_library

RNG = np.random.default_rng(0)


def _mod(body, *xs):
    return relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function(list(xs), body)))


def _pool(x, layout="NCHW"):
    return relay.nn.max_pool2d(x, pool_size=(1, 1), layout=layout)


def _run(mod, feeds, threads=None):
    assert dnnl_library() is not None  # (oneDNN is pinned: make test requires it)
    m = xrelay.build(mod, None, threads=threads)
    m.set_input(**feeds)
    m.run()
    return m, [m.get_output(i).numpy() for i in range(m.get_num_outputs())]


def _steps(m):
    return [(b, ops) for (_, ops, _), b in zip(m.executor.steps, m.executor.step_backends)]


def _moves(m):
    """(label, the shim's kernel or oneDNN's reorder) of each movement step."""
    out = []
    for (name, ops, c), b in zip(m.executor.steps, m.executor.step_backends):
        if b == "dnnl" and "dnnl_move" in name:
            out.append((ops, c.dnnl_plan.impls[0]))
    return out


def _shuffle(x, channels, h, w, groups):
    y = relay.reshape(x, (1, groups, channels // groups, h, w))
    return relay.reshape(relay.transpose(y, (0, 2, 1, 3, 4)), (1, channels, h, w))


def _shuffle_ref(a, groups):
    n, c, h, w = a.shape
    return a.reshape(n, groups, c // groups, h, w).transpose(0, 2, 1, 3, 4).reshape(n, c, h, w)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("c, size, groups", [(8, 6, 2), (12, 5, 3), (116, 28, 2), (64, 9, 4)])
def test_shufflenet_units_run_in_one_onednn_run(c, size, groups, threads):
    """Two ShuffleNetV2 units: split, the branch (pools), concatenation, channel shuffle.
    ConvertLayout puts the pools in NHWC with layout transforms around the shuffle's
    reshapes; each concatenation, its shuffle, the next split and those transforms are one
    function of strided copies (the next unit's concatenation reads the passthrough half,
    so the regions do not merge: a region must not read its own result through the
    branch). The whole model is one oneDNN run, and the output is numpy's."""
    x = relay.var("x", shape=(1, c, size, size))
    y = _pool(x)
    for _ in range(2):
        half = relay.split(y, 2, axis=1)
        b = _pool(_pool(half[1]))
        y = _shuffle(relay.concatenate([half[0], b], axis=1), c, size, size, groups)
    body = _pool(y)
    feeds = {"x": RNG.standard_normal((1, c, size, size)).astype("float32")}
    m, (out,) = _run(_mod(body, x), feeds, threads)
    ref = feeds["x"]
    for _ in range(2):
        ref = _shuffle_ref(ref, groups)
    assert np.std(out) > 0.5
    np.testing.assert_array_equal(out, ref)
    steps = _steps(m)
    assert [s for s in steps if s[0] != "dnnl"] == [("native", "copy")], steps
    shuffles = [(ops, impl) for ops, impl in _moves(m) if "transpose" in ops]
    assert len(shuffles) == 2 and all(impl == "strided copies" for _, impl in shuffles), _moves(m)
    program = m.executor.run_program()
    assert (program.dnnl_runs, program.engine_switches) == (1, 0), program
    report = m.executor.outside_arena()
    assert (report.held_bytes, report.run_bytes) == (0, 0)
    m.set_input(x=feeds["x"][:, ::-1].copy())  # the result follows the input
    m.run()
    np.testing.assert_array_equal(
        m.get_output(0).numpy(), _shuffle_ref(_shuffle_ref(feeds["x"][:, ::-1], groups), groups)
    )


def _roll(x, shift, axes, n):
    """``torch.roll`` of the axes ``axes`` (each of size ``n``) as torch exports it: two
    slices and a concatenation per axis."""
    k = shift % n
    for axis in axes:
        head = relay.strided_slice(x, begin=[n - k], end=[n], axes=[axis])
        tail = relay.strided_slice(x, begin=[0], end=[n - k], axes=[axis])
        x = relay.concatenate([head, tail], axis=axis)
    return x


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("size, window, channels", [(8, 4, 6), (14, 7, 12)])
def test_swin_shift_windows_and_residual_run_in_the_onednn_run(size, window, channels, threads):
    """Swin's shifted-window block around its attention (here a pool over the windows):
    the cyclic shift (slices and concatenations on two axes) and the window partition
    (reshape, transpose, reshape) before it, the window reverse and the shift back after
    it, then the residual add: two functions of strided copies, the second running each
    element through the add on its way. No native step; numpy's bits."""
    x = relay.var("x", shape=(1, size, size, channels))
    h = _pool(x, "NHWC")
    s, nw = -(window // 2), size // window
    r = _roll(h, s, (1, 2), size)
    r = relay.reshape(r, (1, nw, window, nw, window, channels))
    r = relay.reshape(relay.transpose(r, (0, 1, 3, 2, 4, 5)), (nw * nw, window, window, channels))
    a = _pool(r, "NHWC")  # the windows' attention
    back = relay.reshape(a, (1, nw, nw, window, window, channels))
    back = relay.reshape(relay.transpose(back, (0, 1, 3, 2, 4, 5)), (1, size, size, channels))
    back = _roll(back, -s, (1, 2), size)
    body = _pool(relay.add(h, back), "NHWC")
    feeds = {"x": RNG.standard_normal((1, size, size, channels)).astype("float32")}
    m, (out,) = _run(_mod(body, x), feeds, threads)
    ref = feeds["x"] + feeds["x"]  # the shift and its reverse cancel
    assert np.std(out) > 0.5
    np.testing.assert_array_equal(out, ref)
    steps = _steps(m)
    assert [s for s in steps if s[0] != "dnnl"] == [("native", "copy")], steps
    moves = _moves(m)
    assert [ops for ops, _ in moves] == [
        "strided_slice, concatenate, transpose",
        "transpose, strided_slice, concatenate, add",
    ], moves
    assert all(impl == "strided copies" for _, impl in moves), moves


@pytest.mark.parametrize("op, swapped", [("subtract", False), ("subtract", True), ("maximum", False),
                                         ("minimum", True), ("multiply", False)])  # fmt: skip
def test_elementwise_chain_after_the_movement(op, swapped):
    """A transpose then a chain of two elementwise ops by oneDNN results (``subtract`` in
    both operand orders, ``maximum``, ``minimum``, ``multiply``, then an ``add``): each
    element goes through the chain on its way, as numpy computes it."""
    x = relay.var("x", shape=(1, 6, 10, 8))
    ys = [relay.var(f"y{i}", shape=(1, 10, 6, 8)) for i in range(2)]
    t = relay.transpose(_pool(x, "NHWC"), (0, 2, 1, 3))
    q, r = (_pool(v, "NHWC") for v in ys)
    e = getattr(relay, op)(*((q, t) if swapped else (t, q)))
    body = _pool(relay.add(e, r), "NHWC")
    feeds = {"x": RNG.standard_normal((1, 6, 10, 8)).astype("float32")}
    feeds.update({f"y{i}": RNG.standard_normal((1, 10, 6, 8)).astype("float32") for i in range(2)})
    m, (out,) = _run(_mod(body, x, *ys), feeds)
    a, b = feeds["x"].transpose(0, 2, 1, 3), feeds["y0"]
    g = getattr(np, op)
    ref = (g(b, a) if swapped else g(a, b)) + feeds["y1"]
    assert np.all(np.isfinite(out)) and np.std(out) > 0.5
    np.testing.assert_array_equal(out, ref)
    assert [s for s in _steps(m) if s[0] != "dnnl"] == [("native", "copy")] * 3, _steps(m)
    assert [ops for ops, _ in _moves(m)] == [f"transpose, {op}, add"], _moves(m)


def test_one_pattern_is_a_onednn_reorder_and_long_rows_are_cut():
    """A transpose between oneDNN steps (one strided pattern) is one oneDNN reorder; a
    concatenation and split of long rows (each input 2 x 8192 elements: rows cut to 4096)
    are strided copies, the threads sharing each row's parts."""
    x = relay.var("x", shape=(1, 16, 12, 5))
    t = relay.transpose(_pool(x), (0, 3, 1, 2))  # (1, 5, 16, 12): not the pools' NHWC
    body = _pool(relay.layout_transform(t, "NCHW", "NHWC"), "NHWC")
    feeds = {"x": RNG.standard_normal((1, 16, 12, 5)).astype("float32")}
    m, (out,) = _run(_mod(body, x), feeds, threads=2)
    np.testing.assert_array_equal(out, feeds["x"].transpose(0, 3, 1, 2).transpose(0, 2, 3, 1))
    assert [s for s in _steps(m) if s[0] != "dnnl"] == [("native", "copy")], _steps(m)
    assert all(impl != "strided copies" for _, impl in _moves(m)), _moves(m)

    ys = [relay.var(f"y{i}", shape=(2, 8192, 1, 1)) for i in range(2)]
    c = relay.concatenate([_pool(v) for v in ys], axis=1)  # (2, 16384)
    parts = relay.split(relay.reshape(c, (2, 2, 8192, 1)), 2, axis=1)
    body = relay.Tuple(
        [
            _pool(relay.reshape(parts[1], (2, 8192, 1, 1))),
            _pool(relay.reshape(parts[0], (2, 8192, 1, 1))),
        ]
    )
    feeds = {f"y{i}": RNG.standard_normal((2, 8192, 1, 1)).astype("float32") for i in range(2)}
    m, outs = _run(_mod(body, *ys), feeds, threads=2)
    np.testing.assert_array_equal(outs[0], feeds["y1"])
    np.testing.assert_array_equal(outs[1], feeds["y0"])
    assert [s for s in _steps(m) if s[0] != "dnnl"] == [("native", "copy")] * 2, _steps(m)
    assert [impl for ops, impl in _moves(m) if "split" in ops] == ["strided copies"], _moves(m)


def test_movement_read_by_a_native_step_stays_native():
    """A shuffle whose result a native step reads (an ``argmax``, which oneDNN does not
    run) stays with the native kernels: oneDNN takes only regions whose edges are its own
    steps (or the model's inputs and outputs)."""
    x = relay.var("x", shape=(1, 8, 4, 4))
    y = _shuffle(_pool(x), 8, 4, 4, 2)
    body = relay.argmax(y, axis=[1])
    feeds = {"x": RNG.standard_normal((1, 8, 4, 4)).astype("float32")}
    m, (out,) = _run(_mod(body, x), feeds)
    np.testing.assert_array_equal(out, np.argmax(_shuffle_ref(feeds["x"], 2), axis=1))
    assert not [ops for ops, _ in _moves(m) if "transpose" in ops], _steps(m)
    assert any(b == "native" and "transpose" in ops for b, ops in _steps(m)), _steps(m)


def test_regions_that_read_each_other_are_not_both_outlined():
    """Two movement regions, each one call's worth of ops on its own, that read each
    other's results through oneDNN steps (CrossViT's branches swapping class tokens): once
    one is a call, the other would read its own result through it. The build used to put
    the second call before what it reads (fuse-ops refused the graph: "nodes must be in
    topological order"); now the second region stays where it was."""
    x, y = relay.var("x", shape=(1, 8, 4, 4)), relay.var("y", shape=(1, 8, 4, 4))
    a, b = relay.strided_slice(_pool(x), [0, 0], [1, 4]), relay.strided_slice(_pool(y), [0, 0], [1, 4])
    swapped_a = relay.concatenate([a, _pool(b)], axis=1)  # reads b's region through a pool
    swapped_b = relay.concatenate([b, _pool(a)], axis=1)  # and b's region reads a's
    mod = _mod(relay.Tuple([_pool(swapped_a), _pool(swapped_b)]), x, y)
    feeds = {k: RNG.standard_normal((1, 8, 4, 4)).astype("float32") for k in ("x", "y")}
    m, (first, second) = _run(mod, feeds)
    np.testing.assert_array_equal(first, np.concatenate([feeds["x"][:, :4], feeds["y"][:, :4]], axis=1))
    np.testing.assert_array_equal(second, np.concatenate([feeds["y"][:, :4], feeds["x"][:, :4]], axis=1))
    regions = [ops for ops, _ in _moves(m) if "concatenate" in ops]
    assert regions == ["strided_slice, concatenate"]  # one outlined, the other native


def test_two_slices_added_together_give_their_add_to_one_region():
    """N-BEATS' blocks: each block's output sliced into a backcast (subtracted from the
    input) and a forecast, the forecasts of the blocks added together. Two slices whose one
    use is the same add both had it as their region's elementwise tail, and outlining the
    second took an op the first had taken (the build failed with a KeyError); now the add
    is the first region's. The native engine's values."""
    rng = np.random.default_rng(3)

    def weight(*shape):
        return relay.const((rng.standard_normal(shape) * 0.1).astype("float32"))

    x = relay.var("x", shape=(8, 96))
    h, forecast = x, None
    for _ in range(3):
        o = relay.nn.dense(relay.nn.relu(relay.nn.dense(h, weight(64, 96))), weight(120, 64))
        h = relay.subtract(h, relay.strided_slice(o, begin=[0], end=[96], axes=[1]))
        part = relay.strided_slice(o, begin=[96], end=[120], axes=[1])
        forecast = part if forecast is None else relay.add(forecast, part)
    mod = _mod(forecast, x)
    feeds = {"x": rng.standard_normal((8, 96)).astype("float32")}
    m, (out,) = _run(mod, feeds)
    ref = xrelay.build(mod, None, backends=("native",))
    ref.set_input(**feeds)
    ref.run()
    want = ref.get_output(0).numpy()
    assert np.isfinite(out).all() and np.abs(want).max() > 0.01
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    assert any(b == "dnnl" and "strided_slice" in ops for b, ops in _steps(m)), _steps(m)
