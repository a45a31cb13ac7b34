"""onnxruntime's float kernels inside a quantized transformer: LayerNormalization and GELU.

A QDQ BERT keeps its layer norms and GELUs in float between a DequantizeLinear and a
QuantizeLinear; a last-bit difference there moves a value across a rounding boundary now and
then, and the following layers widen it (the zoo's BERT-base agreed with onnxruntime on 19 of
100 inputs). ``fake-quantization-to-integer{onnxruntime=true}`` writes those ops as
``qnn.ort_layer_norm`` / ``qnn.ort_gelu``, whose kernels compute what onnxruntime's x86-64
kernels compute; each test requires onnxruntime's bits, not closeness.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from xrelay.kernels import KERNELS
from xrelay.testing import onnx_models as om
from xrelay.testing import quantized_models as qm

F = np.float32


def _model(nodes, inputs, inits, outputs=("y",), opset=20):
    graph = helper.make_graph(
        nodes, "m", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=9)


def _same_float_bits(model, feed):
    ref = om.run_onnxruntime(model, feed)[0]
    m = qm.build(model, integer=True)
    for name, value in feed.items():
        m.set_input(name, value)
    m.run()
    out = np.asarray(m.get_output(0)).reshape(ref.shape)
    assert np.isfinite(ref).all() and ref.max() > ref.min()
    assert out.dtype == ref.dtype and np.array_equal(out.view(np.uint32), ref.view(np.uint32)), np.flatnonzero(out != ref)[:8]
    return ref


@pytest.mark.parametrize("rows, n", [(128, 768), (50, 64), (9, 8), (33, 24)])
def test_layer_norm_gives_onnxruntime_bits(rows, n):
    """The runtime's C kernel and the reference kernel both give onnxruntime's bits (numpy's
    mean and variance agree on about half of the values)."""
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((rows, n)) * 3 + 0.5).astype(F)
    g, b = rng.uniform(0.8, 1.2, n).astype(F), rng.normal(0, 0.05, n).astype(F)
    model = _model([helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1, epsilon=1e-12)],
                   [("x", [rows, n])], {"g": g, "b": b})  # fmt: skip
    ref = _same_float_bits(model, {"x": x})
    assert np.array_equal(KERNELS["qnn.ort_layer_norm"](x, g, b, epsilon=1e-12), ref)
    assert not np.array_equal(KERNELS["nn.layer_norm"](x, g, b, axis=-1, epsilon=1e-12, center=True, scale=True), ref)


@pytest.mark.parametrize("decomposed", [False, True])
def test_gelu_gives_onnxruntime_bits(decomposed):
    """ONNX's Gelu (opset 20) and the exporters' erf form (which onnxruntime fuses into the
    same kernel); 128 x 3072 values (BERT-base's), both sides of the erf polynomials' split
    and the 3.925 cap."""
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((128, 3072)) * 2.5).astype(F)
    if decomposed:
        nodes = [
            helper.make_node("Div", ["x", "sqrt2"], ["t"]), helper.make_node("Erf", ["t"], ["e"]),
            helper.make_node("Add", ["e", "one"], ["a"]), helper.make_node("Mul", ["x", "a"], ["m"]),
            helper.make_node("Mul", ["m", "half"], ["y"]),
        ]  # fmt: skip
        inits = {"sqrt2": np.array(math.sqrt(2), F), "one": np.array(1, F), "half": np.array(0.5, F)}
        model = _model(nodes, [("x", list(x.shape))], inits, opset=17)
    else:
        model = _model([helper.make_node("Gelu", ["x"], ["y"])], [("x", list(x.shape))], {})
    ref = _same_float_bits(model, {"x": x})
    assert np.array_equal(KERNELS["qnn.ort_gelu"](x), ref)
    assert not np.array_equal(KERNELS["erf"]((x * F(1 / math.sqrt(2))).astype(F)) * F(0.5) * x + x * F(0.5), ref)


def _bert(layers=2, seq=32, hidden=64, heads=4, ffn=256, seed=0):
    """A BERT-like encoder written with onnx.helper: LayerNormalization and Gelu as ONNX ops
    (what the zoo's BERT-base exports), Q/K/V and the FFN as MatMul + Add, scaled dot-product
    attention with an additive mask."""
    rng = np.random.default_rng(seed)
    d = hidden // heads
    nodes, inits = [], {}

    def init(name, value):
        inits[name] = np.asarray(value, F)
        return name

    def node(op, ins, out, **attrs):
        nodes.append(helper.make_node(op, ins, [out], **attrs))
        return out

    def linear(x, nin, nout, name):
        lim = math.sqrt(6 / (nin + nout))
        w = init(f"{name}.w", rng.uniform(-lim, lim, (nin, nout)))
        return node("Add", [node("MatMul", [x, w], f"{name}.mm"), init(f"{name}.b", rng.normal(0, 0.02, nout))], f"{name}.out")

    def norm(x, name):
        g, b = init(f"{name}.g", rng.uniform(0.8, 1.2, hidden)), init(f"{name}.beta", rng.normal(0, 0.05, hidden))
        return node("LayerNormalization", [x, g, b], f"{name}.out", axis=-1, epsilon=1e-12)

    heads_shape = helper.make_tensor("heads_shape", TensorProto.INT64, [4], [1, seq, heads, d])
    merged = helper.make_tensor("merged_shape", TensorProto.INT64, [3], [1, seq, hidden])
    x = norm("x", "emb")
    for i in range(layers):
        p = f"l{i}"

        def split(v, perm, name):
            return node("Transpose", [node("Reshape", [v, "heads_shape"], f"{name}.r")], f"{name}.t", perm=perm)

        q = split(linear(x, hidden, hidden, f"{p}.q"), [0, 2, 1, 3], f"{p}.q")
        k = split(linear(x, hidden, hidden, f"{p}.k"), [0, 2, 3, 1], f"{p}.k")
        v = split(linear(x, hidden, hidden, f"{p}.v"), [0, 2, 1, 3], f"{p}.v")
        s = node("Div", [node("MatMul", [q, k], f"{p}.qk"), init(f"{p}.sd", math.sqrt(d))], f"{p}.s")
        probs = node("Softmax", [node("Add", [s, "mask"], f"{p}.sm")], f"{p}.p", axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, v], f"{p}.c")], f"{p}.ct", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, "merged_shape"], f"{p}.cr")
        x = norm(node("Add", [linear(ctx, hidden, hidden, f"{p}.o"), x], f"{p}.res1"), f"{p}.ln1")
        h = node("Gelu", [linear(x, hidden, ffn, f"{p}.ffn1")], f"{p}.gelu")
        x = norm(node("Add", [linear(h, ffn, hidden, f"{p}.ffn2"), x], f"{p}.res2"), f"{p}.ln2")
    nodes.append(helper.make_node("Identity", [x], ["y"]))
    graph = helper.make_graph(
        nodes, "bert_like",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, hidden]),
         helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, 1, seq])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, hidden])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()] + [heads_shape, merged],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=9)


def _feeds(seq, hidden, count, seed):
    rng = np.random.default_rng(seed)
    feeds = []
    for _ in range(count):
        mask = np.zeros((1, 1, 1, seq), F)
        mask[..., rng.integers(seq // 2, seq) :] = -10000.0
        feeds.append({"x": rng.standard_normal((1, seq, hidden)).astype(F), "mask": mask})
    return feeds


@pytest.mark.parametrize("per_channel", [False, True])
def test_quantize_static_bert_like_gives_onnxruntime_bits(per_channel):
    """A two-layer BERT-like encoder quantized by onnxruntime's quantize_static (QDQ): every
    quantized tensor in it (each QuantizeLinear's output made a graph output: the layer norms',
    GELUs', projections', attention's) and the output are onnxruntime's bits on every input.
    Large enough that numpy's layer norm and erf (xrelay's before) move a few of its ~2.4
    million quantized values across a rounding boundary (per tensor: 4 of them)."""
    f32 = _bert(layers=2, seq=128, hidden=384, ffn=1536)
    q = qm.quantize(f32, _feeds(128, 384, 4, 0), per_channel=per_channel)
    assert {"LayerNormalization", "Gelu", "QuantizeLinear"} <= {n.op_type for n in q.graph.node}
    names = [n.output[0] for n in q.graph.node if n.op_type == "QuantizeLinear"]
    q.graph.output.extend(helper.make_tensor_value_info(n, TensorProto.UINT8, None) for n in names)
    m = qm.build(q, integer=True)
    for feed in _feeds(128, 384, 6, 9):
        refs = om.run_onnxruntime(q, feed)
        for name, value in feed.items():
            m.set_input(name, value)
        m.run()
        for k, ref in enumerate(refs):
            out = np.asarray(m.get_output(k)).reshape(ref.shape)
            assert ref.dtype == out.dtype and np.array_equal(ref, out), (q.graph.output[k].name, np.count_nonzero(ref != out))
        assert refs[0].max() > refs[0].min()


def test_quantized_gelu_between_reshapes_is_one_byte_table(counting):
    """DequantizeLinear -> Gelu -> QuantizeLinear with the reshapes the exporter writes around
    the FFN (``(128, 1536)`` <-> ``(1, 128, 1536)``) is a function of one byte: its step is one
    ``xr_lookup8`` pass from the FFN's bytes to the GELU's (the reshapes join the table chain
    as the identity; no float tensor, no quantize pass), with onnxruntime's bits."""
    f32 = _bert(layers=1, seq=128, hidden=384, ffn=1536)
    q = qm.quantize(f32, _feeds(128, 384, 4, 0))
    with counting("xr_lookup8") as calls:
        m = qm.build(q, integer=True)
        for feed in _feeds(128, 384, 3, 5):
            ref = om.run_onnxruntime(q, feed)[0]
            for name, value in feed.items():
                m.set_input(name, value)
            m.run()
            assert ref.max() > ref.min()
            np.testing.assert_array_equal(np.asarray(m.get_output(0)).reshape(ref.shape), ref)
    assert calls
    gelu = [c for name, _, c in m.executor.steps if "ort_gelu" in name]
    assert len(gelu) == 1 and [lab for lab, _, _ in gelu[0].thunks] == ["lookup"], [t[0] for t in gelu[0].thunks]


def test_broadcast_qlinear_add_of_a_bias_gives_onnxruntime_bits(counting):
    """DequantizeLinear(A) + DequantizeLinear(bias vector) -> QuantizeLinear: onnxruntime fuses
    it into a broadcasting QLinearAdd (BERT's projection biases after a quantized MatMul),
    whose float32 multiply-adds round near-ties differently from the float add and the
    QuantizeLinear (every A byte against 768 bias bytes: a few of those 196,608 sums sit that
    close to a rounding boundary)."""
    rng = np.random.default_rng(7)
    inits = {
        "sa": np.array(0.00493037, F), "za": np.array(139, np.uint8), "bq": rng.integers(0, 256, 768).astype(np.uint8),
        "sb": np.array(0.0029763943, F), "zb": np.array(141, np.uint8), "sc": np.array(0.00548519, F),
        "zc": np.array(132, np.uint8),
    }  # fmt: skip
    nodes = [
        helper.make_node("DequantizeLinear", ["a", "sa", "za"], ["af"]),
        helper.make_node("DequantizeLinear", ["bq", "sb", "zb"], ["bf"]),
        helper.make_node("Add", ["af", "bf"], ["s"]), helper.make_node("QuantizeLinear", ["s", "sc", "zc"], ["y"]),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes, "add", [helper.make_tensor_value_info("a", TensorProto.UINT8, [1, 256, 768])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    a = np.broadcast_to(np.arange(256, dtype=np.uint8)[None, :, None], (1, 256, 768)).copy()
    ref = om.run_onnxruntime(model, {"a": a})[0]
    with counting("xr_qlinear_add_const") as calls:
        m = qm.build(model, integer=True)
        m.set_input("a", a)
        m.run()
    assert np.array_equal(ref, m.get_output(0).numpy()), np.count_nonzero(ref != m.get_output(0).numpy())
    assert calls  # one C pass from the bytes, the bias side folded


def test_broadcast_qlinear_add_of_a_computed_side_gives_onnxruntime_bits(counting):
    """The attention mask's QLinearAdd: an 8-bit side computed at run time (1 x 1 x 128 x 128)
    broadcast over the heads (1 x 3 x 128 x 128) -- its inner multiply-adds made once a run,
    the add one C pass split between the threads, each part starting inside a period."""
    rng = np.random.default_rng(3)
    inits = {
        "sa": np.array(0.01282925, F), "za": np.array(128, np.uint8), "sb": np.array(0.37, F),
        "zb": np.array(255, np.uint8), "sc": np.array(0.0456, F), "zc": np.array(200, np.uint8),
    }  # fmt: skip
    nodes = [
        helper.make_node("DequantizeLinear", ["a", "sa", "za"], ["af"]),
        helper.make_node("DequantizeLinear", ["m", "sb", "zb"], ["mf"]),
        helper.make_node("Add", ["af", "mf"], ["s"]), helper.make_node("QuantizeLinear", ["s", "sc", "zc"], ["y"]),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes, "mask",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [1, 3, 128, 128]),
         helper.make_tensor_value_info("m", TensorProto.UINT8, [1, 1, 128, 128])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    with counting("xr_qlinear_add_const") as calls:
        m = qm.build(model, integer=True)
        for _ in range(2):
            feed = {"a": rng.integers(0, 256, (1, 3, 128, 128)).astype(np.uint8),
                    "m": rng.integers(0, 256, (1, 1, 128, 128)).astype(np.uint8)}  # fmt: skip
            for name, value in feed.items():
                m.set_input(name, value)
            m.run()
            ref = om.run_onnxruntime(model, feed)[0]
            assert np.array_equal(ref, m.get_output(0).numpy()), np.count_nonzero(ref != m.get_output(0).numpy())
    assert calls


def test_gather_of_a_dequantized_table_gathers_its_bytes():
    """DequantizeLinear(table) -> Gather -> QuantizeLinear (an embedding): onnxruntime gathers
    the bytes; so does the integer program (it dequantized the whole table every run: 76 ms of
    the zoo's BERT-base), with the same bits."""
    from xrelay.frontends.onnx import from_onnx
    from xrelay.transforms.fake_quantization_to_integer import FakeQuantizationToIntegerPass

    rng = np.random.default_rng(4)
    inits = {"t": rng.integers(0, 256, (50, 16)).astype(np.uint8), "s": np.array(0.02, F), "z": np.array(131, np.uint8)}
    nodes = [
        helper.make_node("DequantizeLinear", ["t", "s", "z"], ["tf"]), helper.make_node("Gather", ["tf", "ids"], ["g"]),
        helper.make_node("QuantizeLinear", ["g", "s", "z"], ["y"]),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes, "gather", [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 7])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    mod, _ = from_onnx(model, freeze_params=True)
    FakeQuantizationToIntegerPass(onnxruntime=True).apply(None, mod.module)
    text = str(mod)
    assert "take(meta[relay.Constant][0] /* ty=Tensor[(50, 16), uint8]" in text and "qnn.dequantize" not in text, text
    ids = np.array([[0, 49, 3, 3, 17, 8, 1]], np.int64)
    ref = om.run_onnxruntime(model, {"ids": ids})[0]
    m = qm.build(model, integer=True)
    m.set_input("ids", ids)
    m.run()
    assert np.array_equal(ref, m.get_output(0).numpy()) and np.array_equal(ref[0], inits["t"][ids[0]])


def test_c_target_gives_the_same_bits():
    """The C target emits qnn.ort_layer_norm and qnn.ort_gelu (a layer of the BERT-like model:
    float GELU -- 20 x 98 values, whose last 8 take the C library's erff -- layer norms and the
    broadcast QLinearAdds) with the arena runtime's bits, which are onnxruntime's."""
    import xrelay
    from xrelay.frontends.onnx import from_onnx
    from xrelay.transforms.fake_quantization_to_integer import FakeQuantizationToIntegerPass

    f32 = _bert(layers=1, seq=20, ffn=98)
    q = qm.quantize(f32, _feeds(20, 64, 2, 0))
    mod, params = from_onnx(q, freeze_params=True)
    FakeQuantizationToIntegerPass(onnxruntime=True).apply(None, mod.module)
    lib = xrelay.build(mod, params, target="c")
    assert {"qnn.ort_layer_norm", "qnn.ort_gelu"} <= {op.name for op in lib.planned.walk()}
    arena = xrelay.build(mod, params)
    for feed in _feeds(20, 64, 2, 5):
        ref = om.run_onnxruntime(q, feed)[0]
        for m in (lib, arena):
            for name, value in feed.items():
                m.set_input(name, value)
            m.run()
        out = lib.get_output(0)
        assert np.ptp(out) > 0
        np.testing.assert_array_equal(out, arena.get_output(0))
        np.testing.assert_array_equal(np.asarray(out).reshape(ref.shape), ref)
