"""The TFLite importer against the TFLite interpreter (ai-edge-litert).

Models are Keras applications with random weights (``xrelay.testing.tflite_models``: built by
TensorFlow's converter, cached outside the repository) and small Keras models for single
operators. Float models: within 1e-4 of the interpreter (relative to the output's largest
magnitude). Full-integer int8 models: the same bits as TFLite's reference kernels
(``BUILTIN_REF``, TFLite's definition and what TFLite Micro runs) on 100 random inputs.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tflite", reason="the 'frontends' extra is not installed (pip install -e '.[frontends]')")
pytest.importorskip("tensorflow", reason="the 'frontends' extra is not installed (tensorflow builds the models)")
pytest.importorskip("ai_edge_litert", reason="the 'frontends' extra is not installed (the TFLite interpreter)")

from xrelay.frontends.tflite import TFLiteImportError, from_tflite, import_tflite  # noqa: E402
from xrelay.runtime.interpreter import run  # noqa: E402
from xrelay.testing import tflite_models as T  # noqa: E402

from .conftest import assert_one_line_error, relay_import  # noqa: E402


def _ops(module) -> list[str]:
    return [op.name for op in next(iter(module.ops)).body.block.ops]


def _inputs(interp, n: int, seed: int = 0) -> np.ndarray:
    d = interp.get_input_details()[0]
    shape = [n, *d["shape"][1:]]
    rng = np.random.default_rng(seed)
    if d["dtype"] == np.int8:
        return rng.integers(-128, 128, shape).astype(np.int8)
    return rng.uniform(-1, 1, shape).astype(np.float32)


def _compare(path, n: int, reference: bool, chunk: int = 10):
    """Run ``n`` inputs through the interpreter and xrelay, ``chunk`` at a time (the batch of
    both resized to ``chunk``: the reference interpreter keeps every intermediate array)."""
    interp = T.interpreter(path, reference=reference)
    d = interp.get_input_details()[0]
    x = _inputs(interp, n)
    chunk = min(chunk, n)
    interp.resize_tensor_input(d["index"], [chunk, *x.shape[1:]])
    interp.allocate_tensors()
    result = import_tflite(path, shape_dict={T.input_name(interp): [chunk, *x.shape[1:]]})
    got, want = [], []
    for i in range(0, n, chunk):
        want.append(T.run_interpreter(interp, [x[i : i + chunk]])[0])
        got.append(run(result.module, [x[i : i + chunk]], result.params)[0])
    got, want = np.concatenate(got), np.concatenate(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    return x, got, want, result


def _keras_ops_model(quantized: bool) -> bytes:
    """One small Keras model using the operators of the applications in both paddings."""
    import keras

    keras.utils.set_random_seed(3)
    inp = keras.Input((17, 17, 3))
    a = keras.layers.Conv2D(8, 3, strides=2, padding="same", activation="relu6")(inp)
    b = keras.layers.DepthwiseConv2D(3, padding="same", depth_multiplier=2)(a)
    b = keras.layers.Conv2D(8, 1, activation="relu")(b)
    c = keras.layers.Add()([a, b])
    d = keras.layers.AveragePooling2D(3, strides=2, padding="same")(c)
    e = keras.layers.MaxPooling2D(2, padding="valid")(c)
    e = keras.layers.ZeroPadding2D(((0, 1), (1, 0)))(e)
    e = keras.layers.Conv2D(8, 1, padding="valid")(e)
    f = keras.layers.Concatenate()([d, e])
    f = keras.layers.Multiply()([f, keras.layers.Activation("sigmoid")(f)])
    f = keras.layers.Activation("hard_swish")(f)
    g = keras.layers.GlobalAveragePooling2D()(f)
    out = keras.layers.Dense(5)(g)
    model = keras.Model(inp, out)
    return T.convert(model, 17, quantized, seed=3)


@pytest.fixture(scope="module", params=[False, True], ids=["f32", "int8"])
def ops_model(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("tflite") / f"ops-{request.param}.tflite"
    path.write_bytes(_keras_ops_model(request.param))
    return path, request.param


def test_operators(ops_model):
    path, quantized = ops_model
    x, got, want, result = _compare(path, 100 if quantized else 8, reference=True)
    assert np.isfinite(got.astype(np.float64)).all() and np.ptp(want.astype(np.float64)) > 0
    if quantized:
        np.testing.assert_array_equal(got, want)
        assert "qnn.conv2d" in _ops(result.module) and "relay.take" in _ops(result.module)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
        assert _ops(result.module).count("relay.nn.conv2d") == 4


@pytest.mark.parametrize("quantized", [False, True], ids=["f32", "int8"])
@pytest.mark.parametrize("name", T.APPLICATIONS)
def test_keras_applications(name, quantized):
    path = T.keras_tflite(name, 64, quantized=quantized)
    x, got, want, _ = _compare(path, 100 if quantized else 4, reference=True)
    assert np.ptp(want.astype(np.float64)) > 0
    if quantized:
        mismatched = int((got != want).any(axis=-1).sum())
        assert mismatched == 0, f"{mismatched}/100 inputs differ from TFLite's reference kernels"
    else:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


def test_relay_signature_and_names():
    import tflite

    path = T.keras_tflite("MobileNetV2", 64, quantized=False)
    model = tflite.Model.GetRootAsModel(path.read_bytes(), 0)
    mod, params = from_tflite(model, shape_dict=None, dtype_dict=None)
    main = next(iter(mod.module.ops))
    args = [a.name_hint for a in main.body.block.args]
    assert args[0].startswith("serving_default") and set(args[1:]) == set(params)
    assert all(p.dtype == np.float32 for p in params.values())


def test_unsupported_operators_listed(tmp_path):
    import tensorflow as tf

    @tf.function(input_signature=[tf.TensorSpec([4, 6], tf.float32)])
    def f(x):
        return tf.math.cumsum(tf.sort(x, axis=-1), axis=1)

    conv = tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function()])
    path = tmp_path / "sorts.tflite"
    path.write_bytes(conv.convert())
    with pytest.raises(TFLiteImportError, match=r"operator\(s\) are not supported: CUMSUM .*TOPK_V2|not supported: .*CUMSUM"):
        import_tflite(path)


def test_bad_shape_dict():
    path = T.keras_tflite("MobileNetV2", 64, quantized=False)
    with pytest.raises(TFLiteImportError, match="unknown input"):
        import_tflite(path, shape_dict={"nope": [1, 64, 64, 3]})


@pytest.mark.parametrize("content", [b"", b"TFL3", b"\x10\x00\x00\x00TFL3" + b"\xff" * 40, b"not a model at all"])
def test_relay_import_bad_tflite(tmp_path, content):
    path = tmp_path / "bad.tflite"
    path.write_bytes(content)
    assert_one_line_error(relay_import(str(path)), "relay-import: error: ")


def test_relay_import_tflite(tmp_path):
    path = T.keras_tflite("MobileNetV2", 64, quantized=True)
    out, npz = tmp_path / "m.mlir", tmp_path / "p.npz"
    r = relay_import(str(path), "-o", str(out), "--params", str(npz))
    assert r.returncode == 0, r.stderr
    from xrelay.relay import IRModule

    interp = T.interpreter(path, reference=True)
    x = _inputs(interp, 1)
    want = T.run_interpreter(interp, [x])[0]
    got = run(IRModule.from_text(out.read_text()).module, [x], dict(np.load(npz)))[0]
    np.testing.assert_array_equal(got, want)


# ---- int8 SOFTMAX ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def softmax_models():
    """One int8 SOFTMAX over a last axis of 10 and of 1000, converted by TensorFlow."""
    import tensorflow as tf

    return {d: T.convert_function(lambda x: tf.nn.softmax(x, axis=-1), [[1, d]], True, -4.0, 4.0) for d in (10, 1000)}


def _softmax_variant(data: bytes, scale: float, beta: float, dtype: str) -> bytes:
    """The converted SOFTMAX with another input scale and beta; ``uint8``: every tensor
    uint8, zero points shifted by 128 (the converter writes int8 only, older tools uint8)."""
    from ai_edge_litert import schema_py_generated as schema

    def change(model):
        g = model.subgraphs[0]
        g.tensors[g.inputs[0]].quantization.scale = [scale]
        (op,) = g.operators
        op.builtinOptions.beta = beta
        if dtype == "uint8":
            for t in g.tensors:
                t.type = schema.TensorType.UINT8
                t.quantization.zeroPoint = [int(z) + 128 for z in t.quantization.zeroPoint]

    return T.edit(data, change)


def _softmax_inputs(depth: int, dtype: str, scale_beta: float) -> np.ndarray:
    """100 rows: 40 uniform over the dtype's range, 40 peaked (low values and 5 high ones), a
    constant row, rows with two equal maxima, rows spanning 0..3 steps."""
    info = np.iinfo(dtype)
    lo = int(info.min)
    rng = np.random.default_rng(depth)
    x = rng.integers(lo, lo + 256, (100, depth))
    x[40:80] = rng.integers(lo, lo + 100, (40, depth))
    for r in range(40, 80):
        x[r, rng.integers(0, depth, 5)] = rng.integers(lo + 150, lo + 256, 5)
    x[80] = lo + 77
    x[81:90, :2] = x[81:90].max(axis=1, keepdims=True) + 0
    x[90:] = rng.integers(lo + 100, lo + 104, (10, depth))
    # TFLite's reference kernel stops (TFLITE_CHECK) where the exponentials sum to 512 or more
    keep = np.exp(scale_beta * (x - x.max(axis=1, keepdims=True))).sum(axis=1) < 500
    return x[keep].astype(dtype)


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("scale,beta", [(0.03125, 1.0), (0.1, 0.5), (0.0104, 2.0), (0.25, 0.125), (0.5, 100.0)])
@pytest.mark.parametrize("depth", [10, 1000])
def test_quantized_softmax(softmax_models, tmp_path, depth, scale, beta, dtype):
    path = tmp_path / "softmax.tflite"
    path.write_bytes(_softmax_variant(softmax_models[depth], scale, beta, dtype))
    x = _softmax_inputs(depth, dtype, scale * beta)
    assert len(x) >= 60
    interp = T.interpreter(path, reference=True)
    interp.resize_tensor_input(interp.get_input_details()[0]["index"], list(x.shape))
    interp.allocate_tensors()
    want = T.run_interpreter(interp, [x])[0]
    result = import_tflite(path, shape_dict={T.input_name(interp): list(x.shape)})
    got = run(result.module, [x], result.params)[0]
    assert got.dtype == want.dtype == np.dtype(dtype)
    assert len(np.unique(want)) > 8 if scale * beta < 1 else np.ptp(want.astype(np.int64)) > 0
    np.testing.assert_array_equal(got, want)


def test_quantized_softmax_built_and_c(softmax_models, tmp_path):
    """The int64 row arithmetic through the arena runtime and the C target's program."""
    import xrelay

    path = tmp_path / "softmax.tflite"
    path.write_bytes(_softmax_variant(softmax_models[10], 0.03125, 1.0, "int8"))
    x = _softmax_inputs(10, "int8", 0.03125)
    interp = T.interpreter(path, reference=True)
    interp.resize_tensor_input(interp.get_input_details()[0]["index"], list(x.shape))
    interp.allocate_tensors()
    want = T.run_interpreter(interp, [x])[0]
    result = import_tflite(path, shape_dict={T.input_name(interp): list(x.shape)})
    m = xrelay.build(result.module, result.params, threads=1)
    m.set_input(0, x)
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), want)
    c = xrelay.build(result.module, result.params, target="c")
    c.set_input(0, x)
    c.run_aot()
    np.testing.assert_array_equal(c.get_output(0).numpy(), want)


def test_quantized_softmax_classifier():
    """EfficientNet-B0 with Keras's default softmax head, int8: the same bits as TFLite's
    reference kernels on 100 random inputs."""
    path = T.keras_tflite("EfficientNetB0", 64, quantized=True, logits=False)
    x, got, want, result = _compare(path, 100, reference=True)
    assert "relay.left_shift" in _ops(result.module)
    assert len({row.tobytes() for row in want}) > 20
    np.testing.assert_array_equal(got, want)


def test_quantized_softmax_refused(softmax_models, tmp_path):
    def zero_point(model):
        g = model.subgraphs[0]
        g.tensors[g.outputs[0]].quantization.zeroPoint = [0]

    path = tmp_path / "zp.tflite"
    path.write_bytes(T.edit(softmax_models[10], zero_point))
    with pytest.raises(TFLiteImportError, match="SOFTMAX .*scale 1/256 and zero point -128"):
        import_tflite(path)
    path.write_bytes(_softmax_variant(softmax_models[10], 1e-9, 1.0, "int8"))
    with pytest.raises(TFLiteImportError, match="too small for TFLite's int8 SOFTMAX"):
        import_tflite(path)


# ---- more operators: movement, activations with options, batched products ------------------


def _keras_more_ops(quantized: bool, elu: bool) -> bytes:
    """A small Keras model of the operators transformer blocks and small sequence models
    write: SPLIT_V, PACK, UNPACK, GATHER, TILE, BATCH_MATMUL, GELU (both forms), LEAKY_RELU,
    HARD_SWISH; float models also PRELU. ``elu``: ELU alone (its op has no reference kernel)."""
    import keras

    keras.utils.set_random_seed(5)
    inp = keras.Input((8, 6))
    if elu:
        model = keras.Model(inp, keras.layers.Activation("elu")(inp))
        return T.convert(model, None, quantized, seed=5, shape=[1, 8, 6])
    a, b = keras.ops.split(inp, [2], axis=-1)
    u = keras.ops.unstack(inp, axis=1)
    c = keras.ops.stack([u[0], u[3] * u[5]], axis=1)
    g = keras.ops.take(inp, np.array([0, 3, 5, 3]), axis=1)
    # TILE's version 3 (int8) has no reference kernel: concatenated copies instead
    t = keras.ops.concatenate([a, a, a], axis=-1) if quantized else keras.ops.tile(a, [1, 1, 3])
    q = keras.layers.Dense(6)(inp)
    k = keras.layers.Dense(6)(inp)
    att = keras.ops.matmul(q, keras.ops.transpose(k, [0, 2, 1]))
    v = keras.ops.matmul(keras.layers.Activation("sigmoid")(att), b)
    outs = [
        keras.layers.Concatenate()([t, keras.layers.Activation("hard_swish")(inp)]),
        c,
        g,
        v,
        keras.ops.gelu(q, approximate=True),
        keras.layers.Dense(6, activation="gelu")(inp),
        keras.layers.LeakyReLU(0.2)(inp),
    ]
    if not quantized:
        outs.append(keras.layers.PReLU(alpha_initializer=keras.initializers.RandomUniform(0, 0.5))(inp))
    return T.convert(keras.Model(inp, outs), None, quantized, seed=5, shape=[1, 8, 6])


@pytest.mark.parametrize("quantized", [False, True], ids=["f32", "int8"])
@pytest.mark.parametrize("elu", [False, True], ids=["ops", "elu"])
def test_more_operators(tmp_path, quantized, elu):
    path = tmp_path / "more.tflite"
    path.write_bytes(_keras_more_ops(quantized, elu))
    interp = T.interpreter(path, reference=quantized and not elu)
    rng = np.random.default_rng(0)
    result = import_tflite(path)
    codes = {"relay.take", "relay.split", "relay.nn.batch_matmul"} | (set() if quantized else {"relay.tile"})
    assert elu or codes <= set(_ops(result.module))
    order = {d["name"]: i for i, d in enumerate(interp.get_output_details())}
    for _ in range(100 if quantized else 8):
        x = rng.integers(-128, 128, (1, 8, 6)).astype(np.int8) if quantized else rng.uniform(-4, 4, (1, 8, 6)).astype(np.float32)
        want = T.run_interpreter(interp, [x])
        got = run(result.module, [x], result.params)
        assert len(got) == len(want)
        for name, g in zip(result.output_names, got):
            w = want[order[name]]
            assert g.shape == w.shape and g.dtype == w.dtype and np.ptp(w.astype(np.float64)) > 0, name
            if quantized:
                np.testing.assert_array_equal(g, w, err_msg=name)
            else:
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * float(np.abs(w).max()), err_msg=name)


def test_transformer_block_f32(tmp_path):
    """Keras's MultiHeadAttention, LayerNormalization and a GELU feed-forward, float32: the
    converter writes BATCH_MATMUL, GATHER (of shapes), GELU, SOFTMAX, MEAN, RSQRT."""
    import keras

    keras.utils.set_random_seed(2)
    inp = keras.Input((8, 16))
    x = keras.layers.LayerNormalization()(inp + keras.layers.MultiHeadAttention(2, 8)(inp, inp))
    f = keras.layers.Dense(16)(keras.layers.Dense(32, activation="gelu")(x))
    model = keras.Model(inp, keras.layers.LayerNormalization()(x + f))
    path = tmp_path / "block.tflite"
    path.write_bytes(T.convert(model, None, False, shape=[1, 8, 16]))
    interp = T.interpreter(path, reference=True)
    result = import_tflite(path)
    assert {"relay.nn.batch_matmul", "relay.erf", "relay.nn.softmax"} <= set(_ops(result.module))
    rng = np.random.default_rng(1)
    for _ in range(8):
        x = rng.uniform(-2, 2, (1, 8, 16)).astype(np.float32)
        want = T.run_interpreter(interp, [x])[0]
        got = run(result.module, [x], result.params)[0]
        assert np.ptp(want) > 0
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


def test_reshape_of_unknown_batch(tmp_path):
    """A model saved with an unknown batch: RESHAPE to [-1, 6] has an output the converter
    leaves unknown ([1, 6] in its shape), computed from the shape operand; SPLIT_V with a
    size of -1 before the last."""
    import tensorflow as tf

    def f(x):
        return tf.reshape(x, [-1, 6]) * 2.0, tf.split(x, [2, -1], axis=-1)[1]

    def minus_one_first(model):  # the converter writes [2, -1]: the -1 first needs its size
        g = model.subgraphs[0]
        (op,) = [o for o in g.operators if len(o.inputs) == 3 and len(o.outputs) == 2]
        buf = model.buffers[g.tensors[op.inputs[1]].buffer]
        assert list(np.frombuffer(bytes(buf.data), np.int32)) == [2, -1]
        buf.data = np.array([-1, 4], np.int32).tobytes()

    path = tmp_path / "reshape.tflite"
    path.write_bytes(T.edit(T.convert_function(f, [[None, 8, 6]], False), minus_one_first))
    interp = T.interpreter(path, reference=True)
    x = np.random.default_rng(0).uniform(-1, 1, (1, 8, 6)).astype(np.float32)
    want = T.run_interpreter(interp, [x])
    result = import_tflite(path)
    got = run(result.module, [x], result.params)
    order = {d["name"]: i for i, d in enumerate(interp.get_output_details())}
    assert sorted(want[order[n]].shape for n in result.output_names) == [(1, 8, 4), (8, 6)]
    for name, g in zip(result.output_names, got):
        np.testing.assert_array_equal(g, want[order[name]])


# ---- another batch through shape_dict ----------------------------------------------------


def _attention_model(saved_batch: bool) -> bytes:
    """A float attention block: Dense projections, heads by reshape, softmax(q k^T) v, the
    heads merged back, Dense. ``saved_batch``: saved for batch 1, and the block's input first
    goes through a transpose putting the batch in the middle (``[D, 1, S]``) and a reshape to
    ``[1, D, 1, S]`` (a leading 1 that is not the batch), back by a transpose; otherwise
    saved with an unknown batch, so that the converter computes the shapes (SHAPE, GATHER of
    one-element shape vectors, PACK)."""
    import keras

    keras.utils.set_random_seed(4)
    s, h, d = 6, 2, 4
    inp = keras.Input((s, h * d), batch_size=1 if saved_batch else None)
    x = inp
    if saved_batch:
        w = keras.random.uniform((h * d, 1, s), 0.5, 1.5, seed=1)
        t = keras.ops.reshape(keras.ops.transpose(x, [2, 0, 1]) * w, (1, h * d, 1, s))
        x = keras.ops.reshape(keras.ops.transpose(keras.ops.tanh(t), [2, 3, 0, 1]), (1, s, h * d))
    b = 1 if saved_batch else -1
    q, k, v = (keras.ops.transpose(keras.ops.reshape(keras.layers.Dense(h * d)(x), (b, s, h, d)), [0, 2, 1, 3]) for _ in range(3))
    o = keras.ops.matmul(keras.ops.softmax(keras.ops.matmul(q, keras.ops.swapaxes(k, -1, -2)) * 0.5, axis=-1), v)
    o = keras.ops.reshape(keras.ops.transpose(o, [0, 2, 1, 3]), (b, s, h * d))
    model = keras.Model(inp, keras.layers.Dense(h * d)(o))
    return T.convert(model, None, False)


@pytest.mark.parametrize("saved_batch", [True, False], ids=["saved-batch-1", "unknown-batch"])
def test_shape_dict_batch_of_attention(tmp_path, saved_batch):
    """The attention block imported for batch 3 through ``shape_dict``: only the axis that
    carries the input's batch changes. Against the interpreter resized to batch 3 (unknown
    batch) or run on each of the 3 inputs (a model saved for batch 1 cannot be resized: its
    shape constants hold the batch)."""
    path = tmp_path / "attention.tflite"
    path.write_bytes(_attention_model(saved_batch))
    interp = T.interpreter(path, reference=True)
    d = interp.get_input_details()[0]
    assert list(d["shape_signature"]) == [1 if saved_batch else -1, 6, 8]
    x = np.random.default_rng(3).uniform(-2, 2, (3, 6, 8)).astype(np.float32)
    if saved_batch:
        want = np.concatenate([T.run_interpreter(interp, [x[i : i + 1]])[0] for i in range(3)])
    else:
        interp.resize_tensor_input(d["index"], [3, 6, 8])
        interp.allocate_tensors()
        want = T.run_interpreter(interp, [x])[0]
    result = import_tflite(path, shape_dict={d["name"]: [3, 6, 8]})
    got = run(result.module, [x], result.params)[0]
    assert got.shape == want.shape == (3, 6, 8) and np.isfinite(got).all()
    assert np.ptp(want) > 0 and np.abs(want[0] - want[1]).max() > 1e-3  # each input its own output
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


def test_shape_dict_batch_merged_refused(tmp_path):
    """A model saved for batch 1 whose converter wrote the transpose of its size-1 batch axis
    as a RESHAPE (``[1, 6, 8]`` to ``[6, 1, 8]``) cannot take batch 3 by any reshape: refused,
    naming the tensor, rather than imported with the samples mixed."""
    import tensorflow as tf

    path = tmp_path / "moved.tflite"
    path.write_bytes(T.convert_function(lambda x: tf.transpose(x, [1, 0, 2]) * 2.0, [[1, 6, 8]], False))
    interp = T.interpreter(path)
    result = import_tflite(path, shape_dict={T.input_name(interp): [1, 6, 8]})
    assert "relay.reshape" in _ops(result.module)
    with pytest.raises(TFLiteImportError, match=r"RESHAPE.*new shape \[6, 1, 8\] merges the batch .*other batch than 1"):
        import_tflite(path, shape_dict={T.input_name(interp): [3, 6, 8]})


# ---- upsampling: TRANSPOSE_CONV, RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR -------------------


def _opcodes(model) -> list[str]:
    """The builtin operator of each op of ``model`` (the object API's ``ModelT``), by name."""
    from ai_edge_litert import schema_py_generated as schema

    names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    codes = [max(c.builtinCode, c.deprecatedBuiltinCode) for c in model.operatorCodes]
    return [names[codes[op.opcodeIndex]] for op in model.subgraphs[0].operators]


def _to_uint8(model) -> None:
    """Every int8 tensor uint8 (values and zero points shifted by 128), as older tools wrote."""
    from ai_edge_litert import schema_py_generated as schema

    for t in model.subgraphs[0].tensors:
        if t.type != schema.TensorType.INT8:
            continue
        t.type = schema.TensorType.UINT8
        t.quantization.zeroPoint = [int(z) + 128 for z in t.quantization.zeroPoint]
        buf = model.buffers[t.buffer]
        if buf.data is not None and len(buf.data):
            buf.data = (np.frombuffer(bytes(buf.data), np.int8).astype(np.int16) + 128).astype(np.uint8).tobytes()


def _per_tensor_filters(model) -> None:
    """TRANSPOSE_CONV filters requantized per tensor (the largest channel scale; biases follow)."""
    g = model.subgraphs[0]
    for op, code in zip(g.operators, _opcodes(model)):
        if code != "TRANSPOSE_CONV":
            continue
        wt, xt = g.tensors[op.inputs[1]], g.tensors[op.inputs[2]]
        scales = np.asarray(wt.quantization.scale, np.float64)
        shape = list(wt.shape)
        real = np.frombuffer(bytes(model.buffers[wt.buffer].data), np.int8).reshape(shape) * scales.reshape(-1, 1, 1, 1)
        s = float(scales.max())
        model.buffers[wt.buffer].data = np.clip(np.round(real / s), -127, 127).astype(np.int8).tobytes()
        wt.quantization.scale, wt.quantization.zeroPoint, wt.quantization.quantizedDimension = [s], [0], 0
        if len(op.inputs) > 3 and op.inputs[3] >= 0:
            bt = g.tensors[op.inputs[3]]
            b = np.frombuffer(bytes(model.buffers[bt.buffer].data), np.int32) * scales / s
            model.buffers[bt.buffer].data = np.round(b).astype(np.int32).tobytes()
            bt.quantization.scale = [float(xt.quantization.scale[0]) * s]
            bt.quantization.zeroPoint = [0]


def _check_against_interpreter(path, shape, dtype: str, n: int, exact: bool, reference: bool = True):
    """``n`` random inputs through the interpreter and xrelay (every output); float outputs
    within 1e-5 of the output's largest magnitude, integer outputs the same bits. Returns the
    import."""
    interp = T.interpreter(path, reference=reference)
    interp.resize_tensor_input(interp.get_input_details()[0]["index"], list(shape))
    interp.allocate_tensors()
    result = import_tflite(path, shape_dict={T.input_name(interp): list(shape)})
    order = {d["name"]: i for i, d in enumerate(interp.get_output_details())}
    rng = np.random.default_rng(4)
    outputs: dict[str, list] = {name: [] for name in result.output_names}
    for _ in range(n):
        if dtype == "float32":
            x = rng.uniform(-1, 1, shape).astype(np.float32)
        else:
            info = np.iinfo(dtype)
            x = rng.integers(int(info.min), int(info.max) + 1, shape).astype(dtype)
        want = T.run_interpreter(interp, [x])
        got = run(result.module, [x], result.params)
        for name, g in zip(result.output_names, got):
            w = want[order[name]]
            assert g.shape == w.shape and g.dtype == w.dtype, name
            assert np.isfinite(g.astype(np.float64)).all(), name
            if exact:
                np.testing.assert_array_equal(g, w, err_msg=name)
            else:
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5 * float(np.abs(w).max()), err_msg=name)
            outputs[name].append(g)
    for name, gs in outputs.items():  # each output follows its input
        assert len({g.tobytes() for g in gs}) == n, name
    return result


def _keras_transpose_convs():
    """Conv2DTranspose in both paddings, strides 1 to 3 (unequal too), kernels smaller and
    larger than the stride, random biases or none, a ReLU after one."""
    import keras

    keras.utils.set_random_seed(7)
    bias = keras.initializers.RandomUniform(-0.5, 0.5)
    inp = keras.Input((5, 6, 3))
    outs = [
        keras.layers.Conv2DTranspose(4, 3, strides=2, padding="same", activation="relu", bias_initializer=bias)(inp),
        keras.layers.Conv2DTranspose(4, (3, 2), strides=(3, 2), padding="valid", use_bias=False)(inp),
        keras.layers.Conv2DTranspose(5, 4, strides=2, padding="same", bias_initializer=bias)(inp),
        keras.layers.Conv2DTranspose(2, 1, strides=3, padding="same", bias_initializer=bias)(inp),
        keras.layers.Conv2DTranspose(3, 3, strides=1, padding="valid", bias_initializer=bias)(inp),
        keras.layers.Conv2DTranspose(3, (2, 5), strides=(1, 3), padding="same", use_bias=False)(inp),
    ]
    return keras.Model(inp, outs)


def _relu6_on_first(model) -> None:
    """The first TRANSPOSE_CONV with a fused RELU6 (the converter keeps Keras's ReLU apart)."""
    g = model.subgraphs[0]
    op = next(op for op, code in zip(g.operators, _opcodes(model)) if code == "TRANSPOSE_CONV")
    op.builtinOptions.fusedActivationFunction = 3


@pytest.fixture(scope="module")
def transpose_conv_models():
    model = _keras_transpose_convs()
    return {q: T.convert(model, None, q, seed=7, shape=[1, 5, 6, 3]) for q in (False, True)}


@pytest.mark.parametrize("variant", ["f32", "int8", "int8-per-tensor", "uint8"])
def test_transpose_conv(transpose_conv_models, tmp_path, variant):
    from ai_edge_litert import schema_py_generated as schema

    data = transpose_conv_models[variant != "f32"]
    if variant in ("int8-per-tensor", "uint8"):
        data = T.edit(data, _per_tensor_filters)
    if variant == "uint8":
        data = T.edit(data, _to_uint8)
    data = T.edit(data, _relu6_on_first)
    model = schema.ModelT.InitFromPackedBuf(data, 0)
    g = model.subgraphs[0]
    convs = [op for op, code in zip(g.operators, _opcodes(model)) if code == "TRANSPOSE_CONV"]
    assert len(convs) == 6 and sum(len(op.inputs) > 3 and op.inputs[3] >= 0 for op in convs) == 4
    if variant != "f32":  # the filters' quantization is what the variant says
        per_channel = [len(g.tensors[op.inputs[1]].quantization.scale) > 1 for op in convs]
        assert all(per_channel) if variant == "int8" else not any(per_channel)
    path = tmp_path / f"tconv-{variant}.tflite"
    path.write_bytes(data)
    dtype = {"f32": "float32", "uint8": "uint8"}.get(variant, "int8")
    result = _check_against_interpreter(path, [2, 5, 6, 3], dtype, 8 if variant == "f32" else 40, exact=variant != "f32")
    want_op = "relay.nn.conv2d_transpose" if variant == "f32" else "qnn.conv2d_transpose"
    assert _ops(result.module).count(want_op) == 6


def _resizes(x):
    """Bilinear and nearest resizes of ``x`` (1x7x6x3) up and down, in TFLite's three
    coordinate modes (align_corners, half_pixel_centers, neither)."""
    import tensorflow as tf

    v1 = tf.compat.v1.image
    return [
        v1.resize_bilinear(x, [13, 9], align_corners=True),
        tf.image.resize(x, [13, 9], method="bilinear"),  # half_pixel_centers
        v1.resize_bilinear(x, [13, 9]),
        v1.resize_bilinear(x, [4, 5], align_corners=True),
        tf.image.resize(x, [4, 5], method="bilinear"),
        v1.resize_bilinear(x, [5, 4]),
        v1.resize_nearest_neighbor(x, [13, 9], align_corners=True),
        tf.image.resize(x, [13, 9], method="nearest"),
        v1.resize_nearest_neighbor(x, [4, 11]),
        v1.resize_nearest_neighbor(x, [3, 5], align_corners=True),
        tf.image.resize(x, [5, 4], method="nearest"),
    ]


@pytest.fixture(scope="module")
def resize_models():
    return {q: T.convert_function(_resizes, [[1, 7, 6, 3]], q) for q in (False, True)}


def _resize_flags(model) -> list[tuple[str, bool, bool]]:
    g = model.subgraphs[0]
    return [
        (code, bool(op.builtinOptions.alignCorners), bool(op.builtinOptions.halfPixelCenters))
        for op, code in zip(g.operators, _opcodes(model))
        if code.startswith("RESIZE")
    ]


@pytest.mark.parametrize("dtype", ["float32", "int8", "uint8"])
def test_resize(resize_models, tmp_path, dtype):
    from ai_edge_litert import schema_py_generated as schema

    data = resize_models[dtype != "float32"]
    if dtype == "uint8":
        data = T.edit(data, _to_uint8)
    flags = _resize_flags(schema.ModelT.InitFromPackedBuf(data, 0))
    assert sorted(set(flags)) == [
        (f"RESIZE_{kind}", align, half)
        for kind in ("BILINEAR", "NEAREST_NEIGHBOR")
        for align, half in ((False, False), (False, True), (True, False))
    ]
    path = tmp_path / f"resize-{dtype}.tflite"
    path.write_bytes(data)
    result = _check_against_interpreter(path, [1, 7, 6, 3], dtype, 8 if dtype == "float32" else 40, exact=dtype != "float32")
    ops = _ops(result.module)
    assert ops.count("relay.image.resize2d") == (6 if dtype == "float32" else 0)


def test_upsampling_built_and_c(transpose_conv_models, resize_models, tmp_path):
    """The transposed convolutions (float and int8) and the quantized resizes through
    ``xrelay.build`` and the C target's program: TFLite's reference results (quantized: its
    bits)."""
    import xrelay

    cases = [
        ("tconv-f32", transpose_conv_models[False], (1, 5, 6, 3), "float32"),
        ("tconv", transpose_conv_models[True], (1, 5, 6, 3), "int8"),
        ("resize", resize_models[True], (1, 7, 6, 3), "int8"),
        ("resize-uint8", T.edit(resize_models[True], _to_uint8), (1, 7, 6, 3), "uint8"),
    ]
    for name, data, shape, dtype in cases:
        path = tmp_path / f"{name}.tflite"
        path.write_bytes(data)
        result = import_tflite(path)
        rng = np.random.default_rng(9)
        x = rng.uniform(-1, 1, shape).astype(dtype) if dtype == "float32" else rng.integers(0, 256, shape).astype(np.uint8).view(dtype)
        interp = T.interpreter(path, reference=True)
        order = {d["name"]: i for i, d in enumerate(interp.get_output_details())}
        tfl = T.run_interpreter(interp, [x])
        want = [tfl[order[n]] for n in result.output_names]
        for target in ("llvm", "c"):
            m = xrelay.build(result.module, result.params, target="c") if target == "c" else xrelay.build(result.module, result.params, threads=1)
            m.set_input(0, x)
            m.run_aot() if target == "c" else m.run()
            for i, w in enumerate(want):
                got, what = m.get_output(i).numpy(), f"{name} {target} output {i}"
                if dtype == "float32":
                    np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-5 * float(np.abs(w).max()), err_msg=what)
                else:
                    np.testing.assert_array_equal(got, w, err_msg=what)


def test_upsampling_refused(resize_models, tmp_path):
    def both_flags(model):
        g = model.subgraphs[0]
        op = next(op for op, code in zip(g.operators, _opcodes(model)) if code == "RESIZE_BILINEAR")
        op.builtinOptions.alignCorners = op.builtinOptions.halfPixelCenters = True

    def requantized(model):
        g = model.subgraphs[0]
        op = next(op for op, code in zip(g.operators, _opcodes(model)) if code == "RESIZE_NEAREST_NEIGHBOR")
        g.tensors[op.outputs[0]].quantization.scale = [0.5]

    path = tmp_path / "both.tflite"
    path.write_bytes(T.edit(resize_models[False], both_flags))
    line = assert_one_line_error(relay_import(str(path)))
    assert "RESIZE_BILINEAR operator" in line and "align_corners and half_pixel_centers together" in line
    path.write_bytes(T.edit(resize_models[True], requantized))
    with pytest.raises(TFLiteImportError, match="RESIZE_NEAREST_NEIGHBOR .*quantized unlike the input"):
        import_tflite(path)


def _keras_decoder(quantized: bool):
    """A small U-Net: two encoder stages, a Conv2DTranspose and a bilinear UpSampling2D back
    up with skip connections, a nearest upsampling to the output (float: Keras's
    UpSampling2D, whose repeat the converter writes as TILE and a RESHAPE of computed shape;
    int8: a nearest Resizing, as the reference resolver has no int8 TILE)."""
    import keras

    keras.utils.set_random_seed(11)
    inp = keras.Input((16, 16, 3))
    e1 = keras.layers.Conv2D(8, 3, padding="same", activation="relu")(inp)
    e2 = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(keras.layers.MaxPooling2D()(e1))
    mid = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(keras.layers.MaxPooling2D()(e2))
    up2 = keras.layers.Conv2DTranspose(16, 2, strides=2, padding="same")(mid)
    d2 = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(keras.layers.Concatenate()([up2, e2]))
    up1 = keras.layers.UpSampling2D(2, interpolation="bilinear")(d2)
    d1 = keras.layers.Conv2D(8, 3, padding="same", activation="relu")(keras.layers.Concatenate()([up1, e1]))
    up0 = keras.layers.Resizing(32, 32, interpolation="nearest")(d1) if quantized else keras.layers.UpSampling2D(2)(d1)
    return keras.Model(inp, keras.layers.Conv2D(4, 1)(up0))


@pytest.mark.parametrize("quantized", [False, True], ids=["f32", "int8"])
def test_keras_decoder(tmp_path, quantized):
    path = tmp_path / "decoder.tflite"
    path.write_bytes(T.convert(_keras_decoder(quantized), None, quantized, seed=11, shape=[1, 16, 16, 3]))
    x, got, want, result = _compare(path, 100 if quantized else 8, reference=True)
    ops = set(_ops(result.module))
    assert np.isfinite(got.astype(np.float64)).all() and len({row.tobytes() for row in got}) == len(got)
    if quantized:
        assert {"qnn.conv2d_transpose", "relay.take"} <= ops
        np.testing.assert_array_equal(got, want)
    else:
        assert {"relay.nn.conv2d_transpose", "relay.image.resize2d", "relay.tile"} <= ops
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()))


@pytest.mark.parametrize("dtype", ["float32", "int8", "uint8"])
def test_pixel_shuffles(tmp_path, dtype):
    """DEPTH_TO_SPACE (super-resolution's pixel shuffle) and SPACE_TO_DEPTH, blocks 2 and 3."""
    import tensorflow as tf

    def shuffles(x):
        return [tf.nn.depth_to_space(x, 2), tf.nn.depth_to_space(x, 3), tf.nn.space_to_depth(x, 2)]

    data = T.convert_function(shuffles, [[1, 4, 6, 36]], dtype != "float32")
    if dtype == "uint8":
        data = T.edit(data, _to_uint8)
    path = tmp_path / f"shuffles-{dtype}.tflite"
    path.write_bytes(data)
    # the reference resolver has no int8 DEPTH_TO_SPACE (version 2); a copy is one in every kernel
    result = _check_against_interpreter(path, [1, 4, 6, 36], dtype, 8, exact=True, reference=dtype == "float32")
    assert _ops(result.module).count("relay.transpose") == 3
