"""Fused elementwise functions run as one C loop (``runtime.native.elementwise_loop``): the
unrolled recurrent layers (ONNX RNN, GRU, LSTM in every form the importer unrolls) against
onnxruntime, the loop's ops against the numpy reference kernels, its exp / tanh / sigmoid
within 3 units in the last place, nothing outside the arena and the same bits for every
thread count."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from onnx import helper

import xrelay
from xrelay import relay
from xrelay.backend.build import build_program
from xrelay.frontends.onnx import from_onnx
from xrelay.runtime.executor import Executor
from xrelay.testing.onnx_models import make_model, run_onnxruntime

F32 = np.float32
LOOP = " as one loop"


def _recurrent(kind, seq, batch, width, hidden, *, direction="forward", bias=True, lens=None, init=False,
               peep=False, layout=0, seed=0, **attrs):  # fmt: skip
    """An ONNX model of one ``kind`` node (its optional inputs as asked) and its feeds."""
    rng = np.random.default_rng(seed)
    dirs = 2 if direction == "bidirectional" else 1
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[kind]

    def r(*shape):
        return np.asarray(rng.standard_normal(shape) * 0.5, F32)

    inits = {"W": r(dirs, gates * hidden, width), "R": r(dirs, gates * hidden, hidden)}
    names = ["X", "W", "R"]

    def state():  # (drawn seq-first: a batch-first model has the same values as its twin)
        s = r(dirs, batch, hidden)
        return np.ascontiguousarray(s.transpose(1, 0, 2)) if layout else s

    optional = [
        ("B", r(dirs, 2 * gates * hidden) if bias else None),
        ("L", None if lens is None else np.array(lens, np.int32)),
        ("H0", state() if init else None),
    ]
    if kind == "LSTM":
        optional += [
            ("C0", state() if init else None),
            ("P", r(dirs, 3 * hidden) if peep else None),
        ]
    while optional and optional[-1][1] is None:
        optional.pop()
    for name, value in optional:
        names.append(name if value is not None else "")
        if value is not None:
            inits[name] = value
    outs = ["Y", "Yh", "Yc"][: 3 if kind == "LSTM" else 2]
    node = helper.make_node(
        kind, names, outs, hidden_size=hidden, direction=direction, layout=layout, **attrs
    )
    x = r(seq, batch, width)
    x = np.ascontiguousarray(x.transpose(1, 0, 2)) if layout else x
    model = make_model([node], {"X": (x.shape, F32)}, outs, inits, opset=14)
    return model, {"X": x}


def _run(model, feeds, **options):
    mod, params = from_onnx(model)
    m = xrelay.build(mod, params, opt_level=3, **options)
    m.set_input(**feeds)
    m.run()
    return m, [m.get_output(i).numpy() for i in range(m.get_num_outputs())]


def _labels(m):
    """(function, kernel) of every thunk of every step."""
    return [(name, label) for name, _, c in m.executor.steps for label, _, _ in c.thunks]


def _gates_looped(m) -> int:
    """How many steps run gate math (sigmoid, tanh) as loops; fails if one runs op by op."""
    gate_steps = [
        (name, label) for name, label in _labels(m) if "sigmoid" in name or "tanh" in name
    ]
    assert gate_steps and all(label.endswith(LOOP) for _, label in gate_steps), gate_steps
    return len(gate_steps)


CASES = [
    ("LSTM", {"direction": "bidirectional"}),
    ("LSTM", {"direction": "reverse", "bias": False, "init": True, "peep": True}),
    ("LSTM", {"direction": "forward", "lens": [3, 1, 4], "init": True, "peep": True, "clip": 0.9}),
    ("LSTM", {"direction": "bidirectional", "layout": 1, "init": True}),
    ("GRU", {"direction": "bidirectional", "lens": [2, 4, 1]}),
    ("GRU", {"direction": "forward", "linear_before_reset": 1, "init": True}),
    ("GRU", {"direction": "reverse", "linear_before_reset": 1, "bias": False, "clip": 0.7}),
    ("RNN", {"direction": "bidirectional", "init": True}),
    ("RNN", {"direction": "forward", "lens": [4, 2, 3]}),
]


@pytest.mark.parametrize("kind, options", CASES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(CASES)])
def test_recurrent_layers_run_as_loops_and_match_onnxruntime(kind, options):
    options = dict(options)
    layout = options.get("layout", 0)
    model, feeds = _recurrent(kind, 4, 3, 5, 6, **options)
    m, got = _run(model, feeds)
    # onnxruntime has no batch-first (layout=1) kernel: the same weights seq-first, transposed
    ref_model, ref_feeds = model, feeds
    if layout:
        options["layout"] = 0
        ref_model, _ = _recurrent(kind, 4, 3, 5, 6, **options)
        ref_feeds = {"X": feeds["X"].transpose(1, 0, 2)}
    want = run_onnxruntime(ref_model, ref_feeds)
    if layout:
        want = [want[0].transpose(2, 0, 1, 3), *[w.transpose(1, 0, 2) for w in want[1:]]]
    for g, w in zip(got, want):
        assert np.isfinite(g).all() and np.abs(w).max() > 0.05
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=2e-6)
    if kind != "RNN" or "lens" in options:  # (an RNN's tanh alone fuses into its dnnl dense)
        assert _gates_looped(m) > 0
    # the outputs follow the input (not a constant the loops happened to give)
    other = {"X": (feeds["X"] * -0.7 + 0.1).astype(F32)}
    m.set_input(**other)
    m.run()
    assert not np.allclose(m.get_output(0).numpy(), got[0], atol=1e-3)


def test_lstm_same_bits_any_threads_nothing_outside_the_arena():
    model, feeds = _recurrent("LSTM", 6, 4, 8, 16, direction="bidirectional", init=True)
    _, one = _run(model, feeds, threads=1)
    _, two = _run(model, feeds, threads=2)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)
    mod, params = from_onnx(model)
    program, _ = build_program(mod, params)
    ex = Executor(program, threads=1)
    (buf,) = ex.input_buffers
    np.copyto(buf, feeds["X"])
    report = ex.outside_arena()
    assert (report.held_bytes, report.run_bytes, report.steps) == (0, 0, [])


def _function(body_fn, shapes, dtypes=None):
    xs = [
        relay.var(f"x{i}", shape=s, dtype=(dtypes or {}).get(i, "float32"))
        for i, s in enumerate(shapes)
    ]
    body = body_fn(*xs)
    return relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function(xs, body)))


@contextlib.contextmanager
def _programs(tables):
    """Every loop program (``elementwise_loop._program``'s table, or None) built inside,
    appended to ``tables``."""
    from xrelay.runtime.native import elementwise_loop

    real = elementwise_loop._program

    def spy(shape, results):
        table = real(shape, results)
        tables.append(table)
        return table

    elementwise_loop._program = spy
    try:
        yield
    finally:
        elementwise_loop._program = real


def _both(mod, feeds):
    """The module built for the native engine with the loop kernels and with the numpy
    reference kernels (``use_c_kernels=False``): outputs and step labels."""
    outs = []
    for c_kernels in (True, False):
        m = xrelay.build(mod, None, backends=("native",), use_c_kernels=c_kernels)
        m.set_input(**feeds)
        m.run()
        outs.append(([m.get_output(i).numpy() for i in range(m.get_num_outputs())], _labels(m)))
    return outs


def test_exact_ops_give_the_reference_bits():
    """split, broadcast, clip, where of a bool input, relu, abs, sqrt, divide, max/min: every
    op of the loop whose value IEEE arithmetic fixes, in one function."""

    def body(x, v, c):
        a, b, d = relay.split(x, 3, axis=1)
        s = relay.clip(relay.add(a, v), a_min=-0.5, a_max=0.75)
        t = relay.divide(relay.sqrt(relay.abs(b)), relay.add(relay.nn.relu(d), relay.const(1.0)))
        u = relay.where(c, relay.maximum(s, t), relay.minimum(s, relay.negative(t)))
        return relay.Tuple([relay.multiply(u, s), relay.subtract(t, u)])

    rng = np.random.default_rng(1)
    mod = _function(body, [(5, 3 * 70), (70,), (5, 70)], {2: "bool"})
    feeds = {"x0": rng.standard_normal((5, 210)).astype(F32), "x1": rng.standard_normal(70).astype(F32),
             "x2": rng.random((5, 70)) > 0.5}  # fmt: skip
    (loop, labels), (ref, ref_labels) = _both(mod, feeds)
    # the functions of several ops as loops (an op alone keeps its numpy kernel)
    assert len([label for _, label in labels if label.endswith(LOOP)]) == 4
    assert not any(label.endswith(LOOP) for _, label in ref_labels)
    for a, b in zip(loop, ref):
        assert np.isfinite(a).all() and np.abs(a).max() > 0.1
        np.testing.assert_array_equal(a, b)


def _ulps(got: np.ndarray, want64: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):  # (exp's values beyond float32 are inf, as the loop's)
        want = want64.astype(F32)
    both = np.isfinite(want) & np.isfinite(got)
    assert (np.isnan(got) == np.isnan(want)).all() and (
        got[np.isinf(want)] == want[np.isinf(want)]
    ).all()
    spacing = np.spacing(np.maximum(np.abs(want[both]), np.finfo(F32).tiny)).astype(np.float64)
    return np.abs(got[both].astype(np.float64) - want64[both]) / spacing


@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid"])
def test_transcendentals_within_three_ulps(name):
    rng = np.random.default_rng(2)
    x = np.concatenate([
        rng.standard_normal(4000) * 3, rng.uniform(-110, 100, 4000), rng.uniform(-1, 1, 2000) * 1e-3,
        [0.0, -0.0, 88.72, 88.73, -87.0, -103.5, -104.5, -200.0, 200.0, 0.624, 0.626, -0.625],
        [np.inf, -np.inf, np.nan],
    ]).astype(F32)  # fmt: skip
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        want = {"exp": np.exp(x64), "tanh": np.tanh(x64), "sigmoid": 1 / (1 + np.exp(-x64))}[name]
    op = {"exp": relay.exp, "tanh": relay.tanh, "sigmoid": relay.sigmoid}[name]
    # (a chain: exp, tanh or sigmoid alone keeps numpy's kernel)
    mod = _function(lambda a: relay.multiply(op(a), relay.const(1.0)), [x.shape])
    m = xrelay.build(mod, None, backends=("native",))
    m.set_input(x0=x)
    m.run()
    assert f"{name}, multiply{LOOP}" in [label for _, label in _labels(m)]
    got = m.get_output(0).numpy()
    assert _ulps(got, want).max() <= 3.0


def test_one_op_alone_keeps_its_numpy_kernel():
    mod = _function(relay.tanh, [(4, 9)])
    m = xrelay.build(mod, None, backends=("native",))
    labels = [label for _, label in _labels(m)]
    assert "tanh" in labels and not any(label.endswith(LOOP) for label in labels)


def test_the_gate_math_before_a_stack_runs_as_a_loop_ahead_of_it():
    """The last time step fused with the stack of the outputs: the elementwise ops that read
    only the function's inputs run as one loop first, the stack after them."""

    def body(a, b, c):
        h = relay.multiply(relay.sigmoid(a), relay.tanh(b))
        return relay.stack([c, h, relay.add(h, c)], axis=0)

    rng = np.random.default_rng(3)
    mod = _function(body, [(6, 20)] * 3)
    feeds = {f"x{i}": rng.standard_normal((6, 20)).astype(F32) for i in range(3)}
    (loop, labels), (ref, _) = _both(mod, feeds)
    step = [label for name, label in labels if "stack" in name]
    assert step == [f"sigmoid, tanh, multiply, add{LOOP}", "stack"], step
    assert np.isfinite(loop[0]).all()
    np.testing.assert_allclose(loop[0], ref[0], rtol=1e-6, atol=1e-6)


def test_values_of_a_row_are_computed_once_per_row_with_the_reference_bits():
    """An RMSNorm's scale ``w / sqrt(mean + eps)`` is the same along a row: the loop computes it
    in the row's first block (``ROW_ONCE``) and every block of the row (here 3: 150 elements)
    reads it, while the per-element values (many of them, so their registers are reused
    block after block) go on; a bool condition per row, too. The same bits as the reference
    kernels, and the program's row values are flagged."""
    from xrelay.runtime.native import elementwise_loop

    def body(x, m, w, c):
        s = relay.divide(relay.const(1.0), relay.sqrt(relay.add(m, relay.const(1e-6))))
        y = relay.multiply(relay.multiply(x, s), w)
        z = relay.subtract(relay.multiply(relay.add(y, x), relay.const(0.5)), relay.abs(x))
        gate = relay.where(c, relay.negative(s), s)
        return relay.Tuple([relay.add(relay.multiply(z, gate), relay.maximum(y, z)), relay.multiply(s, m)])

    rng = np.random.default_rng(3)
    mod = _function(body, [(2, 7, 150), (2, 7, 1), (150,), (2, 7, 1)], {3: "bool"})
    feeds = {"x0": rng.standard_normal((2, 7, 150)).astype(F32), "x1": rng.random((2, 7, 1)).astype(F32) + 0.1,
             "x2": rng.standard_normal(150).astype(F32), "x3": rng.random((2, 7, 1)) > 0.5}  # fmt: skip
    tables = []
    with _programs(tables):
        (loop, labels), (ref, _) = _both(mod, feeds)
    assert any(label.endswith(LOOP) for _, label in labels)
    codes = [int(c) for t in tables if t is not None for c in t[7 + 6 * int(t[5]) :: 5]]
    assert any(c & elementwise_loop.ROW_ONCE for c in codes) and any(not c & elementwise_loop.ROW_ONCE for c in codes)
    for a, b in zip(loop, ref):
        assert np.isfinite(a).all() and np.abs(a).max() > 0.1
        np.testing.assert_array_equal(a, b)


def _on_one_and_two_threads(mod, feeds):
    """The outputs of ``mod`` (one function: one loop) built for the native engine with one
    thread and with two, and whether its loop is a native job of parts each time."""
    outs, jobs = [], []
    for threads in (1, 2):
        m = xrelay.build(mod, None, backends=("native",), threads=threads)
        m.set_input(**feeds)
        m.run()
        outs.append(m.get_output(0).numpy())
        looped = [t for _, _, c in m.executor.steps for label, _, t in c.thunks if label.endswith(LOOP)]
        assert len(looped) == 1 and len([n for n, _, _ in m.executor.steps if n != "memory.copy"]) == 1
        jobs.append(hasattr(looped[0], "native_job"))
    return outs, jobs


def test_a_big_loop_runs_in_parts_on_the_threads_with_the_same_bits():
    """A loop over 64 rows of 1024 (65,536 elements, ``PART_ELEMENTS`` 16,384) with two
    threads is a native job of parts of its rows; one thread runs it whole; the bits are the
    reference kernels' either way. A loop of a few hundred elements stays one call."""
    from xrelay.runtime.native import elementwise_loop

    def body(x, m, w):
        s = relay.divide(relay.const(1.0), relay.sqrt(relay.add(m, relay.const(1e-6))))
        return relay.multiply(relay.multiply(x, s), w)

    rng = np.random.default_rng(4)
    feeds = {"x0": rng.standard_normal((64, 1024)).astype(F32), "x1": rng.random((64, 1)).astype(F32) + 0.1,
             "x2": rng.standard_normal(1024).astype(F32)}  # fmt: skip
    mod = _function(body, [(64, 1024), (64, 1), (1024,)])
    outs, jobs = _on_one_and_two_threads(mod, feeds)
    assert jobs == [False, True]
    ref = xrelay.build(mod, None, backends=("native",), use_c_kernels=False)
    ref.set_input(**feeds)
    ref.run()
    for out in outs:
        assert np.isfinite(out).all() and np.abs(out).max() > 0.1
        np.testing.assert_array_equal(out, ref.get_output(0).numpy())
    small = _function(body, [(4, 100), (4, 1), (100,)])
    m = xrelay.build(small, None, backends=("native",), threads=2)
    looped = [t for _, _, c in m.executor.steps for label, _, t in c.thunks if label.endswith(LOOP)]
    assert len(looped) == 1 and not hasattr(looped[0], "native_job")
    assert 4 * 100 < elementwise_loop.PART_ELEMENTS * 2 <= 64 * 1024  # (what the cases assume)


def test_a_gated_activation_of_slices_is_one_loop_in_parts():
    """WaveNet's gate, ``tanh`` of one half of a convolution's channels times ``sigmoid`` of
    the other, written with ``strided_slice`` (as torch's ``chunk`` is exported), plus the
    residual: one loop over the (1, 64, 1000) result, which is one contiguous row cut into
    rows (``ROW_CUT``) so that two threads run it in parts; values within the
    transcendentals' error of the reference kernels, the same bits on one thread and two.
    A slice with a negative step (the channels reversed) is a loop too."""
    from xrelay.runtime.native import elementwise_loop

    def body(x, r):
        a = relay.strided_slice(x, begin=[0], end=[64], axes=[1])
        b = relay.strided_slice(x, begin=[64], end=[128], axes=[1])
        return relay.add(r, relay.multiply(relay.tanh(a), relay.sigmoid(b)))

    rng = np.random.default_rng(6)
    feeds = {"x0": rng.standard_normal((1, 128, 1000)).astype(F32),
             "x1": rng.standard_normal((1, 64, 1000)).astype(F32)}  # fmt: skip
    mod = _function(body, [(1, 128, 1000), (1, 64, 1000)])
    outs, jobs = _on_one_and_two_threads(mod, feeds)
    assert jobs == [False, True]
    x = feeds["x0"].astype(np.float64)
    want = feeds["x1"] + np.tanh(x[:, :64]) / (1.0 + np.exp(-x[:, 64:]))
    assert np.isfinite(outs[0]).all() and np.abs(outs[0] - feeds["x1"]).max() > 0.1
    np.testing.assert_allclose(outs[0], want, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(outs[0], outs[1])
    assert elementwise_loop._row_length(64000) == 3200 and elementwise_loop._row_length(2 * 65537) == 0

    def reversed_body(x, r):
        a = relay.strided_slice(x, begin=[63], end=[-129], strides=[-1], axes=[1])
        return relay.add(r, relay.tanh(a))

    rev = _function(reversed_body, [(1, 128, 1000), (1, 64, 1000)])
    (loop, labels), (ref, _) = _both(rev, feeds)
    assert [label for _, label in labels if label.endswith(LOOP)] == ["strided_slice, tanh, add" + LOOP]
    want = feeds["x1"] + np.tanh(x[:, 63::-1])
    np.testing.assert_allclose(loop[0], want, rtol=1e-6, atol=1e-6)
    assert np.abs(loop[0] - (feeds["x1"] + np.tanh(x[:, :64]))).max() > 0.1  # (reversed)


@pytest.mark.parametrize("flatten", [False, True])
def test_prelu_is_one_loop_with_the_reference_bits(flatten):
    """``nn.prelu`` (ConvTasNet's PReLU before each GroupNorm) is one loop, alone too (numpy's
    ``where`` of a product is three calls; the loop's ``x > 0 ? x : x * alpha`` the same bits),
    its slope broadcast along its axis; with the GroupNorm's flattening after it
    (``reshape`` to ``(N, 1, C * L)``: no view of the broadcast slope has that shape) the loop
    writes the destination seen with the prelu's shape. Zeros and negative zeros keep the
    reference's signs."""

    def body(x, a):
        y = relay.nn.prelu(x, a, axis=1)
        return relay.reshape(y, (1, 1, 6 * 4000)) if flatten else y

    rng = np.random.default_rng(9)
    x = rng.standard_normal((1, 6, 4000)).astype(F32)
    x[0, :, :3] = [0.0, -0.0, np.nan]
    feeds = {"x0": x, "x1": np.array([0.25, -0.5, 1.5, 0.0, 2.0, -1.0], F32)}
    mod = _function(body, [(1, 6, 4000), (6,)])
    (loop, labels), (ref, _) = _both(mod, feeds)
    want = "nn.prelu, reshape" if flatten else "nn.prelu"
    assert [label for _, label in labels if label.endswith(LOOP)] == [want + LOOP]
    assert np.abs(np.nan_to_num(loop[0])).max() > 0.1
    np.testing.assert_array_equal(loop[0], ref[0])
    assert np.array_equal(np.signbit(loop[0]), np.signbit(ref[0]))


def test_a_pixel_shuffle_then_sigmoid_is_one_loop_with_the_long_dimension_innermost():
    """A sub-pixel super-resolution's output (ESPCN): the pixel shuffle (``reshape``,
    ``transpose``, ``reshape``; the last no view of the transposed input) then ``sigmoid``:
    one loop, the sigmoid computed in the transposed shape and the destination seen with
    it; the innermost dimension (3 sub-pixels) gives its place to the 128 columns
    (``SHORT_ROW``); values within the sigmoid's error, the same bits on two threads. The
    shuffle alone moves single elements (a row's are 128 apart in the input: ``STRIDED_ROW``)
    and is the loop too, in tiles, with the reference kernels' bits."""
    from xrelay.runtime.native import elementwise_loop

    def shuffle(x):
        y = relay.reshape(x, (1, 1, 3, 3, 128, 128))
        return relay.reshape(relay.transpose(y, (0, 1, 4, 2, 5, 3)), (1, 1, 384, 384))

    rng = np.random.default_rng(11)
    feeds = {"x0": rng.standard_normal((1, 9, 128, 128)).astype(F32)}
    mod = _function(lambda x: relay.sigmoid(shuffle(x)), [(1, 9, 128, 128)])
    tables = []
    keep = elementwise_loop._program

    def program(shape, results):
        table = keep(shape, results)
        tables.append(None if table is None else [int(d) for d in table[:5]])
        return table

    outs = []
    for threads in (1, 2):
        elementwise_loop._program = program
        try:
            m = xrelay.build(mod, None, backends=("native",), threads=threads)
        finally:
            elementwise_loop._program = keep
        m.set_input(**feeds)
        m.run()
        outs.append(m.get_output(0).numpy())
        assert [label for _, label in _labels(m) if label.endswith(LOOP)] == ["reshape, transpose, sigmoid" + LOOP]
    assert tables[0][-1] == 128, tables  # (the columns innermost)
    want = 1.0 / (1.0 + np.exp(-feeds["x0"].astype(np.float64).reshape(3, 3, 128, 128).transpose(2, 0, 3, 1).reshape(1, 1, 384, 384)))
    np.testing.assert_allclose(outs[0], want, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(outs[0], outs[1])
    alone = _function(shuffle, [(1, 9, 128, 128)])
    (loop, labels), (ref, _) = _both(alone, feeds)
    assert [label for _, label in labels if "transpose" in label] == ["reshape, transpose" + LOOP]
    np.testing.assert_array_equal(loop[0], ref[0])


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_an_upsampling_and_its_weighted_sum_are_one_loop(layout):
    """A feature pyramid's top-down fusion (EfficientDet's BiFPN): the coarse map upsampled by
    nearest 2x (``nn.Upsample(scale_factor=2)``), weighted, added to the finer map, then SiLU.
    The upsampling is a placement: the input seen with an axis of 1 after H and after W,
    broadcast along them, and reshaped (the destination and the finer map seen with the factor
    axes: five dimensions, ``LOOP_DIMS``); one loop, values within the sigmoid's error, the
    same bits on two threads. A 2x upsampling whose pixels read others than ``o // 2``
    (``align_corners``) is no placement."""

    def shape(c, h, w):
        return (1, c, h, w) if layout == "NCHW" else (1, h, w, c)

    def body(small, big, mode="asymmetric"):
        up = relay.image.resize2d(small, size=(20, 20), layout=layout, method="nearest_neighbor",
                                  coordinate_transformation_mode=mode, rounding_method="floor")  # fmt: skip
        s = relay.add(big, relay.multiply(up, relay.const(np.float32(0.375))))
        return relay.multiply(s, relay.sigmoid(s))

    rng = np.random.default_rng(12)
    feeds = {"x0": rng.standard_normal(shape(24, 10, 10)).astype(F32), "x1": rng.standard_normal(shape(24, 20, 20)).astype(F32)}
    mod = _function(body, [shape(24, 10, 10), shape(24, 20, 20)])
    outs, _ = _on_one_and_two_threads(mod, feeds)
    axes = (2, 3) if layout == "NCHW" else (1, 2)
    up = feeds["x0"].astype(np.float64).repeat(2, axes[0]).repeat(2, axes[1])
    s = feeds["x1"] + 0.375 * up
    np.testing.assert_allclose(outs[0], s / (1 + np.exp(-s)), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(outs[0], outs[1])
    other = _function(lambda a, b: body(a, b, "align_corners"), [shape(24, 10, 10), shape(24, 20, 20)])
    (got, labels), (ref, _) = _both(other, feeds)
    assert not any(label.endswith(LOOP) and "resize" in label for _, label in labels), labels
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("tail", ["transpose", "reshape", "none"])
def test_values_joined_then_transposed_are_stored_in_place_by_one_loop(tail):
    """A sampling grid as RAFT's correlation lookup builds it: a centroid plus the window's
    offsets, split into x and y, each scaled and shifted, joined on the last axis and
    transposed to channels first. The loop stores x and y in their interleaved places of the
    result (two strided views of it that share no element): one step, the reference's bits,
    nothing outside the arena. A joined value read twice by the join is stored twice."""

    def body(c, d):
        x, y = relay.split(relay.add(c, d), [1], axis=3)
        x = relay.subtract(relay.multiply(x, relay.const(0.25)), relay.const(1.0))
        y = relay.subtract(relay.multiply(y, relay.const(0.5)), relay.const(1.0))
        joined = relay.concatenate([x, y, x], -1)
        if tail == "transpose":
            return relay.transpose(joined, [0, 3, 1, 2])
        return relay.reshape(joined, [64, 147]) if tail == "reshape" else joined

    rng = np.random.default_rng(2)
    mod = _function(body, [(64, 1, 1, 2), (1, 7, 7, 2)])
    feeds = {"x0": rng.standard_normal((64, 1, 1, 2)).astype(F32), "x1": rng.standard_normal((1, 7, 7, 2)).astype(F32)}
    (loop, labels), (ref, _) = _both(mod, feeds)
    assert [label for _, label in labels if label != "memory.copy"] == ["add, split, multiply, subtract" + LOOP]
    assert np.isfinite(loop[0]).all() and np.abs(loop[0]).max() > 0.1
    np.testing.assert_array_equal(loop[0], ref[0])
    m = xrelay.build(mod, None, backends=("native",))
    m.set_input(**feeds)
    m.run()
    report = m.executor.outside_arena()
    assert (report.held_bytes, report.run_bytes, report.steps) == (0, 0, [])


def test_every_instruction_of_the_loop_is_vectorized_with_the_librarys_flags(tmp_path):
    """The compiler the native library is built with vectorizes the loop of every instruction
    of ``xr_loop_op`` with the library's flags (``runtime.native.library._FLAGS``): exp, tanh,
    sigmoid, PReLU, sqrt and select hold a select or a square root, which GCC 12 ran one
    element at a time while floating-point traps and ``errno`` counted (an LSTM step's gates
    over 32 x 48: ~70 us instead of ~10)."""
    import os
    import re
    import subprocess

    from xrelay.runtime.native import library

    compiler = os.environ.get("CC", "cc")
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True, check=True).stdout
    clang = "clang" in version
    report = ["-Rpass-missed=loop-vectorize"] if clang else ["-fopt-info-vec-missed"]
    src = os.path.join(library.HERE, "native_kernels.c")
    done = subprocess.run([compiler, *library._FLAGS, *report, "-I", library.HERE, src, "-o", str(tmp_path / "k.so"), "-lm"],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    with open(os.path.join(library.HERE, "native_loop.h"), encoding="utf-8") as f:
        text = f.read().splitlines()
    first = next(i for i, line in enumerate(text) if line.startswith("static void xr_loop_op")) + 1
    last = next(i for i in range(first, len(text)) if text[i] == "}") + 1
    loops = [n for n in range(first, last + 1) if "for (i64 e = 0; e < m; e++)" in text[n - 1]]
    codes = [n for n in range(first, last + 1) if "case XR_" in text[n - 1] or "default:" in text[n - 1]]
    assert loops == codes and len(loops) >= 15  # (one loop per instruction code)
    missed = re.compile(r"native_loop\.h:(\d+):\d+: (?:missed|remark): (?:couldn't vectorize|loop not vectorized)")
    unvectorized = sorted({int(m.group(1)) for m in missed.finditer(done.stderr)} & set(loops))
    assert not unvectorized, [text[n - 1].strip() for n in unvectorized]


@pytest.mark.parametrize("threads", [1, 2])
def test_a_transposed_loop_runs_in_tiles_with_the_reference_bits(threads):
    """A residual ``add`` ending in a ``transpose`` (SqueezeBERT's before each layer norm, NCW
    to NWC) reads its inputs with a row's stride along the result's rows: the loop runs in
    tiles (``native_loop.h``'s ``XR_LOOP_TILE``), here partial both ways (300 x 150, batch 2:
    a tile never crosses into the next batch's rows), with a ``sigmoid``, a constant the same
    along rows (``ROW_ONCE``) and a ``where`` of a bool input (``LOAD_BOOL``) among its
    instructions; on two threads parts of its rows cut runs mid-tile. The exact ops give the reference kernels' bits, the sigmoid numpy's within
    3 units in the last place, and both thread counts the same bits."""
    from xrelay.runtime.native import elementwise_loop

    def body(x, y, c):
        s = relay.add(x, y)
        g = relay.where(c, relay.sigmoid(s), relay.multiply(s, relay.const(-0.5)))
        return relay.transpose(relay.multiply(g, y), (0, 2, 1))

    rng = np.random.default_rng(11)
    shape = (2, 300, 150)
    feeds = {"x0": rng.standard_normal(shape).astype(F32), "x1": rng.standard_normal(shape).astype(F32),
             "x2": rng.random(shape) > 0.5}  # fmt: skip
    mod = _function(body, [shape, shape, shape], {2: "bool"})
    tables = []
    with _programs(tables):
        m = xrelay.build(mod, None, backends=("native",), threads=threads)
        m.set_input(**feeds)
        m.run()
        one = xrelay.build(mod, None, backends=("native",), threads=1)
        one.set_input(**feeds)
        one.run()
    looped = [(label, t) for _, _, c in m.executor.steps for label, _, t in c.thunks]
    assert [label for label, _ in looped] == ["add, sigmoid, multiply, where, transpose" + LOOP]
    assert hasattr(looped[0][1], "native_job") == (threads == 2)
    assert tables and all(elementwise_loop._strided_row(t, 2) for t in tables)
    codes = [int(c) for t in tables for c in t[7 + 6 * int(t[5]) :: 5]]
    # (the constant is the same along a row: computed once a row by rows, on every element
    # of a tile by tiles)
    assert any(c & elementwise_loop.ROW_ONCE for c in codes)
    out = m.get_output(0).numpy()
    s = (feeds["x0"] + feeds["x1"]).astype(np.float64)
    want = (np.where(feeds["x2"], 1.0 / (1.0 + np.exp(-s)), -0.5 * s) * feeds["x1"]).transpose(0, 2, 1)
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-7)
    exact = ~feeds["x2"].transpose(0, 2, 1)  # (the scaled branch: exact ops only)
    np.testing.assert_array_equal(out[exact], want.astype(F32)[exact])
    np.testing.assert_array_equal(out, one.get_output(0).numpy())
    assert np.isfinite(out).all() and np.abs(out).max() > 0.5


def test_values_joined_then_transposed_are_stored_through_transposed_tiles():
    """Two values of (72, 40) joined on the first axis, then transposed to (40, 144): each
    lands in its slice of the result seen back through the transpose, a view contiguous along
    the loop's rows and 144 apart along its columns. The tiled loop stores whole tiles as
    8 x 8 register transposes (``xr_transpose8``) and partial ones (72 = 4 x 16 + 8, 40 =
    2 x 16 + 8) element by element; the reference kernels' bits."""

    def body(a, b):
        x = relay.add(a, b)
        y = relay.maximum(relay.subtract(a, b), relay.negative(a))
        return relay.transpose(relay.concatenate([x, y], 0), [1, 0])

    rng = np.random.default_rng(13)
    mod = _function(body, [(72, 40), (72, 40)])
    feeds = {"x0": rng.standard_normal((72, 40)).astype(F32), "x1": rng.standard_normal((72, 40)).astype(F32)}
    tables = []
    with _programs(tables):
        (loop, labels), (ref, _) = _both(mod, feeds)
    assert [label for _, label in labels if label.endswith(LOOP)] == ["add, subtract, negative, maximum" + LOOP]
    tables = [t for t in tables if t is not None]
    strides = [t[7 : 7 + 6 * int(t[5])].reshape(-1, 6)[:, 4:] for t in tables]
    assert any(([1, 144] == s).all(axis=1).any() for s in strides)  # (a destination: rows 1 apart)
    a, b = feeds["x0"], feeds["x1"]
    np.testing.assert_array_equal(loop[0], np.concatenate([a + b, np.maximum(a - b, -a)], 0).T)
    np.testing.assert_array_equal(loop[0], ref[0])
    assert np.isfinite(loop[0]).all() and np.abs(loop[0]).max() > 0.5


def test_a_transpose_that_moves_single_elements_is_a_loop_and_one_of_rows_strided_copies():
    """A function that only transposes (1, 768, 128) to (1, 128, 768) moves single elements: a
    row's elements are a cache line apart in the input (``STRIDED_ROW``), and it runs as the
    tiled loop, same values; swapping two outer axes of (197, 12, 64) keeps rows of 64
    contiguous elements and stays ``runtime.native.movement``'s strided copies."""
    from xrelay.runtime.native import elementwise_loop

    rng = np.random.default_rng(12)
    cases = [((1, 768, 128), (0, 2, 1), LOOP), ((1, 197, 12, 64), (0, 2, 1, 3), None)]
    for shape, axes, kind in cases:
        mod = _function(lambda x, a=axes: relay.add(relay.transpose(x, a), relay.const(1.0)), [shape])
        x = rng.standard_normal(shape).astype(F32)
        m = xrelay.build(mod, None, backends=("native",))
        m.set_input(x0=x)
        m.run()
        labels = [label for _, label in _labels(m)]
        looped = [label for label in labels if label.endswith(LOOP)]
        assert bool(looped) == (kind is not None), labels
        np.testing.assert_array_equal(m.get_output(0).numpy(), x.transpose(axes) + F32(1.0))
    assert elementwise_loop.STRIDED_ROW == 16
