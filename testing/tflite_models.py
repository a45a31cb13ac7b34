"""TFLite test models: Keras applications with random weights, converted by TensorFlow.

``keras_tflite(name, size, quantized)`` builds ``keras.applications.<name>`` with
``weights=None`` (nothing is downloaded), gives its batch-norm layers random statistics (fresh
ones are the identity and make deep networks' activations vanish or explode), converts it with
``tf.lite.TFLiteConverter`` -- float32, or full-integer int8 (``inference_input_type`` and
``inference_output_type`` int8) calibrated on random representative data -- and caches the
flatbuffer outside the repository, in ``$XRELAY_MODEL_CACHE`` or ``~/.cache/xrelay/tflite``,
keyed by model, size, seed and TensorFlow's version. Needs the ``frontends`` extra.

``interpreter(path)`` is the TFLite interpreter (``ai_edge_litert``) the importer is checked
against; ``reference=True`` selects TFLite's reference kernels (``BUILTIN_REF``), which
define TFLite's arithmetic, instead of the optimized/XNNPACK ones.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

APPLICATIONS = ("MobileNetV2", "MobileNetV3Small", "EfficientNetB0", "ResNet50")


def cache_dir() -> Path:
    root = os.environ.get("XRELAY_MODEL_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "xrelay")
    path = Path(root) / "tflite"
    path.mkdir(parents=True, exist_ok=True)
    return path


def build_keras(name: str, size: int, classes: int = 10, seed: int = 0, logits: bool = False):
    """``keras.applications.<name>`` with random weights and random batch-norm statistics;
    ``logits`` leaves out the classifier's softmax."""
    import keras

    keras.utils.set_random_seed(seed)
    kwargs = dict(weights=None, input_shape=(size, size, 3), classes=classes)
    if logits:
        kwargs["classifier_activation"] = None
    if name.startswith("MobileNetV3"):
        kwargs["include_preprocessing"] = False
        kwargs["minimalistic"] = False
    model = getattr(keras.applications, name)(**kwargs)
    rng = np.random.default_rng(seed)
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            gamma, beta, mean, var = layer.get_weights()
            c = gamma.shape
            layer.set_weights(
                [
                    (1 + 0.2 * rng.standard_normal(c)).astype(np.float32),
                    (0.2 * rng.standard_normal(c)).astype(np.float32),
                    (0.2 * rng.standard_normal(c)).astype(np.float32),
                    (0.5 + rng.random(c)).astype(np.float32),
                ]
            )
    return model


def _full_integer(converter, shapes: list[list[int]], seed: int, low: float = -1.0, high: float = 1.0) -> None:
    """Set ``converter`` to full-integer int8 (int8 inputs and outputs), calibrated on 8 random
    inputs uniform in [low, high]."""
    import tensorflow as tf

    rng = np.random.default_rng(seed + 1)

    def representative():
        for _ in range(8):
            yield [rng.uniform(low, high, s).astype(np.float32) for s in shapes]

    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = tf.int8
    converter.inference_output_type = tf.int8


def convert(model, size: int | None, quantized: bool, seed: int = 0, shape: list[int] | None = None) -> bytes:
    """The TFLite flatbuffer of a Keras model: float32, or full-integer int8 (calibrated on
    images of ``size``, or inputs of ``shape``)."""
    import tensorflow as tf

    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    if quantized:
        _full_integer(converter, [shape or [1, size, size, 3]], seed)
    return converter.convert()


def convert_function(fn, shapes: list[list[int]], quantized: bool, low: float = -1.0, high: float = 1.0, seed: int = 0) -> bytes:
    """The TFLite flatbuffer of ``fn`` (a Python function of float32 tensors of ``shapes``):
    float32, or full-integer int8 calibrated on random inputs uniform in [low, high]."""
    import tensorflow as tf

    f = tf.function(fn, input_signature=[tf.TensorSpec(s, tf.float32) for s in shapes])
    converter = tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function()], f)
    if quantized:
        _full_integer(converter, shapes, seed, low, high)
    return converter.convert()


def edit(data: bytes, change) -> bytes:
    """A flatbuffer changed by ``change(model)``, which edits TFLite's object API model
    (``ModelT``: its subgraphs' tensors, quantization and operator options) in place."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as schema

    model = schema.ModelT.InitFromPackedBuf(data, 0)
    change(model)
    builder = flatbuffers.Builder(0)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def keras_tflite(
    name: str, size: int = 64, quantized: bool = False, classes: int = 10, seed: int = 0, logits: bool | None = None
) -> Path:
    """The cached ``.tflite`` file of Keras application ``name`` (built on first use).
    ``logits``: leave out the classifier's softmax; by default int8 models end in logits (the
    backbone's bits stay visible: a softmax of random weights' logits is often one-hot) and
    float models in the softmax."""
    import tensorflow as tf

    if logits is None:
        logits = quantized
    kind = "int8" if quantized else "f32"
    if logits != quantized:
        kind += "-logits" if logits else "-softmax"
    path = cache_dir() / f"{name}-{size}-{classes}-{seed}-{kind}-tf{tf.__version__}.tflite"
    if not path.exists():
        data = convert(build_keras(name, size, classes, seed, logits=logits), size, quantized, seed)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return path


def interpreter(path: str | os.PathLike, reference: bool = False):
    """The TFLite interpreter on ``path``, tensors allocated; one thread."""
    from ai_edge_litert import interpreter as litert

    kwargs = {}
    if reference:
        kwargs["experimental_op_resolver_type"] = litert.OpResolverType.BUILTIN_REF
    interp = litert.Interpreter(model_path=os.fspath(path), num_threads=1, **kwargs)
    interp.allocate_tensors()
    return interp


def run_interpreter(interp, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Run the interpreter on ``inputs`` (in the order of its input details)."""
    for detail, x in zip(interp.get_input_details(), inputs):
        interp.set_tensor(detail["index"], x)
    interp.invoke()
    return [interp.get_tensor(d["index"]).copy() for d in interp.get_output_details()]


def input_name(interp) -> str:
    """The name of the interpreter's first input tensor (the importer's ``shape_dict`` key)."""
    return interp.get_input_details()[0]["name"]


def main(argv: list[str] | None = None) -> int:
    """``python -m xrelay.testing.tflite_models NAME [--int8] [--size N] -o FILE.tflite``: a
    Keras application with random weights as a TFLite flatbuffer (float32, or full-integer
    int8 ending in logits), built once into the cache and copied to ``FILE``."""
    import argparse
    import shutil
    import sys

    ap = argparse.ArgumentParser(prog="python -m xrelay.testing.tflite_models", description="Write a Keras application with random weights as a TFLite flatbuffer.")
    ap.add_argument("name", choices=APPLICATIONS)
    ap.add_argument("--int8", action="store_true", help="full-integer int8 (random representative data)")
    ap.add_argument("--size", type=int, default=64, help="input height and width (default 64)")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args(argv)
    if not 32 <= args.size <= 1024:
        ap.error(f"--size must be from 32 to 1024, got {args.size}")
    try:
        src = keras_tflite(args.name, args.size, quantized=args.int8)
        tmp = f"{args.output}.tmp{os.getpid()}"
        shutil.copyfile(src, tmp)
        os.replace(tmp, args.output)
    except OSError as e:
        print(f"tflite_models: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
