"""Functions that only move data (``runtime.native.movement``): ShuffleNet's channel shuffle
and other chains of concatenate / reshape / transpose / split / strided_slice run as one
strided copy per (result, input) pair, with the reference's bits and nothing outside the
arena; anything else keeps the op-by-op path."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.backend.build import build_program
from xrelay.runtime.executor import Executor

RNG = np.random.default_rng(0)


def _labels(m):
    return [label for name, _, c in m.executor.steps if name != "memory.copy" for label, _, _ in c.thunks]


def _shuffle(shape, axis, groups=2):
    """ShuffleNetV2's channel shuffle of two branches, then its split, on ``axis``."""
    xs = [relay.var(f"x{i}", shape=shape) for i in range(2)]
    y = relay.concatenate(xs, axis=axis)
    full = list(shape)
    full[axis] *= 2
    grouped = full[:axis] + [groups, full[axis] // groups] + full[axis + 1 :]
    perm = list(range(len(grouped)))
    perm[axis], perm[axis + 1] = perm[axis + 1], perm[axis]
    y = relay.reshape(relay.transpose(relay.reshape(y, grouped), perm), full)
    s = relay.split(y, [shape[axis]], axis=axis)
    body = relay.Tuple([s[0], s[1]])

    def ref(a, b):
        r = np.concatenate([a, b], axis).reshape(grouped).transpose(perm).reshape(full)
        return np.split(r, [shape[axis]], axis)

    return xs, body, ref


@pytest.mark.parametrize("shape, axis", [((1, 58, 7, 9), 1), ((2, 6, 5, 24), 3), ((1, 3, 4, 10), 1)])
def test_channel_shuffle_is_strided_copies(shape, axis):
    xs, body, ref = _shuffle(shape, axis)
    mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function(xs, body)))
    feeds = {f"x{i}": RNG.standard_normal(shape).astype("float32") for i in range(2)}
    m = xrelay.build(mod, None, backends=("native",))
    m.set_input(**feeds)
    m.run()
    for i, r in enumerate(ref(feeds["x0"], feeds["x1"])):
        np.testing.assert_array_equal(m.get_output(i).numpy(), r)
    assert _labels(m) == ["concatenate, reshape, transpose, split as strided copies"]
    (compiled,) = [c for name, _, c in m.executor.steps if name != "memory.copy"]
    copies = compiled.thunks[0][2].__closure__[0].cell_contents
    assert len(copies) == 4  # each result from each input: one copy, every element once
    program, _ = build_program(mod, None, backends=("native",))
    report = Executor(program, threads=1).outside_arena()
    assert (report.held_bytes, report.run_bytes, report.steps) == (0, 0, [])


def test_slices_and_transposes_of_one_input():
    x = relay.var("x", shape=(2, 6, 8, 5))
    y = relay.strided_slice(relay.transpose(x, (0, 2, 3, 1)), begin=[0, 1, 0, 0], end=[2, 7, 5, 6], strides=[1, 2, 1, 1])
    y = relay.reshape(y, (2, -1))
    mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function([x], y)))
    a = RNG.standard_normal((2, 6, 8, 5)).astype("float32")
    m = xrelay.build(mod, None, backends=("native",))
    m.set_input(x=a)
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), a.transpose(0, 2, 3, 1)[:, 1:7:2].reshape(2, -1))
    # (canonicalize-views slices before the transpose: the slice's elements move once; a
    # row's 6 elements are 40 apart in the input, so the elementwise loop's tiles move them:
    # runtime.native.elementwise_loop.STRIDED_ROW)
    assert _labels(m) == ["strided_slice, transpose, reshape as one loop"]


def test_functions_that_compute_keep_their_kernels():
    xs = [relay.var(f"x{i}", shape=(1, 4, 3, 3)) for i in range(2)]
    y = relay.add(relay.concatenate(xs, axis=1), relay.const(np.float32(1)))
    y = relay.reshape(relay.transpose(relay.reshape(y, (1, 2, 4, 3, 3)), (0, 2, 1, 3, 4)), (1, 8, 3, 3))
    mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function(xs, y)))
    m = xrelay.build(mod, None, backends=("native",))
    labels = _labels(m)
    assert labels and not any("strided copies" in label for label in labels), labels




def _swin(h=8, w=12, c=4, win=4, shift=2):
    """Swin's shifted window partition (roll by -shift on both axes, then windows of
    win x win) and its window reverse (roll back) with the residual add."""
    x = relay.var("x", shape=(1, h, w, c))
    y = x
    for a, n in ((1, h), (2, w)):
        k = shift
        y = relay.concatenate([relay.strided_slice(y, begin=[k], end=[n], strides=[1], axes=[a]),
                               relay.strided_slice(y, begin=[0], end=[k], strides=[1], axes=[a])], axis=a)  # fmt: skip
    y = relay.reshape(y, (1, h // win, win, w // win, win, c))
    part = relay.reshape(relay.transpose(y, (0, 1, 3, 2, 4, 5)), (-1, win * win, c))
    nw = (h // win) * (w // win)

    def partition(a):
        r = np.roll(a, (-shift, -shift), axis=(1, 2)).reshape(1, h // win, win, w // win, win, c)
        return r.transpose(0, 1, 3, 2, 4, 5).reshape(nw, win * win, c)

    z = relay.var("z", shape=(nw, win * win, c))
    r = relay.var("r", shape=(1, h, w, c))
    u = relay.reshape(relay.transpose(relay.reshape(z, (1, h // win, w // win, win, win, c)), (0, 1, 3, 2, 4, 5)), (1, h, w, c))
    for a, n in ((1, h), (2, w)):
        k = n - shift
        u = relay.concatenate([relay.strided_slice(u, begin=[k], end=[n], strides=[1], axes=[a]),
                               relay.strided_slice(u, begin=[0], end=[k], strides=[1], axes=[a])], axis=a)  # fmt: skip
    rev = relay.add(r, u)

    def reverse(zv, rv):
        t = zv.reshape(1, h // win, w // win, win, win, c).transpose(0, 1, 3, 2, 4, 5).reshape(1, h, w, c)
        return rv + np.roll(t, (shift, shift), axis=(1, 2))

    return (x, part, partition), (z, r, rev, reverse)


@pytest.mark.parametrize("h, w, shift", [(8, 12, 2), (8, 8, 0), (12, 8, 3)])
def test_shifted_window_partition_is_strided_copies(h, w, shift):
    """Swin's cyclic shift and window partition: a few strided copies (not one per op), the
    reference's bits, nothing outside the arena."""
    (x, part, partition), _ = _swin(h, w, shift=shift)
    mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function([x], part)))
    a = RNG.standard_normal((1, h, w, 4)).astype("float32")
    m = xrelay.build(mod, None, backends=("native",))
    m.set_input(x=a)
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), partition(a))
    (label,) = _labels(m)
    assert label.endswith("as strided copies")
    (compiled,) = [c for name, _, c in m.executor.steps if name != "memory.copy"]
    copies = compiled.thunks[0][2].__closure__[0].cell_contents
    assert 1 <= len(copies) <= (1 if shift == 0 else 16)  # the wrapped and unwrapped parts
    program, _ = build_program(mod, None, backends=("native",))
    report = Executor(program, threads=1).outside_arena()
    assert (report.held_bytes, report.run_bytes, report.steps) == (0, 0, [])


@pytest.mark.parametrize("h, w, shift", [(8, 12, 2), (12, 8, 3)])
def test_window_reverse_with_residual_add_is_one_pass(h, w, shift):
    """The window reverse, the shift back and the residual add: each pattern adds the
    residual seen at the result's positions to the moved windows, the reference's bits."""
    _, (z, r, rev, reverse) = _swin(h, w, shift=shift)
    mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function([z, r], rev)))
    nw = (h // 4) * (w // 4)
    zv = RNG.standard_normal((nw, 16, 4)).astype("float32")
    rv = RNG.standard_normal((1, h, w, 4)).astype("float32")
    m = xrelay.build(mod, None, backends=("native",))
    m.set_input(z=zv, r=rv)
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), reverse(zv, rv))
    (label,) = _labels(m)
    assert label.endswith("as strided copies + add")
    program, _ = build_program(mod, None, backends=("native",))
    report = Executor(program, threads=1).outside_arena()
    assert (report.held_bytes, report.run_bytes, report.steps) == (0, 0, [])


def test_subtract_after_movement_keeps_its_operand_order():
    x = relay.var("x", shape=(2, 3, 4))
    r = relay.var("r", shape=(4, 3, 2))
    y = relay.subtract(r, relay.transpose(x, (2, 1, 0)))
    y = relay.multiply(y, r)
    mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function([x, r], y)))
    a = RNG.standard_normal((2, 3, 4)).astype("float32")
    b = RNG.standard_normal((4, 3, 2)).astype("float32")
    m = xrelay.build(mod, None, backends=("native",))
    m.set_input(x=a, r=b)
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), (b - a.transpose(2, 1, 0)) * b)
    assert _labels(m) == ["transpose as strided copies + subtract, multiply"]


def test_scaled_query_from_the_fused_projection_is_one_pass():
    """Attention's Q: a slice of the heads-permuted projection, scaled by a constant."""
    x = relay.var("x", shape=(3, 2, 5, 4))
    q = relay.reshape(relay.strided_slice(x, begin=[0], end=[1], strides=[1], axes=[0]), (2, 5, 4))
    q = relay.transpose(q, (0, 2, 1))
    y = relay.multiply(q, relay.const(np.float32(0.125)))
    mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function([x], y)))
    a = RNG.standard_normal((3, 2, 5, 4)).astype("float32")
    m = xrelay.build(mod, None, backends=("native",))
    m.set_input(x=a)
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), a[0].transpose(0, 2, 1) * np.float32(0.125))
    assert _labels(m) == ["strided_slice, reshape, transpose as strided copies + multiply"]


def test_a_chain_that_starts_with_a_unary_op_of_another_input_is_one_loop():
    """A function whose movement is followed by a unary op of another argument (GhostNetV2's
    attention gate: ``x`` moved, times ``sigmoid(gate)``) is no movement function; the check
    read the unary op's second operand and failed the build with an IndexError. It is one
    elementwise loop (the transpose a strided view of its input)."""
    x, z = relay.var("x", shape=(1, 8, 4, 6)), relay.var("z", shape=(1, 4, 6, 8))
    y = relay.multiply(relay.transpose(x, (0, 2, 3, 1)), relay.sigmoid(z))
    mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function([x, z], y)))
    m = xrelay.build(mod, None, backends=("native",))
    xv, zv = RNG.standard_normal((1, 8, 4, 6)).astype("float32"), RNG.standard_normal((1, 4, 6, 8)).astype("float32")
    m.set_input(x=xv, z=zv)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), xv.transpose(0, 2, 3, 1) / (1 + np.exp(-zv)), rtol=1e-6)
    assert [ops for _, ops, _ in m.executor.steps] == ["copy", "copy", "transpose, sigmoid, multiply as one loop"]


def _view_case(case):
    """(input shapes, body of the inputs, reference) of movements whose results are strided
    views of their inputs."""
    if case == "nchw_to_nhwc":  # every element a run of its own
        return [(2, 256, 1, 99)], lambda x: relay.layout_transform(x, "NCHW", "NHWC"), lambda a: a.transpose(0, 2, 3, 1)
    if case == "heads_concatenated":  # YOLO's heads: transposed, flattened, concatenated

        def body(a, b):
            return relay.concatenate([relay.reshape(relay.transpose(v, (0, 3, 1, 2)), (1, 12, n)) for v, n in ((a, 64), (b, 16))], axis=2)

        def ref(p, q):
            return np.concatenate([v.transpose(0, 3, 1, 2).reshape(1, 12, -1) for v in (p, q)], 2)

        return [(1, 8, 8, 12), (1, 4, 4, 12)], body, ref
    if case == "concatenated_then_transformed":  # a 3-D U-Net's skip concatenation, then NDHWC

        def body(a, b):
            return relay.layout_transform(relay.concatenate([a, b], axis=1), "NCDHW", "NDHWC")

        return [(1, 3, 4, 5, 6), (1, 2, 4, 5, 6)], body, lambda p, q: np.concatenate([p, q], 1).transpose(0, 2, 3, 4, 1)
    if case == "grouped_back_to_nchw":  # a GroupNorm's grouping of NHWC data, moved back to NCHW first

        def body(a):
            return relay.reshape(relay.layout_transform(a, "NHWC", "NCHW"), (1, 4, 2 * 6 * 6))

        return [(1, 6, 6, 8)], body, lambda p: p.transpose(0, 3, 1, 2).reshape(1, 4, 72)
    # reversed, strided, transposed
    return ([(3, 10, 7)], lambda x: relay.transpose(relay.strided_slice(x, begin=[8, 1], end=[0, 7], strides=[-2, 2], axes=[1, 2]), (2, 0, 1)),
            lambda a: a[:, 8:0:-2, 1:7:2].transpose(2, 0, 1))  # fmt: skip


@pytest.mark.parametrize("case", ["nchw_to_nhwc", "heads_concatenated", "reversed_slice", "concatenated_then_transformed",
                                  "grouped_back_to_nchw"])
def test_view_movements_find_their_patterns_without_addresses(case, monkeypatch):
    """A movement whose result is a strided view of an input (transposes, layout transforms,
    slices, reshapes that stay views), or a concatenation of such views, gets its patterns
    from the views' strides (``_view_patterns``): no per-element address array (the address
    analysis is not called), one pattern per input, and the patterns copy the reference's
    values."""
    from xdsl.dialects import func as xfunc

    from xrelay.dialects.relay import RelayOp
    from xrelay.runtime.native import movement

    def no_addresses(*args, **kwargs):
        raise AssertionError("the address analysis ran")

    monkeypatch.setattr(movement, "_addresses", no_addresses)
    shapes, body, ref = _view_case(case)
    xs = [relay.var(f"x{i}", shape=sh) for i, sh in enumerate(shapes)]
    mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function(xs, body(*xs))))
    main = [f for f in mod.module.ops if isinstance(f, xfunc.FuncOp)][0]
    move = [o for o in main.body.block.ops if isinstance(o, RelayOp)]
    result = main.body.block.last_op.operands[0]
    patterns = movement.movement_patterns(main, move, [result], shapes)
    assert patterns is not None and len(patterns) == len(shapes), patterns
    inputs = [RNG.standard_normal(sh).astype("float32") for sh in shapes]
    want = ref(*inputs)
    out = np.full(want.shape, np.nan, np.float32)
    for _, i, length, o0, s0, levels in patterns:
        movement._strided(out, inputs, i, o0, s0, levels, length, out.itemsize, [])()
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("last", [True, False])
def test_a_reshape_that_is_no_view(last):
    """A pixel shuffle's last reshape is no view of the transposed input: the destination,
    contiguous, is seen in the shape before it (one pattern, the reference's values). The
    same reshape with an op after it leaves the patterns to the address analysis."""
    from xdsl.dialects import func as xfunc

    from xrelay.dialects.relay import RelayOp
    from xrelay.runtime.native import movement

    x = relay.var("x", shape=(1, 4, 3, 3))
    y = relay.reshape(relay.transpose(relay.reshape(x, (1, 1, 2, 2, 3, 3)), (0, 1, 4, 2, 5, 3)), (1, 1, 6, 6))
    y = y if last else relay.transpose(y, (0, 1, 3, 2))
    mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function([x], y)))
    main = [f for f in mod.module.ops if isinstance(f, xfunc.FuncOp)][0]
    move = [o for o in main.body.block.ops if isinstance(o, RelayOp)]
    wanted = [main.body.block.last_op.operands[0]]
    viewed = movement._view_patterns(main, move, wanted, [(1, 4, 3, 3)])
    seen = []
    real = movement._addresses

    def spy(*args, **kwargs):
        seen.append(True)
        return real(*args, **kwargs)

    movement._addresses = spy
    try:
        patterns = movement.movement_patterns(main, move, wanted, [(1, 4, 3, 3)])
    finally:
        movement._addresses = real
    assert (viewed is not None, len(seen)) == ((True, 0) if last else (False, 1))
    a = RNG.standard_normal((1, 4, 3, 3)).astype("float32")
    want = a.reshape(2, 2, 3, 3).transpose(2, 0, 3, 1).reshape(1, 1, 6, 6)
    want = want if last else want.transpose(0, 1, 3, 2)
    out = np.full(want.shape, np.nan, np.float32)
    for _, i, length, o0, s0, levels in patterns:
        movement._strided(out, [a], i, o0, s0, levels, length, out.itemsize, [])()
    np.testing.assert_array_equal(out, want)
