"""Rotary position embeddings, ``x * cos + P(x) * sin``, as one native pass (``rotate_rows``)
whatever ops move ``x``: Llama's ``rotate_half`` (slices, a negation, a concatenation),
GPT-J's interleaved pairs (strided slices, ``stack``, a reshape back), a partial rotation
(Phi: the first half of each head rotated, the rest passed through), ``cos``/``sin`` constants
or computed. The results are the reference's bits; a movement across rows is left to the
ops' own kernels."""

from __future__ import annotations

import numpy as np
import pytest

from xrelay.testing.onnx_models import GraphBuilder, engine_steps, run_like_onnxruntime

RNG = np.random.default_rng(0)
HEADS, SEQ, D = 4, 16, 32


def _i64(*v):
    return np.array(v, np.int64)


def _rotate(g: GraphBuilder, x: str, form: str, d: int) -> str:
    """``P(x)`` over the last axis of ``d`` elements."""
    h = d // 2
    if form == "half":  # concatenate(-x[..., h:], x[..., :h])
        x1 = g.node("Slice", [x, g.const(_i64(0)), g.const(_i64(h)), g.const(_i64(-1))])
        x2 = g.node("Slice", [x, g.const(_i64(h)), g.const(_i64(d)), g.const(_i64(-1))])
        return g.node("Concat", [g.node("Neg", [x2]), x1], axis=-1)
    if form == "interleaved":  # stack(-x[..., 1::2], x[..., ::2], -1).flatten(-2)
        step = g.const(_i64(2))
        ev = g.node("Slice", [x, g.const(_i64(0)), g.const(_i64(d)), g.const(_i64(-1)), step])
        od = g.node("Slice", [x, g.const(_i64(1)), g.const(_i64(d)), g.const(_i64(-1)), step])
        pair = [g.node("Unsqueeze", [v, g.const(_i64(-1))]) for v in (g.node("Neg", [od]), ev)]
        return g.node("Reshape", [g.node("Concat", pair, axis=-1), g.const(_i64(1, HEADS, SEQ, d))])

    # "rows": the last two heads swapped: the first rows stay in place, the others move
    # across rows (no rotation of rows)
    def heads(lo, hi):
        return g.node("Slice", [x, g.const(_i64(lo)), g.const(_i64(hi)), g.const(_i64(1))])

    swapped = [
        heads(0, HEADS - 2),
        heads(HEADS - 1, HEADS),
        heads(HEADS - 2, HEADS - 1),
    ]
    return g.node("Concat", swapped, axis=1)


def _model(form: str, computed: bool = False, partial: bool = False):
    """``x`` [1, SEQ, HEADS * D] -> heads -> rotated -> back; ``cos``/``sin`` [1, 1, SEQ, D]
    constants or (``computed``) inputs ``c`` and ``s``."""
    g = GraphBuilder(1)
    q = g.node(
        "Transpose", [g.node("Reshape", ["x", g.const(_i64(1, SEQ, HEADS, D))])], perm=[0, 2, 1, 3]
    )
    d = D // 2 if partial else D
    if computed:
        cos, sin = "c", "s"
    else:
        angles = RNG.uniform(0, 6, (1, 1, SEQ, d)).astype("float32")
        cos, sin = g.const(np.cos(angles)), g.const(np.sin(angles))
    rot = q
    if partial:
        rot = g.node("Slice", [q, g.const(_i64(0)), g.const(_i64(d)), g.const(_i64(-1))])
        rest = g.node("Slice", [q, g.const(_i64(d)), g.const(_i64(D)), g.const(_i64(-1))])
    y = g.node("Add", [g.node("Mul", [rot, cos]), g.node("Mul", [_rotate(g, rot, form, d), sin])])
    if partial:
        y = g.node("Concat", [y, rest], axis=-1)
    out = g.node(
        "Reshape", [g.node("Transpose", [y], perm=[0, 2, 1, 3]), g.const(_i64(1, SEQ, HEADS * D))]
    )
    inputs = {"x": ([1, SEQ, HEADS * D], np.float32)}
    if computed:
        inputs.update(c=([1, 1, SEQ, d], np.float32), s=([1, 1, SEQ, d], np.float32))
    return g.model(inputs, [out], "rotary", opset=20)


def _feeds(computed: bool, partial: bool):
    d = D // 2 if partial else D
    feeds = []
    for _ in range(2):
        feed = {"x": RNG.standard_normal((1, SEQ, HEADS * D)).astype("float32")}
        if computed:
            angles = RNG.uniform(0, 6, (1, 1, SEQ, d))
            feed.update(c=np.cos(angles).astype("float32"), s=np.sin(angles).astype("float32"))
        feeds.append(feed)
    return feeds


def _numpy(feed, form, cos, sin):
    """The reference's float32 operations in its order, on the heads of ``x``."""
    q = feed["x"].reshape(1, SEQ, HEADS, D).transpose(0, 2, 1, 3)
    if form == "half":
        moved = np.concatenate([-q[..., D // 2 :], q[..., : D // 2]], axis=-1)
    else:
        moved = np.stack([-q[..., 1::2], q[..., ::2]], axis=-1).reshape(q.shape)
    y = q * cos + moved * sin
    return y.transpose(0, 2, 1, 3).reshape(1, SEQ, HEADS * D)


@pytest.mark.parametrize("form", ["half", "interleaved"])
@pytest.mark.parametrize("computed", [False, True])
def test_rotation_is_one_pass_with_the_reference_bits(form, computed):
    model = _model(form, computed)
    feeds = _feeds(computed, False)
    m = run_like_onnxruntime(model, feeds)
    _, native = engine_steps(m)
    rotations = [ops for ops in native if "rotation(" in ops]
    assert len(rotations) == 1, native
    if computed:
        feed = feeds[1]
        m.set_input(**feed)
        m.run()
        want = _numpy(feed, form, feed["c"], feed["s"])
        assert np.array_equal(m.get_output(0).numpy(), want)


def test_partial_rotation():
    """Phi's partial rotary: the rotated half and the passed half concatenated after."""
    m = run_like_onnxruntime(_model("half", partial=True), _feeds(False, True))
    _, native = engine_steps(m)
    assert any("rotation(" in ops for ops in native), native


def test_a_movement_across_rows_is_no_rotation():
    m = run_like_onnxruntime(_model("rows"), _feeds(False, False))
    _, native = engine_steps(m)
    assert not any("rotation(" in ops for ops in native), native
    assert any("concatenate" in ops for ops in native), native
