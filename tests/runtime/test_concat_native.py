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
