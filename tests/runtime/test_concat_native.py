"""The native ``concatenate`` (``runtime.native.fast_concat``): the copies and the elementwise
ops after them (DenseNet's batch-norm shift and ReLU on the joined features) as one kernel,
cut into row blocks on the executor's threads, with the reference's bits."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay import relay

RNG = np.random.default_rng(0)


def _model(axis: int, shapes: list[tuple[int, ...]], epilogue: bool):
    xs = [relay.var(f"x{i}", shape=s) for i, s in enumerate(shapes)]
    y = relay.concatenate(xs, axis=axis)
    width = sum(s[axis] for s in shapes)
    shift = RNG.standard_normal(width).astype("float32")
    if epilogue:
        bshape = [1] * len(shapes[0])
        bshape[axis] = width
        y = relay.nn.relu(relay.add(y, relay.const(shift.reshape(bshape))))
    mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function(xs, y)))
    feeds = {f"x{i}": RNG.standard_normal(s).astype("float32") for i, s in enumerate(shapes)}
    ref = np.concatenate([feeds[f"x{i}"] for i in range(len(shapes))], axis=axis)
    if epilogue:
        ref = np.maximum(ref + shift.reshape(bshape), np.float32(0))
    return mod, feeds, ref


@pytest.mark.parametrize(
    "axis, shapes, epilogue",
    [
        (3, [(1, 9, 7, 16), (1, 9, 7, 8), (1, 9, 7, 8)], True),  # channels-last, DenseNet's step
        (1, [(2, 5, 6, 6), (2, 3, 6, 6)], True),  # NCHW, batch 2: cut along the batch
        (1, [(1, 5, 6, 6), (1, 3, 6, 6)], True),  # nothing to cut before the axis: one block
        (3, [(1, 9, 7, 16), (1, 9, 7, 8)], False),
    ],
)
@pytest.mark.parametrize("threads", [1, 2])
def test_concatenate_runs_its_epilogue_in_one_kernel(axis, shapes, epilogue, threads):
    mod, feeds, ref = _model(axis, shapes, epilogue)
    m = xrelay.build(mod, None, backends=("native",), threads=threads)
    m.set_input(**feeds)
    m.run()
    out = m.get_output(0).numpy()
    assert np.std(out) > 0.1
    np.testing.assert_array_equal(out, ref)
    labels = [label for name, _, c in m.executor.steps if name != "memory.copy" for label, _, _ in c.thunks]
    assert labels == ["concatenate+add+nn.relu" if epilogue else "concatenate"], labels


def _build(expr, xs, feeds, threads, monkeypatch):
    """Build ``expr`` on the native engine, recording the C kernels fast_concat binds."""
    from xrelay.runtime.native import fast_concat
    from xrelay.runtime.native.fast_kernels import loop_kernels_available

    if not loop_kernels_available():
        pytest.fail("the C loop kernels are not built (no C compiler?)")
    bound: list[str] = []
    real = fast_concat.bind_kernel

    def spy(name, *args):
        bound.append(name)
        return real(name, *args)

    monkeypatch.setattr(fast_concat, "bind_kernel", spy)
    mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function(xs, expr)))
    m = xrelay.build(mod, None, backends=("native",), threads=threads)
    m.set_input(**feeds)
    m.run()
    return m.get_output(0).numpy(), bound


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
def test_concatenate_epilogue_in_the_c_kernel(layout, threads, monkeypatch):
    """The ops the C kernel takes (subtract the other way round, multiply, maximum and
    minimum from clip; four, its most) with operands per joined channel and scalars:
    numpy's bits."""
    axis = 3 if layout == "NHWC" else 1
    shapes = [(2, 5, 7, 16), (2, 5, 7, 8), (2, 5, 7, 24)] if axis == 3 else [(2, 16, 5, 7), (2, 8, 5, 7), (2, 24, 5, 7)]
    xs = [relay.var(f"x{i}", shape=s) for i, s in enumerate(shapes)]
    bshape = [1, 1, 1, 1]
    bshape[axis] = 48
    shift = RNG.standard_normal(bshape).astype("float32")
    scale = RNG.standard_normal(bshape).astype("float32")
    y = relay.concatenate(xs, axis=axis)
    y = relay.subtract(relay.const(shift), relay.multiply(y, relay.const(scale)))
    y = relay.clip(y, -0.5, 1.5)
    feeds = {f"x{i}": RNG.standard_normal(s).astype("float32") for i, s in enumerate(shapes)}
    out, bound = _build(y, xs, feeds, threads, monkeypatch)
    joined = np.concatenate([feeds[f"x{i}"] for i in range(3)], axis=axis)
    ref = np.minimum(np.maximum(shift - joined * scale, np.float32(-0.5)), np.float32(1.5))
    assert "concat_epi" in bound
    assert np.std(out) > 0.1
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("case", ["per row", "five ops"])
def test_concatenate_epilogue_the_c_kernel_does_not_take_keeps_numpy(case, monkeypatch):
    """An operand varying along a non-joined axis (per row of a channels-last image) and a
    chain of five ops are not the C kernel's case: the numpy blocks run them, with the
    reference's bits."""
    shapes = [(1, 6, 5, 8), (1, 6, 5, 4)]
    xs = [relay.var(f"x{i}", shape=s) for i, s in enumerate(shapes)]
    rows = RNG.standard_normal((1, 6, 1, 1) if case == "per row" else (1, 1, 1, 12)).astype("float32")
    y = relay.add(relay.concatenate(xs, axis=3), relay.const(rows))
    if case == "five ops":
        y = relay.clip(relay.multiply(relay.add(y, relay.const(np.float32(0.25))), relay.const(np.float32(3))), -1, 1)
    else:
        y = relay.nn.relu(y)
    feeds = {f"x{i}": RNG.standard_normal(s).astype("float32") for i, s in enumerate(shapes)}
    out, bound = _build(y, xs, feeds, 2, monkeypatch)
    ref = np.concatenate([feeds["x0"], feeds["x1"]], axis=3) + rows
    if case == "five ops":
        ref = np.minimum(np.maximum((ref + np.float32(0.25)) * np.float32(3), np.float32(-1)), np.float32(1))
    else:
        ref = np.maximum(ref, np.float32(0))
    assert "concat_epi" not in bound
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_stack_runs_as_a_concatenation(dtype, axis, threads, monkeypatch):
    """``stack`` is the concatenation of its inputs each seen with an axis of 1 where they are
    stacked: float inputs go through the C kernel ``concat_epi`` (one C call, no numpy),
    integers through numpy's concatenation; either way ``np.stack``'s values (the float ones
    in parts on two threads)."""
    shapes = [(3, 4)] * 5
    xs = [relay.var(f"x{i}", shape=s, dtype=dtype) for i, s in enumerate(shapes)]
    feeds = {f"x{i}": (RNG.standard_normal(s) * 100).astype(dtype) for i, s in enumerate(shapes)}
    out, bound = _build(relay.stack(xs, axis=axis), xs, feeds, threads, monkeypatch)
    ref = np.stack([feeds[f"x{i}"] for i in range(5)], axis=axis)
    assert out.shape == ref.shape and out.dtype == ref.dtype and np.std(out) > 10
    np.testing.assert_array_equal(out, ref)
    assert set(bound) == ({"concat_epi"} if dtype == "float32" else set()), bound


def test_joins_refuse_an_input_that_overlaps_the_result_or_another_dtype():
    """The concatenation's and the stack's kernels copy input by input into the result: an
    input that is part of the result, or of another dtype, is left to the reference kernel
    (None), which reads every input before it writes."""
    from types import SimpleNamespace

    from xrelay.runtime.native.fast_concat import fast_concatenate, fast_stack

    op = SimpleNamespace(attrs={"axis": 0})
    opts = SimpleNamespace(epilogue=[], use_c_kernels=True)
    a = RNG.standard_normal((2, 3)).astype("float32")
    out = np.zeros((4, 3), np.float32)
    assert fast_concatenate(op, [a, out[2:]], out, None, opts) is None
    assert fast_concatenate(op, [a, a.astype("float64")], out, None, opts) is None
    stacked = np.zeros((2, 2, 3), np.float32)
    assert fast_stack(op, [a, stacked[1]], stacked, None, opts) is None
    assert fast_stack(op, [a, a.astype("int32")], stacked, None, opts) is None
