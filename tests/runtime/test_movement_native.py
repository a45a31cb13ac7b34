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
    assert _labels(m) == ["transpose, strided_slice, reshape as strided copies"]


def test_functions_that_compute_keep_their_kernels():
    xs = [relay.var(f"x{i}", shape=(1, 4, 3, 3)) for i in range(2)]
    y = relay.add(relay.concatenate(xs, axis=1), relay.const(np.float32(1)))
    y = relay.reshape(relay.transpose(relay.reshape(y, (1, 2, 4, 3, 3)), (0, 2, 1, 3, 4)), (1, 8, 3, 3))
    mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function(xs, y)))
    m = xrelay.build(mod, None, backends=("native",))
    labels = _labels(m)
    assert labels and not any("strided copies" in label for label in labels), labels
