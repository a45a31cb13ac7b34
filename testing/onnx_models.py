"""ONNX models built in code, for the importer's tests and the benchmarks.

Every builder returns an ``onnx.ModelProto`` made with ``onnx.helper``; weights come from a
seeded numpy generator (He init for convolutions, Xavier for dense layers, batch-norm running
statistics that are not the identity), so outputs are numerically meaningful and the same on
every run. Nothing is downloaded and no framework is needed.

* ``resnet18`` / ``resnet50``: torchvision-style post-activation ResNets (conv-bn-relu stem,
  max pool, basic or bottleneck blocks, global average pool, flatten, Gemm).
* ``mobilenet_v2``: inverted residuals with depthwise convolutions and ReLU6 (Clip 0..6).
* ``se_net``: MobileNetV3-style blocks with hard-swish and squeeze-and-excitation
  (``ReduceMean``, ``HardSigmoid``, ``Mul``), pooled by a ``ReduceMean``.
* ``mlp``: Flatten, three Gemm (+Relu), Softmax.
* ``bert_layer``: one transformer encoder layer as exporters emit it, including the
  ``Shape -> Gather -> Unsqueeze -> Concat -> Reshape`` head split and GELU through Erf.
* ``relay_resnet_v2``: Relay's own ``relay.testing.resnet`` (pre-activation) network as ONNX,
  taking its parameters from a dict so it can be compared with the Relay workload.

``make_model`` and ``run_onnxruntime`` are small helpers for one-off graphs in tests.

As a command, it writes one of the models to a file::

    python -m xrelay.testing.onnx_models resnet18 -o resnet18.onnx [--batch 1] [--seed 0]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
"""Opset of the built models (17 has LayerNormalization)."""


def make_model(
    nodes: Sequence[onnx.NodeProto],
    inputs: Mapping[str, tuple[Sequence[int | str | None], Any]],
    outputs: Sequence[str] | Mapping[str, Any],
    initializers: Mapping[str, np.ndarray] | None = None,
    opset: int = OPSET,
    name: str = "graph",
    check: bool = True,
) -> onnx.ModelProto:
    """A model from nodes; ``inputs`` maps names to ``(shape, numpy dtype)``.

    ``outputs`` are names (float32) or a mapping name -> numpy dtype; their shapes are left
    unknown (onnxruntime infers them). The model is checked with ``onnx.checker`` unless
    ``check`` is false.
    """
    vis = [
        helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(np.dtype(dt)), list(shape))
        for n, (shape, dt) in inputs.items()
    ]
    out_types = dict(outputs) if isinstance(outputs, Mapping) else dict.fromkeys(outputs, np.float32)
    outs = [
        helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(np.dtype(dt)), None)
        for n, dt in out_types.items()
    ]
    inits = [numpy_helper.from_array(np.asarray(a), n) for n, a in (initializers or {}).items()]
    graph = helper.make_graph(list(nodes), name, vis, outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 9)  # what the installed onnxruntime reads
    # fill in the outputs' shapes (the checker wants them) from ONNX's shape inference
    model = onnx.shape_inference.infer_shapes(model)
    if check:
        onnx.checker.check_model(model)
    return model


def run_onnxruntime(model: onnx.ModelProto, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """Run ``model`` on CPU with onnxruntime (one thread, quiet) and return every output."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, dict(inputs))


def build_and_run(model: onnx.ModelProto, inputs: Mapping[str, np.ndarray], **build_options):
    """``model`` imported, built at ``opt_level=3`` (``build_options`` added) and run once on
    ``inputs``: the module, its first output and onnxruntime's."""
    import xrelay
    from xrelay.frontends.onnx import from_onnx

    mod, params = from_onnx(model)
    m = xrelay.build(mod, params, opt_level=3, **build_options)
    m.set_input(**inputs)
    m.run()
    return m, m.get_output(0).numpy(), run_onnxruntime(model, inputs)[0]


def dnnl_plan_steps(m) -> list:
    """A built module's oneDNN plan steps (``primitives._Step``: ``impl``, ``macs``, ...), in
    the order they run."""
    ex = m.executor
    return [s for (_, _, c), b in zip(ex.steps, ex.step_backends) if b == "dnnl" for s in c.dnnl_plan.steps]


def run_data(m, x: np.ndarray) -> np.ndarray:
    """A built module's first output for its input ``data`` = ``x``."""
    m.set_input(data=x)
    m.run()
    return m.get_output(0).numpy()


def engine_steps(m) -> tuple[list[str], list[str]]:
    """A built module's oneDNN steps by name (``dnnl.dense_swish(nn.dense+sigmoid+multiply)``)
    and its native steps' ops (copies left out)."""
    ex = m.executor
    names = [s.name for s in dnnl_plan_steps(m)]
    native = [ops for (_, ops, _), b in zip(ex.steps, ex.step_backends) if b == "native" and ops != "copy"]
    return names, native


def assert_like_onnxruntime(
    model: onnx.ModelProto, inputs: Mapping[str, np.ndarray], got: np.ndarray, rtol: float = 1e-5
) -> np.ndarray:
    """``got`` (a first output of ``model`` on ``inputs``) finite and within ``rtol`` (of the
    largest magnitude) of onnxruntime's, which is not all zeros; onnxruntime's output."""
    want = run_onnxruntime(model, inputs)[0]
    assert np.all(np.isfinite(got)) and float(np.max(np.abs(want))) > 0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * float(np.max(np.abs(want))))
    return want


def run_like_onnxruntime(
    model: onnx.ModelProto, feeds: Sequence[Mapping[str, np.ndarray]], rtol: float = 1e-5
):
    """``model`` built once and run on each of ``feeds``: every output finite and within
    ``rtol`` (of the largest magnitude) of onnxruntime's, and the first output differing
    between the first two feeds by a tenth of its magnitude (it reads its input). The module."""
    import xrelay
    from xrelay.frontends.onnx import from_onnx

    mod, params = from_onnx(model)
    m = xrelay.build(mod, params, opt_level=3)
    outs = []
    for feed in feeds:
        m.set_input(**feed)
        m.run()
        got = m.get_output(0).numpy()
        assert_like_onnxruntime(model, feed, got, rtol)
        outs.append(got)
    assert float(np.max(np.abs(outs[0] - outs[1]))) > 0.1 * float(np.max(np.abs(outs[0])))
    return m


class GraphBuilder:
    """Collects nodes and initializers with generated names (``conv1``, ``conv1_weight``...)."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: dict[str, np.ndarray] = {}
        self._count: dict[str, int] = {}

    def name(self, base: str) -> str:
        k = self._count.get(base, 0)
        self._count[base] = k + 1
        return base if k == 0 else f"{base}_{k}"

    def init(self, name: str, array: np.ndarray) -> str:
        if name in self.inits:
            raise ValueError(f"initializer {name!r} defined twice")
        self.inits[name] = np.asarray(array)
        return name

    def const(self, array: Any, base: str = "const") -> str:
        """A ``Constant`` node (as exporters emit for scalars and shapes)."""
        out = self.name(base)
        self.nodes.append(
            helper.make_node("Constant", [], [out], name=out, value=numpy_helper.from_array(np.asarray(array)))
        )
        return out

    def node(self, op: str, inputs: Sequence[str], base: str | None = None, n_out: int = 1, **attrs) -> Any:
        name = self.name(base or op.lower())
        outs = [name] if n_out == 1 else [f"{name}_out{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op, list(inputs), outs, name=name, **attrs))
        return outs[0] if n_out == 1 else outs

    # ---- layers with random weights --------------------------------------------------------

    def conv(self, x: str, cin: int, cout: int, k: int, stride: int = 1, pad: int | None = None,
             group: int = 1, bias: bool = False, name: str | None = None) -> str:
        name = self.name(name or "conv")
        fan_in = cin // group * k * k
        w = self.rng.normal(0.0, math.sqrt(2.0 / fan_in), (cout, cin // group, k, k)).astype(np.float32)
        ins = [x, self.init(f"{name}_weight", w)]
        if bias:
            ins.append(self.init(f"{name}_bias", self.rng.normal(0, 0.05, cout).astype(np.float32)))
        p = k // 2 if pad is None else pad
        self.nodes.append(
            helper.make_node("Conv", ins, [name], name=name, kernel_shape=[k, k], strides=[stride, stride],
                             pads=[p, p, p, p], group=group)
        )
        return name

    def bn(self, x: str, c: int, name: str | None = None, eps: float = 1e-5, gamma: float = 1.0) -> str:
        """Batch norm with random statistics; ``gamma`` scales the random scale (around 1)."""
        name = self.name(name or "bn")
        r = self.rng
        ins = [
            x,
            self.init(f"{name}_gamma", (gamma * r.uniform(0.5, 1.5, c)).astype(np.float32)),
            self.init(f"{name}_beta", r.normal(0, 0.1, c).astype(np.float32)),
            self.init(f"{name}_mean", r.normal(0, 0.1, c).astype(np.float32)),
            self.init(f"{name}_var", r.uniform(0.5, 1.5, c).astype(np.float32)),
        ]
        self.nodes.append(helper.make_node("BatchNormalization", ins, [name], name=name, epsilon=eps))
        return name

    def relu(self, x: str) -> str:
        return self.node("Relu", [x])

    def gemm(self, x: str, nin: int, nout: int, name: str | None = None) -> str:
        """A torch-style Linear: Gemm with transB=1 and a (out, in) weight."""
        name = self.name(name or "fc")
        lim = math.sqrt(6.0 / (nin + nout))
        w = self.rng.uniform(-lim, lim, (nout, nin)).astype(np.float32)
        b = self.rng.normal(0, 0.05, nout).astype(np.float32)
        ins = [x, self.init(f"{name}_weight", w), self.init(f"{name}_bias", b)]
        self.nodes.append(helper.make_node("Gemm", ins, [name], name=name, transB=1))
        return name

    def model(self, inputs: Mapping[str, tuple[Sequence[int | str], Any]], outputs: Sequence[str],
              name: str, opset: int = OPSET) -> onnx.ModelProto:
        return make_model(self.nodes, inputs, outputs, self.inits, opset=opset, name=name)


# ============================================================================================
# ResNet (torchvision style, post-activation)
# ============================================================================================


def _resnet(depth: int, batch: int, image: int, num_classes: int, seed: int) -> onnx.ModelProto:
    layers, bottleneck = {18: ([2, 2, 2, 2], False), 34: ([3, 4, 6, 3], False),
                          50: ([3, 4, 6, 3], True), 101: ([3, 4, 23, 3], True)}[depth]
    g = GraphBuilder(seed)
    x = g.relu(g.bn(g.conv("data", 3, 64, 7, stride=2, pad=3, name="conv1"), 64, name="bn1"))
    x = g.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    expansion = 4 if bottleneck else 1
    # residual branches end in a batch norm with a small scale (like torchvision's
    # zero_init_residual, but not zero) so activations do not grow with depth
    for stage, (n, width) in enumerate(zip(layers, [64, 128, 256, 512])):
        for unit in range(n):
            stride = 2 if stage > 0 and unit == 0 else 1
            cout = width * expansion
            pre = f"layer{stage + 1}.{unit}"
            if bottleneck:
                y = g.relu(g.bn(g.conv(x, cin, width, 1, name=f"{pre}.conv1"), width))
                y = g.relu(g.bn(g.conv(y, width, width, 3, stride=stride, name=f"{pre}.conv2"), width))
                y = g.bn(g.conv(y, width, cout, 1, name=f"{pre}.conv3"), cout, gamma=0.3)
            else:
                y = g.relu(g.bn(g.conv(x, cin, width, 3, stride=stride, name=f"{pre}.conv1"), width))
                y = g.bn(g.conv(y, width, width, 3, name=f"{pre}.conv2"), width, gamma=0.3)
            if stride != 1 or cin != cout:
                sc = g.bn(g.conv(x, cin, cout, 1, stride=stride, name=f"{pre}.downsample"), cout)
            else:
                sc = x
            x = g.relu(g.node("Add", [y, sc]))
            cin = cout
    x = g.node("GlobalAveragePool", [x])
    x = g.node("Flatten", [x], axis=1)
    x = g.gemm(x, cin, num_classes, name="fc")
    return g.model({"data": ([batch, 3, image, image], np.float32)}, [x], f"resnet{depth}")


def resnet18(batch: int = 1, image: int = 224, num_classes: int = 1000, seed: int = 0) -> onnx.ModelProto:
    """torchvision-style ResNet-18 on ``data`` of shape (batch, 3, image, image)."""
    return _resnet(18, batch, image, num_classes, seed)


def resnet50(batch: int = 1, image: int = 224, num_classes: int = 1000, seed: int = 0) -> onnx.ModelProto:
    """torchvision-style ResNet-50 (bottleneck blocks) on ``data`` (batch, 3, image, image)."""
    return _resnet(50, batch, image, num_classes, seed)


# ============================================================================================
# MobileNetV2
# ============================================================================================


def mobilenet_v2(batch: int = 1, image: int = 224, num_classes: int = 1000, width: float = 1.0,
                 seed: int = 0) -> onnx.ModelProto:
    """MobileNetV2: inverted residuals, depthwise convs (group = C), ReLU6 as Clip(0, 6)."""
    g = GraphBuilder(seed)
    lo, hi = g.const(np.float32(0.0), "relu6_min"), g.const(np.float32(6.0), "relu6_max")

    def relu6(v: str) -> str:
        return g.node("Clip", [v, lo, hi], base="relu6")

    def ch(c: int) -> int:  # torchvision's _make_divisible(c * width, 8)
        v = max(8, int(c * width + 4) // 8 * 8)
        return v + 8 if v < 0.9 * c * width else v

    cin = ch(32)
    x = relu6(g.bn(g.conv("data", 3, cin, 3, stride=2, name="features.0"), cin))
    settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                (6, 160, 3, 2), (6, 320, 1, 1)]
    for t, c, n, s in settings:
        cout = ch(c)
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            y = x
            if t != 1:
                y = relu6(g.bn(g.conv(y, cin, hidden, 1), hidden))
            y = relu6(g.bn(g.conv(y, hidden, hidden, 3, stride=stride, group=hidden, name="dwconv"), hidden))
            y = g.bn(g.conv(y, hidden, cout, 1), cout)
            x = g.node("Add", [x, y]) if stride == 1 and cin == cout else y
            cin = cout
    last = ch(1280) if width > 1.0 else 1280
    x = relu6(g.bn(g.conv(x, cin, last, 1), last))
    x = g.node("GlobalAveragePool", [x])
    x = g.node("Flatten", [x], axis=1)
    x = g.gemm(x, last, num_classes, name="classifier")
    return g.model({"data": ([batch, 3, image, image], np.float32)}, [x], "mobilenet_v2")


def se_net(batch: int = 1, image: int = 28, num_classes: int = 10, seed: int = 0) -> onnx.ModelProto:
    """A small MobileNetV3-style network: a hard-swish stem, inverted residuals with
    squeeze-and-excitation (``ReduceMean`` over H and W, two 1x1 convolutions, ``HardSigmoid``,
    ``Mul``) at three map sizes (``image / 2``, ``/ 4``, ``/ 8``: odd sizes give rows of a length
    that is not a multiple of 4), a last 1x1 convolution, a ``ReduceMean`` pooling, ``Flatten``
    and ``Gemm``."""
    g = GraphBuilder(seed)

    def hswish(v: str) -> str:
        return g.node("Mul", [v, g.node("HardSigmoid", [v], alpha=1 / 6, beta=0.5)], base="hswish")

    def se(v: str, c: int) -> str:
        s = g.node("ReduceMean", [v], base="se_mean", axes=[2, 3], keepdims=1)
        s = g.relu(g.conv(s, c, max(8, c // 4), 1, bias=True, name="se_reduce"))
        s = g.node("HardSigmoid", [g.conv(s, max(8, c // 4), c, 1, bias=True, name="se_expand")], alpha=1 / 6, beta=0.5)
        return g.node("Mul", [v, s], base="se_scale")

    x = hswish(g.bn(g.conv("data", 3, 16, 3, stride=2, name="stem"), 16))
    cin = 16
    for cout, hidden, stride in ((16, 48, 1), (24, 72, 2), (40, 120, 2)):
        y = hswish(g.bn(g.conv(x, cin, hidden, 1), hidden))
        y = hswish(g.bn(g.conv(y, hidden, hidden, 3, stride=stride, group=hidden, name="dwconv"), hidden))
        y = g.bn(g.conv(se(y, hidden), hidden, cout, 1), cout)
        x = g.node("Add", [x, y]) if stride == 1 and cin == cout else y
        cin = cout
    x = hswish(g.bn(g.conv(x, cin, 96, 1), 96))
    x = g.node("ReduceMean", [x], base="pool", axes=[2, 3], keepdims=1)
    x = g.node("Flatten", [x], axis=1)
    x = g.gemm(x, 96, num_classes, name="classifier")
    return g.model({"data": ([batch, 3, image, image], np.float32)}, [x], "se_net")


# ============================================================================================
# MLP
# ============================================================================================


def mlp(batch: int = 1, image_shape: Sequence[int] = (1, 28, 28), num_classes: int = 10,
        seed: int = 0) -> onnx.ModelProto:
    """Relay's ``testing.mlp`` shape: Flatten, Gemm 128 + Relu, Gemm 64 + Relu, Gemm, Softmax."""
    g = GraphBuilder(seed)
    x = g.node("Flatten", ["data"], axis=1)
    nin = math.prod(image_shape)
    x = g.relu(g.gemm(x, nin, 128, name="fc1"))
    x = g.relu(g.gemm(x, 128, 64, name="fc2"))
    x = g.gemm(x, 64, num_classes, name="fc3")
    x = g.node("Softmax", [x], axis=1)
    return g.model({"data": ([batch, *image_shape], np.float32)}, [x], "mlp")


# ============================================================================================
# BERT encoder layer
# ============================================================================================


def bert_layer(batch: int = 1, seq: int = 128, hidden: int = 768, heads: int = 12,
               ffn: int | None = None, seed: int = 0) -> onnx.ModelProto:
    """One BERT encoder layer on ``hidden_states`` (batch, seq, hidden) and ``attention_mask``
    (batch, 1, 1, seq; additive, 0 or -10000).

    Projections are MatMul + Add; heads are split with the exporter pattern
    ``Shape -> Gather -> Unsqueeze -> Concat -> Reshape`` and merged back with a constant
    shape; scores are divided by sqrt(head size); GELU is x * 0.5 * (1 + erf(x / sqrt 2)).
    """
    if hidden % heads:
        raise ValueError(f"hidden {hidden} is not divisible by heads {heads}")
    ffn = ffn or 4 * hidden
    d = hidden // heads
    g = GraphBuilder(seed)

    def linear(v: str, nin: int, nout: int, name: str) -> str:
        lim = math.sqrt(6.0 / (nin + nout))
        w = g.init(f"{name}.weight", g.rng.uniform(-lim, lim, (nin, nout)).astype(np.float32))
        b = g.init(f"{name}.bias", g.rng.normal(0, 0.02, nout).astype(np.float32))
        return g.node("Add", [g.node("MatMul", [v, w], base=f"{name}.matmul"), b], base=f"{name}.add")

    def layer_norm(v: str, name: str) -> str:
        gamma = g.init(f"{name}.weight", g.rng.uniform(0.8, 1.2, hidden).astype(np.float32))
        beta = g.init(f"{name}.bias", g.rng.normal(0, 0.05, hidden).astype(np.float32))
        return g.node("LayerNormalization", [v, gamma, beta], base=name, axis=-1, epsilon=1e-12)

    x = "hidden_states"
    # exporter-style dynamic shape computation for the head split: [B, S, heads, d]
    shape = g.node("Shape", [x])
    b_dim = g.node("Unsqueeze", [g.node("Gather", [shape, g.const(np.int64(0))], axis=0), g.const(np.array([0]))])
    s_dim = g.node("Unsqueeze", [g.node("Gather", [shape, g.const(np.int64(1))], axis=0), g.const(np.array([0]))])
    heads_shape = g.node("Concat", [b_dim, s_dim, g.const(np.array([heads, d], dtype=np.int64))], axis=0)

    def split_heads(v: str) -> str:
        return g.node("Reshape", [v, heads_shape])

    q = g.node("Transpose", [split_heads(linear(x, hidden, hidden, "query"))], perm=[0, 2, 1, 3])
    k = g.node("Transpose", [split_heads(linear(x, hidden, hidden, "key"))], perm=[0, 2, 3, 1])
    v = g.node("Transpose", [split_heads(linear(x, hidden, hidden, "value"))], perm=[0, 2, 1, 3])
    scores = g.node("Div", [g.node("MatMul", [q, k]), g.const(np.float32(math.sqrt(d)))])
    scores = g.node("Add", [scores, "attention_mask"])
    probs = g.node("Softmax", [scores], axis=-1)
    ctx = g.node("Transpose", [g.node("MatMul", [probs, v])], perm=[0, 2, 1, 3])
    ctx = g.node("Reshape", [ctx, g.const(np.array([0, 0, hidden], dtype=np.int64))])
    attn = linear(ctx, hidden, hidden, "attention.output")
    x1 = layer_norm(g.node("Add", [attn, x]), "attention.layer_norm")
    h = linear(x1, hidden, ffn, "intermediate")
    erf = g.node("Erf", [g.node("Div", [h, g.const(np.float32(math.sqrt(2.0)))])])
    gelu = g.node("Mul", [g.node("Mul", [h, g.node("Add", [erf, g.const(np.float32(1.0))])]), g.const(np.float32(0.5))])
    out = linear(gelu, ffn, hidden, "output")
    out = layer_norm(g.node("Add", [out, x1]), "output.layer_norm")
    return g.model(
        {"hidden_states": ([batch, seq, hidden], np.float32), "attention_mask": ([batch, 1, 1, seq], np.float32)},
        [out],
        "bert_layer",
    )


def bert_inputs(batch: int = 1, seq: int = 128, hidden: int = 768, seed: int = 1) -> dict[str, np.ndarray]:
    """Inputs for ``bert_layer``: unit-scale hidden states and a mask hiding the last quarter."""
    rng = np.random.default_rng(seed)
    mask = np.zeros((batch, 1, 1, seq), np.float32)
    mask[..., seq - seq // 4 :] = -10000.0
    return {"hidden_states": rng.standard_normal((batch, seq, hidden)).astype(np.float32), "attention_mask": mask}


# ============================================================================================
# Relay's testing ResNet (pre-activation) as ONNX
# ============================================================================================

_RESNET_UNITS = {18: [2, 2, 2, 2], 34: [3, 4, 6, 3], 50: [3, 4, 6, 3], 101: [3, 4, 23, 3],
                 152: [3, 8, 36, 3], 200: [3, 24, 36, 3], 269: [3, 30, 48, 8]}


def relay_resnet_v2(
    num_layers: int = 18,
    batch_size: int = 1,
    image_shape: Sequence[int] = (3, 224, 224),
    num_classes: int = 1000,
    params: Mapping[str, np.ndarray] | None = None,
    seed: int = 0,
) -> onnx.ModelProto:
    """``xrelay.testing.resnet.get_workload``'s network (NCHW) as an ONNX graph.

    The structure is Relay's pre-activation ResNet unit for unit (docs/relay-semantics.md §7), and
    initializers carry Relay's parameter names (``conv0_weight``, ``bn_data_moving_var``,
    ``stage1_unit1_sc_weight``, ``fc1_bias``...), taken from ``params``; when ``params`` is
    None they come from ``get_workload(..., seed=seed)``. ``bn_data`` has no scale
    (``scale=False``), which ONNX expresses with a gamma of ones. The input is ``data``.
    """
    if params is None:
        from xrelay.testing.resnet import get_workload

        _, params = get_workload(batch_size, num_classes, num_layers, tuple(image_shape), seed=seed)
    params = {k: np.asarray(v) for k, v in params.items()}
    height = image_shape[1]
    if height <= 28:
        if (num_layers - 2) % 9 == 0 and num_layers >= 164:
            units, filters, bottleneck = [(num_layers - 2) // 9] * 3, [16, 64, 128, 256], True
        elif (num_layers - 2) % 6 == 0 and num_layers < 164:
            units, filters, bottleneck = [(num_layers - 2) // 6] * 3, [16, 16, 32, 64], False
        else:
            raise ValueError(f"no CIFAR ResNet with {num_layers} layers")
    else:
        if num_layers not in _RESNET_UNITS:
            raise ValueError(f"no ResNet with {num_layers} layers (one of {sorted(_RESNET_UNITS)})")
        units = _RESNET_UNITS[num_layers]
        bottleneck = num_layers >= 50
        filters = [64, 256, 512, 1024, 2048] if bottleneck else [64, 64, 128, 256, 512]
    g = GraphBuilder(seed)
    used: set[str] = set()

    def p(name: str) -> str:
        if name not in params:
            raise KeyError(f"relay_resnet_v2: params has no entry {name!r}")
        if name not in used:
            g.init(name, params[name])
            used.add(name)
        return name

    def bn(x: str, name: str, scale: bool = True) -> str:
        if scale:
            gamma = p(f"{name}_gamma")
        else:  # Relay keeps the gamma parameter but does not use it
            beta = params[p(f"{name}_beta")]
            gamma = g.init(f"{name}_gamma_ones", np.ones_like(beta))
        ins = [x, gamma, p(f"{name}_beta"), p(f"{name}_moving_mean"), p(f"{name}_moving_var")]
        return g.node("BatchNormalization", ins, base=name, epsilon=2e-5)

    def conv(x: str, name: str, k: int, s: int, pad: int) -> str:
        return g.node("Conv", [x, p(f"{name}_weight")], base=name, kernel_shape=[k, k], strides=[s, s],
                      pads=[pad] * 4)

    def unit(x: str, nf: int, s: int, dim_match: bool, name: str) -> str:
        act1 = g.relu(bn(x, f"{name}_bn1"))
        if bottleneck:
            c1 = conv(act1, f"{name}_conv1", 1, s, 0)
            c2 = conv(g.relu(bn(c1, f"{name}_bn2")), f"{name}_conv2", 3, 1, 1)
            body = conv(g.relu(bn(c2, f"{name}_bn3")), f"{name}_conv3", 1, 1, 0)
        else:
            c1 = conv(act1, f"{name}_conv1", 3, s, 1)
            body = conv(g.relu(bn(c1, f"{name}_bn2")), f"{name}_conv2", 3, 1, 1)
        short = x if dim_match else conv(act1, f"{name}_sc", 1, s, 0)
        return g.node("Add", [body, short], base=f"{name}_plus")

    x = bn("data", "bn_data", scale=False)
    if height <= 32:
        x = conv(x, "conv0", 3, 1, 1)
    else:
        x = g.relu(bn(conv(x, "conv0", 7, 2, 3), "bn0"))
        x = g.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    for i, n in enumerate(units):
        x = unit(x, filters[i + 1], 1 if i == 0 else 2, False, f"stage{i + 1}_unit1")
        for j in range(n - 1):
            x = unit(x, filters[i + 1], 1, True, f"stage{i + 1}_unit{j + 2}")
    x = g.node("Flatten", [g.node("GlobalAveragePool", [g.relu(bn(x, "bn1"))])], axis=1)
    x = g.node("Gemm", [x, p("fc1_weight"), p("fc1_bias")], base="fc1", transB=1)
    x = g.node("Softmax", [x], axis=-1)
    return g.model({"data": ([batch_size, *image_shape], np.float32)}, [x], f"relay_resnet{num_layers}_v2")


MODELS = {
    "resnet18": resnet18,
    "resnet50": resnet50,
    "mobilenet_v2": mobilenet_v2,
    "se_net": se_net,
    "mlp": mlp,
    "bert_layer": bert_layer,
}
"""The models the command line writes, by name."""


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m xrelay.testing.onnx_models NAME -o FILE``: write a model with random weights."""
    import argparse
    import os
    import sys
    import tempfile

    ap = argparse.ArgumentParser(
        prog="python -m xrelay.testing.onnx_models",
        description="Write an ONNX model built in code with seeded random weights.",
    )
    ap.add_argument("model", choices=sorted(MODELS))
    ap.add_argument("-o", "--output", required=True, help="the .onnx file to write")
    ap.add_argument("--batch", type=int, default=1, help="batch size (default 1)")
    ap.add_argument("--seed", type=int, default=0, help="weights' seed (default 0)")
    args = ap.parse_args(argv)
    if args.batch < 1:
        ap.error("--batch must be at least 1")
    model = MODELS[args.model](batch=args.batch, seed=args.seed)
    # written beside the destination and renamed over it: a failure leaves no partial file
    directory = os.path.dirname(os.path.abspath(args.output))
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, suffix=".onnx.tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(model.SerializeToString())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 is for the staging name only
        os.replace(tmp, args.output)
    except OSError as e:
        print(f"{ap.prog}: error: cannot write '{args.output}': {e.strerror or e}", file=sys.stderr)
        return 1
    print(f"wrote {args.output} ({args.model}, {len(model.graph.node)} nodes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = [
    "OPSET",
    "MODELS",
    "GraphBuilder",
    "TensorProto",
    "assert_like_onnxruntime",
    "bert_inputs",
    "bert_layer",
    "make_model",
    "mlp",
    "mobilenet_v2",
    "relay_resnet_v2",
    "resnet18",
    "resnet50",
    "run_onnxruntime",
]
