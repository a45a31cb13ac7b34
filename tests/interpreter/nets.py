"""A ResNet-18 built twice, as a relay module and as the same ONNX graph, for smoke tests.

Weights are parameters of ``@main`` (bound by name from a params dict), as in Relay's
``relay.testing.resnet`` before ``bind_params``; the ONNX twin holds them as initializers,
so onnxruntime (which no one here wrote) checks the interpreter end to end.
"""

from __future__ import annotations

import numpy as np
from onnx import ModelProto, helper
from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from xrelay.dialects.relay import RELAY_OPS, tensor_type


class _Net:
    def __init__(self, rng: np.random.Generator, batch: int, image: int):
        self.rng = rng
        self.params: dict[str, np.ndarray] = {}
        self.block = Block(arg_types=[tensor_type((batch, 3, image, image), "float32")])
        self.block.args[0].name_hint = "data"
        self.builder = Builder(InsertPoint.at_end(self.block))
        self.nodes: list = []
        self.onnx_name: dict[SSAValue, str] = {self.block.args[0]: "data"}

    def param(self, name: str, array: np.ndarray) -> SSAValue:
        arg = self.block.insert_arg(tensor_type(array.shape, "float32"), len(self.block.args))
        arg.name_hint = name
        self.params[name] = array.astype("float32")
        self.onnx_name[arg] = name
        return arg

    def op(self, name: str, operands: list[SSAValue], onnx_op: str, onnx_attrs=None, **attrs):
        """Insert relay op ``name`` and record the ONNX node computing its first result."""
        results = list(self.builder.insert(RELAY_OPS[name].make(operands, **attrs)).results)
        out = f"v{len(self.nodes)}"
        ins = [self.onnx_name[v] for v in operands]
        if onnx_op == "BatchNormalization":
            ins = ins[:5]
        self.nodes.append(helper.make_node(onnx_op, ins, [out], **(onnx_attrs or {})))
        self.onnx_name[results[0]] = out
        return results[0]

    def conv_bn(self, x: SSAValue, name: str, cin: int, cout: int, k: int, stride: int, relu: bool):
        std = np.sqrt(2.0 / (cin * k * k))
        w = self.param(f"{name}_weight", std * self.rng.standard_normal((cout, cin, k, k)))
        pad = k // 2
        y = self.op(
            "nn.conv2d",
            [x, w],
            "Conv",
            {"strides": [stride] * 2, "pads": [pad] * 4, "kernel_shape": [k, k]},
            strides=(stride, stride),
            padding=(pad,) * 4,
            channels=cout,
            kernel_size=(k, k),
        )
        bn = [
            self.param(f"{name}_bn_gamma", 1 + 0.1 * self.rng.standard_normal(cout)),
            self.param(f"{name}_bn_beta", 0.1 * self.rng.standard_normal(cout)),
            self.param(f"{name}_bn_mean", 0.1 * self.rng.standard_normal(cout)),
            self.param(f"{name}_bn_var", 1 + 0.1 * self.rng.random(cout)),
        ]
        y = self.op("nn.batch_norm", [y, *bn], "BatchNormalization")
        return self.op("nn.relu", [y], "Relu") if relu else y


def resnet18(
    batch: int = 1, image: int = 224, classes: int = 1000, seed: int = 0
) -> tuple[ModuleOp, dict[str, np.ndarray], ModelProto]:
    """ResNet-18 (v1, basic blocks) returning (logits, softmax): module, params, ONNX twin."""
    from xrelay.testing.onnx_models import make_model

    net = _Net(np.random.default_rng(seed), batch, image)
    x = net.conv_bn(net.block.args[0], "conv0", 3, 64, 7, 2, relu=True)
    x = net.op(
        "nn.max_pool2d",
        [x],
        "MaxPool",
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
        pool_size=(3, 3),
        strides=(2, 2),
        padding=(1, 1, 1, 1),
    )
    cin = 64
    for stage, cout in enumerate((64, 128, 256, 512)):
        for unit in range(2):
            stride = 2 if stage > 0 and unit == 0 else 1
            name = f"stage{stage + 1}_unit{unit + 1}"
            y = net.conv_bn(x, f"{name}_conv1", cin, cout, 3, stride, relu=True)
            y = net.conv_bn(y, f"{name}_conv2", cout, cout, 3, 1, relu=False)
            short = x
            if stride != 1 or cin != cout:
                short = net.conv_bn(x, f"{name}_sc", cin, cout, 1, stride, relu=False)
            x = net.op("add", [y, short], "Add")
            x = net.op("nn.relu", [x], "Relu")
            cin = cout
    x = net.op("nn.global_avg_pool2d", [x], "GlobalAveragePool")
    x = net.op("nn.batch_flatten", [x], "Flatten")
    w = net.param("fc1_weight", net.rng.standard_normal((classes, 512)) / np.sqrt(512))
    b = net.param("fc1_bias", 0.1 * net.rng.standard_normal(classes))
    x = net.op("nn.dense", [x, w], "MatMul", units=classes)
    # ONNX's MatMul needs the transposed weight; give it its own initializer
    net.nodes[-1].input[1] = "fc1_weight_t"
    logits = net.op("nn.bias_add", [x, b], "Add")
    probs = net.op("nn.softmax", [logits], "Softmax", {"axis": -1})
    net.builder.insert(func.ReturnOp(logits, probs))
    fn = func.FuncOp(
        "main",
        FunctionType.from_lists([a.type for a in net.block.args], [logits.type, probs.type]),
        Region(net.block),
    )
    inits = dict(net.params)
    inits["fc1_weight_t"] = np.ascontiguousarray(net.params["fc1_weight"].T)
    model = make_model(
        net.nodes,
        {"data": ((batch, 3, image, image), np.float32)},
        [net.onnx_name[logits], net.onnx_name[probs]],
        inits,
    )
    return ModuleOp([fn]), net.params, model
